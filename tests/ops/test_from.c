/* test_from.c: results as inputs (er_op_call_from): gelu(linear(x, w, b), approximate=tanh) judges a fused
 * GEMM + bias + GELU kernel emulated in f32 (0 outside), the erf form of the same kernel is caught, softmax of
 * a matmul's scores covers an f32 kernel and catches a sum off by 0.1%, an earlier result's slack widens the bounds (never narrows them),
 * and an operation that does not take results refuses them. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

static double urand(uint64_t *st) { return (double)(er_test_rand(st) >> 11) * 0x1p-53 * 2 - 1; }

static uint16_t bf16_of(double v)
{
    uint64_t b;
    double d;
    er_round_double(ER_FMT_BF16, v, ER_RND_NEAREST_EVEN, &d);
    er_bits_of(ER_FMT_BF16, d, &b);
    return (uint16_t)b;
}

static float bf(uint16_t h)
{
    double d;
    er_from_bits(ER_FMT_BF16, h, &d);
    return (float)d;
}

enum { M = 16, K = 96, N = 40 };

START_TEST(fused_gemm_bias_gelu)
{
    uint64_t st = er_test_seed("from_gelu");
    static uint16_t x[M * K], w[N * K], b[N];
    static float acc[M * N], y[M * N];
    char msg[512] = "";
    for (int e = 0; e < M * K; e++) x[e] = bf16_of(urand(&st) * 2);
    for (int e = 0; e < N * K; e++) w[e] = bf16_of(urand(&st) / 6);
    for (int e = 0; e < N; e++) b[e] = bf16_of(urand(&st));
    int64_t sx[2] = {M, K}, sw[2] = {N, K}, sb[1] = {N}, sy[2] = {M, N};
    er_optensor X = er_optensor_make(ER_FMT_BF16, 2, sx, x), W = er_optensor_make(ER_FMT_BF16, 2, sw, w);
    er_optensor B = er_optensor_make(ER_FMT_BF16, 1, sb, b);
    const er_optensor *in[3] = {&X, &W, &B};
    er_opres *lin = NULL, *g = NULL, *ge = NULL;
    ck_assert_msg(er_op_call_nd("linear", 3, in, "out=f32", &lin, msg, sizeof msg) == ER_OK, "%s", msg);
    er_tol_opts any;
    er_tol_opts_init(&any);
    er_standard_parse("any_order", &any.standard, msg, sizeof msg);
    er_opinput gi[1] = {{NULL, NULL, lin, 0}};
    ck_assert_msg(er_op_call_from("gelu", 1, gi, &any, "approximate=tanh,out=f32", &g, msg, sizeof msg) == ER_OK, "%s",
                  msg);
    ck_assert_msg(er_op_call_from("gelu", 1, gi, &any, "approximate=none,out=f32", &ge, msg, sizeof msg) == ER_OK, "%s",
                  msg);
    /* the fused kernel: f32 accumulation (bias last), torch's tanh gelu in f32 */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float a = 0;
            for (int p = 0; p < K; p++) a += bf(x[i * K + p]) * bf(w[j * K + p]);
            acc[i * N + j] = a + bf(b[j]);
        }
    for (int e = 0; e < M * N; e++) {
        float v = acc[e], inner = 0.79788456080286536f * (v + 0.044715f * (v * v * v));
        y[e] = 0.5f * v * (1.0f + (float)tanh((double)inner));
    }
    er_optensor Y = er_optensor_make(ER_FMT_F32, 2, sy, y);
    int64_t out = -1;
    ck_assert_int_eq(er_opres_covers(g, 0, &any, &Y, NULL, &out, msg, sizeof msg), ER_OK);
    ck_assert_msg(out == 0, "the fused kernel: %lld outside", (long long)out);
    /* the same kernel judged as the erf form: caught */
    ck_assert_int_eq(er_opres_covers(ge, 0, &any, &Y, NULL, &out, msg, sizeof msg), ER_OK);
    ck_assert_msg(out > M * N / 10, "the tanh form as erf's: only %lld outside", (long long)out);
    /* the slack widens: each tolerance on the result is at least the one on the exact linear output */
    er_opres *g0 = NULL;
    er_optensor L = *er_opres_rounded(lin, 0);
    const er_optensor *li[1] = {&L};
    ck_assert_msg(er_op_call_nd("gelu", 1, li, "approximate=tanh,out=f32", &g0, msg, sizeof msg) == ER_OK, "%s", msg);
    const er_bounds *b0, *b1;
    ck_assert_int_eq(er_opres_bounds(g0, 0, &any, &b0, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_bounds(g, 0, &any, &b1, msg, sizeof msg), ER_OK);
    int wider = 0;
    for (int e = 0; e < M * N; e++) {
        ck_assert(b1->tolerance[e] >= b0->tolerance[e]);
        wider += b1->tolerance[e] > b0->tolerance[e];
    }
    ck_assert_int_gt(wider, M * N / 2);
    ck_assert(memcmp(er_opres_rounded(g, 0)->data, er_opres_rounded(g0, 0)->data, sizeof y) == 0);
    /* the fused kernel is not covered without the earlier slack (the check would be wrong without it) */
    ck_assert_int_eq(er_opres_covers(g0, 0, &any, &Y, NULL, &out, msg, sizeof msg), ER_OK);
    printf("from: the fused kernel outside the bounds that ignore the GEMM's slack: %lld of %d\n", (long long)out, M * N);
    /* linear does not take results */
    er_opres *bad = NULL;
    int64_t sw2[2] = {K, N}; /* a weight of N in_features over the same data */
    er_optensor W2 = er_optensor_make(ER_FMT_BF16, 2, sw2, w);
    er_opinput li2[2] = {{NULL, NULL, lin, 0}, {&W2, NULL, NULL, 0}};
    ck_assert_int_eq(er_op_call_from("linear", 2, li2, &any, NULL, &bad, msg, sizeof msg), ER_EUNSUPPORTED);
    ck_assert_ptr_null(bad);
    er_opres_free(g0);
    er_opres_free(g);
    er_opres_free(ge);
    er_opres_free(lin);
}
END_TEST

START_TEST(softmax_of_scores)
{
    uint64_t st = er_test_seed("from_softmax");
    enum { S = 24, D = 64 };
    static uint16_t q[S * D], k[S * D];
    static float sc[S * S], y[S * S], d[S * S];
    char msg[512] = "";
    for (int e = 0; e < S * D; e++) {
        q[e] = bf16_of(urand(&st));
        k[e] = bf16_of(urand(&st));
    }
    er_tensor Q = er_tensor_2d(ER_FMT_BF16, S, D, q), Kt = er_tensor_transpose(er_tensor_2d(ER_FMT_BF16, S, D, k));
    er_tensor Dt = er_tensor_2d(ER_FMT_F32, S, S, d);
    er_mma_args a;
    er_mma_args_init(&a);
    a.a = &Q;
    a.b = &Kt;
    a.d = &Dt;
    er_result *mm = NULL;
    ck_assert_msg(er_result_create(&a, &mm, msg, sizeof msg) == ER_OK, "%s", msg);
    er_tol_opts any;
    er_tol_opts_init(&any);
    er_standard_parse("any_order", &any.standard, msg, sizeof msg);
    er_opinput in[1] = {{NULL, mm, NULL, 0}};
    er_opres *sm = NULL;
    ck_assert_msg(er_op_call_from("softmax", 1, in, &any, "dim=-1", &sm, msg, sizeof msg) == ER_OK, "%s", msg);
    /* an f32 kernel: scores accumulated in reverse order, softmax in f32 */
    for (int i = 0; i < S; i++)
        for (int j = 0; j < S; j++) {
            float acc = 0;
            for (int p = D - 1; p >= 0; p--) acc += bf(q[i * D + p]) * bf(k[j * D + p]);
            sc[i * S + j] = acc;
        }
    for (int i = 0; i < S; i++) {
        float m = -INFINITY, s = 0;
        for (int j = 0; j < S; j++) m = sc[i * S + j] > m ? sc[i * S + j] : m;
        for (int j = 0; j < S; j++) s += (y[i * S + j] = (float)exp((double)(sc[i * S + j] - m)));
        for (int j = 0; j < S; j++) y[i * S + j] = y[i * S + j] / s;
    }
    int64_t shape[2] = {S, S}, out = -1;
    er_optensor Y = er_optensor_make(ER_FMT_F32, 2, shape, y);
    ck_assert_int_eq(er_opres_covers(sm, 0, &any, &Y, NULL, &out, msg, sizeof msg), ER_OK);
    ck_assert_msg(out == 0, "softmax of the scores: %lld outside", (long long)out);
    /* another row's maximum subtracted (mathematically harmless: covered only by rounding luck, so not
     * asserted) and the sum off by 0.1% (a planted bug): caught */
    for (int i = 0; i < S; i++) {
        float m = -INFINITY, s = 0;
        int r2 = (i + 1) % S;
        for (int j = 0; j < S; j++) m = sc[r2 * S + j] > m ? sc[r2 * S + j] : m;
        for (int j = 0; j < S; j++) s += (y[i * S + j] = (float)exp((double)(sc[i * S + j] - m)));
        for (int j = 0; j < S; j++) y[i * S + j] = y[i * S + j] / (s * 1.001f);
    }
    ck_assert_int_eq(er_opres_covers(sm, 0, &any, &Y, NULL, &out, msg, sizeof msg), ER_OK);
    ck_assert_int_gt(out, S * S / 2);
    er_opres_free(sm);
    er_result_free(mm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("from");
    TCase *tc = tcase_create("from");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, fused_gemm_bias_gelu);
    tcase_add_test(tc, softmax_of_scores);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
