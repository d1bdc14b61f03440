/* result_from.c: results as inputs (er_result_create_from) and matmul's result through the operation
 * interface (src/er_op.h): the worked example of an operation's table.  Above the bounds
 * (src/tolerance.c), which it reads; src/result.c (the data) calls neither. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_op.h"
#include "result_internal.h"
#include "host/er_msg.h"
#include "exactref/exactref.h"

#define msgf er_msgf /* host/er_msg.h */

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
    er_format_info fi;
    er_format_get_info(r->d.format, &fi);
    void *buf = malloc((size_t)(r->count ? r->count : 1) * (size_t)fi.storage_bytes);
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
