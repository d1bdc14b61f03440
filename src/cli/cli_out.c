/* cli_out.c: the command's output files: checked before any work, written without clobbering. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
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
        f->out_dir[f->nout] = -1;
        f->out_copy_of[f->nout] = NULL;
        f->out_what[f->nout++] = what;
    }
}

void er_cli_files_dir(er_cli_files *f, const char *dir, const char *what, int n, const char *const *names,
                      const char *const *copy_of)
{
    if (!dir || f->ndir >= ER_CLI_MAX_DIRS) return;
    f->dir[f->ndir] = dir;
    f->dir_what[f->ndir] = what;
    for (int k = 0; k < n; k++)
        if (names[k] && f->nout < ER_CLI_MAX_FILES) {
            f->out[f->nout] = names[k];
            f->out_text[f->nout] = 0;
            f->out_dir[f->nout] = f->ndir;
            f->out_copy_of[f->nout] = copy_of ? copy_of[k] : NULL;
            f->out_what[f->nout++] = what;
        }
    f->ndir++;
}

int er_cli_same_file(const char *p, const char *q)
{
    struct stat a, b;
    if (!strcmp(p, q)) return 1;
    if (stat(p, &a) != 0 || stat(q, &b) != 0) return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* cur (an absolute path of size bytes) followed by "/" and the n bytes of name; -1 if it does not fit. */
static int append_name(char *cur, size_t size, const char *name, size_t n)
{
    size_t len = strlen(cur);
    if (len > 1 || cur[0] != '/') {
        if (len + 1 >= size) return -1;
        cur[len++] = '/';
    }
    if (len + n >= size) return -1;
    memcpy(cur + len, name, n);
    cur[len + n] = '\0';
    return 0;
}

int er_cli_resolve(const char *path, char *out, size_t size)
{
    char cur[8192], cand[8192], real[PATH_MAX];
    int resolved = 1; /* cur is an existing directory's real name: keep asking the system */
    const char *p = path;
    if (!size) return -1;
    if (path[0] == '/') snprintf(cur, sizeof cur, "/");
    else if (!getcwd(cur, sizeof cur)) return -1;
    while (*p) {
        while (*p == '/') p++;
        if (!*p) break;
        size_t n = strcspn(p, "/");
        const char *next = p + n;
        while (*next == '/') next++;
        int dotdot = n == 2 && p[0] == '.' && p[1] == '.';
        if (n == 1 && p[0] == '.') {
            p = next;
            continue;
        }
        if (*next || dotdot) { /* a directory on the way: as the system follows it */
            if (resolved) {
                snprintf(cand, sizeof cand, "%s", cur);
                if (append_name(cand, sizeof cand, p, n) != 0) return -1;
                if (realpath(cand, real)) {
                    snprintf(cur, sizeof cur, "%s", real);
                    p = next;
                    continue;
                }
                resolved = 0; /* it does not exist (yet): the rest as written */
            }
            if (dotdot) {
                char *slash = strrchr(cur, '/');
                if (slash && slash != cur) *slash = '\0';
                else snprintf(cur, sizeof cur, "/");
                p = next;
                continue;
            }
        }
        if (append_name(cur, sizeof cur, p, n) != 0) return -1; /* the last name: never followed */
        p = next;
    }
    if (strlen(cur) >= size) return -1;
    snprintf(out, size, "%s", cur);
    return 0;
}

/* Whether two outputs are one file: the same existing file, or the same resolved name. */
static int same_output(const char *p, const char *q)
{
    static char rp[8192], rq[8192]; /* the command is single-threaded here */
    if (er_cli_same_file(p, q)) return 1;
    if (er_cli_resolve(p, rp, sizeof rp) != 0 || er_cli_resolve(q, rq, sizeof rq) != 0) return 0;
    return !strcmp(rp, rq);
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

/* The path of output o (a directory's file: DIR/NAME) into buf. */
static const char *out_path(const er_cli_files *f, int o, char *buf, size_t size)
{
    if (f->out_dir[o] < 0) return f->out[o];
    snprintf(buf, size, "%s/%s", f->dir[f->out_dir[o]], f->out[o]);
    return buf;
}

int er_cli_files_check(const char *cmd, const er_cli_files *f)
{
    char msg[1024], pb[4200], qb[4200];
    struct stat st;
    /* the directories: each can be created or written, and none is another or an output file */
    for (int d = 0; d < f->ndir; d++) {
        if (check_dir(cmd, f->dir[d], f->dir_what[d])) return ER_EXIT_USAGE;
        for (int e = 0; e < d; e++)
            if (same_output(f->dir[d], f->dir[e]))
                return er_cli_usage_error(cmd, "%s and %s name the same directory (%s)", f->dir_what[e],
                                          f->dir_what[d], f->dir[d]);
        for (int o = 0; o < f->nout; o++)
            if (f->out_dir[o] < 0 && !(f->out_text[o] && !strcmp(f->out[o], "-")) && same_output(f->dir[d], f->out[o]))
                return er_cli_usage_error(cmd, "%s %s and %s %s name the same file", f->out_what[o], f->out[o],
                                          f->dir_what[d], f->dir[d]);
    }
    for (int o = 0; o < f->nout; o++) {
        const char *p = out_path(f, o, pb, sizeof pb);
        if (f->out_text[o] && !strcmp(p, "-")) {
            for (int q = 0; q < o; q++)
                if (f->out_text[q] && !strcmp(f->out[q], "-"))
                    return er_cli_usage_error(cmd, "%s and %s both write to standard output ('-')", f->out_what[q],
                                              f->out_what[o]);
            continue;
        }
        for (int i = 0; i < f->nin; i++)
            if (!(f->out_copy_of[o] && !strcmp(f->out_copy_of[o], f->in[i])) && er_cli_same_file(p, f->in[i]))
                return er_cli_usage_error(cmd, "%s %s is the input %s (%s): refusing to overwrite an input",
                                          f->out_what[o], p, f->in_what[i], f->in[i]);
        for (int q = 0; q < o; q++) {
            const char *r = out_path(f, q, qb, sizeof qb);
            if (!(f->out_text[q] && !strcmp(r, "-")) && same_output(p, r))
                return er_cli_usage_error(cmd, "%s and %s name the same file (%s%s%s)", f->out_what[q], f->out_what[o],
                                          r, strcmp(p, r) ? " and " : "", strcmp(p, r) ? p : "");
        }
        /* a file of a directory still to be created: check_dir said it can be */
        if (f->out_dir[o] >= 0 && stat(f->dir[f->out_dir[o]], &st) != 0) continue;
        if (er_npy_output_check(p, msg, sizeof msg) != ER_OK)
            return er_cli_usage_error(cmd, "%s: %s", f->out_what[o], msg);
    }
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
