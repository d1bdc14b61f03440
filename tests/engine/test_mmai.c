/*
 * test_mmai.c (engine_mmai): integer er_mma: i8/u8 operands (either side), optional i32 C, i32 D = the
 * exact sum wrapped modulo 2^32, stats.wrapped = the elements whose exact sum is outside the i32 range.
 * The reference is plain 64-bit integer arithmetic (|sum| < 2^24 2^16 + 2^31).
 *
 *  - random: every signedness pair, random shapes (m, n 1..13, k 0..300), random values, C absent or
 *    random (sometimes near the ends of the i32 range), strategies AUTO/EXACT, threads 1, 2, 3, 7.
 *  - boundaries: exact sums INT32_MAX, INT32_MAX + 1, INT32_MIN, INT32_MIN - 1 (wrapped or not).
 *  - wrap_by_products: sums of products alone beyond 2^31 (i8 -128 x -128, u8 255 x 255, i8 x u8
 *    negative), with the wrapped count.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eng_ref.h"

typedef struct {
    int fa, fb, has_c;
    int64_t m, n, k;
    uint8_t *A, *B;
    int32_t *C;
} iprob;

static int64_t ival(int f, uint8_t x) { return f == ER_FMT_I8 ? (int64_t)(int8_t)x : (int64_t)x; }

/* Run and compare with the 64-bit reference; returns mismatches. */
static long check_i(const iprob *P, int strategy, int threads, const char *ctx)
{
    int64_t mn = P->m * P->n;
    int32_t *D = (int32_t *)malloc(sizeof(int32_t) * (size_t)(mn ? mn : 1));
    memset(D, 0x5A, sizeof(int32_t) * (size_t)(mn ? mn : 1));
    er_tensor ta = er_tensor_2d(P->fa, P->m, P->k, P->A), tb = er_tensor_2d(P->fb, P->k, P->n, P->B);
    er_tensor tc = er_tensor_2d(ER_FMT_I32, P->m, P->n, P->C), td = er_tensor_2d(ER_FMT_I32, P->m, P->n, D);
    er_mma_args args;
    er_mma_stats st;
    char msg[200] = "";
    er_mma_args_init(&args);
    args.a = &ta;
    args.b = &tb;
    if (P->has_c) args.c = &tc;
    args.d = &td;
    args.strategy = strategy;
    args.threads = threads;
    args.stats = &st;
    args.msg = msg;
    args.msg_size = sizeof msg;
    int s = er_mma(&args);
    eng_calls++;
    long bad = 0;
    if (s != ER_OK) {
        fprintf(stderr, "MISMATCH [%s]: status %d: %s\n", ctx, s, msg);
        free(D);
        return 1;
    }
    int64_t wrapped = 0;
    for (int64_t i = 0; i < P->m; i++)
        for (int64_t j = 0; j < P->n; j++) {
            int64_t sum = P->has_c ? P->C[i * P->n + j] : 0;
            for (int64_t p = 0; p < P->k; p++) sum += ival(P->fa, P->A[i * P->k + p]) * ival(P->fb, P->B[p * P->n + j]);
            if (sum < INT32_MIN || sum > INT32_MAX) wrapped++;
            uint32_t want = (uint32_t)((uint64_t)sum & 0xFFFFFFFFu);
            uint32_t got = (uint32_t)D[i * P->n + j];
            if (want != got) {
                if (bad < 5)
                    fprintf(stderr, "MISMATCH [%s] (%lld,%lld) of %lldx%lldx%lld %s x %s%s, threads %d: exact sum %lld, "
                                    "expected 0x%08x got 0x%08x\n",
                            ctx, (long long)i, (long long)j, (long long)P->m, (long long)P->n, (long long)P->k,
                            rf(P->fa)->name, rf(P->fb)->name, P->has_c ? " + C" : "", threads, (long long)sum, want, got);
                bad++;
            }
        }
    if (st.wrapped != wrapped || st.elements != mn) {
        fprintf(stderr, "MISMATCH [%s]: stats.wrapped %lld (expected %lld), elements %lld (expected %lld)\n", ctx,
                (long long)st.wrapped, (long long)wrapped, (long long)st.elements, (long long)mn);
        bad++;
    }
    free(D);
    return bad;
}

static void ialloc(iprob *P)
{
    P->A = (uint8_t *)calloc((size_t)(P->m * P->k + 1), 1);
    P->B = (uint8_t *)calloc((size_t)(P->k * P->n + 1), 1);
    P->C = (int32_t *)calloc((size_t)(P->m * P->n + 1), sizeof(int32_t));
}

static void ifree(iprob *P)
{
    free(P->A);
    free(P->B);
    free(P->C);
}

static const int ifmts[2] = {ER_FMT_I8, ER_FMT_U8};

START_TEST(random)
{
    static const int th[4] = {1, 2, 3, 7};
    uint64_t rng = er_test_seed("engine_mmai/random");
    long bad = 0;
    for (int sa = 0; sa < 2; sa++)
        for (int sb = 0; sb < 2; sb++)
            for (int rep = 0; rep < 12; rep++) {
                iprob P;
                P.fa = ifmts[sa];
                P.fb = ifmts[sb];
                P.m = 1 + (int64_t)rnd_below(&rng, 13);
                P.n = 1 + (int64_t)rnd_below(&rng, 13);
                P.k = rep == 0 ? 0 : rep == 1 ? 1 : (int64_t)rnd_below(&rng, 301);
                P.has_c = rep % 3 != 0;
                ialloc(&P);
                for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = (uint8_t)er_test_rand(&rng);
                for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = (uint8_t)er_test_rand(&rng);
                for (int64_t e = 0; e < P.m * P.n; e++) {
                    uint64_t r = rnd_below(&rng, 4);
                    int32_t near = (int32_t)rnd_below(&rng, 1u << 22);
                    P.C[e] = r == 0 ? INT32_MAX - near : r == 1 ? INT32_MIN + near : (int32_t)er_test_rand(&rng);
                }
                char ctx[64];
                snprintf(ctx, sizeof ctx, "mmai random %s x %s rep %d", rf(P.fa)->name, rf(P.fb)->name, rep);
                bad += check_i(&P, ER_STRATEGY_AUTO, th[rep % 4], ctx);
                bad += check_i(&P, ER_STRATEGY_EXACT, th[(rep + 1) % 4], ctx);
                ifree(&P);
            }
    ck_assert_msg(bad == 0, "mmai random: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(boundaries)
{
    printf("%s/%s\n", "engine_mmai", "boundaries");
    long bad = 0;
    /* one row, 6 columns: C + 1 x b_j */
    iprob P;
    P.fa = ER_FMT_I8;
    P.fb = ER_FMT_I8;
    P.m = 1;
    P.n = 6;
    P.k = 1;
    P.has_c = 1;
    ialloc(&P);
    P.A[0] = 1;
    int8_t bv[6] = {0, 1, 0, -1, 127, -128};
    int32_t cv[6] = {INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MAX - 127, INT32_MIN + 128};
    for (int j = 0; j < 6; j++) {
        P.B[j] = (uint8_t)bv[j];
        P.C[j] = cv[j];
    }
    bad += check_i(&P, ER_STRATEGY_AUTO, 1, "boundaries");
    /* by hand: INT32_MAX, INT32_MIN (wrapped), INT32_MIN, INT32_MAX (wrapped), INT32_MAX, INT32_MIN; 2 wrapped */
    {
        int32_t D[6];
        er_tensor ta = er_tensor_2d(ER_FMT_I8, 1, 1, P.A), tb = er_tensor_2d(ER_FMT_I8, 1, 6, P.B);
        er_tensor tc = er_tensor_2d(ER_FMT_I32, 1, 6, P.C), td = er_tensor_2d(ER_FMT_I32, 1, 6, D);
        er_mma_args a;
        er_mma_stats st;
        er_mma_args_init(&a);
        a.a = &ta;
        a.b = &tb;
        a.c = &tc;
        a.d = &td;
        a.stats = &st;
        int s = er_mma(&a);
        int32_t want[6] = {INT32_MAX, INT32_MIN, INT32_MIN, INT32_MAX, INT32_MAX, INT32_MIN};
        if (s != ER_OK || memcmp(D, want, sizeof want) != 0 || st.wrapped != 2) {
            fprintf(stderr, "MISMATCH boundaries by hand: status %d wrapped %lld, D = %d %d %d %d %d %d\n", s,
                    (long long)st.wrapped, D[0], D[1], D[2], D[3], D[4], D[5]);
            bad++;
        }
    }
    ifree(&P);
    ck_assert_msg(bad == 0, "boundaries: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(wrap_by_products)
{
    uint64_t rng = er_test_seed("engine_mmai/wrap_by_products");
    long bad = 0;
    struct {
        int fa, fb;
        uint8_t a, b;
        int64_t k;
    } cases[] = {
        {ER_FMT_I8, ER_FMT_I8, 0x80, 0x80, 131072},     /* 2^14 x 2^17 = 2^31: just beyond INT32_MAX */
        {ER_FMT_I8, ER_FMT_I8, 0x80, 0x80, 131071},     /* 2^31 - 2^14: inside */
        {ER_FMT_U8, ER_FMT_U8, 0xFF, 0xFF, 33026},      /* 65025 x 33026 > 2^31 */
        {ER_FMT_I8, ER_FMT_U8, 0x80, 0xFF, 65794},      /* -32640 x 65794 < -2^31 */
        {ER_FMT_U8, ER_FMT_I8, 0xFF, 0x7F, 200000},     /* 32385 x 200000: more than 2^32 */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        iprob P;
        P.fa = cases[ci].fa;
        P.fb = cases[ci].fb;
        P.m = 2;
        P.n = 3;
        P.k = cases[ci].k;
        P.has_c = ci % 2;
        ialloc(&P);
        /* row 0 constant (the designed sum), row 1 random; column 2 alternates signs where possible */
        for (int64_t p = 0; p < P.k; p++) {
            P.A[p] = cases[ci].a;
            P.A[P.k + p] = (uint8_t)er_test_rand(&rng);
            P.B[p * 3 + 0] = cases[ci].b;
            P.B[p * 3 + 1] = cases[ci].b;
            P.B[p * 3 + 2] = (uint8_t)(p % 2 ? cases[ci].b : er_test_rand(&rng));
        }
        for (int e = 0; e < 6; e++) P.C[e] = e == 1 ? -1 : e == 2 ? INT32_MAX : 0;
        char ctx[64];
        snprintf(ctx, sizeof ctx, "wrap_by_products case %zu", ci);
        bad += check_i(&P, ER_STRATEGY_AUTO, 2, ctx);
        ifree(&P);
    }
    ck_assert_msg(bad == 0, "wrap_by_products: %ld mismatches (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_mmai");
    TCase *tc = tcase_create("mmai");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, random);
    tcase_add_test(tc, boundaries);
    tcase_add_test(tc, wrap_by_products);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
