/* report_covers.c: covers: an output against its bounds as order-mapped integers, rows over threads,
 * through the compact keys made once and kept beside the bounds; a result's covers. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "host/er_par.h"

double er_report_f16_lut_[65536];
static pthread_once_t f16_once_ = PTHREAD_ONCE_INIT;
static void f16_init_(void)
{
    for (uint32_t x = 0; x < 65536u; x++) {
        double v = 0;
        er_from_bits(ER_FMT_F16, x, &v);
        f16_lut_[x] = v;
    }
}

/* The descriptor of a float format with 1, 2, 4 or 8 storage bytes; lut8 receives the values of the
 * 1-byte formats (256 entries).  0 when the fast path does not apply. */
int er_report_fdesc_make_(int fmt, fdesc *f, double *lut8)
{
    er_format_info fi;
    if (er_format_get_info(fmt, &fi) != ER_OK || fi.kind != ER_KIND_FLOAT) return 0;
    er_fmt d = er_fmt_get(fmt);
    memset(f, 0, sizeof *f);
    f->fmt = fmt;
    f->sb = fi.storage_bytes;
    f->width = d.width;
    f->pad = d.pad;
    f->mbits = d.mbits;
    f->special = d.special;
    f->issigned = er_fmt_signed(d);
    f->wmask = wmask_(d.width);
    f->magmask = wmask_(d.ebits + d.mbits);
    f->valid = f->wmask & ~wmask_(d.pad);
    if (fmt == ER_FMT_F64) f->val = 0;
    else if (fmt == ER_FMT_F32 || fmt == ER_FMT_TF32) f->val = 1;
    else if (fmt == ER_FMT_BF16) f->val = 2;
    else if (fmt == ER_FMT_F16) {
        pthread_once(&f16_once_, f16_init_);
        f->val = 3;
        f->lut = f16_lut_;
    } else if (f->sb == 1) {
        for (uint32_t x = 0; x < 256u; x++) {
            double v = 0;
            er_from_bits(fmt, x, &v);
            lut8[x] = v;
        }
        f->val = 3;
        f->lut = lut8;
    } else
        return 0;
    return 1;
}

/* ---- covers ---- */

ER_AI int64_t cover_rows(const er_bounds *bd, const fdesc *f, const rows_ *w, unsigned char *cov, int64_t r0,
                         int64_t r1)
{
    /* the arrays as restrict locals: cov's stores alias nothing the loop reads */
    const uint64_t *__restrict low = bd->low, *__restrict high = bd->high;
    const unsigned char *__restrict hr = bd->has_range, *__restrict pi = bd->may_pinf, *__restrict ni = bd->may_ninf,
                                    *__restrict na = bd->may_nan;
    unsigned char *__restrict cv = cov;
    const fdesc fd = *f;
    const int sb = fd.sb;
    const int64_t n = w->n, s2 = w->s2;
    int64_t bad = 0;
    for (int64_t r = r0; r < r1; r++) {
        const unsigned char *__restrict p = w->base + (size_t)row_off(w, r) * (size_t)sb;
        const int64_t e0 = r * n;
        for (int64_t j = 0; j < n; j++) {
            int64_t e = e0 + j, kl, kh;
            uint64_t x = load_(p + (size_t)(j * s2) * (size_t)sb, sb);
            int c;
            int64_t k = fkey(&fd, x, &c);
            range_keys(&fd, low[e], high[e], &kl, &kh);
            int fin = (hr[e] != 0) & (kl <= k) & (k <= kh) & ((x & ~fd.valid) == 0);
            int sp = c == C_NAN ? na[e] : c == C_PINF ? pi[e] : ni[e];
            int ok = c == C_FIN ? fin : sp != 0;
            cv[e] = (unsigned char)ok;
            bad += !ok;
        }
    }
    return bad;
}

/* IEEE formats whose pattern fills its storage (f32, f16, bf16) with unit stride: the same decisions,
 * branch-free on 32-bit keys (sign-magnitude folded into two's complement), a loop the compiler
 * vectorises.  sb: storage bytes; inf: the infinity's magnitude pattern. */
ER_AI int64_t cover_rows_ieee(const er_bounds *bd, const rows_ *w, unsigned char *cov, int64_t r0, int64_t r1,
                              const int sb, const uint32_t inf)
{
    const uint64_t *__restrict low = bd->low, *__restrict high = bd->high;
    const unsigned char *__restrict hr = bd->has_range, *__restrict pi = bd->may_pinf, *__restrict ni = bd->may_ninf,
                                    *__restrict na = bd->may_nan;
    unsigned char *__restrict cv = cov;
    const int64_t n = w->n;
    const int bits = sb * 8;
    const uint32_t magm = sb == 4 ? 0x7FFFFFFFu : 0x7FFFu;
    int64_t bad = 0;
    for (int64_t r = r0; r < r1; r++) {
        const unsigned char *__restrict p = w->base + (size_t)row_off(w, r) * (size_t)sb;
        unsigned char *__restrict c = cv + r * n;
        const uint64_t *__restrict lo = low + r * n, *__restrict hi = high + r * n;
        const unsigned char *__restrict h = hr + r * n, *__restrict a = pi + r * n, *__restrict b = ni + r * n,
                                        *__restrict q = na + r * n;
        int64_t rowbad = 0;
        for (int64_t j = 0; j < n; j++) {
            uint32_t x;
            if (sb == 4) memcpy(&x, p + 4 * j, 4);
            else {
                uint16_t x16;
                memcpy(&x16, p + 2 * j, 2);
                x = x16;
            }
            uint32_t l = (uint32_t)lo[j], u = (uint32_t)hi[j];
            uint32_t mx = x & magm, ml = l & magm, mu = u & magm;
            int32_t sx = -(int32_t)(x >> (bits - 1) & 1u), sl = -(int32_t)(l >> (bits - 1) & 1u),
                    su = -(int32_t)(u >> (bits - 1) & 1u);
            int32_t kx = (int32_t)(mx ^ (uint32_t)sx) - sx, kl = (int32_t)(ml ^ (uint32_t)sl) - sl,
                    ku = (int32_t)(mu ^ (uint32_t)su) - su;
            uint32_t ends = (uint32_t)(((lo[j] | hi[j]) >> bits) == 0) & (ml <= inf) & (mu <= inf);
            uint32_t fin = (uint32_t)(h[j] != 0) & (uint32_t)(kl <= kx) & (uint32_t)(kx <= ku) & ends;
            uint32_t isnan_ = mx > inf, isinf_ = mx == inf;
            uint32_t qa = q[j] != 0, ba = b[j] != 0, aa = a[j] != 0;
            uint32_t sp = (isnan_ & qa) | (isinf_ & (uint32_t)(sx & 1) & ba) | (isinf_ & (uint32_t)(~sx & 1) & aa);
            uint32_t ok = sp | (fin & ~(isnan_ | isinf_) & 1u);
            c[j] = (unsigned char)ok;
            rowbad += (int64_t)(ok ^ 1u);
        }
        bad += rowbad;
    }
    return bad;
}

#ifdef ER_AVX2_CLONES
#define ER_PICK(name) (have_avx2() ? name##_avx2 : name##_base)
#else
#define ER_PICK(name) name##_base
#endif

#define ER_COVER_IEEE(name, sb, inf)                                                                           \
    ER_VEC static int64_t name##_base(const er_bounds *bd, const rows_ *w, unsigned char *cov, int64_t r0,        \
                                      int64_t r1)                                                             \
    {                                                                                                         \
        return cover_rows_ieee(bd, w, cov, r0, r1, sb, inf);                                                  \
    }                                                                                                         \
    ER_CLONE_AVX2(static int64_t name##_avx2(const er_bounds *bd, const rows_ *w, unsigned char *cov, int64_t r0, \
                                             int64_t r1) { return cover_rows_ieee(bd, w, cov, r0, r1, sb, inf); })
#ifdef ER_AVX2_CLONES
#define ER_CLONE_AVX2(...) ER_VEC ER_AVX2 __VA_ARGS__
#else
#define ER_CLONE_AVX2(...)
#endif
ER_COVER_IEEE(cover_rows_f32, 4, 0x7F800000u)
ER_COVER_IEEE(cover_rows_bf16, 2, 0x7F80u)
ER_COVER_IEEE(cover_rows_f16, 2, 0x7C00u)

/* ---- the compact keys: made once per bounds and output format, kept with the bounds ---- */

void er_bkeys_free(er_bkeys *k)
{
    if (!k) return;
    er_big_free(k->lo);
    er_big_free(k->hi);
    er_big_free(k->fl);
    free(k);
}

typedef struct key_job {
    const er_bounds *bd;
    const fdesc *f;
    er_bkeys *k;
    int64_t e0, e1, zero;
} key_job;

static void *key_thread(void *arg)
{
    key_job *j = (key_job *)arg;
    const er_bounds *bd = j->bd;
    const fdesc fd = *j->f;
    er_bkeys *k = j->k;
    int64_t zero = 0;
    for (int64_t e = j->e0; e < j->e1; e++) {
        int64_t kl, kh;
        range_keys(&fd, bd->low[e], bd->high[e], &kl, &kh);
        zero += zero_in(&fd, bd, e);
        int empty = !bd->has_range[e] || kl > kh;
        if (k->kb == 2) {
            ((int16_t *)k->lo)[e] = empty ? INT16_MAX : (int16_t)kl;
            ((int16_t *)k->hi)[e] = empty ? INT16_MIN : (int16_t)kh;
        } else {
            ((int32_t *)k->lo)[e] = empty ? INT32_MAX : (int32_t)kl;
            ((int32_t *)k->hi)[e] = empty ? INT32_MIN : (int32_t)kh;
        }
        k->fl[e] = (unsigned char)((bd->may_pinf[e] != 0) | (bd->may_ninf[e] != 0) << 1 | (bd->may_nan[e] != 0) << 2);
    }
    j->zero = zero;
    return NULL;
}

/* key_thread's keys for IEEE formats that fill their storage (f32, bf16, f16), branch-free: range_keys
 * and zero_in on 32-bit sign-magnitude keys, as cover_rows_ieee reads the ends.  K: the key type. */
#define ER_KEYS_IEEE(name, sb, inf)                                                                            \
    ER_VEC static int64_t name##_base(const er_bounds *bd, er_bkeys *k, int64_t e0, int64_t e1)                  \
    {                                                                                                         \
        return keys_ieee(bd, k, e0, e1, sb, inf);                                                             \
    }
ER_KEYS_IEEE(keys_f32, 4, 0x7F800000u)
ER_KEYS_IEEE(keys_bf16, 2, 0x7F80u)
ER_KEYS_IEEE(keys_f16, 2, 0x7C00u)

#ifdef ER_AVX2_CLONES
/* keys_ieee in AVX2 lanes, 4 elements a step: the 64-bit ends' low halves as 32-bit lanes, a bit above
 * the width as an invalid end; the flag bytes in a loop of their own; the tail by keys_ieee */
ER_AVX2 static int64_t keys_avx2(const er_bounds *bd, er_bkeys *k, int64_t e0, int64_t e1, const int sb,
                                 const uint32_t inf)
{
    const __m256i lo32 = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m128i magm = _mm_set1_epi32(sb == 4 ? 0x7FFFFFFF : 0x7FFF), vinf = _mm_set1_epi32((int)inf);
    const __m128i kmax = _mm_set1_epi32(sb == 4 ? INT32_MAX : INT16_MAX);
    const __m128i kmin = _mm_set1_epi32(sb == 4 ? INT32_MIN : INT16_MIN);
    const __m128i z = _mm_setzero_si128(), ones = _mm_set1_epi32(-1);
    const __m256i z4 = _mm256_setzero_si256();
    const int bits = sb * 8;
    __m128i zacc = z;
    int64_t e = e0;
    for (; e + 4 <= e1; e += 4) {
        __m256i L = _mm256_loadu_si256((const __m256i *)(const void *)(bd->low + e));
        __m256i U = _mm256_loadu_si256((const __m256i *)(const void *)(bd->high + e));
        /* 0 / -1 per element: no bit above the width */
        __m128i lok = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            _mm256_cmpeq_epi64(bits == 32 ? _mm256_srli_epi64(L, 32) : _mm256_srli_epi64(L, 16), z4), lo32));
        __m128i uok = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            _mm256_cmpeq_epi64(bits == 32 ? _mm256_srli_epi64(U, 32) : _mm256_srli_epi64(U, 16), z4), lo32));
        __m128i l = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(L, lo32));
        __m128i u = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(U, lo32));
        __m128i ml = _mm_and_si128(l, magm), mu = _mm_and_si128(u, magm);
        __m128i sl = bits == 32 ? _mm_srai_epi32(l, 31) : _mm_srai_epi32(_mm_slli_epi32(l, 16), 31);
        __m128i su = bits == 32 ? _mm_srai_epi32(u, 31) : _mm_srai_epi32(_mm_slli_epi32(u, 16), 31);
        __m128i kl = _mm_sub_epi32(_mm_xor_si128(ml, sl), sl), ku = _mm_sub_epi32(_mm_xor_si128(mu, su), su);
        int32_t h4;
        memcpy(&h4, bd->has_range + e, 4);
        __m128i h = _mm_xor_si128(_mm_cmpeq_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(h4)), z), ones);
        __m128i lnan = _mm_cmpgt_epi32(ml, vinf), unan = _mm_cmpgt_epi32(mu, vinf);
        __m128i drop = _mm_or_si128(_mm_or_si128(lnan, unan), _mm_cmpgt_epi32(kl, ku));
        __m128i keep = _mm_andnot_si128(drop, _mm_and_si128(h, _mm_and_si128(lok, uok)));
        __m128i klo = _mm_blendv_epi8(kmax, kl, keep), khi = _mm_blendv_epi8(kmin, ku, keep);
        if (sb == 4) {
            _mm_storeu_si128((__m128i *)(void *)((int32_t *)k->lo + e), klo);
            _mm_storeu_si128((__m128i *)(void *)((int32_t *)k->hi + e), khi);
        } else {
            _mm_storel_epi64((__m128i *)(void *)((int16_t *)k->lo + e), _mm_packs_epi32(klo, klo));
            _mm_storel_epi64((__m128i *)(void *)((int16_t *)k->hi + e), _mm_packs_epi32(khi, khi));
        }
        /* value <= 0: an invalid end (read as 0), or a non-NaN negative or zero; value >= 0 likewise */
        __m128i lz = _mm_cmpeq_epi32(ml, z), uz = _mm_cmpeq_epi32(mu, z);
        __m128i l0 = _mm_or_si128(_mm_andnot_si128(lok, ones), _mm_andnot_si128(lnan, _mm_or_si128(sl, lz)));
        __m128i upos = _mm_or_si128(_mm_xor_si128(su, ones), uz);
        __m128i u0 = _mm_or_si128(_mm_andnot_si128(uok, ones), _mm_andnot_si128(unan, upos));
        zacc = _mm_sub_epi32(zacc, _mm_and_si128(h, _mm_and_si128(l0, u0)));
    }
    int32_t zl[4];
    _mm_storeu_si128((__m128i *)(void *)zl, zacc);
    int64_t zero = (int64_t)zl[0] + zl[1] + zl[2] + zl[3];
    const unsigned char *pi = bd->may_pinf, *ni = bd->may_ninf, *na = bd->may_nan;
    for (int64_t q = e0; q < e; q++)
        k->fl[q] = (unsigned char)((pi[q] != 0) | (ni[q] != 0) << 1 | (na[q] != 0) << 2);
    if (e < e1) zero += keys_ieee(bd, k, e, e1, sb, inf);
    return zero;
}

ER_AVX2 static int64_t keys_f32_avx2(const er_bounds *bd, er_bkeys *k, int64_t e0, int64_t e1)
{
    return keys_avx2(bd, k, e0, e1, 4, 0x7F800000u);
}
ER_AVX2 static int64_t keys_bf16_avx2(const er_bounds *bd, er_bkeys *k, int64_t e0, int64_t e1)
{
    return keys_avx2(bd, k, e0, e1, 2, 0x7F80u);
}
ER_AVX2 static int64_t keys_f16_avx2(const er_bounds *bd, er_bkeys *k, int64_t e0, int64_t e1)
{
    return keys_avx2(bd, k, e0, e1, 2, 0x7C00u);
}
#endif

static void *key_thread_ieee(void *arg)
{
    key_job *j = (key_job *)arg;
    int fmt = j->f->fmt;
    if (fmt == ER_FMT_F32) j->zero = ER_PICK(keys_f32)(j->bd, j->k, j->e0, j->e1);
    else if (fmt == ER_FMT_BF16) j->zero = ER_PICK(keys_bf16)(j->bd, j->k, j->e0, j->e1);
    else j->zero = ER_PICK(keys_f16)(j->bd, j->k, j->e0, j->e1);
    return NULL;
}

/* The keys of bd for outputs described by f (NULL: out of memory).  Every key of a format of up to 2
 * storage bytes lies within +-(2^15 - 1), of 4 bytes within +-(2^31 - 1): the extremes mark the empty
 * range. */
er_bkeys *er_report_keys_make_(const er_bounds *bd, const fdesc *f)
{
    er_bkeys *k = (er_bkeys *)calloc(1, sizeof *k);
    if (k) k->head.release = er_bkeys_free;
    if (!k) return NULL;
    size_t n = (size_t)(bd->count ? bd->count : 1);
    k->fmt = f->fmt;
    k->kb = f->sb <= 2 ? 2 : 4;
    k->count = bd->count;
    k->lo = er_big_alloc(n * (size_t)k->kb);
    k->hi = er_big_alloc(n * (size_t)k->kb);
    k->fl = (unsigned char *)er_big_alloc(n);
    if (!k->lo || !k->hi || !k->fl) {
        er_bkeys_free(k);
        return NULL;
    }
    int nt = nthreads_for(bd->count, bd->count);
    key_job jobs[64];
    for (int t = 0; t < nt; t++) {
        jobs[t].bd = bd;
        jobs[t].f = f;
        jobs[t].k = k;
        jobs[t].e0 = bd->count * t / nt;
        jobs[t].e1 = bd->count * (t + 1) / nt;
        jobs[t].zero = 0;
    }
    int ieee = f->fmt == ER_FMT_F32 || f->fmt == ER_FMT_BF16 || f->fmt == ER_FMT_F16;
    er_par_jobs(ieee ? key_thread_ieee : key_thread, jobs, sizeof jobs[0], nt);
    for (int t = 0; t < nt; t++) k->zero_ok += jobs[t].zero;
    return k;
}

/* covers on the keys, IEEE formats that fill their storage (f32, bf16, f16) with unit stride: one
 * output pattern, two keys and a flag byte per element, branch-free.  K: the key type. */
#define ER_COVER_KEYS_BODY(K)                                                                                 \
    const K *__restrict lo = (const K *)k->lo, *__restrict hi = (const K *)k->hi;                           \
    const unsigned char *__restrict fl = k->fl;                                                               \
    const int64_t n = w->n;                                                                                   \
    const int bits = sb * 8;                                                                                  \
    const uint32_t magm = sb == 4 ? 0x7FFFFFFFu : 0x7FFFu;                                                    \
    int64_t bad = 0;                                                                                          \
    for (int64_t r = r0; r < r1; r++) {                                                                       \
        const unsigned char *__restrict p = w->base + (size_t)row_off(w, r) * (size_t)sb;                    \
        unsigned char *__restrict c = cov + r * n;                                                            \
        const K *__restrict l = lo + r * n, *__restrict u = hi + r * n;                                       \
        const unsigned char *__restrict g = fl + r * n;                                                       \
        int64_t rowbad = 0;                                                                                   \
        for (int64_t j = 0; j < n; j++) {                                                                     \
            uint32_t x;                                                                                       \
            if (sb == 4) memcpy(&x, p + 4 * j, 4);                                                            \
            else {                                                                                            \
                uint16_t x16;                                                                                 \
                memcpy(&x16, p + 2 * j, 2);                                                                   \
                x = x16;                                                                                      \
            }                                                                                                 \
            uint32_t mx = x & magm;                                                                           \
            int32_t sx = -(int32_t)(x >> (bits - 1) & 1u);                                                    \
            int32_t kx = (int32_t)(mx ^ (uint32_t)sx) - sx;                                                   \
            uint32_t fin = (uint32_t)((int32_t)l[j] <= kx) & (uint32_t)(kx <= (int32_t)u[j]) & (mx < inf);    \
            uint32_t isinf_ = mx == inf;                                                                      \
            uint32_t cls = (uint32_t)(mx > inf) << 2 | (isinf_ & (uint32_t)(sx & 1)) << 1 |                 \
                           (isinf_ & (uint32_t)(~sx & 1));                                                    \
            uint32_t ok = fin | (uint32_t)((g[j] & cls) != 0);                                                \
            c[j] = (unsigned char)ok;                                                                         \
            rowbad += (int64_t)(ok ^ 1u);                                                                     \
        }                                                                                                     \
        bad += rowbad;                                                                                        \
    }                                                                                                         \
    return bad;

ER_AI int64_t cover_keys_ieee(const er_bkeys *k, const rows_ *w, unsigned char *cov, int64_t r0, int64_t r1,
                              const int sb, const uint32_t inf)
{
    if (sb == 4) {
        ER_COVER_KEYS_BODY(int32_t)
    } else {
        ER_COVER_KEYS_BODY(int16_t)
    }
}

#define ER_COVER_KEYS_BASE(name, sb, inf)                                                                      \
    ER_VEC static int64_t name##_base(const er_bkeys *k, const rows_ *w, unsigned char *cov, int64_t r0,         \
                                      int64_t r1)                                                             \
    {                                                                                                         \
        return cover_keys_ieee(k, w, cov, r0, r1, sb, inf);                                                   \
    }
ER_COVER_KEYS_BASE(cover_keys_f32, 4, 0x7F800000u)
ER_COVER_KEYS_BASE(cover_keys_bf16, 2, 0x7F80u)
ER_COVER_KEYS_BASE(cover_keys_f16, 2, 0x7C00u)

#ifdef ER_AVX2_CLONES
/* The same decisions in AVX2 lanes: 16 elements of a 16-bit format per step (16-bit keys), 8 of f32
 * (32-bit keys); the row's tail by the scalar body. */
ER_AVX2 static int64_t cover_keys16_avx2(const er_bkeys *k, const rows_ *w, unsigned char *cov, int64_t r0,
                                         int64_t r1, const uint32_t inf)
{
    const int64_t n = w->n;
    const __m256i magm = _mm256_set1_epi16(0x7FFF), vinf = _mm256_set1_epi16((short)inf);
    const __m256i one = _mm256_set1_epi16(1), two = _mm256_set1_epi16(2), four = _mm256_set1_epi16(4);
    const __m256i zero = _mm256_setzero_si256();
    const __m128i bone = _mm_set1_epi8(1);
    int64_t bad = 0;
    for (int64_t r = r0; r < r1; r++) {
        const unsigned char *p = w->base + (size_t)row_off(w, r) * 2u;
        const int16_t *l = (const int16_t *)k->lo + r * n, *u = (const int16_t *)k->hi + r * n;
        const unsigned char *g = k->fl + r * n;
        unsigned char *c = cov + r * n;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + 2 * j));
            __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)(l + j));
            __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(u + j));
            __m256i fl = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(g + j)));
            __m256i mx = _mm256_and_si256(x, magm), sx = _mm256_srai_epi16(x, 15);
            __m256i kx = _mm256_sub_epi16(_mm256_xor_si256(mx, sx), sx);
            /* fin: !(lo > kx) & !(kx > hi) & (inf > mx) */
            __m256i out = _mm256_or_si256(_mm256_cmpgt_epi16(lo, kx), _mm256_cmpgt_epi16(kx, hi));
            __m256i fin = _mm256_andnot_si256(out, _mm256_cmpgt_epi16(vinf, mx));
            __m256i isnan_ = _mm256_cmpgt_epi16(mx, vinf), isinf_ = _mm256_cmpeq_epi16(mx, vinf);
            __m256i cls = _mm256_or_si256(_mm256_and_si256(isnan_, four),
                                          _mm256_and_si256(isinf_, _mm256_blendv_epi8(one, two, sx)));
            __m256i sp = _mm256_cmpeq_epi16(_mm256_and_si256(fl, cls), zero); /* -1: no special allowed */
            __m256i ok = _mm256_or_si256(fin, _mm256_andnot_si256(sp, _mm256_cmpeq_epi16(zero, zero)));
            __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(ok), _mm256_extracti128_si256(ok, 1));
            _mm_storeu_si128((__m128i *)(void *)(c + j), _mm_and_si128(b, bone));
            bad += 16 - __builtin_popcount((unsigned)_mm_movemask_epi8(b));
        }
        for (; j < n; j++) {
            uint16_t x16;
            memcpy(&x16, p + 2 * j, 2);
            uint32_t x = x16, mx = x & 0x7FFFu;
            int32_t sx = -(int32_t)(x >> 15 & 1u), kx = (int32_t)(mx ^ (uint32_t)sx) - sx;
            uint32_t fin = (uint32_t)(l[j] <= kx) & (uint32_t)(kx <= u[j]) & (mx < inf), isinf_ = mx == inf;
            uint32_t cls = (uint32_t)(mx > inf) << 2 | (isinf_ & (uint32_t)(sx & 1)) << 1 |
                           (isinf_ & (uint32_t)(~sx & 1));
            uint32_t ok = fin | (uint32_t)((g[j] & cls) != 0);
            c[j] = (unsigned char)ok;
            bad += !ok;
        }
    }
    return bad;
}

ER_AVX2 static int64_t cover_keys_bf16_avx2(const er_bkeys *k, const rows_ *w, unsigned char *cov, int64_t r0,
                                            int64_t r1)
{
    return cover_keys16_avx2(k, w, cov, r0, r1, 0x7F80u);
}

ER_AVX2 static int64_t cover_keys_f16_avx2(const er_bkeys *k, const rows_ *w, unsigned char *cov, int64_t r0,
                                           int64_t r1)
{
    return cover_keys16_avx2(k, w, cov, r0, r1, 0x7C00u);
}

ER_AVX2 static int64_t cover_keys_f32_avx2(const er_bkeys *k, const rows_ *w, unsigned char *cov, int64_t r0,
                                           int64_t r1)
{
    const int64_t n = w->n;
    const uint32_t inf = 0x7F800000u;
    const __m256i magm = _mm256_set1_epi32(0x7FFFFFFF), vinf = _mm256_set1_epi32((int)inf);
    const __m256i one = _mm256_set1_epi32(1), two = _mm256_set1_epi32(2), four = _mm256_set1_epi32(4);
    const __m256i zero = _mm256_setzero_si256();
    int64_t bad = 0;
    for (int64_t r = r0; r < r1; r++) {
        const unsigned char *p = w->base + (size_t)row_off(w, r) * 4u;
        const int32_t *l = (const int32_t *)k->lo + r * n, *u = (const int32_t *)k->hi + r * n;
        const unsigned char *g = k->fl + r * n;
        unsigned char *c = cov + r * n;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            __m256i okh[2];
            for (int h = 0; h < 2; h++) {
                int64_t q = j + 8 * h;
                __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + 4 * q));
                __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)(l + q));
                __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(u + q));
                __m256i fl = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(g + q)));
                __m256i mx = _mm256_and_si256(x, magm), sx = _mm256_srai_epi32(x, 31);
                __m256i kx = _mm256_sub_epi32(_mm256_xor_si256(mx, sx), sx);
                __m256i out = _mm256_or_si256(_mm256_cmpgt_epi32(lo, kx), _mm256_cmpgt_epi32(kx, hi));
                __m256i fin = _mm256_andnot_si256(out, _mm256_cmpgt_epi32(vinf, mx));
                __m256i isnan_ = _mm256_cmpgt_epi32(mx, vinf), isinf_ = _mm256_cmpeq_epi32(mx, vinf);
                __m256i cls = _mm256_or_si256(_mm256_and_si256(isnan_, four),
                                              _mm256_and_si256(isinf_, _mm256_blendv_epi8(one, two, sx)));
                __m256i sp = _mm256_cmpeq_epi32(_mm256_and_si256(fl, cls), zero);
                okh[h] = _mm256_or_si256(fin, _mm256_andnot_si256(sp, _mm256_cmpeq_epi32(zero, zero)));
            }
            /* 16 lanes of 0 / -1 as 16 bytes in order */
            __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(okh[0], okh[1]), 0xD8);
            __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
            _mm_storeu_si128((__m128i *)(void *)(c + j), _mm_and_si128(b, _mm_set1_epi8(1)));
            bad += 16 - __builtin_popcount((unsigned)_mm_movemask_epi8(b));
        }
        for (; j < n; j++) {
            uint32_t x;
            memcpy(&x, p + 4 * j, 4);
            uint32_t mx = x & 0x7FFFFFFFu;
            int32_t sx = -(int32_t)(x >> 31 & 1u), kx = (int32_t)(mx ^ (uint32_t)sx) - sx;
            uint32_t fin = (uint32_t)(l[j] <= kx) & (uint32_t)(kx <= u[j]) & (mx < inf), isinf_ = mx == inf;
            uint32_t cls = (uint32_t)(mx > inf) << 2 | (isinf_ & (uint32_t)(sx & 1)) << 1 |
                           (isinf_ & (uint32_t)(~sx & 1));
            uint32_t ok = fin | (uint32_t)((g[j] & cls) != 0);
            c[j] = (unsigned char)ok;
            bad += !ok;
        }
    }
    return bad;
}
#endif

/* covers on the keys, any other float format of up to 4 storage bytes, any stride: cover_rows' decisions
 * (an invalid finite-class pattern is never covered; NaN and infinity by their class) */
static int64_t cover_keys_any(const er_bkeys *k, const fdesc *f, const rows_ *w, unsigned char *cov, int64_t r0,
                              int64_t r1)
{
    const fdesc fd = *f;
    const int sb = fd.sb;
    int64_t bad = 0;
    for (int64_t r = r0; r < r1; r++) {
        const unsigned char *p = w->base + (size_t)row_off(w, r) * (size_t)sb;
        for (int64_t j = 0; j < w->n; j++) {
            int64_t e = r * w->n + j, kl, kh;
            uint64_t x = load_(p + (size_t)(j * w->s2) * (size_t)sb, sb);
            int c;
            int64_t kx = fkey(&fd, x, &c);
            if (k->kb == 2) {
                kl = ((const int16_t *)k->lo)[e];
                kh = ((const int16_t *)k->hi)[e];
            } else {
                kl = ((const int32_t *)k->lo)[e];
                kh = ((const int32_t *)k->hi)[e];
            }
            int cls = c == C_NAN ? 4 : c == C_NINF ? 2 : c == C_PINF ? 1 : 0;
            int ok = c == C_FIN ? (kl <= kx) & (kx <= kh) & ((x & ~fd.valid) == 0) : (k->fl[e] & cls) != 0;
            cov[e] = (unsigned char)ok;
            bad += !ok;
        }
    }
    return bad;
}

void *er_report_cov_thread_(void *arg)
{
    cov_job *j = (cov_job *)arg;
    if (j->keys) {
        const er_bkeys *k = j->keys;
        if (j->f->fmt == ER_FMT_F32 && j->w.s2 == 1)
            j->bad = ER_PICK(cover_keys_f32)(k, &j->w, j->cov, j->r0, j->r1);
        else if (j->f->fmt == ER_FMT_BF16 && j->w.s2 == 1)
            j->bad = ER_PICK(cover_keys_bf16)(k, &j->w, j->cov, j->r0, j->r1);
        else if (j->f->fmt == ER_FMT_F16 && j->w.s2 == 1)
            j->bad = ER_PICK(cover_keys_f16)(k, &j->w, j->cov, j->r0, j->r1);
        else
            j->bad = cover_keys_any(k, j->f, &j->w, j->cov, j->r0, j->r1);
        return NULL;
    }
    if (j->exact_int) {
        int64_t bad = 0;
        for (int64_t r = j->r0; r < j->r1; r++) {
            const unsigned char *p = j->w.base + (size_t)row_off(&j->w, r) * 4u;
            for (int64_t c = 0; c < j->w.n; c++) {
                int64_t e = r * j->w.n + c;
                uint32_t x;
                memcpy(&x, p + (size_t)(c * j->w.s2) * 4u, 4);
                int ok = x == (uint32_t)(j->bd->low[e] & 0xFFFFFFFFu);
                j->cov[e] = (unsigned char)ok;
                bad += !ok;
            }
        }
        j->bad = bad;
    } else if (j->f->fmt == ER_FMT_F32 && j->w.s2 == 1)
        j->bad = ER_PICK(cover_rows_f32)(j->bd, &j->w, j->cov, j->r0, j->r1);
    else if (j->f->fmt == ER_FMT_BF16 && j->w.s2 == 1)
        j->bad = ER_PICK(cover_rows_bf16)(j->bd, &j->w, j->cov, j->r0, j->r1);
    else if (j->f->fmt == ER_FMT_F16 && j->w.s2 == 1)
        j->bad = ER_PICK(cover_rows_f16)(j->bd, &j->w, j->cov, j->r0, j->r1);
    else if (j->f->fmt == ER_FMT_F32)
        j->bad = cover_rows(j->bd, &f32_desc_, &j->w, j->cov, j->r0, j->r1);
    else
        j->bad = cover_rows(j->bd, j->f, &j->w, j->cov, j->r0, j->r1);
    return NULL;
}

er_status er_bounds_covers(const er_bounds *bd, const er_tensor *output, int exact_int, unsigned char *covered,
                           int64_t *outside, char *msg, size_t msg_size)
{
    return er_bounds_covers_kept(bd, NULL, output, exact_int, covered, outside, NULL, msg, msg_size);
}

er_status er_bounds_covers_kept(const er_bounds *bd, er_bkeys **keys, const er_tensor *output, int exact_int,
                                unsigned char *covered, int64_t *outside, int64_t *zero_ok, char *msg,
                                size_t msg_size)
{
    fdesc f;
    double lut8[256];
    er_format_info fi;
    if (!bd || !output || !covered) return fail(msg, msg_size, ER_EINVAL, "er_bounds_covers: null argument");
    if ((output->ndim != 2 && output->ndim != 3) || er_format_get_info(output->format, &fi) != ER_OK)
        return fail(msg, msg_size, ER_EINVAL, "er_bounds_covers: the output must be a 2-D or 3-D tensor of a known format");
    int64_t count = 1;
    for (int d = 0; d < output->ndim; d++) count *= output->shape[d];
    if (count != bd->count)
        return fail(msg, msg_size, ER_EINVAL, "er_bounds_covers: the output has %lld elements, the bounds %lld",
                    (long long)count, (long long)bd->count);
    if (exact_int ? fi.storage_bytes != 4 : !fdesc_make(output->format, &f, lut8))
        return fail(msg, msg_size, ER_EINVAL, "er_bounds_covers: %s outputs are %s", fi.name,
                    exact_int ? "not an integer product's" : "not a float format's");
    if (zero_ok) *zero_ok = -1;
    /* the compact keys: made on the first call for this format, then kept (not for integer products'
     * outputs, nor f64, whose keys would be as wide as the bounds' patterns) */
    const er_bkeys *k = NULL;
    if (keys && !exact_int && f.sb <= 4) {
        if (*keys && ((*keys)->fmt != output->format || (*keys)->count != bd->count)) {
            er_bkeys_free(*keys);
            *keys = NULL;
        }
        /* out of memory for the keys: the bounds are read directly, as for bounds given by a caller */
        if (!*keys) *keys = keys_make(bd, &f);
        k = *keys;
        if (k && zero_ok) *zero_ok = k->zero_ok;
    }
    rows_ w = rows_of(output);
    int64_t R = count ? count / w.n : 0;
    int nt = nthreads_for(R, count);
    cov_job jobs[64];
    for (int t = 0; t < nt; t++) {
        jobs[t].bd = bd;
        jobs[t].f = &f;
        jobs[t].keys = k;
        jobs[t].w = w;
        jobs[t].exact_int = exact_int;
        jobs[t].cov = covered;
        jobs[t].r0 = R * t / nt;
        jobs[t].r1 = R * (t + 1) / nt;
        jobs[t].bad = 0;
    }
    er_par_jobs(cov_thread, jobs, sizeof jobs[0], nt);
    int64_t bad = 0;
    for (int t = 0; t < nt; t++) bad += jobs[t].bad;
    if (outside) *outside = bad;
    if (msg && msg_size) msg[0] = '\0';
    return ER_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* covers of a result: its bounds (src/tolerance.c) through the keys kept with them in its cache      */

er_status er_result_covers(er_result *r, const er_tol_opts *o, const er_tensor *output, unsigned char *covered,
                           int64_t *outside, char *msg, size_t msg_size)
{
    return er_result_covers_kept(r, o, output, covered, outside, NULL, NULL, msg, msg_size);
}

er_status er_result_covers_kept(er_result *r, const er_tol_opts *o, const er_tensor *output, unsigned char *covered,
                                int64_t *outside, int64_t *zero_ok, const er_bounds **bounds, char *msg,
                                size_t msg_size)
{
    const er_bounds *b;
    er_status st;
    if (!r || !output || !covered) return ER_EINVAL;
    if (output->format != r->d.format || output->ndim != r->d.ndim)
        return fail(msg, msg_size, ER_EINVAL, "the output must have the result's format (%s) and shape",
                    er_format_name(r->d.format));
    for (int i = 0; i < output->ndim; i++)
        if (output->shape[i] != r->d.shape[i])
            return fail(msg, msg_size, ER_EINVAL, "the output's shape differs from the result's in dimension %d", i);
    if ((st = er_result_bounds(r, o, &b, msg, msg_size)) != ER_OK) return st;
    if (bounds) *bounds = b;
    /* the patterns compared as order-mapped integers, rows over threads, through the compact keys kept
     * with the bounds (below) */
    er_bkeys **keys = NULL;
    for (int i = 0; i < r->ncache; i++)
        if (&r->cache[i].b == b) keys = &r->cache[i].keys;
    return er_bounds_covers_kept(b, keys, output, r->is_int, covered, outside, zero_ok, msg, msg_size);
}
