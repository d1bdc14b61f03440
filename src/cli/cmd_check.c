/* cmd_check.c: `exactref check`: judge an implementation's output element by element, with proof. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_mma.h"

/* A signed ordinal of a float pattern: consecutive values of the format have consecutive ordinals. */
static int64_t ordinal(int fmt, uint64_t bits)
{
    er_fmt d = er_fmt_get(fmt);
    uint64_t mag = (bits >> d.pad) & ((d.ebits + d.mbits >= 64) ? ~0ull : ((1ull << (d.ebits + d.mbits)) - 1u));
    int neg = er_fmt_signed(d) && ((bits >> (d.width - 1)) & 1u);
    return neg ? -(int64_t)mag : (int64_t)mag;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Write text to path atomically (a temporary file in the same directory, then a rename). */
static int write_atomic(const char *path, const char *text, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int ok = fwrite(text, 1, len, f) == len;
    ok &= fflush(f) == 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return;
        b->p = np;
        b->cap = cap;
    }
}

static void json_str(sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') sb_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) sb_printf(b, "\\u%04x", *s);
        else sb_printf(b, "%c", *s);
    }
    sb_printf(b, "\"");
}

static void xml_str(sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') sb_printf(b, "&lt;");
        else if (*s == '>') sb_printf(b, "&gt;");
        else if (*s == '&') sb_printf(b, "&amp;");
        else if (*s == '"') sb_printf(b, "&quot;");
        else sb_printf(b, "%c", *s);
    }
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out;
    char buf[65536];
    size_t n;
    int ok = 1;
    if (!in) return -1;
    out = fopen(to, "wb");
    if (!out) {
        fclose(in);
        return -1;
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) ok &= fwrite(buf, 1, n, out) == n;
    ok &= !ferror(in);
    fclose(in);
    ok &= fclose(out) == 0;
    return ok ? 0 : -1;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The repro bundle: the input files, the output, and the exact command line (paths into the bundle). */
static int save_failures(const char *dir, int argc, char **argv, const er_cli_mma *m, const char *outp)
{
    const char *files[6] = {m->A.path, m->B.path, m->C.path, m->SA.path, m->SB.path, outp};
    char path[4096];
    sbuf cmd = {0};
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
    for (int f = 0; f < 6; f++) {
        if (!files[f]) continue;
        snprintf(path, sizeof path, "%s/%d-%s", dir, f, base_name(files[f]));
        if (copy_file(files[f], path) != 0) return -1;
    }
    sb_printf(&cmd, "#!/bin/sh\n# Reproduces the failing check: run from this directory.\n# Original command:\n#");
    for (int i = 0; i < argc; i++) sb_printf(&cmd, " '%s'", argv[i]);
    sb_printf(&cmd, "\nexactref");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *sub = NULL;
        for (int f = 0; f < 6; f++)
            if (files[f] && a == files[f]) {
                snprintf(path, sizeof path, "%d-%s", f, base_name(files[f]));
                sub = path;
            }
        if (i > 0 && (!strcmp(argv[i - 1], "--save-failures") || !strcmp(argv[i - 1], "--json") ||
                      !strcmp(argv[i - 1], "--junit")))
            sub = NULL, a = "/dev/null";
        if (!strcmp(a, "--save-failures")) {
            i++;
            continue;
        }
        sb_printf(&cmd, " '%s'", sub ? sub : a);
    }
    sb_printf(&cmd, "\n");
    snprintf(path, sizeof path, "%s/repro.sh", dir);
    int rc = cmd.p ? write_atomic(path, cmd.p, cmd.len) : -1;
    free(cmd.p);
    chmod(path, 0755);
    return rc;
}

int er_cmd_check(int argc, char **argv)
{
    const char *pos[3] = {NULL, NULL, NULL}, *json = NULL, *junit = NULL, *save = NULL;
    int npos = 0, rc = ER_EXIT_OK, compute = -1, ftz = 0;
    double ulps = 0;
    er_cli_mma m;
    er_standard std;
    er_npy outn;
    er_tensor O;
    void *ostore = NULL, *dbuf = NULL;
    unsigned char *cov = NULL;
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
            !strcmp(a, "--junit") || !strcmp(a, "--save-failures")) {
            if (i + 1 >= argc) return er_cli_usage_error("check", "%s needs a value", a);
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
                    return fflush(stdout) == 0 ? ER_EXIT_OK : ER_EXIT_INTERNAL;
                }
                if (er_standard_parse(v, &std, msg, sizeof msg) != ER_OK) return er_cli_usage_error("check", "%s", msg);
            } else if (!strcmp(a, "--ulps")) {
                char *e;
                ulps = strtod(v, &e);
                if (*e || !(ulps >= 0)) return er_cli_usage_error("check", "--ulps: '%s' is not a non-negative number", v);
            } else if (!strcmp(a, "--json")) json = v;
            else if (!strcmp(a, "--junit")) junit = v;
            else save = v;
        } else if (!strcmp(a, "--flush-to-zero")) ftz = 1;
        else if (a[0] == '-' && a[1]) return er_cli_usage_error("check", "unknown option '%s'", a);
        else if (npos < 3) pos[npos++] = a;
        else return er_cli_usage_error("check", "unexpected argument '%s' (A.npy B.npy OUT.npy)", a);
    }
    if (npos < 3) return er_cli_usage_error("check", "three arrays are required: A.npy B.npy OUT.npy");
    m.A.path = pos[0];
    m.B.path = pos[1];
    int tty = isatty(2);
    double t0 = now();
    if ((rc = er_cli_mma_load(&m)) != ER_EXIT_OK) goto done;
    int64_t batch, rows, cols;
    int batched;
    er_cli_mma_shape(&m, &batch, &rows, &cols, &batched);
    /* the output under test: its format is --out-format, or its dtype's */
    {
        er_status st = er_npy_read(pos[2], &outn, msg, sizeof msg);
        if (st == ER_OK) st = er_npy_to_tensor(&outn, pos[2], m.ofmt, &O, &ostore, msg, sizeof msg);
        if (st != ER_OK) {
            fprintf(stderr, "exactref check: OUT: %s\n", msg);
            rc = st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
            goto done;
        }
        if (O.ndim != (batched ? 3 : 2) || O.shape[O.ndim - 2] != rows || O.shape[O.ndim - 1] != cols ||
            (batched && O.shape[0] != batch)) {
            fprintf(stderr, "exactref check: OUT: %s has shape %s%lld x %lld; the product is %s%lld x %lld\n", pos[2],
                    O.ndim == 3 ? "batch x " : "", (long long)O.shape[O.ndim - 2], (long long)O.shape[O.ndim - 1],
                    batched ? "batch x " : "", (long long)rows, (long long)cols);
            rc = ER_EXIT_USAGE;
            goto done;
        }
    }
    int of = O.format;
    er_format_info fi;
    er_format_get_info(of, &fi);
    size_t elems = (size_t)(batch * rows * cols);
    dbuf = calloc(elems ? elems : 1, (size_t)fi.storage_bytes);
    cov = malloc(elems ? elems : 1);
    if (!dbuf || !cov) {
        fprintf(stderr, "exactref check: out of memory for %zu elements\n", elems);
        rc = ER_EXIT_INTERNAL;
        goto done;
    }
    er_tensor D = batched ? er_tensor_3d(of, batch, rows, cols, dbuf) : er_tensor_2d(of, rows, cols, dbuf);
    er_mma_args args;
    er_cli_mma_args(&m, &args);
    args.d = &D;
    if (tty) fprintf(stderr, "exactref check: computing the exact reference (%zu elements)...\r", elems);
    er_status st = er_result_create(&args, &res, msg, sizeof msg);
    if (st != ER_OK) {
        fprintf(stderr, "exactref check: %s\n", msg[0] ? msg : er_status_string(st));
        rc = (st == ER_EINVAL || st == ER_EPATTERN) ? ER_EXIT_USAGE : ER_EXIT_INTERNAL;
        goto done;
    }
    if (er_result_stats(res)->note[0]) fprintf(stderr, "exactref check: note: %s\n", er_result_stats(res)->note);
    double t_ref = now() - t0;
    er_tol_opts o;
    er_tol_opts_init(&o);
    o.compute = compute;
    o.flush_to_zero = ftz;
    o.ulps = ulps;
    o.standard = std;
    int64_t outside = 0;
    const er_bounds *bd;
    if (tty) fprintf(stderr, "exactref check: bounding every element under '%s'...              \r", std.name);
    if ((st = er_result_bounds(res, &o, &bd, msg, sizeof msg)) != ER_OK ||
        (st = er_result_covers(res, &o, &O, cov, &outside, msg, sizeof msg)) != ER_OK) {
        fprintf(stderr, "exactref check: %s\n", msg);
        rc = (st == ER_EINVAL || st == ER_EPATTERN) ? ER_EXIT_USAGE : ER_EXIT_INTERNAL;
        goto done;
    }
    if (tty) fprintf(stderr, "%*s\r", 78, "");
    double t_all = now() - t0;

    /* the report */
    static const double edges[] = {0, 1.0 / 64, 1.0 / 16, 0.25, 0.5, 1.0};
    int64_t hist[7] = {0};
    int64_t worst = -1, nz_inputs = 0, zero_ok = 0;
    double worst_score = -1;
    int64_t worst_ulps = 0;
    for (size_t e = 0; e < elems; e++) {
        int64_t b = (int64_t)e / (rows * cols), i = ((int64_t)e / cols) % rows, j = (int64_t)e % cols;
        int64_t sbs = O.ndim == 3 ? O.strides[0] : 0;
        uint64_t ob = 0, rb = 0;
        memcpy(&ob, (unsigned char *)O.data + (size_t)(b * sbs + i * O.strides[O.ndim - 2] + j * O.strides[O.ndim - 1]) * (size_t)fi.storage_bytes,
               (size_t)fi.storage_bytes);
        memcpy(&rb, (unsigned char *)dbuf + e * (size_t)fi.storage_bytes, (size_t)fi.storage_bytes);
        double ov = 0, rv = 0, lo = 0, hi = 0;
        er_from_bits(of, ob, &ov);
        er_from_bits(of, rb, &rv);
        er_from_bits(of, bd->low[e], &lo);
        er_from_bits(of, bd->high[e], &hi);
        if (bd->has_range[e] && lo <= 0 && 0 <= hi) zero_ok++;
        double tol = bd->tolerance[e], score;
        int64_t beyond = 0;
        if (!cov[e]) {
            if (isfinite(ov) && bd->has_range[e] && fi.kind == ER_KIND_FLOAT)
                beyond = ov > hi ? ordinal(of, ob) - ordinal(of, bd->high[e]) : ordinal(of, bd->low[e]) - ordinal(of, ob);
            else if (fi.kind != ER_KIND_FLOAT)
                beyond = llabs((int64_t)(int32_t)ob - (int64_t)(int32_t)rb);
            else
                beyond = INT64_MAX / 2;
            score = 1e300 + (double)beyond;
            hist[6]++;
        } else {
            double d = fabs(ov - rv);
            score = tol > 0 ? d / tol : (d > 0 ? 1 : 0);
            if (!isfinite(score)) score = 0;
            int h = 0;
            while (h < 5 && score > edges[h]) h++;
            hist[h]++;
        }
        if (score > worst_score) {
            worst_score = score;
            worst = (int64_t)e;
            worst_ulps = beyond;
        }
    }
    /* vacuity: inputs all zero or subnormal */
    {
        const er_tensor *ts[2] = {&m.A.t, &m.B.t};
        for (int t = 0; t < 2; t++) {
            int64_t cnt = 1;
            for (int d = 0; d < ts[t]->ndim; d++) cnt *= ts[t]->shape[d];
            er_format_info ti;
            er_format_get_info(ts[t]->format, &ti);
            for (int64_t x = 0; x < cnt; x++) {
                uint64_t bits = 0;
                memcpy(&bits, (unsigned char *)ts[t]->data + (size_t)x * (size_t)ti.storage_bytes, (size_t)ti.storage_bytes);
                er_val v = er_decode(ts[t]->format, bits);
                if (v.cls == ER_CLASS_NORMAL || v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) {
                    nz_inputs |= 1 << t;
                    break;
                }
            }
        }
    }
    const char *cname = er_format_name(compute < 0 ? er_result_default_compute(res) : compute);
    printf("exactref check: %s against A %s x B %s, %s output, standard %s, compute %s%s\n", pos[2],
           er_format_name(m.A.t.format), er_format_name(m.B.t.format), er_format_name(of), std.name, cname,
           ftz ? ", flush to zero" : "");
    printf("  elements checked   %zu\n", elems);
    printf("  elements outside   %lld%s\n", (long long)outside, outside ? "  <- no correct implementation produces these" : "");
    if (worst >= 0) {
        int64_t e = worst, b = e / (rows * cols), i = (e / cols) % rows, j = e % cols;
        char oh[64], rh[64], lh[64], hh[64];
        uint64_t ob = 0, rb = 0;
        int64_t sbs = O.ndim == 3 ? O.strides[0] : 0;
        memcpy(&ob, (unsigned char *)O.data + (size_t)(b * sbs + i * O.strides[O.ndim - 2] + j * O.strides[O.ndim - 1]) * (size_t)fi.storage_bytes, (size_t)fi.storage_bytes);
        memcpy(&rb, (unsigned char *)dbuf + (size_t)e * (size_t)fi.storage_bytes, (size_t)fi.storage_bytes);
        er_format_hex(of, ob, oh, sizeof oh);
        er_format_hex(of, rb, rh, sizeof rh);
        er_format_hex(of, bd->low[e], lh, sizeof lh);
        er_format_hex(of, bd->high[e], hh, sizeof hh);
        double ov, rv, lv, hv;
        er_from_bits(of, ob, &ov), er_from_bits(of, rb, &rv), er_from_bits(of, bd->low[e], &lv), er_from_bits(of, bd->high[e], &hv);
        char idx[128];
        if (batched) snprintf(idx, sizeof idx, "[%lld, %lld, %lld]", (long long)b, (long long)i, (long long)j);
        else snprintf(idx, sizeof idx, "[%lld, %lld]", (long long)i, (long long)j);
        printf("  worst element      %s: output %.9g (%s), rounded %.9g (%s)\n", idx, ov, oh, rv, rh);
        if (bd->has_range[e])
            printf("                     allowed [%.9g, %.9g] ([%s, %s]), tolerance %.3g\n", lv, hv, lh, hh, bd->tolerance[e]);
        else
            printf("                     no finite output allowed here\n");
        if (!cov[e]) {
            if (worst_ulps < INT64_MAX / 4)
                printf("                     %lld output ulps beyond the bound\n", (long long)worst_ulps);
            else
                printf("                     an infinity or NaN that no correct implementation produces here\n");
        } else {
            printf("                     %.3g of its tolerance used\n", worst_score);
        }
    }
    printf("  |output - rounded| / tolerance:\n");
    static const char *const labels[7] = {"0 (exact)", "(0, 1/64]", "(1/64, 1/16]", "(1/16, 1/4]", "(1/4, 1/2]",
                                          "(1/2, 1]", "outside"};
    for (int h = 0; h < 7; h++) printf("    %-14s %12lld\n", labels[h], (long long)hist[h]);
    int nwarn = 0;
    const char *warns[4];
    if (nz_inputs != 3) warns[nwarn++] = "an operand is all zero or subnormal: the check is vacuous";
    if ((size_t)zero_ok == elems && elems)
        warns[nwarn++] = "the bounds would accept an all-zero output: the inputs cannot tell a correct kernel from one that writes zeros";
    for (int w = 0; w < nwarn; w++) printf("  warning: %s\n", warns[w]);
    const er_mma_stats *sst = er_result_stats(res);
    if (sst->backend == ER_BACKEND_OPENCL || sst->backend == ER_BACKEND_CUDA)
        printf("  time               %.3f s (exact reference %.3f s on the %s device: %lld elements in exact binary64, %lld by the exact accumulator)\n",
               t_all, t_ref, sst->backend == ER_BACKEND_CUDA ? "CUDA" : "OpenCL", (long long)sst->exact_f64,
               (long long)sst->exact_path);
    else
        printf("  time               %.3f s (exact reference %.3f s on %d threads: %lld elements by the fast path, %lld by the exact accumulator)\n",
               t_all, t_ref, sst->threads, (long long)sst->fast_decided, (long long)sst->exact_path);
    printf("%s\n", outside ? "FAIL" : "PASS");
    rc = outside ? ER_EXIT_FAIL : ER_EXIT_OK;

    if (json) {
        sbuf b = {0};
        sb_printf(&b, "{\n  \"output\": ");
        json_str(&b, pos[2]);
        sb_printf(&b, ",\n  \"standard\": ");
        json_str(&b, std.name);
        sb_printf(&b, ",\n  \"compute\": \"%s\",\n  \"flush_to_zero\": %s,\n  \"elements\": %zu,\n  \"outside\": %lld,\n",
                  cname, ftz ? "true" : "false", elems, (long long)outside);
        sb_printf(&b, "  \"passed\": %s,\n  \"histogram\": {", outside ? "false" : "true");
        for (int h = 0; h < 7; h++) sb_printf(&b, "%s\"%s\": %lld", h ? ", " : "", labels[h], (long long)hist[h]);
        sb_printf(&b, "},\n  \"worst\": ");
        if (worst >= 0) {
            int64_t e = worst;
            sb_printf(&b, "{\"index\": [");
            if (batched) sb_printf(&b, "%lld, ", (long long)(e / (rows * cols)));
            sb_printf(&b, "%lld, %lld], \"covered\": %s, \"ulps_beyond\": %lld, \"tolerance\": %.17g}", (long long)((e / cols) % rows),
                      (long long)(e % cols), cov[e] ? "true" : "false", (long long)(cov[e] ? 0 : worst_ulps),
                      isfinite(bd->tolerance[e]) ? bd->tolerance[e] : -1.0);
        } else {
            sb_printf(&b, "null");
        }
        sb_printf(&b, ",\n  \"warnings\": [");
        for (int w = 0; w < nwarn; w++) {
            if (w) sb_printf(&b, ", ");
            json_str(&b, warns[w]);
        }
        sb_printf(&b, "],\n  \"seconds\": %.3f\n}\n", t_all);
        if (!b.p || write_atomic(json, b.p, b.len) != 0) {
            fprintf(stderr, "exactref check: cannot write %s: %s\n", json, strerror(errno));
            rc = ER_EXIT_USAGE;
        }
        free(b.p);
    }
    if (junit) {
        sbuf b = {0};
        sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"exactref check\" tests=\"1\" failures=\"%d\" time=\"%.3f\">\n",
                  outside ? 1 : 0, t_all);
        sb_printf(&b, "  <testcase classname=\"exactref.check\" name=\"");
        xml_str(&b, pos[2]);
        sb_printf(&b, " (%s)\" time=\"%.3f\">\n", std.name, t_all);
        if (outside) {
            sb_printf(&b, "    <failure message=\"%lld of %zu elements outside the bounds of standard %s\"/>\n", (long long)outside,
                      elems, std.name);
        }
        sb_printf(&b, "  </testcase>\n</testsuite>\n");
        if (!b.p || write_atomic(junit, b.p, b.len) != 0) {
            fprintf(stderr, "exactref check: cannot write %s: %s\n", junit, strerror(errno));
            rc = ER_EXIT_USAGE;
        }
        free(b.p);
    }
    if (save && outside) {
        if (save_failures(save, argc, argv, &m, pos[2]) != 0) {
            fprintf(stderr, "exactref check: cannot write the failure bundle into %s: %s\n", save, strerror(errno));
            rc = ER_EXIT_INTERNAL;
        } else {
            printf("  failure bundle     %s (run repro.sh there)\n", save);
        }
    }
done:
    er_result_free(res);
    er_cli_mma_free(&m);
    er_npy_free(&outn);
    free(ostore);
    free(dbuf);
    free(cov);
    return rc;
}
