/* er_types.h: the core's types and constants, and not one function (shared core).
 *
 * The public headers include this file and no other core header, so a user's translation unit gets
 * the formats' ids (ER_FMT_*), the roundings (ER_RND_*), options (ER_OPT_*), flags (ER_FLAG_*),
 * classes (ER_CLASS_*), er_val and er_res, and none of the core's inline functions.  The headers with
 * functions (er_qual.h and those that include it) include this one.  It defines neither ER_FN nor
 * anything else of er_qual.h: tests/core/test_public_headers.c checks that.
 */
#ifndef ER_TYPES_H
#define ER_TYPES_H

/* Fixed-width integer types: OpenCL C has them built in; C99 and CUDA take them from <stdint.h>. */
#if defined(__OPENCL_VERSION__)
typedef uchar er_u8;
typedef char er_i8;
typedef ushort er_u16;
typedef short er_i16;
typedef uint er_u32;
typedef int er_i32;
typedef ulong er_u64;
typedef long er_i64;
#else
#include <stdint.h>
typedef uint8_t er_u8;
typedef int8_t er_i8;
typedef uint16_t er_u16;
typedef int16_t er_i16;
typedef uint32_t er_u32;
typedef int32_t er_i32;
typedef uint64_t er_u64;
typedef int64_t er_i64;
#endif

/* Kinds of format. */
#define ER_KIND_FLOAT 0
#define ER_KIND_SINT 1
#define ER_KIND_UINT 2

/*
 * Encoding of special values of a float format ("special" column):
 *   IEEE  exponent field all ones: fraction zero is an infinity, nonzero a NaN (f64, f32, f16, e5m2 ...).
 *   FN    no infinity; the one NaN magnitude is all ones (exponent and fraction); every other pattern,
 *         exponent all ones included, is finite (f8E4M3FN: NaN 0x7F/0xFF; f8E8M0FNU, f8E5M3FNU: NaN 0xFF).
 *   FNUZ  no infinity, no negative zero: the pattern "sign set, everything else zero" is the only NaN
 *         (f8E4M3FNUZ, f8E5M2FNUZ: 0x80).
 *   NONE  every pattern is finite: no infinity, no NaN (f6E2M3FN, f6E3M2FN, f4E2M1FN).
 */
#define ER_SPECIAL_IEEE 0
#define ER_SPECIAL_FN 1
#define ER_SPECIAL_FNUZ 2
#define ER_SPECIAL_NONE 3

/* Flags column. */
#define ER_F_UNSIGNED 1u /* no sign bit (f8E8M0FNU, f8E5M3FNU, u8) */
#define ER_F_NOSUB 2u    /* no subnormals and no zero: exponent field 0 is a normal binade (f8E8M0FNU) */

/*
 * THE TABLE.  A new format is a new row here and nothing else.  The float rows come first (ids 0 ..
 * ER_FMT_F8E5M3FNU), the integers after them; a new float row goes after the last float row, so the
 * ids of the float formats before it (and the golden suite's choices made from them) stay the same.
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
    X(F8E5M3FNU, "f8E5M3FNU", "float8_e5m3fnu", ER_KIND_FLOAT, 8, 5, 3, 0, 15, ER_SPECIAL_FN,     \
      ER_F_UNSIGNED)                                                                              \
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

/* Rounding directions (the dialect's spellings; odd is for internal use, Boldo-Melquiond). */
#define ER_RND_NEAREST_EVEN 0
#define ER_RND_NEAREST_AWAY 1
#define ER_RND_ZERO 2
#define ER_RND_NEGATIVE_INF 3
#define ER_RND_POSITIVE_INF 4
#define ER_RND_ODD 5
#define ER_RND_COUNT 6

/* Options of a rounding or conversion. */
#define ER_OPT_SATURATE 1u /* overflow and infinities give the largest finite value of the sign */
#define ER_OPT_FTZ_IN 2u   /* subnormal inputs read as the zero of their sign */
#define ER_OPT_FTZ_OUT 4u  /* subnormal results become the zero of their sign */
#define ER_OPT_FTZ (ER_OPT_FTZ_IN | ER_OPT_FTZ_OUT)

/* Exception flags (IEEE 754's, as SoftFloat reports them). */
#define ER_FLAG_INEXACT 1u
#define ER_FLAG_UNDERFLOW 2u
#define ER_FLAG_OVERFLOW 4u
#define ER_FLAG_INVALID 8u

/* Classes of a decoded pattern. */
#define ER_CLASS_ZERO 0
#define ER_CLASS_SUBNORMAL 1
#define ER_CLASS_NORMAL 2
#define ER_CLASS_INF 3
#define ER_CLASS_NAN 4

/*
 * An exact value: (-1)^sign * sig * 2^exp for ZERO, SUBNORMAL and NORMAL (integers are NORMAL with
 * exp 0, or ZERO).  For a NaN, sig holds the payload (the fraction field) and exp its width in bits.
 */
typedef struct er_val {
    er_i32 cls;
    er_u32 sign;
    er_u64 sig;
    er_i32 exp;
} er_val;

/* A result pattern and the exception flags its computation raised. */
typedef struct er_res {
    er_u64 bits;
    er_u32 flags;
} er_res;

#endif /* ER_TYPES_H */
