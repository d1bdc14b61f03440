/* math_fmt.c: the math library's functions in every float format: MPFR to 64 bits, then the core rounds. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <mpfr.h>

#include "exactref/math.h"
#include "exactref/core/er_round.h"

/*
 * How a result is made (docs/math.md, "Correct rounding"):
 *  1. the operands are decoded by the core and set EXACTLY into 64-bit MPFR numbers (no format has more
 *     than 53 significand bits);
 *  2. MPFR computes the function correctly rounded TOWARD ZERO at 64 bits, with its ternary value
 *     saying whether that was exact; MPFR guarantees correct rounding for every function used here;
 *  3. the 64-bit significand, its exponent and a sticky bit (the ternary value) go to the core's
 *     er_round, which rounds once, in integer arithmetic, into the format in the direction asked for.
 * Step 2's value t and the exact value v agree on every rounding boundary of a format of at most 53
 * bits: when t != v, v lies strictly between t and the next 64-bit number, an interval that contains
 * no number of 54 bits (representable values and midpoints), so v and "t plus a sticky bit" round
 * alike in every direction, round-to-odd included.  No double rounding can occur.
 */

#define ER_MATH_PREC 64
/* MPFR's default exponent range, set for the time of a call (the caller's is restored): wide enough
 * that every overflow and underflow of a format is decided by the core, never by MPFR. */
#define ER_MATH_EMAX ((mpfr_exp_t)1 << 30)

static const char *const er_math_names_[ER_MATH_OP_COUNT] = {
    "sqrt", "rsqrt", "exp", "exp2", "log", "log2", "tanh", "sinh", "cosh", "sin", "cos", "tan",
    "atan", "floor", "ceil", "add", "sub", "mul", "div", "fmod", "atan2", "pow"};

const char *er_math_op_name(er_math_op op)
{
    if ((int)op < 0 || (int)op >= ER_MATH_OP_COUNT)
        return NULL;
    return er_math_names_[op];
}

int er_math_op_arity(er_math_op op)
{
    if ((int)op < 0 || (int)op >= ER_MATH_OP_COUNT)
        return 0;
    return (int)op <= (int)ER_MATH_CEIL ? 1 : 2;
}

er_status er_math_op_from_name(const char *name, er_math_op *op)
{
    int i;
    if (!name || !op)
        return ER_EINVAL;
    for (i = 0; i < ER_MATH_OP_COUNT; i++)
        if (strcmp(name, er_math_names_[i]) == 0) {
            *op = (er_math_op)i;
            return ER_OK;
        }
    return ER_EINVAL;
}

/* The arguments every entry point validates: a float format, a direction, patterns of the format. */
static er_status er_math_check_(int fmt, int dir, const uint64_t *v, int n, const uint64_t *out)
{
    er_fmt d;
    int i;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || dir < 0 || dir >= ER_RND_COUNT || !out)
        return ER_EINVAL;
    d = er_fmt_get(fmt);
    if (d.kind != ER_KIND_FLOAT)
        return ER_EINVAL;
    for (i = 0; i < n; i++) {
        if (d.width < 64 && (v[i] >> d.width) != 0u)
            return ER_EPATTERN;
        if (d.pad && (v[i] & ((UINT64_C(1) << d.pad) - 1u)) != 0u)
            return ER_EPATTERN;
    }
    return ER_OK;
}

/* An operand set exactly into x (precision 64 holds every format's significand). */
static void er_math_set_(mpfr_ptr x, const er_val *v)
{
    switch (v->cls) {
    case ER_CLASS_NAN:
        mpfr_set_nan(x);
        break;
    case ER_CLASS_INF:
        mpfr_set_inf(x, v->sign ? -1 : 1);
        break;
    case ER_CLASS_ZERO:
        mpfr_set_zero(x, v->sign ? -1 : 1);
        break;
    default:
        mpfr_set_uj_2exp(x, (uintmax_t)v->sig, v->exp, MPFR_RNDN); /* exact */
        if (v->sign)
            mpfr_neg(x, x, MPFR_RNDN);
        break;
    }
}

/* One MPFR evaluation toward zero; returns the ternary value. */
static int er_math_eval_(er_math_op op, mpfr_ptr r, mpfr_srcptr x, mpfr_srcptr y, mpfr_rnd_t m)
{
    switch (op) {
    case ER_MATH_SQRT: return mpfr_sqrt(r, x, m);
    case ER_MATH_RSQRT:
        /* 1/sqrt(x): C's reading gives 1/sqrt(-0) = 1/-0 = -inf, where MPFR's rec_sqrt says +inf. */
        if (mpfr_zero_p(x)) {
            mpfr_set_inf(r, mpfr_signbit(x) ? -1 : 1);
            return 0;
        }
        return mpfr_rec_sqrt(r, x, m);
    case ER_MATH_EXP: return mpfr_exp(r, x, m);
    case ER_MATH_EXP2: return mpfr_exp2(r, x, m);
    case ER_MATH_LOG: return mpfr_log(r, x, m);
    case ER_MATH_LOG2: return mpfr_log2(r, x, m);
    case ER_MATH_TANH: return mpfr_tanh(r, x, m);
    case ER_MATH_SINH: return mpfr_sinh(r, x, m);
    case ER_MATH_COSH: return mpfr_cosh(r, x, m);
    case ER_MATH_SIN: return mpfr_sin(r, x, m);
    case ER_MATH_COS: return mpfr_cos(r, x, m);
    case ER_MATH_TAN: return mpfr_tan(r, x, m);
    case ER_MATH_ATAN: return mpfr_atan(r, x, m);
    /* floor and ceil of a value of at most 53 bits fit 64 bits: exact (their return value is not a
     * ternary value, so it is not used). */
    case ER_MATH_FLOOR: mpfr_floor(r, x); return 0;
    case ER_MATH_CEIL: mpfr_ceil(r, x); return 0;
    case ER_MATH_ADD: return mpfr_add(r, x, y, m);
    case ER_MATH_SUB: return mpfr_sub(r, x, y, m);
    case ER_MATH_MUL: return mpfr_mul(r, x, y, m);
    case ER_MATH_DIV: return mpfr_div(r, x, y, m);
    case ER_MATH_FMOD: return mpfr_fmod(r, x, y, m);
    case ER_MATH_ATAN2: return mpfr_atan2(r, x, y, m);
    case ER_MATH_POW: return mpfr_pow(r, x, y, m);
    }
    mpfr_set_nan(r);
    return 0;
}

/*
 * The common tail: r (the 64-bit value toward zero) with ternary value t, into format fmt.  ops are the
 * decoded operands (n of them) for NaN propagation and the flags.
 */
static er_res er_math_finish_(int fmt, mpfr_srcptr r, int t, const er_val *ops, int n, int dir)
{
    er_fmt d = er_fmt_get(fmt);
    int i, finite_ops = 1;
    er_res res;
    for (i = 0; i < n; i++)
        if (ops[i].cls == ER_CLASS_INF || ops[i].cls == ER_CLASS_NAN)
            finite_ops = 0;
    if (mpfr_nan_p(r)) {
        for (i = 0; i < n; i++)
            if (ops[i].cls == ER_CLASS_NAN) /* the first NaN operand, quieted, payload kept */
                return er_make_nan(fmt, ops[i].sign, ops[i].sig, ops[i].exp);
        res = er_make_nan(fmt, 0u, 0u, 0); /* an invalid operation: the default quiet NaN */
        res.flags |= ER_FLAG_INVALID;
        return res;
    }
    if (mpfr_inf_p(r)) {
        /* An exact infinity (MPFR's overflow toward zero gives its largest number, not infinity). */
        res = er_make_inf_(d, fmt, mpfr_signbit(r) ? 1u : 0u, 0u);
        if (finite_ops)
            res.flags |= ER_FLAG_DIVBYZERO;
        return res;
    }
    if (mpfr_zero_p(r)) {
        if (t == 0)
            return er_make_zero_(d, fmt, mpfr_signbit(r) ? 1u : 0u);
        /* Underflow below MPFR's range: a value far below every format's least positive number. */
        return er_round(fmt, mpfr_signbit(r) ? 1u : 0u, UINT64_C(1) << 63, -(1 << 30) - 63, 1u, dir, 0u);
    }
    {
        MPFR_DECL_INIT(s, ER_MATH_PREC);
        mpfr_exp_t e = mpfr_get_exp(r); /* r = 0.f * 2^e, f in [1/2, 1) */
        uint64_t sig;
        mpfr_mul_2si(s, r, ER_MATH_PREC - (long)e, MPFR_RNDN); /* exact: an integer in [2^63, 2^64) */
        mpfr_abs(s, s, MPFR_RNDN);
        sig = (uint64_t)mpfr_get_uj(s, MPFR_RNDN);
        return er_round(fmt, mpfr_signbit(r) ? 1u : 0u, sig, (er_i32)(e - ER_MATH_PREC), t != 0, dir, 0u);
    }
}

/* The whole computation of op on n decoded operands (fma: n = 3, op ignored). */
static er_res er_math_run_(int is_fma, er_math_op op, int fmt, const er_val *ops, int n, int dir)
{
    MPFR_DECL_INIT(a, ER_MATH_PREC);
    MPFR_DECL_INIT(b, ER_MATH_PREC);
    MPFR_DECL_INIT(c, ER_MATH_PREC);
    MPFR_DECL_INIT(r, ER_MATH_PREC);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_flags_t fl = mpfr_flags_save();
    int t, zero_sign_dir;
    er_res res;
    mpfr_set_emin(1 - ER_MATH_EMAX);
    mpfr_set_emax(ER_MATH_EMAX - 1);
    er_math_set_(a, &ops[0]);
    if (n > 1)
        er_math_set_(b, &ops[1]);
    if (n > 2)
        er_math_set_(c, &ops[2]);
    if (is_fma)
        t = mpfr_fma(r, a, b, c, MPFR_RNDZ);
    else
        t = er_math_eval_(op, r, a, b, MPFR_RNDZ);
    /* An exact zero sum of opposite terms is -0 when rounding toward -inf, +0 otherwise (IEEE 754
     * 6.3): the only place where the direction, not the value, decides. */
    zero_sign_dir = is_fma || op == ER_MATH_ADD || op == ER_MATH_SUB;
    if (zero_sign_dir && t == 0 && mpfr_zero_p(r) && dir == ER_RND_NEGATIVE_INF) {
        if (is_fma)
            mpfr_fma(r, a, b, c, MPFR_RNDD);
        else
            er_math_eval_(op, r, a, b, MPFR_RNDD);
    }
    res = er_math_finish_(fmt, r, t, ops, n, dir);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_flags_restore(fl, MPFR_FLAGS_ALL);
    return res;
}

/*
 * The four basic operations on finite nonzero operands without MPFR, in 128-bit integers: the same
 * contract for er_round (a 64-bit significand, normalised when the sticky bit is set, and the sticky
 * bit meaning "strictly more, by less than one unit"), so the same single rounding.  Zeros, infinities
 * and NaNs take the general path.  Where the compiler has no 128-bit integer, everything does.
 */
#if defined(__SIZEOF_INT128__)
#define ER_MATH_FAST 1
__extension__ typedef unsigned __int128 er_u128_;

/* (s + f) * 2^e, 0 < f < 1 when sticky (then s >= 2^63), into format fmt. */
static er_res er_round128_(int fmt, er_u32 sign, er_u128_ s, er_i32 e, er_u32 sticky, int dir)
{
    uint64_t hi = (uint64_t)(s >> 64);
    int z;
    if (hi == 0u)
        return er_round(fmt, sign, (uint64_t)s, e, sticky, dir, 0u);
    z = ER_CLZ64(hi);
    s <<= z;
    return er_round(fmt, sign, (uint64_t)(s >> 64), e + 64 - z, sticky | ((uint64_t)s != 0u), dir, 0u);
}

static int er_math_num_(const er_val *v) { return v->cls == ER_CLASS_NORMAL || v->cls == ER_CLASS_SUBNORMAL; }

/* Whether op is done here; the result in *res. */
static int er_math_fast_(er_math_op op, int fmt, const er_val *x, const er_val *y, int dir, er_res *res)
{
    uint64_t A, B;
    er_i32 ea, eb;
    er_u32 sa, sb;
    int za, zb;
    if (!er_math_num_(x) || !er_math_num_(y))
        return 0;
    za = ER_CLZ64(x->sig);
    zb = ER_CLZ64(y->sig);
    A = x->sig << za; /* |x| = A 2^ea, A in [2^63, 2^64) */
    B = y->sig << zb;
    ea = x->exp - za;
    eb = y->exp - zb;
    sa = x->sign;
    sb = y->sign;
    switch (op) {
    case ER_MATH_MUL: /* exact: a 128-bit product */
        *res = er_round128_(fmt, sa ^ sb, (er_u128_)A * B, ea + eb, 0u, dir);
        return 1;
    case ER_MATH_DIV: {
        /* (A 2^64) / B lies in (2^63, 2^65): the quotient and "the remainder is not zero". */
        er_u128_ n = (er_u128_)A << 64, q = n / B;
        *res = er_round128_(fmt, sa ^ sb, q, ea - eb - 64, (er_u32)(n - q * B != 0u), dir);
        return 1;
    }
    case ER_MATH_ADD:
    case ER_MATH_SUB: {
        er_u128_ X, Y, S;
        er_i32 d, e;
        if (op == ER_MATH_SUB)
            sb ^= 1u;
        if (ea < eb || (ea == eb && A < B)) { /* |x| >= |y| from here on */
            uint64_t t = A; er_i32 te = ea; er_u32 ts = sa;
            A = B; ea = eb; sa = sb;
            B = t; eb = te; sb = ts;
        }
        d = ea - eb;
        /* On the grid 2^(ea - 64): X = A 2^64 exactly; Y exactly when d <= 64, else rounded to odd
         * (the bits shifted out OR-ed into the last bit).  X is even on that grid, so X +- Y is then the
         * sum rounded to odd, and it keeps over 120 bits: its top 64 and a sticky bit are exact
         * information (docs/math.md). */
        X = (er_u128_)A << 64;
        if (d <= 64)
            Y = (er_u128_)B << (64 - d);
        else if (d < 128)
            Y = (er_u128_)(B >> (d - 64)) | (er_u128_)((B << (128 - d)) != 0u);
        else
            Y = 1u;
        e = ea - 64;
        if (sa == sb) {
            S = X + Y;
            if (S < X) { /* a carry out of 128 bits: halve, the dropped bit OR-ed into the last */
                S = (S >> 1) | (S & 1u) | ((er_u128_)1 << 127);
                e += 1;
            }
        } else {
            S = X - Y;
            if (S == 0u) { /* an exact zero of opposite terms: -0 toward -inf only (IEEE 754 6.3) */
                *res = er_make_zero_(er_fmt_get(fmt), fmt, dir == ER_RND_NEGATIVE_INF ? 1u : 0u);
                return 1;
            }
        }
        *res = er_round128_(fmt, sa, S, e, 0u, dir);
        return 1;
    }
    default:
        return 0;
    }
}

/* sqrt of a positive finite number: floor(sqrt(N)) of a 128-bit N with an even exponent, and "the
 * square is not N" as the sticky bit.  The start is binary64's sqrt (any start would do: one integer
 * Newton step and the exact corrections below decide). */
static int er_math_fast_sqrt_(int fmt, const er_val *x, int dir, er_res *res)
{
    er_u128_ N, sq;
    uint64_t r;
    er_i32 e;
    int z, k;
    if (!er_math_num_(x) || x->sign)
        return 0;
    z = ER_CLZ64(x->sig);
    e = x->exp - z - 64; /* |x| = N 2^e, N = sig 2^(64+z) in [2^127, 2^128) */
    N = (er_u128_)(x->sig << z) << 64;
    if (e & 1) { /* make the exponent even: N in [2^126, 2^127) */
        N >>= 1;
        e += 1;
    }
    {
        double d = sqrt((double)N); /* (double)N may round up to 2^128, d to 2^64: no uint64 */
        r = d >= 0x1p64 ? ~UINT64_C(0) : (uint64_t)d;
    }
    if (r < (UINT64_C(1) << 63))
        r = UINT64_C(1) << 63;
    r = (uint64_t)(((er_u128_)r + N / r) >> 1); /* now within a few units of floor(sqrt(N)) */
    for (k = 0; k < 4 && (er_u128_)r * r > N; k++)
        r--;
    for (k = 0; k < 4 && r != ~UINT64_C(0) && (er_u128_)(r + 1) * (r + 1) <= N; k++)
        r++;
    sq = (er_u128_)r * r;
    if (sq > N || (r != ~UINT64_C(0) && (er_u128_)(r + 1) * (r + 1) <= N))
        return 0; /* cannot happen; the general path then answers */
    *res = er_round(fmt, 0u, r, e / 2, (er_u32)(sq != N), dir, 0u);
    return 1;
}

/* ---- fma in 192 bits: three 64-bit limbs, w[0] the lowest. ---- */
typedef struct er_u192_ {
    uint64_t w[3];
} er_u192_;

/* v * 2^k on the 192-bit grid: exact for k >= 0 (the caller keeps it below 2^192); for k < 0 the bits
 * shifted out are OR-ed into the last bit (rounding to odd on the grid). */
static er_u192_ er_place_(er_u128_ v, int k)
{
    er_u192_ r;
    uint64_t in[3], out[3] = {0u, 0u, 0u}, lost = 0u;
    int q, b, i;
    in[0] = (uint64_t)v;
    in[1] = (uint64_t)(v >> 64);
    in[2] = 0u;
    if (k >= 0) {
        q = k / 64;
        b = k % 64;
        for (i = 2; i >= 0; i--) {
            uint64_t hi = i - q >= 0 ? in[i - q] : 0u, lo = i - q - 1 >= 0 ? in[i - q - 1] : 0u;
            out[i] = b ? (hi << b) | (lo >> (64 - b)) : hi;
        }
    } else if (-k >= 192) {
        lost = in[0] | in[1];
    } else {
        q = -k / 64;
        b = -k % 64;
        for (i = 0; i < 3; i++) {
            uint64_t lo = i + q < 3 ? in[i + q] : 0u, hi = i + q + 1 < 3 ? in[i + q + 1] : 0u;
            out[i] = b ? (lo >> b) | (hi << (64 - b)) : lo;
        }
        for (i = 0; i < q && i < 3; i++)
            lost |= in[i];
        if (b && q < 3)
            lost |= in[q] << (64 - b);
    }
    out[0] |= (uint64_t)(lost != 0u);
    for (i = 0; i < 3; i++)
        r.w[i] = out[i];
    return r;
}

/* x - y (x >= y) or x + y (no carry out: the caller keeps the sum below 2^192). */
static er_u192_ er_addsub192_(er_u192_ x, er_u192_ y, int sub)
{
    er_u192_ r;
    uint64_t c = 0u;
    int i;
    for (i = 0; i < 3; i++) {
        if (sub) {
            uint64_t d = x.w[i] - y.w[i], b1 = x.w[i] < y.w[i], b2 = d < c;
            r.w[i] = d - c;
            c = b1 | b2;
        } else {
            uint64_t t = x.w[i] + y.w[i], c1 = t < x.w[i];
            r.w[i] = t + c;
            c = c1 | (r.w[i] < t);
        }
    }
    return r;
}

/* s * 2^g (s != 0, odd-rounded where inexact) into fmt: its top 64 bits and the OR of the rest. */
static er_res er_round192_(int fmt, er_u32 sign, er_u192_ s, er_i32 g, int dir)
{
    int top = 2, z;
    uint64_t sig, rest;
    while (top > 0 && s.w[top] == 0u)
        top--;
    if (top == 0)
        return er_round(fmt, sign, s.w[0], g, 0u, dir, 0u); /* below 2^64: never odd-rounded, exact */
    z = ER_CLZ64(s.w[top]);
    sig = z ? (s.w[top] << z) | (s.w[top - 1] >> (64 - z)) : s.w[top];
    rest = z ? s.w[top - 1] << z : 0u;
    if (top == 2)
        rest |= s.w[0];
    return er_round(fmt, sign, sig, g + 64 * top - z, (er_u32)(rest != 0u), dir, 0u);
}

/* a*b + c on finite nonzero operands; 0 when not done here. */
static int er_math_fast_fma_(int fmt, const er_val *a, const er_val *b, const er_val *c, int dir, er_res *res)
{
    er_u128_ P;
    uint64_t C;
    er_i32 ep, ec, g;
    er_u32 sp, sc;
    er_u192_ X, Y, S;
    int p_larger, i;
    if (!er_math_num_(a) || !er_math_num_(b) || !er_math_num_(c))
        return 0;
    /* |a b| = P 2^ep with bit 127 of P set; |c| = C 2^ec with bit 63 set. */
    P = (er_u128_)(a->sig << ER_CLZ64(a->sig)) * (b->sig << ER_CLZ64(b->sig));
    ep = a->exp - ER_CLZ64(a->sig) + b->exp - ER_CLZ64(b->sig);
    if (!(P >> 127)) {
        P <<= 1;
        ep -= 1;
    }
    C = c->sig << ER_CLZ64(c->sig);
    ec = c->exp - ER_CLZ64(c->sig);
    sp = a->sign ^ b->sign;
    sc = c->sign;
    /* The larger magnitude goes to the top (bit 190, so that a sum cannot carry out of 192 bits), with
     * its low 63 bits zero: even on the grid, so X +- (Y rounded to odd) is the result rounded to odd. */
    if (ep + 127 != ec + 63)
        p_larger = ep + 127 > ec + 63;
    else
        p_larger = (uint64_t)(P >> 64) >= C; /* equal top bits: P is at least C */
    if (p_larger) {
        g = ep - 63;
        X = er_place_(P, 63);
        Y = er_place_((er_u128_)C, ec - g);
    } else {
        g = ec - 127;
        X = er_place_((er_u128_)C, 127);
        Y = er_place_(P, ep - g);
    }
    S = er_addsub192_(X, Y, sp != sc);
    for (i = 0; i < 3 && S.w[i] == 0u; i++)
        ;
    if (i == 3) { /* an exact zero of opposite terms */
        *res = er_make_zero_(er_fmt_get(fmt), fmt, dir == ER_RND_NEGATIVE_INF ? 1u : 0u);
        return 1;
    }
    *res = er_round192_(fmt, p_larger ? sp : sc, S, g, dir);
    return 1;
}
#endif

er_status er_math_free_cache(void)
{
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    return ER_OK;
}

static er_status er_math_out_(er_res r, uint64_t *out, unsigned *flags)
{
    *out = r.bits;
    if (flags)
        *flags = r.flags;
    return ER_OK;
}

/* The entry points' one path: the operands checked and decoded, the fast path where there is one
 * (sqrt, the binary operations, fma), else the exact run (fused: fma's a b + c). */
static er_status er_math_apply_(int fused, er_math_op op, int fmt, const uint64_t *in, int n, int dir, uint64_t *out,
                                unsigned *flags)
{
    er_status st;
    er_val v[3];
    int q;
    if ((st = er_math_check_(fmt, dir, in, n, out)) != ER_OK)
        return st;
    for (q = 0; q < n; q++)
        v[q] = er_decode(fmt, in[q]);
#ifdef ER_MATH_FAST
    {
        er_res r;
        int fast = n == 3   ? er_math_fast_fma_(fmt, &v[0], &v[1], &v[2], dir, &r)
                   : n == 2 ? er_math_fast_(op, fmt, &v[0], &v[1], dir, &r)
                            : op == ER_MATH_SQRT && er_math_fast_sqrt_(fmt, &v[0], dir, &r);
        if (fast)
            return er_math_out_(r, out, flags);
    }
#endif
    return er_math_out_(er_math_run_(fused, op, fmt, v, n, dir), out, flags);
}

er_status er_math_unary(er_math_op op, int fmt, uint64_t x, int dir, uint64_t *out, unsigned *flags)
{
    if (er_math_op_arity(op) != 1)
        return ER_EINVAL;
    return er_math_apply_(0, op, fmt, &x, 1, dir, out, flags);
}

er_status er_math_binary(er_math_op op, int fmt, uint64_t x, uint64_t y, int dir, uint64_t *out,
                         unsigned *flags)
{
    const uint64_t in[2] = {x, y};
    if (er_math_op_arity(op) != 2)
        return ER_EINVAL;
    return er_math_apply_(0, op, fmt, in, 2, dir, out, flags);
}

er_status er_math_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int dir, uint64_t *out,
                      unsigned *flags)
{
    const uint64_t in[3] = {a, b, c};
    return er_math_apply_(1, ER_MATH_ADD, fmt, in, 3, dir, out, flags);
}
