/* mma.cl: the exact engine as an OpenCL kernel: mma, block-scaled mma, mmai and the enclosures.
 *
 * One work-item per element of D.  Each work-item owns a long accumulator (er_acc, the shared core of
 * include/exactref/core/er_acc.h) in private memory, adds every exact product of its row of A and
 * column of B, and C, then rounds once: the same integer code, in the same order, as the CPU engine's
 * exact path (cpu/cpu_mma.c), hence the same bits.  (The order does not even matter: the accumulator
 * holds the exact sum, and a correctly rounded value is unique.)  Nothing is shared between
 * work-items: no atomics, no barriers, every output element is written by exactly one work-item.
 * The summation loop is compiled once per common format pair with the formats as constants (decoding
 * then folds to a few instructions: about 6x faster on PoCL) and once generic for every other pair
 * (include/exactref/core/er_mma.h: er_mma_sum_any).
 *
 * There is no floating point here (and no mad()); contraction is off all the same.
 *
 * The host (opencl/er_opencl_mma.c) packs a tile of the problem into contiguous buffers, each operand
 * in its own storage size (1, 2, 4 or 8 bytes a pattern):
 *   a       [batch][row][p]         a_scale [batch][row][p / block]
 *   b       [batch][p][col]         b_scale [batch][p / block][col]
 *   c       [batch][row][col]       outputs [batch][row][col], 64-bit patterns
 * with a batch stride of 0 where the operand is broadcast over the batch.  The parameter block's
 * layout is include/exactref/core/er_mma_params.h.
 *
 * This file is not read at run time: at build time opencl/embed_cl.cmake inlines the headers it
 * includes and embeds the flattened text into the library (er_opencl_mma_source.c).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "exactref/core/er_mma.h"

/* One work-item per element of D: the shared core's element (include/exactref/core/er_mma.h), the
 * same source the CPU engine's exact path and the CUDA kernel run. */
__kernel void er_mma_exact(__constant long *prm, __global const uchar *a, __global const uchar *b,
                           __global const uchar *sa, __global const uchar *sb, __global const uchar *c,
                           __global ulong *out_d, __global ulong *out_lo, __global ulong *out_hi,
                           __global ulong *out_odd)
{
    long e = (long)get_global_id(0);
    if (e >= prm[ER_MP_TOTAL]) return;
    er_mma_element(prm, a, b, sa, sb, c, out_d, out_lo, out_hi, out_odd, e);
}

/* normal(): index-order accumulation emulated to the bit (er_result_normal), with integers only (the
 * shared core's er_mma_normal_element).  The parameter block and buffers are er_mma_exact's
 * (ER_MP_COMPUTE and ER_MP_FTZ added; the output pattern goes to out_d). */
__kernel void er_mma_normal(__constant long *prm, __global const uchar *a, __global const uchar *b,
                            __global const uchar *sa, __global const uchar *sb, __global const uchar *c,
                            __global ulong *out_d, __global ulong *out_lo, __global ulong *out_hi,
                            __global ulong *out_odd)
{
    long e = (long)get_global_id(0);
    if (e >= prm[ER_MP_TOTAL]) return;
    out_d[e] = er_mma_normal_element(prm, a, b, sa, sb, c, e);
}
