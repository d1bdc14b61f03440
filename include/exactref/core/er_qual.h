/* er_qual.h: the one place where C99, CUDA and OpenCL C differ for the shared core. */
#ifndef ER_QUAL_H
#define ER_QUAL_H

/*
 * Every core header includes this file and nothing else from the platform.  It provides:
 *   - fixed-width integer types er_u8 .. er_u64, er_i8 .. er_i64;
 *   - ER_FN, the qualifier of every core function (static inline, plus __host__ __device__ for CUDA);
 *   - ER_CLZ64(x), count of leading zero bits of a NONZERO 64-bit value.
 * The core itself never spells out <stdint.h>, static inline, __device__ or an intrinsic.
 */

#if defined(__OPENCL_VERSION__)
typedef uchar er_u8;
typedef char er_i8;
typedef ushort er_u16;
typedef short er_i16;
typedef uint er_u32;
typedef int er_i32;
typedef ulong er_u64;
typedef long er_i64;
#define ER_FN static inline
#define ER_CLZ64(x) ((int)clz((ulong)(x)))
#define ER_U64(c) ((ulong)(c##UL))

#elif defined(__CUDACC__)
#include <stdint.h>
typedef uint8_t er_u8;
typedef int8_t er_i8;
typedef uint16_t er_u16;
typedef int16_t er_i16;
typedef uint32_t er_u32;
typedef int32_t er_i32;
typedef uint64_t er_u64;
typedef int64_t er_i64;
#define ER_FN static __host__ __device__ __forceinline__
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
#else
#define ER_ALWAYS_INLINE_
#endif
typedef uint8_t er_u8;
typedef int8_t er_i8;
typedef uint16_t er_u16;
typedef int16_t er_i16;
typedef uint32_t er_u32;
typedef int32_t er_i32;
typedef uint64_t er_u64;
typedef int64_t er_i64;
#define ER_FN static inline ER_ALWAYS_INLINE_
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

#endif /* ER_QUAL_H */
