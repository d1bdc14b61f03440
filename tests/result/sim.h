/*
 * sim.h: SIMULATED IMPLEMENTATIONS of one dot product, bit-accurate, for the tests of the tolerance
 * layer (every real implementation's output must be covered by the proven bound).
 *
 * Every simulator computes ONE dot product
 *
 *     d = c + sum_{p<n} a[p] b[p]
 *
 * where a, b and c are binary64 VALUES (the exact values of the input formats: every float format of
 * exactref is a subset of binary64), and returns the implementation's output value as a double: the
 * value it accumulated, rounded once into out_fmt in direction out_dir (ER_FMT_*, ER_RND_*; a float
 * format; no saturation, no flush).  NaN and infinities come out as the implementation would produce
 * them (IEEE rules in the compute format: an overflowing rounding gives an infinity, inf - inf a NaN).
 *
 * Exactness.  Every rounding of a simulator is ONE rounding of an exact value, done by the library's
 * core rounding (er_round / er_round_double): the exact value is formed in binary64 only where that is
 * proven exact at run time (a product of significands of at most 53 bits in all; a sum whose TwoSum
 * error is zero), otherwise in MPFR with every operation checked exact (an inexact step aborts).
 * The tensor-core model is integer arithmetic in MPFR, each step checked exact.  No double operation
 * that could round is ever used.
 *
 * Not thread-safe: sim_set_ftz is a global switch.
 */
#ifndef ER_TESTS_RESULT_SIM_H
#define ER_TESTS_RESULT_SIM_H

#include <stdint.h>

#include "exactref/exactref.h"

/* ---- Family 1 and 2: a compute format, every operation rounded to nearest even. ----------------
 *
 * compute: the format of the accumulation (ER_FMT_F32 usually; F16, BF16, TF32, F64 too).  A product
 * a[p] b[p] is rounded once into compute (nearest even); a sum x + y of two compute values is rounded
 * once into compute (nearest even); an fma a*b + x is ONE rounding of the exact value.
 * c is first rounded into compute (nearest even; exact when c is a compute value).
 * n == 0 gives c (rounded into compute, then into out_fmt).
 *
 * Flush to zero (sim_set_ftz(1)): every compute-format subnormal is read as zero where it enters an
 * operation (the factors a[p], b[p], c and every intermediate) and every subnormal result of an
 * operation is replaced by the zero of its sign, as torch.set_flush_denormal(True) does.  The final
 * rounding into out_fmt is not flushed.  The tensor-core simulator ignores this switch (tensor cores
 * keep subnormals).
 */
void sim_set_ftz(int on);
int sim_get_ftz(void);

/* Normal accumulation in index order: acc = c; acc = acc + round(a[p] b[p]) for p = 0 .. n-1. */
double sim_index_order(int n, const double *a, const double *b, double c, int compute, int out_fmt,
                       int out_dir);

/* The same in reverse index order: acc = c; acc = acc + round(a[p] b[p]) for p = n-1 .. 0. */
double sim_reversed(int n, const double *a, const double *b, double c, int compute, int out_fmt,
                    int out_dir);

/* `lanes` interleaved lanes, as SIMD code: lane l takes p = l, l+L, l+2L, ... in order; lane 0 starts
 * at c, the other lanes at +0; each lane acc_l = acc_l + round(a[p] b[p]); at the end the lanes are
 * combined in lane order (((l0 + l1) + l2) + l3 ...).  lanes >= 1 (lanes == 1 is sim_index_order). */
double sim_lanes(int lanes, int n, const double *a, const double *b, double c, int compute, int out_fmt,
                 int out_dir);

/* The same lanes, combined pairwise at the end: ((l0 + l1) + (l2 + l3)) for 4 lanes; for any count the
 * lane range [lo, hi) splits at lo + (hi - lo)/2 recursively. */
double sim_lanes_pairwise(int lanes, int n, const double *a, const double *b, double c, int compute,
                          int out_fmt, int out_dir);

/* Recursive pairwise summation of the rounded products (the range [lo, hi) splits at lo + (hi-lo)/2;
 * one product is its rounded value), then + c (the pairwise total + c, one rounding). */
double sim_pairwise(int n, const double *a, const double *b, double c, int compute, int out_fmt,
                    int out_dir);

/* Blocked fused multiply-add: products are grouped in consecutive blocks of `block` (the last may be
 * shorter); a block partial starts at +0 and takes part = fma(a[p], b[p], part) for each product of the
 * block in order (ONE rounding per fma: products are NOT rounded separately); then acc = c and
 * acc = acc + part_j for the blocks in order.  block >= 1. */
double sim_blocked_fma(int block, int n, const double *a, const double *b, double c, int compute,
                       int out_fmt, int out_dir);

/* A random summation tree over the n products and c (splitmix64 from seed; the same seed gives the
 * same tree).  The leaves are the n products and c; repeatedly two random nodes are replaced by their
 * sum until one is left.  use_fma: 0, each product is rounded first and every node is a sum; 1, a
 * product is fused into its first addition with fma (one rounding of a*b + x) wherever its partner is
 * not itself an unrounded product (when two products meet, the first is rounded and the second fused);
 * 2, each such fusion is decided by a coin flip. */
double sim_random_tree(uint64_t seed, int use_fma, int n, const double *a, const double *b, double c,
                       int compute, int out_fmt, int out_dir);

/* ---- Family 3: matrix engines (tensor cores), docs/accumulation-models.md. -------------------------
 *
 * One fused step takes k products and the accumulator C:
 *  1. products exact;
 *  2. each term as (significand, exponent): a product as (sa*sb, ea+eb) from its factors, each factor
 *     x = s 2^e with 1 <= |s| < 2, except that a subnormal factor of its INPUT format keeps that
 *     format's minimum exponent (er_format_info.emin) with a smaller significand; C as its own value of
 *     the accumulator format (f32; f16 for the f16-output variants) in the same way; a ZERO FACTOR has
 *     exponent -126 (SIM_ZERO_EXP) whatever its format (zero_fmt_emin: its format's minimum exponent
 *     instead), so a zero product is a term of exponent e_a + e_b that takes part in E (0 x 2^101 with
 *     bf16 factors: exponent -25); C == 0 has exponent -126; block-scaled terms add the two scale
 *     exponents, zero products included (and multiply in the scale significands, 1 for ue8m0 scales);
 *     E = the largest exponent among the k product terms and C;
 *  3. each term truncated toward zero (floor_terms: CDNA3's rules below) to F fractional bits at weight 2^E,
 *     i.e. to an integer multiple of 2^(E-F);
 *  4. the truncated terms summed exactly;
 *  5. one normalisation of that exact sum into the accumulator: out_p fraction bits (23 for f32, 13 for
 *     e8m13, 10 for f16) with the exponent range of acc_fmt (subnormals at 2^(emin - out_p)), in
 *     direction out_round (ER_RND_ZERO, or ER_RND_NEAREST_EVEN); a value at or beyond 2^(emax+1) after
 *     that rounding is an INFINITY (also for toward-zero: MMA-Sim's conversion of the normalised value
 *     to f32 overflows to inf); an exact sum of 0 gives +0, a nonzero sum that rounds to zero the zero
 *     of its sign;
 *  6. NaN/inf from the exact sum: a NaN input, inf * 0, or infinities of both signs give NaN; otherwise
 *     any infinite product or C gives the infinity of its sign.
 * The accumulator is fed back as C every k products (the last step may have fewer: it is the same as
 * padding with zero products, because C's exponent is always >= -126).
 *
 * groups (Blackwell mxf4/nvf4): the k products of a step form k/groups groups of `groups` consecutive
 * products; each group's sum is exact and is ONE term, with significand (group sum) x (scale
 * significands) -- not normalised -- and exponent (scale exponents) WHATEVER ITS ELEMENTS (an all-zero
 * group with scale 2^40 is a term of exponent 40), 0 without scales.  (The notes'
 * "approximate" model, as MMA-Sim's nv_fused_dot_add_with_block_scale.)
 *
 * promote (DeepGEMM): 0 for none.  Otherwise the products are taken in chunks of `promote`; each chunk
 * runs on the engine from C = +0 (ceil(promote/k) steps) and its result is added into an f32
 * accumulator that starts at c (rounded to f32) with one f32 rounding to nearest even.
 *
 * tf32_trunc: operands given in ER_FMT_F32 are first truncated toward zero to tf32 (their low 13 bits
 * dropped, as the hardware reads an f32 register as tf32); operands already in ER_FMT_TF32 are unchanged.
 *
 * Output: the engine's final accumulator value (an f32, e8m13 or f16 value) rounded once into out_fmt
 * in out_dir.
 *
 * Choices where the notes are ambiguous (documented here, used in sim.c):
 *  - "2 x 8" (Ampere fp16/bf16 k16), "2 x 4" (Ampere tf32 k8), "2 x 16" (Ada fp8 k32): the instruction
 *    runs as two fused steps in sequence, the first step's normalised result being the second's C
 *    (MMA-Sim's is_split_k).  Over a long dot product that is exactly k = 8, 4, 16 per step, so the
 *    table holds those k.
 *  - CDNA3 (floor_terms, docs/accumulation-models.md): k = 8 for f16/bf16, 16 for fp8/bf8 (two_stage),
 *    4 for xf32 (tf32_trunc).  The products alone are truncated toward zero at F = 24 fraction bits of
 *    their largest exponent Ep (two_stage: the even and the odd products apart, each stage's sum then
 *    floored at F bits of the larger stage exponent, and the two added); with E = max(Ep, C's
 *    exponent), the product sum is floored at F2 = 31 fraction bits of E and C at F bits of E
 *    (two_stage: C is dropped when its exponent is below E - 25); the exact total rounded to nearest
 *    even f32.  A finite product of magnitude >= 2^128 gives an infinity of its sign (both: NaN).
 *  - tf32 truncation applies to every tf32 model (ampere-tf32 and hopper-tf32), as MMA-Sim does.
 *  - The subnormal factor's minimum exponent is the input FORMAT's (e2m1: 0), as the notes say (MMA-Sim
 *    widens fp4 to e4m3 first, which gives 0.5 exponent -1).
 *  - Blackwell mxf8f6f4 and mxf4 are two rows ("blackwell-mxf8f6f4", "blackwell-mxf4");
 *    sim_model_find("blackwell-mx") returns the mxf4 row.  A 14th row, "hopper-fp8-deepgemm", is
 *    hopper-fp8 with promote = 128 (the notes' DeepGEMM paragraph).
 *  - The c of the dot product enters as the first step's C (rounded to nearest even into the
 *    accumulator format if it is not a value of it).
 */
#define SIM_ZERO_EXP (-126)

typedef struct sim_model {
    const char *name;
    int k;          /* products per fused step (>= 1) */
    int F;          /* fractional bits kept per term at weight 2^E (>= 0; any size: exact in MPFR) */
    int out_p;      /* fraction bits of the normalised step result (23, 13 for e8m13, 10 for f16; <= 52) */
    int out_round;  /* ER_RND_ZERO or ER_RND_NEAREST_EVEN: the normalisation's direction */
    int promote;    /* 0, or products per promotion into an f32 accumulator (a multiple of k) */
    int floor_terms;/* 1: CDNA3 arithmetic (products truncated, sums and C floored: below); 0: NVIDIA */
    int groups;     /* 0, or products per exact group (Blackwell mxf4: 16) */
    int acc_fmt;    /* the accumulator: ER_FMT_F32 (or ER_FMT_F16 for f16 output; F64 for tests) */
    int tf32_trunc; /* 1: ER_FMT_F32 operands are truncated toward zero to tf32 first */
    int F2;         /* CDNA3: fraction bits of the product sum's second alignment (31; 0: none) */
    int two_stage;  /* CDNA3 fp8/bf8: even and odd products in two stages */
    int zero_fmt_emin; /* 1: a zero factor has its format's minimum exponent; 0: -126 (MMA-Sim) */
} sim_model;

extern const sim_model sim_models[];
extern const int sim_model_count;
/* volta, turing, ampere, ampere-tf32, ada-fp8, hopper, hopper-tf32, hopper-fp8, blackwell,
 * blackwell-f8f6f4, blackwell-mxf8f6f4, blackwell-mxf4, cdna3, hopper-fp8-deepgemm, then cdna3-fp8,
 * cdna3-xf32, blackwell-tf32, ada-f16 and the f16-accumulator rows volta-f16, turing-f16, ampere-f16,
 * ada-fp8-f16, hopper-f16, hopper-fp8-f16, blackwell-f16, blackwell-f8f6f4-f16 (in this order). */

/* The row named `name` (also "blackwell-mx" for blackwell-mxf4), or NULL. */
const sim_model *sim_model_find(const char *name);

/* The f16-output variant of a model: the accumulator is f16, each step rounds to nearest even with 10
 * fraction bits ("to nearest even for f16 output"); the other fields are m's. */
sim_model sim_model_f16_output(const sim_model *m);

/* The engine on one dot product.  in_fmt_a, in_fmt_b: the input formats of a and b (their minimum
 * exponents place subnormal factors; a and b must be values of them, after tf32 truncation). */
double sim_engine(const sim_model *m, int n, const double *a, const double *b, double c, int in_fmt_a,
                  int in_fmt_b, int out_fmt, int out_dir);

/* The same with block scales: product p is multiplied by scale_a[p / block] * scale_b[p / block]
 * (positive values, e.g. ue8m0 powers of two; a scale is taken as s 2^e with 1 <= s < 2 and no minimum
 * exponent: e is added to the term's exponent, s multiplied into its significand; a zero scale makes a
 * zero term, a NaN scale a NaN).  A group (mxf4) takes the scales of its first product.
 * scale_a == NULL or scale_b == NULL means no scales.  blackwell-mxf8f6f4 is meant for block = 32,
 * blackwell-mxf4 for block 16 or 32. */
double sim_engine_scaled(const sim_model *m, int n, const double *a, const double *b,
                         const double *scale_a, const double *scale_b, int block, double c,
                         int in_fmt_a, int in_fmt_b, int out_fmt, int out_dir);

/* ONE fused step (k = n products, any n >= 0) with accumulator value c: the normalised result as a
 * value of the accumulator (no promotion, no output rounding).  Scales as sim_engine_scaled, indexed
 * from the step's first product (scale_a[p / block], p < n). */
double sim_engine_step(const sim_model *m, int n, const double *a, const double *b,
                       const double *scale_a, const double *scale_b, int block, double c,
                       int in_fmt_a, int in_fmt_b);

#endif /* ER_TESTS_RESULT_SIM_H */
