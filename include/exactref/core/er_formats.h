/* er_formats.h: a format's row of the table (the table itself is in er_types.h) and the quantities
 * derived from it (shared core). */
#ifndef ER_FORMATS_H
#define ER_FORMATS_H

#include "er_qual.h"
#include "er_types.h" /* the table, the ids and er_fmt */

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
