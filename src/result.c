/* result.c: the Result of a matrix product, its data: er_result_create runs the exact engine once and
 * keeps the rounded output; normal(), the exact enclosures, backward (the gradients' products), views
 * (transpose, reshape) that move elements without rounding.  It calls none of the concerns above it
 * (docs/architecture.md, "One owner per concern"): the bounds per options and their cache are
 * src/tolerance.c's, covers and the scoring src/report.c's, results as inputs src/result_from.c's;
 * the standards are in src/standards.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_front.h"
#include "er_op.h"
#include "er_report.h"
#include "result_internal.h"
#include "host/er_alloc.h"
#include "host/er_isa.h"
#include "host/er_msg.h"
#include "exactref/exactref.h"

/* The most elements whose S a result keeps (src/result_internal.h: keep_s): 256 MiB. */
#define ER_KEEP_S_MAX ((int64_t)1 << 25)
#include "exactref/report.h"

#define msgf er_msgf /* host/er_msg.h */

void er_tol_opts_init(er_tol_opts *o)
{
    memset(o, 0, sizeof *o);
    o->compute = -1;
    o->ulps = -1; /* each library function's documented default (docs/ops/README.md); matmul calls none */
    o->standard.kind = ER_STD_NORMAL;
    o->standard.group = 1;
    snprintf(o->standard.name, sizeof o->standard.name, "normal");
}

er_status er_result_create(const er_mma_args *args, er_result **out, char *msg, size_t msg_size)
{
    er_result *r;
    er_status st;
    if (!args || !out || !args->d || !args->a || !args->b) return msgf(msg, msg_size, ER_EINVAL, "a, b and d are required");
    r = (er_result *)calloc(1, sizeof *r);
    if (!r) return ER_ENOMEM;
    r->args = *args;
    r->args.lo = r->args.hi = r->args.odd = NULL;
    r->args.stats = &r->stats;
    r->args.msg = msg;
    r->args.msg_size = msg_size;
    {
        /* the reference's S, for normal's, any_order's and the engines' bounds (src/tolerance.c), where the CPU may
         * run it and it is at most ER_KEEP_S_MAX elements (8 bytes each; without it the bounds form S
         * themselves, the same bits) */
        int64_t cnt = 1;
        int ok = 0;
        for (int i = 0; i < args->d->ndim && i < 3; i++) cnt *= args->d->shape[i] > 0 ? args->d->shape[i] : 0;
        if (!args->a_scale && !er_env_on("EXACTREF_NO_KEEP_S") && (args->backend == ER_BACKEND_AUTO || args->backend == ER_BACKEND_CPU) && cnt > 0 &&
            cnt <= ER_KEEP_S_MAX && er_fmt_get(args->a->format).kind == ER_KIND_FLOAT)
            r->keep_s = (double *)er_big_alloc(sizeof(double) * (size_t)cnt);
        st = er_front_mma_keep(&r->args, r->keep_s, &ok);
        if (!ok) {
            er_big_free(r->keep_s);
            r->keep_s = NULL;
        }
    }
    if (st != ER_OK) {
        free(r);
        return st;
    }
    r->d = *args->d;
    r->args.d = &r->d;
    r->args.stats = NULL;
    r->args.msg = NULL;
    r->args.msg_size = 0;
    r->is_int = er_fmt_get(args->a->format).kind != ER_KIND_FLOAT;
    r->count = r->stats.elements;
    r->output_name = "out";
    *out = r;
    return ER_OK;
}

er_status er_result_adopt_(const er_mma_args *args, const er_mma_stats *stats, er_result **out)
{
    er_result *r = (er_result *)calloc(1, sizeof *r);
    if (!r) return ER_ENOMEM;
    r->args = *args;
    r->args.lo = r->args.hi = r->args.odd = NULL;
    r->args.stats = NULL;
    r->args.msg = NULL;
    r->args.msg_size = 0;
    r->args.progress = NULL;
    r->args.progress_ctx = NULL;
    r->d = *args->d;
    r->args.d = &r->d;
    r->stats = *stats;
    r->is_int = er_fmt_get(args->a->format).kind != ER_KIND_FLOAT;
    r->count = 1;
    for (int i = 0; i < r->d.ndim; i++) r->count *= r->d.shape[i];
    r->output_name = "out";
    *out = r;
    return ER_OK;
}

void er_result_set_progress(er_result *r, er_progress_fn fn, void *ctx)
{
    if (!r) return;
    r->args.progress = fn;
    r->args.progress_ctx = ctx;
}

const char *er_result_output_name(const er_result *r) { return r ? r->output_name : NULL; }

int er_result_boundaries(const er_result *r, const er_boundary **list)
{
    static const er_boundary b[1] = {{"accumulate", "accumulate",
                                      "the sum of each element's products (and C), rounded once into the output format",
                                      "dot"}};
    if (list) *list = r ? b : NULL;
    return r ? 1 : 0;
}

/* One backward output: d = x y (x m x k, y k x n views), a result that owns d's storage. */
static er_status backward_one(const er_result *r, const er_tensor *x, const er_tensor *y, int fmt, const char *name,
                              er_result **out, char *msg, size_t msg_size)
{
    er_format_info fi;
    int64_t rows = x->shape[x->ndim - 2], cols = y->shape[y->ndim - 1];
    int batched = x->ndim == 3 || y->ndim == 3;
    int64_t batch = x->ndim == 3 ? x->shape[0] : y->ndim == 3 ? y->shape[0] : 1;
    er_format_get_info(fmt, &fi);
    size_t n = (size_t)(batch * rows * cols);
    void *buf = calloc(n ? n : 1, (size_t)fi.storage_bytes);
    er_result *res;
    er_mma_args args;
    if (!buf) return msgf(msg, msg_size, ER_ENOMEM, "out of memory for %s", name);
    res = (er_result *)calloc(1, sizeof *res);
    if (!res) {
        free(buf);
        return ER_ENOMEM;
    }
    /* the operand views live in the result, so the args' pointers stay valid */
    res->a_view = *x;
    res->b_view = *y;
    res->d = batched ? er_tensor_3d(fmt, batch, rows, cols, buf) : er_tensor_2d(fmt, rows, cols, buf);
    er_mma_args_init(&args);
    args.a = &res->a_view;
    args.b = &res->b_view;
    args.d = &res->d;
    args.rounding = r->args.rounding;
    args.opts = r->args.opts;
    args.threads = r->args.threads;
    args.backend = r->args.backend;
    args.device = r->args.device;
    res->args = args;
    res->args.stats = &res->stats;
    res->args.msg = msg;
    res->args.msg_size = msg_size;
    er_status st = er_mma(&res->args);
    if (st != ER_OK) {
        free(buf);
        free(res);
        return st;
    }
    res->args.stats = NULL;
    res->args.msg = NULL;
    res->args.msg_size = 0;
    res->owned = buf;
    res->output_name = name;
    res->count = res->stats.elements;
    *out = res;
    return ER_OK;
}

er_status er_result_backward(er_result *r, const er_tensor *grad, int grad_a_format, int grad_b_format,
                             er_result **grad_a, er_result **grad_b, char *msg, size_t msg_size)
{
    er_status st;
    if (!r || !grad || !grad_a || !grad_b) return ER_EINVAL;
    *grad_a = *grad_b = NULL;
    if (r->base)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "a view has no backward of its own: call backward on the result it "
                                                    "views, with the gradient moved back");
    if (r->is_int || r->args.a_scale || r->scaled)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "backward is defined for float matmul, not for mmai or block-scaled products");
    if (er_fmt_get(grad->format).kind != ER_KIND_FLOAT)
        return msgf(msg, msg_size, ER_EINVAL, "grad must have a float format");
    if (grad->ndim != r->d.ndim || grad->shape[grad->ndim - 2] != r->d.shape[r->d.ndim - 2] ||
        grad->shape[grad->ndim - 1] != r->d.shape[r->d.ndim - 1])
        return msgf(msg, msg_size, ER_EINVAL, "grad must have the output's shape");
    int fa = grad_a_format < 0 ? r->args.a->format : grad_a_format;
    int fb = grad_b_format < 0 ? r->args.b->format : grad_b_format;
    if (fa >= ER_FMT_COUNT || fb >= ER_FMT_COUNT || er_fmt_get(fa).kind != ER_KIND_FLOAT ||
        er_fmt_get(fb).kind != ER_KIND_FLOAT)
        return msgf(msg, msg_size, ER_EINVAL, "the gradients' formats must be float formats");
    er_tensor bt = er_tensor_transpose(*r->args.b), at = er_tensor_transpose(*r->args.a);
    if ((st = backward_one(r, grad, &bt, fa, "grad_A", grad_a, msg, msg_size)) != ER_OK) return st;
    if ((st = backward_one(r, &at, grad, fb, "grad_B", grad_b, msg, msg_size)) != ER_OK) {
        er_result_free(*grad_a);
        *grad_a = NULL;
        return st;
    }
    return ER_OK;
}

void er_result_free(er_result *r)
{
    if (!r) return;
    for (int i = 0; i < r->ncache; i++) {
        er_result_bounds_free_(&r->cache[i].b);
        er_bkeys_release(r->cache[i].keys);
    }
    free(r->owned);
    if (r->scaled) r->scaled_free(r->scaled);
    free(r->map);
    for (int q = 0; q < 3; q++) free(r->slack[q]);
    er_big_free(r->keep_s);
    free(r);
}

const char *er_result_op(const er_result *r) { return r ? "matmul" : NULL; }
const char *er_result_guarantee(const er_result *r) { return r && r->is_int ? "exact" : "correctly_rounded"; }
const er_tensor *er_result_rounded(const er_result *r) { return r ? &r->d : NULL; }
const er_mma_stats *er_result_stats(const er_result *r) { return r ? &r->stats : NULL; }

int er_result_default_compute(const er_result *r)
{
    if (r->base) return er_result_default_compute(r->base);
    if (r->scaled) return ER_FMT_F32; /* scaled products accumulate in f32 (src/scaled.c) */
    er_fmt fa = er_fmt_get(r->args.a->format), fb = er_fmt_get(r->args.b->format);
    int wa = r->args.a->format, wide = fa.mbits >= fb.mbits ? wa : r->args.b->format;
    if (er_fmt_get(wide).mbits < 23) return ER_FMT_F32;
    return wide;
}

const er_mma_args *er_result_args_(const er_result *r) { return &r->args; }

void er_result_drop_keep_(er_result *r)
{
    er_big_free(r->keep_s);
    r->keep_s = NULL;
}

er_status er_result_normal(er_result *r, int compute, int flush_to_zero, er_tensor *out, char *msg, size_t msg_size)
{
    if (!r || !out) return ER_EINVAL;
    if (r->base) {
        /* the base's normal() into a scratch tensor, then moved into out by the view's map */
        er_format_info fi;
        er_format_get_info(r->d.format, &fi);
        const er_tensor *bd = &r->base->d;
        unsigned char *tmp = calloc((size_t)(r->count ? r->count : 1), (size_t)fi.storage_bytes);
        if (!tmp) return ER_ENOMEM;
        er_tensor t = bd->ndim == 3 ? er_tensor_3d(bd->format, bd->shape[0], bd->shape[1], bd->shape[2], tmp)
                                    : er_tensor_2d(bd->format, bd->shape[0], bd->shape[1], tmp);
        er_status st = er_result_normal(r->base, compute, flush_to_zero, &t, msg, msg_size);
        if (st == ER_OK) {
            int64_t B = out->ndim == 3 ? out->shape[0] : 1, M = out->shape[out->ndim - 2], N = out->shape[out->ndim - 1];
            int64_t sb = out->ndim == 3 ? out->strides[0] : 0, e = 0;
            for (int64_t bb = 0; bb < B; bb++)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++, e++)
                        memcpy((unsigned char *)out->data +
                                   (size_t)(bb * sb + i * out->strides[out->ndim - 2] + j * out->strides[out->ndim - 1]) *
                                       (size_t)fi.storage_bytes,
                               tmp + (size_t)r->map[e] * (size_t)fi.storage_bytes, (size_t)fi.storage_bytes);
        }
        free(tmp);
        return st;
    }
    if (r->is_int) return msgf(msg, msg_size, ER_EINVAL, "mmai is exact: its normal() is rounded");
    if (r->scaled) /* src/scaled.c: its operands are the reference's binary64 ones, not the kernel's */
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "normal() is not defined for scaled products");
    if (compute < 0) compute = er_result_default_compute(r);
    if (r->from[0] || r->from[1] || r->from[2]) {
        /* a later result's normal() works on the earlier results' normal() */
        er_mma_args a2 = r->args;
        er_tensor t[3];
        void *buf[3] = {NULL, NULL, NULL};
        const er_tensor **slot[3] = {&a2.a, &a2.b, &a2.c};
        er_status st = ER_OK;
        for (int q = 0; q < 3 && st == ER_OK; q++) {
            if (!r->from[q]) continue;
            const er_tensor *src = *slot[q];
            er_format_info fi;
            er_format_get_info(src->format, &fi);
            int64_t cnt = 1;
            for (int d = 0; d < src->ndim; d++) cnt *= src->shape[d];
            buf[q] = calloc((size_t)(cnt ? cnt : 1), (size_t)fi.storage_bytes);
            if (!buf[q]) {
                st = ER_ENOMEM;
                break;
            }
            t[q] = src->ndim == 3 ? er_tensor_3d(src->format, src->shape[0], src->shape[1], src->shape[2], buf[q])
                                  : er_tensor_2d(src->format, src->shape[0], src->shape[1], buf[q]);
            st = er_result_normal(r->from[q], -1, flush_to_zero, &t[q], msg, msg_size);
            *slot[q] = &t[q];
        }
        char dmsg[512] = "";
        if (st == ER_OK) st = er_front_normal(&a2, compute, flush_to_zero, out, dmsg, sizeof dmsg);
        for (int q = 0; q < 3; q++) free(buf[q]);
        if (st != ER_OK) return msgf(msg, msg_size, st, "normal() failed: %s", dmsg[0] ? dmsg : er_status_string(st));
        return ER_OK;
    }
    if (out->format != r->d.format) return msgf(msg, msg_size, ER_EINVAL, "normal(): out must have the output format");
    char dmsg[512] = "";
    er_status st = er_front_normal(&r->args, compute, flush_to_zero, out, dmsg, sizeof dmsg);
    if (st != ER_OK) return msgf(msg, msg_size, st, "normal() failed: %s", dmsg[0] ? dmsg : er_status_string(st));
    return ER_OK;
}

/* A view of r whose element e is r's element map[e] (row-major orders), shown through tensor d. */
static er_status make_view(er_result *r, const er_tensor *d, int64_t *map, er_result **out)
{
    er_result *v = (er_result *)calloc(1, sizeof *v);
    if (!v) {
        free(map);
        return ER_ENOMEM;
    }
    v->args = r->args;
    v->d = *d;
    v->args.d = &v->d;
    v->stats = r->stats;
    v->is_int = r->is_int;
    v->count = r->count;
    v->output_name = r->output_name;
    v->base = r;
    v->map = map;
    *out = v;
    return ER_OK;
}

er_status er_result_transpose(er_result *r, int i, int j, er_result **out, char *msg, size_t msg_size)
{
    if (!r || !out) return ER_EINVAL;
    int nd = r->d.ndim;
    if (i < 0 || j < 0 || i >= nd || j >= nd)
        return msgf(msg, msg_size, ER_EINVAL, "transpose(%d, %d): the result has %d dimensions", i, j, nd);
    er_tensor d = er_front_swap_dims(r->d, i, j);
    int64_t *map = (int64_t *)malloc(sizeof(int64_t) * (size_t)(r->count ? r->count : 1));
    if (!map) return ER_ENOMEM;
    /* base row-major strides; the view's index vector with i and j swapped is the base's */
    int64_t bs[3], idx[3], e = 0;
    bs[nd - 1] = 1;
    for (int q = nd - 2; q >= 0; q--) bs[q] = bs[q + 1] * r->d.shape[q + 1];
    int64_t B = nd == 3 ? d.shape[0] : 1, M = d.shape[nd - 2], N = d.shape[nd - 1];
    for (int64_t b = 0; b < B; b++)
        for (int64_t x = 0; x < M; x++)
            for (int64_t y = 0; y < N; y++, e++) {
                if (nd == 3) {
                    idx[0] = b;
                    idx[1] = x;
                    idx[2] = y;
                } else {
                    idx[0] = x;
                    idx[1] = y;
                }
                int64_t s = idx[i];
                idx[i] = idx[j];
                idx[j] = s;
                int64_t q = 0;
                for (int k = 0; k < nd; k++) q += idx[k] * bs[k];
                map[e] = q;
            }
    return make_view(r, &d, map, out);
}

er_status er_result_reshape(er_result *r, int ndim, const int64_t *shape, er_result **out, char *msg, size_t msg_size)
{
    if (!r || !out || !shape) return ER_EINVAL;
    if (ndim != 2 && ndim != 3) return msgf(msg, msg_size, ER_EINVAL, "reshape: 2 or 3 dimensions");
    int64_t n = 1;
    for (int q = 0; q < ndim; q++) {
        if (shape[q] < 0) return msgf(msg, msg_size, ER_EINVAL, "reshape: negative dimension");
        n *= shape[q];
    }
    if (n != r->count)
        return msgf(msg, msg_size, ER_EINVAL, "reshape: %lld elements cannot become %lld", (long long)r->count, (long long)n);
    /* row-major order is kept: the rounded tensor must be contiguous to be shown in the new shape */
    const er_tensor *d0 = &r->d;
    int64_t want = 1;
    for (int q = d0->ndim - 1; q >= 0; q--) {
        if (d0->shape[q] > 1 && d0->strides[q] != want)
            return msgf(msg, msg_size, ER_EUNSUPPORTED, "reshape: the rounded tensor is not contiguous");
        want *= d0->shape[q];
    }
    er_tensor d = ndim == 3 ? er_tensor_3d(d0->format, shape[0], shape[1], shape[2], d0->data)
                            : er_tensor_2d(d0->format, shape[0], shape[1], d0->data);
    int64_t *map = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!map) return ER_ENOMEM;
    for (int64_t e = 0; e < n; e++) map[e] = r->map ? r->map[e] : e;
    return make_view(r->map ? r->base : r, &d, map, out);
}

er_status er_result_exact(er_result *r, er_tensor *lo, er_tensor *hi, er_tensor *odd, char *msg, size_t msg_size)
{
    if (!r || (!lo && !hi && !odd)) return ER_EINVAL;
    if (r->base)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "the enclosures of a view: ask the result it views");
    er_mma_args a = r->args;
    a.d = NULL;
    a.lo = lo;
    a.hi = hi;
    a.odd = odd;
    a.stats = NULL;
    a.msg = msg;
    a.msg_size = msg_size;
    return er_mma(&a);
}
