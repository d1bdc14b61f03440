/* mma.c: the front door of the exact engine: tensors, er_mma_args and er_mma, validated once
 * (src/validate.c) and routed to a backend (src/route.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_internal.h"
#include "../cuda/er_cuda_backend.h"
#include "../opencl/er_opencl_internal.h"
#include "er_front.h"
#include "host/er_fpenv.h"
#include "host/er_problem.h"

/* ------------------------------------------------------------------------------------------------ */
/* Tensors                                                                                            */

/* A contiguous row-major tensor of nd dimensions (2 or 3). */
static er_tensor tensor_rows(int format, int nd, const int64_t *shape, void *data)
{
    er_tensor t;
    memset(&t, 0, sizeof t);
    t.format = format;
    t.ndim = nd;
    int64_t step = 1;
    for (int d = nd - 1; d >= 0; d--) {
        t.shape[d] = shape[d];
        t.strides[d] = step;
        step *= shape[d];
    }
    t.data = data;
    return t;
}

er_tensor er_tensor_2d(int format, int64_t rows, int64_t cols, void *data)
{
    const int64_t shape[2] = {rows, cols};
    return tensor_rows(format, 2, shape, data);
}

er_tensor er_tensor_3d(int format, int64_t batch, int64_t rows, int64_t cols, void *data)
{
    const int64_t shape[3] = {batch, rows, cols};
    return tensor_rows(format, 3, shape, data);
}

er_tensor er_front_swap_dims(er_tensor t, int a, int b)
{
    int64_t s = t.shape[a];
    t.shape[a] = t.shape[b];
    t.shape[b] = s;
    s = t.strides[a];
    t.strides[a] = t.strides[b];
    t.strides[b] = s;
    return t;
}

er_tensor er_tensor_transpose(er_tensor t) { return er_front_swap_dims(t, t.ndim - 2, t.ndim - 1); }

void er_mma_args_init(er_mma_args *args)
{
    memset(args, 0, sizeof *args);
    args->rounding = ER_RND_NEAREST_EVEN;
    args->strategy = ER_STRATEGY_AUTO;
    args->backend = ER_BACKEND_AUTO;
    args->device = -1;
}

/* ------------------------------------------------------------------------------------------------ */
/* er_mma                                                                                             */

static int mma_on_device(void *ctx, int backend, int device, char *msg, size_t msg_size)
{
    er_problem Q = *(const er_problem *)ctx;
    Q.device = device;
    Q.msg = msg;
    Q.msg_size = msg_size;
    return backend == ER_BACKEND_OPENCL ? er_opencl_mma(&Q) : er_cuda_mma(&Q);
}

static int mma_on_cpu(void *ctx)
{
    er_problem *P = (er_problem *)ctx;
    /* strategy 3 (exact64): the engine applies the summaries' test itself, on its binary64 copies, per
     * block of rows (cpu/cpu_mma.c), instead of a separate pass over both operands here */
    return er_cpu_mma(P);
}

static const er_route_op mma_op = {mma_on_device, mma_on_cpu, 0, 1, 1, 0};

er_status er_mma(er_mma_args *args) { return er_front_mma_keep(args, NULL, NULL); }

static er_status mma_keep_in(er_mma_args *args, double *keep_s, int *keep_s_ok)
{
    er_problem P;
    char note[256];
    int st, ran;
    if (keep_s_ok) *keep_s_ok = 0;
    if (!args) return ER_EINVAL;
    if (args->msg && args->msg_size) args->msg[0] = 0;
    if ((st = er_problem_validate(&P, args, args->d, args->lo, args->hi, args->odd, args->msg, args->msg_size)) != ER_OK)
        return st;
    P.keep_s = keep_s_ok ? keep_s : NULL;
    P.keep_s_ok = keep_s_ok;
    st = er_route(&mma_op, &P, args->backend, args->device, P.batch * P.m * P.n * P.k, &ran, note, sizeof note,
                  args->msg, args->msg_size);
    if (args->stats) {
        if (ran != ER_BACKEND_CPU) {
            if (st == ER_OK) {
                args->stats->backend = ran;
                args->stats->note[0] = '\0';
            }
        } else {
            /* the CPU engine filled the counts; the reason it ran is the router's */
            snprintf(args->stats->note, sizeof args->stats->note, "%s", note);
        }
    }
    if (st == ER_OK && ran != ER_BACKEND_CPU && args->progress) args->progress(args->progress_ctx, 1.0); /* a device: its end */
    return st;
}

/* the default floating-point environment for the call (host/er_fpenv.h) */
er_status er_front_mma_keep(er_mma_args *args, double *keep_s, int *keep_s_ok)
{
    er_fpenv fe;
    er_status st;
    er_fpenv_enter(&fe);
    st = mma_keep_in(args, keep_s, keep_s_ok);
    er_fpenv_leave(&fe);
    return st;
}
