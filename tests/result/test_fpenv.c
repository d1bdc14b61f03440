/* test_fpenv.c: the library computes in the default floating-point environment whatever the caller's
 * (host/er_fpenv.h).  Random problems (seed from EXACTREF_SEED, printed) of low-precision and f32
 * inputs, with specials and tiny values, C or not, several outputs and directions: the rounded answer
 * and the bounds of normal, any_order and three engine models, first in the default environment, then
 * with the caller's environment set to round toward +infinity, flush to zero, denormals read as zero
 * and FE_INVALID unmasked (x86: MXCSR 0xDF40; elsewhere the rounding direction only).  Every byte must
 * match, the call must not trap (an unmasked invalid operation would end the test with SIGFPE), and
 * the caller's environment must be as it was after each call. */
#include <check.h>
#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "er_test.h"
#include "er_test_prob.h"

#if (defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MXCSR 1
#endif

static uint64_t seed;

/* what a call of the library's must leave as it found */
typedef struct {
    unsigned csr;
    int round;
} env;

static env env_now(void)
{
    env e;
#ifdef MXCSR
    e.csr = _mm_getcsr();
#else
    e.csr = 0;
#endif
    e.round = fegetround();
    return e;
}

/* the caller's odd environment */
static void env_odd(void)
{
#ifdef MXCSR
    _mm_setcsr(0xDF40u); /* toward +inf, FTZ, DAZ, FE_INVALID unmasked, no flags */
#else
    ck_assert(fesetround(FE_UPWARD) == 0);
#endif
}

static void env_default(void)
{
#ifdef MXCSR
    _mm_setcsr(0x1F80u);
#endif
    ck_assert(fesetround(FE_TONEAREST) == 0);
}

static void env_same(env before, const char *what, int t)
{
    env after = env_now();
    /* the control bits (6 - 15); the six exception flags are any computation's to set */
    ck_assert_msg((after.csr & 0xFFC0u) == (before.csr & 0xFFC0u) && after.round == before.round,
                  "case %d: %s changed the caller's environment: MXCSR %#x -> %#x, rounding %d -> %d (seed 0x%llx)", t,
                  what, before.csr, after.csr, before.round, after.round, (unsigned long long)seed);
}

/* D's bytes, then every bounds array of each standard, appended to out (*n bytes) */
static void run(prob *P, int odd, unsigned char **out, size_t *n, int t)
{
    static const char *const stds[] = {"normal", "any_order", "volta", "hopper", "cdna3"};
    int64_t count = (P->batch ? P->batch : 1) * P->m * P->n;
    size_t db = (size_t)count * (size_t)sbytes(P->fd), cap = db + 5 * (size_t)count * 36 + 64, len = 0;
    unsigned char *buf = malloc(cap), *dm = calloc((size_t)(count ? count : 1), 8);
    er_tensor D;
    er_mma_args a;
    er_result *r = NULL;
    char msg[512] = "";
    env before;
    ck_assert(buf && dm);
    D = P->batch ? er_tensor_3d(P->fd, P->batch, P->m, P->n, dm) : er_tensor_2d(P->fd, P->m, P->n, dm);
    prob_args(P, &a, &D, ER_BACKEND_CPU);
    if (odd) env_odd();
    before = env_now();
    er_status st = er_result_create(&a, &r, msg, sizeof msg);
    env_same(before, "er_result_create", t);
    env_default();
    ck_assert_msg(st == ER_OK, "case %d: er_result_create: %s", t, msg);
    memcpy(buf, dm, db);
    len = db;
    for (int q = 0; q < 5; q++) {
        er_tol_opts o;
        const er_bounds *b = NULL;
        er_tol_opts_init(&o);
        ck_assert(er_standard_parse(stds[q], &o.standard, msg, sizeof msg) == ER_OK);
        if (odd) env_odd();
        before = env_now();
        st = er_result_bounds(r, &o, &b, msg, sizeof msg);
        env_same(before, stds[q], t);
        env_default();
        ck_assert_msg(st == ER_OK, "case %d: er_result_bounds (%s): %s", t, stds[q], msg);
        size_t c = (size_t)b->count;
        ck_assert(len + 36 * c <= cap);
        memcpy(buf + len, b->radius, 8 * c), len += 8 * c;
        memcpy(buf + len, b->tolerance, 8 * c), len += 8 * c;
        memcpy(buf + len, b->low, 8 * c), len += 8 * c;
        memcpy(buf + len, b->high, 8 * c), len += 8 * c;
        memcpy(buf + len, b->has_range, c), len += c;
        memcpy(buf + len, b->may_pinf, c), len += c;
        memcpy(buf + len, b->may_ninf, c), len += c;
        memcpy(buf + len, b->may_nan, c), len += c;
    }
    er_result_free(r);
    free(dm);
    *out = buf;
    *n = len;
}

START_TEST(odd_environment)
{
    static const int fins[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F32};
    static const int fouts[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F64};
    static const int64_t ks[] = {1, 3, 17, 64, 300};
    uint64_t st = seed;
    int cases = getenv("EXACTREF_TEST_QUICK") ? 10 : 30;
    for (int t = 0; t < cases; t++) {
        prob P;
        memset(&P, 0, sizeof P);
        P.fa = fins[below(&st, 4)];
        P.fb = below(&st, 3) ? P.fa : fins[below(&st, 4)];
        P.fc = below(&st, 3) == 0 ? ER_FMT_F32 : -1;
        P.fd = fouts[below(&st, 3)];
        P.fs = -1;
        P.dir = below(&st, 4) ? ER_RND_NEAREST_EVEN : ER_RND_POSITIVE_INF;
        P.m = 1 + (int64_t)below(&st, 20);
        P.n = 1 + (int64_t)below(&st, 40);
        P.k = ks[below(&st, 5)];
        P.mode = (int)below(&st, 5);
        P.spec = below(&st, 4) == 0 ? 3 : 0;
        prob_make(&P, &st);
        unsigned char *x, *y;
        size_t nx, ny;
        env_default();
        run(&P, 0, &x, &nx, t);
        run(&P, 1, &y, &ny, t);
        ck_assert(nx == ny);
        for (size_t i = 0; i < nx; i++)
            ck_assert_msg(x[i] == y[i],
                          "case %d (%s x %s, out %s, %lldx%lldx%lld, mode %d): byte %zu of %zu differs in the caller's "
                          "environment (seed 0x%llx)",
                          t, er_format_name(P.fa), er_format_name(P.fb), er_format_name(P.fd), (long long)P.m,
                          (long long)P.n, (long long)P.k, P.mode, i, nx, (unsigned long long)seed);
        free(x);
        free(y);
        prob_free(&P);
    }
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_fpenv");
    Suite *s = suite_create("fpenv");
    TCase *tc = tcase_create("fpenv");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, odd_environment);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
