/* cpu_finish_x8.h: cpu_finish.h's common case eight elements at a time with AVX-512 (F, DQ, BW,
 * VL), for the CPU's per-element loops (cpu/cpu_bounds.c, cpu/cpu_bounds_engine.c): the same binary64
 * operations on each lane, the outward steps (er_b_up, er_b_down) and the rounding to the output's
 * precision on the bit patterns, so a lane finished here has the bits of er_cpu_fq_finish.  A lane is
 * finished only where every step lies in the common case (the caller's mask `ok` says which lanes
 * remain candidates; er_x8_finish returns those it stored).  Include after cpu_finish.h. */
#ifndef ER_CPU_FINISH_X8_H
#define ER_CPU_FINISH_X8_H

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdlib.h>

#include "../host/er_isa.h"
#define ER_HAVE_FINISH_X8 1
#define X8_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))

typedef struct {
    __m512i half, lo_lim, r_lim, off, one, mant, sign;
    __m512d max_c;
    int sh, sgn, pb;
    uint64_t emax_f; /* the output's all-ones exponent field */
} er_x8_fq;

X8_TARGET static inline void er_x8_fq_init(er_x8_fq *V, const er_cpu_fq *q)
{
    V->half = _mm512_set1_epi64((long long)q->half);
    V->lo_lim = _mm512_set1_epi64((long long)q->lo_lim);
    V->r_lim = _mm512_set1_epi64((long long)q->r_lim);
    V->off = _mm512_set1_epi64((long long)q->off);
    V->one = _mm512_set1_epi64(1);
    V->mant = _mm512_set1_epi64(0x000FFFFFFFFFFFFFll);
    V->sign = _mm512_set1_epi64((long long)(UINT64_C(1) << 63));
    V->max_c = _mm512_set1_pd(q->max_c);
    V->sh = q->sh;
    V->sgn = q->sgn;
    V->pb = q->pb;
    V->emax_f = q->of == ER_FMT_F16 ? 31u : 255u;
}

/* Whether the processor has the instructions, and the environment allows them (EXACTREF_NO_AVX512,
 * EXACTREF_NO_SIMD: the one-at-a-time paths, which the tests compare). */
static inline int er_x8_wanted(void)
{
    return er_isa() >= ER_ISA_AVX512; /* host/er_isa.h */
}

/* er_b_up and er_b_down, lane by lane (non-finite lanes unchanged, zero to the least subnormal). */
X8_TARGET static inline __m512d x8_up(__m512d x)
{
    __m512i u = _mm512_castpd_si512(x), one = _mm512_set1_epi64(1);
    __mmask8 fin = _mm512_cmp_epi64_mask(_mm512_and_si512(u, _mm512_set1_epi64(0x7FF0000000000000ll)),
                                         _mm512_set1_epi64(0x7FF0000000000000ll), _MM_CMPINT_NE);
    __mmask8 pos = fin & _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_GT_OQ);
    __mmask8 neg = fin & _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ);
    __mmask8 zer = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_EQ_OQ);
    u = _mm512_mask_add_epi64(u, pos, u, one);
    u = _mm512_mask_sub_epi64(u, neg, u, one);
    u = _mm512_mask_mov_epi64(u, zer, one);
    return _mm512_castsi512_pd(u);
}

X8_TARGET static inline __m512d x8_down(__m512d x)
{
    __m512i u = _mm512_castpd_si512(x), one = _mm512_set1_epi64(1);
    __mmask8 fin = _mm512_cmp_epi64_mask(_mm512_and_si512(u, _mm512_set1_epi64(0x7FF0000000000000ll)),
                                         _mm512_set1_epi64(0x7FF0000000000000ll), _MM_CMPINT_NE);
    __mmask8 pos = fin & _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_GT_OQ);
    __mmask8 neg = fin & _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ);
    __mmask8 zer = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_EQ_OQ);
    u = _mm512_mask_sub_epi64(u, pos, u, one);
    u = _mm512_mask_add_epi64(u, neg, u, one);
    u = _mm512_mask_mov_epi64(u, zer, _mm512_set1_epi64((long long)0x8000000000000001ull));
    return _mm512_castsi512_pd(u);
}

X8_TARGET static inline __mmask8 x8_finite(__m512d x)
{
    __m512i e = _mm512_and_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(0x7FF0000000000000ll));
    return _mm512_cmp_epi64_mask(e, _mm512_set1_epi64(0x7FF0000000000000ll), _MM_CMPINT_NE);
}

/* er_b_scale_up(N, e) where its result is a normal binary64 value (lanes *ok kept); 0 for N <= 0. */
X8_TARGET static inline __m512d x8_scale_up(const er_x8_fq *V, __m512d N, __m512i e, __mmask8 *ok)
{
    __m512i u = _mm512_castpd_si512(N), be = _mm512_add_epi64(_mm512_srli_epi64(u, 52), e);
    __mmask8 pos = _mm512_cmp_pd_mask(N, _mm512_setzero_pd(), _CMP_GT_OQ);
    __mmask8 in = _mm512_cmp_epi64_mask(be, _mm512_set1_epi64(1), _MM_CMPINT_GE) &
                  _mm512_cmp_epi64_mask(be, _mm512_set1_epi64(2046), _MM_CMPINT_LE);
    *ok &= (__mmask8)(~pos | in);
    __m512i r = _mm512_or_si512(_mm512_slli_epi64(be, 52), _mm512_and_si512(u, V->mant));
    return _mm512_maskz_mov_pd(pos, _mm512_castsi512_pd(r));
}

/* The output pattern of each lane (er_cpu_fq_pattern), its rounded binary64 value, and the lanes in
 * the quick range. */
X8_TARGET static inline __m512i x8_pattern(const er_x8_fq *V, __m512d v, __m512d *val, __mmask8 *ok)
{
    __m512i u = _mm512_castpd_si512(v), mag = _mm512_andnot_si512(V->sign, u), sg = _mm512_and_si512(u, V->sign);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi64(mag, (unsigned)V->sh), V->one);
    __m512i r = _mm512_srli_epi64(_mm512_add_epi64(_mm512_add_epi64(mag, V->half), odd), (unsigned)V->sh);
    *ok &= _mm512_cmp_epu64_mask(mag, V->lo_lim, _MM_CMPINT_NLT) & _mm512_cmp_epu64_mask(r, V->r_lim, _MM_CMPINT_LT) &
           _mm512_cmp_pd_mask(v, _mm512_sub_pd(_mm512_setzero_pd(), V->max_c), _CMP_GE_OQ) &
           _mm512_cmp_pd_mask(v, V->max_c, _CMP_LE_OQ);
    *val = _mm512_castsi512_pd(_mm512_or_si512(_mm512_slli_epi64(r, (unsigned)V->sh), sg));
    return _mm512_or_si512(_mm512_sub_epi64(r, V->off), _mm512_srli_epi64(sg, (unsigned)(63 - V->sgn)));
}

/* er_cpu_fq_finish for the lanes of ok, from the ends la <= hb (patterns pl, ph2, their values lv,
 * hv) and the radius: where the reference's pattern (rbp[0..7]) is a normal finite value, the lane's
 * bounds are stored at element e of out.  Returns the lanes stored. */
X8_TARGET static inline unsigned er_x8_finish(const er_x8_fq *V, const uint64_t *rbp, __m512d la, __m512d hb,
                                              __m512d rad, __m512i pl, __m512d lv, __m512i ph2, __m512d hv,
                                              __mmask8 ok, er_bounds *out, int64_t e)
{
    ok &= _mm512_cmp_pd_mask(la, hb, _CMP_LE_OQ);
    __m512i rb = _mm512_loadu_si512((const void *)rbp);
    __m512i rsg = _mm512_srli_epi64(rb, (unsigned)V->sgn);
    __m512i rmag = _mm512_sub_epi64(rb, _mm512_slli_epi64(rsg, (unsigned)V->sgn));
    __m512i ef = _mm512_srli_epi64(rmag, (unsigned)V->pb);
    ok &= _mm512_cmp_epu64_mask(rsg, V->one, _MM_CMPINT_LE) & _mm512_cmp_epu64_mask(ef, V->one, _MM_CMPINT_NLT) &
          _mm512_cmp_epu64_mask(ef, _mm512_set1_epi64((long long)V->emax_f), _MM_CMPINT_LT);
    if (!ok) return 0;
    /* the reference's value: its pattern's bits widened (a normal value) */
    __m512d rv = _mm512_castsi512_pd(
        _mm512_or_si512(_mm512_slli_epi64(_mm512_add_epi64(rmag, V->off), (unsigned)V->sh), _mm512_slli_epi64(rsg, 63)));
    __mmask8 rg = _mm512_cmp_pd_mask(lv, hv, _CMP_LE_OQ);
    __m512d d1 = x8_up(_mm512_sub_pd(rv, lv)), d2 = x8_up(_mm512_sub_pd(hv, rv));
    __m512d tol = _mm512_mask_mov_pd(d2, _mm512_cmp_pd_mask(d1, d2, _CMP_GT_OQ), d1);
    tol = _mm512_mask_mov_pd(tol, _mm512_cmp_pd_mask(tol, _mm512_setzero_pd(), _CMP_LT_OQ), _mm512_setzero_pd());
    tol = _mm512_mask_mov_pd(_mm512_set1_pd(ER_B_INF), rg, tol);
    __m512i lo = _mm512_mask_mov_epi64(rb, rg, pl), hi = _mm512_mask_mov_epi64(rb, rg, ph2);
    _mm512_mask_storeu_pd(out->radius + e, ok, rad);
    _mm512_mask_storeu_pd(out->tolerance + e, ok, tol);
    _mm512_mask_storeu_epi64(out->low + e, ok, lo);
    _mm512_mask_storeu_epi64(out->high + e, ok, hi);
    _mm_mask_storeu_epi8(out->has_range + e, ok, _mm_maskz_set1_epi8(rg, 1));
    _mm_mask_storeu_epi8(out->may_pinf + e, ok, _mm_setzero_si128());
    _mm_mask_storeu_epi8(out->may_ninf + e, ok, _mm_setzero_si128());
    _mm_mask_storeu_epi8(out->may_nan + e, ok, _mm_setzero_si128());
    return ok;
}

/* er_cpu_fq_keys for eight lanes: RD(x - rad) and RU(x + rad) decided by the enclosure [xl, xh] of x
 * where both ends give the same pattern; returns the lanes stored (er_x8_finish), 0 for the others. */
X8_TARGET static inline unsigned er_x8_keys(const er_x8_fq *V, const uint64_t *rbp, __m512d xl, __m512d xh,
                                            __m512d rad, __mmask8 ok, er_bounds *out, int64_t e)
{
    __m512d la = x8_down(_mm512_sub_pd(xl, rad)), lb = x8_up(_mm512_sub_pd(xh, rad));
    __m512d ha = x8_down(_mm512_add_pd(xl, rad)), hb = x8_up(_mm512_add_pd(xh, rad));
    __m512d lv, lv2, hv, hv2; /* lv2, hv2: unused (the ends must agree) */
    __m512i pl = x8_pattern(V, la, &lv, &ok), pl2 = x8_pattern(V, lb, &lv2, &ok);
    __m512i ph = x8_pattern(V, ha, &hv2, &ok), ph2 = x8_pattern(V, hb, &hv, &ok);
    ok &= _mm512_cmp_epi64_mask(pl, pl2, _MM_CMPINT_EQ) & _mm512_cmp_epi64_mask(ph, ph2, _MM_CMPINT_EQ);
    if (!ok) return 0;
    return er_x8_finish(V, rbp, la, hb, rad, pl, lv, ph2, hv, ok, out, e);
}
#endif

#endif /* ER_CPU_FINISH_X8_H */
