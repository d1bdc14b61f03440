/* op_attention_math.c: attention's exact reference (rounded once, MPFR where binary64 cannot decide) and the per-standard enclosures. */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/core/er_bounds.h"
#include "exactref/core/er_exp.h"
#include "exactref/core/er_types.h"
#include "exactref/formats.h"
#include "../host/er_msg.h"
#include "op_attention.h"
#include "op_impl.h"

#define msgf er_msgf

/*
 * Certified binary64 enclosures of exp (the operation layer's, docs/proofs/ops-math.md) and of log: the
 * C library's log moved 2 steps outward, accepted only where the certified exp of the ends brackets
 * the argument (exp(lo) <= x <= exp(hi)), else moved further.
 */
static double exp_dn(double x)
{
    double lo, hi;
    er_ops_exp(x, &lo, &hi);
    return lo;
}
static double exp_up(double x)
{
    double lo, hi;
    er_ops_exp(x, &lo, &hi);
    return hi;
}
static double log_dn(double x)
{
    if (!(x > 0)) return -INFINITY;
    if (x == INFINITY) return INFINITY;
    double y = er_b_down(er_b_down(log(x)));
    for (int k = 0; k < 64; k++) {
        double lo, hi;
        er_ops_exp(y, &lo, &hi);
        if (hi <= x) return y;
        y = er_b_down(y - fabs(y) * 0x1p-40 - 0x1p-1000);
    }
    return -INFINITY;
}
static double log_up(double x)
{
    if (!(x > 0)) return -INFINITY;
    if (x == INFINITY) return INFINITY;
    double y = er_b_up(er_b_up(log(x)));
    for (int k = 0; k < 64; k++) {
        double lo, hi;
        er_ops_exp(y, &lo, &hi);
        if (lo >= x) return y;
        y = er_b_up(y + fabs(y) * 0x1p-40 + 0x1p-1000);
    }
    return INFINITY;
}

/*
 * Fast outward bounds: x >= 0 computed from exact non-negative operands (or bounds) by at most 8
 * roundings to nearest lies within x (1 -+ 2^-49.9) of the exact result (each rounding a factor 1 + d,
 * |d| <= 2^-53; an underflowing one errs by at most 2^-1075 absolute): DN8 and UP8 move it past that.
 * HALFW(l, h, m): a radius r with [l, h] within [m - r, m + r], m = RN((l + h) / 2).
 */
#define DN8(x) ((x) * (1.0 - 0x1p-49) - 0x1p-1000)
#define UP8(x) ((x) * (1.0 + 0x1p-49) + 0x1p-1000)
#define HALFW(l, h, m) (0.5 * ((h) - (l)) * (1.0 + 0x1p-50) + (m) * 0x1p-52 + 0x1p-1000)

/*
 * x >= 0 rounded to nearest even into a float format of precision p (significand bits with the hidden
 * one) and least normal exponent emin, assuming no overflow (the P values are at most about 1): the
 * quantum of x's binade (or of the subnormal range) scaled out, nearbyint (ties to even in the default
 * mode), scaled back, all exact.
 */
static double rnd_to(int fmt, double x);
typedef struct rnd_spec {
    int fmt, p, emin;
    double mx;
} rnd_spec;
static rnd_spec rnd_spec_of(int fmt)
{
    er_fmt f = er_fmt_get(fmt);
    rnd_spec r;
    r.fmt = fmt, r.p = f.mbits + 1, r.emin = er_fmt_emin(f);
    r.mx = ldexp(2.0 - ldexp(1.0, 1 - r.p), er_fmt_emax(f));
    return r;
}
/* the same by exact scalings by powers of two (emin > -1023 and p <= 50 for every format taking this
 * path: the scaled value lies below 2^50 and the shifter 2^52 rounds it to an integer, ties to even) */
static double rnd_fast(const rnd_spec *r, double x)
{
    if (!(x > 0) || !isfinite(x)) return x;
    if (r->p > 50 || r->emin <= -1022) return rnd_to(r->fmt, x);
    int e = (int)((er_b_bits(x) >> 52) & 0x7FF) - 1023; /* -1023 for a subnormal x: below emin */
    if (e < r->emin) e = r->emin;
    double y = x * er_b_pow2(r->p - 1 - e);
    double n = (y + 0x1p52) - 0x1p52;
    double v = n * er_b_pow2(e - r->p + 1);
    return v > r->mx ? rnd_to(r->fmt, x) : v;
}

/* rounding of a binary64 value to nearest even into fmt, as a binary64 value and a pattern */
static double rnd_to(int fmt, double x)
{
    double y = x;
    if (fmt == ER_FMT_F64) return x;
    if (er_round_double(fmt, x, ER_RND_NEAREST_EVEN, &y) != ER_OK) return NAN;
    return y;
}
static uint64_t bits_to(int fmt, double x)
{
    uint64_t b = 0;
    double y = rnd_to(fmt, x);
    er_bits_of(fmt, y, &b);
    return b;
}

/* whether key j takes part in row i */
static int takes_part(const er_attn_prob *p, int64_t b, int64_t h, int64_t i, int64_t j, double *mk)
{
    *mk = 0.0;
    if (p->causal && j > i) return 0;
    if (p->mask) {
        double m = p->mask[b * p->mstride[0] + h * p->mstride[1] + i * p->mstride[2] + j * p->mstride[3]];
        if (m == -INFINITY) return 0;
        *mk = m;
    }
    return 1;
}


/* ---- Vector kernels: the same sums, several independent elements at a time (each lane's sum is one
 * element's, in index order, with or without fma: any order admits both). ---- */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_ATTN_X86 1
static int has_avx2(void)
{
    static int v = -1;
    if (v < 0) v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return v;
}
/* d[j] = sum_x q[x] KT[x][j], t[j] = sum_x |q[x]| |KT[x][j]| over j < Sk: 16 keys at a time held in
 * registers over the whole sum (each lane's sum is still one element's, in index order, with fma) */
__attribute__((target("avx2,fma"))) static void dots_avx2(const double *q, const double *KT, int64_t Sk, int64_t D,
                                                           int64_t nq, double *d, double *t)
{
    int64_t j16 = Sk & ~(int64_t)15, j4 = Sk & ~(int64_t)3;
    const __m256d sgn = _mm256_set1_pd(-0.0);
    /* a block of 16 keys (16 KB at D = 128) stays in the first-level cache for the nq rows */
    for (int64_t j = 0; j < j16; j += 16)
        for (int64_t g = 0; g < nq; g++) {
            const double *qg = q + g * D;
            double *dg = d + g * Sk, *tg = t + g * Sk;
            __m256d d0 = _mm256_setzero_pd(), d1 = d0, d2 = d0, d3 = d0, t0 = d0, t1 = d0, t2 = d0, t3 = d0;
            const double *kr = KT + j;
            for (int64_t x = 0; x < D; x++, kr += Sk) {
                __m256d qb = _mm256_set1_pd(qg[x]), qa = _mm256_set1_pd(fabs(qg[x]));
                __m256d k0 = _mm256_loadu_pd(kr), k1 = _mm256_loadu_pd(kr + 4), k2 = _mm256_loadu_pd(kr + 8),
                        k3 = _mm256_loadu_pd(kr + 12);
                d0 = _mm256_fmadd_pd(qb, k0, d0), d1 = _mm256_fmadd_pd(qb, k1, d1);
                d2 = _mm256_fmadd_pd(qb, k2, d2), d3 = _mm256_fmadd_pd(qb, k3, d3);
                t0 = _mm256_fmadd_pd(qa, _mm256_andnot_pd(sgn, k0), t0), t1 = _mm256_fmadd_pd(qa, _mm256_andnot_pd(sgn, k1), t1);
                t2 = _mm256_fmadd_pd(qa, _mm256_andnot_pd(sgn, k2), t2), t3 = _mm256_fmadd_pd(qa, _mm256_andnot_pd(sgn, k3), t3);
            }
            _mm256_storeu_pd(dg + j, d0), _mm256_storeu_pd(dg + j + 4, d1), _mm256_storeu_pd(dg + j + 8, d2),
                _mm256_storeu_pd(dg + j + 12, d3);
            _mm256_storeu_pd(tg + j, t0), _mm256_storeu_pd(tg + j + 4, t1), _mm256_storeu_pd(tg + j + 8, t2),
                _mm256_storeu_pd(tg + j + 12, t3);
        }
    for (int64_t g = 0; g < nq; g++) {
        const double *qg = q + g * D;
        double *dg = d + g * Sk, *tg = t + g * Sk;
        for (int64_t j = j16; j < Sk; j++) dg[j] = 0, tg[j] = 0;
        for (int64_t x = 0; x < D; x++) {
            const double *kr = KT + x * Sk;
            __m256d qb = _mm256_set1_pd(qg[x]), qa = _mm256_set1_pd(fabs(qg[x]));
            for (int64_t j = j16; j < j4; j += 4) {
                __m256d kv = _mm256_loadu_pd(kr + j);
                _mm256_storeu_pd(dg + j, _mm256_fmadd_pd(qb, kv, _mm256_loadu_pd(dg + j)));
                _mm256_storeu_pd(tg + j, _mm256_fmadd_pd(qa, _mm256_andnot_pd(sgn, kv), _mm256_loadu_pd(tg + j)));
            }
            for (int64_t j = j4; j < Sk; j++) dg[j] = fma(qg[x], kr[j], dg[j]), tg[j] = fma(fabs(qg[x]), fabs(kr[j]), tg[j]);
        }
    }
}
/* the next binary64 above / below each lane (er_b_up / er_b_down: a zero gives +-2^-1074, a non-finite
 * lane stays) */
__attribute__((target("avx2,fma"))) static __m256d up4(__m256d x)
{
    const __m256d z = _mm256_setzero_pd(), inf = _mm256_set1_pd(INFINITY), sgn = _mm256_set1_pd(-0.0);
    __m256i u = _mm256_castpd_si256(x);
    __m256i gt = _mm256_castpd_si256(_mm256_cmp_pd(x, z, _CMP_GT_OQ)), lt = _mm256_castpd_si256(_mm256_cmp_pd(x, z, _CMP_LT_OQ));
    __m256d r = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_sub_epi64(u, gt), lt));
    r = _mm256_blendv_pd(r, _mm256_castsi256_pd(_mm256_set1_epi64x(1)), _mm256_cmp_pd(x, z, _CMP_EQ_OQ));
    return _mm256_blendv_pd(x, r, _mm256_cmp_pd(_mm256_andnot_pd(sgn, x), inf, _CMP_LT_OQ));
}
__attribute__((target("avx2,fma"))) static __m256d down4(__m256d x)
{
    const __m256d z = _mm256_setzero_pd(), inf = _mm256_set1_pd(INFINITY), sgn = _mm256_set1_pd(-0.0);
    __m256i u = _mm256_castpd_si256(x);
    __m256i gt = _mm256_castpd_si256(_mm256_cmp_pd(x, z, _CMP_GT_OQ)), lt = _mm256_castpd_si256(_mm256_cmp_pd(x, z, _CMP_LT_OQ));
    __m256d r = _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_add_epi64(u, gt), lt));
    r = _mm256_blendv_pd(r, _mm256_castsi256_pd(_mm256_set1_epi64x((long long)0x8000000000000001ULL)),
                         _mm256_cmp_pd(x, z, _CMP_EQ_OQ));
    return _mm256_blendv_pd(x, r, _mm256_cmp_pd(_mm256_andnot_pd(sgn, x), inf, _CMP_LT_OQ));
}
/*
 * er_ops_exp four lanes at a time: the same operations in the same order (no fma: the Horner steps are a
 * product then a sum, as the scalar code compiled with contraction off), so each lane's [lo, hi] is the
 * scalar function's, bit for bit, and its proof (docs/proofs/ops-math.md) holds unchanged.  A lane outside
 * the fast path (x zero, not finite, |x| > 708, or a reduction outside |t| <= 0.35) is left to the
 * scalar function.  hi may be NULL.
 */
__attribute__((target("avx2,fma"))) static void exp_many_avx2(const double *x, double *lo, double *hi, int64_t n)
{
    static const double c[14] = {
        1.0, 1.0, 0.5, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10,
        0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
        0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
    };
    const __m256d sgn = _mm256_set1_pd(-0.0), sh = _mm256_set1_pd(0x1.8p52), t69 = _mm256_set1_pd(0x1p-69),
                  lim = _mm256_set1_pd(0.35), xl = _mm256_set1_pd(708.0), z = _mm256_setzero_pd();
    int64_t n4 = n & ~(int64_t)3;
    for (int64_t j = 0; j < n4; j += 4) {
        __m256d xv = _mm256_loadu_pd(x + j);
        __m256d kk = _mm256_add_pd(_mm256_mul_pd(xv, _mm256_set1_pd(ER_EXP_INV_LN2)), sh);
        __m256d k = _mm256_sub_pd(kk, sh);
        __m256d kh = _mm256_mul_pd(k, _mm256_set1_pd(ER_EXP_LN2_HI));
        __m256d d1 = _mm256_sub_pd(xv, kh), r1l = down4(d1), r1h = up4(d1);
        __m256d kl1 = _mm256_mul_pd(k, _mm256_set1_pd(ER_EXP_LN2_LO)), kll = down4(kl1), klh = up4(kl1);
        __m256d tl = down4(_mm256_sub_pd(down4(_mm256_sub_pd(r1l, klh)), t69));
        __m256d th = up4(_mm256_add_pd(up4(_mm256_sub_pd(r1h, kll)), t69));
        __m256d ok = _mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sgn, xv), xl, _CMP_LE_OQ),
                                   _mm256_cmp_pd(xv, z, _CMP_NEQ_OQ));
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(_mm256_andnot_pd(sgn, tl), lim, _CMP_LE_OQ));
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(_mm256_andnot_pd(sgn, th), lim, _CMP_LE_OQ));
        int okm = _mm256_movemask_pd(ok);
        /* 2^k from the shifter's bits: kk = 2^52 + 2^51 + k exactly */
        __m256i kb = _mm256_sub_epi64(_mm256_castpd_si256(kk), _mm256_set1_epi64x(0x4338000000000000LL - 1023));
        __m256d s = _mm256_castsi256_pd(_mm256_slli_epi64(kb, 52));
        __m256d tm = up4(_mm256_sub_pd(r1l, kl1));
        tm = _mm256_blendv_pd(tm, tl, _mm256_cmp_pd(tm, tl, _CMP_LT_OQ));
        tm = _mm256_blendv_pd(tm, th, _mm256_cmp_pd(tm, th, _CMP_GT_OQ));
        __m256d p = _mm256_set1_pd(c[13]);
        for (int i = 12; i >= 0; i--) p = _mm256_add_pd(_mm256_mul_pd(p, tm), _mm256_set1_pd(c[i]));
        __m256d dl = up4(_mm256_sub_pd(tm, tl));
        __m256d dh = up4(_mm256_mul_pd(_mm256_set1_pd(2.0), up4(_mm256_sub_pd(th, tm))));
        const __m256d one = _mm256_set1_pd(1.0);
        __m256d l = down4(_mm256_mul_pd(p, _mm256_set1_pd(1 - 2 * ER_EXP_E)));
        l = down4(_mm256_mul_pd(down4(_mm256_mul_pd(l, down4(_mm256_sub_pd(one, dl)))), s));
        _mm256_storeu_pd(lo + j, l);
        if (hi) {
            __m256d h = up4(_mm256_mul_pd(p, _mm256_set1_pd(1 + 2 * ER_EXP_E)));
            h = up4(_mm256_mul_pd(up4(_mm256_mul_pd(h, up4(_mm256_add_pd(one, dh)))), s));
            _mm256_storeu_pd(hi + j, h);
        }
        if (okm != 15)
            for (int e = 0; e < 4; e++)
                if (!(okm >> e & 1)) {
                    double a, b;
                    er_ops_exp(x[j + e], &a, &b);
                    lo[j + e] = a;
                    if (hi) hi[j + e] = b;
                }
    }
    for (int64_t j = n4; j < n; j++) {
        double a, b;
        er_ops_exp(x[j], &a, &b);
        lo[j] = a;
        if (hi) hi[j] = b;
    }
}
/* acc[c] += w v[c] */
__attribute__((target("avx2,fma"))) static void axpy_avx2(double *acc, double w, const double *v, int64_t n)
{
    int64_t n4 = n & ~(int64_t)3;
    __m256d wb = _mm256_set1_pd(w);
    for (int64_t c = 0; c < n4; c += 4)
        _mm256_storeu_pd(acc + c, _mm256_fmadd_pd(wb, _mm256_loadu_pd(v + c), _mm256_loadu_pd(acc + c)));
    for (int64_t c = n4; c < n; c++) acc[c] = fma(w, v[c], acc[c]);
}
/* acc[c] += a v[c], acc2[c] += r |v[c]| */
__attribute__((target("avx2,fma"))) static void axpy2_avx2(double *acc, double *acc2, double a, double r, const double *v,
                                                            int64_t n)
{
    int64_t n4 = n & ~(int64_t)3;
    const __m256d sgn = _mm256_set1_pd(-0.0);
    __m256d ab = _mm256_set1_pd(a), rb = _mm256_set1_pd(r);
    for (int64_t c = 0; c < n4; c += 4) {
        __m256d vv = _mm256_loadu_pd(v + c);
        _mm256_storeu_pd(acc + c, _mm256_fmadd_pd(ab, vv, _mm256_loadu_pd(acc + c)));
        _mm256_storeu_pd(acc2 + c, _mm256_fmadd_pd(rb, _mm256_andnot_pd(sgn, vv), _mm256_loadu_pd(acc2 + c)));
    }
    for (int64_t c = n4; c < n; c++) acc[c] = fma(a, v[c], acc[c]), acc2[c] = fma(r, fabs(v[c]), acc2[c]);
}
#endif

/* the dot products of nq consecutive query rows (q, stride D) with every key: d and t with stride Sk */
static void dots(const double *q, const double *KT, int64_t Sk, int64_t D, int64_t nq, double *d, double *t)
{
#ifdef ER_ATTN_X86
    if (has_avx2()) {
        dots_avx2(q, KT, Sk, D, nq, d, t);
        return;
    }
#endif
    for (int64_t g = 0; g < nq; g++) {
        const double *qg = q + g * D;
        double *dg = d + g * Sk, *tg = t + g * Sk;
        for (int64_t j = 0; j < Sk; j++) dg[j] = 0, tg[j] = 0;
        for (int64_t x = 0; x < D; x++)
            for (int64_t j = 0; j < Sk; j++) {
                double pr = qg[x] * KT[x * Sk + j];
                dg[j] += pr;
                tg[j] += fabs(pr);
            }
    }
}
static void axpy(double *acc, double w, const double *v, int64_t n)
{
#ifdef ER_ATTN_X86
    if (has_avx2()) {
        axpy_avx2(acc, w, v, n);
        return;
    }
#endif
    for (int64_t c = 0; c < n; c++) acc[c] += w * v[c];
}
static void axpy2(double *acc, double *acc2, double a, double r, const double *v, int64_t n)
{
#ifdef ER_ATTN_X86
    if (has_avx2()) {
        axpy2_avx2(acc, acc2, a, r, v, n);
        return;
    }
#endif
    for (int64_t c = 0; c < n; c++) acc[c] += a * v[c], acc2[c] += r * fabs(v[c]);
}
/* er_ops_exp(x[j]) for j < n: lo[j] (and hi[j] when hi is not NULL) */
static void exp_many(const double *x, double *lo, double *hi, int64_t n)
{
#ifdef ER_ATTN_X86
    if (has_avx2()) {
        exp_many_avx2(x, lo, hi, n);
        return;
    }
#endif
    for (int64_t j = 0; j < n; j++) {
        double a, b;
        er_ops_exp(x[j], &a, &b);
        lo[j] = a;
        if (hi) hi[j] = b;
    }
}
/*
 * The dot products of row i with every key, d_j (binary64, any order, fma or not) and t_j = sum |q k|
 * (binary64), with the enclosure radius of d_j: |d_j - exact| <= gamma_D t_j (1 + (D + 2) 2^-52) +
 * D 2^-1074 (products of inputs up to binary32 are exact in binary64 but for underflow).
 */
/* the workspace of one thread's rows */
enum { ATTN_GROUP = 8 }; /* query rows whose dot products are computed together */
typedef struct row_ws {
    double *d, *t, *r, *sl, *sh, *wm, *acc, *acc2, *acc3;
    double *gd, *gt; /* the group's d and t (ATTN_GROUP x Sk) */
    int64_t g0, gn;  /* the group's first row and count */
} row_ws;

static void row_dots(const er_attn_prob *p, row_ws *w, int64_t row, int64_t r1, const double *KT, double *d, double *t,
                     double *r)
{
    int64_t D = p->D, Sk = p->Sk;
    double g = er_b_up((double)D * 0x1p-53 / er_b_down(1.0 - (double)D * 0x1p-53));
    double infl = 1.0 + (double)(D + 2) * 0x1p-52;
    if (!(row >= w->g0 && row < w->g0 + w->gn)) {
        /* the next rows of the same (batch, head), at most ATTN_GROUP of them */
        int64_t n = ATTN_GROUP, left = p->Sq - row % p->Sq;
        if (n > r1 - row) n = r1 - row;
        if (n > left) n = left;
        w->g0 = row, w->gn = n;
        dots(p->q + row * D, KT, Sk, D, n, w->gd, w->gt);
    }
    memcpy(d, w->gd + (row - w->g0) * Sk, sizeof(double) * (size_t)Sk);
    memcpy(t, w->gt + (row - w->g0) * Sk, sizeof(double) * (size_t)Sk);
    for (int64_t j = 0; j < Sk; j++) {
        t[j] = er_b_up(t[j] * infl);
        r[j] = er_b_up(er_b_up(g * t[j]) + (double)D * 0x1p-1074);
    }
}

/* sigma = scale * q_descale * k_descale, enclosed */
static void sigma_of(const er_attn_prob *p, double *lo, double *hi)
{
    double a = p->scale * p->q_descale, al = er_b_down(a), ah = er_b_up(a);
    if (a == p->scale * p->q_descale && fma(p->scale, p->q_descale, -a) == 0) al = ah = a;
    double bl = al * p->k_descale, bh = ah * p->k_descale;
    *lo = fma(al, p->k_descale, -bl) == 0 ? bl : er_b_down(bl);
    *hi = fma(ah, p->k_descale, -bh) == 0 ? bh : er_b_up(bh);
}

/* the exact score s_j = sigma d_j + mask_j enclosed: [sl, sh] (sigma > 0) */
static void score_encl(double d, double r, double sgl, double sgh, double mk, double *sl, double *sh)
{
    double dl = er_b_down(d - r), dh = er_b_up(d + r);
    double l = dl >= 0 ? er_b_down(dl * sgl) : er_b_down(dl * sgh);
    double h = dh >= 0 ? er_b_up(dh * sgh) : er_b_up(dh * sgl);
    if (mk != 0) {
        l = er_b_down(l + mk);
        h = er_b_up(h + mk);
    }
    *sl = l;
    *sh = h;
}

/* interval quotient [nl, nh] / [dl, dh], 0 < dl <= dh, outward */
static void quot(double nl, double nh, double dl, double dh, double *lo, double *hi)
{
    *lo = er_b_down(nl >= 0 ? nl / dh : nl / dl);
    *hi = er_b_up(nh >= 0 ? nh / dl : nh / dh);
}

/* ---- MPFR: one row with interval arithmetic at precision prec (directed roundings). ---- */

typedef struct mp_row {
    mpfr_prec_t prec;
    int n;
    mpfr_t *wl, *wh; /* per key taking part */
    int64_t *key;
    mpfr_t Dl, Dh, t1, t2, t3;
} mp_row;

static int mp_row_init(mp_row *m, int64_t Sk, mpfr_prec_t prec)
{
    memset(m, 0, sizeof *m);
    m->prec = prec;
    m->wl = malloc(sizeof(mpfr_t) * (size_t)(Sk ? Sk : 1));
    m->wh = malloc(sizeof(mpfr_t) * (size_t)(Sk ? Sk : 1));
    m->key = malloc(sizeof(int64_t) * (size_t)(Sk ? Sk : 1));
    if (!m->wl || !m->wh || !m->key) {
        free(m->wl), free(m->wh), free(m->key);
        return 0;
    }
    for (int64_t j = 0; j < Sk; j++) mpfr_init2(m->wl[j], prec), mpfr_init2(m->wh[j], prec);
    mpfr_inits2(prec, m->Dl, m->Dh, m->t1, m->t2, m->t3, (mpfr_ptr)0);
    m->n = (int)Sk;
    return 1;
}
static void mp_row_free(mp_row *m)
{
    for (int j = 0; j < m->n; j++) mpfr_clear(m->wl[j]), mpfr_clear(m->wh[j]);
    mpfr_clears(m->Dl, m->Dh, m->t1, m->t2, m->t3, (mpfr_ptr)0);
    free(m->wl), free(m->wh), free(m->key);
}

/* The weights w_j = exp(s_j - shift) of row i, and D = sum w, as intervals; returns the count. */
static int mp_row_weights(mp_row *m, const er_attn_prob *p, int64_t b, int64_t h, int64_t i, double shift)
{
    int64_t hk = h / (p->Hq / p->Hk), D = p->D;
    const double *q = p->q + ((b * p->Hq + h) * p->Sq + i) * D;
    const double *K = p->k + (b * p->Hk + hk) * p->Sk * D;
    mpfr_prec_t pr = m->prec;
    mpfr_t dl, dh, pp, sg_l, sg_h;
    mpfr_inits2(pr, dl, dh, pp, sg_l, sg_h, (mpfr_ptr)0);
    /* sigma exactly (three binary64 factors: 159 bits suffice; prec >= 160) */
    mpfr_set_d(sg_l, p->scale, MPFR_RNDN);
    mpfr_mul_d(sg_l, sg_l, p->q_descale, MPFR_RNDD);
    mpfr_mul_d(sg_l, sg_l, p->k_descale, MPFR_RNDD);
    mpfr_set_d(sg_h, p->scale, MPFR_RNDN);
    mpfr_mul_d(sg_h, sg_h, p->q_descale, MPFR_RNDU);
    mpfr_mul_d(sg_h, sg_h, p->k_descale, MPFR_RNDU);
    int n = 0;
    mpfr_set_zero(m->Dl, 1);
    mpfr_set_zero(m->Dh, 1);
    for (int64_t j = 0; j < p->Sk; j++) {
        double mk;
        if (!takes_part(p, b, h, i, j, &mk)) continue;
        /* the dot product as an unevaluated sum s + c of binary64 values (Ogita, Rump and Oishi's
         * Dot2 without its last rounding: each product split exactly by fma, each addition by TwoSum),
         * |s + c - d| <= gamma_2D^2 sum |q k| (+ underflow): enclosed in MPFR */
        double sd = 0, cd = 0, ta = 0;
        for (int64_t x = 0; x < D; x++) {
            double pr = q[x] * K[j * D + x], pe = fma(q[x], K[j * D + x], -pr);
            double t = sd + pr, z = t - sd, te = (sd - (t - z)) + (pr - z);
            sd = t;
            cd += te + pe;
            ta += fabs(pr);
        }
        double g2 = (double)(2 * D + 2) * 0x1p-53, err = er_b_up(er_b_up(4.0 * g2 * g2 * ta) + (double)(4 * D + 4) * 0x1p-1074);
        mpfr_set_d(dl, sd, MPFR_RNDN);
        mpfr_add_d(dl, dl, cd, MPFR_RNDD);
        mpfr_sub_d(dl, dl, err, MPFR_RNDD);
        mpfr_set_d(dh, sd, MPFR_RNDN);
        mpfr_add_d(dh, dh, cd, MPFR_RNDU);
        mpfr_add_d(dh, dh, err, MPFR_RNDU);
        /* s = sigma d + mask - shift */
        if (mpfr_sgn(dl) >= 0) mpfr_mul(dl, dl, sg_l, MPFR_RNDD);
        else mpfr_mul(dl, dl, sg_h, MPFR_RNDD);
        if (mpfr_sgn(dh) >= 0) mpfr_mul(dh, dh, sg_h, MPFR_RNDU);
        else mpfr_mul(dh, dh, sg_l, MPFR_RNDU);
        mpfr_add_d(dl, dl, mk - 0.0, MPFR_RNDD);
        mpfr_add_d(dh, dh, mk, MPFR_RNDU);
        mpfr_sub_d(dl, dl, shift, MPFR_RNDD);
        mpfr_sub_d(dh, dh, shift, MPFR_RNDU);
        mpfr_exp(m->wl[n], dl, MPFR_RNDD);
        mpfr_exp(m->wh[n], dh, MPFR_RNDU);
        mpfr_add(m->Dl, m->Dl, m->wl[n], MPFR_RNDD);
        mpfr_add(m->Dh, m->Dh, m->wh[n], MPFR_RNDU);
        m->key[n++] = j;
    }
    mpfr_clears(dl, dh, pp, sg_l, sg_h, (mpfr_ptr)0);
    return n;
}

/* out element c of the row: [lo, hi] in binary64 (outward) from the weights */
static void mp_out(mp_row *m, int n, const double *V, int64_t Dv, int64_t c, double vdesc, double *lo, double *hi)
{
    mpfr_t Nl, Nh;
    mpfr_inits2(m->prec, Nl, Nh, (mpfr_ptr)0);
    mpfr_set_zero(Nl, 1);
    mpfr_set_zero(Nh, 1);
    for (int t = 0; t < n; t++) {
        double v = V[m->key[t] * Dv + c];
        if (v == 0) continue;
        mpfr_mul_d(m->t1, v > 0 ? m->wl[t] : m->wh[t], v, MPFR_RNDD);
        mpfr_add(Nl, Nl, m->t1, MPFR_RNDD);
        mpfr_mul_d(m->t1, v > 0 ? m->wh[t] : m->wl[t], v, MPFR_RNDU);
        mpfr_add(Nh, Nh, m->t1, MPFR_RNDU);
    }
    mpfr_div(m->t1, Nl, mpfr_sgn(Nl) >= 0 ? m->Dh : m->Dl, MPFR_RNDD);
    mpfr_div(m->t2, Nh, mpfr_sgn(Nh) >= 0 ? m->Dl : m->Dh, MPFR_RNDU);
    if (vdesc != 1.0) {
        mpfr_mul_d(m->t1, m->t1, vdesc, MPFR_RNDD);
        mpfr_mul_d(m->t2, m->t2, vdesc, MPFR_RNDU);
    }
    *lo = mpfr_get_d(m->t1, MPFR_RNDD);
    *hi = mpfr_get_d(m->t2, MPFR_RNDU);
    mpfr_clears(Nl, Nh, (mpfr_ptr)0);
}

static void mp_lse(mp_row *m, double shift, double *lo, double *hi)
{
    mpfr_log(m->t1, m->Dl, MPFR_RNDD);
    mpfr_add_d(m->t1, m->t1, shift, MPFR_RNDD);
    mpfr_log(m->t2, m->Dh, MPFR_RNDU);
    mpfr_add_d(m->t2, m->t2, shift, MPFR_RNDU);
    *lo = mpfr_get_d(m->t1, MPFR_RNDD);
    *hi = mpfr_get_d(m->t2, MPFR_RNDU);
}

/*
 * Where no precision decides (docs/proofs/attention.md, "Exact boundaries"): by Lindemann-Weierstrass
 * the exact output equals a rounding boundary b only when every group of keys with the same exact
 * score has mean value b, and the lse equals one only when a single key takes part and its score is
 * b.  Both are checked exactly (scores and sums of at most binary32 values are exact at 4096 bits);
 * what they settle gets b rounded once.  Returns 1 when everything undecided was settled.
 */
typedef struct { mpfr_t s; int64_t j; } ex_key;
static int ex_cmp(const void *a, const void *b)
{
    return mpfr_cmp(((const ex_key *)a)->s, ((const ex_key *)b)->s);
}
static int exact_settle(const er_attn_prob *p, int64_t b, int64_t h, int64_t i, int out_fmt, unsigned char *und,
                        uint64_t *ob, double *olo, double *ohi, int *lse_und, uint64_t *lb, double *llo, double *lhi)
{
    const mpfr_prec_t PE = 4096;
    int64_t hk = h / (p->Hq / p->Hk), D = p->D, Dv = p->Dv, Sk = p->Sk;
    const double *q = p->q + ((b * p->Hq + h) * p->Sq + i) * D;
    const double *K = p->k + (b * p->Hk + hk) * Sk * D;
    const double *V = p->v + (b * p->Hk + hk) * Sk * Dv;
    ex_key *ks = malloc(sizeof(ex_key) * (size_t)(Sk ? Sk : 1));
    if (!ks) return 0;
    int n = 0, exact = 1;
    mpfr_t t, sg, acc;
    mpfr_inits2(PE, t, sg, acc, (mpfr_ptr)0);
    exact &= mpfr_set_d(sg, p->scale, MPFR_RNDN) == 0;
    exact &= mpfr_mul_d(sg, sg, p->q_descale, MPFR_RNDN) == 0;
    exact &= mpfr_mul_d(sg, sg, p->k_descale, MPFR_RNDN) == 0;
    for (int64_t j = 0; j < Sk; j++) {
        double mk;
        if (!takes_part(p, b, h, i, j, &mk)) continue;
        mpfr_init2(ks[n].s, PE);
        ks[n].j = j;
        mpfr_set_zero(ks[n].s, 1);
        for (int64_t x = 0; x < D; x++) {
            exact &= mpfr_set_d(t, q[x], MPFR_RNDN) == 0;
            exact &= mpfr_mul_d(t, t, K[j * D + x], MPFR_RNDN) == 0;
            exact &= mpfr_add(ks[n].s, ks[n].s, t, MPFR_RNDN) == 0;
        }
        exact &= mpfr_mul(ks[n].s, ks[n].s, sg, MPFR_RNDN) == 0;
        exact &= mpfr_add_d(ks[n].s, ks[n].s, mk, MPFR_RNDN) == 0;
        n++;
    }
    if (exact && n > 0) {
        qsort(ks, (size_t)n, sizeof *ks, ex_cmp);
        for (int64_t c = 0; c < Dv; c++) {
            if (!und[c]) continue;
            double a = rnd_to(out_fmt, olo[c]), z = rnd_to(out_fmt, ohi[c]);
            double bnd = 0.5 * (a + z); /* adjacent values: their midpoint, exact in binary64 */
            int ok = isfinite(bnd) && a < z && bnd > a && bnd < z;
            for (int g0 = 0; g0 < n && ok;) {
                int g1 = g0 + 1;
                while (g1 < n && mpfr_equal_p(ks[g1].s, ks[g0].s)) g1++;
                mpfr_set_zero(acc, 1);
                for (int x = g0; x < g1; x++) {
                    exact &= mpfr_set_d(t, V[ks[x].j * Dv + c], MPFR_RNDN) == 0;
                    exact &= mpfr_mul_d(t, t, p->v_descale, MPFR_RNDN) == 0;
                    exact &= mpfr_add(acc, acc, t, MPFR_RNDN) == 0;
                }
                exact &= mpfr_set_d(t, bnd, MPFR_RNDN) == 0;
                exact &= mpfr_mul_si(t, t, g1 - g0, MPFR_RNDN) == 0;
                ok = exact && mpfr_equal_p(acc, t);
                g0 = g1;
            }
            if (ok) {
                und[c] = 0;
                ob[c] = bits_to(out_fmt, bnd);
                olo[c] = ohi[c] = bnd;
            }
        }
        if (*lse_und && n == 1) {
            mpfr_t r;
            mpfr_init2(r, 24);
            mpfr_set(r, ks[0].s, MPFR_RNDN); /* binary32's precision, to nearest even */
            double x = mpfr_get_d(r, MPFR_RNDN);
            *lb = bits_to(ER_FMT_F32, x);
            *llo = *lhi = mpfr_get_d(ks[0].s, MPFR_RNDN);
            *lse_und = 0;
            mpfr_clear(r);
        }
    }
    for (int x = 0; x < n; x++) mpfr_clear(ks[x].s);
    mpfr_clears(t, sg, acc, (mpfr_ptr)0);
    free(ks);
    int left = *lse_und;
    for (int64_t c = 0; c < Dv; c++) left |= und[c];
    return !left;
}

/* the largest |v| per column of a value head */
static void vmax_of(const double *V, int64_t Sk, int64_t Dv, double *vmax)
{
    for (int64_t c = 0; c < Dv; c++) vmax[c] = 0;
    for (int64_t j = 0; j < Sk; j++)
        for (int64_t c = 0; c < Dv; c++) {
            double a = fabs(V[j * Dv + c]);
            if (a > vmax[c]) vmax[c] = a;
        }
}

er_status er_attn_prepare(er_attn_prob *p, char *msg, size_t msg_size)
{
    int64_t nh = p->B * p->Hk;
    p->vmax = malloc(sizeof(double) * (size_t)(nh * p->Dv > 0 ? nh * p->Dv : 1));
    p->kmax = malloc(sizeof(double) * (size_t)(nh > 0 ? nh : 1));
    p->kt = malloc(sizeof(double) * (size_t)(nh * p->Sk * p->D > 0 ? nh * p->Sk * p->D : 1));
    if (!p->vmax || !p->kmax || !p->kt) {
        er_attn_release(p);
        return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
    }
    for (int64_t x = 0; x < nh; x++) {
        vmax_of(p->v + x * p->Sk * p->Dv, p->Sk, p->Dv, p->vmax + x * p->Dv);
        double km = 0;
        const double *K = p->k + x * p->Sk * p->D;
        for (int64_t e = 0; e < p->Sk * p->D; e++) km = fmax(km, fabs(K[e]));
        p->kmax[x] = km;
        double *KT = p->kt + x * p->Sk * p->D;
        for (int64_t j = 0; j < p->Sk; j++)
            for (int64_t e = 0; e < p->D; e++) KT[e * p->Sk + j] = K[j * p->D + e];
    }
    return ER_OK;
}

void er_attn_release(er_attn_prob *p)
{
    free(p->vmax), free(p->kmax), free(p->kt);
    p->vmax = p->kmax = p->kt = NULL;
}

/* ---- The reference. ---- */

static int ws_alloc(row_ws *w, int64_t Sk, int64_t Dv)
{
    size_t n = (size_t)(Sk > 0 ? Sk : 1), m = (size_t)(Dv > 0 ? Dv : 1);
    memset(w, 0, sizeof *w);
    w->d = malloc(n * sizeof(double) * (6 + 2 * ATTN_GROUP));
    w->acc = malloc(m * sizeof(double) * 3);
    if (!w->d || !w->acc) {
        free(w->d), free(w->acc);
        return 0;
    }
    w->gd = w->d + 6 * n, w->gt = w->gd + ATTN_GROUP * n, w->g0 = 0, w->gn = 0;
    w->t = w->d + n, w->r = w->t + n, w->sl = w->r + n, w->sh = w->sl + n, w->wm = w->sh + n;
    w->acc2 = w->acc + m, w->acc3 = w->acc2 + m;
    return 1;
}
static void ws_free(row_ws *w) { free(w->d), free(w->acc); }

er_status er_attn_reference(const er_attn_prob *p, int64_t r0, int64_t r1, int out_fmt, uint64_t *out_bits, double *out_lo, double *out_hi,
                            uint64_t *lse_bits, double *lse_lo, double *lse_hi, char *msg, size_t msg_size)
{
    int64_t D = p->D, Dv = p->Dv, Sk = p->Sk;
    double sgl, sgh;
    sigma_of(p, &sgl, &sgh);
    row_ws w;
    unsigned char *und = malloc((size_t)(Dv > 0 ? Dv : 1));
    if (!und || !ws_alloc(&w, Sk, Dv)) {
        free(und);
        return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
    }
    er_status st = ER_OK;
    double L = 36.0 + (double)(Sk / 32);
    double gn = er_b_up(L * 0x1p-53 / er_b_down(1.0 - L * 0x1p-53));
    for (int64_t row = r0; row < r1 && st == ER_OK; row++) {
        {
            int64_t i = row % p->Sq, h = row / p->Sq % p->Hq, b = row / p->Sq / p->Hq;
            int64_t hk = h / (p->Hq / p->Hk);
            const double *V = p->v + (b * p->Hk + hk) * Sk * Dv;
            const double *vmax = p->vmax + (b * p->Hk + hk) * Dv;
            {
                uint64_t *ob = out_bits + row * Dv;
                row_dots(p, &w, row, r1, p->kt + (b * p->Hk + hk) * Sk * D, w.d, w.t, w.r);
                double shift = -INFINITY;
                int64_t n = 0;
                for (int64_t j = 0; j < Sk; j++) {
                    double mk;
                    if (!takes_part(p, b, h, i, j, &mk)) {
                        w.sl[j] = w.sh[j] = -INFINITY;
                        continue;
                    }
                    score_encl(w.d[j], w.r[j], sgl, sgh, mk, &w.sl[j], &w.sh[j]);
                    if (w.sh[j] > shift) shift = w.sh[j];
                    n++;
                }
                if (n == 0) {
                    for (int64_t c = 0; c < Dv; c++) {
                        ob[c] = bits_to(out_fmt, NAN);
                        if (out_lo) out_lo[row * Dv + c] = NAN, out_hi[row * Dv + c] = NAN;
                    }
                    lse_bits[row] = bits_to(ER_FMT_F32, -INFINITY);
                    if (lse_lo) lse_lo[row] = lse_hi[row] = -INFINITY;
                    continue;
                }
                /* weights: midpoints and radii */
                /* sums in blocks of 32 keys: a term's path has at most 32 + 1 + Sk/32 roundings */
                double swl = 0, swh = 0, swm = 0, swr = 0, bwl = 0, bwh = 0, bwm = 0, bwr = 0;
                for (int64_t c = 0; c < Dv; c++) w.acc[c] = 0, w.acc3[c] = 0;
                int inblk = 0;
                /* the exp enclosures of the row at once (a key not taking part: any value, unused) */
                for (int64_t j = 0; j < Sk; j++)
                    w.wm[j] = w.sl[j] == -INFINITY && w.sh[j] == -INFINITY ? -1.0 : er_b_down(w.sl[j] - shift);
                exp_many(w.wm, w.d, w.t, Sk);
                for (int64_t j = 0; j < Sk; j++) {
                    if (w.sl[j] == -INFINITY && w.sh[j] == -INFINITY) continue;
                    double x = w.wm[j], elo = w.d[j], ehi = w.t[j];
                    double dw = er_b_up(er_b_up(w.sh[j] - shift) - x);
                    double wl = elo, wh = dw < 0.5 ? UP8(ehi / (1.0 - dw)) : exp_up(er_b_up(w.sh[j] - shift));
                    double wm = 0.5 * (wl + wh);
                    bwl += wl, bwh += wh, bwm += wm;
                    bwr += HALFW(wl, wh, wm);
                    axpy(w.acc3, wm, V + j * Dv, Dv);
                    if (++inblk == 32) {
                        for (int64_t c = 0; c < Dv; c++) w.acc[c] += w.acc3[c], w.acc3[c] = 0;
                        swl += bwl, swh += bwh, swm += bwm, swr += bwr;
                        bwl = bwh = bwm = bwr = 0;
                        inblk = 0;
                    }
                }
                for (int64_t c = 0; c < Dv; c++) w.acc[c] += w.acc3[c];
                swl += bwl, swh += bwh, swm += bwm, swr += bwr;
                double Dl = er_b_down(swl * (1.0 - gn)), Dh = er_b_up(swh * (1.0 + gn));
                double rfac = er_b_up(er_b_up(swr * (1.0 + gn)) + er_b_up(gn * swm * (1.0 + gn)));
                int any_und = 0;
                for (int64_t c = 0; c < Dv; c++) {
                    double rN = er_b_up(vmax[c] * rfac);
                    double lo, hi;
                    quot(er_b_down(w.acc[c] - rN), er_b_up(w.acc[c] + rN), Dl, Dh, &lo, &hi);
                    if (p->v_descale != 1.0) {
                        lo = er_b_down(lo * p->v_descale);
                        hi = er_b_up(hi * p->v_descale);
                    }
                    uint64_t bl = bits_to(out_fmt, lo), bh = bits_to(out_fmt, hi);
                    und[c] = bl != bh;
                    any_und |= und[c];
                    ob[c] = bl;
                    if (out_lo) out_lo[row * Dv + c] = lo, out_hi[row * Dv + c] = hi;
                }
                double ll = er_b_down(shift + log_dn(Dl)), lh = er_b_up(shift + log_up(Dh));
                uint64_t lb = bits_to(ER_FMT_F32, ll);
                int lse_und = lb != bits_to(ER_FMT_F32, lh);
                lse_bits[row] = lb;
                if (lse_lo) lse_lo[row] = ll, lse_hi[row] = lh;
                /* MPFR for what binary64 could not decide, raising the precision until decided */
                for (mpfr_prec_t prec = 192; (any_und || lse_und) && prec <= 8192; prec *= 2) {
                    mp_row m;
                    if (!mp_row_init(&m, Sk, prec)) {
                        st = msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
                        break;
                    }
                    int nn = mp_row_weights(&m, p, b, h, i, shift);
                    any_und = 0;
                    for (int64_t c = 0; c < Dv; c++) {
                        if (!und[c]) continue;
                        double lo, hi;
                        mp_out(&m, nn, V, Dv, c, p->v_descale, &lo, &hi);
                        uint64_t bl = bits_to(out_fmt, lo), bh = bits_to(out_fmt, hi);
                        und[c] = bl != bh;
                        any_und |= und[c];
                        ob[c] = bl;
                        if (out_lo) out_lo[row * Dv + c] = lo, out_hi[row * Dv + c] = hi;
                    }
                    if (lse_und) {
                        mp_lse(&m, shift, &ll, &lh);
                        lb = bits_to(ER_FMT_F32, ll);
                        lse_und = lb != bits_to(ER_FMT_F32, lh);
                        lse_bits[row] = lb;
                        if (lse_lo) lse_lo[row] = ll, lse_hi[row] = lh;
                    }
                    mp_row_free(&m);
                }
                if (st == ER_OK && (any_und || lse_und) && out_lo &&
                    exact_settle(p, b, h, i, out_fmt, und, ob, out_lo + row * Dv, out_hi + row * Dv, &lse_und,
                                 &lse_bits[row], &lse_lo[row], &lse_hi[row]))
                    any_und = lse_und = 0;
                if (st == ER_OK && (any_und || lse_und))
                    st = msgf(msg, msg_size, ER_EUNSUPPORTED,
                              "attention: the rounding of row (%lld, %lld, %lld) is not decided at 8192 bits (an "
                              "exact value on a rounding boundary)",
                              (long long)b, (long long)h, (long long)i);
            }
        }
    }
    ws_free(&w);
    free(und);
    return st;
}

/* ---- The bounds of a standard. ---- */

/* ---- Matrix engines (flash's mma=<model>): the core's recurrence (er_bounds.h, docs/proofs/engines.md)
 * on the scores' dot products and on P V. ---- */

/* The hardware exponent of a value of format fmt (src/tolerance.c's hw_exp): floor(log2 |v|) at least
 * the format's least normal exponent; a zero's is the larger of -126 and that exponent. */
static int hw_e(double v, int emin)
{
    if (v == 0) return emin > -126 ? emin : -126;
    int e = er_b_frexp_e(v) - 1;
    return e < emin ? emin : e;
}

/* The model x of s (0: S = Q K^T, 1: P V) as the core's parameter block: an f32 accumulator D. */
static void eng_bpar(const er_attn_std *s, int x, int64_t k, er_bpar *c)
{
    memset(c, 0, sizeof *c);
    c->k = k, c->ldb = 1, c->kind = ER_BK_ENGINE, c->out_fmt = ER_FMT_F32, c->dir = ER_RND_NEAREST_EVEN;
    c->u = 0x1p-24, c->emin_c = -126, c->eta = 0x1p-150, c->max_c = 0x1.fffffep127, c->maxo = 0x1.fffffep127;
    c->mk = s->mm[x].k, c->F = s->mm[x].F, c->out_p = s->mm[x].p, c->out_round = s->mm[x].round;
    c->F2 = s->mm[x].F2, c->xterms = s->mm[x].xterms;
}

/* The relative loss of f32 operands read as tf32 (docs/proofs/engines.md): per product, of itself. */
static double tf32_rel(const er_attn_std *s, int x, int fa, int fb)
{
    if (!s->mm[x].tf32) return 0;
    int a = fa == ER_FMT_F32, b = fb == ER_FMT_F32;
    return (a ? 0x1p-10 : 0) + (b ? 0x1p-10 : 0) + (a && b ? 0x1p-20 : 0);
}

/*
 * One score's dot product q . k under the model (c: eng_bpar(s, 0, D)): the radius |D^ - q . k| of
 * docs/proofs/engines.md, steps of c->mk products in index order from a zero accumulator, each step's
 * xs an upper bound of its sum of |products| (exact products, at most mk binary64 additions: inflated)
 * and emax the largest e_q + e_k.  Before each step the bound B on the accumulator |C| is taken as the
 * smaller of the recurrence's and |the exact partial sum| + the error so far (C is within g.E of the
 * exact partial, which the binary64 sum s64 encloses within (p + 2) 2^-53 T): any upper bound of |C|
 * serves the proof (docs/proofs/attention.md, "Matrix engines").  Infinite where a partial may overflow.
 */
static double eng_dot_radius(const er_bpar *c, const double *q, const int16_t *eq, const double *k, const int16_t *ek,
                             int64_t D, double rel)
{
    er_b_eng g;
    er_b_eng_init(c, &g, 0.0, 0.0);
    double infl = 1.0 + (double)(c->mk + 8) * 0x1p-51, T = 0, s64 = 0, T64 = 0;
    for (int64_t p0 = 0; p0 < D; p0 += c->mk) {
        int64_t p1 = p0 + c->mk < D ? p0 + c->mk : D;
        double xs = 0;
        int emax = -100000;
        if (p0 > 0) {
            double bc = er_b_up(er_b_up(fabs(s64) + er_b_up(T64 * (double)(p0 + 2) * 0x1p-53)) + g.E);
            if (bc < g.B) g.B = bc;
        }
        for (int64_t x = p0; x < p1; x++) {
            double pr = q[x] * k[x];
            xs += fabs(pr);
            s64 += pr;
            int e = eq[x] + ek[x];
            emax = e > emax ? e : emax;
        }
        T64 += xs;
        xs = er_b_up(xs * infl);
        T = er_b_up(T + xs);
        er_b_eng_block(c, &g, xs, emax, p1 - p0, p1);
        if (g.done) return INFINITY;
    }
    double E = g.E;
    if (rel > 0) E = er_b_up(E + er_b_up(T * rel));
    return E;
}

static int fmt_prec(int fmt) { er_fmt f = er_fmt_get(fmt); return f.mbits + 1; }
static int fmt_emin(int fmt) { return er_fmt_emin(er_fmt_get(fmt)); }

/* the per-thread arrays of er_attn_bounds beyond the row workspace */
typedef struct bd_ws {
    double *E, *mbl, *mbh;                                       /* per key; per block */
    double *N0, *NR;                                             /* declared block: per block and column */
    double *LA0, *LAR, *LX0, *LXR, *Fl, *Fh, *later;             /* declared block: per block */
    int64_t *cnt;                                                /* keys taking part per block */
    int16_t *eq, *ek, *ev;                                       /* engines: hardware exponents */
    er_b_eng *ge;                                                /* engines: P V's recurrence per column */
    double *xs;                                                  /* engines: a step's magnitudes per column */
    double *ms, *rs, *bt; /* engines: the exact partial O per column (centre, radius) at the block's start; |C| */
    double *tmp;          /* declared block: 4 x Dv (the centres and the sums over blocks per column) */
    int *em;                                                     /* engines: a step's largest exponent per column */
} bd_ws;

static void bd_free(bd_ws *b)
{
    free(b->E), free(b->mbl), free(b->N0), free(b->LA0), free(b->cnt), free(b->eq), free(b->ek), free(b->ev), free(b->ge);
    free(b->xs), free(b->em), free(b->ms), free(b->tmp);
}

static int bd_alloc(bd_ws *b, int64_t Sk, int64_t D, int64_t Dv, int64_t nblocks, int tight, int eng)
{
    size_t n = (size_t)(Sk > 0 ? Sk : 1), m = (size_t)(Dv > 0 ? Dv : 1), nb = (size_t)nblocks, d = (size_t)(D > 0 ? D : 1);
    memset(b, 0, sizeof *b);
    b->E = malloc(sizeof(double) * n);
    b->mbl = malloc(sizeof(double) * nb * 2);
    if (!b->E || !b->mbl) return 0;
    b->mbh = b->mbl + nb;
    if (tight) {
        b->N0 = malloc(sizeof(double) * nb * m * 2);
        b->LA0 = malloc(sizeof(double) * nb * 7);
        b->cnt = malloc(sizeof(int64_t) * nb);
        b->tmp = malloc(sizeof(double) * m * 4);
        if (!b->N0 || !b->LA0 || !b->cnt || !b->tmp) return 0;
        b->NR = b->N0 + nb * m;
        b->LAR = b->LA0 + nb, b->LX0 = b->LAR + nb, b->LXR = b->LX0 + nb, b->Fl = b->LXR + nb, b->Fh = b->Fl + nb;
        b->later = b->Fh + nb;
    }
    if (eng) {
        b->eq = malloc(sizeof(int16_t) * d);
        b->ek = malloc(sizeof(int16_t) * n * d);
        b->ev = malloc(sizeof(int16_t) * n * m);
        b->ge = malloc(sizeof(er_b_eng) * m);
        b->xs = malloc(sizeof(double) * m);
        b->em = malloc(sizeof(int) * m);
        b->ms = malloc(sizeof(double) * m * 3);
        if (!b->eq || !b->ek || !b->ev || !b->ge || !b->xs || !b->em || !b->ms) return 0;
        b->rs = b->ms + m, b->bt = b->rs + m;
    }
    return 1;
}

er_status er_attn_bounds(const er_attn_prob *p, int64_t r0, int64_t r1, const er_attn_std *s, double *out_lo, double *out_hi,
                         double *lse_lo, double *lse_hi, unsigned char *row_nan, char *msg, size_t msg_size)
{
    int64_t D = p->D, Dv = p->Dv, Sk = p->Sk;
    int pc = fmt_prec(s->compute), ec = fmt_emin(s->compute);
    double u = ldexp(1.0, -pc), u1 = er_b_up(u / er_b_down(1.0 - u));
    double tiny = s->ftz ? ldexp(1.0, ec) : ldexp(1.0, ec - pc + 1); /* an absolute loss per operation */
    double eps_e = er_b_up(s->ulps_exp * ldexp(1.0, 1 - pc)), ln_e = er_b_up(eps_e / er_b_down(1.0 - eps_e));
    double eps_d = er_b_up(s->ulps_div * ldexp(1.0, 1 - pc) + u), ln_d = er_b_up(eps_d / er_b_down(1.0 - eps_d));
    double eps_l = er_b_up(s->ulps_log * ldexp(1.0, 1 - pc));
    double abs_e = er_b_up((s->ulps_exp > 1 ? s->ulps_exp : 1.0) * ldexp(1.0, ec - pc + 1) + (s->ftz ? ldexp(1.0, ec) : 0));
    double uP = 0, absP = 0;
    if (s->p_fmt >= 0) {
        uP = ldexp(1.0, -fmt_prec(s->p_fmt));
        absP = ldexp(1.0, fmt_emin(s->p_fmt) - fmt_prec(s->p_fmt));
    }
    /* a declared block (docs/proofs/attention.md, "A declared block"): the row assembled per block */
    int tight = s->kind == 2 && s->block > 0;
    rnd_spec rsP = rnd_spec_of(s->p_fmt >= 0 ? s->p_fmt : ER_FMT_F32);
    int64_t nblocks = tight ? (Sk + s->block - 1) / s->block : 1;
    if (nblocks < 1) nblocks = 1;
    int64_t nsum = tight ? (s->block < Sk ? s->block : Sk) : Sk;
    double gamma_D = er_b_up((double)D * u / er_b_down(1.0 - (double)D * u));
    double gn = er_b_up((double)(Sk + 2) * 0x1p-53 / er_b_down(1.0 - (double)(Sk + 2) * 0x1p-53));
    double sgl, sgh;
    sigma_of(p, &sgl, &sgh);
    /* matrix engines (mma=<model>): the scores' and P V's parameter blocks, their operands' exponents */
    er_bpar cs, cp;
    int pfmt = s->p_fmt >= 0 ? s->p_fmt : s->compute;
    double rel_s = 0, rel_p = 0;
    int emin_q = 0, emin_k = 0, emin_v = 0, emin_P = fmt_emin(pfmt);
    int64_t head_e = -1; /* the (batch, key head) whose ek and ev are filled */
    if (s->eng) {
        eng_bpar(s, 0, D, &cs);
        eng_bpar(s, 1, Sk, &cp);
        rel_s = tf32_rel(s, 0, s->q_fmt, s->k_fmt);
        rel_p = tf32_rel(s, 1, pfmt, s->v_fmt);
        emin_q = fmt_emin(s->q_fmt), emin_k = fmt_emin(s->k_fmt), emin_v = fmt_emin(s->v_fmt);
    }
    row_ws w;
    bd_ws bw;
    if (!bd_alloc(&bw, Sk, D, Dv, nblocks, tight, s->eng) || !ws_alloc(&w, Sk, Dv)) {
        bd_free(&bw);
        return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
    }
    double *E = bw.E, *mbl = bw.mbl, *mbh = bw.mbh;
    for (int64_t row = r0; row < r1; row++) {
        int64_t i = row % p->Sq, h = row / p->Sq % p->Hq, b = row / p->Sq / p->Hq;
        int64_t hk = h / (p->Hq / p->Hk);
        const double *V = p->v + (b * p->Hk + hk) * Sk * Dv;
        const double *K = p->k + (b * p->Hk + hk) * Sk * D;
        const double *vmax = p->vmax + (b * p->Hk + hk) * Dv;
        double kmax = p->kmax[b * p->Hk + hk];
        const double *q = p->q + row * D;
        double *olo = out_lo + row * Dv, *ohi = out_hi + row * Dv;
        double qmax = 0;
        for (int64_t x = 0; x < D; x++) qmax = fmax(qmax, fabs(q[x]));
        row_dots(p, &w, row, r1, p->kt + (b * p->Hk + hk) * Sk * D, w.d, w.t, w.r);
        if (s->eng) {
            for (int64_t x = 0; x < D; x++) bw.eq[x] = (int16_t)hw_e(q[x], emin_q);
            if (head_e != b * p->Hk + hk) {
                head_e = b * p->Hk + hk;
                for (int64_t e = 0; e < Sk * D; e++) bw.ek[e] = (int16_t)hw_e(K[e], emin_k);
                for (int64_t e = 0; e < Sk * Dv; e++) bw.ev[e] = (int16_t)hw_e(V[e], emin_v);
            }
        }
        double shift = -INFINITY, M = 0, Emax = 0;
        int64_t n = 0;
        int nob = 0; /* no bound for this row (an engine's partial may overflow) */
        /* the scores' enclosures and the standard's radius on each dot product */
        double ftzR = s->ftz ? er_b_up(ldexp(1.0, ec) * er_b_up(2.0 * (2 * D + 1) + (double)D * (qmax + kmax))) : 0;
        for (int64_t j = 0; j < Sk; j++) {
            double mk;
            if (!takes_part(p, b, h, i, j, &mk)) {
                w.sl[j] = w.sh[j] = -INFINITY;
                continue;
            }
            score_encl(w.d[j], w.r[j], sgl, sgh, mk, &w.sl[j], &w.sh[j]);
            double R;
            if (s->eng) /* the model's radius on this dot product (docs/proofs/engines.md) */
                R = eng_dot_radius(&cs, q, bw.eq, K + j * D, bw.ek + j * D, D, rel_s);
            else /* the implementation's dot: any_order's radius in compute (docs/proofs/any-order.md) */
                R = er_b_up(er_b_up(gamma_D * w.t[j]) + (double)(2 * D) * ldexp(1.0, ec - pc) + ftzR);
            if (!(R < INFINITY)) nob = 1;
            w.r[j] = er_b_up(R * sgh); /* in score units */
            E[j] = fabs(mk);           /* |mask| for now */
            if (w.sh[j] > shift) shift = w.sh[j];
            double a = fmax(fabs(w.sl[j]), fabs(w.sh[j]));
            M = fmax(M, er_b_up(a + w.r[j]));
            n++;
        }
        if (n == 0 || nob) {
            for (int64_t c = 0; c < Dv; c++) olo[c] = -INFINITY, ohi[c] = INFINITY;
            lse_lo[row] = -INFINITY, lse_hi[row] = INFINITY;
            if (row_nan) row_nan[row] = n == 0;
            continue;
        }
        if (row_nan) row_nan[row] = 0;
        double g8 = er_b_up(8.0 * u * (1.0 + 0x1p-20));
        for (int64_t j = 0; j < Sk; j++) {
            if (w.sh[j] == -INFINITY) continue;
            double a = fmax(fabs(w.sl[j]), fabs(w.sh[j]));
            /* argument error: the dot's radius, and at most 8 roundings on |sigma d| + |mask| + |mu| */
            E[j] = er_b_up(er_b_up(w.r[j] * (1.0 + 0x1p-20)) + er_b_up(g8 * er_b_up(er_b_up(a + E[j]) + M)) + 0x1p-140);
            Emax = fmax(Emax, E[j]);
        }
        double eEmax = exp_up(Emax);
        double absw = er_b_up(abs_e * eEmax), absPw = er_b_up(absP * eEmax);
        double lnA = er_b_up(er_b_up(ln_e + 2.0 * u1) + g8 * M); /* one rescaling by alpha */
        /* absolute losses of the implementation's sums (underflow, flush), in these units */
        double absS = er_b_up(er_b_up((double)(2 * Sk + 4) * tiny) * eEmax);
        /* exp(s_j - shift)'s lower ends of the row at once (a key not taking part: unused) */
        for (int64_t j = 0; j < Sk; j++) w.wm[j] = w.sh[j] == -INFINITY ? -1.0 : er_b_down(w.sl[j] - shift);
        exp_many(w.wm, w.d, NULL, Sk);
        double Dl, Dh; /* the row sum l, in units of exp(shift) */
        int bad = 0;
        if (tight) {
            /* ---- a declared block: per block b, the factor F_b (the product of the alphas after it) and
             * the sums of the rounded P (docs/proofs/attention.md, "A declared block") ---- */
            int64_t Bk = s->block;
            double la = er_b_up(er_b_up(2.0 * g8 * M) + 0x1p-140);        /* an alpha's argument error */
            double lnAl = er_b_up(la + ln_e);                              /* alpha within e^(+-lnAl) of exp(arg) */
            double ahi = er_b_up(er_b_up(exp_up(la) * (1.0 + eps_e)) + abs_e); /* every alpha is at most this */
            double infl = s->eng ? 1.0 + (double)(cp.mk + 8) * 0x1p-51 : 1.0;
            /* the blocks' visiting order: block ORD(t) is the t-th visited (order=reverse: from the last);
             * "after", "later" and "previous" below are in that order */
#define ORD(t) (s->reverse ? nblocks - 1 - (t) : (t))
            /* the running maxima's enclosures after each block, the keys per block, the largest score after */
            {
                double lo = -INFINITY, hi = -INFINITY;
                for (int64_t t = 0; t < nblocks; t++) {
                    int64_t bb = ORD(t);
                    int64_t j1 = (bb + 1) * Bk < Sk ? (bb + 1) * Bk : Sk;
                    bw.cnt[bb] = 0;
                    for (int64_t j = bb * Bk; j < j1; j++) {
                        if (w.sh[j] == -INFINITY) continue;
                        lo = fmax(lo, er_b_down(w.sl[j] - E[j]));
                        hi = fmax(hi, er_b_up(w.sh[j] + E[j]));
                        bw.cnt[bb]++;
                    }
                    mbl[bb] = lo, mbh[bb] = hi;
                }
                double lh = -INFINITY;
                for (int64_t t = nblocks - 1; t >= 0; t--) {
                    int64_t bb = ORD(t);
                    bw.later[bb] = lh;
                    int64_t j1 = (bb + 1) * Bk < Sk ? (bb + 1) * Bk : Sk;
                    for (int64_t j = bb * Bk; j < j1; j++)
                        if (w.sh[j] != -INFINITY) lh = fmax(lh, er_b_up(w.sh[j] + E[j]));
                }
            }
            double mlo = mbl[ORD(nblocks - 1)], mhi = mbh[ORD(nblocks - 1)]; /* the final running max */
            for (int64_t bb = 0; bb < nblocks; bb++) {
                bw.Fl[bb] = bw.Fh[bb] = 0;
                if (!bw.cnt[bb]) continue;
                double after = (double)(nblocks - 1 - ORD(bb)), ea = er_b_up(after * lnAl);
                double fl, fh;
                if (bw.later[bb] < mbl[bb]) {
                    /* no later score can reach this block's max: every later alpha is EXP(argument error) */
                    fl = exp_dn(-ea), fh = exp_up(ea);
                } else {
                    fl = exp_dn(er_b_down(er_b_down(mbl[bb] - mhi) - ea));
                    fh = exp_up(er_b_up(er_b_up(mbh[bb] - mlo) + ea));
                }
                double ab = er_b_up(er_b_up(after * abs_e) * er_b_up(2.0 * exp_up(ea)));
                bw.Fl[bb] = fmax(0.0, er_b_down(fl - ab)), bw.Fh[bb] = er_b_up(fh + ab);
            }
            memset(bw.N0, 0, sizeof(double) * (size_t)(nblocks * Dv * 2));
            if (s->eng)
                for (int64_t c = 0; c < Dv; c++) {
                    er_b_eng_init(&cp, &bw.ge[c], 0.0, 0.0), bw.xs[c] = 0, bw.em[c] = -100000;
                    bw.ms[c] = 0, bw.rs[c] = 0;
                }
            for (int64_t t = 0; t < nblocks; t++) {
                int64_t bb = ORD(t), pb = t > 0 ? ORD(t - 1) : 0; /* this block, the one visited before */
                int64_t j0 = bb * Bk, j1 = j0 + Bk < Sk ? j0 + Bk : Sk;
                double after = (double)(nblocks - 1 - t);
                /* l's path per term: its block's sum, the product, and per later block a multiplication by
                 * alpha and an addition (alpha itself is in F_b) */
                double Lq = er_b_up(er_b_up((double)(nsum + 1) * u1) + er_b_up(after * 2.0 * u1));
                double lq = Lq < 0.5 ? er_b_up(Lq / er_b_down(1.0 - Lq)) : INFINITY;
                double la0 = 0, lar = 0, lx0 = 0, lxr = 0;
                double *n0 = bw.N0 + bb * Dv, *nr = bw.NR + bb * Dv;
                if (s->eng && t > 0) {
                    /* this block's alpha = EXP(mu_(b-1) - mu_b): within e^(+-lnAl) of 1 where no score of
                     * the block can reach the running max, else of exp([mbl - mbh, mbh - mbl]) */
                    double al, ah = ahi, bm = -INFINITY;
                    for (int64_t j = j0; j < j1; j++)
                        if (w.sh[j] != -INFINITY) bm = fmax(bm, er_b_up(w.sh[j] + E[j]));
                    if (bm < mbl[pb]) al = exp_dn(-lnAl);
                    else {
                        al = exp_dn(er_b_down(er_b_down(mbl[pb] - mbh[bb]) - lnAl));
                        ah = fmin(ah, exp_up(er_b_up(er_b_up(mbh[pb] - mbl[bb]) + lnAl)));
                    }
                    al = fmax(0.0, er_b_down(al - abs_e)), ah = er_b_up(ah + abs_e);
                    if (!(mbl[pb] > -INFINITY)) al = 0, ah = ahi; /* no key before: O is zero anyway */
                    double am = 0.5 * (al + ah), ad = er_b_up(0.5 * (ah - al) * (1.0 + 0x1p-50) + am * 0x1p-52);
                    for (int64_t c = 0; c < Dv; c++) {
                        /* O = RN(alpha O) before the block's instructions (alpha <= ahi) */
                        er_b_eng *g = &bw.ge[c];
                        double Bx = er_b_up(g->B * ahi);
                        g->E = er_b_up(er_b_up(er_b_up(g->E * ahi) + er_b_up(Bx * 0x1p-24)) + 0x1p-149);
                        g->B = er_b_up(er_b_up(Bx * (1.0 + 0x1p-24)) + 0x1p-149);
                        /* the exact partial's enclosure ms +- rs times [al, ah] */
                        double m = bw.ms[c];
                        bw.ms[c] = m * am;
                        bw.rs[c] = er_b_up(er_b_up(er_b_up(bw.rs[c] * ah) + er_b_up(fabs(m) * ad)) + fabs(m) * 0x1p-51);
                    }
                }
                double fbl = 0, fbh = 0;
                if (bw.cnt[bb]) fbl = exp_dn(er_b_down(shift - mbh[bb])), fbh = exp_up(er_b_up(shift - mbl[bb]));
                for (int64_t j = j0; j < j1; j++) {
                    double Ph = 0;
                    if (s->eng && (j - j0) % cp.mk == 0)
                        /* |the exact partial O| before this instruction: the block's start, the block's keys so
                         * far (n0 +- nr: P's radius and the sums' roundings are in nr) */
                        for (int64_t c = 0; c < Dv; c++)
                            bw.bt[c] = er_b_up(er_b_up(fabs(bw.ms[c] + n0[c]) + er_b_up(er_b_up(bw.rs[c] + nr[c]) * (1.0 + gn))) +
                                               er_b_up((fabs(bw.ms[c]) + fabs(n0[c])) * 0x1p-52));
                    if (w.sh[j] != -INFINITY) {
                        double wl = w.d[j]; /* exp_dn(er_b_down(w.sl[j] - shift)) */
                        double dw = er_b_up(w.sh[j] - w.sl[j]), Ej = E[j];
                        double wh = dw < 0.5 ? UP8(wl * (1.0 + 0x1p-48) / (1.0 - dw)) : exp_up(er_b_up(w.sh[j] - shift));
                        if (Ej >= 0.5) wl = DN8(wl * exp_dn(-Ej)), wh = UP8(wh * exp_up(Ej)), Ej = 0;
                        /* p^ in the block's units, then P = round(p^) */
                        double pl = er_b_down(DN8(wl * fbl * (1.0 - Ej) * (1.0 - eps_e)) - abs_e);
                        double ph = er_b_up(UP8(wh * fbh / (1.0 - Ej) * (1.0 + eps_e)) + abs_e);
                        if (pl < 0) pl = 0;
                        double Pl = s->p_fmt >= 0 ? rnd_fast(&rsP, pl) : pl;
                        Ph = s->p_fmt >= 0 ? rnd_fast(&rsP, ph) : ph;
                        double P0 = 0.5 * (Pl + Ph), PR = HALFW(Pl, Ph, P0);
                        double X0 = 0.5 * (pl + ph), XR = HALFW(pl, ph, X0);
                        la0 += P0, lar += UP8(PR + (lq + gn) * Ph);
                        lx0 += X0, lxr += UP8(XR + (lq + gn) * ph);
                        /* the numerator's radius per |v|: P's, its sum's rounding, and (any_order's P V)
                         * the path's */
                        double ar = UP8(PR + (s->eng ? 2.0 * gn : lq + 2.0 * gn) * Ph);
                        axpy2(n0, nr, P0, ar, V + j * Dv, Dv);
                    }
                    if (s->eng) {
                        /* the P V instruction's terms (a key not taking part: P = 0, still a term) */
                        int eP = hw_e(Ph, emin_P);
                        const double *vr = V + j * Dv;
                        const int16_t *evr = bw.ev + j * Dv;
                        for (int64_t c = 0; c < Dv; c++) {
                            bw.xs[c] += Ph * fabs(vr[c]);
                            int e = eP + evr[c];
                            bw.em[c] = e > bw.em[c] ? e : bw.em[c];
                        }
                        if ((j - j0 + 1) % cp.mk == 0 || j == j1 - 1) {
                            int64_t nt = (j - j0) % cp.mk + 1;
                            for (int64_t c = 0; c < Dv; c++) {
                                double xs = er_b_up(bw.xs[c] * infl);
                                double bc = er_b_up(bw.bt[c] + bw.ge[c].E);
                                if (bc < bw.ge[c].B) bw.ge[c].B = bc;
                                er_b_eng_block(&cp, &bw.ge[c], xs, bw.em[c], nt, 1);
                                if (rel_p > 0) bw.ge[c].E = er_b_up(bw.ge[c].E + er_b_up(xs * rel_p));
                                bw.xs[c] = 0, bw.em[c] = -100000;
                            }
                        }
                    }
                }
                if (s->eng)
                    for (int64_t c = 0; c < Dv; c++) {
                        double m = bw.ms[c] + n0[c];
                        bw.rs[c] = er_b_up(er_b_up(er_b_up(bw.rs[c] + nr[c]) * (1.0 + gn)) + er_b_up(fabs(m) * 0x1p-52));
                        bw.ms[c] = m;
                    }
                /* the sums' own roundings (at most Bk binary64 additions each) are in gn's terms */
                bw.LA0[bb] = la0, bw.LAR[bb] = er_b_up(lar * (1.0 + gn)), bw.LX0[bb] = lx0, bw.LXR[bb] = er_b_up(lxr * (1.0 + gn));
            }
            /* the denominator l, in the final block's units: of the rounded P (A) or of p^ (X) */
            double dl[2] = {0, 0}, dh[2] = {0, 0}, x0d = 0;
            for (int64_t bb = 0; bb < nblocks; bb++) {
                if (!bw.cnt[bb]) continue;
                for (int ch = 0; ch < 2; ch++) {
                    double L0 = ch ? bw.LX0[bb] : bw.LA0[bb], LR = ch ? bw.LXR[bb] : bw.LAR[bb];
                    double lo = er_b_down(L0 - LR), hi = er_b_up(L0 + LR);
                    dl[ch] = er_b_down(dl[ch] + (lo > 0 ? er_b_down(bw.Fl[bb] * lo) : 0));
                    dh[ch] = er_b_up(dh[ch] + er_b_up(bw.Fh[bb] * hi));
                }
                x0d += 0.5 * (bw.Fl[bb] + bw.Fh[bb]) * bw.LA0[bb];
            }
            for (int ch = 0; ch < 2; ch++) dl[ch] = er_b_down(dl[ch] - absS), dh[ch] = er_b_up(dh[ch] + absS);
            if (!(dl[0] > 0) || !(dl[1] > 0) || !(x0d > 0)) bad = 1;
            if (!bad) {
                /* a centre x0 per column (any value: the model's midpoint), then N - x0 l = sum_b F_b (N_b - x0
                 * L_b).  The sums over blocks run in plain binary64, columns innermost (vectorized), and are
                 * widened at the end: each term a F (a = g0 -+ rad) is within 8 roundings of its exact value,
                 * relative to F (|g0| + rad) (g0's own cancellation is in rad's 2^-51 term), and the sum of
                 * nblocks terms within nblocks more, so (nblocks + 16) 2^-52 sum F (|g0| + rad) covers them */
                double *x0 = bw.tmp, *gl = x0 + Dv, *gh = gl + Dv, *sa = gh + Dv;
                for (int64_t c = 0; c < Dv; c++) x0[c] = 0;
                for (int64_t bb = 0; bb < nblocks; bb++) {
                    if (!bw.cnt[bb]) continue;
                    double f0 = 0.5 * (bw.Fl[bb] + bw.Fh[bb]);
                    const double *n0 = bw.N0 + bb * Dv;
                    for (int64_t c = 0; c < Dv; c++) x0[c] += f0 * n0[c];
                }
                for (int64_t c = 0; c < Dv; c++) {
                    x0[c] /= x0d;
                    if (!isfinite(x0[c])) x0[c] = 0;
                    olo[c] = INFINITY, ohi[c] = -INFINITY;
                }
                double slop = (double)(nblocks + 16) * 0x1p-52, g1 = 1.0 + gn;
                for (int ch = 0; ch < 2; ch++) {
                    for (int64_t c = 0; c < Dv; c++) gl[c] = gh[c] = sa[c] = 0;
                    for (int64_t bb = 0; bb < nblocks; bb++) {
                        if (!bw.cnt[bb]) continue;
                        double L0 = ch ? bw.LX0[bb] : bw.LA0[bb], LR = ch ? bw.LXR[bb] : bw.LAR[bb];
                        double Fl = bw.Fl[bb], Fh = bw.Fh[bb];
                        const double *n0 = bw.N0 + bb * Dv, *nr = bw.NR + bb * Dv;
                        for (int64_t c = 0; c < Dv; c++) {
                            double ax = fabs(x0[c]), g0 = n0[c] - x0[c] * L0;
                            double rad = nr[c] * g1 + ax * LR + (fabs(n0[c]) + ax * L0) * 0x1p-51;
                            double a = g0 - rad, z = g0 + rad;
                            gl[c] += (a >= 0 ? Fl : Fh) * a;
                            gh[c] += (z >= 0 ? Fh : Fl) * z;
                            sa[c] += Fh * (fabs(g0) + rad);
                        }
                    }
                    for (int64_t c = 0; c < Dv; c++) {
                        /* the widening, the engine's P V error (final units), the sums' underflow */
                        double ee = s->eng ? (bw.ge[c].done ? INFINITY : bw.ge[c].E) : 0;
                        double ex = er_b_up(er_b_up(er_b_up(sa[c] * slop) + 0x1p-1000) +
                                            er_b_up(ee + er_b_up(absS * er_b_up(er_b_up(vmax[c] + fabs(x0[c])) + 1.0))));
                        double ql, qh;
                        quot(er_b_down(gl[c] - ex), er_b_up(gh[c] + ex), dl[ch], dh[ch], &ql, &qh);
                        olo[c] = fmin(olo[c], er_b_down(x0[c] + ql)), ohi[c] = fmax(ohi[c], er_b_up(x0[c] + qh));
                    }
                }
            }
            /* l in units of exp(shift) for the lse: the final max lies in [mlo, mhi] */
            Dl = er_b_down(fmin(dl[0], dl[1]) * exp_dn(er_b_down(mlo - shift)));
            Dh = er_b_up(fmax(dh[0], dh[1]) * exp_up(er_b_up(mhi - shift)));
#undef ORD
        } else {
            /* ---- normal, any_order, flash over any partition: per key, in units of exp(shift) ---- */
            double sA0 = 0, sAR = 0, sX0 = 0, sXR = 0;
            for (int64_t c = 0; c < Dv; c++) w.acc[c] = 0, w.acc2[c] = 0;
            double after = s->kind != 2 ? 0.0 : (double)(Sk - 1);
            double L = er_b_up(er_b_up((double)(nsum + 1) * u1) + er_b_up(after * lnA) + (s->kind != 2 ? ln_d : 0));
            double eL = L < 0.5 ? er_b_up(1.0 / er_b_down(1.0 - L)) : exp_up(L);
            double emL = L < 1 ? er_b_down(1.0 - L) : 0.0;
            for (int64_t j = 0; j < Sk; j++) {
                if (w.sh[j] == -INFINITY) continue;
                /* exp(s_j - shift) in [wl, wh]; exp(-E) >= 1 - E and exp(E) <= 1 / (1 - E) for E < 1/2 */
                double wl = w.d[j]; /* exp_dn(er_b_down(w.sl[j] - shift)) */
                double dw = er_b_up(w.sh[j] - w.sl[j]), Ej = E[j];
                double wh = dw < 0.5 ? UP8(wl * (1.0 + 0x1p-48) / (1.0 - dw)) : exp_up(er_b_up(w.sh[j] - shift));
                if (Ej >= 0.5) wl = DN8(wl * exp_dn(-Ej)), wh = UP8(wh * exp_up(Ej)), Ej = 0;
                double xl = er_b_down(DN8(wl * (1.0 - Ej) * (1.0 - eps_e)) - absw);
                double xh = er_b_up(UP8(wh / (1.0 - Ej) * (1.0 + eps_e)) + absw);
                if (xl < 0) xl = 0;
                double al = er_b_down(DN8(xl * (1.0 - uP)) - absPw);
                double ah = er_b_up(UP8(xh * (1.0 + uP)) + absPw);
                if (al < 0) al = 0;
                al = DN8(al * emL), ah = UP8(ah * eL), xl = DN8(xl * emL), xh = UP8(xh * eL);
                double a0 = 0.5 * (al + ah), ar = HALFW(al, ah, a0);
                double X0 = 0.5 * (xl + xh);
                sX0 += X0, sXR += HALFW(xl, xh, X0);
                sA0 += a0, sAR += ar;
                axpy2(w.acc, w.acc2, a0, ar, V + j * Dv, Dv);
            }
            /* the row sum l: of the P values rounded (A) or as computed (X): either one */
            double RA = er_b_up(er_b_up(sAR + er_b_up(gn * er_b_up(sA0 + sAR))) + absS);
            double RX = er_b_up(er_b_up(sXR + er_b_up(gn * er_b_up(sX0 + sXR))) + absS);
            Dl = fmin(er_b_down(sA0 * (1.0 - gn) - RA), er_b_down(sX0 * (1.0 - gn) - RX));
            Dh = fmax(er_b_up(er_b_up(sA0 * (1.0 + gn)) + RA), er_b_up(er_b_up(sX0 * (1.0 + gn)) + RX));
            if (!(Dl > 0)) bad = 1;
            double rs = er_b_up(gn * er_b_up(sA0 + sAR) * 2.0);
            /* a matrix engine's P V over an unknown partition (docs/proofs/attention.md, "Matrix engines"):
             * at most n instructions, every term and partial below Bmax (in the implementation's units,
             * each alpha at most ahi): per instruction (k_s + 1 + xterms) 2^(eB - F) (+ 2^(eB - F2)) +
             * 2^(eB - p), and per key a rescaling's rounding u Bmax + 2^-149, all times ahi^n */
            double la = er_b_up(er_b_up(2.0 * g8 * M) + 0x1p-140);
            double An = s->eng ? exp_up(er_b_up((double)n * er_b_up(er_b_up(la + eps_e) + abs_e))) : 0;
            double Pmax = er_b_up(er_b_up(er_b_up(exp_up(la) * (1.0 + eps_e)) + abs_e) * (1.0 + uP) + absP);
            for (int64_t c = 0; c < Dv && !bad; c++) {
                double rN = er_b_up(er_b_up(er_b_up(w.acc2[c] * (1.0 + gn)) + er_b_up(vmax[c] * rs)) +
                                    er_b_up(absS * (vmax[c] + 1.0)));
                if (s->eng) {
                    double nn = (double)n, Bm = er_b_up(er_b_up(er_b_up(nn * Pmax) * vmax[c]) * An);
                    Bm = er_b_up(Bm * (1.0 + 0x1p-20) + 0x1p-140);
                    int eB = er_b_frexp_e(Bm);
                    double t = er_b_up(ldexp(er_b_up(nn * (2.0 + cp.xterms)), eB - cp.F) + ldexp(nn, eB - cp.out_p));
                    if (cp.F2) t = er_b_up(t + ldexp(nn, eB - cp.F2));
                    t = er_b_up(t + er_b_up(nn * er_b_up(er_b_up(Bm * 0x1p-24) + 0x1p-149)));
                    if (rel_p > 0) t = er_b_up(t + er_b_up(Bm * rel_p));
                    rN = er_b_up(rN + er_b_up(er_b_up(t * An) * eEmax));
                }
                quot(er_b_down(w.acc[c] - rN), er_b_up(w.acc[c] + rN), Dl, Dh, &olo[c], &ohi[c]);
            }
        }
        if (bad) {
            for (int64_t c = 0; c < Dv; c++) olo[c] = -INFINITY, ohi[c] = INFINITY;
            lse_lo[row] = -INFINITY, lse_hi[row] = INFINITY;
            continue;
        }
        for (int64_t c = 0; c < Dv; c++) {
            double lo = olo[c], hi = ohi[c];
            /* the last division within ulps, and its absolute loss below the normal range */
            double td = ldexp(1.0, ec - pc + 1) * (s->ulps_div > 1 ? s->ulps_div : 1.0) + (s->ftz ? ldexp(1.0, ec) : 0);
            lo = er_b_down(er_b_down(lo - er_b_up(fabs(lo) * eps_d)) - td);
            hi = er_b_up(er_b_up(hi + er_b_up(fabs(hi) * eps_d)) + td);
            if (p->v_descale != 1.0) {
                double a = er_b_down(lo * p->v_descale), z = er_b_up(hi * p->v_descale);
                lo = er_b_down(er_b_down(a - er_b_up(fabs(a) * u)) - tiny);
                hi = er_b_up(er_b_up(z + er_b_up(fabs(z) * u)) + tiny);
            }
            olo[c] = lo, ohi[c] = hi;
        }
        /* lse = shift + log(D): log within ulps (relative, plus ulps of 1 absolute), then a few
         * roundings on |shift| + |log D| + Emax */
        double gl = log_dn(Dl), gh = log_up(Dh), ga = fmax(fabs(gl), fabs(gh));
        double er = er_b_up(er_b_up(eps_l * ga) + eps_l + er_b_up(g8 * er_b_up(er_b_up(fabs(shift) + Emax) + ga)));
        lse_lo[row] = er_b_down(er_b_down(shift + gl) - er);
        lse_hi[row] = er_b_up(er_b_up(shift + gh) + er);
    }
    ws_free(&w);
    bd_free(&bw);
    return ER_OK;
}
