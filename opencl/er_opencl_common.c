/* er_opencl_common.c: what the OpenCL backend's host files share (er_opencl.c: conversions,
 * er_opencl_mma.c: the exact engine and normal(), er_opencl_bounds.c: the bounds): messages, OpenCL
 * error names, the device index over all platforms, device strings, building a program with its log on
 * failure, and the fault-injection hook (EXACTREF_OPENCL_FAULT).  No global state.
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_opencl_common.h"

/* ---- Messages. ---- */


/* Append to buf (NUL-terminated, truncated at size); *len tracks the length wanted so far. */
void er_append_(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int k;
    va_start(ap, fmt);
    if (*len < size)
        k = vsnprintf(buf + *len, size - *len, fmt, ap);
    else
        k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k > 0) *len += (size_t)k;
}

const char *er_cl_error_name_(cl_int e)
{
    switch (e) {
#define ER_E_(c) case c: return #c;
    ER_E_(CL_SUCCESS)
    ER_E_(CL_DEVICE_NOT_FOUND)
    ER_E_(CL_DEVICE_NOT_AVAILABLE)
    ER_E_(CL_COMPILER_NOT_AVAILABLE)
    ER_E_(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    ER_E_(CL_OUT_OF_RESOURCES)
    ER_E_(CL_OUT_OF_HOST_MEMORY)
    ER_E_(CL_PROFILING_INFO_NOT_AVAILABLE)
    ER_E_(CL_MEM_COPY_OVERLAP)
    ER_E_(CL_IMAGE_FORMAT_MISMATCH)
    ER_E_(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    ER_E_(CL_BUILD_PROGRAM_FAILURE)
    ER_E_(CL_MAP_FAILURE)
    ER_E_(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    ER_E_(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    ER_E_(CL_COMPILE_PROGRAM_FAILURE)
    ER_E_(CL_LINKER_NOT_AVAILABLE)
    ER_E_(CL_LINK_PROGRAM_FAILURE)
    ER_E_(CL_DEVICE_PARTITION_FAILED)
    ER_E_(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    ER_E_(CL_INVALID_VALUE)
    ER_E_(CL_INVALID_DEVICE_TYPE)
    ER_E_(CL_INVALID_PLATFORM)
    ER_E_(CL_INVALID_DEVICE)
    ER_E_(CL_INVALID_CONTEXT)
    ER_E_(CL_INVALID_QUEUE_PROPERTIES)
    ER_E_(CL_INVALID_COMMAND_QUEUE)
    ER_E_(CL_INVALID_HOST_PTR)
    ER_E_(CL_INVALID_MEM_OBJECT)
    ER_E_(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    ER_E_(CL_INVALID_IMAGE_SIZE)
    ER_E_(CL_INVALID_SAMPLER)
    ER_E_(CL_INVALID_BINARY)
    ER_E_(CL_INVALID_BUILD_OPTIONS)
    ER_E_(CL_INVALID_PROGRAM)
    ER_E_(CL_INVALID_PROGRAM_EXECUTABLE)
    ER_E_(CL_INVALID_KERNEL_NAME)
    ER_E_(CL_INVALID_KERNEL_DEFINITION)
    ER_E_(CL_INVALID_KERNEL)
    ER_E_(CL_INVALID_ARG_INDEX)
    ER_E_(CL_INVALID_ARG_VALUE)
    ER_E_(CL_INVALID_ARG_SIZE)
    ER_E_(CL_INVALID_KERNEL_ARGS)
    ER_E_(CL_INVALID_WORK_DIMENSION)
    ER_E_(CL_INVALID_WORK_GROUP_SIZE)
    ER_E_(CL_INVALID_WORK_ITEM_SIZE)
    ER_E_(CL_INVALID_GLOBAL_OFFSET)
    ER_E_(CL_INVALID_EVENT_WAIT_LIST)
    ER_E_(CL_INVALID_EVENT)
    ER_E_(CL_INVALID_OPERATION)
    ER_E_(CL_INVALID_GL_OBJECT)
    ER_E_(CL_INVALID_BUFFER_SIZE)
    ER_E_(CL_INVALID_MIP_LEVEL)
    ER_E_(CL_INVALID_GLOBAL_WORK_SIZE)
    ER_E_(CL_INVALID_PROPERTY)
    ER_E_(CL_INVALID_IMAGE_DESCRIPTOR)
    ER_E_(CL_INVALID_COMPILER_OPTIONS)
    ER_E_(CL_INVALID_LINKER_OPTIONS)
    ER_E_(CL_INVALID_DEVICE_PARTITION_COUNT)
    ER_E_(CL_PLATFORM_NOT_FOUND_KHR)
#undef ER_E_
    default:
        return "unknown OpenCL error";
    }
}

/* What an error code usually means, for the errors a working program meets at run time ("" else). */
static const char *er_cl_error_hint_(cl_int e)
{
    switch (e) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return ": out of device memory";
    case CL_OUT_OF_RESOURCES: return ": out of device resources (memory), or the device was lost";
    case CL_OUT_OF_HOST_MEMORY: return ": out of host memory";
    case CL_DEVICE_NOT_AVAILABLE: return ": the device is not available (lost, reset or taken)";
    case CL_INVALID_BUFFER_SIZE: return ": a buffer larger than the device allows";
    default: return "";
    }
}

/* "clFoo failed: CL_BAR (-n)[: what it means]", and ER_EDEVICE. */
er_status er_cl_fail_(char *msg, size_t size, const char *call, cl_int e)
{
    er_msg_(msg, size, "OpenCL: %s failed: %s (%d)%s", call, er_cl_error_name_(e), (int)e, er_cl_error_hint_(e));
    return ER_EDEVICE;
}

/* ---- Fault injection (a testing hook): EXACTREF_OPENCL_FAULT=build|nomem|lost. ---- */

int er_cl_fault_(const char *stage)
{
    const char *f = getenv("EXACTREF_OPENCL_FAULT");
    return f && stage && !strcmp(f, stage);
}

cl_mem er_cl_create_buffer_(cl_context ctx, cl_mem_flags flags, size_t size, void *host, cl_int *e)
{
    if (er_cl_fault_("nomem")) {
        *e = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    return clCreateBuffer(ctx, flags, size, host, e);
}

cl_int er_cl_enqueue_kernel_(cl_command_queue q, cl_kernel k, size_t global, size_t local)
{
    if (er_cl_fault_("lost")) return CL_DEVICE_NOT_AVAILABLE;
    return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, NULL);
}

/* ---- Devices: one index over all devices of all platforms, in platform order. ---- */

/*
 * All (platform, device) pairs into *out (malloc'd, caller frees; NULL when there are none).
 * ER_ENODEVICE when there is no platform.  A platform whose devices cannot be listed counts as
 * having none.  Device ids of root devices need no release.
 */
er_status er_cl_enumerate_(er_cl_dev_ **out, size_t *count, cl_uint *nplatforms, char *msg, size_t msg_size)
{
    cl_uint np = 0, i;
    cl_platform_id *plats = NULL;
    er_cl_dev_ *devs = NULL;
    size_t nd = 0;
    cl_int e;
    *out = NULL;
    *count = 0;
    *nplatforms = 0;
    e = clGetPlatformIDs(0, NULL, &np);
    if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && np == 0)) {
        er_msg_(msg, msg_size, "OpenCL: no platform (is an ICD such as pocl-opencl-icd installed?)");
        return ER_ENODEVICE;
    }
    if (e != CL_SUCCESS) return er_cl_fail_(msg, msg_size, "clGetPlatformIDs", e);
    plats = (cl_platform_id *)malloc(np * sizeof *plats);
    if (!plats) return ER_ENOMEM;
    e = clGetPlatformIDs(np, plats, NULL);
    if (e != CL_SUCCESS) {
        free(plats);
        return er_cl_fail_(msg, msg_size, "clGetPlatformIDs", e);
    }
    for (i = 0; i < np; i++) {
        cl_uint k = 0, j;
        cl_device_id *ids;
        er_cl_dev_ *grown;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &k) != CL_SUCCESS || k == 0) continue;
        ids = (cl_device_id *)malloc(k * sizeof *ids);
        grown = (er_cl_dev_ *)realloc(devs, (nd + k) * sizeof *devs);
        if (!ids || !grown) {
            free(ids);
            free(grown ? grown : devs);
            free(plats);
            return ER_ENOMEM;
        }
        devs = grown;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, k, ids, NULL) != CL_SUCCESS) k = 0;
        for (j = 0; j < k; j++) {
            devs[nd].platform = plats[i];
            devs[nd].device = ids[j];
            nd++;
        }
        free(ids);
    }
    free(plats);
    *out = devs;
    *count = nd;
    *nplatforms = np;
    return ER_OK;
}

/* The device of index `device` (-1: EXACTREF_OPENCL_DEVICE, else 0). */
er_status er_cl_pick_(int device, er_cl_dev_ *picked, char *msg, size_t msg_size)
{
    er_cl_dev_ *devs;
    size_t nd;
    cl_uint np;
    long idx = device;
    er_status st;
    if (device < -1) {
        er_msg_(msg, msg_size, "OpenCL: device index %d is invalid (-1 or 0, 1, ...)", device);
        return ER_EINVAL;
    }
    if (device == -1) {
        const char *env = getenv("EXACTREF_OPENCL_DEVICE");
        idx = 0;
        if (env && *env) {
            char *end;
            errno = 0;
            idx = strtol(env, &end, 10);
            if (errno || end == env || *end || idx < 0 || idx > INT_MAX) {
                er_msg_(msg, msg_size, "OpenCL: EXACTREF_OPENCL_DEVICE=\"%s\" is not a device index", env);
                return ER_EINVAL;
            }
        }
    }
    st = er_cl_enumerate_(&devs, &nd, &np, msg, msg_size);
    if (st != ER_OK) return st;
    if ((size_t)idx >= nd) {
        er_msg_(msg, msg_size, "OpenCL: no device %ld (%lu device(s) on %lu platform(s))", idx,
                (unsigned long)nd, (unsigned long)np);
        free(devs);
        return ER_ENODEVICE;
    }
    *picked = devs[idx];
    free(devs);
    return ER_OK;
}

/* clGetDeviceInfo of d, or clGetPlatformInfo of p where d is NULL. */
static cl_int info_(cl_device_id d, cl_platform_id p, cl_uint what, size_t size, void *v, size_t *ret)
{
    return d ? clGetDeviceInfo(d, (cl_device_info)what, size, v, ret)
             : clGetPlatformInfo(p, (cl_platform_info)what, size, v, ret);
}

/* A device's (d) or else a platform's (p) string (malloc'd, NULL on failure). */
static char *info_str_(cl_device_id d, cl_platform_id p, cl_uint what)
{
    size_t sz = 0;
    char *s;
    if (info_(d, p, what, 0, NULL, &sz) != CL_SUCCESS || sz == 0) return NULL;
    s = (char *)malloc(sz + 1);
    if (!s) return NULL;
    if (info_(d, p, what, sz, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    s[sz] = '\0';
    return s;
}

char *er_cl_dev_str_(cl_device_id d, cl_device_info what) { return info_str_(d, NULL, (cl_uint)what); }

char *er_cl_plat_str_(cl_platform_id p, cl_platform_info what) { return info_str_(NULL, p, (cl_uint)what); }

/* ---- Programs. ---- */

er_status er_cl_build_(cl_context ctx, cl_device_id dev, const char *src, size_t len, const char *options,
                       cl_program *prog, char *msg, size_t msg_size)
{
    cl_int e;
    *prog = clCreateProgramWithSource(ctx, 1, &src, &len, &e);
    if (!*prog || e != CL_SUCCESS) {
        *prog = NULL;
        return er_cl_fail_(msg, msg_size, "clCreateProgramWithSource", e);
    }
    /* EXACTREF_OPENCL_FAULT=build: fail as clBuildProgram does, with a log of one line */
    e = er_cl_fault_("build") ? CL_BUILD_PROGRAM_FAILURE : clBuildProgram(*prog, 1, &dev, options, NULL, NULL);
    if (e != CL_SUCCESS) {
        static const char fake_log[] = "<kernel>:1:1: error: build failure injected by EXACTREF_OPENCL_FAULT=build\n";
        size_t sz = 0, len2 = 0;
        char *log = NULL;
        char *name = er_cl_dev_str_(dev, CL_DEVICE_NAME);
        if (er_cl_fault_("build")) {
            log = (char *)malloc(sizeof fake_log);
            if (log) memcpy(log, fake_log, sizeof fake_log);
        } else if (clGetProgramBuildInfo(*prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &sz) == CL_SUCCESS && sz > 0 &&
                   (log = (char *)malloc(sz + 1)) != NULL) {
            if (clGetProgramBuildInfo(*prog, dev, CL_PROGRAM_BUILD_LOG, sz, log, NULL) == CL_SUCCESS)
                log[sz] = '\0';
            else
                log[0] = '\0';
        }
        if (msg && msg_size) {
            msg[0] = '\0';
            er_append_(msg, msg_size, &len2,
                       "OpenCL: clBuildProgram failed: %s (%d) on %s with \"%s\"; build log:\n%s",
                       er_cl_error_name_(e), (int)e, name ? name : "(unnamed device)", options ? options : "",
                       log && log[0] ? log : "(empty)");
        }
        free(log);
        free(name);
        return ER_EDEVICE;
    }
    return ER_OK;
}

er_status er_cl_open_(const er_cl_dev_ *dev, const char *src, size_t len, const char *options, cl_ulong *max_alloc,
                      cl_ulong *global_mem, cl_context *ctx, cl_command_queue *queue, cl_program *prog, char *msg,
                      size_t msg_size)
{
    cl_int e;
    cl_context_properties props[3];
    e = clGetDeviceInfo(dev->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof *max_alloc, max_alloc, NULL);
    if (e != CL_SUCCESS) return er_cl_fail_(msg, msg_size, "clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE)", e);
    e = clGetDeviceInfo(dev->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof *global_mem, global_mem, NULL);
    if (e != CL_SUCCESS) return er_cl_fail_(msg, msg_size, "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)", e);
    props[0] = (cl_context_properties)CL_CONTEXT_PLATFORM;
    props[1] = (cl_context_properties)dev->platform;
    props[2] = 0;
    *ctx = clCreateContext(props, 1, &dev->device, NULL, NULL, &e);
    if (!*ctx || e != CL_SUCCESS) return er_cl_fail_(msg, msg_size, "clCreateContext", e);
    *queue = clCreateCommandQueue(*ctx, dev->device, 0, &e);
    if (!*queue || e != CL_SUCCESS) return er_cl_fail_(msg, msg_size, "clCreateCommandQueue", e);
    return er_cl_build_(*ctx, dev->device, src, len, options, prog, msg, msg_size);
}
