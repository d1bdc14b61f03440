/* op_view.c: views of an operation's output (er_opres_reshape, er_opres_transpose): a one-output er_opres whose
 * rounded, exact, bounds and normal() are the base output's, moved by an index map (results as inputs read
 * a view like any result). */
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "exactref/formats.h"
#include "op_impl.h"

#define msgf er_msgf

typedef struct view_state {
    er_opdef def;     /* the base's name, boundaries and standards; one output */
    er_opres *base;
    int output;       /* the base's output */
    int64_t *map;     /* view element e (row-major) is the base output's element map[e] */
} view_state;

static void view_free(void *p)
{
    view_state *s = (view_state *)p;
    if (!s) return;
    free(s->map);
    free(s);
}

static er_status view_bounds_full(er_opres *r, int i, const er_tol_opts *o, er_bounds *out, char *msg,
                                  size_t msg_size)
{
    view_state *s = (view_state *)r->state;
    const er_bounds *b;
    er_status st;
    (void)i;
    if ((st = er_opres_bounds(s->base, s->output, o, &b, msg, msg_size)) != ER_OK) return st;
    for (int64_t e = 0; e < out->count; e++) {
        int64_t k = s->map[e];
        out->radius[e] = b->radius[k];
        out->tolerance[e] = b->tolerance[k];
        out->low[e] = b->low[k];
        out->high[e] = b->high[k];
        out->has_range[e] = b->has_range[k];
        out->may_pinf[e] = b->may_pinf[k];
        out->may_ninf[e] = b->may_ninf[k];
        out->may_nan[e] = b->may_nan[k];
    }
    return ER_OK;
}

static er_status view_normal(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    view_state *s = (view_state *)r->state;
    er_format_info fi;
    (void)i;
    int64_t n = er_opres_count(s->base, s->output), m = er_opres_count(r, 0);
    er_format_get_info(r->out[0].format, &fi);
    void *buf = malloc((size_t)(n ? n : 1) * (size_t)fi.storage_bytes);
    if (!buf) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", r->def->name);
    er_status st = er_opres_normal(s->base, s->output, env->compute, env->ftz, buf, msg, msg_size);
    if (st == ER_OK) {
        const er_optensor *bo = &s->base->out[s->output];
        er_optensor t = er_optensor_make(bo->format, bo->ndim, bo->shape, buf);
        for (int64_t e = 0; e < m; e++) bits[e] = er_ops_load(&t, s->map[e]);
    }
    free(buf);
    return st;
}

/* a view of output i of base with the given shape and map (taken) */
static er_status make_view(er_opres *base, int i, int ndim, const int64_t *shape, int64_t *map, er_opres **out,
                           char *msg, size_t msg_size)
{
    er_status st;
    er_opres *r = (er_opres *)calloc(1, sizeof *r);
    view_state *s = (view_state *)calloc(1, sizeof *s);
    if (!r || !s) {
        free(r);
        free(s);
        free(map);
        return msgf(msg, msg_size, ER_ENOMEM, "view: out of memory");
    }
    s->def = *base->def;
    s->def.noutputs = 1;
    s->def.output_names = &base->def->output_names[i];
    s->def.min_inputs = s->def.max_inputs = 0;
    s->def.create = NULL;
    s->def.bounds = NULL;
    s->def.free_state = view_free;
    s->def.normal = view_normal;
    s->base = base;
    s->output = i;
    s->map = map;
    r->def = &s->def;
    r->state = s;
    r->default_compute = base->default_compute;
    r->bounds_full = view_bounds_full;
    const er_optensor *bo = &base->out[i];
    if ((st = er_ops_alloc_output(r, 0, bo->format, ndim, shape, msg, msg_size)) != ER_OK) {
        er_opres_free(r);
        return st;
    }
    int64_t n = er_optensor_count(&r->out[0]);
    for (int64_t e = 0; e < n; e++) {
        er_ops_store(&r->out[0], e, er_ops_load(bo, map[e]));
        r->xlo[0][e] = base->xlo[i][map[e]];
        r->xhi[0][e] = base->xhi[i][map[e]];
    }
    *out = r;
    return ER_OK;
}

static er_status view_check(er_opres *r, int i, er_opres **out, const char *what, char *msg, size_t msg_size)
{
    if (!out) return msgf(msg, msg_size, ER_EINVAL, "%s: no place for the view", what);
    *out = NULL;
    if (!r) return msgf(msg, msg_size, ER_EINVAL, "%s: no result", what);
    if (i < 0 || i >= r->nout)
        return msgf(msg, msg_size, ER_EINVAL, "%s: %s has %d output(s); output %d is out of range", what, r->def->name,
                    r->nout, i);
    return ER_OK;
}

er_status er_opres_reshape(er_opres *r, int i, int ndim, const int64_t *shape, er_opres **out, char *msg,
                           size_t msg_size)
{
    er_status st;
    if ((st = view_check(r, i, out, "reshape", msg, msg_size)) != ER_OK) return st;
    if (ndim < 0 || ndim > ER_OP_MAXDIM || (ndim && !shape))
        return msgf(msg, msg_size, ER_EINVAL, "reshape: %d dimensions (0 to %d)", ndim, ER_OP_MAXDIM);
    int64_t n = 1, have = er_optensor_count(&r->out[i]);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || (shape[d] && n > INT64_MAX / shape[d]))
            return msgf(msg, msg_size, ER_EINVAL, "reshape: dimension %d of size %lld", d, (long long)shape[d]);
        n *= shape[d];
    }
    if (n != have)
        return msgf(msg, msg_size, ER_EINVAL, "reshape: the new shape has %lld elements, %s's output '%s' has %lld",
                    (long long)n, r->def->name, r->def->output_names[i], (long long)have);
    int64_t *map = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!map) return msgf(msg, msg_size, ER_ENOMEM, "reshape: out of memory");
    for (int64_t e = 0; e < n; e++) map[e] = e;
    return make_view(r, i, ndim, shape, map, out, msg, msg_size);
}

er_status er_opres_transpose(er_opres *r, int i, int d0, int d1, er_opres **out, char *msg, size_t msg_size)
{
    er_status st;
    if ((st = view_check(r, i, out, "transpose", msg, msg_size)) != ER_OK) return st;
    const er_optensor *bo = &r->out[i];
    int nd = bo->ndim;
    int a = d0 < 0 ? d0 + nd : d0, b = d1 < 0 ? d1 + nd : d1;
    if (a < 0 || a >= nd || b < 0 || b >= nd)
        return msgf(msg, msg_size, ER_EINVAL, "transpose(%d, %d): %s's output '%s' has %d dimension(s)", d0, d1,
                    r->def->name, r->def->output_names[i], nd);
    int64_t shape[ER_OP_MAXDIM], stride[ER_OP_MAXDIM];
    for (int d = 0; d < nd; d++) {
        shape[d] = bo->shape[d];
        stride[d] = bo->strides[d];
    }
    shape[a] = bo->shape[b];
    shape[b] = bo->shape[a];
    stride[a] = bo->strides[b];
    stride[b] = bo->strides[a];
    int64_t n = er_optensor_count(bo);
    int64_t *map = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!map) return msgf(msg, msg_size, ER_ENOMEM, "transpose: out of memory");
    int64_t idx[ER_OP_MAXDIM] = {0}, off = 0;
    for (int64_t e = 0; e < n; e++) {
        map[e] = off;
        for (int d = nd - 1; d >= 0; d--) { /* the next row-major index of the view, its base offset */
            if (++idx[d] < shape[d]) {
                off += stride[d];
                break;
            }
            off -= stride[d] * (shape[d] - 1);
            idx[d] = 0;
        }
    }
    return make_view(r, i, nd, shape, map, out, msg, msg_size);
}
