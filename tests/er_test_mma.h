/* er_test_mma.h: random engine problems for the backend tests (tests/opencl/test_opencl_mma.c and
 * tests/cuda/test_cuda_mma.c share it): patterns of every format with special values, tensors with
 * batches, transposes and padding, block scales, and the output tensors.  Static functions: include
 * once per test program, after er_test.h and exactref/exactref.h. */
#ifndef ER_TEST_MMA_H
#define ER_TEST_MMA_H

#define ER_MSG 8192
#define NFLOAT 13 /* the float formats are the ids 0 .. 12 */

static double now_(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t below(uint64_t *rng, uint64_t n) { return er_test_rand(rng) % n; }

static uint64_t mask_(int w) { return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u; }

static int sbytes(int f)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    return fi.storage_bytes;
}

/* ---- Patterns ---------------------------------------------------------------------------------- */

enum { GEN_UNIFORM, GEN_BAND, GEN_FEWBITS, GEN_COUNT };

/* A special pattern of float format f: zeros, infinities, NaNs, extremes (either sign). */
static uint64_t special_pattern(int f, uint64_t *rng)
{
    er_format_info fi;
    uint64_t sign, x;
    er_format_get_info(f, &fi);
    sign = fi.is_signed ? UINT64_C(1) << (fi.width - 1) : 0u;
    switch (below(rng, 6)) {
    case 0: x = er_convert(ER_FMT_F64, f, 0, ER_RND_NEAREST_EVEN, 0).bits; break;               /* +0 */
    case 1: x = er_convert(ER_FMT_F64, f, UINT64_C(1) << 63, ER_RND_NEAREST_EVEN, 0).bits; break; /* -0 */
    case 2: x = er_convert(ER_FMT_F64, f, UINT64_C(0x7FF0000000000000), ER_RND_NEAREST_EVEN, 0).bits; break;
    case 3: /* a NaN, any payload where the format has several */
        x = er_convert(ER_FMT_F64, f, UINT64_C(0x7FF0000000000000) | (er_test_rand(rng) & mask_(52)) | 1u,
                       ER_RND_NEAREST_EVEN, 0).bits;
        break;
    case 4: x = fi.max_finite_bits; break;
    default: x = fi.min_subnormal_bits; break;
    }
    if (below(rng, 2) && fi.is_signed && (f != ER_FMT_F8E4M3FNUZ && f != ER_FMT_F8E5M2FNUZ)) x ^= sign;
    return x & mask_(fi.width);
}

/*
 * A random pattern of format f.  Integers: any.  Floats: GEN_UNIFORM any pattern; GEN_BAND exponents
 * within 3 binades of 1 (sums that cancel and land near rounding boundaries); GEN_FEWBITS values near 1
 * with at most two fraction bits (exact cancellations, exact zeros, ties).  `spec` percent specials.
 */
static uint64_t gen_pattern(int f, uint64_t *rng, int mode, int spec)
{
    er_fmt d = er_fmt_get(f);
    uint64_t r = er_test_rand(rng), frac, sign = 0;
    int64_t ef;
    if (d.kind != ER_KIND_FLOAT) return r & mask_(d.width);
    if (spec && (int)below(rng, 100) < spec) return special_pattern(f, rng);
    if (mode == GEN_UNIFORM) return r & mask_(d.width) & ~mask_(d.pad);
    if (er_fmt_signed(d)) sign = below(rng, 2);
    if (mode == GEN_BAND) {
        ef = d.bias + (int64_t)below(rng, 7) - 3;
        frac = er_test_rand(rng) & mask_(d.mbits);
    } else {
        ef = d.bias + (int64_t)below(rng, 3) - 1;
        frac = d.mbits >= 2 ? (below(rng, 4) << (d.mbits - 2)) : er_test_rand(rng) & mask_(d.mbits);
    }
    if (ef < 0) ef = 0;
    if (ef > (int64_t)mask_(d.ebits)) ef = (int64_t)mask_(d.ebits);
    return ((sign << (d.width - 1)) | ((((uint64_t)ef << d.mbits) | frac) << d.pad)) & mask_(d.width);
}

static void put_(unsigned char *p, int bytes, uint64_t x)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(x >> (8 * i)); /* little-endian */
}

/* ---- Problems ---------------------------------------------------------------------------------- */

/*
 * A tensor of logical shape [batch] x rows x cols (batch 0: 2-D), stored either row-major with `pad`
 * extra elements per row, or (trans) as the transpose of a row-major cols x rows array (a transposed
 * view), each element a random pattern of its format.
 */
typedef struct {
    er_tensor t;
    unsigned char *mem;
    size_t bytes;
} tens;

static void tens_make(tens *T, int f, int64_t batch, int64_t rows, int64_t cols, int trans, int64_t pad, uint64_t *rng,
                      int mode, int spec)
{
    int64_t pr = trans ? cols : rows, pc = (trans ? rows : cols) + pad, nb = batch ? batch : 1;
    size_t n = (size_t)(nb * pr * pc), eb = (size_t)sbytes(f);
    memset(T, 0, sizeof *T);
    T->bytes = n * eb;
    T->mem = (unsigned char *)malloc(T->bytes ? T->bytes : 1);
    ck_assert(T->mem != NULL);
    for (size_t i = 0; i < n; i++) put_(T->mem + i * eb, (int)eb, gen_pattern(f, rng, mode, spec));
    T->t.format = f;
    T->t.ndim = batch ? 3 : 2;
    T->t.data = T->mem;
    {
        int o = batch ? 1 : 0;
        if (batch) {
            T->t.shape[0] = batch;
            T->t.strides[0] = pr * pc;
        }
        T->t.shape[o] = pr;
        T->t.shape[o + 1] = pc - pad;
        T->t.strides[o] = pc;
        T->t.strides[o + 1] = 1;
    }
    if (trans) T->t = er_tensor_transpose(T->t);
}

static void tens_free(tens *T)
{
    free(T->mem);
    T->mem = NULL;
}

typedef struct {
    int fa, fb, fc, fs; /* fc, fs: -1 for none */
    int block;
    int64_t batch, m, n, k; /* batch 0: 2-D */
    int a2d, b2d, c2d;      /* with a batch: that operand 2-D (broadcast) */
    int at, bt;             /* transposed views */
    int64_t pad;
    tens A, B, C, SA, SB;
} prob;

static int64_t nblocks_(const prob *P) { return P->fs < 0 ? 0 : (P->k + P->block - 1) / P->block; }

/* A scale pattern: mostly moderate, and 2^-127, 2^127, NaN; for f8E4M3FN also negative and zero. */
static uint64_t gen_scale(int sf, uint64_t *rng)
{
    uint64_t r = below(rng, 100);
    if (sf == ER_FMT_F8E8M0FNU) {
        if (r < 3) return 0x00;
        if (r < 6) return 0xFE;
        if (r < 8) return 0xFF;
        return (uint64_t)(127 + (int)below(rng, 25) - 12);
    }
    if (r < 4) return 0x80 | below(rng, 0x7F);
    if (r < 8) return r < 6 ? 0x00 : 0x80;
    if (r < 10) return r < 9 ? 0x7F : 0xFF;
    return below(rng, 0x7F);
}

static void prob_make(prob *P, uint64_t *rng, int mode, int spec)
{
    int64_t bA = P->batch && !P->a2d ? P->batch : 0, bB = P->batch && !P->b2d ? P->batch : 0;
    tens_make(&P->A, P->fa, bA, P->m, P->k, P->at, P->pad, rng, mode, spec);
    tens_make(&P->B, P->fb, bB, P->k, P->n, P->bt, P->pad, rng, mode, spec);
    if (P->fc >= 0)
        tens_make(&P->C, P->fc, P->batch && !P->c2d ? P->batch : 0, P->m, P->n, 0, P->pad, rng,
                  mode == GEN_UNIFORM ? GEN_UNIFORM : GEN_BAND, spec);
    if (P->fs >= 0) {
        int64_t nb = nblocks_(P);
        tens_make(&P->SA, P->fs, bA, P->m, nb, 0, 0, rng, GEN_UNIFORM, 0);
        tens_make(&P->SB, P->fs, bB, nb, P->n, 0, 0, rng, GEN_UNIFORM, 0);
        for (size_t i = 0; i < P->SA.bytes; i++) P->SA.mem[i] = (unsigned char)gen_scale(P->fs, rng);
        for (size_t i = 0; i < P->SB.bytes; i++) P->SB.mem[i] = (unsigned char)gen_scale(P->fs, rng);
    }
}

static void prob_free(prob *P)
{
    tens_free(&P->A);
    tens_free(&P->B);
    tens_free(&P->C);
    tens_free(&P->SA);
    tens_free(&P->SB);
}

/* ---- Running one configuration on the three paths --------------------------------------------- */

typedef struct {
    int dfmt, dir;
    unsigned opts;
    int encl;  /* also lo, hi, odd */
    int dtrans; /* d as a transposed view */
} cfg;

/* The outputs of one run (each filled with 0xA5 first: nothing left unwritten can pass). */
typedef struct {
    tens d, lo, hi, odd;
    er_mma_stats stats;
    int st;
    char msg[ER_MSG];
} outs;

static void out_alloc(tens *T, int f, int64_t batch, int64_t m, int64_t n, int trans)
{
    int64_t nb = batch ? batch : 1;
    memset(T, 0, sizeof *T);
    T->bytes = (size_t)(nb * m * n) * (size_t)sbytes(f);
    T->mem = (unsigned char *)malloc(T->bytes ? T->bytes : 1);
    ck_assert(T->mem != NULL);
    memset(T->mem, 0xA5, T->bytes);
    if (trans) {
        T->t = batch ? er_tensor_3d(f, batch, n, m, T->mem) : er_tensor_2d(f, n, m, T->mem);
        T->t = er_tensor_transpose(T->t);
    } else {
        T->t = batch ? er_tensor_3d(f, batch, m, n, T->mem) : er_tensor_2d(f, m, n, T->mem);
    }
}

#endif /* ER_TEST_MMA_H */
