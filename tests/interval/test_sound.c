/*
 * test_sound.c (interval_sound): random soundness of every interval rule, at every exactref format.
 *
 * For each rule and precision, operand intervals are drawn with machine values of the precision
 * inside them (endpoints, their neighbours in the format, zero, random interior values, integers near
 * 2^53); the exact real result of each operation on those values (MPFR, or an MPFR bracket for
 * quotients and transcendental functions) must lie in the rule's real-arithmetic interval, and the
 * machine result at the precision (the real result rounded into the format by the formats core in both
 * directions, saturating and flushing or not; C's wrapping, truncating integer arithmetic for integer
 * formats) must lie in er_interval_at_prec and er_interval_round_into of it.  Every exact claim is
 * checked against the endpoint formula computed exactly by MPFR.  The lattice operations, truthiness,
 * comparison folds and the text form are checked on the same samples, and er_interval_round_into and
 * er_interval_at_prec against er_convert between every pair of formats in every direction.
 * The seed comes from EXACTREF_SEED and is printed; EXACTREF_INTERVAL_SCALE multiplies the counts.
 */
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/interval.h"
#include "exactref/core/er_round.h"

#define P53 9007199254740992.0
#define MAXS 16  /* samples per interval */
#define PREC 2200 /* exact sums of doubles need 2098 bits */

static uint64_t rng;
static int scale = 1;
static long checks, fails;
static mpfr_t X, Y, R, RD, RU, T1, T2, T3;

static uint64_t rnd(void) { return er_test_rand(&rng); }
static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static uint64_t dbits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double bitsd(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static int is_int_fmt(int F) { return er_fmt_get(F).kind != ER_KIND_FLOAT; }

/* A machine value: a double for float formats, an int64 for integer formats. */
typedef struct mval {
    double d;
    int64_t i;
} mval;

typedef struct operand {
    er_interval iv;
    mval s[MAXS];
    int n;
} operand;

/* ---- Failure reports. ---- */
static char ctxbuf[1024];

static void ivstr(er_interval t, char *buf, size_t size)
{
    if (er_interval_to_sexp(t, buf, size) != ER_OK) snprintf(buf, size, "[%a, %a] %d %d", t.lo, t.hi, t.integral, t.exact);
}

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
    va_list ap;
    fails++;
    if (fails > 20) return;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n  context: %s\n", ctxbuf);
    va_end(ap);
    fflush(stdout);
}


/* ---- Exact containment. ---- */
static int fits_mpfr(er_interval iv, mpfr_t r)
{
    if (er_interval_is_top(iv)) return 1;
    if (mpfr_nan_p(r)) return 0;
    if (mpfr_cmp_d(r, iv.lo) < 0 || mpfr_cmp_d(r, iv.hi) > 0) return 0;
    if (iv.integral && mpfr_number_p(r) && !mpfr_integer_p(r)) return 0;
    return 1;
}

static int fits_mval(int F, er_interval iv, const mval *v)
{
    if (!is_int_fmt(F)) return er_interval_value_fits(iv, v->d);
    mpfr_set_sj(T3, v->i, MPFR_RNDN);
    return fits_mpfr(iv, T3);
}

static void mval_set(int F, mpfr_t m, const mval *v)
{
    if (is_int_fmt(F)) mpfr_set_sj(m, v->i, MPFR_RNDN);
    else mpfr_set_d(m, v->d, MPFR_RNDN);
}

static const char *mval_str(int F, const mval *v, char *buf)
{
    if (is_int_fmt(F)) sprintf(buf, "%lld", (long long)v->i);
    else sprintf(buf, "%a", v->d);
    return buf;
}

/* ---- Random machine values. ---- */
static double rd_into(int F, double x, int dir)
{
    double r = NAN;
    er_round_double(F, x, dir, &r);
    return r;
}

static int64_t int_min(int F)
{
    er_fmt d = er_fmt_get(F);
    if (d.kind == ER_KIND_UINT) return 0;
    return d.width == 64 ? INT64_MIN : -((int64_t)1 << (d.width - 1));
}

static int64_t int_max(int F)
{
    er_fmt d = er_fmt_get(F);
    if (d.kind == ER_KIND_UINT) return ((int64_t)1 << d.width) - 1;
    return d.width == 64 ? INT64_MAX : ((int64_t)1 << (d.width - 1)) - 1;
}

static int64_t rand_ival(int F)
{
    int64_t lo = int_min(F), hi = int_max(F), v;
    switch (rnd() % 6) {
    case 0: v = (int64_t)(rnd() % 601) - 300; break;
    case 1: v = (int64_t)(rnd() % 21) - 10; break;
    case 2: v = (rnd() & 1) ? hi - (int64_t)(rnd() % 4) : lo + (int64_t)(rnd() % 4); break;
    case 3: /* integers near +-2^53 */
        v = ((int64_t)1 << 53) + (int64_t)(rnd() % 9) - 4;
        if (rnd() & 1) v = -v;
        break;
    default: {
        uint64_t u = rnd() >> (rnd() % 64);
        memcpy(&v, &u, sizeof v);
        if (rnd() & 1) v = -v;
    }
    }
    if (v < lo || v > hi) /* fold into the type's range */
        v = (int64_t)((uint64_t)lo + (uint64_t)v % ((uint64_t)hi - (uint64_t)lo + 1u));
    return v;
}

/* A random value of float format F (never NaN); integers only when want_int. */
static double rand_fval(int F, int want_int)
{
    er_fmt d = er_fmt_get(F);
    for (;;) {
        double x, n;
        if (want_int) {
            switch (rnd() % 5) {
            case 0: n = (double)((int64_t)(rnd() % 601) - 300); break;
            case 1: n = (double)((int64_t)(rnd() % 21) - 10); break;
            case 2: n = floor(ldexp((double)(rnd() >> 11), (int)(rnd() % 90) - 53)); break;
            case 3: n = P53 + (double)((int64_t)(rnd() % 9) - 4); break;
            default: n = floor(ldexp(unif(), (int)(rnd() % 1030))); break;
            }
            if (rnd() & 1) n = -n;
            x = rd_into(F, n, (rnd() & 1) ? ER_RND_NEGATIVE_INF : ER_RND_POSITIVE_INF);
            if (!isfinite(x) || floor(x) != x) continue;
            return x;
        }
        switch (rnd() % 6) {
        case 5: /* near the bottom of the range: subnormals, the least normals */
            x = rd_into(F, ldexp(1.0 + unif(), er_fmt_emin(d) - (int)(rnd() % (unsigned)(d.mbits + 3))) *
                               ((rnd() & 1) ? -1 : 1), ER_RND_NEAREST_EVEN);
            break;
        case 0:
        case 1: {
            uint64_t b = rnd();
            if (d.width < 64) b &= (UINT64_C(1) << d.width) - 1u;
            b &= ~((UINT64_C(1) << d.pad) - 1u);
            if (er_from_bits(F, b, &x) != ER_OK) continue;
            break;
        }
        case 2: x = rd_into(F, ldexp(1.0 + unif(), (int)(rnd() % 41) - 20) * ((rnd() & 1) ? -1 : 1), ER_RND_NEAREST_EVEN); break;
        case 3: x = rd_into(F, (double)((int64_t)(rnd() % 201) - 100) / 8.0, ER_RND_NEAREST_EVEN); break;
        default: x = rd_into(F, (P53 + (double)((int64_t)(rnd() % 9) - 4)) * ((rnd() & 1) ? -1 : 1), ER_RND_NEAREST_EVEN); break;
        }
        if (isnan(x)) continue;
        return x;
    }
}

enum { M_ANY, M_NONNEG_INT, M_NONNEG, M_SIGNED, M_DIVISOR_POINT };

static void add_sample(operand *o, mval v)
{
    if (o->n < MAXS) o->s[o->n++] = v;
}

static void add_d(operand *o, double x)
{
    mval v;
    v.d = x;
    v.i = 0;
    add_sample(o, v);
}

static void add_i(operand *o, int64_t i)
{
    mval v;
    v.d = (double)i;
    v.i = i;
    add_sample(o, v);
}

/* An operand interval at precision F and machine values of F inside it. */
static void gen_operand(int F, int mode, operand *o)
{
    er_fmt d = er_fmt_get(F);
    int k, sgn = er_fmt_signed(d);
    o->n = 0;
    if (mode == M_ANY && rnd() % 12 == 0) {
        o->iv = er_interval_top();
        if (rnd() & 1) o->iv.integral = 1; /* flags of a top interval mean nothing */
        if (is_int_fmt(F)) {
            add_i(o, int_min(F));
            add_i(o, int_max(F));
            add_i(o, 0);
            for (k = 0; k < 5; k++)
                add_i(o, rand_ival(F));
        } else {
            if (er_fmt_has_nan(d)) add_d(o, NAN);
            if (er_fmt_has_inf(d)) {
                add_d(o, INFINITY);
                add_d(o, -INFINITY);
            }
            for (k = 0; k < 5; k++)
                add_d(o, rand_fval(F, 0));
        }
        return;
    }
    if (is_int_fmt(F)) {
        int64_t a = rand_ival(F), b = rand_ival(F), lo, hi;
        if (mode == M_DIVISOR_POINT) {
            a = b = 1 + (int64_t)(rnd() % ((rnd() & 1) ? 7 : 100));
        } else if (mode == M_NONNEG_INT || mode == M_NONNEG) {
            if (a < 0) a = a == INT64_MIN ? INT64_MAX : -a;
            if (b < 0) b = b == INT64_MIN ? INT64_MAX : -b;
            if (rnd() & 1) {
                int64_t dd = (int64_t)(rnd() % 40);
                b = a > int_max(F) - dd ? int_max(F) : a + dd;
            }
        } else if (mode == M_SIGNED) {
            if (a == 0) a = 1;
            if (b == 0) b = 1;
            if ((a < 0) != (b < 0)) b = a;
        } else if (rnd() % 8 == 0) {
            b = a;
        } else if (sgn && rnd() % 6 == 0) {
            a = a > 0 ? -a : a;
            b = b < 0 ? (b == INT64_MIN ? INT64_MAX : -b) : b;
        }
        lo = a < b ? a : b;
        hi = a < b ? b : a;
        if (lo < int_min(F)) lo = int_min(F); /* negation can leave the type (-(-128) = 128) */
        if (hi > int_max(F)) hi = int_max(F);
        if (lo > hi) lo = hi;
        o->iv = er_interval_of_int_range(lo, hi);
        add_i(o, lo);
        add_i(o, hi);
        if (lo < hi) {
            add_i(o, lo + 1);
            add_i(o, hi - 1);
        }
        if (lo <= 0 && 0 <= hi) add_i(o, 0);
        for (k = 0; k < 6; k++) {
            uint64_t span = (uint64_t)hi - (uint64_t)lo + 1u, u = rnd();
            add_i(o, (int64_t)((uint64_t)lo + (span ? u % span : u)));
        }
        for (k = 0; k < 3; k++) {
            int64_t v = rand_ival(F);
            if (v >= lo && v <= hi) add_i(o, v);
        }
    } else {
        int integral = mode == M_NONNEG_INT || mode == M_DIVISOR_POINT || rnd() % 3 == 0;
        double a, b, lo, hi;
        if (mode == M_DIVISOR_POINT) {
            double lim = 4;
            er_interval_float_exact_int_limit(F, &lim);
            a = b = rd_into(F, 1.0 + (double)(rnd() % (lim < 50 ? (uint64_t)lim : 50)), ER_RND_NEGATIVE_INF);
        } else {
            a = rand_fval(F, integral);
            switch (rnd() % 8) {
            case 0: b = a; break;
            case 1:
            case 2: /* a narrow interval: a few steps of the format, or a factor below 2 */
                b = rd_into(F, rnd() & 1 ? a * (1.0 + unif()) : nextafter(a, (rnd() & 1) ? INFINITY : -INFINITY),
                            (rnd() & 1) ? ER_RND_POSITIVE_INF : ER_RND_NEGATIVE_INF);
                if (isnan(b) || (integral && floor(b) != b)) b = a;
                break;
            default: b = rand_fval(F, integral); break;
            }
            if (mode == M_NONNEG_INT || mode == M_NONNEG || mode == M_SIGNED) {
                a = fabs(a);
                b = fabs(b);
                if (mode == M_SIGNED) {
                    if (a == 0) a = rd_into(F, 1.0, ER_RND_NEAREST_EVEN);
                    if (b == 0) b = a;
                    if (sgn && (rnd() & 1)) {
                        a = -a;
                        b = -b;
                    }
                }
            } else if (sgn && rnd() % 6 == 0) {
                a = -fabs(a);
                b = fabs(b);
            }
            if (a == 0) a = 0.0; /* no -0 where the format has none; its value is 0 anyway */
            if (b == 0) b = 0.0;
        }
        lo = a < b ? a : b;
        hi = a < b ? b : a;
        o->iv.lo = lo;
        o->iv.hi = hi;
        o->iv.integral = integral;
        o->iv.exact = er_interval_endpoint_exact(lo) && er_interval_endpoint_exact(hi);
        add_d(o, lo);
        add_d(o, hi);
        if (isfinite(lo)) {
            double s = rd_into(F, nextafter(lo, INFINITY), ER_RND_POSITIVE_INF);
            if (s <= hi && (!integral || floor(s) == s)) add_d(o, s);
        }
        if (isfinite(hi)) {
            double s = rd_into(F, nextafter(hi, -INFINITY), ER_RND_NEGATIVE_INF);
            if (s >= lo && (!integral || floor(s) == s)) add_d(o, s);
        }
        if (lo <= 0 && 0 <= hi) add_d(o, 0.0);
        for (k = 0; k < 4; k++) {
            double u = unif(), x;
            if (!isfinite(lo) || !isfinite(hi)) break;
            x = lo * (1 - u) + hi * u;
            if (integral) x = floor(x);
            x = rd_into(F, x, ER_RND_NEGATIVE_INF);
            if (x >= lo && x <= hi && (!integral || floor(x) == x)) add_d(o, x);
        }
        for (k = 0; k < 8 && o->n < MAXS; k++) {
            double x = rand_fval(F, integral);
            if (x >= lo && x <= hi) add_d(o, x);
        }
    }
    /* Weaker claims are still true: drop the flags now and then. */
    if (rnd() % 5 == 0) o->iv.exact = 0;
    if (rnd() % 7 == 0 && mode != M_DIVISOR_POINT) o->iv.integral = 0;
}

/* ---- Machine results at a precision. ---- */

/* The real result, bracketed by rd <= r <= ru (equal when exact), rounded into float format F in every
 * way: down and up, with saturation and flush-to-zero or not.  Each must be in both intervals. */
static void check_float_machine(int F, er_interval at, er_interval into, mpfr_t rd, mpfr_t ru)
{
    static const unsigned opts[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_OUT, ER_OPT_SATURATE | ER_OPT_FTZ_OUT};
    int side, o;
    for (side = 0; side < 2; side++) {
        int dir = side ? ER_RND_POSITIVE_INF : ER_RND_NEGATIVE_INF;
        double x = mpfr_get_d(side ? ru : rd, side ? MPFR_RNDU : MPFR_RNDD);
        for (o = 0; o < 4; o++) {
            er_res r = er_convert(ER_FMT_F64, F, dbits(x), dir, opts[o]);
            double m = bitsd(er_convert(F, ER_FMT_F64, r.bits, ER_RND_NEAREST_EVEN, 0u).bits);
            checks++;
            if (!er_interval_value_fits(at, m)) {
                char b1[200];
                ivstr(at, b1, sizeof b1);
                bad("%s: machine value %a (from %a, dir %d, opts %u) not in at_prec %s", er_format_name(F), m, x,
                     dir, opts[o], b1);
            }
            if (!er_interval_value_fits(into, m)) {
                char b1[200];
                ivstr(into, b1, sizeof b1);
                bad("%s: machine value %a (from %a, dir %d, opts %u) not in round_into %s", er_format_name(F), m,
                     x, dir, opts[o], b1);
            }
        }
    }
}

static void check_int_machine(int F, er_interval at, er_interval into, int64_t m)
{
    mval v;
    v.i = m;
    v.d = (double)m;
    checks++;
    if (!fits_mval(F, at, &v) || !fits_mval(F, into, &v)) {
        char b1[200], b2[200];
        ivstr(at, b1, sizeof b1);
        ivstr(into, b2, sizeof b2);
        bad("%s: machine integer %lld not in at_prec %s or round_into %s", er_format_name(F), (long long)m, b1, b2);
    }
}

/* The real result bracket [rd, ru] must be in res (real containment, NaN only in top, integrality). */
static void check_real(const char *op, er_interval res, mpfr_t rd, mpfr_t ru)
{
    checks++;
    if (!fits_mpfr(res, rd) || !fits_mpfr(res, ru)) {
        char b1[200];
        ivstr(res, b1, sizeof b1);
        bad("%s: real result [%a, %a] not in %s", op, mpfr_get_d(rd, MPFR_RNDD), mpfr_get_d(ru, MPFR_RNDU), b1);
    }
}

/* Wrap an int64 (or a uint64 pattern) into integer format F, as C's conversions do. */
static int64_t wrap_to(int F, uint64_t u)
{
    er_val v;
    u = er_convert(ER_FMT_I64, F, u, ER_RND_NEAREST_EVEN, 0u).bits;
    v = er_decode(F, u);
    if (F == ER_FMT_I64) {
        int64_t s;
        memcpy(&s, &u, sizeof s);
        return s;
    }
    return v.sign ? -(int64_t)v.sig : (int64_t)v.sig;
}

/* ---- The exact claims. ---- */
static void check_exact_endpoints(const char *op, er_interval res, mpfr_t lo, mpfr_t hi)
{
    checks++;
    if (!res.exact) return;
    if (!er_interval_endpoint_exact(res.lo) || !er_interval_endpoint_exact(res.hi) || mpfr_cmp_d(lo, res.lo) != 0 ||
        mpfr_cmp_d(hi, res.hi) != 0) {
        char b1[200];
        ivstr(res, b1, sizeof b1);
        bad("%s: claimed exact %s, exact bounds are [%a, %a]", op, b1, mpfr_get_d(lo, MPFR_RNDN),
             mpfr_get_d(hi, MPFR_RNDN));
    }
}

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_MOD, OP_NBIN };
static const char *bin_names[OP_NBIN] = {"add", "sub", "mul", "div", "max", "min", "mod"};

static er_interval apply_bin(int op, er_interval a, er_interval b)
{
    switch (op) {
    case OP_ADD: return er_interval_add(a, b);
    case OP_SUB: return er_interval_sub(a, b);
    case OP_MUL: return er_interval_mul(a, b);
    case OP_DIV: return er_interval_div(a, b);
    case OP_MAX: return er_interval_max(a, b);
    case OP_MIN: return er_interval_min(a, b);
    default: return er_interval_mod(a, b);
    }
}

/* The exact bounds formula of a binary rule on the operand endpoints (into T1, T2). */
static void exact_bin_bounds(int op, er_interval a, er_interval b)
{
    double xs[2], ys[2];
    int i, j, first = 1;
    xs[0] = a.lo;
    xs[1] = a.hi;
    ys[0] = b.lo;
    ys[1] = b.hi;
    switch (op) {
    case OP_ADD:
        mpfr_set_d(X, a.lo, MPFR_RNDN);
        mpfr_add_d(T1, X, b.lo, MPFR_RNDN);
        mpfr_set_d(X, a.hi, MPFR_RNDN);
        mpfr_add_d(T2, X, b.hi, MPFR_RNDN);
        break;
    case OP_SUB:
        mpfr_set_d(X, a.lo, MPFR_RNDN);
        mpfr_sub_d(T1, X, b.hi, MPFR_RNDN);
        mpfr_set_d(X, a.hi, MPFR_RNDN);
        mpfr_sub_d(T2, X, b.lo, MPFR_RNDN);
        break;
    case OP_MUL:
        for (i = 0; i < 2; i++)
            for (j = 0; j < 2; j++) {
                mpfr_set_d(X, xs[i], MPFR_RNDN);
                mpfr_mul_d(R, X, ys[j], MPFR_RNDN);
                if (first || mpfr_less_p(R, T1)) mpfr_set(T1, R, MPFR_RNDN);
                if (first || mpfr_greater_p(R, T2)) mpfr_set(T2, R, MPFR_RNDN);
                first = 0;
            }
        break;
    case OP_MAX:
        mpfr_set_d(T1, a.lo > b.lo ? a.lo : b.lo, MPFR_RNDN);
        mpfr_set_d(T2, a.hi > b.hi ? a.hi : b.hi, MPFR_RNDN);
        break;
    case OP_MIN:
        mpfr_set_d(T1, a.lo < b.lo ? a.lo : b.lo, MPFR_RNDN);
        mpfr_set_d(T2, a.hi < b.hi ? a.hi : b.hi, MPFR_RNDN);
        break;
    default: break;
    }
}

/* mod's exact claim: the least and greatest x mod c over the integers of a (brute force when small). */
static void check_mod_exact(er_interval a, er_interval c, er_interval res)
{
    double x, mn = INFINITY, mx = -INFINITY;
    if (!res.exact) return;
    checks++;
    if (!(c.lo == c.hi) || ceil(a.lo) > floor(a.hi)) {
        bad("mod: exact claim on a non-singleton divisor or an empty argument");
        return;
    }
    if (floor(a.hi) - ceil(a.lo) > 5000) return;
    for (x = ceil(a.lo); x <= floor(a.hi); x++) {
        double r = fmod(x, c.lo);
        if (r < mn) mn = r;
        if (r > mx) mx = r;
    }
    if (mn != res.lo || mx != res.hi) {
        char b1[200];
        ivstr(res, b1, sizeof b1);
        bad("mod: claimed exact %s, the remainders range over [%g, %g]", b1, mn, mx);
    }
}

/* One binary rule at precision F on one pair of operands: every sample pair. */
static void check_bin_pair(int op, int F, const operand *A, const operand *B)
{
    er_interval res = apply_bin(op, A->iv, B->iv), at = er_interval_at_prec(F, res), into = er_interval_round_into(F, res);
    er_interval seed = er_interval_top();
    int i, j, has_seed = 0;
    char b1[200], b2[200], b3[200];
    ivstr(A->iv, b1, sizeof b1);
    ivstr(B->iv, b2, sizeof b2);
    ivstr(res, b3, sizeof b3);
    snprintf(ctxbuf, sizeof ctxbuf, "%s at %s: a %s, b %s -> %s", bin_names[op], er_format_name(F), b1, b2, b3);
    if (isnan(res.lo) || isnan(res.hi)) bad("%s: NaN endpoint", bin_names[op]);
    if (res.exact && !er_interval_endpoint_exact(res.lo)) bad("%s: exact with a wide endpoint", bin_names[op]);
    /* Exact claims against MPFR. */
    if (op == OP_DIV && res.exact) bad("div: claimed exact");
    if (op == OP_MOD) check_mod_exact(A->iv, B->iv, res);
    else if (op != OP_DIV && res.exact) {
        exact_bin_bounds(op, A->iv, B->iv);
        check_exact_endpoints(bin_names[op], res, T1, T2);
    }
    /* The seed's arith_result on nearest endpoints encloses too, and contains the tight rule. */
    if ((op == OP_ADD || op == OP_SUB || op == OP_MUL) && !er_interval_is_top(res)) {
        double lo, hi;
        if (op == OP_ADD) {
            lo = A->iv.lo + B->iv.lo;
            hi = A->iv.hi + B->iv.hi;
        } else if (op == OP_SUB) {
            lo = A->iv.lo - B->iv.hi;
            hi = A->iv.hi - B->iv.lo;
        } else {
            double p[4];
            int k;
            p[0] = A->iv.lo * B->iv.lo;
            p[1] = A->iv.lo * B->iv.hi;
            p[2] = A->iv.hi * B->iv.lo;
            p[3] = A->iv.hi * B->iv.hi;
            lo = hi = p[0];
            for (k = 1; k < 4; k++) {
                if (p[k] < lo) lo = p[k];
                if (p[k] > hi) hi = p[k];
            }
        }
        seed = er_interval_arith_result(A->iv, B->iv, lo, hi);
        has_seed = 1;
        checks++;
        if (!er_interval_is_within(seed, res)) {
            char b4[200];
            ivstr(seed, b4, sizeof b4);
            bad("%s: tight result not within arith_result %s", bin_names[op], b4);
        }
    }
    for (i = 0; i < A->n; i++) {
        for (j = 0; j < B->n; j++) {
            const mval *x = &A->s[i], *y = &B->s[j];
            char sx[64], sy[64];
            size_t L = strlen(ctxbuf);
            snprintf(ctxbuf + L, sizeof ctxbuf - L, "; x %s y %s", mval_str(F, x, sx), mval_str(F, y, sy));
            mval_set(F, X, x);
            mval_set(F, Y, y);
            switch (op) {
            case OP_ADD: mpfr_add(RD, X, Y, MPFR_RNDN); mpfr_set(RU, RD, MPFR_RNDN); break;
            case OP_SUB: mpfr_sub(RD, X, Y, MPFR_RNDN); mpfr_set(RU, RD, MPFR_RNDN); break;
            case OP_MUL: mpfr_mul(RD, X, Y, MPFR_RNDN); mpfr_set(RU, RD, MPFR_RNDN); break;
            case OP_DIV:
                mpfr_div(RD, X, Y, MPFR_RNDD);
                mpfr_div(RU, X, Y, MPFR_RNDU);
                break;
            case OP_MAX:
            case OP_MIN:
                /* A NaN operand: C's fmax gives the other, an interpreter may give NaN.  Both. */
                if (mpfr_nan_p(X) || mpfr_nan_p(Y)) {
                    mpfr_set(RD, mpfr_nan_p(X) ? Y : X, MPFR_RNDN);
                    mpfr_set_nan(RU);
                } else {
                    int gt = mpfr_greater_p(X, Y);
                    mpfr_set(RD, (op == OP_MAX) == gt ? X : Y, MPFR_RNDN);
                    mpfr_set(RU, RD, MPFR_RNDN);
                }
                break;
            default:
                mpfr_fmod(RD, X, Y, MPFR_RNDN); /* C's remainder: the dividend's sign; exact */
                mpfr_set(RU, RD, MPFR_RNDN);
                break;
            }
            check_real(bin_names[op], res, RD, RU);
            if (has_seed) check_real("arith_result", seed, RD, RU);
            if (!is_int_fmt(F)) {
                check_float_machine(F, at, into, RD, RU);
            } else {
                uint64_t ux = (uint64_t)x->i, uy = (uint64_t)y->i;
                switch (op) {
                case OP_ADD: check_int_machine(F, at, into, wrap_to(F, ux + uy)); break;
                case OP_SUB: check_int_machine(F, at, into, wrap_to(F, ux - uy)); break;
                case OP_MUL: check_int_machine(F, at, into, wrap_to(F, ux * uy)); break;
                case OP_DIV:
                    if (y->i != 0 && !(x->i == INT64_MIN && y->i == -1))
                        check_int_machine(F, at, into, wrap_to(F, (uint64_t)(x->i / y->i)));
                    break;
                case OP_MOD:
                    if (y->i != 0 && !(x->i == INT64_MIN && y->i == -1))
                        check_int_machine(F, at, into, wrap_to(F, (uint64_t)(x->i % y->i)));
                    break;
                case OP_MAX: check_int_machine(F, at, into, x->i > y->i ? x->i : y->i); break;
                default: check_int_machine(F, at, into, x->i < y->i ? x->i : y->i); break;
                }
            }
            ctxbuf[L] = 0;
        }
    }
}

/* Lattice operations, truthiness, comparison folds and the text form on one pair of operands. */
static void check_lattice_pair(int F, const operand *A, const operand *B)
{
    er_interval a = A->iv, b = B->iv, j = er_interval_join(a, b), m = er_interval_inter(a, b);
    er_interval ro = er_interval_round_out(a), back;
    int lt = er_interval_cmplt_decides(a, b), eq = er_interval_cmpeq_decides(a, b), i, k;
    int within = er_interval_is_within(a, b);
    char b1[200], b2[200], txt[ER_INTERVAL_SEXP_MAX];
    ivstr(a, b1, sizeof b1);
    ivstr(b, b2, sizeof b2);
    snprintf(ctxbuf, sizeof ctxbuf, "lattice at %s: a %s, b %s", er_format_name(F), b1, b2);
    checks++;
    if (!er_interval_is_within(j, a) || !er_interval_is_within(j, b) || !er_interval_is_within(a, m) ||
        !er_interval_is_within(b, m) || !er_interval_is_within(ro, a))
        bad("join/inter/round_out containment");
    if (er_interval_to_sexp(a, txt, sizeof txt) != ER_OK || er_interval_of_sexp(txt, &back) != ER_OK ||
        dbits(back.lo) != dbits(a.lo) || dbits(back.hi) != dbits(a.hi) || back.integral != a.integral ||
        back.exact != a.exact)
        bad("text form does not read back: %s", txt);
    for (i = 0; i < A->n; i++) {
        const mval *x = &A->s[i];
        checks++;
        if (!fits_mval(F, a, x)) bad("sample %d outside its own operand", i);
        if (!fits_mval(F, j, x)) bad("sample %d of a not in the join", i);
        if (!fits_mval(F, ro, x)) bad("sample %d of a not in round_out", i);
        if (fits_mval(F, b, x) && !fits_mval(F, m, x)) bad("sample %d in a and b but not in inter", i);
        if (is_int_fmt(F) ? 0 : isnan(x->d)) {
            if (er_interval_definitely_true(a) || er_interval_definitely_false(a)) bad("NaN sample, truth decided");
        } else {
            int zero = is_int_fmt(F) ? x->i == 0 : x->d == 0;
            if (er_interval_definitely_true(a) && zero) bad("definitely_true but sample %d is 0", i);
            if (er_interval_definitely_false(a) && !zero) bad("definitely_false but sample %d is not 0", i);
        }
        if (er_interval_is_singleton(a)) {
            mval_set(F, X, x);
            if (mpfr_nan_p(X) || mpfr_cmp_d(X, a.lo) != 0) bad("singleton, but sample %d differs", i);
        }
        for (k = 0; k < B->n; k++) {
            const mval *y = &B->s[k];
            int xlt, xeq;
            if (is_int_fmt(F)) {
                xlt = x->i < y->i;
                xeq = x->i == y->i;
            } else {
                xlt = x->d < y->d;
                xeq = x->d == y->d;
            }
            checks++;
            if ((lt == ER_INTERVAL_TRUE && !xlt) || (lt == ER_INTERVAL_FALSE && xlt))
                bad("cmplt decided %d, samples %d %d say %d", lt, i, k, xlt);
            if ((eq == ER_INTERVAL_TRUE && !xeq) || (eq == ER_INTERVAL_FALSE && xeq))
                bad("cmpeq decided %d, samples %d %d say %d", eq, i, k, xeq);
        }
    }
    for (k = 0; k < B->n; k++) {
        checks++;
        if (within && !fits_mval(F, a, &B->s[k])) bad("is_within(a, b), but sample %d of b is not in a", k);
        if (!fits_mval(F, j, &B->s[k])) bad("sample %d of b not in the join", k);
    }
    if ((er_interval_is_top(a) || er_interval_is_top(b)) && (lt == ER_INTERVAL_TRUE || eq == ER_INTERVAL_TRUE))
        bad("comparison folded to true on a possibly-NaN operand");
}

/* ---- Tests. ---- */

START_TEST(test_binary_rules)
{
    uint64_t seed = er_test_seed("interval_sound binary_rules");
    int F, op, it, n = 40 * scale;
    long c0 = checks, f0 = fails;
    rng = seed;
    for (F = 0; F < ER_FMT_COUNT; F++) {
        for (op = 0; op < OP_NBIN; op++) {
            for (it = 0; it < n; it++) {
                operand A, B;
                int ma = M_ANY, mb = M_ANY;
                if (op == OP_DIV && (it & 1)) mb = M_SIGNED;
                if (op == OP_MOD && it % 4 != 3) {
                    ma = M_NONNEG_INT;
                    mb = M_DIVISOR_POINT;
                }
                gen_operand(F, ma, &A);
                gen_operand(F, mb, &B);
                check_bin_pair(op, F, &A, &B);
            }
        }
    }
    printf("binary_rules: %ld checks, %ld failures\n", checks - c0, fails - f0);
    ck_assert_msg(fails == f0, "binary rules: %ld failures (seed 0x%llx)", fails - f0, (unsigned long long)seed);
}
END_TEST

enum { U_NEG, U_TRUNC, U_RELU, U_SATUR01, U_EXP, U_ABS1, U_SQRT, U_NUN };
static const char *un_names[U_NUN] = {"neg", "trunc", "relu", "satur01", "exp_like", "abs_le_1", "sqrt"};

static er_interval apply_un(int op, er_interval t)
{
    switch (op) {
    case U_NEG: return er_interval_neg(t);
    case U_TRUNC: return er_interval_trunc(t);
    case U_RELU: return er_interval_relu(t);
    case U_SATUR01: return er_interval_satur01(t);
    case U_EXP: return er_interval_exp_like(t);
    case U_ABS1: return er_interval_abs_le_1(t);
    default: return er_interval_sqrt(t);
    }
}

/* The real results of a unary operation on x: a list of brackets [lo_k, hi_k] (RD, RU). */
static int unary_results(int op, mpfr_t x, mpfr_t *lo, mpfr_t *hi)
{
    int n = 0;
    switch (op) {
    case U_NEG: mpfr_neg(lo[0], x, MPFR_RNDN); mpfr_set(hi[0], lo[0], MPFR_RNDN); return 1;
    case U_TRUNC: mpfr_trunc(lo[0], x); mpfr_set(hi[0], lo[0], MPFR_RNDN); return 1;
    case U_RELU: /* fmax(0, x): NaN gives 0 */
        if (mpfr_nan_p(x) || mpfr_sgn(x) < 0) mpfr_set_zero(lo[0], 1);
        else mpfr_set(lo[0], x, MPFR_RNDN);
        mpfr_set(hi[0], lo[0], MPFR_RNDN);
        return 1;
    case U_SATUR01: /* C's fmin(1, fmax(0, x)) gives 0 for NaN, an interpreter NaN: both */
        if (mpfr_nan_p(x)) {
            mpfr_set_zero(lo[0], 1);
            mpfr_set(hi[0], lo[0], MPFR_RNDN);
            mpfr_set_nan(lo[1]);
            mpfr_set_nan(hi[1]);
            return 2;
        }
        if (mpfr_sgn(x) < 0) mpfr_set_zero(lo[0], 1);
        else if (mpfr_cmp_ui(x, 1) > 0) mpfr_set_ui(lo[0], 1, MPFR_RNDN);
        else mpfr_set(lo[0], x, MPFR_RNDN);
        mpfr_set(hi[0], lo[0], MPFR_RNDN);
        return 1;
    case U_EXP:
        mpfr_exp(lo[n], x, MPFR_RNDD);
        mpfr_exp(hi[n++], x, MPFR_RNDU);
        mpfr_exp2(lo[n], x, MPFR_RNDD);
        mpfr_exp2(hi[n++], x, MPFR_RNDU);
        return n;
    case U_ABS1:
        mpfr_sin(lo[n], x, MPFR_RNDD);
        mpfr_sin(hi[n++], x, MPFR_RNDU);
        mpfr_cos(lo[n], x, MPFR_RNDD);
        mpfr_cos(hi[n++], x, MPFR_RNDU);
        mpfr_tanh(lo[n], x, MPFR_RNDD);
        mpfr_tanh(hi[n++], x, MPFR_RNDU);
        return n;
    default:
        mpfr_sqrt(lo[0], x, MPFR_RNDD);
        mpfr_sqrt(hi[0], x, MPFR_RNDU);
        return 1;
    }
}

START_TEST(test_unary_rules)
{
    uint64_t seed = er_test_seed("interval_sound unary_rules");
    int F, op, it, n = 100 * scale, i, k, nr;
    long c0 = checks, f0 = fails;
    mpfr_t lo[3], hi[3];
    for (k = 0; k < 3; k++) mpfr_inits2(PREC, lo[k], hi[k], (mpfr_ptr)0);
    rng = seed;
    for (F = 0; F < ER_FMT_COUNT; F++) {
        for (op = 0; op < U_NUN; op++) {
            for (it = 0; it < n; it++) {
                operand A;
                er_interval res, at, into;
                char b1[200], b3[200];
                gen_operand(F, op != U_SQRT || it % 3 == 0 ? M_ANY : (it % 3 == 1 ? M_NONNEG_INT : M_NONNEG), &A);
                res = apply_un(op, A.iv);
                at = er_interval_at_prec(F, res);
                into = er_interval_round_into(F, res);
                ivstr(A.iv, b1, sizeof b1);
                ivstr(res, b3, sizeof b3);
                snprintf(ctxbuf, sizeof ctxbuf, "%s at %s: a %s -> %s", un_names[op], er_format_name(F), b1, b3);
                if (isnan(res.lo) || isnan(res.hi)) bad("NaN endpoint");
                /* Exact claims: the rule's formula on the exact endpoints. */
                if (res.exact) {
                    if (op == U_EXP || op == U_ABS1) {
                        bad("%s: claimed exact", un_names[op]);
                    } else {
                        mpfr_set_d(X, A.iv.lo, MPFR_RNDN);
                        mpfr_set_d(Y, A.iv.hi, MPFR_RNDN);
                        if (op == U_NEG) {
                            unary_results(op, Y, lo, hi);
                            unary_results(op, X, lo + 1, hi + 1);
                        } else {
                            unary_results(op, X, lo, hi);
                            unary_results(op, Y, lo + 1, hi + 1);
                        }
                        if (mpfr_cmp(lo[0], hi[0]) != 0 || mpfr_cmp(lo[1], hi[1]) != 0)
                            bad("%s: claimed exact, but an endpoint's result is not a double", un_names[op]);
                        check_exact_endpoints(un_names[op], res, lo[0], lo[1]);
                    }
                }
                for (i = 0; i < A.n; i++) {
                    char sx[64];
                    size_t L = strlen(ctxbuf);
                    snprintf(ctxbuf + L, sizeof ctxbuf - L, "; x %s", mval_str(F, &A.s[i], sx));
                    mval_set(F, X, &A.s[i]);
                    nr = unary_results(op, X, lo, hi);
                    for (k = 0; k < nr; k++) {
                        check_real(un_names[op], res, lo[k], hi[k]);
                        if (!is_int_fmt(F)) {
                            check_float_machine(F, at, into, lo[k], hi[k]);
                        } else if (op == U_NEG) {
                            check_int_machine(F, at, into, wrap_to(F, (uint64_t)0 - (uint64_t)A.s[i].i));
                        } else if ((op == U_TRUNC || op == U_RELU || op == U_SATUR01) && mpfr_number_p(lo[k]) && mpfr_integer_p(lo[k]) && mpfr_equal_p(lo[k], hi[k]) &&
                                   mpfr_fits_intmax_p(lo[k], MPFR_RNDN)) {
                            /* An integer result computed in the integer type. */
                            check_int_machine(F, at, into, (int64_t)mpfr_get_sj(lo[k], MPFR_RNDN));
                        }
                    }
                    ctxbuf[L] = 0;
                }
            }
        }
    }
    for (k = 0; k < 3; k++) mpfr_clears(lo[k], hi[k], (mpfr_ptr)0);
    printf("unary_rules: %ld checks, %ld failures\n", checks - c0, fails - f0);
    ck_assert_msg(fails == f0, "unary rules: %ld failures (seed 0x%llx)", fails - f0, (unsigned long long)seed);
}
END_TEST

START_TEST(test_lattice_random)
{
    uint64_t seed = er_test_seed("interval_sound lattice");
    int F, it, n = 250 * scale;
    long c0 = checks, f0 = fails;
    rng = seed;
    for (F = 0; F < ER_FMT_COUNT; F++) {
        for (it = 0; it < n; it++) {
            operand A, B;
            gen_operand(F, M_ANY, &A);
            if (it % 4 == 0) {
                B = A; /* equal intervals: equality and singleton folds */
            } else {
                gen_operand(F, M_ANY, &B);
            }
            check_lattice_pair(F, &A, &B);
        }
    }
    printf("lattice: %ld checks, %ld failures\n", checks - c0, fails - f0);
    ck_assert_msg(fails == f0, "lattice: %ld failures (seed 0x%llx)", fails - f0, (unsigned long long)seed);
}
END_TEST

/* er_interval_round_into and er_interval_at_prec against er_convert from every format to every format,
 * every direction, saturating and flushing or not. */
START_TEST(test_conversions)
{
    static const unsigned opts[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_OUT, ER_OPT_SATURATE | ER_OPT_FTZ_OUT};
    uint64_t seed = er_test_seed("interval_sound conversions");
    int S, T, it, n = 20 * scale, i, dir, o;
    long c0 = checks, f0 = fails;
    rng = seed;
    for (S = 0; S < ER_FMT_COUNT; S++) {
        for (it = 0; it < n; it++) {
            operand A;
            char b1[200];
            gen_operand(S, M_ANY, &A);
            ivstr(A.iv, b1, sizeof b1);
            for (T = 0; T < ER_FMT_COUNT; T++) {
                er_interval into = er_interval_round_into(T, A.iv), at = er_interval_at_prec(T, A.iv);
                char b2[200], b3[200];
                ivstr(into, b2, sizeof b2);
                ivstr(at, b3, sizeof b3);
                snprintf(ctxbuf, sizeof ctxbuf, "convert %s -> %s: %s -> round_into %s, at_prec %s", er_format_name(S),
                         er_format_name(T), b1, b2, b3);
                for (i = 0; i < A.n; i++) {
                    uint64_t src;
                    if (is_int_fmt(S)) {
                        src = (uint64_t)A.s[i].i;
                        if (er_fmt_get(S).width < 64) src &= (UINT64_C(1) << er_fmt_get(S).width) - 1u;
                    } else {
                        src = er_convert(ER_FMT_F64, S, dbits(A.s[i].d), ER_RND_NEAREST_EVEN, 0u).bits;
                    }
                    for (dir = 0; dir < ER_RND_COUNT; dir++) {
                        for (o = 0; o < 4; o++) {
                            er_res r = er_convert(S, T, src, dir, opts[o]);
                            mval m;
                            if (is_int_fmt(T)) {
                                er_val v = er_decode(T, r.bits);
                                m.i = v.sign ? (int64_t)(0 - v.sig) : (int64_t)v.sig;
                                m.d = (double)m.i;
                            } else {
                                m.d = bitsd(er_convert(T, ER_FMT_F64, r.bits, ER_RND_NEAREST_EVEN, 0u).bits);
                                m.i = 0;
                            }
                            checks++;
                            if (!fits_mval(T, into, &m) || !fits_mval(T, at, &m)) {
                                char sx[64], sm[64];
                                bad("sample %s (dir %d, opts %u) converts to %s", mval_str(S, &A.s[i], sx), dir,
                                     opts[o], mval_str(T, &m, sm));
                            }
                            /* Exact claims: samples 0 and 1 are the endpoints of an exact operand
                             * (attained); an exact result says they convert to themselves (flushing
                             * aside: it moves a subnormal endpoint inward, to zero, inside). */
                            if (into.exact && A.iv.exact && i < 2 && !(opts[o] & ER_OPT_FTZ_OUT) &&
                                !er_interval_equal(into, er_interval_dtype_range(T))) {
                                mval_set(T, X, &m);
                                if (mpfr_nan_p(X) || mpfr_cmp_d(X, i == 0 ? into.lo : into.hi) != 0)
                                    bad("round_into claims exact, endpoint sample %d converts to %a", i,
                                         mpfr_get_d(X, MPFR_RNDN));
                            }
                        }
                    }
                }
            }
        }
    }
    printf("conversions: %ld checks, %ld failures\n", checks - c0, fails - f0);
    ck_assert_msg(fails == f0, "conversions: %ld failures (seed 0x%llx)", fails - f0, (unsigned long long)seed);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("interval_sound");
    TCase *tc;
    SRunner *sr;
    int nf;
    const char *sc = getenv("EXACTREF_INTERVAL_SCALE");
    if (sc && atoi(sc) > 0) scale = atoi(sc);
    mpfr_inits2(PREC, X, Y, R, RD, RU, T1, T2, T3, (mpfr_ptr)0);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_binary_rules);
    tcase_add_test(tc, test_unary_rules);
    tcase_add_test(tc, test_lattice_random);
    tcase_add_test(tc, test_conversions);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    mpfr_clears(X, Y, R, RD, RU, T1, T2, T3, (mpfr_ptr)0);
    mpfr_free_cache();
    return nf ? 1 : 0;
}
