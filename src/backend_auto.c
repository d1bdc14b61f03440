/* backend_auto.c: which backend ER_BACKEND_AUTO runs, and why (include/exactref/mma.h). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/config.h"
#include "exactref/exactref.h"
#include "../opencl/er_opencl_internal.h"
#include "er_front.h"
#include "host/er_msg.h"

#if ER_HAVE_OPENCL
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif
#endif

/* What the machine has, probed once per process. */
static struct {
    int cuda;          /* CUDA devices */
    char cuda_why[256];
    int ocl_index;     /* the first OpenCL GPU or accelerator, over all platforms' devices; -1: none */
    int ocl_devices;   /* OpenCL devices in all */
    char ocl_name[128];
} probe;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_machine(void)
{
    probe.cuda = er_cuda_device_count_(probe.cuda_why, sizeof probe.cuda_why);
    probe.ocl_index = -1;
#if ER_HAVE_OPENCL
    cl_uint np = 0;
    cl_platform_id plats[16];
    int idx = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) np = 0;
    if (np > 16) np = 16;
    for (cl_uint i = 0; i < np; i++) {
        cl_device_id ids[64];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 64, ids, &nd) != CL_SUCCESS) continue;
        if (nd > 64) nd = 64;
        for (cl_uint j = 0; j < nd; j++, idx++) {
            cl_device_type t = 0;
            if (clGetDeviceInfo(ids[j], CL_DEVICE_TYPE, sizeof t, &t, NULL) != CL_SUCCESS) continue;
            if (probe.ocl_index < 0 && (t & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR))) {
                probe.ocl_index = idx;
                if (clGetDeviceInfo(ids[j], CL_DEVICE_NAME, sizeof probe.ocl_name - 1, probe.ocl_name, NULL) != CL_SUCCESS)
                    strcpy(probe.ocl_name, "?");
            }
        }
    }
    probe.ocl_devices = idx;
#endif
}

#define say er_msgf /* host/er_msg.h: the sentence into why, the backend returned */

int er_backend_auto(int64_t macs, int device, char *why, size_t why_size)
{
    const char *env = getenv("EXACTREF_BACKEND");
    (void)device;
    if (env && *env) {
        if (!strcmp(env, "cpu")) return say(why, why_size, ER_BACKEND_CPU, "EXACTREF_BACKEND=cpu, whatever the size");
        if (!strcmp(env, "opencl")) return say(why, why_size, ER_BACKEND_OPENCL, "EXACTREF_BACKEND=opencl, whatever the size");
        if (!strcmp(env, "cuda")) return say(why, why_size, ER_BACKEND_CUDA, "EXACTREF_BACKEND=cuda, whatever the size");
        if (strcmp(env, "auto")) /* a typo must not silently mean the CPU: the callers refuse it */
            return say(why, why_size, -1, "EXACTREF_BACKEND=\"%.100s\" is not one of cpu, opencl, cuda, auto (or empty)",
                       env);
    }
    if (macs < ER_AUTO_DEVICE_MACS)
        return say(why, why_size, ER_BACKEND_CPU,
                   "%lld multiply-adds, below 2^30: a device's start-up would cost more than the work",
                   (long long)macs);
    pthread_once(&probe_once, probe_machine);
    if (probe.cuda > 0) return say(why, why_size, ER_BACKEND_CUDA, "%d CUDA device(s)", probe.cuda);
    if (probe.ocl_index >= 0)
        return say(why, why_size, ER_BACKEND_OPENCL, "no CUDA device: %s; OpenCL device %d (%s) is a GPU or accelerator",
                   probe.cuda_why, probe.ocl_index, probe.ocl_name);
    return say(why, why_size, ER_BACKEND_CPU,
               "no CUDA device: %s; no OpenCL GPU or accelerator among %d OpenCL device(s), and OpenCL on a "
               "CPU (such as PoCL) is slower than the CPU backend's fast path",
               probe.cuda_why, probe.ocl_devices);
}

/* The OpenCL device AUTO uses (-1: the backend's own default). */
int er_backend_auto_opencl_device_(void)
{
    const char *env = getenv("EXACTREF_OPENCL_DEVICE");
    if (env && *env) return -1; /* the user's choice stands */
    pthread_once(&probe_once, probe_machine);
    return probe.ocl_index;
}

int er_cuda_devices(char *why, size_t why_size) { return er_cuda_device_count_(why, why_size); }

er_status er_opencl_describe(char *buf, size_t size) { return er_opencl_describe_devices(buf, size); }
