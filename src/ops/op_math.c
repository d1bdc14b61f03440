/* op_math.c: certified enclosures of exp (and the functions built on it) in binary64, fast, with a
 * proven error radius (docs/proofs/ops-math.md); MPFR intervals at rising precision for the elements
 * whose binary64 enclosure does not decide their rounding. */
#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "op_impl.h"
#include "exactref/core/er_exp.h"

/* exp(x) = 2^k exp(t), |t| <= 0.35, by the core's polynomial with its proven error
 * (include/exactref/core/er_exp.h, shared with the interpreter's bounds mode); MPFR where it declines. */
static void exp_mpfr(double x, double *lo, double *hi)
{
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_d(v, x, MPFR_RNDN);
    mpfr_exp(v, v, MPFR_RNDD);
    *lo = mpfr_get_d(v, MPFR_RNDD);
    mpfr_set_d(v, x, MPFR_RNDN);
    mpfr_exp(v, v, MPFR_RNDU);
    *hi = mpfr_get_d(v, MPFR_RNDU);
    mpfr_clear(v);
}

void er_ops_exp(double x, double *lo, double *hi)
{
    if (x != x) {
        *lo = *hi = x;
        return;
    }
    if (x == 0) {
        *lo = *hi = 1.0;
        return;
    }
    if (er_b_isinf(x)) {
        *lo = *hi = x > 0 ? x : 0.0;
        return;
    }
    if (!(fabs(x) <= 708)) {
        if (x > 710) { /* exp(x) > 2^1024 > the largest binary64 */
            *lo = 0x1.fffffffffffffp1023;
            *hi = INFINITY;
            return;
        }
        if (x < -746) {
            *lo = 0;
            *hi = 0x1p-1074;
            return;
        }
        exp_mpfr(x, lo, hi);
        return;
    }
    if (!er_b_exp_enclose(x, lo, hi)) exp_mpfr(x, lo, hi);
}

void er_ops_exp_iv(double a, double b, double *lo, double *hi)
{
    double l, h;
    er_ops_exp(a, lo, &h);
    er_ops_exp(b, &l, hi);
}

/* ---- MPFR intervals ---- */

struct er_ops_mp {
    int n;
    mpfr_t *lo, *hi;
    mpfr_t t1, t2;
};

er_ops_mp *er_ops_mp_new(int prec, int n)
{
    er_ops_mp *m = (er_ops_mp *)calloc(1, sizeof *m);
    if (!m) return NULL;
    m->n = n;
    m->lo = (mpfr_t *)calloc((size_t)n, sizeof(mpfr_t));
    m->hi = (mpfr_t *)calloc((size_t)n, sizeof(mpfr_t));
    if (!m->lo || !m->hi) {
        free(m->lo);
        free(m->hi);
        free(m);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        mpfr_init2(m->lo[i], prec);
        mpfr_init2(m->hi[i], prec);
        mpfr_set_zero(m->lo[i], 1);
        mpfr_set_zero(m->hi[i], 1);
    }
    mpfr_init2(m->t1, prec);
    mpfr_init2(m->t2, prec);
    return m;
}

void er_ops_mp_free(er_ops_mp *m)
{
    if (!m) return;
    for (int i = 0; i < m->n; i++) {
        mpfr_clear(m->lo[i]);
        mpfr_clear(m->hi[i]);
    }
    mpfr_clear(m->t1);
    mpfr_clear(m->t2);
    free(m->lo);
    free(m->hi);
    free(m);
}

void er_ops_mp_set_d(er_ops_mp *m, int r, double x)
{
    mpfr_set_d(m->lo[r], x, MPFR_RNDD);
    mpfr_set_d(m->hi[r], x, MPFR_RNDU);
}

void er_ops_mp_copy(er_ops_mp *m, int r, int a)
{
    mpfr_set(m->lo[r], m->lo[a], MPFR_RNDD);
    mpfr_set(m->hi[r], m->hi[a], MPFR_RNDU);
}

void er_ops_mp_add(er_ops_mp *m, int r, int a, int b)
{
    mpfr_add(m->t1, m->lo[a], m->lo[b], MPFR_RNDD);
    mpfr_add(m->hi[r], m->hi[a], m->hi[b], MPFR_RNDU);
    mpfr_set(m->lo[r], m->t1, MPFR_RNDD);
}

void er_ops_mp_sub(er_ops_mp *m, int r, int a, int b)
{
    mpfr_sub(m->t1, m->lo[a], m->hi[b], MPFR_RNDD);
    mpfr_sub(m->t2, m->hi[a], m->lo[b], MPFR_RNDU);
    mpfr_set(m->lo[r], m->t1, MPFR_RNDD);
    mpfr_set(m->hi[r], m->t2, MPFR_RNDU);
}

/* r = a (op) b over the four corners: the least rounded down, the largest rounded up */
static void corners(er_ops_mp *m, int r, int a, int b, int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t))
{
    mpfr_t l, h, x;
    mpfr_prec_t p = mpfr_get_prec(m->t1);
    mpfr_inits2(p, l, h, x, (mpfr_ptr)0);
    mpfr_ptr ea[2] = {m->lo[a], m->hi[a]}, eb[2] = {m->lo[b], m->hi[b]};
    for (int i = 0; i < 4; i++) {
        f(x, ea[i >> 1], eb[i & 1], MPFR_RNDD);
        if (i == 0 || mpfr_less_p(x, l)) mpfr_set(l, x, MPFR_RNDD);
        f(x, ea[i >> 1], eb[i & 1], MPFR_RNDU);
        if (i == 0 || mpfr_greater_p(x, h)) mpfr_set(h, x, MPFR_RNDU);
    }
    mpfr_set(m->lo[r], l, MPFR_RNDD);
    mpfr_set(m->hi[r], h, MPFR_RNDU);
    mpfr_clears(l, h, x, (mpfr_ptr)0);
}

void er_ops_mp_mul(er_ops_mp *m, int r, int a, int b) { corners(m, r, a, b, mpfr_mul); }
void er_ops_mp_div(er_ops_mp *m, int r, int a, int b) { corners(m, r, a, b, mpfr_div); }

void er_ops_mp_exp(er_ops_mp *m, int r, int a)
{
    mpfr_exp(m->lo[r], m->lo[a], MPFR_RNDD);
    mpfr_exp(m->hi[r], m->hi[a], MPFR_RNDU);
}

void er_ops_mp_log(er_ops_mp *m, int r, int a)
{
    mpfr_log(m->lo[r], m->lo[a], MPFR_RNDD);
    mpfr_log(m->hi[r], m->hi[a], MPFR_RNDU);
}

void er_ops_mp_get(er_ops_mp *m, int r, double *lo, double *hi)
{
    *lo = mpfr_get_d(m->lo[r], MPFR_RNDD);
    *hi = mpfr_get_d(m->hi[r], MPFR_RNDU);
}

/* The pattern of v rounded to nearest even into fmt: through binary64 rounded to odd (exact for every
 * format of at most 51 significand bits whose values are binary64 normals or zero), or to nearest for
 * f64 itself. */
static uint64_t mp_round(mpfr_srcptr v, int fmt)
{
    if (fmt == ER_FMT_F64) return er_b_bits(mpfr_get_d(v, MPFR_RNDN));
    double z = mpfr_get_d(v, MPFR_RNDZ);
    if (er_b_finite(z) && mpfr_cmp_d(v, z) != 0) z = er_b_dbl(er_b_bits(z) | 1u);
    return er_ops_round(fmt, z);
}

int er_ops_mp_decide(er_ops_mp *m, int r, int fmt, uint64_t *bits)
{
    uint64_t a = mp_round(m->lo[r], fmt), b = mp_round(m->hi[r], fmt);
    if (a != b) return 0;
    *bits = a;
    return 1;
}

void er_ops_mp_thread_done(void)
{
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}
