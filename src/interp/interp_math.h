/* interp_math.h: the math library's interface as the interpreter uses it (er_math_unary, _binary, _fma). */
#ifndef ER_INTERP_MATH_H
#define ER_INTERP_MATH_H

#include "exactref/math.h"

#endif
