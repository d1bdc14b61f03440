/* er_exp.h: certified binary64 enclosures of exp(x) and 2^x by one polynomial with a proven error (docs/proofs/ops-math.md), shared core. */
#ifndef ER_EXP_H
#define ER_EXP_H

#include "er_bounds.h" /* er_b_up, er_b_down, er_b_pow2, er_b_abs */

/*
 * exp(x) = 2^k exp(t), t = x - k ln2, and 2^x = 2^k exp(t), t = (x - k) ln2, with k the integer nearest
 * x / ln2 (resp. x) and |t| <= 0.35.  ln2 = ER_EXP_LN2_HI + ER_EXP_LN2_LO + d with |d| < 2^-80 (checked
 * against MPFR in tests/ops/test_ops_math.c); ER_EXP_LN2_HI has 21 trailing zero bits, so k ER_EXP_LN2_HI
 * is exact for |k| < 2^21.  t is enclosed by outward operations; exp(t) by a degree-13 Taylor polynomial in
 * Horner's form at the two ends, whose total relative error (truncation, rounded coefficients, rounded
 * Horner steps) is below 2^-47 on |t| <= 0.35: ER_EXP_E = 2^-46 is used.  The operation layer
 * (src/ops/op_math.c) and the interpreter's bounds mode (src/interp/interp_bounds.c) both call these.
 */
#define ER_EXP_LN2_HI 0x1.62e42feep-1
#define ER_EXP_LN2_LO 0x1.a39ef35793c76p-33
#define ER_EXP_INV_LN2 0x1.71547652b82fep0
#define ER_EXP_E 0x1p-46

/* sum_{i <= 13} t^i / i!, the coefficients rounded to nearest, in Horner's form. */
ER_FN double er_exp_horner(double t)
{
    const double c[14] = {
        1.0, 1.0, 0.5, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10,
        0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
        0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
    };
    double p = c[13];
    int i;
    for (i = 12; i >= 0; i--) p = p * t + c[i];
    return p;
}

/* [*lo, *hi] holds exp(t) for every t in [tl, th] (|tl|, |th| <= 0.35), times s = 2^k. */
ER_FN void er_exp_finish(double tl, double th, double s, double *lo, double *hi)
{
    *lo = er_b_down(er_b_down(er_exp_horner(tl) * (1 - 2 * ER_EXP_E)) * s);
    *hi = er_b_up(er_b_up(er_exp_horner(th) * (1 + 2 * ER_EXP_E)) * s);
}

/*
 * lo <= exp(x) <= hi for a finite x with |x| <= 708; returns 0 (nothing written) for any other x or where
 * the reduction does not land in |t| <= 0.35 (the caller then asks MPFR).
 */
ER_FN int er_b_exp_enclose(double x, double *lo, double *hi)
{
    double k, kh, r1l, r1h, kl1, kll, klh, tl, th;
    if (!(er_b_abs(x) <= 708)) return 0;
    k = (x * ER_EXP_INV_LN2 + 0x1.8p52) - 0x1.8p52; /* the nearest integer (|x / ln2| < 2^51) */
    kh = k * ER_EXP_LN2_HI;                         /* exact */
    r1l = er_b_down(x - kh);
    r1h = er_b_up(x - kh);
    kl1 = k * ER_EXP_LN2_LO;
    kll = er_b_down(kl1);
    klh = er_b_up(kl1);
    tl = er_b_down(er_b_down(r1l - klh) - 0x1p-69);
    th = er_b_up(er_b_up(r1h - kll) + 0x1p-69);
    if (!(er_b_abs(tl) <= 0.35 && er_b_abs(th) <= 0.35)) return 0;
    er_exp_finish(tl, th, er_b_pow2((int)k), lo, hi);
    return 1;
}

/*
 * lo <= 2^x <= hi for a finite x with |x| <= 1000; returns 0 (nothing written) for any other x.  k = the
 * integer nearest x and f = x - k are exact (|f| <= 1/2), t = f ln2 is enclosed from f ER_EXP_LN2_HI and
 * f ER_EXP_LN2_LO rounded outward plus |f d| < 2^-81 (2^-69 is added), so |t| <= 0.3466 + 2^-60 < 0.35.
 */
ER_FN int er_b_exp2_enclose(double x, double *lo, double *hi)
{
    double k, f, tl, th;
    if (!(er_b_abs(x) <= 1000)) return 0;
    k = (x + 0x1.8p52) - 0x1.8p52; /* the nearest integer, exactly (|x| < 2^51) */
    f = x - k;                     /* exact: |f| <= 1/2 and f is a multiple of ulp(x) */
    tl = er_b_down(er_b_down(er_b_down(f * ER_EXP_LN2_HI) + er_b_down(f * ER_EXP_LN2_LO)) - 0x1p-69);
    th = er_b_up(er_b_up(er_b_up(f * ER_EXP_LN2_HI) + er_b_up(f * ER_EXP_LN2_LO)) + 0x1p-69);
    if (!(er_b_abs(tl) <= 0.35 && er_b_abs(th) <= 0.35)) return 0;
    er_exp_finish(tl, th, er_b_pow2((int)k), lo, hi);
    return 1;
}

#endif /* ER_EXP_H */
