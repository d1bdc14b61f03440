/* tolerance.c: the front door's part of the bounds: each batch of a standard's per-element bounds is
 * prepared here (er_bjob: A' and B' as binary64, the engines' exponent bounds, normal's path
 * lengths, C, the rounded result) and routed to the backend that computes its elements; a result's
 * bounds per options, kept in its cache (er_result_bounds), and may_be.
 *
 * Every bound is proven in docs/proofs/ (normal.md, any-order.md, engines.md).  The per-element
 * arithmetic is the shared core's (include/exactref/core/er_bounds.h: er_bound_element), which every
 * backend runs: cpu/cpu_bounds.c (er_cpu_bounds_batch), opencl/er_opencl_bounds.c and the CUDA module
 * (er_opencl_bounds_batch, er_cuda_bounds_batch).  The preparation runs on the CPU's threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_internal.h"
#include "../cuda/er_cuda_backend.h"
#include "../opencl/er_opencl_internal.h"
#include "bounds_blocked.h"
#include "er_front.h"
#include "result_internal.h"
#include "scaled_internal.h"
#include "host/er_alloc.h"
#include "host/er_bjob.h"
#include "host/er_msg.h"
#include "host/er_fpenv.h"
#include "host/er_problem.h"
#include "exactref/core/er_bounds.h"
#include "exactref/exactref.h"
#include "exactref/report.h"
#include "host/er_par.h"

#define msgf er_msgf /* host/er_msg.h */

/* Where the prepared batches of a bounds computation go (the router below): batch job into index e0
 * onward of out's arrays. */
typedef int (*er_bjob_sink)(void *ctx, const er_bjob *job, er_bounds *out, int64_t e0);

/* ------------------------------------------------------------------------------------------------ */
/* The preparation of each batch                                                                      */

static double fmt_max(int f) { return er_b_value(f, er_maxval_(er_fmt_get(f), 0u)); }

/*
 * The hardware exponent bound of a decoded element (docs/accumulation-models.md, step 2): a normal
 * value's exponent, a subnormal one's format minimum, and for a zero the larger of -126 (the public
 * model's exponent for a zero of every format) and the format's minimum exponent (the reading "a zero
 * keeps its format's minimum exponent": f16 -14, e4m3 -6, e5m2 -14, e2m1 0), so that the bound covers
 * both; for bf16, tf32 and f32 they agree.  A zero product's term then has exponent e_a + e_b.
 */
static int16_t hw_exp(er_val v, int fmt)
{
    if (v.cls == ER_CLASS_ZERO) {
        int emin = er_fmt_emin(er_fmt_get(fmt));
        return (int16_t)(emin > -126 ? emin : -126);
    }
    if (v.cls != ER_CLASS_NORMAL && v.cls != ER_CLASS_SUBNORMAL) return 0;
    int top = 63 - ER_CLZ64(v.sig);
    int e = v.exp + top;
    int emin = er_fmt_emin(er_fmt_get(fmt));
    return (int16_t)(e < emin ? emin : e);
}

/* An element's exponent for a model of exact groups (gextra = log2 of the group): at least
 * -(gextra / 2), and exactly that for a zero, so that e_a + e_b + gextra >= 0 for every product. */
static int16_t group_exp(int16_t e, int fmt, uint64_t bits, int gextra)
{
    int fl = -(gextra / 2);
    if (er_decode(fmt, bits).cls == ER_CLASS_ZERO) return (int16_t)fl;
    return (int16_t)(e < fl ? fl : e);
}

/* normal's roundings per term: products (one each), within-lane additions, the combination of the
 * nonempty lanes; the largest over 1, 2 and 4 lanes (docs/proofs/normal.md). */
static void normal_weights(double *rw, int64_t k, int has_c, int c_rounds, double *r_c, double *r_max)
{
    static const int lanes[3] = {1, 2, 4};
    *r_c = 0;
    for (int64_t p = 0; p < k; p++) rw[p] = 0;
    for (int li = 0; li < 3; li++) {
        int L = lanes[li], ne = 0;
        /* the lane combination adds the nonempty lanes only (adding an empty lane's zero is exact):
         * min(L, k) lanes, or C's lane alone when k = 0 */
        for (int l = 0; l < L; l++) ne += (k > l) || (l == 0 && has_c);
        for (int l = 0; l < L; l++) {
            int64_t cnt = (k > l ? (k - l + L - 1) / L : 0) + (l == 0 && has_c ? 1 : 0);
            int64_t q = 0;
            if (l == 0 && has_c) {
                q = 1;
                double r = (double)c_rounds + (cnt >= 2 ? (double)(cnt - 1) : 0) + (ne - 1);
                if (r > *r_c) *r_c = r;
            }
            for (int64_t p = l; p < k; p += L) {
                q++;
                double within = cnt >= 2 ? (double)(cnt - (q > 2 ? q : 2) + 1) : 0;
                double r = 1 + within + (ne - 1);
                if (r > rw[p]) rw[p] = r;
            }
        }
    }
    *r_max = *r_c;
    for (int64_t p = 0; p < k; p++)
        if (rw[p] > *r_max) *r_max = rw[p];
}

/* The preparation of one batch, on the CPU's threads: phase 0 the rows of A', 1 the rows of B', 2 the
 * output's patterns and C, 3 B' by columns, 4 B's quantized columns, 5 A's quantized rows; the engines'
 * grids instead of 4 and 5: 6 A's rows, 7 B's instructions; each phase split over ranges of its rows. */
typedef struct {
    const er_problem *P;
    const er_mma_args *args;
    const er_view *rv;
    int64_t b;
    const er_bjob *job;
    double *af, *bf, *bft, *cv;
    int16_t *ea, *eb, *ebt;
    double *dbt;
    uint64_t *rb;
    double *qa, *qw, *qb; /* gemm_form: the quantized magnitudes (er_bjob), else NULL */
    int32_t *sa, *sw, *sb;
    int phase;
} prep;

/* A row of k values x[p] (p < k) quantized upward on its grid of Q bits (er_b_q_value): the
 * grid's exponent, or ER_BQ_BAD (and zeros) where one is not finite.  w: the path lengths to multiply
 * by first (|a| r_p is exact: at most 24 + 26 bits), or NULL.  The values are contiguous. */
static int32_t quantize(const double *x, int64_t k, const double *w, int Q, double *q, int simd)
{
    int bad = 0;
    double mx = er_cpu_q_max(x, w, k, &bad, simd); /* cpu/cpu_quant.c: the same values, vectorised */
    if (bad) {
        for (int64_t r = 0; r < k; r++) q[r] = 0;
        return ER_BQ_BAD;
    }
    int s = er_b_q_scale(mx, Q);
    er_cpu_q_values(x, w, NULL, s, k, q, simd);
    return (int32_t)s;
}

/* hw_exp of every pattern of a format of at most 2 bytes (the table's values are hw_exp's), or NULL. */
static pthread_mutex_t hwx_lock = PTHREAD_MUTEX_INITIALIZER;
static int16_t *hwx_tab[ER_FMT_COUNT];

static const int16_t *hw_exp_table(int fmt)
{
    int bytes = er_storage_bytes(fmt);
    int16_t *t;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || bytes > 2) return NULL;
    pthread_mutex_lock(&hwx_lock);
    t = hwx_tab[fmt];
    if (!t) {
        size_t cnt = (size_t)1 << (8 * bytes);
        t = (int16_t *)malloc(sizeof(int16_t) * cnt);
        if (t) {
            for (size_t x = 0; x < cnt; x++) t[x] = hw_exp(er_decode(fmt, x), fmt);
            hwx_tab[fmt] = t;
        }
    }
    pthread_mutex_unlock(&hwx_lock);
    return t;
}

/* Row i of A' (k values) or row p of B' (n values) of batch b through the tables: the values
 * er_val_to_double(a_val) / (b_val) and, where xt is given, the exponents hw_exp (the unscaled, ungrouped
 * case: the caller's condition). */
static void prep_row_tab(const er_view *v, int64_t b, int64_t i, int64_t cnt, const double *tab, const int16_t *xt,
                         double *dst, int16_t *edst)
{
    const unsigned char *src = v->data + (size_t)(b * v->sb + i * v->s0) * (size_t)v->bytes;
    int64_t st = v->s1;
    if (v->bytes == 1) {
        for (int64_t p = 0; p < cnt; p++) dst[p] = tab[src[p * st]];
        if (xt)
            for (int64_t p = 0; p < cnt; p++) edst[p] = xt[src[p * st]];
    } else {
        for (int64_t p = 0; p < cnt; p++) {
            uint16_t x;
            memcpy(&x, src + 2 * p * st, 2);
            dst[p] = tab[x];
            if (xt) edst[p] = xt[x];
        }
    }
}

static void prep_range(prep *q, int64_t r0, int64_t r1)
{
    const er_problem *P = q->P;
    int64_t b = q->b, k = P->k, n = P->n;
    int block = q->args->block, ftz_in = (q->args->opts & ER_OPT_FTZ_IN) != 0;
    /* the tables: unscaled operands of at most 2 bytes (engines: without exact groups) */
    int tab_ok = !P->scaled && q->job->par.gextra == 0;
    int qs = q->phase >= 4 && q->phase != 3 ? er_cpu_q_simd() : 0; /* the quantization's vector path, asked once */
    if (q->phase == 0 && tab_ok && P->a.bytes <= 2 && er_cpu_decode_table(P->a.fmt, ftz_in) &&
        (!q->ea || hw_exp_table(P->a.fmt))) {
        const double *tab = er_cpu_decode_table(P->a.fmt, ftz_in);
        const int16_t *xt = q->ea ? hw_exp_table(P->a.fmt) : NULL;
        for (int64_t i = r0; i < r1; i++)
            prep_row_tab(&P->a, b, i, k, tab, xt, q->af + i * k, q->ea ? q->ea + i * k : NULL);
    } else if (q->phase == 1 && tab_ok && P->b.bytes <= 2 && er_cpu_decode_table(P->b.fmt, ftz_in) &&
               (!q->eb || hw_exp_table(P->b.fmt))) {
        const double *tab = er_cpu_decode_table(P->b.fmt, ftz_in);
        const int16_t *xt = q->eb ? hw_exp_table(P->b.fmt) : NULL;
        for (int64_t p = r0; p < r1; p++)
            prep_row_tab(&P->b, b, p, n, tab, xt, q->bf + p * n, q->eb ? q->eb + p * n : NULL);
    } else if (q->phase == 0) {
        for (int64_t i = r0; i < r1; i++)
            for (int64_t p = 0; p < k; p++) {
                q->af[i * k + p] = er_val_to_double(a_val(P, b, i, p));
                if (q->ea) {
                    int16_t e = hw_exp(er_decode(P->a.fmt, er_view_load(&P->a, b, i, p)), P->a.fmt);
                    /* exact groups (mxf4/nvf4): a group's term has exponent e_sa + e_sb whatever its
                     * elements, and E is bounded by (e_a + e_b + scales) + gextra: every element counts
                     * as exponent >= -(gextra / 2), a zero as exactly that (its own is irrelevant there) */
                    if (q->job->par.gextra > 0) e = group_exp(e, P->a.fmt, er_view_load(&P->a, b, i, p), q->job->par.gextra);
                    if (P->scaled) e = (int16_t)(e + hw_exp(er_decode(P->sa.fmt, er_view_load(&P->sa, b, i, p / block)), P->sa.fmt));
                    q->ea[i * k + p] = e;
                }
            }
    } else if (q->phase == 1) {
        for (int64_t p = r0; p < r1; p++)
            for (int64_t j = 0; j < n; j++) {
                double v = er_val_to_double(b_val(P, b, p, j));
                q->bf[p * n + j] = v;
                if (q->eb) {
                    int16_t e = hw_exp(er_decode(P->b.fmt, er_view_load(&P->b, b, p, j)), P->b.fmt);
                    if (q->job->par.gextra > 0) e = group_exp(e, P->b.fmt, er_view_load(&P->b, b, p, j), q->job->par.gextra);
                    if (P->scaled) e = (int16_t)(e + hw_exp(er_decode(P->sb.fmt, er_view_load(&P->sb, b, p / block, j)), P->sb.fmt));
                    q->eb[p * n + j] = e;
                }
            }
    } else if (q->phase == 2 && !q->cv && q->rv->s1 == 1 && (q->rv->bytes == 4 || q->rv->bytes == 2)) {
        /* the output's rows contiguous, no C: the patterns widened (a loop the compiler vectorises) */
        for (int64_t i = r0; i < r1; i++) {
            const unsigned char *src = q->rv->data + (size_t)(b * q->rv->sb + i * q->rv->s0) * (size_t)q->rv->bytes;
            uint64_t *dst = q->rb + i * n;
            if (q->rv->bytes == 4) {
                const uint32_t *s32 = (const uint32_t *)(const void *)src;
                for (int64_t j = 0; j < n; j++) dst[j] = s32[j];
            } else {
                const uint16_t *s16 = (const uint16_t *)(const void *)src;
                for (int64_t j = 0; j < n; j++) dst[j] = s16[j];
            }
        }
    } else if (q->phase == 2) {
        for (int64_t i = r0; i < r1; i++)
            for (int64_t j = 0; j < n; j++) {
                q->rb[i * n + j] = er_view_load(q->rv, b, i, j);
                if (q->cv) q->cv[i * n + j] = er_val_to_double(er_decode(P->c.fmt, er_view_load(&P->c, b, i, j)));
            }
    } else if (q->phase == 4) {
        /* B's columns, 64 at a time: each pass over p reads a contiguous piece of every row (the same
         * values as quantize() of each column) */
        int Qa, Qb;
        er_b_q_bits(k, &Qa, &Qb);
        for (int64_t j0 = r0; j0 < r1; j0 += 64) {
            int64_t nj = r1 - j0 < 64 ? r1 - j0 : 64;
            double mx[64];
            int bad[64];
            er_cpu_q_colmax(q->bf + j0, n, k, nj, mx, bad, qs); /* cpu/cpu_quant.c */
            int anybad = 0;
            for (int64_t t = 0; t < nj; t++) {
                q->sb[j0 + t] = bad[t] ? ER_BQ_BAD : (int32_t)er_b_q_scale(mx[t], Qb);
                anybad |= bad[t];
            }
            for (int64_t p = 0; p < k; p++) {
                if (!anybad) { /* cpu/cpu_quant.c: the same values, vectorised */
                    er_cpu_q_values(q->bf + p * n + j0, NULL, q->sb + j0, 0, nj, q->qb + p * n + j0, qs);
                    continue;
                }
                for (int64_t t = 0; t < nj; t++)
                    q->qb[p * n + j0 + t] = bad[t] ? 0.0 : er_b_q_value(q->bf[p * n + j0 + t], q->sb[j0 + t]);
            }
        }
    } else if (q->phase == 5) {
        /* A's quantized rows (after phase 0) */
        int Qa, Qb;
        er_b_q_bits(k, &Qa, &Qb);
        for (int64_t i = r0; i < r1; i++) {
            q->sa[i] = quantize(q->af + i * k, k, NULL, Qa, q->qa + i * k, qs);
            q->sw[i] = quantize(q->af + i * k, k, q->job->rw, Qa, q->qw + i * k, qs);
        }
    } else if (q->phase == 6) {
        /* engines: A's rows on per-instruction grids (after phase 0) */
        int Qa, Qb;
        er_b_q_bits(q->job->par.mk, &Qa, &Qb);
        for (int64_t i = r0; i < r1; i++) er_cpu_eng_q_row(q->af + i * k, k, q->job->par.mk, Qa, q->qa + i * k, qs);
    } else if (q->phase == 7) {
        /* engines: B's instructions (rows r0 mk ..), each column on its own grid (after phase 1) */
        int Qa, Qb;
        const int64_t mk = q->job->par.mk;
        er_b_q_bits(mk, &Qa, &Qb);
        for (int64_t t = r0; t < r1; t++) {
            const int64_t p0 = t * mk, rows = k - p0 < mk ? k - p0 : mk;
            er_cpu_eng_q_block(q->bf + p0 * n, n, rows, n, Qb, q->qb + p0 * n, qs);
        }
    } else if (q->phase == 3 && q->bft) {
        for (int64_t j = r0; j < r1; j++)
            for (int64_t p = 0; p < k; p++) {
                q->bft[j * k + p] = q->bf[p * n + j];
                if (q->ebt) q->ebt[j * k + p] = q->eb[p * n + j];
                if (q->dbt) q->dbt[j * k + p] = q->job->db[p * n + j];
            }
    }
}

typedef struct {
    prep *q;
    int64_t r0, r1;
} prep_part;

static void *prep_thread(void *arg)
{
    prep_part *w = (prep_part *)arg;
    prep_range(w->q, w->r0, w->r1);
    return NULL;
}

/* One phase over all its rows, split over the threads (every range written by one thread). */
static void par_for(int threads, prep *q)
{
    int64_t rows = q->phase == 0 || q->phase == 2 || q->phase == 5 || q->phase == 6 ? q->P->m
                   : q->phase == 1                                                ? q->P->k
                   : q->phase == 7 ? (q->P->k + q->job->par.mk - 1) / q->job->par.mk
                                   : q->P->n; /* 3, 4: n; 7: B's instructions */
    int T = er_cpu_threads(threads);
    if (T > 64) T = 64;
    if ((int64_t)T > rows / 64) T = (int)(rows / 64 > 0 ? rows / 64 : 1);
    prep_part w[64];
    for (int t = 0; t < T; t++) {
        w[t].q = q;
        w[t].r0 = rows * t / T;
        w[t].r1 = rows * (t + 1) / T;
    }
    er_par_jobs(prep_thread, w, sizeof w[0], T);
}

/*
 * tf32 models: an f32 operand is truncated to tf32 (its low 13 bits dropped) before the products.  A
 * normal value loses less than 2^-10 of itself (er_b_eng_final's relative term); a subnormal one
 * (|x| < 2^-126) loses up to (2^13 - 1) 2^-149 < 2^-136 whatever its size, so a product with such a
 * factor x moves by less than 2^-136 |y| (|t(x)| <= |x| bounds the other factor's share).  Per element
 * that sum, times 2^-136, rounded upward, is added to C's slack (results as inputs), which every
 * backend adds to the bound (docs/proofs/engines.md).  Results as inputs: a stored operand within da
 * of a value below 2^-126 + da may be subnormal, and its partner is at most |y| + dy.  Returns a new
 * m x n array (*out, NULL when no factor can be subnormal: nothing changes) or ER_ENOMEM.
 */
static int tf32_subnormal_slack(const er_bjob *j, int64_t k, int a_f32, int b_f32, double **out)
{
    int64_t m = j->m, n = j->n, i, p, col;
    double *tl = NULL;
    *out = NULL;
#define ER_MAYBE_SUB_(x, d) ((d) ? fabs(x) - (d) < 0x1p-126 : ((x) != 0 && fabs(x) < 0x1p-126))
    for (i = 0; i < m && a_f32; i++)
        for (p = 0; p < k; p++)
            if (ER_MAYBE_SUB_(j->af[i * k + p], j->da ? j->da[i * k + p] : 0.0)) {
                if (!tl && !(tl = (double *)calloc((size_t)(m * n > 0 ? m * n : 1), sizeof(double)))) return ER_ENOMEM;
                for (col = 0; col < n; col++) {
                    double y = fabs(j->bf[p * n + col]) + (j->db ? j->db[p * n + col] : 0.0);
                    tl[i * n + col] = er_b_up(tl[i * n + col] + er_b_up(y));
                }
            }
    for (p = 0; p < k && b_f32; p++)
        for (col = 0; col < n; col++)
            if (ER_MAYBE_SUB_(j->bf[p * n + col], j->db ? j->db[p * n + col] : 0.0)) {
                if (!tl && !(tl = (double *)calloc((size_t)(m * n > 0 ? m * n : 1), sizeof(double)))) return ER_ENOMEM;
                for (i = 0; i < m; i++) {
                    double y = fabs(j->af[i * k + p]) + (j->da ? j->da[i * k + p] : 0.0);
                    tl[i * n + col] = er_b_up(tl[i * n + col] + er_b_up(y));
                }
            }
#undef ER_MAYBE_SUB_
    if (!tl) return ER_OK;
    for (i = 0; i < m * n; i++) {
        double v = tl[i] > 0 ? er_b_up(tl[i] * 0x1p-136) : 0.0;
        if (j->dc) v = v > 0 ? er_b_up(v + j->dc[i]) : j->dc[i];
        tl[i] = v;
    }
    *out = tl;
    return ER_OK;
}

static int prepare_bounds(const er_problem *P, int target, int compute, int ftz, const er_standard *std,
                          const er_slack *slack, const double *keep_s, er_bounds *out, er_bjob_sink sink,
                          void *sink_ctx)
{
    const er_mma_args *args = P->args;
    const er_tensor *rounded = P->d;
    int st = ER_OK;
    int64_t mk = P->m * P->k, kn = P->k * P->n, mn = P->m * P->n;
    er_bjob job;
    er_bpar *c = &job.par;
    double *af = NULL, *bf = NULL, *rw = NULL, *cv = NULL, *bft = NULL, *dbt = NULL;
    double *qa = NULL, *qw = NULL, *qb = NULL;
    int32_t *sa = NULL, *sw = NULL, *sb = NULL;
    int16_t *ea = NULL, *eb = NULL, *ebt = NULL;
    uint64_t *rb = NULL;
    memset(&job, 0, sizeof job);
    job.progress = args->progress, job.progress_ctx = args->progress_ctx; /* er_progress_fn: the backends call it */
    /* engines: the accumulator D's format (f32, or f16 for the f16-accumulator models) */
    int cfmt = std->kind == ER_STD_ENGINE ? (std->acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32) : compute;
    {
        er_fmt cf = er_fmt_get(cfmt);
        er_fmt fa = er_fmt_get(args->a->format), fb = er_fmt_get(args->b->format);
        c->k = P->k;
        c->ldb = P->n;
        c->kind = std->kind == ER_STD_ENGINE ? ER_BK_ENGINE : std->kind == ER_STD_ANY_ORDER ? ER_BK_ANY : ER_BK_NORMAL;
        c->out_fmt = rounded->format;
        c->dir = args->rounding;
        c->opts = args->opts;
        c->ftz = ftz;
        c->has_c = P->has_c;
        c->u = ldexp(1.0, -(cf.mbits + 1));
        c->emin_c = er_fmt_emin(cf);
        c->eta = ldexp(1.0, er_fmt_emin(cf) - (cf.mbits + 1));
        c->max_c = fmt_max(cfmt);
        c->maxo = fmt_max(rounded->format);
        c->c_rounds = P->has_c && er_fmt_get(P->c.fmt).mbits > cf.mbits;
        if (std->kind == ER_STD_ENGINE && P->has_c) {
            /* engines: C is read into D's format; it rounds when it has more bits or more range */
            er_fmt ccf = er_fmt_get(P->c.fmt);
            c->c_rounds = ccf.mbits > cf.mbits || er_fmt_emin(ccf) < er_fmt_emin(cf) || fmt_max(P->c.fmt) > c->max_c;
        }
        c->slack_a = slack && slack->da;
        c->slack_b = slack && slack->db;
        c->slack_c = slack && slack->dc;
        /* the exact quantities: exact products, no flush, no slack (er_bounds.h) */
        int Qa, Qb;
        er_b_q_bits(P->k, &Qa, &Qb);
        c->gemm_form = std->kind != ER_STD_ENGINE && !ftz && !slack && fa.mbits + fb.mbits + 2 <= 53 && Qa > 0;
        job.prod_exact = std->kind == ER_STD_ENGINE && fa.mbits <= 23 && fb.mbits <= 23 &&
                         er_storage_bytes(args->a->format) <= 4 && er_storage_bytes(args->b->format) <= 4;
        job.a_mbits = fa.mbits;
        job.b_mbits = fb.mbits;
        if (std->kind == ER_STD_ENGINE) {
            c->mk = std->k;
            c->F = std->F;
            c->out_p = std->out_p;
            c->out_round = std->out_round;
            c->gextra = 0;
            while ((1 << c->gextra) < std->group) c->gextra++;
            c->promote = std->promote;
            c->tf32_inputs = std->tf32_inputs;
            c->F2 = std->F2;
            c->xterms = std->two_stage ? 2 : 0;
            c->a_f32 = P->a.fmt == ER_FMT_F32;
            c->b_f32 = P->b.fmt == ER_FMT_F32;
        }
    }
    af = (double *)er_big_alloc(sizeof(double) * (size_t)(mk ? mk : 1));
    bf = (double *)er_big_alloc(sizeof(double) * (size_t)(kn ? kn : 1));
    rw = (double *)malloc(sizeof(double) * (size_t)(P->k ? P->k : 1));
    rb = (uint64_t *)er_big_alloc(sizeof(uint64_t) * (size_t)(mn ? mn : 1));
    if (P->has_c) cv = (double *)er_big_alloc(sizeof(double) * (size_t)(mn ? mn : 1));
    if (std->kind == ER_STD_ENGINE) {
        ea = (int16_t *)er_big_alloc(sizeof(int16_t) * (size_t)(mk ? mk : 1));
        eb = (int16_t *)er_big_alloc(sizeof(int16_t) * (size_t)(kn ? kn : 1));
    }
    /* where the elements will run: the CPU's extra copies only where they serve (a device that then
     * declines leaves the elements to the CPU, which computes the same bits without them) */
    /* engines without slack: |A'| and |B'| on per-instruction grids (er_b_eng_q_value), for every backend */
    int eng_q = std->kind == ER_STD_ENGINE && !c->slack_a && !c->slack_b && c->mk >= 1;
    if (eng_q) {
        qa = (double *)er_big_alloc(sizeof(double) * (size_t)(mk ? mk : 1));
        qb = (double *)er_big_alloc(sizeof(double) * (size_t)(kn ? kn : 1));
    }
    if (c->gemm_form) {
        /* the quantized magnitudes, for every backend */
        qa = (double *)er_big_alloc(sizeof(double) * (size_t)(mk ? mk : 1));
        qw = (double *)er_big_alloc(sizeof(double) * (size_t)(mk ? mk : 1));
        qb = (double *)er_big_alloc(sizeof(double) * (size_t)(kn ? kn : 1));
        sa = (int32_t *)malloc(sizeof(int32_t) * (size_t)(P->m ? P->m : 1));
        sw = (int32_t *)malloc(sizeof(int32_t) * (size_t)(P->m ? P->m : 1));
        sb = (int32_t *)malloc(sizeof(int32_t) * (size_t)(P->n ? P->n : 1));
    }
    /* B' (and the engines' exponents, and B's slack) by columns for the per-element loops: the same
     * values in the same order, read with step 1 (NULL: read by rows, slower, the same bits); OpenCL
     * on a CPU device reads them too, CUDA does not */
    int want_bft = target != ER_BACKEND_CUDA; /* allocated below, for a batch that reads it */
    if (!af || !bf || !rw || !rb || (P->has_c && !cv) || (std->kind == ER_STD_ENGINE && (!ea || !eb)) ||
        (c->gemm_form && (!qa || !qw || !qb || !sa || !sw || !sb)) || (eng_q && (!qa || !qb))) {
        st = ER_ENOMEM;
        goto done;
    }
    normal_weights(rw, P->k, P->has_c, c->c_rounds, &c->r_c, &c->r_max);
    job.m = P->m;
    job.n = P->n;
    job.af = af;
    job.bf = bf;
    job.ea = ea;
    job.eb = eb;
    job.rw = rw;
    job.cv = cv;
    job.rb = rb;
    job.qa = qa;
    job.qw = qw;
    job.qb = qb;
    job.sa = sa;
    job.sw = sw;
    job.sb = sb;
    er_view rv = er_view_of(rounded);
    for (int64_t b = 0; b < P->batch && st == ER_OK; b++) {
        if (slack) {
            /* the slack of this batch (a 2-D operand's slack serves every batch) */
            job.da = slack->da ? slack->da + (args->a->ndim == 3 ? b * P->m * P->k : 0) : NULL;
            job.db = slack->db ? slack->db + (args->b->ndim == 3 ? b * P->k * P->n : 0) : NULL;
            job.dc = slack->dc ? slack->dc + (args->c && args->c->ndim == 3 ? b * P->m * P->n : 0) : NULL;
        }
        /* S of this batch from the reference's fast path (any order): er_b_exact_element's S, and the
         * engines' s (cpu/cpu_bounds_engine.c; A' and B' are the reference's here: the result keeps S
         * only for unscaled operands, and the compute's flush does not change A' or B') */
        job.S = keep_s && (c->gemm_form || std->kind == ER_STD_ENGINE) ? keep_s + b * mn : NULL;
        prep pr = {P, args, &rv, b, &job, af, bf, NULL, cv, ea, eb, NULL, NULL, rb, qa, qw, qb, sa, sw, sb, 0};
        /* A' then its quantized rows, B', C and D, B's quantized columns (engines: on their instructions' grids) */
        const int order[5] = {0, eng_q ? 6 : 5, 1, 2, eng_q ? 7 : 4};
        for (int ph = 0; ph < 5; ph++) {
            pr.phase = order[ph];
            if ((pr.phase < 4 && pr.phase != 3) || qb) par_for(args->threads, &pr);
        }
        if (want_bft && !bft && er_bjob_needs_bft(&job)) {
            bft = (double *)er_big_alloc(sizeof(double) * (size_t)(kn ? kn : 1));
            if (bft && eb) ebt = (int16_t *)er_big_alloc(sizeof(int16_t) * (size_t)(kn ? kn : 1));
            if (bft && slack && slack->db) dbt = (double *)er_big_alloc(sizeof(double) * (size_t)(kn ? kn : 1));
            if (bft && ((eb && !ebt) || (slack && slack->db && !dbt))) {
                er_big_free(bft);
                er_big_free(ebt);
                er_big_free(dbt);
                bft = dbt = NULL;
                ebt = NULL;
                want_bft = 0; /* no memory: read by rows, the same bits */
            }
        }
        job.bft = NULL;
        job.ebt = NULL;
        job.dbt = NULL;
        if (bft && er_bjob_needs_bft(&job)) {
            pr.bft = bft;
            pr.ebt = ebt;
            pr.dbt = dbt;
            pr.phase = 3;
            par_for(args->threads, &pr);
        }
        if (pr.bft) {
            job.bft = bft;
            job.ebt = ebt;
            job.dbt = dbt;
        }
        double *tsl = NULL;
        if (std->kind == ER_STD_ENGINE && c->tf32_inputs &&
            (st = tf32_subnormal_slack(&job, P->k, c->a_f32, c->b_f32, &tsl)) != ER_OK)
            break;
        const double *dc0 = job.dc;
        int slack_c0 = c->slack_c;
        if (tsl) {
            job.dc = tsl;
            c->slack_c = 1;
        }
        st = sink(sink_ctx, &job, out, b * mn);
        job.dc = dc0;
        c->slack_c = slack_c0;
        free(tsl);
    }
done:
    er_big_free(af);
    er_big_free(bf);
    free(rw);
    er_big_free(rb);
    er_big_free(cv);
    er_big_free(ea);
    er_big_free(eb);
    er_big_free(qa);
    er_big_free(qw);
    er_big_free(qb);
    free(sa);
    free(sw);
    free(sb);
    er_big_free(bft);
    er_big_free(ebt);
    er_big_free(dbt);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* The routing: each prepared batch goes to the result's backend                                      */

typedef struct {
    const er_mma_args *args;
    int64_t macs;
    char *msg;
    size_t msg_size;
    int *on_cpu;
    const er_bjob *job;
    er_bounds *out;
    int64_t e0;
} bounds_ctx;

static int bounds_on_device(void *ctx, int backend, int device, char *msg, size_t msg_size)
{
    bounds_ctx *c = (bounds_ctx *)ctx;
    if (backend == ER_BACKEND_OPENCL) return er_opencl_bounds_batch(c->job, c->out, c->e0, device, msg, msg_size);
    return er_cuda_bounds_batch(c->job, c->out, c->e0, device, msg, msg_size);
}

static int bounds_on_cpu(void *ctx)
{
    bounds_ctx *c = (bounds_ctx *)ctx;
    *c->on_cpu = 1; /* the CPU backend, or a device that cannot (no fp64): the same bits here */
    return er_cpu_bounds_batch(c->job, c->out, c->e0, c->args->threads);
}

/* A device that cannot (ER_EUNSUPPORTED, e.g. no fp64) leaves the batch to the CPU, whatever the
 * backend; under AUTO any failure does, as er_mma's does. */
static const er_route_op bounds_op = {bounds_on_device, bounds_on_cpu, 1, 0, 0, 0};

static int bounds_sink(void *ctx, const er_bjob *job, er_bounds *out, int64_t e0)
{
    bounds_ctx *c = (bounds_ctx *)ctx;
    int ran;
    c->job = job;
    c->out = out;
    c->e0 = e0;
    return er_route(&bounds_op, c, c->args->backend, c->args->device, c->macs, &ran, NULL, 0, c->msg, c->msg_size);
}

static int bounds_in(const er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                    const er_slack *slack, const double *keep_s, er_bounds *out, char *msg, size_t msg_size,
                    int *on_cpu)
{
    er_problem P;
    bounds_ctx c;
    int st, dummy_on_cpu = 0, target;
    if (!on_cpu) on_cpu = &dummy_on_cpu;
    *on_cpu = 0;
    if ((st = er_problem_validate(&P, args, (er_tensor *)rounded, args->lo, args->hi, args->odd, args->msg,
                                  args->msg_size)) != ER_OK)
        return st;
    P.stats = NULL;
    memset(&c, 0, sizeof c);
    c.args = args;
    c.macs = P.batch * P.m * P.n * P.k;
    c.msg = msg;
    c.msg_size = msg_size;
    c.on_cpu = on_cpu;
    if (std->kind == ER_STD_BLOCKED) {
        /* a declared structure (src/bounds_blocked.c, docs/proofs/blocked.md): the batches prepared as
         * any_order's in the accumulator's format, the elements on the CPU */
        er_blocked_ctx bc;
        er_standard ao = *std;
        ao.kind = ER_STD_ANY_ORDER;
        if ((st = er_blocked_begin(&bc, std, compute, ftz, slack != NULL, args->threads, msg, msg_size)) != ER_OK)
            return st;
        *on_cpu = 1;
        return prepare_bounds(&P, ER_BACKEND_CPU, bc.acc, ftz, &ao, NULL, NULL, out, er_blocked_sink, &bc);
    }
    /* where the elements will run: the CPU's extra copies only where they serve (a device that then
     * declines leaves the elements to the CPU, which computes the same bits without them) */
    target = args->backend;
    if (target == ER_BACKEND_AUTO) target = er_backend_auto(c.macs, args->device, NULL, 0);
    return prepare_bounds(&P, target, compute, ftz, std, slack, keep_s, out, bounds_sink, &c);
}

/* the default floating-point environment for the call (host/er_fpenv.h) */
int er_front_bounds(const er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                    const er_slack *slack, const double *keep_s, er_bounds *out, char *msg, size_t msg_size,
                    int *on_cpu)
{
    er_fpenv fe;
    int st;
    er_fpenv_enter(&fe);
    st = bounds_in(args, rounded, compute, ftz, std, slack, keep_s, out, msg, msg_size, on_cpu);
    er_fpenv_leave(&fe);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* a result's bounds per options, kept in its cache (src/result_internal.h)                          */

/* The eight per-element arrays of n elements (through the cache of freed blocks); 0 when one cannot
 * be had (the caller releases the others with er_result_bounds_free_). */
static int alloc_bounds(er_bounds *b, size_t n)
{
    b->radius = (double *)er_big_alloc(n * sizeof(double));
    b->tolerance = (double *)er_big_alloc(n * sizeof(double));
    b->low = (uint64_t *)er_big_alloc(n * sizeof(uint64_t));
    b->high = (uint64_t *)er_big_alloc(n * sizeof(uint64_t));
    b->has_range = (unsigned char *)er_big_alloc(n);
    b->may_pinf = (unsigned char *)er_big_alloc(n);
    b->may_ninf = (unsigned char *)er_big_alloc(n);
    b->may_nan = (unsigned char *)er_big_alloc(n);
    return b->radius && b->tolerance && b->low && b->high && b->has_range && b->may_pinf && b->may_ninf && b->may_nan;
}

static int same_opts(const er_tol_opts *x, int cx, const er_tol_opts *y, int cy)
{
    return cx == cy && x->flush_to_zero == y->flush_to_zero && x->ulps == y->ulps &&
           !memcmp(&x->standard, &y->standard, sizeof x->standard);
}

er_status er_result_bounds(er_result *r, const er_tol_opts *o, const er_bounds **out, char *msg, size_t msg_size)
{
    er_tol_opts def;
    int compute;
    er_bounds b;
    er_status st;
    if (!r || !out) return ER_EINVAL;
    if (!o) {
        er_tol_opts_init(&def);
        o = &def;
    }
    compute = o->compute < 0 ? er_result_default_compute(r) : o->compute;
    if (r->base) {
        /* a view: the base's bounds, moved (moving elements rounds nothing) */
        const er_bounds *bb;
        if ((st = er_result_bounds(r->base, o, &bb, msg, msg_size)) != ER_OK) return st;
        for (int i = 0; i < r->ncache; i++)
            if (same_opts(&r->cache[i].o, r->cache[i].compute, o, compute)) {
                *out = &r->cache[i].b;
                return ER_OK;
            }
        size_t n = (size_t)(r->count ? r->count : 1);
        memset(&b, 0, sizeof b);
        b.count = r->count;
        if (!alloc_bounds(&b, n)) {
            er_result_bounds_free_(&b);
            return ER_ENOMEM;
        }
        for (int64_t e = 0; e < r->count; e++) {
            int64_t q = r->map[e];
            b.radius[e] = bb->radius[q];
            b.tolerance[e] = bb->tolerance[q];
            b.low[e] = bb->low[q];
            b.high[e] = bb->high[q];
            b.has_range[e] = bb->has_range[q];
            b.may_pinf[e] = bb->may_pinf[q];
            b.may_ninf[e] = bb->may_ninf[q];
            b.may_nan[e] = bb->may_nan[q];
        }
        goto keep;
    }
    if (o->standard.kind == ER_STD_FLASH) /* attention's (src/ops/op_attention.c) */
        return msgf(msg, msg_size, ER_EINVAL, "the standard '%s' is attention's; a matrix product does not take it",
                    o->standard.name);
    if (compute >= ER_FMT_COUNT || er_fmt_get(compute).kind != ER_KIND_FLOAT || compute == ER_FMT_TF32 ||
        er_fmt_get(compute).mbits < 2)
        return msgf(msg, msg_size, ER_EINVAL, "compute must be f64, f32, f16 or bf16");
    for (int i = 0; i < r->ncache; i++)
        if (same_opts(&r->cache[i].o, r->cache[i].compute, o, compute)) {
            *out = &r->cache[i].b;
            return ER_OK;
        }
    memset(&b, 0, sizeof b);
    size_t n = (size_t)(r->count ? r->count : 1);
    b.count = r->count;
    if (!alloc_bounds(&b, n)) {
        er_result_bounds_free_(&b);
        return msgf(msg, msg_size, ER_ENOMEM, "out of memory for the bounds of %lld elements", (long long)r->count);
    }
    if (r->is_int) {
        /* mmai is exact: the one correct output is rounded */
        er_format_info fi;
        er_format_get_info(r->d.format, &fi);
        int64_t e = 0;
        int64_t B = r->d.ndim == 3 ? r->d.shape[0] : 1, M = r->d.shape[r->d.ndim - 2], N = r->d.shape[r->d.ndim - 1];
        for (int64_t bb = 0; bb < B; bb++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++, e++) {
                    int64_t sb = r->d.ndim == 3 ? r->d.strides[0] : 0;
                    const unsigned char *p = (const unsigned char *)r->d.data +
                                             (size_t)(bb * sb + i * r->d.strides[r->d.ndim - 2] + j * r->d.strides[r->d.ndim - 1]) * 4;
                    uint32_t v;
                    memcpy(&v, p, 4);
                    b.radius[e] = 0;
                    b.tolerance[e] = 0;
                    b.low[e] = b.high[e] = v;
                    b.has_range[e] = 1;
                    b.may_pinf[e] = b.may_ninf[e] = b.may_nan[e] = 0;
                }
    } else {
        er_slack sl = {r->slack[0], r->slack[1], r->slack[2]};
        char dmsg[512] = "";
        int on_cpu = 0;
        er_standard es = er_standard_for_inputs(&o->standard, r->args.a->format, r->args.b->format);
        if (es.kind == ER_STD_SCALED || r->scaled) /* scaled products: src/scaled.c */
            st = er_scaled_bounds(r, o, &es, &b, dmsg, sizeof dmsg);
        else
            st = er_front_bounds(&r->args, &r->d, compute, o->flush_to_zero, &es,
                                 (sl.da || sl.db || sl.dc) ? &sl : NULL, r->keep_s, &b, dmsg, sizeof dmsg, &on_cpu);
        /* a backend asked for by name says where the bounds ran when it could not run them itself */
        if (st == ER_OK && on_cpu && (r->args.backend == ER_BACKEND_OPENCL || r->args.backend == ER_BACKEND_CUDA) &&
            !r->stats.note[0])
            snprintf(r->stats.note, sizeof r->stats.note, "the bounds ran on the CPU (the same bits): the %s device "
                     "cannot compute them (OpenCL: no fp64)", r->args.backend == ER_BACKEND_CUDA ? "CUDA" : "OpenCL");
        if (st != ER_OK) {
            er_result_bounds_free_(&b);
            if (dmsg[0]) return msgf(msg, msg_size, st, "computing the bounds failed: %s", dmsg);
            return msgf(msg, msg_size, st, "computing the bounds failed: %s", er_status_string(st));
        }
    }
keep:
    if (r->ncache == ER_CACHE) {
        er_result_bounds_free_(&r->cache[0].b);
        er_bkeys_release(r->cache[0].keys);
        memmove(&r->cache[0], &r->cache[1], sizeof r->cache[0] * (ER_CACHE - 1));
        r->ncache--;
    }
    r->cache[r->ncache].o = *o;
    r->cache[r->ncache].compute = compute;
    r->cache[r->ncache].b = b;
    r->cache[r->ncache].keys = NULL;
    *out = &r->cache[r->ncache].b;
    r->ncache++;
    return ER_OK;
}

int er_result_tileable_(const er_result *r, const er_tol_opts *o)
{
    /* a scaled product's problem is its plan (src/scaled.c), not r->args: one pass */
    if (r->base || r->from[0] || r->from[1] || r->from[2] || r->scaled) return 0;
    int compute = o->compute < 0 ? er_result_default_compute(r) : o->compute;
    for (int i = 0; i < r->ncache; i++)
        if (same_opts(&r->cache[i].o, r->cache[i].compute, o, compute)) return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* may_be: what the bounds allow (covers, which reads the bounds' keys: src/report.c)                 */

er_status er_result_may_be_any(er_result *r, const er_tol_opts *o, const char *kind, int *answer, char *msg,
                               size_t msg_size)
{
    er_interval ia, ib, ic;
    er_tol_opts def;
    if (!r || !kind || !answer) return ER_EINVAL;
    if (strcmp(kind, "+inf") && strcmp(kind, "-inf") && strcmp(kind, "nan"))
        return msgf(msg, msg_size, ER_EINVAL, "may_be: kind is \"+inf\", \"-inf\" or \"nan\", not \"%s\"", kind);
    if (!o) {
        er_tol_opts_init(&def);
        o = &def;
    }
    *answer = -1;
    if (r->is_int) {
        *answer = 0; /* integers are exact and never infinite or NaN */
        return ER_OK;
    }
    if (r->args.a_scale) return ER_OK; /* scales: not summarised here */
    if (r->scaled || o->standard.kind == ER_STD_SCALED) return ER_OK; /* f32 scales (src/scaled.c): neither */
    if (er_interval_of_tensor(r->args.a, &ia) != ER_OK || er_interval_of_tensor(r->args.b, &ib) != ER_OK) return ER_OK;
    if (er_interval_is_top(ia) || er_interval_is_top(ib) || !(ia.lo <= ia.hi) || !(ib.lo <= ib.hi)) return ER_OK;
    double ma = fmax(fabs(ia.lo), fabs(ia.hi)), mb = fmax(fabs(ib.lo), fabs(ib.hi)), mc = 0;
    if (r->args.c) {
        if (er_interval_of_tensor(r->args.c, &ic) != ER_OK || er_interval_is_top(ic) || !(ic.lo <= ic.hi)) return ER_OK;
        mc = fmax(fabs(ic.lo), fabs(ic.hi));
    }
    if (!isfinite(ma) || !isfinite(mb) || !isfinite(mc)) return ER_OK;
    /* Every partial sum of every admitted implementation is at most (1 + 1/2)(k ma mb + mc) in magnitude
     * when the standards' bounds are below half of it (k u <= 1/4 for the compute format, or a
     * matrix-engine model whose errors are relative to 2^-F and 2^-p with F, p >= 8): bounded with
     * room by 2 (k ma mb + mc), computed with a margin for its own roundings. */
    int compute = o->standard.kind == ER_STD_ENGINE ? (o->standard.acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32)
                  : o->standard.kind == ER_STD_BLOCKED && o->standard.acc_fmt >= 0 ? o->standard.acc_fmt
                  : o->compute < 0                  ? er_result_default_compute(r)
                                                    : o->compute;
    er_fmt cf = er_fmt_get(compute);
    if ((double)r->args.a->shape[r->args.a->ndim - 1] * ldexp(1.0, -(cf.mbits + 1)) > 0.25) return ER_OK;
    if (o->standard.kind == ER_STD_ENGINE) {
        /* per step the errors are below (k + 1) 2^-F and 2^-p relative to the step's largest
         * magnitude, which is at most the bound itself: over K products they stay below a quarter of
         * it when 2 K 2^-min(F, p) <= 1/4 */
        int f = o->standard.F < o->standard.out_p ? o->standard.F : o->standard.out_p;
        if (2.0 * (double)r->args.a->shape[r->args.a->ndim - 1] * ldexp(1.0, -f) > 0.25) return ER_OK;
    }
    double big = 2.0 * ((double)r->args.a->shape[r->args.a->ndim - 1] * ma * mb + mc) * (1.0 + 0x1p-40);
    double maxc = 0, maxo = 0;
    er_format_info fc, fo;
    er_format_get_info(compute, &fc);
    er_format_get_info(r->d.format, &fo);
    er_from_bits(compute, fc.max_finite_bits, &maxc);
    er_from_bits(r->d.format, fo.max_finite_bits, &maxo);
    /* below both formats' largest values, rounding (any direction) cannot overflow to inf or NaN, and
     * f8E8M0FNU (unsigned) outputs are excluded: negative values give NaN there */
    if (big < maxc && big < maxo && er_fmt_signed(er_fmt_get(r->d.format))) *answer = 0;
    return ER_OK;
}
