/* math_f64.c: the seed's scalar layer on binary64: bits, neighbours, error-free transformations, fma. */
#include <limits.h>
#include <string.h>

#include "exactref/math.h"
#include "exactref/core/er_round.h"

/* This file's arithmetic is binary64 with contraction off (the top CMakeLists.txt): each + - * below
 * is one IEEE operation rounded to nearest, which the error-free transformations rely on. */

uint64_t er_math_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

double er_math_from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

#define ER_EXP_MASK_ UINT64_C(0x7FF0000000000000)
#define ER_FRAC_MASK_ UINT64_C(0x000FFFFFFFFFFFFF)
#define ER_SIGN_ UINT64_C(0x8000000000000000)

int er_math_is_nan(double x)
{
    uint64_t b = er_math_bits(x);
    return (b & ER_EXP_MASK_) == ER_EXP_MASK_ && (b & ER_FRAC_MASK_) != 0u;
}

int er_math_finite(double x) { return (er_math_bits(x) & ER_EXP_MASK_) != ER_EXP_MASK_; }

int er_math_sign_bit(double x) { return (int)(er_math_bits(x) >> 63); }

int er_math_subnormal(double x)
{
    uint64_t b = er_math_bits(x);
    return (b & ER_EXP_MASK_) == 0u && (b & ER_FRAC_MASK_) != 0u;
}

double er_math_copysign_zero(double x) { return er_math_from_bits(er_math_bits(x) & ER_SIGN_); }

double er_math_succ(double x)
{
    uint64_t b = er_math_bits(x);
    if (er_math_is_nan(x) || b == ER_EXP_MASK_)
        return x;
    if ((b & ~ER_SIGN_) == 0u) /* either zero: the least positive subnormal */
        return er_math_from_bits(1u);
    return er_math_from_bits(b >> 63 ? b - 1u : b + 1u);
}

double er_math_pred(double x) { return -er_math_succ(-x); }

double er_math_pow2(int k)
{
    if (k > 1023)
        return er_math_from_bits(ER_EXP_MASK_);
    if (k >= -1022)
        return er_math_from_bits((uint64_t)(k + 1023) << 52);
    if (k >= -1074)
        return er_math_from_bits(UINT64_C(1) << (k + 1074));
    return 0.0;
}

double er_math_ldexp(double x, int k)
{
    er_val v = er_decode(ER_FMT_F64, er_math_bits(x));
    er_i32 e;
    if (v.cls != ER_CLASS_NORMAL && v.cls != ER_CLASS_SUBNORMAL)
        return x;
    /* One rounding, in integer arithmetic: the core rounds sig * 2^(exp + k) once. */
    k = k > 4000 ? 4000 : k < -4000 ? -4000 : k;
    e = v.exp + k;
    return er_math_from_bits(er_round(ER_FMT_F64, v.sign, v.sig, e, 0u, ER_RND_NEAREST_EVEN, 0u).bits);
}

int er_math_exponent(double x)
{
    er_val v = er_decode(ER_FMT_F64, er_math_bits(x));
    if (v.cls == ER_CLASS_ZERO)
        return INT_MIN;
    if (v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN)
        return INT_MAX;
    return v.exp + 63 - ER_CLZ64(v.sig);
}

/* Veltkamp's split: a = hi + lo with hi of 26 bits and lo of 26 bits (and a sign), exact. */
static void er_split_f64_(double a, double *hi, double *lo)
{
    double c = 134217729.0 * a; /* 2^27 + 1 */
    double h = c - (c - a);
    *hi = h;
    *lo = a - h;
}

void er_math_two_prod(double a, double b, double *p, double *e)
{
    double ah, al, bh, bl, x = a * b;
    er_split_f64_(a, &ah, &al);
    er_split_f64_(b, &bh, &bl);
    *p = x;
    *e = ((ah * bh - x) + ah * bl + al * bh) + al * bl;
}

void er_math_two_sum(double a, double b, double *s, double *e)
{
    double x = a + b;
    double bv = x - a;
    double av = x - bv;
    *s = x;
    *e = (a - av) + (b - bv);
}

double er_math_odd_of(double s, double e)
{
    if (e == 0.0 || (er_math_bits(s) & 1u))
        return s;
    /* s's significand is even and the exact value lies beyond it on e's side: the neighbour there is
     * odd, and it is the round-to-odd value (the exact sum lies strictly between s and it). */
    return e > 0.0 ? er_math_succ(s) : er_math_pred(s);
}

double er_math_add_odd(double x, double y)
{
    double s, e;
    er_math_two_sum(x, y, &s, &e);
    return er_math_odd_of(s, e);
}

static double er_math_fmt1_(er_math_op op, double x)
{
    uint64_t r = 0;
    er_math_unary(op, ER_FMT_F64, er_math_bits(x), ER_RND_NEAREST_EVEN, &r, NULL);
    return er_math_from_bits(r);
}

static double er_math_fmt2_(er_math_op op, double x, double y, int dir)
{
    uint64_t r = 0;
    if (dir < 0 || dir >= ER_RND_COUNT)
        dir = ER_RND_NEAREST_EVEN;
    er_math_binary(op, ER_FMT_F64, er_math_bits(x), er_math_bits(y), dir, &r, NULL);
    return er_math_from_bits(r);
}

static double er_abs_(double x) { return er_math_from_bits(er_math_bits(x) & ~ER_SIGN_); }

double er_math_fma_f64(double a, double b, double c)
{
    double aa = er_abs_(a), ab = er_abs_(b), ac = er_abs_(c), p;
    /* Boldo and Melquiond (IEEE Trans. Computers 57(4), 2008, Algorithm 5.4): the exact product
     * uh + ul, the sum c + uh as th + tl, v = RO(tl + ul), result RN(th + v).  Its range keeps the split
     * and the sums from overflowing and ul from underflowing; NaN comparisons fail, so NaNs leave too. */
    if (aa < 0x1p500 && ab < 0x1p500 && ac < 0x1p1000) {
        p = aa * ab;
        if (p >= 0x1p-900 && p <= 0x1p900) {
            double uh, ul, th, tl;
            er_math_two_prod(a, b, &uh, &ul);
            er_math_two_sum(c, uh, &th, &tl);
            return th + er_math_add_odd(tl, ul);
        }
    }
    {
        uint64_t r = 0;
        er_math_fma(ER_FMT_F64, er_math_bits(a), er_math_bits(b), er_math_bits(c), ER_RND_NEAREST_EVEN,
                    &r, NULL);
        return er_math_from_bits(r);
    }
}

double er_math_sqrt(double x) { return er_math_fmt1_(ER_MATH_SQRT, x); }
double er_math_add(double a, double b, int dir) { return er_math_fmt2_(ER_MATH_ADD, a, b, dir); }
double er_math_mul(double a, double b, int dir) { return er_math_fmt2_(ER_MATH_MUL, a, b, dir); }
double er_math_div(double a, double b, int dir) { return er_math_fmt2_(ER_MATH_DIV, a, b, dir); }
double er_math_floor(double x) { return er_math_fmt1_(ER_MATH_FLOOR, x); }
double er_math_ceil(double x) { return er_math_fmt1_(ER_MATH_CEIL, x); }
double er_math_fmod(double a, double b) { return er_math_fmt2_(ER_MATH_FMOD, a, b, ER_RND_NEAREST_EVEN); }
double er_math_exp(double x) { return er_math_fmt1_(ER_MATH_EXP, x); }
double er_math_exp2(double x) { return er_math_fmt1_(ER_MATH_EXP2, x); }
double er_math_log(double x) { return er_math_fmt1_(ER_MATH_LOG, x); }
double er_math_log2(double x) { return er_math_fmt1_(ER_MATH_LOG2, x); }
double er_math_rsqrt(double x) { return er_math_fmt1_(ER_MATH_RSQRT, x); }
double er_math_tanh(double x) { return er_math_fmt1_(ER_MATH_TANH, x); }
double er_math_sinh(double x) { return er_math_fmt1_(ER_MATH_SINH, x); }
double er_math_cosh(double x) { return er_math_fmt1_(ER_MATH_COSH, x); }
double er_math_sin(double x) { return er_math_fmt1_(ER_MATH_SIN, x); }
double er_math_cos(double x) { return er_math_fmt1_(ER_MATH_COS, x); }
double er_math_tan(double x) { return er_math_fmt1_(ER_MATH_TAN, x); }
double er_math_atan(double x) { return er_math_fmt1_(ER_MATH_ATAN, x); }
double er_math_atan2(double y, double x) { return er_math_fmt2_(ER_MATH_ATAN2, y, x, ER_RND_NEAREST_EVEN); }
double er_math_pow(double x, double y) { return er_math_fmt2_(ER_MATH_POW, x, y, ER_RND_NEAREST_EVEN); }
