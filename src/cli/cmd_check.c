/* cmd_check.c: `exactref check`: judge an implementation's output element by element, with proof. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_mma.h"
#include "cli_out.h"
#include "cli_report.h"
#include "cli_progress.h"
#include "exactref/report.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The library's progress hook (er_progress_fn): the phase's fraction on the progress line. */
typedef struct {
    er_cli_progress *pr;
    const char *what;
    double lo, span; /* the phase's fraction as a part of the whole (blocks: the block's share) */
} check_progress;

static void on_progress(void *ctx, double fraction)
{
    const check_progress *c = (const check_progress *)ctx;
    er_cli_progress_set(c->pr, c->what, c->lo + c->span * fraction);
}

/*
 * Blocks.  The check streams: for each tile of the output (rows of one matrix of a batch, and a range
 * of its columns) a result of its own on views of A's rows, B's columns, C, the scales, OUT and a
 * tile of the rounded answer, its bounds, covers and scoring; the tiles of a band of rows are merged
 * into the band's report (er_check_report_merge_columns), the bands into the whole
 * (er_check_report_merge).  A tile's result and bounds are freed before the next, so the bounds of the
 * whole output never exist at once.  What a tile holds (measured, src/tolerance.c and the CPU
 * backends): about ER_CHECK_BLOCK_BYTES bytes per output element (the bounds, the bounds' products,
 * covered), ER_CHECK_SIDE_BYTES per element of its A rows (mb x k) and of its B columns (k x nb) (their
 * binary64 copies).  The tile is chosen to hold about the bytes of the inputs and output (past
 * ER_CHECK_SMALL bytes of them, twice their bytes less ER_CHECK_SMALL): B's columns a third (all of B
 * when it fits, else at least ER_CHECK_MIN_COLS columns), the rest for the rows (at least
 * ER_CHECK_BLOCK_MIN elements); a batch of matrices that each fit in a tile goes matrix by matrix
 * when the whole batch would not.  Each tile's result prepares its A rows and B columns again:
 * smaller tiles cost time (docs/cli.md).  The bits of the report are the one-pass report's
 * (tests/core/test_report_merge.c, tests/core/test_check_blocks.sh).  --save-bounds keeps the one-pass
 * path (it writes the bounds of the whole output).  EXACTREF_CHECK_BLOCK_ROWS=R and
 * EXACTREF_CHECK_BLOCK_COLS=C set a tile's rows and columns (R = 0: one pass; C unset with R set: all
 * columns).  The .npy files are memory-mapped (er_cli_read_tensor; docs/cli.md, "Memory-mapped
 * inputs"): each band's pages of A, OUT, C and A's scales are given back once the band is done, and
 * the rounded answer exists one tile at a time (the narrower-format hint is gathered per tile), so
 * what the tiles hold does not grow with the output.
 */
#define ER_CHECK_BLOCK_BYTES 96
#define ER_CHECK_SIDE_BYTES 32
#define ER_CHECK_BLOCK_MIN (INT64_C(1) << 15)
#define ER_CHECK_MIN_COLS 128
#define ER_CHECK_SMALL (INT64_C(16) << 20)

/* Rows r0 .. r0+mb-1 (sliced) or all rows of matrix b of a 2-D or 3-D tensor, as a 2-D view (a 2-D
 * tensor is every matrix of the batch); then columns c0 .. c0+nb-1 when nb >= 0. */
static er_tensor tile_view(const er_tensor *t, int64_t b, int64_t r0, int64_t mb, int sliced, int64_t c0, int64_t nb)
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
    if (sliced) {
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

static int64_t env_size(const char *name)
{
    const char *e = getenv(name);
    if (!e || !*e) return -1;
    char *end;
    long long v = strtoll(e, &end, 10);
    return !*end && v >= 0 ? (int64_t)v : -1;
}

/* A tile's rows *br and columns *bc (the rule above); *br = 0: one pass. */
static void tile_for(int64_t nmat, int64_t rows, int64_t cols, int64_t k, int64_t io_bytes, int64_t *br, int64_t *bc)
{
    int64_t er = env_size("EXACTREF_CHECK_BLOCK_ROWS"), ec = env_size("EXACTREF_CHECK_BLOCK_COLS");
    if (er >= 0) {
        *br = er > rows ? rows : er;
        *bc = ec > 0 && ec < cols ? ec : cols;
        return;
    }
    *br = 0;
    *bc = cols;
    if (rows < 1 || cols < 1) return;
    int64_t kk = k > 0 ? k : 1;
    /* past 16 MiB of files, up to twice their bytes: fewer tiles (each prepares its operands again)
     * while the fixed part of the process weighs less */
    if (io_bytes > ER_CHECK_SMALL) io_bytes = 2 * io_bytes - ER_CHECK_SMALL;
    /* files larger than memory (read through their mappings): a tile of at most a quarter of it */
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

/* Give back the mapped pages of rows r0 .. r0+mb-1 of matrix b of t (all rows: mb < 0), once used
 * (nothing when t is not in the mapping). */
static void drop_rows(const _er_npy_map *map, const er_tensor *t, int64_t b, int64_t r0, int64_t mb)
{
    if (!map->base || !t->data) return;
    er_tensor v = mb < 0 ? tile_view(t, b, 0, 0, 0, 0, -1) : tile_view(t, b, r0, mb, 1, 0, -1);
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    if (v.shape[0] <= 0 || v.shape[1] <= 0 || v.strides[0] < 0 || v.strides[1] < 0) return;
    size_t span = (size_t)((v.shape[0] - 1) * v.strides[0] + (v.shape[1] - 1) * v.strides[1] + 1) * (size_t)fi.storage_bytes;
    _er_npy_map_drop(map, v.data, span);
}

/* The per-element bounds as .npy files in dir: tolerance.npy (float64), range_low.npy and
 * range_high.npy (the output format: finite_range's ends), has_range.npy (uint8: 0 where no finite
 * output is allowed, and the ends are then meaningless). */
static int save_bounds(const char *dir, const er_bounds *bd, const er_tensor *like, char *msg, size_t msg_size)
{
    char path[4096];
    int ndim = like->ndim;
    int64_t shape[3];
    er_status st;
    for (int d = 0; d < ndim; d++) shape[d] = like->shape[d];
    if (er_cli_make_dir(dir) != 0) {
        snprintf(msg, msg_size, "%s: cannot create the directory: %s", dir, strerror(errno));
        return ER_EXIT_INTERNAL;
    }
    snprintf(path, sizeof path, "%s/tolerance.npy", dir);
    if ((st = er_npy_write(path, "<f8", ndim, shape, bd->tolerance, msg, msg_size)) != ER_OK) return ER_EXIT_INTERNAL;
    snprintf(path, sizeof path, "%s/has_range.npy", dir);
    if ((st = er_npy_write(path, "|u1", ndim, shape, bd->has_range, msg, msg_size)) != ER_OK) return ER_EXIT_INTERNAL;
    er_format_info fi;
    er_format_get_info(like->format, &fi);
    size_t n = (size_t)bd->count, sb = (size_t)fi.storage_bytes;
    unsigned char *buf = malloc(n ? n * sb : 1);
    if (!buf) {
        snprintf(msg, msg_size, "out of memory for the bounds");
        return ER_EXIT_INTERNAL;
    }
    for (int side = 0; side < 2; side++) {
        const uint64_t *src = side ? bd->high : bd->low;
        for (size_t e = 0; e < n; e++) {
            uint64_t v = bd->has_range[e] ? src[e] : 0;
            for (size_t k = 0; k < sb; k++) buf[e * sb + k] = (unsigned char)(v >> (8 * k));
        }
        er_tensor t = ndim == 3 ? er_tensor_3d(like->format, shape[0], shape[1], shape[2], buf)
                                : er_tensor_2d(like->format, shape[0], shape[1], buf);
        snprintf(path, sizeof path, "%s/%s", dir, side ? "range_high.npy" : "range_low.npy");
        if ((st = er_npy_write_tensor(path, &t, msg, msg_size)) != ER_OK) {
            free(buf);
            return ER_EXIT_INTERNAL;
        }
    }
    free(buf);
    return ER_EXIT_OK;
}

int er_cmd_check(int argc, char **argv)
{
    const char *pos[3] = {NULL, NULL, NULL}, *json = NULL, *junit = NULL, *save = NULL, *plot = NULL, *bounds_dir = NULL;
    int npos = 0, rc = ER_EXIT_OK, compute = -1, progress = 1;
    double ulps = 0;
    int std_given = 0;
    er_cli_mma m;
    er_standard std;
    er_npy outn;
    _er_npy_map omap = {NULL, 0};
    er_tensor O;
    void *ostore = NULL, *dbuf = NULL;
    int64_t *outside_idx = NULL;
    unsigned char *bcov = NULL, *tcov = NULL, *dtile = NULL;
    er_result *res = NULL;
    char msg[1024];
    memset(&outn, 0, sizeof outn);
    er_standard_parse("normal", &std, NULL, 0);
    er_cli_mma_init(&m, "check");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = er_cli_mma_option(&m, argc, argv, &i);
        if (r < 0) return ER_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--compute") || !strcmp(a, "--standard") || !strcmp(a, "--ulps") || !strcmp(a, "--json") ||
            !strcmp(a, "--junit") || !strcmp(a, "--save-failures") || !strcmp(a, "--plot") ||
            !strcmp(a, "--save-bounds")) {
            if (i + 1 >= argc) return er_cli_usage_error("check", "%s needs a value", a);
            if (er_cli_mma_once(&m, a)) return ER_EXIT_USAGE;
            const char *v = argv[++i];
            if (!strcmp(a, "--compute")) {
                if (er_cli_parse_format("check", a, v, &compute)) return ER_EXIT_USAGE;
            } else if (!strcmp(a, "--standard")) {
                if (!strcmp(v, "list")) { /* the standards' table (name, family, k, F, p, rounding, promotion, aliases) */
                    size_t n = er_standard_table(NULL, 0);
                    char *t = (char *)malloc(n + 1);
                    if (!t) return ER_EXIT_INTERNAL;
                    er_standard_table(t, n + 1);
                    fputs(t, stdout);
                    free(t);
                    return ER_EXIT_OK; /* main checks that standard output was written */
                }
                if (er_standard_parse(v, &std, msg, sizeof msg) != ER_OK) return er_cli_usage_error("check", "%s", msg);
                std_given = 1;
            } else if (!strcmp(a, "--ulps")) {
                char *e;
                ulps = strtod(v, &e);
                if (*e || !*v || !(ulps >= 0) || !isfinite(ulps))
                    return er_cli_usage_error("check", "--ulps: '%s' is not a non-negative number", v);
            } else if (!strcmp(a, "--json")) json = v;
            else if (!strcmp(a, "--junit")) junit = v;
            else if (!strcmp(a, "--plot")) plot = v;
            else if (!strcmp(a, "--save-bounds")) bounds_dir = v;
            else save = v;
        } else if (!strcmp(a, "--flush-to-zero")) {
            if (er_cli_mma_once(&m, a)) return ER_EXIT_USAGE;
            m.ftz = 1;
        } else if (!strcmp(a, "--no-progress")) {
            if (er_cli_mma_once(&m, a)) return ER_EXIT_USAGE;
            progress = 0;
        } else if (a[0] == '-' && a[1]) return er_cli_usage_error("check", "unknown option '%s'", a);
        else if (npos < 3) pos[npos++] = a;
        else return er_cli_usage_error("check", "unexpected argument '%s' (A.npy B.npy OUT.npy)", a);
    }
    if (npos < 3) return er_cli_usage_error("check", "three arrays are required: A.npy B.npy OUT.npy");
    if (compute >= 0 && compute != ER_FMT_F64 && compute != ER_FMT_F32 && compute != ER_FMT_F16 && compute != ER_FMT_BF16)
        return er_cli_usage_error("check", "--compute %s: the accumulation format must be f64, f32, f16 or bf16",
                                  er_format_name(compute));
    if (compute >= 0 && std.kind == ER_STD_ENGINE)
        return er_cli_usage_error("check", "--compute %s has no effect with --standard %s: a matrix-engine model fixes "
                                  "its own accumulator (--compute applies to normal and any_order)",
                                  er_format_name(compute), std.name);
    (void)std_given;
    m.A.path = pos[0];
    m.B.path = pos[1];
    /* every output checked before any work */
    {
        er_cli_files f;
        memset(&f, 0, sizeof f);
        er_cli_files_in(&f, pos[0], "A");
        er_cli_files_in(&f, pos[1], "B");
        er_cli_files_in(&f, pos[2], "OUT");
        er_cli_files_in(&f, m.C.path, "--acc");
        er_cli_files_in(&f, m.SA.path, "--a-scale");
        er_cli_files_in(&f, m.SB.path, "--b-scale");
        er_cli_files_out(&f, json, "--json", 1);
        er_cli_files_out(&f, junit, "--junit", 1);
        er_cli_files_out(&f, plot, "--plot", 1);
        /* the files of --save-failures (a.npy may be A itself, ...) and --save-bounds: outputs like the others */
        static const char *const bnames[4] = {"tolerance.npy", "has_range.npy", "range_low.npy", "range_high.npy"};
        const char *fnames[7] = {"a.npy", "b.npy", m.C.path ? "acc.npy" : NULL, m.SA.path ? "a_scale.npy" : NULL,
                                 m.SB.path ? "b_scale.npy" : NULL, "out.npy", "repro.sh"};
        const char *fcopy[7] = {pos[0], pos[1], m.C.path, m.SA.path, m.SB.path, pos[2], NULL};
        er_cli_files_dir(&f, save, "--save-failures", 7, fnames, fcopy);
        er_cli_files_dir(&f, bounds_dir, "--save-bounds", 4, bnames, NULL);
        if ((rc = er_cli_files_check("check", &f)) != 0) return rc;
        /* the bundle's fixed names must not replace files of the user's in an existing directory,
         * unless it holds an earlier bundle (a repro.sh) */
        if (save) {
            static const char *const names[6] = {"a.npy", "b.npy", "acc.npy", "a_scale.npy", "b_scale.npy", "out.npy"};
            const char *src[6] = {pos[0], pos[1], m.C.path, m.SA.path, m.SB.path, pos[2]};
            static const char *const roles[6] = {"A", "B", "--acc", "--a-scale", "--b-scale", "OUT"};
            char p[4096];
            /* never an input other than the one it is a copy of (a.npy may be A itself) */
            for (int k = 0; k < 6; k++) {
                snprintf(p, sizeof p, "%s/%s", save, names[k]);
                for (int q = 0; q < 6; q++)
                    if (q != k && src[q] && er_cli_same_file(p, src[q]))
                        return er_cli_usage_error("check", "--save-failures %s: %s is the input %s (%s): refusing to "
                                                  "overwrite an input", save, p, roles[q], src[q]);
            }
            /* an existing file of the bundle must be one the command may replace (not read-only, ...) */
            static const char *const all[7] = {"a.npy", "b.npy", "acc.npy", "a_scale.npy", "b_scale.npy", "out.npy",
                                               "repro.sh"};
            for (int k = 0; k < 7; k++) {
                char why[1024];
                snprintf(p, sizeof p, "%s/%s", save, all[k]);
                if (access(p, F_OK) == 0 && er_npy_output_check(p, why, sizeof why) != ER_OK)
                    return er_cli_usage_error("check", "--save-failures: %s", why);
            }
            snprintf(p, sizeof p, "%s/repro.sh", save);
            if (access(p, F_OK) != 0)
                for (int k = 0; k < 6; k++) {
                    snprintf(p, sizeof p, "%s/%s", save, names[k]);
                    if (access(p, F_OK) == 0 && !(src[k] && er_cli_same_file(p, src[k])))
                        return er_cli_usage_error("check", "--save-failures %s: %s exists and is not from an earlier "
                                                  "bundle (no repro.sh there): choose an empty or new directory",
                                                  save, p);
                }
        }
    }
    double t0 = now();
    /* the inputs and the output under test memory-mapped (docs/cli.md, "Memory-mapped inputs") */
    m.mapped = er_cli_mmap_enabled();
    if ((rc = er_cli_mma_load(&m)) != ER_EXIT_OK) goto done;
    /* the output under test: its format is --out-format, or its dtype's */
    {
        er_status st = er_cli_read_tensor(pos[2], m.mapped, &outn, &omap, m.ofmt, &O, &ostore, msg, sizeof msg);
        if (st != ER_OK) {
            fprintf(stderr, "exactref check: OUT: %s\n", msg);
            rc = st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
            goto done;
        }
    }
    if ((rc = er_cli_mma_validate(&m, O.format, pos[2])) != ER_EXIT_OK) goto done;
    if (er_cli_scaled_mode(&m) && !std_given) { /* scaled products: their standard (cli_scaled.c) */
        char sn[48];
        snprintf(sn, sizeof sn, "scaled:bk=%d", m.block > 0 ? m.block : 128);
        er_standard_parse(sn, &std, NULL, 0);
    }
    if ((rc = er_cli_standard_operands(&m, &std)) != ER_EXIT_OK) goto done; /* hopper-fp8 on f32 operands, ... */
    int64_t batch, rows, cols;
    int batched;
    er_cli_mma_shape(&m, &batch, &rows, &cols, &batched);
    if (O.ndim != (batched ? 3 : 2) || O.shape[O.ndim - 2] != rows || O.shape[O.ndim - 1] != cols ||
        (batched && O.shape[0] != batch)) {
        char os[80], ps[80];
        if (O.ndim == 3) snprintf(os, sizeof os, "%lld x %lld x %lld", (long long)O.shape[0], (long long)O.shape[1], (long long)O.shape[2]);
        else snprintf(os, sizeof os, "%lld x %lld", (long long)O.shape[0], (long long)O.shape[1]);
        if (batched) snprintf(ps, sizeof ps, "%lld x %lld x %lld", (long long)batch, (long long)rows, (long long)cols);
        else snprintf(ps, sizeof ps, "%lld x %lld", (long long)rows, (long long)cols);
        fprintf(stderr, "exactref check: OUT: %s has shape %s; the product is %s (A %s times B %s)\n", pos[2], os, ps,
                pos[0], pos[1]);
        rc = ER_EXIT_USAGE;
        goto done;
    }
    if ((rc = er_cli_mma_out_kind(&m, O.format, pos[2])) != ER_EXIT_OK) goto done;
    {
        er_format_info fi;
        er_format_get_info(O.format, &fi);
        if (fi.kind != ER_KIND_FLOAT && ulps > 0) {
            rc = er_cli_usage_error("check", "--ulps has no meaning for an integer output (%s)", fi.name);
            goto done;
        }
        if (fi.kind != ER_KIND_FLOAT && (std_given || compute >= 0)) {
            rc = er_cli_usage_error("check", "%s has no meaning for an integer product (mmai): its one correct output "
                                    "is the exact result", compute >= 0 ? "--compute" : "--standard");
            goto done;
        }
    }
    /* an operand or output held decoded (its tensor's storage) no longer needs the file's raw bytes,
     * which would otherwise stay resident through the bounds (one more copy); one that is the file's
     * own mapped bytes keeps its mapping.  The arrays' descriptions stay for the report. */
    {
        er_npy *raw[6] = {&m.A.npy, &m.B.npy, &m.C.npy, &m.SA.npy, &m.SB.npy, &outn};
        _er_npy_map *maps[6] = {&m.A.map, &m.B.map, &m.C.map, &m.SA.map, &m.SB.map, &omap};
        void *stores[6] = {m.A.storage, m.B.storage, m.C.storage, m.SA.storage, m.SB.storage, ostore};
        for (int k = 0; k < 6; k++)
            if (!maps[k]->base || stores[k]) er_cli_release_data(raw[k], maps[k]);
    }
    size_t elems = (size_t)(batch * rows * cols);
    er_format_info fo;
    er_format_get_info(O.format, &fo);
    outside_idx = malloc(sizeof(int64_t) * ER_CLI_OUTSIDE_CAP);
    if (!outside_idx) {
        fprintf(stderr, "exactref check: out of memory for %zu elements\n", elems);
        rc = ER_EXIT_INTERNAL;
        goto done;
    }
    /* the rounded answer D: whole only for the one-pass check (dbuf, allocated there); the tiles keep
     * one tile's (dtile) */
    er_tensor D = batched ? er_tensor_3d(O.format, batch, rows, cols, NULL) : er_tensor_2d(O.format, rows, cols, NULL);
    er_mma_args args;
    er_cli_mma_args(&m, &args);
    args.d = &D;
    check_progress cp = {er_cli_progress_start("check", "computing the exact reference", progress),
                         "computing the exact reference", 0, 1};
    er_cli_progress *pr = cp.pr;
    if (pr) { /* on a terminal only: otherwise the library has no hook to call */
        args.progress = on_progress;
        args.progress_ctx = &cp;
    }
    er_tol_opts o;
    er_tol_opts_init(&o);
    o.compute = compute;
    o.flush_to_zero = m.ftz;
    o.ulps = ulps;
    o.standard = std;
    er_check_report rep;
    er_mma_stats agg; /* the blocks' statistics together */
    const er_mma_stats *stats = NULL;
    int dcompute = -1;
    double t_ref = 0;
    er_status st = ER_OK;
    /* streamed in tiles (above), unless --save-bounds wants the whole output's bounds */
    int64_t io_bytes = (int64_t)(elems * (size_t)fo.storage_bytes);
    {
        er_format_info ai, bi;
        er_format_get_info(m.A.t.format, &ai);
        er_format_get_info(m.B.t.format, &bi);
        io_bytes += (int64_t)(batched && m.A.t.ndim == 3 ? batch : 1) * rows * m.A.t.shape[m.A.t.ndim - 1] * ai.storage_bytes;
        io_bytes += (int64_t)(batched && m.B.t.ndim == 3 ? batch : 1) * m.B.t.shape[m.B.t.ndim - 2] * cols * bi.storage_bytes;
    }
    int64_t brows = 0, bcols = cols;
    if (!bounds_dir && elems)
        tile_for(batched ? batch : 1, rows, cols, m.A.t.shape[m.A.t.ndim - 1], io_bytes, &brows, &bcols);
    if (er_cli_scaled_mode(&m)) brows = 0, bcols = cols; /* scaled products: one pass (cli_scaled.c) */
    if (brows > 0) {
        bcov = malloc((size_t)(brows * cols));
        tcov = malloc((size_t)(brows * bcols));
        dtile = malloc((size_t)(brows * bcols) * (size_t)fo.storage_bytes);
        if (!bcov || !tcov || !dtile) {
            fprintf(stderr, "exactref check: out of memory for a block of %lld elements\n", (long long)(brows * cols));
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        memset(&agg, 0, sizeof agg);
        er_check_report_merge_init(&rep, D.ndim, D.shape, O.format);
        narrow_acc nacc;
        narrow_init(&nacc, O.format, m.A.t.format, m.B.t.format);
        int64_t nmat = batched ? batch : 1, done_el = 0, all_el = nmat * rows * cols;
        char note_seen[256] = "";
        for (int64_t bm = 0; bm < nmat && st == ER_OK; bm++)
            for (int64_t r0 = 0; r0 < rows && st == ER_OK; r0 += brows) {
                int64_t mb = rows - r0 < brows ? rows - r0 : brows;
                er_check_report band;
                int64_t bshape[2] = {mb, cols};
                er_check_report_merge_init(&band, 2, bshape, O.format);
                for (int64_t c0 = 0; c0 < cols && st == ER_OK; c0 += bcols) {
                    int64_t nb = cols - c0 < bcols ? cols - c0 : bcols;
                    er_tensor va = tile_view(&m.A.t, bm, r0, mb, 1, 0, -1), vb = tile_view(&m.B.t, bm, 0, 0, 0, c0, nb);
                    er_tensor vo = tile_view(&O, bm, r0, mb, 1, c0, nb), vc, vsa, vsb;
                    er_tensor vd = er_tensor_2d(O.format, mb, nb, dtile);
                    er_mma_args ba = args;
                    er_result *rb = NULL;
                    ba.a = &va;
                    ba.b = &vb;
                    ba.d = &vd;
                    if (args.c) {
                        vc = tile_view(args.c, bm, r0, mb, 1, c0, nb);
                        ba.c = &vc;
                    }
                    if (args.a_scale) {
                        vsa = tile_view(args.a_scale, bm, r0, mb, 1, 0, -1);
                        vsb = tile_view(args.b_scale, bm, 0, 0, 0, c0, nb);
                        ba.a_scale = &vsa;
                        ba.b_scale = &vsb;
                    }
                    cp.what = "computing the exact reference";
                    cp.lo = (double)done_el / (double)all_el;
                    cp.span = (double)(mb * nb) / (double)all_el;
                    er_cli_progress_set(pr, cp.what, cp.lo);
                    double t1 = now();
                    st = er_result_create(&ba, &rb, msg, sizeof msg);
                    t_ref += now() - t1;
                    if (st != ER_OK) break;
                    const er_mma_stats *s = er_result_stats(rb);
                    if (s->note[0] && strcmp(s->note, note_seen)) {
                        snprintf(note_seen, sizeof note_seen, "%s", s->note);
                        fprintf(stderr, "exactref check: note: %s\n", note_seen);
                    }
                    if (dcompute < 0) dcompute = er_result_default_compute(rb);
                    cp.what = "bounding every element";
                    if (pr) er_result_set_progress(rb, on_progress, &cp);
                    const er_bounds *bd;
                    er_check_report part;
                    int64_t outside = 0;
                    st = er_result_bounds(rb, &o, &bd, msg, sizeof msg);
                    if (st == ER_OK) st = er_result_covers(rb, &o, &vo, tcov, &outside, msg, sizeof msg);
                    if (st == ER_OK)
                        st = er_check_report_score(bd, &vo, er_result_rounded(rb), tcov, outside, &va, &vb, NULL, 0,
                                                   &part, msg, sizeof msg);
                    if (st == ER_OK)
                        st = er_check_report_merge_columns(&band, &part, c0, tcov, bcov, msg, sizeof msg);
                    if (s->note[0] && strcmp(s->note, note_seen)) { /* a note that the bounds added */
                        snprintf(note_seen, sizeof note_seen, "%s", s->note);
                        fprintf(stderr, "exactref check: note: %s\n", note_seen);
                    }
                    agg.elements += s->elements;
                    agg.fast_decided += s->fast_decided;
                    agg.exact_f64 += s->exact_f64;
                    agg.exact_path += s->exact_path;
                    agg.wrapped += s->wrapped;
                    if (s->threads > agg.threads) agg.threads = s->threads;
                    if (!done_el) agg.backend = s->backend;
                    if (s->backend != ER_BACKEND_CPU) agg.backend = s->backend; /* a device, where one ran */
                    er_result_set_progress(rb, NULL, NULL);
                    er_result_free(rb);
                    /* the tile's output and rounded answer for the narrower-format hint (dtile holds the
                     * rounded answer, written by the Result) */
                    if (st == ER_OK) narrow_tile(&nacc, &vo, &vd);
                    done_el += mb * nb;
                }
                if (st == ER_OK)
                    st = er_check_report_merge(&rep, &band, bcov, NULL, outside_idx, ER_CLI_OUTSIDE_CAP, msg, sizeof msg);
                /* the band's rows of A, OUT, C and A's scales are done with: their mapped pages go back
                 * (read again from the page cache should a later matrix of the batch broadcast A) */
                drop_rows(&m.A.map, &m.A.t, bm, r0, mb);
                drop_rows(&omap, &O, bm, r0, mb);
                if (args.c) drop_rows(&m.C.map, args.c, bm, r0, mb);
                if (args.a_scale) drop_rows(&m.SA.map, args.a_scale, bm, r0, mb);
            }
        if (st == ER_OK) rep.narrower_format = narrow_result(&nacc, &rep);
        if (st == ER_OK) {
            stats = &agg;
            if (agg.wrapped) /* as matmul says: the defined result, worth knowing */
                fprintf(stderr, "exactref check: note: %lld element%s wrapped modulo 2^32 (the exact sum is outside the "
                        "i32 range)\n", (long long)agg.wrapped, agg.wrapped == 1 ? "" : "s");
        } else {
            /* an error in a block would name the block's indices: the one-shot path below says it with the
             * whole output's (and fails the same way) */
            st = ER_OK;
            t_ref = 0;
        }
    }
    if (!stats) {
        if (!(dbuf = calloc(elems ? elems : 1, (size_t)fo.storage_bytes))) {
            er_cli_progress_stop(pr);
            fprintf(stderr, "exactref check: out of memory for %zu elements\n", elems);
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        D.data = dbuf;
        cp.what = "computing the exact reference";
        cp.lo = 0;
        cp.span = 1;
        if (er_cli_scaled_mode(&m)) {
            er_scaled_args sa;
            er_cli_scaled_args(&m, &sa, &D);
            st = er_scaled_result_create(&sa, &res, msg, sizeof msg);
        } else {
            st = er_result_create(&args, &res, msg, sizeof msg);
        }
        if (st != ER_OK) {
            er_cli_progress_stop(pr);
            fprintf(stderr, "exactref check: %s\n", msg[0] ? msg : er_status_string(st));
            rc = er_cli_exit_for(st);
            goto done;
        }
        char note0[256];
        snprintf(note0, sizeof note0, "%s", er_result_stats(res)->note);
        if (note0[0]) fprintf(stderr, "exactref check: note: %s\n", note0);
        if (er_result_stats(res)->wrapped) /* as matmul says: the defined result, worth knowing */
            fprintf(stderr, "exactref check: note: %lld element%s wrapped modulo 2^32 (the exact sum is outside the i32 "
                    "range)\n", (long long)er_result_stats(res)->wrapped, er_result_stats(res)->wrapped == 1 ? "" : "s");
        t_ref = now() - t0;
        er_cli_progress_set(pr, "bounding every element", -1);
        cp.what = "bounding every element"; /* the hook is called only from within the calls below */
        if (pr) er_result_set_progress(res, on_progress, &cp);
        st = er_check_report_compute(res, &o, &O, &m.A.t, &m.B.t, outside_idx, ER_CLI_OUTSIDE_CAP, &rep, msg,
                                     sizeof msg);
        er_result_set_progress(res, NULL, NULL); /* the line is gone */
        /* a note that the bounds added (where they ran) */
        if (strcmp(note0, er_result_stats(res)->note))
            fprintf(stderr, "exactref check: note: %s\n", er_result_stats(res)->note);
        stats = er_result_stats(res);
        dcompute = er_result_default_compute(res);
    }
    er_cli_progress_stop(pr);
    if (st != ER_OK) {
        fprintf(stderr, "exactref check: %s\n", msg);
        rc = er_cli_exit_for(st);
        goto done;
    }
    er_cli_check c;
    char hint[256];
    memset(&c, 0, sizeof c);
    c.out_path = pos[2];
    c.m = &m;
    /* the standard the bounds used (cdna3 on fp8 operands is cdna3-fp8: er_standard_for_inputs) */
    er_standard used = er_standard_for_inputs(&std, m.A.t.format, m.B.t.format);
    c.standard = fo.kind == ER_KIND_FLOAT ? used.name : "exact (mmai)";
    c.compute = fo.kind == ER_KIND_FLOAT ? er_format_name(compute < 0 ? dcompute : compute) : "i32";
    c.ftz = m.ftz;
    c.rep = &rep;
    c.outside_index = outside_idx;
    c.seconds = now() - t0;
    c.seconds_ref = t_ref;
    c.stats = stats;
    er_cli_check_warnings(&c, hint);
    /* a report written to standard output ('-') is the whole of it: the text goes to stderr */
    int report_on_stdout = (json && !strcmp(json, "-")) || (junit && !strcmp(junit, "-")) || (plot && !strcmp(plot, "-"));
    FILE *text = report_on_stdout ? stderr : stdout;
    er_cli_report_text(text, &c);
    rc = rep.outside ? ER_EXIT_FAIL : ER_EXIT_OK;
    const struct {
        const char *path;
        void (*fn)(er_sbuf *, const er_cli_check *);
    } writers[3] = {{json, er_cli_report_json}, {junit, er_cli_report_junit}, {plot, er_cli_report_svg}};
    for (int w = 0; w < 3; w++) {
        if (!writers[w].path) continue;
        er_sbuf b = {0};
        writers[w].fn(&b, &c);
        int wr = er_cli_write_text("check", writers[w].path, b.p, b.len);
        er_sb_free(&b);
        if (wr) rc = wr;
    }
    if (bounds_dir) {
        const er_bounds *bd;
        int wr = ER_EXIT_OK;
        if ((st = er_result_bounds(res, &o, &bd, msg, sizeof msg)) != ER_OK) wr = er_cli_exit_for(st);
        else wr = save_bounds(bounds_dir, bd, &O, msg, sizeof msg);
        if (wr) {
            fprintf(stderr, "exactref check: --save-bounds %s: %s\n", bounds_dir, msg);
            rc = ER_EXIT_INTERNAL;
        }
    }
    if (save && rep.outside) {
        char why[1024];
        if (er_cli_save_failures(save, argc, argv, &c, why, sizeof why) != 0) {
            fprintf(stderr, "exactref check: cannot write the failure bundle into %s: %s\n", save, why);
            rc = ER_EXIT_INTERNAL;
        } else {
            fprintf(text, "  failure bundle     %s (run repro.sh there)\n", save);
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "exactref check: cannot write the report to standard output: %s\n", strerror(errno));
        rc = ER_EXIT_INTERNAL;
    }
done:
    er_result_free(res);
    er_cli_mma_free(&m);
    er_cli_release_data(&outn, &omap);
    free(ostore);
    free(outside_idx);
    free(bcov);
    free(tcov);
    free(dtile);
    free(dbuf);
    return rc;
}
