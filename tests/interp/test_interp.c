/* test_interp.c: the interpreter's kernels against independent references (MPFR and the MPFR format
 * oracle for every rounding, exact integer arithmetic for mmai and control flow), every refusal kind's
 * witness, the pre-check's message, parse errors, and the peers' regressions. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/interp.h"
#include "of_oracle.h"
#include "interp/interp_arith.h"

#ifndef ER_INTERP_KERNELS
#error "ER_INTERP_KERNELS must name tests/interp/kernels"
#endif

static uint64_t rng;

/* ---------------------------------------------------------------- helpers */

static er_interp_module *load(const char *name)
{
    char path[1024], msg[1024];
    FILE *f;
    long n;
    char *text;
    er_interp_module *m = NULL;
    snprintf(path, sizeof path, "%s/%s", ER_INTERP_KERNELS, name);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = (char *)malloc((size_t)n + 1);
    ck_assert(text && fread(text, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    ck_assert_msg(er_interp_parse(text, (size_t)n, name, &m, msg, sizeof msg) == ER_OK, "%s", msg);
    free(text);
    return m;
}

typedef struct launch {
    er_interp_launch l;
    er_interp_buffer b[16];
    uint64_t s[64];
    char msg[1024];
    char prints[4096];
    er_status st;
} launch;

static void lset(launch *L, int gx, int gy)
{
    memset(L, 0, sizeof *L);
    er_interp_launch_init(&L->l);
    L->l.grid[0] = gx;
    L->l.grid[1] = gy;
    L->l.buffers = L->b;
    L->l.scalars = L->s;
    L->l.prints = L->prints;
    L->l.prints_size = sizeof L->prints;
}
static void lbuf(launch *L, int fmt, void *data, size_t nbytes)
{
    L->b[L->l.nbuffers].format = fmt;
    L->b[L->l.nbuffers].data = data;
    L->b[L->l.nbuffers].nbytes = nbytes;
    L->l.nbuffers++;
}
static void lscalar(launch *L, uint64_t v) { L->s[L->l.nscalars++] = v; }
static void lrun(launch *L, er_interp_module *m, const char *k)
{
    L->st = er_interp_kernel(m, k, &L->l, L->msg, sizeof L->msg);
}
static void lrun_ok(launch *L, er_interp_module *m, const char *k)
{
    lrun(L, m, k);
    ck_assert_msg(L->st == ER_OK && L->l.kind == ER_INTERP_OK, "%s: %s: %s", k, er_interp_kind_name(L->l.kind), L->msg);
}

/* The exact value of a pattern (the oracle's own decoding). */
static void val(int fmt, uint64_t bits, mpfr_t out)
{
    of_val x;
    of_val_init(&x);
    of_decode(of_get(fmt), bits, &x);
    ck_assert_msg(x.cls != OF_NAN && x.cls != OF_INF, "test data must be finite");
    ck_assert(mpfr_set(out, x.v, MPFR_RNDN) == 0);
    if (x.cls == OF_ZERO && x.sign) mpfr_neg(out, out, MPFR_RNDN), mpfr_set_zero(out, -1);
    of_val_clear(&x);
}

/* Whether got is the oracle's rounding of the exact value ex into fmt in direction dir. */
static int oracle_ok(int fmt, uint64_t got, mpfr_t ex, int dir, char *why, size_t n)
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
    x.payload = 0;
    x.pbits = 0;
    of_expect(T, &x, T, dir, 0u, &e);
    fl = e.must | (e.anyof & (~e.anyof + 1u));
    ok = of_check(T, got, fl, &e, why, n);
    of_exp_clear(&e);
    of_val_clear(&x);
    return ok;
}

/* The oracle's rounding of ex, as a value (finite results only), into r. */
static void oracle_round(int fmt, mpfr_t ex, int dir, mpfr_t r)
{
    const of_fmt *T = of_get(fmt);
    of_val x;
    of_exp e;
    of_val_init(&x);
    of_exp_init(&e);
    mpfr_set_prec(x.v, mpfr_get_prec(ex));
    mpfr_set(x.v, ex, MPFR_RNDN);
    x.cls = mpfr_zero_p(ex) ? OF_ZERO : OF_NORM;
    x.sign = mpfr_signbit(ex) != 0;
    of_expect(T, &x, T, dir, 0u, &e);
    ck_assert_msg(e.kind == OF_EXP_VALUE, "reference overflowed (test data too large)");
    mpfr_set(r, e.v, MPFR_RNDN);
    if (mpfr_zero_p(e.v)) mpfr_set_zero(r, e.sign ? -1 : 1);
    of_exp_clear(&e);
    of_val_clear(&x);
}

/* Random finite patterns in a moderate range: sign, exponent field within +-spread of the bias. */
static uint64_t rnd_float(int fmt, int spread)
{
    const of_fmt *f = of_get(fmt);
    uint64_t r = er_test_rand(&rng);
    uint64_t frac = r & of_mask(f->mbits);
    int e = f->bias + (int)((r >> 20) % (uint64_t)(2 * spread + 1)) - spread;
    uint64_t sign = (r >> 40) & 1u;
    if (e < 1) e = 1;
    if (e > (1 << f->ebits) - 2) e = (1 << f->ebits) - 2;
    return ((sign << (f->width - 1)) | ((uint64_t)e << f->mbits) | frac) << 0;
}

static void put(void *buf, int eb, int64_t i, uint64_t v)
{
    int k;
    for (k = 0; k < eb; k++) ((uint8_t *)buf)[i * eb + k] = (uint8_t)(v >> (8 * k));
}
static uint64_t get(const void *buf, int eb, int64_t i)
{
    uint64_t v = 0;
    int k;
    for (k = 0; k < eb; k++) v |= (uint64_t)((const uint8_t *)buf)[i * eb + k] << (8 * k);
    return v;
}

#define EXACT_PREC 2048

/* ---------------------------------------------------------------- kernels */

START_TEST(t_vadd)
{
    er_interp_module *m = load("vadd.mlir");
    float a[40], b[40], c[40];
    launch L;
    int i;
    mpfr_t x, y, s;
    char why[256];
    mpfr_inits2(EXACT_PREC, x, y, s, (mpfr_ptr)0);
    for (i = 0; i < 40; i++) {
        uint64_t pa = rnd_float(ER_FMT_F32, 30), pb = rnd_float(ER_FMT_F32, 30);
        uint32_t ua = (uint32_t)pa, ub = (uint32_t)pb;
        memcpy(&a[i], &ua, 4);
        memcpy(&b[i], &ub, 4);
        c[i] = -1.0f;
    }
    lset(&L, 3, 1);
    lbuf(&L, ER_FMT_F32, a, sizeof a);
    lbuf(&L, ER_FMT_F32, b, sizeof b);
    lbuf(&L, ER_FMT_F32, c, sizeof c);
    lscalar(&L, 40);
    lrun_ok(&L, m, "vadd");
    ck_assert(!L.b[0].stored && !L.b[1].stored && L.b[2].stored);
    for (i = 0; i < 40; i++) {
        uint32_t ua, ub, uc;
        memcpy(&ua, &a[i], 4);
        memcpy(&ub, &b[i], 4);
        memcpy(&uc, &c[i], 4);
        val(ER_FMT_F32, ua, x);
        val(ER_FMT_F32, ub, y);
        ck_assert(mpfr_add(s, x, y, MPFR_RNDN) == 0);
        ck_assert_msg(oracle_ok(ER_FMT_F32, uc, s, ER_RND_NEAREST_EVEN, why, sizeof why), "c[%d] = 0x%08x: %s", i, uc, why);
    }
    /* the prepared form, run twice, gives the same bits */
    {
        er_interp_prepared *p;
        float c2[40];
        int g[3] = {3, 1, 1};
        char msg[512];
        ck_assert(er_interp_prepare(m, "vadd", g, &p, msg, sizeof msg) == ER_OK);
        for (i = 0; i < 2; i++) {
            memset(c2, 0, sizeof c2);
            L.b[2].data = c2;
            ck_assert(er_interp_run(p, &L.l, msg, sizeof msg) == ER_OK);
            ck_assert(memcmp(c, c2, sizeof c) == 0);
        }
        er_interp_prepared_free(p);
    }
    mpfr_clears(x, y, s, (mpfr_ptr)0);
    er_interp_free(m);
}
END_TEST

/* C (M x N, f32) of a k loop of 16-wide steps, each acc = RN(acc + exact partial sum), by MPFR and the oracle. */
static void ref_gemm_steps(int fa, int fb, const void *A, const void *B, int M, int N, int K, int lda, int ldb, int kstep,
                           int i, int j, mpfr_t acc)
{
    mpfr_t x, y, p, s;
    int k0, k;
    int ea = fa == ER_FMT_F32 ? 4 : fa == ER_FMT_F8E4M3FN ? 1 : 2, eb = ea;
    (void)M;
    (void)N;
    mpfr_inits2(EXACT_PREC, x, y, p, s, (mpfr_ptr)0);
    mpfr_set_zero(acc, 1);
    for (k0 = 0; k0 < K; k0 += kstep) {
        mpfr_set(s, acc, MPFR_RNDN);
        for (k = k0; k < k0 + kstep && k < K; k++) {
            val(fa, get(A, ea, (int64_t)i * lda + k), x);
            val(fb, get(B, eb, (int64_t)k * ldb + j), y);
            ck_assert(mpfr_mul(p, x, y, MPFR_RNDN) == 0);
            ck_assert(mpfr_add(s, s, p, MPFR_RNDN) == 0);
        }
        oracle_round(ER_FMT_F32, s, ER_RND_NEAREST_EVEN, acc);
    }
    mpfr_clears(x, y, p, s, (mpfr_ptr)0);
}

START_TEST(t_gemm_view)
{
    enum { M = 40, N = 24, K = 40 };
    er_interp_module *m = load("gemm_view.mlir");
    uint16_t A[M * K], B[K * N];
    float C[M * N];
    launch L;
    int i, j;
    mpfr_t acc;
    char why[256];
    mpfr_init2(acc, EXACT_PREC);
    for (i = 0; i < M * K; i++) A[i] = (uint16_t)rnd_float(ER_FMT_BF16, 6);
    for (i = 0; i < K * N; i++) B[i] = (uint16_t)rnd_float(ER_FMT_BF16, 6);
    memset(C, 0, sizeof C);
    lset(&L, 3, 2);
    lbuf(&L, ER_FMT_BF16, A, sizeof A);
    lbuf(&L, ER_FMT_BF16, B, sizeof B);
    lbuf(&L, ER_FMT_F32, C, sizeof C);
    lscalar(&L, M);
    lscalar(&L, N);
    lscalar(&L, K);
    lrun_ok(&L, m, "gemm_bf16");
    ck_assert_int_eq(L.l.steps, 3 * 2 * 3);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            uint32_t u;
            memcpy(&u, &C[i * N + j], 4);
            ref_gemm_steps(ER_FMT_BF16, ER_FMT_BF16, A, B, M, N, K, K, N, 16, i, j, acc);
            ck_assert_msg(oracle_ok(ER_FMT_F32, u, acc, ER_RND_NEAREST_EVEN, why, sizeof why), "C[%d][%d] = 0x%08x: %s", i, j, u, why);
        }
    mpfr_clear(acc);
    er_interp_free(m);
}
END_TEST

START_TEST(t_gemm_ptr)
{
    er_interp_module *m = load("gemm_ptr.mlir");
    uint16_t A[32 * 32], B[32 * 32];
    float C[32 * 32];
    launch L;
    int i, j, K = 24;
    mpfr_t acc;
    char why[256];
    mpfr_init2(acc, EXACT_PREC);
    for (i = 0; i < 32 * 32; i++) {
        A[i] = (uint16_t)rnd_float(ER_FMT_F16, 5);
        B[i] = (uint16_t)rnd_float(ER_FMT_F16, 5);
    }
    lset(&L, 2, 2);
    lbuf(&L, ER_FMT_F16, A, sizeof A);
    lbuf(&L, ER_FMT_F16, B, sizeof B);
    lbuf(&L, ER_FMT_F32, C, sizeof C);
    lscalar(&L, (uint64_t)K);
    lrun_ok(&L, m, "gemm_ptr");
    for (i = 0; i < 32; i++)
        for (j = 0; j < 32; j++) {
            uint32_t u;
            memcpy(&u, &C[i * 32 + j], 4);
            ref_gemm_steps(ER_FMT_F16, ER_FMT_F16, A, B, 32, 32, K, 32, 32, 32, i, j, acc);
            ck_assert_msg(oracle_ok(ER_FMT_F32, u, acc, ER_RND_NEAREST_EVEN, why, sizeof why), "C[%d][%d]: %s", i, j, why);
        }
    mpfr_clear(acc);
    er_interp_free(m);
}
END_TEST

START_TEST(t_epilogue)
{
    er_interp_module *m = load("epilogue.mlir");
    uint16_t A[16 * 32], B[32 * 16];
    float bias[16];
    uint8_t D[256];
    launch L;
    int i, j;
    mpfr_t acc, bv, s;
    char why[256];
    int relu_hits = 0, sat = 0;
    mpfr_inits2(EXACT_PREC, acc, bv, s, (mpfr_ptr)0);
    for (i = 0; i < 16 * 32; i++) {
        A[i] = (uint16_t)rnd_float(ER_FMT_F16, 3);
        B[i] = (uint16_t)rnd_float(ER_FMT_F16, 3);
    }
    for (i = 0; i < 16; i++) {
        uint32_t u = (uint32_t)rnd_float(ER_FMT_F32, 4);
        memcpy(&bias[i], &u, 4);
    }
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F16, A, sizeof A);
    lbuf(&L, ER_FMT_F16, B, sizeof B);
    lbuf(&L, ER_FMT_F32, bias, sizeof bias);
    lbuf(&L, ER_FMT_F8E4M3FN, D, sizeof D);
    lrun_ok(&L, m, "epilogue");
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            uint32_t ub;
            ref_gemm_steps(ER_FMT_F16, ER_FMT_F16, A, B, 16, 16, 32, 32, 16, 32, i, j, acc);
            memcpy(&ub, &bias[j], 4);
            val(ER_FMT_F32, ub, bv);
            ck_assert(mpfr_add(s, acc, bv, MPFR_RNDN) == 0);
            oracle_round(ER_FMT_F32, s, ER_RND_NEAREST_EVEN, s);
            if (mpfr_sgn(s) < 0 || mpfr_zero_p(s)) {
                mpfr_set_zero(s, 1); /* relu: maxf(x, +0), +0 > -0 */
                relu_hits++;
            }
            if (mpfr_cmp_d(s, 448.0) > 0) sat++;
            ck_assert_msg(oracle_ok(ER_FMT_F8E4M3FN, D[i * 16 + j], s, ER_RND_NEAREST_EVEN, why, sizeof why), "D[%d][%d] = 0x%02x: %s", i, j, D[i * 16 + j], why);
        }
    ck_assert_msg(relu_hits > 0, "the test data never exercised relu");
    (void)sat;
    mpfr_clears(acc, bv, s, (mpfr_ptr)0);
    er_interp_free(m);
}
END_TEST

START_TEST(t_softmax)
{
    enum { R = 8 };
    er_interp_module *m = load("softmax.mlir");
    float X[R * 16], Y[R * 16];
    launch L;
    int i, k;
    char why[256];
    mpfr_t mx, d, e[16], sum, q, t;
    mpfr_inits2(EXACT_PREC, mx, d, sum, q, t, (mpfr_ptr)0);
    for (k = 0; k < 16; k++) mpfr_init2(e[k], EXACT_PREC);
    for (i = 0; i < R * 16; i++) {
        uint32_t u = (uint32_t)rnd_float(ER_FMT_F32, 3);
        memcpy(&X[i], &u, 4);
    }
    lset(&L, R / 4, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_F32, Y, sizeof Y);
    lscalar(&L, R);
    lrun_ok(&L, m, "softmax");
    for (i = 0; i < R; i++) {
        uint32_t u;
        mpfr_set_inf(mx, -1);
        for (k = 0; k < 16; k++) {
            memcpy(&u, &X[i * 16 + k], 4);
            val(ER_FMT_F32, u, t);
            if (mpfr_cmp(t, mx) > 0) mpfr_set(mx, t, MPFR_RNDN);
        }
        mpfr_set_zero(sum, 1);
        for (k = 0; k < 16; k++) {
            memcpy(&u, &X[i * 16 + k], 4);
            val(ER_FMT_F32, u, t);
            ck_assert(mpfr_sub(d, t, mx, MPFR_RNDN) == 0);
            oracle_round(ER_FMT_F32, d, ER_RND_NEAREST_EVEN, d);
            mpfr_exp(t, d, MPFR_RNDN); /* 2048 bits: far past any hard case of binary32 */
            oracle_round(ER_FMT_F32, t, ER_RND_NEAREST_EVEN, e[k]);
            ck_assert(mpfr_add(sum, e[k], sum, MPFR_RNDN) == 0);
            oracle_round(ER_FMT_F32, sum, ER_RND_NEAREST_EVEN, sum);
        }
        for (k = 0; k < 16; k++) {
            mpfr_div(q, e[k], sum, MPFR_RNDN);
            memcpy(&u, &Y[i * 16 + k], 4);
            ck_assert_msg(oracle_ok(ER_FMT_F32, u, q, ER_RND_NEAREST_EVEN, why, sizeof why), "Y[%d][%d] = 0x%08x: %s", i, k, u, why);
        }
    }
    for (k = 0; k < 16; k++) mpfr_clear(e[k]);
    mpfr_clears(mx, d, sum, q, t, (mpfr_ptr)0);
    er_interp_free(m);
}
END_TEST

START_TEST(t_mxfp8)
{
    er_interp_module *m = load("mxfp8.mlir");
    uint8_t A[16 * 64], B[64 * 16], SA[32], SB[32];
    float C[256];
    uint32_t C0[256];
    launch L;
    int i, j, k;
    char why[256];
    mpfr_t s, x, y, p, sc;
    mpfr_inits2(EXACT_PREC, s, x, y, p, sc, (mpfr_ptr)0);
    for (i = 0; i < 16 * 64; i++) {
        do A[i] = (uint8_t)er_test_rand(&rng); while ((A[i] & 0x7F) == 0x7F);
        do B[i] = (uint8_t)er_test_rand(&rng); while ((B[i] & 0x7F) == 0x7F);
    }
    for (i = 0; i < 32; i++) {
        SA[i] = (uint8_t)(127 - 4 + (int)(er_test_rand(&rng) % 9));
        SB[i] = (uint8_t)(127 - 4 + (int)(er_test_rand(&rng) % 9));
    }
    for (i = 0; i < 256; i++) {
        C0[i] = (uint32_t)rnd_float(ER_FMT_F32, 8);
        memcpy(&C[i], &C0[i], 4);
    }
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F8E4M3FN, A, sizeof A);
    lbuf(&L, ER_FMT_F8E4M3FN, B, sizeof B);
    lbuf(&L, ER_FMT_F8E8M0FNU, SA, sizeof SA);
    lbuf(&L, ER_FMT_F8E8M0FNU, SB, sizeof SB);
    lbuf(&L, ER_FMT_F32, C, sizeof C);
    lrun_ok(&L, m, "mxfp8");
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            uint32_t u;
            val(ER_FMT_F32, C0[i * 16 + j], s);
            for (k = 0; k < 64; k++) {
                val(ER_FMT_F8E4M3FN, A[i * 64 + k], x);
                val(ER_FMT_F8E8M0FNU, SA[i * 2 + k / 32], sc);
                mpfr_mul(x, x, sc, MPFR_RNDN);
                val(ER_FMT_F8E4M3FN, B[k * 16 + j], y);
                val(ER_FMT_F8E8M0FNU, SB[(k / 32) * 16 + j], sc);
                mpfr_mul(y, y, sc, MPFR_RNDN);
                ck_assert(mpfr_mul(p, x, y, MPFR_RNDN) == 0);
                ck_assert(mpfr_add(s, s, p, MPFR_RNDN) == 0);
            }
            memcpy(&u, &C[i * 16 + j], 4);
            ck_assert_msg(oracle_ok(ER_FMT_F32, u, s, ER_RND_NEAREST_EVEN, why, sizeof why), "C[%d][%d]: %s", i, j, why);
        }
    mpfr_clears(s, x, y, p, sc, (mpfr_ptr)0);
    er_interp_free(m);
}
END_TEST

START_TEST(t_mmai)
{
    er_interp_module *m = load("mmai.mlir");
    int8_t A[16 * 32];
    uint8_t B[32 * 16];
    int32_t C[256], C0[256];
    launch L;
    int i, j, k;
    for (i = 0; i < 16 * 32; i++) {
        A[i] = (int8_t)er_test_rand(&rng);
        B[i] = (uint8_t)er_test_rand(&rng);
    }
    for (i = 0; i < 256; i++) {
        C0[i] = (int32_t)(uint32_t)er_test_rand(&rng);
        if (i < 8) C0[i] = INT32_MAX - i; /* sums that wrap */
        C[i] = C0[i];
    }
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_I8, A, sizeof A);
    lbuf(&L, ER_FMT_I8, B, sizeof B);
    lbuf(&L, ER_FMT_I32, C, sizeof C);
    lrun_ok(&L, m, "mmai");
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            int64_t s = C0[i * 16 + j];
            for (k = 0; k < 32; k++) s += (int64_t)A[i * 32 + k] * (int64_t)B[k * 16 + j];
            ck_assert_int_eq(C[i * 16 + j], (int32_t)(uint32_t)(uint64_t)s);
        }
    er_interp_free(m);
}
END_TEST

START_TEST(t_loops)
{
    er_interp_module *m = load("loops.mlir");
    int ns[] = {0, 5, 20, 97};
    size_t t;
    for (t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t], i, s = 0, k = 0, x = 1;
        int32_t out[3] = {0, 0, 0};
        char expect[128];
        launch L;
        for (i = 0; i < n; i++)
            if (i % 3 != 0) s += i;
        while (!(x > 1000)) {
            k++;
            x = 2 * x + 1;
        }
        if (!(n > 10)) s = -s;
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_I32, out, sizeof out);
        lscalar(&L, (uint64_t)(uint32_t)n);
        lrun_ok(&L, m, "loops");
        ck_assert_int_eq(out[0], s);
        ck_assert_int_eq(out[1], k);
        ck_assert_int_eq(out[2], x);
        snprintf(expect, sizeof expect, "sum=%d steps=%d last=%d\n", s, k, x);
        ck_assert_str_eq(L.prints, expect);
        ck_assert_int_eq(L.l.steps, n + k + 1);
    }
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- UB and refusals */

static const struct {
    const char *kernel;
    uint64_t v;
    const char *where; /* "line:col: op 'name'" */
    const char *what;
} ub_cases[] = {
    {"oob_ptr", 0, ":8:14: op 'load_ptr_tko'", "outside the allocation"},
    {"oob_view", 0, ":15:14: op 'load_view_tko'", "outside the index space"},
    {"oob_view_alloc", 0, ":22:14: op 'load_view_tko'", "outside the allocation"},
    {"undef_lane", 0, ":34:11: op 'store_view_tko'", "undefined lane"},
    {"false_assume", 20, ":38:10: op 'assume'", "is false"},
    {"div_zero", 7, ":44:10: op 'divi'", "division by zero"},
    {"rem_zero", 7, ":49:10: op 'remi'", "remainder by zero"},
    {"div_overflow", 0, ":55:10: op 'divi'", "INT_MIN by -1"},
    {"ftoi_nan", 0, ":61:10: op 'store_ptr_tko'", "undefined lane"},
    {"ftoi_range", 0, ":67:10: op 'store_ptr_tko'", "undefined lane"},
    {"nsw", 1, ":72:10: op 'addi'", "no_signed_wrap"},
    {"nuw_trunc", 300, ":76:10: op 'trunci'", "no_unsigned_wrap"},
    {"misaligned", 0, ":84:14: op 'load_ptr_tko'", "misaligned"},
    {"forever", 0, ":89:10: op 'loop'", "step limit"},
    {"step_zero", 0, ":98:5: op 'for'", "not positive"},
    {"extract_oob", 4, ":104:10: op 'extract'", "outside the 4 slices"},
    {"shift_wide", 1, ":109:10: op 'shli'", "bit width"},
    {"view_shape_zero", 0, ":113:11: op 'make_tensor_view'", "must be positive"},
    {"inbounds", 0, ":120:14: op 'load_view_tko'", "inbounds promise"},
};

START_TEST(t_ub)
{
    er_interp_module *m = load("ub.mlir");
    int32_t p[16];
    launch L;
    char where[128];
    int i = _i;
    for (int k = 0; k < 16; k++) p[k] = k;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_I32, p, sizeof p);
    lscalar(&L, ub_cases[i].v);
    L.l.step_limit = 1000;
    lrun(&L, m, ub_cases[i].kernel);
    ck_assert_msg(L.l.kind == ER_INTERP_UB && L.st == ER_EINVAL, "%s: kind %s: %s", ub_cases[i].kernel, er_interp_kind_name(L.l.kind), L.msg);
    snprintf(where, sizeof where, "ub.mlir%s", ub_cases[i].where);
    ck_assert_msg(strstr(L.msg, where) != NULL, "%s: message '%s' lacks '%s'", ub_cases[i].kernel, L.msg, where);
    ck_assert_msg(strstr(L.msg, ub_cases[i].what) != NULL, "%s: message '%s' lacks '%s'", ub_cases[i].kernel, L.msg, ub_cases[i].what);
    er_interp_free(m);
}
END_TEST

START_TEST(t_ub_off)
{
    /* ub_checks off: the undefined lanes read 0 and the run goes on; the step limit still stops a loop */
    er_interp_module *m = load("ub.mlir");
    int32_t p[16];
    launch L;
    int k;
    for (k = 0; k < 16; k++) p[k] = 100 + k;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_I32, p, sizeof p);
    lscalar(&L, 0);
    L.l.ub_checks = 0;
    lrun_ok(&L, m, "undef_lane");
    for (k = 0; k < 16; k++) ck_assert_int_eq(p[k], k < 10 ? 101 + k : 1);
    lrun_ok(&L, m, "div_zero");
    L.l.step_limit = 50;
    lrun(&L, m, "forever");
    ck_assert_int_eq(L.l.kind, ER_INTERP_UB);
    ck_assert_int_eq(L.l.steps, 51);
    er_interp_free(m);
}
END_TEST

START_TEST(t_refusals)
{
    er_interp_module *m = load("refuse.mlir");
    static const char *uns[] = {"approx_log", "unknown_op", "fast_acc", "unmodelled_format"};
    static const char *what[] = {":6:10: op 'log': rounding<approx>", ":11:10: op 'frobnicate'", ":16:10: op 'mmai': fast_acc",
                                 ":20:10: op 'ftof': format 'f8E3M4'"};
    float f[4] = {1, 2, 3, 4};
    uint16_t h[4] = {0};
    char pre[1024];
    launch L;
    size_t i;
    for (i = 0; i < 4; i++) {
        ck_assert_int_eq(er_interp_first_unsupported(m, uns[i], pre, sizeof pre), 1);
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F32, f, sizeof f);
        strcpy(L.prints, "stale");
        lrun(&L, m, uns[i]);
        ck_assert_str_eq(L.prints, ""); /* a refused launch printed nothing */
        ck_assert_int_eq(L.l.kind, ER_INTERP_UNSUPPORTED);
        ck_assert_int_eq(L.st, ER_EUNSUPPORTED);
        ck_assert_str_eq(L.msg, pre); /* the pre-check and the refusal say the same */
        ck_assert_msg(strstr(pre, what[i]) != NULL, "'%s' lacks '%s'", pre, what[i]);
    }
    ck_assert_int_eq(er_interp_first_unsupported(m, "ok_kernel", pre, sizeof pre), 0);
    ck_assert_int_eq(er_interp_first_unsupported(m, "nosuch", pre, sizeof pre), -1);
    ck_assert_int_eq(er_interp_first_unsupported(m, NULL, pre, sizeof pre), 1);
    /* bad launches: counts, a buffer of another format, a parameter no launch can pass, a scalar pattern */
    lset(&L, 1, 1);
    lrun(&L, m, "ok_kernel");
    ck_assert_int_eq(L.l.kind, ER_INTERP_BAD_LAUNCH);
    ck_assert_msg(strstr(L.msg, "takes 1 buffer and 1 scalar") != NULL, "%s", L.msg);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F16, h, sizeof h);
    lscalar(&L, 0x3F800000);
    lrun(&L, m, "ok_kernel");
    ck_assert_int_eq(L.l.kind, ER_INTERP_BAD_LAUNCH);
    ck_assert_msg(strstr(L.msg, "points to f32 but buffer 0 holds f16") != NULL, "%s", L.msg);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, f, sizeof f);
    lscalar(&L, UINT64_C(0x13F800000));
    lrun(&L, m, "ok_kernel");
    ck_assert_int_eq(L.l.kind, ER_INTERP_BAD_LAUNCH);
    lset(&L, 1, 1);
    lrun(&L, m, "token_param");
    ck_assert_int_eq(L.l.kind, ER_INTERP_BAD_LAUNCH);
    ck_assert_msg(strstr(L.msg, "no launch can pass") != NULL, "%s", L.msg);
    lset(&L, 1, 1);
    lrun(&L, m, "nosuch");
    ck_assert_int_eq(L.l.kind, ER_INTERP_BAD_LAUNCH);
    /* the good launch stores the scalar */
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, f, sizeof f);
    lscalar(&L, 0x40490FDB);
    lrun_ok(&L, m, "ok_kernel");
    {
        uint32_t u;
        memcpy(&u, &f[0], 4);
        ck_assert_uint_eq(u, 0x40490FDB);
    }
    /* interp.internal: the fault hook stands in for a defect */
    setenv("EXACTREF_INTERP_FAULT", "internal", 1);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, f, sizeof f);
    lscalar(&L, 0);
    lrun(&L, m, "ok_kernel");
    unsetenv("EXACTREF_INTERP_FAULT");
    ck_assert_int_eq(L.l.kind, ER_INTERP_INTERNAL);
    ck_assert_msg(strstr(L.msg, "refuse.mlir:") != NULL, "%s", L.msg);
    er_interp_free(m);
}
END_TEST

START_TEST(t_parse_errors)
{
    static const struct { const char *text, *where, *what; } cases[] = {
        {"entry @k() {\n  %x = addf %a, %a : tile<f32>\n}\n", "t.mlir:2:13:", "undefined value %a"},
        {"entry @k() {\n  %x = constant <f32: 1> : tile<f32>\n}\n", "t.mlir:2:23:", "decimal point"},
        {"entry @k() {\n  %x = constant <i8: 300> : tile<i8>\n}\n", "t.mlir:2:22:", "does not fit i8"},
        {"entry @k() {\n  %x = constant <f32: 1.0> : tile<3xf32>\n}\n", "t.mlir:2:", "power of two"},
        {"cuda_tile.module @m {\n  entry @k() {\n    return\n", "t.mlir:", "unterminated"},
        {"entry @k(%a: tile<4xf32>) {\n}\n", "t.mlir:1:10:", "0-d tile"},
        {"entry @k() {\n  %x = constant <f32: [1.0, 2.0]> : tile<4xf32>\n}\n", "t.mlir:2:", "2 elements"},
        {"entry @k() {\n  %a:2 = get_tile_block_id : tile<i32>\n}\n", "t.mlir:2:10:", "3 results"},
        {"entry @k() {\n  %x = addf %x, %x : tile<f32>\n}\n", "t.mlir:2:13:", "undefined value %x"},
        {"entry @k() {\n  %x = constant <f32: 1.0> tile<f32>\n}\n", "t.mlir:2:28:", "expected ':'"},
        {"", "<input>", "no entry"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        er_interp_module *m = NULL;
        char msg[512];
        const char *file = cases[i].text[0] ? "t.mlir" : NULL;
        ck_assert_msg(er_interp_parse(cases[i].text, strlen(cases[i].text), file, &m, msg, sizeof msg) == ER_EINVAL, "case %zu parsed", i);
        ck_assert(m == NULL);
        ck_assert_msg(strstr(msg, cases[i].where) && strstr(msg, cases[i].what), "case %zu: '%s' (want '%s' ... '%s')", i, msg, cases[i].where, cases[i].what);
    }
}
END_TEST

START_TEST(t_syntax)
{
    /* bare entries, the generic prefix forms, hex and nested constants, %x:2 / %x#1, globals */
    static const char *text =
        "global @g alignment = 4 <i32: [5, 6]> : !cuda_tile.tile<2xi32>\n"
        "cuda_tile.entry @k(%out: !cuda_tile.tile<!cuda_tile.ptr<i32>>) {\n"
        "  %c = cuda_tile.constant <i16: 0xFFFF> : tile<i16>\n"
        "  %w = exti %c signed : tile<i16> -> tile<i32>\n"
        "  %h = constant <f32 : 0x3F800000> : tile<f32>\n"
        "  %n = constant <i32: [[1, 2], [3, 4]]> : tile<2x2xi32>\n"
        "  %r:2 = get_index_space_shape %pv : partition_view<tile=(2x2), tensor_view<4x4xi32, strides=[4,1]>, dim_map=[1, 0]> -> tile<i32>\n"
        "}\n";
    static const char *text2 =
        "entry @k(%out: tile<ptr<i32>>) {\n"
        "  %c = constant <i16: 0xFFFF> : tile<i16>\n"
        "  %w = exti %c signed : tile<i16> -> tile<i32>\n"
        "  %g = get_global @g : tile<ptr<i32>>\n"
        "  %gv, %gt = load_ptr_tko weak %g : tile<ptr<i32>> -> tile<i32>, token\n"
        "  %s = addi %w, %gv : tile<i32>\n"
        "  %n = constant <i32: [[1, 2], [3, 4]]> : tile<2x2xi32>\n"
        "  %p = permute %n [1, 0] : tile<2x2xi32> -> tile<2x2xi32>\n"
        "  %r = reshape %p : tile<2x2xi32> -> tile<4xi32>\n"
        "  %c1 = constant <i32: 1> : tile<i32>\n"
        "  %e = extract %r[%c1] : tile<4xi32> -> tile<1xi32>\n"
        "  %e0 = reshape %e : tile<1xi32> -> tile<i32>\n"
        "  %t = add_more_to_be_replaced\n"
        "}\n";
    er_interp_module *m = NULL;
    char msg[512];
    /* text: an undefined %pv is a parse error naming it */
    ck_assert_int_eq(er_interp_parse(text, strlen(text), "s.mlir", &m, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "s.mlir:7:32:") && strstr(msg, "%pv"), "%s", msg);
    {
        char buf[2048];
        char *q;
        launch L;
        int32_t out[4] = {0};
        snprintf(buf, sizeof buf, "global @g alignment = 4 <i32: [5, 6]> : !cuda_tile.tile<2xi32>\n%s", text2);
        q = strstr(buf, "  %t = add_more_to_be_replaced\n");
        snprintf(q, sizeof buf - (size_t)(q - buf),
                 "  %%f = addi %%s, %%e0 : tile<i32>\n"
                 "  %%t = store_ptr_tko weak %%out, %%f : tile<ptr<i32>>, tile<i32> -> token\n}\n");
        ck_assert_msg(er_interp_parse(buf, strlen(buf), "s.mlir", &m, msg, sizeof msg) == ER_OK, "%s", msg);
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_I32, out, sizeof out);
        lrun_ok(&L, m, "@k");
        /* -1 + 5 + permuted [[1,3],[2,4]] flattened [1,3,2,4], element 1 = 3 */
        ck_assert_int_eq(out[0], 7);
        er_interp_free(m);
    }
}
END_TEST

/* ---------------------------------------------------------------- the peers' regressions */

START_TEST(t_peers)
{
    er_interp_module *m = load("peers.mlir");
    launch L;
    int i;
    char why[256];
    mpfr_t x, y, z, r;
    mpfr_inits2(EXACT_PREC, x, y, z, r, (mpfr_ptr)0);
    {
        /* Triton 11584: bf16 products of values, not of bit patterns */
        uint16_t a[16], b[16], c[16];
        for (i = 0; i < 16; i++) {
            a[i] = (uint16_t)rnd_float(ER_FMT_BF16, 20);
            b[i] = (uint16_t)rnd_float(ER_FMT_BF16, 20);
        }
        a[0] = 0x3FC0; /* 1.5 */
        b[0] = 0x4020; /* 2.5 */
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_BF16, a, sizeof a);
        lbuf(&L, ER_FMT_BF16, b, sizeof b);
        lbuf(&L, ER_FMT_BF16, c, sizeof c);
        lrun_ok(&L, m, "mul_bf16");
        ck_assert_uint_eq(c[0], 0x4070); /* 3.75 */
        for (i = 0; i < 16; i++) {
            val(ER_FMT_BF16, a[i], x);
            val(ER_FMT_BF16, b[i], y);
            mpfr_mul(z, x, y, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_BF16, c[i], z, ER_RND_NEAREST_EVEN, why, sizeof why), "bf16 product %d: %s", i, why);
        }
    }
    {
        /* Triton 8322: nearest-even rounds a tie to even, and up only above the half */
        uint32_t a[16] = {0x3F808000, 0x3F818000, 0x3F808001, 0x3F80FFFF, 0xBF808000, 0xBF818000, 0x7F7FFFFF, 0x00008000,
                          0x3F7FC000, 0x3F7F8000, 0x00010000, 0x80018000, 0x3F800000, 0x47000080, 0x47000180, 0x3F80C000};
        uint16_t c[16];
        static const uint16_t want[4] = {0x3F80, 0x3F82, 0x3F81, 0x3F81};
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F32, a, sizeof a);
        lbuf(&L, ER_FMT_BF16, c, sizeof c);
        lrun_ok(&L, m, "cvt_bf16");
        for (i = 0; i < 4; i++) ck_assert_uint_eq(c[i], want[i]);
        for (i = 0; i < 16; i++) {
            val(ER_FMT_F32, a[i], x);
            ck_assert_msg(oracle_ok(ER_FMT_BF16, c[i], x, ER_RND_NEAREST_EVEN, why, sizeof why), "f32 0x%08x to bf16: %s", a[i], why);
        }
    }
    {
        /* PR 11897: the exponent carry of an fp8 downcast (126.24 -> 128), subnormals rounded once */
        float fv[16] = {126.24f, 124.0f, 240.0f, 464.0f, 0.0029296875f, 0.0009765625f, -126.24f, 0.00146484375f,
                        17.0f, 19.0f, 1e-6f, 447.9f, 3.0f, 0.013671875f, 0.01171875f, 0.0f};
        uint8_t c[16];
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F32, fv, sizeof fv);
        lbuf(&L, ER_FMT_F8E4M3FN, c, sizeof c);
        lrun_ok(&L, m, "cvt_e4m3");
        ck_assert_uint_eq(c[0], 0x70); /* 128 = 2^7: exponent field 14 */
        for (i = 0; i < 16; i++) {
            uint32_t u;
            memcpy(&u, &fv[i], 4);
            val(ER_FMT_F32, u, x);
            ck_assert_msg(oracle_ok(ER_FMT_F8E4M3FN, c[i], x, ER_RND_NEAREST_EVEN, why, sizeof why), "%a to e4m3 = 0x%02x: %s", fv[i], c[i], why);
        }
    }
    {
        /* Triton 11610: fma rounded once (through binary64 it rounds twice: the first case) */
        uint32_t a[16], b[16], c[16], d[16];
        int twice_differs = 0;
        for (i = 0; i < 16; i++) {
            a[i] = (uint32_t)rnd_float(ER_FMT_F32, 10);
            b[i] = (uint32_t)rnd_float(ER_FMT_F32, 10);
            c[i] = (uint32_t)rnd_float(ER_FMT_F32, 10);
        }
        a[0] = b[0] = 0x3F800800; /* 1 + 2^-12: a b = 1 + 2^-11 + 2^-24, a tie in binary32 */
        c[0] = 0x21800000;        /* 2^-60 breaks the tie upward */
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F32, a, sizeof a);
        lbuf(&L, ER_FMT_F32, b, sizeof b);
        lbuf(&L, ER_FMT_F32, c, sizeof c);
        lbuf(&L, ER_FMT_F32, d, sizeof d);
        lrun_ok(&L, m, "fma_f32");
        ck_assert_uint_eq(d[0], 0x3F801001);
        for (i = 0; i < 16; i++) {
            float fa, fb, fc, twice;
            uint32_t ut;
            val(ER_FMT_F32, a[i], x);
            val(ER_FMT_F32, b[i], y);
            val(ER_FMT_F32, c[i], z);
            mpfr_mul(r, x, y, MPFR_RNDN);
            mpfr_add(r, r, z, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_F32, d[i], r, ER_RND_NEAREST_EVEN, why, sizeof why), "fma %d: %s", i, why);
            memcpy(&fa, &a[i], 4);
            memcpy(&fb, &b[i], 4);
            memcpy(&fc, &c[i], 4);
            twice = (float)fma((double)fa, (double)fb, (double)fc);
            memcpy(&ut, &twice, 4);
            twice_differs += ut != d[i];
        }
        ck_assert_int_ge(twice_differs, 1);
    }
    {
        /* bytecode2tileir: rounding attributes are honoured (and f32's flush_to_zero) */
        uint32_t a[16], b[16], rz[16], rd[16], ru[16], rf[16];
        for (i = 0; i < 16; i++) {
            a[i] = (uint32_t)rnd_float(ER_FMT_F32, 40);
            b[i] = (uint32_t)rnd_float(ER_FMT_F32, 40);
        }
        a[1] = 0x00000005; /* subnormal inputs: flushed by flush_to_zero (else the sum is 0x00000008) */
        b[1] = 0x00000003;
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F32, a, sizeof a);
        lbuf(&L, ER_FMT_F32, b, sizeof b);
        lbuf(&L, ER_FMT_F32, rz, sizeof rz);
        lbuf(&L, ER_FMT_F32, rd, sizeof rd);
        lbuf(&L, ER_FMT_F32, ru, sizeof ru);
        lbuf(&L, ER_FMT_F32, rf, sizeof rf);
        lrun_ok(&L, m, "add_dirs");
        for (i = 0; i < 16; i++) {
            val(ER_FMT_F32, a[i], x);
            val(ER_FMT_F32, b[i], y);
            mpfr_add(z, x, y, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_F32, rz[i], z, ER_RND_ZERO, why, sizeof why), "addf zero %d: %s", i, why);
            mpfr_sub(z, x, y, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_F32, rd[i], z, ER_RND_NEGATIVE_INF, why, sizeof why), "subf negative_inf %d: %s", i, why);
            mpfr_mul(z, x, y, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_F32, ru[i], z, ER_RND_POSITIVE_INF, why, sizeof why), "mulf positive_inf %d: %s", i, why);
        }
        ck_assert_uint_eq(rf[1], 0x00000000);
        ck_assert_uint_eq(rz[1], 0x00000008);
    }
    {
        uint16_t a[16], b[16], q[16], s[16];
        for (i = 0; i < 16; i++) {
            a[i] = (uint16_t)rnd_float(ER_FMT_F16, 8);
            b[i] = (uint16_t)rnd_float(ER_FMT_F16, 8);
        }
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F16, a, sizeof a);
        lbuf(&L, ER_FMT_F16, b, sizeof b);
        lbuf(&L, ER_FMT_F16, q, sizeof q);
        lbuf(&L, ER_FMT_F16, s, sizeof s);
        lrun_ok(&L, m, "div_sqrt_f16");
        for (i = 0; i < 16; i++) {
            val(ER_FMT_F16, a[i], x);
            val(ER_FMT_F16, b[i], y);
            mpfr_div(z, x, y, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_F16, q[i], z, ER_RND_POSITIVE_INF, why, sizeof why), "divf %d: %s", i, why);
            mpfr_abs(x, x, MPFR_RNDN);
            mpfr_sqrt(z, x, MPFR_RNDN);
            ck_assert_msg(oracle_ok(ER_FMT_F16, s[i], z, ER_RND_ZERO, why, sizeof why), "sqrt %d: %s", i, why);
        }
    }
    mpfr_clears(x, y, z, r, (mpfr_ptr)0);
    er_interp_free(m);
}
END_TEST


/* The host-FPU path (nearest even + - * / sqrt in f64, f32, f16, bf16) gives the exact path's bits, on
 * random patterns of every class (subnormals, infinities, NaNs, zeros included); and a sample of both
 * against the oracle. */
START_TEST(t_fast_path)
{
    static const int fmts[] = {ER_FMT_F64, ER_FMT_F32, ER_FMT_F16, ER_FMT_BF16};
    size_t f;
    long n, fast = 0;
    char why[256];
    mpfr_t x, y, z;
    mpfr_inits2(EXACT_PREC, x, y, z, (mpfr_ptr)0);
    for (f = 0; f < 4; f++) {
        int fmt = fmts[f], w = of_get(fmt)->width;
        for (n = 0; n < 200000; n++) {
            uint64_t a = er_test_rand(&rng), b = er_test_rand(&rng), o, e = 0;
            int code = (int)(n % 5);
            if (w < 64) {
                a &= of_mask(w);
                b &= of_mask(w);
            }
            if (n % 7 == 0) a &= ~(of_mask(of_get(fmt)->ebits) << of_get(fmt)->mbits) | (UINT64_C(1) << of_get(fmt)->mbits); /* tiny */
            if (n % 11 == 0) b = a ^ (UINT64_C(1) << (w - 1)); /* cancellation */
            if (!it_f_fast(code, fmt, a, b, &o)) continue;
            fast++;
            switch (code) {
            case 0: e = it_f_add(fmt, a, b, 0, ER_RND_NEAREST_EVEN, 0u); break;
            case 1: e = it_f_add(fmt, a, b, 1, ER_RND_NEAREST_EVEN, 0u); break;
            case 2: e = it_f_mul(fmt, a, b, ER_RND_NEAREST_EVEN, 0u); break;
            case 3: e = it_f_div(fmt, a, b, ER_RND_NEAREST_EVEN, 0u); break;
            default: e = it_f_sqrt(fmt, a, ER_RND_NEAREST_EVEN, 0u); break;
            }
            ck_assert_msg(o == e, "%s op %d of 0x%llx, 0x%llx: host 0x%llx, exact 0x%llx", of_get(fmt)->name, code, (unsigned long long)a,
                          (unsigned long long)b, (unsigned long long)o, (unsigned long long)e);
            if (n % 97 == 0) {
                of_val va, vb;
                of_val_init(&va);
                of_val_init(&vb);
                of_decode(of_get(fmt), a, &va);
                of_decode(of_get(fmt), b, &vb);
                if (va.cls != OF_NAN && va.cls != OF_INF && vb.cls != OF_NAN && vb.cls != OF_INF && !(code == 3 && vb.cls == OF_ZERO) &&
                    !(code == 4 && (va.sign && va.cls != OF_ZERO))) {
                    mpfr_set(x, va.v, MPFR_RNDN);
                    mpfr_set(y, vb.v, MPFR_RNDN);
                    if (va.cls == OF_ZERO && va.sign) mpfr_set_zero(x, -1);
                    if (vb.cls == OF_ZERO && vb.sign) mpfr_set_zero(y, -1);
                    switch (code) {
                    case 0: mpfr_add(z, x, y, MPFR_RNDN); break;
                    case 1: mpfr_sub(z, x, y, MPFR_RNDN); break;
                    case 2: mpfr_mul(z, x, y, MPFR_RNDN); break;
                    case 3: mpfr_div(z, x, y, MPFR_RNDN); break;
                    default: mpfr_sqrt(z, x, MPFR_RNDN); break;
                    }
                    ck_assert_msg(oracle_ok(fmt, o, z, ER_RND_NEAREST_EVEN, why, sizeof why), "%s op %d: %s", of_get(fmt)->name, code, why);
                }
                of_val_clear(&va);
                of_val_clear(&vb);
            }
        }
    }
    ck_assert_int_gt(fast, 500000);
    mpfr_clears(x, y, z, (mpfr_ptr)0);
}
END_TEST


/* ---------------------------------------------------------------- cuTile-generated kernels */

/* The module of a generated kernel and its one entry's name. */
static er_interp_module *load_cutile(const char *name, const char **kernel)
{
    char path[256];
    er_interp_module *m;
    snprintf(path, sizeof path, "../cutile/%s", name);
    m = load(path);
    ck_assert_int_eq(er_interp_kernel_count(m), 1);
    *kernel = er_interp_kernel_name(m, 0);
    return m;
}

/* cuTile's calling convention: each array as its pointer, then its shape, then its strides (elements). */
static void lbuf_ct(launch *L, int fmt, void *data, size_t nbytes, int ndim, const int64_t *shape)
{
    int d;
    int64_t st = 1, strides[4];
    lbuf(L, fmt, data, nbytes);
    for (d = ndim - 1; d >= 0; d--) {
        strides[d] = st;
        st *= shape[d];
    }
    for (d = 0; d < ndim; d++) lscalar(L, (uint64_t)shape[d]);
    for (d = 0; d < ndim; d++) lscalar(L, (uint64_t)strides[d]);
}

START_TEST(t_cutile_matmul)
{
    static const struct { const char *file; int fmt, eb; } cases[] = {
        {"cutile_matmul_f16.mlir", ER_FMT_F16, 2}, {"cutile_matmul_bf16.mlir", ER_FMT_BF16, 2}, {"cutile_matmul_f8e4m3.mlir", ER_FMT_F8E4M3FN, 1}};
    enum { M = 40, N = 48, K = 40 };
    size_t c;
    for (c = 0; c < 3; c++) {
        const char *k;
        er_interp_module *m = load_cutile(cases[c].file, &k);
        uint8_t *A = (uint8_t *)malloc(M * K * 2), *B = (uint8_t *)malloc(K * N * 2);
        float C[M * N];
        int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
        launch L;
        int i, j, fmt = cases[c].fmt;
        mpfr_t acc;
        char why[256];
        mpfr_init2(acc, EXACT_PREC);
        for (i = 0; i < M * K; i++) put(A, cases[c].eb, i, fmt == ER_FMT_F8E4M3FN ? (er_test_rand(&rng) & 0x7E) | (er_test_rand(&rng) & 0x80) : rnd_float(fmt, 5));
        for (i = 0; i < K * N; i++) put(B, cases[c].eb, i, fmt == ER_FMT_F8E4M3FN ? (er_test_rand(&rng) & 0x7E) | (er_test_rand(&rng) & 0x80) : rnd_float(fmt, 5));
        lset(&L, 2, 2);
        lbuf_ct(&L, fmt, A, (size_t)M * K * cases[c].eb, 2, sa);
        lbuf_ct(&L, fmt, B, (size_t)K * N * cases[c].eb, 2, sb);
        lbuf_ct(&L, ER_FMT_F32, C, sizeof C, 2, sc);
        lrun_ok(&L, m, k);
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                uint32_t u;
                memcpy(&u, &C[i * N + j], 4);
                ref_gemm_steps(fmt, fmt, A, B, M, N, K, K, N, 16, i, j, acc);
                ck_assert_msg(oracle_ok(ER_FMT_F32, u, acc, ER_RND_NEAREST_EVEN, why, sizeof why), "%s C[%d][%d]: %s", cases[c].file, i, j, why);
            }
        mpfr_clear(acc);
        free(A);
        free(B);
        er_interp_free(m);
    }
}
END_TEST

START_TEST(t_cutile_others)
{
    const char *k;
    er_interp_module *m;
    launch L;
    int i, j, t;
    char why[256];
    mpfr_t x, y, s, e[16], mx, sum;
    mpfr_inits2(EXACT_PREC, x, y, s, mx, sum, (mpfr_ptr)0);
    for (t = 0; t < 16; t++) mpfr_init2(e[t], EXACT_PREC);
    {
        /* vector add: a partial last tile */
        float a[40], b[40], c[40];
        int64_t n[1] = {40};
        m = load_cutile("cutile_vadd.mlir", &k);
        for (i = 0; i < 40; i++) {
            uint32_t ua = (uint32_t)rnd_float(ER_FMT_F32, 20), ub = (uint32_t)rnd_float(ER_FMT_F32, 20);
            memcpy(&a[i], &ua, 4);
            memcpy(&b[i], &ub, 4);
        }
        lset(&L, 3, 1);
        lbuf_ct(&L, ER_FMT_F32, a, sizeof a, 1, n);
        lbuf_ct(&L, ER_FMT_F32, b, sizeof b, 1, n);
        lbuf_ct(&L, ER_FMT_F32, c, sizeof c, 1, n);
        lrun_ok(&L, m, k);
        for (i = 0; i < 40; i++) {
            uint32_t u;
            memcpy(&u, &a[i], 4);
            val(ER_FMT_F32, u, x);
            memcpy(&u, &b[i], 4);
            val(ER_FMT_F32, u, y);
            mpfr_add(s, x, y, MPFR_RNDN);
            memcpy(&u, &c[i], 4);
            ck_assert_msg(oracle_ok(ER_FMT_F32, u, s, ER_RND_NEAREST_EVEN, why, sizeof why), "vadd %d: %s", i, why);
        }
        er_interp_free(m);
    }
    {
        /* softmax, and reduce + scan: row max, exp, row sums in index order, cumulative sums */
        float X[8 * 16], Y[8 * 16], S[8], P[8 * 16];
        int64_t sx[2] = {8, 16}, ss[1] = {8};
        for (i = 0; i < 8 * 16; i++) {
            uint32_t u = (uint32_t)rnd_float(ER_FMT_F32, 3);
            memcpy(&X[i], &u, 4);
        }
        m = load_cutile("cutile_softmax.mlir", &k);
        lset(&L, 2, 1);
        lbuf_ct(&L, ER_FMT_F32, X, sizeof X, 2, sx);
        lbuf_ct(&L, ER_FMT_F32, Y, sizeof Y, 2, sx);
        lrun_ok(&L, m, k);
        er_interp_free(m);
        m = load_cutile("cutile_reduce_scan.mlir", &k);
        lset(&L, 2, 1);
        lbuf_ct(&L, ER_FMT_F32, X, sizeof X, 2, sx);
        lbuf_ct(&L, ER_FMT_F32, S, sizeof S, 1, ss);
        lbuf_ct(&L, ER_FMT_F32, P, sizeof P, 2, sx);
        lrun_ok(&L, m, k);
        er_interp_free(m);
        for (i = 0; i < 8; i++) {
            uint32_t u;
            mpfr_set_inf(mx, -1);
            mpfr_set_zero(sum, 1);
            for (t = 0; t < 16; t++) {
                memcpy(&u, &X[i * 16 + t], 4);
                val(ER_FMT_F32, u, x);
                if (mpfr_cmp(x, mx) > 0) mpfr_set(mx, x, MPFR_RNDN);
                mpfr_add(sum, x, sum, MPFR_RNDN);
                oracle_round(ER_FMT_F32, sum, ER_RND_NEAREST_EVEN, sum);
                memcpy(&u, &P[i * 16 + t], 4);
                ck_assert_msg(oracle_ok(ER_FMT_F32, u, sum, ER_RND_NEAREST_EVEN, why, sizeof why), "cumsum [%d][%d]: %s", i, t, why);
            }
            memcpy(&u, &S[i], 4);
            ck_assert_msg(oracle_ok(ER_FMT_F32, u, sum, ER_RND_NEAREST_EVEN, why, sizeof why), "sum [%d]: %s", i, why);
            mpfr_set_zero(sum, 1);
            for (t = 0; t < 16; t++) {
                memcpy(&u, &X[i * 16 + t], 4);
                val(ER_FMT_F32, u, x);
                mpfr_sub(s, x, mx, MPFR_RNDN);
                oracle_round(ER_FMT_F32, s, ER_RND_NEAREST_EVEN, s);
                mpfr_exp(y, s, MPFR_RNDN);
                oracle_round(ER_FMT_F32, y, ER_RND_NEAREST_EVEN, e[t]);
                mpfr_add(sum, e[t], sum, MPFR_RNDN);
                oracle_round(ER_FMT_F32, sum, ER_RND_NEAREST_EVEN, sum);
            }
            for (t = 0; t < 16; t++) {
                mpfr_div(y, e[t], sum, MPFR_RNDN);
                memcpy(&u, &Y[i * 16 + t], 4);
                ck_assert_msg(oracle_ok(ER_FMT_F32, u, y, ER_RND_NEAREST_EVEN, why, sizeof why), "softmax [%d][%d]: %s", i, t, why);
            }
        }
    }
    {
        /* the fused epilogue and the MXFP8 product */
        uint16_t A[16 * 32], B[32 * 16];
        float bias[16], C[256];
        uint8_t D[256], A8[16 * 64], B8[64 * 16], SA[32], SB[32];
        uint32_t C0[256];
        int64_t sa[2] = {16, 32}, sb[2] = {32, 16}, sn[1] = {16}, sd[2] = {16, 16}, s8a[2] = {16, 64}, s8b[2] = {64, 16}, ssa[2] = {16, 2}, ssb[2] = {2, 16};
        mpfr_t acc, bv, p, sc;
        mpfr_inits2(EXACT_PREC, acc, bv, p, sc, (mpfr_ptr)0);
        for (i = 0; i < 16 * 32; i++) {
            A[i] = (uint16_t)rnd_float(ER_FMT_F16, 3);
            B[i] = (uint16_t)rnd_float(ER_FMT_F16, 3);
        }
        for (i = 0; i < 16; i++) {
            uint32_t u = (uint32_t)rnd_float(ER_FMT_F32, 4);
            memcpy(&bias[i], &u, 4);
        }
        m = load_cutile("cutile_epilogue.mlir", &k);
        lset(&L, 1, 1);
        lbuf_ct(&L, ER_FMT_F16, A, sizeof A, 2, sa);
        lbuf_ct(&L, ER_FMT_F16, B, sizeof B, 2, sb);
        lbuf_ct(&L, ER_FMT_F32, bias, sizeof bias, 1, sn);
        lbuf_ct(&L, ER_FMT_F8E4M3FN, D, sizeof D, 2, sd);
        lrun_ok(&L, m, k);
        er_interp_free(m);
        for (i = 0; i < 16; i++)
            for (j = 0; j < 16; j++) {
                uint32_t ub;
                ref_gemm_steps(ER_FMT_F16, ER_FMT_F16, A, B, 16, 16, 32, 32, 16, 32, i, j, acc);
                memcpy(&ub, &bias[j], 4);
                val(ER_FMT_F32, ub, bv);
                mpfr_add(s, acc, bv, MPFR_RNDN);
                oracle_round(ER_FMT_F32, s, ER_RND_NEAREST_EVEN, s);
                if (mpfr_sgn(s) <= 0) mpfr_set_zero(s, 1);
                ck_assert_msg(oracle_ok(ER_FMT_F8E4M3FN, D[i * 16 + j], s, ER_RND_NEAREST_EVEN, why, sizeof why), "epilogue [%d][%d]: %s", i, j, why);
            }
        for (i = 0; i < 16 * 64; i++) {
            do A8[i] = (uint8_t)er_test_rand(&rng); while ((A8[i] & 0x7F) == 0x7F);
            do B8[i] = (uint8_t)er_test_rand(&rng); while ((B8[i] & 0x7F) == 0x7F);
        }
        for (i = 0; i < 32; i++) {
            SA[i] = (uint8_t)(123 + (int)(er_test_rand(&rng) % 9));
            SB[i] = (uint8_t)(123 + (int)(er_test_rand(&rng) % 9));
        }
        for (i = 0; i < 256; i++) {
            C0[i] = (uint32_t)rnd_float(ER_FMT_F32, 8);
            memcpy(&C[i], &C0[i], 4);
        }
        m = load_cutile("cutile_mxfp8.mlir", &k);
        lset(&L, 1, 1);
        lbuf_ct(&L, ER_FMT_F8E4M3FN, A8, sizeof A8, 2, s8a);
        lbuf_ct(&L, ER_FMT_F8E8M0FNU, SA, sizeof SA, 2, ssa);
        lbuf_ct(&L, ER_FMT_F8E4M3FN, B8, sizeof B8, 2, s8b);
        lbuf_ct(&L, ER_FMT_F8E8M0FNU, SB, sizeof SB, 2, ssb);
        lbuf_ct(&L, ER_FMT_F32, C, sizeof C, 2, sd);
        lrun_ok(&L, m, k);
        er_interp_free(m);
        for (i = 0; i < 16; i++)
            for (j = 0; j < 16; j++) {
                uint32_t u;
                val(ER_FMT_F32, C0[i * 16 + j], acc);
                for (t = 0; t < 64; t++) {
                    val(ER_FMT_F8E4M3FN, A8[i * 64 + t], x);
                    val(ER_FMT_F8E8M0FNU, SA[i * 2 + t / 32], sc);
                    mpfr_mul(x, x, sc, MPFR_RNDN);
                    val(ER_FMT_F8E4M3FN, B8[t * 16 + j], y);
                    val(ER_FMT_F8E8M0FNU, SB[(t / 32) * 16 + j], sc);
                    mpfr_mul(y, y, sc, MPFR_RNDN);
                    mpfr_mul(p, x, y, MPFR_RNDN);
                    ck_assert(mpfr_add(acc, acc, p, MPFR_RNDN) == 0);
                }
                memcpy(&u, &C[i * 16 + j], 4);
                ck_assert_msg(oracle_ok(ER_FMT_F32, u, acc, ER_RND_NEAREST_EVEN, why, sizeof why), "mxfp8 [%d][%d]: %s", i, j, why);
            }
        mpfr_clears(acc, bv, p, sc, (mpfr_ptr)0);
    }
    for (t = 0; t < 16; t++) mpfr_clear(e[t]);
    mpfr_clears(x, y, s, mx, sum, (mpfr_ptr)0);
}
END_TEST


START_TEST(t_formats)
{
    er_interp_module *m = load("formats.mlir");
    float xv[16];
    uint8_t a[16], b[16], c[4];
    static const double kv[4] = {1.1, 1.0625, -0.3, 300.0};
    launch L;
    int i;
    char why[256];
    mpfr_t x;
    mpfr_init2(x, EXACT_PREC);
    for (i = 0; i < 16; i++) xv[i] = (float)((int)(er_test_rand(&rng) % 2001) - 1000) / 128.0f;
    xv[0] = 100.0f; /* beyond f6E2M3FN's 7.5 */
    xv[1] = -0.0f;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, xv, sizeof xv);
    lbuf(&L, ER_FMT_F6E2M3FN, a, sizeof a);
    lbuf(&L, ER_FMT_F8E4M3FNUZ, b, sizeof b);
    lbuf(&L, ER_FMT_F8E4M3FN, c, sizeof c);
    lrun_ok(&L, m, "narrow");
    for (i = 0; i < 16; i++) {
        uint32_t u;
        memcpy(&u, &xv[i], 4);
        val(ER_FMT_F32, u, x);
        ck_assert_msg(oracle_ok(ER_FMT_F6E2M3FN, a[i], x, ER_RND_NEAREST_EVEN, why, sizeof why), "f6E2M3FN %d (%a) = 0x%02x: %s", i, xv[i], a[i], why);
        ck_assert_msg(oracle_ok(ER_FMT_F8E4M3FNUZ, b[i], x, ER_RND_NEAREST_EVEN, why, sizeof why), "f8E4M3FNUZ %d = 0x%02x: %s", i, b[i], why);
    }
    ck_assert_uint_eq(a[0], 0x1F); /* saturates at 7.5: no infinity, no NaN */
    /* constants: binary64 first, then nearest even (1.1 -> 1.125, the tie 1.0625 -> 1.0) */
    ck_assert_uint_eq(c[0], 0x39);
    ck_assert_uint_eq(c[1], 0x38);
    for (i = 0; i < 4; i++) {
        mpfr_set_d(x, kv[i], MPFR_RNDN);
        ck_assert_msg(oracle_ok(ER_FMT_F8E4M3FN, c[i], x, ER_RND_NEAREST_EVEN, why, sizeof why), "constant %g = 0x%02x: %s", kv[i], c[i], why);
    }
    mpfr_clear(x);
    er_interp_free(m);
}
END_TEST


START_TEST(t_argmax)
{
    er_interp_module *m = load("argmax.mlir");
    float x[16], vmax, suf[16];
    int32_t imax;
    launch L;
    int i, best = 0;
    for (i = 0; i < 16; i++) x[i] = (float)((int)(er_test_rand(&rng) % 21) - 10);
    x[3] = x[11] = 50.0f; /* a tie: the first maximum wins */
    for (i = 1; i < 16; i++)
        if (x[i] > x[best]) best = i;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, x, sizeof x);
    lbuf(&L, ER_FMT_F32, &vmax, sizeof vmax);
    lbuf(&L, ER_FMT_I32, &imax, sizeof imax);
    lbuf(&L, ER_FMT_F32, suf, sizeof suf);
    lrun_ok(&L, m, "argmax");
    {
        float f50 = 50.0f;
        ck_assert(memcmp(&vmax, &f50, 4) == 0);
    }
    ck_assert_int_eq(imax, best);
    ck_assert_int_eq(best, 3);
    for (i = 0; i < 16; i++) {
        float want = x[i];
        int j;
        for (j = i; j < 16; j++)
            if (x[j] > want) want = x[j];
        ck_assert_msg(memcmp(&suf[i], &want, 4) == 0, "suffix max %d: %g, want %g", i, suf[i], want);
    }
    er_interp_free(m);
}
END_TEST

/* Issue 33: the limits (nesting, steps, work, the grid), print_tko's buffer cut at a whole line, names
 * defined twice, splat constants of a large tile and a splat global, through the library. */
static er_status parse_str(const char *text, er_interp_module **m, char *msg, size_t n)
{
    *m = NULL;
    return er_interp_parse(text, strlen(text), "h.mlir", m, msg, n);
}

static char *nested_ifs(int depth)
{
    size_t cap = (size_t)depth * 16 + 512, k = 0;
    char *t = (char *)malloc(cap);
    int i;
    ck_assert(t != NULL);
    k += (size_t)snprintf(t + k, cap - k, "entry @k(%%p: tile<ptr<i32>>) {\n%%c = constant <i32: 5> : tile<i32>\n%%t = constant <i1: true> : tile<i1>\n");
    for (i = 0; i < depth; i++) k += (size_t)snprintf(t + k, cap - k, "if %%t {\n");
    k += (size_t)snprintf(t + k, cap - k, "%%s = store_ptr_tko weak %%p, %%c : tile<ptr<i32>>, tile<i32> -> token\n");
    for (i = 0; i < depth; i++) k += (size_t)snprintf(t + k, cap - k, "}\n");
    snprintf(t + k, cap - k, "}\n");
    return t;
}

START_TEST(t_limits)
{
    char msg[1024];
    er_interp_module *m;
    launch L;
    int32_t out = 0;
    char *t;
    /* nesting: 64 levels parse and run, 65 is an error at the 65th '{' (line 3 + 65) */
    t = nested_ifs(64);
    ck_assert_msg(parse_str(t, &m, msg, sizeof msg) == ER_OK, "%s", msg);
    free(t);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_I32, &out, sizeof out);
    lrun_ok(&L, m, "k");
    ck_assert_int_eq(out, 5);
    er_interp_free(m);
    t = nested_ifs(65);
    ck_assert(parse_str(t, &m, msg, sizeof msg) == ER_EINVAL && m == NULL);
    ck_assert_msg(strstr(msg, "h.mlir:68:7: regions nested more than 64 deep") != NULL, "%s", msg);
    free(t);
    /* a name defined twice, in one region or shadowing an enclosing one; a sibling may reuse it */
    ck_assert(parse_str("entry @k() {\n  %a = constant <i32: 1> : tile<i32>\n  %a = constant <i32: 2> : tile<i32>\n}\n", &m, msg, sizeof msg) == ER_EINVAL);
    ck_assert_msg(strstr(msg, "h.mlir:3:3: redefinition of %a (defined at 2:3)") != NULL, "%s", msg);
    ck_assert(parse_str("entry @k() {\n  %t = constant <i1: true> : tile<i1>\n  if %t {\n    %t = constant <i1: true> : tile<i1>\n  }\n}\n", &m, msg, sizeof msg) == ER_EINVAL);
    ck_assert_msg(strstr(msg, "h.mlir:4:5: redefinition of %t (defined at 2:3)") != NULL, "%s", msg);
    ck_assert_msg(parse_str("entry @k() {\n  %t = constant <i1: true> : tile<i1>\n  if %t {\n    %a = constant <i1: true> : tile<i1>\n  } else {\n    %a = constant <i1: false> : tile<i1>\n  }\n  %a = constant <i1: false> : tile<i1>\n}\n",
                            &m, msg, sizeof msg) == ER_OK, "%s", msg);
    er_interp_free(m);
    /* an unknown op's attribute 'name =' at the end of the text: the skip stepped past the end token
     * and read beyond the token array (ASan, from the fuzzer) */
    ck_assert(parse_str("entry @k(%p: tile<ptr<i32>>) {\n  %c2 = const, pe = [16], relexed = \n", &m, msg, sizeof msg) == ER_EINVAL && m == NULL);
    ck_assert_msg(strstr(msg, "h.mlir:") != NULL, "%s", msg);
    /* an entry that defines no value (its empty value table was copied from NULL: UBSan) */
    ck_assert_msg(parse_str("entry @k() {\n}\n", &m, msg, sizeof msg) == ER_OK, "%s", msg);
    lset(&L, 1, 1);
    lrun_ok(&L, m, "k");
    er_interp_free(m);
    /* the step limit's default, and the work limit (operations plus one per block) */
    ck_assert(ER_INTERP_DEFAULT_STEP_LIMIT == (INT64_C(1) << 24) && ER_INTERP_DEFAULT_WORK_LIMIT == (INT64_C(1) << 28));
    ck_assert_msg(parse_str("entry @k(%p: tile<ptr<i32>>) {\n  %c = constant <i32: 1> : tile<i32>\n  %s = store_ptr_tko weak %p, %c : tile<ptr<i32>>, tile<i32> -> token\n}\n",
                            &m, msg, sizeof msg) == ER_OK, "%s", msg);
    lset(&L, 3, 2);
    lbuf(&L, ER_FMT_I32, &out, sizeof out);
    lrun_ok(&L, m, "k");
    ck_assert_int_eq((int)L.l.work, 6 * 3); /* 6 blocks: one each, and constant and store */
    lset(&L, 3, 2);
    lbuf(&L, ER_FMT_I32, &out, sizeof out);
    L.l.work_limit = 17;
    lrun(&L, m, "k");
    ck_assert_int_eq(L.l.kind, ER_INTERP_UB);
    ck_assert_msg(strstr(L.msg, "h.mlir:3:8: op 'store_ptr_tko': the launch ran past the work limit of 17 operations") != NULL, "%s", L.msg);
    lset(&L, 16777215, 16777215);
    L.l.grid[2] = 16777215;
    lbuf(&L, ER_FMT_I32, &out, sizeof out);
    lrun(&L, m, "k");
    ck_assert_int_eq(L.l.kind, ER_INTERP_BAD_LAUNCH);
    ck_assert_int_eq((int)L.l.work, 0);
    ck_assert_msg(strstr(L.msg, "16777215 x 16777215 x 16777215 blocks is more than the work limit of 268435456") != NULL, "%s", L.msg);
    lset(&L, 4, 1);
    L.l.work_limit = 4; /* four blocks of at least one unit each: more than 4 in all */
    lbuf(&L, ER_FMT_I32, &out, sizeof out);
    lrun(&L, m, "k");
    ck_assert_int_eq(L.l.kind, ER_INTERP_UB);
    er_interp_free(m);
    /* print_tko past a small buffer: cut after the last whole line, a line saying so, a string */
    ck_assert_msg(parse_str("entry @k(%n: tile<i32>) {\n  %c0 = constant <i32: 0> : tile<i32>\n  %c1 = constant <i32: 1> : tile<i32>\n"
                            "  for %i in (%c0 to %n, step %c1) : tile<i32> {\n    %t = print_tko \"row %d\\0A\", %i : tile<i32> -> token\n  }\n}\n",
                            &m, msg, sizeof msg) == ER_OK, "%s", msg);
    {
        char small[200];
        size_t n;
        lset(&L, 1, 1);
        lscalar(&L, 1000);
        L.l.prints = small;
        L.l.prints_size = sizeof small;
        lrun_ok(&L, m, "k");
        n = strlen(small);
        ck_assert(n < sizeof small && n > 0 && small[n - 1] == '\n');
        ck_assert_msg(strncmp(small, "row 0\nrow 1\n", 12) == 0, "%s", small);
        ck_assert_msg(strstr(small, "\n[print_tko output cut here: it exceeds the launch's print buffer of 200 bytes]\n") != NULL, "%s", small);
        ck_assert_msg(strstr(small, "row 99") == NULL, "%s", small);
        /* what precedes the note is whole lines "row K\n", K from 0 */
        {
            const char *q = small;
            int k = 0;
            char want[32];
            for (;;) {
                snprintf(want, sizeof want, "row %d\n", k);
                if (strncmp(q, want, strlen(want))) break;
                q += strlen(want);
                k++;
            }
            ck_assert_msg(k > 5 && *q == '[', "%s", small);
        }
    }
    er_interp_free(m);
    /* a splat constant over a 2^20 tile and a splat global: one pattern kept, every element set */
    ck_assert_msg(parse_str("global @g <i32: 9> : tile<8xi32>\n"
                            "entry @k(%a: tile<ptr<i32>>, %b: tile<ptr<i32>>) {\n"
                            "  %c0 = constant <i32: 0> : tile<i32>\n"
                            "  %big = constant <i32: 7> : tile<1048576xi32>\n"
                            "  %ta = make_tensor_view %a, shape = [1048576], strides = [1] : tensor_view<1048576xi32, strides=[1]>\n"
                            "  %pa = make_partition_view %ta : partition_view<tile=(1048576), tensor_view<1048576xi32, strides=[1]>>\n"
                            "  %t0 = store_view_tko weak %big, %pa[%c0] : tile<1048576xi32>, partition_view<tile=(1048576), tensor_view<1048576xi32, strides=[1]>>, tile<i32> -> token\n"
                            "  %gp = get_global @g : tile<ptr<i32>>\n"
                            "  %tg = make_tensor_view %gp, shape = [8], strides = [1] : tensor_view<8xi32, strides=[1]>\n"
                            "  %pg = make_partition_view %tg : partition_view<tile=(8), tensor_view<8xi32, strides=[1]>>\n"
                            "  %v, %t1 = load_view_tko weak %pg[%c0] : partition_view<tile=(8), tensor_view<8xi32, strides=[1]>>, tile<i32> -> tile<8xi32>, token\n"
                            "  %tb = make_tensor_view %b, shape = [8], strides = [1] : tensor_view<8xi32, strides=[1]>\n"
                            "  %pb = make_partition_view %tb : partition_view<tile=(8), tensor_view<8xi32, strides=[1]>>\n"
                            "  %t2 = store_view_tko weak %v, %pb[%c0] : tile<8xi32>, partition_view<tile=(8), tensor_view<8xi32, strides=[1]>>, tile<i32> -> token\n"
                            "}\n", &m, msg, sizeof msg) == ER_OK, "%s", msg);
    {
        int32_t *a = (int32_t *)calloc(1048576, sizeof *a), b[8] = {0};
        int i;
        ck_assert(a != NULL);
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_I32, a, 1048576 * sizeof *a);
        lbuf(&L, ER_FMT_I32, b, sizeof b);
        lrun_ok(&L, m, "k");
        for (i = 0; i < 1048576; i++) ck_assert_msg(a[i] == 7, "a[%d] = %d", i, a[i]);
        for (i = 0; i < 8; i++) ck_assert_msg(b[i] == 9, "b[%d] = %d", i, b[i]);
        free(a);
    }
    er_interp_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interp");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, t_vadd);
    tcase_add_test(tc, t_gemm_view);
    tcase_add_test(tc, t_gemm_ptr);
    tcase_add_test(tc, t_epilogue);
    tcase_add_test(tc, t_softmax);
    tcase_add_test(tc, t_mxfp8);
    tcase_add_test(tc, t_mmai);
    tcase_add_test(tc, t_loops);
    tcase_add_loop_test(tc, t_ub, 0, (int)(sizeof ub_cases / sizeof ub_cases[0]));
    tcase_add_test(tc, t_ub_off);
    tcase_add_test(tc, t_refusals);
    tcase_add_test(tc, t_parse_errors);
    tcase_add_test(tc, t_syntax);
    tcase_add_test(tc, t_peers);
    tcase_add_test(tc, t_fast_path);
    tcase_add_test(tc, t_cutile_matmul);
    tcase_add_test(tc, t_formats);
    tcase_add_test(tc, t_argmax);
    tcase_add_test(tc, t_cutile_others);
    tcase_add_test(tc, t_limits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *r;
    int failed;
    rng = er_test_seed("test_interp");
    of_init();
    r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    of_fini();
    mpfr_free_cache();
    return failed ? 1 : 0;
}
