/*
 * test_random.c (engine_random): er_mma on random small problems against the MPFR reference (eng_ref.c).
 *
 *  - random_pairs: EVERY ordered pair of the 13 float formats (a, b), four problems each: m, n in 1..9,
 *    k in 0..70, C absent or in a random float format; inputs uniform random patterns, exponents in a
 *    narrow band (random or near 1), values near 1 with one fraction bit (sums that cancel), or small
 *    integers (which the engine may sum exactly in binary64: stats.exact_f64), and in
 *    one problem of six 10% special values (NaN of any payload and sign, inf, zeros, max, least
 *    subnormal).  Each problem is rounded into 3 random output formats in all 6 directions (options:
 *    none, saturate, flush-to-zero of results, or both), once with strategy AUTO and once with EXACT,
 *    with 1 thread or (now and then) 2, 3 or 7; plus once with the enclosures lo/hi/odd.  Every
 *    element's pattern must equal the reference's.
 *  - random_scaled: every pair of the 5 element formats x both scale formats, two problems each, with a
 *    random block size V in {1, 2, 3, 4, 16, 32} (partial last blocks), random scales including 2^-127,
 *    2^127, NaN, and for f8E4M3FN scales negative and zero ones; same checks.
 * The seed is printed; set EXACTREF_SEED to change it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eng_ref.h"

static const int thread_set[4] = {1, 2, 3, 7};
static const unsigned opt_set[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_OUT, ER_OPT_SATURATE | ER_OPT_FTZ_OUT};

static unsigned pick_opts(uint64_t *rng)
{
    uint64_t r = rnd_below(rng, 10);
    return r < 6 ? 0u : opt_set[1 + r % 3];
}

/* Fill n patterns of format f. */
static void fill(uint64_t *dst, int64_t n, int f, uint64_t *rng, int mode, int centre, int spec)
{
    for (int64_t i = 0; i < n; i++) dst[i] = gen_pattern(rf(f), rng, mode, centre, spec);
}

/* Run every configuration of a problem; returns the mismatches. */
static long run_configs(eprob *P, uint64_t *rng, const char *ctx)
{
    long bad = 0;
    rex *ex = ref_exact_all(P);
    for (int t = 0; t < 3; t++) {
        int dfmt = float_ids[rnd_below(rng, NFLOAT)];
        for (int dir = 0; dir < ER_RND_COUNT; dir++) {
            unsigned opts = pick_opts(rng);
            for (int s = 0; s < 2; s++) {
                /* threads: 1, except in one output format of the three (creating threads costs about
                 * a millisecond per call, more than these small problems) */
                ecfg c = {dfmt, dir, opts, s ? ER_STRATEGY_EXACT : ER_STRATEGY_AUTO,
                          t == 0 && dir == (int)(rnd_below(rng, ER_RND_COUNT)) ? thread_set[1 + rnd_below(rng, 3)] : 1, 0};
                bad += eng_check(P, ex, &c, ctx);
            }
        }
    }
    ecfg c = {float_ids[rnd_below(rng, NFLOAT)], (int)rnd_below(rng, ER_RND_COUNT), pick_opts(rng),
              ER_STRATEGY_AUTO, thread_set[rnd_below(rng, 4)], 1};
    bad += eng_check(P, ex, &c, ctx);
    rex_free_all(ex, P->m * P->n);
    return bad;
}

static int64_t pick_k(uint64_t *rng)
{
    uint64_t r = rnd_below(rng, 10);
    return r == 0 ? 0 : r == 1 ? 1 : 2 + (int64_t)rnd_below(rng, 69);
}

START_TEST(random_pairs)
{
    uint64_t rng = er_test_seed("engine_random/random_pairs");
    long bad = 0, probs = 0;
    ref_init();
    for (int ia = 0; ia < NFLOAT; ia++)
        for (int ib = 0; ib < NFLOAT; ib++)
            for (int rep = 0; rep < 4; rep++) {
                eprob P;
                memset(&P, 0, sizeof P);
                P.fa = float_ids[ia];
                P.fb = float_ids[ib];
                P.fsc = -1;
                P.m = 1 + (int64_t)rnd_below(&rng, 9);
                P.n = 1 + (int64_t)rnd_below(&rng, 9);
                P.k = pick_k(&rng);
                P.fc = rnd_below(&rng, 2) ? float_ids[rnd_below(&rng, NFLOAT)] : -1;
                eprob_alloc(&P);
                const rfmt *A = rf(P.fa), *B = rf(P.fb);
                int mode = (int)rnd_below(&rng, 5), spec = rnd_below(&rng, 6) == 0 ? 10 : 0;
                int ca, cb;
                if (mode == 4) { /* integers (the engine sums small integers exactly in binary64) */
                    mode = GM_INT;
                    ca = 1 + (int)rnd_below(&rng, 8);
                    cb = 1 + (int)rnd_below(&rng, 8);
                } else if (mode == 2) { /* a band near 1 */
                    ca = A->bias + (int)rnd_below(&rng, 7) - 3;
                    cb = B->bias + (int)rnd_below(&rng, 7) - 3;
                    mode = GM_BAND;
                } else if (mode == 3) {
                    mode = GM_SMALL;
                    ca = cb = 0;
                } else {
                    ca = gen_centre(A, &rng);
                    cb = gen_centre(B, &rng);
                }
                if (ca < 0) ca = 0;
                if (cb < 0) cb = 0;
                fill(P.A, P.m * P.k, P.fa, &rng, mode, ca, spec);
                fill(P.B, P.k * P.n, P.fb, &rng, mode, cb, spec);
                if (P.fc >= 0) {
                    /* C near the products' magnitude, so that it can cancel against them */
                    const rfmt *Cf = rf(P.fc);
                    int cc = (mode == GM_BAND ? (ca - A->bias) + (cb - B->bias) : 0) + Cf->bias;
                    if (cc < 0) cc = 0;
                    if (cc > (1 << Cf->ebits) - 2) cc = (1 << Cf->ebits) - 2;
                    if (mode == GM_INT) cc = ca + cb;
                    fill(P.C, P.m * P.n, P.fc, &rng, mode == GM_UNIFORM ? GM_UNIFORM : mode, cc, spec);
                }
                eprob_pack(&P);
                bad += run_configs(&P, &rng, "random_pairs");
                probs++;
                eprob_free(&P);
            }
    printf("random_pairs: %ld problems, %ld engine calls, %ld mismatching elements\n", probs, eng_calls, bad);
    ck_assert_msg(bad == 0, "random_pairs: %ld mismatching elements (see stderr)", bad);
}
END_TEST

static uint64_t gen_scale(int sf, uint64_t *rng)
{
    uint64_t r = rnd_below(rng, 100);
    if (sf == ER_FMT_F8E8M0FNU) {
        if (r < 3) return 0x00; /* 2^-127 */
        if (r < 6) return 0xFE; /* 2^127 */
        if (r < 8) return 0xFF; /* NaN */
        return (uint64_t)(127 + (int)rnd_below(rng, 25) - 12);
    }
    if (r < 4) return 0x80 | rnd_below(rng, 0x7F); /* negative */
    if (r < 8) return r < 6 ? 0x00 : 0x80;         /* zeros */
    if (r < 10) return r < 9 ? 0x7F : 0xFF;        /* NaN */
    return rnd_below(rng, 0x7F);                   /* positive finite */
}

START_TEST(random_scaled)
{
    static const int blocks[6] = {1, 2, 3, 4, 16, 32};
    uint64_t rng = er_test_seed("engine_random/random_scaled");
    long bad = 0, probs = 0;
    ref_init();
    for (int ia = 0; ia < 5; ia++)
        for (int ib = 0; ib < 5; ib++)
            for (int is = 0; is < 2; is++)
                for (int rep = 0; rep < 2; rep++) {
                    eprob P;
                    memset(&P, 0, sizeof P);
                    P.fa = elem_ids[ia];
                    P.fb = elem_ids[ib];
                    P.fsc = is ? ER_FMT_F8E4M3FN : ER_FMT_F8E8M0FNU;
                    P.block = blocks[rnd_below(&rng, 6)];
                    P.m = 1 + (int64_t)rnd_below(&rng, 9);
                    P.n = 1 + (int64_t)rnd_below(&rng, 9);
                    P.k = pick_k(&rng);
                    P.fc = rnd_below(&rng, 2) ? float_ids[rnd_below(&rng, NFLOAT)] : -1;
                    eprob_alloc(&P);
                    int spec = rnd_below(&rng, 4) == 0 ? 8 : 0;
                    int mode = rnd_below(&rng, 2) ? GM_UNIFORM : GM_SMALL;
                    fill(P.A, P.m * P.k, P.fa, &rng, mode, 0, spec);
                    fill(P.B, P.k * P.n, P.fb, &rng, mode, 0, spec);
                    int64_t nb = eprob_nblocks(&P);
                    for (int64_t e = 0; e < P.m * nb; e++) P.SA[e] = gen_scale(P.fsc, &rng);
                    for (int64_t e = 0; e < nb * P.n; e++) P.SB[e] = gen_scale(P.fsc, &rng);
                    if (P.fc >= 0) fill(P.C, P.m * P.n, P.fc, &rng, GM_SMALL, 0, spec);
                    eprob_pack(&P);
                    bad += run_configs(&P, &rng, "random_scaled");
                    probs++;
                    eprob_free(&P);
                }
    printf("random_scaled: %ld problems, %ld mismatching elements\n", probs, bad);
    ck_assert_msg(bad == 0, "random_scaled: %ld mismatching elements (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_random");
    TCase *tc = tcase_create("random");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, random_pairs);
    tcase_add_test(tc, random_scaled);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
