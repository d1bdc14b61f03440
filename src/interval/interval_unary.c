/* interval_unary.c: max, min, relu, neg, trunc, satur01 and the codomain bounds exp, sin/cos, sqrt. */
#include "interval_impl.h"

er_interval er_interval_max(er_interval a, er_interval b)
{
    /* C's fmax and an interpreter disagree on NaN: a possibly-NaN operand gives top. */
    if (er_interval_is_top(a) || er_interval_is_top(b)) return er_interval_top();
    return _er_iv_make(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, a.integral && b.integral,
                       a.exact && b.exact);
}

er_interval er_interval_min(er_interval a, er_interval b)
{
    if (er_interval_is_top(a) || er_interval_is_top(b)) return er_interval_top();
    return _er_iv_make(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, a.integral && b.integral,
                       a.exact && b.exact);
}

er_interval er_interval_relu(er_interval t)
{
    /* fmax(0, NaN) = 0 and fmax(0, x) >= 0: even top has the lower bound 0. */
    if (er_interval_is_top(t)) return _er_iv_make(0.0, INFINITY, 0, 0);
    return _er_iv_make(t.lo > 0.0 ? t.lo : 0.0, t.hi > 0.0 ? t.hi : 0.0, t.integral, t.exact);
}

er_interval er_interval_neg(er_interval t) { return _er_iv_make(-t.hi, -t.lo, t.integral, t.exact); }

er_interval er_interval_trunc(er_interval t)
{
    if (er_interval_is_top(t)) return er_interval_top();
    /* trunc is monotone and exact on doubles; its values are integers. */
    return _er_iv_make(trunc(t.lo), trunc(t.hi), 1, t.exact);
}

static double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

er_interval er_interval_satur01(er_interval t)
{
    /* The interpreter keeps NaN where fmax/fmin would not: top admits no bound valid on both. */
    if (er_interval_is_top(t)) return er_interval_top();
    return _er_iv_make(clamp01(t.lo), clamp01(t.hi), t.integral, t.exact);
}

er_interval er_interval_exp_like(er_interval t)
{
    if (er_interval_is_top(t)) return er_interval_top();
    return _er_iv_make(0.0, INFINITY, 0, 0);
}

er_interval er_interval_abs_le_1(er_interval t)
{
    /* sin(+-inf) and cos(+-inf) are NaN: an infinite endpoint may produce one. */
    if (!isfinite(t.lo) || !isfinite(t.hi)) return er_interval_top();
    return _er_iv_make(-1.0, 1.0, 0, 0);
}

/* Below this magnitude s*s - x may not be a double; 2^-900 keeps a wide margin (see mul). */
#define ER_IV_SQRT_SAFE 0x1p-900

/* sqrt(x) rounded down (dir < 0) or up; *exact when it is a square root exactly.  x >= 0. */
static double sqrt_dir(double x, int dir, int *exact)
{
    double s = sqrt(x), err;
    *exact = 0;
    if (x == 0.0 || isinf(x)) {
        *exact = x == 0.0;
        return x == 0.0 ? 0.0 : x;
    }
    if (x < ER_IV_SQRT_SAFE) return dir < 0 ? _er_iv_down(s) : _er_iv_up(s);
    /* sqrt is correctly rounded; s*s - x is exact from fma here, and its sign says on which side of
     * the true root s lies. */
    err = fma(s, s, -x);
    *exact = err == 0.0;
    if (dir < 0) return err > 0.0 ? _er_iv_down(s) : s;
    return err < 0.0 ? _er_iv_up(s) : s;
}

er_interval er_interval_sqrt(er_interval t)
{
    int el, eh;
    double lo, hi;
    if (er_interval_is_top(t) || !(t.lo >= 0.0)) return er_interval_top();
    if (_er_iv_is_empty(t)) return t;
    lo = sqrt_dir(t.lo, -1, &el);
    hi = sqrt_dir(t.hi, 1, &eh);
    if (lo < 0.0) lo = 0.0;
    /* Values are integers only when the set is one perfect square. */
    return _er_iv_make(lo, hi, t.exact && t.lo == t.hi && el && _er_iv_is_int(lo), t.exact && el && eh);
}
