/* cpu_quant.c: the quantized magnitudes of the bounds (include/exactref/core/er_bounds.h:
 * er_b_q_scale, er_b_q_value) over runs of values, for the front door's preparation (src/tolerance.c).
 * With `simd` (er_cpu_q_simd: AVX-512 F and DQ, unless EXACTREF_NO_AVX512 or EXACTREF_NO_SIMD; the
 * caller asks once per pass, not once per run of values) eight values at a time by the same integer
 * operations on the bit patterns, so the same values; else the core's functions one value at a time. */
#include <stdlib.h>

#include "cpu_internal.h"
#include "exactref/core/er_bounds.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_Q_X8 1
#define QX_TARGET __attribute__((target("avx512f,avx512dq")))


/* er_b_q_value(v, s) lane by lane: ceil(|v| 2^-s) by shifts of the significand (|v| 2^-s < 2^53). */
QX_TARGET static inline __m512d q_x8(__m512d v, __m512i s)
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

QX_TARGET static void q_values_x8(const double *x, const double *w, const int32_t *sv, int s, int64_t cnt, double *q)
{
    int64_t p = 0;
    const __m512d absm = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    for (; p + 8 <= cnt; p += 8) {
        __m512d v = _mm512_and_pd(_mm512_loadu_pd(x + p), absm);
        if (w) v = _mm512_mul_pd(v, _mm512_loadu_pd(w + p));
        __m512i sc = sv ? _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(sv + p))) : _mm512_set1_epi64(s);
        _mm512_storeu_pd(q + p, q_x8(v, sc));
    }
    for (; p < cnt; p++) q[p] = er_b_q_value(__builtin_fabs(x[p]) * (w ? w[p] : 1.0), sv ? sv[p] : s);
}

QX_TARGET static double q_max_x8(const double *x, const double *w, int64_t cnt, int *bad)
{
    const __m512d absm = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    const __m512i ex = _mm512_set1_epi64(0x7FF0000000000000ll);
    __m512d mx = _mm512_setzero_pd();
    __mmask8 nf = 0;
    int64_t p = 0;
    for (; p + 8 <= cnt; p += 8) {
        __m512d v = _mm512_and_pd(_mm512_loadu_pd(x + p), absm);
        if (w) v = _mm512_mul_pd(v, _mm512_loadu_pd(w + p));
        nf |= _mm512_cmp_epi64_mask(_mm512_and_si512(_mm512_castpd_si512(v), ex), ex, _MM_CMPINT_EQ);
        mx = _mm512_max_pd(mx, v); /* finite lanes: the larger */
    }
    double m = _mm512_reduce_max_pd(mx);
    if (nf) *bad = 1;
    for (; p < cnt; p++) {
        double v = __builtin_fabs(x[p]) * (w ? w[p] : 1.0);
        if (!er_b_finite(v)) *bad = 1;
        else if (v > m) m = v;
    }
    return m;
}

/* The column maxima of 8 columns at a time (the rest one by one), the same comparisons. */
QX_TARGET static void q_colmax_x8(const double *b, int64_t ld, int64_t k, int64_t nj, double *mx, int *bad)
{
    const __m512d absm = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    const __m512i ex = _mm512_set1_epi64(0x7FF0000000000000ll);
    int64_t t = 0;
    for (; t + 8 <= nj; t += 8) {
        __m512d m = _mm512_setzero_pd();
        __mmask8 nf = 0;
        for (int64_t p = 0; p < k; p++) {
            __m512d v = _mm512_and_pd(_mm512_loadu_pd(b + p * ld + t), absm);
            nf |= _mm512_cmp_epi64_mask(_mm512_and_si512(_mm512_castpd_si512(v), ex), ex, _MM_CMPINT_EQ);
            m = _mm512_max_pd(m, v);
        }
        _mm512_storeu_pd(mx + t, m);
        for (int l = 0; l < 8; l++) bad[t + l] = (nf >> l) & 1;
    }
    for (; t < nj; t++) {
        double m = 0;
        bad[t] = 0;
        for (int64_t p = 0; p < k; p++) {
            double v = __builtin_fabs(b[p * ld + t]);
            if (!er_b_finite(v)) bad[t] = 1;
            else if (v > m) m = v;
        }
        mx[t] = m;
    }
}
#endif

int er_cpu_q_simd(void)
{
#ifdef ER_HAVE_Q_X8
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && !getenv("EXACTREF_NO_AVX512") &&
           !getenv("EXACTREF_NO_SIMD");
#else
    return 0;
#endif
}

void er_cpu_q_colmax(const double *b, int64_t ld, int64_t k, int64_t nj, double *mx, int *bad, int simd)
{
    (void)simd; /* without the vector code: the one-value loop */
#ifdef ER_HAVE_Q_X8
    if (simd) {
        q_colmax_x8(b, ld, k, nj, mx, bad);
        return;
    }
#endif
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
    (void)simd; /* without the vector code: the one-value loop */
#ifdef ER_HAVE_Q_X8
    if (simd) {
        q_values_x8(x, w, sv, s, cnt, q);
        return;
    }
#endif
    for (int64_t p = 0; p < cnt; p++) q[p] = er_b_q_value(__builtin_fabs(x[p]) * (w ? w[p] : 1.0), sv ? sv[p] : s);
}

double er_cpu_q_max(const double *x, const double *w, int64_t cnt, int *bad, int simd)
{
    (void)simd; /* without the vector code: the one-value loop */
#ifdef ER_HAVE_Q_X8
    if (simd) return q_max_x8(x, w, cnt, bad);
#endif
    double m = 0;
    for (int64_t p = 0; p < cnt; p++) {
        double v = __builtin_fabs(x[p]) * (w ? w[p] : 1.0);
        if (!er_b_finite(v)) *bad = 1;
        else if (v > m) m = v;
    }
    return m;
}
