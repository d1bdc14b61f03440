/* er_cuda_chains.cuh: the canonical fused chains of a matrix product in binary64, tiled for the GPU.
 *
 * For every element (b, i, j) of an m x n output, and p = 0 .. k-1 IN INDEX ORDER:
 *     S <- fma(a_p, b_p, S)                          (NC >= 1)
 *     T <- fma(|a_p|, |b_p|, T)                      (NC == 3)
 *     W <- fma(|a_p| * rw[p], |b_p|, W)              (NC == 3; the product |a_p| rw[p] rounded first)
 * from S = T = W = +0, where a_p = A'[b][i][p] and b_p = B'[b][p][j] are binary64 values.  These are
 * er_bound_element's chains (include/exactref/core/er_bounds.h, the branch with pre == NULL), and S
 * alone is the exact-binary64 path's sum (er_cuda_mma.cu).
 *
 * Why the tiling cannot change a bit.  fma is IEEE 754's fusedMultiplyAdd, correctly rounded to nearest
 * even on the device (DFMA) and in the host's libm alike, and |a| rw[p] is one correctly rounded
 * multiplication; so every step's result is a function of its three operands only.  Each element's
 * three accumulators live in one thread's registers from p = 0 to p = k-1: the k loop is sequential per
 * element (no split of k, no partial sums combined, no atomics), the stages of the shared-memory tiles
 * are visited in increasing p and each stage's steps in increasing p, and a stage past the end of k is
 * cut short (no padding term is ever added).  The shared-memory tiles hold copies of the same binary64
 * values (and |a| rw[p] computed by the same operation as er_bound_element's).  nvcc runs with
 * --fmad=false and never reassociates floating point, so no other operation is fused or reordered.  The
 * sequence of operations on each accumulator is therefore exactly er_bound_element's, operand for
 * operand, and the results are the same bits.
 *
 * Layout: A' element (b, i, p) at a[b a_bs + i lda + p]; B' element (b, p, j) at b[b b_bs + p ldb + j];
 * outputs (b, i, j) at s/t/w[b o_bs + i ldo + j].  A block of ER_CH_THREADS threads computes a tile of
 * ER_CH_TM x ER_CH_TN elements, ER_CH_RM x ER_CH_RN per thread (rows ty + ER_CH_TY r, columns
 * tx + ER_CH_TX c), through stages of ER_CH_TK terms staged in shared memory.
 *
 * The host pass runs the same load / compute / store functions block by block on the CPU, each phase
 * for every thread of the block in turn, as the barriers order them on the device.
 */
#ifndef ER_CUDA_CHAINS_CUH
#define ER_CUDA_CHAINS_CUH

#include "er_cuda_module.cuh"
#include "exactref/core/er_bounds.h"

#define ER_CH_TM 64
#define ER_CH_TN 64
#define ER_CH_TK 16
#define ER_CH_RM 4
#define ER_CH_RN 4
#define ER_CH_TX (ER_CH_TN / ER_CH_RN)
#define ER_CH_TY (ER_CH_TM / ER_CH_RM)
#define ER_CH_THREADS (ER_CH_TX * ER_CH_TY)
/* Unrolled on the device (the accumulators stay in registers); the host compiler has no such pragma. */
#if defined(__CUDA_ARCH__)
#define ER_CH_UNROLL _Pragma("unroll")
#else
#define ER_CH_UNROLL
#endif

namespace {

typedef struct {
    const double *a;
    er_i64 lda, a_bs;
    const double *b;
    er_i64 ldb, b_bs;
    const double *rw; /* k weights (NC == 3) */
    double *s, *t, *w;
    er_i64 ldo, o_bs;
    er_i64 m, n, k;
} er_ch_args;

template <int NC> struct er_ch_smem {
    double a[ER_CH_TK][ER_CH_TM];
    double aw[NC == 3 ? ER_CH_TK : 1][ER_CH_TM];
    double b[ER_CH_TK][ER_CH_TN];
};

template <int NC> struct er_ch_regs {
    double v[NC][ER_CH_RM][ER_CH_RN];
};

template <int NC> ER_KFN void er_ch_zero(er_ch_regs<NC> &R)
{
ER_CH_UNROLL
    for (int q = 0; q < NC; q++)
ER_CH_UNROLL
        for (int r = 0; r < ER_CH_RM; r++)
ER_CH_UNROLL
            for (int c = 0; c < ER_CH_RN; c++) R.v[q][r][c] = 0.0;
}

/* Stage k0 of block (bx, by, bz): thread tid's share of the tiles (zeros outside the matrices; those
 * are never used as terms). */
template <int NC>
ER_KFN void er_ch_load(er_ch_smem<NC> &sm, const er_ch_args &A, int tid, er_i64 bx, er_i64 by, er_i64 bz, er_i64 k0)
{
    for (int q = tid; q < ER_CH_TM * ER_CH_TK; q += ER_CH_THREADS) {
        int r = q / ER_CH_TK, kk = q % ER_CH_TK;
        er_i64 i = by * ER_CH_TM + r, p = k0 + kk;
        double x = i < A.m && p < A.k ? A.a[bz * A.a_bs + i * A.lda + p] : 0.0;
        sm.a[kk][r] = x;
        if (NC == 3) sm.aw[NC == 3 ? kk : 0][r] = p < A.k ? fabs(x) * A.rw[p] : 0.0; /* er_bound_element's aa * rw[p] */
    }
    for (int q = tid; q < ER_CH_TK * ER_CH_TN; q += ER_CH_THREADS) {
        int kk = q / ER_CH_TN, c = q % ER_CH_TN;
        er_i64 j = bx * ER_CH_TN + c, p = k0 + kk;
        sm.b[kk][c] = j < A.n && p < A.k ? A.b[bz * A.b_bs + p * A.ldb + j] : 0.0;
    }
}

/* One term (stage row kk) into thread tid's accumulators. */
template <int NC> ER_KFN void er_ch_step(const er_ch_smem<NC> &sm, er_ch_regs<NC> &R, int tx, int ty, int kk)
{
    double a[ER_CH_RM], aw[ER_CH_RM], b[ER_CH_RN];
ER_CH_UNROLL
    for (int r = 0; r < ER_CH_RM; r++) {
        a[r] = sm.a[kk][ty + ER_CH_TY * r];
        aw[r] = NC == 3 ? sm.aw[NC == 3 ? kk : 0][ty + ER_CH_TY * r] : 0.0;
    }
ER_CH_UNROLL
    for (int c = 0; c < ER_CH_RN; c++) b[c] = sm.b[kk][tx + ER_CH_TX * c];
ER_CH_UNROLL
    for (int r = 0; r < ER_CH_RM; r++)
ER_CH_UNROLL
        for (int c = 0; c < ER_CH_RN; c++) {
            R.v[0][r][c] = fma(a[r], b[c], R.v[0][r][c]);
            if (NC == 3) {
                R.v[NC == 3 ? 1 : 0][r][c] = fma(fabs(a[r]), fabs(b[c]), R.v[NC == 3 ? 1 : 0][r][c]);
                R.v[NC == 3 ? 2 : 0][r][c] = fma(aw[r], fabs(b[c]), R.v[NC == 3 ? 2 : 0][r][c]);
            }
        }
}

/* The stage's kn terms (kn < ER_CH_TK only in the last stage), in increasing p. */
template <int NC> ER_KFN void er_ch_compute(const er_ch_smem<NC> &sm, er_ch_regs<NC> &R, int tid, int kn)
{
    int tx = tid % ER_CH_TX, ty = tid / ER_CH_TX;
    if (kn == ER_CH_TK) {
ER_CH_UNROLL
        for (int kk = 0; kk < ER_CH_TK; kk++) er_ch_step<NC>(sm, R, tx, ty, kk);
    } else {
        for (int kk = 0; kk < kn; kk++) er_ch_step<NC>(sm, R, tx, ty, kk);
    }
}

template <int NC>
ER_KFN void er_ch_store(const er_ch_regs<NC> &R, const er_ch_args &A, int tid, er_i64 bx, er_i64 by, er_i64 bz)
{
    int tx = tid % ER_CH_TX, ty = tid / ER_CH_TX;
ER_CH_UNROLL
    for (int r = 0; r < ER_CH_RM; r++)
ER_CH_UNROLL
        for (int c = 0; c < ER_CH_RN; c++) {
            er_i64 i = by * ER_CH_TM + ty + ER_CH_TY * r, j = bx * ER_CH_TN + tx + ER_CH_TX * c;
            if (i < A.m && j < A.n) {
                er_i64 o = bz * A.o_bs + i * A.ldo + j;
                A.s[o] = R.v[0][r][c];
                if (NC == 3) {
                    A.t[o] = R.v[NC == 3 ? 1 : 0][r][c];
                    A.w[o] = R.v[NC == 3 ? 2 : 0][r][c];
                }
            }
        }
}

template <int NC> __global__ void __launch_bounds__(ER_CH_THREADS) er_ch_kernel(er_ch_args A)
{
    __shared__ er_ch_smem<NC> sm;
    er_ch_regs<NC> R;
    int tid = (int)threadIdx.x;
    er_i64 bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    er_ch_zero<NC>(R);
    for (er_i64 k0 = 0; k0 < A.k; k0 += ER_CH_TK) {
        er_ch_load<NC>(sm, A, tid, bx, by, bz, k0);
        __syncthreads();
        er_ch_compute<NC>(sm, R, tid, A.k - k0 < ER_CH_TK ? (int)(A.k - k0) : ER_CH_TK);
        __syncthreads();
    }
    er_ch_store<NC>(R, A, tid, bx, by, bz);
}

/* The chains for nb batches of A (grid: column tiles, row tiles, batches), on the device or (host pass)
 * on the CPU. */
template <int NC> int er_ch_run(const er_cum_dev *d, const er_ch_args &A, er_i64 nb, char *msg, size_t msg_size)
{
    er_i64 gx = (A.n + ER_CH_TN - 1) / ER_CH_TN, gy = (A.m + ER_CH_TM - 1) / ER_CH_TM;
    if (A.m <= 0 || A.n <= 0 || nb <= 0) return ER_OK;
    if (d->device >= 0) {
        /* gridDim.y and gridDim.z are at most 65535: launches over chunks of rows and batches */
        const er_i64 RMAX = (er_i64)65535 * ER_CH_TM;
        for (er_i64 b0 = 0; b0 < nb; b0 += 65535)
            for (er_i64 r0 = 0; r0 < A.m; r0 += RMAX) {
                er_ch_args P = A;
                er_i64 z = nb - b0 < 65535 ? nb - b0 : 65535, rows = A.m - r0 < RMAX ? A.m - r0 : RMAX;
                P.m = rows;
                P.a += b0 * A.a_bs + r0 * A.lda;
                P.b += b0 * A.b_bs;
                P.s += b0 * A.o_bs + r0 * A.ldo;
                if (NC == 3) {
                    P.t += b0 * A.o_bs + r0 * A.ldo;
                    P.w += b0 * A.o_bs + r0 * A.ldo;
                }
                dim3 grid((unsigned)gx, (unsigned)((rows + ER_CH_TM - 1) / ER_CH_TM), (unsigned)z);
                er_ch_kernel<NC><<<grid, ER_CH_THREADS>>>(P);
                int st = er_cum_sync(d, "er_ch_kernel", msg, msg_size);
                if (st != ER_OK) return st;
            }
        return ER_OK;
    }
    er_ch_smem<NC> *sm = (er_ch_smem<NC> *)malloc(sizeof *sm);
    er_ch_regs<NC> *R = (er_ch_regs<NC> *)malloc(sizeof *R * ER_CH_THREADS);
    if (!sm || !R) {
        free(sm);
        free(R);
        return er_cum_fail(msg, msg_size, ER_ENOMEM, "CUDA host pass: out of memory");
    }
    for (er_i64 bz = 0; bz < nb; bz++)
        for (er_i64 by = 0; by < gy; by++)
            for (er_i64 bx = 0; bx < gx; bx++) {
                for (int t = 0; t < ER_CH_THREADS; t++) er_ch_zero<NC>(R[t]);
                for (er_i64 k0 = 0; k0 < A.k; k0 += ER_CH_TK) {
                    for (int t = 0; t < ER_CH_THREADS; t++) er_ch_load<NC>(*sm, A, t, bx, by, bz, k0);
                    for (int t = 0; t < ER_CH_THREADS; t++)
                        er_ch_compute<NC>(*sm, R[t], t, A.k - k0 < ER_CH_TK ? (int)(A.k - k0) : ER_CH_TK);
                }
                for (int t = 0; t < ER_CH_THREADS; t++) er_ch_store<NC>(R[t], A, t, bx, by, bz);
            }
    free(sm);
    free(R);
    return ER_OK;
}

} /* namespace */

#endif /* ER_CUDA_CHAINS_CUH */
