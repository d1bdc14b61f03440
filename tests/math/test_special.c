/*
 * test_special.c (math_special): the special cases of C17 Annex F written out by hand (binary64
 * results as constants, flags), NaN propagation, the narrow formats' overflow and pole conventions,
 * the seed's binary64 layer (neighbours, powers of two, ldexp's single rounding, the error-free
 * transformations checked exactly with MPFR, round to odd against the oracle), the API's refusals,
 * and that a call leaves the caller's MPFR exponent range and flags as they were.
 */
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <string.h>

#include "mt_common.h"

#define INF_ UINT64_C(0x7FF0000000000000)
#define NINF_ UINT64_C(0xFFF0000000000000)
#define QNAN_ UINT64_C(0x7FF8000000000000)
#define PZ_ UINT64_C(0)
#define NZ_ UINT64_C(0x8000000000000000)
#define ONE_ UINT64_C(0x3FF0000000000000)
#define NV_ UINT64_C(0xFFFFFFFFFFFFFFFF) /* "the default NaN" marker in the table below */

#define FI ER_FLAG_INVALID
#define FZ ER_FLAG_DIVBYZERO
#define FO (ER_FLAG_OVERFLOW | ER_FLAG_INEXACT)
#define FU (ER_FLAG_UNDERFLOW | ER_FLAG_INEXACT)

static uint64_t B(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}
static double D(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* pi and its fractions rounded to nearest. */
#define PI 0x1.921fb54442d18p+1
#define PI2 0x1.921fb54442d18p+0
#define PI4 0x1.921fb54442d18p-1
#define PI34 0x1.2d97c7f3321d2p+1

typedef struct sc {
    int op;
    double x, y;
    uint64_t want;  /* a pattern; NV_: the default quiet NaN 0x7FF8000000000000 */
    unsigned flags; /* flags that must be raised (and no other of INVALID, DIVBYZERO, OVERFLOW) */
    int dir;
} sc;

static const sc cases[] = {
    {ER_MATH_SQRT, -0.0, 0, NZ_, 0, 0}, {ER_MATH_SQRT, 0.0, 0, PZ_, 0, 0},
    {ER_MATH_SQRT, INFINITY, 0, INF_, 0, 0}, {ER_MATH_SQRT, -1.0, 0, NV_, FI, 0},
    {ER_MATH_SQRT, -INFINITY, 0, NV_, FI, 0}, {ER_MATH_SQRT, 0x1p-1074, 0, UINT64_C(0x1E60000000000000), 0, 0},
    {ER_MATH_RSQRT, 0.0, 0, INF_, FZ, 0}, {ER_MATH_RSQRT, -0.0, 0, NINF_, FZ, 0},
    {ER_MATH_RSQRT, INFINITY, 0, PZ_, 0, 0}, {ER_MATH_RSQRT, -1.0, 0, NV_, FI, 0},
    {ER_MATH_RSQRT, 4.0, 0, UINT64_C(0x3FE0000000000000), 0, 0},
    {ER_MATH_EXP, 0.0, 0, ONE_, 0, 0}, {ER_MATH_EXP, -0.0, 0, ONE_, 0, 0},
    {ER_MATH_EXP, -INFINITY, 0, PZ_, 0, 0}, {ER_MATH_EXP, INFINITY, 0, INF_, 0, 0},
    {ER_MATH_EXP, 710.0, 0, INF_, FO, 0}, {ER_MATH_EXP, 710.0, 0, UINT64_C(0x7FEFFFFFFFFFFFFF), FO, ER_RND_ZERO},
    {ER_MATH_EXP, -746.0, 0, PZ_, FU, 0}, {ER_MATH_EXP, -746.0, 0, 1, FU, ER_RND_POSITIVE_INF},
    {ER_MATH_EXP2, 0.0, 0, ONE_, 0, 0}, {ER_MATH_EXP2, -INFINITY, 0, PZ_, 0, 0},
    {ER_MATH_EXP2, INFINITY, 0, INF_, 0, 0}, {ER_MATH_EXP2, 1024.0, 0, INF_, FO, 0},
    {ER_MATH_EXP2, -1074.0, 0, 1, 0, 0}, {ER_MATH_EXP2, -1075.0, 0, PZ_, FU, 0},
    {ER_MATH_EXP2, -1075.0, 0, 1, FU, ER_RND_NEAREST_AWAY}, {ER_MATH_EXP2, 10.0, 0, UINT64_C(0x4090000000000000), 0, 0},
    {ER_MATH_LOG, 0.0, 0, NINF_, FZ, 0}, {ER_MATH_LOG, -0.0, 0, NINF_, FZ, 0},
    {ER_MATH_LOG, 1.0, 0, PZ_, 0, 0}, {ER_MATH_LOG, 1.0, 0, PZ_, 0, ER_RND_NEGATIVE_INF},
    {ER_MATH_LOG, -1.0, 0, NV_, FI, 0}, {ER_MATH_LOG, -INFINITY, 0, NV_, FI, 0},
    {ER_MATH_LOG, INFINITY, 0, INF_, 0, 0},
    {ER_MATH_LOG2, 0.0, 0, NINF_, FZ, 0}, {ER_MATH_LOG2, 1.0, 0, PZ_, 0, 0},
    {ER_MATH_LOG2, -0x1p-1074, 0, NV_, FI, 0}, {ER_MATH_LOG2, INFINITY, 0, INF_, 0, 0},
    {ER_MATH_LOG2, 0x1p-1074, 0, UINT64_C(0xC090C80000000000), 0, 0},
    {ER_MATH_TANH, 0.0, 0, PZ_, 0, 0}, {ER_MATH_TANH, -0.0, 0, NZ_, 0, 0},
    {ER_MATH_TANH, INFINITY, 0, ONE_, 0, 0}, {ER_MATH_TANH, -INFINITY, 0, UINT64_C(0xBFF0000000000000), 0, 0},
    {ER_MATH_TANH, 30.0, 0, UINT64_C(0x3FEFFFFFFFFFFFFF), ER_FLAG_INEXACT, ER_RND_ZERO},
    {ER_MATH_SINH, -0.0, 0, NZ_, 0, 0}, {ER_MATH_SINH, -INFINITY, 0, NINF_, 0, 0},
    {ER_MATH_SINH, 711.0, 0, INF_, FO, 0}, {ER_MATH_SINH, -711.0, 0, NINF_, FO, 0},
    {ER_MATH_COSH, -0.0, 0, ONE_, 0, 0}, {ER_MATH_COSH, -INFINITY, 0, INF_, 0, 0},
    {ER_MATH_COSH, -711.0, 0, INF_, FO, 0},
    {ER_MATH_SIN, -0.0, 0, NZ_, 0, 0}, {ER_MATH_SIN, INFINITY, 0, NV_, FI, 0},
    {ER_MATH_SIN, -INFINITY, 0, NV_, FI, 0},
    {ER_MATH_COS, -0.0, 0, ONE_, 0, 0}, {ER_MATH_COS, INFINITY, 0, NV_, FI, 0},
    {ER_MATH_TAN, -0.0, 0, NZ_, 0, 0}, {ER_MATH_TAN, -INFINITY, 0, NV_, FI, 0},
    {ER_MATH_ATAN, -0.0, 0, NZ_, 0, 0}, {ER_MATH_ATAN, INFINITY, 0, 0, 0, 0 /* PI2 below */},
    {ER_MATH_FLOOR, -0.0, 0, NZ_, 0, 0}, {ER_MATH_FLOOR, -INFINITY, 0, NINF_, 0, 0},
    {ER_MATH_FLOOR, -0.5, 0, UINT64_C(0xBFF0000000000000), 0, 0}, {ER_MATH_FLOOR, 0.5, 0, PZ_, 0, 0},
    {ER_MATH_FLOOR, 0x1.fffffffffffffp+51, 0, UINT64_C(0x432FFFFFFFFFFFFE), 0, 0},
    {ER_MATH_CEIL, -0.5, 0, NZ_, 0, 0}, {ER_MATH_CEIL, 0.5, 0, ONE_, 0, 0},
    {ER_MATH_CEIL, INFINITY, 0, INF_, 0, 0}, {ER_MATH_CEIL, -0.0, 0, NZ_, 0, 0},
    {ER_MATH_ADD, INFINITY, -INFINITY, NV_, FI, 0}, {ER_MATH_ADD, 0.0, -0.0, PZ_, 0, 0},
    {ER_MATH_ADD, -0.0, -0.0, NZ_, 0, 0}, {ER_MATH_ADD, 1.0, -1.0, PZ_, 0, 0},
    {ER_MATH_ADD, 1.0, -1.0, NZ_, 0, ER_RND_NEGATIVE_INF}, {ER_MATH_ADD, 0.0, -0.0, NZ_, 0, ER_RND_NEGATIVE_INF},
    {ER_MATH_ADD, 1.0, -1.0, PZ_, 0, ER_RND_ODD},
    {ER_MATH_SUB, INFINITY, INFINITY, NV_, FI, 0}, {ER_MATH_SUB, 0.0, 0.0, PZ_, 0, 0},
    {ER_MATH_SUB, -0.0, 0.0, NZ_, 0, 0},
    {ER_MATH_MUL, 0.0, INFINITY, NV_, FI, 0}, {ER_MATH_MUL, -0.0, 3.0, NZ_, 0, 0},
    {ER_MATH_MUL, 0x1p-600, 0x1p-600, PZ_, FU, 0}, {ER_MATH_MUL, -0x1p600, 0x1p600, NINF_, FO, 0},
    {ER_MATH_DIV, 1.0, 0.0, INF_, FZ, 0}, {ER_MATH_DIV, -1.0, 0.0, NINF_, FZ, 0},
    {ER_MATH_DIV, 1.0, -0.0, NINF_, FZ, 0}, {ER_MATH_DIV, 0.0, 0.0, NV_, FI, 0},
    {ER_MATH_DIV, INFINITY, INFINITY, NV_, FI, 0}, {ER_MATH_DIV, 1.0, -INFINITY, NZ_, 0, 0},
    {ER_MATH_FMOD, -0.0, 3.0, NZ_, 0, 0}, {ER_MATH_FMOD, INFINITY, 3.0, NV_, FI, 0},
    {ER_MATH_FMOD, 3.0, 0.0, NV_, FI, 0}, {ER_MATH_FMOD, 3.0, INFINITY, UINT64_C(0x4008000000000000), 0, 0},
    {ER_MATH_FMOD, 5.5, 2.0, UINT64_C(0x3FF8000000000000), 0, 0},
    {ER_MATH_FMOD, -5.5, 2.0, UINT64_C(0xBFF8000000000000), 0, 0},
    {ER_MATH_FMOD, -4.0, 2.0, NZ_, 0, 0}, {ER_MATH_FMOD, 0x1p1023, 0x1p-1074, PZ_, 0, 0},
    {ER_MATH_FMOD, 0x1.fffffffffffffp+1023, 3.0, UINT64_C(0x4000000000000000), 0, 0},
    {ER_MATH_POW, 0.0, -3.0, INF_, FZ, 0}, {ER_MATH_POW, -0.0, -3.0, NINF_, FZ, 0},
    {ER_MATH_POW, -0.0, -2.0, INF_, FZ, 0}, {ER_MATH_POW, -0.0, -0.5, INF_, FZ, 0},
    {ER_MATH_POW, -0.0, -INFINITY, INF_, 0, 0}, {ER_MATH_POW, -0.0, 3.0, NZ_, 0, 0},
    {ER_MATH_POW, -0.0, 2.0, PZ_, 0, 0}, {ER_MATH_POW, -0.0, 0.5, PZ_, 0, 0},
    {ER_MATH_POW, -1.0, INFINITY, ONE_, 0, 0}, {ER_MATH_POW, -1.0, -INFINITY, ONE_, 0, 0},
    {ER_MATH_POW, 1.0, NAN, ONE_, 0, 0}, {ER_MATH_POW, NAN, 0.0, ONE_, 0, 0},
    {ER_MATH_POW, NAN, -0.0, ONE_, 0, 0}, {ER_MATH_POW, -2.0, 0.5, NV_, FI, 0},
    {ER_MATH_POW, 0.5, -INFINITY, INF_, 0, 0}, {ER_MATH_POW, -2.0, -INFINITY, PZ_, 0, 0},
    {ER_MATH_POW, -0.5, INFINITY, PZ_, 0, 0}, {ER_MATH_POW, 2.0, INFINITY, INF_, 0, 0},
    {ER_MATH_POW, -INFINITY, -3.0, NZ_, 0, 0}, {ER_MATH_POW, -INFINITY, -2.0, PZ_, 0, 0},
    {ER_MATH_POW, -INFINITY, 3.0, NINF_, 0, 0}, {ER_MATH_POW, -INFINITY, 2.5, INF_, 0, 0},
    {ER_MATH_POW, INFINITY, -1.0, PZ_, 0, 0}, {ER_MATH_POW, INFINITY, 0.5, INF_, 0, 0},
    {ER_MATH_POW, -2.0, 3.0, UINT64_C(0xC020000000000000), 0, 0},
    {ER_MATH_POW, 2.0, -1074.0, 1, 0, 0}, {ER_MATH_POW, 2.0, 1024.0, INF_, FO, 0},
    {ER_MATH_POW, -2.0, 1025.0, NINF_, FO, 0},
    {ER_MATH_ATAN2, 0.0, -0.0, 0, 0, 0 /* pi: below */},
};

/* The table's entries that need a constant a static initialiser cannot hold portably. */
static uint64_t want_of(const sc *c)
{
    if (c->op == ER_MATH_ATAN && c->x == INFINITY)
        return B(PI2);
    if (c->op == ER_MATH_ATAN2 && c->x == 0.0 && c->y == 0.0)
        return B(PI);
    return c->want == NV_ ? QNAN_ : c->want;
}

static void check_case(int op, int fmt, uint64_t x, uint64_t y, int dir, uint64_t want, unsigned must,
                       unsigned mustnot, int line)
{
    uint64_t r = 0;
    unsigned fl = 0;
    er_status st = er_math_op_arity((er_math_op)op) == 1 ? er_math_unary((er_math_op)op, fmt, x, dir, &r, &fl)
                                                         : er_math_binary((er_math_op)op, fmt, x, y, dir, &r, &fl);
    ck_assert_msg(st == ER_OK && r == want && (fl & must) == must && (fl & mustnot) == 0,
                  "case %d: %s %s(0x%llx, 0x%llx) %s: got 0x%llx flags 0x%x status %d, want 0x%llx "
                  "flags 0x%x (not 0x%x)",
                  line, er_format_name(fmt), er_math_op_name((er_math_op)op), (unsigned long long)x,
                  (unsigned long long)y, er_rounding_name(dir), (unsigned long long)r, fl, st,
                  (unsigned long long)want, must, mustnot);
}

START_TEST(annex_f)
{
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sc *c = &cases[i];
        unsigned hard = FI | FZ | ER_FLAG_OVERFLOW;
        check_case(c->op, ER_FMT_F64, B(c->x), B(c->y), c->dir, want_of(c), c->flags, hard & ~c->flags,
                   (int)i);
    }
}
END_TEST

/* atan2's table (C17 F.10.1.4), every sign combination. */
START_TEST(atan2_table)
{
    int s;
    for (s = 0; s < 2; s++) {
        double g = s ? -1.0 : 1.0;
        uint64_t sg = s ? UINT64_C(0x8000000000000000) : 0;
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 0.0), B(-0.0), 0, B(PI) | sg, ER_FLAG_INEXACT, FI, 1);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 0.0), B(0.0), 0, sg, 0, FI | ER_FLAG_INEXACT, 2);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 0.0), B(-2.0), 0, B(PI) | sg, 0, FI, 3);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 0.0), B(2.0), 0, sg, 0, FI, 4);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 2.0), B(-0.0), 0, B(PI2) | sg, 0, FI, 5);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 2.0), B(0.0), 0, B(PI2) | sg, 0, FI, 6);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 2.0), B(-INFINITY), 0, B(PI) | sg, 0, FI, 7);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * 2.0), B(INFINITY), 0, sg, 0, FI, 8);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * INFINITY), B(3.0), 0, B(PI2) | sg, 0, FI, 9);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * INFINITY), B(-INFINITY), 0, B(PI34) | sg, 0, FI, 10);
        check_case(ER_MATH_ATAN2, ER_FMT_F64, B(g * INFINITY), B(INFINITY), 0, B(PI4) | sg, 0, FI, 11);
    }
}
END_TEST

START_TEST(nan_propagation)
{
    uint64_t snan = UINT64_C(0xFFF0000000012345), qnan2 = UINT64_C(0x7FF8000000000abc), r;
    unsigned fl;
    /* A NaN operand comes back quiet with its sign and payload; of two, the first. */
    check_case(ER_MATH_EXP, ER_FMT_F64, snan, 0, 0, UINT64_C(0xFFF8000000012345), 0, FI, 1);
    check_case(ER_MATH_ADD, ER_FMT_F64, qnan2, snan, 0, qnan2, 0, FI, 2);
    check_case(ER_MATH_ADD, ER_FMT_F64, B(1.0), snan, 0, UINT64_C(0xFFF8000000012345), 0, FI, 3);
    check_case(ER_MATH_POW, ER_FMT_F64, snan, B(0.0), 0, ONE_, 0, FI, 4);
    /* The formats' own NaNs: f32, f8E4M3FN (0x7f, 0xff), FNUZ (0x80). */
    check_case(ER_MATH_SIN, ER_FMT_F32, UINT64_C(0xFFC00001), 0, 0, UINT64_C(0xFFC00001), 0, FI, 5);
    check_case(ER_MATH_SQRT, ER_FMT_F8E4M3FN, UINT64_C(0xFF), 0, 0, UINT64_C(0xFF), 0, FI, 6);
    check_case(ER_MATH_SQRT, ER_FMT_F8E4M3FN, UINT64_C(0xB8), 0, 0, UINT64_C(0x7F), FI, 0, 7);
    check_case(ER_MATH_LOG, ER_FMT_F8E5M2FNUZ, UINT64_C(0x80), 0, 0, UINT64_C(0x80), 0, FI, 8);
    /* fma: 0 * inf + c is invalid; a NaN c is passed on. */
    ck_assert_int_eq(er_math_fma(ER_FMT_F64, B(0.0), INF_, B(1.0), 0, &r, &fl), ER_OK);
    ck_assert(r == QNAN_ && (fl & FI));
    ck_assert_int_eq(er_math_fma(ER_FMT_F64, B(2.0), B(3.0), qnan2, 0, &r, &fl), ER_OK);
    ck_assert(r == qnan2 && !(fl & FI));
    ck_assert_int_eq(er_math_fma(ER_FMT_F64, B(1.0), B(1.0), B(-1.0), ER_RND_NEGATIVE_INF, &r, &fl), ER_OK);
    ck_assert(r == NZ_);
    ck_assert_int_eq(er_math_fma(ER_FMT_F64, B(1.0), B(1.0), B(-1.0), ER_RND_POSITIVE_INF, &r, &fl), ER_OK);
    ck_assert(r == PZ_);
}
END_TEST

/* The narrow formats' conventions (docs/math.md): overflow, exact infinities, zero in f8E8M0FNU. */
START_TEST(narrow_conventions)
{
    /* f16: exp(12) overflows: inf to nearest, the largest finite value toward zero. */
    check_case(ER_MATH_EXP, ER_FMT_F16, UINT64_C(0x4A00), 0, 0, UINT64_C(0x7C00), FO, 0, 1);
    check_case(ER_MATH_EXP, ER_FMT_F16, UINT64_C(0x4A00), 0, ER_RND_ZERO, UINT64_C(0x7BFF), FO, 0, 2);
    /* f8E4M3FN (no infinity): exp(7) = 1096.6 is NaN to nearest, 448 toward zero. */
    check_case(ER_MATH_EXP, ER_FMT_F8E4M3FN, UINT64_C(0x4E), 0, 0, UINT64_C(0x7F), FO, 0, 3);
    check_case(ER_MATH_EXP, ER_FMT_F8E4M3FN, UINT64_C(0x4E), 0, ER_RND_ZERO, UINT64_C(0x7E), FO, 0, 4);
    /* f4E2M1FN (neither infinity nor NaN): exp(3) = 20 saturates to 6; log(0) = -inf is -6; a NaN
     * result is +0 with the invalid flag. */
    check_case(ER_MATH_EXP, ER_FMT_F4E2M1FN, UINT64_C(0x5), 0, 0, UINT64_C(0x7), FO, 0, 5);
    check_case(ER_MATH_LOG, ER_FMT_F4E2M1FN, UINT64_C(0x0), 0, 0, UINT64_C(0xF), FZ, 0, 6);
    check_case(ER_MATH_SQRT, ER_FMT_F4E2M1FN, UINT64_C(0xA), 0, 0, UINT64_C(0x0), FI, 0, 7);
    /* f8E5M2FNUZ: log(0) = -inf has no pattern: the NaN 0x80. */
    check_case(ER_MATH_LOG, ER_FMT_F8E5M2FNUZ, UINT64_C(0x0), 0, 0, UINT64_C(0x80), FZ, 0, 8);
    /* f8E8M0FNU: log(1) = 0 has no pattern (NaN 0xff, invalid); sqrt(2^-126) = 2^-63 exactly;
     * a negative result is NaN. */
    check_case(ER_MATH_LOG, ER_FMT_F8E8M0FNU, UINT64_C(127), 0, 0, UINT64_C(0xFF), FI, 0, 9);
    check_case(ER_MATH_SQRT, ER_FMT_F8E8M0FNU, UINT64_C(1), 0, 0, UINT64_C(64), 0, ER_FLAG_INEXACT, 10);
    check_case(ER_MATH_LOG2, ER_FMT_F8E8M0FNU, UINT64_C(126), 0, 0, UINT64_C(0xFF), FI, 0, 11);
    /* bf16 round to odd: exp(2^-133) = 1 + tiny is 1 + 2^-7 (odd), 1 to nearest. */
    check_case(ER_MATH_EXP, ER_FMT_BF16, UINT64_C(0x0001), 0, ER_RND_ODD, UINT64_C(0x3F81), ER_FLAG_INEXACT, 0, 12);
    check_case(ER_MATH_EXP, ER_FMT_BF16, UINT64_C(0x0001), 0, 0, UINT64_C(0x3F80), ER_FLAG_INEXACT, 0, 13);
}
END_TEST

START_TEST(layer_basics)
{
    double m = D(UINT64_C(0x7FEFFFFFFFFFFFFF)), t = 0x1p-1074;
    ck_assert(er_math_bits(-0.0) == NZ_ && er_math_from_bits(ONE_) == 1.0);
    ck_assert(er_math_is_nan(NAN) && !er_math_is_nan(INFINITY) && !er_math_finite(-INFINITY) && er_math_finite(m));
    ck_assert(er_math_sign_bit(-0.0) && er_math_sign_bit(D(UINT64_C(0xFFF8000000000000))) && !er_math_sign_bit(0.0));
    ck_assert(er_math_subnormal(t) && er_math_subnormal(-0x1p-1023) && !er_math_subnormal(0x1p-1022) &&
              !er_math_subnormal(0.0));
    ck_assert(B(er_math_copysign_zero(-3.0)) == NZ_ && B(er_math_copysign_zero(D(QNAN_))) == PZ_);
    ck_assert(B(er_math_succ(-0.0)) == 1 && B(er_math_succ(0.0)) == 1 && B(er_math_succ(m)) == INF_);
    ck_assert(B(er_math_succ(INFINITY)) == INF_ && B(er_math_succ(-t)) == NZ_ && er_math_succ(1.0) == 1.0 + 0x1p-52);
    ck_assert(B(er_math_succ(-INFINITY)) == B(-m) && er_math_is_nan(er_math_succ(NAN)));
    ck_assert(B(er_math_pred(-m)) == NINF_ && B(er_math_pred(0.0)) == B(-t) && er_math_pred(1.0) == 1.0 - 0x1p-53);
    ck_assert(er_math_pow2(-1074) == t && er_math_pow2(-1075) == 0.0 && B(er_math_pow2(1024)) == INF_);
    ck_assert(er_math_pow2(1023) == 0x1p1023 && er_math_pow2(-1022) == 0x1p-1022 && er_math_pow2(0) == 1.0);
    /* ldexp rounds once: 1.5 * 2^-1074 is a tie between 1 and 2 ulps (even: 2); (1 + 2^-52) 2^-1075 is
     * just above half an ulp (1 ulp), where two roundings would give 0. */
    ck_assert(B(er_math_ldexp(1.5, -1074)) == 2 && B(er_math_ldexp(1.0 + 0x1p-52, -1075)) == 1);
    ck_assert(B(er_math_ldexp(1.0, -1075)) == 0 && B(er_math_ldexp(-1.0, 1024)) == NINF_);
    ck_assert(er_math_ldexp(3.0, 4) == 48.0 && er_math_ldexp(0x1p-1074, 2000) == 0x1p926);
    ck_assert(B(er_math_ldexp(-0.0, 5)) == NZ_ && B(er_math_ldexp(INFINITY, -5000)) == INF_);
    ck_assert(er_math_ldexp(1.0, INT_MIN) == 0.0 && B(er_math_ldexp(1.0, INT_MAX)) == INF_);
    ck_assert(er_math_atan2(0.0, -1.0) == ER_MATH_PI && er_math_log(2.0) == ER_MATH_LN2);
    ck_assert(B(er_math_exp(INFINITY)) == ER_MATH_INF_BITS && B(er_math_sqrt(-1.0)) == ER_MATH_QNAN_BITS);
    {
        mpfr_t c;
        mpfr_init2(c, 53);
        mpfr_const_pi(c, MPFR_RNDN);
        ck_assert(mpfr_get_d(c, MPFR_RNDN) == ER_MATH_PI);
        mpfr_const_log2(c, MPFR_RNDN);
        ck_assert(mpfr_get_d(c, MPFR_RNDN) == ER_MATH_LN2);
        mpfr_clear(c);
    }
    ck_assert_int_eq(er_math_exponent(t), -1074);
    ck_assert_int_eq(er_math_exponent(3.0), 1);
    ck_assert_int_eq(er_math_exponent(-0x1.8p-1030), -1030);
    ck_assert_int_eq(er_math_exponent(m), 1023);
    ck_assert_int_eq(er_math_exponent(0.0), INT_MIN);
    ck_assert_int_eq(er_math_exponent(NAN), INT_MAX);
}
END_TEST

/* two_prod and two_sum exact (checked in MPFR at 300 bits); odd_of and add_odd against the oracle's
 * round to odd. */
START_TEST(layer_eft)
{
    uint64_t st = er_test_seed("math_special eft");
    mpfr_t u, v;
    long i, fails = 0;
    mo_init();
    mpfr_inits2(300, u, v, (mpfr_ptr)0);
    for (i = 0; i < 100000; i++) {
        int ka = (int)(er_test_rand(&st) % 1000) - 500, kb = (int)(er_test_rand(&st) % 900) - 450;
        double a = ldexp(1.0 + (double)(er_test_rand(&st) >> 11) * 0x1p-53, ka);
        double b = ldexp(1.0 + (double)(er_test_rand(&st) >> 11) * 0x1p-53, kb);
        double p, e, s, f;
        uint64_t in[2];
        mo_exp ex;
        if (er_test_rand(&st) & 1)
            b = -b;
        er_math_two_prod(a, b, &p, &e);
        mpfr_set_d(u, a, MPFR_RNDN);
        mpfr_mul_d(u, u, b, MPFR_RNDN); /* exact at 300 bits */
        mpfr_set_d(v, p, MPFR_RNDN);
        mpfr_add_d(v, v, e, MPFR_RNDN);
        if (!mpfr_equal_p(u, v) || p != a * b)
            fails++;
        if (i % 2)
            b = ldexp(b, (int)(er_test_rand(&st) % 120) - 60 - kb + ka);
        er_math_two_sum(a, b, &s, &f);
        mpfr_set_d(u, a, MPFR_RNDN);
        mpfr_add_d(u, u, b, MPFR_RNDN);
        mpfr_set_d(v, s, MPFR_RNDN);
        mpfr_add_d(v, v, f, MPFR_RNDN);
        if (!mpfr_equal_p(u, v) || s != a + b)
            fails++;
        in[0] = B(a);
        in[1] = B(b);
        mo_expect(ER_MATH_ADD, of_get(ER_FMT_F64), in, 2, ER_RND_ODD, &ex);
        if (B(er_math_add_odd(a, b)) != ex.bits || B(er_math_odd_of(s, f)) != ex.bits)
            fails++;
        if (fails && fails < 5)
            printf("eft: a %a b %a: p %a e %a s %a f %a odd %a\n", a, b, p, e, s, f, er_math_add_odd(a, b));
    }
    mpfr_clears(u, v, (mpfr_ptr)0);
    ck_assert_msg(fails == 0, "%ld error-free transformations wrong", fails);
}
END_TEST

START_TEST(api)
{
    uint64_t r = 7;
    unsigned fl;
    er_math_op op;
    int i;
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_I8, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, -1, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_COUNT, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_F64, 0, ER_RND_COUNT, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_F64, 0, -1, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_F64, 0, 0, NULL, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_ADD, ER_FMT_F64, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary((er_math_op)99, ER_FMT_F64, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_binary(ER_MATH_EXP, ER_FMT_F64, 0, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_F16, UINT64_C(0x10000), 0, &r, &fl), ER_EPATTERN);
    ck_assert_int_eq(er_math_binary(ER_MATH_ADD, ER_FMT_TF32, 0, 1, 0, &r, &fl), ER_EPATTERN);
    ck_assert_int_eq(er_math_fma(ER_FMT_F4E2M1FN, 0, 0, 0x10, 0, &r, &fl), ER_EPATTERN);
    ck_assert_int_eq(er_math_fma(ER_FMT_U8, 0, 0, 0, 0, &r, &fl), ER_EINVAL);
    ck_assert(r == 7); /* untouched by a refusal */
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_F64, 0, 0, &r, NULL), ER_OK);
    ck_assert(r == ONE_);
    for (i = 0; i < ER_MATH_OP_COUNT; i++) {
        const char *n = er_math_op_name((er_math_op)i);
        ck_assert_ptr_nonnull(n);
        ck_assert_str_eq(n, mo_op_name(i));
        ck_assert_int_eq(er_math_op_from_name(n, &op), ER_OK);
        ck_assert_int_eq((int)op, i);
        ck_assert_int_eq(er_math_op_arity((er_math_op)i), i <= (int)ER_MATH_CEIL ? 1 : 2);
    }
    ck_assert_ptr_null(er_math_op_name((er_math_op)ER_MATH_OP_COUNT));
    ck_assert_int_eq(er_math_op_from_name("expm1", &op), ER_EINVAL);
    ck_assert_int_eq(er_math_op_arity((er_math_op)-1), 0);
}
END_TEST

/* A call leaves the caller's MPFR exponent range and flags alone, and is not affected by them. */
START_TEST(mpfr_state)
{
    uint64_t r;
    unsigned fl;
    mpfr_set_emin(-20);
    mpfr_set_emax(20);
    mpfr_clear_flags();
    mpfr_set_divby0();
    ck_assert_int_eq(er_math_unary(ER_MATH_EXP, ER_FMT_F64, B(100.0), 0, &r, &fl), ER_OK);
    ck_assert_int_eq((long)mpfr_get_emin(), -20);
    ck_assert_int_eq((long)mpfr_get_emax(), 20);
    ck_assert(mpfr_divby0_p() && !mpfr_inexflag_p() && !mpfr_overflow_p());
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_clear_flags();
    {
        uint64_t in = B(100.0);
        mo_exp e;
        mo_init();
        mo_expect(ER_MATH_EXP, of_get(ER_FMT_F64), &in, 1, 0, &e);
        ck_assert(r == e.bits && (fl & ER_FLAG_INEXACT));
    }
    mpfr_set_emin(-1073741823);
    mpfr_set_emax(1073741823);
}
END_TEST

/* Calls from several threads at once give the bits one thread gives (MPFR's state is per thread). */
#define TH_N 4
#define TH_K 20000
static uint64_t th_in[TH_K], th_want[TH_K][3];
static long th_bad[TH_N];

static void th_eval(int k, uint64_t *r)
{
    unsigned fl;
    er_math_unary(ER_MATH_SIN, ER_FMT_F64, th_in[k], (k % 6), &r[0], &fl);
    er_math_binary(ER_MATH_POW, ER_FMT_F32, th_in[k] >> 32, th_in[k] & UINT64_C(0xFFFFFFFF), (k % 5), &r[1], &fl);
    er_math_unary(ER_MATH_EXP, ER_FMT_BF16, th_in[k] & 0xFFFF, (k % 4), &r[2], &fl);
}

static void *th_main(void *arg)
{
    long t = (long)(size_t)arg;
    int k;
    for (k = 0; k < TH_K; k++) {
        uint64_t r[3];
        int j = (int)((k + t * 7919) % TH_K);
        th_eval(j, r);
        th_bad[t] += r[0] != th_want[j][0] || r[1] != th_want[j][1] || r[2] != th_want[j][2];
    }
    er_math_free_cache();
    return NULL;
}

START_TEST(threads)
{
    uint64_t st = er_test_seed("math_special threads");
    pthread_t th[TH_N];
    long t;
    int k;
    for (k = 0; k < TH_K; k++) {
        th_in[k] = er_test_rand(&st);
        th_eval(k, th_want[k]);
    }
    for (t = 0; t < TH_N; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, th_main, (void *)(size_t)t), 0);
    for (t = 0; t < TH_N; t++) {
        ck_assert_int_eq(pthread_join(th[t], NULL), 0);
        ck_assert_msg(th_bad[t] == 0, "thread %ld: %ld results differ", t, th_bad[t]);
    }
    ck_assert_int_eq(er_math_free_cache(), ER_OK);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("math_special");
    TCase *tc = tcase_create("special");
    tcase_add_test(tc, annex_f);
    tcase_add_test(tc, atan2_table);
    tcase_add_test(tc, nan_propagation);
    tcase_add_test(tc, narrow_conventions);
    tcase_add_test(tc, layer_basics);
    tcase_add_test(tc, layer_eft);
    tcase_add_test(tc, api);
    tcase_add_test(tc, mpfr_state);
    tcase_add_test(tc, threads);
    suite_add_tcase(s, tc);
    return mt_run_suite(s);
}
