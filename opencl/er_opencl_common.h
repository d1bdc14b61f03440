/* er_opencl_common.h: host helpers shared by the OpenCL backend's files (er_opencl.c, er_opencl_mma.c).
 * Internal: not installed, not part of the API. */
#ifndef ER_OPENCL_COMMON_H
#define ER_OPENCL_COMMON_H

#include <stddef.h>

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#include "exactref/exactref.h"

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR (-1001)
#endif

/* printf into msg (may be NULL), truncated to size. */
void er_msg_(char *msg, size_t size, const char *fmt, ...);
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

/* Create and build a program from source for one device.  On failure *prog may still be set (the
 * caller releases it) and msg holds the error, with the build log after a failed build (ER_EDEVICE). */
er_status er_cl_build_(cl_context ctx, cl_device_id dev, const char *src, size_t len, const char *options,
                       cl_program *prog, char *msg, size_t msg_size);

#endif /* ER_OPENCL_COMMON_H */
