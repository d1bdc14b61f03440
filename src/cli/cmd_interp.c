/* cmd_interp.c: `exactref interp`: run a CUDA Tile IR kernel on .npy buffers, bit-exactly, with the launch log. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "exactref/interp.h"
#include "exactref/npy.h"
#include "exactref/core/er_round.h"

#define CMD "interp"

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = (char *)malloc(cap);
    if (!b) return NULL;
    for (;;) {
        size_t k;
        if (n == cap) {
            char *nb;
            if (cap > ((size_t)1 << 30)) { free(b); return NULL; }
            nb = (char *)realloc(b, cap * 2);
            if (!nb) { free(b); return NULL; }
            b = nb;
            cap *= 2;
        }
        k = fread(b + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    *len = n;
    return b;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Whether an executable of that name is in a directory of PATH. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH"), *p;
    char buf[4200];
    if (!path) return 0;
    for (p = path;;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && n + strlen(name) + 2 < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '/';
            strcpy(buf + n + 1, name);
            if (access(buf, X_OK) == 0) return 1;
        }
        if (!e) return 0;
        p = e + 1;
    }
}

/* The module's text: the file itself, or tileirdisasm's output for a .tileirbc file. */
static char *load_text(const char *path, size_t *len)
{
    FILE *f;
    char *t;
    if (ends_with(path, ".tileirbc")) {
        char cmd[4200];
        int st;
        const char *q;
        for (q = path; *q; q++)
            if (*q == '\'') {
                fprintf(stderr, "exactref interp: %s: a bytecode path may not contain a quote\n", path);
                return NULL;
            }
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "exactref interp: %s: %s\n", path, strerror(errno));
            return NULL;
        }
        if (!on_path("tileirdisasm")) {
            fprintf(stderr, "exactref interp: %s: Tile IR bytecode needs tileirdisasm to be read, and it is not on PATH "
                            "(install it with: pip install nvidia-cuda-tileiras), or pass the MLIR text form\n", path);
            return NULL;
        }
        snprintf(cmd, sizeof cmd, "tileirdisasm '%s'", path);
        f = popen(cmd, "r");
        if (!f) {
            fprintf(stderr, "exactref interp: %s: cannot run tileirdisasm\n", path);
            return NULL;
        }
        t = read_all(f, len);
        st = pclose(f);
        if (!t || st != 0) {
            fprintf(stderr, "exactref interp: %s: tileirdisasm failed (status %d)\n", path, st);
            free(t);
            return NULL;
        }
        return t;
    }
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "exactref interp: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    t = read_all(f, len);
    fclose(f);
    if (!t) fprintf(stderr, "exactref interp: %s: cannot read the file (out of memory or larger than 1 GiB)\n", path);
    return t;
}

static int fmt_bytes(int fmt)
{
    er_format_info fi;
    if (fmt == ER_INTERP_FMT_I1) return 1;
    if (er_format_get_info(fmt, &fi) != ER_OK) return 0;
    return fi.storage_bytes;
}

static const char *fmt_label(int fmt) { return fmt == ER_INTERP_FMT_I1 ? "i1" : er_format_name(fmt); }

/* One buffer from a .npy file: its elements as patterns of fmt in storage order. */
typedef struct buf {
    er_npy a;
    void *data;
    size_t nbytes;
    int fmt;
    const char *path;
} buf;

static int load_buffer(const char *path, int fmt, buf *b)
{
    char msg[512];
    size_t n, i, eb = (size_t)fmt_bytes(fmt);
    const char *d;
    uint8_t *out;
    memset(b, 0, sizeof *b);
    b->fmt = fmt;
    b->path = path;
    {
        /* ml_dtypes arrays (bfloat16, float8_*, float4_*) are saved by numpy as void dtypes of their
         * storage width ('<V2', '<V1'), holding the raw patterns: read them as the unsigned dtype */
        FILE *f = fopen(path, "rb");
        size_t len = 0, k;
        char *raw;
        er_status st;
        if (!f) {
            fprintf(stderr, "exactref interp: %s: %s\n", path, strerror(errno));
            return -1;
        }
        raw = read_all(f, &len);
        fclose(f);
        if (!raw) {
            fprintf(stderr, "exactref interp: %s: cannot read the file\n", path);
            return -1;
        }
        for (k = 10; k + 10 < len && k < 4096 && raw[k] != '\n'; k++)
            if (!memcmp(raw + k, "'descr': '", 10)) {
                char *q = raw + k + 10;
                if ((q[0] == '<' || q[0] == '|' || q[0] == '=') && q[1] == 'V' && (q[2] == '1' || q[2] == '2' || q[2] == '4' || q[2] == '8') && q[3] == '\'')
                    q[1] = 'u';
                break;
            }
        st = er_npy_parse(raw, len, path, &b->a, msg, sizeof msg);
        free(raw);
        if (st != ER_OK) {
            fprintf(stderr, "exactref interp: %s\n", msg);
            return -1;
        }
    }
    n = b->a.itemsize ? b->a.nbytes / b->a.itemsize : 0;
    d = b->a.descr;
    out = (uint8_t *)calloc(n * eb + 1, 1);
    if (!out) {
        fprintf(stderr, "exactref interp: %s: out of memory\n", path);
        return -1;
    }
    b->data = out;
    b->nbytes = n * eb;
    for (i = 0; i < n; i++) {
        const uint8_t *src = (const uint8_t *)b->a.data + i * b->a.itemsize;
        uint64_t raw = 0, bits = 0;
        size_t k;
        for (k = 0; k < b->a.itemsize; k++) raw |= (uint64_t)src[k] << (8 * k);
        if (d[1] == 'f') {
            int from = b->a.itemsize == 8 ? ER_FMT_F64 : b->a.itemsize == 4 ? ER_FMT_F32 : ER_FMT_F16;
            unsigned fl = 0;
            if (fmt == ER_INTERP_FMT_I1 || er_format_get_info(fmt, &(er_format_info){0}) != ER_OK) goto bad_type;
            if (from == fmt || (from == ER_FMT_F32 && fmt == ER_FMT_TF32 && (raw & 0x1FFFu) == 0)) bits = raw;
            else {
                er_val v;
                er_convert_bits(from, fmt, raw, ER_RND_NEAREST_EVEN, 0u, &bits, &fl);
                er_decode_bits(from, raw, &v);
                if (v.cls != ER_CLASS_NAN && (fl & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID))) {
                    char hx[64];
                    er_format_hex(from, raw, hx, sizeof hx);
                    fprintf(stderr, "exactref interp: %s: element [%zu] = %s is not a value of %s\n", path, i, hx, fmt_label(fmt));
                    return -1;
                }
            }
        } else if (d[1] == 'u' && fmt != ER_INTERP_FMT_I1 && er_fmt_get(fmt).kind == ER_KIND_FLOAT) {
            if (b->a.itemsize != eb) goto bad_type;
            if (er_check_pattern(fmt, raw) != ER_OK) {
                fprintf(stderr, "exactref interp: %s: element [%zu] = 0x%llx is not a pattern of %s\n", path, i, (unsigned long long)raw, fmt_label(fmt));
                return -1;
            }
            bits = raw;
        } else if (d[1] == 'i' || d[1] == 'u') {
            /* integers: exactly a value of fmt */
            int sgn = d[1] == 'i';
            int64_t sv = sgn ? (b->a.itemsize == 8 ? (int64_t)raw : (int64_t)(raw ^ (UINT64_C(1) << (8 * b->a.itemsize - 1))) - ((int64_t)1 << (8 * b->a.itemsize - 1))) : (int64_t)raw;
            if (fmt == ER_INTERP_FMT_I1) {
                if (sv != 0 && sv != 1) goto bad_value;
                bits = (uint64_t)sv;
            } else if (er_fmt_get(fmt).kind != ER_KIND_FLOAT) {
                int w = er_fmt_get(fmt).width;
                if (!sgn && b->a.itemsize == 8 && (raw >> 63)) goto bad_value;
                if (w < 64 && (sv < -((int64_t)1 << (w - 1)) || sv > ((int64_t)1 << (w - 1)) - 1)) goto bad_value;
                bits = (uint64_t)sv & (w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u);
            } else {
                unsigned fl = 0;
                int from = ER_FMT_I64;
                er_convert_bits(from, fmt, (uint64_t)sv, ER_RND_NEAREST_EVEN, 0u, &bits, &fl);
                if (fl & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID)) goto bad_value;
            }
            (void)sgn;
        } else {
            goto bad_type;
        }
        for (k = 0; k < eb; k++) out[i * eb + k] = (uint8_t)(bits >> (8 * k));
        continue;
    bad_value:
        fprintf(stderr, "exactref interp: %s: element [%zu] is not a value of %s\n", path, i, fmt_label(fmt));
        return -1;
    }
    return 0;
bad_type:
    fprintf(stderr, "exactref interp: %s: a '%s' array cannot hold %s elements (use the native dtype, raw patterns as "
                    "unsigned integers of the storage width, or integers)\n", path, d, fmt_label(fmt));
    return -1;
}

static void free_buffer(buf *b)
{
    er_npy_free(&b->a);
    free(b->data);
}

static const char *native_descr(int fmt)
{
    if (fmt == ER_INTERP_FMT_I1) return "|u1";
    switch (fmt) {
    case ER_FMT_F64: return "<f8";
    case ER_FMT_F32: case ER_FMT_TF32: return "<f4";
    case ER_FMT_F16: return "<f2";
    case ER_FMT_BF16: return "<u2";
    case ER_FMT_I8: return "|i1";
    case ER_FMT_I16: return "<i2";
    case ER_FMT_I32: return "<i4";
    case ER_FMT_I64: return "<i8";
    default: return "|u1";
    }
}

static int parse_scalar(const char *s, int fmt, uint64_t *out)
{
    char *e;
    if (fmt == ER_INTERP_FMT_I1) {
        if (!strcmp(s, "0") || !strcmp(s, "false")) { *out = 0; return 0; }
        if (!strcmp(s, "1") || !strcmp(s, "true")) { *out = 1; return 0; }
        return -1;
    }
    if (fmt < 0) return -1;
    if (er_fmt_get(fmt).kind != ER_KIND_FLOAT) {
        int w = er_fmt_get(fmt).width;
        long long v;
        errno = 0;
        v = strtoll(s, &e, 0);
        if (*e || errno || e == s) return -1;
        if (w < 64 && (v < -(1LL << (w - 1)) || v > (1LL << (w - 1)) - 1)) return -1;
        *out = (uint64_t)v & (w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u);
        return 0;
    }
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && !strchr(s, 'p') && !strchr(s, 'P')) {
        unsigned long long u;
        errno = 0;
        u = strtoull(s, &e, 16);
        if (*e || errno || er_check_pattern(fmt, u) != ER_OK) return -1;
        *out = u;
        return 0;
    }
    {
        double d;
        uint64_t b;
        unsigned fl = 0;
        errno = 0;
        d = strtod(s, &e);
        if (*e || e == s) return -1;
        memcpy(&b, &d, sizeof b);
        er_convert_bits(ER_FMT_F64, fmt, b, ER_RND_NEAREST_EVEN, 0u, out, &fl);
        if (d == d && (fl & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID))) return -1;
        return 0;
    }
}

static int parse_grid(const char *s, int g[3])
{
    int k = 0;
    g[0] = g[1] = g[2] = 1;
    while (*s) {
        char *e;
        long v;
        if (k >= 3) return -1;
        errno = 0;
        v = strtol(s, &e, 10);
        if (e == s || errno || v < 1 || v > (1 << 24) - 1) return -1;
        g[k++] = (int)v;
        s = e;
        if (*s == ',') {
            s++;
            if (!*s) return -1;
        } else if (*s) return -1;
    }
    return k ? 0 : -1;
}

/* Write the buffers a store reached into dir: every file first under a temporary name, then renamed. */
static int write_outputs(const char *dir, const er_interp_module *m, const char *kernel, buf *bufs, er_interp_buffer *ib, int nb)
{
    char tmp[64][4200], fin[64][4200];
    int i, k = 0, np = er_interp_param_count(m, kernel), bi = 0, ok = 1;
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "exactref interp: -o %s: not a directory\n", dir);
        return -1;
    }
    for (i = 0; i < np && ok; i++) {
        er_interp_param p;
        char msg[512];
        int64_t shape[8];
        int nd, d;
        er_interp_param_get(m, kernel, i, &p);
        if (p.kind != ER_INTERP_PARAM_POINTER) continue;
        if (bi >= nb) break;
        if (!ib[bi].stored || k >= 64) { bi++; continue; }
        nd = bufs[bi].a.ndim;
        for (d = 0; d < nd; d++) shape[d] = bufs[bi].a.shape[d];
        snprintf(fin[k], sizeof fin[k], "%s/%s.npy", dir, p.name);
        snprintf(tmp[k], sizeof tmp[k], "%s/.%s.npy.tmp-%ld", dir, p.name, (long)getpid());
        if (bufs[bi].fmt == ER_FMT_F4E2M1FN || (bufs[bi].fmt != ER_INTERP_FMT_I1 && er_fmt_get(bufs[bi].fmt).width < 8)) {
            /* one element per byte: the storage is already that */
        }
        if (er_npy_write(tmp[k], native_descr(bufs[bi].fmt), nd, shape, ib[bi].data, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref interp: %s\n", msg);
            ok = 0;
            break;
        }
        k++;
        bi++;
    }
    if (ok) {
        for (i = 0; i < k; i++)
            if (rename(tmp[i], fin[i]) != 0) {
                fprintf(stderr, "exactref interp: %s: %s\n", fin[i], strerror(errno));
                ok = 0;
                break;
            }
    }
    if (!ok)
        for (i = 0; i < k; i++) unlink(tmp[i]);
    return ok ? 0 : -1;
}

int er_cmd_interp(int argc, char **argv)
{
    const char *file = NULL, *kernel = NULL, *gridarg = NULL, *outdir = NULL;
    int no_ub = 0, check_only = 0, cutile = 0, i, nargs = 0, rc = ER_EXIT_OK, grid[3] = {1, 1, 1};
    long long step_limit = 0;
    char **args = (char **)calloc((size_t)argc + 1, sizeof(char *));
    char *text = NULL;
    size_t len = 0;
    er_interp_module *m = NULL;
    char msg[2048];
    buf *bufs = NULL;
    er_interp_buffer *ib = NULL;
    uint64_t *scalars = NULL;
    int nb = 0, ns = 0, np;
    char *prints = NULL;
    er_interp_launch l;
    if (!args) return ER_EXIT_INTERNAL;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--kernel") || !strcmp(a, "-k")) {
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "--kernel needs a name"); }
            kernel = argv[i];
        } else if (!strcmp(a, "--grid") || !strcmp(a, "-g")) {
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "--grid needs X[,Y[,Z]]"); }
            gridarg = argv[i];
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "-o needs a directory"); }
            outdir = argv[i];
        } else if (!strcmp(a, "--no-ub-checks")) {
            no_ub = 1;
        } else if (!strcmp(a, "--check-unsupported")) {
            check_only = 1;
        } else if (!strcmp(a, "--cutile")) {
            cutile = 1;
        } else if (!strcmp(a, "--step-limit")) {
            char *e;
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "--step-limit needs a number"); }
            errno = 0;
            step_limit = strtoll(argv[i], &e, 10);
            if (*e || errno || step_limit < 1) { free(args); return er_cli_usage_error(CMD, "--step-limit: '%s' is not a positive integer", argv[i]); }
        } else if (a[0] == '-' && a[1] == '-' && !file) {
            free(args);
            return er_cli_usage_error(CMD, "unknown option '%s'", a);
        } else if (!file) {
            file = a;
        } else {
            args[nargs++] = argv[i];
        }
    }
    if (!file) { free(args); return er_cli_usage_error(CMD, "no kernel file given"); }
    if (gridarg && parse_grid(gridarg, grid) != 0) { free(args); return er_cli_usage_error(CMD, "--grid: '%s' is not X[,Y[,Z]] with 1 to 16777215 blocks per axis", gridarg); }
    text = load_text(file, &len);
    if (!text) { free(args); return ER_EXIT_USAGE; }
    if (er_interp_parse(text, len, file, &m, msg, sizeof msg) != ER_OK) {
        fprintf(stderr, "exactref interp: %s\n", msg);
        rc = ER_EXIT_USAGE;
        goto out;
    }
    if (check_only) {
        int k;
        for (k = 0; k < er_interp_kernel_count(m); k++) {
            const char *nm = er_interp_kernel_name(m, k);
            int r;
            if (kernel && strcmp(kernel, nm) && !(kernel[0] == '@' && !strcmp(kernel + 1, nm))) continue;
            r = er_interp_first_unsupported(m, nm, msg, sizeof msg);
            printf("%s %s\n", nm, r ? "interp.unsupported_op" : "ok");
            if (r) {
                fprintf(stderr, "exactref interp: %s\n", msg);
                rc = ER_EXIT_USAGE;
            }
        }
        if (kernel && er_interp_param_count(m, kernel) < 0) {
            fprintf(stderr, "exactref interp: %s: no entry @%s\n", file, kernel);
            rc = ER_EXIT_USAGE;
        }
        goto out;
    }
    if (!kernel) {
        if (er_interp_kernel_count(m) == 1) kernel = er_interp_kernel_name(m, 0);
        else {
            fprintf(stderr, "exactref interp: %s has %d entries: name one with --kernel\n", file, er_interp_kernel_count(m));
            rc = ER_EXIT_USAGE;
            goto out;
        }
    }
    np = er_interp_param_count(m, kernel);
    if (np < 0) {
        fprintf(stderr, "exactref interp: %s: no entry @%s\n", file, kernel);
        rc = ER_EXIT_USAGE;
        goto out;
    }
    if (!cutile && nargs != np) {
        printf("%s interp.bad_launch\n", kernel[0] == '@' ? kernel + 1 : kernel);
        fprintf(stderr, "exactref interp: kernel @%s takes %d argument%s, %d given\n", kernel[0] == '@' ? kernel + 1 : kernel, np, np == 1 ? "" : "s", nargs);
        rc = ER_EXIT_USAGE;
        goto out;
    }
    bufs = (buf *)calloc((size_t)np + 1, sizeof *bufs);
    ib = (er_interp_buffer *)calloc((size_t)np + 1, sizeof *ib);
    scalars = (uint64_t *)calloc((size_t)np + 1, sizeof *scalars);
    prints = (char *)malloc(1 << 20);
    if (!bufs || !ib || !scalars || !prints) { rc = ER_EXIT_INTERNAL; goto out; }
    prints[0] = 0;
    {
        /* --cutile: after each .npy, the array's shape and then its strides (elements) fill the next 2 ndim
         * integer parameters, cuTile's calling convention */
        int ai = 0, pi = 0, npend = 0;
        int64_t pend[2 * ER_NPY_MAX_DIMS];
        for (i = 0; i < np; i++) {
            er_interp_param p;
            er_interp_param_get(m, kernel, i, &p);
            if (pi < npend) {
                if (p.kind != ER_INTERP_PARAM_SCALAR || p.format < 0 || p.format == ER_INTERP_FMT_I1 || er_fmt_get(p.format).kind == ER_KIND_FLOAT ||
                    parse_scalar("0", p.format, &scalars[ns]) != 0) {
                    fprintf(stderr, "exactref interp: --cutile: parameter %%%s should receive a shape or stride of the preceding array, but it is not an integer\n", p.name);
                    rc = ER_EXIT_USAGE;
                    goto out;
                }
                {
                    char num[32];
                    snprintf(num, sizeof num, "%lld", (long long)pend[pi++]);
                    if (parse_scalar(num, p.format, &scalars[ns]) != 0) {
                        fprintf(stderr, "exactref interp: --cutile: %s does not fit parameter %%%s\n", num, p.name);
                        rc = ER_EXIT_USAGE;
                        goto out;
                    }
                }
                ns++;
                continue;
            }
            if (ai >= nargs) {
                printf("%s interp.bad_launch\n", kernel[0] == '@' ? kernel + 1 : kernel);
                fprintf(stderr, "exactref interp: kernel @%s: no argument for parameter %%%s (%d given)\n", kernel[0] == '@' ? kernel + 1 : kernel, p.name, nargs);
                rc = ER_EXIT_USAGE;
                goto out;
            }
            if (p.kind == ER_INTERP_PARAM_POINTER) {
                if (load_buffer(args[ai], p.format, &bufs[nb]) != 0) {
                    free_buffer(&bufs[nb]);
                    rc = ER_EXIT_USAGE;
                    goto out;
                }
                ai++;
                ib[nb].format = p.format;
                ib[nb].data = bufs[nb].data;
                ib[nb].nbytes = bufs[nb].nbytes;
                if (cutile) {
                    int d, nd = bufs[nb].a.ndim;
                    int64_t st = 1;
                    npend = 2 * nd;
                    pi = 0;
                    for (d = nd - 1; d >= 0; d--) {
                        pend[d] = bufs[nb].a.shape[d];
                        pend[nd + d] = st;
                        st *= bufs[nb].a.shape[d];
                    }
                }
                nb++;
            } else if (p.kind == ER_INTERP_PARAM_SCALAR) {
                if (parse_scalar(args[ai], p.format, &scalars[ns]) != 0) {
                    fprintf(stderr, "exactref interp: argument %d ('%s') for %%%s is not a value of its type%s\n", ai + 1, args[ai], p.name,
                            p.format >= 0 && p.format != ER_INTERP_FMT_I1 && er_fmt_get(p.format).kind == ER_KIND_FLOAT
                                ? " (an exactly representable number or a 0x bit pattern)" : "");
                    rc = ER_EXIT_USAGE;
                    goto out;
                }
                ai++;
                ns++;
            } else {
                printf("%s interp.bad_launch\n", kernel);
                fprintf(stderr, "exactref interp: parameter %%%s of @%s has a type no launch can pass\n", p.name, kernel);
                rc = ER_EXIT_USAGE;
                goto out;
            }
        }
        if (ai != nargs) {
            printf("%s interp.bad_launch\n", kernel[0] == '@' ? kernel + 1 : kernel);
            fprintf(stderr, "exactref interp: kernel @%s takes %d argument%s with --cutile, %d given\n", kernel[0] == '@' ? kernel + 1 : kernel, ai, ai == 1 ? "" : "s", nargs);
            rc = ER_EXIT_USAGE;
            goto out;
        }
    }
    if (outdir) {
        /* every output path must be writable before anything runs (nothing is written yet) */
        struct stat sb;
        if (stat(outdir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "exactref interp: -o %s: not a directory\n", outdir);
            rc = ER_EXIT_USAGE;
            goto out;
        }
        for (i = 0; i < np; i++) {
            er_interp_param p;
            char path[4200];
            er_interp_param_get(m, kernel, i, &p);
            if (p.kind != ER_INTERP_PARAM_POINTER) continue;
            snprintf(path, sizeof path, "%s/%s.npy", outdir, p.name);
            if (er_npy_output_check(path, msg, sizeof msg) != ER_OK) {
                fprintf(stderr, "exactref interp: %s\n", msg);
                rc = ER_EXIT_USAGE;
                goto out;
            }
        }
    }
    er_interp_launch_init(&l);
    l.grid[0] = grid[0];
    l.grid[1] = grid[1];
    l.grid[2] = grid[2];
    l.buffers = ib;
    l.nbuffers = (size_t)nb;
    l.scalars = scalars;
    l.nscalars = (size_t)ns;
    l.ub_checks = !no_ub;
    l.step_limit = step_limit;
    l.prints = prints;
    l.prints_size = 1 << 20;
    {
        er_status st = er_interp_kernel(m, kernel, &l, msg, sizeof msg);
        if (prints[0]) fputs(prints, stdout);
        printf("%s %s\n", kernel[0] == '@' ? kernel + 1 : kernel, er_interp_kind_name(l.kind));
        if (st != ER_OK || l.kind != ER_INTERP_OK) {
            fprintf(stderr, "exactref interp: %s: %s\n", er_interp_kind_name(l.kind), msg);
            rc = l.kind == ER_INTERP_UB ? ER_EXIT_FAIL : l.kind == ER_INTERP_INTERNAL ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
            goto out;
        }
    }
    fflush(stdout);
    if (outdir && write_outputs(outdir, m, kernel, bufs, ib, nb) != 0) rc = ER_EXIT_USAGE;
out:
    if (bufs)
        for (i = 0; i < nb; i++) free_buffer(&bufs[i]);
    free(bufs);
    free(ib);
    free(scalars);
    free(prints);
    er_interp_free(m);
    free(text);
    free(args);
    return rc;
}

const char *const er_cli_help_interp =
    "NAME\n"
    "    exactref interp - run a CUDA Tile IR kernel on the host, bit-exactly, refusing undefined behaviour\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref interp KERNEL.mlir|KERNEL.tileirbc [--kernel NAME] [--grid X[,Y[,Z]]] [-o DIR]\n"
    "                    [--no-ub-checks] [--step-limit N] [--cutile] ARGS...\n"
    "    exactref interp KERNEL.mlir --check-unsupported [--kernel NAME]\n"
    "\n"
    "DESCRIPTION\n"
    "    Parses the module (the cuda_tile dialect's MLIR text form; a .tileirbc bytecode file is first\n"
    "    printed as text by tileirdisasm, from PyPI nvidia-cuda-tileiras, when it is installed), and\n"
    "    runs the entry NAME (needed when the module has several) over the grid, blocks one after\n"
    "    another, x fastest, with every format modelled to the bit: integer operations exact, float\n"
    "    operations rounded once in their rounding attribute's direction, mmaf, mmai and mmaf_scaled\n"
    "    through the exact engine (the exact sum rounded once into the accumulator), the math\n"
    "    operations correctly rounded in their format. docs/interp.md lists every operation.\n"
    "\n"
    "    ARGS bind the entry's parameters in order: a .npy file for a pointer parameter, a number for a\n"
    "    scalar one. A .npy array for a pointer to E may hold E's native dtype (float64, float32,\n"
    "    float16, int8 ... int64), raw bit patterns as unsigned integers of E's storage width (uint16\n"
    "    for bf16, uint8 for the fp8 and fp4 formats, one element per byte), ml_dtypes arrays as numpy\n"
    "    saves them (void dtypes of the storage width, holding the patterns), or integers; every element\n"
    "    must be exactly a value of E. A scalar is a decimal integer, an exactly representable decimal\n"
    "    number, or a 0x bit pattern.\n"
    "\n"
    "    Output: the captured print_tko text, then one line per launch, the kernel's name and 'ok' or\n"
    "    the refusal's kind (interp.unsupported_op, interp.ub, interp.bad_launch, interp.internal); a\n"
    "    refusal's message, naming the operation and its line:column, goes to standard error.\n"
    "\n"
    "OPTIONS\n"
    "    --kernel NAME, -k NAME   the entry to run (with or without '@')\n"
    "    --grid X[,Y[,Z]]         blocks per axis (default 1; missing axes 1)\n"
    "    -o DIR                   write each buffer a store reached as DIR/PARAM.npy (the input's shape;\n"
    "                             native dtypes, raw patterns for bf16 and the 8-bit and narrower\n"
    "                             formats); every file is written under a temporary name and renamed\n"
    "                             only after the launch succeeded: nothing is written on a refusal\n"
    "    --no-ub-checks           do not refuse undefined behaviour: an undefined lane reads NaN (0 for\n"
    "                             integers and formats without NaN) and the run goes on\n"
    "    --step-limit N           the most loop iterations of one launch (default 2^30); past it the\n"
    "                             launch is refused as interp.ub\n"
    "    --check-unsupported      only the pre-check: the first operation or format not modelled\n"
    "    --cutile                 cuTile's calling convention: after each .npy argument, that array's shape\n"
    "                             and then its strides (in elements, C order) fill the next 2 x ndim\n"
    "                             integer parameters, which are then not given on the command line\n"
    "\n"
    "EXIT STATUS\n"
    "    0  the kernel ran\n"
    "    1  the kernel reached undefined behaviour (interp.ub)\n"
    "    2  bad usage or input, a parse error (file:line:column and what was expected), a bad launch,\n"
    "       or an unsupported operation or format\n"
    "    3  an internal error (interp.internal)\n";
