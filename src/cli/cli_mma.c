/* cli_mma.c: the operand flags shared by `exactref matmul` and `exactref check`. */
#include <stdlib.h>
#include <string.h>

#include "cli_mma.h"

const char *const er_cli_mma_flags_help =
    "    --acc C.npy            the accumulator input C (any float format; i32 for mmai)\n"
    "    --a-format F, --b-format F, --acc-format F   declared formats of the operands\n"
    "    --out-format F         the output format\n"
    "    --rounding R           nearest_even (default), nearest_away, zero, negative_inf,\n"
    "                           positive_inf\n"
    "    --saturate             overflow gives the largest finite value instead of inf or NaN\n"
    "    --a-scale SA.npy, --b-scale SB.npy   block scales (raw uint8 patterns)\n"
    "    --block V              elements per scale (default 32 for f8E8M0FNU, 16 for f8E4M3FN)\n"
    "    --scale-format F       f8E8M0FNU (default) or f8E4M3FN\n"
    "    --backend B            auto (default), cpu, opencl or cuda: the same bits on each; auto\n"
    "                           uses a device for 2^30 multiply-adds or more where one exists, and\n"
    "                           the CPU if it fails (a one-line note); by name, a failure is exit 3\n"
    "    --device N             the OpenCL or CUDA device (see exactref info; or\n"
    "                           EXACTREF_OPENCL_DEVICE, EXACTREF_CUDA_DEVICE)\n"
    "    --threads N            threads (default: all cores); the bits never depend on it\n"
    "    --strategy S           auto (certified fast path plus exact accumulator) or exact\n";

void er_cli_mma_init(er_cli_mma *m, const char *cmd)
{
    memset(m, 0, sizeof *m);
    m->cmd = cmd;
    m->afmt = m->bfmt = m->cfmt = m->ofmt = m->sfmt = -1;
    m->dir = ER_RND_NEAREST_EVEN;
    m->strategy = ER_STRATEGY_AUTO;
    m->backend = "auto";
    m->device = -1;
}

int er_cli_mma_option(er_cli_mma *m, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int need = 0;
    if (!strcmp(a, "--acc") || !strcmp(a, "--a-format") || !strcmp(a, "--b-format") || !strcmp(a, "--acc-format") ||
        !strcmp(a, "--out-format") || !strcmp(a, "--scale-format") || !strcmp(a, "--rounding") ||
        !strcmp(a, "--a-scale") || !strcmp(a, "--b-scale") || !strcmp(a, "--block") || !strcmp(a, "--backend") ||
        !strcmp(a, "--threads") || !strcmp(a, "--strategy") || !strcmp(a, "--device"))
        need = 1;
    else if (!strcmp(a, "--saturate")) {
        m->opts |= ER_OPT_SATURATE;
        return 1;
    } else
        return 0;
    if (*i + need >= argc) {
        er_cli_usage_error(m->cmd, "%s needs a value", a);
        return -1;
    }
    const char *v = argv[++*i];
    char *e;
    if (!strcmp(a, "--acc")) m->C.path = v;
    else if (!strcmp(a, "--a-scale")) m->SA.path = v;
    else if (!strcmp(a, "--b-scale")) m->SB.path = v;
    else if (!strcmp(a, "--backend")) {
        if (strcmp(v, "auto") && strcmp(v, "cpu") && strcmp(v, "opencl") && strcmp(v, "cuda")) {
            er_cli_usage_error(m->cmd, "--backend: '%s' is not auto, cpu, opencl or cuda", v);
            return -1;
        }
        m->backend = v;
    } else if (!strcmp(a, "--rounding")) {
        if (er_rounding_from_name(v, &m->dir) != ER_OK || m->dir == ER_RND_ODD) {
            er_cli_usage_error(m->cmd, "--rounding: unknown direction '%s' (nearest_even, nearest_away, zero, "
                                       "negative_inf, positive_inf)", v);
            return -1;
        }
    } else if (!strcmp(a, "--device")) {
        long x = strtol(v, &e, 10);
        if (*e || x < 0 || x > 4096) {
            er_cli_usage_error(m->cmd, "--device: '%s' is not a device index (see exactref info)", v);
            return -1;
        }
        m->device = (int)x;
    } else if (!strcmp(a, "--block") || !strcmp(a, "--threads")) {
        long x = strtol(v, &e, 10);
        if (*e || x < (a[2] == 'b' ? 1 : 0) || x > 1 << 24) {
            er_cli_usage_error(m->cmd, "%s: '%s' is not a valid count", a, v);
            return -1;
        }
        if (a[2] == 'b') m->block = (int)x;
        else m->threads = (int)x;
    } else if (!strcmp(a, "--strategy")) {
        if (!strcmp(v, "auto")) m->strategy = ER_STRATEGY_AUTO;
        else if (!strcmp(v, "exact")) m->strategy = ER_STRATEGY_EXACT;
        else {
            er_cli_usage_error(m->cmd, "--strategy: '%s' is not auto or exact", v);
            return -1;
        }
    } else {
        int *dst = !strcmp(a, "--a-format")     ? &m->afmt
                   : !strcmp(a, "--b-format")   ? &m->bfmt
                   : !strcmp(a, "--acc-format") ? &m->cfmt
                   : !strcmp(a, "--out-format") ? &m->ofmt
                                                : &m->sfmt;
        if (er_cli_parse_format(m->cmd, a, v, dst)) return -1;
    }
    return 1;
}

static int load_operand(const char *cmd, const char *what, er_cli_operand *o, int declared)
{
    char msg[1024];
    er_status st = er_npy_read(o->path, &o->npy, msg, sizeof msg);
    if (st == ER_OK) st = er_npy_to_tensor(&o->npy, o->path, declared, &o->t, &o->storage, msg, sizeof msg);
    if (st != ER_OK) {
        fprintf(stderr, "exactref %s: %s: %s\n", cmd, what, msg);
        return st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
    }
    o->loaded = 1;
    return ER_EXIT_OK;
}

int er_cli_mma_load(er_cli_mma *m)
{
    int rc;
    if ((m->SA.path != NULL) != (m->SB.path != NULL))
        return er_cli_usage_error(m->cmd, "block scaling needs both --a-scale and --b-scale");
    if ((rc = load_operand(m->cmd, "A", &m->A, m->afmt)) || (rc = load_operand(m->cmd, "B", &m->B, m->bfmt)))
        return rc;
    if (m->C.path && (rc = load_operand(m->cmd, "--acc", &m->C, m->cfmt))) return rc;
    if (m->SA.path) {
        if (m->sfmt < 0) m->sfmt = ER_FMT_F8E8M0FNU;
        if (m->block == 0) m->block = m->sfmt == ER_FMT_F8E4M3FN ? 16 : 32;
        if ((rc = load_operand(m->cmd, "--a-scale", &m->SA, m->sfmt)) ||
            (rc = load_operand(m->cmd, "--b-scale", &m->SB, m->sfmt)))
            return rc;
    }
    return ER_EXIT_OK;
}

void er_cli_mma_args(er_cli_mma *m, er_mma_args *args)
{
    er_mma_args_init(args);
    args->a = &m->A.t;
    args->b = &m->B.t;
    args->c = m->C.loaded ? &m->C.t : NULL;
    if (m->SA.loaded) {
        args->a_scale = &m->SA.t;
        args->b_scale = &m->SB.t;
        args->block = m->block;
    }
    args->rounding = m->dir;
    args->opts = m->opts;
    args->threads = m->threads;
    args->strategy = m->strategy;
    args->backend = !strcmp(m->backend, "opencl") ? ER_BACKEND_OPENCL
                    : !strcmp(m->backend, "cuda") ? ER_BACKEND_CUDA
                    : !strcmp(m->backend, "cpu")  ? ER_BACKEND_CPU
                                                  : ER_BACKEND_AUTO;
    args->device = m->device;
}

void er_cli_mma_shape(const er_cli_mma *m, int64_t *batch, int64_t *rows, int64_t *cols, int *batched)
{
    const er_tensor *A = &m->A.t, *B = &m->B.t;
    *batched = A->ndim == 3 || B->ndim == 3;
    *batch = A->ndim == 3 ? A->shape[0] : B->ndim == 3 ? B->shape[0] : 1;
    *rows = A->shape[A->ndim - 2];
    *cols = B->shape[B->ndim - 1];
}

static void free_operand(er_cli_operand *o)
{
    er_npy_free(&o->npy);
    free(o->storage);
    o->storage = NULL;
}

void er_cli_mma_free(er_cli_mma *m)
{
    free_operand(&m->A);
    free_operand(&m->B);
    free_operand(&m->C);
    free_operand(&m->SA);
    free_operand(&m->SB);
}
