/* cpu_mma.c: the exact engine on the CPU: mma, block-scaled mma, mmai and enclosures, on all cores. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_engine.h"
#include "cpu_internal.h"
#include "../host/er_progress.h"
#include "exactref/core/er_acc.h"
#include "exactref/core/er_bounds.h" /* er_b_up, er_b_down */
#include "exactref/core/er_mma.h"    /* the per-element sums */
#include "exactref/exactref.h"
#include "../host/er_alloc.h"
#include "../host/er_isa.h"
#include "../host/er_par.h"

int er_cpu_threads(int requested)
{
    long n;
    if (requested > 0) return requested;
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* ------------------------------------------------------------------------------------------------ */
/* The exact path: one element through the long accumulator                                          */

/* Accumulate element (b, i, j) exactly (fast path: arow is row i of the binary64 copy of A). */
static void exact_sum(const problem *P, int64_t b, int64_t i, int64_t j, const double *arow, const double *bcol,
                      er_acc *acc)
{
    er_acc_init(acc, P->q.acc_lo, P->q.acc_nd);
    if (P->q.fast) {
        /* The binary64 copies hold the operands exactly and their products are exact (the fast path's
         * conditions): decode each product's pattern instead of both operands'. */
        /* bcol: column j of the binary64 copy of B, gathered contiguously by the caller */
        const double *ar = arow;
        for (int64_t p = 0; p < P->q.k; p++) {
            double x = ar[p] * bcol[p];
            uint64_t bits = er_double_to_bits(x);
            uint32_t sign = (uint32_t)(bits >> 63), e = (uint32_t)(bits >> 52) & 0x7FFu;
            uint64_t f = bits & ((UINT64_C(1) << 52) - 1u);
            if (e == 0x7FFu || (e == 0 && f == 0) || x != x) {
                er_acc_add_product(acc, a_val(&P->q, b, i, p), b_val(&P->q, b, p, j)); /* zeros, inf, NaN */
                continue;
            }
            /* Strip the trailing zeros: the significand's lowest set bit is a bit of the exact
             * product, so its exponent is at least the window's lo (a 53-bit significand of a short
             * product would otherwise reach below the window). */
            uint64_t sig = e ? f | (UINT64_C(1) << 52) : f;
            int32_t ex = e ? (int32_t)e - 1075 : -1074;
            int tz = er_ctz64(sig);
            acc->nonzero = 1u;
            er_acc_add_digits(acc, sign, 0u, sig >> tz, ex + tz);
        }
    } else {
        /* the shared core's sum (include/exactref/core/er_mma.h), over the tensors' strides */
        const er_view *A = &P->q.a, *B = &P->q.b, *SA = &P->q.sa, *SB = &P->q.sb;
        er_mma_sum_any(acc, A->fmt, B->fmt, P->q.scaled ? SA->fmt : -1, A->data, b * A->sb + i * A->s0, A->s1, B->data,
                       b * B->sb + j * B->s1, B->s0, SA->data, b * SA->sb + i * SA->s0, SA->s1, SB->data,
                       b * SB->sb + j * SB->s1, SB->s0, P->q.scaled ? P->q.args->block : 1, P->q.k, P->q.args->opts);
    }
    if (P->q.has_c) er_acc_add_val(acc, in_val(&P->q, er_decode(P->q.c.fmt, er_view_load(&P->q.c, b, i, j))));
}

static void exact_element(const problem *P, int64_t b, int64_t i, int64_t j, const double *arow, const double *bcol,
                          er_acc *acc, er_acc *tmp)
{
    const er_problem *Q = &P->q;
    exact_sum(P, b, i, j, arow, bcol, acc);
    if (Q->lo) {
        *tmp = *acc;
        er_tensor_store(Q->lo, b, i, j, er_acc_round(tmp, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0u).bits, 8);
    }
    if (Q->hi) {
        *tmp = *acc;
        er_tensor_store(Q->hi, b, i, j, er_acc_round(tmp, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits, 8);
    }
    if (Q->odd) {
        *tmp = *acc;
        er_tensor_store(Q->odd, b, i, j, er_acc_round(tmp, ER_FMT_F64, ER_RND_ODD, 0u).bits, 8);
    }
    if (Q->d)
        er_tensor_store(Q->d, b, i, j, er_acc_round(acc, Q->d->format, Q->args->rounding, Q->args->opts).bits,
              er_storage_bytes(Q->d->format));
}

/* ------------------------------------------------------------------------------------------------ */
/* The certified fast path (docs/exact-engine.md, "Strategy 2")                                       */

/* The first stage's quick decision for a run of elements of one row (see fast_rows): the enclosure's
 * ends X, Y (bit patterns) and a code per element: 1 both ends in the output's normal range, of one
 * sign, rounding alike (decided); 0 the same but rounding apart (undecided); 2 anything else (the
 * general code decides). */
typedef struct {
    double as1, amx, as2, infl, gamma;
    uint64_t half, lo_lim, r_lim, off;
    int sh;
} quick_par;

static void quick_run(const quick_par *q, int64_t cnt, const double *si_, const double *bmx, const double *bs1,
                      const double *bs2, uint64_t *xo, uint64_t *yo, unsigned char *code)
{
    const uint64_t mag = ~(UINT64_C(1) << 63);
    for (int64_t j = 0; j < cnt; j++) {
        /* the same operations as the general code (fabs(cval) = 0 adds nothing) */
        double si = si_[j];
        double t1 = q->as1 * bmx[j], t2 = q->amx * bs1[j], t = t1 < t2 ? t1 : t2;
        double t3 = q->as2 * bs2[j];
        if (t3 < t) t = t3;
        t = (t + 0.0) * q->infl;
        double e = q->gamma * t * (1.0 + 0x1p-50) + 0x1p-1070;
        uint64_t X = er_double_to_bits(er_b_down(si - e)), Y = er_double_to_bits(er_b_up(si + e));
        uint64_t mx_ = X & mag, my = Y & mag;
        uint64_t rx = (mx_ + q->half + ((mx_ >> q->sh) & 1u)) >> q->sh, ry = (my + q->half + ((my >> q->sh) & 1u)) >> q->sh;
        int in = ((X ^ Y) >> 63) == 0 && mx_ >= q->lo_lim && my >= q->lo_lim && rx < q->r_lim && ry < q->r_lim &&
                 (er_double_to_bits(bs1[j]) & mag) < UINT64_C(0x7FF0000000000000);
        xo[j] = X;
        yo[j] = Y;
        code[j] = (unsigned char)(in ? rx == ry : 2);
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_AVX2_QUICK 1
#define ER_HAVE_AVX512_QUICK 1
/* The same, four elements at a time: the same binary64 operations (min as the conditional's
 * a < b ? a : b, which MINPD is), the outward steps and the rounding test on
 * the 64-bit patterns; cnt a multiple of 4. */
__attribute__((target("avx2"))) static void quick_run_avx2(const quick_par *q, int64_t cnt, const double *si_,
                                                           const double *bmx, const double *bs1, const double *bs2,
                                                           uint64_t *xo, uint64_t *yo, unsigned char *code,
                                                           unsigned char *out32)
{
    /* out32 (f32 outputs stored contiguously, or NULL): a decided element's pattern is stored there
     * directly, sign | (rx - off) as the scalar consumer forms it, and its code is 3 */
    const __m256i off = _mm256_set1_epi64x((long long)q->off);
    const __m256i pidx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256d as1 = _mm256_set1_pd(q->as1), amx = _mm256_set1_pd(q->amx), as2 = _mm256_set1_pd(q->as2);
    const __m256d infl = _mm256_set1_pd(q->infl), gamma = _mm256_set1_pd(q->gamma), zero = _mm256_setzero_pd();
    const __m256d f50 = _mm256_set1_pd(1.0 + 0x1p-50), a1070 = _mm256_set1_pd(0x1p-1070);
    const __m256i mag = _mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll), maxfin = _mm256_set1_epi64x(0x7FEFFFFFFFFFFFFFll);
    const __m256i one = _mm256_set1_epi64x(1), zi = _mm256_setzero_si256(), half = _mm256_set1_epi64x((long long)q->half);
    const __m256i lo_lim = _mm256_set1_epi64x((long long)q->lo_lim), r_lim = _mm256_set1_epi64x((long long)q->r_lim);
    const __m256i dmin = _mm256_set1_epi64x((long long)0x8000000000000001ull); /* -2^-1074 */
    const __m128i shc = _mm_cvtsi32_si128(q->sh);
    for (int64_t j = 0; j < cnt; j += 4) {
        __m256d si = _mm256_loadu_pd(si_ + j);
        __m256d t = _mm256_min_pd(_mm256_mul_pd(as1, _mm256_loadu_pd(bmx + j)),
                                  _mm256_mul_pd(amx, _mm256_loadu_pd(bs1 + j)));
        __m256d t3 = _mm256_mul_pd(as2, _mm256_loadu_pd(bs2 + j));
        t = _mm256_min_pd(t3, t);
        t = _mm256_mul_pd(_mm256_add_pd(t, zero), infl);
        __m256d e = _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(gamma, t), f50), a1070);
        __m256i lo = _mm256_castpd_si256(_mm256_sub_pd(si, e)), hi = _mm256_castpd_si256(_mm256_add_pd(si, e));
        /* er_b_down(lo), er_b_up(hi): non-finite kept; zero to -+2^-1074; else one step outward */
        __m256i alo = _mm256_and_si256(lo, mag), ahi = _mm256_and_si256(hi, mag);
        __m256i nf_lo = _mm256_cmpgt_epi64(alo, maxfin), nf_hi = _mm256_cmpgt_epi64(ahi, maxfin);
        __m256i z_lo = _mm256_cmpeq_epi64(alo, zi), z_hi = _mm256_cmpeq_epi64(ahi, zi);
        __m256i pos_lo = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpgt_epi64(zi, lo), z_lo), _mm256_set1_epi64x(-1));
        __m256i pos_hi = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpgt_epi64(zi, hi), z_hi), _mm256_set1_epi64x(-1));
        __m256i X = _mm256_add_epi64(_mm256_add_epi64(lo, one), _mm256_slli_epi64(pos_lo, 1)); /* pos: -1, else +1 */
        __m256i Y = _mm256_sub_epi64(_mm256_sub_epi64(hi, one), _mm256_slli_epi64(pos_hi, 1)); /* pos: +1, else -1 */
        X = _mm256_blendv_epi8(X, dmin, z_lo);
        Y = _mm256_blendv_epi8(Y, one, z_hi);
        X = _mm256_blendv_epi8(X, lo, nf_lo);
        Y = _mm256_blendv_epi8(Y, hi, nf_hi);
        __m256i mx_ = _mm256_and_si256(X, mag), my = _mm256_and_si256(Y, mag);
        __m256i rx = _mm256_srl_epi64(_mm256_add_epi64(_mm256_add_epi64(mx_, half), _mm256_and_si256(_mm256_srl_epi64(mx_, shc), one)), shc);
        __m256i ry = _mm256_srl_epi64(_mm256_add_epi64(_mm256_add_epi64(my, half), _mm256_and_si256(_mm256_srl_epi64(my, shc), one)), shc);
        /* out of the quick case: signs differ, an end below the normal range, a rounded end at or past
         * the overflow threshold, or a non-finite column norm */
        __m256i out = _mm256_cmpgt_epi64(zi, _mm256_xor_si256(X, Y));
        out = _mm256_or_si256(out, _mm256_cmpgt_epi64(lo_lim, mx_));
        out = _mm256_or_si256(out, _mm256_cmpgt_epi64(lo_lim, my));
        out = _mm256_or_si256(out, _mm256_cmpgt_epi64(rx, _mm256_sub_epi64(r_lim, one)));
        out = _mm256_or_si256(out, _mm256_cmpgt_epi64(ry, _mm256_sub_epi64(r_lim, one)));
        out = _mm256_or_si256(out, _mm256_cmpgt_epi64(_mm256_and_si256(_mm256_castpd_si256(_mm256_loadu_pd(bs1 + j)), mag), maxfin));
        __m256i same = _mm256_cmpeq_epi64(rx, ry);
        _mm256_storeu_si256((__m256i *)(xo + j), X);
        _mm256_storeu_si256((__m256i *)(yo + j), Y);
        int mo = _mm256_movemask_pd(_mm256_castsi256_pd(out)), ms = _mm256_movemask_pd(_mm256_castsi256_pd(same));
        if (out32) {
            __m256i dec = _mm256_andnot_si256(out, same);
            __m256i pat = _mm256_or_si256(_mm256_slli_epi64(_mm256_srli_epi64(X, 63), 31), _mm256_sub_epi64(rx, off));
            __m128i p32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(pat, pidx));
            __m128i m32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(dec, pidx));
            _mm_maskstore_epi32((int *)(out32 + 4 * j), m32, p32);
            for (int l = 0; l < 4; l++) code[j + l] = (unsigned char)(mo >> l & 1 ? 2 : ms >> l & 1 ? 3 : 0);
            continue;
        }
        for (int l = 0; l < 4; l++) code[j + l] = (unsigned char)(mo >> l & 1 ? 2 : ms >> l & 1);
    }
}
#endif

#ifdef ER_HAVE_AVX512_QUICK
/* The same, eight elements at a time with AVX-512 (the same binary64 operations and the same integer
 * steps on the patterns, with mask registers); cnt a multiple of 8.  out (row j0 of D, elements
 * contiguous, `bytes` each, or NULL): a decided element's pattern is stored there directly, code 3.
 * nd[g]: the mask of group g's elements not decided and stored here (the caller's to finish). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
quick_run_avx512(const quick_par *q, int64_t cnt, const double *si_, const double *bmx, const double *bs1,
                 const double *bs2, uint64_t *xo, uint64_t *yo, unsigned char *code, unsigned char *nd,
                 unsigned char *out, int bytes)
{
    const __m512i off = _mm512_set1_epi64((long long)q->off);
    const __m512d as1 = _mm512_set1_pd(q->as1), amx = _mm512_set1_pd(q->amx), as2 = _mm512_set1_pd(q->as2);
    const __m512d infl = _mm512_set1_pd(q->infl), gamma = _mm512_set1_pd(q->gamma), zero = _mm512_setzero_pd();
    const __m512d f50 = _mm512_set1_pd(1.0 + 0x1p-50), a1070 = _mm512_set1_pd(0x1p-1070);
    const __m512i mag = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll), maxfin = _mm512_set1_epi64(0x7FEFFFFFFFFFFFFFll);
    const __m512i one = _mm512_set1_epi64(1), zi = _mm512_setzero_si512(), half = _mm512_set1_epi64((long long)q->half);
    const __m512i lo_lim = _mm512_set1_epi64((long long)q->lo_lim), r_lim = _mm512_set1_epi64((long long)q->r_lim);
    const __m512i dmin = _mm512_set1_epi64((long long)0x8000000000000001ull); /* -2^-1074 */
    const __m128i shc = _mm_cvtsi32_si128(q->sh);
    const int sgn = 8 * bytes - 1;
    for (int64_t j = 0; j < cnt; j += 8) {
        _mm_prefetch((const char *)(si_ + j + 128), _MM_HINT_T0);
        __m512d si = _mm512_loadu_pd(si_ + j);
        __m512d t = _mm512_min_pd(_mm512_mul_pd(as1, _mm512_loadu_pd(bmx + j)),
                                  _mm512_mul_pd(amx, _mm512_loadu_pd(bs1 + j)));
        __m512d t3 = _mm512_mul_pd(as2, _mm512_loadu_pd(bs2 + j));
        t = _mm512_min_pd(t3, t);
        t = _mm512_mul_pd(_mm512_add_pd(t, zero), infl);
        __m512d e = _mm512_add_pd(_mm512_mul_pd(_mm512_mul_pd(gamma, t), f50), a1070);
        __m512i lo = _mm512_castpd_si512(_mm512_sub_pd(si, e)), hi = _mm512_castpd_si512(_mm512_add_pd(si, e));
        /* er_b_down(lo), er_b_up(hi): non-finite kept; zero to -+2^-1074; else one step outward */
        __m512i alo = _mm512_and_si512(lo, mag), ahi = _mm512_and_si512(hi, mag);
        __mmask8 nf_lo = _mm512_cmpgt_epi64_mask(alo, maxfin), nf_hi = _mm512_cmpgt_epi64_mask(ahi, maxfin);
        __mmask8 z_lo = _mm512_cmpeq_epi64_mask(alo, zi), z_hi = _mm512_cmpeq_epi64_mask(ahi, zi);
        __mmask8 pos_lo = (__mmask8)(~(_mm512_cmplt_epi64_mask(lo, zi) | z_lo));
        __mmask8 pos_hi = (__mmask8)(~(_mm512_cmplt_epi64_mask(hi, zi) | z_hi));
        __m512i X = _mm512_mask_sub_epi64(_mm512_add_epi64(lo, one), pos_lo, lo, one); /* pos: -1, else +1 */
        __m512i Y = _mm512_mask_add_epi64(_mm512_sub_epi64(hi, one), pos_hi, hi, one); /* pos: +1, else -1 */
        X = _mm512_mask_mov_epi64(X, z_lo, dmin);
        Y = _mm512_mask_mov_epi64(Y, z_hi, one);
        X = _mm512_mask_mov_epi64(X, nf_lo, lo);
        Y = _mm512_mask_mov_epi64(Y, nf_hi, hi);
        __m512i mx_ = _mm512_and_si512(X, mag), my = _mm512_and_si512(Y, mag);
        __m512i rx = _mm512_srl_epi64(
            _mm512_add_epi64(_mm512_add_epi64(mx_, half), _mm512_and_si512(_mm512_srl_epi64(mx_, shc), one)), shc);
        __m512i ry = _mm512_srl_epi64(
            _mm512_add_epi64(_mm512_add_epi64(my, half), _mm512_and_si512(_mm512_srl_epi64(my, shc), one)), shc);
        /* out of the quick case: signs differ, an end below the normal range, a rounded end at or past
         * the overflow threshold, or a non-finite column norm */
        __mmask8 o = _mm512_cmplt_epi64_mask(_mm512_xor_si512(X, Y), zi);
        o |= _mm512_cmplt_epi64_mask(mx_, lo_lim) | _mm512_cmplt_epi64_mask(my, lo_lim);
        o |= _mm512_cmpge_epi64_mask(rx, r_lim) | _mm512_cmpge_epi64_mask(ry, r_lim);
        o |= _mm512_cmpgt_epi64_mask(_mm512_and_si512(_mm512_castpd_si512(_mm512_loadu_pd(bs1 + j)), mag), maxfin);
        __mmask8 same = _mm512_cmpeq_epi64_mask(rx, ry);
        __mmask8 dec = (__mmask8)(same & ~o);
        _mm512_storeu_si512((void *)(xo + j), X);
        _mm512_storeu_si512((void *)(yo + j), Y);
        unsigned left = (unsigned)(__mmask8)~dec;
        if (out) {
            __m512i pat = _mm512_or_si512(_mm512_sll_epi64(_mm512_srli_epi64(X, 63), _mm_cvtsi32_si128(sgn)),
                                          _mm512_sub_epi64(rx, off));
            if (bytes == 4) _mm512_mask_cvtepi64_storeu_epi32(out + 4 * j, dec, pat);
            else _mm512_mask_cvtepi64_storeu_epi16(out + 2 * j, dec, pat);
        } else {
            left = 0xFFu; /* decided elements are stored by the caller (code 1) */
        }
        nd[j / 8] = (unsigned char)left;
        if (left) {
            unsigned dc = out ? 3u : 1u;
            for (int l = 0; l < 8; l++) code[j + l] = (unsigned char)(o >> l & 1 ? 2 : dec >> l & 1 ? dc : 0);
        }
    }
}
#endif

/* The vector decision where the processor has AVX2, unless EXACTREF_NO_SIMD is set (the tests compare
 * both paths). */
static int quick_simd(void)
{
#ifdef ER_HAVE_AVX2_QUICK
    return er_isa() >= ER_ISA_AVX2; /* host/er_isa.h */
#else
    return 0;
#endif
}

/* The AVX-512 versions where the processor has AVX-512F, BW and VL, unless EXACTREF_NO_AVX512 or
 * EXACTREF_NO_SIMD is set (then AVX2, or the scalar loops: the same bits, tested). */
static int quick_avx512(void)
{
#ifdef ER_HAVE_AVX512_QUICK
    return er_isa() >= ER_ISA_AVX512;
#else
    return 0;
#endif
}

#ifdef ER_HAVE_AVX2_QUICK
/* col_norms_add four columns at a time (the same operations: MAXPD(|x|, cm) is |x| > cm ? |x| : cm);
 * cnt a multiple of 4. */
__attribute__((target("avx2"))) static void col_norms_add_avx2(const double *x, int64_t cnt, double *c1, double *c2,
                                                               double *cm)
{
    const __m256d mag = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFll));
    for (int64_t j = 0; j < cnt; j += 4) {
        __m256d ax = _mm256_and_pd(_mm256_loadu_pd(x + j), mag);
        _mm256_storeu_pd(c1 + j, _mm256_add_pd(_mm256_loadu_pd(c1 + j), ax));
        _mm256_storeu_pd(c2 + j, _mm256_add_pd(_mm256_loadu_pd(c2 + j), _mm256_mul_pd(ax, ax)));
        _mm256_storeu_pd(cm + j, _mm256_max_pd(ax, _mm256_loadu_pd(cm + j)));
    }
}
#endif

/*
 * For rows [r0, r1) of batch b: S = A B (+ C) in binary64 (S: the rows of the block that starts at row
 * blk0, already computed by er_cpu_gemm_any in any order), where every product is exact (precisions
 * add up to at most 53 bits, exponents far inside the binary64 range) and so the only errors are the
 * k additions (k+1 with C): |S - exact| <= gamma * T with gamma = (k+1) u / (1 - (k+1) u), u = 2^-53,
 * and T >= sum of |terms|, for every order of addition, with or without fused multiply-add.
 * T is bounded from row and column norms (Cauchy-Schwarz and Hoelder), computed in binary64 and
 * inflated to cover their own rounding.  The element is decided when the two ends of the enclosure
 * [S - E, S + E], each moved one binary64 step outward, round to the same pattern: rounding is
 * monotone, so the exact value rounds to that pattern too.  The undecided elements are appended to
 * *list (column-major keys j m + i; drow is a row's scratch map); -1 when out of memory.
 */
/* Append the keys j m + i of row i's undecided elements (drow[j] == 0) to *list. */
static int append_undecided(const unsigned char *drow, int64_t n, int64_t i, int64_t m, int64_t **list, int64_t *cnt,
                            int64_t *cap)
{
    for (int64_t j = 0; j < n; j++) {
        if (drow[j]) continue;
        if (*cnt == *cap) {
            int64_t nc = *cap ? 2 * *cap : 256;
            int64_t *nl = (int64_t *)realloc(*list, sizeof **list * (size_t)nc);
            if (!nl) return -1;
            *list = nl;
            *cap = nc;
        }
        (*list)[(*cnt)++] = j * m + i; /* column-major key: sorting groups columns */
    }
    return 0;
}

/* Append key to *list. */
static int push_key(int64_t key, int64_t **list, int64_t *cnt, int64_t *cap)
{
    if (*cnt == *cap) {
        int64_t nc = *cap ? 2 * *cap : 256;
        int64_t *nl = (int64_t *)realloc(*list, sizeof **list * (size_t)nc);
        if (!nl) return -1;
        *list = nl;
        *cap = nc;
    }
    (*list)[(*cnt)++] = key;
    return 0;
}

/* The quick case's constants (fast_rows). */
typedef struct {
    int to, dir;
    unsigned opts;
    int bytes, sgn, sh;
    uint64_t half, off, mag;
} quick_fin;

/* Element (b, i, j) after the quick decision (code, the enclosure's ends X, Y, S's value si; orow: row
 * i of D, ds1 its element stride): 1 when decided (and stored), else 0. */
static int quick_finish(problem *P, int64_t b, int64_t i, int64_t j, unsigned char code, uint64_t X, uint64_t Y,
                        double si, unsigned char *orow, int64_t ds1, const quick_fin *f)
{
    if (code == 3) return 1; /* decided and stored by the vector loop */
    if (code == 1) {
        /* both ends normal and of one sign, rounding alike: decided */
        uint64_t mx_ = X & f->mag, rx = (mx_ + f->half + ((mx_ >> f->sh) & 1u)) >> f->sh;
        uint64_t pat = (X >> 63) << f->sgn | (rx - f->off);
        unsigned char *o = orow + (size_t)(j * ds1) * (size_t)f->bytes;
        if (f->bytes == 4) {
            uint32_t v = (uint32_t)pat;
            memcpy(o, &v, 4);
        } else {
            uint16_t v = (uint16_t)pat;
            memcpy(o, &v, 2);
        }
        return 1;
    }
    if (code == 0) return 0; /* both normal, rounding apart */
    if (!isfinite(si) || !isfinite(P->b_s1[j])) return 0;
    double lo = er_bits_to_double(X), hi = er_bits_to_double(Y);
    if (!isfinite(lo) || !isfinite(hi)) return 0;
    er_res rl = convert_from_f64(f->to, X, f->dir, f->opts);
    er_res rh = convert_from_f64(f->to, Y, f->dir, f->opts);
    if (rl.bits == rh.bits && !(rl.flags & ER_FLAG_INVALID) && er_decode(f->to, rl.bits).cls != ER_CLASS_NAN) {
        er_tensor_store(P->q.d, b, i, j, rl.bits, f->bytes);
        return 1;
    }
    return 0;
}

static int fast_rows(problem *P, int64_t b, int64_t r0, int64_t r1, int64_t blk0, const double *s,
                      unsigned char *drow, int64_t **list, int64_t *cnt, int64_t *cap)
{
    const er_mma_args *A = P->q.args;
    er_tensor *D = P->q.d;
    int64_t n = P->q.n, k = P->q.k;
    const double u = 0x1p-53;
    double kk = (double)(k + (P->q.has_c ? 1 : 0) + 1);
    /* gamma, rounded up generously: (kk u)(1 + 2^-20) >= kk u / (1 - kk u) for kk <= 2^25 */
    double gamma = kk * u * (1.0 + 0x1p-20);
    /* inflation of the computed norms and products: relative errors of at most (4k+32) 2^-52 */
    double infl = 1.0 + (4.0 * (double)k + 64.0) * 0x1p-52;
    int to = D->format, dir = A->rounding, bytes = er_storage_bytes(to);
    unsigned opts = A->opts;
    /* The common case (f32, bf16 or f16 out, nearest-even, no C) rounds both ends in integer arithmetic
     * where they lie in the output's normal range: there er_convert's answer is the binary64 pattern
     * rounded to nearest-even at the output's precision, whatever the options (saturation and flushing
     * act outside it), so the decision and the stored bits are er_convert's.  Everything else takes the
     * general code below. */
    int pb = to == ER_FMT_F32 ? 23 : to == ER_FMT_BF16 ? 7 : to == ER_FMT_F16 ? 10 : 0;
    int quick = pb > 0 && dir == ER_RND_NEAREST_EVEN && !P->q.has_c && !P->q.exact64;
    int sh = 52 - pb, sgn = 8 * bytes - 1;
    uint64_t emin = to == ER_FMT_F16 ? 1023 - 14 : 1023 - 126; /* biased binary64 exponent of the least normal */
    uint64_t emax = to == ER_FMT_F16 ? 1023 + 15 : 1023 + 127;
    uint64_t lo_lim = emin << 52, r_lim = (emax + 1) << pb, off = (emin - 1) << pb;
    uint64_t half = (UINT64_C(1) << (sh - 1)) - 1u, mag = ~(UINT64_C(1) << 63);
    int simd = quick ? P->simd : 0;
    quick_fin qf = {to, dir, opts, bytes, sgn, sh, half, off, mag};
    for (int64_t i = r0; i < r1; i++) {
        const double *srow = s + (i - blk0) * n;
        /* a row or column holding an infinity or NaN has a non-finite norm: nothing of it is decided
         * here, whatever the product's kernel did with those values */
        int row_ok = isfinite(P->a_s1[i]);
        if (quick && row_ok) {
            enum { RUN = 256 };
            uint64_t xs[RUN], ys[RUN];
            unsigned char code[RUN], ndm[RUN / 8];
            quick_par qp = {P->a_s1[i], P->a_mx[i], P->a_s2[i], infl, gamma, half, lo_lim, r_lim, off, sh};
            /* row i of D (er_tensor_store()'s addressing, hoisted out of the loop) */
            int64_t dsb = D->ndim == 3 ? D->strides[0] : 0, ds1 = D->strides[D->ndim - 1];
            unsigned char *orow = (unsigned char *)D->data + (size_t)(b * dsb + i * D->strides[D->ndim - 2]) * (size_t)bytes;
            for (int64_t j0 = 0; j0 < n; j0 += RUN) {
                int64_t rn = n - j0 < RUN ? n - j0 : RUN, v = 0;
                unsigned char *nd = NULL;
#ifdef ER_HAVE_AVX512_QUICK
                if (simd >= 2) {
                    v = rn & ~(int64_t)7;
                    nd = ndm;
                    quick_run_avx512(&qp, v, srow + j0, P->b_mx + j0, P->b_s1 + j0, P->b_s2 + j0, xs, ys, code, nd,
                                     ds1 == 1 ? orow + (size_t)bytes * (size_t)j0 : NULL, bytes);
                }
#endif
#ifdef ER_HAVE_AVX2_QUICK
                if (simd == 1) {
                    v = rn & ~(int64_t)3;
                    quick_run_avx2(&qp, v, srow + j0, P->b_mx + j0, P->b_s1 + j0, P->b_s2 + j0, xs, ys, code,
                                   bytes == 4 && ds1 == 1 ? orow + 4 * j0 : NULL);
                }
#endif
                quick_run(&qp, rn - v, srow + j0 + v, P->b_mx + j0 + v, P->b_s1 + j0 + v, P->b_s2 + j0 + v, xs + v,
                          ys + v, code + v);
                if (nd) {
                    /* AVX-512: only the elements the vector loop did not decide and store, from its masks
                     * (eight elements a group), their keys appended here directly */
                    for (int64_t g0 = 0; g0 < v; g0 += 8) {
                        unsigned mk = nd[g0 / 8];
                        while (mk) {
                            int l = __builtin_ctz(mk);
                            mk &= mk - 1u;
                            int64_t j = j0 + g0 + l;
                            if (!quick_finish(P, b, i, j, code[g0 + l], xs[g0 + l], ys[g0 + l], srow[j], orow, ds1, &qf) &&
                                push_key(j * P->q.m + i, list, cnt, cap) != 0)
                                return -1;
                        }
                    }
                    for (int64_t l = v; l < rn; l++) {
                        int64_t j = j0 + l;
                        if (!quick_finish(P, b, i, j, code[l], xs[l], ys[l], srow[j], orow, ds1, &qf) &&
                            push_key(j * P->q.m + i, list, cnt, cap) != 0)
                            return -1;
                    }
                    continue;
                }
                for (int64_t l = 0; l < rn; l++) {
                    int64_t j = j0 + l;
                    drow[j] = (unsigned char)quick_finish(P, b, i, j, code[l], xs[l], ys[l], srow[j], orow, ds1, &qf);
                }
            }
            if (simd >= 2) continue; /* the keys are in the list already */
            if (append_undecided(drow, n, i, P->q.m, list, cnt, cap) != 0) return -1;
            continue;
        }
        for (int64_t j = 0; j < n; j++) {
            double si = srow[j];
            double cval = 0.0;
            drow[j] = 0;
            if (P->q.has_c) {
                cval = er_bits_to_double(er_convert(P->q.c.fmt, ER_FMT_F64, er_view_load(&P->q.c, b, i, j), ER_RND_NEAREST_EVEN,
                                                 A->opts & ER_OPT_FTZ_IN).bits);
                si = si + cval;
            }
            if (!isfinite(si) || !row_ok || !isfinite(P->b_s1[j])) continue;
            if (P->q.exact64) {
                /* every partial sum is an integer below 2^53: exact in any order (docs/interval.md);
                 * a zero sum takes its sign from the terms, which only the accumulator tracks */
                if (si != 0) {
                    er_tensor_store(D, b, i, j, convert_from_f64(to, er_double_to_bits(si), dir, opts).bits, bytes);
                    drow[j] = 1;
                }
                continue;
            }
            double t1 = P->a_s1[i] * P->b_mx[j], t2 = P->a_mx[i] * P->b_s1[j], t = t1 < t2 ? t1 : t2;
            double t3 = P->a_s2[i] * P->b_s2[j]; /* the 2-norms (square roots taken once per row and column) */
            if (t3 < t) t = t3;
            t = (t + fabs(cval)) * infl;
            double e = gamma * t * (1.0 + 0x1p-50) + 0x1p-1070;
            double lo = er_b_down(si - e), hi = er_b_up(si + e); /* the core's outward steps */
            if (!isfinite(lo) || !isfinite(hi)) continue;
            er_res rl = convert_from_f64(to, er_double_to_bits(lo), dir, opts);
            er_res rh = convert_from_f64(to, er_double_to_bits(hi), dir, opts);
            /* NaN's preimage need not be an interval (FNUZ formats: both overflows; f8E8M0FNU: every
             * negative value), so a NaN at both ends decides nothing */
            if (rl.bits == rh.bits && !(rl.flags & ER_FLAG_INVALID) && er_decode(to, rl.bits).cls != ER_CLASS_NAN) {
                er_tensor_store(D, b, i, j, rl.bits, bytes);
                drow[j] = 1;
            }
        }
        if (append_undecided(drow, n, i, P->q.m, list, cnt, cap) != 0) return -1;
    }
    return 0;
}

/*
 * The second stage for an element the first left undecided (no C, not exact64; docs/exact-engine.md,
 * "Strategy 2", step 7): the k exact products summed in index order by TwoSum chains (Sum2 of Ogita,
 * Rump and Oishi, 2005): pi_p = fl(pi_(p-1) + x_p) with its exact error q_p, sigma = fl(sum of the q_p)
 * in order, res = fl(pi_k + sigma).  pi_k + sum q_p is the exact sum; sum |q_p| <= gamma_k S (the
 * local errors of a recursive sum, S = sum |x_p| <= t, the first stage's norm bound); sigma's own
 * error is at most gamma_k sum |q_p|; the last addition's at most u |res| (nearest).  So
 * |res - exact| <= u |res| + gamma_k^2 t, and E2 = (u |res| + gamma^2 t)(1 + 2^-48) + 2^-1070 covers
 * it with the roundings of its own evaluation (additions with subnormal results are exact).  Decided
 * as in the first stage: when [pred(res - E2), succ(res + E2)] rounds to one pattern (stored, returns
 * 1); else 0 and the element goes to the long accumulator.  When every q_p is zero, pi_k is the exact
 * sum itself (sigma = 0 and res = pi_k): a nonzero one is rounded once, as strategy 3 does.
 */
static int fast_sum2_applies(const problem *P, int64_t i, int64_t j)
{
    return !P->q.has_c && !P->q.exact64 && isfinite(P->a_s1[i]) && isfinite(P->b_s1[j]);
}

/* Sum2 of the k products ar[p] bc[p]: res, and whether any TwoSum error was nonzero. */
static void sum2(const double *ar, const double *bc, int64_t k, double *res, int *inexact)
{
    /* pi the running sum, sigma the sum of TwoSum's exact errors (the products are exact) */
    double pi = 0.0, sigma = 0.0;
    int in = 0;
    for (int64_t p = 0; p < k; p++) {
        double x = ar[p] * bc[p];
        double sum = pi + x, z = sum - pi;
        double q = (pi - (sum - z)) + (x - z);
        pi = sum;
        sigma = sigma + q;
        in |= q != 0;
    }
    *res = pi + sigma;
    *inexact = in;
}

/* Sum2 of L elements at once, a chunk of kc terms at a time, lane l the element whose operands are
 * ap[L p + l] and bp[L p + l]: each lane runs the scalar loop's operations in its order (the same
 * bits), its running pi, sigma and inexact bit carried in st (pi: st[0..L), sigma: st[L..2L), the
 * inexact bits: *in). */
#ifdef ER_HAVE_AVX2_QUICK
__attribute__((target("avx2"))) static void sum2_x4_run(const double *ap, const double *bp, int64_t kc, double *st,
                                                        unsigned *in_)
{
    __m256d pi = _mm256_loadu_pd(st), sigma = _mm256_loadu_pd(st + 4), in = _mm256_setzero_pd();
    const __m256d zero = _mm256_setzero_pd();
    for (int64_t p = 0; p < kc; p++) {
        __m256d x = _mm256_mul_pd(_mm256_loadu_pd(ap + 4 * p), _mm256_loadu_pd(bp + 4 * p));
        __m256d sum = _mm256_add_pd(pi, x), z = _mm256_sub_pd(sum, pi);
        __m256d q = _mm256_add_pd(_mm256_sub_pd(pi, _mm256_sub_pd(sum, z)), _mm256_sub_pd(x, z));
        pi = sum;
        sigma = _mm256_add_pd(sigma, q);
        in = _mm256_or_pd(in, _mm256_cmp_pd(q, zero, _CMP_NEQ_UQ));
    }
    _mm256_storeu_pd(st, pi);
    _mm256_storeu_pd(st + 4, sigma);
    *in_ |= (unsigned)_mm256_movemask_pd(in);
}
#endif
#ifdef ER_HAVE_AVX512_QUICK
/* The 8 x 8 block r[l][q] (row l: lane l's terms p .. p + 7) as c[q][l] (vector q: term p + q of the
 * eight lanes). */
__attribute__((target("avx512f"))) static inline void transpose8(const __m512d *r, __m512d *c)
{
    const __m512i ia = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), ib = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    __m512d t0 = _mm512_unpacklo_pd(r[0], r[1]), t1 = _mm512_unpackhi_pd(r[0], r[1]);
    __m512d t2 = _mm512_unpacklo_pd(r[2], r[3]), t3 = _mm512_unpackhi_pd(r[2], r[3]);
    __m512d t4 = _mm512_unpacklo_pd(r[4], r[5]), t5 = _mm512_unpackhi_pd(r[4], r[5]);
    __m512d t6 = _mm512_unpacklo_pd(r[6], r[7]), t7 = _mm512_unpackhi_pd(r[6], r[7]);
    /* u: lanes 0-3 of terms (q, q + 4) for rows 0-3, then rows 4-7 */
    __m512d u0 = _mm512_permutex2var_pd(t0, ia, t2), u1 = _mm512_permutex2var_pd(t0, ib, t2);
    __m512d u2 = _mm512_permutex2var_pd(t1, ia, t3), u3 = _mm512_permutex2var_pd(t1, ib, t3);
    __m512d u4 = _mm512_permutex2var_pd(t4, ia, t6), u5 = _mm512_permutex2var_pd(t4, ib, t6);
    __m512d u6 = _mm512_permutex2var_pd(t5, ia, t7), u7 = _mm512_permutex2var_pd(t5, ib, t7);
    c[0] = _mm512_shuffle_f64x2(u0, u4, 0x44);
    c[4] = _mm512_shuffle_f64x2(u0, u4, 0xEE);
    c[2] = _mm512_shuffle_f64x2(u1, u5, 0x44);
    c[6] = _mm512_shuffle_f64x2(u1, u5, 0xEE);
    c[1] = _mm512_shuffle_f64x2(u2, u6, 0x44);
    c[5] = _mm512_shuffle_f64x2(u2, u6, 0xEE);
    c[3] = _mm512_shuffle_f64x2(u3, u7, 0x44);
    c[7] = _mm512_shuffle_f64x2(u3, u7, 0xEE);
}

/* One step of the eight chains: the scalar loop's operations on each lane. */
#define ER_SUM2_STEP8(av, bv)                                                                                        \
    do {                                                                                                             \
        __m512d x_ = _mm512_mul_pd((av), (bv));                                                                      \
        __m512d sum_ = _mm512_add_pd(pi, x_), z_ = _mm512_sub_pd(sum_, pi);                                          \
        __m512d q_ = _mm512_add_pd(_mm512_sub_pd(pi, _mm512_sub_pd(sum_, z_)), _mm512_sub_pd(x_, z_));               \
        pi = sum_;                                                                                                   \
        sigma = _mm512_add_pd(sigma, q_);                                                                            \
        in = (__mmask8)(in | _mm512_cmp_pd_mask(q_, zero, _CMP_NEQ_UQ));                                             \
    } while (0)

/* Eight lanes of kc terms each, lane l's operands contiguous at la + l ld and lb + l ld. */
__attribute__((target("avx512f"))) static void sum2_x8_run(const double *la, const double *lb, int64_t ld, int64_t kc,
                                                           double *st, unsigned *in_)
{
    __m512d pi = _mm512_loadu_pd(st), sigma = _mm512_loadu_pd(st + 8);
    const __m512d zero = _mm512_setzero_pd();
    __mmask8 in = 0;
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        __m512d ra[8], rb[8], ca[8], cb[8];
        for (int l = 0; l < 8; l++) {
            ra[l] = _mm512_loadu_pd(la + l * ld + p);
            rb[l] = _mm512_loadu_pd(lb + l * ld + p);
        }
        transpose8(ra, ca);
        transpose8(rb, cb);
        for (int q = 0; q < 8; q++) ER_SUM2_STEP8(ca[q], cb[q]);
    }
    for (; p < kc; p++) {
        __m512d av = _mm512_setr_pd(la[p], la[ld + p], la[2 * ld + p], la[3 * ld + p], la[4 * ld + p], la[5 * ld + p],
                                    la[6 * ld + p], la[7 * ld + p]);
        __m512d bv = _mm512_setr_pd(lb[p], lb[ld + p], lb[2 * ld + p], lb[3 * ld + p], lb[4 * ld + p], lb[5 * ld + p],
                                    lb[6 * ld + p], lb[7 * ld + p]);
        ER_SUM2_STEP8(av, bv);
    }
    _mm512_storeu_pd(st, pi);
    _mm512_storeu_pd(st + 8, sigma);
    *in_ |= (unsigned)in;
}
#undef ER_SUM2_STEP8

/* decode16_strided's values for cnt contiguous patterns (dst contiguous), eight at a time, zeros
 * included (+0 and -0: the sign bit alone); 1 when a subnormal, infinite or NaN pattern was seen
 * (those are then left to the caller), else 0. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static int decode16_avx512(int sh, unsigned eshift,
                                                                               unsigned emask, uint64_t rebias,
                                                                               const unsigned char *src,
                                                                               int64_t cnt, double *dst)
{
    const __m512i em = _mm512_set1_epi64((long long)emask), s15 = _mm512_set1_epi64(0x8000),
                  f15 = _mm512_set1_epi64(0x7FFF), rb = _mm512_set1_epi64((long long)rebias), z = _mm512_setzero_si512();
    __mmask8 odd = 0;
    int64_t p = 0;
    for (; p + 8 <= cnt; p += 8) {
        if ((p & 31) == 0) _mm_prefetch((const char *)(src + 2 * p + 512), _MM_HINT_T0); /* a line ahead of need */
        __m512i w = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(src + 2 * p)));
        __m512i e = _mm512_and_si512(_mm512_srli_epi64(w, eshift), em), mg = _mm512_and_si512(w, f15);
        /* zeros are formed here too (the sign alone); subnormals, infinities and NaNs are not */
        __mmask8 zero = _mm512_cmpeq_epi64_mask(mg, z);
        odd = (__mmask8)(odd | (_mm512_cmpeq_epi64_mask(e, z) & ~zero) | _mm512_cmpeq_epi64_mask(e, em));
        __m512i bits = _mm512_maskz_add_epi64((__mmask8)~zero, _mm512_sll_epi64(mg, _mm_cvtsi32_si128(sh)), rb);
        bits = _mm512_or_si512(_mm512_slli_epi64(_mm512_and_si512(w, s15), 48), bits);
        _mm512_storeu_si512((void *)(dst + p), bits);
    }
    for (; p < cnt; p++) {
        uint16_t x;
        memcpy(&x, src + 2 * p, 2);
        unsigned e = (unsigned)(x >> eshift) & emask;
        uint64_t mg = x & 0x7FFFu;
        odd |= (e == 0 && mg != 0) || e == emask;
        dst[p] = er_bits_to_double(((uint64_t)(x & 0x8000u) << 48) | (mg ? (mg << sh) + rebias : 0));
    }
    return odd != 0;
}
#endif

/* Terms per chunk of the grouped second stage: 2 S2_KC L doubles of operands stay in L1. */
#define S2_KC 256

/* Lanes of the grouped second stage: 8 with AVX-512 (unless EXACTREF_NO_AVX512), 4 with AVX2, else 1
 * (the scalar loop); EXACTREF_NO_SIMD=1 keeps the scalar loop. */
static int sum2_lanes(const problem *P)
{
    return P->simd >= 2 ? 8 : P->simd == 1 ? 4 : 1;
}

/* cnt 16-bit patterns of fmt at src as binary64 into dst[0], dst[step], ...: a pattern of bf16 or f16
 * with a normal exponent by its bits (sign, exponent rebiased, fraction shifted: the exact value, as
 * the table holds it), anything else through the table tab (the table's values in every case). */
static void decode16_strided(int simd, int fmt, const double *tab, const unsigned char *src, int64_t cnt,
                             double *dst, int64_t step)
{
    int sh = fmt == ER_FMT_BF16 ? 45 : fmt == ER_FMT_F16 ? 42 : 0;
    if (!sh) {
        for (int64_t p = 0; p < cnt; p++) {
            uint16_t x;
            memcpy(&x, src + 2 * p, 2);
            dst[p * step] = tab[x];
        }
        return;
    }
    /* exponent field: bits 7..14 (bf16, bias 127) or 10..14 (f16, bias 15) */
    unsigned emask = fmt == ER_FMT_BF16 ? 0xFFu : 0x1Fu, eshift = fmt == ER_FMT_BF16 ? 7u : 10u;
    uint64_t rebias = (uint64_t)(fmt == ER_FMT_BF16 ? 1023 - 127 : 1023 - 15) << 52;
#ifdef ER_HAVE_AVX512_QUICK
    if (step == 1 && simd >= 2) {
        if (!decode16_avx512(sh, eshift, emask, rebias, src, cnt, dst)) return;
        /* a subnormal, infinite or NaN pattern: its value from the table */
        for (int64_t p = 0; p < cnt; p++) {
            uint16_t x;
            memcpy(&x, src + 2 * p, 2);
            unsigned e = (unsigned)(x >> eshift) & emask;
            if ((e == 0 && (x & 0x7FFFu)) || e == emask) dst[p] = tab[x];
        }
        return;
    }
#endif
    for (int64_t p = 0; p < cnt; p++) {
        uint16_t x;
        memcpy(&x, src + 2 * p, 2);
        unsigned e = (unsigned)(x >> eshift) & emask;
        if (e - 1u < emask - 1u) {
            uint64_t bits = ((uint64_t)(x & 0x8000u) << 48) | ((((uint64_t)(x & 0x7FFFu)) << sh) + rebias);
            dst[p * step] = er_bits_to_double(bits);
        } else {
            dst[p * step] = tab[x];
        }
    }
}

#ifdef ER_HAVE_AVX512_QUICK
/* cnt f8E4M3FN patterns at src as binary64 into dst, eight at a time: a normal pattern by its bits
 * (sign, exponent rebiased from 7, fraction shifted), a zero or subnormal one as its sign and m 2^-9
 * (m the fraction: a lookup in eight exact values); 1 when a NaN, or with ftz a subnormal, was seen
 * (those are then left to the caller), else 0. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static int decode8_e4m3_avx512(const unsigned char *src,
                                                                                   int64_t cnt, double *dst, int ftz)
{
    const __m512d sub = _mm512_setr_pd(0.0, 0x1p-9, 0x2p-9, 0x3p-9, 0x4p-9, 0x5p-9, 0x6p-9, 0x7p-9);
    const __m512i f7 = _mm512_set1_epi64(0x7F), e78 = _mm512_set1_epi64(0x78), s8 = _mm512_set1_epi64(0x80),
                  m7 = _mm512_set1_epi64(7), rb = _mm512_set1_epi64((long long)((uint64_t)(1023 - 7) << 52)),
                  z = _mm512_setzero_si512();
    __mmask8 odd = 0;
    int64_t p = 0;
    for (; p + 8 <= cnt; p += 8) {
        __m512i w = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(src + p)));
        __m512i mg = _mm512_and_si512(w, f7), sg = _mm512_slli_epi64(_mm512_and_si512(w, s8), 56);
        __mmask8 subn = _mm512_cmpeq_epi64_mask(_mm512_and_si512(w, e78), z);
        odd = (__mmask8)(odd | _mm512_cmpeq_epi64_mask(mg, f7));
        if (ftz) odd = (__mmask8)(odd | (subn & _mm512_cmpneq_epi64_mask(mg, z)));
        __m512i nb = _mm512_add_epi64(_mm512_slli_epi64(mg, 49), rb);
        __m512i sb = _mm512_castpd_si512(_mm512_permutexvar_pd(_mm512_and_si512(w, m7), sub));
        _mm512_storeu_si512((void *)(dst + p), _mm512_or_si512(sg, _mm512_mask_mov_epi64(nb, subn, sb)));
    }
    for (; p < cnt; p++) {
        unsigned x = src[p], mg = x & 0x7Fu;
        odd |= mg == 0x7Fu || (ftz && mg != 0 && mg < 8u);
        double v = mg < 8u ? (double)mg * 0x1p-9 : er_bits_to_double(((uint64_t)mg << 49) + ((uint64_t)(1023 - 7) << 52));
        dst[p] = x & 0x80u ? -v : v;
    }
    return odd != 0;
}
#endif

/* cnt 8-bit patterns of fmt at src as binary64 into dst (contiguous): the table's values (tab, for
 * FTZ_IN as ftz says); f8E4M3FN with AVX-512 from the bits, eight at a time. */
static void decode8_row(int simd, int fmt, const double *tab, const unsigned char *src, int64_t cnt, double *dst,
                        int ftz)
{
#ifdef ER_HAVE_AVX512_QUICK
    if (simd >= 2 && fmt == ER_FMT_F8E4M3FN) {
        if (!decode8_e4m3_avx512(src, cnt, dst, ftz)) return;
        for (int64_t p = 0; p < cnt; p++) {
            unsigned mg = src[p] & 0x7Fu;
            if (mg == 0x7Fu || (ftz && mg != 0 && mg < 8u)) dst[p] = tab[src[p]];
        }
        return;
    }
#endif
    (void)simd;
    (void)fmt;
    (void)ftz;
    for (int64_t p = 0; p < cnt; p++) dst[p] = tab[src[p]];
}

/* Column j of B' (k values) from B's patterns by columns, through the decode table. */
static void bt_column(int simd, const unsigned char *bt, const double *tab, int fmt, int bytes, int64_t j, int64_t k,
                      double *col)
{
    const unsigned char *c = bt + (size_t)(j * k) * (size_t)bytes;
    if (bytes == 1) {
        for (int64_t p = 0; p < k; p++) col[p] = tab[c[p]];
    } else {
        decode16_strided(simd, fmt, tab, c, k, col, 1);
    }
}

/* The second stages of g <= L elements (gi[l], gj[l]) of batch b at once (L = 4 or 8): lane l < g the
 * element's row of A' (A's patterns through the table taba where its binary64 copy came from them,
 * else the block's copy, which starts at row blk0) and its column of B' (B's patterns by columns
 * through the table tab), lanes past g zero; res[l], inexact[l] as sum2 gives
 * them. */
static void sum2_group(const problem *P, int64_t b, int64_t blk0, const unsigned char *bt, const double *tab,
                       const double *taba, const int64_t *gi, const int64_t *gj, int g, int L, double *buf, double *res, int *inexact)
{
    int64_t k = P->q.k;
    int by = P->q.b.bytes;
    double st[16] = {0};
    unsigned in = 0;
    double *ap = buf, *bp = buf + (size_t)S2_KC * (size_t)L;
#ifdef ER_HAVE_AVX512_QUICK
    if (L == 8) {
        /* lane l's operands contiguous at ap + l S2_KC and bp + l S2_KC, transposed in registers */
        int ftz = (P->q.args->opts & ER_OPT_FTZ_IN) != 0;
        for (int l = g; l < 8; l++)
            for (int64_t p = 0; p < S2_KC; p++) ap[l * S2_KC + p] = bp[l * S2_KC + p] = 0.0;
        for (int64_t p0 = 0; p0 < k; p0 += S2_KC) {
            int64_t kc = k - p0 < S2_KC ? k - p0 : S2_KC;
            for (int l = 0; l < g; l++) {
                double *da = ap + l * S2_KC, *db = bp + l * S2_KC;
                const unsigned char *c = bt + (size_t)(gj[l] * k + p0) * (size_t)by;
                if (taba) {
                    const unsigned char *ra =
                        P->q.a.data + (size_t)(b * P->q.a.sb + gi[l] * P->q.a.s0 + p0) * (size_t)P->q.a.bytes;
                    if (P->q.a.bytes == 1) {
                        decode8_row(P->simd, P->q.a.fmt, taba, ra, kc, da, ftz);
                    } else {
                        decode16_strided(P->simd, P->q.a.fmt, taba, ra, kc, da, 1);
                    }
                } else {
                    memcpy(da, P->af + (gi[l] - blk0) * k + p0, sizeof(double) * (size_t)kc);
                }
                if (by == 1) {
                    decode8_row(P->simd, P->q.b.fmt, tab, c, kc, db, ftz);
                } else {
                    decode16_strided(P->simd, P->q.b.fmt, tab, c, kc, db, 1);
                }
            }
            sum2_x8_run(ap, bp, S2_KC, kc, st, &in);
        }
        for (int l = 0; l < g; l++) {
            res[l] = st[l] + st[8 + l];
            inexact[l] = (int)(in >> l & 1u);
        }
        return;
    }
#endif
    for (int64_t p0 = 0; p0 < k; p0 += S2_KC) {
        int64_t kc = k - p0 < S2_KC ? k - p0 : S2_KC;
        for (int l = 0; l < L; l++) {
            if (l >= g) {
                for (int64_t p = 0; p < kc; p++) ap[L * p + l] = bp[L * p + l] = 0.0;
                continue;
            }
            const unsigned char *c = bt + (size_t)(gj[l] * k + p0) * (size_t)by;
            if (taba) {
                /* A's row from its patterns (the values of af: a quarter of the memory traffic for
                 * 16-bit formats, an eighth for 8-bit ones) */
                const unsigned char *ra = P->q.a.data + (size_t)(b * P->q.a.sb + gi[l] * P->q.a.s0 + p0) * (size_t)P->q.a.bytes;
                if (P->q.a.bytes == 1) {
                    for (int64_t p = 0; p < kc; p++) ap[L * p + l] = taba[ra[p]];
                } else {
                    decode16_strided(P->simd, P->q.a.fmt, taba, ra, kc, ap + l, L);
                }
            } else {
                const double *ar = P->af + (gi[l] - blk0) * k + p0;
                for (int64_t p = 0; p < kc; p++) ap[L * p + l] = ar[p];
            }
            if (by == 1) {
                for (int64_t p = 0; p < kc; p++) bp[L * p + l] = tab[c[p]];
            } else {
                decode16_strided(P->simd, P->q.b.fmt, tab, c, kc, bp + l, L);
            }
        }
#ifdef ER_HAVE_AVX2_QUICK
        if (L == 4) sum2_x4_run(ap, bp, kc, st, &in);
#endif
    }
    for (int l = 0; l < g; l++) {
        res[l] = st[l] + st[L + l];
        inexact[l] = (int)(in >> l & 1u);
    }
}

/* Decide element (b, i, j) from its Sum2 result (fast_sum2_applies holds): stored, 1; else 0. */
static int fast_sum2_finish(problem *P, int64_t b, int64_t i, int64_t j, double res, int inexact)
{
    er_tensor *D = P->q.d;
    int64_t k = P->q.k;
    const double u = 0x1p-53;
    double kk = (double)(k + 1);
    double gamma = kk * u * (1.0 + 0x1p-20); /* >= gamma_(k+1) for k + 1 <= 2^25, as in the first stage */
    double infl = 1.0 + (4.0 * (double)k + 64.0) * 0x1p-52;
    /* the first stage's bound t >= sum |a_p b_p|, the same operations */
    double t1 = P->a_s1[i] * P->b_mx[j], t2 = P->a_mx[i] * P->b_s1[j], t = t1 < t2 ? t1 : t2;
    double t3 = P->a_s2[i] * P->b_s2[j];
    if (t3 < t) t = t3;
    t = (t + 0.0) * infl;
    if (!isfinite(res) || res == 0) return 0; /* a zero sum's sign comes from the terms */
    int to = D->format, dir = P->q.args->rounding;
    unsigned opts = P->q.args->opts;
    if (!inexact) {
        /* every error was zero: pi_k (= res) is the exact sum, rounded once here (midpoints included) */
        er_tensor_store(D, b, i, j, convert_from_f64(to, er_double_to_bits(res), dir, opts).bits, er_storage_bytes(to));
        return 1;
    }
    double e = (u * fabs(res) + gamma * gamma * t) * (1.0 + 0x1p-48) + 0x1p-1070;
    double lo = er_b_down(res - e), hi = er_b_up(res + e);
    if (!isfinite(lo) || !isfinite(hi)) return 0;
    er_res rl = convert_from_f64(to, er_double_to_bits(lo), dir, opts);
    er_res rh = convert_from_f64(to, er_double_to_bits(hi), dir, opts);
    if (rl.bits == rh.bits && !(rl.flags & ER_FLAG_INVALID) && er_decode(to, rl.bits).cls != ER_CLASS_NAN) {
        er_tensor_store(D, b, i, j, rl.bits, er_storage_bytes(to));
        return 1;
    }
    return 0;
}

/* The binary64 value of every pattern of a format stored in one or two bytes, as er_convert gives it
 * (so a lookup is the conversion, bit for bit), per FTZ_IN: built once per process on first use
 * (65536 conversions at most), NULL for wider formats or without memory. */
static pthread_mutex_t decode_lock = PTHREAD_MUTEX_INITIALIZER;
static double *decode_tab[ER_FMT_COUNT][2];

static const double *decode_table(int fmt, int ftz)
{
    int bytes = er_storage_bytes(fmt);
    double *t;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || bytes > 2) return NULL;
    pthread_mutex_lock(&decode_lock);
    t = decode_tab[fmt][ftz != 0];
    if (!t) {
        size_t cnt = (size_t)1 << (8 * bytes);
        t = (double *)malloc(sizeof(double) * cnt);
        if (t) {
            for (size_t x = 0; x < cnt; x++)
                t[x] = er_bits_to_double(er_convert(fmt, ER_FMT_F64, x, ER_RND_NEAREST_EVEN, ftz ? ER_OPT_FTZ_IN : 0u).bits);
            decode_tab[fmt][ftz != 0] = t;
        }
    }
    pthread_mutex_unlock(&decode_lock);
    return t;
}

/* cnt contiguous patterns of fmt (bytes each) at src as binary64 into dst: the table where there is
 * one, else the core's array conversion (the same values). */
static void decode_row(int simd, const double *tab, int fmt, int bytes, const unsigned char *src, double *dst,
                       int64_t cnt, unsigned ftz)
{
    if (tab && bytes == 1) {
        decode8_row(simd, fmt, tab, src, cnt, dst, ftz != 0);
    } else if (tab && bytes == 2 && simd >= 2) {
        decode16_strided(simd, fmt, tab, src, cnt, dst, 1); /* bf16, f16: from the bits, eight at a time */
    } else if (tab && bytes == 2) {
        for (int64_t p = 0; p < cnt; p++) {
            uint16_t x;
            memcpy(&x, src + 2 * p, 2);
            dst[p] = tab[x];
        }
    } else {
        er_cpu_convert_array(fmt, ER_FMT_F64, src, dst, (size_t)cnt, ER_RND_NEAREST_EVEN, ftz, NULL, NULL);
    }
}

/* The norms of a row of A': sum |x|, max |x| and sum x^2, each in four interleaved partial sums
 * (independent chains; any order of these non-negative sums is covered by the bound, step 3 of
 * docs/exact-engine.md); a NaN is skipped by the maximum and makes the sums NaN. */
#ifdef ER_HAVE_AVX512_QUICK
/* The same with eight interleaved partial sums (MAXPD(|x|, m) is |x| > m ? |x| : m). */
__attribute__((target("avx512f"))) static void row_norms_avx512(const double *x, int64_t cnt, double *s1o,
                                                                double *mxo, double *s2o)
{
    const __m512i mag = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    __m512d a1 = _mm512_setzero_pd(), a2 = _mm512_setzero_pd(), m = _mm512_setzero_pd();
    int64_t p = 0;
    for (; p + 8 <= cnt; p += 8) {
        __m512d ax = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(_mm512_loadu_pd(x + p)), mag));
        a1 = _mm512_add_pd(a1, ax);
        a2 = _mm512_add_pd(a2, _mm512_mul_pd(ax, ax));
        m = _mm512_max_pd(ax, m);
    }
    double l1[8], l2[8], lm[8];
    _mm512_storeu_pd(l1, a1);
    _mm512_storeu_pd(l2, a2);
    _mm512_storeu_pd(lm, m);
    for (; p < cnt; p++) {
        double ax = fabs(x[p]);
        l1[0] += ax;
        l2[0] += ax * ax;
        if (ax > lm[0]) lm[0] = ax;
    }
    for (int l = 1; l < 8; l++)
        if (lm[l] > lm[0]) lm[0] = lm[l];
    *s1o = ((l1[0] + l1[1]) + (l1[2] + l1[3])) + ((l1[4] + l1[5]) + (l1[6] + l1[7]));
    *s2o = ((l2[0] + l2[1]) + (l2[2] + l2[3])) + ((l2[4] + l2[5]) + (l2[6] + l2[7]));
    *mxo = lm[0];
}

/* col_norms_add eight columns at a time; cnt a multiple of 8. */
__attribute__((target("avx512f"))) static void col_norms_add_avx512(const double *x, int64_t cnt, double *c1,
                                                                    double *c2, double *cm)
{
    const __m512i mag = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    for (int64_t j = 0; j < cnt; j += 8) {
        __m512d ax = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(_mm512_loadu_pd(x + j)), mag));
        _mm512_storeu_pd(c1 + j, _mm512_add_pd(_mm512_loadu_pd(c1 + j), ax));
        _mm512_storeu_pd(c2 + j, _mm512_add_pd(_mm512_loadu_pd(c2 + j), _mm512_mul_pd(ax, ax)));
        _mm512_storeu_pd(cm + j, _mm512_max_pd(ax, _mm512_loadu_pd(cm + j)));
    }
}
#endif

static void row_norms(const double *x, int64_t cnt, double *s1o, double *mxo, double *s2o)
{
    double a1[4] = {0, 0, 0, 0}, a2[4] = {0, 0, 0, 0}, m[4] = {0, 0, 0, 0};
    int64_t p = 0;
    for (; p + 4 <= cnt; p += 4)
        for (int l = 0; l < 4; l++) {
            double ax = fabs(x[p + l]);
            a1[l] += ax;
            a2[l] += ax * ax;
            if (ax > m[l]) m[l] = ax;
        }
    for (; p < cnt; p++) {
        double ax = fabs(x[p]);
        a1[0] += ax;
        a2[0] += ax * ax;
        if (ax > m[0]) m[0] = ax;
    }
    for (int l = 1; l < 4; l++)
        if (m[l] > m[0]) m[0] = m[l];
    *s1o = (a1[0] + a1[1]) + (a1[2] + a1[3]);
    *s2o = (a2[0] + a2[1]) + (a2[2] + a2[3]);
    *mxo = m[0];
}

/* One row of B' into the running column norms: c1 += |x|, c2 += x^2, cm = max(cm, |x|) element by
 * element (a NaN leaves the maximum). */
static void col_norms_add(int simd, const double *x, int64_t cnt, double *c1, double *c2, double *cm)
{
    int64_t j = 0;
#ifdef ER_HAVE_AVX512_QUICK
    if (simd >= 2) {
        j = cnt & ~(int64_t)7;
        col_norms_add_avx512(x, j, c1, c2, cm);
    } else
#endif
#ifdef ER_HAVE_AVX2_QUICK
    if (simd >= 1) {
        j = cnt & ~(int64_t)3;
        col_norms_add_avx2(x, j, c1, c2, cm);
    }
#endif
    for (; j < cnt; j++) {
        double ax = fabs(x[j]);
        c1[j] += ax;
        c2[j] += ax * ax;
        if (ax > cm[j]) cm[j] = ax;
    }
}

#ifdef ER_HAVE_AVX2_QUICK
/* The 8 x 8 block of 16-bit values at src (rows sstride bytes apart) transposed to dst (rows dstride
 * bytes apart): dst row c, element r = src row r, element c (SSE2, part of x86-64). */
static void transpose8x8_16(const unsigned char *src, int64_t sstride, unsigned char *dst, int64_t dstride)
{
    __m128i r[8], a[8], c[8];
    for (int q = 0; q < 8; q++) r[q] = _mm_loadu_si128((const __m128i *)(src + q * sstride));
    for (int q = 0; q < 4; q++) {
        a[2 * q] = _mm_unpacklo_epi16(r[2 * q], r[2 * q + 1]);     /* r0c0 r1c0 r0c1 r1c1 r0c2 .. r1c3 */
        a[2 * q + 1] = _mm_unpackhi_epi16(r[2 * q], r[2 * q + 1]); /* columns 4..7 */
    }
    /* a[0]: rows 0,1 cols 0-3; a[1]: rows 0,1 cols 4-7; a[2], a[3]: rows 2,3; ... */
    __m128i b0 = _mm_unpacklo_epi32(a[0], a[2]), b1 = _mm_unpackhi_epi32(a[0], a[2]); /* rows 0-3: cols 0,1 | 2,3 */
    __m128i b2 = _mm_unpacklo_epi32(a[1], a[3]), b3 = _mm_unpackhi_epi32(a[1], a[3]); /* rows 0-3: cols 4,5 | 6,7 */
    __m128i b4 = _mm_unpacklo_epi32(a[4], a[6]), b5 = _mm_unpackhi_epi32(a[4], a[6]); /* rows 4-7 */
    __m128i b6 = _mm_unpacklo_epi32(a[5], a[7]), b7 = _mm_unpackhi_epi32(a[5], a[7]);
    c[0] = _mm_unpacklo_epi64(b0, b4);
    c[1] = _mm_unpackhi_epi64(b0, b4);
    c[2] = _mm_unpacklo_epi64(b1, b5);
    c[3] = _mm_unpackhi_epi64(b1, b5);
    c[4] = _mm_unpacklo_epi64(b2, b6);
    c[5] = _mm_unpackhi_epi64(b2, b6);
    c[6] = _mm_unpacklo_epi64(b3, b7);
    c[7] = _mm_unpackhi_epi64(b3, b7);
    for (int q = 0; q < 8; q++) _mm_storeu_si128((__m128i *)(dst + q * dstride), c[q]);
}
#endif

#ifdef ER_HAVE_AVX2_QUICK
/* The same for 8-bit values: dst row c, byte r = src row r, byte c. */
static void transpose8x8_8(const unsigned char *src, int64_t sstride, unsigned char *dst, int64_t dstride)
{
    __m128i r[8];
    for (int q = 0; q < 8; q++) r[q] = _mm_loadl_epi64((const __m128i *)(src + q * sstride));
    __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]); /* rows 0,1 | 2,3: cols 0-7 */
    __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
    __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1); /* rows 0-3: cols 0-3 | 4-7 */
    __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3); /* rows 4-7 */
    __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2), /* cols 0,1 | 2,3 */
                    _mm_unpacklo_epi32(b1, b3), _mm_unpackhi_epi32(b1, b3)}; /* cols 4,5 | 6,7 */
    for (int q = 0; q < 4; q++) {
        _mm_storel_epi64((__m128i *)(dst + (2 * q) * dstride), c[q]);
        _mm_storel_epi64((__m128i *)(dst + (2 * q + 1) * dstride), _mm_srli_si128(c[q], 8));
    }
}
#endif

/* Binary64 copies of batch b's operands (scales applied, exactly) and their norms, for rows
 * [r0, r1) of A (into the block's copy, which starts at row blk0) and rows [q0, q1) of B; the column
 * norms of B are summed per thread into cs. */
static void fast_prepare_part(problem *P, int64_t b, int64_t r0, int64_t r1, int64_t blk0, int64_t q0, int64_t q1,
                              double *cs, unsigned char *bt, int *int_a, int *int_b)
{
    int in = 1; /* every value seen is an integer (strategy 3's test, as docs/interval.md's summary) */
    int64_t n = P->q.n, k = P->q.k;
    /* rows whose elements are adjacent (a row stride of its own: a tile's view of a wider matrix) */
    int contiguous_a = !P->q.scaled && P->q.a.s1 == 1;
    int contiguous_b = !P->q.scaled && P->q.b.s1 == 1;
    unsigned ftz = P->q.args->opts & ER_OPT_FTZ_IN;
    const double *ta = contiguous_a && r1 > r0 ? decode_table(P->q.a.fmt, ftz != 0) : NULL;
    const double *tb = contiguous_b && q1 > q0 ? decode_table(P->q.b.fmt, ftz != 0) : NULL;
    for (int64_t i = r0; i < r1; i++) {
        double *row = P->af + (i - blk0) * k;
        double s1 = 0, mx = 0, s2 = 0;
        int rin = 1;
        if (contiguous_a) {
            decode_row(P->simd, ta, P->q.a.fmt, P->q.a.bytes, P->q.a.data + (size_t)(b * P->q.a.sb + i * P->q.a.s0) * (size_t)P->q.a.bytes,
                       row, k, ftz);
        } else {
            for (int64_t p = 0; p < k; p++) row[p] = er_val_to_double(a_val(&P->q, b, i, p));
        }
#ifdef ER_HAVE_AVX512_QUICK
        if (P->simd >= 2) row_norms_avx512(row, k, &s1, &mx, &s2);
        else
#endif
            row_norms(row, k, &s1, &mx, &s2);
        /* below 2^62 the int64 cast is defined; every binary64 at or above 2^53 is an integer; a NaN
         * is not one (tested only while every value so far was an integer) */
        for (int64_t p = 0; p < k && in && rin; p++) {
            double ax = fabs(row[p]);
            rin &= ax < 0x1p62 ? (double)(int64_t)ax == ax : ax == ax;
        }
        P->a_s1[i] = s1; P->a_mx[i] = mx; P->a_s2[i] = sqrt(s2); /* |a|_2 */
        in &= rin;
    }
    *int_a = in;
    in = 1;
    double *c1 = cs, *cm = cs + n, *c2 = cs + 2 * n;
    for (int64_t j = 0; j < n; j++) { c1[j] = 0; cm[j] = 0; c2[j] = 0; }
    for (int64_t p = q0; p < q1; p++) {
        double *row = P->bf + p * n;
        if (contiguous_b) {
            decode_row(P->simd, tb, P->q.b.fmt, P->q.b.bytes, P->q.b.data + (size_t)(b * P->q.b.sb + p * P->q.b.s0) * (size_t)P->q.b.bytes,
                       row, n, ftz);
        } else {
            for (int64_t j = 0; j < n; j++) row[j] = er_val_to_double(b_val(&P->q, b, p, j));
        }
        int rin = 1;
        col_norms_add(P->simd, row, n, c1, c2, cm);
        for (int64_t j = 0; j < n && in && rin; j++) {
            double ax = fabs(row[j]);
            rin &= ax < 0x1p62 ? (double)(int64_t)ax == ax : ax == ax;
        }
        in &= rin;
    }
    *int_b = in;
    if (bt && tb) {
        /* B's patterns by columns (tiles of 64 x 64), for the exact path: an undecided element reads its
         * column contiguously (gathering it from B's rows cost a cache miss per term) */
        int by = P->q.b.bytes;
        int64_t ls = P->q.b.s0; /* B's row stride (n, or more for a view of a wider matrix) */
        const unsigned char *src = P->q.b.data + (size_t)(b * P->q.b.sb) * (size_t)by;
        for (int64_t p0 = q0; p0 < q1; p0 += 64)
            for (int64_t j0 = 0; j0 < n; j0 += 64) {
                int64_t p1 = q1 - p0 < 64 ? q1 : p0 + 64, j1 = n - j0 < 64 ? n : j0 + 64;
#ifdef ER_HAVE_AVX2_QUICK
                if (p1 - p0 == 64 && j1 - j0 == 64) {
                    /* a full tile: 8 x 8 blocks of patterns transposed in registers */
                    for (int64_t pp = p0; pp < p1; pp += 8)
                        for (int64_t jj = j0; jj < j1; jj += 8) {
                            if (by == 2) transpose8x8_16(src + 2 * (pp * ls + jj), 2 * ls, bt + 2 * (jj * k + pp), 2 * k);
                            else transpose8x8_8(src + pp * ls + jj, ls, bt + jj * k + pp, k);
                        }
                    continue;
                }
#endif
                for (int64_t j = j0; j < j1; j++) {
                    if (by == 1) {
                        for (int64_t p = p0; p < p1; p++) bt[j * k + p] = src[p * ls + j];
                    } else {
                        for (int64_t p = p0; p < p1; p++) memcpy(bt + 2 * (j * k + p), src + 2 * (p * ls + j), 2);
                    }
                }
            }
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* mmai                                                                                               */

static void mmai_element(problem *P, int64_t b, int64_t i, int64_t j, int64_t *wrapped)
{
    /* the shared core's integer sum (include/exactref/core/er_mma.h), over the tensors' strides */
    const er_view *A = &P->q.a, *B = &P->q.b;
    int64_t s = er_mma_sum_int_any(A->fmt, B->fmt, A->data, b * A->sb + i * A->s0, A->s1, B->data, b * B->sb + j * B->s1,
                                   B->s0, P->q.k); /* |s| < 2^24 * 2^16: exact in 64 bits */
    if (P->q.has_c) s += er_mma_int_val(P->q.c.fmt, er_view_load(&P->q.c, b, i, j));
    if (s < INT32_MIN || s > INT32_MAX) (*wrapped)++;
    if (P->q.d) er_tensor_store(P->q.d, b, i, j, (uint64_t)s & 0xFFFFFFFFu, 4);
}

/* ------------------------------------------------------------------------------------------------ */
/* Workers: thread t owns a fixed range of rows of every batch, so results never depend on threads.  */

typedef struct {
    problem *P;
    int phase; /* 0: prepare the fast path's copies, 1: compute */
    int64_t b, r0, r1, q0, q1, blk0; /* rows [r0, r1) of the block of rows that starts at blk0 */
    double *s, *cs;
    unsigned char *bt;           /* B's patterns by columns, or NULL */
    int int_a, int_b;            /* phase 0: every value of the rows of A, of B, prepared is an integer */
    double *ab4;                 /* phase 1: the grouped second stage's chunk of operands, or NULL */
    int64_t fast_decided, exact_f64, exact_path, wrapped;
    int failed;
} work;

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static void *worker(void *arg)
{
    work *w = (work *)arg;
    problem *P = w->P;
    er_acc *acc = NULL, *tmp = NULL;
    double *col = NULL;
    if (w->phase == 0) {
        fast_prepare_part(P, w->b, w->r0, w->r1, w->blk0, w->q0, w->q1, w->cs, w->bt, &w->int_a, &w->int_b);
        return NULL;
    }
    if (P->q.kind) {
        for (int64_t i = w->r0; i < w->r1; i++) {
            for (int64_t j = 0; j < P->q.n; j++) mmai_element(P, w->b, i, j, &w->wrapped);
            er_progress_add(P->q.progress, P->q.n);
        }
        return NULL;
    }
    acc = (er_acc *)malloc(sizeof *acc);
    tmp = (er_acc *)malloc(sizeof *tmp);
    if (P->q.fast) col = (double *)malloc(sizeof(double) * (size_t)(P->q.k ? P->q.k : 1));
    if (!acc || !tmp || (P->q.fast && !col)) {
        w->failed = 1;
        free(acc);
        free(tmp);
        free(col);
        return NULL;
    }
    if (!P->q.fast) {
        for (int64_t i = w->r0; i < w->r1; i++)
            for (int64_t j = 0; j < P->q.n; j++) {
                exact_element(P, w->b, i, j, NULL, NULL, acc, tmp);
                w->exact_path++;
                if (j + 1 == P->q.n) er_progress_add(P->q.progress, P->q.n);
            }
    } else {
        /* The undecided elements (a row-major scan), sorted by column: column j of B is gathered
         * once for all of them, so the accumulator reads both operands contiguously. */
        int64_t cap = 0, cnt = 0;
        int64_t *list = NULL;
        unsigned char *drow = (unsigned char *)malloc((size_t)P->q.n);
        if (!drow || fast_rows(P, w->b, w->r0, w->r1, w->blk0, w->s, drow, &list, &cnt, &cap) != 0) {
            w->failed = 1;
            free(drow);
            free(list);
            free(acc);
            free(tmp);
            free(col);
            return NULL;
        }
        free(drow);
        if (cnt) qsort(list, (size_t)cnt, sizeof *list, cmp_i64);
        if (P->q.exact64) w->exact_f64 += (w->r1 - w->r0) * P->q.n - cnt;
        else w->fast_decided += (w->r1 - w->r0) * P->q.n - cnt;
        er_progress_add(P->q.progress, (w->r1 - w->r0) * P->q.n - cnt);
        const double *tab = w->bt ? decode_table(P->q.b.fmt, (P->q.args->opts & ER_OPT_FTZ_IN) != 0) : NULL;
        int64_t k = P->q.k, colj = -1; /* the column of B in col */
        /* the second stages of up to L elements at once (L = 8 with AVX-512, 4 with AVX2), their rows
         * of A' and columns of B' interleaved a chunk of S2_KC terms at a time (in L1) */
        int L = tab ? sum2_lanes(P) : 1;
        /* A's patterns through the table where its binary64 copy came from them (fast_prepare_part) */
        const double *taba = L > 1 && !P->q.scaled && P->q.a.s1 == 1
                                 ? decode_table(P->q.a.fmt, (P->q.args->opts & ER_OPT_FTZ_IN) != 0)
                                 : NULL;
        w->ab4 = L > 1 ? (double *)malloc(sizeof(double) * 2 * S2_KC * (size_t)L) : NULL;
        if (!w->ab4) L = 1;
        for (int64_t t = 0; t < cnt;) {
            if (L > 1) {
                int64_t gi[8], gj[8];
                int g = 0;
                while (t < cnt && g < L) {
                    int64_t j = list[t] / P->q.m, i = list[t] % P->q.m;
                    if (!fast_sum2_applies(P, i, j)) break;
                    gi[g] = i;
                    gj[g] = j;
                    g++;
                    t++;
                }
                if (g > 0) {
                    double res[8];
                    int inexact[8];
#ifdef ER_HAVE_AVX2_QUICK
                    /* the next group's first chunk of operands on its way while this group runs (their
                     * first reads would otherwise wait on memory one after another) */
                    for (int64_t u = t; u < t + L && u < cnt && taba; u++) {
                        int64_t j = list[u] / P->q.m, i = list[u] % P->q.m;
                        const char *ra = (const char *)P->q.a.data + (size_t)(w->b * P->q.a.sb + i * P->q.a.s0) * (size_t)P->q.a.bytes;
                        const char *cb = (const char *)w->bt + (size_t)(j * k) * (size_t)P->q.b.bytes;
                        for (int64_t o = 0; o < S2_KC * P->q.a.bytes && o < k * P->q.a.bytes; o += 64) _mm_prefetch(ra + o, _MM_HINT_T0);
                        for (int64_t o = 0; o < S2_KC * P->q.b.bytes && o < k * P->q.b.bytes; o += 64) _mm_prefetch(cb + o, _MM_HINT_T0);
                    }
#endif
                    sum2_group(P, w->b, w->blk0, w->bt, tab, taba, gi, gj, g, L, w->ab4, res, inexact);
                    for (int l = 0; l < g; l++) {
                        if (fast_sum2_finish(P, w->b, gi[l], gj[l], res[l], inexact[l])) {
                            w->fast_decided++;
                            continue;
                        }
                        bt_column(P->simd, w->bt, tab, P->q.b.fmt, P->q.b.bytes, gj[l], k, col);
                        colj = gj[l];
                        exact_element(P, w->b, gi[l], gj[l], P->af + (gi[l] - w->blk0) * k, col, acc, tmp);
                        w->exact_path++;
                    }
                    continue;
                }
            }
            int64_t j = list[t] / P->q.m, i = list[t] % P->q.m;
            t++;
            if (colj != j && tab) {
                bt_column(P->simd, w->bt, tab, P->q.b.fmt, P->q.b.bytes, j, k, col);
            } else if (colj != j) {
                for (int64_t p = 0; p < k; p++) col[p] = P->bf[p * P->q.n + j];
            }
            colj = j;
            const double *ar = P->af + (i - w->blk0) * k;
            if (fast_sum2_applies(P, i, j)) {
                double res;
                int inexact;
                sum2(ar, col, k, &res, &inexact);
                if (fast_sum2_finish(P, w->b, i, j, res, inexact)) {
                    w->fast_decided++;
                    continue;
                }
            }
            exact_element(P, w->b, i, j, ar, col, acc, tmp);
            w->exact_path++;
        }
        er_progress_add(P->q.progress, cnt); /* the undecided elements: few, reported together */
        free(list);
        free(w->ab4);
        w->ab4 = NULL;
    }
    free(acc);
    free(tmp);
    free(col);
    return NULL;
}

/* Run phase `phase` of batch b on T threads (thread 0 is the caller); a thread that cannot be
 * started has its share run by another (host/er_par.h): the same work, the same bits. */
static void run_phase(work *ws, int T, int phase)
{
    for (int t = 0; t < T; t++) ws[t].phase = phase;
    er_par_jobs(worker, ws, sizeof *ws, T);
}

/* The fast path's workspace (A's and B's binary64 copies, S, B by columns) is one large block of
 * host/er_alloc.h: huge pages where the system takes the advice, and a call after another of similar
 * size takes the block the last one freed, its pages already mapped (first-touch page faults cost as
 * much as a tenth of a 1024^3 product here). */

/* Batch b of C: 1 when every value (as the fast path reads it) is an integer, with the largest
 * magnitude in *mc; else 0. */
static int c_summary(const problem *P, int64_t b, double *mc)
{
    double mx = 0;
    for (int64_t i = 0; i < P->q.m; i++)
        for (int64_t j = 0; j < P->q.n; j++) {
            double v = fabs(er_bits_to_double(er_convert(P->q.c.fmt, ER_FMT_F64, er_view_load(&P->q.c, b, i, j), ER_RND_NEAREST_EVEN,
                                                      P->q.args->opts & ER_OPT_FTZ_IN)
                                               .bits));
            if (!(v < 0x1p62 ? (double)(int64_t)v == v : v == v)) return 0;
            if (v > mx) mx = v;
        }
    *mc = mx;
    return 1;
}

/* Rows per block of the fast path: A's binary64 copy and S are held for one block of
 * rows at a time (at most about 64 MiB, at least 256 rows, so that the BLAS's product stays efficient;
 * the rows split evenly into as few blocks as that allows); B's copy for the whole batch.
 * EXACTREF_CPU_ROW_BLOCK=R sets R rows (a testing hook: small blocks, same bits). */
static int64_t fast_block_rows(const er_problem *q)
{
    const char *e = getenv("EXACTREF_CPU_ROW_BLOCK");
    int64_t rb;
    if (e && *e) {
        long long v = strtoll(e, NULL, 10);
        rb = v >= 1 ? (int64_t)v : 1;
    } else {
        int64_t per_row = 8 * (q->k + q->n) + q->n, nb;
        rb = ((int64_t)64 << 20) / (per_row > 0 ? per_row : 1);
        if (rb < 256) rb = 256;
        nb = (q->m + rb - 1) / rb;
        rb = (q->m + nb - 1) / nb;
    }
    return rb < q->m ? rb : q->m;
}

int er_cpu_mma(const er_problem *pr)
{
    problem P;
    int st = ER_OK;
    double *s = NULL, *cs = NULL;
    unsigned char *bt = NULL;
    void *wsp = NULL; /* the workspace: af, bf, s and bt, each at a multiple of 64 bytes */
    work *ws = NULL;
    memset(&P, 0, sizeof P);
    P.q = *pr;
    P.simd = quick_avx512() ? 2 : quick_simd() ? 1 : 0; /* the vector paths, chosen once per call */
    er_progress pg; /* rows done, for the caller's hook (host/er_progress.h) */
    er_progress_init(&pg, pr->args->progress, pr->args->progress_ctx, 0, pr->batch * pr->m * pr->n, pr->batch * pr->m * pr->n);
    P.q.progress = &pg;
    if (P.q.m == 0 || P.q.n == 0 || P.q.batch == 0) goto done;

    int64_t RB = P.q.fast ? fast_block_rows(&P.q) : P.q.m; /* rows per block */
    if (P.q.fast) {
        size_t mk = (size_t)(RB * P.q.k), kn = (size_t)(P.q.k * P.q.n), mn = (size_t)(RB * P.q.n);
        /* B's patterns by columns too, where they can be read through the decode table */
        int want_bt = !P.q.scaled && P.q.b.s1 == 1 && P.q.b.bytes <= 2 && P.q.k > 0 &&
                      decode_table(P.q.b.fmt, (P.q.args->opts & ER_OPT_FTZ_IN) != 0);
        size_t o_af = 0, o_bf = o_af + ((8 * mk + 63) & ~(size_t)63), o_s = o_bf + ((8 * kn + 63) & ~(size_t)63);
        size_t o_bt = o_s + ((8 * mn + 63) & ~(size_t)63);
        size_t total = o_bt + (want_bt ? kn * (size_t)P.q.b.bytes : 0) + 64;
        wsp = er_big_alloc(total);
        P.a_s1 = (double *)malloc(sizeof(double) * 3 * (size_t)P.q.m);
        P.b_s1 = (double *)malloc(sizeof(double) * 3 * (size_t)P.q.n);
        if (!wsp || !P.a_s1 || !P.b_s1) {
            /* Not enough memory for the binary64 copies: the exact path alone needs none. */
            er_big_free(wsp);
            free(P.a_s1); free(P.b_s1);
            wsp = NULL;
            P.a_s1 = P.b_s1 = NULL;
            P.q.fast = 0;
            RB = P.q.m;
        } else {
            unsigned char *w0 = (unsigned char *)wsp;
            P.af = (double *)(w0 + o_af);
            P.bf = (double *)(w0 + o_bf);
            s = (double *)(w0 + o_s);
            bt = want_bt ? w0 + o_bt : NULL; /* NULL: the exact path gathers columns from bf */
        }
    }
    if (P.q.fast) {
        P.a_mx = P.a_s1 + P.q.m;
        P.a_s2 = P.a_s1 + 2 * P.q.m;
        P.b_mx = P.b_s1 + P.q.n;
        P.b_s2 = P.b_s1 + 2 * P.q.n;
    }
    int T = P.q.nthreads;
    if (T > P.q.m) T = (int)P.q.m;
    if (T < 1) T = 1;
    ws = (work *)calloc((size_t)T, sizeof *ws);
    if (P.q.fast) cs = (double *)malloc(sizeof(double) * 3 * (size_t)P.q.n * (size_t)T);
    if (!ws || (P.q.fast && !cs)) {
        st = er_msgf(P.q.msg, P.q.msg_size, ER_ENOMEM, "out of memory for %d threads", T);
        goto done;
    }
    int64_t nblk = (P.q.m + RB - 1) / RB; /* blocks of rows per batch */
    int int_b = 0, int_c = 0;             /* batch b's B, C: every value an integer */
    double mc = 0;                        /* and C's largest magnitude */
    for (int64_t bk = 0; bk < P.q.batch * nblk; bk++) {
        /* batch b, rows [R0, R1) */
        int64_t b = bk / nblk, R0 = bk % nblk * RB, R1 = P.q.m - R0 < RB ? P.q.m : R0 + RB, rows = R1 - R0;
        for (int t = 0; t < T; t++) {
            ws[t].P = &P;
            ws[t].b = b;
            ws[t].blk0 = R0;
            ws[t].r0 = R0 + rows * t / T;
            ws[t].r1 = R0 + rows * (t + 1) / T;
            /* B's copy and column norms: once per batch, with the first block */
            ws[t].q0 = R0 == 0 ? P.q.k * t / T : 0;
            ws[t].q1 = R0 == 0 ? P.q.k * (t + 1) / T : 0;
            ws[t].s = s;
            ws[t].cs = cs ? cs + (size_t)t * 3 * (size_t)P.q.n : NULL;
            ws[t].bt = bt;
        }
        if (P.q.fast) {
            run_phase(ws, T, 0);
            /* column norms of B: the threads' partial sums and maxima (any order: see the proof) */
            for (int64_t j = 0; j < P.q.n && R0 == 0; j++) {
                double s1 = 0, mx = 0, s2 = 0;
                for (int t = 0; t < T; t++) {
                    const double *c = ws[t].cs;
                    s1 += c[j];
                    if (c[P.q.n + j] > mx) mx = c[P.q.n + j];
                    s2 += c[2 * P.q.n + j];
                }
                P.b_s1[j] = s1;
                P.b_mx[j] = mx;
                P.b_s2[j] = sqrt(s2); /* |b|_2 */
            }
            /* strategy 3 for this block (docs/interval.md's test on its rows of A, B and C): integral
             * operands whose products and sums stay below 2^53 */
            {
                int ia = 1;
                double ma = 0, mb = 0;
                for (int t = 0; t < T; t++) ia &= ws[t].int_a;
                if (R0 == 0) {
                    int_b = 1;
                    for (int t = 0; t < T; t++) int_b &= ws[t].int_b;
                    int_c = -1; /* not yet known */
                    mc = 0;
                }
                for (int64_t i = R0; i < R1; i++) ma = P.a_mx[i] > ma ? P.a_mx[i] : ma;
                for (int64_t j = 0; j < P.q.n; j++) mb = P.b_mx[j] > mb ? P.b_mx[j] : mb;
                if (ia && int_b && P.q.has_c && int_c < 0) int_c = c_summary(&P, b, &mc);
                P.q.exact64 = !P.q.scaled && P.q.k > 0 && ia && int_b && (!P.q.has_c || int_c == 1) &&
                              ((double)P.q.k * ma * mb + mc) * (1.0 + 0x1p-40) < 0x1p53;
            }
            /* S of the block in one product, any order (a BLAS on the caller's threads where there is one) */
            if (er_cpu_gemm_any(P.af, P.q.k, P.bf, P.q.n, s, P.q.n, rows, P.q.n, P.q.k, P.q.nthreads) != 0) {
                st = er_msgf(P.q.msg, P.q.msg_size, ER_ENOMEM, "out of memory for the binary64 product");
                goto done;
            }
            /* the block's S for the bounds (src/result.c), which reuse it rather than form it again */
            if (P.q.keep_s)
                memcpy(P.q.keep_s + (size_t)((b * P.q.m + R0) * P.q.n), s, sizeof(double) * (size_t)(rows * P.q.n));
        }
        run_phase(ws, T, 1);
        for (int t = 0; t < T; t++) {
            P.fast_decided += ws[t].fast_decided;
            P.exact_f64 += ws[t].exact_f64;
            ws[t].exact_f64 = 0;
            P.exact_path += ws[t].exact_path;
            P.wrapped += ws[t].wrapped;
            P.failed |= ws[t].failed;
            ws[t].fast_decided = ws[t].exact_path = ws[t].wrapped = 0;
            ws[t].failed = 0;
        }
        if (P.failed) {
            st = er_msgf(P.q.msg, P.q.msg_size, ER_ENOMEM, "out of memory in a worker thread");
            goto done;
        }
    }
    if (P.q.keep_s_ok && P.q.keep_s && P.q.fast) *P.q.keep_s_ok = 1; /* every block's S copied */
done:
    if (P.q.stats) { /* the note is the front door's (why the CPU ran) */
        P.q.stats->elements = P.q.batch * P.q.m * P.q.n;
        P.q.stats->fast_decided = P.fast_decided;
        P.q.stats->exact_f64 = P.exact_f64;
        P.q.stats->exact_path = P.exact_path;
        P.q.stats->wrapped = P.wrapped;
        P.q.stats->threads = P.q.nthreads;
        P.q.stats->backend = ER_BACKEND_CPU;
    }
    er_big_free(wsp);
    free(P.a_s1);
    free(P.b_s1);
    free(ws);
    free(cs);
    return st;
}

/* The decoding table of fmt (storage of at most 2 bytes; ftz: subnormal inputs flushed), shared with
 * the bounds' preparation (src/tolerance.c), or NULL. */
const double *er_cpu_decode_table(int fmt, int ftz) { return decode_table(fmt, ftz); }
