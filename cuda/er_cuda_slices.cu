/* er_cuda_slices.cu: the CUDA module's exact integer slices route: narrow float operands cut into int8
 * slices, int8 x int8 -> int32 products on tensor cores through cuBLASLt (loaded at run time), the int32
 * results recombined exactly and rounded once by the shared core (include/exactref/core/er_slices.h).
 *
 * Per packed tile of er_cuda_mma.cu and per batch of it:
 *   1. er_cus_scan_kernel: each row of A / column of B its grid (bf16, f16, tf32: from the row's
 *      values, one thread per row; fixed-grid formats: the format's) and whether it fits;
 *      er_cus_slice_kernel: A's rows and B's columns into slices As[t][i][p] and Bs[u][j][p] (k
 *      contiguous, zero-padded to multiples of 16 in rows, columns and k), the rows / columns holding a
 *      NaN or an infinity, and which slices are not all zero;
 *   2. per chunk of at most ER_SL_KCHUNK = 2^17 values of k and per pair (t, u) of slices not all zero:
 *      P_tu = As_t Bs_u^T by cublasLtMatmul (int8 inputs, CUBLAS_COMPUTE_32I, int32 output: exact, the
 *      bound of er_slices.h holds for any order of the int32 additions, so for whatever kernel cuBLASLt
 *      picks); then er_cus_recombine_kernel adds each P_tu 2^(7(t+u)) into the element's 128-bit sum;
 *   3. er_cus_finish_kernel: er_sl_finish per element (rounded once, C through the long accumulator),
 *      done[e] = 1; elements with a NaN or an infinity in their row or column, or a zero sum with no or
 *      a zero C, are left (done[e] = 0) to the module's exact kernel.
 * A tile whose bf16 / f16 / tf32 operand has a row (column) without a grid, or with a NaN or an
 * infinity, is declined as a whole: the exact binary64 path may take it, which is better than leaving
 * those rows to the exact kernel.  The host pass runs the same per-element functions in loops, with
 * the core's int8 dot product in place of cuBLASLt.  Without libcublasLt (dlopen of the path in
 * EXACTREF_CUBLASLT, then libcublasLt.so.13, .12, .11, .so through the loader's search path, then the
 * build's toolkit copy), or when any cuBLASLt call or allocation fails, the route declines and the
 * tile goes to the module's other kernels: the same bits, computed another way.
 * EXACTREF_CUDA_SLICES=0 turns the route off; EXACTREF_CUDA_SLICES=require (the tests) makes such a
 * failure an error.  Nothing here prints, exits or keeps device memory between calls.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cublasLt.h> /* types and constants only: the library is loaded with dlopen */

#include "exactref/status.h"
#include "er_cuda_module.cuh"
#include "er_cuda_slices.h"
#include "exactref/core/er_mma.h" /* er_mma_ld */
#include "exactref/core/er_slices.h"

#define ER_CUS_THREADS 256
#define ER_CUS_WORKSPACE ((size_t)32 << 20)
#define ER_CUS_MAX_PAIRS (ER_SL_MAX_SLICES * ER_SL_MAX_SLICES)

namespace {

/* ---- cuBLASLt, looked up at run time (the few entry points used). ---- */
typedef cublasStatus_t (*lt_create_fn)(cublasLtHandle_t *);
typedef cublasStatus_t (*lt_destroy_fn)(cublasLtHandle_t);
typedef cublasStatus_t (*lt_desc_create_fn)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
typedef cublasStatus_t (*lt_desc_destroy_fn)(cublasLtMatmulDesc_t);
typedef cublasStatus_t (*lt_desc_set_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t);
typedef cublasStatus_t (*lt_layout_create_fn)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
typedef cublasStatus_t (*lt_layout_destroy_fn)(cublasLtMatrixLayout_t);
typedef cublasStatus_t (*lt_matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                                       cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,
                                       const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                       const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

struct lt_api {
    void *lib;
    lt_create_fn create;
    lt_destroy_fn destroy;
    lt_desc_create_fn desc_create;
    lt_desc_destroy_fn desc_destroy;
    lt_desc_set_fn desc_set;
    lt_layout_create_fn layout_create;
    lt_layout_destroy_fn layout_destroy;
    lt_matmul_fn matmul;
    int ok;
};

lt_api lt_open(void)
{
    lt_api a;
    memset(&a, 0, sizeof a);
#ifndef ER_CUBLASLT_TOOLKIT_PATH
#define ER_CUBLASLT_TOOLKIT_PATH NULL
#endif
    const char *names[] = {getenv("EXACTREF_CUBLASLT"), "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11",
                           "libcublasLt.so", ER_CUBLASLT_TOOLKIT_PATH};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !a.lib; i++)
        if (names[i] && *names[i]) a.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!a.lib) return a;
    a.create = (lt_create_fn)dlsym(a.lib, "cublasLtCreate");
    a.destroy = (lt_destroy_fn)dlsym(a.lib, "cublasLtDestroy");
    a.desc_create = (lt_desc_create_fn)dlsym(a.lib, "cublasLtMatmulDescCreate");
    a.desc_destroy = (lt_desc_destroy_fn)dlsym(a.lib, "cublasLtMatmulDescDestroy");
    a.desc_set = (lt_desc_set_fn)dlsym(a.lib, "cublasLtMatmulDescSetAttribute");
    a.layout_create = (lt_layout_create_fn)dlsym(a.lib, "cublasLtMatrixLayoutCreate");
    a.layout_destroy = (lt_layout_destroy_fn)dlsym(a.lib, "cublasLtMatrixLayoutDestroy");
    a.matmul = (lt_matmul_fn)dlsym(a.lib, "cublasLtMatmul");
    a.ok = a.create && a.destroy && a.desc_create && a.desc_destroy && a.desc_set && a.layout_create &&
           a.layout_destroy && a.matmul;
    return a; /* the library stays loaded for the life of the process */
}

const lt_api &lt_get(void)
{
    static const lt_api api = lt_open(); /* once per process (a thread-safe static) */
    return api;
}

/* One int8 GEMM of the route: P (nrp x ncp, column-major, ld nrp) = X^T Y, X = kc x nrp (ld kp), Y =
 * kc x ncp (ld kp), int32 exact.  0 on success. */
struct lt_gemm {
    const lt_api *L;
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    void *ws;
};

int lt_gemm_open(lt_gemm *G, const lt_api *L, void *ws)
{
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    G->L = L;
    G->h = NULL;
    G->op = NULL;
    G->ws = ws;
    if (L->create(&G->h) != CUBLAS_STATUS_SUCCESS) {
        G->h = NULL;
        return -1;
    }
    if (L->desc_create(&G->op, CUBLAS_COMPUTE_32I, CUDA_R_32I) != CUBLAS_STATUS_SUCCESS) {
        G->op = NULL;
        return -1;
    }
    if (L->desc_set(G->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) != CUBLAS_STATUS_SUCCESS ||
        L->desc_set(G->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return 0;
}

void lt_gemm_close(lt_gemm *G)
{
    if (G->op) G->L->desc_destroy(G->op);
    if (G->h) G->L->destroy(G->h);
    G->op = NULL;
    G->h = NULL;
}

int lt_gemm_run(lt_gemm *G, const er_i8 *X, const er_i8 *Y, er_i32 *P, int64_t nrp, int64_t ncp, int64_t kc,
                int64_t kp)
{
    const lt_api *L = G->L;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    int32_t one = 1, zero = 0;
    int rc = -1;
    if (L->layout_create(&la, CUDA_R_8I, (uint64_t)kc, (uint64_t)nrp, kp) != CUBLAS_STATUS_SUCCESS) la = NULL;
    else if (L->layout_create(&lb, CUDA_R_8I, (uint64_t)kc, (uint64_t)ncp, kp) != CUBLAS_STATUS_SUCCESS) lb = NULL;
    else if (L->layout_create(&lc, CUDA_R_32I, (uint64_t)nrp, (uint64_t)ncp, nrp) != CUBLAS_STATUS_SUCCESS) lc = NULL;
    else if (L->matmul(G->h, G->op, &one, X, la, Y, lb, &zero, P, lc, P, lc, NULL, G->ws, ER_CUS_WORKSPACE, 0) ==
             CUBLAS_STATUS_SUCCESS)
        rc = 0;
    if (lc) L->layout_destroy(lc);
    if (lb) L->layout_destroy(lb);
    if (la) L->layout_destroy(la);
    return rc;
}

/* ---- The kernels and their per-element functions (the host pass runs the same functions). ---- */

/* Slicing one operand: side 0 row r of A (x: nr x k), side 1 column r of B (x: k x ld), elements of
 * format f in its storage size. */
typedef struct {
    const unsigned char *x;
    int f, side, ns, scaled;
    er_u32 opts;
    er_i64 rows, rowsp, k, kp, ld;
    er_i8 *out;          /* ns x rowsp x kp */
    unsigned char *bad;  /* rowsp: a NaN or an infinity in the row, or (scaled) no grid (set to 1; zeroed by the host) */
    int *grid;           /* rowsp: the row's grid exponent (er_sl_row_grid) */
    int *nz;             /* bit t: slice t has a nonzero digit (OR-ed in) */
} er_cus_slice_args;

ER_KFN er_u64 er_cus_elem(const er_cus_slice_args &S, er_i64 r, er_i64 p)
{
    return er_mma_ld(S.x, S.f, S.side ? p * S.ld + r : r * S.k + p);
}

/* Row r's grid (scaled formats: from a scan of the row; fixed grids: the format's). */
ER_KFN void er_cus_scan_one(const er_cus_slice_args &S, er_i64 r)
{
    er_i32 top = -100000, lsb = 100000, fits = 1, finite = 1;
    if (S.scaled && r < S.rows)
        for (er_i64 p = 0; p < S.k; p++) finite &= er_sl_scan(S.f, er_cus_elem(S, r, p), S.opts, &top, &lsb);
    S.grid[r] = er_sl_row_grid(S.f, top, lsb, &fits);
    if (!finite || !fits) S.bad[r] = 1;
}

__global__ void __launch_bounds__(ER_CUS_THREADS) er_cus_scan_kernel(er_cus_slice_args S)
{
    er_i64 stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 r = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; r < S.rowsp; r += stride) er_cus_scan_one(S, r);
}

ER_KFN int er_cus_slice_one(const er_cus_slice_args &S, er_i64 e)
{
    er_i64 r = e / S.kp, p = e % S.kp, n = 0;
    int mask = 0;
    if (r < S.rows && p < S.k && !(S.scaled && S.bad[r])) { /* a scaled row without a grid: left out */
        if (!er_sl_int_at(S.f, er_cus_elem(S, r, p), S.opts, S.grid[r], &n)) S.bad[r] = 1;
    }
    for (int t = 0; t < S.ns; t++) {
        er_i8 d = er_sl_digit(n, t);
        S.out[((er_i64)t * S.rowsp + r) * S.kp + p] = d;
        if (d) mask |= 1 << t;
    }
    return mask;
}

__global__ void __launch_bounds__(ER_CUS_THREADS) er_cus_slice_kernel(er_cus_slice_args S)
{
    er_i64 total = S.rowsp * S.kp, stride = (er_i64)gridDim.x * blockDim.x;
    int mask = 0;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) mask |= er_cus_slice_one(S, e);
    if (mask) atomicOr(S.nz, mask);
}

/* Recombination of one chunk: W[e] += sum_q P_q[e] 2^sh[q], element e = (i, j) column-major (i = e % nr). */
typedef struct {
    const er_i32 *P; /* npairs x ncp x nrp */
    er_sl_wide *W;   /* nr x nc, column-major */
    int npairs;
    int sh[ER_CUS_MAX_PAIRS];
    er_i64 nr, nc, nrp, ncp;
} er_cus_recombine_args;

ER_KFN void er_cus_recombine_one(const er_cus_recombine_args &R, er_i64 e)
{
    er_i64 i = e % R.nr, j = e / R.nr;
    er_sl_wide w = R.W[e];
    for (int q = 0; q < R.npairs; q++) er_sl_wide_add(&w, (er_i64)R.P[(q * R.ncp + j) * R.nrp + i], R.sh[q]);
    R.W[e] = w;
}

__global__ void __launch_bounds__(ER_CUS_THREADS) er_cus_recombine_kernel(er_cus_recombine_args R)
{
    er_i64 total = R.nr * R.nc, stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) er_cus_recombine_one(R, e);
}

/* The finish of one batch of the tile: D and done ([row][col], this batch's). */
typedef struct {
    const er_sl_wide *W;
    const unsigned char *bad_a, *bad_b, *c; /* c: this batch's C ([row][col]) or NULL */
    const int *grid_a, *grid_b;             /* the rows' and columns' grid exponents */
    er_u64 *d;
    unsigned char *done;
    int fc, fd, dir, acc_lo, acc_nd;
    er_u32 opts;
    er_i64 nr, nc;
} er_cus_finish_args;

ER_KFN void er_cus_finish_one(const er_cus_finish_args &F, er_i64 e)
{
    er_i64 i = e % F.nr, j = e / F.nr, o = i * F.nc + j;
    er_val c;
    er_u64 out = 0;
    c.cls = ER_CLASS_ZERO;
    c.sign = 0u;
    c.sig = 0u;
    c.exp = 0;
    if (F.bad_a[i] || F.bad_b[j]) {
        F.done[o] = 0;
        return;
    }
    if (F.c) c = er_val_flush_in(er_decode(F.fc, er_mma_ld(F.c, F.fc, o)), F.opts);
    if (er_sl_finish(F.W[e], F.grid_a[i] + F.grid_b[j], F.c != NULL, c, F.acc_lo, F.acc_nd, F.fd, F.dir, F.opts, &out)) {
        F.d[o] = out;
        F.done[o] = 1;
    } else {
        F.done[o] = 0;
    }
}

__global__ void __launch_bounds__(ER_CUS_THREADS) er_cus_finish_kernel(er_cus_finish_args F)
{
    er_i64 total = F.nr * F.nc, stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) er_cus_finish_one(F, e);
}

int64_t up16(int64_t x) { return (x + 15) / 16 * 16; }

/* The route's buffers for one tile. */
enum { S_AS, S_BS, S_P, S_W, S_BAD, S_GRID, S_NZ, S_WS, S_N };

int zero_fill(const er_cum_dev *d, void *p, size_t n, char *msg, size_t ms)
{
    if (!n) return ER_OK;
    if (d->device < 0) {
        memset(p, 0, n);
        return ER_OK;
    }
    cudaError_t e = cudaMemset(p, 0, n);
    return e == cudaSuccess ? ER_OK : er_cum_cuda_fail(msg, ms, e, "cudaMemset");
}

int slice(const er_cum_dev *d, const er_cus_slice_args &S, char *msg, size_t ms)
{
    er_i64 total = S.rowsp * S.kp;
    int st;
    if (d->device < 0) {
        int mask = 0;
        for (er_i64 r = 0; r < S.rowsp; r++) er_cus_scan_one(S, r);
        for (er_i64 e = 0; e < total; e++) mask |= er_cus_slice_one(S, e);
        *S.nz |= mask;
        return ER_OK;
    }
    er_cus_scan_kernel<<<er_cum_blocks((uint64_t)S.rowsp, ER_CUS_THREADS), ER_CUS_THREADS>>>(S);
    if ((st = er_cum_sync(d, "er_cus_scan_kernel", msg, ms)) != ER_OK) return st;
    er_cus_slice_kernel<<<er_cum_blocks((uint64_t)total, ER_CUS_THREADS), ER_CUS_THREADS>>>(S);
    return er_cum_sync(d, "er_cus_slice_kernel", msg, ms);
}

} /* namespace */

int er_cus_run_tile(const er_cus_tile *T, int *ran, char *msg, size_t ms)
{
    er_cum_dev dev;
    void *buf[S_N];
    uint64_t sz[S_N];
    const lt_api *L = NULL;
    lt_gemm G;
    int na = er_sl_slices_of(T->fa), nb = er_sl_slices_of(T->fb), st = ER_OK, declined = 0;
    int64_t nrp = up16(T->nr), ncp = up16(T->nc), kp = up16(T->k), el = T->nr * T->nc;
    const char *env = getenv("EXACTREF_CUDA_SLICES"), *why = NULL;
    int require = env && !strcmp(env, "require"); /* the tests: a failure of the route is an error */
    *ran = 0;
    memset(&G, 0, sizeof G);
    if (!na || !nb || T->k <= 0 || T->k > ER_SL_KMAX || el <= 0 || (env && !strcmp(env, "0"))) return ER_OK;
    if (T->device >= 0) {
        L = &lt_get();
        if (!L->ok) { /* no cuBLASLt: the module's other kernels */
            return require ? er_msgf(msg, ms, ER_EDEVICE,
                                     "integer slices: libcublasLt not found or incomplete (EXACTREF_CUDA_SLICES=require)")
                           : ER_OK;
        }
    }
    dev.device = T->device;
    dev.prev = -1;
    memset(buf, 0, sizeof buf);
    sz[S_AS] = (uint64_t)na * nrp * kp;
    sz[S_BS] = (uint64_t)nb * ncp * kp;
    sz[S_P] = (uint64_t)na * nb * nrp * ncp * 4;
    sz[S_W] = (uint64_t)el * sizeof(er_sl_wide);
    sz[S_BAD] = (uint64_t)(nrp + ncp);
    sz[S_GRID] = (uint64_t)(nrp + ncp) * sizeof(int);
    sz[S_NZ] = 2 * sizeof(int);
    sz[S_WS] = T->device >= 0 ? ER_CUS_WORKSPACE : 0;
    for (int i = 0; i < S_N; i++)
        if (er_cum_alloc(&dev, &buf[i], sz[i], msg, ms) != ER_OK) {
            declined = 1; /* too big for this tile: the other kernels (smaller memory) */
            why = "out of device memory";
            goto out;
        }
    if (L && lt_gemm_open(&G, L, buf[S_WS]) != 0) {
        declined = 1;
        why = "cublasLtCreate or cublasLtMatmulDescCreate failed";
        goto out;
    }
    for (int64_t bb = 0; bb < T->nbt; bb++) {
        int nz[2] = {0, 0}, pt[ER_CUS_MAX_PAIRS], pu[ER_CUS_MAX_PAIRS], np = 0;
        er_i8 *As = (er_i8 *)buf[S_AS], *Bs = (er_i8 *)buf[S_BS];
        unsigned char *bad = (unsigned char *)buf[S_BAD];
        int *dnz = (int *)buf[S_NZ];
        er_cus_slice_args SA, SB;
        if ((st = zero_fill(&dev, bad, (size_t)sz[S_BAD], msg, ms)) != ER_OK) goto out;
        if ((st = zero_fill(&dev, dnz, (size_t)sz[S_NZ], msg, ms)) != ER_OK) goto out;
        if ((st = zero_fill(&dev, buf[S_W], (size_t)sz[S_W], msg, ms)) != ER_OK) goto out;
        memset(&SA, 0, sizeof SA);
        SA.x = T->a + bb * T->a_bs * er_fmt_storage_bytes(er_fmt_get(T->fa));
        SA.f = T->fa;
        SA.side = 0;
        SA.ns = na;
        SA.scaled = er_sl_scaled(T->fa);
        SA.opts = T->opts;
        SA.rows = T->nr;
        SA.rowsp = nrp;
        SA.k = T->k;
        SA.kp = kp;
        SA.ld = T->k;
        SA.out = As;
        SA.bad = bad;
        SA.grid = (int *)buf[S_GRID];
        SA.nz = dnz;
        SB = SA;
        SB.x = T->b + bb * T->b_bs * er_fmt_storage_bytes(er_fmt_get(T->fb));
        SB.f = T->fb;
        SB.side = 1;
        SB.ns = nb;
        SB.scaled = er_sl_scaled(T->fb);
        SB.grid = (int *)buf[S_GRID] + nrp;
        SB.rows = T->nc;
        SB.rowsp = ncp;
        SB.ld = T->nc;
        SB.out = Bs;
        SB.bad = bad + nrp;
        SB.nz = dnz + 1;
        if ((st = slice(&dev, SA, msg, ms)) != ER_OK || (st = slice(&dev, SB, msg, ms)) != ER_OK) goto out;
        if ((st = er_cum_copy(&dev, 0, dnz, nz, sizeof nz, msg, ms)) != ER_OK) goto out;
        if (SA.scaled || SB.scaled) {
            /* a scaled operand with a row that has no grid (or a NaN / infinity): the exact binary64
             * path may still take the whole tile, which the exact kernel alone would not; decline */
            unsigned char *hb = (unsigned char *)malloc((size_t)sz[S_BAD]);
            int any = 0;
            if (!hb) {
                declined = 1;
                why = "out of host memory";
                goto out;
            }
            if ((st = er_cum_copy(&dev, 0, bad, hb, (size_t)sz[S_BAD], msg, ms)) != ER_OK) {
                free(hb);
                goto out;
            }
            for (int64_t r = 0; r < T->nr && SA.scaled; r++) any |= hb[r];
            for (int64_t r = 0; r < T->nc && SB.scaled; r++) any |= hb[nrp + r];
            free(hb);
            if (any) {
                declined = 1;
                goto out;
            }
        }
        for (int t = 0; t < na; t++)
            for (int u = 0; u < nb; u++)
                if ((nz[0] >> t & 1) && (nz[1] >> u & 1)) {
                    pt[np] = t;
                    pu[np] = u;
                    np++;
                }
        for (int64_t c0 = 0; c0 < T->k && np; c0 += ER_SL_KCHUNK) {
            int64_t kc = T->k - c0 < ER_SL_KCHUNK ? T->k - c0 : ER_SL_KCHUNK, kcp = up16(kc); /* zeros beyond k */
            er_i32 *P = (er_i32 *)buf[S_P];
            er_cus_recombine_args R;
            for (int q = 0; q < np; q++) {
                const er_i8 *X = As + (int64_t)pt[q] * nrp * kp + c0, *Y = Bs + (int64_t)pu[q] * ncp * kp + c0;
                er_i32 *Pq = P + (int64_t)q * nrp * ncp;
                if (L) {
                    if (lt_gemm_run(&G, X, Y, Pq, nrp, ncp, kcp, kp) != 0) {
                        declined = 1; /* cuBLASLt refused: the other kernels */
                        why = "cublasLtMatmul (int8, int32 output) failed";
                        goto out;
                    }
                } else {
                    for (int64_t j = 0; j < T->nc; j++)
                        for (int64_t i = 0; i < T->nr; i++) Pq[j * nrp + i] = er_sl_dot_i8(X + i * kp, Y + j * kp, kcp);
                }
            }
            memset(&R, 0, sizeof R);
            R.P = P;
            R.W = (er_sl_wide *)buf[S_W];
            R.npairs = np;
            for (int q = 0; q < np; q++) R.sh[q] = ER_SL_DIGIT_BITS * (pt[q] + pu[q]);
            R.nr = T->nr;
            R.nc = T->nc;
            R.nrp = nrp;
            R.ncp = ncp;
            if (dev.device < 0) {
                for (int64_t e = 0; e < el; e++) er_cus_recombine_one(R, e);
            } else {
                er_cus_recombine_kernel<<<er_cum_blocks((uint64_t)el, ER_CUS_THREADS), ER_CUS_THREADS>>>(R);
                /* a failure here is cuBLASLt's or ours: the context may be gone, so it is returned */
                if ((st = er_cum_sync(&dev, "er_cus_recombine_kernel", msg, ms)) != ER_OK) goto out;
            }
        }
        {
            er_cus_finish_args F;
            memset(&F, 0, sizeof F);
            F.W = (const er_sl_wide *)buf[S_W];
            F.bad_a = bad;
            F.bad_b = bad + nrp;
            F.c = T->fc >= 0 ? T->c + bb * T->c_bs * er_fmt_storage_bytes(er_fmt_get(T->fc)) : NULL;
            F.d = T->d + bb * el;
            F.done = T->done + bb * el;
            F.fc = T->fc;
            F.fd = T->fd;
            F.dir = T->dir;
            F.acc_lo = T->acc_lo;
            F.acc_nd = T->acc_nd;
            F.grid_a = (const int *)buf[S_GRID];
            F.grid_b = (const int *)buf[S_GRID] + nrp;
            F.opts = T->opts;
            F.nr = T->nr;
            F.nc = T->nc;
            if (dev.device < 0) {
                for (int64_t e = 0; e < el; e++) er_cus_finish_one(F, e);
            } else {
                er_cus_finish_kernel<<<er_cum_blocks((uint64_t)el, ER_CUS_THREADS), ER_CUS_THREADS>>>(F);
                if ((st = er_cum_sync(&dev, "er_cus_finish_kernel", msg, ms)) != ER_OK) goto out;
            }
        }
    }
    *ran = 1;
out:
    if (L) lt_gemm_close(&G);
    for (int i = 0; i < S_N; i++) er_cum_free(&dev, buf[i]);
    if (declined) {
        *ran = 0;
        if (require && why) return er_msgf(msg, ms, ER_EDEVICE, "integer slices: %s (EXACTREF_CUDA_SLICES=require)", why);
        if (msg && ms) msg[0] = '\0'; /* a decline is no error: the other kernels run */
        st = ER_OK;
    }
    return st;
}

int er_cus_run_params(const int64_t *prm, int device, const unsigned char *a, const unsigned char *b,
                      const unsigned char *c, uint64_t *d, unsigned char *done, int *ran, char *msg, size_t ms)
{
    er_cus_tile T;
    *ran = 0;
    if (prm[ER_MP_KIND] != 0 || prm[ER_MP_FS] >= 0 || prm[ER_MP_WANT] != ER_MW_D || prm[ER_MP_NR] <= 0 ||
        prm[ER_MP_NC] <= 0)
        return ER_OK;
    memset(&T, 0, sizeof T);
    T.device = device;
    T.a = a;
    T.b = b;
    T.c = c;
    T.d = d;
    T.done = done;
    T.fa = (int)prm[ER_MP_FA];
    T.fb = (int)prm[ER_MP_FB];
    T.fc = (int)prm[ER_MP_FC];
    T.fd = (int)prm[ER_MP_FD];
    T.dir = (int)prm[ER_MP_DIR];
    T.opts = (unsigned)prm[ER_MP_OPTS];
    T.acc_lo = (int)prm[ER_MP_ACC_LO];
    T.acc_nd = (int)prm[ER_MP_ACC_ND];
    T.nr = prm[ER_MP_NR];
    T.nc = prm[ER_MP_NC];
    T.nbt = prm[ER_MP_TOTAL] / (T.nr * T.nc);
    T.k = prm[ER_MP_K];
    T.a_bs = prm[ER_MP_A_BS];
    T.b_bs = prm[ER_MP_B_BS];
    T.c_bs = prm[ER_MP_C_BS];
    return er_cus_run_tile(&T, ran, msg, ms);
}
