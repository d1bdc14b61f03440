/* mma.h: tensors and the exact engine: mma, block-scaled mma, mmai, and exact enclosures. */
#ifndef EXACTREF_MMA_H
#define EXACTREF_MMA_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/status.h"
#include "exactref/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A tensor of bit patterns: element (b, i, j) of a 3-D tensor, or (i, j) of a 2-D one, is the pattern
 * of `format` stored in er_format_info.storage_bytes bytes (little-endian; fp6 and fp4 one per byte, in
 * the low bits) at data + (b*strides[0] + i*strides[1] + j*strides[2]) * storage_bytes (2-D: the last
 * two).  Strides are in elements and may be any non-negative values, so a transposed view needs no copy.
 */
typedef struct er_tensor {
    int format;         /* ER_FMT_* */
    int ndim;           /* 2, or 3 with a leading batch dimension */
    int64_t shape[3];   /* the first ndim entries are used */
    int64_t strides[3]; /* in elements; the first ndim entries are used */
    void *data;
} er_tensor;

/* A contiguous row-major 2-D (batch == 0) or 3-D tensor view over data. */
ER_API er_tensor er_tensor_2d(int format, int64_t rows, int64_t cols, void *data);
ER_API er_tensor er_tensor_3d(int format, int64_t batch, int64_t rows, int64_t cols, void *data);
/* The same tensor with its last two dimensions swapped (no copy). */
ER_API er_tensor er_tensor_transpose(er_tensor t);

/* Backends (er_mma_args.backend). */
#define ER_BACKEND_AUTO 0   /* er_backend_auto's choice; a device that fails leaves the work to the CPU */
#define ER_BACKEND_CPU 1
#define ER_BACKEND_OPENCL 2
#define ER_BACKEND_CUDA 3

/* Strategies of the engine (docs/exact-engine.md says which runs when and why each is exact). */
#define ER_STRATEGY_AUTO 0  /* certified fp64 fast path where it applies, exact accumulator for the rest */
#define ER_STRATEGY_EXACT 1 /* the long accumulator for every element */

/* What one call did (all counts are elements of D). */
typedef struct er_mma_stats {
    int64_t elements;       /* elements computed */
    int64_t fast_decided;   /* decided by the certified fp64 fast path */
    int64_t exact_f64;      /* computed exactly in binary64 (the tensors' summaries prove it exact) */
    int64_t exact_path;     /* computed by the long accumulator */
    int64_t wrapped;        /* mmai: elements whose exact sum lies outside the i32 range (wrapped) */
    int threads;            /* threads used */
    int backend;            /* the backend that computed D (ER_BACKEND_CPU, _OPENCL or _CUDA) */
    char note[256];         /* ER_BACKEND_AUTO: why a device was not used after all (empty otherwise) */
} er_mma_stats;

/*
 * A progress hook: fraction in (0, 1] of the work done.  The library calls it from its worker threads
 * as rows of the output complete, never from two threads at once, with fractions that increase within
 * one computation, the last exactly 1, at most about 128 times per computation (on a device: the
 * bounds once per batch or tile, the product once, at its end).  A computation that a failing device
 * leaves to the CPU starts again from its first fraction.  The hook must return quickly and must not call the library on the same objects;
 * it cannot change any result's bits.
 */
typedef void (*er_progress_fn)(void *ctx, double fraction);

/*
 * The arguments of er_mma.  D = A B + C, exactly, rounded once.
 *   a: m x k, b: k x n (2-D, or 3-D with the same batch; a 2-D operand is broadcast over the batch).
 *   c: m x n or NULL.  d: m x n, the rounded result, or NULL when only enclosures are wanted.
 * Float operands (any float format; a and b may differ; c any float format; d any float format):
 * products exact, the whole sum exact, one rounding in direction `rounding` with `opts` (ER_OPT_*).
 * Integer operands (i8 or u8, per side): mmai, c and d i32, the exact sum wrapped modulo 2^32.
 * Block scaling: a_scale (m x ceil(k/block)) and b_scale (ceil(k/block) x n), both f8E8M0FNU, both
 * f8E4M3FN, or both f8E5M3FNU (UE5M3, with f4E2M1FN elements only): term p is
 * (a[i][p] a_scale[i][p/block]) (b[p][j] b_scale[p/block][j]).
 * lo, hi, odd: f64 tensors m x n (each may be NULL): lo <= exact <= hi, adjacent or equal binary64
 * values, and odd the round-to-odd binary64 of the exact value.
 */
typedef struct er_mma_args {
    const er_tensor *a, *b, *c;
    const er_tensor *a_scale, *b_scale;
    int block;
    er_tensor *d;
    int rounding;
    unsigned opts;
    er_tensor *lo, *hi, *odd;
    int threads;  /* 0: all cores */
    int strategy; /* ER_STRATEGY_* */
    int backend;  /* ER_BACKEND_*; the bits are the same on every backend */
    int device;   /* device index for OpenCL and CUDA (-1: EXACTREF_OPENCL_DEVICE, else the first) */
    er_mma_stats *stats; /* may be NULL */
    char *msg;           /* may be NULL: receives a sentence explaining an error */
    size_t msg_size;
    er_progress_fn progress; /* may be NULL: told how far the work is (er_progress_fn) */
    void *progress_ctx;      /* its first argument */
} er_mma_args;

/* Initialise args with defaults: everything NULL or 0, rounding nearest_even, strategy auto,
 * backend auto, device -1. */
ER_API void er_mma_args_init(er_mma_args *args);

/* Run the exact engine on args->backend.  Same bits whatever the backend and the thread count.
 * ER_OK, or an error with a sentence in args->msg (er_status is an int: int callers compile as before). */
ER_API er_status er_mma(er_mma_args *args);

/*
 * The backend ER_BACKEND_AUTO runs for a problem of `macs` multiply-adds (batch x m x n x k) on device
 * `device` (-1: the environment's choice), and why, in one sentence, into why (may be NULL):
 *   - EXACTREF_BACKEND=cpu|opencl|cuda in the environment: that backend; any other value than these,
 *     auto and the empty string: -1, why saying so (er_mma and the bounds then fail with ER_EINVAL and
 *     that sentence);
 *   - below ER_AUTO_DEVICE_MACS multiply-adds: the CPU (a device's start-up costs more than the work);
 *   - a CUDA device (the CUDA backend module loads and the driver reports one): cuda;
 *   - an OpenCL device of type GPU or accelerator: opencl;
 *   - else the CPU (OpenCL devices that are CPUs, such as PoCL's, are slower than its fast path).
 * The devices are probed once per process.  If the chosen device then fails, er_mma computes on the
 * CPU instead and says why in er_mma_stats.note.
 */
#define ER_AUTO_DEVICE_MACS ((int64_t)1 << 30)
ER_API int er_backend_auto(int64_t macs, int device, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_MMA_H */
