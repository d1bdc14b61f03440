/* backends.h: what the OpenCL and CUDA backends offer directly: array conversions on a device, and
 * a description of the devices. */
#ifndef EXACTREF_BACKENDS_H
#define EXACTREF_BACKENDS_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/export.h"
#include "exactref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The OpenCL backend: convert n patterns held as uint64 on the device chosen by index (-1: the
 * first device, or EXACTREF_OPENCL_DEVICE).  ER_EUNSUPPORTED when built without OpenCL. */
ER_API er_status er_opencl_convert_u64(int from, int to, const uint64_t *src, uint64_t *dst, size_t n,
                                int dir, unsigned opts, int device, char *msg, size_t msg_size);
/* The OpenCL backend on a mixed batch: job i converts src[i] with spec[i] = from | to << 8 |
 * dir << 16 | opts << 24, writing dst[i] and flags[i].  One program build and launch for all. */
ER_API er_status er_opencl_convert_mixed(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                  uint32_t *flags, size_t n, int device, char *msg, size_t msg_size);
/* A description of the OpenCL platforms and devices, one per line, into buf. */
ER_API er_status er_opencl_describe(char *buf, size_t size);
/* CUDA devices the CUDA backend can use (0: none, and why into why: no module, no driver, no device). */
ER_API int er_cuda_devices(char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_BACKENDS_H */
