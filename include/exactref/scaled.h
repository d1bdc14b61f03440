/* scaled.h: scaled matrix products as production fp8 GEMMs run them: f32 (or bf16) scales applied after
 * a block's sum, alpha, beta C and a bias, the exact answer rounded once (docs/scaled.md). */
#ifndef EXACTREF_SCALED_H
#define EXACTREF_SCALED_H

#include <stddef.h>

#include "exactref/mma.h"
#include "exactref/result.h"
#include "exactref/status.h"
#include "exactref/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * D = alpha * sum_blocks sa sb (sum_{p in block} a_p b_p) + beta C + bias, exactly, rounded once into
 * d's format in direction `rounding` with `opts` (ER_OPT_SATURATE: the cast saturates).
 *   a: m x k, b: k x n (2-D; any float formats of at most 24 significant bits: f32 and narrower).
 *   a_scale: f32 or bf16, its shape says the granularity: 1 x 1 (per tensor), m x 1 (per row of A), or
 *     m x ceil(k / block_k) (per 1 x block_k block); NULL: 1.
 *   b_scale: 1 x 1 (per tensor), 1 x n (per column of B), or ceil(k / block_k) x ceil(n / block_n) (per
 *     block_k x block_n block: DeepGEMM's 128 x 128); NULL: 1.
 *   alpha, beta: values of f32 (binary64 arguments; 1 and 0 by default); c: m x n (f32, bf16 or f16) or
 *   NULL; bias: 1 x n (f32, bf16 or f16) or NULL, added to every row.
 * The exact value equals sum_p (sa a_p)(sb b_p) times alpha, plus beta C and the bias: the reference
 * computes it exactly from binary64 operands (every scaled value is exact there).
 */
typedef struct er_scaled_args {
    const er_tensor *a, *b;
    const er_tensor *a_scale, *b_scale;
    int block_k, block_n; /* the scale blocks (0: 128) */
    double alpha, beta;
    const er_tensor *c, *bias;
    er_tensor *d;
    int rounding;
    unsigned opts;
    int threads; /* 0: all cores */
} er_scaled_args;

/* Defaults: everything NULL or 0, alpha 1, beta 0, rounding nearest_even, blocks 128. */
ER_API void er_scaled_args_init(er_scaled_args *args);

/*
 * The Result of a scaled product (er_result_free frees it; the tensors must outlive it).  Its bounds
 * are taken under the standard "scaled:bk=128[,partial=f32|<engine model>]" (docs/proofs/scaled.md):
 * partials of bk products (f32 in any order, or a tensor-core model promoted every bk products), each
 * multiplied by sa sb in f32 and added into an f32 accumulator, then the epilogue in f32.  Other
 * standards are refused on such a result (ER_EINVAL), and the scaled standard on any other result.
 */
ER_API er_status er_scaled_result_create(const er_scaled_args *args, er_result **out, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_SCALED_H */
