/* er_round.h: decode, round once into any format in any direction, and convert (shared core). */
#ifndef ER_ROUND_H
#define ER_ROUND_H

#include "er_formats.h"

/*
 * Every decision here is integer arithmetic on bit patterns (the method of Berkeley SoftFloat), so the
 * C library, the OpenCL kernels and the CUDA kernels give the same bits.  No floating point is used.
 * docs/core.md explains the algorithm and why it rounds correctly; docs/formats.md gives the rules.
 */

ER_FN er_u64 er_width_mask_(er_i32 width)
{
    return width >= 64 ? ~ER_U64(0) : (ER_U64(1) << width) - 1u;
}

/* Decode pattern `bits` of format f (bits above the width and tf32's padding bits are ignored). */
ER_FN er_val er_decode(er_i32 f, er_u64 bits)
{
    er_fmt d = er_fmt_get(f);
    er_val v;
    er_u64 mag, frac;
    er_i32 e;
    v.cls = ER_CLASS_ZERO;
    v.sign = 0u;
    v.sig = 0u;
    v.exp = 0;
    bits &= er_width_mask_(d.width);
    if (d.kind != ER_KIND_FLOAT) {
        if (d.kind == ER_KIND_SINT && ((bits >> (d.width - 1)) & 1u)) {
            v.sign = 1u;
            v.sig = (~bits + 1u) & er_width_mask_(d.width);
            if (d.width == 64)
                v.sig = ~bits + 1u;
        } else {
            v.sig = bits;
        }
        v.cls = v.sig ? ER_CLASS_NORMAL : ER_CLASS_ZERO;
        return v;
    }
    if (er_fmt_signed(d))
        v.sign = (er_u32)((bits >> (d.width - 1)) & 1u);
    mag = (bits >> d.pad) & er_width_mask_(er_fmt_magbits(d));
    frac = mag & er_width_mask_(d.mbits);
    e = (er_i32)(mag >> d.mbits);
    if ((d.special == ER_SPECIAL_IEEE && e == (1 << d.ebits) - 1) ||
        (d.special == ER_SPECIAL_FN && mag == er_width_mask_(er_fmt_magbits(d)))) {
        if (d.special == ER_SPECIAL_IEEE && frac == 0u) {
            v.cls = ER_CLASS_INF;
            return v;
        }
        v.cls = ER_CLASS_NAN;
        v.sig = d.special == ER_SPECIAL_IEEE ? frac : 0u;
        v.exp = d.mbits;
        return v;
    }
    if (d.special == ER_SPECIAL_FNUZ && v.sign && mag == 0u) {
        v.cls = ER_CLASS_NAN; /* the sign bit is part of this NaN's encoding, not a sign */
        v.sign = 0u;
        return v;
    }
    if (e == 0 && er_fmt_has_subnormals(d)) {
        if (frac == 0u)
            return v;
        v.cls = ER_CLASS_SUBNORMAL;
        v.sig = frac;
        v.exp = er_fmt_emin(d) - d.mbits;
        return v;
    }
    v.cls = ER_CLASS_NORMAL;
    v.sig = frac | (ER_U64(1) << d.mbits);
    v.exp = e - d.bias - d.mbits;
    return v;
}

/* Pattern of a sign and a packed magnitude. */
ER_FN er_u64 er_pack_(er_fmt d, er_u32 sign, er_u64 mag)
{
    er_u64 bits = mag << d.pad;
    if (sign)
        bits |= er_fmt_signbit(d);
    return bits;
}

ER_FN er_res er_res_(er_u64 bits, er_u32 flags)
{
    er_res r;
    r.bits = bits;
    r.flags = flags;
    return r;
}

/* Largest finite value of the sign (integers: the end of the range). */
ER_FN er_u64 er_maxval_(er_fmt d, er_u32 sign)
{
    if (d.kind == ER_KIND_SINT)
        return sign ? (ER_U64(1) << (d.width - 1)) : (ER_U64(1) << (d.width - 1)) - 1u;
    if (d.kind == ER_KIND_UINT)
        return sign ? 0u : er_width_mask_(d.width);
    return er_pack_(d, sign, er_fmt_maxmag(d));
}

/*
 * The NaN of format d for a NaN of sign `sign` and payload `payload` of `pbits` bits.  IEEE targets
 * keep the sign and the payload aligned at its top bit (truncated or zero-extended), with the quiet bit
 * set: a conversion delivers a quiet NaN.  FN keeps the sign; FNUZ and f8E8M0FNU have one NaN.
 * Formats without NaN (fp6, fp4) and integers give +0 with the invalid flag.
 */
ER_FN er_res er_make_nan(er_i32 to, er_u32 sign, er_u64 payload, er_i32 pbits)
{
    er_fmt d = er_fmt_get(to);
    er_u64 p;
    if (d.kind != ER_KIND_FLOAT || d.special == ER_SPECIAL_NONE)
        return er_res_(0u, ER_FLAG_INVALID);
    if (d.special == ER_SPECIAL_FNUZ)
        return er_res_(er_fmt_signbit(d), 0u);
    if (!er_fmt_signed(d))
        sign = 0u;
    if (d.special == ER_SPECIAL_FN)
        return er_res_(er_pack_(d, sign, er_width_mask_(er_fmt_magbits(d))), 0u);
    if (pbits >= d.mbits)
        p = pbits - d.mbits >= 64 ? 0u : payload >> (pbits - d.mbits);
    else
        p = payload << (d.mbits - pbits);
    p = (p & er_width_mask_(d.mbits)) | (ER_U64(1) << (d.mbits - 1));
    return er_res_(er_pack_(d, sign, (er_width_mask_(d.ebits) << d.mbits) | p), 0u);
}

/* The zero of the sign; formats without -0 give +0, and f8E8M0FNU (no zero) gives NaN. */
ER_FN er_res er_make_zero_(er_fmt d, er_i32 to, er_u32 sign)
{
    if (!er_fmt_has_zero(d)) {
        er_res r = er_make_nan(to, 0u, 0u, 0);
        r.flags |= ER_FLAG_INVALID;
        return r;
    }
    if (d.kind != ER_KIND_FLOAT || !er_fmt_has_negzero(d))
        sign = 0u;
    return er_res_(er_pack_(d, sign, 0u), 0u);
}

/*
 * A value beyond the largest finite one (IEEE 754 7.4): with ER_OPT_SATURATE the largest finite value
 * of the sign; otherwise infinity for nearest and for the direction that points outward, the largest
 * finite value for the others.  A format without infinity gives NaN where infinity would be, and a
 * format with neither gives the largest finite value.
 */
ER_FN er_res er_overflow_(er_fmt d, er_i32 to, er_u32 sign, er_i32 dir, er_u32 opts)
{
    er_u32 fl = ER_FLAG_OVERFLOW | ER_FLAG_INEXACT;
    er_i32 to_inf = dir == ER_RND_NEAREST_EVEN || dir == ER_RND_NEAREST_AWAY ||
                    (dir == ER_RND_NEGATIVE_INF && sign) || (dir == ER_RND_POSITIVE_INF && !sign);
    if ((opts & ER_OPT_SATURATE) || !to_inf)
        return er_res_(er_maxval_(d, sign), fl);
    if (er_fmt_has_inf(d))
        return er_res_(er_pack_(d, sign, er_width_mask_(d.ebits) << d.mbits), fl);
    if (er_fmt_has_nan(d)) {
        er_res r = er_make_nan(to, sign, 0u, 0);
        r.flags |= fl;
        return r;
    }
    return er_res_(er_maxval_(d, sign), fl);
}

/* An infinity of the sign converted into format d (exact where d has infinities). */
ER_FN er_res er_make_inf_(er_fmt d, er_i32 to, er_u32 sign, er_u32 opts)
{
    if (d.kind != ER_KIND_FLOAT)
        return er_res_(er_maxval_(d, sign), ER_FLAG_INVALID);
    if (sign && !er_fmt_signed(d))
        return er_res_(er_make_nan(to, 0u, 0u, 0).bits, ER_FLAG_INVALID);
    if (opts & ER_OPT_SATURATE)
        return er_res_(er_maxval_(d, sign), ER_FLAG_INEXACT);
    if (er_fmt_has_inf(d))
        return er_res_(er_pack_(d, sign, er_width_mask_(d.ebits) << d.mbits), 0u);
    if (er_fmt_has_nan(d))
        return er_res_(er_make_nan(to, sign, 0u, 0).bits, ER_FLAG_INVALID);
    return er_res_(er_maxval_(d, sign), ER_FLAG_INEXACT);
}

/*
 * Split sig * 2^-shift into its integer part n and the rounding information: g, the bit of weight
 * 1/2, and rest, whether anything below that is nonzero (sticky included).  shift >= 0.
 */
ER_FN er_u64 er_split_(er_u64 sig, er_i64 shift, er_u32 sticky, er_u32 *g, er_u32 *rest)
{
    /* Bitwise rather than short-circuit logic: the rounding bits are data, and branches on data
     * are mispredicted half the time. */
    if (shift == 0) {
        *g = 0u;
        *rest = sticky;
        return sig;
    }
    if (shift > 64) {
        *g = 0u;
        *rest = 1u;
        return 0u;
    }
    if (shift == 64) {
        *g = (er_u32)(sig >> 63);
        *rest = (er_u32)((sig << 1) != 0u) | sticky;
        return 0u;
    }
    *g = (er_u32)((sig >> (shift - 1)) & 1u);
    *rest = (shift > 1 ? (er_u32)((sig << (65 - shift)) != 0u) : 0u) | sticky;
    return sig >> shift;
}

/* Whether the truncated integer n is incremented in direction dir (odd is handled by the caller). */
ER_FN er_u32 er_round_up_(er_i32 dir, er_u32 sign, er_u64 n, er_u32 g, er_u32 rest)
{
    switch (dir) {
    case ER_RND_NEAREST_EVEN:
        return g & (rest | (er_u32)(n & 1u));
    case ER_RND_NEAREST_AWAY:
        return g;
    case ER_RND_NEGATIVE_INF:
        return sign & (g | rest);
    case ER_RND_POSITIVE_INF:
        return (sign ^ 1u) & (g | rest);
    default:
        return 0u;
    }
}

/* Rounding into an integer format: the nearest integer in direction dir, clamped to the range. */
ER_FN er_res er_round_int_(er_fmt d, er_u32 sign, er_u64 sig, er_i32 exp, er_u32 sticky, er_i32 dir)
{
    er_u32 g, rest, inexact;
    er_u64 n, limit;
    er_i64 x;
    if (sig == 0u)
        return er_res_(0u, sticky ? ER_FLAG_INEXACT : 0u);
    if (!sticky) {
        er_i32 z = ER_CLZ64(sig);
        sig <<= z;
        exp -= z;
    }
    x = (er_i64)exp + 63;
    if (x >= 64)
        return er_res_(er_maxval_(d, sign), ER_FLAG_INVALID);
    n = er_split_(sig, -(er_i64)exp, sticky, &g, &rest);
    inexact = g | rest;
    if (dir == ER_RND_ODD) {
        n |= (er_u64)inexact;
    } else if (er_round_up_(dir, sign, n, g, rest)) {
        if (n == ~ER_U64(0))
            return er_res_(er_maxval_(d, sign), ER_FLAG_INVALID);
        n += 1u;
    }
    limit = d.kind == ER_KIND_SINT ? er_maxval_(d, sign) : (sign ? 0u : er_width_mask_(d.width));
    if (n > limit)
        return er_res_(er_maxval_(d, sign), ER_FLAG_INVALID);
    return er_res_((sign ? (~n + 1u) : n) & er_width_mask_(d.width), inexact ? ER_FLAG_INEXACT : 0u);
}

/*
 * THE rounding: the value (-1)^sign * (sig + s) * 2^exp, where s is 0 when sticky is 0 and lies
 * strictly between 0 and 1 otherwise, rounded once into format `to` in direction dir.
 * A wide exact value is handed over as its top 64 bits (most significant bit at bit 63) and a sticky
 * bit that ORs everything below: when sticky is set, sig must have bit 63 set.
 */
ER_FN er_res er_round(er_i32 to, er_u32 sign, er_u64 sig, er_i32 exp, er_u32 sticky, er_i32 dir,
                      er_u32 opts)
{
    er_fmt d = er_fmt_get(to);
    er_i32 m = d.mbits;
    er_i64 x, xc, emin;
    er_u64 n, mag;
    er_u32 g, rest, inexact, flags;
    if (d.kind != ER_KIND_FLOAT)
        return er_round_int_(d, sign, sig, exp, sticky, dir);
    if (sig == 0u)
        return er_make_zero_(d, to, sign);
    if (sign && !er_fmt_signed(d)) {
        er_res r = er_make_nan(to, 0u, 0u, 0);
        r.flags |= ER_FLAG_INVALID;
        return r;
    }
    if (!sticky) {
        er_i32 z = ER_CLZ64(sig);
        sig <<= z;
        exp -= z;
    }
    x = (er_i64)exp + 63; /* the value lies in [2^x, 2^(x+1)) */
    if (x > er_fmt_emax(d))
        return er_overflow_(d, to, sign, dir, opts);
    emin = er_fmt_emin(d);
    xc = x < emin ? emin : x;
    /* The result is n * 2^(xc - m): n has m+1 bits in a normal binade, fewer below 2^emin. */
    n = er_split_(sig, xc - m - exp, sticky, &g, &rest);
    inexact = g | rest;
    if (dir == ER_RND_ODD)
        n |= (er_u64)inexact;
    else
        n += er_round_up_(dir, sign, n, g, rest);
    /* Packed magnitude: a carry out of n moves into the exponent field by itself. */
    mag = ((er_u64)(xc - emin) << m) + n;
    flags = inexact ? ER_FLAG_INEXACT : 0u;
    if (!er_fmt_has_subnormals(d)) {
        /* Field 0 is the normal binade 2^emin: no zero, so a value rounded below it is clamped. */
        if (mag < (ER_U64(1) << m)) {
            mag = ER_U64(1) << m;
            flags |= ER_FLAG_UNDERFLOW | ER_FLAG_INEXACT;
        }
        mag -= ER_U64(1) << m;
    }
    if (mag > er_fmt_maxmag(d))
        return er_overflow_(d, to, sign, dir, opts);
    if (inexact && x < emin && er_fmt_has_subnormals(d)) {
        /* Tininess after rounding (IEEE 754 7.5, as SoftFloat and x86 detect it): the value rounded to
         * the full precision with an unbounded exponent range is still below 2^emin.  Only a value in
         * the binade just below 2^emin can round up out of it. */
        er_u32 tiny = 1u;
        if (x == emin - 1 && dir != ER_RND_ODD) {
            er_u32 g2, r2;
            er_u64 n2 = er_split_(sig, x - m - exp, sticky, &g2, &r2);
            n2 += er_round_up_(dir, sign, n2, g2, r2);
            tiny = n2 < (ER_U64(1) << (m + 1));
        }
        if (tiny)
            flags |= ER_FLAG_UNDERFLOW;
    }
    if (er_fmt_has_subnormals(d) && mag < (ER_U64(1) << m)) {
        if (mag == 0u || (opts & ER_OPT_FTZ_OUT)) {
            er_res r = er_make_zero_(d, to, sign);
            r.flags |= flags | ER_FLAG_UNDERFLOW | ER_FLAG_INEXACT;
            return r;
        }
    }
    return er_res_(er_pack_(d, sign, mag), flags);
}

/*
 * Convert pattern `bits` of format `from` into format `to`: ONE rounding, in direction dir, of the
 * exact value (never through an intermediate format).  Integer to integer wraps modulo 2^width unless
 * ER_OPT_SATURATE is given (then it clamps); float to integer rounds in direction dir and clamps, with
 * NaN giving 0 (CUDA's cvt rules), both raising the invalid flag.
 */
ER_FN er_res er_convert(er_i32 from, er_i32 to, er_u64 bits, er_i32 dir, er_u32 opts)
{
    er_fmt s = er_fmt_get(from);
    er_fmt d = er_fmt_get(to);
    er_val v = er_decode(from, bits);
    if ((opts & ER_OPT_FTZ_IN) && v.cls == ER_CLASS_SUBNORMAL)
        v.cls = ER_CLASS_ZERO;
    if (s.kind != ER_KIND_FLOAT && d.kind != ER_KIND_FLOAT && !(opts & ER_OPT_SATURATE)) {
        er_u64 w = v.sign ? ~v.sig + 1u : v.sig;
        er_u64 r = w & er_width_mask_(d.width);
        er_res c = er_round_int_(d, v.sign, v.sig, 0, 0u, dir); /* INVALID iff out of range */
        return er_res_(r, (c.flags & ER_FLAG_INVALID) ? ER_FLAG_OVERFLOW : 0u);
    }
    switch (v.cls) {
    case ER_CLASS_NAN: {
        er_res r = er_make_nan(to, v.sign, v.sig, v.exp);
        if (d.kind != ER_KIND_FLOAT)
            r.flags = ER_FLAG_INVALID;
        return r;
    }
    case ER_CLASS_INF:
        return er_make_inf_(d, to, v.sign, opts);
    case ER_CLASS_ZERO:
        return er_make_zero_(d, to, v.sign);
    default:
        return er_round(to, v.sign, v.sig, v.exp, 0u, dir, opts);
    }
}

#endif /* ER_ROUND_H */
