/* cmd_matmul.c: `exactref matmul`: the exact product of .npy operands, rounded once, to .npy. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_mma.h"
#include "cli_out.h"
#include "cli_progress.h"

/* The library's progress hook (er_progress_fn): the fraction of the product's rows done. */
static void on_progress(void *ctx, double fraction)
{
    er_cli_progress_set((er_cli_progress *)ctx, "computing the exact product", fraction);
}

int er_cmd_matmul(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    const char *out = NULL, *lo_path = NULL, *hi_path = NULL, *odd_path = NULL;
    int npos = 0, show_stats = 0, rc = ER_EXIT_OK, progress = 1;
    er_cli_mma m;
    void *dbuf = NULL, *lobuf = NULL, *hibuf = NULL, *oddbuf = NULL;
    er_cli_mma_init(&m, "matmul");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = er_cli_mma_option(&m, argc, argv, &i);
        if (r < 0) return ER_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--odd")) {
            if (i + 1 >= argc) return er_cli_usage_error("matmul", "%s needs a value", a);
            if (er_cli_mma_once(&m, a)) return ER_EXIT_USAGE;
            if (!strcmp(a, "--odd")) odd_path = argv[++i];
            else out = argv[++i];
        } else if (!strcmp(a, "--enclosure")) {
            if (i + 2 >= argc) return er_cli_usage_error("matmul", "--enclosure needs two values (LO.npy HI.npy)");
            if (er_cli_mma_once(&m, a)) return ER_EXIT_USAGE;
            lo_path = argv[++i];
            hi_path = argv[++i];
        } else if (!strcmp(a, "--flush-to-zero") || !strcmp(a, "--stats") || !strcmp(a, "--no-progress")) {
            if (er_cli_mma_once(&m, a)) return ER_EXIT_USAGE;
            if (a[2] == 'f') m.opts |= ER_OPT_FTZ, m.ftz = 1;
            else if (a[2] == 's') show_stats = 1;
            else progress = 0;
        }
        else if (a[0] == '-' && a[1]) return er_cli_usage_error("matmul", "unknown option '%s'", a);
        else if (npos < 2) pos[npos++] = a;
        else return er_cli_usage_error("matmul", "unexpected argument '%s' (operands: A.npy B.npy)", a);
    }
    if (npos < 2) return er_cli_usage_error("matmul", "two operands are required: A.npy B.npy");
    if (!out && !lo_path && !odd_path) return er_cli_usage_error("matmul", "-o D.npy is required");
    if (out && m.ofmt < 0) return er_cli_usage_error("matmul", "--out-format FORMAT is required");
    if (!out && m.ofmt >= 0) return er_cli_usage_error("matmul", "--out-format has no effect without -o D.npy");
    if (out && !strcmp(out, "-")) {
        /* standard output: written in place (a pipe) or, redirected to a file, that file replaced */
        if (isatty(1)) return er_cli_usage_error("matmul", "-o -: standard output is a terminal; redirect it to a file or a pipe");
        out = "/dev/stdout";
    }
    m.A.path = pos[0];
    m.B.path = pos[1];
    {
        er_cli_files f;
        memset(&f, 0, sizeof f);
        er_cli_mma_files_in(&f, &m, NULL, NULL);
        er_cli_files_out(&f, out, "-o", 0);
        er_cli_files_out(&f, lo_path, "--enclosure LO", 0);
        er_cli_files_out(&f, hi_path, "--enclosure HI", 0);
        er_cli_files_out(&f, odd_path, "--odd", 0);
        if ((rc = er_cli_files_check("matmul", &f)) != 0) return rc;
    }
    if ((rc = er_cli_mma_load(&m)) != ER_EXIT_OK) goto done;
    if ((rc = er_cli_mma_validate(&m, out ? m.ofmt : -1, "--out-format")) != ER_EXIT_OK ||
        (rc = er_cli_mma_out_kind(&m, out ? m.ofmt : -1, "--out-format")) != ER_EXIT_OK)
        goto done;
    {
        int64_t batch, rows, cols;
        int batched;
        er_tensor D, LO, HI, ODD;
        er_format_info fi;
        er_mma_args args;
        er_mma_stats stats;
        memset(&stats, 0, sizeof stats);
        char msg[1024];
        er_cli_mma_shape(&m, &batch, &rows, &cols, &batched);
        size_t elems = (size_t)(batch * rows * cols);
        er_cli_mma_args(&m, &args);
        args.stats = &stats;
        args.msg = msg;
        args.msg_size = sizeof msg;
#define MK(T, fmt, buf) (T = batched ? er_tensor_3d(fmt, batch, rows, cols, buf) : er_tensor_2d(fmt, rows, cols, buf))
        if (out) {
            er_format_get_info(m.ofmt, &fi);
            dbuf = calloc(elems ? elems : 1, (size_t)fi.storage_bytes);
            MK(D, m.ofmt, dbuf);
            args.d = &D;
        }
        if (lo_path) {
            lobuf = calloc(elems ? elems : 1, 8);
            hibuf = calloc(elems ? elems : 1, 8);
            MK(LO, ER_FMT_F64, lobuf);
            MK(HI, ER_FMT_F64, hibuf);
            args.lo = &LO;
            args.hi = &HI;
        }
        if (odd_path) {
            oddbuf = calloc(elems ? elems : 1, 8);
            MK(ODD, ER_FMT_F64, oddbuf);
            args.odd = &ODD;
        }
#undef MK
        if ((out && !dbuf) || (lo_path && (!lobuf || !hibuf)) || (odd_path && !oddbuf)) {
            fprintf(stderr, "exactref matmul: out of memory for the outputs (%zu elements)\n", elems);
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        er_status st;
        er_cli_progress *pr = er_cli_progress_start("matmul", "computing the exact product", progress);
        if (pr) { /* on a terminal only: otherwise the library has no hook to call */
            args.progress = on_progress;
            args.progress_ctx = pr;
        }
        if (er_cli_scaled_mode(&m)) {
            /* f32 scales after a block's sum (cli_scaled.c): the scaled product's result writes D */
            er_scaled_args sa;
            er_result *sr = NULL;
            er_cli_scaled_args(&m, &sa, &D);
            st = lo_path || odd_path ? ER_EUNSUPPORTED : er_scaled_result_create(&sa, &sr, msg, sizeof msg);
            if (st == ER_EUNSUPPORTED && (lo_path || odd_path))
                snprintf(msg, sizeof msg, "--lo/--hi and --odd are not available for scaled products");
            er_result_free(sr);
        } else {
            st = er_mma(&args);
        }
        er_cli_progress_stop(pr);
        if (st != ER_OK) {
            fprintf(stderr, "exactref matmul: %s\n", msg[0] ? msg : er_status_string(st));
            rc = er_cli_exit_for(st);
            goto done;
        }
        if ((out && (st = er_npy_write_tensor(out, &D, msg, sizeof msg)) != ER_OK) ||
            (lo_path && (st = er_npy_write_tensor(lo_path, &LO, msg, sizeof msg)) != ER_OK) ||
            (lo_path && (st = er_npy_write_tensor(hi_path, &HI, msg, sizeof msg)) != ER_OK) ||
            (odd_path && (st = er_npy_write_tensor(odd_path, &ODD, msg, sizeof msg)) != ER_OK)) {
            /* every path was checked before the work: a failure now is the system's (memory, disk) */
            fprintf(stderr, "exactref matmul: %s\n", msg);
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        if (stats.note[0]) fprintf(stderr, "exactref matmul: note: %s\n", stats.note);
        if (show_stats)
        {
            if (stats.backend == ER_BACKEND_OPENCL || stats.backend == ER_BACKEND_CUDA)
                fprintf(stderr, "exactref matmul: %lld elements on the %s device: %lld in exact binary64, %lld by the exact accumulator\n",
                        (long long)stats.elements, stats.backend == ER_BACKEND_CUDA ? "CUDA" : "OpenCL",
                        (long long)stats.exact_f64, (long long)stats.exact_path);
            else
                fprintf(stderr,
                        "exactref matmul: %lld elements on %d threads (cpu): %lld by the certified fast path, %lld in "
                        "exact binary64 (integral inputs), %lld by the exact accumulator\n",
                        (long long)stats.elements, stats.threads, (long long)stats.fast_decided,
                        (long long)stats.exact_f64, (long long)stats.exact_path);
        }
        if (stats.wrapped)
            fprintf(stderr, "exactref matmul: note: %lld %s wrapped modulo 2^32 (%s exact sum is outside the i32 "
                            "range)\n", (long long)stats.wrapped, stats.wrapped == 1 ? "element" : "elements",
                    stats.wrapped == 1 ? "its" : "their");
    }
done:
    er_cli_mma_free(&m);
    free(dbuf);
    free(lobuf);
    free(hibuf);
    free(oddbuf);
    return rc;
}
