/* interp_bounds.c: the interpreter's bounds mode: enclosures of every value a correct device can hold, per op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/interval.h"
#include "exactref/math.h"
#include "exactref/core/er_bounds.h"
#include "exactref/core/er_exp.h"
#include "interp_arith.h"
#include "interp_bounds.h"
#include "../result_internal.h"

/* ---------------------------------------------------------------- values of a format */

static double V(int f, uint64_t b)
{
    if (f == ER_FMT_F32) { /* every f32 is a binary64: no conversion call */
        float v;
        uint32_t u = (uint32_t)b;
        memcpy(&v, &u, 4);
        return (double)v;
    }
    return er_b_value(f, b);
}

/* The pattern of a value of format f (an endpoint: always a value of f or an infinity). */
static uint64_t P(int f, double x)
{
    uint64_t b = 0;
    if (f == ER_FMT_F32 && (double)(float)x == x) {
        float v = (float)x;
        uint32_t u;
        memcpy(&u, &v, 4);
        return u;
    }
    if (er_bits_of(f, x, &b) != ER_OK) {
        double r = 0;
        er_round_double(f, x, ER_RND_NEAREST_EVEN, &r);
        er_bits_of(f, r, &b);
    }
    return b;
}

static double fmt_max(int f)
{
    er_fmt d = er_fmt_get(f);
    return V(f, er_fmt_maxmag(d) << d.pad);
}

static int fmt_inf(int f) { return er_fmt_has_inf(er_fmt_get(f)); }

static void top(double *lo, double *hi, uint8_t *fl)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    *fl = IT_BF_NAN;
}

void it_bnd_point(int fmt, uint64_t bits, double *lo, double *hi, uint8_t *fl)
{
    double v;
    if (fmt == ER_FMT_F32) { /* the common case without a conversion call: every f32 is a binary64 */
        float f;
        uint32_t u = (uint32_t)bits;
        memcpy(&f, &u, 4);
        v = (double)f;
    } else {
        v = V(fmt, bits);
    }
    if (isnan(v)) {
        top(lo, hi, fl);
        return;
    }
    *lo = *hi = v;
    *fl = 0;
}

void it_bnd_lane(const it_sv *s, int64_t i, double *lo, double *hi, uint8_t *fl)
{
    int64_t k = s->n == 1 ? 0 : i;
    if (s->lo) {
        *lo = s->lo[k];
        *hi = s->hi[k];
        *fl = s->fl[k];
    } else {
        it_bnd_point(s->fmt, s->pt[k], lo, hi, fl);
    }
}

/* The device's value is a value of f within the reals [L, H]: the values of f from RU(L) to RD(H); beyond
 * the largest finite value an infinity (or NaN where f has none). */
static void out_round(int f, double L, double H, double *lo, double *hi, uint8_t *fl)
{
    double mx = fmt_max(f), r;
    if (isnan(L) || isnan(H)) {
        top(lo, hi, fl);
        return;
    }
    if (L < -mx) {
        *lo = fmt_inf(f) ? -INFINITY : -mx;
        if (!fmt_inf(f)) *fl |= IT_BF_NAN;
    } else {
        er_round_double(f, L, ER_RND_POSITIVE_INF, &r);
        *lo = r;
    }
    if (H > mx) {
        *hi = fmt_inf(f) ? INFINITY : mx;
        if (!fmt_inf(f)) *fl |= IT_BF_NAN;
    } else {
        er_round_double(f, H, ER_RND_NEGATIVE_INF, &r);
        *hi = r;
    }
    if (*lo > *hi) { /* no value of f in [L, H] (cannot happen for a sound [L, H]): keep both neighbours */
        double t = *lo;
        *lo = *hi;
        *hi = t;
    }
}

/* flush_to_zero: a value in the subnormal range may be read or written as zero. */
static void ftz_widen(int on, int f, double *lo, double *hi)
{
    double tiny;
    if (!on) return;
    tiny = ldexp(1.0, er_fmt_emin(er_fmt_get(f)));
    if (*lo < tiny && *hi > -tiny) {
        if (*lo > 0) *lo = 0;
        if (*hi < 0) *hi = 0;
    }
}

static int has0(double lo, double hi) { return lo <= 0 && hi >= 0; }
static int hasinf(double lo, double hi) { return isinf(lo) || isinf(hi); }

static double mn4(double a, double b, double c, double d)
{
    double m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
}
static double mx4(double a, double b, double c, double d)
{
    double m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}

/* ---------------------------------------------------------------- the device instructions' errors */

/*
 * Defaults, in ulps of the result's format (docs/interp.md gives each with its source): the PTX ISA's
 * "Floating Point Instructions" (section 9.7.3): ex2.approx.f32 (9.7.3.21: at most 2 ulps from the correctly
 * rounded result, so 2.5 ulps from the exact value; exp2 with any rounding: what cuTile lowers it to),
 * div.approx.f32 / div.full.f32 (9.7.3.8: 2 ulps; divf approx / full), rsqrt.approx.f32 (9.7.3.16: relative
 * 2^-22.9, under 2 ulps), sqrt.approx.f32 (9.7.3.15: relative 2^-23, under 2 ulps), tanh.approx.f32
 * (9.7.3.22: relative 2^-11 over the whole range: 2^12 ulps of f32); exp approx / full: ex2 of x log2(e),
 * the CUDA Math API's figure for __expf, 2 + 1.173 |x| ulps.
 */
static double ax_default(int ax, double xmax)
{
    switch (ax) {
    case ER_INTERP_AX_EXP2: return 2.5;
    case ER_INTERP_AX_EXP: return 2 + ceil(1.173 * xmax);
    case ER_INTERP_AX_DIV: return 2;
    case ER_INTERP_AX_RSQRT: return 2;
    case ER_INTERP_AX_SQRT: return 2;
    default: return 4096; /* tanh: 2^-11 relative = 2^(23 - 11) ulps of f32 */
    }
}

/* [L, H] widened by N ulps of f at the endpoints (and N ulps of f's subnormals, plus extra_abs). */
static void ulps_widen(int f, double N, double extra_abs, double *L, double *H)
{
    er_fmt d = er_fmt_get(f);
    double u = ldexp(N, -d.mbits), a = ldexp(N, er_fmt_emin(d) - d.mbits) + extra_abs;
    double el = er_b_up(er_b_up(u * fabs(*L)) + a), eh = er_b_up(er_b_up(u * fabs(*H)) + a);
    if (isnan(el) || isnan(eh)) {
        *L = -INFINITY;
        *H = INFINITY;
        return;
    }
    *L = er_b_down(er_b_down(*L - el));
    *H = er_b_up(er_b_up(*H + eh));
}

static double mf(er_math_op mo, int f, double x, int dir)
{
    uint64_t o = 0;
    unsigned fl;
    if (er_math_unary(mo, f, P(f, x), dir, &o, &fl) != ER_OK) return NAN;
    return V(f, o);
}

static double d64div(double a, double b, int dir)
{
    uint64_t pa, pb;
    double r;
    memcpy(&pa, &a, 8);
    memcpy(&pb, &b, 8);
    pa = it_f_div(ER_FMT_F64, pa, pb, dir, 0u);
    memcpy(&r, &pa, 8);
    return r;
}

static double axu(const it_bopts *o, int ax, double xmax) { return o->ulps[ax] >= 0 ? o->ulps[ax] : ax_default(ax, xmax); }

/* ---------------------------------------------------------------- elementwise */

static int rdir(const it_op *op) { return op->rnd >= 0 && op->rnd <= ER_RND_POSITIVE_INF ? op->rnd : ER_RND_NEAREST_EVEN; }

static double fa(int f, double x, double y, int neg, int dir) { return V(f, it_f_add(f, P(f, x), P(f, y), neg, dir, 0u)); }
static double fm(int f, double x, double y, int dir) { return V(f, it_f_mul(f, P(f, x), P(f, y), dir, 0u)); }
static double fd(int f, double x, double y, int dir) { return V(f, it_f_div(f, P(f, x), P(f, y), dir, 0u)); }
static double ff(int f, double x, double y, double z, int dir) { return V(f, it_f_fma(f, P(f, x), P(f, y), P(f, z), dir, 0u)); }

static er_math_op math_of(int code)
{
    switch (code) {
    case OP_FLOOR: return ER_MATH_FLOOR;
    case OP_CEIL: return ER_MATH_CEIL;
    case OP_EXP: return ER_MATH_EXP;
    case OP_EXP2: return ER_MATH_EXP2;
    case OP_LOG: return ER_MATH_LOG;
    case OP_LOG2: return ER_MATH_LOG2;
    case OP_RSQRT: return ER_MATH_RSQRT;
    case OP_TANH: return ER_MATH_TANH;
    case OP_SINH: return ER_MATH_SINH;
    case OP_COSH: return ER_MATH_COSH;
    case OP_SIN: return ER_MATH_SIN;
    case OP_COS: return ER_MATH_COS;
    case OP_TAN: return ER_MATH_TAN;
    case OP_SQRT: return ER_MATH_SQRT;
    default: return ER_MATH_EXP;
    }
}

/* An approximate instruction (approx model): the exact function's f64 enclosure over [al, ah], widened. */
static void approx_unary(const it_bopts *o, const it_op *op, int f, double al, double ah, double *lo, double *hi, uint8_t *fl)
{
    int ax = op->code == OP_EXP2 ? ER_INTERP_AX_EXP2 : op->code == OP_EXP ? ER_INTERP_AX_EXP : op->code == OP_RSQRT ? ER_INTERP_AX_RSQRT
           : op->code == OP_SQRT ? ER_INTERP_AX_SQRT : ER_INTERP_AX_TANH;
    er_math_op mo = math_of(op->code);
    double L, H, xmax = fabs(al) > fabs(ah) ? fabs(al) : fabs(ah), N = axu(o, ax, xmax);
    if (op->code == OP_RSQRT) {
        if (al <= 0) { top(lo, hi, fl); return; }
        L = mf(mo, f, ah, ER_RND_NEGATIVE_INF);
        H = mf(mo, f, al, ER_RND_POSITIVE_INF);
    } else {
        if (op->code == OP_SQRT && al < 0) {
            if (ah < 0) { top(lo, hi, fl); return; }
            *fl |= IT_BF_NAN;
            al = 0;
        }
        /* the exact function's ends: exp2 and exp by the core's certified polynomial in binary64 (a tenth of
         * MPFR's time; include/exactref/core/er_exp.h), else rounded outward into the format itself (the math
         * library's directed roundings); well inside the error widened below */
        double t;
        if (!((op->code == OP_EXP2 && er_b_exp2_enclose(al, &L, &t) && er_b_exp2_enclose(ah, &t, &H)) ||
              (op->code == OP_EXP && er_b_exp_enclose(al, &L, &t) && er_b_exp_enclose(ah, &t, &H)))) {
            L = mf(mo, f, al, ER_RND_NEGATIVE_INF);
            H = mf(mo, f, ah, ER_RND_POSITIVE_INF);
        }
    }
    ulps_widen(f, N, 0, &L, &H);
    out_round(f, L, H, lo, hi, fl);
}

static void lane_ew(const it_bopts *o, const it_op *op, int f, int rf, double al, double ah, uint8_t an, double bl, double bh,
                    uint8_t bn, double cl, double ch, uint8_t cn, double *lo, double *hi, uint8_t *fl)
{
    int dir = rdir(op), ftz = op->ftz && f == ER_FMT_F32;
    int approx = op->rnd == IT_RND_APPROX || op->rnd == IT_RND_FULL;
    *fl = (uint8_t)((an | bn | cn) & IT_BF_NAN);
    ftz_widen(ftz, f, &al, &ah);
    ftz_widen(ftz, f, &bl, &bh);
    switch (op->code) {
    case OP_ADDF:
        if ((ah == INFINITY && bl == -INFINITY) || (al == -INFINITY && bh == INFINITY)) { top(lo, hi, fl); return; }
        *lo = fa(f, al, bl, 0, dir);
        *hi = fa(f, ah, bh, 0, dir);
        break;
    case OP_SUBF:
        if ((ah == INFINITY && bh == INFINITY) || (al == -INFINITY && bl == -INFINITY)) { top(lo, hi, fl); return; }
        *lo = fa(f, al, bh, 1, dir);
        *hi = fa(f, ah, bl, 1, dir);
        break;
    case OP_MULF:
        if ((has0(al, ah) && hasinf(bl, bh)) || (has0(bl, bh) && hasinf(al, ah))) { top(lo, hi, fl); return; }
        *lo = mn4(fm(f, al, bl, dir), fm(f, al, bh, dir), fm(f, ah, bl, dir), fm(f, ah, bh, dir));
        *hi = mx4(fm(f, al, bl, dir), fm(f, al, bh, dir), fm(f, ah, bl, dir), fm(f, ah, bh, dir));
        break;
    case OP_DIVF:
        if (has0(bl, bh) || (hasinf(al, ah) && hasinf(bl, bh))) { top(lo, hi, fl); return; }
        if (approx) {
            double L = mn4(d64div(al, bl, ER_RND_NEGATIVE_INF), d64div(al, bh, ER_RND_NEGATIVE_INF), d64div(ah, bl, ER_RND_NEGATIVE_INF), d64div(ah, bh, ER_RND_NEGATIVE_INF));
            double H = mx4(d64div(al, bl, ER_RND_POSITIVE_INF), d64div(al, bh, ER_RND_POSITIVE_INF), d64div(ah, bl, ER_RND_POSITIVE_INF), d64div(ah, bh, ER_RND_POSITIVE_INF));
            ulps_widen(f, axu(o, ER_INTERP_AX_DIV, 0), 0, &L, &H);
            /* div.approx: a divisor beyond 2^126 in magnitude gives 0 (NaN for an infinite dividend) */
            if (op->rnd == IT_RND_APPROX && (fabs(bl) > 0x1p126 || fabs(bh) > 0x1p126)) {
                if (L > 0) L = 0;
                if (H < 0) H = 0;
                if (hasinf(al, ah)) *fl |= IT_BF_NAN;
            }
            out_round(f, L, H, lo, hi, fl);
            break;
        }
        *lo = mn4(fd(f, al, bl, dir), fd(f, al, bh, dir), fd(f, ah, bl, dir), fd(f, ah, bh, dir));
        *hi = mx4(fd(f, al, bl, dir), fd(f, al, bh, dir), fd(f, ah, bl, dir), fd(f, ah, bh, dir));
        break;
    case OP_FMA:
        ftz_widen(ftz, f, &cl, &ch);
        if (hasinf(al, ah) || hasinf(bl, bh) || hasinf(cl, ch)) { top(lo, hi, fl); return; }
        *lo = mn4(ff(f, al, bl, cl, dir), ff(f, al, bh, cl, dir), ff(f, ah, bl, cl, dir), ff(f, ah, bh, cl, dir));
        *hi = mx4(ff(f, al, bl, ch, dir), ff(f, al, bh, ch, dir), ff(f, ah, bl, ch, dir), ff(f, ah, bh, ch, dir));
        break;
    case OP_NEGF:
        *lo = -ah;
        *hi = -al;
        return;
    case OP_ABSF:
        if (has0(al, ah)) {
            *lo = 0;
            *hi = -al > ah ? -al : ah;
        } else if (ah < 0) {
            *lo = -ah;
            *hi = -al;
        } else {
            *lo = al;
            *hi = ah;
        }
        return;
    case OP_MAXF: case OP_MINF: {
        int mx = op->code == OP_MAXF;
        double l = mx ? (al > bl ? al : bl) : (al < bl ? al : bl), h = mx ? (ah > bh ? ah : bh) : (ah < bh ? ah : bh);
        if (!op->nan_prop) {
            /* a NaN operand gives the other one */
            if (an & IT_BF_NAN) { l = l < bl ? l : bl; h = h > bh ? h : bh; }
            if (bn & IT_BF_NAN) { l = l < al ? l : al; h = h > ah ? h : ah; }
            *fl = (uint8_t)(an & bn & IT_BF_NAN);
        }
        *lo = l;
        *hi = h;
        break;
    }
    case OP_SQRT:
        if (approx) { approx_unary(o, op, f, al, ah, lo, hi, fl); break; }
        if (ah < 0) { top(lo, hi, fl); return; }
        if (al < 0) { *fl |= IT_BF_NAN; al = 0; }
        *lo = V(f, it_f_sqrt(f, P(f, al), dir, 0u));
        *hi = V(f, it_f_sqrt(f, P(f, ah), dir, 0u));
        break;
    case OP_EXP2:
        approx_unary(o, op, f, al, ah, lo, hi, fl); /* ex2.approx, whatever the attribute */
        break;
    case OP_EXP: case OP_TANH: case OP_RSQRT: case OP_FLOOR: case OP_CEIL: case OP_LOG: case OP_LOG2: case OP_SINH: {
        if (approx && (op->code == OP_EXP || op->code == OP_TANH || op->code == OP_RSQRT)) {
            approx_unary(o, op, f, al, ah, lo, hi, fl);
            break;
        }
        er_math_op mo = math_of(op->code);
        if (op->code == OP_LOG || op->code == OP_LOG2) {
            if (ah < 0) { top(lo, hi, fl); return; }
            if (al < 0) { *fl |= IT_BF_NAN; al = 0; }
        }
        if (op->code == OP_RSQRT) {
            if (al <= 0) { top(lo, hi, fl); return; }
            *lo = mf(mo, f, ah, ER_RND_NEAREST_EVEN);
            *hi = mf(mo, f, al, ER_RND_NEAREST_EVEN);
        } else {
            *lo = mf(mo, f, al, ER_RND_NEAREST_EVEN);
            *hi = mf(mo, f, ah, ER_RND_NEAREST_EVEN);
        }
        break;
    }
    case OP_SIN: case OP_COS:
        if (al == ah && !an) {
            *lo = *hi = mf(math_of(op->code), f, al, ER_RND_NEAREST_EVEN);
            break;
        }
        *lo = -1;
        *hi = 1;
        if (hasinf(al, ah)) *fl |= IT_BF_NAN;
        break;
    default: { /* cosh, tan, remf, atan2, pow: not monotone; a single value, else anything */
        uint64_t out = 0;
        unsigned mfl;
        int unary = op->code == OP_COSH || op->code == OP_TAN;
        if (al == ah && (unary || bl == bh) && !an && !bn) {
            er_status st;
            if (unary) st = er_math_unary(math_of(op->code), f, P(f, al), ER_RND_NEAREST_EVEN, &out, &mfl);
            else st = er_math_binary(op->code == OP_REMF ? ER_MATH_FMOD : op->code == OP_ATAN2 ? ER_MATH_ATAN2 : ER_MATH_POW, f,
                                     P(f, al), P(f, bl), ER_RND_NEAREST_EVEN, &out, &mfl);
            if (st == ER_OK) {
                it_bnd_point(f, out, lo, hi, fl);
                break;
            }
        }
        top(lo, hi, fl);
        return;
    }
    }
    (void)rf;
    if (isnan(*lo) || isnan(*hi)) { /* a NaN at a corner (cannot happen after the checks above) */
        top(lo, hi, fl);
        return;
    }
    ftz_widen(ftz, f, lo, hi);
}

static void lane_ftof(const it_op *op, int f, int rf, double al, double ah, uint8_t an, double *lo, double *hi, uint8_t *fl)
{
    int dir = rdir(op);
    uint64_t l = er_convert(f, rf, P(f, al), dir, 0u).bits, h = er_convert(f, rf, P(f, ah), dir, 0u).bits;
    double vl = V(rf, l), vh = V(rf, h), mx = fmt_max(rf);
    *fl = an;
    if (isnan(vl) || isnan(vh)) {
        /* beyond the largest value of a format without infinity (or no zero / no sign): NaN */
        *fl |= IT_BF_NAN;
        if (isnan(vl)) vl = al < 0 ? -mx : (er_fmt_signed(er_fmt_get(rf)) ? -mx : 0);
        if (isnan(vh)) vh = mx;
        if (!er_fmt_signed(er_fmt_get(rf))) vl = 0;
    }
    *lo = vl;
    *hi = vh;
}

void it_bnd_ew(const it_bopts *o, const it_op *op, int rfmt, int64_t n, const it_sv *a, const it_sv *b, const it_sv *c,
               double *lo, double *hi, uint8_t *fl)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        double al, ah, bl = 0, bh = 0, cl = 0, ch = 0;
        uint8_t an, bn = 0, cn = 0;
        it_bnd_lane(a, i, &al, &ah, &an);
        if (b) it_bnd_lane(b, i, &bl, &bh, &bn);
        if (c) it_bnd_lane(c, i, &cl, &ch, &cn);
        if (op->code == OP_FTOF) lane_ftof(op, a->fmt, rfmt, al, ah, an, &lo[i], &hi[i], &fl[i]);
        else lane_ew(o, op, a->fmt, rfmt, al, ah, an, bl, bh, bn, cl, ch, cn, &lo[i], &hi[i], &fl[i]);
    }
}

/* ---------------------------------------------------------------- comparisons */

static int pred_of(int pred, int lt_ab, int lt_ba, int eq)
{
    /* decisions of a < b, b < a, a == b over the enclosures (no NaN): 1, 0, -1 undecided */
    switch (pred) {
    case PRED_EQ: return eq;
    case PRED_NE: return eq < 0 ? -1 : !eq;
    case PRED_LT: return lt_ab;
    case PRED_GT: return lt_ba;
    case PRED_LE: return lt_ba < 0 ? -1 : !lt_ba;
    default: return lt_ab < 0 ? -1 : !lt_ab;
    }
}

static int dec(int d) { return d == ER_INTERVAL_TRUE ? 1 : d == ER_INTERVAL_FALSE ? 0 : -1; }

int it_bnd_cmpf(const it_op *op, const it_sv *a, const it_sv *b, int64_t i)
{
    double al, ah, bl, bh;
    uint8_t an, bn;
    er_interval x, y;
    int d, nan_out = op->ordered ? 0 : 1;
    it_bnd_lane(a, i, &al, &ah, &an);
    it_bnd_lane(b, i, &bl, &bh, &bn);
    /* the seed's folds on the NaN-free part (an interval with the NaN flag is read without it here) */
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    x.lo = al; x.hi = ah;
    y.lo = bl; y.hi = bh;
    if (al == -INFINITY && ah == INFINITY) d = -1;
    else if (bl == -INFINITY && bh == INFINITY) d = -1;
    else d = pred_of(op->pred, dec(er_interval_cmplt_decides(x, y)), dec(er_interval_cmplt_decides(y, x)), dec(er_interval_cmpeq_decides(x, y)));
    if ((an | bn) & IT_BF_NAN) return d == nan_out ? d : -1;
    return d;
}

/* ---------------------------------------------------------------- reduce and scan in any order */

static void fold_emit(int code, int fmt, int ftz, int m, double slo, double shi, double A, int inf, uint8_t nanf, double *lo,
                      double *hi, uint8_t *fl)
{
    er_fmt d = er_fmt_get(fmt);
    *fl = nanf;
    if (code != OP_ADDF) {
        *lo = slo;
        *hi = shi;
        ftz_widen(ftz, fmt, lo, hi);
        return;
    }
    {
        double u = ldexp(1.0, -(d.mbits + 1)), mu = er_b_up(m * u), g, err, mx = fmt_max(fmt);
        if (inf || mu >= 0.5) { top(lo, hi, fl); return; }
        g = er_b_up(er_b_up(mu / er_b_down(1.0 - mu)));
        err = er_b_up(g * A);
        if (ftz) err = er_b_up(err + ldexp((double)m, er_fmt_emin(d)));
        /* every partial sum of any order is at most A (1 + g): beyond the range, an infinity (and NaN) can arise */
        if (er_b_up(A + err) >= mx) { top(lo, hi, fl); return; }
        out_round(fmt, er_b_down(slo - err), er_b_up(shi + err), lo, hi, fl);
    }
}

void it_bnd_fold(int code, int fmt, int ftz, int nan_prop, uint64_t identity, const it_sv *in, int64_t off, int64_t step,
                 int64_t n, int scan, int reverse, double *lo, double *hi, uint8_t *fl, int64_t ostep)
{
    double il, ih, slo, shi, A;
    uint8_t in_, nanf;
    int64_t t;
    int inf = 0, m = 0;
    it_bnd_point(fmt, identity, &il, &ih, &in_);
    ftz_widen(ftz, fmt, &il, &ih);
    slo = il;
    shi = ih;
    nanf = in_;
    A = fabs(il) > fabs(ih) ? fabs(il) : fabs(ih);
    if (hasinf(il, ih) && code == OP_ADDF) inf = 1;
    for (t = 0; t < n; t++) {
        int64_t k = scan && reverse ? n - 1 - t : t;
        double l, h;
        uint8_t f;
        it_bnd_lane(in, off + k * step, &l, &h, &f);
        ftz_widen(ftz, fmt, &l, &h);
        if (code == OP_ADDF) {
            nanf |= f;
            if (hasinf(l, h)) inf = 1;
            slo = er_b_down(slo + l);
            shi = er_b_up(shi + h);
            A = er_b_up(A + (fabs(l) > fabs(h) ? fabs(l) : fabs(h)));
            m++;
        } else {
            int mx = code == OP_MAXF, may_nan = (f & IT_BF_NAN) != 0;
            /* maxf / minf are exact in any order: the largest (smallest) value; a NaN that does not propagate
             * is skipped, so only the values that cannot be NaN bound the far end */
            if (nan_prop) nanf |= f;
            if (mx) {
                if (nan_prop || !may_nan) slo = slo > l ? slo : l;
                shi = shi > h ? shi : h;
            } else {
                slo = slo < l ? slo : l;
                if (nan_prop || !may_nan) shi = shi < h ? shi : h;
            }
        }
        if (scan) fold_emit(code, fmt, ftz, m, slo, shi, A, inf, nanf, &lo[k * ostep], &hi[k * ostep], &fl[k * ostep]);
    }
    if (!scan) fold_emit(code, fmt, ftz, m, slo, shi, A, inf, nanf, lo, hi, fl);
}

void it_bnd_acc(double *sl, double *sh, double *sa, double vl, double vh, double va)
{
    *sl = er_b_down(*sl + vl);
    *sh = er_b_up(*sh + vh);
    *sa = er_b_up(*sa + va);
}

void it_bnd_anysum(int fmt, int ftz, int m, double slo, double shi, double A, int inf, uint8_t nanf, double *lo, double *hi, uint8_t *fl)
{
    fold_emit(OP_ADDF, fmt, ftz, m, slo, shi, A, inf, nanf, lo, hi, fl);
}

void it_bnd_prod(double al, double ah, uint8_t an, double bl, double bh, uint8_t bn, double *lo, double *hi, uint8_t *fl)
{
    double p[4], l, h;
    int k;
    p[0] = al * bl;
    p[1] = al * bh;
    p[2] = ah * bl;
    p[3] = ah * bh;
    *fl = (uint8_t)((an | bn) & IT_BF_NAN);
    if (isnan(p[0]) || isnan(p[1]) || isnan(p[2]) || isnan(p[3])) { /* 0 times an infinity */
        top(lo, hi, fl);
        return;
    }
    l = h = p[0];
    for (k = 1; k < 4; k++) {
        if (p[k] < l) l = p[k];
        if (p[k] > h) h = p[k];
    }
    *lo = er_b_down(l);
    *hi = er_b_up(h);
}

/* One end of x^n for an integer n (binary64, rounded in direction dir; NaN where the library fails). */
static double powi_end(double x, int64_t n, int dir)
{
    uint64_t xb, nb, o = 0;
    double nd = (double)n, r;
    memcpy(&xb, &x, 8);
    memcpy(&nb, &nd, 8);
    if (er_math_binary(ER_MATH_POW, ER_FMT_F64, xb, nb, dir, &o, NULL) != ER_OK) return NAN;
    memcpy(&r, &o, 8);
    return r;
}

void it_bnd_fpowi(int fmt, double al, double ah, uint8_t an, int64_t n, double *lo, double *hi, uint8_t *fl)
{
    double L, H, a, b;
    *fl = an & IT_BF_NAN;
    if (n == 0) { /* x^0 = 1 for every x, NaN included (the dialect's pow(x, 0)) */
        *lo = *hi = 1;
        *fl = 0;
        return;
    }
    if (n > (INT64_C(1) << 52) || n < -(INT64_C(1) << 52)) n = (n < 0 ? -1 : 1) * ((INT64_C(1) << 52) + (n & 1)); /* as point mode */
    if (al <= 0 && ah >= 0) {
        if (n < 0) { top(lo, hi, fl); return; } /* 1 / 0: an infinity of either sign */
        a = powi_end(al, n, ER_RND_NEGATIVE_INF);
        b = powi_end(ah, n, ER_RND_POSITIVE_INF);
        if (n % 2 == 0) { /* even: [0, max of the ends] */
            L = 0;
            H = powi_end(al, n, ER_RND_POSITIVE_INF);
            H = H > b ? H : b;
        } else { /* odd: increasing */
            L = a;
            H = b;
        }
    } else {
        /* one sign: x^n is monotone on [al, ah]; its extremes are at the ends */
        double p = powi_end(al, n, ER_RND_NEGATIVE_INF), q = powi_end(ah, n, ER_RND_NEGATIVE_INF);
        double P2 = powi_end(al, n, ER_RND_POSITIVE_INF), Q2 = powi_end(ah, n, ER_RND_POSITIVE_INF);
        L = p < q ? p : q;
        H = P2 > Q2 ? P2 : Q2;
    }
    if (isnan(L) || isnan(H)) { top(lo, hi, fl); return; }
    /* one rounding to nearest even, which is monotone: the rounded ends bound every rounded value between */
    er_round_double(fmt, L, ER_RND_NEAREST_EVEN, lo);
    er_round_double(fmt, H, ER_RND_NEAREST_EVEN, hi);
    if (!fmt_inf(fmt) && (isinf(*lo) || isinf(*hi) || fabs(L) > fmt_max(fmt) || fabs(H) > fmt_max(fmt))) top(lo, hi, fl);
}

double it_bnd_slack(const it_sv *s, int64_t i)
{
    double l, h, p, a, b;
    uint8_t f;
    int64_t k = s->n == 1 ? 0 : i;
    if (!s->lo) return 0;
    it_bnd_lane(s, i, &l, &h, &f);
    if ((f & IT_BF_NAN) || hasinf(l, h)) return INFINITY;
    p = V(s->fmt, s->pt[k]);
    if (isnan(p) || isinf(p)) return INFINITY;
    a = er_b_up(p - l);
    b = er_b_up(h - p);
    return a > b ? a : b;
}

/* ---------------------------------------------------------------- mma through the front door's bounds */

er_status it_bnd_mma(const it_bopts *o, int fast_acc, const er_mma_args *args, double *slack[3], double *lo, double *hi,
                     uint8_t *fl, char *msg, size_t msg_size)
{
    er_result *r = NULL;
    const er_bounds *bd = NULL;
    er_status st;
    int64_t e, q;
    int of = args->d->format;
    if ((args->a_scale || args->b_scale) && (slack[0] || slack[1] || slack[2])) {
        for (q = 0; q < 3; q++) free(slack[q]);
        snprintf(msg, msg_size, "bounds mode: the operands of a block-scaled product must be exact (loaded, not computed)");
        return ER_EUNSUPPORTED;
    }
    if ((st = er_result_create(args, &r, msg, msg_size)) != ER_OK) { /* args->d receives the rounded answer */
        for (q = 0; q < 3; q++) free(slack[q]);
        return st;
    }
    for (q = 0; q < 3; q++) r->slack[q] = slack[q]; /* results as inputs: the result frees them */
    if ((st = er_result_bounds(r, fast_acc ? &o->tol_fast : &o->tol, &bd, msg, msg_size)) != ER_OK) {
        er_result_free(r);
        return st;
    }
    for (e = 0; e < bd->count; e++) {
        fl[e] = bd->may_nan[e] ? IT_BF_NAN : 0;
        if (bd->has_range[e]) {
            lo[e] = bd->may_ninf[e] ? -INFINITY : V(of, bd->low[e]);
            hi[e] = bd->may_pinf[e] ? INFINITY : V(of, bd->high[e]);
        } else {
            lo[e] = bd->may_ninf[e] || !bd->may_pinf[e] ? -INFINITY : INFINITY;
            hi[e] = bd->may_pinf[e] || !bd->may_ninf[e] ? INFINITY : -INFINITY;
            if (!bd->may_pinf[e] && !bd->may_ninf[e]) fl[e] = IT_BF_NAN;
        }
    }
    er_result_free(r);
    return ER_OK;
}

/* ---------------------------------------------------------------- options and the public API */

void er_interp_bounds_opts_init(er_interp_bounds_opts *o)
{
    int i;
    if (!o) return;
    o->standard = NULL;
    for (i = 0; i < ER_INTERP_AX_COUNT; i++) o->ulps[i] = -1;
}

int er_interp_bounds_op_index(const char *name)
{
    static const char *const names[ER_INTERP_AX_COUNT] = {"exp2", "exp", "divf", "rsqrt", "sqrt", "tanh"};
    int i;
    if (!name) return -1;
    for (i = 0; i < ER_INTERP_AX_COUNT; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

er_status it_bnd_opts(const er_interp_bounds_opts *o, it_bopts *out, char *msg, size_t msg_size)
{
    char m2[256] = "";
    int i;
    er_tol_opts_init(&out->tol);
    er_tol_opts_init(&out->tol_fast);
    for (i = 0; i < ER_INTERP_AX_COUNT; i++) out->ulps[i] = o ? o->ulps[i] : -1;
    if (o && o->standard && er_standard_parse(o->standard, &out->tol.standard, m2, sizeof m2) != ER_OK) {
        snprintf(msg, msg_size, "bounds mode: standard '%s': %s", o->standard, m2);
        return ER_EINVAL;
    }
    if (er_standard_parse("hopper-fp8", &out->tol_fast.standard, m2, sizeof m2) != ER_OK) {
        snprintf(msg, msg_size, "bounds mode: the hopper-fp8 standard is missing: %s", m2);
        return ER_EDEVICE;
    }
    for (i = 0; i < ER_INTERP_AX_COUNT; i++)
        if (isnan(out->ulps[i])) {
            snprintf(msg, msg_size, "bounds mode: ulps must be a number");
            return ER_EINVAL;
        }
    return ER_OK;
}

er_status er_interp_kernel_bounds(const er_interp_module *m, const char *kernel, er_interp_launch *l,
                                  const er_interp_bounds_opts *o, er_interp_bounds **out, char *msg, size_t msg_size)
{
    it_bopts bo;
    er_interp_bounds *b;
    er_status st;
    if (msg && msg_size) msg[0] = 0;
    if (!m || !kernel || !l || !out) return ER_EINVAL;
    *out = NULL;
    if (l->prints && l->prints_size) l->prints[0] = 0;
    l->steps = 0;
    if (!it_find_entry(m, kernel)) {
        l->kind = ER_INTERP_BAD_LAUNCH;
        it_msg(msg, msg_size, m->filename, NULL, "no entry @%s in the module", kernel[0] == '@' ? kernel + 1 : kernel);
        return ER_EINVAL;
    }
    if (it_first_unsupported(m, kernel, 1, msg, msg_size) == 1) {
        l->kind = ER_INTERP_UNSUPPORTED;
        return ER_EUNSUPPORTED;
    }
    if ((st = it_bnd_opts(o, &bo, msg, msg_size)) != ER_OK) {
        l->kind = ER_INTERP_BAD_LAUNCH;
        return st;
    }
    b = (er_interp_bounds *)calloc(1, sizeof *b);
    if (!b) {
        l->kind = ER_INTERP_INTERNAL;
        return ER_ENOMEM;
    }
    st = it_run_bounds(m, kernel, l, &bo, b, msg, msg_size);
    if (st != ER_OK) {
        er_interp_bounds_free(b);
        return st;
    }
    *out = b;
    return ER_OK;
}

static void free_bd(er_bounds *bd)
{
    if (!bd) return;
    free(bd->radius);
    free(bd->tolerance);
    free(bd->low);
    free(bd->high);
    free(bd->has_range);
    free(bd->may_pinf);
    free(bd->may_ninf);
    free(bd->may_nan);
    free(bd);
}

void er_interp_bounds_free(er_interp_bounds *b)
{
    size_t i;
    if (!b) return;
    for (i = 0; i < b->nbuf; i++) {
        free(b->buf[i].lo);
        free(b->buf[i].hi);
        free(b->buf[i].fl);
        free(b->buf[i].point);
        free(b->buf[i].flags);
        free_bd(b->buf[i].bd);
    }
    free(b->buf);
    free(b);
}

size_t er_interp_bounds_buffers(const er_interp_bounds *b) { return b ? b->nbuf : 0; }

static uint64_t elem_bits(const it_bbuf *c, const uint8_t *data, int64_t e)
{
    uint64_t v = 0;
    int k;
    for (k = 0; k < c->eb; k++) v |= (uint64_t)data[e * c->eb + k] << (8 * k);
    if (c->is_float) {
        int w = er_fmt_get(c->format).width;
        if (w < 64) v &= (UINT64_C(1) << w) - 1u;
    }
    return v;
}

er_status er_interp_bounds_get(const er_interp_bounds *b, size_t i, int *format, int64_t *count, const double **lo,
                               const double **hi, const unsigned char **flags)
{
    it_bbuf *c;
    int64_t e;
    if (!b || i >= b->nbuf) return ER_EINVAL;
    c = &b->buf[i];
    if (format) *format = c->format;
    if (count) *count = c->count;
    if (c->is_float && !c->flags) {
        c->flags = (uint8_t *)malloc((size_t)(c->count ? c->count : 1));
        if (!c->flags) return ER_ENOMEM;
        for (e = 0; e < c->count; e++)
            c->flags[e] = (uint8_t)((c->fl[e] & IT_BF_NAN ? ER_INTERP_MAY_NAN : 0) | (c->hi[e] == INFINITY ? ER_INTERP_MAY_PINF : 0) |
                                    (c->lo[e] == -INFINITY ? ER_INTERP_MAY_NINF : 0));
    }
    if (lo) *lo = c->is_float ? c->lo : NULL;
    if (hi) *hi = c->is_float ? c->hi : NULL;
    if (flags) *flags = c->is_float ? c->flags : NULL;
    return ER_OK;
}

const er_bounds *er_interp_bounds_as_bounds(er_interp_bounds *b, size_t i)
{
    it_bbuf *c;
    er_bounds *bd;
    int64_t e, n;
    if (!b || i >= b->nbuf) return NULL;
    c = &b->buf[i];
    if (!c->is_float) return NULL;
    if (c->bd) return c->bd;
    n = c->count ? c->count : 1;
    bd = (er_bounds *)calloc(1, sizeof *bd);
    if (!bd) return NULL;
    bd->count = c->count;
    bd->radius = (double *)malloc((size_t)n * sizeof(double));
    bd->tolerance = (double *)malloc((size_t)n * sizeof(double));
    bd->low = (uint64_t *)malloc((size_t)n * sizeof(uint64_t));
    bd->high = (uint64_t *)malloc((size_t)n * sizeof(uint64_t));
    bd->has_range = (unsigned char *)malloc((size_t)n);
    bd->may_pinf = (unsigned char *)malloc((size_t)n);
    bd->may_ninf = (unsigned char *)malloc((size_t)n);
    bd->may_nan = (unsigned char *)malloc((size_t)n);
    if (!bd->radius || !bd->tolerance || !bd->low || !bd->high || !bd->has_range || !bd->may_pinf || !bd->may_ninf || !bd->may_nan) {
        free_bd(bd);
        return NULL;
    }
    {
        int f = c->format;
        double mx = fmt_max(f);
        er_fmt d = er_fmt_get(f);
        for (e = 0; e < c->count; e++) {
            double l = c->lo[e], h = c->hi[e], r = V(f, elem_bits(c, c->point, e));
            double fl_ = l < -mx ? -mx : l, fh = h > mx ? mx : h;
            bd->may_pinf[e] = h == INFINITY;
            bd->may_ninf[e] = l == -INFINITY;
            bd->may_nan[e] = (c->fl[e] & IT_BF_NAN) != 0;
            if (!er_fmt_signed(d) && fl_ < 0) fl_ = 0;
            if (fl_ <= fh && !(l == INFINITY) && !(h == -INFINITY)) {
                double lv, hv;
                bd->has_range[e] = 1;
                bd->low[e] = P(f, fl_);
                bd->high[e] = P(f, fh);
                lv = V(f, bd->low[e]);
                hv = V(f, bd->high[e]);
                if (isfinite(r)) {
                    double t1 = er_b_up(r - lv), t2 = er_b_up(hv - r);
                    bd->tolerance[e] = t1 > t2 ? t1 : t2;
                    if (bd->tolerance[e] < 0) bd->tolerance[e] = 0;
                    if (lv == hv) bd->tolerance[e] = 0;
                } else {
                    bd->tolerance[e] = NAN;
                }
            } else {
                bd->has_range[e] = 0;
                bd->low[e] = bd->high[e] = elem_bits(c, c->point, e);
                bd->tolerance[e] = isfinite(r) ? INFINITY : NAN;
            }
            bd->radius[e] = bd->tolerance[e];
        }
    }
    c->bd = bd;
    return bd;
}

er_status er_interp_bounds_report(er_interp_bounds *b, size_t i, const void *device, size_t nbytes, int ndim,
                                  const int64_t *shape, int64_t *outside_index, int64_t outside_cap,
                                  er_check_report *rep, char *msg, size_t msg_size)
{
    it_bbuf *c;
    int64_t rows = 1, cols = 1, e, outside = 0;
    int k;
    if (msg && msg_size) msg[0] = 0;
    if (!b || i >= b->nbuf || !rep || (!device && nbytes) || ndim < 1 || ndim > 8 || !shape) return ER_EINVAL;
    c = &b->buf[i];
    if (nbytes != c->nbytes) {
        snprintf(msg, msg_size, "buffer %zu: the device's buffer has %zu bytes, the kernel's %zu", i, nbytes, c->nbytes);
        return ER_EINVAL;
    }
    for (k = 0; k < ndim - 1; k++) rows *= shape[k];
    cols = shape[ndim - 1];
    if (rows * cols != c->count) {
        snprintf(msg, msg_size, "buffer %zu: the shape holds %lld elements, the buffer %lld", i, (long long)(rows * cols), (long long)c->count);
        return ER_EINVAL;
    }
    if (!c->is_float) {
        /* decided values: covered where equal */
        memset(rep, 0, sizeof *rep);
        rep->elements = c->count;
        rep->ndim = 2;
        rep->shape[1] = rows;
        rep->shape[2] = cols;
        rep->format = c->format;
        rep->worst = c->count ? 0 : -1;
        rep->narrower_format = -1;
        for (e = 0; e < c->count; e++) {
            uint64_t dv = elem_bits(c, (const uint8_t *)device, e), pv = elem_bits(c, c->point, e);
            if (dv != pv) {
                if (outside_index && outside < outside_cap) outside_index[outside] = e;
                if (!outside) {
                    rep->worst = e;
                    rep->worst_why = ER_REPORT_WHY_INT;
                    rep->output = dv;
                    rep->rounded = rep->low = rep->high = pv;
                }
                outside++;
            }
        }
        rep->outside = outside;
        rep->outside_listed = outside < outside_cap ? outside : outside_cap;
        rep->hist[ER_REPORT_EXACT] = c->count - outside;
        rep->hist[ER_REPORT_OUTSIDE] = outside;
        if (rep->worst >= 0) er_check_report_index(rep, rep->worst, rep->worst_index);
        rep->worst_covered = outside == 0;
        return ER_OK;
    }
    {
        const er_bounds *bd = er_interp_bounds_as_bounds(b, i);
        er_tensor out = er_tensor_2d(c->format, rows, cols, (void *)device), R = er_tensor_2d(c->format, rows, cols, c->point);
        unsigned char *covered;
        er_status st;
        if (!bd) return ER_ENOMEM;
        covered = (unsigned char *)malloc((size_t)(c->count ? c->count : 1));
        if (!covered) return ER_ENOMEM;
        st = er_bounds_covers(bd, &out, 0, covered, &outside, msg, msg_size);
        if (st == ER_OK)
            st = er_check_report_score(bd, &out, &R, covered, outside, NULL, NULL, outside_index, outside_cap, rep, msg, msg_size);
        free(covered);
        return st;
    }
}
