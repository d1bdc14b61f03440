/* backends.h: a description of the devices the OpenCL and CUDA backends can use (conversions on a
 * device go through the front door: er_convert_batch in formats.h). */
#ifndef EXACTREF_BACKENDS_H
#define EXACTREF_BACKENDS_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/export.h"
#include "exactref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A description of the OpenCL platforms and devices, one per line, into buf. */
ER_API er_status er_opencl_describe(char *buf, size_t size);
/* CUDA devices the CUDA backend can use (0: none, and why into why: no module, no driver, no device). */
ER_API int er_cuda_devices(char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_BACKENDS_H */
