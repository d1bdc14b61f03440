/* cmd_interp.c: `exactref interp`: run a CUDA Tile IR kernel on .npy buffers, bit-exactly, with the launch log. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_out.h"
#include "cmd_interp_bounds.h"
#include "exactref/interp.h"
#include "exactref/npy.h"
#include "exactref/core/er_round.h"

#define CMD "interp"

/* Why read_all failed. */
enum { RD_OK, RD_NOMEM, RD_TOOBIG, RD_ERROR };

/* The whole stream; NULL and *why (errno kept for RD_ERROR: a directory reads as EISDIR). */
static char *read_all(FILE *f, size_t *len, int *why)
{
    size_t cap = 1 << 16, n = 0;
    char *b = (char *)malloc(cap);
    *why = RD_NOMEM;
    if (!b) return NULL;
    for (;;) {
        size_t k;
        if (n == cap) {
            char *nb;
            if (cap > ((size_t)1 << 30)) { free(b); *why = RD_TOOBIG; return NULL; }
            nb = (char *)realloc(b, cap * 2);
            if (!nb) { free(b); return NULL; }
            b = nb;
            cap *= 2;
        }
        errno = 0;
        k = fread(b + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(b);
        *why = RD_ERROR;
        errno = e;
        return NULL;
    }
    *why = RD_OK;
    *len = n;
    return b;
}

/* Reports a read_all failure for path; the exit status (3 out of memory, 2 otherwise). */
static int read_failed(const char *path, int why)
{
    if (why == RD_NOMEM) {
        fprintf(stderr, "exactref interp: %s: out of memory reading the file\n", path);
        return ER_EXIT_INTERNAL;
    }
    if (why == RD_TOOBIG) fprintf(stderr, "exactref interp: %s: the file is larger than 1 GiB\n", path);
    else fprintf(stderr, "exactref interp: %s: cannot read it: %s\n", path, strerror(errno));
    return ER_EXIT_USAGE;
}

/* Opens an input file for reading; a directory or a file that cannot be opened is reported (NULL). */
static FILE *open_input(const char *path)
{
    struct stat sb;
    FILE *f;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "exactref interp: %s: is a directory, not a file\n", path);
        return NULL;
    }
    f = fopen(path, "rb");
    if (!f) fprintf(stderr, "exactref interp: %s: %s\n", path, strerror(errno));
    return f;
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

/* A path made of safe characters only (it is quoted for the shell). */
static int shell_safe(const char *s)
{
    for (; *s; s++)
        if (*s == '\'' || *s == '\n') return 0;
    return 1;
}

/* The first executable file matching a glob pattern, into out: 1, or 0. */
static int glob_exe(const char *pattern, char *out, size_t n)
{
    glob_t g;
    size_t i;
    int found = 0;
    if (glob(pattern, 0, NULL, &g) != 0) return 0;
    for (i = 0; i < g.gl_pathc && !found; i++)
        if (access(g.gl_pathv[i], X_OK) == 0 && strlen(g.gl_pathv[i]) < n && shell_safe(g.gl_pathv[i])) {
            strcpy(out, g.gl_pathv[i]);
            found = 1;
        }
    globfree(&g);
    return found;
}

/*
 * tileirdisasm: $EXACTREF_TILEIRDISASM, else on PATH, else where pip installs it (PyPI
 * nvidia-cuda-tileiras puts it in site-packages/nvidia/cu<N>/bin, which is not on PATH): under the
 * active virtual environment or conda prefix, the user's site-packages, /usr/local and /usr, and
 * finally the site-packages of the python3 on PATH.  1 and the command in out, or 0.
 */
static int find_disasm(char *out, size_t n)
{
    static const char *const tail = "/lib/python3*/site-packages/nvidia/cu*/bin/tileirdisasm";
    const char *env = getenv("EXACTREF_TILEIRDISASM"), *roots[3];
    char pat[4200];
    int i;
    if (env && *env) {
        if (strlen(env) >= n || !shell_safe(env)) return 0;
        strcpy(out, env);
        return 1;
    }
    if (on_path("tileirdisasm")) {
        snprintf(out, n, "tileirdisasm");
        return 1;
    }
    roots[0] = getenv("VIRTUAL_ENV");
    roots[1] = getenv("CONDA_PREFIX");
    roots[2] = getenv("HOME");
    for (i = 0; i < 3; i++) {
        if (!roots[i] || !*roots[i] || strlen(roots[i]) > 4000) continue;
        snprintf(pat, sizeof pat, "%s%s%s", roots[i], i == 2 ? "/.local" : "", tail);
        if (glob_exe(pat, out, n)) return 1;
    }
    if (glob_exe("/usr/local/lib/python3*/dist-packages/nvidia/cu*/bin/tileirdisasm", out, n) ||
        glob_exe("/usr/local/lib/python3*/site-packages/nvidia/cu*/bin/tileirdisasm", out, n) ||
        glob_exe("/usr/lib/python3/dist-packages/nvidia/cu*/bin/tileirdisasm", out, n))
        return 1;
    if (on_path("python3")) {
        /* the interpreter's own purelib and platlib */
        FILE *f = popen("python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"]); print(sysconfig.get_paths()[\"platlib\"])' 2>/dev/null", "r");
        char line[4000];
        int found = 0;
        if (!f) return 0;
        while (!found && fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (!*line) continue;
            snprintf(pat, sizeof pat, "%s/nvidia/cu*/bin/tileirdisasm", line);
            found = glob_exe(pat, out, n);
        }
        pclose(f);
        return found;
    }
    return 0;
}

/* The module's text: the file itself, or tileirdisasm's output for a .tileirbc file. */
static char *load_text(const char *path, size_t *len, int *rc)
{
    FILE *f;
    char *t;
    int why;
    *rc = ER_EXIT_USAGE;
    if (ends_with(path, ".tileirbc")) {
        char cmd[8600], tool[4096];
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
        if (!find_disasm(tool, sizeof tool)) {
            fprintf(stderr, "exactref interp: %s: Tile IR bytecode needs tileirdisasm to be read, and it was found neither "
                            "on PATH nor under site-packages/nvidia/cu*/bin of the active python environment (install it "
                            "with: pip install nvidia-cuda-tileiras, or name it with EXACTREF_TILEIRDISASM=PATH), or pass "
                            "the MLIR text form\n", path);
            return NULL;
        }
        snprintf(cmd, sizeof cmd, "'%s' '%s'", tool, path);
        f = popen(cmd, "r");
        if (!f) {
            fprintf(stderr, "exactref interp: %s: cannot run tileirdisasm\n", path);
            return NULL;
        }
        t = read_all(f, len, &why);
        st = pclose(f);
        if (!t && why == RD_NOMEM) {
            *rc = read_failed(path, why);
            return NULL;
        }
        if (!t || st != 0) {
            fprintf(stderr, "exactref interp: %s: tileirdisasm failed (status %d)\n", path, st);
            free(t);
            return NULL;
        }
        return t;
    }
    f = open_input(path);
    if (!f) return NULL;
    t = read_all(f, len, &why);
    fclose(f);
    if (!t) *rc = read_failed(path, why);
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

/* One buffer: 0, or the exit status after the message (2 bad input, 3 out of memory). */
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
        FILE *f = open_input(path);
        size_t len = 0, k;
        char *raw;
        er_status st;
        int why;
        if (!f) return ER_EXIT_USAGE;
        raw = read_all(f, &len, &why);
        fclose(f);
        if (!raw) return read_failed(path, why);
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
            return er_cli_exit_for(st);
        }
    }
    n = b->a.itemsize ? b->a.nbytes / b->a.itemsize : 0;
    d = b->a.descr;
    out = (uint8_t *)calloc(n * eb + 1, 1);
    if (!out) {
        fprintf(stderr, "exactref interp: %s: out of memory\n", path);
        return ER_EXIT_INTERNAL;
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
                    return ER_EXIT_USAGE;
                }
            }
        } else if (d[1] == 'u' && fmt != ER_INTERP_FMT_I1 && er_fmt_get(fmt).kind == ER_KIND_FLOAT) {
            if (b->a.itemsize != eb) goto bad_type;
            if (er_check_pattern(fmt, raw) != ER_OK) {
                fprintf(stderr, "exactref interp: %s: element [%zu] = 0x%llx is not a pattern of %s\n", path, i, (unsigned long long)raw, fmt_label(fmt));
                return ER_EXIT_USAGE;
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
        return ER_EXIT_USAGE;
    }
    return 0;
bad_type:
    fprintf(stderr, "exactref interp: %s: a '%s' array cannot hold %s elements (use the native dtype, raw patterns as "
                    "unsigned integers of the storage width, or integers)\n", path, d, fmt_label(fmt));
    return ER_EXIT_USAGE;
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

/*
 * Exactness of a number read by strtod.  A number is normalised to its significant digits (no leading or
 * trailing zeros) and the exponent of its first one; the text and the double strtod gave must agree.
 * Decimal text compares with the double's exact decimal expansion (printf prints it exactly, at most
 * 767 significant digits); hexadecimal text ("0x1.8p3") with the double's %a, as bits.
 */
#define EXACT_DIGITS 1200

/* Digits of a mantissa "ddd.ddd" (base 10 or 16, as bits for 16) and an exponent: normalised into
 * dig (characters '0'..'9', or '0'/'1' bits) and *e, the position of the first digit (value = 0.dig x
 * base^e); 0 digits for zero.  -1 if too long. */
static int normalise(const char *m, size_t mlen, long exp, int hex, char *dig, size_t cap, long *e)
{
    size_t n = 0, i;
    long point = -1, pos = 0, first = -1;
    for (i = 0; i < mlen; i++) {
        int c = (unsigned char)m[i], v, b, nb = hex ? 4 : 1;
        if (c == '.') { point = pos; continue; }
        v = hex ? (c <= '9' ? c - '0' : (c | 32) - 'a' + 10) : c - '0';
        for (b = nb - 1; b >= 0; b--) {
            int d = hex ? (v >> b) & 1 : v;
            if (first < 0 && d == 0) { pos++; continue; }
            if (first < 0) first = pos;
            if (n + 1 >= cap) return -1;
            dig[n++] = (char)('0' + d);
            pos++;
        }
    }
    if (point < 0) point = pos;
    while (n && dig[n - 1] == '0') n--;
    dig[n] = 0;
    /* value = 0.dig x base^(point - first) x (2^exp or 10^exp) */
    *e = n ? point - first + exp : 0;
    return 0;
}

/* Whether the text s (already accepted by strtod as d, finite text) is exactly d. */
static int text_is_exactly(const char *s, double d)
{
    static char a[EXACT_DIGITS + 2], b[EXACT_DIGITS + 2];
    char buf[EXACT_DIGITS + 64];
    const char *m, *x;
    long ea, eb, exp = 0;
    int hex;
    if (!(d == d) || d - d != 0) return 0; /* the text is finite (checked by the caller): inf means overflow */
    if (*s == '+' || *s == '-') s++;
    hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    m = hex ? s + 2 : s;
    x = m + strcspn(m, hex ? "pP" : "eE");
    if (*x) exp = strtol(x + 1, NULL, 10);
    if (*x && (exp > 100000 || exp < -100000)) return 0;
    if (normalise(m, (size_t)(x - m), exp, hex, a, sizeof a, &ea)) return 0;
    if (hex) snprintf(buf, sizeof buf, "%a", d);
    else snprintf(buf, sizeof buf, "%.*e", EXACT_DIGITS - 10, d);
    m = buf + (buf[0] == '-'); /* the sign was strtod's, from the text */
    if (hex) m += 2;
    x = m + strcspn(m, hex ? "pP" : "eE");
    exp = *x ? strtol(x + 1, NULL, 10) : 0;
    if (normalise(m, (size_t)(x - m), exp, hex, b, sizeof b, &eb)) return 0;
    /* hex: a's exponent counts hex digits' bits from the point; the bit form already did: 0.bits x 2^e */
    return !strcmp(a, b) && (a[0] == 0 || ea == eb);
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
        const char *t = s + (*s == '+' || *s == '-');
        errno = 0;
        d = strtod(s, &e);
        if (*e || e == s) return -1;
        /* one rule for every format: the number must be exactly a value of it, so a decimal or hex
         * float that strtod rounds (0.1), that overflows (1e999) or underflows (1e-400) is refused,
         * as is one binary64 holds but the format does not */
        if (isdigit((unsigned char)t[0]) || t[0] == '.') {
            if (!text_is_exactly(s, d)) return -1;
        }
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

/*
 * cuTile's list-of-arrays parameter (calling convention cutile_python_v1): a pointer to a table of i64
 * words, one row per array: its address, its shape, then its strides (elements), followed by one integer
 * parameter, the list's length.  `list:[FMT:]a.npy,b.npy,...` loads each array as an extra buffer of the
 * launch (FMT: the elements' format, else the arrays' native dtype) and makes the table, whose words
 * hold the extra buffers' addresses: extra buffer j lives at (npp + j + 1) * 2^40 (interp.h), npp being
 * the number of pointer parameters.  The arrays are appended to *xb (named PARAM.K for -o); *len gets
 * the list's length.  0, or the exit status after the message.
 */
typedef struct xbuf {
    buf b;
    char name[80];
} xbuf;

static int fmt_of_descr(const char *d)
{
    char k = d[1];
    int n = atoi(d + 2);
    if (k == 'f') return n == 8 ? ER_FMT_F64 : n == 4 ? ER_FMT_F32 : n == 2 ? ER_FMT_F16 : -1;
    if (k == 'i') return n == 8 ? ER_FMT_I64 : n == 4 ? ER_FMT_I32 : n == 2 ? ER_FMT_I16 : n == 1 ? ER_FMT_I8 : -1;
    if (k == 'b') return ER_INTERP_FMT_I1;
    return -1;
}

static int load_list(const char *arg, const char *pname, int npp, xbuf **xb, int *nx, buf *table, int64_t *len)
{
    const char *rest = arg + 5, *colon = strchr(rest, ':');
    int fmt = -1, k, n = 1, nd = -1, c;
    char *files, *f, *save = NULL;
    int64_t *words;
    if (colon) {
        char fn[64];
        size_t l = (size_t)(colon - rest);
        if (l >= sizeof fn || (snprintf(fn, sizeof fn, "%.*s", (int)l, rest), er_format_from_name(fn, &fmt) != ER_OK)) {
            fprintf(stderr, "exactref interp: %s: '%.*s' is not a format name (list:[FMT:]a.npy,b.npy,...)\n", arg, (int)l, rest);
            return ER_EXIT_USAGE;
        }
        rest = colon + 1;
    }
    for (f = (char *)rest; *f; f++) n += *f == ',';
    if (!*rest || n > 4096 || *nx + n > 4096) {
        fprintf(stderr, "exactref interp: %s: a list holds 1 to 4096 arrays (4096 in all)\n", arg);
        return ER_EXIT_USAGE;
    }
    files = (char *)malloc(strlen(rest) + 1);
    words = NULL;
    {
        xbuf *nxb = (xbuf *)realloc(*xb, (size_t)(*nx + n) * sizeof **xb);
        if (!files || !nxb) { free(files); if (nxb) *xb = nxb; fprintf(stderr, "exactref interp: out of memory\n"); return ER_EXIT_INTERNAL; }
        *xb = nxb;
    }
    strcpy(files, rest);
    k = 0;
    for (f = strtok_r(files, ",", &save); f; f = strtok_r(NULL, ",", &save), k++) {
        xbuf *x = &(*xb)[*nx];
        int efmt = fmt, rc;
        memset(x, 0, sizeof *x);
        if (efmt < 0) {
            er_npy a;
            char msg[512];
            if (er_npy_read(f, &a, msg, sizeof msg) != ER_OK) {
                fprintf(stderr, "exactref interp: %s\n", msg);
                free(files);
                return ER_EXIT_USAGE;
            }
            efmt = fmt_of_descr(a.descr);
            if (efmt < 0) {
                fprintf(stderr, "exactref interp: %s: the list's format is not given and '%s' is not a native dtype; write list:FMT:%s\n", f, a.descr, rest);
                er_npy_free(&a);
                free(files);
                return ER_EXIT_USAGE;
            }
            er_npy_free(&a);
        }
        if ((rc = load_buffer(f, efmt, &x->b)) != 0) {
            free_buffer(&x->b);
            free(files);
            return rc;
        }
        x->b.path = strdup(f); /* the path outlives the copy it was cut from */
        if (!x->b.path) { free_buffer(&x->b); free(files); return ER_EXIT_INTERNAL; }
        snprintf(x->name, sizeof x->name, "%.60s.%d", pname, k);
        if (nd >= 0 && x->b.a.ndim != nd) {
            fprintf(stderr, "exactref interp: %s: the arrays of a list must have one number of dimensions (%d, then %d)\n", arg, nd, x->b.a.ndim);
            free((void *)x->b.path);
            free_buffer(&x->b);
            free(files);
            return ER_EXIT_USAGE;
        }
        nd = x->b.a.ndim;
        (*nx)++;
    }
    free(files);
    /* the table: n rows of 1 + 2 nd words */
    c = 1 + 2 * nd;
    memset(table, 0, sizeof *table);
    words = (int64_t *)calloc((size_t)(n * c) + 1, sizeof *words);
    if (!words) { fprintf(stderr, "exactref interp: out of memory\n"); return ER_EXIT_INTERNAL; }
    for (k = 0; k < n; k++) {
        const buf *e = &(*xb)[*nx - n + k].b;
        int d;
        int64_t st = 1;
        words[k * c] = (int64_t)((uint64_t)(npp + *nx - n + k + 1) << 40);
        for (d = nd - 1; d >= 0; d--) {
            words[k * c + 1 + d] = e->a.shape[d];
            words[k * c + 1 + nd + d] = st;
            st *= e->a.shape[d];
        }
    }
    table->data = words;
    table->nbytes = (size_t)(n * c) * sizeof *words;
    table->fmt = ER_FMT_I64;
    table->path = arg;
    table->a.ndim = 2;
    table->a.shape[0] = n;
    table->a.shape[1] = c;
    *len = n;
    return 0;
}

/* The output path of a pointer parameter's buffer: DIR/PARAM.npy (malloc'd; NULL: out of memory). */
static char *out_path(const char *dir, const char *param)
{
    size_t n = strlen(dir) + strlen(param) + 6;
    char *q = (char *)malloc(n);
    if (q) snprintf(q, n, "%s/%s.npy", dir, param);
    return q;
}

/*
 * Before anything runs: -o is a directory, and every file the launch may write (each pointer
 * parameter's DIR/PARAM.npy) may be written under the output rules (npy.h) and is none of the inputs
 * (the kernel file, the .npy arguments: the same file by device and inode).  0, or the exit status.
 */
static int check_outputs(const char *dir, const char *kfile, const er_interp_module *m, const char *kernel,
                         const buf *bufs, int nb)
{
    struct stat sb;
    char msg[1024];
    int i, bi = 0, np = er_interp_param_count(m, kernel);
    if (stat(dir, &sb) != 0 && errno == ENOENT) return 0; /* made after the run (make_outdir): no file in it is an input */
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "exactref interp: -o %s: not a directory\n", dir);
        return ER_EXIT_USAGE;
    }
    for (i = 0; i < np; i++) {
        er_interp_param p;
        char *path;
        int k, bad = 0;
        er_interp_param_get(m, kernel, i, &p);
        if (p.kind != ER_INTERP_PARAM_POINTER) continue;
        if (!(path = out_path(dir, p.name))) {
            fprintf(stderr, "exactref interp: out of memory\n");
            return ER_EXIT_INTERNAL;
        }
        if (er_cli_same_file(path, kfile)) {
            fprintf(stderr, "exactref interp: -o %s: %s is the kernel file: refusing to overwrite an input\n", dir, path);
            bad = 1;
        }
        for (k = 0; k < nb && !bad; k++)
            if (er_cli_same_file(path, bufs[k].path)) {
                fprintf(stderr, "exactref interp: -o %s: %s is the input %s: refusing to overwrite an input\n", dir, path, bufs[k].path);
                bad = 1;
            }
        if (!bad && er_npy_output_check(path, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref interp: -o %s: %s\n", dir, msg);
            bad = 1;
        }
        free(path);
        if (bad) return ER_EXIT_USAGE;
        bi++;
    }
    (void)bi;
    return 0;
}

/*
 * -o DIR when it does not exist yet: made (with its missing parents, mode 0777 less the umask) after a
 * run that succeeded, so that a refusal leaves nothing behind.  0, or exit 3 naming the directory.
 */
static int make_outdir(const char *dir)
{
    char *p = (char *)malloc(strlen(dir) + 1), *q;
    struct stat sb;
    int rc = 0;
    if (!p) return ER_EXIT_INTERNAL;
    strcpy(p, dir);
    for (q = p + 1;; q++) {
        char c = *q;
        if (c != '/' && c != 0) continue;
        *q = 0;
        if (stat(p, &sb) != 0 && mkdir(p, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "exactref interp: -o %s: cannot make the directory %s: %s\n", dir, p, strerror(errno));
            rc = ER_EXIT_INTERNAL;
            break;
        }
        *q = c;
        if (!c) break;
    }
    free(p);
    return rc;
}

/*
 * Write every buffer a store reached as DIR/PARAM.npy, each under the output rules (npy.h: a regular
 * file replaced atomically with its mode kept, a symbolic link's target replaced, a FIFO written in
 * place, no temporary file left).  All of them, or exit 3 with the first failure's message (which
 * names the file): 0 or 3.
 */
static int write_outputs(const char *dir, const er_interp_module *m, const char *kernel, buf *bufs, er_interp_buffer *ib, int nb)
{
    int i, np = er_interp_param_count(m, kernel), bi = 0;
    for (i = 0; i < np; i++) {
        er_interp_param p;
        char msg[1024], *path;
        int64_t shape[8];
        int nd, d;
        er_status st;
        er_interp_param_get(m, kernel, i, &p);
        if (p.kind != ER_INTERP_PARAM_POINTER) continue;
        if (bi >= nb) break;
        if (!ib[bi].stored) { bi++; continue; }
        nd = bufs[bi].a.ndim;
        for (d = 0; d < nd; d++) shape[d] = bufs[bi].a.shape[d];
        if (!(path = out_path(dir, p.name))) {
            fprintf(stderr, "exactref interp: out of memory\n");
            return ER_EXIT_INTERNAL;
        }
        st = er_npy_write(path, native_descr(bufs[bi].fmt), nd, shape, ib[bi].data, msg, sizeof msg);
        free(path);
        if (st != ER_OK) {
            fprintf(stderr, "exactref interp: %s\n", msg);
            return ER_EXIT_INTERNAL;
        }
        bi++;
    }
    return ER_EXIT_OK;
}

/* The list arrays' outputs DIR/PARAM.K.npy: checked before the run like the others (0 or the exit status). */
static int check_list_outputs(const char *dir, const char *kfile, const buf *bufs, int nb, const xbuf *xb, int nx)
{
    struct stat sb;
    char msg[1024];
    int j, k;
    if (!nx || (stat(dir, &sb) != 0 && errno == ENOENT)) return 0;
    for (j = 0; j < nx; j++) {
        char *path = out_path(dir, xb[j].name);
        int bad = 0;
        if (!path) return ER_EXIT_INTERNAL;
        if (er_cli_same_file(path, kfile)) bad = 1;
        for (k = 0; k < nb && !bad; k++) bad = er_cli_same_file(path, bufs[k].path);
        for (k = 0; k < nx && !bad; k++) bad = er_cli_same_file(path, xb[k].b.path);
        if (bad) fprintf(stderr, "exactref interp: -o %s: %s is an input: refusing to overwrite an input\n", dir, path);
        else if (er_npy_output_check(path, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref interp: -o %s: %s\n", dir, msg);
            bad = 1;
        }
        free(path);
        if (bad) return ER_EXIT_USAGE;
    }
    return 0;
}

/* The list arrays a store reached, as DIR/PARAM.K.npy: 0 or 3. */
static int write_list_outputs(const char *dir, const xbuf *xb, const er_interp_buffer *xib, int nx)
{
    int j;
    for (j = 0; j < nx; j++) {
        char msg[1024], *path;
        er_status st;
        if (!xib[j].stored) continue;
        if (!(path = out_path(dir, xb[j].name))) return ER_EXIT_INTERNAL;
        st = er_npy_write(path, native_descr(xb[j].b.fmt), xb[j].b.a.ndim, xb[j].b.a.shape, xib[j].data, msg, sizeof msg);
        free(path);
        if (st != ER_OK) {
            fprintf(stderr, "exactref interp: %s\n", msg);
            return ER_EXIT_INTERNAL;
        }
    }
    return 0;
}

/*
 * Bounds mode's outputs: --bounds DIR (lo/hi per float buffer), --check DIR (each pointer parameter's
 * DIR/PARAM.npy and each list array's DIR/PARAM.K.npy that exists, judged; other files ignored) with
 * --json FILE.  0 all covered, 1 some
 * outside, 2 a device file that is not the buffer's, 3 a write that failed.
 */
static int bounds_outputs(const er_interp_module *m, const char *kernel, buf *bufs, int nb, const xbuf *xb, int nx,
                          er_interp_bounds *bres, const char *checkdir, const char *boundsdir, const char *jsonpath, const char *standard)
{
    int i, np = er_interp_param_count(m, kernel), bi = 0, rc = ER_EXIT_OK, judged = 0;
    er_sbuf js;
    memset(&js, 0, sizeof js);
    if (jsonpath) er_sb_printf(&js, "{\n  \"kernel\": \"%s\",\n  \"standard\": \"%s\",\n  \"buffers\": [", kernel, standard ? standard : "normal");
    /* the pointer parameters' buffers (bi < nb), then a list's arrays (extra buffer j: bounds buffer nb + j, DIR/PARAM.K.npy) */
    for (i = 0; bi < nb + nx; i++) {
        int64_t shape[ER_NPY_MAX_DIMS];
        int nd, d, fmt;
        const char *name;
        const buf *b;
        er_interp_param p; /* its name is used below: it lives for the whole iteration */
        if (bi < nb) {
            if (i >= np) break;
            er_interp_param_get(m, kernel, i, &p);
            if (p.kind != ER_INTERP_PARAM_POINTER) continue;
            b = &bufs[bi];
            name = p.name;
            fmt = p.format;
        } else {
            b = &xb[bi - nb].b;
            name = xb[bi - nb].name;
            fmt = b->fmt;
        }
        nd = b->a.ndim;
        for (d = 0; d < nd; d++) shape[d] = b->a.shape[d];
        if (nd == 0) { nd = 1; shape[0] = 1; }
        if (boundsdir && (rc = er_cli_interp_write_bounds(boundsdir, name, bres, (size_t)bi, nd, shape)) != 0) break;
        if (checkdir) {
            char path[4096], msg[1024];
            struct stat sb;
            buf dev;
            er_check_report rep;
            int64_t *idx;
            int lrc;
            er_status st;
            snprintf(path, sizeof path, "%s/%s.npy", checkdir, name);
            if (stat(path, &sb) != 0) { bi++; continue; } /* a buffer the device did not write */
            if ((lrc = load_buffer(path, fmt, &dev)) != 0) { free_buffer(&dev); rc = lrc; break; }
            if (dev.nbytes != b->nbytes) {
                fprintf(stderr, "exactref interp: --check: %s holds %zu bytes of %s, the buffer %zu\n", path, dev.nbytes, fmt_label(fmt), b->nbytes);
                free_buffer(&dev);
                rc = ER_EXIT_USAGE;
                break;
            }
            idx = (int64_t *)malloc(sizeof(int64_t) * 1000);
            if (!idx) { free_buffer(&dev); rc = ER_EXIT_INTERNAL; break; }
            st = er_interp_bounds_report(bres, (size_t)bi, dev.data, dev.nbytes, nd, shape, idx, 1000, &rep, msg, sizeof msg);
            if (st != ER_OK) {
                fprintf(stderr, "exactref interp: --check: %s: %s\n", path, msg);
                free(idx);
                free_buffer(&dev);
                rc = er_cli_exit_for(st);
                break;
            }
            er_cli_interp_report_text(stdout, path, standard ? standard : "normal", nd, shape, &rep);
            if (jsonpath) er_cli_interp_report_json(&js, path, name, &rep, idx, judged == 0);
            judged++;
            if (rep.outside && rc == ER_EXIT_OK) rc = ER_EXIT_FAIL;
            free(idx);
            free_buffer(&dev);
        }
        bi++;
    }
    if (checkdir && !judged && rc == ER_EXIT_OK) {
        fprintf(stderr, "exactref interp: --check %s: no PARAM.npy (or a list's PARAM.K.npy) file of a pointer parameter there\n", checkdir);
        rc = ER_EXIT_USAGE;
    }
    if (jsonpath && (rc == ER_EXIT_OK || rc == ER_EXIT_FAIL)) {
        char msg[1024];
        er_sb_printf(&js, "\n  ]\n}\n");
        if (js.failed || er_npy_write_bytes(jsonpath, js.p, js.len, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref interp: --json %s: %s\n", jsonpath, js.failed ? "out of memory" : msg);
            rc = ER_EXIT_INTERNAL;
        }
    }
    er_sb_free(&js);
    return rc;
}

int er_cmd_interp(int argc, char **argv)
{
    const char *file = NULL, *kernel = NULL, *gridarg = NULL, *outdir = NULL;
    /* bounds mode (cmd_interp_bounds.c): --check DIR, --bounds DIR, --standard S, --ulps OP=N, --json FILE */
    const char *checkdir = NULL, *boundsdir = NULL, *standard = NULL, *jsonpath = NULL;
    er_interp_bounds_opts bopts;
    er_interp_bounds *bres = NULL;
    int no_ub = 0, check_only = 0, cutile = 0, i, nargs = 0, rc = ER_EXIT_OK, grid[3] = {1, 1, 1};
    long long step_limit = 0, work_limit = 0;
    char **args = (char **)calloc((size_t)argc + 1, sizeof(char *));
    char *text = NULL;
    size_t len = 0;
    er_interp_module *m = NULL;
    char msg[2048];
    buf *bufs = NULL;
    er_interp_buffer *ib = NULL;
    uint64_t *scalars = NULL;
    int nb = 0, ns = 0, np;
    xbuf *xb = NULL;             /* the arrays of list:... arguments (cuTile's list-of-arrays) */
    er_interp_buffer *xib = NULL;
    int nx = 0, npp = 0;
    char *prints = NULL;
    er_interp_launch l;
    if (!args) return ER_EXIT_INTERNAL;
    er_interp_bounds_opts_init(&bopts);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--check") || !strcmp(a, "--bounds") || !strcmp(a, "--standard") || !strcmp(a, "--json")) {
            const char **slot = a[2] == 'c' ? &checkdir : a[2] == 'b' ? &boundsdir : a[2] == 's' ? &standard : &jsonpath;
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "%s needs a value", a); }
            if (*slot) { free(args); return er_cli_usage_error(CMD, "%s given twice ('%s' and '%s')", a, *slot, argv[i]); }
            *slot = argv[i];
            continue;
        }
        if (!strcmp(a, "--ulps")) {
            char name[16], *e;
            const char *eq;
            int ax;
            double v;
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "--ulps needs OP=N"); }
            eq = strchr(argv[i], '=');
            if (!eq || (size_t)(eq - argv[i]) >= sizeof name) { free(args); return er_cli_usage_error(CMD, "--ulps: '%s' is not OP=N", argv[i]); }
            memcpy(name, argv[i], (size_t)(eq - argv[i]));
            name[eq - argv[i]] = 0;
            if ((ax = er_interp_bounds_op_index(name)) < 0) { free(args); return er_cli_usage_error(CMD, "--ulps: '%s' is not one of exp2, exp, divf, rsqrt, sqrt, tanh", name); }
            errno = 0;
            v = strtod(eq + 1, &e);
            if (*e || e == eq + 1 || errno || !(v >= 0) || v > 1e300) { free(args); return er_cli_usage_error(CMD, "--ulps: '%s' is not a number of ulps >= 0", eq + 1); }
            if (bopts.ulps[ax] >= 0) { free(args); return er_cli_usage_error(CMD, "--ulps %s given twice", name); }
            bopts.ulps[ax] = v;
            continue;
        }
        if (!strcmp(a, "--kernel") || !strcmp(a, "-k")) {
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "--kernel needs a name"); }
            if (kernel) { free(args); return er_cli_usage_error(CMD, "--kernel given twice ('%s' and '%s')", kernel, argv[i]); }
            kernel = argv[i];
        } else if (!strcmp(a, "--grid") || !strcmp(a, "-g")) {
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "--grid needs X[,Y[,Z]]"); }
            if (gridarg) { free(args); return er_cli_usage_error(CMD, "--grid given twice ('%s' and '%s')", gridarg, argv[i]); }
            gridarg = argv[i];
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "-o needs a directory"); }
            if (outdir) { free(args); return er_cli_usage_error(CMD, "-o given twice ('%s' and '%s')", outdir, argv[i]); }
            outdir = argv[i];
        } else if (!strcmp(a, "--no-ub-checks")) {
            no_ub = 1;
        } else if (!strcmp(a, "--check-unsupported")) {
            check_only = 1;
        } else if (!strcmp(a, "--cutile")) {
            cutile = 1;
        } else if (!strcmp(a, "--step-limit") || !strcmp(a, "--work-limit")) {
            char *e;
            int work = a[2] == 'w';
            long long v;
            if (++i >= argc) { free(args); return er_cli_usage_error(CMD, "%s needs a number", a); }
            if (work ? work_limit != 0 : step_limit != 0) { free(args); return er_cli_usage_error(CMD, "%s given twice", a); }
            errno = 0;
            v = strtoll(argv[i], &e, 10);
            if (*e || errno || e == argv[i] || v < 1) { free(args); return er_cli_usage_error(CMD, "%s: '%s' is not a positive integer", a, argv[i]); }
            if (work) work_limit = v;
            else step_limit = v;
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
    {
        int lrc;
        er_status pst;
        text = load_text(file, &len, &lrc);
        if (!text) { free(args); return lrc; }
        if ((pst = er_interp_parse(text, len, file, &m, msg, sizeof msg)) != ER_OK) {
            fprintf(stderr, "exactref interp: %s\n", msg);
            rc = pst == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE; /* out of memory is a resource: 3 */
            goto out;
        }
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
            npp += p.kind == ER_INTERP_PARAM_POINTER;
        }
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
            if (p.kind == ER_INTERP_PARAM_POINTER && !strncmp(args[ai], "list:", 5)) {
                int64_t len = 0;
                if (p.format != ER_FMT_I64) {
                    fprintf(stderr, "exactref interp: %s: a list binds cuTile's table, a pointer to i64; %%%s points to %s\n", args[ai], p.name, fmt_label(p.format));
                    rc = ER_EXIT_USAGE;
                    goto out;
                }
                if ((rc = load_list(args[ai], p.name, npp, &xb, &nx, &bufs[nb], &len)) != 0) goto out;
                ai++;
                ib[nb].format = ER_FMT_I64;
                ib[nb].data = bufs[nb].data;
                ib[nb].nbytes = bufs[nb].nbytes;
                if (cutile) { /* the list's length fills the next integer parameter */
                    npend = 1;
                    pi = 0;
                    pend[0] = len;
                }
                nb++;
            } else if (p.kind == ER_INTERP_PARAM_POINTER) {
                if ((rc = load_buffer(args[ai], p.format, &bufs[nb])) != 0) {
                    free_buffer(&bufs[nb]);
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
    if (outdir && ((rc = check_outputs(outdir, file, m, kernel, bufs, nb)) != 0 || (rc = check_list_outputs(outdir, file, bufs, nb, xb, nx)) != 0)) goto out;
    if (nx) {
        xib = (er_interp_buffer *)calloc((size_t)nx, sizeof *xib);
        if (!xib) { rc = ER_EXIT_INTERNAL; goto out; }
        for (i = 0; i < nx; i++) {
            xib[i].format = xb[i].b.fmt;
            xib[i].data = xb[i].b.data;
            xib[i].nbytes = xb[i].b.nbytes;
        }
    }
    if (boundsdir)
        for (i = 0; i < np; i++) {
            er_interp_param p;
            er_interp_param_get(m, kernel, i, &p);
            if (p.kind == ER_INTERP_PARAM_POINTER && (rc = er_cli_interp_bounds_path_ok(boundsdir, p.name)) != 0) goto out;
        }
    if (boundsdir)
        for (i = 0; i < nx; i++)
            if ((rc = er_cli_interp_bounds_path_ok(boundsdir, xb[i].name)) != 0) goto out;
    bopts.standard = standard;
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
    l.work_limit = work_limit;
    l.prints = prints;
    l.prints_size = 1 << 20;
    l.extra = xib;
    l.nextra = (size_t)nx;
    {
        er_status st = checkdir || boundsdir || standard || jsonpath ? er_interp_kernel_bounds(m, kernel, &l, &bopts, &bres, msg, sizeof msg)
                                                                     : er_interp_kernel(m, kernel, &l, msg, sizeof msg);
        if (prints[0]) {
            size_t pl = strlen(prints);
            fputs(prints, stdout);
            if (prints[pl - 1] != '\n') putchar('\n'); /* the launch line starts a line of its own */
        }
        printf("%s %s\n", kernel[0] == '@' ? kernel + 1 : kernel, er_interp_kind_name(l.kind));
        if (st != ER_OK || l.kind != ER_INTERP_OK) {
            fprintf(stderr, "exactref interp: %s: %s\n", er_interp_kind_name(l.kind), msg);
            if (l.kind == ER_INTERP_UB && l.steps > (step_limit ? step_limit : ER_INTERP_DEFAULT_STEP_LIMIT))
                fprintf(stderr, "exactref interp: a kernel that needs more iterations runs with --step-limit N\n");
            else if (l.kind == ER_INTERP_UB && l.work > (work_limit ? work_limit : ER_INTERP_DEFAULT_WORK_LIMIT))
                fprintf(stderr, "exactref interp: a kernel that needs more operations runs with --work-limit N\n");
            else if (l.kind == ER_INTERP_BAD_LAUNCH && strstr(msg, "work limit"))
                fprintf(stderr, "exactref interp: a larger grid runs with --work-limit N\n");
            rc = l.kind == ER_INTERP_UB || l.kind == ER_INTERP_UNDECIDED ? ER_EXIT_FAIL : l.kind == ER_INTERP_INTERNAL ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
            goto out;
        }
    }
    fflush(stdout);
    /* a file size limit (ulimit -f) must fail the write (EFBIG, exit 3, no temporary left), not kill
     * the process with SIGXFSZ: main ignores it for every command, and so does this one, to be sure */
    if (outdir) {
        signal(SIGXFSZ, SIG_IGN);
        if ((rc = make_outdir(outdir)) == 0) rc = write_outputs(outdir, m, kernel, bufs, ib, nb);
        if (rc == 0) rc = write_list_outputs(outdir, xb, xib, nx);
    }
    if (rc == ER_EXIT_OK && bres) rc = bounds_outputs(m, kernel, bufs, nb, xb, nx, bres, checkdir, boundsdir, jsonpath, standard);
out:
    er_interp_bounds_free(bres);
    if (bufs)
        for (i = 0; i < nb; i++) free_buffer(&bufs[i]);
    for (i = 0; i < nx; i++) {
        free((void *)xb[i].b.path);
        free_buffer(&xb[i].b);
    }
    free(xb);
    free(xib);
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
    "                    [--no-ub-checks] [--step-limit N] [--work-limit N] [--cutile] ARGS...\n"
    "    exactref interp KERNEL.mlir --check-unsupported [--kernel NAME]\n"
    "    exactref interp KERNEL.mlir [--check DIR] [--bounds DIR] [--standard S] [--ulps OP=N]...\n"
    "                    [--json FILE] [other options] ARGS...       (bounds mode)\n"
    "\n"
    "DESCRIPTION\n"
    "    Parses the module (the cuda_tile dialect's MLIR text form; a .tileirbc bytecode file is first\n"
    "    printed as text by tileirdisasm, from PyPI nvidia-cuda-tileiras: $EXACTREF_TILEIRDISASM, else on\n"
    "    PATH, else under site-packages/nvidia/cu*/bin of the active python environment), and\n"
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
    "    must be exactly a value of E. A scalar is a decimal integer, a decimal or hexadecimal float\n"
    "    (0x1.8p3) that is exactly a value of its type, or a 0x bit pattern: one rule for every format,\n"
    "    so 0.1 is refused for f64 as for f32, and so are 1e999 and 1e-400. A pointer to i64 also takes\n"
    "    list:[FMT:]a.npy,b.npy,... (cuTile's list of arrays): the arrays (format FMT, else their native\n"
    "    dtype) and a table of their addresses, shapes and strides, which the pointer receives; with\n"
    "    --cutile the list's length fills the next integer parameter.\n"
    "\n"
    "    Output: the captured print_tko text, then one line per launch, the kernel's name and 'ok' or\n"
    "    the refusal's kind (interp.unsupported_op, interp.ub, interp.bad_launch, interp.internal,\n"
    "    interp.undecided in bounds mode); a\n"
    "    refusal's message, naming the operation and its line:column, goes to standard error. The\n"
    "    print_tko text is kept up to 1 MiB, then cut at a whole line with a line saying so.\n"
    "    Regions nest at most 64 deep. Each option may be given once.\n"
    "\n"
    "OPTIONS\n"
    "    --kernel NAME, -k NAME   the entry to run (with or without '@')\n"
    "    --grid X[,Y[,Z]]         blocks per axis, 1 to 16777215 (the dialect's limit; default 1;\n"
    "                             missing axes 1)\n"
    "    -o DIR                   write each buffer a store reached as DIR/PARAM.npy (the input's shape;\n"
    "                             native dtypes, raw patterns for bf16 and the 8-bit and narrower\n"
    "                             formats) under the output rules of every command (a file replaced\n"
    "                             atomically with its mode kept, a symbolic link's target replaced, a\n"
    "                             FIFO written in place); an output that is an input is refused before\n"
    "                             the run; nothing is written on a refusal; a write that fails is exit 3;\n"
    "                             a missing DIR is made after the run succeeds; a list's arrays are\n"
    "                             written as DIR/PARAM.K.npy\n"
    "    --no-ub-checks           do not refuse undefined behaviour: an undefined lane reads NaN (0 for\n"
    "                             integers and formats without NaN) and the run goes on\n"
    "    --step-limit N           the most loop iterations of one launch (default 2^24, some seconds);\n"
    "                             past it the launch is refused as interp.ub\n"
    "    --work-limit N           the most operations one launch executes, all blocks together, each\n"
    "                             block counting one more (default 2^28); past it interp.ub, and a grid\n"
    "                             of more blocks is refused before it runs (interp.bad_launch)\n"
    "    --check-unsupported      only the pre-check: the first operation or format not modelled\n"
    "    --cutile                 cuTile's calling convention: after each .npy argument, that array's shape\n"
    "                             and then its strides (in elements, C order) fill the next 2 x ndim\n"
    "                             integer parameters, which are then not given on the command line\n"
    "\n"
    "BOUNDS MODE\n"
    "    Any of the options below runs the kernel in bounds mode (docs/interp.md, \"Bounds mode\"): beside\n"
    "    the interpreter's own run, every float value is an enclosure of what any correct device can hold\n"
    "    (mmaf through the standard's bounds, reduce and scan in any order, rounding<approx> and\n"
    "    rounding<full> and exp2 within the device instruction's documented error, flush_to_zero either\n"
    "    way, a float atomic add and old + v stored under a spin lock as sums in any order of the blocks;\n"
    "    any other critical section is refused as interp.unsupported_op); every integer, pointer, mask\n"
    "    and branch must be decided, else interp.undecided (exit 1).\n"
    "    --check DIR              judge the device's buffers: DIR/PARAM.npy for each pointer parameter,\n"
    "                             DIR/PARAM.K.npy for each array of a list (the files -o writes; missing\n"
    "                             ones and other files are skipped), each reported as `exactref check`\n"
    "                             reports; exit 0 all covered, 1 some outside\n"
    "    --bounds DIR             write DIR/PARAM.lo.npy and DIR/PARAM.hi.npy (float64) per float buffer\n"
    "                             (a list's arrays: DIR/PARAM.K.lo.npy, DIR/PARAM.K.hi.npy)\n"
    "    --standard S             the accumulation standard of mmaf and mmaf_scaled (default normal; any\n"
    "                             name `exactref check --standard list` prints; fast_acc: hopper-fp8)\n"
    "    --ulps OP=N              the maximum error of an approximate instruction in ulps of its result,\n"
    "                             OP one of exp2, exp, divf, rsqrt, sqrt, tanh (once each)\n"
    "    --json FILE              with --check: the reports as JSON\n"
    "\n"
    "EXIT STATUS\n"
    "    0  the kernel ran\n"
    "    1  the kernel reached undefined behaviour (interp.ub); bounds mode: a decision depends on the\n"
    "       device (interp.undecided), or --check found device elements outside\n"
    "    2  bad usage or input, a parse error (file:line:column and what was expected), a bad launch,\n"
    "       or an unsupported operation or format\n"
    "    3  an internal error (interp.internal), out of memory (reading or parsing included), or an\n"
    "       output that could not be written (the message names the file)\n";
