/* test_ends_dd.c: the ends lo = RD(x - rad) and hi = RU(x + rad) of an element from the double-double
 * Sum2 (include/exactref/core/er_bounds.h: er_b_ends_dd) against the same ends from the exact
 * accumulator (er_acc), bit for bit, wherever the double-double step says it decided: random rows of
 * low-precision values over wide and narrow exponent ranges, with and without C, zeros and products
 * near binary64's underflow, radii from zero to beyond x, and exactly representable sums with radii
 * that put x -+ rad on a binary64 value or a hair (an ulp of rad) to either side of one, where a sign
 * slip in the decision would show.  It also requires the step to decide most random elements (else
 * the fast path would be dead code and the comparison empty).  Also er_b_add_ru, the engines'
 * addition rounded upward, against the exact sum rounded toward +infinity.  Random (seed from
 * EXACTREF_SEED, printed). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "er_test.h"
#include "exactref/core/er_bounds.h"

static uint64_t seed;

/* lo, hi from x summed exactly (the accumulator's way, as er_b_ends_acc forms them) */
static void ends_exact(const er_bpar *c, const double *ar, const double *bc, double cval, double rad, double *lo,
                       double *hi)
{
    er_acc acc, acc2;
    er_i32 wlo, wnd;
    er_acc_window(-2148, 2048, c->k + 3, &wlo, &wnd);
    er_acc_init(&acc, wlo, wnd);
    for (int64_t p = 0; p < c->k; p++)
        er_acc_add_product(&acc, er_decode(ER_FMT_F64, er_b_bits(ar[p])), er_decode(ER_FMT_F64, er_b_bits(bc[p * c->ldb])));
    if (c->has_c) er_acc_add_val(&acc, er_decode(ER_FMT_F64, er_b_bits(cval)));
    er_acc_add_val(&acc, er_decode(ER_FMT_F64, er_b_bits(-rad)));
    er_acc_copy(&acc2, &acc);
    er_acc_add_val(&acc2, er_decode(ER_FMT_F64, er_b_bits(rad)));
    er_acc_add_val(&acc2, er_decode(ER_FMT_F64, er_b_bits(rad)));
    *lo = er_b_dbl(er_acc_round(&acc, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0u).bits);
    *hi = er_b_dbl(er_acc_round(&acc2, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits);
    if (*lo == 0) *lo = 0.0;
    if (*hi == 0) *hi = 0.0;
}

/* a bf16-like value: 8 significant bits, exponent in [-span, span] around e0, or zero */
static double val(uint64_t *st, int e0, int span)
{
    uint64_t r = er_test_rand(st);
    if (r % 16 == 0) return 0.0;
    double m = 1.0 + (double)((r >> 8) & 127) / 128.0;
    int e = e0 + (int)((r >> 16) % (uint64_t)(2 * span + 1)) - span;
    return ((r >> 40) & 1 ? -m : m) * ldexp(1.0, e);
}

static int64_t decided, tried;

/* 1 where the double-double step decided */
static int compare(const er_bpar *c, const double *ar, const double *bc, double cval, double rad, const char *what,
                   int t)
{
    double lo, hi, elo, ehi;
    tried++;
    if (!er_b_ends_dd(c, ar, bc, cval, rad, &lo, &hi)) return 0;
    decided++;
    ends_exact(c, ar, bc, cval, rad, &elo, &ehi);
    ck_assert_msg(er_b_bits(lo) == er_b_bits(elo) && er_b_bits(hi) == er_b_bits(ehi),
                  "seed %llu case %d (%s, k %lld, C %d, rad %a): double-double [%a, %a], exact [%a, %a]",
                  (unsigned long long)seed, t, what, (long long)c->k, c->has_c, rad, lo, hi, elo, ehi);
    return 1;
}

START_TEST(random_rows)
{
    uint64_t st = seed;
    enum { KMAX = 300 };
    static const int64_t ks[] = {1, 2, 7, 64, 300};
    double ar[KMAX], bc[KMAX];
    decided = tried = 0;
    int64_t typical = 0, typical_done = 0; /* k >= 64, no values near underflow, a radius above zero */
    for (int t = 0; t < 20000; t++) {
        er_bpar c;
        memset(&c, 0, sizeof c);
        c.k = ks[er_test_rand(&st) % 5];
        c.ldb = 1;
        c.has_c = (int)(er_test_rand(&st) & 1);
        int kind = (int)(er_test_rand(&st) % 4);
        int span = kind == 0 ? 8 : kind == 1 ? 40 : kind == 2 ? 2 : 100;
        int e0 = kind == 3 ? -490 : 0; /* products near 2^-980: below the guard */
        for (int64_t p = 0; p < c.k; p++) ar[p] = val(&st, e0, span), bc[p] = val(&st, e0, span);
        double cval = c.has_c ? val(&st, 2 * e0, span) : 0.0;
        /* x roughly, for the radius' scale */
        double xs = c.has_c ? fabs(cval) : 0.0;
        for (int64_t p = 0; p < c.k; p++) xs += fabs(ar[p] * bc[p]);
        int rk = (int)(er_test_rand(&st) % 4);
        double rad = rk == 0 ? 0.0 : rk == 1 ? ldexp(xs, -(int)(er_test_rand(&st) % 60)) : rk == 2 ? 2.0 * xs
                                                                                          : ldexp(xs, -24) * 3.0;
        int done = compare(&c, ar, bc, cval, rad, "random", t);
        if (c.k >= 64 && kind != 3 && rk != 0) typical++, typical_done += done;
    }
    /* undecided by design: x -+ rad a binary64 value itself (few terms, or rad = 0 on an exact sum), and
     * products below 2^-969 */
    printf("random_rows: %lld of %lld decided by the double-double step; typical rows %lld of %lld\n",
           (long long)decided, (long long)tried, (long long)typical_done, (long long)typical);
    ck_assert_msg(typical_done * 100 >= typical * 95, "seed %llu: only %lld of %lld typical rows decided",
                  (unsigned long long)seed, (long long)typical_done, (long long)typical);
}
END_TEST

START_TEST(on_and_beside_boundaries)
{
    uint64_t st = seed ^ 0xa5a5a5a5a5a5a5a5u;
    double ar[16], bc[16];
    for (int t = 0; t < 20000; t++) {
        er_bpar c;
        memset(&c, 0, sizeof c);
        c.k = 1 + (int64_t)(er_test_rand(&st) % 16);
        c.ldb = 1;
        c.has_c = 0;
        /* small integers times powers of two: x is a binary64 value, exactly */
        int sh = (int)(er_test_rand(&st) % 200) - 100;
        for (int64_t p = 0; p < c.k; p++) {
            ar[p] = (double)((int64_t)(er_test_rand(&st) % 255) - 127) * ldexp(1.0, sh);
            bc[p] = (double)((int64_t)(er_test_rand(&st) % 255) - 127);
        }
        double x = 0;
        for (int64_t p = 0; p < c.k; p++) x += ar[p] * bc[p]; /* exact: below 2^24 units of 2^sh */
        ck_assert_msg(fabs(x) < ldexp(1.0, sh + 24), "case %d: the premise (x below 2^24 units) fails", t);
        /* rad so that x - rad and x + rad are binary64 values (rad a multiple of 2^sh below 2^30 of it),
         * then moved to the next binary64 value either way (x -+ rad then a hair beside one) */
        double rad = (double)(er_test_rand(&st) % (1u << 30)) * ldexp(1.0, sh);
        int nudge = (int)(er_test_rand(&st) % 3);
        if (nudge == 1) rad = er_b_up(rad);
        if (nudge == 2) rad = er_b_down(rad);
        if (rad < 0) rad = 0;
        compare(&c, ar, bc, 0.0, rad, nudge == 0 ? "on a value" : "beside a value", t);
    }
}
END_TEST

/* Sums whose error terms themselves cancel in binary64: [2^b, 1, 2^-t, -2^b, 2^b, -1, -2^b] (times 2^o)
 * leaves s = 0 and e = fl(fl(1 + 2^-t) - 1) = 0 while x = 2^-t; radii of the order of 2^-t put the
 * ends where only the Sum2 error bound keeps the step from deciding wrongly. */
START_TEST(cancelling_errors)
{
    uint64_t st = seed ^ 0x3c3c3c3c3c3c3c3cu;
    double ar[8], bc[8];
    for (int t = 0; t < 20000; t++) {
        er_bpar c;
        memset(&c, 0, sizeof c);
        c.k = 7;
        c.ldb = 1;
        int b = 60 + (int)(er_test_rand(&st) % 60), tt = 54 + (int)(er_test_rand(&st) % 40);
        int o = (int)(er_test_rand(&st) % 400) - 200;
        const double v[7] = {ldexp(1.0, b), 1.0, ldexp(1.0, -tt), -ldexp(1.0, b), ldexp(1.0, b), -1.0, -ldexp(1.0, b)};
        for (int p = 0; p < 7; p++) ar[p] = ldexp(v[p], o), bc[p] = 1.0;
        double x = ldexp(1.0, o - tt);
        int rk = (int)(er_test_rand(&st) % 4);
        double rad = rk == 0 ? x / 2 : rk == 1 ? x * 3 : rk == 2 ? x : x * 0x1p-30;
        c.has_c = (int)(er_test_rand(&st) & 1);
        double cval = c.has_c ? ldexp(1.0, o - tt - 1 - (int)(er_test_rand(&st) % 8)) : 0.0;
        compare(&c, ar, bc, cval, rad, "cancelling errors", t);
    }
}
END_TEST

/* er_b_add_ru(a, b), the engines' recurrence's addition rounded upward, against the exact sum rounded
 * toward +infinity by the accumulator: a, b >= 0 from every binade (subnormals and zeros included),
 * pairs whose sum is exact, just above and just below a binary64 value, and sums beyond the largest
 * finite value (+inf); infinite and NaN operands as they are. */
static double add_ru_exact(double a, double b)
{
    er_acc acc;
    er_i32 wlo, wnd;
    er_acc_window(-2148, 2048, 3, &wlo, &wnd);
    er_acc_init(&acc, wlo, wnd);
    er_acc_add_val(&acc, er_decode(ER_FMT_F64, er_b_bits(a)));
    er_acc_add_val(&acc, er_decode(ER_FMT_F64, er_b_bits(b)));
    return er_b_dbl(er_acc_round(&acc, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits);
}

static double any_nonneg(uint64_t *st)
{
    uint64_t r = er_test_rand(st);
    switch (r % 8) {
    case 0: return 0.0;
    case 1: return er_b_dbl(er_test_rand(st) & ER_U64(0x000FFFFFFFFFFFFF)); /* subnormal */
    case 2: return er_b_dbl(ER_U64(0x7FEFFFFFFFFFFFFF) - (er_test_rand(st) % 4096)); /* near the top */
    default: return er_b_dbl(er_test_rand(st) % ER_U64(0x7FF0000000000000)); /* any finite */
    }
}

START_TEST(add_ru)
{
    uint64_t st = seed ^ 0xadd5u;
    int64_t up = 0, exact = 0;
    for (int t = 0; t < 400000; t++) {
        double a = any_nonneg(&st), b;
        int kind = (int)(er_test_rand(&st) % 4);
        if (kind == 0) b = any_nonneg(&st);
        else {
            /* b within 2^-60 .. 2^8 of a's size, on a's grid or off it by a few ulps of the sum */
            int d = (int)(er_test_rand(&st) % 69) - 60;
            b = ldexp(a, d);
            if (kind == 2) b = er_b_dbl(er_b_bits(b) + er_test_rand(&st) % 3);
            if (kind == 3) b = er_b_dbl(er_b_bits(b) & ~ER_U64(0xFFFFFFF)); /* few bits: often exact */
            if (!(b >= 0) || !er_b_finite(b)) b = 0.0;
        }
        double r = er_b_add_ru(a, b), w = add_ru_exact(a, b);
        ck_assert_msg(er_b_bits(r) == er_b_bits(w), "seed %llu case %d: RU(%a + %a): %a, exact %a",
                      (unsigned long long)seed, t, a, b, r, w);
        ck_assert_msg(er_b_bits(r) == er_b_bits(er_b_add_ru(b, a)), "seed %llu case %d: not symmetric",
                      (unsigned long long)seed, t);
        ck_assert(r <= er_b_up(a + b) || (r == 0 && a + b == 0));
        if (r == a + b) exact++;
        else up++;
    }
    /* both sides seen often, else the comparison would be thin */
    ck_assert_msg(up > 40000 && exact > 40000, "rounded up %lld, exact or rounded up by RN %lld", (long long)up,
                  (long long)exact);
    /* the range's end and the specials */
    const double mx = er_b_dbl(ER_U64(0x7FEFFFFFFFFFFFFF)), inf = er_b_dbl(ER_U64(0x7FF0000000000000));
    ck_assert(er_b_add_ru(mx, 0x1p-1074) == inf);           /* RU beyond the range: +inf */
    ck_assert(er_b_add_ru(mx, 0x1p970) == inf);             /* RN gives +inf too */
    ck_assert(er_b_add_ru(mx, 0.0) == mx);
    ck_assert(er_b_add_ru(1.0, 0x1p-1074) == 1.0 + 0x1p-52);
    ck_assert(er_b_add_ru(0.0, 0.0) == 0.0 && !signbit(er_b_add_ru(0.0, 0.0)));
    ck_assert(er_b_add_ru(inf, 1.0) == inf && er_b_add_ru(2.0, inf) == inf);
    ck_assert(isnan(er_b_add_ru(er_b_dbl(ER_U64(0x7FF8000000000000)), 1.0)));
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_ends_dd");
    Suite *s = suite_create("ends_dd");
    TCase *tc = tcase_create("ends_dd");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, random_rows);
    tcase_add_test(tc, on_and_beside_boundaries);
    tcase_add_test(tc, cancelling_errors);
    tcase_add_test(tc, add_ru);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
