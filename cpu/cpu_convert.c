/* cpu_convert.c: the CPU backend's array conversion, the core's er_convert over whole arrays. */
#include <string.h>

#include "cpu_internal.h"
#include "exactref/exactref.h"
#include "exactref/core/er_round.h"

/* Bytes of one stored element of format fmt. */
static int er_storage_(int fmt) { return er_fmt_storage_bytes(er_fmt_get(fmt)); }

static uint64_t er_load_(const unsigned char *p, int bytes)
{
    switch (bytes) {
    case 1: return p[0];
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void er_store_(unsigned char *p, int bytes, uint64_t x)
{
    switch (bytes) {
    case 1: p[0] = (unsigned char)x; break;
    case 2: { uint16_t v = (uint16_t)x; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)x; memcpy(p, &v, 4); break; }
    default: memcpy(p, &x, 8); break;
    }
}

/* Bits of the storage that a valid pattern of fmt leaves zero. */
static uint64_t er_invalid_mask_(int fmt)
{
    er_fmt d = er_fmt_get(fmt);
    int sb = 8 * er_storage_(fmt);
    uint64_t m = 0;
    if (d.width < sb) m |= ((sb == 64 ? ~UINT64_C(0) : (UINT64_C(1) << sb) - 1u)) & ~((UINT64_C(1) << d.width) - 1u);
    if (d.pad) m |= (UINT64_C(1) << d.pad) - 1u;
    return m;
}

typedef er_status (*er_loop_fn)(const void *, void *, size_t, int, unsigned, unsigned *);

/*
 * Specialised loops: the same core function with the formats as constants, so the compiler folds the
 * table row into the code (one mechanism, compiled per pair; no format has a code path of its own).
 * These pairs' storage has no invalid bits, so no validation is needed.
 */
#define ER_LOOP_(FROM, TO, ST, DT)                                                             \
    static er_status er_loop_##FROM##_##TO(const void *src, void *dst, size_t n, int dir,    \
                                            unsigned opts, unsigned *fl)                     \
    {                                                                                        \
        const ST *s = (const ST *)src;                                                       \
        DT *o = (DT *)dst;                                                                   \
        unsigned acc = 0;                                                                    \
        size_t i;                                                                            \
        for (i = 0; i < n; i++) {                                                            \
            er_res r = er_convert(ER_FMT_##FROM, ER_FMT_##TO, s[i], dir, opts);              \
            o[i] = (DT)r.bits;                                                               \
            acc |= r.flags;                                                                  \
        }                                                                                    \
        *fl = acc;                                                                           \
        return ER_OK;                                                                        \
    }

#define ER_LOOPS_FROM_(FROM, ST)                 \
    ER_LOOP_(FROM, F64, ST, uint64_t)            \
    ER_LOOP_(FROM, F32, ST, uint32_t)            \
    ER_LOOP_(FROM, F16, ST, uint16_t)            \
    ER_LOOP_(FROM, BF16, ST, uint16_t)           \
    ER_LOOP_(FROM, F8E4M3FN, ST, uint8_t)        \
    ER_LOOP_(FROM, F8E5M2, ST, uint8_t)

ER_LOOPS_FROM_(F64, uint64_t)
ER_LOOPS_FROM_(F32, uint32_t)
ER_LOOPS_FROM_(F16, uint16_t)
ER_LOOPS_FROM_(BF16, uint16_t)
ER_LOOPS_FROM_(F8E4M3FN, uint8_t)
ER_LOOPS_FROM_(F8E5M2, uint8_t)

#define ER_ROW_(FROM)                                                                         \
    {ER_FMT_##FROM,                                                                           \
     {er_loop_##FROM##_F64, er_loop_##FROM##_F32, er_loop_##FROM##_F16, er_loop_##FROM##_BF16, \
      er_loop_##FROM##_F8E4M3FN, er_loop_##FROM##_F8E5M2}}

static const int er_fast_to_[6] = {ER_FMT_F64, ER_FMT_F32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2};
static const struct {
    int from;
    er_loop_fn fn[6];
} er_fast_[6] = {ER_ROW_(F64), ER_ROW_(F32), ER_ROW_(F16), ER_ROW_(BF16), ER_ROW_(F8E4M3FN), ER_ROW_(F8E5M2)};

static er_loop_fn er_find_fast_(int from, int to)
{
    int i, j;
    for (i = 0; i < 6; i++)
        if (er_fast_[i].from == from)
            for (j = 0; j < 6; j++)
                if (er_fast_to_[j] == to) return er_fast_[i].fn[j];
    return NULL;
}

er_status er_cpu_convert_array(int from, int to, const void *src, void *dst, size_t n, int dir,
                               unsigned opts, unsigned *flags_or, size_t *bad_index)
{
    const unsigned char *s = (const unsigned char *)src;
    unsigned char *o = (unsigned char *)dst;
    int sb, db;
    uint64_t bad;
    unsigned acc = 0;
    size_t i;
    er_loop_fn fast;
    if (from < 0 || from >= ER_FMT_COUNT || to < 0 || to >= ER_FMT_COUNT || dir < 0 ||
        dir >= ER_RND_COUNT || (n && (!src || !dst)))
        return ER_EINVAL;
    fast = er_find_fast_(from, to);
    if (fast) {
        er_status st = fast(src, dst, n, dir, opts, &acc);
        if (flags_or) *flags_or = acc;
        return st;
    }
    sb = er_storage_(from);
    db = er_storage_(to);
    bad = er_invalid_mask_(from);
    for (i = 0; i < n; i++) {
        uint64_t x = er_load_(s + i * (size_t)sb, sb);
        er_res r;
        if (x & bad) {
            if (bad_index) *bad_index = i;
            if (flags_or) *flags_or = acc;
            return ER_EPATTERN;
        }
        r = er_convert(from, to, x, dir, opts);
        er_store_(o + i * (size_t)db, db, r.bits);
        acc |= r.flags;
    }
    if (flags_or) *flags_or = acc;
    return ER_OK;
}

er_status er_cpu_convert_batch(const uint32_t *spec, const uint64_t *src, uint64_t *dst, uint32_t *flags, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t s = spec[i];
        er_res r = er_convert((int)(s & 0xffu), (int)((s >> 8) & 0xffu), src[i], (int)((s >> 16) & 0xffu),
                              (s >> 24) & 0xffu);
        dst[i] = r.bits;
        flags[i] = r.flags;
    }
    return ER_OK;
}
