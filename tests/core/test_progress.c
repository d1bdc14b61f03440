/* test_progress.c: the progress hook (er_mma_args.progress, er_result_set_progress): its fractions
 * increase, end at exactly 1, come from one thread at a time, and change no bit of the reference or
 * of the bounds (compared with the same computations without a hook). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_test.h"
#include "exactref/exactref.h"

#define MAXCALLS 4096

/* What the hook saw. */
typedef struct {
    pthread_mutex_t lock;
    int inside;  /* a call in progress (two at once would be an error) */
    int overlap; /* calls that found another in progress */
    int n;
    double f[MAXCALLS];
} seen;

static void hook(void *ctx, double fraction)
{
    seen *s = (seen *)ctx;
    pthread_mutex_lock(&s->lock);
    if (s->inside) s->overlap++;
    s->inside = 1;
    pthread_mutex_unlock(&s->lock);
    struct timespec ts = {0, 200000}; /* 0.2 ms: gives other threads the chance to overlap */
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&s->lock);
    if (s->n < MAXCALLS) s->f[s->n] = fraction;
    s->n++;
    s->inside = 0;
    pthread_mutex_unlock(&s->lock);
}

static void seen_init(seen *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

/* The calls' fractions increase strictly within (0, 1] and the last is 1; at least `least` calls. */
static void check_seen(const seen *s, int least, const char *what)
{
    ck_assert_msg(s->n >= least && s->n <= MAXCALLS, "%s: %d calls, expected at least %d", what, s->n, least);
    ck_assert_msg(s->overlap == 0, "%s: %d calls overlapped", what, s->overlap);
    for (int i = 0; i < s->n; i++) {
        ck_assert_msg(s->f[i] > 0 && s->f[i] <= 1, "%s: call %d: fraction %.17g", what, i, s->f[i]);
        if (i) ck_assert_msg(s->f[i] > s->f[i - 1], "%s: call %d: %.17g after %.17g", what, i, s->f[i], s->f[i - 1]);
    }
    ck_assert_msg(s->f[s->n - 1] == 1.0, "%s: the last fraction is %.17g", what, s->f[s->n - 1]);
}

/* bf16 patterns of random values over a few binades, both signs; some zeros. */
static void fill16(uint16_t *v, size_t n, uint64_t *st)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = er_test_rand(st);
        v[i] = (r & 0xF00) == 0 ? 0 : (uint16_t)(((r & 1) << 15) | ((uint64_t)(120 + (r >> 1) % 12) << 7) | ((r >> 8) & 0x7f));
    }
}

static void same_bounds(const er_bounds *x, const er_bounds *y, const char *what)
{
    size_t n = (size_t)x->count;
    ck_assert_int_eq(x->count, y->count);
    ck_assert_msg(!memcmp(x->radius, y->radius, n * sizeof(double)) && !memcmp(x->tolerance, y->tolerance, n * sizeof(double)) &&
                  !memcmp(x->low, y->low, n * 8) && !memcmp(x->high, y->high, n * 8) && !memcmp(x->has_range, y->has_range, n) &&
                  !memcmp(x->may_pinf, y->may_pinf, n) && !memcmp(x->may_ninf, y->may_ninf, n) && !memcmp(x->may_nan, y->may_nan, n),
                  "%s: the bounds differ with a hook", what);
}

/*
 * One problem (batch x m x k times k x n, bf16 -> f32) with and without a hook, on `backend`, with
 * `threads` and `strategy`: the reference's bits and the bounds (standard std) are the same, and each
 * hook saw a proper sequence.  Returns 0, or 77 when the backend is not there.
 */
static int one(const char *name, int backend, int threads, int strategy, int64_t batch, int64_t m, int64_t k, int64_t n,
               const char *std, int least)
{
    uint64_t st = er_test_seed(name);
    size_t na = (size_t)(batch * m * k), nb = (size_t)(batch * k * n), nd = (size_t)(batch * m * n);
    uint16_t *av = malloc(na * 2), *bv = malloc(nb * 2);
    float *d0 = calloc(nd, 4), *d1 = calloc(nd, 4);
    char msg[512];
    ck_assert(av && bv && d0 && d1);
    fill16(av, na, &st);
    fill16(bv, nb, &st);
    er_tensor A = batch > 1 ? er_tensor_3d(ER_FMT_BF16, batch, m, k, av) : er_tensor_2d(ER_FMT_BF16, m, k, av);
    er_tensor B = batch > 1 ? er_tensor_3d(ER_FMT_BF16, batch, k, n, bv) : er_tensor_2d(ER_FMT_BF16, k, n, bv);
    er_tensor D0 = batch > 1 ? er_tensor_3d(ER_FMT_F32, batch, m, n, d0) : er_tensor_2d(ER_FMT_F32, m, n, d0);
    er_tensor D1 = batch > 1 ? er_tensor_3d(ER_FMT_F32, batch, m, n, d1) : er_tensor_2d(ER_FMT_F32, m, n, d1);
    er_mma_args args;
    er_result *r0 = NULL, *r1 = NULL;
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.backend = backend;
    args.threads = threads;
    args.strategy = strategy;
    args.d = &D0;
    int rc = er_result_create(&args, &r0, msg, sizeof msg);
    if (rc != ER_OK && backend != ER_BACKEND_CPU) {
        free(av), free(bv), free(d0), free(d1);
        return 77;
    }
    ck_assert_msg(rc == ER_OK, "%s: %s", name, msg);
    seen *s = malloc(sizeof *s);
    ck_assert(s);
    seen_init(s);
    args.d = &D1;
    args.progress = hook;
    args.progress_ctx = s;
    ck_assert_msg(er_result_create(&args, &r1, msg, sizeof msg) == ER_OK, "%s: %s", name, msg);
    ck_assert_msg(!memcmp(d0, d1, nd * 4), "%s: the reference differs with a hook", name);
    check_seen(s, backend == ER_BACKEND_CPU ? least : 1, name); /* devices: their own granularity */

    er_tol_opts o;
    er_tol_opts_init(&o);
    ck_assert_int_eq(er_standard_parse(std, &o.standard, msg, sizeof msg), ER_OK);
    const er_bounds *b0, *b1;
    ck_assert_msg(er_result_bounds(r0, &o, &b0, msg, sizeof msg) == ER_OK, "%s: %s", name, msg);
    seen_init(s);
    er_result_set_progress(r1, hook, s);
    ck_assert_msg(er_result_bounds(r1, &o, &b1, msg, sizeof msg) == ER_OK, "%s: %s", name, msg);
    char bname[96];
    snprintf(bname, sizeof bname, "%s (bounds)", name);
    check_seen(s, backend == ER_BACKEND_CPU ? least : 1, bname);
    same_bounds(b0, b1, name);
    /* a hook removed is not called */
    seen_init(s);
    er_result_set_progress(r1, NULL, NULL);
    o.standard.kind = ER_STD_ANY_ORDER;
    snprintf(o.standard.name, sizeof o.standard.name, "any_order");
    ck_assert_msg(er_result_bounds(r1, &o, &b1, msg, sizeof msg) == ER_OK, "%s: %s", name, msg);
    ck_assert_int_eq(s->n, 0);
    er_result_free(r0);
    er_result_free(r1);
    free(s);
    free(av), free(bv), free(d0), free(d1);
    return 0;
}

/* The exact accumulator for every element, one thread: a report per row (96 rows of 96 elements,
 * one report due every 72 elements), so at least 90 calls, the same bits. */
START_TEST(exact_one_thread) { one("progress_exact_one_thread", ER_BACKEND_CPU, 1, ER_STRATEGY_EXACT, 1, 96, 40, 96, "normal", 90); }
END_TEST

/* Several threads racing to report; the fast path; the engine model's bounds (their own row loop). */
START_TEST(threads_fast) { one("progress_threads_fast", ER_BACKEND_CPU, 4, ER_STRATEGY_AUTO, 1, 128, 64, 80, "hopper", 2); }
END_TEST

/* A batch: the bounds run batch by batch, and still increase to exactly 1 across them. */
START_TEST(batched) { one("progress_batched", ER_BACKEND_CPU, 3, ER_STRATEGY_EXACT, 3, 40, 24, 50, "normal", 3); }
END_TEST

/* OpenCL where there is a device (the bounds per tile; a device without fp64 leaves them to the CPU). */
START_TEST(opencl)
{
    if (one("progress_opencl", ER_BACKEND_OPENCL, 0, ER_STRATEGY_AUTO, 2, 48, 32, 40, "normal", 1) == 77)
        fprintf(stderr, "progress_opencl: no OpenCL device: not run\n");
}
END_TEST

/* An integer product (mmai): rows reported, bits unchanged. */
START_TEST(integer_product)
{
    uint64_t st = er_test_seed("progress_integer_product");
    enum { M2 = 70, K2 = 33, N2 = 50 };
    static int8_t a[M2 * K2], b[K2 * N2];
    static int32_t d0[M2 * N2], d1[M2 * N2];
    char msg[512];
    for (int i = 0; i < M2 * K2; i++) a[i] = (int8_t)(er_test_rand(&st) & 0xff);
    for (int i = 0; i < K2 * N2; i++) b[i] = (int8_t)(er_test_rand(&st) & 0xff);
    er_tensor A = er_tensor_2d(ER_FMT_I8, M2, K2, a), B = er_tensor_2d(ER_FMT_I8, K2, N2, b);
    er_tensor D0 = er_tensor_2d(ER_FMT_I32, M2, N2, d0), D1 = er_tensor_2d(ER_FMT_I32, M2, N2, d1);
    er_mma_args args;
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.backend = ER_BACKEND_CPU;
    args.threads = 1;
    args.msg = msg;
    args.msg_size = sizeof msg;
    args.d = &D0;
    ck_assert_msg(er_mma(&args) == ER_OK, "%s", msg);
    seen *s = malloc(sizeof *s);
    ck_assert(s);
    seen_init(s);
    args.d = &D1;
    args.progress = hook;
    args.progress_ctx = s;
    ck_assert(er_mma(&args) == ER_OK);
    ck_assert_msg(!memcmp(d0, d1, sizeof d0), "mmai: the bits differ with a hook");
    check_seen(s, 60, "mmai");
    free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("progress");
    TCase *tc = tcase_create("progress");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, exact_one_thread);
    tcase_add_test(tc, threads_fast);
    tcase_add_test(tc, batched);
    tcase_add_test(tc, opencl);
    tcase_add_test(tc, integer_product);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
