/* op_linear.c: linear(input, weight, bias): input @ weight^T + bias through matmul's Result (er_result
 * with C the bias broadcast over the rows): the exact value rounded once, and matmul's bounds under any
 * matmul standard (docs/ops/binary.md, "linear"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

static const char *const lin_inputs[] = {"input", "weight", "bias"};
static const char *const lin_outputs[] = {"out"};

typedef struct lin_state {
    er_result *res;
    void *xcopy;           /* the input, contiguous, where its leading dimensions do not collapse */
    er_tensor A, B, C, D;
} lin_state;

static void lin_free(void *p)
{
    lin_state *s = (lin_state *)p;
    if (!s) return;
    er_result_free(s->res);
    free(s->xcopy);
    free(s);
}

static er_status lin_bounds_full(er_opres *r, int i, const er_tol_opts *o, er_bounds *out, char *msg,
                                 size_t msg_size);

static er_status lin_create(er_opres *r, char *msg, size_t msg_size)
{
    er_status st;
    int of;
    const er_optensor *x = &r->in[0], *w = &r->in[1], *b = r->has_in[2] ? &r->in[2] : NULL;
    lin_state *s = (lin_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "linear: out of memory");
    r->state = s;
    r->bounds_full = lin_bounds_full;
    if ((st = er_ops_opt_format(r, "out", x->format, &of, msg, msg_size)) != ER_OK) return st;
    if (x->ndim < 1) return msgf(msg, msg_size, ER_EINVAL, "linear: the input must have at least one dimension");
    if (w->ndim != 2)
        return msgf(msg, msg_size, ER_EINVAL, "linear: the weight must be 2-D (out_features x in_features), not %d-D",
                    w->ndim);
    int64_t k = x->shape[x->ndim - 1], n = w->shape[0], rows = 1;
    if (w->shape[1] != k)
        return msgf(msg, msg_size, ER_EINVAL, "linear: the input's last dimension is %lld, the weight's in_features %lld",
                    (long long)k, (long long)w->shape[1]);
    if (b && !((b->ndim == 1 && b->shape[0] == n) || (b->ndim == 0 && n == 1)))
        return msgf(msg, msg_size, ER_EINVAL, "linear: the bias must have shape (%lld)", (long long)n);
    for (int d = 0; d < x->ndim - 1; d++) rows *= x->shape[d];
    /* A: the input as rows x k (a copy where the leading dimensions do not collapse) */
    int collapse = 1;
    for (int d = 0; d + 2 < x->ndim; d++) collapse &= x->strides[d] == x->strides[d + 1] * x->shape[d + 1];
    memset(&s->A, 0, sizeof s->A);
    s->A.format = x->format;
    s->A.ndim = 2;
    s->A.shape[0] = rows;
    s->A.shape[1] = k;
    if (collapse) {
        s->A.data = x->data;
        s->A.strides[0] = x->ndim >= 2 ? x->strides[x->ndim - 2] : 0;
        s->A.strides[1] = x->strides[x->ndim - 1];
    } else {
        er_format_info fi;
        er_format_get_info(x->format, &fi);
        er_optensor c = er_optensor_make(x->format, x->ndim, x->shape, NULL);
        int64_t cnt = er_optensor_count(x);
        if (!(s->xcopy = c.data = malloc((size_t)(cnt ? cnt : 1) * (size_t)fi.storage_bytes)))
            return msgf(msg, msg_size, ER_ENOMEM, "linear: out of memory");
        for (int64_t e = 0; e < cnt; e++) er_ops_store(&c, e, er_ops_load(x, e));
        s->A.data = c.data;
        s->A.strides[0] = k;
        s->A.strides[1] = 1;
    }
    /* B = weight^T (k x n, no copy); C: the bias over every row (stride 0) */
    memset(&s->B, 0, sizeof s->B);
    s->B.format = w->format;
    s->B.ndim = 2;
    s->B.shape[0] = k;
    s->B.shape[1] = n;
    s->B.strides[0] = w->strides[1];
    s->B.strides[1] = w->strides[0];
    s->B.data = w->data;
    if (b) {
        memset(&s->C, 0, sizeof s->C);
        s->C.format = b->format;
        s->C.ndim = 2;
        s->C.shape[0] = rows;
        s->C.shape[1] = n;
        s->C.strides[0] = 0;
        s->C.strides[1] = b->ndim ? b->strides[0] : 0;
        s->C.data = b->data;
    }
    int64_t shape[ER_OP_MAXDIM];
    for (int d = 0; d < x->ndim - 1; d++) shape[d] = x->shape[d];
    shape[x->ndim - 1] = n;
    if ((st = er_ops_alloc_output(r, 0, of, x->ndim, shape, msg, msg_size)) != ER_OK) return st;
    s->D = er_tensor_2d(of, rows, n, r->out[0].data);
    er_mma_args a;
    er_mma_args_init(&a);
    a.a = &s->A;
    a.b = &s->B;
    a.c = b ? &s->C : NULL;
    a.d = &s->D;
    if ((st = er_result_create(&a, &s->res, msg, msg_size)) != ER_OK) return st;
    er_tensor lo = er_tensor_2d(ER_FMT_F64, rows, n, r->xlo[0]), hi = er_tensor_2d(ER_FMT_F64, rows, n, r->xhi[0]);
    return er_result_exact(s->res, &lo, &hi, NULL, msg, msg_size);
}

static er_status lin_bounds_full(er_opres *r, int i, const er_tol_opts *o, er_bounds *out, char *msg, size_t msg_size)
{
    lin_state *s = (lin_state *)r->state;
    const er_bounds *b;
    er_status st;
    (void)i;
    if ((st = er_result_bounds(s->res, o, &b, msg, msg_size)) != ER_OK) return st;
    size_t n = (size_t)b->count;
    memcpy(out->radius, b->radius, n * sizeof(double));
    memcpy(out->tolerance, b->tolerance, n * sizeof(double));
    memcpy(out->low, b->low, n * sizeof(uint64_t));
    memcpy(out->high, b->high, n * sizeof(uint64_t));
    memcpy(out->has_range, b->has_range, n);
    memcpy(out->may_pinf, b->may_pinf, n);
    memcpy(out->may_ninf, b->may_ninf, n);
    memcpy(out->may_nan, b->may_nan, n);
    return ER_OK;
}

/* normal(): matmul's normal() of the product with the bias as C (the epilogue in compute; result.h) */
static er_status lin_normal(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    lin_state *s = (lin_state *)r->state;
    er_format_info fi;
    (void)i;
    er_format_get_info(s->D.format, &fi);
    int64_t n = er_optensor_count(&r->out[0]);
    void *buf = malloc((size_t)(n ? n : 1) * (size_t)fi.storage_bytes);
    if (!buf) return msgf(msg, msg_size, ER_ENOMEM, "linear: out of memory");
    er_tensor t = er_tensor_2d(s->D.format, s->D.shape[0], s->D.shape[1], buf);
    er_status st = er_result_normal(s->res, env->compute, env->ftz, &t, msg, msg_size);
    if (st == ER_OK) {
        er_optensor c = er_optensor_make(r->out[0].format, r->out[0].ndim, r->out[0].shape, buf);
        for (int64_t e = 0; e < n; e++) bits[e] = er_ops_load(&c, e);
    }
    free(buf);
    return st;
}

static const er_boundary lin_b[] = {
    {"accumulate", "accumulate", "the products and the bias summed as the matmul standard says (the bias as C)",
     "each output element"},
    {"out", "cast", "the accumulator rounded once to the output format", "each output element"},
};

const er_opdef er_opdef_linear = {
    "linear", 2, 3, lin_inputs, 1, lin_outputs, lin_b, 2, 0xFFFFFFFFu,
    "the matmul standards (normal, any_order, the engine models: exactref check --standard list)", lin_create, NULL,
    lin_free, lin_normal,
};
