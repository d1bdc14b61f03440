/* cli_scaled.c: the command's flags for scaled products (f32 or bf16 scales after a block's sum,
 * --alpha, --beta, --bias, --block-n; include/exactref/scaled.h), shared by `matmul` and `check`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_mma.h"

const char *const er_cli_scaled_flags_help =
    "  Scaled products (f32 scales applied after a block's sum: docs/scaled.md):\n"
    "    --scale-format f32|bf16  --a-scale and --b-scale hold f32 (or bf16) scales; their shapes say\n"
    "                           the granularity: 1 x 1 (per tensor), m x 1 / 1 x n (per row of A / per\n"
    "                           column of B), m x ceil(k/block) / ceil(k/block) x ceil(n/block-n) (per\n"
    "                           1 x block / block x block-n block, DeepGEMM's 1 x 128 / 128 x 128)\n"
    "    --block V, --block-n V the scale blocks (default 128 each)\n"
    "    --alpha V, --beta V    D = alpha (sum) + beta C + bias (f32 values; --beta needs --acc)\n"
    "    --bias BIAS.npy        a 1 x n bias (f32, bf16 or f16), added to every row\n"
    "    check's standard is then scaled:bk=<block> unless --standard names another scaled:.. one.\n";

int er_cli_scaled_mode(const er_cli_mma *m)
{
    return m->sfmt == ER_FMT_F32 || m->sfmt == ER_FMT_BF16 || m->alpha_set || m->beta_set || m->BIAS.path;
}

int er_cli_scaled_option(er_cli_mma *m, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "--alpha") && strcmp(a, "--beta") && strcmp(a, "--bias") && strcmp(a, "--block-n")) return 0;
    if (er_cli_mma_once(m, a)) return -1;
    if (*i + 1 >= argc) {
        er_cli_usage_error(m->cmd, "%s needs a value", a);
        return -1;
    }
    const char *v = argv[++*i];
    char *e;
    if (!strcmp(a, "--bias")) {
        m->BIAS.path = v;
        return 1;
    }
    if (!strcmp(a, "--block-n")) {
        long x = strtol(v, &e, 10);
        if (*e || !*v || x < 1 || x > 1 << 24) {
            er_cli_usage_error(m->cmd, "--block-n: '%s' is not a valid count", v);
            return -1;
        }
        m->block_n = (int)x;
        return 1;
    }
    double x = strtod(v, &e);
    if (*e || !*v || !isfinite(x) || (double)(float)x != x) {
        er_cli_usage_error(m->cmd, "%s: '%s' is not a finite f32 value (write it exactly, e.g. 0.5 or 0x1.8p-2)", a, v);
        return -1;
    }
    if (a[2] == 'a') m->alpha = x, m->alpha_set = 1;
    else m->beta = x, m->beta_set = 1;
    return 1;
}

static int load(er_cli_mma *m, const char *what, er_cli_operand *o, int declared)
{
    char msg[1024];
    er_status st = er_cli_read_tensor(o->path, m->mapped, &o->npy, &o->map, declared, &o->t, &o->storage, msg, sizeof msg);
    if (st != ER_OK) {
        fprintf(stderr, "exactref %s: %s: %s\n", m->cmd, what, msg);
        return st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
    }
    o->loaded = 1;
    return ER_EXIT_OK;
}

int er_cli_scaled_load(er_cli_mma *m)
{
    int rc;
    if (m->b_transposed) return er_cli_usage_error(m->cmd, "--b-transposed is not supported with f32 scales");
    if (m->beta_set && !m->C.path) return er_cli_usage_error(m->cmd, "--beta has no effect without --acc");
    if (m->sfmt >= 0 && m->sfmt != ER_FMT_F32 && m->sfmt != ER_FMT_BF16)
        return er_cli_usage_error(m->cmd, "--alpha, --beta and --bias take f32 or bf16 scales (--scale-format f32), "
                                  "not the MX block scales");
    if (m->device >= 0 && m->backend && !strcmp(m->backend, "cpu"))
        return er_cli_usage_error(m->cmd, "--device has no effect with --backend cpu (it picks an OpenCL or CUDA device)");
    if ((rc = load(m, "A", &m->A, m->afmt)) || (rc = load(m, "B", &m->B, m->bfmt))) return rc;
    if (m->C.path && (rc = load(m, "--acc", &m->C, m->cfmt))) return rc;
    if (m->SA.path && (rc = load(m, "--a-scale", &m->SA, m->sfmt < 0 ? ER_FMT_F32 : m->sfmt))) return rc;
    if (m->SB.path && (rc = load(m, "--b-scale", &m->SB, m->sfmt < 0 ? ER_FMT_F32 : m->sfmt))) return rc;
    if (m->BIAS.path && (rc = load(m, "--bias", &m->BIAS, -1))) return rc;
    if (m->A.t.ndim != 2 || m->B.t.ndim != 2)
        return er_cli_usage_error(m->cmd, "scaled products take 2-D A and B (A is %d-D, B is %d-D)", m->A.t.ndim,
                                  m->B.t.ndim);
    if (m->A.t.shape[1] != m->B.t.shape[0])
        return er_cli_usage_error(m->cmd, "A is %lld x %lld and B is %lld x %lld: A's columns must be B's rows",
                                  (long long)m->A.t.shape[0], (long long)m->A.t.shape[1], (long long)m->B.t.shape[0],
                                  (long long)m->B.t.shape[1]);
    return ER_EXIT_OK;
}

void er_cli_scaled_args(er_cli_mma *m, er_scaled_args *s, er_tensor *d)
{
    er_scaled_args_init(s);
    s->a = &m->A.t;
    s->b = &m->B.t;
    s->a_scale = m->SA.loaded ? &m->SA.t : NULL;
    s->b_scale = m->SB.loaded ? &m->SB.t : NULL;
    if (m->block) s->block_k = m->block;
    if (m->block_n) s->block_n = m->block_n;
    if (m->alpha_set) s->alpha = m->alpha;
    if (m->beta_set) s->beta = m->beta;
    else if (m->C.loaded) s->beta = 1.0; /* --acc alone: D = A B + C */
    s->c = m->C.loaded ? &m->C.t : NULL;
    s->bias = m->BIAS.loaded ? &m->BIAS.t : NULL;
    s->d = d;
    s->rounding = m->dir;
    s->opts = m->opts;
    s->threads = m->threads;
}
