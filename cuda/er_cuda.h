/* er_cuda.h: the CUDA backend of exactref (a plain C header; the library is built by nvcc). */
#ifndef ER_CUDA_H
#define ER_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/exactref.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The number of CUDA devices this process can use.  0 when there is no driver (libcuda is loaded at
 * run time by the static CUDA runtime), no device, or any other CUDA error: never aborts, never prints.
 */
int er_cuda_device_count(void);

/*
 * Convert n patterns, each with its own job, on CUDA device `device` (-1: EXACTREF_CUDA_DEVICE from
 * the environment, else device 0).  spec[i] = from | to << 8 | dir << 16 | opts << 24 (ER_BATCH_SPEC
 * in tests/er_batch.h); src[i] holds a pattern of `from` in its low bits (bits above the width are
 * ignored, as er_decode does); dst[i] receives the pattern of `to` and flags[i] the ER_FLAG_* word
 * (flags may be NULL).  Every element runs the shared core's er_convert, so the answers are the C
 * path's bit for bit.
 * Returns ER_OK; ER_EINVAL for a null array (with n > 0), a bad device index or a spec with an unknown
 * format or direction (msg names the first); ER_ENODEVICE when there is no driver, no device or no
 * device of that index; ER_EDEVICE when a CUDA call fails (msg holds the call and CUDA's error
 * string).  msg (may be NULL) receives a sentence on failure and "" on success.  Everything allocated
 * is freed on every path; the calling thread's current device is restored.
 */
er_status er_cuda_convert_mixed(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                uint32_t *flags, size_t n, int device, char *msg, size_t msg_size);

/*
 * The same conversions on the CPU, through the core as nvcc compiles it for the HOST (the same
 * translation unit as the kernel).  Needs no driver; checks the same arguments as above.
 */
er_status er_cuda_host_convert_mixed(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                     uint32_t *flags, size_t n, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* ER_CUDA_H */
