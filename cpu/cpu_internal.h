/* cpu_internal.h: declarations shared by the CPU backend's files (and the backends that reuse it). */
#ifndef ER_CPU_INTERNAL_H
#define ER_CPU_INTERNAL_H

#include <stdint.h>

#include "er_bjob.h"
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

/* The OpenCL device ER_BACKEND_AUTO uses (src/backend_auto.c; -1: the backend's default). */
int er_backend_auto_opencl_device_(void);

/* Number of threads to use: requested > 0, else the online processors. */
int er_cpu_threads(int requested);

/* Results as inputs: for each element of A, B and C (row-major, the operand's own shape), how far the
 * value an implementation stored may be from the rounded value the later operation reads (inf: no
 * bound, or an infinity or NaN allowed); NULL arrays: exact inputs. */
typedef struct er_slack {
    const double *da, *db, *dc;
} er_slack;

/* Element (i, col) of a batch on the host (pre: the canonical sums, or NULL). */
void er_bjob_element(const er_bjob *job, int64_t i, int64_t col, const double *pre, er_bel *o);

/* Per-element bounds of a standard, on the result's backend (args->backend: OpenCL and CUDA run the
 * shared per-element code on the device; a device without fp64 leaves it to the CPU, *on_cpu = 1),
 * and normal() emulated (cpu/cpu_bounds.c). */
int er_cpu_bounds(er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                  const er_slack *slack, er_bounds *out, char *msg, size_t msg_size, int *on_cpu);
int er_cpu_normal(er_mma_args *args, const er_tensor *rounded, int compute, int ftz, er_tensor *out);

/* A batch of bounds on a CUDA device through the backend module (src/cuda_loader.c): ER_EUNSUPPORTED
 * when the module cannot (then the CPU computes them). */
int er_cuda_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg, size_t msg_size);

/* normal() of a result made with ER_BACKEND_CUDA, on the device through the backend module
 * (src/cuda_loader.c): out receives it; ER_EUNSUPPORTED or ER_ENODEVICE with a message without one. */
int er_cuda_normal(const er_mma_args *args, int compute, int flush_to_zero, er_tensor *out, char *msg,
                   size_t msg_size);

/* The exact engine on an OpenCL device (opencl/er_opencl_mma.c; ER_EUNSUPPORTED without OpenCL).
 * args has been validated by er_mma. */
int er_opencl_mma(er_mma_args *args);

/* The exact engine on a CUDA device, through the CUDA backend module loaded at run time
 * (src/cuda_loader.c; ER_EUNSUPPORTED or ER_ENODEVICE with a message when it is absent). */
int er_cuda_mma(er_mma_args *args);

#endif
