/* cpu_finish.h: the common case of the core's er_b_finish_lh (include/exactref/core/er_bounds.h)
 * without er_convert, for the CPU's per-element loops: the same bits, by integer arithmetic.
 *
 * The common case: the output is f32, bf16 or f16, rounded to nearest-even; both ends lo <= hi of the
 * values an implementation may reach are finite, within the compute format's range (|v| <= max_c: no
 * clipping, no infinity flag), and of magnitude in the output's normal range, below the least value
 * that rounds to an infinity; the reference's pattern rbits is finite.  There er_convert's pattern of
 * an end is the binary64 pattern rounded to nearest-even at the output's precision whatever the
 * options (saturation acts on overflow and flushing on subnormals, both outside that range; the
 * input is a normal binary64 value), and the value of that pattern is the binary64 pattern of the
 * rounded bits: so lp, hp, lv, hv, the flags (ER_BF_RANGE alone, when lv <= hv) and the tolerance are
 * er_b_finish_lh's.  Anything else returns 0 and the caller runs the core's function.
 */
#ifndef ER_CPU_FINISH_H
#define ER_CPU_FINISH_H

#include <stdint.h>
#include <string.h>

#include "exactref/core/er_bounds.h"

typedef struct {
    int ok;             /* the batch's output and direction allow the quick path */
    int of, pb, sh, sgn; /* output format, its stored precision, 52 - pb, its sign bit */
    uint64_t half, lo_lim, r_lim, off;
    double max_c;
} er_cpu_fq;

static inline void er_cpu_fq_init(er_cpu_fq *q, const er_bpar *c)
{
    int of = c->out_fmt;
    memset(q, 0, sizeof *q);
    q->of = of;
    q->pb = of == ER_FMT_F32 ? 23 : of == ER_FMT_BF16 ? 7 : of == ER_FMT_F16 ? 10 : 0;
    q->ok = q->pb > 0 && c->dir == ER_RND_NEAREST_EVEN;
    if (!q->ok) return;
    q->sh = 52 - q->pb;
    q->sgn = of == ER_FMT_F32 ? 31 : 15;
    /* biased binary64 exponents of the output's least normal and of its largest binade */
    uint64_t emin = of == ER_FMT_F16 ? 1023 - 14 : 1023 - 126, emax = of == ER_FMT_F16 ? 1023 + 15 : 1023 + 127;
    q->half = (UINT64_C(1) << (q->sh - 1)) - 1u;
    q->lo_lim = emin << 52;
    q->r_lim = (emax + 1) << q->pb;
    q->off = (emin - 1) << q->pb; /* the rounded binary64 bits minus off: the output's biased pattern */
    q->max_c = c->max_c;
}

/* The magnitude of binary64 pattern u rounded to nearest-even at the output's precision, as binary64
 * bits shifted right by sh (r), when u's magnitude is in the quick range; else 0. */
static inline uint64_t er_cpu_fq_round(const er_cpu_fq *q, uint64_t mag)
{
    if (mag < q->lo_lim) return 0;
    uint64_t r = (mag + q->half + ((mag >> q->sh) & 1u)) >> q->sh;
    return r < q->r_lim ? r : 0;
}

/* The output pattern (er_convert's) of v in the quick range, or 0 with *in cleared. */
static inline uint64_t er_cpu_fq_pattern(const er_cpu_fq *q, double v, int *in)
{
    uint64_t u = er_b_bits(v), r = er_cpu_fq_round(q, u & ~(UINT64_C(1) << 63));
    if (!r || !(v >= -q->max_c && v <= q->max_c)) {
        *in = 0;
        return 0;
    }
    return (r - q->off) | ((u >> 63) << q->sgn);
}

/* The binary64 value of a finite output pattern (exact), or NaN where it is not finite. */
static inline double er_cpu_fq_value(const er_cpu_fq *q, uint64_t p)
{
    if (q->of == ER_FMT_F32) {
        float f;
        uint32_t w = (uint32_t)p;
        memcpy(&f, &w, 4);
        return (double)f;
    }
    if (q->of == ER_FMT_BF16) {
        float f;
        uint32_t w = (uint32_t)p << 16;
        memcpy(&f, &w, 4);
        return (double)f;
    }
    {
        uint64_t s = (p >> 15) & 1u, e = (p >> 10) & 31u, m = p & 1023u;
        double v;
        if (e == 31) return er_b_dbl(ER_U64(0x7FF8000000000000));
        if (e == 0) v = (double)m * 0x1p-24; /* exact: at most 10 bits */
        else v = er_b_dbl(((e - 15 + 1023) << 52) | (m << 42));
        return s ? -v : v;
    }
}

/*
 * er_b_finish_lh(c, rbits, lo, hi, rad, 0, 0, lpk, hpk, o) where the common case holds, with lp and
 * hp the output patterns of lo and hi (er_cpu_fq_pattern's, both in range).  1: done; 0: not the
 * common case (o untouched).
 */
static inline int er_cpu_fq_finish(const er_cpu_fq *q, uint64_t rbits, double lo, double hi, double rad,
                                   uint64_t lp, uint64_t hp, er_bel *o)
{
    double rv = er_cpu_fq_value(q, rbits), lv, hv;
    if (!er_b_finite(rv) || !er_b_finite(rad) || !(lo <= hi)) return 0;
    /* the rounded binary64 values: the patterns' own (exact) */
    lv = er_cpu_fq_value(q, lp);
    hv = er_cpu_fq_value(q, hp);
    o->radius = rad;
    if (lv <= hv) {
        double d1 = er_b_up(rv - lv), d2 = er_b_up(hv - rv);
        o->flags = ER_BF_RANGE;
        o->low = lp;
        o->high = hp;
        o->tolerance = d1 > d2 ? d1 : d2;
        if (o->tolerance < 0) o->tolerance = 0;
    } else {
        o->flags = 0u;
        o->low = o->high = rbits;
        o->tolerance = ER_B_INF;
    }
    return 1;
}

/*
 * er_b_ends_exact's first step where the common case holds: the ends RD(x - rad), RU(x + rad) of the
 * exact sum x from an enclosure [xl, xh] of it, where both ends give the same output pattern (in the
 * quick range, er_b_key_of's comparisons are constant there, so the same keys).  1: done; 0: not
 * decided (o untouched), the caller tries a tighter enclosure or the core's function.
 */
static inline int er_cpu_fq_keys(const er_cpu_fq *q, uint64_t rbits, double xl, double xh, double rad, er_bel *o)
{
    int in = 1;
    if (!q->ok || !er_b_finite(rad)) return 0;
    double la = er_b_down(xl - rad), lb = er_b_up(xh - rad), ha = er_b_down(xl + rad), hb = er_b_up(xh + rad);
    uint64_t pl = er_cpu_fq_pattern(q, la, &in), pl2 = er_cpu_fq_pattern(q, lb, &in);
    uint64_t ph = er_cpu_fq_pattern(q, ha, &in), ph2 = er_cpu_fq_pattern(q, hb, &in);
    return in && pl == pl2 && ph == ph2 && er_cpu_fq_finish(q, rbits, la, hb, rad, pl, ph2, o);
}

#endif /* ER_CPU_FINISH_H */
