/*
 * test_decode.c (mpfr_decode): er_decode against our own field formula (of_decode) in MPFR, and
 * against native types where there is one.
 *
 *  - small_exhaustive: every pattern of every format of at most 16 bits: class, sign, exact value,
 *    NaN payload (and its width for IEEE NaNs) agree with the formula; er_decode_bits agrees with
 *    er_decode and er_check_pattern accepts the pattern; a bit above the width is rejected by
 *    er_check_pattern and ignored by er_decode.  Native cross-checks: bf16 through float (the pattern
 *    shifted left by 16), f16 through _Float16 (where the compiler has it), f8E5M2 through f16 (the
 *    pattern shifted left by 8), i8/u8/i16 through the C integer types.
 *  - wide_random: f32, f64 and tf32 on their boundary patterns and on seeded random patterns: er_decode
 *    agrees with the formula and with the native float/double (memcpy, mpfr_set_flt/mpfr_set_d, and
 *    the C classification macros); tf32 ignores its 13 padding bits in er_decode and er_check_pattern
 *    rejects them.  i32 and i64 on boundary and random patterns against int32_t/int64_t.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "er_test.h"
#include "of_oracle.h"
#include "exactref/core/er_round.h"

static mpfr_t w1, w2;

static int er_to_of_class(int c)
{
    switch (c) {
    case ER_CLASS_ZERO: return OF_ZERO;
    case ER_CLASS_SUBNORMAL: return OF_SUB;
    case ER_CLASS_NORMAL: return OF_NORM;
    case ER_CLASS_INF: return OF_INF;
    case ER_CLASS_NAN: return OF_NAN;
    default: return -1;
    }
}

/* Field by field (the struct has padding bytes). */
static int val_eq(er_val a, er_val b)
{
    return a.cls == b.cls && a.sign == b.sign && a.sig == b.sig && a.exp == b.exp;
}

static void bad(of_tally *t, const of_fmt *f, uint64_t b, const char *what)
{
    if (t->fails < t->show)
        printf("%s: MISMATCH %s 0x%llx: %s\n", t->test, f->name, (unsigned long long)b, what);
    t->fails++;
}

/* er_decode(f, b) against the formula's x. */
static void check_decode(of_tally *t, const of_fmt *f, uint64_t b, const of_val *x)
{
    er_val v = er_decode(f->id, b);
    char buf[200];
    t->checks++;
    if (er_to_of_class(v.cls) != x->cls || (int)v.sign != x->sign) {
        snprintf(buf, sizeof buf, "class %d sign %u, expected class %d sign %d (OF_ZERO..OF_NAN)", v.cls, v.sign,
                 x->cls, x->sign);
        bad(t, f, b, buf);
        return;
    }
    if (x->cls == OF_NAN) {
        if (v.sig != x->payload || (f->nan == OF_NAN_IEEE && v.exp != f->mbits)) {
            snprintf(buf, sizeof buf, "NaN payload 0x%llx width %d, expected 0x%llx width %d",
                     (unsigned long long)v.sig, v.exp, (unsigned long long)x->payload, f->mbits);
            bad(t, f, b, buf);
        }
        return;
    }
    if (x->cls == OF_INF)
        return;
    mpfr_set_uj_2exp(w1, v.sig, v.exp, MPFR_RNDN);
    if (mpfr_cmpabs(w1, x->v) != 0) {
        mpfr_snprintf(buf, sizeof buf, "value %s%Ra (sig 0x%llx exp %d), expected %Ra", v.sign ? "-" : "", w1,
                      (unsigned long long)v.sig, v.exp, x->v);
        bad(t, f, b, buf);
    }
}

/* The formula against a native value (NaN: class only; the payload is checked against the fields). */
static void check_native(of_tally *t, const of_fmt *f, uint64_t b, const of_val *x, const mpfr_t nat)
{
    t->checks++;
    if (mpfr_nan_p(nat)) {
        if (x->cls != OF_NAN)
            bad(t, f, b, "native is NaN, the formula is not");
        return;
    }
    if (x->cls == OF_NAN || !mpfr_equal_p(nat, x->v) ||
        (mpfr_zero_p(nat) && (mpfr_signbit(nat) != 0) != (x->sign != 0))) {
        char buf[160];
        mpfr_snprintf(buf, sizeof buf, "formula gives %Ra (class %d), native %Ra", x->v, x->cls, nat);
        bad(t, f, b, buf);
    }
}

static float flt_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double dbl_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static const int small_fmt[] = {ER_FMT_F16,        ER_FMT_BF16,       ER_FMT_I16,       ER_FMT_F8E4M3FN,
                                ER_FMT_F8E5M2,     ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU,
                                ER_FMT_F8E5M3FNU,  ER_FMT_F6E2M3FN,   ER_FMT_F6E3M2FN,  ER_FMT_F4E2M1FN,
                                ER_FMT_I8,         ER_FMT_U8};
#define N_SMALL ((int)(sizeof small_fmt / sizeof small_fmt[0]))

START_TEST(test_small_exhaustive)
{
    const of_fmt *f = of_get(small_fmt[_i]);
    of_fmt f16 = *of_get(ER_FMT_F16);
    char name[64];
    of_tally t = {0, 0, 0, 0};
    t.show = of_show();
    of_val x, y;
    uint64_t b, n = UINT64_C(1) << f->width;
    long classes[5] = {0, 0, 0, 0, 0};
    snprintf(name, sizeof name, "small_exhaustive[%s]", f->name);
    t.test = name;
    of_val_init(&x);
    of_val_init(&y);
    for (b = 0; b < n; b++) {
        er_val v1, v2;
        of_decode(f, b, &x);
        classes[x.cls]++;
        check_decode(&t, f, b, &x);

        /* The public entry points. */
        v1 = er_decode(f->id, b);
        t.checks++;
        if (er_decode_bits(f->id, b, &v2) != ER_OK || !val_eq(v1, v2))
            bad(&t, f, b, "er_decode_bits differs from er_decode");
        if (er_check_pattern(f->id, b) != ER_OK)
            bad(&t, f, b, "er_check_pattern rejects a pattern of the format");
        if (er_check_pattern(f->id, b | (UINT64_C(1) << f->width)) != ER_EPATTERN)
            bad(&t, f, b, "er_check_pattern accepts a bit above the width");
        v2 = er_decode(f->id, b | (UINT64_C(1) << f->width) | (UINT64_C(1) << 63));
        if (!val_eq(v1, v2))
            bad(&t, f, b, "er_decode does not ignore bits above the width");

        /* Native cross-checks of the formula. */
        if (f->id == ER_FMT_BF16) {
            mpfr_set_flt(w2, flt_of((uint32_t)b << 16), MPFR_RNDN);
            check_native(&t, f, b, &x, w2);
        }
#ifdef __FLT16_MAX__
        if (f->id == ER_FMT_F16) {
            _Float16 h;
            uint16_t u = (uint16_t)b;
            memcpy(&h, &u, sizeof h);
            mpfr_set_flt(w2, (float)h, MPFR_RNDN);
            check_native(&t, f, b, &x, w2);
        }
#endif
        if (f->id == ER_FMT_F8E5M2) {
            /* e5m2 is the top byte of f16: same exponent and bias, two fraction bits. */
            of_decode(&f16, b << 8, &y);
            t.checks++;
            if (y.cls != x.cls || y.sign != x.sign || (x.cls != OF_NAN && !mpfr_equal_p(x.v, y.v)) ||
                (x.cls == OF_NAN && y.payload != x.payload << 8))
                bad(&t, f, b, "differs from the f16 pattern shifted left by 8");
        }
        if (f->kind != OF_FLOAT) {
            long iv = f->id == ER_FMT_I8 ? (long)(int8_t)b : f->id == ER_FMT_I16 ? (long)(int16_t)b : (long)b;
            mpfr_set_si(w2, iv, MPFR_RNDN);
            check_native(&t, f, b, &x, w2);
        }
    }
    printf("%s: %ld checks, %ld disagreements; zero %ld, subnormal %ld, normal %ld, inf %ld, nan %ld\n", name,
           t.checks, t.fails, classes[OF_ZERO], classes[OF_SUB], classes[OF_NORM], classes[OF_INF],
           classes[OF_NAN]);
    of_val_clear(&x);
    of_val_clear(&y);
    ck_assert_msg(t.fails == 0, "%s: %ld disagreements", name, t.fails);
}
END_TEST

/* Boundary patterns of an IEEE-like float format (positive; the caller adds the sign). */
static int float_boundaries(const of_fmt *f, uint64_t *out)
{
    uint64_t one = UINT64_C(1) << f->pad;
    uint64_t fracmask = of_mask(f->mbits) << f->pad;
    uint64_t expone = one << f->mbits;      /* the least normal */
    uint64_t inf = of_mask(f->ebits) << (f->mbits + f->pad);
    int k = 0;
    out[k++] = 0;
    out[k++] = one;                           /* least subnormal */
    out[k++] = 2 * one;
    out[k++] = fracmask - one;
    out[k++] = fracmask;                      /* largest subnormal */
    out[k++] = expone;                        /* least normal */
    out[k++] = expone + one;
    out[k++] = (UINT64_C(1) << (f->width - 2)) - one; /* just below 2 */
    out[k++] = (UINT64_C(1) << (f->width - 2)) & ~fracmask; /* 2 (for the usual layouts, exp field 100..0) */
    out[k++] = inf - 2 * one;
    out[k++] = inf - one;                     /* max finite */
    out[k++] = inf;                           /* infinity */
    out[k++] = inf + one;                     /* least signalling NaN */
    out[k++] = inf | (one << (f->mbits - 1)); /* quiet NaN */
    out[k++] = inf | fracmask;                /* NaN, all payload bits */
    return k;
}

static int of_class_of_fp(int c)
{
    return c == FP_ZERO ? OF_ZERO : c == FP_SUBNORMAL ? OF_SUB : c == FP_NORMAL ? OF_NORM
         : c == FP_INFINITE ? OF_INF : OF_NAN;
}

static void wide_one(of_tally *t, const of_fmt *f, uint64_t b, of_val *x)
{
    int want;
    of_decode(f, b, x);
    check_decode(t, f, b, x);
    /* The native value and class: double for f64, float for f32 and tf32 (padding cleared). */
    if (f->id == ER_FMT_F64) {
        double d = dbl_of(b);
        mpfr_set_d(w2, d, MPFR_RNDN);
        want = of_class_of_fp(fpclassify(d));
    } else {
        float ff = flt_of((uint32_t)(f->id == ER_FMT_TF32 ? b & ~UINT64_C(0x1FFF) : b));
        mpfr_set_flt(w2, ff, MPFR_RNDN);
        want = of_class_of_fp(fpclassify(ff));
    }
    check_native(t, f, b, x, w2);
    t->checks++;
    if (want != x->cls)
        bad(t, f, b, "class differs from fpclassify");
    if (f->id == ER_FMT_TF32) {
        /* The padding is ignored by er_decode and rejected by er_check_pattern. */
        t->checks++;
        if (b & 0x1FFF) {
            er_val a = er_decode(f->id, b), c = er_decode(f->id, b & ~UINT64_C(0x1FFF));
            if (!val_eq(a, c))
                bad(t, f, b, "er_decode does not ignore tf32 padding");
            if (er_check_pattern(f->id, b) != ER_EPATTERN)
                bad(t, f, b, "er_check_pattern accepts tf32 padding bits");
        } else if (er_check_pattern(f->id, b) != ER_OK) {
            bad(t, f, b, "er_check_pattern rejects a tf32 pattern");
        }
    }
}

START_TEST(test_wide_random)
{
    static const int fl[3] = {ER_FMT_F64, ER_FMT_F32, ER_FMT_TF32};
    uint64_t st = er_test_seed("mpfr_decode wide_random");
    of_tally t = {"wide_random", 0, 0, 0};
    t.show = of_show();
    of_val x;
    int k, i;
    of_val_init(&x);
    for (k = 0; k < 3; k++) {
        const of_fmt *f = of_get(fl[k]);
        uint64_t bnd[16];
        int nb = float_boundaries(f, bnd);
        uint64_t sign = UINT64_C(1) << (f->width - 1);
        for (i = 0; i < nb; i++) {
            wide_one(&t, f, bnd[i], &x);
            wide_one(&t, f, bnd[i] | sign, &x);
        }
        for (i = 0; i < 300000; i++) {
            uint64_t b = er_test_rand(&st) & of_mask(f->width);
            if (f->id == ER_FMT_TF32 && (i & 1))
                b &= ~UINT64_C(0x1FFF); /* half of them valid tf32 patterns */
            if ((i & 3) == 0) {         /* a quarter with exponent field 0, 1, max-1 or all ones */
                uint64_t emax = of_mask(f->ebits);
                uint64_t pick[4] = {0, 1, emax - 1, emax};
                uint64_t e = pick[(i >> 2) & 3];
                int at = f->mbits + f->pad;
                b = (b & ~(emax << at)) | (e << at);
            }
            wide_one(&t, f, b, &x);
        }
    }
    /* Wide integers. */
    for (k = 0; k < 2; k++) {
        const of_fmt *f = of_get(k ? ER_FMT_I64 : ER_FMT_I32);
        uint64_t edge[] = {0, 1, 2, of_mask(f->width), of_mask(f->width) - 1, f->max_bits, f->max_bits + 1,
                           f->max_bits - 1, f->max_bits + 2};
        for (i = 0; i < (int)(sizeof edge / sizeof edge[0]) + 200000; i++) {
            uint64_t b = i < (int)(sizeof edge / sizeof edge[0]) ? edge[i] & of_mask(f->width)
                                                                   : er_test_rand(&st) & of_mask(f->width);
            if (i >= 9 && (i & 3) == 0)
                b >>= er_test_rand(&st) % 64; /* small magnitudes too */
            of_decode(f, b, &x);
            check_decode(&t, f, b, &x);
            if (k)
                mpfr_set_sj(w2, (intmax_t)(int64_t)b, MPFR_RNDN);
            else
                mpfr_set_si(w2, (long)(int32_t)(uint32_t)b, MPFR_RNDN);
            check_native(&t, f, b, &x, w2);
        }
    }
    of_val_clear(&x);
    printf("wide_random: %ld checks, %ld disagreements\n", t.checks, t.fails);
    ck_assert_msg(t.fails == 0, "wide_random: %ld disagreements", t.fails);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpfr_decode");
    TCase *tc;
    SRunner *sr;
    int nf;
    of_init();
    mpfr_inits2(OF_PREC, w1, w2, (mpfr_ptr)0);
    tc = tcase_create("decode");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_small_exhaustive, 0, N_SMALL);
    tcase_add_test(tc, test_wide_random);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    mpfr_clears(w1, w2, (mpfr_ptr)0);
    of_fini();
    return nf ? 1 : 0;
}
