/* test_op_review.c: defects found reviewing the operations: er_op_call refuses shapes it cannot hold (a
 * negative dimension, an element count that overflows) with a message naming the input, instead of reading
 * outside the data, and empty inputs work; quantize's bounds admit flush_to_zero's reading of subnormal
 * inputs as zero (and still catch a wrong code). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

/* call op on one f32 input of the given shape over 8 floats of data; returns the status, msg filled */
static er_status call1(const char *op, int ndim, const int64_t *shape, char *msg, size_t msg_size)
{
    static float data[8] = {1, -2, 3, -4, 5, -6, 7, -8};
    er_optensor t = er_optensor_make(ER_FMT_F32, ndim, shape, data);
    const er_optensor *in[1] = {&t};
    er_opres *r = NULL;
    er_status st = er_op_call_nd(op, 1, in, "", &r, msg, msg_size);
    if (st == ER_OK) ck_assert_ptr_nonnull(r);
    else ck_assert_ptr_null(r);
    er_opres_free(r);
    return st;
}

START_TEST(negative_dimension)
{
    char msg[512] = "";
    const int64_t two_neg[2] = {-2, -3}; /* the product is 6: fits the data, but no tensor has this shape */
    ck_assert_int_eq(call1("relu", 2, two_neg, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "input 0") && strstr(msg, "-2"), "message: %s", msg);
    const int64_t one_neg[2] = {2, -1};
    msg[0] = 0;
    ck_assert_int_eq(call1("softmax", 2, one_neg, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "input 0") && strstr(msg, "-1"), "message: %s", msg);
}
END_TEST

START_TEST(count_overflow)
{
    char msg[512] = "";
    const int64_t wraps_to_zero[2] = {(int64_t)1 << 40, (int64_t)1 << 40}; /* 2^80: wraps to 0 in int64 */
    ck_assert_int_eq(call1("relu", 2, wraps_to_zero, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "input 0") && strstr(msg, "elements"), "message: %s", msg);
    const int64_t huge[3] = {3, (int64_t)1 << 31, (int64_t)1 << 31}; /* 3 * 2^62: over int64 */
    msg[0] = 0;
    ck_assert_int_eq(call1("exp", 3, huge, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "input 0") && strstr(msg, "elements"), "message: %s", msg);
}
END_TEST

START_TEST(empty_inputs)
{
    char msg[512] = "";
    const int64_t empty[2] = {0, 5};
    ck_assert_msg(call1("relu", 2, empty, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(call1("softmax", 2, empty, msg, sizeof msg) == ER_OK, "%s", msg);
    const int64_t empty_row[2] = {4, 0};
    ck_assert_msg(call1("relu", 2, empty_row, msg, sizeof msg) == ER_OK, "%s", msg);
}
END_TEST

/* quantize one row of 32 f32 values under opts; covered counts of q against `q` (patterns) with and
 * without flush_to_zero */
static void q_outside(const float *x, const char *opts, const unsigned char *q, int64_t *out_ftz, int64_t *out_ieee)
{
    char msg[512] = "";
    int64_t sh[2] = {1, 32};
    er_optensor t = er_optensor_make(ER_FMT_F32, 2, sh, (void *)x);
    const er_optensor *in[1] = {&t};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call_nd("quantize", 1, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    const er_optensor *rq = er_opres_rounded(r, 0);
    er_optensor Q = er_optensor_make(rq->format, rq->ndim, rq->shape, (void *)q);
    unsigned char cov[32];
    er_tol_opts o;
    er_tol_opts_init(&o);
    o.flush_to_zero = 1;
    ck_assert_msg(er_opres_covers(r, 0, &o, &Q, cov, out_ftz, msg, sizeof msg) == ER_OK, "%s", msg);
    o.flush_to_zero = 0;
    ck_assert_msg(er_opres_covers(r, 0, &o, &Q, cov, out_ieee, msg, sizeof msg) == ER_OK, "%s", msg);
    er_opres_free(r);
}

START_TEST(quantize_flush_to_zero)
{
    static const char *const schemes[3] = {"scheme=mx", "scheme=row", "scheme=tensor"};
    float x[32];
    unsigned char zero[32] = {0};
    int64_t of, oi;
    /* a block of f32 subnormals: an implementation that flushes them reads zeros and stores q = 0 */
    for (int i = 0; i < 32; i++) x[i] = ldexpf(1.0f + (float)i / 32.0f, -135);
    for (int k = 0; k < 3; k++) {
        q_outside(x, schemes[k], zero, &of, &oi);
        ck_assert_msg(of == 0, "%s: flush_to_zero's zeros: %lld outside", schemes[k], (long long)of);
        ck_assert_msg(oi == 32, "%s: without flush_to_zero, zeros must be caught: %lld outside", schemes[k],
                      (long long)oi);
    }
    /* mx, one normal element (2^-126: X = 2^-127, e8m0's least, so q = 2 = 0x40 in e4m3) among subnormals
     * (q from 2^-8 to 2^-7, nonzero e4m3 subnormals): their zeros are admitted under flush_to_zero only;
     * the normal one's code off by one is caught */
    x[0] = ldexpf(1.0f, -126);
    unsigned char q[32] = {0};
    q[0] = 0x40;
    q_outside(x, "scheme=mx", q, &of, &oi);
    ck_assert_int_eq(of, 0);
    ck_assert_int_eq(oi, 31);
    q[0] = 0x41;
    q_outside(x, "scheme=mx", q, &of, &oi);
    ck_assert_int_eq(of, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op_review");
    TCase *tc = tcase_create("op_review");
    tcase_add_test(tc, negative_dimension);
    tcase_add_test(tc, count_overflow);
    tcase_add_test(tc, empty_inputs);
    tcase_add_test(tc, quantize_flush_to_zero);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
