/*
 * test_sim.c (test_sim): the simulated implementations of sim.c against independent computations.
 *
 *  - f64_integers: compute f64 on integer data: every simulator equals the exact (int64) sum.
 *  - native_float: compute f32 (f64) simulators equal the same loops written with C float (double)
 *    arithmetic (IEEE single and double on this machine, contraction off, fmaf/fma from libm).
 *  - lanes_one: lanes = 1 equals index order; blocked fma with block 1 equals index order.
 *  - k1_product: on one product (c = +0) every simulator gives the rounded product; every engine model
 *    on its own input format gives the exact product.
 *  - huge_F: an engine model with F = 3000 and out_p 52 (f64 accumulator) equals the exact sum (MPFR)
 *    rounded toward zero / to nearest even; with small k on integer data, the exact sum.
 *  - hand cases: truncation at F (terms dropped), the subnormal factor's exponent, a zero factor's
 *    exponent, CDNA3 (products truncated, C and the product sum floored at F2, two fp8 stages), e8m13,
 *    RZ vs RNE normalisation, f16 output, accumulator feedback, exact groups (mxf4), scales, tf32
 *    truncation, promotion (DeepGEMM), NaN and infinities, flush to zero, index vs reversed order.
 *  Seeded (EXACTREF_SEED); everything runs in well under a second.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "er_test.h"
#include "sim.h"

static double rnd(int fmt, double x, int dir)
{
    double r;
    ck_assert(er_round_double(fmt, x, dir, &r) == ER_OK);
    return r;
}

/* A random value of fmt: sign, a binade in [lo, hi], 53 random bits, rounded to nearest even. */
static double rand_val(int fmt, uint64_t *rng, int lo, int hi)
{
    uint64_t r = er_test_rand(rng);
    double m = 1.0 + (double)(r >> 11) * 0x1p-53;
    int e = lo + (int)(er_test_rand(rng) % (uint64_t)(hi - lo + 1));
    double x = ldexp(m, e);
    if (r & 1u) x = -x;
    return rnd(fmt, x, ER_RND_NEAREST_EVEN);
}

static const sim_model *M(const char *name)
{
    const sim_model *m = sim_model_find(name);
    ck_assert_msg(m != NULL, "no model %s", name);
    return m;
}

/* Bitwise equality of doubles (distinguishes -0 and +0; NaN equals NaN). */
static int same(double x, double y)
{
    if (isnan(x) && isnan(y)) return 1;
    return memcmp(&x, &y, sizeof x) == 0;
}

#define EQ(got, want)                                                                                  \
    ck_assert_msg(same((got), (want)), "%s: got %a, want %a", #got, (double)(got), (double)(want))
#define EQV(got, want) /* equal as values (+0 == -0) */                                               \
    ck_assert_msg((got) == (want) || (isnan(got) && isnan(want)), "%s: got %a, want %a", #got,        \
                  (double)(got), (double)(want))

/* ---- Model table. ---- */
START_TEST(table)
{
    const char *names[] = {"volta", "turing", "ampere", "ampere-tf32", "ada-fp8", "hopper", "hopper-tf32",
                           "hopper-fp8", "blackwell", "blackwell-f8f6f4", "blackwell-mxf8f6f4",
                           "blackwell-mxf4", "cdna3", "hopper-fp8-deepgemm", "cdna3-fp8", "cdna3-xf32",
                           "blackwell-tf32", "ada-f16", "volta-f16", "turing-f16", "ampere-f16", "ada-fp8-f16",
                           "hopper-f16", "hopper-fp8-f16", "blackwell-f16", "blackwell-f8f6f4-f16"};
    int i;
    ck_assert_int_eq(sim_model_count, 26);
    for (i = 0; i < 26; i++) ck_assert_str_eq(sim_models[i].name, names[i]);
    for (i = 0; i < 26; i++) /* the f16 accumulators round to nearest even with 10 fraction bits */
        ck_assert_int_eq(sim_models[i].acc_fmt == ER_FMT_F16,
                         sim_models[i].out_p == 10 && sim_models[i].out_round == ER_RND_NEAREST_EVEN);
    ck_assert_int_eq(M("cdna3-fp8")->k, 16);
    ck_assert_int_eq(M("cdna3-fp8")->two_stage, 1);
    ck_assert_int_eq(M("cdna3")->two_stage, 0);
    ck_assert_int_eq(M("cdna3")->F2, 31);
    ck_assert_ptr_eq(sim_model_find("blackwell-mx"), sim_model_find("blackwell-mxf4"));
    ck_assert_ptr_eq(sim_model_find("nope"), NULL);
    ck_assert_int_eq(M("volta")->k, 4);
    ck_assert_int_eq(M("volta")->F, 23);
    ck_assert_int_eq(M("hopper-fp8")->out_p, 13);
    ck_assert_int_eq(M("blackwell-mxf4")->F, 35);
    ck_assert_int_eq(M("blackwell-mxf4")->groups, 16);
    ck_assert_int_eq(M("cdna3")->floor_terms, 1);
    ck_assert_int_eq(M("cdna3")->out_round, ER_RND_NEAREST_EVEN);
    ck_assert_int_eq(M("hopper-fp8-deepgemm")->promote, 128);
}
END_TEST

/* ---- Compute f64 on integer data: all exact. ---- */
START_TEST(f64_integers)
{
    uint64_t rng = er_test_seed("test_sim/f64_integers");
    static const int ns[] = {0, 1, 2, 3, 7, 16, 33, 100, 1000};
    double a[1000], b[1000];
    size_t t;
    int rep;
    for (t = 0; t < sizeof ns / sizeof ns[0]; t++)
        for (rep = 0; rep < 4; rep++) {
            int n = ns[t], p, L;
            int64_t ex = (int64_t)(er_test_rand(&rng) % 2001) - 1000;
            double c = (double)ex, want;
            for (p = 0; p < n; p++) {
                int64_t x = (int64_t)(er_test_rand(&rng) % 2001) - 1000, y = (int64_t)(er_test_rand(&rng) % 2001) - 1000;
                a[p] = (double)x;
                b[p] = (double)y;
                ex += x * y;
            }
            want = (double)ex;
            EQV(sim_index_order(n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_reversed(n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            for (L = 1; L <= 8; L++) {
                EQV(sim_lanes(L, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
                EQV(sim_lanes_pairwise(L, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            }
            EQV(sim_pairwise(n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_blocked_fma(1, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_blocked_fma(4, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_blocked_fma(7, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_random_tree(er_test_rand(&rng), 0, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_random_tree(er_test_rand(&rng), 1, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
            EQV(sim_random_tree(er_test_rand(&rng), 2, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
        }
}
END_TEST

/* ---- Against native float / double loops. ---- */
static float nat_pw(const float *a, const float *b, int lo, int hi)
{
    int mid;
    if (hi - lo == 1) return a[lo] * b[lo];
    mid = lo + (hi - lo) / 2;
    return nat_pw(a, b, lo, mid) + nat_pw(a, b, mid, hi);
}

START_TEST(native_float)
{
    uint64_t rng = er_test_seed("test_sim/native_float");
    double a[300], b[300];
    float fa[300], fb[300];
    int rep;
    for (rep = 0; rep < 200; rep++) {
        int n = 1 + (int)(er_test_rand(&rng) % 300), p, l;
        int in = (rep & 1) ? ER_FMT_BF16 : ER_FMT_F16;
        int lo = in == ER_FMT_BF16 ? -70 : -14, hi = in == ER_FMT_BF16 ? 30 : 15;
        double c = rand_val(ER_FMT_F32, &rng, -10, 20);
        float acc, lane[4], part;
        double dacc;
        if (rep % 10 == 3) c = 0.0;
        for (p = 0; p < n; p++) {
            a[p] = rand_val(in, &rng, lo, hi);
            b[p] = rand_val(in, &rng, lo / 2, hi / 2);
            if (rep % 7 == 0 && p % 2) { /* cancellation */
                a[p] = -a[p - 1];
                b[p] = b[p - 1];
            }
            fa[p] = (float)a[p];
            fb[p] = (float)b[p];
        }
        /* index order */
        acc = (float)c;
        for (p = 0; p < n; p++) acc = acc + fa[p] * fb[p];
        EQ(sim_index_order(n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)acc);
        /* reversed */
        acc = (float)c;
        for (p = n - 1; p >= 0; p--) acc = acc + fa[p] * fb[p];
        EQ(sim_reversed(n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)acc);
        /* 4 lanes, in order and pairwise */
        lane[0] = (float)c;
        lane[1] = lane[2] = lane[3] = 0.0f;
        for (p = 0; p < n; p++) lane[p % 4] = lane[p % 4] + fa[p] * fb[p];
        acc = ((lane[0] + lane[1]) + lane[2]) + lane[3];
        EQ(sim_lanes(4, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)acc);
        acc = (lane[0] + lane[1]) + (lane[2] + lane[3]);
        EQ(sim_lanes_pairwise(4, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)acc);
        /* pairwise */
        acc = nat_pw(fa, fb, 0, n) + (float)c;
        EQ(sim_pairwise(n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)acc);
        /* blocked fma, block 8 */
        acc = (float)c;
        for (p = 0; p < n; p += 8) {
            part = 0.0f;
            for (l = p; l < n && l < p + 8; l++) part = fmaf(fa[l], fb[l], part);
            acc = acc + part;
        }
        EQ(sim_blocked_fma(8, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)acc);
        /* compute f64 on f32 data (products exact in double) and f32 output rounded in a direction */
        dacc = c;
        for (p = 0; p < n; p++) dacc = dacc + a[p] * b[p];
        EQ(sim_index_order(n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), dacc);
        EQ(sim_index_order(n, a, b, c, ER_FMT_F64, ER_FMT_F32, ER_RND_ZERO), rnd(ER_FMT_F32, dacc, ER_RND_ZERO));
        /* blocked fma in f64 on f64 data with full significands (the MPFR path of fma) */
        for (p = 0; p < n; p++) {
            a[p] = rand_val(ER_FMT_F64, &rng, -40, 40);
            b[p] = rand_val(ER_FMT_F64, &rng, -40, 40);
        }
        dacc = c;
        for (p = 0; p < n; p += 5) {
            double dpart = 0.0;
            for (l = p; l < n && l < p + 5; l++) dpart = fma(a[l], b[l], dpart);
            dacc = dacc + dpart;
        }
        EQ(sim_blocked_fma(5, n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), dacc);
        dacc = c;
        for (p = 0; p < n; p++) dacc = dacc + a[p] * b[p];
        EQ(sim_index_order(n, a, b, c, ER_FMT_F64, ER_FMT_F64, ER_RND_NEAREST_EVEN), dacc);
    }
}
END_TEST

/* ---- lanes = 1 and block = 1 are index order. ---- */
START_TEST(lanes_one)
{
    uint64_t rng = er_test_seed("test_sim/lanes_one");
    static const int computes[] = {ER_FMT_F32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_TF32};
    double a[64], b[64];
    int rep;
    for (rep = 0; rep < 100; rep++) {
        int n = (int)(er_test_rand(&rng) % 65), p, cf = computes[rep % 4];
        double c = rand_val(ER_FMT_BF16, &rng, -4, 4), want;
        for (p = 0; p < n; p++) {
            a[p] = rand_val(ER_FMT_BF16, &rng, -6, 6);
            b[p] = rand_val(ER_FMT_BF16, &rng, -6, 6);
        }
        want = sim_index_order(n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN);
        EQ(sim_lanes(1, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN), want);
        EQ(sim_lanes_pairwise(1, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN), want);
        EQ(sim_blocked_fma(1, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN), want);
        EQ(sim_lanes(2, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           sim_lanes_pairwise(2, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN));
        /* same seed, same tree */
        EQ(sim_random_tree(77, 2, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           sim_random_tree(77, 2, n, a, b, c, cf, ER_FMT_F32, ER_RND_NEAREST_EVEN));
    }
}
END_TEST

/* ---- One product. ---- */
START_TEST(k1_product)
{
    uint64_t rng = er_test_seed("test_sim/k1_product");
    static const int computes[] = {ER_FMT_F32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_F64};
    int rep, i;
    for (rep = 0; rep < 400; rep++) {
        int cf = computes[rep % 4];
        double a = rand_val(ER_FMT_F32, &rng, -10, 10), b = rand_val(ER_FMT_F32, &rng, -10, 10);
        double want = rnd(cf, a * b, ER_RND_NEAREST_EVEN); /* a*b of two f32 values is exact in double */
        int dir = rep % 5;
        double w2 = rnd(ER_FMT_BF16, want, dir);
        EQ(sim_index_order(1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        EQ(sim_reversed(1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        EQ(sim_lanes(4, 1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        EQ(sim_lanes_pairwise(4, 1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        EQ(sim_pairwise(1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        EQ(sim_blocked_fma(3, 1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        for (i = 0; i < 3; i++) EQ(sim_random_tree((uint64_t)rep, i, 1, &a, &b, 0.0, cf, cf, ER_RND_NEAREST_EVEN), want);
        EQ(sim_index_order(1, &a, &b, 0.0, cf, ER_FMT_BF16, dir), w2);
    }
    /* Engine models on their own input formats: the product is exact (c = +0). */
    for (i = 0; i < sim_model_count; i++) {
        const sim_model *m = &sim_models[i];
        int in = ER_FMT_BF16, lo = -20, hi = 20;
        if (strstr(m->name, "fp8") || strcmp(m->name, "blackwell-f8f6f4") == 0 || strcmp(m->name, "blackwell-mxf8f6f4") == 0) {
            in = ER_FMT_F8E4M3FN;
            lo = -9;
            hi = 7;
        } else if (strstr(m->name, "tf32")) {
            in = ER_FMT_TF32;
        } else if (strcmp(m->name, "blackwell-mxf4") == 0) {
            in = ER_FMT_F4E2M1FN;
            lo = -1;
            hi = 1;
        } else if (strcmp(m->name, "volta") == 0 || strcmp(m->name, "turing") == 0) {
            in = ER_FMT_F16;
            lo = -14;
            hi = 15;
        }
        if (m->acc_fmt == ER_FMT_F16) { /* products within f16's range */
            lo = lo < -9 ? -9 : lo;
            hi = hi > 6 ? 6 : hi;
        }
        for (rep = 0; rep < 100; rep++) {
            double a = rand_val(in, &rng, lo, hi), b = rand_val(in, &rng, lo, hi), want;
            if (a == 0.0) a = 1.0;
            if (b == 0.0) b = -1.0;
            /* an f16 accumulator rounds the exact product once, to nearest even */
            want = m->acc_fmt == ER_FMT_F16 ? rnd(ER_FMT_F16, a * b, ER_RND_NEAREST_EVEN) : a * b;
            EQ(sim_engine(m, 1, &a, &b, 0.0, in, in, ER_FMT_F32, ER_RND_NEAREST_EVEN), want);
            EQ(sim_engine(m, 1, &a, &b, 0.0, in, in, ER_FMT_F64, ER_RND_ZERO), want);
        }
    }
}
END_TEST

/* ---- A model with huge F and a 53-bit normalisation equals the exact sum rounded. ---- */
START_TEST(huge_F)
{
    uint64_t rng = er_test_seed("test_sim/huge_F");
    sim_model big = {"big", 64, 3000, 52, ER_RND_ZERO, 0, 0, 0, ER_FMT_F64, 0, 0, 0, 0};
    double a[64], b[64];
    mpfr_t s, t;
    int rep, p;
    mpfr_init2(s, 5000);
    mpfr_init2(t, 128);
    for (rep = 0; rep < 200; rep++) {
        int n = 1 + (int)(er_test_rand(&rng) % 64);
        double c = rand_val(ER_FMT_F64, &rng, -100, 100), want;
        ck_assert_int_eq(mpfr_set_d(s, c, MPFR_RNDN), 0);
        for (p = 0; p < n; p++) {
            a[p] = rand_val(ER_FMT_F32, &rng, -60, 60);
            b[p] = rand_val(ER_FMT_F32, &rng, -60, 60);
            ck_assert_int_eq(mpfr_set_d(t, a[p], MPFR_RNDN), 0);
            ck_assert_int_eq(mpfr_mul_d(t, t, b[p], MPFR_RNDN), 0);
            ck_assert_int_eq(mpfr_add(s, s, t, MPFR_RNDN), 0);
        }
        big.out_round = ER_RND_ZERO;
        want = mpfr_get_d(s, MPFR_RNDZ);
        EQV(sim_engine(&big, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
        big.out_round = ER_RND_NEAREST_EVEN;
        want = mpfr_get_d(s, MPFR_RNDN);
        EQV(sim_engine(&big, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
        /* the same through the exact group path */
        big.groups = 8;
        EQV(sim_engine(&big, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
        big.groups = 0;
        /* floored terms change nothing either */
        big.floor_terms = 1;
        EQV(sim_engine(&big, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_FMT_F64, ER_RND_NEAREST_EVEN), want);
        big.floor_terms = 0;
    }
    /* Several steps (k = 3) on integer data: every intermediate is exact. */
    big.k = 3;
    for (rep = 0; rep < 50; rep++) {
        int n = (int)(er_test_rand(&rng) % 64);
        int64_t ex = (int64_t)(er_test_rand(&rng) % 2001) - 1000;
        double c = (double)ex;
        for (p = 0; p < n; p++) {
            int64_t x = (int64_t)(er_test_rand(&rng) % 2001) - 1000, y = (int64_t)(er_test_rand(&rng) % 2001) - 1000;
            a[p] = (double)x;
            b[p] = (double)y;
            ex += x * y;
        }
        EQV(sim_engine(&big, n, a, b, c, ER_FMT_F32, ER_FMT_F32, ER_FMT_F64, ER_RND_NEAREST_EVEN), (double)ex);
    }
    mpfr_clear(s);
    mpfr_clear(t);
}
END_TEST

/* ---- Hand-computed cases of the engine. ---- */
START_TEST(engine_truncation)
{
    const int H = ER_FMT_F16;
    /* Terms 1, 2^-24, 2^-24: F = 23 drops both small terms; F = 24 keeps them. */
    {
        double a[] = {1, 0x1p-12, 0x1p-12}, b[] = {1, 0x1p-12, 0x1p-12};
        EQ(sim_engine(M("volta"), 3, a, b, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_engine(M("turing"), 3, a, b, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-23);
    }
    /* Terms 1 and 2^-30 (the factor 2^-15 is an f16 subnormal), C = -1: F = 23 drops 2^-30, the exact sum
     * would be 2^-30. */
    {
        double a[] = {1, 0x1p-15}, b[] = {1, 0x1p-15};
        sim_model wide = *M("volta");
        EQ(sim_engine(M("volta"), 2, a, b, -1.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
        wide.F = 40;
        EQ(sim_engine(&wide, 2, a, b, -1.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p-30);
        EQ(sim_engine_step(M("volta"), 2, a, b, NULL, NULL, 0, -1.0, H, H), 0.0);
    }
    /* Normalisation toward zero: 1 + 3*2^-25 is kept whole by F = 25 and truncated to 1. */
    {
        double a[] = {1, 0x1p-12}, b[] = {1, 0x1.8p-12};
        EQ(sim_engine(M("hopper"), 2, a, b, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_index_order(2, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-23);
    }
    /* A subnormal factor keeps its format's minimum exponent: 2^-24 (f16) x 2^15 is the term (2^-10, 1),
     * so E = 1 and the term 2^-23 falls below 2^(1-23).  Declared f32 (where 2^-24 is normal), E = 0. */
    {
        double a[] = {1, 0x1p-24, 0x1p-12}, b[] = {1, 0x1p15, 0x1p-11};
        EQ(sim_engine(M("volta"), 3, a, b, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-9);
        EQ(sim_engine(M("volta"), 3, a, b, 0.0, ER_FMT_F32, H, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           1.0 + 0x1p-9 + 0x1p-23);
    }
    /* A zero term (here C = 0) counts as exponent -126: with an f64 accumulator, products 2^-200 and
     * 2^-201 (bf16 factors) fall below 2^(-126-25) and vanish; with C = 2^-190 (E = -190) they are kept. */
    {
        double a[] = {0x1p-100, 0x1p-100}, b[] = {0x1p-100, 0x1p-101};
        sim_model w = *M("hopper");
        w.acc_fmt = ER_FMT_F64;
        w.out_p = 52;
        EQ(sim_engine(&w, 2, a, b, 0.0, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F64, ER_RND_NEAREST_EVEN), 0.0);
        EQ(sim_engine(&w, 2, a, b, 0x1p-190, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F64, ER_RND_NEAREST_EVEN),
           0x1p-190 + 0x1.8p-200);
    }
    /* A zero factor has an exponent (-126; zero_fmt_emin: its format's minimum), so a zero product is a
     * term of exponent e_a + e_b: 0 x 2^101 (bf16) has exponent -25 and truncates 1.5 2^-60 at 2^-50 to
     * nothing; with 0 x 1 the product is kept.  f16: 0 x 2^15 is -111 (nothing lost) or, under the
     * format-minimum reading, 1 (1.5 2^-28 lost at 2^-24). */
    {
        double a[] = {0.0, 1.5 * 0x1p-30}, b[] = {0x1p101, 0x1p-30}, b1[] = {1.0, 0x1p-30};
        double h[] = {0.0, 1.5 * 0x1p-14}, hb[] = {0x1p15, 0x1p-14};
        sim_model z = *M("hopper");
        EQ(sim_engine(&z, 2, a, b, 0.0, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
        EQ(sim_engine(&z, 2, a, b1, 0.0, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.5 * 0x1p-60);
        EQ(sim_engine(&z, 2, h, hb, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.5 * 0x1p-28);
        z.zero_fmt_emin = 1;
        EQ(sim_engine(&z, 2, h, hb, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
    }
    /* An exact group (mxf4) has exponent e_sa + e_sb whatever its elements: 16 zeros with scale 2^40 set
     * E = 40, and the next group, 16 x 1.5 with scale 2^-10 (0.0234375), falls below 2^(40 - 35). */
    {
        double a[32], b[32], sa[2] = {0x1p40, 0x1p-10}, sb[2] = {1.0, 1.0};
        for (int p = 0; p < 32; p++) a[p] = p < 16 ? 0.0 : 1.5, b[p] = 1.0;
        EQ(sim_engine_scaled(M("blackwell-mxf4"), 32, a, b, sa, sb, 16, 0.0, ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN,
                             ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
        sa[0] = 0x1p-10;
        EQ(sim_engine_scaled(M("blackwell-mxf4"), 32, a, b, sa, sb, 16, 0.0, ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN,
                             ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0234375);
    }
    /* CDNA3 fp8: two stages.  The even products hold 224 x 224 and 224 x -224 (exponent 7 + 7 = 14): the
     * even stage's small products (1.96875 2^-11) fall below its 2^(14 - 24) and vanish; the odd stage
     * sums its 8 small products exactly (15.75 2^-11), then is floored at 2^(14 - 24): 7 2^-10.  One
     * stage of 16 (the f16 rules) loses every small product. */
    {
        const int E4 = ER_FMT_F8E4M3FNUZ;
        double a[16], b[16], want = 7 * 0x1p-10;
        for (int p = 0; p < 16; p++) a[p] = 1.75 * 0x1p-6, b[p] = 1.125 * 0x1p-5;
        a[0] = 224.0, b[0] = 224.0, a[2] = 224.0, b[2] = -224.0;
        EQ(sim_engine(M("cdna3-fp8"), 16, a, b, 0.0, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN), want);
        sim_model one = *M("cdna3-fp8");
        one.two_stage = 0;
        EQ(sim_engine(&one, 16, a, b, 0.0, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
    }
    /* CDNA3 truncates the products toward zero (1 - 2^-30 gives 1) but floors C: with C = -2^-30 the sum
     * 1 - 2^-30 becomes 1 - 2^-24 (rounded to nearest even f32: exact); an NVIDIA model gives 1. */
    {
        double a[] = {1, -0x1p-15}, b[] = {1, 0x1p-15}, one = 1.0;
        EQ(sim_engine(M("cdna3"), 2, a, b, 0.0, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_engine(M("cdna3"), 1, &one, &one, -0x1p-30, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32,
                      ER_RND_NEAREST_EVEN), 1.0 - 0x1p-24);
        EQ(sim_engine(M("turing"), 1, &one, &one, -0x1p-30, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32,
                      ER_RND_NEAREST_EVEN), 1.0);
    }
    /* The product sum is floored at F2 = 31 fraction bits of E = max(Ep, C's exponent): products 1 and
     * -2^-24 (kept by F = 24 at Ep = 0) with C = 2^7 (E = 7) give 1 - 2^-24 floored at 2^-24: 1 - 2^-24,
     * and C = 2^8 (E = 8): floored at 2^-23, 1 - 2^-23; f64 accumulators show it. */
    {
        double a[] = {1, -0x1p-12}, b[] = {1, 0x1p-12};
        sim_model w = *M("cdna3");
        w.acc_fmt = ER_FMT_F64;
        w.out_p = 52;
        EQ(sim_engine(&w, 2, a, b, 0x1p7, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F64, ER_RND_NEAREST_EVEN),
           0x1p7 + 1.0 - 0x1p-24);
        EQ(sim_engine(&w, 2, a, b, 0x1p8, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F64, ER_RND_NEAREST_EVEN),
           0x1p8 + 1.0 - 0x1p-23);
    }
    /* CDNA3 rounds to nearest even: 1 + 3*2^-24 (a tie) -> 1 + 2^-22; toward zero: 1 + 2^-23. */
    {
        double a[] = {1, 0x1p-12}, b[] = {1, 0x1.8p-11};
        EQ(sim_engine(M("cdna3"), 2, a, b, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-22);
        EQ(sim_engine(M("turing"), 2, a, b, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-23);
    }
    /* e8m13: terms 1, 2^-13, 2^-14 (e4m3 factors): F = 13 drops 2^-14; C = 1 + 2^-20 alone keeps 13 bits. */
    {
        const int E4 = ER_FMT_F8E4M3FN;
        double a[] = {1, 0x1p-6, 0x1p-7}, b[] = {1, 0x1p-7, 0x1p-7}, z = 0.0, one = 1.0;
        EQ(sim_engine(M("hopper-fp8"), 3, a, b, 0.0, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-13);
        EQ(sim_engine(M("blackwell-f8f6f4"), 3, a, b, 0.0, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           1.0 + 0x1p-13 + 0x1p-14);
        EQ(sim_engine(M("hopper-fp8"), 1, &z, &one, 1.0 + 0x1p-20, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_engine(M("hopper-fp8"), 0, &z, &one, 1.0 + 0x1p-20, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           1.0 + 0x1p-20); /* no step at all */
        EQ(sim_engine(M("ada-fp8"), 1, &z, &one, -(1.0 + 0x1p-12 + 0x1p-20), E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           -(1.0 + 0x1p-12));
    }
    /* f16 output: 1 + 2^-11 + 2^-12 rounds to nearest even f16: 1 + 2^-10 (toward zero it would be 1). */
    {
        double a[] = {1, 0x1p-6, 0x1p-6}, b[] = {1, 0x1p-5, 0x1p-6};
        sim_model h16 = sim_model_f16_output(M("hopper"));
        EQ(sim_engine(&h16, 3, a, b, 0.0, H, H, ER_FMT_F16, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-10);
        EQ(sim_engine(M("hopper"), 3, a, b, 0.0, H, H, ER_FMT_F16, ER_RND_ZERO), 1.0);
        /* f16 accumulator overflow: 65504 + 16 rounds to 65504 + 32 = 2^16: infinity */
        {
            double x[] = {65504.0, 16.0}, y[] = {1.0, 1.0};
            EQ(sim_engine(&h16, 2, x, y, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), INFINITY);
        }
    }
}
END_TEST

START_TEST(engine_feedback)
{
    const int H = ER_FMT_F16;
    double ones[16], a[300], b[300], c;
    int p;
    for (p = 0; p < 16; p++) ones[p] = 1.0;
    EQ(sim_engine(M("volta"), 8, ones, ones, 0.0, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 8.0);
    /* C = 2^24 fed back every 4 products: F = 23 drops each 1 (weight 2^1); F = 24 keeps them. */
    EQ(sim_engine(M("volta"), 8, ones, ones, 0x1p24, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p24);
    EQ(sim_engine(M("turing"), 8, ones, ones, 0x1p24, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p24 + 8);
    /* Feedback every k: volta sees 2^24 + 2 + 2 (k = 4, truncation is exact for 2's), hopper (k = 16)
     * sees 2^24 + 4 + 4 ones at once. */
    {
        double x[8] = {2, 1, 1, 1, 2, 1, 1, 1};
        EQ(sim_engine(M("volta"), 8, x, ones, 0x1p24, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p24 + 4);
        EQ(sim_engine(M("hopper"), 8, x, ones, 0x1p24, H, H, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p24 + 10);
    }
    /* Promotion (DeepGEMM): chunks of 128 from C = 0, added into an f32 accumulator to nearest even. */
    {
        uint64_t rng = er_test_seed("test_sim/engine_feedback");
        const int E4 = ER_FMT_F8E4M3FN;
        int rep;
        for (rep = 0; rep < 20; rep++) {
            int n = 1 + (int)(er_test_rand(&rng) % 300), q;
            float facc;
            c = rand_val(ER_FMT_F32, &rng, -2, 6);
            for (p = 0; p < n; p++) {
                a[p] = rand_val(E4, &rng, -6, 8);
                b[p] = rand_val(E4, &rng, -6, 8);
            }
            facc = (float)c;
            for (q = 0; q < n; q += 128) {
                int len = n - q < 128 ? n - q : 128;
                facc = facc + (float)sim_engine(M("hopper-fp8"), len, a + q, b + q, 0.0, E4, E4, ER_FMT_F32,
                                                ER_RND_NEAREST_EVEN);
            }
            EQ(sim_engine(M("hopper-fp8-deepgemm"), n, a, b, c, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN), (double)facc);
            if (n <= 128)
                ck_assert(same(sim_engine(M("hopper-fp8-deepgemm"), n, a, b, 0.0, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN),
                               sim_engine(M("hopper-fp8"), n, a, b, 0.0, E4, E4, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
        }
    }
}
END_TEST

START_TEST(engine_groups_scales_tf32)
{
    const int F4 = ER_FMT_F4E2M1FN, E4 = ER_FMT_F8E4M3FN;
    /* mxf4: a group's sum is exact: 36 - 36 + 0.25 = 0.25 (C = 0). */
    {
        double a[] = {6, -6, 0.5}, b[] = {6, 6, 0.5};
        EQ(sim_engine(M("blackwell-mxf4"), 3, a, b, 0.0, F4, F4, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.25);
        /* with C = 2^40 the group term 0.25 falls below 2^(40-35) and is dropped */
        EQ(sim_engine(M("blackwell-mxf4"), 3, a, b, 0x1p40, F4, F4, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p40);
        /* with C = -2^29: E = 29, terms at 2^-6 granularity: 0.25 kept; the sum -2^29 + 0.25 is
         * truncated toward zero to 24 bits: -2^29 + 32 */
        EQ(sim_engine_step(M("blackwell-mxf4"), 3, a, b, NULL, NULL, 0, -0x1p29, F4, F4), -0x1p29 + 32);
    }
    /* Group term exponents come from the scales: two groups of 16 with scales 2^3 and 2^-2 (block 16). */
    {
        double a[32], b[32], sa[2] = {0x1p3, 0x1p-2}, sb[2] = {1.0, 1.0};
        int p;
        double want = 0.0;
        for (p = 0; p < 32; p++) {
            a[p] = (p % 3) ? 1.5 : -0.5;
            b[p] = (p % 5) ? 2.0 : 3.0;
            want += a[p] * b[p] * sa[p / 16];
        }
        EQ(sim_engine_scaled(M("blackwell-mxf4"), 32, a, b, sa, sb, 16, 0.0, F4, F4, ER_FMT_F32,
                             ER_RND_NEAREST_EVEN), want);
        EQ(sim_engine_scaled(M("blackwell-mxf8f6f4"), 32, a, b, sa, sb, 16, 0.0, E4, E4, ER_FMT_F32,
                             ER_RND_NEAREST_EVEN), want);
    }
    /* Scales move E (blocks of 1): the term 1 x 2^10 and C = -2^10 give E = 10, so the term 2^-18
     * (e4m3 subnormals 2^-9 x 2^-9) falls below 2^(10-25): the result is 0.  Scale 1 and C = -1: kept. */
    {
        double a[] = {1.0, 0x1p-9}, b[] = {1.0, 0x1p-9}, sa[] = {0x1p10, 1.0}, sb[] = {1.0, 1.0};
        EQ(sim_engine_scaled(M("blackwell-mxf8f6f4"), 2, a, b, sa, sb, 1, -0x1p10, E4, E4, ER_FMT_F32,
                             ER_RND_NEAREST_EVEN), 0.0);
        sa[0] = 1.0;
        EQ(sim_engine_scaled(M("blackwell-mxf8f6f4"), 2, a, b, sa, sb, 1, -1.0, E4, E4, ER_FMT_F32,
                             ER_RND_NEAREST_EVEN), 0x1p-18);
    }
    /* tf32 truncation of f32 operands. */
    {
        double a[] = {1.0 + 0x1p-23, 1.0 + 0x1p-10}, b[] = {1.0, 1.0};
        EQ(sim_engine(M("ampere-tf32"), 1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_engine(M("hopper-tf32"), 1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_engine(M("hopper-tf32"), 1, a + 1, b, 0.0, ER_FMT_TF32, ER_FMT_TF32, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           1.0 + 0x1p-10);
        EQ(sim_engine(M("hopper"), 1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           1.0 + 0x1p-23);
    }
}
END_TEST

START_TEST(specials)
{
    const int BF = ER_FMT_BF16;
    double inf = INFINITY;
    {
        double a[] = {inf}, b[] = {0.0};
        ck_assert(isnan(sim_engine(M("hopper"), 1, a, b, 0.0, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
        ck_assert(isnan(sim_index_order(1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
        ck_assert(isnan(sim_blocked_fma(2, 1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
    }
    {
        double a[] = {inf, -inf}, b[] = {1.0, 1.0};
        ck_assert(isnan(sim_engine(M("hopper"), 2, a, b, 0.0, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
        ck_assert(isnan(sim_pairwise(2, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
        EQ(sim_engine(M("hopper"), 1, a, b, 0.0, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN), inf);
        EQ(sim_engine(M("volta"), 2, b, b, -inf, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN), -inf);
        ck_assert(isnan(sim_engine(M("volta"), 2, b, b, NAN, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN)));
        /* inf in a later step stays inf (fed back as C) */
        EQ(sim_engine(M("volta"), 1, a, b, 0.0, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN), inf);
    }
    /* Overflow: FLT_MAX + 2^127 is an infinity for the engine (even toward zero, as MMA-Sim) and for f32
     * accumulation to nearest; a f32 output rounded toward zero from f64 compute gives FLT_MAX. */
    {
        double a[] = {0x1p127}, b[] = {1.0};
        EQ(sim_engine(M("hopper"), 1, a, b, FLT_MAX, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN), inf);
        EQ(sim_index_order(1, a, b, FLT_MAX, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), inf);
        EQ(sim_index_order(1, a, b, FLT_MAX, ER_FMT_F64, ER_FMT_F32, ER_RND_ZERO), (double)FLT_MAX);
        EQ(sim_engine(M("hopper"), 1, a, b, -(double)FLT_MAX, BF, BF, ER_FMT_F32, ER_RND_NEAREST_EVEN),
           -0x1p127 + 0x1p104);
    }
}
END_TEST

START_TEST(order_and_ftz)
{
    /* 1 + 2^-24 + 2^-24 in f32: index order ties to even twice (1), reversed adds the small ones first. */
    {
        double a[] = {1, 0x1p-12, 0x1p-12}, b[] = {1, 0x1p-12, 0x1p-12};
        EQ(sim_index_order(3, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        EQ(sim_reversed(3, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-23);
        EQ(sim_lanes(2, 3, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
    }
    /* Flush to zero: the f32 subnormal 2^-130 (a product) and c = 2^-140 are read as zero. */
    {
        double a[] = {0x1p-65}, b[] = {0x1p-65};
        EQ(sim_index_order(1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p-130);
        EQ(sim_blocked_fma(1, 1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p-130);
        sim_set_ftz(1);
        ck_assert_int_eq(sim_get_ftz(), 1);
        EQ(sim_index_order(1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
        EQ(sim_blocked_fma(1, 1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
        EQ(sim_index_order(0, a, b, 0x1p-140, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0.0);
        EQ(sim_index_order(1, a, b, 1.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0);
        /* the engine ignores the switch */
        EQ(sim_engine(M("hopper"), 1, a, b, 0.0, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32, ER_RND_NEAREST_EVEN), 0x1p-130);
        sim_set_ftz(0);
    }
    /* Products rounded to compute: bf16 compute rounds (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 to 1 + 2^-6. */
    {
        double a[] = {1.0 + 0x1p-7}, b[] = {1.0 + 0x1p-7};
        EQ(sim_index_order(1, a, b, 0.0, ER_FMT_BF16, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-6);
        EQ(sim_index_order(1, a, b, 0.0, ER_FMT_F32, ER_FMT_F32, ER_RND_NEAREST_EVEN), 1.0 + 0x1p-6 + 0x1p-14);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("test_sim");
    TCase *tc = tcase_create("sim");
    SRunner *sr;
    int nf;
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, table);
    tcase_add_test(tc, f64_integers);
    tcase_add_test(tc, native_float);
    tcase_add_test(tc, lanes_one);
    tcase_add_test(tc, k1_product);
    tcase_add_test(tc, huge_F);
    tcase_add_test(tc, engine_truncation);
    tcase_add_test(tc, engine_feedback);
    tcase_add_test(tc, engine_groups_scales_tf32);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, order_and_ftz);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
