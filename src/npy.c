/* npy.c: NumPy .npy files: a strict reader, an atomic writer, and conversions to and from tensors. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "exactref/exactref.h"
#include "exactref/npy.h"

/* ---- Messages. ---- */

static void er_msg_(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (!msg || size == 0) return;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

static void er_msg_ok_(char *msg, size_t size)
{
    if (msg && size) msg[0] = '\0';
}

/* strerror into a local buffer (the XSI strerror_r: thread-safe). */
static const char *er_errstr_(int err, char *buf, size_t size)
{
    if (strerror_r(err, buf, size) != 0) snprintf(buf, size, "error %d", err);
    return buf;
}

/* A shape as Python writes it: "()", "(3,)", "(3, 4)". */
static void er_shape_str_(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t n = 0;
    int i;
    if (size == 0) return;
    buf[0] = '\0';
    n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "(");
    for (i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (n < size) snprintf(buf + n, size - n, ndim == 1 ? ",)" : ")");
}

/* An element index as "[i, j]" or "[b, i, j]" (general: row-major over ndim dims). */
static void er_index_str_(int ndim, const int64_t *shape, uint64_t k, char *buf, size_t size)
{
    uint64_t idx[ER_NPY_MAX_DIMS];
    size_t n = 0;
    int d;
    for (d = ndim - 1; d >= 0; d--) {
        uint64_t s = (uint64_t)shape[d];
        idx[d] = s ? k % s : 0;
        k = s ? k / s : 0;
    }
    buf[0] = '\0';
    n += (size_t)snprintf(buf, size, "[");
    for (d = 0; d < ndim && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, d ? ", %llu" : "%llu", (unsigned long long)idx[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

/* ---- Dtypes. ---- */

typedef struct er_dtype_ {
    const char *descr; /* normalised spelling */
    char kind;         /* 'f', 'i' or 'u' */
    int size;
    int fmt;           /* the format its elements are (floats, and the default for integers); -1 none */
} er_dtype_;

static const er_dtype_ er_dtypes_[] = {
    {"<f8", 'f', 8, ER_FMT_F64}, {"<f4", 'f', 4, ER_FMT_F32}, {"<f2", 'f', 2, ER_FMT_F16},
    {"|i1", 'i', 1, ER_FMT_I8},  {"|u1", 'u', 1, ER_FMT_U8},  {"<i2", 'i', 2, ER_FMT_I16},
    {"<u2", 'u', 2, -1},         {"<i4", 'i', 4, ER_FMT_I32}, {"<u4", 'u', 4, -1},
    {"<i8", 'i', 8, ER_FMT_I64},
};
#define ER_NDTYPES_ ((int)(sizeof er_dtypes_ / sizeof er_dtypes_[0]))
#define ER_DTYPE_LIST_ "'<f8' '<f4' '<f2' '|i1' '|u1' '<i2' '<u2' '<i4' '<u4' '<i8'"

static int er_host_little_(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* The dtype of a descr string of length len (not NUL-terminated); NULL with a reason in why. */
static const er_dtype_ *er_dtype_find_(const char *s, size_t len, char *why, size_t why_size)
{
    char shown[24];
    size_t i;
    int k;
    for (i = 0; i < len && i < sizeof shown - 4; i++)
        shown[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (i < len) shown[i++] = '.', shown[i++] = '.', shown[i++] = '.';
    shown[i] = '\0';
    if (len == 3) {
        for (k = 0; k < ER_NDTYPES_; k++) {
            const er_dtype_ *d = &er_dtypes_[k];
            if (s[1] != d->descr[1] || s[2] != d->descr[2]) continue;
            if (s[0] == '>' || (s[0] == '=' && !er_host_little_())) {
                er_msg_(why, why_size,
                        "big-endian dtype '%s' is not supported; convert with arr.astype('%s')", shown,
                        d->descr);
                return NULL;
            }
            if (s[0] == '<' || s[0] == '=' || (s[0] == '|' && d->size == 1)) return d;
            er_msg_(why, why_size, "dtype '%s' has a byte order that is not valid for it", shown);
            return NULL;
        }
    }
    er_msg_(why, why_size, "unsupported dtype '%s' (supported: " ER_DTYPE_LIST_ ")", shown);
    return NULL;
}

/* ---- Little-endian element access (host independent). ---- */

static uint64_t er_load_le_(const unsigned char *p, int size)
{
    uint64_t v = 0;
    int i;
    for (i = size - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void er_store_le_(unsigned char *p, int size, uint64_t v)
{
    int i;
    for (i = 0; i < size; i++, v >>= 8) p[i] = (unsigned char)(v & 0xffu);
}

/* ---- Sizes. ---- */

/* The element count of a shape, or -1 when a dimension is negative, -2 when it is huge. */
static int64_t er_count_(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    int i, zero = 0;
    for (i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        if (shape[i] > ER_NPY_MAX_ELEMENTS) return -2;
        if (shape[i] == 0) zero = 1;
    }
    if (zero) return 0;
    for (i = 0; i < ndim; i++) {
        if (shape[i] > ER_NPY_MAX_ELEMENTS / n) return -2;
        n *= shape[i];
    }
    return n;
}

/* Check a shape and give its byte count; a message names `name` and the problem. */
static er_status er_shape_bytes_(const char *name, int ndim, const int64_t *shape, size_t itemsize,
                                 size_t *nbytes, char *msg, size_t msg_size)
{
    char sh[256];
    int64_t n = er_count_(ndim, shape);
    int i;
    if (n == -1) {
        for (i = 0; i < ndim && shape[i] >= 0; i++) {}
        er_msg_(msg, msg_size, "%s: negative dimension %lld in the shape", name,
                (long long)(i < ndim ? shape[i] : 0));
        return ER_EINVAL;
    }
    er_shape_str_(ndim, shape, sh, sizeof sh);
    if (n == -2) {
        er_msg_(msg, msg_size, "%s: huge dimensions: the shape %s has more than 2^40 elements", name, sh);
        return ER_EINVAL;
    }
    if ((uint64_t)n > (uint64_t)(SIZE_MAX / itemsize)) {
        er_msg_(msg, msg_size, "%s: huge dimensions: the %s bytes of the shape %s do not fit in size_t",
                name, "data", sh);
        return ER_EINVAL;
    }
    *nbytes = (size_t)n * itemsize;
    return ER_OK;
}

/* ---- The preamble: magic, version, header length. ---- */

/* pre holds the first pre_len = min(file_len, 12) bytes.  Gives where the header starts and its length,
 * checked to lie inside the file. */
static er_status er_preamble_(const unsigned char *pre, size_t pre_len, uint64_t file_len, const char *name,
                              size_t *hstart, size_t *hlen, char *msg, size_t msg_size)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    uint64_t len;
    if (file_len == 0) {
        er_msg_(msg, msg_size, "%s: empty file (not a .npy file)", name);
        return ER_EINVAL;
    }
    if (pre_len < 6 || memcmp(pre, magic, 6) != 0) {
        er_msg_(msg, msg_size, "%s: bad magic: not a .npy file (it must start with \"\\x93NUMPY\")", name);
        return ER_EINVAL;
    }
    if (pre_len < 8) {
        er_msg_(msg, msg_size, "%s: truncated: the file ends inside the version bytes", name);
        return ER_EINVAL;
    }
    if (!((pre[6] == 1 || pre[6] == 2 || pre[6] == 3) && pre[7] == 0)) {
        er_msg_(msg, msg_size, "%s: unsupported .npy format version %u.%u (supported: 1.0, 2.0, 3.0)", name,
                (unsigned)pre[6], (unsigned)pre[7]);
        return ER_EINVAL;
    }
    *hstart = pre[6] == 1 ? 10 : 12;
    if (pre_len < *hstart) {
        er_msg_(msg, msg_size, "%s: truncated: the file ends inside the header length bytes", name);
        return ER_EINVAL;
    }
    len = pre[6] == 1 ? er_load_le_(pre + 8, 2) : er_load_le_(pre + 8, 4);
    if (len > file_len - *hstart) {
        er_msg_(msg, msg_size,
                "%s: header length %llu goes beyond the end of the file (%llu bytes after the %u-byte "
                "preamble)",
                name, (unsigned long long)len, (unsigned long long)(file_len - *hstart),
                (unsigned)*hstart);
        return ER_EINVAL;
    }
    *hlen = (size_t)len;
    return ER_OK;
}

/* ---- The header dict: {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } ---- */

typedef struct er_hp_ {
    const char *s;
    size_t n, i;
    const char *name;
    char *msg;
    size_t msg_size;
} er_hp_;

static void er_hp_ws_(er_hp_ *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                           p->s[p->i] == '\r'))
        p->i++;
}

static er_status er_hp_err_(er_hp_ *p, const char *what)
{
    char near[24];
    size_t k;
    for (k = 0; k < sizeof near - 1 && p->i + k < p->n; k++) {
        char c = p->s[p->i + k];
        near[k] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    while (k > 0 && near[k - 1] == ' ') k--;
    near[k] = '\0';
    if (p->i >= p->n)
        er_msg_(p->msg, p->msg_size, "%s: bad header syntax: %s, found the end of the header", p->name, what);
    else
        er_msg_(p->msg, p->msg_size, "%s: bad header syntax at byte %zu of the header: %s, found \"%s\"",
                p->name, p->i, what, near);
    return ER_EINVAL;
}

static er_status er_hp_dup_(er_hp_ *p, const char *key)
{
    er_msg_(p->msg, p->msg_size, "%s: bad header: the key '%s' appears twice", p->name, key);
    return ER_EINVAL;
}

/* A quoted string (single or double quotes, no escapes): its start and length. */
static er_status er_hp_string_(er_hp_ *p, const char **str, size_t *len, const char *what)
{
    char q;
    size_t start;
    if (p->i >= p->n || (p->s[p->i] != '\'' && p->s[p->i] != '"')) return er_hp_err_(p, what);
    q = p->s[p->i++];
    start = p->i;
    while (p->i < p->n && p->s[p->i] != q) {
        if (p->s[p->i] == '\\') return er_hp_err_(p, "a string without escapes");
        if (p->s[p->i] == '\n' || p->s[p->i] == '\0') return er_hp_err_(p, "the closing quote of a string");
        p->i++;
    }
    if (p->i >= p->n) return er_hp_err_(p, "the closing quote of a string");
    *str = p->s + start;
    *len = p->i - start;
    p->i++;
    return ER_OK;
}

static int er_hp_word_(er_hp_ *p, const char *w)
{
    size_t k = strlen(w);
    if (p->n - p->i >= k && memcmp(p->s + p->i, w, k) == 0 &&
        (p->i + k == p->n || !((p->s[p->i + k] >= 'A' && p->s[p->i + k] <= 'Z') ||
                               (p->s[p->i + k] >= 'a' && p->s[p->i + k] <= 'z') ||
                               (p->s[p->i + k] >= '0' && p->s[p->i + k] <= '9') || p->s[p->i + k] == '_'))) {
        p->i += k;
        return 1;
    }
    return 0;
}

/* A shape tuple: "()", "(3,)", "(3, 4)", "(3, 4,)"; Python 2's "3L" is accepted. */
static er_status er_hp_shape_(er_hp_ *p, int *ndim, int64_t *shape)
{
    int n = 0, trailing_comma = 0;
    if (p->i >= p->n || p->s[p->i] != '(') return er_hp_err_(p, "a tuple '(' for 'shape'");
    p->i++;
    for (;;) {
        uint64_t v = 0;
        int neg = 0, digits = 0, huge = 0;
        er_hp_ws_(p);
        if (p->i < p->n && p->s[p->i] == ')') break;
        if (p->i < p->n && p->s[p->i] == '-') neg = 1, p->i++;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
            if (v > (uint64_t)ER_NPY_MAX_ELEMENTS) huge = 1;
            else v = v * 10u + (uint64_t)(p->s[p->i] - '0');
            digits++;
            p->i++;
        }
        if (!digits) return er_hp_err_(p, "an integer dimension in 'shape'");
        if (p->i < p->n && (p->s[p->i] == 'L' || p->s[p->i] == 'l')) p->i++;
        if (n == ER_NPY_MAX_DIMS) {
            er_msg_(p->msg, p->msg_size, "%s: the shape has more than %d dimensions", p->name, ER_NPY_MAX_DIMS);
            return ER_EINVAL;
        }
        if (neg && (v != 0 || huge)) {
            if (huge || v > (uint64_t)ER_NPY_MAX_ELEMENTS)
                er_msg_(p->msg, p->msg_size, "%s: negative dimension (huge) in the shape", p->name);
            else
                er_msg_(p->msg, p->msg_size, "%s: negative dimension -%llu in the shape", p->name,
                        (unsigned long long)v);
            return ER_EINVAL;
        }
        if (huge || v > (uint64_t)ER_NPY_MAX_ELEMENTS) {
            er_msg_(p->msg, p->msg_size,
                    "%s: huge dimensions: dimension %d of the shape exceeds 2^40 elements", p->name, n);
            return ER_EINVAL;
        }
        shape[n++] = (int64_t)v;
        trailing_comma = 0;
        er_hp_ws_(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            trailing_comma = 1;
            continue;
        }
        er_hp_ws_(p);
        if (p->i < p->n && p->s[p->i] == ')') break;
        return er_hp_err_(p, "',' or ')' in 'shape'");
    }
    p->i++; /* ')' */
    if (n == 1 && !trailing_comma) {
        er_msg_(p->msg, p->msg_size, "%s: bad header: 'shape' is \"(%lld)\", an integer, not a tuple", p->name,
                (long long)shape[0]);
        return ER_EINVAL;
    }
    *ndim = n;
    return ER_OK;
}

static er_status er_header_(const char *h, size_t hlen, const char *name, er_npy *out, char *msg,
                            size_t msg_size)
{
    er_hp_ p;
    int seen_descr = 0, seen_fortran = 0, seen_shape = 0, fortran = 0;
    const er_dtype_ *dt = NULL;
    er_status st;
    p.s = h;
    p.n = hlen;
    p.i = 0;
    p.name = name;
    p.msg = msg;
    p.msg_size = msg_size;
    er_hp_ws_(&p);
    if (p.i >= p.n || h[p.i] != '{') {
        char near[32];
        size_t k;
        for (k = 0; k < sizeof near - 1 && p.i + k < p.n; k++)
            near[k] = h[p.i + k] >= 0x20 && h[p.i + k] < 0x7f ? h[p.i + k] : '?';
        while (k > 0 && near[k - 1] == ' ') k--;
        near[k] = '\0';
        er_msg_(msg, msg_size, "%s: the header is not a dict literal (it must start with '{'): \"%s\"", name,
                near);
        return ER_EINVAL;
    }
    p.i++;
    for (;;) {
        const char *key;
        size_t klen;
        er_hp_ws_(&p);
        if (p.i < p.n && h[p.i] == '}') break;
        if ((st = er_hp_string_(&p, &key, &klen, "a quoted key or '}'")) != ER_OK) return st;
        er_hp_ws_(&p);
        if (p.i >= p.n || h[p.i] != ':') return er_hp_err_(&p, "':' after a key");
        p.i++;
        er_hp_ws_(&p);
        if (klen == 5 && memcmp(key, "descr", 5) == 0) {
            const char *d;
            size_t dlen;
            char why[192];
            if (seen_descr++) return er_hp_dup_(&p, "descr");
            if (p.i < p.n && h[p.i] == '[') {
                er_msg_(msg, msg_size, "%s: unsupported dtype: structured dtypes (a list descr) are not supported",
                        name);
                return ER_EINVAL;
            }
            if ((st = er_hp_string_(&p, &d, &dlen, "a quoted dtype string for 'descr'")) != ER_OK) return st;
            if (!(dt = er_dtype_find_(d, dlen, why, sizeof why))) {
                er_msg_(msg, msg_size, "%s: %s", name, why);
                return ER_EINVAL;
            }
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
            if (seen_fortran++) return er_hp_dup_(&p, "fortran_order");
            if (er_hp_word_(&p, "True")) fortran = 1;
            else if (er_hp_word_(&p, "False")) fortran = 0;
            else return er_hp_err_(&p, "True or False for 'fortran_order'");
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
            if (seen_shape++) return er_hp_dup_(&p, "shape");
            if ((st = er_hp_shape_(&p, &out->ndim, out->shape)) != ER_OK) return st;
        } else {
            char k[24];
            size_t j;
            for (j = 0; j < klen && j < sizeof k - 1; j++) k[j] = key[j] >= 0x20 && key[j] < 0x7f ? key[j] : '?';
            k[j] = '\0';
            er_msg_(msg, msg_size, "%s: bad header: unexpected key '%s' (the keys are 'descr', 'fortran_order', "
                    "'shape')", name, k);
            return ER_EINVAL;
        }
        er_hp_ws_(&p);
        if (p.i < p.n && h[p.i] == ',') {
            p.i++;
            continue;
        }
        er_hp_ws_(&p);
        if (p.i < p.n && h[p.i] == '}') break;
        return er_hp_err_(&p, "',' or '}' after a value");
    }
    p.i++; /* '}' */
    er_hp_ws_(&p);
    if (p.i != p.n) return er_hp_err_(&p, "only spaces and a newline after the header dict");
    if (!seen_descr || !seen_fortran || !seen_shape) {
        er_msg_(msg, msg_size, "%s: bad header: the dict is missing the key '%s'", name,
                !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape");
        return ER_EINVAL;
    }
    if (fortran) {
        er_msg_(msg, msg_size, "%s: Fortran-order arrays are not supported; use np.ascontiguousarray", name);
        return ER_EINVAL;
    }
    snprintf(out->descr, sizeof out->descr, "%s", dt->descr);
    out->itemsize = (size_t)dt->size;
    return er_shape_bytes_(name, out->ndim, out->shape, out->itemsize, &out->nbytes, msg, msg_size);
}

/* The data after the header: exactly nbytes of them. */
static er_status er_data_len_(const er_npy *a, uint64_t avail, const char *name, char *msg, size_t msg_size)
{
    char sh[256];
    if (avail == (uint64_t)a->nbytes) return ER_OK;
    er_shape_str_(a->ndim, a->shape, sh, sizeof sh);
    if (avail < (uint64_t)a->nbytes)
        er_msg_(msg, msg_size,
                "%s: truncated: the shape %s of '%s' needs %llu bytes of data after the header, the file has "
                "only %llu",
                name, sh, a->descr, (unsigned long long)a->nbytes, (unsigned long long)avail);
    else
        er_msg_(msg, msg_size,
                "%s: trailing bytes: %llu bytes after the %llu bytes of data that the shape %s of '%s' needs",
                name, (unsigned long long)(avail - a->nbytes), (unsigned long long)a->nbytes, sh, a->descr);
    return ER_EINVAL;
}

/* ---- Reading. ---- */

void er_npy_free(er_npy *a)
{
    if (!a) return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

er_status er_npy_parse(const void *buf, size_t len, const char *name, er_npy *out, char *msg, size_t msg_size)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t hstart, hlen, off;
    er_status st;
    if (!name) name = "<memory>";
    if (!out || (!buf && len)) {
        er_msg_(msg, msg_size, "%s: er_npy_parse: null argument", name);
        return ER_EINVAL;
    }
    memset(out, 0, sizeof *out);
    if ((st = er_preamble_(b, len < 12 ? len : 12, len, name, &hstart, &hlen, msg, msg_size)) != ER_OK)
        return st;
    if ((st = er_header_((const char *)b + hstart, hlen, name, out, msg, msg_size)) != ER_OK) goto fail;
    off = hstart + hlen;
    if ((st = er_data_len_(out, (uint64_t)(len - off), name, msg, msg_size)) != ER_OK) goto fail;
    if (!(out->data = malloc(out->nbytes ? out->nbytes : 1))) {
        er_msg_(msg, msg_size, "%s: out of memory for %zu bytes of data", name, out->nbytes);
        st = ER_ENOMEM;
        goto fail;
    }
    if (out->nbytes) memcpy(out->data, b + off, out->nbytes);
    er_msg_ok_(msg, msg_size);
    return ER_OK;
fail:
    memset(out, 0, sizeof *out);
    return st;
}

/* Read exactly n bytes (fewer only at the end of the file): the count read, or -1 with errno. */
static long long er_read_full_(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got > (size_t)1 << 30 ? (size_t)1 << 30 : n - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (long long)got;
}

er_status er_npy_read(const char *path, er_npy *out, char *msg, size_t msg_size)
{
    unsigned char pre[12];
    char eb[128];
    char *header = NULL;
    struct stat sb;
    uint64_t flen;
    size_t hstart, hlen, pre_len;
    long long got;
    er_status st = ER_EINVAL;
    int fd;
    if (!path || !out) {
        er_msg_(msg, msg_size, "er_npy_read: null argument");
        if (out) memset(out, 0, sizeof *out);
        return ER_EINVAL;
    }
    memset(out, 0, sizeof *out);
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        er_msg_(msg, msg_size, "%s: cannot open the file: %s", path, er_errstr_(errno, eb, sizeof eb));
        return ER_EINVAL;
    }
    if (fstat(fd, &sb) != 0) {
        er_msg_(msg, msg_size, "%s: cannot read the file: %s", path, er_errstr_(errno, eb, sizeof eb));
        goto fail;
    }
    if (S_ISDIR(sb.st_mode)) {
        er_msg_(msg, msg_size, "%s: cannot read the file: it is a directory", path);
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        er_msg_(msg, msg_size, "%s: cannot read the file: not a regular file", path);
        goto fail;
    }
    flen = (uint64_t)sb.st_size;
    pre_len = flen < 12 ? (size_t)flen : 12;
    if ((got = er_read_full_(fd, pre, pre_len)) < 0) {
        er_msg_(msg, msg_size, "%s: cannot read the file: %s", path, er_errstr_(errno, eb, sizeof eb));
        goto fail;
    }
    if ((size_t)got < pre_len) flen = (uint64_t)got, pre_len = (size_t)got; /* it shrank */
    if ((st = er_preamble_(pre, pre_len, flen, path, &hstart, &hlen, msg, msg_size)) != ER_OK) goto fail;
    st = ER_EINVAL;
    /* hlen <= flen - hstart: checked against the file before this allocation. */
    if (!(header = malloc(hlen ? hlen : 1))) {
        er_msg_(msg, msg_size, "%s: out of memory for a %zu-byte header", path, hlen);
        st = ER_ENOMEM;
        goto fail;
    }
    if (lseek(fd, (off_t)hstart, SEEK_SET) < 0 || (got = er_read_full_(fd, header, hlen)) < 0) {
        er_msg_(msg, msg_size, "%s: cannot read the file: %s", path, er_errstr_(errno, eb, sizeof eb));
        goto fail;
    }
    if ((size_t)got < hlen) {
        er_msg_(msg, msg_size, "%s: truncated: the file ends inside the header", path);
        goto fail;
    }
    if ((st = er_header_(header, hlen, path, out, msg, msg_size)) != ER_OK) goto fail;
    st = ER_EINVAL;
    free(header);
    header = NULL;
    if ((st = er_data_len_(out, flen - hstart - hlen, path, msg, msg_size)) != ER_OK) goto fail;
    /* nbytes equals what the file holds after the header: a checked size. */
    if (!(out->data = malloc(out->nbytes ? out->nbytes : 1))) {
        er_msg_(msg, msg_size, "%s: out of memory for %zu bytes of data", path, out->nbytes);
        st = ER_ENOMEM;
        goto fail;
    }
    if ((got = er_read_full_(fd, out->data, out->nbytes)) < 0) {
        er_msg_(msg, msg_size, "%s: cannot read the file: %s", path, er_errstr_(errno, eb, sizeof eb));
        st = ER_EINVAL;
        goto fail;
    }
    if ((size_t)got < out->nbytes) {
        er_msg_(msg, msg_size, "%s: truncated: the file ended after %lld of %zu bytes of data", path, got,
                out->nbytes);
        st = ER_EINVAL;
        goto fail;
    }
    close(fd);
    er_msg_ok_(msg, msg_size);
    return ER_OK;
fail:
    free(header);
    free(out->data);
    memset(out, 0, sizeof *out);
    close(fd);
    return st;
}

/* ---- Writing. ---- */

static er_status er_write_all_(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done > (size_t)1 << 30 ? (size_t)1 << 30 : n - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            return ER_EINVAL;
        }
        if (w == 0) {
            errno = EIO;
            return ER_EINVAL;
        }
        done += (size_t)w;
    }
    return ER_OK;
}

/* Write header and data to a temporary file next to path, fsync it and rename it over path. */
static er_status er_atomic_write_(const char *path, const char *header, size_t hsize, const void *data,
                                  size_t nbytes, char *msg, size_t msg_size)
{
    char eb[128];
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 64);
    const char *slash;
    int fd = -1, attempt, err;
    if (!tmp) {
        er_msg_(msg, msg_size, "%s: out of memory", path);
        return ER_ENOMEM;
    }
    for (attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(tmp, plen + 64, "%s.tmp-%ld-%lx-%d", path, (long)getpid(),
                 (unsigned long)ts.tv_nsec ^ (unsigned long)(size_t)&ts, attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) {
        er_msg_(msg, msg_size, "%s: cannot create a temporary file next to it: %s", path,
                er_errstr_(errno, eb, sizeof eb));
        free(tmp);
        return ER_EINVAL;
    }
    if (er_write_all_(fd, header, hsize) != ER_OK || (nbytes && er_write_all_(fd, data, nbytes) != ER_OK)) {
        err = errno;
        er_msg_(msg, msg_size, "%s: cannot write the file: %s", path, er_errstr_(err, eb, sizeof eb));
        goto fail;
    }
    if (fsync(fd) != 0) {
        err = errno;
        er_msg_(msg, msg_size, "%s: cannot write the file (fsync): %s", path, er_errstr_(err, eb, sizeof eb));
        goto fail;
    }
    err = close(fd) != 0 ? errno : 0;
    fd = -1;
    if (err) {
        er_msg_(msg, msg_size, "%s: cannot write the file (close): %s", path, er_errstr_(err, eb, sizeof eb));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        err = errno;
        er_msg_(msg, msg_size, "%s: cannot write the file (rename): %s", path, er_errstr_(err, eb, sizeof eb));
        goto fail;
    }
    /* Make the rename durable: fsync the directory (best effort). */
    slash = strrchr(path, '/');
    if (slash) {
        size_t dl = (size_t)(slash - path);
        memcpy(tmp, path, dl ? dl : 1);
        tmp[dl ? dl : 1] = '\0';
    } else {
        strcpy(tmp, ".");
    }
    if ((fd = open(tmp, O_RDONLY)) >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(tmp);
    er_msg_ok_(msg, msg_size);
    return ER_OK;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
    free(tmp);
    return ER_EINVAL;
}

/* The version 1.0 header of an array: magic, version, length, the dict padded to 64 bytes. */
static size_t er_make_header_(char *buf, size_t size, const char *descr, int ndim, const int64_t *shape)
{
    char sh[256];
    int n;
    size_t total, dict;
    er_shape_str_(ndim, shape, sh, sizeof sh);
    n = snprintf(buf + 10, size - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, sh);
    dict = (size_t)n;
    total = (10 + dict + 1 + 63) / 64 * 64;
    memset(buf + 10 + dict, ' ', total - 10 - dict - 1);
    buf[total - 1] = '\n';
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)((total - 10) & 0xff);
    buf[9] = (char)((total - 10) >> 8);
    return total;
}

er_status er_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data,
                       char *msg, size_t msg_size)
{
    char header[512], why[192];
    const er_dtype_ *dt;
    size_t nbytes, hsize;
    er_status st;
    if (!path || !*path || !descr || ndim < 0 || ndim > ER_NPY_MAX_DIMS || (ndim && !shape)) {
        er_msg_(msg, msg_size, "%s: er_npy_write: invalid argument (%s)", path ? path : "(null)",
                !path || !*path ? "no path" : !descr ? "no dtype" : ndim < 0 || ndim > 8 ? "ndim not 0..8" : "no shape");
        return ER_EINVAL;
    }
    if (!(dt = er_dtype_find_(descr, strlen(descr), why, sizeof why))) {
        er_msg_(msg, msg_size, "%s: %s", path, why);
        return ER_EINVAL;
    }
    if ((st = er_shape_bytes_(path, ndim, shape, (size_t)dt->size, &nbytes, msg, msg_size)) != ER_OK) return st;
    if (nbytes && !data) {
        er_msg_(msg, msg_size, "%s: er_npy_write: no data for a non-empty array", path);
        return ER_EINVAL;
    }
    hsize = er_make_header_(header, sizeof header, dt->descr, ndim, shape);
    return er_atomic_write_(path, header, hsize, data, nbytes, msg, msg_size);
}

/* ---- Arrays and tensors. ---- */

static int er_storage_bytes_(int fmt)
{
    er_format_info fi;
    if (er_format_get_info(fmt, &fi) != ER_OK) return 0;
    return fi.storage_bytes;
}

/* How the elements of an array are read. */
#define ER_MODE_VALUES 0 /* float values */
#define ER_MODE_RAW 1    /* raw bit patterns */
#define ER_MODE_INTS 2   /* integers */

/* The first bad element's message: "NAME: element [i, j] = VALUE PROBLEM". */
static void er_elem_msg_(char *msg, size_t msg_size, const char *name, const er_npy *a, uint64_t k,
                         const char *value, const char *problem)
{
    char idx[192];
    er_index_str_(a->ndim, a->shape, k, idx, sizeof idx);
    er_msg_(msg, msg_size, "%s: element %s = %s %s", name, idx, value, problem);
}

er_status er_npy_to_tensor(const er_npy *a, const char *name, int declared, er_tensor *t, void **storage,
                           char *msg, size_t msg_size)
{
    const er_dtype_ *dt = NULL;
    er_format_info fi;
    char why[192], sh[256];
    int fmt, mode, sb, k;
    size_t nbytes;
    uint64_t n, e;
    unsigned char *dst;
    const unsigned char *src;
    if (!name) name = "<array>";
    if (!a || !t || !storage) {
        er_msg_(msg, msg_size, "%s: er_npy_to_tensor: null argument", name);
        return ER_EINVAL;
    }
    *storage = NULL;
    if (a->ndim < 0 || a->ndim > ER_NPY_MAX_DIMS) {
        er_msg_(msg, msg_size, "%s: invalid array: %d dimensions", name, a->ndim);
        return ER_EINVAL;
    }
    er_shape_str_(a->ndim, a->shape, sh, sizeof sh);
    if (a->ndim != 2 && a->ndim != 3) {
        er_msg_(msg, msg_size, "%s: a tensor must be 2-D or 3-D; this array is %d-D with shape %s", name, a->ndim,
                sh);
        return ER_EINVAL;
    }
    if (!memchr(a->descr, '\0', sizeof a->descr)) {
        er_msg_(msg, msg_size, "%s: invalid array: descr is not a string", name);
        return ER_EINVAL;
    }
    if (!(dt = er_dtype_find_(a->descr, strlen(a->descr), why, sizeof why))) {
        er_msg_(msg, msg_size, "%s: %s", name, why);
        return ER_EINVAL;
    }
    if (a->itemsize != (size_t)dt->size ||
        er_shape_bytes_(name, a->ndim, a->shape, a->itemsize, &nbytes, msg, msg_size) != ER_OK ||
        nbytes != a->nbytes || (nbytes && !a->data)) {
        er_msg_(msg, msg_size, "%s: invalid array: itemsize, shape %s, nbytes and data disagree", name, sh);
        return ER_EINVAL;
    }
    if (declared != -1 && er_format_get_info(declared, &fi) != ER_OK) {
        er_msg_(msg, msg_size, "%s: unknown format id %d", name, declared);
        return ER_EINVAL;
    }
    fmt = declared != -1 ? declared : dt->fmt;
    if (fmt < 0) {
        er_msg_(msg, msg_size, "%s: uint%d arrays hold raw patterns: declare their format", name, dt->size * 8);
        return ER_EINVAL;
    }
    er_format_get_info(fmt, &fi);
    sb = fi.storage_bytes;
    if (dt->kind == 'f')
        mode = ER_MODE_VALUES;
    else if (dt->kind == 'u' && fi.kind == ER_KIND_FLOAT && sb == dt->size)
        mode = ER_MODE_RAW;
    else if (dt->kind == 'u' && dt->size > 1 && fi.kind == ER_KIND_FLOAT) {
        er_msg_(msg, msg_size,
                "%s: a uint%d array holds raw patterns of %d-byte formats, and %s patterns take %d byte%s: "
                "store them as uint%d",
                name, dt->size * 8, dt->size, fi.name, sb, sb == 1 ? "" : "s", sb * 8);
        return ER_EINVAL;
    } else
        mode = ER_MODE_INTS;

    n = nbytes / (size_t)dt->size;
    if (n > SIZE_MAX / (size_t)sb) {
        er_msg_(msg, msg_size, "%s: huge dimensions for %s", name, fi.name);
        return ER_EINVAL;
    }
    if (!(dst = malloc(n ? (size_t)n * (size_t)sb : 1))) {
        er_msg_(msg, msg_size, "%s: out of memory for a %s tensor of shape %s", name, fi.name, sh);
        return ER_ENOMEM;
    }
    src = (const unsigned char *)a->data;
    for (e = 0; e < n; e++) {
        uint64_t s = er_load_le_(src + e * (uint64_t)dt->size, dt->size), out = 0;
        char val[160];
        if (mode == ER_MODE_VALUES) {
            unsigned fl = 0;
            if (dt->fmt == fmt || (dt->fmt == ER_FMT_F32 && fmt == ER_FMT_TF32 &&
                                   er_check_pattern(ER_FMT_TF32, s) == ER_OK)) {
                out = s;
            } else {
                er_convert_bits(dt->fmt, fmt, s, ER_RND_NEAREST_EVEN, 0u, &out, &fl);
                if (fl & (ER_FLAG_INEXACT | ER_FLAG_INVALID | ER_FLAG_OVERFLOW)) {
                    double x = 0.0;
                    er_val v;
                    const char *problem;
                    char pb[160];
                    er_from_bits(dt->fmt, s, &x);
                    er_decode_bits(dt->fmt, s, &v);
                    if (v.cls == ER_CLASS_NAN)
                        snprintf(pb, sizeof pb, "is NaN, and %s has no NaN", fi.name);
                    else if (v.cls == ER_CLASS_INF && fi.kind == ER_KIND_FLOAT)
                        snprintf(pb, sizeof pb, "is an infinity, and %s has no %sinfinity", fi.name,
                                 fi.has_inf ? "such " : "");
                    else if (fi.kind != ER_KIND_FLOAT)
                        snprintf(pb, sizeof pb, "is not an integer in the range of %s", fi.name);
                    else
                        snprintf(pb, sizeof pb, "is not exactly representable in %s", fi.name);
                    problem = pb;
                    snprintf(val, sizeof val, "%a (%.17g)", x, x);
                    er_elem_msg_(msg, msg_size, name, a, e, val, problem);
                    free(dst);
                    return ER_EINEXACT;
                }
            }
        } else if (mode == ER_MODE_RAW) {
            if (er_check_pattern(fmt, s) != ER_OK) {
                char pb[160];
                if (fi.width < 64 && (s >> fi.width) != 0)
                    snprintf(pb, sizeof pb, "is not a %s pattern: bits above its %d-bit width are set", fi.name,
                             fi.width);
                else
                    snprintf(pb, sizeof pb, "is not a %s pattern: its %d low padding bits must be zero", fi.name,
                             fi.padding_bits);
                snprintf(val, sizeof val, "0x%0*llx", dt->size * 2, (unsigned long long)s);
                er_elem_msg_(msg, msg_size, name, a, e, val, pb);
                free(dst);
                return ER_EPATTERN;
            }
            out = s;
        } else {
            /* An integer, sign-extended; unsigned sources are at most 32 bits, so int64 holds them. */
            int64_t v;
            int bad = 0;
            if (dt->kind == 'i' && dt->size < 8 && ((s >> (dt->size * 8 - 1)) & 1u))
                s |= ~UINT64_C(0) << (dt->size * 8);
            memcpy(&v, &s, sizeof v);
            if (fi.kind == ER_KIND_SINT) {
                int64_t lim = fi.width == 64 ? INT64_MAX : (INT64_C(1) << (fi.width - 1)) - 1;
                bad = v > lim || v < -lim - 1;
                out = (uint64_t)v & (fi.width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << fi.width) - 1u);
            } else if (fi.kind == ER_KIND_UINT) {
                bad = v < 0 || (fi.width < 64 && v > (int64_t)((UINT64_C(1) << fi.width) - 1u));
                out = (uint64_t)v;
            } else {
                unsigned fl = 0;
                er_convert_bits(ER_FMT_I64, fmt, (uint64_t)v, ER_RND_NEAREST_EVEN, 0u, &out, &fl);
                bad = (fl & (ER_FLAG_INEXACT | ER_FLAG_INVALID | ER_FLAG_OVERFLOW)) != 0;
            }
            if (bad) {
                char pb[160];
                if (fi.kind == ER_KIND_FLOAT)
                    snprintf(pb, sizeof pb, "is not exactly representable in %s", fi.name);
                else if (fi.kind == ER_KIND_SINT)
                    snprintf(pb, sizeof pb, "is outside the range of %s [%lld, %lld]", fi.name,
                             fi.width == 64 ? (long long)INT64_MIN : -(1LL << (fi.width - 1)),
                             fi.width == 64 ? (long long)INT64_MAX : (1LL << (fi.width - 1)) - 1);
                else
                    snprintf(pb, sizeof pb, "is outside the range of %s [0, %llu]", fi.name,
                             (unsigned long long)fi.max_finite_bits);
                snprintf(val, sizeof val, "%lld", (long long)v);
                er_elem_msg_(msg, msg_size, name, a, e, val, pb);
                free(dst);
                return ER_EINEXACT;
            }
        }
        er_store_le_(dst + e * (uint64_t)sb, sb, out);
    }
    memset(t, 0, sizeof *t);
    t->format = fmt;
    t->ndim = a->ndim;
    for (k = 0; k < a->ndim; k++) t->shape[k] = a->shape[k];
    t->strides[a->ndim - 1] = 1;
    for (k = a->ndim - 2; k >= 0; k--) {
        /* An empty array may have huge other dimensions: its strides are never used, and must not
         * overflow.  A non-empty one has at most 2^40 elements, so its strides cannot. */
        if (a->shape[k + 1] != 0 && t->strides[k + 1] > INT64_MAX / a->shape[k + 1])
            t->strides[k] = 0;
        else
            t->strides[k] = t->strides[k + 1] * a->shape[k + 1];
    }
    t->data = dst;
    *storage = dst;
    er_msg_ok_(msg, msg_size);
    return ER_OK;
}

er_status er_npy_write_tensor(const char *path, const er_tensor *t, char *msg, size_t msg_size)
{
    er_format_info fi;
    const char *descr;
    int64_t shape[3], strides[3], count;
    uint64_t max_off = 0, e = 0;
    unsigned char *buf;
    const unsigned char *src;
    size_t nbytes;
    int d, sb;
    er_status st;
    if (!path) path = "(null)";
    if (!t || er_format_get_info(t->format, &fi) != ER_OK || (t->ndim != 2 && t->ndim != 3)) {
        er_msg_(msg, msg_size, "%s: er_npy_write_tensor: %s", path,
                !t ? "null tensor" : (t->ndim != 2 && t->ndim != 3) ? "the tensor must be 2-D or 3-D" : "unknown format");
        return ER_EINVAL;
    }
    sb = fi.storage_bytes;
    switch (t->format) {
    case ER_FMT_F64: descr = "<f8"; break;
    case ER_FMT_F32: case ER_FMT_TF32: descr = "<f4"; break;
    case ER_FMT_F16: descr = "<f2"; break;
    case ER_FMT_I8: descr = "|i1"; break;
    case ER_FMT_U8: descr = "|u1"; break;
    case ER_FMT_I16: descr = "<i2"; break;
    case ER_FMT_I32: descr = "<i4"; break;
    case ER_FMT_I64: descr = "<i8"; break;
    default: descr = sb == 1 ? "|u1" : sb == 2 ? "<u2" : sb == 4 ? "<u4" : "<u8"; break;
    }
    for (d = 0; d < t->ndim; d++) {
        shape[d] = t->shape[d];
        strides[d] = t->strides[d];
        if (strides[d] < 0) {
            er_msg_(msg, msg_size, "%s: er_npy_write_tensor: negative stride %lld", path, (long long)strides[d]);
            return ER_EINVAL;
        }
    }
    if ((st = er_shape_bytes_(path, t->ndim, shape, (size_t)sb, &nbytes, msg, msg_size)) != ER_OK) return st;
    count = (int64_t)(nbytes / (size_t)sb);
    if (count && !t->data) {
        er_msg_(msg, msg_size, "%s: er_npy_write_tensor: a non-empty tensor without data", path);
        return ER_EINVAL;
    }
    if (count) {
        /* The largest element offset must not overflow. */
        for (d = 0; d < t->ndim; d++) {
            uint64_t span = (uint64_t)(shape[d] - 1);
            if (strides[d] && span > (UINT64_C(1) << 62) / (uint64_t)strides[d]) {
                er_msg_(msg, msg_size, "%s: er_npy_write_tensor: strides too large", path);
                return ER_EINVAL;
            }
            max_off += span * (uint64_t)strides[d];
        }
        if (max_off > (UINT64_C(1) << 62) / (uint64_t)sb) {
            er_msg_(msg, msg_size, "%s: er_npy_write_tensor: strides too large", path);
            return ER_EINVAL;
        }
    }
    if (!(buf = malloc(nbytes ? nbytes : 1))) {
        er_msg_(msg, msg_size, "%s: out of memory for %zu bytes", path, nbytes);
        return ER_ENOMEM;
    }
    src = (const unsigned char *)t->data;
    if (count) {
        int64_t b, i, j, nb = t->ndim == 3 ? shape[0] : 1;
        int64_t rows = shape[t->ndim - 2], cols = shape[t->ndim - 1];
        int64_t sbat = t->ndim == 3 ? strides[0] : 0, srow = strides[t->ndim - 2], scol = strides[t->ndim - 1];
        for (b = 0; b < nb; b++)
            for (i = 0; i < rows; i++)
                for (j = 0; j < cols; j++, e++) {
                    uint64_t off = ((uint64_t)b * (uint64_t)sbat + (uint64_t)i * (uint64_t)srow +
                                    (uint64_t)j * (uint64_t)scol) * (uint64_t)sb;
                    uint64_t bits = er_load_le_(src + off, sb);
                    if (er_check_pattern(t->format, bits) != ER_OK) {
                        char idx[192];
                        er_index_str_(t->ndim, shape, e, idx, sizeof idx);
                        er_msg_(msg, msg_size, "%s: element %s = 0x%0*llx is not a %s pattern", path, idx, sb * 2,
                                (unsigned long long)bits, fi.name);
                        free(buf);
                        return ER_EPATTERN;
                    }
                    er_store_le_(buf + e * (uint64_t)sb, sb, bits);
                }
    }
    {
        char header[512];
        size_t hsize = er_make_header_(header, sizeof header, descr, t->ndim, shape);
        st = er_atomic_write_(path, header, hsize, buf, nbytes, msg, msg_size);
    }
    free(buf);
    return st;
}
