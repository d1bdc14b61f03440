/* check.c: er_check, the check as a library service: the output judged against the exact product tile
 * by tile (each tile's Result, bounds, covers and scoring, merged into one report), in bounded memory. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exactref/check.h"
#include "exactref/exactref.h"
#include "host/er_msg.h"
#include "result_internal.h"

/*
 * Tiles.  For each tile of the output (rows of one matrix of a batch, and a range of its columns) a
 * Result of its own on views of A's rows, B's columns, C, the scales, the output and a tile of the
 * rounded answer, its bounds, covers and scoring; the tiles of a band of rows are merged into the
 * band's report (er_check_report_merge_columns), the bands into the whole (er_check_report_merge).  A
 * tile's Result and bounds are freed before the next, so the bounds of the whole output never exist at
 * once.  What a tile holds (measured, src/tolerance.c and the CPU backends): about ER_CHECK_BLOCK_BYTES
 * bytes per output element (the bounds, the bounds' products, covered), ER_CHECK_SIDE_BYTES per
 * element of its A rows (mb x k) and of its B columns (k x nb) (their binary64 copies).  The tile is
 * chosen to hold about the bytes of the inputs and output (past ER_CHECK_SMALL bytes of them, twice
 * their bytes less ER_CHECK_SMALL; at most a quarter of physical memory): B's columns a third (all of
 * B when it fits, else at least ER_CHECK_MIN_COLS columns), the rest for the rows (at least
 * ER_CHECK_BLOCK_MIN elements); a batch of matrices that each fit in a tile goes matrix by matrix when
 * the whole batch would not.  Each tile's Result prepares its A rows and B columns again: smaller
 * tiles cost time (docs/cli.md).  The bits of the report are the one-pass report's
 * (tests/core/test_report_merge.c, tests/core/test_check_blocks.sh, tests/result/test_check.c).  The
 * rounded answer exists one tile at a time (the narrower-format hint is gathered per tile).
 */
#define ER_CHECK_BLOCK_BYTES 96
#define ER_CHECK_SIDE_BYTES 32
#define ER_CHECK_BLOCK_MIN (INT64_C(1) << 15)
#define ER_CHECK_MIN_COLS 128
#define ER_CHECK_SMALL (INT64_C(16) << 20)
/* the rule's budget at most (issue 34: the check's peak flat in n past n = 4096 for bf16 -> f32) */
#define ER_CHECK_MAX (INT64_C(256) << 20)
/* er_check_result tiles a Result of at least this many output elements (automatic tiles) */
#define ER_CHECK_RESULT_MIN (INT64_C(1) << 20)

#define msgf er_msgf /* host/er_msg.h */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void er_check_opts_init(er_check_opts *co)
{
    if (co) memset(co, 0, sizeof *co);
}

/* Rows r0 .. r0+mb-1 of matrix b of a 2-D or 3-D tensor, as a 2-D view (a 2-D tensor is every matrix
 * of the batch); then columns c0 .. c0+nb-1 when nb >= 0 (all rows: mb < 0). */
static er_tensor tile_view(const er_tensor *t, int64_t b, int64_t r0, int64_t mb, int64_t c0, int64_t nb)
{
    er_format_info fi;
    er_tensor v = *t;
    int64_t off = 0;
    er_format_get_info(t->format, &fi);
    if (t->ndim == 3) {
        off = b * t->strides[0];
        v.ndim = 2;
        v.shape[0] = t->shape[1];
        v.shape[1] = t->shape[2];
        v.strides[0] = t->strides[1];
        v.strides[1] = t->strides[2];
    }
    if (mb >= 0) {
        off += r0 * v.strides[0];
        v.shape[0] = mb;
    }
    if (nb >= 0) {
        off += c0 * v.strides[1];
        v.shape[1] = nb;
    }
    v.data = (unsigned char *)t->data + (size_t)off * (size_t)fi.storage_bytes;
    return v;
}

/* The product's shape as er_mma reads it (a 3-D operand makes a batch); 0 when it is not one. */
typedef struct {
    int64_t nmat, rows, cols, k;
    int batched;
} shape_of;

static int product_shape(const er_mma_args *args, shape_of *s)
{
    const er_tensor *a = args ? args->a : NULL, *b = args ? args->b : NULL;
    memset(s, 0, sizeof *s);
    if (!a || !b || (a->ndim != 2 && a->ndim != 3) || (b->ndim != 2 && b->ndim != 3)) return 0;
    s->batched = a->ndim == 3 || b->ndim == 3;
    s->nmat = a->ndim == 3 ? a->shape[0] : b->ndim == 3 ? b->shape[0] : 1;
    s->rows = a->shape[a->ndim - 2];
    s->k = a->shape[a->ndim - 1];
    s->cols = b->shape[b->ndim - 1];
    return s->nmat >= 0 && s->rows >= 0 && s->cols >= 0 && s->k >= 0;
}

/* The automatic tile (the rule above): *br = 0 for one pass. */
static void tile_auto(int64_t nmat, int64_t rows, int64_t cols, int64_t k, int64_t io_bytes, int64_t budget,
                      int64_t *br, int64_t *bc)
{
    *br = 0;
    *bc = cols;
    if (rows < 1 || cols < 1) return;
    int64_t kk = k > 0 ? k : 1;
    /* past 16 MiB of inputs and output, up to twice their bytes: fewer tiles (each prepares its
     * operands again) while the fixed part of the process weighs less; or the caller's budget */
    if (budget > 0) io_bytes = budget;
    else if (io_bytes > ER_CHECK_SMALL) io_bytes = 2 * io_bytes - ER_CHECK_SMALL;
    if (budget <= 0 && io_bytes > ER_CHECK_MAX) io_bytes = ER_CHECK_MAX;
    /* inputs larger than memory (read through mappings): a tile of at most a quarter of it */
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    double quarter = (double)pages * (double)psize / 4;
    if (pages > 0 && psize > 0 && quarter < (double)io_bytes)
        io_bytes = quarter > (double)ER_CHECK_SMALL ? (int64_t)quarter : ER_CHECK_SMALL;
    if (ER_CHECK_SIDE_BYTES * kk * cols > io_bytes / 3) {
        int64_t c = io_bytes / 3 / (ER_CHECK_SIDE_BYTES * kk);
        *bc = c < ER_CHECK_MIN_COLS ? ER_CHECK_MIN_COLS : c;
        if (*bc > cols) *bc = cols;
    }
    int64_t r = (io_bytes - ER_CHECK_SIDE_BYTES * kk * *bc) / (ER_CHECK_SIDE_BYTES * kk + ER_CHECK_BLOCK_BYTES * *bc);
    if (r * *bc < ER_CHECK_BLOCK_MIN) r = ER_CHECK_BLOCK_MIN / *bc;
    if (r < 1) r = 1;
    if (r >= rows && *bc >= cols) { /* a matrix in one tile: one pass, or a batch matrix by matrix */
        double need = (double)nmat * (double)(ER_CHECK_SIDE_BYTES * kk * cols +
                                              (ER_CHECK_SIDE_BYTES * kk + ER_CHECK_BLOCK_BYTES * cols) * rows);
        r = nmat > 1 && need > (double)io_bytes ? rows : 0;
    }
    *br = r > rows ? rows : r;
}

static int64_t bytes_of(const er_tensor *t, int64_t n)
{
    er_format_info fi;
    if (!t || er_format_get_info(t->format, &fi) != ER_OK) return 0;
    return n * fi.storage_bytes;
}

void er_check_plan(const er_mma_args *args, const er_tensor *output, const er_check_opts *co, int64_t *tile_rows,
                   int64_t *tile_cols)
{
    shape_of s;
    int64_t br = 0, bc = 0;
    if (product_shape(args, &s) && output && s.nmat * s.rows * s.cols > 0) {
        int64_t want_r = co ? co->tile_rows : 0, want_c = co ? co->tile_cols : 0;
        bc = s.cols;
        if (want_r > 0) {
            br = want_r > s.rows ? s.rows : want_r;
            bc = want_c > 0 && want_c < s.cols ? want_c : s.cols;
        } else if (want_r == 0) {
            const er_tensor *a = args->a, *b = args->b;
            int64_t io = bytes_of(output, s.nmat * s.rows * s.cols);
            io += bytes_of(a, (a->ndim == 3 ? s.nmat : 1) * s.rows * s.k);
            io += bytes_of(b, (b->ndim == 3 ? s.nmat : 1) * s.k * s.cols);
            tile_auto(s.nmat, s.rows, s.cols, s.k, io, co ? co->tile_bytes : 0, &br, &bc);
        }
    }
    if (br <= 0) bc = 0;
    if (tile_rows) *tile_rows = br;
    if (tile_cols) *tile_cols = bc;
}

/*
 * The narrower-format hint of the tiles (er_check_report_narrower's, whose definition this follows:
 * the first candidate format, of the five it lists, in which every output element is a finite value
 * exactly and some element of the rounded answer is not).  It needs the whole output and rounded
 * answer; the tiles gather it instead, tile by tile, so that the rounded answer is never held whole:
 * out_in[c] and r_in[c] stay 1 while every element seen so far is in candidate c.
 * tests/core/test_check_blocks.sh compares the hint of the tiles with the one-pass check's.
 */
typedef struct {
    int cand[5];
    int out_in[5], r_in[5];
} narrow_acc;

static void narrow_init(narrow_acc *n, int out_format, int a_format, int b_format)
{
    er_format_info fi;
    const int c[5] = {a_format, b_format, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
    er_format_get_info(out_format, &fi);
    for (int k = 0; k < 5; k++) {
        er_format_info ci;
        int ok = fi.kind == ER_KIND_FLOAT && c[k] >= 0 && c[k] != out_format && er_format_get_info(c[k], &ci) == ER_OK &&
                 ci.kind == ER_KIND_FLOAT && ci.width < fi.width;
        n->cand[k] = ok ? c[k] : -1;
        n->out_in[k] = n->r_in[k] = ok;
    }
}

/* Whether every element of the 2-D tensor t is a finite value of format f exactly. */
static int tile_in(const er_tensor *t, int f)
{
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    for (int64_t i = 0; i < t->shape[0]; i++)
        for (int64_t j = 0; j < t->shape[1]; j++) {
            const unsigned char *p = (const unsigned char *)t->data +
                                     (size_t)(i * t->strides[0] + j * t->strides[1]) * (size_t)fi.storage_bytes;
            uint64_t x = 0, y;
            unsigned flags = 0;
            er_val v;
            for (int k = fi.storage_bytes - 1; k >= 0; k--) x = x << 8 | p[k];
            if (er_decode_bits(t->format, x, &v) != ER_OK || v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) return 0;
            if (er_convert_bits(t->format, f, x, ER_RND_NEAREST_EVEN, 0u, &y, &flags) != ER_OK) return 0;
            if (flags & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID | ER_FLAG_UNDERFLOW)) return 0;
        }
    return 1;
}

static void narrow_tile(narrow_acc *n, const er_tensor *out, const er_tensor *rounded)
{
    for (int k = 0; k < 5; k++) {
        if (n->out_in[k]) n->out_in[k] = tile_in(out, n->cand[k]);
        if (n->out_in[k] && n->r_in[k]) n->r_in[k] = tile_in(rounded, n->cand[k]); /* only while it can matter */
    }
}

static int narrow_result(const narrow_acc *n, const er_check_report *rep)
{
    if (!rep->outside || !rep->elements) return -1;
    for (int k = 0; k < 5; k++)
        if (n->out_in[k] && !n->r_in[k]) return n->cand[k];
    return -1;
}

/* The caller's problem without its outputs, statistics, message and progress (the check's own). */
static er_mma_args problem_of(const er_mma_args *args)
{
    er_mma_args a = *args;
    a.lo = a.hi = a.odd = NULL;
    a.stats = NULL;
    a.msg = NULL;
    a.msg_size = 0;
    a.progress = NULL;
    a.progress_ctx = NULL;
    return a;
}

/* The tile t (contiguous, mb x nb) into rows r0.. and columns c0.. of matrix b of d. */
static void put_tile(const er_tensor *d, int64_t b, int64_t r0, int64_t c0, const er_tensor *t)
{
    er_format_info fi;
    er_format_get_info(d->format, &fi);
    er_tensor v = tile_view(d, b, r0, t->shape[0], c0, t->shape[1]);
    size_t sb = (size_t)fi.storage_bytes;
    for (int64_t i = 0; i < t->shape[0]; i++) {
        const unsigned char *src = (const unsigned char *)t->data + (size_t)(i * t->strides[0]) * sb;
        unsigned char *dst = (unsigned char *)v.data + (size_t)(i * v.strides[0]) * sb;
        if (v.strides[1] == 1) memcpy(dst, src, (size_t)t->shape[1] * sb);
        else
            for (int64_t j = 0; j < t->shape[1]; j++) memcpy(dst + (size_t)(j * v.strides[1]) * sb, src + (size_t)j * sb, sb);
    }
}

/* The library's progress hook (er_progress_fn) of one computation as a share of the whole check. */
typedef struct {
    const er_check_opts *co;
    const char *what;
    double lo, span;
} share;

static void on_progress(void *ctx, double fraction)
{
    const share *c = (const share *)ctx;
    c->co->progress(c->co->progress_ctx, c->what, c->lo + c->span * fraction);
}

static const char *const REF = "computing the exact reference", *const BOUND = "bounding every element";

/* Tell a note once each time it changes. */
static void tell(const er_check_opts *co, char *seen, size_t seen_size, const char *note)
{
    if (!note[0] || !strcmp(note, seen)) return;
    snprintf(seen, seen_size, "%s", note);
    if (co->note) co->note(co->note_ctx, seen);
}

/* The tiles (br x bc) of args' product against output; ER_OK and the merged report, or the first
 * tile's error (the caller says it again by the one-pass check). */
static er_status run_tiles(const er_mma_args *args, const er_tol_opts *o, const er_tensor *output,
                           const er_check_opts *co, const shape_of *s, int64_t br, int64_t bc, er_check_report *rep,
                           er_check_info *info, char *msg, size_t msg_size)
{
    er_format_info fo;
    er_format_get_info(output->format, &fo);
    unsigned char *bcov = malloc((size_t)(br * s->cols)), *tcov = malloc((size_t)(br * bc));
    unsigned char *dtile = malloc((size_t)(br * bc) * (size_t)fo.storage_bytes);
    er_status st = ER_OK;
    if (!bcov || !tcov || !dtile) {
        free(bcov);
        free(tcov);
        free(dtile);
        return msgf(msg, msg_size, ER_ENOMEM, "out of memory for a tile of %lld elements", (long long)(br * s->cols));
    }
    er_mma_stats *agg = &info->stats;
    er_check_report_merge_init(rep, output->ndim, output->shape, output->format);
    narrow_acc nacc;
    narrow_init(&nacc, output->format, args->a->format, args->b->format);
    int64_t done_el = 0, all_el = s->nmat * s->rows * s->cols;
    char note_seen[256] = "";
    share cp = {co, REF, 0, 1};
    for (int64_t bm = 0; bm < s->nmat && st == ER_OK; bm++)
        for (int64_t r0 = 0; r0 < s->rows && st == ER_OK; r0 += br) {
            int64_t mb = s->rows - r0 < br ? s->rows - r0 : br;
            er_check_report band;
            int64_t bshape[2] = {mb, s->cols};
            er_check_report_merge_init(&band, 2, bshape, output->format);
            for (int64_t c0 = 0; c0 < s->cols && st == ER_OK; c0 += bc) {
                int64_t nb = s->cols - c0 < bc ? s->cols - c0 : bc;
                er_tensor va = tile_view(args->a, bm, r0, mb, 0, -1), vb = tile_view(args->b, bm, 0, -1, c0, nb);
                er_tensor vo = tile_view(output, bm, r0, mb, c0, nb), vc, vsa, vsb;
                er_tensor vd = er_tensor_2d(output->format, mb, nb, dtile);
                er_mma_args ba = problem_of(args);
                er_result *rb = NULL;
                ba.a = &va;
                ba.b = &vb;
                ba.d = &vd;
                if (args->c) {
                    vc = tile_view(args->c, bm, r0, mb, c0, nb);
                    ba.c = &vc;
                }
                if (args->a_scale) {
                    vsa = tile_view(args->a_scale, bm, r0, mb, 0, -1);
                    vsb = tile_view(args->b_scale, bm, 0, -1, c0, nb);
                    ba.a_scale = &vsa;
                    ba.b_scale = &vsb;
                }
                cp.what = REF;
                cp.lo = (double)done_el / (double)all_el;
                cp.span = (double)(mb * nb) / (double)all_el;
                if (co->progress) {
                    co->progress(co->progress_ctx, cp.what, cp.lo);
                    ba.progress = on_progress;
                    ba.progress_ctx = &cp;
                }
                double t1 = now();
                st = er_result_create(&ba, &rb, msg, msg_size);
                info->seconds_reference += now() - t1;
                if (st != ER_OK) break;
                const er_mma_stats *ts = er_result_stats(rb);
                tell(co, note_seen, sizeof note_seen, ts->note);
                if (info->default_compute < 0) info->default_compute = er_result_default_compute(rb);
                cp.what = BOUND;
                if (co->progress) er_result_set_progress(rb, on_progress, &cp);
                const er_bounds *bd;
                er_check_report part;
                int64_t outside = 0;
                st = er_result_bounds(rb, o, &bd, msg, msg_size);
                if (st == ER_OK) st = er_result_covers(rb, o, &vo, tcov, &outside, msg, msg_size);
                if (st == ER_OK)
                    st = er_check_report_score(bd, &vo, er_result_rounded(rb), tcov, outside, &va, &vb, NULL, 0, &part,
                                               msg, msg_size);
                if (st == ER_OK) st = er_check_report_merge_columns(&band, &part, c0, tcov, bcov, msg, msg_size);
                tell(co, note_seen, sizeof note_seen, ts->note); /* a note that the bounds added */
                agg->elements += ts->elements;
                agg->fast_decided += ts->fast_decided;
                agg->exact_f64 += ts->exact_f64;
                agg->exact_path += ts->exact_path;
                agg->wrapped += ts->wrapped;
                if (ts->threads > agg->threads) agg->threads = ts->threads;
                if (!done_el) agg->backend = ts->backend;
                if (ts->backend != ER_BACKEND_CPU) agg->backend = ts->backend; /* a device, where one ran */
                snprintf(agg->note, sizeof agg->note, "%s", note_seen);
                er_result_set_progress(rb, NULL, NULL);
                er_result_free(rb);
                /* the tile's output and rounded answer for the narrower-format hint (dtile holds the
                 * rounded answer, written by the Result) */
                if (st == ER_OK) narrow_tile(&nacc, &vo, &vd);
                if (st == ER_OK && co->result) /* the tile's rounded answer into the caller's */
                    put_tile(args->d, bm, r0, c0, &vd);
                if (st == ER_OK && co->covered) /* the tile's covers into the whole output's */
                    for (int64_t i = 0; i < mb; i++)
                        memcpy(co->covered + (size_t)(((bm * s->rows) + r0 + i) * s->cols + c0), tcov + (size_t)(i * nb),
                               (size_t)nb);
                done_el += mb * nb;
                if (co->tile_done) co->tile_done(co->tile_ctx, bm, r0, mb, c0, nb);
            }
            if (st == ER_OK)
                st = er_check_report_merge(rep, &band, bcov, NULL, co->outside_index, co->outside_cap, msg, msg_size);
            if (co->band_done) co->band_done(co->band_ctx, bm, r0, mb);
        }
    if (st == ER_OK) rep->narrower_format = narrow_result(&nacc, rep);
    if (st == ER_OK && co->result) st = er_result_adopt_(args, agg, co->result);
    free(bcov);
    free(tcov);
    free(dtile);
    return st;
}

/* The one-pass check: one Result of the whole product (kept in *keep when keep is given, its rounded
 * answer in args->d; else in a buffer of its own). */
static er_status one_pass(const er_mma_args *args, const er_tol_opts *o, const er_tensor *output,
                          const er_check_opts *co, er_result **keep, er_check_report *rep, er_check_info *info,
                          char *msg, size_t msg_size)
{
    er_format_info fo;
    er_format_get_info(output->format, &fo);
    int64_t elems = 1;
    for (int d = 0; d < output->ndim; d++) elems *= output->shape[d];
    er_mma_args ba = problem_of(args);
    er_tensor D;
    void *dbuf = NULL;
    er_result *res = NULL;
    er_status st;
    if (keep) {
        if (!args->d || !args->d->data)
            return msgf(msg, msg_size, ER_EINVAL, "er_check: a kept Result needs args->d with storage");
    } else {
        if (!(dbuf = calloc(elems ? (size_t)elems : 1, (size_t)fo.storage_bytes)))
            return msgf(msg, msg_size, ER_ENOMEM, "out of memory for %lld elements", (long long)elems);
        D = output->ndim == 3 ? er_tensor_3d(output->format, output->shape[0], output->shape[1], output->shape[2], dbuf)
                              : er_tensor_2d(output->format, output->shape[0], output->shape[1], dbuf);
        ba.d = &D;
    }
    share cp = {co, REF, 0, 1};
    if (co->progress) {
        ba.progress = on_progress;
        ba.progress_ctx = &cp;
    }
    double t1 = now();
    st = er_result_create(&ba, &res, msg, msg_size);
    info->seconds_reference += now() - t1;
    if (st != ER_OK) {
        free(dbuf);
        return st;
    }
    char note_seen[256] = "";
    tell(co, note_seen, sizeof note_seen, er_result_stats(res)->note);
    cp.what = BOUND; /* the hook is called only from within the calls below */
    if (co->progress) {
        co->progress(co->progress_ctx, BOUND, -1);
        er_result_set_progress(res, on_progress, &cp);
    }
    st = er_check_report_compute(res, o, output, args->a, args->b, co->outside_index, co->outside_cap, rep, msg,
                                 msg_size);
    if (st == ER_OK && co->covered) st = er_result_covers(res, o, output, co->covered, NULL, msg, msg_size);
    er_result_set_progress(res, NULL, NULL);
    tell(co, note_seen, sizeof note_seen, er_result_stats(res)->note); /* a note that the bounds added */
    info->stats = *er_result_stats(res);
    info->default_compute = er_result_default_compute(res);
    if (keep && st == ER_OK) *keep = res;
    else er_result_free(res);
    free(dbuf);
    return st;
}

/* The output's shape against the product's: ER_OK, or a sentence. */
static er_status check_output(const shape_of *s, const er_tensor *output, char *msg, size_t msg_size)
{
    if (output->ndim != (s->batched ? 3 : 2) || output->shape[output->ndim - 2] != s->rows ||
        output->shape[output->ndim - 1] != s->cols || (s->batched && output->shape[0] != s->nmat)) {
        char os[80], ps[80];
        if (output->ndim == 3)
            snprintf(os, sizeof os, "%lld x %lld x %lld", (long long)output->shape[0], (long long)output->shape[1],
                     (long long)output->shape[2]);
        else if (output->ndim == 2)
            snprintf(os, sizeof os, "%lld x %lld", (long long)output->shape[0], (long long)output->shape[1]);
        else snprintf(os, sizeof os, "%d dimensions", output->ndim);
        if (s->batched)
            snprintf(ps, sizeof ps, "%lld x %lld x %lld", (long long)s->nmat, (long long)s->rows, (long long)s->cols);
        else snprintf(ps, sizeof ps, "%lld x %lld", (long long)s->rows, (long long)s->cols);
        return msgf(msg, msg_size, ER_EINVAL, "the output has shape %s; the product is %s", os, ps);
    }
    return ER_OK;
}

er_status er_check(const er_mma_args *args, const er_tol_opts *o, const er_tensor *output, const er_check_opts *co,
                   er_check_report *rep, er_check_info *info, char *msg, size_t msg_size)
{
    er_check_opts def;
    er_check_info inf;
    er_tol_opts odef;
    shape_of s;
    er_status st;
    if (msg && msg_size) msg[0] = 0;
    if (!args || !output || !rep) return msgf(msg, msg_size, ER_EINVAL, "er_check: args, output and rep are required");
    if (!args->a || !args->b) return msgf(msg, msg_size, ER_EINVAL, "er_check: A and B are required");
    if (!co) {
        er_check_opts_init(&def);
        co = &def;
    }
    if (!o) {
        er_tol_opts_init(&odef);
        o = &odef;
    }
    if (!info) info = &inf;
    memset(info, 0, sizeof *info);
    info->default_compute = -1;
    if (!product_shape(args, &s))
        return msgf(msg, msg_size, ER_EINVAL, "A and B must be 2-D or 3-D (a leading batch dimension)");
    if ((st = check_output(&s, output, msg, msg_size)) != ER_OK) return st;
    if (co->result) {
        *co->result = NULL;
        if (!args->d || !args->d->data)
            return msgf(msg, msg_size, ER_EINVAL, "er_check: a kept Result needs args->d with storage");
        if ((st = check_output(&s, args->d, msg, msg_size)) != ER_OK) return st;
        if (args->d->format != output->format)
            return msgf(msg, msg_size, ER_EINVAL, "er_check: args->d and the output must have one format");
    }
    int64_t br = 0, bc = 0;
    er_check_plan(args, output, co, &br, &bc);
    if (br > 0) {
        info->tile_rows = br;
        info->tile_cols = bc;
        st = run_tiles(args, o, output, co, &s, br, bc, rep, info, msg, msg_size);
        if (st == ER_OK) return ER_OK;
        /* an error in a tile would name the tile's indices: the one-pass check says it with the whole
         * output's (and fails the same way) */
        memset(info, 0, sizeof *info);
        info->default_compute = -1;
        if (msg && msg_size) msg[0] = 0;
    }
    return one_pass(args, o, output, co, co->result, rep, info, msg, msg_size);
}

er_status er_check_result(er_result *r, const er_tol_opts *o, const er_tensor *output, const er_check_opts *co,
                          er_check_report *rep, er_check_info *info, int *tiled, char *msg, size_t msg_size)
{
    er_check_opts def;
    er_tol_opts odef;
    if (tiled) *tiled = 0;
    if (!r || !output || !rep || !tiled) return msgf(msg, msg_size, ER_EINVAL, "er_check_result: null argument");
    if (!co) {
        er_check_opts_init(&def);
        co = &def;
    }
    if (co->result) return msgf(msg, msg_size, ER_EINVAL, "er_check_result: co->result must be NULL");
    if (!o) {
        er_tol_opts_init(&odef);
        o = &odef;
    }
    /* a view or a result on earlier results (its bounds are not a tile's of its own problem), or
     * bounds kept (one pass over them costs less than tiles): the caller's one pass */
    if (!er_result_tileable_(r, o)) return ER_OK;
    /* below ER_CHECK_RESULT_MIN elements the one pass's bounds weigh little (r's reference is already
     * done; tiles would compute it again) */
    if (er_result_rounded(r)->ndim < 2) return ER_OK;
    int64_t count = 1;
    for (int d = 0; d < er_result_rounded(r)->ndim; d++) count *= er_result_rounded(r)->shape[d];
    if (count < ER_CHECK_RESULT_MIN && co->tile_rows == 0) return ER_OK;
    int64_t br = 0, bc = 0;
    er_check_plan(er_result_args_(r), output, co, &br, &bc);
    if (br <= 0) return ER_OK;
    *tiled = 1;
    er_result_drop_keep_(r); /* the tiles' Results keep their own */
    return er_check(er_result_args_(r), o, output, co, rep, info, msg, msg_size);
}
