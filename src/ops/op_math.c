/* op_math.c: certified enclosures of exp (and the functions built on it) in binary64, fast, with a
 * proven error radius (docs/proofs/ops-math.md); MPFR intervals at rising precision for the elements
 * whose binary64 enclosure does not decide their rounding. */
#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "op_impl.h"

/*
 * exp(x) = 2^k exp(t), t = x - k ln2, |t| <= 0.35.  ln2 = LN2_HI + LN2_LO + d with |d| < 2^-80 (checked
 * against MPFR in tests/ops/test_ops_math.c); LN2_HI has 21 trailing zero bits, so k LN2_HI is exact for
 * |k| < 2^21.  t is enclosed by outward operations; exp(t) by a degree-13 Taylor polynomial in Horner's
 * form at the two ends, whose total relative error (truncation, rounded coefficients, rounded Horner
 * steps) is below 2^-47 on |t| <= 0.35: E = 2^-46 is used.  2^k is exact for |x| <= 708.
 */
#define LN2_HI 0x1.62e42feep-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define INV_LN2 0x1.71547652b82fep0
#define EXP_E 0x1p-46

static const double exp_c[14] = {
    1.0, 1.0, 0.5, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10,
    0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
    0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
};

static double horner(double t)
{
    double p = exp_c[13];
    for (int i = 12; i >= 0; i--) p = p * t + exp_c[i];
    return p;
}

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
    /* k: x / ln2 rounded to an integer by the shifter (rounding to nearest, the mode never changed; any
     * integer would do: the check on t below is what the proof uses) */
    double k = (x * INV_LN2 + 0x1.8p52) - 0x1.8p52;
    double kh = k * LN2_HI; /* exact */
    double r1l = er_b_down(x - kh), r1h = er_b_up(x - kh);
    double kl1 = k * LN2_LO, kll = er_b_down(kl1), klh = er_b_up(kl1);
    double tl = er_b_down(er_b_down(r1l - klh) - 0x1p-69), th = er_b_up(er_b_up(r1h - kll) + 0x1p-69);
    if (!(fabs(tl) <= 0.35 && fabs(th) <= 0.35)) {
        exp_mpfr(x, lo, hi);
        return;
    }
    double s = er_b_pow2((int)k);
    /* one polynomial at tm in [tl, th]: exp(tl) >= exp(tm) (1 - (tm - tl)) and exp(th) <= exp(tm)
     * (1 + 2 (th - tm)) (th - tm < 1), and exp(tm) within [P (1 - 2E), P (1 + 2E)] */
    double tm = er_b_up(r1l - kl1);
    if (tm < tl) tm = tl;
    if (tm > th) tm = th;
    double p = horner(tm), dl = er_b_up(tm - tl), dh = er_b_up(2 * er_b_up(th - tm));
    *lo = er_b_down(er_b_down(er_b_down(p * (1 - 2 * EXP_E)) * er_b_down(1 - dl)) * s);
    *hi = er_b_up(er_b_up(er_b_up(p * (1 + 2 * EXP_E)) * er_b_up(1 + dh)) * s);
}

void er_ops_log(double x, double *lo, double *hi)
{
    if (!(x > 0) || er_b_isinf(x)) { /* 0: -inf; +inf: +inf; negative or NaN: NaN */
        *lo = *hi = x == 0 ? -INFINITY : x > 0 ? x : NAN;
        return;
    }
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_d(v, x, MPFR_RNDN);
    mpfr_log(v, v, MPFR_RNDD);
    *lo = mpfr_get_d(v, MPFR_RNDD);
    mpfr_set_d(v, x, MPFR_RNDN);
    mpfr_log(v, v, MPFR_RNDU);
    *hi = mpfr_get_d(v, MPFR_RNDU);
    mpfr_clear(v);
}

void er_ops_exp_iv(double a, double b, double *lo, double *hi)
{
    double l, h;
    er_ops_exp(a, lo, &h);
    if (b == a) { /* one point: one evaluation */
        *hi = h;
        return;
    }
    double d = b - a;
    if (d > 0 && d <= 0x1p-20 && er_b_finite(h)) {
        /* a narrow interval: exp(b) = exp(a) e^(b - a) <= exp(a) (1 + 2 (b - a)) for 0 <= b - a <= 1 */
        *hi = er_b_up(h * er_b_up(1 + 2 * er_b_up(d)));
        return;
    }
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

/* increasing functions at 64 bits, directed: the enclosures of tanh and erf (MPFR; slower than exp) */
static void inc64(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), double x, double *lo, double *hi)
{
    if (x != x) {
        *lo = *hi = x;
        return;
    }
    mpfr_t v, y;
    mpfr_init2(v, 64);
    mpfr_init2(y, 64);
    mpfr_set_d(v, x, MPFR_RNDN); /* exact: 53 <= 64 bits */
    f(y, v, MPFR_RNDD);
    *lo = mpfr_get_d(y, MPFR_RNDD);
    f(y, v, MPFR_RNDU);
    *hi = mpfr_get_d(y, MPFR_RNDU);
    mpfr_clear(v);
    mpfr_clear(y);
}

void er_ops_tanh(double x, double *lo, double *hi) { inc64(mpfr_tanh, x, lo, hi); }
void er_ops_erf(double x, double *lo, double *hi) { inc64(mpfr_erf, x, lo, hi); }

void er_ops_mp_tanh(er_ops_mp *m, int r, int a)
{
    mpfr_tanh(m->lo[r], m->lo[a], MPFR_RNDD);
    mpfr_tanh(m->hi[r], m->hi[a], MPFR_RNDU);
}

void er_ops_mp_erf(er_ops_mp *m, int r, int a)
{
    mpfr_erf(m->lo[r], m->lo[a], MPFR_RNDD);
    mpfr_erf(m->hi[r], m->hi[a], MPFR_RNDU);
}

void er_ops_mp_erfc(er_ops_mp *m, int r, int a)
{
    /* decreasing: the lower end from the upper argument (t1 keeps a's lower end if r == a) */
    mpfr_set(m->t1, m->lo[a], MPFR_RNDD);
    mpfr_erfc(m->lo[r], m->hi[a], MPFR_RNDD);
    mpfr_erfc(m->hi[r], m->t1, MPFR_RNDU);
}

void er_ops_mp_sqrt(er_ops_mp *m, int r, int a)
{
    mpfr_sqrt(m->lo[r], m->lo[a], MPFR_RNDD);
    mpfr_sqrt(m->hi[r], m->hi[a], MPFR_RNDU);
}

void er_ops_mp_pi(er_ops_mp *m, int r)
{
    mpfr_const_pi(m->lo[r], MPFR_RNDD);
    mpfr_const_pi(m->hi[r], MPFR_RNDU);
}

void er_ops_mp_set_str(er_ops_mp *m, int r, const char *dec)
{
    mpfr_set_str(m->lo[r], dec, 10, MPFR_RNDD);
    mpfr_set_str(m->hi[r], dec, 10, MPFR_RNDU);
}
