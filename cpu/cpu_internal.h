/* cpu_internal.h: the CPU backend's entry points (for the front door, src/) and the declarations its
 * files share. */
#ifndef ER_CPU_INTERNAL_H
#define ER_CPU_INTERNAL_H

#include <stdint.h>

#include "../host/er_bjob.h"
#include "../host/er_problem.h"
#include "exactref/result.h"

/* C = A B for rows [r0, r1) (binary64, row-major); 0 on success, -1 out of memory. */
int er_cpu_gemm_rows(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc,
                     int64_t r0, int64_t r1, int64_t n, int64_t k);

/* C = A B (m x n, k terms; binary64, row-major) in ANY order of addition, with or without fused
 * multiply-add: for results certified by a bound valid for every order (the engine's fast path).  A
 * CBLAS's dgemm on `threads` threads where the build has one (cmake/ERBlas.cmake) and the environment
 * does not say EXACTREF_GEMM=builtin; else er_cpu_gemm_rows on `threads` threads, a fixed range of
 * rows each.  0 on success, -1 out of memory. */
int er_cpu_gemm_any(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc, int64_t m,
                    int64_t n, int64_t k, int threads);

/* 1 when er_cpu_gemm_any calls a BLAS (built with one, EXACTREF_GEMM not "builtin"), else 0. */
int er_cpu_gemm_uses_blas(void);
/* cpu_mma.c: the binary64 values of every pattern of fmt (at most 2 bytes of storage), or NULL */
const double *er_cpu_decode_table(int fmt, int ftz);
/* cpu_quant.c: q[p] = er_b_q_value(|x[p]| w[p], sv ? sv[p] : s) for p < cnt (w NULL: 1); the largest
 * |x[p]| w[p] (*bad set where one is not finite: the maximum is then meaningless); the largest
 * |b[p ld + t]| over p < k of each column t < nj, with bad[t] = 1 where one is not finite (else 0).
 * simd: er_cpu_q_simd(), asked once per pass (2 AVX-512, 1 AVX2, 0 one value at a time: the same
 * values every way). */
int er_cpu_q_simd(void);
void er_cpu_q_values(const double *x, const double *w, const int32_t *sv, int s, int64_t cnt, double *q, int simd);
double er_cpu_q_max(const double *x, const double *w, int64_t cnt, int *bad, int simd);
void er_cpu_q_colmax(const double *b, int64_t ld, int64_t k, int64_t nj, double *mx, int *bad, int simd);
/* cpu_quant.c: the engines' magnitudes on per-instruction grids (er_b_eng_q_value), Q from
 * er_b_q_bits(mk): a row of k values of A' in instructions of mk into q (k values); or `rows` rows (one
 * instruction) of nj columns of B' (row step ld, q with the same step), each column on its own grid. */
void er_cpu_eng_q_row(const double *x, int64_t k, int64_t mk, int Q, double *q, int simd);
void er_cpu_eng_q_block(const double *b, int64_t ld, int64_t rows, int64_t nj, int Q, double *q, int simd);
/* cpu_gemm.c: C = A B in binary32 through the BLAS in any order, or -1 without one */
int er_cpu_sgemm_blas(const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, int64_t m,
                      int64_t n, int64_t k, int threads);

/* Number of threads to use: requested > 0, else the online processors. */
int er_cpu_threads(int requested);

/* The exact engine on the CPU (cpu/cpu_mma.c): P->d, lo, hi, odd receive the problem's outputs and
 * P->stats (may be NULL) the counts, all but the note. */
int er_cpu_mma(const er_problem *P);

/* er_convert_array on the CPU (cpu/cpu_convert.c): what include/exactref/formats.h says of it; the
 * front door (src/convert.c) routes here. */
er_status er_cpu_convert_array(int from, int to, const void *src, void *dst, size_t n, int dir,
                               unsigned opts, unsigned *flags_or, size_t *bad_index);
/* er_convert_batch on the CPU (cpu/cpu_convert.c): job i as the core's er_convert; the specs were
 * checked by the front door. */
er_status er_cpu_convert_batch(const uint32_t *spec, const uint64_t *src, uint64_t *dst, uint32_t *flags, size_t n);

/* Element (i, col) of a batch on the host (pre: S and the integer sums of er_b_exact_element, or NULL). */
void er_bjob_element(const er_bjob *job, int64_t i, int64_t col, const double *pre, er_bel *o);

/* The elements of one prepared batch on the CPU's threads (a batch prepared for a device gets the
 * CPU's own copies first); the bits a device computes. */
int er_cpu_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int threads);

/* normal() emulated in index order (cpu/cpu_bounds.c): out receives it (of P->d's format and shape). */
int er_cpu_normal(const er_problem *P, int compute, int ftz, er_tensor *out);

#endif
