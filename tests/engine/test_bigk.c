/*
 * test_bigk.c (engine_bigk): long inner dimensions on small m x n, against the MPFR reference.
 *
 *  - bf16_2x2: bf16 2 x 2 with k = 2^20 + 3: row 0 random values near 1, row 1 pairs x, -x over the
 *    whole k (massive cancellation) plus three small terms; several outputs and directions, AUTO
 *    (2 threads) and EXACT.  Reference: the MPFR sum of eng_ref.c (each addition checked exact).
 *  - f64_1x1: f64 1 x 1 with k = 2^20 + 3: full 53-bit significands, products mostly near 1 and some
 *    anywhere in [2^-2148, 2^2046], plus cancelling pairs: the accumulator's whole window; with the
 *    enclosures.
 *  - e4m3_k2p24: f8E4M3FN 1 x 1 with k = 2^24 (the largest k accepted): all products 448 x 448 (every
 *    digit of the accumulator at its largest), then alternating +-448 x 448 ending in 1 x 1 (a result
 *    far below the terms: the error-bound fast path would decline; the data are integers, which the
 *    engine may sum exactly in binary64), then random patterns with k = 2^20 + 3.  Reference: a
 *    histogram of the (a, b) pattern pairs, summed with MPFR as count x a x b (exact).
 *  - mmai_k2p24: i8 1 x 2 with k = 2^24: (-128)(-128) 2^24 = 2^38 wraps to 0 (counted as wrapped);
 *    the alternating column stays inside.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eng_ref.h"

START_TEST(bf16_2x2)
{
    uint64_t rng = er_test_seed("engine_bigk/bf16_2x2");
    long bad = 0;
    ref_init();
    eprob P;
    memset(&P, 0, sizeof P);
    P.fa = P.fb = ER_FMT_BF16;
    P.fc = -1;
    P.fsc = -1;
    P.m = P.n = 2;
    P.k = (INT64_C(1) << 20) + 3;
    eprob_alloc(&P);
    const rfmt *T = rf(ER_FMT_BF16);
    int64_t h = (P.k - 3) / 2;
    for (int64_t p = 0; p < h; p++) {
        uint64_t x = gen_pattern(T, &rng, GM_BAND, 127, 0), y = gen_pattern(T, &rng, GM_BAND, 127 + (int)(p % 5), 0);
        P.A[p] = gen_pattern(T, &rng, GM_BAND, 127, 0);
        P.A[h + p] = gen_pattern(T, &rng, GM_BAND, 127, 0);
        P.A[P.k + p] = x;
        P.A[P.k + h + p] = x ^ 0x8000u;
        for (int64_t j = 0; j < 2; j++) {
            uint64_t yj = j ? gen_pattern(T, &rng, GM_BAND, 120, 0) : y;
            P.B[p * 2 + j] = yj;
            P.B[(h + p) * 2 + j] = yj;
        }
    }
    for (int64_t p = 2 * h; p < P.k; p++) {
        P.A[p] = gen_pattern(T, &rng, GM_BAND, 127, 0);
        P.A[P.k + p] = gen_pattern(T, &rng, GM_BAND, 100, 0);
        for (int64_t j = 0; j < 2; j++) P.B[p * 2 + j] = gen_pattern(T, &rng, GM_BAND, 90, 0);
    }
    eprob_pack(&P);
    double t0 = eng_now();
    rex *ex = ref_exact_all(&P);
    double t1 = eng_now();
    ecfg cfgs[] = {
        {ER_FMT_F32, ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_AUTO, 2, 0},
        {ER_FMT_F32, ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_EXACT, 1, 1},
        {ER_FMT_BF16, ER_RND_ZERO, 0u, ER_STRATEGY_AUTO, 2, 0},
        {ER_FMT_F16, ER_RND_NEGATIVE_INF, ER_OPT_SATURATE, ER_STRATEGY_EXACT, 2, 0},
        {ER_FMT_F8E4M3FN, ER_RND_POSITIVE_INF, 0u, ER_STRATEGY_AUTO, 1, 0},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) bad += eng_check(&P, ex, &cfgs[c], "bf16 2x2 k=2^20+3");
    printf("bf16_2x2: reference %.2f s, %zu engine calls %.2f s\n", t1 - t0, sizeof cfgs / sizeof cfgs[0], eng_now() - t1);
    rex_free_all(ex, 4);
    eprob_free(&P);
    ck_assert_msg(bad == 0, "bf16_2x2: %ld mismatching elements (see stderr)", bad);
}
END_TEST

START_TEST(f64_1x1)
{
    uint64_t rng = er_test_seed("engine_bigk/f64_1x1");
    long bad = 0;
    ref_init();
    eprob P;
    memset(&P, 0, sizeof P);
    P.fa = P.fb = ER_FMT_F64;
    P.fc = ER_FMT_F64;
    P.fsc = -1;
    P.m = P.n = 1;
    P.k = (INT64_C(1) << 20) + 3;
    eprob_alloc(&P);
    for (int64_t p = 0; p < P.k; p++) {
        uint64_t ra = er_test_rand(&rng), rb = er_test_rand(&rng);
        int64_t ea = 1 + (int64_t)rnd_below(&rng, 2046), pe; /* a's exponent field, the product's binade */
        if (rnd_below(&rng, 20) == 0) pe = -2100 + (int64_t)rnd_below(&rng, 4140);
        else pe = (int64_t)rnd_below(&rng, 81) - 40;
        int64_t eb = pe - (ea - 1023) + 1023; /* b's exponent field */
        if (eb < 0) eb = 0;                   /* subnormal b */
        if (eb > 2046) eb = 2046;
        P.A[p] = (ra & 0x800FFFFFFFFFFFFFu) | ((uint64_t)ea << 52);
        P.B[p] = (rb & 0x800FFFFFFFFFFFFFu) | ((uint64_t)eb << 52);
        if (p % 4 == 3) { /* cancel the previous product exactly */
            P.A[p] = P.A[p - 1] ^ UINT64_C(0x8000000000000000);
            P.B[p] = P.B[p - 1];
        }
    }
    P.C[0] = 0x3FF0000000000000u; /* 1 */
    eprob_pack(&P);
    double t0 = eng_now();
    rex *ex = ref_exact_all(&P);
    double t1 = eng_now();
    ecfg cfgs[] = {
        {ER_FMT_F64, ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_EXACT, 1, 1},
        {ER_FMT_F32, ER_RND_NEGATIVE_INF, 0u, ER_STRATEGY_AUTO, 1, 0},
        {ER_FMT_BF16, ER_RND_ODD, 0u, ER_STRATEGY_AUTO, 1, 0},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) bad += eng_check(&P, ex, &cfgs[c], "f64 1x1 k=2^20+3");
    printf("f64_1x1: reference %.2f s (precision %ld bits), %zu engine calls %.2f s\n", t1 - t0,
           (long)mpfr_get_prec(ex[0].v), sizeof cfgs / sizeof cfgs[0], eng_now() - t1);
    rex_free_all(ex, 1);
    eprob_free(&P);
    ck_assert_msg(bad == 0, "f64_1x1: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/* The exact sum of a 1 x 1 f8E4M3FN product of length k from a histogram of pattern pairs. */
static void hist_exact(const uint8_t *a, const uint8_t *b, int64_t k, rex *out)
{
    int64_t *cnt = (int64_t *)calloc(65536, sizeof(int64_t));
    const rfmt *T = rf(ER_FMT_F8E4M3FN);
    for (int64_t p = 0; p < k; p++) cnt[(a[p] << 8) | b[p]]++;
    int nan = 0, zpos = 0, zneg = 0, fin = 0;
    mpfr_t t;
    mpfr_init2(t, 128);
    mpfr_set_prec(out->v, 200);
    mpfr_set_zero(out->v, 1);
    for (int x = 0; x < 256; x++)
        for (int y = 0; y < 256; y++) {
            int64_t c = cnt[(x << 8) | y];
            if (!c) continue;
            rval u = ref_decode(T, (uint64_t)x), v = ref_decode(T, (uint64_t)y);
            if (u.cls == RC_NAN || v.cls == RC_NAN) { nan = 1; continue; }
            if (u.cls == RC_ZERO || v.cls == RC_ZERO) {
                if (u.sign ^ v.sign) zneg = 1; else zpos = 1;
                continue;
            }
            fin = 1;
            /* c u v: at most 25 + 4 + 4 bits */
            if (mpfr_set_ui_2exp(t, (unsigned long)c * u.sig * v.sig, u.exp + v.exp, MPFR_RNDN) != 0) abort();
            if (u.sign ^ v.sign) mpfr_neg(t, t, MPFR_RNDN);
            if (mpfr_add(out->v, out->v, t, MPFR_RNDN) != 0) abort();
        }
    mpfr_clear(t);
    free(cnt);
    if (nan) out->kind = RX_NAN;
    else if (fin && !mpfr_zero_p(out->v)) out->kind = RX_FIN;
    else if (fin || (zpos && zneg)) out->kind = RX_ZCANCEL;
    else out->kind = zneg ? RX_ZNEG : RX_ZPOS;
}

START_TEST(e4m3_k2p24)
{
    uint64_t rng = er_test_seed("engine_bigk/e4m3_k2p24");
    long bad = 0;
    ref_init();
    int64_t k = INT64_C(1) << 24;
    uint8_t *a = (uint8_t *)malloc((size_t)k), *b = (uint8_t *)malloc((size_t)k);
    for (int variant = 0; variant < 3; variant++) {
        int64_t kv = variant == 2 ? (INT64_C(1) << 20) + 3 : k; /* random data: a shorter k is enough */
        for (int64_t p = 0; p < kv; p++) {
            switch (variant) {
            case 0: a[p] = 0x7E; b[p] = 0x7E; break;                       /* 448 x 448, 2^24 times */
            case 1: a[p] = 0x7E; b[p] = p % 2 ? 0xFE : 0x7E; break;        /* +-448 x 448 */
            default:
                do a[p] = (uint8_t)er_test_rand(&rng); while ((a[p] & 0x7F) == 0x7F);
                do b[p] = (uint8_t)er_test_rand(&rng); while ((b[p] & 0x7F) == 0x7F);
            }
        }
        if (variant == 1) { a[k - 1] = 0x38; b[k - 1] = 0x38; } /* the last -448 x 448 becomes 1 x 1 */
        rex x;
        rex_init(&x);
        double t0 = eng_now();
        hist_exact(a, b, kv, &x);
        double t1 = eng_now();
        /* variant 0: EXACT into f64 with lo/hi (every digit of the accumulator at its largest);
         * variant 1: AUTO and EXACT into f32;
         * variant 2: AUTO into f32, EXACT into f64 with lo/hi */
        static const int runs[3][2][2] = {{{ER_FMT_F64, 1}, {-1, -1}}, {{ER_FMT_F32, 0}, {ER_FMT_F32, 1}},
                                          {{ER_FMT_F32, 0}, {ER_FMT_F64, 1}}};
        for (int r = 0; r < 2; r++) {
            int out = runs[variant][r][0], s = runs[variant][r][1];
            if (out < 0) continue;
            uint64_t d = 0, lo = 0, hi = 0;
            er_tensor ta = er_tensor_2d(ER_FMT_F8E4M3FN, 1, kv, a), tb = er_tensor_2d(ER_FMT_F8E4M3FN, kv, 1, b);
            er_tensor td = er_tensor_2d(out, 1, 1, &d);
            er_tensor tlo = er_tensor_2d(ER_FMT_F64, 1, 1, &lo), thi = er_tensor_2d(ER_FMT_F64, 1, 1, &hi);
            er_mma_args args;
            er_mma_stats st;
            char msg[200] = "";
            er_mma_args_init(&args);
            args.a = &ta;
            args.b = &tb;
            args.d = &td;
            if (out == ER_FMT_F64) {
                args.lo = &tlo;
                args.hi = &thi;
            }
            args.strategy = s ? ER_STRATEGY_EXACT : ER_STRATEGY_AUTO;
            args.threads = 1;
            args.stats = &st;
            args.msg = msg;
            args.msg_size = sizeof msg;
            int rs = er_mma(&args);
            uint64_t want = ref_round(rf(out), &x, ER_RND_NEAREST_EVEN, 0);
            int ok = rs == ER_OK && d == want;
            if (args.lo) {
                ok &= lo == ref_round(rf(ER_FMT_F64), &x, ER_RND_NEGATIVE_INF, 0);
                ok &= hi == ref_round(rf(ER_FMT_F64), &x, ER_RND_POSITIVE_INF, 0);
            }
            if (!ok) {
                char bx[128];
                rex_str(&x, bx, sizeof bx);
                fprintf(stderr, "MISMATCH [e4m3 k=%lld variant %d, %s, %s]: status %d %s, exact %s, expected 0x%llx, got 0x%llx\n",
                        (long long)kv, variant, rf(out)->name, s ? "EXACT" : "AUTO", rs, msg, bx, (unsigned long long)want,
                        (unsigned long long)d);
                bad++;
            }
            }
        printf("e4m3_k2p24 variant %d: reference %.2f s, engine calls %.2f s\n", variant, t1 - t0, eng_now() - t1);
        rex_clear(&x);
    }
    free(a);
    free(b);
    ck_assert_msg(bad == 0, "e4m3_k2p24: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(mmai_k2p24)
{
    printf("%s/%s\n", "engine_bigk", "mmai_k2p24");
    int64_t k = INT64_C(1) << 24;
    int8_t *a = (int8_t *)malloc((size_t)k), *b = (int8_t *)malloc((size_t)(2 * k));
    for (int64_t p = 0; p < k; p++) {
        a[p] = -128;
        b[2 * p] = -128;
        b[2 * p + 1] = p % 2 ? 127 : -128;
    }
    int32_t d[2] = {0x55555555, 0x55555555};
    er_tensor ta = er_tensor_2d(ER_FMT_I8, 1, k, a), tb = er_tensor_2d(ER_FMT_I8, k, 2, b);
    er_tensor td = er_tensor_2d(ER_FMT_I32, 1, 2, d);
    er_mma_args args;
    er_mma_stats st;
    er_mma_args_init(&args);
    args.a = &ta;
    args.b = &tb;
    args.d = &td;
    args.stats = &st;
    int r = er_mma(&args);
    /* column 0: 2^14 2^24 = 2^38 = 0 mod 2^32 (wrapped); column 1: -128 (127 - 128) 2^23 = 2^30 */
    ck_assert_msg(r == ER_OK && d[0] == 0 && d[1] == (1 << 30) && st.wrapped == 1,
                  "mmai k = 2^24: status %d, d = %d %d, wrapped %lld (expected 0, 2^30, 1)", r, d[0], d[1],
                  (long long)st.wrapped);
    free(a);
    free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_bigk");
    TCase *tc = tcase_create("bigk");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, bf16_2x2);
    tcase_add_test(tc, f64_1x1);
    tcase_add_test(tc, e4m3_k2p24);
    tcase_add_test(tc, mmai_k2p24);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
