/* cli_report.h: what `exactref check` writes: the text report, JSON, JUnit, the repro bundle, the picture. */
#ifndef ER_CLI_REPORT_H
#define ER_CLI_REPORT_H

#include "cli_mma.h"
#include "exactref/report.h"

/* The cap on the outside elements' indices listed in the JSON report (the count is always there). */
#define ER_CLI_OUTSIDE_CAP 1000

/* Growable text. */
typedef struct {
    char *p;
    size_t len, cap;
    int failed; /* out of memory once: p is then NULL */
} er_sbuf;
void er_sb_printf(er_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void er_sb_free(er_sbuf *b);
/* s as a JSON string (quotes included): control bytes escaped, bytes that are not UTF-8 read as Latin-1. */
void er_sb_json_str(er_sbuf *b, const char *s);
/* s as XML character data: markup escaped, control bytes (not allowed in XML 1.0) as U+FFFD, bytes that
 * are not UTF-8 read as Latin-1. */
void er_sb_xml_str(er_sbuf *b, const char *s);
/* v as a JSON number (%.17g), or the strings "nan", "inf", "-inf". */
void er_sb_json_num(er_sbuf *b, double v);

typedef struct {
    const char *out_path;
    const er_cli_mma *m;
    const char *standard, *compute;
    int ftz;
    const er_check_report *rep;
    const int64_t *outside_index;
    double seconds, seconds_ref;
    const er_mma_stats *stats;
    const char *warnings[4];
    int nwarn;
    /* check --op (cmd_check_op.c): the operation, its input files (", " separated) and the output's name;
     * NULL for a matmul check */
    const char *op, *op_inputs, *op_output;
} er_cli_check;

/* The warnings of a report (vacuity, the narrower-format hint) into c->warnings. */
void er_cli_check_warnings(er_cli_check *c, char hint[256]);
void er_cli_report_text(FILE *f, const er_cli_check *c);
void er_cli_report_json(er_sbuf *b, const er_cli_check *c);
void er_cli_report_junit(er_sbuf *b, const er_cli_check *c);
void er_cli_report_svg(er_sbuf *b, const er_cli_check *c);
/* The whole report of a check: the text (to stderr when --json, --junit or --plot is '-', stdout otherwise)
 * and the files asked for (NULL: not asked).  *rc: ER_EXIT_FAIL if elements are outside, else ER_EXIT_OK,
 * or a write's exit status.  Returns the stream that took the text. */
FILE *er_cli_report_write(const er_cli_check *c, const char *json, const char *junit, const char *plot, int *rc);
/* The failure bundle in dir (created or reused): a.npy b.npy [acc.npy a_scale.npy b_scale.npy bias.npy] out.npy
 * and repro.sh; 0, or -1 with the reason in why. */
int er_cli_save_failures(const char *dir, int argc, char **argv, const er_cli_check *c, char *why, size_t why_size);

#endif
