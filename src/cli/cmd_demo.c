/* cmd_demo.c: `exactref demo`: a tour of the formats, one rounding, and the backends agreeing. */
#define _POSIX_C_SOURCE 200809L
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
    printf("\nNext: exactref formats, exactref convert --help, exactref decode --help\n");
    return rc;
}
