/* interp_arith.h: the interpreter's exact scalar arithmetic on bit patterns (one rounding each), internal. */
#ifndef ER_INTERP_ARITH_H
#define ER_INTERP_ARITH_H

#include <stdint.h>

#include "exactref/core/er_acc.h"

/* a + b (negb: a - b), a * b, a / b, sqrt(a), a * b + c: the exact result rounded once into fmt in
 * direction dir; opts ER_OPT_FTZ (f32's flush_to_zero: subnormal inputs and results to signed zero).
 * A NaN result is the format's canonical NaN (positive, quiet, payload zero). */
uint64_t it_f_add(int fmt, uint64_t a, uint64_t b, int negb, int dir, unsigned opts);
uint64_t it_f_mul(int fmt, uint64_t a, uint64_t b, int dir, unsigned opts);
uint64_t it_f_div(int fmt, uint64_t a, uint64_t b, int dir, unsigned opts);
uint64_t it_f_sqrt(int fmt, uint64_t a, int dir, unsigned opts);
uint64_t it_f_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int dir, unsigned opts);
/* The host's IEEE arithmetic for code 0 add, 1 sub, 2 mul, 3 div, 4 sqrt (b unused) to nearest even, where
 * it gives the exact path's bits (f64, f32, f16, bf16); 0 when the exact path must be used. */
int it_f_fast(int code, int fmt, uint64_t a, uint64_t b, uint64_t *out);
/* The canonical NaN of a float format. */
uint64_t it_f_nan(int fmt);

#endif /* ER_INTERP_ARITH_H */
