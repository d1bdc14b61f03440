/* op_fast.c: the operation layer's fast paths for the common output formats (bf16, f16, f32): rounding a
 * binary64 value to nearest even into the format's pattern, a pattern's value, and one element's bounds
 * (er_b_finish_lh's common case), without the generic format converter. */
#include <math.h>
#include <stdint.h>
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
    int of = c->out_fmt;
    if (!nonfinite && !uncertain && c->dir == ER_RND_NEAREST_EVEN && c->opts == 0u && er_ops_fast_format(of) &&
        er_b_finite(rad) && lo >= -c->max_c && hi <= c->max_c && lo <= hi) {
        double rv = er_ops_bits_value(of, rbits);
        uint64_t lp = er_ops_rn_bits(of, lo), hp = er_ops_rn_bits(of, hi);
        double lv = er_ops_bits_value(of, lp), hv = er_ops_bits_value(of, hp);
        if (er_b_finite(rv) && er_b_finite(lv) && er_b_finite(hv) && lv <= hv) {
            /* er_b_finish_lh's case of a finite range inside compute's and the output's finite values */
            double d1 = er_b_up(rv - lv), d2 = er_b_up(hv - rv);
            o->radius = rad;
            o->flags = ER_BF_RANGE;
            o->low = lp;
            o->high = hp;
            o->tolerance = d1 > d2 ? d1 : d2;
            if (o->tolerance < 0) o->tolerance = 0;
            return;
        }
    }
    er_b_finish_lh(c, rbits, lo, hi, rad, nonfinite, uncertain, 0, 0, o);
}
