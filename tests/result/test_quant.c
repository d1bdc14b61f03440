/* test_quant.c: the quantized magnitudes of the bounds' exact quantities over runs of values
 * (cpu/cpu_quant.c) at every vector level this processor has (2 AVX-512, 1 AVX2, 0 one value at a
 * time) against the core's one-value functions (include/exactref/core/er_bounds.h: er_b_q_value and the
 * maxima), bit for bit: values on both sides of every shift (the exponent difference to the grid from
 * -1100 to +53), subnormals, zeros of both signs, path-length weights, per-value grids, and runs
 * holding an infinity or a NaN.  Random (seed from EXACTREF_SEED, printed). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_internal.h"
#include "er_test.h"
#include "exactref/core/er_bounds.h"

static uint64_t seed;

static double bits_to_d(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t d_to_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* A value whose magnitude is below 2^(s + 53) (er_b_q_value's precondition), of every kind. */
static double rand_value(uint64_t *st, int s)
{
    uint64_t r = er_test_rand(st);
    int kind = (int)(r % 8);
    uint64_t sign = (er_test_rand(st) & 1) << 63, mant = er_test_rand(st) & UINT64_C(0x000FFFFFFFFFFFFF);
    if (kind == 0) return bits_to_d(sign); /* +-0 */
    if (kind == 1) return bits_to_d(sign | (mant ? mant : 1)); /* subnormal */
    if (kind == 2) mant &= ~UINT64_C(0) << 45; /* a few significant bits, as bf16 or fp8 values */
    /* the value's exponent e relative to the grid: e - s from -1100 (far below: the value is 1) to 52 */
    int rel = kind == 3 ? -(int)(er_test_rand(st) % 1100) : 52 - (int)(er_test_rand(st) % 70);
    int e = s + rel; /* |v| in [2^e, 2^(e+1)) with e < s + 53 */
    if (e < -1022) return bits_to_d(sign | (mant ? mant : 1));
    if (e > 1023) e = 1023;
    return bits_to_d(sign | ((uint64_t)(e + 1023) << 52) | mant);
}

static int levels[3], nlevels;

static void find_levels(void)
{
    int top = er_cpu_q_simd();
    nlevels = 0;
    for (int l = 0; l <= top; l++) levels[nlevels++] = l;
}

START_TEST(values_every_level)
{
    uint64_t st = seed;
    enum { N = 203 }; /* not a multiple of the vector widths: the tails too */
    double x[N], w[N], q[N];
    int32_t sv[N];
    for (int round = 0; round < 2000; round++) {
        int s = (int)(er_test_rand(&st) % 2000) - 1000, per = round % 3 == 0, weighted = round % 4 == 1;
        for (int p = 0; p < N; p++) {
            sv[p] = per ? (int32_t)((int)(er_test_rand(&st) % 2000) - 1000) : s;
            /* weights: path lengths, small integers (the product |x| w stays below the grid's top) */
            w[p] = weighted ? (double)(1 + er_test_rand(&st) % 8) : 1.0;
            x[p] = rand_value(&st, (per ? sv[p] : s) - (weighted ? 3 : 0));
        }
        for (int l = 0; l < nlevels; l++) {
            er_cpu_q_values(x, weighted ? w : NULL, per ? sv : NULL, s, N, q, levels[l]);
            for (int p = 0; p < N; p++) {
                double want = er_b_q_value(fabs(x[p]) * w[p], per ? sv[p] : s);
                ck_assert_msg(d_to_bits(q[p]) == d_to_bits(want),
                              "seed %llu round %d level %d: q of %a (weight %g, grid 2^%d) is %a, want %a",
                              (unsigned long long)seed, round, levels[l], x[p], w[p], per ? sv[p] : s, q[p], want);
            }
        }
    }
}
END_TEST

START_TEST(maxima_every_level)
{
    uint64_t st = seed ^ 0x9e3779b97f4a7c15u;
    enum { K = 37, NJ = 29 };
    double b[K * NJ], w[K * NJ];
    for (int round = 0; round < 2000; round++) {
        int special = round % 5 == 0;
        for (int t = 0; t < K * NJ; t++) {
            b[t] = rand_value(&st, (int)(er_test_rand(&st) % 200) - 100);
            w[t] = (double)(1 + er_test_rand(&st) % 8);
        }
        if (special) { /* an infinity or a NaN somewhere */
            int at = (int)(er_test_rand(&st) % (K * NJ));
            b[at] = er_test_rand(&st) & 1 ? INFINITY : NAN;
        }
        /* the largest of a run: the one-value loop's maximum and flag */
        int cnt = (int)(er_test_rand(&st) % (K * NJ)) + 1, weighted = round % 2;
        int bad0 = 0;
        double m0 = 0;
        for (int p = 0; p < cnt; p++) {
            double v = fabs(b[p]) * (weighted ? w[p] : 1.0);
            if (!er_b_finite(v)) bad0 = 1;
            else if (v > m0) m0 = v;
        }
        /* the columns' maxima */
        double cm0[NJ];
        int cb0[NJ];
        for (int t = 0; t < NJ; t++) {
            cm0[t] = 0, cb0[t] = 0;
            for (int p = 0; p < K; p++) {
                double v = fabs(b[p * NJ + t]);
                if (!er_b_finite(v)) cb0[t] = 1;
                else if (v > cm0[t]) cm0[t] = v;
            }
        }
        for (int l = 0; l < nlevels; l++) {
            int bad = 0;
            double m = er_cpu_q_max(b, weighted ? w : NULL, cnt, &bad, levels[l]);
            ck_assert_msg(bad == bad0, "seed %llu round %d level %d: flag %d, want %d", (unsigned long long)seed, round,
                          levels[l], bad, bad0);
            if (!bad0)
                ck_assert_msg(d_to_bits(m) == d_to_bits(m0), "seed %llu round %d level %d: max %a, want %a",
                              (unsigned long long)seed, round, levels[l], m, m0);
            double cm[NJ];
            int cb[NJ];
            er_cpu_q_colmax(b, NJ, K, NJ, cm, cb, levels[l]);
            for (int t = 0; t < NJ; t++) {
                ck_assert_msg(cb[t] == cb0[t], "seed %llu round %d level %d column %d: flag %d, want %d",
                              (unsigned long long)seed, round, levels[l], t, cb[t], cb0[t]);
                if (!cb0[t])
                    ck_assert_msg(d_to_bits(cm[t]) == d_to_bits(cm0[t]),
                                  "seed %llu round %d level %d column %d: max %a, want %a", (unsigned long long)seed,
                                  round, levels[l], t, cm[t], cm0[t]);
            }
        }
    }
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_quant");
    find_levels();
    printf("test_quant: vector levels 0..%d\n", nlevels - 1);
    Suite *s = suite_create("quant");
    TCase *tc = tcase_create("quant");
    tcase_add_test(tc, values_every_level);
    tcase_add_test(tc, maxima_every_level);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
