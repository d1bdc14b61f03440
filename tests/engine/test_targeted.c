/*
 * test_targeted.c (engine_targeted): the hard cases of er_mma, each against the MPFR reference
 * (eng_ref.c) and, where the answer is a well-known fact, against a pattern written by hand too (which
 * also checks the reference itself).
 *
 *  - reference_selfcheck: the reference's rounding against the C library's own (binary64 -> binary32
 *    casts and binary64 additions under fesetround in the four IEEE directions, overflow and subnormals
 *    included), and hand-written facts (f16 ties, 464/465 in f8E4M3FN, 65520 in f16, f8E8M0FNU, fp4).
 *  - zero_signs: the sign of an exact zero in every direction: all -0 terms, all +0 terms, mixed, with C
 *    of either sign, k = 0 with and without C, x - x, a negative result that underflows.
 *  - cancellation: x_p y_p and -x_p y_p for random products, shuffled, plus one tiny term (sometimes at
 *    the other end of the exponent range, f64 x f64 products down to 2^-2148), and sums that are exactly
 *    zero; many format pairs; every output format, every direction.
 *  - nan_preimage: 2^200 - 2^200 + v into the formats whose NaN is reached from both signs (FNUZ,
 *    f8E8M0FNU): a wide fast-path enclosure must not be decided as NaN.
 *  - fast_path_adversarial: big + s - big + V where a binary64 sum loses s and s moves the exact value
 *    across a rounding boundary (ties and representable values of f16, bf16, fp8, fp4, f32).
 *  - subnormal_results: sums in each output format's subnormal range with three extra bits (ties and
 *    near-ties), two terms of either sign, with and without flush-to-zero.
 *  - ties: exact ties of every output format (random binades, binade of 1, top binade, subnormal range,
 *    just below a power of two), and ties moved by +-tiny, both signs, every direction and options.
 *  - overflow: max finite, max + ulp/2 (the threshold) and +-tiny, max + ulp, 2 max, both signs,
 *    with and without saturation; finite f64 sums beyond the binary64 range with the enclosures.
 *  - specials: NaN operands of every format (all NaN patterns: sign, payload), NaN in C, inf - inf,
 *    0 x inf, inf with finite terms, inf in C; every output format: the canonical NaN, the infinity rules.
 *  - k0_k1: k = 0 (D = C rounded once, for every pair of C and D formats) and k = 1 (one product rounded
 *    once, every pair of input formats), random patterns with specials.
 *  - enclosures: exact doubles, ties of binary64, values below the least subnormal, beyond the largest
 *    finite, zeros, NaN, inf: lo, hi, odd as patterns; enclosures without d.
 *  - ftz_in: with ER_OPT_FTZ_IN (whose meaning for operands the engine's contract does not state) AUTO
 *    and EXACT and all thread counts agree.
 * Every check runs strategies AUTO and EXACT (1 thread; the enclosure run of each problem 2 threads:
 * creating threads costs more than these small problems, and engine_layout covers the thread counts).
 */
#include <check.h>
#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eng_ref.h"

static const unsigned opts_all[3] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_OUT};

/* Run one problem (already filled) over outputs x directions x options x {AUTO, EXACT}, + enclosures. */
static long run_all(eprob *P, const int *outs, int nouts, const unsigned *optv, int nopt, const char *ctx)
{
    long bad = 0;
    eprob_pack(P);
    rex *ex = ref_exact_all(P);
    for (int o = 0; o < nouts; o++)
        for (int dir = 0; dir < ER_RND_COUNT; dir++)
            for (int q = 0; q < nopt; q++) {
                ecfg c1 = {outs[o], dir, optv[q], ER_STRATEGY_AUTO, 1, 0};
                ecfg c2 = {outs[o], dir, optv[q], ER_STRATEGY_EXACT, 1, 0};
                bad += eng_check(P, ex, &c1, ctx);
                bad += eng_check(P, ex, &c2, ctx);
            }
    ecfg ce = {outs[0], ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_AUTO, 2, 1}; /* 2 threads where m > 1 */
    bad += eng_check(P, ex, &ce, ctx);
    rex_free_all(ex, P->m * P->n);
    return bad;
}

/* A 1 x 1 problem: sum_p a[p] b[p] (+ c), values given as doubles (exact in their formats). */
static void build_d(eprob *P, int fa, int fb, int fc, const double *a, const double *b, int k, double c)
{
    memset(P, 0, sizeof *P);
    P->fa = fa;
    P->fb = fb;
    P->fc = fc;
    P->fsc = -1;
    P->m = 1;
    P->n = 1;
    P->k = k;
    eprob_alloc(P);
    for (int p = 0; p < k; p++) {
        P->A[p] = ref_encode_d(fa, a[p]);
        P->B[p] = ref_encode_d(fb, b[p]);
    }
    if (fc >= 0) P->C[0] = ref_encode_d(fc, c);
}

static long terms_d(const char *ctx, int fa, int fb, int fc, const double *a, const double *b, int k, double c,
                    const unsigned *optv, int nopt)
{
    eprob P;
    build_d(&P, fa, fb, fc, a, b, k, c);
    long bad = run_all(&P, float_ids, NFLOAT, optv, nopt, ctx);
    eprob_free(&P);
    return bad;
}

/* Is d a value of fmt? */
static int representable(int fmt, double d)
{
    const rfmt *T = rf(fmt);
    rex x;
    rex_init(&x);
    rex_set_d(&x, d);
    uint64_t p = ref_round(T, &x, ER_RND_NEAREST_EVEN, 0);
    rex_clear(&x);
    rval v = ref_decode(T, p);
    if (v.cls != RC_FIN) return d == 0 && v.cls == RC_ZERO;
    return ldexp(v.sign ? -(double)v.sig : (double)v.sig, v.exp) == d;
}

/* Sum of values v[0..k) 2^-sh, rounded into `out`, as products: in f32 x f32 when sh = 0 and every value is an f32 (the fast
 * path applies), else as f64 x f64 products v * 2^-sh (sh > 0 reaches values below 2^-1074). */
static long values(const char *ctx, const double *v, int k, int sh, const unsigned *optv, int nopt, int out)
{
    double a[8], b[8];
    int f32ok = sh == 0;
    for (int p = 0; p < k; p++) f32ok &= representable(ER_FMT_F32, v[p]);
    for (int p = 0; p < k; p++) {
        a[p] = v[p];
        b[p] = ldexp(1.0, -sh);
    }
    int f = f32ok ? ER_FMT_F32 : ER_FMT_F64;
    eprob P;
    build_d(&P, f, f, -1, a, b, k, 0.0);
    long bad = run_all(&P, &out, 1, optv, nopt, ctx);
    eprob_free(&P);
    return bad;
}

/* Check one engine result against a pattern written by hand (and the reference against it too). */
static long hand(const char *ctx, int fa, int fb, int fc, const double *a, const double *b, int k, double c,
                 int dfmt, int dir, unsigned opts, uint64_t want)
{
    eprob P;
    long bad = 0;
    build_d(&P, fa, fb, fc, a, b, k, c);
    eprob_pack(&P);
    rex *ex = ref_exact_all(&P);
    uint64_t r = ref_round(rf(dfmt), &ex[0], dir, opts);
    if (r != want) {
        fprintf(stderr, "REFERENCE [%s]: %s %s opts %u: the reference gives 0x%llx, the fact is 0x%llx\n", ctx,
                rf(dfmt)->name, er_rounding_name(dir), opts, (unsigned long long)r, (unsigned long long)want);
        bad++;
    }
    for (int s = 0; s < 2; s++) {
        ecfg c1 = {dfmt, dir, opts, s ? ER_STRATEGY_EXACT : ER_STRATEGY_AUTO, 1 + s, 0};
        eout o;
        eout_alloc(&o, &P);
        if (eng_run(&P, &c1, &o) != ER_OK || o.D[0] != want) {
            fprintf(stderr, "MISMATCH [%s]: %s %s opts %u %s: engine 0x%llx (status %d %s), expected 0x%llx\n", ctx,
                    rf(dfmt)->name, er_rounding_name(dir), opts, s ? "EXACT" : "AUTO", (unsigned long long)o.D[0],
                    o.status, o.msg, (unsigned long long)want);
            eprob_print(&P, 0, 0);
            bad++;
        }
        eout_free(&o);
    }
    rex_free_all(ex, 1);
    eprob_free(&P);
    return bad;
}

/* ------------------------------------------------------------------------------------------------ */

START_TEST(reference_selfcheck)
{
    static const int fe[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    static const int er[4] = {ER_RND_NEAREST_EVEN, ER_RND_ZERO, ER_RND_NEGATIVE_INF, ER_RND_POSITIVE_INF};
    uint64_t rng = er_test_seed("engine_targeted/reference_selfcheck");
    long bad = 0;
    rex x;
    ref_init();
    rex_init(&x);
    mpfr_t s;
    mpfr_init2(s, 2200);
    for (int it = 0; it < 20000; it++) {
        /* doubles around the f32 range and anywhere */
        uint64_t bx = er_test_rand(&rng), by = er_test_rand(&rng);
        if (it & 1) bx = (bx & 0x800FFFFFFFFFFFFFu) | ((uint64_t)(896 + rnd_below(&rng, 260)) << 52);
        double dx, dy;
        memcpy(&dx, &bx, 8);
        memcpy(&dy, &by, 8);
        if (!isfinite(dx) || !isfinite(dy)) continue;
        if (it % 3 == 0) dy = ldexp(dx, -(int)rnd_below(&rng, 60)) * (rnd_below(&rng, 2) ? 1 : -1);
        rex_set_d(&x, dx);
        for (int d = 0; d < 4; d++) {
            fesetround(fe[d]);
            volatile double vx = dx, vy = dy;
            volatile float f = (float)vx;
            volatile double sum = vx + vy;
            fesetround(FE_TONEAREST);
            float ff = f;
            uint32_t fb;
            memcpy(&fb, &ff, 4);
            if (ref_round(rf(ER_FMT_F32), &x, er[d], 0) != fb) {
                fprintf(stderr, "REFERENCE: f32 of %a %s: libc 0x%08x\n", dx, er_rounding_name(er[d]), fb);
                bad++;
            }
            /* the exact sum dx + dy, rounded into binary64 */
            rex y;
            rex_init(&y);
            mpfr_set_d(s, dx, MPFR_RNDN);
            mpfr_add_d(s, s, dy, MPFR_RNDN); /* exact at 2200 bits */
            if (mpfr_zero_p(s)) y.kind = RX_ZCANCEL;
            else {
                y.kind = RX_FIN;
                mpfr_set_prec(y.v, 2200);
                mpfr_set(y.v, s, MPFR_RNDN);
            }
            double sd = sum;
            uint64_t sb;
            memcpy(&sb, &sd, 8);
            if (ref_round(rf(ER_FMT_F64), &y, er[d], 0) != sb) {
                fprintf(stderr, "REFERENCE: f64 of %a + %a %s: libc %a\n", dx, dy, er_rounding_name(er[d]), sd);
                bad++;
            }
            rex_clear(&y);
        }
    }
    mpfr_clear(s);
    rex_clear(&x);
    ck_assert_msg(bad == 0, "the reference disagrees with the C library %ld times", bad);
}
END_TEST

/* Hand-written facts, checked against the reference and the engine: one product v * 1. */
START_TEST(facts)
{
    printf("%s/%s\n", "engine_targeted", "facts");
    long bad = 0;
    double one = 1.0;
    ref_init();
#define FACT(v, out, dir, opts, want)                                                                     \
    do {                                                                                                  \
        double v_ = (v);                                                                                  \
        bad += hand("facts " #v " -> " #out " " #dir, ER_FMT_F64, ER_FMT_F32, -1, &v_, &one, 1, 0, out,    \
                    ER_RND_##dir, opts, want);                                                            \
    } while (0)
    double t16 = 1 + 0x1p-11;
    FACT(t16, ER_FMT_F16, NEAREST_EVEN, 0, 0x3C00);
    FACT(t16, ER_FMT_F16, NEAREST_AWAY, 0, 0x3C01);
    FACT(t16, ER_FMT_F16, ZERO, 0, 0x3C00);
    FACT(t16, ER_FMT_F16, NEGATIVE_INF, 0, 0x3C00);
    FACT(t16, ER_FMT_F16, POSITIVE_INF, 0, 0x3C01);
    FACT(t16, ER_FMT_F16, ODD, 0, 0x3C01);
    FACT(-t16, ER_FMT_F16, NEGATIVE_INF, 0, 0xBC01);
    FACT(-t16, ER_FMT_F16, POSITIVE_INF, 0, 0xBC00);
    FACT(1 + 3 * 0x1p-11, ER_FMT_F16, NEAREST_EVEN, 0, 0x3C02); /* tie to even upward */
    FACT(464.0, ER_FMT_F8E4M3FN, NEAREST_EVEN, 0, 0x7E);
    FACT(465.0, ER_FMT_F8E4M3FN, NEAREST_EVEN, 0, 0x7F);
    FACT(-465.0, ER_FMT_F8E4M3FN, NEAREST_EVEN, 0, 0xFF);
    FACT(464.0, ER_FMT_F8E4M3FN, NEAREST_AWAY, 0, 0x7F);
    FACT(465.0, ER_FMT_F8E4M3FN, NEAREST_EVEN, ER_OPT_SATURATE, 0x7E);
    FACT(1e6, ER_FMT_F8E4M3FN, ZERO, 0, 0x7E);
    FACT(65520.0, ER_FMT_F16, NEAREST_EVEN, 0, 0x7C00);
    FACT(65520.0, ER_FMT_F16, ZERO, 0, 0x7BFF);
    FACT(-65520.0, ER_FMT_F16, POSITIVE_INF, 0, 0xFBFF);
    FACT(-65520.0, ER_FMT_F16, NEGATIVE_INF, 0, 0xFC00);
    FACT(3.0, ER_FMT_F8E8M0FNU, NEAREST_EVEN, 0, 0x81);
    FACT(3.0, ER_FMT_F8E8M0FNU, ZERO, 0, 0x80);
    FACT(0x1p-130, ER_FMT_F8E8M0FNU, NEAREST_EVEN, 0, 0x00);
    FACT(0x1p-130, ER_FMT_F8E8M0FNU, ZERO, 0, 0x00);
    FACT(-1.0, ER_FMT_F8E8M0FNU, NEAREST_EVEN, 0, 0xFF);
    FACT(0x1p200, ER_FMT_F8E8M0FNU, ZERO, 0, 0xFE);
    FACT(0x1p200, ER_FMT_F8E8M0FNU, NEAREST_EVEN, 0, 0xFF);
    FACT(7.0, ER_FMT_F4E2M1FN, NEAREST_EVEN, 0, 0x7);
    FACT(-100.0, ER_FMT_F4E2M1FN, NEAREST_EVEN, 0, 0xF);
    FACT(0.25, ER_FMT_F4E2M1FN, NEAREST_EVEN, 0, 0x0);
    FACT(0.25, ER_FMT_F4E2M1FN, NEAREST_AWAY, 0, 0x1);
    FACT(0.75, ER_FMT_F4E2M1FN, NEAREST_EVEN, 0, 0x2);
    FACT(-0.25, ER_FMT_F4E2M1FN, NEAREST_EVEN, 0, 0x8);
    FACT(5.0, ER_FMT_F4E2M1FN, NEAREST_EVEN, 0, 0x6);   /* 4 and 6: tie to even (4 = 1.0 x 2^2) */
    FACT(100.0, ER_FMT_F6E2M3FN, NEAREST_EVEN, 0, 0x1F);
    FACT(-100.0, ER_FMT_F6E3M2FN, NEAREST_EVEN, 0, 0x3F);
    FACT(-0x1p-30, ER_FMT_F8E4M3FNUZ, NEAREST_EVEN, 0, 0x00);
    FACT(-0x1p-30, ER_FMT_F8E4M3FNUZ, NEGATIVE_INF, 0, 0x81);
    FACT(1e9, ER_FMT_F8E4M3FNUZ, NEAREST_EVEN, 0, 0x80);
    FACT(-1e9, ER_FMT_F8E5M2FNUZ, ZERO, 0, 0xFF);
    FACT(1e9, ER_FMT_F8E5M2, NEAREST_EVEN, 0, 0x7C);
    FACT(0x1p-20, ER_FMT_F16, NEAREST_EVEN, 0, 0x0010);
    FACT(0x1p-20, ER_FMT_F16, NEAREST_EVEN, ER_OPT_FTZ_OUT, 0x0000);
    FACT(-0x1p-20, ER_FMT_F16, NEAREST_EVEN, ER_OPT_FTZ_OUT, 0x8000);
    FACT(0x1p-25, ER_FMT_F16, NEAREST_EVEN, 0, 0x0000);  /* half the least subnormal: tie to 0 */
    FACT(0x1p-25, ER_FMT_F16, NEAREST_AWAY, 0, 0x0001);
    FACT(0x1.8p-25, ER_FMT_F16, NEAREST_EVEN, 0, 0x0001);
    FACT(1.0 + 0x1p-30, ER_FMT_TF32, POSITIVE_INF, 0, 0x3F802000);
    FACT(1.0 + 0x1p-30, ER_FMT_BF16, ODD, 0, 0x3F81);
    FACT(0x1p-150, ER_FMT_F32, POSITIVE_INF, 0, 0x00000001);
    FACT(-0x1p-150, ER_FMT_F32, NEGATIVE_INF, 0, 0x80000001);
    FACT(-0x1p-150, ER_FMT_F32, POSITIVE_INF, 0, 0x80000000);
#undef FACT
    ck_assert_msg(bad == 0, "facts: %ld failures (see stderr)", bad);
}
END_TEST

START_TEST(zero_signs)
{
    printf("%s/%s\n", "engine_targeted", "zero_signs");
    long bad = 0;
    ref_init();
    static const int dirs[6] = {ER_RND_NEAREST_EVEN, ER_RND_NEAREST_AWAY, ER_RND_ZERO, ER_RND_NEGATIVE_INF,
                                ER_RND_POSITIVE_INF, ER_RND_ODD};
    static const int fmts[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F4E2M1FN};
    for (int fi = 0; fi < 4; fi++) {
        int f = fmts[fi];
        struct {
            const char *name;
            double a[3], b[3];
            int k;
            int fc;
            double c;
            int kind; /* 0: -0 always, 1: +0 always, 2: +0 / -0 toward negative_inf */
        } cases[] = {
            {"all products -0", {-0.0, 1.0, 0.0}, {1.0, -0.0, -1.0}, 3, -1, 0, 0},
            {"all products +0", {0.0, -0.0, 2.0}, {1.0, -1.0, 0.0}, 3, -1, 0, 1},
            {"products -0 and +0", {-0.0, 0.0}, {1.0, 1.0}, 2, -1, 0, 2},
            {"products -0, C -0", {-0.0, 0.0}, {1.0, -1.0}, 2, f, -0.0, 0},
            {"products -0, C +0", {-0.0, 0.0}, {1.0, -1.0}, 2, f, 0.0, 2},
            {"products +0, C -0", {0.0}, {1.0}, 1, f, -0.0, 2},
            {"k = 0, no C", {0}, {0}, 0, -1, 0, 1},
            {"k = 0, C -0", {0}, {0}, 0, f, -0.0, 0},
            {"k = 0, C +0", {0}, {0}, 0, f, 0.0, 1},
            {"x - x", {1.5, 1.5}, {2.0, -2.0}, 2, -1, 0, 2},
            {"x - x + (-0)", {1.5, 1.5, -0.0}, {2.0, -2.0, 1.0}, 3, -1, 0, 2},
            {"x - x, C -0", {1.5, -1.5}, {0.5, 0.5}, 2, f, -0.0, 2},
            {"x + C = -x", {1.5}, {-2.0}, 1, f, 3.0, 2},
        };
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
            for (int d = 0; d < 6; d++) {
                int neg = cases[ci].kind == 0 || (cases[ci].kind == 2 && dirs[d] == ER_RND_NEGATIVE_INF);
                char ctx[160];
                snprintf(ctx, sizeof ctx, "zero_signs %s: %s in %s", rf(f)->name, cases[ci].name,
                         er_rounding_name(dirs[d]));
                /* in f32 and f16 outputs the zero patterns are known */
                bad += hand(ctx, f, f, cases[ci].fc, cases[ci].a, cases[ci].b, cases[ci].k, cases[ci].c, ER_FMT_F32,
                            dirs[d], 0, neg ? 0x80000000u : 0u);
                bad += hand(ctx, f, f, cases[ci].fc, cases[ci].a, cases[ci].b, cases[ci].k, cases[ci].c, ER_FMT_F16,
                            dirs[d], ER_OPT_SATURATE, neg ? 0x8000u : 0u);
                bad += hand(ctx, f, f, cases[ci].fc, cases[ci].a, cases[ci].b, cases[ci].k, cases[ci].c,
                            ER_FMT_F8E4M3FNUZ, dirs[d], 0, 0u);
                bad += hand(ctx, f, f, cases[ci].fc, cases[ci].a, cases[ci].b, cases[ci].k, cases[ci].c,
                            ER_FMT_F8E8M0FNU, dirs[d], 0, 0xFFu);
            }
        /* and every output format through the reference */
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
            bad += terms_d("zero_signs", f, f, cases[ci].fc, cases[ci].a, cases[ci].b, cases[ci].k, cases[ci].c,
                           opts_all, 1);
    }
    /* a negative result that underflows: -0 in nearest, toward zero and toward +inf */
    {
        double a[3] = {1.0, 1.0, 0x1p-30}, b[3] = {1.0, -1.0, -1.0};
        bad += hand("underflow -tiny", ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, 0, 0x80);
        bad += hand("underflow -tiny", ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0, ER_FMT_F8E4M3FN, ER_RND_ZERO, 0, 0x80);
        bad += hand("underflow -tiny", ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0, ER_FMT_F8E4M3FN, ER_RND_POSITIVE_INF, 0, 0x80);
        bad += hand("underflow -tiny", ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0, ER_FMT_F8E4M3FN, ER_RND_NEGATIVE_INF, 0, 0x81);
        bad += hand("underflow -tiny", ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0, ER_FMT_F8E4M3FN, ER_RND_ODD, 0, 0x81);
        bad += terms_d("underflow -tiny", ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0, opts_all, 3);
    }
    ck_assert_msg(bad == 0, "zero_signs: %ld failures (see stderr)", bad);
}
END_TEST

/* A random nonzero finite value of format f (pattern), in a band of exponent fields around centre. */
static uint64_t rand_fin(int f, uint64_t *rng, int centre)
{
    const rfmt *T = rf(f);
    for (;;) {
        uint64_t p = gen_pattern(T, rng, GM_BAND, centre, 0);
        if (ref_decode(T, p).cls == RC_FIN) return p;
    }
}

static uint64_t neg_pattern(int f, uint64_t p) { return p ^ (UINT64_C(1) << (rf(f)->width - 1)); }

START_TEST(cancellation)
{
    static const int pairs[][2] = {
        {ER_FMT_F64, ER_FMT_F64},         {ER_FMT_F32, ER_FMT_F32},       {ER_FMT_BF16, ER_FMT_BF16},
        {ER_FMT_F16, ER_FMT_F8E5M2},      {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN}, {ER_FMT_F8E8M0FNU, ER_FMT_F32},
        {ER_FMT_F4E2M1FN, ER_FMT_F6E3M2FN}, {ER_FMT_TF32, ER_FMT_F64},     {ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ},
        {ER_FMT_F6E2M3FN, ER_FMT_BF16},
    };
    uint64_t rng = er_test_seed("engine_targeted/cancellation");
    long bad = 0;
    ref_init();
    for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
        int fa = pairs[pi][0], fb = pairs[pi][1];
        const rfmt *A = rf(fa), *B = rf(fb);
        for (int rep = 0; rep < 4; rep++) {
            /* 6 rows x 2 columns: the products x y and x (-y) (or (-x) y) in shuffled slots, plus one
             * tiny product: rows 0-3 a tiny nonzero term (the least subnormals, or random), rows 4-5 a zero
             * term (the sum is exactly zero: its sign depends on the direction) */
            eprob P;
            memset(&P, 0, sizeof P);
            P.fa = fa;
            P.fb = fb;
            P.fc = rep == 3 ? fa : -1;
            P.fsc = -1;
            int r = 1 + (int)rnd_below(&rng, 30);
            P.m = 6;
            P.n = 2;
            P.k = 2 * r + 1;
            eprob_alloc(&P);
            int ca = gen_centre(A, &rng), cb = gen_centre(B, &rng);
            if (rep == 0) { /* the top of both ranges */
                ca = (1 << A->ebits) - 2;
                cb = (1 << B->ebits) - 2;
            }
            int64_t perm[64];
            for (int64_t p = 0; p < P.k; p++) perm[p] = p;
            for (int64_t p = P.k - 1; p > 0; p--) {
                int64_t q = (int64_t)rnd_below(&rng, (uint64_t)p + 1), t = perm[p];
                perm[p] = perm[q];
                perm[q] = t;
            }
            for (int p = 0; p < r; p++) {
                for (int64_t j = 0; j < P.n; j++) {
                    uint64_t y = rand_fin(fb, &rng, cb);
                    P.B[perm[p] * P.n + j] = y;
                    P.B[perm[r + p] * P.n + j] = B->uns ? y : neg_pattern(fb, y);
                }
                for (int64_t i = 0; i < P.m; i++) {
                    uint64_t x = rand_fin(fa, &rng, ca);
                    P.A[i * P.k + perm[p]] = x;
                    P.A[i * P.k + perm[r + p]] = B->uns ? neg_pattern(fa, x) : x;
                }
            }
            int64_t t = perm[2 * r];
            for (int64_t i = 0; i < P.m; i++) {
                uint64_t v;
                if (i == 0) v = ref_minsub(A, 0);
                else if (i == 1) v = ref_minsub(A, 1);
                else if (i < 4) v = rand_fin(fa, &rng, gen_centre(A, &rng));
                else if (A->nosub) v = rand_fin(fa, &rng, gen_centre(A, &rng)); /* no zero in f8E8M0FNU */
                else v = i == 4 ? 0 : (A->special == RS_FNUZ ? 0 : UINT64_C(1) << (A->width - 1));
                P.A[i * P.k + t] = v;
            }
            P.B[t * P.n + 0] = ref_minsub(B, 0);
            P.B[t * P.n + 1] = rand_fin(fb, &rng, gen_centre(B, &rng));
            if (P.fc >= 0) {
                const rfmt *Cf = rf(P.fc);
                for (int64_t e = 0; e < P.m * P.n; e++)
                    P.C[e] = Cf->nosub ? 0 : rnd_below(&rng, 2) ? 0 : ref_minsub(Cf, !Cf->uns);
            }
            char ctx[96];
            snprintf(ctx, sizeof ctx, "cancellation %s x %s rep %d", A->name, B->name, rep);
            bad += run_all(&P, float_ids, NFLOAT, opts_all, rep == 1 ? 3 : 1, ctx);
            eprob_free(&P);
        }
    }
    /* the two ends of the binary64 range in one sum: 2^1000 2^1000 - 2^1000 2^1000 + 2^-1074 2^-1074 */
    {
        double a[3] = {0x1p1000, 0x1p-1074, 0x1p1000}, b[3] = {0x1p1000, -0x1p-1074, -0x1p1000};
        bad += terms_d("cancellation 2^2000 - 2^2000 - 2^-2148", ER_FMT_F64, ER_FMT_F64, -1, a, b, 3, 0, opts_all, 3);
        double a2[4] = {0x1.fffffffffffffp1023, 0x1p-1074, -0x1.fffffffffffffp1023, 0x1p-1074};
        double b2[4] = {0x1.fffffffffffffp1023, 0x1p-1074, 0x1.fffffffffffffp1023, 0x1p-1074};
        bad += terms_d("cancellation max^2 - max^2 + 2 2^-2148", ER_FMT_F64, ER_FMT_F64, ER_FMT_F64, a2, b2, 4,
                       -0x1p-1074, opts_all, 3);
    }
    ck_assert_msg(bad == 0, "cancellation: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/* The fast path decides an element when both ends of its enclosure round to the same pattern.  In
 * f8E4M3FNUZ / f8E5M2FNUZ (one NaN for both signs) and f8E8M0FNU (negative values and overflow are
 * both NaN) the NaN pattern is reached from both sides of the exact value, so a wide enclosure around
 * a modest value must not be decided as NaN: 2^200 - 2^200 + v (f32 x f32) must round v. */
START_TEST(nan_preimage)
{
    printf("%s/%s\n", "engine_targeted", "nan_preimage");
    long bad = 0;
    ref_init();
    static const int outs[3] = {ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU};
    static const double vs[4] = {1.0, 3.0, 0.5, 0x1p-20};
    for (int vi = 0; vi < 4; vi++) {
        double a[3] = {0x1p100, 0x1p100, vs[vi]}, b[3] = {0x1p100, -0x1p100, 1.0};
        eprob P;
        build_d(&P, ER_FMT_F32, ER_FMT_F32, -1, a, b, 3, 0);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "nan_preimage 2^200 - 2^200 + %a", vs[vi]);
        bad += run_all(&P, outs, 3, opts_all, 1, ctx);
        eprob_free(&P);
    }
    ck_assert_msg(bad == 0, "nan_preimage: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/*
 * Against the fast path's error bound: terms big, s, -big, V (in that order, so that a binary64 sum in
 * any order that adds s to big first loses s) with V = b - d just below a rounding boundary b of the
 * output and s = 2 d: the exact sum b + d is on the other side of b than the binary64 sum b - d.  The
 * fast path may decide such an element only if its error bound is honest; a bound too small by a
 * factor 2^12 would decide it wrongly.  Boundaries: ties (nearest) and representable values
 * (directed), in f16, bf16, f8E4M3FN, f32 (V in two terms), every direction; both signs.
 */
START_TEST(fast_path_adversarial)
{
    printf("%s/%s\n", "engine_targeted", "fast_path_adversarial");
    long bad = 0;
    ref_init();
    struct {
        const char *name;
        int out;
        double b_tie, b_rep, d, big; /* boundaries (tie, representable), offset, the big term */
    } cases[] = {
        {"f16", ER_FMT_F16, 1 + 0x1p-11, 1 + 0x1p-10, 0x1p-23, 0x1p31},
        {"bf16", ER_FMT_BF16, 1 + 0x1p-8, 1 + 0x1p-7, 0x1p-23, 0x1p31},
        {"f8E4M3FN", ER_FMT_F8E4M3FN, 1 + 0x1p-4, 1 + 0x1p-3, 0x1p-23, 0x1p31},
        {"f8E5M2", ER_FMT_F8E5M2, 1 + 0x1p-3, 1 + 0x1p-2, 0x1p-23, 0x1p31},
        {"f4E2M1FN", ER_FMT_F4E2M1FN, 1.25, 1.5, 0x1p-23, 0x1p31},
        {"f32", ER_FMT_F32, 1 + 0x1p-24, 1 + 0x1p-23, 0x1p-40, 0x1p14},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int which = 0; which < 2; which++)
            for (int sg = 0; sg < 2; sg++) {
                double sgn = sg ? -1.0 : 1.0, bnd = which ? cases[ci].b_rep : cases[ci].b_tie, d = cases[ci].d;
                /* V = bnd - d as 1 + (bnd - 1 - d): two f32 terms */
                double a[5] = {cases[ci].big, 2 * d, cases[ci].big, 1.0, bnd - 1.0 - d};
                double b[5] = {sgn, sgn, -sgn, sgn, sgn};
                eprob P;
                build_d(&P, ER_FMT_F32, ER_FMT_F32, -1, a, b, 5, 0);
                int outs[1] = {cases[ci].out};
                char ctx[96];
                snprintf(ctx, sizeof ctx, "fast_path_adversarial %s %s sign %d", cases[ci].name,
                         which ? "representable" : "tie", sg);
                bad += run_all(&P, outs, 1, opts_all, 1, ctx);
                eprob_free(&P);
            }
    ck_assert_msg(bad == 0, "fast_path_adversarial: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/* Exponent range of an output format: emin (least normal binade), emax, mbits. */
static void out_range(int f, int *emin, int *emax, int *m)
{
    const rfmt *T = rf(f);
    rval mx = ref_decode(T, ref_max(T, 0));
    *m = T->mbits;
    *emin = T->nosub ? -T->bias : 1 - T->bias;
    *emax = mx.exp + T->mbits;
}

START_TEST(subnormal_results)
{
    uint64_t rng = er_test_seed("engine_targeted/subnormal_results");
    long bad = 0;
    ref_init();
    for (int fi = 0; fi < NFLOAT; fi++) {
        int f = float_ids[fi], emin, emax, m;
        if (rf(f)->nosub) continue;
        out_range(f, &emin, &emax, &m);
        int q = emin - m - 3; /* three bits below the subnormal quantum */
        int sh = q < -1000 ? 300 : 0;
        int nb = m + 3 > 62 ? 62 : m + 3;
        for (int it = 0; it < 12; it++) {
            /* N in [1, 2^(m+3) + 2] (just past the least normal too), as Nh + Nl or Nh - Nl */
            uint64_t N = 1 + rnd_below(&rng, (UINT64_C(1) << nb) + 2);
            if (it == 0) N = 4;                                  /* half the least subnormal */
            if (it == 1) N = (UINT64_C(1) << (m + 3)) - 4;       /* max subnormal + half: tie at 2^emin */
            if (it == 2) N = (UINT64_C(1) << (m + 3)) - 5;
            if (it == 3) N = 12;                                 /* 1.5 least subnormal: tie to 2 */
            if (it == 4) N = (UINT64_C(1) << (m + 3)) - 3;
            if (it == 5) N = 3;
            uint64_t Nh = N >> 20 << 20, Nl = N - Nh;
            double v[2];
            int sgn = rnd_below(&rng, 2) ? -1 : 1, sl = it >= 6 && rnd_below(&rng, 2) ? -1 : 1;
            v[0] = sgn * ldexp((double)Nh, q + sh);
            v[1] = sgn * sl * ldexp((double)Nl, q + sh);
            char ctx[96];
            snprintf(ctx, sizeof ctx, "subnormal_results %s N %llu", rf(f)->name, (unsigned long long)N);
            bad += values(ctx, v, 2, sh, opts_all, 3, f);
        }
    }
    ck_assert_msg(bad == 0, "subnormal_results: %ld mismatching elements (see stderr)", bad);
}
END_TEST

START_TEST(ties)
{
    uint64_t rng = er_test_seed("engine_targeted/ties");
    long bad = 0;
    ref_init();
    for (int fi = 0; fi < NFLOAT; fi++) {
        int f = float_ids[fi], emin, emax, m;
        out_range(f, &emin, &emax, &m);
        for (int pos = 0; pos < 6; pos++) {
            int64_t one = INT64_C(1) << m;
            int64_t n;
            int x; /* binade */
            switch (pos) {
            case 0:
            case 1: x = emin + (int)rnd_below(&rng, (uint64_t)(emax - emin + 1)); n = one + (int64_t)rnd_below(&rng, (uint64_t)one); break;
            case 2: x = 0 < emin ? emin : 0 > emax ? emax : 0; n = one + (int64_t)rnd_below(&rng, (uint64_t)one); break;
            case 3: x = emax; n = one + (int64_t)rnd_below(&rng, (uint64_t)one); if (m > 0 && n == 2 * one - 1) n--; break;
            case 4: /* the subnormal range */
                if (rf(f)->nosub) continue;
                x = emin; n = (int64_t)rnd_below(&rng, (uint64_t)one); break;
            default: /* just below a power of two: the increment carries */
                x = emin + (int)rnd_below(&rng, (uint64_t)(emax - emin)); n = 2 * one - 1; break;
            }
            int q = x - m;
            for (int off = -1; off <= 1; off++)
                for (int sg = 0; sg < 2; sg++) {
                    double s = sg ? -1.0 : 1.0, v[3];
                    int k = 2, sh = q - 41 < -1000 ? 300 : 0;
                    v[0] = s * ldexp((double)n, q + sh);
                    v[1] = s * ldexp(1.0, q - 1 + sh);
                    if (off) {
                        v[2] = s * off * ldexp(1.0, q - 1 - 40 + sh);
                        k = 3;
                    }
                    char ctx[96];
                    snprintf(ctx, sizeof ctx, "ties %s pos %d off %d sign %d", rf(f)->name, pos, off, sg);
                    bad += values(ctx, v, k, sh, opts_all, 3, f);
                }
        }
    }
    ck_assert_msg(bad == 0, "ties: %ld mismatching elements (see stderr)", bad);
}
END_TEST

START_TEST(overflow)
{
    printf("%s/%s\n", "engine_targeted", "overflow");
    long bad = 0;
    ref_init();
    for (int fi = 0; fi < NFLOAT; fi++) {
        int f = float_ids[fi], emin, emax, m;
        out_range(f, &emin, &emax, &m);
        const rfmt *T = rf(f);
        rval mx = ref_decode(T, ref_max(T, 0));
        double M = ldexp((double)mx.sig, mx.exp), U = ldexp(1.0, emax - m), tiny = ldexp(U, -30);
        double cases[][3] = {
            {M, 0, 0}, {M, U / 2, -tiny}, {M, U / 2, 0}, {M, U / 2, tiny}, {M, U, 0}, {M, M, 0}, {M, M, M},
        };
        int ks[] = {1, 3, 2, 3, 2, 2, 3};
        for (int ci = 0; ci < 7; ci++)
            for (int sg = 0; sg < 2; sg++) {
                double v[3];
                for (int p = 0; p < 3; p++) v[p] = sg ? -cases[ci][p] : cases[ci][p];
                int sh = 0;
                char ctx[96];
                snprintf(ctx, sizeof ctx, "overflow %s case %d sign %d", T->name, ci, sg);
                bad += values(ctx, v, ks[ci], sh, opts_all, 2, f);
            }
    }
    /* the largest finite f8E4M3FN: 448 + 16 is a tie that stays 448; +17 is NaN */
    {
        double a[2] = {448.0, 16.0}, b[2] = {1.0, 1.0};
        bad += hand("e4m3 464", ER_FMT_F32, ER_FMT_F32, -1, a, b, 2, 0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, 0, 0x7E);
        double a2[3] = {448.0, 16.0, 0x1p-20}, b2[3] = {1.0, 1.0, 1.0};
        bad += hand("e4m3 464+", ER_FMT_F32, ER_FMT_F32, -1, a2, b2, 3, 0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN, 0, 0x7F);
        bad += hand("e4m3 464+ sat", ER_FMT_F32, ER_FMT_F32, -1, a2, b2, 3, 0, ER_FMT_F8E4M3FN, ER_RND_NEAREST_EVEN,
                    ER_OPT_SATURATE, 0x7E);
        bad += hand("e4m3 464+ up", ER_FMT_F32, ER_FMT_F32, -1, a2, b2, 3, 0, ER_FMT_F8E4M3FN, ER_RND_POSITIVE_INF, 0, 0x7F);
        bad += hand("e4m3 464+ down", ER_FMT_F32, ER_FMT_F32, -1, a2, b2, 3, 0, ER_FMT_F8E4M3FN, ER_RND_NEGATIVE_INF, 0, 0x7E);
    }
    ck_assert_msg(bad == 0, "overflow: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/* Every NaN and infinity pattern of a format (up to 6 NaN patterns: signs, payloads). */
static int special_patterns(int f, uint64_t *out)
{
    const rfmt *T = rf(f);
    int n = 0;
    uint64_t sb = T->uns ? 0 : UINT64_C(1) << (T->width - 1);
    uint64_t e = ((UINT64_C(1) << T->ebits) - 1) << T->mbits;
    switch (T->special) {
    case RS_IEEE:
        out[n++] = (e | (UINT64_C(1) << (T->mbits - 1))) << T->pad;      /* quiet */
        out[n++] = sb | ((e | 1u) << T->pad);                            /* signalling, negative */
        out[n++] = (e | ((UINT64_C(1) << T->mbits) - 1)) << T->pad;      /* all payload bits */
        out[n++] = sb | ((e | (UINT64_C(1) << (T->mbits - 1)) | 1u) << T->pad);
        break;
    case RS_FN:
        out[n++] = ((UINT64_C(1) << (T->ebits + T->mbits)) - 1) << T->pad;
        if (sb) out[n++] = sb | out[0];
        break;
    case RS_FNUZ: out[n++] = UINT64_C(1) << (T->width - 1); break;
    default: break;
    }
    return n;
}

START_TEST(specials)
{
    printf("%s/%s\n", "engine_targeted", "specials");
    long bad = 0;
    ref_init();
    /* NaN operands of every format, in a, in b, in c, among finite terms */
    for (int fi = 0; fi < NFLOAT; fi++) {
        int f = float_ids[fi];
        uint64_t nans[8];
        int nn = special_patterns(f, nans);
        for (int q = 0; q < nn; q++)
            for (int where = 0; where < 3; where++) {
                eprob P;
                memset(&P, 0, sizeof P);
                P.fa = where == 0 ? f : ER_FMT_BF16;
                P.fb = where == 1 ? f : ER_FMT_F16;
                P.fc = where == 2 ? f : -1;
                P.fsc = -1;
                P.m = 1;
                P.n = 1;
                P.k = 3;
                eprob_alloc(&P);
                P.A[0] = ref_encode_d(P.fa, 1.0);
                P.A[1] = where == 0 ? nans[q] : ref_encode_d(P.fa, 2.0);
                P.A[2] = ref_encode_d(P.fa, 0x1p-3);
                P.B[0] = ref_encode_d(P.fb, 2.0);
                P.B[1] = where == 1 ? nans[q] : ref_encode_d(P.fb, 0.0); /* NaN x 0, 2 x 0 */
                P.B[2] = ref_encode_d(P.fb, 1.0);
                if (where == 1) P.A[1] = ref_encode_d(P.fa, 0.0);
                if (where == 2) P.C[0] = nans[q];
                char ctx[96];
                snprintf(ctx, sizeof ctx, "specials NaN 0x%llx of %s in %c", (unsigned long long)nans[q],
                         rf(f)->name, "abc"[where]);
                bad += run_all(&P, float_ids, NFLOAT, opts_all, 2, ctx);
                eprob_free(&P);
            }
    }
    /* infinities: inf - inf, 0 x inf, inf + finite, -inf, inf in C against products */
    double inf = INFINITY;
    struct {
        const char *name;
        double a[3], b[3];
        int k, fc;
        double c;
    } cases[] = {
        {"inf - inf", {inf, inf, 1}, {1, -1, 1}, 3, -1, 0},
        {"0 x inf", {0.0, 1, 1}, {inf, 1, 1}, 3, -1, 0},
        {"-0 x -inf", {-0.0, 1, 1}, {-inf, 1, 1}, 3, -1, 0},
        {"inf + finite", {inf, 0x1p100, -0x1p100}, {2, 0x1p26, 0x1p26}, 3, -1, 0},
        {"-inf + finite", {inf, 3, 1}, {-0.5, 1, 1}, 3, -1, 0},
        {"inf + inf", {inf, -inf}, {1, -1}, 2, -1, 0},
        {"C inf + products", {0x1p100, 2}, {0x1p26, 3}, 2, ER_FMT_F32, inf},
        {"C -inf + inf product", {inf}, {1}, 1, ER_FMT_F32, -inf},
        {"C -inf + -inf product", {-inf}, {1}, 1, ER_FMT_F32, -inf},
        {"C -inf + finite huge", {0x1p127}, {0x1p127}, 1, ER_FMT_F64, -inf},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        char ctx[96];
        snprintf(ctx, sizeof ctx, "specials %s", cases[ci].name);
        bad += terms_d(ctx, ER_FMT_F32, ER_FMT_F32, cases[ci].fc, cases[ci].a, cases[ci].b, cases[ci].k,
                       cases[ci].c, opts_all, 3);
        bad += terms_d(ctx, ER_FMT_F64, ER_FMT_F8E5M2, cases[ci].fc, cases[ci].a,
                       (double[3]){cases[ci].b[0] > 1e6 ? 32768.0 : cases[ci].b[0],
                                   cases[ci].b[1] > 1e6 ? 32768.0 : cases[ci].b[1],
                                   cases[ci].b[2] > 1e6 ? 32768.0 : cases[ci].b[2]},
                       cases[ci].k, cases[ci].c, opts_all, 2);
    }
    /* the canonical NaN and infinity patterns of each output format, by hand */
    {
        static const struct { int f; uint64_t nan, pinf, ninf, pinf_sat; } tab[] = {
            {ER_FMT_F64, UINT64_C(0x7FF8000000000000), UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000), UINT64_C(0x7FEFFFFFFFFFFFFF)},
            {ER_FMT_F32, 0x7FC00000, 0x7F800000, 0xFF800000, 0x7F7FFFFF},
            {ER_FMT_TF32, 0x7FC00000, 0x7F800000, 0xFF800000, 0x7F7FE000},
            {ER_FMT_F16, 0x7E00, 0x7C00, 0xFC00, 0x7BFF},
            {ER_FMT_BF16, 0x7FC0, 0x7F80, 0xFF80, 0x7F7F},
            {ER_FMT_F8E4M3FN, 0x7F, 0x7F, 0xFF, 0x7E},
            {ER_FMT_F8E5M2, 0x7E, 0x7C, 0xFC, 0x7B},
            {ER_FMT_F8E4M3FNUZ, 0x80, 0x80, 0x80, 0x7F},
            {ER_FMT_F8E5M2FNUZ, 0x80, 0x80, 0x80, 0x7F},
            {ER_FMT_F8E8M0FNU, 0xFF, 0xFF, 0xFF, 0xFE},
            {ER_FMT_F6E2M3FN, 0x00, 0x1F, 0x3F, 0x1F},
            {ER_FMT_F6E3M2FN, 0x00, 0x1F, 0x3F, 0x1F},
            {ER_FMT_F4E2M1FN, 0x0, 0x7, 0xF, 0x7},
        };
        double a[2] = {inf, inf}, b[2] = {1, -1}, a1[1] = {inf}, b1[1] = {1}, bn[1] = {-1};
        for (size_t t = 0; t < sizeof tab / sizeof tab[0]; t++)
            for (int d = 0; d < ER_RND_COUNT; d++) {
                bad += hand("canonical NaN", ER_FMT_F32, ER_FMT_F32, -1, a, b, 2, 0, tab[t].f, d, 0, tab[t].nan);
                bad += hand("canonical NaN sat", ER_FMT_F32, ER_FMT_F32, -1, a, b, 2, 0, tab[t].f, d, ER_OPT_SATURATE, tab[t].nan);
                bad += hand("+inf", ER_FMT_F32, ER_FMT_F32, -1, a1, b1, 1, 0, tab[t].f, d, 0, tab[t].pinf);
                bad += hand("-inf", ER_FMT_F32, ER_FMT_F32, -1, a1, bn, 1, 0, tab[t].f, d, 0, tab[t].ninf);
                bad += hand("+inf sat", ER_FMT_F32, ER_FMT_F32, -1, a1, b1, 1, 0, tab[t].f, d, ER_OPT_SATURATE, tab[t].pinf_sat);
            }
    }
    ck_assert_msg(bad == 0, "specials: %ld failures (see stderr)", bad);
}
END_TEST

START_TEST(k0_k1)
{
    uint64_t rng = er_test_seed("engine_targeted/k0_k1");
    long bad = 0;
    ref_init();
    /* k = 0: D = C rounded once, every pair of C and D formats, every direction */
    for (int ic = 0; ic < NFLOAT; ic++) {
        eprob P;
        memset(&P, 0, sizeof P);
        P.fa = float_ids[rnd_below(&rng, NFLOAT)];
        P.fb = float_ids[rnd_below(&rng, NFLOAT)];
        P.fc = float_ids[ic];
        P.fsc = -1;
        P.m = 4;
        P.n = 5;
        P.k = 0;
        eprob_alloc(&P);
        for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_UNIFORM, 0, 15);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "k = 0, C %s", rf(P.fc)->name);
        bad += run_all(&P, float_ids, NFLOAT, opts_all, 2, ctx);
        eprob_free(&P);
    }
    /* k = 0 without C: +0 everywhere (m x n nonzero), and k = 0 with m or n zero: nothing to do */
    {
        eprob P;
        memset(&P, 0, sizeof P);
        P.fa = ER_FMT_F16;
        P.fb = ER_FMT_BF16;
        P.fc = -1;
        P.fsc = -1;
        P.m = 3;
        P.n = 2;
        P.k = 0;
        eprob_alloc(&P);
        bad += run_all(&P, float_ids, NFLOAT, opts_all, 1, "k = 0, no C");
        eprob_free(&P);
    }
    /* k = 1: one product rounded once, every pair of input formats */
    for (int ia = 0; ia < NFLOAT; ia++)
        for (int ib = 0; ib < NFLOAT; ib++) {
            eprob P;
            memset(&P, 0, sizeof P);
            P.fa = float_ids[ia];
            P.fb = float_ids[ib];
            P.fc = -1;
            P.fsc = -1;
            P.m = 4;
            P.n = 4;
            P.k = 1;
            eprob_alloc(&P);
            for (int64_t e = 0; e < 4; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_UNIFORM, 0, 15);
            for (int64_t e = 0; e < 4; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, GM_UNIFORM, 0, 15);
            int outs[2] = {float_ids[rnd_below(&rng, NFLOAT)], float_ids[rnd_below(&rng, NFLOAT)]};
            bad += run_all(&P, outs, 2, opts_all, 1, "k = 1");
            eprob_free(&P);
        }
    ck_assert_msg(bad == 0, "k0_k1: %ld mismatching elements (see stderr)", bad);
}
END_TEST

static long enc_only(const char *ctx, const double *a, const double *b, int k, int fc, double c)
{
    eprob P;
    build_d(&P, ER_FMT_F64, ER_FMT_F64, fc, a, b, k, c);
    eprob_pack(&P);
    rex *ex = ref_exact_all(&P);
    long bad = 0;
    ecfg c1 = {-1, ER_RND_NEAREST_EVEN, 0u, ER_STRATEGY_AUTO, 1, 1}; /* enclosures without d */
    ecfg c2 = {ER_FMT_F32, ER_RND_NEGATIVE_INF, 0u, ER_STRATEGY_EXACT, 2, 1};
    bad += eng_check(&P, ex, &c1, ctx);
    bad += eng_check(&P, ex, &c2, ctx);
    rex_free_all(ex, 1);
    eprob_free(&P);
    return bad;
}

START_TEST(enclosures)
{
    printf("%s/%s\n", "engine_targeted", "enclosures");
    long bad = 0;
    ref_init();
    double M = 0x1.fffffffffffffp1023;
    struct {
        const char *name;
        double a[3], b[3];
        int k;
    } cases[] = {
        {"exact double", {1.5, 0.25}, {2.0, 4.0}, 2},
        {"binary64 tie", {1.0, 0x1p-53}, {1.0, 1.0}, 2},
        {"binary64 tie + tiny", {1.0, 0x1p-53, 0x1p-600}, {1.0, 1.0, 0x1p-600}, 3},
        {"below the least subnormal", {0x1p-600, 0}, {0x1p-475, 0}, 1},
        {"minus below the least subnormal", {0x1p-600}, {-0x1p-475}, 1},
        {"half the least subnormal + tiny", {0x1p-600, 0x1p-700}, {0x1p-475, 0x1p-700}, 2},
        {"beyond the largest finite", {M, M}, {1.0, 1.0}, 2},
        {"minus beyond the largest finite", {M, M}, {-1.0, -1.0}, 2},
        {"max^2", {M}, {M}, 1},
        {"cancellation to zero", {3.0, 3.0}, {1.0, -1.0}, 2},
        {"all -0", {-0.0, 0.0}, {1.0, -1.0}, 2},
        {"NaN", {NAN, 1.0}, {1.0, 1.0}, 2},
        {"inf", {INFINITY, 1.0}, {1.0, 1.0}, 2},
        {"-inf", {INFINITY, 1.0}, {-1.0, 1.0}, 2},
        {"random-ish", {0x1.23456789abcdep-3, -0x1.fedcba987654p+1, 0x1p-60}, {0x1.1p-5, 0x1.3p-7, 0x1.5p-9}, 3},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        bad += enc_only(cases[ci].name, cases[ci].a, cases[ci].b, cases[ci].k, -1, 0);
    bad += enc_only("k = 0, no C", NULL, NULL, 0, -1, 0);
    bad += enc_only("k = 0, C -0", NULL, NULL, 0, ER_FMT_F64, -0.0);
    ck_assert_msg(bad == 0, "enclosures: %ld failures (see stderr)", bad);
}
END_TEST

/* ER_OPT_FTZ_IN: whatever it means for operands, every strategy and thread count gives the same bits. */
START_TEST(ftz_in)
{
    uint64_t rng = er_test_seed("engine_targeted/ftz_in");
    long bad = 0;
    int flushed = 0, kept = 0;
    ref_init();
    static const int fs[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN};
    for (int t = 0; t < 16; t += 2) {
        eprob P;
        memset(&P, 0, sizeof P);
        P.fa = fs[t % 4];
        P.fb = fs[(t / 4) % 4];
        P.fc = t % 3 ? P.fa : -1;
        P.fsc = -1;
        P.m = 8;
        P.n = 3;
        P.k = 5;
        eprob_alloc(&P);
        /* subnormal operands: exponent field 0 */
        for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_BAND, 0, 0);
        for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, GM_SMALL, 0, 0);
        if (P.fc >= 0)
            for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_BAND, 0, 0);
        eprob_pack(&P);
        rex *ex = ref_exact_all(&P);
        for (int d = 0; d < ER_RND_COUNT; d++) {
            int dfmt = float_ids[rnd_below(&rng, NFLOAT)];
            eout base, o;
            ecfg c0 = {dfmt, d, ER_OPT_FTZ_IN, ER_STRATEGY_EXACT, 1, 0};
            eout_alloc(&base, &P);
            eng_run(&P, &c0, &base);
            for (int v = 0; v < 5; v++) {
                static const int th[5] = {1, 2, 3, 7, 1};
                ecfg c = {dfmt, d, ER_OPT_FTZ_IN | (v == 4 ? ER_OPT_FTZ_OUT : 0u),
                          v < 4 ? ER_STRATEGY_AUTO : ER_STRATEGY_EXACT, th[v], 0};
                if (v == 4) {
                    ecfg c4 = {dfmt, d, ER_OPT_FTZ_IN | ER_OPT_FTZ_OUT, ER_STRATEGY_AUTO, 1, 0};
                    eout o2;
                    eout_alloc(&o, &P);
                    eout_alloc(&o2, &P);
                    eng_run(&P, &c, &o);
                    eng_run(&P, &c4, &o2);
                    if (memcmp(o.D, o2.D, sizeof(uint64_t) * (size_t)(P.m * P.n)) != 0) {
                        fprintf(stderr, "MISMATCH ftz_in: FTZ_IN|FTZ_OUT AUTO and EXACT differ (%s x %s -> %s %s)\n",
                                rf(P.fa)->name, rf(P.fb)->name, rf(dfmt)->name, er_rounding_name(d));
                        bad++;
                    }
                    eout_free(&o2);
                    eout_free(&o);
                    continue;
                }
                eout_alloc(&o, &P);
                eng_run(&P, &c, &o);
                if (o.status != ER_OK || memcmp(o.D, base.D, sizeof(uint64_t) * (size_t)(P.m * P.n)) != 0) {
                    fprintf(stderr, "MISMATCH ftz_in: AUTO threads %d differs from EXACT (%s x %s -> %s %s)\n", th[v],
                            rf(P.fa)->name, rf(P.fb)->name, rf(dfmt)->name, er_rounding_name(d));
                    bad++;
                }
                eout_free(&o);
            }
            /* does the engine flush subnormal operands?  (reported, not asserted) */
            for (int64_t e = 0; e < P.m * P.n; e++) {
                if (base.D[e] == ref_round(rf(dfmt), &ex[e], d, 0)) kept++;
                else flushed++;
            }
            eout_free(&base);
        }
        rex_free_all(ex, P.m * P.n);
        eprob_free(&P);
    }
    printf("ftz_in: %d elements equal to the unflushed exact result, %d differ (operands flushed)\n", kept, flushed);
    ck_assert_msg(bad == 0, "ftz_in: %ld disagreements (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_targeted");
    TCase *tc = tcase_create("targeted");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, reference_selfcheck);
    tcase_add_test(tc, facts);
    tcase_add_test(tc, zero_signs);
    tcase_add_test(tc, cancellation);
    tcase_add_test(tc, nan_preimage);
    tcase_add_test(tc, fast_path_adversarial);
    tcase_add_test(tc, subnormal_results);
    tcase_add_test(tc, ties);
    tcase_add_test(tc, overflow);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, k0_k1);
    tcase_add_test(tc, enclosures);
    tcase_add_test(tc, ftz_in);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
