/* formats.h: the library's version and status strings, the formats, roundings, scalar conversions and
 * array conversions. */
#ifndef EXACTREF_FORMATS_H
#define EXACTREF_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/config.h"
#include "exactref/core/er_types.h"
#include "exactref/export.h"
#include "exactref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A short English sentence for a status code (never NULL). */
ER_API const char *er_status_string(er_status s);

/* The library's version, "MAJOR.MINOR.PATCH". */
ER_API const char *er_version(void);

/* ---- Formats (the table in core/er_types.h; ids are ER_FMT_F64 ... ER_FMT_COUNT-1). ---- */
typedef struct er_format_info {
    const char *name;       /* canonical MLIR spelling, e.g. "f8E4M3FN" */
    const char *alias;      /* ml_dtypes spelling, e.g. "float8_e4m3fn" */
    int kind;               /* ER_KIND_FLOAT, ER_KIND_SINT or ER_KIND_UINT */
    int width;              /* bits of a pattern (tf32: 32) */
    int storage_bytes;      /* bytes of one element in an array: 1, 2, 4 or 8 */
    int exponent_bits;      /* floats only */
    int significand_bits;   /* stored fraction bits (precision is one more) */
    int padding_bits;       /* low bits always zero (tf32: 13) */
    int bias;
    int emin, emax;         /* binade of the least normal and of the largest finite value */
    int is_signed;
    int has_inf, has_nan, has_negative_zero, has_subnormals, has_zero;
    uint64_t max_finite_bits;    /* pattern of the largest finite value (integers: the maximum) */
    uint64_t min_subnormal_bits; /* pattern of the least positive value */
} er_format_info;

ER_API int er_format_count(void);
/* Look up a name, case-insensitively: the MLIR spelling or the ml_dtypes alias. */
ER_API er_status er_format_from_name(const char *name, int *fmt);
ER_API const char *er_format_name(int fmt);  /* NULL for an unknown id */
ER_API const char *er_format_alias(int fmt); /* NULL for an unknown id */
ER_API er_status er_format_get_info(int fmt, er_format_info *info);
/* Whether a name is a float format exactref models, and whether it is a float format that exists in
 * MLIR but is not modelled (f8E3M4, f8E4M3, f8E4M3B11FNUZ, f80, f128). */
ER_API int er_format_is_modelled(const char *name);
ER_API int er_format_is_unmodelled(const char *name);
ER_API int er_format_width(int fmt); /* float_width; 0 for an unknown id */

/* Rounding directions: nearest_even, nearest_away, zero, negative_inf, positive_inf, odd. */
ER_API er_status er_rounding_from_name(const char *name, int *dir);
ER_API const char *er_rounding_name(int dir);

/* ---- Scalars. ---- */
/* ER_OK when bits is a pattern of fmt: nothing above the width, tf32's padding zero. */
ER_API er_status er_check_pattern(int fmt, uint64_t bits);
/* Convert one pattern with one rounding; flags receives ER_FLAG_* (may be NULL). */
ER_API er_status er_convert_bits(int from, int to, uint64_t bits, int dir, unsigned opts, uint64_t *out,
                          unsigned *flags);
/* Decode one pattern into its class and exact value. */
ER_API er_status er_decode_bits(int fmt, uint64_t bits, er_val *val);
/* The exact value of a pattern as a C99 hexadecimal float ("-0x1.8p+3", "inf", "nan(0x1)"). */
ER_API er_status er_format_hex(int fmt, uint64_t bits, char *buf, size_t size);

/* Scalar helpers over binary64 (every float format's values are binary64 values). */
ER_API er_status er_round_double(int fmt, double x, int dir, double *out); /* x rounded into fmt */
ER_API er_status er_from_bits(int fmt, uint64_t bits, double *out);        /* NaN keeps its payload */
ER_API er_status er_bits_of(int fmt, double x, uint64_t *bits);            /* ER_EINEXACT if x is not a value */
ER_API double er_flush_subnormal(int fmt, double x);                      /* subnormals of fmt to signed 0 */

/* ---- Arrays (the front door routes them: er_convert_array to the CPU, er_convert_batch to a backend). ---- */
/* Convert n elements; element i of src holds a pattern of `from` in storage_bytes bytes (fp6 and fp4:
 * one per byte, low bits).  flags_or receives the OR of all flags (may be NULL).  A pattern that is
 * not one of its format's gives ER_EPATTERN and its index in *bad_index (may be NULL); dst is then
 * unspecified. */
ER_API er_status er_convert_array(int from, int to, const void *src, void *dst, size_t n, int dir,
                           unsigned opts, unsigned *flags_or, size_t *bad_index);
/* Convert a mixed batch on `backend` (ER_BACKEND_CPU, ER_BACKEND_OPENCL; ER_BACKEND_AUTO: the CPU) and
 * `device` (an OpenCL device index; -1: EXACTREF_OPENCL_DEVICE, else the first): job i converts the
 * pattern src[i] with spec[i] = from | to << 8 | dir << 16 | opts << 24, writing dst[i] and flags[i],
 * the same bits and flags on every backend (patterns are not validated: bits above the width are
 * ignored, as er_convert_bits does).  ER_EINVAL: a null array or a bad spec (msg names its index);
 * ER_EUNSUPPORTED: a backend without batch conversions (CUDA) or not built in; a device's errors as
 * they come (ER_ENODEVICE, ER_EDEVICE).  msg (may be NULL) receives a sentence on failure. */
ER_API er_status er_convert_batch(const uint32_t *spec, const uint64_t *src, uint64_t *dst, uint32_t *flags,
                                  size_t n, int backend, int device, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_FORMATS_H */
