/* er_cuda_convert.cu: the CUDA backend: the shared core's er_convert, one element per thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "../host/er_msg.h"
#include "er_cuda.h"
#include "exactref/core/er_round.h"

#if !defined(__CUDACC__)
#error "er_cuda_convert.cu is compiled by nvcc"
#endif

namespace {

/* One job from its packed spec: the same unpacking as er_batch_reference. */
__host__ __device__ __forceinline__ er_res er_cuda_convert_one_(er_u32 s, er_u64 bits)
{
    return er_convert((er_i32)(s & 0xffu), (er_i32)((s >> 8) & 0xffu), bits, (er_i32)((s >> 16) & 0xffu),
                      (s >> 24) & 0xffu);
}

__global__ void er_cuda_convert_kernel_(const er_u32 *__restrict__ spec, const er_u64 *__restrict__ src,
                                        er_u64 *__restrict__ dst, er_u32 *__restrict__ flags, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        er_res r = er_cuda_convert_one_(spec[i], src[i]);
        dst[i] = r.bits;
        if (flags)
            flags[i] = r.flags;
    }
}

#define er_cuda_msg_(msg, msg_size, ...) ((void)er_msgf((msg), (msg_size), 0, __VA_ARGS__))

/* Errors that mean "no usable CUDA here" rather than "the device failed". */
bool er_cuda_is_nodevice_(cudaError_t e)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary ||
           e == cudaErrorDevicesUnavailable || e == cudaErrorCallRequiresNewerDriver ||
           e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice;
}

/* Arguments shared by the device and the host entry points. */
er_status er_cuda_check_args_(const uint32_t *spec, const uint64_t *src, const uint64_t *dst, size_t n,
                              char *msg, size_t msg_size)
{
    if (n == 0)
        return ER_OK;
    if (!spec || !src || !dst) {
        er_cuda_msg_(msg, msg_size, "a null spec, src or dst array with n = %zu", n);
        return ER_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t s = spec[i];
        uint32_t from = s & 0xffu, to = (s >> 8) & 0xffu, dir = (s >> 16) & 0xffu;
        if (from >= (uint32_t)ER_FMT_COUNT || to >= (uint32_t)ER_FMT_COUNT || dir >= (uint32_t)ER_RND_COUNT) {
            er_cuda_msg_(msg, msg_size, "spec[%zu] = 0x%08x: unknown format or rounding direction", i,
                         (unsigned)s);
            return ER_EINVAL;
        }
    }
    return ER_OK;
}

er_status er_cuda_fail_(cudaError_t e, const char *what, char *msg, size_t msg_size)
{
    er_cuda_msg_(msg, msg_size, "CUDA %s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return er_cuda_is_nodevice_(e) ? ER_ENODEVICE : ER_EDEVICE;
}

} /* namespace */

extern "C" int er_cuda_device_count(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the (non-sticky) error for later calls */
        return 0;
    }
    return count > 0 ? count : 0;
}

extern "C" er_status er_cuda_host_convert_mixed(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                                uint32_t *flags, size_t n, char *msg, size_t msg_size)
{
    er_status st = er_cuda_check_args_(spec, src, dst, n, msg, msg_size);
    if (st != ER_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        er_res r = er_cuda_convert_one_(spec[i], src[i]);
        dst[i] = r.bits;
        if (flags)
            flags[i] = r.flags;
    }
    er_cuda_msg_(msg, msg_size, "%s", "");
    return ER_OK;
}

extern "C" er_status er_cuda_convert_mixed(const uint32_t *spec, const uint64_t *src, uint64_t *dst,
                                           uint32_t *flags, size_t n, int device, char *msg, size_t msg_size)
{
    er_status st;
    cudaError_t e;
    int count = 0, prev = -1;
    er_u32 *d_spec = NULL, *d_flags = NULL;
    er_u64 *d_src = NULL, *d_dst = NULL;
    const char *what = NULL;

    if ((st = er_cuda_check_args_(spec, src, dst, n, msg, msg_size)) != ER_OK)
        return st;
    if (device == -1) {
        const char *env = getenv("EXACTREF_CUDA_DEVICE");
        device = 0;
        if (env && *env) {
            char *end = NULL;
            long v = strtol(env, &end, 10);
            if (*end != '\0' || v < 0 || v > 1 << 20) {
                er_cuda_msg_(msg, msg_size, "EXACTREF_CUDA_DEVICE=\"%s\" is not a device index", env);
                return ER_EINVAL;
            }
            device = (int)v;
        }
    } else if (device < 0) {
        er_cuda_msg_(msg, msg_size, "device index %d: expected -1 or an index >= 0", device);
        return ER_EINVAL;
    }
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        st = er_cuda_fail_(e, "cudaGetDeviceCount", msg, msg_size);
        return st;
    }
    if (device >= count) {
        er_cuda_msg_(msg, msg_size, "no CUDA device %d (%d device%s)", device, count, count == 1 ? "" : "s");
        return ER_ENODEVICE;
    }
    if (n == 0) {
        er_cuda_msg_(msg, msg_size, "%s", "");
        return ER_OK;
    }
    if ((e = cudaGetDevice(&prev)) != cudaSuccess) {
        prev = -1;
        what = "cudaGetDevice";
        goto fail;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        what = "cudaSetDevice";
        goto fail;
    }
    if ((e = cudaMalloc((void **)&d_spec, n * sizeof *d_spec)) != cudaSuccess ||
        (e = cudaMalloc((void **)&d_src, n * sizeof *d_src)) != cudaSuccess ||
        (e = cudaMalloc((void **)&d_dst, n * sizeof *d_dst)) != cudaSuccess ||
        (flags && (e = cudaMalloc((void **)&d_flags, n * sizeof *d_flags)) != cudaSuccess)) {
        what = "cudaMalloc";
        goto fail;
    }
    if ((e = cudaMemcpy(d_spec, spec, n * sizeof *d_spec, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (e = cudaMemcpy(d_src, src, n * sizeof *d_src, cudaMemcpyHostToDevice)) != cudaSuccess) {
        what = "cudaMemcpy (to the device)";
        goto fail;
    }
    {
        const unsigned threads = 256;
        size_t want = (n + threads - 1) / threads;
        unsigned blocks = want > (size_t)1 << 20 ? 1u << 20 : (unsigned)want;
        er_cuda_convert_kernel_<<<blocks, threads>>>(d_spec, d_src, d_dst, d_flags, n);
    }
    if ((e = cudaGetLastError()) != cudaSuccess) {
        what = "kernel launch";
        goto fail;
    }
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
        what = "kernel execution";
        goto fail;
    }
    if ((e = cudaMemcpy(dst, d_dst, n * sizeof *d_dst, cudaMemcpyDeviceToHost)) != cudaSuccess ||
        (flags && (e = cudaMemcpy(flags, d_flags, n * sizeof *d_flags, cudaMemcpyDeviceToHost)) != cudaSuccess)) {
        what = "cudaMemcpy (from the device)";
        goto fail;
    }
    er_cuda_msg_(msg, msg_size, "%s", "");
    st = ER_OK;
    goto done;

fail:
    st = er_cuda_fail_(e, what, msg, msg_size);
    (void)cudaGetLastError(); /* clear a non-sticky error; a sticky one stays with the context */
done:
    cudaFree(d_flags);
    cudaFree(d_dst);
    cudaFree(d_src);
    cudaFree(d_spec);
    if (prev >= 0)
        cudaSetDevice(prev);
    return st;
}
