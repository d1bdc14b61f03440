/* er_cuda_bounds.cu: per-element bounds of every standard on a CUDA device (er_result_bounds of a result
 * made with ER_BACKEND_CUDA), part of the CUDA backend module libexactref_cuda.so.
 *
 * The host (cpu/cpu_bounds.c) prepares one batch as an er_bjob (host/er_bjob.h: A' and B' as binary64,
 * the engines' exponent bounds, normal's roundings per term, slack, C, the rounded result) and the
 * loader (src/cuda_loader.c) hands it here.  Each element is one thread running the shared core's
 * er_bound_element (include/exactref/core/er_bounds.h), the very function the CPU runs, compiled by nvcc:
 * binary64 operations are IEEE 754 correctly rounded on both, contraction is off (--fmad=false) and fma
 * is used only where the source writes it, so the bits are the CPU's.
 *
 * normal and any_order, where the exact quantities apply (par.gemm_form): S = A' B' and the integer
 * sums of the quantized magnitudes (er_bjob: qa qb, qw qb) are formed first by the tiled binary64
 * kernel (er_cuda_chains.cuh, one sum per run) and passed to er_bound_element as `pre`.  The integer
 * sums are exact in any order and S only encloses the exact sum (er_b_exact_element), so the bits are
 * the CPU's whatever order a kernel takes.  EXACTREF_CUDA_BOUNDS_CHAINS=0 turns that kernel off (pre ==
 * NULL: the per-element loop), for tests.
 *
 * Tiles: rows i0.. and columns j0.. of the batch, sized to half the device's free memory and to
 * EXACTREF_CUDA_MAX_CHUNK elements; B's columns of a tile are uploaded once for all its row tiles.
 * Everything is copied straight from the job's arrays and straight into the er_bounds arrays (element
 * (i, j) of the batch at e0 + i n + j), with 2-D copies where a tile is narrower than the batch.
 *
 * er_cuda_backend_host_bounds runs the same tiles with the buffers in host memory and the kernels'
 * functions on the CPU (the tiled kernel block by block): the tests' host pass, no GPU needed.
 */
#include "../host/er_tile.h" /* the tiles' plan (with OpenCL) */
#include "er_cuda_backend.h"
#include "er_cuda_chains.cuh"
#include "er_cuda_module.cuh"
#include "exactref/exactref.h"

#define ER_BD_THREADS 128

namespace {

/* The buffers of a tile, as the kernel sees them (NULL where unused). */
typedef struct {
    er_bpar par; /* par.ldb: the tile's columns */
    const double *af, *bf, *rw, *da, *db, *dc, *cv, *ps, *pt, *pw, *qa, *qw, *qb;
    const er_i32 *sa, *sw, *sb;
    const er_i16 *ea, *eb;
    const er_u64 *rb;
    double *radius, *tol;
    er_u64 *low, *high;
    unsigned char *has_range, *pinf, *ninf, *nan;
    er_i64 nr, nc;
} er_bd_bufs;

/* Element e (row-major in the tile): er_bjob_element (cpu/cpu_bounds.c), on the tile's buffers. */
ER_KFN void er_bd_element(const er_bd_bufs &B, const er_bpar *par, er_i64 e)
{
    er_i64 i = e / B.nc, j = e % B.nc, k = par->k;
    double pre[3];
    const double *pp = NULL;
    er_bel o;
    if (B.ps) {
        pre[0] = B.ps[e];
        pre[1] = B.pt[e];
        pre[2] = B.pw[e];
        pp = pre;
    }
    er_bound_element(par, B.af + i * k, B.bf + j, B.ea ? B.ea + i * k : NULL, B.eb ? B.eb + j : NULL, B.rw,
                     B.da ? B.da + i * k : NULL, B.db ? B.db + j : NULL, B.qa ? B.qa + i * k : NULL,
                     B.qw ? B.qw + i * k : NULL, B.qb ? B.qb + j : NULL, B.sa ? B.sa[i] : ER_BQ_BAD,
                     B.sw ? B.sw[i] : 0, B.sb ? B.sb[j] : ER_BQ_BAD, B.cv ? B.cv[e] : 0.0, B.dc ? B.dc[e] : 0.0,
                     B.rb[e], pp, &o);
    B.radius[e] = o.radius;
    B.tol[e] = o.tolerance;
    B.low[e] = o.low;
    B.high[e] = o.high;
    B.has_range[e] = (unsigned char)((o.flags & ER_BF_RANGE) != 0u);
    B.pinf[e] = (unsigned char)((o.flags & ER_BF_PINF) != 0u);
    B.ninf[e] = (unsigned char)((o.flags & ER_BF_NINF) != 0u);
    B.nan[e] = (unsigned char)((o.flags & ER_BF_NAN) != 0u);
}

__global__ void __launch_bounds__(ER_BD_THREADS) er_bd_kernel(er_bd_bufs B)
{
    er_bpar par = B.par;
    er_i64 total = B.nr * B.nc, stride = (er_i64)gridDim.x * blockDim.x;
    for (er_i64 e = (er_i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) er_bd_element(B, &par, e);
}

/* The device buffers, in order. */
enum { D_AF, D_BF, D_RW, D_EA, D_EB, D_DA, D_DB, D_DC, D_CV, D_RB, D_PS, D_PT, D_PW, D_QA, D_QW, D_QB, D_SA, D_SW,
       D_SB, D_RAD, D_TOL, D_LOW, D_HIGH, D_RANGE, D_PINF, D_NINF, D_NAN, D_COUNT };

typedef struct {
    const er_bjob *job;
    int pre; /* the tiled kernel forms S and the integer sums */
} bplan;

/* Bytes of each buffer for a tile of nr rows and nc columns. */
void bsizes(const bplan *P, uint64_t nr, uint64_t nc, uint64_t sz[D_COUNT])
{
    const er_bjob *J = P->job;
    uint64_t k = (uint64_t)J->par.k, el = nr * nc;
    memset(sz, 0, sizeof(uint64_t) * D_COUNT);
    sz[D_AF] = nr * k * 8;
    sz[D_BF] = k * nc * 8;
    sz[D_RW] = k * 8;
    if (J->ea) sz[D_EA] = nr * k * 2;
    if (J->eb) sz[D_EB] = k * nc * 2;
    if (J->da) sz[D_DA] = nr * k * 8;
    if (J->db) sz[D_DB] = k * nc * 8;
    if (J->dc) sz[D_DC] = el * 8;
    if (J->cv) sz[D_CV] = el * 8;
    sz[D_RB] = el * 8;
    if (P->pre) sz[D_PS] = sz[D_PT] = sz[D_PW] = el * 8;
    if (J->qa) sz[D_QA] = nr * k * 8;
    if (J->qw) sz[D_QW] = nr * k * 8;
    if (J->qb) sz[D_QB] = k * nc * 8;
    if (J->sa) sz[D_SA] = sz[D_SW] = nr * 4;
    if (J->sb) sz[D_SB] = nc * 4;
    sz[D_RAD] = sz[D_TOL] = sz[D_LOW] = sz[D_HIGH] = el * 8;
    sz[D_RANGE] = sz[D_PINF] = sz[D_NINF] = sz[D_NAN] = el;
}

uint64_t btotal(const bplan *P, uint64_t nr, uint64_t nc)
{
    uint64_t sz[D_COUNT], t = 0;
    bsizes(P, nr, nc, sz);
    for (int i = 0; i < D_COUNT; i++) t += sz[i];
    return t;
}

/* What a tile may take (the plan's er_tile_fits_fn, host/er_tile.h): at most limit bytes. */
typedef struct {
    const bplan *P;
    uint64_t limit;
} bfit_ctx;

int bfits(const void *ctx, uint64_t nbt, uint64_t nr, uint64_t nc)
{
    const bfit_ctx *f = (const bfit_ctx *)ctx;
    (void)nbt; /* one batch per job */
    return btotal(f->P, nr, nc) <= f->limit;
}

/* Is EXACTREF_CUDA_BOUNDS_CHAINS=0 set (the tiled kernel off)? */
int chains_off(void)
{
    const char *env = getenv("EXACTREF_CUDA_BOUNDS_CHAINS");
    return env && !strcmp(env, "0");
}

int bounds_run(const er_bjob *job, er_bounds *out, int64_t e0, int device, int host, char *msg, size_t msg_size)
{
    er_cum_dev dev;
    bplan P;
    void *buf[D_COUNT];
    uint64_t sz[D_COUNT], limit = UINT64_MAX, cap;
    int64_t nbt = 1, nr = 1, nc = 1, m, n, k;
    bfit_ctx fit;
    int st = ER_OK;
    if (msg && msg_size) msg[0] = '\0';
    if (!job || !out) return er_cum_fail(msg, msg_size, ER_EINVAL, "CUDA bounds: no job or no output");
    m = job->m;
    n = job->n;
    k = job->par.k;
    if (m < 0 || n < 0 || k < 0 || job->par.ldb != n || (k > 0 && (!job->af || !job->bf || !job->rw)) || !job->rb ||
        (job->par.kind == ER_BK_ENGINE && k > 0 && (!job->ea || !job->eb)) || e0 < 0 || e0 + m * n > out->count)
        return er_cum_fail(msg, msg_size, ER_EINVAL, "CUDA bounds: an inconsistent batch (internal)");
    if (m == 0 || n == 0) return ER_OK;
    memset(buf, 0, sizeof buf);
    P.job = job;
    P.pre = job->par.gemm_form && job->par.kind != ER_BK_ENGINE && k > 0 && !chains_off();
    if ((st = er_cum_open(&dev, device, host, &limit, msg, msg_size)) != ER_OK) {
        er_cum_close(&dev);
        return st;
    }
    cap = er_tile_env_cap("EXACTREF_CUDA_MAX_CHUNK");
    if (!cap) cap = UINT64_MAX;
    fit.P = &P;
    fit.limit = limit;
    if (!er_tile_plan(1, (uint64_t)m, (uint64_t)n, cap, bfits, &fit, &nbt, &nr, &nc)) {
        /* as OpenCL: ER_EUNSUPPORTED, and the CPU computes the same bits */
        st = er_cum_fail(msg, msg_size, ER_EUNSUPPORTED,
                         "CUDA bounds: one element's operands (k = %lld) do not fit the limit of %llu bytes; the CPU "
                         "computes them",
                         (long long)k, (unsigned long long)limit);
        goto done;
    }
    bsizes(&P, (uint64_t)nr, (uint64_t)nc, sz);
    for (int i = 0; i < D_COUNT; i++)
        if ((st = er_cum_alloc(&dev, &buf[i], sz[i], msg, msg_size)) != ER_OK) goto done;
    if ((st = er_cum_copy(&dev, 1, buf[D_RW], (void *)job->rw, (size_t)sz[D_RW], msg, msg_size)) != ER_OK) goto done;

    for (int64_t j0 = 0; j0 < n; j0 += nc) {
        int64_t tc = n - j0 < nc ? n - j0 : nc;
        size_t hp8 = (size_t)n * 8, tp8 = (size_t)tc * 8;
        /* B's columns j0 .. j0 + tc - 1: k rows of tc values (pitch n on the host) */
        if ((st = er_cum_copy2d(&dev, 1, buf[D_BF], tp8, (void *)(job->bf + j0), hp8, tp8, (size_t)k, msg, msg_size)) ||
            (job->eb && (st = er_cum_copy2d(&dev, 1, buf[D_EB], (size_t)tc * 2, (void *)(job->eb + j0), (size_t)n * 2,
                                            (size_t)tc * 2, (size_t)k, msg, msg_size))) ||
            (job->db && (st = er_cum_copy2d(&dev, 1, buf[D_DB], tp8, (void *)(job->db + j0), hp8, tp8, (size_t)k, msg,
                                            msg_size))) ||
            (job->qb && (st = er_cum_copy2d(&dev, 1, buf[D_QB], tp8, (void *)(job->qb + j0), hp8, tp8, (size_t)k, msg,
                                            msg_size))) ||
            (job->sb && (st = er_cum_copy(&dev, 1, buf[D_SB], (void *)(job->sb + j0), (size_t)tc * 4, msg, msg_size))))
            goto done;
        for (int64_t i0 = 0; i0 < m; i0 += nr) {
            int64_t tr = m - i0 < nr ? m - i0 : nr, el = tr * tc;
            size_t rows = (size_t)tr;
            int64_t o = i0 * n + j0; /* the tile's first element in the batch */
            er_bd_bufs B;
            /* A's rows are contiguous (k values each) */
            if ((st = er_cum_copy(&dev, 1, buf[D_AF], (void *)(job->af + i0 * k), (size_t)(tr * k) * 8, msg, msg_size)) ||
                (job->ea && (st = er_cum_copy(&dev, 1, buf[D_EA], (void *)(job->ea + i0 * k), (size_t)(tr * k) * 2, msg,
                                              msg_size))) ||
                (job->da && (st = er_cum_copy(&dev, 1, buf[D_DA], (void *)(job->da + i0 * k), (size_t)(tr * k) * 8, msg,
                                              msg_size))) ||
                (job->qa && (st = er_cum_copy(&dev, 1, buf[D_QA], (void *)(job->qa + i0 * k), (size_t)(tr * k) * 8, msg,
                                              msg_size))) ||
                (job->qw && (st = er_cum_copy(&dev, 1, buf[D_QW], (void *)(job->qw + i0 * k), (size_t)(tr * k) * 8, msg,
                                              msg_size))) ||
                (job->sa && (st = er_cum_copy(&dev, 1, buf[D_SA], (void *)(job->sa + i0), (size_t)tr * 4, msg, msg_size))) ||
                (job->sw && (st = er_cum_copy(&dev, 1, buf[D_SW], (void *)(job->sw + i0), (size_t)tr * 4, msg, msg_size))) ||
                (st = er_cum_copy2d(&dev, 1, buf[D_RB], tp8, (void *)(job->rb + o), hp8, tp8, rows, msg, msg_size)) ||
                (job->cv && (st = er_cum_copy2d(&dev, 1, buf[D_CV], tp8, (void *)(job->cv + o), hp8, tp8, rows, msg,
                                                msg_size))) ||
                (job->dc && (st = er_cum_copy2d(&dev, 1, buf[D_DC], tp8, (void *)(job->dc + o), hp8, tp8, rows, msg,
                                                msg_size))))
                goto done;
            if (P.pre) {
                er_ch_args C;
                memset(&C, 0, sizeof C);
                /* three products: S = A' B' and the integer sums qa qb, qw qb (exact in any order) */
                C.lda = k;
                C.ldb = tc;
                C.ldo = tc;
                C.m = tr;
                C.n = tc;
                C.k = k;
                C.a = (const double *)buf[D_AF];
                C.b = (const double *)buf[D_BF];
                C.s = (double *)buf[D_PS];
                if ((st = er_ch_run<1>(&dev, C, 1, msg, msg_size)) != ER_OK) goto done;
                C.a = (const double *)buf[D_QA];
                C.b = (const double *)buf[D_QB];
                C.s = (double *)buf[D_PT];
                if ((st = er_ch_run<1>(&dev, C, 1, msg, msg_size)) != ER_OK) goto done;
                if (job->par.kind != ER_BK_ANY) {
                    C.a = (const double *)buf[D_QW];
                    C.s = (double *)buf[D_PW];
                    if ((st = er_ch_run<1>(&dev, C, 1, msg, msg_size)) != ER_OK) goto done;
                }
            }
            memset(&B, 0, sizeof B);
            B.par = job->par;
            B.par.ldb = tc;
            B.af = (const double *)buf[D_AF];
            B.bf = (const double *)buf[D_BF];
            B.rw = (const double *)buf[D_RW];
            B.ea = job->ea ? (const er_i16 *)buf[D_EA] : NULL;
            B.eb = job->eb ? (const er_i16 *)buf[D_EB] : NULL;
            B.da = job->da ? (const double *)buf[D_DA] : NULL;
            B.db = job->db ? (const double *)buf[D_DB] : NULL;
            B.dc = job->dc ? (const double *)buf[D_DC] : NULL;
            B.cv = job->cv ? (const double *)buf[D_CV] : NULL;
            B.rb = (const er_u64 *)buf[D_RB];
            if (job->qa) { /* gemm_form's quantized magnitudes, or an engine's grids (qa and qb only) */
                B.qa = (const double *)buf[D_QA];
                B.qb = (const double *)buf[D_QB];
            }
            if (job->qw) B.qw = (const double *)buf[D_QW];
            if (job->sa) {
                B.sa = (const er_i32 *)buf[D_SA];
                B.sw = (const er_i32 *)buf[D_SW];
                B.sb = (const er_i32 *)buf[D_SB];
            }
            if (P.pre) {
                B.ps = (const double *)buf[D_PS];
                B.pt = (const double *)buf[D_PT];
                B.pw = (const double *)buf[D_PW];
            }
            B.radius = (double *)buf[D_RAD];
            B.tol = (double *)buf[D_TOL];
            B.low = (er_u64 *)buf[D_LOW];
            B.high = (er_u64 *)buf[D_HIGH];
            B.has_range = (unsigned char *)buf[D_RANGE];
            B.pinf = (unsigned char *)buf[D_PINF];
            B.ninf = (unsigned char *)buf[D_NINF];
            B.nan = (unsigned char *)buf[D_NAN];
            B.nr = tr;
            B.nc = tc;
            if (dev.device >= 0) {
                er_bd_kernel<<<er_cum_blocks((uint64_t)el, ER_BD_THREADS), ER_BD_THREADS>>>(B);
                if ((st = er_cum_sync(&dev, "er_bd_kernel", msg, msg_size)) != ER_OK) goto done;
            } else {
                for (int64_t e = 0; e < el; e++) er_bd_element(B, &B.par, e);
            }
            {
                int64_t d = e0 + o;
                size_t hp1 = (size_t)n, tp1 = (size_t)tc;
                if ((st = er_cum_copy2d(&dev, 0, buf[D_RAD], tp8, out->radius + d, hp8, tp8, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_TOL], tp8, out->tolerance + d, hp8, tp8, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_LOW], tp8, out->low + d, hp8, tp8, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_HIGH], tp8, out->high + d, hp8, tp8, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_RANGE], tp1, out->has_range + d, hp1, tp1, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_PINF], tp1, out->may_pinf + d, hp1, tp1, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_NINF], tp1, out->may_ninf + d, hp1, tp1, rows, msg, msg_size)) ||
                    (st = er_cum_copy2d(&dev, 0, buf[D_NAN], tp1, out->may_nan + d, hp1, tp1, rows, msg, msg_size)))
                    goto done;
            }
        }
    }
done:
    for (int i = 0; i < D_COUNT; i++) er_cum_free(&dev, buf[i]);
    er_cum_close(&dev);
    return st;
}

} /* namespace */

ER_CUM_EXPORT int er_cuda_backend_bounds(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg,
                                         size_t msg_size)
{
    return bounds_run(job, out, e0, device, 0, msg, msg_size);
}

ER_CUM_EXPORT int er_cuda_backend_host_bounds(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg,
                                              size_t msg_size)
{
    return bounds_run(job, out, e0, device, 1, msg, msg_size);
}
