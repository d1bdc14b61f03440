/* op_fast.c: the operation layer's fast paths: bf16, f16 and f32 rounded to nearest even and decoded by
 * bit arithmetic, one element's bounds finished without the generic converter (er_b_finish_lh's common
 * case), and a per-thread memo of the certified exp. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "op_impl.h"
#include "exactref/formats.h"

/* The IEEE-like formats handled here: precision p (with the hidden bit), exponent bits, least normal
 * exponent, largest finite value, least subnormal spacing and least normal as binary64. */
typedef struct fast_fmt {
    int p, ebits, emin;
    double maxv, eta, tiny;
} fast_fmt;

static const fast_fmt FAST_BF16 = {8, 8, -126, 0x1.fep127, 0x1p-133, 0x1p-126};
static const fast_fmt FAST_F16 = {11, 5, -14, 65504.0, 0x1p-24, 0x1p-14};

static const fast_fmt *fast_of(int fmt)
{
    if (fmt == ER_FMT_BF16) return &FAST_BF16;
    if (fmt == ER_FMT_F16) return &FAST_F16;
    return NULL;
}

int er_ops_fast_format(int fmt) { return fmt == ER_FMT_BF16 || fmt == ER_FMT_F16 || fmt == ER_FMT_F32; }

uint64_t er_ops_rn_bits(int fmt, double x)
{
    if (fmt == ER_FMT_F32 && x == x) { /* the conversion's own rounding to nearest (never changed) */
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    if (fmt == ER_FMT_F64) return er_b_bits(x);
    const fast_fmt *f = fast_of(fmt);
    if (!f || !er_b_finite(x)) return er_b_cvt(fmt, x, ER_RND_NEAREST_EVEN, 0u); /* NaN, infinities, others */
    uint64_t u = er_b_bits(x), a = u & 0x7FFFFFFFFFFFFFFFull, sign = (u >> 63) << (f->ebits + f->p - 1);
    double ax = er_b_dbl(a), y;
    if (ax >= f->tiny) {
        /* the format's normal range: round the binary64 significand to p bits, to nearest even, in place
         * (a carry moves into the exponent, which is the right result) */
        int sh = 53 - f->p;
        uint64_t r = ((a + ((1ull << (sh - 1)) - 1) + ((a >> sh) & 1)) >> sh) << sh;
        y = er_b_dbl(r);
        if (y > f->maxv) return sign | ((((uint64_t)1 << f->ebits) - 1) << (f->p - 1)); /* infinity */
    } else {
        /* below the least normal: a multiple of eta, to nearest even (ax / eta < 2^(p-1) exactly, the
         * shifter rounds it to an integer; both scalings by eta are exact) */
        double t = ax / f->eta;
        y = ((t + 0x1p52) - 0x1p52) * f->eta;
    }
    if (y == 0) return sign;
    uint64_t yb = er_b_bits(y);
    int e = (int)(yb >> 52) - 1023;
    if (e >= f->emin) {
        uint64_t bias = ((uint64_t)1 << (f->ebits - 1)) - 1;
        return sign | (((uint64_t)(e + (int)bias)) << (f->p - 1)) | ((yb & 0xFFFFFFFFFFFFFull) >> (53 - f->p));
    }
    return sign | (uint64_t)(y / f->eta); /* subnormal: the count of eta */
}

double er_ops_bits_value(int fmt, uint64_t bits)
{
    if (fmt == ER_FMT_BF16 || fmt == ER_FMT_F32) {
        uint32_t v = fmt == ER_FMT_BF16 ? (uint32_t)(bits & 0xFFFFu) << 16 : (uint32_t)bits;
        float f;
        memcpy(&f, &v, 4);
        return (double)f;
    }
    if (fmt == ER_FMT_F16) {
        int e = (int)((bits >> 10) & 31);
        double m = (double)(bits & 1023), s = (bits & 0x8000u) ? -1.0 : 1.0;
        if (e == 31) return m == 0 ? s * INFINITY : NAN;
        if (e == 0) return s * m * 0x1p-24;
        return s * (1024 + m) * er_b_pow2(e - 25);
    }
    return er_b_value(fmt, bits);
}

void er_ops_finish_fast(const er_bpar *c, uint64_t rbits, double lo, double hi, double rad, int nonfinite,
                        int uncertain, er_bel *o)
{
    er_ops_finish_fast_inl(c, rbits, lo, hi, rad, nonfinite, uncertain, o); /* op_impl.h */
}

/* ---- a memo of er_ops_exp ---- */

#define EXPC_N 16384 /* entries (a power of 2): 384 KiB */
#define EXPC_EMPTY 0x7FF8DEADBEEF0001ull /* a NaN: NaNs bypass the memo, so it never matches */

struct er_ops_expc {
    uint64_t key[EXPC_N];
    double lo[EXPC_N], hi[EXPC_N];
};

er_ops_expc *er_ops_expc_new(void)
{
    er_ops_expc *c = (er_ops_expc *)malloc(sizeof *c);
    if (!c) return NULL;
    for (int i = 0; i < EXPC_N; i++) c->key[i] = EXPC_EMPTY;
    return c;
}

void er_ops_expc_free(er_ops_expc *c) { free(c); }

void er_ops_exp_c(er_ops_expc *c, double x, double *lo, double *hi)
{
    if (!c || x != x) {
        er_ops_exp(x, lo, hi);
        return;
    }
    uint64_t k = er_b_bits(x);
    size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 50); /* 14 bits */
    if (c->key[i] != k) {
        er_ops_exp(x, &c->lo[i], &c->hi[i]);
        c->key[i] = k;
    }
    *lo = c->lo[i];
    *hi = c->hi[i];
}

void er_ops_exp_iv_c(er_ops_expc *c, double a, double b, double *lo, double *hi)
{
    double l, h;
    er_ops_exp_c(c, a, lo, &h);
    if (b == a) { /* one point: one evaluation */
        *hi = h;
        return;
    }
    double d = b - a;
    if (d > 0 && d <= 0x1p-20 && er_b_finite(h)) {
        /* a narrow interval: exp(b) = exp(a) e^(b - a) <= exp(a) (1 + 2 (b - a)) for 0 <= b - a <= 1 */
        *hi = er_b_up(h * er_b_up(1 + 2 * er_b_up(d)));
        return;
    }
    er_ops_exp_c(c, b, &l, hi);
}

/* ---- tanh enclosed from the certified exp (docs/proofs/ops-math.md, "tanh from exp") ---- */

void er_ops_tanh_fast(double x, double *lo, double *hi)
{
    double a = x < 0 ? -x : x, l, h;
    if (x != x || a == 0 || a < 0x1p-500) { /* NaN, zeros (their sign), the far small: MPFR */
        er_ops_tanh(x, lo, hi);
        return;
    }
    if (a < 0x1p-10) {
        /* a - a^3/3 <= tanh a <= a - a^3/3 + 2 a^5/15 (0 <= a <= sqrt(3)) */
        double a2l = er_b_down(a * a), a2h = er_b_up(a * a);
        double c3h = er_b_up(er_b_up(a2h * a) / 3), c3l = er_b_down(er_b_down(a2l * a) / 3);
        double a5h = er_b_up(er_b_up(a2h * a2h) * a), c5h = er_b_up(er_b_up(2 * a5h) / 15);
        l = er_b_down(a - c3h);
        h = er_b_up(er_b_up(a - c3l) + c5h);
    } else if (a > 20) {
        /* 1 - tanh a = 2 / (e^(2a) + 1) < 2 e^-40 < 2^-53 */
        l = 0x1.fffffffffffffp-1;
        h = 1;
    } else {
        /* tanh a = 1 - 2 / (e^(2a) + 1), increasing in e^(2a); 2a is exact */
        double El, Eh;
        er_ops_exp(2 * a, &El, &Eh);
        l = er_b_down(1 - er_b_up(2 / er_b_down(El + 1)));
        h = er_b_up(1 - er_b_down(2 / er_b_up(Eh + 1)));
        if (h > 1) h = 1;
    }
    if (l < 0) l = 0;
    if (x < 0) {
        *lo = -h;
        *hi = -l;
    } else {
        *lo = l;
        *hi = h;
    }
}
