/* cmd_check_op.c: `exactref check --op NAME`: judge an operation's output (softmax, gelu, layer_norm,
 * attention, ...) element by element with the library's er_opres, reported as the matmul check is. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_mma.h"
#include "cli_out.h"
#include "cli_report.h"
#include "exactref/ops.h"

#define MAXIN 8
#define MAXOPT 24

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One .npy file as an N-D tensor of format declared (-1: its dtype's): read and validated by the
 * library's reader over its elements seen as a 2-D array (rows x last dimension), then given its own
 * shape (contiguous). */
static er_status read_nd(const char *path, int declared, er_npy *npy, void **storage, er_optensor *t, char *msg,
                         size_t msg_size)
{
    er_status st = er_npy_read(path, npy, msg, msg_size);
    if (st != ER_OK) return st;
    er_npy flat = *npy;
    int64_t n = 1;
    for (int d = 0; d < npy->ndim; d++) n *= npy->shape[d];
    flat.ndim = 2;
    flat.shape[0] = npy->ndim >= 2 ? n / (npy->shape[npy->ndim - 1] ? npy->shape[npy->ndim - 1] : 1) : 1;
    flat.shape[1] = npy->ndim >= 1 ? npy->shape[npy->ndim - 1] : 1;
    if (npy->ndim >= 2 && npy->shape[npy->ndim - 1] == 0) flat.shape[0] = 0;
    er_tensor t2;
    if ((st = er_npy_to_tensor(&flat, path, declared, &t2, storage, msg, msg_size)) != ER_OK) return st;
    if (t2.ndim != 2 || (t2.shape[0] > 1 && t2.strides[0] != t2.shape[1]) || (t2.shape[1] > 1 && t2.strides[1] != 1)) {
        snprintf(msg, msg_size, "%s: a Fortran-ordered array is not supported with --op (save it C-ordered)", path);
        return ER_EINVAL;
    }
    *t = er_optensor_make(t2.format, npy->ndim, npy->shape, t2.data);
    return ER_OK;
}

static void shape_text(const er_optensor *t, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = 0;
    if (t->ndim == 0) snprintf(buf, size, "scalar");
    for (int d = 0; d < t->ndim && k + 24 < size; d++) {
        snprintf(buf + k, size - k, "%s%lld", d ? " x " : "", (long long)t->shape[d]);
        k = strlen(buf);
    }
}

int er_cmd_check_op(int argc, char **argv)
{
    const char *op = NULL, *out_path = NULL, *out_name = NULL, *json = NULL, *plot = NULL, *junit = NULL;
    const char *in_path[MAXIN];
    const char *opts[MAXOPT];
    int nin = 0, nopt = 0, compute = -1, ftz = 0, ofmt = -1, rc = ER_EXIT_OK;
    double ulps = -1;
    er_standard std;
    char msg[1024] = "";
    er_standard_parse("normal", &std, NULL, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--flush-to-zero")) {
            ftz = 1;
            continue;
        }
        if (!strcmp(a, "--no-progress")) continue;
        if (a[0] != '-' || !a[1])
            return er_cli_usage_error("check", "unexpected argument '%s' (with --op the arrays are given as --input "
                                      "X.npy and --output OUT.npy)", a);
        static const char *const valued[] = {"--op", "--input", "--output", "--opt", "--output-name", "--standard",
                                             "--compute", "--ulps", "--json", "--plot", "--junit", "--out-format"};
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known |= !strcmp(a, valued[k]);
        if (!known)
            return er_cli_usage_error("check", "option '%s' is not one of check --op's (see exactref check --help)", a);
        if (i + 1 >= argc) return er_cli_usage_error("check", "%s needs a value", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--input")) {
            if (nin >= MAXIN) return er_cli_usage_error("check", "at most %d --input", MAXIN);
            in_path[nin++] = v;
            continue;
        }
        if (!strcmp(a, "--opt")) {
            if (nopt >= MAXOPT) return er_cli_usage_error("check", "at most %d --opt", MAXOPT);
            if (!strchr(v, '=') || strchr(v, ','))
                return er_cli_usage_error("check", "--opt %s: give one key=value per --opt", v);
            opts[nopt++] = v;
            continue;
        }
        const char **slot = !strcmp(a, "--op") ? &op : !strcmp(a, "--output") ? &out_path
                          : !strcmp(a, "--output-name") ? &out_name : !strcmp(a, "--json") ? &json
                          : !strcmp(a, "--plot") ? &plot : !strcmp(a, "--junit") ? &junit : NULL;
        if (slot) {
            if (*slot) return er_cli_usage_error("check", "%s is given twice", a);
            *slot = v;
        } else if (!strcmp(a, "--standard")) {
            if (er_standard_parse(v, &std, msg, sizeof msg) != ER_OK) return er_cli_usage_error("check", "%s", msg);
        } else if (!strcmp(a, "--compute")) {
            if (er_cli_parse_format("check", a, v, &compute)) return ER_EXIT_USAGE;
        } else if (!strcmp(a, "--out-format")) {
            if (er_cli_parse_format("check", a, v, &ofmt)) return ER_EXIT_USAGE;
        } else { /* --ulps */
            char *e;
            ulps = strtod(v, &e);
            if (*e || !*v || !(ulps >= 0) || !isfinite(ulps))
                return er_cli_usage_error("check", "--ulps: '%s' is not a non-negative number", v);
        }
    }
    if (!op) return er_cli_usage_error("check", "--op needs a name (%s)", er_op_names());
    if (!nin) return er_cli_usage_error("check", "--op %s needs its inputs: --input X.npy (in the operation's order; "
                                        "--input none for an absent optional one)", op);
    if (!out_path) return er_cli_usage_error("check", "--op %s needs the output to judge: --output OUT.npy", op);
    {
        er_cli_files f;
        memset(&f, 0, sizeof f);
        for (int k = 0; k < nin; k++)
            if (strcmp(in_path[k], "none")) er_cli_files_in(&f, in_path[k], "--input");
        er_cli_files_in(&f, out_path, "--output");
        er_cli_files_out(&f, json, "--json", 1);
        er_cli_files_out(&f, junit, "--junit", 1);
        er_cli_files_out(&f, plot, "--plot", 1);
        if ((rc = er_cli_files_check("check", &f)) != 0) return rc;
    }
    double t0 = now();
    er_npy npy[MAXIN + 1];
    void *store[MAXIN + 1];
    er_optensor t[MAXIN + 1];
    const er_optensor *ins[MAXIN];
    memset(npy, 0, sizeof npy);
    memset(store, 0, sizeof store);
    er_opres *r = NULL;
    int64_t *outside_idx = NULL;
    char text[1024] = "";
    for (int k = 0; k < nin; k++) {
        ins[k] = NULL;
        if (!strcmp(in_path[k], "none")) continue;
        if (read_nd(in_path[k], -1, &npy[k], &store[k], &t[k], msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref check: --input %s: %s\n", in_path[k], msg);
            rc = ER_EXIT_USAGE;
            goto done;
        }
        ins[k] = &t[k];
    }
    if (read_nd(out_path, ofmt, &npy[MAXIN], &store[MAXIN], &t[MAXIN], msg, sizeof msg) != ER_OK) {
        fprintf(stderr, "exactref check: --output %s: %s\n", out_path, msg);
        rc = ER_EXIT_USAGE;
        goto done;
    }
    /* the options; the output format is the output's own unless given (for the first output) */
    {
        size_t k = 0;
        int has_out = 0;
        for (int q = 0; q < nopt; q++) {
            has_out |= !strncmp(opts[q], "out=", 4);
            k += (size_t)snprintf(text + k, sizeof text - k, "%s%s", q ? "," : "", opts[q]);
            if (k >= sizeof text) {
                rc = er_cli_usage_error("check", "the --opt values are too long");
                goto done;
            }
        }
        if (!has_out && !out_name)
            snprintf(text + k, sizeof text - k, "%sout=%s", k ? "," : "", er_format_name(t[MAXIN].format));
    }
    er_status st;
    double t_ref = now();
    if ((st = er_op_call_nd(op, nin, ins, text, &r, msg, sizeof msg)) != ER_OK) {
        fprintf(stderr, "exactref check: --op %s: %s\n", op, msg);
        rc = er_cli_exit_for(st);
        goto done;
    }
    t_ref = now() - t_ref;
    int oi = out_name ? er_opres_output_index(r, out_name) : 0;
    if (oi < 0) {
        char names[256] = "";
        for (int q = 0; q < er_opres_outputs(r); q++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", q ? ", " : "", er_opres_output_name(r, q));
        rc = er_cli_usage_error("check", "--output-name %s: %s has the outputs %s", out_name, op, names);
        goto done;
    }
    const er_optensor *R = er_opres_rounded(r, oi);
    if (R->format != t[MAXIN].format) {
        fprintf(stderr, "exactref check: --output %s is %s; %s's output '%s' is %s (declare the output's format with "
                "--out-format, or the operation's with --opt out=)\n", out_path, er_format_name(t[MAXIN].format), op,
                er_opres_output_name(r, oi), er_format_name(R->format));
        rc = ER_EXIT_USAGE;
        goto done;
    }
    int same = R->ndim == t[MAXIN].ndim;
    for (int d = 0; same && d < R->ndim; d++) same = R->shape[d] == t[MAXIN].shape[d];
    if (!same) {
        char a[128], b[128];
        shape_text(&t[MAXIN], a, sizeof a);
        shape_text(R, b, sizeof b);
        fprintf(stderr, "exactref check: --output %s has shape %s; %s's output '%s' is %s\n", out_path, a, op,
                er_opres_output_name(r, oi), b);
        rc = ER_EXIT_USAGE;
        goto done;
    }
    er_tol_opts o;
    er_tol_opts_init(&o);
    o.compute = compute;
    o.ulps = ulps;
    o.flush_to_zero = ftz;
    o.standard = std;
    er_check_report rep;
    if (!(outside_idx = malloc(sizeof(int64_t) * ER_CLI_OUTSIDE_CAP))) {
        fprintf(stderr, "exactref check: out of memory\n");
        rc = ER_EXIT_INTERNAL;
        goto done;
    }
    if ((st = er_opres_report(r, oi, &o, &t[MAXIN], outside_idx, ER_CLI_OUTSIDE_CAP, &rep, msg, sizeof msg)) != ER_OK) {
        fprintf(stderr, "exactref check: --op %s: %s\n", op, msg);
        rc = er_cli_exit_for(st);
        goto done;
    }
    /* the report, as the matmul check's (cli_report.c), with the operation named */
    er_cli_mma m;
    er_cli_mma_init(&m, "check");
    er_mma_stats stats;
    memset(&stats, 0, sizeof stats);
    er_cli_check c;
    char hint[256], inputs[512] = "";
    memset(&c, 0, sizeof c);
    for (int k = 0; k < nin; k++)
        snprintf(inputs + strlen(inputs), sizeof inputs - strlen(inputs), "%s%s", k ? ", " : "", in_path[k]);
    c.out_path = out_path;
    c.m = &m;
    c.op = op;
    c.op_inputs = inputs;
    c.op_output = er_opres_output_name(r, oi);
    c.standard = std.name;
    c.compute = er_format_name(compute < 0 ? er_opres_default_compute(r) : compute);
    c.ftz = ftz;
    c.rep = &rep;
    c.outside_index = outside_idx;
    c.seconds = now() - t0;
    c.seconds_ref = t_ref;
    c.stats = &stats;
    er_cli_check_warnings(&c, hint);
    er_cli_report_write(&c, json, junit, plot, &rc);
    er_cli_mma_free(&m);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "exactref check: cannot write the report to standard output: %s\n", strerror(errno));
        rc = ER_EXIT_INTERNAL;
    }
done:
    er_opres_free(r);
    for (int k = 0; k <= MAXIN; k++) {
        free(store[k]);
        er_npy_free(&npy[k]);
    }
    free(outside_idx);
    return rc;
}
