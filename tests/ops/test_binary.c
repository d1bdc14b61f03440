/* test_binary.c: add and mul with broadcasting, and linear, through er_op_call: rounded bit for bit against
 * MPFR (add, mul) and against matmul's own Result (linear), f32 emulations covered (bf16 inputs added and
 * multiplied in f32; x w^T + b with the bias first or last, index order), planted bugs caught (the bias
 * broadcast along the wrong axis, the bias added twice, the weight not transposed). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
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

static double bf16_val(uint16_t h)
{
    double d;
    er_from_bits(ER_FMT_BF16, h, &d);
    return d;
}

START_TEST(add_mul_broadcast_against_mpfr)
{
    uint64_t st = er_test_seed("binary_mpfr");
    enum { R = 37, C = 29 };
    uint16_t a[R * C], b[C];
    float y[R * C];
    char msg[256] = "";
    mpfr_t m;
    mpfr_init2(m, 200);
    for (int trial = 0; trial < 20; trial++) {
        for (int e = 0; e < R * C; e++) a[e] = bf16_of(urand(&st) * ldexp(1, (int)(er_test_rand(&st) % 40) - 20));
        for (int e = 0; e < C; e++) b[e] = bf16_of(urand(&st) * ldexp(1, (int)(er_test_rand(&st) % 40) - 20));
        int64_t sa[2] = {R, C}, sb[1] = {C};
        er_optensor A = er_optensor_make(ER_FMT_BF16, 2, sa, a), B = er_optensor_make(ER_FMT_BF16, 1, sb, b);
        const er_optensor *in[2] = {&A, &B};
        for (int mul = 0; mul < 2; mul++) {
            er_opres *r = NULL;
            /* bf16 inputs, out bf16: the exact value rounded once (not through f32) */
            ck_assert_msg(er_op_call_nd(mul ? "mul" : "add", 2, in, "out=bf16", &r, msg, sizeof msg) == ER_OK, "%s", msg);
            const er_optensor *Rt = er_opres_rounded(r, 0);
            ck_assert_int_eq(Rt->ndim, 2);
            for (int e = 0; e < R * C; e++) {
                mpfr_set_d(m, bf16_val(a[e]), MPFR_RNDN);
                if (mul) mpfr_mul_d(m, m, bf16_val(b[e % C]), MPFR_RNDN);
                else mpfr_add_d(m, m, bf16_val(b[e % C]), MPFR_RNDN);
                /* bf16 round from 200 bits: via f32's round to odd is not available here: precision 8 */
                mpfr_t t;
                mpfr_init2(t, 8);
                mpfr_set(t, m, MPFR_RNDN);
                uint16_t want = bf16_of(mpfr_get_d(t, MPFR_RNDN)), got;
                mpfr_clear(t);
                memcpy(&got, (char *)Rt->data + 2 * e, 2);
                if (bf16_val(got) == 0 && mpfr_zero_p(m)) continue;
                ck_assert_msg(got == want, "%s element %d: 0x%04x, MPFR 0x%04x", mul ? "mul" : "add", e, got, want);
            }
            er_opres_free(r);
            /* an f32 implementation: both read into f32 (exact), one rounding, then cast: covered */
            ck_assert_msg(er_op_call_nd(mul ? "mul" : "add", 2, in, "out=f32", &r, msg, sizeof msg) == ER_OK, "%s", msg);
            for (int e = 0; e < R * C; e++) {
                float x = (float)bf16_val(a[e]), z = (float)bf16_val(b[e % C]);
                y[e] = mul ? x * z : x + z;
            }
            er_optensor Y = er_optensor_make(ER_FMT_F32, 2, sa, y);
            int64_t out = -1;
            ck_assert_int_eq(er_opres_covers(r, 0, NULL, &Y, NULL, &out, msg, sizeof msg), ER_OK);
            ck_assert_int_eq(out, 0);
            /* the second operand broadcast along the wrong axis (b[i % C] indexed by the row) */
            for (int e = 0; e < R * C; e++) {
                float x = (float)bf16_val(a[e]), z = (float)bf16_val(b[(e / C) % C]);
                y[e] = mul ? x * z : x + z;
            }
            ck_assert_int_eq(er_opres_covers(r, 0, NULL, &Y, NULL, &out, msg, sizeof msg), ER_OK);
            ck_assert_int_gt(out, R * C / 2);
            er_opres_free(r);
        }
    }
    mpfr_clear(m);
    /* shapes that do not broadcast are refused, naming the dimension */
    float z[6] = {0};
    int64_t s1[2] = {2, 3}, s2[2] = {3, 2};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, s1, z), W = er_optensor_make(ER_FMT_F32, 2, s2, z);
    const er_optensor *in2[2] = {&X, &W};
    er_opres *r = NULL;
    ck_assert_int_eq(er_op_call_nd("add", 2, in2, NULL, &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "broadcast") && strstr(msg, "add"), "%s", msg);
}
END_TEST

START_TEST(linear_is_matmul_plus_bias)
{
    uint64_t st = er_test_seed("linear");
    enum { B0 = 3, S = 5, K = 48, N = 24 };
    uint16_t x[B0 * S * K], w[N * K], bias[N];
    float y[B0 * S * N];
    char msg[256] = "";
    for (int e = 0; e < B0 * S * K; e++) x[e] = bf16_of(urand(&st) * 2);
    for (int e = 0; e < N * K; e++) w[e] = bf16_of(urand(&st) / 4);
    for (int e = 0; e < N; e++) bias[e] = bf16_of(urand(&st) * 3);
    int64_t sx[3] = {B0, S, K}, sw[2] = {N, K}, sb[1] = {N}, sy[3] = {B0, S, N};
    er_optensor X = er_optensor_make(ER_FMT_BF16, 3, sx, x), W = er_optensor_make(ER_FMT_BF16, 2, sw, w);
    er_optensor Bi = er_optensor_make(ER_FMT_BF16, 1, sb, bias);
    const er_optensor *in[3] = {&X, &W, &Bi};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call_nd("linear", 3, in, "out=f32", &r, msg, sizeof msg) == ER_OK, "%s", msg);
    const er_optensor *R = er_opres_rounded(r, 0);
    ck_assert_int_eq(R->ndim, 3);
    ck_assert_int_eq(R->shape[2], N);
    /* matmul's own Result on the same operands: the same bits */
    float d[B0 * S * N];
    er_tensor A = er_tensor_2d(ER_FMT_BF16, B0 * S, K, x), Wt = er_tensor_transpose(er_tensor_2d(ER_FMT_BF16, N, K, w));
    er_tensor C = er_tensor_2d(ER_FMT_BF16, B0 * S, N, bias), D = er_tensor_2d(ER_FMT_F32, B0 * S, N, d);
    C.strides[0] = 0;
    er_mma_args a;
    er_mma_args_init(&a);
    a.a = &A;
    a.b = &Wt;
    a.c = &C;
    a.d = &D;
    er_result *mm = NULL;
    ck_assert_msg(er_result_create(&a, &mm, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert(memcmp(d, R->data, sizeof d) == 0);
    er_result_free(mm);
    /* f32 implementations: the bias first or last, products in index order: any_order covers both */
    er_tol_opts o;
    er_tol_opts_init(&o);
    er_standard_parse("any_order", &o.standard, msg, sizeof msg);
    er_optensor Y = er_optensor_make(ER_FMT_F32, 3, sy, y);
    for (int bug = 0; bug < 4; bug++) {
        for (int i = 0; i < B0 * S; i++)
            for (int j = 0; j < N; j++) {
                float acc = bug == 1 ? 0.0f : (float)bf16_val(bias[j]);
                for (int p = 0; p < K; p++) {
                    float wv = (float)bf16_val(bug == 3 ? w[(p * N + j) % (N * K)] : w[j * K + p]);
                    acc += (float)bf16_val(x[i * K + p]) * wv;
                }
                if (bug == 1) acc += (float)bf16_val(bias[j]);
                if (bug == 2) acc += (float)bf16_val(bias[j]); /* the bias added twice */
                y[i * N + j] = acc;
            }
        int64_t out = -1;
        ck_assert_int_eq(er_opres_covers(r, 0, &o, &Y, NULL, &out, msg, sizeof msg), ER_OK);
        if (bug < 2) ck_assert_msg(out == 0, "bias %s: %lld outside", bug ? "last" : "first", (long long)out);
        else ck_assert_msg(out > B0 * S * N / 2, "bug %d: only %lld outside", bug, (long long)out);
    }
    /* every matmul standard is taken (hopper on bf16 operands) */
    er_standard_parse("hopper", &o.standard, msg, sizeof msg);
    const er_bounds *bd;
    ck_assert_msg(er_opres_bounds(r, 0, &o, &bd, msg, sizeof msg) == ER_OK, "%s", msg);
    er_opres_free(r);
    /* bad shapes */
    const er_optensor *in2[2] = {&X, &X};
    ck_assert_int_eq(er_op_call_nd("linear", 2, in2, NULL, &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "weight"), "%s", msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("binary");
    TCase *tc = tcase_create("binary");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, add_mul_broadcast_against_mpfr);
    tcase_add_test(tc, linear_is_matmul_plus_bias);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
