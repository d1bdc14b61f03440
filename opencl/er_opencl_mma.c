/* er_opencl_mma.c: the exact engine on an OpenCL device (placeholder until the kernels land). */
#include <stdio.h>

#include "../cpu/cpu_internal.h"
#include "exactref/exactref.h"

int er_opencl_mma(er_mma_args *args)
{
    if (args->msg && args->msg_size)
        snprintf(args->msg, args->msg_size, "the OpenCL backend of the exact engine is not built yet; use the CPU "
                                            "backend (the same bits)");
    return ER_EUNSUPPORTED;
}
