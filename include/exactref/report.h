/* report.h: the scoring of a check (outside count, worst element, histogram, vacuity), for every front end. */
#ifndef EXACTREF_REPORT_H
#define EXACTREF_REPORT_H

#include <stddef.h>
#include "exactref/export.h"
#include <stdint.h>

#include "exactref/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The histogram of |output - rounded| / tolerance over the elements of a check:
 *   ER_REPORT_EXACT     the output is rounded's value: the same pattern, a zero of either sign for a
 *                       zero (the difference, and so the ratio, is 0), or a NaN for a NaN
 *   ER_REPORT_BIN_64 .. ER_REPORT_BIN_1   a finite output within (0, 1/64], (1/64, 1/16], (1/16, 1/4],
 *                       (1/4, 1/2], (1/2, 1] of its tolerance
 *   ER_REPORT_SPECIAL   an infinity or NaN, or a finite output where rounded is not finite, that the
 *                       standard allows (no ratio to a tolerance is meaningful there)
 *   ER_REPORT_OUTSIDE   not covered: no correct implementation produces it
 * Elements whose allowed range is a single value (tolerance 0; +0 and -0 are one value) are exact or outside.
 */
#define ER_REPORT_EXACT 0
#define ER_REPORT_BIN_64 1
#define ER_REPORT_BIN_16 2
#define ER_REPORT_BIN_4 3
#define ER_REPORT_BIN_2 4
#define ER_REPORT_BIN_1 5
#define ER_REPORT_SPECIAL 6
#define ER_REPORT_OUTSIDE 7
#define ER_REPORT_BINS 8

/* The label of a histogram bin ("0 (exact)", "(0, 1/64]", ..., "outside"); NULL out of range. */
ER_API const char *er_check_report_bin_name(int bin);

/* The finer histogram for pictures: log2 of the ratio, bin k holds ratios in (2^-(k+1), 2^-k] for k <
 * ER_REPORT_LOG_BINS - 1, and the last bin everything smaller (but not zero). */
#define ER_REPORT_LOG_BINS 40
/* Where the outside elements are: counts over a grid of R x C cells of the (row, column) plane, summed
 * over the batch, with R = min(m, ER_REPORT_MAP) and C = min(n, ER_REPORT_MAP): row i is in cell row
 * i*R/m, column j in cell column j*C/n (the other cells stay 0). */
#define ER_REPORT_MAP 32

/* Why the worst element is where it is. */
#define ER_REPORT_WHY_NONE 0          /* covered */
#define ER_REPORT_WHY_ULPS 1          /* a finite output, ulps_beyond output ulps outside the range */
#define ER_REPORT_WHY_SPECIAL 2       /* an infinity or NaN that no correct implementation produces here */
#define ER_REPORT_WHY_NOT_FINITE 3    /* a finite output where no finite output is allowed */
#define ER_REPORT_WHY_INT 4           /* an integer output (mmai) that is not the exact one */

typedef struct er_check_report {
    int64_t elements, outside;
    int64_t hist[ER_REPORT_BINS];
    int64_t log_hist[ER_REPORT_LOG_BINS];
    int64_t map[ER_REPORT_MAP][ER_REPORT_MAP];
    int ndim;             /* the output's: 2, or 3 for a batch */
    int64_t shape[3];
    int format;           /* the output format */
    /* the worst element: the first outside element with the most ulps beyond (specials first), else
     * the covered one that uses most of its tolerance; worst = -1 when there are no elements */
    int64_t worst;        /* row-major flat index */
    int64_t worst_index[3];
    int worst_covered;
    int worst_why;        /* ER_REPORT_WHY_* */
    int64_t ulps_beyond;  /* for ER_REPORT_WHY_ULPS and _INT (|output - exact| for integers) */
    uint64_t output, rounded, low, high;   /* patterns of the output format */
    double output_value, rounded_value, low_value, high_value;
    int has_range;        /* low and high are valid */
    int single_value;     /* has_range and low == high: one value allowed */
    double tolerance;     /* seed 002's tolerance() (inf: no finite bound; NaN: rounded is not finite) */
    double ratio;         /* |output - rounded| / tolerance for a covered finite worst element, else 0 */
    int may_pinf, may_ninf, may_nan;
    /* vacuity */
    int operand_vacuous;  /* bit 0: A, bit 1: B is all zero or subnormal (0 when they were not given) */
    int zero_accepted;    /* every element's range contains zero: an all-zero output would pass */
    /* a hint: when elements are outside, a narrower format than the output's in which every output
     * value is exactly representable (the output was likely saved widened), else -1 */
    int narrower_format;
    /* the outside elements' flat indices, in order, up to the caller's cap */
    int64_t outside_listed;
} er_check_report;

/*
 * Score output against the result r under options o: covers(), then the report above.  a and b are the
 * operands (for the vacuity warning; NULL to skip it).  outside_index (may be NULL) receives the first
 * min(outside, outside_cap) outside elements' flat indices.  The report is plain data: nothing to free.
 */
ER_API er_status er_check_report_compute(er_result *r, const er_tol_opts *o, const er_tensor *output, const er_tensor *a,
                                  const er_tensor *b, int64_t *outside_index, int64_t outside_cap,
                                  er_check_report *rep, char *msg, size_t msg_size);

/*
 * covers() against given bounds (what er_result_covers runs after validating the shapes): covered[e] =
 * 1 where output element e (row-major flat index) is an output the bounds allow, 0 elsewhere; *outside
 * (may be NULL) the number of zeros.  exact_int: the output is an integer product's (mmai), covered only
 * where its low 32 bits are low[e]'s.  A finite-class float pattern that is not one of the format's
 * (bits above its width, tf32's padding bits set) is never covered; NaN and infinity patterns are
 * judged by their class (as er_decode reads them).  Patterns are compared as order-mapped integers,
 * not decoded; large outputs are split over threads by rows (the same bits as one thread), in AVX2
 * lanes where the processor has them (the same decisions as the portable loops).  er_result_covers and
 * er_check_report_compute go further: the first covers of a result's bounds makes a compact copy of
 * them (each range as two keys in the output's own width, 16 bits for formats of up to 2 bytes and 32
 * for 4, the three may-flags in one byte, and the count of ranges that hold zero), kept and freed with
 * the bounds, which later covers and scorings read instead of the 64-bit patterns (not for f64 and
 * integer outputs).  Bounds given here directly are read as they are.
 */
ER_API er_status er_bounds_covers(const er_bounds *bd, const er_tensor *output, int exact_int, unsigned char *covered,
                           int64_t *outside, char *msg, size_t msg_size);

/*
 * The scoring of er_check_report_compute from its parts: bounds bd, the rounded answer R and covered
 * (from er_bounds_covers, with `outside` zeros), both of output's shape and format.  a and b as there.
 * f32, bf16 and f16 outputs with unit strides are scored in one pass, in AVX-512 or AVX2 lanes where
 * the processor has them (EXACTREF_NO_AVX512 set: AVX2 at most): each ratio |output - rounded| /
 * tolerance is binned from the integer exponents and fractions of the binary64 difference and tolerance
 * (the bins of the correctly rounded quotient, exactly), and divided only where it may be the worst
 * element or is extreme (subnormal, huge); er_check_report_compute runs covers in the same pass.
 * Ranges are read only for outside elements and the zero-vacuity count.
 */
ER_API er_status er_check_report_score(const er_bounds *bd, const er_tensor *output, const er_tensor *R,
                                const unsigned char *covered, int64_t outside, const er_tensor *a,
                                const er_tensor *b, int64_t *outside_index, int64_t outside_cap, er_check_report *rep,
                                char *msg, size_t msg_size);

/*
 * Reports of blocks merged into the report of the whole output, so that a large output can be scored
 * block by block (the bounds of one block at a time).  er_check_report_merge_init: an empty report of
 * an output of this shape (ndim 2 or 3) and format.  er_check_report_merge adds part, the report
 * (er_check_report_score or _compute) of the block of whole rows that follows the elements into holds in
 * row-major order (rows of a 2-D output; rows of one matrix, or whole matrices, of a 3-D one): its flat
 * indices are offset by into->elements.  Counts and histograms add, the worst element is chosen by the
 * scoring's rule (the earlier one wins a tie), the map's cells are those of the whole output (from
 * part_covered, the block's er_bounds_covers array, needed when part has outside elements), part_index
 * (part->outside_listed entries; NULL: listed from part_covered) is appended to into_index up to
 * into_cap, zero_accepted and operand_vacuous hold when they hold in every block.  Merged over every block in order, the report
 * equals the one-shot report, narrower_format excepted: the merge sets it to -1, and
 * er_check_report_narrower computes it from the whole output and rounded answer.
 */
ER_API void er_check_report_merge_init(er_check_report *rep, int ndim, const int64_t *shape, int format);
ER_API er_status er_check_report_merge(er_check_report *into, const er_check_report *part,
                                       const unsigned char *part_covered, const int64_t *part_index,
                                       int64_t *into_index, int64_t into_cap, char *msg, size_t msg_size);
/*
 * Tiles of a band of rows: band is a 2-D report (er_check_report_merge_init, shape m x n) and tile the
 * report of its columns j0 .. j0+nb-1 (m x nb, tile_covered its covered array); tiles in any order.  As
 * er_check_report_merge, with the worst element's tie going to the first in the band's row-major order;
 * tile_covered is copied into band_covered (m x n), and the band's outside list is left empty: pass
 * band_covered and a NULL part_index to er_check_report_merge, which then lists from the covered array.
 */
ER_API er_status er_check_report_merge_columns(er_check_report *band, const er_check_report *tile, int64_t j0,
                                               const unsigned char *tile_covered, unsigned char *band_covered,
                                               char *msg, size_t msg_size);
/* narrower_format of er_check_report_score for a (merged) report of output against its rounded answer
 * R, the operands' formats given (-1: none). */
ER_API er_status er_check_report_narrower(er_check_report *rep, const er_tensor *output, const er_tensor *R,
                                          int a_format, int b_format, char *msg, size_t msg_size);

/* A flat index as (b, i, j) of the report's shape (b = 0 for 2-D). */
ER_API void er_check_report_index(const er_check_report *rep, int64_t flat, int64_t idx[3]);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_REPORT_H */
