/* main.c: the exactref command: dispatch to the subcommands. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

int er_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "exactref %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'exactref %s --help')\n", cmd);
    return ER_EXIT_USAGE;
}

int er_cli_parse_format(const char *cmd, const char *opt, const char *name, int *fmt)
{
    int i;
    if (er_format_from_name(name, fmt) == ER_OK) return 0;
    fprintf(stderr, "exactref %s: %s: unknown format '%s'; known formats:", cmd, opt, name);
    for (i = 0; i < er_format_count(); i++) fprintf(stderr, " %s", er_format_name(i));
    fprintf(stderr, "\n");
    return -1;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"convert", er_cmd_convert}, {"decode", er_cmd_decode}, {"formats", er_cmd_formats},
    {"demo", er_cmd_demo},       {"info", er_cmd_info},       {"matmul", er_cmd_matmul},
    {"check", er_cmd_check},     {"interp", er_cmd_interp},
};

static int run(int argc, char **argv)
{
    size_t i;
    if (argc < 2) {
        er_cli_help(stderr, "");
        return ER_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        er_cli_help(stdout, "");
        return ER_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("exactref %s\n", er_version());
        return ER_EXIT_OK;
    }
    if (!strcmp(argv[1], "help")) {
        if (argc > 2 && er_cli_help(stdout, argv[2]) != 0) {
            fprintf(stderr, "exactref help: no command '%s' (see 'exactref --help')\n", argv[2]);
            return ER_EXIT_USAGE;
        }
        if (argc <= 2) er_cli_help(stdout, "");
        return ER_EXIT_OK;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            int k;
            for (k = 2; k < argc; k++) {
                if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
                    er_cli_help(stdout, commands[i].name);
                    return ER_EXIT_OK;
                }
            }
            return commands[i].fn(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "exactref: unknown command '%s' (see 'exactref --help')\n", argv[1]);
    return ER_EXIT_USAGE;
}

/* Every command: what it printed must have reached standard output (a closed or full one is exit 3,
 * as a failed write of a file is), unless the command already failed that way.
 * Two signals that a failed write raises are ignored, so that the write fails instead and the command
 * reports it (exit 3, the file being replaced kept and the temporary removed, include/exactref/npy.h):
 * SIGPIPE (standard output, or a FIFO given as an output, whose reader has gone: EPIPE) and SIGXFSZ
 * (the file size limit, `ulimit -f`: EFBIG). */
int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    int rc = run(argc, argv);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc != ER_EXIT_INTERNAL) {
        fprintf(stderr, "exactref: cannot write to standard output: %s\n", strerror(errno));
        rc = ER_EXIT_INTERNAL;
    }
    return rc;
}
