/* interp_arith.c: exact + - * / sqrt fma on patterns of any float format, rounded once by the core. */
#include "interp_arith.h"

__extension__ typedef unsigned __int128 it_u128;

uint64_t it_f_nan(int fmt) { return er_make_nan(fmt, 0u, 0u, 0).bits; }

static er_val dec(int fmt, uint64_t x, unsigned opts)
{
    er_val v = er_decode(fmt, x);
    if ((opts & ER_OPT_FTZ_IN) && v.cls == ER_CLASS_SUBNORMAL) v.cls = ER_CLASS_ZERO;
    return v;
}

static int topbit(uint64_t x) { return 63 - ER_CLZ64(x); }

static uint64_t zero_of(int fmt, unsigned sign) { return er_convert(ER_FMT_F64, fmt, sign ? UINT64_C(0x8000000000000000) : 0u, 0, 0u).bits; }
static uint64_t inf_of(int fmt, unsigned sign, int dir)
{
    return er_convert(ER_FMT_F64, fmt, sign ? UINT64_C(0xFFF0000000000000) : UINT64_C(0x7FF0000000000000), dir, 0u).bits;
}

/* Sum of up to two products/values through the exact accumulator, with a window fitted to the terms. */
uint64_t it_f_add(int fmt, uint64_t a, uint64_t b, int negb, int dir, unsigned opts)
{
    er_val x = dec(fmt, a, opts), y = dec(fmt, b, opts);
    er_acc acc;
    int lo, nd, lsb = 0, top = 0, have = 0;
    if (negb) y.sign ^= 1u;
    if (x.cls == ER_CLASS_NAN || y.cls == ER_CLASS_NAN) return it_f_nan(fmt);
    if (x.cls == ER_CLASS_SUBNORMAL || x.cls == ER_CLASS_NORMAL) {
        lsb = x.exp;
        top = x.exp + topbit(x.sig) + 1;
        have = 1;
    }
    if (y.cls == ER_CLASS_SUBNORMAL || y.cls == ER_CLASS_NORMAL) {
        if (!have || y.exp < lsb) lsb = y.exp;
        if (!have || y.exp + topbit(y.sig) + 1 > top) top = y.exp + topbit(y.sig) + 1;
        have = 1;
    }
    if (!have) lsb = top = 0;
    er_acc_window(lsb, top, 2, &lo, &nd);
    er_acc_init(&acc, lo, nd);
    er_acc_add_val(&acc, x);
    er_acc_add_val(&acc, y);
    return er_acc_round(&acc, fmt, dir, opts & ER_OPT_FTZ_OUT).bits;
}

uint64_t it_f_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int dir, unsigned opts)
{
    er_val x = dec(fmt, a, opts), y = dec(fmt, b, opts), z = dec(fmt, c, opts);
    er_acc acc;
    int lo, nd, lsb = 0, top = 0, have = 0;
    if (x.cls == ER_CLASS_NAN || y.cls == ER_CLASS_NAN || z.cls == ER_CLASS_NAN) return it_f_nan(fmt);
    if ((x.cls == ER_CLASS_SUBNORMAL || x.cls == ER_CLASS_NORMAL) && (y.cls == ER_CLASS_SUBNORMAL || y.cls == ER_CLASS_NORMAL)) {
        lsb = x.exp + y.exp;
        top = lsb + topbit(x.sig) + topbit(y.sig) + 2;
        have = 1;
    }
    if (z.cls == ER_CLASS_SUBNORMAL || z.cls == ER_CLASS_NORMAL) {
        if (!have || z.exp < lsb) lsb = z.exp;
        if (!have || z.exp + topbit(z.sig) + 1 > top) top = z.exp + topbit(z.sig) + 1;
        have = 1;
    }
    if (!have) lsb = top = 0;
    er_acc_window(lsb, top, 2, &lo, &nd);
    er_acc_init(&acc, lo, nd);
    er_acc_add_product(&acc, x, y);
    er_acc_add_val(&acc, z);
    return er_acc_round(&acc, fmt, dir, opts & ER_OPT_FTZ_OUT).bits;
}

uint64_t it_f_mul(int fmt, uint64_t a, uint64_t b, int dir, unsigned opts)
{
    er_val x = dec(fmt, a, opts), y = dec(fmt, b, opts);
    unsigned s = x.sign ^ y.sign;
    int xz = x.cls == ER_CLASS_ZERO, yz = y.cls == ER_CLASS_ZERO, xi = x.cls == ER_CLASS_INF, yi = y.cls == ER_CLASS_INF;
    it_u128 p;
    uint64_t hi, lo;
    int z, e;
    if (x.cls == ER_CLASS_NAN || y.cls == ER_CLASS_NAN || (xz && yi) || (xi && yz)) return it_f_nan(fmt);
    if (xi || yi) return inf_of(fmt, s, dir);
    if (xz || yz) return zero_of(fmt, s);
    p = (it_u128)x.sig * y.sig;
    e = x.exp + y.exp;
    hi = (uint64_t)(p >> 64);
    lo = (uint64_t)p;
    if (hi == 0) return er_round(fmt, s, lo, e, 0u, dir, opts & ER_OPT_FTZ_OUT).bits;
    z = ER_CLZ64(hi);
    p <<= z;
    return er_round(fmt, s, (uint64_t)(p >> 64), e + 64 - z, (uint64_t)p != 0, dir, opts & ER_OPT_FTZ_OUT).bits;
}

uint64_t it_f_div(int fmt, uint64_t a, uint64_t b, int dir, unsigned opts)
{
    er_val x = dec(fmt, a, opts), y = dec(fmt, b, opts);
    unsigned s = x.sign ^ y.sign;
    int xz = x.cls == ER_CLASS_ZERO, yz = y.cls == ER_CLASS_ZERO, xi = x.cls == ER_CLASS_INF, yi = y.cls == ER_CLASS_INF;
    uint64_t ma, mb, q;
    it_u128 n;
    int ea, eb, e;
    if (x.cls == ER_CLASS_NAN || y.cls == ER_CLASS_NAN || (xz && yz) || (xi && yi)) return it_f_nan(fmt);
    if (xi || yz) return inf_of(fmt, s, dir);
    if (xz || yi) return zero_of(fmt, s);
    ea = ER_CLZ64(x.sig);
    eb = ER_CLZ64(y.sig);
    ma = x.sig << ea;
    mb = y.sig << eb;
    /* value = ma 2^(x.exp - ea) / (mb 2^(y.exp - eb)) */
    if (ma >= mb) {
        n = (it_u128)ma << 63;
        e = x.exp - ea - (y.exp - eb) - 63;
    } else {
        n = (it_u128)ma << 64;
        e = x.exp - ea - (y.exp - eb) - 64;
    }
    q = (uint64_t)(n / mb);
    return er_round(fmt, s, q, e, (n % mb) != 0, dir, opts & ER_OPT_FTZ_OUT).bits;
}

uint64_t it_f_sqrt(int fmt, uint64_t a, int dir, unsigned opts)
{
    er_val x = dec(fmt, a, opts);
    it_u128 n, r = 0, bit, rem;
    int e, z;
    if (x.cls == ER_CLASS_NAN) return it_f_nan(fmt);
    if (x.cls == ER_CLASS_ZERO) return zero_of(fmt, x.sign);
    if (x.sign) return it_f_nan(fmt);
    if (x.cls == ER_CLASS_INF) return a;
    /* value = m 2^(x.exp - z) with m's top bit at 63; n = m 2^64 (or 2^63, to make the exponent even),
     * so n lies in [2^126, 2^128) and its integer square root has exactly 64 bits */
    z = ER_CLZ64(x.sig);
    e = x.exp - z - 64;
    if (e & 1) {
        n = (it_u128)(x.sig << z) << 63;
        e += 1;
    } else {
        n = (it_u128)(x.sig << z) << 64;
    }
    rem = n;
    bit = (it_u128)1 << 126;
    while (bit != 0) {
        if (rem >= r + bit) {
            rem -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return er_round(fmt, 0u, (uint64_t)r, e / 2, rem != 0, dir, opts & ER_OPT_FTZ_OUT).bits;
}

/*
 * The host's IEEE 754 arithmetic where it gives the same bits as the exact path, for speed: binary32 and
 * binary64 + - * / sqrt to nearest even are correctly rounded by IEEE 754 itself (the FPU's default
 * mode, never changed here; only where FLT_EVAL_METHOD is 0, so no wider intermediate); f16 and bf16
 * through binary32, whose 24 bits are at least 2p + 2 for both, so rounding the binary32 result again
 * is the single rounding (Figueroa's theorem) wherever binary32 has its full precision: f16's results
 * always lie in binary32's normal range, and a bf16 result below it takes the exact path.  A NaN
 * result is the canonical NaN, as on the exact path.  Returns 0 when the exact path must be used.
 */
#include <float.h>
#include <string.h>
int it_f_fast(int code, int fmt, uint64_t a, uint64_t b, uint64_t *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    if (fmt == ER_FMT_F64) {
        double x, y, r;
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
        switch (code) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x / y; break;
        default: r = __builtin_sqrt(x); break;
        }
        if (r != r) *out = it_f_nan(fmt);
        else memcpy(out, &r, 8);
        return 1;
    }
    if (fmt == ER_FMT_F32 || fmt == ER_FMT_F16 || fmt == ER_FMT_BF16) {
        float x, y, r;
        uint32_t ux, uy, ur;
        if (fmt == ER_FMT_F32) {
            ux = (uint32_t)a;
            uy = (uint32_t)b;
        } else if (fmt == ER_FMT_BF16) {
            ux = (uint32_t)a << 16;
            uy = (uint32_t)b << 16;
        } else {
            ux = (uint32_t)er_convert(ER_FMT_F16, ER_FMT_F32, a, ER_RND_NEAREST_EVEN, 0u).bits;
            uy = (uint32_t)er_convert(ER_FMT_F16, ER_FMT_F32, b, ER_RND_NEAREST_EVEN, 0u).bits;
        }
        memcpy(&x, &ux, 4);
        memcpy(&y, &uy, 4);
        switch (code) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = x / y; break;
        default: r = __builtin_sqrtf(x); break;
        }
        if (r != r) {
            *out = it_f_nan(fmt);
            return 1;
        }
        memcpy(&ur, &r, 4);
        if (fmt == ER_FMT_F32) {
            *out = ur;
            return 1;
        }
        if (fmt == ER_FMT_BF16 && (ur & 0x7F800000u) == 0 && (ur & 0x7FFFFFFFu) != 0) return 0;
        *out = er_convert(ER_FMT_F32, fmt, ur, ER_RND_NEAREST_EVEN, 0u).bits;
        return 1;
    }
#else
    (void)code; (void)fmt; (void)a; (void)b; (void)out;
#endif
    return 0;
}
