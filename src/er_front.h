/* er_front.h: the front door's internal declarations: the one route-and-fallback function every operation
 * goes through (src/route.c), the computing entry points (src/mma.c, src/normal.c, src/tolerance.c), and
 * with er_validate.h the validation into an er_problem (src/validate.c). */
#ifndef ER_FRONT_H
#define ER_FRONT_H

#include "exactref/exactref.h"
#include "host/er_bjob.h"

#include "er_validate.h" /* er_problem_validate */

/* What one operation offers the router: its run on a device backend and on the CPU, and its rules. */
typedef struct er_route_op {
    /* backend ER_BACKEND_OPENCL or ER_BACKEND_CUDA on device index `device`; msg receives its error */
    int (*on_device)(void *ctx, int backend, int device, char *msg, size_t msg_size);
    int (*on_cpu)(void *ctx);
    /* an explicitly chosen device that answers ER_EUNSUPPORTED (it cannot: no fp64, not built) leaves
     * the work to the CPU, which computes the same bits (the bounds) */
    int declined_to_cpu;
    /* under ER_BACKEND_AUTO a device's ER_EINVAL is the caller's mistake (a device index): returned,
     * not fallen back from (er_mma) */
    int auto_einval_returns;
    /* say in note why the CPU ran under ER_BACKEND_AUTO: the device failed, or (a build with the CUDA
     * backend) no device was usable for a big problem (er_mma's er_mma_stats.note) */
    int notes;
    /* a backend id that is none of ER_BACKEND_*: ER_EUNSUPPORTED (normal()), else the CPU */
    int other_fails;
} er_route_op;

/*
 * Run an operation of `macs` multiply-adds on `backend` (ER_BACKEND_*) and `device` (-1: the
 * environment's or the backend's default).  ER_BACKEND_AUTO: er_backend_auto's choice, and a device
 * that fails leaves the work to the CPU (the same bits).  *ran receives the backend that computed, or the
 * device backend whose error is returned (ER_BACKEND_CPU when the CPU ran); note (may be NULL) the reason the CPU ran when op->notes.  msg
 * (may be NULL) receives the error of the call returned.
 */
int er_route(const er_route_op *op, void *ctx, int backend, int device, int64_t macs, int *ran, char *note,
             size_t note_size, char *msg, size_t msg_size);

/* The OpenCL device ER_BACKEND_AUTO uses (src/backend_auto.c; -1: the backend's default). */
int er_backend_auto_opencl_device_(void);

/* CUDA devices this process can use through the module (src/cuda_loader.c; 0 without the module, a
 * driver or a device; why: the reason when 0).  For er_backend_auto (src/backend_auto.c). */
int er_cuda_device_count_(char *why, size_t why_size);

/* Per-element bounds of a standard on the result's backend (src/tolerance.c; args: the result's;
 * rounded: its exactly rounded result): prepared on the CPU, the elements on args->backend's device where it can (a device
 * without fp64 leaves them to the CPU: *on_cpu = 1, may be NULL).  msg receives a device's error. */
/* er_mma, and where the CPU's certified fast path runs, its S = A'B' of every batch (m x n each) copied
 * into keep_s, *keep_s_ok then 1 (else 0): the bounds of normal and any_order reuse it. */
er_status er_front_mma_keep(er_mma_args *args, double *keep_s, int *keep_s_ok);
int er_front_bounds(const er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                    const er_slack *slack, const double *keep_s, er_bounds *out, char *msg, size_t msg_size,
                    int *on_cpu);

/* t with dimensions a and b swapped (shape and strides; the same data): a view (mma.c) */
er_tensor er_front_swap_dims(er_tensor t, int a, int b);

/* normal() on the result's backend (src/normal.c; args: the result's; out: of d's format and shape, receives it;
 * compute: a float format); under AUTO a device that fails leaves it to the CPU (the same bits). */
int er_front_normal(const er_mma_args *args, int compute, int ftz, er_tensor *out, char *msg, size_t msg_size);

#endif /* ER_FRONT_H */
