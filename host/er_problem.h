/* er_problem.h: a validated matrix-product problem, as the front door hands it to every backend
 * (internal, not installed).  The front door (src/validate.c: er_problem_validate) checks the caller's
 * er_mma_args once; a backend takes the result as const and trusts it. */
#ifndef ER_PROBLEM_H
#define ER_PROBLEM_H

#include "er_host.h"

typedef struct er_problem {
    const er_mma_args *args; /* the caller's operands, rounding, options, block, threads (read only) */
    er_tensor *d, *lo, *hi, *odd; /* the outputs (normal() and the bounds: d is theirs, not args->d) */
    int kind;                /* 0 float mma, 1 mmai */
    int scaled;              /* block-scaled */
    int64_t batch, m, n, k, nblocks;
    er_view a, b, c, sa, sb;
    int has_c;
    int acc_lo, acc_nd;      /* the exact accumulator's window */
    int fast;                /* the certified fast path applies */
    int exact64;             /* integral inputs, small enough: binary64 accumulation is exact in any order
                                (the interval summaries; decided by the front door before the CPU runs) */
    int nthreads;
    int device;              /* the device index for OpenCL and CUDA (-1: the backend's default) */
    er_mma_stats *stats;     /* may be NULL */
    struct er_progress *progress; /* a backend's counter of rows done (host/er_progress.h), or NULL */
    double *keep_s;          /* or NULL: the CPU's fast path copies its S = A'B' (binary64, any order; each
                                batch m x n, row-major) here for the bounds to reuse (src/result.c), and */
    int *keep_s_ok;          /* sets *keep_s_ok to 1 when every element's S is there */
    char *msg;               /* may be NULL: receives a sentence explaining an error */
    size_t msg_size;
} er_problem;

/* The caller's arguments with the problem's outputs, device, message and counts: the er_mma_args a
 * device backend works through. */
static inline er_mma_args er_problem_args(const er_problem *P)
{
    er_mma_args a = *P->args;
    a.d = P->d;
    a.lo = P->lo;
    a.hi = P->hi;
    a.odd = P->odd;
    a.device = P->device;
    a.stats = P->stats;
    a.msg = P->msg;
    a.msg_size = P->msg_size;
    return a;
}

/* An operand element, its subnormals read as zero with ER_OPT_FTZ_IN (the flush of inputs). */
static inline er_val in_val(const er_problem *P, er_val v) { return er_val_flush_in(v, P->args->opts); }

static inline er_val a_val(const er_problem *P, int64_t b, int64_t i, int64_t p)
{
    er_val v = in_val(P, er_decode(P->a.fmt, er_view_load(&P->a, b, i, p)));
    if (P->scaled) v = er_val_scaled(v, er_decode(P->sa.fmt, er_view_load(&P->sa, b, i, p / P->args->block)));
    return v;
}

static inline er_val b_val(const er_problem *P, int64_t b, int64_t p, int64_t j)
{
    er_val v = in_val(P, er_decode(P->b.fmt, er_view_load(&P->b, b, p, j)));
    if (P->scaled) v = er_val_scaled(v, er_decode(P->sb.fmt, er_view_load(&P->sb, b, p / P->args->block, j)));
    return v;
}

#endif /* ER_PROBLEM_H */
