/* cli_mma.h: the operand flags shared by `exactref matmul` and `exactref check`. */
#ifndef ER_CLI_MMA_H
#define ER_CLI_MMA_H

#include "cli.h"
#include "cli_out.h"
#include "exactref/npy.h"
#include "npy_internal.h"

typedef struct {
    const char *path;
    er_npy npy;
    _er_npy_map map; /* map.base set: npy.data lies in a read-only mapping of the file */
    er_tensor t;
    void *storage;   /* NULL with map.base set: t.data points into the mapping (the file's own bytes) */
    int loaded;
} er_cli_operand;

typedef struct {
    const char *cmd;
    er_cli_operand A, B, C, SA, SB;
    int afmt, bfmt, cfmt, ofmt, sfmt, dir, block, threads, strategy, device;
    unsigned opts;
    const char *backend;
    int rounding_set, b_transposed, ftz; /* ftz: --flush-to-zero given (its meaning is the command's) */
    int mapped;                          /* read the .npy files through memory maps (er_cli_read_tensor) */
    /* scaled products (cli_scaled.c): the epilogue and B's scale block; the bias */
    double alpha, beta;
    int alpha_set, beta_set, block_n;
    er_cli_operand BIAS;
    const char *seen[48];                /* the single-valued flags given so far */
    int nseen;
} er_cli_mma;

void er_cli_mma_init(er_cli_mma *m, const char *cmd);
/* Consume argv[*i] (and its values) if it is one of the shared flags: 1 consumed, 0 not ours, -1 a
 * usage error (already reported; exit 2). */
int er_cli_mma_option(er_cli_mma *m, int argc, char **argv, int *i);
/* Check the backend and load A, B and the optional operands; an exit status (0: loaded). */
int er_cli_mma_load(er_cli_mma *m);
/* The product's input files (A, B, --acc, --a-scale, --b-scale, --bias; absent ones skipped) into f, for
 * er_cli_files_check; extra (named extra_what; NULL: none) goes in after B. */
void er_cli_mma_files_in(er_cli_files *f, const er_cli_mma *m, const char *extra, const char *extra_what);
/* Refuse a single-valued flag given twice (reported; -1) or note it (0).  Every command uses it. */
int er_cli_mma_once(er_cli_mma *m, const char *flag);
/* After loading: the shapes of A, B, C and the scales agree (messages name the files), the flags make
 * sense for the product (no rounding flags for mmai, no --block without scales, ...), and out_fmt (-1:
 * not known yet) suits the product; an exit status. */
int er_cli_mma_validate(er_cli_mma *m, int out_fmt, const char *out_what);
/* A float product's output format must be a float format (after the shapes: they are told first);
 * an exit status. */
int er_cli_mma_out_kind(er_cli_mma *m, int out_fmt, const char *out_what);
/* er_mma arguments over the loaded operands (d, outputs and stats left to the caller). */
/* The operands suit the matrix-engine standard std (er_standard_check_operands_): 0, else the reason
 * on stderr and 2. */
int er_cli_standard_operands(const er_cli_mma *m, const er_standard *std);

void er_cli_mma_args(er_cli_mma *m, er_mma_args *args);
/* The product's batch, rows and columns, and whether it is batched. */
void er_cli_mma_shape(const er_cli_mma *m, int64_t *batch, int64_t *rows, int64_t *cols, int *batched);
void er_cli_mma_free(er_cli_mma *m);
/* Whether the .npy inputs may be memory-mapped: yes unless EXACTREF_NO_MMAP is set to anything but
 * "" or "0". */
int er_cli_mmap_enabled(void);
/*
 * Read path as a tensor of format declared (-1: its dtype's): er_npy_read and er_npy_to_tensor, or
 * with mapped the memory-mapped reader (npy_internal.h: the same validation and messages; the tensor
 * lies in the mapping where the file's bytes are its patterns).  A mapping is watched: should the
 * file be cut while it is in use, the access past its new end (SIGBUS) ends the command with a
 * sentence naming the file and exit 3, instead of a crash.  Release with er_cli_release.
 */
er_status er_cli_read_tensor(const char *path, int mapped, er_npy *npy, _er_npy_map *map, int declared, er_tensor *t,
                             void **storage, char *msg, size_t msg_size);
/* Unmap or free the array's data, keeping its description (dtype, shape) for the report. */
void er_cli_release_data(er_npy *npy, _er_npy_map *map);
/* The help text of the shared flags. */
extern const char *const er_cli_mma_flags_help;

/* Scaled products (cli_scaled.c; include/exactref/scaled.h): f32 or bf16 scales (--scale-format), or
 * --alpha, --beta, --bias given.  er_cli_mma_option, _load and _validate hand these flags and that mode
 * to the functions below; the commands make the result with er_scaled_result_create. */
int er_cli_scaled_mode(const er_cli_mma *m);
int er_cli_scaled_option(er_cli_mma *m, int argc, char **argv, int *i);
int er_cli_scaled_load(er_cli_mma *m);
void er_cli_scaled_args(er_cli_mma *m, er_scaled_args *s, er_tensor *d);
extern const char *const er_cli_scaled_flags_help;

#endif
