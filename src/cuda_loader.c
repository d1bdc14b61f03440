/* cuda_loader.c: the CUDA backend of the exact engine, loaded at run time.
 *
 * libexactref never links CUDA.  The kernel and its host side live in a loadable module,
 * libexactref_cuda.so (cuda/er_cuda_mma.cu, built when CUDA is), which links the static CUDA runtime.
 * er_cuda_mma looks for the module, in this order:
 *   1. EXACTREF_CUDA_MODULE, when set and not empty: that file and nothing else;
 *   2. next to libexactref (dladdr of this code: the shared library, or the executable it is linked in);
 *   3. next to the executable (/proc/self/exe);
 *   4. the install libdir (ER_CUDA_INSTALL_LIBDIR, compiled in when the module is built);
 *   5. the plain file name through the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache).
 * then looks up the entry points of cuda/er_cuda_backend.h and checks their ABI.  It never prints,
 * exits or crashes for want of CUDA: ER_EUNSUPPORTED when this build has no CUDA backend or the module
 * is not found (args->msg says where it looked and why), ER_ENODEVICE from the module when the machine
 * has no driver or no device.  The module, once loaded, stays loaded (RTLD_NODELETE): the CUDA runtime
 * must not be unloaded under its own exit handlers.
 *
 * Three calls reach the module, all from the front door's router (src/route.c): the exact engine
 * (er_cuda_mma), normal() (er_cuda_normal) and the bounds of one batch (er_cuda_bounds_batch).
 * er_cuda_set_host_pass routes all three to the module's host pass (the tests).
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dladdr */
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/er_cuda_backend.h"
#include "er_front.h"
#include "host/er_problem.h"
#include "host/er_progress.h"
#include "exactref/config.h"

#if ER_HAVE_CUDA
#include <dlfcn.h>
#include <unistd.h>
#endif

#define msg_fail er_msgf

/* er_cuda_set_host_pass: every call of this process through the module's host pass (the tests). */
static int g_host_pass = 0;

int er_cuda_set_host_pass(int on)
{
    int prev = g_host_pass;
    g_host_pass = on != 0;
    return prev;
}

#if ER_HAVE_CUDA

#define ER_CL_PATH 4096
#define ER_CL_CANDIDATES 5

typedef struct {
    void *handle;
    er_cuda_backend_mma_fn mma, host_mma, normal, host_normal;
    er_cuda_backend_bounds_fn bounds, host_bounds;
} module;

/* The directory part of path (with its trailing '/') into dir; 0 if path has none. */
static int dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    size_t n;
    if (!slash) return 0;
    n = (size_t)(slash - path) + 1;
    if (n + 1 > size) return 0;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 1;
}

/* Append "; " and a sentence to the report of the places looked at (truncating quietly). */
static void load_note(char *report, size_t size, const char *fmt, ...)
{
    size_t used = strlen(report);
    va_list ap;
    if (used + 1 >= size) return;
    va_start(ap, fmt);
    vsnprintf(report + used, size - used, fmt, ap);
    va_end(ap);
}

/* Try one candidate: 1 loaded (m filled), 0 not (why appended to the report). */
static int try_open(const char *path, module *m, char *report, size_t size)
{
    void *h;
    er_cuda_backend_abi_fn abi;
    const char *err;
    dlerror();
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        err = dlerror();
        load_note(report, size, "%s%s", report[0] ? "; " : "", err ? err : path);
        return 0;
    }
    abi = (er_cuda_backend_abi_fn)(uintptr_t)dlsym(h, "er_cuda_backend_abi");
    m->mma = (er_cuda_backend_mma_fn)(uintptr_t)dlsym(h, "er_cuda_backend_mma");
    m->host_mma = (er_cuda_backend_mma_fn)(uintptr_t)dlsym(h, "er_cuda_backend_host_mma");
    m->normal = (er_cuda_backend_mma_fn)(uintptr_t)dlsym(h, "er_cuda_backend_normal");
    m->host_normal = (er_cuda_backend_mma_fn)(uintptr_t)dlsym(h, "er_cuda_backend_host_normal");
    m->bounds = (er_cuda_backend_bounds_fn)(uintptr_t)dlsym(h, "er_cuda_backend_bounds");
    m->host_bounds = (er_cuda_backend_bounds_fn)(uintptr_t)dlsym(h, "er_cuda_backend_host_bounds");
    if (abi && abi() != ER_CUDA_BACKEND_ABI) {
        load_note(report, size, "%s%s: built for backend ABI %d, this libexactref needs %d", report[0] ? "; " : "", path,
             abi(), ER_CUDA_BACKEND_ABI);
        dlclose(h);
        return 0;
    }
    if (!abi || !m->mma || !m->host_mma || !m->normal || !m->host_normal || !m->bounds || !m->host_bounds) {
        load_note(report, size, "%s%s: not an exactref CUDA backend module (entry points missing)", report[0] ? "; " : "",
             path);
        dlclose(h);
        return 0;
    }
    m->handle = h;
    return 1;
}

/* Find and load the module; ER_OK, or ER_EUNSUPPORTED with the places looked at in msg. */
static int load_module(char *msg, size_t msg_size, module *m)
{
    char cand[ER_CL_CANDIDATES][ER_CL_PATH + 64], report[2048], dir[ER_CL_PATH];
    int n = 0;
    const char *env = getenv("EXACTREF_CUDA_MODULE");
    memset(m, 0, sizeof *m);
    report[0] = '\0';
    if (env && *env) {
        if (try_open(env, m, report, sizeof report)) return ER_OK;
        return msg_fail(msg, msg_size, ER_EUNSUPPORTED, "%s not found: EXACTREF_CUDA_MODULE=%s does not load: %s",
                        ER_CUDA_MODULE_NAME, env, report);
    }
    {
        Dl_info info;
        memset(&info, 0, sizeof info);
        if (dladdr((void *)(uintptr_t)&er_cuda_mma_host, &info) && dir_of(info.dli_fname, dir, sizeof dir))
            snprintf(cand[n++], sizeof cand[0], "%s%s", dir, ER_CUDA_MODULE_NAME);
    }
    {
        char exe[ER_CL_PATH];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len > 0) {
            exe[len] = '\0';
            if (dir_of(exe, dir, sizeof dir)) snprintf(cand[n++], sizeof cand[0], "%s%s", dir, ER_CUDA_MODULE_NAME);
        }
    }
#ifdef ER_CUDA_INSTALL_LIBDIR
    snprintf(cand[n++], sizeof cand[0], "%s/%s", ER_CUDA_INSTALL_LIBDIR, ER_CUDA_MODULE_NAME);
#endif
    snprintf(cand[n++], sizeof cand[0], "%s", ER_CUDA_MODULE_NAME);
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= strcmp(cand[i], cand[j]) == 0;
        if (seen) continue;
        /* an absolute or relative path that does not exist: say so briefly, without dlopen */
        if (strchr(cand[i], '/') && access(cand[i], F_OK) != 0) {
            load_note(report, sizeof report, "%s%s: no such file", report[0] ? "; " : "", cand[i]);
            continue;
        }
        if (try_open(cand[i], m, report, sizeof report)) return ER_OK;
    }
    return msg_fail(msg, msg_size, ER_EUNSUPPORTED,
                    "%s not found: %s (set EXACTREF_CUDA_MODULE to its path, or use the CPU or OpenCL backend: "
                    "the same bits)",
                    ER_CUDA_MODULE_NAME, report);
}

/* The job of a validated problem (the accumulator's window, the shapes) for the module. */
static void make_job(const er_problem *P, er_cuda_job *job)
{
    const er_mma_args *A = P->args;
    memset(job, 0, sizeof *job);
    job->abi = ER_CUDA_BACKEND_ABI;
    job->size = (int)sizeof *job;
    job->kind = P->kind;
    job->scaled = P->scaled;
    job->has_c = P->has_c;
    job->acc_lo = P->acc_lo;
    job->acc_nd = P->acc_nd;
    job->batch = P->batch;
    job->m = P->m;
    job->n = P->n;
    job->k = P->k;
    job->nblocks = P->nblocks;
    /* the module's exact binary64 path: where the CPU engine may take its fast path (strategy AUTO, D
     * only); the module decides per tile from the operands' values whether binary64 sums are exact */
    job->exact64 = !P->kind && A->strategy == ER_STRATEGY_AUTO && P->d && !P->lo && !P->hi && !P->odd;
    job->problem_size = (int)sizeof(er_problem);
}

static int call_module(const er_problem *P, int host)
{
    er_cuda_job job;
    module m;
    int st;
    make_job(P, &job);
    if ((st = load_module(P->msg, P->msg_size, &m)) != ER_OK) return st;
    st = (host || g_host_pass ? m.host_mma : m.mma)(P, &job);
    dlclose(m.handle); /* RTLD_NODELETE: balances this call's reference, never unloads */
    return st;
}

int er_cuda_mma(const er_problem *P) { return call_module(P, 0); }

int er_cuda_mma_host(er_mma_args *args)
{
    er_problem P;
    int st;
    if (!args) return ER_EINVAL;
    if (args->msg && args->msg_size) args->msg[0] = '\0';
    /* validated as er_mma validates */
    if ((st = er_problem_validate(&P, args, args->d, args->lo, args->hi, args->odd, args->msg, args->msg_size)) !=
        ER_OK)
        return st;
    return call_module(&P, 1);
}

int er_cuda_normal(const er_problem *P, int compute, int flush_to_zero)
{
    er_cuda_job job;
    er_problem Q = *P; /* normal(): d only, no counts */
    module m;
    int st;
    Q.lo = Q.hi = Q.odd = NULL;
    Q.stats = NULL;
    make_job(&Q, &job);
    job.normal = 1;
    job.compute = compute;
    job.ftz = flush_to_zero ? 1 : 0;
    job.exact64 = 0;
    if ((st = load_module(P->msg, P->msg_size, &m)) != ER_OK) return st;
    st = (g_host_pass ? m.host_normal : m.normal)(&Q, &job);
    dlclose(m.handle);
    return st;
}

int er_cuda_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg, size_t msg_size)
{
    module m;
    int st;
    if (!job || !out) return ER_EINVAL;
    /* no module: ER_EUNSUPPORTED, and the CPU computes the same bits (cpu/cpu_bounds.c) */
    if ((st = load_module(msg, msg_size, &m)) != ER_OK) return st;
    st = (g_host_pass ? m.host_bounds : m.bounds)(job, out, e0, device, msg, msg_size);
    dlclose(m.handle);
    if (st == ER_OK) er_progress_part_done(job->progress, job->progress_ctx, e0 + job->m * job->n, out->count); /* per batch */
    return st;
}

#else /* !ER_HAVE_CUDA */

#define ER_NO_CUDA_MSG                                                                                             \
    "this build has no CUDA backend module (configured without CUDA: ER_ENABLE_CUDA=OFF or no nvcc); use the CPU " \
    "or OpenCL backend (the same bits)"

int er_cuda_mma(const er_problem *P) { return msg_fail(P->msg, P->msg_size, ER_EUNSUPPORTED, ER_NO_CUDA_MSG); }

int er_cuda_mma_host(er_mma_args *args)
{
    if (!args) return ER_EINVAL;
    return msg_fail(args->msg, args->msg_size, ER_EUNSUPPORTED, ER_NO_CUDA_MSG);
}

int er_cuda_normal(const er_problem *P, int compute, int flush_to_zero)
{
    (void)compute;
    (void)flush_to_zero;
    return msg_fail(P->msg, P->msg_size, ER_EUNSUPPORTED, ER_NO_CUDA_MSG);
}

/* The CPU computes the same bits (cpu/cpu_bounds.c). */
int er_cuda_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int device, char *msg, size_t msg_size)
{
    (void)job;
    (void)out;
    (void)e0;
    (void)device;
    return msg_fail(msg, msg_size, ER_EUNSUPPORTED, ER_NO_CUDA_MSG);
}

#endif

/* CUDA devices this process can use through the module (0 without the module, a driver or a device;
 * why: the reason when 0).  For er_backend_auto (src/backend_auto.c). */
int er_cuda_device_count_(char *why, size_t why_size)
{
#if ER_HAVE_CUDA
    module m;
    int n = 0;
    if (why && why_size) why[0] = '\0';
    if (load_module(why, why_size, &m) != ER_OK) return 0;
    er_cuda_backend_device_count_fn count =
        (er_cuda_backend_device_count_fn)(uintptr_t)dlsym(m.handle, "er_cuda_backend_device_count");
    if (count) n = count();
    if (n <= 0 && why && why_size) snprintf(why, why_size, "the CUDA driver reports none, or there is no driver");
    dlclose(m.handle);
    return n > 0 ? n : 0;
#else
    if (why && why_size) snprintf(why, why_size, "this build has no CUDA backend");
    return 0;
#endif
}
