/*
 * test_blocked.c: the blocked standard (docs/proofs/blocked.md) against blocked implementations run
 * here in the accumulator's arithmetic (float for f32, one rounding of an exact binary64 value for
 * f16): every correct one covered, on random, one-signed and cancelling data, in several legal orders
 * within a tile and several combinations of the splits and C; the radius never above any_order's; the
 * parser's errors; and the floor of issue 30 on 128 x 16384 x 128 bf16 with k-tile 64: a kernel that
 * skips one k-tile flagged on >= 99% of the elements, one that drops one k term on >= half, no false
 * alarm on the correct blocked kernels.
 *
 * Environment: EXACTREF_SEED (printed); EXACTREF_BLOCKED_FLOOR=0 skips the large floor case.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

static int g_fail = 0;
#define CHECK(cond, ...)                                                                               \
    do {                                                                                               \
        if (!(cond)) {                                                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                \
            printf(__VA_ARGS__);                                                                       \
            printf("\n");                                                                              \
            g_fail++;                                                                                  \
        }                                                                                              \
    } while (0)

static uint64_t g_rng;
static double unif(void) { return (double)(er_test_rand(&g_rng) >> 11) * 0x1p-53; }
static double gauss(void)
{
    double u1 = unif(), u2 = unif();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static int irand(int lo, int hi) { return lo + (int)(er_test_rand(&g_rng) % (uint64_t)(hi - lo + 1)); }

static double rnd_fmt(int f, double x)
{
    double y;
    if (er_round_double(f, x, ER_RND_NEAREST_EVEN, &y) != ER_OK) abort();
    return y;
}
static uint64_t bits_of(int f, double x)
{
    uint64_t b;
    if (er_bits_of(f, x, &b) != ER_OK) abort();
    return b;
}

/* ---- The accumulator's arithmetic: f32 by float operations, f16 by one rounding of an exact binary64
 * value (sums and products of f16 values within the data's range are exact in binary64). ---- */
static int g_acc = ER_FMT_F32;
static double acc_r(double x) { return g_acc == ER_FMT_F32 ? (double)(float)x : rnd_fmt(g_acc, x); }
static double acc_add(double x, double y)
{
    if (g_acc == ER_FMT_F32) return (double)((float)x + (float)y);
    return rnd_fmt(g_acc, x + y);
}
static double acc_mul(double a, double b)
{
    if (g_acc == ER_FMT_F32) return (double)((float)a * (float)b);
    return rnd_fmt(g_acc, a * b);
}
static double acc_fma(double a, double b, double y)
{
    if (g_acc == ER_FMT_F32) return (double)fmaf((float)a, (float)b, (float)y);
    return rnd_fmt(g_acc, a * b + y);
}

/* One tile's contribution to acc in variant v: 0 sequential (acc + round(ab) per product), 1 the tile
 * summed apart then added, 2 fma sequential, 3 reversed, 4 four lanes then added, 5 a random tree over
 * acc and the products. */
static double tile_run(int v, double acc, const double *a, const double *b, int64_t p0, int64_t p1)
{
    int64_t p;
    if (v == 0) {
        for (p = p0; p < p1; p++) acc = acc_add(acc, acc_mul(a[p], b[p]));
        return acc;
    }
    if (v == 1) {
        double part = 0;
        for (p = p0; p < p1; p++) part = acc_add(part, acc_mul(a[p], b[p]));
        return acc_add(acc, part);
    }
    if (v == 2) {
        for (p = p0; p < p1; p++) acc = acc_fma(a[p], b[p], acc);
        return acc;
    }
    if (v == 3) {
        for (p = p1 - 1; p >= p0; p--) acc = acc_add(acc, acc_mul(a[p], b[p]));
        return acc;
    }
    if (v == 4) {
        double l[4] = {0, 0, 0, 0};
        for (p = p0; p < p1; p++) l[(p - p0) & 3] = acc_add(l[(p - p0) & 3], acc_mul(a[p], b[p]));
        return acc_add(acc, acc_add(acc_add(l[0], l[1]), acc_add(l[2], l[3])));
    }
    {
        double nodes[1025];
        int cnt = 0;
        nodes[cnt++] = acc;
        for (p = p0; p < p1; p++) nodes[cnt++] = acc_mul(a[p], b[p]);
        while (cnt > 1) {
            int x = irand(0, cnt - 1), y = irand(0, cnt - 2);
            if (y >= x) y++;
            double s = acc_add(nodes[x], nodes[y]);
            int lo = x < y ? x : y, hi = x < y ? y : x;
            nodes[lo] = s;
            nodes[hi] = nodes[--cnt];
        }
        return nodes[0];
    }
}

/* A blocked dot product: k-tiles of bk, split-k (ceil(tiles / split) tiles per split), variant v within
 * the tiles, then the splits and C (rounded into acc) combined in order (comb 0), in reverse with C
 * first (1), or pairwise with C last (2).  skip_tile / drop: the planted bugs (-1: none). */
static double blocked_dot(int v, int comb, int64_t k, int64_t bk, int64_t split, const double *a, const double *b,
                          int has_c, double c, int64_t skip_tile, int64_t drop)
{
    int64_t ntiles = (k + bk - 1) / bk, tps = ntiles ? (ntiles + split - 1) / split : 1, t;
    double parts[64];
    int np = 0;
    for (int64_t s = 0; s * tps < ntiles; s++) {
        double acc = 0;
        for (t = s * tps; t < (s + 1) * tps && t < ntiles; t++) {
            int64_t p0 = t * bk, p1 = p0 + bk < k ? p0 + bk : k;
            if (t == skip_tile) continue;
            if (drop >= p0 && drop < p1) {
                acc = tile_run(v, acc, a, b, p0, drop);
                acc = tile_run(v, acc, a, b, drop + 1, p1);
            } else {
                acc = tile_run(v, acc, a, b, p0, p1);
            }
        }
        parts[np++] = acc;
    }
    double cc = has_c ? acc_r(c) : 0, tot;
    if (comb == 0) {
        tot = np ? parts[0] : 0;
        for (int i = 1; i < np; i++) tot = acc_add(tot, parts[i]);
        if (has_c) tot = np ? acc_add(tot, cc) : cc;
    } else if (comb == 1) {
        int i0 = has_c ? np - 1 : np - 2;
        tot = has_c ? cc : (np ? parts[np - 1] : 0);
        for (int i = i0; i >= 0; i--) tot = acc_add(tot, parts[i]);
    } else {
        while (np > 1) {
            int w = 0;
            for (int i = 0; i + 1 < np; i += 2) parts[w++] = acc_add(parts[i], parts[i + 1]);
            if (np & 1) parts[w++] = parts[np - 1];
            np = w;
        }
        tot = np ? parts[0] : 0;
        if (has_c) tot = np ? acc_add(tot, cc) : cc;
    }
    return tot;
}

/* ---- One problem through the library. ---- */
typedef struct {
    int fa, fo;
    int64_t m, n, k;
    double *A, *B, *C; /* values: A m x k, B k x n (row-major), C m x n or NULL */
    void *Ab, *Bb, *Cb, *Db;
    er_tensor a, b, c, d; /* the result reads them while it lives */
    er_result *r;
} prob;

static void *pack(int f, const double *x, int64_t cnt)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    unsigned char *p = calloc((size_t)cnt, (size_t)fi.storage_bytes);
    for (int64_t i = 0; i < cnt; i++) {
        uint64_t b = bits_of(f, x[i]);
        memcpy(p + i * fi.storage_bytes, &b, (size_t)fi.storage_bytes); /* little-endian */
    }
    return p;
}

static int g_threads = 0; /* the results' threads (0: all cores) */

static void prob_make(prob *P)
{
    er_mma_args args;
    er_tensor *a = &P->a, *b = &P->b, *c = &P->c, *d = &P->d;
    char msg[512] = "";
    P->Ab = pack(P->fa, P->A, P->m * P->k);
    P->Bb = pack(P->fa, P->B, P->k * P->n);
    P->Cb = P->C ? pack(ER_FMT_F32, P->C, P->m * P->n) : NULL;
    P->Db = calloc((size_t)(P->m * P->n), 4);
    *a = er_tensor_2d(P->fa, P->m, P->k, P->Ab);
    *b = er_tensor_2d(P->fa, P->k, P->n, P->Bb);
    *c = er_tensor_2d(ER_FMT_F32, P->m, P->n, P->Cb);
    *d = er_tensor_2d(P->fo, P->m, P->n, P->Db);
    er_mma_args_init(&args);
    args.a = a;
    args.b = b;
    args.c = P->C ? c : NULL;
    args.d = d;
    args.threads = g_threads;
    if (er_result_create(&args, &P->r, msg, sizeof msg) != ER_OK) {
        printf("er_result_create: %s\n", msg);
        abort();
    }
}

static void prob_free(prob *P)
{
    er_result_free(P->r);
    free(P->Ab), free(P->Bb), free(P->Cb), free(P->Db);
    free(P->A), free(P->B), free(P->C);
}

/* The elements of out (values, rounded into P->fo) outside the standard's range; *rad the bounds. */
static int64_t outside(prob *P, const char *std, int compute, const double *out, const er_bounds **bd)
{
    er_tol_opts o;
    char msg[512] = "";
    int64_t mn = P->m * P->n, cnt = -1;
    er_tol_opts_init(&o);
    o.compute = compute;
    if (er_standard_parse(std, &o.standard, msg, sizeof msg) != ER_OK) {
        printf("parse %s: %s\n", std, msg);
        abort();
    }
    void *ob = pack(P->fo, out, mn);
    er_tensor t = er_tensor_2d(P->fo, P->m, P->n, ob);
    unsigned char *cov = malloc((size_t)mn);
    if (er_result_covers(P->r, &o, &t, cov, &cnt, msg, sizeof msg) != ER_OK) {
        printf("covers %s: %s\n", std, msg);
        abort();
    }
    if (bd && er_result_bounds(P->r, &o, bd, msg, sizeof msg) != ER_OK) abort();
    free(cov);
    free(ob);
    return cnt;
}

static double *col(const prob *P, int64_t j, double *buf)
{
    for (int64_t p = 0; p < P->k; p++) buf[p] = P->B[p * P->n + j];
    return buf;
}

/* ---- Soundness on small random problems. ---- */
static void soundness(int cases)
{
    static const int bks[] = {1, 2, 3, 7, 16, 64}, splits[] = {1, 2, 3, 5};
    int64_t total = 0;
    for (int cs = 0; cs < cases; cs++) {
        prob P;
        memset(&P, 0, sizeof P);
        /* 0 normal, 1 one-signed, 2 cancelling pairs, 3 near-equal positive terms, 4 drift: a first
         * product 1 and then products just above half an ulp of 1 in the accumulator, so that every
         * addition of a sequential kernel rounds up by nearly the bound's half ulp */
        int kind = irand(0, 4);
        g_acc = irand(0, 3) ? ER_FMT_F32 : ER_FMT_F16;
        P.fa = g_acc == ER_FMT_F16 ? ER_FMT_F16 : (irand(0, 1) ? ER_FMT_BF16 : ER_FMT_F16);
        P.fo = ER_FMT_F32;
        P.m = irand(1, 5), P.n = irand(1, 5), P.k = irand(1, 400);
        int64_t bk = bks[irand(0, 5)], split = splits[irand(0, 3)];
        int has_c = irand(0, 1);
        double sc = g_acc == ER_FMT_F16 ? 0.25 : 1.0; /* keep f16 sums within range */
        P.A = malloc(sizeof(double) * (size_t)(P.m * P.k));
        P.B = malloc(sizeof(double) * (size_t)(P.k * P.n));
        for (int64_t q = 0; q < P.m * P.k; q++) {
            double x = kind == 0 ? gauss() : kind == 3 ? 1.0 + unif() * 0x1p-6 : 0.5 + unif();
            if (kind == 2 && (q & 1)) x = -P.A[q - 1] * (1 + 0x1p-7);
            P.A[q] = rnd_fmt(P.fa, x * sc);
        }
        for (int64_t q = 0; q < P.k * P.n; q++) {
            double x = kind == 0 ? gauss() : kind == 3 ? 1.0 - unif() * 0x1p-6 : 0.5 + unif();
            P.B[q] = rnd_fmt(P.fa, x * sc);
        }
        if (kind == 4) {
            int hp = g_acc == ER_FMT_F32 ? 12 : 6, hq = g_acc == ER_FMT_F32 ? 12 : 5;
            for (int64_t q = 0; q < P.m * P.k; q++) P.A[q] = q % P.k == 0 ? 1.0 : ldexp(1 + 0x1p-7, -hp);
            for (int64_t q = 0; q < P.k * P.n; q++) P.B[q] = q < P.n ? 1.0 : ldexp(1.0, -hq);
        }
        if (has_c) {
            P.C = malloc(sizeof(double) * (size_t)(P.m * P.n));
            for (int64_t q = 0; q < P.m * P.n; q++) P.C[q] = rnd_fmt(ER_FMT_F32, gauss() * sqrt((double)P.k) * sc);
        }
        prob_make(&P);
        char std[64];
        snprintf(std, sizeof std, "blocked:bk=%lld,split=%lld,acc=%s", (long long)bk, (long long)split,
                 g_acc == ER_FMT_F32 ? "f32" : "f16");
        double *out = malloc(sizeof(double) * (size_t)(P.m * P.n)), *bc = malloc(sizeof(double) * (size_t)P.k);
        for (int v = 0; v < 6; v++)
            for (int comb = 0; comb < 3; comb++) {
                if (v == 2 && g_acc != ER_FMT_F32) continue; /* fma: float only here */
                for (int64_t i = 0; i < P.m; i++)
                    for (int64_t j = 0; j < P.n; j++)
                        out[i * P.n + j] = rnd_fmt(P.fo, blocked_dot(v, comb, P.k, bk, split, P.A + i * P.k,
                                                                      col(&P, j, bc), has_c,
                                                                      has_c ? P.C[i * P.n + j] : 0, -1, -1));
                const er_bounds *bd = NULL, *ba = NULL;
                int64_t o = outside(&P, std, -1, out, &bd);
                CHECK(o == 0, "case %d (%s, kind %d, %s, m %lld n %lld k %lld, C %d): variant %d comb %d: %lld outside",
                      cs, std, kind, er_format_name(P.fa), (long long)P.m, (long long)P.n, (long long)P.k, has_c, v,
                      comb, (long long)o);
                if (v == 0 && comb == 0) {
                    (void)outside(&P, g_acc == ER_FMT_F32 ? "any_order" : "any_order", g_acc, out, &ba);
                    for (int64_t e = 0; e < P.m * P.n; e++)
                        CHECK(!(bd->radius[e] > ba->radius[e]), "case %d: blocked radius %g above any_order's %g", cs,
                              bd->radius[e], ba->radius[e]);
                }
                total++;
            }
        free(out), free(bc);
        prob_free(&P);
    }
    g_acc = ER_FMT_F32;
    printf("soundness: %d problems, %lld outputs checked\n", cases, (long long)total);
}

/* ---- The parser. ---- */
static void parser(void)
{
    er_standard s;
    char msg[256];
    CHECK(er_standard_parse("blocked:bk=64,split=4,acc=f32", &s, msg, sizeof msg) == ER_OK, "parse: %s", msg);
    CHECK(s.kind == ER_STD_BLOCKED && s.bk == 64 && s.split == 4 && s.acc_fmt == ER_FMT_F32 &&
              !strcmp(s.name, "blocked:bk=64,split=4,acc=f32"),
          "parsed fields");
    CHECK(er_standard_parse("blocked:bk=32", &s, msg, sizeof msg) == ER_OK && s.split == 1 && s.acc_fmt == -1,
          "defaults");
    CHECK(er_standard_parse("blocked:split=2", &s, msg, sizeof msg) == ER_EINVAL && strstr(msg, "bk"), "bk required: %s",
          msg);
    CHECK(er_standard_parse("blocked:bk=0", &s, msg, sizeof msg) == ER_EINVAL, "bk 0");
    CHECK(er_standard_parse("blocked:bk=8,acc=f8E4M3FN", &s, msg, sizeof msg) == ER_EINVAL, "acc fp8");
    CHECK(er_standard_parse("blocked:bk=8,foo=1", &s, msg, sizeof msg) == ER_EINVAL, "unknown key");
    CHECK(er_standard_parse("blocked", &s, msg, sizeof msg) == ER_EINVAL, "no keys");
    CHECK(strstr(er_standard_names(), "blocked:") != NULL, "names");
    char tab[16384];
    er_standard_table(tab, sizeof tab);
    CHECK(strstr(tab, "blocked:bk=") != NULL, "table");
}

/* ---- Specials and a flushing request. ---- */
static void specials(void)
{
    prob P;
    memset(&P, 0, sizeof P);
    g_acc = ER_FMT_F32;
    P.fa = ER_FMT_BF16, P.fo = ER_FMT_F32, P.m = 2, P.n = 2, P.k = 70;
    P.A = malloc(sizeof(double) * 140), P.B = malloc(sizeof(double) * 140);
    for (int q = 0; q < 140; q++) P.A[q] = P.B[q] = rnd_fmt(ER_FMT_BF16, gauss());
    P.A[3] = INFINITY; /* row 0: +-inf or NaN per column */
    prob_make(&P);
    er_tol_opts o;
    char msg[256];
    const er_bounds *bd;
    er_tol_opts_init(&o);
    er_standard_parse("blocked:bk=16", &o.standard, msg, sizeof msg);
    if (er_result_bounds(P.r, &o, &bd, msg, sizeof msg) != ER_OK) {
        CHECK(0, "bounds with an infinity: %s", msg);
        prob_free(&P);
        return;
    }
    CHECK(bd->tolerance[0] == 0 || isnan(bd->tolerance[0]), "an infinite exact value: tolerance 0 or NaN");
    CHECK(isfinite(bd->tolerance[2]) && bd->tolerance[2] > 0, "row 1 is finite");
    o.flush_to_zero = 1;
    CHECK(er_result_bounds(P.r, &o, &bd, msg, sizeof msg) == ER_EUNSUPPORTED && strstr(msg, "flush"),
          "flush refused: %s", msg);
    prob_free(&P);
}

/* ---- The same bits whatever the thread count (and batched operands). ---- */
static void threads_same(void)
{
    const char *stds[] = {"blocked:bk=16,split=3", "blocked:bk=5,acc=f16"};
    prob P[2];
    const er_bounds *bd[2];
    uint64_t rng0 = g_rng;
    for (int t = 0; t < 2; t++) {
        memset(&P[t], 0, sizeof P[t]);
        g_rng = rng0;
        g_threads = t ? 3 : 1;
        P[t].fa = ER_FMT_F16, P[t].fo = ER_FMT_BF16, P[t].m = 7, P[t].n = 9, P[t].k = 333;
        P[t].A = malloc(sizeof(double) * (size_t)(P[t].m * P[t].k));
        P[t].B = malloc(sizeof(double) * (size_t)(P[t].k * P[t].n));
        P[t].C = malloc(sizeof(double) * (size_t)(P[t].m * P[t].n));
        for (int64_t q = 0; q < P[t].m * P[t].k; q++) P[t].A[q] = rnd_fmt(ER_FMT_F16, gauss() * 0.25);
        for (int64_t q = 0; q < P[t].k * P[t].n; q++) P[t].B[q] = rnd_fmt(ER_FMT_F16, gauss() * 0.25);
        for (int64_t q = 0; q < P[t].m * P[t].n; q++) P[t].C[q] = rnd_fmt(ER_FMT_F32, gauss());
        prob_make(&P[t]);
    }
    g_threads = 0;
    for (int s = 0; s < 2; s++) {
        for (int t = 0; t < 2; t++) {
            er_tol_opts o;
            char msg[256];
            er_tol_opts_init(&o);
            er_standard_parse(stds[s], &o.standard, msg, sizeof msg);
            if (er_result_bounds(P[t].r, &o, &bd[t], msg, sizeof msg) != ER_OK) abort();
        }
        int64_t cnt = P[0].m * P[0].n, diff = 0;
        for (int64_t e = 0; e < cnt; e++)
            diff += memcmp(&bd[0]->radius[e], &bd[1]->radius[e], 8) || bd[0]->low[e] != bd[1]->low[e] ||
                    bd[0]->high[e] != bd[1]->high[e] || memcmp(&bd[0]->tolerance[e], &bd[1]->tolerance[e], 8) ||
                    bd[0]->has_range[e] != bd[1]->has_range[e] || bd[0]->may_nan[e] != bd[1]->may_nan[e];
        CHECK(diff == 0, "%s: 1 and 3 threads differ on %lld elements", stds[s], (long long)diff);
    }
    prob_free(&P[0]);
    prob_free(&P[1]);
}

/* ---- The floor of issue 30. ---- */
static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void floor_case(void)
{
    prob P;
    memset(&P, 0, sizeof P);
    g_acc = ER_FMT_F32;
    P.fa = ER_FMT_BF16, P.fo = ER_FMT_F32, P.m = 128, P.n = 128, P.k = 16384;
    const int64_t bk = 64, mn = P.m * P.n;
    P.A = malloc(sizeof(double) * (size_t)(P.m * P.k));
    P.B = malloc(sizeof(double) * (size_t)(P.k * P.n));
    for (int64_t q = 0; q < P.m * P.k; q++) P.A[q] = rnd_fmt(ER_FMT_BF16, gauss());
    for (int64_t q = 0; q < P.k * P.n; q++) P.B[q] = rnd_fmt(ER_FMT_BF16, gauss());
    prob_make(&P);
    double *out = malloc(sizeof(double) * (size_t)mn), *bc = malloc(sizeof(double) * (size_t)P.k);
    double *BT = malloc(sizeof(double) * (size_t)(P.k * P.n));
    for (int64_t j = 0; j < P.n; j++) col(&P, j, BT + j * P.k);
    const er_bounds *bd = NULL;
    /* correct blocked kernels: sequential, tile sums added, fma, reversed tiles, four lanes */
    for (int v = 0; v < 5; v++) {
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++)
                out[i * P.n + j] = blocked_dot(v, 0, P.k, bk, 1, P.A + i * P.k, BT + j * P.k, 0, 0, -1, -1);
        int64_t o = outside(&P, "blocked:bk=64", -1, out, &bd);
        printf("floor: correct variant %d: %lld of %lld outside\n", v, (long long)o, (long long)mn);
        CHECK(o == 0, "floor: a correct blocked kernel (variant %d) flagged on %lld elements", v, (long long)o);
    }
    {
        /* the median share of blocked's tolerance the sequential kernel uses, and its radius */
        double *sh = malloc(sizeof(double) * (size_t)mn), rv;
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++)
                out[i * P.n + j] = blocked_dot(0, 0, P.k, bk, 1, P.A + i * P.k, BT + j * P.k, 0, 0, -1, -1);
        (void)outside(&P, "blocked:bk=64", -1, out, &bd);
        for (int64_t e = 0; e < mn; e++) {
            er_from_bits(ER_FMT_F32, ((uint32_t *)P.Db)[e], &rv);
            sh[e] = fabs(out[e] - rv) / bd->tolerance[e];
        }
        qsort(sh, (size_t)mn, sizeof *sh, cmp_d);
        printf("floor: sequential kernel: median share of blocked:bk=64's tolerance %.4f\n", sh[mn / 2]);
        free(sh);
    }
    static const char *stds[] = {"blocked:bk=64", "any_order", "normal"};
    for (int bug = 0; bug < 2; bug++) {
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++)
                out[i * P.n + j] = blocked_dot(1, 0, P.k, bk, 1, P.A + i * P.k, BT + j * P.k, 0, 0,
                                               bug == 0 ? 100 : -1, bug == 1 ? 5000 : -1);
        for (int s = 0; s < 3; s++) {
            int64_t o = outside(&P, stds[s], -1, out, NULL);
            printf("floor: %s: %s flagged on %lld of %lld\n", bug == 0 ? "one k-tile skipped" : "one k term dropped",
                   stds[s], (long long)o, (long long)mn);
            if (s == 0 && bug == 0) CHECK(o * 100 >= mn * 99, "floor: a skipped k-tile flagged on %lld < 99%%", (long long)o);
            if (s == 0 && bug == 1) CHECK(o * 2 >= mn, "floor: a dropped k term flagged on %lld < half", (long long)o);
        }
    }
    free(out), free(bc), free(BT);
    prob_free(&P);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_rng = er_test_seed("test_blocked");
    parser();
    specials();
    soundness(120);
    threads_same();
    const char *fl = getenv("EXACTREF_BLOCKED_FLOOR");
    if (!fl || strcmp(fl, "0")) floor_case();
    printf("%s\n", g_fail ? "FAILED" : "ok");
    return g_fail ? 1 : 0;
}
