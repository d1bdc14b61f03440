/* mo_oracle.c: the math library's MPFR oracle (see mo_oracle.h).  It calls the library only in mo_check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mo_oracle.h"

#define U64 UINT64_C

long mo_fails, mo_checks;

static mpfr_t mo_maxv[OF_NFMT], y, z, mid, w;
static int mo_emax[OF_NFMT]; /* binade of the largest finite value */
static of_val vals[3];
static int ready;

static int row(const of_fmt *T) { return (int)(T - of_fmts); }

void mo_init(void)
{
    int i;
    if (ready)
        return;
    of_init();
    for (i = 0; i < OF_NFMT; i++) {
        mpfr_init2(mo_maxv[i], 64);
        mpfr_set_str(mo_maxv[i], of_fmts[i].max, 0, MPFR_RNDN);
        mo_emax[i] = (int)mpfr_get_exp(mo_maxv[i]) - 1;
    }
    mpfr_inits2(160, y, z, mid, w, (mpfr_ptr)0);
    for (i = 0; i < 3; i++)
        of_val_init(&vals[i]);
    ready = 1;
}

void mo_fini(void)
{
    int i;
    if (!ready)
        return;
    for (i = 0; i < OF_NFMT; i++)
        mpfr_clear(mo_maxv[i]);
    mpfr_clears(y, z, mid, w, (mpfr_ptr)0);
    for (i = 0; i < 3; i++)
        of_val_clear(&vals[i]);
    of_fini();
    ready = 0;
}

const char *mo_op_name(int op)
{
    static const char *n[] = {"sqrt", "rsqrt", "exp", "exp2", "log", "log2", "tanh", "sinh", "cosh",
                              "sin", "cos", "tan", "atan", "floor", "ceil", "add", "sub", "mul",
                              "div", "fmod", "atan2", "pow"};
    if (op == MO_FMA)
        return "fma";
    return op >= 0 && op < (int)(sizeof n / sizeof n[0]) ? n[op] : "?";
}

/* The function itself, in MPFR (C's reading of 1/sqrt(-0) = -inf). */
static int mo_eval(int op, mpfr_ptr r, mpfr_rnd_t m)
{
    mpfr_srcptr a = vals[0].v, b = vals[1].v, c = vals[2].v;
    switch (op) {
    case MO_FMA: return mpfr_fma(r, a, b, c, m);
    case ER_MATH_SQRT: return mpfr_sqrt(r, a, m);
    case ER_MATH_RSQRT:
        if (mpfr_zero_p(a)) {
            mpfr_set_inf(r, mpfr_signbit(a) ? -1 : 1);
            return 0;
        }
        return mpfr_rec_sqrt(r, a, m);
    case ER_MATH_EXP: return mpfr_exp(r, a, m);
    case ER_MATH_EXP2: return mpfr_exp2(r, a, m);
    case ER_MATH_LOG: return mpfr_log(r, a, m);
    case ER_MATH_LOG2: return mpfr_log2(r, a, m);
    case ER_MATH_TANH: return mpfr_tanh(r, a, m);
    case ER_MATH_SINH: return mpfr_sinh(r, a, m);
    case ER_MATH_COSH: return mpfr_cosh(r, a, m);
    case ER_MATH_SIN: return mpfr_sin(r, a, m);
    case ER_MATH_COS: return mpfr_cos(r, a, m);
    case ER_MATH_TAN: return mpfr_tan(r, a, m);
    case ER_MATH_ATAN: return mpfr_atan(r, a, m);
    case ER_MATH_FLOOR: return mpfr_rint_floor(r, a, m);
    case ER_MATH_CEIL: return mpfr_rint_ceil(r, a, m);
    case ER_MATH_ADD: return mpfr_add(r, a, b, m);
    case ER_MATH_SUB: return mpfr_sub(r, a, b, m);
    case ER_MATH_MUL: return mpfr_mul(r, a, b, m);
    case ER_MATH_DIV: return mpfr_div(r, a, b, m);
    case ER_MATH_FMOD: return mpfr_fmod(r, a, b, m);
    case ER_MATH_ATAN2: return mpfr_atan2(r, a, b, m);
    case ER_MATH_POW: return mpfr_pow(r, a, b, m);
    }
    abort();
}

static uint64_t sign_bits(const of_fmt *T, int s) { return (T->is_signed && s) ? U64(1) << (T->width - 1) : 0; }

/* The NaN of T for a NaN of sign s and payload p of pb bits (docs/formats.md, conversion rule). */
static uint64_t nan_bits(const of_fmt *T, int s, uint64_t p, int pb)
{
    uint64_t a, f;
    switch (T->nan) {
    case OF_NAN_IEEE:
        a = pb >= T->mbits ? p >> (pb - T->mbits) : p << (T->mbits - pb);
        f = (a & of_mask(T->mbits)) | (U64(1) << (T->mbits - 1));
        return sign_bits(T, s) | (((of_mask(T->ebits) << T->mbits) | f) << T->pad);
    case OF_NAN_FN: return sign_bits(T, s) | (of_mask(T->ebits + T->mbits) << T->pad);
    case OF_NAN_FNUZ: return U64(1) << (T->width - 1);
    default: return 0; /* no NaN: +0 */
    }
}

static uint64_t max_bits(const of_fmt *T, int s) { return sign_bits(T, s) | T->max_bits; }

static int to_inf(int dir, int s)
{
    return dir == ER_RND_NEAREST_EVEN || dir == ER_RND_NEAREST_AWAY || (dir == ER_RND_NEGATIVE_INF && s) ||
           (dir == ER_RND_POSITIVE_INF && !s);
}

static void overflow(const of_fmt *T, int s, int dir, mo_exp *e)
{
    e->must = ER_FLAG_OVERFLOW | ER_FLAG_INEXACT;
    e->mustnot = ER_FLAG_UNDERFLOW | ER_FLAG_DIVBYZERO;
    if (!to_inf(dir, s))
        e->bits = max_bits(T, s);
    else if (T->has_inf)
        e->bits = sign_bits(T, s) | ((of_mask(T->ebits) << T->mbits) << T->pad);
    else if (T->nan != OF_NAN_NONE)
        e->bits = nan_bits(T, s, 0, 0);
    else
        e->bits = max_bits(T, s);
}

/* Packed magnitude of |v|, a finite nonzero value of T's precision (beyond the largest finite value
 * too, up to the end of its binade): the field formula of docs/formats.md read backwards. */
static uint64_t encode(const of_fmt *T, mpfr_srcptr v)
{
    long e = (long)mpfr_get_exp(v) - 1, q;
    uint64_t E, M;
    if (T->has_sub && e < T->emin) {
        E = 0;
        q = T->emin - T->mbits;
    } else {
        E = (uint64_t)(e + T->bias);
        q = e - T->mbits;
    }
    mpfr_abs(w, v, MPFR_RNDN);
    mpfr_mul_2si(w, w, -q, MPFR_RNDN);
    if (!mpfr_integer_p(w)) {
        mpfr_fprintf(stderr, "mo_oracle: encode of %Ra, not a value of %s\n", v, T->name);
        abort();
    }
    M = (uint64_t)mpfr_get_uj(w, MPFR_RNDN);
    if (E > 0 || !T->has_sub)
        M -= U64(1) << T->mbits;
    return (E << T->mbits) + M;
}

/* The exponent of the least positive value's grid at |v|: ulp(v) = 2^q. */
static long ulp_exp(const of_fmt *T, mpfr_srcptr v)
{
    long e = mpfr_zero_p(v) ? T->emin : (long)mpfr_get_exp(v) - 1;
    if (e < T->emin)
        e = T->emin;
    return e - T->mbits;
}

/* The format's range: MPFR's exponents are one above IEEE's (0.1xxx * 2^e). */
static void narrow(const of_fmt *T)
{
    mpfr_set_emin(T->has_sub ? T->emin - T->prec + 2 : T->emin + 1);
    mpfr_set_emax(mo_emax[row(T)] + 1);
}

/* The widest range, for the oracle's own exact steps. */
static void wide(void)
{
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
}

void mo_expect(int op, const of_fmt *T, const uint64_t *in, int n, int dir, mo_exp *e)
{
    mpfr_exp_t emin0 = mpfr_get_emin(), emax0 = mpfr_get_emax();
    int i, t, ovf, unf, s, all_finite = 1, nanin = -1;
    mpfr_rnd_t m;
    uint64_t maxmag = T->max_bits >> T->pad, mag;
    for (i = 0; i < n; i++) {
        of_decode(T, in[i], &vals[i]);
        if (vals[i].cls == OF_NAN || vals[i].cls == OF_INF)
            all_finite = 0;
        if (vals[i].cls == OF_NAN && nanin < 0)
            nanin = i;
    }
    e->must = 0;
    e->mustnot = 0;
    switch (dir) {
    case ER_RND_ZERO: case ER_RND_ODD: m = MPFR_RNDZ; break;
    case ER_RND_NEGATIVE_INF: m = MPFR_RNDD; break;
    case ER_RND_POSITIVE_INF: m = MPFR_RNDU; break;
    default: m = MPFR_RNDN; break;
    }
    narrow(T);
    mpfr_set_prec(y, T->prec);
    mpfr_clear_flags();
    t = mo_eval(op, y, m);
    t = mpfr_check_range(y, t, m);
    if (T->has_sub)
        t = mpfr_subnormalize(y, t, m);
    ovf = mpfr_overflow_p();
    unf = mpfr_underflow_p();
    s = mpfr_signbit(y) ? 1 : 0;
    wide();

    if (mpfr_nan_p(y)) {
        if (nanin >= 0) {
            e->bits = nan_bits(T, vals[nanin].sign, vals[nanin].payload, vals[nanin].pbits);
            e->mustnot = ER_FLAG_INVALID | ER_FLAG_INEXACT;
        } else {
            e->bits = nan_bits(T, 0, 0, 0);
            e->must = ER_FLAG_INVALID;
        }
        goto done;
    }
    if (ovf) {
        overflow(T, s, dir, e);
        goto done;
    }
    if (mpfr_inf_p(y)) { /* an exact infinity */
        if (T->has_inf) {
            e->bits = sign_bits(T, s) | ((of_mask(T->ebits) << T->mbits) << T->pad);
        } else if (!T->is_signed && s) {
            e->bits = nan_bits(T, 0, 0, 0);
        } else if (T->nan != OF_NAN_NONE) {
            e->bits = nan_bits(T, s, 0, 0);
        } else {
            e->bits = max_bits(T, s);
        }
        if (all_finite)
            e->must |= ER_FLAG_DIVBYZERO;
        else
            e->mustnot |= ER_FLAG_DIVBYZERO;
        goto done;
    }
    e->mustnot = ER_FLAG_DIVBYZERO | ER_FLAG_INVALID;
    if (!T->is_signed && (s && !mpfr_zero_p(y))) { /* f8E8M0FNU: a negative value is NaN */
        e->bits = nan_bits(T, 0, 0, 0);
        e->must = ER_FLAG_INVALID;
        e->mustnot = 0;
        goto done;
    }
    if (mpfr_zero_p(y) && t == 0) { /* an exact zero */
        if (!T->has_sub) {
            e->bits = nan_bits(T, 0, 0, 0);
            e->must = ER_FLAG_INVALID;
            e->mustnot = 0;
        } else {
            e->bits = T->has_negzero ? sign_bits(T, s) : 0;
            e->mustnot = ER_FLAG_INEXACT | ER_FLAG_UNDERFLOW | ER_FLAG_OVERFLOW | ER_FLAG_INVALID;
        }
        goto done;
    }
    if (!T->has_sub && (unf || mpfr_zero_p(y))) { /* f8E8M0FNU: no zero, a tiny value is the least one */
        if (s) {
            e->bits = nan_bits(T, 0, 0, 0);
            e->must = ER_FLAG_INVALID;
            e->mustnot = 0;
            goto done;
        }
        e->bits = T->minpos_bits;
        e->must = ER_FLAG_INEXACT; /* underflow: the core's convention without subnormals, not checked */
        goto done;
    }
    /* A finite value (or a zero an inexact result underflowed to). */
    mag = mpfr_zero_p(y) ? 0 : encode(T, y);
    if (dir == ER_RND_ODD && t != 0 && T->mbits > 0 && (mag & 1u) == 0)
        mag += 1; /* truncated to an even significand: the odd neighbour away from zero */
    if (dir == ER_RND_NEAREST_AWAY && t != 0) {
        /* Nearest; at an exact midpoint (which nearest-even resolved either way) away from zero. */
        mpfr_set_prec(z, T->prec);
        narrow(T);
        mpfr_clear_flags();
        i = mo_eval(op, z, MPFR_RNDZ);
        i = mpfr_check_range(z, i, MPFR_RNDZ);
        if (T->has_sub)
            i = mpfr_subnormalize(z, i, MPFR_RNDZ);
        wide();
        if (!mpfr_overflow_p()) {
            long q = ulp_exp(T, z);
            mpfr_abs(mid, z, MPFR_RNDN);
            mpfr_set_ui_2exp(w, 1, q - 1, MPFR_RNDN);
            mpfr_add(mid, mid, w, MPFR_RNDN); /* exact at 160 bits */
            mpfr_set_prec(z, 160);
            i = mo_eval(op, z, MPFR_RNDN);
            mpfr_abs(z, z, MPFR_RNDN);
            if (i == 0 && mpfr_equal_p(z, mid)) {
                mpfr_set_prec(z, T->prec);
                narrow(T);
                i = mo_eval(op, z, MPFR_RNDZ);
                i = mpfr_check_range(z, i, MPFR_RNDZ);
                if (T->has_sub)
                    mpfr_subnormalize(z, i, MPFR_RNDZ);
                wide();
                mag = (mpfr_zero_p(z) ? 0 : encode(T, z)) + 1;
            }
            mpfr_set_prec(z, 160);
        }
    }
    if (mag > maxmag) {
        overflow(T, s, dir, e);
        goto done;
    }
    if (mag == 0)
        e->bits = T->has_negzero ? sign_bits(T, s) : 0;
    else
        e->bits = sign_bits(T, s) | (mag << T->pad);
    if (t != 0) {
        e->must |= ER_FLAG_INEXACT;
        /* Underflow: certain below the least normal magnitude, impossible above it (at it, tininess
         * before or after rounding would differ: not checked). */
        if (T->has_sub && mag < (U64(1) << T->mbits))
            e->must |= ER_FLAG_UNDERFLOW;
        else if (mag > (U64(1) << T->mbits))
            e->mustnot |= ER_FLAG_UNDERFLOW;
    } else {
        e->mustnot |= ER_FLAG_INEXACT | ER_FLAG_UNDERFLOW;
    }
    e->mustnot |= ER_FLAG_OVERFLOW;
done:
    mpfr_set_emin(emin0);
    mpfr_set_emax(emax0);
    mpfr_set_prec(y, 160);
    mpfr_set_prec(z, 160);
}

int mo_check(const char *test, int op, int fmt, const uint64_t *in, int n, int dir)
{
    const of_fmt *T = of_get(fmt);
    mo_exp e;
    uint64_t r = ~U64(0);
    unsigned fl = ~0u;
    er_status st;
    if (op == MO_FMA)
        st = er_math_fma(fmt, in[0], in[1], in[2], dir, &r, &fl);
    else if (n == 1)
        st = er_math_unary((er_math_op)op, fmt, in[0], dir, &r, &fl);
    else
        st = er_math_binary((er_math_op)op, fmt, in[0], in[1], dir, &r, &fl);
    mo_expect(op, T, in, n, dir, &e);
    mo_checks++;
    if (st == ER_OK && r == e.bits && (fl & e.must) == e.must && (fl & e.mustnot) == 0)
        return 1;
    if (mo_fails++ < 30) {
        int i;
        printf("%s: %s %s(", test, T->name, mo_op_name(op));
        for (i = 0; i < n; i++)
            printf("%s0x%llx", i ? ", " : "", (unsigned long long)in[i]);
        printf(") %s: got 0x%llx flags 0x%x status %d, expected 0x%llx flags must 0x%x mustnot 0x%x\n",
               of_dir_name(dir), (unsigned long long)r, fl, st, (unsigned long long)e.bits, e.must,
               e.mustnot);
    }
    return 0;
}
