/*
 * test_layout.c (engine_layout): views, batches, threads and strategies of er_mma, every result against
 * the MPFR reference (eng_ref.c), so "the same bits" is checked against an independent value.
 *
 *  - views: A, B, C, D, the scales and the enclosures given as transposed views (er_tensor_transpose of
 *    the transpose's storage), rows padded (row stride > columns) and columns strided (stride 2), in
 *    random combinations (float, block-scaled, and small-integer data): the bits equal the reference
 *    (and so the contiguous computation's).
 *  - batches: 3-D A with a 2-D B broadcast, 2-D A with 3-D B, both 3-D, C 2-D (broadcast) or 3-D, a
 *    3-D operand with batch stride 0, batched transposed views, batched scales, batched mmai (the
 *    wrapped count is summed over the batch): each slice equals its own 2-D problem's reference.
 *  - threads: m = 13 (more rows than threads, rows split unevenly), threads 1, 2, 3, 7 and 0 (all
 *    cores), strategies AUTO and EXACT, float, block-scaled and integer problems: identical bits, equal
 *    to the reference.
 *  - medium: bf16 and f8E4M3FN 64 x 64 x 512 (and a cancellation-heavy bf16 32 x 32 x 512 with C, and
 *    small-integer problems 48 x 40 x 300 with C; and for the fast path's vector code, sizes that are
 *    not multiples of a vector with many elements left to its second stage: near-boundary and uniform
 *    bf16, f8E4M3FN x bf16, near-boundary f8E4M3FN): AUTO and EXACT bit for bit, both equal to the reference in every element;
 *    stats.fast_decided (and exact_f64) printed.  engine_layout runs with AVX-512 where the processor
 *    has it, engine_layout_avx2 with EXACTREF_NO_AVX512, engine_layout_paths with the scalar loops.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eng_ref.h"

/* ---- Views over patterns. ---- */
#define L_CONTIG 0
#define L_TRANS 1
#define L_PAD 2
#define L_COLSTR 3
#define L_BCAST 4 /* 3-D only: batch stride 0 (every batch is batch 0's matrix) */

typedef struct {
    er_tensor t;
    unsigned char *mem;
    int bytes;
} vbuf;

static int64_t offset_of(const er_tensor *t, int64_t b, int64_t r, int64_t c)
{
    if (t->ndim == 3) return b * t->strides[0] + r * t->strides[1] + c * t->strides[2];
    return r * t->strides[0] + c * t->strides[1];
}

static void put(unsigned char *p, int bytes, uint64_t x)
{
    switch (bytes) {
    case 1: p[0] = (unsigned char)x; break;
    case 2: { uint16_t y = (uint16_t)x; memcpy(p, &y, 2); break; }
    case 4: { uint32_t y = (uint32_t)x; memcpy(p, &y, 4); break; }
    default: memcpy(p, &x, 8); break;
    }
}

static uint64_t get(const unsigned char *p, int bytes)
{
    switch (bytes) {
    case 1: return p[0];
    case 2: { uint16_t y; memcpy(&y, p, 2); return y; }
    case 4: { uint32_t y; memcpy(&y, p, 4); return y; }
    default: { uint64_t y; memcpy(&y, p, 8); return y; }
    }
}

/* A view (batch 0: 2-D) of pats[b][r][c], row-major and batch-major, laid out as `layout`. */
static vbuf mkview(int fmt, int64_t batch, int64_t rows, int64_t cols, const uint64_t *pats, int layout)
{
    vbuf v;
    int nd = batch ? 3 : 2;
    int64_t nb = batch ? batch : 1, mat;
    int64_t s_r, s_c; /* logical row / column strides */
    v.bytes = rf(fmt)->bytes;
    switch (layout) {
    case L_TRANS: s_r = 1; s_c = rows; mat = rows * cols; break;
    case L_PAD: s_r = cols + 3; s_c = 1; mat = rows * (cols + 3); break;
    case L_COLSTR: s_r = 2 * cols + 1; s_c = 2; mat = rows * (2 * cols + 1); break;
    default: s_r = cols; s_c = 1; mat = rows * cols; break;
    }
    int64_t s_b = layout == L_BCAST ? 0 : mat + 5;
    int64_t size = (layout == L_BCAST ? 1 : nb) * (mat + 5) + 1;
    v.mem = (unsigned char *)malloc((size_t)size * (size_t)v.bytes);
    memset(v.mem, 0, (size_t)size * (size_t)v.bytes);
    if (layout == L_TRANS) {
        /* the storage of the transpose (cols x rows, contiguous), seen through er_tensor_transpose */
        er_tensor st = batch ? er_tensor_3d(fmt, batch, cols, rows, v.mem) : er_tensor_2d(fmt, cols, rows, v.mem);
        if (batch) st.strides[0] = s_b;
        v.t = er_tensor_transpose(st);
    } else {
        memset(&v.t, 0, sizeof v.t);
        v.t.format = fmt;
        v.t.ndim = nd;
        v.t.data = v.mem;
        if (batch) {
            v.t.shape[0] = batch; v.t.shape[1] = rows; v.t.shape[2] = cols;
            v.t.strides[0] = s_b; v.t.strides[1] = s_r; v.t.strides[2] = s_c;
        } else {
            v.t.shape[0] = rows; v.t.shape[1] = cols;
            v.t.strides[0] = s_r; v.t.strides[1] = s_c;
        }
    }
    if (pats)
        for (int64_t b = 0; b < nb; b++)
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < cols; c++)
                    put(v.mem + offset_of(&v.t, b, r, c) * v.bytes, v.bytes, pats[(b * rows + r) * cols + c]);
    return v;
}

static uint64_t vget(const vbuf *v, int64_t b, int64_t r, int64_t c)
{
    return get(v->mem + offset_of(&v->t, b, r, c) * v->bytes, v->bytes);
}

/* ---- A problem generator. ---- */
static void gen_problem(eprob *P, uint64_t *rng, int fa, int fb, int fc, int fsc, int block, int64_t m, int64_t n,
                        int64_t k, int spec)
{
    memset(P, 0, sizeof *P);
    P->fa = fa;
    P->fb = fb;
    P->fc = fc;
    P->fsc = fsc;
    P->block = block;
    P->m = m;
    P->n = n;
    P->k = k;
    eprob_alloc(P);
    int mode = fsc >= 0 ? GM_UNIFORM : GM_BAND;
    int ca = rf(fa)->bias + (int)rnd_below(rng, 3) - 1, cb = rf(fb)->bias + (int)rnd_below(rng, 3) - 1;
    for (int64_t e = 0; e < m * k; e++) P->A[e] = gen_pattern(rf(fa), rng, mode, ca, spec);
    for (int64_t e = 0; e < k * n; e++) P->B[e] = gen_pattern(rf(fb), rng, mode, cb, spec);
    if (fc >= 0)
        for (int64_t e = 0; e < m * n; e++) P->C[e] = gen_pattern(rf(fc), rng, GM_BAND, rf(fc)->bias, spec);
    if (fsc >= 0) {
        int64_t nb = eprob_nblocks(P);
        for (int64_t e = 0; e < m * nb; e++) P->SA[e] = fsc == ER_FMT_F8E8M0FNU ? 120 + rnd_below(rng, 15) : 1 + rnd_below(rng, 0x7E);
        for (int64_t e = 0; e < nb * n; e++) P->SB[e] = fsc == ER_FMT_F8E8M0FNU ? 120 + rnd_below(rng, 15) : 1 + rnd_below(rng, 0x7E);
    }
    eprob_pack(P);
}

/* Replace a generated problem's values by small integers (the engine's exact_f64 path). */
static void make_integral(eprob *P, uint64_t *rng)
{
    for (int64_t e = 0; e < P->m * P->k; e++) P->A[e] = gen_pattern(rf(P->fa), rng, GM_INT, 6, 0);
    for (int64_t e = 0; e < P->k * P->n; e++) P->B[e] = gen_pattern(rf(P->fb), rng, GM_INT, 5, 0);
    if (P->fc >= 0)
        for (int64_t e = 0; e < P->m * P->n; e++) P->C[e] = gen_pattern(rf(P->fc), rng, GM_INT, 12, 0);
    eprob_pack(P);
}

static long cmp_ref(const char *ctx, const eprob *P, const rex *ex, int dfmt, int dir, unsigned opts, int64_t i,
                    int64_t j, uint64_t got, const char *what)
{
    uint64_t want = ref_round(rf(dfmt), &ex[i * P->n + j], dir, opts);
    if (want == got) return 0;
    char bw[128], bg[128], bx[128];
    pattern_str(dfmt, want, bw, sizeof bw);
    pattern_str(dfmt, got, bg, sizeof bg);
    rex_str(&ex[i * P->n + j], bx, sizeof bx);
    fprintf(stderr, "MISMATCH [%s] %s (%lld,%lld): %s %s: exact %s, expected %s, got %s\n", ctx, what, (long long)i,
            (long long)j, rf(dfmt)->name, er_rounding_name(dir), bx, bw, bg);
    return 1;
}

START_TEST(views)
{
    uint64_t rng = er_test_seed("engine_layout/views");
    long bad = 0;
    ref_init();
    struct {
        int fa, fb, fc, fsc, block, dfmt, integral;
    } cfg[] = {
        {ER_FMT_F32, ER_FMT_BF16, -1, -1, 0, ER_FMT_F16, 0},
        {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_BF16, -1, 0, ER_FMT_F32, 0},
        {ER_FMT_F64, ER_FMT_F64, ER_FMT_F64, -1, 0, ER_FMT_F64, 0},
        {ER_FMT_TF32, ER_FMT_F6E2M3FN, ER_FMT_F16, -1, 0, ER_FMT_F8E4M3FN, 0},
        {ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN, ER_FMT_F32, ER_FMT_F8E4M3FN, 16, ER_FMT_BF16, 0},
        {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, -1, ER_FMT_F8E8M0FNU, 8, ER_FMT_F32, 0},
        {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32, -1, 0, ER_FMT_BF16, 1},
        {ER_FMT_F8E4M3FN, ER_FMT_F32, -1, -1, 0, ER_FMT_F8E5M2, 1},
    };
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        eprob P;
        gen_problem(&P, &rng, cfg[ci].fa, cfg[ci].fb, cfg[ci].fc, cfg[ci].fsc, cfg[ci].block, 7, 5, 37, 2);
        if (cfg[ci].integral) make_integral(&P, &rng);
        rex *ex = ref_exact_all(&P);
        int64_t nb = eprob_nblocks(&P);
        for (int combo = 0; combo < 10; combo++) {
            int la = combo == 0 ? L_TRANS : (int)rnd_below(&rng, 4), lb = combo == 0 ? L_TRANS : (int)rnd_below(&rng, 4);
            int lc = combo == 0 ? L_TRANS : (int)rnd_below(&rng, 4), ld = combo == 0 ? L_TRANS : (int)rnd_below(&rng, 4);
            int ls = combo == 0 ? L_TRANS : (int)rnd_below(&rng, 4);
            int dir = (int)rnd_below(&rng, ER_RND_COUNT), strategy = (int)rnd_below(&rng, 2);
            int enc = combo % 3 == 0;
            vbuf a = mkview(P.fa, 0, P.m, P.k, P.A, la), b = mkview(P.fb, 0, P.k, P.n, P.B, lb);
            vbuf c = P.fc >= 0 ? mkview(P.fc, 0, P.m, P.n, P.C, lc) : mkview(ER_FMT_F32, 0, 1, 1, NULL, 0);
            vbuf d = mkview(cfg[ci].dfmt, 0, P.m, P.n, NULL, ld);
            vbuf sa = P.fsc >= 0 ? mkview(P.fsc, 0, P.m, nb, P.SA, ls) : mkview(ER_FMT_F32, 0, 1, 1, NULL, 0);
            vbuf sb = P.fsc >= 0 ? mkview(P.fsc, 0, nb, P.n, P.SB, ls) : mkview(ER_FMT_F32, 0, 1, 1, NULL, 0);
            vbuf lo = mkview(ER_FMT_F64, 0, P.m, P.n, NULL, ld == L_TRANS ? L_PAD : L_TRANS);
            vbuf hi = mkview(ER_FMT_F64, 0, P.m, P.n, NULL, L_COLSTR);
            vbuf odd = mkview(ER_FMT_F64, 0, P.m, P.n, NULL, ld);
            er_mma_args args;
            er_mma_stats st;
            char msg[200] = "";
            er_mma_args_init(&args);
            args.a = &a.t;
            args.b = &b.t;
            if (P.fc >= 0) args.c = &c.t;
            if (P.fsc >= 0) {
                args.a_scale = &sa.t;
                args.b_scale = &sb.t;
                args.block = P.block;
            }
            args.d = &d.t;
            if (enc) {
                args.lo = &lo.t;
                args.hi = &hi.t;
                args.odd = &odd.t;
            }
            args.rounding = dir;
            args.strategy = strategy;
            args.threads = 1 + combo % 3;
            args.stats = &st;
            args.msg = msg;
            args.msg_size = sizeof msg;
            int s = er_mma(&args);
            char ctx[128];
            snprintf(ctx, sizeof ctx, "views %s x %s layouts a%d b%d c%d d%d s%d", rf(P.fa)->name, rf(P.fb)->name, la,
                     lb, lc, ld, ls);
            if (s != ER_OK) {
                fprintf(stderr, "MISMATCH [%s]: status %d: %s\n", ctx, s, msg);
                bad++;
            } else {
                for (int64_t i = 0; i < P.m; i++)
                    for (int64_t j = 0; j < P.n; j++) {
                        bad += cmp_ref(ctx, &P, ex, cfg[ci].dfmt, dir, 0, i, j, vget(&d, 0, i, j), "d");
                        if (enc) {
                            bad += cmp_ref(ctx, &P, ex, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0, i, j, vget(&lo, 0, i, j), "lo");
                            bad += cmp_ref(ctx, &P, ex, ER_FMT_F64, ER_RND_POSITIVE_INF, 0, i, j, vget(&hi, 0, i, j), "hi");
                            bad += cmp_ref(ctx, &P, ex, ER_FMT_F64, ER_RND_ODD, 0, i, j, vget(&odd, 0, i, j), "odd");
                        }
                    }
            }
            free(a.mem); free(b.mem); free(c.mem); free(d.mem); free(sa.mem); free(sb.mem);
            free(lo.mem); free(hi.mem); free(odd.mem);
        }
        rex_free_all(ex, P.m * P.n);
        eprob_free(&P);
    }
    ck_assert_msg(bad == 0, "views: %ld mismatching elements (see stderr)", bad);
}
END_TEST

/* Batched float problems: the per-batch problems P[0..nb) share the operands that are broadcast. */
START_TEST(batches)
{
    uint64_t rng = er_test_seed("engine_layout/batches");
    long bad = 0;
    ref_init();
    enum { NB = 3 };
    struct {
        int fa, fb, fc, fsc, block, dfmt;
        int a3, b3, c3, s3; /* which operands are 3-D (0: 2-D broadcast; 2: 3-D with batch stride 0) */
        int layout;
    } cfg[] = {
        {ER_FMT_BF16, ER_FMT_BF16, -1, -1, 0, ER_FMT_F32, 1, 0, 0, 0, L_CONTIG},
        {ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F32, -1, 0, ER_FMT_BF16, 0, 1, 0, 0, L_CONTIG},
        {ER_FMT_F32, ER_FMT_F32, ER_FMT_F16, -1, 0, ER_FMT_F16, 1, 1, 1, 0, L_TRANS},
        {ER_FMT_F64, ER_FMT_BF16, ER_FMT_F64, -1, 0, ER_FMT_F32, 1, 2, 1, 0, L_PAD},
        {ER_FMT_F8E5M2, ER_FMT_F8E4M3FN, ER_FMT_F32, ER_FMT_F8E8M0FNU, 4, ER_FMT_F32, 1, 0, 0, 1, L_CONTIG},
        {ER_FMT_F4E2M1FN, ER_FMT_F4E2M1FN, -1, ER_FMT_F8E4M3FN, 16, ER_FMT_F16, 1, 1, 0, 0, L_TRANS},
        {ER_FMT_BF16, ER_FMT_F8E5M2, ER_FMT_F32, -1, 0, ER_FMT_F16, 1, 2, 1, 0, L_COLSTR}, /* integral (below) */
    };
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        int64_t m = 6, n = 4, k = 35;
        eprob P[NB];
        rex *ex[NB];
        for (int b = 0; b < NB; b++) {
            gen_problem(&P[b], &rng, cfg[ci].fa, cfg[ci].fb, cfg[ci].fc, cfg[ci].fsc, cfg[ci].block, m, n, k, 2);
            if (ci == 6) make_integral(&P[b], &rng);
            /* broadcast operands: batch b's copy is batch 0's */
            if (b > 0) {
                if (cfg[ci].a3 != 1) memcpy(P[b].A, P[0].A, sizeof(uint64_t) * (size_t)(m * k));
                if (cfg[ci].b3 != 1) memcpy(P[b].B, P[0].B, sizeof(uint64_t) * (size_t)(k * n));
                if (cfg[ci].fc >= 0 && cfg[ci].c3 != 1) memcpy(P[b].C, P[0].C, sizeof(uint64_t) * (size_t)(m * n));
                if (cfg[ci].fsc >= 0 && cfg[ci].s3 != 1) {
                    int64_t nbk = eprob_nblocks(&P[0]);
                    memcpy(P[b].SA, P[0].SA, sizeof(uint64_t) * (size_t)(m * nbk));
                    memcpy(P[b].SB, P[0].SB, sizeof(uint64_t) * (size_t)(nbk * n));
                }
                eprob_pack(&P[b]);
            }
            ex[b] = ref_exact_all(&P[b]);
        }
        int64_t nbk = eprob_nblocks(&P[0]);
        /* gather the batch's patterns */
        uint64_t *A = malloc(sizeof(uint64_t) * NB * m * k), *B = malloc(sizeof(uint64_t) * NB * k * n);
        uint64_t *C = malloc(sizeof(uint64_t) * NB * m * n), *SA = malloc(sizeof(uint64_t) * NB * m * (nbk + 1));
        uint64_t *SB = malloc(sizeof(uint64_t) * NB * (nbk + 1) * n);
        for (int b = 0; b < NB; b++) {
            memcpy(A + b * m * k, P[b].A, sizeof(uint64_t) * m * k);
            memcpy(B + b * k * n, P[b].B, sizeof(uint64_t) * k * n);
            if (cfg[ci].fc >= 0) memcpy(C + b * m * n, P[b].C, sizeof(uint64_t) * m * n);
            if (cfg[ci].fsc >= 0) {
                memcpy(SA + b * m * nbk, P[b].SA, sizeof(uint64_t) * m * nbk);
                memcpy(SB + b * nbk * n, P[b].SB, sizeof(uint64_t) * nbk * n);
            }
        }
        int L = cfg[ci].layout;
#define LAY(x3) ((x3) == 2 ? L_BCAST : L)
        vbuf a = mkview(cfg[ci].fa, cfg[ci].a3 ? NB : 0, m, k, A, LAY(cfg[ci].a3));
        vbuf b = mkview(cfg[ci].fb, cfg[ci].b3 ? NB : 0, k, n, B, LAY(cfg[ci].b3));
        vbuf c = mkview(cfg[ci].fc >= 0 ? cfg[ci].fc : ER_FMT_F32, cfg[ci].c3 ? NB : 0, m, n, C, LAY(cfg[ci].c3));
        vbuf sa = mkview(cfg[ci].fsc >= 0 ? cfg[ci].fsc : ER_FMT_F32, cfg[ci].s3 ? NB : 0, m, nbk, SA, L);
        vbuf sb = mkview(cfg[ci].fsc >= 0 ? cfg[ci].fsc : ER_FMT_F32, cfg[ci].s3 ? NB : 0, nbk, n, SB, L);
#undef LAY
        for (int dir = 0; dir < ER_RND_COUNT; dir++)
            for (int strategy = 0; strategy < 2; strategy++) {
                vbuf d = mkview(cfg[ci].dfmt, NB, m, n, NULL, L);
                vbuf lo = mkview(ER_FMT_F64, NB, m, n, NULL, L_CONTIG), hi = mkview(ER_FMT_F64, NB, m, n, NULL, L_PAD);
                int enc = dir == 0 && strategy == 1;
                er_mma_args args;
                er_mma_stats st;
                char msg[200] = "";
                er_mma_args_init(&args);
                args.a = &a.t;
                args.b = &b.t;
                if (cfg[ci].fc >= 0) args.c = &c.t;
                if (cfg[ci].fsc >= 0) {
                    args.a_scale = &sa.t;
                    args.b_scale = &sb.t;
                    args.block = cfg[ci].block;
                }
                args.d = &d.t;
                if (enc) {
                    args.lo = &lo.t;
                    args.hi = &hi.t;
                }
                args.rounding = dir;
                args.strategy = strategy;
                args.threads = 1 + dir % 3;
                args.stats = &st;
                args.msg = msg;
                args.msg_size = sizeof msg;
                int s = er_mma(&args);
                char ctx[96];
                snprintf(ctx, sizeof ctx, "batches cfg %zu (%s x %s)", ci, rf(cfg[ci].fa)->name, rf(cfg[ci].fb)->name);
                if (s != ER_OK || st.elements != NB * m * n) {
                    fprintf(stderr, "MISMATCH [%s]: status %d (%s), elements %lld\n", ctx, s, msg, (long long)st.elements);
                    bad++;
                } else {
                    for (int bb = 0; bb < NB; bb++)
                        for (int64_t i = 0; i < m; i++)
                            for (int64_t j = 0; j < n; j++) {
                                bad += cmp_ref(ctx, &P[bb], ex[bb], cfg[ci].dfmt, dir, 0, i, j, vget(&d, bb, i, j), "d");
                                if (enc) {
                                    bad += cmp_ref(ctx, &P[bb], ex[bb], ER_FMT_F64, ER_RND_NEGATIVE_INF, 0, i, j,
                                                   vget(&lo, bb, i, j), "lo");
                                    bad += cmp_ref(ctx, &P[bb], ex[bb], ER_FMT_F64, ER_RND_POSITIVE_INF, 0, i, j,
                                                   vget(&hi, bb, i, j), "hi");
                                }
                            }
                }
                free(d.mem); free(lo.mem); free(hi.mem);
            }
        free(a.mem); free(b.mem); free(c.mem); free(sa.mem); free(sb.mem);
        free(A); free(B); free(C); free(SA); free(SB);
        for (int bb = 0; bb < NB; bb++) {
            rex_free_all(ex[bb], m * n);
            eprob_free(&P[bb]);
        }
    }
    /* batched mmai: 3-D i8 A, 2-D u8 B, 3-D C; wrapped summed over the batch */
    {
        int64_t m = 3, n = 2, k = 70000;
        uint64_t *A = malloc(sizeof(uint64_t) * NB * m * k), *B = malloc(sizeof(uint64_t) * k * n);
        uint64_t *C = malloc(sizeof(uint64_t) * NB * m * n);
        for (int64_t e = 0; e < NB * m * k; e++) A[e] = (e / (m * k)) == 1 ? 0x7F : er_test_rand(&rng) & 0xFF;
        for (int64_t e = 0; e < k * n; e++) B[e] = 0xF0 | (er_test_rand(&rng) & 0xF);
        for (int64_t e = 0; e < NB * m * n; e++) C[e] = (uint32_t)er_test_rand(&rng);
        vbuf a = mkview(ER_FMT_I8, NB, m, k, A, L_CONTIG), b = mkview(ER_FMT_U8, 0, k, n, B, L_TRANS);
        vbuf c = mkview(ER_FMT_I32, NB, m, n, C, L_PAD), d = mkview(ER_FMT_I32, NB, m, n, NULL, L_TRANS);
        er_mma_args args;
        er_mma_stats st;
        er_mma_args_init(&args);
        args.a = &a.t;
        args.b = &b.t;
        args.c = &c.t;
        args.d = &d.t;
        args.threads = 2;
        args.stats = &st;
        int s = er_mma(&args);
        int64_t wrapped = 0;
        long badi = 0;
        for (int bb = 0; bb < NB; bb++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    int64_t sum = (int32_t)(uint32_t)C[(bb * m + i) * n + j];
                    for (int64_t p = 0; p < k; p++)
                        sum += (int64_t)(int8_t)A[(bb * m + i) * k + p] * (int64_t)B[p * n + j];
                    if (sum < INT32_MIN || sum > INT32_MAX) wrapped++;
                    if ((uint32_t)vget(&d, bb, i, j) != (uint32_t)((uint64_t)sum & 0xFFFFFFFFu)) badi++;
                }
        if (s != ER_OK || badi || st.wrapped != wrapped) {
            fprintf(stderr, "MISMATCH [batched mmai]: status %d, %ld wrong elements, wrapped %lld expected %lld\n", s, badi,
                    (long long)st.wrapped, (long long)wrapped);
            bad++;
        }
        if (wrapped == 0) {
            fprintf(stderr, "batched mmai: the test data did not wrap (test bug)\n");
            bad++;
        }
        free(a.mem); free(b.mem); free(c.mem); free(d.mem);
        free(A); free(B); free(C);
    }
    ck_assert_msg(bad == 0, "batches: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(threads)
{
    static const int th[5] = {1, 2, 3, 7, 0};
    uint64_t rng = er_test_seed("engine_layout/threads");
    long bad = 0;
    ref_init();
    struct {
        int fa, fb, fc, fsc, block, dfmt;
    } cfg[] = {
        {ER_FMT_BF16, ER_FMT_BF16, -1, -1, 0, ER_FMT_F16},
        {ER_FMT_F64, ER_FMT_F32, ER_FMT_F32, -1, 0, ER_FMT_F32},
        {ER_FMT_F8E5M2, ER_FMT_F8E4M3FN, ER_FMT_F16, -1, 0, ER_FMT_F8E4M3FN},
        {ER_FMT_F8E4M3FN, ER_FMT_F6E3M2FN, -1, ER_FMT_F8E8M0FNU, 32, ER_FMT_BF16},
    };
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        eprob P;
        gen_problem(&P, &rng, cfg[ci].fa, cfg[ci].fb, cfg[ci].fc, cfg[ci].fsc, cfg[ci].block, 13, 6, 70, 2);
        rex *ex = ref_exact_all(&P);
        for (int t = 0; t < 5; t++)
            for (int s = 0; s < 2; s++) {
                int dir = (int)((ci + (size_t)t) % ER_RND_COUNT);
                ecfg c = {cfg[ci].dfmt, dir, 0u, s, th[t], t == 2 && s == 1};
                ecfg c0 = {cfg[ci].dfmt, dir, 0u, ER_STRATEGY_EXACT, 1, 0};
                eout o, o0;
                eout_alloc(&o, &P);
                eout_alloc(&o0, &P);
                eng_run(&P, &c, &o);
                eng_run(&P, &c0, &o0);
                if (o.status != ER_OK || memcmp(o.D, o0.D, sizeof(uint64_t) * (size_t)(P.m * P.n)) != 0) {
                    fprintf(stderr, "MISMATCH [threads cfg %zu]: threads %d %s differs from threads 1 EXACT\n", ci,
                            th[t], s ? "EXACT" : "AUTO");
                    bad++;
                }
                if (th[t] > 0 && o.stats.threads != th[t])
                    fprintf(stderr, "note: threads %d requested, stats.threads %d\n", th[t], o.stats.threads);
                eout_free(&o);
                eout_free(&o0);
                bad += eng_check(&P, ex, &c, "threads");
            }
        rex_free_all(ex, P.m * P.n);
        eprob_free(&P);
    }
    /* mmai with threads: the same bits and the same wrapped count */
    {
        int64_t m = 13, n = 5, k = 200000;
        uint8_t *A = malloc((size_t)(m * k)), *B = malloc((size_t)(k * n));
        /* mostly (-128)(-128): about 2.5e9 per element, beyond INT32_MAX; odd rows mostly 127 x -128 */
        for (int64_t e = 0; e < m * k; e++) A[e] = (uint8_t)(e % 7 ? ((e / k) % 2 ? 0x7F : 0x80) : er_test_rand(&rng));
        for (int64_t e = 0; e < k * n; e++) B[e] = (uint8_t)(e % 11 ? 0x80 : er_test_rand(&rng));
        int32_t ref[13 * 5];
        int64_t refw = -1;
        for (int t = 0; t < 5; t++) {
            int32_t D[13 * 5];
            er_tensor ta = er_tensor_2d(ER_FMT_I8, m, k, A), tb = er_tensor_2d(ER_FMT_I8, k, n, B);
            er_tensor td = er_tensor_2d(ER_FMT_I32, m, n, D);
            er_mma_args args;
            er_mma_stats st;
            er_mma_args_init(&args);
            args.a = &ta;
            args.b = &tb;
            args.d = &td;
            args.threads = th[t];
            args.stats = &st;
            int s = er_mma(&args);
            if (t == 0) {
                memcpy(ref, D, sizeof D);
                refw = st.wrapped;
                int64_t w = 0;
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        int64_t sum = 0;
                        for (int64_t p = 0; p < k; p++) sum += (int64_t)(int8_t)A[i * k + p] * (int8_t)B[p * n + j];
                        if (sum < INT32_MIN || sum > INT32_MAX) w++;
                        if ((uint32_t)D[i * n + j] != (uint32_t)((uint64_t)sum & 0xFFFFFFFFu)) bad++;
                    }
                if (w != refw || w == 0) {
                    fprintf(stderr, "MISMATCH [threads mmai]: wrapped %lld, expected %lld (nonzero)\n", (long long)refw,
                            (long long)w);
                    bad++;
                }
            } else if (s != ER_OK || memcmp(ref, D, sizeof D) != 0 || st.wrapped != refw) {
                fprintf(stderr, "MISMATCH [threads mmai]: threads %d differs\n", th[t]);
                bad++;
            }
        }
        free(A);
        free(B);
    }
    ck_assert_msg(bad == 0, "threads: %ld mismatches (see stderr)", bad);
}
END_TEST

/* AUTO against EXACT bit for bit on a medium problem, both against the reference in every element. */
static long medium_one(const char *name, eprob *P, const int *outs, const int *dirs, int nout)
{
    long bad = 0;
    rex *ex = ref_exact_all(P);
    for (int o = 0; o < nout; o++) {
        ecfg ca = {outs[o], dirs[o], 0u, ER_STRATEGY_AUTO, 2, 0};
        ecfg ce = {outs[o], dirs[o], 0u, ER_STRATEGY_EXACT, 2, 0};
        eout oa, oe;
        eout_alloc(&oa, P);
        eout_alloc(&oe, P);
        eng_run(P, &ca, &oa);
        eng_run(P, &ce, &oe);
        long diff = 0, refbad = 0;
        for (int64_t e = 0; e < P->m * P->n; e++) {
            diff += oa.D[e] != oe.D[e];
            refbad += cmp_ref(name, P, ex, outs[o], dirs[o], 0, e / P->n, e % P->n, oa.D[e], "AUTO d") +
                      cmp_ref(name, P, ex, outs[o], dirs[o], 0, e / P->n, e % P->n, oe.D[e], "EXACT d") > 0;
        }
        printf("medium %s -> %s %s: %lld elements, AUTO fast_decided %lld, exact_f64 %lld, exact_path %lld; AUTO vs "
               "EXACT differ in %ld, vs reference %ld\n",
               name, rf(outs[o])->name, er_rounding_name(dirs[o]), (long long)oa.stats.elements,
               (long long)oa.stats.fast_decided, (long long)oa.stats.exact_f64, (long long)oa.stats.exact_path, diff,
               refbad);
        if (oa.status != ER_OK || oe.status != ER_OK || oe.stats.fast_decided != 0 || oe.stats.exact_f64 != 0 ||
            oa.stats.fast_decided + oa.stats.exact_f64 + oa.stats.exact_path != oa.stats.elements)
            bad++;
        bad += diff + refbad;
        eout_free(&oa);
        eout_free(&oe);
    }
    rex_free_all(ex, P->m * P->n);
    return bad;
}

START_TEST(medium)
{
    uint64_t rng = er_test_seed("engine_layout/medium");
    long bad = 0;
    ref_init();
    {
        eprob P;
        gen_problem(&P, &rng, ER_FMT_BF16, ER_FMT_BF16, -1, -1, 0, 64, 64, 512, 0);
        int outs[3] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16}, dirs[3] = {ER_RND_NEAREST_EVEN, ER_RND_NEAREST_EVEN, ER_RND_ZERO};
        bad += medium_one("bf16 64x64x512", &P, outs, dirs, 3);
        eprob_free(&P);
    }
    {
        eprob P;
        gen_problem(&P, &rng, ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, -1, -1, 0, 64, 64, 512, 0);
        int outs[3] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F8E4M3FN}, dirs[3] = {ER_RND_NEAREST_EVEN, ER_RND_NEAREST_AWAY, ER_RND_NEAREST_EVEN};
        bad += medium_one("f8E4M3FN 64x64x512", &P, outs, dirs, 3);
        eprob_free(&P);
    }
    {
        /* The fast path's vector code at widths past a vector (n, k not multiples of 8, B's 64 x 64 tiles of
         * patterns full and partial) with many elements left to the second stage: values near 1 with one
         * fraction bit (sums on a boundary, decided there with every TwoSum error zero), uniform bf16
         * patterns (norm bounds far above the sums: the second stage's inexact sums), f8E4M3FN x bf16,
         * and f8E4M3FN near a boundary (its 8-bit patterns decoded and transposed by the vector code). */
        static const int fa[4] = {ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN};
        static const int fb[4] = {ER_FMT_BF16, ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F8E4M3FN};
        static const int mode[4] = {GM_SMALL, GM_UNIFORM, GM_UNIFORM, GM_SMALL};
        static const int64_t dm[4] = {72, 40, 33, 35}, dn[4] = {70, 67, 65, 73}, dk[4] = {203, 150, 129, 137};
        static const char *nm[4] = {"bf16 near-boundary 72x70x203", "bf16 uniform 40x67x150",
                                    "f8E4M3FN x bf16 uniform 33x65x129", "f8E4M3FN near-boundary 35x73x137"};
        for (int q = 0; q < 4; q++) {
            eprob P;
            memset(&P, 0, sizeof P);
            P.fa = fa[q];
            P.fb = fb[q];
            P.fc = -1;
            P.fsc = -1;
            P.m = dm[q];
            P.n = dn[q];
            P.k = dk[q];
            eprob_alloc(&P);
            for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, mode[q], 0, 0);
            for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, mode[q], 0, 0);
            eprob_pack(&P);
            int outs[4] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
            int dirs[4] = {ER_RND_NEAREST_EVEN, ER_RND_NEAREST_EVEN, ER_RND_NEAREST_EVEN, ER_RND_ZERO};
            bad += medium_one(nm[q], &P, outs, dirs, 4);
            eprob_free(&P);
        }
    }
    {
        /* ER_OPT_FTZ_IN with subnormal operands (exponent fields 0 - 2) at widths the vector decoding
         * of bf16 and f8E4M3FN handles eight at a time: AUTO (the fast path's copies) and EXACT (the
         * operands' own patterns) give the same bits, and some element is nonzero */
        static const int ff[2] = {ER_FMT_BF16, ER_FMT_F8E4M3FN};
        for (int q = 0; q < 2; q++) {
            eprob P;
            memset(&P, 0, sizeof P);
            P.fa = P.fb = ff[q];
            P.fc = -1;
            P.fsc = -1;
            P.m = 9;
            P.n = 17;
            P.k = 40;
            eprob_alloc(&P);
            for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_BAND, 0, 0);
            for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, e % 3 ? GM_SMALL : GM_BAND, 0, 0);
            eprob_pack(&P);
            ecfg ca = {ER_FMT_F32, ER_RND_NEAREST_EVEN, ER_OPT_FTZ_IN, ER_STRATEGY_AUTO, 2, 0};
            ecfg ce = {ER_FMT_F32, ER_RND_NEAREST_EVEN, ER_OPT_FTZ_IN, ER_STRATEGY_EXACT, 1, 0};
            eout oa, oe;
            eout_alloc(&oa, &P);
            eout_alloc(&oe, &P);
            eng_run(&P, &ca, &oa);
            eng_run(&P, &ce, &oe);
            long diff = 0, nonzero = 0;
            for (int64_t e = 0; e < P.m * P.n; e++) {
                diff += oa.D[e] != oe.D[e];
                nonzero += (oa.D[e] & 0x7FFFFFFFu) != 0;
            }
            printf("medium %s subnormal operands with FTZ_IN -> f32: AUTO vs EXACT differ in %ld of %lld, %ld nonzero\n",
                   rf(P.fa)->name, diff, (long long)(P.m * P.n), nonzero);
            bad += diff + (oa.status != ER_OK || oe.status != ER_OK || nonzero == 0);
            eout_free(&oa);
            eout_free(&oe);
            eprob_free(&P);
        }
    }
    {
        /* values near 1 with one fraction bit, and C: many sums exactly on or next to a boundary */
        eprob P;
        memset(&P, 0, sizeof P);
        P.fa = P.fb = ER_FMT_BF16;
        P.fc = ER_FMT_BF16;
        P.fsc = -1;
        P.m = P.n = 32;
        P.k = 512;
        eprob_alloc(&P);
        for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_SMALL, 0, 0);
        for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, GM_SMALL, 0, 0);
        for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_SMALL, 0, 0);
        eprob_pack(&P);
        int outs[3] = {ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F16}, dirs[3] = {ER_RND_NEAREST_EVEN, ER_RND_NEAREST_EVEN, ER_RND_ZERO};
        bad += medium_one("bf16 small-values 32x32x512 + C", &P, outs, dirs, 3);
        eprob_free(&P);
    }
    {
        /* small integers (sums exact in binary64: the engine's exact_f64 path), with an integral C */
        static const int fa[2] = {ER_FMT_BF16, ER_FMT_F16}, fb[2] = {ER_FMT_BF16, ER_FMT_F8E4M3FN};
        for (int q = 0; q < 2; q++) {
            eprob P;
            memset(&P, 0, sizeof P);
            P.fa = fa[q];
            P.fb = fb[q];
            P.fc = ER_FMT_F32;
            P.fsc = -1;
            P.m = 48;
            P.n = 40;
            P.k = 300;
            eprob_alloc(&P);
            for (int64_t e = 0; e < P.m * P.k; e++) P.A[e] = gen_pattern(rf(P.fa), &rng, GM_INT, 7, 0);
            for (int64_t e = 0; e < P.k * P.n; e++) P.B[e] = gen_pattern(rf(P.fb), &rng, GM_INT, 4, 0);
            for (int64_t e = 0; e < P.m * P.n; e++) P.C[e] = gen_pattern(rf(P.fc), &rng, GM_INT, 20, 0);
            eprob_pack(&P);
            int outs[3] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN};
            int dirs[3] = {ER_RND_NEAREST_EVEN, ER_RND_NEGATIVE_INF, ER_RND_NEAREST_AWAY};
            bad += medium_one(q ? "f16 x f8E4M3FN integers 48x40x300 + C" : "bf16 integers 48x40x300 + C", &P, outs,
                              dirs, 3);
            eprob_free(&P);
        }
    }
    ck_assert_msg(bad == 0, "medium: %ld mismatches (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_layout");
    TCase *tc = tcase_create("layout");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, views);
    tcase_add_test(tc, batches);
    tcase_add_test(tc, threads);
    tcase_add_test(tc, medium);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
