/* cli_mma.c: the operand flags shared by `exactref matmul` and `exactref check`. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_mma.h"
#include "standards_internal.h"

const char *const er_cli_mma_flags_help =
    "    --acc C.npy            the accumulator input C (any float format; i32 for mmai)\n"
    "    --a-format F, --b-format F, --acc-format F   declared formats of the operands\n"
    "    --out-format F         the output format\n"
    "    --rounding R           nearest_even (default), nearest_away, zero, negative_inf,\n"
    "                           positive_inf\n"
    "    --saturate             overflow gives the largest finite value instead of inf or NaN\n"
    "    --a-scale SA.npy, --b-scale SB.npy   block scales (raw uint8 patterns)\n"
    "    --block V              elements per scale (default 32 for f8E8M0FNU, 16 for f8E4M3FN and f8E5M3FNU)\n"
    "    --scale-format F       f8E8M0FNU (default), f8E4M3FN, or f8E5M3FNU (f4E2M1FN elements only)\n"
    "    --backend B            auto (default), cpu, opencl or cuda: the same bits on each; auto\n"
    "                           uses a device for 2^30 multiply-adds or more where one exists, and\n"
    "                           the CPU if it fails (a one-line note); by name, a failure is exit 3\n"
    "    --device N             the OpenCL or CUDA device (see exactref info; or\n"
    "                           EXACTREF_OPENCL_DEVICE, EXACTREF_CUDA_DEVICE)\n"
    "    --threads N            threads, at most 1024 (default 0: one per core); the bits never\n"
    "                           depend on it\n"
    "    --strategy S           auto (certified fast path plus exact accumulator) or exact\n"
    "    --b-transposed         B.npy holds B transposed, n x k (torch.nn.Linear's weight W, for\n"
    "                           y = x W^T): read through strides, no copy; --b-scale is then\n"
    "                           n x ceil(k/V) too\n"
    "    A 3-D operand with a batch of 1 is broadcast over the other's batch, as numpy.matmul does.\n"
    "    Each of these flags may be given once; --acc-format needs --acc, --block and\n"
    "    --scale-format need the scales, and an integer product (mmai) takes no --rounding,\n"
    "    --saturate or --flush-to-zero: each is exit 2 with the reason.\n";

void er_cli_mma_init(er_cli_mma *m, const char *cmd)
{
    memset(m, 0, sizeof *m);
    m->cmd = cmd;
    m->afmt = m->bfmt = m->cfmt = m->ofmt = m->sfmt = -1;
    m->dir = ER_RND_NEAREST_EVEN;
    m->strategy = ER_STRATEGY_AUTO;
    m->backend = "auto";
    m->device = -1;
    m->alpha = 1.0;
}

int er_cli_mma_once(er_cli_mma *m, const char *flag)
{
    const char *canon = !strcmp(flag, "-o") ? "--output" : flag;
    for (int k = 0; k < m->nseen; k++)
        if (!strcmp(m->seen[k], canon)) {
            er_cli_usage_error(m->cmd, "%s is given twice (it takes one value)", flag);
            return -1;
        }
    if (m->nseen < (int)(sizeof m->seen / sizeof m->seen[0])) m->seen[m->nseen++] = canon;
    return 0;
}

int er_cli_mma_option(er_cli_mma *m, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int need = 0, sc = er_cli_scaled_option(m, argc, argv, i); /* cli_scaled.c */
    if (sc) return sc;
    if (!strcmp(a, "--b-transposed")) {
        if (er_cli_mma_once(m, a)) return -1;
        m->b_transposed = 1;
        return 1;
    }
    if (!strcmp(a, "--acc") || !strcmp(a, "--a-format") || !strcmp(a, "--b-format") || !strcmp(a, "--acc-format") ||
        !strcmp(a, "--out-format") || !strcmp(a, "--scale-format") || !strcmp(a, "--rounding") ||
        !strcmp(a, "--a-scale") || !strcmp(a, "--b-scale") || !strcmp(a, "--block") || !strcmp(a, "--backend") ||
        !strcmp(a, "--threads") || !strcmp(a, "--strategy") || !strcmp(a, "--device"))
        need = 1;
    else if (!strcmp(a, "--saturate")) {
        if (er_cli_mma_once(m, a)) return -1;
        m->opts |= ER_OPT_SATURATE;
        return 1;
    } else
        return 0;
    if (er_cli_mma_once(m, a)) return -1;
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
        m->rounding_set = 1;
    } else if (!strcmp(a, "--device")) {
        long x = strtol(v, &e, 10);
        if (*e || x < 0 || x > 4096) {
            er_cli_usage_error(m->cmd, "--device: '%s' is not a device index (see exactref info)", v);
            return -1;
        }
        m->device = (int)x;
    } else if (!strcmp(a, "--block") || !strcmp(a, "--threads")) {
        long x = strtol(v, &e, 10);
        if (*e || !*v || x < (a[2] == 'b' ? 1 : 0) || x > 1 << 24) {
            er_cli_usage_error(m->cmd, "%s: '%s' is not a valid count", a, v);
            return -1;
        }
        if (a[2] == 't' && x > 1024) {
            er_cli_usage_error(m->cmd, "--threads: %ld is more than 1024 threads (0: one per core)", x);
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

/* B^T through strides: the n x k array read as k x n without a copy. */
static void transpose_view(er_tensor *t)
{
    int r = t->ndim - 2, c = t->ndim - 1;
    int64_t x = t->shape[r];
    t->shape[r] = t->shape[c];
    t->shape[c] = x;
    x = t->strides[r];
    t->strides[r] = t->strides[c];
    t->strides[c] = x;
}

/* A 3-D tensor with a batch of 1 as the 2-D matrix it holds. */
static void drop_batch(er_tensor *t)
{
    t->ndim = 2;
    t->shape[0] = t->shape[1];
    t->shape[1] = t->shape[2];
    t->strides[0] = t->strides[1];
    t->strides[1] = t->strides[2];
}

/* ---- Memory-mapped inputs, and the one signal a mapping can raise. ---- */

int er_cli_mmap_enabled(void)
{
    const char *e = getenv("EXACTREF_NO_MMAP");
    return !e || !*e || !strcmp(e, "0");
}

/* The mappings in use (at most six inputs per command; a slot is free when path is NULL). */
#define ER_CLI_WATCH 8
static struct {
    uintptr_t lo, hi;
    const char *volatile path;
} watch[ER_CLI_WATCH];
static int watch_installed;

static atomic_flag sigbus_seen = ATOMIC_FLAG_INIT;

/* SIGBUS at an address of a watched mapping: its file was cut while in use.  Only async-signal-safe
 * calls here (a lock-free flag, write, _exit, pause, signal, raise); the first thread to fault says it
 * in one write and ends the process, the others wait for that; any other SIGBUS keeps its default
 * action. */
static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    static const char tail[] = ": the file became shorter while it was being read (its pages are memory-mapped; "
                               "EXACTREF_NO_MMAP=1 reads the inputs into memory first): no result\n";
    uintptr_t a = (uintptr_t)si->si_addr;
    (void)ctx;
    for (int k = 0; k < ER_CLI_WATCH; k++) {
        const char *p = watch[k].path;
        if (p && a >= watch[k].lo && a < watch[k].hi) {
            char line[4096 + sizeof tail + 16];
            size_t n = 0, pl = strlen(p);
            if (atomic_flag_test_and_set(&sigbus_seen))
                for (;;) pause();
            if (pl > 4096) pl = 4096;
            memcpy(line, "exactref: ", 10);
            n = 10;
            memcpy(line + n, p, pl);
            n += pl;
            memcpy(line + n, tail, sizeof tail - 1);
            n += sizeof tail - 1;
            (void)!write(2, line, n);
            _exit(ER_EXIT_INTERNAL);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_add(const _er_npy_map *map, const char *path)
{
    if (!map->base) return;
    if (!watch_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, NULL) == 0) watch_installed = 1;
    }
    for (int k = 0; k < ER_CLI_WATCH; k++)
        if (!watch[k].path) {
            watch[k].lo = (uintptr_t)map->base;
            watch[k].hi = (uintptr_t)map->base + map->len;
            watch[k].path = path ? path : "an input";
            return;
        }
}

static void watch_remove(const _er_npy_map *map)
{
    for (int k = 0; k < ER_CLI_WATCH; k++)
        if (watch[k].path && watch[k].lo == (uintptr_t)map->base) watch[k].path = NULL;
}

er_status er_cli_read_tensor(const char *path, int mapped, er_npy *npy, _er_npy_map *map, int declared, er_tensor *t,
                             void **storage, char *msg, size_t msg_size)
{
    er_status st;
    memset(map, 0, sizeof *map);
    *storage = NULL;
    if (!mapped) {
        st = er_npy_read(path, npy, msg, msg_size);
        if (st == ER_OK) st = er_npy_to_tensor(npy, path, declared, t, storage, msg, msg_size);
        return st;
    }
    st = _er_npy_map_read(path, npy, map, msg, msg_size);
    if (st != ER_OK) return st;
    watch_add(map, path); /* before the first access to its pages */
    return _er_npy_to_tensor_mapped(npy, map, path, declared, t, storage, msg, msg_size);
}

void er_cli_release_data(er_npy *npy, _er_npy_map *map)
{
    er_npy keep = *npy;
    if (map->base) watch_remove(map);
    _er_npy_map_release(npy, map);
    keep.data = NULL;
    *npy = keep;
}

static int load_operand(const char *cmd, const char *what, er_cli_operand *o, int declared, int mapped)
{
    char msg[1024];
    er_status st = er_cli_read_tensor(o->path, mapped, &o->npy, &o->map, declared, &o->t, &o->storage, msg, sizeof msg);
    if (st != ER_OK) {
        fprintf(stderr, "exactref %s: %s: %s\n", cmd, what, msg);
        if (declared < 0 && strstr(msg, "void array"))
            fprintf(stderr, "exactref %s: hint: an ml_dtypes array saved with np.save: pass its format, e.g. %s %s\n",
                    cmd, !strcmp(what, "A") ? "--a-format" : !strcmp(what, "B") ? "--b-format" : "--acc-format",
                    o->npy.itemsize == 1 || strstr(msg, "1-byte") ? "f8E4M3FN" : "bf16");
        return st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
    }
    o->loaded = 1;
    return ER_EXIT_OK;
}

int er_cli_mma_load(er_cli_mma *m)
{
    int rc;
    if (er_cli_scaled_mode(m)) return er_cli_scaled_load(m); /* f32 scales: cli_scaled.c */
    if ((m->SA.path != NULL) != (m->SB.path != NULL))
        return er_cli_usage_error(m->cmd, "block scaling needs both --a-scale and --b-scale");
    if (m->device >= 0 && m->backend && !strcmp(m->backend, "cpu"))
        return er_cli_usage_error(m->cmd, "--device has no effect with --backend cpu (it picks an OpenCL or CUDA device)");
    if ((rc = load_operand(m->cmd, "A", &m->A, m->afmt, m->mapped)) || (rc = load_operand(m->cmd, "B", &m->B, m->bfmt, m->mapped)))
        return rc;
    if (m->C.path && (rc = load_operand(m->cmd, "--acc", &m->C, m->cfmt, m->mapped))) return rc;
    if (!m->SA.path && (m->block || m->sfmt >= 0))
        return er_cli_usage_error(m->cmd, "%s has no effect without block scales (--a-scale and --b-scale)",
                                  m->block ? "--block" : "--scale-format");
    if (!m->C.path && m->cfmt >= 0) return er_cli_usage_error(m->cmd, "--acc-format has no effect without --acc");
    if (m->SA.path) {
        if (m->sfmt < 0) m->sfmt = ER_FMT_F8E8M0FNU;
        if (m->block == 0) m->block = m->sfmt == ER_FMT_F8E4M3FN || m->sfmt == ER_FMT_F8E5M3FNU ? 16 : 32;
        if ((rc = load_operand(m->cmd, "--a-scale", &m->SA, m->sfmt, m->mapped)) ||
            (rc = load_operand(m->cmd, "--b-scale", &m->SB, m->sfmt, m->mapped)))
            return rc;
    }
    if (m->b_transposed) {
        transpose_view(&m->B.t);
        if (m->SB.loaded) transpose_view(&m->SB.t);
    }
    /* numpy.matmul's broadcast: a batch of 1 against a batch of b is the 2-D matrix, used b times */
    if (m->A.t.ndim == 3 && m->B.t.ndim == 3 && m->A.t.shape[0] != m->B.t.shape[0]) {
        if (m->A.t.shape[0] == 1) drop_batch(&m->A.t);
        else if (m->B.t.shape[0] == 1) drop_batch(&m->B.t);
    }
    return ER_EXIT_OK;
}

static const char *fname(const er_cli_operand *o) { return o->path ? o->path : "?"; }

int er_cli_mma_validate(er_cli_mma *m, int out_fmt, const char *out_what)
{
    const er_tensor *A = &m->A.t, *B = &m->B.t;
    const char *cmd = m->cmd;
    int64_t ar = A->shape[A->ndim - 2], ac = A->shape[A->ndim - 1];
    int64_t br = B->shape[B->ndim - 2], bc = B->shape[B->ndim - 1];
    er_format_info fa, fb;
    er_format_get_info(A->format, &fa);
    er_format_get_info(B->format, &fb);
    if (ac != br) {
        if (m->b_transposed)
            return er_cli_usage_error(cmd, "A (%s) is %lld x %lld and B (%s, --b-transposed) is %lld x %lld: the inner "
                                      "dimensions differ (A's %lld columns, B's %lld columns)",
                                      fname(&m->A), (long long)ar, (long long)ac, fname(&m->B), (long long)bc,
                                      (long long)br, (long long)ac, (long long)br);
        return er_cli_usage_error(cmd, "A (%s) is %lld x %lld and B (%s) is %lld x %lld: the inner dimensions "
                                  "differ (A's %lld columns, B's %lld rows)%s",
                                  fname(&m->A), (long long)ar, (long long)ac, fname(&m->B), (long long)br,
                                  (long long)bc, (long long)ac, (long long)br,
                                  bc == ac ? "; B looks n x k: pass --b-transposed (y = x W^T)" : "");
    }
    if (A->ndim == 3 && B->ndim == 3 && A->shape[0] != B->shape[0])
        return er_cli_usage_error(cmd, "A (%s) has a batch of %lld and B (%s) a batch of %lld (a batch of 1 "
                                  "is broadcast; others must be equal)",
                                  fname(&m->A), (long long)A->shape[0], fname(&m->B), (long long)B->shape[0]);
    int64_t batch, rows, cols;
    int batched;
    er_cli_mma_shape(m, &batch, &rows, &cols, &batched);
    if (m->C.loaded) {
        const er_tensor *C = &m->C.t;
        int64_t cr = C->shape[C->ndim - 2], cc = C->shape[C->ndim - 1];
        if (cr != rows || cc != cols || (C->ndim == 3 && C->shape[0] != batch))
        {
            char cs[64], ps[64];
            if (C->ndim == 3) snprintf(cs, sizeof cs, "%lld x %lld x %lld", (long long)C->shape[0], (long long)cr, (long long)cc);
            else snprintf(cs, sizeof cs, "%lld x %lld", (long long)cr, (long long)cc);
            if (batched) snprintf(ps, sizeof ps, "%lld x %lld x %lld", (long long)batch, (long long)rows, (long long)cols);
            else snprintf(ps, sizeof ps, "%lld x %lld", (long long)rows, (long long)cols);
            return er_cli_usage_error(cmd, "--acc %s has shape %s; the product is %s", fname(&m->C), cs, ps);
        }
    }
    if (m->SA.loaded && !er_cli_scaled_mode(m)) { /* f32 scales: their shapes are the library's to check */
        int64_t k = ac, nb = (k + m->block - 1) / m->block;
        const er_tensor *S = &m->SA.t, *T = &m->SB.t;
        if (S->shape[S->ndim - 2] != rows || S->shape[S->ndim - 1] != nb)
            return er_cli_usage_error(cmd, "--a-scale %s is %lld x %lld; expected %lld x %lld (m x ceil(k/%d))",
                                      fname(&m->SA), (long long)S->shape[S->ndim - 2], (long long)S->shape[S->ndim - 1],
                                      (long long)rows, (long long)nb, m->block);
        if (T->shape[T->ndim - 2] != nb || T->shape[T->ndim - 1] != cols)
            return er_cli_usage_error(cmd, "--b-scale %s is %lld x %lld; expected %lld x %lld (%s)", fname(&m->SB),
                                      (long long)(m->b_transposed ? T->shape[T->ndim - 1] : T->shape[T->ndim - 2]),
                                      (long long)(m->b_transposed ? T->shape[T->ndim - 2] : T->shape[T->ndim - 1]),
                                      (long long)(m->b_transposed ? cols : nb), (long long)(m->b_transposed ? nb : cols),
                                      m->b_transposed ? "n x ceil(k/block), as B is transposed" : "ceil(k/block) x n");
    }
    int aint = fa.kind != ER_KIND_FLOAT, bint = fb.kind != ER_KIND_FLOAT;
    /* integers wider than 8 bits (int16 without a format: torch's view(torch.int16) of bf16) */
    for (int side = 0; side < 2; side++) {
        const er_format_info *fi = side ? &fb : &fa;
        if (fi->kind != ER_KIND_FLOAT && fi->storage_bytes > 1)
            return er_cli_usage_error(cmd, "%s (%s) was read as %s integers, and an integer product (mmai) takes i8 or "
                                      "u8 operands. For bf16 or f16 bit patterns in an int16 array (torch's "
                                      "t.view(torch.int16)), name the format: %s bf16 (or f16); for integer values, "
                                      "name a float format that holds them exactly (%s f32)",
                                      side ? "B" : "A", fname(side ? &m->B : &m->A), fi->name,
                                      side ? "--b-format" : "--a-format", side ? "--b-format" : "--a-format");
    }
    if (aint != bint)
        return er_cli_usage_error(cmd, "A (%s) is %s and B (%s) is %s: both float formats (mma) or both i8/u8 "
                                  "integers (mmai). For fp8 bit patterns in a uint8/int8 array, name the format: "
                                  "%s f8E4M3FN (or f8E5M2, ...)", fname(&m->A), fa.name, fname(&m->B), fb.name,
                                  aint ? "--a-format" : "--b-format");
    /* the accumulator's kind is the product's: a float C for mma, i32 for mmai */
    if (m->C.loaded) {
        er_format_info fc;
        er_format_get_info(m->C.t.format, &fc);
        if (!aint && fc.kind != ER_KIND_FLOAT)
            return er_cli_usage_error(cmd, "--acc %s was read as %s integers, and the product of A (%s, %s) and B "
                                      "(%s, %s) is a float product, whose accumulator is a float format: name "
                                      "it, e.g. --acc-format f32 (each value must then be an f32 value)",
                                      fname(&m->C), fc.name, fname(&m->A), fa.name, fname(&m->B), fb.name);
        if (aint && bint && m->C.t.format != ER_FMT_I32)
            return er_cli_usage_error(cmd, "--acc %s is %s, and the integer product (mmai) of A (%s, %s) and B (%s, "
                                      "%s) takes an i32 accumulator (an int32 array)",
                                      fname(&m->C), fc.name, fname(&m->A), fa.name, fname(&m->B), fb.name);
    }
    if (aint && bint) {
        const char *flag = m->rounding_set ? "--rounding" : (m->opts & ER_OPT_SATURATE) ? "--saturate"
                           : m->ftz ? "--flush-to-zero" : NULL;
        if (flag)
            return er_cli_usage_error(cmd, "%s has no meaning for an integer product (mmai: exact sums wrapped "
                                      "modulo 2^32; A is %s, B is %s)", flag, fa.name, fb.name);
        if (out_fmt >= 0 && out_fmt != ER_FMT_I32) {
            er_format_info fo;
            er_format_get_info(out_fmt, &fo);
            return er_cli_usage_error(cmd,
                                      "A (%s) and B (%s) were read as %s and %s integers, which make an integer "
                                      "product (mmai) with an i32 output, not %s (%s). For fp8 bit patterns in "
                                      "uint8/int8 arrays, name their format: --a-format f8E4M3FN --b-format "
                                      "f8E4M3FN (or f8E5M2, ...)",
                                      fname(&m->A), fname(&m->B), fa.name, fb.name, fo.name, out_what);
        }
    }
    return ER_EXIT_OK;
}

int er_cli_mma_out_kind(er_cli_mma *m, int out_fmt, const char *out_what)
{
    er_format_info fa, fb;
    er_format_get_info(m->A.t.format, &fa);
    er_format_get_info(m->B.t.format, &fb);
    if (fa.kind == ER_KIND_FLOAT && fb.kind == ER_KIND_FLOAT && out_fmt >= 0) {
        er_format_info fo;
        er_format_get_info(out_fmt, &fo);
        if (fo.kind != ER_KIND_FLOAT)
            return er_cli_usage_error(m->cmd, "the product of A (%s, %s) and B (%s, %s) is rounded into a float format, "
                                      "not %s (%s): name a float output format (--out-format f32); i32 is the integer "
                                      "product's (mmai: i8/u8 operands)",
                                      fname(&m->A), fa.name, fname(&m->B), fb.name, fo.name, out_what);
    }
    return ER_EXIT_OK;
}

int er_cli_standard_operands(const er_cli_mma *m, const er_standard *std)
{
    char msg[1024], wa[4200], wb[4200];
    er_standard used = er_standard_for_inputs(std, m->A.t.format, m->B.t.format);
    snprintf(wa, sizeof wa, "A (%s)", fname(&m->A));
    snprintf(wb, sizeof wb, "B (%s)", fname(&m->B));
    if (er_standard_check_operands_(&used, m->A.t.format, m->B.t.format, wa, wb, msg, sizeof msg) != ER_OK)
        return er_cli_usage_error(m->cmd, "%s", msg);
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
    er_cli_release_data(&o->npy, &o->map);
    memset(&o->npy, 0, sizeof o->npy);
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
    free_operand(&m->BIAS);
}

void er_cli_mma_files_in(er_cli_files *f, const er_cli_mma *m, const char *extra, const char *extra_what)
{
    er_cli_files_in(f, m->A.path, "A");
    er_cli_files_in(f, m->B.path, "B");
    er_cli_files_in(f, extra, extra_what);
    er_cli_files_in(f, m->C.path, "--acc");
    er_cli_files_in(f, m->SA.path, "--a-scale");
    er_cli_files_in(f, m->SB.path, "--b-scale");
    er_cli_files_in(f, m->BIAS.path, "--bias");
}
