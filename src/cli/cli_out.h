/* cli_out.h: the command's output files: checked before any work, written without clobbering. */
#ifndef ER_CLI_OUT_H
#define ER_CLI_OUT_H

#include <stddef.h>

#define ER_CLI_MAX_FILES 32
#define ER_CLI_MAX_DIRS 4

/* The files of one run: what it reads and what it will write (flag names for the messages).  An output
 * is a path, or a fixed name in one of the directories (dir >= 0). */
typedef struct {
    const char *in[ER_CLI_MAX_FILES], *in_what[ER_CLI_MAX_FILES];
    const char *out[ER_CLI_MAX_FILES], *out_what[ER_CLI_MAX_FILES];
    int out_text[ER_CLI_MAX_FILES];          /* text outputs may be '-' (standard output) */
    int out_dir[ER_CLI_MAX_FILES];           /* -1: out[] is the path; else out[] is a name in dir[out_dir] */
    const char *out_copy_of[ER_CLI_MAX_FILES]; /* an input this output may be (it is written as its copy) */
    int nin, nout;
    const char *dir[ER_CLI_MAX_DIRS], *dir_what[ER_CLI_MAX_DIRS]; /* directories to create or fill */
    int ndir;
} er_cli_files;

void er_cli_files_in(er_cli_files *f, const char *path, const char *what);
void er_cli_files_out(er_cli_files *f, const char *path, const char *what, int text);

/*
 * A directory the run creates or fills (--save-failures, --save-bounds; dir NULL: none) and the names
 * of the files it writes there: names[k] (NULL: not written this time), which may be the input
 * copy_of[k] (it is written as that input's copy; copy_of may be NULL).  Each file is an output like
 * the others, whether the directory exists yet or not.
 */
void er_cli_files_dir(er_cli_files *f, const char *dir, const char *what, int n, const char *const *names,
                      const char *const *copy_of);

/*
 * Before any computation: every output may be written (npy.h's output rules), no output is an input
 * (the same file: device and inode) or another output, and each directory can be created or written.
 * Two outputs (files or directories) are one when they are the same existing file (device and inode:
 * links count) or when their resolved directories and names are equal, existing or not (er_cli_resolve:
 * "x.npy", "./x.npy", "$PWD/x.npy", "d/../x.npy", a link to the directory).
 * Reports the first problem ("exactref CMD: --json r.json: ...") and returns 2; 0 when all is well.
 */
int er_cli_files_check(const char *cmd, const er_cli_files *f);

/* Whether two paths name the same file (the same string, or the same device and inode). */
int er_cli_same_file(const char *p, const char *q);

/*
 * The absolute name a path will have once written, into out: its directory resolved as the system
 * resolves it (links, "..", "." followed) as far as it exists, the rest taken as written ("." dropped,
 * ".." removing the name before it), then its last name, not followed.  0, or -1 when the result does
 * not fit in size bytes.
 */
int er_cli_resolve(const char *path, char *out, size_t size);

/* Create a directory checked by er_cli_files_check (it may exist); 0, or -1 with errno. */
int er_cli_make_dir(const char *dir);

/* Write a text output ('-': standard output); an exit status (0, or 3 with the reason on stderr). */
int er_cli_write_text(const char *cmd, const char *path, const char *text, size_t len);

/* The exit status for a library status: 0 ok, 3 out of memory or an internal error, else 2. */
int er_cli_exit_for(int st);

#endif
