/* er_bits.h: the binary64 bit casts of the shared core (the one pair every layer uses; needs fp64 on
 * OpenCL: include after `#pragma OPENCL EXTENSION cl_khr_fp64 : enable`). */
#ifndef ER_BITS_H
#define ER_BITS_H

#include "er_qual.h"

/* ---- binary64 bits ---- */
ER_FN er_u64 er_b_bits(double x)
{
#if defined(__OPENCL_VERSION__)
    return as_ulong(x);
#elif defined(__CUDA_ARCH__)
    return (er_u64)__double_as_longlong(x);
#else
    er_u64 u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

ER_FN double er_b_dbl(er_u64 u)
{
#if defined(__OPENCL_VERSION__)
    return as_double(u);
#elif defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

#endif /* ER_BITS_H */
