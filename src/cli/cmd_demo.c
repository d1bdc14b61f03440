/* cmd_demo.c: `exactref demo`: a tour of the formats, one rounding, and the backends agreeing. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "er_batch.h"
#include "exactref/core/er_bits.h" /* er_b_bits, er_b_dbl */
#include "exactref/core/er_round.h"

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
    er_convert_bits(ER_FMT_F64, fmt, er_b_bits(x), dir, opts, &r, &fl);
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

/* ---- The main job: judge implementations of a matmul against proven bounds. ---- */

/* The hardware exponent of a value of format f (accumulation-models.md): floor(log2|v|), the format's
 * minimum for a subnormal; the caller treats zero terms as exponent -126. */
static int hw_exponent(int f, double v)
{
    int e;
    frexp(v, &e);
    e -= 1;
    int emin = er_fmt_emin(er_fmt_get(f));
    return e < emin ? emin : e;
}

/* One dot product as the library's matrix-engine standard std computes it (er_standard_parse; the model
 * of docs/accumulation-models.md): per instruction of std.k products and the f32 accumulator C, the
 * terms aligned to the largest exponent and truncated toward zero to std.F fractional bits, summed
 * exactly, normalised into f32 with std.out_round.  Inputs: values and their exponents; scales
 * (block-scaled) already folded into the values and their exponents.  The standards the demo uses are
 * of this form (demo_model checks it). */
static float tensor_core_dot(int n, const double *a, const double *b, const int *ea, const int *eb, const er_standard *std)
{
    double c = 0.0;
    int kstep = std->k, F = std->F;
    for (int p0 = 0; p0 < n; p0 += kstep) {
        int p1 = p0 + kstep < n ? p0 + kstep : n;
        int E = -126, ec = -126;
        if (c != 0) {
            frexp(c, &ec);
            ec -= 1;
        }
        if (ec > E) E = ec;
        for (int p = p0; p < p1; p++) {
            int e = (a[p] == 0 || b[p] == 0) ? -126 : ea[p] + eb[p];
            if (e > E) E = e;
        }
        /* the truncated terms as integers of weight 2^(E - F): each below 2^(F + 3) */
        int64_t sum = 0;
        for (int p = p0; p <= p1; p++) {
            double t = p < p1 ? a[p] * b[p] : c; /* exact: products of two inputs up to 8+8 bits */
            sum += (int64_t)(t * ldexp(1.0, F - E)); /* (int64_t) truncates toward zero; scaling exact */
        }
        uint64_t mag = sum < 0 ? (uint64_t)(-sum) : (uint64_t)sum;
        er_res r = er_round(ER_FMT_F32, sum < 0, mag, E - F, 0u, std->out_round, 0u);
        c = er_b_dbl(er_convert(ER_FMT_F32, ER_FMT_F64, r.bits, ER_RND_NEAREST_EVEN, 0u).bits);
    }
    return (float)c;
}

/* The library's standard `name` as the model tensor_core_dot simulates: an engine with an f32
 * accumulator (out_p 23), no promotion, no exact groups, no CDNA3 arithmetic, one stage. */
static int demo_model(const char *name, er_standard *std)
{
    char msg[256];
    if (er_standard_parse(name, std, msg, sizeof msg) != ER_OK) {
        fprintf(stderr, "exactref demo: %s\n", msg);
        return ER_EXIT_INTERNAL;
    }
    if (std->kind != ER_STD_ENGINE || std->out_p != 23 || std->acc_fmt != ER_FMT_F32 || std->promote ||
        std->group != 1 || std->floor_terms || std->tf32_inputs || std->F2 || std->two_stage || std->F > 40 ||
        std->k < 1) {
        fprintf(stderr, "exactref demo: the standard %s is not of the form the demo simulates\n", name);
        return ER_EXIT_INTERNAL;
    }
    return ER_EXIT_OK;
}

typedef struct {
    const char *name, *standard;
    float *out;
    double seconds;
} impl;

/* Judge each implementation's output with exactref check's machinery; print one row each. */
static int judge(const char *title, er_mma_args *args, int M, int N, impl *im, int nimpl)
{
    er_result *res = NULL;
    char msg[512];
    uint32_t *ref = malloc(sizeof *ref * (size_t)M * N);
    unsigned char *cov = malloc((size_t)M * N);
    er_tensor D = er_tensor_2d(ER_FMT_F32, M, N, ref);
    int rc = ER_EXIT_OK;
    if (!ref || !cov) {
        free(ref);
        free(cov);
        return ER_EXIT_INTERNAL;
    }
    args->d = &D;
    double t0 = now();
    if (er_result_create(args, &res, msg, sizeof msg) != ER_OK) {
        fprintf(stderr, "exactref demo: %s\n", msg);
        free(ref);
        free(cov);
        return ER_EXIT_INTERNAL;
    }
    double tr = now() - t0;
    const er_mma_stats *st = er_result_stats(res);
    printf("\n%s\n", title);
    printf("  exact reference, rounded once: %.3f s on %d threads (%lld of %lld elements decided by the certified\n"
           "  fp64 fast path, %lld by the exact accumulator)\n",
           tr, st->threads, (long long)st->fast_decided, (long long)st->elements, (long long)st->exact_path);
    printf("  %-32s %-13s %8s %8s %12s %7s  %s\n", "implementation", "standard", "outside", "differs", "assert_close",
           "time", "verdict");
    for (int q = 0; q < nimpl; q++) {
        er_tol_opts o;
        int64_t outside = 0, differs = 0;
        er_tol_opts_init(&o);
        if (er_standard_parse(im[q].standard, &o.standard, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref demo: %s\n", msg);
            rc = ER_EXIT_INTERNAL;
            break;
        }
        er_tensor O = er_tensor_2d(ER_FMT_F32, M, N, im[q].out);
        double t1 = now();
        if (er_result_covers(res, &o, &O, cov, &outside, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref demo: %s\n", msg);
            rc = ER_EXIT_INTERNAL;
            break;
        }
        double tc = now() - t1;
        int64_t ac_fail = 0;
        for (int e = 0; e < M * N; e++) {
            uint32_t u;
            memcpy(&u, &im[q].out[e], 4);
            differs += u != ref[e];
            /* PyTorch's assert_close for bf16 (rtol 1.6e-2, atol 1e-5) against the exact reference */
            double r = f32_of_bits(ref[e]);
            ac_fail += fabs((double)im[q].out[e] - r) > 1e-5 + 1.6e-2 * fabs(r);
        }
        char acs[32];
        if (ac_fail) snprintf(acs, sizeof acs, "%lld fail", (long long)ac_fail);
        else snprintf(acs, sizeof acs, "pass");
        printf("  %-32s %-13s %8lld %8lld %12s %6.2fs  %s\n", im[q].name, im[q].standard, (long long)outside,
               (long long)differs, acs, im[q].seconds + tc, outside ? "WRONG: no correct implementation gives it" : "correct");
    }
    printf("  outside: elements beyond the proven bound of the standard; differs: elements that are not the\n"
           "  correctly rounded value (a correct implementation may well differ); assert_close: PyTorch's bf16\n"
           "  tolerance (rtol 1.6e-2, atol 1e-5) against the exact result; time: the implementation and its check\n");
    er_result_free(res);
    free(ref);
    free(cov);
    return rc;
}

static int demo_matmul(void)
{
    enum { M = 256, N = 256, K = 4096 };
    uint16_t *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * K * N);
    double *ad = malloc(sizeof *ad * M * K), *bt = malloc(sizeof *bt * K * N);
    int *ea = malloc(sizeof *ea * M * K), *ebt = malloc(sizeof *ebt * K * N);
    float *o1 = malloc(sizeof(float) * M * N), *o4 = malloc(sizeof(float) * M * N), *oh = malloc(sizeof(float) * M * N),
          *ob = malloc(sizeof(float) * M * N);
    int rc = ER_EXIT_OK;
    if (!a || !b || !ad || !bt || !ea || !ebt || !o1 || !o4 || !oh || !ob) {
        fprintf(stderr, "exactref demo: out of memory\n");
        rc = ER_EXIT_INTERNAL;
        goto done;
    }
    /* bf16 values with exponents in [-8, 8], random signs and significands (seeded: same every run) */
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (uint16_t)((demo_next() & 0x807f) | ((127 - 8 + demo_next() % 17) << 7));
    for (size_t i = 0; i < (size_t)K * N; i++) b[i] = (uint16_t)((demo_next() & 0x807f) | ((127 - 8 + demo_next() % 17) << 7));
    for (size_t i = 0; i < (size_t)M * K; i++) {
        ad[i] = f32_of_bits((uint32_t)a[i] << 16);
        ea[i] = hw_exponent(ER_FMT_BF16, ad[i]);
    }
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) {
            bt[(size_t)j * K + p] = f32_of_bits((uint32_t)b[(size_t)p * N + j] << 16);
            ebt[(size_t)j * K + p] = hw_exponent(ER_FMT_BF16, bt[(size_t)j * K + p]);
        }
    er_standard hopper, mx;
    if ((rc = demo_model("hopper", &hopper)) != ER_EXIT_OK || (rc = demo_model("blackwell-mx", &mx)) != ER_EXIT_OK)
        goto done;
    double t0 = now();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            const double *x = ad + (size_t)i * K, *y = bt + (size_t)j * K;
            for (int p = 0; p < K; p++) s = s + (float)x[p] * (float)y[p]; /* bf16 x bf16 is exact in f32 */
            o1[i * N + j] = s;
        }
    double t_idx = now() - t0;
    t0 = now();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float l[4] = {0, 0, 0, 0};
            const double *x = ad + (size_t)i * K, *y = bt + (size_t)j * K;
            for (int p = 0; p < K; p++) l[p & 3] = l[p & 3] + (float)x[p] * (float)y[p];
            o4[i * N + j] = (l[0] + l[1]) + (l[2] + l[3]);
        }
    double t_lanes = now() - t0;
    t0 = now();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            oh[i * N + j] = tensor_core_dot(K, ad + (size_t)i * K, bt + (size_t)j * K, ea + (size_t)i * K, ebt + (size_t)j * K, &hopper);
    double t_tc = now() - t0;
    memcpy(ob, o4, sizeof(float) * M * N);
    {
        /* one corrupted element: a bug that skips one k-tile of 32 products for element [97, 13] */
        float l[4] = {0, 0, 0, 0};
        const double *x = ad + (size_t)97 * K, *y = bt + (size_t)13 * K;
        for (int p = 0; p < K; p++)
            if (p < 2048 || p >= 2080) l[p & 3] = l[p & 3] + (float)x[p] * (float)y[p];
        ob[97 * N + 13] = (l[0] + l[1]) + (l[2] + l[3]);
    }
    {
        er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b);
        er_mma_args args;
        er_mma_args_init(&args);
        args.a = &A;
        args.b = &B;
        impl im[4] = {{"f32, index order", "normal", o1, t_idx},
                      {"f32, 4 lanes", "normal", o4, t_lanes},
                      {"Hopper bf16 tensor core (sim.)", "hopper", oh, t_tc},
                      {"4 lanes, one k-tile skipped once", "normal", ob, t_lanes}};
        rc = judge("1. The main job: a seeded 256 x 256 x 4096 bf16 product, f32 output, four implementations judged",
                   &args, M, N, im, 4);
    }
    if (rc != ER_EXIT_OK) goto done;
    {
        /* MXFP8: f8E4M3FN elements, f8E8M0FNU scales per 32 elements of k, f32 output */
        enum { KM = 1024 };
        uint8_t *qa = malloc((size_t)M * KM), *qb = malloc((size_t)KM * N), *sa = malloc((size_t)M * (KM / 32)),
                *sb = malloc((size_t)(KM / 32) * N);
        double *va = malloc(sizeof(double) * M * KM), *vbt = malloc(sizeof(double) * KM * N);
        int *xa = malloc(sizeof(int) * M * KM), *xbt = malloc(sizeof(int) * KM * N);
        float *m1 = malloc(sizeof(float) * M * N), *mt = malloc(sizeof(float) * M * N);
        if (!qa || !qb || !sa || !sb || !va || !vbt || !xa || !xbt || !m1 || !mt) {
            rc = ER_EXIT_INTERNAL;
        } else {
            for (size_t i = 0; i < (size_t)M * KM; i++) { do qa[i] = (uint8_t)demo_next(); while ((qa[i] & 0x7f) == 0x7f); }
            for (size_t i = 0; i < (size_t)KM * N; i++) { do qb[i] = (uint8_t)demo_next(); while ((qb[i] & 0x7f) == 0x7f); }
            for (size_t i = 0; i < (size_t)M * (KM / 32); i++) sa[i] = (uint8_t)(127 - 4 + demo_next() % 9);
            for (size_t i = 0; i < (size_t)(KM / 32) * N; i++) sb[i] = (uint8_t)(127 - 4 + demo_next() % 9);
            for (int i = 0; i < M; i++)
                for (int p = 0; p < KM; p++) {
                    double v, s;
                    er_from_bits(ER_FMT_F8E4M3FN, qa[(size_t)i * KM + p], &v);
                    er_from_bits(ER_FMT_F8E8M0FNU, sa[(size_t)i * (KM / 32) + p / 32], &s);
                    va[(size_t)i * KM + p] = v * s;
                    xa[(size_t)i * KM + p] = hw_exponent(ER_FMT_F8E4M3FN, v) + sa[(size_t)i * (KM / 32) + p / 32] - 127;
                }
            for (int p = 0; p < KM; p++)
                for (int j = 0; j < N; j++) {
                    double v, s;
                    er_from_bits(ER_FMT_F8E4M3FN, qb[(size_t)p * N + j], &v);
                    er_from_bits(ER_FMT_F8E8M0FNU, sb[(size_t)(p / 32) * N + j], &s);
                    vbt[(size_t)j * KM + p] = v * s;
                    xbt[(size_t)j * KM + p] = hw_exponent(ER_FMT_F8E4M3FN, v) + sb[(size_t)(p / 32) * N + j] - 127;
                }
            t0 = now();
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    float s = 0.0f;
                    for (int p = 0; p < KM; p++) s = s + (float)va[(size_t)i * KM + p] * (float)vbt[(size_t)j * KM + p];
                    m1[i * N + j] = s;
                }
            double tm1 = now() - t0;
            t0 = now();
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++)
                    mt[i * N + j] = tensor_core_dot(KM, va + (size_t)i * KM, vbt + (size_t)j * KM, xa + (size_t)i * KM,
                                                    xbt + (size_t)j * KM, &mx);
            double tmt = now() - t0;
            er_tensor A = er_tensor_2d(ER_FMT_F8E4M3FN, M, KM, qa), B = er_tensor_2d(ER_FMT_F8E4M3FN, KM, N, qb);
            er_tensor SA = er_tensor_2d(ER_FMT_F8E8M0FNU, M, KM / 32, sa), SB = er_tensor_2d(ER_FMT_F8E8M0FNU, KM / 32, N, sb);
            er_mma_args args;
            er_mma_args_init(&args);
            args.a = &A;
            args.b = &B;
            args.a_scale = &SA;
            args.b_scale = &SB;
            args.block = 32;
            impl im[2] = {{"f32, index order (dequantised)", "normal", m1, tm1},
                          {"Blackwell mxf8 tensor core (sim)", "blackwell-mx", mt, tmt}};
            rc = judge("2. MXFP8: 256 x 256 x 1024 f8E4M3FN with f8E8M0FNU scales per 32, f32 output", &args, M, N, im, 2);
        }
        free(qa); free(qb); free(sa); free(sb); free(va); free(vbt); free(xa); free(xbt); free(m1); free(mt);
    }
done:
    free(a); free(b); free(ad); free(bt); free(ea); free(ebt); free(o1); free(o4); free(oh); free(ob);
    return rc;
}

int er_cmd_demo(int argc, char **argv)
{
    static const char *const dirs[] = {"nearest_even", "nearest_away", "zero", "negative_inf", "positive_inf"};
    int f, d, rc = ER_EXIT_OK;
    (void)argv;
    if (argc > 1) return er_cli_usage_error("demo", "takes no arguments");
    printf("exactref %s demo: is a matmul output one that a correct implementation could produce? Exact\n"
           "references rounded once, and proven bounds for each way real hardware accumulates.\n",
           er_version());

    rc = demo_matmul();
    if (rc != ER_EXIT_OK) return rc;
    /* 1. One value rounded into every float format in every direction. */
    printf("\n3. x = 1/3 (the binary64 nearest to it) rounded once into each format:\n");
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
    printf("\n4. Rounding facts (each one a test in the suite):\n");
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
        printf("\n5. A batch covering every ordered pair of the %d formats, every direction and the option\n"
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
        st = er_convert_batch(spec, src, got, fgot, n, ER_BACKEND_OPENCL, -1, msg, sizeof msg);
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
    printf("\nNext: exactref formats, exactref matmul --help, exactref convert --help\n");
    return rc;
}
