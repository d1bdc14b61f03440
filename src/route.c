/* route.c: the one route-and-fallback function of the front door: which backend runs an operation
 * (er_mma, normal(), the bounds), and what happens when a device fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_internal.h"
#include "../cuda/er_cuda_backend.h"
#include "../opencl/er_opencl_internal.h"
#include "er_front.h"
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
/* The bounds: each batch the CPU prepared goes to the result's backend                              */

typedef struct {
    const er_mma_args *args;
    int64_t macs;
    char *msg;
    size_t msg_size;
    int *on_cpu;
    const er_bjob *job;
    er_bounds *out;
    int64_t e0;
} bounds_ctx;

static int bounds_on_device(void *ctx, int backend, int device, char *msg, size_t msg_size)
{
    bounds_ctx *c = (bounds_ctx *)ctx;
    if (backend == ER_BACKEND_OPENCL) return er_opencl_bounds_batch(c->job, c->out, c->e0, device, msg, msg_size);
    return er_cuda_bounds_batch(c->job, c->out, c->e0, device, msg, msg_size);
}

static int bounds_on_cpu(void *ctx)
{
    bounds_ctx *c = (bounds_ctx *)ctx;
    *c->on_cpu = 1; /* the CPU backend, or a device that cannot (no fp64): the same bits here */
    return er_cpu_bounds_batch(c->job, c->out, c->e0, c->args->threads);
}

/* A device that cannot (ER_EUNSUPPORTED, e.g. no fp64) leaves the batch to the CPU, whatever the
 * backend; under AUTO any failure does, as er_mma's does. */
static const er_route_op bounds_op = {bounds_on_device, bounds_on_cpu, 1, 0, 0, 0};

static int bounds_sink(void *ctx, const er_bjob *job, er_bounds *out, int64_t e0)
{
    bounds_ctx *c = (bounds_ctx *)ctx;
    int ran;
    c->job = job;
    c->out = out;
    c->e0 = e0;
    return er_route(&bounds_op, c, c->args->backend, c->args->device, c->macs, &ran, NULL, 0, c->msg, c->msg_size);
}

int er_front_bounds(const er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                    const er_slack *slack, er_bounds *out, char *msg, size_t msg_size, int *on_cpu)
{
    er_problem P;
    bounds_ctx c;
    int st, dummy_on_cpu = 0, target;
    if (!on_cpu) on_cpu = &dummy_on_cpu;
    *on_cpu = 0;
    if ((st = er_problem_validate(&P, args, (er_tensor *)rounded, args->lo, args->hi, args->odd, args->msg,
                                  args->msg_size)) != ER_OK)
        return st;
    P.stats = NULL;
    memset(&c, 0, sizeof c);
    c.args = args;
    c.macs = P.batch * P.m * P.n * P.k;
    c.msg = msg;
    c.msg_size = msg_size;
    c.on_cpu = on_cpu;
    /* where the elements will run: the CPU's extra copies only where they serve (a device that then
     * declines leaves the elements to the CPU, which computes the same bits without them) */
    target = args->backend;
    if (target == ER_BACKEND_AUTO) target = er_backend_auto(c.macs, args->device, NULL, 0);
    return er_cpu_bounds(&P, target, compute, ftz, std, slack, out, bounds_sink, &c);
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

int er_front_normal(const er_mma_args *args, int compute, int ftz, er_tensor *out, char *msg, size_t msg_size)
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
