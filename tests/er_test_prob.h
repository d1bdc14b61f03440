/* er_test_prob.h: random problems for the bounds and normal() tests of every backend
 * (tests/backends/test_backend_normal.c, test_backend_bounds.c and test_backend_sweep.c share it):
 * patterns of every format with specials, tensors with batches and transposes, block scales, and the
 * er_mma_args of a problem.  Static functions: include once per test program, after
 * er_test.h and exactref/exactref.h.  A test program may define, before including it,
 *   ER_PROB_C_MODE(mode)  the generator mode of C for a problem of `mode` (default: mode);
 *   ER_PROB_S_MODE        the generator mode of the scales (default: 1),
 * so that each program keeps the random stream (and so the problems) it has always had. */
#ifndef ER_TEST_PROB_H
#define ER_TEST_PROB_H

#include "exactref/core/er_round.h"

#ifndef ER_PROB_C_MODE
#define ER_PROB_C_MODE(mode) (mode)
#endif
#ifndef ER_PROB_S_MODE
#define ER_PROB_S_MODE 1
#endif

static uint64_t below(uint64_t *r, uint64_t n) { return er_test_rand(r) % n; }
static uint64_t mask_(int w) { return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u; }
static int sbytes(int f)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    return fi.storage_bytes;
}

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

/* mode 0: any pattern; 1: within 3 binades of 1; 2: near the top of the range; 3: in [1/4, 1);
 * 4: positive, within 2 binades of 1 (sums without cancellation); spec: percent specials */
static uint64_t gen(int f, uint64_t *st, int mode, int spec)
{
    er_fmt d = er_fmt_get(f);
    uint64_t r = er_test_rand(st), sign = 0, frac;
    int64_t ef;
    if (spec && (int)below(st, 100) < spec) return special_pattern(f, st);
    if (mode == 0) return r & mask_(d.width) & ~mask_(d.pad);
    if (er_fmt_signed(d) && mode != 4) sign = below(st, 2);
    ef = mode == 1   ? d.bias + (int64_t)below(st, 7) - 3
         : mode == 3 ? d.bias - 1 - (int64_t)below(st, 2)
         : mode == 4 ? d.bias + (int64_t)below(st, 5) - 2
                     : (int64_t)mask_(d.ebits) - 1 - (int64_t)below(st, 2);
    frac = er_test_rand(st) & mask_(d.mbits);
    if (ef < 0) ef = 0;
    if (ef > (int64_t)mask_(d.ebits)) ef = (int64_t)mask_(d.ebits);
    return ((sign << (d.width - 1)) | ((((uint64_t)ef << d.mbits) | frac) << d.pad)) & mask_(d.width);
}

static void put_(unsigned char *p, int bytes, uint64_t x)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(x >> (8 * i));
}

static uint64_t get_(const unsigned char *p, int bytes)
{
    uint64_t x = 0;
    for (int i = 0; i < bytes; i++) x |= (uint64_t)p[i] << (8 * i);
    return x;
}

typedef struct {
    er_tensor t;
    unsigned char *mem;
    size_t bytes;
} tens;

static void tens_make(tens *T, int f, int64_t batch, int64_t rows, int64_t cols, int trans, uint64_t *st, int mode,
                      int spec)
{
    int64_t pr = trans ? cols : rows, pc = trans ? rows : cols, nb = batch ? batch : 1;
    size_t n = (size_t)(nb * pr * pc), eb = (size_t)sbytes(f);
    memset(T, 0, sizeof *T);
    T->bytes = n * eb;
    T->mem = (unsigned char *)calloc(T->bytes ? T->bytes : 1, 1);
    ck_assert(T->mem != NULL);
    for (size_t i = 0; i < n; i++) put_(T->mem + i * eb, (int)eb, gen(f, st, mode, spec));
    T->t = batch ? er_tensor_3d(f, batch, pr, pc, T->mem) : er_tensor_2d(f, pr, pc, T->mem);
    if (trans) T->t = er_tensor_transpose(T->t);
}

static void tens_free(tens *T)
{
    free(T->mem);
    T->mem = NULL;
}

typedef struct {
    int fa, fb, fc, fd, fs, block, dir;
    unsigned opts;
    int64_t batch, m, n, k;
    int a2d, b2d, at, bt;
    int mode, spec;
    tens A, B, C, SA, SB;
} prob;

static void prob_make(prob *P, uint64_t *st)
{
    int64_t bA = P->batch && !P->a2d ? P->batch : 0, bB = P->batch && !P->b2d ? P->batch : 0;
    tens_make(&P->A, P->fa, bA, P->m, P->k, P->at, st, P->mode, P->spec);
    tens_make(&P->B, P->fb, bB, P->k, P->n, P->bt, st, P->mode == 2 ? 3 : P->mode, P->spec);
    memset(&P->C, 0, sizeof P->C);
    memset(&P->SA, 0, sizeof P->SA);
    memset(&P->SB, 0, sizeof P->SB);
    if (P->fc >= 0) tens_make(&P->C, P->fc, P->batch, P->m, P->n, 0, st, ER_PROB_C_MODE(P->mode), P->spec);
    if (P->fs >= 0) {
        int64_t nb = (P->k + P->block - 1) / P->block;
        tens_make(&P->SA, P->fs, bA, P->m, nb, 0, st, ER_PROB_S_MODE, 0);
        tens_make(&P->SB, P->fs, bB, nb, P->n, 0, st, ER_PROB_S_MODE, 0);
        if (P->fs == ER_FMT_F8E8M0FNU) { /* moderate scales, some extremes and NaN */
            for (size_t i = 0; i < P->SA.bytes; i++)
                P->SA.mem[i] = (unsigned char)(i % 11 ? 120 + below(st, 14) : 0xFF - below(st, 2));
            for (size_t i = 0; i < P->SB.bytes; i++)
                P->SB.mem[i] = (unsigned char)(i % 13 ? 120 + below(st, 14) : below(st, 2));
        }
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

static void prob_args(prob *P, er_mma_args *a, er_tensor *D, int backend)
{
    er_mma_args_init(a);
    a->a = &P->A.t;
    a->b = &P->B.t;
    a->c = P->fc >= 0 ? &P->C.t : NULL;
    if (P->fs >= 0) {
        a->a_scale = &P->SA.t;
        a->b_scale = &P->SB.t;
        a->block = P->block;
    }
    a->d = D;
    a->rounding = P->dir;
    a->opts = P->opts;
    a->backend = backend;
}

#endif /* ER_TEST_PROB_H */
