/* test_opencl_mma.c: the exact engine on OpenCL (er_mma with ER_BACKEND_OPENCL) gives the CPU engine's
 * bits: D, the enclosures lo/hi/odd and mmai's count of wrapped elements.
 *
 * Every problem is run three times: on the CPU with strategy EXACT (the long accumulator for every
 * element), on the CPU with strategy AUTO (the certified binary64 fast path where it decides), and on
 * the OpenCL device; the output tensors (filled with the same junk beforehand) must be byte-identical.
 * The random problems are small (m, n <= 8, k <= 200: the device compiles and runs a long accumulator
 * per element) but cover every input float format, every output format family, every direction,
 * saturation and flush-to-zero, C or not, block scaling with both scale formats, mmai with wrapping,
 * batches with broadcast operands, transposed and padded views, special values, and the tiling of
 * large problems (EXACTREF_OPENCL_MAX_CHUNK).  The random tests print their seed (EXACTREF_SEED).
 *
 * Without an OpenCL platform (or device) the program exits 77 (skipped) unless
 * EXACTREF_REQUIRE_OPENCL=1, which makes it fail instead.  EXACTREF_OPENCL_DEVICE picks the device.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, clock_gettime */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_test.h"
#include "exactref/exactref.h"

#define ER_TEST_BACKEND ER_BACKEND_OPENCL
#define ER_TEST_BACKEND_NAME "OpenCL"
#define ER_TEST_RUN(x) er_mma(x)
#include "er_test_mma.h"

/* OpenCL's counts: every element by the long accumulator (mmai: 64-bit integer sums). */
static void backend_stats(const char *ctx, const er_mma_stats *s, int mmai, const cfg *c, const char *d)
{
    (void)c;
    ck_assert_msg(s->exact_path == (mmai ? 0 : s->elements) && s->threads == 0 && s->fast_decided == 0 &&
                      s->exact_f64 == 0,
                  "%s: OpenCL stats: exact_path %lld of %lld, threads %d [%s]", ctx, (long long)s->exact_path,
                  (long long)s->elements, s->threads, d);
}

/*
 * Every float format as a, with a random float b, and every float format as b, with a random a; C in a
 * random float format or absent.  Each problem is rounded three ways; over the test every output
 * family meets every direction (configuration t: family t % 7, direction (t / 7) % 6), and one
 * configuration in three asks for the enclosures too.
 */
START_TEST(test_random_pairs)
{
    uint64_t rng = er_test_seed("opencl_mma/random_pairs");
    long t = 0, probs = 0;
    double t0 = now_();
    for (int side = 0; side < 2; side++)
        for (int f = 0; f < NFLOAT; f++) {
            prob P;
            int mode = (int)below(&rng, GEN_COUNT);
            memset(&P, 0, sizeof P);
            P.fa = side ? (int)below(&rng, NFLOAT) : f;
            P.fb = side ? f : (int)below(&rng, NFLOAT);
            P.fc = below(&rng, 3) ? (int)below(&rng, NFLOAT) : -1;
            P.fs = -1;
            P.m = 1 + (int64_t)below(&rng, 6);
            P.n = 1 + (int64_t)below(&rng, 6);
            P.k = pick_k(&rng);
            prob_make(&P, &rng, mode, below(&rng, 4) == 0 ? 8 : 0);
            for (int r = 0; r < 3; r++, t++) {
                cfg c;
                memset(&c, 0, sizeof c);
                c.dfmt = out_fmts[t % 7] >= 0 ? out_fmts[t % 7] : (int)below(&rng, NFLOAT);
                c.dir = (int)((t / 7) % ER_RND_COUNT);
                c.opts = opt_sets[below(&rng, 6)];
                c.encl = r == 0;
                check3("random_pairs", &P, &c, NULL);
            }
            prob_free(&P);
            probs++;
        }
    printf("random_pairs: %ld problems, %ld configurations, %.2f s\n", probs, t, now_() - t0);
}
END_TEST

/* The pairs the kernel compiles a specialised loop for (kernels/mma.cl), each once more, with specials. */
START_TEST(test_specialised_pairs)
{
    static const int pairs[][2] = {{ER_FMT_BF16, ER_FMT_BF16},         {ER_FMT_F16, ER_FMT_F16},
                                   {ER_FMT_F32, ER_FMT_F32},           {ER_FMT_TF32, ER_FMT_TF32},
                                   {ER_FMT_F64, ER_FMT_F64},           {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN},
                                   {ER_FMT_F8E5M2, ER_FMT_F8E5M2},     {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2},
                                   {ER_FMT_F8E5M2, ER_FMT_F8E4M3FN}};
    uint64_t rng = er_test_seed("opencl_mma/specialised_pairs");
    for (int p = 0; p < (int)(sizeof pairs / sizeof pairs[0]); p++) {
        prob P;
        cfg c;
        memset(&P, 0, sizeof P);
        memset(&c, 0, sizeof c);
        P.fa = pairs[p][0];
        P.fb = pairs[p][1];
        P.fc = p % 2 ? ER_FMT_F32 : -1;
        P.fs = -1;
        P.m = 1 + (int64_t)below(&rng, 6);
        P.n = 1 + (int64_t)below(&rng, 6);
        P.k = pick_k(&rng);
        prob_make(&P, &rng, p % GEN_COUNT, 3);
        c.dfmt = out_fmts[p % 6];
        c.dir = p % ER_RND_COUNT;
        c.opts = opt_sets[p % 6];
        c.encl = p % 3 == 0;
        check3("specialised_pairs", &P, &c, NULL);
        prob_free(&P);
    }
}
END_TEST

/* Block-scaled: every pair of element formats with each scale format (once), random block sizes
 * (partial last blocks), scales with 2^-127, 2^127, NaN, and for f8E4M3FN negative and zero ones. */
START_TEST(test_random_scaled)
{
    static const int elems[5] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN};
    static const int blocks[6] = {1, 2, 3, 4, 16, 32};
    uint64_t rng = er_test_seed("opencl_mma/random_scaled");
    long probs = 0;
    double t0 = now_();
    for (int ia = 0; ia < 5; ia++)
        for (int ib = 0; ib < 5; ib++) {
            prob P;
            cfg c;
            memset(&P, 0, sizeof P);
            memset(&c, 0, sizeof c);
            P.fa = elems[ia];
            P.fb = elems[ib];
            P.fs = (ia + ib) % 2 ? ER_FMT_F8E4M3FN : ER_FMT_F8E8M0FNU;
            P.fc = below(&rng, 2) ? (int)below(&rng, NFLOAT) : -1;
            P.block = blocks[below(&rng, 6)];
            P.m = 1 + (int64_t)below(&rng, 5);
            P.n = 1 + (int64_t)below(&rng, 5);
            P.k = pick_k(&rng);
            prob_make(&P, &rng, below(&rng, 2) ? GEN_UNIFORM : GEN_FEWBITS, below(&rng, 3) == 0 ? 8 : 0);
            c.dfmt = out_fmts[probs % 7] >= 0 ? out_fmts[probs % 7] : (int)below(&rng, NFLOAT);
            c.dir = (int)(probs % ER_RND_COUNT);
            c.opts = opt_sets[below(&rng, 6)];
            c.encl = probs % 3 == 0;
            check3("random_scaled", &P, &c, NULL);
            prob_free(&P);
            probs++;
        }
    /* the two common MX configurations once more, with k across several blocks of 32 */
    for (int s = 0; s < 2; s++) {
        prob P;
        cfg c = {ER_FMT_BF16, ER_RND_NEAREST_EVEN, 0u, 1, 0};
        memset(&P, 0, sizeof P);
        P.fa = P.fb = s ? ER_FMT_F4E2M1FN : ER_FMT_F8E4M3FN;
        P.fs = s ? ER_FMT_F8E4M3FN : ER_FMT_F8E8M0FNU;
        P.fc = ER_FMT_F32;
        P.block = s ? 16 : 32;
        P.m = 4;
        P.n = 5;
        P.k = 160;
        prob_make(&P, &rng, GEN_UNIFORM, 2);
        check3("random_scaled/mx", &P, &c, NULL);
        prob_free(&P);
        probs++;
    }
    printf("random_scaled: %ld problems, %.2f s\n", probs, now_() - t0);
}
END_TEST

/* mmai: every pair of i8/u8, with and without C; large values and C near the i32 limits so that some
 * sums wrap; the wrapped counts must agree too. */
START_TEST(test_mmai)
{
    static const int ints[2] = {ER_FMT_I8, ER_FMT_U8};
    uint64_t rng = er_test_seed("opencl_mma/mmai");
    int64_t wrapped = 0;
    for (int ia = 0; ia < 2; ia++)
        for (int ib = 0; ib < 2; ib++)
            for (int wc = 0; wc < 2; wc++) {
                prob P;
                cfg c;
                er_mma_stats st;
                memset(&P, 0, sizeof P);
                memset(&c, 0, sizeof c);
                P.fa = ints[ia];
                P.fb = ints[ib];
                P.fc = wc ? ER_FMT_I32 : -1;
                P.fs = -1;
                P.m = 1 + (int64_t)below(&rng, 7);
                P.n = 1 + (int64_t)below(&rng, 7);
                P.k = wc ? 1 + (int64_t)below(&rng, 60) : (int64_t)below(&rng, 200);
                P.batch = below(&rng, 2) ? 2 : 0;
                P.b2d = P.batch && below(&rng, 2);
                prob_make(&P, &rng, GEN_UNIFORM, 0);
                if (wc) {
                    /* C close to INT32_MAX or INT32_MIN: the sums cross them one way or the other */
                    for (size_t i = 0; i + 4 <= P.C.bytes; i += 4) {
                        uint32_t v = below(&rng, 2) ? 0x7FFFF000u + (uint32_t)below(&rng, 0x1000)
                                                    : 0x80000000u + (uint32_t)below(&rng, 0x1000);
                        put_(P.C.mem + i, 4, v);
                    }
                }
                check3("mmai", &P, &c, &st);
                wrapped += st.wrapped;
                prob_free(&P);
            }
    ck_assert_msg(wrapped > 0, "mmai: no element wrapped: the test does not test the count");
    printf("mmai: %lld wrapped elements, counted alike\n", (long long)wrapped);
}
END_TEST

/* Batches with each operand broadcast, transposed and padded views, d transposed, enclosures. */
START_TEST(test_layout)
{
    uint64_t rng = er_test_seed("opencl_mma/layout");
    static const int fmts[][2] = {{ER_FMT_BF16, ER_FMT_BF16}, {ER_FMT_F16, ER_FMT_F8E4M3FN}, {ER_FMT_F32, ER_FMT_F32},
                                  {ER_FMT_F64, ER_FMT_TF32},   {ER_FMT_F8E5M2, ER_FMT_F4E2M1FN}};
    for (int v = 0; v < 10; v++) {
        prob P;
        cfg c;
        memset(&P, 0, sizeof P);
        memset(&c, 0, sizeof c);
        P.fa = fmts[v % 5][0];
        P.fb = fmts[v % 5][1];
        P.fc = v % 2 ? ER_FMT_F32 : -1;
        P.fs = -1;
        P.batch = v % 4 == 3 ? 0 : 1 + (int64_t)below(&rng, 3);
        P.a2d = P.batch && v % 3 == 1;
        P.b2d = P.batch && v % 3 == 2;
        P.c2d = P.batch && v % 2;
        P.at = (v / 2) % 2;
        P.bt = v % 3 == 0;
        P.pad = v % 4;
        P.m = 1 + (int64_t)below(&rng, 7);
        P.n = 1 + (int64_t)below(&rng, 7);
        P.k = 1 + (int64_t)below(&rng, 50);
        prob_make(&P, &rng, GEN_BAND, 2);
        c.dfmt = out_fmts[v % 6];
        c.dir = v % ER_RND_COUNT;
        c.opts = opt_sets[v % 6];
        c.encl = v % 2 == 0;
        c.dtrans = v % 3 == 1;
        check3("layout", &P, &c, NULL);
        prob_free(&P);
    }
    /* a batched block-scaled problem with one side's operands and scales broadcast */
    {
        prob P;
        cfg c = {ER_FMT_F32, ER_RND_ZERO, ER_OPT_SATURATE, 1, 0};
        memset(&P, 0, sizeof P);
        P.fa = ER_FMT_F8E4M3FN;
        P.fb = ER_FMT_F6E2M3FN;
        P.fs = ER_FMT_F8E8M0FNU;
        P.fc = ER_FMT_BF16;
        P.block = 8;
        P.batch = 3;
        P.b2d = 1;
        P.m = 3;
        P.n = 4;
        P.k = 37;
        prob_make(&P, &rng, GEN_UNIFORM, 3);
        check3("layout/scaled batch", &P, &c, NULL);
        prob_free(&P);
    }
}
END_TEST

/* Special values: zero signs of products and sums in every direction, empty sums, 0 x inf, inf - inf,
 * NaN operands, overflow with and without saturation; a few values are also checked against what
 * IEEE 754 says, not only against the CPU. */
static uint64_t f32_of(const tens *d, int64_t i) { return get_(d, ER_FMT_F32, (long)i); }

START_TEST(test_specials)
{
    uint64_t rng = er_test_seed("opencl_mma/specials");
    /* dense specials in every float format, all directions, with C */
    for (int f = 0; f < NFLOAT; f++) {
        prob P;
        cfg c;
        memset(&P, 0, sizeof P);
        memset(&c, 0, sizeof c);
        P.fa = f;
        P.fb = (f + 5) % NFLOAT;
        P.fc = (f + 2) % NFLOAT;
        P.fs = -1;
        P.m = 4;
        P.n = 4;
        P.k = 1 + (int64_t)below(&rng, 3);
        prob_make(&P, &rng, GEN_FEWBITS, 60);
        c.dfmt = out_fmts[f % 7] >= 0 ? out_fmts[f % 7] : f;
        c.dir = f % ER_RND_COUNT;
        c.opts = opt_sets[f % 6];
        c.encl = 1;
        check3("specials", &P, &c, NULL);
        prob_free(&P);
    }
    /* handmade f32 elements: a is 1 x 2, b is 2 x 1 (one element each) */
    {
        static const struct {
            uint32_t a0, a1, b0, b1;
            int dir;
            uint32_t want; /* f32 pattern IEEE 754 gives */
        } cases[] = {
            {0x80000000u, 0x80000000u, 0x00000000u, 0x00000000u, ER_RND_NEAREST_EVEN, 0x80000000u}, /* -0 + -0 */
            {0x80000000u, 0x00000000u, 0x00000000u, 0x00000000u, ER_RND_NEAREST_EVEN, 0x00000000u}, /* -0 + +0 */
            {0x80000000u, 0x00000000u, 0x00000000u, 0x00000000u, ER_RND_NEGATIVE_INF, 0x80000000u}, /* -0 + +0, rd */
            {0x3f800000u, 0xbf800000u, 0x3f800000u, 0x3f800000u, ER_RND_NEAREST_EVEN, 0x00000000u}, /* 1 - 1 */
            {0x3f800000u, 0xbf800000u, 0x3f800000u, 0x3f800000u, ER_RND_NEGATIVE_INF, 0x80000000u}, /* 1 - 1, rd */
            {0x7f800000u, 0x3f800000u, 0x00000000u, 0x3f800000u, ER_RND_NEAREST_EVEN, 0x7fc00000u}, /* inf x 0 */
            {0x7f800000u, 0xff800000u, 0x3f800000u, 0x3f800000u, ER_RND_NEAREST_EVEN, 0x7fc00000u}, /* inf - inf */
            {0x7f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u, ER_RND_ZERO, 0x7f800000u},         /* inf + 1 */
            {0x7f7fffffu, 0x7f7fffffu, 0x3f800000u, 0x3f800000u, ER_RND_NEAREST_EVEN, 0x7f800000u}, /* overflow */
            {0x7f7fffffu, 0x7f7fffffu, 0x3f800000u, 0x3f800000u, ER_RND_ZERO, 0x7f7fffffu},         /* overflow, rz */
            {0xffc00001u, 0x3f800000u, 0x3f800000u, 0x3f800000u, ER_RND_NEAREST_EVEN, 0x7fc00000u}, /* -NaN */
            {0x00000001u, 0x00000001u, 0x3f000000u, 0x3e800000u, ER_RND_NEAREST_EVEN, 0x00000001u}, /* 3/4 ulp */
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            uint32_t a[2] = {cases[i].a0, cases[i].a1}, b[2] = {cases[i].b0, cases[i].b1}, d = 0xA5A5A5A5u;
            er_tensor ta = er_tensor_2d(ER_FMT_F32, 1, 2, a), tb = er_tensor_2d(ER_FMT_F32, 2, 1, b);
            er_tensor td = er_tensor_2d(ER_FMT_F32, 1, 1, &d);
            er_mma_args x;
            char msg[ER_MSG];
            int st;
            er_mma_args_init(&x);
            x.a = &ta;
            x.b = &tb;
            x.d = &td;
            x.rounding = cases[i].dir;
            x.backend = ER_BACKEND_OPENCL;
            x.msg = msg;
            x.msg_size = sizeof msg;
            st = er_mma(&x);
            ck_assert_msg(st == ER_OK, "case %lu: %s: %s", (unsigned long)i, er_status_string(st), msg);
            ck_assert_msg(d == cases[i].want, "case %lu: OpenCL gives 0x%08x, IEEE 754 0x%08x", (unsigned long)i,
                          (unsigned)d, (unsigned)cases[i].want);
            g_calls++;
        }
    }
    /* k = 0: the empty sum is +0 in every direction; with C = -0 it is -0 */
    {
        prob P;
        cfg c;
        outs o;
        memset(&P, 0, sizeof P);
        memset(&c, 0, sizeof c);
        P.fa = ER_FMT_BF16;
        P.fb = ER_FMT_F16;
        P.fc = -1;
        P.fs = -1;
        P.m = 2;
        P.n = 3;
        P.k = 0;
        prob_make(&P, &rng, GEN_UNIFORM, 0);
        c.dfmt = ER_FMT_F32;
        c.dir = ER_RND_NEGATIVE_INF;
        c.encl = 1;
        check3("specials/empty", &P, &c, NULL);
        run_one(&P, &c, ER_BACKEND_OPENCL, ER_STRATEGY_AUTO, &o);
        ck_assert_int_eq(o.st, ER_OK);
        for (int64_t i = 0; i < P.m * P.n; i++) ck_assert_uint_eq(f32_of(&o.d, i), 0u);
        outs_free(&o);
        P.fc = ER_FMT_F16;
        tens_make(&P.C, ER_FMT_F16, 0, P.m, P.n, 0, 0, &rng, GEN_UNIFORM, 0);
        for (size_t i = 0; i < P.C.bytes; i += 2) put_(P.C.mem + i, 2, 0x8000u);
        run_one(&P, &c, ER_BACKEND_OPENCL, ER_STRATEGY_AUTO, &o);
        ck_assert_int_eq(o.st, ER_OK);
        for (int64_t i = 0; i < P.m * P.n; i++) ck_assert_uint_eq(f32_of(&o.d, i), 0x80000000u);
        outs_free(&o);
        prob_free(&P);
    }
}
END_TEST

/* Tiles: EXACTREF_OPENCL_MAX_CHUNK cuts the output into pieces of rows and columns (and of several
 * batches when a whole batch fits); every piece lands in its place. */
START_TEST(test_tiles)
{
    static const char *caps[5] = {"1", "5", "13", "70", "160"};
    uint64_t rng = er_test_seed("opencl_mma/tiles");
    prob P;
    memset(&P, 0, sizeof P);
    P.fa = ER_FMT_BF16;
    P.fb = ER_FMT_F8E5M2;
    P.fc = ER_FMT_F16;
    P.fs = -1;
    P.batch = 5;
    P.b2d = 1;
    P.at = 1;
    P.m = 5;
    P.n = 7;
    P.k = 23;
    prob_make(&P, &rng, GEN_BAND, 1);
    for (int i = 0; i < 5; i++) {
        cfg c = {ER_FMT_F32, i % ER_RND_COUNT, 0u, i % 2, i % 2};
        char ctx[64];
        snprintf(ctx, sizeof ctx, "tiles (EXACTREF_OPENCL_MAX_CHUNK=%s)", caps[i]);
        setenv("EXACTREF_OPENCL_MAX_CHUNK", caps[i], 1);
        check3(ctx, &P, &c, NULL);
    }
    unsetenv("EXACTREF_OPENCL_MAX_CHUNK");
    prob_free(&P);
    /* mmai in tiles too (the wrap is done per tile on the host) */
    memset(&P, 0, sizeof P);
    P.fa = ER_FMT_I8;
    P.fb = ER_FMT_U8;
    P.fc = ER_FMT_I32;
    P.fs = -1;
    P.m = 6;
    P.n = 5;
    P.k = 11;
    prob_make(&P, &rng, GEN_UNIFORM, 0);
    {
        cfg c = {ER_FMT_I32, 0, 0u, 0, 0};
        setenv("EXACTREF_OPENCL_MAX_CHUNK", "4", 1);
        check3("tiles/mmai", &P, &c, NULL);
        unsetenv("EXACTREF_OPENCL_MAX_CHUNK");
    }
    prob_free(&P);
}
END_TEST

/* A larger problem (bf16, 32 x 32 x 200, C f32, d bf16), timed. */
START_TEST(test_larger)
{
    uint64_t rng = er_test_seed("opencl_mma/larger");
    prob P;
    cfg c = {ER_FMT_BF16, ER_RND_NEAREST_EVEN, 0u, 0, 0};
    outs o;
    double t;
    memset(&P, 0, sizeof P);
    P.fa = P.fb = ER_FMT_BF16;
    P.fc = ER_FMT_F32;
    P.fs = -1;
    P.m = 32;
    P.n = 32;
    P.k = 200;
    prob_make(&P, &rng, GEN_BAND, 0);
    check3("larger", &P, &c, NULL);
    t = now_();
    run_one(&P, &c, ER_BACKEND_OPENCL, ER_STRATEGY_AUTO, &o);
    printf("larger: bf16 32 x 32 x 200 on OpenCL in %.3f s (program build included)\n", now_() - t);
    ck_assert_int_eq(o.st, ER_OK);
    outs_free(&o);
    prob_free(&P);
}
END_TEST

/* Errors come back with a sentence; nothing is computed for an empty product; stats are filled. */
START_TEST(test_errors)
{
    uint16_t a[4] = {0x3f80, 0x3f80, 0x3f80, 0x3f80}, b[4] = {0x3f80, 0x3f80, 0x3f80, 0x3f80};
    float d[4] = {-1, -1, -1, -1};
    er_tensor ta = er_tensor_2d(ER_FMT_BF16, 2, 2, a), tb = er_tensor_2d(ER_FMT_BF16, 2, 2, b);
    er_tensor td = er_tensor_2d(ER_FMT_F32, 2, 2, d);
    er_mma_args x;
    er_mma_stats st;
    char msg[ER_MSG];
    int s;
    er_mma_args_init(&x);
    x.a = &ta;
    x.b = &tb;
    x.d = &td;
    x.backend = ER_BACKEND_OPENCL;
    x.msg = msg;
    x.msg_size = sizeof msg;
    x.stats = &st;

    x.device = 100000;
    s = er_mma(&x);
    ck_assert_msg(s == ER_ENODEVICE && strstr(msg, "no device 100000"), "device 100000: %s (%s)",
                  er_status_string(s), msg);
    x.device = -2;
    s = er_mma(&x);
    ck_assert_msg(s == ER_EINVAL && msg[0], "device -2: %s (%s)", er_status_string(s), msg);
    x.device = -1;
    setenv("EXACTREF_OPENCL_DEVICE", "first", 1);
    s = er_mma(&x);
    ck_assert_msg(s == ER_EINVAL && strstr(msg, "EXACTREF_OPENCL_DEVICE"), "EXACTREF_OPENCL_DEVICE=first: %s (%s)",
                  er_status_string(s), msg);
    unsetenv("EXACTREF_OPENCL_DEVICE");
    /* no message buffer: still the status */
    x.msg = NULL;
    x.msg_size = 0;
    x.device = 100000;
    ck_assert_int_eq(er_mma(&x), ER_ENODEVICE);
    x.msg = msg;
    x.msg_size = sizeof msg;
    x.device = -1;

    /* it works, and the stats say what ran */
    memset(&st, 0xff, sizeof st);
    s = er_mma(&x);
    ck_assert_msg(s == ER_OK, "%s: %s", er_status_string(s), msg);
    ck_assert_str_eq(msg, "");
    for (int i = 0; i < 4; i++) ck_assert(d[i] == 2.0f);
    ck_assert_int_eq(st.elements, 4);
    ck_assert_int_eq(st.exact_path, 4);
    ck_assert_int_eq(st.fast_decided, 0);
    ck_assert_int_eq(st.exact_f64, 0);
    ck_assert_int_eq(st.wrapped, 0);
    ck_assert_int_eq(st.threads, 0);

    /* an empty product: nothing to do, no device needed */
    ta.shape[0] = 0;
    td.shape[0] = 0;
    x.device = 100000;
    s = er_mma(&x);
    ck_assert_msg(s == ER_OK, "empty: %s (%s)", er_status_string(s), msg);
    ck_assert_int_eq(st.elements, 0);
    /* a bad argument is refused by er_mma's validation, before the device */
    ta.shape[0] = 2;
    td.shape[0] = 2;
    x.rounding = ER_RND_COUNT;
    ck_assert_int_eq(er_mma(&x), ER_EINVAL);
}
END_TEST

static Suite *suite_(void)
{
    Suite *s = suite_create("opencl_mma");
    TCase *tc = tcase_create("engine");
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_specials);
    tcase_add_test(tc, test_random_pairs);
    tcase_add_test(tc, test_specialised_pairs);
    tcase_add_test(tc, test_random_scaled);
    tcase_add_test(tc, test_mmai);
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_tiles);
    tcase_add_test(tc, test_larger);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}

/* 0: a device works; 77: no platform or no device (skip); 1: EXACTREF_REQUIRE_OPENCL=1 and none. */
static int probe_(void)
{
    const char *req = getenv("EXACTREF_REQUIRE_OPENCL");
    int required = req && strcmp(req, "1") == 0;
    uint16_t a = 0x3f80, b = 0x3f80;
    float d = 0;
    er_tensor ta = er_tensor_2d(ER_FMT_BF16, 1, 1, &a), tb = er_tensor_2d(ER_FMT_BF16, 1, 1, &b);
    er_tensor td = er_tensor_2d(ER_FMT_F32, 1, 1, &d);
    er_mma_args x;
    char msg[ER_MSG];
    double t = now_();
    er_status st = er_opencl_describe(msg, sizeof msg);
    if (st == ER_OK) {
        printf("%s", msg);
        er_mma_args_init(&x);
        x.a = &ta;
        x.b = &tb;
        x.d = &td;
        x.backend = ER_BACKEND_OPENCL;
        x.msg = msg;
        x.msg_size = sizeof msg;
        st = (er_status)er_mma(&x);
        printf("probe: first OpenCL engine call (program build included) in %.3f s\n", now_() - t);
    }
    msg[strcspn(msg, "\n")] = '\0';
    if (st != ER_ENODEVICE) return 0; /* working, or failing in a way the tests will report */
    if (required) {
        printf("FAIL: no OpenCL platform or device, and EXACTREF_REQUIRE_OPENCL=1 (%s)\n", msg);
        return 1;
    }
    printf("SKIP: no OpenCL platform or device (%s); set EXACTREF_REQUIRE_OPENCL=1 to make this a failure\n", msg);
    return 77;
}

int main(void)
{
    SRunner *sr;
    int failed, probe = probe_();
    double t = now_();
    if (probe) return probe;
    sr = srunner_create(suite_());
    /* Never fork: an OpenCL runtime (its threads, its driver state) does not survive fork(). */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    printf("%ld OpenCL engine calls in %.2f s of %.2f s in all\n", g_calls, g_dev_time, now_() - t);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
