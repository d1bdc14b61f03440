/* cmd_convert.c: `exactref convert` and `exactref decode`: bit patterns through a pipe. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exactref/core/er_round.h"

/* Growable text buffer: output is written only once every line has been read and is valid. */
typedef struct {
    char *p;
    size_t len, cap;
} er_buf;

static int buf_add(er_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        char *p;
        while (cap < b->len + n + 1) cap *= 2;
        p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

/* Parse a line holding one hexadecimal pattern of format fmt; 0 or an error text. */
static const char *parse_pattern(char *line, int fmt, uint64_t *bits)
{
    char *s = line, *e;
    size_t nd = 0;
    uint64_t v = 0;
    er_status st;
    size_t len = strlen(s);
    while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
        s[--len] = 0;
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return "empty line (expected a hexadecimal bit pattern)";
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
    for (e = s; *e; e++) {
        int d;
        if (*e >= '0' && *e <= '9') d = *e - '0';
        else if (*e >= 'a' && *e <= 'f') d = *e - 'a' + 10;
        else if (*e >= 'A' && *e <= 'F') d = *e - 'A' + 10;
        else return "not a hexadecimal bit pattern";
        if (v >> 60) return "pattern wider than 64 bits";
        v = v << 4 | (uint64_t)d;
        nd++;
    }
    if (!nd) return "no hexadecimal digits";
    st = er_check_pattern(fmt, v);
    if (st == ER_EPATTERN) {
        er_fmt d = er_fmt_get(fmt);
        if (d.width < 64 && (v >> d.width)) return "pattern has bits set above the format's width";
        return "pattern has padding bits set (tf32: the low 13 bits must be zero)";
    }
    *bits = v;
    return NULL;
}

typedef int (*line_fn)(void *ctx, uint64_t bits, er_buf *out);

/* Read every line of `path` ('-' or NULL: stdin), apply fn, and print the output at the end. */
static int run_lines(const char *cmd, const char *path, int fmt, line_fn fn, void *ctx)
{
    FILE *in = stdin;
    const char *name = "<stdin>";
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long lineno = 0;
    er_buf out = {0, 0, 0};
    int rc = ER_EXIT_OK;
    if (path && strcmp(path, "-")) {
        in = fopen(path, "r");
        name = path;
        if (!in) {
            fprintf(stderr, "exactref %s: %s: cannot open: %s\n", cmd, path, strerror(errno));
            return ER_EXIT_USAGE;
        }
    }
    while ((n = getline(&line, &cap, in)) != -1) {
        uint64_t bits = 0;
        const char *err;
        lineno++;
        if ((size_t)n != strlen(line)) {
            fprintf(stderr, "exactref %s: %s:%lu: line contains a NUL byte\n", cmd, name, lineno);
            rc = ER_EXIT_USAGE;
            break;
        }
        err = parse_pattern(line, fmt, &bits);
        if (err) {
            fprintf(stderr, "exactref %s: %s:%lu: %s: '%.40s' (format %s)\n", cmd, name, lineno, err, line,
                    er_format_name(fmt));
            rc = ER_EXIT_USAGE;
            break;
        }
        if (fn(ctx, bits, &out) != 0) {
            fprintf(stderr, "exactref %s: out of memory at %s:%lu\n", cmd, name, lineno);
            rc = ER_EXIT_INTERNAL;
            break;
        }
    }
    if (rc == ER_EXIT_OK && ferror(in)) {
        fprintf(stderr, "exactref %s: %s: read error: %s\n", cmd, name, strerror(errno));
        rc = ER_EXIT_USAGE;
    }
    free(line);
    if (in != stdin) fclose(in);
    if (rc == ER_EXIT_OK && out.len) {
        if (fwrite(out.p, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
            fprintf(stderr, "exactref %s: cannot write the output: %s\n", cmd, strerror(errno));
            rc = ER_EXIT_INTERNAL;
        }
    }
    free(out.p);
    return rc;
}

typedef struct {
    int from, to, dir, show_flags;
    unsigned opts;
} convert_ctx;

static int convert_line(void *vctx, uint64_t bits, er_buf *out)
{
    convert_ctx *c = (convert_ctx *)vctx;
    uint64_t r;
    unsigned flags;
    char text[40];
    int len;
    if (er_convert_bits(c->from, c->to, bits, c->dir, c->opts, &r, &flags) != ER_OK) return -1;
    len = snprintf(text, sizeof text, "%0*llx", (er_format_width(c->to) + 3) / 4, (unsigned long long)r);
    if (c->show_flags) len += snprintf(text + len, sizeof text - (size_t)len, " %02x", flags);
    text[len++] = '\n';
    return buf_add(out, text, (size_t)len);
}

/* Options parsing shared by both commands: returns the index of the first positional or -1. */
static int need_value(const char *cmd, int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        er_cli_usage_error(cmd, "option %s needs a value", argv[i]);
        return 0;
    }
    return 1;
}

/* Each flag once (a second --to would silently win): 0, or 2 after the message. */
static int given_once(const char *cmd, const char *flag, const char **seen, int *nseen)
{
    for (int k = 0; k < *nseen; k++)
        if (!strcmp(seen[k], flag)) return er_cli_usage_error(cmd, "%s is given twice (it takes one value)", flag);
    if (*nseen < 8) seen[(*nseen)++] = flag;
    return 0;
}

/* An argument that is no known flag: an unknown option, else the one input file (path); 0, or 2 after the
 * message. */
static int positional(const char *cmd, const char *a, const char **path)
{
    if (a[0] == '-' && a[1]) return er_cli_usage_error(cmd, "unknown option '%s'", a);
    if (*path) return er_cli_usage_error(cmd, "more than one input file ('%s' and '%s')", *path, a);
    *path = a;
    return 0;
}

int er_cmd_convert(int argc, char **argv)
{
    convert_ctx c = {-1, -1, ER_RND_NEAREST_EVEN, 0, 0u};
    const char *path = NULL, *seen[8];
    int i, nseen = 0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--from") || !strcmp(a, "--to") || !strcmp(a, "--rounding") || !strcmp(a, "--saturate") ||
             !strcmp(a, "--flush-to-zero") || !strcmp(a, "--flags")) &&
            given_once("convert", a, seen, &nseen))
            return ER_EXIT_USAGE;
        if (!strcmp(a, "--from") || !strcmp(a, "--to")) {
            if (!need_value("convert", argc, argv, i)) return ER_EXIT_USAGE;
            if (er_cli_parse_format("convert", a, argv[++i], !strcmp(a, "--from") ? &c.from : &c.to))
                return ER_EXIT_USAGE;
        } else if (!strcmp(a, "--rounding")) {
            if (!need_value("convert", argc, argv, i)) return ER_EXIT_USAGE;
            if (er_rounding_from_name(argv[++i], &c.dir) != ER_OK)
                return er_cli_usage_error("convert",
                                          "--rounding: unknown direction '%s' (nearest_even, nearest_away, "
                                          "zero, negative_inf, positive_inf, odd)",
                                          argv[i]);
        } else if (!strcmp(a, "--saturate")) {
            c.opts |= ER_OPT_SATURATE;
        } else if (!strcmp(a, "--flush-to-zero")) {
            c.opts |= ER_OPT_FTZ;
        } else if (!strcmp(a, "--flags")) {
            c.show_flags = 1;
        } else if (positional("convert", a, &path)) {
            return ER_EXIT_USAGE;
        }
    }
    if (c.from < 0) return er_cli_usage_error("convert", "--from FORMAT is required");
    if (c.to < 0) return er_cli_usage_error("convert", "--to FORMAT is required");
    return run_lines("convert", path, c.from, convert_line, &c);
}

static int decode_line(void *vctx, uint64_t bits, er_buf *out)
{
    static const char *const cls[] = {"zero", "subnormal", "normal", "inf", "nan"};
    int fmt = *(int *)vctx;
    er_val v;
    char text[96];
    int len;
    if (er_format_hex(fmt, bits, text, 64) != ER_OK || er_decode_bits(fmt, bits, &v) != ER_OK) return -1;
    len = (int)strlen(text);
    len += snprintf(text + len, sizeof text - (size_t)len, " %s\n", cls[v.cls]);
    return buf_add(out, text, (size_t)len);
}

int er_cmd_decode(int argc, char **argv)
{
    int fmt = -1, i, nseen = 0;
    const char *path = NULL, *seen[8];
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--format") && given_once("decode", a, seen, &nseen)) return ER_EXIT_USAGE;
        if (!strcmp(a, "--format")) {
            if (!need_value("decode", argc, argv, i)) return ER_EXIT_USAGE;
            if (er_cli_parse_format("decode", a, argv[++i], &fmt)) return ER_EXIT_USAGE;
        } else if (positional("decode", a, &path)) {
            return ER_EXIT_USAGE;
        }
    }
    if (fmt < 0) return er_cli_usage_error("decode", "--format FORMAT is required");
    return run_lines("decode", path, fmt, decode_line, &fmt);
}
