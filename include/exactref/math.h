/* math.h: the scalar math library: correctly rounded functions in every float format and direction. */
#ifndef EXACTREF_MATH_H
#define EXACTREF_MATH_H

#include <stdint.h>
#include "exactref/export.h"

#include "exactref/status.h"
#include "exactref/core/er_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * docs/math.md states each function's accuracy, special cases and proof.  In short: every result of
 * er_math_unary, er_math_binary and er_math_fma is the exact mathematical value rounded ONCE into the
 * format, in the direction asked for (all of ER_RND_*, odd included), for every float format of the
 * table (f64 down to f4E2M1FN and f8E8M0FNU).  Special cases follow C17 Annex F.  The functions may be
 * called from several threads at once (MPFR keeps its state per thread; see er_math_free_cache), and
 * leave the caller's MPFR exponent range and flags as they found them.
 */

/* Division by zero (an exact infinity from finite operands: log(0), pow(0, -1), 1/0).  The core's
 * conversions never raise it, so it lives here, above the four flags of core/er_types.h. */
#ifndef ER_FLAG_DIVBYZERO
#define ER_FLAG_DIVBYZERO 16u
#endif

typedef enum er_math_op {
    ER_MATH_SQRT, ER_MATH_RSQRT, ER_MATH_EXP, ER_MATH_EXP2, ER_MATH_LOG, ER_MATH_LOG2,
    ER_MATH_TANH, ER_MATH_SINH, ER_MATH_COSH, ER_MATH_SIN, ER_MATH_COS, ER_MATH_TAN, ER_MATH_ATAN,
    ER_MATH_FLOOR, ER_MATH_CEIL,                                  /* unary */
    ER_MATH_ADD, ER_MATH_SUB, ER_MATH_MUL, ER_MATH_DIV, ER_MATH_FMOD, ER_MATH_ATAN2, ER_MATH_POW
                                                                  /* binary */
} er_math_op;
#define ER_MATH_OP_COUNT ((int)ER_MATH_POW + 1)

/* out = op(x) correctly rounded into fmt in direction dir (one rounding); IEEE special cases as C's
 * libm (C17 Annex F); *flags gets ER_FLAG_INEXACT etc. (flags may be NULL).
 * ER_EINVAL: fmt not a float format, dir not an ER_RND_*, op not unary, out NULL.
 * ER_EPATTERN: x has bits above the format's width (or in tf32's padding). */
ER_API er_status er_math_unary(er_math_op op, int fmt, uint64_t x, int dir, uint64_t *out, unsigned *flags);
/* out = op(x, y); atan2(x, y) is C's atan2 with x the ordinate (the angle of the point (y, x)). */
ER_API er_status er_math_binary(er_math_op op, int fmt, uint64_t x, uint64_t y, int dir, uint64_t *out,
                         unsigned *flags);
/* out = a*b+c, one rounding. */
ER_API er_status er_math_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int dir, uint64_t *out,
                      unsigned *flags);
/* "exp", "atan2", ...; NULL for an unknown op. */
ER_API const char *er_math_op_name(er_math_op op);
/* 1 for a unary op, 2 for a binary one, 0 for an unknown one. */
ER_API int er_math_op_arity(er_math_op op);
/* The op of a name as er_math_op_name spells it (ER_EINVAL for an unknown name). */
ER_API er_status er_math_op_from_name(const char *name, er_math_op *op);

/* Frees the calling thread's MPFR caches (the constants pi, log 2, ... that MPFR keeps per thread, a
 * kilobyte or so).  A thread that used the math library should call it before it ends, or they are
 * lost; the next call in the thread simply rebuilds them.  Always ER_OK. */
ER_API er_status er_math_free_cache(void);

/* ---- The seed's scalar layer on binary64 ----
 * Pure functions of their arguments: no state, no failure.  The elementary functions below are
 * correctly rounded to nearest-even (the same bits as er_math_unary with ER_FMT_F64 and
 * ER_RND_NEAREST_EVEN); the directed ones take an ER_RND_* direction. */
#define ER_MATH_PI 0x1.921fb54442d18p+1  /* pi rounded to nearest */
#define ER_MATH_LN2 0x1.62e42fefa39efp-1 /* ln 2 rounded to nearest */
#define ER_MATH_INF_BITS UINT64_C(0x7FF0000000000000)  /* +inf */
#define ER_MATH_QNAN_BITS UINT64_C(0x7FF8000000000000) /* the default quiet NaN */
ER_API uint64_t er_math_bits(double x);       /* the bit pattern of x */
ER_API double er_math_from_bits(uint64_t b);  /* the binary64 value of pattern b (NaN payload kept) */
ER_API int er_math_is_nan(double x);
ER_API int er_math_finite(double x);          /* neither infinite nor NaN */
ER_API int er_math_sign_bit(double x);        /* the sign bit (-0.0 and negative NaNs count) */
ER_API int er_math_subnormal(double x);       /* a nonzero subnormal */
ER_API double er_math_copysign_zero(double x); /* the zero with the sign of x */
ER_API double er_math_succ(double x);         /* next value toward +inf (+inf and NaN: themselves) */
ER_API double er_math_pred(double x);         /* next value toward -inf (-inf and NaN: themselves) */
ER_API double er_math_pow2(int k);            /* 2^k: +0 below 2^-1074, +inf above 2^1023 */
ER_API double er_math_ldexp(double x, int k); /* x * 2^k rounded once to nearest (subnormals included) */
/* The binary exponent e of a finite nonzero x (x = m 2^e, 1 <= |m| < 2; subnormals too);
 * INT_MIN for a zero, INT_MAX for an infinity or a NaN. */
ER_API int er_math_exponent(double x);
/* Dekker: p = fl(a*b) and a*b = p + e exactly, when neither the product nor the splits overflow
 * (|a|, |b| < 2^996) and e does not underflow (|a*b| >= 2^-969). */
ER_API void er_math_two_prod(double a, double b, double *p, double *e);
/* Knuth: s = fl(a+b) and a+b = s + e exactly, for finite operands whose sum does not overflow. */
ER_API void er_math_two_sum(double a, double b, double *s, double *e);
/* The round-to-odd value of s + e where (s, e) is a TwoSum pair (s = fl(s + e)). */
ER_API double er_math_odd_of(double s, double e);
/* x + y rounded to odd (x, y finite, the sum not overflowing). */
ER_API double er_math_add_odd(double x, double y);
/* a*b + c with one rounding to nearest.  Boldo and Melquiond's emulation inside its range
 * (|a|, |b| < 2^500, |c| < 2^1000, 2^-900 <= |a b| <= 2^900); outside it, and for zero, infinite or NaN
 * operands, the exact path of er_math_fma: the result is correctly rounded everywhere. */
ER_API double er_math_fma_f64(double a, double b, double c);
ER_API double er_math_sqrt(double x);
ER_API double er_math_add(double a, double b, int dir); /* a + b rounded in direction dir (ER_RND_*) */
ER_API double er_math_mul(double a, double b, int dir);
ER_API double er_math_div(double a, double b, int dir);
ER_API double er_math_floor(double x);
ER_API double er_math_ceil(double x);
ER_API double er_math_fmod(double a, double b); /* exact: a - n b, n = trunc(a / b) */
ER_API double er_math_exp(double x);
ER_API double er_math_exp2(double x);
ER_API double er_math_log(double x);
ER_API double er_math_log2(double x);
ER_API double er_math_rsqrt(double x);
ER_API double er_math_tanh(double x);
ER_API double er_math_sinh(double x);
ER_API double er_math_cosh(double x);
ER_API double er_math_sin(double x);
ER_API double er_math_cos(double x);
ER_API double er_math_tan(double x);
ER_API double er_math_atan(double x);
ER_API double er_math_atan2(double y, double x); /* C's atan2(y, x) */
ER_API double er_math_pow(double x, double y);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_MATH_H */
