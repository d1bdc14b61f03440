/* test_cuda_host_convert.c: the core as nvcc compiles it for the host agrees with the C path, and the
 * CUDA entry points fail cleanly.  Needs no GPU and no driver: runs wherever the CUDA backend builds. */
#include <string.h>

#include "er_cuda_test.h"

/* nvcc's host pass (er_cuda_host_convert_mixed, in the kernel's translation unit) against gcc's C. */
START_TEST(test_host_agrees)
{
    er_cuda_batch b;
    char msg[256] = "unset";
    er_status st;
    er_cuda_batch_make(&b, "test_cuda_host_convert");
    st = er_cuda_host_convert_mixed(b.spec, b.src, b.got, b.got_flags, b.n, msg, sizeof msg);
    ck_assert_msg(st == ER_OK, "er_cuda_host_convert_mixed: %d (%s)", st, msg);
    ck_assert_str_eq(msg, "");
    er_cuda_batch_compare(&b, "nvcc host pass");
    er_cuda_batch_free(&b);
}
END_TEST

/* Bad arguments give ER_EINVAL before any device is touched, and name the culprit. */
START_TEST(test_bad_arguments)
{
    uint32_t spec[2] = {ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_F16, ER_RND_NEAREST_EVEN, 0), 0};
    uint64_t src[2] = {0x3f800000u, 0x3f800000u}, dst[2] = {0, 0};
    uint32_t flags[2] = {0, 0};
    char msg[256];

    spec[1] = ER_BATCH_SPEC(ER_FMT_COUNT, ER_FMT_F16, 0, 0);
    ck_assert_int_eq(er_cuda_host_convert_mixed(spec, src, dst, flags, 2, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "spec[1]") != NULL, "message: %s", msg);
    ck_assert_int_eq(er_cuda_convert_mixed(spec, src, dst, flags, 2, -1, msg, sizeof msg), ER_EINVAL);
    spec[1] = ER_BATCH_SPEC(ER_FMT_F16, ER_FMT_COUNT, 0, 0);
    ck_assert_int_eq(er_cuda_host_convert_mixed(spec, src, dst, flags, 2, msg, sizeof msg), ER_EINVAL);
    spec[1] = ER_BATCH_SPEC(ER_FMT_F16, ER_FMT_F32, ER_RND_COUNT, 0);
    ck_assert_int_eq(er_cuda_host_convert_mixed(spec, src, dst, flags, 2, msg, sizeof msg), ER_EINVAL);
    spec[1] = spec[0];
    ck_assert_int_eq(er_cuda_host_convert_mixed(NULL, src, dst, flags, 2, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_cuda_host_convert_mixed(spec, NULL, dst, flags, 2, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_cuda_host_convert_mixed(spec, src, NULL, flags, 2, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_cuda_convert_mixed(spec, src, NULL, flags, 2, 0, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_cuda_convert_mixed(spec, src, dst, flags, 2, -2, msg, sizeof msg), ER_EINVAL);
    /* n = 0 needs no arrays; flags and msg may be NULL. */
    ck_assert_int_eq(er_cuda_host_convert_mixed(NULL, NULL, NULL, NULL, 0, NULL, 0), ER_OK);
    ck_assert_int_eq(er_cuda_host_convert_mixed(spec, src, dst, NULL, 2, NULL, 0), ER_OK);
    ck_assert_uint_eq(dst[0], 0x3c00u); /* 1.0 */
    ck_assert_uint_eq(dst[1], 0x3c00u);
}
END_TEST

/* No driver or no device: a count of 0 and ER_ENODEVICE with a message, never a crash.  With a
 * device: an index past the last one is ER_ENODEVICE. */
START_TEST(test_no_device_is_clean)
{
    uint32_t spec[1] = {ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_F16, ER_RND_NEAREST_EVEN, 0)};
    uint64_t src[1] = {0x3f800000u}, dst[1] = {0};
    uint32_t flags[1] = {0};
    char msg[256] = "";
    int count = er_cuda_device_count();
    er_status st;
    ck_assert_int_ge(count, 0);
    ck_assert_int_eq(er_cuda_device_count(), count); /* stable, and callable again after a failure */
    st = er_cuda_convert_mixed(spec, src, dst, flags, 1, count, msg, sizeof msg);
    printf("test_cuda_host_convert: %d CUDA device(s); device %d gives %d: %s\n", count, count, st, msg);
    ck_assert_int_eq(st, ER_ENODEVICE);
    ck_assert_msg(msg[0] != '\0', "ER_ENODEVICE without a message");
    if (count == 0) {
        st = er_cuda_convert_mixed(spec, src, dst, flags, 1, -1, msg, sizeof msg);
        ck_assert_int_eq(st, ER_ENODEVICE);
        st = er_cuda_convert_mixed(spec, src, dst, flags, 1, 0, NULL, 0);
        ck_assert_int_eq(st, ER_ENODEVICE);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_host_convert");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_host_agrees);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_no_device_is_clean);
    suite_add_tcase(s, tc);
    return er_cuda_run_suite(s);
}
