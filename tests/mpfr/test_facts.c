/*
 * test_facts.c (mpfr_facts): named facts of formats.md with the expected patterns written out by
 * hand, the library's format descriptions against our independent table, and a self-check of the
 * oracle against MPFR's own exponent-range emulation.
 */
#include <check.h>
#include <string.h>

#include "er_test.h"
#include "of_oracle.h"
#include "exactref/core/er_round.h"

#define XF ER_FLAG_INEXACT
#define UF ER_FLAG_UNDERFLOW
#define OF ER_FLAG_OVERFLOW
#define IF ER_FLAG_INVALID
#define NE ER_RND_NEAREST_EVEN
#define SAT ER_OPT_SATURATE

static uint64_t d2b(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static uint64_t f2b(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* One conversion through the public entry point, pattern and flags exactly as given. */
#define FACT(from, to, bits, dir, opts, want, wflags)                                                          \
    do {                                                                                                       \
        uint64_t out_ = 0;                                                                                     \
        unsigned fl_ = 0;                                                                                      \
        er_status st_ = er_convert_bits((from), (to), (bits), (dir), (opts), &out_, &fl_);                     \
        ck_assert_msg(st_ == ER_OK && out_ == (uint64_t)(want) && fl_ == (unsigned)(wflags),                   \
                      "%s 0x%llx -> %s (%s, opts %u): got status %d, 0x%llx flags 0x%x; expected 0x%llx flags " \
                      "0x%x",                                                                                  \
                      of_get(from)->name, (unsigned long long)(bits), of_get(to)->name, of_dir_name(dir),      \
                      (unsigned)(opts), st_, (unsigned long long)out_, fl_, (unsigned long long)(want),        \
                      (unsigned)(wflags));                                                                     \
    } while (0)

/* The same, checking the pattern only (where the rules leave the flags open). */
#define FACTB(from, to, bits, dir, opts, want)                                                                 \
    do {                                                                                                       \
        uint64_t out_ = 0;                                                                                     \
        unsigned fl_ = 0;                                                                                      \
        er_status st_ = er_convert_bits((from), (to), (bits), (dir), (opts), &out_, &fl_);                     \
        ck_assert_msg(st_ == ER_OK && out_ == (uint64_t)(want),                                                \
                      "%s 0x%llx -> %s (%s, opts %u): got status %d, 0x%llx; expected 0x%llx",                 \
                      of_get(from)->name, (unsigned long long)(bits), of_get(to)->name, of_dir_name(dir),      \
                      (unsigned)(opts), st_, (unsigned long long)out_, (unsigned long long)(want));            \
    } while (0)

/* ---- The table. ---- */

/* ml_dtypes aliases given by formats.md. */
static const struct {
    int id;
    const char *alias;
} aliases[] = {{ER_FMT_F64, "float64"},
               {ER_FMT_F32, "float32"},
               {ER_FMT_F16, "float16"},
               {ER_FMT_BF16, "bfloat16"},
               {ER_FMT_F8E4M3FN, "float8_e4m3fn"},
               {ER_FMT_F8E5M2, "float8_e5m2"},
               {ER_FMT_F8E4M3FNUZ, "float8_e4m3fnuz"},
               {ER_FMT_F8E5M2FNUZ, "float8_e5m2fnuz"},
               {ER_FMT_F8E8M0FNU, "float8_e8m0fnu"},
               {ER_FMT_F6E2M3FN, "float6_e2m3fn"},
               {ER_FMT_F6E3M2FN, "float6_e3m2fn"},
               {ER_FMT_F4E2M1FN, "float4_e2m1fn"},
               {ER_FMT_F8E5M3FNU, "float8_e5m3fnu"}};

START_TEST(test_table)
{
    int i;
    mpfr_t v;
    of_val x;
    mpfr_init2(v, OF_PREC);
    of_val_init(&x);
    ck_assert_int_eq(er_format_count(), OF_NFMT);
    for (i = 0; i < OF_NFMT; i++) {
        const of_fmt *f = &of_fmts[i];
        er_format_info fi;
        int id = -1;
        ck_assert_int_eq(er_format_get_info(f->id, &fi), ER_OK);
        ck_assert_str_eq(fi.name, f->name);
        ck_assert_int_eq(er_format_from_name(f->name, &id), ER_OK);
        ck_assert_int_eq(id, f->id);
        ck_assert_int_eq(fi.width, f->width);
        ck_assert_int_eq(fi.kind, f->kind == OF_FLOAT ? ER_KIND_FLOAT : f->kind == OF_SINT ? ER_KIND_SINT
                                                                                          : ER_KIND_UINT);
        ck_assert_int_eq(fi.is_signed, f->is_signed);
        ck_assert_msg(fi.max_finite_bits == f->max_bits, "%s: max_finite_bits 0x%llx, formats.md 0x%llx", f->name,
                      (unsigned long long)fi.max_finite_bits, (unsigned long long)f->max_bits);
        /* Our own table is consistent with itself: the max pattern decodes to the max value. */
        of_decode(f, f->max_bits, &x);
        mpfr_set_str(v, f->max, 0, MPFR_RNDN);
        ck_assert_msg(mpfr_equal_p(x.v, v), "%s: our max pattern does not decode to our max value", f->name);
        if (f->kind != OF_FLOAT)
            continue;
        ck_assert_int_eq(fi.exponent_bits, f->ebits);
        ck_assert_int_eq(fi.significand_bits, f->mbits);
        ck_assert_int_eq(fi.padding_bits, f->pad);
        ck_assert_int_eq(fi.bias, f->bias);
        ck_assert_int_eq(fi.emin, f->emin);
        ck_assert_int_eq(fi.emax, (int)mpfr_get_exp(v) - 1);
        ck_assert_int_eq(fi.has_inf, f->has_inf);
        ck_assert_int_eq(fi.has_nan, f->nan != OF_NAN_NONE);
        ck_assert_int_eq(fi.has_negative_zero, f->has_negzero);
        ck_assert_int_eq(fi.has_subnormals, f->has_sub);
        ck_assert_int_eq(fi.has_zero, f->has_sub);
        ck_assert_msg(fi.min_subnormal_bits == f->minpos_bits, "%s: min_subnormal_bits 0x%llx, expected 0x%llx",
                      f->name, (unsigned long long)fi.min_subnormal_bits, (unsigned long long)f->minpos_bits);
        ck_assert_int_eq(f->prec, f->mbits + 1);
        ck_assert_int_eq(f->emin, f->has_sub ? 1 - f->bias : -f->bias);
        /* The least positive pattern decodes to 2^(emin - prec + 1), or 2^emin without subnormals. */
        of_decode(f, f->minpos_bits, &x);
        mpfr_set_ui_2exp(v, 1, f->has_sub ? f->emin - f->prec + 1 : f->emin, MPFR_RNDN);
        ck_assert_msg(mpfr_equal_p(x.v, v), "%s: least positive pattern", f->name);
    }
    for (i = 0; i < (int)(sizeof aliases / sizeof aliases[0]); i++) {
        int id = -1;
        ck_assert_int_eq(er_format_from_name(aliases[i].alias, &id), ER_OK);
        ck_assert_int_eq(id, aliases[i].id);
    }
    mpfr_clear(v);
    of_val_clear(&x);
}
END_TEST

/* ---- Named facts. ---- */

START_TEST(test_e4m3fn_464_465)
{
    /* 464 lies midway between 448 (0x7E) and 480 (the NaN slot): ties to even give 448. */
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(464.0), NE, 0, 0x7E, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(-464.0), NE, 0, 0xFE, XF);
    /* 465 rounds to 480 > 448: overflow, NaN 0x7F (sign kept), or 0x7E saturating. */
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(465.0), NE, 0, 0x7F, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(465.0), NE, SAT, 0x7E, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(-465.0), NE, 0, 0xFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(-465.0), NE, SAT, 0xFE, OF | XF);
    /* Toward zero: 479 stays at 448 without overflow. */
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(479.0), ER_RND_ZERO, 0, 0x7E, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(448.0), NE, 0, 0x7E, 0);
}
END_TEST

START_TEST(test_f16_65520)
{
    /* 65520 is midway between 65504 (0x7BFF) and 65536: ties to even go to 65536, which overflows. */
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(65520.0), NE, 0, 0x7C00, OF | XF);
    FACT(ER_FMT_F32, ER_FMT_F16, f2b(65520.0f), NE, 0, 0x7C00, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(-65520.0), NE, 0, 0xFC00, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(65520.0), NE, SAT, 0x7BFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(65519.0), NE, 0, 0x7BFF, XF);
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(65520.0), ER_RND_ZERO, 0, 0x7BFF, XF); /* 2047.5 ulps: truncated */
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(65536.0), ER_RND_ZERO, 0, 0x7BFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F16, d2b(65504.0), NE, 0, 0x7BFF, 0);
}
END_TEST

START_TEST(test_e5m2)
{
    FACT(ER_FMT_F64, ER_FMT_F8E5M2, d2b(57344.0), NE, 0, 0x7B, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M2, d2b(61440.0), NE, 0, 0x7C, OF | XF); /* tie to 65536: infinity */
    FACT(ER_FMT_F64, ER_FMT_F8E5M2, d2b(61439.0), NE, 0, 0x7B, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M2, d2b(-1e300), NE, 0, 0xFC, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M2, d2b(-1e300), NE, SAT, 0xFB, OF | XF);
}
END_TEST

START_TEST(test_e8m0)
{
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0x1p-127), NE, 0, 0x00, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(1.0), NE, 0, 0x7F, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0x1p127), NE, 0, 0xFE, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0x1p128), NE, 0, 0xFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0x1p128), NE, SAT, 0xFE, OF | XF);
    /* 1.5 * 2^k is midway between 2^k (odd significand 1) and 2^(k+1) (even): ties to even go up. */
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(1.5), NE, 0, 0x80, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(1.5), ER_RND_ZERO, 0, 0x7F, XF);
    /* Below 2^-127: rounded to 0 it is clamped to 2^-127 with underflow. */
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0x1p-128), NE, 0, 0x00, UF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0x1p-200), ER_RND_ZERO, 0, 0x00, UF | XF);
    /* Zero, negative values and -inf: NaN 0xFF, invalid.  +inf: NaN, or 0xFE saturating. */
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(0.0), NE, 0, 0xFF, IF);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(-0.0), NE, 0, 0xFF, IF);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(-1.0), NE, 0, 0xFF, IF);
    FACT(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(-1.0), NE, SAT, 0xFF, IF);
    {
        uint64_t out;
        unsigned fl;
        ck_assert_int_eq(er_convert_bits(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(-1.0 / 0.0), NE, 0, &out, &fl), ER_OK);
        ck_assert_msg(out == 0xFF && (fl & IF), "-inf -> e8m0: 0x%llx flags 0x%x", (unsigned long long)out, fl);
        ck_assert_int_eq(er_convert_bits(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(1.0 / 0.0), NE, 0, &out, &fl), ER_OK);
        ck_assert_msg(out == 0xFF, "+inf -> e8m0: 0x%llx", (unsigned long long)out);
        ck_assert_int_eq(er_convert_bits(ER_FMT_F64, ER_FMT_F8E8M0FNU, d2b(1.0 / 0.0), NE, SAT, &out, &fl), ER_OK);
        ck_assert_msg(out == 0xFE, "+inf -> e8m0 saturating: 0x%llx", (unsigned long long)out);
    }
}
END_TEST

START_TEST(test_double_rounding)
{
    /*
     * ml_dtypes converts float64 to fp8 through float32.  x = 1.0625 + 2^-40 lies just above the
     * midpoint 1.0625 of the e4m3 values 1.0 (0x38) and 1.125 (0x39); float32 rounds it to the midpoint
     * itself, which then ties to even: 1.0.  Rounded once, x goes up to 1.125.
     */
    double x = 1.0625 + 0x1p-40;
    uint64_t via = 0, b32 = 0;
    unsigned fl;
    mpfr_t m;
    mpfr_init2(m, 64);
    mpfr_set_d(m, x, MPFR_RNDN);
    ck_assert_msg(mpfr_get_flt(m, MPFR_RNDN) == 1.0625f, "the float32 step lands on the midpoint");
    mpfr_clear(m);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(x), NE, 0, 0x39, XF);
    ck_assert_int_eq(er_convert_bits(ER_FMT_F64, ER_FMT_F32, d2b(x), NE, 0, &b32, &fl), ER_OK);
    ck_assert_int_eq(er_convert_bits(ER_FMT_F32, ER_FMT_F8E4M3FN, b32, NE, 0, &via, &fl), ER_OK);
    ck_assert_msg(via == 0x38, "two roundings (ml_dtypes) give 0x38, got 0x%llx", (unsigned long long)via);
    /* The same at the top of the range: 464 + 2^-30 overflows to NaN when rounded once; through
     * float32 it becomes 464, which ties to 448. */
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FN, d2b(464.0 + 0x1p-30), NE, 0, 0x7F, OF | XF);
    ck_assert_int_eq(er_convert_bits(ER_FMT_F64, ER_FMT_F32, d2b(464.0 + 0x1p-30), NE, 0, &b32, &fl), ER_OK);
    ck_assert_int_eq(er_convert_bits(ER_FMT_F32, ER_FMT_F8E4M3FN, b32, NE, 0, &via, &fl), ER_OK);
    ck_assert_msg(via == 0x7E, "two roundings give 448 (0x7E), got 0x%llx", (unsigned long long)via);
    /* And for bf16 (f64 -> f32 -> bf16 is the other common double rounding). */
    FACT(ER_FMT_F64, ER_FMT_BF16, d2b(1.0 + 0x1p-8 + 0x1p-40), NE, 0, 0x3F81, XF);
}
END_TEST

START_TEST(test_fnuz)
{
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FNUZ, d2b(-0.0), NE, 0, 0x00, 0); /* no -0 */
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FNUZ, d2b(240.0), NE, 0, 0x7F, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FNUZ, d2b(248.0), NE, 0, 0x80, OF | XF); /* tie to 256: overflow, NaN */
    FACT(ER_FMT_F64, ER_FMT_F8E4M3FNUZ, d2b(-248.0), NE, SAT, 0xFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M2FNUZ, d2b(57344.0), NE, 0, 0x7F, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M2FNUZ, d2b(-1e-30), NE, 0, 0x00, UF | XF); /* underflow to +0 */
    FACT(ER_FMT_F8E4M3FNUZ, ER_FMT_F32, 0x80, NE, 0, 0x7FC00000, 0);      /* the NaN: no sign */
    FACT(ER_FMT_F8E4M3FNUZ, ER_FMT_F8E4M3FN, 0x80, NE, 0, 0x7F, 0);
    FACT(ER_FMT_F8E4M3FN, ER_FMT_F8E5M2FNUZ, 0xFF, NE, 0, 0x80, 0);
}
END_TEST

START_TEST(test_fp6_fp4)
{
    static const double f4_values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    int i;
    for (i = 0; i < 8; i++) {
        FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(f4_values[i]), NE, 0, (uint64_t)i, 0);
        FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(-f4_values[i]), NE, 0, (uint64_t)(8 + i), 0);
        FACT(ER_FMT_F4E2M1FN, ER_FMT_F64, (uint64_t)i, NE, 0, d2b(f4_values[i]), 0);
    }
    FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(100.0), NE, 0, 0x7, OF | XF); /* no inf, no NaN: +-max */
    FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(-100.0), NE, 0, 0xF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(5.0), NE, 0, 0x6, XF); /* tie between 4 and 6: even is 4 */
    FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(5.0), ER_RND_NEAREST_AWAY, 0, 0x7, XF);
    FACT(ER_FMT_F64, ER_FMT_F6E2M3FN, d2b(7.5), NE, 0, 0x1F, 0);
    FACT(ER_FMT_F64, ER_FMT_F6E2M3FN, d2b(1000.0), NE, 0, 0x1F, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F6E3M2FN, d2b(28.0), NE, 0, 0x1F, 0);
    FACT(ER_FMT_F64, ER_FMT_F6E3M2FN, d2b(-30.0), NE, 0, 0x3F, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F6E3M2FN, d2b(-0.0), NE, 0, 0x20, 0);
    FACT(ER_FMT_F64, ER_FMT_F4E2M1FN, d2b(0.0 / 0.0) & ~(UINT64_C(1) << 63), NE, 0, 0x0, IF); /* NaN: +0 */
}
END_TEST

START_TEST(test_cuda_sat)
{
    double inf = 1.0 / 0.0;
    /* __NV_SATFINITE: +-max on overflow and for +-inf. */
    FACTB(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b((float)inf), NE, SAT, 0x7E);
    FACTB(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b((float)-inf), NE, SAT, 0xFE);
    FACTB(ER_FMT_F32, ER_FMT_F8E5M2, f2b((float)inf), NE, SAT, 0x7B);
    FACT(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b(1e6f), NE, SAT, 0x7E, OF | XF);
    /* __NV_NOSAT: NaN for E4M3, +-inf for E5M2. */
    FACT(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b(1e6f), NE, 0, 0x7F, OF | XF);
    FACT(ER_FMT_F32, ER_FMT_F8E5M2, f2b(-1e6f), NE, 0, 0xFC, OF | XF);
    FACT(ER_FMT_F32, ER_FMT_F8E5M2, f2b((float)-inf), NE, 0, 0xFC, 0);
    /* Below half the least subnormal (2^-9 for e4m3fn): +-0. */
    FACT(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b(0x1p-11f), NE, 0, 0x00, UF | XF);
    FACT(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b(-0x1p-11f), NE, 0, 0x80, UF | XF);
    FACT(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b(0x1p-10f), NE, 0, 0x00, UF | XF);     /* exactly half: even */
    FACT(ER_FMT_F32, ER_FMT_F8E4M3FN, f2b(0x1.000002p-10f), NE, 0, 0x01, UF | XF);
}
END_TEST

/* f8E5M3FNU (UE5M3): no sign, E5 bias 15, M3, subnormals and a zero, no infinity, 0xff the one NaN
 * (CUDA 13.4's __nv_fp8_ue5m3).  Pattern 0x78 is 1, 0xfe the largest value 1.75 * 2^16, 0x01 the least
 * 2^-17, 0x08 the least normal 2^-14.  Each value below is worked out by hand from that definition. */
START_TEST(test_e5m3)
{
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(1.0), NE, 0, 0x78, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(114688.0), NE, 0, 0xFE, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p-17), NE, 0, 0x01, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p-14), NE, 0, 0x08, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1.cp-15), NE, 0, 0x07, 0); /* largest subnormal 7 * 2^-17 */
    /* ties: 1.0625 lies halfway between 1 (0x78, even) and 1.125 (0x79) */
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(1.0625), NE, 0, 0x78, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(1.0625), ER_RND_NEAREST_AWAY, 0, 0x79, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(1.0625), ER_RND_POSITIVE_INF, 0, 0x79, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(1.0625), ER_RND_ZERO, 0, 0x78, XF);
    /* overflow: 118784 is the tie between the largest value 114688 (significand 14, even) and 122880
     * (significand 15, the NaN pattern): nearest even keeps 114688; anything above overflows */
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(118784.0), NE, 0, 0xFE, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(118785.0), NE, 0, 0xFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(118785.0), NE, SAT, 0xFE, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(118785.0), ER_RND_ZERO, 0, 0xFE, XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(122880.0), ER_RND_ZERO, 0, 0xFE, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(122880.0), ER_RND_POSITIVE_INF, 0, 0xFF, OF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p17), NE, 0, 0xFF, OF | XF);
    /* underflow: 2^-18 is the tie between 0 (even) and 2^-17; 3 * 2^-19 rounds up to 2^-17 */
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p-18), NE, 0, 0x00, UF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1.8p-18), NE, 0, 0x01, UF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p-30), ER_RND_POSITIVE_INF, 0, 0x01, UF | XF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p-30), ER_RND_ZERO, 0, 0x00, UF | XF);
    /* flush to zero: a subnormal result becomes 0 */
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0x1p-17), NE, ER_OPT_FTZ, 0x00, UF | XF);
    /* no sign: +-0 give the one zero; a negative value (and -inf) gives NaN, invalid */
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(0.0), NE, 0, 0x00, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(-0.0), NE, 0, 0x00, 0);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(-1.0), NE, 0, 0xFF, IF);
    FACT(ER_FMT_F64, ER_FMT_F8E5M3FNU, d2b(-0x1p-30), NE, SAT, 0xFF, IF);
    FACT(ER_FMT_F32, ER_FMT_F8E5M3FNU, 0xFF800000, NE, 0, 0xFF, IF); /* -inf */
    FACT(ER_FMT_F32, ER_FMT_F8E5M3FNU, 0x7F800000, NE, 0, 0xFF, IF); /* +inf: no infinity, NaN */
    FACT(ER_FMT_F32, ER_FMT_F8E5M3FNU, 0x7F800000, NE, SAT, 0xFE, XF);
    /* NaN: the one NaN, whatever the sign and payload */
    FACT(ER_FMT_F32, ER_FMT_F8E5M3FNU, 0xFFC00001, NE, 0, 0xFF, 0);
    /* decoding: into f32 exactly, NaN as the quiet NaN */
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F32, 0xFE, NE, 0, 0x47E00000, 0);
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F32, 0x01, NE, 0, 0x37000000, 0);
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F32, 0x80, NE, 0, 0x40000000, 0); /* E = 16: 2^1 */
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F32, 0x00, NE, 0, 0x00000000, 0);
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F32, 0xFF, NE, 0, 0x7FC00000, 0);
    /* into the other scale formats: 114688 overflows f8E4M3FN (NaN) and is 2^16 ... 2^17 for e8m0 */
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F8E4M3FN, 0xFE, NE, 0, 0x7F, OF | XF);
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F8E8M0FNU, 0xFE, ER_RND_ZERO, 0, 127 + 16, XF);
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F8E8M0FNU, 0xFE, NE, 0, 127 + 17, XF);
    FACT(ER_FMT_F8E5M3FNU, ER_FMT_F8E8M0FNU, 0x00, NE, 0, 0xFF, IF); /* e8m0 has no zero */
}
END_TEST

START_TEST(test_nan_payload)
{
    /* f32 signalling NaN with payload 0x200001: top bits kept, quiet bit set. */
    FACT(ER_FMT_F32, ER_FMT_F16, 0x7FA00001, NE, 0, 0x7F00, 0);
    FACT(ER_FMT_F32, ER_FMT_F64, 0x7FA00001, NE, 0, UINT64_C(0x7FFC000020000000), 0);
    FACT(ER_FMT_F32, ER_FMT_TF32, 0xFFA00001, NE, 0, 0xFFE00000, 0);
    FACT(ER_FMT_F32, ER_FMT_BF16, 0x7F800001, NE, 0, 0x7FC0, 0); /* payload below bf16's bits */
    FACT(ER_FMT_F16, ER_FMT_F32, 0xFE01, NE, 0, 0xFFC02000, 0);
    FACT(ER_FMT_F16, ER_FMT_F8E5M2, 0x7D00, NE, 0, 0x7F, 0);      /* payload 0x100: top bits 01, quiet */
    FACT(ER_FMT_F16, ER_FMT_F8E4M3FN, 0xFE00, NE, 0, 0xFF, 0);     /* sign kept */
    FACT(ER_FMT_F16, ER_FMT_F8E8M0FNU, 0xFE00, NE, 0, 0xFF, 0);
    FACT(ER_FMT_F16, ER_FMT_F8E5M2FNUZ, 0xFE00, NE, 0, 0x80, 0);
    FACT(ER_FMT_F8E4M3FN, ER_FMT_F16, 0xFF, NE, 0, 0xFE00, 0);     /* no payload */
    FACT(ER_FMT_F8E8M0FNU, ER_FMT_F32, 0xFF, NE, 0, 0x7FC00000, 0);
    FACT(ER_FMT_F64, ER_FMT_I32, d2b(0.0 / 0.0), NE, 0, 0, IF);
    FACT(ER_FMT_F16, ER_FMT_F6E2M3FN, 0x7E00, NE, 0, 0, IF);
}
END_TEST

START_TEST(test_integers)
{
    /* Integer to integer wraps, or clamps with saturate. */
    /* docs/formats.md: "Integer to integer: wraps modulo 2^width (overflow flag)". */
    FACT(ER_FMT_I16, ER_FMT_I8, 300, NE, 0, 44, OF);
    FACT(ER_FMT_I16, ER_FMT_I8, 0xFF7F /* -129 */, NE, 0, 0x7F, OF);
    FACT(ER_FMT_I16, ER_FMT_I8, 100, NE, 0, 100, 0);
    FACT(ER_FMT_I16, ER_FMT_U8, 0xFFFF /* -1 */, NE, 0, 0xFF, OF);
    {
        uint64_t out;
        unsigned fl;
        ck_assert_int_eq(er_convert_bits(ER_FMT_I16, ER_FMT_I8, 300, NE, SAT, &out, &fl), ER_OK);
        ck_assert_msg(out == 0x7F && fl != 0, "i16 300 -> i8 saturating: 0x%llx flags 0x%x", (unsigned long long)out,
                      fl);
        ck_assert_int_eq(er_convert_bits(ER_FMT_I16, ER_FMT_I8, 0xFF7F, NE, SAT, &out, &fl), ER_OK);
        ck_assert_msg(out == 0x80 && fl != 0, "i16 -129 -> i8 saturating: 0x%llx flags 0x%x", (unsigned long long)out,
                      fl);
    }
    /* Float to integer: rounded, then clamped with invalid. */
    FACT(ER_FMT_F32, ER_FMT_U8, f2b(-0.4f), NE, 0, 0, XF);
    FACT(ER_FMT_F32, ER_FMT_U8, f2b(-0.6f), NE, 0, 0, IF);
    FACT(ER_FMT_F32, ER_FMT_U8, f2b(255.4f), NE, 0, 255, XF);
    FACT(ER_FMT_F32, ER_FMT_U8, f2b(255.5f), NE, 0, 255, IF);
    FACT(ER_FMT_F32, ER_FMT_I8, f2b(-128.5f), NE, 0, 0x80, XF);
    FACT(ER_FMT_F32, ER_FMT_I8, f2b(-128.5f), ER_RND_NEAREST_AWAY, 0, 0x80, IF);
    FACT(ER_FMT_F32, ER_FMT_I8, f2b(2.5f), ER_RND_ODD, 0, 3, XF);
    FACT(ER_FMT_F32, ER_FMT_I8, f2b(3.5f), ER_RND_ODD, 0, 3, XF);
    FACT(ER_FMT_F64, ER_FMT_I32, d2b(-1.0 / 0.0), NE, 0, 0x80000000, IF);
    FACT(ER_FMT_F64, ER_FMT_I64, d2b(0x1p63), NE, 0, UINT64_C(0x7FFFFFFFFFFFFFFF), IF);
    FACT(ER_FMT_F64, ER_FMT_I64, d2b(-0x1p63), NE, 0, UINT64_C(0x8000000000000000), 0);
    /* Integer to float: the exact integer rounded once. */
    FACT(ER_FMT_I64, ER_FMT_F32, UINT64_C(0x7FFFFFFFFFFFFFFF), NE, 0, 0x5F000000, XF);
    FACT(ER_FMT_I64, ER_FMT_F64, UINT64_C(0x8000000000000000), NE, 0, d2b(-0x1p63), 0);
    FACT(ER_FMT_I32, ER_FMT_F16, 65520, NE, 0, 0x7C00, OF | XF);
    FACT(ER_FMT_I16, ER_FMT_F8E4M3FN, 17, NE, 0, 0x58, XF); /* 17: midway 16..18, even is 16 (0x58) */
}
END_TEST

/* An out-of-range integer whose wrapped value happens to equal the end of the range still overflows. */
START_TEST(test_int_wrap_to_range_end)
{
    FACT(ER_FMT_I16, ER_FMT_I8, 0x017F /* 383 = 127 + 256 */, NE, 0, 0x7F, OF);
    FACT(ER_FMT_I16, ER_FMT_I8, 0xFE80 /* -384 = -128 - 256 */, NE, 0, 0x80, OF);
    FACT(ER_FMT_I16, ER_FMT_U8, 0x01FF /* 511 = 255 + 256 */, NE, 0, 0xFF, OF);
    FACT(ER_FMT_I16, ER_FMT_U8, 0xFF00 /* -256 */, NE, 0, 0x00, OF);
}
END_TEST

START_TEST(test_tf32)
{
    uint64_t out;
    unsigned fl;
    /* 1 + 2^-11 is midway between 1 and 1 + 2^-10: even is 1. */
    FACT(ER_FMT_F32, ER_FMT_TF32, f2b(1.0f + 0x1p-11f), NE, 0, 0x3F800000, XF);
    FACT(ER_FMT_F32, ER_FMT_TF32, f2b(1.0f + 0x1p-11f + 0x1p-23f), NE, 0, 0x3F802000, XF);
    FACT(ER_FMT_F32, ER_FMT_TF32, f2b(0x1.fffffep127f), NE, 0, 0x7F800000, OF | XF);
    FACT(ER_FMT_TF32, ER_FMT_F32, 0x7F7FE000, NE, 0, 0x7F7FE000, 0);
    ck_assert_int_eq(er_check_pattern(ER_FMT_TF32, 0x3F800001), ER_EPATTERN);
    ck_assert_int_eq(er_check_pattern(ER_FMT_TF32, 0x3F802000), ER_OK);
    ck_assert_int_eq(er_convert_bits(ER_FMT_TF32, ER_FMT_F32, 0x3F800001, NE, 0, &out, &fl), ER_EPATTERN);
    {   /* er_convert (the core) ignores the padding as er_decode does. */
        er_res r = er_convert(ER_FMT_TF32, ER_FMT_F32, 0x3F801FFF, NE, 0);
        ck_assert_msg(r.bits == 0x3F800000 && r.flags == 0, "tf32 0x3F801FFF -> f32: 0x%llx flags 0x%x",
                      (unsigned long long)r.bits, r.flags);
    }
    ck_assert_int_eq(er_check_pattern(ER_FMT_F8E4M3FN, 0x100), ER_EPATTERN);
    ck_assert_int_eq(er_check_pattern(ER_FMT_F4E2M1FN, 0x10), ER_EPATTERN);
}
END_TEST

/*
 * Boldo and Melquiond: rounding to odd at p+2 or more bits, then to nearest at p bits, equals rounding
 * to nearest once.  bf16 (8 bits) is wide enough for e4m3 (4), e5m2 (3), fp6 and fp4, and covers their
 * ranges.  Random f32 sources (seeded).
 */
START_TEST(test_round_to_odd)
{
    static const int narrow[5] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN,
                                  ER_FMT_F4E2M1FN};
    uint64_t st = er_test_seed("mpfr_facts round_to_odd");
    long n = 0, bad = 0;
    int i, k;
    for (i = 0; i < 200000; i++) {
        uint64_t b = er_test_rand(&st) & 0xFFFFFFFFu;
        if ((b & 0x7F800000u) == 0x7F800000u)
            continue; /* finite sources only */
        if (i & 1) /* half near the narrow formats' range */
            b = (b & 0x807FFFFFu) | ((uint64_t)(127 - 20 + (er_test_rand(&st) % 40)) << 23);
        for (k = 0; k < 5; k++) {
            er_res mid = er_convert(ER_FMT_F32, ER_FMT_BF16, b, ER_RND_ODD, 0);
            er_res two = er_convert(ER_FMT_BF16, narrow[k], mid.bits, NE, 0);
            er_res one = er_convert(ER_FMT_F32, narrow[k], b, NE, 0);
            n++;
            if (two.bits != one.bits) {
                if (bad < 10)
                    printf("round_to_odd: f32 0x%08llx -> %s: once 0x%llx, via bf16 odd 0x%llx\n",
                           (unsigned long long)b, of_get(narrow[k])->name, (unsigned long long)one.bits,
                           (unsigned long long)two.bits);
                bad++;
            }
        }
    }
    printf("round_to_odd: %ld pairs, %ld differ\n", n, bad);
    ck_assert_msg(bad == 0, "round_to_odd: %ld of %ld double roundings through odd differ", bad, n);
}
END_TEST

/* ---- The oracle against MPFR's exponent-range emulation (the 4 IEEE directions). ---- */

/* x rounded into T by MPFR itself: precision, exponent range, subnormals.  Returns the MPFR
 * overflow flag. */
static int mpfr_emulate(const of_fmt *T, const mpfr_t x, mpfr_rnd_t r, mpfr_t y)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t top;
    int t, ovf;
    mpfr_init2(top, OF_PREC);
    mpfr_set_str(top, T->max, 0, MPFR_RNDN);
    mpfr_clear_flags();
    t = mpfr_set(y, x, r); /* y has T's precision */
    mpfr_set_emin(T->has_sub ? T->emin - T->prec + 2 : T->emin + 1);
    mpfr_set_emax(mpfr_get_exp(top));
    t = mpfr_check_range(y, t, r);
    if (T->has_sub)
        t = mpfr_subnormalize(y, t, r);
    (void)t;
    ovf = mpfr_overflow_p();
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clear(top);
    return ovf;
}

START_TEST(test_oracle_selfcheck)
{
    static const int src[] = {ER_FMT_F16,        ER_FMT_BF16,       ER_FMT_I16,        ER_FMT_F8E4M3FN,
                              ER_FMT_F8E5M2,     ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU,
                              ER_FMT_F8E5M3FNU,  ER_FMT_F6E2M3FN,   ER_FMT_F6E3M2FN,   ER_FMT_F4E2M1FN,
                              ER_FMT_F32,        ER_FMT_F64};
    static const mpfr_rnd_t modes[4] = {MPFR_RNDN, MPFR_RNDZ, MPFR_RNDD, MPFR_RNDU};
    static const int dirs[4] = {ER_RND_NEAREST_EVEN, ER_RND_ZERO, ER_RND_NEGATIVE_INF, ER_RND_POSITIVE_INF};
    uint64_t st = er_test_seed("mpfr_facts oracle_selfcheck");
    mpfr_t r, y[OF_NFMT], top[OF_NFMT];
    of_val x;
    long n = 0, bad = 0;
    int si, ti, k;
    mpfr_init2(r, OF_PREC);
    for (ti = 0; ti < OF_NFMT; ti++) {
        mpfr_init2(y[ti], of_fmts[ti].kind == OF_FLOAT ? of_fmts[ti].prec : 2);
        mpfr_init2(top[ti], OF_PREC);
        mpfr_set_str(top[ti], of_fmts[ti].max, 0, MPFR_RNDN);
    }
    of_val_init(&x);
    for (si = 0; si < (int)(sizeof src / sizeof src[0]); si++) {
        const of_fmt *S = of_get(src[si]);
        long cnt = S->width <= 16 ? (1L << S->width) : 40000, i;
        for (i = 0; i < cnt; i++) {
            uint64_t b = S->width <= 16 ? (uint64_t)i : er_test_rand(&st) & of_mask(S->width);
            of_decode(S, b, &x);
            if (x.cls != OF_SUB && x.cls != OF_NORM)
                continue;
            for (ti = 0; ti < OF_NFMT; ti++) {
                const of_fmt *T = &of_fmts[ti];
                long X, q;
                if (T->kind != OF_FLOAT)
                    continue;
                if (!T->is_signed && mpfr_sgn(x.v) < 0)
                    continue;
                X = (long)mpfr_get_exp(x.v) - 1;
                if (!T->has_sub && X < T->emin)
                    continue; /* below the least value of e8m0: the clamp is exactref's rule, not MPFR's */
                q = (X > T->emin ? X : T->emin) - (T->prec - 1);
                for (k = 0; k < 4; k++) {
                    int ovf_mpfr, ovf_oracle;
                    of_round_grid(r, x.v, q, dirs[k]);
                    ovf_oracle = mpfr_cmpabs(r, top[ti]) > 0;
                    ovf_mpfr = mpfr_emulate(T, x.v, modes[k], y[ti]);
                    ovf_mpfr = ovf_mpfr || mpfr_inf_p(y[ti]) || mpfr_cmpabs(y[ti], top[ti]) > 0;
                    n++;
                    if (ovf_oracle != ovf_mpfr ||
                        (!ovf_oracle && (!mpfr_equal_p(r, y[ti]) ||
                                         (mpfr_zero_p(r) && mpfr_signbit(r) != mpfr_signbit(y[ti]))))) {
                        if (bad < 10)
                            mpfr_printf("oracle_selfcheck: %s 0x%llx (%Ra) -> %s %s: formula %Ra%s, MPFR %Ra%s\n",
                                        S->name, (unsigned long long)b, x.v, T->name, of_dir_name(dirs[k]), r,
                                        ovf_oracle ? " (overflow)" : "", y[ti], ovf_mpfr ? " (overflow)" : "");
                        bad++;
                    }
                }
            }
        }
    }
    printf("oracle_selfcheck: %ld roundings compared, %ld differ\n", n, bad);
    for (ti = 0; ti < OF_NFMT; ti++)
        mpfr_clears(y[ti], top[ti], (mpfr_ptr)0);
    mpfr_clear(r);
    of_val_clear(&x);
    ck_assert_msg(bad == 0, "oracle_selfcheck: the formula and MPFR's emulation differ in %ld of %ld", bad, n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpfr_facts");
    TCase *tc;
    SRunner *sr;
    int nf;
    of_init();
    tc = tcase_create("facts");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_e4m3fn_464_465);
    tcase_add_test(tc, test_f16_65520);
    tcase_add_test(tc, test_e5m2);
    tcase_add_test(tc, test_e8m0);
    tcase_add_test(tc, test_e5m3);
    tcase_add_test(tc, test_double_rounding);
    tcase_add_test(tc, test_fnuz);
    tcase_add_test(tc, test_fp6_fp4);
    tcase_add_test(tc, test_cuda_sat);
    tcase_add_test(tc, test_nan_payload);
    tcase_add_test(tc, test_integers);
    tcase_add_test(tc, test_int_wrap_to_range_end);
    tcase_add_test(tc, test_tf32);
    tcase_add_test(tc, test_round_to_odd);
    suite_add_tcase(s, tc);
    tc = tcase_create("oracle");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_oracle_selfcheck);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    of_fini();
    return nf ? 1 : 0;
}
