/*
 * mo_oracle.h: an MPFR oracle for the math library, independent of its rounding path.
 *
 * The library computes toward zero at 64 bits and lets the core round (src/math/math_fmt.c).  The
 * oracle never does that: it sets MPFR's exponent range to the target format's, evaluates the function
 * at the format's precision in the direction itself, and applies mpfr_check_range and
 * mpfr_subnormalize; nearest-away and odd, which MPFR lacks, are built from MPFR's toward-zero result
 * (odd: an inexact even significand moves one step away from zero; nearest-away: nearest, unless the
 * exact value is the midpoint, which a 160-bit evaluation decides).  The encoding of the result into a
 * pattern is written from the formats table of docs/formats.md (tests/mpfr/of_oracle.c's rows).
 */
#ifndef MO_ORACLE_H
#define MO_ORACLE_H

#include <stdint.h>

#include "../mpfr/of_oracle.h"
#include "exactref/math.h"

#define MO_FMA (-1) /* the op code of the fused multiply-add */

typedef struct mo_exp {
    uint64_t bits;
    unsigned must;    /* flags that must be raised */
    unsigned mustnot; /* flags that must not be raised */
} mo_exp;

void mo_init(void);
void mo_fini(void);
/* The expected result of op (an er_math_op or MO_FMA) on the n patterns in[] of format T. */
void mo_expect(int op, const of_fmt *T, const uint64_t *in, int n, int dir, mo_exp *e);
/* Run the library on the same input and compare; returns 1 on agreement, else prints (up to a limit)
 * and returns 0. */
int mo_check(const char *test, int op, int fmt, const uint64_t *in, int n, int dir);
extern long mo_fails, mo_checks;
const char *mo_op_name(int op);

#endif
