/* cli_out.h: the command's output files: checked before any work, written without clobbering. */
#ifndef ER_CLI_OUT_H
#define ER_CLI_OUT_H

#include <stddef.h>

#define ER_CLI_MAX_FILES 16

/* The files of one run: what it reads and what it will write (flag names for the messages). */
typedef struct {
    const char *in[ER_CLI_MAX_FILES], *in_what[ER_CLI_MAX_FILES];
    const char *out[ER_CLI_MAX_FILES], *out_what[ER_CLI_MAX_FILES];
    int out_text[ER_CLI_MAX_FILES]; /* text outputs may be '-' (standard output) */
    int nin, nout;
    const char *dir, *dir_what; /* a directory to create or fill (--save-failures, --save-bounds) */
    const char *dir2, *dir2_what;
} er_cli_files;

void er_cli_files_in(er_cli_files *f, const char *path, const char *what);
void er_cli_files_out(er_cli_files *f, const char *path, const char *what, int text);

/*
 * Before any computation: every output may be written (npy.h's output rules), no output is an input
 * (the same file: device and inode) or another output, and each directory can be created or written.
 * Reports the first problem ("exactref CMD: --json r.json: ...") and returns 2; 0 when all is well.
 */
int er_cli_files_check(const char *cmd, const er_cli_files *f);

/* Whether two paths name the same file (the same string, or the same device and inode). */
int er_cli_same_file(const char *p, const char *q);

/* Create a directory checked by er_cli_files_check (it may exist); 0, or -1 with errno. */
int er_cli_make_dir(const char *dir);

/* Write a text output ('-': standard output); an exit status (0, or 3 with the reason on stderr). */
int er_cli_write_text(const char *cmd, const char *path, const char *text, size_t len);

/* The exit status for a library status: 0 ok, 3 out of memory or an internal error, else 2. */
int er_cli_exit_for(int st);

#endif
