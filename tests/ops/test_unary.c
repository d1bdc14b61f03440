/* test_unary.c: exp, relu, sigmoid, tanh, silu and gelu (none, tanh) through er_op_call: rounded bit for bit
 * against MPFR computed here, emulated f32 implementations (library functions perturbed within the declared
 * ulps, both forms of sigmoid and silu, torch's gelu formulas) covered, planted bugs caught (the tanh form of
 * gelu judged as the erf form and the other way round, a sign error in sigmoid, silu without x), special
 * inputs. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

enum { EXP, RELU, SIGMOID, TANH, SILU, GELU, GELU_TANH, NOPS };
static const char *const names[NOPS] = {"exp", "relu", "sigmoid", "tanh", "silu", "gelu", "gelu"};
static const char *const extra[NOPS] = {"", "", "", "", "", ",approximate=none", ",approximate=tanh"};

/* the exact value at 300 bits */
static void mp_f(int op, double x, mpfr_t y)
{
    mpfr_t t, u;
    mpfr_inits2(300, t, u, (mpfr_ptr)0);
    mpfr_set_d(t, x, MPFR_RNDN);
    switch (op) {
    case EXP: mpfr_exp(y, t, MPFR_RNDN); break;
    case RELU: mpfr_set_d(y, x > 0 ? x : 0.0, MPFR_RNDN); break;
    case TANH: mpfr_tanh(y, t, MPFR_RNDN); break;
    case SIGMOID:
    case SILU:
        mpfr_neg(u, t, MPFR_RNDN);
        mpfr_exp(u, u, MPFR_RNDN);
        mpfr_add_ui(u, u, 1, MPFR_RNDN);
        if (op == SIGMOID) mpfr_ui_div(y, 1, u, MPFR_RNDN);
        else mpfr_div(y, t, u, MPFR_RNDN);
        break;
    case GELU: /* 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2): no cancellation for x << 0 */
        mpfr_sqrt_ui(u, 2, MPFR_RNDN);
        mpfr_div(u, t, u, MPFR_RNDN);
        mpfr_neg(u, u, MPFR_RNDN);
        mpfr_erfc(u, u, MPFR_RNDN);
        goto finish;
    default: { /* gelu tanh */
        mpfr_t k, c;
        mpfr_inits2(300, k, c, (mpfr_ptr)0);
        mpfr_set_str(k, "0.044715", 10, MPFR_RNDN);
        mpfr_mul(u, t, t, MPFR_RNDN);
        mpfr_mul(u, u, t, MPFR_RNDN);
        mpfr_mul(u, u, k, MPFR_RNDN);
        mpfr_add(u, u, t, MPFR_RNDN);
        mpfr_const_pi(c, MPFR_RNDN);
        mpfr_ui_div(c, 2, c, MPFR_RNDN);
        mpfr_sqrt(c, c, MPFR_RNDN);
        mpfr_mul(u, u, c, MPFR_RNDN);
        /* 1 + tanh(z) = 2 e^(2z) / (1 + e^(2z)): no cancellation for z << 0 */
        mpfr_mul_2ui(u, u, 1, MPFR_RNDN);
        mpfr_exp(u, u, MPFR_RNDN);
        mpfr_add_ui(c, u, 1, MPFR_RNDN);
        mpfr_div(u, u, c, MPFR_RNDN);
        mpfr_mul_2ui(u, u, 1, MPFR_RNDN);
        mpfr_clears(k, c, (mpfr_ptr)0);
        goto finish;
    }
    }
    mpfr_clears(t, u, (mpfr_ptr)0);
    return;
finish: /* u holds 1 + erf or 1 + tanh */
    mpfr_mul(u, u, t, MPFR_RNDN);
    mpfr_div_2ui(y, u, 1, MPFR_RNDN);
    mpfr_clears(t, u, (mpfr_ptr)0);
}

/* y rounded to nearest even into f32 (p 24, least normal 2^-126) or bf16 (p 8): its binary64 value */
static double mp_round(mpfr_t y, int p)
{
    mpfr_exp_t e0 = mpfr_get_emin(), e1 = mpfr_get_emax();
    mpfr_t t;
    mpfr_init2(t, p);
    mpfr_set_emin(-126 - p + 2);
    mpfr_set_emax(128);
    int i = mpfr_set(t, y, MPFR_RNDN);
    i = mpfr_check_range(t, i, MPFR_RNDN);
    mpfr_subnormalize(t, i, MPFR_RNDN);
    double d = mpfr_get_d(t, MPFR_RNDN);
    mpfr_set_emin(e0);
    mpfr_set_emax(e1);
    mpfr_clear(t);
    return d;
}

static double urand(uint64_t *st) { return (double)(er_test_rand(st) >> 11) * 0x1p-53 * 2 - 1; }

static er_opres *call(int op, int fin, int fout, const void *x, int64_t n)
{
    char msg[256] = "", opts[96];
    snprintf(opts, sizeof opts, "out=%s%s", er_format_name(fout), extra[op]);
    er_optensor X = er_optensor_make(fin, 1, &n, (void *)x);
    const er_optensor *in[1] = {&X};
    er_opres *r = NULL;
    ck_assert_msg(er_op_call_nd(names[op], 1, in, opts, &r, msg, sizeof msg) == ER_OK, "%s: %s", names[op], msg);
    return r;
}

START_TEST(rounded_against_mpfr)
{
    uint64_t st = er_test_seed("unary_rounded");
    enum { N = 3000 };
    static const double edges[] = {0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 1, -1, 3, -3, 10, -10, 20, -20, 40, -40, 88, -88,
                                   89, -104, 200, -200};
    float *x = malloc(sizeof(float) * N);
    double *xd = malloc(sizeof(double) * N);
    long checked = 0;
    mpfr_t y;
    mpfr_init2(y, 300);
    for (int op = 0; op < NOPS; op++)
        for (int fo = 0; fo < 3; fo++) {
            int fout = fo == 0 ? ER_FMT_F32 : fo == 1 ? ER_FMT_BF16 : ER_FMT_F64;
            for (int e = 0; e < N; e++) {
                int k = e % 4;
                double v = e < (int)(sizeof edges / sizeof edges[0]) ? edges[e]
                         : k == 0 ? urand(&st) * 0.01 : k == 1 ? urand(&st) * 4 : k == 2 ? urand(&st) * 30 : urand(&st) * 100;
                xd[e] = x[e] = (float)v;
                xd[e] = x[e];
            }
            er_opres *r = call(op, ER_FMT_F32, fout, x, N);
            const er_optensor *R = er_opres_rounded(r, 0);
            for (int e = 0; e < N; e++) {
                mp_f(op, xd[e], y);
                uint64_t want = 0, got = 0;
                if (fout == ER_FMT_F64) {
                    double d = mpfr_get_d(y, MPFR_RNDN);
                    memcpy(&want, &d, 8);
                    memcpy(&got, (char *)R->data + 8 * e, 8);
                } else {
                    double d = mp_round(y, fout == ER_FMT_F32 ? 24 : 8);
                    ck_assert_int_eq(er_bits_of(fout, d, &want), ER_OK);
                    memcpy(&got, (char *)R->data + (fout == ER_FMT_F32 ? 4 : 2) * e, fout == ER_FMT_F32 ? 4 : 2);
                }
                /* a zero's sign is not judged (covers takes either) */
                double gv;
                er_from_bits(fout, got, &gv);
                if (gv == 0 && mpfr_zero_p(y)) continue;
                ck_assert_msg(got == want, "%s%s(%a) -> %s: 0x%llx, MPFR 0x%llx", names[op], extra[op], xd[e],
                              er_format_name(fout), (unsigned long long)got, (unsigned long long)want);
                checked++;
            }
            er_opres_free(r);
        }
    mpfr_clear(y);
    free(x);
    free(xd);
    printf("unary: %ld elements rounded as MPFR rounds them\n", checked);
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
    if (!isfinite(f)) return f;
    for (int k = 0; k < 8; k++) g = nextafterf(g, -INFINITY);
    for (int k = 0; k < 16; k++, g = nextafterf(g, INFINITY))
        if (fabs((double)g - v) <= lim && !(v >= 0 && g < 0)) c[n++] = g;
    if (n == 0) return f;
    unsigned w = (unsigned)(er_test_rand(st) % 4);
    return w == 0 ? c[0] : w == 1 ? c[n - 1] : c[er_test_rand(st) % (unsigned)n];
}

enum { V_MAIN, V_ALT, BUG };

static float emulate(int op, float x, int variant, uint64_t *st)
{
    const float s12 = 0.70710678118654752f, beta = 0.79788456080286536f, kappa = 0.044715f;
    switch (op) {
    case EXP: return perturb(exp((double)x), 2.5, st);
    case RELU: return x > 0 ? x : 0.0f;
    case TANH: { /* a tanh within 2.5 ulps that stays in [-1, 1] (the model's: docs/proofs/activations.md) */
        float t = perturb(tanh((double)x), 2.5, st);
        return t > 1 ? 1.0f : t < -1 ? -1.0f : t;
    }
    case SIGMOID:
        if (variant == BUG) return 1.0f / (1.0f + (float)exp((double)x)); /* the sign of the exponent lost */
        if (variant == V_ALT && x < 0) {
            float e = perturb(exp((double)x), 2.5, st);
            return perturb((double)e / (double)(1.0f + e), 2.5, st);
        }
        return perturb(1.0 / (double)(1.0f + perturb(exp(-(double)x), 2.5, st)), 2.5, st);
    case SILU:
        if (variant == BUG) return emulate(SIGMOID, x, V_MAIN, st); /* x left out */
        if (variant == V_ALT) return perturb((double)x / (double)(1.0f + perturb(exp(-(double)x), 2.5, st)), 2.5, st);
        return x * emulate(SIGMOID, x, V_MAIN, st);
    case GELU: { /* torch: x * 0.5 * (1 + erf(x * M_SQRT1_2)) */
        float a = x * s12;
        return x * 0.5f * (1.0f + perturb(erf((double)a), 2.5, st));
    }
    default: { /* torch: 0.5 * x * (1 + tanh(kBeta * (x + kKappa * x^3))) */
        float inner = beta * (x + kappa * (x * x * x));
        float t = perturb(tanh((double)inner), 2.5, st);
        return 0.5f * x * (1.0f + (t > 1 ? 1.0f : t < -1 ? -1.0f : t));
    }
    }
}

static int64_t outside_of(er_opres *r, const float *y, int64_t n, int fout, const char *std)
{
    char msg[256] = "";
    er_tol_opts o;
    er_tol_opts_init(&o);
    er_standard_parse(std, &o.standard, msg, sizeof msg);
    uint16_t *h = NULL;
    er_optensor Y = er_optensor_make(ER_FMT_F32, 1, &n, (void *)y);
    if (fout == ER_FMT_BF16) {
        h = malloc(sizeof(uint16_t) * (size_t)n);
        er_convert_array(ER_FMT_F32, ER_FMT_BF16, y, h, (size_t)n, ER_RND_NEAREST_EVEN, 0u, NULL, NULL);
        Y = er_optensor_make(ER_FMT_BF16, 1, &n, h);
    }
    int64_t out = -1;
    ck_assert_msg(er_opres_covers(r, 0, &o, &Y, NULL, &out, msg, sizeof msg) == ER_OK, "%s", msg);
    free(h);
    return out;
}

START_TEST(emulations_covered_bugs_caught)
{
    uint64_t st = er_test_seed("unary_emulations");
    enum { N = 4000 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int e = 0; e < N; e++) {
        int k = e % 3;
        x[e] = (float)(k == 0 ? urand(&st) * 0.05 : k == 1 ? urand(&st) * 5 : urand(&st) * 40);
    }
    for (int op = 0; op < NOPS; op++)
        for (int fo = 0; fo < 2; fo++) {
            int fout = fo ? ER_FMT_BF16 : ER_FMT_F32;
            er_opres *r = call(op, ER_FMT_F32, fout, x, N);
            for (int rep = 0; rep < 3; rep++)
                for (int variant = V_MAIN; variant <= V_ALT; variant++) {
                    for (int e = 0; e < N; e++) y[e] = emulate(op, x[e], variant, &st);
                    int64_t out = outside_of(r, y, N, fout, "normal");
                    ck_assert_msg(out == 0, "%s%s -> %s variant %d: %lld outside", names[op], extra[op],
                                  er_format_name(fout), variant, (long long)out);
                }
            er_opres_free(r);
        }
    /* planted bugs (f32 outputs) */
    er_opres *g = call(GELU, ER_FMT_F32, ER_FMT_F32, x, N), *gt = call(GELU_TANH, ER_FMT_F32, ER_FMT_F32, x, N);
    for (int e = 0; e < N; e++) y[e] = emulate(GELU_TANH, x[e], V_MAIN, &st);
    int64_t a = outside_of(g, y, N, ER_FMT_F32, "any_order");
    for (int e = 0; e < N; e++) y[e] = emulate(GELU, x[e], V_MAIN, &st);
    int64_t b = outside_of(gt, y, N, ER_FMT_F32, "any_order");
    printf("unary: the tanh form judged as erf's: %lld of %d outside; the erf form as tanh's: %lld\n", (long long)a, N,
           (long long)b);
    ck_assert_int_gt(a, N / 4);
    ck_assert_int_gt(b, N / 4);
    er_opres_free(g);
    er_opres_free(gt);
    for (int op = SIGMOID; op <= SILU; op += SILU - SIGMOID) {
        er_opres *r = call(op, ER_FMT_F32, ER_FMT_F32, x, N);
        for (int e = 0; e < N; e++) y[e] = emulate(op, x[e], BUG, &st);
        ck_assert_int_gt(outside_of(r, y, N, ER_FMT_F32, "any_order"), N / 2);
        er_opres_free(r);
    }
    free(x);
    free(y);
}
END_TEST

START_TEST(special_inputs)
{
    float x[6] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e30f};
    char msg[256] = "";
    for (int op = 0; op < NOPS; op++) {
        er_opres *r = call(op, ER_FMT_F32, ER_FMT_F32, x, 6);
        float y[6];
        memcpy(y, er_opres_rounded(r, 0)->data, sizeof y);
        ck_assert_msg(isnan(y[2]), "%s(nan)", names[op]);
        const er_bounds *bd;
        ck_assert_int_eq(er_opres_bounds(r, 0, NULL, &bd, msg, sizeof msg), ER_OK);
        ck_assert(bd->may_nan[2]);
        switch (op) {
        case EXP: ck_assert(y[0] == INFINITY && y[1] == 0 && y[3] == 1 && y[5] == INFINITY); break;
        case RELU: ck_assert(y[0] == INFINITY && y[1] == 0 && y[5] == 1e30f); break;
        case SIGMOID: ck_assert(y[0] == 1 && y[1] == 0 && y[3] == 0.5f); break;
        case TANH: ck_assert(y[0] == 1 && y[1] == -1 && y[3] == 0 && y[5] == 1); break;
        default:
            ck_assert(y[0] == INFINITY && y[3] == 0 && y[5] == 1e30f);
            /* -inf: the formula gives NaN (-inf * 0), the limit is 0: every special allowed */
            ck_assert(bd->may_nan[1] && bd->has_range[1]);
            break;
        }
        /* an infinite input with a finite limit allows exactly it */
        if (op == SIGMOID || op == TANH) ck_assert(bd->has_range[0] && bd->low[0] == bd->high[0] && !bd->may_nan[0]);
        er_opres_free(r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("unary");
    TCase *tc = tcase_create("unary");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, rounded_against_mpfr);
    tcase_add_test(tc, emulations_covered_bugs_caught);
    tcase_add_test(tc, special_inputs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
