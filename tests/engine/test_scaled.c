/*
 * test_scaled.c (engine_scaled): block-scaled er_mma, term p = (A[i][p] sa[i][p/V]) (B[p][j] sb[p/V][j]),
 * against the MPFR reference (eng_ref.c), every output format, every direction.
 *
 *  - e8m0_extremes: scales 2^-127 (0x00), 2^127 (0xFE) and NaN (0xFF) in chosen rows/columns/blocks:
 *    results far below and far above every narrow format; a NaN scale makes exactly the elements whose
 *    row or column uses it NaN (checked by hand too: canonical NaN in f32), even with zero elements.
 *  - nvfp4: f4E2M1FN elements, f8E4M3FN scales, V = 16, k = 71 (a partial last block), with C; also
 *    negative, zero and NaN f8E4M3FN scales.
 *  - mxfp: MXFP8 (f8E4M3FN x f8E5M2 and f8E4M3FN x f8E4M3FN), MXFP6 and MXFP4 with f8E8M0FNU scales,
 *    V = 32, k = 101.
 *  - ue5m3: f4E2M1FN elements, f8E5M3FNU (UE5M3) scales, V = 16, k = 53 (a partial last block), with
 *    C; subnormal, zero, largest and NaN scales in rep 2.
 *  - unit_scales: all scales 1 (0x7F in f8E8M0FNU, 0x38 in f8E4M3FN) give the same bits as the
 *    unscaled product, for every pair of element formats.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eng_ref.h"

static const unsigned opts3[3] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_OUT};

static long run_all(eprob *P, const int *outs, int nouts, int nopt, const char *ctx)
{
    long bad = 0;
    eprob_pack(P);
    rex *ex = ref_exact_all(P);
    for (int o = 0; o < nouts; o++)
        for (int dir = 0; dir < ER_RND_COUNT; dir++)
            for (int q = 0; q < nopt; q++) {
                ecfg c1 = {outs[o], dir, opts3[q], ER_STRATEGY_AUTO, 1, 0};
                ecfg c2 = {outs[o], dir, opts3[q], ER_STRATEGY_EXACT, 1, 0};
                bad += eng_check(P, ex, &c1, ctx);
                bad += eng_check(P, ex, &c2, ctx);
            }
    ecfg ce = {outs[0], ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_AUTO, 3, 1};
    bad += eng_check(P, ex, &ce, ctx);
    rex_free_all(ex, P->m * P->n);
    return bad;
}

static void setup(eprob *P, int fa, int fb, int fsc, int block, int64_t m, int64_t n, int64_t k, int fc)
{
    memset(P, 0, sizeof *P);
    P->fa = fa;
    P->fb = fb;
    P->fsc = fsc;
    P->block = block;
    P->m = m;
    P->n = n;
    P->k = k;
    P->fc = fc;
    eprob_alloc(P);
}

START_TEST(e8m0_extremes)
{
    uint64_t rng = er_test_seed("engine_scaled/e8m0_extremes");
    long bad = 0;
    ref_init();
    for (int ea = 0; ea < 5; ea++)
        for (int eb = 0; eb < 5; eb += 2) {
            eprob P;
            setup(&P, elem_ids[ea], elem_ids[eb], ER_FMT_F8E8M0FNU, 32, 4, 4, 64, -1);
            for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_UNIFORM, 0, 0);
            for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, GM_UNIFORM, 0, 0);
            P.A[2 * P.k + 3] = 0; /* a zero element in the NaN-scaled block: still NaN */
            static const uint64_t sa[4][2] = {{0x00, 0x7F}, {0xFE, 0xFE}, {0xFF, 0x7F}, {0x7F, 0x7F}};
            static const uint64_t sb[2][4] = {{0x00, 0xFE, 0x7F, 0x7F}, {0x00, 0x7F, 0xFF, 0x7F}};
            for (int i = 0; i < 4; i++)
                for (int b = 0; b < 2; b++) P.SA[i * 2 + b] = sa[i][b];
            for (int b = 0; b < 2; b++)
                for (int j = 0; j < 4; j++) P.SB[b * 4 + j] = sb[b][j];
            char ctx[96];
            snprintf(ctx, sizeof ctx, "e8m0_extremes %s x %s", rf(P.fa)->name, rf(P.fb)->name);
            bad += run_all(&P, float_ids, NFLOAT, 2, ctx);
            /* by hand: row 2 and column 2 are NaN, (3, 3) is not */
            ecfg c = {ER_FMT_F32, ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_AUTO, 2, 0};
            eout o;
            eout_alloc(&o, &P);
            eng_run(&P, &c, &o);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    int want_nan = i == 2 || j == 2;
                    int is_nan = o.D[i * 4 + j] == 0x7FC00000u;
                    if (want_nan != is_nan) {
                        fprintf(stderr, "MISMATCH [%s]: element (%d,%d) is 0x%llx; NaN scale %s\n", ctx, i, j,
                                (unsigned long long)o.D[i * 4 + j], want_nan ? "in its row or column" : "not used");
                        bad++;
                    }
                }
            eout_free(&o);
            eprob_free(&P);
        }
    ck_assert_msg(bad == 0, "e8m0_extremes: %ld mismatching elements (see stderr)", bad);
}
END_TEST

START_TEST(nvfp4)
{
    uint64_t rng = er_test_seed("engine_scaled/nvfp4");
    long bad = 0;
    ref_init();
    static const int outs[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F4E2M1FN};
    for (int rep = 0; rep < 3; rep++) {
        eprob P;
        setup(&P, ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN, ER_FMT_F8E4M3FN, 16, 8, 8, 71, rep == 1 ? ER_FMT_F32 : -1);
        for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = rnd_below(&rng, 16);
        for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = rnd_below(&rng, 16);
        int64_t nb = eprob_nblocks(&P);
        /* positive finite f8E4M3FN scales (0x01..0x7E); in rep 2 also negative, zero and NaN ones */
        for (int64_t e = 0; e < P.m * nb; e++) P.SA[e] = 1 + rnd_below(&rng, 0x7E);
        for (int64_t e = 0; e < nb * P.n; e++) P.SB[e] = 1 + rnd_below(&rng, 0x7E);
        if (rep == 2) {
            P.SA[0] = 0x80 | P.SA[0]; /* negative */
            P.SA[nb + 1] = 0x00;      /* +0 */
            P.SB[2] = 0x80;           /* -0 */
            P.SB[nb * P.n - 1] = 0x7F; /* NaN: column n-1, last block */
        }
        if (P.fc >= 0)
            for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_BAND, 127, 0);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "nvfp4 rep %d", rep);
        bad += run_all(&P, outs, 4, 3, ctx);
        eprob_free(&P);
    }
    ck_assert_msg(bad == 0, "nvfp4: %ld mismatching elements (see stderr)", bad);
}
END_TEST

START_TEST(ue5m3)
{
    uint64_t rng = er_test_seed("engine_scaled/ue5m3");
    long bad = 0;
    ref_init();
    static const int outs[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F8E5M3FNU, ER_FMT_F4E2M1FN};
    for (int rep = 0; rep < 3; rep++) {
        eprob P;
        setup(&P, ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN, ER_FMT_F8E5M3FNU, 16, 7, 6, 53, rep == 1 ? ER_FMT_F32 : -1);
        for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = rnd_below(&rng, 16);
        for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = rnd_below(&rng, 16);
        int64_t nb = eprob_nblocks(&P);
        /* finite scales 2^-8 .. 2^8 and more (0x38 .. 0xBF) */
        for (int64_t e = 0; e < P.m * nb; e++) P.SA[e] = 0x38 + rnd_below(&rng, 0x88);
        for (int64_t e = 0; e < nb * P.n; e++) P.SB[e] = 0x38 + rnd_below(&rng, 0x88);
        if (rep == 2) {
            P.SA[0] = 0x01;            /* the least subnormal, 2^-17 */
            P.SA[nb + 1] = 0x00;       /* zero */
            P.SB[1] = 0xFE;            /* the largest, 114688 */
            P.SB[2] = 0x07;            /* the largest subnormal */
            P.SB[nb * P.n - 1] = 0xFF; /* NaN: column n-1, last block */
        }
        if (P.fc >= 0)
            for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_BAND, 127, 0);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "ue5m3 rep %d", rep);
        bad += run_all(&P, outs, 4, 3, ctx);
        eprob_free(&P);
    }
    ck_assert_msg(bad == 0, "ue5m3: %ld mismatching elements (see stderr)", bad);
}
END_TEST

START_TEST(mxfp)
{
    uint64_t rng = er_test_seed("engine_scaled/mxfp");
    long bad = 0;
    ref_init();
    static const int pairs[5][2] = {{ER_FMT_F8E4M3FN, ER_FMT_F8E5M2},   {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN},
                                    {ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN}, {ER_FMT_F6E3M2FN, ER_FMT_F6E3M2FN},
                                    {ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN}};
    static const int outs[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F64};
    for (int pi = 0; pi < 5; pi++) {
        eprob P;
        setup(&P, pairs[pi][0], pairs[pi][1], ER_FMT_F8E8M0FNU, 32, 6, 5, 101, pi == 0 ? ER_FMT_BF16 : -1);
        for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_UNIFORM, 0, 1);
        for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, GM_UNIFORM, 0, 1);
        int64_t nb = eprob_nblocks(&P);
        for (int64_t e = 0; e < P.m * nb; e++) P.SA[e] = 107 + rnd_below(&rng, 40);
        for (int64_t e = 0; e < nb * P.n; e++) P.SB[e] = 107 + rnd_below(&rng, 40);
        if (P.fc >= 0)
            for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_BAND, 127, 0);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "mxfp %s x %s", rf(P.fa)->name, rf(P.fb)->name);
        bad += run_all(&P, outs, 4, 2, ctx);
        eprob_free(&P);
    }
    ck_assert_msg(bad == 0, "mxfp: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/* Pack patterns of a format into its storage (one byte each: every element and scale format). */
static void *bytes_of(const uint64_t *src, int64_t n)
{
    unsigned char *p = (unsigned char *)malloc((size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) p[i] = (unsigned char)src[i];
    return p;
}

START_TEST(unit_scales)
{
    uint64_t rng = er_test_seed("engine_scaled/unit_scales");
    long bad = 0;
    ref_init();
    for (int ia = 0; ia < 5; ia++)
        for (int ib = 0; ib < 5; ib++)
            for (int sf = 0; sf < 2; sf++) {
                int fsc = sf ? ER_FMT_F8E4M3FN : ER_FMT_F8E8M0FNU;
                uint64_t one = sf ? 0x38 : 0x7F;
                int64_t m = 5, n = 4, k = 37, blk = 8, nb = (k + blk - 1) / blk;
                uint64_t A[5 * 37], B[37 * 4], SA[5 * 5], SB[5 * 4];
                for (int64_t e = 0; e < m * k; e++) A[e] = gen_pattern(rf(elem_ids[ia]), &rng, GM_UNIFORM, 0, 3);
                for (int64_t e = 0; e < k * n; e++) B[e] = gen_pattern(rf(elem_ids[ib]), &rng, GM_UNIFORM, 0, 3);
                for (int64_t e = 0; e < m * nb; e++) SA[e] = one;
                for (int64_t e = 0; e < nb * n; e++) SB[e] = one;
                void *pa = bytes_of(A, m * k), *pb = bytes_of(B, k * n), *psa = bytes_of(SA, m * nb),
                     *psb = bytes_of(SB, nb * n);
                for (int d = 0; d < ER_RND_COUNT; d++) {
                    int dfmt = float_ids[rnd_below(&rng, NFLOAT)];
                    uint32_t d1[20], d2[20]; /* f64 excluded below: 4 bytes at most */
                    if (rf(dfmt)->bytes > 4) dfmt = ER_FMT_F32;
                    memset(d1, 0x11, sizeof d1);
                    memset(d2, 0x22, sizeof d2);
                    er_tensor ta = er_tensor_2d(elem_ids[ia], m, k, pa), tb = er_tensor_2d(elem_ids[ib], k, n, pb);
                    er_tensor tsa = er_tensor_2d(fsc, m, nb, psa), tsb = er_tensor_2d(fsc, nb, n, psb);
                    er_tensor td1 = er_tensor_2d(dfmt, m, n, d1), td2 = er_tensor_2d(dfmt, m, n, d2);
                    er_mma_args x, y;
                    er_mma_args_init(&x);
                    x.a = &ta;
                    x.b = &tb;
                    x.d = &td1;
                    x.rounding = d;
                    x.threads = 1;
                    y = x;
                    y.d = &td2;
                    y.a_scale = &tsa;
                    y.b_scale = &tsb;
                    y.block = (int)blk;
                    y.strategy = d % 2 ? ER_STRATEGY_EXACT : ER_STRATEGY_AUTO;
                    int s1 = er_mma(&x), s2 = er_mma(&y);
                    size_t sz = (size_t)(m * n) * (size_t)rf(dfmt)->bytes;
                    if (s1 != ER_OK || s2 != ER_OK || memcmp(d1, d2, sz) != 0) {
                        fprintf(stderr, "MISMATCH [unit_scales %s x %s, scales %s, d %s %s]: scaled by 1 differs "
                                        "from unscaled (status %d %d)\n",
                                rf(elem_ids[ia])->name, rf(elem_ids[ib])->name, rf(fsc)->name, rf(dfmt)->name,
                                er_rounding_name(d), s1, s2);
                        bad++;
                    }
                }
                free(pa); free(pb); free(psa); free(psb);
            }
    ck_assert_msg(bad == 0, "unit_scales: %ld disagreements (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_scaled");
    TCase *tc = tcase_create("scaled");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, e8m0_extremes);
    tcase_add_test(tc, nvfp4);
    tcase_add_test(tc, ue5m3);
    tcase_add_test(tc, mxfp);
    tcase_add_test(tc, unit_scales);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
