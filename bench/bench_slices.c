/* bench_slices.c: the host emulation of the GPU route's exact integer slices (cpu/cpu_slices.c) against
 * the CPU engine (er_mma, strategy AUTO), n x n x n, f8E4M3FN and f8E5M2 inputs, f32 output: both
 * timed once, the bits compared (they must be identical; exit 1 if not).
 *
 *   bench_slices [--n N] [--threads T]     (default n = 256; T: er_mma's threads, 0 = all cores)
 *
 * The emulation is plain C (int8 x int8 -> int32 dot products, rows over the same threads as er_mma); it
 * is a model of the tensor-core route for tests and dry runs, not a fast CPU path.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cpu/cpu_slices.h"
#include "er_front.h"
#include "bench_util.h"
#include "exactref/exactref.h"


static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

int main(int argc, char **argv)
{
    long long n = 256;
    int threads = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_slices [--n N] [--threads T]\n");
            return 2;
        }
    }
    if (n < 1 || n > 16384) {
        fprintf(stderr, "bench_slices: n = %lld: expected 1 .. 16384\n", n);
        return 2;
    }
    const int fmts[2] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2};
    for (int q = 0; q < 2; q++) {
        int f = fmts[q];
        size_t el = (size_t)(n * n);
        unsigned char *A = malloc(el), *B = malloc(el);
        float *D1 = malloc(el * 4), *D2 = malloc(el * 4);
        if (!A || !B || !D1 || !D2) {
            fprintf(stderr, "bench_slices: out of memory\n");
            return 1;
        }
        for (size_t e = 0; e < el; e++) { /* random finite patterns */
            unsigned char x;
            do x = (unsigned char)rnd();
            while (f == ER_FMT_F8E4M3FN ? (x & 0x7F) == 0x7F : (x & 0x7C) == 0x7C);
            A[e] = x;
            do x = (unsigned char)rnd();
            while (f == ER_FMT_F8E4M3FN ? (x & 0x7F) == 0x7F : (x & 0x7C) == 0x7C);
            B[e] = x;
        }
        er_tensor ta = er_tensor_2d(f, n, n, A), tb = er_tensor_2d(f, n, n, B);
        er_tensor d1 = er_tensor_2d(ER_FMT_F32, n, n, D1), d2 = er_tensor_2d(ER_FMT_F32, n, n, D2);
        er_mma_args x;
        er_mma_stats ms;
        er_problem P;
        er_slices_stats ss;
        char msg[256] = "";
        bench_mma_args(&x, &ta, &tb, &d1);
        x.backend = ER_BACKEND_CPU;
        x.threads = threads;
        double t_mma;
        int st = bench_mma_timed(&x, &ms, msg, sizeof msg, &t_mma);
        if (st != ER_OK) {
            fprintf(stderr, "bench_slices: er_mma: %s\n", msg);
            return 1;
        }
        x.stats = NULL;
        if (er_problem_validate(&P, &x, &d2, NULL, NULL, NULL, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "bench_slices: %s\n", msg);
            return 1;
        }
        double t0 = bench_now();
        st = er_cpu_slices_mma(&P, &ss);
        double t_sl = bench_now() - t0;
        if (st != ER_OK) {
            fprintf(stderr, "bench_slices: slices: %s\n", msg);
            return 1;
        }
        size_t bad = 0;
        for (size_t e = 0; e < el; e++) bad += memcmp(&D1[e], &D2[e], 4) != 0;
        double gops = 2.0 * (double)ss.gemms * (double)n * (double)n * (double)n / t_sl / 1e9;
        printf("bench_slices: %s x %s -> f32, %lld^3: er_mma (CPU, %d threads) %.3f s; host emulation %.3f s "
               "(%d x %d slices, %lld int8 GEMMs, %.2f GOP/s int8, %d threads; %lld of %lld elements from the slices); %s\n",
               er_format_name(f), er_format_name(f), n, ms.threads, t_mma, t_sl, ss.slices_a, ss.slices_b,
               (long long)ss.gemms, gops, P.nthreads, (long long)ss.sliced, (long long)ss.elements,
               bad ? "BITS DIFFER" : "bit-identical");
        if (bad) failed = 1;
        free(A);
        free(B);
        free(D1);
        free(D2);
    }
    return failed;
}
