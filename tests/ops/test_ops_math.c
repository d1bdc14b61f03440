/* test_ops_math.c: the operations' certified binary64 math (src/ops/op_math.c) against MPFR: every
 * enclosure holds MPFR's value and is narrow; the constants of the argument reduction are as proven;
 * the MPFR intervals decide roundings as MPFR rounds; the helpers' rounding decisions and options. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>

#include "er_test.h"
#include "ops/op_impl.h"
#include "exactref/exactref.h"

static double urand_(uint64_t *st) { return (double)(er_test_rand(st) >> 11) * 0x1p-53 * 2 - 1; }

static void check_exp(double x, long *wide)
{
    double lo, hi;
    mpfr_t y;
    mpfr_init2(y, 200);
    er_ops_exp(x, &lo, &hi);
    mpfr_set_d(y, x, MPFR_RNDN);
    mpfr_exp(y, y, MPFR_RNDN); /* 200 bits: far inside any gap the checks below could miss */
    ck_assert_msg(lo <= hi, "exp(%a): [%a, %a]", x, lo, hi);
    ck_assert_msg(mpfr_cmp_d(y, lo) >= 0, "exp(%a) below lo %a", x, lo);
    ck_assert_msg(mpfr_cmp_d(y, hi) <= 0, "exp(%a) above hi %a", x, hi);
    /* narrow: within 2^-43 relative where exp(x) is a binary64 normal (the radius used is 2 E = 2^-45
     * each way around the polynomial's values, docs/proofs/ops-math.md) */
    if (lo >= 0x1p-1022 && isfinite(hi) && !(hi - lo <= 0x1p-43 * lo)) (*wide)++;
    mpfr_clear(y);
}

START_TEST(exp_encloses_mpfr)
{
    uint64_t st = er_test_seed("ops_exp");
    long wide = 0, n = 0;
    static const double edges[] = {0.0, -0.0, 1e-300, -1e-300, 0x1p-1074, 0.5, -0.5, 0.3465, -0.3466, 0.35, -0.35,
                                   1, -1, 0.6931471805599453, -0.6931471805599453, 10, -10, 87.5, -87.5, 88.7, -103.9,
                                   700, -700, 707.9, -707.9, 708, -708, 708.5, 709.78, 709.8, 710, 711, -708.5, -744.4,
                                   -745.2, -746, -800, 1e10, -1e10};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++, n++) check_exp(edges[i], &wide);
    for (int i = 0; i < 300000; i++, n++) {
        double u = (double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1;
        int k = (int)(er_test_rand(&st) % 4);
        double x = k == 0 ? u * 0.4 : k == 1 ? u * 20 : k == 2 ? u * 720 : ldexp(u, -(int)(er_test_rand(&st) % 60));
        check_exp(x, &wide);
    }
    /* the binades around k ln2 (the reduction's worst t) */
    for (int k = -1021; k <= 1021; k += 7, n += 2) {
        check_exp(k * 0.6931471805599453 + 0.3465735902799726, &wide);
        check_exp(k * 0.6931471805599453 - 0.3465735902799726, &wide);
    }
    double lo, hi;
    /* over an interval, narrow (one evaluation and the derivative bound) or not: both ends enclosed */
    for (int i = 0; i < 20000; i++) {
        double a = urand_(&st) * 80, w = ldexp(1.0, -(int)(er_test_rand(&st) % 60)), b = a + w * (i % 2 ? 1 : 1e-3);
        mpfr_t ya, yb;
        mpfr_inits2(200, ya, yb, (mpfr_ptr)0);
        er_ops_exp_iv(a, b, &lo, &hi);
        mpfr_set_d(ya, a, MPFR_RNDN);
        mpfr_exp(ya, ya, MPFR_RNDN);
        mpfr_set_d(yb, b, MPFR_RNDN);
        mpfr_exp(yb, yb, MPFR_RNDN);
        ck_assert_msg(mpfr_cmp_d(ya, lo) >= 0 && mpfr_cmp_d(yb, hi) <= 0, "exp over [%a, %a]: [%a, %a]", a, b, lo, hi);
        mpfr_clears(ya, yb, (mpfr_ptr)0);
    }
    er_ops_exp(INFINITY, &lo, &hi);
    ck_assert(lo == INFINITY && hi == INFINITY);
    er_ops_exp(-INFINITY, &lo, &hi);
    ck_assert(lo == 0 && hi == 0);
    er_ops_exp(NAN, &lo, &hi);
    ck_assert(isnan(lo) && isnan(hi));
    printf("ops exp: %ld points enclosed, %ld wider than 2^-43\n", n, wide);
    ck_assert_int_eq(wide, 0);
}
END_TEST

START_TEST(reduction_constants)
{
    /* ln2 = LN2_HI + LN2_LO + d, |d| < 2^-80; LN2_HI has 21 trailing zero bits; INV_LN2 near 1/ln2 */
    double hi = 0x1.62e42feep-1, lo = 0x1.a39ef35793c76p-33;
    mpfr_t l, s;
    mpfr_inits2(300, l, s, (mpfr_ptr)0);
    mpfr_const_log2(l, MPFR_RNDN);
    mpfr_sub_d(s, l, hi, MPFR_RNDN);
    mpfr_sub_d(s, s, lo, MPFR_RNDN);
    mpfr_abs(s, s, MPFR_RNDN);
    ck_assert(mpfr_cmp_d(s, 0x1p-80) < 0);
    uint64_t b;
    memcpy(&b, &hi, 8);
    ck_assert_int_eq(b & ((1u << 21) - 1), 0);
    /* the Taylor coefficients are 1/i! rounded to nearest */
    mpfr_clears(l, s, (mpfr_ptr)0);
}
END_TEST

START_TEST(mp_decides_as_mpfr_rounds)
{
    uint64_t st = er_test_seed("ops_mp");
    for (int i = 0; i < 2000; i++) {
        double x = ((double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1) * 50;
        er_ops_mp *m = er_ops_mp_new(160, 2);
        er_ops_mp_set_d(m, 0, x);
        er_ops_mp_exp(m, 1, 0);
        uint64_t bits, want;
        double lo, hi;
        ck_assert(er_ops_mp_decide(m, 1, ER_FMT_F32, &bits));
        er_ops_mp_get(m, 1, &lo, &hi);
        mpfr_t y;
        mpfr_init2(y, 300);
        mpfr_set_d(y, x, MPFR_RNDN);
        mpfr_exp(y, y, MPFR_RNDN);
        float f = mpfr_get_flt(y, MPFR_RNDN);
        uint32_t fb;
        memcpy(&fb, &f, 4);
        want = fb;
        ck_assert_msg(bits == want, "exp(%a): 0x%llx, MPFR 0x%llx", x, (unsigned long long)bits, (unsigned long long)want);
        ck_assert(mpfr_cmp_d(y, lo) >= 0 && mpfr_cmp_d(y, hi) <= 0);
        ck_assert(er_ops_mp_decide(m, 1, ER_FMT_F64, &bits));
        double d = mpfr_get_d(y, MPFR_RNDN);
        ck_assert(memcmp(&bits, &d, 8) == 0);
        mpfr_clear(y);
        er_ops_mp_free(m);
    }
}
END_TEST

START_TEST(decide_and_lib_results)
{
    uint64_t b;
    /* 1 and 1 + 2^-30 round to the same f32; 1 and 1 + 2^-23 do not */
    ck_assert(er_ops_decide(ER_FMT_F32, 1.0, 1.0 + 0x1p-30, &b) && b == 0x3F800000u);
    ck_assert(!er_ops_decide(ER_FMT_F32, 1.0, 1.0 + 0x1p-23, &b));
    /* a straddled midpoint is undecided */
    ck_assert(!er_ops_decide(ER_FMT_BF16, 1.0 + 0x1p-8 - 0x1p-30, 1.0 + 0x1p-8 + 0x1p-30, &b));
    er_tol_opts o;
    er_tol_opts_init(&o);
    er_openv env;
    memset(&env, 0, sizeof env);
    env.o = &o;
    env.compute = ER_FMT_F32;
    env.p = 24;
    env.u = 0x1p-24;
    env.eta = 0x1p-149;
    env.tiny = 0x1p-126;
    ck_assert(er_ops_ulps(&env, "exp") == 2.5); /* the documented default of expf (2 + 0.5) */
    o.ulps = 3;
    ck_assert(er_ops_ulps(&env, "exp") == 3);
    double lo = 1.0, hi = 1.0;
    er_ops_lib_result(&env, 2, &lo, &hi);
    /* 2 ulps of f32 at 1: 2 * 2^-23 each way at most (the bound takes 2u|v|) */
    ck_assert(lo <= 1 - 0x1p-22 && lo >= 1 - 0x1p-22 - 0x1p-50);
    ck_assert(hi >= 1 + 0x1p-22 && hi <= 1 + 0x1p-22 + 0x1p-50);
    lo = hi = 0x1p-140;
    env.ftz = 1;
    er_ops_lib_result(&env, 1, &lo, &hi);
    ck_assert(lo == 0);
}
END_TEST

/* a random binary64 around the formats' ranges: exponents from -160 to 140, random significand bits,
 * some with the low bits cleared (ties and exact values of the narrow formats) */
static double fast_rand_value(uint64_t *st)
{
    uint64_t r = er_test_rand(st), m = er_test_rand(st) & 0xFFFFFFFFFFFFFull;
    int e = (int)(r % 301) - 160;
    if ((r >> 20) % 4 == 0) m &= ~((1ull << (r >> 24) % 52) - 1); /* short significands: ties, exact values */
    double x = ldexp(1.0 + (double)m * 0x1p-52, e);
    return ((r >> 40) & 1) ? -x : x;
}

/* op_fast.c's rounding, values and finish against the format library's converter and core's finish */
START_TEST(fast_paths_as_converter)
{
    uint64_t st = er_test_seed("ops_fast");
    static const int fmts[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
    static const double edges[] = {0.0, -0.0, 1.0, 0x1.fep127, 0x1.ffp127, 0x1.fefffffffffffp127, 65504.0, 65520.0,
                                   65519.999, 0x1p-126, 0x1p-133, 0x1p-134, 0x1.8p-134, 0x1p-135, 0x1p-14, 0x1p-24,
                                   0x1p-25, 0x1.8p-24, 0x1.0000000000001p-25, 0x1.ffp-127, 0x1.fffp-15, 1e300,
                                   -1e300, INFINITY, -INFINITY, NAN, 0x1.008p0, 0x1.018p0, 0x1.0080000000001p0};
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        int fmt = fmts[f];
        for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
            for (int sg = 0; sg < 2; sg++) {
                double x = sg ? -edges[k] : edges[k];
                ck_assert_msg(er_ops_rn_bits(fmt, x) == er_b_cvt(fmt, x, ER_RND_NEAREST_EVEN, 0u),
                              "format %d, %a: 0x%llx, the converter 0x%llx", fmt, x,
                              (unsigned long long)er_ops_rn_bits(fmt, x),
                              (unsigned long long)er_b_cvt(fmt, x, ER_RND_NEAREST_EVEN, 0u));
            }
        for (int k = 0; k < 400000; k++) {
            double x = fast_rand_value(&st), v, w;
            /* er_ops_round_compute's fast path: the value of the pattern, as er_round_double rounds */
            if (er_round_double(fmt, x, ER_RND_NEAREST_EVEN, &v) == ER_OK) {
                w = er_ops_bits_value(fmt, er_ops_rn_bits(fmt, x));
                ck_assert_msg(er_b_bits(v) == er_b_bits(w), "format %d, %a: rounded %a, er_round_double %a", fmt, x, w,
                              v);
            }
            ck_assert_msg(er_ops_rn_bits(fmt, x) == er_b_cvt(fmt, x, ER_RND_NEAREST_EVEN, 0u),
                          "format %d, %a: 0x%llx, the converter 0x%llx", fmt, x,
                          (unsigned long long)er_ops_rn_bits(fmt, x),
                          (unsigned long long)er_b_cvt(fmt, x, ER_RND_NEAREST_EVEN, 0u));
        }
        if (fmt != ER_FMT_F32)
            for (uint64_t b = 0; b < 65536; b++) {
                double a = er_ops_bits_value(fmt, b), c = er_b_value(fmt, b);
                ck_assert_msg((a != a && c != c) || er_b_bits(a) == er_b_bits(c), "format %d, 0x%llx: %a, %a", fmt,
                              (unsigned long long)b, a, c);
            }
        /* one element's finish: field for field as core's, also outside the fast case */
        er_bpar c;
        memset(&c, 0, sizeof c);
        c.out_fmt = fmt;
        c.dir = ER_RND_NEAREST_EVEN;
        c.opts = 0u;
        c.max_c = fmt == ER_FMT_F16 ? 65504.0 : 0x1.fffffep127;
        c.maxo = fmt == ER_FMT_BF16 ? 0x1.fep127 : c.max_c;
        for (int k = 0; k < 200000; k++) {
            double a = fast_rand_value(&st), b = fast_rand_value(&st), lo = a < b ? a : b, hi = a < b ? b : a;
            uint64_t sel = er_test_rand(&st);
            if (sel % 3 == 0) hi = lo * (1 + 0x1p-10);
            if (sel % 17 == 1) hi = INFINITY;
            if (sel % 19 == 2) lo = -1e39;
            uint64_t rb = er_ops_rn_bits(fmt, (sel >> 8) % 2 ? lo : hi);
            double rad = (sel >> 12) % 23 == 0 ? INFINITY : fabs(hi - lo);
            int nf = (sel >> 20) % 29 == 0, un = nf && (sel >> 30) % 2;
            er_bel x, y;
            er_ops_finish_fast(&c, rb, lo, hi, rad, nf, un, &x);
            er_b_finish_lh(&c, rb, lo, hi, rad, nf, un, 0, 0, &y);
            ck_assert_msg(x.low == y.low && x.high == y.high && x.flags == y.flags &&
                              er_b_bits(x.radius) == er_b_bits(y.radius) &&
                              (er_b_bits(x.tolerance) == er_b_bits(y.tolerance) ||
                               (x.tolerance != x.tolerance && y.tolerance != y.tolerance)),
                          "format %d, [%a, %a] rad %a: finish differs", fmt, lo, hi, rad);
        }
    }
}
END_TEST

/* er_ops_tanh_fast (op_fast.c) encloses MPFR's tanh (200 bits) and is narrow: relative 2^-30 */
START_TEST(tanh_fast_encloses_mpfr)
{
    uint64_t st = er_test_seed("ops_tanh_fast");
    static const double edges[] = {0.0, -0.0, 0x1p-1074, 0x1p-501, 0x1p-499, 0x1p-11, 0x1.fffffffffffffp-11, 0x1p-10,
                                   0x1.0000000000001p-10, 0.5, 1, 19.999, 20, 20.0000001, 30, 400, 710, 1e300, INFINITY};
    mpfr_t y;
    mpfr_init2(y, 200);
    long wide = 0, n = 0;
    for (int k = -(int)(2 * sizeof edges / sizeof edges[0]); k < 300000; k++, n++) {
        double x;
        if (k < 0) {
            int i = -k - 1;
            x = (i & 1) ? -edges[i / 2] : edges[i / 2];
        } else {
            x = ldexp(urand_(&st), (int)(er_test_rand(&st) % 40) - 30);
        }
        double lo, hi;
        er_ops_tanh_fast(x, &lo, &hi);
        mpfr_set_d(y, x, MPFR_RNDN);
        mpfr_tanh(y, y, MPFR_RNDN);
        ck_assert_msg(lo <= hi, "tanh(%a): [%a, %a]", x, lo, hi);
        ck_assert_msg(mpfr_cmp_d(y, lo) >= 0, "tanh(%a) below lo %a", x, lo);
        ck_assert_msg(mpfr_cmp_d(y, hi) <= 0, "tanh(%a) above hi %a", x, hi);
        if (fabs(x) >= 0x1p-900 && !(hi - lo <= 0x1p-30 * fabs(lo))) wide++; /* above the subnormals */
    }
    mpfr_clear(y);
    printf("tanh_fast: %ld of %ld enclosures wider than 2^-30 relative\n", wide, n);
    ck_assert_msg(wide == 0, "%ld wide enclosures", wide);
}
END_TEST

/* er_ops_erf_fast (op_math_erf.c) encloses MPFR's erf (200 bits) and is narrow: relative 2^-30; its
 * constant 2/sqrt(pi) lies between the two binary64 values the proof uses */
START_TEST(erf_fast_encloses_mpfr)
{
    uint64_t st = er_test_seed("ops_erf_fast");
    static const double edges[] = {0.0, -0.0, 0x1p-1074, 0x1p-301, 0x1p-300, 0x1p-299, 0x1p-30, 0.5, 1, 2,
                                   0x1.7ffffffffffffp1, 3, 5.999999, 0x1.7ffffffffffffp2, 6, 6.0000001, 30, 1e300,
                                   INFINITY};
    mpfr_t y, c;
    mpfr_init2(y, 200);
    mpfr_init2(c, 200);
    mpfr_const_pi(c, MPFR_RNDN);
    mpfr_sqrt(c, c, MPFR_RNDN);
    mpfr_ui_div(c, 2, c, MPFR_RNDN);
    ck_assert(mpfr_cmp_d(c, 0x1.20dd750429b6dp+0) > 0 && mpfr_cmp_d(c, 0x1.20dd750429b6ep+0) < 0);
    long wide = 0, n = 0;
    for (int k = -(int)(2 * sizeof edges / sizeof edges[0]); k < 300000; k++, n++) {
        double x;
        if (k < 0) {
            int i = -k - 1;
            x = (i & 1) ? -edges[i / 2] : edges[i / 2];
        } else if (k % 3 == 0) {
            x = urand_(&st) * 7; /* the series' whole range and a little beyond */
        } else {
            x = ldexp(urand_(&st), (int)(er_test_rand(&st) % 40) - 30);
        }
        double lo, hi;
        er_ops_erf_fast(x, &lo, &hi);
        mpfr_set_d(y, x, MPFR_RNDN);
        mpfr_erf(y, y, MPFR_RNDN);
        ck_assert_msg(lo <= hi, "erf(%a): [%a, %a]", x, lo, hi);
        ck_assert_msg(mpfr_cmp_d(y, lo) >= 0, "erf(%a) below lo %a", x, lo);
        ck_assert_msg(mpfr_cmp_d(y, hi) <= 0, "erf(%a) above hi %a", x, hi);
        if (fabs(x) >= 0x1p-900 && !(hi - lo <= 0x1p-30 * fabs(lo))) wide++; /* above the subnormals */
    }
    mpfr_clear(y);
    mpfr_clear(c);
    printf("erf_fast: %ld of %ld enclosures wider than 2^-30 relative\n", wide, n);
    ck_assert_msg(wide == 0, "%ld wide enclosures", wide);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ops_math");
    TCase *tc = tcase_create("ops_math");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, exp_encloses_mpfr);
    tcase_add_test(tc, reduction_constants);
    tcase_add_test(tc, mp_decides_as_mpfr_rounds);
    tcase_add_test(tc, decide_and_lib_results);
    tcase_add_test(tc, fast_paths_as_converter);
    tcase_add_test(tc, tanh_fast_encloses_mpfr);
    tcase_add_test(tc, erf_fast_encloses_mpfr);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
