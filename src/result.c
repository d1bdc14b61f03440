/* result.c: the Result of a matrix product: er_result_create runs the exact engine once and keeps the
 * rounded output; the bounds are computed per options and kept (a small cache); normal(), the exact
 * enclosures, backward (the gradients' products), views (transpose, reshape) that move elements
 * without rounding, and results as the inputs of later products, whose stored values' distances from
 * the exact ones widen the later bounds.  The standards are in src/standards.c; the bounds'
 * preparation and routing, covers and may_be in src/tolerance.c. */
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
#include "host/er_msg.h"
#include "exactref/exactref.h"

/* The most elements whose S a result keeps (src/result_internal.h: keep_s): 256 MiB. */
#define ER_KEEP_S_MAX ((int64_t)1 << 25)
#include "exactref/report.h"

#define msgf er_msgf /* src/host/er_msg.h */

void er_tol_opts_init(er_tol_opts *o)
{
    memset(o, 0, sizeof *o);
    o->compute = -1;
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
        if (!args->a_scale && !getenv("EXACTREF_NO_KEEP_S") && (args->backend == ER_BACKEND_AUTO || args->backend == ER_BACKEND_CPU) && cnt > 0 &&
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
    if (r->is_int || r->args.a_scale)
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

static void free_bounds(er_bounds *b)
{
    er_big_free(b->radius);
    er_big_free(b->tolerance);
    er_big_free(b->low);
    er_big_free(b->high);
    er_big_free(b->has_range);
    er_big_free(b->may_pinf);
    er_big_free(b->may_ninf);
    er_big_free(b->may_nan);
    memset(b, 0, sizeof *b);
}

/* The eight per-element arrays of n elements (through the cache of freed blocks); 0 when one cannot
 * be had (the caller releases the others with free_bounds). */
static int alloc_bounds(er_bounds *b, size_t n)
{
    b->radius = (double *)er_big_alloc(n * sizeof(double));
    b->tolerance = (double *)er_big_alloc(n * sizeof(double));
    b->low = (uint64_t *)er_big_alloc(n * sizeof(uint64_t));
    b->high = (uint64_t *)er_big_alloc(n * sizeof(uint64_t));
    b->has_range = (unsigned char *)er_big_alloc(n);
    b->may_pinf = (unsigned char *)er_big_alloc(n);
    b->may_ninf = (unsigned char *)er_big_alloc(n);
    b->may_nan = (unsigned char *)er_big_alloc(n);
    return b->radius && b->tolerance && b->low && b->high && b->has_range && b->may_pinf && b->may_ninf && b->may_nan;
}

void er_result_free(er_result *r)
{
    if (!r) return;
    for (int i = 0; i < r->ncache; i++) {
        free_bounds(&r->cache[i].b);
        er_bkeys_free(r->cache[i].keys);
    }
    free(r->owned);
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
    er_fmt fa = er_fmt_get(r->args.a->format), fb = er_fmt_get(r->args.b->format);
    int wa = r->args.a->format, wide = fa.mbits >= fb.mbits ? wa : r->args.b->format;
    if (er_fmt_get(wide).mbits < 23) return ER_FMT_F32;
    return wide;
}

static int same_opts(const er_tol_opts *x, int cx, const er_tol_opts *y, int cy)
{
    return cx == cy && x->flush_to_zero == y->flush_to_zero && x->ulps == y->ulps &&
           !memcmp(&x->standard, &y->standard, sizeof x->standard);
}

er_status er_result_bounds(er_result *r, const er_tol_opts *o, const er_bounds **out, char *msg, size_t msg_size)
{
    er_tol_opts def;
    int compute;
    er_bounds b;
    er_status st;
    if (!r || !out) return ER_EINVAL;
    if (!o) {
        er_tol_opts_init(&def);
        o = &def;
    }
    compute = o->compute < 0 ? er_result_default_compute(r) : o->compute;
    if (r->base) {
        /* a view: the base's bounds, moved (moving elements rounds nothing) */
        const er_bounds *bb;
        if ((st = er_result_bounds(r->base, o, &bb, msg, msg_size)) != ER_OK) return st;
        for (int i = 0; i < r->ncache; i++)
            if (same_opts(&r->cache[i].o, r->cache[i].compute, o, compute)) {
                *out = &r->cache[i].b;
                return ER_OK;
            }
        size_t n = (size_t)(r->count ? r->count : 1);
        memset(&b, 0, sizeof b);
        b.count = r->count;
        if (!alloc_bounds(&b, n)) {
            free_bounds(&b);
            return ER_ENOMEM;
        }
        for (int64_t e = 0; e < r->count; e++) {
            int64_t q = r->map[e];
            b.radius[e] = bb->radius[q];
            b.tolerance[e] = bb->tolerance[q];
            b.low[e] = bb->low[q];
            b.high[e] = bb->high[q];
            b.has_range[e] = bb->has_range[q];
            b.may_pinf[e] = bb->may_pinf[q];
            b.may_ninf[e] = bb->may_ninf[q];
            b.may_nan[e] = bb->may_nan[q];
        }
        goto keep;
    }
    if (compute >= ER_FMT_COUNT || er_fmt_get(compute).kind != ER_KIND_FLOAT || compute == ER_FMT_TF32 ||
        er_fmt_get(compute).mbits < 2)
        return msgf(msg, msg_size, ER_EINVAL, "compute must be f64, f32, f16 or bf16");
    for (int i = 0; i < r->ncache; i++)
        if (same_opts(&r->cache[i].o, r->cache[i].compute, o, compute)) {
            *out = &r->cache[i].b;
            return ER_OK;
        }
    memset(&b, 0, sizeof b);
    size_t n = (size_t)(r->count ? r->count : 1);
    b.count = r->count;
    if (!alloc_bounds(&b, n)) {
        free_bounds(&b);
        return msgf(msg, msg_size, ER_ENOMEM, "out of memory for the bounds of %lld elements", (long long)r->count);
    }
    if (r->is_int) {
        /* mmai is exact: the one correct output is rounded */
        er_format_info fi;
        er_format_get_info(r->d.format, &fi);
        int64_t e = 0;
        int64_t B = r->d.ndim == 3 ? r->d.shape[0] : 1, M = r->d.shape[r->d.ndim - 2], N = r->d.shape[r->d.ndim - 1];
        for (int64_t bb = 0; bb < B; bb++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++, e++) {
                    int64_t sb = r->d.ndim == 3 ? r->d.strides[0] : 0;
                    const unsigned char *p = (const unsigned char *)r->d.data +
                                             (size_t)(bb * sb + i * r->d.strides[r->d.ndim - 2] + j * r->d.strides[r->d.ndim - 1]) * 4;
                    uint32_t v;
                    memcpy(&v, p, 4);
                    b.radius[e] = 0;
                    b.tolerance[e] = 0;
                    b.low[e] = b.high[e] = v;
                    b.has_range[e] = 1;
                    b.may_pinf[e] = b.may_ninf[e] = b.may_nan[e] = 0;
                }
    } else {
        er_slack sl = {r->slack[0], r->slack[1], r->slack[2]};
        char dmsg[512] = "";
        int on_cpu = 0;
        er_standard es = er_standard_for_inputs(&o->standard, r->args.a->format, r->args.b->format);
        st = er_front_bounds(&r->args, &r->d, compute, o->flush_to_zero, &es,
                             (sl.da || sl.db || sl.dc) ? &sl : NULL, r->keep_s, &b, dmsg, sizeof dmsg, &on_cpu);
        /* a backend asked for by name says where the bounds ran when it could not run them itself */
        if (st == ER_OK && on_cpu && (r->args.backend == ER_BACKEND_OPENCL || r->args.backend == ER_BACKEND_CUDA) &&
            !r->stats.note[0])
            snprintf(r->stats.note, sizeof r->stats.note, "the bounds ran on the CPU (the same bits): the %s device "
                     "cannot compute them (OpenCL: no fp64)", r->args.backend == ER_BACKEND_CUDA ? "CUDA" : "OpenCL");
        if (st != ER_OK) {
            free_bounds(&b);
            if (dmsg[0]) return msgf(msg, msg_size, st, "computing the bounds failed: %s", dmsg);
            return msgf(msg, msg_size, st, "computing the bounds failed: %s", er_status_string(st));
        }
    }
keep:
    if (r->ncache == ER_CACHE) {
        free_bounds(&r->cache[0].b);
        er_bkeys_free(r->cache[0].keys);
        memmove(&r->cache[0], &r->cache[1], sizeof r->cache[0] * (ER_CACHE - 1));
        r->ncache--;
    }
    r->cache[r->ncache].o = *o;
    r->cache[r->ncache].compute = compute;
    r->cache[r->ncache].b = b;
    r->cache[r->ncache].keys = NULL;
    *out = &r->cache[r->ncache].b;
    r->ncache++;
    return ER_OK;
}

const er_mma_args *er_result_args_(const er_result *r) { return &r->args; }

void er_result_drop_keep_(er_result *r)
{
    er_big_free(r->keep_s);
    r->keep_s = NULL;
}

int er_result_tileable_(const er_result *r, const er_tol_opts *o)
{
    if (r->base || r->from[0] || r->from[1] || r->from[2]) return 0;
    int compute = o->compute < 0 ? er_result_default_compute(r) : o->compute;
    for (int i = 0; i < r->ncache; i++)
        if (same_opts(&r->cache[i].o, r->cache[i].compute, o, compute)) return 0;
    return 1;
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
    er_tensor d = r->d;
    int64_t t = d.shape[i];
    d.shape[i] = d.shape[j];
    d.shape[j] = t;
    t = d.strides[i];
    d.strides[i] = d.strides[j];
    d.strides[j] = t;
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

er_status er_result_create_from(const er_mma_args *args, er_result *a_from, er_result *b_from, er_result *c_from,
                                const er_tol_opts *from_opts, er_result **out, char *msg, size_t msg_size)
{
    er_result *from[3] = {a_from, b_from, c_from};
    er_mma_args a2;
    er_tol_opts def;
    er_status st = ER_OK;
    double *slack[3] = {NULL, NULL, NULL};
    if (!args || !out) return ER_EINVAL;
    if (!from_opts) {
        er_tol_opts_init(&def);
        from_opts = &def;
    }
    a2 = *args;
    if (a2.a_scale || a2.b_scale)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "results as inputs of block-scaled products are not supported");
    const er_tensor **slot[3] = {&a2.a, &a2.b, &a2.c};
    for (int q = 0; q < 3; q++) {
        er_op op;
        if (!from[q]) continue;
        /* the later operation reads the stored rounded values, within the earlier bounds' slack
         * (src/er_op.h: the same for every operation's result) */
        er_result_as_op(from[q], &op);
        *slot[q] = op.cls->single(op.self, 0);
        if ((st = er_op_slack(&op, 0, from_opts, &slack[q], msg, msg_size)) != ER_OK) goto fail;
    }
    if ((st = er_result_create(&a2, out, msg, msg_size)) != ER_OK) goto fail;
    for (int q = 0; q < 3; q++) {
        (*out)->from[q] = from[q];
        (*out)->slack[q] = slack[q];
    }
    (*out)->from_opts = *from_opts;
    /* the args must point at the rounded tensors for later uses (bounds, normal) */
    return ER_OK;
fail:
    for (int q = 0; q < 3; q++) free(slack[q]);
    return st;
}

/* ---- mma/matmul through the operation interface (src/er_op.h): the worked example ---- */

static int mma_outputs(const void *self)
{
    (void)self;
    return 1; /* matmul.backward's two outputs are a result each */
}

static const char *mma_output_name(const void *self, int i)
{
    return i == 0 ? ((const er_result *)self)->output_name : NULL;
}

static const er_tensor *mma_single(const void *self, int i)
{
    return i == 0 ? er_result_rounded((const er_result *)self) : NULL;
}

static er_status mma_bounds_of(void *self, int i, const er_tol_opts *o, const er_bounds **out, char *msg,
                               size_t msg_size)
{
    if (i != 0) return msgf(msg, msg_size, ER_EINVAL, "matmul has one output (0), not %d", i);
    return er_result_bounds((er_result *)self, o, out, msg, msg_size);
}

static void mma_release(void *self)
{
    er_result_free((er_result *)self);
}

static void mma_keep(void *self)
{
    (void)self;
}

static const er_op_class mma_class, mma_same_class;

static er_status mma_with_bounds(void *self, const er_tol_opts *o, er_op *out, char *msg, size_t msg_size)
{
    er_result *r = (er_result *)self, *n = NULL;
    er_status st;
    if (r->base) return msgf(msg, msg_size, ER_EUNSUPPORTED, "a view has no inputs of its own: ask the result it shows");
    if (!r->from[0] && !r->from[1] && !r->from[2]) { /* bounds of arrays: the same result (not released) */
        out->cls = &mma_same_class;
        out->self = r;
        return ER_OK;
    }
    /* a new result on the same inputs (its own storage for the rounded answer, the same bits) */
    void *buf = malloc((size_t)(r->count ? r->count : 1) * (size_t)er_fmt_storage_bytes(er_fmt_get(r->d.format)));
    if (!buf) return msgf(msg, msg_size, ER_ENOMEM, "out of memory for %lld elements", (long long)r->count);
    er_mma_args a = r->args;
    er_tensor d = r->d;
    d.data = buf;
    for (int q = 0; q < d.ndim; q++) d.strides[q] = 1;
    for (int q = d.ndim - 2; q >= 0; q--) d.strides[q] = d.strides[q + 1] * d.shape[q + 1];
    a.d = &d;
    if ((st = er_result_create_from(&a, r->from[0], r->from[1], r->from[2], o, &n, msg, msg_size)) != ER_OK) {
        free(buf);
        return st;
    }
    n->owned = buf;
    out->cls = &mma_class;
    out->self = n;
    return ER_OK;
}

static const er_op_class mma_class = {"matmul", mma_outputs, mma_output_name, mma_single, mma_bounds_of,
                                      mma_with_bounds, mma_release};
/* the same, for a result the caller owns (with_bounds of a result on arrays) */
static const er_op_class mma_same_class = {"matmul", mma_outputs, mma_output_name, mma_single, mma_bounds_of,
                                           mma_with_bounds, mma_keep};

void er_result_as_op(er_result *r, er_op *op)
{
    op->cls = &mma_class;
    op->self = r;
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
