/*
 * test_bounds.c (test_bounds): the tolerance layer (er_result_bounds, er_result_covers,
 * er_result_normal) against the bit-accurate simulated implementations of sim.c.
 *
 *  - table:          the library's engine standards have the parameters of the sim rows they model
 *                    (deepgemm-fp8 == sim hopper-fp8-deepgemm, blackwell-mx == sim blackwell-mxf8f6f4,
 *                    blackwell-mxf4 == sim blackwell-mxf4, ...).
 *  - sound_normal:   random and adversarial cases (1..4 x 1..4, k 1..2000, bf16 / f16 / f8E4M3FN / f32
 *                    inputs, a and b sometimes of different formats, C absent or f32 / bf16 / f64,
 *                    outputs f32 and bf16 (sometimes f16, f8E4M3FN), every rounding direction): index
 *                    order, 2 and 4 lanes (sequential and pairwise combination) with compute f32, and
 *                    er_result_normal, are covered under "normal"; a covered finite output is within
 *                    tolerance of rounded.
 *  - sound_any_order: the same; normal's implementations plus reversed, pairwise, 8 and 16 lanes,
 *                    blocked FMA (blocks 2, 8, 32, k), random trees without FMA, with FMA and with
 *                    random FMA, and OpenBLAS sgemm where CMake found it (ER_TEST_HAVE_OPENBLAS).
 *  - sound_compute:  normal and any_order with compute bf16, f16 and f32, with and without flush to zero.
 *  - sound_engines:  every engine standard against sim_engine with the matching model (block-scaled
 *                    e8m0 operands, blocks 16 / 32, for blackwell-mx, -mxf8f6f4 and -mxf4).
 *  - detection:      an output one representable value beyond finite_range (next above high, next
 *                    below low) is never covered, nor a NaN or infinity that may_be excludes; low, high
 *                    and rounded (where it is in a range) are covered; low <= rounded <= high and
 *                    tolerance >= max(rounded - low, high - rounded).
 *  - specials:       NaN and infinite inputs and C, inf * 0, inf - inf, sums that overflow f32, sums
 *                    between bf16's and f32's largest values: every implementation covered, may_be and
 *                    tolerance (NaN where rounded is not finite) as expected.
 *  - unsound_*:      reproducers of the four classes of unsoundness this suite found (fixed in
 *                    5548157), kept as regressions; the comment above each says what was wrong.  The
 *                    random tests hit the same classes and tag such UNSOUND lines with "[class: ...]"
 *                    (anything else is tagged NEW).
 *  - unsound_zero_factor_exponent, unsound_zero_block_scale, unsound_cdna3_fp8: issue 11's three cases
 *                    (a zero factor's exponent sets E; zero blocks with large scales and mxf4 groups of
 *                    zeros; CDNA3's 16-product two-stage fp8 step), each asserting the model's output and
 *                    that it is covered; they fail on the bounds before the fix.
 *  - sound_zero_padding: every engine case on K padded with zeros over huge B, zero blocks of A with
 *                    huge scales, and cancelling pairs of large products, under both readings of a zero
 *                    factor's exponent.
 *  - tightness:      REPORTED, not asserted beyond ratio <= 1: per standard, the median and the largest
 *                    |implementation - rounded| / tolerance on adversarial data and on random data.
 *
 * Data kinds: random, positive, drift (a big term and terms just below / above half an ulp of it:
 * partial sums at a binade boundary, every rounding the same way), cancel (x and -x pairs and a tiny
 * term), spread (every binade), overflow (near the output's overflow threshold), subnormal (products
 * below 2^-126), zero_c (C = -(A B rounded): results near zero), tiny_c (C subnormal, rows of zeros),
 * trunc (engines: terms just below the truncation unit, or, mxf4, below the normalisation's ulp).
 *
 * An implementation whose intermediate sum can overflow although the result need not (mixed signs and
 * sum of |terms| >= half the compute range) is outside normal and any_order (any_order: "a tree that
 * does not overflow"; normal restarts its partial sums): its non-finite outputs are skipped and counted.
 * Not for the engines: engines.md admits overflowing runs, so every engine output must be covered.
 *
 * Environment: EXACTREF_SEED (printed); EXACTREF_TEST_SCALE, a factor on the case counts (default 1;
 * 0.5 under ASan); EXACTREF_CASE_SEED reruns the one case printed with an UNSOUND line (every engine of
 * sound_engines takes it); EXACTREF_FULL=1 prints the data of UNSOUND cases with k > 128 too.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpfr.h>

#include "er_test.h"
#include "exactref/core/er_bounds.h"
#include "sim.h"

#ifdef ER_TEST_HAVE_OPENBLAS
#include <cblas.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ER_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ER_UNDER_ASAN 1
#endif
#endif

/* ck_assert marks a point on every call (a pipe write when Check forks): hot paths use REQUIRE. */
#define REQUIRE(cond, ...)                                                                             \
    do {                                                                                               \
        if (!(cond)) ck_abort_msg(__VA_ARGS__);                                                        \
    } while (0)

static double g_scale = 1.0;
static int scaled(int n)
{
    int r = (int)(n * g_scale + 0.5);
    return r < 1 ? 1 : r;
}

/* ---- Formats. ---- */
static er_format_info finfo(int f)
{
    er_format_info fi;
    REQUIRE(er_format_get_info(f, &fi) == ER_OK, "format %d", f);
    return fi;
}

static double rnd(int f, double x, int dir)
{
    double r;
    REQUIRE(er_round_double(f, x, dir, &r) == ER_OK, "er_round_double");
    return r;
}

static double val(int f, uint64_t bits)
{
    double x;
    REQUIRE(er_from_bits(f, bits, &x) == ER_OK, "er_from_bits %s 0x%llx", er_format_name(f), (unsigned long long)bits);
    return x;
}

static double fmax_(int f) { return val(f, finfo(f).max_finite_bits); }
static double fminsub(int f) { return val(f, finfo(f).min_subnormal_bits); }

/* x rounded to nearest into f, clamped to the finite range. */
static double fit(int f, double x)
{
    double r = rnd(f, x, ER_RND_NEAREST_EVEN);
    if (!isfinite(r)) r = copysign(fmax_(f), x);
    return r;
}

static uint64_t pat(int f, double v)
{
    uint64_t db, b;
    unsigned fl;
    memcpy(&db, &v, 8);
    REQUIRE(er_convert_bits(ER_FMT_F64, f, db, ER_RND_NEAREST_EVEN, 0u, &b, &fl) == ER_OK, "convert");
    if (isfinite(v)) REQUIRE(val(f, b) == v, "%a is not a value of %s", v, er_format_name(f));
    return b;
}

/* Element idx of a tensor buffer of sb-byte patterns (little-endian, as mma.h says). */
static void put(unsigned char *buf, int sb, size_t idx, uint64_t bits)
{
    for (int i = 0; i < sb; i++) buf[idx * (size_t)sb + (size_t)i] = (unsigned char)(bits >> (8 * i));
}
static uint64_t get(const unsigned char *buf, int sb, size_t idx)
{
    uint64_t b = 0;
    for (int i = 0; i < sb; i++) b |= (uint64_t)buf[idx * (size_t)sb + (size_t)i] << (8 * i);
    return b;
}

/* The exponent a matrix engine gives a nonzero value of f (docs/accumulation-models.md). */
static int hwexp(int f, double x)
{
    int e = ilogb(x), emin = finfo(f).emin;
    return e < emin ? emin : e;
}

static const char *fname(int f) { return f < 0 ? "none" : er_format_name(f); }

/* ---- Random numbers. ---- */
static uint64_t R(uint64_t *rng) { return er_test_rand(rng); }
static int rint_(uint64_t *rng, int lo, int hi) { return hi <= lo ? lo : lo + (int)(R(rng) % (uint64_t)(hi - lo + 1)); }
static double runif(uint64_t *rng) { return (double)(R(rng) >> 11) * 0x1p-53; }

/* A nonzero value of f with exponent in [elo, ehi] (clamped to f), sign: 0 random, else its sign. */
static double rval(int f, uint64_t *rng, int elo, int ehi, int sgn)
{
    er_format_info fi = finfo(f);
    int lo = elo < fi.emin - fi.significand_bits ? fi.emin - fi.significand_bits : elo;
    int hi = ehi > fi.emax ? fi.emax : ehi;
    double x;
    if (lo > hi) lo = hi;
    x = fit(f, ldexp(1.0 + runif(rng), rint_(rng, lo, hi)));
    if (x == 0) x = fminsub(f);
    if (sgn < 0 || (sgn == 0 && (R(rng) & 1u))) x = -x;
    return x;
}

/* The "middle" exponent range of a format for random data. */
static void mid_range(int f, int *lo, int *hi)
{
    er_format_info fi = finfo(f);
    if (fi.emax - fi.emin < 20) {
        *lo = fi.emin - fi.significand_bits;
        *hi = fi.emax;
    } else {
        *lo = fi.emin > -8 ? fi.emin : -8;
        *hi = fi.emax - 1 < 8 ? fi.emax - 1 : 8;
    }
}

/* ---- A problem: values, the library's tensors and Result. ---- */
typedef struct prob {
    int m, n, k, nb;
    int fa, fb, fc, fo, dir, fs, block;
    double *A, *B, *C, *SA, *SB; /* A m*k, B k*n, C m*n, SA m*nb, SB nb*n (values) */
    unsigned char *pa, *pb, *pc, *pd, *psa, *psb;
    er_tensor ta, tb, tc, td, tsa, tsb;
    er_result *r;
    double *rv;     /* rounded, as values */
    double *colb;   /* scratch: a column of B */
    double *cols;   /* scratch: a column of SB */
} prob;

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    REQUIRE(p != NULL, "out of memory");
    return p;
}

static void prob_init(prob *P, int m, int n, int k, int fa, int fb, int fc, int fo, int dir, int fs, int block)
{
    memset(P, 0, sizeof *P);
    P->m = m, P->n = n, P->k = k, P->fa = fa, P->fb = fb, P->fc = fc, P->fo = fo, P->dir = dir;
    P->fs = fs, P->block = block;
    P->nb = fs >= 0 ? (k + block - 1) / block : 0;
    P->A = xcalloc((size_t)m * k, sizeof(double));
    P->B = xcalloc((size_t)k * n, sizeof(double));
    P->C = xcalloc((size_t)m * n, sizeof(double));
    P->SA = xcalloc((size_t)m * (P->nb + 1), sizeof(double));
    P->SB = xcalloc((size_t)(P->nb + 1) * n, sizeof(double));
    P->rv = xcalloc((size_t)m * n, sizeof(double));
    P->colb = xcalloc((size_t)k, sizeof(double));
    P->cols = xcalloc((size_t)P->nb + 1, sizeof(double));
}

static void prob_free(prob *P)
{
    if (P->r) er_result_free(P->r);
    free(P->A), free(P->B), free(P->C), free(P->SA), free(P->SB), free(P->rv), free(P->colb), free(P->cols);
    free(P->pa), free(P->pb), free(P->pc), free(P->pd), free(P->psa), free(P->psb);
    memset(P, 0, sizeof *P);
}

static void tensor_of(int f, int rows, int cols, const double *v, unsigned char **buf, er_tensor *t)
{
    int sb = finfo(f).storage_bytes;
    free(*buf);
    *buf = xcalloc((size_t)rows * cols, (size_t)sb);
    for (size_t i = 0; i < (size_t)rows * cols; i++) put(*buf, sb, i, pat(f, v[i]));
    *t = er_tensor_2d(f, rows, cols, *buf);
}

static void prob_args(prob *P, er_mma_args *args, er_tensor *d)
{
    tensor_of(P->fa, P->m, P->k, P->A, &P->pa, &P->ta);
    tensor_of(P->fb, P->k, P->n, P->B, &P->pb, &P->tb);
    if (P->fc >= 0) tensor_of(P->fc, P->m, P->n, P->C, &P->pc, &P->tc);
    if (P->fs >= 0) {
        tensor_of(P->fs, P->m, P->nb, P->SA, &P->psa, &P->tsa);
        tensor_of(P->fs, P->nb, P->n, P->SB, &P->psb, &P->tsb);
    }
    er_mma_args_init(args);
    args->a = &P->ta;
    args->b = &P->tb;
    args->c = P->fc >= 0 ? &P->tc : NULL;
    args->d = d;
    args->rounding = P->dir;
    args->threads = 1;
    if (P->fs >= 0) {
        args->a_scale = &P->tsa;
        args->b_scale = &P->tsb;
        args->block = P->block;
    }
}

static void prob_create(prob *P)
{
    er_mma_args args;
    char msg[256] = "";
    int sb = finfo(P->fo).storage_bytes;
    free(P->pd);
    P->pd = xcalloc((size_t)P->m * P->n, (size_t)sb);
    P->td = er_tensor_2d(P->fo, P->m, P->n, P->pd);
    prob_args(P, &args, &P->td);
    er_status st = er_result_create(&args, &P->r, msg, sizeof msg);
    REQUIRE(st == ER_OK, "er_result_create: %d %s", st, msg);
    for (int e = 0; e < P->m * P->n; e++) P->rv[e] = val(P->fo, get(P->pd, sb, (size_t)e));
}

/* The exact A B (+ C when with_c) rounded to f32 to nearest, into out[m*n] (values). */
static void prob_exact_f32(prob *P, int with_c, double *out)
{
    er_mma_args args;
    unsigned char *buf = xcalloc((size_t)P->m * P->n, 4);
    er_tensor d = er_tensor_2d(ER_FMT_F32, P->m, P->n, buf);
    int fc = P->fc;
    if (!with_c) P->fc = -1;
    prob_args(P, &args, &d);
    args.rounding = ER_RND_NEAREST_EVEN;
    REQUIRE(er_mma(&args) == ER_OK, "er_mma(&args) == ER_OK");
    P->fc = fc;
    for (int e = 0; e < P->m * P->n; e++) out[e] = val(ER_FMT_F32, get(buf, 4, (size_t)e));
    free(buf);
}

static const double *prow(const prob *P, int i) { return P->A + (size_t)i * P->k; }
static const double *pcol(prob *P, int j)
{
    for (int p = 0; p < P->k; p++) P->colb[p] = P->B[(size_t)p * P->n + j];
    return P->colb;
}
static double pc(const prob *P, int e) { return P->fc >= 0 ? P->C[e] : 0.0; }

/* Sum of |terms| and whether the terms have both signs (for the overflow rule). */
static double elem_T(prob *P, int i, int j, int *mixed)
{
    const double *a = prow(P, i);
    double T = 0;
    int pos = 0, neg = 0;
    for (int p = 0; p < P->k; p++) {
        double x = a[p] * P->B[(size_t)p * P->n + j];
        if (P->fs >= 0) x *= P->SA[(size_t)i * P->nb + p / P->block] * P->SB[(size_t)(p / P->block) * P->n + j];
        T += fabs(x);
        pos |= x > 0, neg |= x < 0;
    }
    double c = pc(P, i * P->n + j);
    T += fabs(c);
    pos |= c > 0, neg |= c < 0;
    *mixed = pos && neg;
    return T;
}

/* ---- Implementations. ---- */
enum {
    IM_INDEX, IM_LANES2, IM_LANES4, IM_LANES2PW, IM_LANES4PW, IM_NORMAL_API, /* normal */
    IM_REVERSED, IM_PAIRWISE, IM_LANES8, IM_LANES16PW, IM_BFMA2, IM_BFMA8, IM_BFMA32, IM_BFMAK,
    IM_TREE0, IM_TREE1, IM_TREE2, IM_TREE0B, IM_TREE1B, IM_TREE2B, IM_OPENBLAS, /* any_order */
    IM_COUNT
};
#define IM_NORMAL_END IM_REVERSED
static const char *im_names[IM_COUNT] = {
    "index_order", "lanes2", "lanes4", "lanes2_pairwise", "lanes4_pairwise", "er_result_normal",
    "reversed", "pairwise", "lanes8", "lanes16_pairwise", "blocked_fma2", "blocked_fma8", "blocked_fma32",
    "blocked_fma_k", "tree", "tree_fma", "tree_randfma", "tree#2", "tree_fma#2", "tree_randfma#2",
    "openblas_sgemm"};

static int have_openblas(void)
{
#ifdef ER_TEST_HAVE_OPENBLAS
    return 1;
#else
    return 0;
#endif
}

/* The outputs of implementation id on every element of P (values of P->fo), compute format cf. */
static void run_impl(prob *P, int id, int cf, int ftz, uint64_t tseed, double *out)
{
    int m = P->m, n = P->n, k = P->k, fo = P->fo, dir = P->dir;
    if (id == IM_NORMAL_API) {
        int sb = finfo(fo).storage_bytes;
        unsigned char *buf = xcalloc((size_t)m * n, (size_t)sb);
        er_tensor t = er_tensor_2d(fo, m, n, buf);
        char msg[200] = "";
        er_status st = er_result_normal(P->r, cf, ftz, &t, msg, sizeof msg);
        REQUIRE(st == ER_OK, "er_result_normal: %s", msg);
        for (int e = 0; e < m * n; e++) out[e] = val(fo, get(buf, sb, (size_t)e));
        free(buf);
        return;
    }
    if (id == IM_OPENBLAS) {
#ifdef ER_TEST_HAVE_OPENBLAS
        float *A = xcalloc((size_t)m * k, sizeof(float)), *B = xcalloc((size_t)k * n, sizeof(float));
        float *C = xcalloc((size_t)m * n, sizeof(float));
        for (size_t i = 0; i < (size_t)m * k; i++) A[i] = (float)P->A[i]; /* exact: values of f32 */
        for (size_t i = 0; i < (size_t)k * n; i++) B[i] = (float)P->B[i];
        for (int e = 0; e < m * n; e++) C[e] = (float)rnd(ER_FMT_F32, pc(P, e), ER_RND_NEAREST_EVEN);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, k, B, n, P->fc >= 0 ? 1.0f : 0.0f, C, n);
        for (int e = 0; e < m * n; e++) out[e] = rnd(fo, (double)C[e], dir);
        free(A), free(B), free(C);
#else
        (void)tseed;
        ck_abort_msg("no OpenBLAS");
#endif
        return;
    }
    sim_set_ftz(ftz);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            const double *a = prow(P, i), *b = pcol(P, j);
            int e = i * n + j;
            double c = pc(P, e), v;
            uint64_t ts = tseed ^ (uint64_t)e * UINT64_C(0x9e3779b97f4a7c15);
            switch (id) {
            case IM_INDEX: v = sim_index_order(k, a, b, c, cf, fo, dir); break;
            case IM_LANES2: v = sim_lanes(2, k, a, b, c, cf, fo, dir); break;
            case IM_LANES4: v = sim_lanes(4, k, a, b, c, cf, fo, dir); break;
            case IM_LANES2PW: v = sim_lanes_pairwise(2, k, a, b, c, cf, fo, dir); break;
            case IM_LANES4PW: v = sim_lanes_pairwise(4, k, a, b, c, cf, fo, dir); break;
            case IM_REVERSED: v = sim_reversed(k, a, b, c, cf, fo, dir); break;
            case IM_PAIRWISE: v = sim_pairwise(k, a, b, c, cf, fo, dir); break;
            case IM_LANES8: v = sim_lanes(8, k, a, b, c, cf, fo, dir); break;
            case IM_LANES16PW: v = sim_lanes_pairwise(16, k, a, b, c, cf, fo, dir); break;
            case IM_BFMA2: v = sim_blocked_fma(2, k, a, b, c, cf, fo, dir); break;
            case IM_BFMA8: v = sim_blocked_fma(8, k, a, b, c, cf, fo, dir); break;
            case IM_BFMA32: v = sim_blocked_fma(32, k, a, b, c, cf, fo, dir); break;
            case IM_BFMAK: v = sim_blocked_fma(k, k, a, b, c, cf, fo, dir); break;
            case IM_TREE0: v = sim_random_tree(ts, 0, k, a, b, c, cf, fo, dir); break;
            case IM_TREE1: v = sim_random_tree(ts, 1, k, a, b, c, cf, fo, dir); break;
            case IM_TREE2: v = sim_random_tree(ts, 2, k, a, b, c, cf, fo, dir); break;
            case IM_TREE0B: v = sim_random_tree(ts + 1, 0, k, a, b, c, cf, fo, dir); break;
            case IM_TREE1B: v = sim_random_tree(ts + 1, 1, k, a, b, c, cf, fo, dir); break;
            case IM_TREE2B: v = sim_random_tree(ts + 1, 2, k, a, b, c, cf, fo, dir); break;
            default: ck_abort_msg("bad implementation %d", id); v = 0;
            }
            out[e] = v;
        }
    sim_set_ftz(0);
}

/* The engine model sm on every element (tensor cores ignore flush to zero). */
static void run_engine(prob *P, const sim_model *sm, double *out)
{
    for (int i = 0; i < P->m; i++)
        for (int j = 0; j < P->n; j++) {
            const double *a = prow(P, i), *b = pcol(P, j);
            int e = i * P->n + j;
            if (P->fs >= 0) {
                for (int q = 0; q < P->nb; q++) P->cols[q] = P->SB[(size_t)q * P->n + j];
                out[e] = sim_engine_scaled(sm, P->k, a, b, P->SA + (size_t)i * P->nb, P->cols, P->block, pc(P, e),
                                           P->fa, P->fb, P->fo, P->dir);
            } else {
                out[e] = sim_engine(sm, P->k, a, b, pc(P, e), P->fa, P->fb, P->fo, P->dir);
            }
        }
}

/* ---- Checking outputs against covers(). ---- */
typedef struct ctx {
    const char *test;
    int case_no;
    uint64_t case_seed;
    const char *kind;
    long elements, checks, skipped, failures, reported;
    long fail_by[64];
    char fail_names[64][96];
    int nfail_names;
} ctx;

/* Count a failure of category what; returns how many that category had before. */
static long note_fail(ctx *X, const char *what)
{
    for (int i = 0; i < X->nfail_names; i++)
        if (!strcmp(X->fail_names[i], what)) return X->fail_by[i]++;
    if (X->nfail_names < 64) {
        snprintf(X->fail_names[X->nfail_names], sizeof X->fail_names[0], "%s", what);
        X->fail_by[X->nfail_names++] = 1;
    }
    return 0;
}

static void print_vec(const char *name, const double *v, int k)
{
    printf("    %s = {", name);
    for (int p = 0; p < k; p++) printf("%s%a", p ? ", " : "", v[p]);
    printf("}\n");
}

static void report(ctx *X, prob *P, const er_tol_opts *o, const char *impl, int e, double ov, const er_bounds *bd,
                   const char *why)
{
    int i = e / P->n, j = e % P->n;
    char what[96];
    /* the classes found so far (see the unsound_* tests); anything else is new */
    const char *cls = "", *tag = "NEW";
    if (isnan(P->rv[e]) && isfinite(ov))
        cls = " [class: NaN by overflow of the output format, unsound_nan_output_overflow]", tag = "nan-output";
    else if (o->standard.kind == ER_STD_ENGINE && isfinite(ov) && (fabs(ov) < 0x1p-126 || fabs(P->rv[e]) < 0x1p-126))
        cls = " [class: engine accumulator below 2^-126, unsound_engine_subnormal]", tag = "below-2^-126";
    else if (o->standard.kind == ER_STD_ENGINE && !isfinite(ov))
        cls = " [class: engine intermediate overflow, unsound_engine_overflow]", tag = "engine-overflow";
    snprintf(what, sizeof what, "%s / %s (%s)", o->standard.name, impl, tag);
    X->failures++;
    if (note_fail(X, what) >= 2 || X->reported >= 16) return; /* details: 2 per category */
    X->reported++;
    printf("UNSOUND [%s case %d, case seed 0x%llx, data %s] standard %s (compute %s%s), implementation %s: %s%s\n",
           X->test, X->case_no, (unsigned long long)X->case_seed, X->kind, o->standard.name,
           o->compute < 0 ? "default" : fname(o->compute), o->flush_to_zero ? ", ftz" : "", impl, why, cls);
    printf("    a %s, b %s, c %s, out %s, rounding %s, k %d, element (%d, %d) of %d x %d%s\n", fname(P->fa),
           fname(P->fb), fname(P->fc), fname(P->fo), er_rounding_name(P->dir), P->k, i, j, P->m, P->n,
           P->fs >= 0 ? " (block-scaled)" : "");
    printf("    output %a, rounded %a, finite_range [%a, %a] (has_range %d), tolerance %g, radius %g, "
           "may_be +inf %d -inf %d nan %d\n",
           ov, P->rv[e], val(P->fo, bd->low[e]), val(P->fo, bd->high[e]), bd->has_range[e], bd->tolerance[e],
           bd->radius[e], bd->may_pinf[e], bd->may_ninf[e], bd->may_nan[e]);
    if (P->k <= 128 || getenv("EXACTREF_FULL")) {
        print_vec("a", prow(P, i), P->k);
        print_vec("b", pcol(P, j), P->k);
        if (P->fs >= 0) {
            print_vec("scale_a", P->SA + (size_t)i * P->nb, P->nb);
            for (int q = 0; q < P->nb; q++) P->cols[q] = P->SB[(size_t)q * P->n + j];
            print_vec("scale_b", P->cols, P->nb);
            printf("    block %d\n", P->block);
        }
        printf("    c = %a\n", pc(P, e));
    } else {
        printf("    (k > 128: rerun with EXACTREF_CASE_SEED=0x%llx EXACTREF_FULL=1 to print the data)\n",
               (unsigned long long)X->case_seed);
    }
    fflush(stdout);
}

/* Check the outputs out[] (values of P->fo) of one implementation under o.  cmax: compute's largest
 * finite value (for the intermediate-overflow rule; 0: never skip). */
static void check_outputs(ctx *X, prob *P, const er_tol_opts *o, const char *impl, const double *out, double cmax)
{
    const er_bounds *bd;
    char msg[256] = "";
    int me = P->m * P->n, sb = finfo(P->fo).storage_bytes;
    REQUIRE(er_result_bounds(P->r, o, &bd, msg, sizeof msg) == ER_OK, "bounds: %s", msg);
    unsigned char *buf = xcalloc((size_t)me, (size_t)sb), cov[16];
    REQUIRE(me <= 16, "me <= 16");
    for (int e = 0; e < me; e++) put(buf, sb, (size_t)e, pat(P->fo, out[e]));
    er_tensor t = er_tensor_2d(P->fo, P->m, P->n, buf);
    int64_t outside = -1;
    REQUIRE(er_result_covers(P->r, o, &t, cov, &outside, msg, sizeof msg) == ER_OK, "covers: %s", msg);
    free(buf);
    for (int e = 0; e < me; e++) {
        double ov = out[e], rv = P->rv[e];
        X->checks++;
        if (cov[e]) {
            if (isfinite(ov) && isfinite(rv) && !(fabs(ov - rv) <= bd->tolerance[e]))
                report(X, P, o, impl, e, ov, bd, "covered but |output - rounded| > tolerance");
            continue;
        }
        if (!isfinite(ov) && cmax > 0) {
            int mixed;
            double T = elem_T(P, e / P->n, e % P->n, &mixed);
            if (mixed && !(T < 0.5 * cmax)) {
                X->skipped++; /* an intermediate may overflow: outside the standard */
                continue;
            }
        }
        report(X, P, o, impl, e, ov, bd, "NOT COVERED");
    }
}

/* ---- Data. ---- */
enum { K_RANDOM, K_POSITIVE, K_DRIFT, K_CANCEL, K_SPREAD, K_OVERFLOW, K_SUBNORMAL, K_ZEROC, K_TINYC, K_TRUNC, K_COUNT };
static const char *kind_names[K_COUNT] = {"random", "positive", "drift", "cancel", "spread", "overflow",
                                          "subnormal", "zero_c", "tiny_c", "trunc"};

typedef struct gen_opts {
    int tc;       /* compute precision (significand bits with the hidden one) */
    int ek, eF;   /* engine: products per step, fractional bits (TRUNC) */
    int grouped;  /* engine with exact groups: products per group (TRUNC needs block == group) */
    int first;    /* DRIFT: the big term always first (tightness of index order) */
    int positive; /* no sign flips of rows and columns (TRUNC for floor_terms models) */
} gen_opts;

static int wide_fmt(int f) { return f == ER_FMT_BF16 || f == ER_FMT_F32 || f == ER_FMT_TF32; }

/* Fill A and B from base vectors al, be (length k): A[i][p] = al[p] si 2^ri, B[p][j] = be[p] sj 2^cj. */
static void fill_structured(prob *P, const double *al, const double *be, uint64_t *rng, int sr, int positive)
{
    for (int i = 0; i < P->m; i++) {
        int r = rint_(rng, -sr, sr);
        double s = (R(rng) & 1u) && !positive ? -1.0 : 1.0;
        for (int p = 0; p < P->k; p++) P->A[(size_t)i * P->k + p] = fit(P->fa, ldexp(al[p] * s, r));
    }
    for (int j = 0; j < P->n; j++) {
        int r = rint_(rng, -sr, sr);
        double s = (R(rng) & 1u) && !positive ? -1.0 : 1.0;
        for (int p = 0; p < P->k; p++) P->B[(size_t)p * P->n + j] = fit(P->fb, ldexp(be[p] * s, r));
    }
}

/* a, b positive values of fa, fb with a b just below (up = 0) or just above (up = 1) target. */
static void pick_pair(int fa, int fb, double target, int up, uint64_t *rng, double *a, double *b)
{
    int e = ilogb(target);
    for (int tries = 0; tries < 8; tries++) {
        int eb = (int)floor(e / 2.0) + rint_(rng, -1, 1);
        double bb = fit(fb, ldexp(1.0 + runif(rng), eb));
        if (bb <= 0) continue;
        double aa = rnd(fa, target / bb, up ? ER_RND_POSITIVE_INF : ER_RND_ZERO);
        if (!isfinite(aa) || aa <= 0) continue;
        *a = aa, *b = bb;
        if (up ? aa * bb > target : aa * bb < target) return;
    }
    *a = fit(fa, target), *b = 1.0;
}

static void gen_data(prob *P, int kind, uint64_t *rng, const gen_opts *g)
{
    int m = P->m, n = P->n, k = P->k, lo, hi;
    double *al = xcalloc((size_t)k, sizeof(double)), *be = xcalloc((size_t)k, sizeof(double));
    mid_range(P->fa, &lo, &hi);
    if ((kind == K_OVERFLOW || kind == K_SUBNORMAL) && !(wide_fmt(P->fa) && wide_fmt(P->fb))) kind = K_SPREAD;
    if (kind == K_TRUNC && (g->ek <= 0 || (g->grouped ? P->fs < 0 || P->block != g->grouped
                                                      : finfo(P->fa).significand_bits < 2)))
        kind = K_POSITIVE;
    /* block scales: e8m0 powers of two */
    if (P->fs >= 0) {
        int sr = kind == K_SPREAD ? 40 : kind == K_TRUNC || kind == K_DRIFT ? 0 : 8;
        for (size_t i = 0; i < (size_t)m * P->nb; i++) P->SA[i] = ldexp(1.0, rint_(rng, -sr, sr));
        for (size_t i = 0; i < (size_t)P->nb * n; i++) P->SB[i] = ldexp(1.0, rint_(rng, -sr, sr));
    }
    switch (kind) {
    case K_RANDOM:
    case K_SPREAD:
    case K_TINYC: {
        int alo = lo, ahi = hi, blo, bhi;
        mid_range(P->fb, &blo, &bhi);
        if (kind == K_SPREAD) {
            er_format_info fa = finfo(P->fa), fb = finfo(P->fb);
            alo = fa.emin - fa.significand_bits, ahi = fa.emax;
            blo = fb.emin - fb.significand_bits, bhi = fb.emax;
            if (wide_fmt(P->fa)) alo = -75, ahi = 60;
            if (wide_fmt(P->fb)) blo = -75, bhi = 60;
        }
        int zeros = kind == K_TINYC ? 70 : (R(rng) % 4 == 0 ? 15 : 0);
        int zrows = kind == K_TINYC && (R(rng) & 1u); /* rows of zeros, small b: C alone, tiny */
        if (zrows) bhi = blo + 6 < -3 ? blo + 6 : -3;
        for (size_t i = 0; i < (size_t)m * k; i++)
            P->A[i] = (int)(R(rng) % 100) < zeros || (zrows && (i / (size_t)k) % 2 == 0) ? 0.0 : rval(P->fa, rng, alo, ahi, 0);
        for (size_t i = 0; i < (size_t)k * n; i++) P->B[i] = (zrows && R(rng) % 3 == 0) ? 0.0 : rval(P->fb, rng, blo, bhi, 0);
        if (P->fc >= 0)
            for (int e = 0; e < m * n; e++) {
                if (kind == K_TINYC) P->C[e] = rval(P->fc, rng, -160, -120, 0);
                else P->C[e] = R(rng) % 5 == 0 ? 0.0 : rval(P->fc, rng, alo + blo, ahi + bhi + 4, 0);
            }
        break;
    }
    case K_POSITIVE: {
        int e0 = rint_(rng, lo, hi - 1 > lo ? hi - 1 : lo);
        for (int p = 0; p < k; p++) {
            al[p] = rval(P->fa, rng, e0, e0 + 1, 1);
            be[p] = rval(P->fb, rng, 0, 0, 1);
        }
        fill_structured(P, al, be, rng, 2, g->positive);
        if (P->fc >= 0)
            for (int e = 0; e < m * n; e++) P->C[e] = 0.0;
        break;
    }
    case K_DRIFT: {
        /* a big first term x0 just above a power of two, then terms just below (or just above) half an ulp
         * of x0 in compute: every addition of index order rounds the same way */
        int up = (int)(R(rng) & 1u);
        double a0 = fit(P->fa, ldexp(1.0, rint_(rng, 0, hi > 4 ? 4 : hi))), b0 = fit(P->fb, ldexp(1.0, rint_(rng, 0, 2)));
        double x0 = a0 * b0, h = ldexp(1.0, ilogb(x0) - g->tc);
        if (R(rng) & 1u) { /* x0 a little above the power of two */
            double a1 = rnd(P->fa, a0 * (1 + 0x1p-20), ER_RND_POSITIVE_INF);
            if (isfinite(a1) && a1 < 2 * a0) a0 = a1;
            x0 = a0 * b0;
        }
        al[0] = a0, be[0] = b0;
        for (int p = 1; p < k; p++) {
            /* 2^-21 away from h: still off the tie after the product's rounding to an f32 compute */
            double t = up ? h * (1 + 0x1p-21) : h * (1 - 0x1p-21);
            if (R(rng) % 8 == 0) t = h * (0.5 + 0.45 * runif(rng));
            pick_pair(P->fa, P->fb, t, up, rng, &al[p], &be[p]);
        }
        if (k > 1 && !g->first && (R(rng) & 1u)) { /* the big term elsewhere */
            int q = rint_(rng, 0, k - 1);
            double ta = al[0], tb = be[0];
            al[0] = al[q], be[0] = be[q], al[q] = ta, be[q] = tb;
        }
        fill_structured(P, al, be, rng, 2, g->positive);
        if (P->fc >= 0)
            for (int e = 0; e < m * n; e++) P->C[e] = 0.0;
        break;
    }
    case K_CANCEL:
    case K_ZEROC: {
        int *perm = xcalloc((size_t)k, sizeof(int));
        for (int p = 0; p < k; p++) perm[p] = p;
        for (int p = k - 1; p > 0; p--) {
            int q = rint_(rng, 0, p), t = perm[p];
            perm[p] = perm[q], perm[q] = t;
        }
        int blo, bhi;
        mid_range(P->fb, &blo, &bhi);
        for (int q = 0; q + 1 < k; q += 2) {
            double a = rval(P->fa, rng, lo, hi, 0), b = rval(P->fb, rng, blo, bhi, 0);
            al[perm[q]] = a, be[perm[q]] = b;
            al[perm[q + 1]] = -a, be[perm[q + 1]] = b;
            if (R(rng) % 16 == 0) al[perm[q + 1]] = -fit(P->fa, a * (1 + ldexp(1.0, -finfo(P->fa).significand_bits)));
        }
        if (k & 1) { /* the tiny term */
            al[perm[k - 1]] = rval(P->fa, rng, lo, lo + 2, 0);
            be[perm[k - 1]] = rval(P->fb, rng, blo, blo + 2, 0);
        }
        free(perm);
        fill_structured(P, al, be, rng, 1, g->positive);
        if (kind == K_ZEROC) {
            /* C = -(A B rounded to f32): the result is the rounding error, near zero */
            double *d = xcalloc((size_t)m * n, sizeof(double));
            P->fc = ER_FMT_F32;
            prob_exact_f32(P, 0, d);
            for (int e = 0; e < m * n; e++) {
                double c = -d[e];
                int r = (int)(R(rng) % 3);
                if (r && c != 0) c = rnd(ER_FMT_F32, nextafter(c, r == 1 ? INFINITY : -INFINITY), r == 1 ? ER_RND_POSITIVE_INF : ER_RND_NEGATIVE_INF);
                P->C[e] = c;
            }
            free(d);
        } else if (P->fc >= 0) {
            for (int e = 0; e < m * n; e++) P->C[e] = R(rng) & 1u ? 0.0 : rval(P->fc, rng, 2 * lo, 2 * lo + 4, 0);
        }
        break;
    }
    case K_OVERFLOW: {
        double om = fmax_(P->fo), d;
        static const double dd[] = {-0x1p-3, -0x1p-9, -0x1p-17, -0x1p-23, -0x1p-25, 0x1p-25, 0x1p-24, 0x1p-12};
        int mixed = R(rng) % 3 == 0;
        d = dd[R(rng) % (sizeof dd / sizeof dd[0])];
        er_format_info fo = finfo(P->fo);
        double target = (om + ldexp(1.0, fo.emax - fo.significand_bits - 1)) * (1 + d); /* near the overflow threshold */
        for (int p = 0; p < k; p++) {
            double x = target / k * (1 + 0.2 * (runif(rng) - 0.5));
            if (mixed && p % 4 == 3) x = -x * 0.5;
            be[p] = fit(P->fb, ldexp(1.0 + runif(rng), 62));
            al[p] = fit(P->fa, x / be[p]);
        }
        fill_structured(P, al, be, rng, 0, g->positive);
        if (P->fc >= 0)
            for (int e = 0; e < m * n; e++) P->C[e] = R(rng) & 1u ? 0.0 : fit(P->fc, (runif(rng) - 0.5) * om * 0x1p-4);
        break;
    }
    case K_SUBNORMAL: {
        /* products below 2^-126 (f32 subnormal, or lost): every one of them (half the cases), or mixed
         * with products up to 2^-115 */
        int all = (int)(R(rng) & 1u), sg = all && (R(rng) & 1u) ? 1 : 0; /* all positive: errors add up */
        for (size_t i = 0; i < (size_t)m * k; i++) P->A[i] = rval(P->fa, rng, -80, all ? -64 : -55, sg);
        for (size_t i = 0; i < (size_t)k * n; i++) P->B[i] = rval(P->fb, rng, -80, all ? -64 : -60, sg);
        if (P->fc >= 0)
            for (int e = 0; e < m * n; e++) P->C[e] = R(rng) & 1u ? 0.0 : rval(P->fc, rng, -149, -126, 0);
        break;
    }
    case K_TRUNC: {
        /* engines: per step one big term, the others just below the truncation unit 2^(E - F) */
        double S = 0;
        if (g->grouped) {
            /* exact groups (mxf4, block == group): the error is the normalisation's (F = 35 keeps every
             * group here): D = 1 from the first group of step 0; in every step the other groups (scale
             * 2^-25) add 3 x 1.25 2^-25 = 0.9375 ulp(1), dropped by the normalisation toward zero */
            int G = g->grouped;
            for (int p = 0; p < k; p++) {
                int q = p % g->ek, grp = q / G, in_g = q % G;
                double a = 0.0, b = 0.0;
                if (grp == 0 && in_g == 0 && p < g->ek) a = 1.0, b = 1.0;
                if (grp > 0 && in_g == 0) a = 1.0, b = 1.0;
                if (grp > 0 && in_g == 1) a = 0.5, b = 0.5;
                for (int i = 0; i < m; i++) P->A[(size_t)i * k + p] = a;
                for (int j = 0; j < n; j++) P->B[(size_t)p * n + j] = b;
            }
            for (int q = 0; q < P->nb; q++) {
                double sc = (q * P->block) % g->ek < G ? 1.0 : 0x1p-25;
                for (int i = 0; i < m; i++) P->SA[(size_t)i * P->nb + q] = sc;
                for (int j = 0; j < n; j++) P->SB[(size_t)q * n + j] = 1.0;
            }
            break;
        }
        int ha = finfo(P->fa).emax < 8 ? finfo(P->fa).emax : 8, hb = finfo(P->fb).emax < 8 ? finfo(P->fb).emax : 8;
        for (int p0 = 0; p0 < k; p0 += g->ek) {
            int p1 = p0 + g->ek < k ? p0 + g->ek : k, big = rint_(rng, p0, p1 - 1);
            double a = rval(P->fa, rng, ha - 2, ha - 1, 1), b = rval(P->fb, rng, hb - 2, hb - 1, 1);
            int E = hwexp(P->fa, a) + hwexp(P->fb, b);
            if (S > 0 && ilogb(S) > E) E = ilogb(S);
            if (E < -126) E = -126;
            double t = ldexp(1.0 - 0x1p-30, E - g->eF);
            for (int p = p0; p < p1; p++) {
                if (p == big) al[p] = a, be[p] = b;
                else pick_pair(P->fa, P->fb, t, 0, rng, &al[p], &be[p]);
            }
            S += a * b;
        }
        fill_structured(P, al, be, rng, 2, g->positive);
        if (P->fc >= 0)
            for (int e = 0; e < m * n; e++) P->C[e] = 0.0;
        break;
    }
    default: ck_abort_msg("bad kind");
    }
    free(al), free(be);
}

/* EXACTREF_CASE_SEED: rerun the one case of that case seed (printed with every UNSOUND line). */
static int case_override(uint64_t *seed)
{
    const char *s = getenv("EXACTREF_CASE_SEED");
    if (!s || !*s) return 0;
    *seed = strtoull(s, NULL, 0);
    return 1;
}

static int pick_k(uint64_t *rng, int kmax)
{
    int r = (int)(R(rng) % 100);
    if (r < 12) return rint_(rng, 1, 4);
    if (r < 60) return rint_(rng, 5, 64 < kmax ? 64 : kmax);
    if (r < 90 || kmax <= 512) return rint_(rng, 65 < kmax ? 65 : 1, 512 < kmax ? 512 : kmax);
    return rint_(rng, 513, kmax);
}

static const int in_fmts[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F32};

/* The output format: f32 or bf16, sometimes f16 or f8E4M3FN. */
static int pick_out(uint64_t *rng)
{
    int r = (int)(R(rng) % 20);
    return r < 9 ? ER_FMT_F32 : r < 18 ? ER_FMT_BF16 : r < 19 ? ER_FMT_F16 : ER_FMT_F8E4M3FN;
}

static void std_opts(er_tol_opts *o, const char *name, int compute, int ftz)
{
    char msg[200] = "";
    er_tol_opts_init(o);
    REQUIRE(er_standard_parse(name, &o->standard, msg, sizeof msg) == ER_OK, "parse %s: %s", name, msg);
    o->compute = compute;
    o->flush_to_zero = ftz;
}

static void ctx_init(ctx *X, const char *test)
{
    memset(X, 0, sizeof *X);
    X->test = test;
}

static void ctx_finish(ctx *X, double t0)
{
    printf("%s: %ld elements, %ld checks, %ld non-finite outputs skipped (intermediate overflow possible), "
           "%ld NOT covered, %.1f s\n",
           X->test, X->elements, X->checks, X->skipped, X->failures, (double)(clock() - t0) / CLOCKS_PER_SEC);
    for (int i = 0; i < X->nfail_names; i++) printf("    UNSOUND %s: %ld outputs\n", X->fail_names[i], X->fail_by[i]);
    fflush(stdout);
}

/* A random configuration for the summation standards. */
static void random_config(prob *P, uint64_t *rng, int kmax, int *kind)
{
    int fa = in_fmts[R(rng) % 4], fb = R(rng) % 4 == 0 ? in_fmts[R(rng) % 4] : fa;
    int fo = pick_out(rng), dir = (int)(R(rng) % ER_RND_COUNT);
    int r = (int)(R(rng) % 20), fc = r < 10 ? -1 : r < 15 ? ER_FMT_F32 : r < 18 ? ER_FMT_BF16 : r < 19 ? fo : ER_FMT_F64;
    static const int kinds[] = {K_RANDOM, K_RANDOM, K_POSITIVE, K_DRIFT, K_DRIFT, K_CANCEL, K_SPREAD,
                                K_OVERFLOW, K_SUBNORMAL, K_ZEROC, K_TINYC};
    *kind = kinds[R(rng) % (sizeof kinds / sizeof kinds[0])];
    if (*kind == K_TINYC) fc = R(rng) % 4 == 0 ? ER_FMT_F64 : ER_FMT_F32;
    prob_init(P, rint_(rng, 1, 4), rint_(rng, 1, 4), pick_k(rng, kmax), fa, fb, fc, fo, dir, -1, 1);
}

/* ---- The library's table against sim's. ---- */
START_TEST(table)
{
    static const char *pairs[][2] = {
        {"volta", "volta"}, {"turing", "turing"}, {"ampere", "ampere"}, {"ampere-tf32", "ampere-tf32"},
        {"ada-fp8", "ada-fp8"}, {"hopper", "hopper"}, {"hopper-tf32", "hopper-tf32"}, {"hopper-fp8", "hopper-fp8"},
        {"deepgemm-fp8", "hopper-fp8-deepgemm"}, {"hopper-fp8-deepgemm", "hopper-fp8-deepgemm"},
        {"blackwell", "blackwell"}, {"blackwell-f8f6f4", "blackwell-f8f6f4"}, {"blackwell-mx", "blackwell-mxf8f6f4"},
        {"blackwell-mxf8f6f4", "blackwell-mxf8f6f4"}, {"blackwell-mxf4", "blackwell-mxf4"}, {"cdna3", "cdna3"},
        {"cdna3-fp8", "cdna3-fp8"}, {"cdna3-bf8", "cdna3-fp8"}, {"cdna3-xf32", "cdna3-xf32"},
        {"blackwell-tf32", "blackwell-tf32"}, {"ada-f16", "ada-f16"}, {"volta-f16", "volta-f16"},
        {"turing-f16", "turing-f16"}, {"ampere-f16", "ampere-f16"}, {"ada-fp8-f16", "ada-fp8-f16"},
        {"hopper-f16", "hopper-f16"}, {"hopper-fp8-f16", "hopper-fp8-f16"}, {"blackwell-f16", "blackwell-f16"},
        {"blackwell-f8f6f4-f16", "blackwell-f8f6f4-f16"}, {"blackwell-nvf4", "blackwell-mxf4"}};
    for (size_t t = 0; t < sizeof pairs / sizeof pairs[0]; t++) {
        er_standard s;
        char msg[200];
        const sim_model *m = sim_model_find(pairs[t][1]);
        REQUIRE(er_standard_parse(pairs[t][0], &s, msg, sizeof msg) == ER_OK, "%s", msg);
        REQUIRE(m != NULL, "m != NULL");
        ck_assert_int_eq(s.kind, ER_STD_ENGINE);
        REQUIRE(s.k == m->k && s.F == m->F && s.out_p == m->out_p && s.out_round == m->out_round &&
                          s.promote == m->promote && s.floor_terms == m->floor_terms &&
                          s.group == (m->groups ? m->groups : 1) && s.tf32_inputs == m->tf32_trunc &&
                          (s.acc_fmt == ER_FMT_F16) == (m->acc_fmt == ER_FMT_F16) && s.F2 == m->F2 &&
                          s.two_stage == m->two_stage,
                      "standard %s differs from sim model %s", pairs[t][0], pairs[t][1]);
    }
    /* the listing: every row and alias parses to its row, er_standard_names names each, the table has a
     * line per row, and "cdna3" on fp8 operands is cdna3-fp8 */
    {
        int cnt = 0;
        const er_standard_info *L = er_standard_list(&cnt);
        const char *names = er_standard_names();
        char tab[8192], msg[200];
        size_t len = er_standard_table(tab, sizeof tab);
        REQUIRE(cnt >= 27 && len < sizeof tab && strlen(tab) == len, "listing: %d rows, table %zu", cnt, len);
        REQUIRE(er_standard_table(NULL, 0) == len, "the table's length without a buffer");
        for (int i = 0; i < cnt; i++) {
            er_standard s;
            char w[64];
            snprintf(w, sizeof w, " %s ", L[i].name);
            REQUIRE(strstr(names, w) != NULL, "er_standard_names lacks %s", L[i].name);
            snprintf(w, sizeof w, "\n%s ", L[i].name);
            REQUIRE(strstr(tab, w) != NULL, "the table lacks %s", L[i].name);
            REQUIRE(er_standard_parse(L[i].name, &s, msg, sizeof msg) == ER_OK && s.k == L[i].std.k && s.F == L[i].std.F,
                    "%s: %s", L[i].name, msg);
            for (const char *a = L[i].aliases; *a;) {
                size_t n = strcspn(a, " ");
                char al[48];
                snprintf(al, sizeof al, "%.*s", (int)n, a);
                REQUIRE(er_standard_parse(al, &s, msg, sizeof msg) == ER_OK && s.k == L[i].std.k && s.F == L[i].std.F &&
                            s.out_p == L[i].std.out_p && s.promote == L[i].std.promote,
                        "alias %s of %s: %s", al, L[i].name, msg);
                snprintf(w, sizeof w, " %s ", al);
                REQUIRE(strstr(names, w) != NULL, "er_standard_names lacks the alias %s", al);
                a += n;
                while (*a == ' ') a++;
            }
        }
        er_standard c3, r;
        REQUIRE(er_standard_parse("cdna3", &c3, msg, sizeof msg) == ER_OK, "%s", msg);
        r = er_standard_for_inputs(&c3, ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ);
        REQUIRE(r.k == 16 && r.two_stage == 1, "cdna3 on fp8: k %d, stages %d", r.k, r.two_stage + 1);
        r = er_standard_for_inputs(&c3, ER_FMT_BF16, ER_FMT_BF16);
        REQUIRE(r.k == 8 && r.two_stage == 0, "cdna3 on bf16 stays itself");
        REQUIRE(er_standard_parse("engine:k=16,d=f16", &r, msg, sizeof msg) == ER_OK && r.acc_fmt == ER_FMT_F16 &&
                    r.out_p == 10 && r.out_round == ER_RND_NEAREST_EVEN, "engine d=f16: %s", msg);
        REQUIRE(er_standard_parse("engine:k=16,F=24,F2=31,stages=2,round=nearest_even", &r, msg, sizeof msg) == ER_OK &&
                    r.F2 == 31 && r.two_stage == 1, "engine F2, stages: %s", msg);
        REQUIRE(er_standard_parse("engine:d=f8", &r, msg, sizeof msg) == ER_EINVAL, "engine d=f8 is refused");
    }
    /* engine: specs, with the keys as documented (F and tf32 included) */
    {
        er_standard s;
        char msg[200];
        REQUIRE(er_standard_parse("engine:k=8,F=25,p=24,round=zero,promote=32,group=2,floor=1,tf32=1", &s, msg,
                                  sizeof msg) == ER_OK, "%s", msg);
        REQUIRE(s.kind == ER_STD_ENGINE && s.k == 8 && s.F == 25 && s.out_p == 24 && s.out_round == ER_RND_ZERO &&
                    s.promote == 32 && s.group == 2 && s.floor_terms == 1 && s.tf32_inputs == 1,
                "engine spec parsed to k %d F %d p %d promote %d group %d floor %d tf32 %d", s.k, s.F, s.out_p,
                s.promote, s.group, s.floor_terms, s.tf32_inputs);
        REQUIRE(er_standard_parse("engine:k=8,f=20", &s, msg, sizeof msg) == ER_OK && s.F == 20, "f= : %s", msg);
        REQUIRE(er_standard_parse("engine:k=8,Q=3", &s, msg, sizeof msg) == ER_EINVAL && strstr(msg, "'Q'"),
                "an unknown key is named: %s", msg);
        REQUIRE(er_standard_parse("engine:k=8,promote=12", &s, msg, sizeof msg) == ER_EINVAL,
                "promote not a multiple of k is refused");
    }
}
END_TEST


/* ---- The CPU's vector paths of the engine bounds give the scalar path's bits. ---- */
START_TEST(simd_same_bits)
{
    uint64_t rng = er_test_seed("test_bounds/simd_same_bits");
    static const char *stds[] = {"hopper", "volta", "cdna3", "ampere", "engine:k=8,F=20,p=13,promote=32,group=2",
                                 "cdna3-fp8", "hopper-f16", "ada-fp8", "cdna3-xf32", "engine:k=16,group=16,d=f16"};
    static const int fmts[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F32};
    long compared = 0;
    for (int cs = 0; cs < 40; cs++) {
        int f = fmts[cs % 4], fc = cs % 3 == 0 ? -1 : ER_FMT_F32;
        int m = rint_(&rng, 1, 3), n = rint_(&rng, 4, 41), k = rint_(&rng, 0, 300);
        prob P;
        int lo, hi;
        prob_init(&P, m, n, k, f, f, fc, ER_FMT_F32, rint_(&rng, 0, ER_RND_COUNT - 1), -1, 1);
        mid_range(f, &lo, &hi);
        if (cs % 5 == 4) lo = hi - 2; /* large values: overflowing accumulators */
        for (int q = 0; q < m * k; q++) P.A[q] = R(&rng) % 11 == 0 ? 0.0 : rval(f, &rng, lo, hi, 0);
        for (int q = 0; q < k * n; q++) P.B[q] = R(&rng) % 13 == 0 ? 0.0 : rval(f, &rng, lo, hi, 0);
        for (int q = 0; q < m * n; q++) P.C[q] = rval(ER_FMT_F32, &rng, -20, 20, 0);
        if (cs % 7 == 6 && k > 0 && f != ER_FMT_F8E4M3FN) P.A[0] = cs % 2 ? INFINITY : NAN; /* a special in one row */
        if (cs % 6 == 5) P.C[0] = INFINITY;
        prob_create(&P);
        for (size_t t = 0; t < sizeof stds / sizeof stds[0]; t++) {
            er_tol_opts o;
            const er_bounds *b1, *b2;
            char msg[256];
            er_result *r2 = NULL;
            er_mma_args args;
            er_tensor d2;
            unsigned char *pd2 = xcalloc((size_t)m * n, 4);
            er_tol_opts_init(&o);
            REQUIRE(er_standard_parse(stds[t], &o.standard, msg, sizeof msg) == ER_OK, "%s", msg);
            unsetenv("EXACTREF_NO_SIMD");
            REQUIRE(er_result_bounds(P.r, &o, &b1, msg, sizeof msg) == ER_OK, "bounds: %s", msg);
            /* the same problem in a second result (no cache), bounds by the scalar path */
            d2 = er_tensor_2d(ER_FMT_F32, m, n, pd2);
            prob_args(&P, &args, &d2);
            REQUIRE(er_result_create(&args, &r2, msg, sizeof msg) == ER_OK, "%s", msg);
            setenv("EXACTREF_NO_SIMD", "1", 1);
            REQUIRE(er_result_bounds(r2, &o, &b2, msg, sizeof msg) == ER_OK, "bounds (scalar): %s", msg);
            unsetenv("EXACTREF_NO_SIMD");
            size_t e = (size_t)m * n;
            int same = !memcmp(b1->radius, b2->radius, e * sizeof(double)) &&
                       !memcmp(b1->tolerance, b2->tolerance, e * sizeof(double)) &&
                       !memcmp(b1->low, b2->low, e * sizeof(uint64_t)) && !memcmp(b1->high, b2->high, e * sizeof(uint64_t)) &&
                       !memcmp(b1->has_range, b2->has_range, e) && !memcmp(b1->may_pinf, b2->may_pinf, e) &&
                       !memcmp(b1->may_ninf, b2->may_ninf, e) && !memcmp(b1->may_nan, b2->may_nan, e);
            REQUIRE(same, "case %d (%s, m %d n %d k %d, C %s), %s: the vector path's bounds differ from the scalar path's",
                    cs, fname(f), m, n, k, fname(fc), stds[t]);
            compared += (long)e;
            er_result_free(r2);
            free(pd2);
        }
        prob_free(&P);
    }
    printf("test_bounds/simd_same_bits: %ld elements compared\n", compared);
}
END_TEST


/* Review findings (2026-11-30): an infinite term with finite terms that can overflow a partial allows
 * NaN (+inf meets the overflow's -inf), in either order, with and without promotion; and a model
 * whose truncation weight 2^(E - F) is below binary64's normal range still gives a finite, positive
 * radius that covers the rounded result. */
START_TEST(engine_special_terms)
{
    float A[4] = {INFINITY, 1.0f, 3e38f, 3e38f}, B[4] = {1.0f, 1.0f, -3e38f, -3e38f}, D[1];
    static const float A2[4] = {3e38f, 3e38f, INFINITY, 1.0f}, B2[4] = {-3e38f, -3e38f, 1.0f, 1.0f};
    static const char *specs[] = {"engine:k=2,promote=2", "engine:k=2", "engine:k=4", "hopper", "normal", "any_order"};
    er_tensor ta = er_tensor_2d(ER_FMT_F32, 1, 4, A), tb = er_tensor_2d(ER_FMT_F32, 4, 1, B),
              td = er_tensor_2d(ER_FMT_F32, 1, 1, D);
    for (int order = 0; order < 2; order++) {
        er_mma_args a;
        er_result *r;
        char msg[256];
        if (order) {
            memcpy(A, A2, sizeof A);
            memcpy(B, B2, sizeof B);
        }
        er_mma_args_init(&a);
        a.a = &ta;
        a.b = &tb;
        a.d = &td;
        REQUIRE(er_result_create(&a, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        REQUIRE(isinf(D[0]) && D[0] > 0, "the exact sum is +inf, rounded %g", D[0]);
        for (size_t q = 0; q < sizeof specs / sizeof specs[0]; q++) {
            er_tol_opts o;
            const er_bounds *b;
            er_tol_opts_init(&o);
            REQUIRE(er_standard_parse(specs[q], &o.standard, msg, sizeof msg) == ER_OK, "%s", msg);
            REQUIRE(er_result_bounds(r, &o, &b, msg, sizeof msg) == ER_OK, "%s", msg);
            REQUIRE(b->may_pinf[0], "%s (order %d): +inf, the exact sum, must be allowed", specs[q], order);
            /* the finite terms sum to -1.8e77 per instruction: an f32 partial overflows to -inf in
             * every model here, and meets +inf */
            REQUIRE(b->may_nan[0], "%s (order %d): NaN (+inf meeting an overflowed partial) must be allowed",
                    specs[q], order);
        }
        er_result_free(r);
    }
    {
        /* F = 1100: weights 2^(E - 1100) below 2^-1022 (the old 2^e by bits wrapped to a negative radius) */
        uint16_t ab[2] = {0x3F80, 0x4000}, bb[2] = {0x3F80, 0x3F80}; /* bf16 1, 2 and 1, 1 */
        float d;
        er_tensor xa = er_tensor_2d(ER_FMT_BF16, 1, 2, ab), xb = er_tensor_2d(ER_FMT_BF16, 2, 1, bb),
                  xd = er_tensor_2d(ER_FMT_F32, 1, 1, &d);
        er_mma_args a;
        er_result *r;
        er_tol_opts o;
        const er_bounds *b;
        unsigned char cov;
        int64_t out;
        char msg[256];
        er_mma_args_init(&a);
        a.a = &xa;
        a.b = &xb;
        a.d = &xd;
        REQUIRE(er_result_create(&a, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        er_tol_opts_init(&o);
        REQUIRE(er_standard_parse("engine:k=2,F=1100", &o.standard, msg, sizeof msg) == ER_OK, "%s", msg);
        REQUIRE(er_result_bounds(r, &o, &b, msg, sizeof msg) == ER_OK, "%s", msg);
        REQUIRE(b->radius[0] > 0 && isfinite(b->radius[0]) && b->has_range[0] && isfinite(b->tolerance[0]),
                "F = 1100: radius %a tolerance %g range %d", b->radius[0], b->tolerance[0], b->has_range[0]);
        REQUIRE(er_result_covers(r, &o, &xd, &cov, &out, msg, sizeof msg) == ER_OK && cov == 1 && out == 0,
                "F = 1100: the rounded result %g is not covered", d);
        er_result_free(r);
    }
}
END_TEST

/* ---- Soundness: normal and any_order. ---- */
static void sound_sum(const char *test, const char *stdname, int ncases)
{
    uint64_t rng = er_test_seed(test);
    ctx X;
    double t0 = (double)clock();
    int any = !strcmp(stdname, "any_order");
    uint64_t only;
    int one = case_override(&only);
    ctx_init(&X, test);
    for (int cs = 0; cs < (one ? 1 : ncases); cs++) {
        prob P;
        int kind;
        uint64_t cseed = one ? only : R(&rng), crng = cseed;
        random_config(&P, &crng, R(&crng) % 64 == 5 ? 2000 : 1200, &kind);
        gen_opts g = {.tc = 24};
        gen_data(&P, kind, &crng, &g);
        prob_create(&P);
        X.case_no = cs, X.case_seed = cseed, X.kind = kind_names[kind];
        X.elements += P.m * P.n;
        er_tol_opts o;
        std_opts(&o, stdname, -1, 0);
        double out[16], cmax = fmax_(ER_FMT_F32);
        int last = any ? IM_COUNT : IM_NORMAL_END;
        for (int id = 0; id < last; id++) {
            if (id == IM_OPENBLAS && !have_openblas()) continue;
            if (any && id >= IM_TREE0B && P.k > 600) continue; /* time: the first trees suffice there */
            run_impl(&P, id, ER_FMT_F32, 0, crng, out);
            check_outputs(&X, &P, &o, im_names[id], out, cmax);
        }
        prob_free(&P);
    }
    ctx_finish(&X, t0);
    REQUIRE(X.failures == 0, "%s: %ld outputs not covered under %s (see UNSOUND lines)", test, X.failures, stdname);
}

START_TEST(sound_normal) { sound_sum("test_bounds/sound_normal", "normal", scaled(4000)); }
END_TEST
START_TEST(sound_any_order) { sound_sum("test_bounds/sound_any_order", "any_order", scaled(2000)); }
END_TEST

/* ---- Soundness: compute bf16 / f16, flush to zero. ---- */
START_TEST(sound_compute)
{
    uint64_t rng = er_test_seed("test_bounds/sound_compute");
    ctx X;
    double t0 = (double)clock();
    uint64_t only;
    int one = case_override(&only);
    ctx_init(&X, "test_bounds/sound_compute");
    for (int cs = 0; cs < (one ? 1 : scaled(1500)); cs++) {
        prob P;
        int kind;
        uint64_t cseed = one ? only : R(&rng), crng = cseed;
        static const int cfs[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
        int cf = cfs[R(&crng) % 3], ftz = (int)((R(&crng) % 3) == 0);
        random_config(&P, &crng, cf == ER_FMT_F32 ? 600 : 200, &kind);
        if (cf != ER_FMT_F32 && P.fa == ER_FMT_F32) P.fa = ER_FMT_BF16;
        if (cf != ER_FMT_F32 && P.fb == ER_FMT_F32) P.fb = ER_FMT_F16;
        if (cf == ER_FMT_F32 && !ftz) ftz = 1;
        gen_opts g = {.tc = finfo(cf).significand_bits + 1};
        gen_data(&P, kind, &crng, &g);
        prob_create(&P);
        X.case_no = cs, X.case_seed = cseed, X.kind = kind_names[kind];
        X.elements += P.m * P.n;
        double out[16], cmax = fmax_(cf);
        for (int s = 0; s < 2; s++) {
            er_tol_opts o;
            std_opts(&o, s ? "any_order" : "normal", cf, ftz);
            int last = s ? IM_OPENBLAS : IM_NORMAL_END;
            for (int id = 0; id < last; id++) {
                if (s && id < IM_NORMAL_END) continue; /* normal's were checked under normal */
                run_impl(&P, id, cf, ftz, crng, out);
                check_outputs(&X, &P, &o, im_names[id], out, cmax);
            }
        }
        prob_free(&P);
    }
    ctx_finish(&X, t0);
    REQUIRE(X.failures == 0, "%ld outputs not covered (see UNSOUND lines)", X.failures);
}
END_TEST

/* ---- Soundness: matrix engines. ---- */
typedef struct eng_case {
    const char *std, *sim;
    int fmts[6];
    int scaled, blocks[2];
} eng_case;

#define NF (-1)
static const eng_case engines[] = {
    {"volta", "volta", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"turing", "turing", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"ampere", "ampere", {ER_FMT_F16, ER_FMT_BF16, NF}, 0, {0, 0}},
    {"ampere-tf32", "ampere-tf32", {ER_FMT_TF32, ER_FMT_F32, NF}, 0, {0, 0}}, /* f32: truncated to tf32 */
    {"ada-fp8", "ada-fp8", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, NF}, 0, {0, 0}},
    {"hopper", "hopper", {ER_FMT_F16, ER_FMT_BF16, NF}, 0, {0, 0}},
    {"hopper-tf32", "hopper-tf32", {ER_FMT_TF32, ER_FMT_F32, NF}, 0, {0, 0}},
    {"hopper-fp8", "hopper-fp8", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, NF}, 0, {0, 0}},
    {"deepgemm-fp8", "hopper-fp8-deepgemm", {ER_FMT_F8E4M3FN, NF}, 0, {0, 0}},
    {"hopper-fp8-deepgemm", "hopper-fp8-deepgemm", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, NF}, 0, {0, 0}},
    {"blackwell", "blackwell", {ER_FMT_F16, ER_FMT_BF16, NF}, 0, {0, 0}},
    {"blackwell-f8f6f4", "blackwell-f8f6f4", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN, NF}, 0, {0, 0}},
    {"blackwell-mx", "blackwell-mxf8f6f4", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN, NF}, 1, {32, 32}},
    {"blackwell-mxf8f6f4", "blackwell-mxf8f6f4", {ER_FMT_F8E4M3FN, ER_FMT_F4E2M1FN, NF}, 1, {32, 32}},
    {"blackwell-mxf4", "blackwell-mxf4", {ER_FMT_F4E2M1FN, NF}, 1, {16, 32}},
    {"cdna3", "cdna3", {ER_FMT_F16, ER_FMT_BF16, NF}, 0, {0, 0}},
    /* the models of issue 11: CDNA3 fp8 (also under "cdna3" on fp8 operands) and xf32, Blackwell tf32,
     * Ada f16, and the f16 accumulators */
    {"cdna3-fp8", "cdna3-fp8", {ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, NF}, 0, {0, 0}},
    {"cdna3", "cdna3-fp8", {ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ, NF}, 0, {0, 0}},
    {"cdna3-xf32", "cdna3-xf32", {ER_FMT_TF32, ER_FMT_F32, NF}, 0, {0, 0}},
    {"blackwell-tf32", "blackwell-tf32", {ER_FMT_TF32, ER_FMT_F32, NF}, 0, {0, 0}},
    {"ada-f16", "ada-f16", {ER_FMT_F16, ER_FMT_BF16, NF}, 0, {0, 0}},
    {"volta-f16", "volta-f16", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"turing-f16", "turing-f16", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"ampere-f16", "ampere-f16", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"ada-fp8-f16", "ada-fp8-f16", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, NF}, 0, {0, 0}},
    {"hopper-f16", "hopper-f16", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"hopper-fp8-f16", "hopper-fp8-f16", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, NF}, 0, {0, 0}},
    {"blackwell-f16", "blackwell-f16", {ER_FMT_F16, NF}, 0, {0, 0}},
    {"blackwell-f8f6f4-f16", "blackwell-f8f6f4-f16", {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F4E2M1FN, NF}, 0, {0, 0}},
};
#define N_ENGINES ((int)(sizeof engines / sizeof engines[0]))

static int eng_fmt(const eng_case *ec, uint64_t *rng)
{
    int n = 0;
    while (n < 6 && ec->fmts[n] != NF) n++;
    return ec->fmts[R(rng) % (uint64_t)n];
}

/* A random engine problem for ec; kind chosen from the engine kinds unless forced (>= 0). */
static void engine_config(prob *P, const eng_case *ec, uint64_t *rng, int kmax, int force_kind, int *kind, gen_opts *g)
{
    const sim_model *sm = sim_model_find(ec->sim);
    int fa = eng_fmt(ec, rng), fb = R(rng) & 1u ? eng_fmt(ec, rng) : fa;
    int fo = pick_out(rng), dir = (int)(R(rng) % ER_RND_COUNT);
    int r = (int)(R(rng) % 10), fc = r < 5 ? -1 : r < 8 ? ER_FMT_F32 : r < 9 ? ER_FMT_BF16 : ER_FMT_F64;
    static const int kinds[] = {K_RANDOM, K_RANDOM, K_POSITIVE, K_CANCEL, K_SPREAD, K_TRUNC, K_TRUNC,
                                K_ZEROC, K_TINYC, K_SUBNORMAL, K_OVERFLOW};
    *kind = force_kind >= 0 ? force_kind : kinds[R(rng) % (sizeof kinds / sizeof kinds[0])];
    if (*kind == K_TINYC) fc = R(rng) % 4 == 0 ? ER_FMT_F64 : ER_FMT_F32;
    int block = ec->scaled ? ec->blocks[R(rng) & 1u] : 1;
    prob_init(P, rint_(rng, 1, 3), rint_(rng, 1, 3), pick_k(rng, kmax), fa, fb, fc, fo, dir,
              ec->scaled ? ER_FMT_F8E8M0FNU : -1, block);
    memset(g, 0, sizeof *g);
    g->tc = 24, g->ek = sm->k, g->eF = sm->F, g->grouped = sm->groups;
}

START_TEST(sound_engines)
{
    uint64_t rng = er_test_seed("test_bounds/sound_engines");
    ctx X;
    double t0 = (double)clock();
    ctx_init(&X, "test_bounds/sound_engines");
    int per = scaled(400);
    uint64_t only;
    int one = case_override(&only);
    if (one) per = 1;
    for (int t = 0; t < N_ENGINES; t++) {
        const eng_case *ec = &engines[t];
        const sim_model *sm = sim_model_find(ec->sim);
        long f0 = X.failures, e0 = X.elements;
        double t1 = (double)clock();
        for (int cs = 0; cs < per; cs++) {
            prob P;
            int kind;
            gen_opts g;
            uint64_t cseed = one ? only : R(&rng), crng = cseed;
            engine_config(&P, ec, &crng, R(&crng) % 50 == 7 ? 2000 : 700, -1, &kind, &g);
            gen_data(&P, kind, &crng, &g);
            prob_create(&P);
            X.case_no = cs, X.case_seed = cseed, X.kind = kind_names[kind];
            X.elements += P.m * P.n;
            er_tol_opts o;
            std_opts(&o, ec->std, -1, 0);
            double out[16];
            run_engine(&P, sm, out);
            check_outputs(&X, &P, &o, ec->sim, out, 0); /* no skip: engines.md admits overflowing runs */
            prob_free(&P);
        }
        printf("  %-20s (sim %-20s) %5ld elements, %ld not covered, %.2f s\n", ec->std, ec->sim, X.elements - e0,
               X.failures - f0, ((double)clock() - t1) / CLOCKS_PER_SEC);
    }
    ctx_finish(&X, t0);
    REQUIRE(X.failures == 0, "%ld engine outputs not covered (see UNSOUND lines)", X.failures);
}
END_TEST

/* ---- Detection: one value beyond finite_range is flagged; so are excluded specials. ---- */
static double next_up(int f, double x) { return rnd(f, nextafter(x, INFINITY), ER_RND_POSITIVE_INF); }
static double next_dn(int f, double x) { return rnd(f, nextafter(x, -INFINITY), ER_RND_NEGATIVE_INF); }

START_TEST(detection)
{
    uint64_t rng = er_test_seed("test_bounds/detection");
    static const char *stds[] = {"normal", "any_order", "hopper", "volta", "cdna3", "hopper-fp8", "deepgemm-fp8"};
    long probes = 0, bad = 0;
    double t0 = (double)clock();
    for (int cs = 0; cs < scaled(1500); cs++) {
        prob P;
        int kind;
        uint64_t crng = R(&rng);
        const char *sn = stds[cs % 7];
        gen_opts g = {.tc = 24};
        if (cs % 7 < 2) {
            random_config(&P, &crng, 300, &kind);
        } else {
            const eng_case *ec = NULL;
            for (int t = 0; t < N_ENGINES; t++)
                if (!strcmp(engines[t].std, sn)) ec = &engines[t];
            engine_config(&P, ec, &crng, 300, -1, &kind, &g);
        }
        gen_data(&P, kind, &crng, &g);
        prob_create(&P);
        er_tol_opts o;
        std_opts(&o, sn, -1, 0);
        const er_bounds *bd;
        char msg[200];
        REQUIRE(er_result_bounds(P.r, &o, &bd, msg, sizeof msg) == ER_OK, "er_result_bounds(P.r, &o, &bd, msg, sizeof msg) == ER_OK");
        int me = P.m * P.n, sb = finfo(P.fo).storage_bytes, fo = P.fo;
        for (int e = 0; e < me; e++) {
            double lo = val(fo, bd->low[e]), hi = val(fo, bd->high[e]), rv = P.rv[e];
            REQUIRE(bd->radius[e] >= 0 && !isnan(bd->radius[e]), "radius %g", bd->radius[e]);
            if (bd->has_range[e]) {
                REQUIRE(lo <= hi, "low %a > high %a", lo, hi);
                if (isfinite(rv)) {
                    REQUIRE(lo <= rv && rv <= hi, "rounded %a outside [%a, %a]", rv, lo, hi);
                    REQUIRE(bd->tolerance[e] >= rv - lo && bd->tolerance[e] >= hi - rv,
                                  "tolerance %g below max(rounded - low, high - rounded)", bd->tolerance[e]);
                }
            }
            if (isfinite(rv)) REQUIRE(bd->tolerance[e] >= 0, "tolerance %g", bd->tolerance[e]);
            else REQUIRE(isnan(bd->tolerance[e]), "tolerance %g for a rounded %a", bd->tolerance[e], rv);
        }
        /* probes: 0 low, 1 high, 2 rounded, 3 next above high, 4 next below low, 5 NaN, 6 +inf, 7 -inf, 8 zero */
        for (int pr = 0; pr < 9; pr++) {
            unsigned char *buf = xcalloc((size_t)me, (size_t)sb), cov[16];
            int want[16];
            for (int e = 0; e < me; e++) {
                double lo = val(fo, bd->low[e]), hi = val(fo, bd->high[e]), v = P.rv[e];
                int w = -1;
                switch (pr) {
                case 0: if (bd->has_range[e]) v = lo, w = 1; break;
                case 1: if (bd->has_range[e]) v = hi, w = 1; break;
                case 2: if (isfinite(v) && bd->has_range[e]) w = 1; break;
                case 3: if (bd->has_range[e] && isfinite(next_up(fo, hi))) v = next_up(fo, hi), w = 0; break;
                case 4: if (bd->has_range[e] && isfinite(next_dn(fo, lo))) v = next_dn(fo, lo), w = 0; break;
                case 5: v = NAN, w = bd->may_nan[e]; break;
                case 6: if (finfo(fo).has_inf) v = INFINITY, w = bd->may_pinf[e]; break;
                case 7: if (finfo(fo).has_inf) v = -INFINITY, w = bd->may_ninf[e]; break;
                case 8: v = 0.0, w = bd->has_range[e] && lo <= 0 && 0 <= hi; break;
                }
                want[e] = w;
                put(buf, sb, (size_t)e, pat(fo, v));
            }
            er_tensor t = er_tensor_2d(fo, P.m, P.n, buf);
            int64_t outside;
            REQUIRE(er_result_covers(P.r, &o, &t, cov, &outside, msg, sizeof msg) == ER_OK, "er_result_covers(P.r, &o, &t, cov, &outside, msg, sizeof msg) == ER_OK");
            for (int e = 0; e < me; e++) {
                if (want[e] < 0) continue;
                probes++;
                if ((cov[e] != 0) != (want[e] != 0)) {
                    bad++;
                    if (bad < 10)
                        printf("detection: case %d %s, probe %d, element %d: covered %d, expected %d (range [%a, %a])\n",
                               cs, sn, pr, e, cov[e], want[e], val(fo, bd->low[e]), val(fo, bd->high[e]));
                }
            }
            free(buf);
        }
        prob_free(&P);
    }
    printf("test_bounds/detection: %ld probes, %ld wrong, %.1f s\n", probes, bad, ((double)clock() - t0) / CLOCKS_PER_SEC);
    REQUIRE(bad == 0, "%ld probes wrongly covered or not covered", bad);
}
END_TEST

/* ---- Special values. ---- */

/* Every implementation of normal, any_order and the engines named on P: covered, and for elements whose
 * rounded is not finite, the bounds say exactly that. */
static void check_all_impls(ctx *X, prob *P)
{
    static const char *eng[] = {"hopper", "volta", "cdna3", "ampere"};
    double out[16];
    er_tol_opts o;
    std_opts(&o, "normal", -1, 0);
    for (int id = 0; id < IM_NORMAL_END; id++) {
        run_impl(P, id, ER_FMT_F32, 0, 7, out);
        check_outputs(X, P, &o, im_names[id], out, 0);
    }
    std_opts(&o, "any_order", -1, 0);
    for (int id = 0; id < IM_COUNT; id++) {
        if (id == IM_OPENBLAS && !have_openblas()) continue;
        run_impl(P, id, ER_FMT_F32, 0, 7, out);
        check_outputs(X, P, &o, im_names[id], out, 0);
    }
    if (P->fa == ER_FMT_BF16 || P->fa == ER_FMT_F16)
        for (size_t t = 0; t < sizeof eng / sizeof eng[0]; t++) {
            std_opts(&o, eng[t], -1, 0);
            run_engine(P, sim_model_find(eng[t]), out);
            check_outputs(X, P, &o, eng[t], out, 0);
        }
}

static void expect_special(prob *P, int e, int want_nan, int want_pinf, int want_ninf)
{
    static const char *stds[] = {"normal", "any_order", "hopper"};
    for (int s = 0; s < 3; s++) {
        er_tol_opts o;
        const er_bounds *bd;
        char msg[200];
        std_opts(&o, stds[s], -1, 0);
        REQUIRE(er_result_bounds(P->r, &o, &bd, msg, sizeof msg) == ER_OK, "er_result_bounds(P->r, &o, &bd, msg, sizeof msg) == ER_OK");
        REQUIRE(bd->may_nan[e] == want_nan && bd->may_pinf[e] == want_pinf && bd->may_ninf[e] == want_ninf,
                      "%s element %d: may_be nan %d +inf %d -inf %d, expected %d %d %d (rounded %a)", stds[s], e,
                      bd->may_nan[e], bd->may_pinf[e], bd->may_ninf[e], want_nan, want_pinf, want_ninf, P->rv[e]);
        if (!isfinite(P->rv[e])) {
            REQUIRE(isnan(bd->tolerance[e]), "tolerance %g where rounded is %a", bd->tolerance[e], P->rv[e]);
            REQUIRE(!bd->has_range[e], "a finite range where rounded is %a", P->rv[e]);
        }
    }
}

START_TEST(specials)
{
    ctx X;
    ctx_init(&X, "test_bounds/specials");
    X.kind = "specials";
    for (int dir = 0; dir < ER_RND_COUNT; dir++)
        for (int fo = 0; fo < 2; fo++) {
            int fmt_o = fo ? ER_FMT_BF16 : ER_FMT_F32;
            prob P;
            /* 4 rows x 2 columns, k = 5, bf16: row 0 has a NaN, row 1 +inf, row 2 +inf and -inf, row 3 inf * 0
             * in column 1 only (b[3][1] = 0) */
            prob_init(&P, 4, 2, 5, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32, fmt_o, dir, -1, 1);
            for (int i = 0; i < 4; i++)
                for (int p = 0; p < 5; p++) P.A[i * 5 + p] = (p + 1) * 0.25 * (i & 1 ? -1 : 1);
            for (int p = 0; p < 5; p++) P.B[p * 2] = P.B[p * 2 + 1] = 1.0 + p;
            for (int e = 0; e < 8; e++) P.C[e] = 0.5;
            P.A[0 * 5 + 2] = NAN;
            P.A[1 * 5 + 1] = INFINITY;
            P.A[2 * 5 + 0] = INFINITY, P.A[2 * 5 + 4] = -INFINITY;
            P.A[3 * 5 + 3] = -INFINITY, P.B[3 * 2 + 1] = 0.0;
            prob_create(&P);
            REQUIRE(isnan(P.rv[0]) && isnan(P.rv[1]), "isnan(P.rv[0]) && isnan(P.rv[1])");
            REQUIRE(P.rv[2] == INFINITY && P.rv[3] == INFINITY, "P.rv[2] == INFINITY && P.rv[3] == INFINITY");
            REQUIRE(isnan(P.rv[4]) && isnan(P.rv[5]), "isnan(P.rv[4]) && isnan(P.rv[5])");
            REQUIRE(P.rv[6] == -INFINITY && isnan(P.rv[7]), "P.rv[6] == -INFINITY && isnan(P.rv[7])");
            check_all_impls(&X, &P);
            expect_special(&P, 0, 1, 0, 0);
            expect_special(&P, 2, 0, 1, 0);
            expect_special(&P, 4, 1, 0, 0);
            expect_special(&P, 6, 0, 0, 1);
            expect_special(&P, 7, 1, 0, 0);
            prob_free(&P);

            /* an infinite C, a NaN C */
            prob_init(&P, 1, 2, 3, ER_FMT_F16, ER_FMT_F16, ER_FMT_F32, fmt_o, dir, -1, 1);
            for (int p = 0; p < 3; p++) P.A[p] = 1.5, P.B[p * 2] = P.B[p * 2 + 1] = -2.0;
            P.C[0] = -INFINITY, P.C[1] = NAN;
            prob_create(&P);
            REQUIRE(P.rv[0] == -INFINITY && isnan(P.rv[1]), "P.rv[0] == -INFINITY && isnan(P.rv[1])");
            check_all_impls(&X, &P);
            expect_special(&P, 0, 0, 0, 1);
            expect_special(&P, 1, 1, 0, 0);
            prob_free(&P);

            /* overflow: f32 inputs whose sum overflows f32 (all positive: no order avoids it), and a sum
             * between bf16's and f32's largest values */
            prob_init(&P, 1, 3, 4, ER_FMT_F32, ER_FMT_F32, -1, fmt_o, dir, -1, 1);
            for (int p = 0; p < 4; p++) {
                P.A[p] = 0x1.fffffep63;
                P.B[p * 3] = 0x1.8p62;                  /* 4 * 1.5 * 2^125.99: overflows */
                P.B[p * 3 + 1] = 0x1.fffffep62;         /* just below 2^128: overflows f32 compute or not */
                P.B[p * 3 + 2] = p < 3 ? 0x1.fep61 : 0; /* 3 * 1.99 * 2^124.99 ~ 2^127.58: finite in f32, near bf16's max */
            }
            prob_create(&P);
            check_all_impls(&X, &P);
            {
                er_tol_opts o;
                const er_bounds *bd;
                char msg[200];
                std_opts(&o, "any_order", -1, 0);
                REQUIRE(er_result_bounds(P.r, &o, &bd, msg, sizeof msg) == ER_OK, "er_result_bounds(P.r, &o, &bd, msg, sizeof msg) == ER_OK");
                REQUIRE(bd->may_pinf[0], "an overflowing f32 sum must allow +inf");
            }
            prob_free(&P);
        }
    printf("test_bounds/specials: %ld checks, %ld NOT covered\n", X.checks, X.failures);
    for (int i = 0; i < X.nfail_names; i++) printf("    UNSOUND %s: %ld outputs\n", X.fail_names[i], X.fail_by[i]);
    REQUIRE(X.failures == 0, "%ld special outputs not covered", X.failures);
}
END_TEST

/* ---- The unsoundness this suite found (reported, fixed in 5548157): reproducers, now regressions. ---- */

/* One dot product (1 x 1) under a standard against one engine model; returns the outputs not covered
 * (the UNSOUND line printed gives the whole reproducer). */
static long probe_engine(const char *test, const char *stdname, const char *simname, int fa, int fb, int k,
                         const double *a, const double *b, int fc, double c, int fo, int dir)
{
    ctx X;
    prob P;
    er_tol_opts o;
    double out[1];
    ctx_init(&X, test);
    X.kind = "hand-made";
    prob_init(&P, 1, 1, k, fa, fb, fc, fo, dir, -1, 1);
    for (int p = 0; p < k; p++) P.A[p] = a[p], P.B[p] = b[p];
    P.C[0] = c;
    prob_create(&P);
    std_opts(&o, stdname, -1, 0);
    run_engine(&P, sim_model_find(simname), out);
    check_outputs(&X, &P, &o, simname, out, 0);
    prob_free(&P);
    return X.failures;
}

/*
 * Was UNSOUND: radius_engine let the alignment exponent E and the accumulator's exponent go
 * below -126, but the model (sim.h, docs/accumulation-models.md) never goes below -126: a zero term counts as
 * -126 and a subnormal f32 accumulator keeps exponent -126, so terms are truncated at 2^(-126 - F) and
 * a subnormal step result is normalised at 2^(-126 - out_p).  Outputs below 2^-126 escape the range.
 */
START_TEST(unsound_engine_subnormal)
{
    const char *t = "test_bounds/unsound_engine_subnormal";
    long bad = 0;
    /* (1) fp8 models (F = 13): C = 2^-140 (an f32 subnormal), one zero product: the model truncates C
     * at 2^-139 to 0; the bound's E is -140 */
    {
        double a[1] = {0.0}, b[1] = {0.0};
        static const char *ms[][2] = {{"hopper-fp8", "hopper-fp8"}, {"ada-fp8", "ada-fp8"}, {"deepgemm-fp8", "hopper-fp8-deepgemm"}};
        for (int i = 0; i < 3; i++)
            bad += probe_engine(t, ms[i][0], ms[i][1], ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, 1, a, b, ER_FMT_F32, 0x1p-140,
                                ER_FMT_F32, ER_RND_NEAREST_EVEN);
    }
    /* (2) bf16, 64 products 0x1.fep-70 * 0x1.02p-70 (each ~2^-139, f32 subnormal): the accumulator is
     * subnormal, each step truncates at 2^(-126 - F) and normalises at 2^-149 toward zero */
    {
        double a[64], b[64];
        static const char *ms[] = {"hopper", "blackwell", "ampere", "volta", "cdna3"};
        for (int p = 0; p < 64; p++) a[p] = 0x1.fep-70, b[p] = 0x1.02p-70;
        for (int i = 0; i < 5; i++)
            bad += probe_engine(t, ms[i], ms[i], ER_FMT_BF16, ER_FMT_BF16, 64, a, b, -1, 0.0, ER_FMT_F32,
                                ER_RND_NEAREST_EVEN);
    }
    /* (3) an f64 C below f32's subnormal range: the model rounds it into the f32 accumulator (to
     * nearest: -2^-151 becomes -0), an absolute error the bound (|C| 2^-24 for the conversion) misses;
     * rounded toward -inf the exact value gives -2^-149 */
    {
        double a[1] = {0.0}, b[1] = {0.0};
        bad += probe_engine(t, "hopper", "hopper", ER_FMT_BF16, ER_FMT_BF16, 1, a, b, ER_FMT_F64, -0x1p-151, ER_FMT_F32,
                            ER_RND_NEGATIVE_INF);
        bad += probe_engine(t, "blackwell-mxf8f6f4", "blackwell-mxf8f6f4", ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, 1, a, b,
                            ER_FMT_F64, -0x1p-151, ER_FMT_F32, ER_RND_NEGATIVE_INF);
    }
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) engine bounds below 2^-126: %ld outputs not covered (see the UNSOUND lines)", bad);
}
END_TEST

/*
 * Was UNSOUND: an engine accumulator that overflows between instructions stays infinite (the model: "a
 * value at or beyond 2^(emax+1) after that rounding is an INFINITY"), although the exact sum is finite.
 * engines.md admits every such run (unlike any_order, it does not exclude overflowing implementations),
 * but may_be("+inf") was 0.  (Now: no finite bound where the accumulator's bound reaches f32's range.)
 */
START_TEST(unsound_engine_overflow)
{
    const char *t = "test_bounds/unsound_engine_overflow";
    long bad = 0;
    double a[32], b[32];
    /* step 1: 2^127 + 2^127 = 2^128 overflows; step 2: -1.5 2^127; exact 2^126 */
    for (int p = 0; p < 32; p++) a[p] = 0x1p63, b[p] = 0.0;
    b[0] = b[1] = 0x1p64, b[16] = -0x1.8p64;
    bad += probe_engine(t, "hopper", "hopper", ER_FMT_BF16, ER_FMT_BF16, 32, a, b, -1, 0.0, ER_FMT_F32, ER_RND_NEAREST_EVEN);
    bad += probe_engine(t, "blackwell", "blackwell", ER_FMT_BF16, ER_FMT_BF16, 32, a, b, -1, 0.0, ER_FMT_F32, ER_RND_NEAREST_EVEN);
    /* k = 8 models: the overflow in the first step of 8 */
    for (int p = 0; p < 32; p++) b[p] = 0.0;
    b[0] = b[1] = 0x1p64, b[8] = -0x1.8p64;
    bad += probe_engine(t, "ampere", "ampere", ER_FMT_BF16, ER_FMT_BF16, 32, a, b, -1, 0.0, ER_FMT_F32, ER_RND_NEAREST_EVEN);
    bad += probe_engine(t, "cdna3", "cdna3", ER_FMT_BF16, ER_FMT_BF16, 32, a, b, -1, 0.0, ER_FMT_F32, ER_RND_NEAREST_EVEN);
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) engine intermediate overflow: %ld outputs not covered (see the UNSOUND lines)", bad);
}
END_TEST

/*
 * Was UNSOUND: the tf32 models with f32 operands.  The hardware (and the model: sim.h tf32_trunc) reads
 * an f32 operand as tf32, truncating 13 bits, but the bound used the f32 values exactly: an error of up
 * to 2^-10 relative per factor was missing.  (sound_engines now draws f32 operands for them too.)
 */
START_TEST(unsound_tf32_f32_inputs)
{
    const char *t = "test_bounds/unsound_tf32_f32_inputs";
    long bad = 0;
    double a[8], b[8];
    for (int p = 0; p < 8; p++) a[p] = 1 + 0x1p-20 * (p + 1), b[p] = 1 + 0x1p-12 * (p + 3);
    bad += probe_engine(t, "ampere-tf32", "ampere-tf32", ER_FMT_F32, ER_FMT_F32, 8, a, b, -1, 0.0, ER_FMT_F32, ER_RND_NEAREST_EVEN);
    bad += probe_engine(t, "hopper-tf32", "hopper-tf32", ER_FMT_F32, ER_FMT_F32, 8, a, b, -1, 0.0, ER_FMT_F32, ER_RND_NEAREST_EVEN);
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) tf32 models on f32 operands: %ld outputs not covered (see the UNSOUND lines)", bad);
}
END_TEST

/*
 * Was UNSOUND: the tf32 models with subnormal f32 operands.  Truncating a subnormal f32 to tf32 loses
 * up to 2^-136 whatever its size (2^-140 becomes 0), not 2^-10 of itself, so a product with a huge
 * partner moves far more than the relative term allowed: A = [2^-140, 1, 0...], B = [2^100, 2^-40,
 * 0...] gives 2^-40 on the hardware model, 2^-39 exactly, and the old range excluded it.  Also the
 * mirrored case (the subnormal in B) and both together.
 */
START_TEST(unsound_tf32_subnormal)
{
    const char *t = "test_bounds/unsound_tf32_subnormal";
    static const char *models[] = {"ampere-tf32", "hopper-tf32", "blackwell-tf32", "cdna3-xf32"};
    long bad = 0;
    double a[8] = {0}, b[8] = {0};
    for (int m = 0; m < 4; m++)
        for (int v = 0; v < 3; v++) {
            for (int p = 0; p < 8; p++) a[p] = b[p] = 0;
            a[0] = v == 1 ? 0x1p100 : 0x1p-140, b[0] = v == 1 ? -0x1.8p-139 : 0x1p100;
            if (v == 2) a[2] = 0x1.fffp-127, b[2] = -0x1p90;
            a[1] = 1, b[1] = 0x1p-40;
            bad += probe_engine(t, models[m], models[m], ER_FMT_F32, ER_FMT_F32, 8, a, b, -1, 0.0, ER_FMT_F32,
                                ER_RND_NEAREST_EVEN);
        }
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) tf32 models on subnormal f32 operands: %ld outputs not covered", bad);
}
END_TEST

/*
 * Was UNSOUND: an output format without infinities (f8E4M3FN: overflow rounds to NaN).  Where
 * the exact sum is finite but rounds to NaN in the output format, finish_element takes rounded's NaN for
 * a NaN input ("every implementation outputs what rounded is"): no finite range, only NaN allowed.  But
 * an implementation's compute value can lie below the overflow threshold and round to the largest
 * finite value: exact 464 + 2^-20 rounds to NaN, every f32 implementation (er_result_normal too) sums to
 * 464 and outputs 448 (the tie goes to the even 448).
 */
START_TEST(unsound_nan_output_overflow)
{
    const char *t = "test_bounds/unsound_nan_output_overflow";
    ctx X;
    prob P;
    double out[1];
    ctx_init(&X, t);
    X.kind = "hand-made";
    prob_init(&P, 1, 1, 2, ER_FMT_BF16, ER_FMT_BF16, -1, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, -1, 1);
    P.A[0] = 464.0, P.A[1] = 0x1p-20, P.B[0] = P.B[1] = 1.0;
    prob_create(&P);
    REQUIRE(isnan(P.rv[0]), "rounded %a", P.rv[0]);
    for (int s = 0; s < 3; s++) {
        static const char *stds[] = {"normal", "any_order", "hopper"};
        er_tol_opts o;
        std_opts(&o, stds[s], -1, 0);
        if (s == 2) {
            run_engine(&P, sim_model_find("hopper"), out);
            check_outputs(&X, &P, &o, "hopper", out, 0);
            continue;
        }
        run_impl(&P, IM_INDEX, ER_FMT_F32, 0, 0, out);
        check_outputs(&X, &P, &o, im_names[IM_INDEX], out, 0);
        run_impl(&P, IM_NORMAL_API, -1, 0, 0, out);
        check_outputs(&X, &P, &o, im_names[IM_NORMAL_API], out, 0);
    }
    prob_free(&P);
    printf("%s: %ld outputs not covered\n", t, X.failures);
    REQUIRE(X.failures == 0, "UNSOUND (regression) NaN by overflow of the output format: %ld outputs not covered (see the UNSOUND lines)",
            X.failures);
}
END_TEST

/* ---- Issue 11: the three unsound cases of the tensor-core bounds (fixed with the models' new rules). ---- */

/* P (filled, created) under standard std against model m: the outputs not covered; out[] receives the
 * model's outputs. */
static long probe_model(const char *test, const char *kind, prob *P, const char *std, const sim_model *m, double *out)
{
    ctx X;
    er_tol_opts o;
    ctx_init(&X, test);
    X.kind = kind;
    std_opts(&o, std, -1, 0);
    run_engine(P, m, out);
    check_outputs(&X, P, &o, m->name, out, 0);
    return X.failures;
}

/*
 * Was UNSOUND (issue 11, case 1): a zero factor still sets the step's alignment exponent.  In the model a
 * zero factor has exponent -126 (bf16), so 0 x 3e30 (2^101) is a term of exponent -25 that becomes the
 * step's E and truncates the products 1.5 2^-40 x 1.25 2^-40: one wgmma m64n8k16 step gives 0, exact
 * 0x1.c2p-76; the bound counted a zero product as exponent -126 (range [0x1.c1fffep-76, 0x1.c20002p-76]).
 * With B[0] = 1.0 the output is exact.  The same on ampere, blackwell, cdna3 (bf16) and the tf32 models
 * (f32 operands); f16 with a zero of exponent -14 (the reading "its format's minimum", which the bound
 * covers too): 0 x 2^15 is a term of exponent 1.
 */
START_TEST(unsound_zero_factor_exponent)
{
    const char *t = "test_bounds/unsound_zero_factor_exponent";
    static const struct { const char *std, *sim; int f; } cs[] = {
        {"hopper", "hopper", ER_FMT_BF16}, {"ampere", "ampere", ER_FMT_BF16}, {"blackwell", "blackwell", ER_FMT_BF16},
        {"cdna3", "cdna3", ER_FMT_BF16}, {"ampere-tf32", "ampere-tf32", ER_FMT_F32}, {"hopper-tf32", "hopper-tf32", ER_FMT_F32},
        {"hopper", "hopper", ER_FMT_F16}, {"volta", "volta", ER_FMT_F16}, {"hopper-f16", "hopper-f16", ER_FMT_F16},
        {"blackwell-tf32", "blackwell-tf32", ER_FMT_TF32}, {"ada-f16", "ada-f16", ER_FMT_BF16}};
    long bad = 0;
    for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++) {
        int f = cs[q].f, f16 = f == ER_FMT_F16;
        sim_model m = *sim_model_find(cs[q].sim);
        int k = m.k > 16 ? 16 : m.k;
        for (int big = 0; big < 2; big++) {
            prob P;
            double out[1];
            prob_init(&P, 1, 1, k, f, f, -1, ER_FMT_F32, ER_RND_NEAREST_EVEN, -1, 1);
            for (int p = 1; p < k; p++) {
                P.A[p] = f16 ? 1.5 * 0x1p-14 : 1.5 * 0x1p-40;
                P.B[p] = f16 ? 1.25 * 0x1p-14 : 1.25 * 0x1p-40;
            }
            P.A[0] = 0.0;
            P.B[0] = big ? (f16 ? 0x1p15 : rnd(ER_FMT_BF16, 3e30, ER_RND_NEAREST_EVEN)) : 1.0;
            m.zero_fmt_emin = f16; /* f16: the format-minimum reading (MMA-Sim's -126 changes nothing there) */
            prob_create(&P);
            bad += probe_model(t, big ? "zero x huge" : "zero x 1", &P, cs[q].std, &m, out);
            double exact = (double)(k - 1) * P.A[1] * P.B[1];
            double want = m.acc_fmt == ER_FMT_F16 ? rnd(ER_FMT_F16, exact, ER_RND_NEAREST_EVEN) : exact;
            if (!big) REQUIRE(out[0] == rnd(ER_FMT_F32, want, ER_RND_NEAREST_EVEN), "%s: B[0] = 1 is exact", cs[q].std);
            if (big) REQUIRE(out[0] == 0.0, "%s: the zero product's exponent truncates every term (got %a)", cs[q].std, out[0]);
            if (big && !f16 && k == 16) REQUIRE(P.rv[0] == 0x1.c2p-76, "the issue's exact value: %a", P.rv[0]);
            prob_free(&P);
        }
    }
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) zero factors: %ld outputs not covered (see the UNSOUND lines)", bad);
}
END_TEST

/*
 * Was UNSOUND (issue 11, case 2): block-scaled, an all-zero block with a large scale realigns the sum.
 * mxf8 (e4m3, ue8m0): a zero product's exponent is -126 + e_b + e_sa + e_sb.  Two m128n8k32 steps, C =
 * 0.3: block 0 A = 2^-6, B = 1.125; block 1 A all zero with scale 2^127, B = 448: output 0x1.b998p-1,
 * exact 0x1.b9999ap-1 (the bound allowed [0x1.b9997ep-1, 0x1.b999b6p-1]).  mxf4/nvf4: a group of 16
 * has exponent e_sa + e_sb whatever its elements: one m128n8k64.block32 step, block 0 all zero with
 * scale 2^40, block 1 = 1.5 with scale 2^-10, B = 1: output 0, exact 0.046875.
 */
START_TEST(unsound_zero_block_scale)
{
    const char *t = "test_bounds/unsound_zero_block_scale";
    long bad = 0;
    {
        prob P;
        double out[1];
        prob_init(&P, 1, 1, 64, ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN,
                  ER_FMT_F8E8M0FNU, 32);
        for (int p = 0; p < 64; p++) {
            P.A[p] = p < 32 ? 0x1p-6 : 0.0;
            P.B[p] = p < 32 ? 1.125 : 448.0;
        }
        P.SA[0] = 1.0, P.SA[1] = 0x1p127, P.SB[0] = P.SB[1] = 1.0;
        P.C[0] = rnd(ER_FMT_F32, 0.3, ER_RND_NEAREST_EVEN);
        prob_create(&P);
        bad += probe_model(t, "mxf8 zero block", &P, "blackwell-mxf8f6f4", sim_model_find("blackwell-mxf8f6f4"), out);
        REQUIRE(out[0] == 0x1.b998p-1 && P.rv[0] == 0x1.b9999ap-1, "mxf8: output %a, rounded %a", out[0], P.rv[0]);
        bad += probe_model(t, "mxf8 zero block", &P, "blackwell-mx", sim_model_find("blackwell-mxf8f6f4"), out);
        prob_free(&P);
    }
    {
        prob P;
        double out[1];
        prob_init(&P, 1, 1, 64, ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN, -1, ER_FMT_F32, ER_RND_NEAREST_EVEN, ER_FMT_F8E8M0FNU, 32);
        for (int p = 0; p < 64; p++) {
            P.A[p] = p < 32 ? 0.0 : 1.5;
            P.B[p] = 1.0;
        }
        P.SA[0] = 0x1p40, P.SA[1] = 0x1p-10, P.SB[0] = P.SB[1] = 1.0;
        prob_create(&P);
        bad += probe_model(t, "mxf4 zero group", &P, "blackwell-mxf4", sim_model_find("blackwell-mxf4"), out);
        REQUIRE(out[0] == 0.0 && P.rv[0] == 0.046875, "mxf4: output %a, rounded %a", out[0], P.rv[0]);
        bad += probe_model(t, "mxf4 zero group", &P, "blackwell-nvf4", sim_model_find("blackwell-mxf4"), out);
        prob_free(&P);
    }
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) zero blocks: %ld outputs not covered (see the UNSOUND lines)", bad);
}
END_TEST

/*
 * Was UNSOUND (issue 11, case 3): CDNA3 on fp8 sums 16 products per step in two stages (even and odd
 * products), the cdna3 model stepped by 8.  f8E4M3FNUZ, K = 32: zeros, then 1.75 2^-6 x 1.125 2^-5 at
 * k = 16..29 and 240 x 240, 240 x -240 at k = 30, 31: both stages take exponent 14 and every small
 * product is lost; output 0.  Both "cdna3" (on fp8 operands) and "cdna3-fp8" must cover it.
 */
START_TEST(unsound_cdna3_fp8)
{
    const char *t = "test_bounds/unsound_cdna3_fp8";
    long bad = 0;
    for (int f = 0; f < 2; f++) {
        int fmt = f ? ER_FMT_F8E5M2FNUZ : ER_FMT_F8E4M3FNUZ;
        prob P;
        double out[1];
        prob_init(&P, 1, 1, 32, fmt, fmt, -1, ER_FMT_F32, ER_RND_NEAREST_EVEN, -1, 1);
        for (int p = 16; p < 30; p++) {
            P.A[p] = rnd(fmt, 1.75 * 0x1p-6, ER_RND_NEAREST_EVEN);
            P.B[p] = rnd(fmt, 1.125 * 0x1p-5, ER_RND_NEAREST_EVEN);
        }
        double big = f ? 224.0 : 240.0; /* e5m2: 240 is no value */
        P.A[30] = P.A[31] = big, P.B[30] = big, P.B[31] = -big;
        prob_create(&P);
        bad += probe_model(t, "cdna3 fp8 stages", &P, "cdna3", sim_model_find("cdna3-fp8"), out);
        REQUIRE(out[0] == 0.0 && P.rv[0] > 0.01, "cdna3-fp8: output %a, rounded %a", out[0], P.rv[0]);
        bad += probe_model(t, "cdna3 fp8 stages", &P, "cdna3-fp8", sim_model_find("cdna3-fp8"), out);
        prob_free(&P);
    }
    printf("%s: %ld outputs not covered\n", t, bad);
    REQUIRE(bad == 0, "UNSOUND (regression) cdna3 fp8: %ld outputs not covered (see the UNSOUND lines)", bad);
}
END_TEST

/*
 * Randomized, every engine case: zero padding of K (columns of A zero over huge values of B), zero blocks
 * of A with huge scales (block-scaled cases), and for the fp8 models cancelling pairs of large products
 * among small ones (CDNA3's stages).  Each non-group model runs with both readings of a zero factor's
 * exponent (-126, its format's minimum).  Every output covered.
 */
START_TEST(sound_zero_padding)
{
    uint64_t rng = er_test_seed("test_bounds/sound_zero_padding");
    ctx X;
    double t0 = (double)clock();
    ctx_init(&X, "test_bounds/sound_zero_padding");
    int per = scaled(60);
    for (int ti = 0; ti < N_ENGINES; ti++) {
        const eng_case *ec = &engines[ti];
        sim_model sm = *sim_model_find(ec->sim);
        long f0 = X.failures;
        for (int cs = 0; cs < per; cs++) {
            prob P;
            int kind;
            gen_opts g;
            uint64_t crng = R(&rng);
            engine_config(&P, ec, &crng, 300, K_RANDOM, &kind, &g);
            gen_data(&P, kind, &crng, &g);
            int mode = (int)(R(&crng) % 3);
            double hb = fmax_(P.fb), ha = fmax_(P.fa);
            if (P.fb == ER_FMT_F32 || P.fb == ER_FMT_BF16 || P.fb == ER_FMT_TF32) hb = ldexp(1.0, rint_(&crng, 60, 120));
            if (P.fa == ER_FMT_F32 || P.fa == ER_FMT_BF16 || P.fa == ER_FMT_TF32) ha = ldexp(1.0, rint_(&crng, 60, 120));
            if (sm.acc_fmt == ER_FMT_F16) hb = ldexp(1.0, rint_(&crng, 8, 15)), ha = 1.0;
            hb = rnd(P.fb, hb < fmax_(P.fb) ? hb : fmax_(P.fb), ER_RND_ZERO);
            ha = rnd(P.fa, ha < fmax_(P.fa) ? ha : fmax_(P.fa), ER_RND_ZERO);
            if (mode == 0 || (mode == 1 && !ec->scaled)) {
                /* zero padding: the last columns of A are zero over huge B (or a random set) */
                int p0 = R(&crng) & 1u ? rint_(&crng, 0, P.k - 1) : 0;
                for (int p = p0; p < P.k; p++) {
                    if (p0 == 0 && (R(&crng) & 3u)) continue;
                    for (int i = 0; i < P.m; i++) P.A[(size_t)i * P.k + p] = 0.0;
                    for (int j = 0; j < P.n; j++) P.B[(size_t)p * P.n + j] = R(&crng) & 1u ? -hb : hb;
                }
            } else if (mode == 1) {
                /* a zero block of A with a huge scale */
                int q = rint_(&crng, 0, P.nb - 1);
                for (int p = q * P.block; p < P.k && p < (q + 1) * P.block; p++) {
                    for (int i = 0; i < P.m; i++) P.A[(size_t)i * P.k + p] = 0.0;
                    for (int j = 0; j < P.n; j++) P.B[(size_t)p * P.n + j] = R(&crng) & 1u ? -hb : hb;
                }
                for (int i = 0; i < P.m; i++) P.SA[(size_t)i * P.nb + q] = ldexp(1.0, rint_(&crng, 60, 127));
            } else {
                /* cancelling pairs of large products (even and odd places) among the data */
                int n = P.k >= 2 ? rint_(&crng, 1, 4) : 0;
                for (int r = 0; r < n; r++) {
                    int p = rint_(&crng, 0, P.k - 2);
                    for (int i = 0; i < P.m; i++) P.A[(size_t)i * P.k + p] = P.A[(size_t)i * P.k + p + 1] = ha;
                    for (int j = 0; j < P.n; j++) {
                        double v = R(&crng) & 1u ? -hb : hb;
                        P.B[(size_t)p * P.n + j] = v;
                        P.B[(size_t)(p + 1) * P.n + j] = -v;
                    }
                }
            }
            prob_create(&P);
            X.case_no = cs, X.case_seed = crng, X.kind = mode == 0 ? "zero padding" : mode == 1 ? "zero block" : "pairs";
            X.elements += P.m * P.n;
            er_tol_opts o;
            std_opts(&o, ec->std, -1, 0);
            double out[16];
            for (int zr = 0; zr < (sm.groups ? 1 : 2); zr++) {
                sm.zero_fmt_emin = zr;
                run_engine(&P, &sm, out);
                check_outputs(&X, &P, &o, sm.name, out, 0);
            }
            prob_free(&P);
        }
        if (X.failures > f0) printf("  %-20s %ld not covered\n", ec->std, X.failures - f0);
    }
    ctx_finish(&X, t0);
    REQUIRE(X.failures == 0, "%ld engine outputs not covered on zero padding / zero blocks / pairs", X.failures);
}
END_TEST


/* ---- normal within any_order. ---- */
/*
 * normal admits some of the trees any_order admits, so its bounds must never be wider: per element,
 * tolerance(normal) <= tolerance(any_order) and normal's finite range inside any_order's.  The seed's
 * 1x2 f32 example (A = [1, 2], B = [3; 4]: 11) had normal at 3 f32 ulps (its 4-lane combination counted
 * three additions of lanes that are empty at k = 2) and any_order at 1; both are 1 ulp (2^-20) now.
 */
static void tol_of(prob *P, const char *std, double *tol, double *lo, double *hi, int *rng_ok)
{
    const er_bounds *bd;
    er_tol_opts o;
    char msg[200] = "";
    std_opts(&o, std, -1, 0);
    REQUIRE(er_result_bounds(P->r, &o, &bd, msg, sizeof msg) == ER_OK, "er_result_bounds(%s): %s", std, msg);
    for (int e = 0; e < P->m * P->n; e++) {
        tol[e] = bd->tolerance[e];
        rng_ok[e] = bd->has_range[e];
        lo[e] = rng_ok[e] ? val(P->fo, bd->low[e]) : 0;
        hi[e] = rng_ok[e] ? val(P->fo, bd->high[e]) : 0;
    }
}

START_TEST(normal_within_any_order)
{
    uint64_t rng = er_test_seed("test_bounds/normal_within_any_order");
    long checked = 0;
    {
        prob P;
        double tn[1], ta[1], ln[1], hn[1], la[1], ha[1];
        int rn[1], ra[1];
        prob_init(&P, 1, 1, 2, ER_FMT_F32, ER_FMT_F32, -1, ER_FMT_F32, ER_RND_NEAREST_EVEN, -1, 1);
        P.A[0] = 1, P.A[1] = 2, P.B[0] = 3, P.B[1] = 4;
        prob_create(&P);
        tol_of(&P, "normal", tn, ln, hn, rn);
        tol_of(&P, "any_order", ta, la, ha, ra);
        REQUIRE(P.rv[0] == 11.0, "the seed's example rounds to 11, not %g", P.rv[0]);
        /* one f32 ulp (2^-20), the tolerance moved up one binary64 step */
        REQUIRE(tn[0] == ta[0] && tn[0] >= 0x1p-20 && tn[0] < 0x1.8p-20, "the seed's example: normal %a, any_order %a (want 1 ulp, 2^-20, both)",
                tn[0], ta[0]);
        prob_free(&P);
    }
    for (int cs = 0; cs < scaled(600); cs++) {
        prob P;
        int kind;
        uint64_t crng = R(&rng);
        random_config(&P, &crng, cs % 3 == 0 ? 9 : 400, &kind);
        if (cs % 3 == 0) {
            /* k = 1..9: the lanes are partly empty */
            int m = P.m, n = P.n, fa = P.fa, fb = P.fb, fc = P.fc, fo = P.fo, dir = P.dir;
            prob_free(&P);
            prob_init(&P, m, n, rint_(&crng, 1, 9), fa, fb, fc, fo, dir, -1, 1);
        }
        gen_opts g = {.tc = 24};
        gen_data(&P, kind, &crng, &g);
        prob_create(&P);
        double tn[16], ta[16], ln[16], hn[16], la[16], ha[16];
        int rn[16], ra[16];
        tol_of(&P, "normal", tn, ln, hn, rn);
        tol_of(&P, "any_order", ta, la, ha, ra);
        for (int e = 0; e < P.m * P.n; e++) {
            if (isnan(ta[e])) continue; /* rounded not finite */
            REQUIRE(!(tn[e] > ta[e]), "case %d (k %d, %s x %s -> %s), element %d: normal's tolerance %a > any_order's %a", cs,
                    P.k, fname(P.fa), fname(P.fb), fname(P.fo), e, tn[e], ta[e]);
            if (ra[e]) {
                REQUIRE(rn[e], "case %d element %d: any_order has a finite range, normal none", cs, e);
                REQUIRE(ln[e] >= la[e] && hn[e] <= ha[e], "case %d element %d: normal's range [%a, %a] beyond any_order's [%a, %a]",
                        cs, e, ln[e], hn[e], la[e], ha[e]);
            }
            checked++;
        }
        prob_free(&P);
    }
    printf("test_bounds/normal_within_any_order: %ld elements\n", checked);
    REQUIRE(checked > 1000, "too few elements checked: %ld", checked);
}
END_TEST

/* ---- The quantized magnitudes (the shared core's integer helpers). ---- */
/*
 * er_b_q_value (ceil(|v| 2^-s) from the bits), er_b_scale_up (RU(N 2^e), subnormal and overflowing
 * results included) and er_b_q_bits (Qa + Qb + ceil(log2 k) <= 53) against MPFR: exact scaling by
 * powers of two, ceil, and rounding upward to binary64 (with binary64's exponent range).
 */
START_TEST(quantized_core)
{
    uint64_t rng = er_test_seed("test_bounds/quantized_core");
    mpfr_t t;
    long n = 0;
    mpfr_init2(t, 128);
    for (int cs = 0; cs < scaled(200000); cs++) {
        /* q_value: a finite v (every exponent, subnormals too), a grid with |v| < 2^(s + Q) */
        uint64_t vb = R(&rng) & UINT64_C(0x7FFFFFFFFFFFFFFF);
        double v;
        if ((vb >> 52) == 0x7FF) vb &= UINT64_C(0x7FEFFFFFFFFFFFFF);
        if (cs % 7 == 0) vb &= UINT64_C(0x000FFFFFFFFFFFFF); /* subnormal */
        if (cs % 11 == 0) vb = 0;
        memcpy(&v, &vb, 8);
        if (R(&rng) % 2) v = -v;
        int Q = rint_(&rng, 1, 53), s = (v != 0 ? er_b_frexp_e(v) : rint_(&rng, -1100, 1000)) - Q + rint_(&rng, 0, 3);
        double q = er_b_q_value(v, s), want;
        mpfr_set_d(t, fabs(v), MPFR_RNDN);
        mpfr_mul_2si(t, t, -s, MPFR_RNDN); /* exact */
        mpfr_ceil(t, t);
        want = mpfr_get_d(t, MPFR_RNDN); /* an integer <= 2^53: exact */
        REQUIRE(q == want && q <= 0x1p53, "er_b_q_value(%a, %d) = %a, want %a", v, s, q, want);
        /* scale_up: N <= 2^53, e from deep subnormal to overflow */
        double N = cs % 5 == 0 ? 0x1p53 : (double)(R(&rng) >> rint_(&rng, 11, 63));
        int e = rint_(&rng, -1200, 1100);
        double got = er_b_scale_up(N, e);
        mpfr_set_d(t, N, MPFR_RNDN);
        mpfr_mul_2si(t, t, e, MPFR_RNDN);
        if (mpfr_cmp_d(t, 0x1p-1022) < 0) {
            /* below binary64's normal range: a multiple of 2^-1074, rounded up */
            mpfr_mul_2si(t, t, 1074, MPFR_RNDN);
            mpfr_ceil(t, t);
            mpfr_mul_2si(t, t, -1074, MPFR_RNDN);
        }
        want = mpfr_get_d(t, MPFR_RNDU); /* +inf beyond binary64 */
        REQUIRE(got == want, "er_b_scale_up(%a, %d) = %a, want %a", N, e, got, want);
        n++;
    }
    for (int64_t k = 1; k < ((int64_t)1 << 40); k = k * 3 + 1) {
        int qa, qb, lg = 0;
        er_b_q_bits(k, &qa, &qb);
        while (((int64_t)1 << lg) < k) lg++;
        REQUIRE(qa >= 1 && qb >= 1 && qa + qb + lg <= 53, "er_b_q_bits(%lld) = %d, %d", (long long)k, qa, qb);
    }
    mpfr_clear(t);
    printf("test_bounds/quantized_core: %ld values\n", n);
}
END_TEST

/* ---- The ends from the exact sum. ---- */
/*
 * normal's, any_order's and the engines' ends are defined from the exact sum x (docs/proofs/foundations.md,
 * docs/proofs/engines.md): low is the output rounding of RD(x - radius), high of RU(x + radius), RD
 * and RU binary64's directed roundings of the exact values.  Here x, x - radius and x + radius are computed with MPFR (exact
 * products and sums at 2400 bits: the data's exponents span far less), rounded once to binary64, and
 * converted to the output; every element with a finite range inside compute's range must have exactly
 * those patterns.  f64 outputs take the exact accumulator on (nearly) every element, f32 and bf16
 * outputs the enclosure's shortcut: both are checked.
 */
START_TEST(ends_from_exact_sum)
{
    uint64_t rng = er_test_seed("test_bounds/ends_from_exact_sum");
    static const int fins[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32, ER_FMT_F8E4M3FN};
    static const int fouts[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F64};
    static const int kinds[] = {K_RANDOM, K_POSITIVE, K_DRIFT, K_CANCEL, K_ZEROC};
    long checked = 0, exact_out = 0, engine = 0;
    mpfr_t x, t, pr;
    mpfr_inits2(2400, x, t, pr, (mpfr_ptr)0);
    for (int cs = 0; cs < scaled(500); cs++) {
        prob P;
        uint64_t crng = R(&rng);
        int fa = fins[R(&crng) % 4], fb = R(&crng) % 3 ? fa : fins[R(&crng) % 4], fo = fouts[R(&crng) % 3];
        int fc = R(&crng) % 3 == 0 ? (R(&crng) % 2 ? ER_FMT_F32 : ER_FMT_BF16) : -1;
        int dir = (int)(R(&crng) % ER_RND_COUNT), kind = kinds[R(&crng) % 5];
        /* half the cases an engine with an f32 accumulator, on its bf16 or f16 operands */
        static const char *engs[] = {"hopper", "blackwell", "ampere", "cdna3", "volta", "ada-f16"};
        int eng = R(&crng) % 2;
        const char *sn = eng ? engs[R(&crng) % 6] : R(&crng) % 2 ? "any_order" : "normal";
        if (eng) fa = fb = R(&crng) % 2 ? ER_FMT_BF16 : ER_FMT_F16;
        if (eng && !strcmp(sn, "volta")) fa = fb = ER_FMT_F16;
        prob_init(&P, rint_(&crng, 1, 4), rint_(&crng, 1, 4), rint_(&crng, 1, cs % 4 ? 64 : 700), fa, fb, fc, fo, dir,
                  -1, 1);
        gen_opts g = {.tc = 24};
        gen_data(&P, kind, &crng, &g);
        prob_create(&P);
        const er_bounds *bd;
        er_tol_opts o;
        char msg[200] = "";
        std_opts(&o, sn, -1, 0);
        REQUIRE(er_result_bounds(P.r, &o, &bd, msg, sizeof msg) == ER_OK, "er_result_bounds: %s", msg);
        double cmax = fmax_(ER_FMT_F32), omax = fmax_(fo);
        for (int i = 0; i < P.m; i++)
            for (int j = 0; j < P.n; j++) {
                int e = i * P.n + j;
                double rad = bd->radius[e], lo, hi;
                if (!bd->has_range[e] || !isfinite(rad)) continue;
                mpfr_set_zero(x, 1);
                for (int p = 0; p < P.k; p++) {
                    mpfr_set_d(pr, P.A[(size_t)i * P.k + p], MPFR_RNDN);
                    mpfr_mul_d(pr, pr, P.B[(size_t)p * P.n + j], MPFR_RNDN); /* exact at 2400 bits */
                    mpfr_add(x, x, pr, MPFR_RNDN);                             /* exact: the span is small */
                }
                if (P.fc >= 0) mpfr_add_d(x, x, P.C[e], MPFR_RNDN); /* zero_c sets a C */
                mpfr_sub_d(t, x, rad, MPFR_RNDN);
                lo = mpfr_get_d(t, MPFR_RNDD);
                mpfr_add_d(t, x, rad, MPFR_RNDN);
                hi = mpfr_get_d(t, MPFR_RNDU);
                if (lo == 0) lo = 0.0; /* the real number 0 */
                if (hi == 0) hi = 0.0;
                if (!(lo > -cmax && hi < cmax && lo > -omax && hi < omax)) continue; /* clipped ends: not here */
                uint64_t lb, hb, want_lo, want_hi;
                unsigned fl;
                memcpy(&lb, &lo, 8);
                memcpy(&hb, &hi, 8);
                REQUIRE(er_convert_bits(ER_FMT_F64, fo, lb, dir, 0u, &want_lo, &fl) == ER_OK, "convert");
                REQUIRE(er_convert_bits(ER_FMT_F64, fo, hb, dir, 0u, &want_hi, &fl) == ER_OK, "convert");
                REQUIRE(bd->low[e] == want_lo && bd->high[e] == want_hi,
                        "case %d (%s, %s x %s -> %s, dir %d, k %d) element %d: low/high 0x%llx/0x%llx, from the exact "
                        "sum 0x%llx/0x%llx (RD(x - r) %a, RU(x + r) %a, r %a)",
                        cs, sn, fname(fa), fname(fb), fname(fo), dir, P.k, e, (unsigned long long)bd->low[e],
                        (unsigned long long)bd->high[e], (unsigned long long)want_lo, (unsigned long long)want_hi, lo, hi,
                        rad);
                checked++;
                exact_out += fo == ER_FMT_F64;
                engine += eng;
            }
        prob_free(&P);
    }
    mpfr_clears(x, t, pr, (mpfr_ptr)0);
    printf("test_bounds/ends_from_exact_sum: %ld elements (%ld with f64 outputs, %ld under an engine)\n", checked,
           exact_out, engine);
    REQUIRE(checked > 1000 && exact_out > 200 && engine > 500, "too few elements checked: %ld (%ld f64, %ld engine)",
            checked, exact_out, engine);
}
END_TEST

/* ---- Tightness (reported). ---- */
typedef struct trow {
    char std[24], data[40];
    double *r, *u; /* |impl - rounded| / tolerance; tolerance in ulps of rounded */
    long n, cap;
    double worst_err, worst_tol;
} trow;

static void trow_add(trow *t, double x, double ulps)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->r = realloc(t->r, sizeof(double) * (size_t)t->cap);
        t->u = realloc(t->u, sizeof(double) * (size_t)t->cap);
        REQUIRE(t->r != NULL && t->u != NULL, "t->r != NULL");
    }
    t->u[t->n] = ulps;
    t->r[t->n++] = x;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Per element: the largest |impl - rounded| over the standard's implementations, over the tolerance. */
static void tight_case(trow *t, prob *P, const er_tol_opts *o, const double *worst)
{
    const er_bounds *bd;
    char msg[200];
    REQUIRE(er_result_bounds(P->r, o, &bd, msg, sizeof msg) == ER_OK, "er_result_bounds(P->r, o, &bd, msg, sizeof msg) == ER_OK");
    for (int e = 0; e < P->m * P->n; e++) {
        double tol = bd->tolerance[e];
        if (!isfinite(worst[e]) || !(tol > 0) || !isfinite(tol)) continue;
        double r = worst[e] / tol;
        REQUIRE(r <= 1.0, "%s: |impl - rounded| %g > tolerance %g", o->standard.name, worst[e], tol);
        if (r > 0 && (t->n == 0 || r >= t->worst_err / t->worst_tol)) t->worst_err = worst[e], t->worst_tol = tol;
        double av = fabs(P->rv[e]), ulp = rnd(P->fo, nextafter(av, INFINITY), ER_RND_POSITIVE_INF) - av;
        trow_add(t, r, tol / ulp);
    }
}

static void trow_print(trow *t)
{
    double med = 0, mx = 0, umed = 0;
    if (t->n) {
        qsort(t->r, (size_t)t->n, sizeof(double), cmp_d);
        qsort(t->u, (size_t)t->n, sizeof(double), cmp_d);
        med = t->n % 2 ? t->r[t->n / 2] : 0.5 * (t->r[t->n / 2 - 1] + t->r[t->n / 2]);
        umed = t->n % 2 ? t->u[t->n / 2] : 0.5 * (t->u[t->n / 2 - 1] + t->u[t->n / 2]);
        mx = t->r[t->n - 1];
    }
    printf("  %-20s %-26s %6ld %10.3g %10.3g %10.4g\n", t->std, t->data, t->n, med, mx, umed);
    free(t->r);
    free(t->u);
    t->r = t->u = NULL;
}

START_TEST(tightness)
{
    uint64_t rng = er_test_seed("test_bounds/tightness");
    int nc = scaled(60);
    double t0 = (double)clock();
    printf("tightness: |implementation - rounded| / tolerance (max over the standard's implementations, per\n"
           "element; f32 output, nearest even, 2 x 2, k 8..1500; tol ulps: the median tolerance in ulps of rounded)\n");
    printf("  %-20s %-26s %6s %10s %10s %10s\n", "standard", "data", "cases", "median", "max", "tol ulps");
    for (int sd = 0; sd < 2; sd++) {
        const char *sn = sd ? "any_order" : "normal";
        for (int dk = 0; dk < 3; dk++) {
            static const int fm[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
            for (int adv = 1; adv >= 0; adv--) {
                trow t;
                memset(&t, 0, sizeof t);
                snprintf(t.std, sizeof t.std, "%s", sn);
                snprintf(t.data, sizeof t.data, "%s %s", fname(fm[dk]), adv ? "adversarial(drift)" : "random");
                for (int cs = 0; cs < nc; cs++) {
                    prob P;
                    uint64_t crng = R(&rng);
                    int k = cs < nc / 2 ? rint_(&crng, 8, 200) : rint_(&crng, 201, 1500);
                    prob_init(&P, 2, 2, k, fm[dk], fm[dk], -1, ER_FMT_F32, ER_RND_NEAREST_EVEN, -1, 1);
                    gen_opts g = {.tc = 24, .first = 1};
                    gen_data(&P, adv ? K_DRIFT : K_RANDOM, &crng, &g);
                    prob_create(&P);
                    er_tol_opts o;
                    std_opts(&o, sn, -1, 0);
                    double out[16], worst[16] = {0};
                    int last = sd ? IM_COUNT : IM_NORMAL_END;
                    for (int id = 0; id < last; id++) {
                        if (id == IM_OPENBLAS && !have_openblas()) continue;
                        if (id >= IM_TREE0B && id <= IM_TREE2B) continue;
                        run_impl(&P, id, ER_FMT_F32, 0, crng, out);
                        for (int e = 0; e < 4; e++) {
                            double d = fabs(out[e] - P.rv[e]);
                            if (!(d <= worst[e])) worst[e] = d;
                        }
                    }
                    tight_case(&t, &P, &o, worst);
                    prob_free(&P);
                }
                trow_print(&t);
            }
        }
    }
    for (int ti = 0; ti < N_ENGINES; ti++) {
        const eng_case *ec = &engines[ti];
        const sim_model *sm = sim_model_find(ec->sim);
        if (ti > 0 && !strcmp(ec->sim, engines[ti - 1].sim)) continue; /* aliases: the same model */
        for (int adv = 1; adv >= 0; adv--) {
            trow t;
            memset(&t, 0, sizeof t);
            snprintf(t.std, sizeof t.std, "%s", ec->std);
            snprintf(t.data, sizeof t.data, "%s %s", fname(ec->fmts[0]),
                     adv ? (sm->groups ? "adversarial(norm)" : "adversarial(trunc)") : "random");
            for (int cs = 0; cs < nc / 2; cs++) {
                prob P;
                int kind;
                gen_opts g;
                uint64_t crng = R(&rng);
                engine_config(&P, ec, &crng, 600, adv ? K_TRUNC : K_RANDOM, &kind, &g);
                prob_free(&P);
                int k = rint_(&crng, 8, cs < nc / 4 ? 100 : 600);
                prob_init(&P, 2, 2, k, ec->fmts[0], ec->fmts[0], -1, ER_FMT_F32, ER_RND_NEAREST_EVEN,
                          ec->scaled ? ER_FMT_F8E8M0FNU : -1, ec->scaled ? ec->blocks[0] : 1);
                g.positive = sm->floor_terms; /* floored terms: positive ones lose the most */
                gen_data(&P, adv ? K_TRUNC : K_RANDOM, &crng, &g);
                prob_create(&P);
                er_tol_opts o;
                std_opts(&o, ec->std, -1, 0);
                double out[16], worst[16];
                run_engine(&P, sm, out);
                for (int e = 0; e < 4; e++) worst[e] = fabs(out[e] - P.rv[e]);
                tight_case(&t, &P, &o, worst);
                prob_free(&P);
            }
            trow_print(&t);
        }
        if (sm->tf32_trunc)
            for (int adv = 1; adv >= 0; adv--) {
                /* f32 operands read as tf32: adversarial, every operand 1 + 2^-10 - 2^-23 (times a power of
                 * two) loses almost 2^-10 of itself; random f32 operands */
                trow t;
                memset(&t, 0, sizeof t);
                snprintf(t.std, sizeof t.std, "%s", ec->std);
                snprintf(t.data, sizeof t.data, "f32 %s", adv ? "adversarial(tf32 loss)" : "random");
                for (int cs = 0; cs < nc / 2; cs++) {
                    prob P;
                    uint64_t crng = R(&rng);
                    int k = rint_(&crng, 8, cs < nc / 4 ? 100 : 600);
                    gen_opts g = {.tc = 24};
                    prob_init(&P, 2, 2, k, ER_FMT_F32, ER_FMT_F32, -1, ER_FMT_F32, ER_RND_NEAREST_EVEN, -1, 1);
                    gen_data(&P, K_RANDOM, &crng, &g);
                    if (adv) {
                        for (size_t q = 0; q < (size_t)2 * k; q++) P.A[q] = ldexp(1 + 0x1p-10 - 0x1p-23, rint_(&crng, -2, 2));
                        for (size_t q = 0; q < (size_t)2 * k; q++) P.B[q] = ldexp(1 + 0x1p-10 - 0x1p-23, rint_(&crng, -2, 2));
                    }
                    prob_create(&P);
                    er_tol_opts o;
                    std_opts(&o, ec->std, -1, 0);
                    double out[16], worst[16];
                    run_engine(&P, sm, out);
                    for (int e = 0; e < 4; e++) worst[e] = fabs(out[e] - P.rv[e]);
                    tight_case(&t, &P, &o, worst);
                    prob_free(&P);
                }
                trow_print(&t);
            }
    }
    printf("test_bounds/tightness: %.1f s\n", ((double)clock() - t0) / CLOCKS_PER_SEC);
    fflush(stdout);
}
END_TEST

int main(void)
{
    const char *s = getenv("EXACTREF_TEST_SCALE");
#ifdef ER_UNDER_ASAN
    g_scale = 0.5;
#endif
    if (s && *s) g_scale *= strtod(s, NULL);
#ifdef ER_TEST_HAVE_OPENBLAS
    openblas_set_num_threads(1);
    printf("test_bounds: OpenBLAS sgemm included (%s)\n", openblas_get_config());
#else
    printf("test_bounds: OpenBLAS not found: sgemm not checked\n");
#endif
    Suite *su = suite_create("test_bounds");
    TCase *tc = tcase_create("bounds");
    SRunner *sr;
    int nf;
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, table);
    tcase_add_test(tc, simd_same_bits);
    tcase_add_test(tc, engine_special_terms);
    tcase_add_test(tc, detection);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, sound_normal);
    tcase_add_test(tc, sound_any_order);
    tcase_add_test(tc, sound_compute);
    tcase_add_test(tc, sound_engines);
    tcase_add_test(tc, normal_within_any_order);
    tcase_add_test(tc, ends_from_exact_sum);
    tcase_add_test(tc, quantized_core);
    tcase_add_test(tc, tightness);
    suite_add_tcase(su, tc);
    /* the reproducers of the unsoundness this suite found (fixed in 5548157): regressions */
    TCase *tu = tcase_create("UNSOUND_found");
    tcase_set_timeout(tu, 60);
    tcase_add_test(tu, unsound_engine_subnormal);
    tcase_add_test(tu, unsound_engine_overflow);
    tcase_add_test(tu, unsound_tf32_f32_inputs);
    tcase_add_test(tu, unsound_tf32_subnormal);
    tcase_add_test(tu, unsound_nan_output_overflow);
    tcase_add_test(tu, unsound_zero_factor_exponent);
    tcase_add_test(tu, unsound_zero_block_scale);
    tcase_add_test(tu, unsound_cdna3_fp8);
    tcase_add_test(tu, sound_zero_padding);
    suite_add_tcase(su, tu);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
