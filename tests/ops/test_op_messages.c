/* test_op_messages.c: the operations' refusals say what is refused and why: a non-float input names the
 * operation, the input's position and role and its format's name; an output format option names the
 * format and why it is refused; attention with a head dimension of 0 and no scale says so; a boolean or
 * integer attention mask is still taken. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

static er_status call(const char *op, int n, const er_optensor *const *in, const char *opts, char *msg, size_t ms)
{
    er_opres *r = NULL;
    msg[0] = 0;
    er_status st = er_op_call_nd(op, n, in, opts, &r, msg, ms);
    if (st == ER_OK) ck_assert_ptr_nonnull(r);
    else ck_assert_ptr_null(r);
    er_opres_free(r);
    return st;
}

#define HAS(s) ck_assert_msg(strstr(msg, (s)) != NULL, "no \"%s\" in: %s", (s), msg)
#define HASNT(s) ck_assert_msg(strstr(msg, (s)) == NULL, "\"%s\" in: %s", (s), msg)

START_TEST(non_float_input_named)
{
    char msg[512];
    static int8_t i8[8] = {1, -2, 3, -4, 5, -6, 7, -8};
    static float f[8] = {1, -2, 3, -4, 5, -6, 7, -8};
    const int64_t sh[2] = {2, 4};
    er_optensor ti = er_optensor_make(ER_FMT_I8, 2, sh, i8), tf = er_optensor_make(ER_FMT_F32, 2, sh, f);
    const er_optensor *one[1] = {&ti};
    ck_assert_int_eq(call("relu", 1, one, "", msg, sizeof msg), ER_EINVAL);
    HAS("relu");
    HAS("input 0 (input)");
    HAS("i8");
    HAS("not a float format");
    HASNT("format 14");
    /* linear's weight: position 1, role "weight" */
    const er_optensor *lin[2] = {&tf, &ti};
    ck_assert_int_eq(call("linear", 2, lin, "", msg, sizeof msg), ER_EINVAL);
    HAS("linear");
    HAS("input 1 (weight)");
    HAS("i8");
    /* attention's query */
    const int64_t s4[4] = {1, 1, 2, 4};
    er_optensor qi = er_optensor_make(ER_FMT_I8, 4, s4, i8), kf = er_optensor_make(ER_FMT_F32, 4, s4, f);
    const er_optensor *att[3] = {&qi, &kf, &kf};
    ck_assert_int_eq(call("attention", 3, att, "", msg, sizeof msg), ER_EINVAL);
    HAS("input 0 (query)");
    HAS("i8");
}
END_TEST

START_TEST(output_format_option)
{
    char msg[512];
    static float f[4] = {1, -2, 3, -4};
    const int64_t sh[1] = {4};
    er_optensor t = er_optensor_make(ER_FMT_F32, 1, sh, f);
    const er_optensor *in[1] = {&t};
    /* f8E4M3 (with infinities) is a float format exactref does not model: say so, and name the FN variant */
    ck_assert_int_eq(call("relu", 1, in, "out=f8e4m3", msg, sizeof msg), ER_EINVAL);
    HAS("relu");
    HAS("out=f8e4m3");
    HAS("does not model");
    HAS("f8E4M3FN");
    HASNT("is not a float format");
    ck_assert_msg(call("relu", 1, in, "out=f8E4M3FN", msg, sizeof msg) == ER_OK, "%s", msg);
    /* an integer format: that one is not a float format */
    ck_assert_int_eq(call("relu", 1, in, "out=i32", msg, sizeof msg), ER_EINVAL);
    HAS("out=i32");
    HAS("is not a float format");
    /* no format of that name */
    ck_assert_int_eq(call("gelu", 1, in, "out=f7", msg, sizeof msg), ER_EINVAL);
    HAS("gelu");
    HAS("out=f7 is not a format name");
}
END_TEST

START_TEST(attention_head_dimension_zero)
{
    char msg[512];
    static float f[4] = {0};
    const int64_t s0[4] = {1, 1, 2, 0};
    er_optensor q = er_optensor_make(ER_FMT_F32, 4, s0, f);
    const er_optensor *att[3] = {&q, &q, &q};
    ck_assert_int_eq(call("attention", 3, att, "", msg, sizeof msg), ER_EINVAL);
    HAS("head dimension");
    HAS("is 0");
    HASNT("finite and positive");
}
END_TEST

START_TEST(integer_mask_taken)
{
    char msg[512];
    static float f[8] = {1, -2, 3, -4, 5, -6, 7, -8};
    static uint8_t m[4] = {1, 0, 1, 1};
    const int64_t s4[4] = {1, 1, 2, 4}, sm[2] = {2, 2};
    er_optensor q = er_optensor_make(ER_FMT_F32, 4, s4, f), tm = er_optensor_make(ER_FMT_U8, 2, sm, m);
    const er_optensor *att[4] = {&q, &q, &q, &tm};
    ck_assert_msg(call("attention", 4, att, "", msg, sizeof msg) == ER_OK, "%s", msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op_messages");
    TCase *tc = tcase_create("op_messages");
    tcase_add_test(tc, non_float_input_named);
    tcase_add_test(tc, output_format_option);
    tcase_add_test(tc, attention_head_dimension_zero);
    tcase_add_test(tc, integer_mask_taken);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
