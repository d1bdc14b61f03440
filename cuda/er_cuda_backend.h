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

#include "../host/er_bjob.h"    /* one batch of a bounds computation */
#include "../host/er_problem.h" /* the front door's validated problem */
#include "exactref/mma.h"
#include "exactref/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever er_cuda_job, er_problem, er_bjob, er_bounds, the entry points or er_mma_args change.
 * 2: normal(), bounds, the exact binary64 path (er_cuda_job: normal, compute, ftz, exact64).
 * 3: the entry points take the front door's validated problem (host/er_problem.h). */
#define ER_CUDA_BACKEND_ABI 3
/* The module's file name (the loader's search: src/cuda_loader.c, docs/building.md). */
#define ER_CUDA_MODULE_NAME "libexactref_cuda.so"

/*
 * What the front door's validation (src/validate.c: er_problem_validate) found about a problem that the
 * module cannot derive from er_mma_args by itself: the front door validates, the module trusts.  The
 * accumulator's window is every backend's, so the digits (and the bits) are the same.
 */
typedef struct er_cuda_job {
    int abi;        /* ER_CUDA_BACKEND_ABI */
    int size;       /* sizeof(er_cuda_job) */
    int kind;       /* 0: float mma (the long accumulator), 1: mmai */
    int scaled;     /* block-scaled */
    int has_c;      /* args->c is given */
    int acc_lo, acc_nd;
    int64_t batch, m, n, k, nblocks;
    int normal;     /* normal() (er_cuda_backend_normal): args->d receives normal()'s output */
    int compute;    /* normal(): the compute format */
    int ftz;        /* normal(): flush_to_zero */
    int exact64;    /* float mma, strategy AUTO, D only: the module may sum in binary64 where each tile's
                       operand values prove it exact (cuda/er_cuda_mma.cu) */
    int problem_size; /* sizeof(er_problem) */
} er_cuda_job;

/* ---- Exported by the module (extern "C", default visibility; everything else in it is hidden). ---- */
/* ER_CUDA_BACKEND_ABI as the module was built. */
int er_cuda_backend_abi(void);
/* CUDA devices this process can use: 0 without a driver or a device (never aborts, never prints). */
int er_cuda_backend_device_count(void);
/* The exact engine on device args->device (-1: EXACTREF_CUDA_DEVICE, else 0).  ER_OK, ER_EINVAL (a bad
 * device index), ER_ENODEVICE ("no CUDA device: ..."), ER_EDEVICE (a CUDA call failed), ER_ENOMEM. */
int er_cuda_backend_mma(const er_problem *P, const er_cuda_job *job);
/* The same host code (tiles, packing, scatter) with the kernel's per-element function compiled by nvcc
 * for the HOST run on the CPU instead of the launch: needs no driver (the tests' host pass). */
int er_cuda_backend_host_mma(const er_problem *P, const er_cuda_job *job);
/* normal() (job->normal = 1, compute, ftz): args->d receives it (index-order accumulation emulated with
 * integers: er_cpu_normal's bits).  The same statuses as er_cuda_backend_mma. */
int er_cuda_backend_normal(const er_problem *P, const er_cuda_job *job);
int er_cuda_backend_host_normal(const er_problem *P, const er_cuda_job *job);
/* The bounds of one batch (cpu/cpu_bounds.c prepared it; job->par.ldb == job->n): element (i, j) into
 * index e0 + i n + j of out's arrays, on device `device` (-1: EXACTREF_CUDA_DEVICE, else 0).  ER_OK,
 * ER_EINVAL, ER_ENODEVICE, ER_EDEVICE, ER_ENOMEM; msg (may be NULL) receives a sentence. */
int er_cuda_backend_bounds(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg, size_t msg_size);
int er_cuda_backend_host_bounds(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg,
                                size_t msg_size);

typedef int (*er_cuda_backend_abi_fn)(void);
typedef int (*er_cuda_backend_device_count_fn)(void);
typedef int (*er_cuda_backend_mma_fn)(const er_problem *P, const er_cuda_job *job);
typedef int (*er_cuda_backend_bounds_fn)(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg,
                                         size_t msg_size);

/* ---- In libexactref (src/cuda_loader.c), not in the public headers: the front door's router and
 * the tests call them. ---- */
/* The exact engine on a CUDA device through the module (ER_EUNSUPPORTED or ER_ENODEVICE with a message
 * in P->msg when it is absent); the problem as the front door validated it. */
int er_cuda_mma(const er_problem *P);
/* er_cuda_mma's path through the module's host pass (er_cuda_backend_host_mma): validates args as
 * er_mma does, then loads the module exactly as er_cuda_mma does. */
int er_cuda_mma_host(er_mma_args *args);
/* normal() on the device: P->d receives it (P's enclosures and counts are not used); compute is a
 * float format. */
int er_cuda_normal(const er_problem *P, int compute, int flush_to_zero);
/* A batch of bounds through the module: ER_EUNSUPPORTED when the module cannot (then the CPU computes
 * them). */
int er_cuda_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg, size_t msg_size);
/* The host pass for every CUDA call of this process (er_cuda_mma, er_cuda_normal, er_cuda_bounds_batch
 * then run the module's er_cuda_backend_host_* entry points): on (1) or off (0); returns the previous
 * setting.  For the tests (no GPU needed); not thread-safe. */
int er_cuda_set_host_pass(int on);

#ifdef __cplusplus
}
#endif
#endif /* ER_CUDA_BACKEND_H */
