/* er_opencl_common.h: host helpers shared by the OpenCL backend's files (er_opencl.c, er_opencl_mma.c,
 * er_opencl_bounds.c).
 * Internal: not installed, not part of the API. */
#ifndef ER_OPENCL_COMMON_H
#define ER_OPENCL_COMMON_H

#include <stddef.h>

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#include "../host/er_msg.h"
#include "exactref/exactref.h"

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR (-1001)
#endif

/* printf into msg (may be NULL), truncated to size. */
#define er_msg_(msg, size, ...) ((void)er_msgf((msg), (size), 0, __VA_ARGS__))
/* Append to buf (NUL-terminated, truncated at size); *len tracks the length wanted so far. */
void er_append_(char *buf, size_t size, size_t *len, const char *fmt, ...);
/* The name of an OpenCL error code ("CL_INVALID_VALUE"). */
const char *er_cl_error_name_(cl_int e);
/* "OpenCL: clFoo failed: CL_BAR (-n)" into msg, and ER_EDEVICE. */
er_status er_cl_fail_(char *msg, size_t size, const char *call, cl_int e);

/* A device: one index over all devices of all platforms, in platform order. */
typedef struct er_cl_dev_ {
    cl_platform_id platform;
    cl_device_id device;
} er_cl_dev_;

/* All (platform, device) pairs into *out (malloc'd, caller frees); ER_ENODEVICE without a platform. */
er_status er_cl_enumerate_(er_cl_dev_ **out, size_t *count, cl_uint *nplatforms, char *msg, size_t msg_size);
/* The device of index `device` (-1: EXACTREF_OPENCL_DEVICE, else 0); ER_EINVAL, ER_ENODEVICE. */
er_status er_cl_pick_(int device, er_cl_dev_ *picked, char *msg, size_t msg_size);
/* A device or platform string (malloc'd, NULL on failure). */
char *er_cl_dev_str_(cl_device_id d, cl_device_info what);
char *er_cl_plat_str_(cl_platform_id p, cl_platform_info what);

/* For a picked device: its largest allocation and global memory, a context, a queue, and the program
 * built from src (er_cl_build_).  On failure what was created is left in *ctx, *queue, *prog for the
 * caller to release, and msg says what failed (ER_EDEVICE; the build log after a failed build). */
er_status er_cl_open_(const er_cl_dev_ *dev, const char *src, size_t len, const char *options, cl_ulong *max_alloc,
                      cl_ulong *global_mem, cl_context *ctx, cl_command_queue *queue, cl_program *prog, char *msg,
                      size_t msg_size);

/* Create and build a program from source for one device.  On failure *prog may still be set (the
 * caller releases it) and msg holds the error, with the build log after a failed build (ER_EDEVICE). */
er_status er_cl_build_(cl_context ctx, cl_device_id dev, const char *src, size_t len, const char *options,
                       cl_program *prog, char *msg, size_t msg_size);

/*
 * Fault injection, a testing hook: EXACTREF_OPENCL_FAULT=build|nomem|lost|nofp64 makes one stage of every
 * OpenCL call fail as the real error would, so the error paths can be tested on a working device:
 *   build  er_cl_build_ fails as clBuildProgram does (CL_BUILD_PROGRAM_FAILURE) with a one-line log;
 *   nomem  er_cl_create_buffer_ fails with CL_MEM_OBJECT_ALLOCATION_FAILURE;
 *   lost   er_cl_enqueue_kernel_ fails with CL_DEVICE_NOT_AVAILABLE;
 *   nofp64 the bounds host sees a device without fp64 (er_opencl_bounds.c: the CPU computes them).
 * Any other value (or none) injects nothing.  er_cl_fault_ says whether `stage` is the one asked for.
 */
int er_cl_fault_(const char *stage);
/* clCreateBuffer, or the injected nomem fault. */
cl_mem er_cl_create_buffer_(cl_context ctx, cl_mem_flags flags, size_t size, void *host, cl_int *e);
/* A 1-D clEnqueueNDRangeKernel (local 0: the runtime's choice), or the injected lost fault. */
cl_int er_cl_enqueue_kernel_(cl_command_queue q, cl_kernel k, size_t global, size_t local);

#endif /* ER_OPENCL_COMMON_H */
