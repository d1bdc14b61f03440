/* er_qual.h: the one place where C99, CUDA and OpenCL C differ for the shared core. */
#ifndef ER_QUAL_H
#define ER_QUAL_H

#include "er_types.h" /* the fixed-width types */

/*
 * Every core header with functions includes this file and nothing else from the platform.  It provides:
 *   - (from er_types.h) the fixed-width integer types er_u8 .. er_u64, er_i8 .. er_i64;
 *   - ER_FN, the qualifier of every core function (static inline, plus __host__ __device__ for CUDA);
 *   - ER_FN_INLINE, the same, forced inline everywhere (loops whose constant formats must fold);
 *   - ER_FN_NOINLINE, a core function kept out of line (the rare paths of the bounds: one copy per
 *     program instead of one per call site, which is what made the bounds' translation units take
 *     minutes to compile; inlining never changes a result, contraction being off everywhere);
 *   - ER_CLZ64(x), count of leading zero bits of a NONZERO 64-bit value;
 *   - ER_GLOBAL, the address space of the kernels' buffers (OpenCL's __global; nothing elsewhere),
 *     and ER_CONSTANT, that of their parameter blocks (OpenCL's __constant);
 *   - er_ld16_, er_ld32_, er_ld64_: element idx of an array of little-endian words (any alignment on a
 *     host), the loads of packed operands;
 *   - on hosts, <math.h> and <string.h> (the bounds' binary64 arithmetic, memcpy).
 * The core itself never spells out <stdint.h>, static inline, __device__ or an intrinsic.
 */

#if defined(__OPENCL_VERSION__)
#define ER_FN static inline
#define ER_FN_INLINE static inline __attribute__((always_inline))
#define ER_FN_NOINLINE static inline
#define ER_CLZ64(x) ((int)clz((ulong)(x)))
#define ER_U64(c) ((ulong)(c##UL))
#define ER_GLOBAL __global
#define ER_CONSTANT __constant
#define ER_LD_BY_CAST_ 1

#elif defined(__CUDACC__)
#include <stdint.h>
#define ER_FN static __host__ __device__ __forceinline__
#define ER_FN_INLINE ER_FN
#define ER_FN_NOINLINE static __host__ __device__ __noinline__
#define ER_GLOBAL
#define ER_CONSTANT
#if defined(__CUDA_ARCH__)
#define ER_LD_BY_CAST_ 1
#else
#include <math.h>
#include <string.h>
#endif
#if defined(__CUDA_ARCH__)
#define ER_CLZ64(x) __clzll((long long)(x))
#else
#define ER_CLZ64(x) __builtin_clzll((unsigned long long)(x))
#endif
#define ER_U64(c) ((uint64_t)(c##ULL))

#else /* plain C99 */
#include <stdint.h>
#if defined(__GNUC__) || defined(__clang__)
/* Force inlining so a loop over constant formats folds the table row into straight-line code. */
#define ER_ALWAYS_INLINE_ __attribute__((always_inline))
#define ER_NOINLINE_ __attribute__((noinline, unused))
#else
#define ER_ALWAYS_INLINE_
#define ER_NOINLINE_
#endif
#define ER_FN static inline ER_ALWAYS_INLINE_
#define ER_FN_INLINE ER_FN
#define ER_FN_NOINLINE static ER_NOINLINE_
#define ER_GLOBAL
#define ER_CONSTANT
#include <math.h>
#include <string.h>
#if defined(__GNUC__) || defined(__clang__)
#define ER_CLZ64(x) __builtin_clzll((unsigned long long)(x))
#else
static inline int er_clz64_portable_(uint64_t x)
{
    int n = 0;
    while (!(x & (UINT64_C(1) << 63))) {
        x <<= 1;
        n++;
    }
    return n;
}
#define ER_CLZ64(x) er_clz64_portable_(x)
#endif
#define ER_U64(c) ((uint64_t)(c##ULL))
#endif

/* Element idx of an array of 16-, 32- or 64-bit little-endian words at p (the hosts are little-endian,
 * as the tensors are; on a host any alignment, through memcpy). */
#if defined(ER_LD_BY_CAST_)
ER_FN er_u64 er_ld16_(ER_GLOBAL const er_u8 *p, er_i64 idx) { return (er_u64)((ER_GLOBAL const er_u16 *)p)[idx]; }
ER_FN er_u64 er_ld32_(ER_GLOBAL const er_u8 *p, er_i64 idx) { return (er_u64)((ER_GLOBAL const er_u32 *)p)[idx]; }
ER_FN er_u64 er_ld64_(ER_GLOBAL const er_u8 *p, er_i64 idx) { return ((ER_GLOBAL const er_u64 *)p)[idx]; }
#else
ER_FN er_u64 er_ld16_(const er_u8 *p, er_i64 idx) { er_u16 x; memcpy(&x, p + idx * 2, 2); return x; }
ER_FN er_u64 er_ld32_(const er_u8 *p, er_i64 idx) { er_u32 x; memcpy(&x, p + idx * 4, 4); return x; }
ER_FN er_u64 er_ld64_(const er_u8 *p, er_i64 idx) { er_u64 x; memcpy(&x, p + idx * 8, 8); return x; }
#endif

#endif /* ER_QUAL_H */
