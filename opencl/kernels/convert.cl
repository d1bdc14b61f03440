/* convert.cl: the OpenCL kernels of number conversion, one work-item per element.
 *
 * Every decision is the shared core's (include/exactref/core/er_round.h), compiled as OpenCL C: the
 * same integer code as the C library and the CUDA kernels, so the same bits and the same flags.
 * There is no floating point here (and no mad()); contraction is off all the same.
 *
 * This file is not read at run time: at build time opencl/embed_cl.cmake inlines the project headers
 * it includes and embeds the flattened text into the library (er_opencl_source.c).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "exactref/core/er_round.h"

/* Every element with the same formats, direction and options.  flags may be NULL (not wanted). */
__kernel void er_convert_uniform(int from, int to, int dir, uint opts, __global const ulong *src,
                                 __global ulong *dst, __global uint *flags, ulong n)
{
    ulong i = (ulong)get_global_id(0);
    er_res r;
    if (i >= n)
        return;
    r = er_convert(from, to, src[i], dir, opts);
    dst[i] = r.bits;
    if (flags)
        flags[i] = r.flags;
}

/* Each element with its own job: spec[i] = from | to << 8 | dir << 16 | opts << 24 (src/er_batch.h). */
__kernel void er_convert_mixed(__global const uint *spec, __global const ulong *src, __global ulong *dst,
                               __global uint *flags, ulong n)
{
    ulong i = (ulong)get_global_id(0);
    uint s;
    er_res r;
    if (i >= n)
        return;
    s = spec[i];
    r = er_convert((int)(s & 0xffu), (int)((s >> 8) & 0xffu), src[i], (int)((s >> 16) & 0xffu),
                   (s >> 24) & 0xffu);
    dst[i] = r.bits;
    if (flags)
        flags[i] = r.flags;
}
