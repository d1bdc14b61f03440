/* cpu_internal.h: declarations shared by the CPU backend's files (and the backends that reuse it). */
#ifndef ER_CPU_INTERNAL_H
#define ER_CPU_INTERNAL_H

#include <stdint.h>

#include "exactref/exactref.h"

/* C = A B for rows [r0, r1) (binary64, row-major); 0 on success, -1 out of memory. */
int er_cpu_gemm_rows(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc,
                     int64_t r0, int64_t r1, int64_t n, int64_t k);

/* Trailing zero bits of a nonzero 64-bit value. */
static inline int er_ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
/* The exact engine on a CUDA device, through the CUDA backend module loaded at run time
 * (src/cuda_loader.c; ER_EUNSUPPORTED or ER_ENODEVICE with a message when it is absent). */
int er_cuda_mma(er_mma_args *args);

#endif
}

/* Number of threads to use: requested > 0, else the online processors. */
int er_cpu_threads(int requested);

/* Results as inputs: for each element of A, B and C (row-major, the operand's own shape), how far the
 * value an implementation stored may be from the rounded value the later operation reads (inf: no
 * bound, or an infinity or NaN allowed); NULL arrays: exact inputs. */
typedef struct er_slack {
    const double *da, *db, *dc;
} er_slack;

/* Per-element bounds of a standard (cpu_bounds.c) and normal() emulated (cpu_bounds.c). */
int er_cpu_bounds(er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                  const er_slack *slack, er_bounds *out);
int er_cpu_normal(er_mma_args *args, const er_tensor *rounded, int compute, int ftz, er_tensor *out);

/* The exact engine on an OpenCL device (opencl/er_opencl_mma.c; ER_EUNSUPPORTED without OpenCL).
 * args has been validated by er_mma. */
int er_opencl_mma(er_mma_args *args);

/* The exact engine on a CUDA device, through the CUDA backend module loaded at run time
 * (src/cuda_loader.c; ER_EUNSUPPORTED or ER_ENODEVICE with a message when it is absent). */
int er_cuda_mma(er_mma_args *args);

#endif
