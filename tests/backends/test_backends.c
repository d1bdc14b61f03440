/* test_backends.c: the backend-parametrised test: the suites of mma (test_backend_mma.c), normal()
 * (test_backend_normal.c) and the bounds (test_backend_bounds.c, test_backend_sweep.c) run on every
 * backend present, each against the CPU's bits, and on the CPU against the independent references
 * (the long accumulator against the fast path and IEEE 754's special cases; normal() against the
 * host's binary64 arithmetic, normal_ref.c; the CPU's bounds have theirs in tests/result).
 *
 * The CPU is always present.  OpenCL runs where a platform with a device is found (else it is
 * skipped, or with EXACTREF_REQUIRE_OPENCL=1 the test fails); CUDA where the backend module and a GPU
 * are found (EXACTREF_REQUIRE_CUDA=1: fail without); the CUDA module's host pass (the kernels'
 * per-element functions compiled by nvcc for the host, er_cuda_set_host_pass) wherever the module
 * is found, and it must be found when EXACTREF_CUDA_MODULE names it (ctest does in a CUDA build).
 * EXACTREF_OPENCL_DEVICE and EXACTREF_CUDA_DEVICE pick the devices.  Check never forks here: a
 * device runtime does not survive fork().
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_cuda_backend.h" /* er_cuda_set_host_pass */
#include "er_tb.h"
#include "er_test.h"
#include "exactref/exactref.h"

const er_tb_backend *er_tb;

static const er_tb_backend backends[] = {
    {"cpu", "CPU", ER_BACKEND_CPU, 0, 0, 0, NULL, NULL, NULL},
    {"opencl", "OpenCL", ER_BACKEND_OPENCL, 0, 1, 0, "EXACTREF_OPENCL_MAX_CHUNK", "EXACTREF_OPENCL_DEVICE",
     "no device 100000"},
    {"cuda", "CUDA", ER_BACKEND_CUDA, 0, 1, 1, "EXACTREF_CUDA_MAX_CHUNK", "EXACTREF_CUDA_DEVICE",
     "no CUDA device 100000"},
    {"cuda_host", "CUDA host pass", ER_BACKEND_CUDA, 1, 0, 1, "EXACTREF_CUDA_MAX_CHUNK", NULL, NULL},
};

uint64_t er_tb_seed(const char *suite, const char *test)
{
    char name[128];
    snprintf(name, sizeof name, "%s_%s/%s", er_tb->name, suite, test);
    return er_test_seed(name);
}

void er_tb_make_opts(er_tol_opts *o, const er_tb_topt *t)
{
    char msg[8192];
    er_tol_opts_init(o);
    ck_assert_msg(er_standard_parse(t->std, &o->standard, msg, sizeof msg) == ER_OK, "standard %s: %s", t->std, msg);
    o->compute = t->compute;
    o->flush_to_zero = t->ftz;
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* One engine call on be: its status, msg its sentence. */
static er_status probe_call(const er_tb_backend *be, char *msg, size_t size)
{
    uint16_t a = 0x3f80, b = 0x3f80;
    float d = 0;
    er_tensor ta = er_tensor_2d(ER_FMT_BF16, 1, 1, &a), tb = er_tensor_2d(ER_FMT_BF16, 1, 1, &b);
    er_tensor td = er_tensor_2d(ER_FMT_F32, 1, 1, &d);
    er_mma_args x;
    er_status st;
    msg[0] = '\0';
    er_mma_args_init(&x);
    x.a = &ta;
    x.b = &tb;
    x.d = &td;
    x.backend = be->backend;
    x.msg = msg;
    x.msg_size = size;
    st = er_mma(&x);
    if (st == ER_OK && d != 1.0f) {
        snprintf(msg, size, "1 x 1 gives %g", (double)d);
        return ER_EDEVICE;
    }
    return st;
}

/* 1: run the suites on be; 0: skip it (the reason printed); -1: a required backend is absent. */
static int present(const er_tb_backend *be)
{
    char msg[8192];
    er_status st;
    if (be->backend == ER_BACKEND_CPU) return 1;
    er_cuda_set_host_pass(be->host_pass);
    if (be->backend == ER_BACKEND_OPENCL) {
        int required = env_on("EXACTREF_REQUIRE_OPENCL");
        st = er_opencl_describe(msg, sizeof msg);
        if (st == ER_OK && strstr(msg, "device 0")) {
            printf("%s", msg);
            return 1;
        }
        msg[strcspn(msg, "\n")] = '\0';
        printf("%s %s: no OpenCL platform or device (%s)%s\n", required ? "FAIL" : "SKIP", be->label, msg,
               required ? ", and EXACTREF_REQUIRE_OPENCL=1" : "; EXACTREF_REQUIRE_OPENCL=1 makes this a failure");
        return required ? -1 : 0;
    }
    st = probe_call(be, msg, sizeof msg);
    printf("probe %s: %s%s%s\n", be->label, er_status_string(st), msg[0] ? ": " : "", msg);
    if (be->host_pass) {
        if (st == ER_OK) return 1;
        if (getenv("EXACTREF_CUDA_MODULE")) {
            printf("FAIL %s: EXACTREF_CUDA_MODULE names the module, and the host pass cannot start\n", be->label);
            return -1;
        }
        printf("SKIP %s: no CUDA backend module\n", be->label);
        return 0;
    }
    if (st != ER_ENODEVICE && st != ER_EUNSUPPORTED) return 1; /* working, or failing as the tests report */
    if (env_on("EXACTREF_REQUIRE_CUDA")) {
        printf("FAIL %s: no CUDA module or device, and EXACTREF_REQUIRE_CUDA=1\n", be->label);
        return -1;
    }
    printf("SKIP %s: no CUDA module or device; EXACTREF_REQUIRE_CUDA=1 makes this a failure\n", be->label);
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void)
{
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        const er_tb_backend *be = &backends[i];
        double t = now_s();
        int p = present(be);
        if (p < 0) failed++;
        if (p <= 0) continue;
        er_tb = be;
        {
            SRunner *sr = srunner_create(er_tb_mma_suite());
            srunner_add_suite(sr, er_tb_normal_suite());
            if (be->backend != ER_BACKEND_CPU) {
                srunner_add_suite(sr, er_tb_bounds_suite());
                srunner_add_suite(sr, er_tb_sweep_suite());
            }
            srunner_set_fork_status(sr, CK_NOFORK);
            srunner_run_all(sr, CK_VERBOSE);
            failed += srunner_ntests_failed(sr);
            srunner_free(sr);
        }
        er_tb_mma_summary();
        er_tb_normal_summary();
        if (be->backend != ER_BACKEND_CPU) {
            er_tb_bounds_summary();
            er_tb_sweep_summary();
        }
        printf("%s: done in %.2f s\n", be->label, now_s() - t);
        ran++;
    }
    er_cuda_set_host_pass(0);
    printf("%d backends run, %d failures\n", ran, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
