/* test_er_exp.c: the core's certified exp and 2^x enclosures (include/exactref/core/er_exp.h) against MPFR at
 * 200 bits: every enclosure holds the value and is narrow (2^-43 relative); the arguments it declines are
 * the documented ones. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "er_test.h"
#include "exactref/core/er_exp.h"

static uint64_t st;

/* One x: base 2 (two) or e; counts enclosures wider than 2^-43 relative where the value is a binary64 normal. */
static void check1(double x, int two, long *wide, long *declined)
{
    double lo = 0, hi = 0;
    mpfr_t y;
    int ok = two ? er_b_exp2_enclose(x, &lo, &hi) : er_b_exp_enclose(x, &lo, &hi);
    if (!ok) {
        ck_assert_msg(!(fabs(x) <= (two ? 1000 : 708)) || !two, "%s(%a) declined inside its range", two ? "exp2" : "exp", x);
        (*declined)++;
        return;
    }
    mpfr_init2(y, 200);
    mpfr_set_d(y, x, MPFR_RNDN);
    if (two) mpfr_exp2(y, y, MPFR_RNDN);
    else mpfr_exp(y, y, MPFR_RNDN);
    ck_assert_msg(lo <= hi, "%s(%a): [%a, %a]", two ? "exp2" : "exp", x, lo, hi);
    ck_assert_msg(mpfr_cmp_d(y, lo) >= 0, "%s(%a) below lo %a", two ? "exp2" : "exp", x, lo);
    ck_assert_msg(mpfr_cmp_d(y, hi) <= 0, "%s(%a) above hi %a", two ? "exp2" : "exp", x, hi);
    if (lo >= 0x1p-1022 && isfinite(hi) && !(hi - lo <= 0x1p-43 * lo)) (*wide)++;
    mpfr_clear(y);
}

START_TEST(t_exp2)
{
    static const double edges[] = {0.0, -0.0, 0x1p-1074, -0x1p-1074, 0.5, -0.5, 0.49999999999999994, 1.5, -1.5, 2.5, 1, -1,
                                   -126, -149, -149.5, 127.99999, 128, 1000, -1000, 999.5, -999.5, 0x1.fffffep-2, -0x1.fffffep-2};
    long wide = 0, declined = 0, n = 0;
    size_t i;
    int k;
    double lo, hi;
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++, n++) check1(edges[i], 1, &wide, &declined);
    for (k = 0; k < 300000; k++, n++) {
        double u = (double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1;
        int c = (int)(er_test_rand(&st) % 4);
        /* f32 arguments (what the interpreter asks), binary64 ones, small ones, the whole range */
        double x = c == 0 ? (double)(float)(u * 40) : c == 1 ? u * 3 : c == 2 ? ldexp(u, -(int)(er_test_rand(&st) % 60)) : u * 1000;
        check1(x, 1, &wide, &declined);
    }
    for (k = -999; k <= 999; k += 3, n += 2) { /* the reduction's worst f, one half away from an integer */
        check1(k + 0.5, 1, &wide, &declined);
        check1(k - 0.49999999999999994, 1, &wide, &declined);
    }
    ck_assert(!er_b_exp2_enclose(1000.5, &lo, &hi) && !er_b_exp2_enclose(-1e10, &lo, &hi) && !er_b_exp2_enclose(NAN, &lo, &hi) &&
              !er_b_exp2_enclose(INFINITY, &lo, &hi));
    printf("exp2: %ld points enclosed, %ld wider than 2^-43, %ld declined\n", n, wide, declined);
    ck_assert_int_eq(wide, 0);
    ck_assert_int_eq(declined, 0);
}
END_TEST

START_TEST(t_exp)
{
    long wide = 0, declined = 0, n = 0;
    int k;
    double lo, hi;
    for (k = 0; k < 200000; k++, n++) {
        double u = (double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1;
        int c = (int)(er_test_rand(&st) % 3);
        double x = c == 0 ? u * 0.4 : c == 1 ? u * 20 : u * 708;
        check1(x, 0, &wide, &declined);
    }
    ck_assert(!er_b_exp_enclose(708.5, &lo, &hi) && !er_b_exp_enclose(NAN, &lo, &hi));
    printf("exp: %ld points enclosed, %ld wider than 2^-43, %ld declined\n", n, wide, declined);
    ck_assert_int_eq(wide, 0);
    ck_assert_int_eq(declined, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("er_exp");
    TCase *tc = tcase_create("all");
    SRunner *sr;
    int nf;
    st = er_test_seed("test_er_exp");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, t_exp2);
    tcase_add_test(tc, t_exp);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? 0 : 1;
}
