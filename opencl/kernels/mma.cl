/* mma.cl: the exact engine as an OpenCL kernel: mma, block-scaled mma, mmai and the enclosures.
 *
 * One work-item per element of D.  Each work-item owns a long accumulator (er_acc, the shared core of
 * include/exactref/core/er_acc.h) in private memory, adds every exact product of its row of A and
 * column of B, and C, then rounds once: the same integer code, in the same order, as the CPU engine's
 * exact path (cpu/cpu_mma.c), hence the same bits.  (The order does not even matter: the accumulator
 * holds the exact sum, and a correctly rounded value is unique.)  Nothing is shared between
 * work-items: no atomics, no barriers, every output element is written by exactly one work-item.
 * The summation loop is compiled once per common format pair with the formats as constants (decoding
 * then folds to a few instructions: about 6x faster on PoCL) and once generic for every other pair.
 *
 * There is no floating point here (and no mad()); contraction is off all the same.
 *
 * The host (opencl/er_opencl_mma.c) packs a tile of the problem into contiguous buffers, each operand
 * in its own storage size (1, 2, 4 or 8 bytes a pattern):
 *   a       [batch][row][p]         a_scale [batch][row][p / block]
 *   b       [batch][p][col]         b_scale [batch][p / block][col]
 *   c       [batch][row][col]       outputs [batch][row][col], 64-bit patterns
 * with a batch stride of 0 where the operand is broadcast over the batch.  The parameter block's
 * layout is kernels/mma_params.h.
 *
 * This file is not read at run time: at build time opencl/embed_cl.cmake inlines the headers it
 * includes and embeds the flattened text into the library (er_opencl_mma_source.c).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "exactref/core/er_acc.h"
#include "exactref/core/er_d64.h"
#include "mma_params.h"

/* Inline the summation loops at their call sites, so that a constant format folds its table row. */
#if defined(__clang__) || defined(__GNUC__)
#define ER_KINLINE static inline __attribute__((always_inline))
#else
#define ER_KINLINE static inline
#endif

/* Storage bytes of a pattern of format f (as er_format_info.storage_bytes: 1, 2, 4 or 8). */
ER_KINLINE long er_bytes_(int f)
{
    int w = er_fmt_get(f).width;
    return w <= 8 ? 1 : w <= 16 ? 2 : w <= 32 ? 4 : 8;
}

/* Pattern idx of a packed operand of format f (little-endian, in its storage size, as the host packs). */
ER_KINLINE ulong er_ld_(__global const uchar *p, int f, long idx)
{
    long bytes = er_bytes_(f);
    if (bytes == 1) return (ulong)p[idx];
    if (bytes == 2) return (ulong)((__global const ushort *)p)[idx];
    if (bytes == 4) return (ulong)((__global const uint *)p)[idx];
    return ((__global const ulong *)p)[idx];
}

/* Operand flushing, scaling and accumulator copies are the shared core's (er_acc.h). */

/* The signed value of an integer pattern (mmai: i8, u8, i32). */
ER_KINLINE long er_int_val_(int f, ulong bits)
{
    er_val v = er_decode(f, bits);
    return v.sign ? -(long)v.sig : (long)v.sig;
}

/* Add the k products of a's row (from abase, step 1) and b's column (from bbase, step nc). */
ER_KINLINE void er_sum_(er_acc *acc, int fa, int fb, __global const uchar *a, long abase, __global const uchar *b,
                        long bbase, long nc, long k, uint opts)
{
    long p;
    for (p = 0; p < k; p++) {
        er_val x = er_val_flush_in(er_decode(fa, er_ld_(a, fa, abase + p)), opts);
        er_val y = er_val_flush_in(er_decode(fb, er_ld_(b, fb, bbase + p * nc)), opts);
        er_acc_add_product(acc, x, y);
    }
}

/* The same, block-scaled: term p is (a[p] a_scale[p / block]) (b[p] b_scale[p / block]); the scales'
 * rows start at sabase (step 1) and sbbase (step nc). */
ER_KINLINE void er_sum_scaled_(er_acc *acc, int fa, int fb, int fs, __global const uchar *a, long abase,
                               __global const uchar *b, long bbase, __global const uchar *sa, long sabase,
                               __global const uchar *sb, long sbbase, long block, long nc, long k, uint opts)
{
    long p, q = 0, r = 0;
    er_val xs = er_decode(fs, 0u), ys = xs; /* set at p = 0 */
    for (p = 0; p < k; p++) {
        er_val x = er_val_flush_in(er_decode(fa, er_ld_(a, fa, abase + p)), opts);
        er_val y = er_val_flush_in(er_decode(fb, er_ld_(b, fb, bbase + p * nc)), opts);
        if (r == 0) { /* a new block: its two scales (never flushed, as in the CPU engine) */
            xs = er_decode(fs, (ulong)sa[sabase + q]);
            ys = er_decode(fs, (ulong)sb[sbbase + q * nc]);
        }
        er_acc_add_product(acc, er_val_scaled(x, xs), er_val_scaled(y, ys));
        if (++r == block) {
            r = 0;
            q++;
        }
    }
}

/* mmai: the exact sum of the k products of i8/u8 patterns (below 2^16 each, k <= 2^24: no overflow). */
ER_KINLINE long er_sum_int_(int fa, int fb, __global const uchar *a, long abase, __global const uchar *b, long bbase,
                            long nc, long k)
{
    long p, s = 0;
    for (p = 0; p < k; p++)
        s += er_int_val_(fa, er_ld_(a, fa, abase + p)) * er_int_val_(fb, er_ld_(b, fb, bbase + p * nc));
    return s;
}

/*
 * The kernel.  The summation loop is specialised (compiled with constant formats, so that decoding is
 * a few instructions) for the common format pairs, and generic for every other pair: the same core
 * functions either way, so the same bits.
 */
#define ER_F_(x) ER_FMT_##x
#define ER_PAIR_(x, y) (fa == ER_F_(x) && fb == ER_F_(y))
#define ER_TRIPLE_(x, y, z) (fa == ER_F_(x) && fb == ER_F_(y) && fs == ER_F_(z))

__kernel void er_mma_exact(__constant long *prm, __global const uchar *a, __global const uchar *b,
                           __global const uchar *sa, __global const uchar *sb, __global const uchar *c,
                           __global ulong *out_d, __global ulong *out_lo, __global ulong *out_hi,
                           __global ulong *out_odd)
{
    long e = (long)get_global_id(0);
    long nc, nr, k, j, i, bb, t, abase, bbase, cidx;
    int fa, fb, fc;
    uint opts;
    if (e >= prm[ER_MP_TOTAL]) return;
    nc = prm[ER_MP_NC];
    nr = prm[ER_MP_NR];
    k = prm[ER_MP_K];
    j = e % nc;
    t = e / nc;
    i = t % nr;
    bb = t / nr;
    fa = (int)prm[ER_MP_FA];
    fb = (int)prm[ER_MP_FB];
    fc = (int)prm[ER_MP_FC];
    opts = (uint)prm[ER_MP_OPTS];
    abase = bb * prm[ER_MP_A_BS] + i * k;
    bbase = bb * prm[ER_MP_B_BS] + j;
    cidx = bb * prm[ER_MP_C_BS] + i * nc + j;

    if (prm[ER_MP_KIND] == 1) {
        /* mmai: the exact sum; the host wraps it into i32 and counts the elements outside that range. */
        long s;
        if (ER_PAIR_(I8, I8)) s = er_sum_int_(ER_FMT_I8, ER_FMT_I8, a, abase, b, bbase, nc, k);
        else if (ER_PAIR_(I8, U8)) s = er_sum_int_(ER_FMT_I8, ER_FMT_U8, a, abase, b, bbase, nc, k);
        else if (ER_PAIR_(U8, I8)) s = er_sum_int_(ER_FMT_U8, ER_FMT_I8, a, abase, b, bbase, nc, k);
        else s = er_sum_int_(fa, fb, a, abase, b, bbase, nc, k);
        if (fc >= 0) s += er_int_val_(fc, er_ld_(c, fc, cidx));
        out_d[e] = (ulong)s;
        return;
    }

    {
        er_acc acc;
        long want = prm[ER_MP_WANT];
        int fs = (int)prm[ER_MP_FS];
        er_acc_init(&acc, (er_i32)prm[ER_MP_ACC_LO], (er_i32)prm[ER_MP_ACC_ND]);
        if (fs < 0) {
#define ER_SUM_(x, y) er_sum_(&acc, ER_F_(x), ER_F_(y), a, abase, b, bbase, nc, k, opts)
            if (ER_PAIR_(BF16, BF16)) ER_SUM_(BF16, BF16);
            else if (ER_PAIR_(F16, F16)) ER_SUM_(F16, F16);
            else if (ER_PAIR_(F32, F32)) ER_SUM_(F32, F32);
            else if (ER_PAIR_(TF32, TF32)) ER_SUM_(TF32, TF32);
            else if (ER_PAIR_(F64, F64)) ER_SUM_(F64, F64);
            else if (ER_PAIR_(F8E4M3FN, F8E4M3FN)) ER_SUM_(F8E4M3FN, F8E4M3FN);
            else if (ER_PAIR_(F8E5M2, F8E5M2)) ER_SUM_(F8E5M2, F8E5M2);
            else if (ER_PAIR_(F8E4M3FN, F8E5M2)) ER_SUM_(F8E4M3FN, F8E5M2);
            else if (ER_PAIR_(F8E5M2, F8E4M3FN)) ER_SUM_(F8E5M2, F8E4M3FN);
            else er_sum_(&acc, fa, fb, a, abase, b, bbase, nc, k, opts);
#undef ER_SUM_
        } else {
            long block = prm[ER_MP_BLOCK], nblk = prm[ER_MP_NBLK];
            long sabase = bb * prm[ER_MP_SA_BS] + i * nblk, sbbase = bb * prm[ER_MP_SB_BS] + j;
#define ER_SUM_(x, y, z) \
    er_sum_scaled_(&acc, ER_F_(x), ER_F_(y), ER_F_(z), a, abase, b, bbase, sa, sabase, sb, sbbase, block, nc, k, opts)
            if (ER_TRIPLE_(F8E4M3FN, F8E4M3FN, F8E8M0FNU)) ER_SUM_(F8E4M3FN, F8E4M3FN, F8E8M0FNU);
            else if (ER_TRIPLE_(F8E5M2, F8E5M2, F8E8M0FNU)) ER_SUM_(F8E5M2, F8E5M2, F8E8M0FNU);
            else if (ER_TRIPLE_(F4E2M1FN, F4E2M1FN, F8E8M0FNU)) ER_SUM_(F4E2M1FN, F4E2M1FN, F8E8M0FNU);
            else if (ER_TRIPLE_(F4E2M1FN, F4E2M1FN, F8E4M3FN)) ER_SUM_(F4E2M1FN, F4E2M1FN, F8E4M3FN);
            else er_sum_scaled_(&acc, fa, fb, fs, a, abase, b, bbase, sa, sabase, sb, sbbase, block, nc, k, opts);
#undef ER_SUM_
        }
        if (fc >= 0) er_acc_add_val(&acc, er_val_flush_in(er_decode(fc, er_ld_(c, fc, cidx)), opts));
        if (want & (ER_MW_LO | ER_MW_HI | ER_MW_ODD)) {
            er_acc tmp;
            if (want & ER_MW_LO) {
                er_acc_copy(&tmp, &acc);
                out_lo[e] = er_acc_round(&tmp, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0u).bits;
            }
            if (want & ER_MW_HI) {
                er_acc_copy(&tmp, &acc);
                out_hi[e] = er_acc_round(&tmp, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits;
            }
            if (want & ER_MW_ODD) {
                er_acc_copy(&tmp, &acc);
                out_odd[e] = er_acc_round(&tmp, ER_FMT_F64, ER_RND_ODD, 0u).bits;
            }
        }
        if (want & ER_MW_D)
            out_d[e] = er_acc_round(&acc, (er_i32)prm[ER_MP_FD], (er_i32)prm[ER_MP_DIR], opts).bits;
    }
}

/* ---- normal(): index-order accumulation emulated to the bit (er_result_normal) ----------------------
 *
 * The binary64 emulation with integers only and the per-element steps are the shared core's
 * (include/exactref/core/er_d64.h: er_d_*, er_dnorm_*), the same source as the CUDA kernel's; this
 * kernel reads the operands from global memory and hands their values in.
 */

/* One work-item per element of the output; the parameter block and buffers are er_mma_exact's
 * (ER_MP_COMPUTE and ER_MP_FTZ added; the output pattern goes to out_d). */
__kernel void er_mma_normal(__constant long *prm, __global const uchar *a, __global const uchar *b,
                            __global const uchar *sa, __global const uchar *sb, __global const uchar *c,
                            __global ulong *out_d, __global ulong *out_lo, __global ulong *out_hi,
                            __global ulong *out_odd)
{
    long e = (long)get_global_id(0);
    long nc, nr, k, j, i, bb, t, abase, bbase, sabase = 0, sbbase = 0, block = 1, p;
    int fa, fb, fc, fs;
    uint opts;
    er_dnorm st;
    if (e >= prm[ER_MP_TOTAL]) return;
    nc = prm[ER_MP_NC];
    nr = prm[ER_MP_NR];
    k = prm[ER_MP_K];
    j = e % nc;
    t = e / nc;
    i = t % nr;
    bb = t / nr;
    fa = (int)prm[ER_MP_FA];
    fb = (int)prm[ER_MP_FB];
    fc = (int)prm[ER_MP_FC];
    fs = (int)prm[ER_MP_FS];
    opts = (uint)prm[ER_MP_OPTS];
    abase = bb * prm[ER_MP_A_BS] + i * k;
    bbase = bb * prm[ER_MP_B_BS] + j;
    if (fs >= 0) {
        long nblk = prm[ER_MP_NBLK];
        block = prm[ER_MP_BLOCK];
        sabase = bb * prm[ER_MP_SA_BS] + i * nblk;
        sbbase = bb * prm[ER_MP_SB_BS] + j;
    }
    er_dnorm_init(&st, (int)prm[ER_MP_COMPUTE], (int)prm[ER_MP_FTZ]);
    if (fc >= 0) er_dnorm_c(&st, fc, er_ld_(c, fc, bb * prm[ER_MP_C_BS] + i * nc + j));
    for (p = 0; p < k; p++) {
        ulong xs = fs >= 0 ? (ulong)sa[sabase + p / block] : 0UL;
        ulong ys = fs >= 0 ? (ulong)sb[sbbase + (p / block) * nc] : 0UL;
        er_dnorm_term(&st, er_d_operand(fa, er_ld_(a, fa, abase + p), fs, xs, opts),
                      er_d_operand(fb, er_ld_(b, fb, bbase + p * nc), fs, ys, opts));
    }
    out_d[e] = er_dnorm_result(&st, (er_i32)prm[ER_MP_FD], (er_i32)prm[ER_MP_DIR], opts);
}
