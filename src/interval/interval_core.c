/* interval_core.c: the interval record, its constructors, the lattice operations and truthiness. */
#include <string.h>

#include "interval_impl.h"
#include "exactref/core/er_round.h"

static int cmp_double(double a, double b) { return a < b ? -1 : (a > b ? 1 : 0); }

int er_interval_compare(er_interval a, er_interval b)
{
    int c = cmp_double(a.lo, b.lo);
    if (c) return c;
    if ((c = cmp_double(a.hi, b.hi)) != 0) return c;
    if ((c = (a.integral != 0) - (b.integral != 0)) != 0) return c;
    return (a.exact != 0) - (b.exact != 0);
}

int er_interval_equal(er_interval a, er_interval b) { return er_interval_compare(a, b) == 0; }

er_interval er_interval_top(void) { return _er_iv_make(-INFINITY, INFINITY, 0, 0); }

int er_interval_is_top(er_interval t) { return t.lo == -INFINITY && t.hi == INFINITY; }

double er_interval_exact_int_cutoff(void) { return ER_INTERVAL_EXACT_INT_CUTOFF; }

int er_interval_endpoint_exact(double v) { return isfinite(v) && fabs(v) < ER_INTERVAL_EXACT_INT_CUTOFF; }

er_interval er_interval_point(double v)
{
    if (isnan(v)) return er_interval_top();
    if (isinf(v)) return _er_iv_make(v, v, 0, 0);
    return _er_iv_make(v, v, _er_iv_is_int(v), er_interval_endpoint_exact(v));
}

/* An int64 rounded to a double in direction dir by the core's integer-only rounding. */
static double int_to_double(int64_t i, int dir, int *inexact)
{
    uint64_t u, bits;
    double d;
    memcpy(&u, &i, sizeof u);
    er_res r = er_convert(ER_FMT_I64, ER_FMT_F64, u, dir, 0u);
    bits = r.bits;
    memcpy(&d, &bits, sizeof d);
    if (inexact) *inexact = (r.flags & ER_FLAG_INEXACT) != 0;
    return d;
}

er_interval er_interval_of_int(int64_t i) { return er_interval_of_int_range(i, i); }

er_interval er_interval_of_int_range(int64_t lo, int64_t hi)
{
    int xl, xh;
    double l, h;
    if (lo > hi) return _er_iv_make(INFINITY, -INFINITY, 1, 0);
    /* Below 2^53 the conversions are exact; above, rounding down and up keeps every integer inside. */
    l = int_to_double(lo, ER_RND_NEGATIVE_INF, &xl);
    h = int_to_double(hi, ER_RND_POSITIVE_INF, &xh);
    return _er_iv_make(l, h, 1, !xl && !xh && er_interval_endpoint_exact(l) && er_interval_endpoint_exact(h));
}

er_interval er_interval_round_out(er_interval t)
{
    /* Two steps where one suffices after a single rounding to nearest (the seed's safety margin). */
    t.lo = _er_iv_down(_er_iv_down(t.lo));
    t.hi = _er_iv_up(_er_iv_up(t.hi));
    t.exact = 0;
    return t;
}

er_interval er_interval_join(er_interval a, er_interval b)
{
    if (_er_iv_is_empty(a)) return b;
    if (_er_iv_is_empty(b)) return a;
    return _er_iv_make(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, a.integral && b.integral,
                       a.exact && b.exact);
}

er_interval er_interval_inter(er_interval a, er_interval b)
{
    /* Both facts hold at once: the value is in both ranges, and integral if either says so.  Each
     * endpoint is selected, not computed: it is exact when the interval it comes from is. */
    int lo_exact = a.lo > b.lo ? a.exact : (b.lo > a.lo ? b.exact : (a.exact || b.exact));
    int hi_exact = a.hi < b.hi ? a.exact : (b.hi < a.hi ? b.exact : (a.exact || b.exact));
    er_interval r = _er_iv_make(a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi,
                                (a.integral && !er_interval_is_top(a)) || (b.integral && !er_interval_is_top(b)),
                                lo_exact && hi_exact);
    r = _er_iv_tighten(r);
    r.exact = r.exact && er_interval_endpoint_exact(r.lo) && er_interval_endpoint_exact(r.hi);
    return r;
}

int er_interval_is_within(er_interval outer, er_interval inner)
{
    if (_er_iv_is_empty(inner) || er_interval_is_top(outer)) return 1;
    if (er_interval_is_top(inner)) return 0; /* inner admits NaN, outer does not */
    if (inner.lo < outer.lo || inner.hi > outer.hi) return 0;
    if (outer.integral && !inner.integral && !(inner.lo == inner.hi && !isnan(inner.lo) &&
                                                (_er_iv_is_int(inner.lo) || isinf(inner.lo))))
        return 0;
    return 1;
}

int er_interval_value_fits(er_interval t, double v)
{
    if (er_interval_is_top(t)) return 1;
    if (isnan(v)) return 0;
    if (v < t.lo || v > t.hi) return 0;
    if (t.integral && isfinite(v) && floor(v) != v) return 0;
    return 1;
}

int er_interval_is_singleton(er_interval t) { return t.exact && t.lo == t.hi; }

int er_interval_definitely_false(er_interval t)
{
    return !er_interval_is_top(t) && t.lo == 0.0 && t.hi == 0.0;
}

int er_interval_definitely_true(er_interval t)
{
    return !er_interval_is_top(t) && (t.lo > 0.0 || t.hi < 0.0);
}

er_interval er_interval_bool_range(void) { return _er_iv_make(0.0, 1.0, 1, 1); }
er_interval er_interval_true(void) { return _er_iv_make(1.0, 1.0, 1, 1); }
er_interval er_interval_false(void) { return _er_iv_make(0.0, 0.0, 1, 1); }

int er_interval_cmplt_decides(er_interval a, er_interval b)
{
    /* a.hi < b.lo: every a is below every b.  Top has infinite endpoints, so it never passes, and the
     * explicit test keeps that true for any flags. */
    if (!er_interval_is_top(a) && !er_interval_is_top(b) && a.hi < b.lo) return ER_INTERVAL_TRUE;
    /* a.lo >= b.hi: a < b is false for every pair, and false for NaN too. */
    if (a.lo >= b.hi) return ER_INTERVAL_FALSE;
    return ER_INTERVAL_UNDECIDED;
}

int er_interval_cmpeq_decides(er_interval a, er_interval b)
{
    if (er_interval_is_singleton(a) && er_interval_is_singleton(b) && a.lo == b.lo) return ER_INTERVAL_TRUE;
    if (a.hi < b.lo || b.hi < a.lo) return ER_INTERVAL_FALSE;
    /* An integral interval never equals a finite non-integer (outwardness pins a singleton's value). */
    if (a.integral && !er_interval_is_top(a) && b.lo == b.hi && isfinite(b.lo) && !_er_iv_is_int(b.lo))
        return ER_INTERVAL_FALSE;
    if (b.integral && !er_interval_is_top(b) && a.lo == a.hi && isfinite(a.lo) && !_er_iv_is_int(a.lo))
        return ER_INTERVAL_FALSE;
    return ER_INTERVAL_UNDECIDED;
}
