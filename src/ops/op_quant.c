/* op_quant.c: quantize(input, scale?) to fp8/fp6/fp4 with a per-tensor, per-row, OCP MX (block 32, e8m0) or
 * NVFP4 (block 16, e4m3 and a per-tensor f32) scale: outputs "q" and "scale", each the exact value rounded
 * once, and bounds covering every admitted implementation; proof: docs/proofs/quantize.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/formats.h"
#include "../host/er_msg.h"
#include "op_impl.h"

#define msgf er_msgf

enum { QS_TENSOR = 0, QS_ROW = 1, QS_MX = 2, QS_NVFP4 = 3 };

static const char *const q_inputs[] = {"input", "scale"};
static const char *const q_outputs[] = {"q", "scale"};
static const er_boundary q_boundaries[] = {
    {"scale", "cast", "the scale rounded once to its format (f32; e8m0 for mx; e4m3 for nvfp4's block scales)",
     "each scale"},
    {"q", "cast", "input / stored scale rounded once to the element format (saturating when saturate=1)",
     "each element"},
};

typedef struct q_state {
    double *x;
    int64_t rows, n, group, ngroups; /* group: elements per scale along the last dimension */
    int scheme, fmt, sfmt, saturate, given;
    double fmax, emax;
    double *gscale;  /* tensor/row given scales (per row; the tensor's repeated) */
    double st;       /* nvfp4: the per-tensor scale (given, or the rounded computed one) */
    double st_exact_lo, st_exact_hi; /* nvfp4 computed: amax / 2688 enclosed */
    double *amax;    /* per scale group: the exact amax; NaN when the group holds a NaN or infinity */
} q_state;

ER_OPS_STATE_FREE(q_free, q_state, s->x, s->gscale, s->amax)

/* RN_fmt(a / b) for binary64 a, b (b > 0), decided exactly: *lo, *hi enclose a / b */
static uint64_t quot_round(int fmt, double a, double b, int saturate, double fm, double *lo, double *hi)
{
    double q = a / b;
    uint64_t bits;
    if (!isfinite(q) || fma(q, b, -a) == 0) {
        *lo = *hi = q;
    } else {
        *lo = er_b_down(q);
        *hi = er_b_up(q);
    }
    double l = *lo, h = *hi;
    if (saturate) {
        l = fmax(-fm, fmin(fm, l));
        h = fmax(-fm, fmin(fm, h));
    }
    if (er_ops_decide(fmt, l, h, &bits)) return bits;
    /* an output rounding boundary between q's binary64 neighbours: the exact quotient is a rational
     * that is not that boundary (else q would be exact), so a few more bits decide it */
    for (int prec = 128;; prec *= 2) {
        er_ops_mp *mp = er_ops_mp_new(prec, 2);
        if (!mp) return er_ops_round(fmt, q);
        er_ops_mp_set_d(mp, 0, a);
        er_ops_mp_set_d(mp, 1, b);
        er_ops_mp_div(mp, 0, 0, 1);
        int ok = er_ops_mp_decide(mp, 0, fmt, &bits);
        er_ops_mp_free(mp);
        if (ok || prec > 4096) return ok ? bits : er_ops_round(fmt, q);
    }
}

static double val_of(int fmt, uint64_t bits)
{
    double v;
    er_from_bits(fmt, bits, &v);
    return v;
}

/* the element's exact quotient x / scale (scale > 0; 0 gives q = 0 of x's sign), rounded */
static void q_elem(er_opres *r, q_state *s, int64_t e, double scale)
{
    double x = s->x[e], lo, hi;
    uint64_t bits;
    if (!isfinite(x) || !(scale == scale)) {
        r->xlo[0][e] = r->xhi[0][e] = NAN;
        er_ops_store(&r->out[0], e, er_ops_round(s->fmt, NAN));
        return;
    }
    if (scale == 0) {
        bits = er_ops_round(s->fmt, x == 0 ? x : 0.0 * x);
        r->xlo[0][e] = r->xhi[0][e] = 0.0;
    } else {
        bits = quot_round(s->fmt, x, scale, s->saturate, s->fmax, &lo, &hi);
        r->xlo[0][e] = lo;
        r->xhi[0][e] = hi;
    }
    er_ops_store(&r->out[0], e, bits);
}

typedef struct q_job {
    er_opres *r;
    q_state *s;
} q_job;

/* the exact scale of group g (row, block), its rounding stored in output 1 */
static double q_scale_exact(er_opres *r, q_state *s, int64_t g)
{
    double a = s->amax[g], lo, hi, v;
    uint64_t bits;
    if (!(a == a)) {
        r->xlo[1][g] = r->xhi[1][g] = NAN;
        er_ops_store(&r->out[1], g, er_ops_round(s->sfmt, NAN));
        return NAN;
    }
    switch (s->scheme) {
    case QS_MX: {
        int ex = 0;
        if (a > 0) frexp(a, &ex); /* a = m 2^ex, m in [1/2, 1): floor(log2 a) = ex - 1 */
        double sh = a > 0 ? (double)(ex - 1) - s->emax : -127;
        if (sh < -127) sh = -127;
        if (sh > 127) sh = 127;
        v = ldexp(1.0, (int)sh);
        r->xlo[1][g] = r->xhi[1][g] = v;
        er_ops_store(&r->out[1], g, er_ops_round(s->sfmt, v));
        return v;
    }
    case QS_NVFP4:
        if (s->st == 0 || a == 0) {
            r->xlo[1][g] = r->xhi[1][g] = 0;
            er_ops_store(&r->out[1], g, er_ops_round(s->sfmt, 0.0));
            return 0;
        }
        bits = quot_round(s->sfmt, a, 6 * s->st, 1, 448.0, &lo, &hi);
        break;
    default:
        if (s->given) {
            v = s->gscale[g];
            r->xlo[1][g] = r->xhi[1][g] = v;
            er_ops_store(&r->out[1], g, er_ops_round(s->sfmt, v));
            return v;
        }
        if (a == 0) {
            r->xlo[1][g] = r->xhi[1][g] = 0;
            er_ops_store(&r->out[1], g, er_ops_round(s->sfmt, 0.0));
            return 0;
        }
        bits = quot_round(s->sfmt, a, s->fmax, 0, 0, &lo, &hi);
        break;
    }
    r->xlo[1][g] = lo;
    r->xhi[1][g] = hi;
    er_ops_store(&r->out[1], g, bits);
    return val_of(s->sfmt, bits);
}

static er_status q_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    q_job *j = (q_job *)ctx;
    q_state *s = j->s;
    (void)msg;
    (void)msg_size;
    int64_t per_row = s->n / s->group;
    for (int64_t row = r0; row < r1; row++) {
        for (int64_t k = 0; k < per_row; k++) {
            int64_t g = s->scheme == QS_TENSOR ? 0 : row * per_row + k;
            double sc = s->scheme == QS_TENSOR ? val_of(s->sfmt, er_ops_load(&j->r->out[1], 0))
                                               : q_scale_exact(j->r, s, g);
            if (s->scheme == QS_NVFP4 && sc == sc) sc = sc * s->st; /* exact: e4m3 times f32 */
            for (int64_t i = 0; i < s->group; i++) q_elem(j->r, s, row * s->n + k * s->group + i, sc);
        }
    }
    return ER_OK;
}

static int fmt_of(const char *t, int *fmt)
{
    static const struct { const char *k; int f; } tab[] = {
        {"f8e4m3", ER_FMT_F8E4M3FN}, {"f8e5m2", ER_FMT_F8E5M2}, {"f6e2m3", ER_FMT_F6E2M3FN},
        {"f6e3m2", ER_FMT_F6E3M2FN}, {"f4e2m1", ER_FMT_F4E2M1FN},
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (!strcmp(t, tab[k].k)) {
            *fmt = tab[k].f;
            return 1;
        }
    return er_format_from_name(t, fmt) == ER_OK &&
           (*fmt == ER_FMT_F8E4M3FN || *fmt == ER_FMT_F8E5M2 || *fmt == ER_FMT_F6E2M3FN || *fmt == ER_FMT_F6E3M2FN ||
            *fmt == ER_FMT_F4E2M1FN);
}

static er_status q_create(er_opres *r, char *msg, size_t msg_size)
{
    er_status st;
    const er_optensor *x = &r->in[0];
    q_state *s = (q_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "quantize: out of memory");
    r->state = s;
    er_format_info fi;
    if (er_format_get_info(x->format, &fi) != ER_OK || fi.kind != ER_KIND_FLOAT || !fi.is_signed)
        return msgf(msg, msg_size, ER_EINVAL, "quantize: the input is %s, not a signed float format",
                    er_format_name(x->format) ? er_format_name(x->format) : "?");
    if (x->ndim < 1) return msgf(msg, msg_size, ER_EINVAL, "quantize: the input is a scalar; give it a dimension");
    if ((st = er_ops_opt_choice(r, "scheme", "tensor row mx nvfp4", 0, &s->scheme, msg, msg_size)) != ER_OK) return st;
    const char *ft = er_ops_opt(r, "fmt");
    if (!ft) ft = s->scheme == QS_NVFP4 ? "f4e2m1" : "f8e4m3";
    if (!fmt_of(ft, &s->fmt))
        return msgf(msg, msg_size, ER_EINVAL, "quantize: fmt=%s is not one of f8e4m3, f8e5m2, f6e2m3, f6e3m2, f4e2m1",
                    ft);
    if (s->scheme == QS_NVFP4 && s->fmt != ER_FMT_F4E2M1FN)
        return msgf(msg, msg_size, ER_EINVAL, "quantize: scheme=nvfp4 takes fmt=f4e2m1 only, not %s", ft);
    int sat;
    if ((st = er_ops_opt_bool(r, "saturate", 1, &sat, msg, msg_size)) != ER_OK) return st;
    er_format_info ei;
    er_format_get_info(s->fmt, &ei);
    s->saturate = sat || !ei.has_nan; /* fp6 and fp4 have neither infinity nor NaN: they saturate */
    er_from_bits(s->fmt, ei.max_finite_bits, &s->fmax);
    s->emax = ei.emax;
    s->sfmt = s->scheme == QS_MX ? ER_FMT_F8E8M0FNU : s->scheme == QS_NVFP4 ? ER_FMT_F8E4M3FN : ER_FMT_F32;
    int64_t count = er_optensor_count(x);
    s->n = x->shape[x->ndim - 1];
    s->rows = s->n ? count / s->n : 0;
    s->group = s->scheme == QS_MX ? 32 : s->scheme == QS_NVFP4 ? 16 : s->n;
    if (s->n % (s->group ? s->group : 1))
        return msgf(msg, msg_size, ER_EINVAL, "quantize: scheme=%s needs the last dimension (%lld) to be a multiple of %lld",
                    s->scheme == QS_MX ? "mx" : "nvfp4", (long long)s->n, (long long)s->group);
    if ((st = er_ops_values(x, &s->x, msg, msg_size)) != ER_OK) return st;
    int64_t per_row = s->group ? s->n / s->group : 0;
    s->ngroups = s->scheme == QS_TENSOR ? 1 : s->rows * per_row;
    /* the scale input */
    double *sv = NULL;
    if (r->ninputs > 1 && r->has_in[1]) {
        if (s->scheme == QS_MX)
            return msgf(msg, msg_size, ER_EINVAL, "quantize: scheme=mx defines its scales (OCP MX); give no scale");
        int64_t sc = er_optensor_count(&r->in[1]), want = s->scheme == QS_ROW ? s->rows : 1;
        if (sc != want)
            return msgf(msg, msg_size, ER_EINVAL, "quantize: scale has %lld elements; scheme=%s takes %lld", (long long)sc,
                        s->scheme == QS_ROW ? "row" : s->scheme == QS_NVFP4 ? "nvfp4" : "tensor", (long long)want);
        if ((st = er_ops_values(&r->in[1], &sv, msg, msg_size)) != ER_OK) return st;
        for (int64_t k = 0; k < sc; k++)
            if (!(sv[k] > 0) || !isfinite(sv[k])) {
                double bad = sv[k];
                free(sv);
                return msgf(msg, msg_size, ER_EINVAL, "quantize: scale element %lld is %g, not a positive finite value",
                            (long long)k, bad);
            }
        s->given = 1;
    }
    s->amax = (double *)malloc(sizeof(double) * (size_t)(s->ngroups ? s->ngroups : 1));
    if (!s->amax) {
        free(sv);
        return msgf(msg, msg_size, ER_ENOMEM, "quantize: out of memory");
    }
    for (int64_t g = 0; g < s->ngroups; g++) s->amax[g] = 0;
    double tmax = 0;
    int tbad = 0;
    for (int64_t e = 0; e < count; e++) {
        int64_t g = s->scheme == QS_TENSOR ? 0 : (e / s->n) * per_row + (e % s->n) / s->group;
        double a = fabs(s->x[e]);
        if (!isfinite(a)) {
            s->amax[g] = NAN;
            tbad = 1;
        } else if (s->amax[g] == s->amax[g] && a > s->amax[g]) {
            s->amax[g] = a;
        }
        if (isfinite(a) && a > tmax) tmax = a;
    }
    if (s->scheme == QS_TENSOR || s->scheme == QS_ROW) {
        if (s->given) {
            s->gscale = sv;
            sv = NULL;
        }
    } else if (s->scheme == QS_NVFP4) {
        if (s->given) {
            s->st = sv[0];
            s->st_exact_lo = s->st_exact_hi = sv[0];
        } else if (tbad) {
            s->st = NAN;
        } else {
            /* s_t = RN_f32(amax / (6 * 448)) */
            double lo, hi;
            uint64_t b = tmax > 0 ? quot_round(ER_FMT_F32, tmax, 2688.0, 0, 0, &lo, &hi) : 0;
            s->st = tmax > 0 ? val_of(ER_FMT_F32, b) : 0;
            s->st_exact_lo = tmax > 0 ? lo : 0;
            s->st_exact_hi = tmax > 0 ? hi : 0;
        }
    }
    free(sv);
    int64_t qshape[ER_OP_MAXDIM], sshape[ER_OP_MAXDIM];
    int snd = 0;
    for (int d = 0; d < x->ndim; d++) qshape[d] = x->shape[d];
    if (s->scheme != QS_TENSOR) {
        for (int d = 0; d + 1 < x->ndim; d++) sshape[snd++] = x->shape[d];
        sshape[snd++] = s->scheme == QS_ROW ? 1 : per_row;
    }
    if ((st = er_ops_alloc_output(r, 0, s->fmt, x->ndim, qshape, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_alloc_output(r, 1, s->sfmt, snd, sshape, msg, msg_size)) != ER_OK) return st;
    if (s->scheme == QS_TENSOR) q_scale_exact(r, s, 0);
    if (s->rows == 0 || s->n == 0) return ER_OK;
    q_job j = {r, s};
    return er_ops_parallel(s->rows, 1 + 65536 / (s->n + 1), q_exact_rows, &j, msg, msg_size);
}

/* ---- the bounds (docs/proofs/quantize.md) ---- */

/* [l, h] widened by the relative g and the absolute a */
static void widen(double *l, double *h, double g, double a)
{
    *l = er_ops_add_dn(*l >= 0 ? er_ops_mul_dn(*l, er_b_down(1 - g)) : er_ops_mul_dn(*l, er_b_up(1 + g)), -a);
    *h = er_ops_add_up(*h >= 0 ? er_ops_mul_up(*h, er_b_up(1 + g)) : er_ops_mul_up(*h, er_b_down(1 - g)), a);
}

static double rn_val(int fmt, double v)
{
    double o;
    er_round_double(fmt, v, ER_RND_NEAREST_EVEN, &o);
    return o;
}

/* the stored scales a correct implementation can produce for group g: [*sl, *sh] (values), and the
 * enclosure before the scale's rounding [*pl, *ph]; returns 0 for a group without a bound */
static int scale_range(const q_state *s, const er_opres *r, const er_openv *env, int64_t g, double *pl, double *ph,
                       double *sl, double *sh)
{
    double a = s->amax[g], u = env->u, eta = env->eta;
    if (!(a == a)) return 0;
    double g3 = er_b_up(3 * u / (1 - 3 * u));
    switch (s->scheme) {
    case QS_MX:
        *pl = *ph = r->xlo[1][g];
        break;
    case QS_NVFP4: {
        /* s_t: the given one, or every f32 the computed one can round to */
        double tl = s->st_exact_lo, th = s->st_exact_hi;
        if (!s->given) {
            widen(&tl, &th, u, 0);
            tl = rn_val(ER_FMT_F32, tl);
            th = rn_val(ER_FMT_F32, th);
        }
        if (!(s->st == s->st)) return 0;
        if (a == 0 || th == 0) {
            *pl = 0;
            *ph = tl == 0 ? 448.0 : er_ops_div_up(a, er_ops_mul_dn(6, tl));
        } else {
            *pl = er_ops_div_dn(a, er_ops_mul_up(6, th));
            *ph = tl > 0 ? er_ops_div_up(a, er_ops_mul_dn(6, tl)) : 448.0;
            widen(pl, ph, g3, 3 * eta);
        }
        if (*pl < 0) *pl = 0;
        if (*pl > 448) *pl = 448;
        if (*ph > 448) *ph = 448;
        break;
    }
    default:
        if (s->given) {
            *pl = *ph = s->gscale[g];
        } else if (a == 0) {
            *pl = 0;
            *ph = env->max_c; /* an all-zero group: any scale (q is 0 whatever it is) */
        } else {
            *pl = r->xlo[1][g];
            *ph = r->xhi[1][g];
            widen(pl, ph, u, eta); /* fl(amax / Fmax) or fl(amax fl(1 / Fmax)) */
        }
        break;
    }
    /* flush_to_zero: a computed scale below compute's least normal may be produced as 0 */
    if (env->ftz && !s->given && s->scheme != QS_MX && *pl < env->tiny) *pl = 0;
    *sl = rn_val(s->sfmt, *pl);
    *sh = rn_val(s->sfmt, *ph);
    return 1;
}

static er_status q_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                          char *msg, size_t msg_size)
{
    q_state *s = (q_state *)r->state;
    (void)msg;
    (void)msg_size;
    double u = env->u, eta = env->eta;
    double g2 = er_b_up(2 * u / (1 - 2 * u)), g3 = er_b_up(3 * u / (1 - 3 * u));
    int64_t per_row = s->group ? s->n / s->group : 0;
    if (i == 1) {
        for (int64_t g = 0; g < s->ngroups; g++) {
            double pl, ph, sl, sh;
            if (!scale_range(s, r, env, g, &pl, &ph, &sl, &sh)) {
                flags[g] = ER_OPB_NONFINITE;
                lo[g] = hi[g] = NAN;
                continue;
            }
            lo[g] = pl;
            hi[g] = ph;
        }
        return ER_OK;
    }
    int64_t count = s->rows * s->n;
    for (int64_t e = 0; e < count; e++) {
        int64_t g = s->scheme == QS_TENSOR ? 0 : (e / s->n) * per_row + (e % s->n) / s->group;
        double x = s->x[e], pl, ph, sl, sh;
        if (!isfinite(x) || !scale_range(s, r, env, g, &pl, &ph, &sl, &sh)) {
            flags[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
            lo[e] = -INFINITY;
            hi[e] = INFINITY;
            continue;
        }
        if (x == 0 || s->amax[g] == 0) {
            lo[e] = hi[e] = 0.0 * x;
            continue;
        }
        /* flush_to_zero: a subnormal x may be read as 0 (q = 0; 0 / 0 where the scale is flushed too) */
        int xflush = env->ftz && fabs(x) < env->tiny;
        if (xflush && sl <= 0) {
            flags[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
            lo[e] = -INFINITY;
            hi[e] = INFINITY;
            continue;
        }
        double g_rel = g2;
        if (s->scheme == QS_NVFP4) { /* the divisor stored block scale * s_t, rounded in f32 */
            double tl = s->st_exact_lo, th = s->st_exact_hi;
            if (!s->given) {
                widen(&tl, &th, u, 0);
                tl = rn_val(ER_FMT_F32, tl);
                th = rn_val(ER_FMT_F32, th);
            }
            sl = er_ops_mul_dn(sl, tl);
            sh = er_ops_mul_up(sh, th);
            g_rel = g3;
        }
        double l, h;
        if (s->scheme == QS_MX) { /* x / X is exact (X a power of two) */
            l = h = x / sl;
        } else if (sl <= 0) { /* a zero stored scale: q = 0, or any quotient up to saturation */
            l = x > 0 ? 0 : -INFINITY;
            h = x > 0 ? INFINITY : 0;
        } else if (x > 0) {
            l = er_ops_div_dn(x, sh);
            h = er_ops_div_up(x, sl);
        } else {
            l = er_ops_div_dn(x, sl);
            h = er_ops_div_up(x, sh);
        }
        if (s->scheme != QS_MX) widen(&l, &h, g_rel, 2 * eta); /* x / s can be exact for mx (a power of 2) */
        if (xflush) {
            if (l > 0) l = 0;
            if (h < 0) h = 0;
        }
        if (s->saturate) {
            l = fmax(-s->fmax, fmin(s->fmax, l));
            h = fmax(-s->fmax, fmin(s->fmax, h));
        }
        er_ops_put_bound(flags, lo, hi, e, l, h, s->saturate ? INFINITY : env->max_c); /* saturated: finite */
    }
    return ER_OK;
}

const er_opdef er_opdef_quantize = {
    "quantize", 1, 2, q_inputs, 2, q_outputs, q_boundaries,
    (int)(sizeof q_boundaries / sizeof q_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    q_create, q_bounds, q_free, er_opn_quantize,
};
