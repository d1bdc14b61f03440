/* test_opencl_convert.c: the OpenCL backend gives the C core's bits and flags on the whole batch.
 *
 * Without an OpenCL platform (or device) the program exits 77 (skipped) unless
 * EXACTREF_REQUIRE_OPENCL=1, which makes it fail instead.  EXACTREF_OPENCL_DEVICE picks the device.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, clock_gettime */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_batch.h"
#include "er_opencl_internal.h"
#include "er_test.h"

#define ER_MSG 4096

static double er_now_(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void er_opts_name_(unsigned opts, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s%s%s", opts == 0 ? "none" : "", opts & ER_OPT_SATURATE ? "saturate " : "",
             opts & ER_OPT_FTZ_IN ? "ftz_in " : "", opts & ER_OPT_FTZ_OUT ? "ftz_out" : "");
}

/* Compare a device run with the C reference; fail on the first mismatch with everything about it. */
static void er_check_same_(const char *what, const uint32_t *spec, const uint64_t *src, const uint64_t *ref_dst,
                           const uint32_t *ref_fl, const uint64_t *cl_dst, const uint32_t *cl_fl, size_t n)
{
    size_t i, bad = 0, first = 0;
    for (i = 0; i < n; i++)
        if (ref_dst[i] != cl_dst[i] || ref_fl[i] != cl_fl[i]) {
            if (!bad) first = i;
            bad++;
        }
    if (bad) {
        uint32_t s = spec[first];
        char on[64];
        er_opts_name_((s >> 24) & 0xffu, on, sizeof on);
        ck_abort_msg("%s: %lu of %lu results differ; first at %lu: %s -> %s, %s, opts %s (0x%x), "
                     "source 0x%llx: C 0x%llx flags 0x%x, OpenCL 0x%llx flags 0x%x",
                     what, (unsigned long)bad, (unsigned long)n, (unsigned long)first,
                     er_format_name((int)(s & 0xffu)), er_format_name((int)((s >> 8) & 0xffu)),
                     er_rounding_name((int)((s >> 16) & 0xffu)), on, (unsigned)((s >> 24) & 0xffu),
                     (unsigned long long)src[first], (unsigned long long)ref_dst[first], (unsigned)ref_fl[first],
                     (unsigned long long)cl_dst[first], (unsigned)cl_fl[first]);
    }
}

/* The batch, built once (CK_FORK=no: the tests run in this process, one after the other). */
static uint32_t *g_spec;
static uint64_t *g_src, *g_ref_dst;
static uint32_t *g_ref_fl;
static size_t g_n;

static void er_batch_setup_(void)
{
    uint64_t seed = er_test_seed("test_opencl_convert");
    double t = er_now_();
    g_n = er_batch_build(seed, 64, &g_spec, &g_src);
    ck_assert_msg(g_n > 0, "er_batch_build: out of memory");
    g_ref_dst = (uint64_t *)malloc(g_n * sizeof *g_ref_dst);
    g_ref_fl = (uint32_t *)malloc(g_n * sizeof *g_ref_fl);
    ck_assert(g_ref_dst && g_ref_fl);
    er_batch_reference(g_spec, g_src, g_ref_dst, g_ref_fl, g_n);
    printf("batch: %lu conversions, C reference in %.3f s\n", (unsigned long)g_n, er_now_() - t);
}

static void er_batch_teardown_(void)
{
    free(g_spec);
    free(g_src);
    free(g_ref_dst);
    free(g_ref_fl);
    g_spec = NULL;
    g_src = g_ref_dst = NULL;
    g_ref_fl = NULL;
    g_n = 0;
}

/* Run the first n elements of the batch on the device and compare. */
static void er_run_batch_(const char *what, size_t n)
{
    uint64_t *dst = (uint64_t *)malloc(n * sizeof *dst);
    uint32_t *fl = (uint32_t *)malloc(n * sizeof *fl);
    char msg[ER_MSG];
    er_status st;
    double t;
    ck_assert(dst && fl);
    memset(dst, 0xa5, n * sizeof *dst); /* nothing left unwritten can pass */
    memset(fl, 0xa5, n * sizeof *fl);
    t = er_now_();
    st = er_opencl_convert_mixed(g_spec, g_src, dst, fl, n, -1, msg, sizeof msg);
    printf("%s: %lu conversions on the device in %.3f s (program build included)\n", what, (unsigned long)n,
           er_now_() - t);
    fflush(stdout);
    ck_assert_msg(st == ER_OK, "er_opencl_convert_mixed: %s: %s", er_status_string(st), msg);
    ck_assert_str_eq(msg, "");
    er_check_same_(what, g_spec, g_src, g_ref_dst, g_ref_fl, dst, fl, n);
    free(dst);
    free(fl);
}

START_TEST(test_batch_bit_identical)
{
    er_run_batch_("whole batch", g_n);
}
END_TEST

/* Many launches, the last one partial: the chunking keeps every element in its place. */
START_TEST(test_batch_chunked)
{
    size_t n = g_n < 200003 ? g_n : 200003;
    setenv("EXACTREF_OPENCL_MAX_CHUNK", "4099", 1);
    er_run_batch_("batch in chunks of 4099", n);
    unsetenv("EXACTREF_OPENCL_MAX_CHUNK");
}
END_TEST

/* er_opencl_convert_u64 against er_convert_array: f32 -> bf16, patterns sampled over all 2^32. */
START_TEST(test_u64_f32_to_bf16)
{
    const size_t n = (size_t)1 << 20;
    static const unsigned opt_sets[3] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ};
    uint64_t st_rand = er_test_seed("test_u64_f32_to_bf16");
    uint32_t *s32 = (uint32_t *)malloc(n * sizeof *s32);
    uint16_t *ref = (uint16_t *)malloc(n * sizeof *ref);
    uint64_t *s64 = (uint64_t *)malloc(n * sizeof *s64);
    uint64_t *dst = (uint64_t *)malloc(n * sizeof *dst);
    char msg[ER_MSG];
    size_t i;
    int dir;
    ck_assert(s32 && ref && s64 && dst);
    /* Every sign, exponent and top fraction bits; random low bits (rounding decisions), plus exact ties. */
    for (i = 0; i < n; i++) {
        uint32_t low = (uint32_t)er_test_rand(&st_rand) & 0xfffu;
        if ((i & 7u) == 0) low = 0; /* low 12 bits zero */
        s32[i] = (uint32_t)(i << 12) | low;
        if ((i & 7u) == 1) s32[i] = (s32[i] & 0xffff0000u) | 0x8000u; /* a tie at bf16 */
        s64[i] = s32[i];
    }
    for (dir = 0; dir < ER_RND_COUNT; dir++) {
        unsigned opts = opt_sets[dir % 3];
        unsigned flags_or = 0;
        size_t bad_index = 0;
        double t;
        er_status st = er_convert_array(ER_FMT_F32, ER_FMT_BF16, s32, ref, n, dir, opts, &flags_or, &bad_index);
        ck_assert_msg(st == ER_OK, "er_convert_array: %s", er_status_string(st));
        memset(dst, 0xa5, n * sizeof *dst);
        t = er_now_();
        st = er_opencl_convert_u64(ER_FMT_F32, ER_FMT_BF16, s64, dst, n, dir, opts, -1, msg, sizeof msg);
        printf("f32 -> bf16 %s opts 0x%x: %lu conversions on the device in %.3f s\n", er_rounding_name(dir), opts,
               (unsigned long)n, er_now_() - t);
        fflush(stdout);
        ck_assert_msg(st == ER_OK, "er_opencl_convert_u64: %s: %s", er_status_string(st), msg);
        for (i = 0; i < n; i++)
            if (dst[i] != ref[i])
                ck_abort_msg("f32 -> bf16, %s, opts 0x%x, source 0x%08x: C 0x%04x, OpenCL 0x%llx",
                             er_rounding_name(dir), opts, (unsigned)s32[i], (unsigned)ref[i],
                             (unsigned long long)dst[i]);
    }
    free(s32);
    free(ref);
    free(s64);
    free(dst);
}
END_TEST

/* A few other pairs through the uniform kernel, against er_convert (integers, fp4, wide sources). */
START_TEST(test_u64_other_pairs)
{
    static const int pairs[][2] = {{ER_FMT_F64, ER_FMT_F8E4M3FN}, {ER_FMT_F4E2M1FN, ER_FMT_I8},
                                   {ER_FMT_I64, ER_FMT_TF32},     {ER_FMT_F8E8M0FNU, ER_FMT_F6E3M2FN},
                                   {ER_FMT_I32, ER_FMT_U8}};
    const size_t n = 4096;
    uint64_t st_rand = UINT64_C(0x1234);
    uint64_t src[4096], dst[4096];
    char msg[ER_MSG];
    size_t p, i;
    for (p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        int from = pairs[p][0], to = pairs[p][1], dir = (int)(p % ER_RND_COUNT);
        unsigned opts = p & 1u ? ER_OPT_SATURATE : 0u;
        er_status st;
        for (i = 0; i < n; i++) src[i] = er_batch_random_pattern(from, &st_rand);
        st = er_opencl_convert_u64(from, to, src, dst, n, dir, opts, -1, msg, sizeof msg);
        ck_assert_msg(st == ER_OK, "er_opencl_convert_u64 %s -> %s: %s: %s", er_format_name(from),
                      er_format_name(to), er_status_string(st), msg);
        for (i = 0; i < n; i++) {
            er_res r = er_convert(from, to, src[i], dir, opts);
            if (r.bits != dst[i])
                ck_abort_msg("%s -> %s, %s, opts 0x%x, source 0x%llx: C 0x%llx, OpenCL 0x%llx", er_format_name(from),
                             er_format_name(to), er_rounding_name(dir), opts, (unsigned long long)src[i],
                             (unsigned long long)r.bits, (unsigned long long)dst[i]);
        }
    }
}
END_TEST

START_TEST(test_errors)
{
    uint32_t spec[2] = {ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_BF16, 0, 0), ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_BF16, 0, 0)};
    uint64_t src[2] = {0x3f800000u, 0x7fc00000u}, dst[2];
    uint32_t fl[2];
    char msg[ER_MSG];
    er_status st;

    st = er_opencl_convert_mixed(spec, src, dst, fl, 2, 100000, msg, sizeof msg);
    ck_assert_msg(st == ER_ENODEVICE, "device 100000: %s (%s)", er_status_string(st), msg);
    ck_assert_msg(strstr(msg, "no device 100000") != NULL, "device 100000: message \"%s\"", msg);
    st = er_opencl_convert_u64(ER_FMT_F32, ER_FMT_BF16, src, dst, 2, 0, 0, 100000, msg, sizeof msg);
    ck_assert_msg(st == ER_ENODEVICE && msg[0], "u64, device 100000: %s (%s)", er_status_string(st), msg);
    /* The message is truncated to msg_size, never overrun. */
    memset(msg, 'x', sizeof msg);
    st = er_opencl_convert_mixed(spec, src, dst, fl, 2, 100000, msg, 8);
    ck_assert_int_eq(st, ER_ENODEVICE);
    ck_assert_uint_eq(strlen(msg), 7);
    ck_assert_int_eq(msg[8], 'x');
    ck_assert_int_eq(er_opencl_convert_mixed(spec, src, dst, fl, 2, 100000, NULL, 0), ER_ENODEVICE);

    st = er_opencl_convert_mixed(spec, src, dst, fl, 2, -2, msg, sizeof msg);
    ck_assert_msg(st == ER_EINVAL && msg[0], "device -2: %s (%s)", er_status_string(st), msg);

    setenv("EXACTREF_OPENCL_DEVICE", "100000", 1);
    st = er_opencl_convert_mixed(spec, src, dst, fl, 2, -1, msg, sizeof msg);
    ck_assert_msg(st == ER_ENODEVICE && msg[0], "EXACTREF_OPENCL_DEVICE=100000: %s (%s)", er_status_string(st), msg);
    setenv("EXACTREF_OPENCL_DEVICE", "first", 1);
    st = er_opencl_convert_mixed(spec, src, dst, fl, 2, -1, msg, sizeof msg);
    ck_assert_msg(st == ER_EINVAL && strstr(msg, "EXACTREF_OPENCL_DEVICE"), "EXACTREF_OPENCL_DEVICE=first: %s (%s)",
                  er_status_string(st), msg);
    unsetenv("EXACTREF_OPENCL_DEVICE");

    /* Bad arguments are refused before any device work. */
    spec[1] = ER_BATCH_SPEC(ER_FMT_COUNT, ER_FMT_BF16, 0, 0);
    st = er_opencl_convert_mixed(spec, src, dst, fl, 2, -1, msg, sizeof msg);
    ck_assert_msg(st == ER_EINVAL && strstr(msg, "spec[1]"), "bad spec: %s (%s)", er_status_string(st), msg);
    spec[1] = ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_BF16, ER_RND_COUNT, 0);
    ck_assert_int_eq(er_opencl_convert_mixed(spec, src, dst, fl, 2, -1, msg, sizeof msg), ER_EINVAL);
    spec[1] = ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_BF16, 0, 8);
    ck_assert_int_eq(er_opencl_convert_mixed(spec, src, dst, fl, 2, -1, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_opencl_convert_mixed(NULL, src, dst, fl, 2, -1, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_opencl_convert_mixed(NULL, NULL, NULL, NULL, 0, -1, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opencl_convert_u64(ER_FMT_COUNT, ER_FMT_BF16, src, dst, 2, 0, 0, -1, msg, sizeof msg),
                     ER_EINVAL);
    ck_assert_int_eq(er_opencl_convert_u64(ER_FMT_F32, -1, src, dst, 2, 0, 0, -1, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_opencl_convert_u64(ER_FMT_F32, ER_FMT_BF16, src, dst, 2, ER_RND_COUNT, 0, -1, msg, sizeof msg),
                     ER_EINVAL);
    ck_assert_int_eq(er_opencl_convert_u64(ER_FMT_F32, ER_FMT_BF16, src, dst, 2, 0, 16u, -1, msg, sizeof msg),
                     ER_EINVAL);
    /* A pattern that is not one of its format's: tf32's padding bits, bits above f16's width. */
    src[1] = 0x3f800001u;
    st = er_opencl_convert_u64(ER_FMT_TF32, ER_FMT_BF16, src, dst, 2, 0, 0, -1, msg, sizeof msg);
    ck_assert_msg(st == ER_EPATTERN && strstr(msg, "src[1]"), "tf32 padding: %s (%s)", er_status_string(st), msg);
    src[1] = 0x10000u;
    ck_assert_int_eq(er_opencl_convert_u64(ER_FMT_F16, ER_FMT_BF16, src, dst, 2, 0, 0, -1, msg, sizeof msg),
                     ER_EPATTERN);
}
END_TEST

START_TEST(test_describe)
{
    char buf[8192], tiny[16];
    er_status st = er_opencl_describe(buf, sizeof buf);
    ck_assert_msg(st == ER_OK, "er_opencl_describe: %s (%s)", er_status_string(st), buf);
    ck_assert_msg(strstr(buf, "device 0:") != NULL, "er_opencl_describe: %s", buf);
    printf("%s", buf);
    st = er_opencl_describe(tiny, sizeof tiny);
    ck_assert_int_eq(st, ER_OK);
    ck_assert_uint_eq(strlen(tiny), sizeof tiny - 1);
    ck_assert_int_eq(er_opencl_describe(NULL, 10), ER_EINVAL);
    ck_assert_int_eq(er_opencl_describe(tiny, 0), ER_EINVAL);
}
END_TEST

static Suite *er_suite_(void)
{
    Suite *s = suite_create("opencl_convert");
    TCase *batch = tcase_create("batch");
    TCase *uniform = tcase_create("uniform");
    TCase *errors = tcase_create("errors");
    tcase_add_unchecked_fixture(batch, er_batch_setup_, er_batch_teardown_);
    tcase_add_test(batch, test_batch_bit_identical);
    tcase_add_test(batch, test_batch_chunked);
    tcase_set_timeout(batch, 600);
    tcase_add_test(uniform, test_u64_f32_to_bf16);
    tcase_add_test(uniform, test_u64_other_pairs);
    tcase_set_timeout(uniform, 600);
    tcase_add_test(errors, test_errors);
    tcase_add_test(errors, test_describe);
    suite_add_tcase(s, errors);
    suite_add_tcase(s, batch);
    suite_add_tcase(s, uniform);
    return s;
}

/* 0: a device works; 77: no platform or no device (skip); 1: EXACTREF_REQUIRE_OPENCL=1 and none. */
static int er_probe_(void)
{
    const char *req = getenv("EXACTREF_REQUIRE_OPENCL");
    int required = req && strcmp(req, "1") == 0;
    uint32_t spec = ER_BATCH_SPEC(ER_FMT_F32, ER_FMT_BF16, 0, 0), fl = 0;
    uint64_t src = 0x3f800000u, dst = 0;
    char msg[ER_MSG];
    er_status st = er_opencl_describe(msg, sizeof msg);
    if (st == ER_OK) st = er_opencl_convert_mixed(&spec, &src, &dst, &fl, 1, -1, msg, sizeof msg);
    msg[strcspn(msg, "\n")] = '\0'; /* describe ends its lines with one */
    if (st != ER_ENODEVICE) return 0; /* working, or failing in a way the tests will report */
    if (required) {
        printf("FAIL: no OpenCL platform or device, and EXACTREF_REQUIRE_OPENCL=1 (%s)\n", msg);
        return 1;
    }
    printf("SKIP: no OpenCL platform or device (%s); set EXACTREF_REQUIRE_OPENCL=1 to make this a failure\n",
           msg);
    return 77;
}

int main(void)
{
    SRunner *sr;
    int failed, probe = er_probe_();
    if (probe) return probe;
    sr = srunner_create(er_suite_());
    /* Never fork: an OpenCL runtime (its threads, its driver state) does not survive fork(). */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
