/*
 * eng_ref.h: an independent MPFR reference for the exact engine (er_mma), and helpers that run the
 * engine on a problem and compare every element, bit for bit, with the reference.
 *
 * Independence: nothing here calls the library's decoding or rounding.  The formats are a table typed
 * from docs/formats.md (ref_formats in eng_ref.c); a pattern is decoded by the textbook formula
 * (-1)^s (1 + F/2^M) 2^(E-bias), subnormals (F/2^M) 2^(1-bias); the exact sum of the products (and C)
 * is formed with MPFR, and rounded into the output format by the quantum method (n = the integer
 * rounding of |x| / 2^q in the direction, q = max(exponent of x, emin) - M), followed by the overflow,
 * zero, NaN and infinity rules of docs/formats.md and docs/exact-engine.md.
 *
 * Exactness of the MPFR sum: each element's sum is accumulated in an mpfr_t whose precision is chosen
 * from the terms themselves (the span from the least significant bit of any term to the top bit of the
 * largest, plus log2 of the number of terms, plus 2), and EVERY mpfr_add/mpfr_mul is checked to return
 * a zero ternary value (MPFR's "the result is exact").  So the sum is exact by construction, not by
 * an argument about the precision: if the precision were ever too small the test would stop with
 * a message instead of comparing against an inexact reference.  The exponent range of MPFR is widened
 * to its maximum, so nothing can underflow or overflow (f64 x f64 products reach 2^-2148 and 2^2048).
 */
#ifndef ENG_REF_H
#define ENG_REF_H

#include <stdint.h>
#include <stdio.h>

#include <mpfr.h>

#include "exactref/exactref.h"
#include "er_test.h"

/* ---- Formats (our own table). ---- */
#define RS_IEEE 0
#define RS_FN 1
#define RS_FNUZ 2
#define RS_NONE 3

typedef struct {
    int id;           /* ER_FMT_* */
    const char *name;
    int width, ebits, mbits, pad, bias;
    int special;      /* RS_* */
    int uns, nosub;   /* no sign bit; no subnormals and no zero (f8E8M0FNU) */
    int bytes;        /* storage bytes of one element */
    int is_int;       /* i8, u8, i32 (mmai) */
} rfmt;

#define NFLOAT 13
extern const int float_ids[NFLOAT];     /* the 13 float formats */
extern const int elem_ids[5];           /* block-scaled element formats */
const rfmt *rf(int id);                 /* our row for an ER_FMT_* id (float, i8, u8, i32) */

/* A decoded value. */
#define RC_ZERO 0
#define RC_FIN 1
#define RC_INF 2
#define RC_NAN 3
typedef struct {
    int cls;
    int sign;
    uint64_t sig; /* nonzero finite: value = (-1)^sign sig 2^exp */
    int exp;
} rval;

rval ref_decode(const rfmt *T, uint64_t bits);
uint64_t ref_nan(const rfmt *T);                 /* the canonical quiet NaN (fp6/fp4: +0) */
uint64_t ref_max(const rfmt *T, int sign);       /* largest finite of the sign */
uint64_t ref_minsub(const rfmt *T, int sign);    /* least positive value of the sign */
int ref_is_nan(const rfmt *T, uint64_t bits);

/* ---- Exact results. ---- */
#define RX_NAN 0
#define RX_PINF 1
#define RX_NINF 2
#define RX_ZPOS 3    /* every term +0 (or no term at all) */
#define RX_ZNEG 4    /* every term -0 */
#define RX_ZCANCEL 5 /* an exact zero of cancellation or of zeros of both signs */
#define RX_FIN 6
typedef struct {
    int kind;
    mpfr_t v; /* RX_FIN: the exact nonzero value */
} rex;

void ref_init(void); /* widen MPFR's exponent range; call once */
void rex_init(rex *x);
void rex_clear(rex *x);
/* The exact value of a double (finite, inf, NaN, signed zero). */
void rex_set_d(rex *x, double d);
/* Round an exact result into T, direction dir (ER_RND_*), options ER_OPT_SATURATE / ER_OPT_FTZ_OUT. */
uint64_t ref_round(const rfmt *T, const rex *x, int dir, unsigned opts);
/* The pattern of T that holds double d exactly (aborts the test if it does not). */
uint64_t ref_encode_d(int fmt, double d);
/* Format the exact result for messages. */
void rex_str(const rex *x, char *buf, size_t size);
void pattern_str(int fmt, uint64_t bits, char *buf, size_t size);

/* ---- Problems. ---- */
typedef struct {
    int fa, fb, fc, fsc; /* fc < 0: no C; fsc < 0: not block scaled */
    int64_t m, n, k;
    int block;
    uint64_t *A, *B, *C, *SA, *SB; /* patterns, row-major: m x k, k x n, m x n, m x nb, nb x n */
    void *pa, *pb, *pc, *psa, *psb; /* packed storage for the engine (eprob_pack) */
} eprob;

int64_t eprob_nblocks(const eprob *P);
void eprob_alloc(eprob *P); /* allocates A, B, C (if fc >= 0), SA, SB (if fsc >= 0), zeroed */
void eprob_pack(eprob *P);  /* (re)build the packed buffers from the patterns */
void eprob_free(eprob *P);

/* The exact value of element (i, j). */
void ref_exact(const eprob *P, int64_t i, int64_t j, rex *out);
rex *ref_exact_all(const eprob *P); /* m*n of them, row-major; free with rex_free_all */
void rex_free_all(rex *x, int64_t count);

/* ---- Running the engine. ---- */
typedef struct {
    int dfmt;      /* output format, or -1 for no d */
    int dir;
    unsigned opts;
    int strategy;
    int threads;
    int enc;       /* also request lo, hi, odd */
} ecfg;

typedef struct {
    uint64_t *D, *LO, *HI, *ODD; /* m*n each (LO.. only with enc) */
    er_mma_stats stats;
    int status;
    char msg[256];
} eout;

void eout_alloc(eout *o, const eprob *P);
void eout_free(eout *o);
/* Run er_mma on P (packed) with c; results unpacked into o. */
int eng_run(const eprob *P, const ecfg *c, eout *o);
/* Run and compare every element (d and, with c->enc, lo/hi/odd) with the reference values ex.
 * Returns the number of mismatching elements; prints the first few with a reproducer. */
long eng_check(const eprob *P, const rex *ex, const ecfg *c, const char *ctx);
/* Print the problem's inputs (small problems) for a reproducer. */
void eprob_print(const eprob *P, int64_t i, int64_t j);

/* ---- Random inputs. ---- */
#define GM_UNIFORM 0 /* uniform random bit patterns (specials excluded unless asked) */
#define GM_BAND 1    /* exponent fields within +-2 of a centre, random fractions and signs */
#define GM_SMALL 2   /* values near 1 with one fraction bit: sums that cancel often */
#define GM_INT 3     /* integers of at most `centre` bits (rounded into the format: still integers) */
uint64_t gen_pattern(const rfmt *T, uint64_t *rng, int mode, int centre, int special_pct);
uint64_t gen_special(const rfmt *T, uint64_t *rng); /* NaN, inf, zero, max, least subnormal, any sign */
int gen_centre(const rfmt *T, uint64_t *rng);        /* a random exponent field for GM_BAND */
uint64_t rnd_below(uint64_t *rng, uint64_t n);

extern long eng_calls; /* engine calls made (for the runtime report) */
double eng_now(void);  /* a monotonic clock, seconds */
/* Checked fixtures: each test prints its run time and its number of engine calls. */
void eng_fixture_setup(void);
void eng_fixture_teardown(void);

#endif
