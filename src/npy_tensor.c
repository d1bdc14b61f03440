/* npy_tensor.c: .npy arrays as tensors of bit patterns, and tensors as .npy files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/npy.h"
#include "npy_internal.h"
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
    _er_npy_index_str(a->ndim, a->shape, k, idx, sizeof idx);
    _er_npy_msg(msg, msg_size, "%s: element %s = %s %s", name, idx, value, problem);
}

/* Elements checked between two gives-back of a mapping's pages (_er_npy_map_drop). */
#define ER_DROP_EVERY (UINT64_C(1) << 22)

/* er_npy_to_tensor, and with map (its base set) _er_npy_to_tensor_mapped (npy_internal.h). */
static er_status er_to_tensor_(const er_npy *a, const _er_npy_map *map, const char *name, int declared, er_tensor *t,
                               void **storage, char *msg, size_t msg_size)
{
    const _er_npy_dtype *dt = NULL;
    er_format_info fi;
    char why[192], sh[256];
    int fmt, mode, sb, k, in_place;
    size_t nbytes;
    uint64_t n, e, dropped;
    unsigned char *dst;
    const unsigned char *src;
    if (!name) name = "<array>";
    if (!a || !t || !storage) {
        _er_npy_msg(msg, msg_size, "%s: er_npy_to_tensor: null argument", name);
        return ER_EINVAL;
    }
    *storage = NULL;
    if (a->ndim < 0 || a->ndim > ER_NPY_MAX_DIMS) {
        _er_npy_msg(msg, msg_size, "%s: invalid array: %d dimensions", name, a->ndim);
        return ER_EINVAL;
    }
    _er_npy_shape_str(a->ndim, a->shape, sh, sizeof sh);
    if (a->ndim != 2 && a->ndim != 3) {
        _er_npy_msg(msg, msg_size, "%s: a tensor must be 2-D or 3-D; this array is %d-D with shape %s", name, a->ndim,
                sh);
        return ER_EINVAL;
    }
    if (!memchr(a->descr, '\0', sizeof a->descr)) {
        _er_npy_msg(msg, msg_size, "%s: invalid array: descr is not a string", name);
        return ER_EINVAL;
    }
    if (!(dt = _er_npy_dtype_find(a->descr, strlen(a->descr), why, sizeof why))) {
        _er_npy_msg(msg, msg_size, "%s: %s", name, why);
        return ER_EINVAL;
    }
    if (a->itemsize != (size_t)dt->size ||
        _er_npy_shape_bytes(name, a->ndim, a->shape, a->itemsize, &nbytes, msg, msg_size) != ER_OK ||
        nbytes != a->nbytes || (nbytes && !a->data)) {
        _er_npy_msg(msg, msg_size, "%s: invalid array: itemsize, shape %s, nbytes and data disagree", name, sh);
        return ER_EINVAL;
    }
    if (declared != -1 && er_format_get_info(declared, &fi) != ER_OK) {
        _er_npy_msg(msg, msg_size, "%s: unknown format id %d", name, declared);
        return ER_EINVAL;
    }
    fmt = declared != -1 ? declared : dt->fmt;
    if (fmt < 0 && dt->kind == 'V') {
        _er_npy_msg(msg, msg_size,
                    "%s: a void array ('%s', %d-byte elements: what np.save writes for ml_dtypes' %s) holds raw "
                    "patterns: declare its format (one of %d byte%s, such as %s)",
                    name, a->descr, dt->size, dt->size == 2 ? "bfloat16" : "float8 and float4 types", dt->size,
                    dt->size == 1 ? "" : "s", dt->size == 2 ? "bf16 or f16" : "f8E4M3FN, f8E5M2 or f4E2M1FN");
        return ER_EINVAL;
    }
    if (fmt < 0) {
        _er_npy_msg(msg, msg_size, "%s: uint%d arrays hold raw patterns: declare their format", name, dt->size * 8);
        return ER_EINVAL;
    }
    er_format_get_info(fmt, &fi);
    sb = fi.storage_bytes;
    if (dt->kind == 'f')
        mode = ER_MODE_VALUES;
    else if ((dt->kind == 'u' || dt->kind == 'V' || (dt->kind == 'i' && dt->size <= 2)) &&
             fi.kind == ER_KIND_FLOAT && sb == dt->size)
        mode = ER_MODE_RAW; /* uint8/uint16/uint32, int8/int16 (torch's .view()) and void (ml_dtypes) */
    else if (dt->kind == 'V') {
        _er_npy_msg(msg, msg_size,
                    "%s: a void array ('%s') holds raw %d-byte patterns, and %s %s: declare a float format of %d "
                    "byte%s",
                    name, a->descr, dt->size, fi.name,
                    fi.kind == ER_KIND_FLOAT ? (sb == 1 ? "patterns take 1 byte" : "patterns take more bytes")
                                             : "is not a float format",
                    dt->size, dt->size == 1 ? "" : "s");
        return ER_EINVAL;
    }
    else if (dt->kind == 'u' && dt->size > 1 && fi.kind == ER_KIND_FLOAT) {
        _er_npy_msg(msg, msg_size,
                "%s: a uint%d array holds raw patterns of %d-byte formats, and %s patterns take %d byte%s: "
                "store them as uint%d",
                name, dt->size * 8, dt->size, fi.name, sb, sb == 1 ? "" : "s", sb * 8);
        return ER_EINVAL;
    } else
        mode = ER_MODE_INTS;

    n = nbytes / (size_t)dt->size;
    if (n > SIZE_MAX / (size_t)sb) {
        _er_npy_msg(msg, msg_size, "%s: huge dimensions for %s", name, fi.name);
        return ER_EINVAL;
    }
    /* In place: a mapped array whose elements are the tensor's patterns as they are, of a format whose
     * every storage pattern is valid (so a file changed under the mapping cannot give a refused one),
     * aligned as malloc would align it.  Should an element still need a change, the copy is made then
     * (the elements before it are the patterns as they are). */
    in_place = map && map->base && _er_npy_map_holds(map, a->data, nbytes) && n > 0 && sb == dt->size &&
               fi.width == 8 * sb && fi.padding_bits == 0 && ((uintptr_t)a->data % 16u) == 0 &&
               (mode == ER_MODE_RAW || (mode == ER_MODE_VALUES && dt->fmt == fmt) ||
                (mode == ER_MODE_INTS && fi.kind != ER_KIND_FLOAT));
    dst = NULL;
    if (!in_place && !(dst = malloc(n ? (size_t)n * (size_t)sb : 1))) {
        _er_npy_msg(msg, msg_size, "%s: out of memory for a %s tensor of shape %s", name, fi.name, sh);
        return ER_ENOMEM;
    }
    src = (const unsigned char *)a->data;
    dropped = 0;
    /* float32 values declared bf16 (how numpy users save bf16): the shortcut below, run by run */
    int f32_bf16 = mode == ER_MODE_VALUES && dt->fmt == ER_FMT_F32 && fmt == ER_FMT_BF16 && dt->size == 4 && sb == 2;
    for (e = 0; e < n; e++) {
        if (map && e - dropped == ER_DROP_EVERY) { /* the pages checked so far are given back */
            _er_npy_map_drop(map, src + dropped * (uint64_t)dt->size, (size_t)((e - dropped) * (uint64_t)dt->size));
            dropped = e;
        }
        if (f32_bf16 && dst) {
            /* a run of finite binary32 values with zero low halves (the test below, byte by byte), up to
             * the next page drop: their high halves */
            uint64_t lim = map ? dropped + ER_DROP_EVERY : n, e1 = e;
            if (lim > n) lim = n;
            for (; e1 < lim; e1++) {
                const unsigned char *x = src + 4 * e1;
                if ((x[0] | x[1]) != 0 || ((x[3] & 0x7Fu) == 0x7Fu && (x[2] & 0x80u) != 0)) break;
                dst[2 * e1] = x[2];
                dst[2 * e1 + 1] = x[3];
            }
            if (e1 > e) {
                e = e1 - 1;
                continue;
            }
        }
        uint64_t s = _er_npy_load_le(src + e * (uint64_t)dt->size, dt->size), s0 = s, out = 0;
        char val[160];
        if (mode == ER_MODE_VALUES) {
            unsigned fl = 0;
            if (dt->fmt == fmt || (dt->fmt == ER_FMT_F32 && fmt == ER_FMT_TF32 &&
                                   er_check_pattern(ER_FMT_TF32, s) == ER_OK)) {
                out = s;
            } else if (dt->fmt == ER_FMT_F32 && fmt == ER_FMT_BF16 && (s & 0xFFFFu) == 0 &&
                       (s & 0x7F800000u) != 0x7F800000u) {
                out = s >> 16; /* a finite binary32 value that is a bf16 one: its high half, as er_convert */
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
        if (!dst && out != s0) { /* not the pattern as it is after all: a copy from here on */
            if (!(dst = malloc((size_t)n * (size_t)sb))) {
                _er_npy_msg(msg, msg_size, "%s: out of memory for a %s tensor of shape %s", name, fi.name, sh);
                return ER_ENOMEM;
            }
            memcpy(dst, src, (size_t)(e * (uint64_t)sb));
        }
        if (dst) _er_npy_store_le(dst + e * (uint64_t)sb, sb, out);
    }
    if (map && n > dropped)
        _er_npy_map_drop(map, src + dropped * (uint64_t)dt->size, (size_t)((n - dropped) * (uint64_t)dt->size));
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
    t->data = dst ? (void *)dst : a->data;
    *storage = dst;
    _er_npy_msg_ok(msg, msg_size);
    return ER_OK;
}

er_status er_npy_to_tensor(const er_npy *a, const char *name, int declared, er_tensor *t, void **storage,
                           char *msg, size_t msg_size)
{
    return er_to_tensor_(a, NULL, name, declared, t, storage, msg, msg_size);
}

er_status _er_npy_to_tensor_mapped(const er_npy *a, const _er_npy_map *map, const char *name, int declared,
                                   er_tensor *t, void **storage, char *msg, size_t msg_size)
{
    return er_to_tensor_(a, map, name, declared, t, storage, msg, msg_size);
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
        _er_npy_msg(msg, msg_size, "%s: er_npy_write_tensor: %s", path,
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
            _er_npy_msg(msg, msg_size, "%s: er_npy_write_tensor: negative stride %lld", path, (long long)strides[d]);
            return ER_EINVAL;
        }
    }
    if ((st = _er_npy_shape_bytes(path, t->ndim, shape, (size_t)sb, &nbytes, msg, msg_size)) != ER_OK) return st;
    count = (int64_t)(nbytes / (size_t)sb);
    if (count && !t->data) {
        _er_npy_msg(msg, msg_size, "%s: er_npy_write_tensor: a non-empty tensor without data", path);
        return ER_EINVAL;
    }
    if (count) {
        /* The largest element offset must not overflow. */
        for (d = 0; d < t->ndim; d++) {
            uint64_t span = (uint64_t)(shape[d] - 1);
            if (strides[d] && span > (UINT64_C(1) << 62) / (uint64_t)strides[d]) {
                _er_npy_msg(msg, msg_size, "%s: er_npy_write_tensor: strides too large", path);
                return ER_EINVAL;
            }
            max_off += span * (uint64_t)strides[d];
        }
        if (max_off > (UINT64_C(1) << 62) / (uint64_t)sb) {
            _er_npy_msg(msg, msg_size, "%s: er_npy_write_tensor: strides too large", path);
            return ER_EINVAL;
        }
    }
    if (!(buf = malloc(nbytes ? nbytes : 1))) {
        _er_npy_msg(msg, msg_size, "%s: out of memory for %zu bytes", path, nbytes);
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
                    uint64_t bits = _er_npy_load_le(src + off, sb);
                    if (er_check_pattern(t->format, bits) != ER_OK) {
                        char idx[192];
                        _er_npy_index_str(t->ndim, shape, e, idx, sizeof idx);
                        _er_npy_msg(msg, msg_size, "%s: element %s = 0x%0*llx is not a %s pattern", path, idx, sb * 2,
                                (unsigned long long)bits, fi.name);
                        free(buf);
                        return ER_EPATTERN;
                    }
                    _er_npy_store_le(buf + e * (uint64_t)sb, sb, bits);
                }
    }
    {
        char header[512];
        size_t hsize = _er_npy_make_header(header, sizeof header, descr, t->ndim, shape);
        st = _er_npy_write_file(path, header, hsize, buf, nbytes, msg, msg_size);
    }
    free(buf);
    return st;
}
