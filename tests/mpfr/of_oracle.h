/*
 * of_oracle.h: an MPFR oracle for exactref's number formats.
 *
 * INDEPENDENT of the library's code: the formats' facts are written out again below, from
 * docs/formats.md, and never read from er_formats.h; values are decoded with
 * our own field formula; expected conversion results are computed with MPFR (round the exact value
 * to an integer multiple of 2^q in the direction, q from the binade and the format's precision).
 * The only thing taken from the library is the numbering of formats and directions (ER_FMT_*,
 * ER_RND_*, ER_OPT_*, ER_FLAG_*), which is the API under test.
 */
#ifndef OF_ORACLE_H
#define OF_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpfr.h>

#include "exactref/exactref.h"

/* Kinds, NaN encodings and classes of the oracle (deliberately not the library's constants). */
enum { OF_FLOAT, OF_SINT, OF_UINT };
enum { OF_NAN_IEEE, OF_NAN_FN, OF_NAN_FNUZ, OF_NAN_NONE };
enum { OF_ZERO, OF_SUB, OF_NORM, OF_INF, OF_NAN };

/* Working precision of the oracle: every value handled here has at most 64 significant bits. */
#define OF_PREC 128

typedef struct of_fmt {
    int id;           /* ER_FMT_* of the format (the API's numbering) */
    const char *name; /* MLIR spelling */
    int kind;
    int width;        /* bits of storage */
    int ebits, mbits; /* exponent and stored fraction bits (floats) */
    int pad;          /* low bits always zero (tf32: 13) */
    int bias;
    int nan;          /* OF_NAN_*: how NaN is encoded */
    int has_inf;
    int is_signed;
    int has_negzero;
    int has_sub;      /* subnormals (and a zero) */
    int prec;         /* significand bits, the leading one included */
    int emin;         /* binade of the least normal value: values 2^emin .. 2^(emin+1) */
    const char *max;  /* the largest finite value, as a number (hex float or decimal integer) */
    const char *min;  /* the least finite value */
    uint64_t max_bits;    /* its pattern */
    uint64_t minpos_bits; /* pattern of the least positive value */
} of_fmt;

#define OF_NFMT 19
extern const of_fmt of_fmts[OF_NFMT];

/* The row of API format id `id` (aborts on an unknown id). */
const of_fmt *of_get(int id);

/* A decoded pattern: class, sign, exact value (zeros carry their sign), NaN payload. */
typedef struct of_val {
    int cls;
    int sign;
    mpfr_t v;
    uint64_t payload; /* NaN: the fraction field (0 for FN and FNUZ NaNs) */
    int pbits;        /* NaN: width of the payload in bits */
} of_val;

/* The expected result of a conversion. */
enum { OF_EXP_VALUE, OF_EXP_INF, OF_EXP_BITS };
typedef struct of_exp {
    int kind;        /* OF_EXP_VALUE: a finite value (v, sign for zeros); _INF: infinity of sign; _BITS */
    int sign;
    mpfr_t v;
    uint64_t bits;
    unsigned must;    /* flags that must be raised */
    unsigned mustnot; /* flags that must not be raised */
    unsigned anyof;   /* when nonzero, at least one of these must be raised */
    int uf_gray;      /* tiny, inexact, rounded to +-2^emin: underflow is a matter of convention */
    int uf_after;     /* in that case: IEEE 754 tininess after rounding says underflow */
    const char *why;  /* the rule that applied (for messages) */
} of_exp;

void of_init(void); /* once, before anything else */
void of_fini(void);
void of_val_init(of_val *x);
void of_val_clear(of_val *x);
void of_exp_init(of_exp *e);
void of_exp_clear(of_exp *e);

/* Bits of storage of a format (all ones). */
uint64_t of_mask(int width);
/* Decode `bits` of f with our own field formula (bits outside the width and padding ignored). */
void of_decode(const of_fmt *f, uint64_t bits, of_val *x);
/* The expected result of converting x (decoded from a pattern of S) into T. */
void of_expect(const of_fmt *S, const of_val *x, const of_fmt *T, int dir, unsigned opts, of_exp *e);
/* Compare result pattern r with flags fl against e.  Returns 1 when they agree; otherwise 0, and a
 * description of the expectation in msg. */
int of_check(const of_fmt *T, uint64_t r, unsigned fl, const of_exp *e, char *msg, size_t size);

/* The value of x rounded to an integer multiple of 2^q in direction dir (the core of the oracle). */
void of_round_grid(mpfr_t r, const mpfr_t x, long q, int dir);

/* Direction and option names for messages. */
const char *of_dir_name(int dir);

/* ---- A disagreement counter: prints the first `show` disagreements, counts all. ---- */
typedef struct of_tally {
    const char *test;
    long checks, fails;
    int show;
} of_tally;

/* How many disagreements a test prints: EXACTREF_MPFR_SHOW from the environment, else 20. */
int of_show(void);

/* Convert with er_convert, compute the oracle's expectation, compare; returns 1 when they agree. */
int of_run_one(of_tally *t, const of_fmt *S, uint64_t bits, const of_val *x, const of_fmt *T, int dir,
               unsigned opts, of_exp *e);

/* Coverage statistics, gathered by of_expect when of_stats_on is set: exact ties met by the rounding
 * of a finite value, and how often each rule applied.  of_stats_print prints them. */
extern int of_stats_on;
extern long of_stat_ties;
void of_stats_print(const char *test);

/* Underflow statistics over the gray zone (see of_exp.uf_gray), summed by of_run_one. */
extern long of_uf_gray, of_uf_gray_core, of_uf_gray_after, of_uf_gray_core_vs_after;

#endif
