/* er_mma.h: the per-element bodies of the exact engine (shared core): the exact sum, the block-scaled
 * sum, the integer sum (mmai), one element of mma into its outputs, and one element of normal().
 *
 * The CPU engine (cpu/cpu_mma.c), the OpenCL kernel (opencl/kernels/mma.cl) and the CUDA kernel
 * (cuda/er_cuda_mma.cu) run these functions: the same integer code, the same bits.  Operands are arrays
 * of patterns in their formats' storage sizes (er_fmt_storage_bytes), in ER_GLOBAL memory on OpenCL;
 * each loop reads a's elements from abase with step as and b's from bbase with step bs (a packed tile:
 * 1 and its column count; a strided tensor: its strides).  The parameter block of the kernels is
 * er_mma_params.h.  There is no floating point here.
 */
#ifndef ER_MMA_H
#define ER_MMA_H

#include "er_acc.h"
#include "er_d64.h"
#include "er_mma_params.h"

/* Pattern idx of an array of format f's patterns, each in its storage size. */
ER_FN er_u64 er_mma_ld(ER_GLOBAL const er_u8 *p, int f, er_i64 idx)
{
    er_i32 bytes = er_fmt_storage_bytes(er_fmt_get(f));
    if (bytes == 1) return (er_u64)p[idx];
    if (bytes == 2) return er_ld16_(p, idx);
    if (bytes == 4) return er_ld32_(p, idx);
    return er_ld64_(p, idx);
}

/* The signed value of an integer pattern (mmai: i8, u8, i32). */
ER_FN er_i64 er_mma_int_val(int f, er_u64 bits)
{
    er_val v = er_decode(f, bits);
    return v.sign ? -(er_i64)v.sig : (er_i64)v.sig;
}

/* Add the k products a[abase + p as] b[bbase + p bs] (operands flushed with ER_OPT_FTZ_IN) to acc. */
ER_FN_INLINE void er_mma_sum(er_acc *acc, int fa, int fb, ER_GLOBAL const er_u8 *a, er_i64 abase, er_i64 as,
                             ER_GLOBAL const er_u8 *b, er_i64 bbase, er_i64 bs, er_i64 k, er_u32 opts)
{
    er_i64 p;
    for (p = 0; p < k; p++) {
        er_val x = er_val_flush_in(er_decode(fa, er_mma_ld(a, fa, abase + p * as)), opts);
        er_val y = er_val_flush_in(er_decode(fb, er_mma_ld(b, fb, bbase + p * bs)), opts);
        er_acc_add_product(acc, x, y);
    }
}

/* The same, block-scaled: term p is (a[p] sa[p / block]) (b[p] sb[p / block]), the scales (one byte
 * each, format fs, never flushed) from sabase with step sas and from sbbase with step sbs. */
ER_FN_INLINE void er_mma_sum_scaled(er_acc *acc, int fa, int fb, int fs, ER_GLOBAL const er_u8 *a, er_i64 abase,
                                    er_i64 as, ER_GLOBAL const er_u8 *b, er_i64 bbase, er_i64 bs,
                                    ER_GLOBAL const er_u8 *sa, er_i64 sabase, er_i64 sas, ER_GLOBAL const er_u8 *sb,
                                    er_i64 sbbase, er_i64 sbs, er_i64 block, er_i64 k, er_u32 opts)
{
    er_i64 p, q = 0, r = 0;
    er_val xs = er_decode(fs, 0u), ys = xs; /* set at p = 0 */
    for (p = 0; p < k; p++) {
        er_val x = er_val_flush_in(er_decode(fa, er_mma_ld(a, fa, abase + p * as)), opts);
        er_val y = er_val_flush_in(er_decode(fb, er_mma_ld(b, fb, bbase + p * bs)), opts);
        if (r == 0) { /* a new block: its two scales */
            xs = er_decode(fs, (er_u64)sa[sabase + q * sas]);
            ys = er_decode(fs, (er_u64)sb[sbbase + q * sbs]);
        }
        er_acc_add_product(acc, er_val_scaled(x, xs), er_val_scaled(y, ys));
        if (++r == block) {
            r = 0;
            q++;
        }
    }
}

/* mmai: the exact sum of the k products of i8/u8 patterns (below 2^16 each, k <= 2^24: no overflow). */
ER_FN_INLINE er_i64 er_mma_sum_int(int fa, int fb, ER_GLOBAL const er_u8 *a, er_i64 abase, er_i64 as,
                                   ER_GLOBAL const er_u8 *b, er_i64 bbase, er_i64 bs, er_i64 k)
{
    er_i64 p, s = 0;
    for (p = 0; p < k; p++)
        s += er_mma_int_val(fa, er_mma_ld(a, fa, abase + p * as)) * er_mma_int_val(fb, er_mma_ld(b, fb, bbase + p * bs));
    return s;
}

/* mmai's sum with the common format pairs compiled with constant formats (the same function). */
ER_FN er_i64 er_mma_sum_int_any(int fa, int fb, ER_GLOBAL const er_u8 *a, er_i64 abase, er_i64 as,
                                ER_GLOBAL const er_u8 *b, er_i64 bbase, er_i64 bs, er_i64 k)
{
    if (fa == ER_FMT_I8 && fb == ER_FMT_I8) return er_mma_sum_int(ER_FMT_I8, ER_FMT_I8, a, abase, as, b, bbase, bs, k);
    if (fa == ER_FMT_I8 && fb == ER_FMT_U8) return er_mma_sum_int(ER_FMT_I8, ER_FMT_U8, a, abase, as, b, bbase, bs, k);
    if (fa == ER_FMT_U8 && fb == ER_FMT_I8) return er_mma_sum_int(ER_FMT_U8, ER_FMT_I8, a, abase, as, b, bbase, bs, k);
    return er_mma_sum_int(fa, fb, a, abase, as, b, bbase, bs, k);
}

/*
 * The exact sum of one element into acc (initialised by the caller), fs < 0: not block-scaled.  The
 * summation loop is compiled with constant formats for the common format pairs (decoding then folds to
 * a few instructions) and generic for every other: the same core functions either way, so the same
 * bits.
 */
#define ER_MMA_F_(x) ER_FMT_##x
#define ER_MMA_PAIR_(x, y) (fa == ER_MMA_F_(x) && fb == ER_MMA_F_(y))
#define ER_MMA_TRIPLE_(x, y, z) (fa == ER_MMA_F_(x) && fb == ER_MMA_F_(y) && fs == ER_MMA_F_(z))
ER_FN void er_mma_sum_any(er_acc *acc, int fa, int fb, int fs, ER_GLOBAL const er_u8 *a, er_i64 abase, er_i64 as,
                          ER_GLOBAL const er_u8 *b, er_i64 bbase, er_i64 bs, ER_GLOBAL const er_u8 *sa, er_i64 sabase,
                          er_i64 sas, ER_GLOBAL const er_u8 *sb, er_i64 sbbase, er_i64 sbs, er_i64 block, er_i64 k,
                          er_u32 opts)
{
    if (fs < 0) {
#define ER_MMA_SUM_(x, y) er_mma_sum(acc, ER_MMA_F_(x), ER_MMA_F_(y), a, abase, as, b, bbase, bs, k, opts)
        if (ER_MMA_PAIR_(BF16, BF16)) ER_MMA_SUM_(BF16, BF16);
        else if (ER_MMA_PAIR_(F16, F16)) ER_MMA_SUM_(F16, F16);
        else if (ER_MMA_PAIR_(F32, F32)) ER_MMA_SUM_(F32, F32);
        else if (ER_MMA_PAIR_(TF32, TF32)) ER_MMA_SUM_(TF32, TF32);
        else if (ER_MMA_PAIR_(F64, F64)) ER_MMA_SUM_(F64, F64);
        else if (ER_MMA_PAIR_(F8E4M3FN, F8E4M3FN)) ER_MMA_SUM_(F8E4M3FN, F8E4M3FN);
        else if (ER_MMA_PAIR_(F8E5M2, F8E5M2)) ER_MMA_SUM_(F8E5M2, F8E5M2);
        else if (ER_MMA_PAIR_(F8E4M3FN, F8E5M2)) ER_MMA_SUM_(F8E4M3FN, F8E5M2);
        else if (ER_MMA_PAIR_(F8E5M2, F8E4M3FN)) ER_MMA_SUM_(F8E5M2, F8E4M3FN);
        else er_mma_sum(acc, fa, fb, a, abase, as, b, bbase, bs, k, opts);
#undef ER_MMA_SUM_
    } else {
#define ER_MMA_SUM_(x, y, z)                                                                                       \
    er_mma_sum_scaled(acc, ER_MMA_F_(x), ER_MMA_F_(y), ER_MMA_F_(z), a, abase, as, b, bbase, bs, sa, sabase, sas, sb, \
                      sbbase, sbs, block, k, opts)
        if (ER_MMA_TRIPLE_(F8E4M3FN, F8E4M3FN, F8E8M0FNU)) ER_MMA_SUM_(F8E4M3FN, F8E4M3FN, F8E8M0FNU);
        else if (ER_MMA_TRIPLE_(F8E5M2, F8E5M2, F8E8M0FNU)) ER_MMA_SUM_(F8E5M2, F8E5M2, F8E8M0FNU);
        else if (ER_MMA_TRIPLE_(F4E2M1FN, F4E2M1FN, F8E8M0FNU)) ER_MMA_SUM_(F4E2M1FN, F4E2M1FN, F8E8M0FNU);
        else if (ER_MMA_TRIPLE_(F4E2M1FN, F4E2M1FN, F8E4M3FN)) ER_MMA_SUM_(F4E2M1FN, F4E2M1FN, F8E4M3FN);
        else er_mma_sum_scaled(acc, fa, fb, fs, a, abase, as, b, bbase, bs, sa, sabase, sas, sb, sbbase, sbs, block, k,
                               opts);
#undef ER_MMA_SUM_
    }
}
#undef ER_MMA_TRIPLE_
#undef ER_MMA_PAIR_
#undef ER_MMA_F_

/* Element (bb, i, j)'s first block scales of A and B (sa's and sb's indices) and the block size, for
 * block-scaled formats (fs >= 0); without scales (fs < 0) block 1 and the bases 0. */
ER_FN_INLINE void er_mma_scale_bases(ER_CONSTANT const er_i64 *prm, int fs, er_i64 bb, er_i64 i, er_i64 j,
                                     er_i64 *block, er_i64 *sabase, er_i64 *sbbase)
{
    *block = 1;
    *sabase = *sbbase = 0;
    if (fs < 0) return;
    *block = prm[ER_MP_BLOCK];
    *sabase = bb * prm[ER_MP_SA_BS] + i * prm[ER_MP_NBLK];
    *sbbase = bb * prm[ER_MP_SB_BS] + j;
}

/*
 * Element e of a packed tile (er_mma_params.h: nr rows and nc columns of a run of batches, each operand
 * row-major, a batch stride per operand, 0 where broadcast): the exact engine's outputs, 64-bit
 * patterns, into out_d (mmai: the exact sum, which the host wraps into i32), out_lo, out_hi, out_odd
 * (each written where ER_MP_WANT asks).
 */
ER_FN void er_mma_element(ER_CONSTANT const er_i64 *prm, ER_GLOBAL const er_u8 *a, ER_GLOBAL const er_u8 *b,
                          ER_GLOBAL const er_u8 *sa, ER_GLOBAL const er_u8 *sb, ER_GLOBAL const er_u8 *c,
                          ER_GLOBAL er_u64 *out_d, ER_GLOBAL er_u64 *out_lo, ER_GLOBAL er_u64 *out_hi,
                          ER_GLOBAL er_u64 *out_odd, er_i64 e)
{
    er_i64 nc = prm[ER_MP_NC], nr = prm[ER_MP_NR], k = prm[ER_MP_K];
    er_i64 j = e % nc, t = e / nc, i = t % nr, bb = t / nr;
    int fa = (int)prm[ER_MP_FA], fb = (int)prm[ER_MP_FB], fc = (int)prm[ER_MP_FC];
    er_u32 opts = (er_u32)prm[ER_MP_OPTS];
    er_i64 abase = bb * prm[ER_MP_A_BS] + i * k;
    er_i64 bbase = bb * prm[ER_MP_B_BS] + j;
    er_i64 cidx = bb * prm[ER_MP_C_BS] + i * nc + j;

    if (prm[ER_MP_KIND] == 1) {
        er_i64 s = er_mma_sum_int_any(fa, fb, a, abase, 1, b, bbase, nc, k);
        if (fc >= 0) s += er_mma_int_val(fc, er_mma_ld(c, fc, cidx));
        out_d[e] = (er_u64)s;
        return;
    }
    {
        er_acc acc;
        er_i64 want = prm[ER_MP_WANT];
        int fs = (int)prm[ER_MP_FS];
        er_i64 block, sabase, sbbase;
        er_mma_scale_bases(prm, fs, bb, i, j, &block, &sabase, &sbbase);
        er_acc_init(&acc, (er_i32)prm[ER_MP_ACC_LO], (er_i32)prm[ER_MP_ACC_ND]);
        er_mma_sum_any(&acc, fa, fb, fs, a, abase, 1, b, bbase, nc, sa, sabase, 1, sb, sbbase, nc, block, k, opts);
        if (fc >= 0) er_acc_add_val(&acc, er_val_flush_in(er_decode(fc, er_mma_ld(c, fc, cidx)), opts));
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
        if (want & ER_MW_D) out_d[e] = er_acc_round(&acc, (er_i32)prm[ER_MP_FD], (er_i32)prm[ER_MP_DIR], opts).bits;
    }
}

/* Element e of a packed tile of normal(): index-order accumulation emulated with integers
 * (er_d64.h: er_dnorm_*); the output pattern of format ER_MP_FD. */
ER_FN er_u64 er_mma_normal_element(ER_CONSTANT const er_i64 *prm, ER_GLOBAL const er_u8 *a, ER_GLOBAL const er_u8 *b,
                                   ER_GLOBAL const er_u8 *sa, ER_GLOBAL const er_u8 *sb, ER_GLOBAL const er_u8 *c,
                                   er_i64 e)
{
    er_i64 nc = prm[ER_MP_NC], nr = prm[ER_MP_NR], k = prm[ER_MP_K];
    er_i64 j = e % nc, t = e / nc, i = t % nr, bb = t / nr, p;
    int fa = (int)prm[ER_MP_FA], fb = (int)prm[ER_MP_FB], fc = (int)prm[ER_MP_FC], fs = (int)prm[ER_MP_FS];
    er_u32 opts = (er_u32)prm[ER_MP_OPTS];
    er_i64 abase = bb * prm[ER_MP_A_BS] + i * k, bbase = bb * prm[ER_MP_B_BS] + j, sabase, sbbase, block;
    er_dnorm st;
    er_mma_scale_bases(prm, fs, bb, i, j, &block, &sabase, &sbbase);
    er_dnorm_init(&st, (int)prm[ER_MP_COMPUTE], (int)prm[ER_MP_FTZ]);
    if (fc >= 0) er_dnorm_c(&st, fc, er_mma_ld(c, fc, bb * prm[ER_MP_C_BS] + i * nc + j));
    for (p = 0; p < k; p++) {
        er_u64 xs = fs >= 0 ? (er_u64)sa[sabase + p / block] : ER_U64(0);
        er_u64 ys = fs >= 0 ? (er_u64)sb[sbbase + (p / block) * nc] : ER_U64(0);
        er_dnorm_term(&st, er_d_operand(fa, er_mma_ld(a, fa, abase + p), fs, xs, opts),
                      er_d_operand(fb, er_mma_ld(b, fb, bbase + p * nc), fs, ys, opts));
    }
    return er_dnorm_result(&st, (er_i32)prm[ER_MP_FD], (er_i32)prm[ER_MP_DIR], opts);
}

#endif /* ER_MMA_H */
