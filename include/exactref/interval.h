/* interval.h: the interval lattice: whole-tensor bounds summaries {lo, hi, integral, exact}. */
#ifndef EXACTREF_INTERVAL_H
#define EXACTREF_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/formats.h"
#include "exactref/mma.h"
#include "exactref/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An interval summarises the possible machine values of one scalar (or of every element of a tensor).
 * docs/interval.md states every rule with its soundness argument.  The invariants:
 *
 *   Outwardness   lo <= v <= hi for every possible value v, compared as real numbers (extended with
 *                 -inf and +inf).  Endpoints are exact values or rounded outward; no rule depends on
 *                 the FPU rounding mode.
 *   NaN-freedom   a non-top interval asserts the value is not NaN.  Top is any interval with
 *                 lo = -inf and hi = +inf, whatever its flags: it admits everything, NaN included.
 *                 lo and hi are never NaN.
 *   integral      every possible finite value is a mathematical integer.
 *   exact         lo and hi are exactly the bounds of the described set (no rounding entered them),
 *                 and both are finite with |lo|, |hi| < 2^53 (strict: 2^53 + 1 rounds to 2^53).
 *
 * An interval with lo > hi is empty (only er_interval_inter on disjoint facts and
 * er_interval_of_int_range with lo > hi produce one); every claim about it is vacuously true.
 * Precisions are exactref format ids (ER_FMT_F64 ... ER_FMT_I64); an unknown id is an opaque
 * precision and gives top.  Every function here is pure: no global state, no I/O, no allocation.
 */
typedef struct er_interval {
    double lo;
    double hi;
    int integral; /* 0 or 1 */
    int exact;    /* 0 or 1 */
} er_interval;

/* The strict exact-integer cutoff 2^53: integers of smaller magnitude convert to binary64 exactly. */
#define ER_INTERVAL_EXACT_INT_CUTOFF 9007199254740992.0

/* Answers of the comparison folds (true, false, or not decided by the intervals). */
#define ER_INTERVAL_UNDECIDED (-1)
#define ER_INTERVAL_FALSE 0
#define ER_INTERVAL_TRUE 1

/* Room enough for any er_interval_to_sexp output, terminator included. */
#define ER_INTERVAL_SEXP_MAX 128

/* ---- The record. ---- */
/* Lexicographic on lo, hi, integral, exact (false < true; -0 and +0 compare equal): -1, 0 or 1. */
ER_API int er_interval_compare(er_interval a, er_interval b);
ER_API int er_interval_equal(er_interval a, er_interval b);
/* {-inf, +inf, integral 0, exact 0}: anything, NaN included. */
ER_API er_interval er_interval_top(void);
ER_API int er_interval_is_top(er_interval t);
/* ER_INTERVAL_EXACT_INT_CUTOFF as a value. */
ER_API double er_interval_exact_int_cutoff(void);
/* Finite and |v| < 2^53. */
ER_API int er_interval_endpoint_exact(double v);
/* The singleton of a float: NaN gives top; infinities give non-exact, non-integral singletons. */
ER_API er_interval er_interval_point(double v);
/* The singleton of an integer: exact below 2^53; above, the two doubles around it (non-exact). */
ER_API er_interval er_interval_of_int(int64_t i);
/* The integers lo..hi inclusive (requires lo <= hi; otherwise the empty interval {+inf, -inf}). */
ER_API er_interval er_interval_of_int_range(int64_t lo, int64_t hi);
/* Both endpoints two ulps outward (infinities stay), exact cleared, integral kept. */
ER_API er_interval er_interval_round_out(er_interval t);

/* ---- Lattice. ---- */
ER_API er_interval er_interval_join(er_interval a, er_interval b);  /* convex hull */
ER_API er_interval er_interval_inter(er_interval a, er_interval b); /* meet: endpoint selection only */
/* Every value admitted by inner is admitted by outer (conservative: false rejections only). */
ER_API int er_interval_is_within(er_interval outer, er_interval inner);
/* Whether the single value v (NaN included) is admitted. */
ER_API int er_interval_value_fits(er_interval t, double v);
/* exact and lo == hi. */
ER_API int er_interval_is_singleton(er_interval t);

/* ---- Truthiness (C's != 0); top is never decided. ---- */
ER_API int er_interval_definitely_false(er_interval t);
ER_API int er_interval_definitely_true(er_interval t);

/* ---- Machine ranges of precisions. ---- */
/* Every value of an integer format (i64: [-2^63, 2^63], non-exact); top for a float format with NaN;
 * [-max, max] for the NaN-free formats f6E2M3FN, f6E3M2FN, f4E2M1FN; top for an unknown id. */
ER_API er_interval er_interval_dtype_range(int fmt);
/* The integers of `width` bits (1..64), signed or not, for integer precisions exactref has no format
 * id for (u16, u32, u64): u64 is [0, 2^64], non-exact.  Top for a width outside 1..64. */
ER_API er_interval er_interval_int_range(int width, int is_signed);
/* 1 and *limit set when fmt is a float format representing every integer of magnitude
 * <= *limit (f64 2^53, f32 2^24, tf32 2048, f16 2048, bf16 256, e4m3 16, e5m2 8, f6E2M3FN 7,
 * f6E3M2FN 8, f4E2M1FN 4); 0 for integer formats, the unsigned f8E8M0FNU and f8E5M3FNU (no negative
 * integers) and unknown ids. */
ER_API int er_interval_float_exact_int_limit(int fmt, double *limit);
/* The interval valid for the machine value of an expression computed at (or converted into) fmt,
 * given the real-arithmetic interval t.  Integer formats: an in-range integral interval passes
 * through, anything else is the dtype range (wrap, clamp, NaN to 0, and the "crosses zero" rule).
 * Float formats: an integral interval within the exact-integer limit passes through; anything else is
 * the dtype range (top where the format has NaN). */
ER_API er_interval er_interval_at_prec(int fmt, er_interval t);
/* exactref addition: the tight enclosure of converting any value of t into fmt with er_convert, in any
 * direction, saturating or not, flushing subnormal results or not: [RD(lo), RU(hi)] in fmt, top where
 * a NaN can result.  Float-to-integer follows exactref's clamp (NaN to 0), integer wrap falls back to
 * the dtype range.  Subnormal inputs flushed before conversion (ER_OPT_FTZ_IN) are not modelled. */
ER_API er_interval er_interval_round_into(int fmt, er_interval t);

/* ---- Endpoint arithmetic: real-arithmetic results over machine-valid operands; apply
 * er_interval_at_prec for the precision the operation computes in.  Rules needing finite endpoints
 * give top otherwise (so top in, top out). ---- */
/* Whether all n values are finite (not inf, not NaN). */
ER_API int er_interval_all_finite(const double *v, size_t n);
/* The result of one arithmetic operation: lo and hi are the round-to-nearest results of one +, - or * on endpoints of a and
 * b.  Integral, exact operands with |lo|, |hi| < 2^53 give an exact result; anything else is rounded
 * out (two ulps).  A NaN endpoint or a top operand gives top. */
ER_API er_interval er_interval_arith_result(er_interval a, er_interval b, double lo, double hi);
ER_API er_interval er_interval_add(er_interval a, er_interval b);
ER_API er_interval er_interval_sub(er_interval a, er_interval b);
ER_API er_interval er_interval_mul(er_interval a, er_interval b);
/* Top when the divisor contains 0; never exact, never integral. */
ER_API er_interval er_interval_div(er_interval a, er_interval b);
/* The remainder: a non-negative integral finite a and an exact positive integral singleton c give a
 * subset of [0, min(hi, c-1)]; anything else is top (C's remainder takes the dividend's sign). */
ER_API er_interval er_interval_mod(er_interval a, er_interval c);
ER_API er_interval er_interval_max(er_interval a, er_interval b); /* the larger; top if either is top */
ER_API er_interval er_interval_min(er_interval a, er_interval b); /* the smaller; top if either is top */
/* fmax(0, x): a top argument still gives [0, +inf] (fmax(0, NaN) = 0). */
ER_API er_interval er_interval_relu(er_interval t);
ER_API er_interval er_interval_neg(er_interval t);
ER_API er_interval er_interval_trunc(er_interval t);   /* toward zero; integral */
ER_API er_interval er_interval_satur01(er_interval t); /* clamp to [0, 1]; top stays top */
ER_API er_interval er_interval_exp_like(er_interval t); /* exp, exp2: [0, +inf]; top stays top */
/* sin, cos, tanh: [-1, 1]; top stays top, and so does an infinite endpoint (sin(inf) is NaN). */
ER_API er_interval er_interval_abs_le_1(er_interval t);
/* The square root: requires lo >= 0 (else top); [RD(sqrt lo), RU(sqrt hi)]. */
ER_API er_interval er_interval_sqrt(er_interval t);
ER_API er_interval er_interval_bool_range(void); /* [0, 1], integral, exact: comparisons, and, or, not */
ER_API er_interval er_interval_true(void);       /* true: [1, 1] */
ER_API er_interval er_interval_false(void);      /* false: [0, 0] */

/* ---- Comparison folding: ER_INTERVAL_TRUE, ER_INTERVAL_FALSE or ER_INTERVAL_UNDECIDED.  Never
 * TRUE when an operand is top (may be NaN); FALSE agrees with NaN comparisons. ---- */
ER_API int er_interval_cmplt_decides(er_interval a, er_interval b); /* a < b */
ER_API int er_interval_cmpeq_decides(er_interval a, er_interval b); /* a == b */

/* ---- Text form: the s-expression "((lo 0) (hi 255) (integral true) (exact true))".
 * Endpoints print as the shortest decimal that reads back to the same double ("inf", "-inf" for
 * infinities); parsing reads each endpoint as the double strtod gives (decimal or hexadecimal; the
 * printed form reads back bit for bit), fields in any order, each exactly once.  NaN is refused. ---- */
ER_API er_status er_interval_to_sexp(er_interval t, char *buf, size_t size);
ER_API er_status er_interval_of_sexp(const char *text, er_interval *out);

/* The bounds summary of a whole tensor (2-D or 3-D, any format and strides): the join of its
 * elements' point intervals; top if an element is NaN; empty for an empty tensor. */
ER_API er_status er_interval_of_tensor(const er_tensor *t, er_interval *out);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_INTERVAL_H */
