/* interval_impl.h: helpers shared by the interval sources (outward steps, directed endpoint ops). */
#ifndef ER_INTERVAL_IMPL_H
#define ER_INTERVAL_IMPL_H

#include <math.h>

#include "exactref/interval.h"

/* The next double up and down: one outward step.  An operation correctly rounded to nearest is within
 * half an ulp of the true value, and the true value lies between the rounded value and its neighbour
 * on the true value's side, so one step outward encloses it (subnormals and binade edges included;
 * an overflow to inf steps back to the largest finite double, which is correct because a result that
 * rounds to inf exceeds it). */
static inline double _er_iv_up(double x) { return nextafter(x, INFINITY); }
static inline double _er_iv_down(double x) { return nextafter(x, -INFINITY); }

static inline int _er_iv_is_int(double x) { return isfinite(x) && floor(x) == x; }

static inline er_interval _er_iv_make(double lo, double hi, int integral, int exact)
{
    er_interval r;
    r.lo = lo;
    r.hi = hi;
    r.integral = integral ? 1 : 0;
    r.exact = exact ? 1 : 0;
    return r;
}

/* An integral interval's values are integers >= lo, hence >= ceil(lo) (and <= floor(hi)): moving the
 * endpoints there is sound and keeps them integers.  ceil and floor are exact on doubles. */
static inline er_interval _er_iv_tighten(er_interval t)
{
    if (t.integral && !er_interval_is_top(t)) {
        t.lo = ceil(t.lo);
        t.hi = floor(t.hi);
    }
    return t;
}

/* Whether an interval holds no value (lo > hi). */
static inline int _er_iv_is_empty(er_interval t) { return t.lo > t.hi; }

/* Largest finite value of a float format, as a double (every value of a format is a double). */
double _er_iv_fmt_max(int fmt);

#endif /* ER_INTERVAL_IMPL_H */
