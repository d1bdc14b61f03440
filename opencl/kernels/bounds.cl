/* bounds.cl: the per-element bounds of every standard (radius, tolerance, finite range, may_be) as an
 * OpenCL kernel.
 *
 * One work-item per element of a tile.  Each calls the shared core's er_bound_element
 * (include/exactref/core/er_bounds.h), the same source the CPU runs (cpu/cpu_bounds.c), in binary64:
 * IEEE 754 operations correctly rounded, contraction off, fma only where the core writes it, every
 * loop in index order, hence the CPU's bits.  normal's and any_order's quantities are formed here
 * (pre = NULL), one element at a time: S (its bound holds for any order) and the integer sums of the
 * quantized magnitudes (exact in any order), the values the CPU's matrix products give, so the bits
 * are the CPU's.  Nothing is shared between work-items: every output element is written by exactly one.
 *
 * Needs fp64 (cl_khr_fp64): the host (opencl/er_opencl_bounds.c) checks CL_DEVICE_DOUBLE_FP_CONFIG and
 * leaves the batch to the CPU on a device without it.
 *
 * The host packs a tile of nr rows and nc columns of one batch (er_bjob, host/er_bjob.h):
 *   af [row][p]  ea [row][p]  da [row][p]       (binary64, int16, binary64; k per row)
 *   bf, eb, db: B' and its exponents and slack, either by rows [p][col] (the parameter block's ldb is
 *               nc, bcol 1: neighbouring work-items read neighbouring words, for GPUs) or by columns
 *               [col][p] (ldb 1, bcol k: each work-item reads its column with step 1, for CPUs); the
 *               same values in the same order either way, hence the same bits
 *   rw [p]                                      (k)
 *   qa, qw [row][p], qb as bf, sa, sw [row], sb [col]: the quantized magnitudes (gemm_form; engines
 *   without slack: qa and qb on the instructions' grids)
 *   cv [row][col]  dc [row][col]  rb [row][col] (C's values, C's slack, the rounded patterns)
 * and receives radius, tolerance (binary64), low, high (patterns) and flags (ER_BF_*, one byte) per
 * element, [row][col].  Arrays the problem lacks (ea/eb but for engines, the slack arrays, cv without
 * C) are a small dummy buffer, never read: the parameter block's kind, slack_a/b/c and has_c say so.
 *
 * This file is not read at run time: at build time opencl/embed_cl.cmake inlines the headers it
 * includes and embeds the flattened text into the library (er_opencl_bounds_source.c).
 */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#include "exactref/core/er_bounds.h"

__kernel void er_bounds_tile(__constant const long *prm, long nr, long nc, long bcol,
                             __global const double *af, __global const double *bf,
                             __global const short *ea, __global const short *eb,
                             __global const double *rw, __global const double *da,
                             __global const double *db, __global const double *qa,
                             __global const double *qw, __global const double *qb,
                             __global const int *sa, __global const int *sw,
                             __global const int *sb, __global const double *dc,
                             __global const double *cv, __global const ulong *rb,
                             __global double *radius, __global double *tolerance,
                             __global ulong *low, __global ulong *high, __global uchar *flags)
{
    long e = (long)get_global_id(0), i, j, k;
    er_i64 q[ER_BP_COUNT];
    er_bpar c;
    er_bel o;
    int t, eq;
    if (e >= nr * nc) return;
    for (t = 0; t < ER_BP_COUNT; t++) q[t] = prm[t];
    er_bpar_from(&c, q);
    k = c.k;
    i = e / nc;
    j = e - i * nc;
    /* pointers into the arrays that exist only (the dummy buffer, and every array when k = 0, is never
     * offset) */
    if (k == 0) bcol = 0;
    /* the quantized magnitudes: gemm_form's, or an engine's grids (no slack of A or B) */
    eq = c.gemm_form || (c.kind == ER_BK_ENGINE && !c.slack_a && !c.slack_b);
    er_bound_element(&c, af + i * k, bf + j * bcol, c.kind == ER_BK_ENGINE ? ea + i * k : ea,
                     c.kind == ER_BK_ENGINE ? eb + j * bcol : eb, rw, c.slack_a ? da + i * k : da,
                     c.slack_b ? db + j * bcol : db, eq ? qa + i * k : qa,
                     c.gemm_form && c.kind != ER_BK_ANY ? qw + i * k : qw, eq ? qb + j * bcol : qb,
                     c.gemm_form ? sa[i] : ER_BQ_BAD, c.gemm_form && c.kind != ER_BK_ANY ? sw[i] : 0,
                     c.gemm_form ? sb[j] : ER_BQ_BAD, c.has_c ? cv[e] : 0.0, c.slack_c ? dc[e] : 0.0, rb[e], 0, &o);
    radius[e] = o.radius;
    tolerance[e] = o.tolerance;
    low[e] = o.low;
    high[e] = o.high;
    flags[e] = (uchar)o.flags;
}
