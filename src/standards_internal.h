/* standards_internal.h: what the command asks of the standards table beyond the public API. */
#ifndef ER_STANDARDS_INTERNAL_H
#define ER_STANDARDS_INTERNAL_H

#include <stddef.h>

#include "exactref/exactref.h"

/*
 * Whether the operands' formats suit a matrix-engine row of the table (std as er_standard_for_inputs
 * gives it): each operand's format must be one the row's instructions take (docs/accumulation-models.md:
 * hopper-fp8 takes e4m3 and e5m2, blackwell-mxf4 e2m1, ...) or one whose every value is a value of
 * one of those (fp8 under an f16/bf16 row).  An operand with values the instruction cannot hold (f32
 * under hopper-fp8) is ER_EINVAL with a sentence naming it (which_a, which_b: "A (a.npy)") and the
 * formats the row takes.  A scaled product's engine partial (scaled:bk=128,partial=hopper-fp8) is held
 * to its row's rule, the sentence naming the scaled standard.  normal, any_order, engine:... models and
 * scaled:bk=..[,partial=f32] take any operands: ER_OK.
 */
er_status er_standard_check_operands_(const er_standard *std, int a_format, int b_format, const char *which_a,
                                      const char *which_b, char *msg, size_t msg_size);

/*
 * The accumulator whose format the bounds under std use (what a check report names as its compute):
 * a matrix-engine row's D (f32, or f16 for the f16-accumulator rows), a blocked standard's acc= where
 * given, else compute (the options' compute, or the Result's default: the caller's to resolve).  Read
 * as src/tolerance.c reads the standard.
 */
int er_standard_accumulator_(const er_standard *std, int compute);

#endif
