/* opencl_stub.c: the OpenCL entry points of a build without the OpenCL backend. */
#include <stdio.h>

#include "../opencl/er_opencl_internal.h"
#include "exactref/exactref.h"

er_status er_opencl_convert_u64(int from, int to, const uint64_t *src, uint64_t *dst, size_t n,
                                int dir, unsigned opts, int device, char *msg, size_t msg_size)
{
    (void)from; (void)to; (void)src; (void)dst; (void)n; (void)dir; (void)opts; (void)device;
    if (msg && msg_size) snprintf(msg, msg_size, "this build of exactref has no OpenCL backend");
    return ER_EUNSUPPORTED;
}

er_status er_opencl_describe_devices(char *buf, size_t size)
{
    if (buf && size) snprintf(buf, size, "OpenCL: not built in\n");
    return ER_EUNSUPPORTED;
}

er_status er_opencl_convert_mixed(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                  uint32_t *flags, size_t n, int device, char *msg, size_t msg_size)
{
    (void)spec; (void)src; (void)dst; (void)flags; (void)n; (void)device;
    if (msg && msg_size) snprintf(msg, msg_size, "this build of exactref has no OpenCL backend");
    return ER_EUNSUPPORTED;
}

int er_opencl_mma(const er_problem *P)
{
    if (P->msg && P->msg_size)
        snprintf(P->msg, P->msg_size, "this build of exactref has no OpenCL backend (it needs the OpenCL "
                                            "headers and ICD loader at build time)");
    return ER_EUNSUPPORTED;
}

/* No message: the caller reports ER_EUNSUPPORTED as such (normal()), or the CPU computes (the bounds). */
int er_opencl_normal(const er_problem *P, int compute, int flush_to_zero)
{
    (void)P; (void)compute; (void)flush_to_zero;
    return ER_EUNSUPPORTED;
}

int er_opencl_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg, size_t msg_size)
{
    (void)job; (void)out; (void)e0; (void)device; (void)msg; (void)msg_size;
    return ER_EUNSUPPORTED;
}
