/* cpu_engine.h: the CPU engine's internal view of a problem, shared by cpu_mma.c and cpu_bounds.c. */
#ifndef ER_CPU_ENGINE_H
#define ER_CPU_ENGINE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exactref/core/er_acc.h"
#include "exactref/exactref.h"

/* A view of one operand: format, storage size and the strides of its last two dims and batch. */
typedef struct {
    const unsigned char *data;
    int fmt, bytes;
    int64_t sb, s0, s1; /* batch stride (0: broadcast), row stride, column stride; in elements */
} view;

static inline view make_view(const er_tensor *t)
{
    view v;
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    v.data = (const unsigned char *)t->data;
    v.fmt = t->format;
    v.bytes = fi.storage_bytes;
    v.sb = t->ndim == 3 ? t->strides[0] : 0;
    v.s0 = t->strides[t->ndim - 2];
    v.s1 = t->strides[t->ndim - 1];
    return v;
}

static inline uint64_t load(const view *v, int64_t b, int64_t i, int64_t j)
{
    const unsigned char *p = v->data + (size_t)(b * v->sb + i * v->s0 + j * v->s1) * (size_t)v->bytes;
    switch (v->bytes) {
    case 1: return p[0];
    case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
    case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
    default: { uint64_t x; memcpy(&x, p, 8); return x; }
    }
}

static inline void store(er_tensor *t, int64_t b, int64_t i, int64_t j, uint64_t x, int bytes)
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

static inline double bits_to_double(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static inline uint64_t double_to_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

typedef struct {
    er_mma_args *args;
    int kind; /* 0 float mma, 1 mmai */
    int scaled;
    int64_t batch, m, n, k, nblocks;
    view a, b, c, sa, sb;
    int has_c;
    int acc_lo, acc_nd;   /* the exact accumulator's window */
    int fast;             /* the certified fast path applies */
    int exact64;          /* integral inputs, small enough: binary64 accumulation is exact in any order */
    int nthreads;
    /* fast path buffers: per batch, A and B as binary64 values (scales applied), row/column norms */
    double *af, *bf;
    double *a_s1, *a_mx, *a_s2, *b_s1, *b_mx, *b_s2;
    int use_s2;
    /* results */
    int64_t fast_decided, exact_f64, exact_path, wrapped;
    int failed; /* out of memory in a worker */
    char note[256]; /* ER_BACKEND_AUTO: why the device was not used (er_mma_stats.note) */
} problem;

/* Validate args into P (shapes, formats, the accumulator window, whether the fast path applies). */
int er_engine_validate(problem *P);

static inline int64_t tb(const er_tensor *t) { return t->ndim == 3 ? t->shape[0] : 1; }
static inline int64_t tr(const er_tensor *t) { return t->shape[t->ndim - 2]; }
static inline int64_t tc(const er_tensor *t) { return t->shape[t->ndim - 1]; }


/* An operand element, its subnormals read as zero with ER_OPT_FTZ_IN (the flush of inputs). */
static inline er_val in_val(const problem *P, er_val v) { return er_val_flush_in(v, P->args->opts); }

static inline er_val a_val(const problem *P, int64_t b, int64_t i, int64_t p)
{
    er_val v = in_val(P, er_decode(P->a.fmt, load(&P->a, b, i, p)));
    if (P->scaled) v = er_val_scaled(v, er_decode(P->sa.fmt, load(&P->sa, b, i, p / P->args->block)));
    return v;
}

static inline er_val b_val(const problem *P, int64_t b, int64_t p, int64_t j)
{
    er_val v = in_val(P, er_decode(P->b.fmt, load(&P->b, b, p, j)));
    if (P->scaled) v = er_val_scaled(v, er_decode(P->sb.fmt, load(&P->sb, b, p / P->args->block, j)));
    return v;
}

/* The binary64 neighbours of a finite x toward -inf and +inf (the next representable values). */
static inline double step_down(double x)
{
    uint64_t u = double_to_bits(x);
    if (x == 0) return -0x1p-1074;
    return bits_to_double(x > 0 ? u - 1 : u + 1);
}

static inline double step_up(double x)
{
    uint64_t u = double_to_bits(x);
    if (x == 0) return 0x1p-1074;
    return bits_to_double(x > 0 ? u + 1 : u - 1);
}

/* The binary64 value of a decoded value (exact: every format's values are binary64 values). */
static inline double val_to_double(er_val v)
{
    if (v.cls == ER_CLASS_NAN) return NAN;
    if (v.cls == ER_CLASS_INF) return v.sign ? -INFINITY : INFINITY;
    if (v.cls == ER_CLASS_ZERO) return v.sign ? -0.0 : 0.0;
    return ldexp(v.sign ? -(double)v.sig : (double)v.sig, v.exp);
}

/* er_convert from binary64, with the target as a constant for the common output formats so the
 * compiler folds the format's row (the same core function either way). */
static inline er_res convert_from_f64(int to, uint64_t x, int dir, unsigned opts)
{
    switch (to) {
    case ER_FMT_F32: return er_convert(ER_FMT_F64, ER_FMT_F32, x, dir, opts);
    case ER_FMT_BF16: return er_convert(ER_FMT_F64, ER_FMT_BF16, x, dir, opts);
    case ER_FMT_F16: return er_convert(ER_FMT_F64, ER_FMT_F16, x, dir, opts);
    default: return er_convert(ER_FMT_F64, to, x, dir, opts);
    }
}

#endif
