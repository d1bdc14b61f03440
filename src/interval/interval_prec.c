/* interval_prec.c: machine ranges of precisions, exact-integer limits, at_prec and round_into. */
#include <string.h>

#include "interval_impl.h"
#include "exactref/core/er_round.h"

static int valid_fmt(int fmt) { return fmt >= 0 && fmt < ER_FMT_COUNT; }

static double bits_to_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

double _er_iv_fmt_max(int fmt)
{
    er_fmt d = er_fmt_get(fmt);
    /* The pattern of the largest finite value, decoded exactly into binary64 by the core. */
    return bits_to_double(er_convert(fmt, ER_FMT_F64, er_maxval_(d, 0u), ER_RND_NEAREST_EVEN, 0u).bits);
}

er_interval er_interval_int_range(int width, int is_signed)
{
    double l, h;
    if (width < 1 || width > 64) return er_interval_top();
    if (is_signed) {
        l = ldexp(-1.0, width - 1); /* -2^(w-1): a power of two, exact */
        /* 2^(w-1) - 1 is a double up to w - 1 = 53; above, the next double up is 2^(w-1). */
        h = width - 1 <= 53 ? ldexp(1.0, width - 1) - 1.0 : ldexp(1.0, width - 1);
    } else {
        l = 0.0;
        h = width <= 53 ? ldexp(1.0, width) - 1.0 : ldexp(1.0, width);
    }
    return _er_iv_make(l, h, 1, er_interval_endpoint_exact(l) && er_interval_endpoint_exact(h) &&
                                    (is_signed ? width - 1 <= 53 : width <= 53));
}

er_interval er_interval_dtype_range(int fmt)
{
    er_fmt d;
    double m;
    if (!valid_fmt(fmt)) return er_interval_top();
    d = er_fmt_get(fmt);
    if (d.kind != ER_KIND_FLOAT) return er_interval_int_range(d.width, d.kind == ER_KIND_SINT);
    if (er_fmt_has_nan(d)) return er_interval_top();
    /* fp6 and fp4: every pattern is a number in [-max, max]; the bounds are values (attained). */
    m = _er_iv_fmt_max(fmt);
    return _er_iv_make(-m, m, 0, er_interval_endpoint_exact(m));
}

int er_interval_float_exact_int_limit(int fmt, double *limit)
{
    er_fmt d;
    double l, m;
    if (!valid_fmt(fmt)) return 0;
    d = er_fmt_get(fmt);
    if (d.kind != ER_KIND_FLOAT || !er_fmt_has_zero(d) || !er_fmt_signed(d)) return 0;
    /* A precision of mbits + 1 bits holds every integer up to 2^(mbits+1) (every binade from 2^0 up is
     * normal: emin <= 0 for every format here), as long as the range reaches that far; otherwise every
     * integer up to the largest finite value.  bf16: 2^8 = 256 (257 needs 9 bits); f16: 2048. */
    l = ldexp(1.0, d.mbits + 1);
    m = floor(_er_iv_fmt_max(fmt));
    if (m < l) l = m;
    if (limit) *limit = l;
    return 1;
}

er_interval er_interval_at_prec(int fmt, er_interval t)
{
    er_fmt d;
    er_interval r;
    double lim;
    if (!valid_fmt(fmt)) return er_interval_top();
    d = er_fmt_get(fmt);
    r = er_interval_dtype_range(fmt);
    if (er_interval_is_top(t) || !t.integral) return r;
    t = _er_iv_tighten(t);
    if (d.kind != ER_KIND_FLOAT) {
        /* No wrap can happen when every value lies in the range; the values are integers, which integer
         * arithmetic computes exactly.  A lower bound below zero at an unsigned format, or anything
         * reaching past the range, falls back to the whole range (wrap, clamp, "crosses zero").  r.hi
         * is the integer maximum itself, or for i64 the double 2^63 above it: there the test is strict
         * (a double below 2^63 is at most 2^63 - 1024, in range). */
        int hi_ok = d.width <= 53 ? t.hi <= r.hi : t.hi < r.hi;
        if (t.lo >= r.lo && hi_ok) return t;
        return r;
    }
    /* Every integer of magnitude <= lim is a value of fmt: the conversion of an integral value there is
     * exact in every direction, so the machine value equals the real one. */
    if (er_interval_float_exact_int_limit(fmt, &lim) && t.lo >= -lim && t.hi <= lim) return t;
    return r;
}

/* The endpoint x rounded into fmt in direction dir, back as a double; *nan when the result is a NaN. */
static double round_endpoint(int fmt, double x, int dir, int *nan)
{
    er_res r = er_convert(ER_FMT_F64, fmt, double_to_bits(x), dir, 0u);
    er_val v = er_decode(fmt, r.bits);
    if (v.cls == ER_CLASS_NAN) {
        *nan = 1;
        return 0.0;
    }
    return bits_to_double(er_convert(fmt, ER_FMT_F64, r.bits, ER_RND_NEAREST_EVEN, 0u).bits);
}

er_interval er_interval_round_into(int fmt, er_interval t)
{
    er_fmt d;
    er_interval r;
    double lo, hi, m, tiny;
    int nan = 0, integral;
    if (!valid_fmt(fmt)) return er_interval_top();
    d = er_fmt_get(fmt);
    r = er_interval_dtype_range(fmt);
    if (er_interval_is_top(t) || _er_iv_is_empty(t)) return er_interval_is_top(t) ? r : t;
    if (d.kind != ER_KIND_FLOAT) {
        /* Rounding into the integers in any direction lands in [floor lo, ceil hi]; inside the range
         * nothing clamps or wraps. */
        int hi_ok;
        lo = floor(t.lo);
        hi = ceil(t.hi);
        hi_ok = d.width <= 53 ? hi <= r.hi : hi < r.hi;
        if (lo >= r.lo && hi_ok) return _er_iv_make(lo, hi, 1, t.exact && lo == t.lo && hi == t.hi);
        return r;
    }
    /* Rounding is monotone, and every direction (odd too) lands between rounding down and rounding up:
     * rd(lo) <= rd(v) <= any rounding of v <= ru(v) <= ru(hi).  Saturation moves only an overflowing
     * result inward, onto +-max, which stays inside.  A NaN at either end (overflow or an infinity into a
     * format without inf, zero or a negative into f8E8M0FNU) means a NaN may result: the dtype range. */
    lo = round_endpoint(fmt, t.lo, ER_RND_NEGATIVE_INF, &nan);
    hi = round_endpoint(fmt, t.hi, ER_RND_POSITIVE_INF, &nan);
    if (nan) return r;
    /* Saturation turns an infinity (and an overflow) into +-max: pull an infinite bound on the far side
     * back to it ([-inf, -inf] saturates to -max, which lies above -inf). */
    m = _er_iv_fmt_max(fmt);
    if (hi < -m) hi = -m;
    if (lo > m) lo = m;
    /* Flushing subnormal results to zero can move a subnormal bound to zero. */
    if (er_fmt_has_subnormals(d)) {
        tiny = ldexp(1.0, er_fmt_emin(d));
        if (lo > 0.0 && lo < tiny) lo = 0.0;
        if (hi < 0.0 && hi > -tiny) hi = 0.0;
    }
    /* Integers round to integers (every binade from 1 up is normal and spaced >= 1 beyond 2^mbits) or
     * overflow onto +-max, an integer except in f6E2M3FN (7.5). */
    integral = t.integral && (_er_iv_is_int(m) || (hi < m && lo > -m));
    return _er_iv_make(lo, hi, integral, t.exact && lo == t.lo && hi == t.hi);
}
