/* er_cuda_module.cuh: what the CUDA backend module's translation units share (er_cuda_mma.cu,
 * er_cuda_bounds.cu): the export macro, messages and CUDA errors, the device choice, and buffers that
 * live on the device or, in the host pass, in host memory.
 *
 * Everything here is in an anonymous namespace: each translation unit has its own copy, and nothing but
 * the er_cuda_backend_* entry points leaves the module.  Nothing of libexactref is linked (the core is
 * header-only).
 */
#ifndef ER_CUDA_MODULE_CUH
#define ER_CUDA_MODULE_CUH

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../host/er_msg.h"

#if !defined(__CUDACC__)
#error "the CUDA backend module is compiled by nvcc"
#endif

#define ER_CUM_EXPORT extern "C" __attribute__((visibility("default")))
/* Functions of the kernels that the host pass runs too. */
#define ER_KFN __host__ __device__ __forceinline__

namespace {

/* msg receives the sentence (may be NULL); returns st: the host helpers' message helper. */
#define er_cum_fail er_msgf

/* Errors that mean "no usable CUDA here" rather than "the device failed". */
bool er_cum_is_nodevice(cudaError_t e)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary ||
           e == cudaErrorDevicesUnavailable || e == cudaErrorCallRequiresNewerDriver ||
           e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice;
}

int er_cum_cuda_fail(char *msg, size_t msg_size, cudaError_t e, const char *what)
{
    int st = er_cum_fail(msg, msg_size, er_cum_is_nodevice(e) ? ER_ENODEVICE : ER_EDEVICE, "CUDA %s: %s: %s", what,
                         cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear a non-sticky error; a sticky one stays with the context */
    return st;
}

/* The device index: device, or -1: EXACTREF_CUDA_DEVICE, else 0.  -1 on a bad index (msg set). */
int er_cum_pick_index(int device, char *msg, size_t msg_size)
{
    if (device >= 0) return device;
    if (device < -1) {
        er_cum_fail(msg, msg_size, ER_EINVAL, "device index %d: expected -1 or an index >= 0", device);
        return -1;
    }
    const char *env = getenv("EXACTREF_CUDA_DEVICE");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (*end != '\0' || v < 0 || v > 1 << 20) {
            er_cum_fail(msg, msg_size, ER_EINVAL, "EXACTREF_CUDA_DEVICE=\"%s\" is not a device index", env);
            return -1;
        }
        return (int)v;
    }
    return 0;
}

/*
 * Where a run's buffers live: on CUDA device `device` (>= 0), or in host memory for the host pass
 * (device < 0), where the kernels' per-element functions run on the CPU in place of the launches.
 * er_cum_open makes the device current (remembering the caller's) and says how much memory a run may
 * use; er_cum_close restores the caller's device.
 */
typedef struct {
    int device; /* -1: the host pass */
    int prev;   /* the calling thread's device before, or -1 */
} er_cum_dev;

int er_cum_open(er_cum_dev *d, int device, int host, uint64_t *mem_limit, char *msg, size_t msg_size)
{
    int count = 0, index;
    size_t free_b = 0, total_b = 0;
    cudaError_t e;
    d->device = -1;
    d->prev = -1;
    if (host) return ER_OK;
    index = er_cum_pick_index(device, msg, msg_size);
    if (index < 0) return ER_EINVAL;
    if ((e = cudaGetDeviceCount(&count)) != cudaSuccess) {
        (void)cudaGetLastError();
        return er_cum_fail(msg, msg_size, ER_ENODEVICE, "no CUDA device: %s (cudaGetDeviceCount: %s)",
                           cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (count <= 0) return er_cum_fail(msg, msg_size, ER_ENODEVICE, "no CUDA device: the CUDA runtime found none");
    if (index >= count)
        return er_cum_fail(msg, msg_size, ER_ENODEVICE, "no CUDA device %d (%d device%s)", index, count,
                           count == 1 ? "" : "s");
    if ((e = cudaGetDevice(&d->prev)) != cudaSuccess) {
        d->prev = -1;
        return er_cum_cuda_fail(msg, msg_size, e, "cudaGetDevice");
    }
    if ((e = cudaSetDevice(index)) != cudaSuccess) return er_cum_cuda_fail(msg, msg_size, e, "cudaSetDevice");
    if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess)
        return er_cum_cuda_fail(msg, msg_size, e, "cudaMemGetInfo");
    if (free_b / 2 < *mem_limit) *mem_limit = free_b / 2;
    d->device = index;
    return ER_OK;
}

void er_cum_close(er_cum_dev *d)
{
    if (d->prev >= 0) cudaSetDevice(d->prev);
    d->prev = -1;
}

/* A buffer of n bytes where the kernels read it (n == 0: NULL, ER_OK). */
int er_cum_alloc(const er_cum_dev *d, void **p, uint64_t n, char *msg, size_t msg_size)
{
    *p = NULL;
    if (!n) return ER_OK;
    if (d->device < 0) {
        *p = malloc((size_t)n);
        if (!*p) return er_cum_fail(msg, msg_size, ER_ENOMEM, "CUDA host pass: out of memory for %llu bytes",
                                    (unsigned long long)n);
        return ER_OK;
    }
    cudaError_t e = cudaMalloc(p, (size_t)n);
    if (e != cudaSuccess) {
        *p = NULL;
        return er_cum_cuda_fail(msg, msg_size, e, "cudaMalloc");
    }
    return ER_OK;
}

void er_cum_free(const er_cum_dev *d, void *p)
{
    if (!p) return;
    if (d->device < 0) free(p);
    else cudaFree(p);
}

/* height rows of width bytes, between the host (pitch hpitch) and a buffer (pitch bpitch): to the buffer
 * when up, else from it.  Pitches in bytes. */
int er_cum_copy2d(const er_cum_dev *d, int up, void *buf, size_t bpitch, void *host, size_t hpitch, size_t width,
                  size_t height, char *msg, size_t msg_size)
{
    if (!width || !height) return ER_OK;
    if (d->device < 0) {
        for (size_t r = 0; r < height; r++) {
            unsigned char *b = (unsigned char *)buf + r * bpitch, *h = (unsigned char *)host + r * hpitch;
            if (up) memcpy(b, h, width);
            else memcpy(h, b, width);
        }
        return ER_OK;
    }
    cudaError_t e;
    if (bpitch == width && hpitch == width)
        e = up ? cudaMemcpy(buf, host, width * height, cudaMemcpyHostToDevice)
               : cudaMemcpy(host, buf, width * height, cudaMemcpyDeviceToHost);
    else
        e = up ? cudaMemcpy2D(buf, bpitch, host, hpitch, width, height, cudaMemcpyHostToDevice)
               : cudaMemcpy2D(host, hpitch, buf, bpitch, width, height, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return er_cum_cuda_fail(msg, msg_size, e, up ? "cudaMemcpy (to the device)" : "cudaMemcpy (from the device)");
    return ER_OK;
}

int er_cum_copy(const er_cum_dev *d, int up, void *buf, void *host, size_t bytes, char *msg, size_t msg_size)
{
    return er_cum_copy2d(d, up, buf, bytes, host, bytes, bytes, 1, msg, msg_size);
}

/* After a launch: its error, then its execution's. */
int er_cum_sync(const er_cum_dev *d, const char *kernel, char *msg, size_t msg_size)
{
    cudaError_t e;
    char what[128];
    if (d->device < 0) return ER_OK;
    if ((e = cudaGetLastError()) != cudaSuccess) {
        snprintf(what, sizeof what, "kernel launch (%s)", kernel);
        return er_cum_cuda_fail(msg, msg_size, e, what);
    }
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
        snprintf(what, sizeof what, "kernel execution (%s)", kernel);
        return er_cum_cuda_fail(msg, msg_size, e, what);
    }
    return ER_OK;
}

/* Blocks of `threads` for n elements of a grid-stride loop. */
unsigned er_cum_blocks(uint64_t n, unsigned threads)
{
    uint64_t want = (n + threads - 1) / threads;
    return want > ((uint64_t)1 << 30) ? 1u << 30 : (unsigned)(want ? want : 1);
}

} /* namespace */

#endif /* ER_CUDA_MODULE_CUH */
