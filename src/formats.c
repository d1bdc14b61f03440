/* formats.c: names, aliases and descriptions of the rows of the format table. */
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/core/er_round.h"

#define ER_NAME_(ID, n, a, k, w, e, m, p, b, s, f) n,
#define ER_ALIAS_(ID, n, a, k, w, e, m, p, b, s, f) a,
static const char *const er_names_[ER_FMT_COUNT] = {ER_FORMAT_TABLE(ER_NAME_)};
static const char *const er_aliases_[ER_FMT_COUNT] = {ER_FORMAT_TABLE(ER_ALIAS_)};
#undef ER_NAME_
#undef ER_ALIAS_

/* MLIR float types that exist but exactref does not model (seed tileinterp: "not modelled"). */
static const char *const er_unmodelled_[] = {"f8E3M4", "f8E4M3", "f8E4M3B11FNUZ", "f80", "f128"};

static const char *const er_roundings_[ER_RND_COUNT] = {
    "nearest_even", "nearest_away", "zero", "negative_inf", "positive_inf", "odd"};

static int er_ieq_(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return *a == *b;
}

int er_format_count(void) { return ER_FMT_COUNT; }

er_status er_format_from_name(const char *name, int *fmt)
{
    int i;
    if (!name || !fmt) return ER_EINVAL;
    for (i = 0; i < ER_FMT_COUNT; i++) {
        if (er_ieq_(name, er_names_[i]) || er_ieq_(name, er_aliases_[i])) {
            *fmt = i;
            return ER_OK;
        }
    }
    return ER_EFORMAT;
}

const char *er_format_name(int fmt) { return fmt >= 0 && fmt < ER_FMT_COUNT ? er_names_[fmt] : NULL; }
const char *er_format_alias(int fmt) { return fmt >= 0 && fmt < ER_FMT_COUNT ? er_aliases_[fmt] : NULL; }
int er_format_width(int fmt) { return fmt >= 0 && fmt < ER_FMT_COUNT ? er_fmt_get(fmt).width : 0; }

int er_format_is_modelled(const char *name)
{
    int f;
    return er_format_from_name(name, &f) == ER_OK && er_fmt_get(f).kind == ER_KIND_FLOAT;
}

int er_format_is_unmodelled(const char *name)
{
    size_t i;
    if (!name) return 0;
    for (i = 0; i < sizeof er_unmodelled_ / sizeof er_unmodelled_[0]; i++)
        if (er_ieq_(name, er_unmodelled_[i])) return 1;
    return 0;
}

er_status er_format_get_info(int fmt, er_format_info *info)
{
    er_fmt d;
    if (fmt < 0 || fmt >= ER_FMT_COUNT || !info) return ER_EINVAL;
    d = er_fmt_get(fmt);
    memset(info, 0, sizeof *info);
    info->name = er_names_[fmt];
    info->alias = er_aliases_[fmt];
    info->kind = d.kind;
    info->width = d.width;
    info->storage_bytes = er_fmt_storage_bytes(d);
    info->is_signed = er_fmt_signed(d);
    info->has_zero = er_fmt_has_zero(d);
    info->max_finite_bits = er_maxval_(d, 0u);
    if (d.kind != ER_KIND_FLOAT) {
        info->min_subnormal_bits = 1u;
        return ER_OK;
    }
    info->exponent_bits = d.ebits;
    info->significand_bits = d.mbits;
    info->padding_bits = d.pad;
    info->bias = d.bias;
    info->emin = er_fmt_emin(d);
    info->emax = er_fmt_emax(d);
    info->has_inf = er_fmt_has_inf(d);
    info->has_nan = er_fmt_has_nan(d);
    info->has_negative_zero = er_fmt_has_negzero(d);
    info->has_subnormals = er_fmt_has_subnormals(d);
    info->min_subnormal_bits = er_pack_(d, 0u, er_fmt_has_subnormals(d) ? 1u : 0u);
    return ER_OK;
}

er_status er_rounding_from_name(const char *name, int *dir)
{
    int i;
    if (!name || !dir) return ER_EINVAL;
    for (i = 0; i < ER_RND_COUNT; i++) {
        if (er_ieq_(name, er_roundings_[i])) {
            *dir = i;
            return ER_OK;
        }
    }
    return ER_EFORMAT;
}

const char *er_rounding_name(int dir) { return dir >= 0 && dir < ER_RND_COUNT ? er_roundings_[dir] : NULL; }
