/* test_norm.c: layer_norm, rms_norm, quantize and softmax.backward through er_op_call: rounded bit for bit
 * against MPFR computed here, emulated f32 implementations covered, planted bugs caught, bad calls refused. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

/* y rounded to nearest even into precision p, least normal 2^emin, largest binade emax (binary64 value) */
static double mp_round_fmt(mpfr_t y, int p, int emin, int emax)
{
    mpfr_exp_t e0 = mpfr_get_emin(), e1 = mpfr_get_emax();
    mpfr_t t;
    mpfr_init2(t, p);
    mpfr_set_emin(emin - p + 2);
    mpfr_set_emax(emax + 1);
    int i = mpfr_set(t, y, MPFR_RNDN);
    i = mpfr_check_range(t, i, MPFR_RNDN);
    mpfr_subnormalize(t, i, MPFR_RNDN);
    double d = mpfr_get_d(t, MPFR_RNDN);
    mpfr_set_emin(e0);
    mpfr_set_emax(e1);
    mpfr_clear(t);
    return d;
}

static double mp_round_to(mpfr_t y, int fmt)
{
    switch (fmt) {
    case ER_FMT_F32: return mp_round_fmt(y, 24, -126, 127);
    case ER_FMT_BF16: return mp_round_fmt(y, 8, -126, 127);
    default: return mp_round_fmt(y, 11, -14, 15);
    }
}

static double urand(uint64_t *st) { return (double)(er_test_rand(st) >> 11) * 0x1p-53 * 2 - 1; }

static double val(int fmt, const void *data, int64_t e)
{
    uint64_t b = 0;
    double d;
    int w = fmt == ER_FMT_F32 ? 4 : fmt == ER_FMT_BF16 || fmt == ER_FMT_F16 ? 2 : 1;
    memcpy(&b, (const unsigned char *)data + e * w, (size_t)w);
    er_from_bits(fmt, b, &d);
    return d;
}

/* ---- layer_norm / rms_norm: the MPFR reference ---- */
static void mp_norm(int rms, const float *x, int n, const float *w, const float *b, double eps, int i, mpfr_t y)
{
    mpfr_t mu, v, t;
    mpfr_inits2(400, mu, v, t, (mpfr_ptr)0);
    mpfr_set_zero(mu, 1);
    if (!rms)
        for (int j = 0; j < n; j++) mpfr_add_d(mu, mu, x[j], MPFR_RNDN);
    mpfr_div_si(mu, mu, n, MPFR_RNDN);
    mpfr_set_zero(v, 1);
    for (int j = 0; j < n; j++) {
        mpfr_set_d(t, x[j], MPFR_RNDN);
        mpfr_sub(t, t, mu, MPFR_RNDN);
        mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_add(v, v, t, MPFR_RNDN);
    }
    mpfr_div_si(v, v, n, MPFR_RNDN);
    mpfr_add_d(v, v, eps, MPFR_RNDN);
    mpfr_rec_sqrt(v, v, MPFR_RNDN);
    mpfr_set_d(t, x[i], MPFR_RNDN);
    mpfr_sub(t, t, mu, MPFR_RNDN);
    mpfr_mul(t, t, v, MPFR_RNDN);
    if (w) mpfr_mul_d(t, t, w[i], MPFR_RNDN);
    if (b) mpfr_add_d(t, t, b[i], MPFR_RNDN);
    mpfr_set(y, t, MPFR_RNDN);
    mpfr_clears(mu, v, t, (mpfr_ptr)0);
}

static er_opres *norm_of(int rms, const float *x, int rows, int n, const float *w, const float *b, double eps, int of)
{
    char msg[256] = "", opts[96];
    int64_t shape[2] = {rows, n}, ws[1] = {n};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, shape, (void *)x), W = er_optensor_make(ER_FMT_F32, 1, ws, (void *)w),
                B = er_optensor_make(ER_FMT_F32, 1, ws, (void *)b);
    const er_optensor *in[3] = {&X, w ? &W : NULL, b ? &B : NULL};
    er_opres *r = NULL;
    snprintf(opts, sizeof opts, "normalized_shape=%d,eps=%.17g,out=%s", n, eps, er_format_name(of));
    ck_assert_msg(er_op_call_nd(rms ? "rms_norm" : "layer_norm", rms ? 2 : 3, in, opts, &r, msg, sizeof msg) == ER_OK,
                  "%s", msg);
    return r;
}

START_TEST(norm_rounded_against_mpfr)
{
    uint64_t st = er_test_seed("norm_rounded");
    char msg[256] = "";
    long checked = 0;
    mpfr_t y;
    mpfr_init2(y, 400);
    for (int trial = 0; trial < 24; trial++) {
        int rms = trial % 2, of = trial % 3 == 0 ? ER_FMT_F32 : trial % 3 == 1 ? ER_FMT_BF16 : ER_FMT_F16;
        int rows = 1 + (int)(er_test_rand(&st) % 4), n = 1 + (int)(er_test_rand(&st) % 90);
        float *x = malloc(sizeof(float) * (size_t)(rows * n)), w[128], b[128];
        double mean = trial % 4 == 1 ? 5 : 0;
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) + mean);
        if (trial % 5 == 2 && n > 2) x[1] = x[0], x[2] = x[0]; /* repeated values */
        for (int i = 0; i < n; i++) w[i] = (float)urand(&st), b[i] = (float)urand(&st);
        int aff = trial % 3 != 2;
        er_opres *r = norm_of(rms, x, rows, n, aff ? w : NULL, aff && !rms ? b : NULL, 1e-5, of);
        const er_optensor *R = er_opres_rounded(r, 0);
        double *lo = malloc(sizeof(double) * (size_t)(rows * n)), *hi = malloc(sizeof(double) * (size_t)(rows * n));
        ck_assert_int_eq(er_opres_exact(r, 0, lo, hi, msg, sizeof msg), ER_OK);
        for (int row = 0; row < rows; row++)
            for (int i = 0; i < n; i++) {
                int e = row * n + i;
                mp_norm(rms, x + row * n, n, aff ? w : NULL, aff && !rms ? b : NULL, 1e-5, i, y);
                double want = mp_round_to(y, of), got = val(of, R->data, e);
                ck_assert_msg(got == want || (got == 0 && want == 0), "trial %d (%s) element %d: %a, MPFR %a", trial,
                              rms ? "rms_norm" : "layer_norm", e, got, want);
                ck_assert_msg(mpfr_cmp_d(y, lo[e]) >= 0 && mpfr_cmp_d(y, hi[e]) <= 0, "trial %d element %d outside [%a, %a]",
                              trial, e, lo[e], hi[e]);
                checked++;
            }
        er_opres_free(r);
        free(lo);
        free(hi);
        free(x);
    }
    mpfr_clear(y);
    printf("norms: %ld elements rounded as MPFR rounds them\n", checked);
}
END_TEST

/* ---- emulated f32 implementations and planted bugs ---- */
enum { LN_TWO_INDEX, LN_TWO_TREE, LN_ONE_PASS, BUG_UNBIASED, BUG_EPS_OUTSIDE, BUG_NO_MEAN, BUG_SWAP_WB, LN_ASSOC };

static float fsum(const float *t, int n, int tree)
{
    if (!tree) {
        float s = 0;
        for (int j = 0; j < n; j++) s += t[j];
        return s;
    }
    if (n == 1) return t[0];
    return fsum(t, n / 2, 1) + fsum(t + n / 2, n - n / 2, 1);
}

static void ln_emul(int rms, const float *x, int rows, int n, const float *w, const float *b, float eps, int kind,
                    float *y)
{
    float *t = malloc(sizeof(float) * (size_t)n);
    volatile float ve = eps;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        int tree = kind == LN_TWO_TREE;
        float m = rms || kind == BUG_NO_MEAN ? 0.0f : fsum(xr, n, tree) / (float)n, var;
        if (rms && kind == BUG_NO_MEAN) m = 0;
        if (kind == LN_ONE_PASS && !rms) {
            for (int j = 0; j < n; j++) t[j] = xr[j] * xr[j];
            float m0 = fsum(xr, n, 0) / (float)n;
            var = fsum(t, n, 0) / (float)n - m0 * m0;
            if (var < 0) var = 0;
            m = m0;
        } else {
            float mm = kind == BUG_NO_MEAN && !rms ? fsum(xr, n, 0) / (float)n : m;
            for (int j = 0; j < n; j++) t[j] = (xr[j] - mm) * (xr[j] - mm);
            var = fsum(t, n, tree) / (float)(kind == BUG_UNBIASED && n > 1 ? n - 1 : n);
        }
        float rs = kind == BUG_EPS_OUTSIDE ? 1.0f / (sqrtf(var) + ve) : 1.0f / sqrtf(var + ve);
        for (int i = 0; i < n; i++) {
            float wi = w ? w[i] : 1.0f, bi = b ? b[i] : 0.0f;
            if (kind == BUG_SWAP_WB) {
                float q = wi;
                wi = bi;
                bi = q;
            }
            float d = xr[i] - m;
            volatile float p;
            if (kind == LN_ASSOC) { /* d (r w): another association */
                volatile float rw = rs * wi;
                p = d * rw;
            } else {
                p = d * rs;
                p = p * wi;
            }
            y[r * n + i] = p + bi;
        }
    }
    free(t);
}

/* rows < 0: a 1-D output of n elements */
static int64_t outside_f32(er_opres *r, int out, const float *y, int rows, int n, const char *standard, int of)
{
    char msg[256] = "";
    er_tol_opts o;
    er_tol_opts_init(&o);
    ck_assert_int_eq(er_standard_parse(standard, &o.standard, msg, sizeof msg), ER_OK);
    int nd = rows < 0 ? 1 : 2;
    int64_t shape[2] = {rows < 0 ? n : rows, n}, outside = -1;
    size_t cnt = (size_t)(rows < 0 ? 1 : rows) * (size_t)n;
    uint16_t *h = NULL;
    er_optensor Y = er_optensor_make(ER_FMT_F32, nd, shape, (void *)y);
    if (of != ER_FMT_F32) {
        h = malloc(sizeof(uint16_t) * cnt);
        ck_assert_int_eq(er_convert_array(ER_FMT_F32, of, y, h, cnt, ER_RND_NEAREST_EVEN, 0u, NULL, NULL), ER_OK);
        Y = er_optensor_make(of, nd, shape, h);
    }
    ck_assert_msg(er_opres_covers(r, out, &o, &Y, NULL, &outside, msg, sizeof msg) == ER_OK, "%s", msg);
    free(h);
    return outside;
}

START_TEST(norm_emulations_and_bugs)
{
    uint64_t st = er_test_seed("norm_emulations");
    for (int trial = 0; trial < 24; trial++) {
        int rms = trial % 2, of = trial % 4 < 2 ? ER_FMT_F32 : ER_FMT_BF16;
        int rows = 2 + (int)(er_test_rand(&st) % 6), n = 16 + (int)(er_test_rand(&st) % 200);
        float *x = malloc(sizeof(float) * (size_t)(rows * n)), *y = malloc(sizeof(float) * (size_t)(rows * n));
        float w[256], b[256];
        double mean = trial % 3 == 0 ? 0.0 : 1.0, sd = trial % 3 == 2 ? 0.1 : 1.0;
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) * sd + mean);
        for (int i = 0; i < n; i++) w[i] = (float)urand(&st), b[i] = (float)urand(&st);
        float eps = 1e-3f;
        er_opres *r = norm_of(rms, x, rows, n, w, rms ? NULL : b, eps, of);
        ln_emul(rms, x, rows, n, w, rms ? NULL : b, eps, LN_TWO_INDEX, y);
        ck_assert_msg(outside_f32(r, 0, y, rows, n, "normal", of) == 0, "trial %d: index order outside normal", trial);
        ln_emul(rms, x, rows, n, w, rms ? NULL : b, eps, LN_TWO_TREE, y);
        ck_assert_msg(outside_f32(r, 0, y, rows, n, "normal", of) == 0, "trial %d: a tree outside normal", trial);
        ln_emul(rms, x, rows, n, w, rms ? NULL : b, eps, LN_ASSOC, y);
        ck_assert_msg(outside_f32(r, 0, y, rows, n, "normal", of) == 0, "trial %d: d (r w) outside normal", trial);
        if (!rms) {
            ln_emul(0, x, rows, n, w, b, eps, LN_ONE_PASS, y);
            ck_assert_msg(outside_f32(r, 0, y, rows, n, "any_order", of) == 0, "trial %d: one pass outside any_order",
                          trial);
        }
        if (of == ER_FMT_F32) {
            static const int bugs[] = {BUG_UNBIASED, BUG_EPS_OUTSIDE, BUG_NO_MEAN, BUG_SWAP_WB};
            for (int k = 0; k < 4; k++) {
                if (rms && bugs[k] >= BUG_NO_MEAN) continue;
                ln_emul(rms, x, rows, n, w, rms ? NULL : b, eps, bugs[k], y);
                /* normal: any_order's one-pass variance can hide a small bug on rows whose mean is large */
                ck_assert_msg(outside_f32(r, 0, y, rows, n, "normal", of) > 0, "trial %d: bug %d not caught", trial,
                              bugs[k]);
            }
        }
        er_opres_free(r);
        free(x);
        free(y);
    }
}
END_TEST

START_TEST(norm_bad_calls)
{
    float x[2][6] = {{0}}, w[5] = {0};
    char msg[256] = "";
    int64_t sx[2] = {2, 6}, sw[1] = {5};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, sx, x), W = er_optensor_make(ER_FMT_F32, 1, sw, w);
    const er_optensor *in[2] = {&X, &W};
    er_opres *r = NULL;
    ck_assert_int_ne(er_op_call_nd("layer_norm", 1, in, "normalized_shape=5", &r, msg, sizeof msg), ER_OK);
    ck_assert_msg(strstr(msg, "normalized_shape") != NULL, "%s", msg);
    ck_assert_int_ne(er_op_call_nd("layer_norm", 1, in, "normalized_shape=2x6x3", &r, msg, sizeof msg), ER_OK);
    ck_assert_int_ne(er_op_call_nd("layer_norm", 1, in, "normalized_shape=6a", &r, msg, sizeof msg), ER_OK);
    ck_assert_int_ne(er_op_call_nd("rms_norm", 2, in, "normalized_shape=6", &r, msg, sizeof msg), ER_OK);
    ck_assert_msg(strstr(msg, "weight") != NULL, "%s", msg);
    ck_assert_int_ne(er_op_call_nd("rms_norm", 1, in, "eps=-1", &r, msg, sizeof msg), ER_OK);
    ck_assert_int_ne(er_op_call_nd("rms_norm", 1, in, "bogus=1", &r, msg, sizeof msg), ER_OK);
    /* an all-equal row: x - mean = 0 exactly, y = bias (here 0) */
    ck_assert_msg(er_op_call_nd("layer_norm", 1, in, "normalized_shape=2x6", &r, msg, sizeof msg) == ER_OK, "%s", msg);
    const float *y = er_opres_rounded(r, 0)->data;
    for (int e = 0; e < 12; e++) ck_assert(y[e] == 0 && !signbit(y[e]));
    er_opres_free(r);
}
END_TEST

/* ---- quantize ---- */
/* an independent OCP MX quantizer: shared exponent from frexp, elements rounded by MPFR and clamped */
static void mx_ref(const float *x, int n, int p, int emin, int emax, double fm, int bug, double *q, double *s)
{
    int blk = bug == 3 ? 16 : 32;
    mpfr_t t;
    mpfr_init2(t, 64);
    for (int k = 0; k < n; k += blk) {
        double a = 0;
        for (int i = 0; i < blk; i++) a = fmax(a, fabs((double)x[k + i]));
        int ex;
        frexp(a, &ex);
        int sh = a > 0 ? ex - 1 - emax : -127;
        if (bug == 1) sh += 1;
        if (sh < -127) sh = -127;
        double X = ldexp(1.0, sh);
        for (int i = 0; i < blk; i++) {
            s[(k + i) / 32] = X;
            mpfr_set_d(t, (double)x[k + i] / X, MPFR_RNDN);
            double v = bug == 2 ? mpfr_get_d(t, MPFR_RNDZ) : mp_round_fmt(t, p, emin, emax);
            if (bug == 2) { /* toward zero into the format */
                mpfr_t z;
                mpfr_init2(z, p);
                mpfr_set_d(z, v, MPFR_RNDZ);
                v = mpfr_get_d(z, MPFR_RNDZ);
                mpfr_clear(z);
            }
            if (v > fm) v = fm;
            if (v < -fm) v = -fm;
            q[k + i] = v;
        }
    }
    mpfr_clear(t);
}

static int64_t q_outside(er_opres *r, int out, const double *v, int64_t count, int fmt)
{
    char msg[256] = "";
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    unsigned char *d = calloc((size_t)count, (size_t)fi.storage_bytes);
    for (int64_t e = 0; e < count; e++) {
        uint64_t b = 0;
        double rv;
        er_round_double(fmt, v[e], ER_RND_NEAREST_EVEN, &rv);
        ck_assert_int_eq(er_bits_of(fmt, rv, &b), ER_OK);
        memcpy(d + e * fi.storage_bytes, &b, (size_t)fi.storage_bytes);
    }
    const er_optensor *R = er_opres_rounded(r, out);
    er_optensor T = *R;
    for (int k = 0; k < T.ndim; k++) T.strides[k] = R->strides[k];
    T.data = d;
    int64_t outside = -1;
    ck_assert_msg(er_opres_covers(r, out, NULL, &T, NULL, &outside, msg, sizeof msg) == ER_OK, "%s", msg);
    free(d);
    return outside;
}

START_TEST(quantize_mx_and_bugs)
{
    uint64_t st = er_test_seed("quantize_mx");
    static const struct { const char *name; int fmt, p, emin, emax; double fmax; } F[] = {
        {"f8e4m3", ER_FMT_F8E4M3FN, 4, -6, 8, 448}, {"f8e5m2", ER_FMT_F8E5M2, 3, -14, 15, 57344},
        {"f6e2m3", ER_FMT_F6E2M3FN, 4, 0, 2, 7.5},  {"f6e3m2", ER_FMT_F6E3M2FN, 3, -2, 4, 28},
        {"f4e2m1", ER_FMT_F4E2M1FN, 2, 0, 2, 6},
    };
    char msg[256] = "";
    for (int f = 0; f < 5; f++) {
        int rows = 3, n = 128;
        float x[3 * 128];
        double q[3 * 128], s[3 * 4];
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) * ldexp(1.0, (int)(er_test_rand(&st) % 12) - 6));
        for (int e = 0; e < 32; e++) x[e] = 0; /* an all-zero block */
        for (int e = 64; e < rows * n; e += 32) x[e] = (float)(1.95 * ldexp(1.0, 3)); /* clamped elements */
        int64_t sh[2] = {rows, n};
        er_optensor X = er_optensor_make(ER_FMT_F32, 2, sh, x);
        const er_optensor *in[1] = {&X};
        char opts[64];
        snprintf(opts, sizeof opts, "scheme=mx,fmt=%s", F[f].name);
        er_opres *r = NULL;
        ck_assert_msg(er_op_call_nd("quantize", 1, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_str_eq(er_opres_output_name(r, 1), "scale");
        ck_assert_int_eq(er_opres_count(r, 1), rows * n / 32);
        for (int row = 0; row < rows; row++) mx_ref(x + row * n, n, F[f].p, F[f].emin, F[f].emax, F[f].fmax, 0, q + row * n, s + row * 4);
        for (int e = 0; e < rows * n; e++)
            ck_assert_msg(val(F[f].fmt, er_opres_rounded(r, 0)->data, e) == q[e], "%s element %d: %g, want %g", F[f].name,
                          e, val(F[f].fmt, er_opres_rounded(r, 0)->data, e), q[e]);
        for (int g = 0; g < rows * 4; g++) ck_assert(val(ER_FMT_F8E8M0FNU, er_opres_rounded(r, 1)->data, g) == s[g]);
        ck_assert_int_eq(q_outside(r, 0, q, rows * n, F[f].fmt), 0);
        ck_assert_int_eq(q_outside(r, 1, s, rows * 4, ER_FMT_F8E8M0FNU), 0);
        for (int bug = 1; bug <= 3; bug++) {
            for (int row = 0; row < rows; row++)
                mx_ref(x + row * n, n, F[f].p, F[f].emin, F[f].emax, F[f].fmax, bug, q + row * n, s + row * 4);
            int64_t o = q_outside(r, 0, q, rows * n, F[f].fmt) + (bug == 1 ? q_outside(r, 1, s, rows * 4, ER_FMT_F8E8M0FNU) : 0);
            ck_assert_msg(o > 0, "%s: bug %d not caught", F[f].name, bug);
        }
        er_opres_free(r);
    }
    /* mx refuses a scale and a row not a multiple of 32 */
    float z[40] = {0};
    int64_t sz[2] = {1, 40};
    er_optensor Z = er_optensor_make(ER_FMT_F32, 2, sz, z);
    const er_optensor *zin[2] = {&Z, &Z};
    er_opres *r = NULL;
    ck_assert_int_ne(er_op_call_nd("quantize", 1, zin, "scheme=mx", &r, msg, sizeof msg), ER_OK);
    ck_assert_msg(strstr(msg, "32") != NULL, "%s", msg);
    ck_assert_int_ne(er_op_call_nd("quantize", 1, zin, "fmt=f7", &r, msg, sizeof msg), ER_OK);
}
END_TEST

START_TEST(quantize_tensor_scale_and_saturation)
{
    uint64_t st = er_test_seed("quantize_tensor");
    char msg[256] = "";
    float x[4 * 50];
    double amax = 0;
    for (int e = 0; e < 200; e++) x[e] = (float)(urand(&st) * 3), amax = fmax(amax, fabs((double)x[e]));
    int64_t sh[2] = {4, 50};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, sh, x);
    const er_optensor *in[2] = {&X, NULL};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call_nd("quantize", 1, in, "scheme=tensor,fmt=f8e4m3", &r, msg, sizeof msg) == ER_OK, "%s", msg);
    /* two f32 implementations: x / (amax / 448) and x * (1 / scale) */
    float s1 = (float)amax / 448.0f;
    volatile float rc = 1.0f / s1;
    double q1[200], q2[200], qz[200];
    for (int e = 0; e < 200; e++) {
        q1[e] = (double)(x[e] / s1);
        q2[e] = (double)(x[e] * rc);
        mpfr_t t;
        mpfr_init2(t, 4);
        mpfr_set_d(t, (double)(x[e] / s1), MPFR_RNDZ); /* toward zero: a bug */
        qz[e] = mpfr_get_d(t, MPFR_RNDZ);
        mpfr_clear(t);
    }
    double sc = s1;
    ck_assert_int_eq(q_outside(r, 1, &sc, 1, ER_FMT_F32), 0);
    ck_assert_int_eq(q_outside(r, 0, q1, 200, ER_FMT_F8E4M3FN), 0);
    ck_assert_int_eq(q_outside(r, 0, q2, 200, ER_FMT_F8E4M3FN), 0);
    ck_assert_int_gt(q_outside(r, 0, qz, 200, ER_FMT_F8E4M3FN), 0);
    er_opres_free(r);
    /* a given scale that overflows: saturate=1 gives 448, saturate=0 gives NaN */
    float gs = (float)amax / 600.0f;
    er_optensor S = er_optensor_make(ER_FMT_F32, 0, NULL, &gs);
    in[1] = &S;
    for (int sat = 0; sat < 2; sat++) {
        ck_assert_msg(er_op_call_nd("quantize", 2, in, sat ? "saturate=1" : "saturate=0", &r, msg, sizeof msg) == ER_OK,
                      "%s", msg);
        int nan = 0, top = 0;
        for (int e = 0; e < 200; e++) {
            double v = val(ER_FMT_F8E4M3FN, er_opres_rounded(r, 0)->data, e);
            nan += isnan(v);
            top += fabs(v) == 448;
        }
        ck_assert(sat ? (nan == 0 && top > 0) : nan > 0);
        er_opres_free(r);
    }
}
END_TEST

/* ---- softmax.backward ---- */
START_TEST(softmax_backward)
{
    uint64_t st = er_test_seed("softmax_backward");
    char msg[256] = "";
    mpfr_t S, C, t, y;
    mpfr_inits2(400, S, C, t, y, (mpfr_ptr)0);
    for (int trial = 0; trial < 12; trial++) {
        int rows = 1 + (int)(er_test_rand(&st) % 4), n = 2 + (int)(er_test_rand(&st) % 100), of = trial % 2 ? ER_FMT_BF16 : ER_FMT_F32;
        float *x = malloc(sizeof(float) * (size_t)(rows * n)), *g = malloc(sizeof(float) * (size_t)(rows * n));
        float *gi = malloc(sizeof(float) * (size_t)(rows * n));
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) * 3), g[e] = (float)urand(&st);
        if (trial % 3 == 0) /* a symmetric row: equal x, grads summing to zero around some elements */
            for (int i = 0; i < n; i++) x[i] = 0.5f, g[i] = (float)(i % 3) - 1.0f;
        int64_t sh[2] = {rows, n};
        er_optensor X = er_optensor_make(ER_FMT_F32, 2, sh, x), G = er_optensor_make(ER_FMT_F32, 2, sh, g);
        const er_optensor *in[2] = {&X, &G};
        er_opres *r = NULL;
        char opts[48];
        snprintf(opts, sizeof opts, "out=%s", er_format_name(of));
        ck_assert_msg(er_op_call_nd("softmax.backward", 2, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        for (int row = 0; row < rows; row++) {
            const float *xr = x + row * n, *gr = g + row * n;
            float m = -INFINITY, s = 0, c = 0, yy[128];
            for (int j = 0; j < n; j++) m = fmaxf(m, xr[j]);
            mpfr_set_zero(S, 1);
            mpfr_set_zero(C, 1);
            for (int j = 0; j < n; j++) {
                mpfr_set_d(t, (double)xr[j] - m, MPFR_RNDN);
                mpfr_exp(t, t, MPFR_RNDN);
                mpfr_add(S, S, t, MPFR_RNDN);
                mpfr_mul_d(t, t, gr[j], MPFR_RNDN);
                mpfr_add(C, C, t, MPFR_RNDN);
                yy[j] = expf(xr[j] - m);
                s += yy[j];
            }
            mpfr_div(C, C, S, MPFR_RNDN);
            for (int j = 0; j < n; j++) yy[j] /= s, c += gr[j] * yy[j];
            for (int i = 0; i < n; i++) {
                mpfr_set_d(t, (double)xr[i] - m, MPFR_RNDN);
                mpfr_exp(t, t, MPFR_RNDN);
                mpfr_div(t, t, S, MPFR_RNDN);
                mpfr_set_d(y, gr[i], MPFR_RNDN);
                mpfr_sub(y, y, C, MPFR_RNDN);
                mpfr_mul(y, y, t, MPFR_RNDN);
                double want = mp_round_to(y, of), got = val(of, er_opres_rounded(r, 0)->data, row * n + i);
                ck_assert_msg(got == want, "trial %d element %d: %a, MPFR %a", trial, row * n + i, got, want);
                gi[row * n + i] = yy[i] * (gr[i] - c);
            }
        }
        ck_assert_msg(outside_f32(r, 0, gi, rows, n, "any_order", of) == 0, "trial %d: emulation outside", trial);
        for (int e = 0; e < rows * n; e++) gi[e] *= 1.02f; /* a planted bug: 2% off */
        ck_assert_msg(outside_f32(r, 0, gi, rows, n, "any_order", of) > 0, "trial %d: bug not caught", trial);
        er_opres_free(r);
        free(x);
        free(g);
        free(gi);
    }
    mpfr_clears(S, C, t, y, (mpfr_ptr)0);
}
END_TEST


/* ---- layer_norm.backward and rms_norm.backward ---- */
/* MPFR reference: grad_input_i, grad_weight_c, grad_bias_c of rows x n */
static void mp_norm_backward(int rms, const float *x, const float *g, const float *w, int rows, int n, double eps,
                             int out, int e, mpfr_t y)
{
    mpfr_t mu, v, G, C, t, u;
    mpfr_inits2(400, mu, v, G, C, t, u, (mpfr_ptr)0);
    mpfr_set_zero(y, 1);
    for (int row = 0; row < rows; row++) {
        const float *xr = x + row * n, *gr = g + row * n;
        if (out == 0 && row != e / n) continue;
        mpfr_set_zero(mu, 1);
        if (!rms)
            for (int j = 0; j < n; j++) mpfr_add_d(mu, mu, xr[j], MPFR_RNDN);
        mpfr_div_si(mu, mu, n, MPFR_RNDN);
        mpfr_set_zero(v, 1);
        mpfr_set_zero(G, 1);
        mpfr_set_zero(C, 1);
        for (int j = 0; j < n; j++) {
            mpfr_set_d(t, xr[j], MPFR_RNDN);
            mpfr_sub(t, t, mu, MPFR_RNDN);
            mpfr_sqr(u, t, MPFR_RNDN);
            mpfr_add(v, v, u, MPFR_RNDN);
            mpfr_set_d(u, gr[j], MPFR_RNDN);
            mpfr_mul_d(u, u, w ? w[j] : 1.0, MPFR_RNDN);
            mpfr_add(G, G, u, MPFR_RNDN);
            mpfr_mul(u, u, t, MPFR_RNDN);
            mpfr_add(C, C, u, MPFR_RNDN);
        }
        mpfr_div_si(v, v, n, MPFR_RNDN);
        mpfr_add_d(v, v, eps, MPFR_RNDN);
        mpfr_rec_sqrt(v, v, MPFR_RNDN); /* rstd */
        int c = out == 0 ? e % n : e;
        mpfr_set_d(t, xr[c], MPFR_RNDN);
        mpfr_sub(t, t, mu, MPFR_RNDN);
        if (out == 0) { /* r (gy - G/N) - r^3 (x - mu) C / N */
            mpfr_set_d(u, gr[c], MPFR_RNDN);
            mpfr_mul_d(u, u, w ? w[c] : 1.0, MPFR_RNDN);
            if (!rms) {
                mpfr_div_si(G, G, n, MPFR_RNDN);
                mpfr_sub(u, u, G, MPFR_RNDN);
            }
            mpfr_mul(t, t, v, MPFR_RNDN);
            mpfr_mul(t, t, v, MPFR_RNDN);
            mpfr_mul(t, t, C, MPFR_RNDN);
            mpfr_div_si(t, t, n, MPFR_RNDN);
            mpfr_sub(u, u, t, MPFR_RNDN);
            mpfr_mul(y, u, v, MPFR_RNDN);
        } else if (out == 1) {
            mpfr_mul(t, t, v, MPFR_RNDN);
            mpfr_mul_d(t, t, gr[c], MPFR_RNDN);
            mpfr_add(y, y, t, MPFR_RNDN);
        } else {
            mpfr_add_d(y, y, gr[c], MPFR_RNDN);
        }
    }
    mpfr_clears(mu, v, G, C, t, u, (mpfr_ptr)0);
}

/* f32 emulation of torch's formula: xhat, sums of gy and gy xhat, then rstd (gy - a - xhat b) */
static void norm_backward_emul(int rms, const float *x, const float *g, const float *w, int rows, int n, float eps,
                               int bug, float *gi, float *gw, float *gb)
{
    for (int c = 0; c < n; c++) gw[c] = gb[c] = 0;
    for (int row = 0; row < rows; row++) {
        const float *xr = x + row * n, *gr = g + row * n;
        float m = 0, q = 0, sg = 0, sgx = 0;
        if (!rms) {
            for (int j = 0; j < n; j++) m += xr[j];
            m /= (float)n;
        }
        for (int j = 0; j < n; j++) q += (xr[j] - m) * (xr[j] - m);
        float r = 1.0f / sqrtf(q / (float)n + eps);
        for (int j = 0; j < n; j++) {
            float gy = gr[j] * (w ? w[j] : 1.0f), xh = (xr[j] - m) * r;
            sg += gy;
            sgx += gy * xh;
        }
        float a = rms || bug == 1 ? 0.0f : sg / (float)n, b = sgx / (float)n;
        for (int i = 0; i < n; i++) {
            float gy = gr[i] * (w ? w[i] : 1.0f), xh = (xr[i] - m) * r;
            gi[row * n + i] = r * (gy - a - (bug == 2 ? 0.0f : xh * b));
            gw[i] += gr[i] * xh;
            gb[i] += gr[i];
        }
    }
}

START_TEST(norm_backward)
{
    uint64_t st = er_test_seed("norm_backward");
    char msg[256] = "";
    mpfr_t y;
    mpfr_init2(y, 400);
    for (int trial = 0; trial < 10; trial++) {
        int rms = trial % 2, of = trial % 4 < 2 ? ER_FMT_F32 : ER_FMT_BF16;
        int rows = 1 + (int)(er_test_rand(&st) % 5), n = 2 + (int)(er_test_rand(&st) % 60);
        float x[5 * 64], g[5 * 64], w[64], gi[5 * 64], gw[64], gb[64];
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) + (trial % 3 == 1 ? 2 : 0)), g[e] = (float)urand(&st);
        for (int c = 0; c < n; c++) w[c] = (float)urand(&st);
        if (trial == 4) /* a constant gradient with unit weight: layer_norm's grad_input is exactly 0 */
            for (int e = 0; e < rows * n; e++) g[e] = 0.5f;
        const float *wp = trial == 4 ? NULL : w;
        int64_t sx[2] = {rows, n}, sw[1] = {n};
        er_optensor X = er_optensor_make(ER_FMT_F32, 2, sx, x), G = er_optensor_make(ER_FMT_F32, 2, sx, g),
                    W = er_optensor_make(ER_FMT_F32, 1, sw, w);
        const er_optensor *in[4] = {&X, wp ? &W : NULL, NULL, &G};
        if (rms) in[2] = &G;
        char opts[96];
        snprintf(opts, sizeof opts, "normalized_shape=%d,eps=0.001,out=%s", n, er_format_name(of));
        er_opres *r = NULL;
        ck_assert_msg(er_op_call_nd(rms ? "rms_norm.backward" : "layer_norm.backward", rms ? 3 : 4, in, opts, &r, msg,
                                    sizeof msg) == ER_OK,
                      "%s", msg);
        ck_assert_int_eq(er_opres_outputs(r), rms ? 2 : 3);
        for (int out = 0; out < (rms ? 2 : 3); out++) {
            int cnt = out == 0 ? rows * n : n, fmt = out == 0 ? of : ER_FMT_F32;
            for (int e = 0; e < cnt; e++) {
                mp_norm_backward(rms, x, g, wp, rows, n, 0.001, out, e, y);
                double want = mp_round_to(y, fmt), got = val(fmt, er_opres_rounded(r, out)->data, e);
                ck_assert_msg(got == want || (got == 0 && want == 0), "trial %d output %d element %d: %a, MPFR %a",
                              trial, out, e, got, want);
            }
        }
        for (int bug = 0; bug < 3; bug++) {
            norm_backward_emul(rms, x, g, wp, rows, n, 0.001f, bug, gi, gw, gb);
            int64_t o = outside_f32(r, 0, gi, rows, n, "any_order", of);
            if (bug == 0) {
                ck_assert_msg(o == 0, "trial %d: emulated grad_input outside (%lld)", trial, (long long)o);
                ck_assert_int_eq(outside_f32(r, 1, gw, -1, n, "any_order", ER_FMT_F32), 0);
                if (!rms) ck_assert_int_eq(outside_f32(r, 2, gb, -1, n, "any_order", ER_FMT_F32), 0);
            } else if (!(rms && bug == 1) && trial != 4) {
                ck_assert_msg(o > 0, "trial %d: backward bug %d not caught", trial, bug);
            }
        }
        er_opres_free(r);
    }
    mpfr_clear(y);
}
END_TEST

/* ---- log_softmax.backward: g - softmax(x) sum(g), against MPFR and an f32 emulation ---- */
START_TEST(log_softmax_backward)
{
    uint64_t st = er_test_seed("log_softmax_backward");
    char msg[256] = "";
    mpfr_t S, G, t;
    mpfr_inits2(400, S, G, t, (mpfr_ptr)0);
    for (int trial = 0; trial < 10; trial++) {
        int rows = 1 + (int)(er_test_rand(&st) % 4), n = 2 + (int)(er_test_rand(&st) % 100);
        int of = trial % 2 ? ER_FMT_BF16 : ER_FMT_F32;
        float x[4 * 101], g[4 * 101], gi[4 * 101];
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) * 4), g[e] = (float)urand(&st);
        if (trial % 3 == 0) /* a zero-sum gradient on the first row */
            for (int i = 0; i < n; i++) g[i] = i % 2 ? 0.25f : -0.25f, g[n - 1] = n % 2 ? 0.0f : g[n - 1];
        int64_t sh[2] = {rows, n};
        er_optensor X = er_optensor_make(ER_FMT_F32, 2, sh, x), Gt = er_optensor_make(ER_FMT_F32, 2, sh, g);
        const er_optensor *in[2] = {&X, &Gt};
        char opts[48];
        snprintf(opts, sizeof opts, "out=%s", er_format_name(of));
        er_opres *r = NULL;
        ck_assert_msg(er_op_call_nd("log_softmax.backward", 2, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        for (int row = 0; row < rows; row++) {
            const float *xr = x + row * n, *gr = g + row * n;
            float m = -INFINITY, z[101], sg = 0, lse = 0;
            for (int j = 0; j < n; j++) m = fmaxf(m, xr[j]);
            mpfr_set_zero(S, 1);
            mpfr_set_zero(G, 1);
            for (int j = 0; j < n; j++) {
                mpfr_set_d(t, (double)xr[j] - m, MPFR_RNDN);
                mpfr_exp(t, t, MPFR_RNDN);
                mpfr_add(S, S, t, MPFR_RNDN);
                mpfr_add_d(G, G, gr[j], MPFR_RNDN);
                lse += expf(xr[j] - m);
                sg += gr[j];
            }
            lse = logf(lse);
            for (int j = 0; j < n; j++) z[j] = xr[j] - m - lse; /* torch's forward in f32 */
            for (int i = 0; i < n; i++) {
                mpfr_set_d(t, (double)xr[i] - m, MPFR_RNDN);
                mpfr_exp(t, t, MPFR_RNDN);
                mpfr_div(t, t, S, MPFR_RNDN);
                mpfr_mul(t, t, G, MPFR_RNDN);
                mpfr_d_sub(t, gr[i], t, MPFR_RNDN);
                double want = mp_round_to(t, of), got = val(of, er_opres_rounded(r, 0)->data, row * n + i);
                ck_assert_msg(got == want || (got == 0 && want == 0), "trial %d element %d: %a, MPFR %a", trial,
                              row * n + i, got, want);
                gi[row * n + i] = gr[i] - expf(z[i]) * sg;
            }
        }
        ck_assert_msg(outside_f32(r, 0, gi, rows, n, "any_order", of) == 0, "trial %d: emulation outside", trial);
        for (int row = 0; row < rows; row++) /* a planted bug: the gradient's sum dropped */
            for (int i = 0; i < n; i++) gi[row * n + i] = g[row * n + i];
        if (trial % 3) ck_assert_msg(outside_f32(r, 0, gi, rows, n, "any_order", of) > 0, "trial %d: bug not caught", trial);
        er_opres_free(r);
    }
    mpfr_clears(S, G, t, (mpfr_ptr)0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("norm");
    TCase *tc = tcase_create("norm");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, norm_rounded_against_mpfr);
    tcase_add_test(tc, norm_emulations_and_bugs);
    tcase_add_test(tc, norm_bad_calls);
    tcase_add_test(tc, quantize_mx_and_bugs);
    tcase_add_test(tc, quantize_tensor_scale_and_saturation);
    tcase_add_test(tc, softmax_backward);
    tcase_add_test(tc, norm_backward);
    tcase_add_test(tc, log_softmax_backward);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
