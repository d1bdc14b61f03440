/*
 * bench_ab: the tolerance of one standard (er_result_bounds) timed with two or more builds of the
 * shared library in one process, the builds taking turns, so that what slows the machine for a while
 * (another tenant, a change of clock) slows every build alike.
 *
 *   bench_ab STANDARD SET N ROUNDS LIB.so [LIB.so ...]
 *
 *   STANDARD  any name `exactref standards` lists (volta, hopper, cdna3, ...)
 *   SET       narrow, wide or fp8: bench_matmul's data sets (bf16 with exponents in [-8, 8] or
 *             [-40, 40], random sign and significand; uniformly random finite f8E4M3FN patterns)
 *   N         the n of the n x n x n product
 *   ROUNDS    how many times each build runs (a round runs every build once, in the order given)
 *   LIB.so    builds of libexactref.so to compare (copy each to its own path: a build overwrites its
 *             own); the first is the baseline
 *
 * Each run creates the result (the reference, untimed), then times er_result_bounds alone, with the
 * library's defaults (all cores).  Printed per build: the least, the first quartile and the median
 * of the rounds, and the least and the median against the baseline's.  Separate processes timed one
 * after another were useless at the 5% level on the 2-core machine of docs/benchmarks.md (the same
 * build varied by 10% from one minute to the next); taking turns in one process gave differences that
 * repeat.  Not a test: nothing is asserted.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "exactref/exactref.h"

typedef struct {
    const char *path;
    void *h;
    er_tensor (*t2d)(int, int64_t, int64_t, void *);
    void (*args_init)(er_mma_args *);
    er_status (*create)(const er_mma_args *, er_result **, char *, size_t);
    void (*rfree)(er_result *);
    void (*opts_init)(er_tol_opts *);
    er_status (*parse)(const char *, er_standard *, char *, size_t);
    er_status (*bounds)(er_result *, const er_tol_opts *, const er_bounds **, char *, size_t);
} build;

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) { return bench_xorshift64(&rng); }


static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int load(build *b)
{
    b->h = dlopen(b->path, RTLD_NOW | RTLD_LOCAL);
    if (!b->h) {
        fprintf(stderr, "bench_ab: %s\n", dlerror());
        return 0;
    }
#define SYM(f, name)                                                                                     \
    do {                                                                                                 \
        *(void **)&b->f = dlsym(b->h, name);                                                             \
        if (!b->f) {                                                                                     \
            fprintf(stderr, "bench_ab: %s: no symbol %s\n", b->path, name);                              \
            return 0;                                                                                    \
        }                                                                                                \
    } while (0)
    SYM(t2d, "er_tensor_2d");
    SYM(args_init, "er_mma_args_init");
    SYM(create, "er_result_create");
    SYM(rfree, "er_result_free");
    SYM(opts_init, "er_tol_opts_init");
    SYM(parse, "er_standard_parse");
    SYM(bounds, "er_result_bounds");
#undef SYM
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bench_ab STANDARD narrow|wide|fp8 N ROUNDS LIB.so [LIB.so ...]\n");
        return 2;
    }
    const char *std = argv[1], *set = argv[2];
    const int64_t n = atoll(argv[3]);
    const int rounds = atoi(argv[4]), nb = argc - 5;
    const int fp8 = !strcmp(set, "fp8"), span = !strcmp(set, "narrow") ? 8 : !strcmp(set, "wide") ? 40 : 0;
    if (n < 1 || rounds < 1 || (!fp8 && !span)) {
        fprintf(stderr, "bench_ab: bad N, ROUNDS or SET (narrow, wide or fp8)\n");
        return 2;
    }
    const int64_t nn = n * n;
    void *ap = malloc((size_t)nn * 2), *bp = malloc((size_t)nn * 2);
    float *dp = malloc((size_t)nn * sizeof(float));
    build *bl = calloc((size_t)nb, sizeof(build));
    double *t = malloc(sizeof(double) * (size_t)nb * (size_t)rounds);
    if (!ap || !bp || !dp || !bl || !t) {
        fprintf(stderr, "bench_ab: out of memory\n");
        return 3;
    }
    for (int w = 0; w < 2; w++) {
        void *p = w ? bp : ap;
        for (int64_t i = 0; i < nn; i++) {
            if (fp8) {
                uint64_t v;
                do v = next() & 0xffu;
                while (v == 0x7fu || v == 0xffu);
                ((uint8_t *)p)[i] = (uint8_t)v;
            } else {
                uint64_t r = next();
                int e = (int)(r % (uint64_t)(2 * span + 1)) - span;
                ((uint16_t *)p)[i] = (uint16_t)(((r >> 32) & 0x807fu) | ((uint64_t)(127 + e) << 7));
            }
        }
    }
    for (int l = 0; l < nb; l++) {
        bl[l].path = argv[5 + l];
        if (!load(&bl[l])) return 3;
    }
    const int fmt = fp8 ? ER_FMT_F8E4M3FN : ER_FMT_BF16;
    char msg[512];
    for (int r = 0; r < rounds; r++)
        for (int l = 0; l < nb; l++) {
            build *b = &bl[l];
            er_tensor ta = b->t2d(fmt, n, n, ap), tb = b->t2d(fmt, n, n, bp), td = b->t2d(ER_FMT_F32, n, n, dp);
            er_mma_args a;
            er_result *res = NULL;
            er_tol_opts o;
            const er_bounds *bd;
            b->args_init(&a);
            a.a = &ta;
            a.b = &tb;
            a.d = &td;
            if (b->create(&a, &res, msg, sizeof msg) != ER_OK) {
                fprintf(stderr, "bench_ab: %s: er_result_create: %s\n", b->path, msg);
                return 3;
            }
            b->opts_init(&o);
            if (b->parse(std, &o.standard, msg, sizeof msg) != ER_OK) {
                fprintf(stderr, "bench_ab: %s\n", msg);
                return 2;
            }
            double t0 = bench_now();
            er_status st = b->bounds(res, &o, &bd, msg, sizeof msg);
            t[l * rounds + r] = bench_now() - t0;
            b->rfree(res);
            if (st != ER_OK) {
                fprintf(stderr, "bench_ab: %s: er_result_bounds: %s\n", b->path, msg);
                return 3;
            }
        }
    printf("er_result_bounds, %s, %s, n = %lld, %d rounds (seconds)\n", std, set, (long long)n, rounds);
    double base_min = 0, base_med = 0;
    for (int l = 0; l < nb; l++) {
        double *v = t + l * rounds;
        qsort(v, (size_t)rounds, sizeof(double), cmp_d);
        double mn = v[0], q1 = v[rounds / 4], med = v[rounds / 2];
        if (l == 0) base_min = mn, base_med = med;
        printf("  %-40s least %.4f  q1 %.4f  median %.4f  least/base %.3f  median/base %.3f\n", bl[l].path, mn, q1,
               med, mn / base_min, med / base_med);
    }
    return 0;
}
