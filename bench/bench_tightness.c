/*
 * bench_tightness.c: the median share of the tolerance a correct kernel uses, per standard and k
 * (issue 30's table): any_order, normal and blocked:bk=64 (and split=4) on f32 blocked kernels, hopper
 * on the bit-accurate Hopper wgmma simulator (tests/result/sim.c), bf16 operands from a normal
 * distribution, f32 output, m = n = 16.  Also the median tolerance relative to the median |value|.
 *
 *   bench_tightness [k ...]      (default 1024 4096 16384 65536; EXACTREF_SEED sets the data)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "result/sim.h"

static uint64_t g_rng;
static double gauss(void)
{
    double u1 = (double)(er_test_rand(&g_rng) >> 11) * 0x1p-53, u2 = (double)(er_test_rand(&g_rng) >> 11) * 0x1p-53;
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static double bf16(double x)
{
    double y;
    er_round_double(ER_FMT_BF16, x, ER_RND_NEAREST_EVEN, &y);
    return y;
}
static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}
static double median(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n ? v[n / 2] : NAN;
}

/* An f32 blocked kernel: k-tiles of bk summed apart and added to their split's accumulator (split runs
 * of ceil(tiles / split) tiles), the splits added in order. */
static float blocked(const double *a, const double *b, int64_t k, int64_t bk, int64_t split)
{
    int64_t nt = (k + bk - 1) / bk, tps = (nt + split - 1) / split;
    float tot = 0;
    for (int64_t s = 0; s * tps < nt; s++) {
        float acc = 0;
        for (int64_t t = s * tps; t < (s + 1) * tps && t < nt; t++) {
            float part = 0;
            for (int64_t p = t * bk; p < (t + 1) * bk && p < k; p++) part += (float)a[p] * (float)b[p];
            acc += part;
        }
        tot = s ? tot + acc : acc;
    }
    return tot;
}

int main(int argc, char **argv)
{
    static const int64_t kdef[] = {1024, 4096, 16384, 65536};
    const int64_t m = 16, n = 16, mn = m * n;
    int nk = argc > 1 ? argc - 1 : 4;
    const sim_model *hop = sim_model_find("hopper");
    g_rng = er_test_seed("bench_tightness");
    printf("| k | any_order | normal | hopper | blocked:bk=64 | blocked:bk=64,split=4 |\n|---|---|---|---|---|---|\n");
    for (int ki = 0; ki < nk; ki++) {
        int64_t k = argc > 1 ? atoll(argv[ki + 1]) : kdef[ki];
        double *A = malloc(sizeof(double) * (size_t)(m * k)), *BT = malloc(sizeof(double) * (size_t)(k * n));
        uint16_t *Ab = malloc(2 * (size_t)(m * k)), *Bb = malloc(2 * (size_t)(k * n));
        float *D = malloc(4 * (size_t)mn), *O = malloc(4 * (size_t)mn);
        double *sh = malloc(sizeof(double) * (size_t)mn), *rel = malloc(sizeof(double) * (size_t)mn);
        for (int64_t q = 0; q < m * k; q++) {
            uint64_t b;
            A[q] = bf16(gauss());
            er_bits_of(ER_FMT_BF16, A[q], &b);
            Ab[q] = (uint16_t)b;
        }
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                uint64_t b;
                double v = bf16(gauss());
                BT[j * k + p] = v;
                er_bits_of(ER_FMT_BF16, v, &b);
                Bb[p * n + j] = (uint16_t)b;
            }
        er_tensor a = er_tensor_2d(ER_FMT_BF16, m, k, Ab), bt = er_tensor_2d(ER_FMT_BF16, k, n, Bb),
                  d = er_tensor_2d(ER_FMT_F32, m, n, D);
        er_mma_args args;
        er_result *r;
        char msg[512];
        er_mma_args_init(&args);
        args.a = &a, args.b = &bt, args.d = &d;
        if (er_result_create(&args, &r, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "%s\n", msg);
            return 1;
        }
        printf("| %lld |", (long long)k);
        double relv[5];
        for (int s = 0; s < 5; s++) {
            static const char *names[] = {"any_order", "normal", "hopper", "blocked:bk=64", "blocked:bk=64,split=4"};
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++)
                    O[i * n + j] = s == 2   ? (float)sim_engine(hop, (int)k, A + i * k, BT + j * k, 0.0, ER_FMT_BF16,
                                                                ER_FMT_BF16, ER_FMT_F32, ER_RND_NEAREST_EVEN)
                                   : s == 4 ? blocked(A + i * k, BT + j * k, k, 64, 4)
                                            : blocked(A + i * k, BT + j * k, k, 64, 1);
            er_tol_opts to;
            const er_bounds *bd;
            er_tol_opts_init(&to);
            er_standard_parse(names[s], &to.standard, msg, sizeof msg);
            if (er_result_bounds(r, &to, &bd, msg, sizeof msg) != ER_OK) {
                fprintf(stderr, "%s\n", msg);
                return 1;
            }
            for (int64_t e = 0; e < mn; e++) {
                sh[e] = fabs((double)O[e] - (double)D[e]) / bd->tolerance[e];
                rel[e] = bd->tolerance[e] / fabs((double)D[e]);
            }
            relv[s] = median(rel, mn);
            printf(" %.2g (%.2g) |", median(sh, mn), relv[s]);
            fflush(stdout);
        }
        printf("\n");
        er_result_free(r);
        free(A), free(BT), free(Ab), free(Bb), free(D), free(O), free(sh), free(rel);
    }
    printf("(each cell: the median share of the tolerance used; in parentheses the median tolerance / |value|)\n");
    return 0;
}
