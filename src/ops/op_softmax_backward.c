/* op_softmax_backward.c: softmax.backward(input, grad): grad_input = y (grad - sum(grad y)) with y = softmax(input),
 * and log_softmax.backward(input, grad): grad_input = grad - y sum(grad),
 * the exact value rounded once, and bounds covering implementations that use any forward output the
 * softmax bounds allow (stored or kept in compute); proof: docs/proofs/norms.md, "softmax.backward". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/formats.h"
#include "../host/er_msg.h"
#include "op_impl.h"

#define msgf er_msgf

static const char *const sb_inputs[] = {"input", "grad"};
static const char *const sb_outputs[] = {"grad_input"};
static const er_boundary sb_boundaries[] = {
    {"forward", "cast", "the forward output y as softmax's bounds allow it (stored, or kept in compute)", "each element"},
    {"dot", "accumulate", "sum over the row of grad * y in compute (any order)", "each row"},
    {"grad_input", "compute", "y (grad - dot), or y grad - y dot, each operation rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

typedef struct sb_state {
    int lsm; /* log_softmax.backward */
    double *x, *g;
    int64_t outer, len, inner;
    int dim;
    er_opres *fwd; /* softmax(input) */
} sb_state;

static void sb_free(void *p)
{
    sb_state *s = (sb_state *)p;
    if (!s) return;
    free(s->x);
    free(s->g);
    if (s->fwd) er_opres_free(s->fwd);
    free(s);
}

#define AT(s, row, j) ((((row) / (s)->inner) * (s)->len + (j)) * (s)->inner + (row) % (s)->inner)

static double mdn(double a, double b) { return (a == 0 || b == 0) ? 0.0 : er_ops_mul_dn(a, b); }
static double mup(double a, double b) { return (a == 0 || b == 0) ? 0.0 : er_ops_mul_up(a, b); }

/* [al, ah] * [bl, bh], outward, exact zeros kept */
static void mul_iv(double al, double ah, double bl, double bh, double *l, double *h)
{
    double p[4] = {mdn(al, bl), mdn(al, bh), mdn(ah, bl), mdn(ah, bh)};
    double q[4] = {mup(al, bl), mup(al, bh), mup(ah, bl), mup(ah, bh)};
    *l = fmin(fmin(p[0], p[1]), fmin(p[2], p[3]));
    *h = fmax(fmax(q[0], q[1]), fmax(q[2], q[3]));
}

/*
 * 1 when y_i (g_i - sum_j g_j y_j) is exactly 0: y_i > 0, and sum_j (g_i - g_j) e^{x_j} = 0 holds, by the
 * Lindemann-Weierstrass theorem (e^a for distinct rationals a are linearly independent over the
 * rationals), exactly when for each distinct value v of x the group sum over {j : x_j = v} of (g_i - g_j)
 * is 0, that is c_v g_i = S_v (c_v the group's size, S_v its sum of g) for every v: every group has the
 * same mean S_v / c_v, and g_i is it.  The row's part (the groups, whether their means are equal, S_0 and
 * c_0 of the first) is computed once per row into *z, exactly (MPFR at a precision that holds every sum
 * of binary64 values), so each element costs O(1).
 */
typedef struct sb_zero {
    int ready, allmean;
    double c0;
    er_ops_mp *mp; /* register 0: S_0 */
} sb_zero;

typedef struct sb_xg {
    double x, g;
} sb_xg;

static int xg_cmp(const void *a, const void *b)
{
    double p = ((const sb_xg *)a)->x, q = ((const sb_xg *)b)->x;
    return p < q ? -1 : p > q;
}

static int grad_is_zero(const sb_state *s, int64_t row, int64_t i, sb_zero *z)
{
    int64_t n = s->len;
    if (!z->ready) {
        z->ready = 1;
        z->allmean = 0;
        sb_xg *v = (sb_xg *)malloc(sizeof(sb_xg) * (size_t)(n ? n : 1));
        z->mp = er_ops_mp_new(2300, 6);
        if (!v || !z->mp) {
            free(v);
            return 0;
        }
        for (int64_t k = 0; k < n; k++) {
            v[k].x = s->x[AT(s, row, k)];
            v[k].g = s->g[AT(s, row, k)];
        }
        qsort(v, (size_t)n, sizeof *v, xg_cmp);
        er_ops_mp *mp = z->mp;
        int first = 1, ok = 1;
        for (int64_t a = 0; a < n && ok;) {
            int64_t b = a;
            er_ops_mp_set_d(mp, 3, 0);
            while (b < n && v[b].x == v[a].x) {
                er_ops_mp_set_d(mp, 1, v[b].g);
                er_ops_mp_add(mp, 3, 3, 1);
                b++;
            }
            double c = (double)(b - a);
            if (first) {
                er_ops_mp_copy(mp, 0, 3);
                z->c0 = c;
                first = 0;
            } else { /* c_0 S_v == c_v S_0 */
                double lo, hi;
                er_ops_mp_set_d(mp, 1, z->c0);
                er_ops_mp_mul(mp, 4, 3, 1);
                er_ops_mp_set_d(mp, 1, c);
                er_ops_mp_mul(mp, 5, 0, 1);
                er_ops_mp_sub(mp, 4, 4, 5);
                er_ops_mp_get(mp, 4, &lo, &hi);
                ok = lo == 0 && hi == 0;
            }
            a = b;
        }
        z->allmean = ok;
        free(v);
    }
    if (!z->allmean || !z->mp) return 0;
    double lo, hi;
    er_ops_mp_set_d(z->mp, 1, s->g[AT(s, row, i)]);
    er_ops_mp_set_d(z->mp, 2, z->c0);
    er_ops_mp_mul(z->mp, 1, 1, 2);
    er_ops_mp_sub(z->mp, 1, 1, 0);
    er_ops_mp_get(z->mp, 1, &lo, &hi);
    return lo == 0 && hi == 0;
}

typedef struct sb_job {
    er_opres *r;
    sb_state *s;
    int of;
} sb_job;

static er_status lsb_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size);

static er_status sb_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    sb_job *j = (sb_job *)ctx;
    sb_state *s = j->s;
    er_opres *r = j->r, *f = s->fwd;
    int of = j->of;
    unsigned char *und = (unsigned char *)malloc((size_t)(s->len ? s->len : 1));
    if (!und) return msgf(msg, msg_size, ER_ENOMEM, "softmax.backward: out of memory");
    er_status st = ER_OK;
    for (int64_t row = r0; row < r1; row++) {
        double cl = 0, ch = 0;
        int bad = 0;
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            double pl, ph, g = s->g[e];
            if (!isfinite(g) || !isfinite(f->xlo[0][e]) || !isfinite(f->xhi[0][e])) bad = 1;
            mul_iv(f->xlo[0][e], f->xhi[0][e], g, g, &pl, &ph);
            cl = er_ops_add_dn(cl, pl);
            ch = er_ops_add_up(ch, ph);
        }
        int undecided = 0;
        sb_zero z = {0, 0, 0, NULL};
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            und[k] = 0;
            if (bad) {
                r->xlo[0][e] = r->xhi[0][e] = NAN;
                er_ops_store(&r->out[0], e, er_ops_round(of, NAN));
                continue;
            }
            double g = s->g[e], dl = er_ops_add_dn(g, -ch), dh = er_ops_add_up(g, -cl), l, h;
            uint64_t bits;
            mul_iv(f->xlo[0][e], f->xhi[0][e], dl, dh, &l, &h);
            r->xlo[0][e] = l;
            r->xhi[0][e] = h;
            if (er_ops_decide(of, l, h, &bits)) {
                er_ops_store(&r->out[0], e, bits);
            } else if (l <= 0 && h >= 0 && grad_is_zero(s, row, k, &z)) {
                r->xlo[0][e] = r->xhi[0][e] = 0;
                er_ops_store(&r->out[0], e, er_ops_round(of, 0.0));
            } else {
                und[k] = 1;
                undecided = 1;
            }
        }
        if (z.mp) er_ops_mp_free(z.mp);
        if (!undecided) continue;
        /* rising precision: m = max x, E_j = exp(x_j - m), S = sum E, y = E / S, c = sum g y */
        double m = -INFINITY;
        for (int64_t k = 0; k < s->len; k++) m = fmax(m, s->x[AT(s, row, k)]);
        for (int prec = 128;; prec *= 2) {
            er_ops_mp *mp = er_ops_mp_next("softmax.backward", "row", row, prec, 1 << 14, 6, &st, msg, msg_size);
            if (!mp) goto done;
            /* 0: m, 1: S, 2: c (unnormalized: sum g E), 3, 4, 5: scratch */
            er_ops_mp_set_d(mp, 0, m);
            er_ops_mp_set_d(mp, 1, 0);
            er_ops_mp_set_d(mp, 2, 0);
            for (int64_t k = 0; k < s->len; k++) {
                int64_t e = AT(s, row, k);
                er_ops_mp_set_d(mp, 3, s->x[e]);
                er_ops_mp_sub(mp, 3, 3, 0);
                er_ops_mp_exp(mp, 3, 3);
                er_ops_mp_add(mp, 1, 1, 3);
                er_ops_mp_set_d(mp, 4, s->g[e]);
                er_ops_mp_mul(mp, 4, 4, 3);
                er_ops_mp_add(mp, 2, 2, 4);
            }
            er_ops_mp_div(mp, 2, 2, 1); /* c */
            int left = 0;
            for (int64_t k = 0; k < s->len; k++) {
                if (!und[k]) continue;
                int64_t e = AT(s, row, k);
                er_ops_mp_set_d(mp, 3, s->x[e]);
                er_ops_mp_sub(mp, 3, 3, 0);
                er_ops_mp_exp(mp, 3, 3);
                er_ops_mp_div(mp, 3, 3, 1); /* y */
                er_ops_mp_set_d(mp, 4, s->g[e]);
                er_ops_mp_sub(mp, 4, 4, 2);
                er_ops_mp_mul(mp, 5, 3, 4);
                left |= er_ops_mp_settle(mp, 5, r, 0, e, &und[k]);
            }
            er_ops_mp_free(mp);
            if (!left) break;
        }
    }
done:
    free(und);
    return st;
}

/* log_softmax.backward's exact value: g_i - y_i G, G = sum g.  Zero exactly: g_i sum_j e^{x_j} = G e^{x_i};
 * grouped by the distinct values of x (Lindemann-Weierstrass, as above), every coefficient is 0 exactly
 * when g_i = 0 = G, or when every x_j equals x_i and N g_i = G. */
static er_status lsb_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    sb_job *j = (sb_job *)ctx;
    sb_state *s = j->s;
    er_opres *r = j->r, *f = s->fwd;
    int of = j->of;
    for (int64_t row = r0; row < r1; row++) {
        double G = 0, GA = 0, m = -INFINITY;
        int bad = 0, same = 1;
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            double g = s->g[e];
            if (!isfinite(g) || !isfinite(f->xlo[0][e]) || !isfinite(f->xhi[0][e])) bad = 1;
            G += g;
            GA = er_ops_add_up(GA, fabs(g));
            m = fmax(m, s->x[e]);
            if (s->x[e] != s->x[AT(s, row, 0)]) same = 0;
        }
        double N = (double)s->len, u64 = 0x1p-53, gg = er_b_up(N * u64), eG = er_ops_mul_up(er_ops_div_up(gg, 1 - gg), GA);
        double Gl = er_ops_add_dn(G, -eG), Gh = er_ops_add_up(G, eG);
        if (eG == 0) Gl = Gh = G;
        er_ops_mp *gz = NULL; /* the row's exact G */
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            if (bad) {
                r->xlo[0][e] = r->xhi[0][e] = NAN;
                er_ops_store(&r->out[0], e, er_ops_round(of, NAN));
                continue;
            }
            double g = s->g[e], yl, yh, pl, ph, l, h;
            uint64_t bits;
            er_ops_exp_iv(f->xlo[0][e], f->xhi[0][e], &yl, &yh);
            mul_iv(yl, yh, Gl, Gh, &pl, &ph);
            l = er_ops_add_dn(g, -ph);
            h = er_ops_add_up(g, -pl);
            r->xlo[0][e] = l;
            r->xhi[0][e] = h;
            if (er_ops_decide(of, l, h, &bits)) {
                er_ops_store(&r->out[0], e, bits);
                continue;
            }
            /* the exact sum G (2300 bits hold it), once per row, for the zero test */
            int zero = 0;
            {
                if (!gz) {
                    gz = er_ops_mp_new(2300, 3);
                    if (!gz) return msgf(msg, msg_size, ER_ENOMEM, "log_softmax.backward: out of memory");
                    er_ops_mp_set_d(gz, 0, 0);
                    for (int64_t q = 0; q < s->len; q++) {
                        er_ops_mp_set_d(gz, 1, s->g[AT(s, row, q)]);
                        er_ops_mp_add(gz, 0, 0, 1);
                    }
                }
                double a, b;
                er_ops_mp_get(gz, 0, &a, &b);
                int Gzero = a == 0 && b == 0;
                er_ops_mp_set_d(gz, 1, g);
                er_ops_mp_set_d(gz, 2, N);
                er_ops_mp_mul(gz, 1, 1, 2);
                er_ops_mp_sub(gz, 1, 1, 0);
                er_ops_mp_get(gz, 1, &a, &b);
                zero = (g == 0 && Gzero) || (same && a == 0 && b == 0);
            }
            if (zero) {
                r->xlo[0][e] = r->xhi[0][e] = 0;
                er_ops_store(&r->out[0], e, er_ops_round(of, 0.0));
                continue;
            }
            int done = 0;
            for (int prec = 128; prec <= (1 << 14) && !done; prec *= 2) {
                er_ops_mp *mp = er_ops_mp_new(prec, 5);
                if (!mp) {
                    if (gz) er_ops_mp_free(gz);
                    return msgf(msg, msg_size, ER_ENOMEM, "log_softmax.backward: out of memory");
                }
                /* 0: m, 1: S, 2: G, 3, 4: scratch */
                er_ops_mp_set_d(mp, 0, m);
                er_ops_mp_set_d(mp, 1, 0);
                er_ops_mp_set_d(mp, 2, 0);
                for (int64_t q = 0; q < s->len; q++) {
                    er_ops_mp_set_d(mp, 3, s->x[AT(s, row, q)]);
                    er_ops_mp_sub(mp, 3, 3, 0);
                    er_ops_mp_exp(mp, 3, 3);
                    er_ops_mp_add(mp, 1, 1, 3);
                    er_ops_mp_set_d(mp, 4, s->g[AT(s, row, q)]);
                    er_ops_mp_add(mp, 2, 2, 4);
                }
                er_ops_mp_set_d(mp, 3, s->x[e]);
                er_ops_mp_sub(mp, 3, 3, 0);
                er_ops_mp_exp(mp, 3, 3);
                er_ops_mp_div(mp, 3, 3, 1);
                er_ops_mp_mul(mp, 3, 3, 2);
                er_ops_mp_set_d(mp, 4, g);
                er_ops_mp_sub(mp, 4, 4, 3);
                if (er_ops_mp_store(mp, 4, r, 0, e)) {
                    done = 1;
                }
                er_ops_mp_free(mp);
            }
            if (!done) {
                if (gz) er_ops_mp_free(gz);
                return msgf(msg, msg_size, ER_EINVAL, "log_softmax.backward: the rounding of element %lld is not decided",
                            (long long)e);
            }
        }
        if (gz) er_ops_mp_free(gz);
    }
    return ER_OK;
}

static er_status sb_create_kind(er_opres *r, int lsm, char *msg, size_t msg_size);
static er_status sb_create(er_opres *r, char *msg, size_t msg_size) { return sb_create_kind(r, 0, msg, msg_size); }
static er_status lsb_create(er_opres *r, char *msg, size_t msg_size) { return sb_create_kind(r, 1, msg, msg_size); }

static er_status sb_create_kind(er_opres *r, int lsm, char *msg, size_t msg_size)
{
    er_status st;
    const er_optensor *x = &r->in[0], *g = &r->in[1];
    sb_state *s = (sb_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "softmax.backward: out of memory");
    r->state = s;
    s->lsm = lsm;
    const char *name = lsm ? "log_softmax.backward" : "softmax.backward";
    int dim, of, ff;
    if ((st = er_ops_opt_dim(r, "dim", -1, x->ndim, &dim, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_format(r, "out", x->format, &of, msg, msg_size)) != ER_OK) return st;
    /* the forward output's format (the y an implementation stored): default the input's */
    if ((st = er_ops_opt_format(r, "forward_out", x->format, &ff, msg, msg_size)) != ER_OK) return st;
    int same = g->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++) same = g->shape[d] == x->shape[d];
    if (!same) return msgf(msg, msg_size, ER_EINVAL, "%s: grad's shape is not the input's", name);
    char opt[96];
    snprintf(opt, sizeof opt, "dim=%d,out=%s", dim, er_format_name(ff));
    const er_optensor *fin[1] = {x};
    if ((st = er_op_call_nd(lsm ? "log_softmax" : "softmax", 1, fin, opt, &s->fwd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(x, &s->x, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(g, &s->g, msg, msg_size)) != ER_OK) return st;
    s->dim = dim;
    er_ops_split_dim(x, dim, &s->outer, &s->len, &s->inner);
    if ((st = er_ops_alloc_output(r, 0, of, x->ndim, x->shape, msg, msg_size)) != ER_OK) return st;
    sb_job j = {r, s, of};
    int64_t rows = s->outer * s->inner;
    if (rows == 0 || s->len == 0) return ER_OK;
    return er_ops_parallel(rows, 1 + 65536 / (s->len + 1), lsm ? lsb_exact_rows : sb_exact_rows, &j, msg, msg_size);
}

/* ---- the bounds ---- */

typedef struct sb_bjob {
    er_opres *r;
    sb_state *s;
    const er_openv *env;
    const er_bounds *fb;
    double *lo, *hi;
    unsigned char *fl;
    int out_is_compute;
} sb_bjob;

/* element e may hold any value, infinities and NaN included */
static void sb_unbounded(const sb_bjob *j, int64_t e)
{
    j->fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
    j->lo[e] = -INFINITY;
    j->hi[e] = INFINITY;
}

/* element e's enclosure [l, h]; beyond compute's largest finite value: unbounded */
static void sb_put(const sb_bjob *j, int64_t e, double l, double h)
{
    if (!(l >= -j->env->max_c && h <= j->env->max_c)) {
        sb_unbounded(j, e);
        return;
    }
    j->lo[e] = l;
    j->hi[e] = h;
}

static er_status sb_bound_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    sb_bjob *j = (sb_bjob *)ctx;
    sb_state *s = j->s;
    const er_openv *env = j->env;
    er_opres *f = s->fwd;
    const er_bounds *fb = j->fb;
    int ff = f->out[0].format;
    double u = env->u, eta = env->eta, N = (double)s->len;
    double g = er_b_up(N * u), gN = g < 0.5 ? er_ops_div_up(g, er_b_down(1 - g)) : INFINITY;
    size_t L = (size_t)(s->len ? s->len : 1);
    double *yl = (double *)malloc(2 * L * sizeof(double));
    if (!yl) return msgf(msg, msg_size, ER_ENOMEM, "softmax.backward: out of memory");
    double *yh = yl + L;
    for (int64_t row = r0; row < r1; row++) {
        int nob = gN == INFINITY;
        double cl = 0, ch = 0, T = 0;
        for (int64_t k = 0; k < s->len && !nob; k++) {
            int64_t e = AT(s, row, k);
            double lv, hv, gv = s->g[e];
            if (!fb->has_range[e] || fb->may_nan[e] || fb->may_pinf[e] || fb->may_ninf[e] || !isfinite(gv) ||
                !isfinite(fb->radius[e])) {
                nob = 1;
                break;
            }
            er_from_bits(ff, fb->low[e], &lv);
            er_from_bits(ff, fb->high[e], &hv);
            /* stored values, or the values kept in compute (within the radius of the exact y) */
            yl[k] = fmin(lv, er_ops_add_dn(f->xlo[0][e], -fb->radius[e]));
            yh[k] = fmax(hv, er_ops_add_up(f->xhi[0][e], fb->radius[e]));
            if (yl[k] < 0) yl[k] = 0;
            double pl, ph;
            mul_iv(yl[k], yh[k], gv, gv, &pl, &ph);
            cl = er_ops_add_dn(cl, pl);
            ch = er_ops_add_up(ch, ph);
            T = er_ops_add_up(T, mup(fabs(gv), yh[k]));
        }
        if (!nob) { /* any-order sum of the rounded products: gamma_N T, and N eta for underflow */
            double e = er_ops_add_up(mup(gN, T), er_b_up(2 * N * eta));
            cl = er_ops_add_dn(cl, -e);
            ch = er_ops_add_up(ch, e);
            er_ops_round_compute(env, &cl, &ch);
        }
        double cm = fmax(fabs(cl), fabs(ch));
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            if (nob) {
                sb_unbounded(j, e);
                continue;
            }
            double gv = s->g[e], dl = er_ops_add_dn(gv, -ch), dh = er_ops_add_up(gv, -cl), l, h;
            er_ops_round_compute(env, &dl, &dh); /* fl(g - c) */
            mul_iv(yl[k], yh[k], dl, dh, &l, &h);
            /* the other association y g - y c: each product rounded, then the difference */
            double a = er_ops_add_up(mup(er_b_up(2 * u), mup(yh[k], er_ops_add_up(fabs(gv), cm))), er_b_up(2 * eta));
            l = er_ops_add_dn(l, -a);
            h = er_ops_add_up(h, a);
            if (!j->out_is_compute) er_ops_round_compute(env, &l, &h);
            sb_put(j, e, l, h);
        }
    }
    free(yl);
    return ER_OK;
}

/* log_softmax.backward: y^ = exp(z^) within ulps for every z^ the log_softmax bounds allow (stored, or kept in
 * compute), G^ = any-order sum of g, then fl(y^ G^) and fl(g - .) */
static er_status lsb_bound_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    sb_bjob *j = (sb_bjob *)ctx;
    sb_state *s = j->s;
    const er_openv *env = j->env;
    er_opres *f = s->fwd;
    const er_bounds *fb = j->fb;
    int ff = f->out[0].format;
    double u = env->u, eta = env->eta, N = (double)s->len;
    double g = er_b_up((N - 1) * u), gN = g < 0.5 ? er_ops_div_up(g, er_b_down(1 - g)) : INFINITY;
    double ue = er_ops_ulps(env, "exp");
    (void)msg;
    (void)msg_size;
    for (int64_t row = r0; row < r1; row++) {
        int nob = gN == INFINITY;
        double Gl = 0, Gh = 0, GA = 0;
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            double gv = s->g[e];
            if (!fb->has_range[e] || fb->may_nan[e] || fb->may_pinf[e] || fb->may_ninf[e] || !isfinite(gv) ||
                !isfinite(fb->radius[e]))
                nob = 1;
            Gl = er_ops_add_dn(Gl, gv);
            Gh = er_ops_add_up(Gh, gv);
            GA = er_ops_add_up(GA, fabs(gv));
        }
        double eg = er_ops_mul_up(gN, GA);
        Gl = er_ops_add_dn(Gl, -eg);
        Gh = er_ops_add_up(Gh, eg);
        er_ops_round_compute(env, &Gl, &Gh);
        for (int64_t k = 0; k < s->len; k++) {
            int64_t e = AT(s, row, k);
            if (nob) {
                sb_unbounded(j, e);
                continue;
            }
            double lv, hv, zl, zh, yl, yh, pl, ph;
            er_from_bits(ff, fb->low[e], &lv);
            er_from_bits(ff, fb->high[e], &hv);
            zl = fmin(lv, er_ops_add_dn(f->xlo[0][e], -fb->radius[e]));
            zh = fmax(hv, er_ops_add_up(f->xhi[0][e], fb->radius[e]));
            er_ops_exp_iv(zl, zh, &yl, &yh);
            er_ops_lib_result(env, ue, &yl, &yh);
            if (yl < 0) yl = 0;
            mul_iv(yl, yh, Gl, Gh, &pl, &ph);
            pl = er_ops_add_dn(pl, -er_b_up(eta));
            ph = er_ops_add_up(ph, er_b_up(eta));
            er_ops_round_compute(env, &pl, &ph); /* fl(y^ G^) */
            double gv = s->g[e], l = er_ops_add_dn(gv, -ph), h = er_ops_add_up(gv, -pl);
            if (!j->out_is_compute) er_ops_round_compute(env, &l, &h);
            sb_put(j, e, l, h);
        }
    }
    return ER_OK;
}

static er_status sb_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                           char *msg, size_t msg_size)
{
    sb_state *s = (sb_state *)r->state;
    const er_bounds *fb;
    er_status st;
    (void)i;
    const char *name = s->lsm ? "log_softmax.backward" : "softmax.backward";
    if (env->ftz) return msgf(msg, msg_size, ER_EUNSUPPORTED, "%s: flush_to_zero is not supported yet", name);
    er_format_info ci, fi;
    er_format_get_info(env->compute, &ci);
    for (int k = 0; k < 2; k++) {
        er_format_get_info(r->in[k].format, &fi);
        if (fi.significand_bits > ci.significand_bits || fi.emax > ci.emax || fi.emin < ci.emin)
            return msgf(msg, msg_size, ER_EINVAL, "%s: compute %s cannot hold every value of the %s (%s)", name,
                        ci.name, r->def->input_names[k], fi.name);
    }
    if ((st = er_opres_bounds(s->fwd, 0, env->o, &fb, msg, msg_size)) != ER_OK) return st;
    sb_bjob j = {r, s, env, fb, lo, hi, flags, env->compute == r->out[0].format};
    int64_t rows = s->outer * s->inner;
    if (rows == 0 || s->len == 0) return ER_OK;
    return er_ops_parallel(rows, 1 + 65536 / (s->len + 1), s->lsm ? lsb_bound_rows : sb_bound_rows, &j, msg,
                           msg_size);
}

const er_opdef er_opdef_softmax_backward = {
    "softmax.backward", 2, 2, sb_inputs, 1, sb_outputs, sb_boundaries,
    (int)(sizeof sb_boundaries / sizeof sb_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    sb_create, sb_bounds, sb_free, er_opn_softmax_backward,
};

static const er_boundary lsb_boundaries[] = {
    {"forward", "cast", "the forward output z as log_softmax's bounds allow it (stored, or kept in compute)",
     "each element"},
    {"exp", "library", "exp(z) within ulps of compute", "each element"},
    {"sum", "accumulate", "the sum of grad over the row in compute (any order)", "each row"},
    {"grad_input", "compute", "grad - exp(z) sum, the product and the difference rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

const er_opdef er_opdef_log_softmax_backward = {
    "log_softmax.backward", 2, 2, sb_inputs, 1, sb_outputs, lsb_boundaries,
    (int)(sizeof lsb_boundaries / sizeof lsb_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    lsb_create, sb_bounds, sb_free, er_opn_softmax_backward,
};
