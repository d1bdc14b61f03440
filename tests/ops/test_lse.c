/* test_lse.c: log_softmax and logsumexp through er_op_call: rounded bit for bit against MPFR computed here,
 * exact enclosures holding MPFR's value, emulated f32 implementations (both ways of combining, index order
 * and trees, exp and log perturbed within the declared ulps) covered, planted bugs (lse off by log 2, the
 * max not added back, a term missing) caught, special rows, keepdim. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

static uint64_t mp_bits_f32(mpfr_t y, int fmt)
{
    uint64_t b = 0;
    if (fmt == ER_FMT_F64) {
        double d = mpfr_get_d(y, MPFR_RNDN);
        memcpy(&b, &d, 8);
    } else {
        float f = mpfr_get_flt(y, MPFR_RNDN); /* the values here are f32 normals or zero */
        uint32_t u;
        memcpy(&u, &f, 4);
        b = u;
    }
    return b;
}

/* log(sum exp(x_j - m)) + m at 320 bits (lse), or x_i - that (log_softmax) */
static void mp_lse(const double *x, int n, int st, mpfr_t y)
{
    mpfr_t m, s, t;
    mpfr_inits2(320, m, s, t, (mpfr_ptr)0);
    double mx = -INFINITY;
    for (int j = 0; j < n; j++)
        if (x[j * st] > mx) mx = x[j * st];
    mpfr_set_d(m, mx, MPFR_RNDN);
    mpfr_set_zero(s, 1);
    for (int j = 0; j < n; j++) {
        mpfr_set_d(t, x[j * st], MPFR_RNDN);
        mpfr_sub(t, t, m, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    mpfr_log(s, s, MPFR_RNDN);
    mpfr_add(y, s, m, MPFR_RNDN);
    mpfr_clears(m, s, t, (mpfr_ptr)0);
}

static double urand(uint64_t *st) { return (double)(er_test_rand(st) >> 11) * 0x1p-53 * 2 - 1; }

START_TEST(rounded_against_mpfr)
{
    uint64_t st = er_test_seed("lse_rounded");
    char msg[512] = "";
    long checked = 0;
    for (int trial = 0; trial < 60; trial++) {
        int fout = trial % 3 == 2 ? ER_FMT_F64 : ER_FMT_F32, lse = trial % 2;
        int rows = 1 + (int)(er_test_rand(&st) % 5), len = 1 + (int)(er_test_rand(&st) % 120);
        double range = trial % 4 == 0 ? 60 : trial % 4 == 1 ? 0.01 : 5;
        float *x = malloc(sizeof(float) * (size_t)rows * (size_t)len);
        double *xd = malloc(sizeof(double) * (size_t)rows * (size_t)len);
        for (int e = 0; e < rows * len; e++) xd[e] = x[e] = (float)(urand(&st) * range);
        er_tensor X = er_tensor_2d(ER_FMT_F32, rows, len, x);
        const er_tensor *in[1] = {&X};
        er_opres *r = NULL;
        char opts[64];
        snprintf(opts, sizeof opts, "dim=1,out=%s", er_format_name(fout));
        ck_assert_msg(er_op_call(lse ? "logsumexp" : "log_softmax", 1, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        const er_optensor *R = er_opres_rounded(r, 0);
        int64_t n = er_opres_count(r, 0);
        ck_assert_int_eq(n, lse ? rows : rows * len);
        ck_assert_int_eq(R->ndim, lse ? 1 : 2);
        double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
        er_opres_exact(r, 0, lo, hi, msg, sizeof msg);
        mpfr_t y, l;
        mpfr_inits2(320, y, l, (mpfr_ptr)0);
        for (int row = 0; row < rows; row++) {
            mp_lse(xd + row * len, len, 1, l);
            for (int i = 0; i < (lse ? 1 : len); i++) {
                int e = lse ? row : row * len + i;
                if (lse) mpfr_set(y, l, MPFR_RNDN);
                else mpfr_d_sub(y, xd[e], l, MPFR_RNDN);
                uint64_t want = mp_bits_f32(y, fout), got = 0;
                memcpy(&got, (unsigned char *)R->data + (size_t)e * (fout == ER_FMT_F64 ? 8 : 4), fout == ER_FMT_F64 ? 8 : 4);
                ck_assert_msg(got == want, "trial %d (%s) element %d: 0x%llx, MPFR 0x%llx", trial,
                              lse ? "logsumexp" : "log_softmax", e, (unsigned long long)got, (unsigned long long)want);
                ck_assert_msg(mpfr_cmp_d(y, lo[e]) >= 0 && mpfr_cmp_d(y, hi[e]) <= 0, "trial %d element %d: outside [%a, %a]",
                              trial, e, lo[e], hi[e]);
                checked++;
            }
        }
        mpfr_clears(y, l, (mpfr_ptr)0);
        er_opres_free(r);
        free(lo);
        free(hi);
        free(x);
        free(xd);
    }
    printf("log_softmax/logsumexp: %ld elements rounded as MPFR rounds them\n", checked);
}
END_TEST

START_TEST(special_rows_and_keepdim)
{
    float x[3][3] = {{1.0f, -INFINITY, 2.0f}, {-INFINITY, -INFINITY, -INFINITY}, {0.0f, INFINITY, 1.0f}};
    char msg[256] = "";
    er_tensor X = er_tensor_2d(ER_FMT_F32, 3, 3, x);
    const er_tensor *in[1] = {&X};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call("logsumexp", 1, in, "keepdim=1", &r, msg, sizeof msg) == ER_OK, "%s", msg);
    const er_optensor *R = er_opres_rounded(r, 0);
    ck_assert_int_eq(R->ndim, 2);
    ck_assert_int_eq(R->shape[0], 3);
    ck_assert_int_eq(R->shape[1], 1);
    float y[3];
    memcpy(y, R->data, sizeof y);
    ck_assert(isfinite(y[0]) && fabsf(y[0] - (2.0f + log1pf(expf(-1.0f)))) < 1e-6f);
    ck_assert(y[1] == -INFINITY && y[2] == INFINITY);
    er_opres_free(r);
    ck_assert_msg(er_op_call("log_softmax", 1, in, NULL, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    float z[9];
    memcpy(z, er_opres_rounded(r, 0)->data, sizeof z);
    ck_assert(z[1] == -INFINITY && isfinite(z[0]) && isfinite(z[2]));
    for (int e = 3; e < 9; e++) ck_assert(isnan(z[e]));
    const er_bounds *bd;
    ck_assert_int_eq(er_opres_bounds(r, 0, NULL, &bd, msg, sizeof msg), ER_OK);
    ck_assert(bd->may_ninf[1] && !bd->has_range[1]);
    er_opres_free(r);
    /* keepdim is logsumexp's: log_softmax refuses it */
    ck_assert_int_eq(er_op_call("log_softmax", 1, in, "keepdim=1", &r, msg, sizeof msg), ER_EINVAL);
}
END_TEST

/* ---- emulated f32 implementations ---- */

static float ulp_f32(double v)
{
    v = fabs(v);
    if (v < 0x1p-126) return 0x1p-149f;
    int e;
    frexp(v, &e);
    return (float)ldexp(1.0, e - 1 - 23);
}

static float perturb(double v, double ulps, uint64_t *st)
{
    float f = (float)v, c[16];
    int n = 0;
    double lim = (ulps - 0.01) * ulp_f32(v);
    float g = f;
    for (int k = 0; k < 8; k++) g = nextafterf(g, -INFINITY);
    for (int k = 0; k < 16; k++, g = nextafterf(g, INFINITY))
        if (fabs((double)g - v) <= lim) c[n++] = g;
    if (n == 0) return f;
    unsigned w = (unsigned)(er_test_rand(st) % 4);
    return w == 0 ? c[0] : w == 1 ? c[n - 1] : c[er_test_rand(st) % (unsigned)n];
}

enum { WAY_A, WAY_B, BUG_LOG2, BUG_NO_MAX_BACK, BUG_SKIP };

/* one row: the f32 log-sum-exp pieces; y: log_softmax (way A: (x - m) - l, way B: x - (m + l)) or lse */
static void emulate_row(const float *x, int n, int way, int tree, uint64_t *st, float *ls, float *lse)
{
    float m = -INFINITY, e[512];
    for (int j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
    for (int j = 0; j < n; j++) e[j] = perturb(exp((double)(x[j] - m)), 2.5, st);
    float s = 0;
    if (tree) {
        int k = n;
        while (k > 1) {
            int h = 0;
            for (int j = 0; j + 1 < k; j += 2) e[h++] = e[j] + e[j + 1];
            if (k % 2) e[h++] = e[k - 1];
            k = h;
        }
        s = e[0];
    } else {
        for (int j = 0; j < n - (way == BUG_SKIP); j++) s += e[j];
    }
    float l = perturb(log((double)s), 1.5, st);
    if (way == BUG_LOG2) l = l + (float)0.69314718055994531;
    float a = way == BUG_NO_MAX_BACK ? l : m + l;
    *lse = a;
    for (int i = 0; i < n; i++) ls[i] = way == WAY_B ? x[i] - a : (x[i] - m) - l;
}

static int64_t outside(er_opres *r, const float *y, int ndim, const int64_t *shape, const char *std)
{
    char msg[256] = "";
    er_tol_opts o;
    er_tol_opts_init(&o);
    er_standard_parse(std, &o.standard, msg, sizeof msg);
    er_optensor Y = er_optensor_make(ER_FMT_F32, ndim, shape, (void *)y);
    int64_t out = -1;
    ck_assert_msg(er_opres_covers(r, 0, &o, &Y, NULL, &out, msg, sizeof msg) == ER_OK, "%s", msg);
    return out;
}

START_TEST(emulations_and_bugs)
{
    uint64_t st = er_test_seed("lse_emulations");
    char msg[256] = "";
    for (int trial = 0; trial < 30; trial++) {
        int rows = 1 + (int)(er_test_rand(&st) % 6), n = 2 + (int)(er_test_rand(&st) % 200);
        double range = trial % 3 == 0 ? 30 : trial % 3 == 1 ? 3 : 0.1;
        float *x = malloc(sizeof(float) * (size_t)rows * (size_t)n), *ls = malloc(sizeof(float) * (size_t)rows * (size_t)n);
        float *lse = malloc(sizeof(float) * (size_t)rows);
        for (int e = 0; e < rows * n; e++) x[e] = (float)(urand(&st) * range);
        er_tensor X = er_tensor_2d(ER_FMT_F32, rows, n, x);
        const er_tensor *in[1] = {&X};
        er_opres *rls = NULL, *rlse = NULL;
        ck_assert_msg(er_op_call("log_softmax", 1, in, NULL, &rls, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_msg(er_op_call("logsumexp", 1, in, "dim=-1", &rlse, msg, sizeof msg) == ER_OK, "%s", msg);
        int64_t s2[2] = {rows, n}, s1[1] = {rows};
        for (int way = WAY_A; way <= WAY_B; way++)
            for (int tree = 0; tree < 2; tree++) {
                for (int row = 0; row < rows; row++) emulate_row(x + row * n, n, way, tree, &st, ls + row * n, lse + row);
                const char *std = tree ? "any_order" : "normal";
                ck_assert_msg(outside(rls, ls, 2, s2, std) == 0, "log_softmax way %d tree %d outside (trial %d)", way,
                              tree, trial);
                ck_assert_msg(outside(rlse, lse, 1, s1, std) == 0, "logsumexp tree %d outside (trial %d)", tree, trial);
            }
        /* planted bugs: the lse off by log 2; the max not added back; a term missing from the sum */
        for (int row = 0; row < rows; row++) emulate_row(x + row * n, n, BUG_LOG2, 0, &st, ls + row * n, lse + row);
        ck_assert_int_eq(outside(rlse, lse, 1, s1, "any_order"), rows);
        ck_assert_int_eq(outside(rls, ls, 2, s2, "any_order"), rows * n);
        if (range > 1) {
            for (int row = 0; row < rows; row++) emulate_row(x + row * n, n, BUG_NO_MAX_BACK, 0, &st, ls + row * n, lse + row);
            ck_assert_int_gt(outside(rlse, lse, 1, s1, "any_order"), 0);
        }
        if (range < 10) { /* (at range 30 the last term may be too small to matter) */
            for (int row = 0; row < rows; row++) emulate_row(x + row * n, n, BUG_SKIP, 0, &st, ls + row * n, lse + row);
            ck_assert_int_gt(outside(rlse, lse, 1, s1, "any_order"), 0);
        }
        er_opres_free(rls);
        er_opres_free(rlse);
        free(x);
        free(ls);
        free(lse);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lse");
    TCase *tc = tcase_create("lse");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, rounded_against_mpfr);
    tcase_add_test(tc, special_rows_and_keepdim);
    tcase_add_test(tc, emulations_and_bugs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
