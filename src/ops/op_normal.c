/* op_normal.c: normal() of the operations beyond matmul (er_opres_normal): each operation's textbook
 * implementation in index order emulated exactly in a compute format (every step rounded once, library
 * functions correctly rounded from certified enclosures and MPFR, flush-to-zero), then rounded to the output
 * format; the elementwise operations, the softmax family and the norms (docs/ops/README.md, "normal()"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "exactref/formats.h"
#include "op_impl.h"
#include "op_normal.h"

#define msgf er_msgf

/* ---- the environment ---- */

er_status er_ops_env(const er_opres *r, const er_tol_opts *o, er_openv *env, char *msg, size_t msg_size)
{
    er_format_info ci;
    memset(env, 0, sizeof *env);
    env->o = o;
    env->compute = o->compute < 0 ? r->default_compute : o->compute;
    if (er_format_get_info(env->compute, &ci) != ER_OK || ci.kind != ER_KIND_FLOAT || !ci.has_zero)
        return msgf(msg, msg_size, ER_EINVAL, "%s: compute format %d is not a float format", r->def->name,
                    env->compute);
    env->p = ci.significand_bits + 1;
    env->emin = ci.emin;
    env->u = ldexp(1.0, -env->p);
    env->eta = ldexp(1.0, ci.emin - env->p + 1);
    env->tiny = ldexp(1.0, ci.emin);
    er_from_bits(env->compute, ci.max_finite_bits, &env->max_c);
    env->ftz = o->flush_to_zero != 0;
    return ER_OK;
}

/* ---- steps in compute ---- */

double er_opn_rc(const er_openv *env, double x)
{
    double y = env->compute == ER_FMT_F64 ? x : er_ops_bits_value(env->compute, er_ops_rn_bits(env->compute, x));
    if (env->ftz && y != 0 && fabs(y) < env->tiny) y = copysign(0.0, y);
    return y;
}

/* one element of a library function correctly rounded in compute: the certified binary64 enclosure, then
 * MPFR at rising precision where it straddles a rounding boundary */
double er_opn_lib(const er_openv *env, int fn, double x)
{
    double lo, hi;
    uint64_t bits;
    if (x != x) return x;
    switch (fn) {
    case ER_OPN_EXP: er_ops_exp(x, &lo, &hi); break;
    case ER_OPN_LOG:
        if (x < 0) return NAN;
        er_ops_log(x, &lo, &hi);
        break;
    case ER_OPN_TANH: er_ops_tanh_fast(x, &lo, &hi); break;
    default: er_ops_erf_fast(x, &lo, &hi); break;
    }
    if (er_ops_decide(env->compute, lo, hi, &bits)) return er_opn_rc(env, er_ops_bits_value(env->compute, bits));
    for (int prec = 128; prec <= 65536; prec *= 2) {
        er_ops_mp *m = er_ops_mp_new(prec, 2);
        if (!m) break;
        er_ops_mp_set_d(m, 0, x);
        switch (fn) {
        case ER_OPN_EXP: er_ops_mp_exp(m, 1, 0); break;
        case ER_OPN_LOG: er_ops_mp_log(m, 1, 0); break;
        case ER_OPN_TANH: er_ops_mp_tanh(m, 1, 0); break;
        default: er_ops_mp_erf(m, 1, 0); break;
        }
        int ok = er_ops_mp_decide(m, 1, env->compute, &bits);
        er_ops_mp_free(m);
        if (ok) return er_opn_rc(env, er_ops_bits_value(env->compute, bits));
    }
    /* not decided (never met: the values are transcendental): the enclosure's midpoint */
    return er_opn_rc(env, lo + (hi - lo) / 2);
}

er_status er_opn_check_compute(const er_opres *r, const er_openv *env, char *msg, size_t msg_size)
{
    /* binary64's + - * / sqrt rounded again to compute are compute's correctly rounded results when
     * 53 >= 2p + 2 (double rounding is innocuous), and are themselves when compute is binary64 */
    if (env->compute == ER_FMT_F64 || 2 * env->p + 2 <= 53) return ER_OK;
    return msgf(msg, msg_size, ER_EUNSUPPORTED, "%s: normal() emulates compute formats up to 25 significand bits "
                "and f64; %s is not one", r->def->name, er_format_name(env->compute) ? er_format_name(env->compute) : "?");
}

/* an input's values read into compute (flushed); malloc'd */
er_status er_opn_read(const er_opres *r, int k, const er_openv *env, double **out, char *msg, size_t msg_size)
{
    er_status st;
    *out = NULL;
    if (!r->has_in[k]) return ER_OK;
    if ((st = er_ops_values(&r->in[k], out, msg, msg_size)) != ER_OK) return st;
    int64_t n = er_optensor_count(&r->in[k]);
    for (int64_t e = 0; e < n; e++) (*out)[e] = er_opn_rc(env, (*out)[e]);
    return ER_OK;
}

/* ---- elementwise ---- */

static double sigmoid_c(const er_openv *env, double x)
{
    /* DIV(1, RN(1 + EXP(-x))) */
    return er_opn_rc(env, 1.0 / er_opn_rc(env, 1.0 + er_opn_lib(env, ER_OPN_EXP, -x)));
}

er_status er_opn_unary(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    double *x;
    const char *name = r->def->name;
    int tanh_form = 0;
    (void)i;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    if (!strcmp(name, "gelu")) {
        const char *a = NULL;
        for (int q = 0; q < r->nopt; q++)
            if (!strcmp(r->opt[q].key, "approximate")) a = r->opt[q].val;
        tanh_form = a && !strcmp(a, "tanh");
    }
    if ((st = er_opn_read(r, 0, env, &x, msg, msg_size)) != ER_OK) return st;
    int64_t n = er_optensor_count(&r->out[0]);
    int of = r->out[0].format;
    double half = 0.5, c_erf = er_opn_rc(env, 0.70710678118654752440), c_t1 = er_opn_rc(env, 0.7978845608028654),
           c_t2 = er_opn_rc(env, 0.044715);
    /* sqrt(2/pi) = 0.79788456080286535587989211986876...: the binary64 nearest, then rounded to compute
     * (f32: 0x3f4c422a, torch's M_SQRT2 * M_2_SQRTPI * 0.5 in float) */
    int kind = !strcmp(name, "exp") ? 0 : !strcmp(name, "relu") ? 1 : !strcmp(name, "tanh") ? 2
             : !strcmp(name, "sigmoid") ? 3 : !strcmp(name, "silu") ? 4 : 5;
    for (int64_t e = 0; e < n; e++) {
        double v = x[e], y;
        if (kind == 0) y = er_opn_lib(env, ER_OPN_EXP, v);
        else if (kind == 1) y = v != v ? v : v > 0 ? v : 0.0;
        else if (kind == 2) y = er_opn_lib(env, ER_OPN_TANH, v);
        else if (kind == 3) y = sigmoid_c(env, v);
        else if (kind == 4) /* torch's form: DIV(x, RN(1 + EXP(-x))) */
            y = er_opn_rc(env, v / er_opn_rc(env, 1.0 + er_opn_lib(env, ER_OPN_EXP, -v)));
        else if (!tanh_form) { /* 0.5 x (1 + ERF(RN(x * RN(1/sqrt 2)))) as RN(RN(0.5 x) * RN(1 + erf)) */
            double a = er_opn_rc(env, v * c_erf), t = er_opn_rc(env, 1.0 + er_opn_lib(env, ER_OPN_ERF, a));
            y = er_opn_rc(env, er_opn_rc(env, half * v) * t);
        } else { /* inner = RN(c1 RN(x + RN(c2 RN(RN(x x) x)))), then 0.5 x (1 + TANH(inner)) */
            double x3 = er_opn_rc(env, er_opn_rc(env, v * v) * v);
            double in = er_opn_rc(env, c_t1 * er_opn_rc(env, v + er_opn_rc(env, c_t2 * x3)));
            double t = er_opn_rc(env, 1.0 + er_opn_lib(env, ER_OPN_TANH, in));
            y = er_opn_rc(env, er_opn_rc(env, half * v) * t);
        }
        bits[e] = er_ops_rn_bits(of, y);
    }
    free(x);
    return ER_OK;
}

er_status er_opn_binary(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    double *a = NULL, *b = NULL;
    (void)i;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 0, env, &a, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 1, env, &b, msg, msg_size)) != ER_OK) {
        free(a);
        return st;
    }
    const er_optensor *o = &r->out[0];
    int64_t n = er_optensor_count(o);
    int mul = !strcmp(r->def->name, "mul");
    for (int64_t e = 0; e < n; e++) {
        double x = a[er_ops_bcast_index(&r->in[0], o->ndim, o->shape, e)];
        double y = b[er_ops_bcast_index(&r->in[1], o->ndim, o->shape, e)];
        bits[e] = er_ops_rn_bits(o->format, er_opn_rc(env, mul ? x * y : x + y));
    }
    free(a);
    free(b);
    return ER_OK;
}

/* ---- the softmax family: m = max, d = RN(x - m), e = EXP(d), s = index-order sum, then per op ---- */

double er_opn_smx_row(const er_openv *env, const double *row, int64_t len, int64_t st, double *d, double *ex,
                      double *m_out)
{
    double m = -INFINITY, s = 0;
    int nan = 0;
    for (int64_t j = 0; j < len; j++) {
        double v = row[j * st];
        if (v != v) nan = 1;
        else if (v > m) m = v;
    }
    if (nan) m = NAN;
    for (int64_t j = 0; j < len; j++) {
        d[j] = er_opn_rc(env, row[j * st] - m);
        ex[j] = er_opn_lib(env, ER_OPN_EXP, d[j]);
        s = j ? er_opn_rc(env, s + ex[j]) : ex[j];
    }
    if (m_out) *m_out = m;
    return s;
}

er_status er_opn_smx_shape(er_opres *r, int64_t *outer, int64_t *len, int64_t *inner, char *msg, size_t msg_size)
{
    int dim;
    er_status st;
    if (r->in[0].ndim == 0) {
        *outer = *len = *inner = 1;
        return ER_OK;
    }
    if ((st = er_ops_opt_dim(r, "dim", -1, r->in[0].ndim, &dim, msg, msg_size)) != ER_OK) return st;
    er_ops_split_dim(&r->in[0], dim, outer, len, inner);
    return ER_OK;
}

typedef struct smx_job {
    const er_openv *env;
    const double *x;
    uint64_t *bits;
    int64_t len, inner;
    int kind, of;
} smx_job;

/* rows r0 .. r1 - 1 of (outer x inner) */
static er_status smx_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    smx_job *jb = (smx_job *)ctx;
    int64_t len = jb->len, inner = jb->inner;
    const er_openv *env = jb->env;
    double *d = (double *)malloc(sizeof(double) * (size_t)(len ? len : 1));
    double *ex = (double *)malloc(sizeof(double) * (size_t)(len ? len : 1));
    if (!d || !ex) {
        free(d);
        free(ex);
        return msgf(msg, msg_size, ER_ENOMEM, "normal: out of memory");
    }
    for (int64_t row = r0; row < r1; row++) {
        int64_t o = row / inner, in = row % inner;
        double m, s = er_opn_smx_row(env, jb->x + o * len * inner + in, len, inner, d, ex, &m);
        if (jb->kind == 2) {
            double y = len ? er_opn_rc(env, m + er_opn_lib(env, ER_OPN_LOG, s)) : -INFINITY;
            jb->bits[row] = er_ops_rn_bits(jb->of, y);
            continue;
        }
        double l = jb->kind == 1 ? er_opn_lib(env, ER_OPN_LOG, s) : 0;
        for (int64_t j = 0; j < len; j++) {
            double y = jb->kind == 0 ? er_opn_rc(env, ex[j] / s) : er_opn_rc(env, d[j] - l);
            jb->bits[o * len * inner + j * inner + in] = er_ops_rn_bits(jb->of, y);
        }
    }
    free(d);
    free(ex);
    return ER_OK;
}

er_status er_opn_softmax_family(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    double *x;
    const char *name = r->def->name;
    int64_t outer, len, inner;
    (void)i;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_smx_shape(r, &outer, &len, &inner, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 0, env, &x, msg, msg_size)) != ER_OK) return st;
    smx_job jb = {env, x, bits, len, inner, !strcmp(name, "softmax") ? 0 : !strcmp(name, "log_softmax") ? 1 : 2,
                  r->out[0].format};
    /* rows in parallel (each row's steps in index order: the same bits on any number of threads) */
    st = er_ops_parallel(outer * inner, 1 + 16384 / (len + 1), smx_rows, &jb, msg, msg_size);
    free(x);
    return st;
}

/* ---- layer_norm (two passes) and rms_norm ---- */

int64_t er_opn_norm_count(er_opres *r)
{
    const char *t = NULL;
    for (int q = 0; q < r->nopt; q++)
        if (!strcmp(r->opt[q].key, "normalized_shape")) t = r->opt[q].val;
    const er_optensor *x = &r->in[0];
    if (!t || !*t) return x->ndim ? x->shape[x->ndim - 1] : 1;
    int64_t n = 1;
    for (const char *p = t; *p;) {
        char *end;
        n *= strtoll(p, &end, 10);
        p = *end ? end + 1 : end;
    }
    return n;
}

/* a norm's options: eps (default 1e-5; rms_norm: the input format's epsilon, as torch's finfo(dtype).eps)
 * and the row length N (normalized_shape; error where it has no elements) */
er_status er_opn_norm_opts(er_opres *r, int rms, double *eps, int64_t *N, char *msg, size_t msg_size)
{
    er_format_info fi;
    er_format_get_info(r->in[0].format, &fi);
    er_status st = er_ops_opt_double(r, "eps", rms ? ldexp(1.0, -fi.significand_bits) : 1e-5, eps, msg, msg_size);
    if (st != ER_OK) return st;
    *N = er_opn_norm_count(r);
    if (*N <= 0) return msgf(msg, msg_size, ER_EINVAL, "%s: normalized_shape has no elements", r->def->name);
    return ER_OK;
}

/* one norm row's statistics in index order: the mean (0 for rms) into *mean, and 1 / sqrt(var + eps) returned
 * (var: the mean square of x - mean; ec: eps in compute), every step rounded into compute */
double er_opn_norm_rstd(const er_openv *env, const double *xr, int64_t N, int rms, double ec, double *mean)
{
    double dn = (double)N, q = 0;
    *mean = 0;
    if (!rms) {
        double s = 0;
        for (int64_t j = 0; j < N; j++) s = j ? er_opn_rc(env, s + xr[j]) : xr[j];
        *mean = er_opn_rc(env, s / dn);
    }
    for (int64_t j = 0; j < N; j++) {
        double dj = rms ? xr[j] : er_opn_rc(env, xr[j] - *mean), t = er_opn_rc(env, dj * dj);
        q = j ? er_opn_rc(env, q + t) : t;
    }
    double v = er_opn_rc(env, er_opn_rc(env, q / dn) + ec);
    return er_opn_rc(env, 1.0 / er_opn_rc(env, sqrt(v)));
}

er_status er_opn_norm(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    double *x = NULL, *w = NULL, *b = NULL, eps;
    int rms = !strcmp(r->def->name, "rms_norm");
    (void)i;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    int64_t N, n = er_optensor_count(&r->in[0]);
    if ((st = er_opn_norm_opts(r, rms, &eps, &N, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 0, env, &x, msg, msg_size)) != ER_OK) goto done;
    if ((st = er_opn_read(r, 1, env, &w, msg, msg_size)) != ER_OK) goto done;
    if (!rms && (st = er_opn_read(r, 2, env, &b, msg, msg_size)) != ER_OK) goto done;
    double ec = er_opn_rc(env, eps);
    int of = r->out[0].format;
    for (int64_t row = 0; row < n / N; row++) {
        const double *xr = x + row * N;
        double mean, rstd = er_opn_norm_rstd(env, xr, N, rms, ec, &mean);
        for (int64_t j = 0; j < N; j++) {
            double dj = rms ? xr[j] : er_opn_rc(env, xr[j] - mean), y = er_opn_rc(env, dj * rstd);
            if (w) y = er_opn_rc(env, y * w[j]);
            if (b) y = er_opn_rc(env, y + b[j]);
            bits[row * N + j] = er_ops_rn_bits(of, y);
        }
    }
done:
    free(x);
    free(w);
    free(b);
    return st;
}

/* ---- the public call ---- */

er_status er_opres_normal(er_opres *r, int i, int compute, int flush_to_zero, void *out_bits, char *msg,
                          size_t msg_size)
{
    er_status st;
    if (!r) return msgf(msg, msg_size, ER_EINVAL, "normal: no result");
    if (i < 0 || i >= r->nout)
        return msgf(msg, msg_size, ER_EINVAL, "normal: %s has %d output(s); output %d is out of range", r->def->name,
                    r->nout, i);
    int64_t n = er_optensor_count(&r->out[i]);
    if (!out_bits && n) return msgf(msg, msg_size, ER_EINVAL, "normal: no place for the output");
    er_status (*fn)(er_opres *, int, const er_openv *, uint64_t *, char *, size_t) = r->def->normal;
    if (!fn) return msgf(msg, msg_size, ER_EUNSUPPORTED, "normal() of %s is not emulated", r->def->name);
    er_tol_opts o;
    er_tol_opts_init(&o);
    o.compute = compute;
    o.flush_to_zero = flush_to_zero;
    er_openv env;
    if ((st = er_ops_env(r, &o, &env, msg, msg_size)) != ER_OK) return st;
    uint64_t *bits = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(n ? n : 1));
    if (!bits) return msgf(msg, msg_size, ER_ENOMEM, "normal: out of memory for %lld elements", (long long)n);
    /* the emulation runs on a shallow copy: it reads options again (marking them) and, where an input is an
     * earlier result, reads that result's normal() in place of its rounded (seed 002: a result on results
     * computes its normal() on theirs) */
    er_opres tmp = *r;
    void *nb[ER_OP_MAXIN] = {NULL};
    st = ER_OK;
    for (int k = 0; k < r->ninputs && k < ER_OP_MAXIN && st == ER_OK; k++) {
        if (!r->has_in[k] || (!r->from_opres[k] && !r->from_result[k])) continue;
        const er_optensor *t = &r->in[k];
        er_format_info fi;
        er_format_get_info(t->format, &fi);
        int64_t c = er_optensor_count(t);
        if (!(nb[k] = malloc((size_t)(c ? c : 1) * (size_t)fi.storage_bytes))) {
            st = msgf(msg, msg_size, ER_ENOMEM, "normal: out of memory");
            break;
        }
        tmp.in[k] = er_optensor_make(t->format, t->ndim, t->shape, nb[k]);
        if (r->from_opres[k]) {
            st = er_opres_normal(r->from_opres[k], r->from_output[k], compute, flush_to_zero, nb[k], msg, msg_size);
        } else {
            er_tensor o = *er_result_rounded(r->from_result[k]);
            int64_t s = 1;
            for (int d = o.ndim - 1; d >= 0; d--) {
                o.strides[d] = s;
                s *= o.shape[d];
            }
            o.data = nb[k];
            st = er_result_normal(r->from_result[k], compute, flush_to_zero, &o, msg, msg_size);
        }
    }
    if (st == ER_OK) st = fn(&tmp, i, &env, bits, msg, msg_size);
    for (int k = 0; k < ER_OP_MAXIN; k++) free(nb[k]);
    if (st == ER_OK) {
        er_optensor t = er_optensor_make(r->out[i].format, r->out[i].ndim, r->out[i].shape, out_bits);
        for (int64_t e = 0; e < n; e++) er_ops_store(&t, e, bits[e]);
    }
    free(bits);
    return st;
}
