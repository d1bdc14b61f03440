/* cmd_interp_bounds.h: bounds mode's part of `exactref interp` (the --check report, the --bounds files). */
#ifndef ER_CMD_INTERP_BOUNDS_H
#define ER_CMD_INTERP_BOUNDS_H

#include <stdio.h>

#include "cli_report.h"
#include "exactref/interp.h"

/* The text report of one device buffer (path) judged against its enclosures. */
void er_cli_interp_report_text(FILE *f, const char *path, const char *standard, int ndim, const int64_t *shape,
                               const er_check_report *r);
/* One buffer's report as a JSON object (an element of the "buffers" list; first: no comma before it). */
void er_cli_interp_report_json(er_sbuf *b, const char *path, const char *param, const er_check_report *r,
                               const int64_t *outside_index, int first);
/* DIR/PARAM.lo.npy and DIR/PARAM.hi.npy (float64, the buffer's shape) for a float buffer: 0 or exit 3. */
int er_cli_interp_write_bounds(const char *dir, const char *param, er_interp_bounds *bd, size_t i, int ndim, const int64_t *shape);
/* Before the run: DIR is a directory and both files may be written (the output rules): 0 or exit 2. */
int er_cli_interp_bounds_path_ok(const char *dir, const char *param);

#endif /* ER_CMD_INTERP_BOUNDS_H */
