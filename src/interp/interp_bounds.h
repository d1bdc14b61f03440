/* interp_bounds.h: bounds mode's numerics (interp_bounds.c), shared with the executor's bounds hooks. */
#ifndef ER_INTERP_BOUNDS_H
#define ER_INTERP_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/result.h"
#include "interp_impl.h"

/* The options of one bounds-mode launch, resolved. */
typedef struct it_bopts {
    er_tol_opts tol;      /* mmaf, mmaf_scaled: the chosen standard */
    er_tol_opts tol_fast; /* mmaf with fast_acc: hopper-fp8 */
    double ulps[ER_INTERP_AX_COUNT];
} it_bopts;

/* A shadow flag: the element may be NaN (infinities are the endpoints themselves). */
#define IT_BF_NAN 1u

/* One operand's lanes: enclosures (lo, hi, fl) when lo is not NULL, else the exact values of the patterns
 * pt of format fmt; n == 1 broadcasts. */
typedef struct it_sv {
    const double *lo, *hi;
    const uint8_t *fl;
    const uint64_t *pt;
    int64_t n;
    int fmt;
} it_sv;

/* The enclosure of one lane (a point: its value; NaN: top with the NaN flag). */
void it_bnd_lane(const it_sv *s, int64_t i, double *lo, double *hi, uint8_t *fl);
/* The exact enclosure of one pattern. */
void it_bnd_point(int fmt, uint64_t bits, double *lo, double *hi, uint8_t *fl);

/*
 * An elementwise float op (arithmetic, math, ftof) over n lanes: every value a correct device can give
 * (docs/interp.md, "Bounds mode"), into lo/hi/fl of the result's format rfmt.  c may be NULL (fma's
 * addend otherwise), b too.
 */
void it_bnd_ew(const it_bopts *o, const it_op *op, int rfmt, int64_t n, const it_sv *a, const it_sv *b, const it_sv *c,
               double *lo, double *hi, uint8_t *fl);

/* cmpf on lane i: 1 or 0 when every pair of values the enclosures admit gives that answer, -1 when not. */
int it_bnd_cmpf(const it_op *op, const it_sv *a, const it_sv *b, int64_t i);

/*
 * reduce / scan over a one-op region (addf, maxf, minf: code) in any order: lanes k = 0 .. n-1 of one
 * output lane are at in[off + k * step]; identity is the region's identity pattern; ftz the op's
 * flush_to_zero.  scan: out[k] for every prefix (reverse: suffix), else out[0].
 */
void it_bnd_fold(int code, int fmt, int ftz, int nan_prop, uint64_t identity, const it_sv *in, int64_t off, int64_t step,
                 int64_t n, int scan, int reverse, double *lo, double *hi, uint8_t *fl, int64_t ostep);

/* One more term [vl, vh] (magnitude va) of a sum: the sums of lows, highs and magnitudes, rounded outward. */
void it_bnd_acc(double *sl, double *sh, double *sa, double vl, double vh, double va);

/* A sum in any order (a float atomic add's address): m additions, the sums of the terms' lows and highs
 * (rounded outward), A the sum of their magnitudes, inf / nanf: a term may be infinite / NaN; ftz: the
 * additions may flush subnormals. */
void it_bnd_anysum(int fmt, int ftz, int m, double slo, double shi, double A, int inf, uint8_t nanf, double *lo, double *hi, uint8_t *fl);

/* The exact products of [al, ah] and [bl, bh] (binary64, rounded outward; an, bn: may be NaN): a term of a sum. */
void it_bnd_prod(double al, double ah, uint8_t an, double bl, double bh, uint8_t bn, double *lo, double *hi, uint8_t *fl);

/* fpowi on one lane: every value of x^n (one rounding into fmt) for x in [al, ah] (an: may be NaN). */
void it_bnd_fpowi(int fmt, double al, double ah, uint8_t an, int64_t n, double *lo, double *hi, uint8_t *fl);

/* The slack of a lane for results as inputs: max(point - lo, hi - point) rounded up; inf where the
 * enclosure admits an infinity or NaN. */
double it_bnd_slack(const it_sv *s, int64_t i);

/*
 * mmaf / mmaf_scaled through the front door's bounds: args hold the interpreter's operands (the point
 * run); slack[0..2] (may be NULL: exact) those of A, B, C.  Per element of D: lo/hi/fl.
 * ER_EUNSUPPORTED (msg says why) for block-scaled products on operands that are not exact.
 */
er_status it_bnd_mma(const it_bopts *o, int fast_acc, const er_mma_args *args, double *slack[3], double *lo, double *hi,
                     uint8_t *fl, char *msg, size_t msg_size);

/* The output of a bounds-mode run: built by the executor (interp_exec.c's hooks). */
typedef struct it_bbuf {
    int format, is_float;
    int64_t count;
    int eb;
    double *lo, *hi;
    uint8_t *fl;      /* IT_BF_NAN */
    uint8_t *point;   /* the interpreter's run: a copy of the buffer's bytes after the launch */
    size_t nbytes;
    er_bounds *bd;    /* er_interp_bounds_as_bounds, built once */
    uint8_t *flags;   /* ER_INTERP_MAY_* (public), built once */
} it_bbuf;

struct er_interp_bounds {
    size_t nbuf;
    it_bbuf *buf;
};

/* Resolve the public options (msg names a bad standard). */
er_status it_bnd_opts(const er_interp_bounds_opts *o, it_bopts *out, char *msg, size_t msg_size);

/* The pre-check in either mode (bounds: rounding<approx>/<full> and fast_acc accepted). */
int it_first_unsupported(const er_interp_module *m, const char *kernel, int bounds, char *msg, size_t msg_size);

/* The executor's bounds-mode launch (interp_exec.c): buffers get their shadows and *out is filled. */
er_status it_run_bounds(const er_interp_module *m, const char *kernel, er_interp_launch *l, const it_bopts *o,
                        er_interp_bounds *out, char *msg, size_t msg_size);

#endif /* ER_INTERP_BOUNDS_H */
