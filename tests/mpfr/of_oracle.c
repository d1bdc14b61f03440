/* of_oracle.c: the MPFR oracle (see of_oracle.h).  Nothing here calls into the library's code. */
#include <stdlib.h>
#include <string.h>

#include "of_oracle.h"
#include "exactref/core/er_round.h"

#define U64 UINT64_C
#define ALLF (ER_FLAG_INEXACT | ER_FLAG_UNDERFLOW | ER_FLAG_OVERFLOW | ER_FLAG_INVALID)

/*
 * THE TABLE, written from formats.md:
 * id, name, kind, width, ebits, mbits, pad, bias, NaN encoding, inf, signed, -0, subnormals,
 * precision, emin, max finite, min finite, max pattern, least positive pattern.
 */
const of_fmt of_fmts[OF_NFMT] = {
    {ER_FMT_F64, "f64", OF_FLOAT, 64, 11, 52, 0, 1023, OF_NAN_IEEE, 1, 1, 1, 1, 53, -1022,
     "0x1.fffffffffffffp+1023", "-0x1.fffffffffffffp+1023", U64(0x7FEFFFFFFFFFFFFF), 1},
    {ER_FMT_F32, "f32", OF_FLOAT, 32, 8, 23, 0, 127, OF_NAN_IEEE, 1, 1, 1, 1, 24, -126,
     "0x1.fffffep+127", "-0x1.fffffep+127", U64(0x7F7FFFFF), 1},
    {ER_FMT_TF32, "tf32", OF_FLOAT, 32, 8, 10, 13, 127, OF_NAN_IEEE, 1, 1, 1, 1, 11, -126,
     "0x1.ffcp+127", "-0x1.ffcp+127", U64(0x7F7FE000), U64(0x2000)},
    {ER_FMT_F16, "f16", OF_FLOAT, 16, 5, 10, 0, 15, OF_NAN_IEEE, 1, 1, 1, 1, 11, -14, "65504", "-65504",
     U64(0x7BFF), 1},
    {ER_FMT_BF16, "bf16", OF_FLOAT, 16, 8, 7, 0, 127, OF_NAN_IEEE, 1, 1, 1, 1, 8, -126, "0x1.fep+127",
     "-0x1.fep+127", U64(0x7F7F), 1},
    {ER_FMT_F8E4M3FN, "f8E4M3FN", OF_FLOAT, 8, 4, 3, 0, 7, OF_NAN_FN, 0, 1, 1, 1, 4, -6, "448", "-448",
     U64(0x7E), 1},
    {ER_FMT_F8E5M2, "f8E5M2", OF_FLOAT, 8, 5, 2, 0, 15, OF_NAN_IEEE, 1, 1, 1, 1, 3, -14, "57344",
     "-57344", U64(0x7B), 1},
    {ER_FMT_F8E4M3FNUZ, "f8E4M3FNUZ", OF_FLOAT, 8, 4, 3, 0, 8, OF_NAN_FNUZ, 0, 1, 0, 1, 4, -7, "240",
     "-240", U64(0x7F), 1},
    {ER_FMT_F8E5M2FNUZ, "f8E5M2FNUZ", OF_FLOAT, 8, 5, 2, 0, 16, OF_NAN_FNUZ, 0, 1, 0, 1, 3, -15, "57344",
     "-57344", U64(0x7F), 1},
    {ER_FMT_F8E8M0FNU, "f8E8M0FNU", OF_FLOAT, 8, 8, 0, 0, 127, OF_NAN_FN, 0, 0, 0, 0, 1, -127, "0x1p+127",
     "0x1p-127", U64(0xFE), U64(0x00)},
    {ER_FMT_F6E2M3FN, "f6E2M3FN", OF_FLOAT, 6, 2, 3, 0, 1, OF_NAN_NONE, 0, 1, 1, 1, 4, 0, "7.5", "-7.5",
     U64(0x1F), 1},
    {ER_FMT_F6E3M2FN, "f6E3M2FN", OF_FLOAT, 6, 3, 2, 0, 3, OF_NAN_NONE, 0, 1, 1, 1, 3, -2, "28", "-28",
     U64(0x1F), 1},
    {ER_FMT_F4E2M1FN, "f4E2M1FN", OF_FLOAT, 4, 2, 1, 0, 1, OF_NAN_NONE, 0, 1, 1, 1, 2, 0, "6", "-6",
     U64(0x7), 1},
    {ER_FMT_F8E5M3FNU, "f8E5M3FNU", OF_FLOAT, 8, 5, 3, 0, 15, OF_NAN_FN, 0, 0, 0, 1, 4, -14, "114688", "0",
     U64(0xFE), 1},
    {ER_FMT_I8, "i8", OF_SINT, 8, 0, 0, 0, 0, OF_NAN_NONE, 0, 1, 0, 0, 0, 0, "127", "-128", U64(0x7F), 1},
    {ER_FMT_U8, "u8", OF_UINT, 8, 0, 0, 0, 0, OF_NAN_NONE, 0, 0, 0, 0, 0, 0, "255", "0", U64(0xFF), 1},
    {ER_FMT_I16, "i16", OF_SINT, 16, 0, 0, 0, 0, OF_NAN_NONE, 0, 1, 0, 0, 0, 0, "32767", "-32768",
     U64(0x7FFF), 1},
    {ER_FMT_I32, "i32", OF_SINT, 32, 0, 0, 0, 0, OF_NAN_NONE, 0, 1, 0, 0, 0, 0, "2147483647",
     "-2147483648", U64(0x7FFFFFFF), 1},
    {ER_FMT_I64, "i64", OF_SINT, 64, 0, 0, 0, 0, OF_NAN_NONE, 0, 1, 0, 0, 0, 0, "9223372036854775807",
     "-9223372036854775808", U64(0x7FFFFFFFFFFFFFFF), 1},
};

/* Per-format constants (index: row of of_fmts): max, min, 2^emin. */
static mpfr_t of_maxv[OF_NFMT], of_minv[OF_NFMT], of_tiny[OF_NFMT];
/* Scratch. */
static mpfr_t t_a, t_b, t_n, t_r, t_r2;
static of_val t_chk;
static int of_ready;

int of_stats_on;
long of_stat_ties;
#define OF_NWHY 32
static const char *of_why[OF_NWHY];
static long of_why_n[OF_NWHY];

static void of_stat_why(const char *why)
{
    int i;
    for (i = 0; i < OF_NWHY && of_why[i]; i++)
        if (of_why[i] == why)
            break;
    if (i == OF_NWHY)
        return;
    of_why[i] = why;
    of_why_n[i]++;
}

void of_stats_print(const char *test)
{
    int i;
    printf("%s: coverage: %ld exact ties", test, of_stat_ties);
    for (i = 0; i < OF_NWHY && of_why[i]; i++)
        printf("; %s: %ld", of_why[i], of_why_n[i]);
    printf("\n");
}

long of_uf_gray, of_uf_gray_core, of_uf_gray_after, of_uf_gray_core_vs_after;

static int of_row(const of_fmt *f) { return (int)(f - of_fmts); }

const of_fmt *of_get(int id)
{
    int i;
    for (i = 0; i < OF_NFMT; i++)
        if (of_fmts[i].id == id)
            return &of_fmts[i];
    fprintf(stderr, "of_get: unknown format id %d\n", id);
    abort();
}

uint64_t of_mask(int width) { return width >= 64 ? ~U64(0) : (U64(1) << width) - 1u; }

void of_init(void)
{
    int i;
    if (of_ready)
        return;
    for (i = 0; i < OF_NFMT; i++) {
        mpfr_inits2(OF_PREC, of_maxv[i], of_minv[i], of_tiny[i], (mpfr_ptr)0);
        if (mpfr_set_str(of_maxv[i], of_fmts[i].max, 0, MPFR_RNDN) != 0 ||
            mpfr_set_str(of_minv[i], of_fmts[i].min, 0, MPFR_RNDN) != 0) {
            fprintf(stderr, "of_init: bad number in the table row %s\n", of_fmts[i].name);
            abort();
        }
        mpfr_set_ui_2exp(of_tiny[i], 1, of_fmts[i].emin, MPFR_RNDN);
    }
    mpfr_inits2(OF_PREC, t_a, t_b, t_n, t_r, t_r2, (mpfr_ptr)0);
    of_val_init(&t_chk);
    of_ready = 1;
}

void of_fini(void)
{
    int i;
    if (!of_ready)
        return;
    for (i = 0; i < OF_NFMT; i++)
        mpfr_clears(of_maxv[i], of_minv[i], of_tiny[i], (mpfr_ptr)0);
    mpfr_clears(t_a, t_b, t_n, t_r, t_r2, (mpfr_ptr)0);
    of_val_clear(&t_chk);
    mpfr_free_cache();
    of_ready = 0;
}

void of_val_init(of_val *x)
{
    memset(x, 0, sizeof *x);
    mpfr_init2(x->v, OF_PREC);
}
void of_val_clear(of_val *x) { mpfr_clear(x->v); }
void of_exp_init(of_exp *e)
{
    memset(e, 0, sizeof *e);
    mpfr_init2(e->v, OF_PREC);
}
void of_exp_clear(of_exp *e) { mpfr_clear(e->v); }

const char *of_dir_name(int dir)
{
    static const char *n[] = {"nearest_even", "nearest_away", "zero", "negative_inf", "positive_inf", "odd"};
    return dir >= 0 && dir < 6 ? n[dir] : "?";
}

/* ---- Decoding with the field formula. ---- */
void of_decode(const of_fmt *f, uint64_t bits, of_val *x)
{
    uint64_t mag, E, M;
    x->payload = 0;
    x->pbits = 0;
    x->sign = 0;
    bits &= of_mask(f->width);
    if (f->kind != OF_FLOAT) {
        int neg = f->kind == OF_SINT && ((bits >> (f->width - 1)) & 1u);
        mpfr_set_uj(x->v, bits, MPFR_RNDN);
        if (neg) /* two's complement: the pattern minus 2^width */
            mpfr_sub(x->v, x->v, (mpfr_set_ui_2exp(t_a, 1, f->width, MPFR_RNDN), t_a), MPFR_RNDN);
        x->sign = neg;
        x->cls = bits ? OF_NORM : OF_ZERO;
        return;
    }
    x->sign = f->is_signed ? (int)((bits >> (f->width - 1)) & 1u) : 0;
    mag = (bits >> f->pad) & of_mask(f->ebits + f->mbits);
    E = mag >> f->mbits;
    M = mag & of_mask(f->mbits);
    if ((f->nan == OF_NAN_IEEE && E == of_mask(f->ebits)) ||
        (f->nan == OF_NAN_FN && mag == of_mask(f->ebits + f->mbits))) {
        if (f->nan == OF_NAN_IEEE && M == 0) {
            x->cls = OF_INF;
            mpfr_set_inf(x->v, x->sign ? -1 : 1);
            return;
        }
        x->cls = OF_NAN;
        x->payload = f->nan == OF_NAN_IEEE ? M : 0;
        x->pbits = f->mbits;
        mpfr_set_nan(x->v);
        return;
    }
    if (f->nan == OF_NAN_FNUZ && x->sign && mag == 0) {
        x->cls = OF_NAN; /* "negative zero" is the NaN; it has no sign and no payload */
        x->sign = 0;
        x->pbits = f->mbits;
        mpfr_set_nan(x->v);
        return;
    }
    if (f->has_sub && E == 0) {
        if (M == 0) {
            x->cls = OF_ZERO;
            mpfr_set_zero(x->v, x->sign ? -1 : 1);
            return;
        }
        x->cls = OF_SUB; /* 0.M * 2^emin */
        mpfr_set_uj_2exp(x->v, M, f->emin - f->mbits, MPFR_RNDN);
    } else {
        x->cls = OF_NORM; /* 1.M * 2^(E - bias) */
        mpfr_set_uj_2exp(x->v, (U64(1) << f->mbits) | M, (long)E - f->bias - f->mbits, MPFR_RNDN);
    }
    if (x->sign)
        mpfr_neg(x->v, x->v, MPFR_RNDN);
}

/* ---- Rounding. ---- */
static int of_is_even(const mpfr_t n)
{
    mpfr_div_2ui(t_b, n, 1, MPFR_RNDN);
    return mpfr_integer_p(t_b);
}

void of_round_grid(mpfr_t r, const mpfr_t x, long q, int dir)
{
    mpfr_mul_2si(t_a, x, -q, MPFR_RNDN); /* exact */
    if (of_stats_on && !mpfr_integer_p(t_a)) {
        mpfr_mul_2ui(t_b, t_a, 1, MPFR_RNDN);
        of_stat_ties += mpfr_integer_p(t_b) != 0;
    }
    switch (dir) {
    case ER_RND_NEAREST_EVEN: mpfr_roundeven(t_n, t_a); break;
    case ER_RND_NEAREST_AWAY: mpfr_round(t_n, t_a); break;
    case ER_RND_ZERO: mpfr_trunc(t_n, t_a); break;
    case ER_RND_NEGATIVE_INF: mpfr_floor(t_n, t_a); break;
    case ER_RND_POSITIVE_INF: mpfr_ceil(t_n, t_a); break;
    default: /* odd: truncate; when inexact, an even result moves one away from zero */
        mpfr_trunc(t_n, t_a);
        if (!mpfr_equal_p(t_n, t_a) && of_is_even(t_n))
            mpfr_add_si(t_n, t_n, mpfr_sgn(t_a) > 0 ? 1 : -1, MPFR_RNDN);
        break;
    }
    mpfr_mul_2si(r, t_n, q, MPFR_RNDN);
}

/* ---- Expected results. ---- */
/* The NaN of T for a NaN of sign `sign` with payload `payload` of `pbits` bits (rule e). */
static uint64_t of_nan_bits(const of_fmt *T, int sign, uint64_t payload, int pbits)
{
    uint64_t s = (T->is_signed && sign) ? U64(1) << (T->width - 1) : 0;
    uint64_t a, frac;
    switch (T->nan) {
    case OF_NAN_IEEE:
        a = pbits >= T->mbits ? payload >> (pbits - T->mbits) : payload << (T->mbits - pbits);
        frac = (a & of_mask(T->mbits)) | (U64(1) << (T->mbits - 1));
        return s | (((of_mask(T->ebits) << T->mbits) | frac) << T->pad);
    case OF_NAN_FN:
        return s | (of_mask(T->ebits + T->mbits) << T->pad);
    case OF_NAN_FNUZ:
        return U64(1) << (T->width - 1);
    default:
        abort();
    }
}

static void e_bits(of_exp *e, uint64_t bits, const char *why)
{
    e->kind = OF_EXP_BITS;
    e->bits = bits;
    e->why = why;
}

static void e_value(of_exp *e, const mpfr_t v, const char *why)
{
    e->kind = OF_EXP_VALUE;
    mpfr_set(e->v, v, MPFR_RNDN);
    e->sign = mpfr_signbit(v) ? 1 : 0;
    e->why = why;
}

static void e_zero(of_exp *e, const of_fmt *T, int sign, const char *why)
{
    e->kind = OF_EXP_VALUE;
    e->sign = (T->kind == OF_FLOAT && T->has_negzero) ? sign : 0;
    mpfr_set_zero(e->v, e->sign ? -1 : 1);
    e->why = why;
}

/* The end of the range on the side of `sign` (floats: +-max finite). */
static void e_max(of_exp *e, const of_fmt *T, int sign, const char *why)
{
    int i = of_row(T);
    if (T->kind != OF_FLOAT)
        e_value(e, sign ? of_minv[i] : of_maxv[i], why);
    else if (sign)
        e_value(e, of_minv[i], why);
    else
        e_value(e, of_maxv[i], why);
}

void of_expect(const of_fmt *S, const of_val *x, const of_fmt *T, int dir, unsigned opts, of_exp *e)
{
    int cls = x->cls, sign = x->sign, ti = of_row(T);
    long X, q;
    e->must = e->mustnot = e->anyof = 0;
    e->uf_gray = e->uf_after = 0;
    if (cls == OF_SUB && (opts & ER_OPT_FTZ_IN))
        cls = OF_ZERO;

    if (cls == OF_NAN) {
        if (T->kind != OF_FLOAT) {
            e_bits(e, 0, "NaN into an integer: 0, invalid");
            e->must = ER_FLAG_INVALID;
            e->mustnot = ALLF & ~ER_FLAG_INVALID;
        } else if (T->nan == OF_NAN_NONE) {
            e_bits(e, 0, "NaN into a format without NaN: +0, invalid");
            e->must = ER_FLAG_INVALID;
            e->mustnot = ER_FLAG_UNDERFLOW | ER_FLAG_OVERFLOW;
        } else {
            e_bits(e, of_nan_bits(T, sign, x->payload, x->pbits), "NaN: sign, payload at the top, quiet");
            e->mustnot = ER_FLAG_INEXACT | ER_FLAG_UNDERFLOW | ER_FLAG_OVERFLOW;
        }
        return;
    }

    if (cls == OF_INF) {
        if (T->kind != OF_FLOAT) {
            e_max(e, T, sign, "infinity into an integer: the end of the range, invalid");
            e->must = ER_FLAG_INVALID;
            e->mustnot = ALLF & ~ER_FLAG_INVALID;
        } else if (sign && !T->is_signed) {
            e_bits(e, of_nan_bits(T, 0, 0, 0), "-inf into an unsigned format: NaN, invalid");
            e->must = ER_FLAG_INVALID;
        } else if (opts & ER_OPT_SATURATE) {
            e_max(e, T, sign, "infinity, saturating: +-max");
            e->mustnot = ER_FLAG_UNDERFLOW;
        } else if (T->has_inf) {
            e->kind = OF_EXP_INF;
            e->sign = sign;
            e->why = "infinity: infinity";
            e->mustnot = ALLF;
        } else if (T->nan != OF_NAN_NONE) {
            e_bits(e, of_nan_bits(T, sign, 0, 0), "infinity into a format without infinity: NaN");
            e->mustnot = ER_FLAG_UNDERFLOW;
        } else {
            e_max(e, T, sign, "infinity into a format without infinity or NaN: +-max");
            e->mustnot = ER_FLAG_UNDERFLOW;
        }
        return;
    }

    if (cls == OF_ZERO) {
        if (T->kind == OF_FLOAT && !T->has_sub) {
            e_bits(e, of_nan_bits(T, 0, 0, 0), "zero into a format without zero: NaN, invalid");
            e->must = ER_FLAG_INVALID;
        } else {
            e_zero(e, T, sign, "zero: the zero of its sign");
            e->mustnot = ALLF;
        }
        return;
    }

    /* Finite and nonzero. */
    if (S->kind != OF_FLOAT && T->kind != OF_FLOAT && !(opts & ER_OPT_SATURATE)) {
        /* Integer to integer: modulo 2^width, into the range of T. */
        mpfr_set_ui_2exp(t_b, 1, T->width, MPFR_RNDN);
        mpfr_fmod(t_r, x->v, t_b, MPFR_RNDN);
        if (mpfr_sgn(t_r) < 0)
            mpfr_add(t_r, t_r, t_b, MPFR_RNDN);
        if (T->kind == OF_SINT && mpfr_cmp(t_r, of_maxv[ti]) > 0)
            mpfr_sub(t_r, t_r, t_b, MPFR_RNDN);
        if (mpfr_zero_p(t_r))
            mpfr_set_zero(t_r, 1);
        e_value(e, t_r, "integer to integer: wraps, overflow flag when out of range");
        if (mpfr_equal_p(t_r, x->v)) {
            e->mustnot = ALLF;
        } else { /* docs/formats.md: "wraps modulo 2^width (overflow flag)" */
            e->must = ER_FLAG_OVERFLOW;
            e->mustnot = ALLF & ~ER_FLAG_OVERFLOW;
        }
        return;
    }

    if (T->kind != OF_FLOAT) {
        of_round_grid(t_r, x->v, 0, dir);
        if (mpfr_cmp(t_r, of_minv[ti]) < 0 || mpfr_cmp(t_r, of_maxv[ti]) > 0) {
            e_max(e, T, sign, "into an integer, out of range: clamped, invalid");
            if (S->kind == OF_FLOAT) {
                e->must = ER_FLAG_INVALID;
                e->mustnot = ALLF & ~ER_FLAG_INVALID;
            } else {
                e->anyof = ER_FLAG_OVERFLOW | ER_FLAG_INVALID;
                e->mustnot = ER_FLAG_INEXACT | ER_FLAG_UNDERFLOW;
            }
            return;
        }
        if (mpfr_zero_p(t_r))
            mpfr_set_zero(t_r, 1);
        e_value(e, t_r, "into an integer: rounded");
        e->mustnot = ER_FLAG_UNDERFLOW | ER_FLAG_OVERFLOW | ER_FLAG_INVALID;
        if (mpfr_equal_p(t_r, x->v))
            e->mustnot |= ER_FLAG_INEXACT;
        else
            e->must = ER_FLAG_INEXACT;
        return;
    }

    if (sign && !T->is_signed) {
        e_bits(e, of_nan_bits(T, 0, 0, 0), "negative into an unsigned format: NaN, invalid");
        e->must = ER_FLAG_INVALID;
        return;
    }

    X = (long)mpfr_get_exp(x->v) - 1; /* |x| in [2^X, 2^(X+1)) */
    q = (X > T->emin ? X : T->emin) - (T->prec - 1);
    of_round_grid(t_r, x->v, q, dir);

    if (mpfr_cmpabs(t_r, of_maxv[ti]) > 0) {
        int to_inf = dir == ER_RND_NEAREST_EVEN || dir == ER_RND_NEAREST_AWAY ||
                     (dir == ER_RND_NEGATIVE_INF && sign) || (dir == ER_RND_POSITIVE_INF && !sign);
        if ((opts & ER_OPT_SATURATE) || !to_inf) {
            e_max(e, T, sign, "overflow: +-max");
        } else if (T->has_inf) {
            e->kind = OF_EXP_INF;
            e->sign = sign;
            e->why = "overflow: infinity";
        } else if (T->nan != OF_NAN_NONE) {
            e_bits(e, of_nan_bits(T, sign, 0, 0), "overflow: NaN (no infinity)");
        } else {
            e_max(e, T, sign, "overflow: +-max (no infinity, no NaN)");
        }
        e->must = ER_FLAG_OVERFLOW | ER_FLAG_INEXACT;
        e->mustnot = ER_FLAG_UNDERFLOW | ER_FLAG_INVALID;
        return;
    }

    if (mpfr_zero_p(t_r)) {
        if (!T->has_sub)
            e_value(e, of_tiny[ti], "rounds below the least value of a format without zero: clamped");
        else
            e_zero(e, T, sign, "rounds to zero: the zero of the sign");
        e->must = ER_FLAG_UNDERFLOW | ER_FLAG_INEXACT;
        e->mustnot = ER_FLAG_OVERFLOW | ER_FLAG_INVALID;
        return;
    }

    {
        int sub = T->has_sub && (long)mpfr_get_exp(t_r) - 1 < T->emin;
        int inexact;
        if (sub && (opts & ER_OPT_FTZ_OUT)) {
            e_zero(e, T, sign, "subnormal result, flush to zero");
            e->must = ER_FLAG_UNDERFLOW | ER_FLAG_INEXACT;
            e->mustnot = ER_FLAG_OVERFLOW | ER_FLAG_INVALID;
            return;
        }
        e_value(e, t_r, sub ? "rounded (subnormal)" : "rounded");
        inexact = !mpfr_equal_p(t_r, x->v);
        e->mustnot = ER_FLAG_OVERFLOW | ER_FLAG_INVALID;
        if (inexact)
            e->must |= ER_FLAG_INEXACT;
        else
            e->mustnot |= ER_FLAG_INEXACT;
        if (inexact && sub) {
            e->must |= ER_FLAG_UNDERFLOW;
        } else if (inexact && X < T->emin) {
            /* Tiny before rounding, rounded up to 2^emin: underflow depends on the convention. */
            e->uf_gray = 1;
            of_round_grid(t_r2, x->v, X - (T->prec - 1), dir); /* unbounded exponent range */
            e->uf_after = (long)mpfr_get_exp(t_r2) - 1 < T->emin;
        } else {
            e->mustnot |= ER_FLAG_UNDERFLOW;
        }
    }
}

/* ---- Comparison. ---- */
static void of_flags_str(unsigned f, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s", f ? "" : "-", (f & ER_FLAG_INEXACT) ? "X" : "", (f & ER_FLAG_UNDERFLOW) ? "U" : "",
             (f & ER_FLAG_OVERFLOW) ? "O" : "", (f & ER_FLAG_INVALID) ? "I" : "");
}

int of_check(const of_fmt *T, uint64_t r, unsigned fl, const of_exp *e, char *msg, size_t size)
{
    int ok;
    if ((r & ~of_mask(T->width)) != 0 || (T->pad && (r & of_mask(T->pad)) != 0)) {
        ok = 0;
    } else if (e->kind == OF_EXP_BITS) {
        ok = r == e->bits;
    } else {
        of_decode(T, r, &t_chk);
        if (e->kind == OF_EXP_INF)
            ok = t_chk.cls == OF_INF && t_chk.sign == e->sign;
        else
            ok = (t_chk.cls == OF_ZERO || t_chk.cls == OF_SUB || t_chk.cls == OF_NORM) &&
                 mpfr_equal_p(t_chk.v, e->v) &&
                 (t_chk.cls != OF_ZERO || T->kind != OF_FLOAT || t_chk.sign == e->sign);
    }
    if ((fl & ~(unsigned)ALLF) || (fl & e->must) != e->must || (fl & e->mustnot) || (e->anyof && !(fl & e->anyof)))
        ok = 0;
    if (!ok && msg) {
        char must[8], mustnot[8], anyof[8], val[96];
        of_flags_str(e->must, must, sizeof must);
        of_flags_str(e->mustnot, mustnot, sizeof mustnot);
        of_flags_str(e->anyof, anyof, sizeof anyof);
        if (e->kind == OF_EXP_BITS)
            snprintf(val, sizeof val, "bits 0x%llx", (unsigned long long)e->bits);
        else if (e->kind == OF_EXP_INF)
            snprintf(val, sizeof val, "%sinf", e->sign ? "-" : "+");
        else if (mpfr_zero_p(e->v))
            snprintf(val, sizeof val, "%s0", e->sign ? "-" : "+");
        else
            mpfr_snprintf(val, sizeof val, "%Ra", e->v);
        snprintf(msg, size, "expected %s [%s], flags must %s mustnot %s%s%s", val, e->why, must, mustnot,
                 e->anyof ? " anyof " : "", e->anyof ? anyof : "");
    }
    return ok;
}

int of_show(void)
{
    const char *s = getenv("EXACTREF_MPFR_SHOW");
    return s && *s ? atoi(s) : 20;
}

int of_run_one(of_tally *t, const of_fmt *S, uint64_t bits, const of_val *x, const of_fmt *T, int dir,
               unsigned opts, of_exp *e)
{
    er_res r = er_convert(S->id, T->id, bits, dir, opts);
    char msg[256];
    int ok;
    of_expect(S, x, T, dir, opts, e);
    if (of_stats_on)
        of_stat_why(e->why);
    ok = of_check(T, r.bits, r.flags, e, msg, sizeof msg);
    t->checks++;
    if (e->uf_gray) {
        int core = (r.flags & ER_FLAG_UNDERFLOW) != 0;
        of_uf_gray++;
        of_uf_gray_core += core;
        of_uf_gray_after += e->uf_after;
        of_uf_gray_core_vs_after += core != e->uf_after;
    }
    if (!ok) {
        if (t->fails < t->show) {
            char xs[96], fs[8];
            if (x->cls == OF_NAN)
                snprintf(xs, sizeof xs, "nan(0x%llx)", (unsigned long long)x->payload);
            else if (x->cls == OF_ZERO)
                snprintf(xs, sizeof xs, "%s0", x->sign ? "-" : "+");
            else
                mpfr_snprintf(xs, sizeof xs, "%Ra", x->v);
            of_flags_str(r.flags, fs, sizeof fs);
            printf("%s: MISMATCH %s 0x%llx (%s) -> %s, %s, opts %u: got 0x%llx flags %s; %s\n", t->test,
                   S->name, (unsigned long long)bits, xs, T->name, of_dir_name(dir), opts,
                   (unsigned long long)r.bits, fs, msg);
        }
        t->fails++;
    }
    return ok;
}
