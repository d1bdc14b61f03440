/* op_unary.c: the elementwise activations exp, relu, sigmoid, tanh, silu and gelu (approximate none |
 * tanh): the exact values rounded once, and per-element bounds of the implementations a standard
 * covers; proof: docs/proofs/activations.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

enum { UN_EXP, UN_RELU, UN_SIGMOID, UN_TANH, UN_SILU, UN_GELU };

static const char *const un_inputs[] = {"input"};
static const char *const un_outputs[] = {"out"};

typedef struct un_state {
    double *v;
    int64_t n;
    int kind, tanh_form; /* gelu: approximate=tanh */
    int of;
    /* enclosures of the constants (gelu): 1/sqrt(2), sqrt(2/pi), 0.044715 */
    double c1l, c1h, c2l, c2h, c3l, c3h;
} un_state;

ER_OPS_STATE_FREE(un_free, un_state, s->v)

/* ---- the exact values ---- */

/* The exact value at rising precision: register 3 of m (registers 0..5; 0 holds x). */
static void un_mp(const un_state *s, er_ops_mp *m, double x)
{
    er_ops_mp_set_d(m, 0, x);
    switch (s->kind) {
    case UN_EXP: er_ops_mp_exp(m, 3, 0); break;
    case UN_TANH: er_ops_mp_tanh(m, 3, 0); break;
    case UN_SIGMOID:
    case UN_SILU:
        er_ops_mp_set_d(m, 1, 0);
        er_ops_mp_sub(m, 1, 1, 0); /* -x */
        er_ops_mp_exp(m, 1, 1);
        er_ops_mp_set_d(m, 2, 1);
        er_ops_mp_add(m, 1, 1, 2); /* 1 + exp(-x) */
        er_ops_mp_div(m, 3, s->kind == UN_SILU ? 0 : 2, 1);
        break;
    case UN_GELU:
        if (!s->tanh_form) { /* 0.5 x (1 + erf(x / sqrt(2))), 1 + erf(t) as erfc(-t): no cancellation */
            er_ops_mp_set_d(m, 1, 2);
            er_ops_mp_sqrt(m, 1, 1);
            er_ops_mp_div(m, 1, 0, 1);
            er_ops_mp_set_d(m, 2, 0);
            er_ops_mp_sub(m, 1, 2, 1);
            er_ops_mp_erfc(m, 1, 1);
        } else { /* 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), 1 + tanh(z) as 2 / (1 + e^(-2z)) */
            er_ops_mp_mul(m, 1, 0, 0);
            er_ops_mp_mul(m, 1, 1, 0);
            er_ops_mp_set_str(m, 2, "0.044715");
            er_ops_mp_mul(m, 1, 1, 2);
            er_ops_mp_add(m, 1, 1, 0);
            er_ops_mp_pi(m, 2);
            er_ops_mp_set_d(m, 4, 2);
            er_ops_mp_div(m, 2, 4, 2);
            er_ops_mp_sqrt(m, 2, 2);
            er_ops_mp_mul(m, 1, 1, 2);
            er_ops_mp_set_d(m, 2, -2);
            er_ops_mp_mul(m, 1, 1, 2);
            er_ops_mp_exp(m, 1, 1);
            er_ops_mp_set_d(m, 2, 1);
            er_ops_mp_add(m, 1, 1, 2);
            er_ops_mp_set_d(m, 2, 2);
            er_ops_mp_div(m, 1, 2, 1);
        }
        er_ops_mp_mul(m, 1, 1, 0);
        er_ops_mp_set_d(m, 2, 0.5);
        er_ops_mp_mul(m, 3, 1, 2);
        break;
    default: er_ops_mp_copy(m, 3, 0); break;
    }
}

/* A fast enclosure (or the special value) of the exact value; *special: 1 a non-finite exact value or
 * an exact binary64 value (lo == hi is it), 2 no exact value (a limit the formula does not reach: every
 * special allowed). */
static void un_fast(const un_state *s, double x, double *lo, double *hi, int *special)
{
    *special = 0;
    if (x != x) {
        *lo = *hi = x;
        *special = 1;
        return;
    }
    switch (s->kind) {
    case UN_RELU:
        *lo = *hi = x > 0 ? x : 0.0;
        *special = 1;
        return;
    case UN_EXP:
        er_ops_exp(x, lo, hi);
        *special = er_b_isinf(x) || x == 0;
        return;
    case UN_TANH:
        if (er_b_isinf(x) || x == 0) {
            *lo = *hi = x == 0 ? x : x > 0 ? 1.0 : -1.0;
            *special = 1;
            return;
        }
        er_ops_tanh_fast(x, lo, hi);
        return;
    case UN_SIGMOID:
    case UN_SILU: {
        if (er_b_isinf(x)) {
            if (s->kind == UN_SIGMOID) *lo = *hi = x > 0 ? 1.0 : 0.0;
            else *lo = *hi = x > 0 ? x : NAN;
            *special = s->kind == UN_SILU && x < 0 ? 2 : 1;
            return;
        }
        if (s->kind == UN_SILU && x == 0) {
            *lo = *hi = x;
            *special = 1;
            return;
        }
        double el, eh;
        er_ops_exp(-x, &el, &eh);
        double sl = er_ops_div_dn(1, er_ops_add_up(1, eh)), sh = er_ops_div_up(1, er_ops_add_dn(1, el));
        if (sh > 1) sh = 1;
        if (s->kind == UN_SIGMOID) {
            *lo = sl;
            *hi = sh;
        } else if (x > 0) {
            *lo = er_ops_mul_dn(x, sl);
            *hi = er_ops_mul_up(x, sh);
        } else {
            *lo = er_ops_mul_dn(x, sh);
            *hi = er_ops_mul_up(x, sl);
        }
        return;
    }
    default: { /* gelu: the certified erf where 1 + erf(t) is far from 0 (x >= -4), else MPFR at 64 bits */
        if (er_b_isinf(x) || x == 0) {
            *lo = *hi = x > 0 ? x : x == 0 ? x : NAN;
            *special = x < 0 ? 2 : 1;
            return;
        }
        if (!s->tanh_form && x >= -4) {
            /* t = x / sqrt(2) in [tl, th]; erf increasing: 1 + erf(t) in [1 + erf_lo(tl), 1 + erf_hi(th)],
             * which is at least 1 - erf(4 / sqrt(2)) > 6e-5 for x >= -4 (no ruinous cancellation) */
            double tl = x > 0 ? er_ops_mul_dn(x, s->c1l) : er_ops_mul_dn(x, s->c1h);
            double th = x > 0 ? er_ops_mul_up(x, s->c1h) : er_ops_mul_up(x, s->c1l), fl, fh, t;
            /* one evaluation: erf(th) <= erf(tl) + (2/sqrt(pi)) (th - tl), as erf' <= 2/sqrt(pi) < 1.13 */
            er_ops_erf_fast(tl, &fl, &t);
            fh = er_ops_add_up(t, er_ops_mul_up(1.13, er_ops_add_up(th, -tl)));
            double bl = er_ops_add_dn(1, fl), bh = er_ops_add_up(1, fh);
            if (bl > 0) {
                if (x > 0) {
                    *lo = er_ops_mul_dn(0.5, er_ops_mul_dn(x, bl));
                    *hi = er_ops_mul_up(0.5, er_ops_mul_up(x, bh));
                } else {
                    *lo = er_ops_mul_dn(0.5, er_ops_mul_dn(x, bh));
                    *hi = er_ops_mul_up(0.5, er_ops_mul_up(x, bl));
                }
                return;
            }
        }
        er_ops_mp *m = er_ops_mp_new(64, 6);
        if (!m) { /* no memory: an enclosure that decides nothing sends the element to the precise path */
            *lo = -INFINITY;
            *hi = INFINITY;
            return;
        }
        un_mp(s, m, x);
        er_ops_mp_get(m, 3, lo, hi);
        er_ops_mp_free(m);
        return;
    }
    }
}

/* un_mp as er_ops_mp_element's fill */
typedef struct {
    const un_state *s;
    double x;
} un_mp_ctx;

static void un_mp_fill(void *ctx, er_ops_mp *m)
{
    const un_mp_ctx *c = (const un_mp_ctx *)ctx;
    un_mp(c->s, m, c->x);
}

/* elements [e0, e1) of the result ctx (its state s set) */
static er_status un_exact_range(void *ctx, int64_t e0, int64_t e1, char *msg, size_t msg_size)
{
    er_opres *r = (er_opres *)ctx;
    un_state *s = (un_state *)r->state;
    for (int64_t e = e0; e < e1; e++) {
        double x = s->v[e], lo, hi;
        int sp;
        uint64_t b;
        un_fast(s, x, &lo, &hi, &sp);
        r->xlo[0][e] = lo;
        r->xhi[0][e] = hi;
        if (sp || er_ops_decide(s->of, lo, hi, &b)) {
            er_ops_store(&r->out[0], e, er_ops_round(s->of, sp == 2 ? NAN : lo));
            continue;
        }
        un_mp_ctx c = {s, x};
        er_status st = er_ops_mp_element(r, e, 6, 3, 1 << 16, un_mp_fill, &c, msg, msg_size);
        if (st != ER_OK) return st;
    }
    return ER_OK;
}

static er_status un_create(er_opres *r, int kind, char *msg, size_t msg_size)
{
    er_status st;
    const er_optensor *x = &r->in[0];
    un_state *s = (un_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", r->def->name);
    r->state = s;
    r->takes_from = 1;
    s->kind = kind;
    if (kind == UN_GELU && (st = er_ops_opt_choice(r, "approximate", "none tanh", 0, &s->tanh_form, msg, msg_size)) != ER_OK)
        return st;
    if ((st = er_ops_opt_format(r, "out", x->format, &s->of, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(x, &s->v, msg, msg_size)) != ER_OK) return st;
    s->n = er_optensor_count(x);
    if (kind == UN_GELU) { /* the constants' enclosures */
        er_ops_mp *m = er_ops_mp_new(64, 4);
        if (!m) return msgf(msg, msg_size, ER_ENOMEM, "gelu: out of memory");
        er_ops_mp_set_d(m, 0, 2);
        er_ops_mp_sqrt(m, 1, 0);
        er_ops_mp_set_d(m, 2, 1);
        er_ops_mp_div(m, 1, 2, 1);
        er_ops_mp_get(m, 1, &s->c1l, &s->c1h);
        er_ops_mp_pi(m, 1);
        er_ops_mp_div(m, 1, 0, 1);
        er_ops_mp_sqrt(m, 1, 1);
        er_ops_mp_get(m, 1, &s->c2l, &s->c2h);
        er_ops_mp_set_str(m, 1, "0.044715");
        er_ops_mp_get(m, 1, &s->c3l, &s->c3h);
        er_ops_mp_free(m);
    }
    if ((st = er_ops_alloc_output(r, 0, s->of, x->ndim, x->shape, msg, msg_size)) != ER_OK) return st;
    return er_ops_parallel(s->n, kind == UN_GELU || kind == UN_TANH ? 256 : 4096, un_exact_range, r, msg, msg_size);
}

static er_status exp_create(er_opres *r, char *m, size_t ms) { return un_create(r, UN_EXP, m, ms); }
static er_status relu_create(er_opres *r, char *m, size_t ms) { return un_create(r, UN_RELU, m, ms); }
static er_status sigmoid_create(er_opres *r, char *m, size_t ms) { return un_create(r, UN_SIGMOID, m, ms); }
static er_status tanh_create(er_opres *r, char *m, size_t ms) { return un_create(r, UN_TANH, m, ms); }
static er_status silu_create(er_opres *r, char *m, size_t ms) { return un_create(r, UN_SILU, m, ms); }
static er_status gelu_create(er_opres *r, char *m, size_t ms) { return un_create(r, UN_GELU, m, ms); }

/* ---- the bounds: intervals through the implementation's steps (docs/proofs/activations.md) ---- */

typedef struct iv {
    double l, h;
} iv;

static iv iv_of(double l, double h)
{
    iv r = {l, h};
    return r;
}

static iv iv_hull(iv a, iv b) { return iv_of(a.l < b.l ? a.l : b.l, a.h > b.h ? a.h : b.h); }

static iv iv_add(iv a, iv b) { return iv_of(er_ops_add_dn(a.l, b.l), er_ops_add_up(a.h, b.h)); }

static iv iv_mul(iv a, iv b)
{
    double c[4] = {a.l * b.l, a.l * b.h, a.h * b.l, a.h * b.h};
    double l = INFINITY, h = -INFINITY;
    for (int k = 0; k < 4; k++) {
        if (c[k] != c[k]) return iv_of(-INFINITY, INFINITY); /* 0 * inf */
        if (c[k] < l) l = c[k];
        if (c[k] > h) h = c[k];
    }
    return iv_of(er_b_down(l), er_b_up(h));
}

/* a / b for b > 0 */
static iv iv_div_pos(iv a, iv b)
{
    double l = a.l >= 0 ? a.l / b.h : a.l / b.l, h = a.h >= 0 ? a.h / b.l : a.h / b.h;
    if (l != l || h != h) return iv_of(-INFINITY, INFINITY);
    return iv_of(er_b_down(l), er_b_up(h));
}

static iv iv_rc(const er_openv *env, iv a)
{
    er_ops_round_compute(env, &a.l, &a.h);
    return a;
}

static iv iv_lib(const er_openv *env, double w, iv a)
{
    if (er_b_finite(a.l) && er_b_finite(a.h)) er_ops_lib_result(env, w, &a.l, &a.h);
    return a;
}

/* the constant c (enclosed by [cl, ch]) as an implementation holds it: c, or c rounded to compute */
static iv iv_const(const er_openv *env, double cl, double ch)
{
    iv c = iv_of(cl, ch), r = iv_rc(env, c);
    return iv_hull(c, r);
}

/* sigmoid's two forms (A: 1 / (1 + EXP(-x)); B, for x < 0: EXP(x) / (1 + EXP(x))), each step in compute */
static iv model_sigmoid(const er_openv *env, iv x, double ue, double ud)
{
    iv one = iv_of(1, 1);
    iv e = iv_of(0, 0);
    er_ops_exp_iv(-x.h, -x.l, &e.l, &e.h);
    e = iv_lib(env, ue, e);
    if (e.l < 0) e.l = 0;
    iv t = iv_rc(env, iv_add(one, e));
    iv y = iv_lib(env, ud, iv_div_pos(one, t));
    if (x.l < 0) {
        iv xn = iv_of(x.l, x.h < 0 ? x.h : 0), f;
        er_ops_exp_iv(xn.l, xn.h, &f.l, &f.h);
        f = iv_lib(env, ue, f);
        if (f.l < 0) f.l = 0;
        iv t2 = iv_rc(env, iv_add(one, f));
        y = iv_hull(y, iv_lib(env, ud, iv_div_pos(f, t2)));
    }
    if (y.l < 0) y.l = 0;
    return y;
}

static er_status un_bound_range(void *ctx, int64_t e0, int64_t e1, char *msg, size_t msg_size)
{
    er_ops_bjob *j = (er_ops_bjob *)ctx;
    un_state *s = (un_state *)j->r->state;
    const er_openv *env = j->env;
    double ue = er_ops_ulps(env, "exp"), ud = er_ops_ulps(env, "div"), ut = er_ops_ulps(env, "tanh"),
           uerf = er_ops_ulps(env, "erf");
    (void)msg;
    (void)msg_size;
    iv c1 = iv_const(env, s->c1l, s->c1h), c2 = iv_const(env, s->c2l, s->c2h), c3 = iv_const(env, s->c3l, s->c3h);
    for (int64_t e = e0; e < e1; e++) {
        double v = s->v[e], fl_ = 0, fh_ = 0;
        int sp = 0;
        /* gelu's exact value is special only at NaN, zeros and infinities: skip its enclosure otherwise */
        if (s->kind != UN_GELU || !er_b_finite(v) || v == 0) un_fast(s, v, &fl_, &fh_, &sp);
        int slack = j->r->slack[0] && j->r->slack[0][e] != 0;
        if (!slack && (sp == 2 || (sp == 1 && (!er_b_finite(fl_) || er_b_isinf(v))))) {
            /* a non-finite exact value, or an infinite input whose value is the function's limit (exp(-inf)
             * = 0, tanh(inf) = 1): every implementation outputs rounded's; no exact value: no bound */
            j->fl[e] = sp == 2 ? ER_OPB_NONFINITE | ER_OPB_UNCERTAIN : ER_OPB_NONFINITE;
            j->lo[e] = j->hi[e] = fl_;
            continue;
        }
        iv x, y;
        int unb = er_ops_in_iv(j->r, 0, e, v, &x.l, &x.h); /* results as inputs: within the slack */
        x = iv_rc(env, x);
        if (unb || !er_b_finite(x.l) || !er_b_finite(x.h)) { /* unbounded, or beyond compute's range when read */
            j->fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
            j->lo[e] = -INFINITY;
            j->hi[e] = INFINITY;
            continue;
        }
        switch (s->kind) {
        case UN_RELU: y = iv_of(x.l > 0 ? x.l : 0, x.h > 0 ? x.h : 0); break;
        case UN_EXP:
            er_ops_exp_iv(x.l, x.h, &y.l, &y.h);
            y = iv_lib(env, ue, y);
            if (y.l < 0) y.l = 0;
            break;
        case UN_TANH: {
            double a, b, t;
            er_ops_tanh_fast(x.l, &a, &t);
            er_ops_tanh_fast(x.h, &t, &b);
            y = iv_lib(env, ut, iv_of(a, b));
            if (y.l < -1) y.l = -1;
            if (y.h > 1) y.h = 1;
            break;
        }
        case UN_SIGMOID: y = model_sigmoid(env, x, ue, ud); break;
        case UN_SILU: {
            /* x * SIGMOID(x) rounded, or DIV(x, 1 + EXP(-x)) */
            iv sg = model_sigmoid(env, x, ue, ud);
            y = iv_rc(env, iv_mul(x, sg));
            iv en;
            er_ops_exp_iv(-x.h, -x.l, &en.l, &en.h);
            en = iv_lib(env, ue, en);
            if (en.l < 0) en.l = 0;
            iv t = iv_rc(env, iv_add(iv_of(1, 1), en));
            y = iv_hull(y, iv_lib(env, ud, iv_div_pos(x, t)));
            break;
        }
        default: { /* gelu */
            iv b;
            if (!s->tanh_form) {
                /* 1 + ERF(a), a = x / sqrt(2) computed as x * (1/sqrt(2)) or x / sqrt(2), the constant
                 * rounded to compute or not: within 2 ulps of compute of the exact x / sqrt(2) */
                iv a = iv_lib(env, 2.0, iv_mul(x, iv_of(s->c1l, s->c1h))), f;
                a = iv_hull(a, iv_rc(env, iv_mul(x, c1)));
                double t;
                er_ops_erf_fast(a.l, &f.l, &t);
                er_ops_erf_fast(a.h, &t, &f.h);
                f = iv_lib(env, uerf, f);
                b = iv_rc(env, iv_add(iv_of(1, 1), f));
            } else {
                /* 1 + TANH(inner), inner = sqrt(2/pi) (x + 0.044715 x^3) in any arrangement of at most five
                 * roundings in compute (x x x, the constant's product, the sum (same signs: no
                 * cancellation), the outer product; fused or not), the constants rounded or not: within 6
                 * ulps of compute of the value on the constants as held */
                iv x3 = iv_mul(iv_mul(x, x), x);
                iv in = iv_lib(env, 6.0, iv_mul(c2, iv_add(x, iv_mul(c3, x3))));
                iv f;
                double t;
                er_ops_tanh_fast(in.l, &f.l, &t);
                er_ops_tanh_fast(in.h, &t, &f.h);
                f = iv_lib(env, ut, f);
                if (f.l < -1) f.l = -1;
                if (f.h > 1) f.h = 1;
                b = iv_rc(env, iv_add(iv_of(1, 1), f));
            }
            /* 0.5 x b: the halving is exact but below compute's normal range, and the two products
             * in either order: both roundings covered by a widening of one ulp */
            iv p = iv_mul(iv_mul(x, b), iv_of(0.5, 0.5));
            y = iv_lib(env, 1.0, p);
            break;
        }
        }
        j->lo[e] = y.l;
        j->hi[e] = y.h;
    }
    return ER_OK;
}

static er_status un_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                           char *msg, size_t msg_size)
{
    un_state *s = (un_state *)r->state;
    (void)i;
    er_ops_bjob j = {r, env, lo, hi, flags};
    return er_ops_parallel(s->n, s->kind == UN_GELU || s->kind == UN_TANH ? 256 : 4096, un_bound_range, &j, msg,
                           msg_size);
}

/* ---- the table entries ---- */

static const er_boundary exp_b[] = {
    {"exp", "library", "exp within ulps of compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary relu_b[] = {
    {"out", "cast", "max(x, 0) rounded once to the output format", "each element"},
};
static const er_boundary sigmoid_b[] = {
    {"exp", "library", "exp(-x) (or exp(x) for x < 0) within ulps of compute", "each element"},
    {"add", "compute", "1 + exp rounded to compute", "each element"},
    {"divide", "library", "1 / (1 + exp(-x)) (or exp(x) / (1 + exp(x))) within ulps of compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary tanh_b[] = {
    {"tanh", "library", "tanh within ulps of compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary silu_b[] = {
    {"sigmoid", "compute", "sigmoid's steps, then x * sigmoid rounded; or x / (1 + exp(-x)) within ulps", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary gelu_b[] = {
    {"inner", "compute", "none: x * (1/sqrt(2)); tanh: sqrt(2/pi) (x + 0.044715 x^3), each step rounded to compute, "
                         "the constants rounded to compute or not", "each element"},
    {"function", "library", "erf (none) or tanh (tanh) within ulps of compute", "each element"},
    {"add", "compute", "1 + erf (or 1 + tanh) rounded to compute", "each element"},
    {"multiply", "compute", "0.5 * x * (1 + ...) rounded to compute, in either order", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

#define NB(b) (int)(sizeof b / sizeof b[0])
#define UNARY(var, nm, cr, b)                                                                                      \
    const er_opdef var = {nm, 1, 1, un_inputs, 1, un_outputs, b, NB(b), ER_OPSTD_NORMAL | ER_OPSTD_ANY,            \
                          "normal, any_order", cr, un_bounds, un_free, er_opn_unary}

UNARY(er_opdef_exp, "exp", exp_create, exp_b);
UNARY(er_opdef_relu, "relu", relu_create, relu_b);
UNARY(er_opdef_sigmoid, "sigmoid", sigmoid_create, sigmoid_b);
UNARY(er_opdef_tanh, "tanh", tanh_create, tanh_b);
UNARY(er_opdef_silu, "silu", silu_create, silu_b);
UNARY(er_opdef_gelu, "gelu", gelu_create, gelu_b);
