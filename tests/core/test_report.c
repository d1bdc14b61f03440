/* test_report.c: er_check_report_compute on outputs whose answers are known by construction: the exact
 * output, outputs pushed a known number of ulps beyond the bounds at known places, an integer product,
 * a vacuous operand, a widened output. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/report.h"
#include "er_report.h" /* er_report_isa */

#define M 5
#define K 7
#define N 6

/* bf16 operands with random small values (sign, 8 exponents, every fraction). */
static void bf16_fill(uint16_t *v, int n, uint64_t *state)
{
    for (int i = 0; i < n; i++) {
        uint64_t r = er_test_rand(state);
        v[i] = (uint16_t)(((r & 1) << 15) | ((uint64_t)(124 + (r >> 1) % 8) << 7) | ((r >> 8) & 0x7f));
    }
}

static er_result *make(const er_tensor *a, const er_tensor *b, er_tensor *d)
{
    er_mma_args args;
    er_result *r = NULL;
    char msg[512];
    er_mma_args_init(&args);
    args.a = a;
    args.b = b;
    args.d = d;
    args.backend = ER_BACKEND_CPU;
    ck_assert_msg(er_result_create(&args, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    return r;
}

START_TEST(known_answers)
{
    uint64_t state = er_test_seed("report_known_answers");
    uint16_t av[M * K], bv[K * N];
    float dv[M * N], out[M * N];
    int64_t idx[M * N];
    char msg[512];
    bf16_fill(av, M * K, &state);
    bf16_fill(bv, K * N, &state);
    er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, av), B = er_tensor_2d(ER_FMT_BF16, K, N, bv);
    er_tensor D = er_tensor_2d(ER_FMT_F32, M, N, dv), O = er_tensor_2d(ER_FMT_F32, M, N, out);
    er_result *r = make(&A, &B, &D);
    er_tol_opts o;
    er_tol_opts_init(&o);
    const er_bounds *bd;
    ck_assert_int_eq(er_result_bounds(r, &o, &bd, msg, sizeof msg), ER_OK);
    er_check_report rep;

    /* the exact output: every element exact, nothing outside */
    memcpy(out, dv, sizeof out);
    ck_assert_msg(er_check_report_compute(r, &o, &O, &A, &B, idx, M * N, &rep, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(rep.elements, M * N);
    ck_assert_int_eq(rep.outside, 0);
    ck_assert_int_eq(rep.hist[ER_REPORT_EXACT], M * N);
    ck_assert_int_eq(rep.outside_listed, 0);
    ck_assert_int_eq(rep.operand_vacuous, 0);
    ck_assert_int_eq(rep.narrower_format, -1);

    /* two elements pushed beyond high by 3 and 7 ulps (positive, finite): the worst is the 7 */
    int e1 = (int)(er_test_rand(&state) % (M * N)), e2 = (e1 + 1 + (int)(er_test_rand(&state) % (M * N - 1))) % (M * N);
    memcpy(out, dv, sizeof out);
    {
        int es[2] = {e1, e2}, ks[2] = {3, 7};
        for (int t = 0; t < 2; t++) {
            int e = es[t];
            uint32_t x;
            ck_assert(bd->has_range[e]);
            /* k patterns beyond the range: above a non-negative high (patterns grow with the value),
             * else below a negative low (patterns grow with the magnitude) */
            if (!(bd->high[e] >> 31)) x = (uint32_t)bd->high[e] + (uint32_t)ks[t];
            else x = (uint32_t)bd->low[e] + (uint32_t)ks[t];
            memcpy(&out[e], &x, 4);
        }
    }
    ck_assert(er_check_report_compute(r, &o, &O, &A, &B, idx, 1, &rep, msg, sizeof msg) == ER_OK);
    ck_assert_int_eq(rep.outside, 2);
    ck_assert_int_eq(rep.hist[ER_REPORT_OUTSIDE], 2);
    ck_assert_int_eq(rep.hist[ER_REPORT_EXACT], M * N - 2);
    ck_assert_int_eq(rep.outside_listed, 1); /* the cap */
    ck_assert_int_eq(idx[0], e1 < e2 ? e1 : e2);
    ck_assert_int_eq(rep.worst, e2);
    ck_assert_int_eq(rep.worst_why, ER_REPORT_WHY_ULPS);
    ck_assert_int_eq(rep.ulps_beyond, 7);
    ck_assert_int_eq(rep.worst_index[1], e2 / N);
    ck_assert_int_eq(rep.worst_index[2], e2 % N);
    ck_assert_int_eq(rep.worst_covered, 0);
    {
        uint32_t x;
        memcpy(&x, &out[e2], 4);
        ck_assert_uint_eq(rep.output, x);
        memcpy(&x, &dv[e2], 4);
        ck_assert_uint_eq(rep.rounded, x);
        ck_assert_uint_eq(rep.high, bd->high[e2]);
        ck_assert_uint_eq(rep.low, bd->low[e2]);
    }
    ck_assert_int_eq(rep.map[(e2 / N) * M / M][(e2 % N) * N / N] >= 1, 1);

    /* an infinity where none is allowed */
    memcpy(out, dv, sizeof out);
    out[e1] = INFINITY;
    ck_assert(er_check_report_compute(r, &o, &O, &A, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK);
    ck_assert_int_eq(rep.outside, 1);
    ck_assert_int_eq(rep.worst, e1);
    ck_assert_int_eq(rep.worst_why, ER_REPORT_WHY_SPECIAL);
    er_result_free(r);

    /* a zero operand: vacuous, and an all-zero output is accepted */
    {
        uint16_t z[M * K];
        memset(z, 0, sizeof z);
        er_tensor Z = er_tensor_2d(ER_FMT_BF16, M, K, z);
        er_result *rz = make(&Z, &B, &D);
        memcpy(out, dv, sizeof out);
        ck_assert(er_check_report_compute(rz, &o, &O, &Z, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK);
        ck_assert_int_eq(rep.operand_vacuous, 1);
        ck_assert_int_eq(rep.zero_accepted, 1);
        ck_assert_int_eq(rep.outside, 0);
        er_result_free(rz);
    }
}
END_TEST

/* mmai: the one correct output is the exact sum; the report reads i32 values as integers. */
START_TEST(integer_product)
{
    int8_t a[2] = {127, 127}, b[2] = {127, 127};
    int32_t d[1], out[1];
    char msg[512];
    er_tensor A = er_tensor_2d(ER_FMT_I8, 1, 2, a), B = er_tensor_2d(ER_FMT_I8, 2, 1, b);
    er_tensor D = er_tensor_2d(ER_FMT_I32, 1, 1, d), O = er_tensor_2d(ER_FMT_I32, 1, 1, out);
    er_result *r = make(&A, &B, &D);
    ck_assert_int_eq(d[0], 32258);
    er_tol_opts o;
    er_tol_opts_init(&o);
    er_check_report rep;
    out[0] = -5;
    ck_assert_msg(er_check_report_compute(r, &o, &O, &A, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(rep.outside, 1);
    ck_assert_int_eq(rep.worst_why, ER_REPORT_WHY_INT);
    ck_assert_int_eq(rep.ulps_beyond, 32263);
    ck_assert(rep.output_value == -5.0 && rep.rounded_value == 32258.0 && rep.low_value == 32258.0);
    ck_assert_int_eq(rep.single_value, 1);
    ck_assert(rep.tolerance == 0.0);
    ck_assert_int_eq(rep.zero_accepted, 0);
    out[0] = 32258;
    ck_assert(er_check_report_compute(r, &o, &O, &A, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK);
    ck_assert_int_eq(rep.outside, 0);
    ck_assert_int_eq(rep.hist[ER_REPORT_EXACT], 1);
    er_result_free(r);
}
END_TEST

/* An output saved widened: every value a bf16 value while the exact answer needs more. */
START_TEST(widened_output_hint)
{
    uint16_t a[2] = {0x3f80, 0x3b80}, b[2] = {0x3f80, 0x3f80}; /* [1, 2^-8] . [1, 1] */
    float d[1], out[1] = {1.0f};
    char msg[512];
    er_tensor A = er_tensor_2d(ER_FMT_BF16, 1, 2, a), B = er_tensor_2d(ER_FMT_BF16, 2, 1, b);
    er_tensor D = er_tensor_2d(ER_FMT_F32, 1, 1, d), O = er_tensor_2d(ER_FMT_F32, 1, 1, out);
    er_result *r = make(&A, &B, &D);
    er_tol_opts o;
    er_tol_opts_init(&o);
    er_check_report rep;
    ck_assert(er_check_report_compute(r, &o, &O, &A, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK);
    ck_assert_int_eq(rep.outside, 1);
    ck_assert_int_eq(rep.narrower_format, ER_FMT_BF16);
    ck_assert_str_eq(er_check_report_bin_name(ER_REPORT_SPECIAL), "inf/NaN allowed");
    ck_assert_ptr_null(er_check_report_bin_name(ER_REPORT_BINS));
    er_result_free(r);
}
END_TEST

/* A zero of the other sign than rounded's is the same value: the "0 (exact)" bin, whatever the
 * tolerance (positive, 0 for a range of the two zeros, or no finite bound), in the scoring of given
 * bounds; with a real result also in the fused covers and scoring at every ISA level. */
START_TEST(signed_zero_is_exact)
{
    /* elements: tolerance 2^-20 / 0 / inf; output -0 against rounded +0, covered */
    uint32_t outb[3] = {0x80000000u, 0x80000000u, 0x80000000u}, rb[3] = {0, 0, 0};
    uint64_t low[3] = {0xB5800000u, 0x80000000u, 0xFF7FFFFFu}, high[3] = {0x35800000u, 0, 0x7F7FFFFFu};
    double tol[3] = {0x1p-20, 0, INFINITY}, rad[3] = {0, 0, INFINITY};
    unsigned char has[3] = {1, 1, 1}, no[3] = {0, 0, 0}, cov[3] = {1, 1, 1};
    char msg[512];
    for (int e = 0; e < 3; e++) {
        float o, r;
        memcpy(&o, &outb[e], 4);
        memcpy(&r, &rb[e], 4);
        er_tensor O = er_tensor_2d(ER_FMT_F32, 1, 1, &o), R = er_tensor_2d(ER_FMT_F32, 1, 1, &r);
        er_bounds one = {1, &rad[e], &tol[e], &low[e], &high[e], &has[e], no, no, no};
        er_check_report rep;
        ck_assert(er_check_report_score(&one, &O, &R, &cov[e], 0, NULL, NULL, NULL, 0, &rep, msg, sizeof msg) == ER_OK);
        ck_assert_msg(rep.hist[ER_REPORT_EXACT] == 1, "element %d: -0 against +0 not in the exact bin", e);
    }
    /* a real result: [1, -1] . [1, 1] = 0 exactly, rounded +0; the output -0 */
    uint16_t a[2] = {0x3f80, 0xbf80}, b[2] = {0x3f80, 0x3f80};
    float d[1], out[1];
    uint32_t mz = 0x80000000u;
    memcpy(&out[0], &mz, 4);
    er_tensor A = er_tensor_2d(ER_FMT_BF16, 1, 2, a), B = er_tensor_2d(ER_FMT_BF16, 2, 1, b);
    er_tensor D = er_tensor_2d(ER_FMT_F32, 1, 1, d), O = er_tensor_2d(ER_FMT_F32, 1, 1, out);
    er_result *r = make(&A, &B, &D);
    er_tol_opts o;
    er_tol_opts_init(&o);
    for (int level = 0; level <= 2; level++) {
        er_check_report rep;
        er_report_isa(level);
        ck_assert(er_check_report_compute(r, &o, &O, &A, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK);
        ck_assert_int_eq(rep.outside, 0);
        ck_assert_msg(rep.hist[ER_REPORT_EXACT] == 1, "isa level %d: -0 against +0 not in the exact bin", level);
    }
    er_report_isa(2);
    er_result_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, known_answers);
    tcase_add_test(tc, integer_product);
    tcase_add_test(tc, widened_output_hint);
    tcase_add_test(tc, signed_zero_is_exact);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
