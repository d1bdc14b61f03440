/*
 * test_lattice.c (interval_lattice): named facts of the Interval lattice (seed 000): the record,
 * constructors, lattice operations, truthiness, precision ranges and limits, at_prec, round_into,
 * every rule on hand-picked operands, the text form, and the seed's witnesses (257 is not a bf16
 * value; 2^53 + 1 rounds to 2^53; C's remainder sign; relu of NaN is 0 while satur01 of NaN stays top;
 * comparisons never fold to true on possibly-NaN operands).
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/interval.h"
#include "exactref/core/er_round.h"

#define P53 9007199254740992.0 /* 2^53 */
#define P63 9223372036854775808.0
#define P64 18446744073709551616.0

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static int same(double a, double b) { return bits(a) == bits(b); }

static er_interval mk(double lo, double hi, int integral, int exact)
{
    er_interval t;
    t.lo = lo;
    t.hi = hi;
    t.integral = integral;
    t.exact = exact;
    return t;
}

/* An interval with exactly these endpoint bits and flags. */
#define IV_IS(t, l, h, in, ex)                                                                                 \
    do {                                                                                                       \
        er_interval t_ = (t);                                                                                  \
        ck_assert_msg(same(t_.lo, (l)) && same(t_.hi, (h)) && t_.integral == (in) && t_.exact == (ex),          \
                      "%s: got [%a, %a] integral %d exact %d; expected [%a, %a] integral %d exact %d", #t,     \
                      t_.lo, t_.hi, t_.integral, t_.exact, (double)(l), (double)(h), (in), (ex));              \
    } while (0)

#define IS_TOP(t) ck_assert_msg(er_interval_is_top(t), "%s: expected top", #t)

START_TEST(test_record)
{
    er_interval top = er_interval_top();
    IV_IS(top, -INFINITY, INFINITY, 0, 0);
    ck_assert(er_interval_is_top(top));
    ck_assert(er_interval_is_top(mk(-INFINITY, INFINITY, 1, 0)));
    ck_assert(!er_interval_is_top(mk(-INFINITY, 0, 0, 0)));
    ck_assert(same(er_interval_exact_int_cutoff(), P53));
    ck_assert(same(ER_INTERVAL_EXACT_INT_CUTOFF, P53));
    /* compare: lexicographic, false < true, -0 equals +0. */
    ck_assert_int_eq(er_interval_compare(mk(0, 1, 0, 0), mk(0, 1, 0, 0)), 0);
    ck_assert_int_eq(er_interval_compare(mk(-0.0, 1, 0, 0), mk(0, 1, 0, 0)), 0);
    ck_assert_int_eq(er_interval_compare(mk(0, 1, 0, 0), mk(1, 1, 0, 0)), -1);
    ck_assert_int_eq(er_interval_compare(mk(0, 2, 0, 0), mk(0, 1, 1, 1)), 1);
    ck_assert_int_eq(er_interval_compare(mk(0, 1, 0, 1), mk(0, 1, 1, 0)), -1);
    ck_assert_int_eq(er_interval_compare(mk(0, 1, 1, 0), mk(0, 1, 1, 1)), -1);
    ck_assert(er_interval_equal(top, top));
    ck_assert(!er_interval_equal(top, mk(-INFINITY, INFINITY, 1, 0)));
    /* endpoint_exact: finite and strictly below 2^53. */
    ck_assert(er_interval_endpoint_exact(0.5));
    ck_assert(er_interval_endpoint_exact(P53 - 1));
    ck_assert(er_interval_endpoint_exact(-(P53 - 1)));
    ck_assert(!er_interval_endpoint_exact(P53));
    ck_assert(!er_interval_endpoint_exact(-P53));
    ck_assert(!er_interval_endpoint_exact(INFINITY));
    ck_assert(!er_interval_endpoint_exact(NAN));
}
END_TEST

START_TEST(test_constructors)
{
    IS_TOP(er_interval_point(NAN));
    IV_IS(er_interval_point(INFINITY), INFINITY, INFINITY, 0, 0);
    IV_IS(er_interval_point(-INFINITY), -INFINITY, -INFINITY, 0, 0);
    ck_assert(!er_interval_is_top(er_interval_point(INFINITY)));
    IV_IS(er_interval_point(0.5), 0.5, 0.5, 0, 1);
    IV_IS(er_interval_point(-3.0), -3.0, -3.0, 1, 1);
    IV_IS(er_interval_point(0x1p60), 0x1p60, 0x1p60, 1, 0);
    IV_IS(er_interval_point(P53), P53, P53, 1, 0);
    IV_IS(er_interval_of_int(5), 5, 5, 1, 1);
    IV_IS(er_interval_of_int((int64_t)1 << 53), P53, P53, 1, 0);
    IV_IS(er_interval_of_int(((int64_t)1 << 53) - 1), P53 - 1, P53 - 1, 1, 1);
    IV_IS(er_interval_of_int(INT64_MAX), 0x1.fffffffffffffp62, P63, 1, 0);
    IV_IS(er_interval_of_int(INT64_MIN), -P63, -P63, 1, 0);
    IV_IS(er_interval_of_int_range(-3, 7), -3, 7, 1, 1);
    IV_IS(er_interval_of_int_range(0, ((int64_t)1 << 53) - 1), 0, P53 - 1, 1, 1);
    IV_IS(er_interval_of_int_range(0, (int64_t)1 << 53), 0, P53, 1, 0);
    IV_IS(er_interval_of_int_range(INT64_MIN, INT64_MAX), -P63, P63, 1, 0);
    /* lo > hi: the empty interval. */
    IV_IS(er_interval_of_int_range(1, 0), INFINITY, -INFINITY, 1, 0);
    /* round_out: two ulps outward each side, integral kept, exact cleared, infinities stay. */
    IV_IS(er_interval_round_out(mk(1.0, 2.0, 1, 1)), 1.0 - 0x1p-52, 2.0 + 0x1p-50, 1, 0);
    IV_IS(er_interval_round_out(mk(0.0, 0.0, 0, 1)), -0x1p-1073, 0x1p-1073, 0, 0);
    IV_IS(er_interval_round_out(mk(-INFINITY, INFINITY, 0, 0)), -INFINITY, INFINITY, 0, 0);
    IV_IS(er_interval_round_out(mk(-0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023, 0, 0)), -INFINITY, INFINITY,
          0, 0);
    IV_IS(er_interval_bool_range(), 0, 1, 1, 1);
    IV_IS(er_interval_true(), 1, 1, 1, 1);
    IV_IS(er_interval_false(), 0, 0, 1, 1);
}
END_TEST

START_TEST(test_lattice_ops)
{
    er_interval a = mk(0, 4, 1, 1), b = mk(2.5, 10, 0, 1), e = er_interval_of_int_range(1, 0);
    IV_IS(er_interval_join(a, b), 0, 10, 0, 1);
    IV_IS(er_interval_join(a, e), 0, 4, 1, 1);
    IV_IS(er_interval_join(e, b), 2.5, 10, 0, 1);
    IS_TOP(er_interval_join(a, er_interval_top()));
    /* inter: endpoint selection; integral if either is; integral endpoints move to integers. */
    IV_IS(er_interval_inter(a, b), 3, 4, 1, 1);
    IV_IS(er_interval_inter(er_interval_top(), b), 2.5, 10, 0, 1);
    IS_TOP(er_interval_inter(er_interval_top(), er_interval_top()));
    ck_assert(er_interval_inter(mk(0, 1, 0, 1), mk(2, 3, 0, 1)).lo > er_interval_inter(mk(0, 1, 0, 1), mk(2, 3, 0, 1)).hi);
    /* is_within. */
    ck_assert(er_interval_is_within(mk(0, 10, 0, 0), mk(1, 2, 0, 0)));
    ck_assert(!er_interval_is_within(mk(0, 10, 0, 0), mk(-1, 2, 0, 0)));
    ck_assert(!er_interval_is_within(mk(0, 10, 1, 0), mk(1, 2, 0, 0)));
    ck_assert(er_interval_is_within(mk(0, 10, 1, 0), mk(2, 2, 0, 0)));
    ck_assert(er_interval_is_within(mk(0, 10, 0, 0), mk(1, 2, 1, 0)));
    ck_assert(er_interval_is_within(er_interval_top(), mk(1, 2, 1, 0)));
    ck_assert(er_interval_is_within(er_interval_top(), er_interval_top()));
    ck_assert(!er_interval_is_within(mk(-INFINITY, 1e308, 0, 0), er_interval_top()));
    ck_assert(!er_interval_is_within(mk(-1e308, INFINITY, 0, 0), er_interval_top()));
    ck_assert(er_interval_is_within(mk(0, 1, 0, 0), e));
    /* value_fits. */
    ck_assert(er_interval_value_fits(a, 3));
    ck_assert(!er_interval_value_fits(a, 3.5));
    ck_assert(er_interval_value_fits(b, 3.5));
    ck_assert(!er_interval_value_fits(b, NAN));
    ck_assert(!er_interval_value_fits(a, 4.0000000000000009));
    ck_assert(er_interval_value_fits(er_interval_top(), NAN));
    ck_assert(er_interval_value_fits(mk(0, INFINITY, 1, 0), INFINITY));
    ck_assert(er_interval_value_fits(mk(0, 0, 1, 1), -0.0));
    /* is_singleton: exact and lo == hi. */
    ck_assert(er_interval_is_singleton(er_interval_point(0.5)));
    ck_assert(!er_interval_is_singleton(er_interval_point(0x1p60)));
    ck_assert(!er_interval_is_singleton(er_interval_point(INFINITY)));
    ck_assert(!er_interval_is_singleton(a));
}
END_TEST

START_TEST(test_truthiness)
{
    ck_assert(er_interval_definitely_false(er_interval_false()));
    ck_assert(er_interval_definitely_false(mk(-0.0, 0.0, 0, 0)));
    ck_assert(!er_interval_definitely_false(er_interval_bool_range()));
    ck_assert(er_interval_definitely_true(er_interval_true()));
    ck_assert(er_interval_definitely_true(mk(-INFINITY, -1, 0, 0)));
    ck_assert(er_interval_definitely_true(mk(0x1p-1074, INFINITY, 0, 0)));
    ck_assert(!er_interval_definitely_true(mk(0, 1, 0, 0)));
    ck_assert(!er_interval_definitely_true(er_interval_top()));
    ck_assert(!er_interval_definitely_false(er_interval_top()));
    ck_assert(!er_interval_definitely_true(mk(-INFINITY, INFINITY, 1, 1)));
}
END_TEST

START_TEST(test_dtype_range)
{
    static const int nan_formats[] = {ER_FMT_F64,        ER_FMT_F32,        ER_FMT_TF32,      ER_FMT_F16,
                                      ER_FMT_BF16,       ER_FMT_F8E4M3FN,   ER_FMT_F8E5M2,    ER_FMT_F8E4M3FNUZ,
                                      ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU,  ER_FMT_F8E5M3FNU};
    size_t i;
    for (i = 0; i < sizeof nan_formats / sizeof nan_formats[0]; i++)
        ck_assert_msg(er_interval_is_top(er_interval_dtype_range(nan_formats[i])), "%s",
                      er_format_name(nan_formats[i]));
    IV_IS(er_interval_dtype_range(ER_FMT_F6E2M3FN), -7.5, 7.5, 0, 1);
    IV_IS(er_interval_dtype_range(ER_FMT_F6E3M2FN), -28, 28, 0, 1);
    IV_IS(er_interval_dtype_range(ER_FMT_F4E2M1FN), -6, 6, 0, 1);
    IV_IS(er_interval_dtype_range(ER_FMT_I8), -128, 127, 1, 1);
    IV_IS(er_interval_dtype_range(ER_FMT_U8), 0, 255, 1, 1);
    IV_IS(er_interval_dtype_range(ER_FMT_I16), -32768, 32767, 1, 1);
    IV_IS(er_interval_dtype_range(ER_FMT_I32), -2147483648.0, 2147483647.0, 1, 1);
    /* The seed's note: the int64 upper endpoint 2^63 - 1 is not a double; it rounds out, non-exact. */
    IV_IS(er_interval_dtype_range(ER_FMT_I64), -P63, P63, 1, 0);
    IS_TOP(er_interval_dtype_range(-1));
    IS_TOP(er_interval_dtype_range(ER_FMT_COUNT));
    /* Integer precisions without a format id: u16, u32, and u64 (upper endpoint non-exact). */
    IV_IS(er_interval_int_range(16, 0), 0, 65535, 1, 1);
    IV_IS(er_interval_int_range(32, 0), 0, 4294967295.0, 1, 1);
    IV_IS(er_interval_int_range(64, 0), 0, P64, 1, 0);
    IV_IS(er_interval_int_range(64, 1), -P63, P63, 1, 0);
    IV_IS(er_interval_int_range(53, 0), 0, P53 - 1, 1, 1);
    IV_IS(er_interval_int_range(54, 1), -P53, P53 - 1, 1, 0);
    IS_TOP(er_interval_int_range(0, 1));
    IS_TOP(er_interval_int_range(65, 0));
}
END_TEST

START_TEST(test_exact_int_limits)
{
    static const struct {
        int fmt;
        double limit; /* 0: none */
    } want[] = {{ER_FMT_F64, P53},         {ER_FMT_F32, 0x1p24},       {ER_FMT_TF32, 2048},
                {ER_FMT_F16, 2048},        {ER_FMT_BF16, 256},         {ER_FMT_F8E4M3FN, 16},
                {ER_FMT_F8E5M2, 8},        {ER_FMT_F8E4M3FNUZ, 16},    {ER_FMT_F8E5M2FNUZ, 8},
                {ER_FMT_F8E8M0FNU, 0},     {ER_FMT_F6E2M3FN, 7},       {ER_FMT_F6E3M2FN, 8},
                {ER_FMT_F4E2M1FN, 4},      {ER_FMT_F8E5M3FNU, 0},      {ER_FMT_I8, 0},
                {ER_FMT_U8, 0},
                {ER_FMT_I16, 0},           {ER_FMT_I32, 0},            {ER_FMT_I64, 0}};
    size_t i;
    ck_assert_int_eq((int)(sizeof want / sizeof want[0]), ER_FMT_COUNT);
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        double l = -1;
        int has = er_interval_float_exact_int_limit(want[i].fmt, &l);
        const char *name = er_format_name(want[i].fmt);
        uint64_t b;
        if (want[i].limit == 0) {
            ck_assert_msg(!has, "%s: expected no limit", name);
            continue;
        }
        ck_assert_msg(has && same(l, want[i].limit), "%s: limit %a, expected %a", name, l, want[i].limit);
        /* Every integer up to the limit is a value (exhaustively where that is cheap), and the limit is
         * the largest such: limit + 1 is not a value, or is beyond the largest finite value. */
        if (l <= 65536) {
            double n;
            for (n = 0; n <= l; n++) {
                ck_assert_msg(er_bits_of(want[i].fmt, n, &b) == ER_OK, "%s: %g is not a value", name, n);
                ck_assert_msg(er_bits_of(want[i].fmt, -n, &b) == ER_OK, "%s: %g is not a value", name, -n);
            }
        } else {
            ck_assert(er_bits_of(want[i].fmt, l, &b) == ER_OK && er_bits_of(want[i].fmt, l - 1, &b) == ER_OK &&
                      er_bits_of(want[i].fmt, -l + 1, &b) == ER_OK && er_bits_of(want[i].fmt, l - 3, &b) == ER_OK);
        }
        if (l + 1 != l) /* 2^53 + 1 is not even a double */
            ck_assert_msg(er_bits_of(want[i].fmt, l + 1, &b) != ER_OK, "%s: %g + 1 is a value", name, l);
    }
    ck_assert(!er_interval_float_exact_int_limit(-1, NULL));
}
END_TEST

/* Seed witness: bfloat16 has 8 significant bits, so 257 is not a value: its limit is 256, not 2048. */
START_TEST(test_witness_bf16_257)
{
    uint64_t b;
    double r;
    ck_assert(er_bits_of(ER_FMT_BF16, 256.0, &b) == ER_OK);
    ck_assert(er_bits_of(ER_FMT_BF16, 257.0, &b) == ER_EINEXACT);
    ck_assert(er_round_double(ER_FMT_BF16, 257.0, ER_RND_NEAREST_EVEN, &r) == ER_OK && same(r, 256.0));
    ck_assert(er_round_double(ER_FMT_BF16, 257.0, ER_RND_POSITIVE_INF, &r) == ER_OK && same(r, 258.0));
    ck_assert(er_bits_of(ER_FMT_F16, 257.0, &b) == ER_OK);
    IV_IS(er_interval_at_prec(ER_FMT_BF16, er_interval_of_int_range(0, 256)), 0, 256, 1, 1);
    IS_TOP(er_interval_at_prec(ER_FMT_BF16, er_interval_of_int_range(0, 257)));
    IS_TOP(er_interval_at_prec(ER_FMT_BF16, er_interval_of_int_range(-257, 0)));
    IV_IS(er_interval_at_prec(ER_FMT_F16, er_interval_of_int_range(0, 257)), 0, 257, 1, 1);
    /* round_into is the tight alternative: 257 may become 256 or 258 in bf16. */
    IV_IS(er_interval_round_into(ER_FMT_BF16, er_interval_of_int(257)), 256, 258, 1, 0);
}
END_TEST

/* Seed witness: 2^53 + 1 rounds to 2^53, so an integer of that size is never an exact endpoint. */
START_TEST(test_witness_2p53)
{
    int64_t n = ((int64_t)1 << 53) + 1;
    uint64_t u;
    double d;
    er_interval a = er_interval_of_int(n), b = er_interval_of_int(n - 1);
    memcpy(&u, &n, sizeof u);
    u = er_convert(ER_FMT_I64, ER_FMT_F64, u, ER_RND_NEAREST_EVEN, 0u).bits;
    memcpy(&d, &u, sizeof d);
    ck_assert(same(d, P53));
    ck_assert(same((double)n, P53)); /* what a C cast does too */
    /* The interval keeps 2^53 + 1 inside (outward), and is not exact. */
    IV_IS(a, P53, P53 + 2, 1, 0);
    IV_IS(b, P53, P53, 1, 0);
    ck_assert(er_interval_cmpeq_decides(a, b) != ER_INTERVAL_TRUE);
    ck_assert(er_interval_cmpeq_decides(b, b) != ER_INTERVAL_TRUE); /* not exact: no equality fold */
    ck_assert(er_interval_cmpeq_decides(er_interval_of_int(n - 2), er_interval_of_int(n - 2)) == ER_INTERVAL_TRUE);
    IS_TOP(er_interval_at_prec(ER_FMT_F64, a));
    IV_IS(er_interval_at_prec(ER_FMT_F64, b), P53, P53, 1, 0);
    /* Exactness of sums stops strictly below 2^53. */
    IV_IS(er_interval_add(er_interval_of_int(n - 3), er_interval_of_int(1)), P53 - 1, P53 - 1, 1, 1);
    IV_IS(er_interval_add(er_interval_of_int(n - 2), er_interval_of_int(1)), P53, P53, 1, 0);
    IV_IS(er_interval_add(er_interval_of_int(n - 2), er_interval_of_int(2)), P53, P53 + 2, 1, 0);
    IV_IS(er_interval_arith_result(er_interval_of_int(n - 2), er_interval_of_int(1), P53, P53), P53 - 2, P53 + 4, 1, 0);
    IV_IS(er_interval_arith_result(er_interval_of_int(n - 3), er_interval_of_int(1), P53 - 1, P53 - 1), P53 - 1,
          P53 - 1, 1, 1);
}
END_TEST

/* Seed witness: C's remainder takes the sign of the dividend, so mod_ refuses negative arguments. */
START_TEST(test_witness_remainder_sign)
{
    volatile int x = -5, c = 3;
    er_interval three = er_interval_of_int(3);
    ck_assert_int_eq(x % c, -2);
    ck_assert(same(fmod(-5.0, 3.0), -2.0));
    IS_TOP(er_interval_mod(er_interval_of_int_range(-5, -1), three));
    IS_TOP(er_interval_mod(er_interval_of_int_range(-1, 5), three));
    IV_IS(er_interval_mod(er_interval_of_int_range(0, 10), three), 0, 2, 1, 1);
    IV_IS(er_interval_mod(er_interval_of_int_range(0, 1), three), 0, 1, 1, 1);
    IV_IS(er_interval_mod(er_interval_of_int_range(5, 7), er_interval_of_int(10)), 5, 7, 1, 1);
    IV_IS(er_interval_mod(er_interval_of_int_range(7, 8), er_interval_of_int(5)), 2, 3, 1, 1);
    IV_IS(er_interval_mod(er_interval_of_int_range(4, 6), er_interval_of_int(5)), 0, 4, 1, 1);
    IV_IS(er_interval_mod(mk(0, 1e300, 1, 0), three), 0, 2, 1, 0);
    IS_TOP(er_interval_mod(mk(0, INFINITY, 1, 0), three)); /* fmod(inf, 3) is NaN */
    IS_TOP(er_interval_mod(er_interval_of_int_range(0, 10), er_interval_of_int_range(3, 4)));
    IS_TOP(er_interval_mod(er_interval_of_int_range(0, 10), er_interval_of_int(0)));
    IS_TOP(er_interval_mod(er_interval_of_int_range(0, 10), er_interval_of_int(-3)));
    IS_TOP(er_interval_mod(er_interval_of_int_range(0, 10), er_interval_point(2.5)));
    IS_TOP(er_interval_mod(mk(0, 10, 0, 1), three));
    IS_TOP(er_interval_mod(er_interval_of_int_range(0, 10), er_interval_point(0x1p60)));
}
END_TEST

/* Seed witness: relu of NaN is 0 in C (fmax), so relu(top) has a bound; satur01 of NaN stays top. */
START_TEST(test_witness_nan_codomains)
{
    volatile double nan = NAN;
    er_interval r = er_interval_relu(er_interval_top());
    ck_assert(same(fmax(0.0, nan), 0.0));
    IV_IS(r, 0, INFINITY, 0, 0);
    ck_assert(er_interval_value_fits(r, fmax(0.0, nan)));
    ck_assert(!er_interval_value_fits(r, nan));
    IS_TOP(er_interval_satur01(er_interval_top()));
    IS_TOP(er_interval_exp_like(er_interval_top()));
    IS_TOP(er_interval_abs_le_1(er_interval_top()));
    IS_TOP(er_interval_abs_le_1(mk(0, INFINITY, 0, 0))); /* sin(inf) is NaN */
    IS_TOP(er_interval_sqrt(er_interval_top()));
    IS_TOP(er_interval_sqrt(mk(-1, 4, 1, 1)));
    IS_TOP(er_interval_trunc(er_interval_top()));
    IS_TOP(er_interval_neg(er_interval_top()));
    IS_TOP(er_interval_max(er_interval_top(), er_interval_of_int(1)));
    IS_TOP(er_interval_min(er_interval_of_int(1), er_interval_top()));
    IV_IS(er_interval_relu(mk(-3, 5, 1, 1)), 0, 5, 1, 1);
    IV_IS(er_interval_relu(mk(-INFINITY, -1, 0, 0)), 0, 0, 0, 0);
    IV_IS(er_interval_satur01(mk(-3, 0.5, 0, 1)), 0, 0.5, 0, 1);
    IV_IS(er_interval_satur01(mk(-3, 5, 1, 1)), 0, 1, 1, 1);
    IV_IS(er_interval_exp_like(mk(-3, 5, 1, 1)), 0, INFINITY, 0, 0);
    IV_IS(er_interval_abs_le_1(mk(-3, 5, 1, 1)), -1, 1, 0, 0);
    IV_IS(er_interval_sqrt(mk(4, 9, 1, 1)), 2, 3, 0, 1);
    IV_IS(er_interval_sqrt(mk(4, 4, 1, 1)), 2, 2, 1, 1);
    IV_IS(er_interval_sqrt(mk(0, 2, 1, 1)), 0, 0x1.6a09e667f3bcdp0, 0, 0);
    IV_IS(er_interval_sqrt(mk(2, INFINITY, 0, 0)), 0x1.6a09e667f3bccp0, INFINITY, 0, 0);
    IV_IS(er_interval_trunc(mk(-2.5, 3.75, 0, 1)), -2, 3, 1, 1);
    IV_IS(er_interval_neg(mk(-2.5, 3, 0, 1)), -3, 2.5, 0, 1);
    IV_IS(er_interval_max(mk(-2.5, 3, 0, 1), mk(1, 2, 1, 1)), 1, 3, 0, 1);
    IV_IS(er_interval_min(mk(-2.5, 3, 0, 1), mk(1, 2, 1, 1)), -2.5, 2, 0, 1);
}
END_TEST

/* Seed witness: a possibly-NaN operand (top, whatever its flags) never folds a comparison to true. */
START_TEST(test_witness_nan_comparisons)
{
    er_interval tops[3], others[8];
    int i, j;
    tops[0] = er_interval_top();
    tops[1] = mk(-INFINITY, INFINITY, 1, 0);
    tops[2] = mk(-INFINITY, INFINITY, 1, 1);
    others[0] = er_interval_top();
    others[1] = er_interval_point(INFINITY);
    others[2] = er_interval_point(-INFINITY);
    others[3] = er_interval_of_int(0);
    others[4] = er_interval_of_int_range(1, 0); /* empty */
    others[5] = mk(-INFINITY, 0, 0, 0);
    others[6] = mk(0, INFINITY, 0, 0);
    others[7] = mk(-INFINITY, INFINITY, 1, 1);
    for (i = 0; i < 3; i++) {
        ck_assert(!er_interval_definitely_true(tops[i]) && !er_interval_definitely_false(tops[i]));
        for (j = 0; j < 8; j++) {
            ck_assert_msg(er_interval_cmplt_decides(tops[i], others[j]) != ER_INTERVAL_TRUE, "lt %d %d", i, j);
            ck_assert_msg(er_interval_cmplt_decides(others[j], tops[i]) != ER_INTERVAL_TRUE, "lt %d %d", j, i);
            ck_assert_msg(er_interval_cmpeq_decides(tops[i], others[j]) != ER_INTERVAL_TRUE, "eq %d %d", i, j);
            ck_assert_msg(er_interval_cmpeq_decides(others[j], tops[i]) != ER_INTERVAL_TRUE, "eq %d %d", j, i);
        }
    }
    /* Decided folds on NaN-free operands. */
    ck_assert_int_eq(er_interval_cmplt_decides(mk(0, 1, 0, 0), mk(2, 3, 0, 0)), ER_INTERVAL_TRUE);
    ck_assert_int_eq(er_interval_cmplt_decides(mk(-INFINITY, 1, 0, 0), mk(2, INFINITY, 0, 0)), ER_INTERVAL_TRUE);
    ck_assert_int_eq(er_interval_cmplt_decides(mk(2, 3, 0, 0), mk(0, 2, 0, 0)), ER_INTERVAL_FALSE);
    ck_assert_int_eq(er_interval_cmplt_decides(mk(0, 2, 0, 0), mk(2, 3, 0, 0)), ER_INTERVAL_UNDECIDED);
    ck_assert_int_eq(er_interval_cmplt_decides(er_interval_top(), er_interval_point(-INFINITY)), ER_INTERVAL_FALSE);
    ck_assert_int_eq(er_interval_cmpeq_decides(er_interval_point(0.5), er_interval_point(0.5)), ER_INTERVAL_TRUE);
    ck_assert_int_eq(er_interval_cmpeq_decides(er_interval_point(-0.0), er_interval_point(0.0)), ER_INTERVAL_TRUE);
    ck_assert_int_eq(er_interval_cmpeq_decides(er_interval_point(0x1p60), er_interval_point(0x1p60)),
                     ER_INTERVAL_UNDECIDED);
    ck_assert_int_eq(er_interval_cmpeq_decides(mk(0, 1, 0, 0), mk(2, 3, 0, 0)), ER_INTERVAL_FALSE);
    ck_assert_int_eq(er_interval_cmpeq_decides(mk(0, 5, 1, 0), er_interval_point(2.5)), ER_INTERVAL_FALSE);
    ck_assert_int_eq(er_interval_cmpeq_decides(er_interval_point(2.5), mk(0, 5, 1, 0)), ER_INTERVAL_FALSE);
    ck_assert_int_eq(er_interval_cmpeq_decides(mk(0, 5, 0, 0), er_interval_point(2.5)), ER_INTERVAL_UNDECIDED);
}
END_TEST

START_TEST(test_at_prec)
{
    er_interval t;
    /* Integer precisions: in range passes (integral endpoints tightened), anything else wraps. */
    IV_IS(er_interval_at_prec(ER_FMT_I8, er_interval_of_int_range(-128, 127)), -128, 127, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_I8, er_interval_of_int_range(-129, 0)), -128, 127, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_I8, er_interval_of_int_range(0, 128)), -128, 127, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_I8, mk(-3.5, 2.5, 1, 0)), -3, 2, 1, 0);
    IV_IS(er_interval_at_prec(ER_FMT_I8, mk(-3.5, 2.5, 0, 0)), -128, 127, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_I8, er_interval_top()), -128, 127, 1, 1);
    /* "Crosses zero": a lower bound below zero at an unsigned precision widens to the full range. */
    IV_IS(er_interval_at_prec(ER_FMT_U8, er_interval_of_int_range(-1, 5)), 0, 255, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_U8, er_interval_of_int_range(0, 255)), 0, 255, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_U8, er_interval_of_int_range(1, 256)), 0, 255, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_I32, er_interval_of_int_range(INT32_MIN, INT32_MAX)), -2147483648.0,
          2147483647.0, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_I32, er_interval_of_int_range(0, (int64_t)INT32_MAX + 1)), -2147483648.0,
          2147483647.0, 1, 1);
    /* i64: 2^63 is out of range, the double below it (2^63 - 1024) is in. */
    t = mk(0, P63, 1, 0);
    IV_IS(er_interval_at_prec(ER_FMT_I64, t), -P63, P63, 1, 0);
    t = mk(-P63, 0x1.fffffffffffffp62, 1, 0);
    IV_IS(er_interval_at_prec(ER_FMT_I64, t), -P63, 0x1.fffffffffffffp62, 1, 0);
    t = mk(-0x1.0000000000001p63, 0, 1, 0);
    IV_IS(er_interval_at_prec(ER_FMT_I64, t), -P63, P63, 1, 0);
    /* Float precisions: integral within the exact-integer limit passes, anything else is the range. */
    IV_IS(er_interval_at_prec(ER_FMT_F16, er_interval_of_int_range(-2048, 2048)), -2048, 2048, 1, 1);
    IS_TOP(er_interval_at_prec(ER_FMT_F16, er_interval_of_int_range(0, 2049)));
    IS_TOP(er_interval_at_prec(ER_FMT_F32, mk(0.5, 0.5, 0, 1)));
    IS_TOP(er_interval_at_prec(ER_FMT_F64, mk(0, 1, 0, 1)));
    IV_IS(er_interval_at_prec(ER_FMT_F64, mk(-P53, P53, 1, 0)), -P53, P53, 1, 0);
    IV_IS(er_interval_at_prec(ER_FMT_F8E4M3FN, er_interval_of_int_range(-16, 16)), -16, 16, 1, 1);
    IS_TOP(er_interval_at_prec(ER_FMT_F8E4M3FN, er_interval_of_int_range(-17, 16)));
    IV_IS(er_interval_at_prec(ER_FMT_F8E5M2, er_interval_of_int_range(-8, 8)), -8, 8, 1, 1);
    IS_TOP(er_interval_at_prec(ER_FMT_F8E5M2, er_interval_of_int_range(-9, 8)));
    IS_TOP(er_interval_at_prec(ER_FMT_F8E8M0FNU, er_interval_of_int_range(1, 2)));
    IV_IS(er_interval_at_prec(ER_FMT_F4E2M1FN, mk(0.25, 0.5, 0, 1)), -6, 6, 0, 1);
    IV_IS(er_interval_at_prec(ER_FMT_F4E2M1FN, er_interval_of_int_range(-4, 4)), -4, 4, 1, 1);
    IV_IS(er_interval_at_prec(ER_FMT_F6E2M3FN, er_interval_of_int_range(0, 8)), -7.5, 7.5, 0, 1);
    IV_IS(er_interval_at_prec(ER_FMT_F6E2M3FN, er_interval_of_int_range(0, 7)), 0, 7, 1, 1);
    IS_TOP(er_interval_at_prec(-1, er_interval_of_int(1)));
    IS_TOP(er_interval_at_prec(ER_FMT_COUNT, er_interval_of_int(1)));
}
END_TEST

START_TEST(test_round_into)
{
    IV_IS(er_interval_round_into(ER_FMT_F16, mk(0, 70000, 1, 1)), 0, INFINITY, 1, 0);
    IV_IS(er_interval_round_into(ER_FMT_F16, mk(0.1, 0.2, 0, 1)), 0x1.998p-4, 0x1.99cp-3, 0, 0);
    IV_IS(er_interval_round_into(ER_FMT_F16, mk(0.5, 1.5, 0, 1)), 0.5, 1.5, 0, 1);
    /* Subnormal bounds may flush to zero. */
    IV_IS(er_interval_round_into(ER_FMT_F16, mk(0x1p-20, 1, 0, 1)), 0, 1, 0, 0);
    IV_IS(er_interval_round_into(ER_FMT_F16, mk(-1, -0x1p-20, 0, 1)), -1, 0, 0, 0);
    /* f8E4M3FN overflows to NaN: top; within range it is tight. */
    IS_TOP(er_interval_round_into(ER_FMT_F8E4M3FN, mk(0, 500, 1, 1)));
    IS_TOP(er_interval_round_into(ER_FMT_F8E4M3FN, mk(0, INFINITY, 0, 0)));
    IV_IS(er_interval_round_into(ER_FMT_F8E4M3FN, mk(0, 448, 1, 1)), 0, 448, 1, 1);
    IV_IS(er_interval_round_into(ER_FMT_F8E4M3FN, mk(17, 17, 1, 0)), 16, 18, 1, 0);
    /* fp4 has neither inf nor NaN: overflow and infinities land on +-6. */
    IV_IS(er_interval_round_into(ER_FMT_F4E2M1FN, er_interval_point(100)), 6, 6, 1, 0);
    IV_IS(er_interval_round_into(ER_FMT_F4E2M1FN, mk(-INFINITY, 0, 0, 0)), -6, 0, 0, 0);
    IV_IS(er_interval_round_into(ER_FMT_F4E2M1FN, er_interval_top()), -6, 6, 0, 1);
    /* f6E2M3FN saturates at 7.5, not an integer. */
    IV_IS(er_interval_round_into(ER_FMT_F6E2M3FN, er_interval_of_int_range(0, 9)), 0, 7.5, 0, 0);
    IV_IS(er_interval_round_into(ER_FMT_F6E2M3FN, er_interval_of_int_range(0, 7)), 0, 7, 1, 1);
    /* f8E8M0FNU: no zero, no sign. */
    IS_TOP(er_interval_round_into(ER_FMT_F8E8M0FNU, mk(0, 1, 0, 1)));
    IV_IS(er_interval_round_into(ER_FMT_F8E8M0FNU, mk(3, 5, 1, 1)), 2, 8, 1, 0);
    IV_IS(er_interval_round_into(ER_FMT_F8E8M0FNU, mk(0x1p-200, 1, 0, 0)), 0x1p-127, 1, 0, 0);
    /* f8E5M3FNU: no sign (a negative gives NaN), a zero, subnormals below 2^-14 (which a flush may
     * zero), 4 significant bits (17 lies between 16 and 18). */
    IS_TOP(er_interval_round_into(ER_FMT_F8E5M3FNU, mk(-1, 1, 0, 0)));
    IV_IS(er_interval_round_into(ER_FMT_F8E5M3FNU, mk(3, 5, 1, 1)), 3, 5, 1, 1);
    IV_IS(er_interval_round_into(ER_FMT_F8E5M3FNU, mk(1, 17, 1, 0)), 1, 18, 1, 0);
    IV_IS(er_interval_round_into(ER_FMT_F8E5M3FNU, mk(0x1p-200, 1, 0, 0)), 0, 1, 0, 0);
    IV_IS(er_interval_round_into(ER_FMT_F8E5M3FNU, mk(0x1p-16, 0x1p-16, 0, 1)), 0, 0x1p-16, 0, 0);
    /* Integers: [floor lo, ceil hi] in range, else the dtype range. */
    IV_IS(er_interval_round_into(ER_FMT_I8, mk(-3.5, 2.25, 0, 1)), -4, 3, 1, 0);
    IV_IS(er_interval_round_into(ER_FMT_I8, mk(-3, 2, 1, 1)), -3, 2, 1, 1);
    IV_IS(er_interval_round_into(ER_FMT_I8, mk(0, 127.5, 0, 1)), -128, 127, 1, 1);
    IV_IS(er_interval_round_into(ER_FMT_U8, er_interval_top()), 0, 255, 1, 1);
    IS_TOP(er_interval_round_into(ER_FMT_F32, er_interval_top()));
    IS_TOP(er_interval_round_into(-1, er_interval_of_int(1)));
}
END_TEST

START_TEST(test_arith_named)
{
    er_interval a = er_interval_of_int_range(-3, 5), b = er_interval_of_int_range(2, 4);
    IV_IS(er_interval_add(a, b), -1, 9, 1, 1);
    IV_IS(er_interval_sub(a, b), -7, 3, 1, 1);
    IV_IS(er_interval_mul(a, b), -12, 20, 1, 1);
    IV_IS(er_interval_mul(a, a), -15, 25, 1, 1);
    IV_IS(er_interval_add(mk(0.5, 0.5, 0, 1), mk(0.25, 0.25, 0, 1)), 0.75, 0.75, 0, 1);
    IV_IS(er_interval_add(mk(0.1, 0.1, 0, 1), mk(0.2, 0.2, 0, 1)), 0.30000000000000004 - 0x1p-54,
          0.30000000000000004, 0, 0);
    IV_IS(er_interval_mul(mk(0.1, 0.1, 0, 1), mk(3, 3, 1, 1)), 0.30000000000000004 - 0x1p-54,
          0.30000000000000004, 0, 0);
    /* Overflow: the nearest sum is inf; rounded down it is DBL_MAX. */
    IV_IS(er_interval_add(mk(1e308, 1e308, 0, 0), mk(1e308, 1e308, 0, 0)), 0x1.fffffffffffffp1023, INFINITY, 0, 0);
    IV_IS(er_interval_mul(mk(1e-200, 1e-200, 0, 0), mk(1e-200, 1e-200, 0, 0)), 0, 0x1p-1074, 0, 0);
    IS_TOP(er_interval_add(mk(0, INFINITY, 0, 0), b));
    IS_TOP(er_interval_mul(er_interval_top(), b));
    IS_TOP(er_interval_div(b, a)); /* divisor contains 0 */
    IS_TOP(er_interval_div(b, mk(-0.0, 1, 0, 0)));
    IS_TOP(er_interval_div(b, mk(1, INFINITY, 0, 0)));
    IV_IS(er_interval_div(mk(1, 1, 1, 1), mk(4, 4, 1, 1)), 0.25 - 0x1p-55, 0.25 + 0x1p-54, 0, 0);
    IV_IS(er_interval_div(mk(-6, 3, 1, 1), mk(-3, -2, 1, 1)), -1.5 - 0x1p-52, 3 + 0x1p-51, 0, 0);
    IS_TOP(er_interval_arith_result(a, b, NAN, 1));
    IS_TOP(er_interval_arith_result(er_interval_top(), b, 0, 1));
    IV_IS(er_interval_arith_result(a, b, -1, 9), -1, 9, 1, 1);
    IV_IS(er_interval_arith_result(mk(0.5, 1, 0, 1), b, 2.5, 5), 2.5 - 0x1p-50, 5 + 0x1p-49, 0, 0);
    IV_IS(er_interval_arith_result(mk(0.5, 1, 1, 0), b, 2.5, 5), 3, 5, 1, 0);
    {
        double v[3] = {0, -1e308, 5};
        ck_assert(er_interval_all_finite(v, 3));
        v[1] = INFINITY;
        ck_assert(!er_interval_all_finite(v, 3));
        v[1] = NAN;
        ck_assert(!er_interval_all_finite(v, 3));
        ck_assert(er_interval_all_finite(NULL, 0));
    }
}
END_TEST

START_TEST(test_sexp)
{
    char buf[ER_INTERVAL_SEXP_MAX];
    er_interval t;
    static const char *bad[] = {"",
                                "()",
                                "((lo 0) (hi 1) (integral true))",
                                "((lo 0) (hi 1) (integral true) (exact true) (lo 0))",
                                "((lo nan) (hi 1) (integral true) (exact false))",
                                "((lo 0) (hi 1) (integral yes) (exact false))",
                                "((lo 0) (hi 1) (integral true) (exact false)) x",
                                "((lo 0) (hi 1e400) (integral true) (exact false))",
                                "((lo 0) (hi 0x1p60) (integral true) (exact true))",
                                "((lo 0) (hi 1) (integral true) (exact false)",
                                "((lo 0) (hi 1) (width 3) (integral true) (exact false))",
                                "((lo 0 1) (hi 1) (integral true) (exact false))",
                                "((lo 0x) (hi 1) (integral true) (exact false))"};
    size_t i;
    ck_assert(er_interval_to_sexp(er_interval_of_int_range(0, 255), buf, sizeof buf) == ER_OK);
    ck_assert_str_eq(buf, "((lo 0) (hi 255) (integral true) (exact true))");
    ck_assert(er_interval_to_sexp(er_interval_top(), buf, sizeof buf) == ER_OK);
    ck_assert_str_eq(buf, "((lo -inf) (hi inf) (integral false) (exact false))");
    ck_assert(er_interval_to_sexp(mk(0.1, -0.0, 0, 0), buf, sizeof buf) == ER_OK);
    ck_assert_str_eq(buf, "((lo 0.1) (hi -0) (integral false) (exact false))");
    ck_assert(er_interval_to_sexp(mk(-0x1.fffffffffffffp1023, 0x1p-1074, 0, 0), buf, sizeof buf) == ER_OK);
    ck_assert_str_eq(buf, "((lo -1.7976931348623157e+308) (hi 5e-324) (integral false) (exact false))");
    ck_assert(er_interval_to_sexp(mk(0, 1, 0, 0), buf, 10) == ER_EINVAL);
    ck_assert(er_interval_to_sexp(mk(NAN, 1, 0, 0), buf, sizeof buf) == ER_EINVAL);
    ck_assert(er_interval_of_sexp(" ( (exact false)(hi 0x1.8p1) (integral true) (lo -INF) ) \n", &t) == ER_OK);
    IV_IS(t, -INFINITY, 3, 1, 0);
    ck_assert(er_interval_of_sexp("((lo -1.7976931348623157e+308) (hi 4.9406564584124654e-324) (integral false) (exact false))", &t) == ER_OK);
    IV_IS(t, -0x1.fffffffffffffp1023, 0x1p-1074, 0, 0);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(er_interval_of_sexp(bad[i], &t) == ER_EINVAL, "accepted: %s", bad[i]);
    ck_assert(er_interval_of_sexp(NULL, &t) == ER_EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("interval_lattice");
    TCase *tc = tcase_create("facts");
    SRunner *sr;
    int nf;
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_record);
    tcase_add_test(tc, test_constructors);
    tcase_add_test(tc, test_lattice_ops);
    tcase_add_test(tc, test_truthiness);
    tcase_add_test(tc, test_dtype_range);
    tcase_add_test(tc, test_exact_int_limits);
    tcase_add_test(tc, test_witness_bf16_257);
    tcase_add_test(tc, test_witness_2p53);
    tcase_add_test(tc, test_witness_remainder_sign);
    tcase_add_test(tc, test_witness_nan_codomains);
    tcase_add_test(tc, test_witness_nan_comparisons);
    tcase_add_test(tc, test_at_prec);
    tcase_add_test(tc, test_round_into);
    tcase_add_test(tc, test_arith_named);
    tcase_add_test(tc, test_sexp);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
