/* test_interp_bounds.c: bounds mode: device-like outputs from independent emulations (other legal orders, the
 * approximate instructions within their error) are covered; planted bugs are caught; interp.undecided witnesses. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/interp.h"

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

typedef struct launch {
    er_interp_launch l;
    er_interp_buffer b[16];
    uint64_t s[64];
    char msg[1024];
    er_status st;
    er_interp_bounds *bd;
} launch;

static void lset(launch *L, int gx, int gy)
{
    memset(L, 0, sizeof *L);
    er_interp_launch_init(&L->l);
    L->l.grid[0] = gx;
    L->l.grid[1] = gy;
    L->l.buffers = L->b;
    L->l.scalars = L->s;
}
static void lbuf(launch *L, int fmt, void *data, size_t nbytes)
{
    L->b[L->l.nbuffers].format = fmt;
    L->b[L->l.nbuffers].data = data;
    L->b[L->l.nbuffers].nbytes = nbytes;
    L->l.nbuffers++;
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
    for (d = 0; d < ndim; d++) L->s[L->l.nscalars++] = (uint64_t)shape[d];
    for (d = 0; d < ndim; d++) L->s[L->l.nscalars++] = (uint64_t)strides[d];
}
static void lbounds(launch *L, er_interp_module *m, const char *k, const er_interp_bounds_opts *o)
{
    L->st = er_interp_kernel_bounds(m, k, &L->l, o, &L->bd, L->msg, sizeof L->msg);
    ck_assert_msg(L->st == ER_OK && L->l.kind == ER_INTERP_OK, "%s: %s: %s", k, er_interp_kind_name(L->l.kind), L->msg);
}

/* The report of device data for buffer i (shape rows x cols): outside count; *rep filled. */
static int64_t judge(launch *L, size_t i, const void *dev, size_t nbytes, int64_t rows, int64_t cols, er_check_report *rep)
{
    int64_t shape[2] = {rows, cols}, idx[64];
    char msg[512];
    er_status st = er_interp_bounds_report(L->bd, i, dev, nbytes, 2, shape, idx, 64, rep, msg, sizeof msg);
    ck_assert_msg(st == ER_OK, "%s", msg);
    return rep->outside;
}

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* A random finite f32 with the exponent within +-spread of 0 (a value in about [2^-spread, 2^spread]). */
static float rnd_f32(int spread)
{
    uint64_t r = er_test_rand(&rng);
    int e = 127 + (int)((r >> 24) % (uint64_t)(2 * spread + 1)) - spread;
    return f32_of((uint32_t)(((r >> 40) & 1u) << 31) | ((uint32_t)e << 23) | (uint32_t)(r & 0x7FFFFFu));
}
/* f32 -> bf16 / f16 patterns of a random value (exactly representable: built from bits). */
static uint16_t rnd_bf16(void)
{
    uint64_t r = er_test_rand(&rng);
    int e = 127 + (int)((r >> 24) % 7) - 3;
    return (uint16_t)((((r >> 40) & 1u) << 15) | ((uint32_t)e << 7) | (uint32_t)(r & 0x7Fu));
}
static uint16_t rnd_f16(void)
{
    uint64_t r = er_test_rand(&rng);
    int e = 15 + (int)((r >> 24) % 7) - 3;
    return (uint16_t)((((r >> 40) & 1u) << 15) | ((uint32_t)e << 10) | (uint32_t)(r & 0x3FFu));
}
static uint8_t rnd_e4m3(void)
{
    uint8_t v;
    do v = (uint8_t)er_test_rand(&rng); while ((v & 0x7F) == 0x7F || (v & 0x78) == 0);
    return v;
}
static double val16(int fmt, uint16_t p)
{
    if (fmt == ER_FMT_BF16) return (double)f32_of((uint32_t)p << 16);
    {
        int e = (p >> 10) & 31, f = p & 0x3FF;
        double v = e ? ldexp(1024 + f, e - 25) : ldexp(f, -24);
        return (p >> 15) ? -v : v;
    }
}
static double val_e4m3(uint8_t p)
{
    int e = (p >> 3) & 15, f = p & 7;
    double v = e ? ldexp(8 + f, e - 10) : ldexp(f, -9);
    return (p >> 7) ? -v : v;
}

/* The correctly rounded f32 exp / exp2 (MPFR, independent of the library). */
static float mp_f32(int two, float x)
{
    mpfr_t a;
    float r;
    mpfr_init2(a, 200);
    mpfr_set_flt(a, x, MPFR_RNDN);
    if (two) mpfr_exp2(a, a, MPFR_RNDN);
    else mpfr_exp(a, a, MPFR_RNDN);
    r = mpfr_get_flt(a, MPFR_RNDN);
    mpfr_clear(a);
    return r;
}

static float ulps_from(float v, int k)
{
    while (k > 0) { v = nextafterf(v, INFINITY); k--; }
    while (k < 0) { v = nextafterf(v, -INFINITY); k++; }
    return v;
}

/* One element of a float buffer moved 2 ulps past its upper bound: exactly one outside, 2 ulps beyond. */
static void plant_two_ulps(launch *L, size_t i, float *dev, size_t n, int64_t rows, int64_t cols, int64_t e)
{
    const double *lo, *hi;
    er_check_report rep;
    float keep = dev[e];
    ck_assert(er_interp_bounds_get(L->bd, i, NULL, NULL, &lo, &hi, NULL) == ER_OK && hi);
    ck_assert(isfinite(hi[e]));
    dev[e] = ulps_from((float)hi[e], 2);
    ck_assert_int_eq(judge(L, i, dev, n * 4, rows, cols, &rep), 1);
    ck_assert_int_eq(rep.worst, e);
    ck_assert_int_eq(rep.ulps_beyond, 2);
    dev[e] = keep;
}

/* ---------------------------------------------------------------- softmax */

START_TEST(t_softmax)
{
    enum { R = 8, C = 16 };
    const char *k;
    er_interp_module *m = load_cutile("cutile_softmax.mlir", &k);
    float X[R * C], Y[R * C], D[R * C];
    int64_t sx[2] = {R, C};
    er_check_report rep;
    launch L;
    int i, t;
    for (i = 0; i < R * C; i++) X[i] = rnd_f32(3);
    lset(&L, 2, 1);
    lbuf_ct(&L, ER_FMT_F32, X, sizeof X, 2, sx);
    lbuf_ct(&L, ER_FMT_F32, Y, sizeof Y, 2, sx);
    lbounds(&L, m, k, NULL);
    ck_assert_int_eq(er_interp_bounds_buffers(L.bd), 2);
    /* the interpreter's own run is one legal device */
    ck_assert_int_eq(judge(&L, 1, Y, sizeof Y, R, C, &rep), 0);
    /* a device: the row sum in reverse order and then pairwise (other legal orders), exp correctly rounded */
    for (int order = 0; order < 2; order++) {
        for (i = 0; i < R; i++) {
            float mx = -INFINITY, e[C], s = 0;
            for (t = 0; t < C; t++) mx = X[i * C + t] > mx ? X[i * C + t] : mx;
            for (t = 0; t < C; t++) e[t] = mp_f32(0, X[i * C + t] - mx);
            if (order == 0) {
                for (t = C - 1; t >= 0; t--) s = s + e[t];
            } else {
                float p[C];
                int w;
                for (t = 0; t < C; t++) p[t] = e[t];
                for (w = C; w > 1; w /= 2)
                    for (t = 0; t < w / 2; t++) p[t] = p[2 * t] + p[2 * t + 1];
                s = p[0];
            }
            for (t = 0; t < C; t++) D[i * C + t] = e[t] / s;
        }
        ck_assert_msg(judge(&L, 1, D, sizeof D, R, C, &rep) == 0, "order %d: %lld outside", order, (long long)rep.outside);
    }
    /* planted bugs: the missing normalisation (a missing rescale), a wrong mask (the row's largest term left out of the sum),
     * one element two ulps past its bound */
    {
        float E[R * C];
        for (i = 0; i < R; i++) {
            float mx = -INFINITY, s = 0;
            for (t = 0; t < C; t++) mx = X[i * C + t] > mx ? X[i * C + t] : mx;
            for (t = 0; t < C; t++) E[i * C + t] = mp_f32(0, X[i * C + t] - mx);
            for (t = 0; t < C; t++) /* the row's largest term masked out of the sum */
                if (X[i * C + t] != mx) s += E[i * C + t];
            for (t = 0; t < C; t++) D[i * C + t] = E[i * C + t] / s;
        }
        ck_assert_int_gt(judge(&L, 1, E, sizeof E, R, C, &rep), R * C / 2);
        ck_assert_int_gt(judge(&L, 1, D, sizeof D, R, C, &rep), R * C / 2);
        plant_two_ulps(&L, 1, Y, R * C, R, C, 37);
    }
    er_interp_bounds_free(L.bd);
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- matmul with a k loop */

/* C[i][j] of cuTile's matmul (k steps of 16, one mmaf each): order 0 index order after the accumulator
 * (the normal standard), 1 reverse order within each step, 2 pairwise within each step (any order);
 * skip: a k step left out (a skipped block); drop: product k left out (a wrong mask). Products of the
 * 16-bit and 8-bit formats are exact in f32. */
static float emul_mm(const double *a, const double *b, int K, int N, int i, int j, int order, int skip, int drop)
{
    float acc = 0;
    int ks;
    for (ks = 0; ks * 16 < K; ks++) {
        float p[16], s;
        int t, n = 0;
        if (ks == skip) continue;
        for (t = 0; t < 16; t++) {
            int kk = ks * 16 + t;
            p[n++] = kk < K && kk != drop ? (float)(a[i * K + kk] * b[kk * N + j]) : 0.0f;
        }
        if (order == 0) {
            s = acc;
            for (t = 0; t < n; t++) s = s + p[t];
        } else if (order == 1) {
            s = acc;
            for (t = n - 1; t >= 0; t--) s = s + p[t];
        } else {
            int w;
            for (w = 16; w > 1; w /= 2)
                for (t = 0; t < w / 2; t++) p[t] = p[2 * t] + p[2 * t + 1];
            s = p[0] + acc;
        }
        acc = s;
    }
    return acc;
}

START_TEST(t_matmul)
{
    static const struct { const char *file; int fmt, eb; } cases[] = {
        {"cutile_matmul_bf16.mlir", ER_FMT_BF16, 2}, {"cutile_matmul_f16.mlir", ER_FMT_F16, 2}, {"cutile_matmul_f8e4m3.mlir", ER_FMT_F8E4M3FN, 1}};
    enum { M = 40, N = 48, K = 40 };
    size_t c;
    for (c = 0; c < 3; c++) {
        const char *k;
        er_interp_module *m = load_cutile(cases[c].file, &k);
        uint8_t A[M * K * 2], B[K * N * 2];
        double a[M * K], b[K * N];
        float Cb[M * N], D[M * N];
        int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
        int i, j, fmt = cases[c].fmt, eb = cases[c].eb, std;
        for (i = 0; i < M * K; i++) {
            if (eb == 1) { A[i] = rnd_e4m3(); a[i] = val_e4m3(A[i]); }
            else { uint16_t p = fmt == ER_FMT_BF16 ? rnd_bf16() : rnd_f16(); memcpy(A + 2 * i, &p, 2); a[i] = val16(fmt, p); }
        }
        for (i = 0; i < K * N; i++) {
            if (eb == 1) { B[i] = rnd_e4m3(); b[i] = val_e4m3(B[i]); }
            else { uint16_t p = fmt == ER_FMT_BF16 ? rnd_bf16() : rnd_f16(); memcpy(B + 2 * i, &p, 2); b[i] = val16(fmt, p); }
        }
        for (std = 0; std < 2; std++) {
            er_interp_bounds_opts o;
            er_check_report rep;
            launch L;
            int order;
            er_interp_bounds_opts_init(&o);
            o.standard = std ? "any_order" : "normal";
            memset(Cb, 0, sizeof Cb);
            lset(&L, 2, 2);
            lbuf_ct(&L, fmt, A, (size_t)M * K * eb, 2, sa);
            lbuf_ct(&L, fmt, B, (size_t)K * N * eb, 2, sb);
            lbuf_ct(&L, ER_FMT_F32, Cb, sizeof Cb, 2, sc);
            lbounds(&L, m, k, &o);
            ck_assert_int_eq(judge(&L, 2, Cb, sizeof Cb, M, N, &rep), 0);
            /* the inputs were not stored: their bounds are themselves */
            ck_assert_int_eq(judge(&L, 0, A, (size_t)M * K * eb, M, K, &rep), 0);
            for (order = 0; order < 3; order++) {
                if (std == 0 && order != 0) continue; /* normal: index order (2/4 lanes) only */
                for (i = 0; i < M; i++)
                    for (j = 0; j < N; j++) D[i * N + j] = emul_mm(a, b, K, N, i, j, order, -1, -1);
                ck_assert_msg(judge(&L, 2, D, sizeof D, M, N, &rep) == 0, "%s %s order %d: %lld outside", cases[c].file, o.standard, order,
                              (long long)rep.outside);
            }
            /* planted bugs: a skipped k block, a wrong mask (k = 39 dropped), two ulps past one bound */
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) D[i * N + j] = emul_mm(a, b, K, N, i, j, std ? 1 : 0, 1, -1);
            ck_assert_int_gt(judge(&L, 2, D, sizeof D, M, N, &rep), M * N / 2);
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) D[i * N + j] = emul_mm(a, b, K, N, i, j, std ? 1 : 0, -1, 39);
            ck_assert_int_gt(judge(&L, 2, D, sizeof D, M, N, &rep), M * N / 2);
            plant_two_ulps(&L, 2, Cb, M * N, M, N, 5 * N + 7);
            er_interp_bounds_free(L.bd);
        }
        er_interp_free(m);
    }
}
END_TEST

/* ---------------------------------------------------------------- reduce and scan in any order */

START_TEST(t_reduce_scan)
{
    enum { R = 8, C = 16 };
    const char *k;
    er_interp_module *m = load_cutile("cutile_reduce_scan.mlir", &k);
    float X[R * C], S[R], P[R * C], DS[R], DP[R * C];
    int64_t sx[2] = {R, C}, ss[1] = {R};
    er_check_report rep;
    launch L;
    int i, t;
    for (i = 0; i < R * C; i++) X[i] = rnd_f32(6);
    lset(&L, 2, 1);
    lbuf_ct(&L, ER_FMT_F32, X, sizeof X, 2, sx);
    lbuf_ct(&L, ER_FMT_F32, S, sizeof S, 1, ss);
    lbuf_ct(&L, ER_FMT_F32, P, sizeof P, 2, sx);
    lbounds(&L, m, k, NULL);
    /* a device: sums in reverse order; prefix sums by blocks of 4 (each block's sum added to the running total) */
    for (i = 0; i < R; i++) {
        float s = 0, run = 0;
        for (t = C - 1; t >= 0; t--) s = s + X[i * C + t];
        DS[i] = s;
        for (t = 0; t < C; t += 4) {
            float l = 0;
            int u;
            for (u = 0; u < 4; u++) {
                l = l + X[i * C + t + u];
                DP[i * C + t + u] = run + l;
            }
            run = run + l;
        }
    }
    ck_assert_int_eq(judge(&L, 1, DS, sizeof DS, 1, R, &rep), 0);
    ck_assert_int_eq(judge(&L, 2, DP, sizeof DP, R, C, &rep), 0);
    /* a wrong mask: one term left out of every sum */
    for (i = 0; i < R; i++) DS[i] = DS[i] - X[i * C];
    ck_assert_int_gt(judge(&L, 1, DS, sizeof DS, 1, R, &rep), R / 2);
    plant_two_ulps(&L, 2, P, R * C, R, C, 77);
    plant_two_ulps(&L, 1, S, R, 1, R, 3);
    er_interp_bounds_free(L.bd);
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- the approximate instructions */

START_TEST(t_approx)
{
    er_interp_module *m = load("bounds.mlir");
    float x[16], y[16], e[16], q[16], r[16], De[16], Dq[16], Dr[16];
    er_check_report rep;
    launch L;
    int i, pass;
    for (i = 0; i < 16; i++) {
        x[i] = rnd_f32(3);
        y[i] = fabsf(rnd_f32(3));
    }
    x[3] = -130.5f; /* exp2 lands in f32's subnormals: flush_to_zero may give 0 */
    for (pass = 0; pass < 2; pass++) {
        er_interp_bounds_opts o;
        er_interp_bounds_opts_init(&o);
        if (pass) o.ulps[er_interp_bounds_op_index("exp2")] = 0; /* overridden: exp2 correctly rounded only */
        lset(&L, 1, 1);
        lbuf(&L, ER_FMT_F32, x, sizeof x);
        lbuf(&L, ER_FMT_F32, y, sizeof y);
        lbuf(&L, ER_FMT_F32, e, sizeof e);
        lbuf(&L, ER_FMT_F32, q, sizeof q);
        lbuf(&L, ER_FMT_F32, r, sizeof r);
        lbounds(&L, m, "approx", &o);
        /* a device: each instruction one ulp off the correctly rounded result, alternating */
        for (i = 0; i < 16; i++) {
            double rs = 1.0 / sqrt((double)y[i]);
            De[i] = ulps_from(mp_f32(1, x[i]), (i % 2 ? 1 : -1) * (pass ? 2 : 1));
            Dq[i] = ulps_from(x[i] / y[i], i % 2 ? -1 : 1);
            Dr[i] = ulps_from((float)rs, i % 2 ? 1 : -1);
        }
        De[3] = 0; /* flushed */
        if (pass == 0) {
            ck_assert_int_eq(judge(&L, 2, De, sizeof De, 1, 16, &rep), 0);
            ck_assert_int_eq(judge(&L, 3, Dq, sizeof Dq, 1, 16, &rep), 0);
            ck_assert_int_eq(judge(&L, 4, Dr, sizeof Dr, 1, 16, &rep), 0);
            /* eight ulps off: beyond every instruction's documented error */
            for (i = 0; i < 16; i++) {
                De[i] = ulps_from(mp_f32(1, x[i]), 8);
                Dq[i] = ulps_from(x[i] / y[i], -8);
            }
            De[3] = 0;
            ck_assert_int_eq(judge(&L, 2, De, sizeof De, 1, 16, &rep), 15);
            ck_assert_int_eq(judge(&L, 3, Dq, sizeof Dq, 1, 16, &rep), 16);
        } else {
            /* exp2 within 0 ulps (faithful: the two neighbours of the exact value): two ulps off is outside */
            ck_assert_int_eq(judge(&L, 2, De, sizeof De, 1, 16, &rep), 15);
        }
        er_interp_bounds_free(L.bd);
    }
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- interp.undecided */

START_TEST(t_undecided)
{
    er_interp_module *m = load("bounds.mlir");
    float x = 0.0f;
    int32_t o = 7;
    launch L;
    er_interp_bounds *bd = NULL;
    er_status st;
    /* exp2(0) >= 1: ex2.approx may give just below 1 */
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, &x, 4);
    lbuf(&L, ER_FMT_I32, &o, 4);
    st = er_interp_kernel_bounds(m, "branch", &L.l, NULL, &bd, L.msg, sizeof L.msg);
    ck_assert_int_eq(st, ER_EINVAL);
    ck_assert_int_eq(L.l.kind, ER_INTERP_UNDECIDED);
    ck_assert_ptr_null(bd);
    ck_assert_str_eq(er_interp_kind_name(L.l.kind), "interp.undecided");
    ck_assert_msg(strstr(L.msg, "bounds.mlir:30:") && strstr(L.msg, "op 'cmpf'") && strstr(L.msg, "not decided"), "%s", L.msg);
    /* the same kernel in point mode runs (exp2 correctly rounded there) */
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, &x, 4);
    lbuf(&L, ER_FMT_I32, &o, 4);
    ck_assert_int_eq(er_interp_kernel(m, "branch", &L.l, L.msg, sizeof L.msg), ER_OK);
    ck_assert_int_eq(o, 1);
    /* decided where the enclosure is far from 1 */
    x = 3.0f;
    o = 7;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, &x, 4);
    lbuf(&L, ER_FMT_I32, &o, 4);
    lbounds(&L, m, "branch", NULL);
    ck_assert_int_eq(o, 1);
    {
        er_check_report rep;
        int32_t dev = 0;
        ck_assert_int_eq(judge(&L, 1, &dev, 4, 1, 1, &rep), 1); /* a decided integer is judged exactly */
        dev = 1;
        ck_assert_int_eq(judge(&L, 1, &dev, 4, 1, 1, &rep), 0);
    }
    er_interp_bounds_free(L.bd);
    /* an index from an approximate value: ftoi(exp2(0)) is 0 or 1 */
    x = 0.0f;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, &x, 4);
    lbuf(&L, ER_FMT_I32, &o, 4);
    st = er_interp_kernel_bounds(m, "index", &L.l, NULL, &bd, L.msg, sizeof L.msg);
    ck_assert_int_eq(L.l.kind, ER_INTERP_UNDECIDED);
    ck_assert_msg(strstr(L.msg, "bounds.mlir:41:") && strstr(L.msg, "op 'ftoi'"), "%s", L.msg);
    (void)st;
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- the fused epilogue (fp8 output) */

START_TEST(t_epilogue)
{
    const char *k;
    er_interp_module *m = load_cutile("cutile_epilogue.mlir", &k);
    uint16_t A[16 * 32], B[32 * 16];
    float bias[16];
    uint8_t D[16 * 16], E[16 * 16];
    int64_t sa[2] = {16, 32}, sb[2] = {32, 16}, sbias[1] = {16}, sd[2] = {16, 16};
    er_check_report rep;
    launch L;
    int i;
    for (i = 0; i < 16 * 32; i++) A[i] = rnd_f16();
    for (i = 0; i < 32 * 16; i++) B[i] = rnd_f16();
    for (i = 0; i < 16; i++) bias[i] = rnd_f32(2);
    lset(&L, 1, 1);
    lbuf_ct(&L, ER_FMT_F16, A, sizeof A, 2, sa);
    lbuf_ct(&L, ER_FMT_F16, B, sizeof B, 2, sb);
    lbuf_ct(&L, ER_FMT_F32, bias, sizeof bias, 1, sbias);
    lbuf_ct(&L, ER_FMT_F8E4M3FN, D, sizeof D, 2, sd);
    {
        er_interp_bounds_opts o;
        er_interp_bounds_opts_init(&o);
        o.standard = "hopper";
        lbounds(&L, m, k, &o);
    }
    ck_assert_int_eq(judge(&L, 3, D, sizeof D, 16, 16, &rep), 0);
    /* two fp8 steps above one element's highest pattern (positive values: the pattern + 2) */
    {
        const double *hi;
        int64_t e;
        ck_assert(er_interp_bounds_get(L.bd, 3, NULL, NULL, NULL, &hi, NULL) == ER_OK);
        memcpy(E, D, sizeof D);
        for (e = 0; e < 256 && !(hi[e] > 0.5 && hi[e] < 200); e++) continue;
        ck_assert(e < 256);
        {
            uint8_t p = 0;
            while (val_e4m3(p) < hi[e]) p++;
            E[e] = (uint8_t)(p + 2);
        }
        ck_assert_int_eq(judge(&L, 3, E, sizeof E, 16, 16, &rep), 1);
        ck_assert_int_eq(rep.ulps_beyond, 2);
    }
    er_interp_bounds_free(L.bd);
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- MXFP8 (mmaf_scaled) */

START_TEST(t_mxfp8)
{
    const char *k;
    er_interp_module *m = load_cutile("cutile_mxfp8.mlir", &k);
    uint8_t A[16 * 64], B[64 * 16], SA[16 * 2], SB[2 * 16];
    float C[16 * 16], C0[16 * 16], D[16 * 16];
    int64_t sa[2] = {16, 64}, ssa[2] = {16, 2}, sb[2] = {64, 16}, ssb[2] = {2, 16}, sc[2] = {16, 16};
    er_check_report rep;
    int i, j, p, std;
    for (i = 0; i < 16 * 64; i++) A[i] = rnd_e4m3();
    for (i = 0; i < 64 * 16; i++) B[i] = rnd_e4m3();
    for (i = 0; i < 32; i++) {
        SA[i] = (uint8_t)(127 - 2 + (int)(er_test_rand(&rng) % 5));
        SB[i] = (uint8_t)(127 - 2 + (int)(er_test_rand(&rng) % 5));
    }
    for (i = 0; i < 256; i++) C0[i] = rnd_f32(2);
    for (std = 0; std < 2; std++) {
        er_interp_bounds_opts o;
        launch L;
        er_interp_bounds_opts_init(&o);
        o.standard = std ? "any_order" : "normal";
        memcpy(C, C0, sizeof C);
        lset(&L, 1, 1);
        lbuf_ct(&L, ER_FMT_F8E4M3FN, A, sizeof A, 2, sa);
        lbuf_ct(&L, ER_FMT_F8E8M0FNU, SA, sizeof SA, 2, ssa);
        lbuf_ct(&L, ER_FMT_F8E4M3FN, B, sizeof B, 2, sb);
        lbuf_ct(&L, ER_FMT_F8E8M0FNU, SB, sizeof SB, 2, ssb);
        lbuf_ct(&L, ER_FMT_F32, C, sizeof C, 2, sc);
        lbounds(&L, m, k, &o);
        ck_assert_int_eq(judge(&L, 4, C, sizeof C, 16, 16, &rep), 0);
        if (std) {
            /* a device: each scaled product exact, summed in reverse order after C, in f32 */
            for (i = 0; i < 16; i++)
                for (j = 0; j < 16; j++) {
                    float s = C0[i * 16 + j];
                    for (p = 63; p >= 0; p--)
                        s = s + (float)(val_e4m3(A[i * 64 + p]) * ldexp(1.0, SA[i * 2 + p / 32] - 127) * val_e4m3(B[p * 16 + j]) *
                                        ldexp(1.0, SB[(p / 32) * 16 + j] - 127));
                    D[i * 16 + j] = s;
                }
            ck_assert_msg(judge(&L, 4, D, sizeof D, 16, 16, &rep) == 0, "mxfp8 reverse order: %lld outside", (long long)rep.outside);
            /* planted: A's second block of 32 scaled by its first block's scale (a wrong scale index) */
            for (i = 0; i < 16; i++)
                for (j = 0; j < 16; j++) {
                    float s = C0[i * 16 + j];
                    for (p = 63; p >= 0; p--)
                        s = s + (float)(val_e4m3(A[i * 64 + p]) * ldexp(1.0, SA[i * 2] - 127) * val_e4m3(B[p * 16 + j]) *
                                        ldexp(1.0, SB[(p / 32) * 16 + j] - 127));
                    D[i * 16 + j] = s;
                }
            ck_assert_msg(judge(&L, 4, D, sizeof D, 16, 16, &rep) > 64, "mxfp8 wrong scale index: only %lld outside", (long long)rep.outside);
            printf("t_mxfp8: a wrong scale index: %lld of 256 outside\n", (long long)rep.outside);
        }
        plant_two_ulps(&L, 4, C, 256, 16, 16, 17);
        er_interp_bounds_free(L.bd);
    }
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- fast_acc */

START_TEST(t_fast_acc)
{
    er_interp_module *m = load("bounds.mlir");
    uint8_t A[16 * 64], B[64 * 16];
    float C[256], D[256];
    const double *clo, *chi, *dlo, *dhi;
    er_check_report rep;
    launch L;
    int i, wider = 0, narrower = 0;
    for (i = 0; i < 16 * 64; i++) A[i] = rnd_e4m3();
    for (i = 0; i < 64 * 16; i++) B[i] = rnd_e4m3();
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F8E4M3FN, A, sizeof A);
    lbuf(&L, ER_FMT_F8E4M3FN, B, sizeof B);
    lbuf(&L, ER_FMT_F32, C, sizeof C);
    lbuf(&L, ER_FMT_F32, D, sizeof D);
    lbounds(&L, m, "fastacc", NULL);
    /* the same exact product rounded once in both (point mode's model); fast_acc allows more */
    ck_assert_int_eq(memcmp(C, D, sizeof C), 0);
    ck_assert_int_eq(judge(&L, 2, C, sizeof C, 16, 16, &rep), 0);
    ck_assert_int_eq(judge(&L, 3, D, sizeof D, 16, 16, &rep), 0);
    ck_assert(er_interp_bounds_get(L.bd, 2, NULL, NULL, &clo, &chi, NULL) == ER_OK);
    ck_assert(er_interp_bounds_get(L.bd, 3, NULL, NULL, &dlo, &dhi, NULL) == ER_OK);
    for (i = 0; i < 256; i++) {
        if (chi[i] - clo[i] > dhi[i] - dlo[i]) wider++;
        if (chi[i] - clo[i] < dhi[i] - dlo[i]) narrower++;
    }
    ck_assert_msg(wider > 128 && narrower == 0, "fast_acc (hopper-fp8) wider than normal at %d, narrower at %d of 256", wider, narrower);
    er_interp_bounds_free(L.bd);
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- 13.3 / 13.4 ops on enclosures (kernels/bounds13.mlir) */

/* RN_f32(v^n) by MPFR. */
static float mp_powi(float v, long n)
{
    mpfr_t a;
    float r;
    mpfr_init2(a, 400);
    mpfr_set_flt(a, v, MPFR_RNDN);
    mpfr_pow_si(a, a, n, MPFR_RNDN);
    r = mpfr_get_flt(a, MPFR_RNDN);
    mpfr_clear(a);
    return r;
}

START_TEST(t_ops13)
{
    er_interp_module *m = load("bounds13.mlir");
    float X[16], Y[16], D[16], F[1], Dv[1], Y2[16], D2[16];
    int32_t N[16] = {2, 3, -2, 5, 0, 1, 2, -1, 4, 3, 2, 2, 7, -3, 2, 1};
    uint8_t B[16];
    const double *lo, *hi;
    er_check_report rep;
    launch L;
    int i, k, wide = 0;
    for (i = 0; i < 16; i++) X[i] = (float)(er_test_rand(&rng) % 4000) / 1000.0f - 2.0f;

    /* fpowi of exp2's enclosure: every power of a value ex2.approx may give (2 ulps from RN) covered */
    memset(Y, 0, sizeof Y);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_I32, N, sizeof N);
    lbuf(&L, ER_FMT_F32, Y, sizeof Y);
    lbounds(&L, m, "powi", NULL);
    for (k = -2; k <= 2; k++) {
        for (i = 0; i < 16; i++) D[i] = mp_powi(ulps_from(mp_f32(1, X[i]), k), N[i]);
        ck_assert_msg(judge(&L, 2, D, sizeof D, 1, 16, &rep) == 0, "fpowi, exp2 %d ulps off: %lld outside", k, (long long)rep.outside);
    }
    ck_assert(er_interp_bounds_get(L.bd, 2, NULL, NULL, &lo, &hi, NULL) == ER_OK);
    for (i = 0; i < 16; i++) {
        ck_assert(lo[i] <= Y[i] && Y[i] <= hi[i]);
        if (N[i] != 0 && hi[i] > lo[i]) wide++;
        if (N[i] == 0) ck_assert(lo[i] == 1 && hi[i] == 1);
    }
    ck_assert_int_eq(wide, 15);
    plant_two_ulps(&L, 2, Y, 16, 1, 16, 5);
    er_interp_bounds_free(L.bd);

    /* a float atomic add from 8 blocks: the sum in any order covered, a block's add skipped caught */
    F[0] = 0.25f;
    lset(&L, 8, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_F32, F, sizeof F);
    lbounds(&L, m, "atomic_sum", NULL);
    Dv[0] = 0.25f;
    for (i = 7; i >= 0; i--) Dv[0] = Dv[0] + X[i];
    ck_assert_msg(judge(&L, 1, Dv, sizeof Dv, 1, 1, &rep) == 0, "the adds in reverse order");
    Dv[0] = ((0.25f + (X[0] + X[1])) + (X[2] + X[3])) + ((X[4] + X[5]) + (X[6] + X[7]));
    ck_assert_msg(judge(&L, 1, Dv, sizeof Dv, 1, 1, &rep) == 0, "the adds pairwise");
    Dv[0] = 0.25f;
    for (i = 1; i < 8; i++) Dv[0] = Dv[0] + X[i];
    ck_assert_msg(judge(&L, 1, Dv, sizeof Dv, 1, 1, &rep) == 1, "block 0's add skipped not caught");
    er_interp_bounds_free(L.bd);

    /* interp.undecided: a compare-and-swap on an enclosure, the bytes of an enclosure packed */
    F[0] = 0;
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_F32, F, sizeof F);
    L.st = er_interp_kernel_bounds(m, "cas", &L.l, NULL, &L.bd, L.msg, sizeof L.msg);
    ck_assert_msg(L.l.kind == ER_INTERP_UNDECIDED && strstr(L.msg, "atomic_cas_tko") && strstr(L.msg, "not one value"), "cas: %s", L.msg);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_I8, B, sizeof B);
    L.st = er_interp_kernel_bounds(m, "pack", &L.l, NULL, &L.bd, L.msg, sizeof L.msg);
    ck_assert_msg(L.l.kind == ER_INTERP_UNDECIDED && strstr(L.msg, "'pack'") && strstr(L.msg, "bit pattern"), "pack: %s", L.msg);

    /* enclosures kept through an alloca, insert and a strided view's store */
    memset(Y2, 0, sizeof Y2);
    lset(&L, 1, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_F32, Y2, sizeof Y2);
    lbounds(&L, m, "keep", NULL);
    ck_assert(er_interp_bounds_get(L.bd, 1, NULL, NULL, &lo, &hi, NULL) == ER_OK);
    for (i = 0; i < 8; i++) ck_assert(lo[i] == X[i] && hi[i] == X[i]);
    for (i = 8; i < 16; i++) ck_assert_msg(lo[i] < hi[i], "Y[1, %d]: the exp2 enclosure was lost on the way", i - 8);
    for (k = -2; k <= 2; k++) {
        for (i = 0; i < 16; i++) D2[i] = i < 8 ? X[i] : ulps_from(mp_f32(1, X[i]), k);
        ck_assert_msg(judge(&L, 1, D2, sizeof D2, 2, 8, &rep) == 0, "keep, exp2 %d ulps off: %lld outside", k, (long long)rep.outside);
    }
    plant_two_ulps(&L, 1, Y2, 16, 2, 8, 11);
    er_interp_bounds_free(L.bd);
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- sums under a spin lock (kernels/lock.mlir) */

/* lock_sum's S, T, U as a device stores them taking the lock in the blocks' order ord[0..n-1]: S[j] =
 * fma(exp2(X[4b+j]), Y[4b+j], S[j]) with exp2 correctly rounded moved off ulps, T[j] = X[4b+j] + T[j],
 * U[j] = U[j] - Y[4b+j]. */
static void emul_lock(const float *X, const float *Y, const float *S0, const float *T0, const float *U0, const int *ord, int n,
                      int off, float *S, float *T, float *U)
{
    int k, j;
    for (j = 0; j < 4; j++) {
        S[j] = S0[j];
        T[j] = T0[j];
        U[j] = U0[j];
    }
    for (k = 0; k < n; k++) {
        int b = ord[k];
        for (j = 0; j < 4; j++) {
            S[j] = fmaf(ulps_from(mp_f32(1, X[4 * b + j]), off), Y[4 * b + j], S[j]);
            T[j] = X[4 * b + j] + T[j];
            U[j] = U[j] - Y[4 * b + j];
        }
    }
}

START_TEST(t_lock)
{
    enum { NB = 8 };
    er_interp_module *m = load("lock.mlir");
    float X[4 * NB], Y[4 * NB], S0[4], T0[4], U0[4], S[4], T[4], U[4], Ds[4], Dt[4], Du[4], X1[NB], S1[1], D1[1];
    int32_t Lk[1] = {0};
    int ord[NB + 1], i, k, trial;
    er_check_report rep;
    launch L;
    for (i = 0; i < 4 * NB; i++) {
        X[i] = rnd_f32(2);
        Y[i] = rnd_f32(2);
    }
    for (i = 0; i < 4; i++) {
        S0[i] = rnd_f32(1);
        T0[i] = rnd_f32(1);
        U0[i] = rnd_f32(1);
    }
    memcpy(S, S0, sizeof S);
    memcpy(T, T0, sizeof T);
    memcpy(U, U0, sizeof U);
    lset(&L, NB, 1);
    lbuf(&L, ER_FMT_F32, X, sizeof X);
    lbuf(&L, ER_FMT_F32, Y, sizeof Y);
    lbuf(&L, ER_FMT_F32, S, sizeof S);
    lbuf(&L, ER_FMT_F32, T, sizeof T);
    lbuf(&L, ER_FMT_F32, U, sizeof U);
    lbuf(&L, ER_FMT_I32, Lk, sizeof Lk);
    lbounds(&L, m, "lock_sum", NULL);
    ck_assert_int_eq(Lk[0], 0); /* released by every block */
    /* the blocks take the lock in their order, in reverse and in random orders, exp2 as ex2.approx may give it */
    for (trial = 0; trial < 8; trial++) {
        for (i = 0; i < NB; i++) ord[i] = trial == 1 ? NB - 1 - i : i;
        if (trial >= 2)
            for (i = NB - 1; i > 0; i--) {
                int j = (int)(er_test_rand(&rng) % (uint64_t)(i + 1)), t = ord[i];
                ord[i] = ord[j];
                ord[j] = t;
            }
        emul_lock(X, Y, S0, T0, U0, ord, NB, trial % 3 - 1, Ds, Dt, Du);
        ck_assert_msg(judge(&L, 2, Ds, sizeof Ds, 1, 4, &rep) == 0, "S (fma under the lock), order %d: %lld outside", trial, (long long)rep.outside);
        ck_assert_msg(judge(&L, 3, Dt, sizeof Dt, 1, 4, &rep) == 0, "T (addf under the lock), order %d: %lld outside", trial, (long long)rep.outside);
        ck_assert_msg(judge(&L, 4, Du, sizeof Du, 1, 4, &rep) == 0, "U (subf under the lock), order %d: %lld outside", trial, (long long)rep.outside);
    }
    /* planted: block 3's contribution dropped, and added twice */
    for (i = 0, k = 0; i < NB; i++)
        if (i != 3) ord[k++] = i;
    emul_lock(X, Y, S0, T0, U0, ord, NB - 1, 0, Ds, Dt, Du);
    ck_assert_msg(judge(&L, 2, Ds, sizeof Ds, 1, 4, &rep) == 4, "S: a block dropped: %lld outside", (long long)rep.outside);
    ck_assert_msg(judge(&L, 3, Dt, sizeof Dt, 1, 4, &rep) == 4, "T: a block dropped: %lld outside", (long long)rep.outside);
    ck_assert_msg(judge(&L, 4, Du, sizeof Du, 1, 4, &rep) == 4, "U: a block dropped: %lld outside", (long long)rep.outside);
    for (i = 0; i < NB; i++) ord[i] = i;
    ord[NB] = 3;
    emul_lock(X, Y, S0, T0, U0, ord, NB + 1, 0, Ds, Dt, Du);
    ck_assert_msg(judge(&L, 2, Ds, sizeof Ds, 1, 4, &rep) == 4, "S: a block twice: %lld outside", (long long)rep.outside);
    ck_assert_msg(judge(&L, 3, Dt, sizeof Dt, 1, 4, &rep) == 4, "T: a block twice: %lld outside", (long long)rep.outside);
    ck_assert_msg(judge(&L, 4, Du, sizeof Du, 1, 4, &rep) == 4, "U: a block twice: %lld outside", (long long)rep.outside);
    emul_lock(X, Y, S0, T0, U0, ord, NB, 0, Ds, Dt, Du);
    plant_two_ulps(&L, 3, Dt, 4, 1, 4, 2);
    er_interp_bounds_free(L.bd);

    /* the lock released by a plain store: the sum in reverse order covered */
    for (i = 0; i < NB; i++) X1[i] = rnd_f32(3);
    S1[0] = 0.5f;
    Lk[0] = 0;
    lset(&L, NB, 1);
    lbuf(&L, ER_FMT_F32, X1, sizeof X1);
    lbuf(&L, ER_FMT_F32, S1, sizeof S1);
    lbuf(&L, ER_FMT_I32, Lk, sizeof Lk);
    lbounds(&L, m, "lock_store_release", NULL);
    D1[0] = 0.5f;
    for (i = NB - 1; i >= 0; i--) D1[0] = D1[0] + X1[i];
    ck_assert_msg(judge(&L, 1, D1, sizeof D1, 1, 1, &rep) == 0, "the sum under a lock released by a store, reverse order");
    D1[0] = 0.5f;
    for (i = 0; i < NB - 1; i++) D1[0] = D1[0] + X1[i];
    ck_assert_msg(judge(&L, 1, D1, sizeof D1, 1, 1, &rep) == 1, "the last block dropped not caught");
    er_interp_bounds_free(L.bd);

    /* refused: a store under the lock that is not old + v, a branch on the value read under it, old + v stored in a
     * later section or after the release, a sum both atomic and locked (point mode runs them all: the blocks one after another) */
    {
        static const struct { const char *k, *at, *what; } bad[] = {
            {"lock_plain", "lock.mlir:87:", "not the old value of the element it stores plus a term"},
            {"lock_branch", "lock.mlir:103:", "depends on the order the blocks take the lock"},
            {"lock_two_sections", "lock.mlir:120:", "in an earlier critical section"},
            {"lock_late_store", "lock.mlir:134:", "stored after the lock's release"},
            {"lock_mixed", "lock.mlir:148:", "both under a lock and by an atomic add (the first add: line 144)"},
        };
        for (k = 0; k < 5; k++) {
            S1[0] = 0.5f;
            Lk[0] = 0;
            lset(&L, NB, 1);
            lbuf(&L, ER_FMT_F32, X1, sizeof X1);
            lbuf(&L, ER_FMT_F32, S1, sizeof S1);
            lbuf(&L, ER_FMT_I32, Lk, sizeof Lk);
            L.st = er_interp_kernel(m, bad[k].k, &L.l, L.msg, sizeof L.msg);
            ck_assert_msg(L.st == ER_OK && L.l.kind == ER_INTERP_OK, "%s in point mode: %s", bad[k].k, L.msg);
            S1[0] = 0.5f;
            Lk[0] = 0;
            L.st = er_interp_kernel_bounds(m, bad[k].k, &L.l, NULL, &L.bd, L.msg, sizeof L.msg);
            ck_assert_msg(L.st == ER_EUNSUPPORTED && L.l.kind == ER_INTERP_UNSUPPORTED && strstr(L.msg, bad[k].at) &&
                              strstr(L.msg, "'store_ptr_tko'") && strstr(L.msg, bad[k].what),
                          "%s: %s", bad[k].k, L.msg);
        }
    }
    er_interp_free(m);
}
END_TEST

/* ---------------------------------------------------------------- cuTile's FMHA, when exported */

/* The nearest-even f16 value of x (|x| below f16's largest value). */
static double rn_f16(double x)
{
    int e;
    double sc;
    if (x == 0 || !isfinite(x)) return x;
    frexp(x, &e);
    sc = ldexp(1.0, e - 11 < -24 ? -24 : e - 11);
    return nearbyint(x / sc) * sc;
}

/* exp2 as a device's ex2.approx.ftz may give it: the correctly rounded value moved by `off` ulps, subnormals flushed. */
static float dev_exp2(float x, int off)
{
    float r = isinf(x) && x < 0 ? 0.0f : ulps_from(mp_f32(1, x), off);
    return fabsf(r) < 0x1p-126f ? 0.0f : r;
}

/*
 * A device running cuTile's FMHA sample (tests/interp/cutile/gen_cutile.py, fmha_body: 16 x 16 tiles, head
 * dimension 32, online softmax in base 2): each mma's products summed in reverse order after its accumulator
 * (any order), exp2 one ulp off (alternating), the row sums in reverse order, the division one ulp off.
 * bug: 1 a skipped k/v block, 2 a missing rescale of the accumulator, 3 a stale max (p from the previous
 * block's max).
 */
static void emul_fmha(const uint16_t *Q, const uint16_t *K, const uint16_t *V, float *O, int S, int causal, int bug)
{
    enum { FM = 16, FN = 16, FD = 32 };
    const float scale = (float)((1.0 / sqrt(32.0)) * 1.4426950408889634);
    int qb, i, j, d, t;
    for (qb = 0; qb < S / FM; qb++) {
        float m[FM], l[FM], acc[FM][FD];
        int nk = causal ? qb + 1 : S / FN, jb;
        for (i = 0; i < FM; i++) {
            m[i] = -INFINITY;
            l[i] = 0;
            for (d = 0; d < FD; d++) acc[i][d] = 0;
        }
        for (jb = 0; jb < nk; jb++) {
            float sc[FM][FN], p[FM][FN];
            if (bug == 1 && jb == 1) continue;
            for (i = 0; i < FM; i++)
                for (j = 0; j < FN; j++) {
                    float sum = 0;
                    for (d = FD - 1; d >= 0; d--)
                        sum = sum + (float)(val16(ER_FMT_F16, Q[(qb * FM + i) * FD + d]) * val16(ER_FMT_F16, K[(jb * FN + j) * FD + d]));
                    sc[i][j] = sum * scale;
                    if (causal && jb * FN + j > qb * FM + i) sc[i][j] = -INFINITY;
                }
            for (i = 0; i < FM; i++) {
                float mx = -INFINITY, mn, alpha, ps = 0, used;
                for (j = 0; j < FN; j++) mx = sc[i][j] > mx ? sc[i][j] : mx;
                mn = m[i] > mx ? m[i] : mx;
                used = bug == 3 && jb > 0 ? m[i] : mn;
                for (j = 0; j < FN; j++) p[i][j] = dev_exp2(sc[i][j] - used, (i + j) % 2 ? 1 : -1);
                alpha = dev_exp2(m[i] - mn, i % 2 ? 1 : -1);
                for (j = FN - 1; j >= 0; j--) ps = ps + p[i][j];
                l[i] = fmaf(l[i], alpha, ps);
                for (d = 0; d < FD; d++) {
                    float s2 = bug == 2 ? acc[i][d] : acc[i][d] * alpha;
                    for (t = FN - 1; t >= 0; t--) s2 = s2 + (float)(rn_f16(p[i][t]) * val16(ER_FMT_F16, V[(jb * FN + t) * FD + d]));
                    acc[i][d] = s2;
                }
                m[i] = mn;
            }
        }
        for (i = 0; i < FM; i++)
            for (d = 0; d < FD; d++) O[(qb * FM + i) * FD + d] = ulps_from(acc[i][d] / l[i], d % 2 ? 1 : -1);
    }
}

START_TEST(t_fmha)
{
    char dir[1024], path[1200];
    DIR *dd;
    struct dirent *de;
    int found = 0;
    snprintf(dir, sizeof dir, "%s/../cutile", ER_INTERP_KERNELS);
    dd = opendir(dir);
    ck_assert(dd != NULL);
    while ((de = readdir(dd)) != NULL) {
        enum { S = 64, D = 32 };
        er_interp_module *m;
        const char *k;
        uint16_t Q[S * D], K[S * D], V[S * D];
        float O[S * D], E[S * D];
        int64_t sh[2] = {S, D};
        er_interp_bounds_opts o;
        er_check_report rep;
        launch L;
        int i, causal, bug;
        if (!strstr(de->d_name, "fmha") || !strstr(de->d_name, ".mlir")) continue;
        snprintf(path, sizeof path, "../cutile/%s", de->d_name);
        m = load(path);
        k = er_interp_kernel_name(m, 0);
        if (er_interp_kernel_count(m) != 1 || er_interp_param_count(m, k) != 20) {
            printf("t_fmha: %s: not the sample's signature (Q, K, V f16, O f32), skipped\n", de->d_name);
            er_interp_free(m);
            continue;
        }
        causal = strstr(de->d_name, "causal") != NULL;
        for (i = 0; i < S * D; i++) {
            Q[i] = rnd_f16();
            K[i] = rnd_f16();
            V[i] = rnd_f16();
        }
        er_interp_bounds_opts_init(&o);
        o.standard = "any_order";
        memset(O, 0, sizeof O);
        lset(&L, S / 16, 1);
        lbuf_ct(&L, ER_FMT_F16, Q, sizeof Q, 2, sh);
        lbuf_ct(&L, ER_FMT_F16, K, sizeof K, 2, sh);
        lbuf_ct(&L, ER_FMT_F16, V, sizeof V, 2, sh);
        lbuf_ct(&L, ER_FMT_F32, O, sizeof O, 2, sh);
        lbounds(&L, m, k, &o);
        ck_assert_int_eq(judge(&L, 3, O, sizeof O, S, D, &rep), 0);
        emul_fmha(Q, K, V, E, S, causal, 0);
        ck_assert_msg(judge(&L, 3, E, sizeof E, S, D, &rep) == 0, "%s: the device emulation: %lld outside (worst %lld, %lld ulps)",
                      de->d_name, (long long)rep.outside, (long long)rep.worst, (long long)rep.ulps_beyond);
        for (bug = 1; bug <= 3; bug++) {
            int64_t out;
            emul_fmha(Q, K, V, E, S, causal, bug);
            out = judge(&L, 3, E, sizeof E, S, D, &rep);
            printf("t_fmha: %s: planted bug %d (%s): %lld of %d outside\n", de->d_name, bug,
                   bug == 1 ? "a skipped block" : bug == 2 ? "a missing rescale" : "a stale max", (long long)out, S * D);
            ck_assert_msg(out > 0, "%s: planted bug %d not caught", de->d_name, bug);
        }
        plant_two_ulps(&L, 3, O, S * D, S, D, 5 * D + 3);
        er_interp_bounds_free(L.bd);
        er_interp_free(m);
        found++;
    }
    closedir(dd);
    if (!found) printf("t_fmha: skipped: no tests/interp/cutile/*fmha*.mlir yet (cuTile's FMHA sample, exported by gen_cutile.py)\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("interp_bounds");
    TCase *tc = tcase_create("all");
    SRunner *sr;
    int nf;
    rng = er_test_seed("test_interp_bounds");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, t_softmax);
    tcase_add_test(tc, t_matmul);
    tcase_add_test(tc, t_reduce_scan);
    tcase_add_test(tc, t_approx);
    tcase_add_test(tc, t_undecided);
    tcase_add_test(tc, t_epilogue);
    tcase_add_test(tc, t_mxfp8);
    tcase_add_test(tc, t_fast_acc);
    tcase_add_test(tc, t_ops13);
    tcase_add_test(tc, t_lock);
    tcase_add_test(tc, t_fmha);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
