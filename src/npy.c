/* npy.c: the NumPy .npy file format: a strict reader and a writer that never clobbers what it must not. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE /* madvise and MADV_DONTNEED (Linux) */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "exactref/exactref.h"
#include "exactref/npy.h"
#include "npy_internal.h"

/* ---- Messages. ---- */

void _er_npy_msg(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (!msg || size == 0) return;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

void _er_npy_msg_ok(char *msg, size_t size)
{
    if (msg && size) msg[0] = '\0';
}

/* strerror into a local buffer (the XSI strerror_r: thread-safe). */
const char *_er_npy_errstr(int err, char *buf, size_t size)
{
    if (strerror_r(err, buf, size) != 0) snprintf(buf, size, "error %d", err);
    return buf;
}

/* A shape as Python writes it: "()", "(3,)", "(3, 4)". */
void _er_npy_shape_str(int ndim, const int64_t *shape, char *buf, size_t size)
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
void _er_npy_index_str(int ndim, const int64_t *shape, uint64_t k, char *buf, size_t size)
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


static const _er_npy_dtype er_dtypes_[] = {
    {"<f8", 'f', 8, ER_FMT_F64}, {"<f4", 'f', 4, ER_FMT_F32}, {"<f2", 'f', 2, ER_FMT_F16},
    {"|i1", 'i', 1, ER_FMT_I8},  {"|u1", 'u', 1, ER_FMT_U8},  {"<i2", 'i', 2, ER_FMT_I16},
    {"<u2", 'u', 2, -1},         {"<i4", 'i', 4, ER_FMT_I32}, {"<u4", 'u', 4, -1},
    {"<i8", 'i', 8, ER_FMT_I64},
    /* numpy's bool: bytes 0 and 1, read as u8 (an attention mask saved from a bool array); written as '|u1' */
    {"|b1", 'u', 1, ER_FMT_U8},
    /* void dtypes: what np.save writes for ml_dtypes' bfloat16 ('<V2') and float8/float4 ('|V1')
     * arrays; raw patterns of the format that the caller declares */
    {"|V1", 'V', 1, -1},         {"|V2", 'V', 2, -1},
};
#define ER_NDTYPES_ ((int)(sizeof er_dtypes_ / sizeof er_dtypes_[0]))
#define ER_DTYPE_LIST_ "'<f8' '<f4' '<f2' '|i1' '|u1' '|b1' (bool, read as u8) '<i2' '<u2' '<i4' '<u4' '<i8', and the void '<V2' '|V1' of ml_dtypes"

static int er_host_little_(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* The dtype of a descr string of length len (not NUL-terminated); NULL with a reason in why. */
const _er_npy_dtype *_er_npy_dtype_find(const char *s, size_t len, char *why, size_t why_size)
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
            const _er_npy_dtype *d = &er_dtypes_[k];
            if (s[1] != d->descr[1] || s[2] != d->descr[2]) continue;
            if (d->kind == 'V') {
                /* void elements are bytes with no byte order: numpy spells them '|V2', ml_dtypes '<V2' */
                if (s[0] == '<' || s[0] == '|' || s[0] == '=') return d;
                _er_npy_msg(why, why_size, "dtype '%s' has a byte order that is not valid for it", shown);
                return NULL;
            }
            if (s[0] == '>' || (s[0] == '=' && !er_host_little_())) {
                _er_npy_msg(why, why_size,
                        "big-endian dtype '%s' is not supported; convert with arr.astype('%s')", shown,
                        d->descr);
                return NULL;
            }
            if (s[0] == '<' || s[0] == '=' || (s[0] == '|' && d->size == 1)) return d;
            _er_npy_msg(why, why_size, "dtype '%s' has a byte order that is not valid for it", shown);
            return NULL;
        }
    }
    _er_npy_msg(why, why_size, "unsupported dtype '%s' (supported: " ER_DTYPE_LIST_ ")", shown);
    return NULL;
}

/* ---- Little-endian element access (host independent). ---- */

uint64_t _er_npy_load_le(const unsigned char *p, int size)
{
    uint64_t v = 0;
    int i;
    for (i = size - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

void _er_npy_store_le(unsigned char *p, int size, uint64_t v)
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
er_status _er_npy_shape_bytes(const char *name, int ndim, const int64_t *shape, size_t itemsize,
                                 size_t *nbytes, char *msg, size_t msg_size)
{
    char sh[256];
    int64_t n = er_count_(ndim, shape);
    int i;
    if (n == -1) {
        for (i = 0; i < ndim && shape[i] >= 0; i++) {}
        _er_npy_msg(msg, msg_size, "%s: negative dimension %lld in the shape", name,
                (long long)(i < ndim ? shape[i] : 0));
        return ER_EINVAL;
    }
    _er_npy_shape_str(ndim, shape, sh, sizeof sh);
    if (n == -2) {
        _er_npy_msg(msg, msg_size, "%s: huge dimensions: the shape %s has more than 2^40 elements", name, sh);
        return ER_EINVAL;
    }
    if ((uint64_t)n > (uint64_t)(SIZE_MAX / itemsize)) {
        _er_npy_msg(msg, msg_size, "%s: huge dimensions: the %s bytes of the shape %s do not fit in size_t",
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
        _er_npy_msg(msg, msg_size, "%s: empty file (not a .npy file)", name);
        return ER_EINVAL;
    }
    if (pre_len < 6 || memcmp(pre, magic, 6) != 0) {
        _er_npy_msg(msg, msg_size, "%s: bad magic: not a .npy file (it must start with \"\\x93NUMPY\")", name);
        return ER_EINVAL;
    }
    if (pre_len < 8) {
        _er_npy_msg(msg, msg_size, "%s: truncated: the file ends inside the version bytes", name);
        return ER_EINVAL;
    }
    if (!((pre[6] == 1 || pre[6] == 2 || pre[6] == 3) && pre[7] == 0)) {
        _er_npy_msg(msg, msg_size, "%s: unsupported .npy format version %u.%u (supported: 1.0, 2.0, 3.0)", name,
                (unsigned)pre[6], (unsigned)pre[7]);
        return ER_EINVAL;
    }
    *hstart = pre[6] == 1 ? 10 : 12;
    if (pre_len < *hstart) {
        _er_npy_msg(msg, msg_size, "%s: truncated: the file ends inside the header length bytes", name);
        return ER_EINVAL;
    }
    len = pre[6] == 1 ? _er_npy_load_le(pre + 8, 2) : _er_npy_load_le(pre + 8, 4);
    if (len > file_len - *hstart) {
        _er_npy_msg(msg, msg_size,
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
        _er_npy_msg(p->msg, p->msg_size, "%s: bad header syntax: %s, found the end of the header", p->name, what);
    else
        _er_npy_msg(p->msg, p->msg_size, "%s: bad header syntax at byte %zu of the header: %s, found \"%s\"",
                p->name, p->i, what, near);
    return ER_EINVAL;
}

static er_status er_hp_dup_(er_hp_ *p, const char *key)
{
    _er_npy_msg(p->msg, p->msg_size, "%s: bad header: the key '%s' appears twice", p->name, key);
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
            _er_npy_msg(p->msg, p->msg_size, "%s: the shape has more than %d dimensions", p->name, ER_NPY_MAX_DIMS);
            return ER_EINVAL;
        }
        if (neg && (v != 0 || huge)) {
            if (huge || v > (uint64_t)ER_NPY_MAX_ELEMENTS)
                _er_npy_msg(p->msg, p->msg_size, "%s: negative dimension (huge) in the shape", p->name);
            else
                _er_npy_msg(p->msg, p->msg_size, "%s: negative dimension -%llu in the shape", p->name,
                        (unsigned long long)v);
            return ER_EINVAL;
        }
        if (huge || v > (uint64_t)ER_NPY_MAX_ELEMENTS) {
            _er_npy_msg(p->msg, p->msg_size,
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
        _er_npy_msg(p->msg, p->msg_size, "%s: bad header: 'shape' is \"(%lld)\", an integer, not a tuple", p->name,
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
    const _er_npy_dtype *dt = NULL;
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
        _er_npy_msg(msg, msg_size, "%s: the header is not a dict literal (it must start with '{'): \"%s\"", name,
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
                _er_npy_msg(msg, msg_size, "%s: unsupported dtype: structured dtypes (a list descr) are not supported",
                        name);
                return ER_EINVAL;
            }
            if ((st = er_hp_string_(&p, &d, &dlen, "a quoted dtype string for 'descr'")) != ER_OK) return st;
            if (!(dt = _er_npy_dtype_find(d, dlen, why, sizeof why))) {
                _er_npy_msg(msg, msg_size, "%s: %s", name, why);
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
            _er_npy_msg(msg, msg_size, "%s: bad header: unexpected key '%s' (the keys are 'descr', 'fortran_order', "
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
        _er_npy_msg(msg, msg_size, "%s: bad header: the dict is missing the key '%s'", name,
                !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape");
        return ER_EINVAL;
    }
    if (fortran) {
        _er_npy_msg(msg, msg_size, "%s: Fortran-order arrays are not supported; use np.ascontiguousarray", name);
        return ER_EINVAL;
    }
    snprintf(out->descr, sizeof out->descr, "%s", dt->descr);
    out->itemsize = (size_t)dt->size;
    return _er_npy_shape_bytes(name, out->ndim, out->shape, out->itemsize, &out->nbytes, msg, msg_size);
}

/* The data after the header: exactly nbytes of them. */
static er_status er_data_len_(const er_npy *a, uint64_t avail, const char *name, char *msg, size_t msg_size)
{
    char sh[256];
    if (avail == (uint64_t)a->nbytes) return ER_OK;
    _er_npy_shape_str(a->ndim, a->shape, sh, sizeof sh);
    if (avail < (uint64_t)a->nbytes)
        _er_npy_msg(msg, msg_size,
                "%s: truncated: the shape %s of '%s' needs %llu bytes of data after the header, the file has "
                "only %llu",
                name, sh, a->descr, (unsigned long long)a->nbytes, (unsigned long long)avail);
    else
        _er_npy_msg(msg, msg_size,
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
        _er_npy_msg(msg, msg_size, "%s: er_npy_parse: null argument", name);
        return ER_EINVAL;
    }
    memset(out, 0, sizeof *out);
    if ((st = er_preamble_(b, len < 12 ? len : 12, len, name, &hstart, &hlen, msg, msg_size)) != ER_OK)
        return st;
    if ((st = er_header_((const char *)b + hstart, hlen, name, out, msg, msg_size)) != ER_OK) goto fail;
    off = hstart + hlen;
    if ((st = er_data_len_(out, (uint64_t)(len - off), name, msg, msg_size)) != ER_OK) goto fail;
    if (!(out->data = malloc(out->nbytes ? out->nbytes : 1))) {
        _er_npy_msg(msg, msg_size, "%s: out of memory for %zu bytes of data", name, out->nbytes);
        st = ER_ENOMEM;
        goto fail;
    }
    if (out->nbytes) memcpy(out->data, b + off, out->nbytes);
    _er_npy_msg_ok(msg, msg_size);
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

/*
 * The reader of er_npy_read and _er_npy_map_read: the file opened, its size taken once (fstat), the
 * preamble and header read and checked against that size, then the data either read into memory
 * (map NULL, or where a mapping is refused) or mapped read-only (map->base set, out->data inside it).
 */
static er_status er_read_(const char *path, er_npy *out, _er_npy_map *map, char *msg, size_t msg_size)
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
    if (map) memset(map, 0, sizeof *map);
    if (!path || !out) {
        _er_npy_msg(msg, msg_size, "er_npy_read: null argument");
        if (out) memset(out, 0, sizeof *out);
        return ER_EINVAL;
    }
    memset(out, 0, sizeof *out);
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        _er_npy_msg(msg, msg_size, "%s: cannot open the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
        return ER_EINVAL;
    }
    if (fstat(fd, &sb) != 0) {
        _er_npy_msg(msg, msg_size, "%s: cannot read the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
        goto fail;
    }
    if (S_ISDIR(sb.st_mode)) {
        _er_npy_msg(msg, msg_size, "%s: cannot read the file: it is a directory", path);
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        _er_npy_msg(msg, msg_size, "%s: cannot read the file: not a regular file", path);
        goto fail;
    }
    flen = (uint64_t)sb.st_size;
    pre_len = flen < 12 ? (size_t)flen : 12;
    if ((got = er_read_full_(fd, pre, pre_len)) < 0) {
        _er_npy_msg(msg, msg_size, "%s: cannot read the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
        goto fail;
    }
    if ((size_t)got < pre_len) flen = (uint64_t)got, pre_len = (size_t)got; /* it shrank */
    if ((st = er_preamble_(pre, pre_len, flen, path, &hstart, &hlen, msg, msg_size)) != ER_OK) goto fail;
    st = ER_EINVAL;
    /* hlen <= flen - hstart: checked against the file before this allocation. */
    if (!(header = malloc(hlen ? hlen : 1))) {
        _er_npy_msg(msg, msg_size, "%s: out of memory for a %zu-byte header", path, hlen);
        st = ER_ENOMEM;
        goto fail;
    }
    if (lseek(fd, (off_t)hstart, SEEK_SET) < 0 || (got = er_read_full_(fd, header, hlen)) < 0) {
        _er_npy_msg(msg, msg_size, "%s: cannot read the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
        goto fail;
    }
    if ((size_t)got < hlen) {
        _er_npy_msg(msg, msg_size, "%s: truncated: the file ends inside the header", path);
        goto fail;
    }
    if ((st = er_header_(header, hlen, path, out, msg, msg_size)) != ER_OK) goto fail;
    st = ER_EINVAL;
    free(header);
    header = NULL;
    if ((st = er_data_len_(out, flen - hstart - hlen, path, msg, msg_size)) != ER_OK) goto fail;
    st = ER_EINVAL;
    /* A mapping: of a regular file (above) with data, whose length fits in size_t.  The size was
     * checked against the header (er_data_len_); it is taken again once the mapping exists, so that a
     * file cut between the two is refused here rather than faulting later (what remains: a file cut
     * while the mapping is in use, _er_npy_map_read in npy_internal.h). */
    if (map && out->nbytes && flen <= (uint64_t)SIZE_MAX) {
        void *base = mmap(NULL, (size_t)flen, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base != MAP_FAILED) {
            struct stat again;
            if (fstat(fd, &again) != 0) {
                _er_npy_msg(msg, msg_size, "%s: cannot read the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
                munmap(base, (size_t)flen);
                goto fail;
            }
            if ((uint64_t)again.st_size < flen) {
                munmap(base, (size_t)flen);
                _er_npy_msg(msg, msg_size, "%s: truncated: the file shrank while it was being opened (%llu bytes, "
                            "then %llu)", path, (unsigned long long)flen, (unsigned long long)again.st_size);
                goto fail;
            }
            map->base = base;
            map->len = (size_t)flen;
            out->data = (unsigned char *)base + hstart + hlen;
            close(fd);
            _er_npy_msg_ok(msg, msg_size);
            return ER_OK;
        }
        /* a file system that cannot map (errno): read it, as er_npy_read does */
    }
    /* nbytes equals what the file holds after the header: a checked size. */
    if (!(out->data = malloc(out->nbytes ? out->nbytes : 1))) {
        _er_npy_msg(msg, msg_size, "%s: out of memory for %zu bytes of data", path, out->nbytes);
        st = ER_ENOMEM;
        goto fail;
    }
    if ((got = er_read_full_(fd, out->data, out->nbytes)) < 0) {
        _er_npy_msg(msg, msg_size, "%s: cannot read the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
        st = ER_EINVAL;
        goto fail;
    }
    if ((size_t)got < out->nbytes) {
        _er_npy_msg(msg, msg_size, "%s: truncated: the file ended after %lld of %zu bytes of data", path, got,
                out->nbytes);
        st = ER_EINVAL;
        goto fail;
    }
    close(fd);
    _er_npy_msg_ok(msg, msg_size);
    return ER_OK;
fail:
    free(header);
    free(out->data);
    memset(out, 0, sizeof *out);
    close(fd);
    return st;
}

er_status er_npy_read(const char *path, er_npy *out, char *msg, size_t msg_size)
{
    return er_read_(path, out, NULL, msg, msg_size);
}

er_status _er_npy_map_read(const char *path, er_npy *out, _er_npy_map *map, char *msg, size_t msg_size)
{
    if (!map) {
        _er_npy_msg(msg, msg_size, "_er_npy_map_read: null argument");
        if (out) memset(out, 0, sizeof *out);
        return ER_EINVAL;
    }
    return er_read_(path, out, map, msg, msg_size);
}

void _er_npy_map_release(er_npy *a, _er_npy_map *map)
{
    if (map && map->base) {
        munmap(map->base, map->len);
        memset(map, 0, sizeof *map);
        if (a) memset(a, 0, sizeof *a);
        return;
    }
    er_npy_free(a);
}

int _er_npy_map_holds(const _er_npy_map *map, const void *p, size_t n)
{
    const unsigned char *b, *q = (const unsigned char *)p;
    if (!map || !map->base || !p) return 0;
    b = (const unsigned char *)map->base;
    return q >= b && (size_t)(q - b) <= map->len && n <= map->len - (size_t)(q - b);
}

void _er_npy_map_drop(const _er_npy_map *map, const void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    uintptr_t page, lo, hi, b, e;
    long ps = sysconf(_SC_PAGESIZE);
    if (!n || !_er_npy_map_holds(map, p, n) || ps <= 0) return;
    page = (uintptr_t)ps;
    b = (uintptr_t)map->base;
    e = b + map->len;
    /* the pages the range touches (a neighbour's page dropped too is read again when it is used) */
    lo = (uintptr_t)p / page * page;
    hi = ((uintptr_t)p + n + page - 1) / page * page;
    if (lo < b) lo = b; /* the base is page-aligned */
    if (hi > (e + page - 1) / page * page) hi = (e + page - 1) / page * page;
    if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_DONTNEED);
#else
    (void)map, (void)p, (void)n;
#endif
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

/* Write everything, in place, to an open descriptor (a FIFO, a device, a terminal). */
static er_status er_write_fd_(int fd, const char *path, const void *a, size_t alen, const void *b, size_t blen,
                              char *msg, size_t msg_size)
{
    char eb[128];
    if (er_write_all_(fd, a, alen) != ER_OK || (blen && er_write_all_(fd, b, blen) != ER_OK)) {
        int err = errno;
        _er_npy_msg(msg, msg_size, "%s: cannot write the file: %s", path, _er_npy_errstr(err, eb, sizeof eb));
        return err == ENOMEM ? ER_ENOMEM : ER_EINVAL;
    }
    return ER_OK;
}

/* The directory part of path ("." when it has none) into buf. */
static void er_dir_of_(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, size, ".");
    else if (slash == path) snprintf(buf, size, "/");
    else snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/*
 * Where an output goes: *target is the file to replace (path, or the target of a symbolic link,
 * malloc'd), or NULL with *in_place = 1 for an existing file that is not regular.  Refuses a directory,
 * a dangling link, a socket, a read-only file and a directory the caller cannot create files in.
 */
static er_status er_output_plan_(const char *path, char **target, int *in_place, mode_t *mode, int *exists,
                                 char *msg, size_t msg_size)
{
    struct stat ls, st;
    char eb[128];
    char *t = NULL;
    *target = NULL;
    *in_place = 0;
    *exists = 0;
    *mode = 0;
    if (!path || !*path) {
        _er_npy_msg(msg, msg_size, "an output needs a file name");
        return ER_EINVAL;
    }
    if (lstat(path, &ls) != 0) {
        if (errno != ENOENT) {
            _er_npy_msg(msg, msg_size, "%s: cannot write the file: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
            return ER_EINVAL;
        }
    } else {
        if (stat(path, &st) != 0) {
            _er_npy_msg(msg, msg_size, "%s: a symbolic link to nothing (%s): not written", path,
                        _er_npy_errstr(errno, eb, sizeof eb));
            return ER_EINVAL;
        }
        if (S_ISDIR(st.st_mode)) {
            _er_npy_msg(msg, msg_size, "%s: is a directory, not a file", path);
            return ER_EINVAL;
        }
        if (S_ISSOCK(st.st_mode)) {
            _er_npy_msg(msg, msg_size, "%s: is a socket: not written", path);
            return ER_EINVAL;
        }
        if (!S_ISREG(st.st_mode)) {
            /* a FIFO or a device: written in place, never replaced */
            if (access(path, W_OK) != 0) {
                _er_npy_msg(msg, msg_size, "%s: cannot write it: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
                return ER_EINVAL;
            }
            *in_place = 1;
            return ER_OK;
        }
        /* a regular file: replaced only if its owner could write it (root too keeps read-only files) */
        if (access(path, W_OK) != 0 || (st.st_mode & 0222) == 0) {
            _er_npy_msg(msg, msg_size, "%s: the file is read-only (mode %04o): not replaced", path,
                        (unsigned)(st.st_mode & 07777));
            return ER_EINVAL;
        }
        *exists = 1;
        *mode = st.st_mode & 07777;
        if (S_ISLNK(ls.st_mode)) {
            if (!(t = realpath(path, NULL))) {
                int err = errno;
                _er_npy_msg(msg, msg_size, "%s: cannot follow the symbolic link: %s", path,
                            _er_npy_errstr(err, eb, sizeof eb));
                return err == ENOMEM ? ER_ENOMEM : ER_EINVAL;
            }
        }
    }
    if (!t && !(t = strdup(path))) {
        _er_npy_msg(msg, msg_size, "%s: out of memory", path);
        return ER_ENOMEM;
    }
    {
        char dir[4096];
        struct stat ds;
        er_dir_of_(t, dir, sizeof dir);
        if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode)) {
            _er_npy_msg(msg, msg_size, "%s: the directory %s does not exist", path, dir);
            free(t);
            return ER_EINVAL;
        }
        if (access(dir, W_OK | X_OK) != 0) {
            _er_npy_msg(msg, msg_size, "%s: cannot create files in the directory %s: %s", path, dir,
                        _er_npy_errstr(errno, eb, sizeof eb));
            free(t);
            return ER_EINVAL;
        }
    }
    *target = t;
    return ER_OK;
}

/* er_output_plan_'s verdict on path alone (*in_place set where ER_OK); nothing is kept. */
static er_status output_plan_only(const char *path, int *in_place, char *msg, size_t msg_size)
{
    char *t = NULL;
    int exists;
    mode_t mode;
    er_status st = er_output_plan_(path, &t, in_place, &mode, &exists, msg, msg_size);
    free(t);
    return st;
}

int _er_npy_output_kind(const char *path, char *msg, size_t msg_size)
{
    int in_place = 0;
    return output_plan_only(path, &in_place, msg, msg_size) != ER_OK ? -1 : in_place ? 1 : 0;
}

er_status er_npy_output_check(const char *path, char *msg, size_t msg_size)
{
    int in_place = 0;
    er_status st = output_plan_only(path, &in_place, msg, msg_size);
    if (st == ER_OK) _er_npy_msg_ok(msg, msg_size);
    return st;
}

/*
 * Write header and data to path under the output rules (npy.h): a FIFO or a device in place; a regular
 * file (or a link's target) replaced atomically by a temporary file in its directory, fsync'd, given
 * the old file's mode and renamed over it.  SIGINT, SIGTERM, SIGHUP and SIGQUIT are held while the
 * temporary file exists, so that an interrupted command leaves no temporary file behind: the signal
 * takes effect once it is renamed or removed.
 */
er_status _er_npy_write_file(const char *path, const char *header, size_t hsize, const void *data,
                             size_t nbytes, char *msg, size_t msg_size)
{
    char eb[128];
    char *target = NULL, *tmp = NULL;
    int fd = -1, attempt, err = 0, in_place, exists;
    mode_t mode;
    sigset_t hold, old;
    er_status st = er_output_plan_(path, &target, &in_place, &mode, &exists, msg, msg_size);
    if (st != ER_OK) return st;
    if (in_place) {
        fd = open(path, O_WRONLY | O_NOCTTY);
        if (fd < 0) {
            _er_npy_msg(msg, msg_size, "%s: cannot open it for writing: %s", path, _er_npy_errstr(errno, eb, sizeof eb));
            return ER_EINVAL;
        }
        st = er_write_fd_(fd, path, header, hsize, data, nbytes, msg, msg_size);
        if (close(fd) != 0 && st == ER_OK) {
            _er_npy_msg(msg, msg_size, "%s: cannot write the file (close): %s", path, _er_npy_errstr(errno, eb, sizeof eb));
            st = ER_EINVAL;
        }
        if (st == ER_OK) _er_npy_msg_ok(msg, msg_size);
        return st;
    }
    size_t plen = strlen(target);
    if (!(tmp = malloc(plen + 64))) {
        free(target);
        _er_npy_msg(msg, msg_size, "%s: out of memory", path);
        return ER_ENOMEM;
    }
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    sigaddset(&hold, SIGQUIT);
    sigprocmask(SIG_BLOCK, &hold, &old);
    for (attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(tmp, plen + 64, "%s.tmp-%ld-%lx-%d", target, (long)getpid(),
                 (unsigned long)ts.tv_nsec ^ (unsigned long)(size_t)&ts, attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY, 0666);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) {
        _er_npy_msg(msg, msg_size, "%s: cannot create a temporary file next to it: %s", path,
                    _er_npy_errstr(errno, eb, sizeof eb));
        st = ER_EINVAL;
        goto out;
    }
    if ((st = er_write_fd_(fd, path, header, hsize, data, nbytes, msg, msg_size)) != ER_OK) goto fail;
    if (exists && fchmod(fd, mode) != 0) {
        err = errno;
        _er_npy_msg(msg, msg_size, "%s: cannot keep the file's mode: %s", path, _er_npy_errstr(err, eb, sizeof eb));
        st = ER_EINVAL;
        goto fail;
    }
    if (fsync(fd) != 0) {
        err = errno;
        _er_npy_msg(msg, msg_size, "%s: cannot write the file (fsync): %s", path, _er_npy_errstr(err, eb, sizeof eb));
        st = ER_EINVAL;
        goto fail;
    }
    err = close(fd) != 0 ? errno : 0;
    fd = -1;
    if (err) {
        _er_npy_msg(msg, msg_size, "%s: cannot write the file (close): %s", path, _er_npy_errstr(err, eb, sizeof eb));
        st = ER_EINVAL;
        goto fail;
    }
    if (rename(tmp, target) != 0) {
        err = errno;
        _er_npy_msg(msg, msg_size, "%s: cannot write the file (rename): %s", path, _er_npy_errstr(err, eb, sizeof eb));
        st = ER_EINVAL;
        goto fail;
    }
    /* Make the rename durable: fsync the directory (best effort). */
    er_dir_of_(target, tmp, plen + 64);
    if ((fd = open(tmp, O_RDONLY)) >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    _er_npy_msg_ok(msg, msg_size);
    st = ER_OK;
    goto out;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
out:
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(tmp);
    free(target);
    return st;
}

er_status er_npy_write_bytes(const char *path, const void *data, size_t len, char *msg, size_t msg_size)
{
    if (!path || (len && !data)) {
        _er_npy_msg(msg, msg_size, "er_npy_write_bytes: null argument");
        return ER_EINVAL;
    }
    return _er_npy_write_file(path, (const char *)data, len, NULL, 0, msg, msg_size);
}

/* The version 1.0 header of an array: magic, version, length, the dict padded to 64 bytes. */
size_t _er_npy_make_header(char *buf, size_t size, const char *descr, int ndim, const int64_t *shape)
{
    char sh[256];
    int n;
    size_t total, dict;
    _er_npy_shape_str(ndim, shape, sh, sizeof sh);
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
    const _er_npy_dtype *dt;
    size_t nbytes, hsize;
    er_status st;
    if (!path || !*path || !descr || ndim < 0 || ndim > ER_NPY_MAX_DIMS || (ndim && !shape)) {
        _er_npy_msg(msg, msg_size, "%s: er_npy_write: invalid argument (%s)", path ? path : "(null)",
                !path || !*path ? "no path" : !descr ? "no dtype" : ndim < 0 || ndim > 8 ? "ndim not 0..8" : "no shape");
        return ER_EINVAL;
    }
    if (!(dt = _er_npy_dtype_find(descr, strlen(descr), why, sizeof why))) {
        _er_npy_msg(msg, msg_size, "%s: %s", path, why);
        return ER_EINVAL;
    }
    if ((st = _er_npy_shape_bytes(path, ndim, shape, (size_t)dt->size, &nbytes, msg, msg_size)) != ER_OK) return st;
    if (nbytes && !data) {
        _er_npy_msg(msg, msg_size, "%s: er_npy_write: no data for a non-empty array", path);
        return ER_EINVAL;
    }
    hsize = _er_npy_make_header(header, sizeof header, dt->descr, ndim, shape);
    return _er_npy_write_file(path, header, hsize, data, nbytes, msg, msg_size);
}

