/* cmd_matmul.c: `exactref matmul`: the exact product of .npy operands, rounded once, to .npy. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exactref/npy.h"

typedef struct {
    const char *path;
    er_npy npy;
    er_tensor t;
    void *storage;
    int loaded;
} operand;

/* Read an operand and turn it into a tensor of `declared` (-1: the dtype decides); exit status. */
static int load_operand(const char *what, operand *o, int declared)
{
    char msg[1024];
    er_status st = er_npy_read(o->path, &o->npy, msg, sizeof msg);
    if (st != ER_OK) {
        fprintf(stderr, "exactref matmul: %s: %s\n", what, msg);
        return st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
    }
    st = er_npy_to_tensor(&o->npy, o->path, declared, &o->t, &o->storage, msg, sizeof msg);
    if (st != ER_OK) {
        fprintf(stderr, "exactref matmul: %s: %s\n", what, msg);
        return st == ER_ENOMEM ? ER_EXIT_INTERNAL : ER_EXIT_USAGE;
    }
    o->loaded = 1;
    return ER_EXIT_OK;
}

static void free_operand(operand *o)
{
    er_npy_free(&o->npy);
    free(o->storage);
}

int er_cmd_matmul(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    const char *out = NULL, *lo_path = NULL, *hi_path = NULL, *odd_path = NULL, *backend = "auto";
    int npos = 0, afmt = -1, bfmt = -1, cfmt = -1, ofmt = -1, sfmt = -1, dir = ER_RND_NEAREST_EVEN;
    int block = 0, threads = 0, strategy = ER_STRATEGY_AUTO, show_stats = 0;
    unsigned opts = 0;
    operand A = {0}, B = {0}, C = {0}, SA = {0}, SB = {0};
    int rc = ER_EXIT_OK;
    void *dbuf = NULL, *lobuf = NULL, *hibuf = NULL, *oddbuf = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEED(n)                                                                       \
    do {                                                                              \
        if (i + (n) >= argc) return er_cli_usage_error("matmul", "%s needs %s", a, (n) == 1 ? "a value" : "two values"); \
    } while (0)
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) { NEED(1); out = argv[++i]; }
        else if (!strcmp(a, "--acc")) { NEED(1); C.path = argv[++i]; }
        else if (!strcmp(a, "--a-format") || !strcmp(a, "--b-format") || !strcmp(a, "--acc-format") ||
                 !strcmp(a, "--out-format") || !strcmp(a, "--scale-format")) {
            int *dst = !strcmp(a, "--a-format")     ? &afmt
                       : !strcmp(a, "--b-format")   ? &bfmt
                       : !strcmp(a, "--acc-format") ? &cfmt
                       : !strcmp(a, "--out-format") ? &ofmt
                                                    : &sfmt;
            NEED(1);
            if (er_cli_parse_format("matmul", a, argv[++i], dst)) return ER_EXIT_USAGE;
        } else if (!strcmp(a, "--rounding")) {
            NEED(1);
            if (er_rounding_from_name(argv[++i], &dir) != ER_OK || dir == ER_RND_ODD)
                return er_cli_usage_error("matmul", "--rounding: unknown direction '%s' (nearest_even, "
                                          "nearest_away, zero, negative_inf, positive_inf)", argv[i]);
        } else if (!strcmp(a, "--saturate")) opts |= ER_OPT_SATURATE;
        else if (!strcmp(a, "--flush-to-zero")) opts |= ER_OPT_FTZ;
        else if (!strcmp(a, "--a-scale")) { NEED(1); SA.path = argv[++i]; }
        else if (!strcmp(a, "--b-scale")) { NEED(1); SB.path = argv[++i]; }
        else if (!strcmp(a, "--block")) {
            char *e;
            NEED(1);
            block = (int)strtol(argv[++i], &e, 10);
            if (*e || block < 1) return er_cli_usage_error("matmul", "--block: '%s' is not a positive integer", argv[i]);
        } else if (!strcmp(a, "--enclosure")) { NEED(2); lo_path = argv[++i]; hi_path = argv[++i]; }
        else if (!strcmp(a, "--odd")) { NEED(1); odd_path = argv[++i]; }
        else if (!strcmp(a, "--backend")) { NEED(1); backend = argv[++i]; }
        else if (!strcmp(a, "--threads")) {
            char *e;
            NEED(1);
            threads = (int)strtol(argv[++i], &e, 10);
            if (*e || threads < 0) return er_cli_usage_error("matmul", "--threads: '%s' is not a count", argv[i]);
        } else if (!strcmp(a, "--strategy")) {
            NEED(1);
            i++;
            if (!strcmp(argv[i], "auto")) strategy = ER_STRATEGY_AUTO;
            else if (!strcmp(argv[i], "exact")) strategy = ER_STRATEGY_EXACT;
            else return er_cli_usage_error("matmul", "--strategy: '%s' is not auto or exact", argv[i]);
        } else if (!strcmp(a, "--stats")) show_stats = 1;
        else if (a[0] == '-' && a[1]) return er_cli_usage_error("matmul", "unknown option '%s'", a);
        else if (npos < 2) pos[npos++] = a;
        else return er_cli_usage_error("matmul", "unexpected argument '%s' (operands: A.npy B.npy)", a);
#undef NEED
    }
    if (npos < 2) return er_cli_usage_error("matmul", "two operands are required: A.npy B.npy");
    if (!out && !lo_path && !odd_path) return er_cli_usage_error("matmul", "-o D.npy is required");
    if (out && ofmt < 0) return er_cli_usage_error("matmul", "--out-format FORMAT is required");
    if ((SA.path != NULL) != (SB.path != NULL))
        return er_cli_usage_error("matmul", "block scaling needs both --a-scale and --b-scale");
    if (strcmp(backend, "auto") && strcmp(backend, "cpu") && strcmp(backend, "opencl") && strcmp(backend, "cuda"))
        return er_cli_usage_error("matmul", "--backend: '%s' is not auto, cpu, opencl or cuda", backend);
    if (!strcmp(backend, "opencl") || !strcmp(backend, "cuda")) {
        fprintf(stderr, "exactref matmul: --backend %s: the %s backend of the exact engine is not built yet; "
                        "use --backend cpu (the same bits)\n", backend, backend);
        return ER_EXIT_INTERNAL;
    }
    A.path = pos[0];
    B.path = pos[1];
    if ((rc = load_operand("A", &A, afmt)) || (rc = load_operand("B", &B, bfmt))) goto done;
    if (C.path && (rc = load_operand("--acc", &C, cfmt))) goto done;
    if (SA.path) {
        if (sfmt < 0) sfmt = ER_FMT_F8E8M0FNU;
        if (block == 0) block = sfmt == ER_FMT_F8E4M3FN ? 16 : 32;
        if ((rc = load_operand("--a-scale", &SA, sfmt)) || (rc = load_operand("--b-scale", &SB, sfmt))) goto done;
    }
    {
        int batched = A.t.ndim == 3 || B.t.ndim == 3;
        int64_t batch = A.t.ndim == 3 ? A.t.shape[0] : B.t.ndim == 3 ? B.t.shape[0] : 1;
        int64_t m = A.t.shape[A.t.ndim - 2], n = B.t.shape[B.t.ndim - 1];
        er_tensor D, LO, HI, ODD;
        er_format_info fi;
        er_mma_args args;
        er_mma_stats stats;
        char msg[1024];
        size_t elems = (size_t)(batch * m * n);
        er_mma_args_init(&args);
        args.a = &A.t;
        args.b = &B.t;
        args.c = C.loaded ? &C.t : NULL;
        if (SA.loaded) {
            args.a_scale = &SA.t;
            args.b_scale = &SB.t;
            args.block = block;
        }
        args.rounding = dir;
        args.opts = opts;
        args.threads = threads;
        args.strategy = strategy;
        args.stats = &stats;
        args.msg = msg;
        args.msg_size = sizeof msg;
        if (out) {
            er_format_get_info(ofmt, &fi);
            dbuf = calloc(elems ? elems : 1, (size_t)fi.storage_bytes);
            D = batched ? er_tensor_3d(ofmt, batch, m, n, dbuf) : er_tensor_2d(ofmt, m, n, dbuf);
            args.d = &D;
        }
        if (lo_path) {
            lobuf = calloc(elems ? elems : 1, 8);
            hibuf = calloc(elems ? elems : 1, 8);
            LO = batched ? er_tensor_3d(ER_FMT_F64, batch, m, n, lobuf) : er_tensor_2d(ER_FMT_F64, m, n, lobuf);
            HI = batched ? er_tensor_3d(ER_FMT_F64, batch, m, n, hibuf) : er_tensor_2d(ER_FMT_F64, m, n, hibuf);
            args.lo = &LO;
            args.hi = &HI;
        }
        if (odd_path) {
            oddbuf = calloc(elems ? elems : 1, 8);
            ODD = batched ? er_tensor_3d(ER_FMT_F64, batch, m, n, oddbuf) : er_tensor_2d(ER_FMT_F64, m, n, oddbuf);
            args.odd = &ODD;
        }
        if ((out && !dbuf) || (lo_path && (!lobuf || !hibuf)) || (odd_path && !oddbuf)) {
            fprintf(stderr, "exactref matmul: out of memory for the outputs (%zu elements)\n", elems);
            rc = ER_EXIT_INTERNAL;
            goto done;
        }
        er_status st = er_mma(&args);
        if (st != ER_OK) {
            fprintf(stderr, "exactref matmul: %s\n", msg[0] ? msg : er_status_string(st));
            rc = st == ER_EINVAL ? ER_EXIT_USAGE : ER_EXIT_INTERNAL;
            goto done;
        }
        if ((out && (st = er_npy_write_tensor(out, &D, msg, sizeof msg)) != ER_OK) ||
            (lo_path && (st = er_npy_write_tensor(lo_path, &LO, msg, sizeof msg)) != ER_OK) ||
            (lo_path && (st = er_npy_write_tensor(hi_path, &HI, msg, sizeof msg)) != ER_OK) ||
            (odd_path && (st = er_npy_write_tensor(odd_path, &ODD, msg, sizeof msg)) != ER_OK)) {
            fprintf(stderr, "exactref matmul: %s\n", msg);
            rc = ER_EXIT_USAGE;
            goto done;
        }
        if (show_stats)
            fprintf(stderr,
                    "exactref matmul: %lld elements on %d threads (cpu): %lld decided by the certified fast "
                    "path, %lld by the exact accumulator%s\n",
                    (long long)stats.elements, stats.threads, (long long)stats.fast_decided,
                    (long long)stats.exact_path, A.t.format == ER_FMT_I8 || A.t.format == ER_FMT_U8 ? " (mmai)" : "");
        if (stats.wrapped)
            fprintf(stderr, "exactref matmul: note: %lld elements wrapped modulo 2^32 (their exact sum is "
                            "outside the i32 range)\n", (long long)stats.wrapped);
    }
done:
    free_operand(&A);
    free_operand(&B);
    free_operand(&C);
    free_operand(&SA);
    free_operand(&SB);
    free(dbuf);
    free(lobuf);
    free(hibuf);
    free(oddbuf);
    return rc;
}
