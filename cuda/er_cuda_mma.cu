/* er_cuda_mma.cu: the exact engine as CUDA kernels (mma, block-scaled mma, mmai, the enclosures
 * lo/hi/odd, the exact binary64 path) and normal(), with their host side: the CUDA backend module
 * libexactref_cuda.so (with er_cuda_bounds.cu).
 *
 * The exact kernel is opencl/kernels/mma.cl, transcribed: one thread per element of D, each with its own
 * long accumulator (er_acc, the shared core of include/exactref/core/er_acc.h) in private (local)
 * memory; it adds every exact product of its row of A and column of B, and C, then rounds once: the same
 * integer code, in the same order, as the CPU engine's exact path (cpu/cpu_mma.c), hence the same bits.
 * Nothing is shared between threads: no atomics, no shared memory, no barriers; every output element is
 * written by exactly one thread.  The parameter block has the OpenCL kernel's layout
 * (kernels/mma_params.h).  There is no floating point in it; nvcc runs with --fmad=false all the same.
 *
 * The exact binary64 path (job->exact64: strategy AUTO, D only): per tile, when the operands' values
 * span few enough bits that binary64 accumulation is exact in any order (the proof is above
 * er_fx_decode_one), the tiled kernel of er_cuda_chains.cuh forms each element's sum S in binary64 and
 * it is rounded once; the exact kernel then runs only for the elements it leaves (zero or non-finite
 * sums).  Each element's value is the unique correctly rounded one either way: the bits cannot change.
 *
 * normal() (kernel er_cuda_normal_kernel_): one thread per element running the shared core's
 * index-order emulation (include/exactref/core/er_d64.h, the OpenCL kernel's er_mma_normal), integers
 * only: er_cpu_normal's bits.
 *
 * The per-element functions are __host__ __device__: the host-pass entry points run the very same
 * functions (and the tiled kernel block by block), compiled by nvcc for the host, in place of the
 * launches (the tests' host pass, which needs no GPU).
 *
 * Host side (as opencl/er_opencl_mma.c): the front door (src/mma.c) has validated the problem and the
 * loader (src/cuda_loader.c) passes what it found (er_cuda_job: the accumulator's window, the shapes); the
 * output is cut into tiles (a run of whole batches when they fit, else a block of rows and columns of
 * one batch), each operand of a tile packed into a contiguous buffer in its storage size, one thread
 * launched per element, the 64-bit results scattered back through the output tensors' strides: the
 * plan, the parameter block, the packing and the scatter are host/er_tile.h's, which the OpenCL
 * backend runs too.  A tile
 * fits in half the device's free memory and in 1 GiB of host staging; EXACTREF_CUDA_MAX_CHUNK (elements
 * of D) makes tiles smaller, for tests.
 *
 * The module depends on nothing of libexactref (the core is header-only).  It never prints or exits; every
 * allocation is freed and the calling thread's current device restored on every path.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../host/er_tile.h" /* the tiles' plan, parameter block, packing and scatter (with OpenCL) */
#include "er_cuda_backend.h"
#include "er_cuda_chains.cuh"
#include "er_cuda_module.cuh"
#include "er_cuda_slices.h"
#include "exactref/core/er_acc.h"
#include "exactref/core/er_d64.h"
#include "exactref/core/er_mma.h" /* the per-element bodies and the parameter block, shared with OpenCL */
#include "exactref/exactref.h"

#define ER_CUM_THREADS 128                        /* threads per block */
#define ER_CUM_HOST_LIMIT ((uint64_t)1 << 30)     /* at most this much staged on the host per tile */

namespace {

/* ------------------------------------------------------------------------------------------------ */
/* The kernels (the per-element bodies are the shared core's, include/exactref/core/er_mma.h)          */

typedef struct {
    er_i64 v[ER_MP_COUNT];
} er_cu_prm;

/* The packed buffers of a tile (NULL where unused); skip: elements already computed (the exact
 * binary64 path), which the exact kernel leaves alone. */
typedef struct {
    const unsigned char *a, *b, *sa, *sb, *c;
    er_u64 *d, *lo, *hi, *odd;
    const unsigned char *skip;
} er_cu_bufs;

/* Pattern idx of a packed operand (the core's loader, used by the exact binary64 path below too). */
ER_KFN er_u64 er_ld_(const unsigned char *p, int f, er_i64 idx) { return er_mma_ld(p, f, idx); }

/* Element e of a tile: the shared core's body (include/exactref/core/er_mma.h: er_mma_element), the
 * same source as the OpenCL kernel's and the CPU engine's. */
ER_KFN void er_cu_element(const er_cu_prm &prm, const er_cu_bufs &buf, er_i64 e)
{
    er_mma_element(prm.v, buf.a, buf.b, buf.sa, buf.sb, buf.c, buf.d, buf.lo, buf.hi, buf.odd, e);
}

__global__ void __launch_bounds__(ER_CUM_THREADS) er_cuda_mma_kernel_(er_cu_prm prm, er_cu_bufs buf)
{
    er_i64 total = prm.v[ER_MP_TOTAL];
    er_i64 stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride)
        if (!buf.skip || !buf.skip[e]) er_cu_element(prm, buf, e);
}

/* ------------------------------------------------------------------------------------------------ */
/* normal(): index-order accumulation emulated to the bit (opencl/kernels/mma.cl: er_mma_normal)      */

/* Element e of a tile: the shared core's er_mma_normal_element (er_dnorm_* of er_d64.h), integers only. */
ER_KFN void er_cu_normal_element(const er_cu_prm &prm, const er_cu_bufs &buf, er_i64 e)
{
    buf.d[e] = er_mma_normal_element(prm.v, buf.a, buf.b, buf.sa, buf.sb, buf.c, e);
}

__global__ void __launch_bounds__(ER_CUM_THREADS) er_cuda_normal_kernel_(er_cu_prm prm, er_cu_bufs buf)
{
    er_i64 total = prm.v[ER_MP_TOTAL];
    er_i64 stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride)
        er_cu_normal_element(prm, buf, e);
}

/* ------------------------------------------------------------------------------------------------ */
/* The exact binary64 path (er_cuda_job.exact64)                                                      */
/*
 * For a tile, the decode kernel turns the packed operands into binary64 values A' and B' (flushed with
 * ER_OPT_FTZ_IN, scales applied: exactly the values the long accumulator adds) and finds, over the
 * tile's finite nonzero values of A', B' and C, the least exponent of a least significant bit (lsb) and
 * the least t with |x| < 2^t (top).  With L = min(lsb_A + lsb_B, lsb_C), Tp = max(top_A + top_B, top_C)
 * and g = ceil(log2(k + [C])), the tile is EXACT when Tp + g - L <= 53, L >= -1022 and Tp + g <= 1023:
 *   every term (a product, or C) is an integer multiple of 2^L of magnitude below 2^Tp, so every partial
 *   sum of any subset of the terms is a multiple of 2^L below 2^(Tp + g) <= 2^(L + 53) in magnitude: a
 *   normal binary64 value (or zero).  Each product is such a value too, so fma(a, b, S) = a b + S with
 *   no rounding, and S + c likewise: the chain S of er_cuda_chains.cuh (in any order, in fact) is the
 *   exact sum.  (The data-dependent form of docs/interval.md's exact64, whose integral inputs are the
 *   case L >= 0.)
 * Then D = er_convert(f64 -> d, S, direction, options): the exact value rounded once, as er_acc_round
 * rounds it (both are er_round of the same real number; S is normal, so ER_OPT_FTZ_IN cannot touch it).
 * An element whose S is zero (its sign comes from the terms: IEEE 754 6.3) or not finite (a NaN or an
 * infinite operand: S cannot become finite again) is left to the exact kernel, which skips the others.
 */

#define ER_FX_THREADS 256
enum { ER_FX_LSB_A, ER_FX_TOP_A, ER_FX_LSB_B, ER_FX_TOP_B, ER_FX_LSB_C, ER_FX_TOP_C, ER_FX_WIN };

ER_KFN int er_fx_ctz64(er_u64 x)
{
#if defined(__CUDA_ARCH__)
    return __ffsll((long long)x) - 1;
#else
    return __builtin_ctzll(x);
#endif
}

/* One packed operand of a tile: side 0 (A: [batch][row][p]), 1 (B: [batch][p][col]) or 2 (C:
 * [batch][row][col]); rows x cols per batch, nb batches out; the packed elements' batch stride xbs and
 * the scales' sbs (0: broadcast; either may be, the values then differ per batch through the other);
 * scales (A, B) with nblk blocks of `block`. */
typedef struct {
    const unsigned char *x, *s;
    int f, fs, side;
    er_i64 nb, rows, cols, nblk, block, xbs, sbs;
    er_u32 opts;
    double *out; /* the binary64 values, nb x rows x cols (NULL: C, window only) */
} er_fx_op;

/* Element e: its value into out[e], its window into lo/hi (finite nonzero values only). */
ER_KFN void er_fx_decode_one(const er_fx_op &O, er_i64 e, int *lo, int *hi)
{
    er_i64 per = O.rows * O.cols, bb = e / per, q = e % per, r = q / O.cols, c = q % O.cols;
    er_val v = er_val_flush_in(er_decode(O.f, er_ld_(O.x, O.f, bb * O.xbs + q)), O.opts);
    if (O.fs >= 0 && O.side != 2) {
        er_i64 sidx = O.side == 0 ? bb * O.sbs + r * O.nblk + c / O.block : bb * O.sbs + (r / O.block) * O.cols + c;
        v = er_val_scaled(v, er_decode(O.fs, (er_u64)O.s[sidx]));
    }
    if (O.out) O.out[e] = er_b_dbl(er_d_of_val(v));
    if ((v.cls == ER_CLASS_NORMAL || v.cls == ER_CLASS_SUBNORMAL) && v.sig) {
        int l = v.exp + er_fx_ctz64(v.sig), t = v.exp + 64 - (int)ER_CLZ64(v.sig);
        if (l < *lo) *lo = l;
        if (t > *hi) *hi = t;
    }
}

__global__ void __launch_bounds__(ER_FX_THREADS) er_fx_decode_kernel(er_fx_op O, int *win)
{
    __shared__ int slo[ER_FX_THREADS], shi[ER_FX_THREADS];
    er_i64 total = O.nb * O.rows * O.cols, stride = (er_i64)gridDim.x * blockDim.x;
    int lo = 0x7FFFFFFF, hi = -0x7FFFFFFF, t = (int)threadIdx.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) er_fx_decode_one(O, e, &lo, &hi);
    slo[t] = lo;
    shi[t] = hi;
    __syncthreads();
    for (int h = ER_FX_THREADS / 2; h > 0; h /= 2) {
        if (t < h) {
            if (slo[t + h] < slo[t]) slo[t] = slo[t + h];
            if (shi[t + h] > shi[t]) shi[t] = shi[t + h];
        }
        __syncthreads();
    }
    if (t == 0) { /* min and max: the same whatever the order of the blocks */
        atomicMin(&win[2 * O.side], slo[0]);
        atomicMax(&win[2 * O.side + 1], shi[0]);
    }
}

/* Element e of the tile after the chain: S + C, rounded once where it is finite and nonzero. */
ER_KFN void er_fx_finish_one(const er_cu_prm &prm, const er_cu_bufs &buf, const double *S, unsigned char *done,
                             er_i64 e)
{
    const er_i64 *P = prm.v;
    er_i64 nc = P[ER_MP_NC], nr = P[ER_MP_NR], j = e % nc, t = e / nc, i = t % nr, bb = t / nr;
    int fc = (int)P[ER_MP_FC];
    er_u32 opts = (er_u32)P[ER_MP_OPTS];
    double s = S[e];
    if (fc >= 0) {
        er_val c = er_val_flush_in(er_decode(fc, er_ld_(buf.c, fc, bb * P[ER_MP_C_BS] + i * nc + j)), opts);
        s = s + er_b_dbl(er_d_of_val(c)); /* exact (see above) */
    }
    if (er_b_finite(s) && s != 0.0) {
        buf.d[e] = er_convert(ER_FMT_F64, (er_i32)P[ER_MP_FD], er_b_bits(s), (er_i32)P[ER_MP_DIR], opts).bits;
        done[e] = 1;
    } else {
        done[e] = 0;
    }
}

__global__ void __launch_bounds__(ER_CUM_THREADS) er_fx_finish_kernel(er_cu_prm prm, er_cu_bufs buf, const double *S,
                                                                      unsigned char *done)
{
    er_i64 total = prm.v[ER_MP_TOTAL];
    er_i64 stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride)
        er_fx_finish_one(prm, buf, S, done, e);
}

/* ------------------------------------------------------------------------------------------------ */
/* Host side (opencl/er_opencl_mma.c, with CUDA's calls)                                              */

/* Buffers of a tile: the packed operands and outputs (staged on the host; host/er_tile.h's
 * ER_TB_A .. ER_TB_ODD, in its order), then the exact binary64 path's, which live on the device only
 * (F_DONE is read back to count the elements it computed). */
enum { B_A, B_B, B_SA, B_SB, B_C, B_D, B_LO, B_HI, B_ODD, F_AF, F_BF, F_S, F_DONE, F_WIN, NBUF };
#define NSTAGED (B_ODD + 1)

/* What the tiles are cut from. */
typedef struct {
    er_mma_args *args;
    er_cuda_job job;
    er_tiling T;              /* views, batch dimensions, the outputs wanted (host/er_tile.h) */
    int fx;                   /* the exact binary64 path may run (job.exact64, float mma, D only) */
} shape;

/* Bytes of each buffer of a tile of nbt batches, nr rows and nc columns (0 for a buffer not used). */
void tile_sizes(const shape *S, uint64_t nbt, uint64_t nr, uint64_t nc, uint64_t sz[NBUF])
{
    uint64_t k = (uint64_t)S->job.k, el = nbt * nr * nc;
    memset(sz, 0, NBUF * sizeof sz[0]);
    er_tile_sizes(&S->T, nbt, nr, nc, sz + B_A);
    if (S->fx) {
        sz[F_AF] = (S->T.a3 || S->T.sa3 ? nbt : 1) * nr * k * 8; /* A' differs per batch if A or its scales do */
        sz[F_BF] = (S->T.b3 || S->T.sb3 ? nbt : 1) * k * nc * 8;
        sz[F_S] = el * 8;
        sz[F_DONE] = el;
        sz[F_WIN] = ER_FX_WIN * sizeof(int);
    }
}

/* The memory of a tile: on the host (staged: i < hi_end) or on the device (everything). */
uint64_t tile_total(const shape *S, uint64_t nbt, uint64_t nr, uint64_t nc, int staged)
{
    uint64_t sz[NBUF], t = 0;
    tile_sizes(S, nbt, nr, nc, sz);
    for (int i = 0; i < (staged ? NSTAGED : NBUF); i++) t += sz[i];
    if (staged) t += sz[F_DONE];
    return t;
}

int tile_fits(const shape *S, uint64_t nbt, uint64_t nr, uint64_t nc, uint64_t host_limit, uint64_t dev_limit)
{
    return tile_total(S, nbt, nr, nc, 1) <= host_limit && tile_total(S, nbt, nr, nc, 0) <= dev_limit;
}

/* What a tile may take (the plan's er_tile_fits_fn): host_limit staged, dev_limit on the device. */
typedef struct {
    const shape *S;
    uint64_t host_limit, dev_limit;
} fit_ctx;

int fits_cb(const void *ctx, uint64_t nbt, uint64_t nr, uint64_t nc)
{
    const fit_ctx *f = (const fit_ctx *)ctx;
    return tile_fits(f->S, nbt, nr, nc, f->host_limit, f->dev_limit);
}

/* The tile (host/er_tile.h, as the OpenCL backend's): 0 if not even one element fits. */
int plan_tiles(const shape *S, uint64_t hl, uint64_t dl, uint64_t cap, int64_t *nbt, int64_t *nr, int64_t *nc)
{
    fit_ctx f;
    f.S = S;
    f.host_limit = hl;
    f.dev_limit = dl;
    return er_tile_plan((uint64_t)S->job.batch, (uint64_t)S->job.m, (uint64_t)S->job.n, cap, fits_cb, &f, nbt, nr, nc);
}

#define fail(a, ...) er_msgf((a)->msg, (a)->msg_size, __VA_ARGS__)

/* One run: the host staging, and the buffers where the kernels read them (device memory, or host memory
 * in the host pass). */
typedef struct {
    er_cum_dev dev;
    unsigned char *host[NBUF];
    unsigned char *buf[NBUF];
} runner;

void runner_release(runner *r)
{
    for (int i = 0; i < NBUF; i++) {
        free(r->host[i]);
        er_cum_free(&r->dev, r->buf[i]);
        r->host[i] = r->buf[i] = NULL;
    }
}

/* The smallest g with 2^g >= x (x >= 1). */
int ceil_log2(int64_t x)
{
    int g = 0;
    while (g < 62 && ((int64_t)1 << g) < x) g++;
    return g;
}

/* The exact binary64 path on a tile (see above): *fits = 0 when its window is too wide (nothing
 * written), else D of every element it could compute and F_DONE marking them. */
int run_fx(runner *r, shape *S, const er_cu_prm &prm, const er_cu_bufs &buf, int64_t nbt, int64_t nr, int64_t nc,
           int *fits)
{
    er_mma_args *A = S->args;
    const er_cuda_job *J = &S->job;
    const er_cum_dev *d = &r->dev;
    char *msg = A->msg;
    size_t ms = A->msg_size;
    int win[ER_FX_WIN] = {0x7FFFFFFF, -0x7FFFFFFF, 0x7FFFFFFF, -0x7FFFFFFF, 0x7FFFFFFF, -0x7FFFFFFF};
    int *dwin = (int *)r->buf[F_WIN];
    int64_t el = nbt * nr * nc, k = J->k;
    int st;
    er_fx_op ops[3];
    int nops = J->has_c ? 3 : 2;
    *fits = 0;
    for (int q = 0; q < 3; q++) memset(&ops[q], 0, sizeof ops[q]);
    ops[0].x = buf.a;
    ops[0].s = buf.sa;
    ops[0].f = A->a->format;
    ops[0].side = 0;
    ops[0].nb = S->T.a3 || S->T.sa3 ? nbt : 1;
    ops[0].rows = nr;
    ops[0].cols = k;
    ops[0].xbs = S->T.a3 ? nr * k : 0;
    ops[0].sbs = S->T.sa3 ? nr * J->nblocks : 0;
    ops[0].out = (double *)r->buf[F_AF];
    ops[1].x = buf.b;
    ops[1].s = buf.sb;
    ops[1].f = A->b->format;
    ops[1].side = 1;
    ops[1].nb = S->T.b3 || S->T.sb3 ? nbt : 1;
    ops[1].rows = k;
    ops[1].cols = nc;
    ops[1].xbs = S->T.b3 ? k * nc : 0;
    ops[1].sbs = S->T.sb3 ? J->nblocks * nc : 0;
    ops[1].out = (double *)r->buf[F_BF];
    if (J->has_c) {
        ops[2].x = buf.c;
        ops[2].f = A->c->format;
        ops[2].side = 2;
        ops[2].nb = S->T.c3 ? nbt : 1;
        ops[2].rows = nr;
        ops[2].cols = nc;
        ops[2].xbs = nr * nc;
    }
    for (int q = 0; q < 3; q++) {
        ops[q].fs = q < 2 && J->scaled ? A->a_scale->format : -1;
        ops[q].nblk = J->nblocks;
        ops[q].block = J->scaled ? A->block : 1;
        ops[q].opts = A->opts;
    }
    if ((st = er_cum_copy(d, 1, dwin, win, sizeof win, msg, ms)) != ER_OK) return st;
    for (int q = 0; q < nops; q++) {
        uint64_t cnt = (uint64_t)(ops[q].nb * ops[q].rows * ops[q].cols);
        if (!cnt) continue;
        if (d->device >= 0) {
            er_fx_decode_kernel<<<er_cum_blocks(cnt, ER_FX_THREADS), ER_FX_THREADS>>>(ops[q], dwin);
            if ((st = er_cum_sync(d, "er_fx_decode_kernel", msg, ms)) != ER_OK) return st;
        } else {
            for (uint64_t e = 0; e < cnt; e++)
                er_fx_decode_one(ops[q], (er_i64)e, &dwin[2 * ops[q].side], &dwin[2 * ops[q].side + 1]);
        }
    }
    if ((st = er_cum_copy(d, 0, dwin, win, sizeof win, msg, ms)) != ER_OK) return st;
    {
        /* the window of every term: L, Tp, and g for k terms (+ C) */
        int64_t L, Tp, g = ceil_log2(k + (J->has_c ? 1 : 0));
        if (win[ER_FX_LSB_A] > win[ER_FX_TOP_A] || win[ER_FX_LSB_B] > win[ER_FX_TOP_B] || k == 0)
            return ER_OK; /* no finite nonzero product: every sum is zero or not finite */
        L = (int64_t)win[ER_FX_LSB_A] + win[ER_FX_LSB_B];
        Tp = (int64_t)win[ER_FX_TOP_A] + win[ER_FX_TOP_B];
        if (win[ER_FX_LSB_C] <= win[ER_FX_TOP_C]) {
            if (win[ER_FX_LSB_C] < L) L = win[ER_FX_LSB_C];
            if (win[ER_FX_TOP_C] > Tp) Tp = win[ER_FX_TOP_C];
        }
        if (Tp + g - L > 53 || L < -1022 || Tp + g > 1023) return ER_OK;
    }
    {
        er_ch_args C;
        memset(&C, 0, sizeof C);
        C.a = (const double *)r->buf[F_AF];
        C.lda = k;
        C.a_bs = ops[0].nb > 1 ? nr * k : 0;
        C.b = (const double *)r->buf[F_BF];
        C.ldb = nc;
        C.b_bs = ops[1].nb > 1 ? k * nc : 0;
        C.s = (double *)r->buf[F_S];
        C.ldo = nc;
        C.o_bs = nr * nc;
        C.m = nr;
        C.n = nc;
        C.k = k;
        if ((st = er_ch_run<1>(d, C, nbt, msg, ms)) != ER_OK) return st;
    }
    if (d->device >= 0) {
        er_fx_finish_kernel<<<er_cum_blocks((uint64_t)el, ER_CUM_THREADS), ER_CUM_THREADS>>>(
            prm, buf, (const double *)r->buf[F_S], r->buf[F_DONE]);
        if ((st = er_cum_sync(d, "er_fx_finish_kernel", msg, ms)) != ER_OK) return st;
    } else {
        for (int64_t e = 0; e < el; e++) er_fx_finish_one(prm, buf, (const double *)r->buf[F_S], r->buf[F_DONE], e);
    }
    *fits = 1;
    return ER_OK;
}

/* One tile: pack, upload, (the exact binary64 path,) launch (or the host loop), download, scatter. */
int run_tile(runner *r, shape *S, int64_t b0, int64_t nbt, int64_t i0, int64_t nr, int64_t j0, int64_t nc,
             int64_t *wrapped, int64_t *fx_done)
{
    er_mma_args *A = S->args;
    const er_cuda_job *J = &S->job;
    const er_cum_dev *dv = &r->dev;
    uint64_t sz[NBUF];
    er_cu_prm prm;
    er_cu_bufs buf;
    int64_t el = nbt * nr * nc;
    int st, fits = 0;
    tile_sizes(S, (uint64_t)nbt, (uint64_t)nr, (uint64_t)nc, sz);

    er_tile_params(&S->T, nbt, nr, nc, prm.v);
    er_tile_pack(&S->T, r->host + B_A, b0, nbt, i0, nr, j0, nc);
    for (int i = B_A; i <= B_C; i++)
        if ((st = er_cum_copy(dv, 1, r->buf[i], r->host[i], (size_t)sz[i], A->msg, A->msg_size)) != ER_OK) return st;

    buf.a = r->buf[B_A];
    buf.b = r->buf[B_B];
    buf.sa = r->buf[B_SA];
    buf.sb = r->buf[B_SB];
    buf.c = r->buf[B_C];
    buf.d = (er_u64 *)r->buf[B_D];
    buf.lo = (er_u64 *)r->buf[B_LO];
    buf.hi = (er_u64 *)r->buf[B_HI];
    buf.odd = (er_u64 *)r->buf[B_ODD];
    buf.skip = NULL;
    /* the exact integer slices (cuda/er_cuda_slices.cu) first, then the exact binary64 path */
    if (S->fx && (st = er_cus_run_params(prm.v, dv->device, buf.a, buf.b, buf.c, buf.d, r->buf[F_DONE], &fits, A->msg,
                                         A->msg_size)) != ER_OK)
        return st;
    if (S->fx && !fits && (st = run_fx(r, S, prm, buf, nbt, nr, nc, &fits)) != ER_OK) return st;
    if (fits) {
        buf.skip = r->buf[F_DONE];
        if ((st = er_cum_copy(dv, 0, r->buf[F_DONE], r->host[F_DONE], (size_t)el, A->msg, A->msg_size)) != ER_OK)
            return st;
        for (int64_t x = 0; x < el; x++) *fx_done += r->host[F_DONE][x];
    }

    if (dv->device < 0) {
        /* The host pass: the kernel's per-element function, compiled for the host, element by element. */
        for (int64_t x = 0; x < el; x++) {
            if (J->normal) er_cu_normal_element(prm, buf, x);
            else if (!buf.skip || !buf.skip[x]) er_cu_element(prm, buf, x);
        }
    } else {
        unsigned blocks = er_cum_blocks((uint64_t)el, ER_CUM_THREADS);
        if (J->normal) er_cuda_normal_kernel_<<<blocks, ER_CUM_THREADS>>>(prm, buf);
        else er_cuda_mma_kernel_<<<blocks, ER_CUM_THREADS>>>(prm, buf);
        if ((st = er_cum_sync(dv, J->normal ? "er_cuda_normal_kernel_" : "er_cuda_mma_kernel_", A->msg, A->msg_size)) !=
            ER_OK)
            return st;
    }
    for (int i = B_D; i <= B_ODD; i++)
        if ((st = er_cum_copy(dv, 0, r->buf[i], r->host[i], (size_t)sz[i], A->msg, A->msg_size)) != ER_OK) return st;

    /* Scatter through the output tensors' strides. */
    er_tile_scatter(&S->T, r->host + B_A, b0, nbt, i0, nr, j0, nc, wrapped);
    return ER_OK;
}

/* The engine or normal() (job->normal), on the device (host == 0) or through the host pass (host == 1). */
int run(er_mma_args *args, const er_cuda_job *job, int host)
{
    shape S;
    runner r;
    int st = ER_OK, planned;
    int64_t wrapped = 0, fx_done = 0, nbt = 1, nr = 1, nc = 1;
    uint64_t host_limit = ER_CUM_HOST_LIMIT, dev_limit = UINT64_MAX, cap;
    memset(&S, 0, sizeof S);
    memset(&r, 0, sizeof r);
    r.dev.device = r.dev.prev = -1;
    if (!args) return ER_EINVAL;
    if (args->msg && args->msg_size) args->msg[0] = '\0';
    if (!job || job->abi != ER_CUDA_BACKEND_ABI || job->size != (int)sizeof(er_cuda_job))
        return fail(args, ER_EUNSUPPORTED, "the CUDA backend module (ABI %d) does not match libexactref",
                    ER_CUDA_BACKEND_ABI);
    S.args = args;
    S.job = *job;
    er_tiling_init(&S.T, args, job->kind, job->scaled, job->has_c, job->acc_lo, job->acc_nd, job->batch, job->m,
                   job->n, job->k, job->nblocks, job->normal, job->compute, job->ftz);
    S.fx = job->exact64 && !job->kind && !job->normal && S.T.want == ER_MW_D;

    if (job->m == 0 || job->n == 0 || job->batch == 0) goto done; /* nothing to compute: no device needed */
    if ((st = er_cum_open(&r.dev, args->device, host, &dev_limit, args->msg, args->msg_size)) != ER_OK) goto done;
    if (r.dev.device < 0) dev_limit = ER_CUM_HOST_LIMIT; /* the host pass's "device" buffers are host memory */
    cap = er_tile_env_cap("EXACTREF_CUDA_MAX_CHUNK");
    if (!cap) cap = UINT64_MAX;
    planned = plan_tiles(&S, host_limit, dev_limit, cap, &nbt, &nr, &nc);
    if (!planned && S.fx) {
        S.fx = 0; /* the exact binary64 path's buffers do not fit: the long accumulator alone */
        planned = plan_tiles(&S, host_limit, dev_limit, cap, &nbt, &nr, &nc);
    }
    if (!planned) {
        st = fail(args, ER_EDEVICE,
                  "CUDA: one element's operands (k = %lld) do not fit the limit of %llu bytes per tile; use the CPU "
                  "backend",
                  (long long)job->k, (unsigned long long)(host_limit < dev_limit ? host_limit : dev_limit));
        goto done;
    }
    {
        uint64_t sz[NBUF];
        tile_sizes(&S, (uint64_t)nbt, (uint64_t)nr, (uint64_t)nc, sz);
        for (int i = 0; i < NBUF; i++) {
            if (!sz[i]) continue; /* unused (or empty: k = 0): the kernel gets a NULL pointer */
            if (i < NSTAGED || i == F_DONE) {
                r.host[i] = (unsigned char *)malloc((size_t)sz[i]);
                if (!r.host[i]) {
                    st = fail(args, ER_ENOMEM, "CUDA: out of host memory for a tile of %llu bytes",
                              (unsigned long long)sz[i]);
                    goto done;
                }
            }
            if ((st = er_cum_alloc(&r.dev, (void **)&r.buf[i], sz[i], args->msg, args->msg_size)) != ER_OK) goto done;
        }
    }
    for (int64_t b0 = 0; b0 < job->batch; b0 += nbt) {
        int64_t tb = job->batch - b0 < nbt ? job->batch - b0 : nbt;
        for (int64_t i0 = 0; i0 < job->m; i0 += nr)
            for (int64_t j0 = 0; j0 < job->n; j0 += nc) {
                int64_t tr_ = job->m - i0 < nr ? job->m - i0 : nr, tc_ = job->n - j0 < nc ? job->n - j0 : nc;
                if ((st = run_tile(&r, &S, b0, tb, i0, tr_, j0, tc_, &wrapped, &fx_done)) != ER_OK) goto done;
            }
    }
done:
    runner_release(&r);
    er_cum_close(&r.dev);
    if (args->stats) {
        int64_t el = st == ER_OK ? job->batch * job->m * job->n : 0;
        memset(args->stats, 0, sizeof *args->stats);
        args->stats->elements = el;
        args->stats->exact_f64 = st == ER_OK ? fx_done : 0;
        args->stats->exact_path = job->kind ? 0 : el - args->stats->exact_f64; /* mmai: 64-bit integer sums */
        args->stats->wrapped = wrapped;
        args->stats->threads = 0;
    }
    return st;
}

} /* namespace */

ER_CUM_EXPORT int er_cuda_backend_abi(void) { return ER_CUDA_BACKEND_ABI; }

ER_CUM_EXPORT int er_cuda_backend_device_count(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the (non-sticky) error for later calls */
        return 0;
    }
    return count > 0 ? count : 0;
}

/* The problem and the job as the loader of this ABI made them, then the run. */
static int enter(const er_problem *P, const er_cuda_job *job, int normal, int host)
{
    er_mma_args a;
    if (!P || !P->args || !job) return ER_EINVAL;
    if (job->abi != ER_CUDA_BACKEND_ABI || job->size != (int)sizeof(er_cuda_job) ||
        job->problem_size != (int)sizeof(er_problem))
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "CUDA backend: the job is not of ABI %d (internal)",
                       ER_CUDA_BACKEND_ABI);
    a = er_problem_args(P); /* the module's own arguments: the problem's outputs, device, message, counts */
    if (job->normal != normal)
        return fail(&a, ER_EINVAL, "CUDA backend: the job is not a%s (internal)", normal ? " normal()" : "n mma");
    return run(&a, job, host);
}

ER_CUM_EXPORT int er_cuda_backend_mma(const er_problem *P, const er_cuda_job *job) { return enter(P, job, 0, 0); }

ER_CUM_EXPORT int er_cuda_backend_host_mma(const er_problem *P, const er_cuda_job *job) { return enter(P, job, 0, 1); }

ER_CUM_EXPORT int er_cuda_backend_normal(const er_problem *P, const er_cuda_job *job) { return enter(P, job, 1, 0); }

ER_CUM_EXPORT int er_cuda_backend_host_normal(const er_problem *P, const er_cuda_job *job)
{
    return enter(P, job, 1, 1);
}
