/* interp_math.h: the math library's interface as the interpreter uses it (er_math_unary, _binary, _fma).
 * The math library's public header is used when it is present; until then, the same prototypes are
 * declared here and implemented by interp_math_fallback.c (MPFR), which the build drops once
 * include/exactref/math.h exists. */
#ifndef ER_INTERP_MATH_H
#define ER_INTERP_MATH_H

#include <stdint.h>

#include "exactref/exactref.h"

#if defined(__has_include)
#if __has_include("exactref/math.h")
#include "exactref/math.h"
#define ER_INTERP_HAVE_MATH_H 1
#endif
#endif

#ifndef ER_INTERP_HAVE_MATH_H
typedef enum er_math_op {
    ER_MATH_SQRT, ER_MATH_RSQRT, ER_MATH_EXP, ER_MATH_EXP2, ER_MATH_LOG, ER_MATH_LOG2,
    ER_MATH_TANH, ER_MATH_SINH, ER_MATH_COSH, ER_MATH_SIN, ER_MATH_COS, ER_MATH_TAN, ER_MATH_ATAN,
    ER_MATH_FLOOR, ER_MATH_CEIL,
    ER_MATH_ADD, ER_MATH_SUB, ER_MATH_MUL, ER_MATH_DIV, ER_MATH_FMOD, ER_MATH_ATAN2, ER_MATH_POW
} er_math_op;
er_status er_math_unary(er_math_op op, int fmt, uint64_t x, int dir, uint64_t *out, unsigned *flags);
er_status er_math_binary(er_math_op op, int fmt, uint64_t x, uint64_t y, int dir, uint64_t *out, unsigned *flags);
er_status er_math_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int dir, uint64_t *out, unsigned *flags);
const char *er_math_op_name(er_math_op op);
#endif

#endif /* ER_INTERP_MATH_H */
