/* test_softmax.c: softmax through er_op_call: rounded bit for bit against MPFR computed here, exact
 * enclosures holding MPFR's value, emulated f32 implementations (index order and any tree, exp and
 * division perturbed within the declared ulps) covered, planted bugs caught, bad calls refused. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "ops/op_impl.h"

/* ---- the reference, in MPFR at 320 bits ---- */

/* y rounded to nearest even into a format of precision p, least normal 2^emin, largest binade emax:
 * its binary64 value */
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

static uint64_t mp_bits(mpfr_t y, int fmt)
{
    double d;
    uint64_t b = 0;
    switch (fmt) {
    case ER_FMT_F64: d = mpfr_get_d(y, MPFR_RNDN); break;
    case ER_FMT_F32: d = mp_round_fmt(y, 24, -126, 127); break;
    case ER_FMT_BF16: d = mp_round_fmt(y, 8, -126, 127); break;
    default: d = mp_round_fmt(y, 11, -14, 15); break; /* f16 */
    }
    ck_assert_int_eq(er_bits_of(fmt, d, &b), ER_OK);
    return b;
}

/* softmax of row x[0..n) (stride st), element i, into y (320 bits) */
static void mp_softmax(const double *x, int n, int st, int i, mpfr_t y)
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
    mpfr_set_d(t, x[i * st], MPFR_RNDN);
    mpfr_sub(t, t, m, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_div(y, t, s, MPFR_RNDN);
    mpfr_clears(m, s, t, (mpfr_ptr)0);
}

static const int fmts[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F64};

static int storage(int fmt) { return fmt == ER_FMT_F64 ? 8 : fmt == ER_FMT_F32 ? 4 : 2; }

/* a random value of fmt in about [-range, range], its pattern stored at p */
static double rand_value(uint64_t *st, int fmt, double range, void *p)
{
    double u = (double)(er_test_rand(st) >> 11) * 0x1p-53 * 2 - 1, d;
    uint64_t b;
    er_round_double(fmt, u * range, ER_RND_NEAREST_EVEN, &d);
    er_bits_of(fmt, d, &b);
    memcpy(p, &b, (size_t)storage(fmt)); /* little-endian */
    return d;
}

START_TEST(rounded_against_mpfr)
{
    uint64_t st = er_test_seed("softmax_rounded");
    char msg[512] = "";
    static const double ranges[] = {1, 8, 40, 100};
    long checked = 0;
    for (int trial = 0; trial < 60; trial++) {
        int fin = fmts[er_test_rand(&st) % 4], fout = fmts[er_test_rand(&st) % 4];
        int rows = 1 + (int)(er_test_rand(&st) % 6), len = 1 + (int)(er_test_rand(&st) % 150);
        double range = ranges[er_test_rand(&st) % 4];
        int last = er_test_rand(&st) % 2; /* dim -1 (rows x len) or dim 0 (len x rows) */
        int64_t shape[2] = {last ? rows : len, last ? len : rows};
        int n = rows * len;
        unsigned char *data = malloc((size_t)n * 8);
        double *x = malloc(sizeof(double) * (size_t)n);
        for (int e = 0; e < n; e++) x[e] = rand_value(&st, fin, range, data + (size_t)e * storage(fin));
        if (trial % 7 == 3) { /* ties and a -inf */
            uint64_t b;
            for (int e = 0; e < n; e += 3) {
                x[e] = x[0];
                memcpy(data + (size_t)e * storage(fin), data, (size_t)storage(fin));
            }
            x[n - 1] = -INFINITY;
            er_bits_of(fin, -INFINITY, &b);
            memcpy(data + (size_t)(n - 1) * storage(fin), &b, (size_t)storage(fin));
        }
        er_optensor X = er_optensor_make(fin, 2, shape, data);
        const er_optensor *in[1] = {&X};
        char opts[64];
        snprintf(opts, sizeof opts, "dim=%d,out=%s", last ? -1 : 0, er_format_name(fout));
        er_opres *r = NULL;
        ck_assert_msg(er_op_call_nd("softmax", 1, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_str_eq(er_opres_op(r), "softmax");
        ck_assert_int_eq(er_opres_outputs(r), 1);
        ck_assert_str_eq(er_opres_output_name(r, 0), "out");
        const er_optensor *R = er_opres_rounded(r, 0);
        double *lo = malloc(sizeof(double) * (size_t)n), *hi = malloc(sizeof(double) * (size_t)n);
        ck_assert_int_eq(er_opres_exact(r, 0, lo, hi, msg, sizeof msg), ER_OK);
        mpfr_t y;
        mpfr_init2(y, 320);
        for (int row = 0; row < rows; row++)
            for (int i = 0; i < len; i++) {
                int e = last ? row * len + i : i * rows + row;
                const double *xr = last ? x + row * len : x + row;
                mp_softmax(xr, len, last ? 1 : rows, i, y);
                uint64_t want = mp_bits(y, fout), got = 0;
                memcpy(&got, (unsigned char *)R->data + (size_t)e * storage(fout), (size_t)storage(fout));
                ck_assert_msg(got == want, "trial %d (%s -> %s, %dx%d, dim %s) element %d: 0x%llx, MPFR 0x%llx",
                              trial, er_format_name(fin), er_format_name(fout), rows, len, last ? "-1" : "0", e,
                              (unsigned long long)got, (unsigned long long)want);
                ck_assert_msg(mpfr_cmp_d(y, lo[e]) >= 0 && mpfr_cmp_d(y, hi[e]) <= 0,
                              "trial %d element %d: MPFR's value outside [%a, %a]", trial, e, lo[e], hi[e]);
                /* narrow: the enclosure within 2^-40 relative where the value is a binary64 normal */
                if (lo[e] > 0x1p-1000) ck_assert_msg(hi[e] - lo[e] <= 0x1p-40 * hi[e], "wide: [%a, %a]", lo[e], hi[e]);
                checked++;
            }
        mpfr_clear(y);
        er_opres_free(r);
        free(lo);
        free(hi);
        free(data);
        free(x);
    }
    printf("softmax: %ld elements rounded as MPFR rounds them\n", checked);
}
END_TEST

START_TEST(nonfinite_rows)
{
    float x[2][3] = {{1.0f, NAN, 2.0f}, {-INFINITY, -INFINITY, -INFINITY}};
    float y[2][3];
    char msg[256] = "";
    er_tensor X = er_tensor_2d(ER_FMT_F32, 2, 3, x);
    const er_tensor *in[1] = {&X};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call("softmax", 1, in, NULL, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    memcpy(y, er_opres_rounded(r, 0)->data, sizeof y);
    for (int e = 0; e < 6; e++) ck_assert(isnan(y[e / 3][e % 3]));
    const er_bounds *bd;
    ck_assert_int_eq(er_opres_bounds(r, 0, NULL, &bd, msg, sizeof msg), ER_OK);
    for (int e = 0; e < 6; e++) ck_assert(bd->may_nan[e] && isnan(bd->tolerance[e]));
    /* a finite output where the exact value is NaN is outside */
    y[0][0] = 0.5f;
    er_optensor Y = er_optensor_make(ER_FMT_F32, 2, (int64_t[]){2, 3}, y);
    int64_t outside = -1;
    ck_assert_int_eq(er_opres_covers(r, 0, NULL, &Y, NULL, &outside, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(outside, 1);
    er_opres_free(r);
}
END_TEST

/* ---- emulated f32 implementations ---- */

static float ulp_f32(double v)
{
    v = fabs(v);
    if (v < 0x1p-126) return 0x1p-149f;
    int e;
    frexp(v, &e); /* v in [2^(e-1), 2^e) */
    return (float)ldexp(1.0, e - 1 - 23);
}

/* a float within `ulps` ulps of v (binary64 close to the exact value): the least, the largest or a
 * random one of them */
static float perturb(double v, double ulps, uint64_t *st)
{
    float f = (float)v, c[16];
    int n = 0;
    double lim = (ulps - 0.01) * ulp_f32(v);
    float g = f;
    for (int k = 0; k < 8; k++) g = nextafterf(g, -INFINITY);
    for (int k = 0; k < 16; k++, g = nextafterf(g, INFINITY))
        if (fabs((double)g - v) <= lim && !(v >= 0 && g < 0)) c[n++] = g;
    if (n == 0) return f;
    unsigned w = (unsigned)(er_test_rand(st) % 4);
    return w == 0 ? c[0] : w == 1 ? c[n - 1] : c[er_test_rand(st) % (unsigned)n];
}

enum { ORDER_INDEX, ORDER_TREE, BUG_NO_MAX, BUG_SKIP_TERM, BUG_WRONG_SUM };

/* one row: y[i] for x[0..n) of stride 1; sums[] the rows' sums (BUG_WRONG_SUM reads the next row's) */
static float row_sum(const float *x, int n, int order, uint64_t *st, float *e)
{
    float m = -INFINITY;
    for (int j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
    if (order == BUG_NO_MAX) m = 0;
    for (int j = 0; j < n; j++) e[j] = perturb(exp((double)(x[j] - m)), 2, st);
    float s = 0;
    if (order == ORDER_TREE) { /* a random pairwise tree */
        float t[512];
        int k = n;
        for (int j = 0; j < n; j++) t[j] = e[j];
        for (int j = n - 1; j > 0; j--) { /* shuffle */
            int q = (int)(er_test_rand(st) % (uint64_t)(j + 1));
            float tmp = t[j];
            t[j] = t[q];
            t[q] = tmp;
        }
        while (k > 1) {
            int h = 0;
            for (int j = 0; j + 1 < k; j += 2) t[h++] = t[j] + t[j + 1];
            if (k % 2) t[h++] = t[k - 1];
            k = h;
        }
        s = t[0];
    } else {
        for (int j = 0; j < n - (order == BUG_SKIP_TERM); j++) s += e[j];
    }
    return s;
}

static void emulate(const float *x, int rows, int n, int order, uint64_t *st, float *y)
{
    float *e = malloc(sizeof(float) * (size_t)rows * (size_t)n), *s = malloc(sizeof(float) * (size_t)rows);
    for (int r = 0; r < rows; r++) s[r] = row_sum(x + r * n, n, order, st, e + r * n);
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < n; i++) {
            float sum = order == BUG_WRONG_SUM ? s[(r + 1) % rows] : s[r];
            y[r * n + i] = perturb((double)e[r * n + i] / (double)sum, 2, st);
        }
    free(e);
    free(s);
}

static int64_t outside_of(er_opres *r, const float *y, int rows, int n, const char *standard, int fmt)
{
    char msg[256] = "";
    er_tol_opts o;
    er_tol_opts_init(&o);
    ck_assert_int_eq(er_standard_parse(standard, &o.standard, msg, sizeof msg), ER_OK);
    int64_t shape[2] = {rows, n}, outside = -1;
    uint16_t *h = NULL;
    er_optensor Y = er_optensor_make(ER_FMT_F32, 2, shape, (void *)y);
    if (fmt == ER_FMT_BF16) { /* the final cast to bf16 (round to nearest even) */
        h = malloc(sizeof(uint16_t) * (size_t)rows * (size_t)n);
        ck_assert_int_eq(er_convert_array(ER_FMT_F32, ER_FMT_BF16, y, h, (size_t)rows * (size_t)n,
                                          ER_RND_NEAREST_EVEN, 0u, NULL, NULL), ER_OK);
        Y = er_optensor_make(ER_FMT_BF16, 2, shape, h);
    }
    ck_assert_msg(er_opres_covers(r, 0, &o, &Y, NULL, &outside, msg, sizeof msg) == ER_OK, "%s", msg);
    free(h);
    return outside;
}

static er_opres *softmax_of(const float *x, int rows, int n, int fmt)
{
    char msg[256] = "", opts[32];
    int64_t shape[2] = {rows, n};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, shape, (void *)x);
    const er_optensor *in[1] = {&X};
    er_opres *r = NULL;
    snprintf(opts, sizeof opts, "out=%s", er_format_name(fmt));
    ck_assert_msg(er_op_call_nd("softmax", 1, in, opts, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    return r;
}

START_TEST(emulations_covered)
{
    uint64_t st = er_test_seed("softmax_emulations");
    long total = 0;
    for (int trial = 0; trial < 40; trial++) {
        int rows = 1 + (int)(er_test_rand(&st) % 8), n = 1 + (int)(er_test_rand(&st) % 300);
        double range = trial % 4 == 0 ? 60 : trial % 4 == 1 ? 8 : 1;
        float *x = malloc(sizeof(float) * (size_t)rows * (size_t)n), *y = malloc(sizeof(float) * (size_t)rows * (size_t)n);
        for (int e = 0; e < rows * n; e++) x[e] = (float)(((double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1) * range);
        for (int f = 0; f < 2; f++) {
            int fmt = f ? ER_FMT_BF16 : ER_FMT_F32;
            er_opres *r = softmax_of(x, rows, n, fmt);
            for (int rep = 0; rep < 3; rep++) {
                emulate(x, rows, n, ORDER_INDEX, &st, y);
                ck_assert_msg(outside_of(r, y, rows, n, "normal", fmt) == 0, "index order outside normal (trial %d)", trial);
                ck_assert_msg(outside_of(r, y, rows, n, "any_order", fmt) == 0, "index order outside any_order");
                emulate(x, rows, n, ORDER_TREE, &st, y);
                ck_assert_msg(outside_of(r, y, rows, n, "any_order", fmt) == 0, "a tree outside any_order (trial %d)", trial);
                /* without the max subtracted: covered by any_order where no exp(x_j) leaves compute's
                 * normal range (docs/proofs/softmax.md) */
                if (range < 60) {
                    emulate(x, rows, n, BUG_NO_MAX, &st, y);
                    ck_assert_msg(outside_of(r, y, rows, n, "any_order", fmt) == 0, "no max outside any_order (trial %d)",
                                  trial);
                }
                total += rows * n;
            }
            er_opres_free(r);
        }
        free(x);
        free(y);
    }
    printf("softmax: %ld emulated elements covered\n", total);
}
END_TEST

START_TEST(planted_bugs_caught)
{
    uint64_t st = er_test_seed("softmax_bugs");
    enum { ROWS = 8, N = 16 };
    float x[ROWS * N], xt[N * ROWS], y[ROWS * N], yt[N * ROWS];
    for (int trial = 0; trial < 20; trial++) {
        for (int e = 0; e < ROWS * N; e++) x[e] = (float)(((double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1) * 2);
        er_opres *r = softmax_of(x, ROWS, N, ER_FMT_F32);
        /* the wrong axis: softmax over dim 0 */
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < N; j++) xt[j * ROWS + i] = x[i * N + j];
        emulate(xt, N, ROWS, ORDER_INDEX, &st, yt);
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < N; j++) y[i * N + j] = yt[j * ROWS + i];
        ck_assert_int_gt(outside_of(r, y, ROWS, N, "any_order", ER_FMT_F32), ROWS * N / 2);
        /* a term missing from the sum */
        emulate(x, ROWS, N, BUG_SKIP_TERM, &st, y);
        ck_assert_int_eq(outside_of(r, y, ROWS, N, "any_order", ER_FMT_F32), ROWS * N);
        /* the division by the next row's sum */
        emulate(x, ROWS, N, BUG_WRONG_SUM, &st, y);
        ck_assert_int_gt(outside_of(r, y, ROWS, N, "any_order", ER_FMT_F32), ROWS * N / 2);
        /* one element off by 256 ulps */
        emulate(x, ROWS, N, ORDER_INDEX, &st, y);
        int e = (int)(er_test_rand(&st) % (ROWS * N));
        y[e] = y[e] + 256 * ulp_f32(y[e]);
        ck_assert_int_eq(outside_of(r, y, ROWS, N, "any_order", ER_FMT_F32), 1);
        er_opres_free(r);
    }
}
END_TEST

START_TEST(standards_and_tightness)
{
    uint64_t st = er_test_seed("softmax_tight");
    enum { ROWS = 4, N = 1024 };
    float *x = malloc(sizeof(float) * ROWS * N);
    char msg[256] = "";
    for (int e = 0; e < ROWS * N; e++) x[e] = (float)(((double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1) * 4);
    er_opres *r = softmax_of(x, ROWS, N, ER_FMT_BF16);
    er_tol_opts o;
    er_tol_opts_init(&o);
    ck_assert(o.ulps < 0); /* the documented defaults */
    const er_bounds *bn, *ba, *bn2;
    ck_assert_int_eq(er_opres_bounds(r, 0, &o, &bn, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_bounds(r, 0, &o, &bn2, msg, sizeof msg), ER_OK);
    ck_assert_ptr_eq(bn, bn2); /* kept per options */
    er_standard_parse("any_order", &o.standard, msg, sizeof msg);
    ck_assert_int_eq(er_opres_bounds(r, 0, &o, &ba, msg, sizeof msg), ER_OK);
    /* bf16 output: the f32 compute's errors are far below half a bf16 ulp: most elements allow at most
     * the two neighbours of the rounding boundary */
    int64_t single = 0, wider = 0;
    for (int64_t e = 0; e < bn->count; e++) {
        ck_assert(bn->has_range[e] && ba->has_range[e]);
        ck_assert(ba->low[e] <= bn->low[e] && ba->high[e] >= bn->high[e]); /* positive patterns: ordered */
        single += bn->low[e] == bn->high[e];
        wider += ba->high[e] - ba->low[e] > 1;
    }
    printf("softmax bf16 1024: normal single-valued %lld of %lld; any_order wider than 2 values %lld\n",
           (long long)single, (long long)bn->count, (long long)wider);
    ck_assert_int_gt(single, bn->count * 9 / 10);
    ck_assert_int_eq(wider, 0);
    /* a standard softmax does not take: refused, naming the operation */
    er_standard_parse("hopper", &o.standard, msg, sizeof msg);
    ck_assert_int_eq(er_opres_bounds(r, 0, &o, &ba, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "softmax") && strstr(msg, "any_order"), "%s", msg);
    er_opres_free(r);
    free(x);
}
END_TEST

START_TEST(bad_calls_refused)
{
    float x[6] = {0};
    char msg[256] = "";
    er_tensor X = er_tensor_2d(ER_FMT_F32, 2, 3, x);
    const er_tensor *in[2] = {&X, &X};
    er_opres *r = NULL;
    ck_assert_int_eq(er_op_call("softmaxx", 1, in, NULL, &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "softmaxx") && strstr(msg, "softmax"), "%s", msg);
    ck_assert_int_eq(er_op_call("softmax", 2, in, NULL, &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_op_call("softmax", 1, in, "dim=2", &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "dim=2"), "%s", msg);
    ck_assert_int_eq(er_op_call("softmax", 1, in, "dim=x", &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_op_call("softmax", 1, in, "dmi=1", &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "dmi"), "%s", msg);
    ck_assert_int_eq(er_op_call("softmax", 1, in, "dim", &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_op_call("softmax", 1, in, "out=f99", &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_op_call("softmax", 1, in, "dim=0,dim=1", &r, msg, sizeof msg), ER_EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_msg(er_op_call("softmax", 1, in, "dim=0", &r, msg, sizeof msg) == ER_OK, "%s", msg);
    /* a check of the wrong shape is refused */
    er_optensor Y = er_optensor_make(ER_FMT_F32, 2, (int64_t[]){3, 2}, x);
    ck_assert_int_eq(er_opres_covers(r, 0, NULL, &Y, NULL, NULL, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "shape"), "%s", msg);
    er_opres_free(r);
}
END_TEST


START_TEST(four_dims_report_and_interface)
{
    /* (2, 3, 4, 5) f32, softmax over dim 1: a strided row; the report over the collapsed 3-D view */
    enum { N = 2 * 3 * 4 * 5 };
    float x[N], y[N];
    uint64_t st = er_test_seed("softmax_4d");
    char msg[256] = "";
    for (int e = 0; e < N; e++) x[e] = (float)(((double)(er_test_rand(&st) >> 11) * 0x1p-53 * 2 - 1) * 3);
    int64_t shape[4] = {2, 3, 4, 5};
    er_optensor X = er_optensor_make(ER_FMT_F32, 4, shape, x);
    const er_optensor *in[1] = {&X};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call_nd("softmax", 1, in, "dim=1", &r, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(er_opres_count(r, 0), N);
    memcpy(y, er_opres_rounded(r, 0)->data, sizeof y);
    /* each row over dim 1 sums to about 1 */
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 20; c++) {
            double s = 0;
            for (int b = 0; b < 3; b++) s += y[(a * 3 + b) * 20 + c];
            ck_assert_msg(fabs(s - 1) < 1e-6, "row sum %g", s);
        }
    er_optensor Y = er_optensor_make(ER_FMT_F32, 4, shape, y);
    er_check_report rep;
    int64_t idx[4];
    ck_assert_msg(er_opres_report(r, 0, NULL, &Y, idx, 4, &rep, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(rep.outside, 0);
    ck_assert_int_eq(rep.elements, N);
    ck_assert_int_eq(rep.hist[ER_REPORT_EXACT], N);
    y[77] = y[77] * 1.01f;
    ck_assert_msg(er_opres_report(r, 0, NULL, &Y, idx, 4, &rep, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(rep.outside, 1);
    ck_assert_int_eq(idx[0], 77);
    ck_assert_int_eq(rep.worst, 77);
    /* through the operation interface: the same rounded values and the same kept bounds */
    er_op op;
    er_opres_as_op(r, &op);
    ck_assert_int_eq(op.cls->outputs(op.self), 1);
    ck_assert_str_eq(op.cls->output_name(op.self, 0), "out");
    ck_assert_ptr_eq(op.cls->single(op.self, 0)->data, er_opres_rounded(r, 0)->data);
    const er_bounds *b1, *b2;
    ck_assert_int_eq(op.cls->bounds_of(op.self, 0, NULL, &b1, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_bounds(r, 0, NULL, &b2, msg, sizeof msg), ER_OK);
    ck_assert_ptr_eq(b1, b2);
    double *slack = NULL;
    ck_assert_int_eq(er_op_slack(&op, 0, NULL, &slack, msg, sizeof msg), ER_OK);
    for (int e = 0; e < N; e++) ck_assert(slack[e] == b1->tolerance[e]);
    free(slack);
    er_opres_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("softmax");
    TCase *tc = tcase_create("softmax");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, rounded_against_mpfr);
    tcase_add_test(tc, nonfinite_rows);
    tcase_add_test(tc, emulations_covered);
    tcase_add_test(tc, planted_bugs_caught);
    tcase_add_test(tc, standards_and_tightness);
    tcase_add_test(tc, bad_calls_refused);
    tcase_add_test(tc, four_dims_report_and_interface);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
