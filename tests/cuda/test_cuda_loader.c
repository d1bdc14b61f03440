/* test_cuda_loader.c: er_mma with ER_BACKEND_CUDA never crashes, prints or exits for want of CUDA: it
 * reports through its status and msg.  Runs everywhere (no GPU needed).
 *
 * In a build without CUDA every CUDA call is ER_EUNSUPPORTED ("this build has no CUDA backend module").
 * ctest runs it with LD_LIBRARY_PATH holding the build's libexactref_cuda.so (found by its plain name,
 * the loader's last place to look) and ER_TEST_NOT_A_MODULE naming a shared object that is not one.
 *   - the module found: ER_ENODEVICE with "no CUDA device: ..." without a driver or device (or ER_OK
 *     and the right answer where there is one);
 *   - EXACTREF_CUDA_MODULE naming a file that does not exist: ER_EUNSUPPORTED, the path in msg;
 *   - EXACTREF_CUDA_MODULE naming a shared object without the entry points: ER_EUNSUPPORTED;
 *   - no msg buffer: the same statuses;
 *   - a bad argument: ER_EINVAL from the validation, before any loading;
 *   - backend AUTO keeps to the CPU.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/config.h"
#include "exactref/exactref.h"

#define ER_MSG 8192

typedef struct {
    uint16_t a[6], b[6];
    float d[4];
    er_tensor ta, tb, td;
    er_mma_args x;
    char msg[ER_MSG];
} small;

/* bf16: a 2 x 3 of 1, b 3 x 2 of 1..: d = a b is 2 x 2 of 6 (d poisoned with -1). */
static void small_init(small *s, int backend)
{
    for (int i = 0; i < 6; i++) s->a[i] = 0x3f80;
    for (int i = 0; i < 6; i++) s->b[i] = 0x4000; /* 2 */
    for (int i = 0; i < 4; i++) s->d[i] = -1;
    s->ta = er_tensor_2d(ER_FMT_BF16, 2, 3, s->a);
    s->tb = er_tensor_2d(ER_FMT_BF16, 3, 2, s->b);
    s->td = er_tensor_2d(ER_FMT_F32, 2, 2, s->d);
    er_mma_args_init(&s->x);
    s->x.a = &s->ta;
    s->x.b = &s->tb;
    s->x.d = &s->td;
    s->x.backend = backend;
    s->x.msg = s->msg;
    s->x.msg_size = sizeof s->msg;
    strcpy(s->msg, "unset");
}

static void check_answer(const small *s)
{
    for (int i = 0; i < 4; i++) ck_assert_msg(s->d[i] == 6.0f, "d[%d] = %g, want 6", i, (double)s->d[i]);
}

START_TEST(test_module_found)
{
    small s;
    int st;
    unsetenv("EXACTREF_CUDA_MODULE");
    small_init(&s, ER_BACKEND_CUDA);
    st = er_mma(&s.x);
    printf("module by the loader's search path: %s: %s\n", er_status_string(st), s.msg);
    if (!ER_HAVE_CUDA) {
        /* a build without CUDA: no module to look for */
        ck_assert_msg(st == ER_EUNSUPPORTED && strstr(s.msg, "no CUDA backend module"), "got %s: %s",
                      er_status_string(st), s.msg);
        return;
    }
    if (st == ER_OK) {
        check_answer(&s);
        ck_assert_str_eq(s.msg, "");
        return;
    }
    ck_assert_msg(st == ER_ENODEVICE, "want ER_ENODEVICE (no device here) or ER_OK, got %s: %s", er_status_string(st),
                  s.msg);
    ck_assert_msg(strstr(s.msg, "no CUDA device") != NULL, "msg: %s", s.msg);
    for (int i = 0; i < 4; i++) ck_assert(s.d[i] == -1.0f); /* nothing written */
    /* and again (the module stays loaded; nothing sticky) */
    small_init(&s, ER_BACKEND_CUDA);
    ck_assert_int_eq(er_mma(&s.x), ER_ENODEVICE);
    /* without a msg buffer */
    s.x.msg = NULL;
    s.x.msg_size = 0;
    ck_assert_int_eq(er_mma(&s.x), ER_ENODEVICE);
}
END_TEST

START_TEST(test_module_missing)
{
    static const char *path = "/nonexistent/exactref-test/libexactref_cuda.so";
    small s;
    int st;
    setenv("EXACTREF_CUDA_MODULE", path, 1);
    small_init(&s, ER_BACKEND_CUDA);
    st = er_mma(&s.x);
    printf("EXACTREF_CUDA_MODULE=%s: %s: %s\n", path, er_status_string(st), s.msg);
    ck_assert_msg(st == ER_EUNSUPPORTED, "got %s: %s", er_status_string(st), s.msg);
    if (ER_HAVE_CUDA) {
        ck_assert_msg(strstr(s.msg, path) != NULL, "the path is not in msg: %s", s.msg);
        ck_assert_msg(strstr(s.msg, "not found") != NULL, "msg: %s", s.msg);
    }
    for (int i = 0; i < 4; i++) ck_assert(s.d[i] == -1.0f);
    /* a tiny msg buffer: truncated, terminated */
    {
        char tiny[8];
        s.x.msg = tiny;
        s.x.msg_size = sizeof tiny;
        ck_assert_int_eq(er_mma(&s.x), ER_EUNSUPPORTED);
        ck_assert_uint_eq(strlen(tiny), sizeof tiny - 1);
        s.x.msg = NULL;
        s.x.msg_size = 0;
        ck_assert_int_eq(er_mma(&s.x), ER_EUNSUPPORTED);
    }
    /* the validation comes first: a bad argument is ER_EINVAL even without the module */
    small_init(&s, ER_BACKEND_CUDA);
    s.x.rounding = 99;
    ck_assert_int_eq(er_mma(&s.x), ER_EINVAL);
    /* AUTO and CPU never go near it */
    small_init(&s, ER_BACKEND_AUTO);
    ck_assert_msg(er_mma(&s.x) == ER_OK, "auto: %s", s.msg);
    check_answer(&s);
    small_init(&s, ER_BACKEND_CPU);
    ck_assert_msg(er_mma(&s.x) == ER_OK, "cpu: %s", s.msg);
    check_answer(&s);
    unsetenv("EXACTREF_CUDA_MODULE");
}
END_TEST

START_TEST(test_not_a_module)
{
    const char *path = getenv("ER_TEST_NOT_A_MODULE");
    small s;
    int st;
    if (!path || !*path || !ER_HAVE_CUDA) {
        printf("ER_TEST_NOT_A_MODULE not set: skipped\n");
        return;
    }
    setenv("EXACTREF_CUDA_MODULE", path, 1);
    small_init(&s, ER_BACKEND_CUDA);
    st = er_mma(&s.x);
    printf("EXACTREF_CUDA_MODULE=%s: %s: %s\n", path, er_status_string(st), s.msg);
    ck_assert_msg(st == ER_EUNSUPPORTED, "got %s: %s", er_status_string(st), s.msg);
    ck_assert_msg(strstr(s.msg, "entry points missing") != NULL, "msg: %s", s.msg);
    unsetenv("EXACTREF_CUDA_MODULE");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda_loader");
    TCase *tc = tcase_create("loader");
    SRunner *sr;
    int failed;
    tcase_add_test(tc, test_module_missing);
    tcase_add_test(tc, test_not_a_module);
    tcase_add_test(tc, test_module_found);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
