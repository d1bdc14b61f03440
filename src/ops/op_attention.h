/* op_attention.h: the attention operation's arithmetic (reference and per-standard enclosures), internal. */
#ifndef ER_OP_ATTENTION_H
#define ER_OP_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/status.h"

/*
 * One attention problem, every input read into binary64 (exact: the inputs are at most binary32).
 * query (B, Hq, Sq, D), key (B, Hk, Sk, D), value (B, Hk, Sk, Dv), all row-major and contiguous.
 * mask: NULL, or binary64 values added to the scores (-inf: the key takes no part) with strides in
 * elements over (B, Hq, Sq, Sk) (0 for a broadcast dimension).  Query head h reads key/value head
 * h / (Hq / Hk) (torch's enable_gqa).  causal: key j takes part in query row i only where j <= i
 * (torch's is_causal: the top-left diagonal).  sigma: scale * q_descale * k_descale as three positive
 * factors (their exact product is the real multiplier of the dot products); v_descale multiplies the
 * output.
 */
typedef struct er_attn_prob {
    int64_t B, Hq, Hk, Sq, Sk, D, Dv;
    const double *q, *k, *v;
    const double *mask;
    int64_t mstride[4];
    int causal;
    double scale, q_descale, k_descale, v_descale;
    /* filled by er_attn_prepare: per (b, key head) the largest |v| of each column and the largest |k| */
    double *vmax, *kmax;
    double *kt; /* per (b, key head) the keys transposed, (D, Sk) */
} er_attn_prob;

/* Fill p->vmax and p->kmax (malloc'd; er_attn_release frees them). */
er_status er_attn_prepare(er_attn_prob *p, char *msg, size_t msg_size);
void er_attn_release(er_attn_prob *p);

/* What a standard admits (docs/proofs/attention.md).  kind: 0 normal, 1 any_order, 2 flash. */
typedef struct er_attn_std {
    int kind;
    int block;       /* flash: the declared key block (0: any partition) */
    int p_fmt;       /* P's format before P.V: -1 kept in compute, else an ER_FMT_* */
    int compute;     /* ER_FMT_* of the compute format (binary32 or narrower) */
    int ftz;         /* flush_to_zero */
    double ulps_exp, ulps_div, ulps_log; /* library functions' errors in ulps of compute */
    /* flash's mma= (docs/proofs/attention.md, "Matrix engines"): 0 any_order's radius (normal,
     * any_order), 1 a matrix-engine model for S = Q K^T and P V with these parameters (result.h's
     * er_standard fields: products per step, fraction bits kept, the f32 accumulator's fraction bits and
     * rounding, F2, the further truncations per step, f32 operands read as tf32; cdna3 on fp8 operands
     * is cdna3-fp8: er_standard_for_inputs per product); q_fmt, k_fmt and v_fmt
     * give the operands' hardware exponents (a zero's) */
    int eng;
    struct { int k, F, p, round, F2, xterms, tf32; } mm[2]; /* [0]: S = Q K^T, [1]: P V */
    int q_fmt, k_fmt, v_fmt;
    int reverse; /* flash with a declared block: the blocks visited from the last (order=reverse) */
} er_attn_std;

/*
 * The standard in env (its options: kind, declared block, order, P's format, compute, flush_to_zero, the
 * library functions' ulps) as an er_attn_std for inputs of these formats, the matrix-engine model's fields
 * left zero (the forward fills them for flash's mma=<model>).  One reading for the forward and the
 * backward, which takes the forward's bounds for the stored O and lse under the same standard.
 */
struct er_openv;
void er_attn_std_init(er_attn_std *a, const struct er_openv *env, int q_fmt, int k_fmt, int v_fmt);

/*
 * The reference: for every output element the exact value rounded once to out_fmt (pattern in
 * out_bits, (B, Hq, Sq, Dv)) and a binary64 enclosure (out_lo, out_hi; may be NULL); the log-sum-exp
 * rounded to binary32 (lse_bits, (B, Hq, Sq)) and its enclosure (lse_lo, lse_hi; may be NULL).
 * A row without a key that takes part has NaN outputs and lse -inf.  Only the rows r0 <= row < r1 of
 * the flattened (b, h, i) are computed (the arrays are the whole problem's).
 */
er_status er_attn_reference(const er_attn_prob *p, int64_t r0, int64_t r1, int out_fmt, uint64_t *out_bits, double *out_lo, double *out_hi,
                            uint64_t *lse_bits, double *lse_lo, double *lse_hi, char *msg, size_t msg_size);

/*
 * Under standard s: per output element an interval [lo, hi] holding every value a correct
 * implementation can hold in compute before the final rounding to the output format (out_lo, out_hi),
 * and per row the same for the lse (lse_lo, lse_hi).  A row without a key that takes part gets
 * [-inf, +inf] with nan set (may_nan: every value); a bound that cannot be formed is [-inf, +inf].
 */
er_status er_attn_bounds(const er_attn_prob *p, int64_t r0, int64_t r1, const er_attn_std *s, double *out_lo, double *out_hi,
                         double *lse_lo, double *lse_hi, unsigned char *row_nan, char *msg, size_t msg_size);

#endif
