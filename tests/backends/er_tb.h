/* er_tb.h: the backends the parametrised test (test_backends) runs its suites on: the CPU (always
 * present: compared with the independent references), OpenCL, CUDA on a GPU and the CUDA module's
 * host pass (where they can start; a backend that cannot is skipped and says why). */
#ifndef ER_TB_H
#define ER_TB_H

#include <check.h>
#include <stdint.h>

#include "exactref/exactref.h"

typedef struct er_tb_backend {
    const char *name;        /* "cpu", "opencl", "cuda", "cuda_host": the seeds' and suites' prefix */
    const char *label;       /* "CPU", "OpenCL", "CUDA", "CUDA host pass": for the messages */
    int backend;             /* ER_BACKEND_CPU, ER_BACKEND_OPENCL or ER_BACKEND_CUDA */
    int host_pass;           /* CUDA through the module's host pass (er_cuda_set_host_pass) */
    int device;              /* has device indices (EXACTREF_<X>_DEVICE, "no ... device 100000") */
    int exact64;             /* has the exact binary64 path (stats.exact_f64): CUDA */
    const char *chunk_env;   /* EXACTREF_<X>_MAX_CHUNK, or NULL (the CPU: no tiles) */
    const char *device_env;  /* EXACTREF_<X>_DEVICE, or NULL */
    const char *no_device;   /* the message of device 100000 */
} er_tb_backend;

/* The backend the suites are running on. */
extern const er_tb_backend *er_tb;

/* The suites (tests/backends/test_backend_mma.c, test_backend_normal.c, test_backend_bounds.c,
 * test_backend_sweep.c) for er_tb; the bounds' suites on the device backends only. */
Suite *er_tb_mma_suite(void);
Suite *er_tb_normal_suite(void);
Suite *er_tb_bounds_suite(void);
Suite *er_tb_sweep_suite(void);
/* Printed at the end: what a suite counted on er_tb. */
void er_tb_mma_summary(void);
void er_tb_normal_summary(void);
void er_tb_bounds_summary(void);
void er_tb_sweep_summary(void);

/* Tolerance options of the bounds' suites: a standard by name, a compute format (-1: default),
 * flush_to_zero; er_tb_make_opts turns them into er_tol_opts (a standard it cannot parse fails the
 * test). */
typedef struct er_tb_topt {
    const char *std;
    int compute, ftz;
} er_tb_topt;
void er_tb_make_opts(er_tol_opts *o, const er_tb_topt *t);

/* The seed of test `test` of suite `suite` on er_tb ("<backend>_<suite>/<test>", EXACTREF_SEED). */
uint64_t er_tb_seed(const char *suite, const char *test);

#endif
