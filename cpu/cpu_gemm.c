/* cpu_gemm.c: a blocked binary64 matrix product for the engine's certified fast path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/*
 * C[i][j] = sum_p A[i][p] B[p][j] for rows [r0, r1) of row-major A (lda), B (ldb), C (ldc).
 * The order of the additions and the use of fused multiply-add vary with the machine: the fast path
 * certifies its results with a bound valid for every order (docs/exact-engine.md), so this kernel is
 * free to be fast.  Compiled twice: a baseline version and an AVX2+FMA version chosen at run time.
 */
#define KB 256 /* rows of a packed panel of B */
#define NB 64  /* columns of a packed panel of B */
#define MR 4
#define NR 8

#define ER_GEMM_BODY(MULADD)                                                                          \
    {                                                                                                 \
        double *bp = (double *)malloc(sizeof(double) * KB * NB);                                      \
        if (!bp) return -1;                                                                           \
        for (int64_t i = r0; i < r1; i++)                                                             \
            for (int64_t j = 0; j < n; j++) c[i * ldc + j] = 0.0;                                    \
        for (int64_t j0 = 0; j0 < n; j0 += NB) {                                                     \
            int64_t nb = n - j0 < NB ? n - j0 : NB;                                                  \
            for (int64_t p0 = 0; p0 < k; p0 += KB) {                                                 \
                int64_t kb = k - p0 < KB ? k - p0 : KB;                                              \
                /* pack B[p0:p0+kb, j0:j0+nb] into NR-wide column strips, zero padded */             \
                for (int64_t js = 0; js < nb; js += NR)                                               \
                    for (int64_t p = 0; p < kb; p++)                                                  \
                        for (int jj = 0; jj < NR; jj++)                                               \
                            bp[js * kb + p * NR + jj] =                                               \
                                js + jj < nb ? b[(p0 + p) * ldb + j0 + js + jj] : 0.0;                \
                int64_t i = r0;                                                                       \
                for (; i + MR <= r1; i += MR) {                                                       \
                    const double *a0 = a + i * lda + p0;                                              \
                    for (int64_t js = 0; js < nb; js += NR) {                                         \
                        double acc[MR][NR];                                                           \
                        const double *bs = bp + js * kb;                                              \
                        for (int ii = 0; ii < MR; ii++)                                               \
                            for (int jj = 0; jj < NR; jj++) acc[ii][jj] = 0.0;                        \
                        for (int64_t p = 0; p < kb; p++) {                                            \
                            for (int ii = 0; ii < MR; ii++) {                                         \
                                double av = a0[ii * lda + p];                                         \
                                for (int jj = 0; jj < NR; jj++)                                       \
                                    acc[ii][jj] = MULADD(av, bs[p * NR + jj], acc[ii][jj]);           \
                            }                                                                         \
                        }                                                                             \
                        int64_t w = nb - js < NR ? nb - js : NR;                                      \
                        for (int ii = 0; ii < MR; ii++)                                               \
                            for (int jj = 0; jj < w; jj++) c[(i + ii) * ldc + j0 + js + jj] += acc[ii][jj]; \
                    }                                                                                 \
                }                                                                                     \
                for (; i < r1; i++) {                                                                 \
                    const double *a0 = a + i * lda + p0;                                              \
                    for (int64_t js = 0; js < nb; js += NR) {                                         \
                        double acc[NR];                                                               \
                        const double *bs = bp + js * kb;                                              \
                        for (int jj = 0; jj < NR; jj++) acc[jj] = 0.0;                                \
                        for (int64_t p = 0; p < kb; p++)                                              \
                            for (int jj = 0; jj < NR; jj++) acc[jj] = MULADD(a0[p], bs[p * NR + jj], acc[jj]); \
                        int64_t w = nb - js < NR ? nb - js : NR;                                      \
                        for (int jj = 0; jj < w; jj++) c[i * ldc + j0 + js + jj] += acc[jj];          \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        free(bp);                                                                                     \
        return 0;                                                                                     \
    }

#define ER_MULADD_PLAIN(x, y, z) ((x) * (y) + (z))

static int gemm_plain(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc,
                      int64_t r0, int64_t r1, int64_t n, int64_t k)
ER_GEMM_BODY(ER_MULADD_PLAIN)

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define ER_MULADD_FMA(x, y, z) __builtin_fma((x), (y), (z))
__attribute__((target("avx2,fma"))) static int gemm_avx2(const double *a, int64_t lda, const double *b,
                                                          int64_t ldb, double *c, int64_t ldc, int64_t r0,
                                                          int64_t r1, int64_t n, int64_t k)
ER_GEMM_BODY(ER_MULADD_FMA)
#define ER_HAVE_AVX2_GEMM 1
#endif

int er_cpu_gemm_rows(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc,
                     int64_t r0, int64_t r1, int64_t n, int64_t k)
{
#ifdef ER_HAVE_AVX2_GEMM
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return gemm_avx2(a, lda, b, ldb, c, ldc, r0, r1, n, k);
#endif
    return gemm_plain(a, lda, b, ldb, c, ldc, r0, r1, n, k);
}
