/* er_tile.h: how a device backend cuts a problem into tiles (internal, not installed): the tile plan,
 * the chunk cap from the environment, and for the exact engine's kernels the tile's parameter block,
 * the packing of its operands into contiguous buffers and the scatter of its results through the
 * output tensors' strides.  The OpenCL backend (opencl/) and the CUDA module (cuda/, compiled as C++
 * by nvcc) share this one copy, so that both cut, pack and scatter alike. */
#ifndef ER_TILE_H
#define ER_TILE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "er_host.h"
#include "exactref/core/er_mma_params.h"

/* ------------------------------------------------------------------------------------------------ */
/* The plan                                                                                           */

/* Whether a tile of nbt batches, nr rows and nc columns fits the backend's limits (1) or not (0).  It
 * must be monotone: a tile that fits still fits with fewer batches, rows or columns. */
typedef int (*er_tile_fits_fn)(const void *ctx, uint64_t nbt, uint64_t nr, uint64_t nc);

/*
 * The tile of a batch x m x n output (each at least 1): as many whole batches as fit (and at most cap
 * elements), else one batch's rows nr and columns nc: the columns halved until one row fits, then as
 * many rows as fit.  0 if not even one element fits.
 */
static inline int er_tile_plan(uint64_t batch, uint64_t m, uint64_t n, uint64_t cap, er_tile_fits_fn fits,
                               const void *ctx, int64_t *nbt, int64_t *nr, int64_t *nc)
{
    uint64_t c, r, lo, hi;
    if (batch < 1) batch = 1;
    if (m < 1) m = 1;
    if (n < 1) n = 1;
    if (cap < 1) cap = 1;
    if (m * n <= cap && fits(ctx, 1, m, n)) {
        lo = 1; /* the most batches that fit: fits is monotone in nbt */
        hi = batch < cap / (m * n) ? batch : cap / (m * n);
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            if (fits(ctx, mid, m, n)) lo = mid; else hi = mid - 1;
        }
        *nbt = (int64_t)lo;
        *nr = (int64_t)m;
        *nc = (int64_t)n;
        return 1;
    }
    c = n < cap ? n : cap;
    while (c > 1 && !fits(ctx, 1, 1, c)) c = (c + 1) / 2;
    if (!fits(ctx, 1, 1, c)) return 0;
    lo = 1;
    hi = m < cap / c ? m : cap / c;
    if (hi < 1) hi = 1;
    while (lo < hi) { /* fits is monotone in the rows */
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(ctx, 1, mid, c)) lo = mid; else hi = mid - 1;
    }
    r = lo;
    *nbt = 1;
    *nr = (int64_t)r;
    *nc = (int64_t)c;
    return 1;
}

/* The chunk cap of environment variable var (EXACTREF_OPENCL_MAX_CHUNK, EXACTREF_CUDA_MAX_CHUNK): at
 * most this many output elements per tile, for tests; 0 when unset or not a positive integer. */
static inline uint64_t er_tile_env_cap(const char *var)
{
    const char *env = getenv(var);
    if (env && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (end != env && !*end && v > 0) return (uint64_t)v;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* The exact engine's tiles                                                                           */

/* The buffers of a tile that every device backend has, in this order (a backend may put its own
 * before or after them): the packed operands, then the 64-bit outputs. */
enum { ER_TB_A, ER_TB_B, ER_TB_SA, ER_TB_SB, ER_TB_C, ER_TB_D, ER_TB_LO, ER_TB_HI, ER_TB_ODD, ER_TB_COUNT };

/* What the tiles are cut from: the caller's operands and outputs, their views, the validated shape. */
typedef struct {
    const er_mma_args *args;  /* operands, rounding, options, block; outputs d, lo, hi, odd */
    er_view a, b, c, sa, sb;
    int a3, b3, c3, sa3, sb3; /* operands with their own batch dimension (else broadcast) */
    int kind, scaled, has_c;  /* mmai; block-scaled; C given */
    int acc_lo, acc_nd;       /* the exact accumulator's window (the front door's) */
    int64_t batch, m, n, k, nblocks;
    int want;                 /* ER_MW_*: the outputs, 64 bits each per element on the device */
    int compute, ftz;         /* normal(): the compute format and flush_to_zero (else 0) */
} er_tiling;

/* The tiling of a validated problem's args (its outputs already the ones to write), for the exact
 * engine (normal == 0: D and the enclosures args asks for) or normal() (D only). */
static inline void er_tiling_init(er_tiling *T, const er_mma_args *args, int kind, int scaled, int has_c, int acc_lo,
                                  int acc_nd, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t nblocks,
                                  int normal, int compute, int ftz)
{
    memset(T, 0, sizeof *T);
    T->args = args;
    T->a = er_view_of(args->a);
    T->b = er_view_of(args->b);
    if (has_c) T->c = er_view_of(args->c);
    if (scaled) {
        T->sa = er_view_of(args->a_scale);
        T->sb = er_view_of(args->b_scale);
    }
    T->a3 = args->a->ndim == 3;
    T->b3 = args->b->ndim == 3;
    T->c3 = args->c && args->c->ndim == 3;
    T->sa3 = args->a_scale && args->a_scale->ndim == 3;
    T->sb3 = args->b_scale && args->b_scale->ndim == 3;
    T->kind = kind;
    T->scaled = scaled;
    T->has_c = has_c;
    T->acc_lo = acc_lo;
    T->acc_nd = acc_nd;
    T->batch = batch;
    T->m = m;
    T->n = n;
    T->k = k;
    T->nblocks = nblocks;
    T->want = kind || normal ? ER_MW_D
                             : (args->d ? ER_MW_D : 0) | (args->lo ? ER_MW_LO : 0) | (args->hi ? ER_MW_HI : 0) |
                                   (args->odd ? ER_MW_ODD : 0);
    T->compute = compute;
    T->ftz = ftz;
}

/* Bytes of each common buffer (ER_TB_*) of a tile of nbt batches, nr rows and nc columns (0 for a
 * buffer not used). */
static inline void er_tile_sizes(const er_tiling *T, uint64_t nbt, uint64_t nr, uint64_t nc, uint64_t sz[ER_TB_COUNT])
{
    uint64_t k = (uint64_t)T->k, nblk = (uint64_t)T->nblocks, el = nbt * nr * nc;
    memset(sz, 0, ER_TB_COUNT * sizeof sz[0]);
    sz[ER_TB_A] = (T->a3 ? nbt : 1) * nr * k * (uint64_t)T->a.bytes;
    sz[ER_TB_B] = (T->b3 ? nbt : 1) * k * nc * (uint64_t)T->b.bytes;
    if (T->scaled) {
        sz[ER_TB_SA] = (T->sa3 ? nbt : 1) * nr * nblk;
        sz[ER_TB_SB] = (T->sb3 ? nbt : 1) * nblk * nc;
    }
    if (T->has_c) sz[ER_TB_C] = (T->c3 ? nbt : 1) * nr * nc * (uint64_t)T->c.bytes;
    sz[ER_TB_D] = T->want & ER_MW_D ? el * 8 : 0;
    sz[ER_TB_LO] = T->want & ER_MW_LO ? el * 8 : 0;
    sz[ER_TB_HI] = T->want & ER_MW_HI ? el * 8 : 0;
    sz[ER_TB_ODD] = T->want & ER_MW_ODD ? el * 8 : 0;
}

/* The kernels' parameter block (core/er_mma_params.h) of a tile of nbt batches, nr rows, nc columns. */
static inline void er_tile_params(const er_tiling *T, int64_t nbt, int64_t nr, int64_t nc, er_i64 prm[ER_MP_COUNT])
{
    const er_mma_args *A = T->args;
    memset(prm, 0, ER_MP_COUNT * sizeof prm[0]);
    prm[ER_MP_KIND] = T->kind;
    prm[ER_MP_FA] = A->a->format;
    prm[ER_MP_FB] = A->b->format;
    prm[ER_MP_FC] = T->has_c ? A->c->format : -1;
    prm[ER_MP_FS] = T->scaled ? A->a_scale->format : -1;
    prm[ER_MP_FD] = A->d ? A->d->format : ER_FMT_F64;
    prm[ER_MP_WANT] = T->want;
    prm[ER_MP_DIR] = A->rounding;
    prm[ER_MP_OPTS] = (er_i64)A->opts;
    prm[ER_MP_ACC_LO] = T->acc_lo;
    prm[ER_MP_ACC_ND] = T->acc_nd;
    prm[ER_MP_K] = T->k;
    prm[ER_MP_BLOCK] = T->scaled ? A->block : 1;
    prm[ER_MP_NBLK] = T->nblocks;
    prm[ER_MP_NC] = nc;
    prm[ER_MP_NR] = nr;
    prm[ER_MP_TOTAL] = nbt * nr * nc;
    prm[ER_MP_A_BS] = T->a3 ? nr * T->k : 0;
    prm[ER_MP_B_BS] = T->b3 ? T->k * nc : 0;
    prm[ER_MP_SA_BS] = T->sa3 ? nr * T->nblocks : 0;
    prm[ER_MP_SB_BS] = T->sb3 ? T->nblocks * nc : 0;
    prm[ER_MP_C_BS] = T->c3 ? nr * nc : 0;
    prm[ER_MP_COMPUTE] = T->compute;
    prm[ER_MP_FTZ] = T->ftz;
}

/* The operands a tile reads (a's rows, b's columns, the scales' rows and columns, c) into dst[ER_TB_A]
 * .. dst[ER_TB_C], each row-major in its storage size. */
static inline void er_tile_pack(const er_tiling *T, unsigned char *const dst[ER_TB_COUNT], int64_t b0, int64_t nbt,
                                int64_t i0, int64_t nr, int64_t j0, int64_t nc)
{
    er_view_pack(dst[ER_TB_A], &T->a, T->a3 ? b0 : 0, T->a3 ? nbt : 1, i0, nr, 0, T->k);
    er_view_pack(dst[ER_TB_B], &T->b, T->b3 ? b0 : 0, T->b3 ? nbt : 1, 0, T->k, j0, nc);
    if (T->scaled) {
        er_view_pack(dst[ER_TB_SA], &T->sa, T->sa3 ? b0 : 0, T->sa3 ? nbt : 1, i0, nr, 0, T->nblocks);
        er_view_pack(dst[ER_TB_SB], &T->sb, T->sb3 ? b0 : 0, T->sb3 ? nbt : 1, 0, T->nblocks, j0, nc);
    }
    if (T->has_c) er_view_pack(dst[ER_TB_C], &T->c, T->c3 ? b0 : 0, T->c3 ? nbt : 1, i0, nr, j0, nc);
}

/* A tile's 64-bit results (src[ER_TB_D] .. src[ER_TB_ODD]) into the output tensors through their
 * strides; mmai's sums wrapped to int32, each one out of its range counted in *wrapped. */
static inline void er_tile_scatter(const er_tiling *T, unsigned char *const src[ER_TB_COUNT], int64_t b0,
                                   int64_t nbt, int64_t i0, int64_t nr, int64_t j0, int64_t nc, int64_t *wrapped)
{
    const er_mma_args *A = T->args;
    const uint64_t *od = (const uint64_t *)src[ER_TB_D], *olo = (const uint64_t *)src[ER_TB_LO];
    const uint64_t *ohi = (const uint64_t *)src[ER_TB_HI], *oodd = (const uint64_t *)src[ER_TB_ODD];
    int db = A->d ? er_storage_bytes(A->d->format) : 0;
    int64_t x = 0;
    for (int64_t b = b0; b < b0 + nbt; b++)
        for (int64_t i = i0; i < i0 + nr; i++)
            for (int64_t j = j0; j < j0 + nc; j++, x++) {
                if (T->kind) {
                    int64_t s = (int64_t)od[x];
                    if (s < INT32_MIN || s > INT32_MAX) (*wrapped)++;
                    er_tensor_store(A->d, b, i, j, (uint64_t)s & 0xFFFFFFFFu, 4);
                    continue;
                }
                if (T->want & ER_MW_D) er_tensor_store(A->d, b, i, j, od[x], db);
                if (T->want & ER_MW_LO) er_tensor_store(A->lo, b, i, j, olo[x], 8);
                if (T->want & ER_MW_HI) er_tensor_store(A->hi, b, i, j, ohi[x], 8);
                if (T->want & ER_MW_ODD) er_tensor_store(A->odd, b, i, j, oodd[x], 8);
            }
}

#endif /* ER_TILE_H */
