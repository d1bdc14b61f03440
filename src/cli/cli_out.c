/* cli_out.c: the command's output files: checked before any work, written without clobbering. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_out.h"
#include "exactref/npy.h"

void er_cli_files_in(er_cli_files *f, const char *path, const char *what)
{
    if (path && f->nin < ER_CLI_MAX_FILES) {
        f->in[f->nin] = path;
        f->in_what[f->nin++] = what;
    }
}

void er_cli_files_out(er_cli_files *f, const char *path, const char *what, int text)
{
    if (path && f->nout < ER_CLI_MAX_FILES) {
        f->out[f->nout] = path;
        f->out_text[f->nout] = text;
        f->out_what[f->nout++] = what;
    }
}

int er_cli_same_file(const char *p, const char *q)
{
    struct stat a, b;
    if (!strcmp(p, q)) return 1;
    if (stat(p, &a) != 0 || stat(q, &b) != 0) return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Split a path into its directory (".", "/" or the part before the last slash, trailing slashes
 * dropped) and its last name. */
static void split_path(const char *path, char *parent, size_t psize, char *name, size_t nsize)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    char *slash = strrchr(p, '/');
    if (!slash) {
        snprintf(parent, psize, ".");
        snprintf(name, nsize, "%s", p);
    } else {
        snprintf(name, nsize, "%s", slash + 1);
        if (slash == p) slash[1] = '\0';
        else *slash = '\0';
        snprintf(parent, psize, "%s", p);
    }
}

/* Whether two directory paths name the same directory, existing or to be created ("d", "./d/"). */
static int same_dir(const char *p, const char *q)
{
    char pp[4096], pn[1024], qp[4096], qn[1024];
    if (er_cli_same_file(p, q)) return 1;
    split_path(p, pp, sizeof pp, pn, sizeof pn);
    split_path(q, qp, sizeof qp, qn, sizeof qn);
    return !strcmp(pn, qn) && er_cli_same_file(pp, qp);
}

static int check_dir(const char *cmd, const char *dir, const char *what)
{
    struct stat st;
    char parent[4096];
    const char *slash;
    if (!dir) return 0;
    if (!*dir) return er_cli_usage_error(cmd, "%s: a directory needs a name", what);
    /* the files inside are named in 4096-byte buffers: a name that long could be cut short */
    if (strlen(dir) > 4000) return er_cli_usage_error(cmd, "%s: the directory's name is too long (%zu bytes)", what, strlen(dir));
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return er_cli_usage_error(cmd, "%s %s: exists and is not a directory", what, dir);
        if (access(dir, W_OK | X_OK) != 0)
            return er_cli_usage_error(cmd, "%s %s: cannot write into the directory: %s", what, dir, strerror(errno));
        return 0;
    }
    if (errno != ENOENT) return er_cli_usage_error(cmd, "%s %s: %s", what, dir, strerror(errno));
    snprintf(parent, sizeof parent, "%s", dir);
    {
        size_t n = strlen(parent);
        while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';
    }
    slash = strrchr(parent, '/');
    if (!slash) snprintf(parent, sizeof parent, ".");
    else if (slash == parent) parent[1] = '\0';
    else parent[slash - parent] = '\0';
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return er_cli_usage_error(cmd, "%s %s: cannot create it: %s is not a directory", what, dir, parent);
    if (access(parent, W_OK | X_OK) != 0)
        return er_cli_usage_error(cmd, "%s %s: cannot create it in %s: %s", what, dir, parent, strerror(errno));
    return 0;
}

int er_cli_files_check(const char *cmd, const er_cli_files *f)
{
    char msg[1024];
    for (int o = 0; o < f->nout; o++) {
        const char *p = f->out[o];
        if (f->out_text[o] && !strcmp(p, "-")) {
            for (int q = 0; q < o; q++)
                if (f->out_text[q] && !strcmp(f->out[q], "-"))
                    return er_cli_usage_error(cmd, "%s and %s both write to standard output ('-')", f->out_what[q],
                                              f->out_what[o]);
            continue;
        }
        for (int i = 0; i < f->nin; i++)
            if (er_cli_same_file(p, f->in[i]))
                return er_cli_usage_error(cmd, "%s %s is the input %s (%s): refusing to overwrite an input",
                                          f->out_what[o], p, f->in_what[i], f->in[i]);
        for (int q = 0; q < o; q++)
            if (er_cli_same_file(p, f->out[q]))
                return er_cli_usage_error(cmd, "%s and %s name the same file (%s)", f->out_what[q], f->out_what[o], p);
        if (er_npy_output_check(p, msg, sizeof msg) != ER_OK)
            return er_cli_usage_error(cmd, "%s: %s", f->out_what[o], msg);
    }
    if (check_dir(cmd, f->dir, f->dir_what) || check_dir(cmd, f->dir2, f->dir2_what)) return ER_EXIT_USAGE;
    if (f->dir && f->dir2 && same_dir(f->dir, f->dir2))
        return er_cli_usage_error(cmd, "%s and %s name the same directory (%s)", f->dir_what, f->dir2_what, f->dir);
    return 0;
}

int er_cli_make_dir(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0777) == 0) return 0;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    return -1;
}

int er_cli_write_text(const char *cmd, const char *path, const char *text, size_t len)
{
    char msg[1024];
    er_status st;
    if (!text) {
        fprintf(stderr, "exactref %s: %s: out of memory for the report\n", cmd, path);
        return ER_EXIT_INTERNAL;
    }
    if (!strcmp(path, "-")) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
            fprintf(stderr, "exactref %s: cannot write to standard output: %s\n", cmd, strerror(errno));
            return ER_EXIT_INTERNAL;
        }
        return ER_EXIT_OK;
    }
    if ((st = er_npy_write_bytes(path, text, len, msg, sizeof msg)) != ER_OK) {
        fprintf(stderr, "exactref %s: %s\n", cmd, msg);
        return ER_EXIT_INTERNAL;
    }
    return ER_EXIT_OK;
}

int er_cli_exit_for(int st)
{
    if (st == ER_OK) return ER_EXIT_OK;
    if (st == ER_EINVAL || st == ER_EFORMAT || st == ER_EPATTERN || st == ER_EINEXACT) return ER_EXIT_USAGE;
    return ER_EXIT_INTERNAL; /* out of memory, a device or a build without the backend */
}
