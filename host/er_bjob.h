/* er_bjob.h: one batch of a bounds computation, as every backend receives it (plain C, no libexactref
 * symbols: the CUDA backend module includes it too). */
#ifndef ER_BJOB_H
#define ER_BJOB_H

#include <stdint.h>

#include "exactref/core/er_bounds.h"

/* One batch of a bounds computation, prepared on the host for every backend (cpu/cpu_bounds.c): the
 * problem's constants and the arrays er_bound_element reads (include/exactref/core/er_bounds.h). */
typedef struct er_bjob {
    er_bpar par;            /* par.k terms; par.ldb = n */
    int64_t m, n;
    const double *af, *bf;  /* A' (m x k) and B' (k x n) as binary64, row-major: scales applied, flushed */
    const int16_t *ea, *eb; /* engines: the elements' exponent bounds (same shapes), else NULL */
    const double *rw;       /* normal's roundings per term (k) */
    const double *da, *db, *dc; /* results as inputs: slack of A (m x k), B (k x n), C (m x n), or NULL */
    const double *cv;       /* C's values (m x n), NULL without C */
    const uint64_t *rb;     /* the exactly rounded result's patterns (m x n) */
    /* gemm_form (normal, any_order): the magnitudes quantized upward to integers on power-of-two grids
     * (include/exactref/core/er_bounds.h: er_b_q_value), NULL otherwise: |A'| and |A'| diag(rw) by
     * rows (m x k), |B'| (k x n, as bf), and the grids' exponents (ER_BQ_BAD: a row or column with an
     * infinity or NaN, whose integers are 0).  Engines without slack: qa and qb are |A'| and |B'| on
     * per-instruction grids (er_b_eng_q_value: the values, not the integers), qw, sa, sw, sb NULL */
    const double *qa, *qw, *qb;
    const int32_t *sa, *sw, *sb; /* m, m, n */
    int prod_exact;         /* engines: every product of two finite values of A' and B' is exact in
                             * binary64 (the formats: at most 24 significand bits and 4 bytes each, so
                             * with e8m0 scales every value lies in [2^-276, 2^256]) */
    int a_mbits, b_mbits;   /* engines: A's and B's formats' fraction bits: a nonzero value's lowest set
                             * bit is at least 2^(e - mbits), e its exponent bound in ea / eb (no groups) */
    const double *S;        /* CPU only: S = A'B' (m x n) in any order from the reference (gemm_form, and
                             * engines: their s), or NULL */
    const double *bft;      /* CPU only: B' by columns (n x k), or NULL; with it ebt and dbt (or NULL) */
    const int16_t *ebt;
    const double *dbt;
    void (*progress)(void *ctx, double fraction); void *progress_ctx; /* er_progress_fn, or NULL */
} er_bjob;

/* Whether the CPU's per-element loops read B' by columns (bft) at all: every element of a gemm_form
 * batch whose rows and columns are finite takes its quantities from the matrix products, and B' is
 * then read only by the rare exact sums (by rows: the same bits). */
static inline int er_bjob_needs_bft(const er_bjob *j)
{
    /* engines without slack: the CPU's kernel reads B' by rows (cpu/cpu_bounds_engine.c), and so does
     * its element-at-a-time path, with qb */
    if (j->par.kind == ER_BK_ENGINE && !j->par.slack_a && !j->par.slack_b) return 0;
    if (!j->par.gemm_form || !j->sa || !j->sb) return 1;
    for (int64_t i = 0; i < j->m; i++)
        if (j->sa[i] == ER_BQ_BAD) return 1;
    for (int64_t c = 0; c < j->n; c++)
        if (j->sb[c] == ER_BQ_BAD) return 1;
    return 0;
}

/* Results as inputs: for each element of A, B and C (row-major, the operand's own shape), how far the
 * value an implementation stored may be from the rounded value the later operation reads (inf: no
 * bound, or an infinity or NaN allowed); NULL arrays: exact inputs. */
typedef struct er_slack {
    const double *da, *db, *dc;
} er_slack;

#endif /* ER_BJOB_H */
