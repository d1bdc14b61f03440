/* cmd_interp_bounds.c: `exactref interp --check DIR / --bounds DIR`: bounds mode's reports and files. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_report.h"
#include "cmd_interp_bounds.h"
#include "exactref/npy.h"

static void value_text(int fmt, double v, char *buf, size_t size)
{
    if (isnan(v)) snprintf(buf, size, "nan");
    else if (isinf(v)) snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else snprintf(buf, size, "%.9g", v);
    (void)fmt;
}

static void hex_text(int fmt, uint64_t bits, char *buf, size_t size)
{
    if (er_format_hex(fmt, bits, buf, size) != ER_OK) snprintf(buf, size, "0x%llx", (unsigned long long)bits);
}

static void index_text(const er_check_report *r, int ndim, const int64_t *shape, char *buf, size_t size)
{
    /* the flat index in the buffer's own shape */
    int64_t flat = r->worst, idx[8];
    int d;
    size_t n = 0;
    for (d = ndim - 1; d >= 0; d--) {
        idx[d] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (d = 0; d < ndim && n < size; d++) n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

void er_cli_interp_report_text(FILE *f, const char *path, const char *standard, int ndim, const int64_t *shape,
                               const er_check_report *r)
{
    int h;
    fprintf(f, "exactref interp --check: %s, %s, standard %s\n", path, er_format_name(r->format) ? er_format_name(r->format) : "integer",
            standard);
    fprintf(f, "  elements checked   %lld\n", (long long)r->elements);
    fprintf(f, "  elements outside   %lld%s\n", (long long)r->outside, r->outside ? "  <- no correct device stores these" : "");
    if (r->worst >= 0 && r->elements) {
        char idx[160], ov[48], rv[48], lv[48], hv[48], oh[64], rh[64], lh[64], hh[64];
        index_text(r, ndim, shape, idx, sizeof idx);
        value_text(r->format, r->output_value, ov, sizeof ov);
        value_text(r->format, r->rounded_value, rv, sizeof rv);
        value_text(r->format, r->low_value, lv, sizeof lv);
        value_text(r->format, r->high_value, hv, sizeof hv);
        hex_text(r->format, r->output, oh, sizeof oh);
        hex_text(r->format, r->rounded, rh, sizeof rh);
        hex_text(r->format, r->low, lh, sizeof lh);
        hex_text(r->format, r->high, hh, sizeof hh);
        if (r->worst_why == ER_REPORT_WHY_INT) {
            fprintf(f, "  worst element      %s: output 0x%llx, decided 0x%llx\n", idx, (unsigned long long)r->output, (unsigned long long)r->rounded);
        } else {
            fprintf(f, "  worst element      %s: output %s (%s), interpreter %s (%s)\n", idx, ov, oh, rv, rh);
            if (r->has_range)
                fprintf(f, "                     allowed [%s, %s] ([%s, %s])%s%s%s\n", lv, hv, lh, hh, r->may_nan ? ", NaN" : "",
                        r->may_pinf ? ", +inf" : "", r->may_ninf ? ", -inf" : "");
            else
                fprintf(f, "                     no finite value allowed (%s%s%s)\n", r->may_nan ? "NaN " : "", r->may_pinf ? "+inf " : "",
                        r->may_ninf ? "-inf" : "");
            if (r->worst_why == ER_REPORT_WHY_ULPS)
                fprintf(f, "                     %lld ulps beyond the allowed range\n", (long long)r->ulps_beyond);
            else if (r->worst_why == ER_REPORT_WHY_SPECIAL)
                fprintf(f, "                     an infinity or NaN no correct device stores here\n");
            else if (r->worst_why == ER_REPORT_WHY_NOT_FINITE)
                fprintf(f, "                     a finite value where none is allowed\n");
        }
    }
    fprintf(f, "  |output - interpreter| / tolerance:\n");
    for (h = 0; h < ER_REPORT_BINS; h++) fprintf(f, "    %-16s %12lld\n", er_check_report_bin_name(h), (long long)r->hist[h]);
    fprintf(f, "%s\n", r->outside ? "FAIL" : "PASS");
}

void er_cli_interp_report_json(er_sbuf *b, const char *path, const char *param, const er_check_report *r,
                               const int64_t *outside_index, int first)
{
    int h;
    int64_t k;
    er_sb_printf(b, "%s\n    {\"parameter\": ", first ? "" : ",");
    er_sb_json_str(b, param);
    er_sb_printf(b, ", \"file\": ");
    er_sb_json_str(b, path);
    er_sb_printf(b, ", \"format\": \"%s\", \"elements\": %lld, \"outside\": %lld", er_format_name(r->format) ? er_format_name(r->format) : "integer",
                 (long long)r->elements, (long long)r->outside);
    if (r->worst >= 0 && r->elements) {
        er_sb_printf(b, ", \"worst\": {\"index\": %lld, \"covered\": %s, \"output\": ", (long long)r->worst, r->worst_covered ? "true" : "false");
        er_sb_json_num(b, r->output_value);
        er_sb_printf(b, ", \"interpreter\": ");
        er_sb_json_num(b, r->rounded_value);
        er_sb_printf(b, ", \"low\": ");
        er_sb_json_num(b, r->low_value);
        er_sb_printf(b, ", \"high\": ");
        er_sb_json_num(b, r->high_value);
        er_sb_printf(b, ", \"ulps_beyond\": %lld}", (long long)r->ulps_beyond);
    }
    er_sb_printf(b, ", \"histogram\": {");
    for (h = 0; h < ER_REPORT_BINS; h++) er_sb_printf(b, "%s\"%s\": %lld", h ? ", " : "", er_check_report_bin_name(h), (long long)r->hist[h]);
    er_sb_printf(b, "}, \"outside_index\": [");
    for (k = 0; k < r->outside_listed; k++) er_sb_printf(b, "%s%lld", k ? ", " : "", (long long)outside_index[k]);
    er_sb_printf(b, "]}");
}

int er_cli_interp_write_bounds(const char *dir, const char *param, er_interp_bounds *bd, size_t i, int ndim, const int64_t *shape)
{
    const double *lo, *hi;
    int64_t count;
    int fmt;
    char msg[1024], path[4096];
    er_status st;
    if (er_interp_bounds_get(bd, i, &fmt, &count, &lo, &hi, NULL) != ER_OK || !lo) return 0; /* integers: decided */
    snprintf(path, sizeof path, "%s/%s.lo.npy", dir, param);
    st = er_npy_write(path, "<f8", ndim, shape, lo, msg, sizeof msg);
    if (st == ER_OK) {
        snprintf(path, sizeof path, "%s/%s.hi.npy", dir, param);
        st = er_npy_write(path, "<f8", ndim, shape, hi, msg, sizeof msg);
    }
    if (st != ER_OK) {
        fprintf(stderr, "exactref interp: %s\n", msg);
        return ER_EXIT_INTERNAL;
    }
    return 0;
}

int er_cli_interp_bounds_path_ok(const char *dir, const char *param)
{
    char msg[1024], path[4096];
    const char *ext[2] = {"lo", "hi"};
    int k;
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "exactref interp: --bounds %s: not a directory\n", dir);
        return ER_EXIT_USAGE;
    }
    for (k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s.%s.npy", dir, param, ext[k]);
        if (er_npy_output_check(path, msg, sizeof msg) != ER_OK) {
            fprintf(stderr, "exactref interp: --bounds %s: %s\n", dir, msg);
            return ER_EXIT_USAGE;
        }
    }
    return 0;
}
