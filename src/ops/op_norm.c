/* op_norm.c: layer_norm(input, weight?, bias?) and rms_norm(input, weight?): the exact value rounded once
 * and per-element bounds under normal (two passes, any summation order) and any_order (one or two
 * passes); proof: docs/proofs/norms.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/formats.h"
#include "../host/er_msg.h"
#include "op_impl.h"

#define msgf er_msgf

enum { NM_LAYER = 0, NM_RMS = 1 };

static const char *const ln_inputs[] = {"input", "weight", "bias"};
static const char *const rms_inputs[] = {"input", "weight"};
static const char *const nm_outputs[] = {"out"};
static const er_boundary ln_boundaries[] = {
    {"mean", "accumulate", "the sum of the row in compute (any order), divided by N", "each row"},
    {"variance", "accumulate", "the sum of the squared differences from the computed mean (two passes; "
                               "any_order: or the mean of the squares minus the squared mean)", "each row"},
    {"rstd", "library", "1/sqrt(var + eps): rsqrt within ulps, or sqrt then a division", "each row"},
    {"affine", "compute", "(x - mean) * rstd * weight + bias, each operation rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary rms_boundaries[] = {
    {"mean_square", "accumulate", "the sum of the squares in compute (any order), divided by N", "each row"},
    {"rstd", "library", "1/sqrt(ms + eps): rsqrt within ulps, or sqrt then a division", "each row"},
    {"scale", "compute", "x * rstd * weight, each product rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

typedef struct nm_state {
    int kind, backward;
    double *x, *w, *b; /* the inputs' values, row-major; w and b NULL when absent */
    double *g;         /* backward: the output gradient */
    int wfmt, bfmt;    /* backward: the formats of grad_weight and grad_bias */
    int nd;            /* the number of normalized dimensions */
    int64_t rows, n;
    double eps;
    int in_fmt[3];
    /* per row, certified: the exact mean [mu_lo, mu_hi]; N var (layer_norm) or sum x^2 (rms_norm)
     * [nv_lo, nv_hi]; sum x^2 [sq_lo, sq_hi]; A >= sum |x|; bad: a NaN or an infinity in the row */
    double *mu_lo, *mu_hi, *nv_lo, *nv_hi, *sq_lo, *sq_hi, *A;
    unsigned char *bad;
} nm_state;

ER_OPS_STATE_FREE(nm_free, nm_state, s->x, s->w, s->b, s->g, s->mu_lo, s->mu_hi,
                  s->nv_lo, s->nv_hi, s->sq_lo, s->sq_hi, s->A, s->bad)

/* ---- outward interval arithmetic that keeps exact zeros exact ---- */
/* RN then one binary64 step outward (op_util.c's er_ops_* inlined: the per-element loops call them often) */
ER_FN double add_dn_(double a, double b) { return er_b_down(a + b); }
ER_FN double add_up_(double a, double b) { return er_b_up(a + b); }
ER_FN double mul_dn_(double a, double b) { return er_b_down(a * b); }
ER_FN double mul_up_(double a, double b) { return er_b_up(a * b); }
ER_FN double div_dn_(double a, double b) { return er_b_down(a / b); }
ER_FN double div_up_(double a, double b) { return er_b_up(a / b); }
ER_FN double mdn(double a, double b) { return (a == 0 || b == 0) ? 0.0 : mul_dn_(a, b); }
ER_FN double mup(double a, double b) { return (a == 0 || b == 0) ? 0.0 : mul_up_(a, b); }
ER_FN double adn(double a, double b) { return b == 0 ? a : (a == 0 ? b : add_dn_(a, b)); }
ER_FN double aup(double a, double b) { return b == 0 ? a : (a == 0 ? b : add_up_(a, b)); }

/* [l, h] * [pl, ph] with pl >= 0 (a nonnegative factor) */
ER_FN void mul_pos(double *l, double *h, double pl, double ph)
{
    double a = *l, b = *h;
    *l = a >= 0 ? mdn(a, pl) : mdn(a, ph);
    *h = b >= 0 ? mup(b, ph) : mup(b, pl);
}

/* [l, h] * w (any sign) */
ER_FN void mul_scalar(double *l, double *h, double w)
{
    double a = *l, b = *h;
    if (w >= 0) {
        *l = mdn(a, w);
        *h = mup(b, w);
    } else {
        *l = mdn(b, w);
        *h = mup(a, w);
    }
}

/* gamma_k = k u / (1 - k u), rounded up; +inf when k u >= 1/2 */
static double gam(double k, double u)
{
    double g = er_b_up(k * u);
    if (!(g < 0.5)) return INFINITY;
    return div_up_(g, er_b_down(1 - g));
}

/* 1/sqrt over [vl, vh] (vl >= 0), outward */
static void rsqrt_iv(double vl, double vh, double *rl, double *rh)
{
    *rl = vh == INFINITY ? 0 : div_dn_(1.0, er_b_up(sqrt(vh)));
    *rh = vl <= 0 ? INFINITY : div_up_(1.0, er_b_down(sqrt(vl)));
    if (*rl < 0) *rl = 0;
}

/* ---- the exact value ---- */

/* The row's certified quantities (docs/proofs/norms.md, "The exact enclosure"). */
static void row_stats(nm_state *s, int64_t row)
{
    const double *x = s->x + row * s->n;
    int64_t n = s->n;
    double A = 0, S = 0, Q2 = 0;
    unsigned char bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i];
        if (!isfinite(v)) bad = 1;
        A = add_up_(A, fabs(v));
        S += v;
        Q2 += v * v;
    }
    s->bad[row] = bad;
    if (bad) return;
    double u64 = 0x1p-53, tiny = (double)n * 0x1p-1074;
    double e = aup(mup(gam((double)n, u64), A), tiny);
    s->A[row] = A;
    s->mu_lo[row] = div_dn_(add_dn_(S, -e), (double)n);
    s->mu_hi[row] = div_up_(add_up_(S, e), (double)n);
    double g2 = gam((double)n + 1, u64);
    s->sq_lo[row] = add_dn_(mdn(Q2, er_b_down(1 - g2)), -tiny);
    s->sq_hi[row] = aup(mup(Q2, er_b_up(1 + g2)), tiny);
    if (s->sq_lo[row] < 0) s->sq_lo[row] = 0;
    if (s->kind == NM_RMS) {
        s->nv_lo[row] = s->sq_lo[row];
        s->nv_hi[row] = s->sq_hi[row];
        return;
    }
    /* sum (x - m)^2 = N var + N (m - mu)^2 for every m (proof, (1)), with m = c the binary64 mean */
    double c = S / (double)n, Qc = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = x[i] - c;
        Qc += d * d;
    }
    double g3 = gam((double)n + 2, u64);
    double D = fmax(er_b_up(c - s->mu_lo[row]), er_b_up(s->mu_hi[row] - c));
    double lo = add_dn_(mdn(Qc, er_b_down(1 - g3)), -aup(mup(mup(D, D), (double)n), tiny));
    s->nv_lo[row] = lo > 0 ? lo : 0;
    s->nv_hi[row] = aup(mup(Qc, er_b_up(1 + g3)), tiny);
}

typedef struct nm_job {
    er_opres *r;
    nm_state *s;
    int of;
} nm_job;

static double wv(const nm_state *s, int64_t i) { return s->w ? s->w[i] : 1.0; }
static double bv(const nm_state *s, int64_t i) { return s->b ? s->b[i] : 0.0; }

/* 1 when x_i equals the row's exact mean (N x_i == sum x, decided exactly: MPFR at a precision that
 * holds every sum of binary64 values of the row exactly); *cache holds the row's exact sum (built at the
 * first call of a row, freed by the caller) */
static int equals_mean(const nm_state *s, int64_t row, int64_t i, er_ops_mp **cache)
{
    const double *x = s->x + row * s->n;
    if (!*cache) {
        er_ops_mp *mp = er_ops_mp_new(2300, 3);
        if (!mp) return 0;
        er_ops_mp_set_d(mp, 0, 0);
        for (int64_t j = 0; j < s->n; j++) {
            er_ops_mp_set_d(mp, 1, x[j]);
            er_ops_mp_add(mp, 0, 0, 1);
        }
        *cache = mp;
    }
    er_ops_mp *mp = *cache;
    er_ops_mp_set_d(mp, 1, x[i]);
    er_ops_mp_set_d(mp, 2, (double)s->n);
    er_ops_mp_mul(mp, 1, 1, 2);
    er_ops_mp_sub(mp, 1, 0, 1);
    double lo, hi;
    er_ops_mp_get(mp, 1, &lo, &hi);
    return lo == 0 && hi == 0;
}

/* A row's mean (layer norm; 0 for rms norm) into register mu and 1/sqrt(mean((x - mu)^2) + eps) into rstd, in
 * the MPFR intervals of mp; register nreg holds n; t1 and t2 are scratch (they may be the same register). */
static void mp_row_stats(const nm_state *s, const double *x, er_ops_mp *mp, int mu, int rstd, int t1, int t2, int nreg)
{
    er_ops_mp_set_d(mp, mu, 0);
    if (s->kind == NM_LAYER) {
        for (int64_t j = 0; j < s->n; j++) {
            er_ops_mp_set_d(mp, t1, x[j]);
            er_ops_mp_add(mp, mu, mu, t1);
        }
        er_ops_mp_div(mp, mu, mu, nreg);
    }
    er_ops_mp_set_d(mp, rstd, 0);
    for (int64_t j = 0; j < s->n; j++) {
        er_ops_mp_set_d(mp, t1, x[j]);
        er_ops_mp_sub(mp, t1, t1, mu);
        er_ops_mp_mul(mp, t2, t1, t1);
        er_ops_mp_add(mp, rstd, rstd, t2);
    }
    er_ops_mp_div(mp, rstd, rstd, nreg);
    er_ops_mp_set_d(mp, t1, s->eps);
    er_ops_mp_add(mp, rstd, rstd, t1);
    er_ops_mp_log(mp, rstd, rstd);
    er_ops_mp_set_d(mp, t1, -0.5);
    er_ops_mp_mul(mp, rstd, rstd, t1);
    er_ops_mp_exp(mp, rstd, rstd);
}

static er_status nm_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    nm_job *j = (nm_job *)ctx;
    nm_state *s = j->s;
    er_opres *r = j->r;
    int of = j->of;
    const char *name = r->def->name;
    unsigned char *und = (unsigned char *)malloc((size_t)(s->n ? s->n : 1));
    if (!und) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
    er_status st = ER_OK;
    for (int64_t row = r0; row < r1; row++) {
        row_stats(s, row);
        const double *x = s->x + row * s->n;
        int64_t base = row * s->n;
        int undecided = 0;
        er_ops_mp *cache = NULL;
        if (s->bad[row]) {
            for (int64_t i = 0; i < s->n; i++) {
                r->xlo[0][base + i] = r->xhi[0][base + i] = NAN;
                er_ops_store_inl(&r->out[0], base + i, er_ops_round(of, NAN));
            }
            continue;
        }
        double vl = adn(div_dn_(s->nv_lo[row], (double)s->n), s->eps);
        double vh = aup(div_up_(s->nv_hi[row], (double)s->n), s->eps);
        double rl, rh;
        rsqrt_iv(vl, vh, &rl, &rh);
        for (int64_t i = 0; i < s->n; i++) {
            double l, h;
            if (s->kind == NM_LAYER) {
                l = add_dn_(x[i], -s->mu_hi[row]);
                h = add_up_(x[i], -s->mu_lo[row]);
            } else {
                l = h = x[i];
            }
            mul_pos(&l, &h, rl, rh);
            if (s->w) mul_scalar(&l, &h, s->w[i]);
            if (s->b) {
                l = adn(l, s->b[i]);
                h = aup(h, s->b[i]);
            }
            uint64_t bits;
            r->xlo[0][base + i] = l;
            r->xhi[0][base + i] = h;
            und[i] = 0;
            if (isfinite(l) && isfinite(h) && er_ops_decide_inl(of, l, h, &bits)) {
                er_ops_store_inl(&r->out[0], base + i, bits);
            } else if (s->kind == NM_LAYER && rh < INFINITY && x[i] >= s->mu_lo[row] && x[i] <= s->mu_hi[row] &&
                       equals_mean(s, row, i, &cache)) {
                /* x_i - mu = 0 exactly: y = bias (+0 for a zero bias) */
                double y = bv(s, i) + 0.0;
                r->xlo[0][base + i] = r->xhi[0][base + i] = y;
                er_ops_store_inl(&r->out[0], base + i, er_ops_round(of, y));
            } else {
                und[i] = 1;
                undecided = 1;
            }
        }
        if (cache) er_ops_mp_free(cache);
        if (!undecided) continue;
        /* rising precision (MPFR intervals): mu, var (or the mean square), rstd = exp(-log(v)/2), y */
        for (int prec = 128;; prec *= 2) {
            er_ops_mp *mp = er_ops_mp_next(name, "row", row, prec, 1 << 16, 5, &st, msg, msg_size);
            if (!mp) goto done;
            /* 0: mu, 1: rstd, 2, 3, 4: scratch */
            er_ops_mp_set_d(mp, 4, (double)s->n);
            mp_row_stats(s, x, mp, 0, 1, 2, 3, 4);
            int left = 0;
            for (int64_t i = 0; i < s->n; i++) {
                if (!und[i]) continue;
                er_ops_mp_set_d(mp, 2, x[i]);
                er_ops_mp_sub(mp, 2, 2, 0);
                er_ops_mp_mul(mp, 2, 2, 1);
                er_ops_mp_set_d(mp, 3, wv(s, i));
                er_ops_mp_mul(mp, 2, 2, 3);
                er_ops_mp_set_d(mp, 3, bv(s, i));
                er_ops_mp_add(mp, 2, 2, 3);
                left |= er_ops_mp_settle(mp, 2, r, 0, base + i, &und[i]);
            }
            er_ops_mp_free(mp);
            if (!left) break;
        }
    }
done:
    free(und);
    return st;
}

/* normalized_shape: "8x16" (or "64"); the input's last dimensions must be it */
static er_status parse_shape(er_opres *r, const er_optensor *x, int64_t *n, int *nd, char *msg, size_t msg_size)
{
    const char *name = r->def->name, *t = er_ops_opt(r, "normalized_shape");
    int64_t dims[ER_OP_MAXDIM];
    int k = 0;
    if (!t || !*t) {
        if (x->ndim < 1) return msgf(msg, msg_size, ER_EINVAL, "%s: the input is a scalar: nothing to normalize", name);
        dims[k++] = x->shape[x->ndim - 1];
    } else {
        const char *p = t;
        while (*p) {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p || v < 1 || k == ER_OP_MAXDIM || (*end && *end != 'x'))
                return msgf(msg, msg_size, ER_EINVAL,
                            "%s: normalized_shape '%s' is not positive dimensions separated by 'x' (8x16)", name, t);
            dims[k++] = (int64_t)v;
            p = *end ? end + 1 : end;
        }
    }
    if (k > x->ndim)
        return msgf(msg, msg_size, ER_EINVAL, "%s: normalized_shape has %d dimensions, the input only %d", name, k,
                    x->ndim);
    int64_t c = 1;
    for (int d = 0; d < k; d++) {
        if (x->shape[x->ndim - k + d] != dims[d])
            return msgf(msg, msg_size, ER_EINVAL,
                        "%s: normalized_shape dimension %d is %lld but the input's dimension %d is %lld", name, d,
                        (long long)dims[d], x->ndim - k + d, (long long)x->shape[x->ndim - k + d]);
        c *= dims[d];
    }
    *n = c;
    *nd = k;
    return ER_OK;
}

static er_status check_affine(er_opres *r, int idx, const char *what, int nd, char *msg, size_t msg_size)
{
    const er_optensor *x = &r->in[0], *t = &r->in[idx];
    const char *name = r->def->name;
    if (t->ndim != nd)
        return msgf(msg, msg_size, ER_EINVAL, "%s: %s has %d dimensions; normalized_shape has %d", name, what, t->ndim,
                    nd);
    for (int d = 0; d < nd; d++)
        if (t->shape[d] != x->shape[x->ndim - nd + d])
            return msgf(msg, msg_size, ER_EINVAL, "%s: %s's dimension %d is %lld, normalized_shape's is %lld", name, what,
                        d, (long long)t->shape[d], (long long)x->shape[x->ndim - nd + d]);
    return ER_OK;
}

static er_status nb_create_rest(er_opres *r, nm_state *s, int of, char *msg, size_t msg_size);
static er_status nm_bound_rows(er_opres *r, int oi, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                               er_ops_scratch *sc, double *lo, double *hi, unsigned char *fl, char *msg,
                               size_t msg_size);

/*
 * The inputs: forward [input, weight?, bias?]; backward the same with the gradient last: the gradient
 * is the last input given, weight (index 1) and bias (index 2, layer_norm) the others present.
 */
static er_status nm_create_kind(er_opres *r, int kind, int backward, char *msg, size_t msg_size)
{
    er_status st;
    const er_optensor *x = &r->in[0];
    const char *name = r->def->name;
    nm_state *s = (nm_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
    r->state = s;
    r->takes_from = !backward; /* the forward's bounds read input 0's slack (nm_bound_rows) */
    s->kind = kind;
    s->backward = backward;
    int gi = -1, wi = -1, bi = -1;
    for (int k = 0; k < r->ninputs; k++) {
        if (!r->has_in[k]) continue;
        er_format_info fi;
        if (er_format_get_info(r->in[k].format, &fi) != ER_OK || fi.kind != ER_KIND_FLOAT || !fi.has_zero ||
            !fi.is_signed)
            return msgf(msg, msg_size, ER_EINVAL, "%s: input %d is %s, not a signed float format", name, k,
                        er_format_name(r->in[k].format) ? er_format_name(r->in[k].format) : "?");
        if (backward && k > 0) gi = k;
    }
    if (backward && gi < 0) return msgf(msg, msg_size, ER_EINVAL, "%s: no gradient (the last input)", name);
    if (r->ninputs > 1 && r->has_in[1] && gi != 1) wi = 1;
    if (kind == NM_LAYER && r->ninputs > 2 && r->has_in[2] && gi != 2) bi = 2;
    s->in_fmt[0] = x->format;
    s->in_fmt[1] = wi >= 0 ? r->in[wi].format : x->format;
    s->in_fmt[2] = bi >= 0 ? r->in[bi].format : x->format;
    int64_t n = 0;
    int nd = 0, of;
    if ((st = parse_shape(r, x, &n, &nd, msg, msg_size)) != ER_OK) return st;
    if (wi >= 0 && (st = check_affine(r, wi, "weight", nd, msg, msg_size)) != ER_OK) return st;
    if (bi >= 0 && (st = check_affine(r, bi, "bias", nd, msg, msg_size)) != ER_OK) return st;
    if (gi >= 0) {
        int same = r->in[gi].ndim == x->ndim;
        for (int d = 0; same && d < x->ndim; d++) same = r->in[gi].shape[d] == x->shape[d];
        if (!same) return msgf(msg, msg_size, ER_EINVAL, "%s: the gradient's shape is not the input's", name);
    }
    double def_eps = 1e-5;
    if (kind == NM_RMS) { /* torch: finfo(input dtype).eps */
        er_format_info fi;
        er_format_get_info(x->format, &fi);
        def_eps = ldexp(1.0, -fi.significand_bits);
    }
    if ((st = er_ops_opt_double(r, "eps", def_eps, &s->eps, msg, msg_size)) != ER_OK) return st;
    if (!(s->eps >= 0) || !isfinite(s->eps))
        return msgf(msg, msg_size, ER_EINVAL, "%s: eps=%g is not a finite value >= 0", name, s->eps);
    if ((st = er_ops_opt_format(r, "out", x->format, &of, msg, msg_size)) != ER_OK) return st;
    er_format_info oi;
    if (er_format_get_info(of, &oi) != ER_OK || oi.kind != ER_KIND_FLOAT || !oi.is_signed)
        return msgf(msg, msg_size, ER_EINVAL, "%s: out=%s is not a signed float format", name,
                    er_format_name(of) ? er_format_name(of) : "?");
    if ((st = er_ops_values(x, &s->x, msg, msg_size)) != ER_OK) return st;
    if (wi >= 0 && (st = er_ops_values(&r->in[wi], &s->w, msg, msg_size)) != ER_OK) return st;
    if (bi >= 0 && (st = er_ops_values(&r->in[bi], &s->b, msg, msg_size)) != ER_OK) return st;
    if (gi >= 0 && (st = er_ops_values(&r->in[gi], &s->g, msg, msg_size)) != ER_OK) return st;
    s->nd = nd;
    s->wfmt = wi >= 0 ? r->in[wi].format : x->format;
    s->bfmt = bi >= 0 ? r->in[bi].format : x->format;
    int64_t count = er_optensor_count(x);
    s->n = n;
    s->rows = n ? count / n : 0;
    size_t R = (size_t)(s->rows ? s->rows : 1);
    s->mu_lo = (double *)malloc(R * sizeof(double));
    s->mu_hi = (double *)malloc(R * sizeof(double));
    s->nv_lo = (double *)malloc(R * sizeof(double));
    s->nv_hi = (double *)malloc(R * sizeof(double));
    s->sq_lo = (double *)malloc(R * sizeof(double));
    s->sq_hi = (double *)malloc(R * sizeof(double));
    s->A = (double *)malloc(R * sizeof(double));
    s->bad = (unsigned char *)calloc(R, 1);
    if (!s->mu_lo || !s->mu_hi || !s->nv_lo || !s->nv_hi || !s->sq_lo || !s->sq_hi || !s->A || !s->bad)
        return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory for %lld rows", name, (long long)s->rows);
    if ((st = er_ops_alloc_output(r, 0, of, x->ndim, x->shape, msg, msg_size)) != ER_OK) return st;
    if (backward) return nb_create_rest(r, s, of, msg, msg_size);
    if (s->rows == 0 || n == 0) return ER_OK;
    r->bounds_rows = nm_bound_rows; /* rows are contiguous: the check's fused path (opres.c) */
    r->range_unit[0] = n;
    nm_job j = {r, s, of};
    return er_ops_parallel(s->rows, 1 + 65536 / (n + 1), nm_exact_rows, &j, msg, msg_size);
}

static er_status ln_create(er_opres *r, char *msg, size_t msg_size) { return nm_create_kind(r, NM_LAYER, 0, msg, msg_size); }
static er_status rms_create(er_opres *r, char *msg, size_t msg_size) { return nm_create_kind(r, NM_RMS, 0, msg, msg_size); }

/* ---- the bounds (docs/proofs/norms.md) ---- */


/* one rounding to nearest in compute of every value in [l, h]: [RN(l), RN(h)] (monotone) */
ER_FN void rnd(const er_openv *env, double *l, double *h)
{
    if (env->compute == ER_FMT_F32 && !env->ftz) { /* the conversion to float rounds to nearest even, once */
        *l = (double)(float)*l;
        *h = (double)(float)*h;
    } else if (env->compute != ER_FMT_F64 || env->ftz) {
        er_ops_round_compute(env, l, h);
    }
}

/* [l, h] * [1 - g, 1 + g] +- a (a nonnegative relative factor and an absolute error) */
ER_FN void widen(double *l, double *h, double g, double a)
{
    *l = add_dn_(mdn(*l, *l >= 0 ? er_b_down(1 - g) : er_b_up(1 + g)), -a);
    *h = add_up_(mup(*h, *h >= 0 ? er_b_up(1 + g) : er_b_down(1 - g)), a);
}

/*
 * The row's computed mean m^ in [*ml, *mh] (layer_norm) and rstd r^ in [*rl, *rh] over every admitted
 * implementation (docs/proofs/norms.md (2), (3)); 0 where no bound holds (a gamma beyond 1/2, an
 * overflow, a non-finite row).
 */
/*
 * Results as inputs (docs/proofs/norms.md, "Results as inputs"): the row's stored values x' = x + delta,
 * |delta_j| <= sk[j].  The row's certified quantities widened to hold every such x': the mean by
 * sum sk / N, A by sum sk, and sqrt(N var), sqrt(sum x^2) by ||sk||_2 (centring is a projection, so
 * ||P x' - P x|| <= ||delta||).  0 where a slack is infinite (no bound for the row).
 */
static int slack_stats(const double *sk, int64_t n, double *mu_lo, double *mu_hi, double *A, double *nv_lo,
                       double *nv_hi, double *sq_lo, double *sq_hi)
{
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < n; j++) {
        if (!(sk[j] < INFINITY)) return 0;
        s1 = aup(s1, sk[j]);
        s2 = aup(s2, mup(sk[j], sk[j]));
    }
    double r2 = er_b_up(sqrt(s2)), m = div_up_(s1, (double)n);
    *mu_lo = adn(*mu_lo, -m);
    *mu_hi = aup(*mu_hi, m);
    *A = aup(*A, s1);
    double *lo[2] = {nv_lo, sq_lo}, *hi[2] = {nv_hi, sq_hi};
    for (int k = 0; k < 2; k++) {
        double l = er_b_down(er_b_down(sqrt(*lo[k])) - r2), h = aup(er_b_up(sqrt(*hi[k])), r2);
        *lo[k] = l > 0 ? mdn(l, l) : 0;
        *hi[k] = mup(h, h);
    }
    return 1;
}

static int row_impl(const nm_state *s, const er_openv *env, int64_t row, double *pml, double *pmh, double *prl,
                    double *prh, const double *sk)
{
    int any = env->o->standard.kind == ER_STD_ANY_ORDER;
    double u = env->u, eta = env->eta, N = (double)s->n;
    /* rsqrt within U ulps, or sqrt then a reciprocal (relative 2u/(1 - u) <= (1 + 2u) ulps of 2u|v|) */
    double U = fmax(er_ops_ulps(env, "rsqrt"), er_b_up(1 + 2 * u));
    double gN1 = gam(N - 1, u), gN = gam(N, u), gN2 = gam(N + 2, u), g2 = gam(2, u);
    double aN = er_b_up(2 * N * eta);
    double ml = 0, mh = 0, vl = 0, vh = 0, rl = 0, rh = 0;
    if (s->bad[row] || gN2 == INFINITY) return 0;
    double mu_lo = s->mu_lo[row], mu_hi = s->mu_hi[row], A = s->A[row], nv_lo = s->nv_lo[row], nv_hi = s->nv_hi[row];
    double sq_lo = s->sq_lo[row], sq_hi = s->sq_hi[row];
    if (sk && !slack_stats(sk, s->n, &mu_lo, &mu_hi, &A, &nv_lo, &nv_hi, &sq_lo, &sq_hi)) return 0;
    if (sk && s->kind == NM_RMS) nv_lo = sq_lo, nv_hi = sq_hi;
    /* the computed mean m^: any-order sum, then a division (or a product with fl(1/N)) */
    if (s->kind == NM_LAYER) {
        double e = mup(gN1, A);
        ml = add_dn_(mdn(mu_lo, N), -e);
        mh = add_up_(mup(mu_hi, N), e);
        ml = div_dn_(ml, N);
        mh = div_up_(mh, N);
        widen(&ml, &mh, g2, er_b_up(2 * eta));
        /* two passes: Q^ from Q_m in [N var, N var + N D^2] (proof (1), (2)) */
        double D = fmax(er_b_up(mh - mu_lo), er_b_up(mu_hi - ml));
        double ql = nv_lo, qh = aup(nv_hi, mup(N, mup(D, D)));
        ql = add_dn_(mdn(ql, er_b_down(1 - (N + 2) * u)), -aN);
        qh = add_up_(mup(qh, er_b_up(1 + gN2)), aN);
        if (ql < 0) ql = 0;
        vl = div_dn_(ql, N);
        vh = div_up_(qh, N);
        widen(&vl, &vh, g2, er_b_up(2 * eta));
        if (vl < 0) vl = 0;
        if (any) {
            /* one pass: fl(fl(Q2^/N) - fl(m^ m^)), clamped at 0 */
            double sl = add_dn_(mdn(sq_lo, er_b_down(1 - N * u)), -aN);
            double sh = add_up_(mup(sq_hi, er_b_up(1 + gN)), aN);
            if (sl < 0) sl = 0;
            sl = div_dn_(sl, N);
            sh = div_up_(sh, N);
            widen(&sl, &sh, g2, er_b_up(2 * eta));
            double m2l = (ml <= 0 && mh >= 0) ? 0 : fmin(mdn(ml, ml), mdn(mh, mh));
            double m2h = fmax(mup(ml, ml), mup(mh, mh));
            widen(&m2l, &m2h, u, eta);
            double l1 = add_dn_(sl, -m2h), h1 = add_up_(sh, -m2l);
            widen(&l1, &h1, u, eta);
            if (l1 < 0) l1 = 0;
            if (h1 < 0) h1 = 0;
            if (l1 < vl) vl = l1;
            if (h1 > vh) vh = h1;
        }
    } else {
        double ql = add_dn_(mdn(sq_lo, er_b_down(1 - N * u)), -aN);
        double qh = add_up_(mup(sq_hi, er_b_up(1 + gN)), aN);
        if (ql < 0) ql = 0;
        vl = div_dn_(ql, N);
        vh = div_up_(qh, N);
        widen(&vl, &vh, g2, er_b_up(2 * eta));
        if (vl < 0) vl = 0;
    }
    /* + fl(eps), rounded */
    double el = s->eps, eh = s->eps;
    rnd(env, &el, &eh);
    vl = adn(vl, fmin(el, s->eps));
    vh = aup(vh, fmax(eh, s->eps));
    rnd(env, &vl, &vh);
    rsqrt_iv(vl, vh, &rl, &rh);
    er_ops_lib_result(env, U, &rl, &rh);
    if (rl < 0) rl = 0;
    *pml = ml;
    *pmh = mh;
    *prl = rl;
    *prh = rh;
    return !(!(rh <= env->max_c) || !(vh <= env->max_c));
}

static er_status nm_bounds_ok(er_opres *r, const er_openv *env, char *msg, size_t msg_size);

/* the bounds of rows [r0, r1) (er_ops_rows_fn) */
static er_status nm_bound_rows(er_opres *r, int oi, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                               er_ops_scratch *sc, double *lo, double *hi, unsigned char *fl, char *msg,
                               size_t msg_size)
{
    nm_state *s = (nm_state *)r->state;
    double u = env->u, eta = env->eta;
    double g4 = gam(4, u);
    int out_is_compute = env->compute == r->out[0].format;
    er_status st;
    (void)oi;
    (void)sc;
    if ((st = nm_bounds_ok(r, env, msg, msg_size)) != ER_OK) return st;
    for (int64_t row = r0; row < r1; row++) {
        int64_t base = row * s->n;
        const double *x = s->x + base;
        double ml = 0, mh = 0, rl = 0, rh = 0;
        const double *sk = r->slack[0] ? r->slack[0] + base : NULL; /* results as inputs */
        int nobound = !row_impl(s, env, row, &ml, &mh, &rl, &rh, sk);
        for (int64_t i = 0; i < s->n; i++) {
            int64_t e = base + i - off;
            if (s->bad[row]) {
                fl[e] = ER_OPB_NONFINITE;
                lo[e] = hi[e] = NAN;
                continue;
            }
            if (nobound) {
                fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
                lo[e] = -INFINITY;
                hi[e] = INFINITY;
                continue;
            }
            double l, h, xl = sk ? adn(x[i], -sk[i]) : x[i], xh = sk ? aup(x[i], sk[i]) : x[i];
            if (s->kind == NM_LAYER) { /* d^ = fl(x - m^) */
                l = add_dn_(xl, -mh);
                h = add_up_(xh, -ml);
                rnd(env, &l, &h);
            } else {
                l = xl;
                h = xh;
            }
            mul_pos(&l, &h, rl, rh); /* fl(d^ r^) */
            rnd(env, &l, &h);
            double w = wv(s, i), b = bv(s, i);
            if (s->w) { /* fl(. w) */
                mul_scalar(&l, &h, w);
                rnd(env, &l, &h);
                /* another association (d^ fl(r^ w), ...): within (1 +- u)^2 of the exact product, whose
                 * rounded ends above may lie (1 +- u)^2 the other way: gamma_4 and the underflows */
                widen(&l, &h, g4, er_b_up(2 * eta * (1 + fabs(w))));
            }
            if (s->b) { /* + b: rounded to compute unless this is the final rounding */
                l = adn(l, b);
                h = aup(h, b);
                if (!out_is_compute) rnd(env, &l, &h);
            }
            er_ops_put_bound(fl, lo, hi, e, l, h, env->max_c);
        }
    }
    return ER_OK;
}

/* the options' refusals of the forward's bounds */
static er_status nm_bounds_ok(er_opres *r, const er_openv *env, char *msg, size_t msg_size)
{
    const char *name = r->def->name;
    if (env->ftz) return msgf(msg, msg_size, ER_EUNSUPPORTED, "%s: flush_to_zero is not supported yet", name);
    er_format_info ci;
    er_format_get_info(env->compute, &ci);
    for (int k = 0; k < r->ninputs; k++) {
        if (!r->has_in[k]) continue;
        er_format_info fi;
        er_format_get_info(r->in[k].format, &fi);
        if (fi.significand_bits > ci.significand_bits || fi.emax > ci.emax || fi.emin < ci.emin)
            return msgf(msg, msg_size, ER_EINVAL,
                        "%s: compute %s cannot hold every value of input %d (%s): choose a compute format at least "
                        "as wide",
                        name, ci.name, k, fi.name);
    }
    if (r->slack[1] || r->slack[2])
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "%s takes an earlier result as its input, not as weight or bias",
                    name);
    return ER_OK;
}

static er_status nm_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                           char *msg, size_t msg_size)
{
    nm_state *s = (nm_state *)r->state;
    er_status st;
    if ((st = nm_bounds_ok(r, env, msg, msg_size)) != ER_OK) return st; /* once, before the threads */
    if (s->n == 0) return ER_OK;
    return er_ops_rows_bounds(r, i, env, s->rows, s->n, nm_bound_rows, lo, hi, flags, msg, msg_size);
}

const er_opdef er_opdef_layer_norm = {
    "layer_norm", 1, 3, ln_inputs, 1, nm_outputs, ln_boundaries,
    (int)(sizeof ln_boundaries / sizeof ln_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    ln_create, nm_bounds, nm_free, er_opn_norm,
};

const er_opdef er_opdef_rms_norm = {
    "rms_norm", 1, 2, rms_inputs, 1, nm_outputs, rms_boundaries,
    (int)(sizeof rms_boundaries / sizeof rms_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    rms_create, nm_bounds, nm_free, er_opn_norm,
};

/* ==== backward: layer_norm.backward, rms_norm.backward (docs/proofs/norms.md, "Backward") ==== */

static const char *const lnb_inputs[] = {"input", "weight", "bias", "grad"};
static const char *const rmsb_inputs[] = {"input", "weight", "grad"};
static const char *const lnb_outputs[] = {"grad_input", "grad_weight", "grad_bias"};
static const er_boundary nb_boundaries[] = {
    {"forward", "compute", "the row's mean and rstd as the forward computes them (its boundaries)", "each row"},
    {"sums", "accumulate", "the row sums of g w and g w xhat in compute (any order)", "each row"},
    {"grad_input", "compute", "rstd (g w - mean(g w) - xhat mean(g w xhat)), each operation rounded to compute",
     "each element"},
    {"grad_weight", "accumulate", "the sum over rows of g xhat in compute (any order)", "each column"},
    {"grad_bias", "accumulate", "the sum over rows of g in compute (any order)", "each column"},
    {"out", "cast", "each compute value rounded once to its output format", "each element"},
};

/* the exact row quantities of the backward: R (rstd), G = sum gy, C = sum gy (x - mu) (rms: sum gy x) */
static void nb_row_exact(const nm_state *s, int64_t row, double *rl, double *rh, double *Gl, double *Gh, double *Cl,
                         double *Ch)
{
    const double *x = s->x + row * s->n, *g = s->g + row * s->n;
    double N = (double)s->n, G = 0, GA = 0, GX = 0, GXA = 0;
    for (int64_t j = 0; j < s->n; j++) {
        double gy = g[j] * wv(s, j);
        G += gy;
        GA = add_up_(GA, fabs(gy));
        GX += gy * x[j];
        GXA = add_up_(GXA, fabs(gy * x[j]));
    }
    /* binary64: products rounded once (exact for inputs up to f32), sums any order: gamma64_{N+2} */
    double g64 = gam(N + 2, 0x1p-53), tiny = er_b_up((N + 2) * 0x1p-1074);
    double eG = aup(mup(g64, GA), tiny), eX = aup(mup(g64, GXA), tiny);
    *Gl = add_dn_(G, -eG);
    *Gh = add_up_(G, eG);
    double xl = add_dn_(GX, -eX), xh = add_up_(GX, eX);
    if (s->kind == NM_LAYER) { /* C = GX - mu G over mu in M, G in [Gl, Gh] */
        double pl, ph, p[4] = {mdn(s->mu_lo[row], *Gl), mdn(s->mu_lo[row], *Gh), mdn(s->mu_hi[row], *Gl),
                               mdn(s->mu_hi[row], *Gh)};
        double q[4] = {mup(s->mu_lo[row], *Gl), mup(s->mu_lo[row], *Gh), mup(s->mu_hi[row], *Gl),
                       mup(s->mu_hi[row], *Gh)};
        pl = fmin(fmin(p[0], p[1]), fmin(p[2], p[3]));
        ph = fmax(fmax(q[0], q[1]), fmax(q[2], q[3]));
        xl = add_dn_(xl, -ph);
        xh = add_up_(xh, -pl);
    }
    *Cl = xl;
    *Ch = xh;
    double vl = adn(div_dn_(s->nv_lo[row], N), s->eps), vh = aup(div_up_(s->nv_hi[row], N), s->eps);
    rsqrt_iv(vl, vh, rl, rh);
}

/* [al, ah] * [bl, bh] */
static void mul_iv(double *l, double *h, double bl, double bh)
{
    double al = *l, ah = *h;
    double p[4] = {mdn(al, bl), mdn(al, bh), mdn(ah, bl), mdn(ah, bh)};
    double q[4] = {mup(al, bl), mup(al, bh), mup(ah, bl), mup(ah, bh)};
    *l = fmin(fmin(p[0], p[1]), fmin(p[2], p[3]));
    *h = fmax(fmax(q[0], q[1]), fmax(q[2], q[3]));
}

/*
 * grad_input_i = R (gy_i - G/N) - R^3 (x_i - M) C / N (layer_norm); R gy_i - R^3 x_i C / N (rms_norm), as an
 * interval from the intervals given (exact ones, or the implementations' with their rounding added by the
 * caller).
 */
static void gi_interval(const nm_state *s, double xi, double gyl, double gyh, double ml, double mh, double rl,
                        double rh, double Gl, double Gh, double Cl, double Ch, double *l, double *h)
{
    double N = (double)s->n;
    double t1l = add_dn_(gyl, -div_up_(Gh, N)), t1h = add_up_(gyh, -div_dn_(Gl, N));
    if (s->kind == NM_RMS) {
        t1l = gyl;
        t1h = gyh;
    }
    mul_iv(&t1l, &t1h, rl, rh);
    double dl = s->kind == NM_LAYER ? add_dn_(xi, -mh) : xi, dh = s->kind == NM_LAYER ? add_up_(xi, -ml) : xi;
    double r3l = mdn(mdn(rl, rl), rl), r3h = mup(mup(rh, rh), rh);
    mul_iv(&dl, &dh, r3l, r3h);
    mul_iv(&dl, &dh, Cl, Ch);
    dl = div_dn_(dl, N);
    dh = div_up_(dh, N);
    *l = add_dn_(t1l, -dh);
    *h = add_up_(t1h, -dl);
}

/* 1 when grad_input_i is exactly 0: (N gy_i - G)(D2 + N^3 eps) = N d_i GD with d_j = N x_j - sum x (layer_norm),
 * gy_i (sum x^2 + N eps) = x_i sum gy x (rms_norm): rationals, decided in MPFR at a precision holding them */
static int gi_is_zero(const nm_state *s, int64_t row, int64_t i, er_ops_mp **cache)
{
    const double *x = s->x + row * s->n, *g = s->g + row * s->n;
    er_ops_mp *mp = *cache;
    if (mp) goto element;
    mp = er_ops_mp_new(8192, 8);
    if (!mp) return 0;
    *cache = mp;
    /* 0: sum x (layer) or 0, 1: G, 2: GD, 3: D2, 4..7 scratch */
    er_ops_mp_set_d(mp, 0, 0);
    er_ops_mp_set_d(mp, 7, (double)s->n);
    if (s->kind == NM_LAYER)
        for (int64_t j = 0; j < s->n; j++) {
            er_ops_mp_set_d(mp, 4, x[j]);
            er_ops_mp_add(mp, 0, 0, 4);
        }
    er_ops_mp_set_d(mp, 1, 0);
    er_ops_mp_set_d(mp, 2, 0);
    er_ops_mp_set_d(mp, 3, 0);
    for (int64_t j = 0; j < s->n; j++) {
        er_ops_mp_set_d(mp, 4, x[j]); /* d_j */
        if (s->kind == NM_LAYER) {
            er_ops_mp_mul(mp, 4, 4, 7);
            er_ops_mp_sub(mp, 4, 4, 0);
        }
        er_ops_mp_set_d(mp, 5, g[j]); /* gy_j */
        er_ops_mp_set_d(mp, 6, wv(s, j));
        er_ops_mp_mul(mp, 5, 5, 6);
        er_ops_mp_add(mp, 1, 1, 5);
        er_ops_mp_mul(mp, 6, 5, 4);
        er_ops_mp_add(mp, 2, 2, 6);
        er_ops_mp_mul(mp, 6, 4, 4);
        er_ops_mp_add(mp, 3, 3, 6);
    }
    /* eps term: N^3 eps (layer: d = N(x - mu)) or N eps (rms) */
    er_ops_mp_set_d(mp, 4, s->eps);
    er_ops_mp_mul(mp, 4, 4, 7);
    if (s->kind == NM_LAYER) {
        er_ops_mp_mul(mp, 4, 4, 7);
        er_ops_mp_mul(mp, 4, 4, 7);
    }
    er_ops_mp_add(mp, 3, 3, 4); /* D2 + eps term */
element:
    er_ops_mp_set_d(mp, 5, g[i]);
    er_ops_mp_set_d(mp, 6, wv(s, i));
    er_ops_mp_mul(mp, 5, 5, 6); /* gy_i */
    er_ops_mp_set_d(mp, 4, x[i]);
    if (s->kind == NM_LAYER) {
        er_ops_mp_mul(mp, 5, 5, 7);
        er_ops_mp_sub(mp, 5, 5, 1); /* N gy_i - G */
        er_ops_mp_mul(mp, 4, 4, 7);
        er_ops_mp_sub(mp, 4, 4, 0); /* d_i */
        er_ops_mp_mul(mp, 4, 4, 7);
    }
    er_ops_mp_mul(mp, 5, 5, 3);
    er_ops_mp_mul(mp, 4, 4, 2);
    er_ops_mp_sub(mp, 5, 5, 4);
    double lo, hi;
    er_ops_mp_get(mp, 5, &lo, &hi);
    return lo == 0 && hi == 0;
}

/* the value of grad_input_i in MPFR intervals at prec bits, into register 0 of a new context */
static er_ops_mp *gi_mp(const nm_state *s, int64_t row, int64_t i, int prec)
{
    const double *x = s->x + row * s->n, *g = s->g + row * s->n;
    er_ops_mp *mp = er_ops_mp_new(prec, 8);
    if (!mp) return NULL;
    /* 1: mu, 2: rstd, 3: G, 4: C, 5..7 scratch */
    er_ops_mp_set_d(mp, 1, 0);
    er_ops_mp_set_d(mp, 7, (double)s->n);
    if (s->kind == NM_LAYER) {
        for (int64_t j = 0; j < s->n; j++) {
            er_ops_mp_set_d(mp, 5, x[j]);
            er_ops_mp_add(mp, 1, 1, 5);
        }
        er_ops_mp_div(mp, 1, 1, 7);
    }
    er_ops_mp_set_d(mp, 2, 0);
    er_ops_mp_set_d(mp, 3, 0);
    er_ops_mp_set_d(mp, 4, 0);
    for (int64_t j = 0; j < s->n; j++) {
        er_ops_mp_set_d(mp, 5, x[j]);
        er_ops_mp_sub(mp, 5, 5, 1);
        er_ops_mp_mul(mp, 6, 5, 5);
        er_ops_mp_add(mp, 2, 2, 6);
        er_ops_mp_set_d(mp, 6, g[j]);
        er_ops_mp_set_d(mp, 0, wv(s, j));
        er_ops_mp_mul(mp, 6, 6, 0);
        er_ops_mp_add(mp, 3, 3, 6);
        er_ops_mp_mul(mp, 6, 6, 5);
        er_ops_mp_add(mp, 4, 4, 6);
    }
    er_ops_mp_div(mp, 2, 2, 7);
    er_ops_mp_set_d(mp, 5, s->eps);
    er_ops_mp_add(mp, 2, 2, 5);
    er_ops_mp_log(mp, 2, 2);
    er_ops_mp_set_d(mp, 5, -0.5);
    er_ops_mp_mul(mp, 2, 2, 5);
    er_ops_mp_exp(mp, 2, 2); /* rstd */
    /* t1 = gy_i - G/N (rms: gy_i) */
    er_ops_mp_set_d(mp, 0, g[i]);
    er_ops_mp_set_d(mp, 5, wv(s, i));
    er_ops_mp_mul(mp, 0, 0, 5);
    if (s->kind == NM_LAYER) {
        er_ops_mp_div(mp, 5, 3, 7);
        er_ops_mp_sub(mp, 0, 0, 5);
    }
    /* t2 = (x_i - mu) rstd^2 C / N */
    er_ops_mp_set_d(mp, 5, x[i]);
    er_ops_mp_sub(mp, 5, 5, 1);
    er_ops_mp_mul(mp, 5, 5, 2);
    er_ops_mp_mul(mp, 5, 5, 2);
    er_ops_mp_mul(mp, 5, 5, 4);
    er_ops_mp_div(mp, 5, 5, 7);
    er_ops_mp_sub(mp, 0, 0, 5);
    er_ops_mp_mul(mp, 0, 0, 2);
    return mp;
}

static er_status nb_gi_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    nm_job *j = (nm_job *)ctx;
    nm_state *s = j->s;
    er_opres *r = j->r;
    int of = j->of;
    const char *name = r->def->name;
    for (int64_t row = r0; row < r1; row++) {
        row_stats(s, row);
        int64_t base = row * s->n;
        int bad = s->bad[row];
        for (int64_t k = 0; k < s->n && !bad; k++) bad = !isfinite(s->g[base + k]);
        if (bad) {
            s->bad[row] = 1;
            for (int64_t i = 0; i < s->n; i++) {
                r->xlo[0][base + i] = r->xhi[0][base + i] = NAN;
                er_ops_store(&r->out[0], base + i, er_ops_round(of, NAN));
            }
            continue;
        }
        double rl, rh, Gl, Gh, Cl, Ch;
        nb_row_exact(s, row, &rl, &rh, &Gl, &Gh, &Cl, &Ch);
        er_ops_mp *cache = NULL; /* the row's exact sums for the zero test */
        for (int64_t i = 0; i < s->n; i++) {
            double gy = s->g[base + i] * wv(s, i), l, h;
            uint64_t bits;
            gi_interval(s, s->x[base + i], gy, gy, s->mu_lo[row], s->mu_hi[row], rl, rh, Gl, Gh, Cl, Ch, &l, &h);
            r->xlo[0][base + i] = l;
            r->xhi[0][base + i] = h;
            if (isfinite(l) && isfinite(h) && er_ops_decide(of, l, h, &bits)) {
                er_ops_store(&r->out[0], base + i, bits);
                continue;
            }
            if (l <= 0 && h >= 0 && gi_is_zero(s, row, i, &cache)) {
                r->xlo[0][base + i] = r->xhi[0][base + i] = 0;
                er_ops_store(&r->out[0], base + i, er_ops_round(of, 0.0));
                continue;
            }
            int done = 0;
            for (int prec = 128; prec <= 8192 && !done; prec *= 2) {
                er_ops_mp *mp = gi_mp(s, row, i, prec);
                if (!mp) {
                    if (cache) er_ops_mp_free(cache);
                    return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
                }
                if (er_ops_mp_store(mp, 0, r, 0, base + i)) {
                    done = 1;
                }
                er_ops_mp_free(mp);
            }
            if (!done) {
                if (cache) er_ops_mp_free(cache);
                return msgf(msg, msg_size, ER_EINVAL, "%s: the rounding of grad_input element %lld is not decided", name,
                            (long long)(base + i));
            }
        }
        if (cache) er_ops_mp_free(cache);
    }
    return ER_OK;
}

/* grad_weight_j = sum over rows of g_j (x_j - mu) rstd (rms: g_j x_j rstd); grad_bias_j = sum over rows of g_j */
static er_status nb_cols(void *ctx, int64_t c0, int64_t c1, char *msg, size_t msg_size)
{
    nm_job *j = (nm_job *)ctx;
    nm_state *s = j->s;
    er_opres *r = j->r;
    const char *name = r->def->name;
    int nb = r->nout;
    for (int64_t c = c0; c < c1; c++) {
        double wl = 0, wh = 0, bs = 0, ba = 0;
        int bad = 0;
        for (int64_t row = 0; row < s->rows; row++) {
            int64_t e = row * s->n + c;
            if (s->bad[row]) {
                bad = 1;
                break;
            }
            double g = s->g[e], rl, rh, dl, dh;
            double vl = adn(div_dn_(s->nv_lo[row], (double)s->n), s->eps);
            double vh = aup(div_up_(s->nv_hi[row], (double)s->n), s->eps);
            rsqrt_iv(vl, vh, &rl, &rh);
            dl = s->kind == NM_LAYER ? add_dn_(s->x[e], -s->mu_hi[row]) : s->x[e];
            dh = s->kind == NM_LAYER ? add_up_(s->x[e], -s->mu_lo[row]) : s->x[e];
            mul_iv(&dl, &dh, rl, rh);
            mul_scalar(&dl, &dh, g);
            wl = adn(wl, dl);
            wh = aup(wh, dh);
            bs += g;
            ba = add_up_(ba, fabs(g));
        }
        for (int o = 1; o < nb; o++) {
            int fmt = r->out[o].format;
            uint64_t bits;
            double l = wl, h = wh;
            if (o == 2) {
                double e = mup(gam((double)s->rows, 0x1p-53), ba);
                l = add_dn_(bs, -e);
                h = add_up_(bs, e);
                if (e == 0) l = h = bs + 0.0;
            }
            if (bad) {
                r->xlo[o][c] = r->xhi[o][c] = NAN;
                er_ops_store(&r->out[o], c, er_ops_round(fmt, NAN));
                continue;
            }
            r->xlo[o][c] = l;
            r->xhi[o][c] = h;
            if (er_ops_decide(fmt, l, h, &bits)) {
                er_ops_store(&r->out[o], c, bits);
                continue;
            }
            /* rising precision (grad_bias: exact at 2300 bits) */
            int done = 0;
            for (int prec = o == 2 ? 2300 : 128; prec <= 8192 && !done; prec *= 2) {
                er_ops_mp *mp = er_ops_mp_new(prec, 6);
                if (!mp) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
                er_ops_mp_set_d(mp, 0, 0);
                er_ops_mp_set_d(mp, 5, (double)s->n);
                int allzero = 1;
                for (int64_t row = 0; row < s->rows; row++) {
                    int64_t e = row * s->n + c;
                    er_ops_mp_set_d(mp, 1, s->g[e]);
                    if (o == 2) {
                        er_ops_mp_add(mp, 0, 0, 1);
                        continue;
                    }
                    if (s->g[e] == 0) continue;
                    /* mu and rstd of the row */
                    const double *x = s->x + row * s->n;
                    mp_row_stats(s, x, mp, 2, 4, 3, 3, 5);
                    er_ops_mp_set_d(mp, 3, s->x[e]);
                    er_ops_mp_sub(mp, 3, 3, 2);
                    double tl, th;
                    er_ops_mp_get(mp, 3, &tl, &th);
                    if (tl == 0 && th == 0) continue;
                    allzero = 0;
                    er_ops_mp_mul(mp, 3, 3, 4);
                    er_ops_mp_mul(mp, 3, 3, 1);
                    er_ops_mp_add(mp, 0, 0, 3);
                }
                if (o == 1 && allzero) {
                    er_ops_store(&r->out[o], c, er_ops_round(fmt, 0.0));
                    r->xlo[o][c] = r->xhi[o][c] = 0;
                    done = 1;
                } else if (er_ops_mp_store(mp, 0, r, o, c)) {
                    done = 1;
                }
                er_ops_mp_free(mp);
            }
            if (!done)
                return msgf(msg, msg_size, ER_EINVAL, "%s: the rounding of %s element %lld is not decided", name,
                            r->def->output_names[o], (long long)c);
        }
    }
    return ER_OK;
}

static er_status nb_create_rest(er_opres *r, nm_state *s, int of, char *msg, size_t msg_size)
{
    er_status st;
    const er_optensor *x = &r->in[0];
    int64_t wshape[ER_OP_MAXDIM];
    for (int d = 0; d < s->nd; d++) wshape[d] = x->shape[x->ndim - s->nd + d];
    if ((st = er_ops_alloc_output(r, 1, s->wfmt, s->nd, wshape, msg, msg_size)) != ER_OK) return st;
    if (s->kind == NM_LAYER && (st = er_ops_alloc_output(r, 2, s->bfmt, s->nd, wshape, msg, msg_size)) != ER_OK)
        return st;
    if (s->rows == 0 || s->n == 0) return ER_OK;
    nm_job j = {r, s, of};
    if ((st = er_ops_parallel(s->rows, 1 + 65536 / (s->n + 1), nb_gi_rows, &j, msg, msg_size)) != ER_OK) return st;
    return er_ops_parallel(s->n, 1 + 65536 / (s->rows + 1), nb_cols, &j, msg, msg_size);
}

static er_status lnb_create(er_opres *r, char *msg, size_t msg_size) { return nm_create_kind(r, NM_LAYER, 1, msg, msg_size); }
static er_status rmsb_create(er_opres *r, char *msg, size_t msg_size) { return nm_create_kind(r, NM_RMS, 1, msg, msg_size); }

/* ---- the backward's bounds ---- */

typedef struct nbb_job {
    er_opres *r;
    nm_state *s;
    const er_openv *env;
    double *lo, *hi;
    unsigned char *fl;
    int out_is_compute;
    double *ml, *mh, *rl, *rh; /* per row: the implementations' mean and rstd */
    unsigned char *ok;
} nbb_job;

static er_status nbb_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    nbb_job *j = (nbb_job *)ctx;
    nm_state *s = j->s;
    const er_openv *env = j->env;
    double u = env->u, eta = env->eta, N = (double)s->n;
    double gN1 = gam(N + 1, u), gN3 = gam(N + 3, u), g3 = gam(3, u), g6 = gam(6, u);
    (void)msg;
    (void)msg_size;
    for (int64_t row = r0; row < r1; row++) {
        int64_t base = row * s->n;
        double ml = 0, mh = 0, rl = 0, rh = 0;
        int ok = !s->bad[row] && gN3 < INFINITY && row_impl(s, env, row, &ml, &mh, &rl, &rh, NULL);
        j->ok[row] = (unsigned char)ok;
        j->ml[row] = ml;
        j->mh[row] = mh;
        j->rl[row] = rl;
        j->rh[row] = rh;
        if (!j->lo) continue;
        double Gl = 0, Gh = 0, GA = 0, Cl = 0, Ch = 0, CA = 0;
        if (ok) {
            /* G^ = any-order sum of fl(g w): gamma_{N+1} sum |g w|; C^ = any-order sum of the terms
             * fl(fl(g w) fl(x - m^)) (layer) or fl(g w x) (rms), as an interval over m^ in M: every term has
             * at most 3 roundings and the sum N - 1 more: gamma_{N+3} sum |g w| max |x - m| */
            double gx = 0, gxa = 0, eg, ec;
            for (int64_t k = 0; k < s->n; k++) {
                double gy = s->g[base + k] * wv(s, k);
                Gl = add_dn_(Gl, gy);
                Gh = add_up_(Gh, gy);
                GA = add_up_(GA, fabs(gy));
                double xa = s->kind == NM_LAYER ? fmax(fabs(add_up_(s->x[base + k], -ml)),
                                                       fabs(add_dn_(s->x[base + k], -mh)))
                                                : fabs(s->x[base + k]);
                gx += gy * s->x[base + k];
                gxa = add_up_(gxa, fabs(gy * s->x[base + k]));
                CA = add_up_(CA, mup(fabs(gy), xa));
            }
            /* exact sums of binary64 products: the binary64 errors (gamma64) on top */
            double g64 = gam(N + 2, 0x1p-53);
            double e64 = aup(mup(g64, GA), er_b_up(N * 0x1p-1074)), ex64 = aup(mup(g64, gxa), er_b_up(N * 0x1p-1074));
            eg = aup(aup(mup(gN1, GA), er_b_up(2 * N * eta)), e64);
            Gl = add_dn_(Gl, -eg);
            Gh = add_up_(Gh, eg);
            Cl = add_dn_(gx, -ex64);
            Ch = add_up_(gx, ex64);
            if (s->kind == NM_LAYER) {
                double pl = ml, ph = mh;
                mul_iv(&pl, &ph, Gl, Gh);
                Cl = add_dn_(Cl, -ph);
                Ch = add_up_(Ch, -pl);
            }
            ec = aup(mup(gN3, CA), er_b_up(3 * N * eta));
            Cl = add_dn_(Cl, -ec);
            Ch = add_up_(Ch, ec);
        }
        for (int64_t i = 0; i < s->n; i++) {
            int64_t e = base + i;
            if (s->bad[row]) {
                j->fl[e] = ER_OPB_NONFINITE;
                j->lo[e] = j->hi[e] = NAN;
                continue;
            }
            if (!ok) {
                j->fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
                j->lo[e] = -INFINITY;
                j->hi[e] = INFINITY;
                continue;
            }
            /* each of the terms r^ gy, r^ G^/N, r^3 (x - m^) C^/N formed with at most 6 roundings (any
             * association), then two subtractions: relative gamma_6 per term and 2u of their magnitudes */
            double gy = s->g[e] * wv(s, i), l, h;
            double gyl = mdn(gy, gy >= 0 ? er_b_down(1 - u) : er_b_up(1 + u)), gyh = mup(gy, gy >= 0 ? er_b_up(1 + u) : er_b_down(1 - u));
            gi_interval(s, s->x[e], gyl, gyh, ml, mh, rl, rh, Gl, Gh, Cl, Ch, &l, &h);
            double t1 = mup(fabs(gy) + div_up_(fmax(fabs(Gl), fabs(Gh)), N), rh);
            double dx = s->kind == NM_LAYER ? fmax(fabs(add_up_(s->x[e], -ml)), fabs(add_dn_(s->x[e], -mh)))
                                            : fabs(s->x[e]);
            double t3 = div_up_(mup(mup(dx, mup(mup(rh, rh), rh)), fmax(fabs(Cl), fabs(Ch))), N);
            double a = aup(aup(mup(g6, aup(t1, t3)), mup(er_b_up(2 * u), aup(t1, t3))), er_b_up(6 * eta));
            (void)g3;
            l = add_dn_(l, -a);
            h = add_up_(h, a);
            if (!j->out_is_compute) rnd(env, &l, &h);
            er_ops_put_bound(j->fl, j->lo, j->hi, e, l, h, env->max_c);
        }
    }
    return ER_OK;
}

static er_status nb_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                           char *msg, size_t msg_size)
{
    nm_state *s = (nm_state *)r->state;
    const char *name = r->def->name;
    er_status st0;
    if ((st0 = nm_bounds_ok(r, env, msg, msg_size)) != ER_OK) return st0; /* the forward's refusals */
    if (s->rows == 0 || s->n == 0) return ER_OK;
    size_t R = (size_t)s->rows;
    double *buf = (double *)malloc(4 * R * sizeof(double));
    unsigned char *ok = (unsigned char *)calloc(R, 1);
    if (!buf || !ok) {
        free(buf);
        free(ok);
        return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
    }
    nbb_job j = {r, s, env, i == 0 ? lo : NULL, hi, flags, env->compute == r->out[i].format,
                 buf, buf + R, buf + 2 * R, buf + 3 * R, ok};
    er_status st = er_ops_parallel(s->rows, 1 + 65536 / (s->n + 1), nbb_rows, &j, msg, msg_size);
    if (st == ER_OK && i > 0) {
        /* grad_weight: any-order sum over rows of fl(g fl(fl(x - m^) r^)) (3 roundings a term);
         * grad_bias: any-order sum over rows of g */
        double u = env->u, eta = env->eta, gR = gam((double)s->rows + 2, u);
        for (int64_t c = 0; c < s->n; c++) {
            double l = 0, h = 0, A = 0;
            int bad = 0, nob = gR == INFINITY;
            for (int64_t row = 0; row < s->rows; row++) {
                int64_t e = row * s->n + c;
                if (s->bad[row]) {
                    bad = 1;
                    break;
                }
                if (!ok[row]) nob = 1;
                double g = s->g[e], dl, dh;
                if (i == 2) {
                    dl = dh = g;
                } else {
                    dl = s->kind == NM_LAYER ? add_dn_(s->x[e], -j.mh[row]) : s->x[e];
                    dh = s->kind == NM_LAYER ? add_up_(s->x[e], -j.ml[row]) : s->x[e];
                    mul_iv(&dl, &dh, j.rl[row], j.rh[row]);
                    mul_scalar(&dl, &dh, g);
                }
                l = adn(l, dl);
                h = aup(h, dh);
                A = add_up_(A, fmax(fabs(dl), fabs(dh)));
            }
            if (bad) {
                flags[c] = ER_OPB_NONFINITE;
                lo[c] = hi[c] = NAN;
                continue;
            }
            double e = aup(mup(gR, A), er_b_up(3 * (double)s->rows * eta));
            l = add_dn_(l, -e);
            h = add_up_(h, e);
            er_ops_put_bound(flags, lo, hi, c, l, h, nob ? NAN : env->max_c); /* NaN: unbounded */
        }
    }
    free(buf);
    free(ok);
    return st;
}

const er_opdef er_opdef_layer_norm_backward = {
    "layer_norm.backward", 1, 4, lnb_inputs, 3, lnb_outputs, nb_boundaries,
    (int)(sizeof nb_boundaries / sizeof nb_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    lnb_create, nb_bounds, nm_free, er_opn_norm_backward,
};

const er_opdef er_opdef_rms_norm_backward = {
    "rms_norm.backward", 1, 3, rmsb_inputs, 2, lnb_outputs, nb_boundaries,
    (int)(sizeof nb_boundaries / sizeof nb_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    rmsb_create, nb_bounds, nm_free, er_opn_norm_backward,
};
