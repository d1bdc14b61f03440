/* bench_convert.c: array conversion on the CPU path, elements per second per core, against C casts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "exactref/exactref.h"


static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) { return bench_xorshift64(&rng); }

static volatile unsigned sink;

/* Best of `reps` runs of one array conversion, in elements per second. */
static double time_convert(int from, int to, const void *src, void *dst, size_t n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        unsigned fl = 0;
        double t0 = bench_now();
        if (er_convert_array(from, to, src, dst, n, ER_RND_NEAREST_EVEN, 0, &fl, NULL) != ER_OK) {
            fprintf(stderr, "bench_convert: conversion %s -> %s failed\n", er_format_name(from), er_format_name(to));
            exit(3);
        }
        double t = bench_now() - t0;
        if (t < best) best = t;
        sink ^= fl;
    }
    return (double)n / best;
}

#if defined(__FLT16_MAX__)
typedef _Float16 er_half;
/* name(src, dst, n, reps): the compiler's cast from S to D, elements per second, best of reps */
#define TIME_CAST(name, S, D)                                                                            \
    static double name(const S *src, D *dst, size_t n, int reps)                                         \
    {                                                                                                    \
        double best = 1e30;                                                                              \
        for (int r = 0; r < reps; r++) {                                                                 \
            double t0 = bench_now();                                                                     \
            for (size_t i = 0; i < n; i++) dst[i] = (D)src[i];                                           \
            double t = bench_now() - t0;                                                                 \
            if (t < best) best = t;                                                                      \
            sink ^= (unsigned)dst[n / 2];                                                                \
        }                                                                                                \
        return (double)n / best;                                                                         \
    }
TIME_CAST(time_cast_f32_f16, float, er_half)
TIME_CAST(time_cast_f16_f32, er_half, float)
#endif

/* One line of the table: the conversion's rate, and the C cast's with the ratio where there is one. */
static void print_row(const char *name, double eps, double cast)
{
    if (cast > 0)
        printf("%-24s %14.1f %14.1f %10.2f\n", name, eps / 1e6, cast / 1e6, eps / cast);
    else
        printf("%-24s %14.1f %14s %10s\n", name, eps / 1e6, "-", "-");
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    int reps = 5;
    uint32_t *f32 = malloc(n * 4);
    uint64_t *wide = malloc(n * 8);
    uint16_t *h = malloc(n * 2);
    uint8_t *b = malloc(n);
    uint32_t *back = malloc(n * 4);
    if (!f32 || !wide || !h || !b || !back) {
        fprintf(stderr, "bench_convert: out of memory for n = %zu\n", n);
        return 3;
    }
    printf("exactref %s: array conversion on the CPU path, one thread, n = %zu, best of %d\n", er_version(), n, reps);
    printf("%-24s %14s %14s %10s\n", "conversion", "Melem/s/core", "C cast", "ratio");
    struct { int from, to; void *dst; } cases[] = {
        {ER_FMT_F32, ER_FMT_BF16, h}, {ER_FMT_F32, ER_FMT_F16, h},
        {ER_FMT_F32, ER_FMT_F8E4M3FN, b}, {ER_FMT_F32, ER_FMT_F8E5M2, b},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char name[64];
        er_format_info fi;
        er_format_get_info(cases[c].to, &fi);
        /* Random f32 values spread over the target's normal binades, as a scaled quantisation
         * feeds it (each binade equally likely, random sign and significand). */
        int lo = fi.emin < -126 ? -126 : fi.emin, hi = fi.emax > 127 ? 127 : fi.emax;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = (uint32_t)next();
            uint32_t e = (uint32_t)(127 + lo + (int)(next() % (uint64_t)(hi - lo + 1)));
            f32[i] = (r & 0x807fffffu) | (e << 23);
        }
        double eps = time_convert(cases[c].from, cases[c].to, f32, cases[c].dst, n, reps);
        double cast = 0;
#if defined(__FLT16_MAX__)
        if (cases[c].to == ER_FMT_F16) cast = time_cast_f32_f16((const float *)f32, (er_half *)h, n, reps);
#endif
        snprintf(name, sizeof name, "%s -> %s", er_format_name(cases[c].from), er_format_name(cases[c].to));
        print_row(name, eps, cast);
        /* and back */
        eps = time_convert(cases[c].to, ER_FMT_F32, cases[c].dst, back, n, reps);
        cast = 0;
#if defined(__FLT16_MAX__)
        if (cases[c].to == ER_FMT_F16) cast = time_cast_f16_f32((const er_half *)h, (float *)back, n, reps);
#endif
        snprintf(name, sizeof name, "%s -> %s", er_format_name(cases[c].to), er_format_name(cases[c].from));
        print_row(name, eps, cast);
    }
    printf("(data: f32 values spread evenly over the normal binades of the narrow format;\n"
           " C cast: GCC's _Float16 conversion, where the compiler has one; the floor is 200 Melem/s/core\n"
           " for f32 -> bf16 and f32 -> f8E4M3FN)\n");
    free(f32); free(wide); free(h); free(b); free(back);
    return 0;
}
