/* cuda_loader.c: the CUDA backend of the exact engine, loaded at run time (placeholder). */
#include <stdio.h>

#include "../cpu/cpu_internal.h"

int er_cuda_mma(er_mma_args *args)
{
    if (args->msg && args->msg_size)
        snprintf(args->msg, args->msg_size, "the CUDA backend of the exact engine is not built yet; use the CPU "
                                            "or OpenCL backend (the same bits)");
    return ER_EUNSUPPORTED;
}
