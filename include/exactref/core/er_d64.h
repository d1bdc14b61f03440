/* er_d64.h: binary64 arithmetic on bit patterns with integers only, and normal()'s per-element
 * emulation (shared core: C99, OpenCL C, CUDA). */
#ifndef ER_D64_H
#define ER_D64_H

#include "er_acc.h"

/*
 * normal() is index-order accumulation in binary64 (tests/backends/normal_ref.c computes it with the
 * host's binary64 arithmetic, the tests' independent reference): each operand's value as a double,
 * the product a*b in binary64, rounded to `compute` (nearest even), added in index order after C,
 * each sum rounded to compute (for compute narrower than f64: TwoSum and round to odd in binary64,
 * then to compute: one rounding), a new partial sum where the next addition would overflow,
 * the partial sums then added in order, and the result converted to the output format with the
 * result's rounding and options.  Here every one of those binary64 values is carried as its bit
 * pattern and every operation is done with the core's integer functions (er_round, er_convert,
 * er_acc): no floating point, so a device without fp64 gives the same bits.  Every backend runs it
 * through er_mma_normal_element (er_mma.h): the CPU (cpu/cpu_bounds.c: er_cpu_normal), the OpenCL
 * kernel er_mma_normal in opencl/kernels/mma.cl and the CUDA kernel in cuda/er_cuda_mma.cu.
 *
 * The binary64 operations follow IEEE 754 with the x86-64 (SSE2) rules for NaNs, as the host computes
 * them: an invalid operation (0 x inf, inf - inf) gives the default NaN 0xFFF8000000000000, and an
 * operation with a NaN operand returns its first NaN operand, quieted.
 *
 * Everything here takes values (patterns, decoded values) and private pointers only: the kernels read
 * their operands from global memory themselves and hand the values in.
 */

#define ER_D_QNAN_DEFAULT ER_U64(0xFFF8000000000000)
#define ER_D_QNAN ER_U64(0x7FF8000000000000)
#define ER_D_QUIET ER_U64(0x0008000000000000)
#define ER_D_SIGN ER_U64(0x8000000000000000)
#define ER_D_INF ER_U64(0x7FF0000000000000)

ER_FN int er_d_isnan(er_u64 x) { return (x & ~ER_D_SIGN) > ER_D_INF; }
ER_FN int er_d_isinf(er_u64 x) { return (x & ~ER_D_SIGN) == ER_D_INF; }
ER_FN int er_d_isfinite(er_u64 x) { return (x & ER_D_INF) != ER_D_INF; }

/* The binary64 pattern of a decoded value (cpu_engine.h: val_to_double; NaN: the quiet NaN NAN). */
ER_FN er_u64 er_d_of_val(er_val v)
{
    if (v.cls == ER_CLASS_NAN) return ER_D_QNAN;
    if (v.cls == ER_CLASS_INF) return v.sign ? (ER_D_SIGN | ER_D_INF) : ER_D_INF;
    if (v.cls == ER_CLASS_ZERO) return v.sign ? ER_D_SIGN : ER_U64(0);
    return er_round(ER_FMT_F64, v.sign, v.sig, v.exp, 0u, ER_RND_NEAREST_EVEN, 0u).bits; /* exact */
}

/* er_flush_subnormal(cf, x): x (binary64) below cf's least normal in magnitude becomes the zero of its
 * sign. */
ER_FN er_u64 er_d_flush(int cf, er_u64 x)
{
    er_val v = er_decode(ER_FMT_F64, x);
    if (v.cls == ER_CLASS_SUBNORMAL || v.cls == ER_CLASS_NORMAL) {
        er_fmt d = er_fmt_get(cf);
        int top = 63 - (int)ER_CLZ64(v.sig);
        if (d.kind == ER_KIND_FLOAT && er_fmt_has_subnormals(d) && (er_i64)v.exp + top < (er_i64)er_fmt_emin(d))
            return v.sign ? ER_D_SIGN : ER_U64(0);
    }
    return x;
}

/* round_c: x (binary64) rounded to cf to nearest even, back as binary64, flushed with ftz. */
ER_FN er_u64 er_d_round_c(int cf, er_u64 x, int ftz)
{
    er_u64 r = er_convert(cf, ER_FMT_F64, er_convert(ER_FMT_F64, cf, x, ER_RND_NEAREST_EVEN, 0u).bits,
                          ER_RND_NEAREST_EVEN, 0u).bits;
    return ftz ? er_d_flush(cf, r) : r;
}

/* x * y in binary64, to nearest even (x86-64 NaN rules). */
ER_FN er_u64 er_d_mul(er_u64 x, er_u64 y)
{
    er_val a, b;
    er_u64 hi, lo;
    er_u32 sign;
    if (er_d_isnan(x)) return x | ER_D_QUIET;
    if (er_d_isnan(y)) return y | ER_D_QUIET;
    a = er_decode(ER_FMT_F64, x);
    b = er_decode(ER_FMT_F64, y);
    sign = a.sign ^ b.sign;
    if ((a.cls == ER_CLASS_INF && b.cls == ER_CLASS_ZERO) || (a.cls == ER_CLASS_ZERO && b.cls == ER_CLASS_INF))
        return ER_D_QNAN_DEFAULT;
    if (a.cls == ER_CLASS_INF || b.cls == ER_CLASS_INF) return sign ? (ER_D_SIGN | ER_D_INF) : ER_D_INF;
    if (a.cls == ER_CLASS_ZERO || b.cls == ER_CLASS_ZERO) return sign ? ER_D_SIGN : ER_U64(0);
    er_mul64x64(a.sig, b.sig, &hi, &lo);
    if (hi == ER_U64(0)) return er_round(ER_FMT_F64, sign, lo, a.exp + b.exp, 0u, ER_RND_NEAREST_EVEN, 0u).bits;
    {
        int z = (int)ER_CLZ64(hi); /* 11 or more: the significands have at most 53 bits */
        er_u64 top = (hi << z) | (lo >> (64 - z));
        er_u32 sticky = (lo << z) != ER_U64(0);
        return er_round(ER_FMT_F64, sign, top, a.exp + b.exp + 64 - z, sticky, ER_RND_NEAREST_EVEN, 0u).bits;
    }
}

/* x + y in binary64 rounded in direction dir (nearest even, or odd for the TwoSum step), x86-64 NaN
 * rules; the exact sum is formed in the long accumulator acc (two terms) and rounded once. */
ER_FN er_u64 er_d_add(er_acc *acc, er_u64 x, er_u64 y, int dir)
{
    er_val a, b;
    er_i32 lo, nd, top;
    if (er_d_isnan(x)) return x | ER_D_QUIET;
    if (er_d_isnan(y)) return y | ER_D_QUIET;
    if (er_d_isinf(x) && er_d_isinf(y)) return x == y ? x : ER_D_QNAN_DEFAULT;
    if (er_d_isinf(x)) return x;
    if (er_d_isinf(y)) return y;
    a = er_decode(ER_FMT_F64, x);
    b = er_decode(ER_FMT_F64, y);
    lo = a.exp < b.exp ? a.exp : b.exp;
    top = (a.exp > b.exp ? a.exp : b.exp) + 54;
    er_acc_window(lo, top, 2, &lo, &nd);
    er_acc_init(acc, lo, nd);
    er_acc_add_val(acc, a);
    er_acc_add_val(acc, b);
    return er_acc_round(acc, ER_FMT_F64, dir, 0u).bits;
}

/* add_rn: x + y (values of cf) rounded to cf to nearest even, as binary64. */
ER_FN er_u64 er_d_add_rn(er_acc *acc, int cf, er_u64 x, er_u64 y)
{
    er_u64 s;
    if (cf == ER_FMT_F64) return er_d_add(acc, x, y, ER_RND_NEAREST_EVEN);
    /* round to odd in binary64 where the sum is finite (TwoSum's correction), then to cf */
    s = er_d_add(acc, x, y, ER_RND_ODD);
    return er_convert(cf, ER_FMT_F64, er_convert(ER_FMT_F64, cf, s, ER_RND_NEAREST_EVEN, 0u).bits,
                      ER_RND_NEAREST_EVEN, 0u).bits;
}

/* ---- normal(): one element, index order (the binary64 loop's operations, one for one) ------------ */

/* An operand's value as binary64: the pattern `bits` of format f read as the engine reads it (flushed
 * with ER_OPT_FTZ_IN), times its scale (pattern sbits of format fs) when fs >= 0. */
ER_FN er_u64 er_d_operand(int f, er_u64 bits, int fs, er_u64 sbits, er_u32 opts)
{
    er_val v = er_val_flush_in(er_decode(f, bits), opts);
    if (fs >= 0) v = er_val_scaled(v, er_decode(fs, sbits));
    return er_d_of_val(v);
}

/* The state of one element's accumulation. */
typedef struct er_dnorm {
    er_acc tmp;          /* scratch of er_d_add */
    er_u64 acc, parts;   /* the current partial sum; the finished ones added up in order */
    er_i64 np;           /* finished partial sums */
    int have, cf, ftz;   /* a first term seen; compute format; flush_to_zero */
} er_dnorm;

ER_FN void er_dnorm_init(er_dnorm *s, int cf, int ftz)
{
    s->acc = ER_U64(0);
    s->parts = ER_U64(0);
    s->np = 0;
    s->have = 0;
    s->cf = cf;
    s->ftz = ftz;
}

/* C, as stored (not flushed by ER_OPT_FTZ_IN: normal() reads it with er_decode alone): the pattern
 * cbits of format fc. */
ER_FN void er_dnorm_c(er_dnorm *s, int fc, er_u64 cbits)
{
    s->acc = er_d_round_c(s->cf, er_d_of_val(er_decode(fc, cbits)), s->ftz);
    s->have = 1;
}

/* The next term: x and y the operands' binary64 values (er_d_operand). */
ER_FN void er_dnorm_term(er_dnorm *s, er_u64 x, er_u64 y)
{
    er_u64 t;
    if (s->ftz) {
        x = er_d_flush(s->cf, x);
        y = er_d_flush(s->cf, y);
    }
    x = er_d_round_c(s->cf, er_d_mul(x, y), s->ftz); /* a*b exact for inputs up to f32 */
    if (!s->have) {
        s->acc = x;
        s->have = 1;
        return;
    }
    t = er_d_add_rn(&s->tmp, s->cf, s->acc, x);
    if (s->ftz) t = er_d_flush(s->cf, t);
    if (er_d_isinf(t) && er_d_isfinite(s->acc) && er_d_isfinite(x)) {
        /* the next addition would overflow: a new partial sum; the finished ones are added up in
         * order as they come (the same operations as adding them all at the end) */
        s->parts = s->np ? er_d_add_rn(&s->tmp, s->cf, s->parts, s->acc) : s->acc;
        s->np++;
        s->acc = x;
    } else {
        s->acc = t;
    }
}

/* The element's output: the pattern of format fd, rounded in direction dir with options opts. */
ER_FN er_u64 er_dnorm_result(er_dnorm *s, int fd, int dir, er_u32 opts)
{
    er_u64 r = s->np ? er_d_add_rn(&s->tmp, s->cf, s->parts, s->acc) : s->acc;
    if (!s->have) r = ER_U64(0);
    /* a NaN result is the output format's canonical NaN on every backend (the sign and payload of an
     * intermediate NaN depend on the host's floating-point unit) */
    if (er_d_isnan(r)) r = ER_D_QNAN;
    return er_convert(ER_FMT_F64, fd, r, dir, opts).bits;
}

#endif /* ER_D64_H */
