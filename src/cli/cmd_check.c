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
#include "exactref/check.h"
#include "exactref/report.h"
#include "standards_internal.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * The check itself is the library's (er_check, src/check.c: the output in tiles, each tile's Result,
 * bounds, covers and scoring merged into one report, the tiles' sizes by memory).  What stays here:
 * EXACTREF_CHECK_BLOCK_ROWS=R and EXACTREF_CHECK_BLOCK_COLS=C set a tile's rows and columns (R = 0:
 * one pass; C unset with R set: all columns), --save-bounds keeps the one-pass path (it writes the
 * bounds of the whole output), and the .npy files are memory-mapped (er_cli_read_tensor; docs/cli.md,
 * "Memory-mapped inputs"): each band's pages of A, OUT, C and A's scales are given back once the band
 * is done (er_check's band hook), so what the tiles hold does not grow with the output.
 */
static int64_t env_size(const char *name)
{
    const char *e = getenv(name);
    if (!e || !*e) return -1;
    char *end;
    long long v = strtoll(e, &end, 10);
    return !*end && v >= 0 ? (int64_t)v : -1;
}

/* The mapped files whose pages a finished band gives back. */
typedef struct {
    const _er_npy_map *map[4];
    const er_tensor *t[4];
} band_drop;

/* Give back the mapped pages of rows r0 .. r0+mb-1 of matrix b of t, once used (nothing when t is not
 * in the mapping). */
static void drop_rows(const _er_npy_map *map, const er_tensor *t, int64_t b, int64_t r0, int64_t mb)
{
    if (!map->base || !t || !t->data) return;
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    int64_t sr = t->strides[t->ndim - 2], sc = t->strides[t->ndim - 1], n = t->shape[t->ndim - 1];
    int64_t off = (t->ndim == 3 ? b * t->strides[0] : 0) + r0 * sr;
    if (mb <= 0 || n <= 0 || sr < 0 || sc < 0) return;
    size_t span = (size_t)((mb - 1) * sr + (n - 1) * sc + 1) * (size_t)fi.storage_bytes;
    _er_npy_map_drop(map, (const unsigned char *)t->data + (size_t)off * (size_t)fi.storage_bytes, span);
}

/* er_check's band hook: the band's rows of A, OUT, C and A's scales are done with: their mapped pages
 * go back (read again from the page cache should a later matrix of the batch broadcast A) */
static void on_band(void *ctx, int64_t matrix, int64_t r0, int64_t rows)
{
    const band_drop *d = (const band_drop *)ctx;
    for (int k = 0; k < 4; k++)
        if (d->map[k]) drop_rows(d->map[k], d->t[k], matrix, r0, rows);
}

/* er_check's tile hook: the tile's columns of B (all k rows) are done with until the next band: their
 * mapped pages go back (read again from the page cache then), so B's share does not grow with n */
static void on_tile(void *ctx, int64_t matrix, int64_t r0, int64_t rows, int64_t c0, int64_t cols)
{
    const er_cli_operand *B = (const er_cli_operand *)ctx;
    const er_tensor *t = &B->t;
    (void)r0, (void)rows;
    if (!B->map.base || !t->data || cols <= 0) return;
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    int64_t k = t->shape[t->ndim - 2], s0 = t->strides[t->ndim - 2], s1 = t->strides[t->ndim - 1];
    int64_t off = t->ndim == 3 ? matrix * t->strides[0] : 0;
    const unsigned char *base = (const unsigned char *)t->data;
    size_t sb = (size_t)fi.storage_bytes;
    if (k <= 0 || s0 < 0 || s1 < 0) return;
    if (s0 == 1) /* B stored by columns: the tile's columns are one run */
        _er_npy_map_drop(&B->map, base + (size_t)(off + c0 * s1) * sb, (size_t)((cols - 1) * s1 + k) * sb);
    else
        for (int64_t p = 0; p < k; p++)
            _er_npy_map_drop(&B->map, base + (size_t)(off + p * s0 + c0 * s1) * sb, (size_t)((cols - 1) * s1 + 1) * sb);
}

/* er_check's notes, said as they come. */
static void on_note(void *ctx, const char *note)
{
    (void)ctx;
    fprintf(stderr, "exactref check: note: %s\n", note);
}

/* er_check's progress on the progress line. */
static void on_check_progress(void *ctx, const char *what, double fraction)
{
    er_cli_progress_set((er_cli_progress *)ctx, what, fraction);
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
    er_result *res = NULL;
    char msg[1024];
    for (int i = 1; i < argc; i++) /* an operation beyond matmul: cmd_check_op.c */
        if (!strcmp(argv[i], "--op")) return er_cmd_check_op(argc, argv);
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
        er_cli_mma_files_in(&f, &m, pos[2], "OUT");
        er_cli_files_out(&f, json, "--json", 1);
        er_cli_files_out(&f, junit, "--junit", 1);
        er_cli_files_out(&f, plot, "--plot", 1);
        /* the files of --save-failures (a.npy may be A itself, ...) and --save-bounds: outputs like the others */
        static const char *const bnames[4] = {"tolerance.npy", "has_range.npy", "range_low.npy", "range_high.npy"};
        const char *fnames[8] = {"a.npy", "b.npy", m.C.path ? "acc.npy" : NULL, m.SA.path ? "a_scale.npy" : NULL,
                                 m.SB.path ? "b_scale.npy" : NULL, "out.npy", m.BIAS.path ? "bias.npy" : NULL,
                                 "repro.sh"};
        const char *fcopy[8] = {pos[0], pos[1], m.C.path, m.SA.path, m.SB.path, pos[2], m.BIAS.path, NULL};
        er_cli_files_dir(&f, save, "--save-failures", 8, fnames, fcopy);
        er_cli_files_dir(&f, bounds_dir, "--save-bounds", 4, bnames, NULL);
        if ((rc = er_cli_files_check("check", &f)) != 0) return rc;
        /* the bundle's fixed names must not replace files of the user's in an existing directory,
         * unless it holds an earlier bundle (a repro.sh) */
        if (save) {
            static const char *const names[7] = {"a.npy",       "b.npy",   "acc.npy", "a_scale.npy",
                                                 "b_scale.npy", "out.npy", "bias.npy"};
            const char *src[7] = {pos[0], pos[1], m.C.path, m.SA.path, m.SB.path, pos[2], m.BIAS.path};
            static const char *const roles[7] = {"A", "B", "--acc", "--a-scale", "--b-scale", "OUT", "--bias"};
            char p[4096];
            /* never an input other than the one it is a copy of (a.npy may be A itself) */
            for (int k = 0; k < 7; k++) {
                snprintf(p, sizeof p, "%s/%s", save, names[k]);
                for (int q = 0; q < 7; q++)
                    if (q != k && src[q] && er_cli_same_file(p, src[q]))
                        return er_cli_usage_error("check", "--save-failures %s: %s is the input %s (%s): refusing to "
                                                  "overwrite an input", save, p, roles[q], src[q]);
            }
            /* an existing file of the bundle must be one the command may replace (not read-only, ...) */
            static const char *const all[8] = {"a.npy",   "b.npy",    "acc.npy", "a_scale.npy", "b_scale.npy",
                                               "out.npy", "bias.npy", "repro.sh"};
            for (int k = 0; k < 8; k++) {
                char why[1024];
                snprintf(p, sizeof p, "%s/%s", save, all[k]);
                if (access(p, F_OK) == 0 && er_npy_output_check(p, why, sizeof why) != ER_OK)
                    return er_cli_usage_error("check", "--save-failures: %s", why);
            }
            snprintf(p, sizeof p, "%s/repro.sh", save);
            if (access(p, F_OK) != 0)
                for (int k = 0; k < 7; k++) {
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
    er_mma_args args;
    er_cli_mma_args(&m, &args);
    er_tensor D = batched ? er_tensor_3d(O.format, batch, rows, cols, NULL) : er_tensor_2d(O.format, rows, cols, NULL);
    er_cli_progress *pr = er_cli_progress_start("check", "computing the exact reference", progress);
    er_tol_opts o;
    er_tol_opts_init(&o);
    o.compute = compute;
    o.flush_to_zero = m.ftz;
    o.ulps = ulps;
    o.standard = std;
    er_check_opts co;
    er_check_opts_init(&co);
    if (pr) { /* on a terminal only: otherwise the library has no hook to call */
        co.progress = on_check_progress;
        co.progress_ctx = pr;
    }
    co.note = on_note;
    co.outside_index = outside_idx;
    co.outside_cap = ER_CLI_OUTSIDE_CAP;
    band_drop drops = {{&m.A.map, &omap, args.c ? &m.C.map : NULL, args.a_scale ? &m.SA.map : NULL},
                       {&m.A.t, &O, args.c, args.a_scale}};
    co.band_done = on_band;
    co.band_ctx = &drops;
    co.tile_done = on_tile;
    co.tile_ctx = &m.B;
    int64_t er_ = env_size("EXACTREF_CHECK_BLOCK_ROWS"), ec_ = env_size("EXACTREF_CHECK_BLOCK_COLS");
    if (er_ >= 0) {
        co.tile_rows = er_ ? er_ : -1;
        co.tile_cols = ec_ > 0 ? ec_ : 0;
    }
    if (bounds_dir) { /* the bounds of the whole output: one pass, its Result kept */
        if (!(dbuf = calloc(elems ? elems : 1, (size_t)fo.storage_bytes))) {
            er_cli_progress_stop(pr);
            fprintf(stderr, "exactref check: out of memory for %zu elements\n", elems);
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        D.data = dbuf;
        args.d = &D;
        co.result = &res;
        co.tile_rows = -1;
    }
    er_check_report rep;
    er_check_info info;
    double t_check = now();
    er_status st;
    if (er_cli_scaled_mode(&m)) {
        /* scaled products (f32 scales after a block's sum, cli_scaled.c): their own Result, one pass */
        memset(&info, 0, sizeof info);
        if (!dbuf && !(dbuf = calloc(elems ? elems : 1, (size_t)fo.storage_bytes))) {
            er_cli_progress_stop(pr);
            fprintf(stderr, "exactref check: out of memory for %zu elements\n", elems);
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        D.data = dbuf;
        er_scaled_args sa;
        er_cli_scaled_args(&m, &sa, &D);
        st = er_scaled_result_create(&sa, &res, msg, sizeof msg);
        info.seconds_reference = now() - t_check;
        if (st == ER_OK) {
            const char *note = er_result_stats(res)->note;
            if (note[0]) fprintf(stderr, "exactref check: note: %s\n", note);
            st = er_check_report_compute(res, &o, &O, &m.A.t, &m.B.t, outside_idx, ER_CLI_OUTSIDE_CAP, &rep, msg,
                                         sizeof msg);
        }
        if (st == ER_OK) {
            info.stats = *er_result_stats(res);
            info.default_compute = er_result_default_compute(res);
        }
    } else {
        st = er_check(&args, &o, &O, &co, &rep, &info, msg, sizeof msg);
    }
    er_cli_progress_stop(pr);
    if (st != ER_OK) {
        fprintf(stderr, "exactref check: %s\n", msg[0] ? msg : er_status_string(st));
        rc = er_cli_exit_for(st);
        goto done;
    }
    if (info.stats.wrapped) /* as matmul says: the defined result, worth knowing */
        fprintf(stderr, "exactref check: note: %lld element%s wrapped modulo 2^32 (the exact sum is outside the i32 "
                "range)\n", (long long)info.stats.wrapped, info.stats.wrapped == 1 ? "" : "s");
    /* the reference's time; the one-pass check counts the files' reading in it, as it always has */
    double t_ref = info.seconds_reference + (info.tile_rows ? 0 : t_check - t0);
    const er_mma_stats *stats = &info.stats;
    int dcompute = info.default_compute;
    er_cli_check c;
    char hint[256];
    memset(&c, 0, sizeof c);
    c.out_path = pos[2];
    c.m = &m;
    /* the standard the bounds used (cdna3 on fp8 operands is cdna3-fp8: er_standard_for_inputs) */
    er_standard used = er_standard_for_inputs(&std, m.A.t.format, m.B.t.format);
    c.standard = fo.kind == ER_KIND_FLOAT ? used.name : "exact (mmai)";
    /* the accumulator the bounds used: a matrix-engine model's D and a blocked standard's acc= fix it */
    int acc = er_standard_accumulator_(&used, compute < 0 ? dcompute : compute);
    c.compute = fo.kind == ER_KIND_FLOAT ? er_format_name(acc) : "i32";
    c.ftz = m.ftz;
    c.rep = &rep;
    c.outside_index = outside_idx;
    c.seconds = now() - t0;
    c.seconds_ref = t_ref;
    c.stats = stats;
    er_cli_check_warnings(&c, hint);
    FILE *text = er_cli_report_write(&c, json, junit, plot, &rc);
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
    free(dbuf);
    return rc;
}
