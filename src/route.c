/* route.c: the one route-and-fallback function of the front door: which backend runs an operation
 * (er_mma: src/mma.c, normal(): src/normal.c, the bounds: src/tolerance.c, the conversions: src/convert.c), and what happens when a device fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_front.h"
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
