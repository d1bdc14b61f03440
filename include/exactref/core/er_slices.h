/* er_slices.h: exact integer slices of narrow float operands and their recombination (shared core, C and
 * CUDA): the Ozaki-style route of the exact engine, an int8 x int8 -> int32 GEMM per pair of slices.
 *
 * docs/exact-engine.md ("Strategy 5: exact integer slices") has the whole argument; in short:
 *   - Grid.  Every finite value of a float format f of at most 8 bits that has subnormals (the fp8, fp6
 *     and fp4 formats, not f8E8M0FNU) is an integer N times 2^g, g = emin - mbits (the exponent of the
 *     least subnormal), |N| < 2^b with b = emax + 1 - g: f8E4M3FN g = -9, b = 18 (448 = 229376 x 2^-9);
 *     f8E5M2 g = -16, b = 32 (57344 = 3758096384 x 2^-16).
 *   - Slices.  |N| = sum_t 2^(7t) d_t with digits d_t = (|N| >> 7t) & 127, and slice t is the signed
 *     digit s_t = sign(N) d_t: an int8 in [-127, 127].  ceil(b / 7) slices: f8E4M3FN 3, f8E5M2 5.
 *   - Exact int32 sums.  |s_a s_b| <= 127^2 = 16129, so any partial sum (in any order) of at most
 *     ER_SL_KCHUNK = 2^17 slice products is at most 2^17 x 16129 = 2114060288 < 2^31 - 1: the int32
 *     accumulation of a tensor core (or of the host emulation) is exact.  Longer k is cut into chunks.
 *   - Recombination.  sum_p N_a,p N_b,p = sum_chunks sum_(t,u) 2^(7(t+u)) P_tu, each P_tu an exact int32
 *     chunk sum, added into a 128-bit two's-complement integer (er_sl_wide): every partial sum of the
 *     recombination is at most sum_p |N_a,p| |N_b,p| < k 2^(ba + bb) <= 2^(24 + 33 + 33) < 2^127 in
 *     magnitude, so it never wraps.  The exact sum of products is that integer times 2^(ga + gb).
 *   - One rounding.  The integer is normalised to 64 bits and a sticky bit exactly as er_acc_round
 *     normalises the accumulator's digits, and er_round rounds it: the same call, the same bits.  With
 *     a nonzero C (or an infinite or NaN C) the integer and C go through the long accumulator (er_acc).
 *   - Scaled slices (bf16, f16, tf32): a grid per row of A / column of B instead of the format's
 *     (er_sl_row_grid below); the element's exponent is then G_a(i) + G_b(j) instead of ga + gb.
 *   - What is left to the element-wise exact path (the caller's): elements whose row of A or column of
 *     B holds a NaN or an infinity (er_sl_int returns 0 for them) or does not fit its grid, and
 *     elements whose integer sum is 0 with no C or a zero C (the sign of a zero sum comes from the
 *     terms' signs, IEEE 754 6.3).
 * Integers only; no floating point.
 */
#ifndef ER_SLICES_H
#define ER_SLICES_H

#include "er_acc.h"

#define ER_SL_DIGIT_BITS 7
#define ER_SL_MAX_SLICES 5
/* At most this many slice products per int32 sum: 2^17 x 127^2 = 2114060288 <= 2^31 - 1. */
#define ER_SL_KCHUNK 131072
/* The largest k the recombination's 128 bits and the accumulator's window were argued for (er_mma's). */
#define ER_SL_KMAX ((er_i64)1 << 24)

/* The exponent g of the grid of format f (its least subnormal is 2^g). */
ER_FN er_i32 er_sl_grid(er_i32 f)
{
    er_fmt d = er_fmt_get(f);
    return er_fmt_emin(d) - d.mbits;
}

/* Bits b of the largest |N| (|N| < 2^b). */
ER_FN er_i32 er_sl_bits(er_i32 f) { return er_fmt_emax(er_fmt_get(f)) + 1 - er_sl_grid(f); }

/* Slices per operand of format f: ceil(b / 7); 0 when f has no slices (not a float of at most 8 bits
 * with subnormals, or more than ER_SL_MAX_SLICES would be needed). */
ER_FN er_i32 er_sl_nslices(er_i32 f)
{
    er_fmt d = er_fmt_get(f);
    er_i32 ns;
    if (d.kind != ER_KIND_FLOAT || d.width > 8 || d.width == 0 || (d.flags & ER_F_NOSUB) != 0u) return 0;
    ns = (er_sl_bits(f) + ER_SL_DIGIT_BITS - 1) / ER_SL_DIGIT_BITS;
    return ns <= ER_SL_MAX_SLICES ? ns : 0;
}

/* The integer N of pattern bits of format f on its grid (value = N 2^g), ER_OPT_FTZ_IN applied as the
 * engine applies it: 1, or 0 for a NaN or an infinity (then *n = 0). */
ER_FN er_i32 er_sl_int(er_i32 f, er_u64 bits, er_u32 opts, er_i64 *n)
{
    er_val v = er_val_flush_in(er_decode(f, bits), opts);
    *n = 0;
    if (v.cls == ER_CLASS_NAN || v.cls == ER_CLASS_INF) return 0;
    if (v.cls == ER_CLASS_ZERO) return 1;
    {
        er_i64 mag = (er_i64)(v.sig << (v.exp - er_sl_grid(f))); /* v.exp >= g: below 2^33 */
        *n = v.sign ? -mag : mag;
    }
    return 1;
}

/*
 * Scaled slices (formats without a fixed grid whose precision is at most 21 bits: bf16, f16, tf32):
 * each row of A (column of B) gets its own grid 2^G, G = max(top - 21, g), where |x| < 2^top for
 * every value of the row; the row FITS when every finite nonzero value is a multiple of 2^G (its least
 * significant bit lies at or above G), and then every N = x / 2^G is an integer below 2^21: three
 * slices.  A row that does not fit, or holds a NaN or an infinity, goes to the element-wise exact path.
 * Fixed-grid formats (er_sl_nslices > 0) take G = g for every row and always fit.
 */
#define ER_SL_SCALED_BITS 21
#define ER_SL_SCALED_SLICES 3

ER_FN er_i32 er_sl_scaled(er_i32 f)
{
    er_fmt d = er_fmt_get(f);
    return er_sl_nslices(f) == 0 && d.kind == ER_KIND_FLOAT && d.width <= 32 && d.width > 0 &&
           d.mbits + 1 <= ER_SL_SCALED_BITS && (d.flags & ER_F_NOSUB) == 0u;
}

/* Slices per operand of format f (fixed grid or scaled); 0: no slices. */
ER_FN er_i32 er_sl_slices_of(er_i32 f) { return er_sl_nslices(f) ? er_sl_nslices(f) : er_sl_scaled(f) ? ER_SL_SCALED_SLICES : 0; }

/* Trailing zero bits of a nonzero value. */
ER_FN er_i32 er_sl_ctz_(er_u64 x) { return 63 - ER_CLZ64(x & (~x + 1u)); }

/* One value of a row into the row's scan: *top (least t with |x| < 2^t) and *lsb (least exponent of a
 * least significant bit) over its finite nonzero values (start: top = -100000, lsb = 100000); 0 for a
 * NaN or an infinity. */
ER_FN er_i32 er_sl_scan(er_i32 f, er_u64 bits, er_u32 opts, er_i32 *top, er_i32 *lsb)
{
    er_val v = er_val_flush_in(er_decode(f, bits), opts);
    if (v.cls == ER_CLASS_NAN || v.cls == ER_CLASS_INF) return 0;
    if (v.cls != ER_CLASS_ZERO && v.sig) {
        er_i32 t = v.exp + 64 - ER_CLZ64(v.sig), l = v.exp + er_sl_ctz_(v.sig);
        if (t > *top) *top = t;
        if (l < *lsb) *lsb = l;
    }
    return 1;
}

/* A row's grid G from its scan, and whether it fits (see above). */
ER_FN er_i32 er_sl_row_grid(er_i32 f, er_i32 top, er_i32 lsb, er_i32 *fits)
{
    er_i32 g = er_sl_grid(f), G;
    if (er_sl_nslices(f)) {
        *fits = 1;
        return g;
    }
    G = top - ER_SL_SCALED_BITS > g ? top - ER_SL_SCALED_BITS : g;
    *fits = lsb >= G; /* an empty or all-zero row has lsb = 100000: it fits */
    return G;
}

/* The integer N of a value on grid 2^G of a row that fits (value = N 2^G): 1, or 0 for a NaN or an
 * infinity (then *n = 0). */
ER_FN er_i32 er_sl_int_at(er_i32 f, er_u64 bits, er_u32 opts, er_i32 G, er_i64 *n)
{
    er_val v = er_val_flush_in(er_decode(f, bits), opts);
    *n = 0;
    if (v.cls == ER_CLASS_NAN || v.cls == ER_CLASS_INF) return 0;
    if (v.cls == ER_CLASS_ZERO) return 1;
    {
        er_i32 sh = v.exp - G;
        er_i64 mag = (er_i64)(sh >= 0 ? v.sig << sh : v.sig >> -sh); /* exact: the row fits */
        *n = v.sign ? -mag : mag;
    }
    return 1;
}

/* Slice t of the integer n: sign(n) ((|n| >> 7t) & 127). */
ER_FN er_i8 er_sl_digit(er_i64 n, er_i32 t)
{
    er_i64 mag = n < 0 ? -n : n;
    er_i32 d = (er_i32)((mag >> (ER_SL_DIGIT_BITS * t)) & 127);
    return (er_i8)(n < 0 ? -d : d);
}

/* The reference dot product of two int8 rows (the host pass's GEMM; exact for len <= ER_SL_KCHUNK). */
ER_FN er_i32 er_sl_dot_i8(ER_GLOBAL const er_i8 *a, ER_GLOBAL const er_i8 *b, er_i64 len)
{
    er_i32 s = 0;
    er_i64 p;
    for (p = 0; p < len; p++) s += (er_i32)a[p] * (er_i32)b[p];
    return s;
}

/* A 128-bit two's-complement integer (hi: the upper 64 bits). */
typedef struct er_sl_wide {
    er_u64 lo, hi;
} er_sl_wide;

ER_FN er_sl_wide er_sl_wide_zero(void)
{
    er_sl_wide w;
    w.lo = 0u;
    w.hi = 0u;
    return w;
}

/* w += v 2^sh, 0 <= sh < 64 (unsigned arithmetic: no implementation-defined shift of a negative). */
ER_FN void er_sl_wide_add(er_sl_wide *w, er_i64 v, er_i32 sh)
{
    er_u64 lo0 = (er_u64)v, hi0 = v < 0 ? ~ER_U64(0) : ER_U64(0);
    er_u64 lo = lo0 << sh, hi = sh ? (hi0 << sh) | (lo0 >> (64 - sh)) : hi0;
    er_u64 s = w->lo + lo;
    w->hi = w->hi + hi + (s < lo ? 1u : 0u);
    w->lo = s;
}

/* One chunk's contribution to an element: pr[t * ldt + u] holds P_tu (t < na, u < nb). */
ER_FN void er_sl_recombine(er_sl_wide *w, const er_i32 *pr, er_i32 na, er_i32 nb, er_i32 ldt)
{
    er_i32 t, u;
    for (t = 0; t < na; t++)
        for (u = 0; u < nb; u++) er_sl_wide_add(w, (er_i64)pr[t * ldt + u], ER_SL_DIGIT_BITS * (t + u));
}

ER_FN er_i32 er_sl_wide_is_zero(er_sl_wide w) { return w.lo == 0u && w.hi == 0u; }

/* Sign and magnitude (mhi 2^64 + mlo) of w. */
ER_FN er_u32 er_sl_wide_mag(er_sl_wide w, er_u64 *mhi, er_u64 *mlo)
{
    er_u32 neg = (er_u32)(w.hi >> 63);
    if (neg) {
        er_u64 lo = ~w.lo + 1u;
        *mhi = ~w.hi + (lo == 0u ? 1u : 0u);
        *mlo = lo;
    } else {
        *mhi = w.hi;
        *mlo = w.lo;
    }
    return neg;
}

/*
 * Round w 2^e (w nonzero) once into format `to`: the top 64 bits below the leading one, the OR of the
 * rest as the sticky bit, and er_round, exactly as er_acc_round does for the same value (its
 * significand also starts at the leading one, so both pass er_round the same five numbers).
 */
ER_FN er_res er_sl_wide_round(er_sl_wide w, er_i32 e, er_i32 to, er_i32 dir, er_u32 opts)
{
    er_u64 mhi, mlo, sig;
    er_u32 sign = er_sl_wide_mag(w, &mhi, &mlo), sticky = 0u;
    er_i32 z, exp;
    if (mhi != 0u) {
        z = ER_CLZ64(mhi);
        sig = z ? (mhi << z) | (mlo >> (64 - z)) : mhi;
        sticky = (mlo << z) != 0u; /* the low 64 - z bits of mlo, not taken */
        exp = e + 64 - z;
    } else {
        z = ER_CLZ64(mlo);
        sig = mlo << z;
        exp = e - z;
    }
    return er_round(to, sign, sig, exp, sticky, dir, opts);
}

/*
 * An element's result from its integer sum w (times 2^e, e = ga + gb) and C (c: decoded and flushed as
 * the engine flushes it; has_c 0: none): 1 and *out = the pattern of `to`, or 0 when the element must go
 * to the element-wise exact path (w = 0 with no C or a zero C: the zero's sign needs the terms).  A
 * nonzero or non-finite C goes with w through the long accumulator (window acc_lo, acc_nd: the engine's,
 * which holds any sum of the problem's terms), rounded once: er_mma's own steps on the same value.
 */
ER_FN er_i32 er_sl_finish(er_sl_wide w, er_i32 e, er_i32 has_c, er_val c, er_i32 acc_lo, er_i32 acc_nd, er_i32 to,
                          er_i32 dir, er_u32 opts, er_u64 *out)
{
    er_i32 czero = !has_c || c.cls == ER_CLASS_ZERO;
    if (czero) {
        if (er_sl_wide_is_zero(w)) return 0;
        *out = er_sl_wide_round(w, e, to, dir, opts).bits;
        return 1;
    }
    {
        er_acc acc;
        er_acc_init(&acc, acc_lo, acc_nd);
        if (!er_sl_wide_is_zero(w)) {
            er_u64 mhi, mlo;
            er_u32 sign = er_sl_wide_mag(w, &mhi, &mlo);
            acc.nonzero = 1u;
            er_acc_add_digits(&acc, sign, mhi, mlo, e);
        }
        er_acc_add_val(&acc, c);
        *out = er_acc_round(&acc, to, dir, opts).bits;
    }
    return 1;
}

#endif /* ER_SLICES_H */
