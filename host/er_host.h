/* er_host.h: the host-side helpers every backend and the front door share (internal, not installed):
 * the message helper, the binary64 bit casts, the storage size, tensor views with
 * load, store and pack (a tile's operands into a contiguous buffer). */
#ifndef ER_HOST_H
#define ER_HOST_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "exactref/core/er_acc.h"
#include "exactref/core/er_bits.h"
#include "exactref/mma.h"
#include "exactref/status.h"
#include "er_msg.h"

/* The binary64 bit casts: the core's one pair (core/er_bits.h). */
static inline double er_bits_to_double(uint64_t b) { return er_b_dbl(b); }
static inline uint64_t er_double_to_bits(double x) { return er_b_bits(x); }

/* The binary64 value of a decoded value (exact: every format's values are binary64 values). */
static inline double er_val_to_double(er_val v)
{
    if (v.cls == ER_CLASS_NAN) return NAN;
    if (v.cls == ER_CLASS_INF) return v.sign ? -INFINITY : INFINITY;
    if (v.cls == ER_CLASS_ZERO) return v.sign ? -0.0 : 0.0;
    return ldexp(v.sign ? -(double)v.sig : (double)v.sig, v.exp);
}

/* Trailing zero bits of a nonzero 64-bit value. */
static inline int er_ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/* Bytes of one element of format f in an array (the core's one formula). */
static inline int er_storage_bytes(int f) { return er_fmt_storage_bytes(er_fmt_get(f)); }

/* The MLIR name of a format id ("?" for an unknown one), from the core's table (as er_format_name). */
static inline const char *er_host_format_name(int f)
{
#define ER_HOST_NAME_(ID, n, a, k, w, e, m, p, b, s, fl) \
    case ER_FMT_##ID: return n;
    switch (f) {
        ER_FORMAT_TABLE(ER_HOST_NAME_)
    default: return "?";
    }
#undef ER_HOST_NAME_
}

/* A view of one operand: format, storage size and the strides of its last two dims and batch. */
typedef struct {
    const unsigned char *data;
    int fmt, bytes;
    int64_t sb, s0, s1; /* batch stride (0: broadcast), row stride, column stride; in elements */
} er_view;

static inline er_view er_view_of(const er_tensor *t)
{
    er_view v;
    v.data = (const unsigned char *)t->data;
    v.fmt = t->format;
    v.bytes = er_storage_bytes(t->format);
    v.sb = t->ndim == 3 ? t->strides[0] : 0;
    v.s0 = t->strides[t->ndim - 2];
    v.s1 = t->strides[t->ndim - 1];
    return v;
}

static inline uint64_t er_view_load(const er_view *v, int64_t b, int64_t i, int64_t j)
{
    const unsigned char *p = v->data + (size_t)(b * v->sb + i * v->s0 + j * v->s1) * (size_t)v->bytes;
    switch (v->bytes) {
    case 1: return p[0];
    case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
    default: { uint64_t x; memcpy(&x, p, 8); return x; }
    }
}

static inline void er_tensor_store(er_tensor *t, int64_t b, int64_t i, int64_t j, uint64_t x, int bytes)
{
    int64_t sb = t->ndim == 3 ? t->strides[0] : 0;
    unsigned char *p = (unsigned char *)t->data +
                       (size_t)(b * sb + i * t->strides[t->ndim - 2] + j * t->strides[t->ndim - 1]) * (size_t)bytes;
    switch (bytes) {
    case 1: p[0] = (unsigned char)x; break;
    case 2: { uint16_t y = (uint16_t)x; memcpy(p, &y, 2); break; }
    case 4: { uint32_t y = (uint32_t)x; memcpy(p, &y, 4); break; }
    default: memcpy(p, &x, 8); break;
    }
}

/* Store the low `bytes` bytes of x at element idx of a packed buffer (little-endian, as the tensors). */
static inline void er_buf_put(unsigned char *buf, int bytes, uint64_t idx, uint64_t x)
{
    unsigned char *p = buf + idx * (uint64_t)bytes;
    switch (bytes) {
    case 1: p[0] = (unsigned char)x; break;
    case 2: { uint16_t y = (uint16_t)x; memcpy(p, &y, 2); break; }
    case 4: { uint32_t y = (uint32_t)x; memcpy(p, &y, 4); break; }
    default: memcpy(p, &x, 8); break;
    }
}

/* Rows [i0, i0+nr) x columns [j0, j0+nc) of batches [b0, b0+nb) of view v into dst, row-major. */
static inline void er_view_pack(unsigned char *dst, const er_view *v, int64_t b0, int64_t nb, int64_t i0, int64_t nr, int64_t j0,
                        int64_t nc)
{
    uint64_t o = 0;
    for (int64_t b = b0; b < b0 + nb; b++)
        for (int64_t i = i0; i < i0 + nr; i++) {
            if (v->s1 == 1 && nc > 0) {
                /* a contiguous row: one copy */
                const unsigned char *src =
                    v->data + (size_t)(b * v->sb + i * v->s0 + j0) * (size_t)v->bytes;
                memcpy(dst + o * (uint64_t)v->bytes, src, (size_t)nc * (size_t)v->bytes);
                o += (uint64_t)nc;
            } else {
                for (int64_t j = j0; j < j0 + nc; j++) er_buf_put(dst, v->bytes, o++, er_view_load(v, b, i, j));
            }
        }
}

/* Shapes of a 2-D or 3-D tensor: batch (1 for 2-D), rows, columns. */
static inline int64_t er_tensor_nb(const er_tensor *t) { return t->ndim == 3 ? t->shape[0] : 1; }
static inline int64_t er_tensor_nr(const er_tensor *t) { return t->shape[t->ndim - 2]; }
static inline int64_t er_tensor_nc(const er_tensor *t) { return t->shape[t->ndim - 1]; }

#endif /* ER_HOST_H */
