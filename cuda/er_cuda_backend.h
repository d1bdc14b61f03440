/* er_cuda_backend.h: the interface between libexactref and its CUDA backend module (plain C).
 *
 * libexactref never links CUDA.  The exact engine's CUDA backend (cuda/er_cuda_mma.cu) is built into
 * a loadable module, libexactref_cuda.so, which links the static CUDA runtime; er_mma with
 * ER_BACKEND_CUDA reaches it through src/cuda_loader.c, which dlopen()s the module at run time, looks
 * up the entry points below and checks ER_CUDA_BACKEND_ABI.  The module depends on nothing of
 * libexactref (the shared core is header-only), so it serves a program linked with the static library
 * as well as one linked with the shared one.
 */
#ifndef ER_CUDA_BACKEND_H
#define ER_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/mma.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever er_cuda_job, the entry points or er_mma_args change. */
#define ER_CUDA_BACKEND_ABI 1
/* The module's file name (the loader's search: src/cuda_loader.c, docs/building.md). */
#define ER_CUDA_MODULE_NAME "libexactref_cuda.so"

/*
 * What er_engine_validate (cpu/cpu_mma.c) found about a problem that the module cannot derive from
 * er_mma_args by itself: the loader validates, the module trusts.  The accumulator's window is the
 * CPU engine's own, so the digits (and the bits) are the same.
 */
typedef struct er_cuda_job {
    int abi;        /* ER_CUDA_BACKEND_ABI */
    int size;       /* sizeof(er_cuda_job) */
    int kind;       /* 0: float mma (the long accumulator), 1: mmai */
    int scaled;     /* block-scaled */
    int has_c;      /* args->c is given */
    int acc_lo, acc_nd;
    int64_t batch, m, n, k, nblocks;
} er_cuda_job;

/* ---- Exported by the module (extern "C", default visibility; everything else in it is hidden). ---- */
/* ER_CUDA_BACKEND_ABI as the module was built. */
int er_cuda_backend_abi(void);
/* CUDA devices this process can use: 0 without a driver or a device (never aborts, never prints). */
int er_cuda_backend_device_count(void);
/* The exact engine on device args->device (-1: EXACTREF_CUDA_DEVICE, else 0).  ER_OK, ER_EINVAL (a bad
 * device index), ER_ENODEVICE ("no CUDA device: ..."), ER_EDEVICE (a CUDA call failed), ER_ENOMEM. */
int er_cuda_backend_mma(er_mma_args *args, const er_cuda_job *job);
/* The same host code (tiles, packing, scatter) with the kernel's per-element function compiled by nvcc
 * for the HOST run on the CPU instead of the launch: needs no driver (the tests' host pass). */
int er_cuda_backend_host_mma(er_mma_args *args, const er_cuda_job *job);

typedef int (*er_cuda_backend_abi_fn)(void);
typedef int (*er_cuda_backend_device_count_fn)(void);
typedef int (*er_cuda_backend_mma_fn)(er_mma_args *args, const er_cuda_job *job);

/* ---- In libexactref (src/cuda_loader.c), not in the public headers: for the tests. ---- */
/* er_cuda_mma's path through the module's host pass (er_cuda_backend_host_mma): validates args as
 * er_mma does, then loads the module exactly as er_cuda_mma does. */
int er_cuda_mma_host(er_mma_args *args);

#ifdef __cplusplus
}
#endif
#endif /* ER_CUDA_BACKEND_H */
