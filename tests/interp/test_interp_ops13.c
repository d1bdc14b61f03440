/* test_interp_ops13.c: Tile IR 13.3 / 13.4 ops in point mode (kernels/ops13.mlir) against independent
 * references: MPFR and the format oracle for rounding<approx>/<full>, fpowf, fpowi, fast_acc and the
 * f8E5M3FNU-scaled mma; a sequential C model for every atomic mode, atomic_red_view_tko and insert; byte
 * layouts for pack / unpack. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/interp.h"
#include "of_oracle.h"

#ifndef ER_INTERP_KERNELS
#error "ER_INTERP_KERNELS must name tests/interp/kernels"
#endif

#define EXACT_PREC 2048

static uint64_t rng;
static er_interp_module *mod;

typedef struct launch {
    er_interp_launch l;
    er_interp_buffer b[8];
    uint64_t s[8];
    char msg[1024];
} launch;

static void lset(launch *L, int gx)
{
    memset(L, 0, sizeof *L);
    er_interp_launch_init(&L->l);
    L->l.grid[0] = gx;
    L->l.buffers = L->b;
}
static void lbuf(launch *L, int fmt, void *data, size_t nbytes)
{
    L->b[L->l.nbuffers].format = fmt;
    L->b[L->l.nbuffers].data = data;
    L->b[L->l.nbuffers].nbytes = nbytes;
    L->l.nbuffers++;
}
static void lrun_ok(launch *L, const char *k)
{
    er_status st = er_interp_kernel(mod, k, &L->l, L->msg, sizeof L->msg);
    ck_assert_msg(st == ER_OK && L->l.kind == ER_INTERP_OK, "%s: %s: %s", k, er_interp_kind_name(L->l.kind), L->msg);
}

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)((er_test_rand(&rng) >> 11) * 0x1p-53); }

/* The exact value of a pattern of fmt, finite or not, into out (the oracle's decoding). */
static void val(int fmt, uint64_t bits, mpfr_t out)
{
    of_val x;
    of_val_init(&x);
    of_decode(of_get(fmt), bits, &x);
    if (x.cls == OF_NAN) mpfr_set_nan(out);
    else if (x.cls == OF_INF) mpfr_set_inf(out, x.sign ? -1 : 1);
    else if (x.cls == OF_ZERO) mpfr_set_zero(out, x.sign ? -1 : 1);
    else ck_assert(mpfr_set(out, x.v, MPFR_RNDN) == 0);
    of_val_clear(&x);
}

/* Whether got is the oracle's rounding to nearest even of the value ex (NaN, infinities, zeros included). */
static int oracle_ok(int fmt, uint64_t got, mpfr_t ex, char *why, size_t n)
{
    const of_fmt *T = of_get(fmt);
    of_val x;
    of_exp e;
    int ok;
    unsigned fl;
    of_val_init(&x);
    of_exp_init(&e);
    mpfr_set_prec(x.v, mpfr_get_prec(ex));
    mpfr_set(x.v, ex, MPFR_RNDN);
    if (mpfr_nan_p(ex)) x.cls = OF_NAN;
    else if (mpfr_inf_p(ex)) x.cls = OF_INF;
    else if (mpfr_zero_p(ex)) x.cls = OF_ZERO;
    else x.cls = OF_NORM;
    x.sign = mpfr_signbit(ex) != 0;
    of_expect(T, &x, T, ER_RND_NEAREST_EVEN, 0u, &e);
    fl = e.must | (e.anyof & (~e.anyof + 1u));
    ok = of_check(T, got, fl, &e, why, n);
    of_exp_clear(&e);
    of_val_clear(&x);
    return ok;
}

static void expect_rounded(int fmt, uint64_t got, mpfr_t ex, const char *what, int i)
{
    char why[512];
    if (mpfr_nan_p(ex)) { /* every NaN the interpreter makes is the canonical one */
        of_val x;
        of_val_init(&x);
        of_decode(of_get(fmt), got, &x);
        ck_assert_msg(x.cls == OF_NAN, "%s[%d]: expected NaN, got 0x%llx", what, i, (unsigned long long)got);
        of_val_clear(&x);
        return;
    }
    ck_assert_msg(oracle_ok(fmt, got, ex, why, sizeof why), "%s[%d]: 0x%llx: %s", what, i, (unsigned long long)got, why);
}

/* rounding<approx> and rounding<full> on divf, exp2, exp, rsqrt, sqrt, tanh: correctly rounded. */
START_TEST(t_approx)
{
    float x[32], y[8 * 16];
    launch L;
    mpfr_t a, b, r;
    int i, k;
    for (i = 0; i < 16; i++) {
        x[i] = rndf(-4.0f, 4.0f);
        x[16 + i] = rndf(0.25f, 3.0f) * (i & 1 ? -1.0f : 1.0f);
    }
    x[0] = 0x1p-120f; /* results near the subnormals: divf's flush_to_zero flushes them */
    x[16] = 0x1p+10f;
    lset(&L, 1);
    lbuf(&L, ER_FMT_F32, x, sizeof x);
    lbuf(&L, ER_FMT_F32, y, sizeof y);
    lrun_ok(&L, "approx");
    mpfr_inits2(EXACT_PREC, a, b, r, (mpfr_ptr)0);
    for (k = 0; k < 8; k++)
        for (i = 0; i < 16; i++) {
            val(ER_FMT_F32, fbits(x[i]), a);
            val(ER_FMT_F32, fbits(x[16 + i]), b);
            switch (k) {
            case 0: case 1: case 7: mpfr_div(r, a, b, MPFR_RNDN); break;
            case 2: mpfr_exp2(r, a, MPFR_RNDN); break;
            case 3: mpfr_exp(r, a, MPFR_RNDN); break;
            case 4: mpfr_abs(a, a, MPFR_RNDN); mpfr_rec_sqrt(r, a, MPFR_RNDN); break;
            case 5: mpfr_abs(a, a, MPFR_RNDN); mpfr_sqrt(r, a, MPFR_RNDN); break;
            default: mpfr_tanh(r, a, MPFR_RNDN); break;
            }
            if (k == 7 && (mpfr_regular_p(r) && mpfr_get_exp(r) <= -126)) { /* flush_to_zero: a subnormal result is the signed zero */
                ck_assert_msg(fbits(y[16 * k + i]) == (mpfr_signbit(r) ? 0x80000000u : 0u), "ftz[%d]: 0x%08x", i, fbits(y[16 * k + i]));
                continue;
            }
            expect_rounded(ER_FMT_F32, fbits(y[16 * k + i]), r, "approx", 16 * k + i);
        }
    ck_assert_uint_eq(fbits(y[16 * 7]), 0u); /* 2^-120 / 2^10 is subnormal: flushed */
    ck_assert_uint_ne(fbits(y[0]), 0u);      /* and kept without the flag */
    mpfr_clears(a, b, r, (mpfr_ptr)0);
}
END_TEST

/* fpowi: one rounding of x^n (MPFR's pow_si at 2048 bits, then the oracle); fpowf: pow. */
START_TEST(t_fpow)
{
    static const struct { float x; int32_t n; } edge[] = {
        {-2.0f, 3}, {0.0f, -1}, {-0.0f, -3}, {-0.0f, 2}, {NAN, 0}, {1.5f, 300}, {3.0f, -90}, {-1.0f, 2147483647},
        {1.0000001f, INT32_MIN}, {-1.0000001f, 2147483647}, {INFINITY, -2}, {-INFINITY, 3}, {0.9999999f, 2000000000}, {10.0f, 38},
        {-0.7f, 11}, {1.1f, -7},
    };
    float x[32], y[32];
    int32_t n[16];
    uint16_t h[16], h0[16];
    launch L;
    mpfr_t a, b, r;
    int i;
    for (i = 0; i < 16; i++) {
        x[i] = edge[i].x;
        n[i] = edge[i].n;
        x[16 + i] = i < 8 ? rndf(-3.0f, 3.0f) : (float)((int)rndf(-5.0f, 5.0f));
        h[i] = (uint16_t)((er_test_rand(&rng) & 0x3FFF) | ((uint64_t)(i & 1) << 15)); /* f16 patterns of magnitude below 2 */
    }
    x[16 + 15] = 0.5f; /* fpowf(1.1, 0.5) */
    /* fpowf's bases are the same x[0:16] (negative ones with the integral exponents of x[24:32]) */
    memcpy(h0, h, sizeof h);
    lset(&L, 1);
    lbuf(&L, ER_FMT_F32, x, sizeof x);
    lbuf(&L, ER_FMT_I32, n, sizeof n);
    lbuf(&L, ER_FMT_F32, y, sizeof y);
    lbuf(&L, ER_FMT_F16, h, sizeof h);
    lrun_ok(&L, "fpow");
    mpfr_inits2(EXACT_PREC, a, b, r, (mpfr_ptr)0);
    for (i = 0; i < 16; i++) {
        val(ER_FMT_F32, fbits(edge[i].x), a);
        mpfr_pow_si(r, a, edge[i].n, MPFR_RNDN);
        expect_rounded(ER_FMT_F32, fbits(y[i]), r, "fpowi f32", i);
        val(ER_FMT_F16, h0[i], a);
        mpfr_pow_si(r, a, edge[i].n, MPFR_RNDN);
        expect_rounded(ER_FMT_F16, h[i], r, "fpowi f16", i);
        val(ER_FMT_F32, fbits(x[i]), a);
        val(ER_FMT_F32, fbits(x[16 + i]), b);
        mpfr_pow(r, a, b, MPFR_RNDN);
        expect_rounded(ER_FMT_F32, fbits(y[16 + i]), r, "fpowf", i);
    }
    ck_assert_uint_eq(fbits(y[0]), fbits(-8.0f));
    ck_assert_uint_eq(fbits(y[2]), fbits(-INFINITY));
    ck_assert_uint_eq(fbits(y[4]), fbits(1.0f));
    ck_assert_uint_eq(fbits(y[7]), fbits(-1.0f));
    mpfr_clears(a, b, r, (mpfr_ptr)0);
}
END_TEST

/* The atomics over 8 blocks against a sequential model: blocks in order, lanes in order. */
START_TEST(t_atomics)
{
    float f[4] = {0.5f, 0, 0, 0}, fe = 0.5f;
    int32_t I[16], Ie[16], O[48], Oe[48];
    int64_t l[2] = {INT64_C(1) << 40, 0}, le = INT64_C(1) << 40;
    launch L;
    int b, k;
    for (k = 0; k < 16; k++) I[k] = (int32_t)(er_test_rand(&rng) % 2001) - 1000;
    I[8] = 77; I[9] = 0; I[10] = I[11] = I[12] = 0;
    memcpy(Ie, I, sizeof I);
    for (k = 0; k < 48; k++) O[k] = Oe[k] = -12345;
    for (b = 0; b < 8; b++) {
        int32_t v = b - 3;
        volatile float q = (float)b / 10.0f;
        fe = fe + q;
        Ie[0] = (int32_t)((uint32_t)Ie[0] + (uint32_t)v);
        Ie[1] = Ie[1] > v ? Ie[1] : v;
        Ie[2] = Ie[2] < v ? Ie[2] : v;
        Ie[3] = (uint32_t)Ie[3] > (uint32_t)v ? Ie[3] : v;
        Ie[4] = (uint32_t)Ie[4] < (uint32_t)v ? Ie[4] : v;
        Ie[5] &= v;
        Ie[6] |= v;
        Ie[7] ^= v;
        Oe[b] = Ie[8];
        Ie[8] = b;
        Oe[8 + b] = Ie[9];
        if (Ie[9] == b) Ie[9] = b + 1;
        if (Ie[2] == 3) Ie[2] = 3;
        for (k = 0; k < 4; k++) Oe[16 + 4 * b + k] = Ie[12]++;
        Ie[10]++;
        le += v;
    }
    lset(&L, 8);
    lbuf(&L, ER_FMT_F32, f, sizeof f);
    lbuf(&L, ER_FMT_I32, I, sizeof I);
    lbuf(&L, ER_FMT_I32, O, sizeof O);
    lbuf(&L, ER_FMT_I64, l, sizeof l);
    lrun_ok(&L, "atomics");
    ck_assert_msg(fbits(f[0]) == fbits(fe), "F[0] = %a, expected %a", (double)f[0], (double)fe);
    for (k = 0; k < 16; k++) ck_assert_msg(I[k] == Ie[k], "I[%d] = %d, expected %d", k, I[k], Ie[k]);
    for (k = 0; k < 48; k++) ck_assert_msg(O[k] == Oe[k], "O[%d] = %d, expected %d", k, O[k], Oe[k]);
    ck_assert(l[0] == le && l[1] == 0);
    ck_assert_int_eq(I[9], 8);
    ck_assert_int_eq(I[12], 32);
    ck_assert_int_eq(I[11], 0); /* the masked-off lane stored nothing */
    ck_assert(L.b[0].stored && L.b[1].stored && L.b[2].stored && L.b[3].stored);
}
END_TEST

/* pack / unpack: f32 as its little-endian bytes; f4E2M1FN two per byte, element 2k in the low nibble. */
START_TEST(t_pack)
{
    static const float f4v[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    float x[16], y[32];
    uint8_t bytes[72], code[16];
    launch L;
    int i;
    for (i = 0; i < 16; i++) {
        code[i] = (uint8_t)(er_test_rand(&rng) & 0xF);
        x[i] = (code[i] & 8 ? -1.0f : 1.0f) * f4v[code[i] & 7];
    }
    memset(bytes, 0xAA, sizeof bytes);
    lset(&L, 1);
    lbuf(&L, ER_FMT_F32, x, sizeof x);
    lbuf(&L, ER_FMT_I8, bytes, sizeof bytes);
    lbuf(&L, ER_FMT_F32, y, sizeof y);
    lrun_ok(&L, "pack");
    for (i = 0; i < 16; i++) {
        uint32_t u = fbits(x[i]);
        int k;
        for (k = 0; k < 4; k++) ck_assert_uint_eq(bytes[4 * i + k], (u >> (8 * k)) & 0xFFu);
        ck_assert_uint_eq(fbits(y[i]), u);
        ck_assert_uint_eq((bytes[64 + i / 2] >> (4 * (i & 1))) & 0xFu, code[i] == 8 ? 8u : code[i]); /* -0 keeps its sign */
        ck_assert_uint_eq(fbits(y[16 + i]), u);
    }
}
END_TEST

/* atomic_red_view_tko (addf over blocks, partial tiles, max on i32) and insert, against a sequential model. */
START_TEST(t_red_insert)
{
    float xin[20], y[20], ye[20], z[32], ze[32];
    int32_t I[16], Ie[16];
    launch L;
    int b, i;
    for (i = 0; i < 20; i++) {
        xin[i] = rndf(-2.0f, 2.0f);
        y[i] = ye[i] = rndf(-1.0f, 1.0f);
    }
    for (i = 0; i < 16; i++) I[i] = Ie[i] = (int32_t)(er_test_rand(&rng) % 21) - 10;
    for (i = 0; i < 32; i++) z[i] = ze[i] = -1.0f;
    for (b = 0; b < 2; b++) {
        float t[16];
        for (i = 0; i < 16; i++) t[i] = 16 * b + i < 20 ? xin[16 * b + i] : 0.0f; /* padding zero */
        for (i = 0; i < 16; i++)
            if (16 * b + i < 20) ye[16 * b + i] = ye[16 * b + i] + t[i];
        for (i = 0; i < 16; i++) ye[i] = ye[i] + t[i];
        for (i = 0; i < 16; i++) Ie[i] = Ie[i] > i - 8 * b ? Ie[i] : i - 8 * b;
        for (i = 0; i < 16; i++) ze[16 * b + i] = i / 4 == b ? 7.0f : t[i];
    }
    lset(&L, 2);
    lbuf(&L, ER_FMT_F32, xin, sizeof xin);
    lbuf(&L, ER_FMT_F32, y, sizeof y);
    lbuf(&L, ER_FMT_F32, z, sizeof z);
    lbuf(&L, ER_FMT_I32, I, sizeof I);
    lrun_ok(&L, "red_insert");
    for (i = 0; i < 20; i++) ck_assert_msg(fbits(y[i]) == fbits(ye[i]), "Y[%d] = %a, expected %a", i, (double)y[i], (double)ye[i]);
    for (i = 0; i < 32; i++) ck_assert_msg(fbits(z[i]) == fbits(ze[i]), "Z[%d] = %a, expected %a", i, (double)z[i], (double)ze[i]);
    for (i = 0; i < 16; i++) ck_assert_msg(I[i] == Ie[i], "I[%d] = %d, expected %d", i, I[i], Ie[i]);
}
END_TEST

/* 13.4's saturating ftoi: truncated toward zero, then clamped to the type; NaN gives 0. */
static int64_t sat_ref(float f, int64_t lo, int64_t hi)
{
    double t;
    if (isnan(f)) return 0;
    t = trunc((double)f);
    return t < (double)lo ? lo : t > (double)hi ? hi : (int64_t)t;
}

START_TEST(t_ftoi_sat)
{
    float x[16] = {NAN, INFINITY, -INFINITY, 300.7f, -300.7f, 1e10f, -1e10f, -1.5f, 2.9f, 127.9f, -128.9f, 255.5f, -0.7f, 0.0f, 3e9f, -2147483648.0f};
    int8_t sv[16], uv[16];
    int32_t wv[16];
    launch L;
    int i;
    lset(&L, 1);
    lbuf(&L, ER_FMT_F32, x, sizeof x);
    lbuf(&L, ER_FMT_I8, sv, sizeof sv);
    lbuf(&L, ER_FMT_I8, uv, sizeof uv);
    lbuf(&L, ER_FMT_I32, wv, sizeof wv);
    lrun_ok(&L, "ftoi_sat");
    for (i = 0; i < 16; i++) {
        ck_assert_msg(sv[i] == sat_ref(x[i], -128, 127), "signed i8 [%d] %g: %d", i, (double)x[i], sv[i]);
        ck_assert_msg((uint8_t)uv[i] == sat_ref(x[i], 0, 255), "unsigned i8 [%d] %g: %u", i, (double)x[i], (unsigned)(uint8_t)uv[i]);
        ck_assert_msg(wv[i] == sat_ref(x[i], INT32_MIN, INT32_MAX), "i32 [%d] %g: %d", i, (double)x[i], wv[i]);
    }
}
END_TEST

/* 13.3's strided and gather/scatter views against index arithmetic written here; the UB witnesses. */
static void views_run(launch *L, float *x, int32_t *ix, float *y, float *z, int32_t si, int32_t c)
{
    lset(L, 1);
    lbuf(L, ER_FMT_F32, x, 64 * sizeof *x);
    lbuf(L, ER_FMT_I32, ix, 4 * sizeof *ix);
    lbuf(L, ER_FMT_F32, y, 64 * sizeof *y);
    lbuf(L, ER_FMT_F32, z, 64 * sizeof *z);
    L->l.scalars = L->s;
    L->s[0] = (uint32_t)si;
    L->s[1] = (uint32_t)c;
    L->l.nscalars = 2;
}

START_TEST(t_views)
{
    float x[64], y[64], z[64];
    int32_t ix[4] = {5, 1, 9, 2}; /* row 9 is past the end: read as zero, not stored */
    launch L;
    int i, j, k;
    er_status st;
    for (i = 0; i < 64; i++) x[i] = rndf(-8.0f, 8.0f);
    for (k = 0; k < 2; k++) {
        int32_t c = k ? 3 : 0; /* a dense start of 3: columns 8..10 past the end */
        for (i = 0; i < 64; i++) y[i] = z[i] = -1.0f;
        views_run(&L, x, ix, y, z, 3, c);
        lrun_ok(&L, "views");
        for (i = 0; i < 8; i++)
            for (j = 0; j < 8; j++) {
                float wy = i < 4 && j < 4 ? (6 + i < 8 ? x[(6 + i) * 8 + j] : 0.0f) : -1.0f; /* origin row 3 x 2 = 6 */
                float wz = -1.0f;
                int r;
                for (r = 0; r < 4; r++)
                    if (ix[r] == i && j >= c && j < c + 8) wz = x[i * 8 + j];
                ck_assert_msg(fbits(y[i * 8 + j]) == fbits(wy), "strided Y[%d][%d] = %g, expected %g", i, j, (double)y[i * 8 + j], (double)wy);
                ck_assert_msg(fbits(z[i * 8 + j]) == fbits(wz), "gathered Z[%d][%d] = %g, expected %g (c %d)", i, j, (double)z[i * 8 + j], (double)wz, c);
            }
    }
    /* a strided origin outside the tensor (row 4 x 2 = 8), and a gathered tile wholly outside: UB */
    views_run(&L, x, ix, y, z, 4, 0);
    st = er_interp_kernel(mod, "views", &L.l, L.msg, sizeof L.msg);
    ck_assert_int_eq(L.l.kind, ER_INTERP_UB);
    ck_assert_msg(st != ER_OK && strstr(L.msg, "outside the tensor") != NULL, "%s", L.msg);
    views_run(&L, x, ix, y, z, 0, 8);
    st = er_interp_kernel(mod, "views", &L.l, L.msg, sizeof L.msg);
    ck_assert_int_eq(L.l.kind, ER_INTERP_UB);
    ck_assert_msg(st != ER_OK && strstr(L.msg, "wholly outside") != NULL, "%s", L.msg);
}
END_TEST

/* alloca: a block's allocation starts as zeros each time; a global one is kept across the blocks. */
START_TEST(t_alloca)
{
    float y[48];
    launch L;
    int i;
    for (i = 0; i < 48; i++) y[i] = -1.0f;
    lset(&L, 2);
    lbuf(&L, ER_FMT_F32, y, sizeof y);
    lrun_ok(&L, "alloca");
    for (i = 0; i < 32; i++) ck_assert_msg(y[i] == (float)(i / 16 + 1), "Y[%d] = %g", i, (double)y[i]);
    for (i = 32; i < 48; i++) ck_assert_msg(y[i] == 2.0f, "Y[%d] = %g", i, (double)y[i]);
}
END_TEST

/* fast_acc on mmaf: the exact sum rounded once, as without the flag. */
START_TEST(t_fast_acc)
{
    uint8_t a[16 * 32], b[32 * 16];
    float c[256];
    launch L;
    mpfr_t s, p, x, y;
    int i, j, k;
    for (i = 0; i < 512; i++) {
        uint8_t v = (uint8_t)(er_test_rand(&rng) & 0xFF);
        if ((v & 0x7F) == 0x7F) v = 0x3F; /* no NaN */
        a[i] = v;
        v = (uint8_t)(er_test_rand(&rng) & 0xFF);
        if ((v & 0x7F) == 0x7F) v = 0x41;
        b[i] = v;
    }
    lset(&L, 1);
    lbuf(&L, ER_FMT_F8E4M3FN, a, sizeof a);
    lbuf(&L, ER_FMT_F8E4M3FN, b, sizeof b);
    lbuf(&L, ER_FMT_F32, c, sizeof c);
    lrun_ok(&L, "fast_acc");
    mpfr_inits2(EXACT_PREC, s, p, x, y, (mpfr_ptr)0);
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            mpfr_set_zero(s, 1);
            for (k = 0; k < 32; k++) {
                val(ER_FMT_F8E4M3FN, a[i * 32 + k], x);
                val(ER_FMT_F8E4M3FN, b[k * 16 + j], y);
                ck_assert(mpfr_mul(p, x, y, MPFR_RNDN) == 0);
                ck_assert(mpfr_add(s, s, p, MPFR_RNDN) == 0);
            }
            expect_rounded(ER_FMT_F32, fbits(c[i * 16 + j]), s, "fast_acc", i * 16 + j);
        }
    mpfr_clears(s, p, x, y, (mpfr_ptr)0);
}
END_TEST

/* mmaf_scaled with f8E5M3FNU (UE5M3) scales and f4E2M1FN elements, block 16. */
START_TEST(t_ue5m3)
{
    static const float f4v[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    float a[16 * 32], b[32 * 16], c[256];
    uint8_t sa[32], sb[32];
    launch L;
    mpfr_t s, p, x, y, u, v;
    int i, j, k;
    for (i = 0; i < 512; i++) {
        unsigned r = (unsigned)(er_test_rand(&rng) & 0xF);
        a[i] = (r & 8 ? -1.0f : 1.0f) * f4v[r & 7];
        r = (unsigned)(er_test_rand(&rng) & 0xF);
        b[i] = (r & 8 ? -1.0f : 1.0f) * f4v[r & 7];
    }
    for (i = 0; i < 32; i++) { /* UE5M3: exponent fields around the bias (15), every mantissa; never the NaN 0xFF */
        sa[i] = (uint8_t)((((er_test_rand(&rng) % 9) + 11) << 3) | (er_test_rand(&rng) & 7));
        sb[i] = (uint8_t)((((er_test_rand(&rng) % 9) + 11) << 3) | (er_test_rand(&rng) & 7));
    }
    sa[0] = 0x00; /* the smallest scales: 0 is a value of UE5M3 (no sign, subnormals) */
    sb[1] = 0x01;
    lset(&L, 1);
    lbuf(&L, ER_FMT_F32, a, sizeof a);
    lbuf(&L, ER_FMT_F32, b, sizeof b);
    lbuf(&L, ER_FMT_F8E5M3FNU, sa, sizeof sa);
    lbuf(&L, ER_FMT_F8E5M3FNU, sb, sizeof sb);
    lbuf(&L, ER_FMT_F32, c, sizeof c);
    lrun_ok(&L, "ue5m3");
    mpfr_inits2(EXACT_PREC, s, p, x, y, u, v, (mpfr_ptr)0);
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            mpfr_set_zero(s, 1);
            for (k = 0; k < 32; k++) {
                val(ER_FMT_F32, fbits(a[i * 32 + k]), x);
                val(ER_FMT_F32, fbits(b[k * 16 + j]), y);
                val(ER_FMT_F8E5M3FNU, sa[i * 2 + k / 16], u);
                val(ER_FMT_F8E5M3FNU, sb[(k / 16) * 16 + j], v);
                mpfr_mul(p, x, y, MPFR_RNDN);
                mpfr_mul(p, p, u, MPFR_RNDN);
                mpfr_mul(p, p, v, MPFR_RNDN);
                ck_assert(mpfr_add(s, s, p, MPFR_RNDN) == 0);
            }
            expect_rounded(ER_FMT_F32, fbits(c[i * 16 + j]), s, "ue5m3", i * 16 + j);
        }
    mpfr_clears(s, p, x, y, u, v, (mpfr_ptr)0);
}
END_TEST

/* ftof into and out of f8E5M3FNU (UE5M3): the oracle's rounding, and the exact value back. */
START_TEST(t_ue5m3_convert)
{
    float x[16], y[16];
    uint8_t sv[16];
    launch L;
    mpfr_t v, w;
    int i;
    for (i = 0; i < 16; i++) x[i] = ldexpf(rndf(1.0f, 2.0f), (int)(er_test_rand(&rng) % 36) - 20); /* 2^-20 .. 2^16 */
    x[0] = 0.0f;
    x[1] = 0x1p-17f; /* subnormal range of UE5M3 (its smallest normal is 2^-14) */
    x[2] = 114688.0f; /* the largest finite value */
    x[3] = 0x1.1p-14f; /* a tie between two patterns: to even */
    lset(&L, 1);
    lbuf(&L, ER_FMT_F32, x, sizeof x);
    lbuf(&L, ER_FMT_F8E5M3FNU, sv, sizeof sv);
    lbuf(&L, ER_FMT_F32, y, sizeof y);
    lrun_ok(&L, "ue5m3_convert");
    mpfr_inits2(EXACT_PREC, v, w, (mpfr_ptr)0);
    for (i = 0; i < 16; i++) {
        val(ER_FMT_F32, fbits(x[i]), v);
        expect_rounded(ER_FMT_F8E5M3FNU, sv[i], v, "f32 to f8E5M3FNU", i);
        val(ER_FMT_F8E5M3FNU, sv[i], w);
        expect_rounded(ER_FMT_F32, fbits(y[i]), w, "f8E5M3FNU to f32", i);
    }
    ck_assert_uint_eq(sv[0], 0x00);
    ck_assert_uint_eq(sv[2], 0xFE);
    mpfr_clears(v, w, (mpfr_ptr)0);
}
END_TEST

/* The pre-check still refuses what the dialect does not allow among the new ops. */
START_TEST(t_ops13_refusals)
{
    static const struct { const char *text, *what; } cases[] = {
        {"entry @k(%p: tile<ptr<f32>>) {\n  %x = constant <f32: 2.0> : tile<f32>\n  %y = log %x rounding<full> : tile<f32>\n}\n",
         "t.mlir:3:8: op 'log': rounding<full> is not allowed here"},
        {"entry @k(%p: tile<ptr<f64>>) {\n  %x = constant <f64: 2.0> : tile<f64>\n  %n = constant <i64: 3> : tile<i64>\n"
         "  %y = fpowi %x, %n : tile<f64>, tile<i64>\n}\n",
         "t.mlir:4:8: op 'fpowi': an i64 exponent with f64 is not modelled"},
        {"entry @k(%p: tile<ptr<f16>>) {\n  %x = constant <f16: 2.0> : tile<f16>\n"
         "  %y, %t = atomic_rmw_tko relaxed device %p, add, %x : tile<ptr<f16>>, tile<f16> -> tile<f16>, token\n}\n",
         "t.mlir:3:12: op 'atomic_rmw_tko': an integer mode takes i32 or i64, not f16"},
        {"entry @k(%p: tile<ptr<f32>>) {\n  %x = constant <f32: 2.0> : tile<4xf32>\n  %y = pack %x : tile<4xf32> -> tile<8xi8>\n}\n",
         "t.mlir:3:8: op 'pack': 4 elements of 32 bits are not 8 bytes"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        er_interp_module *m = NULL;
        char msg[1024];
        ck_assert_msg(er_interp_parse(cases[i].text, strlen(cases[i].text), "t.mlir", &m, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_int_eq(er_interp_first_unsupported(m, "k", msg, sizeof msg), 1);
        ck_assert_msg(strstr(msg, cases[i].what) != NULL, "'%s' lacks '%s'", msg, cases[i].what);
        er_interp_free(m);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interp_ops13");
    TCase *tc = tcase_create("ops13");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, t_approx);
    tcase_add_test(tc, t_fpow);
    tcase_add_test(tc, t_atomics);
    tcase_add_test(tc, t_pack);
    tcase_add_test(tc, t_red_insert);
    tcase_add_test(tc, t_ftoi_sat);
    tcase_add_test(tc, t_views);
    tcase_add_test(tc, t_alloca);
    tcase_add_test(tc, t_ue5m3_convert);
    tcase_add_test(tc, t_fast_acc);
    tcase_add_test(tc, t_ue5m3);
    tcase_add_test(tc, t_ops13_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *r;
    int failed;
    char path[1024], msg[1024];
    FILE *f;
    long n;
    char *text;
    rng = er_test_seed("test_interp_ops13");
    of_init();
    snprintf(path, sizeof path, "%s/ops13.mlir", ER_INTERP_KERNELS);
    f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); return 1; }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = (char *)malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) return 1;
    fclose(f);
    if (er_interp_parse(text, (size_t)n, "ops13.mlir", &mod, msg, sizeof msg) != ER_OK) { fprintf(stderr, "%s\n", msg); return 1; }
    free(text);
    r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    er_interp_free(mod);
    of_fini();
    mpfr_free_cache();
    return failed ? 1 : 0;
}
