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
    /* exact: enclosures of the exact values (small integers: lo = hi = the value) */
    double lo[M * N], hi[M * N];
    er_tensor LO = er_tensor_2d(ER_FMT_F64, M, N, lo), HI = er_tensor_2d(ER_FMT_F64, M, N, hi);
    ck_assert_int_eq(er_result_exact(r, &LO, &HI, NULL, msg, sizeof msg), ER_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            long want = 0;
            for (int p = 0; p < K; p++) want += (long)ia[i * K + p] * ib[p * N + j];
            ck_assert(lo[i * N + j] == (double)want && hi[i * N + j] == (double)want);
        }
    /* bad gradients */
    er_tensor Gbad = er_tensor_2d(ER_FMT_F32, N, M, g);
    ck_assert_int_eq(er_result_backward(r, &Gbad, -1, -1, &ga, &gb, msg, sizeof msg), ER_EINVAL);
    ck_assert_ptr_null(ga);
    er_result_free(r);
}
END_TEST

START_TEST(views_move_elements)
{
    uint64_t st = er_test_seed("views_move_elements");
    enum { M = 6, K = 40, N = 4 };
    uint16_t a[M * K], b[K * N];
    float d[M * N], nb[M * N], nv[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (uint16_t)((er_test_rand(&st) & 0x807f) | ((120 + er_test_rand(&st) % 15) << 7));
    for (int i = 0; i < K * N; i++) b[i] = (uint16_t)((er_test_rand(&st) & 0x807f) | ((120 + er_test_rand(&st) % 15) << 7));
    er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b);
    er_tensor D = er_tensor_2d(ER_FMT_F32, M, N, d);
    er_mma_args args;
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.d = &D;
    er_result *r, *t, *rs;
    char msg[256];
    ck_assert_int_eq(er_result_create(&args, &r, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_result_transpose(r, 0, 1, &t, msg, sizeof msg), ER_OK);
    const er_tensor *td = er_result_rounded(t);
    ck_assert_int_eq(td->shape[0], N);
    ck_assert_int_eq(td->shape[1], M);
    const er_bounds *bb, *bt;
    ck_assert_int_eq(er_result_bounds(r, NULL, &bb, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_result_bounds(t, NULL, &bt, msg, sizeof msg), ER_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float x = f32v((const char *)td->data + 4 * (size_t)(j * td->strides[0] + i * td->strides[1]));
            ck_assert(memcmp(&x, &d[i * N + j], 4) == 0);
            ck_assert(bt->low[j * M + i] == bb->low[i * N + j] && bt->high[j * M + i] == bb->high[i * N + j]);
            ck_assert(bt->tolerance[j * M + i] == bb->tolerance[i * N + j]);
        }
    /* normal() of the view is the base's normal(), moved */
    er_tensor NB = er_tensor_2d(ER_FMT_F32, M, N, nb), NV = er_tensor_2d(ER_FMT_F32, N, M, nv);
    ck_assert_int_eq(er_result_normal(r, -1, 0, &NB, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_result_normal(t, -1, 0, &NV, msg, sizeof msg), ER_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) ck_assert(memcmp(&nv[j * M + i], &nb[i * N + j], 4) == 0);
    /* covers through the view judges the moved output the same way */
    unsigned char cb[M * N], cv[M * N];
    int64_t ob, ov;
    ck_assert_int_eq(er_result_covers(r, NULL, &NB, cb, &ob, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_result_covers(t, NULL, &NV, cv, &ov, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(ob, 0);
    ck_assert_int_eq(ov, 0);
    nv[5] = nv[5] * 2.0f + 1.0f; /* moved out of its range in the view */
    ck_assert_int_eq(er_result_covers(t, NULL, &NV, cv, &ov, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(ov, 1);
    ck_assert_int_eq(cv[5], 0);
    /* reshape keeps row-major order */
    int64_t shape[3] = {2, 3, 4};
    ck_assert_int_eq(er_result_reshape(r, 3, shape, &rs, msg, sizeof msg), ER_OK);
    const er_bounds *br;
    ck_assert_int_eq(er_result_bounds(rs, NULL, &br, msg, sizeof msg), ER_OK);
    for (int e = 0; e < M * N; e++) ck_assert(br->high[e] == bb->high[e]);
    int64_t bad[2] = {5, 5};
    er_result *x;
    ck_assert_int_eq(er_result_reshape(r, 2, bad, &x, msg, sizeof msg), ER_EINVAL);
    er_result *ga, *gb;
    ck_assert_int_eq(er_result_backward(t, &NV, -1, -1, &ga, &gb, msg, sizeof msg), ER_EUNSUPPORTED);
    er_result_free(rs);
    er_result_free(t);
    er_result_free(r);
}
END_TEST

/* Results as inputs: a two-step chain of real implementations is covered by the later result's
 * bounds, whose normal() works on the earlier normal(). */
START_TEST(results_as_inputs)
{
    uint64_t st = er_test_seed("results_as_inputs");
    enum { M = 4, K = 300, N = 5, P = 200 };
    static uint16_t a[M * K], b[K * N], c[N * P];
    static float r1[M * N], r2[M * P], i1[M * N], i2[M * P], n2[M * P];
    for (int rep = 0; rep < 20; rep++) {
        int span = rep % 2 ? 20 : 3;
        for (int i = 0; i < M * K; i++) a[i] = (uint16_t)((er_test_rand(&st) & 0x807f) | ((127 - span + er_test_rand(&st) % (2 * span + 1)) << 7));
        for (int i = 0; i < K * N; i++) b[i] = (uint16_t)((er_test_rand(&st) & 0x807f) | ((127 - span + er_test_rand(&st) % (2 * span + 1)) << 7));
        for (int i = 0; i < N * P; i++) c[i] = (uint16_t)((er_test_rand(&st) & 0x807f) | ((127 - 3 + er_test_rand(&st) % 7) << 7));
        er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b), C = er_tensor_2d(ER_FMT_BF16, N, P, c);
        er_tensor R1 = er_tensor_2d(ER_FMT_F32, M, N, r1), R2 = er_tensor_2d(ER_FMT_F32, M, P, r2);
        er_mma_args g1, g2;
        er_mma_args_init(&g1);
        g1.a = &A;
        g1.b = &B;
        g1.d = &R1;
        er_result *x1, *x2;
        char msg[256];
        ck_assert_int_eq(er_result_create(&g1, &x1, msg, sizeof msg), ER_OK);
        er_mma_args_init(&g2);
        g2.b = &C;
        g2.d = &R2;
        ck_assert_int_eq(er_result_create_from(&g2, x1, NULL, NULL, NULL, &x2, msg, sizeof msg), ER_OK);
        /* the implementation: step 1 in 4 lanes, step 2 in index order, each in f32 on its own values */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float l[4] = {0, 0, 0, 0};
                for (int p = 0; p < K; p++) {
                    uint32_t ua = (uint32_t)a[i * K + p] << 16, ub = (uint32_t)b[p * N + j] << 16;
                    l[p & 3] = l[p & 3] + f32v(&ua) * f32v(&ub);
                }
                i1[i * N + j] = (l[0] + l[1]) + (l[2] + l[3]);
            }
        for (int i = 0; i < M; i++)
            for (int j = 0; j < P; j++) {
                float s = 0;
                for (int p = 0; p < N; p++) {
                    uint32_t uc = (uint32_t)c[p * P + j] << 16;
                    s = s + i1[i * N + p] * f32v(&uc);
                }
                i2[i * P + j] = s;
            }
        unsigned char cov[M * P];
        int64_t outside;
        er_tensor I1 = er_tensor_2d(ER_FMT_F32, M, N, i1), I2 = er_tensor_2d(ER_FMT_F32, M, P, i2);
        ck_assert_int_eq(er_result_covers(x1, NULL, &I1, cov, &outside, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(outside, 0);
        ck_assert_int_eq(er_result_covers(x2, NULL, &I2, cov, &outside, msg, sizeof msg), ER_OK);
        ck_assert_msg(outside == 0, "rep %d: %lld chain outputs not covered", rep, (long long)outside);
        /* normal() of the later result works on the earlier normal(), and is covered */
        er_tensor N2 = er_tensor_2d(ER_FMT_F32, M, P, n2);
        ck_assert_int_eq(er_result_normal(x2, -1, 0, &N2, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(er_result_covers(x2, NULL, &N2, cov, &outside, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(outside, 0);
        /* the bounds of the chain are wider than those of the same product on exact inputs */
        static float r3[M * P];
        er_tensor R3 = er_tensor_2d(ER_FMT_F32, M, P, r3);
        er_mma_args g3 = g2;
        g3.a = &R1;
        g3.d = &R3;
        er_result *x3;
        const er_bounds *b2, *b3;
        ck_assert_int_eq(er_result_create(&g3, &x3, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(er_result_bounds(x2, NULL, &b2, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(er_result_bounds(x3, NULL, &b3, msg, sizeof msg), ER_OK);
        for (int e = 0; e < M * P; e++) ck_assert(b2->radius[e] >= b3->radius[e]);
        ck_assert(memcmp(r3, r2, sizeof r2) == 0); /* the same rounded: the exact answer on R1's values */
        er_result_free(x3);
        er_result_free(x2);
        er_result_free(x1);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("backward");
    TCase *tc = tcase_create("backward");
    tcase_add_test(tc, backward_is_exact_and_named);
    tcase_add_test(tc, views_move_elements);
    tcase_add_test(tc, results_as_inputs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
