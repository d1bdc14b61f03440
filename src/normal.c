/* normal.c: normal(), the textbook order's emulation (include/exactref/core/er_d64.h, er_mma.h), validated
 * once (src/validate.c) and routed to a backend (src/route.c) in the default floating-point environment. */
#include <stdio.h>

#include "../cpu/cpu_internal.h"
#include "../cuda/er_cuda_backend.h"
#include "../opencl/er_opencl_internal.h"
#include "er_front.h"
#include "host/er_fpenv.h"
#include "host/er_msg.h"
#include "host/er_problem.h"

typedef struct {
    const er_problem *P;
    int compute, ftz;
} normal_ctx;

static int normal_on_device(void *ctx, int backend, int device, char *msg, size_t msg_size)
{
    normal_ctx *c = (normal_ctx *)ctx;
    er_problem Q = *c->P;
    Q.device = device;
    Q.msg = msg;
    Q.msg_size = msg_size;
    return backend == ER_BACKEND_OPENCL ? er_opencl_normal(&Q, c->compute, c->ftz) : er_cuda_normal(&Q, c->compute, c->ftz);
}

static int normal_on_cpu(void *ctx)
{
    normal_ctx *c = (normal_ctx *)ctx;
    if (c->P->msg && c->P->msg_size) c->P->msg[0] = '\0';
    return er_cpu_normal(c->P, c->compute, c->ftz, c->P->d);
}

/* An explicitly chosen device's error is the answer; under AUTO any failure leaves it to the CPU. */
static const er_route_op normal_op = {normal_on_device, normal_on_cpu, 0, 0, 0, 1};

static int normal_in(const er_mma_args *args, int compute, int ftz, er_tensor *out, char *msg, size_t msg_size)
{
    er_problem P;
    normal_ctx c;
    int st, ran;
    if (msg && msg_size) msg[0] = '\0';
    if (!args || !out) return ER_EINVAL;
    if (compute < 0 || compute >= ER_FMT_COUNT || er_fmt_get(compute).kind != ER_KIND_FLOAT)
        return er_msgf(msg, msg_size, ER_EINVAL, "normal(): the compute format must be a float format");
    if ((st = er_problem_validate(&P, args, out, NULL, NULL, NULL, msg, msg_size)) != ER_OK) return st;
    P.stats = NULL;
    c.P = &P;
    c.compute = compute;
    c.ftz = ftz ? 1 : 0;
    return er_route(&normal_op, &c, args->backend, args->device, P.batch * P.m * P.n * P.k, &ran, NULL, 0, msg,
                    msg_size);
}

/* the default floating-point environment for the call (host/er_fpenv.h) */
int er_front_normal(const er_mma_args *args, int compute, int ftz, er_tensor *out, char *msg, size_t msg_size)
{
    er_fpenv fe;
    int st;
    er_fpenv_enter(&fe);
    st = normal_in(args, compute, ftz, out, msg, msg_size);
    er_fpenv_leave(&fe);
    return st;
}
