/* normal_ref.h: normal() in the host's binary64 arithmetic (tests/backends/normal_ref.c). */
#ifndef ER_TB_NORMAL_REF_H
#define ER_TB_NORMAL_REF_H

#include "exactref/exactref.h"

/* normal() of the product A describes (its operands, scales, rounding, options) with compute format
 * compute (resolved: not -1) and flush_to_zero ftz, into out (the output's format and shape). */
int er_tb_normal_ref(const er_mma_args *A, int compute, int ftz, er_tensor *out);

#endif
