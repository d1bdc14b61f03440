/* report_merge.c: a check's report assembled from the reports of consecutive blocks of its output, so
 * that a front end can score a large output block by block (the bounds of one block at a time). */
#include "report_internal.h" /* fail, element */

void er_check_report_merge_init(er_check_report *rep, int ndim, const int64_t *shape, int format)
{
    if (!rep) return;
    memset(rep, 0, sizeof *rep);
    rep->ndim = ndim == 3 ? 3 : 2;
    for (int d = 0; d < rep->ndim; d++) rep->shape[d] = shape ? shape[d] : 0;
    rep->format = format;
    rep->worst = -1;
    rep->narrower_format = -1;
}

/* The order of the scoring's worst element (er_check_report_score): rank first (special 3, no finite
 * output allowed 2, ulps beyond 1, covered 0), then the score (ulps beyond, or the covered ratio); the
 * first element wins a tie.  rank -1: no element. */
static void rank_of(const er_check_report *r, int *rank, double *score)
{
    *score = 0;
    if (r->worst < 0) {
        *rank = -1;
        return;
    }
    if (r->worst_covered) {
        *rank = 0;
        *score = r->ratio;
    } else if (r->worst_why == ER_REPORT_WHY_SPECIAL) *rank = 3;
    else if (r->worst_why == ER_REPORT_WHY_NOT_FINITE) *rank = 2;
    else {
        *rank = 1;
        *score = (double)r->ulps_beyond;
    }
}

/* The worst element of `into` becomes part's, at index `at` of into's output. */
static void take_worst(er_check_report *into, const er_check_report *part, int64_t at)
{
    into->worst_covered = part->worst_covered;
    into->worst_why = part->worst_why;
    into->ulps_beyond = part->ulps_beyond;
    into->output = part->output;
    into->rounded = part->rounded;
    into->low = part->low;
    into->high = part->high;
    into->output_value = part->output_value;
    into->rounded_value = part->rounded_value;
    into->low_value = part->low_value;
    into->high_value = part->high_value;
    into->has_range = part->has_range;
    into->single_value = part->single_value;
    into->tolerance = part->tolerance;
    into->ratio = part->ratio;
    into->may_pinf = part->may_pinf;
    into->may_ninf = part->may_ninf;
    into->may_nan = part->may_nan;
    into->worst = at;
    er_check_report_index(into, into->worst, into->worst_index);
}

/* part's histograms, counts and whole-output flags added to into's (first: into had no element). */
static void add_counts(er_check_report *into, const er_check_report *part, int first)
{
    for (int h = 0; h < ER_REPORT_BINS; h++) into->hist[h] += part->hist[h];
    for (int h = 0; h < ER_REPORT_LOG_BINS; h++) into->log_hist[h] += part->log_hist[h];
    into->zero_accepted = (first || into->zero_accepted) && part->zero_accepted;
    into->operand_vacuous = first ? part->operand_vacuous : (into->operand_vacuous & part->operand_vacuous);
    into->narrower_format = -1; /* a property of the whole output: er_check_report_narrower */
    into->elements += part->elements;
    into->outside += part->outside;
}

er_status er_check_report_merge(er_check_report *into, const er_check_report *part, const unsigned char *part_covered,
                                const int64_t *part_index, int64_t *into_index, int64_t into_cap, char *msg,
                                size_t msg_size)
{
    if (!into || !part) return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge: null argument");
    int64_t m = into->shape[into->ndim - 2], n = into->shape[into->ndim - 1], total = 1;
    for (int d = 0; d < into->ndim; d++) total *= into->shape[d];
    int64_t pn = part->shape[part->ndim == 3 ? 2 : 1];
    if (part->format != into->format)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge: the block's output format differs");
    if (part->elements < 0 || part->elements > total - into->elements)
        return fail(msg, msg_size, ER_EINVAL,
                    "er_check_report_merge: the block has %lld elements, %lld of the output's %lld are left",
                    (long long)part->elements, (long long)(total - into->elements), (long long)total);
    if (part->elements == 0) {
        if (msg && msg_size) msg[0] = '\0';
        return ER_OK;
    }
    if (pn != n || into->elements % n != 0)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge: the block must be whole rows of the output "
                    "(%lld columns; the block has %lld)", (long long)n, (long long)pn);
    if (part->outside > 0 && !part_covered)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge: a block with outside elements needs its covered array");
    const int64_t base = into->elements, first = into->elements == 0;
    /* the worst element: the block's when it ranks strictly higher (an earlier one wins a tie) */
    int ri, rp;
    double si, sp;
    rank_of(into, &ri, &si);
    rank_of(part, &rp, &sp);
    if (rp > ri || (rp == ri && rp >= 0 && sp > si)) {
        take_worst(into, part, base + part->worst);
    }
    /* the map's cells are of the whole output's rows: the block's outside elements placed again */
    if (part->outside > 0) {
        int64_t mr = m < ER_REPORT_MAP ? m : ER_REPORT_MAP, mc = n < ER_REPORT_MAP ? n : ER_REPORT_MAP;
        for (int64_t e = 0; e < part->elements; e++) {
            if (part_covered[e]) continue;
            int64_t g = base + e, i = (g / n) % m, j = g % n;
            into->map[(int)(i * mr / m)][(int)(j * mc / n)]++;
        }
    }
    /* the outside list: the block's entries follow, up to the cap (from its covered array when its list
     * is not given) */
    if (into_index && part_index)
        for (int64_t k = 0; k < part->outside_listed && into->outside_listed < into_cap; k++)
            into_index[into->outside_listed++] = base + part_index[k];
    else if (into_index && part->outside > 0)
        for (int64_t e = 0; e < part->elements && into->outside_listed < into_cap; e++)
            if (!part_covered[e]) into_index[into->outside_listed++] = base + e;
    add_counts(into, part, first);
    if (msg && msg_size) msg[0] = '\0';
    return ER_OK;
}

er_status er_check_report_merge_columns(er_check_report *band, const er_check_report *tile, int64_t j0,
                                        const unsigned char *tile_covered, unsigned char *band_covered, char *msg,
                                        size_t msg_size)
{
    if (!band || !tile) return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge_columns: null argument");
    if (band->ndim != 2 || tile->ndim != 2 || tile->format != band->format)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge_columns: the band and the tile must be 2-D reports "
                    "of one output format");
    int64_t m = band->shape[0], n = band->shape[1], nb = tile->shape[1];
    if (tile->shape[0] != m || j0 < 0 || nb < 0 || j0 > n - nb || tile->elements != m * nb ||
        band->elements > m * n - tile->elements)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge_columns: a tile of %lld x %lld at column %lld does "
                    "not fit the band of %lld x %lld (%lld elements merged)", (long long)tile->shape[0], (long long)nb,
                    (long long)j0, (long long)m, (long long)n, (long long)band->elements);
    if (tile->elements == 0) {
        if (msg && msg_size) msg[0] = '\0';
        return ER_OK;
    }
    if (!tile_covered || !band_covered)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_merge_columns: the covered arrays are needed");
    const int first = band->elements == 0;
    int rb, rt;
    double sb, st;
    rank_of(band, &rb, &sb);
    rank_of(tile, &rt, &st);
    /* the worst element: by rank, then score, then the first in the band's row-major order */
    int64_t at = tile->worst >= 0 ? (tile->worst / nb) * n + j0 + tile->worst % nb : -1;
    if (rt > rb || (rt == rb && rt >= 0 && (st > sb || (st == sb && at < band->worst)))) {
        take_worst(band, tile, at);
    }
    int64_t mr = m < ER_REPORT_MAP ? m : ER_REPORT_MAP, mc = n < ER_REPORT_MAP ? n : ER_REPORT_MAP;
    for (int64_t i = 0; i < m; i++) {
        memcpy(band_covered + i * n + j0, tile_covered + i * nb, (size_t)nb);
        if (tile->outside > 0)
            for (int64_t j = 0; j < nb; j++)
                if (!tile_covered[i * nb + j]) band->map[(int)(i * mr / m)][(int)((j0 + j) * mc / n)]++;
    }
    band->outside_listed = 0; /* er_check_report_merge lists the band's outside elements from band_covered */
    add_counts(band, tile, first);
    if (msg && msg_size) msg[0] = '\0';
    return ER_OK;
}

er_status er_check_report_narrower(er_check_report *rep, const er_tensor *output, const er_tensor *R, int a_format,
                                   int b_format, char *msg, size_t msg_size)
{
    er_format_info fi;
    int64_t count;
    if (!rep || !output || !R) return fail(msg, msg_size, ER_EINVAL, "er_check_report_narrower: null argument");
    er_status st = er_report_output_shape_("er_check_report_narrower", output, R, rep->elements, "the report", &fi,
                                           &count, msg, msg_size);
    if (st != ER_OK) return st;
    rep->narrower_format = -1;
    if (rep->outside && fi.kind == ER_KIND_FLOAT && count)
        rep->narrower_format = narrower_format(output, R, &fi, count, a_format, b_format);
    if (msg && msg_size) msg[0] = '\0';
    return ER_OK;
}
