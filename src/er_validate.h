/* er_validate.h: the front door's validation of an mma's arguments into an er_problem (src/validate.c),
 * internal; called by er_mma (src/mma.c), normal() (src/normal.c), the bounds (src/tolerance.c) and the
 * CUDA loader's host pass (src/cuda_loader.c). */
#ifndef ER_VALIDATE_H
#define ER_VALIDATE_H

#include <stddef.h>

#include "exactref/exactref.h"

struct er_problem; /* host/er_problem.h */

/* Validate args once into P, with the outputs d, lo, hi, odd (each may be NULL; at least one given):
 * shapes, formats, strides, scales, strategy, the accumulator's window and whether the CPU's certified
 * fast path applies.  ER_OK, or an error with a sentence in msg (may be NULL). */
int er_problem_validate(struct er_problem *P, const er_mma_args *args, er_tensor *d, er_tensor *lo, er_tensor *hi,
                        er_tensor *odd, char *msg, size_t msg_size);

#endif /* ER_VALIDATE_H */
