/* cpu_finish_x4.h: cpu_finish_x8.h's operations four lanes at a time with AVX2, for processors without
 * AVX-512: the same binary64 operations on each lane, the outward steps and the rounding to the
 * output's precision on the bit patterns, so a lane finished here has the bits of er_cpu_fq_finish.
 * AVX2 has no mask registers: a lane mask is a vector whose lanes are all ones or all zeros (the
 * compares' results), and every integer compared is below 2^63, so the signed compares serve.
 * Include after cpu_finish.h. */
#ifndef ER_CPU_FINISH_X4_H
#define ER_CPU_FINISH_X4_H

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdlib.h>

#include "../host/er_isa.h"
#define ER_HAVE_FINISH_X4 1
#define X4_TARGET __attribute__((target("avx2")))

typedef struct {
    __m256i half, lo_lim, r_lim, off, one, mant, sign, emax_f;
    __m256d max_c;
    __m128i sh, sgn, pb, sgn63; /* shift counts */
} er_x4_fq;

X4_TARGET static inline void er_x4_fq_init(er_x4_fq *V, const er_cpu_fq *q)
{
    V->half = _mm256_set1_epi64x((long long)q->half);
    V->lo_lim = _mm256_set1_epi64x((long long)q->lo_lim);
    V->r_lim = _mm256_set1_epi64x((long long)q->r_lim);
    V->off = _mm256_set1_epi64x((long long)q->off);
    V->one = _mm256_set1_epi64x(1);
    V->mant = _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll);
    V->sign = _mm256_set1_epi64x((long long)(UINT64_C(1) << 63));
    V->emax_f = _mm256_set1_epi64x(q->of == ER_FMT_F16 ? 31 : 255);
    V->max_c = _mm256_set1_pd(q->max_c);
    V->sh = _mm_cvtsi32_si128(q->sh);
    V->sgn = _mm_cvtsi32_si128(q->sgn);
    V->pb = _mm_cvtsi32_si128(q->pb);
    V->sgn63 = _mm_cvtsi32_si128(63 - q->sgn);
}

/* Whether the processor has AVX2 and the environment allows vector code (EXACTREF_NO_SIMD: the
 * one-at-a-time paths, which the tests compare). */
static inline int er_x4_wanted(void) { return er_isa() >= ER_ISA_AVX2; /* host/er_isa.h */ }

X4_TARGET static inline __m256i x4_not(__m256i m) { return _mm256_xor_si256(m, _mm256_set1_epi64x(-1)); }

/* The lanes of a double compare as an integer mask. */
#define X4_CMP(a, b, pred) _mm256_castpd_si256(_mm256_cmp_pd((a), (b), (pred)))

X4_TARGET static inline __m256i x4_finite(__m256d x)
{
    const __m256i ex = _mm256_set1_epi64x(0x7FF0000000000000ll);
    return x4_not(_mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(x), ex), ex));
}

/* er_b_up and er_b_down, lane by lane (non-finite lanes unchanged, zero to the least subnormal). */
X4_TARGET static inline __m256d x4_up(__m256d x)
{
    __m256i u = _mm256_castpd_si256(x), one = _mm256_set1_epi64x(1), fin = x4_finite(x);
    __m256i pos = _mm256_and_si256(fin, X4_CMP(x, _mm256_setzero_pd(), _CMP_GT_OQ));
    __m256i neg = _mm256_and_si256(fin, X4_CMP(x, _mm256_setzero_pd(), _CMP_LT_OQ));
    __m256i zer = X4_CMP(x, _mm256_setzero_pd(), _CMP_EQ_OQ);
    u = _mm256_add_epi64(u, _mm256_and_si256(pos, one));
    u = _mm256_sub_epi64(u, _mm256_and_si256(neg, one));
    u = _mm256_blendv_epi8(u, one, zer);
    return _mm256_castsi256_pd(u);
}

X4_TARGET static inline __m256d x4_down(__m256d x)
{
    __m256i u = _mm256_castpd_si256(x), one = _mm256_set1_epi64x(1), fin = x4_finite(x);
    __m256i pos = _mm256_and_si256(fin, X4_CMP(x, _mm256_setzero_pd(), _CMP_GT_OQ));
    __m256i neg = _mm256_and_si256(fin, X4_CMP(x, _mm256_setzero_pd(), _CMP_LT_OQ));
    __m256i zer = X4_CMP(x, _mm256_setzero_pd(), _CMP_EQ_OQ);
    u = _mm256_sub_epi64(u, _mm256_and_si256(pos, one));
    u = _mm256_add_epi64(u, _mm256_and_si256(neg, one));
    u = _mm256_blendv_epi8(u, _mm256_set1_epi64x((long long)0x8000000000000001ull), zer);
    return _mm256_castsi256_pd(u);
}

/* where m: b, else a (lane masks) */
X4_TARGET static inline __m256d x4_sel(__m256d a, __m256d b, __m256i m)
{
    return _mm256_blendv_pd(a, b, _mm256_castsi256_pd(m));
}

/* er_b_scale_up(N, e) where its result is a normal binary64 value (lanes *ok kept); 0 for N <= 0. */
X4_TARGET static inline __m256d x4_scale_up(const er_x4_fq *V, __m256d N, __m256i e, __m256i *ok)
{
    __m256i u = _mm256_castpd_si256(N), be = _mm256_add_epi64(_mm256_srli_epi64(u, 52), e);
    __m256i pos = X4_CMP(N, _mm256_setzero_pd(), _CMP_GT_OQ);
    __m256i in = x4_not(_mm256_or_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x(1), be),
                                        _mm256_cmpgt_epi64(be, _mm256_set1_epi64x(2046))));
    *ok = _mm256_and_si256(*ok, _mm256_or_si256(x4_not(pos), in));
    __m256i r = _mm256_or_si256(_mm256_slli_epi64(be, 52), _mm256_and_si256(u, V->mant));
    return _mm256_and_pd(_mm256_castsi256_pd(r), _mm256_castsi256_pd(pos));
}

/* The output pattern of each lane (er_cpu_fq_pattern), its rounded binary64 value, and the lanes in
 * the quick range (magnitudes below 2^63: the signed compares are the unsigned ones). */
X4_TARGET static inline __m256i x4_pattern(const er_x4_fq *V, __m256d v, __m256d *val, __m256i *ok)
{
    __m256i u = _mm256_castpd_si256(v), mag = _mm256_andnot_si256(V->sign, u), sg = _mm256_and_si256(u, V->sign);
    __m256i odd = _mm256_and_si256(_mm256_srl_epi64(mag, V->sh), V->one);
    __m256i r = _mm256_srl_epi64(_mm256_add_epi64(_mm256_add_epi64(mag, V->half), odd), V->sh);
    __m256i in = _mm256_and_si256(x4_not(_mm256_cmpgt_epi64(V->lo_lim, mag)), _mm256_cmpgt_epi64(V->r_lim, r));
    in = _mm256_and_si256(in, X4_CMP(v, _mm256_sub_pd(_mm256_setzero_pd(), V->max_c), _CMP_GE_OQ));
    in = _mm256_and_si256(in, X4_CMP(v, V->max_c, _CMP_LE_OQ));
    *ok = _mm256_and_si256(*ok, in);
    *val = _mm256_castsi256_pd(_mm256_or_si256(_mm256_sll_epi64(r, V->sh), sg));
    return _mm256_or_si256(_mm256_sub_epi64(r, V->off), _mm256_srl_epi64(sg, V->sgn63));
}

/* er_cpu_fq_finish for the lanes of ok, from the ends la <= hb (patterns pl, ph2, their values lv,
 * hv) and the radius: where the reference's pattern (rbp[0..3]) is a normal finite value, the lane's
 * bounds are stored at element e of out.  Returns the lanes stored (bit l: lane l). */
X4_TARGET static inline unsigned er_x4_finish(const er_x4_fq *V, const uint64_t *rbp, __m256d la, __m256d hb,
                                              __m256d rad, __m256i pl, __m256d lv, __m256i ph2, __m256d hv,
                                              __m256i ok, er_bounds *out, int64_t e)
{
    ok = _mm256_and_si256(ok, X4_CMP(la, hb, _CMP_LE_OQ));
    __m256i rb = _mm256_loadu_si256((const __m256i *)(const void *)rbp);
    __m256i rsg = _mm256_srl_epi64(rb, V->sgn);
    __m256i rmag = _mm256_sub_epi64(rb, _mm256_sll_epi64(rsg, V->sgn));
    __m256i ef = _mm256_srl_epi64(rmag, V->pb);
    ok = _mm256_and_si256(ok, x4_not(_mm256_cmpgt_epi64(rsg, V->one)));
    ok = _mm256_and_si256(ok, x4_not(_mm256_cmpgt_epi64(V->one, ef)));
    ok = _mm256_and_si256(ok, _mm256_cmpgt_epi64(V->emax_f, ef));
    unsigned m = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(ok));
    if (!m) return 0;
    /* the reference's value: its pattern's bits widened (a normal value) */
    __m256d rv = _mm256_castsi256_pd(
        _mm256_or_si256(_mm256_sll_epi64(_mm256_add_epi64(rmag, V->off), V->sh), _mm256_slli_epi64(rsg, 63)));
    __m256i rg = X4_CMP(lv, hv, _CMP_LE_OQ);
    __m256d d1 = x4_up(_mm256_sub_pd(rv, lv)), d2 = x4_up(_mm256_sub_pd(hv, rv));
    __m256d tol = x4_sel(d2, d1, X4_CMP(d1, d2, _CMP_GT_OQ));
    tol = x4_sel(tol, _mm256_setzero_pd(), X4_CMP(tol, _mm256_setzero_pd(), _CMP_LT_OQ));
    tol = x4_sel(_mm256_set1_pd(ER_B_INF), tol, rg);
    __m256i lo = _mm256_blendv_epi8(rb, pl, rg), hi = _mm256_blendv_epi8(rb, ph2, rg);
    _mm256_maskstore_pd(out->radius + e, ok, rad);
    _mm256_maskstore_pd(out->tolerance + e, ok, tol);
    _mm256_maskstore_epi64((long long *)(void *)(out->low + e), ok, lo);
    _mm256_maskstore_epi64((long long *)(void *)(out->high + e), ok, hi);
    unsigned r = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(rg));
    for (int l = 0; l < 4; l++)
        if ((m >> l) & 1u) {
            out->has_range[e + l] = (unsigned char)((r >> l) & 1u);
            out->may_pinf[e + l] = out->may_ninf[e + l] = out->may_nan[e + l] = 0;
        }
    return m;
}

/* er_cpu_fq_keys for four lanes: RD(x - rad) and RU(x + rad) decided by the enclosure [xl, xh] of x
 * where both ends give the same pattern; returns the lanes stored (er_x4_finish), 0 for the others. */
X4_TARGET static inline unsigned er_x4_keys(const er_x4_fq *V, const uint64_t *rbp, __m256d xl, __m256d xh,
                                            __m256d rad, __m256i ok, er_bounds *out, int64_t e)
{
    __m256d la = x4_down(_mm256_sub_pd(xl, rad)), lb = x4_up(_mm256_sub_pd(xh, rad));
    __m256d ha = x4_down(_mm256_add_pd(xl, rad)), hb = x4_up(_mm256_add_pd(xh, rad));
    __m256d lv, lv2, hv, hv2; /* lv2, hv2: unused (the ends must agree) */
    __m256i pl = x4_pattern(V, la, &lv, &ok), pl2 = x4_pattern(V, lb, &lv2, &ok);
    __m256i ph = x4_pattern(V, ha, &hv2, &ok), ph2 = x4_pattern(V, hb, &hv, &ok);
    ok = _mm256_and_si256(ok, _mm256_and_si256(_mm256_cmpeq_epi64(pl, pl2), _mm256_cmpeq_epi64(ph, ph2)));
    if (_mm256_testz_si256(ok, ok)) return 0;
    return er_x4_finish(V, rbp, la, hb, rad, pl, lv, ph2, hv, ok, out, e);
}
#endif

#endif /* ER_CPU_FINISH_X4_H */
