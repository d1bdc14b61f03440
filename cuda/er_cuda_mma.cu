/* er_cuda_mma.cu: the exact engine as a CUDA kernel (mma, block-scaled mma, mmai, the enclosures
 * lo/hi/odd), and its host side: the CUDA backend module libexactref_cuda.so.
 *
 * The kernel is opencl/kernels/mma.cl, transcribed: one thread per element of D, each with its own long
 * accumulator (er_acc, the shared core of include/exactref/core/er_acc.h) in private (local) memory; it
 * adds every exact product of its row of A and column of B, and C, then rounds once: the same integer
 * code, in the same order, as the CPU engine's exact path (cpu/cpu_mma.c), hence the same bits.  Nothing
 * is shared between threads: no atomics, no shared memory, no barriers; every output element is written
 * by exactly one thread.  The parameter block has the OpenCL kernel's layout (kernels/mma_params.h).
 * There is no floating point in the kernel; nvcc runs with --fmad=false all the same.
 *
 * The per-element function is __host__ __device__: er_cuda_backend_host_mma runs the very same function,
 * compiled by nvcc for the host, in place of the launch (the tests' host pass, which needs no GPU).
 *
 * Host side (as opencl/er_opencl_mma.c): the loader (src/cuda_loader.c) has validated the problem with
 * er_engine_validate and passes what it found (er_cuda_job: the accumulator's window, the shapes); the
 * output is cut into tiles (a run of whole batches when they fit, else a block of rows and columns of
 * one batch), each operand of a tile packed into a contiguous buffer in its storage size, one thread
 * launched per element, the 64-bit results scattered back through the output tensors' strides.  A tile
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

#include "er_cuda_backend.h"
#include "exactref/core/er_acc.h"
#include "exactref/exactref.h"
#include "mma_params.h" /* opencl/kernels/: the parameter block's layout, shared with the OpenCL kernel */

#if !defined(__CUDACC__)
#error "er_cuda_mma.cu is compiled by nvcc"
#endif

#define ER_CUM_EXPORT extern "C" __attribute__((visibility("default")))
#define ER_CUM_THREADS 128                        /* threads per block */
#define ER_CUM_HOST_LIMIT ((uint64_t)1 << 30)     /* at most this much staged on the host per tile */

namespace {

/* ------------------------------------------------------------------------------------------------ */
/* The kernel (opencl/kernels/mma.cl, function for function)                                          */

typedef struct {
    long long v[ER_MP_COUNT];
} er_cu_prm;

/* The packed buffers of a tile (NULL where unused). */
typedef struct {
    const unsigned char *a, *b, *sa, *sb, *c;
    er_u64 *d, *lo, *hi, *odd;
} er_cu_bufs;

#define ER_KFN __host__ __device__ __forceinline__

/* Storage bytes of a pattern of format f (as er_format_info.storage_bytes: 1, 2, 4 or 8). */
ER_KFN er_i64 er_bytes_(int f)
{
    int w = er_fmt_get(f).width;
    return w <= 8 ? 1 : w <= 16 ? 2 : w <= 32 ? 4 : 8;
}

/* Pattern idx of a packed operand of format f (little-endian, in its storage size, as the host packs). */
ER_KFN er_u64 er_ld_(const unsigned char *p, int f, er_i64 idx)
{
    er_i64 bytes = er_bytes_(f);
#if defined(__CUDA_ARCH__)
    if (bytes == 1) return (er_u64)p[idx];
    if (bytes == 2) return (er_u64)((const er_u16 *)p)[idx];
    if (bytes == 4) return (er_u64)((const er_u32 *)p)[idx];
    return ((const er_u64 *)p)[idx];
#else
    if (bytes == 1) return (er_u64)p[idx];
    if (bytes == 2) { er_u16 x; memcpy(&x, p + idx * 2, 2); return x; }
    if (bytes == 4) { er_u32 x; memcpy(&x, p + idx * 4, 4); return x; }
    { er_u64 x; memcpy(&x, p + idx * 8, 8); return x; }
#endif
}

/* Operand flushing, scaling and accumulator copies are the shared core's (er_acc.h). */

/* The signed value of an integer pattern (mmai: i8, u8, i32). */
ER_KFN er_i64 er_int_val_(int f, er_u64 bits)
{
    er_val v = er_decode(f, bits);
    return v.sign ? -(er_i64)v.sig : (er_i64)v.sig;
}

/* Add the k products of a's row (from abase, step 1) and b's column (from bbase, step nc). */
ER_KFN void er_sum_(er_acc *acc, int fa, int fb, const unsigned char *a, er_i64 abase, const unsigned char *b,
                    er_i64 bbase, er_i64 nc, er_i64 k, er_u32 opts)
{
    for (er_i64 p = 0; p < k; p++) {
        er_val x = er_val_flush_in(er_decode(fa, er_ld_(a, fa, abase + p)), opts);
        er_val y = er_val_flush_in(er_decode(fb, er_ld_(b, fb, bbase + p * nc)), opts);
        er_acc_add_product(acc, x, y);
    }
}

/* The same, block-scaled: term p is (a[p] a_scale[p / block]) (b[p] b_scale[p / block]); the scales'
 * rows start at sabase (step 1) and sbbase (step nc). */
ER_KFN void er_sum_scaled_(er_acc *acc, int fa, int fb, int fs, const unsigned char *a, er_i64 abase,
                           const unsigned char *b, er_i64 bbase, const unsigned char *sa, er_i64 sabase,
                           const unsigned char *sb, er_i64 sbbase, er_i64 block, er_i64 nc, er_i64 k, er_u32 opts)
{
    er_i64 q = 0, r = 0;
    er_val xs = er_decode(fs, 0u), ys = xs; /* set at p = 0 */
    for (er_i64 p = 0; p < k; p++) {
        er_val x = er_val_flush_in(er_decode(fa, er_ld_(a, fa, abase + p)), opts);
        er_val y = er_val_flush_in(er_decode(fb, er_ld_(b, fb, bbase + p * nc)), opts);
        if (r == 0) { /* a new block: its two scales (never flushed, as in the CPU engine) */
            xs = er_decode(fs, (er_u64)sa[sabase + q]);
            ys = er_decode(fs, (er_u64)sb[sbbase + q * nc]);
        }
        er_acc_add_product(acc, er_val_scaled(x, xs), er_val_scaled(y, ys));
        if (++r == block) {
            r = 0;
            q++;
        }
    }
}

/* mmai: the exact sum of the k products of i8/u8 patterns (below 2^16 each, k <= 2^24: no overflow). */
ER_KFN er_i64 er_sum_int_(int fa, int fb, const unsigned char *a, er_i64 abase, const unsigned char *b, er_i64 bbase,
                          er_i64 nc, er_i64 k)
{
    er_i64 s = 0;
    for (er_i64 p = 0; p < k; p++)
        s += er_int_val_(fa, er_ld_(a, fa, abase + p)) * er_int_val_(fb, er_ld_(b, fb, bbase + p * nc));
    return s;
}

#define ER_F_(x) ER_FMT_##x
#define ER_PAIR_(x, y) (fa == ER_F_(x) && fb == ER_F_(y))
#define ER_TRIPLE_(x, y, z) (fa == ER_F_(x) && fb == ER_F_(y) && fs == ER_F_(z))

/*
 * Element e of a tile: the kernel's body (mma.cl: er_mma_exact).  The summation loop is specialised
 * (compiled with constant formats, so that decoding is a few instructions) for the common format pairs,
 * and generic for every other pair: the same core functions either way, so the same bits.
 */
ER_KFN void er_cu_element(const er_cu_prm &prm, const er_cu_bufs &buf, er_i64 e)
{
    const long long *P = prm.v;
    er_i64 nc = P[ER_MP_NC], nr = P[ER_MP_NR], k = P[ER_MP_K];
    er_i64 j = e % nc, t = e / nc, i = t % nr, bb = t / nr;
    int fa = (int)P[ER_MP_FA], fb = (int)P[ER_MP_FB], fc = (int)P[ER_MP_FC];
    er_u32 opts = (er_u32)P[ER_MP_OPTS];
    er_i64 abase = bb * P[ER_MP_A_BS] + i * k;
    er_i64 bbase = bb * P[ER_MP_B_BS] + j;
    er_i64 cidx = bb * P[ER_MP_C_BS] + i * nc + j;
    const unsigned char *a = buf.a, *b = buf.b, *c = buf.c;

    if (P[ER_MP_KIND] == 1) {
        /* mmai: the exact sum; the host wraps it into i32 and counts the elements outside that range. */
        er_i64 s;
        if (ER_PAIR_(I8, I8)) s = er_sum_int_(ER_FMT_I8, ER_FMT_I8, a, abase, b, bbase, nc, k);
        else if (ER_PAIR_(I8, U8)) s = er_sum_int_(ER_FMT_I8, ER_FMT_U8, a, abase, b, bbase, nc, k);
        else if (ER_PAIR_(U8, I8)) s = er_sum_int_(ER_FMT_U8, ER_FMT_I8, a, abase, b, bbase, nc, k);
        else s = er_sum_int_(fa, fb, a, abase, b, bbase, nc, k);
        if (fc >= 0) s += er_int_val_(fc, er_ld_(c, fc, cidx));
        buf.d[e] = (er_u64)s;
        return;
    }

    {
        er_acc acc;
        er_i64 want = P[ER_MP_WANT];
        int fs = (int)P[ER_MP_FS];
        er_acc_init(&acc, (er_i32)P[ER_MP_ACC_LO], (er_i32)P[ER_MP_ACC_ND]);
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
            er_i64 block = P[ER_MP_BLOCK], nblk = P[ER_MP_NBLK];
            er_i64 sabase = bb * P[ER_MP_SA_BS] + i * nblk, sbbase = bb * P[ER_MP_SB_BS] + j;
#define ER_SUM_(x, y, z) \
    er_sum_scaled_(&acc, ER_F_(x), ER_F_(y), ER_F_(z), a, abase, b, bbase, buf.sa, sabase, buf.sb, sbbase, block, nc, k, opts)
            if (ER_TRIPLE_(F8E4M3FN, F8E4M3FN, F8E8M0FNU)) ER_SUM_(F8E4M3FN, F8E4M3FN, F8E8M0FNU);
            else if (ER_TRIPLE_(F8E5M2, F8E5M2, F8E8M0FNU)) ER_SUM_(F8E5M2, F8E5M2, F8E8M0FNU);
            else if (ER_TRIPLE_(F4E2M1FN, F4E2M1FN, F8E8M0FNU)) ER_SUM_(F4E2M1FN, F4E2M1FN, F8E8M0FNU);
            else if (ER_TRIPLE_(F4E2M1FN, F4E2M1FN, F8E4M3FN)) ER_SUM_(F4E2M1FN, F4E2M1FN, F8E4M3FN);
            else er_sum_scaled_(&acc, fa, fb, fs, a, abase, b, bbase, buf.sa, sabase, buf.sb, sbbase, block, nc, k,
                                opts);
#undef ER_SUM_
        }
        if (fc >= 0) er_acc_add_val(&acc, er_val_flush_in(er_decode(fc, er_ld_(c, fc, cidx)), opts));
        if (want & (ER_MW_LO | ER_MW_HI | ER_MW_ODD)) {
            er_acc tmp;
            if (want & ER_MW_LO) {
                er_acc_copy(&tmp, &acc);
                buf.lo[e] = er_acc_round(&tmp, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0u).bits;
            }
            if (want & ER_MW_HI) {
                er_acc_copy(&tmp, &acc);
                buf.hi[e] = er_acc_round(&tmp, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits;
            }
            if (want & ER_MW_ODD) {
                er_acc_copy(&tmp, &acc);
                buf.odd[e] = er_acc_round(&tmp, ER_FMT_F64, ER_RND_ODD, 0u).bits;
            }
        }
        if (want & ER_MW_D)
            buf.d[e] = er_acc_round(&acc, (er_i32)P[ER_MP_FD], (er_i32)P[ER_MP_DIR], opts).bits;
    }
}

__global__ void __launch_bounds__(ER_CUM_THREADS) er_cuda_mma_kernel_(er_cu_prm prm, er_cu_bufs buf)
{
    er_i64 total = prm.v[ER_MP_TOTAL];
    er_i64 stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride)
        er_cu_element(prm, buf, e);
}

/* ------------------------------------------------------------------------------------------------ */
/* Host side (opencl/er_opencl_mma.c, with CUDA's calls)                                              */

/* Buffers of a tile. */
enum { B_A, B_B, B_SA, B_SB, B_C, B_D, B_LO, B_HI, B_ODD, NBUF };

/* A view of one operand (cpu_engine.h's view, without libexactref's er_format_get_info). */
typedef struct {
    const unsigned char *data;
    int fmt, bytes;
    int64_t sb, s0, s1; /* batch stride (0: broadcast), row stride, column stride; in elements */
} view;

int sbytes(int f) { return (int)er_bytes_(f); }

view make_view(const er_tensor *t)
{
    view v;
    v.data = (const unsigned char *)t->data;
    v.fmt = t->format;
    v.bytes = sbytes(t->format);
    v.sb = t->ndim == 3 ? t->strides[0] : 0;
    v.s0 = t->strides[t->ndim - 2];
    v.s1 = t->strides[t->ndim - 1];
    return v;
}

uint64_t load(const view *v, int64_t b, int64_t i, int64_t j)
{
    const unsigned char *p = v->data + (size_t)(b * v->sb + i * v->s0 + j * v->s1) * (size_t)v->bytes;
    uint64_t x = 0;
    memcpy(&x, p, (size_t)v->bytes); /* little-endian hosts only, as the CPU engine */
    return x;
}

void store(er_tensor *t, int64_t b, int64_t i, int64_t j, uint64_t x, int bytes)
{
    int64_t sb = t->ndim == 3 ? t->strides[0] : 0;
    unsigned char *p = (unsigned char *)t->data +
                       (size_t)(b * sb + i * t->strides[t->ndim - 2] + j * t->strides[t->ndim - 1]) * (size_t)bytes;
    memcpy(p, &x, (size_t)bytes);
}

/* Store the low `bytes` bytes of x at element idx of a packed buffer. */
void put(unsigned char *buf, int bytes, uint64_t idx, uint64_t x) { memcpy(buf + idx * (uint64_t)bytes, &x, (size_t)bytes); }

/* Rows [i0, i0+nr) x columns [j0, j0+nc) of batches [b0, b0+nb) of view v into dst, row-major. */
void pack(unsigned char *dst, const view *v, int64_t b0, int64_t nb, int64_t i0, int64_t nr, int64_t j0, int64_t nc)
{
    uint64_t o = 0;
    for (int64_t b = b0; b < b0 + nb; b++)
        for (int64_t i = i0; i < i0 + nr; i++) {
            if (v->s1 == 1 && nc > 0) {
                const unsigned char *src = v->data + (size_t)(b * v->sb + i * v->s0 + j0) * (size_t)v->bytes;
                memcpy(dst + o * (uint64_t)v->bytes, src, (size_t)nc * (size_t)v->bytes);
                o += (uint64_t)nc;
            } else {
                for (int64_t j = j0; j < j0 + nc; j++) put(dst, v->bytes, o++, load(v, b, i, j));
            }
        }
}

/* What the tiles are cut from. */
typedef struct {
    er_mma_args *args;
    er_cuda_job job;
    view a, b, c, sa, sb;
    int a3, b3, c3, sa3, sb3; /* operands with their own batch dimension (else broadcast) */
    int want;                 /* ER_MW_*: the outputs, 64 bits each per element */
} shape;

/* Bytes of each buffer of a tile of nbt batches, nr rows and nc columns (0 for a buffer not used). */
void tile_sizes(const shape *S, uint64_t nbt, uint64_t nr, uint64_t nc, uint64_t sz[NBUF])
{
    uint64_t k = (uint64_t)S->job.k, nblk = (uint64_t)S->job.nblocks, el = nbt * nr * nc;
    memset(sz, 0, NBUF * sizeof sz[0]);
    sz[B_A] = (S->a3 ? nbt : 1) * nr * k * (uint64_t)S->a.bytes;
    sz[B_B] = (S->b3 ? nbt : 1) * k * nc * (uint64_t)S->b.bytes;
    if (S->job.scaled) {
        sz[B_SA] = (S->sa3 ? nbt : 1) * nr * nblk;
        sz[B_SB] = (S->sb3 ? nbt : 1) * nblk * nc;
    }
    if (S->job.has_c) sz[B_C] = (S->c3 ? nbt : 1) * nr * nc * (uint64_t)S->c.bytes;
    sz[B_D] = S->want & ER_MW_D ? el * 8 : 0;
    sz[B_LO] = S->want & ER_MW_LO ? el * 8 : 0;
    sz[B_HI] = S->want & ER_MW_HI ? el * 8 : 0;
    sz[B_ODD] = S->want & ER_MW_ODD ? el * 8 : 0;
}

uint64_t tile_total(const shape *S, uint64_t nbt, uint64_t nr, uint64_t nc)
{
    uint64_t sz[NBUF], t = 0;
    tile_sizes(S, nbt, nr, nc, sz);
    for (int i = 0; i < NBUF; i++) t += sz[i];
    return t;
}

/* The tile (as the OpenCL backend): as many whole batches as fit (limit bytes, cap elements), else one
 * batch's rows nr and columns nc: the columns halved until one row fits, then as many rows as fit.
 * 0 if not even one element fits. */
int plan_tiles(const shape *S, uint64_t limit, uint64_t cap, int64_t *nbt, int64_t *nr, int64_t *nc)
{
    uint64_t m = (uint64_t)S->job.m, n = (uint64_t)S->job.n, B = (uint64_t)S->job.batch;
    if (m * n <= cap && tile_total(S, 1, m, n) <= limit) {
        uint64_t lo = 1, hi = B;
        if (hi > cap / (m * n)) hi = cap / (m * n);
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            if (tile_total(S, mid, m, n) <= limit) lo = mid; else hi = mid - 1;
        }
        *nbt = (int64_t)lo;
        *nr = (int64_t)m;
        *nc = (int64_t)n;
        return 1;
    }
    uint64_t c = n < cap ? n : cap, r;
    while (c > 1 && tile_total(S, 1, 1, c) > limit) c = (c + 1) / 2;
    if (tile_total(S, 1, 1, c) > limit) return 0;
    {
        uint64_t lo = 1, hi = m < cap / c ? m : cap / c;
        if (hi < 1) hi = 1;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            if (tile_total(S, 1, mid, c) <= limit) lo = mid; else hi = mid - 1;
        }
        r = lo;
    }
    *nbt = 1;
    *nr = (int64_t)r;
    *nc = (int64_t)c;
    return 1;
}

int fail(er_mma_args *a, int st, const char *fmt, ...)
{
    if (a->msg && a->msg_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->msg, a->msg_size, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* Errors that mean "no usable CUDA here" rather than "the device failed". */
bool is_nodevice(cudaError_t e)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary ||
           e == cudaErrorDevicesUnavailable || e == cudaErrorCallRequiresNewerDriver ||
           e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice;
}

int cuda_fail(er_mma_args *a, cudaError_t e, const char *what)
{
    int st = fail(a, is_nodevice(e) ? ER_ENODEVICE : ER_EDEVICE, "CUDA %s: %s: %s", what, cudaGetErrorName(e),
                  cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear a non-sticky error; a sticky one stays with the context */
    return st;
}

/* EXACTREF_CUDA_MAX_CHUNK: at most this many elements of D per tile (0: no cap). */
uint64_t env_cap(void)
{
    const char *env = getenv("EXACTREF_CUDA_MAX_CHUNK");
    if (env && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (end != env && !*end && v > 0) return (uint64_t)v;
    }
    return 0;
}

/* One run: the host staging, and on the device its buffers (device == 0: the host pass). */
typedef struct {
    int device;
    unsigned char *host[NBUF];
    unsigned char *dev[NBUF];
} runner;

void runner_release(runner *r)
{
    for (int i = 0; i < NBUF; i++) {
        free(r->host[i]);
        if (r->dev[i]) cudaFree(r->dev[i]);
    }
    memset(r, 0, sizeof *r);
}

/* One tile: pack, (upload, launch, download | the host loop), scatter. */
int run_tile(runner *r, shape *S, int64_t b0, int64_t nbt, int64_t i0, int64_t nr, int64_t j0, int64_t nc,
             int64_t *wrapped)
{
    er_mma_args *A = S->args;
    const er_cuda_job *J = &S->job;
    uint64_t sz[NBUF];
    er_cu_prm prm;
    er_cu_bufs buf;
    int64_t el = nbt * nr * nc;
    long long *p = prm.v;
    cudaError_t e;
    tile_sizes(S, (uint64_t)nbt, (uint64_t)nr, (uint64_t)nc, sz);

    memset(&prm, 0, sizeof prm);
    p[ER_MP_KIND] = J->kind;
    p[ER_MP_FA] = A->a->format;
    p[ER_MP_FB] = A->b->format;
    p[ER_MP_FC] = J->has_c ? A->c->format : -1;
    p[ER_MP_FS] = J->scaled ? A->a_scale->format : -1;
    p[ER_MP_FD] = A->d ? A->d->format : ER_FMT_F64;
    p[ER_MP_WANT] = S->want;
    p[ER_MP_DIR] = A->rounding;
    p[ER_MP_OPTS] = (long long)A->opts;
    p[ER_MP_ACC_LO] = J->acc_lo;
    p[ER_MP_ACC_ND] = J->acc_nd;
    p[ER_MP_K] = J->k;
    p[ER_MP_BLOCK] = J->scaled ? A->block : 1;
    p[ER_MP_NBLK] = J->nblocks;
    p[ER_MP_NC] = nc;
    p[ER_MP_NR] = nr;
    p[ER_MP_TOTAL] = el;
    p[ER_MP_A_BS] = S->a3 ? nr * J->k : 0;
    p[ER_MP_B_BS] = S->b3 ? J->k * nc : 0;
    p[ER_MP_SA_BS] = S->sa3 ? nr * J->nblocks : 0;
    p[ER_MP_SB_BS] = S->sb3 ? J->nblocks * nc : 0;
    p[ER_MP_C_BS] = S->c3 ? nr * nc : 0;

    pack(r->host[B_A], &S->a, S->a3 ? b0 : 0, S->a3 ? nbt : 1, i0, nr, 0, J->k);
    pack(r->host[B_B], &S->b, S->b3 ? b0 : 0, S->b3 ? nbt : 1, 0, J->k, j0, nc);
    if (J->scaled) {
        pack(r->host[B_SA], &S->sa, S->sa3 ? b0 : 0, S->sa3 ? nbt : 1, i0, nr, 0, J->nblocks);
        pack(r->host[B_SB], &S->sb, S->sb3 ? b0 : 0, S->sb3 ? nbt : 1, 0, J->nblocks, j0, nc);
    }
    if (J->has_c) pack(r->host[B_C], &S->c, S->c3 ? b0 : 0, S->c3 ? nbt : 1, i0, nr, j0, nc);

    if (r->device < 0) {
        /* The host pass: the kernel's per-element function, compiled for the host, element by element. */
        buf.a = r->host[B_A];
        buf.b = r->host[B_B];
        buf.sa = r->host[B_SA];
        buf.sb = r->host[B_SB];
        buf.c = r->host[B_C];
        buf.d = (er_u64 *)r->host[B_D];
        buf.lo = (er_u64 *)r->host[B_LO];
        buf.hi = (er_u64 *)r->host[B_HI];
        buf.odd = (er_u64 *)r->host[B_ODD];
        for (int64_t x = 0; x < el; x++) er_cu_element(prm, buf, x);
    } else {
        for (int i = B_A; i <= B_C; i++)
            if (sz[i] && (e = cudaMemcpy(r->dev[i], r->host[i], (size_t)sz[i], cudaMemcpyHostToDevice)) != cudaSuccess)
                return cuda_fail(A, e, "cudaMemcpy (to the device)");
        buf.a = r->dev[B_A];
        buf.b = r->dev[B_B];
        buf.sa = r->dev[B_SA];
        buf.sb = r->dev[B_SB];
        buf.c = r->dev[B_C];
        buf.d = (er_u64 *)r->dev[B_D];
        buf.lo = (er_u64 *)r->dev[B_LO];
        buf.hi = (er_u64 *)r->dev[B_HI];
        buf.odd = (er_u64 *)r->dev[B_ODD];
        {
            uint64_t want = ((uint64_t)el + ER_CUM_THREADS - 1) / ER_CUM_THREADS;
            unsigned blocks = want > ((uint64_t)1 << 30) ? 1u << 30 : (unsigned)want;
            er_cuda_mma_kernel_<<<blocks, ER_CUM_THREADS>>>(prm, buf);
        }
        if ((e = cudaGetLastError()) != cudaSuccess) return cuda_fail(A, e, "kernel launch (er_cuda_mma_kernel_)");
        if ((e = cudaDeviceSynchronize()) != cudaSuccess) return cuda_fail(A, e, "kernel execution (er_cuda_mma_kernel_)");
        for (int i = B_D; i <= B_ODD; i++)
            if (sz[i] && (e = cudaMemcpy(r->host[i], r->dev[i], (size_t)sz[i], cudaMemcpyDeviceToHost)) != cudaSuccess)
                return cuda_fail(A, e, "cudaMemcpy (from the device)");
    }

    /* Scatter through the output tensors' strides. */
    {
        const uint64_t *od = (const uint64_t *)r->host[B_D], *olo = (const uint64_t *)r->host[B_LO];
        const uint64_t *ohi = (const uint64_t *)r->host[B_HI], *oodd = (const uint64_t *)r->host[B_ODD];
        int db = A->d ? sbytes(A->d->format) : 0;
        int64_t x = 0;
        for (int64_t b = b0; b < b0 + nbt; b++)
            for (int64_t i = i0; i < i0 + nr; i++)
                for (int64_t j = j0; j < j0 + nc; j++, x++) {
                    if (J->kind) {
                        int64_t s = (int64_t)od[x];
                        if (s < INT32_MIN || s > INT32_MAX) (*wrapped)++;
                        store(A->d, b, i, j, (uint64_t)s & 0xFFFFFFFFu, 4);
                        continue;
                    }
                    if (S->want & ER_MW_D) store(A->d, b, i, j, od[x], db);
                    if (S->want & ER_MW_LO) store(A->lo, b, i, j, olo[x], 8);
                    if (S->want & ER_MW_HI) store(A->hi, b, i, j, ohi[x], 8);
                    if (S->want & ER_MW_ODD) store(A->odd, b, i, j, oodd[x], 8);
                }
    }
    return ER_OK;
}

/* The device index: args->device, or -1: EXACTREF_CUDA_DEVICE, else 0.  -1 on a bad index (msg set). */
int pick_index(er_mma_args *args)
{
    if (args->device >= 0) return args->device;
    if (args->device < -1) {
        fail(args, ER_EINVAL, "device index %d: expected -1 or an index >= 0", args->device);
        return -1;
    }
    const char *env = getenv("EXACTREF_CUDA_DEVICE");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (*end != '\0' || v < 0 || v > 1 << 20) {
            fail(args, ER_EINVAL, "EXACTREF_CUDA_DEVICE=\"%s\" is not a device index", env);
            return -1;
        }
        return (int)v;
    }
    return 0;
}

/* The engine, on the device (host == 0) or through the host pass (host == 1). */
int run(er_mma_args *args, const er_cuda_job *job, int host)
{
    shape S;
    runner r;
    int st = ER_OK, prev = -1;
    int64_t wrapped = 0, nbt = 1, nr = 1, nc = 1;
    cudaError_t e;
    memset(&S, 0, sizeof S);
    memset(&r, 0, sizeof r);
    r.device = -1;
    if (!args) return ER_EINVAL;
    if (args->msg && args->msg_size) args->msg[0] = '\0';
    if (!job || job->abi != ER_CUDA_BACKEND_ABI || job->size != (int)sizeof(er_cuda_job))
        return fail(args, ER_EUNSUPPORTED, "the CUDA backend module (ABI %d) does not match libexactref",
                    ER_CUDA_BACKEND_ABI);
    S.args = args;
    S.job = *job;
    S.a = make_view(args->a);
    S.b = make_view(args->b);
    if (job->has_c) S.c = make_view(args->c);
    if (job->scaled) {
        S.sa = make_view(args->a_scale);
        S.sb = make_view(args->b_scale);
    }
    S.a3 = args->a->ndim == 3;
    S.b3 = args->b->ndim == 3;
    S.c3 = args->c && args->c->ndim == 3;
    S.sa3 = args->a_scale && args->a_scale->ndim == 3;
    S.sb3 = args->b_scale && args->b_scale->ndim == 3;
    S.want = job->kind ? ER_MW_D
                       : (args->d ? ER_MW_D : 0) | (args->lo ? ER_MW_LO : 0) | (args->hi ? ER_MW_HI : 0) |
                             (args->odd ? ER_MW_ODD : 0);

    uint64_t limit = ER_CUM_HOST_LIMIT, cap = env_cap();
    if (job->m == 0 || job->n == 0 || job->batch == 0) goto done; /* nothing to compute: no device needed */
    if (!host) {
        int index = pick_index(args), count = 0;
        size_t free_b = 0, total_b = 0;
        if (index < 0) return ER_EINVAL;
        if ((e = cudaGetDeviceCount(&count)) != cudaSuccess) {
            (void)cudaGetLastError();
            return fail(args, ER_ENODEVICE, "no CUDA device: %s (cudaGetDeviceCount: %s)", cudaGetErrorString(e),
                        cudaGetErrorName(e));
        }
        if (count <= 0) return fail(args, ER_ENODEVICE, "no CUDA device: the CUDA runtime found none");
        if (index >= count)
            return fail(args, ER_ENODEVICE, "no CUDA device %d (%d device%s)", index, count, count == 1 ? "" : "s");
        if ((e = cudaGetDevice(&prev)) != cudaSuccess) {
            prev = -1;
            st = cuda_fail(args, e, "cudaGetDevice");
            goto done;
        }
        if ((e = cudaSetDevice(index)) != cudaSuccess) {
            st = cuda_fail(args, e, "cudaSetDevice");
            goto done;
        }
        if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
            st = cuda_fail(args, e, "cudaMemGetInfo");
            goto done;
        }
        if (free_b / 2 < limit) limit = free_b / 2;
        r.device = index;
    }
    if (!cap) cap = UINT64_MAX;
    if (!plan_tiles(&S, limit, cap, &nbt, &nr, &nc)) {
        st = fail(args, ER_EDEVICE,
                  "CUDA: one element's operands (k = %lld) do not fit the limit of %llu bytes per tile; use the CPU "
                  "backend",
                  (long long)job->k, (unsigned long long)limit);
        goto done;
    }
    {
        uint64_t sz[NBUF];
        tile_sizes(&S, (uint64_t)nbt, (uint64_t)nr, (uint64_t)nc, sz);
        for (int i = 0; i < NBUF; i++) {
            if (!sz[i]) continue; /* unused (or empty: k = 0): the kernel gets a NULL pointer */
            r.host[i] = (unsigned char *)malloc((size_t)sz[i]);
            if (!r.host[i]) {
                st = fail(args, ER_ENOMEM, "CUDA: out of host memory for a tile of %llu bytes",
                          (unsigned long long)sz[i]);
                goto done;
            }
            if (r.device >= 0 && (e = cudaMalloc((void **)&r.dev[i], (size_t)sz[i])) != cudaSuccess) {
                r.dev[i] = NULL;
                st = cuda_fail(args, e, "cudaMalloc");
                goto done;
            }
        }
    }
    for (int64_t b0 = 0; b0 < job->batch; b0 += nbt) {
        int64_t tb = job->batch - b0 < nbt ? job->batch - b0 : nbt;
        for (int64_t i0 = 0; i0 < job->m; i0 += nr)
            for (int64_t j0 = 0; j0 < job->n; j0 += nc) {
                int64_t tr_ = job->m - i0 < nr ? job->m - i0 : nr, tc_ = job->n - j0 < nc ? job->n - j0 : nc;
                if ((st = run_tile(&r, &S, b0, tb, i0, tr_, j0, tc_, &wrapped)) != ER_OK) goto done;
            }
    }
done:
    runner_release(&r);
    if (prev >= 0) cudaSetDevice(prev);
    if (args->stats) {
        int64_t el = st == ER_OK ? job->batch * job->m * job->n : 0;
        memset(args->stats, 0, sizeof *args->stats);
        args->stats->elements = el;
        args->stats->exact_path = job->kind ? 0 : el; /* mmai sums in 64-bit integers, as on the CPU */
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

ER_CUM_EXPORT int er_cuda_backend_mma(er_mma_args *args, const er_cuda_job *job) { return run(args, job, 0); }

ER_CUM_EXPORT int er_cuda_backend_host_mma(er_mma_args *args, const er_cuda_job *job) { return run(args, job, 1); }
