/* cli_report.c: what `exactref check` writes: the text report, JSON, JUnit, the repro bundle, the picture. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_out.h"
#include "cli_report.h"

void er_sb_printf(er_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    if (b->failed) return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            free(b->p);
            b->p = NULL;
            b->failed = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

void er_sb_free(er_sbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* The length of a valid UTF-8 sequence at s (1 to 4), or 0 when the byte there does not start one. */
static int utf8_len(const unsigned char *s)
{
    int n;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) n = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef) n = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4) n = 4;
    else return 0;
    for (int k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80) return 0;
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0;
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
    return n;
}

void er_sb_json_str(er_sbuf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    er_sb_printf(b, "\"");
    while (*s) {
        int n = utf8_len(s);
        if (*s == '"' || *s == '\\') er_sb_printf(b, "\\%c", *s), n = 1;
        else if (*s < 0x20 || *s == 0x7f) er_sb_printf(b, "\\u%04x", *s), n = 1;
        else if (n == 0) er_sb_printf(b, "\\u%04x", *s), n = 1; /* not UTF-8: the Latin-1 character */
        else er_sb_printf(b, "%.*s", n, (const char *)s);
        s += n;
    }
    er_sb_printf(b, "\"");
}

void er_sb_xml_str(er_sbuf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        int n = utf8_len(s);
        if (*s == '<') er_sb_printf(b, "&lt;"), n = 1;
        else if (*s == '>') er_sb_printf(b, "&gt;"), n = 1;
        else if (*s == '&') er_sb_printf(b, "&amp;"), n = 1;
        else if (*s == '"') er_sb_printf(b, "&quot;"), n = 1;
        else if (*s == '\'') er_sb_printf(b, "&apos;"), n = 1;
        else if ((*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r') || *s == 0x7f)
            er_sb_printf(b, "&#xFFFD;"), n = 1; /* not a character XML 1.0 allows, even as a reference */
        else if (*s == '\t' || *s == '\n' || *s == '\r') er_sb_printf(b, "&#x%X;", *s), n = 1;
        else if (n == 0) er_sb_printf(b, "&#x%X;", *s), n = 1;
        else er_sb_printf(b, "%.*s", n, (const char *)s);
        s += n;
    }
}

static int is_int_format(int f)
{
    er_format_info fi;
    return er_format_get_info(f, &fi) == ER_OK && fi.kind != ER_KIND_FLOAT;
}

/* A value of the output format as text: %.9g for floats, the integer for integers. */
static void value_text(int fmt, double v, char *buf, size_t size)
{
    if (is_int_format(fmt)) snprintf(buf, size, "%lld", (long long)v);
    else snprintf(buf, size, "%.9g", v);
}

static void hex_text(int fmt, uint64_t bits, char *buf, size_t size)
{
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    if (fi.kind != ER_KIND_FLOAT) snprintf(buf, size, "0x%0*llx", (fi.width + 3) / 4, (unsigned long long)bits);
    else if (er_format_hex(fmt, bits, buf, size) != ER_OK) snprintf(buf, size, "0x%llx", (unsigned long long)bits);
}

/* A raw bit pattern, zero-padded to the format's width. */
static void bits_text(int fmt, uint64_t bits, char *buf, size_t size)
{
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    snprintf(buf, size, "0x%0*llx", (fi.width + 3) / 4, (unsigned long long)bits);
}

static void index_text(const er_check_report *r, const int64_t idx[3], char *buf, size_t size)
{
    if (r->ndim == 3) snprintf(buf, size, "[%lld, %lld, %lld]", (long long)idx[0], (long long)idx[1], (long long)idx[2]);
    else snprintf(buf, size, "[%lld, %lld]", (long long)idx[1], (long long)idx[2]);
}

/* The infinities and NaN allowed at the worst element: "NaN", "+inf or NaN", ... */
static void specials_text(const er_check_report *r, char *buf, size_t size)
{
    const char *parts[3];
    int n = 0;
    if (r->may_pinf) parts[n++] = "+inf";
    if (r->may_ninf) parts[n++] = "-inf";
    if (r->may_nan) parts[n++] = "NaN";
    if (n == 0) snprintf(buf, size, "nothing");
    else if (n == 1) snprintf(buf, size, "%s", parts[0]);
    else if (n == 2) snprintf(buf, size, "%s or %s", parts[0], parts[1]);
    else snprintf(buf, size, "%s, %s or %s", parts[0], parts[1], parts[2]);
}

static void reason_text(const er_check_report *r, char *buf, size_t size)
{
    char sp[64];
    specials_text(r, sp, sizeof sp);
    switch (r->worst_why) {
    case ER_REPORT_WHY_ULPS:
        snprintf(buf, size, "%lld output ulps beyond the bound", (long long)r->ulps_beyond);
        break;
    case ER_REPORT_WHY_INT:
        snprintf(buf, size, "differs from the exact integer result by %lld", (long long)r->ulps_beyond);
        break;
    case ER_REPORT_WHY_SPECIAL:
        if (r->has_range)
            snprintf(buf, size, "an infinity or NaN that no correct implementation produces here (allowed: the finite "
                                "range above%s%s)", strcmp(sp, "nothing") ? ", or " : "", strcmp(sp, "nothing") ? sp : "");
        else
            snprintf(buf, size, "an infinity or NaN that no correct implementation produces here (allowed: %s)", sp);
        break;
    case ER_REPORT_WHY_NOT_FINITE:
        snprintf(buf, size, "a finite value where only %s is allowed (no finite output is correct here)", sp);
        break;
    default:
        if (r->hist[ER_REPORT_SPECIAL] && r->ratio == 0 && r->output != r->rounded)
            snprintf(buf, size, "an infinity or NaN (or a value beside a non-finite reference) that the standard allows");
        else if (r->ratio > 0)
            snprintf(buf, size, "%.3g of its tolerance used", r->ratio);
        else
            snprintf(buf, size, "exact");
        break;
    }
}

void er_cli_check_warnings(er_cli_check *c, char hint[256])
{
    const er_check_report *r = c->rep;
    c->nwarn = 0;
    if (r->operand_vacuous) c->warnings[c->nwarn++] = "an operand is all zero or subnormal: the check is vacuous";
    if (r->zero_accepted)
        c->warnings[c->nwarn++] =
            "the bounds would accept an all-zero output: the inputs cannot tell a correct kernel from one that writes zeros";
    if (r->narrower_format >= 0) {
        snprintf(hint, 256, "every output value is a %s value: did you mean --out-format %s? (an output saved widened, "
                            "from %s to %s, is judged as %s)",
                 er_format_name(r->narrower_format), er_format_name(r->narrower_format),
                 er_format_name(r->narrower_format), er_format_name(r->format), er_format_name(r->format));
        c->warnings[c->nwarn++] = hint;
    }
}

/* Only the zeros allowed (-0 and +0: two patterns, one value): the tolerance is exactly 0, whatever
 * upper bound the bounds rounded it up to. */
static int zeros_only(const er_check_report *r)
{
    return r->has_range && !r->single_value && r->low_value == 0 && r->high_value == 0;
}

void er_cli_report_text(FILE *f, const er_cli_check *c)
{
    const er_check_report *r = c->rep;
    const er_cli_mma *m = c->m;
    if (c->op)
        fprintf(f, "exactref check: %s against %s(%s) output '%s', %s output, standard %s, compute %s%s\n", c->out_path,
                c->op, c->op_inputs, c->op_output, er_format_name(r->format), c->standard, c->compute,
                c->ftz ? ", flush to zero" : "");
    else
        fprintf(f, "exactref check: %s against A %s x B %s, %s output, standard %s, compute %s%s\n", c->out_path,
                er_format_name(m->A.t.format), er_format_name(m->B.t.format), er_format_name(r->format), c->standard,
                c->compute, c->ftz ? ", flush to zero" : "");
    fprintf(f, "  elements checked   %lld\n", (long long)r->elements);
    fprintf(f, "  elements outside   %lld%s\n", (long long)r->outside,
            r->outside ? "  <- no correct implementation produces these" : "");
    if (r->worst >= 0) {
        char idx[96], ov[48], rv[48], lv[48], hv[48], oh[64], rh[64], lh[64], hh[64], why[256], sp[64];
        index_text(r, r->worst_index, idx, sizeof idx);
        value_text(r->format, r->output_value, ov, sizeof ov);
        value_text(r->format, r->rounded_value, rv, sizeof rv);
        value_text(r->format, r->low_value, lv, sizeof lv);
        value_text(r->format, r->high_value, hv, sizeof hv);
        hex_text(r->format, r->output, oh, sizeof oh);
        hex_text(r->format, r->rounded, rh, sizeof rh);
        hex_text(r->format, r->low, lh, sizeof lh);
        hex_text(r->format, r->high, hh, sizeof hh);
        specials_text(r, sp, sizeof sp);
        fprintf(f, "  worst element      %s: output %s (%s), rounded %s (%s)\n", idx, ov, oh, rv, rh);
        if (r->single_value)
            fprintf(f, "                     allowed exactly %s (%s): a single value, tolerance 0\n", lv, lh);
        else if (zeros_only(r))
            fprintf(f, "                     allowed -0 or 0 (%s, %s): zero of either sign, tolerance 0\n", lh, hh);
        else if (r->has_range && isfinite(r->tolerance))
            fprintf(f, "                     allowed [%s, %s] ([%s, %s]), tolerance %.3g\n", lv, hv, lh, hh, r->tolerance);
        else if (r->has_range)
            fprintf(f, "                     allowed [%s, %s] ([%s, %s]), %s\n", lv, hv, lh, hh,
                    isnan(r->tolerance) ? "no tolerance: the rounded reference is not finite"
                                        : "no finite tolerance");
        else
            fprintf(f, "                     no finite output allowed here (allowed: %s)\n", sp);
        reason_text(r, why, sizeof why);
        fprintf(f, "                     %s\n", why);
    }
    fprintf(f, "  |output - rounded| / tolerance:\n");
    for (int h = 0; h < ER_REPORT_BINS; h++)
        fprintf(f, "    %-16s %12lld\n", er_check_report_bin_name(h), (long long)r->hist[h]);
    for (int w = 0; w < c->nwarn; w++) fprintf(f, "  warning: %s\n", c->warnings[w]);
    const er_mma_stats *s = c->stats;
    if (c->op)
        fprintf(f, "  time               %.3f s (exact reference %.3f s)\n", c->seconds, c->seconds_ref);
    else if (s->backend == ER_BACKEND_OPENCL || s->backend == ER_BACKEND_CUDA)
        fprintf(f, "  time               %.3f s (exact reference %.3f s on the %s device: %lld elements in exact binary64, "
                   "%lld by the exact accumulator)\n",
                c->seconds, c->seconds_ref, s->backend == ER_BACKEND_CUDA ? "CUDA" : "OpenCL", (long long)s->exact_f64,
                (long long)s->exact_path);
    else if (!strcmp(c->compute, "i32")) /* mmai: exact integer sums */
        fprintf(f, "  time               %.3f s (exact reference %.3f s on %d thread%s: %lld exact integer sums)\n",
                c->seconds, c->seconds_ref, s->threads, s->threads == 1 ? "" : "s", (long long)s->elements);
    else
        fprintf(f, "  time               %.3f s (exact reference %.3f s on %d thread%s: %lld elements by the fast path, "
                   "%lld in exact binary64 (integral inputs), %lld by the exact accumulator)\n",
                c->seconds, c->seconds_ref, s->threads, s->threads == 1 ? "" : "s", (long long)s->fast_decided,
                (long long)s->exact_f64, (long long)s->exact_path);
    fprintf(f, "%s\n", r->outside ? "FAIL" : "PASS");
}

void er_sb_json_num(er_sbuf *b, double v)
{
    if (isnan(v)) er_sb_printf(b, "\"nan\"");
    else if (isinf(v)) er_sb_printf(b, v > 0 ? "\"inf\"" : "\"-inf\"");
    else er_sb_printf(b, "%.17g", v);
}

static void json_index(er_sbuf *b, const er_check_report *r, const int64_t idx[3])
{
    if (r->ndim == 3) er_sb_printf(b, "[%lld, %lld, %lld]", (long long)idx[0], (long long)idx[1], (long long)idx[2]);
    else er_sb_printf(b, "[%lld, %lld]", (long long)idx[1], (long long)idx[2]);
}

static void json_operand(er_sbuf *b, const char *key, const er_cli_operand *o, int first)
{
    if (!o->loaded) return;
    er_sb_printf(b, "%s\"%s\": {\"file\": ", first ? "" : ", ", key);
    er_sb_json_str(b, o->path);
    er_sb_printf(b, ", \"format\": \"%s\", \"dtype\": ", er_format_name(o->t.format));
    er_sb_json_str(b, o->npy.descr);
    er_sb_printf(b, "}");
}

void er_cli_report_json(er_sbuf *b, const er_cli_check *c)
{
    const er_check_report *r = c->rep;
    const er_cli_mma *m = c->m;
    er_sb_printf(b, "{\n  \"output\": ");
    er_sb_json_str(b, c->out_path);
    er_sb_printf(b, ",\n  \"output_format\": \"%s\",\n", er_format_name(r->format));
    if (c->op) { /* check --op: the operation, its input files and the output judged */
        er_sb_printf(b, "  \"op\": ");
        er_sb_json_str(b, c->op);
        er_sb_printf(b, ",\n  \"op_inputs\": ");
        er_sb_json_str(b, c->op_inputs);
        er_sb_printf(b, ",\n  \"op_output\": ");
        er_sb_json_str(b, c->op_output);
        er_sb_printf(b, ",\n");
    }
    er_sb_printf(b, "  \"inputs\": {");
    json_operand(b, "a", &m->A, 1);
    json_operand(b, "b", &m->B, 0);
    json_operand(b, "acc", &m->C, 0);
    json_operand(b, "a_scale", &m->SA, 0);
    json_operand(b, "b_scale", &m->SB, 0);
    json_operand(b, "bias", &m->BIAS, 0); /* a scaled product's (--bias) */
    er_sb_printf(b, "},\n  \"b_transposed\": %s,\n  \"standard\": ", m->b_transposed ? "true" : "false");
    er_sb_json_str(b, c->standard);
    er_sb_printf(b, ",\n  \"compute\": \"%s\",\n  \"flush_to_zero\": %s,\n  \"elements\": %lld,\n  \"outside\": %lld,\n",
                 c->compute, c->ftz ? "true" : "false", (long long)r->elements, (long long)r->outside);
    er_sb_printf(b, "  \"passed\": %s,\n  \"histogram\": {", r->outside ? "false" : "true");
    for (int h = 0; h < ER_REPORT_BINS; h++)
        er_sb_printf(b, "%s\"%s\": %lld", h ? ", " : "", er_check_report_bin_name(h), (long long)r->hist[h]);
    er_sb_printf(b, "},\n  \"worst\": ");
    if (r->worst >= 0) {
        char oh[64], rh[64], lh[64], hh[64], why[256];
        bits_text(r->format, r->output, oh, sizeof oh);
        bits_text(r->format, r->rounded, rh, sizeof rh);
        bits_text(r->format, r->low, lh, sizeof lh);
        bits_text(r->format, r->high, hh, sizeof hh);
        reason_text(r, why, sizeof why);
        er_sb_printf(b, "{\"index\": ");
        json_index(b, r, r->worst_index);
        er_sb_printf(b, ", \"covered\": %s, \"output\": ", r->worst_covered ? "true" : "false");
        er_sb_json_num(b, r->output_value);
        er_sb_printf(b, ", \"output_bits\": \"%s\", \"rounded\": ", oh);
        er_sb_json_num(b, r->rounded_value);
        er_sb_printf(b, ", \"rounded_bits\": \"%s\", \"allowed\": ", rh);
        if (r->has_range) {
            er_sb_printf(b, "[");
            er_sb_json_num(b, r->low_value);
            er_sb_printf(b, ", ");
            er_sb_json_num(b, r->high_value);
            er_sb_printf(b, "], \"allowed_bits\": [\"%s\", \"%s\"]", lh, hh);
        } else {
            er_sb_printf(b, "null, \"allowed_bits\": null");
        }
        er_sb_printf(b, ", \"may_be\": {\"+inf\": %s, \"-inf\": %s, \"nan\": %s}", r->may_pinf ? "true" : "false",
                     r->may_ninf ? "true" : "false", r->may_nan ? "true" : "false");
        er_sb_printf(b, ", \"single_value\": %s, \"tolerance\": ", r->single_value ? "true" : "false");
        er_sb_json_num(b, zeros_only(r) ? 0.0 : r->tolerance);
        er_sb_printf(b, ", \"ulps_beyond\": %lld, \"reason\": ", (long long)(r->worst_covered ? 0 : r->ulps_beyond));
        er_sb_json_str(b, why);
        er_sb_printf(b, "}");
    } else {
        er_sb_printf(b, "null");
    }
    er_sb_printf(b, ",\n  \"outside_indices\": [");
    for (int64_t k = 0; k < r->outside_listed; k++) {
        int64_t idx[3];
        er_check_report_index(r, c->outside_index[k], idx);
        er_sb_printf(b, "%s", k ? ", " : "");
        json_index(b, r, idx);
    }
    er_sb_printf(b, "],\n  \"outside_indices_cap\": %d,\n  \"outside_indices_complete\": %s,\n  \"warnings\": [",
                 ER_CLI_OUTSIDE_CAP, r->outside_listed == r->outside ? "true" : "false");
    for (int w = 0; w < c->nwarn; w++) {
        if (w) er_sb_printf(b, ", ");
        er_sb_json_str(b, c->warnings[w]);
    }
    er_sb_printf(b, "],\n  \"seconds\": %.3f\n}\n", c->seconds);
}

void er_cli_report_junit(er_sbuf *b, const er_cli_check *c)
{
    const er_check_report *r = c->rep;
    er_sb_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"exactref check\" tests=\"1\" "
                    "failures=\"%d\" time=\"%.3f\">\n",
                 r->outside ? 1 : 0, c->seconds);
    er_sb_printf(b, "  <testcase classname=\"exactref.check\" name=\"");
    er_sb_xml_str(b, c->out_path);
    er_sb_printf(b, " (");
    er_sb_xml_str(b, c->standard);
    er_sb_printf(b, ")\" time=\"%.3f\">\n", c->seconds);
    if (r->outside) {
        er_sb_printf(b, "    <failure message=\"%lld of %lld elements outside the bounds of standard ", (long long)r->outside,
                     (long long)r->elements);
        er_sb_xml_str(b, c->standard);
        er_sb_printf(b, "\"/>\n");
    }
    er_sb_printf(b, "  </testcase>\n</testsuite>\n");
}

/* ---- The picture. ---- */

void er_cli_report_svg(er_sbuf *b, const er_cli_check *c)
{
    const er_check_report *r = c->rep;
    const int W = 960, H = 420;
    er_sb_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                    "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
                 W, H, W, H);
    er_sb_printf(b, "<title>exactref check: ");
    er_sb_xml_str(b, c->out_path);
    er_sb_printf(b, " (standard ");
    er_sb_xml_str(b, c->standard);
    er_sb_printf(b, ")</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    er_sb_printf(b, "<text x=\"20\" y=\"24\" font-size=\"15\">");
    er_sb_xml_str(b, c->out_path);
    er_sb_printf(b, ": %lld of %lld elements outside (standard ", (long long)r->outside, (long long)r->elements);
    er_sb_xml_str(b, c->standard);
    er_sb_printf(b, ") %s</text>\n", r->outside ? "FAIL" : "PASS");
    /* the distribution: exact, then log2 bins from 2^-40 up to 1, then allowed specials and outside */
    int nb = ER_REPORT_LOG_BINS + 3;
    double x0 = 60, y0 = 60, pw = 520, ph = 280, bw = pw / nb;
    int64_t maxc = 1;
    int64_t counts[ER_REPORT_LOG_BINS + 3];
    counts[0] = r->hist[ER_REPORT_EXACT];
    for (int k = 0; k < ER_REPORT_LOG_BINS; k++) counts[1 + k] = r->log_hist[ER_REPORT_LOG_BINS - 1 - k];
    counts[nb - 2] = r->hist[ER_REPORT_SPECIAL];
    counts[nb - 1] = r->hist[ER_REPORT_OUTSIDE];
    for (int k = 0; k < nb; k++)
        if (counts[k] > maxc) maxc = counts[k];
    double lmax = log10((double)maxc + 1);
    er_sb_printf(b, "<g id=\"distribution\">\n<text x=\"%g\" y=\"%g\">|output - rounded| / tolerance (elements, log "
                    "scale)</text>\n",
                 x0, y0 - 10);
    er_sb_printf(b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#888\"/>\n", x0, y0, pw, ph);
    for (int k = 0; k < nb; k++) {
        if (!counts[k]) continue;
        double h = ph * log10((double)counts[k] + 1) / (lmax > 0 ? lmax : 1);
        const char *col = k == 0 ? "#4a4" : k == nb - 1 ? "#c22" : k == nb - 2 ? "#c80" : "#46a";
        er_sb_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%lld"
                        "</title></rect>\n",
                     x0 + k * bw + 1, y0 + ph - h, bw - 2, h, col, (long long)counts[k]);
    }
    er_sb_printf(b, "<text x=\"%g\" y=\"%g\">exact</text>\n", x0, y0 + ph + 16);
    er_sb_printf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">2^-20</text>\n", x0 + (1 + 20) * bw, y0 + ph + 16);
    er_sb_printf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">1</text>\n", x0 + (1 + ER_REPORT_LOG_BINS) * bw,
                 y0 + ph + 16);
    er_sb_printf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\" fill=\"#c22\">outside</text>\n", x0 + pw, y0 + ph + 32);
    er_sb_printf(b, "</g>\n");
    /* the map: where the outside elements are in the output matrix (summed over the batch) */
    double mx = 640, my = 60, ms = 280, cs = ms / ER_REPORT_MAP;
    int64_t rows = r->shape[r->ndim - 2], cols = r->shape[r->ndim - 1];
    int mr = rows < ER_REPORT_MAP ? (int)rows : ER_REPORT_MAP, mc = cols < ER_REPORT_MAP ? (int)cols : ER_REPORT_MAP;
    int64_t mmax = 1;
    for (int i = 0; i < ER_REPORT_MAP; i++)
        for (int j = 0; j < ER_REPORT_MAP; j++)
            if (r->map[i][j] > mmax) mmax = r->map[i][j];
    er_sb_printf(b, "<g id=\"map\">\n<text x=\"%g\" y=\"%g\">outside elements: %lld x %lld output</text>\n", mx, my - 10,
                 (long long)rows, (long long)cols);
    er_sb_printf(b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#eee\" stroke=\"#888\"/>\n", mx, my,
                 mc * cs, mr * cs);
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < mc; j++) {
            if (!r->map[i][j]) continue;
            double a = 0.25 + 0.75 * (double)r->map[i][j] / (double)mmax;
            er_sb_printf(b, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#c22\" "
                            "fill-opacity=\"%.2f\"><title>rows %lld-%lld, columns %lld-%lld: %lld</title></rect>\n",
                         mx + j * cs, my + i * cs, cs, cs, a, (long long)(i * rows / mr),
                         (long long)((i + 1) * rows / mr - 1), (long long)(j * cols / mc),
                         (long long)((j + 1) * cols / mc - 1), (long long)r->map[i][j]);
        }
    er_sb_printf(b, "</g>\n</svg>\n");
}

/* ---- The failure bundle. ---- */

FILE *er_cli_report_write(const er_cli_check *c, const char *json, const char *junit, const char *plot, int *rc)
{
    /* a report written to standard output ('-') is the whole of it: the text goes to stderr */
    int report_on_stdout = (json && !strcmp(json, "-")) || (junit && !strcmp(junit, "-")) || (plot && !strcmp(plot, "-"));
    FILE *text = report_on_stdout ? stderr : stdout;
    er_cli_report_text(text, c);
    *rc = c->rep->outside ? ER_EXIT_FAIL : ER_EXIT_OK;
    const struct {
        const char *path;
        void (*fn)(er_sbuf *, const er_cli_check *);
    } writers[3] = {{json, er_cli_report_json}, {junit, er_cli_report_junit}, {plot, er_cli_report_svg}};
    for (int w = 0; w < 3; w++) {
        if (!writers[w].path) continue;
        er_sbuf b = {0};
        writers[w].fn(&b, c);
        int wr = er_cli_write_text("check", writers[w].path, b.p, b.len);
        er_sb_free(&b);
        if (wr) *rc = wr;
    }
    return text;
}

/* Copy a file's bytes (npy.h's output rules); 0, or -1 with the reason in why. */
static int copy_file(const char *from, const char *to, char *why, size_t why_size)
{
    FILE *in = fopen(from, "rb");
    er_sbuf b = {0};
    char buf[65536], msg[512];
    size_t n;
    int ok = 1;
    if (!in) {
        snprintf(why, why_size, "cannot read %s: %s", from, strerror(errno));
        return -1;
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        er_sb_printf(&b, "%s", "");
        if (b.failed) break;
        if (b.len + n + 1 > b.cap) {
            size_t cap = b.cap * 2;
            while (cap < b.len + n + 1) cap *= 2;
            char *p = realloc(b.p, cap);
            if (!p) {
                b.failed = 1;
                break;
            }
            b.p = p;
            b.cap = cap;
        }
        memcpy(b.p + b.len, buf, n);
        b.len += n;
    }
    if (ferror(in) || b.failed) {
        snprintf(why, why_size, b.failed ? "%s: out of memory for a copy" : "cannot read %s", from);
        ok = 0;
    }
    fclose(in);
    if (ok && er_npy_write_bytes(to, b.p, b.len, msg, sizeof msg) != ER_OK) {
        snprintf(why, why_size, "%s", msg);
        ok = 0;
    }
    er_sb_free(&b);
    return ok ? 0 : -1;
}

/* s single-quoted for sh: every byte kept, ' written as '\''. */
static void sh_quote(er_sbuf *b, const char *s)
{
    er_sb_printf(b, "'");
    for (; *s; s++) {
        if (*s == '\'') er_sb_printf(b, "'\\''");
        else er_sb_printf(b, "%c", *s);
    }
    er_sb_printf(b, "'");
}

/* s for a comment line: printable ASCII kept, every other byte as \xNN (a newline cannot end the comment). */
static void comment_text(er_sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') er_sb_printf(b, "%c", ch);
        else er_sb_printf(b, "\\x%02x", ch);
    }
}

int er_cli_save_failures(const char *dir, int argc, char **argv, const er_cli_check *c, char *why, size_t why_size)
{
    const er_cli_mma *m = c->m;
    /* the scaled product's bias (--bias, cli_scaled.c) is an input too: repro.sh reads bias.npy */
    const char *files[7] = {m->A.path, m->B.path, m->C.path, m->SA.path, m->SB.path, c->out_path, m->BIAS.path};
    static const char *const names[7] = {"a.npy",       "b.npy",   "acc.npy", "a_scale.npy",
                                         "b_scale.npy", "out.npy", "bias.npy"};
    char path[4096], self[4096];
    er_sbuf cmd = {0};
    if (er_cli_make_dir(dir) != 0) {
        snprintf(why, why_size, "cannot create the directory: %s", strerror(errno));
        return -1;
    }
    for (int f = 0; f < 7; f++) {
        if (!files[f]) continue;
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        if (copy_file(files[f], path, why, why_size) != 0) return -1;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) snprintf(self, sizeof self, "exactref");
    else self[n] = '\0';
    er_sb_printf(&cmd, "#!/bin/sh\n# Reproduces the failing check; the inputs are the files beside this script.\n"
                       "# Original command:\n#");
    for (int i = 0; i < argc; i++) {
        er_sb_printf(&cmd, " ");
        comment_text(&cmd, argv[i]);
    }
    er_sb_printf(&cmd, "\n# EXACTREF names the exactref to run (default: the one that made this bundle).\n");
    er_sb_printf(&cmd, "case $0 in */*) cd \"${0%%/*}\" || exit 3 ;; esac\nif [ -z \"${EXACTREF:-}\" ]; then EXACTREF=");
    sh_quote(&cmd, self);
    er_sb_printf(&cmd, "; fi\nexec \"$EXACTREF\"");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *sub = NULL;
        if (!strcmp(a, "--save-failures") || !strcmp(a, "--json") || !strcmp(a, "--junit") || !strcmp(a, "--plot") ||
            !strcmp(a, "--save-bounds")) {
            i++; /* a report file of the original run: not reproduced */
            continue;
        }
        for (int f = 0; f < 7; f++)
            if (files[f] && a == files[f]) sub = names[f];
        er_sb_printf(&cmd, " ");
        sh_quote(&cmd, sub ? sub : a);
    }
    er_sb_printf(&cmd, "\n");
    snprintf(path, sizeof path, "%s/repro.sh", dir);
    int rc = 0;
    char msg[1024];
    if (cmd.failed || er_npy_write_bytes(path, cmd.p, cmd.len, msg, sizeof msg) != ER_OK) {
        snprintf(why, why_size, "%s", cmd.failed ? "out of memory" : msg);
        rc = -1;
    } else if (chmod(path, 0755) != 0) {
        snprintf(why, why_size, "cannot make %s executable: %s", path, strerror(errno));
        rc = -1;
    }
    er_sb_free(&cmd);
    return rc;
}
