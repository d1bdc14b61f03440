/* report_internal.h (internal): what src/report.c (the scoring, the fused covers and scoring) and
 * src/report_covers.c (covers and the compact keys) share: the patterns as order-mapped integers, the
 * rows of an output, the keys' layout and the covers' jobs. */
#ifndef ER_REPORT_INTERNAL_FILE_H
#define ER_REPORT_INTERNAL_FILE_H

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/er_alloc.h"
#include "exactref/exactref.h"
#include "exactref/report.h"
#include "exactref/core/er_round.h"
#include "host/er_msg.h"
#include "er_report.h"
#include "report_cpu.h"
#include "result_internal.h"


/* the library's one message helper (host/er_msg.h) */
#define fail(msg, size, st, ...) ((er_status)er_msgf((msg), (size), (st), __VA_ARGS__))

/* The element at flat row-major index e of a 2-D or 3-D tensor, through its strides. */
static inline uint64_t element(const er_tensor *t, int64_t e, int sb)
{
    int64_t m = t->shape[t->ndim - 2], n = t->shape[t->ndim - 1];
    int64_t b = e / (m * n), i = (e / n) % m, j = e % n;
    int64_t off = (t->ndim == 3 ? b * t->strides[0] : 0) + i * t->strides[t->ndim - 2] + j * t->strides[t->ndim - 1];
    uint64_t x = 0;
    const unsigned char *p = (const unsigned char *)t->data + (size_t)off * (size_t)sb;
    for (int k = sb - 1; k >= 0; k--) x = x << 8 | p[k];
    return x;
}

/* The value of a pattern: floats as doubles, integers sign- or zero-extended. */
static inline double value_of(int fmt, const er_format_info *fi, uint64_t bits)
{
    double v = 0;
    if (fi->kind == ER_KIND_FLOAT) {
        er_from_bits(fmt, bits, &v);
        return v;
    }
    if (fi->kind == ER_KIND_SINT) {
        int w = fi->width;
        int64_t s = w >= 64 ? (int64_t)bits
                            : (int64_t)((bits & ((UINT64_C(1) << w) - 1u)) ^ (UINT64_C(1) << (w - 1))) -
                                  (INT64_C(1) << (w - 1));
        return (double)s;
    }
    return (double)bits;
}

/* A signed ordinal of a float pattern: consecutive values of the format have consecutive ordinals. */
static inline int64_t ordinal(int fmt, uint64_t bits)
{
    er_fmt d = er_fmt_get(fmt);
    uint64_t mag = (bits >> d.pad) & ((d.ebits + d.mbits >= 64) ? ~0ull : ((1ull << (d.ebits + d.mbits)) - 1u));
    int neg = er_fmt_signed(d) && ((bits >> (d.width - 1)) & 1u);
    return neg ? -(int64_t)mag : (int64_t)mag;
}

/* hi - lo of two ordinals, saturated to int64 (f64 ordinals span nearly 2^64) */
static inline int64_t ulps_between(int64_t lo, int64_t hi)
{
    if (hi >= lo) {
        uint64_t d = (uint64_t)hi - (uint64_t)lo;
        return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
    }
    uint64_t d = (uint64_t)lo - (uint64_t)hi;
    return d >= (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)d;
}

static inline int all_tiny(const er_tensor *t)
{
    er_format_info ti;
    if (er_format_get_info(t->format, &ti) != ER_OK) return 0;
    int64_t cnt = 1;
    for (int d = 0; d < t->ndim; d++) cnt *= t->shape[d];
    for (int64_t x = 0; x < cnt; x++) {
        er_val v = er_decode(t->format, element(t, x, ti.storage_bytes));
        if (v.cls == ER_CLASS_NORMAL || v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) return 0;
    }
    return 1;
}

/* Whether every element of the output is exactly a value of format f (and finite). */
static inline int all_in(const er_tensor *out, int sb, int64_t count, int f)
{
    for (int64_t e = 0; e < count; e++) {
        uint64_t x = element(out, e, sb), y;
        unsigned flags = 0;
        er_val v = er_decode(out->format, x);
        if (v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) return 0;
        if (er_convert_bits(out->format, f, x, ER_RND_NEAREST_EVEN, 0u, &y, &flags) != ER_OK) return 0;
        if (flags & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID | ER_FLAG_UNDERFLOW)) return 0;
    }
    return 1;
}

/* The report's hint (narrower_format): the first of a_format, b_format, bf16, f16, f32 that is a float
 * format narrower than the output's (fi) holding every output element exactly, where the rounded
 * answer R needs more than it (an output that never does is the hint); -1 for none. */
static inline int narrower_format(const er_tensor *out, const er_tensor *R, const er_format_info *fi, int64_t count,
                                  int a_format, int b_format)
{
    int cands[5] = {a_format, b_format, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
    for (int c = 0; c < 5; c++) {
        er_format_info ci;
        int fc = cands[c];
        if (fc < 0 || fc == out->format || er_format_get_info(fc, &ci) != ER_OK || ci.kind != ER_KIND_FLOAT ||
            ci.width >= fi->width)
            continue;
        if (all_in(out, fi->storage_bytes, count, fc) && !all_in(R, fi->storage_bytes, count, fc)) return fc;
    }
    return -1;
}

/* ---- The fast path: patterns as order-mapped integers, rows over threads ------------------------- */

/*
 * A float pattern's class and key: key(x) <= key(y) exactly when value(x) <= value(y) for patterns
 * that are not NaN (sign and magnitude as one signed integer, both zeros 0), the decoding er_decode
 * does (the bits above the width and the padding ignored).  A pattern of the format is "valid" when
 * none of those ignored bits is set (er_check_pattern); er_from_bits refuses the others, so the
 * straightforward code below handles them.
 */
#define C_FIN 0
#define C_PINF 1
#define C_NINF 2
#define C_NAN 3

typedef struct fdesc {
    int fmt, sb, width, pad, mbits, special, issigned;
    int val;          /* how fval reads a value: 0 f64, 1 f32 or tf32, 2 bf16, 3 the table */
    uint64_t wmask, magmask, valid;
    const double *lut;
} fdesc;

static inline uint64_t wmask_(int w) { return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u; }

/* The descriptor of a float format with 1, 2, 4 or 8 storage bytes; lut8 receives the values of the
 * 1-byte formats (256 entries).  0 when the fast path does not apply (src/report_covers.c). */
int er_report_fdesc_make_(int fmt, fdesc *f, double *lut8);
/* The checks of er_check_report_score and er_check_report_narrower (fn, for the messages): output 2-D or
 * 3-D, R of its format and shape, `want` elements (want_name: what has them); *fi output's format,
 * *count its elements.  report.c. */
er_status er_report_output_shape_(const char *fn, const er_tensor *output, const er_tensor *R, int64_t want,
                                  const char *want_name, er_format_info *fi, int64_t *count, char *msg, size_t msg_size);
#define fdesc_make er_report_fdesc_make_
/* f16's values (every pattern), filled by the first fdesc_make of f16 */
extern double er_report_f16_lut_[65536];
#define f16_lut_ er_report_f16_lut_

#define ER_AI static inline __attribute__((always_inline))
/* the branch-free loops below vectorise at GCC's -O3 (clang vectorises at -O2 and knows no such attribute) */
#if defined(__GNUC__) && !defined(__clang__)
#define ER_VEC __attribute__((optimize("O3")))
#else
#define ER_VEC
#endif
/* x86: each vectorised loop is built twice, for the baseline ISA and for AVX2, and the AVX2 copy runs
 * where the processor has it (the same operations on the same values: the same bits) */
#ifdef ER_AVX2_CLONES /* src/report_cpu.h */
#define ER_AVX2 __attribute__((target("avx2")))
#include <immintrin.h>
#define have_avx2 er_report_have_avx2_
#define have_avx512 er_report_have_avx512_
#endif

ER_AI uint64_t load_(const unsigned char *p, int sb)
{
    if (sb == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    if (sb == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    if (sb == 1) return *p;
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

ER_AI int64_t fkey(const fdesc *f, uint64_t bits, int *cls)
{
    uint64_t x = bits & f->wmask;
    int neg = f->issigned && ((x >> (f->width - 1)) & 1u);
    uint64_t mag = (x >> f->pad) & f->magmask;
    int c = C_FIN;
    if (f->special == ER_SPECIAL_IEEE) {
        if ((mag >> f->mbits) == (f->magmask >> f->mbits))
            c = (mag & wmask_(f->mbits)) ? C_NAN : neg ? C_NINF : C_PINF;
    } else if (f->special == ER_SPECIAL_FN) {
        if (mag == f->magmask) c = C_NAN;
    } else if (f->special == ER_SPECIAL_FNUZ) {
        if (neg && mag == 0) c = C_NAN;
    }
    *cls = c;
    return neg ? -(int64_t)mag : (int64_t)mag;
}

/* The value of a valid, finite pattern (what er_from_bits gives). */
ER_AI double fval(const fdesc *f, uint64_t x)
{
    if (f->val == 0) {
        double v;
        memcpy(&v, &x, 8);
        return v;
    }
    if (f->val == 1 || f->val == 2) {
        uint32_t u = f->val == 2 ? (uint32_t)x << 16 : (uint32_t)x;
        float v;
        memcpy(&v, &u, 4);
        return (double)v;
    }
    return f->lut[x];
}

/* The ends of a finite range as keys: a NaN or invalid end compares false (as the doubles did). */
ER_AI void range_keys(const fdesc *f, uint64_t lo, uint64_t hi, int64_t *kl, int64_t *kh)
{
    int cl, ch;
    *kl = fkey(f, lo, &cl);
    *kh = fkey(f, hi, &ch);
    if (cl == C_NAN || (lo & ~f->valid)) *kl = INT64_MAX;
    if (ch == C_NAN || (hi & ~f->valid)) *kh = INT64_MIN;
}

/* Rows of an output (batch folded into rows): where row r's element j lies, in elements. */
typedef struct rows_ {
    const unsigned char *base;
    int64_t m, n, s0, s1, s2;
} rows_;

static inline rows_ rows_of(const er_tensor *t)
{
    rows_ w;
    w.base = (const unsigned char *)t->data;
    w.m = t->shape[t->ndim - 2];
    w.n = t->shape[t->ndim - 1];
    w.s0 = t->ndim == 3 ? t->strides[0] : 0;
    w.s1 = t->strides[t->ndim - 2];
    w.s2 = t->strides[t->ndim - 1];
    return w;
}

ER_AI int64_t row_off(const rows_ *w, int64_t r) { return (r / w->m) * w->s0 + (r % w->m) * w->s1; }

#define nthreads_for er_report_nthreads_


/* ---- covers and the keys (src/report_covers.c) ---- */

typedef struct cov_job {
    const er_bounds *bd;
    const fdesc *f;
    const struct er_bkeys *keys; /* NULL: read the bounds */
    unsigned char *rbit_fl;      /* keys_rbit: the keys' flags that receive bit 3 */
    rows_ w;
    int exact_int;
    unsigned char *cov;
    int64_t r0, r1, bad;
} cov_job;

static const fdesc f32_desc_ = {ER_FMT_F32, 4, 32, 0, 23, ER_SPECIAL_IEEE, 1, 1, 0xFFFFFFFFu, 0x7FFFFFFFu, 0xFFFFFFFFu, NULL};
/* bf16's and f16's, as fdesc_make makes them (f16's table left out: the score's outside path needs none) */
static const fdesc bf16_desc_ = {ER_FMT_BF16, 2, 16, 0, 7, ER_SPECIAL_IEEE, 1, 2, 0xFFFFu, 0x7FFFu, 0xFFFFu, NULL};
static const fdesc f16_desc_ = {ER_FMT_F16, 2, 16, 0, 10, ER_SPECIAL_IEEE, 1, 3, 0xFFFFu, 0x7FFFu, 0xFFFFu, NULL};

struct er_bkeys {
    er_bkeys_head head;    /* er_bkeys_free: the result frees the keys through it (er_report.h) */
    int fmt, kb;           /* the output format; key bytes: 2 (formats of up to 2 storage bytes) or 4 */
    int64_t count, zero_ok;
    void *lo, *hi;         /* int16_t or int32_t keys; an empty range as lo = max > hi = min */
    unsigned char *fl;     /* bit 0 may_pinf, bit 1 may_ninf, bit 2 may_nan, bit 3 (rdata not NULL) the
                            * rounded answer's pattern is covered */
    const void *rdata;     /* the rounded answer bit 3 was made for (its data, shape and strides) */
    int64_t rshape[3], rstrides[3];
};

/* Whether element e's finite range contains zero, as score_slow decides it on doubles: an end that
 * er_from_bits refuses reads as 0 there, a NaN end compares false, e8m0 has no zero (every value > 0). */
ER_AI int zero_in(const fdesc *f, const er_bounds *bd, int64_t e)
{
    uint64_t lo = bd->low[e], hi = bd->high[e];
    int cl, ch;
    int64_t kl = fkey(f, lo, &cl), kh = fkey(f, hi, &ch);
    int l0 = (lo & ~f->valid) ? 1 : cl != C_NAN && kl <= 0 && f->fmt != ER_FMT_F8E8M0FNU;
    int h0 = (hi & ~f->valid) ? 1 : ch != C_NAN && kh >= 0;
    return bd->has_range[e] && l0 && h0;
}

#define ER_KEYS_IEEE_BODY(K, KMAX, KMIN)                                                                     \
    const uint64_t *__restrict low = bd->low, *__restrict high = bd->high;                                   \
    const unsigned char *__restrict hr = bd->has_range, *__restrict pi = bd->may_pinf,                       \
                                    *__restrict ni = bd->may_ninf, *__restrict na = bd->may_nan;             \
    K *__restrict klo = (K *)k->lo, *__restrict khi = (K *)k->hi;                                             \
    unsigned char *__restrict fl = k->fl;                                                                     \
    const int bits = sb * 8;                                                                                  \
    const uint32_t magm = sb == 4 ? 0x7FFFFFFFu : 0x7FFFu;                                                    \
    int64_t zero = 0;                                                                                         \
    for (int64_t e = e0; e < e1; e++) {                                                                       \
        uint32_t l = (uint32_t)low[e], u = (uint32_t)high[e];                                                 \
        uint32_t ml = l & magm, mu = u & magm;                                                                \
        int32_t sl = -(int32_t)(l >> (bits - 1) & 1u), su = -(int32_t)(u >> (bits - 1) & 1u);               \
        int32_t kl = (int32_t)(ml ^ (uint32_t)sl) - sl, ku = (int32_t)(mu ^ (uint32_t)su) - su;             \
        uint32_t lbad = (uint32_t)((low[e] >> bits) != 0), ubad = (uint32_t)((high[e] >> bits) != 0);         \
        uint32_t h = hr[e] != 0;                                                                              \
        uint32_t keep = h & (lbad ^ 1u) & (ubad ^ 1u) & (ml <= inf) & (mu <= inf) & (uint32_t)(kl <= ku);    \
        klo[e] = keep ? (K)kl : (K)KMAX;                                                                      \
        khi[e] = keep ? (K)ku : (K)KMIN;                                                                      \
        fl[e] = (unsigned char)((pi[e] != 0) | (ni[e] != 0) << 1 | (na[e] != 0) << 2);                        \
        uint32_t l0 = lbad | ((ml <= inf) & (uint32_t)(kl <= 0)), u0 = ubad | ((mu <= inf) & (uint32_t)(ku >= 0)); \
        zero += (int64_t)(h & l0 & u0);                                                                       \
    }                                                                                                         \
    return zero;

ER_AI int64_t keys_ieee(const er_bounds *bd, er_bkeys *k, int64_t e0, int64_t e1, const int sb, const uint32_t inf)
{
    if (sb == 4) {
        ER_KEYS_IEEE_BODY(int32_t, INT32_MAX, INT32_MIN)
    } else {
        ER_KEYS_IEEE_BODY(int16_t, INT16_MAX, INT16_MIN)
    }
}

/* the keys of bd for the output format f (NULL: out of memory); a covers job's rows */
er_bkeys *er_report_keys_make_(const er_bounds *bd, const fdesc *f);
#define keys_make er_report_keys_make_
void *er_report_cov_thread_(void *arg);
#define cov_thread er_report_cov_thread_

#endif
