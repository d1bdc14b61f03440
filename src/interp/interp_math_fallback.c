/* interp_math_fallback.c: a stand-in for the math library (MPFR, correctly rounded into any format), built
 * only while include/exactref/math.h does not exist; the math library replaces it. */
#include <mpfr.h>
#include <string.h>

#include "interp_math.h"

/* y computed by MPFR at 64 bits toward zero, made round-to-odd by the ternary value, then rounded once
 * into fmt by the core: rounding to odd at 64 >= p + 2 bits first loses nothing for any format here. */
static er_status it_finish(mpfr_t y, int inex, int fmt, int dir, uint64_t *out, unsigned *flags)
{
    er_res r;
    if (mpfr_nan_p(y)) {
        r = er_make_nan(fmt, 0u, 0u, 0);
    } else if (mpfr_inf_p(y)) {
        r = er_convert(ER_FMT_F64, fmt, mpfr_signbit(y) ? UINT64_C(0xFFF0000000000000) : UINT64_C(0x7FF0000000000000), dir, 0u);
    } else if (mpfr_zero_p(y) && inex) { /* underflow in MPFR's range: a tiny value of that sign */
        r = er_round(fmt, (unsigned)(mpfr_signbit(y) != 0), UINT64_C(1) << 63, -1000000, 1u, dir, 0u);
    } else if (mpfr_zero_p(y)) {
        r = er_convert(ER_FMT_F64, fmt, mpfr_signbit(y) ? UINT64_C(0x8000000000000000) : 0u, dir, 0u);
    } else {
        mpz_t z;
        long e;
        uint64_t sig;
        mpz_init(z);
        e = mpfr_get_z_2exp(z, y);
        mpz_abs(z, z);
        sig = (uint64_t)mpz_getlimbn(z, 0);
        if (sizeof(mp_limb_t) < 8) sig |= (uint64_t)mpz_getlimbn(z, 1) << 32;
        mpz_clear(z);
        if (e < -100000 || e > 100000) {
            r = er_round(fmt, (unsigned)(mpfr_signbit(y) != 0), UINT64_C(1) << 63, e > 0 ? 1000000 : -1000000, 1u, dir, 0u);
        } else {
            r = er_round(fmt, (unsigned)(mpfr_signbit(y) != 0), sig, (int)e, inex != 0, dir, 0u);
        }
    }
    *out = r.bits;
    if (flags) *flags = r.flags | (inex ? ER_FLAG_INEXACT : 0u);
    return ER_OK;
}

static int it_get(mpfr_t x, int fmt, uint64_t bits)
{
    er_res d = er_convert(fmt, ER_FMT_F64, bits, ER_RND_NEAREST_EVEN, 0u);
    double v;
    memcpy(&v, &d.bits, sizeof v);
    return mpfr_set_d(x, v, MPFR_RNDN);
}

er_status er_math_unary(er_math_op op, int fmt, uint64_t x, int dir, uint64_t *out, unsigned *flags)
{
    mpfr_t a, y;
    int inex = 0;
    er_status st;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || !out || dir < 0 || dir > ER_RND_POSITIVE_INF) return ER_EINVAL;
    mpfr_inits2(64, a, y, (mpfr_ptr)0);
    it_get(a, fmt, x);
    switch (op) {
    case ER_MATH_SQRT: inex = mpfr_sqrt(y, a, MPFR_RNDZ); break;
    case ER_MATH_RSQRT: inex = mpfr_rec_sqrt(y, a, MPFR_RNDZ); break;
    case ER_MATH_EXP: inex = mpfr_exp(y, a, MPFR_RNDZ); break;
    case ER_MATH_EXP2: inex = mpfr_exp2(y, a, MPFR_RNDZ); break;
    case ER_MATH_LOG: inex = mpfr_log(y, a, MPFR_RNDZ); break;
    case ER_MATH_LOG2: inex = mpfr_log2(y, a, MPFR_RNDZ); break;
    case ER_MATH_TANH: inex = mpfr_tanh(y, a, MPFR_RNDZ); break;
    case ER_MATH_SINH: inex = mpfr_sinh(y, a, MPFR_RNDZ); break;
    case ER_MATH_COSH: inex = mpfr_cosh(y, a, MPFR_RNDZ); break;
    case ER_MATH_SIN: inex = mpfr_sin(y, a, MPFR_RNDZ); break;
    case ER_MATH_COS: inex = mpfr_cos(y, a, MPFR_RNDZ); break;
    case ER_MATH_TAN: inex = mpfr_tan(y, a, MPFR_RNDZ); break;
    case ER_MATH_ATAN: inex = mpfr_atan(y, a, MPFR_RNDZ); break;
    case ER_MATH_FLOOR: inex = mpfr_floor(y, a); inex = 0; break;
    case ER_MATH_CEIL: inex = mpfr_ceil(y, a); inex = 0; break;
    default: mpfr_clears(a, y, (mpfr_ptr)0); return ER_EINVAL;
    }
    st = it_finish(y, inex, fmt, dir, out, flags);
    mpfr_clears(a, y, (mpfr_ptr)0);
    return st;
}

er_status er_math_binary(er_math_op op, int fmt, uint64_t x, uint64_t y0, int dir, uint64_t *out, unsigned *flags)
{
    mpfr_t a, b, y;
    int inex = 0;
    er_status st;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || !out || dir < 0 || dir > ER_RND_POSITIVE_INF) return ER_EINVAL;
    mpfr_inits2(64, a, b, y, (mpfr_ptr)0);
    it_get(a, fmt, x);
    it_get(b, fmt, y0);
    switch (op) {
    case ER_MATH_ADD: inex = mpfr_add(y, a, b, MPFR_RNDZ); break;
    case ER_MATH_SUB: inex = mpfr_sub(y, a, b, MPFR_RNDZ); break;
    case ER_MATH_MUL: inex = mpfr_mul(y, a, b, MPFR_RNDZ); break;
    case ER_MATH_DIV: inex = mpfr_div(y, a, b, MPFR_RNDZ); break;
    case ER_MATH_FMOD: inex = mpfr_fmod(y, a, b, MPFR_RNDZ); break;
    case ER_MATH_ATAN2: inex = mpfr_atan2(y, a, b, MPFR_RNDZ); break;
    case ER_MATH_POW: inex = mpfr_pow(y, a, b, MPFR_RNDZ); break;
    default: mpfr_clears(a, b, y, (mpfr_ptr)0); return ER_EINVAL;
    }
    st = it_finish(y, inex, fmt, dir, out, flags);
    mpfr_clears(a, b, y, (mpfr_ptr)0);
    return st;
}

er_status er_math_fma(int fmt, uint64_t a0, uint64_t b0, uint64_t c0, int dir, uint64_t *out, unsigned *flags)
{
    mpfr_t a, b, c, y;
    int inex;
    er_status st;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || !out || dir < 0 || dir > ER_RND_POSITIVE_INF) return ER_EINVAL;
    mpfr_inits2(64, a, b, c, y, (mpfr_ptr)0);
    it_get(a, fmt, a0);
    it_get(b, fmt, b0);
    it_get(c, fmt, c0);
    inex = mpfr_fma(y, a, b, c, MPFR_RNDZ);
    st = it_finish(y, inex, fmt, dir, out, flags);
    mpfr_clears(a, b, c, y, (mpfr_ptr)0);
    return st;
}

const char *er_math_op_name(er_math_op op)
{
    static const char *n[] = {"sqrt", "rsqrt", "exp", "exp2", "log", "log2", "tanh", "sinh", "cosh", "sin",
                              "cos", "tan", "atan", "floor", "ceil", "add", "sub", "mul", "div", "fmod",
                              "atan2", "pow"};
    return (unsigned)op < sizeof n / sizeof n[0] ? n[op] : "?";
}
