/*
 * test_scaled.c: scaled products (include/exactref/scaled.h) and the scaled standard
 * (docs/proofs/scaled.md).  The reference against MPFR (exact sums of the scaled products, alpha, beta C
 * and the bias, rounded once); a DeepGEMM-style loop (e4m3 operands, f32 scales per 1 x 128 of A and per
 * 128 x 128 of B, f32 partials of 128 products scaled by f32(sa sb) and added into an f32
 * accumulator) never outside; per-tensor and per-row/column scales with alpha, beta C, a bias and a
 * saturating e4m3 output never outside; the Hopper fp8 tensor-core partial (bit-accurate simulator),
 * promoted every 128 products, never outside its model; and the planted bugs caught: a scale applied
 * twice, the wrong block's scale, the scales transposed, no promotion.  The shapes' errors are refused.
 *
 * Environment: EXACTREF_SEED (printed).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "result/sim.h"

static int g_fail = 0;
#define CHECK(cond, ...)                                                                               \
    do {                                                                                               \
        if (!(cond)) {                                                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                \
            printf(__VA_ARGS__);                                                                       \
            printf("\n");                                                                              \
            g_fail++;                                                                                  \
        }                                                                                              \
    } while (0)

static uint64_t g_rng;
static double unif(void) { return (double)(er_test_rand(&g_rng) >> 11) * 0x1p-53; }
static double gauss(void)
{
    double u1 = unif(), u2 = unif();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static double rnd(int f, double x)
{
    double y;
    if (er_round_double(f, x, ER_RND_NEAREST_EVEN, &y) != ER_OK) abort();
    return y;
}
static void *pack(int f, const double *x, int64_t cnt, unsigned opts)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    unsigned char *p = calloc((size_t)(cnt ? cnt : 1), (size_t)fi.storage_bytes);
    for (int64_t i = 0; i < cnt; i++) {
        uint64_t b, d;
        memcpy(&d, &x[i], 8);
        er_convert_bits(ER_FMT_F64, f, d, ER_RND_NEAREST_EVEN, opts, &b, NULL);
        memcpy(p + i * fi.storage_bytes, &b, (size_t)fi.storage_bytes);
    }
    return p;
}

/* A scaled problem: values (already values of their formats) and the library's result. */
typedef struct {
    int64_t m, k, n, ra, ca, rb, cb; /* scale shapes */
    int fo;
    unsigned opts;
    double alpha, beta;
    double *A, *B, *SA, *SB, *C, *bias;
    void *Ab, *Bb, *SAb, *SBb, *Cb, *biasb, *Db;
    er_tensor a, b, sa, sb, c, bi, d;
    er_result *r;
} prob;

static double sa_at(const prob *P, int64_t i, int64_t kb)
{
    return P->ra == 1 && P->ca == 1 ? P->SA[0] : P->ca == 1 ? P->SA[i] : P->SA[i * P->ca + kb];
}
static double sb_at(const prob *P, int64_t kb, int64_t j)
{
    return P->rb == 1 && P->cb == 1 ? P->SB[0] : P->rb == 1 ? P->SB[j] : P->SB[kb * P->cb + j / 128];
}

static void make(prob *P)
{
    er_scaled_args sa;
    char msg[512] = "";
    P->Ab = pack(ER_FMT_F8E4M3FN, P->A, P->m * P->k, 0);
    P->Bb = pack(ER_FMT_F8E4M3FN, P->B, P->k * P->n, 0);
    P->SAb = pack(ER_FMT_F32, P->SA, P->ra * P->ca, 0);
    P->SBb = pack(ER_FMT_F32, P->SB, P->rb * P->cb, 0);
    P->a = er_tensor_2d(ER_FMT_F8E4M3FN, P->m, P->k, P->Ab);
    P->b = er_tensor_2d(ER_FMT_F8E4M3FN, P->k, P->n, P->Bb);
    P->sa = er_tensor_2d(ER_FMT_F32, P->ra, P->ca, P->SAb);
    P->sb = er_tensor_2d(ER_FMT_F32, P->rb, P->cb, P->SBb);
    er_format_info fi;
    er_format_get_info(P->fo, &fi);
    P->Db = calloc((size_t)(P->m * P->n), (size_t)fi.storage_bytes);
    P->d = er_tensor_2d(P->fo, P->m, P->n, P->Db);
    er_scaled_args_init(&sa);
    sa.a = &P->a, sa.b = &P->b, sa.a_scale = &P->sa, sa.b_scale = &P->sb, sa.d = &P->d;
    sa.alpha = P->alpha, sa.beta = P->beta, sa.opts = P->opts;
    if (P->C) {
        P->Cb = pack(ER_FMT_BF16, P->C, P->m * P->n, 0);
        P->c = er_tensor_2d(ER_FMT_BF16, P->m, P->n, P->Cb);
        sa.c = &P->c;
    }
    if (P->bias) {
        P->biasb = pack(ER_FMT_F32, P->bias, P->n, 0);
        P->bi = er_tensor_2d(ER_FMT_F32, 1, P->n, P->biasb);
        sa.bias = &P->bi;
    }
    if (er_scaled_result_create(&sa, &P->r, msg, sizeof msg) != ER_OK) {
        printf("er_scaled_result_create: %s\n", msg);
        abort();
    }
}

static void unmake(prob *P)
{
    er_result_free(P->r);
    free(P->A), free(P->B), free(P->SA), free(P->SB), free(P->C), free(P->bias);
    free(P->Ab), free(P->Bb), free(P->SAb), free(P->SBb), free(P->Cb), free(P->biasb), free(P->Db);
}

/* Random e4m3 operands and f32 scales of the given shapes (values of their formats). */
static void fill(prob *P, double amp)
{
    P->A = malloc(sizeof(double) * (size_t)(P->m * P->k));
    P->B = malloc(sizeof(double) * (size_t)(P->k * P->n));
    P->SA = malloc(sizeof(double) * (size_t)(P->ra * P->ca));
    P->SB = malloc(sizeof(double) * (size_t)(P->rb * P->cb));
    for (int64_t q = 0; q < P->m * P->k; q++) P->A[q] = rnd(ER_FMT_F8E4M3FN, gauss() * amp);
    for (int64_t q = 0; q < P->k * P->n; q++) P->B[q] = rnd(ER_FMT_F8E4M3FN, gauss() * amp);
    for (int64_t q = 0; q < P->ra * P->ca; q++) P->SA[q] = rnd(ER_FMT_F32, ldexp(0.5 + unif(), (int)(unif() * 7) - 3));
    for (int64_t q = 0; q < P->rb * P->cb; q++) P->SB[q] = rnd(ER_FMT_F32, ldexp(0.5 + unif(), (int)(unif() * 7) - 3));
}

/* Elements of out (values, converted into P->fo with the problem's options) outside std's range. */
static int64_t outside(prob *P, const char *std, const double *out)
{
    er_tol_opts o;
    char msg[512] = "";
    int64_t cnt = -1, mn = P->m * P->n;
    er_tol_opts_init(&o);
    if (er_standard_parse(std, &o.standard, msg, sizeof msg) != ER_OK) {
        printf("parse %s: %s\n", std, msg);
        abort();
    }
    void *ob = pack(P->fo, out, mn, P->opts);
    er_tensor t = er_tensor_2d(P->fo, P->m, P->n, ob);
    unsigned char *cov = malloc((size_t)mn);
    if (er_result_covers(P->r, &o, &t, cov, &cnt, msg, sizeof msg) != ER_OK) {
        printf("covers %s: %s\n", std, msg);
        abort();
    }
    free(cov), free(ob);
    return cnt;
}

/* The kernel's variants (bug): 0 correct, 1 a scale applied twice, 2 the wrong block's scale (A's of the
 * next block), 3 B's scales transposed, 4 no promotion (one partial over all of k, scaled by block 0's). */
static double kernel(const prob *P, int64_t i, int64_t j, int bug, const sim_model *eng)
{
    int64_t nkb = (P->k + 127) / 128;
    float acc = 0;
    double *a = malloc(sizeof(double) * (size_t)P->k), *b = malloc(sizeof(double) * (size_t)P->k);
    for (int64_t p = 0; p < P->k; p++) a[p] = P->A[i * P->k + p], b[p] = P->B[p * P->n + j];
    for (int64_t kb = 0; kb < nkb; kb++) {
        int64_t p0 = kb * 128, p1 = p0 + 128 < P->k ? p0 + 128 : P->k;
        float part = 0;
        if (bug == 4) p1 = P->k;
        if (eng) {
            part = (float)sim_engine(eng, (int)(p1 - p0), a + p0, b + p0, 0.0, ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN,
                                     ER_FMT_F32, ER_RND_NEAREST_EVEN);
        } else {
            for (int64_t p = p0; p < p1; p++) part += (float)a[p] * (float)b[p];
        }
        double sa = sa_at(P, i, bug == 2 ? (kb + 1) % nkb : kb);
        double sb = bug == 3 ? P->SB[(j / 128) * P->cb + kb] : sb_at(P, kb, j);
        float s = (float)sa * (float)sb;
        if (bug == 1) s = s * s;
        acc = acc + s * part;
        if (bug == 4) break;
    }
    free(a), free(b);
    /* the epilogue in f32 */
    float d = (float)P->alpha * acc;
    if (P->C) d = d + (float)P->beta * (float)P->C[i * P->n + j];
    if (P->bias) d = d + (float)P->bias[j];
    return (double)d;
}

/* Scales BEFORE the sum, as torch's CPU _scaled_mm: a' = f32(sa a), b' = f32(sb b), an f32 product in index
 * order (rev: reversed), then the same epilogue. */
static double kernel_before(const prob *P, int64_t i, int64_t j, int rev)
{
    float acc = 0;
    for (int64_t q = 0; q < P->k; q++) {
        int64_t p = rev ? P->k - 1 - q : q;
        float a = (float)(P->A[i * P->k + p] * sa_at(P, i, p / 128)), b = (float)(P->B[p * P->n + j] * sb_at(P, p / 128, j));
        acc = acc + a * b;
    }
    float d = (float)P->alpha * acc;
    if (P->C) d = d + (float)P->beta * (float)P->C[i * P->n + j];
    if (P->bias) d = d + (float)P->bias[j];
    return (double)d;
}

/* The exact value in MPFR: alpha sum_blocks sa sb (sum a b) + beta C + bias, rounded once into f32 (the
 * tests' outputs stay in f32's normal range). */
static double exact_f32(const prob *P, int64_t i, int64_t j)
{
    mpfr_t acc, t;
    mpfr_inits2(4000, acc, t, (mpfr_ptr)0);
    mpfr_set_zero(acc, 1);
    for (int64_t p = 0; p < P->k; p++) {
        mpfr_set_d(t, P->A[i * P->k + p], MPFR_RNDN);
        mpfr_mul_d(t, t, P->B[p * P->n + j], MPFR_RNDN);
        mpfr_mul_d(t, t, sa_at(P, i, p / 128), MPFR_RNDN);
        mpfr_mul_d(t, t, sb_at(P, p / 128, j), MPFR_RNDN);
        mpfr_mul_d(t, t, P->alpha, MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
    }
    if (P->C) {
        mpfr_set_d(t, P->C[i * P->n + j], MPFR_RNDN);
        mpfr_mul_d(t, t, P->beta, MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
    }
    if (P->bias) mpfr_add_d(acc, acc, P->bias[j], MPFR_RNDN);
    mpfr_prec_round(acc, 24, MPFR_RNDN);
    double v = mpfr_get_d(acc, MPFR_RNDN);
    mpfr_clears(acc, t, (mpfr_ptr)0);
    return v;
}

static void deepgemm(void)
{
    prob P;
    memset(&P, 0, sizeof P);
    P.m = 64, P.k = 512, P.n = 512, P.fo = ER_FMT_F32, P.alpha = 1.0;
    P.ra = P.m, P.ca = 4, P.rb = 4, P.cb = 4; /* 1 x 128 and 128 x 128 */
    fill(&P, 8.0);
    make(&P);
    int64_t mn = P.m * P.n, bad = 0;
    double *out = malloc(sizeof(double) * (size_t)mn);
    for (int64_t i = 0; i < P.m; i++)
        for (int64_t j = 0; j < P.n; j++) {
            double rv = ((float *)P.Db)[i * P.n + j];
            if (i < 8 && rv != exact_f32(&P, i, j)) bad++;
        }
    CHECK(bad == 0, "deepgemm: the reference differs from MPFR on %lld elements", (long long)bad);
    static const char *names[] = {"correct", "scale applied twice", "the wrong block's scale", "scales transposed"};
    for (int bug = 0; bug < 4; bug++) {
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++) out[i * P.n + j] = kernel(&P, i, j, bug, NULL);
        int64_t o = outside(&P, "scaled:bk=128", out);
        printf("deepgemm (f32 partials): %s: %lld of %lld outside\n", names[bug], (long long)o, (long long)mn);
        if (bug == 0) CHECK(o == 0, "deepgemm: the correct loop flagged on %lld", (long long)o);
        if (bug == 0) {
            int64_t ob = outside(&P, "scaled:bk=128,order=before", out);
            printf("deepgemm: the correct loop under order=before: %lld outside\n", (long long)ob);
            for (int64_t i = 0; i < P.m; i++)
                for (int64_t j = 0; j < P.n; j++) out[i * P.n + j] = kernel_before(&P, i, j, 0);
            ob = outside(&P, "scaled:bk=128,order=before", out);
            int64_t oa = outside(&P, "scaled:bk=128", out);
            printf("deepgemm: scales before the sum: %lld outside order=before, %lld outside order=after\n",
                   (long long)ob, (long long)oa);
            CHECK(ob == 0, "deepgemm: the scales-before kernel flagged on %lld under order=before", (long long)ob);
        }
        else CHECK(o * 100 >= mn * 95, "deepgemm: %s flagged on only %lld", names[bug], (long long)o);
    }
    free(out);
    unmake(&P);
}

static void hopper(void)
{
    const sim_model *eng = sim_model_find("hopper-fp8");
    prob P;
    memset(&P, 0, sizeof P);
    P.m = 16, P.k = 2048, P.n = 16, P.fo = ER_FMT_F32, P.alpha = 1.0;
    P.ra = 1, P.ca = 1, P.rb = 1, P.cb = 1; /* per tensor: no promotion changes no scale */
    fill(&P, 8.0);
    /* one-signed operands (activations after a ReLU, say): without promotion the partial grows with k
     * and every product is truncated at its exponent, all the same way (with random signs those
     * losses cancel, and no bound over every order can tell the two kernels apart) */
    for (int64_t q = 0; q < P.m * P.k; q++) P.A[q] = fabs(P.A[q]);
    for (int64_t q = 0; q < P.k * P.n; q++) P.B[q] = fabs(P.B[q]);
    make(&P);
    int64_t mn = P.m * P.n;
    double *out = malloc(sizeof(double) * (size_t)mn);
    for (int bug = 0; bug <= 4; bug += 4) {
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++) out[i * P.n + j] = kernel(&P, i, j, bug, eng);
        int64_t o = outside(&P, "scaled:bk=128,partial=hopper-fp8", out);
        int64_t o32 = outside(&P, "scaled:bk=128", out);
        printf("hopper-fp8 partials: %s: %lld of %lld outside (f32-partial standard: %lld)\n",
               bug ? "no promotion" : "promoted every 128", (long long)o, (long long)mn, (long long)o32);
        if (bug == 0) CHECK(o == 0, "hopper: the promoted kernel flagged on %lld", (long long)o);
        else CHECK(o * 2 >= mn, "hopper: no promotion flagged on only %lld", (long long)o);
    }
    free(out);
    unmake(&P);
    /* DeepGEMM's layout with the tensor-core partial: 1 x 128 and 128 x 128 f32 scales, random signs */
    memset(&P, 0, sizeof P);
    P.m = 8, P.k = 1024, P.n = 256, P.fo = ER_FMT_BF16, P.alpha = 1.0;
    P.ra = P.m, P.ca = 8, P.rb = 8, P.cb = 2;
    fill(&P, 8.0);
    make(&P);
    mn = P.m * P.n;
    out = malloc(sizeof(double) * (size_t)mn);
    for (int bug = 0; bug < 4; bug++) {
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++) out[i * P.n + j] = kernel(&P, i, j, bug, eng);
        int64_t o = outside(&P, "scaled:bk=128,partial=hopper-fp8", out);
        printf("hopper-fp8 partials, per-block scales, bf16 output: bug %d: %lld of %lld outside\n", bug, (long long)o,
               (long long)mn);
        if (bug == 0) CHECK(o == 0, "hopper, per-block scales: the promoted kernel flagged on %lld", (long long)o);
        else CHECK(o * 100 >= mn * 85, "hopper, per-block scales: bug %d flagged on only %lld", bug, (long long)o);
    }
    free(out);
    unmake(&P);
}

static void epilogue(void)
{
    for (int cs = 0; cs < 4; cs++) {
        prob P;
        memset(&P, 0, sizeof P);
        P.m = 24, P.k = 300, P.n = 40;
        P.fo = cs == 3 ? ER_FMT_F8E4M3FN : ER_FMT_F32;
        P.opts = cs == 3 ? ER_OPT_SATURATE : 0;
        P.alpha = cs == 0 ? 1.0 : rnd(ER_FMT_F32, 0.37);
        P.beta = rnd(ER_FMT_F32, cs == 2 ? -1.9 : 0.5);
        if (cs == 0) P.ra = P.ca = P.rb = P.cb = 1;
        else P.ra = P.m, P.ca = 1, P.rb = 1, P.cb = P.n; /* per row of A, per column of B */
        fill(&P, cs == 3 ? 24.0 : 2.0); /* cs 3: outputs beyond e4m3's 448: saturated */
        if (cs >= 1) {
            P.C = malloc(sizeof(double) * (size_t)(P.m * P.n));
            for (int64_t q = 0; q < P.m * P.n; q++) P.C[q] = rnd(ER_FMT_BF16, gauss() * 30);
        }
        if (cs >= 2) {
            P.bias = malloc(sizeof(double) * (size_t)P.n);
            for (int64_t q = 0; q < P.n; q++) P.bias[q] = rnd(ER_FMT_F32, gauss() * 10);
        }
        make(&P);
        int64_t mn = P.m * P.n, bad = 0;
        double *out = malloc(sizeof(double) * (size_t)mn);
        if (P.fo == ER_FMT_F32)
            for (int64_t i = 0; i < P.m; i++)
                for (int64_t j = 0; j < P.n; j++)
                    if (((float *)P.Db)[i * P.n + j] != exact_f32(&P, i, j)) bad++;
        CHECK(bad == 0, "epilogue case %d: the reference differs from MPFR on %lld elements", cs, (long long)bad);
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++) out[i * P.n + j] = kernel(&P, i, j, 0, NULL);
        int64_t o = outside(&P, "scaled:bk=128", out);
        printf("epilogue case %d (alpha %g, beta %g, C %d, bias %d, %s%s): %lld of %lld outside\n", cs, P.alpha, P.beta,
               P.C != NULL, P.bias != NULL, er_format_name(P.fo), P.opts ? ", saturating" : "", (long long)o,
               (long long)mn);
        CHECK(o == 0, "epilogue case %d: a correct kernel flagged on %lld", cs, (long long)o);
        for (int rev = 0; rev < 2; rev++) {
            for (int64_t i = 0; i < P.m; i++)
                for (int64_t j = 0; j < P.n; j++) out[i * P.n + j] = kernel_before(&P, i, j, rev);
            int64_t ob = outside(&P, "scaled:bk=1,order=before", out), oa = outside(&P, "scaled:bk=1", out);
            printf("epilogue case %d: scales before the sum (%s): %lld outside order=before, %lld outside order=after\n",
                   cs, rev ? "reversed" : "index order", (long long)ob, (long long)oa);
            CHECK(ob == 0, "epilogue case %d: the scales-before kernel flagged on %lld under order=before", cs,
                  (long long)ob);
        }
        if (cs == 3) {
            /* the saturating cast: an output of 448 where the exact value is beyond it is covered; the
             * same kernel cast without saturation (NaN) is not */
            int64_t sat = 0;
            for (int64_t e = 0; e < mn; e++) sat += fabs(out[e]) > 464;
            unsigned o2 = P.opts;
            P.opts = 0;
            int64_t on = outside(&P, "scaled:bk=128", out);
            P.opts = o2;
            printf("epilogue case 3: %lld saturated outputs; cast without saturation: %lld outside\n", (long long)sat,
                   (long long)on);
            CHECK(sat > 0 && on >= sat, "epilogue: saturation exercised (%lld) and a NaN cast flagged (%lld)",
                  (long long)sat, (long long)on);
        }
        free(out);
        unmake(&P);
    }
}

static void refusals(void)
{
    er_scaled_args sa;
    er_result *r = NULL;
    char msg[512];
    uint8_t A[6] = {0}, B[6] = {0};
    float s3[3] = {1, 1, 1}, D[4];
    er_tensor a = er_tensor_2d(ER_FMT_F8E4M3FN, 2, 3, A), b = er_tensor_2d(ER_FMT_F8E4M3FN, 3, 2, B);
    er_tensor d = er_tensor_2d(ER_FMT_F32, 2, 2, D), bad = er_tensor_2d(ER_FMT_F32, 1, 3, s3);
    er_scaled_args_init(&sa);
    sa.a = &a, sa.b = &b, sa.d = &d, sa.a_scale = &bad;
    CHECK(er_scaled_result_create(&sa, &r, msg, sizeof msg) == ER_EINVAL && strstr(msg, "a_scale is 1 x 3"),
          "a 1 x 3 a_scale refused: %s", msg);
    sa.a_scale = NULL;
    sa.alpha = 0.1; /* not an f32 value */
    CHECK(er_scaled_result_create(&sa, &r, msg, sizeof msg) == ER_EINVAL && strstr(msg, "alpha"), "alpha: %s", msg);
    sa.alpha = 1.0;
    s3[1] = NAN;
    er_tensor bs = er_tensor_2d(ER_FMT_F32, 1, 2, s3);
    sa.b_scale = &bs;
    CHECK(er_scaled_result_create(&sa, &r, msg, sizeof msg) == ER_EINVAL && strstr(msg, "b_scale[0, 1] is NaN"),
          "a NaN scale: %s", msg);
    sa.b_scale = NULL;
    CHECK(er_scaled_result_create(&sa, &r, msg, sizeof msg) == ER_OK, "plain: %s", msg);
    er_tol_opts o;
    const er_bounds *bd;
    er_tol_opts_init(&o);
    CHECK(er_result_bounds(r, &o, &bd, msg, sizeof msg) == ER_EINVAL && strstr(msg, "scaled:bk"),
          "normal refused on a scaled result: %s", msg);
    er_standard_parse("scaled:bk=1", &o.standard, msg, sizeof msg);
    CHECK(er_result_bounds(r, &o, &bd, msg, sizeof msg) == ER_OK, "scaled:bk=1: %s", msg);
    {
        float g[4] = {1, 1, 1, 1}, nb[4];
        er_tensor gt = er_tensor_2d(ER_FMT_F32, 2, 2, g), nt = er_tensor_2d(ER_FMT_F32, 2, 2, nb);
        er_result *ga = NULL, *gb = NULL;
        CHECK(er_result_backward(r, &gt, -1, -1, &ga, &gb, msg, sizeof msg) == ER_EUNSUPPORTED, "backward refused");
        CHECK(er_result_normal(r, ER_FMT_F32, 0, &nt, msg, sizeof msg) == ER_EUNSUPPORTED, "normal() refused");
    }
    er_result_free(r);
    er_standard s;
    CHECK(er_standard_parse("scaled:bk=128,partial=hopper-fp8", &s, msg, sizeof msg) == ER_OK && s.k == 32 && s.F == 13,
          "partial model: %s", msg);
    CHECK(er_standard_parse("scaled:bk=100,partial=hopper-fp8", &s, msg, sizeof msg) == ER_EINVAL, "bk not a multiple of k");
    CHECK(er_standard_parse("scaled:partial=f32", &s, msg, sizeof msg) == ER_EINVAL, "bk required");
    CHECK(er_standard_parse("scaled:bk=64,partial=blackwell-mxf4", &s, msg, sizeof msg) == ER_EINVAL, "groups refused");
    CHECK(er_standard_parse("scaled:bk=64,order=before", &s, msg, sizeof msg) == ER_OK && s.split == 1, "order=before");
    CHECK(er_standard_parse("scaled:bk=128,order=before,partial=hopper-fp8", &s, msg, sizeof msg) == ER_EINVAL,
          "order=before with a partial model");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_rng = er_test_seed("test_scaled");
    refusals();
    epilogue();
    deepgemm();
    hopper();
    printf("%s\n", g_fail ? "FAILED" : "ok");
    return g_fail ? 1 : 0;
}
