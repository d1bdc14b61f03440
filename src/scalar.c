/* scalar.c: one-pattern conversions, decoding, the hexadecimal text form and the seed helpers. */
#include <stdio.h>
#include <string.h>

#include "exactref/core/er_bits.h"
#include "exactref/core/er_round.h"
#include "exactref/exactref.h"

static int er_valid_fmt_(int fmt) { return fmt >= 0 && fmt < ER_FMT_COUNT; }

er_status er_check_pattern(int fmt, uint64_t bits)
{
    er_fmt d;
    if (!er_valid_fmt_(fmt)) return ER_EINVAL;
    d = er_fmt_get(fmt);
    return er_fmt_is_pattern(d, bits) ? ER_OK : ER_EPATTERN;
}

er_status er_convert_bits(int from, int to, uint64_t bits, int dir, unsigned opts, uint64_t *out,
                          unsigned *flags)
{
    er_status st;
    er_res r;
    if (!er_valid_fmt_(to) || dir < 0 || dir >= ER_RND_COUNT || !out) return ER_EINVAL;
    if ((st = er_check_pattern(from, bits)) != ER_OK) return st;
    r = er_convert(from, to, bits, dir, opts);
    *out = r.bits;
    if (flags) *flags = r.flags;
    return ER_OK;
}

er_status er_decode_bits(int fmt, uint64_t bits, er_val *val)
{
    er_status st;
    if (!val) return ER_EINVAL;
    if ((st = er_check_pattern(fmt, bits)) != ER_OK) return st;
    *val = er_decode(fmt, bits);
    return ER_OK;
}

/* sig * 2^exp as a normalised C99 hex float: 0x1.<frac>p<exp>, the fraction without trailing zeros. */
er_status er_format_hex(int fmt, uint64_t bits, char *buf, size_t size)
{
    er_val v;
    er_status st = er_decode_bits(fmt, bits, &v);
    const char *sg;
    int n;
    if (st != ER_OK) return st;
    if (!buf || size == 0) return ER_EINVAL;
    sg = v.sign ? "-" : "";
    if (v.cls == ER_CLASS_NAN) {
        if (v.sig)
            n = snprintf(buf, size, "%snan(0x%llx)", sg, (unsigned long long)v.sig);
        else
            n = snprintf(buf, size, "%snan", sg);
    } else if (v.cls == ER_CLASS_INF) {
        n = snprintf(buf, size, "%sinf", sg);
    } else if (v.cls == ER_CLASS_ZERO) {
        n = snprintf(buf, size, "%s0x0p+0", sg);
    } else {
        int top = 63 - ER_CLZ64(v.sig);    /* position of the leading one */
        long e = (long)v.exp + top;
        uint64_t frac = top ? v.sig << (64 - top) : 0; /* fraction bits left-aligned */
        char digits[17];
        int k = 0;
        while (frac) {
            digits[k++] = "0123456789abcdef"[frac >> 60];
            frac <<= 4;
        }
        digits[k] = 0;
        n = snprintf(buf, size, "%s0x1%s%sp%+ld", sg, k ? "." : "", digits, e);
    }
    return n < 0 || (size_t)n >= size ? ER_EINVAL : ER_OK;
}

/* The core's bit casts (include/exactref/core/er_bits.h). */
#define er_dbits_ er_b_bits
#define er_bitsd_ er_b_dbl

static int er_is_float_fmt_(int fmt) { return er_valid_fmt_(fmt) && er_fmt_get(fmt).kind == ER_KIND_FLOAT; }

er_status er_round_double(int fmt, double x, int dir, double *out)
{
    er_res r;
    if (!er_is_float_fmt_(fmt) || dir < 0 || dir >= ER_RND_COUNT || !out) return ER_EINVAL;
    r = er_convert(ER_FMT_F64, fmt, er_dbits_(x), dir, 0u);
    *out = er_bitsd_(er_convert(fmt, ER_FMT_F64, r.bits, ER_RND_NEAREST_EVEN, 0u).bits);
    return ER_OK;
}

er_status er_from_bits(int fmt, uint64_t bits, double *out)
{
    er_status st;
    if (!er_is_float_fmt_(fmt) || !out) return ER_EINVAL;
    if ((st = er_check_pattern(fmt, bits)) != ER_OK) return st;
    *out = er_bitsd_(er_convert(fmt, ER_FMT_F64, bits, ER_RND_NEAREST_EVEN, 0u).bits);
    return ER_OK;
}

er_status er_bits_of(int fmt, double x, uint64_t *bits)
{
    er_res r;
    if (!er_is_float_fmt_(fmt) || !bits) return ER_EINVAL;
    r = er_convert(ER_FMT_F64, fmt, er_dbits_(x), ER_RND_NEAREST_EVEN, 0u);
    if (r.flags & (ER_FLAG_INEXACT | ER_FLAG_INVALID | ER_FLAG_OVERFLOW)) return ER_EINEXACT;
    *bits = r.bits;
    return ER_OK;
}

double er_flush_subnormal(int fmt, double x)
{
    er_val v;
    if (!er_is_float_fmt_(fmt)) return x;
    /* x is tested as a value of fmt: a value of fmt's subnormal range is below 2^emin. */
    v = er_decode(ER_FMT_F64, er_dbits_(x));
    if (v.cls == ER_CLASS_SUBNORMAL || v.cls == ER_CLASS_NORMAL) {
        er_fmt d = er_fmt_get(fmt);
        int top = 63 - ER_CLZ64(v.sig);
        if (er_fmt_has_subnormals(d) && (long)v.exp + top < er_fmt_emin(d))
            return v.sign ? -0.0 : 0.0;
    }
    return x;
}
