/* cli.h: what the subcommands of the exactref command share. */
#ifndef ER_CLI_H
#define ER_CLI_H

#include <stdio.h>

#include "exactref/exactref.h"

/* Exit statuses of the command (documented in `exactref --help`). */
#define ER_EXIT_OK 0
#define ER_EXIT_FAIL 1  /* a check found elements no correct implementation can produce */
#define ER_EXIT_USAGE 2 /* bad usage or bad input */
#define ER_EXIT_INTERNAL 3

int er_cmd_convert(int argc, char **argv);
int er_cmd_decode(int argc, char **argv);
int er_cmd_formats(int argc, char **argv);
int er_cmd_demo(int argc, char **argv);
int er_cmd_info(int argc, char **argv);
int er_cmd_matmul(int argc, char **argv);
int er_cmd_check(int argc, char **argv);
int er_cmd_check_op(int argc, char **argv); /* cmd_check_op.c: check --op NAME */
int er_cmd_interp(int argc, char **argv); /* cmd_interp.c */

/* Print the help text of a command ("" for the command itself); 0 if the command exists. */
int er_cli_help(FILE *out, const char *cmd);

/* Report a usage error: "exactref CMD: message" and a pointer to --help on stderr; returns 2. */
int er_cli_usage_error(const char *cmd, const char *fmt, ...);

/* Parse a format name or report it (listing the known names); 0 on success. */
int er_cli_parse_format(const char *cmd, const char *opt, const char *name, int *fmt);

#endif
