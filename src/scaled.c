/* scaled.c: scaled matrix products (include/exactref/scaled.h): the exact reference from binary64
 * operands, and the bounds of the scaled standard, partials of bk products scaled after their sum and
 * accumulated in f32 (docs/proofs/scaled.md; the numbered steps below are its). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result_internal.h"
#include "scaled_internal.h"
#include "host/er_bel.h"
#include "host/er_host.h"
#include "host/er_msg.h"
#include "exactref/core/er_bounds.h"
#include "exactref/exactref.h"

#define msgf er_msgf /* host/er_msg.h */

/* ---- The plan a scaled result keeps ------------------------------------------------------------- */

typedef struct {
    int64_t m, n, k, k2, nkb, nbn;
    int bk, bn, ga, gb; /* scale blocks; granularities: 0 per tensor, 1 per row / column, 2 per block */
    int a_fmt, b_fmt, has_c, has_bias;
    double alpha, beta;
    double *ua, *ub;   /* A (m x k) and B (k x n) unscaled, as binary64 */
    int16_t *ea, *eb;  /* their hardware exponents (docs/accumulation-models.md, step 2) */
    double *sa, *sb;   /* the scales' values (1, m or m nkb; 1, n or nkb nbn) */
    double *cb;        /* beta C (m x n, exact in binary64), NULL without C */
    double *bias;      /* n, NULL without */
    double *A2, *B2;   /* the reference's operands: m x k2 and k2 x n, binary64 */
    er_tensor ta, tb, tc;
} er_splan;

void er_scaled_plan_free(void *plan)
{
    er_splan *q = (er_splan *)plan;
    if (!q) return;
    free(q->ua), free(q->ub), free(q->ea), free(q->eb), free(q->sa), free(q->sb), free(q->cb), free(q->bias);
    free(q->A2), free(q->B2);
    free(q);
}

void er_scaled_args_init(er_scaled_args *a)
{
    memset(a, 0, sizeof *a);
    a->alpha = 1.0;
    a->beta = 0.0;
    a->rounding = ER_RND_NEAREST_EVEN;
    a->block_k = 128;
    a->block_n = 128;
}

/* The exponent the engine models give an element (tolerance.c's hw_exp): a normal value's, a
 * subnormal one's format minimum, a zero's the larger of -126 and the format's minimum. */
static int16_t hw_exp_of(int fmt, uint64_t bits)
{
    er_val v = er_decode(fmt, bits);
    int emin = er_fmt_emin(er_fmt_get(fmt));
    if (v.cls == ER_CLASS_ZERO) return (int16_t)(emin > -126 ? emin : -126);
    if (v.cls != ER_CLASS_NORMAL && v.cls != ER_CLASS_SUBNORMAL) return 0;
    int e = v.exp + (63 - ER_CLZ64(v.sig));
    return (int16_t)(e < emin ? emin : e);
}

static int sig_bits_ok(int fmt) { return er_fmt_get(fmt).kind == ER_KIND_FLOAT && er_fmt_get(fmt).mbits <= 23; }

/* Read a 2-D tensor's values into dst (rows x cols, row-major); 0 or a message naming the bad index. */
static er_status read_values(const er_tensor *t, const char *name, int64_t rows, int64_t cols, double *dst,
                             int need_finite, char *msg, size_t msg_size)
{
    er_view v = er_view_of(t);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double x = er_val_to_double(er_decode(t->format, er_view_load(&v, 0, i, j)));
            if (need_finite && !isfinite(x))
                return msgf(msg, msg_size, ER_EINVAL, "%s[%lld, %lld] is %s: scales, alpha, beta and the bias must be "
                            "finite", name, (long long)i, (long long)j, isnan(x) ? "NaN" : "infinite");
            dst[i * cols + j] = x;
        }
    return ER_OK;
}

static double sa_of(const er_splan *q, int64_t i, int64_t kb)
{
    return q->ga == 0 ? q->sa[0] : q->ga == 1 ? q->sa[i] : q->sa[i * q->nkb + kb];
}
static double sb_of(const er_splan *q, int64_t kb, int64_t j)
{
    return q->gb == 0 ? q->sb[0] : q->gb == 1 ? q->sb[j] : q->sb[kb * q->nbn + j / q->bn];
}

static int f32_value(double x) { return (double)(float)x == x || isnan(x); }

er_status er_scaled_result_create(const er_scaled_args *args, er_result **out, char *msg, size_t msg_size)
{
    er_splan *q;
    er_status st = ER_OK;
    if (!args || !out || !args->a || !args->b || !args->d) return msgf(msg, msg_size, ER_EINVAL, "a, b and d are required");
    *out = NULL;
    const er_tensor *a = args->a, *b = args->b;
    if (a->ndim != 2 || b->ndim != 2 || args->d->ndim != 2)
        return msgf(msg, msg_size, ER_EINVAL, "scaled products take 2-D a, b and d");
    if (a->format < 0 || a->format >= ER_FMT_COUNT || b->format < 0 || b->format >= ER_FMT_COUNT ||
        !sig_bits_ok(a->format) || !sig_bits_ok(b->format))
        return msgf(msg, msg_size, ER_EINVAL, "a and b: float formats of at most 24 significant bits (f32 and narrower)");
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    if (b->shape[0] != k) return msgf(msg, msg_size, ER_EINVAL, "b has %lld rows; a has %lld columns", (long long)b->shape[0], (long long)k);
    if (args->d->shape[0] != m || args->d->shape[1] != n)
        return msgf(msg, msg_size, ER_EINVAL, "d must be %lld x %lld", (long long)m, (long long)n);
    if (!f32_value(args->alpha) || !f32_value(args->beta) || !isfinite(args->alpha) || !isfinite(args->beta))
        return msgf(msg, msg_size, ER_EINVAL, "alpha and beta must be finite f32 values");
    q = (er_splan *)calloc(1, sizeof *q);
    if (!q) return ER_ENOMEM;
    q->m = m, q->n = n, q->k = k;
    q->bk = args->block_k > 0 ? args->block_k : 128;
    q->bn = args->block_n > 0 ? args->block_n : 128;
    q->nkb = k > 0 ? (k + q->bk - 1) / q->bk : 1;
    q->nbn = n > 0 ? (n + q->bn - 1) / q->bn : 1;
    q->a_fmt = a->format, q->b_fmt = b->format;
    q->alpha = args->alpha, q->beta = args->beta;
    /* the scales: the shape says the granularity */
    for (int side = 0; side < 2 && st == ER_OK; side++) {
        const er_tensor *s = side ? args->b_scale : args->a_scale;
        const char *nm = side ? "b_scale" : "a_scale";
        int64_t r0 = 1, c0 = 1;
        int g = 0;
        if (s) {
            if (s->ndim != 2 || (s->format != ER_FMT_F32 && s->format != ER_FMT_BF16)) {
                st = msgf(msg, msg_size, ER_EINVAL, "%s: a 2-D f32 or bf16 tensor", nm);
                break;
            }
            r0 = s->shape[0], c0 = s->shape[1];
            if (r0 == 1 && c0 == 1) g = 0;
            else if (!side && r0 == m && c0 == 1) g = 1;
            else if (side && r0 == 1 && c0 == n) g = 1;
            else if (!side && r0 == m && c0 == q->nkb) g = 2;
            else if (side && r0 == q->nkb && c0 == q->nbn) g = 2;
            else {
                st = side ? msgf(msg, msg_size, ER_EINVAL, "b_scale is %lld x %lld: expected 1 x 1, 1 x %lld (per column) or "
                                 "%lld x %lld (per %d x %d block)", (long long)r0, (long long)c0, (long long)n,
                                 (long long)q->nkb, (long long)q->nbn, q->bk, q->bn)
                          : msgf(msg, msg_size, ER_EINVAL, "a_scale is %lld x %lld: expected 1 x 1, %lld x 1 (per row) or "
                                 "%lld x %lld (per 1 x %d block)", (long long)r0, (long long)c0, (long long)m,
                                 (long long)m, (long long)q->nkb, q->bk);
                break;
            }
        }
        double *v = (double *)malloc(sizeof(double) * (size_t)(r0 * c0));
        if (!v) {
            st = ER_ENOMEM;
            break;
        }
        if (s) st = read_values(s, nm, r0, c0, v, 1, msg, msg_size);
        else v[0] = 1.0;
        if (side) q->sb = v, q->gb = g;
        else q->sa = v, q->ga = g;
    }
    q->has_c = args->c != NULL;
    q->has_bias = args->bias != NULL;
    if (st == ER_OK && args->c &&
        (args->c->ndim != 2 || args->c->shape[0] != m || args->c->shape[1] != n ||
         (args->c->format != ER_FMT_F32 && args->c->format != ER_FMT_BF16 && args->c->format != ER_FMT_F16)))
        st = msgf(msg, msg_size, ER_EINVAL, "c: an f32, bf16 or f16 tensor of %lld x %lld", (long long)m, (long long)n);
    if (st == ER_OK && args->bias &&
        (args->bias->ndim != 2 || args->bias->shape[0] != 1 || args->bias->shape[1] != n ||
         (args->bias->format != ER_FMT_F32 && args->bias->format != ER_FMT_BF16 && args->bias->format != ER_FMT_F16)))
        st = msgf(msg, msg_size, ER_EINVAL, "bias: an f32, bf16 or f16 tensor of 1 x %lld", (long long)n);
    int split = args->alpha != 1.0; /* alpha sa: 48 bits, cut in two 24-bit halves (below) */
    q->k2 = (split ? 2 * k : k) + (q->has_bias ? 1 : 0);
    if (st == ER_OK) {
        size_t mk = (size_t)(m * k), kn = (size_t)(k * n);
        q->ua = (double *)malloc(sizeof(double) * (mk ? mk : 1));
        q->ub = (double *)malloc(sizeof(double) * (kn ? kn : 1));
        q->ea = (int16_t *)malloc(sizeof(int16_t) * (mk ? mk : 1));
        q->eb = (int16_t *)malloc(sizeof(int16_t) * (kn ? kn : 1));
        q->A2 = (double *)calloc((size_t)(m * q->k2) + 1, sizeof(double));
        q->B2 = (double *)calloc((size_t)(q->k2 * n) + 1, sizeof(double));
        if (q->has_c) q->cb = (double *)malloc(sizeof(double) * (size_t)(m * n + 1));
        if (q->has_bias) q->bias = (double *)malloc(sizeof(double) * (size_t)(n + 1));
        if (!q->ua || !q->ub || !q->ea || !q->eb || !q->A2 || !q->B2 || (q->has_c && !q->cb) || (q->has_bias && !q->bias))
            st = ER_ENOMEM;
    }
    if (st == ER_OK) {
        er_view va = er_view_of(a), vb = er_view_of(b);
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                uint64_t x = er_view_load(&va, 0, i, p);
                q->ua[i * k + p] = er_val_to_double(er_decode(a->format, x));
                q->ea[i * k + p] = hw_exp_of(a->format, x);
            }
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                uint64_t x = er_view_load(&vb, 0, p, j);
                q->ub[p * n + j] = er_val_to_double(er_decode(b->format, x));
                q->eb[p * n + j] = hw_exp_of(b->format, x);
            }
        if (q->has_c) st = read_values(args->c, "c", m, n, q->cb, 0, msg, msg_size);
        if (st == ER_OK && q->has_bias) st = read_values(args->bias, "bias", 1, n, q->bias, 1, msg, msg_size);
    }
    if (st == ER_OK) {
        /* the reference's operands: every value exact in binary64 (a value of at most 24 significant bits
         * times a scale of at most 24: 48 bits; alpha sa cut into h + l, each of at most 24 bits) */
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                double s = sa_of(q, i, p / q->bk), av = q->ua[i * k + p];
                if (!split) {
                    q->A2[i * q->k2 + p] = s * av;
                } else {
                    double as = args->alpha * s, h = (double)(float)as, l = as - h; /* exact: 48 bits, then 24 + 24 */
                    q->A2[i * q->k2 + p] = h * av;
                    q->A2[i * q->k2 + k + p] = l * av;
                }
            }
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                double v = sb_of(q, p / q->bk, j) * q->ub[p * n + j];
                q->B2[p * n + j] = v;
                if (split) q->B2[(k + p) * n + j] = v;
            }
        if (q->has_bias) {
            for (int64_t i = 0; i < m; i++) q->A2[i * q->k2 + q->k2 - 1] = 1.0;
            for (int64_t j = 0; j < n; j++) q->B2[(q->k2 - 1) * n + j] = q->bias[j];
        }
        if (q->has_c)
            for (int64_t e = 0; e < m * n; e++) q->cb[e] = args->beta * q->cb[e]; /* exact: 24 + 24 bits */
        q->ta = er_tensor_2d(ER_FMT_F64, m, q->k2, q->A2);
        q->tb = er_tensor_2d(ER_FMT_F64, q->k2, n, q->B2);
        q->tc = er_tensor_2d(ER_FMT_F64, m, n, q->cb);
        er_mma_args ma;
        er_mma_args_init(&ma);
        ma.a = &q->ta;
        ma.b = &q->tb;
        ma.c = q->has_c ? &q->tc : NULL;
        ma.d = args->d;
        ma.rounding = args->rounding;
        ma.opts = args->opts;
        ma.threads = args->threads;
        st = er_result_create(&ma, out, msg, msg_size);
    }
    if (st != ER_OK) {
        er_scaled_plan_free(q);
        return st;
    }
    (*out)->scaled = q;
    (*out)->scaled_free = er_scaled_plan_free;
    return ER_OK;
}

/* ---- The bounds --------------------------------------------------------------------------------- */

/* Half an ulp at M (>= 0) of a format of precision pt and least normal exponent emin: 0 for M = 0. */
static double half_ulp(int emin, int pt, double M)
{
    int e;
    if (!(M > 0)) return 0.0;
    e = er_b_frexp_e(M) - 1;
    if (e < emin) e = emin;
    return ldexp(1.0, e - pt);
}
static double gam(double u, double r) { return er_b_up(er_b_gamma(u, r) * r); }
static double fmax_abs2(double a, double b) { return fmax(fabs(a), fabs(b)); }

/* The rounded result's pattern of element (i, j). */
static uint64_t load_bits(const er_result *r, int64_t i, int64_t j)
{
    er_view v = er_view_of(&r->d);
    return er_view_load(&v, 0, i, j);
}

er_status er_scaled_bounds(er_result *r, const er_tol_opts *o, const er_standard *std, er_bounds *out, char *msg,
                           size_t msg_size)
{
    const er_splan *q = (const er_splan *)r->scaled;
    if (!q) return msgf(msg, msg_size, ER_EINVAL, "the standard %s applies to results of er_scaled_result_create", std->name);
    if (std->kind != ER_STD_SCALED)
        return msgf(msg, msg_size, ER_EINVAL, "a scaled product's bounds are taken under a scaled:bk=.. standard, not %s",
                    std->name);
    if (o->flush_to_zero) return msgf(msg, msg_size, ER_EUNSUPPORTED, "scaled standards do not model flush_to_zero");
    const int64_t m = q->m, n = q->n, k = q->k, bk = std->bk, nb = k > 0 ? (k + bk - 1) / bk : 0;
    if (q->ga == 2 || q->gb == 2) {
        if (q->bk % bk)
            return msgf(msg, msg_size, ER_EINVAL, "%s: the partials (bk=%lld) must fit in the scale blocks (%d products)",
                        std->name, (long long)bk, q->bk);
    }
    const double u = 0x1p-24, eta = 0x1p-150, maxf = 0x1.fffffep127;
    er_fmt of = er_fmt_get(r->d.format);
    er_bpar cp, ce;
    /* the finish: the output's format, rounding and options; compute f32 (docs/proofs/foundations.md) */
    memset(&cp, 0, sizeof cp);
    cp.k = q->k2, cp.ldb = n, cp.kind = ER_BK_ANY, cp.out_fmt = r->d.format, cp.dir = r->args.rounding;
    cp.opts = r->args.opts, cp.has_c = q->has_c, cp.emin_c = -126, cp.u = u, cp.eta = eta, cp.max_c = maxf;
    cp.maxo = er_b_value(r->d.format, er_maxval_(of, 0u));
    /* the partial's engine model (engines.md), from zero, no promotion of its own */
    memset(&ce, 0, sizeof ce);
    if (std->k > 0) {
        er_fmt df = er_fmt_get(std->acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32);
        ce.k = bk, ce.ldb = 1, ce.kind = ER_BK_ENGINE, ce.mk = std->k, ce.F = std->F, ce.out_p = std->out_p;
        ce.out_round = std->out_round, ce.F2 = std->F2, ce.xterms = std->two_stage ? 2 : 0;
        ce.emin_c = er_fmt_emin(df), ce.u = ldexp(1.0, -(df.mbits + 1)), ce.eta = ldexp(1.0, er_fmt_emin(df) - (df.mbits + 1));
        ce.max_c = er_b_value(std->acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32,
                              er_maxval_(er_fmt_get(std->acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32), 0u));
    }
    /* products exact in f32 (no rounding term in an f32 partial): at most 24 significant bits together,
     * their lowest bits at or above 2^-149, below f32's largest value; checked on the whole operands */
    int pe;
    {
        int sa_ = er_fmt_get(q->a_fmt).mbits + 1, sb_ = er_fmt_get(q->b_fmt).mbits + 1;
        int la = er_fmt_emin(er_fmt_get(q->a_fmt)) - (sa_ - 1), lb = er_fmt_emin(er_fmt_get(q->b_fmt)) - (sb_ - 1);
        double ma = 0, mb = 0;
        for (int64_t x = 0; x < m * k; x++) ma = fmax(ma, fabs(q->ua[x]));
        for (int64_t x = 0; x < k * n; x++) mb = fmax(mb, fabs(q->ub[x]));
        pe = sa_ + sb_ <= 24 && la + lb >= -149 && er_b_up(ma * mb) < maxf;
    }
    const double alpha = q->alpha;
    /* order=before (5): every nonzero scaled operand sa a, sb b is a normal f32 value once rounded (no
     * underflow, no overflow), so that its rounding errs by at most u of it; else no bound */
    int before_ok = 1;
    if (std->split) {
        for (int side = 0; side < 2; side++) {
            const double *x = side ? q->ub : q->ua;
            int64_t cnt = side ? k * n : m * k;
            for (int64_t t = 0; t < cnt && before_ok; t++) {
                int64_t r0 = side ? t / n : t / k, c0 = side ? t % n : t % k;
                double sc = side ? sb_of(q, r0 / q->bk, c0) : sa_of(q, r0, c0 / q->bk), v = fabs(x[t] * sc);
                if (v != 0 && !(v >= 0x1p-126 && v <= 0x1.fffffep127)) before_ok = 0;
            }
        }
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const int64_t e = i * n + j;
            double Slo = 0, Shi = 0, E = 0, Ts = 0, xl, xh, rad;
            int special = 0;
            er_bel ob;
            for (int64_t bi = 0; bi < nb && !special; bi++) {
                const int64_t p0 = bi * bk, p1 = p0 + bk < k ? p0 + bk : k, nt = p1 - p0;
                const double ss = sa_of(q, i, p0 / q->bk) * sb_of(q, p0 / q->bk, j), sg = fabs(ss); /* exact */
                /* the block's exact unscaled sum: P^ in index order (products exact in binary64),
                 * within gamma_nt Tu of it */
                double P = 0, T = 0;
                for (int64_t p = p0; p < p1; p++) {
                    double x = q->ua[i * k + p] * q->ub[p * n + j];
                    P = P + x;
                    T = T + fabs(x);
                }
                if (!er_b_finite(T) || !er_b_finite(P)) {
                    special = 1;
                    break;
                }
                const double Tu = er_b_up(T * (1.0 + (double)(nt + 8) * 0x1p-51));
                const double eP = er_b_up(gam(0x1p-53, (double)nt) * Tu);
                const double Pm = er_b_up(fmax_abs2(P - eP, P + eP)); /* >= |the exact block sum| */
                double Rb, Q;
                if (std->split) {
                    /* order=before: only the scaled magnitudes and the exact prefix are needed here */
                    double v1 = ss * (P - eP), v2 = ss * (P + eP);
                    Slo = er_b_down(Slo + er_b_down(fmin(v1, v2)));
                    Shi = er_b_up(Shi + er_b_up(fmax(v1, v2)));
                    Ts = er_b_up(Ts + er_b_up(sg * Tu));
                    continue;
                }
                if (std->k <= 0) {
                    /* (1) an f32 partial from zero: a tree over nt products, nt - 1 additions of exact
                     * values at most M0 (subset sums, moved by the roundings), each within h(M0) */
                    double Tp = fmin(er_b_up(er_b_up(er_b_up(Tu + P) + eP) * 0.5), Tu);
                    double Tn = fmin(er_b_up(er_b_up(er_b_up(Tu - P) + eP) * 0.5), Tu);
                    double M0 = er_b_up(fmax(Tp, Tn) + er_b_up(gam(u, (double)(nt + 1)) * Tu));
                    if (!pe) M0 = er_b_up(M0 + (double)(2 * nt) * eta);
                    Rb = er_b_up((double)(nt - 1) * half_ulp(-126, 24, M0));
                    if (!pe) Rb = er_b_up(Rb + er_b_up(er_b_up(u * Tu) + (double)nt * eta));
                    if (!(M0 < maxf)) Rb = ER_B_INF;
                    Q = er_b_up(Pm + Rb);
                } else {
                    /* (1') a tensor-core partial: the engine's recurrence (engines.md) over the block's
                     * instructions from a zero accumulator; E bounds its error, B its magnitude */
                    er_b_eng g;
                    ce.has_c = 0;
                    er_b_eng_init(&ce, &g, 0.0, 0.0);
                    for (int64_t s0 = p0; s0 < p1; s0 += std->k) {
                        int64_t s1 = s0 + std->k < p1 ? s0 + std->k : p1;
                        double xs = 0;
                        int emax = -100000;
                        for (int64_t p = s0; p < s1; p++) {
                            int ee = q->ea[i * k + p] + q->eb[p * n + j];
                            xs = xs + fabs(q->ua[i * k + p] * q->ub[p * n + j]);
                            if (ee > emax) emax = ee;
                        }
                        xs = er_b_up(xs * (1.0 + (double)(s1 - s0 + 8) * 0x1p-51));
                        er_b_eng_block(&ce, &g, xs, emax, s1 - s0, s1 - p0);
                    }
                    Rb = g.done ? ER_B_INF : g.E;
                    Q = g.done ? ER_B_INF : fmin(g.B, er_b_up(Pm + Rb));
                }
                /* (2) y = s^ partial, s^ = f32(sa sb): |y - sa sb P| <= |s^| Rb + ds |P| + u |s^| Q + eta */
                double ds = (double)(float)ss == ss ? 0.0 : er_b_up(er_b_up(u * sg) + eta);
                double shat = er_b_up(sg + ds);
                double ey = er_b_up(er_b_up(er_b_up(shat * Rb) + er_b_up(ds * Pm)) + er_b_up(er_b_up(er_b_up(u * shat) * Q) + eta));
                /* the exact scaled prefix: [Slo, Shi] += ss [P - eP, P + eP], outward */
                double v1 = ss * (P - eP), v2 = ss * (P + eP);
                Slo = er_b_down(Slo + er_b_down(fmin(v1, v2)));
                Shi = er_b_up(Shi + er_b_up(fmax(v1, v2)));
                /* (3) acc + y (or fma(s^, partial, acc)): one rounding of a value within E + ey of S_b */
                double M = er_b_up(er_b_up(fmax_abs2(Slo, Shi) + E) + ey);
                E = er_b_up(E + ey);
                if (bi > 0) E = er_b_up(E + half_ulp(-126, 24, M));
                if (!(M < maxf) || !er_b_finite(E)) E = ER_B_INF;
            }
            if (std->split && !special) {
                /* (5) scales before the sum: a' = f32(sa a), b' = f32(sb b) within u of themselves, so
                 * sum |a'b' - (sa a)(sb b)| <= (2u + u^2) Ts and sum |a'b'| <= (1 + u)^2 Ts; then any f32
                 * tree over the k products a'b' (any-order.md): gamma_k sum |a'b'| + 2 k eta */
                double Tq = er_b_up(Ts * er_b_up(er_b_up(1 + u) * er_b_up(1 + u)));
                E = er_b_up(er_b_up(er_b_up(er_b_up(2 * u + u * u) * Ts) + er_b_up(gam(u, (double)k) * Tq)) +
                            (double)(2 * k) * eta);
                if (!before_ok || !(er_b_up(Tq * (1 + 0x1p-20)) < maxf) || !(gam(u, (double)k) < 0.5)) E = ER_B_INF;
            }
            double cv = q->has_c ? q->cb[e] : 0.0;
            if (special || !er_b_finite(cv)) {
                er_b_finish_lh(&cp, load_bits(r, i, j), -ER_B_INF, ER_B_INF, ER_B_INF, 0, 0, 0, 0, &ob);
                er_bel_store(out, e, &ob);
                continue;
            }
            /* (4) the epilogue alpha acc + beta C + bias in f32, any tree, products rounded or fused */
            {
                double bv = q->has_bias ? q->bias[j] : 0.0, Sm = fmax_abs2(Slo, Shi);
                int nl = 1 + q->has_c + q->has_bias;
                rad = er_b_up(fabs(alpha) * E);
                if (nl > 1 || alpha != 1.0) {
                    double tsum = er_b_up(er_b_up(er_b_up(fabs(alpha) * er_b_up(Sm + E)) + fabs(cv)) + fabs(bv));
                    rad = er_b_up(rad + er_b_up(er_b_up(gam(u, (double)nl) * tsum) + (double)(2 * nl) * eta));
                    if (!(er_b_up(tsum * (1 + 0x1p-20)) < maxf)) rad = ER_B_INF;
                }
                /* the exact value: alpha S + beta C + bias, enclosed */
                double a1 = alpha * Slo, a2 = alpha * Shi;
                xl = er_b_down(fmin(a1, a2));
                xh = er_b_up(fmax(a1, a2));
                if (q->has_c) xl = er_b_down(xl + cv), xh = er_b_up(xh + cv);
                if (q->has_bias) xl = er_b_down(xl + bv), xh = er_b_up(xh + bv);
            }
            if (!er_b_finite(rad)) {
                er_b_finish_lh(&cp, load_bits(r, i, j), -ER_B_INF, ER_B_INF, rad, 0, 0, 0, 0, &ob);
            } else {
                er_b_ends_exact(&cp, q->A2 + i * q->k2, q->B2 + j, cv, load_bits(r, i, j), xl, xh, rad, &ob);
            }
            er_bel_store(out, e, &ob);
        }
    return ER_OK;
}
