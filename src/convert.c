/* convert.c: the front door's array conversions: er_convert_array to the CPU, er_convert_batch routed to a backend. */
#include <stdio.h>

#include "../cpu/cpu_internal.h"
#include "../opencl/er_opencl_internal.h"
#include "er_front.h"
#include "exactref/exactref.h"

er_status er_convert_array(int from, int to, const void *src, void *dst, size_t n, int dir,
                           unsigned opts, unsigned *flags_or, size_t *bad_index)
{
    return er_cpu_convert_array(from, to, src, dst, n, dir, opts, flags_or, bad_index);
}

#define ER_CONVERT_OPTS_ (ER_OPT_SATURATE | ER_OPT_FTZ_IN | ER_OPT_FTZ_OUT)

typedef struct {
    const uint32_t *spec;
    const uint64_t *src;
    uint64_t *dst;
    uint32_t *flags;
    size_t n;
} er_convert_job_;

static int er_convert_on_device_(void *ctx, int backend, int device, char *msg, size_t msg_size)
{
    er_convert_job_ *j = (er_convert_job_ *)ctx;
    if (backend == ER_BACKEND_OPENCL)
        return er_opencl_convert_mixed(j->spec, j->src, j->dst, j->flags, j->n, device, msg, msg_size);
    if (msg && msg_size) snprintf(msg, msg_size, "the CUDA backend has no batch conversion; use the CPU or OpenCL");
    return ER_EUNSUPPORTED;
}

static int er_convert_on_cpu_(void *ctx)
{
    er_convert_job_ *j = (er_convert_job_ *)ctx;
    return er_cpu_convert_batch(j->spec, j->src, j->dst, j->flags, j->n);
}

er_status er_convert_batch(const uint32_t *spec, const uint64_t *src, uint64_t *dst, uint32_t *flags,
                           size_t n, int backend, int device, char *msg, size_t msg_size)
{
    /* Conversions are cheap next to a device's start: ER_BACKEND_AUTO keeps them on the CPU (0 macs). */
    static const er_route_op op = {er_convert_on_device_, er_convert_on_cpu_, 0, 1, 0, 1};
    er_convert_job_ j;
    size_t i;
    int ran;
    if (msg && msg_size) msg[0] = '\0';
    if (backend != ER_BACKEND_AUTO && backend != ER_BACKEND_CPU && backend != ER_BACKEND_OPENCL &&
        backend != ER_BACKEND_CUDA) {
        if (msg && msg_size) snprintf(msg, msg_size, "er_convert_batch: unknown backend %d", backend);
        return ER_EINVAL;
    }
    if (n && (!spec || !src || !dst || !flags)) {
        if (msg && msg_size) snprintf(msg, msg_size, "er_convert_batch: a null array");
        return ER_EINVAL;
    }
    for (i = 0; i < n; i++) {
        uint32_t s = spec[i];
        if ((s & 0xffu) >= ER_FMT_COUNT || ((s >> 8) & 0xffu) >= ER_FMT_COUNT ||
            ((s >> 16) & 0xffu) >= ER_RND_COUNT || ((s >> 24) & ~(uint32_t)ER_CONVERT_OPTS_) != 0u) {
            if (msg && msg_size)
                snprintf(msg, msg_size, "er_convert_batch: spec[%lu] = 0x%08lx is not from | to << 8 | dir << 16 | "
                         "opts << 24", (unsigned long)i, (unsigned long)s);
            return ER_EINVAL;
        }
    }
    if (n == 0) return ER_OK;
    j.spec = spec;
    j.src = src;
    j.dst = dst;
    j.flags = flags;
    j.n = n;
    return (er_status)er_route(&op, &j, backend, device, 0, &ran, NULL, 0, msg, msg_size);
}
