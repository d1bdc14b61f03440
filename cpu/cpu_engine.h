/* cpu_engine.h: the CPU engine's working state of a problem, shared by cpu_mma.c and cpu_bounds.c. */
#ifndef ER_CPU_ENGINE_H
#define ER_CPU_ENGINE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../host/er_problem.h"
#include "exactref/core/er_acc.h"

typedef struct {
    er_problem q; /* the front door's validated problem (a copy: the fast path drops out without memory) */
    /* fast path buffers: per batch, A and B as binary64 values (scales applied), row/column norms */
    double *af, *bf;
    double *a_s1, *a_mx, *a_s2, *b_s1, *b_mx, *b_s2;
    int use_s2;
    int simd; /* vector paths: 0 none (EXACTREF_NO_SIMD), 1 AVX2 (EXACTREF_NO_AVX512), 2 AVX-512 */
    /* results */
    int64_t fast_decided, exact_f64, exact_path, wrapped;
    int failed; /* out of memory in a worker */
} problem;

/* er_convert from binary64, with the target as a constant for the common output formats so the
 * compiler folds the format's row (the same core function either way). */
static inline er_res convert_from_f64(int to, uint64_t x, int dir, unsigned opts)
{
    switch (to) {
    case ER_FMT_F32: return er_convert(ER_FMT_F64, ER_FMT_F32, x, dir, opts);
    case ER_FMT_BF16: return er_convert(ER_FMT_F64, ER_FMT_BF16, x, dir, opts);
    case ER_FMT_F16: return er_convert(ER_FMT_F64, ER_FMT_F16, x, dir, opts);
    default: return er_convert(ER_FMT_F64, to, x, dir, opts);
    }
}

#endif
