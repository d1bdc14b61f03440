/* test_backward.c: backward(grad), boundaries and output names of a matmul Result. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

static float f32v(const void *p)
{
    float x;
    memcpy(&x, p, 4);
    return x;
}

START_TEST(backward_is_exact_and_named)
{
    uint64_t st = er_test_seed("backward_is_exact_and_named");
    enum { M = 5, K = 7, N = 3 };
    float a[M * K], b[K * N], g[M * N], d[M * N];
    int ia[M * K], ib[K * N], ig[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)(ia[i] = (int)(er_test_rand(&st) % 61) - 30);
    for (int i = 0; i < K * N; i++) b[i] = (float)(ib[i] = (int)(er_test_rand(&st) % 61) - 30);
    for (int i = 0; i < M * N; i++) g[i] = (float)(ig[i] = (int)(er_test_rand(&st) % 61) - 30);
    er_tensor A = er_tensor_2d(ER_FMT_F32, M, K, a), B = er_tensor_2d(ER_FMT_F32, K, N, b);
    er_tensor D = er_tensor_2d(ER_FMT_F32, M, N, d), G = er_tensor_2d(ER_FMT_F32, M, N, g);
    er_mma_args args;
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.d = &D;
    er_result *r, *ga, *gb;
    char msg[256];
    ck_assert_int_eq(er_result_create(&args, &r, msg, sizeof msg), ER_OK);
    ck_assert_str_eq(er_result_op(r), "matmul");
    ck_assert_str_eq(er_result_guarantee(r), "correctly_rounded");
    ck_assert_str_eq(er_result_output_name(r), "out");
    const er_boundary *bl;
    ck_assert_int_eq(er_result_boundaries(r, &bl), 1);
    ck_assert_str_eq(bl[0].name, "accumulate");
    ck_assert_str_eq(bl[0].kind, "accumulate");
    ck_assert_str_eq(bl[0].applies_to, "dot");
    ck_assert_int_eq(er_result_backward(r, &G, -1, -1, &ga, &gb, msg, sizeof msg), ER_OK);
    ck_assert_str_eq(er_result_output_name(ga), "grad_A");
    ck_assert_str_eq(er_result_output_name(gb), "grad_B");
    const er_tensor *tga = er_result_rounded(ga), *tgb = er_result_rounded(gb);
    ck_assert_int_eq(tga->shape[0], M);
    ck_assert_int_eq(tga->shape[1], K);
    ck_assert_int_eq(tgb->shape[0], K);
    ck_assert_int_eq(tgb->shape[1], N);
    /* small integers: every sum is exact, so the reference is integer arithmetic */
    for (int i = 0; i < M; i++)
        for (int p = 0; p < K; p++) {
            long want = 0;
            for (int j = 0; j < N; j++) want += (long)ig[i * N + j] * ib[p * N + j];
            ck_assert_msg(f32v((const char *)tga->data + 4 * (i * K + p)) == (float)want, "grad_A[%d][%d]", i, p);
        }
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) {
            long want = 0;
            for (int i = 0; i < M; i++) want += (long)ia[i * K + p] * ig[i * N + j];
            ck_assert_msg(f32v((const char *)tgb->data + 4 * (p * N + j)) == (float)want, "grad_B[%d][%d]", p, j);
        }
    /* each gradient is a Result with its own bounds: exact data, so every tolerance covers rounded */
    const er_bounds *bd;
    ck_assert_int_eq(er_result_bounds(ga, NULL, &bd, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(bd->count, M * K);
    for (int e = 0; e < M * K; e++) ck_assert(bd->has_range[e] && bd->tolerance[e] >= 0);
    er_result_free(ga);
    er_result_free(gb);
    /* bad gradients */
    er_tensor Gbad = er_tensor_2d(ER_FMT_F32, N, M, g);
    ck_assert_int_eq(er_result_backward(r, &Gbad, -1, -1, &ga, &gb, msg, sizeof msg), ER_EINVAL);
    ck_assert_ptr_null(ga);
    er_result_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("backward");
    TCase *tc = tcase_create("backward");
    tcase_add_test(tc, backward_is_exact_and_named);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
