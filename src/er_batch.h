/* er_batch.h: the cross-backend conversion batch (internal; used by the demo and the tests): every format pair, direction and option set. */
#ifndef ER_BATCH_H
#define ER_BATCH_H

#include <stdint.h>
#include <stdlib.h>

#include "exactref/exactref.h"
#include "exactref/core/er_round.h"

/*
 * A job is packed into one 32-bit spec: from | to << 8 | dir << 16 | opts << 24.  The batch holds,
 * for every ordered pair of formats, every direction and the option sets {none, saturate, ftz}:
 * every pattern of a source of at most 8 bits, and for wider sources their special and boundary
 * patterns plus `per_wide` random ones.  Deterministic for a given seed.
 */
#define ER_BATCH_SPEC(from, to, dir, opts) \
    ((uint32_t)(from) | (uint32_t)(to) << 8 | (uint32_t)(dir) << 16 | (uint32_t)(opts) << 24)

/* splitmix64 */
static inline uint64_t er_batch_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline uint64_t er_batch_random_pattern(int fmt, uint64_t *st)
{
    er_fmt d = er_fmt_get(fmt);
    uint64_t x = er_batch_rand(st);
    if (d.width < 64) x &= (UINT64_C(1) << d.width) - 1u;
    if (d.pad) x &= ~((UINT64_C(1) << d.pad) - 1u);
    return x;
}

/* Interesting patterns of a wide format: zeros, extremes of each class, and their neighbours. */
static inline size_t er_batch_special_patterns(int fmt, uint64_t *out)
{
    er_format_info fi;
    size_t k = 0;
    uint64_t sign, one_ulp;
    er_format_get_info(fmt, &fi);
    sign = fi.is_signed ? UINT64_C(1) << (fi.width - 1) : 0;
    one_ulp = UINT64_C(1) << fi.padding_bits;
    uint64_t base[] = {0, fi.min_subnormal_bits, fi.max_finite_bits, fi.max_finite_bits - one_ulp,
                       fi.max_finite_bits + one_ulp, fi.max_finite_bits + 2 * one_ulp,
                       fi.max_finite_bits + 3 * one_ulp};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        uint64_t b = base[i];
        if (fi.width < 64) b &= (UINT64_C(1) << fi.width) - 1u;
        out[k++] = b;
        out[k++] = (b ^ sign) & (fi.width < 64 ? (UINT64_C(1) << fi.width) - 1u : ~UINT64_C(0));
    }
    return k;
}

/* Which ordered pairs of formats a batch holds (er_batch_build_sel). */
#define ER_BATCH_ALL 0     /* every pair */
#define ER_BATCH_WITHOUT 1 /* the pairs in which format `sel` takes no part */
#define ER_BATCH_WITH 2    /* the pairs in which format `sel` is the source or the target, or both */

static inline int er_batch_pair_in_(int which, int sel, int from, int to)
{
    int has = from == sel || to == sel;
    return which == ER_BATCH_ALL || (which == ER_BATCH_WITH ? has : !has);
}

/*
 * Build the batch of the pairs `which` selects; returns its length (0 on allocation failure).  Caller
 * frees *spec and *src.  The random patterns of a wide source are drawn in pair order, pairs left out
 * drawing none: the batch WITHOUT a format added to the table later is, element for element, the whole
 * batch of the table before it (the golden suite's part "convert" keeps its digest that way).
 */
static inline size_t er_batch_build_sel(uint64_t seed, size_t per_wide, int which, int sel, uint32_t **spec,
                                        uint64_t **src)
{
    static const unsigned opt_sets[3] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ};
    size_t cap = 0, n = 0;
    uint64_t st = seed;
    int from, to, dir, o;
    /* Count first. */
    for (from = 0; from < ER_FMT_COUNT; from++) {
        int w = er_fmt_get(from).width;
        size_t per = w <= 8 ? ((size_t)1 << w) : 14 + per_wide;
        cap += per * (size_t)ER_FMT_COUNT * ER_RND_COUNT * 3;
    }
    *spec = (uint32_t *)malloc(cap * sizeof **spec);
    *src = (uint64_t *)malloc(cap * sizeof **src);
    if (!*spec || !*src) {
        free(*spec);
        free(*src);
        return 0;
    }
    for (from = 0; from < ER_FMT_COUNT; from++) {
        int w = er_fmt_get(from).width;
        for (to = 0; to < ER_FMT_COUNT; to++) {
            if (!er_batch_pair_in_(which, sel, from, to)) continue;
            for (dir = 0; dir < ER_RND_COUNT; dir++)
                for (o = 0; o < 3; o++) {
                    uint32_t sp = ER_BATCH_SPEC(from, to, dir, opt_sets[o]);
                    if (w <= 8) {
                        for (uint64_t b = 0; b < (UINT64_C(1) << w); b++) {
                            (*spec)[n] = sp;
                            (*src)[n++] = b;
                        }
                    } else {
                        uint64_t sp_pat[16];
                        size_t ns = er_batch_special_patterns(from, sp_pat);
                        for (size_t i = 0; i < ns; i++) {
                            (*spec)[n] = sp;
                            (*src)[n++] = sp_pat[i];
                        }
                        for (size_t i = 0; i < per_wide; i++) {
                            (*spec)[n] = sp;
                            (*src)[n++] = er_batch_random_pattern(from, &st);
                        }
                    }
                }
        }
    }
    return n;
}

/* The batch of every pair of formats. */
static inline size_t er_batch_build(uint64_t seed, size_t per_wide, uint32_t **spec, uint64_t **src)
{
    return er_batch_build_sel(seed, per_wide, ER_BATCH_ALL, -1, spec, src);
}

/* The C path's answers for a batch. */
static inline void er_batch_reference(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                      uint32_t *flags, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t s = spec[i];
        er_res r = er_convert((int)(s & 0xff), (int)((s >> 8) & 0xff), src[i], (int)((s >> 16) & 0xff),
                              (s >> 24) & 0xff);
        dst[i] = r.bits;
        flags[i] = r.flags;
    }
}

#endif
