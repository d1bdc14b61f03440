/* cpu_vec.h: the CPU's small vector-helper layer: one vocabulary of lane operations at AVX2's four lanes and AVX-512's eight.
 *
 * A kernel written once over this vocabulary is compiled at each width: include this header with
 * ER_VW defined as 4 or 8; each inclusion defines that width's operations (er_v4_* or er_v8_*, each
 * carrying its target attribute ER_VT), and V(op) names the current width's op, so a kernel header
 * included after it (with the same ER_VW) defines its own V(name) at that width.  The operations are
 * the instructions the former AVX2 and AVX-512 twins used, one for one (inline, so the compiled kernels
 * are those twins'):
 *   types   V(d) binary64 lanes, V(i) 64-bit integer lanes, V(m) a lane mask, V(c) a shift count;
 *   lanes   V(dset) V(dzero) V(dload) V(dstore) V(fload) (floats widened) V(add) V(sub) V(mul)
 *           V(max) (MAXPD's) V(hmax) (the largest lane, of lanes >= 0) V(dabs) V(dsel)(a, b, m) (b
 *           where m, else a) V(dmaskz)(m, x) (x where m, else 0);
 *   bits    V(bits) V(dbl) (reinterpretations), V(iset) V(izero) V(iload32) (int32 widened) V(iadd)
 *           V(isub) V(iand) V(ior) V(iandnot) V(isel) V(iadd_m)(u, m, v) (u + v where m) V(srli)
 *           V(slli) (constant counts) V(count) V(shr) V(shl) (a count set once);
 *   masks   V(dcmp)(a, b, _CMP_..) V(ieq) V(ine) V(igt) V(ige) (signed: every integer compared is
 *           below 2^63 in magnitude) V(mand) V(mor) V(mandnot)(a, b) (b and not a) V(mall) V(mnone) V(mbits)
 *           (bit l: lane l) V(mzero_bytes)(p) (lanes whose byte p[l] is 0);
 *   stores  V(dstore_m) V(istore_m) V(bstore_m)(p, m, v) (byte 1 or 0 from mask v, lanes of m).
 * AVX2 has no mask registers: a lane mask there is a vector whose lanes are all ones or all zeros (the
 * compares' results).  On top of the vocabulary: V(finite), V(nonfinite), V(up) and V(down) (er_b_up,
 * er_b_down lane by lane on the bit patterns).  ER_VEC_HAVE is 1 where the compiler takes the target attributes
 * (x86-64 GCC or Clang); elsewhere nothing is defined and the kernels' callers take the scalar paths.
 */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#ifndef ER_VEC_HAVE
#define ER_VEC_HAVE 1
#include <immintrin.h>
#include <stdint.h>

#define ER_VCAT2_(a, b) a##b
#define ER_VCAT2(a, b) ER_VCAT2_(a, b)
#define ER_VCAT3_(a, b, c) a##b##_##c
#define ER_VCAT3(a, b, c) ER_VCAT3_(a, b, c)
/* the current width's name of op, and its target attribute */
#define V(op) ER_VCAT3(er_v, ER_VW, op)
#define ER_VT ER_VCAT2(ER_VT_, ER_VW)
#define ER_VT_4 __attribute__((target("avx2"), always_inline))
#define ER_VT_8 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl"), always_inline))
/* a kernel's target attribute (not forced inline) */
#define ER_VK ER_VCAT2(ER_VK_, ER_VW)
#define ER_VK_4 __attribute__((target("avx2")))
#define ER_VK_8 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
/* the width's intrinsics: _mm256_op or _mm512_op, and the whole-register suffix si256 or si512 */
#define ER_VP(op) ER_VCAT2(ER_VCAT2(_mm, ER_VBITS), op)
#define ER_VSI(op) ER_VCAT2(ER_VP(op), ER_VBITS)
#endif

#if ER_VW == 4 && !defined(ER_CPU_VEC4_H)
#define ER_CPU_VEC4_H
#define ER_VBITS 256
typedef __m256d er_v4_d;
typedef __m256i er_v4_i;
typedef __m256i er_v4_m;
typedef __m128i er_v4_c;
#define er_v4_dcmp(a, b, pred) _mm256_castpd_si256(_mm256_cmp_pd((a), (b), (pred)))
#define er_v4_srli(x, n) _mm256_srli_epi64((x), (n))
#define er_v4_slli(x, n) _mm256_slli_epi64((x), (n))
ER_VT static inline er_v4_i er_v4_iset(int64_t x) { return _mm256_set1_epi64x(x); }
ER_VT static inline er_v4_i er_v4_iload32(const int32_t *p) { return _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)p)); }
ER_VT static inline er_v4_d er_v4_fload(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
ER_VT static inline er_v4_d er_v4_dabs(er_v4_d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
ER_VT static inline er_v4_c er_v4_count(int n) { return _mm_cvtsi32_si128(n); }
ER_VT static inline er_v4_i er_v4_shr(er_v4_i x, er_v4_c n) { return _mm256_srl_epi64(x, n); }
ER_VT static inline er_v4_i er_v4_shl(er_v4_i x, er_v4_c n) { return _mm256_sll_epi64(x, n); }
ER_VT static inline er_v4_m er_v4_mall(void) { return _mm256_set1_epi64x(-1); }
ER_VT static inline er_v4_m er_v4_mnone(void) { return _mm256_setzero_si256(); }
ER_VT static inline er_v4_m er_v4_mand(er_v4_m a, er_v4_m b) { return _mm256_and_si256(a, b); }
ER_VT static inline er_v4_m er_v4_mor(er_v4_m a, er_v4_m b) { return _mm256_or_si256(a, b); }
ER_VT static inline er_v4_m er_v4_mandnot(er_v4_m a, er_v4_m b) { return _mm256_andnot_si256(a, b); }
ER_VT static inline unsigned er_v4_mbits(er_v4_m m) { return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(m)); }
ER_VT static inline er_v4_m er_v4_ieq(er_v4_i a, er_v4_i b) { return _mm256_cmpeq_epi64(a, b); }
ER_VT static inline er_v4_m er_v4_ine(er_v4_i a, er_v4_i b) { return _mm256_andnot_si256(_mm256_cmpeq_epi64(a, b), er_v4_mall()); }
ER_VT static inline er_v4_m er_v4_igt(er_v4_i a, er_v4_i b) { return _mm256_cmpgt_epi64(a, b); }
ER_VT static inline er_v4_m er_v4_ige(er_v4_i a, er_v4_i b) { return _mm256_andnot_si256(_mm256_cmpgt_epi64(b, a), er_v4_mall()); }
ER_VT static inline er_v4_d er_v4_dsel(er_v4_d a, er_v4_d b, er_v4_m m) { return _mm256_blendv_pd(a, b, _mm256_castsi256_pd(m)); }
ER_VT static inline er_v4_i er_v4_isel(er_v4_i a, er_v4_i b, er_v4_m m) { return _mm256_blendv_epi8(a, b, m); }
ER_VT static inline er_v4_d er_v4_dmaskz(er_v4_m m, er_v4_d x) { return _mm256_and_pd(x, _mm256_castsi256_pd(m)); }
ER_VT static inline er_v4_i er_v4_iadd_m(er_v4_i u, er_v4_m m, er_v4_i v) { return _mm256_add_epi64(u, _mm256_and_si256(m, v)); }
ER_VT static inline er_v4_m er_v4_mzero_bytes(const unsigned char *p)
{
    int32_t w;
    __builtin_memcpy(&w, p, 4);
    return _mm256_cmpeq_epi64(_mm256_cvtepu8_epi64(_mm_cvtsi32_si128(w)), _mm256_setzero_si256());
}
ER_VT static inline void er_v4_dstore_m(double *p, er_v4_m m, er_v4_d x) { _mm256_maskstore_pd(p, m, x); }
ER_VT static inline void er_v4_istore_m(uint64_t *p, er_v4_m m, er_v4_i x) { _mm256_maskstore_epi64((long long *)(void *)p, m, x); }
ER_VT static inline double er_v4_hmax(er_v4_d x)
{
    double l[4], m = 0;
    _mm256_storeu_pd(l, x);
    for (int t = 0; t < 4; t++) m = l[t] > m ? l[t] : m;
    return m;
}
ER_VT static inline void er_v4_bstore_m(unsigned char *p, er_v4_m m, er_v4_m v)
{
    unsigned b = er_v4_mbits(m), t = er_v4_mbits(v);
    for (int l = 0; l < 4; l++)
        if ((b >> l) & 1u) p[l] = (unsigned char)((t >> l) & 1u);
}
#define ER_VEC_COMMON 1
#elif ER_VW == 8 && !defined(ER_CPU_VEC8_H)
#define ER_CPU_VEC8_H
#define ER_VBITS 512
typedef __m512d er_v8_d;
typedef __m512i er_v8_i;
typedef __mmask8 er_v8_m;
typedef unsigned er_v8_c;
#define er_v8_dcmp(a, b, pred) _mm512_cmp_pd_mask((a), (b), (pred))
#define er_v8_srli(x, n) _mm512_srli_epi64((x), (n))
#define er_v8_slli(x, n) _mm512_slli_epi64((x), (n))
ER_VT static inline er_v8_i er_v8_iset(int64_t x) { return _mm512_set1_epi64(x); }
ER_VT static inline er_v8_i er_v8_iload32(const int32_t *p) { return _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)p)); }
ER_VT static inline er_v8_d er_v8_fload(const float *p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
ER_VT static inline er_v8_d er_v8_dabs(er_v8_d x) { return _mm512_abs_pd(x); }
ER_VT static inline er_v8_c er_v8_count(int n) { return (unsigned)n; }
ER_VT static inline er_v8_i er_v8_shr(er_v8_i x, er_v8_c n) { return _mm512_srli_epi64(x, n); }
ER_VT static inline er_v8_i er_v8_shl(er_v8_i x, er_v8_c n) { return _mm512_slli_epi64(x, n); }
ER_VT static inline er_v8_m er_v8_mall(void) { return (__mmask8)0xFF; }
ER_VT static inline er_v8_m er_v8_mnone(void) { return (__mmask8)0; }
ER_VT static inline er_v8_m er_v8_mand(er_v8_m a, er_v8_m b) { return (__mmask8)(a & b); }
ER_VT static inline er_v8_m er_v8_mor(er_v8_m a, er_v8_m b) { return (__mmask8)(a | b); }
ER_VT static inline er_v8_m er_v8_mandnot(er_v8_m a, er_v8_m b) { return (__mmask8)(~a & b); }
ER_VT static inline unsigned er_v8_mbits(er_v8_m m) { return m; }
ER_VT static inline er_v8_m er_v8_ieq(er_v8_i a, er_v8_i b) { return _mm512_cmp_epi64_mask(a, b, _MM_CMPINT_EQ); }
ER_VT static inline er_v8_m er_v8_ine(er_v8_i a, er_v8_i b) { return _mm512_cmp_epi64_mask(a, b, _MM_CMPINT_NE); }
ER_VT static inline er_v8_m er_v8_igt(er_v8_i a, er_v8_i b) { return _mm512_cmp_epi64_mask(a, b, _MM_CMPINT_NLE); }
ER_VT static inline er_v8_m er_v8_ige(er_v8_i a, er_v8_i b) { return _mm512_cmp_epi64_mask(a, b, _MM_CMPINT_NLT); }
ER_VT static inline er_v8_d er_v8_dsel(er_v8_d a, er_v8_d b, er_v8_m m) { return _mm512_mask_mov_pd(a, m, b); }
ER_VT static inline er_v8_i er_v8_isel(er_v8_i a, er_v8_i b, er_v8_m m) { return _mm512_mask_mov_epi64(a, m, b); }
ER_VT static inline er_v8_d er_v8_dmaskz(er_v8_m m, er_v8_d x) { return _mm512_maskz_mov_pd(m, x); }
ER_VT static inline er_v8_i er_v8_iadd_m(er_v8_i u, er_v8_m m, er_v8_i v) { return _mm512_mask_add_epi64(u, m, u, v); }
ER_VT static inline er_v8_m er_v8_mzero_bytes(const unsigned char *p)
{
    __m128i w = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return (__mmask8)~_mm_test_epi8_mask(w, w);
}
ER_VT static inline void er_v8_dstore_m(double *p, er_v8_m m, er_v8_d x) { _mm512_mask_storeu_pd(p, m, x); }
ER_VT static inline void er_v8_istore_m(uint64_t *p, er_v8_m m, er_v8_i x) { _mm512_mask_storeu_epi64(p, m, x); }
ER_VT static inline double er_v8_hmax(er_v8_d x) { return _mm512_reduce_max_pd(x); }
ER_VT static inline void er_v8_bstore_m(unsigned char *p, er_v8_m m, er_v8_m v) { _mm_mask_storeu_epi8(p, m, _mm_maskz_set1_epi8(v, 1)); }
#define ER_VEC_COMMON 1
#endif

#ifdef ER_VEC_COMMON
#undef ER_VEC_COMMON
/* the operations that are the same intrinsic at both widths */
ER_VT static inline V(d) V(dset)(double x) { return ER_VP(_set1_pd)(x); }
ER_VT static inline V(d) V(dzero)(void) { return ER_VP(_setzero_pd)(); }
ER_VT static inline V(d) V(dload)(const double *p) { return ER_VP(_loadu_pd)(p); }
ER_VT static inline V(d) V(add)(V(d) a, V(d) b) { return ER_VP(_add_pd)(a, b); }
ER_VT static inline V(d) V(sub)(V(d) a, V(d) b) { return ER_VP(_sub_pd)(a, b); }
ER_VT static inline V(d) V(mul)(V(d) a, V(d) b) { return ER_VP(_mul_pd)(a, b); }
ER_VT static inline V(d) V(max)(V(d) a, V(d) b) { return ER_VP(_max_pd)(a, b); }
ER_VT static inline void V(dstore)(double *p, V(d) x) { ER_VP(_storeu_pd)(p, x); }
ER_VT static inline V(i) V(bits)(V(d) x) { return ER_VSI(_castpd_si)(x); }
ER_VT static inline V(d) V(dbl)(V(i) x) { return ER_VCAT2(ER_VSI(_castsi), _pd)(x); }
ER_VT static inline V(i) V(izero)(void) { return ER_VSI(_setzero_si)(); }
ER_VT static inline V(i) V(iadd)(V(i) a, V(i) b) { return ER_VP(_add_epi64)(a, b); }
ER_VT static inline V(i) V(isub)(V(i) a, V(i) b) { return ER_VP(_sub_epi64)(a, b); }
ER_VT static inline V(i) V(iand)(V(i) a, V(i) b) { return ER_VSI(_and_si)(a, b); }
ER_VT static inline V(i) V(ior)(V(i) a, V(i) b) { return ER_VSI(_or_si)(a, b); }
ER_VT static inline V(i) V(iandnot)(V(i) a, V(i) b) { return ER_VSI(_andnot_si)(a, b); }

/* The finite lanes (exponent field not all ones), and the others. */
ER_VT static inline V(m) V(finite)(V(d) x)
{
    const V(i) ex = V(iset)(0x7FF0000000000000ll);
    return V(ine)(V(iand)(V(bits)(x), ex), ex);
}
ER_VT static inline V(m) V(nonfinite)(V(d) x)
{
    const V(i) ex = V(iset)(0x7FF0000000000000ll);
    return V(ieq)(V(iand)(V(bits)(x), ex), ex);
}

/* er_b_up (s = 1) or er_b_down (s = -1) lane by lane: finite nonzero lanes one step outward (the
 * pattern plus s when positive, minus s when negative), zero to the least subnormal of that sign,
 * non-finite lanes unchanged. */
ER_VT static inline V(d) V(step)(V(d) x, int64_t s)
{
    V(i) u = V(bits)(x), sv = V(iset)(s);
    V(m) f = V(finite)(x);
    V(m) pos = V(mand)(f, V(dcmp)(x, V(dzero)(), _CMP_GT_OQ));
    V(m) neg = V(mand)(f, V(dcmp)(x, V(dzero)(), _CMP_LT_OQ));
    V(m) zer = V(dcmp)(x, V(dzero)(), _CMP_EQ_OQ);
    u = V(iadd_m)(u, pos, sv);
    u = V(iadd_m)(u, neg, V(iset)(-s));
    u = V(isel)(u, V(iset)(s > 0 ? 1 : (int64_t)0x8000000000000001ull), zer);
    return V(dbl)(u);
}
ER_VT static inline V(d) V(up)(V(d) x) { return V(step)(x, 1); }
ER_VT static inline V(d) V(down)(V(d) x) { return V(step)(x, -1); }
#undef ER_VBITS
#endif
#endif
