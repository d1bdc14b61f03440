/* test_bounds_routes.c: normal's and any_order's bounds on the CPU give the same bits by every route
 * (cpu/cpu_bounds.c): S taken from the reference (src/result.c keeps it) or formed again
 * (EXACTREF_NO_KEEP_S=1); normal's NT through a binary32 product and the decision of exact_el_tf, or
 * the exact binary64 product (EXACTREF_BOUNDS_NO_F32=1); the BLAS, or the hand-written kernel and
 * bounds_rows (EXACTREF_GEMM=builtin); the first pass eight columns at a time (AVX-512, where the
 * processor has it), four (AVX2: EXACTREF_NO_AVX512=1 where AVX-512 is there) or one element at a
 * time (EXACTREF_NO_SIMD=1).  Random problems (seed from EXACTREF_SEED, printed) of every
 * low-precision input format, with and without C, three output formats and two directions, small and
 * larger k, and data built to make the binary32 decision fail (the weight of the first two terms,
 * where normal's radius meets any_order's) or the finish leave its common case (near the compute
 * format's top, tiny values, specials).  Every bounds array compared byte for byte. */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "er_test.h"
#include "er_test_prob.h"

static uint64_t seed;

typedef struct {
    double *radius, *tolerance;
    uint64_t *low, *high;
    unsigned char *fl;
} snap;

static void snap_take(snap *s, const er_bounds *b)
{
    size_t c = (size_t)b->count;
    s->radius = malloc(8 * (c ? c : 1));
    s->tolerance = malloc(8 * (c ? c : 1));
    s->low = malloc(8 * (c ? c : 1));
    s->high = malloc(8 * (c ? c : 1));
    s->fl = malloc(4 * (c ? c : 1));
    ck_assert(s->radius && s->tolerance && s->low && s->high && s->fl);
    memcpy(s->radius, b->radius, 8 * c);
    memcpy(s->tolerance, b->tolerance, 8 * c);
    memcpy(s->low, b->low, 8 * c);
    memcpy(s->high, b->high, 8 * c);
    for (size_t i = 0; i < c; i++) {
        s->fl[4 * i] = b->has_range[i];
        s->fl[4 * i + 1] = b->may_pinf[i];
        s->fl[4 * i + 2] = b->may_ninf[i];
        s->fl[4 * i + 3] = b->may_nan[i];
    }
}

static void snap_free(snap *s)
{
    free(s->radius), free(s->tolerance), free(s->low), free(s->high), free(s->fl);
}

/* The bounds of P under standard std (compute: -1 the default) with the environment as set now. */
static void bounds_of(prob *P, const char *std, int compute, int64_t count, snap *out)
{
    er_tensor D;
    unsigned char *dm = calloc((size_t)(count ? count : 1), 8); /* up to f64 outputs */
    er_mma_args a;
    er_result *r = NULL;
    er_tol_opts o;
    const er_bounds *b = NULL;
    char msg[512] = "";
    ck_assert(dm != NULL);
    D = P->batch ? er_tensor_3d(P->fd, P->batch, P->m, P->n, dm) : er_tensor_2d(P->fd, P->m, P->n, dm);
    prob_args(P, &a, &D, ER_BACKEND_CPU);
    ck_assert_msg(er_result_create(&a, &r, msg, sizeof msg) == ER_OK, "er_result_create: %s", msg);
    er_tol_opts_init(&o);
    ck_assert(er_standard_parse(std, &o.standard, msg, sizeof msg) == ER_OK);
    o.compute = compute;
    ck_assert_msg(er_result_bounds(r, &o, &b, msg, sizeof msg) == ER_OK, "er_result_bounds: %s", msg);
    snap_take(out, b);
    er_result_free(r);
    free(dm);
}

static void same(const snap *x, const snap *y, int64_t c, const char *what, const char *route)
{
    for (int64_t i = 0; i < c; i++) {
        int ok = !memcmp(&x->radius[i], &y->radius[i], 8) && !memcmp(&x->tolerance[i], &y->tolerance[i], 8) &&
                 x->low[i] == y->low[i] && x->high[i] == y->high[i] && !memcmp(x->fl + 4 * i, y->fl + 4 * i, 4);
        ck_assert_msg(ok, "%s: route %s differs at element %lld: radius %a / %a, tolerance %a / %a, low %llx / %llx, "
                      "high %llx / %llx (seed 0x%llx)", what, route, (long long)i, x->radius[i], y->radius[i],
                      x->tolerance[i], y->tolerance[i], (unsigned long long)x->low[i], (unsigned long long)y->low[i],
                      (unsigned long long)x->high[i], (unsigned long long)y->high[i], (unsigned long long)seed);
    }
}

/* Row 0 of A and column 0 of B weighted on their first two terms (normal's radius near any_order's). */
static void heavy_head(prob *P)
{
    er_tensor *A = &P->A.t, *B = &P->B.t;
    int ba = sbytes(A->format), bb = sbytes(B->format);
    uint64_t big = er_convert(ER_FMT_F64, A->format, UINT64_C(0x4010000000000000), ER_RND_NEAREST_EVEN, 0).bits; /* 4 */
    uint64_t tiny = er_convert(ER_FMT_F64, A->format, UINT64_C(0x3F10000000000000), ER_RND_NEAREST_EVEN, 0).bits; /* 2^-14 */
    uint64_t bigb = er_convert(ER_FMT_F64, B->format, UINT64_C(0x4000000000000000), ER_RND_NEAREST_EVEN, 0).bits;
    for (int64_t i = 0; i < P->m && i < 3; i++)
        for (int64_t p = 0; p < P->k; p++)
            put_((unsigned char *)A->data + (size_t)(i * A->strides[A->ndim - 2] + p * A->strides[A->ndim - 1]) * ba, ba,
                 p < 2 ? big : tiny);
    for (int64_t p = 0; p < P->k && p < 2; p++)
        for (int64_t j = 0; j < P->n && j < 3; j++)
            put_((unsigned char *)B->data + (size_t)(p * B->strides[B->ndim - 2] + j * B->strides[B->ndim - 1]) * bb, bb,
                 bigb);
}

START_TEST(routes)
{
    static const int fins[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F32};
    static const int fouts[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F64};
    static const int64_t ks[] = {1, 2, 3, 4, 5, 17, 64, 300, 1000};
    uint64_t st = seed;
    int cases = getenv("EXACTREF_TEST_QUICK") ? 40 : 160;
    for (int t = 0; t < cases; t++) {
        prob P;
        memset(&P, 0, sizeof P);
        P.fa = fins[below(&st, 5)];
        P.fb = below(&st, 3) ? P.fa : fins[below(&st, 5)];
        P.fc = below(&st, 3) == 0 ? (below(&st, 2) ? ER_FMT_F32 : ER_FMT_BF16) : -1;
        P.fd = fouts[below(&st, 4)];
        P.fs = -1;
        P.dir = below(&st, 5) ? ER_RND_NEAREST_EVEN : ER_RND_NEGATIVE_INF;
        P.opts = 0;
        P.batch = below(&st, 6) == 0 ? 2 : 0;
        P.m = 1 + (int64_t)below(&st, 24);
        P.n = 1 + (int64_t)below(&st, 40); /* past 8, 16, 24, 32: the first pass in groups of eight */
        P.k = ks[below(&st, 9)];
        P.mode = (int)below(&st, 5);
        P.spec = below(&st, 4) == 0 ? 3 : 0;
        P.at = (int)below(&st, 2);
        prob_make(&P, &st);
        if (below(&st, 3) == 0) heavy_head(&P);
        const char *std = below(&st, 3) ? "normal" : "any_order";
        int compute = below(&st, 4) == 0 ? ER_FMT_F16 : -1;
        int64_t count = (P.batch ? P.batch : 1) * P.m * P.n;
        char what[200];
        snprintf(what, sizeof what, "case %d: %s, %s x %s, C %d, out %s, dir %d, %lldx%lldx%lld (batch %lld), mode %d",
                 t, std, er_format_name(P.fa), er_format_name(P.fb), P.fc, er_format_name(P.fd), P.dir,
                 (long long)P.m, (long long)P.n, (long long)P.k, (long long)P.batch, P.mode);
        snap base, other;
        unsetenv("EXACTREF_NO_KEEP_S");
        unsetenv("EXACTREF_BOUNDS_NO_F32");
        unsetenv("EXACTREF_GEMM");
        unsetenv("EXACTREF_NO_AVX512");
        unsetenv("EXACTREF_NO_SIMD");
        bounds_of(&P, std, compute, count, &base);
        setenv("EXACTREF_NO_KEEP_S", "1", 1);
        bounds_of(&P, std, compute, count, &other);
        same(&base, &other, count, what, "S formed again");
        snap_free(&other);
        unsetenv("EXACTREF_NO_KEEP_S");
        setenv("EXACTREF_BOUNDS_NO_F32", "1", 1);
        bounds_of(&P, std, compute, count, &other);
        same(&base, &other, count, what, "NT by the binary64 product");
        snap_free(&other);
        unsetenv("EXACTREF_BOUNDS_NO_F32");
        setenv("EXACTREF_GEMM", "builtin", 1);
        bounds_of(&P, std, compute, count, &other);
        same(&base, &other, count, what, "hand-written kernel");
        snap_free(&other);
        unsetenv("EXACTREF_GEMM");
        setenv("EXACTREF_NO_AVX512", "1", 1);
        bounds_of(&P, std, compute, count, &other);
        same(&base, &other, count, what, "first pass without AVX-512");
        snap_free(&other);
        unsetenv("EXACTREF_NO_AVX512");
        setenv("EXACTREF_NO_SIMD", "1", 1);
        bounds_of(&P, std, compute, count, &other);
        same(&base, &other, count, what, "first pass one element at a time");
        snap_free(&other);
        unsetenv("EXACTREF_NO_SIMD");
        snap_free(&base);
        prob_free(&P);
    }
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_bounds_routes");
    Suite *s = suite_create("bounds_routes");
    TCase *tc = tcase_create("routes");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, routes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
