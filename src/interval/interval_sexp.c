/* interval_sexp.c: the interval's text form, the seed's s-expression, printed and parsed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interval_impl.h"

/* The shortest %.*g form of x that strtod reads back to the same bits (17 digits always do). */
static void print_double(double x, char *out, size_t size)
{
    int p;
    if (isinf(x)) {
        snprintf(out, size, "%s", x < 0 ? "-inf" : "inf");
        return;
    }
    if (floor(x) == x && fabs(x) < ER_INTERVAL_EXACT_INT_CUTOFF) { /* integers in full: 40, not 4e+01 */
        snprintf(out, size, "%.0f", x);
        return;
    }
    for (p = 1; p <= 17; p++) {
        double back;
        snprintf(out, size, "%.*g", p, x);
        back = strtod(out, NULL);
        if (memcmp(&back, &x, sizeof x) == 0) return;
    }
}

er_status er_interval_to_sexp(er_interval t, char *buf, size_t size)
{
    char lo[40], hi[40];
    int n;
    if (!buf || size == 0 || isnan(t.lo) || isnan(t.hi)) return ER_EINVAL;
    print_double(t.lo, lo, sizeof lo);
    print_double(t.hi, hi, sizeof hi);
    n = snprintf(buf, size, "((lo %s) (hi %s) (integral %s) (exact %s))", lo, hi,
                 t.integral ? "true" : "false", t.exact ? "true" : "false");
    return n < 0 || (size_t)n >= size ? ER_EINVAL : ER_OK;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

/* An atom: the characters up to whitespace or a parenthesis, copied into tok. */
static const char *read_atom(const char *s, char *tok, size_t size)
{
    size_t n = 0;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '(' && *s != ')') {
        if (n + 1 >= size) return NULL;
        tok[n++] = *s++;
    }
    tok[n] = 0;
    return n ? s : NULL;
}

static int parse_double(const char *tok, double *out)
{
    char *end;
    double x;
    errno = 0;
    x = strtod(tok, &end);
    if (end == tok || *end || isnan(x)) return 0;
    /* An overflowing decimal is refused; an infinity has to be written as one. */
    if (errno == ERANGE && isinf(x)) return 0;
    *out = x;
    return 1;
}

static int parse_bool(const char *tok, int *out)
{
    if (strcmp(tok, "true") == 0) *out = 1;
    else if (strcmp(tok, "false") == 0) *out = 0;
    else return 0;
    return 1;
}

er_status er_interval_of_sexp(const char *text, er_interval *out)
{
    const char *s;
    char name[16], val[64];
    er_interval r;
    unsigned seen = 0;
    if (!text || !out) return ER_EINVAL;
    r = er_interval_top();
    s = skip_ws(text);
    if (*s++ != '(') return ER_EINVAL;
    for (;;) {
        unsigned bit;
        int ok;
        s = skip_ws(s);
        if (*s == ')') {
            s++;
            break;
        }
        if (*s++ != '(') return ER_EINVAL;
        s = skip_ws(s);
        if (!(s = read_atom(s, name, sizeof name))) return ER_EINVAL;
        s = skip_ws(s);
        if (!(s = read_atom(s, val, sizeof val))) return ER_EINVAL;
        s = skip_ws(s);
        if (*s++ != ')') return ER_EINVAL;
        if (strcmp(name, "lo") == 0) {
            bit = 1u;
            ok = parse_double(val, &r.lo);
        } else if (strcmp(name, "hi") == 0) {
            bit = 2u;
            ok = parse_double(val, &r.hi);
        } else if (strcmp(name, "integral") == 0) {
            bit = 4u;
            ok = parse_bool(val, &r.integral);
        } else if (strcmp(name, "exact") == 0) {
            bit = 8u;
            ok = parse_bool(val, &r.exact);
        } else {
            return ER_EINVAL;
        }
        if (!ok || (seen & bit)) return ER_EINVAL;
        seen |= bit;
    }
    if (seen != 15u || *skip_ws(s)) return ER_EINVAL;
    /* The record's own invariant: an exact interval has finite endpoints below 2^53. */
    if (r.exact && !(er_interval_endpoint_exact(r.lo) && er_interval_endpoint_exact(r.hi))) return ER_EINVAL;
    *out = r;
    return ER_OK;
}
