/* test_cuda_convert.c: the CUDA kernel agrees with the C path on the whole cross-backend batch, bit
 * for bit (patterns and flags).  Skipped (exit 77) where there is no driver or no GPU, unless
 * EXACTREF_REQUIRE_CUDA=1 (then it fails). */
#include <string.h>

#include "er_cuda_test.h"

START_TEST(test_device_agrees)
{
    er_cuda_batch b;
    char msg[512] = "unset";
    er_status st;
    er_cuda_batch_make(&b, "test_cuda_convert");
    st = er_cuda_convert_mixed(b.spec, b.src, b.got, b.got_flags, b.n, -1, msg, sizeof msg);
    ck_assert_msg(st == ER_OK, "er_cuda_convert_mixed: %s (%s)", er_status_string(st), msg);
    ck_assert_str_eq(msg, "");
    er_cuda_batch_compare(&b, "CUDA device");

    /* Without a flags array the patterns are the same. */
    for (size_t i = 0; i < b.n; i++) {
        b.got[i] = ~b.want[i];
        b.got_flags[i] = b.want_flags[i];
    }
    st = er_cuda_convert_mixed(b.spec, b.src, b.got, NULL, b.n, 0, msg, sizeof msg);
    ck_assert_msg(st == ER_OK, "er_cuda_convert_mixed (flags NULL): %s (%s)", er_status_string(st), msg);
    er_cuda_batch_compare(&b, "CUDA device, flags NULL");
    er_cuda_batch_free(&b);
}
END_TEST

/* Device indices: past the last one is ER_ENODEVICE, below -1 ER_EINVAL; n = 0 is a no-op. */
START_TEST(test_device_index)
{
    uint32_t spec[1] = {ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_BF16, ER_RND_NEAREST_EVEN, 0)};
    uint64_t src[1] = {0x3f800001u}, dst[1] = {0};
    uint32_t flags[1] = {0};
    char msg[256];
    int count = er_cuda_device_count();
    ck_assert_int_eq(er_cuda_convert_mixed(spec, src, dst, flags, 1, count, msg, sizeof msg), ER_ENODEVICE);
    ck_assert_int_eq(er_cuda_convert_mixed(spec, src, dst, flags, 1, -2, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_cuda_convert_mixed(NULL, NULL, NULL, NULL, 0, count - 1, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_cuda_convert_mixed(spec, src, dst, flags, 1, count - 1, msg, sizeof msg), ER_OK);
    ck_assert_uint_eq(dst[0], 0x3f80u);
    ck_assert_uint_eq(flags[0], ER_FLAG_INEXACT);
}
END_TEST

int main(void)
{
    int count = er_cuda_device_count();
    Suite *s;
    TCase *tc;
    if (count == 0) {
        const char *req = getenv("EXACTREF_REQUIRE_CUDA");
        if (req && strcmp(req, "1") == 0) {
            printf("FAIL: no CUDA device (no driver or no GPU), and EXACTREF_REQUIRE_CUDA=1\n");
            return 1;
        }
        printf("SKIP: no CUDA device (no driver or no GPU): the CUDA test needs one; set EXACTREF_REQUIRE_CUDA=1 to "
               "make this a failure\n");
        return 77;
    }
    printf("test_cuda_convert: %d CUDA device(s)\n", count);
    s = suite_create("cuda_convert");
    tc = tcase_create("device");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_device_agrees);
    tcase_add_test(tc, test_device_index);
    suite_add_tcase(s, tc);
    return er_cuda_run_suite(s);
}
