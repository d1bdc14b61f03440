/* cpu_gemm.c: a blocked binary64 matrix product for the engine's certified fast path. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/*
 * C[i][j] = sum_p A[i][p] B[p][j] for rows [r0, r1) of row-major A (lda), B (ldb), C (ldc).
 * Every element is one fused chain in index order: c <- 0, then c <- fma(A[i][p], B[p][j], c) for
 * p = 0, 1, ..., k - 1 (the accumulators live through all of k: a block of k reloads them from C).
 * The fast path does not need that (it certifies its results with a bound valid for every order), but
 * the bounds do: their canonical sums are these chains (include/exactref/core/er_bounds.h), which the
 * OpenCL and CUDA kernels form one element at a time, so the same bits come out everywhere.  Two
 * versions: a portable one (fma() of <math.h>), and an AVX2+FMA one chosen at run time where the
 * processor has it; both compute the same chains.
 *
 * Blocking (Goto's): a KB x NB panel of B is packed into NR-wide strips, an MR x KB block of A into
 * MR-tall strips, and an MR x NR micro-kernel keeps its accumulators in registers.
 */
#define KB 256
#define NB 256
#define MR 4
#define NR 8

/* Pack B[p0:p0+kb, j0:j0+nb] into strips of NR columns: strip s holds element (p, jj) at
 * s*kb*NR + p*NR + jj, zero padded past nb. */
static void pack_b(const double *b, int64_t ldb, int64_t p0, int64_t kb, int64_t j0, int64_t nb, double *bp)
{
    for (int64_t js = 0; js < nb; js += NR) {
        double *dst = bp + js * kb;
        int64_t w = nb - js < NR ? nb - js : NR;
        for (int64_t p = 0; p < kb; p++) {
            const double *src = b + (p0 + p) * ldb + j0 + js;
            int jj = 0;
            for (; jj < w; jj++) dst[p * NR + jj] = src[jj];
            for (; jj < NR; jj++) dst[p * NR + jj] = 0.0;
        }
    }
}

/* Pack A[i:i+h, p0:p0+kb] (h <= MR) as element (p, ii) at p*MR + ii, zero padded past h. */
static void pack_a(const double *a, int64_t lda, int64_t i, int h, int64_t p0, int64_t kb, double *ap)
{
    for (int64_t p = 0; p < kb; p++)
        for (int ii = 0; ii < MR; ii++) ap[p * MR + ii] = ii < h ? a[(i + ii) * lda + p0 + p] : 0.0;
}

/* The MR x NR block acc (row-major) from C and back, h rows and w columns of it (zero padded). */
static void get_block(double *acc, const double *c, int64_t ldc, int h, int w)
{
    for (int ii = 0; ii < MR; ii++)
        for (int jj = 0; jj < NR; jj++) acc[ii * NR + jj] = ii < h && jj < w ? c[ii * ldc + jj] : 0.0;
}

static void put_block(const double *acc, double *c, int64_t ldc, int h, int w)
{
    for (int ii = 0; ii < h; ii++)
        for (int jj = 0; jj < w; jj++) c[ii * ldc + jj] = acc[ii * NR + jj];
}

/* acc <- the chains continued over kb more terms. */
static void kernel_plain(int64_t kb, const double *ap, const double *bp, double *acc)
{
    double t[MR * NR];
    memcpy(t, acc, sizeof t);
    for (int64_t p = 0; p < kb; p++)
        for (int ii = 0; ii < MR; ii++) {
            double av = ap[p * MR + ii];
            for (int jj = 0; jj < NR; jj++) t[ii * NR + jj] = fma(av, bp[p * NR + jj], t[ii * NR + jj]);
        }
    memcpy(acc, t, sizeof t);
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_AVX2_GEMM 1
__attribute__((target("avx2,fma"))) static void kernel_avx2(int64_t kb, const double *ap, const double *bp,
                                                             double *acc)
{
    __m256d c00 = _mm256_loadu_pd(acc), c01 = _mm256_loadu_pd(acc + 4), c10 = _mm256_loadu_pd(acc + 8),
            c11 = _mm256_loadu_pd(acc + 12), c20 = _mm256_loadu_pd(acc + 16), c21 = _mm256_loadu_pd(acc + 20),
            c30 = _mm256_loadu_pd(acc + 24), c31 = _mm256_loadu_pd(acc + 28);
    for (int64_t p = 0; p < kb; p++) {
        __m256d b0 = _mm256_loadu_pd(bp + p * NR), b1 = _mm256_loadu_pd(bp + p * NR + 4);
        __m256d a0 = _mm256_broadcast_sd(ap + p * MR), a1 = _mm256_broadcast_sd(ap + p * MR + 1);
        __m256d a2 = _mm256_broadcast_sd(ap + p * MR + 2), a3 = _mm256_broadcast_sd(ap + p * MR + 3);
        c00 = _mm256_fmadd_pd(a0, b0, c00);
        c01 = _mm256_fmadd_pd(a0, b1, c01);
        c10 = _mm256_fmadd_pd(a1, b0, c10);
        c11 = _mm256_fmadd_pd(a1, b1, c11);
        c20 = _mm256_fmadd_pd(a2, b0, c20);
        c21 = _mm256_fmadd_pd(a2, b1, c21);
        c30 = _mm256_fmadd_pd(a3, b0, c30);
        c31 = _mm256_fmadd_pd(a3, b1, c31);
    }
    _mm256_storeu_pd(acc, c00);
    _mm256_storeu_pd(acc + 4, c01);
    _mm256_storeu_pd(acc + 8, c10);
    _mm256_storeu_pd(acc + 12, c11);
    _mm256_storeu_pd(acc + 16, c20);
    _mm256_storeu_pd(acc + 20, c21);
    _mm256_storeu_pd(acc + 24, c30);
    _mm256_storeu_pd(acc + 28, c31);
}
#endif

typedef void (*kernel_fn)(int64_t, const double *, const double *, double *);

int er_cpu_gemm_rows(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc,
                     int64_t r0, int64_t r1, int64_t n, int64_t k)
{
    kernel_fn kern = kernel_plain;
    double *bp, *ap;
    double acc[MR * NR];
#ifdef ER_HAVE_AVX2_GEMM
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kern = kernel_avx2;
#endif
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = 0; j < n; j++) c[i * ldc + j] = 0.0;
    if (k == 0) return 0;
    bp = (double *)malloc(sizeof(double) * KB * (NB + NR));
    ap = (double *)malloc(sizeof(double) * KB * MR);
    if (!bp || !ap) {
        free(bp);
        free(ap);
        return -1;
    }
    for (int64_t j0 = 0; j0 < n; j0 += NB) {
        int64_t nb = n - j0 < NB ? n - j0 : NB;
        for (int64_t p0 = 0; p0 < k; p0 += KB) {
            int64_t kb = k - p0 < KB ? k - p0 : KB;
            pack_b(b, ldb, p0, kb, j0, nb, bp);
            for (int64_t i = r0; i < r1; i += MR) {
                int h = r1 - i < MR ? (int)(r1 - i) : MR;
                pack_a(a, lda, i, h, p0, kb, ap);
                for (int64_t js = 0; js < nb; js += NR) {
                    int w = nb - js < NR ? (int)(nb - js) : NR;
                    get_block(acc, c + i * ldc + j0 + js, ldc, h, w);
                    kern(kb, ap, bp + js * kb, acc);
                    put_block(acc, c + i * ldc + j0 + js, ldc, h, w);
                }
            }
        }
    }
    free(bp);
    free(ap);
    return 0;
}
