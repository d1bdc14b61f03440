/* er_formats.h: the table of every number format exactref knows, one row per format (shared core). */
#ifndef ER_FORMATS_H
#define ER_FORMATS_H

#include "er_qual.h"

/* Kinds of format. */
#define ER_KIND_FLOAT 0
#define ER_KIND_SINT 1
#define ER_KIND_UINT 2

/*
 * Encoding of special values of a float format ("special" column):
 *   IEEE  exponent field all ones: fraction zero is an infinity, nonzero a NaN (f64, f32, f16, e5m2 ...).
 *   FN    no infinity; the one NaN magnitude is all ones (exponent and fraction); every other pattern,
 *         exponent all ones included, is finite (f8E4M3FN: NaN 0x7F/0xFF; f8E8M0FNU: NaN 0xFF).
 *   FNUZ  no infinity, no negative zero: the pattern "sign set, everything else zero" is the only NaN
 *         (f8E4M3FNUZ, f8E5M2FNUZ: 0x80).
 *   NONE  every pattern is finite: no infinity, no NaN (f6E2M3FN, f6E3M2FN, f4E2M1FN).
 */
#define ER_SPECIAL_IEEE 0
#define ER_SPECIAL_FN 1
#define ER_SPECIAL_FNUZ 2
#define ER_SPECIAL_NONE 3

/* Flags column. */
#define ER_F_UNSIGNED 1u /* no sign bit (f8E8M0FNU, u8) */
#define ER_F_NOSUB 2u    /* no subnormals and no zero: exponent field 0 is a normal binade (f8E8M0FNU) */

/*
 * THE TABLE.  A new format is a new row here and nothing else.
 * X(ID, mlir name, ml_dtypes alias, kind, width, exponent bits, stored significand bits,
 *   low padding bits, bias, special, flags)
 * width counts the whole storage in bits; padding bits are low bits that are always zero (tf32 is an
 * f32 whose low 13 bits are zero).  Integer rows use only kind and width.
 */
#define ER_FORMAT_TABLE(X)                                                                        \
    X(F64, "f64", "float64", ER_KIND_FLOAT, 64, 11, 52, 0, 1023, ER_SPECIAL_IEEE, 0)              \
    X(F32, "f32", "float32", ER_KIND_FLOAT, 32, 8, 23, 0, 127, ER_SPECIAL_IEEE, 0)                \
    X(TF32, "tf32", "tensorfloat32", ER_KIND_FLOAT, 32, 8, 10, 13, 127, ER_SPECIAL_IEEE, 0)       \
    X(F16, "f16", "float16", ER_KIND_FLOAT, 16, 5, 10, 0, 15, ER_SPECIAL_IEEE, 0)                 \
    X(BF16, "bf16", "bfloat16", ER_KIND_FLOAT, 16, 8, 7, 0, 127, ER_SPECIAL_IEEE, 0)              \
    X(F8E4M3FN, "f8E4M3FN", "float8_e4m3fn", ER_KIND_FLOAT, 8, 4, 3, 0, 7, ER_SPECIAL_FN, 0)      \
    X(F8E5M2, "f8E5M2", "float8_e5m2", ER_KIND_FLOAT, 8, 5, 2, 0, 15, ER_SPECIAL_IEEE, 0)         \
    X(F8E4M3FNUZ, "f8E4M3FNUZ", "float8_e4m3fnuz", ER_KIND_FLOAT, 8, 4, 3, 0, 8,                  \
      ER_SPECIAL_FNUZ, 0)                                                                         \
    X(F8E5M2FNUZ, "f8E5M2FNUZ", "float8_e5m2fnuz", ER_KIND_FLOAT, 8, 5, 2, 0, 16,                 \
      ER_SPECIAL_FNUZ, 0)                                                                         \
    X(F8E8M0FNU, "f8E8M0FNU", "float8_e8m0fnu", ER_KIND_FLOAT, 8, 8, 0, 0, 127, ER_SPECIAL_FN,    \
      ER_F_UNSIGNED | ER_F_NOSUB)                                                                 \
    X(F6E2M3FN, "f6E2M3FN", "float6_e2m3fn", ER_KIND_FLOAT, 6, 2, 3, 0, 1, ER_SPECIAL_NONE, 0)    \
    X(F6E3M2FN, "f6E3M2FN", "float6_e3m2fn", ER_KIND_FLOAT, 6, 3, 2, 0, 3, ER_SPECIAL_NONE, 0)    \
    X(F4E2M1FN, "f4E2M1FN", "float4_e2m1fn", ER_KIND_FLOAT, 4, 2, 1, 0, 1, ER_SPECIAL_NONE, 0)    \
    X(I8, "i8", "int8", ER_KIND_SINT, 8, 0, 0, 0, 0, 0, 0)                                        \
    X(U8, "u8", "uint8", ER_KIND_UINT, 8, 0, 0, 0, 0, 0, ER_F_UNSIGNED)                           \
    X(I16, "i16", "int16", ER_KIND_SINT, 16, 0, 0, 0, 0, 0, 0)                                    \
    X(I32, "i32", "int32", ER_KIND_SINT, 32, 0, 0, 0, 0, 0, 0)                                    \
    X(I64, "i64", "int64", ER_KIND_SINT, 64, 0, 0, 0, 0, 0, 0)

/* Format identifiers: ER_FMT_F64, ER_FMT_F32, ... in table order, then ER_FMT_COUNT. */
#define ER_FMT_ENUM_(ID, n, a, k, w, e, m, p, b, s, f) ER_FMT_##ID,
enum { ER_FORMAT_TABLE(ER_FMT_ENUM_) ER_FMT_COUNT };
#undef ER_FMT_ENUM_

/* A row of the table.  Fields are small integers so the struct is cheap to pass by value. */
typedef struct er_fmt {
    er_i32 kind;
    er_i32 width;
    er_i32 ebits;
    er_i32 mbits;
    er_i32 pad;
    er_i32 bias;
    er_i32 special;
    er_u32 flags;
} er_fmt;

/* The row of format id f; an unknown id gives a row of width 0 (callers validate ids first). */
ER_FN er_fmt er_fmt_get(er_i32 f)
{
    er_fmt d;
    d.kind = 0; d.width = 0; d.ebits = 0; d.mbits = 0; d.pad = 0; d.bias = 0; d.special = 0; d.flags = 0;
    switch (f) {
#define ER_FMT_ROW_(ID, n, a, k, w, e, m, p, b, s, fl)                                           \
    case ER_FMT_##ID:                                                                            \
        d.kind = k; d.width = w; d.ebits = e; d.mbits = m; d.pad = p; d.bias = b; d.special = s; \
        d.flags = fl;                                                                            \
        break;
        ER_FORMAT_TABLE(ER_FMT_ROW_)
#undef ER_FMT_ROW_
    default:
        break;
    }
    return d;
}

/* ---- Quantities derived from a row (all integer, all from the columns above). ---- */

/* Width of a float format in bits (seed tileinterp float_width); integers too. */
ER_FN er_i32 er_fmt_width(er_fmt d) { return d.width; }

ER_FN er_i32 er_fmt_is_float(er_fmt d) { return d.kind == ER_KIND_FLOAT; }
ER_FN er_i32 er_fmt_signed(er_fmt d) { return (d.flags & ER_F_UNSIGNED) == 0u; }
ER_FN er_i32 er_fmt_has_inf(er_fmt d) { return d.kind == ER_KIND_FLOAT && d.special == ER_SPECIAL_IEEE; }
ER_FN er_i32 er_fmt_has_nan(er_fmt d) { return d.kind == ER_KIND_FLOAT && d.special != ER_SPECIAL_NONE; }
ER_FN er_i32 er_fmt_has_subnormals(er_fmt d) { return d.kind == ER_KIND_FLOAT && (d.flags & ER_F_NOSUB) == 0u; }
ER_FN er_i32 er_fmt_has_zero(er_fmt d) { return (d.flags & ER_F_NOSUB) == 0u; }
/* A negative zero exists: signed, and the -0 pattern is not the NaN (FNUZ). */
ER_FN er_i32 er_fmt_has_negzero(er_fmt d)
{
    return d.kind == ER_KIND_FLOAT && er_fmt_signed(d) && d.special != ER_SPECIAL_FNUZ && er_fmt_has_zero(d);
}

/* Number of bits of the packed encoding (exponent and fraction, no sign, no padding). */
ER_FN er_i32 er_fmt_magbits(er_fmt d) { return d.ebits + d.mbits; }

/* Packed magnitude of the largest finite value. */
ER_FN er_u64 er_fmt_maxmag(er_fmt d)
{
    er_u64 all = (ER_U64(1) << er_fmt_magbits(d)) - 1u;
    if (d.special == ER_SPECIAL_IEEE)
        return (((ER_U64(1) << d.ebits) - 1u) << d.mbits) - 1u; /* just below the infinity */
    if (d.special == ER_SPECIAL_FN)
        return all - 1u; /* just below the all-ones NaN */
    return all;          /* FNUZ and NONE: every magnitude is finite */
}

/* Exponent of the smallest normal binade (values 2^emin .. 2^(emin+1)). */
ER_FN er_i32 er_fmt_emin(er_fmt d) { return er_fmt_has_subnormals(d) ? 1 - d.bias : -d.bias; }

/* Exponent of the largest finite value's binade. */
ER_FN er_i32 er_fmt_emax(er_fmt d)
{
    /* A normal exponent field E holds the binade E - bias (field 0 too where there are no subnormals). */
    return (er_i32)(er_fmt_maxmag(d) >> d.mbits) - d.bias;
}

/* Bytes of one element in an array (fp6 and fp4: one per byte; tf32: four): the one storage-size
 * formula, for every backend and the public er_format_info. */
ER_FN er_i32 er_fmt_storage_bytes(er_fmt d) { return d.width <= 8 ? 1 : d.width <= 16 ? 2 : d.width <= 32 ? 4 : 8; }

/* Whether bits is a pattern of the format: nothing above its width, its low padding bits zero. */
ER_FN er_i32 er_fmt_is_pattern(er_fmt d, er_u64 bits)
{
    if (d.width < 64 && (bits >> d.width) != 0u) return 0;
    if (d.pad && (bits & ((ER_U64(1) << d.pad) - 1u)) != 0u) return 0;
    return 1;
}

/* Full bit pattern of the sign bit (0 for unsigned formats). */
ER_FN er_u64 er_fmt_signbit(er_fmt d)
{
    return er_fmt_signed(d) ? (ER_U64(1) << (d.width - 1)) : 0u;
}

#endif /* ER_FORMATS_H */
