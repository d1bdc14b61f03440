/* interval_arith.c: endpoint arithmetic (add, sub, mul, div, mod) with directed endpoints. */
#include <float.h>

#include "interval_impl.h"

/*
 * Directed endpoint operations without the FPU rounding mode: compute the sum or product rounded to
 * nearest, recover its exact error with an error-free transformation, and step one double outward
 * when the error points outward.  The result is exactly the sum or product rounded down (up), and
 * *exact says whether no rounding happened.  Operands are finite.
 */

/* x + y rounded down (dir < 0) or up (dir > 0). */
static double add_dir(double x, double y, int dir, int *exact)
{
    double s = x + y, a, b, err;
    if (isinf(s)) {
        /* Finite operands whose nearest sum is +-inf: the exact sum lies beyond +-DBL_MAX. */
        *exact = 0;
        if (s > 0) return dir < 0 ? DBL_MAX : INFINITY;
        return dir < 0 ? -INFINITY : -DBL_MAX;
    }
    /* Fast2Sum (Dekker): with |a| >= |b|, err = b - (s - a) is exactly (a + b) - s; no intermediate
     * overflows since s is finite and s - a is exact. */
    if (fabs(x) >= fabs(y)) {
        a = x;
        b = y;
    } else {
        a = y;
        b = x;
    }
    err = b - (s - a);
    *exact = err == 0.0;
    if (dir < 0) return err < 0.0 ? _er_iv_down(s) : s;
    return err > 0.0 ? _er_iv_up(s) : s;
}

/* Below this magnitude a product's error may not be representable (its exact bits reach under
 * 2^-1074 once the operands' exponents sum below -970); 2^-900 keeps a wide margin. */
#define ER_IV_MUL_SAFE 0x1p-900

/* x * y rounded down (dir < 0) or up (dir > 0). */
static double mul_dir(double x, double y, int dir, int *exact)
{
    double p, err;
    if (x == 0.0 || y == 0.0) {
        *exact = 1;
        return 0.0;
    }
    p = x * y;
    *exact = 0;
    if (isinf(p)) {
        if (p > 0) return dir < 0 ? DBL_MAX : INFINITY;
        return dir < 0 ? -INFINITY : -DBL_MAX;
    }
    if (fabs(p) < ER_IV_MUL_SAFE) {
        /* One step: p is within half an ulp.  The sign of x*y is known, so a bound on the far side of
         * zero (p rounded to 0 or stepped across it) comes back to zero. */
        int pos = (x > 0) == (y > 0);
        double r = dir < 0 ? _er_iv_down(p) : _er_iv_up(p);
        if (dir < 0 && pos && r < 0.0) r = 0.0;
        if (dir > 0 && !pos && r > 0.0) r = -0.0;
        return r;
    }
    /* fma gives x*y - p exactly here (the error of a product above 2^-970 is a double). */
    err = fma(x, y, -p);
    *exact = err == 0.0;
    if (dir < 0) return err < 0.0 ? _er_iv_down(p) : p;
    return err > 0.0 ? _er_iv_up(p) : p;
}

int er_interval_all_finite(const double *v, size_t n)
{
    size_t i;
    if (!v && n) return 0;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static int finite2(er_interval a, er_interval b)
{
    double v[4];
    v[0] = a.lo;
    v[1] = a.hi;
    v[2] = b.lo;
    v[3] = b.hi;
    return er_interval_all_finite(v, 4);
}

er_interval er_interval_arith_result(er_interval a, er_interval b, double lo, double hi)
{
    int integral;
    if (isnan(lo) || isnan(hi) || er_interval_is_top(a) || er_interval_is_top(b)) return er_interval_top();
    integral = a.integral && b.integral;
    /* Integers below 2^53 in magnitude are doubles; a +, - or * of integers is an integer, and if its
     * nearest double is below 2^53 so is the integer itself (2^53 is a double and rounding is monotone),
     * which is then that double: no rounding happened. */
    if (integral && a.exact && b.exact && er_interval_endpoint_exact(lo) && er_interval_endpoint_exact(hi))
        return _er_iv_make(lo, hi, 1, 1);
    return _er_iv_tighten(er_interval_round_out(_er_iv_make(lo, hi, integral, 0)));
}

er_interval er_interval_add(er_interval a, er_interval b)
{
    int el, eh;
    double lo, hi;
    if (!finite2(a, b)) return er_interval_top();
    lo = add_dir(a.lo, b.lo, -1, &el);
    hi = add_dir(a.hi, b.hi, 1, &eh);
    return _er_iv_tighten(_er_iv_make(lo, hi, a.integral && b.integral,
                                      a.exact && b.exact && el && eh && er_interval_endpoint_exact(lo) &&
                                          er_interval_endpoint_exact(hi)));
}

er_interval er_interval_sub(er_interval a, er_interval b) { return er_interval_add(a, er_interval_neg(b)); }

er_interval er_interval_mul(er_interval a, er_interval b)
{
    double xs[2], ys[2], lo = INFINITY, hi = -INFINITY;
    int i, j, lo_exact = 0, hi_exact = 0;
    if (!finite2(a, b)) return er_interval_top();
    xs[0] = a.lo;
    xs[1] = a.hi;
    ys[0] = b.lo;
    ys[1] = b.hi;
    /* x*y is bilinear: its extremes over the box are at corners.  lo = min of the corners rounded
     * down; it is exact when a corner attaining it was exact (if rd(p_k) = p_k is the least rd, every
     * p_i >= rd(p_i) >= p_k, so p_k is the true minimum). */
    for (i = 0; i < 2; i++) {
        for (j = 0; j < 2; j++) {
            int ed, eu;
            double d = mul_dir(xs[i], ys[j], -1, &ed);
            double u = mul_dir(xs[i], ys[j], 1, &eu);
            if (d < lo) {
                lo = d;
                lo_exact = ed;
            } else if (d == lo) {
                lo_exact |= ed;
            }
            if (u > hi) {
                hi = u;
                hi_exact = eu;
            } else if (u == hi) {
                hi_exact |= eu;
            }
        }
    }
    return _er_iv_tighten(_er_iv_make(lo, hi, a.integral && b.integral,
                                      a.exact && b.exact && lo_exact && hi_exact &&
                                          er_interval_endpoint_exact(lo) && er_interval_endpoint_exact(hi)));
}

er_interval er_interval_div(er_interval a, er_interval b)
{
    double q[4], lo, hi;
    int i;
    if (!finite2(a, b) || (b.lo <= 0.0 && b.hi >= 0.0)) return er_interval_top();
    /* x/y is monotone in each argument where y keeps one sign: extremes at the corners. */
    q[0] = a.lo / b.lo;
    q[1] = a.lo / b.hi;
    q[2] = a.hi / b.lo;
    q[3] = a.hi / b.hi;
    lo = hi = q[0];
    for (i = 1; i < 4; i++) {
        if (q[i] < lo) lo = q[i];
        if (q[i] > hi) hi = q[i];
    }
    /* Each quotient is correctly rounded to nearest: one step outward encloses it (an inf steps back
     * to DBL_MAX, correct since the quotient exceeded it). */
    return _er_iv_make(_er_iv_down(lo), _er_iv_up(hi), 0, 0);
}

er_interval er_interval_mod(er_interval a, er_interval c)
{
    double cv, lo, hi;
    if (er_interval_is_top(a) || er_interval_is_top(c)) return er_interval_top();
    /* The divisor: an exact positive integral singleton (exact implies below 2^53). */
    if (!(c.exact && c.integral && c.lo == c.hi && c.lo >= 1.0)) return er_interval_top();
    /* The argument: non-negative, integral and finite (fmod(inf, c) is NaN); negative arguments give
     * negative remainders in C (-5 % 3 == -2), so they are refused. */
    if (!(a.integral && a.lo >= 0.0 && isfinite(a.hi))) return er_interval_top();
    cv = c.lo;
    lo = ceil(a.lo);
    hi = floor(a.hi);
    if (lo > hi) return _er_iv_make(lo, hi, 1, 0); /* empty */
    if (hi < ER_INTERVAL_EXACT_INT_CUTOFF) {
        int64_t l = (int64_t)lo, h = (int64_t)hi, cc = (int64_t)cv;
        /* Exact integer arithmetic: x mod c over the integers l..h. */
        if (h <= cc - 1) return _er_iv_make(lo, hi, 1, a.exact); /* x mod c = x */
        if (l / cc == h / cc) return _er_iv_make((double)(l % cc), (double)(h % cc), 1, a.exact);
        /* The range crosses a multiple k*c: both k*c (remainder 0) and k*c - 1 (c - 1) are in it. */
        return _er_iv_make(0.0, cv - 1.0, 1, a.exact);
    }
    /* Seed rule: 0 <= x mod c <= min(x, c - 1); here c - 1 < 2^53 <= hi. */
    return _er_iv_make(0.0, cv - 1.0, 1, 0);
}
