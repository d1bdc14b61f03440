/*
 * test_convert.c (mpfr_convert): er_convert against the MPFR oracle, exhaustively.
 *
 *  - exhaustive: every ordered pair (from, to) of the 18 formats with `from` at most 16 bits wide,
 *    every pattern of `from`, every direction nearest_even .. odd, no options.  Also checks that
 *    er_convert_bits (the public entry point) returns the same pattern and flags.
 *  - options_small: every pattern of every source of at most 8 bits, into every format, every
 *    direction, with ER_OPT_SATURATE, ER_OPT_FTZ, both, and FTZ_IN and FTZ_OUT alone.
 *  - options_16: every pattern of the 16-bit sources (f16, bf16, i16) into every format, every
 *    direction, with ER_OPT_SATURATE and with ER_OPT_FTZ.
 */
#include <check.h>

#include "of_oracle.h"
#include "exactref/core/er_round.h"

/* The sources of at most 16 bits, in the order the loop test walks them. */
static const int small_src[] = {ER_FMT_F16,        ER_FMT_BF16,       ER_FMT_I16,       ER_FMT_F8E4M3FN,
                                ER_FMT_F8E5M2,     ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU,
                                ER_FMT_F8E5M3FNU,  ER_FMT_F6E2M3FN,   ER_FMT_F6E3M2FN,  ER_FMT_F4E2M1FN,
                                ER_FMT_I8,         ER_FMT_U8};
#define N_SMALL ((int)(sizeof small_src / sizeof small_src[0]))

static void report(of_tally *t)
{
    printf("%s: %ld conversions checked, %ld disagreements\n", t->test, t->checks, t->fails);
    fflush(stdout);
}

/* Every pattern of source S (index i of small_src), every target, every direction, options opts. */
static void exhaust_source(of_tally *t, const of_fmt *S, const unsigned *opts, int nopts, int also_bits)
{
    of_val x;
    of_exp e;
    uint64_t b, n = UINT64_C(1) << S->width;
    int ti, dir, o;
    of_val_init(&x);
    of_exp_init(&e);
    for (b = 0; b < n; b++) {
        of_decode(S, b, &x);
        for (ti = 0; ti < OF_NFMT; ti++) {
            const of_fmt *T = &of_fmts[ti];
            for (o = 0; o < nopts; o++)
                for (dir = 0; dir < ER_RND_COUNT; dir++)
                    of_run_one(t, S, b, &x, T, dir, opts[o], &e);
            if (also_bits) {
                /* The public scalar entry point gives the same answer as the core. */
                for (dir = 0; dir < ER_RND_COUNT; dir++) {
                    er_res r = er_convert(S->id, T->id, b, dir, 0);
                    uint64_t out = ~UINT64_C(0);
                    unsigned fl = ~0u;
                    er_status st = er_convert_bits(S->id, T->id, b, dir, 0, &out, &fl);
                    t->checks++;
                    if (st != ER_OK || out != r.bits || fl != r.flags) {
                        if (t->fails < t->show)
                            printf("%s: er_convert_bits(%s, %s, 0x%llx, %s) = %d, 0x%llx, 0x%x; "
                                   "er_convert gives 0x%llx, 0x%x\n",
                                   t->test, S->name, T->name, (unsigned long long)b, of_dir_name(dir), st,
                                   (unsigned long long)out, fl, (unsigned long long)r.bits, r.flags);
                        t->fails++;
                    }
                }
            }
        }
    }
    of_val_clear(&x);
    of_exp_clear(&e);
}

START_TEST(test_exhaustive)
{
    const of_fmt *S = of_get(small_src[_i]);
    static const unsigned none[1] = {0u};
    char name[64];
    of_tally t = {0, 0, 0, 0};
    t.show = of_show();
    snprintf(name, sizeof name, "exhaustive[%s]", S->name);
    t.test = name;
    exhaust_source(&t, S, none, 1, 1);
    report(&t);
    ck_assert_msg(t.fails == 0, "%s: %ld of %ld conversions disagree with the MPFR oracle", name, t.fails,
                  t.checks);
}
END_TEST

START_TEST(test_options_small)
{
    static const unsigned opts[5] = {ER_OPT_SATURATE, ER_OPT_FTZ, ER_OPT_SATURATE | ER_OPT_FTZ, ER_OPT_FTZ_IN,
                                     ER_OPT_FTZ_OUT};
    of_tally t = {"options_small", 0, 0, 0};
    t.show = of_show();
    int i;
    for (i = 0; i < N_SMALL; i++) {
        const of_fmt *S = of_get(small_src[i]);
        if (S->width <= 8)
            exhaust_source(&t, S, opts, 5, 0);
    }
    report(&t);
    ck_assert_msg(t.fails == 0, "options_small: %ld of %ld conversions disagree with the MPFR oracle", t.fails,
                  t.checks);
}
END_TEST

START_TEST(test_options_16)
{
    static const unsigned opts[2] = {ER_OPT_SATURATE, ER_OPT_FTZ};
    static const int src16[3] = {ER_FMT_F16, ER_FMT_BF16, ER_FMT_I16};
    of_tally t = {"options_16", 0, 0, 0};
    t.show = of_show();
    int k;
    for (k = 0; k < 3; k++)
        exhaust_source(&t, of_get(src16[k]), opts, 2, 0);
    report(&t);
    ck_assert_msg(t.fails == 0, "options_16: %ld of %ld conversions disagree with the MPFR oracle", t.fails,
                  t.checks);
}
END_TEST

static void uf_report(void)
{
    printf("underflow gray zone (tiny before rounding, inexact, rounded to +-2^emin; not asserted): %ld "
           "conversions; the core raised underflow in %ld; IEEE 754 tininess-after-rounding says underflow in "
           "%ld; core and after-rounding differ in %ld\n",
           of_uf_gray, of_uf_gray_core, of_uf_gray_after, of_uf_gray_core_vs_after);
}

int main(void)
{
    Suite *s = suite_create("mpfr_convert");
    TCase *tc;
    SRunner *sr;
    int nf;
    of_init();
    tc = tcase_create("exhaustive");
    tcase_set_timeout(tc, 1800);
    tcase_add_loop_test(tc, test_exhaustive, 0, N_SMALL);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, test_options_small);
    tcase_add_test(tc, test_options_16);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    uf_report();
    srunner_free(sr);
    of_fini();
    return nf ? 1 : 0;
}
