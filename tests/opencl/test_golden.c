/* test_golden.c: golden SHA-256 hashes of a fixed suite of outputs, the same on every backend.
 *
 * The suite is deterministic (fixed seeds, fixed shapes; EXACTREF_SEED has no effect) and is cut into
 * parts; each part's outputs (every output pattern in its storage bytes, little-endian, and the status
 * of every call) are hashed with SHA-256 (sha256.c, checked first against the FIPS 180-4 vectors):
 *   convert        src/er_batch.h's batch: every ordered format pair (those with f8E5M3FNU aside), every
 *                  direction, the option sets {none, saturate, ftz}, every pattern of the narrow
 *                  formats, specials and random patterns of the wide ones; the result pattern and the
 *                  flags of each job
 *   mma.pairs      er_mma for every ordered pair of the 13 float input formats (direction, output
 *                  format, C, saturation and flush cycling with the pair), operands with special values
 *   mma.<dir>      for each direction, every float output format, with and without saturation/flush
 *   mma.layout     batches with broadcast operands, transposed and padded views, k = 0, a longer k
 *   mmai           i8/u8 pairs, with and without C, sums that wrap
 *   scaled         block-scaled mma: every element format pair, both scale formats, several blocks
 *   enclosures     lo, hi and odd (with and without d) for every input format
 *   normal         er_result_normal: index-order emulation, compute f32/f16/bf16/f64/default, with
 *                  and without flush, special values, partial sums restarted on overflow
 *   bounds         er_result_bounds: tolerance, low, high and the flags (has_range, may_pinf, may_ninf,
 *                  may_nan) under normal, any_order (compute formats, flush to zero) and every engine
 *                  model, over the float input formats, block-scaled operands and a batch; on OpenCL
 *                  they come from the bounds kernel (kernels/bounds.cl)
 *   convert.f8E5M3FNU   the batch's pairs with f8E5M3FNU (source, target or both); "convert" holds
 *                  every other pair, so its digest is the one from before that format's row
 *   scaled.f8E5M3FNU    block-scaled mma of f4E2M1FN elements with f8E5M3FNU scales
 * Each part is computed on every backend present: the CPU (ER_BACKEND_CPU), OpenCL where a platform
 * with a device exists (ER_BACKEND_OPENCL, er_convert_batch), CUDA where the backend module and
 * a GPU are found (ER_BACKEND_CUDA, er_cuda_convert_mixed) and the CUDA module's host pass where the
 * module is found (er_cuda_set_host_pass, er_cuda_host_convert_mixed: the kernels' code compiled by
 * nvcc for the host); each must equal tests/golden/hashes.txt, one line per part: "name hex-digest".
 * A mismatch names the part and the backend.
 *
 * Regenerating the golden file (after a deliberate change of the suite or of the semantics):
 *     EXACTREF_GOLDEN_WRITE=1 ./test_golden_hashes        or        ./test_golden_hashes --write [path]
 * writes the CPU's hashes to tests/golden/hashes.txt of the source tree (or to path) and still checks
 * the other backends against them.  EXACTREF_GOLDEN_FILE reads (or writes) another file.
 *
 * The CPU is always checked.  Without an OpenCL platform OpenCL is skipped, unless
 * EXACTREF_REQUIRE_OPENCL=1, which makes that a failure; without the CUDA module or a GPU, CUDA is
 * skipped unless EXACTREF_REQUIRE_CUDA=1; the host pass is skipped without the module, and fails when
 * EXACTREF_CUDA_MODULE names it (ctest does in a CUDA build).  EXACTREF_OPENCL_DEVICE and
 * EXACTREF_CUDA_DEVICE pick the devices.  A build without the CUDA backend (ER_GOLDEN_CUDA 0: no
 * libexactref_cuda for the conversions) skips both CUDA backends and says so.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_batch.h"
#include "er_cuda_backend.h" /* er_cuda_set_host_pass */
#include "exactref/exactref.h"
#ifndef ER_GOLDEN_CUDA
#define ER_GOLDEN_CUDA 0
#endif
#if ER_GOLDEN_CUDA
#include "er_cuda.h" /* er_cuda_convert_mixed, er_cuda_host_convert_mixed */
#endif
#include "sha256.h"

#ifndef ER_GOLDEN_FILE
#define ER_GOLDEN_FILE "tests/golden/hashes.txt"
#endif

#define NFLOAT 13 /* the float formats are the ids 0 .. 12 */
#define MSG 8192

static double now_(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- Deterministic patterns ------------------------------------------------------------------- */

static uint64_t rnd(uint64_t *st) { return er_batch_rand(st); }
static uint64_t below(uint64_t *st, uint64_t n) { return rnd(st) % n; }
static uint64_t mask_(int w) { return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u; }

static int sbytes(int f)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    return fi.storage_bytes;
}

/* zeros, infinities (or what the format has instead), NaN, extremes, either sign */
static uint64_t special_pattern(int f, uint64_t *st)
{
    er_format_info fi;
    uint64_t x;
    er_format_get_info(f, &fi);
    switch (below(st, 6)) {
    case 0: x = 0; break;
    case 1: x = er_convert(ER_FMT_F64, f, UINT64_C(1) << 63, ER_RND_NEAREST_EVEN, 0).bits; break;
    case 2: x = er_convert(ER_FMT_F64, f, UINT64_C(0x7FF0000000000000), ER_RND_NEAREST_EVEN, 0).bits; break;
    case 3: x = er_convert(ER_FMT_F64, f, UINT64_C(0x7FF8000000000001), ER_RND_NEAREST_EVEN, 0).bits; break;
    case 4: x = fi.max_finite_bits; break;
    default: x = fi.min_subnormal_bits; break;
    }
    if (below(st, 2) && fi.is_signed && f != ER_FMT_F8E4M3FNUZ && f != ER_FMT_F8E5M2FNUZ)
        x ^= UINT64_C(1) << (fi.width - 1);
    return x & mask_(fi.width);
}

/* mode 0: any pattern; 1: within 3 binades of 1 (cancellation, ties); spec: percent specials */
static uint64_t gen(int f, uint64_t *st, int mode, int spec)
{
    er_fmt d = er_fmt_get(f);
    uint64_t r = rnd(st), sign = 0, frac;
    int64_t ef;
    if (d.kind != ER_KIND_FLOAT) return r & mask_(d.width);
    if (spec && (int)below(st, 100) < spec) return special_pattern(f, st);
    if (mode == 0) return r & mask_(d.width) & ~mask_(d.pad);
    if (er_fmt_signed(d)) sign = below(st, 2);
    ef = d.bias + (int64_t)below(st, 7) - 3;
    frac = rnd(st) & mask_(d.mbits);
    if (ef < 0) ef = 0;
    if (ef > (int64_t)mask_(d.ebits)) ef = (int64_t)mask_(d.ebits);
    return ((sign << (d.width - 1)) | ((((uint64_t)ef << d.mbits) | frac) << d.pad)) & mask_(d.width);
}

static void put_(unsigned char *p, int bytes, uint64_t x)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(x >> (8 * i));
}

/* A tensor [batch] x rows x cols (batch 0: 2-D), row-major with `pad` extra elements a row, or (trans) the
 * transposed view of a cols x rows array; elements from gen (or all `fill` when fill != ~0). */
typedef struct {
    er_tensor t;
    unsigned char *mem;
    size_t bytes;
} tens;

static void tens_make(tens *T, int f, int64_t batch, int64_t rows, int64_t cols, int trans, int64_t pad,
                      uint64_t *st, int mode, int spec)
{
    int64_t pr = trans ? cols : rows, pc = (trans ? rows : cols) + pad, nb = batch ? batch : 1;
    size_t n = (size_t)(nb * pr * pc), eb = (size_t)sbytes(f);
    int o = batch ? 1 : 0;
    memset(T, 0, sizeof *T);
    T->bytes = n * eb;
    T->mem = (unsigned char *)calloc(T->bytes ? T->bytes : 1, 1);
    if (!T->mem) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++) put_(T->mem + i * eb, (int)eb, gen(f, st, mode, spec));
    T->t.format = f;
    T->t.ndim = batch ? 3 : 2;
    T->t.data = T->mem;
    if (batch) {
        T->t.shape[0] = batch;
        T->t.strides[0] = pr * pc;
    }
    T->t.shape[o] = pr;
    T->t.shape[o + 1] = pc - pad;
    T->t.strides[o] = pc;
    T->t.strides[o + 1] = 1;
    if (trans) T->t = er_tensor_transpose(T->t);
}

/* An output tensor, contiguous, filled with 0xA5 (so an unwritten byte hashes the same everywhere). */
static void tens_out(tens *T, int f, int64_t batch, int64_t rows, int64_t cols)
{
    size_t n = (size_t)((batch ? batch : 1) * rows * cols) * (size_t)sbytes(f);
    memset(T, 0, sizeof *T);
    T->bytes = n;
    T->mem = (unsigned char *)malloc(n ? n : 1);
    if (!T->mem) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(T->mem, 0xA5, n);
    T->t = batch ? er_tensor_3d(f, batch, rows, cols, T->mem) : er_tensor_2d(f, rows, cols, T->mem);
}

static void tens_free(tens *T)
{
    free(T->mem);
    T->mem = NULL;
}

/* ---- Hashing ---------------------------------------------------------------------------------- */

static void hash_u32(er_sha256 *h, uint32_t x)
{
    unsigned char b[4];
    put_(b, 4, x);
    er_sha256_update(h, b, 4);
}

static void hash_u64(er_sha256 *h, uint64_t x)
{
    unsigned char b[8];
    put_(b, 8, x);
    er_sha256_update(h, b, 8);
}

static void hash_tens(er_sha256 *h, const tens *T)
{
    if (T->mem) er_sha256_update(h, T->mem, T->bytes);
}

/* ---- The suite -------------------------------------------------------------------------------- */

typedef struct {
    int backend; /* ER_BACKEND_CPU, ER_BACKEND_OPENCL or ER_BACKEND_CUDA */
    int host;    /* CUDA: through the module's host pass */
    int calls;   /* operations run */
    int errors;  /* calls that returned an unexpected status (printed) */
} ctx;

/* One mma problem, described; run builds the operands from its own seed. */
typedef struct {
    int fa, fb, fc, fd, fs; /* fc, fs: -1 none; fd: -1 no d */
    int block, dir;
    unsigned opts;
    int64_t batch, m, n, k;
    int a2d, b2d, c2d, at, bt;
    int64_t pad;
    int enclose; /* lo, hi and odd too */
    int mode, spec;
    uint64_t seed;
} prob;

static uint64_t gen_scale(int sf, uint64_t *st)
{
    uint64_t r = below(st, 100);
    if (sf == ER_FMT_F8E8M0FNU) {
        if (r < 3) return 0x00;
        if (r < 6) return 0xFE;
        if (r < 8) return 0xFF;
        return (uint64_t)(127 + (int)below(st, 25) - 12);
    }
    if (sf == ER_FMT_F8E5M3FNU) { /* zero, the largest value, NaN, the least (subnormal), else near 1 (0x78) */
        if (r < 3) return 0x00;
        if (r < 5) return 0xFE;
        if (r < 7) return 0xFF;
        if (r < 9) return 0x01;
        return (uint64_t)(0x78 + (int)below(st, 49) - 24);
    }
    if (r < 4) return 0x80 | below(st, 0x7F);
    if (r < 8) return r < 6 ? 0x00 : 0x80;
    if (r < 10) return r < 9 ? 0x7F : 0xFF;
    return below(st, 0x7F);
}

typedef struct {
    tens A, B, C, SA, SB, D, LO, HI, ODD;
    er_mma_args args;
} inst;

static void inst_make(inst *I, const prob *P, int backend)
{
    uint64_t st = P->seed;
    int64_t bA = P->batch && !P->a2d ? P->batch : 0, bB = P->batch && !P->b2d ? P->batch : 0;
    memset(I, 0, sizeof *I);
    tens_make(&I->A, P->fa, bA, P->m, P->k, P->at, P->pad, &st, P->mode, P->spec);
    tens_make(&I->B, P->fb, bB, P->k, P->n, P->bt, P->pad, &st, P->mode, P->spec);
    if (P->fc >= 0) tens_make(&I->C, P->fc, P->batch && !P->c2d ? P->batch : 0, P->m, P->n, 0, P->pad, &st, 1, P->spec);
    if (P->fs >= 0) {
        int64_t nb = (P->k + P->block - 1) / P->block;
        tens_make(&I->SA, P->fs, bA, P->m, nb, 0, 0, &st, 0, 0);
        tens_make(&I->SB, P->fs, bB, nb, P->n, 0, 0, &st, 0, 0);
        for (size_t i = 0; i < I->SA.bytes; i++) I->SA.mem[i] = (unsigned char)gen_scale(P->fs, &st);
        for (size_t i = 0; i < I->SB.bytes; i++) I->SB.mem[i] = (unsigned char)gen_scale(P->fs, &st);
    }
    if (P->fd >= 0) tens_out(&I->D, P->fd, P->batch, P->m, P->n);
    if (P->enclose) {
        tens_out(&I->LO, ER_FMT_F64, P->batch, P->m, P->n);
        tens_out(&I->HI, ER_FMT_F64, P->batch, P->m, P->n);
        tens_out(&I->ODD, ER_FMT_F64, P->batch, P->m, P->n);
    }
    er_mma_args_init(&I->args);
    I->args.a = &I->A.t;
    I->args.b = &I->B.t;
    I->args.c = P->fc >= 0 ? &I->C.t : NULL;
    if (P->fs >= 0) {
        I->args.a_scale = &I->SA.t;
        I->args.b_scale = &I->SB.t;
        I->args.block = P->block;
    }
    I->args.d = P->fd >= 0 ? &I->D.t : NULL;
    if (P->enclose) {
        I->args.lo = &I->LO.t;
        I->args.hi = &I->HI.t;
        I->args.odd = &I->ODD.t;
    }
    I->args.rounding = P->dir;
    I->args.opts = P->opts;
    I->args.backend = backend;
}

static void inst_free(inst *I)
{
    tens *all[] = {&I->A, &I->B, &I->C, &I->SA, &I->SB, &I->D, &I->LO, &I->HI, &I->ODD};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tens_free(all[i]);
}

/* Run one problem on the context's backend and hash its status and outputs. */
static void run_prob(ctx *c, er_sha256 *h, const prob *P)
{
    inst I;
    char msg[MSG] = "";
    int st;
    inst_make(&I, P, c->backend);
    I.args.msg = msg;
    I.args.msg_size = sizeof msg;
    st = er_mma(&I.args);
    c->calls++;
    if (st != ER_OK) {
        c->errors++;
        fprintf(stderr, "  er_mma (%s x %s): status %d: %s\n", er_format_name(P->fa), er_format_name(P->fb), st, msg);
    }
    hash_u32(h, (uint32_t)st);
    hash_tens(h, &I.D);
    hash_tens(h, &I.LO);
    hash_tens(h, &I.HI);
    hash_tens(h, &I.ODD);
    inst_free(&I);
}

static const unsigned opt_cycle[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ, ER_OPT_SATURATE | ER_OPT_FTZ};

/* The conversion batch of the pairs `which` selects (er_batch.h), f8E5M3FNU the format it names: the
 * part "convert" is every pair of the table without f8E5M3FNU (so its digest predates that row), the
 * part "convert.f8E5M3FNU" every pair with it. */
static void part_convert_sel(ctx *c, er_sha256 *h, int which)
{
    uint32_t *spec = NULL, *flags;
    uint64_t *src = NULL, *dst;
    size_t n = er_batch_build_sel(UINT64_C(0x601de5), 8, which, ER_FMT_F8E5M3FNU, &spec, &src);
    char msg[MSG] = "";
    dst = (uint64_t *)malloc(n * sizeof *dst);
    flags = (uint32_t *)malloc(n * sizeof *flags);
    if (!n || !dst || !flags) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    if (c->backend == ER_BACKEND_CPU) {
        er_batch_reference(spec, src, dst, flags, n);
    } else {
        er_status st;
        if (c->backend == ER_BACKEND_OPENCL) {
            st = er_convert_batch(spec, src, dst, flags, n, ER_BACKEND_OPENCL, -1, msg, sizeof msg);
        } else {
#if ER_GOLDEN_CUDA
            st = c->host ? er_cuda_host_convert_mixed(spec, src, dst, flags, n, msg, sizeof msg)
                         : er_cuda_convert_mixed(spec, src, dst, flags, n, -1, msg, sizeof msg);
#else
            st = ER_EUNSUPPORTED; /* not reached: main skips CUDA in such a build */
            snprintf(msg, sizeof msg, "this test was built without libexactref_cuda");
#endif
        }
        if (st != ER_OK) {
            c->errors++;
            fprintf(stderr, "  convert on backend %d: status %d: %s\n", c->backend, st, msg);
            memset(dst, 0, n * sizeof *dst);
            memset(flags, 0, n * sizeof *flags);
        }
    }
    c->calls++;
    hash_u64(h, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        hash_u64(h, dst[i]);
        hash_u32(h, flags[i]);
    }
    free(spec);
    free(src);
    free(dst);
    free(flags);
}

static void part_convert(ctx *c, er_sha256 *h) { part_convert_sel(c, h, ER_BATCH_WITHOUT); }
static void part_convert_e5m3(ctx *c, er_sha256 *h) { part_convert_sel(c, h, ER_BATCH_WITH); }

static prob base_prob(uint64_t seed)
{
    prob P;
    memset(&P, 0, sizeof P);
    P.fc = -1;
    P.fs = -1;
    P.block = 1;
    P.m = 3;
    P.n = 4;
    P.k = 5;
    P.mode = 1;
    P.spec = 8;
    P.seed = seed;
    return P;
}

/* every ordered pair of float input formats */
static void part_mma_pairs(ctx *c, er_sha256 *h)
{
    for (int fa = 0; fa < NFLOAT; fa++)
        for (int fb = 0; fb < NFLOAT; fb++) {
            int q = fa * NFLOAT + fb;
            prob P = base_prob(UINT64_C(0x1000) + (uint64_t)q);
            P.dir = q % ER_RND_COUNT;
            P.fd = (fa + 2 * fb + 1) % NFLOAT;
            P.fc = q % 3 == 0 ? -1 : (3 * fa + fb) % NFLOAT;
            P.opts = opt_cycle[(q / ER_RND_COUNT) % 4];
            P.k = 1 + q % 9;
            P.mode = q % 2;
            run_prob(c, h, &P);
        }
}

/* one direction: every float output format, each with every option set */
static void part_mma_dir(ctx *c, er_sha256 *h, int dir)
{
    for (int fd = 0; fd < NFLOAT; fd++)
        for (int o = 0; o < 2; o++) {
            int q = fd * 2 + o;
            prob P = base_prob(UINT64_C(0x2000) + (uint64_t)(dir * 100 + q));
            P.dir = dir;
            P.fd = fd;
            P.fa = (fd * 5 + dir + o) % NFLOAT;
            P.fb = (fd * 7 + 2 * dir + 3 * o) % NFLOAT;
            P.fc = o ? fd : -1;
            P.opts = opt_cycle[(fd + dir + 2 * o) % 4];
            P.k = 2 + (fd + dir) % 7;
            P.spec = 5;
            run_prob(c, h, &P);
        }
}

static void part_mma_layout(ctx *c, er_sha256 *h)
{
    static const int pairs[][3] = {{ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32}, {ER_FMT_F16, ER_FMT_F16, ER_FMT_F16},
                                   {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_BF16}, {ER_FMT_F32, ER_FMT_F32, ER_FMT_F32},
                                   {ER_FMT_F64, ER_FMT_F64, ER_FMT_F64}, {ER_FMT_TF32, ER_FMT_TF32, ER_FMT_F16}};
    for (int q = 0; q < (int)(sizeof pairs / sizeof pairs[0]); q++) {
        prob P = base_prob(UINT64_C(0x3000) + (uint64_t)q);
        P.fa = pairs[q][0];
        P.fb = pairs[q][1];
        P.fd = pairs[q][2];
        P.fc = pairs[q][2];
        P.dir = q % ER_RND_COUNT;
        P.batch = 3;
        P.m = 4;
        P.n = 5;
        P.k = q == 3 ? 0 : (q == 4 ? 257 : 7 + q);
        P.a2d = q % 2;
        P.b2d = !P.a2d && q % 3 == 0;
        P.c2d = q % 4 == 1;
        P.at = q % 2 == 0;
        P.bt = q % 3 == 1;
        P.pad = q % 3;
        P.mode = q % 2;
        run_prob(c, h, &P);
    }
}

static void part_mmai(ctx *c, er_sha256 *h)
{
    static const int ints[2] = {ER_FMT_I8, ER_FMT_U8};
    for (int q = 0; q < 8; q++) {
        prob P = base_prob(UINT64_C(0x4000) + (uint64_t)q);
        P.fa = ints[q & 1];
        P.fb = ints[(q >> 1) & 1];
        P.fc = q & 4 ? ER_FMT_I32 : -1; /* random i32 values: sums near the ends of the range wrap */
        P.fd = ER_FMT_I32;
        P.k = q & 4 ? 9 : 300;
        P.mode = 0;
        P.spec = 0;
        run_prob(c, h, &P);
    }
}

static void part_scaled(ctx *c, er_sha256 *h)
{
    static const int elems[5] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN};
    static const int blocks[4] = {1, 2, 3, 32};
    for (int x = 0; x < 5; x++)
        for (int y = 0; y < 5; y++)
            for (int s = 0; s < 2; s++) {
                int q = (x * 5 + y) * 2 + s;
                prob P = base_prob(UINT64_C(0x5000) + (uint64_t)q);
                P.fa = elems[x];
                P.fb = elems[y];
                P.fs = s ? ER_FMT_F8E4M3FN : ER_FMT_F8E8M0FNU;
                P.block = blocks[q % 4];
                P.k = P.block == 32 ? 70 : 5 + q % 6;
                P.fd = (q * 5) % NFLOAT;
                P.fc = q % 3 == 1 ? ER_FMT_F32 : -1;
                P.dir = q % ER_RND_COUNT;
                P.opts = opt_cycle[q % 4];
                P.mode = q % 2;
                run_prob(c, h, &P);
            }
}

/* block-scaled mma with f8E5M3FNU (UE5M3) scales: f4E2M1FN elements (the only ones the format scales),
 * several blocks, every direction and option set, with and without C */
static void part_scaled_e5m3(ctx *c, er_sha256 *h)
{
    static const int blocks[4] = {1, 2, 3, 16};
    for (int q = 0; q < 24; q++) {
        prob P = base_prob(UINT64_C(0x5800) + (uint64_t)q);
        P.fa = ER_FMT_F4E2M1FN;
        P.fb = ER_FMT_F4E2M1FN;
        P.fs = ER_FMT_F8E5M3FNU;
        P.block = blocks[q % 4];
        P.k = P.block == 16 ? 40 : 5 + q % 6;
        P.fd = (q * 5) % NFLOAT;
        P.fc = q % 3 == 1 ? ER_FMT_F32 : -1;
        P.dir = q % ER_RND_COUNT;
        P.opts = opt_cycle[q % 4];
        P.mode = q % 2;
        P.batch = q % 5 == 0 ? 2 : 0;
        run_prob(c, h, &P);
    }
}

static void part_enclosures(ctx *c, er_sha256 *h)
{
    for (int fa = 0; fa < NFLOAT; fa++)
        for (int w = 0; w < 2; w++) {
            prob P = base_prob(UINT64_C(0x6000) + (uint64_t)(fa * 2 + w));
            P.fa = fa;
            P.fb = (fa * 5 + 3 + w) % NFLOAT;
            P.fd = w ? -1 : (fa + 1) % NFLOAT;
            P.fc = w ? fa : -1;
            P.dir = fa % ER_RND_COUNT;
            P.enclose = 1;
            P.k = 3 + fa % 6;
            P.mode = w;
            run_prob(c, h, &P);
        }
}

/* normal(): a Result on the context's backend, then normal() for several compute formats and flushes. */
static void normal_prob(ctx *c, er_sha256 *h, const prob *P, const int *computes, int ncomp)
{
    inst I;
    er_result *r = NULL;
    char msg[MSG] = "";
    er_status st;
    inst_make(&I, P, c->backend);
    st = er_result_create(&I.args, &r, msg, sizeof msg);
    c->calls++;
    hash_u32(h, (uint32_t)st);
    if (st != ER_OK) {
        c->errors++;
        fprintf(stderr, "  er_result_create (%s x %s): status %d: %s\n", er_format_name(P->fa),
                er_format_name(P->fb), st, msg);
    } else {
        hash_tens(h, &I.D);
        for (int q = 0; q < ncomp; q++)
            for (int ftz = 0; ftz < 2; ftz++) {
                tens N;
                tens_out(&N, P->fd, P->batch, P->m, P->n);
                st = er_result_normal(r, computes[q], ftz, &N.t, msg, sizeof msg);
                c->calls++;
                if (st != ER_OK) {
                    c->errors++;
                    fprintf(stderr, "  er_result_normal (%s x %s, compute %d): status %d: %s\n",
                            er_format_name(P->fa), er_format_name(P->fb), computes[q], st, msg);
                }
                hash_u32(h, (uint32_t)st);
                hash_tens(h, &N);
                tens_free(&N);
            }
        er_result_free(r);
    }
    inst_free(&I);
}

static void part_normal(ctx *c, er_sha256 *h)
{
    static const int comp_narrow[3] = {-1, ER_FMT_F16, ER_FMT_BF16};
    static const int comp_wide[2] = {ER_FMT_F32, ER_FMT_F64};
    for (int fa = 0; fa < NFLOAT; fa++) {
        prob P = base_prob(UINT64_C(0x7000) + (uint64_t)fa);
        P.fa = fa;
        P.fb = (fa * 3 + 1) % NFLOAT;
        P.fd = (fa + 4) % NFLOAT;
        P.fc = fa % 2 ? (fa + 2) % NFLOAT : -1;
        P.dir = fa % ER_RND_COUNT;
        P.opts = opt_cycle[fa % 4];
        P.k = 4 + fa % 9;
        P.mode = fa % 3 == 0 ? 0 : 1;
        P.spec = 10;
        normal_prob(c, h, &P, fa % 2 ? comp_narrow : comp_wide, fa % 2 ? 3 : 2);
    }
    /* partial sums restarted on overflow: values near the top of f16, bf16 and f32, compute that format */
    {
        static const int fm[3] = {ER_FMT_F16, ER_FMT_BF16, ER_FMT_F32};
        for (int q = 0; q < 3; q++) {
            prob P = base_prob(UINT64_C(0x7100) + (uint64_t)q);
            inst I;
            er_result *r = NULL;
            char msg[MSG] = "";
            er_format_info fi;
            P.fa = P.fb = P.fd = fm[q];
            P.k = 12;
            P.m = 4;
            P.n = 3;
            P.spec = 0;
            inst_make(&I, &P, c->backend);
            er_format_get_info(fm[q], &fi);
            /* A: big values of both signs; B: ones, twos and halves */
            for (int64_t e = 0; e < P.m * P.k; e++) {
                uint64_t x = fi.max_finite_bits - (uint64_t)(e % 5) * (fi.width == 32 ? 0x10000u : 3u);
                if ((e * 7) % 5 == 1) x |= UINT64_C(1) << (fi.width - 1);
                put_(I.A.mem + (size_t)e * (size_t)fi.storage_bytes, fi.storage_bytes, x);
            }
            for (int64_t e = 0; e < P.k * P.n; e++) {
                uint64_t one = er_convert(ER_FMT_F64, fm[q], UINT64_C(0x3FF0000000000000) + (uint64_t)((e % 3) ? 0 : 1)
                                                                  * UINT64_C(0x0010000000000000) * ((e % 2) ? 1 : 0),
                                          ER_RND_NEAREST_EVEN, 0).bits;
                put_(I.B.mem + (size_t)e * (size_t)fi.storage_bytes, fi.storage_bytes, one);
            }
            {
                er_status st = er_result_create(&I.args, &r, msg, sizeof msg);
                c->calls++;
                hash_u32(h, (uint32_t)st);
                if (st == ER_OK) {
                    for (int ftz = 0; ftz < 2; ftz++) {
                        tens N;
                        tens_out(&N, P.fd, 0, P.m, P.n);
                        st = er_result_normal(r, fm[q], ftz, &N.t, msg, sizeof msg);
                        c->calls++;
                        if (st != ER_OK) c->errors++;
                        hash_u32(h, (uint32_t)st);
                        hash_tens(h, &N);
                        tens_free(&N);
                    }
                    er_result_free(r);
                } else {
                    c->errors++;
                }
            }
            inst_free(&I);
        }
    }
}

/* The bounds: a Result on the context's backend, then er_result_bounds under several options; each
 * element's tolerance (its binary64 bits), low, high and flags are hashed. */
static void bounds_prob(ctx *c, er_sha256 *h, const prob *P, const char *const *stds, int nstd, int q0)
{
    static const int comps[5] = {-1, ER_FMT_F32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_F64};
    inst I;
    er_result *r = NULL;
    char msg[MSG] = "";
    er_status st;
    inst_make(&I, P, c->backend);
    st = er_result_create(&I.args, &r, msg, sizeof msg);
    c->calls++;
    hash_u32(h, (uint32_t)st);
    if (st != ER_OK) {
        c->errors++;
        fprintf(stderr, "  er_result_create (%s x %s): status %d: %s\n", er_format_name(P->fa), er_format_name(P->fb),
                st, msg);
        inst_free(&I);
        return;
    }
    for (int q = 0; q < nstd; q++) {
        er_tol_opts o;
        const er_bounds *b;
        er_tol_opts_init(&o);
        if (er_standard_parse(stds[q], &o.standard, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "  standard %s: %s\n", stds[q], msg);
            c->errors++;
            continue;
        }
        /* normal and any_order: a compute format and flush to zero cycling with the problem */
        if (o.standard.kind != ER_STD_ENGINE) o.compute = comps[(q0 + q) % 5];
        o.flush_to_zero = (q0 + q) % 3 == 2;
        st = er_result_bounds(r, &o, &b, msg, sizeof msg);
        c->calls++;
        hash_u32(h, (uint32_t)st);
        if (st != ER_OK) {
            c->errors++;
            fprintf(stderr, "  er_result_bounds (%s x %s, %s): status %d: %s\n", er_format_name(P->fa),
                    er_format_name(P->fb), stds[q], st, msg);
            continue;
        }
        hash_u64(h, (uint64_t)b->count);
        for (int64_t e = 0; e < b->count; e++) {
            uint64_t tb;
            memcpy(&tb, &b->tolerance[e], 8);
            hash_u64(h, tb);
            hash_u64(h, b->low[e]);
            hash_u64(h, b->high[e]);
            hash_u32(h, (uint32_t)(b->has_range[e] | b->may_pinf[e] << 1 | b->may_ninf[e] << 2 | b->may_nan[e] << 3));
        }
    }
    er_result_free(r);
    inst_free(&I);
}

static void part_bounds(ctx *c, er_sha256 *h)
{
    static const char *const sums[] = {"normal", "any_order", "normal"};
    static const char *const engines[] = {"volta", "turing", "ampere", "ampere-tf32", "ada-fp8", "hopper",
                                          "hopper-tf32", "hopper-fp8", "deepgemm-fp8", "blackwell",
                                          "blackwell-f8f6f4", "blackwell-mx", "blackwell-mxf4", "cdna3",
                                          "engine:k=8,f=20,p=13,round=nearest_even,promote=16,group=2"};
    static const int ins[7] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32, ER_FMT_TF32, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2,
                               ER_FMT_F64};
    static const int outs[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN};
    int ne = (int)(sizeof engines / sizeof engines[0]);
    /* the input formats, each with every engine model (a third of them per problem) and the sums */
    for (int q = 0; q < 7 * 3; q++) {
        int fi = q / 3, w = q % 3;
        const char *stds[3 + 5];
        int nstd = 0;
        prob P = base_prob(UINT64_C(0x8000) + (uint64_t)q);
        P.fa = ins[fi];
        P.fb = w == 2 ? ins[(fi + 1) % 7] : ins[fi];
        P.fd = outs[q % 4];
        P.fc = q % 2 ? ER_FMT_F32 : -1;
        P.dir = q % ER_RND_COUNT;
        P.opts = opt_cycle[q % 4];
        P.m = 3;
        P.n = 4;
        P.k = w == 1 ? 150 : 3 + q % 29;
        P.mode = w == 1 ? 1 : q % 2;
        P.spec = w == 2 ? 10 : 0;
        for (int i = 0; i < 3; i++) stds[nstd++] = sums[i];
        for (int e = w; e < ne; e += 3) stds[nstd++] = engines[e];
        bounds_prob(c, h, &P, stds, nstd, q);
    }
    /* block-scaled: MXFP8, MXFP4 (e8m0 scales, block 32) and f4 with f8E4M3FN scales (block 16) */
    {
        static const int el[3][3] = {{ER_FMT_F8E4M3FN, ER_FMT_F8E8M0FNU, 32},
                                     {ER_FMT_F4E2M1FN, ER_FMT_F8E8M0FNU, 32},
                                     {ER_FMT_F4E2M1FN, ER_FMT_F8E4M3FN, 16}};
        static const char *const stds[] = {"normal", "any_order", "blackwell-mx", "blackwell-mxf4", "deepgemm-fp8"};
        for (int q = 0; q < 3; q++) {
            prob P = base_prob(UINT64_C(0x8100) + (uint64_t)q);
            P.fa = P.fb = el[q][0];
            P.fs = el[q][1];
            P.block = el[q][2];
            P.fd = ER_FMT_F32;
            P.fc = q == 1 ? ER_FMT_F32 : -1;
            P.k = 3 * el[q][2] - q;
            P.dir = q;
            bounds_prob(c, h, &P, stds, 5, q);
        }
    }
    /* a batch with a broadcast operand and transposed views */
    {
        static const char *const stds[] = {"normal", "any_order", "hopper", "cdna3"};
        prob P = base_prob(UINT64_C(0x8200));
        P.fa = ER_FMT_BF16;
        P.fb = ER_FMT_F16;
        P.fd = ER_FMT_BF16;
        P.fc = ER_FMT_F32;
        P.batch = 3;
        P.b2d = 1;
        P.at = 1;
        P.k = 40;
        P.dir = ER_RND_NEGATIVE_INF;
        bounds_prob(c, h, &P, stds, 4, 1);
    }
}

/* ---- Parts, the golden file, main --------------------------------------------------------------- */

#define MAXPART 20
typedef struct {
    char name[32];
    int dir; /* mma.<dir>: its direction, else -1 */
    void (*fn)(ctx *, er_sha256 *);
} part;

static int nparts;
static part parts[MAXPART];

static void add_part(const char *name, void (*fn)(ctx *, er_sha256 *), int dir)
{
    snprintf(parts[nparts].name, sizeof parts[nparts].name, "%s", name);
    parts[nparts].fn = fn;
    parts[nparts].dir = dir;
    nparts++;
}

static void list_parts(void)
{
    add_part("convert", part_convert, -1);
    add_part("mma.pairs", part_mma_pairs, -1);
    for (int d = 0; d < ER_RND_COUNT; d++) {
        char nm[32];
        snprintf(nm, sizeof nm, "mma.%s", er_rounding_name(d));
        add_part(nm, NULL, d);
    }
    add_part("mma.layout", part_mma_layout, -1);
    add_part("mmai", part_mmai, -1);
    add_part("scaled", part_scaled, -1);
    add_part("enclosures", part_enclosures, -1);
    add_part("normal", part_normal, -1);
    add_part("bounds", part_bounds, -1);
    add_part("convert.f8E5M3FNU", part_convert_e5m3, -1);
    add_part("scaled.f8E5M3FNU", part_scaled_e5m3, -1);
}

/* Every part's digest on one backend (name: for the lines printed); returns the number of calls that
 * failed. */
static int run_all(int backend, int host, const char *name, char hex[MAXPART][65])
{
    ctx c = {backend, host, 0, 0};
    double t0 = now_();
    for (int i = 0; i < nparts; i++) {
        er_sha256 h;
        unsigned char dig[32];
        double t = now_();
        er_sha256_init(&h);
        if (parts[i].fn) parts[i].fn(&c, &h);
        else part_mma_dir(&c, &h, parts[i].dir);
        er_sha256_final(&h, dig, hex[i]);
        printf("  %-9s %-20s %s  (%.2f s)\n", name, parts[i].name, hex[i], now_() - t);
    }
    printf("  %s: %d calls in %.2f s, %d failed\n", name, c.calls,
           now_() - t0, c.errors);
    fflush(stdout);
    return c.errors;
}

static int sha_selftest(void)
{
    static const struct {
        const char *in;
        const char *out;
    } v[] = {{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
             {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
             {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}};
    int bad = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        er_sha256 h;
        unsigned char d[32];
        char hex[65];
        er_sha256_init(&h);
        er_sha256_update(&h, v[i].in, strlen(v[i].in));
        er_sha256_final(&h, d, hex);
        if (strcmp(hex, v[i].out)) {
            fprintf(stderr, "FAIL sha256(\"%s\") = %s, expected %s\n", v[i].in, hex, v[i].out);
            bad++;
        }
    }
    {
        /* a million 'a's, fed in uneven pieces (FIPS 180-4's long example) */
        er_sha256 h;
        unsigned char d[32];
        char hex[65], buf[1000];
        size_t left = 1000000, piece = 1;
        memset(buf, 'a', sizeof buf);
        er_sha256_init(&h);
        while (left) {
            size_t t = piece < left ? piece : left;
            er_sha256_update(&h, buf, t);
            left -= t;
            piece = piece % 937 + 61; /* at most 997 < sizeof buf */
        }
        er_sha256_final(&h, d, hex);
        if (strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")) {
            fprintf(stderr, "FAIL sha256(10^6 x 'a') = %s\n", hex);
            bad++;
        }
    }
    return bad;
}

/* Read the golden file: the digest of each part (empty where the file has none). */
static int read_golden(const char *path, char gold[MAXPART][65])
{
    char line[512];
    FILE *f = fopen(path, "r");
    for (int i = 0; i < nparts; i++) gold[i][0] = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        char name[64], hex[80];
        if (line[0] == '#' || sscanf(line, "%63s %79s", name, hex) != 2) continue;
        for (int i = 0; i < nparts; i++)
            if (!strcmp(name, parts[i].name) && strlen(hex) == 64) snprintf(gold[i], 65, "%s", hex);
    }
    fclose(f);
    return 0;
}

static int write_golden(const char *path, char hex[MAXPART][65])
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# SHA-256 of each part of the golden suite (tests/opencl/test_golden.c): the same on every backend.\n"
               "# Regenerate with EXACTREF_GOLDEN_WRITE=1 ./test_golden_hashes (or --write [path]).\n");
    for (int i = 0; i < nparts; i++) fprintf(f, "%s %s\n", parts[i].name, hex[i]);
    return fclose(f);
}

static int compare(const char *backend, char hex[MAXPART][65], char gold[MAXPART][65])
{
    int bad = 0;
    for (int i = 0; i < nparts; i++)
        if (strcmp(hex[i], gold[i])) {
            fprintf(stderr, "FAIL %s: part %s: %s, golden %s\n", backend, parts[i].name, hex[i],
                    gold[i][0] ? gold[i] : "(missing)");
            bad++;
        }
    return bad;
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* One 1 x 1 product on CUDA (as er_cuda_set_host_pass says): ER_OK where the backend works. */
static int cuda_probe(char *msg, size_t size)
{
    uint16_t a = 0x3f80, b = 0x3f80;
    float d = 0;
    er_tensor ta = er_tensor_2d(ER_FMT_BF16, 1, 1, &a), tb = er_tensor_2d(ER_FMT_BF16, 1, 1, &b);
    er_tensor td = er_tensor_2d(ER_FMT_F32, 1, 1, &d);
    er_mma_args x;
    msg[0] = '\0';
    er_mma_args_init(&x);
    x.a = &ta;
    x.b = &tb;
    x.d = &td;
    x.backend = ER_BACKEND_CUDA;
    x.msg = msg;
    x.msg_size = size;
    return er_mma(&x);
}

int main(int argc, char **argv)
{
    static char cpu[MAXPART][65], other[MAXPART][65], gold[MAXPART][65];
    const char *path = getenv("EXACTREF_GOLDEN_FILE");
    const char *w = getenv("EXACTREF_GOLDEN_WRITE");
    const char *req = getenv("EXACTREF_REQUIRE_OPENCL");
    int write = w && *w && strcmp(w, "0");
    int require = req && *req && strcmp(req, "0");
    int bad = 0, have_cl;
    char desc[4096];
    if (!path || !*path) path = ER_GOLDEN_FILE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--write")) {
            write = 1;
            if (i + 1 < argc) path = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--write [path]]\n", argv[0]);
            return 2;
        }
    }
    if (sha_selftest()) return 1;
    printf("sha256: the FIPS 180-4 vectors pass\n");
    list_parts();

    printf("cpu:\n");
    bad += run_all(ER_BACKEND_CPU, 0, "cpu", cpu) != 0;
    if (write) {
        if (write_golden(path, cpu)) {
            fprintf(stderr, "FAIL cannot write %s\n", path);
            return 1;
        }
        printf("wrote %s\n", path);
    }
    if (read_golden(path, gold)) {
        fprintf(stderr, "FAIL cannot read the golden file %s\n", path);
        return 1;
    }
    bad += compare("cpu", cpu, gold);

    have_cl = er_opencl_describe(desc, sizeof desc) == ER_OK && strstr(desc, "device 0") != NULL;
    if (!have_cl) {
        printf("opencl: no platform or device%s\n%s", require ? " (EXACTREF_REQUIRE_OPENCL=1: a failure)" : ": skipped",
               desc);
        if (require) bad++;
    } else {
        printf("opencl:\n");
        bad += run_all(ER_BACKEND_OPENCL, 0, "opencl", other) != 0;
        bad += compare("opencl", other, gold);
    }
    for (int host = 0; host < 2; host++) {
        const char *name = host ? "cuda_host" : "cuda";
        char msg[MSG];
        int st;
        er_cuda_set_host_pass(host);
        st = cuda_probe(msg, sizeof msg);
        if (!ER_GOLDEN_CUDA) {
            printf("%s: skipped (this build has no CUDA backend)\n", name);
        } else if (st == ER_OK) {
            printf("%s:\n", name);
            bad += run_all(ER_BACKEND_CUDA, host, name, other) != 0;
            bad += compare(name, other, gold);
        } else if (host ? getenv("EXACTREF_CUDA_MODULE") != NULL : env_on("EXACTREF_REQUIRE_CUDA")) {
            printf("%s: cannot start (%s): a failure (%s)\n", name, msg,
                   host ? "EXACTREF_CUDA_MODULE names the module" : "EXACTREF_REQUIRE_CUDA=1");
            bad++;
        } else {
            printf("%s: skipped (%s)\n", name, msg);
        }
    }
    er_cuda_set_host_pass(0);
    printf(bad ? "golden: FAILED\n" : "golden: every part matches %s\n", path);
    return bad ? 1 : 0;
}
