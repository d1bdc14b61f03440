/* er_test_mma.h: random engine problems for the backend tests (tests/backends/test_backend_mma.c): patterns of every format with special values, tensors with
 * batches, transposes and padding, block scales, the output tensors, and the run of one problem on
 * the CPU (both strategies) and on the backend under test with every output compared.  Static functions: include
 * once per test program, after er_test.h and exactref/exactref.h. */
#ifndef ER_TEST_MMA_H
#define ER_TEST_MMA_H

#include "exactref/core/er_round.h"

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

/* ---- The comparison with the CPU engine, for the backend under test ------------------------------
 * The test program defines before including this file ER_TEST_BACKEND (the backend under test: an
 * expression), ER_TEST_BACKEND_NAME (a string expression for the messages) and ER_TEST_RUN(args) (one
 * engine call), and after it backend_stats (its own counts' rules). */
static long g_calls;      /* engine calls on the backend under test */
static double g_dev_time; /* their time */
static void backend_stats(const char *ctx, const er_mma_stats *s, int mmai, const cfg *c, const char *d);

static void run_one(const prob *P, const cfg *c, int backend, int strategy, outs *o)
{
    er_mma_args x;
    int mmai = er_fmt_get(P->fa).kind != ER_KIND_FLOAT;
    int dfmt = mmai ? ER_FMT_I32 : c->dfmt;
    double t = now_();
    memset(o, 0, sizeof *o);
    out_alloc(&o->d, dfmt, P->batch, P->m, P->n, c->dtrans);
    if (c->encl) {
        out_alloc(&o->lo, ER_FMT_F64, P->batch, P->m, P->n, 0);
        out_alloc(&o->hi, ER_FMT_F64, P->batch, P->m, P->n, 0);
        out_alloc(&o->odd, ER_FMT_F64, P->batch, P->m, P->n, 0);
    }
    er_mma_args_init(&x);
    x.a = &P->A.t;
    x.b = &P->B.t;
    x.c = P->fc >= 0 ? &P->C.t : NULL;
    if (P->fs >= 0) {
        x.a_scale = &P->SA.t;
        x.b_scale = &P->SB.t;
        x.block = P->block;
    }
    x.d = &o->d.t;
    x.rounding = c->dir;
    x.opts = c->opts;
    if (c->encl) {
        x.lo = &o->lo.t;
        x.hi = &o->hi.t;
        x.odd = &o->odd.t;
    }
    x.threads = 1;
    x.strategy = strategy;
    x.backend = backend;
    x.stats = &o->stats;
    x.msg = o->msg;
    x.msg_size = sizeof o->msg;
    o->st = ER_TEST_RUN(&x);
    if (backend == ER_TEST_BACKEND) {
        g_calls++;
        g_dev_time += now_() - t;
    }
}

static void outs_free(outs *o)
{
    tens_free(&o->d);
    tens_free(&o->lo);
    tens_free(&o->hi);
    tens_free(&o->odd);
}

static void describe(const prob *P, const cfg *c, char *buf, size_t size)
{
    snprintf(buf, size,
             "a %s%s, b %s%s, c %s, scales %s (block %d), batch %lld (a2d %d b2d %d c2d %d), m %lld n %lld k %lld, "
             "pad %lld; d %s%s, %s, opts 0x%x, enclosures %d",
             er_format_name(P->fa), P->at ? "^T" : "", er_format_name(P->fb), P->bt ? "^T" : "",
             P->fc >= 0 ? er_format_name(P->fc) : "none", P->fs >= 0 ? er_format_name(P->fs) : "none", P->block,
             (long long)P->batch, P->a2d, P->b2d, P->c2d, (long long)P->m, (long long)P->n, (long long)P->k,
             (long long)P->pad, er_format_name(c->dfmt), c->dtrans ? "^T" : "", er_rounding_name(c->dir), c->opts,
             c->encl);
}

/* The first differing element of two output buffers, or -1. */
static long first_diff(const tens *x, const tens *y, int f)
{
    int eb = sbytes(f);
    for (size_t i = 0; i < x->bytes; i += (size_t)eb)
        if (memcmp(x->mem + i, y->mem + i, (size_t)eb)) return (long)(i / (size_t)eb);
    return -1;
}

static uint64_t get_(const tens *x, int f, long i)
{
    int eb = sbytes(f);
    uint64_t v = 0;
    for (int b = 0; b < eb; b++) v |= (uint64_t)x->mem[(size_t)i * (size_t)eb + (size_t)b] << (8 * b);
    return v;
}

static void same_or_abort(const char *ctx, const char *what, const char *path, const tens *ref, const tens *got, int f,
                          const prob *P, const cfg *c)
{
    long i = first_diff(ref, got, f);
    if (i >= 0) {
        char d[1024];
        describe(P, c, d, sizeof d);
        ck_abort_msg("%s: %s differs on %s at storage element %ld: CPU exact 0x%llx, %s 0x%llx [%s]", ctx, what, path,
                     i, (unsigned long long)get_(ref, f, i), path, (unsigned long long)get_(got, f, i), d);
    }
}

/* Run P under c on the CPU (EXACT and AUTO) and on the backend under test; abort on any difference. */
static void check3(const char *ctx, const prob *P, const cfg *c, er_mma_stats *cl_stats)
{
    outs ex, au, cl;
    char d[1024];
    int mmai = er_fmt_get(P->fa).kind != ER_KIND_FLOAT;
    int dfmt = mmai ? ER_FMT_I32 : c->dfmt;
    run_one(P, c, ER_BACKEND_CPU, ER_STRATEGY_EXACT, &ex);
    run_one(P, c, ER_BACKEND_CPU, ER_STRATEGY_AUTO, &au);
    run_one(P, c, ER_TEST_BACKEND, ER_STRATEGY_AUTO, &cl);
    describe(P, c, d, sizeof d);
    ck_assert_msg(ex.st == ER_OK, "%s: CPU exact: %s: %s [%s]", ctx, er_status_string(ex.st), ex.msg, d);
    ck_assert_msg(au.st == ER_OK, "%s: CPU auto: %s: %s [%s]", ctx, er_status_string(au.st), au.msg, d);
    ck_assert_msg(cl.st == ER_OK, "%s: %s: %s: %s [%s]", ctx, ER_TEST_BACKEND_NAME, er_status_string(cl.st), cl.msg, d);
    same_or_abort(ctx, "d", "CPU auto", &ex.d, &au.d, dfmt, P, c);
    same_or_abort(ctx, "d", ER_TEST_BACKEND_NAME, &ex.d, &cl.d, dfmt, P, c);
    if (c->encl) {
        same_or_abort(ctx, "lo", ER_TEST_BACKEND_NAME, &ex.lo, &cl.lo, ER_FMT_F64, P, c);
        same_or_abort(ctx, "hi", ER_TEST_BACKEND_NAME, &ex.hi, &cl.hi, ER_FMT_F64, P, c);
        same_or_abort(ctx, "odd", ER_TEST_BACKEND_NAME, &ex.odd, &cl.odd, ER_FMT_F64, P, c);
    }
    ck_assert_msg(cl.stats.elements == ex.stats.elements, "%s: stats.elements %lld, CPU %lld [%s]", ctx,
                  (long long)cl.stats.elements, (long long)ex.stats.elements, d);
    ck_assert_msg(cl.stats.wrapped == ex.stats.wrapped && au.stats.wrapped == ex.stats.wrapped,
                  "%s: stats.wrapped: %s %lld, CPU exact %lld, CPU auto %lld [%s]", ctx, ER_TEST_BACKEND_NAME,
                  (long long)cl.stats.wrapped, (long long)ex.stats.wrapped, (long long)au.stats.wrapped, d);
    backend_stats(ctx, &cl.stats, mmai, c, d);
    ck_assert_str_eq(cl.msg, "");
    if (cl_stats) *cl_stats = cl.stats;
    outs_free(&ex);
    outs_free(&au);
    outs_free(&cl);
}

/* ---- Tests ------------------------------------------------------------------------------------- */

static const unsigned opt_sets[6] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_IN, ER_OPT_FTZ_OUT, ER_OPT_FTZ,
                                     ER_OPT_SATURATE | ER_OPT_FTZ};
/* The output families the brief names, then any float format. */
static const int out_fmts[7] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F64, -1};

static int64_t pick_k(uint64_t *rng)
{
    uint64_t r = below(rng, 12);
    return r == 0 ? 0 : r == 1 ? 1 : r == 2 ? 100 + (int64_t)below(rng, 101) : 2 + (int64_t)below(rng, 40);
}


#endif /* ER_TEST_MMA_H */
