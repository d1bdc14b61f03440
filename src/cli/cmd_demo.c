/* cmd_demo.c: `exactref demo`: a tour of the formats, one rounding, and the backends agreeing. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "er_batch.h"

static uint64_t dbits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double bitsd(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Convert an f64 value into fmt and show the pattern and its value. */
static void show(const char *what, double x, int fmt, int dir, unsigned opts)
{
    uint64_t r;
    unsigned fl;
    char hex[64];
    er_convert_bits(ER_FMT_F64, fmt, dbits(x), dir, opts, &r, &fl);
    er_format_hex(fmt, r, hex, sizeof hex);
    printf("  %-44s -> %-10s 0x%0*llx = %s%s%s\n", what, er_format_name(fmt), (er_format_width(fmt) + 3) / 4,
           (unsigned long long)r, hex, fl & ER_FLAG_INEXACT ? " (inexact)" : "",
           fl & ER_FLAG_INVALID ? " (invalid)" : fl & ER_FLAG_OVERFLOW ? " (overflow)" : "");
}

static uint64_t demo_rng = UINT64_C(0x2026113009250000);
static uint64_t demo_next(void)
{
    demo_rng ^= demo_rng << 13;
    demo_rng ^= demo_rng >> 7;
    demo_rng ^= demo_rng << 17;
    return demo_rng;
}

static float f32_of_bits(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* |x - y| in units of the f32 spacing at y (both finite). */
static double ulps_apart(float x, float y)
{
    int e;
    frexpf(y == 0 ? 1.0f : y, &e);
    return fabs((double)x - (double)y) / ldexp(1.0, e - 24);
}

/* 4. The exact engine on a seeded bf16 problem, against what users compute today. */
static int demo_matmul(void)
{
    enum { M = 256, N = 256, K = 4096 };
    uint16_t *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * K * N);
    uint32_t *d = malloc(sizeof *d * M * N);
    float *af = malloc(sizeof *af * M * K), *bf = malloc(sizeof *bf * K * N);
    er_mma_args args;
    er_mma_stats st;
    char msg[512];
    if (!a || !b || !d || !af || !bf) {
        fprintf(stderr, "exactref demo: out of memory\n");
        free(a); free(b); free(d); free(af); free(bf);
        return ER_EXIT_INTERNAL;
    }
    /* bf16 values with exponents in [-8, 8], random signs and significands (seeded: same every run) */
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (uint16_t)((demo_next() & 0x807f) | ((127 - 8 + demo_next() % 17) << 7));
    for (size_t i = 0; i < (size_t)K * N; i++) b[i] = (uint16_t)((demo_next() & 0x807f) | ((127 - 8 + demo_next() % 17) << 7));
    for (size_t i = 0; i < (size_t)M * K; i++) af[i] = f32_of_bits((uint32_t)a[i] << 16);
    for (size_t i = 0; i < (size_t)K * N; i++) bf[i] = f32_of_bits((uint32_t)b[i] << 16);
    er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b);
    er_tensor D = er_tensor_2d(ER_FMT_F32, M, N, d);
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.d = &D;
    args.stats = &st;
    args.msg = msg;
    args.msg_size = sizeof msg;
    printf("\n4. The exact engine: a seeded %d x %d x %d bf16 product, f32 output\n", M, N, K);
    double t0 = now();
    if (er_mma(&args) != ER_OK) {
        fprintf(stderr, "exactref demo: %s\n", msg);
        free(a); free(b); free(d); free(af); free(bf);
        return ER_EXIT_INTERNAL;
    }
    double te = now() - t0;
    printf("  exact, rounded once   %8.3f s  %.2f GMAC/s on %d threads; %lld of %lld elements decided by the\n"
           "                                   certified fp64 fast path, the rest by the exact accumulator\n",
           te, (double)M * N * K / te / 1e9, st.threads, (long long)st.fast_decided, (long long)st.elements);
    /* What users compute: f32 in index order, and an fp64 sum rounded to f32. */
    long diff32 = 0, diff64 = 0;
    double worst32 = 0;
    t0 = now();
    for (int i = 0; i < M; i++) {
        float acc32[N];
        double acc64[N];
        for (int j = 0; j < N; j++) { acc32[j] = 0.0f; acc64[j] = 0.0; }
        for (int p = 0; p < K; p++) {
            float x = af[(size_t)i * K + p];
            for (int j = 0; j < N; j++) {
                float y = bf[(size_t)p * N + j];
                acc32[j] = acc32[j] + x * y;          /* the product of two bf16 values is exact in f32 */
                acc64[j] = acc64[j] + (double)x * (double)y;
            }
        }
        for (int j = 0; j < N; j++) {
            float exact = f32_of_bits(d[(size_t)i * N + j]);
            double u = ulps_apart(acc32[j], exact);
            diff32 += acc32[j] != exact;
            if (u > worst32) worst32 = u;
            diff64 += (float)acc64[j] != exact;
        }
    }
    double tn = now() - t0;
    printf("  f32, index order      %8.3f s  differs from the exact result in %ld of %d elements (up to %.0f ulps)\n",
           tn, diff32, M * N, worst32);
    printf("  fp64 sum, then f32              differs in %ld of %d elements%s\n", diff64, M * N,
           diff64 ? ": rounding twice is not rounding once"
                  : " (here; nothing guarantees it: it rounds twice)");
    printf("  (the tolerances that say which of these differences a correct implementation may show come\n"
           "   with exactref check)\n");
    free(a); free(b); free(d); free(af); free(bf);
    return ER_EXIT_OK;
}

int er_cmd_demo(int argc, char **argv)
{
    static const char *const dirs[] = {"nearest_even", "nearest_away", "zero", "negative_inf", "positive_inf"};
    int f, d, rc = ER_EXIT_OK;
    (void)argv;
    if (argc > 1) return er_cli_usage_error("demo", "takes no arguments");
    printf("exactref %s demo: every format, every rounding direction, one rounding, the same bits on "
           "every backend\n\n",
           er_version());

    /* 1. One value rounded into every float format in every direction. */
    printf("1. x = 1/3 (the binary64 nearest to it) rounded once into each format:\n");
    printf("  %-11s", "format");
    for (d = 0; d < 5; d++) printf(" %-15s", dirs[d]);
    printf("\n");
    for (f = 0; f < er_format_count(); f++) {
        er_format_info fi;
        er_format_get_info(f, &fi);
        if (fi.kind != ER_KIND_FLOAT || f == ER_FMT_F64) continue;
        printf("  %-11s", fi.name);
        for (d = 0; d < 5; d++) {
            double y;
            er_round_double(f, 1.0 / 3.0, d, &y);
            printf(" %-15.9g", y);
        }
        printf("\n");
    }

    /* 2. The facts that trip up other tools. */
    printf("\n2. Rounding facts (each one a test in the suite):\n");
    show("464 is a tie between 448 and 480 (even: 448)", 464.0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, 0);
    show("465 overflows: NaN, the format has no inf", 465.0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, 0);
    show("465 with --saturate (CUDA satfinite)", 465.0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, ER_OPT_SATURATE);
    show("65520 ties to inf in f16", 65520.0, ER_FMT_F16, ER_RND_NEAREST_EVEN, 0);
    show("65520 toward zero stays finite", 65520.0, ER_FMT_F16, ER_RND_ZERO, 0);
    show("3 into e8m0 (powers of two only)", 3.0, ER_FMT_F8E8M0FNU, ER_RND_NEAREST_EVEN, 0);
    show("0 into e8m0 (no zero: NaN)", 0.0, ER_FMT_F8E8M0FNU, ER_RND_NEAREST_EVEN, 0);
    show("100 into fp4 (no inf, no NaN: saturates)", 100.0, ER_FMT_F4E2M1FN, ER_RND_NEAREST_EVEN, 0);
    show("-2^-30 into f8E4M3FNUZ (no -0: +0)", -0x1p-30, ER_FMT_F8E4M3FNUZ, ER_RND_NEAREST_EVEN, 0);
    {
        /* Double rounding: f64 -> f32 -> e4m3 (what ml_dtypes does) against one rounding. */
        double x = 1.0625 + 0x1p-30, y_once, y_twice, via;
        uint64_t r;
        er_round_double(ER_FMT_F8E4M3FN, x, ER_RND_NEAREST_EVEN, &y_once);
        er_round_double(ER_FMT_F32, x, ER_RND_NEAREST_EVEN, &via);
        er_round_double(ER_FMT_F8E4M3FN, via, ER_RND_NEAREST_EVEN, &y_twice);
        er_bits_of(ER_FMT_F8E4M3FN, y_once, &r);
        printf("  1.0625 + 2^-30 into f8E4M3FN: once %.9g (0x%02llx); through f32 first %.9g (wrong: the f32\n"
               "  rounding made it a tie)\n",
               y_once, (unsigned long long)r, y_twice);
    }
    {
        uint64_t r;
        er_convert_bits(ER_FMT_F32, ER_FMT_BF16, 0x7fa12345u, ER_RND_NEAREST_EVEN, 0, &r, NULL);
        printf("  the f32 signalling NaN 0x7fa12345 into bf16: 0x%04llx (payload kept, made quiet)\n",
               (unsigned long long)r);
    }

    /* 3. The backends agree with the C path. */
    {
        uint32_t *spec = NULL;
        uint64_t *src = NULL, *ref, *got;
        uint32_t *fref, *fgot;
        size_t n = er_batch_build(UINT64_C(0xdec0de), 16, &spec, &src), i, bad = 0;
        double t0, tc, tcl;
        char msg[4096];
        er_status st;
        printf("\n3. A batch covering every ordered pair of the %d formats, every direction and the option\n"
               "   sets {none, saturate, flush-to-zero}: %zu conversions\n",
               er_format_count(), n);
        ref = malloc(n * 8);
        got = malloc(n * 8);
        fref = malloc(n * 4);
        fgot = malloc(n * 4);
        if (!n || !ref || !got || !fref || !fgot) {
            fprintf(stderr, "exactref demo: out of memory\n");
            free(spec); free(src); free(ref); free(got); free(fref); free(fgot);
            return ER_EXIT_INTERNAL;
        }
        t0 = now();
        er_batch_reference(spec, src, ref, fref, n);
        tc = now() - t0;
        printf("  cpu     (portable C)         %8.3f s  the reference\n", tc);
        t0 = now();
        st = er_opencl_convert_mixed(spec, src, got, fgot, n, -1, msg, sizeof msg);
        tcl = now() - t0;
        if (st == ER_OK) {
            for (i = 0; i < n; i++) bad += got[i] != ref[i] || fgot[i] != fref[i];
            printf("  opencl                       %8.3f s  %s (program build included)\n", tcl,
                   bad ? "DIFFERS from the C path" : "identical bits and flags");
            if (bad) rc = ER_EXIT_INTERNAL;
        } else if (st == ER_EUNSUPPORTED) {
            printf("  opencl  not built in\n");
        } else {
            printf("  opencl  unavailable: %s\n", msg);
        }
        printf("  cuda    %s\n", ER_HAVE_CUDA ? "compiled; runs in the test suite where a GPU exists"
                                              : "not built in (no nvcc at build time)");
        free(spec); free(src); free(ref); free(got); free(fref); free(fgot);
    }
    (void)bitsd;
    if (rc == ER_EXIT_OK) rc = demo_matmul();
    printf("\nNext: exactref formats, exactref matmul --help, exactref convert --help\n");
    return rc;
}
