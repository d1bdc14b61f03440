/* test_backend_mma.c: the exact engine (er_mma) on every backend present gives the CPU engine's bits
 * (D, the enclosures lo/hi/odd and mmai's count of wrapped elements); on the CPU itself, the
 * certified fast path (strategy AUTO) gives the long accumulator's bits (strategy EXACT) and the
 * special cases give IEEE 754's values.  The suite of test_backends (tests/backends/test_backends.c),
 * run once per backend (er_tb).
 *
 * Every problem is run three times: on the CPU with strategy EXACT (the long accumulator for every
 * element), on the CPU with strategy AUTO, and on the backend under test; the output tensors (filled
 * with the same junk beforehand) must be byte-identical.  The random problems are small (m, n <= 8,
 * k <= 200: a device compiles and runs a long accumulator per element) but cover every input float
 * format, every output format family, every direction, saturation and flush-to-zero, C or not, block
 * scaling with both scale formats, mmai with wrapping, batches with broadcast operands, transposed and
 * padded views, special values, and the tiling of large problems (EXACTREF_OPENCL_MAX_CHUNK,
 * EXACTREF_CUDA_MAX_CHUNK).  On CUDA the exact binary64 path (stats.exact_f64) is tested too
 * (test_exact64).  The random tests print their seed (EXACTREF_SEED).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, clock_gettime */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_tb.h"
#include "er_test.h"
#include "exactref/exactref.h"

static long long g_fx; /* elements the backend computed by the exact binary64 path */
#define ER_TEST_BACKEND (er_tb->backend)
#define ER_TEST_BACKEND_NAME (er_tb->label)
#define ER_TEST_RUN(x) er_mma(x)
#include "er_test_mma.h"

/* EXACTREF_<X>_MAX_CHUNK of the backend under test set to v (NULL: unset); the CPU has no tiles. */
static void chunk_(const char *v)
{
    if (!er_tb->chunk_env) return;
    if (v) setenv(er_tb->chunk_env, v, 1);
    else unsetenv(er_tb->chunk_env);
}

/* The backend's counts.  CUDA: every element by the long accumulator or by the exact binary64 path
 * (strategy AUTO, D only).  OpenCL: every element by the long accumulator.  mmai sums in 64-bit
 * integers on both.  The CPU (threads, the fast path's decisions): check3's rules only. */
static void backend_stats(const char *ctx, const er_mma_stats *s, int mmai, const cfg *c, const char *d)
{
    if (er_tb->backend == ER_BACKEND_CPU) return;
    if (!er_tb->exact64) {
        ck_assert_msg(s->exact_path == (mmai ? 0 : s->elements) && s->threads == 0 && s->fast_decided == 0 &&
                          s->exact_f64 == 0,
                      "%s: %s stats: exact_path %lld of %lld, threads %d [%s]", ctx, er_tb->label,
                      (long long)s->exact_path, (long long)s->elements, s->threads, d);
        return;
    }
    ck_assert_msg(s->exact_path + s->exact_f64 == (mmai ? 0 : s->elements) && s->threads == 0 &&
                      s->fast_decided == 0 && s->exact_f64 >= 0 && (s->exact_f64 == 0 || (!mmai && !c->encl)),
                  "%s: %s stats: exact_path %lld, exact_f64 %lld of %lld, threads %d [%s]", ctx, er_tb->label,
                  (long long)s->exact_path, (long long)s->exact_f64, (long long)s->elements, s->threads, d);
    g_fx += s->exact_f64;
}

/*
 * Every float format as a, with a random float b, and every float format as b, with a random a; C in a
 * random float format or absent.  Each problem is rounded three ways; over the test every output
 * family meets every direction (configuration t: family t % 7, direction (t / 7) % 6), and one
 * configuration in three asks for the enclosures too.
 */
START_TEST(test_random_pairs)
{
    uint64_t rng = er_tb_seed("mma", "random_pairs");
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
    uint64_t rng = er_tb_seed("mma", "specialised_pairs");
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
    uint64_t rng = er_tb_seed("mma", "random_scaled");
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
    uint64_t rng = er_tb_seed("mma", "mmai");
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
    uint64_t rng = er_tb_seed("mma", "layout");
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
    uint64_t rng = er_tb_seed("mma", "specials");
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
            x.backend = er_tb->backend;
            x.msg = msg;
            x.msg_size = sizeof msg;
            st = er_mma(&x);
            ck_assert_msg(st == ER_OK, "case %lu: %s: %s", (unsigned long)i, er_status_string(st), msg);
            ck_assert_msg(d == cases[i].want, "case %lu: %s gives 0x%08x, IEEE 754 0x%08x", (unsigned long)i, er_tb->label,
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
        run_one(&P, &c, er_tb->backend, ER_STRATEGY_AUTO, &o);
        ck_assert_int_eq(o.st, ER_OK);
        for (int64_t i = 0; i < P.m * P.n; i++) ck_assert_uint_eq(f32_of(&o.d, i), 0u);
        outs_free(&o);
        P.fc = ER_FMT_F16;
        tens_make(&P.C, ER_FMT_F16, 0, P.m, P.n, 0, 0, &rng, GEN_UNIFORM, 0);
        for (size_t i = 0; i < P.C.bytes; i += 2) put_(P.C.mem + i, 2, 0x8000u);
        run_one(&P, &c, er_tb->backend, ER_STRATEGY_AUTO, &o);
        ck_assert_int_eq(o.st, ER_OK);
        for (int64_t i = 0; i < P.m * P.n; i++) ck_assert_uint_eq(f32_of(&o.d, i), 0x80000000u);
        outs_free(&o);
        prob_free(&P);
    }
}
END_TEST

/*
 * The exact binary64 path: operands whose values span few bits (few-bit values near 1, integers, the
 * f8 formats over their whole range, with C on the same grid or not, zero sums, NaN and infinite
 * operands, batches, tiles), where each tile's sums are exact in binary64 and rounded once; and wide
 * ones, where the tile is left to the long accumulator.  The bits are the CPU engine's either way; the
 * path must have computed elements (stats.exact_f64).
 */
START_TEST(test_exact64)
{
    static const int fm[][3] = {{ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, -1},  {ER_FMT_F8E5M2, ER_FMT_F8E4M3FN, -1},
                                {ER_FMT_BF16, ER_FMT_BF16, ER_FMT_BF16}, {ER_FMT_F16, ER_FMT_F16, ER_FMT_F32},
                                {ER_FMT_F32, ER_FMT_BF16, -1},           {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, ER_FMT_F32},
                                {ER_FMT_F64, ER_FMT_F64, ER_FMT_F64},    {ER_FMT_F4E2M1FN, ER_FMT_F6E2M3FN, -1}};
    static const char *caps[3] = {"", "7", "40"};
    uint64_t rng = er_tb_seed("mma", "exact64");
    long long before = g_fx;
    for (int v = 0; v < 48; v++) {
        prob P;
        cfg c;
        int f = v % 8, mode = v % 3 == 0 ? GEN_UNIFORM : GEN_FEWBITS;
        memset(&P, 0, sizeof P);
        memset(&c, 0, sizeof c);
        P.fa = fm[f][0];
        P.fb = fm[f][1];
        P.fc = fm[f][2];
        P.fs = -1;
        if (v % 8 == 7) { /* block-scaled, f8E4M3FN scales: a narrow window too */
            P.fs = ER_FMT_F8E4M3FN;
            P.block = 16;
        }
        P.batch = v % 5 == 1 ? 2 : 0;
        P.b2d = P.batch && v % 2;
        P.at = v % 4 == 2;
        P.m = 1 + (int64_t)below(&rng, 9);
        P.n = 1 + (int64_t)below(&rng, 9);
        P.k = v % 6 == 5 ? 300 + (int64_t)below(&rng, 200) : 1 + (int64_t)below(&rng, 60);
        /* the f8 formats are narrow over their whole range: uniform patterns (NaN included) */
        if (P.fa == ER_FMT_F8E4M3FN || P.fa == ER_FMT_F8E5M2) mode = v % 2 ? GEN_UNIFORM : GEN_FEWBITS;
        prob_make(&P, &rng, mode, v % 4 == 3 ? 6 : 0);
        c.dfmt = out_fmts[v % 6];
        c.dir = v % ER_RND_COUNT;
        c.opts = opt_sets[v % 6];
        c.encl = 0;
        c.dtrans = v % 5 == 3;
        if (caps[v % 3][0]) chunk_(caps[v % 3]);
        check3("exact64", &P, &c, NULL);
        chunk_(NULL);
        prob_free(&P);
    }
    /* exact cancellation: rows of x and -x, every direction (zero sums go to the accumulator) */
    for (int dir = 0; dir < ER_RND_COUNT; dir++) {
        uint16_t a[8], b[8];
        float dd[4];
        er_tensor ta = er_tensor_2d(ER_FMT_BF16, 2, 4, a), tb = er_tensor_2d(ER_FMT_BF16, 4, 2, b);
        er_tensor td = er_tensor_2d(ER_FMT_F32, 2, 2, dd);
        er_mma_args x;
        er_mma_stats st;
        char msg[ER_MSG];
        for (int i = 0; i < 8; i++) {
            a[i] = (uint16_t)(i % 2 ? 0xbfc0 : 0x3fc0); /* 1.5, -1.5 */
            b[i] = 0x4000;                             /* 2 */
        }
        b[1] = 0xc000; /* column 1: -2 at p = 0: a nonzero sum there */
        er_mma_args_init(&x);
        x.a = &ta;
        x.b = &tb;
        x.d = &td;
        x.rounding = dir;
        x.backend = er_tb->backend;
        x.stats = &st;
        x.msg = msg;
        x.msg_size = sizeof msg;
        ck_assert_msg(er_mma(&x) == ER_OK, "%s", msg);
        ck_assert(dd[0] == 0.0f && dd[2] == 0.0f);
        ck_assert_msg(!!signbit(dd[0]) == (dir == ER_RND_NEGATIVE_INF), "zero sum in %s: %g", er_rounding_name(dir),
                      (double)dd[0]);
        ck_assert(dd[1] == -6.0f && dd[3] == -6.0f);
        ck_assert_int_eq(st.exact_f64, 2);
        ck_assert_int_eq(st.exact_path, 2);
        g_calls++;
    }
    /* wider than one 64 x 64 block of the tiled kernel, k not a multiple of its stage, one row with a
     * NaN (left to the accumulator), whole and in tiles */
    {
        prob P;
        cfg c = {ER_FMT_F32, ER_RND_NEAREST_EVEN, 0u, 0, 0};
        er_mma_stats st;
        memset(&P, 0, sizeof P);
        P.fa = P.fb = ER_FMT_F8E4M3FN;
        P.fc = -1;
        P.fs = -1;
        P.m = 70;
        P.n = 130;
        P.k = 300;
        prob_make(&P, &rng, GEN_BAND, 0);
        P.A.mem[5 * 300 + 17] = 0x7f; /* a NaN in row 5 */
        check3("exact64/large", &P, &c, &st);
        /* every element but row 5's (and an exact zero sum, if any) */
        ck_assert_msg(st.exact_f64 <= P.m * P.n - P.n && st.exact_f64 > (P.m * P.n - P.n) * 9 / 10,
                      "exact64/large: %lld by the exact binary64 path",
                      (long long)st.exact_f64);
        chunk_("3000");
        c.dir = ER_RND_ZERO;
        check3("exact64/large tiles", &P, &c, &st);
        chunk_(NULL);
        ck_assert_msg(st.exact_f64 <= P.m * P.n - P.n && st.exact_f64 > (P.m * P.n - P.n) * 9 / 10,
                      "exact64/large tiles: %lld by the exact binary64 path",
                      (long long)st.exact_f64);
        prob_free(&P);
    }
    /* block-scaled with f8E4M3FN scales (a narrow window), batched, each side's elements and scales
     * broadcast differently: A 3-D with a 2-D a_scale, B 2-D with a 3-D b_scale */
    for (int v = 0; v < 2; v++) {
        prob P;
        cfg c = {ER_FMT_BF16, ER_RND_POSITIVE_INF, 0u, 0, 0};
        er_mma_stats st;
        int64_t nb;
        memset(&P, 0, sizeof P);
        P.fa = ER_FMT_F4E2M1FN;
        P.fb = v ? ER_FMT_F6E2M3FN : ER_FMT_F4E2M1FN;
        P.fs = ER_FMT_F8E4M3FN;
        P.fc = v ? ER_FMT_F32 : -1;
        P.block = 16;
        P.batch = 3;
        P.b2d = 1;
        P.m = 4;
        P.n = 5;
        P.k = 40;
        prob_make(&P, &rng, GEN_UNIFORM, 0);
        nb = nblocks_(&P);
        tens_free(&P.SA);
        tens_free(&P.SB);
        tens_make(&P.SA, P.fs, 0, P.m, nb, 0, 0, &rng, GEN_UNIFORM, 0);
        tens_make(&P.SB, P.fs, P.batch, nb, P.n, 0, 0, &rng, GEN_UNIFORM, 0);
        for (size_t i = 0; i < P.SA.bytes; i++) P.SA.mem[i] = (unsigned char)gen_scale(P.fs, &rng);
        for (size_t i = 0; i < P.SB.bytes; i++) P.SB.mem[i] = (unsigned char)gen_scale(P.fs, &rng);
        check3("exact64/scales broadcast", &P, &c, &st);
        printf("exact64/scales broadcast %d: %lld of %lld elements by the exact binary64 path\n", v,
               (long long)st.exact_f64, (long long)st.elements);
        prob_free(&P);
    }
    printf("exact64: %lld elements by the exact binary64 path\n", g_fx - before);
    ck_assert_msg(g_fx > before, "the exact binary64 path never ran: the test does not test it");
}
END_TEST

/* Tiles: EXACTREF_<X>_MAX_CHUNK cuts the output into pieces of rows and columns (and of several
 * batches when a whole batch fits); every piece lands in its place. */
START_TEST(test_tiles)
{
    static const char *caps[5] = {"1", "5", "13", "70", "160"};
    uint64_t rng = er_tb_seed("mma", "tiles");
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
        snprintf(ctx, sizeof ctx, "tiles (%s=%s)", er_tb->chunk_env ? er_tb->chunk_env : "no tiles", caps[i]);
        chunk_(caps[i]);
        check3(ctx, &P, &c, NULL);
    }
    chunk_(NULL);
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
        chunk_("4");
        check3("tiles/mmai", &P, &c, NULL);
        chunk_(NULL);
    }
    prob_free(&P);
}
END_TEST

/* A larger problem (bf16, 32 x 32 x 200, C f32, d bf16), timed. */
START_TEST(test_larger)
{
    uint64_t rng = er_tb_seed("mma", "larger");
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
    run_one(&P, &c, er_tb->backend, ER_STRATEGY_AUTO, &o);
    printf("larger: bf16 32 x 32 x 200 on %s in %.3f s\n", er_tb->label, now_() - t);
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
    x.backend = er_tb->backend;
    x.msg = msg;
    x.msg_size = sizeof msg;
    x.stats = &st;

    if (er_tb->device) {
        /* device indices (the CPU and the host pass have none) */
        x.device = 100000;
        s = er_mma(&x);
        ck_assert_msg(s == ER_ENODEVICE && strstr(msg, er_tb->no_device), "device 100000: %s (%s)", er_status_string(s),
                      msg);
        x.device = -2;
        s = er_mma(&x);
        ck_assert_msg(s == ER_EINVAL && msg[0], "device -2: %s (%s)", er_status_string(s), msg);
        x.device = -1;
        setenv(er_tb->device_env, "first", 1);
        s = er_mma(&x);
        ck_assert_msg(s == ER_EINVAL && strstr(msg, er_tb->device_env), "%s=first: %s (%s)", er_tb->device_env,
                      er_status_string(s), msg);
        unsetenv(er_tb->device_env);
        /* no message buffer: still the status */
        x.msg = NULL;
        x.msg_size = 0;
        x.device = 100000;
        ck_assert_int_eq(er_mma(&x), ER_ENODEVICE);
        x.msg = msg;
        x.msg_size = sizeof msg;
        x.device = -1;
    }

    /* it works, and the stats say what ran */
    memset(&st, 0xff, sizeof st);
    s = er_mma(&x);
    ck_assert_msg(s == ER_OK, "%s: %s", er_status_string(s), msg);
    ck_assert_str_eq(msg, "");
    for (int i = 0; i < 4; i++) ck_assert(d[i] == 2.0f);
    ck_assert_int_eq(st.elements, 4);
    if (er_tb->backend != ER_BACKEND_CPU) {
        if (er_tb->exact64) {
            ck_assert_int_eq(st.exact_path, 0); /* ones: the exact binary64 path computes every element */
            ck_assert_int_eq(st.exact_f64, 4);
        } else {
            ck_assert_int_eq(st.exact_path, 4);
            ck_assert_int_eq(st.exact_f64, 0);
        }
        ck_assert_int_eq(st.fast_decided, 0);
    }
    /* strategy EXACT: the long accumulator for every element */
    x.strategy = ER_STRATEGY_EXACT;
    s = er_mma(&x);
    ck_assert_msg(s == ER_OK, "%s: %s", er_status_string(s), msg);
    for (int i = 0; i < 4; i++) ck_assert(d[i] == 2.0f);
    ck_assert_int_eq(st.exact_path, 4);
    ck_assert_int_eq(st.exact_f64, 0);
    x.strategy = ER_STRATEGY_AUTO;
    ck_assert_int_eq(st.wrapped, 0);
    if (er_tb->backend != ER_BACKEND_CPU) ck_assert_int_eq(st.threads, 0);

    /* an empty product: nothing to do, no device needed */
    ta.shape[0] = 0;
    td.shape[0] = 0;
    x.device = 100000;
    s = er_mma(&x);
    ck_assert_msg(s == ER_OK, "empty: %s (%s)", er_status_string(s), msg);
    ck_assert_int_eq(st.elements, 0);
    /* a bad argument is refused by the validation, before the device */
    ta.shape[0] = 2;
    td.shape[0] = 2;
    x.device = -1;
    x.rounding = ER_RND_COUNT;
    ck_assert_int_eq(er_mma(&x), ER_EINVAL);
    ck_assert_int_eq(er_mma(&x), ER_EINVAL);
}
END_TEST

Suite *er_tb_mma_suite(void)
{
    Suite *s = suite_create(er_tb->name);
    TCase *tc = tcase_create("mma");
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_specials);
    tcase_add_test(tc, test_random_pairs);
    tcase_add_test(tc, test_specialised_pairs);
    tcase_add_test(tc, test_random_scaled);
    tcase_add_test(tc, test_mmai);
    tcase_add_test(tc, test_layout);
    if (er_tb->exact64) tcase_add_test(tc, test_exact64);
    tcase_add_test(tc, test_tiles);
    tcase_add_test(tc, test_larger);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}

void er_tb_mma_summary(void)
{
    printf("%s: %ld engine calls in %.2f s; %lld elements by the exact binary64 path\n", er_tb->label, g_calls,
           g_dev_time, g_fx);
    g_calls = 0;
    g_dev_time = 0;
    g_fx = 0;
}
