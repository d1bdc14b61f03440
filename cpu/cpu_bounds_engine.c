/* cpu_bounds_engine.c: the engines' bounds on the CPU, register-blocked like the GEMM (er_bound_element's bits). */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_bounds_engine.h"
#include "../host/er_bel.h"
#include "../host/er_isa.h"
#include "exactref/core/er_bounds.h"

/*
 * The definition (include/exactref/core/er_bounds.h, er_b_eng_run; docs/proofs/engines.md): per element,
 * per instruction of mk terms, xs = the sum of qa_p qb_p, the magnitudes on the instruction's grids (the
 * job's qa and qb: exact in any order), emax = the largest e_a + e_b, then er_b_eng_block; s = the sum
 * of the products in index order, or the job's S (either only encloses the exact sum).  Here the
 * elements run in tiles of 4 rows x 16 columns, B packed by chunks of KC rows (a multiple of mk) x 128
 * columns, a chunk at a time: the exponents' max-plus products sixteen int16 lanes at a time (or none,
 * where the chunk's largest exponent sum cannot reach the accumulator's: tile512), the terms of every
 * instruction of the chunk with each element's running sum s in a register (AVX2: a 4 x 4 sub-tile,
 * a register per row, each lane its own element's chain; AVX-512: 4 x 16, two registers per row), then
 * the recurrence over the chunk's instructions with the state in registers (rec4: four lanes, rec512:
 * eight), every lane performing its element's operations in index order: the same bits.  Between
 * chunks each element's s and recurrence state wait in memory (a value stored and reloaded: the same
 * bits).  Every loop that carries an element's chain runs in index order; the tiling only decides
 * which elements share a register.
 */

enum {
    EMR = 4,   /* rows of a tile */
    ENR = 4,   /* columns of a sub-tile (one AVX2 register of binary64) */
    ENG = 16,  /* columns of an exponent group (one AVX2 register of int16); four tiles */
    ENC = 128,  /* columns of a chunk of B (a multiple of ENG) */
    EMC = 4096, /* rows of a block of the state (a multiple of EMR): B is packed once per block */
    EKC = 512  /* terms of a chunk of B, rounded down to a multiple of mk (measured: 128 and 256 were
                  slower on an AVX-512 machine) */
};

/* The running state of a block of elements: row r, column c at r * ld + c. */
typedef struct {
    int64_t ld;
    double *s, *T, *E, *B, *R;
    unsigned char *dn;
} eng_state;

/* er_b_eng_block for the element at q of the state (it reads neither s nor pert). */
static void block1(const er_bpar *c, eng_state *st, int64_t q, double xs, int emax, int64_t nt, int64_t p1)
{
    er_b_eng g;
    g.s = 0;
    g.pert = 0;
    g.T = st->T[q];
    g.E = st->E[q];
    g.B = st->B[q];
    g.R = st->R[q];
    g.done = st->dn[q];
    er_b_eng_block(c, &g, xs, emax, nt, p1);
    st->T[q] = g.T;
    st->E[q] = g.E;
    st->B[q] = g.B;
    st->R[q] = g.R;
    st->dn[q] = (unsigned char)(g.done != 0);
}

/* ---- The portable kernels. ---- */

/* One instruction's terms of a 4 x 4 tile: rows a[r] and aq[r] (A' and its magnitudes on the
 * instruction's grids, from the instruction's first term), B's packed columns b and bq (ENG values per
 * term), s the tile's running sums (step ld), xs[r * 4 + c] the step's sums of aq bq (exact). */
static void terms_plain(const double *const *a, const double *const *aq, const double *b, const double *bq, int64_t nt,
                        double *s, int64_t ld, double *xs)
{
    double sv[EMR * ENR], xv[EMR * ENR];
    for (int r = 0; r < EMR; r++)
        for (int c = 0; c < ENR; c++) {
            sv[r * ENR + c] = s[r * ld + c];
            xv[r * ENR + c] = 0;
        }
    for (int64_t p = 0; p < nt; p++)
        for (int r = 0; r < EMR; r++) {
            double av = a[r][p], qv = aq[r][p];
            for (int c = 0; c < ENR; c++) { /* er_b_eng_term's operations */
                sv[r * ENR + c] = sv[r * ENR + c] + av * b[p * ENG + c];
                xv[r * ENR + c] = xv[r * ENR + c] + qv * bq[p * ENG + c];
            }
        }
    for (int r = 0; r < EMR; r++)
        for (int c = 0; c < ENR; c++) {
            s[r * ld + c] = sv[r * ENR + c];
            xs[r * ENR + c] = xv[r * ENR + c];
        }
}

/* One instruction's largest exponents of 4 rows x ENG columns: em[r * ENG + c] = max_p ea_r[p] + eb[p][c]. */
static void exps_plain(const int16_t *const *ea, const int16_t *eb, int64_t nt, int32_t *em)
{
    for (int r = 0; r < EMR; r++)
        for (int c = 0; c < ENG; c++) {
            int m = -100000;
            for (int64_t p = 0; p < nt; p++) {
                int e = ea[r][p] + eb[p * ENG + c];
                if (e > m) m = e;
            }
            em[r * ENG + c] = m;
        }
}

/* ---- The AVX2 kernels. ---- */

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_AVX2_ENGINE 1

/* er_b_add_ru(a, b), four lanes, for a, b >= 0: s = RN(a + b) and z = s - max(a, b), exact (Fast2Sum:
 * the larger operand first, radix 2), so a + b - s = min(a, b) - z exactly, and RU is s where that is
 * not positive, else the next pattern (the comparison's mask is -1: s's bits minus it).  An infinite s
 * (and an infinite operand) gives z infinite or NaN, no step: RU beyond the range is +inf too.  The
 * same bits as er_b_add_ru's TwoSum, which IEEE's roundTowardPositive defines. */
__attribute__((target("avx2"))) static inline __m256d ru4(__m256d a, __m256d b)
{
    const __m256d s = _mm256_add_pd(a, b), z = _mm256_sub_pd(s, _mm256_max_pd(a, b));
    const __m256d m = _mm256_cmp_pd(_mm256_min_pd(a, b), z, _CMP_GT_OQ);
    return _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_castpd_si256(s), _mm256_castpd_si256(m)));
}

/* exps_plain sixteen columns at a time in int16 lanes (the caller has checked that every e_a + e_b
 * fits: the maximum is then exact). */
__attribute__((target("avx2"))) static void exps_avx2(const int16_t *e0, const int16_t *e1, const int16_t *e2,
                                                       const int16_t *e3, const int16_t *eb, int64_t nt, int32_t *em)
{
    __m256i m0 = _mm256_set1_epi16(INT16_MIN), m1 = m0, m2 = m0, m3 = m0;
    for (int64_t p = 0; p < nt; p++) {
        __m256i bv = _mm256_loadu_si256((const __m256i *)(eb + p * ENG));
        m0 = _mm256_max_epi16(m0, _mm256_add_epi16(_mm256_set1_epi16(e0[p]), bv));
        m1 = _mm256_max_epi16(m1, _mm256_add_epi16(_mm256_set1_epi16(e1[p]), bv));
        m2 = _mm256_max_epi16(m2, _mm256_add_epi16(_mm256_set1_epi16(e2[p]), bv));
        m3 = _mm256_max_epi16(m3, _mm256_add_epi16(_mm256_set1_epi16(e3[p]), bv));
    }
#define ER_ST(r, m)                                                                                      \
    do {                                                                                                 \
        _mm256_storeu_si256((__m256i *)(em + (r) * ENG), _mm256_cvtepi16_epi32(_mm256_castsi256_si128(m))); \
        _mm256_storeu_si256((__m256i *)(em + (r) * ENG + 8), _mm256_cvtepi16_epi32(_mm256_extracti128_si256(m, 1))); \
    } while (0)
    ER_ST(0, m0);
    ER_ST(1, m1);
    ER_ST(2, m2);
    ER_ST(3, m3);
#undef ER_ST
}

/*
 * er_b_eng_block for four elements at once, where every value is finite and not negative (then
 * er_b_up(x) is the next pattern, bits + 1, also for +0, and frexp and 2^e are exponent-field
 * arithmetic on normal values).  Declines (0, touching nothing) when a lane does not meet those
 * conditions before or after (done, a negative or subnormal accumulator bound, an infinity or NaN on
 * the way, a weight 2^(E - F) outside binary64's normal range): the caller then runs er_b_eng_block
 * lane by lane.  Otherwise the same operations, lane by lane, in the same order: the same bits.
 */
__attribute__((target("avx2"))) static int block4_avx2(const er_bpar *c, double *Tp, double *Ep, double *Bp,
                                                        double *Rp, unsigned char *dn, const double *xsp,
                                                        const int32_t *emp, int64_t nt, int64_t p1)
{
    uint32_t d4;
    memcpy(&d4, dn, 4);
    if (d4) return 0;
    const __m256i one = _mm256_set1_epi64x(1), expmask = _mm256_set1_epi64x(0x7FF0000000000000LL);
    const __m256i zi = _mm256_setzero_si256();
    __m256d T = _mm256_loadu_pd(Tp), B = _mm256_loadu_pd(Bp), E = _mm256_loadu_pd(Ep), R = _mm256_loadu_pd(Rp);
    __m256d xs = _mm256_loadu_pd(xsp), zero = _mm256_setzero_pd();
    {
        /* the inputs: no sign bit (-0 included), finite, B zero or normal */
        __m256i bb = _mm256_castpd_si256(B), be = _mm256_castpd_si256(E), br = _mm256_castpd_si256(R),
                bx = _mm256_castpd_si256(xs);
        __m256i any = _mm256_or_si256(_mm256_or_si256(bb, be), _mm256_or_si256(br, bx));
        if (_mm256_movemask_pd(_mm256_castsi256_pd(any))) return 0;
        __m256i nf = _mm256_or_si256(_mm256_cmpeq_epi64(_mm256_and_si256(bb, expmask), expmask),
                                     _mm256_cmpeq_epi64(_mm256_and_si256(be, expmask), expmask));
        nf = _mm256_or_si256(nf, _mm256_cmpeq_epi64(_mm256_and_si256(br, expmask), expmask));
        nf = _mm256_or_si256(nf, _mm256_cmpeq_epi64(_mm256_and_si256(bx, expmask), expmask));
        nf = _mm256_or_si256(nf, _mm256_andnot_si256(_mm256_cmpeq_epi64(bb, zi),
                                                     _mm256_cmpeq_epi64(_mm256_and_si256(bb, expmask), zi)));
        if (!_mm256_testz_si256(nf, nf)) return 0;
    }
#define ER_UP4(v) _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(v), one))
#define ER_POW2_4(e) _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64((e), _mm256_set1_epi64x(1023)), 52))
    T = _mm256_add_pd(T, xs);
    __m256d xs2 = xs; /* exact: taken as it is (er_b_eng_block) */
    /* ec = max(emin_D, frexp_e(B) - 1) where B > 0, else -126 (a zero C) */
    __m256i m126 = _mm256_set1_epi64x(-126), emd = _mm256_set1_epi64x(c->emin_c);
    __m256i exb = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(B), 52), _mm256_set1_epi64x(1023));
    __m256i ec = _mm256_blendv_epi8(emd, exb, _mm256_cmpgt_epi64(exb, emd));
    ec = _mm256_blendv_epi8(m126, ec, _mm256_castpd_si256(_mm256_cmp_pd(B, zero, _CMP_GT_OQ)));
    /* Es = max(emax + gextra, ec) */
    __m256i em = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)emp)),
                                  _mm256_set1_epi64x(c->gextra));
    __m256i Es = _mm256_blendv_epi8(ec, em, _mm256_cmpgt_epi64(em, ec));
    {
        /* 2^(Es - F), and for CDNA3 2^(em - F) and 2^(Es - F2), normal binary64 values (else
         * er_b_eng_block's ldexp, lane by lane) */
        __m256i lo = _mm256_set1_epi64x(-1022), hi = _mm256_set1_epi64x(1023);
        __m256i ef = _mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F));
        __m256i ef2 = _mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F2 ? c->F2 : c->F));
        __m256i efp = _mm256_sub_epi64(c->F2 ? em : Es, _mm256_set1_epi64x(c->F));
        __m256i out = _mm256_or_si256(_mm256_cmpgt_epi64(lo, ef), _mm256_cmpgt_epi64(ef, hi));
        out = _mm256_or_si256(out, _mm256_or_si256(_mm256_cmpgt_epi64(lo, ef2), _mm256_cmpgt_epi64(ef2, hi)));
        out = _mm256_or_si256(out, _mm256_or_si256(_mm256_cmpgt_epi64(lo, efp), _mm256_cmpgt_epi64(efp, hi)));
        if (!_mm256_testz_si256(out, out)) return 0;
    }
    __m256d trunc;
    if (c->F2) { /* CDNA3: er_b_eng_block's three terms, in its order */
        trunc = ER_UP4(_mm256_mul_pd(_mm256_set1_pd((double)(nt + c->xterms)),
                                     ER_POW2_4(_mm256_sub_epi64(em, _mm256_set1_epi64x(c->F)))));
        trunc = ru4(trunc, ER_POW2_4(_mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F))));
        trunc = ru4(trunc, ER_POW2_4(_mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F2))));
    } else {
        trunc = ER_UP4(_mm256_mul_pd(_mm256_set1_pd((double)(nt + 1 + c->xterms)),
                                     ER_POW2_4(_mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F)))));
    }
    __m256d dmax = ru4(ru4(B, xs2), trunc);
    /* sh = frexp_e(dmax) - 1 - out_p - rne; norm = 2^max(sh, qe) */
    const int rne = c->out_round == ER_RND_NEAREST_EVEN ? 1 : 0, qe = er_b_eng_qe(c);
    __m256i sh = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(dmax), 52),
                                  _mm256_set1_epi64x(1023 + c->out_p + rne));
    __m256d norm = _mm256_blendv_pd(ER_POW2_4(sh), _mm256_set1_pd(er_b_pow2(qe)),
                                    _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(qe), sh)));
    E = ru4(ru4(E, trunc), norm);
    B = ru4(dmax, norm);
    __m256d maxc = _mm256_set1_pd(c->max_c);
    __m256d done = _mm256_or_pd(_mm256_cmp_pd(B, maxc, _CMP_GE_OQ), _mm256_cmp_pd(R, maxc, _CMP_GE_OQ));
    __m256d E2 = E, R2 = R, B2 = B;
    if (c->promote && (p1 % c->promote == 0 || p1 == c->k)) {
        __m256d rnew = ru4(R, B);
        __m256d perr = ER_UP4(_mm256_mul_pd(rnew, _mm256_set1_pd(0x1p-24)));
        E2 = ru4(E, perr);
        R2 = ru4(rnew, perr);
        B2 = zero;
    }
    /* every value finite (a pattern past the largest finite one would not be er_b_up's): else decline */
    __m256i bad = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(xs2), expmask), expmask);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(trunc), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(dmax), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(E2), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(R2), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(B), expmask), expmask));
    if (!_mm256_testz_si256(bad, bad)) return 0;
    _mm256_storeu_pd(Tp, T);
    /* a lane that overflowed keeps the values of the overflow step (its state is never read again) */
    _mm256_storeu_pd(Ep, _mm256_blendv_pd(E2, E, done));
    _mm256_storeu_pd(Rp, _mm256_blendv_pd(R2, R, done));
    _mm256_storeu_pd(Bp, _mm256_blendv_pd(B2, B, done));
    int dm = _mm256_movemask_pd(done);
    for (int l = 0; l < 4; l++) dn[l] = (unsigned char)((dm >> l) & 1);
#undef ER_UP4
#undef ER_POW2_4
    return 1;
}

/*
 * The NVIDIA branch of er_b_eng_block (F2 = 0) with its constants hoisted out of the elements' loop:
 * the weights are formed from their bits (cnt 2^(Es - F) is cnt's pattern plus (Es - F) << 52 while it
 * is a normal value, checked from Es), frexp and 2^sh from exponent fields.  Only the conditions the
 * arithmetic needs are checked: a sign bit in B, E, R or xs, a lane done, Es outside the normal range of
 * the weight, and at the end an infinite or NaN E, B (or, promoting, E and R), into which every
 * infinite or NaN intermediate (xs, dmax, a sum beyond binary64) propagates.
 */
typedef struct {
    double q2, maxc;
    int64_t kt, limb, lowb, eminb, shsub, gx;
    int ok, zero_fix, low_check, promote, promote_now;
    /* CDNA3's branch (F2 > 0), for rec512 only: ok512 (ok, or this branch with its weights from bits),
     * f2, the weights' offsets (kt from cnt = nt + xterms and em; 2^(Es - F), 2^(Es - F2)), limb the
     * largest biased Es for which all three are normal, lowb the least biased em, lowb2 the least Es */
    int ok512, f2;
    int64_t fsh, f2sh, lowb2;
} eng_k;

static void eng_k_set(const er_bpar *c, eng_k *K, int64_t nt, int64_t p1)
{
    int64_t cnt = nt + 1 + c->xterms, bl = 0;
    double dc = (double)cnt;
    uint64_t cb;
    while (bl < 62 && (INT64_C(1) << bl) <= cnt) bl++;
    memcpy(&cb, &dc, 8);
    K->ok = !c->F2 && c->F >= 0 && c->F <= 900 && cnt >= 1 && cnt < (INT64_C(1) << 40);
    K->q2 = er_b_pow2(er_b_eng_qe(c));
    K->maxc = c->max_c;
    K->kt = (int64_t)(cb + 1u - ((uint64_t)(uint32_t)(1023 + c->F) << 52)); /* modulo 2^64: used only where ok */
    K->limb = 2047 + c->F - bl;
    K->lowb = 1 + c->F;
    K->eminb = c->emin_c + 1023;
    K->low_check = (c->emin_c < -126 ? c->emin_c : -126) + 1023 < K->lowb;
    K->zero_fix = c->emin_c != -126; /* a zero B: exponent -126, not emin_D (f16 accumulators) */
    K->shsub = (int64_t)((uint64_t)(c->out_p + (c->out_round == ER_RND_NEAREST_EVEN ? 1 : 0)) << 52);
    K->gx = c->gextra + 1023;
    K->promote = c->promote != 0;
    K->promote_now = c->promote && (p1 % c->promote == 0 || p1 == c->k);
    K->ok512 = K->ok;
    K->f2 = 0;
    K->fsh = K->f2sh = K->lowb2 = 0;
    if (c->F2) {
        /* er_b_eng_block's CDNA3 weights: up(ldexp(cnt2, em - F)) with em = emax + gextra, then
         * 2^(Es - F) and 2^(Es - F2), each sum rounded up.  From bits while all three are normal:
         * em - F >= -1022 (biased em >= 1 + F), Es - F2 >= -1022, and no exponent above 1023 (cnt2's
         * top bit at bl2 - 1) */
        int64_t cnt2 = nt + c->xterms, bl2 = 0;
        double d2 = (double)cnt2;
        uint64_t c2;
        while (bl2 < 62 && (INT64_C(1) << bl2) <= cnt2) bl2++;
        memcpy(&c2, &d2, 8);
        K->ok512 = c->F >= 0 && c->F <= 900 && c->F2 > 0 && c->F2 <= 900 && cnt2 >= 1 && cnt2 < (INT64_C(1) << 40);
        K->f2 = 1;
        K->kt = (int64_t)(c2 + 1u - ((uint64_t)(uint32_t)(1023 + c->F) << 52)); /* modulo 2^64 */
        K->fsh = (int64_t)((uint64_t)c->F << 52);
        K->f2sh = (int64_t)((uint64_t)c->F2 << 52);
        int64_t l1 = 2047 + c->F - bl2, l2 = 2046 + c->F, l3 = 2046 + c->F2;
        K->limb = l1 < l2 ? (l1 < l3 ? l1 : l3) : (l2 < l3 ? l2 : l3);
        K->lowb = 1 + c->F;
        K->lowb2 = 1 + c->F2;
        K->low_check = 1;
    }
}

/* The packing of one full group of B's chunk (kc terms x ENG columns from b and eb, step n): the values
 * and exponents copied, each tile column's largest magnitude (an infinity for an infinite or NaN value)
 * into pm[0..3], the exponents' range into *emn, *emx (mag_max's and the scalar loop's results). */
__attribute__((target("avx2"))) static void pack_avx2(const double *b, const int16_t *eb, int64_t n, int64_t kc,
                                                       double *dv, int16_t *de, double *pm, int *emn, int *emx)
{
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    const __m256d big = _mm256_set1_pd(DBL_MAX), inf = _mm256_set1_pd(INFINITY);
    __m256d m[ENG / ENR];
    __m256i mn = _mm256_set1_epi16(INT16_MAX), mx = _mm256_set1_epi16(INT16_MIN);
    for (int t = 0; t < ENG / ENR; t++) m[t] = _mm256_setzero_pd();
    for (int64_t p = 0; p < kc; p++) {
        for (int t = 0; t < ENG / ENR; t++) {
            __m256d v = _mm256_loadu_pd(b + p * n + t * ENR);
            _mm256_storeu_pd(dv + p * ENG + t * ENR, v);
            __m256d a = _mm256_and_pd(v, am);
            a = _mm256_blendv_pd(inf, a, _mm256_cmp_pd(a, big, _CMP_LE_OQ));
            m[t] = _mm256_max_pd(m[t], a);
        }
        __m256i e = _mm256_loadu_si256((const __m256i *)(eb + p * n));
        _mm256_storeu_si256((__m256i *)(de + p * ENG), e);
        mn = _mm256_min_epi16(mn, e);
        mx = _mm256_max_epi16(mx, e);
    }
    for (int t = 0; t < ENG / ENR; t++) {
        double v[4];
        _mm256_storeu_pd(v, m[t]);
        for (int l = 0; l < 4; l++) pm[t] = v[l] > pm[t] ? v[l] : pm[t];
    }
    int16_t a[16], z[16];
    _mm256_storeu_si256((__m256i *)a, mn);
    _mm256_storeu_si256((__m256i *)z, mx);
    for (int l = 0; l < 16; l++) {
        if (a[l] < *emn) *emn = a[l];
        if (z[l] > *emx) *emx = z[l];
    }
}

/*
 * The AVX2 kernels by chunks, as the AVX-512 ones below (tile512): one chunk's terms of a 4 x 16 tile
 * for every instruction into xb (instruction i, row r, column c at i * 64 + r * 16 + c), each
 * element's running sum s in a register for the whole chunk; then the recurrence with the state in
 * registers from the chunk's first instruction to its last.  Each lane is one element and performs its
 * own operations in its order: the same bits as the instruction-by-instruction path above.
 *
 * terms: one 4 x 4 sub-tile (columns from b and bq, step ENG per term) over kc terms in instructions of
 * mk; its sums into xb (the sub-tile's offset included by the caller).  xs = the sum of aq bq, the
 * magnitudes on the instruction's grids: exact in any order, with or without fma (er_b_eng_q_value).
 * s: mode 3 none (the job's S serves: er_cpu_engine_rows); 2 every product exact (fused multiply-adds:
 * s + a b = fma(a, b, s), one rounding of the same exact value, the same bits); else the multiply and
 * the addition (an infinite or NaN product propagates into s as in er_b_eng_term).
 */
__attribute__((target("avx2,fma"), always_inline)) static inline void
terms_chunk_body(const double *const *a, const double *const *aa, const double *b, const double *bq, int64_t kc,
                 int64_t mk, double *s, int64_t ld, double *xb, const int mode)
{
    const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    const double *q0 = aa[0], *q1 = aa[1], *q2 = aa[2], *q3 = aa[3];
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    if (mode != 3) {
        s0 = _mm256_loadu_pd(s);
        s1 = _mm256_loadu_pd(s + ld);
        s2 = _mm256_loadu_pd(s + 2 * ld);
        s3 = _mm256_loadu_pd(s + 3 * ld);
    }
    for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
        const int64_t p1 = kc - b0 < mk ? kc : b0 + mk;
        __m256d x0 = _mm256_setzero_pd(), x1 = x0, x2 = x0, x3 = x0;
        for (int64_t p = b0; p < p1; p++) {
            const __m256d bm = _mm256_loadu_pd(bq + p * ENG);
            if (mode == 3 || mode == 2) {
                x0 = _mm256_fmadd_pd(_mm256_broadcast_sd(q0 + p), bm, x0);
                x1 = _mm256_fmadd_pd(_mm256_broadcast_sd(q1 + p), bm, x1);
                x2 = _mm256_fmadd_pd(_mm256_broadcast_sd(q2 + p), bm, x2);
                x3 = _mm256_fmadd_pd(_mm256_broadcast_sd(q3 + p), bm, x3);
            } else { /* the same exact values without fma */
                x0 = _mm256_add_pd(x0, _mm256_mul_pd(_mm256_broadcast_sd(q0 + p), bm));
                x1 = _mm256_add_pd(x1, _mm256_mul_pd(_mm256_broadcast_sd(q1 + p), bm));
                x2 = _mm256_add_pd(x2, _mm256_mul_pd(_mm256_broadcast_sd(q2 + p), bm));
                x3 = _mm256_add_pd(x3, _mm256_mul_pd(_mm256_broadcast_sd(q3 + p), bm));
            }
            if (mode == 3) continue;
            const __m256d bv = _mm256_loadu_pd(b + p * ENG);
            if (mode == 2) {
                s0 = _mm256_fmadd_pd(_mm256_broadcast_sd(a0 + p), bv, s0);
                s1 = _mm256_fmadd_pd(_mm256_broadcast_sd(a1 + p), bv, s1);
                s2 = _mm256_fmadd_pd(_mm256_broadcast_sd(a2 + p), bv, s2);
                s3 = _mm256_fmadd_pd(_mm256_broadcast_sd(a3 + p), bv, s3);
            } else {
                s0 = _mm256_add_pd(s0, _mm256_mul_pd(_mm256_broadcast_sd(a0 + p), bv));
                s1 = _mm256_add_pd(s1, _mm256_mul_pd(_mm256_broadcast_sd(a1 + p), bv));
                s2 = _mm256_add_pd(s2, _mm256_mul_pd(_mm256_broadcast_sd(a2 + p), bv));
                s3 = _mm256_add_pd(s3, _mm256_mul_pd(_mm256_broadcast_sd(a3 + p), bv));
            }
        }
        double *xo = xb + i * (EMR * ENG);
        _mm256_storeu_pd(xo, x0);
        _mm256_storeu_pd(xo + ENG, x1);
        _mm256_storeu_pd(xo + 2 * ENG, x2);
        _mm256_storeu_pd(xo + 3 * ENG, x3);
    }
    if (mode == 3) return;
    _mm256_storeu_pd(s, s0);
    _mm256_storeu_pd(s + ld, s1);
    _mm256_storeu_pd(s + 2 * ld, s2);
    _mm256_storeu_pd(s + 3 * ld, s3);
}

__attribute__((target("avx2,fma"))) static void terms_chunk_avx2(const double *const *a, const double *const *aa,
                                                                  const double *b, const double *bq, int64_t kc,
                                                                  int64_t mk, double *s, int64_t ld, double *xb,
                                                                  int mode)
{
    if (mode == 3) terms_chunk_body(a, aa, b, bq, kc, mk, s, ld, xb, 3);
    else if (mode == 2) terms_chunk_body(a, aa, b, bq, kc, mk, s, ld, xb, 2);
    else terms_chunk_body(a, aa, b, bq, kc, mk, s, ld, xb, 1);
}

/*
 * terms_chunk_body's mode 3 for two adjacent sub-tiles (4 rows x 8 columns): eight chains of fused
 * multiply-adds in flight instead of four (one sub-tile's four chains wait on the fused multiply-add's
 * latency), each lane still its own element adding its own exact terms: the same operations, the same
 * bits.
 */
__attribute__((target("avx2,fma"))) static void terms_pair3_avx2(const double *const *aa, const double *bq, int64_t kc,
                                                                  int64_t mk, double *xb)
{
    const double *q0 = aa[0], *q1 = aa[1], *q2 = aa[2], *q3 = aa[3];
    for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
        const int64_t p1 = kc - b0 < mk ? kc : b0 + mk;
        __m256d x00 = _mm256_setzero_pd(), x01 = x00, x10 = x00, x11 = x00, x20 = x00, x21 = x00, x30 = x00, x31 = x00;
        for (int64_t p = b0; p < p1; p++) {
            const __m256d bm0 = _mm256_loadu_pd(bq + p * ENG);
            const __m256d bm1 = _mm256_loadu_pd(bq + p * ENG + ENR);
            __m256d av = _mm256_broadcast_sd(q0 + p);
            x00 = _mm256_fmadd_pd(av, bm0, x00);
            x01 = _mm256_fmadd_pd(av, bm1, x01);
            av = _mm256_broadcast_sd(q1 + p);
            x10 = _mm256_fmadd_pd(av, bm0, x10);
            x11 = _mm256_fmadd_pd(av, bm1, x11);
            av = _mm256_broadcast_sd(q2 + p);
            x20 = _mm256_fmadd_pd(av, bm0, x20);
            x21 = _mm256_fmadd_pd(av, bm1, x21);
            av = _mm256_broadcast_sd(q3 + p);
            x30 = _mm256_fmadd_pd(av, bm0, x30);
            x31 = _mm256_fmadd_pd(av, bm1, x31);
        }
        double *xo = xb + i * (EMR * ENG);
        _mm256_storeu_pd(xo, x00);
        _mm256_storeu_pd(xo + ENR, x01);
        _mm256_storeu_pd(xo + ENG, x10);
        _mm256_storeu_pd(xo + ENG + ENR, x11);
        _mm256_storeu_pd(xo + 2 * ENG, x20);
        _mm256_storeu_pd(xo + 2 * ENG + ENR, x21);
        _mm256_storeu_pd(xo + 3 * ENG, x30);
        _mm256_storeu_pd(xo + 3 * ENG + ENR, x31);
    }
}

/* The lanes of x (int64) that are greater than those of y: the larger of the two, lane by lane. */
#define ER_MAX64_4(x, y) _mm256_blendv_epi8((y), (x), _mm256_cmpgt_epi64((x), (y)))

/*
 * The recurrence of a 4 x 16 tile over nb instructions of nt terms each (the first ending at term p1),
 * their sums and exponents in xb and eb (the layout above): rec512's operations four lanes at a time,
 * RG registers of four elements interleaved (a row of the tile per pass), the state from the first
 * instruction to the last in registers where they suffice (else in L1); the same conditions gathered over the chunk and tested at its end (rec512's comment), a group
 * that fails them left as it was and run by er_b_eng_block lane by lane: the same bits.
 */
#define RG 4 /* groups of four lanes in flight (2: within AVX2's registers; 4: the step's latency hidden) */

/* The state of a pass's RG groups between rec4 and its steps (rec4_steps): in memory, so that the
 * steps, run with the rounding upward, and rec4, run with the rounding to nearest, share no register
 * value the compiler could move from one side of the rounding mode's change to the other. */
typedef struct {
    __m256d E[RG], B[RG], R[RG], xsor[RG];
    __m256i esmax[RG], bad[RG];
    int64_t xo[RG];
} rec4_regs;

/*
 * The recurrence's steps for one pass, four lanes per group, with MXCSR's rounding control set to
 * toward +infinity for their length: every addition there is er_b_add_ru's (IEEE's roundTowardPositive:
 * the same bits as its TwoSum), one instruction each.  AVX2 has no rounding per instruction, and the
 * exact correction (ru4: Fast2Sum) made volta's whole tolerance 1.46x slower.  Nothing else here
 * depends on the rounding: the integer and bitwise operations, the comparisons, and the one
 * multiplication, rnew 2^-24, which is exact (rnew >= B >= 2^qe >= 2^-179 since the first step, so the
 * product is normal).  The rounding mode is set and restored inside the wrappers below, which are never
 * inlined and read and write the groups' state only through Rg (memory), and _mm_setcsr is a barrier to
 * GCC's scheduler: no operation of the steps leaves the mode and none of the caller's enters it (a
 * compiler that moved one would fail test_engine_kernel, which compares every bit with
 * er_b_eng_block).  T, rounded to nearest, is summed by the caller afterwards.
 */
__attribute__((target("avx2"), always_inline)) static inline void
rec4_steps(const er_bpar *c, const eng_k *K, rec4_regs *Rg, const double *xb, const int32_t *eb, int64_t nb, int64_t nt,
           int64_t p1, const int zero_fix, const int low_check, const int promote, const int f2)
{
#if defined(__clang__)
#pragma STDC FENV_ACCESS ON /* clang may otherwise move additions across _mm_setcsr; GCC does not */
#endif
    const __m256i one = _mm256_set1_epi64x(1), zi = _mm256_setzero_si256();
    const __m256i eminb = _mm256_set1_epi64x(K->eminb), gx = _mm256_set1_epi64x(K->gx);
    const __m256i lowb = _mm256_set1_epi64x(K->lowb), kt = _mm256_set1_epi64x(K->kt), shsub = _mm256_set1_epi64x(K->shsub);
    const __m256i expmask = _mm256_set1_epi64x(0x7FF0000000000000LL), z126 = _mm256_set1_epi64x(-126 + 1023);
    const __m256d q2 = _mm256_set1_pd(K->q2), maxc = _mm256_set1_pd(K->maxc);
    const __m256d p24 = _mm256_set1_pd(0x1p-24), zd = _mm256_setzero_pd();
    const __m256i fsh = _mm256_set1_epi64x(K->fsh), f2sh = _mm256_set1_epi64x(K->f2sh), lowb2 = _mm256_set1_epi64x(K->lowb2);
    const unsigned csr = _mm_getcsr();
    __m256d E[RG], B[RG], R[RG], xsor[RG];
    __m256i esmax[RG], bad[RG];
    int64_t xo[RG];
    _mm_setcsr((csr & ~0x6000u) | 0x4000u); /* rounding control 10: toward +infinity */
#define ER_UP4(v) _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(v), one))
#define ER_ADDU4(x, y) _mm256_add_pd((x), (y)) /* rounded upward: MXCSR */
#pragma GCC unroll 4
    for (int g = 0; g < RG; g++) {
        E[g] = Rg->E[g], B[g] = Rg->B[g], R[g] = Rg->R[g], xsor[g] = Rg->xsor[g];
        esmax[g] = Rg->esmax[g], bad[g] = Rg->bad[g], xo[g] = Rg->xo[g];
    }
    for (int64_t i = 0; i < nb; i++) {
        const int64_t pe = p1 + i * nt;
        const int pn = promote && (pe % c->promote == 0 || pe == c->k);
        const double *xi = xb + i * (EMR * ENG);
        const int32_t *ei = eb + i * (EMR * ENG);
#pragma GCC unroll 4
        for (int g = 0; g < RG; g++) {
            const __m256d xs = _mm256_loadu_pd(xi + xo[g]);
            __m256i bd = zi;
            xsor[g] = _mm256_or_pd(xsor[g], xs);
            const __m256d xs2 = xs;
            /* biased exponents: ec = max(emin_D, frexp_e(B) - 1), -126 for a zero B */
            const __m256i bb = _mm256_castpd_si256(B[g]);
            __m256i ecb = ER_MAX64_4(_mm256_srli_epi64(bb, 52), eminb);
            if (zero_fix) ecb = _mm256_blendv_epi8(ecb, z126, _mm256_cmpeq_epi64(bb, zi));
            const __m256i emb =
                _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(ei + xo[g]))), gx);
            const __m256i Esb = ER_MAX64_4(ecb, emb);
            esmax[g] = ER_MAX64_4(esmax[g], Esb);
            __m256d trunc;
            if (f2) {
                /* CDNA3: up(cnt2 2^(em - F)), + 2^(Es - F), + 2^(Es - F2), each sum rounded upward */
                bd = _mm256_or_si256(_mm256_cmpgt_epi64(lowb, emb), _mm256_cmpgt_epi64(lowb2, Esb));
                const __m256i es52 = _mm256_slli_epi64(Esb, 52);
                trunc = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_slli_epi64(emb, 52), kt));
                trunc = ER_ADDU4(trunc, _mm256_castsi256_pd(_mm256_sub_epi64(es52, fsh)));
                trunc = ER_ADDU4(trunc, _mm256_castsi256_pd(_mm256_sub_epi64(es52, f2sh)));
            } else {
                if (low_check) bd = _mm256_cmpgt_epi64(lowb, Esb);
                trunc = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_slli_epi64(Esb, 52), kt));
            }
            const __m256d dmax = ER_ADDU4(ER_ADDU4(B[g], xs2), trunc);
            __m256d norm = _mm256_castsi256_pd(
                _mm256_sub_epi64(_mm256_and_si256(_mm256_castpd_si256(dmax), expmask), shsub));
            norm = _mm256_max_pd(norm, q2);
            E[g] = ER_ADDU4(ER_ADDU4(E[g], trunc), norm);
            B[g] = ER_ADDU4(dmax, norm);
            if (promote) /* else B never decreases: its last value is checked */
                bd = _mm256_or_si256(bd, _mm256_castpd_si256(_mm256_or_pd(_mm256_cmp_pd(B[g], maxc, _CMP_GE_OQ),
                                                                          _mm256_cmp_pd(R[g], maxc, _CMP_GE_OQ))));
            if (pn) {
                const __m256d rnew = ER_ADDU4(R[g], B[g]);
                const __m256d perr = ER_UP4(_mm256_mul_pd(rnew, p24)); /* exact product: up as defined */
                E[g] = ER_ADDU4(E[g], perr);
                R[g] = ER_ADDU4(rnew, perr);
                B[g] = zd;
            }
            bad[g] = _mm256_or_si256(bad[g], bd);
        }
    }
#pragma GCC unroll 4
    for (int g = 0; g < RG; g++) {
        Rg->E[g] = E[g], Rg->B[g] = B[g], Rg->R[g] = R[g], Rg->xsor[g] = xsor[g];
        Rg->esmax[g] = esmax[g], Rg->bad[g] = bad[g];
    }
    _mm_setcsr(csr);
#undef ER_ADDU4
#undef ER_UP4
}

/* rec4_steps with the model's flags as constants, each its own function (never inlined: above). */
__attribute__((target("avx2"), noinline)) static void rec4_steps_f2(const er_bpar *c, const eng_k *K, rec4_regs *Rg,
                                                                    const double *xb, const int32_t *eb, int64_t nb,
                                                                    int64_t nt, int64_t p1)
{
    rec4_steps(c, K, Rg, xb, eb, nb, nt, p1, K->zero_fix, 1, K->promote, 1);
}
__attribute__((target("avx2"), noinline)) static void rec4_steps_plain(const er_bpar *c, const eng_k *K,
                                                                       rec4_regs *Rg, const double *xb,
                                                                       const int32_t *eb, int64_t nb, int64_t nt,
                                                                       int64_t p1)
{
    rec4_steps(c, K, Rg, xb, eb, nb, nt, p1, 0, 0, 0, 0);
}
__attribute__((target("avx2"), noinline)) static void rec4_steps_any(const er_bpar *c, const eng_k *K, rec4_regs *Rg,
                                                                     const double *xb, const int32_t *eb, int64_t nb,
                                                                     int64_t nt, int64_t p1)
{
    rec4_steps(c, K, Rg, xb, eb, nb, nt, p1, K->zero_fix, K->low_check, K->promote, 0);
}

/*
 * The recurrence of a 4 x 16 tile over nb instructions of nt terms each (the first ending at term p1),
 * their sums and exponents in xb and eb (the layout above): rec512's operations four lanes at a time,
 * RG registers of four elements interleaved (a row of the tile per pass), the steps in rec4_steps; the
 * same conditions gathered over the chunk and tested at its end (rec512's comment), a group that fails
 * them left as it was and run by er_b_eng_block lane by lane: the same bits.  Returns its mask of the
 * groups run lane by lane.
 */
__attribute__((target("avx2"))) static unsigned rec4(const er_bpar *c, const eng_k *K, eng_state *st, int64_t q0,
                                                     const double *xb, const int32_t *eb, int64_t nb, int64_t nt,
                                                     int64_t p1)
{
    const __m256i zi = _mm256_setzero_si256();
    const __m256d maxc = _mm256_set1_pd(K->maxc), big = _mm256_set1_pd(DBL_MAX), zd = _mm256_setzero_pd();
    const int64_t ld = st->ld;
    unsigned lanewise = 0u; /* bit 4 r + t: the group of row r, sub-tile t ran lane by lane */
    for (int pass = 0; pass < (EMR * ENG) / (4 * RG); pass++) {
        rec4_regs Rg;
        int64_t q[RG];
        for (int g = 0; g < RG; g++) {
            const int r = pass * RG / 4, t = pass * RG % 4 + g; /* row r, sub-tile t of four columns */
            uint32_t d4;
            q[g] = q0 + r * ld + t * ENR;
            Rg.xo[g] = r * ENG + t * ENR;
            memcpy(&d4, st->dn + q[g], 4);
            Rg.xsor[g] = zd;
            Rg.esmax[g] = zi;
            Rg.E[g] = _mm256_loadu_pd(st->E + q[g]);
            Rg.B[g] = _mm256_loadu_pd(st->B + q[g]);
            Rg.R[g] = _mm256_loadu_pd(st->R + q[g]);
            Rg.bad[g] = _mm256_cmpgt_epi64(zi, _mm256_castpd_si256(_mm256_or_pd(_mm256_or_pd(Rg.B[g], Rg.E[g]), Rg.R[g])));
            if (d4) Rg.bad[g] = _mm256_set1_epi64x(-1);
        }
        if (K->f2) rec4_steps_f2(c, K, &Rg, xb, eb, nb, nt, p1);
        else if (!K->zero_fix && !K->low_check && !K->promote) rec4_steps_plain(c, K, &Rg, xb, eb, nb, nt, p1);
        else rec4_steps_any(c, K, &Rg, xb, eb, nb, nt, p1);
        /* T = T + xs, instruction by instruction, rounded to nearest (er_b_eng_block), the RG groups'
         * chains side by side (one after the other they took 8% of volta's tolerance) */
        __m256d T[RG];
#pragma GCC unroll 4
        for (int g = 0; g < RG; g++) T[g] = _mm256_loadu_pd(st->T + q[g]);
        for (int64_t i = 0; i < nb; i++)
#pragma GCC unroll 4
            for (int g = 0; g < RG; g++) T[g] = _mm256_add_pd(T[g], _mm256_loadu_pd(xb + i * (EMR * ENG) + Rg.xo[g]));
        for (int g = 0; g < RG; g++) {
            __m256i b = Rg.bad[g];
            b = _mm256_or_si256(b, _mm256_castpd_si256(_mm256_cmp_pd(
                                       _mm256_add_pd(_mm256_add_pd(Rg.E[g], Rg.B[g]), Rg.R[g]), big, _CMP_NLE_UQ)));
            b = _mm256_or_si256(b, _mm256_cmpgt_epi64(zi, _mm256_castpd_si256(Rg.xsor[g])));
            b = _mm256_or_si256(b, _mm256_cmpgt_epi64(Rg.esmax[g], _mm256_set1_epi64x(K->limb)));
            b = _mm256_or_si256(b, _mm256_castpd_si256(_mm256_cmp_pd(Rg.B[g], maxc, _CMP_GE_OQ)));
            if (_mm256_testz_si256(b, b)) {
                _mm256_storeu_pd(st->T + q[g], T[g]);
                _mm256_storeu_pd(st->E + q[g], Rg.E[g]);
                _mm256_storeu_pd(st->B + q[g], Rg.B[g]);
                _mm256_storeu_pd(st->R + q[g], Rg.R[g]);
                continue;
            }
            lanewise |= 1u << (RG * pass + g);
            for (int l = 0; l < ENR; l++)
                for (int64_t i = 0; i < nb; i++)
                    block1(c, st, q[g] + l, xb[i * (EMR * ENG) + Rg.xo[g] + l], eb[i * (EMR * ENG) + Rg.xo[g] + l], nt,
                           p1 + i * nt);
        }
    }
    return lanewise;
}

/*
 * One chunk (kc terms from p0) of a 4 x 16 tile whose state starts at q0, tile512's steps with AVX2: the
 * exponents (exps_avx2 where every sum fits in int16, else exps_plain; or umax in their place, as
 * tile512 argues), the terms (terms_chunk_avx2, mode[t] per sub-tile), the recurrence (rec4; else
 * block4_avx2 instruction by instruction, lane by lane where it declines).
 */
__attribute__((target("avx2"))) static void tile_avx2(const er_bpar *c, const eng_k *Kf, const eng_k *Kl,
                                                          eng_state *st, int64_t q0, const double *const *a,
                                                          const double *const *aa, const int16_t *const *ea,
                                                          const double *b, const double *bq, const int16_t *eb,
                                                          int64_t kc, int64_t p0, int e16, const int *mode, double *xb,
                                                          int32_t *emb, int uok, int umax)
{
    const int64_t mk = c->mk, nb = (kc + mk - 1) / mk, nf = kc / mk;
    if (uok) {
        const __m256i eminb = _mm256_set1_epi64x(c->emin_c + 1023), z126 = _mm256_set1_epi64x(-126 + 1023);
        const __m256d zd = _mm256_setzero_pd(), inf = _mm256_set1_pd(INFINITY);
        __m256i m = _mm256_set1_epi64x(INT64_MAX);
        for (int r = 0; r < EMR; r++)
            for (int t = 0; t < ENG / ENR; t++) {
                const __m256d B = _mm256_loadu_pd(st->B + q0 + r * st->ld + t * ENR);
                const __m256d ok = _mm256_and_pd(_mm256_cmp_pd(B, zd, _CMP_GT_OQ), _mm256_cmp_pd(B, inf, _CMP_LT_OQ));
                const __m256i ecb = ER_MAX64_4(_mm256_srli_epi64(_mm256_castpd_si256(B), 52), eminb);
                const __m256i v = _mm256_blendv_epi8(z126, ecb, _mm256_castpd_si256(ok));
                m = _mm256_blendv_epi8(m, v, _mm256_cmpgt_epi64(m, v)); /* the smaller */
            }
        int64_t mv[4];
        _mm256_storeu_si256((__m256i *)mv, m);
        int64_t mn = mv[0] < mv[1] ? mv[0] : mv[1], mn2 = mv[2] < mv[3] ? mv[2] : mv[3];
        if ((int64_t)umax + c->gextra + 1023 <= (mn < mn2 ? mn : mn2)) {
            const __m256i uv = _mm256_set1_epi32(umax); /* (a scalar loop here was 6% of a check) */
            for (int64_t i = 0; i < nb * (EMR * ENG); i += 8) _mm256_storeu_si256((__m256i *)(void *)(emb + i), uv);
            e16 = -1;
        }
    }
    if (e16 < 0) {
        /* umax stands for emax */
    } else
        for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
            const int64_t ntt = kc - b0 < mk ? kc - b0 : mk;
            if (e16) exps_avx2(ea[0] + b0, ea[1] + b0, ea[2] + b0, ea[3] + b0, eb + b0 * ENG, ntt, emb + i * (EMR * ENG));
            else {
                const int16_t *erb[EMR] = {ea[0] + b0, ea[1] + b0, ea[2] + b0, ea[3] + b0};
                exps_plain(erb, eb + b0 * ENG, ntt, emb + i * (EMR * ENG));
            }
        }
    for (int t = 0; t < ENG / ENR; t++) {
        if ((t & 1) == 0 && mode[t] == 3 && mode[t + 1] == 3) { /* two sub-tiles at once */
            terms_pair3_avx2(aa, bq + t * ENR, kc, mk, xb + t * ENR);
            t++;
            continue;
        }
        terms_chunk_avx2(a, aa, b + t * ENR, bq + t * ENR, kc, mk, st->s + q0 + t * ENR, st->ld, xb + t * ENR,
                         mode[t]);
    }
    if (Kf->ok512 && Kl->ok512) {
        if (nf) (void)rec4(c, Kf, st, q0, xb, emb, nf, mk, p0 + mk);
        if (nb > nf) (void)rec4(c, Kl, st, q0, xb + nf * (EMR * ENG), emb + nf * (EMR * ENG), 1, kc - nf * mk, p0 + kc);
        return;
    }
    for (int64_t i = 0; i < nb; i++) {
        const int64_t ntt = i < nf ? mk : kc - nf * mk, p1 = p0 + i * mk + ntt;
        for (int r = 0; r < EMR; r++)
            for (int t = 0; t < ENG / ENR; t++) {
                int64_t q = q0 + r * st->ld + t * ENR, o = i * (EMR * ENG) + r * ENG + t * ENR;
                if (!block4_avx2(c, st->T + q, st->E + q, st->B + q, st->R + q, st->dn + q, xb + o, emb + o, ntt, p1))
                    for (int l = 0; l < ENR; l++) block1(c, st, q + l, xb[o + l], emb[o + l], ntt, p1);
            }
    }
}

/* ---- The AVX-512 kernels: tiles of 4 rows x 16 columns (two registers of binary64 per row), a whole
 * chunk of B at a time, each element's running sum in a register for the whole chunk. ---- */
#define ER_T512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))

/* er_b_add_ru(a, b), eight lanes: AVX-512's addition rounded toward +infinity (embedded rounding),
 * IEEE's roundTowardPositive, whose bits er_b_add_ru gives with TwoSum. */
ER_T512 static inline __m512d ru8(__m512d a, __m512d b)
{
    return _mm512_add_round_pd(a, b, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
}

/*
 * One chunk's terms of a 4 x 16 tile: rows a[r] and aa[r] (A' and its magnitudes on the instructions'
 * grids, from the chunk's first term), B's packed columns b and bq (ENG values per term), s the tile's
 * running sums (step ld), and for instruction i (mk terms, the last one what is left of kc) its sums
 * xs = sum aa bq (exact in any order: er_b_eng_q_value) into xb[i * 64 + r * 16 + c].  Each lane is one
 * element.  s: mode 3 none (the job's S serves), 2 fused multiply-adds (every product exact: the same
 * bits), else the multiply and the addition (terms_chunk_body).
 */
ER_T512 static inline __attribute__((always_inline)) void terms512_body(const double *const *a,
                                                                          const double *const *aa, const double *b,
                                                                          const double *bq, int64_t kc, int64_t mk,
                                                                          double *s, int64_t ld, double *xb,
                                                                          const int mode, const double *T0, double *tn,
                                                                          int64_t ntn)
{
    const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    const double *aa0 = aa[0], *aa1 = aa[1], *aa2 = aa[2], *aa3 = aa[3];
    __m512d s00 = _mm512_setzero_pd(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
    /* mode 3 (tn): T, each element's sum of the xs in instruction order, over the first ntn instructions
     * (er_b_eng_block's additions, here where the adders are idle; rec512 then stores tn) */
    __m512d t00 = s00, t01 = s00, t10 = s00, t11 = s00, t20 = s00, t21 = s00, t30 = s00, t31 = s00;
    if (mode == 3 && tn) {
        t00 = _mm512_loadu_pd(T0), t01 = _mm512_loadu_pd(T0 + 8);
        t10 = _mm512_loadu_pd(T0 + ld), t11 = _mm512_loadu_pd(T0 + ld + 8);
        t20 = _mm512_loadu_pd(T0 + 2 * ld), t21 = _mm512_loadu_pd(T0 + 2 * ld + 8);
        t30 = _mm512_loadu_pd(T0 + 3 * ld), t31 = _mm512_loadu_pd(T0 + 3 * ld + 8);
    }
    if (mode != 3) {
        s00 = _mm512_loadu_pd(s), s01 = _mm512_loadu_pd(s + 8);
        s10 = _mm512_loadu_pd(s + ld), s11 = _mm512_loadu_pd(s + ld + 8);
        s20 = _mm512_loadu_pd(s + 2 * ld), s21 = _mm512_loadu_pd(s + 2 * ld + 8);
        s30 = _mm512_loadu_pd(s + 3 * ld), s31 = _mm512_loadu_pd(s + 3 * ld + 8);
    }
    for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
        const int64_t p1 = kc - b0 < mk ? kc : b0 + mk;
        __m512d x00 = _mm512_setzero_pd(), x01 = x00, x10 = x00, x11 = x00, x20 = x00, x21 = x00, x30 = x00,
                x31 = x00;
        for (int64_t p = b0; p < p1; p++) {
            const __m512d bm0 = _mm512_loadu_pd(bq + p * ENG), bm1 = _mm512_loadu_pd(bq + p * ENG + 8);
/* acc0, acc1 += v * (y0, y1): one fused multiply-add per register (xs's terms; s's where fused) */
#define ER_FMA2(acc0, acc1, v, y0, y1)                                                                   \
    do {                                                                                                 \
        const __m512d v_ = _mm512_set1_pd(v);                                                            \
        acc0 = _mm512_fmadd_pd(v_, y0, acc0);                                                            \
        acc1 = _mm512_fmadd_pd(v_, y1, acc1);                                                            \
    } while (0)
            ER_FMA2(x00, x01, aa0[p], bm0, bm1);
            ER_FMA2(x10, x11, aa1[p], bm0, bm1);
            ER_FMA2(x20, x21, aa2[p], bm0, bm1);
            ER_FMA2(x30, x31, aa3[p], bm0, bm1);
            if (mode == 3) continue;
            const __m512d bv0 = _mm512_loadu_pd(b + p * ENG), bv1 = _mm512_loadu_pd(b + p * ENG + 8);
            if (mode == 2) {
                ER_FMA2(s00, s01, a0[p], bv0, bv1);
                ER_FMA2(s10, s11, a1[p], bv0, bv1);
                ER_FMA2(s20, s21, a2[p], bv0, bv1);
                ER_FMA2(s30, s31, a3[p], bv0, bv1);
#undef ER_FMA2
            } else {
#define ER_S1(sv0, sv1, ar)                                                                              \
    do {                                                                                                 \
        const __m512d av_ = _mm512_set1_pd(ar);                                                          \
        sv0 = _mm512_add_pd(sv0, _mm512_mul_pd(av_, bv0));                                               \
        sv1 = _mm512_add_pd(sv1, _mm512_mul_pd(av_, bv1));                                               \
    } while (0)
                ER_S1(s00, s01, a0[p]);
                ER_S1(s10, s11, a1[p]);
                ER_S1(s20, s21, a2[p]);
                ER_S1(s30, s31, a3[p]);
#undef ER_S1
            }
        }
        double *xo = xb + i * (EMR * ENG);
        if (mode == 3 && tn && i < ntn) {
            t00 = _mm512_add_pd(t00, x00), t01 = _mm512_add_pd(t01, x01);
            t10 = _mm512_add_pd(t10, x10), t11 = _mm512_add_pd(t11, x11);
            t20 = _mm512_add_pd(t20, x20), t21 = _mm512_add_pd(t21, x21);
            t30 = _mm512_add_pd(t30, x30), t31 = _mm512_add_pd(t31, x31);
        }
        _mm512_storeu_pd(xo, x00);
        _mm512_storeu_pd(xo + 8, x01);
        _mm512_storeu_pd(xo + 16, x10);
        _mm512_storeu_pd(xo + 24, x11);
        _mm512_storeu_pd(xo + 32, x20);
        _mm512_storeu_pd(xo + 40, x21);
        _mm512_storeu_pd(xo + 48, x30);
        _mm512_storeu_pd(xo + 56, x31);
    }
    if (mode == 3) {
        if (tn) {
            _mm512_storeu_pd(tn, t00), _mm512_storeu_pd(tn + 8, t01);
            _mm512_storeu_pd(tn + 16, t10), _mm512_storeu_pd(tn + 24, t11);
            _mm512_storeu_pd(tn + 32, t20), _mm512_storeu_pd(tn + 40, t21);
            _mm512_storeu_pd(tn + 48, t30), _mm512_storeu_pd(tn + 56, t31);
        }
        return;
    }
    _mm512_storeu_pd(s, s00);
    _mm512_storeu_pd(s + 8, s01);
    _mm512_storeu_pd(s + ld, s10);
    _mm512_storeu_pd(s + ld + 8, s11);
    _mm512_storeu_pd(s + 2 * ld, s20);
    _mm512_storeu_pd(s + 2 * ld + 8, s21);
    _mm512_storeu_pd(s + 3 * ld, s30);
    _mm512_storeu_pd(s + 3 * ld + 8, s31);
}

ER_T512 static void terms512(const double *const *a, const double *const *aa, const double *b, const double *bq,
                             int64_t kc, int64_t mk, double *s, int64_t ld, double *xb, int mode, const double *T0,
                             double *tn, int64_t ntn)
{
    if (mode == 3) {
        if (tn) terms512_body(a, aa, b, bq, kc, mk, s, ld, xb, 3, T0, tn, ntn);
        else terms512_body(a, aa, b, bq, kc, mk, s, ld, xb, 3, NULL, NULL, 0);
    } else if (mode == 2) terms512_body(a, aa, b, bq, kc, mk, s, ld, xb, 2, NULL, NULL, 0);
    else terms512_body(a, aa, b, bq, kc, mk, s, ld, xb, 1, NULL, NULL, 0);
}

/* One instruction's max-plus product of a 4 x 16 tile, terms [b0, p1), in exps512's layout (below):
 * *m01 rows 0 and 1, *m23 rows 2 and 3. */
ER_T512 static inline __attribute__((always_inline)) void maxplus512(const uint32_t *const *pr, const int16_t *eb2,
                                                                     int64_t b0, int64_t p1, __m512i *m01,
                                                                     __m512i *m23)
{
    __m512i a = _mm512_set1_epi16(INT16_MIN), b = a;
    for (int64_t p = b0; p < p1; p++) {
        const __m512i bv = _mm512_loadu_si512((const void *)(eb2 + p * (2 * ENG)));
        a = _mm512_max_epi16(a, _mm512_add_epi16(_mm512_set1_epi32((int)pr[0][p]), bv));
        b = _mm512_max_epi16(b, _mm512_add_epi16(_mm512_set1_epi32((int)pr[1][p]), bv));
    }
    *m01 = a;
    *m23 = b;
}

/*
 * One chunk's largest exponents of 4 rows x 16 columns, instruction i into eo[i * 64 + r * 16 + c], the
 * caller having checked that every e_a + e_b fits in int16 (the maximum is then exact): two rows per
 * register, 32 int16 lanes.  pr[h][p]: rows 2h and 2h + 1's exponents of term p as one 32-bit pair (low
 * half row 2h), eb2: B's exponents in dup512's layout (term p at eb2 + p * 32: 64-bit lane q holds
 * columns q, q, q + 8, q + 8), so that 16-bit lane 4q holds row 2h, column q, 4q + 1 row 2h + 1,
 * column q, 4q + 2 row 2h, column q + 8 and 4q + 3 row 2h + 1, column q + 8; they are then put back
 * into rows.
 */
ER_T512 static void exps512(const uint32_t *const *pr, const int16_t *eb2, int64_t kc, int64_t mk, int32_t *eo)
{
    int16_t pw[32]; /* word j: row 2h (j < 16) or 2h + 1, column j % 16 */
    for (int j = 0; j < 32; j++) {
        const int col = j % 16, odd = j >= 16;
        pw[j] = (int16_t)(col < 8 ? 4 * col + odd : 4 * (col - 8) + 2 + odd);
    }
    const __m512i perm = _mm512_loadu_si512((const void *)pw);
    for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
        const int64_t p1 = kc - b0 < mk ? kc : b0 + mk;
        __m512i m01, m23;
        maxplus512(pr, eb2, b0, p1, &m01, &m23);
        m01 = _mm512_permutexvar_epi16(perm, m01);
        m23 = _mm512_permutexvar_epi16(perm, m23);
        int32_t *o = eo + i * (EMR * ENG);
        _mm512_storeu_si512((void *)o, _mm512_cvtepi16_epi32(_mm512_castsi512_si256(m01)));
        _mm512_storeu_si512((void *)(o + 16), _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(m01, 1)));
        _mm512_storeu_si512((void *)(o + 32), _mm512_cvtepi16_epi32(_mm512_castsi512_si256(m23)));
        _mm512_storeu_si512((void *)(o + 48), _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(m23, 1)));
    }
}

/* exps512q's end of an instruction: m01 and m23 (rows 0-1 and 2-3 in exps512's layout: 64-bit lane q
 * holding (row 2h, column q), (2h + 1, q), (2h, q + 8), (2h + 1, q + 8) in its words 0..3) as the
 * patterns max(m + gx, eminb) << 52 at o[r * 16 + c]: each word, shifted left by four, moved to the top
 * word of its 64-bit lane by a shift, the rest cleared. */
ER_T512 static inline __attribute__((always_inline)) void e52_store(__m512i m01, __m512i m23, __m512i gxv,
                                                                      __m512i lo, __m512i top, int64_t *o)
{
    m01 = _mm512_slli_epi16(_mm512_max_epi16(_mm512_add_epi16(m01, gxv), lo), 4);
    m23 = _mm512_slli_epi16(_mm512_max_epi16(_mm512_add_epi16(m23, gxv), lo), 4);
#define ER_E52_OUT(o_, m_)                                                                               \
    do {                                                                                                 \
        _mm512_storeu_si512((void *)(o_), _mm512_slli_epi64(m_, 48));                                    \
        _mm512_storeu_si512((void *)((o_) + 8), _mm512_and_si512(_mm512_slli_epi64(m_, 16), top));       \
        _mm512_storeu_si512((void *)((o_) + 16), _mm512_and_si512(_mm512_slli_epi64(m_, 32), top));      \
        _mm512_storeu_si512((void *)((o_) + 24), _mm512_and_si512(m_, top));                             \
    } while (0)
    ER_E52_OUT(o, m01);
    ER_E52_OUT(o + 32, m23);
#undef ER_E52_OUT
}

/*
 * exps512's maxima as the recurrence's patterns (rec512's e52 layout): instruction i's element (r, c)
 * at eo[i * 64 + r * 16 + c] is max(emax + gx, eminb) << 52, gx = gextra + 1023: the biased exponent
 * emax + gextra, raised to emin_D's, in its place in a binary64 pattern.  The caller has checked that
 * every e_a + e_b fits in int16 and that emax + gx <= 2046, so that the sum, the maximum and the shift
 * by four are exact in int16; each pattern is then a 16-bit lane moved to the top of its 64-bit lane
 * (value << 4 << 48), the other lanes zero.
 */
ER_T512 static void exps512q(const uint32_t *const *pr, const int16_t *eb2, int64_t kc, int64_t mk, int gx, int eminb,
                             int64_t *eo)
{
    const __m512i gxv = _mm512_set1_epi16((short)gx), lo = _mm512_set1_epi16((short)eminb);
    const __m512i top = _mm512_set1_epi64((int64_t)UINT64_C(0xFFFF000000000000));
    for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
        const int64_t p1 = kc - b0 < mk ? kc : b0 + mk;
        __m512i m01, m23;
        maxplus512(pr, eb2, b0, p1, &m01, &m23);
        e52_store(m01, m23, gxv, lo, top, eo + i * (EMR * ENG));
    }
}

/*
 * The recurrence of a 4 x 16 tile over nb instructions of nt terms each (the first ending at term p1),
 * their sums and exponents in xb and eb (exps512's layout): rec4's operations eight lanes at a
 * time, four registers of eight elements interleaved, the state in registers from the first
 * instruction to the last.  A group of eight whose state is not the fast case at the start (a lane done,
 * a sign bit in B, E or R), or meets anything rec4 declines on the way (a sign bit in xs, an Es
 * outside the weight's normal range, a lane reaching done, an infinite or NaN value at the end, into
 * which every infinite or NaN intermediate propagates: E only grows, B grows or moves into R), is left
 * as it was and run by er_b_eng_block lane by lane, instruction by instruction: the same bits.  The
 * conditions are gathered over the chunk and tested at its end: the OR of the xs (a sign bit in any), the
 * largest Es, and without promotion the last B (B never decreases then, so it reached max_c at some
 * instruction exactly when it is there at the end; with promotion B and R are tested at every one).
 */
ER_T512 static inline __attribute__((always_inline)) void rec512_body(const er_bpar *c, const eng_k *K,
                                                                        eng_state *st, int64_t q0, const double *xb,
                                                                        const void *ebv, int64_t nb, int64_t nt,
                                                                        int64_t p1, const int zero_fix,
                                                                        const int low_check, const int promote,
                                                                        const int f2, const int es_ec, const int e52,
                                                                        const int umax, const double *tn)
{
    /* tn: the elements' T after these nb instructions, summed by terms512 (tile512's layout); else T
     * here */
    /* eb: exps512's int32 maxima, or (e52) exps512q's patterns */
    const int32_t *eb = (const int32_t *)ebv;
    const int64_t *eb64 = (const int64_t *)ebv;
    const __m512i one = _mm512_set1_epi64(1), zi = _mm512_setzero_si512();
    const __m512i eminb = _mm512_set1_epi64(K->eminb), gx = _mm512_set1_epi64(K->gx), limb = _mm512_set1_epi64(K->limb);
    const __m512i lowb = _mm512_set1_epi64(K->lowb), kt = _mm512_set1_epi64(K->kt), shsub = _mm512_set1_epi64(K->shsub);
    const __m512i expmask = _mm512_set1_epi64(0x7FF0000000000000LL), z126 = _mm512_set1_epi64(-126 + 1023);
    const __m512i eminb52 = _mm512_slli_epi64(eminb, 52), lowb52 = _mm512_slli_epi64(lowb, 52);
    /* the largest normal Es as a pattern (every field is at most 2047: none exceeds a larger one) */
    const __m512i limb52 = _mm512_set1_epi64(K->limb >= 2047 ? INT64_MAX : (int64_t)((uint64_t)K->limb << 52));
    const __m512d maxc = _mm512_set1_pd(K->maxc);
    const __m512i q2i = _mm512_castpd_si512(_mm512_set1_pd(K->q2));
    const __m512d big = _mm512_set1_pd(DBL_MAX), p24 = _mm512_set1_pd(0x1p-24), zd = _mm512_setzero_pd();
    const __m512i fsh = _mm512_set1_epi64(K->fsh), f2sh = _mm512_set1_epi64(K->f2sh), lowb2 = _mm512_set1_epi64(K->lowb2);
    const int64_t ld = st->ld;
#define ER_UP8(v) _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(v), one))
    for (int pass = 0; pass < 2; pass++) {
        int64_t q[4], xo[4];
        __m512d T[4], E[4], B[4], R[4];
        __m512i esmax[4];
        __mmask8 bad[4];
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            const int r = 2 * pass + (g >> 1), h = g & 1;
            uint64_t d8;
            q[g] = q0 + r * ld + h * 8;
            xo[g] = r * ENG + h * 8;
            memcpy(&d8, st->dn + q[g], 8);
            esmax[g] = zi;
            T[g] = _mm512_loadu_pd(st->T + q[g]);
            E[g] = _mm512_loadu_pd(st->E + q[g]);
            B[g] = _mm512_loadu_pd(st->B + q[g]);
            R[g] = _mm512_loadu_pd(st->R + q[g]);
            bad[g] = _mm512_cmplt_epi64_mask(
                _mm512_castpd_si512(_mm512_or_pd(_mm512_or_pd(B[g], E[g]), R[g])), zi);
            if (d8) bad[g] = 0xFF;
        }
        for (int64_t i = 0; i < nb; i++) {
            const int64_t pe = p1 + i * nt;
            const int pn = promote && (pe % c->promote == 0 || pe == c->k);
            const double *xi = xb + i * (EMR * ENG);
            const int32_t *ei = eb + i * (EMR * ENG);
            const int64_t *ei64 = eb64 + i * (EMR * ENG);
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++) {
                const __m512d xs = _mm512_loadu_pd(xi + xo[g]);
                __mmask8 bd = 0;
                if (!tn) T[g] = _mm512_add_pd(T[g], xs);
                const __m512d xs2 = xs;
                const __m512i bb = _mm512_castpd_si512(B[g]);
                __m512d trunc;
                if (es_ec) {
                    /* every emax + gextra of the chunk is at most every element's ec (tile512's umax
                     * test), so Es = ec = max(emin_D, frexp_e(B) - 1) (B > 0 here: a sign bit makes the
                     * group bad from the start, and B only grows), and Es << 52 is B's exponent field
                     * or emin_D's, whichever is larger; the largest Es is B's before the last step,
                     * at most the last B's, tested at the end */
                    trunc = _mm512_castsi512_pd(
                        _mm512_add_epi64(_mm512_max_epi64(_mm512_and_si512(bb, expmask), eminb52), kt));
                } else if (e52) {
                    /* Es << 52 = max(B's exponent field, (emax + gextra) << 52 raised to emin_D's): ec is
                     * max(field, emin_D) (no zero_fix: a zero B's -126 is emin_D) */
                    const __m512i Es52 =
                        _mm512_max_epi64(_mm512_and_si512(bb, expmask), _mm512_loadu_si512((const void *)(ei64 + xo[g])));
                    if (low_check) bd |= _mm512_cmpgt_epi64_mask(lowb52, Es52);
                    if (promote) esmax[g] = _mm512_max_epi64(esmax[g], Es52);
                    trunc = _mm512_castsi512_pd(_mm512_add_epi64(Es52, kt));
                } else {
                    /* biased exponents: ec = max(emin_D, frexp_e(B) - 1), -126 for a zero B */
                    __m512i ecb = _mm512_max_epi64(_mm512_srli_epi64(bb, 52), eminb);
                    if (zero_fix) ecb = _mm512_mask_mov_epi64(ecb, _mm512_cmpeq_epi64_mask(bb, zi), z126);
                    /* else Es = max(ec, emax + gextra) */
                    const __m512i emb = _mm512_add_epi64(
                        _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(ei + xo[g]))), gx);
                    const __m512i Esb = _mm512_max_epi64(ecb, emb);
                    esmax[g] = _mm512_max_epi64(esmax[g], Esb);
                    if (f2) {
                        /* CDNA3: up(cnt2 2^(em - F)), + 2^(Es - F), + 2^(Es - F2), each rounded up */
                        bd |= _mm512_cmpgt_epi64_mask(lowb, emb) | _mm512_cmpgt_epi64_mask(lowb2, Esb);
                        const __m512i es52 = _mm512_slli_epi64(Esb, 52);
                        trunc = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_slli_epi64(emb, 52), kt));
                        trunc = ru8(trunc, _mm512_castsi512_pd(_mm512_sub_epi64(es52, fsh)));
                        trunc = ru8(trunc, _mm512_castsi512_pd(_mm512_sub_epi64(es52, f2sh)));
                    } else {
                        if (low_check) bd |= _mm512_cmpgt_epi64_mask(lowb, Esb);
                        trunc = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_slli_epi64(Esb, 52), kt));
                    }
                }
                const __m512d dmax = ru8(ru8(B[g], xs2), trunc);
                /* 2^max(sh, qe): the larger as signed 64-bit patterns (a field at or below shsub gives
                 * +0 or a negative one, which q2 > 0 exceeds; non-negative doubles order as their bits) */
                const __m512d norm = _mm512_castsi512_pd(_mm512_max_epi64(
                    _mm512_sub_epi64(_mm512_and_si512(_mm512_castpd_si512(dmax), expmask), shsub), q2i));
                E[g] = ru8(ru8(E[g], trunc), norm);
                B[g] = ru8(dmax, norm);
                if (promote) /* else B never decreases: its last value is checked */
                    bd |= _mm512_cmp_pd_mask(B[g], maxc, _CMP_GE_OQ) | _mm512_cmp_pd_mask(R[g], maxc, _CMP_GE_OQ);
                if (pn) {
                    const __m512d rnew = ru8(R[g], B[g]);
                    const __m512d perr = ER_UP8(_mm512_mul_pd(rnew, p24));
                    E[g] = ru8(E[g], perr);
                    R[g] = ru8(rnew, perr);
                    B[g] = zd;
                }
                bad[g] |= bd;
            }
        }
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            if (es_ec) esmax[g] = _mm512_max_epi64(_mm512_srli_epi64(_mm512_castpd_si512(B[g]), 52), eminb);
            /* e52 without promotion: every Es is at most the last B's field or the largest emax + gextra,
             * which the caller has checked against limb */
            if (e52 && !promote) esmax[g] = _mm512_and_si512(_mm512_castpd_si512(B[g]), expmask);
            bad[g] |= _mm512_cmp_pd_mask(_mm512_add_pd(_mm512_add_pd(E[g], B[g]), R[g]), big, _CMP_NLE_UQ);
            /* (xs is a sum of values on grids, never negative: rec4's sign test is not needed here) */
            bad[g] |= (e52 ? _mm512_cmpgt_epi64_mask(esmax[g], limb52) : _mm512_cmpgt_epi64_mask(esmax[g], limb)) |
                      _mm512_cmp_pd_mask(B[g], maxc, _CMP_GE_OQ);
            if (!bad[g]) {
                _mm512_storeu_pd(st->T + q[g], tn ? _mm512_loadu_pd(tn + xo[g]) : T[g]);
                _mm512_storeu_pd(st->E + q[g], E[g]);
                _mm512_storeu_pd(st->B + q[g], B[g]);
                _mm512_storeu_pd(st->R + q[g], R[g]);
                continue;
            }
            for (int l = 0; l < 8; l++)
                for (int64_t i = 0; i < nb; i++)
                    block1(c, st, q[g] + l, xb[i * (EMR * ENG) + xo[g] + l],
                           es_ec ? umax
                           /* e52: emax raised to emin_D - gextra, the same Es (ec >= emin_D) */
                           : e52 ? (int)((uint64_t)eb64[i * (EMR * ENG) + xo[g] + l] >> 52) - (int)K->gx
                                 : eb[i * (EMR * ENG) + xo[g] + l],
                           nt, p1 + i * nt);
        }
    }
#undef ER_UP8
}

/* The models rec512 runs with its es_ec and tn variants (no CDNA3 branch, no zero_fix, no low check,
 * no promotion): the only ones where it reads no exponent (es_ec) and takes T from terms512 (tn).
 * tile512 asks this before skipping the exponents or summing T, so that the variant that runs is the
 * one it prepared for. */
static inline int rec512_common(const eng_k *K) { return !K->f2 && !K->zero_fix && !K->low_check && !K->promote; }

/* es_ec: umax stands for emax (eb unread); e52: eb holds exps512q's patterns (never with f2 or zero_fix) */
ER_T512 static void rec512(const er_bpar *c, const eng_k *K, eng_state *st, int64_t q0, const double *xb,
                           const void *eb, int64_t nb, int64_t nt, int64_t p1, int es_ec, int e52, int umax,
                           const double *tn)
{
    if (K->f2) rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, K->zero_fix, 1, K->promote, 1, 0, 0, 0, NULL);
    else if (rec512_common(K)) {
        /* the common models: T from terms512 where it summed it */
        if (es_ec) {
            if (tn) rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, 0, 0, 0, 0, 1, 0, umax, tn);
            else rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, 0, 0, 0, 0, 1, 0, umax, NULL);
        } else if (e52) {
            if (tn) rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, 0, 0, 0, 0, 0, 1, 0, tn);
            else rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, 0, 0, 0, 0, 0, 1, 0, NULL);
        } else rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, 0, 0, 0, 0, 0, 0, 0, NULL);
    } else if (e52) rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, 0, K->low_check, K->promote, 0, 0, 1, 0, NULL);
    else rec512_body(c, K, st, q0, xb, eb, nb, nt, p1, K->zero_fix, K->low_check, K->promote, 0, 0, 0, 0, NULL);
}

/* B's exponents (cnt int16, a multiple of ENG: one term of a group per 16) for exps512 and exps512q: each
 * term's 16 columns as 32 words, 64-bit lane q holding columns q, q, q + 8, q + 8. */
ER_T512 static void dup512(const int16_t *e, int16_t *e2, int64_t cnt)
{
    int16_t w[32];
    for (int q = 0; q < 8; q++) w[4 * q] = w[4 * q + 1] = (int16_t)q, w[4 * q + 2] = w[4 * q + 3] = (int16_t)(q + 8);
    const __m512i idx = _mm512_loadu_si512((const void *)w);
    for (int64_t i = 0; i + 16 <= cnt; i += 16)
        _mm512_storeu_si512((void *)(e2 + 2 * i),
                            _mm512_permutexvar_epi16(idx, _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(e + i)))));
}

/*
 * One chunk (kc terms from p0) of a 4 x 16 tile whose state starts at q0: the exponents (exps512 where
 * every sum fits in int16, else exps_plain), the terms (terms512, mode as there), then the recurrence
 * (rec512; CDNA3's branch and the other models eng_k_set does not take: block4_avx2, lane by lane where
 * it declines), instruction by instruction for each element: every element's operations in its order.
 */
ER_T512 static void tile512(const er_bpar *c, const eng_k *Kf, const eng_k *Kl, eng_state *st, int64_t q0,
                            const double *const *a, const double *const *aa, const int16_t *const *ea,
                            const uint32_t *const *pr, const double *b, const double *bq, const int16_t *eb,
                            const int16_t *eb2, int64_t kc, int64_t p0, int e16, int mode, double *xb, int32_t *emb,
                            int uok, int umax)
{
    const int64_t mk = c->mk, nb = (kc + mk - 1) / mk, nf = kc / mk;
    if (uok) {
        /* umax bounds every e_a + e_b of the tile and chunk.  Without promotion and outside CDNA3's
         * branch emax enters er_b_eng_block only as Es = max(emax + gextra, ec), and ec never
         * decreases while an element is not done (B never does, and stays finite and positive once
         * it is); so where umax + gextra <= ec for every element now (ec as er_b_eng_block forms it:
         * -126 for a B that is not positive and finite), Es = ec at every instruction of the chunk
         * whatever emax is, and umax serves as emax: the same bits, without the exponents' products */
        const __m512i eminb = _mm512_set1_epi64(c->emin_c + 1023), z126 = _mm512_set1_epi64(-126 + 1023);
        const __m512d zd = _mm512_setzero_pd(), inf = _mm512_set1_pd(INFINITY);
        __m512i m = _mm512_set1_epi64(INT64_MAX);
        for (int r = 0; r < EMR; r++)
            for (int h = 0; h < 2; h++) {
                const __m512d B = _mm512_loadu_pd(st->B + q0 + r * st->ld + h * 8);
                const __mmask8 ok = _mm512_cmp_pd_mask(B, zd, _CMP_GT_OQ) & _mm512_cmp_pd_mask(B, inf, _CMP_LT_OQ);
                const __m512i ecb = _mm512_max_epi64(_mm512_srli_epi64(_mm512_castpd_si512(B), 52), eminb);
                m = _mm512_min_epi64(m, _mm512_mask_mov_epi64(z126, ok, ecb));
            }
        /* only where the recurrence that runs reads no exponent: rec512's es_ec variant (the common
         * models); with f16 accumulators (zero_fix), the low check, or block4_avx2, the exponents are
         * read, so they are formed (an earlier version skipped them there and those variants read the
         * previous tile's: test_engine_kernel, kernel_skipped_exponents) */
        if (Kf->ok512 && Kl->ok512 && rec512_common(Kf) && rec512_common(Kl) &&
            (int64_t)umax + c->gextra + 1023 <= _mm512_reduce_min_epi64(m))
            e16 = -1; /* rec512 reads no exponent; a group it declines runs er_b_eng_block with umax */
    }
    /* e52: the maxima as rec512's patterns (exps512q), where the recurrence takes them (no CDNA3 branch,
     * no zero_fix) and every emax + gextra is a biased exponent of at most 2046 and at most limb, so
     * that the end's test of the last B's field stands for every instruction's Es (rec512_body) */
    const int64_t ubig = (int64_t)umax + c->gextra + 1023;
    const int e52 = e16 > 0 && Kf->ok512 && Kl->ok512 && !Kf->f2 && !Kf->zero_fix && ubig <= 2046 &&
                    ubig <= Kf->limb && ubig <= Kl->limb;
    if (e16 < 0) {
        /* umax stands for emax */
    } else if (e52) exps512q(pr, eb2, kc, mk, (int)Kf->gx, (int)Kf->eminb, (int64_t *)(void *)emb);
    else if (e16) exps512(pr, eb2, kc, mk, emb);
    else
        for (int64_t b0 = 0, i = 0; b0 < kc; b0 += mk, i++) {
            const int16_t *erb[EMR] = {ea[0] + b0, ea[1] + b0, ea[2] + b0, ea[3] + b0};
            exps_plain(erb, eb + b0 * ENG, kc - b0 < mk ? kc - b0 : mk, emb + i * (EMR * ENG));
        }
    /* T summed by terms512 over the whole instructions, where rec512's common models take it (mode 3) */
    const int tin = mode == 3 && nf && Kf->ok512 && Kl->ok512 && rec512_common(Kf) && (e16 < 0 || e52);
    double tn[EMR * ENG];
    terms512(a, aa, b, bq, kc, mk, st->s + q0, st->ld, xb, mode, st->T + q0, tin ? tn : NULL, nf);
    if (Kf->ok512 && Kl->ok512) {
        if (nf) rec512(c, Kf, st, q0, xb, emb, nf, mk, p0 + mk, e16 < 0, e52, umax, tin ? tn : NULL);
        if (nb > nf)
            rec512(c, Kl, st, q0, xb + nf * (EMR * ENG),
                   e52 ? (const void *)((const int64_t *)(void *)emb + nf * (EMR * ENG))
                       : (const void *)(emb + nf * (EMR * ENG)),
                   1, kc - nf * mk, p0 + kc, e16 < 0, e52, umax, NULL);
        return;
    }
    for (int64_t i = 0; i < nb; i++) {
        const int64_t nt = i < nf ? mk : kc - nf * mk, p1 = p0 + i * mk + nt;
        for (int r = 0; r < EMR; r++)
            for (int t = 0; t < ENG / ENR; t++) {
                int64_t q = q0 + r * st->ld + t * ENR, o = i * (EMR * ENG) + r * ENG + t * ENR;
                if (!block4_avx2(c, st->T + q, st->E + q, st->B + q, st->R + q, st->dn + q, xb + o, emb + o, nt, p1))
                    for (int l = 0; l < ENR; l++) block1(c, st, q + l, xb[o + l], emb[o + l], nt, p1);
            }
    }
}
#define ER_HAVE_AVX512_ENGINE 1
#endif

/* The widest kernels the processor has: 2 AVX-512 (F, BW, DQ, VL, with AVX2 and FMA), 1 AVX2, 0 none. */
static int simd_hw(void)
{
#ifdef ER_HAVE_AVX2_ENGINE
    return er_isa_hw();
#else
    return 0;
#endif
}

/* As the environment says: the widest the processor has, AVX2 at most with EXACTREF_NO_AVX512, the
 * portable kernels with EXACTREF_NO_SIMD (the tests compare every path). */
static int simd_wanted(void)
{
    int h = simd_hw(), e = er_isa(); /* host/er_isa.h */
    return h < e ? h : e;
}

int er_cpu_engine_simd(int simd)
{
    int h = simd_hw();
    if (simd < 0) return simd_wanted();
    return simd < h ? simd : h;
}

int er_cpu_eng_block4(const er_bpar *c, double *T, double *E, double *B, double *R, unsigned char *done,
                      const double *xs, const int32_t *emax, int64_t nt, int64_t p1)
{
#ifdef ER_HAVE_AVX2_ENGINE
    if (__builtin_cpu_supports("avx2")) {
        /* a tile of one instruction whose first group holds the four lanes, every other element done
         * (er_b_eng_block leaves it as it is): rec4 where eng_k_set takes the model, else block4_avx2,
         * each with its lane-by-lane fallback, as tile_avx2 runs them */
        enum { NT = EMR * ENG };
        double s_[NT] = {0}, T_[NT] = {0}, E_[NT] = {0}, B_[NT] = {0}, R_[NT] = {0}, xb[NT] = {0};
        unsigned char dn[NT];
        int32_t eb[NT] = {0};
        eng_state st = {ENG, s_, T_, E_, B_, R_, dn};
        memset(dn, 1, sizeof dn);
        for (int l = 0; l < ENR; l++) {
            T_[l] = T[l];
            E_[l] = E[l];
            B_[l] = B[l];
            R_[l] = R[l];
            dn[l] = done[l];
            xb[l] = xs[l];
            eb[l] = emax[l];
        }
        eng_k K;
        eng_k_set(c, &K, nt, p1);
        int vec;
        if (K.ok512) vec = !(rec4(c, &K, &st, 0, xb, eb, 1, nt, p1) & 1u);
        else if ((vec = block4_avx2(c, T_, E_, B_, R_, dn, xb, eb, nt, p1)) == 0)
            for (int l = 0; l < ENR; l++) block1(c, &st, l, xb[l], eb[l], nt, p1);
        for (int l = 0; l < ENR; l++) {
            T[l] = T_[l];
            E[l] = E_[l];
            B[l] = B_[l];
            R[l] = R_[l];
            done[l] = dn[l];
        }
        return vec;
    }
#endif
    (void)c, (void)T, (void)E, (void)B, (void)R, (void)done, (void)xs, (void)emax, (void)nt, (void)p1;
    return -1;
}

/* ---- The driver. ---- */

#include "cpu_finish.h"

/* finish_rows is flattened (every call inlined, the output format a constant in each copy); the
 * sanitizer and fuzzing builds define ER_NO_FLATTEN: the same code without the forced inlining, which
 * doubled this file's instrumented compile (clang -O1 with ASan and UBSan: 101 s, 51 s without) */
#ifdef ER_NO_FLATTEN
#define ER_FLATTEN
#else
#define ER_FLATTEN __attribute__((flatten))
#endif

/* the finish a vector of elements at a time: cpu_engine_lanes.h at AVX-512's and AVX2's widths */
#define ER_VEC_KERNELS "cpu_engine_lanes.h"
#include "cpu_vec_each.h"

/*
 * er_b_ends_exact for an engine's element (er_b_eng_element) with cpu_finish.h's rounding: decided by
 * the enclosure s64 +- e64 of the exact sum x (eng_ends), else by a Sum2 of the products in index order
 * (TwoSum, the error terms summed in binary64; Ogita, Rump and Oishi 2005: |res - x_p| <= 2^-52 |res| +
 * 2 gamma_k^2 sum |x_p| for the products' sum x_p, each product exact (the formats', or checked by
 * fma); sum |x_p| <= T infl, T the state's sum of the blocks' magnitudes, as er_b_eng_final's e64 uses
 * it), else by the core's exact sum: the same bits whichever decides (any enclosure decides the same
 * keys).  The elements the first enclosure leaves open wait in a batch; a flush sums their products in
 * one pass over B's rows (each element's own operations in index order), where a column read with step
 * n for each element alone misses the cache at every term.  The flush is out of line: finish_rows is
 * flattened once per output format, and the exact accumulator inlined into each copy lengthened this
 * file's compile (from about 54 s to 136 s under the sanitizers) for a path few elements take.
 */
enum { RARE_CAP = 256 };
typedef struct {
    int64_t i, c, e;  /* row, column, element of the batch */
    double cval, xl, xh, T, rad;
} rare_el;
typedef struct {
    const er_bjob *j;
    int use_S;        /* every value of A' and B' finite */
    int cnt;
    /* the exact-sum certificate (eng_ends): rows r0.. and every column, the least exponent bound less
     * the format's fraction bits (a bound of the lowest set bit of every value), or NULL */
    int64_t r0;
    const int *alsb, *blsb;
    rare_el L[RARE_CAP];
} eng_rare;

/* The exponent of the lowest set bit of a finite nonzero binary64 value. */
static inline int lsb_exp(double v)
{
    uint64_t u = er_b_bits(v) & UINT64_C(0x7FFFFFFFFFFFFFFF);
    int be = (int)(u >> 52);
    uint64_t m = be ? (u & UINT64_C(0x000FFFFFFFFFFFFF)) | (UINT64_C(1) << 52) : u;
    return (be ? be - 1075 : -1074) + __builtin_ctzll(m);
}

static __attribute__((noinline)) void rare_flush(const er_bpar *par, const er_cpu_fq *fq, eng_rare *rr, er_bounds *out, int64_t e0)
{
    const er_bjob *j = rr->j;
    const int64_t k = par->k, n = j->n;
    const int cnt = rr->cnt;
    double sum[RARE_CAP], err[RARE_CAP];
    int exact[RARE_CAP];
    const double *ar[RARE_CAP];
    /* every product exact: the formats' (er_bjob), every value finite (use_S): the per-product test holds */
    const int pexact = rr->use_S && j->prod_exact;
    for (int t = 0; t < cnt; t++) sum[t] = err[t] = 0, exact[t] = 1, ar[t] = j->af + rr->L[t].i * k;
    if (fq->ok) {
        for (int64_t p = 0; p < k; p++) {
            const double *brow = j->bf + p * n;
            for (int t = 0; t < cnt; t++) {
                double a = ar[t][p], b = brow[rr->L[t].c], x = a * b;
                if (!pexact) exact[t] &= er_b_finite(x) && fma(a, b, -x) == 0;
                double tt = sum[t] + x, bb = tt - sum[t];
                err[t] = err[t] + ((sum[t] - (tt - bb)) + (x - bb));
                sum[t] = tt;
            }
        }
    }
    for (int t = 0; t < cnt; t++) {
        const rare_el *r = &rr->L[t];
        er_bel o;
        if (fq->ok) {
            double res = sum[t] + err[t];
            if (exact[t] && er_b_finite(res)) {
                double infl = 1.0 + (double)(k + 8) * 0x1p-51, ge = er_b_up(er_b_gamma(0x1p-53, (double)k) * (double)k);
                double Tu = er_b_up(r->T * infl);
                double e2 = er_b_up(er_b_up(fabs(res) * 0x1p-52) + er_b_up(er_b_up(ge * ge) * er_b_up(2.0 * Tu)));
                double rl = er_b_down(res - e2), rh = er_b_up(res + e2);
                if (par->has_c) {
                    rl = er_b_down(rl + r->cval);
                    rh = er_b_up(rh + r->cval);
                }
                if (er_b_finite(e2) && er_cpu_fq_keys(fq, j->rb[r->e], rl, rh, r->rad, &o)) {
                    er_bel_store(out, e0 + r->e, &o);
                    continue;
                }
            }
        }
        er_b_ends_exact(par, ar[t], j->bf + r->c, r->cval, j->rb[r->e], r->xl, r->xh, r->rad, &o);
        er_bel_store(out, e0 + r->e, &o);
    }
    rr->cnt = 0;
}

/*
 * An element's ends from s64 +- e64 where they decide (stored); else, where s64 is the exact sum, from it
 * (er_b_dd_ends with no error: RD(x - rad) and RU(x + rad) themselves, er_b_ends_exact's results); else
 * queued for the rare steps.  s64 is exact when every product is exact (prod_exact) and a multiple of
 * 2^L, C too, and the sum of their magnitudes, at most T infl + |C|, is below 2^(L + 53): then every
 * partial sum of any order (S's, or the kernel's s) is a multiple of 2^L below 2^(L + 53), and so every
 * addition exact.  L is the row's and the column's least exponent bound less their formats' fraction
 * bits (alsb, blsb): each nonzero value's lowest set bit is at least that (docs/proofs/engines.md).
 */
static inline void eng_ends(const er_bpar *par, const er_cpu_fq *fq, eng_rare *rr, er_bounds *out, int64_t e0,
                            int64_t i, int64_t c, int64_t e, double cval, double s64, double e64, double T, double rad)
{
    double xl = er_b_down(s64 - e64), xh = er_b_up(s64 + e64);
    er_bel o;
    if (er_cpu_fq_keys(fq, rr->j->rb[e], xl, xh, rad, &o)) {
        er_bel_store(out, e0 + e, &o);
        return;
    }
    if (rr->alsb) {
        const int L = rr->alsb[i - rr->r0] + rr->blsb[c];
        double Tb = er_b_up(T * (1.0 + (double)(par->k + 8) * 0x1p-51)), lo, hi;
        if (par->has_c) Tb = er_b_up(Tb + fabs(cval));
        if (L >= -1000 && L <= 900 && Tb < er_b_pow2(L + 53) && (!par->has_c || cval == 0 || lsb_exp(cval) >= L) &&
            er_b_dd_ends(s64, 0.0, 0.0, rad, &lo, &hi)) {
            er_b_finish_lh(par, rr->j->rb[e], lo, hi, rad, 0, 0, 0, 0, &o);
            er_bel_store(out, e0 + e, &o);
            return;
        }
    }
    rare_el *r = &rr->L[rr->cnt++];
    r->i = i, r->c = c, r->e = e, r->cval = cval, r->xl = xl, r->xh = xh, r->T = T, r->rad = rad;
    if (rr->cnt == RARE_CAP) rare_flush(par, fq, rr, out, e0);
}

/* The elements of rows [i0, i0 + mc) x columns [jc, jc + nc) from their finished states
 * (er_b_eng_element), everything inlined: with the output format a constant (the common ones), the
 * conversions of er_b_finish fold their format's row (the same functions, the same bits). */
static inline void finish_fmt(const er_bpar *par, const er_bjob *j, const eng_state *st,
                                                er_bounds *out, int64_t e0, int64_t i0, int64_t mc, int64_t jc,
                                                int64_t nc, eng_rare *rr)
{
    const int64_t n = j->n;
    er_cpu_fq fq_;
    const er_cpu_fq *fq = &fq_;
    er_cpu_fq_init(&fq_, par);
    /* eight or four elements at a time where the processor allows; the lanes left, one by one below */
    int vw = fq->ok && !j->dc ? er_vec_width() : 0;
#ifdef ER_VEC_HAVE
    er_v8_eng V8;
    er_v4_eng V4;
    if (vw == 8) er_v8_eng_init(&V8, par, fq);
    if (vw == 4) er_v4_eng_init(&V4, par, fq);
#else
    vw = 0;
#endif
    for (int64_t r = 0; r < mc; r++) {
        unsigned done = 0;
        int64_t base = -8;
        for (int64_t c = 0; c < nc; c++) {
            int64_t e = (i0 + r) * n + jc + c, q = r * st->ld + c;
            if (vw && (c & (vw - 1)) == 0 && c + vw <= nc) {
#ifdef ER_VEC_HAVE
                done = vw == 8 ? er_v8_eng_finish(&V8, j, st, q, e, out, e0 + e)
                               : er_v4_eng_finish(&V4, j, st, q, e, out, e0 + e);
#endif
                base = c;
            }
            if (c - base < vw && ((done >> (c - base)) & 1u)) continue;
            double cval = j->cv ? j->cv[e] : 0.0;
            er_b_eng g;
            er_bel b;
            er_b_eng_init(par, &g, cval, j->dc ? j->dc[e] : 0.0); /* pert */
            g.s = st->s[q];
            g.T = st->T[q];
            g.E = st->E[q];
            g.B = st->B[q];
            g.R = st->R[q];
            g.done = st->dn[q];
            /* er_b_eng_element, its finish through cpu_finish.h's rounding where the common case holds */
            double s64 = 0, e64 = 0, rad;
            int nonfinite = 0;
            rad = er_b_eng_final(par, &g, cval, &s64, &e64, &nonfinite);
            if (nonfinite || !er_b_finite(rad))
                er_b_finish(par, j->rb[e], s64, e64, rad, nonfinite,
                            (par->slack_a || par->slack_b || par->slack_c) && !er_b_finite(rad), &b);
            else {
                eng_ends(par, fq, rr, out, e0, i0 + r, jc + c, e, cval, s64, e64, g.T, rad);
                continue;
            }
            er_bel_store(out, e0 + e, &b);
        }
    }
    if (rr->cnt) rare_flush(par, fq, rr, out, e0);
}

ER_FLATTEN static void finish_rows(const er_bjob *j, const eng_state *st, er_bounds *out, int64_t e0,
                                                 int64_t i0, int64_t mc, int64_t jc, int64_t nc, eng_rare *rr)
{
    er_bpar p = j->par;
    switch (p.out_fmt) {
    case ER_FMT_F32: p.out_fmt = ER_FMT_F32; finish_fmt(&p, j, st, out, e0, i0, mc, jc, nc, rr); break;
    case ER_FMT_BF16: p.out_fmt = ER_FMT_BF16; finish_fmt(&p, j, st, out, e0, i0, mc, jc, nc, rr); break;
    case ER_FMT_F16: p.out_fmt = ER_FMT_F16; finish_fmt(&p, j, st, out, e0, i0, mc, jc, nc, rr); break;
    default: finish_fmt(&p, j, st, out, e0, i0, mc, jc, nc, rr); break;
    }
}


/* Largest magnitude, an infinity for any infinite or NaN value (so that a product with it is not
 * "known finite"). */
static double mag_max(double m, double v)
{
    double a = fabs(v);
    if (!(a <= DBL_MAX)) return INFINITY;
    return a > m ? a : m;
}

/* A row of A' (k values ar, exponents er): its largest magnitude as mag_max gives it (an infinity
 * where a value is not finite), the exponents' range folded into *emn, *emx, and each chunk's largest
 * exponent into cm[c] (chunks of kc terms), four and sixteen lanes at a time with AVX2: the same
 * maxima and minima as the one-value loop. */
__attribute__((target("avx2"))) static double row_scan_avx2(const double *ar, const int16_t *er, int64_t k, int64_t kc,
                                                           int *emn, int *emx, int16_t *cm)
{
    const __m256d am = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL)), big = _mm256_set1_pd(DBL_MAX);
    __m256d mv = _mm256_setzero_pd(), nf = _mm256_setzero_pd();
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
        const __m256d a = _mm256_and_pd(_mm256_loadu_pd(ar + p), am);
        nf = _mm256_or_pd(nf, _mm256_cmp_pd(a, big, _CMP_NLE_UQ)); /* not <= DBL_MAX: infinite or NaN */
        mv = _mm256_max_pd(mv, a);
    }
    double l[4], m = 0;
    _mm256_storeu_pd(l, mv);
    for (int t = 0; t < 4; t++) m = l[t] > m ? l[t] : m;
    if (_mm256_movemask_pd(nf)) m = INFINITY;
    for (; p < k; p++) m = mag_max(m, ar[p]);
    int mn = *emn, mx = *emx;
    for (int64_t c = 0, p0 = 0; p0 < k; c++, p0 += kc) {
        const int64_t p1 = k - p0 < kc ? k : p0 + kc;
        __m256i vmx = _mm256_set1_epi16(INT16_MIN), vmn = _mm256_set1_epi16(INT16_MAX);
        int64_t q = p0;
        for (; q + 16 <= p1; q += 16) {
            const __m256i e = _mm256_loadu_si256((const __m256i *)(const void *)(er + q));
            vmx = _mm256_max_epi16(vmx, e);
            vmn = _mm256_min_epi16(vmn, e);
        }
        int16_t hx[16], hn[16];
        _mm256_storeu_si256((__m256i *)(void *)hx, vmx);
        _mm256_storeu_si256((__m256i *)(void *)hn, vmn);
        int16_t x = INT16_MIN;
        for (int t = 0; t < 16; t++) {
            x = hx[t] > x ? hx[t] : x;
            mn = hn[t] < mn ? hn[t] : mn;
        }
        for (; q < p1; q++) {
            x = er[q] > x ? er[q] : x;
            mn = er[q] < mn ? er[q] : mn;
        }
        mx = x > mx ? x : mx;
        if (cm) cm[c] = x;
    }
    if (k == 0 && cm) cm[0] = INT16_MIN; /* one (empty) chunk, as the one-value loop has it */
    *emn = mn;
    *emx = mx;
    return m;
}

/*
 * Whether every product of finite values of v (cnt values) with finite values of another such array
 * is exact in binary64: each finite nonzero value has at most 26 significant bits (its low 27 fraction
 * bits zero) and a normal exponent e in [-512, 510].  Then a = M_a 2^(e_a - 25) with M_a < 2^26, so
 * ab = M_a M_b 2^(e_a + e_b - 50) with M_a M_b < 2^52 and e_a + e_b - 50 >= -1074: a binary64 value,
 * below 2^1022 (finite).  Every operand an engine reads is such a value: at most f32's 24 bits, and an
 * f32 subnormal times the smallest block scale, 2^-149 2^-127, is far above 2^-512 (the largest,
 * below 2^128 2^127, far below 2^510).  Zeros, infinities and NaNs are no obstacle (a tile with an
 * infinity or NaN never takes the fused path).
 */
#ifdef ER_HAVE_AVX512_ENGINE
/* prod_exact eight values at a time (the same test). */
ER_T512 static int prod_exact512(const double *v, int64_t cnt)
{
    const __m512i low = _mm512_set1_epi64((INT64_C(1) << 27) - 1), fm = _mm512_set1_epi64(0x7FF);
    const __m512i lo = _mm512_set1_epi64(1023 - 512), hi = _mm512_set1_epi64(1023 + 510);
    __mmask8 bad = 0;
    int64_t i = 0;
    for (; i + 8 <= cnt; i += 8) {
        __m512i u = _mm512_loadu_si512((const void *)(v + i));
        __m512i f = _mm512_and_si512(_mm512_srli_epi64(u, 52), fm);
        __mmask8 fine = _mm512_cmpeq_epi64_mask(_mm512_slli_epi64(u, 1), _mm512_setzero_si512()) |
                        _mm512_cmpeq_epi64_mask(f, fm) |
                        (_mm512_testn_epi64_mask(u, low) & _mm512_cmpge_epi64_mask(f, lo) & _mm512_cmple_epi64_mask(f, hi));
        bad |= (__mmask8)~fine;
    }
    if (bad) return 0;
    for (; i < cnt; i++) {
        uint64_t u;
        memcpy(&u, &v[i], 8);
        uint64_t f = (u >> 52) & 0x7FF;
        if (!((u << 1) == 0 || f == 0x7FF || ((u & ((UINT64_C(1) << 27) - 1)) == 0 && f >= 1023 - 512 && f <= 1023 + 510)))
            return 0;
    }
    return 1;
}
#endif

static int prod_exact(const double *v, int64_t cnt)
{
    uint64_t badm = 0;
    for (int64_t i = 0; i < cnt; i++) {
        uint64_t u;
        memcpy(&u, &v[i], 8);
        uint64_t f = (u >> 52) & 0x7FF, low = u & ((UINT64_C(1) << 27) - 1);
        int zero = (u << 1) == 0, special = f == 0x7FF;
        int ok = zero || special || (low == 0 && f >= 1023 - 512 && f <= 1023 + 510);
        badm |= (uint64_t)!ok;
    }
    return badm == 0;
}

/* A strip of EMR rows of the chunk from term p0 (kc terms), rows i0 + ir.. (a padding row repeats the
 * last real one, mc rows being real): the rows' values ar, their magnitudes on the instructions' grids
 * aq (the job's qa), exponents er; *amx the strip's largest |a|, *umax its largest e_a in the chunk (rcm:
 * row i - r0, chunk c at (i - r0) nch + c; INT_MIN without it). */
static void strip_rows(const er_bjob *j, int64_t r0, int64_t i0, int64_t ir, int64_t mc, int64_t p0, int64_t chunk,
                       const double *amax, const int16_t *rcm, int64_t nch, const double **ar, const double **aq,
                       const int16_t **er, double *amx, int *umax)
{
    const int64_t k = j->par.k;
    *amx = 0;
    *umax = INT_MIN;
    for (int r = 0; r < EMR; r++) {
        int64_t i = i0 + (ir + r < mc ? ir + r : mc - 1);
        if (rcm && rcm[(i - r0) * nch + chunk] > *umax) *umax = rcm[(i - r0) * nch + chunk];
        ar[r] = j->af + i * k + p0;
        aq[r] = j->qa + i * k + p0;
        er[r] = j->ea + i * k + p0;
        if (amax[i - r0] > *amx) *amx = amax[i - r0];
    }
}

int er_cpu_engine_rows(const er_bjob *j, er_bounds *out, int64_t e0, int64_t r0, int64_t r1, int simd,
                       er_progress *pg)
{
    const er_bpar *par = &j->par;
    const int64_t n = j->n, k = par->k, mk = par->mk;
    if (par->kind != ER_BK_ENGINE || !j->ea || !j->eb || !j->qa || !j->qb || par->slack_a || par->slack_b || mk < 1)
        return 0;
    if (r0 >= r1 || n <= 0) return 1;
    simd = er_cpu_engine_simd(simd);
    const int64_t rows = r1 - r0;
    const int64_t KC = mk * (EKC / mk > 0 ? EKC / mk : 1);
    const int64_t MC = rows < EMC ? (rows + EMR - 1) / EMR * EMR : EMC;
    const int64_t kcap = k < KC ? (k > 0 ? k : 1) : KC, nbcap = (kcap + mk - 1) / mk;
    /* the job's S serves as s where every value of A' and B' is finite (then S, from any order and any
     * BLAS, is finite exactly when the index-order s is: below; A's rows are tested as they are scanned) */
    int use_S = j->S != NULL;
    for (int64_t q = 0; use_S && q < k * n; q++) use_S = fabs(j->bf[q]) <= DBL_MAX;
    /* fused multiply-adds: xs's terms aq bq are always exact (er_b_eng_q_value), s's where every product
     * is (prod_exact: needed only where s is formed); where the processor has them */
    int has_fma = 0, fused = 0;
#ifdef ER_HAVE_AVX2_ENGINE
    has_fma = simd == 2 || (simd == 1 && __builtin_cpu_supports("fma"));
    if (has_fma && !use_S) {
#ifdef ER_HAVE_AVX512_ENGINE
        if (simd == 2) fused = prod_exact512(j->af + r0 * k, rows * k) && prod_exact512(j->bf, k * n);
        else
#endif
            fused = prod_exact(j->af + r0 * k, rows * k) && prod_exact(j->bf, k * n);
    }
#endif
    eng_state st;
    st.ld = ENC;
    size_t ns = (size_t)(MC * ENC);
    st.s = malloc(sizeof(double) * ns);
    st.T = malloc(sizeof(double) * ns);
    st.E = malloc(sizeof(double) * ns);
    st.B = malloc(sizeof(double) * ns);
    st.R = malloc(sizeof(double) * ns);
    st.dn = malloc(ns);
    double *pv = malloc(sizeof(double) * (size_t)(kcap * ENC)); /* B's chunk: group g, term p, column c */
    double *pq = malloc(sizeof(double) * (size_t)(kcap * ENC)); /* B's chunk on its grids (qb), as pv */
    int16_t *pe = malloc(sizeof(int16_t) * (size_t)(kcap * ENC));
    double *amax = malloc(sizeof(double) * (size_t)rows);
    /* AVX-512: a chunk's xs and emax, B's exponents with each column twice, and the exponents of the
     * strips' row pairs (strip q: rows r0 + 4q.. as the driver pads them, pair h at (2q + h) * k) */
    const int64_t nstrip = (rows + EMR - 1) / EMR;
    double *xbuf = simd >= 1 ? malloc(sizeof(double) * (size_t)(nbcap * EMR * ENG)) : NULL;
    /* int32 maxima, or tile512's int64 patterns (e52) */
    int32_t *ebuf = simd >= 1 ? malloc(sizeof(int64_t) * (size_t)(nbcap * EMR * ENG)) : NULL;
    int16_t *pe2 = simd == 2 ? malloc(sizeof(int16_t) * (size_t)(kcap * ENC * 2)) : NULL;
    uint32_t *apr = simd == 2 ? malloc(sizeof(uint32_t) * (size_t)(nstrip * 2 * k)) : NULL;
    const int64_t nch = (k + KC - 1) / KC > 0 ? (k + KC - 1) / KC : 1;
    int16_t *rcm = simd >= 1 ? malloc(sizeof(int16_t) * (size_t)(rows * nch)) : NULL; /* row i, chunk c: max e_a */
    eng_rare *rare = malloc(sizeof(eng_rare)); /* the rare end steps' batch (eng_ends) */
    /* the exact-sum certificate's lowest bits: every product exact by the formats, no groups (group
     * models raise small elements' exponent bounds) */
    const int cert = j->prod_exact && par->gextra == 0;
    int *alsb = cert ? malloc(sizeof(int) * (size_t)rows) : NULL, *blsb = cert ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (rare) {
        rare->j = j, rare->cnt = 0, rare->use_S = use_S, rare->r0 = r0;
        rare->alsb = rare->blsb = NULL;
        if (alsb && blsb) {
            int16_t *bm = malloc(sizeof(int16_t) * (size_t)n);
            if (bm) {
                for (int64_t c = 0; c < n; c++) bm[c] = INT16_MAX;
                for (int64_t p = 0; p < k; p++) {
                    const int16_t *er = j->eb + p * n;
                    for (int64_t c = 0; c < n; c++) bm[c] = er[c] < bm[c] ? er[c] : bm[c];
                }
                for (int64_t c = 0; c < n; c++) blsb[c] = bm[c] - j->b_mbits;
                for (int64_t i = 0; i < rows; i++) {
                    const int16_t *er = j->ea + (r0 + i) * k;
                    int16_t m = INT16_MAX;
                    for (int64_t p = 0; p < k; p++) m = er[p] < m ? er[p] : m;
                    alsb[i] = m - j->a_mbits;
                }
                rare->alsb = alsb, rare->blsb = blsb;
                free(bm);
            }
        }
    }
    int ok = st.s && st.T && st.E && st.B && st.R && st.dn && pv && pq && pe && amax && rare &&
             (simd != 2 || (pe2 && apr)) && (simd < 1 || (xbuf && ebuf && rcm));
    if (ok) {
        int eamin = INT16_MAX, eamax = INT16_MIN;
        for (int64_t i = 0; i < rows; i++) {
            const double *ar = j->af + (r0 + i) * k;
            const int16_t *er = j->ea + (r0 + i) * k;
            double m = 0;
            if (simd >= 1) { /* (the one-value loop below was 2.6% of a hopper check on AVX2) */
                m = row_scan_avx2(ar, er, k, KC, &eamin, &eamax, rcm ? rcm + i * nch : NULL);
                amax[i] = m;
                if (!(m <= DBL_MAX)) use_S = 0;
                continue;
            }
            for (int64_t p = 0; p < k; p++) {
                m = mag_max(m, ar[p]);
                if (er[p] < eamin) eamin = er[p];
                if (er[p] > eamax) eamax = er[p];
            }
            amax[i] = m;
            if (!(m <= DBL_MAX)) use_S = 0;
            if (rcm)
                for (int64_t c = 0; c < nch; c++) {
                    int16_t x = INT16_MIN;
                    for (int64_t p = c * KC; p < k && p < (c + 1) * KC; p++) x = er[p] > x ? er[p] : x;
                    rcm[i * nch + c] = x;
                }
        }
        if (apr)
            for (int64_t q = 0; q < nstrip; q++)
                for (int h = 0; h < 2; h++) {
                    int64_t ilo = r0 + 4 * q + 2 * h, ihi = ilo + 1;
                    ilo = ilo < r1 ? ilo : r1 - 1;
                    ihi = ihi < r1 ? ihi : r1 - 1;
                    const int16_t *el = j->ea + ilo * k, *eh = j->ea + ihi * k;
                    uint32_t *o = apr + (2 * q + h) * k;
                    for (int64_t p = 0; p < k; p++) o[p] = (uint32_t)(uint16_t)el[p] | (uint32_t)(uint16_t)eh[p] << 16;
                }
        for (int64_t jc = 0; jc < n; jc += ENC) {
            const int64_t nc = n - jc < ENC ? n - jc : ENC, ncp = (nc + ENG - 1) / ENG * ENG, ng = ncp / ENG;
            for (int64_t i0 = r0; i0 < r1; i0 += MC) {
                const int64_t mc = r1 - i0 < MC ? r1 - i0 : MC, mcp = (mc + EMR - 1) / EMR * EMR;
                /* the state (the padding rows and columns as elements without C: computed, never read) */
                for (int64_t r = 0; r < mcp; r++)
                    for (int64_t c = 0; c < ncp; c++) {
                        int real = r < mc && c < nc;
                        int64_t e = (i0 + r) * n + jc + c, q = r * st.ld + c;
                        er_b_eng g;
                        er_b_eng_init(par, &g, real && j->cv ? j->cv[e] : 0.0, real && j->dc ? j->dc[e] : 0.0);
                        st.s[q] = 0;
                        st.T[q] = g.T;
                        st.E[q] = g.E;
                        st.B[q] = g.B;
                        st.R[q] = g.R;
                        st.dn[q] = (unsigned char)(g.done != 0);
                    }
                for (int64_t p0 = 0; p0 < k; p0 += KC) {
                    const int64_t kc = k - p0 < KC ? k - p0 : KC;
                    double pmax[ENC / ENR];
                    int ebmin = INT16_MAX, ebmax = INT16_MIN;
                    /* pack B's chunk (zeros beyond column n) and each tile column's largest magnitude; with
                     * S the kernels read no value of B' (the terms form xs only; a kernel without fma forms
                     * an s that S then replaces), so the chunk packed is B's grids' (qb), pq = pv */
                    const double *bsrc = use_S ? j->qb : j->bf;
                    double *pqx = use_S ? pv : pq;
                    for (int64_t t = 0; t < ncp / ENR; t++) pmax[t] = 0;
                    for (int64_t g = 0; g < ng; g++) {
#ifdef ER_HAVE_AVX2_ENGINE
                        if (simd && (g + 1) * ENG <= nc) {
                            pack_avx2(bsrc + p0 * n + jc + g * ENG, j->eb + p0 * n + jc + g * ENG, n, kc,
                                      pv + g * kc * ENG, pe + g * kc * ENG, pmax + g * (ENG / ENR), &ebmin, &ebmax);
                            continue;
                        }
#endif
                        for (int64_t p = 0; p < kc; p++) {
                            const double *brow = bsrc + (p0 + p) * n;
                            const int16_t *erow = j->eb + (p0 + p) * n;
                            double *dv = pv + (g * kc + p) * ENG;
                            int16_t *de = pe + (g * kc + p) * ENG;
                            for (int c = 0; c < ENG; c++) {
                                int64_t col = jc + g * ENG + c;
                                double v = col < jc + nc ? brow[col] : 0.0;
                                int16_t e = col < jc + nc ? erow[col] : 0;
                                dv[c] = v;
                                de[c] = e;
                                pmax[(g * ENG + c) / ENR] = mag_max(pmax[(g * ENG + c) / ENR], v);
                                if (e < ebmin) ebmin = e;
                                if (e > ebmax) ebmax = e;
                            }
                        }
                    }
                    /* B's chunk on its instructions' grids (the job's qb), in pv's layout */
                    for (int64_t g = 0; g < ng && !use_S; g++)
                        for (int64_t p = 0; p < kc; p++) {
                            const double *qrow = j->qb + (p0 + p) * n + jc + g * ENG;
                            double *dq = pq + (g * kc + p) * ENG;
                            const int64_t cv = nc - g * ENG < ENG ? nc - g * ENG : ENG;
                            memcpy(dq, qrow, sizeof(double) * (size_t)cv);
                            for (int64_t c = cv; c < ENG; c++) dq[c] = 0.0;
                        }
                    /* int16 lanes only where every e_a + e_b fits */
                    const int e16 = simd && eamax + ebmax <= INT16_MAX && eamin + ebmin >= -INT16_MAX;
                    eng_k Kf, Kl; /* the recurrence's constants: whole instructions, and a last partial one */
                    eng_k_set(par, &Kf, mk, p0 + mk);
                    eng_k_set(par, &Kl, kc % mk ? kc % mk : mk, p0 + kc);
#ifdef ER_HAVE_AVX512_ENGINE
                    if (simd == 2) {
                        /* the exponents' products may be skipped (tile512) without promotion, outside CDNA3's branch */
                        const int uok = !par->promote && !par->F2 && Kf.ok && Kl.ok;
                        /* B's exponents with each column twice (the row pairs' lanes) */
                        if (e16) dup512(pe, pe2, ng * kc * ENG);
                        /* a strip of A stays in the first-level cache while the groups of B pass */
                        for (int64_t ir = 0; ir < mcp; ir += EMR) {
                            const double *ar[EMR], *aq[EMR];
                            const int16_t *er[EMR];
                            const uint32_t *pr[2] = {apr + (2 * ((i0 - r0 + ir) / EMR)) * k + p0,
                                                     apr + (2 * ((i0 - r0 + ir) / EMR) + 1) * k + p0};
                            double amx;
                            int umax; /* the largest e_a of the strip's rows in the chunk, then + e_b's */
                            strip_rows(j, r0, i0, ir, mc, p0, p0 / KC, amax, rcm, nch, ar, aq, er, &amx, &umax);
                            umax += ebmax;
                            for (int64_t g = 0; g < ng; g++) {
                                int fast16 = 1;
                                for (int t = 0; t < ENG / ENR; t++) fast16 &= amx * pmax[g * (ENG / ENR) + t] <= DBL_MAX;
                                tile512(par, &Kf, &Kl, &st, ir * st.ld + g * ENG, ar, aq, er, pr, pv + g * kc * ENG,
                                        pqx + g * kc * ENG, pe + g * kc * ENG, pe2 + g * kc * 2 * ENG, kc, p0, e16,
                                        use_S ? 3 : fast16 && fused ? 2 : 1, xbuf, ebuf, uok, umax);
                            }
                        }
                    } else
#endif
#ifdef ER_HAVE_AVX2_ENGINE
                    if (simd == 1) {
                        const int uok = !par->promote && !par->F2 && Kf.ok && Kl.ok;
                        for (int64_t ir = 0; ir < mcp; ir += EMR) {
                            const double *ar[EMR], *aq[EMR];
                            const int16_t *er[EMR];
                            double amx;
                            int umax; /* the largest e_a of the strip's rows in the chunk, then + e_b's */
                            strip_rows(j, r0, i0, ir, mc, p0, p0 / KC, amax, rcm, nch, ar, aq, er, &amx, &umax);
                            umax += ebmax;
                            for (int64_t g = 0; g < ng; g++) {
                                /* 3: xs only (fused multiply-adds, the job's S as s); 2: s too, fused (every
                                 * product exact and finite); 1: s by multiply and add (terms_chunk_body) */
                                int mode[ENG / ENR];
                                for (int t = 0; t < ENG / ENR; t++)
                                    mode[t] = use_S && has_fma ? 3
                                              : fused && amx * pmax[g * (ENG / ENR) + t] <= DBL_MAX ? 2
                                                                                               : 1;
                                tile_avx2(par, &Kf, &Kl, &st, ir * st.ld + g * ENG, ar, aq, er, pv + g * kc * ENG,
                                          pqx + g * kc * ENG, pe + g * kc * ENG, kc, p0, e16, mode, xbuf, ebuf, uok,
                                          umax);
                            }
                        }
                    } else
#endif
                    for (int64_t ir = 0; ir < mcp; ir += EMR) { /* the portable kernels */
                        const double *ar[EMR], *aq[EMR];
                        const int16_t *er[EMR];
                        double amx;
                        int umax;
                        strip_rows(j, r0, i0, ir, mc, p0, p0 / KC, amax, NULL, nch, ar, aq, er, &amx, &umax);
                        for (int64_t g = 0; g < ng; g++) {
                            /* the tiles with a column of B (the others: padding only) */
                            const int64_t tl = (nc - g * ENG + ENR - 1) / ENR;
                            const int ntl = (int)(tl < ENG / ENR ? tl : ENG / ENR);
                            for (int64_t b0 = 0; b0 < kc; b0 += mk) {
                                const int64_t nt = kc - b0 < mk ? kc - b0 : mk, p1 = p0 + b0 + nt;
                                const double *bvals = pv + (g * kc + b0) * ENG, *bqs = pqx + (g * kc + b0) * ENG;
                                const int16_t *bexps = pe + (g * kc + b0) * ENG;
                                int32_t em[EMR * ENG];
                                double xs[ENG / ENR][EMR * ENR];
                                const double *arb[EMR], *aqb[EMR];
                                const int16_t *erb[EMR];
                                for (int r = 0; r < EMR; r++) {
                                    arb[r] = ar[r] + b0;
                                    aqb[r] = aq[r] + b0;
                                    erb[r] = er[r] + b0;
                                }
                                exps_plain(erb, bexps, nt, em);
                                for (int t = 0; t < ntl; t++)
                                    terms_plain(arb, aqb, bvals + t * ENR, bqs + t * ENR, nt,
                                                st.s + ir * st.ld + g * ENG + t * ENR, st.ld, xs[t]);
                                for (int r = 0; r < EMR; r++)
                                    for (int t = 0; t < ntl; t++) {
                                        int64_t q = (ir + r) * st.ld + g * ENG + t * ENR;
                                        for (int l = 0; l < ENR; l++)
                                            block1(par, &st, q + l, xs[t][r * ENR + l], em[r * ENG + t * ENR + l],
                                                   nt, p1);
                                    }
                            }
                        }
                    }
                }
                /* the job's S (the reference's A'B' in any order) in place of each element's s: s only
                 * encloses the exact sum, within e64 = (k + 3) u T infl for every order of the additions
                 * (er_b_eng_final; docs/proofs/engines.md), and with every value finite both are finite
                 * for an element not done (every partial below 2 max_c); a done element reads neither */
                if (use_S)
                    for (int64_t r = 0; r < mc; r++)
                        memcpy(st.s + r * st.ld, j->S + (i0 + r) * n + jc, sizeof(double) * (size_t)nc);
                /* the elements from their finished states */
                rare->use_S = use_S;
                finish_rows(j, &st, out, e0, i0, mc, jc, nc, rare);
                er_progress_add(pg, mc * nc);
            }
        }
    }
    free(st.s);
    free(st.T);
    free(st.E);
    free(st.B);
    free(st.R);
    free(st.dn);
    free(pv);
    free(pq);
    free(rare);
    free(alsb);
    free(blsb);
    free(pe2);
    free(apr);
    free(rcm);
    free(pe);
    free(amax);
    free(xbuf);
    free(ebuf);
    return ok;
}
