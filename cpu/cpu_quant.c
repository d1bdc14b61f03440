/* cpu_quant.c: the quantized magnitudes of the bounds (include/exactref/core/er_bounds.h:
 * er_b_q_scale, er_b_q_value) over runs of values, for the front door's preparation (src/tolerance.c).
 * With `simd` (er_cpu_q_simd, which the caller asks once per pass, not once per run of values: 2 with
 * AVX-512 F and DQ unless EXACTREF_NO_AVX512, 1 with AVX2 (or AVX-512 under EXACTREF_NO_AVX512), 0 with
 * EXACTREF_NO_SIMD or neither) eight or four values at a time by the same integer operations on the
 * bit patterns, so the same values; else the core's functions one value at a time. */
#include <stdlib.h>

#include "cpu_internal.h"
#include "../host/er_isa.h"
#include "exactref/core/er_bounds.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_Q_X8 1
#define QX_TARGET __attribute__((target("avx512f,avx512dq")))


/* er_b_q_value(v, s) lane by lane: ceil(|v| 2^-s) by shifts of the significand (|v| 2^-s < 2^53). */
QX_TARGET static inline __m512d er_v8_qval(__m512d v, __m512i s)
{
    const __m512i mant = _mm512_set1_epi64(0x000FFFFFFFFFFFFFll), one = _mm512_set1_epi64(1);
    __m512i u = _mm512_and_si512(_mm512_castpd_si512(v), _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    __m512i be = _mm512_srli_epi64(u, 52);
    __mmask8 sub = _mm512_cmp_epi64_mask(be, _mm512_setzero_si512(), _MM_CMPINT_EQ);
    __m512i M = _mm512_mask_mov_epi64(_mm512_or_si512(_mm512_and_si512(u, mant), _mm512_set1_epi64(1ll << 52)), sub, u);
    __m512i E = _mm512_mask_mov_epi64(_mm512_sub_epi64(be, _mm512_set1_epi64(1075)), sub, _mm512_set1_epi64(-1074));
    E = _mm512_sub_epi64(E, s);
    __mmask8 up = _mm512_cmp_epi64_mask(E, _mm512_setzero_si512(), _MM_CMPINT_GE);
    __m512i sh = _mm512_sub_epi64(_mm512_setzero_si512(), E); /* > 0 where !up; shifts of 64 or more give 0 */
    __m512i lowm = _mm512_sub_epi64(_mm512_sllv_epi64(one, sh), one);
    __m512i r = _mm512_srlv_epi64(M, sh);
    __mmask8 rest = _mm512_test_epi64_mask(M, lowm);
    r = _mm512_mask_add_epi64(r, rest, r, one);
    r = _mm512_mask_mov_epi64(r, up, _mm512_sllv_epi64(M, E));
    r = _mm512_maskz_mov_epi64(_mm512_test_epi64_mask(u, u), r); /* zero: 0 */
    return _mm512_cvtepu64_pd(r);
}

#define QX4_TARGET __attribute__((target("avx2")))

/* er_v8_qval at four lanes: AVX2 has the variable 64-bit shifts (a count of 64 or more gives 0) and the
 * 64-bit compares, not the conversion of an unsigned integer to binary64; r <= 2^53 is converted as
 * its two 32-bit halves, each exact through the magic constants 2^84 and 2^52, whose sum is r exactly
 * (r is a binary64 value, so the one rounding of the addition is none). */
QX4_TARGET static inline __m256d er_v4_qval(__m256d v, __m256i s)
{
    const __m256i mant = _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll), one = _mm256_set1_epi64x(1), zero = _mm256_setzero_si256();
    __m256i u = _mm256_and_si256(_mm256_castpd_si256(v), _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll));
    __m256i be = _mm256_srli_epi64(u, 52);
    __m256i sub = _mm256_cmpeq_epi64(be, zero);
    __m256i M = _mm256_blendv_epi8(_mm256_or_si256(_mm256_and_si256(u, mant), _mm256_set1_epi64x(1ll << 52)), u, sub);
    __m256i E = _mm256_blendv_epi8(_mm256_sub_epi64(be, _mm256_set1_epi64x(1075)), _mm256_set1_epi64x(-1074), sub);
    E = _mm256_sub_epi64(E, s);
    __m256i down = _mm256_cmpgt_epi64(zero, E);   /* E < 0: shift right, rounding up */
    __m256i sh = _mm256_sub_epi64(zero, E);       /* > 0 where down; counts of 64 or more give 0 */
    __m256i lowm = _mm256_sub_epi64(_mm256_sllv_epi64(one, sh), one);
    __m256i r = _mm256_srlv_epi64(M, sh);
    __m256i rest = _mm256_cmpeq_epi64(_mm256_and_si256(M, lowm), zero); /* all ones: nothing dropped */
    r = _mm256_add_epi64(r, _mm256_andnot_si256(rest, one));
    r = _mm256_blendv_epi8(_mm256_sllv_epi64(M, E), r, down);
    r = _mm256_andnot_si256(_mm256_cmpeq_epi64(u, zero), r); /* zero: 0 */
    __m256i hi = _mm256_or_si256(_mm256_srli_epi64(r, 32), _mm256_castpd_si256(_mm256_set1_pd(0x1p84)));
    __m256i lo = _mm256_blend_epi32(r, _mm256_castpd_si256(_mm256_set1_pd(0x1p52)), 0xAA);
    __m256d dh = _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(0x1p84 + 0x1p52));
    return _mm256_add_pd(dh, _mm256_castsi256_pd(lo));
}

/* the runs a vector at a time: cpu_quant_lanes.h at AVX-512's and AVX2's widths */
#define ER_VEC_KERNELS "cpu_quant_lanes.h"
#include "cpu_vec_each.h"
#endif

int er_cpu_q_simd(void)
{
#ifdef ER_HAVE_Q_X8
    return er_isa(); /* host/er_isa.h: 2 AVX-512, 1 AVX2, 0 neither */
#else
    return 0;
#endif
}

/* a void kernel's twin for simd (2: AVX-512, 1: AVX2) where the vector code is built, then return; with
 * simd 0 (or without the vector code) the one-value loop that follows runs */
#ifdef ER_HAVE_Q_X8
#define ER_Q_TWIN(fn, ...)                                                                                     \
    do {                                                                                                       \
        if (simd) {                                                                                            \
            (simd == 2 ? er_v8_##fn : er_v4_##fn)(__VA_ARGS__);                                                \
            return;                                                                                            \
        }                                                                                                      \
    } while (0)
#else
#define ER_Q_TWIN(fn, ...) (void)simd
#endif

void er_cpu_q_colmax(const double *b, int64_t ld, int64_t k, int64_t nj, double *mx, int *bad, int simd)
{
    ER_Q_TWIN(q_colmax, b, ld, k, nj, mx, bad);
    for (int64_t t = 0; t < nj; t++) mx[t] = 0, bad[t] = 0;
    for (int64_t p = 0; p < k; p++)
        for (int64_t t = 0; t < nj; t++) {
            double v = __builtin_fabs(b[p * ld + t]);
            if (!er_b_finite(v)) bad[t] = 1;
            else if (v > mx[t]) mx[t] = v;
        }
}

void er_cpu_q_values(const double *x, const double *w, const int32_t *sv, int s, int64_t cnt, double *q, int simd)
{
    ER_Q_TWIN(q_values, x, w, sv, s, cnt, q);
    for (int64_t p = 0; p < cnt; p++) q[p] = er_b_q_value(__builtin_fabs(x[p]) * (w ? w[p] : 1.0), sv ? sv[p] : s);
}

double er_cpu_q_max(const double *x, const double *w, int64_t cnt, int *bad, int simd)
{
    (void)simd; /* without the vector code: the one-value loop */
#ifdef ER_HAVE_Q_X8
    if (simd) return (simd == 2 ? er_v8_q_max : er_v4_q_max)(x, w, cnt, bad);
#endif
    double m = 0;
    for (int64_t p = 0; p < cnt; p++) {
        double v = __builtin_fabs(x[p]) * (w ? w[p] : 1.0);
        if (!er_b_finite(v)) *bad = 1;
        else if (v > m) m = v;
    }
    return m;
}

/* The engines' magnitudes on per-instruction grids (include/exactref/core/er_bounds.h, er_b_eng_q_value):
 * the quantized integers of a run (the vector path where every value is finite), then times 2^s, exact
 * (s >= -537 and the integer at most 2^Q: a normal binary64 value). */
void er_cpu_eng_q_row(const double *x, int64_t k, int64_t mk, int Q, double *q, int simd)
{
    /* runs of whole instructions (at most 512 values, or one instruction): each value's grid exponent in
     * sv, then the integers of the whole run in one call (the vector path over short instructions) */
    enum { RUN = 512 };
    int32_t sv[RUN];
    double w[RUN];
    const int64_t per = mk >= RUN ? mk : RUN / mk * mk;
    for (int64_t r0 = 0; r0 < k; r0 += per) {
        const int64_t r1 = k - r0 < per ? k : r0 + per;
        int bad = 0;
        for (int64_t p0 = r0; p0 < r1; p0 += mk) {
            const int64_t p1 = r1 - p0 < mk ? r1 : p0 + mk;
            double mx = 0;
            for (int64_t p = p0; p < p1; p++) {
                const double v = __builtin_fabs(x[p]);
                if (!er_b_finite(v)) bad = 1;
                else if (v > mx) mx = v;
            }
            const int s = er_b_eng_q_scale(mx, Q);
            if (mk < RUN)
                for (int64_t p = p0; p < p1; p++) sv[p - r0] = s, w[p - r0] = er_b_pow2(s);
            else { /* one long instruction: one grid */
                if (bad) {
                    for (int64_t p = p0; p < p1; p++) q[p] = er_b_eng_q_value(x[p], s);
                    bad = 0;
                    continue;
                }
                er_cpu_q_values(x + p0, NULL, NULL, s, p1 - p0, q + p0, simd);
                const double ws = er_b_pow2(s);
                for (int64_t p = p0; p < p1; p++) q[p] = q[p] * ws;
            }
        }
        if (mk >= RUN) continue;
        if (bad) {
            for (int64_t p = r0; p < r1; p++) q[p] = er_b_eng_q_value(x[p], sv[p - r0]);
            continue;
        }
        er_cpu_q_values(x + r0, NULL, sv, 0, r1 - r0, q + r0, simd);
        for (int64_t p = r0; p < r1; p++) q[p] = q[p] * w[p - r0];
    }
}

void er_cpu_eng_q_block(const double *b, int64_t ld, int64_t rows, int64_t nj, int Q, double *q, int simd)
{
    double mx[64], w[64];
    int bad[64];
    int32_t sv[64];
    for (int64_t j0 = 0; j0 < nj; j0 += 64) {
        const int64_t cj = nj - j0 < 64 ? nj - j0 : 64;
        int anybad = 0;
        er_cpu_q_colmax(b + j0, ld, rows, cj, mx, bad, simd);
        for (int64_t t = 0; t < cj; t++) {
            if (bad[t]) {
                double m = 0;
                for (int64_t p = 0; p < rows; p++) {
                    double v = b[p * ld + j0 + t];
                    if (er_b_finite(v) && __builtin_fabs(v) > m) m = __builtin_fabs(v);
                }
                mx[t] = m;
                anybad = 1;
            }
            sv[t] = er_b_eng_q_scale(mx[t], Q);
            w[t] = er_b_pow2(sv[t]);
        }
        for (int64_t p = 0; p < rows; p++) {
            const double *src = b + p * ld + j0;
            double *dst = q + p * ld + j0;
            if (anybad) {
                for (int64_t t = 0; t < cj; t++) dst[t] = er_b_eng_q_value(src[t], sv[t]);
                continue;
            }
            er_cpu_q_values(src, NULL, sv, 0, cj, dst, simd);
            for (int64_t t = 0; t < cj; t++) dst[t] = dst[t] * w[t];
        }
    }
}
