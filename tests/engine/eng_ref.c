/* eng_ref.c: the independent MPFR reference for the exact engine, and the run-and-compare helpers. */
#define _POSIX_C_SOURCE 200809L
#include "eng_ref.h"

#include <time.h>

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if ULONG_MAX < 0xFFFFFFFFFFFFFFFFu
#error "eng_ref.c assumes a 64-bit unsigned long (mpfr_set_ui_2exp of 64-bit significands)"
#endif

long eng_calls = 0;

double eng_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double fixture_t0;
static long fixture_calls0;
void eng_fixture_setup(void)
{
    fixture_t0 = eng_now();
    fixture_calls0 = eng_calls;
}
void eng_fixture_teardown(void)
{
    printf("  (%.2f s, %ld engine calls)\n", eng_now() - fixture_t0, eng_calls - fixture_calls0);
    fflush(stdout);
}

/* ---- The formats, typed from docs/formats.md. ---- */
/* id, name, width, ebits, mbits, pad, bias, special, uns, nosub, bytes, is_int */
static const rfmt ref_formats[] = {
    {ER_FMT_F64, "f64", 64, 11, 52, 0, 1023, RS_IEEE, 0, 0, 8, 0},
    {ER_FMT_F32, "f32", 32, 8, 23, 0, 127, RS_IEEE, 0, 0, 4, 0},
    {ER_FMT_TF32, "tf32", 32, 8, 10, 13, 127, RS_IEEE, 0, 0, 4, 0},
    {ER_FMT_F16, "f16", 16, 5, 10, 0, 15, RS_IEEE, 0, 0, 2, 0},
    {ER_FMT_BF16, "bf16", 16, 8, 7, 0, 127, RS_IEEE, 0, 0, 2, 0},
    {ER_FMT_F8E4M3FN, "f8E4M3FN", 8, 4, 3, 0, 7, RS_FN, 0, 0, 1, 0},
    {ER_FMT_F8E5M2, "f8E5M2", 8, 5, 2, 0, 15, RS_IEEE, 0, 0, 1, 0},
    {ER_FMT_F8E4M3FNUZ, "f8E4M3FNUZ", 8, 4, 3, 0, 8, RS_FNUZ, 0, 0, 1, 0},
    {ER_FMT_F8E5M2FNUZ, "f8E5M2FNUZ", 8, 5, 2, 0, 16, RS_FNUZ, 0, 0, 1, 0},
    {ER_FMT_F8E8M0FNU, "f8E8M0FNU", 8, 8, 0, 0, 127, RS_FN, 1, 1, 1, 0},
    {ER_FMT_F6E2M3FN, "f6E2M3FN", 6, 2, 3, 0, 1, RS_NONE, 0, 0, 1, 0},
    {ER_FMT_F6E3M2FN, "f6E3M2FN", 6, 3, 2, 0, 3, RS_NONE, 0, 0, 1, 0},
    {ER_FMT_F4E2M1FN, "f4E2M1FN", 4, 2, 1, 0, 1, RS_NONE, 0, 0, 1, 0},
    {ER_FMT_F8E5M3FNU, "f8E5M3FNU", 8, 5, 3, 0, 15, RS_FN, 1, 0, 1, 0},
    {ER_FMT_I8, "i8", 8, 0, 0, 0, 0, 0, 0, 0, 1, 1},
    {ER_FMT_U8, "u8", 8, 0, 0, 0, 0, 0, 1, 0, 1, 1},
    {ER_FMT_I32, "i32", 32, 0, 0, 0, 0, 0, 0, 0, 4, 1},
};

const int float_ids[NFLOAT] = {ER_FMT_F64,        ER_FMT_F32,        ER_FMT_TF32,       ER_FMT_F16,
                               ER_FMT_BF16,       ER_FMT_F8E4M3FN,   ER_FMT_F8E5M2,     ER_FMT_F8E4M3FNUZ,
                               ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU,  ER_FMT_F6E2M3FN,   ER_FMT_F6E3M2FN,
                               ER_FMT_F4E2M1FN};
const int elem_ids[5] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN};

const rfmt *rf(int id)
{
    for (size_t i = 0; i < sizeof ref_formats / sizeof ref_formats[0]; i++)
        if (ref_formats[i].id == id) return &ref_formats[i];
    fprintf(stderr, "eng_ref: no row for format id %d\n", id);
    abort();
}

static uint64_t mask(int bits) { return bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1u; }
static uint64_t signbit_of(const rfmt *T) { return T->uns ? 0u : UINT64_C(1) << (T->width - 1); }
static long emin_of(const rfmt *T) { return T->nosub ? -(long)T->bias : 1 - (long)T->bias; }
static int bitlen(uint64_t x)
{
    int n = 0;
    while (x) { n++; x >>= 1; }
    return n;
}

static uint64_t maxmag_of(const rfmt *T)
{
    int mb = T->ebits + T->mbits;
    switch (T->special) {
    case RS_IEEE: return (mask(T->ebits) << T->mbits) - 1u;
    case RS_FN: return mask(mb) - 1u;
    default: return mask(mb);
    }
}

rval ref_decode(const rfmt *T, uint64_t bits)
{
    rval v = {RC_ZERO, 0, 0, 0};
    bits &= mask(T->width);
    if (T->is_int) {
        if (!T->uns && (bits >> (T->width - 1))) {
            v.sign = 1;
            v.sig = (~bits + 1u) & mask(T->width);
        } else {
            v.sig = bits;
        }
        v.cls = v.sig ? RC_FIN : RC_ZERO;
        return v;
    }
    int mb = T->ebits + T->mbits;
    uint64_t mag = (bits >> T->pad) & mask(mb);
    uint64_t E = mag >> T->mbits, F = mag & mask(T->mbits);
    v.sign = T->uns ? 0 : (int)((bits >> (T->width - 1)) & 1u);
    if (T->special == RS_IEEE && E == mask(T->ebits)) {
        v.cls = F ? RC_NAN : RC_INF;
        return v;
    }
    if (T->special == RS_FN && mag == mask(mb)) {
        v.cls = RC_NAN;
        return v;
    }
    if (T->special == RS_FNUZ && v.sign && mag == 0) {
        v.cls = RC_NAN;
        v.sign = 0;
        return v;
    }
    if (T->nosub) {
        v.cls = RC_FIN;
        v.sig = (UINT64_C(1) << T->mbits) | F;
        v.exp = (int)E - T->bias - T->mbits;
        return v;
    }
    if (E == 0) {
        if (F == 0) return v; /* zero of the sign */
        v.cls = RC_FIN;
        v.sig = F;
        v.exp = 1 - T->bias - T->mbits;
        return v;
    }
    v.cls = RC_FIN;
    v.sig = (UINT64_C(1) << T->mbits) | F;
    v.exp = (int)E - T->bias - T->mbits;
    return v;
}

int ref_is_nan(const rfmt *T, uint64_t bits) { return ref_decode(T, bits).cls == RC_NAN; }

uint64_t ref_nan(const rfmt *T)
{
    switch (T->special) {
    case RS_IEEE: return ((mask(T->ebits) << T->mbits) | (UINT64_C(1) << (T->mbits - 1))) << T->pad;
    case RS_FN: return mask(T->ebits + T->mbits) << T->pad;
    case RS_FNUZ: return UINT64_C(1) << (T->width - 1);
    default: return 0; /* no NaN: +0 (docs/formats.md) */
    }
}

uint64_t ref_max(const rfmt *T, int sign) { return (sign ? signbit_of(T) : 0u) | (maxmag_of(T) << T->pad); }

uint64_t ref_minsub(const rfmt *T, int sign)
{
    if (T->nosub) return 0;
    return (sign ? signbit_of(T) : 0u) | (UINT64_C(1) << T->pad);
}

static uint64_t ref_zero(const rfmt *T, int sign)
{
    if (T->nosub) return ref_nan(T);                       /* no zero: NaN */
    if (T->uns || T->special == RS_FNUZ) return 0;         /* no -0 */
    return sign ? signbit_of(T) : 0u;
}

static uint64_t ref_inf(const rfmt *T, int sign, unsigned opts)
{
    if (sign && T->uns) return ref_nan(T);
    if (opts & ER_OPT_SATURATE) return ref_max(T, sign);
    switch (T->special) {
    case RS_IEEE: return (sign ? signbit_of(T) : 0u) | ((mask(T->ebits) << T->mbits) << T->pad);
    case RS_FN: return (sign ? signbit_of(T) : 0u) | (mask(T->ebits + T->mbits) << T->pad);
    case RS_FNUZ: return ref_nan(T);
    default: return ref_max(T, sign);
    }
}

/* ---- MPFR. ---- */
static mpfr_t g_ra, g_n, g_val, g_max, g_tmp, g_ta, g_tb;

void ref_init(void)
{
    static int done = 0;
    if (done) return;
    done = 1;
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_init2(g_ra, 64);
    mpfr_init2(g_n, 128);
    mpfr_init2(g_val, 128);
    mpfr_init2(g_max, 128);
    mpfr_init2(g_tmp, 256);
    mpfr_init2(g_ta, 64);
    mpfr_init2(g_tb, 64);
}

void rex_init(rex *x)
{
    x->kind = RX_ZPOS;
    mpfr_init2(x->v, 64);
}

void rex_clear(rex *x) { mpfr_clear(x->v); }

void rex_set_d(rex *x, double d)
{
    if (d != d) x->kind = RX_NAN;
    else if (isinf(d)) x->kind = d > 0 ? RX_PINF : RX_NINF;
    else if (d == 0) x->kind = signbit(d) ? RX_ZNEG : RX_ZPOS;
    else {
        x->kind = RX_FIN;
        mpfr_set_prec(x->v, 53);
        mpfr_set_d(x->v, d, MPFR_RNDN);
    }
}

static void chk_exact(int ternary, const char *what)
{
    if (ternary != 0) {
        fprintf(stderr, "eng_ref: INTERNAL: %s was not exact (the reference's precision is too small)\n", what);
        abort();
    }
}

static void set_val(mpfr_t out, const rval *v)
{
    chk_exact(mpfr_set_ui_2exp(out, v->sig, v->exp, MPFR_RNDN), "set");
    if (v->sign) mpfr_neg(out, out, MPFR_RNDN);
}

uint64_t ref_round(const rfmt *T, const rex *x, int dir, unsigned opts)
{
    switch (x->kind) {
    case RX_NAN: return ref_nan(T);
    case RX_PINF: return ref_inf(T, 0, opts);
    case RX_NINF: return ref_inf(T, 1, opts);
    case RX_ZPOS: return ref_zero(T, 0);
    case RX_ZNEG: return ref_zero(T, 1);
    case RX_ZCANCEL: return ref_zero(T, dir == ER_RND_NEGATIVE_INF);
    default: break;
    }
    int s = mpfr_signbit(x->v) != 0;
    if (s && T->uns) return ref_nan(T);
    mpfr_set_prec(g_ra, mpfr_get_prec(x->v));
    mpfr_abs(g_ra, x->v, MPFR_RNDN);
    long e = (long)mpfr_get_exp(g_ra) - 1; /* |x| in [2^e, 2^(e+1)) */
    long emin = emin_of(T);
    long q = (e > emin ? e : emin) - T->mbits; /* the quantum of the result */
    chk_exact(mpfr_mul_2si(g_ra, g_ra, -q, MPFR_RNDN), "scale");
    int frac = !mpfr_integer_p(g_ra);
    switch (dir) {
    case ER_RND_NEAREST_EVEN: mpfr_rint(g_n, g_ra, MPFR_RNDN); break;
    case ER_RND_NEAREST_AWAY: mpfr_round(g_n, g_ra); break;
    case ER_RND_ZERO: mpfr_trunc(g_n, g_ra); break;
    case ER_RND_NEGATIVE_INF: if (s) mpfr_ceil(g_n, g_ra); else mpfr_floor(g_n, g_ra); break;
    case ER_RND_POSITIVE_INF: if (s) mpfr_floor(g_n, g_ra); else mpfr_ceil(g_n, g_ra); break;
    case ER_RND_ODD: mpfr_trunc(g_n, g_ra); break;
    default: abort();
    }
    uint64_t N = mpfr_get_ui(g_n, MPFR_RNDN);
    if (dir == ER_RND_ODD && frac) N |= 1u;
    if (N > (UINT64_C(1) << (T->mbits + 1))) abort();
    /* Overflow: the rounded value (unbounded exponent) above the largest finite value. */
    rval mx = ref_decode(T, ref_max(T, 0));
    set_val(g_max, &mx);
    chk_exact(mpfr_set_ui_2exp(g_val, N, q, MPFR_RNDN), "val");
    if (mpfr_cmp(g_val, g_max) > 0) {
        int to_inf = dir == ER_RND_NEAREST_EVEN || dir == ER_RND_NEAREST_AWAY ||
                     (dir == ER_RND_NEGATIVE_INF && s) || (dir == ER_RND_POSITIVE_INF && !s);
        if ((opts & ER_OPT_SATURATE) || !to_inf) return ref_max(T, s);
        return ref_inf(T, s, 0);
    }
    uint64_t one = UINT64_C(1) << T->mbits;
    if (T->nosub && N < one) N = one; /* below the least value: clamped to it */
    if (N == 0) return ref_zero(T, s);
    uint64_t E, F;
    if (N < one) {
        if (opts & ER_OPT_FTZ_OUT) return ref_zero(T, s);
        E = 0;
        F = N;
    } else {
        if (N == 2 * one) {
            N = one;
            q++;
        }
        E = (uint64_t)(q + T->mbits + T->bias);
        F = N - one;
    }
    return (s ? signbit_of(T) : 0u) | (((E << T->mbits) | F) << T->pad);
}

uint64_t ref_encode_d(int fmt, double d)
{
    const rfmt *T = rf(fmt);
    rex x;
    rex_init(&x);
    rex_set_d(&x, d);
    uint64_t p = ref_round(T, &x, ER_RND_NEAREST_EVEN, 0);
    rval v = ref_decode(T, p);
    int ok;
    if (d != d) ok = v.cls == RC_NAN;
    else if (isinf(d)) ok = v.cls == RC_INF && v.sign == (d < 0);
    else if (d == 0) ok = v.cls == RC_ZERO && (v.sign == (signbit(d) != 0) || T->special == RS_FNUZ);
    else {
        ok = v.cls == RC_FIN;
        if (ok) {
            set_val(g_val, &v);
            ok = mpfr_cmp_d(g_val, d) == 0;
        }
    }
    rex_clear(&x);
    if (!ok) {
        fprintf(stderr, "eng_ref: %a is not a value of %s\n", d, T->name);
        abort();
    }
    return p;
}

void rex_str(const rex *x, char *buf, size_t size)
{
    switch (x->kind) {
    case RX_NAN: snprintf(buf, size, "NaN"); break;
    case RX_PINF: snprintf(buf, size, "+inf"); break;
    case RX_NINF: snprintf(buf, size, "-inf"); break;
    case RX_ZPOS: snprintf(buf, size, "+0 (every term +0, or no term)"); break;
    case RX_ZNEG: snprintf(buf, size, "-0 (every term -0)"); break;
    case RX_ZCANCEL: snprintf(buf, size, "0 (cancellation or zeros of both signs)"); break;
    default: mpfr_snprintf(buf, size, "%.40Ra", x->v); break;
    }
}

void pattern_str(int fmt, uint64_t bits, char *buf, size_t size)
{
    const rfmt *T = rf(fmt);
    rval v = ref_decode(T, bits);
    switch (v.cls) {
    case RC_NAN: snprintf(buf, size, "0x%llx (NaN)", (unsigned long long)bits); break;
    case RC_INF: snprintf(buf, size, "0x%llx (%cinf)", (unsigned long long)bits, v.sign ? '-' : '+'); break;
    case RC_ZERO: snprintf(buf, size, "0x%llx (%c0)", (unsigned long long)bits, v.sign ? '-' : '+'); break;
    default:
        if (T->is_int) {
            snprintf(buf, size, "0x%llx (%s%llu)", (unsigned long long)bits, v.sign ? "-" : "",
                     (unsigned long long)v.sig);
        } else {
            set_val(g_val, &v);
            mpfr_snprintf(buf, size, "0x%llx (%Ra)", (unsigned long long)bits, g_val);
        }
    }
}

/* ---- Problems. ---- */
int64_t eprob_nblocks(const eprob *P) { return P->fsc < 0 ? 0 : (P->k + P->block - 1) / P->block; }

static uint64_t *zalloc(int64_t n) { return (uint64_t *)calloc((size_t)(n > 0 ? n : 1), sizeof(uint64_t)); }

void eprob_alloc(eprob *P)
{
    int64_t nb = eprob_nblocks(P);
    P->A = zalloc(P->m * P->k);
    P->B = zalloc(P->k * P->n);
    P->C = P->fc >= 0 ? zalloc(P->m * P->n) : NULL;
    P->SA = P->fsc >= 0 ? zalloc(P->m * nb) : NULL;
    P->SB = P->fsc >= 0 ? zalloc(nb * P->n) : NULL;
    P->pa = P->pb = P->pc = P->psa = P->psb = NULL;
}

static void *pack(int fmt, const uint64_t *src, int64_t n)
{
    const rfmt *T = rf(fmt);
    unsigned char *p = (unsigned char *)malloc((size_t)(n > 0 ? n : 1) * (size_t)T->bytes);
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = src[i];
        switch (T->bytes) {
        case 1: p[i] = (unsigned char)x; break;
        case 2: { uint16_t y = (uint16_t)x; memcpy(p + 2 * i, &y, 2); break; }
        case 4: { uint32_t y = (uint32_t)x; memcpy(p + 4 * i, &y, 4); break; }
        default: memcpy(p + 8 * i, &x, 8); break;
        }
    }
    return p;
}

static uint64_t unpack1(int fmt, const void *buf, int64_t i)
{
    const rfmt *T = rf(fmt);
    const unsigned char *p = (const unsigned char *)buf;
    switch (T->bytes) {
    case 1: return p[i];
    case 2: { uint16_t y; memcpy(&y, p + 2 * i, 2); return y; }
    case 4: { uint32_t y; memcpy(&y, p + 4 * i, 4); return y; }
    default: { uint64_t y; memcpy(&y, p + 8 * i, 8); return y; }
    }
}

void eprob_pack(eprob *P)
{
    int64_t nb = eprob_nblocks(P);
    free(P->pa); free(P->pb); free(P->pc); free(P->psa); free(P->psb);
    P->pa = pack(P->fa, P->A, P->m * P->k);
    P->pb = pack(P->fb, P->B, P->k * P->n);
    P->pc = P->fc >= 0 ? pack(P->fc, P->C, P->m * P->n) : NULL;
    P->psa = P->fsc >= 0 ? pack(P->fsc, P->SA, P->m * nb) : NULL;
    P->psb = P->fsc >= 0 ? pack(P->fsc, P->SB, nb * P->n) : NULL;
}

void eprob_free(eprob *P)
{
    free(P->A); free(P->B); free(P->C); free(P->SA); free(P->SB);
    free(P->pa); free(P->pb); free(P->pc); free(P->psa); free(P->psb);
    memset(P, 0, sizeof *P);
}

/* ---- The exact reference. ---- */
typedef struct {
    int cls, sign;
    uint64_t s1, s2; /* FIN: value (-1)^sign s1 s2 2^exp */
    long exp;
} term;

/* A product of nf decoded factors, with IEEE 754's rules for NaN, inf x 0, inf, zero. */
static term make_term(const rval *f, int nf)
{
    term t = {RC_FIN, 0, 1, 1, 0};
    int nan = 0, inf = 0, zero = 0;
    for (int i = 0; i < nf; i++) {
        t.sign ^= f[i].sign;
        nan |= f[i].cls == RC_NAN;
        inf |= f[i].cls == RC_INF;
        zero |= f[i].cls == RC_ZERO;
    }
    if (nan || (inf && zero)) t.cls = RC_NAN;
    else if (inf) t.cls = RC_INF;
    else if (zero) t.cls = RC_ZERO;
    else {
        /* factors 0 and 2 (a and its scale) into s1, 1 and 3 into s2: element x scale fits 64 bits */
        for (int i = 0; i < nf; i++) {
            if (i % 2 == 0) t.s1 *= f[i].sig;
            else t.s2 *= f[i].sig;
            t.exp += f[i].exp;
        }
    }
    return t;
}

static term elem_term(const eprob *P, int64_t i, int64_t j, int64_t p)
{
    rval f[4];
    int nf = 2;
    f[0] = ref_decode(rf(P->fa), P->A[i * P->k + p]);
    f[1] = ref_decode(rf(P->fb), P->B[p * P->n + j]);
    if (P->fsc >= 0) {
        int64_t nb = eprob_nblocks(P), blk = p / P->block;
        f[2] = ref_decode(rf(P->fsc), P->SA[i * nb + blk]);
        f[3] = ref_decode(rf(P->fsc), P->SB[blk * P->n + j]);
        f[2].sign = f[3].sign = 0; /* a scale's sign bit is ignored: ue4m3 as the hardware reads it */
        nf = 4;
    }
    return make_term(f, nf);
}

static void term_value(const term *t, mpfr_t out)
{
    if ((t->s1 >> 32) == 0 && (t->s2 >> 32) == 0) {
        chk_exact(mpfr_set_ui_2exp(out, t->s1 * t->s2, t->exp, MPFR_RNDN), "product");
    } else {
        chk_exact(mpfr_set_ui_2exp(g_ta, t->s1, 0, MPFR_RNDN), "factor");
        chk_exact(mpfr_set_ui_2exp(g_tb, t->s2, t->exp, MPFR_RNDN), "factor");
        chk_exact(mpfr_mul(out, g_ta, g_tb, MPFR_RNDN), "product");
    }
    if (t->sign) mpfr_neg(out, out, MPFR_RNDN);
}

void ref_exact(const eprob *P, int64_t i, int64_t j, rex *out)
{
    int nan = 0, pinf = 0, ninf = 0, zpos = 0, zneg = 0;
    long lsb = 0, top = 0;
    int64_t nfin = 0;
    term c = {RC_ZERO, 0, 0, 0, 0};
    int has_c = P->fc >= 0;
    if (has_c) {
        rval cv = ref_decode(rf(P->fc), P->C[i * P->n + j]);
        c.cls = cv.cls;
        c.sign = cv.sign;
        c.s1 = cv.sig;
        c.s2 = 1;
        c.exp = cv.exp;
    }
    /* pass 1: classes, and the span of the finite terms */
    for (int64_t p = 0; p <= P->k; p++) {
        term t;
        if (p < P->k) t = elem_term(P, i, j, p);
        else if (has_c) t = c;
        else break;
        switch (t.cls) {
        case RC_NAN: nan = 1; break;
        case RC_INF: if (t.sign) ninf = 1; else pinf = 1; break;
        case RC_ZERO: if (t.sign) zneg = 1; else zpos = 1; break;
        default: {
            long l = t.exp, h = t.exp + bitlen(t.s1) + bitlen(t.s2);
            if (nfin == 0 || l < lsb) lsb = l;
            if (nfin == 0 || h > top) top = h;
            nfin++;
        }
        }
    }
    if (nan || (pinf && ninf)) { out->kind = RX_NAN; return; }
    if (pinf) { out->kind = RX_PINF; return; }
    if (ninf) { out->kind = RX_NINF; return; }
    if (nfin == 0) {
        out->kind = zpos && zneg ? RX_ZCANCEL : zneg ? RX_ZNEG : RX_ZPOS;
        return;
    }
    long prec = top - lsb + bitlen((uint64_t)nfin + 1) + 2;
    if (prec < 64) prec = 64;
    mpfr_set_prec(out->v, prec);
    mpfr_set_zero(out->v, 1);
    /* pass 2: the exact sum (every addition checked exact) */
    for (int64_t p = 0; p <= P->k; p++) {
        term t;
        if (p < P->k) t = elem_term(P, i, j, p);
        else if (has_c) t = c;
        else break;
        if (t.cls != RC_FIN) continue;
        term_value(&t, g_tmp);
        chk_exact(mpfr_add(out->v, out->v, g_tmp, MPFR_RNDN), "sum");
    }
    out->kind = mpfr_zero_p(out->v) ? RX_ZCANCEL : RX_FIN;
}

rex *ref_exact_all(const eprob *P)
{
    rex *x = (rex *)malloc(sizeof(rex) * (size_t)(P->m * P->n > 0 ? P->m * P->n : 1));
    for (int64_t i = 0; i < P->m; i++)
        for (int64_t j = 0; j < P->n; j++) {
            rex_init(&x[i * P->n + j]);
            ref_exact(P, i, j, &x[i * P->n + j]);
        }
    return x;
}

void rex_free_all(rex *x, int64_t count)
{
    for (int64_t i = 0; i < count; i++) rex_clear(&x[i]);
    free(x);
}

/* ---- Running the engine. ---- */
void eout_alloc(eout *o, const eprob *P)
{
    memset(o, 0, sizeof *o);
    o->D = zalloc(P->m * P->n);
    o->LO = zalloc(P->m * P->n);
    o->HI = zalloc(P->m * P->n);
    o->ODD = zalloc(P->m * P->n);
}

void eout_free(eout *o)
{
    free(o->D); free(o->LO); free(o->HI); free(o->ODD);
    memset(o, 0, sizeof *o);
}

int eng_run(const eprob *P, const ecfg *c, eout *o)
{
    int64_t mn = P->m * P->n, nb = eprob_nblocks(P);
    er_tensor ta = er_tensor_2d(P->fa, P->m, P->k, P->pa);
    er_tensor tb = er_tensor_2d(P->fb, P->k, P->n, P->pb);
    er_tensor tc, td, tsa, tsb, tlo, thi, todd;
    void *dbuf = NULL, *lob = NULL, *hib = NULL, *oddb = NULL;
    er_mma_args args;
    er_mma_args_init(&args);
    args.a = &ta;
    args.b = &tb;
    if (P->fc >= 0) {
        tc = er_tensor_2d(P->fc, P->m, P->n, P->pc);
        args.c = &tc;
    }
    if (P->fsc >= 0) {
        tsa = er_tensor_2d(P->fsc, P->m, nb, P->psa);
        tsb = er_tensor_2d(P->fsc, nb, P->n, P->psb);
        args.a_scale = &tsa;
        args.b_scale = &tsb;
        args.block = P->block;
    }
    if (c->dfmt >= 0) {
        size_t sz = (size_t)(mn > 0 ? mn : 1) * (size_t)rf(c->dfmt)->bytes;
        dbuf = malloc(sz);
        memset(dbuf, 0xA5, sz); /* an element never written shows */
        td = er_tensor_2d(c->dfmt, P->m, P->n, dbuf);
        args.d = &td;
    }
    if (c->enc) {
        size_t sz = (size_t)(mn > 0 ? mn : 1) * 8;
        lob = malloc(sz); hib = malloc(sz); oddb = malloc(sz);
        memset(lob, 0xA5, sz); memset(hib, 0xA5, sz); memset(oddb, 0xA5, sz);
        tlo = er_tensor_2d(ER_FMT_F64, P->m, P->n, lob);
        thi = er_tensor_2d(ER_FMT_F64, P->m, P->n, hib);
        todd = er_tensor_2d(ER_FMT_F64, P->m, P->n, oddb);
        args.lo = &tlo; args.hi = &thi; args.odd = &todd;
    }
    args.rounding = c->dir;
    args.opts = c->opts;
    args.threads = c->threads;
    args.strategy = c->strategy;
    memset(&o->stats, 0xFF, sizeof o->stats);
    args.stats = &o->stats;
    o->msg[0] = 0;
    args.msg = o->msg;
    args.msg_size = sizeof o->msg;
    o->status = er_mma(&args);
    eng_calls++;
    for (int64_t e = 0; e < mn; e++) {
        if (dbuf) o->D[e] = unpack1(c->dfmt, dbuf, e);
        if (lob) {
            o->LO[e] = unpack1(ER_FMT_F64, lob, e);
            o->HI[e] = unpack1(ER_FMT_F64, hib, e);
            o->ODD[e] = unpack1(ER_FMT_F64, oddb, e);
        }
    }
    free(dbuf); free(lob); free(hib); free(oddb);
    return o->status;
}

static long printed = 0, printed_call = 0;

void eprob_print(const eprob *P, int64_t i, int64_t j)
{
    char b[256];
    fprintf(stderr, "    problem: a %s %lld x %lld, b %s, c %s, scales %s block %d\n", rf(P->fa)->name,
            (long long)P->m, (long long)P->k, rf(P->fb)->name, P->fc >= 0 ? rf(P->fc)->name : "none",
            P->fsc >= 0 ? rf(P->fsc)->name : "none", P->block);
    if (P->k > 80) return;
    for (int64_t p = 0; p < P->k; p++) {
        pattern_str(P->fa, P->A[i * P->k + p], b, sizeof b);
        fprintf(stderr, "      a[%lld][%lld] = %s", (long long)i, (long long)p, b);
        pattern_str(P->fb, P->B[p * P->n + j], b, sizeof b);
        fprintf(stderr, "   b[%lld][%lld] = %s", (long long)p, (long long)j, b);
        if (P->fsc >= 0) {
            int64_t nb = eprob_nblocks(P);
            fprintf(stderr, "   sa 0x%llx sb 0x%llx", (unsigned long long)P->SA[i * nb + p / P->block],
                    (unsigned long long)P->SB[(p / P->block) * P->n + j]);
        }
        fprintf(stderr, "\n");
    }
    if (P->fc >= 0) {
        pattern_str(P->fc, P->C[i * P->n + j], b, sizeof b);
        fprintf(stderr, "      c[%lld][%lld] = %s\n", (long long)i, (long long)j, b);
    }
}

static int report(const eprob *P, const ecfg *c, const char *ctx, const char *what, int64_t i, int64_t j,
                  int fmt, uint64_t want, uint64_t got, const rex *x)
{
    char bw[256], bg[256], bx[256];
    if (printed++ >= 40 || printed_call++ >= 2) {
        /* past the detailed ones: one short line each (up to a limit) for a summary */
        if (printed < 400)
            fprintf(stderr, "MISMATCH-SHORT [%s] %s d=%s dir=%s opts=%u %s: expected 0x%llx got 0x%llx\n", ctx, what,
                    c->dfmt >= 0 ? rf(c->dfmt)->name : "none", er_rounding_name(c->dir), c->opts,
                    c->strategy == ER_STRATEGY_EXACT ? "EXACT" : "AUTO", (unsigned long long)want,
                    (unsigned long long)got);
        return 1;
    }
    pattern_str(fmt, want, bw, sizeof bw);
    pattern_str(fmt, got, bg, sizeof bg);
    rex_str(x, bx, sizeof bx);
    fprintf(stderr,
            "MISMATCH [%s] %s (%lld,%lld) of %lldx%lldx%lld: a %s, b %s, c %s, d %s, dir %s, opts %u, "
            "strategy %s, threads %d\n    exact %s\n    expected %s\n    got      %s\n",
            ctx, what, (long long)i, (long long)j, (long long)P->m, (long long)P->n, (long long)P->k,
            rf(P->fa)->name, rf(P->fb)->name, P->fc >= 0 ? rf(P->fc)->name : "none",
            c->dfmt >= 0 ? rf(c->dfmt)->name : "none", er_rounding_name(c->dir), c->opts,
            c->strategy == ER_STRATEGY_EXACT ? "EXACT" : "AUTO", c->threads, bx, bw, bg);
    eprob_print(P, i, j);
    return 1;
}

static double d_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, 8);
    return x;
}

long eng_check(const eprob *P, const rex *ex, const ecfg *c, const char *ctx)
{
    eout o;
    long bad = 0;
    const rfmt *F64 = rf(ER_FMT_F64);
    eout_alloc(&o, P);
    printed_call = 0;
    int st = eng_run(P, c, &o);
    if (st != ER_OK) {
        fprintf(stderr, "MISMATCH [%s]: er_mma failed with status %d: %s\n", ctx, st, o.msg);
        eout_free(&o);
        return 1;
    }
    int64_t mn = P->m * P->n;
    /* stats: every element counted once, by the path that computed it; no binary64 shortcut with
     * strategy EXACT or with enclosures */
    if (o.stats.elements != mn || o.stats.fast_decided + o.stats.exact_f64 + o.stats.exact_path != mn ||
        ((c->strategy == ER_STRATEGY_EXACT || c->enc) && (o.stats.fast_decided != 0 || o.stats.exact_f64 != 0))) {
        fprintf(stderr, "MISMATCH [%s]: stats elements %lld fast %lld exact_f64 %lld exact %lld for %lld elements (%s%s)\n",
                ctx, (long long)o.stats.elements, (long long)o.stats.fast_decided, (long long)o.stats.exact_f64,
                (long long)o.stats.exact_path, (long long)mn, c->strategy == ER_STRATEGY_EXACT ? "EXACT" : "AUTO",
                c->enc ? ", enclosures" : "");
        bad++;
    }
    for (int64_t i = 0; i < P->m; i++)
        for (int64_t j = 0; j < P->n; j++) {
            int64_t e = i * P->n + j;
            const rex *x = &ex[e];
            int badel = 0;
            if (c->dfmt >= 0) {
                uint64_t want = ref_round(rf(c->dfmt), x, c->dir, c->opts);
                if (o.D[e] != want) badel |= report(P, c, ctx, "d", i, j, c->dfmt, want, o.D[e], x);
            }
            if (c->enc) {
                uint64_t wl = ref_round(F64, x, ER_RND_NEGATIVE_INF, 0);
                uint64_t wh = ref_round(F64, x, ER_RND_POSITIVE_INF, 0);
                uint64_t wo = ref_round(F64, x, ER_RND_ODD, 0);
                if (o.LO[e] != wl) badel |= report(P, c, ctx, "lo", i, j, ER_FMT_F64, wl, o.LO[e], x);
                if (o.HI[e] != wh) badel |= report(P, c, ctx, "hi", i, j, ER_FMT_F64, wh, o.HI[e], x);
                if (o.ODD[e] != wo) badel |= report(P, c, ctx, "odd", i, j, ER_FMT_F64, wo, o.ODD[e], x);
                /* the enclosure property itself, independently of the patterns */
                double lo = d_of(o.LO[e]), hi = d_of(o.HI[e]);
                if (x->kind == RX_FIN) {
                    int ok = mpfr_cmp_d(x->v, lo) >= 0 && mpfr_cmp_d(x->v, hi) <= 0 &&
                             (lo == hi || nextafter(lo, INFINITY) == hi);
                    int exact_double = lo == hi;
                    if (exact_double && d_of(o.ODD[e]) != lo) ok = 0;
                    if (!exact_double) {
                        /* odd: whichever of lo, hi has an odd last bit (inf excluded: max is odd) */
                        uint64_t ob = o.ODD[e];
                        if ((ob & 1u) == 0 || (ob != o.LO[e] && ob != o.HI[e])) ok = 0;
                    }
                    if (!ok) {
                        badel |= report(P, c, ctx, "enclosure property", i, j, ER_FMT_F64, wl, o.LO[e], x);
                    }
                }
            }
            bad += badel;
        }
    eout_free(&o);
    return bad;
}

/* ---- Random inputs. ---- */
uint64_t rnd_below(uint64_t *rng, uint64_t n) { return n ? er_test_rand(rng) % n : 0; }

int gen_centre(const rfmt *T, uint64_t *rng)
{
    uint64_t top = mask(T->ebits);
    if (T->special == RS_IEEE) top--; /* not the inf/NaN field */
    return (int)rnd_below(rng, top + 1);
}

uint64_t gen_special(const rfmt *T, uint64_t *rng)
{
    int s = T->uns ? 0 : (int)(er_test_rand(rng) & 1u);
    for (;;) {
        switch (rnd_below(rng, 6)) {
        case 0: /* NaN, with a random payload and sign where the format has them */
            if (T->special == RS_NONE) continue;
            if (T->special == RS_IEEE) {
                uint64_t f = er_test_rand(rng) & mask(T->mbits);
                if (!f) f = 1;
                return (s ? signbit_of(T) : 0u) | (((mask(T->ebits) << T->mbits) | f) << T->pad);
            }
            if (T->special == RS_FN) return (s ? signbit_of(T) : 0u) | (mask(T->ebits + T->mbits) << T->pad);
            return ref_nan(T);
        case 1:
            if (T->special != RS_IEEE) continue;
            return (s ? signbit_of(T) : 0u) | ((mask(T->ebits) << T->mbits) << T->pad);
        case 2:
        case 3:
            if (T->nosub) continue;
            return (s && T->special != RS_FNUZ) ? signbit_of(T) : 0u;
        case 4: return ref_max(T, s);
        default: return ref_minsub(T, s);
        }
    }
}

/* An integer of at most `bits` bits, rounded to nearest into T (an integer again: a value of T at
 * least 1 in magnitude nearest an integer is an integer). */
static uint64_t gen_int(const rfmt *T, uint64_t *rng, int bits)
{
    long v = (long)rnd_below(rng, (UINT64_C(2) << bits) + 1) - (1L << bits);
    if (T->uns && v < 0) v = -v;
    if (T->nosub && v == 0) v = 1; /* no zero in f8E8M0FNU */
    rex x;
    rex_init(&x);
    if (v == 0) x.kind = RX_ZPOS;
    else {
        x.kind = RX_FIN;
        mpfr_set_si(x.v, v, MPFR_RNDN);
    }
    uint64_t p = ref_round(T, &x, ER_RND_NEAREST_EVEN, ER_OPT_SATURATE);
    rex_clear(&x);
    return p;
}

uint64_t gen_pattern(const rfmt *T, uint64_t *rng, int mode, int centre, int special_pct)
{
    if (special_pct && rnd_below(rng, 100) < (uint64_t)special_pct) return gen_special(T, rng);
    if (mode == GM_INT) return gen_int(T, rng, centre);
    for (;;) {
        uint64_t bits;
        uint64_t r = er_test_rand(rng);
        int s = T->uns ? 0 : (int)(r >> 63);
        long E;
        switch (mode) {
        case GM_UNIFORM:
            bits = (r & mask(T->width)) & ~mask(T->pad);
            break;
        case GM_BAND:
            E = centre + (long)rnd_below(rng, 5) - 2;
            if (E < 0) E = 0;
            if (E > (long)mask(T->ebits)) E = (long)mask(T->ebits);
            bits = (s ? signbit_of(T) : 0u) | ((((uint64_t)E << T->mbits) | (er_test_rand(rng) & mask(T->mbits))) << T->pad);
            break;
        default:
            if (rnd_below(rng, 8) == 0 && !T->nosub) return 0;
            E = T->bias + (long)rnd_below(rng, 3) - 1;
            if (E < 0) E = 0;
            bits = (s ? signbit_of(T) : 0u) |
                   ((((uint64_t)E << T->mbits) | (T->mbits ? (r & 1u) << (T->mbits - 1) : 0u)) << T->pad);
            break;
        }
        rval v = ref_decode(T, bits);
        if (v.cls == RC_NAN || v.cls == RC_INF) continue;
        return bits;
    }
}
