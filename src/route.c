/* route.c: the one route-and-fallback function of the front door: which backend runs an operation
 * (er_mma, normal(), the bounds: src/tolerance.c), and what happens when a device fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_internal.h"
#include "../cuda/er_cuda_backend.h"
#include "../opencl/er_opencl_internal.h"
#include "er_front.h"
#include "host/er_fpenv.h"
#include "host/er_problem.h"
#include "exactref/config.h"

int er_route(const er_route_op *op, void *ctx, int backend, int device, int64_t macs, int *ran, char *note,
             size_t note_size, char *msg, size_t msg_size)
{
    int st, be = backend;
    if (note && note_size) note[0] = '\0';
    *ran = ER_BACKEND_CPU;
    if (be == ER_BACKEND_OPENCL || be == ER_BACKEND_CUDA) {
        /* the caller's choice: its error is the answer, unless it declines work the CPU can do */
        *ran = be;
        st = op->on_device(ctx, be, device, msg, msg_size);
        if (st == ER_OK) {
            *ran = be;
            return ER_OK;
        }
        if (!(op->declined_to_cpu && st == ER_EUNSUPPORTED)) return st;
        *ran = ER_BACKEND_CPU;
        if (msg && msg_size) msg[0] = '\0';
    } else if (be == ER_BACKEND_AUTO) {
        char why[256], dmsg[512];
        why[0] = '\0';
        be = er_backend_auto(macs, device, why, sizeof why);
        if (be < 0) { /* EXACTREF_BACKEND holds something else: the caller's mistake */
            if (msg && msg_size) snprintf(msg, msg_size, "%s", why);
            return ER_EINVAL;
        }
        if (op->notes && be == ER_BACKEND_CPU && ER_HAVE_CUDA && macs >= ER_AUTO_DEVICE_MACS &&
            !getenv("EXACTREF_BACKEND") && note && note_size)
            /* a build with the CUDA backend on a machine without a usable device: say so, once per call */
            snprintf(note, note_size, "no device used: %.230s", why);
        if (be != ER_BACKEND_CPU) {
            if (be == ER_BACKEND_OPENCL && device < 0) device = er_backend_auto_opencl_device_();
            dmsg[0] = '\0';
            st = op->on_device(ctx, be, device, dmsg, sizeof dmsg);
            if (st == ER_OK) {
                *ran = be;
                return ER_OK;
            }
            if (op->auto_einval_returns && st == ER_EINVAL) { /* the caller's mistake: said as such */
                if (msg && msg_size) snprintf(msg, msg_size, "%s", dmsg);
                return st;
            }
            if (op->notes && note && note_size)
                snprintf(note, note_size, "the %s backend failed (%s); computed on the CPU instead (the same bits)",
                         be == ER_BACKEND_OPENCL ? "OpenCL" : "CUDA", dmsg[0] ? dmsg : er_status_string(st));
        }
    }
    else if (be != ER_BACKEND_CPU && op->other_fails)
        return ER_EUNSUPPORTED;
    /* ER_BACKEND_CPU (or an unknown backend id, which the CPU engine has always taken) */
    return op->on_cpu(ctx);
}

/* ------------------------------------------------------------------------------------------------ */
/* normal()                                                                                           */

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
