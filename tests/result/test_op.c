/* test_op.c: mma/matmul through the operation interface (src/er_op.h): single and bounds_of are the
 * Result's own, er_op_slack is the tolerance or infinity per element, with_bounds gives a result on
 * arrays itself and a result on earlier results the bounds of er_result_create_from under the new
 * options, byte for byte. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_op.h"
#include "er_test.h"
#include "exactref/exactref.h"

#define M 6
#define K 9
#define N 5

static void bf16_fill(uint16_t *v, int n, uint64_t *state)
{
    for (int i = 0; i < n; i++) {
        uint64_t r = er_test_rand(state);
        v[i] = (uint16_t)(((r & 1) << 15) | ((uint64_t)(122 + (r >> 1) % 8) << 7) | ((r >> 8) & 0x7f));
    }
}

START_TEST(mma_through_the_interface)
{
    uint64_t state = er_test_seed("op_mma");
    uint16_t a[M * K], b[K * N], c[N * N];
    float d1[M * N]; /* r1's output in f32: its any_order bounds are wider than normal's */
    float d2[M * N], d3[M * N];
    char msg[512] = "";
    bf16_fill(a, M * K, &state);
    bf16_fill(b, K * N, &state);
    bf16_fill(c, N * N, &state);
    er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b);
    er_tensor C = er_tensor_2d(ER_FMT_BF16, N, N, c);
    er_tensor D1 = er_tensor_2d(ER_FMT_F32, M, N, d1), D2 = er_tensor_2d(ER_FMT_F32, M, N, d2);
    er_tensor D3 = er_tensor_2d(ER_FMT_F32, M, N, d3);
    er_mma_args args;
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.d = &D1;
    args.backend = ER_BACKEND_CPU;
    er_result *r1 = NULL, *r2 = NULL, *r3 = NULL;
    ck_assert_msg(er_result_create(&args, &r1, msg, sizeof msg) == ER_OK, "%s", msg);
    er_op op;
    er_result_as_op(r1, &op);
    ck_assert_str_eq(op.cls->op, "matmul");
    ck_assert_int_eq(op.cls->outputs(op.self), 1);
    ck_assert_str_eq(op.cls->output_name(op.self, 0), "out");
    ck_assert_ptr_eq(op.cls->single(op.self, 0), er_result_rounded(r1));
    ck_assert_ptr_null(op.cls->single(op.self, 1));
    er_tol_opts o, o2;
    er_tol_opts_init(&o);
    er_tol_opts_init(&o2);
    er_standard_parse("any_order", &o2.standard, NULL, 0);
    const er_bounds *bd, *bd2;
    ck_assert(op.cls->bounds_of(op.self, 0, &o, &bd, msg, sizeof msg) == ER_OK);
    ck_assert(er_result_bounds(r1, &o, &bd2, msg, sizeof msg) == ER_OK);
    ck_assert_ptr_eq(bd, bd2);
    ck_assert_int_eq(op.cls->bounds_of(op.self, 1, &o, &bd, msg, sizeof msg), ER_EINVAL);
    /* the slack: the tolerance where finite and no infinity or NaN is allowed, else infinity */
    double *sl = NULL;
    ck_assert(er_op_slack(&op, 0, &o, &sl, msg, sizeof msg) == ER_OK);
    ck_assert(er_result_bounds(r1, &o, &bd, msg, sizeof msg) == ER_OK);
    for (int e = 0; e < M * N; e++) {
        int special = bd->may_pinf[e] || bd->may_ninf[e] || bd->may_nan[e] || !bd->has_range[e];
        ck_assert(special ? isinf(sl[e]) : sl[e] == bd->tolerance[e]);
    }
    free(sl);
    /* with_bounds of a result on arrays: itself */
    er_op same;
    ck_assert(op.cls->with_bounds(op.self, &o2, &same, msg, sizeof msg) == ER_OK);
    ck_assert_ptr_eq(same.self, r1);
    same.cls->release(same.self); /* releases nothing */
    /* a result on r1 (A = r1's rounded, B = C); with_bounds under any_order = create_from under any_order */
    er_mma_args a2;
    er_mma_args_init(&a2);
    a2.a = &D1;
    a2.b = &C;
    a2.d = &D2;
    a2.backend = ER_BACKEND_CPU;
    ck_assert_msg(er_result_create_from(&a2, r1, NULL, NULL, &o, &r2, msg, sizeof msg) == ER_OK, "%s", msg);
    a2.d = &D3;
    ck_assert_msg(er_result_create_from(&a2, r1, NULL, NULL, &o2, &r3, msg, sizeof msg) == ER_OK, "%s", msg);
    er_op op2, w;
    er_result_as_op(r2, &op2);
    ck_assert_msg(op2.cls->with_bounds(op2.self, &o2, &w, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_ptr_ne(w.self, r2);
    ck_assert(!memcmp(w.cls->single(w.self, 0)->data, d2, sizeof d2));
    const er_bounds *bw, *b3;
    ck_assert(w.cls->bounds_of(w.self, 0, &o, &bw, msg, sizeof msg) == ER_OK);
    ck_assert(er_result_bounds(r3, &o, &b3, msg, sizeof msg) == ER_OK);
    ck_assert(!memcmp(bw->tolerance, b3->tolerance, sizeof(double) * M * N));
    ck_assert(!memcmp(bw->low, b3->low, sizeof(uint64_t) * M * N));
    ck_assert(!memcmp(bw->high, b3->high, sizeof(uint64_t) * M * N));
    /* and it differs from r2's (the earlier bounds were taken under other options) somewhere, or the
     * comparison above proves nothing */
    const er_bounds *b2;
    ck_assert(er_result_bounds(r2, &o, &b2, msg, sizeof msg) == ER_OK);
    ck_assert(memcmp(b2->tolerance, b3->tolerance, sizeof(double) * M * N) != 0);
    w.cls->release(w.self);
    er_result_free(r3);
    er_result_free(r2);
    er_result_free(r1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op");
    TCase *tc = tcase_create("op");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mma_through_the_interface);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
