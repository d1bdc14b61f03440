/* er_acc.h: the exact long accumulator: sums of exact products, rounded once (shared core). */
#ifndef ER_ACC_H
#define ER_ACC_H

#include "er_round.h"

/*
 * A fixed-point accumulator in carry-save form: digit i holds an integer multiple of 2^(lo + 32 i),
 * stored in a signed 64-bit word whose value may exceed 32 bits.  Adding a term adds or subtracts its
 * 32-bit chunks to three to five digits, with no carry propagation: each addition changes a digit by
 * less than 2^32, so 2^30 additions cannot overflow a digit (k is at most 2^24 here).  Carries are
 * propagated once, when the sum is rounded.  The value is exact: nothing is ever discarded.
 *
 * Window: the caller chooses lo (at most the exponent of the least significant bit of any term) and nd
 * (enough digits above lo for the largest possible sum plus a sign digit plus the 5-digit spill of a
 * shifted chunk): er_acc_window computes both from the terms' exponent range.  The widest case,
 * f64 x f64 products with k = 2^24, needs 137 digits.
 */
#define ER_ACC_MAX_DIGITS 144

typedef struct er_acc {
    er_i64 d[ER_ACC_MAX_DIGITS];
    er_i32 lo;       /* weight of bit 0 of digit 0 is 2^lo */
    er_i32 nd;       /* digits in use */
    er_u32 nan;      /* a NaN term, or 0 x inf */
    er_u32 pinf;     /* a +inf term */
    er_u32 ninf;     /* a -inf term */
    er_u32 nonzero;  /* a nonzero finite term was added */
    er_u32 zpos;     /* a +0 term was added */
    er_u32 zneg;     /* a -0 term was added */
} er_acc;

/*
 * The window for terms whose least significant bit has exponent >= lsb_min and whose magnitude is
 * below 2^top_max, at most `terms` of them: lo = lsb_min, and digits for top_max + log2(terms) + 1
 * (sign) bits, plus 5 digits of spill.  Returns 0 if it does not fit ER_ACC_MAX_DIGITS.
 */
ER_FN er_i32 er_acc_window(er_i32 lsb_min, er_i32 top_max, er_i64 terms, er_i32 *lo, er_i32 *nd)
{
    er_i32 lg = 0;
    er_i64 bits;
    while (lg < 62 && ((er_i64)1 << lg) < terms + 1) lg++;
    bits = (er_i64)top_max - lsb_min + lg + 2;
    *lo = lsb_min;
    *nd = (er_i32)((bits + 31) / 32) + 5;
    return *nd <= ER_ACC_MAX_DIGITS;
}

ER_FN void er_acc_init(er_acc *a, er_i32 lo, er_i32 nd)
{
    er_i32 i;
    for (i = 0; i < nd; i++) a->d[i] = 0;
    a->lo = lo;
    a->nd = nd;
    a->nan = 0u;
    a->pinf = 0u;
    a->ninf = 0u;
    a->nonzero = 0u;
    a->zpos = 0u;
    a->zneg = 0u;
}

/* The full 128-bit product of two 64-bit integers, from 32-bit halves (no compiler extension). */
ER_FN void er_mul64x64(er_u64 x, er_u64 y, er_u64 *hi, er_u64 *lo)
{
    er_u64 x0 = x & 0xFFFFFFFFu, x1 = x >> 32, y0 = y & 0xFFFFFFFFu, y1 = y >> 32;
    er_u64 p00 = x0 * y0, p01 = x0 * y1, p10 = x1 * y0, p11 = x1 * y1;
    er_u64 mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    *lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Add (-1)^sign * (hi 2^64 + lo) * 2^e, e >= a->lo, to the digits (the caller has sized the window). */
ER_FN void er_acc_add_digits(er_acc *a, er_u32 sign, er_u64 hi, er_u64 lo, er_i32 e)
{
    er_i32 off = e - a->lo;
    er_i32 i = off >> 5, s = off & 31;
    er_i64 m = -(er_i64)sign; /* 0 or -1: (c ^ m) - m is c or -c, without a branch */
    er_u64 w0 = lo << s;
    er_u64 w1 = s ? (hi << s) | (lo >> (64 - s)) : hi;
    er_u64 w2 = s ? hi >> (64 - s) : 0u;
    a->d[i] += (((er_i64)(w0 & 0xFFFFFFFFu)) ^ m) - m;
    a->d[i + 1] += (((er_i64)(w0 >> 32)) ^ m) - m;
    if (w1 | w2) {
        a->d[i + 2] += (((er_i64)(w1 & 0xFFFFFFFFu)) ^ m) - m;
        a->d[i + 3] += (((er_i64)(w1 >> 32)) ^ m) - m;
        a->d[i + 4] += (((er_i64)w2) ^ m) - m;
    }
}

/* Add a decoded value (a term or the accumulator input C). */
ER_FN void er_acc_add_val(er_acc *a, er_val v)
{
    switch (v.cls) {
    case ER_CLASS_NAN:
        a->nan = 1u;
        return;
    case ER_CLASS_INF:
        if (v.sign) a->ninf = 1u; else a->pinf = 1u;
        return;
    case ER_CLASS_ZERO:
        if (v.sign) a->zneg = 1u; else a->zpos = 1u;
        return;
    default:
        a->nonzero = 1u;
        er_acc_add_digits(a, v.sign, 0u, v.sig, v.exp);
    }
}

/* An operand's decoded value with ER_OPT_FTZ_IN applied: a subnormal read as the zero of its sign. */
ER_FN er_val er_val_flush_in(er_val v, er_u32 opts)
{
    if ((opts & ER_OPT_FTZ_IN) && v.cls == ER_CLASS_SUBNORMAL) v.cls = ER_CLASS_ZERO;
    return v;
}

/* The exact value x * |s| of a block-scaled element (elements and scales have at most 4 significant
 * bits, so the significands' product is exact), with IEEE 754's special cases.  A scale's sign bit is
 * ignored: the scale formats are unsigned (e8m0; nvf4's ue4m3, stored as f8E4M3FN patterns), and the
 * hardware takes a ue4m3 scale's magnitude (docs/accumulation-models.md). */
ER_FN er_val er_val_scaled(er_val x, er_val s)
{
    er_val r = x;
    s.sign = 0;
    if (x.cls == ER_CLASS_NAN || s.cls == ER_CLASS_NAN || (x.cls == ER_CLASS_INF && s.cls == ER_CLASS_ZERO) ||
        (s.cls == ER_CLASS_INF && x.cls == ER_CLASS_ZERO)) {
        r.cls = ER_CLASS_NAN;
        return r;
    }
    r.sign = x.sign ^ s.sign;
    if (x.cls == ER_CLASS_INF || s.cls == ER_CLASS_INF) {
        r.cls = ER_CLASS_INF;
        return r;
    }
    if (x.cls == ER_CLASS_ZERO || s.cls == ER_CLASS_ZERO) {
        r.cls = ER_CLASS_ZERO;
        return r;
    }
    r.cls = ER_CLASS_NORMAL;
    r.sig = x.sig * s.sig;
    r.exp = x.exp + s.exp;
    return r;
}

/* A copy of an accumulator's digits in use and its flags (er_acc_round consumes its argument). */
ER_FN void er_acc_copy(er_acc *dst, const er_acc *src)
{
    er_i32 i;
    for (i = 0; i < src->nd; i++) dst->d[i] = src->d[i];
    dst->lo = src->lo;
    dst->nd = src->nd;
    dst->nan = src->nan;
    dst->pinf = src->pinf;
    dst->ninf = src->ninf;
    dst->nonzero = src->nonzero;
    dst->zpos = src->zpos;
    dst->zneg = src->zneg;
}

/* Add the exact product of two decoded values, with IEEE 754's special cases. */
ER_FN void er_acc_add_product(er_acc *a, er_val x, er_val y)
{
    er_u32 sign = x.sign ^ y.sign;
    er_u32 xz = x.cls == ER_CLASS_ZERO, yz = y.cls == ER_CLASS_ZERO;
    er_u32 xi = x.cls == ER_CLASS_INF, yi = y.cls == ER_CLASS_INF;
    if (x.cls == ER_CLASS_NAN || y.cls == ER_CLASS_NAN || (xz && yi) || (xi && yz)) {
        a->nan = 1u;
        return;
    }
    if (xi || yi) {
        if (sign) a->ninf = 1u; else a->pinf = 1u;
        return;
    }
    if (xz || yz) {
        if (sign) a->zneg = 1u; else a->zpos = 1u;
        return;
    }
    a->nonzero = 1u;
    if (((x.sig | y.sig) >> 32) == 0u) {
        er_acc_add_digits(a, sign, 0u, x.sig * y.sig, x.exp + y.exp);
    } else {
        er_u64 hi, lo;
        er_mul64x64(x.sig, y.sig, &hi, &lo);
        er_acc_add_digits(a, sign, hi, lo, x.exp + y.exp);
    }
}

/* floor(v / 2^32) for a signed v, without relying on the implementation's right shift of negatives. */
ER_FN er_i64 er_floor_shr32_(er_i64 v)
{
    er_u64 u = (er_u64)v >> 32;
    if (v < 0) u |= ~ER_U64(0) << 32;
    return (er_i64)u;
}

/*
 * Round the accumulated exact sum once into format `to`.  Special values follow IEEE 754 for a sum of
 * products: NaN if a term was NaN, 0 x inf, or +inf and -inf met; else the infinity's sign.  An exact
 * zero sum is -0 when every term was -0, +0 when every term was +0, and otherwise +0, or -0 when
 * rounding toward negative_inf (IEEE 754 6.3).  No term at all is +0.  The digits are consumed (the
 * accumulator must be re-initialised before reuse).
 */
ER_FN er_res er_acc_round(er_acc *a, er_i32 to, er_i32 dir, er_u32 opts)
{
    er_i32 i, t;
    er_i64 carry = 0;
    er_u32 sign = 0u, sticky = 0u;
    er_u64 hi, next, sig;
    er_i32 z, exp;
    if (a->nan || (a->pinf && a->ninf)) {
        er_res r = er_make_nan(to, 0u, 0u, 0);
        r.flags |= ER_FLAG_INVALID;
        return r;
    }
    if (a->pinf || a->ninf) {
        /* an infinite exact sum: the conversion of an infinity of that sign */
        er_u64 inf_bits = a->ninf ? ER_U64(0xFFF0000000000000) : ER_U64(0x7FF0000000000000);
        return er_convert(ER_FMT_F64, to, inf_bits, dir, opts);
    }
    for (i = 0; i < a->nd; i++) {
        er_i64 v = a->d[i] + carry;
        a->d[i] = v & 0xFFFFFFFF;
        carry = er_floor_shr32_(v);
    }
    if (carry < 0) {
        /* negative: the magnitude is the two's complement of the digit string */
        er_i64 c = 1;
        sign = 1u;
        for (i = 0; i < a->nd; i++) {
            er_i64 v = (a->d[i] ^ 0xFFFFFFFF) + c;
            a->d[i] = v & 0xFFFFFFFF;
            c = v >> 32; /* v >= 0 here */
        }
    }
    t = a->nd - 1;
    while (t >= 0 && a->d[t] == 0) t--;
    if (t < 0) {
        er_u32 neg;
        if (!a->nonzero && !a->zpos && !a->zneg)
            neg = 0u; /* an empty sum */
        else if (!a->nonzero && (a->zpos ^ a->zneg))
            neg = a->zneg; /* zeros of one sign only */
        else
            neg = dir == ER_RND_NEGATIVE_INF; /* cancellation, or zeros of both signs */
        return er_convert(ER_FMT_F64, to, neg ? ER_U64(0x8000000000000000) : 0u, dir, opts);
    }
    /* the top 64 significant bits, and a sticky bit for everything below them */
    hi = ((er_u64)a->d[t] << 32) | (er_u64)(t >= 1 ? a->d[t - 1] : 0);
    next = (er_u64)(t >= 2 ? a->d[t - 2] : 0);
    z = ER_CLZ64(hi); /* 0..31, since digit t is nonzero and below 2^32 */
    sig = z ? (hi << z) | (next >> (32 - z)) : hi;
    sticky = (next & ((ER_U64(1) << (32 - z)) - 1u)) != 0u; /* the bits of digit t-2 not taken */
    for (i = t - 3; i >= 0 && !sticky; i--) sticky = a->d[i] != 0;
    exp = a->lo + 32 * (t - 1) - z;
    return er_round(to, sign, sig, exp, sticky, dir, opts);
}

#endif /* ER_ACC_H */
