/* interp_parse.c: the lexer and parser of the cuda_tile dialect's MLIR text form into the interpreter's IR. */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"
#include "exactref/core/er_round.h"

/* ---------------------------------------------------------------- element types */

int it_is_int(int et) { return et >= IT_I1 && et <= IT_I64; }
int it_int_width(int et)
{
    static const int w[] = {1, 4, 8, 16, 32, 64};
    return it_is_int(et) ? w[et - IT_I1] : 0;
}
int it_is_float(int et) { return et >= 0 && et < ER_FMT_COUNT; }
int64_t it_numel(const it_type *t)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}
int it_elem_bytes(int et)
{
    if (it_is_float(et)) return et == ER_FMT_F4E2M1FN ? 0 : er_fmt_get(et).width <= 8 ? 1 : (er_fmt_get(et).width + 7) / 8;
    switch (et) {
    case IT_I1: case IT_I8: return 1;
    case IT_I16: return 2;
    case IT_I32: return 4;
    case IT_I64: case IT_PTR: return 8;
    default: return 0;
    }
}
const char *it_et_name(int et, int pet)
{
    static const char *in[] = {"i1", "i4", "i8", "i16", "i32", "i64"};
    (void)pet;
    if (it_is_float(et)) return er_format_name(et);
    if (it_is_int(et)) return in[et - IT_I1];
    if (et == IT_PTR) return "ptr";
    return "?";
}

static int it_et_from_name(const char *s, int *et)
{
    static const char *in[] = {"i1", "i4", "i8", "i16", "i32", "i64"};
    static const char *fl[] = {"f64", "f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN"};
    static const int fi[] = {ER_FMT_F64, ER_FMT_F32, ER_FMT_TF32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_F8E4M3FN,
                             ER_FMT_F8E5M2, ER_FMT_F8E8M0FNU, ER_FMT_F4E2M1FN};
    size_t i;
    for (i = 0; i < 6; i++)
        if (!strcmp(s, in[i])) { *et = IT_I1 + (int)i; return 1; }
    for (i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (!strcmp(s, fl[i])) { *et = fi[i]; return 1; }
    /* the other float formats of exactref's table, which MLIR knows but the dialect does not name */
    if (!strcmp(s, "f8E4M3FNUZ")) { *et = ER_FMT_F8E4M3FNUZ; return 1; }
    if (!strcmp(s, "f8E5M2FNUZ")) { *et = ER_FMT_F8E5M2FNUZ; return 1; }
    if (!strcmp(s, "f6E2M3FN")) { *et = ER_FMT_F6E2M3FN; return 1; }
    if (!strcmp(s, "f6E3M2FN")) { *et = ER_FMT_F6E3M2FN; return 1; }
    /* Tile IR 13.4's scale format UE5M3 (FP4 block-scaled mma) */
    if (!strcmp(s, "f8E5M3FNU")) { *et = ER_FMT_F8E5M3FNU; return 1; }
    /* MLIR float types exactref does not model */
    if (er_format_is_unmodelled(s) || !strcmp(s, "f80") || !strcmp(s, "f128") || !strcmp(s, "f8E3M4") ||
        !strcmp(s, "f8E4M3") || !strcmp(s, "f8E4M3B11FNUZ") || !strcmp(s, "f8E5M2FNUZ_") || !strcmp(s, "tf32_")) {
        *et = IT_UNMODELLED;
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- lexer */

enum { TK_EOF, TK_WORD, TK_VAL, TK_SYM, TK_ATTR, TK_STR, TK_ARROW, TK_PUNCT };

typedef struct tok {
    int k;
    const char *s;
    int n;
    int line, col;
    int grp; /* %x#n: n; else -1 */
} tok;

typedef struct P {
    const char *text;
    size_t len;
    const char *file;
    tok *t;
    int nt, cap, i;
    char *msg;
    size_t msz;
    jmp_buf jb;
    er_interp_module *m;
    /* allocations owned by the module */
    void **allocs;
    int nallocs, capallocs;
    /* the symbol table of the entry being parsed: a stack (a region's names are popped at its end)
     * hashed by name; each bucket's chain runs from the newest name down, so popping the stack's top
     * always pops the head of its chain */
    struct sym { char name[64]; int id; int count; int line, col; unsigned hash; int next; } *syms;
    int nsyms, capsyms;
    int *bucket; /* head of each chain (-1: none) */
    unsigned nbucket; /* a power of two */
    it_entry *e;
    int capvty;
    /* nesting: regions open now, and per level the scratch space of an op being parsed (kept off the
     * C stack, so that the stack each level takes is small and bounded) */
    int depth;
    struct scratch *scr[IT_MAX_DEPTH + 2];
    int oom; /* the error is out of memory (ER_ENOMEM) */
    /* interned type sequences: ops, regions and values with equal types share one copy, so that the
     * module's memory follows its text (a type is some 400 bytes, an op's text some 40) */
    struct tseq { unsigned hash; int n; it_type *t; } *tpool;
    unsigned ntpool, captpool; /* captpool: a power of two */
} P;

static void perr(P *p, const tok *t, const char *fmt, ...)
{
    va_list ap;
    int n = 0;
    if (p->msg && p->msz) {
        n = snprintf(p->msg, p->msz, "%s:%d:%d: ", p->file, t ? t->line : 0, t ? t->col : 0);
        if (n < 0) n = 0;
        if ((size_t)n < p->msz) {
            va_start(ap, fmt);
            vsnprintf(p->msg + n, p->msz - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    longjmp(p->jb, 1);
}

/* Out of memory while parsing: ER_ENOMEM, the file named. */
static void poom(P *p)
{
    if (p->msg && p->msz) snprintf(p->msg, p->msz, "%s: out of memory while parsing the module", p->file);
    p->oom = 1;
    longjmp(p->jb, 1);
}

static void *palloc(P *p, size_t n)
{
    void *q;
    if (n == 0) n = 1;
    q = calloc(1, n);
    if (!q) poom(p);
    if (p->nallocs == p->capallocs) {
        int nc = p->capallocs ? p->capallocs * 2 : 64;
        void **na = (void **)realloc(p->allocs, (size_t)nc * sizeof *na);
        if (!na) { free(q); poom(p); }
        p->allocs = na;
        p->capallocs = nc;
    }
    p->allocs[p->nallocs++] = q;
    return q;
}

static int is_word_char(int c) { return isalnum(c) || c == '_' || c == '.' || c == '$' || c == '?'; }

static void lex(P *p)
{
    const char *s = p->text, *end = p->text + p->len;
    int line = 1, col = 1;
    while (1) {
        tok t;
        const char *st;
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n' || (*s == '/' && s + 1 < end && s[1] == '/'))) {
            if (*s == '/') {
                while (s < end && *s != '\n') { s++; col++; }
                continue;
            }
            if (*s == '\n') { line++; col = 1; } else col++;
            s++;
        }
        memset(&t, 0, sizeof t);
        t.line = line;
        t.col = col;
        t.grp = -1;
        st = s;
        if (s >= end) {
            t.k = TK_EOF;
            t.s = s;
        } else if (*s == '%' || *s == '@' || *s == '#' || *s == '^') {
            int c0 = *s;
            s++;
            if (c0 == '@' && s < end && *s == '"') { /* @"quoted symbol" */
                s++;
                while (s < end && *s != '"' && *s != '\n') s++;
                if (s >= end || *s != '"') { t.s = st; t.n = 1; perr(p, &t, "unterminated symbol name"); }
                s++;
            } else {
                while (s < end && (is_word_char((unsigned char)*s) || *s == '-') && *s != '?') s++;
            }
            if (s == st + 1) { t.s = st; t.n = 1; perr(p, &t, "expected a name after '%c'", c0); }
            t.k = c0 == '%' ? TK_VAL : c0 == '@' ? TK_SYM : TK_ATTR;
            t.s = st + 1;
            t.n = (int)(s - st - 1);
            if (c0 == '%' && s < end && *s == '#' && s + 1 < end && isdigit((unsigned char)s[1])) {
                long g = 0;
                s++;
                while (s < end && isdigit((unsigned char)*s)) {
                    g = g * 10 + (*s - '0');
                    if (g > 1000000) { perr(p, &t, "result number too large"); }
                    s++;
                }
                t.grp = (int)g;
            }
        } else if (*s == '"') {
            s++;
            while (s < end && *s != '"') {
                if (*s == '\\' && s + 1 < end) s++;
                if (*s == '\n') break;
                s++;
            }
            if (s >= end || *s != '"') { t.s = st; t.n = 1; perr(p, &t, "unterminated string"); }
            s++;
            t.k = TK_STR;
            t.s = st + 1;
            t.n = (int)(s - st - 2);
        } else if (*s == '-' && s + 1 < end && s[1] == '>') {
            t.k = TK_ARROW;
            t.s = s;
            t.n = 2;
            s += 2;
        } else if (*s == '!' || is_word_char((unsigned char)*s)) {
            int num = isdigit((unsigned char)*s);
            s++;
            while (s < end) {
                if (is_word_char((unsigned char)*s)) { s++; continue; }
                /* a decimal exponent's sign: 1.0e-05 (not in 0x.. hex words, not in shapes) */
                if (num && (*s == '+' || *s == '-') && (s[-1] == 'e' || s[-1] == 'E') && !memchr(st, 'x', (size_t)(s - st)) &&
                    s + 1 < end && isdigit((unsigned char)s[1])) { s++; continue; }
                break;
            }
            t.k = TK_WORD;
            t.s = st;
            t.n = (int)(s - st);
        } else if (strchr("()[]{}<>,:=*-+", *s)) {
            t.k = TK_PUNCT;
            t.s = s;
            t.n = 1;
            s++;
        } else {
            t.s = s;
            t.n = 1;
            perr(p, &t, "unexpected character '%c'", isprint((unsigned char)*s) ? *s : '?');
        }
        col += (int)(s - st);
        if (p->nt == p->cap) {
            int nc = p->cap ? p->cap * 2 : 256;
            tok *nt = (tok *)realloc(p->t, (size_t)nc * sizeof *nt);
            if (!nt) poom(p);
            p->t = nt;
            p->cap = nc;
        }
        p->t[p->nt++] = t;
        if (t.k == TK_EOF) break;
    }
}

/* ---------------------------------------------------------------- token helpers */

/* The token at the cursor; past the end, the end (a skip that stepped over it stays there). */
static tok *cur(P *p) { return &p->t[p->i < p->nt ? p->i : p->nt - 1]; }
static tok *peekn(P *p, int k) { return p->i + k < p->nt ? &p->t[p->i + k] : &p->t[p->nt - 1]; }
static int is_p(const tok *t, char c) { return t->k == TK_PUNCT && t->s[0] == c; }
static int is_w(const tok *t, const char *w)
{
    size_t n = strlen(w);
    return t->k == TK_WORD && (size_t)t->n == n && !memcmp(t->s, w, n);
}
static void tokdesc(const tok *t, char *buf, size_t n)
{
    if (t->k == TK_EOF) snprintf(buf, n, "end of input");
    else snprintf(buf, n, "'%s%.*s'", t->k == TK_VAL ? "%" : t->k == TK_SYM ? "@" : t->k == TK_ATTR ? "#" : "", t->n > 40 ? 40 : t->n, t->s);
}
static void expect_p(P *p, char c, const char *what)
{
    char d[64];
    if (!is_p(cur(p), c)) {
        tokdesc(cur(p), d, sizeof d);
        perr(p, cur(p), "expected '%c'%s%s, found %s", c, what ? " " : "", what ? what : "", d);
    }
    p->i++;
}
static int accept_p(P *p, char c)
{
    if (is_p(cur(p), c)) { p->i++; return 1; }
    return 0;
}
static int accept_w(P *p, const char *w)
{
    if (is_w(cur(p), w)) { p->i++; return 1; }
    return 0;
}
static void expect_w(P *p, const char *w)
{
    char d[64];
    if (!accept_w(p, w)) {
        tokdesc(cur(p), d, sizeof d);
        perr(p, cur(p), "expected '%s', found %s", w, d);
    }
}
static void tokstr(const tok *t, char *buf, size_t n)
{
    size_t k = (size_t)t->n < n - 1 ? (size_t)t->n : n - 1;
    memcpy(buf, t->s, k);
    buf[k] = 0;
}
/* A word without a leading "!cuda_tile." or "cuda_tile." */
static void wordname(const tok *t, char *buf, size_t n)
{
    tokstr(t, buf, n);
    if (!strncmp(buf, "!cuda_tile.", 11)) memmove(buf, buf + 11, strlen(buf + 11) + 1);
    else if (!strncmp(buf, "cuda_tile.", 10)) memmove(buf, buf + 10, strlen(buf + 10) + 1);
}

static int parse_int_word(const tok *t, int neg, int64_t *out, uint64_t *uout)
{
    char buf[80];
    char *e;
    unsigned long long u;
    tokstr(t, buf, sizeof buf);
    if (t->k != TK_WORD || !isdigit((unsigned char)buf[0])) return 0;
    errno = 0;
    u = strtoull(buf, &e, 0);
    if (*e || errno) return 0;
    if (buf[0] == '0' && buf[1] && buf[1] != 'x' && buf[1] != 'X') {
        /* MLIR integers are decimal or hex: a leading zero is decimal */
        errno = 0;
        u = strtoull(buf, &e, 10);
        if (*e || errno) return 0;
    }
    if (uout) *uout = u;
    if (neg) {
        if (u > (unsigned long long)INT64_MAX + 1u) return 0;
        *out = u == (unsigned long long)INT64_MAX + 1u ? INT64_MIN : -(int64_t)u;
    } else {
        *out = (int64_t)u;
    }
    return 1;
}

static int64_t expect_int(P *p, const char *what)
{
    int neg = accept_p(p, '-');
    int64_t v;
    char d[64];
    if (!parse_int_word(cur(p), neg, &v, NULL)) {
        tokdesc(cur(p), d, sizeof d);
        perr(p, cur(p), "expected %s (an integer), found %s", what, d);
    }
    p->i++;
    return v;
}

/* ---------------------------------------------------------------- types */

static void parse_type(P *p, it_type *t);

/* Splits a dims word "4x8xf32" / "?x32xf16" / "4x" into dims and the element's name (may be empty). */
static void parse_dims_word(P *p, const tok *w, int64_t *dims, int *rank, char *ename, size_t en, int allow_dyn)
{
    char buf[160];
    char *s = buf, *x;
    *rank = 0;
    ename[0] = 0;
    tokstr(w, buf, sizeof buf);
    while ((x = strchr(s, 'x')) != NULL && (isdigit((unsigned char)s[0]) || s[0] == '?')) {
        *x = 0;
        if (*rank >= IT_MAXRANK) perr(p, w, "more than %d dimensions", IT_MAXRANK);
        if (!strcmp(s, "?")) {
            if (!allow_dyn) perr(p, w, "a dynamic dimension '?' is not allowed here");
            dims[(*rank)++] = -1;
        } else {
            char *e;
            long long v;
            errno = 0;
            v = strtoll(s, &e, 10);
            if (*e || errno || v <= 0 || v > (1LL << 40)) perr(p, w, "expected a positive dimension, found '%s'", s);
            dims[(*rank)++] = v;
        }
        s = x + 1;
    }
    snprintf(ename, en, "%.60s", s);
    if (!strncmp(ename, "!cuda_tile.", 11)) memmove(ename, ename + 11, strlen(ename + 11) + 1);
}

static void parse_elem(P *p, const tok *at, const char *name, it_type *t)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%s", name);
    if (!nm[0]) { /* the element is the next word: 4x!cuda_tile.ptr<..> */
        tok *w = cur(p);
        if (w->k != TK_WORD) perr(p, w, "expected an element type");
        wordname(w, nm, sizeof nm);
        at = w;
        p->i++;
    }
    if (!strcmp(nm, "ptr")) {
        it_type pt;
        char en[64];
        tok *w;
        expect_p(p, '<', "after 'ptr'");
        w = cur(p);
        if (w->k != TK_WORD) perr(p, w, "expected the pointee element type");
        wordname(w, en, sizeof en);
        memset(&pt, 0, sizeof pt);
        if (!it_et_from_name(en, &pt.et)) perr(p, w, "unknown element type '%s'", en);
        if (pt.et == IT_UNMODELLED) snprintf(t->uname, sizeof t->uname, "%s", en);
        p->i++;
        expect_p(p, '>', "closing ptr<...>");
        t->et = IT_PTR;
        t->pet = pt.et;
        return;
    }
    if (!it_et_from_name(nm, &t->et)) perr(p, at, "unknown element type '%s'", nm);
    if (t->et == IT_UNMODELLED) snprintf(t->uname, sizeof t->uname, "%s", nm);
}

static void parse_int_list(P *p, int64_t *v, int *n, int max, int allow_dyn, const char *what)
{
    *n = 0;
    expect_p(p, '[', what);
    if (accept_p(p, ']')) return;
    do {
        if (*n >= max) perr(p, cur(p), "too many entries in %s", what);
        if (allow_dyn && is_w(cur(p), "?")) { p->i++; v[(*n)++] = -1; continue; }
        v[(*n)++] = expect_int(p, what);
    } while (accept_p(p, ','));
    expect_p(p, ']', what);
}

static void parse_tv_body(P *p, it_type *t)
{
    /* <SHAPE x ET [, strides=[...]]> */
    tok *w = cur(p);
    char en[64];
    int ns = 0, i;
    if (w->k != TK_WORD) perr(p, w, "expected the tensor_view's shape and element type");
    p->i++;
    parse_dims_word(p, w, t->shape, &t->rank, en, sizeof en, 1);
    parse_elem(p, w, en, t);
    for (i = 0; i < t->rank; i++) t->strides[i] = -1;
    if (accept_p(p, ',')) {
        expect_w(p, "strides");
        expect_p(p, '=', "after 'strides'");
        parse_int_list(p, t->strides, &ns, IT_MAXRANK, 1, "strides");
        if (ns != t->rank) perr(p, w, "tensor_view has %d dimensions but %d strides", t->rank, ns);
        for (i = 0; i < ns; i++)
            if (t->strides[i] == 0 || t->strides[i] < -1) perr(p, w, "tensor_view strides must be positive");
    } else if (t->rank > 0) {
        perr(p, cur(p), "expected ', strides=[...]' in a tensor_view of rank %d", t->rank);
    }
}

static void parse_type(P *p, it_type *t)
{
    tok *w = cur(p);
    char nm[64];
    memset(t, 0, sizeof *t);
    if (w->k != TK_WORD) {
        char d[64];
        tokdesc(w, d, sizeof d);
        perr(p, w, "expected a type, found %s", d);
    }
    wordname(w, nm, sizeof nm);
    p->i++;
    if (!strcmp(nm, "token")) {
        t->kind = IT_TOKEN;
        return;
    }
    if (!strcmp(nm, "tile")) {
        tok *d;
        char en[64];
        int i;
        int64_t n = 1;
        t->kind = IT_TILE;
        expect_p(p, '<', "after 'tile'");
        d = cur(p);
        if (d->k != TK_WORD) perr(p, d, "expected the tile's shape and element type");
        p->i++;
        parse_dims_word(p, d, t->shape, &t->rank, en, sizeof en, 0);
        parse_elem(p, d, en, t);
        for (i = 0; i < t->rank; i++) {
            if (t->shape[i] & (t->shape[i] - 1)) perr(p, d, "tile dimension %lld is not a power of two", (long long)t->shape[i]);
            n *= t->shape[i];
            if (n > (1 << 24)) perr(p, d, "a tile holds at most 16777216 elements");
        }
        expect_p(p, '>', "closing tile<...>");
        return;
    }
    if (!strcmp(nm, "tensor_view")) {
        t->kind = IT_TV;
        expect_p(p, '<', "after 'tensor_view'");
        parse_tv_body(p, t);
        expect_p(p, '>', "closing tensor_view<...>");
        return;
    }
    if (!strcmp(nm, "partition_view") || !strcmp(nm, "strided_view") || !strcmp(nm, "gather_scatter_view")) {
        /* partition_view<tile=(..), [padding_value = P,] tensor_view<..> [, dim_map=[..]]>; 13.3's
         * strided_view<tile=(..), traversal_strides=[..], tensor_view<..>> and
         * gather_scatter_view<tile=(..), tensor_view<..>, sparse_dim=N>: the attributes in any order */
        it_type tv;
        tok *d, *vw = w;
        char en[64];
        const char *vname = nm[0] == 'p' ? "partition_view" : nm[0] == 's' ? "strided_view" : "gather_scatter_view";
        int i, seen[IT_MAXRANK] = {0}, have_tv = 0, have_steps = 0, have_sparse = 0;
        t->kind = IT_PV;
        t->vflav = nm[0] == 'p' ? IT_VIEW_PARTITION : nm[0] == 's' ? IT_VIEW_STRIDED : IT_VIEW_GATHER;
        expect_p(p, '<', "after the view's name");
        expect_w(p, "tile");
        expect_p(p, '=', "after 'tile'");
        expect_p(p, '(', "before the view's tile shape");
        d = cur(p);
        if (d->k != TK_WORD) perr(p, d, "expected the view's tile shape");
        p->i++;
        {
            char buf[160];
            tokstr(d, buf, sizeof buf);
            strcat(buf, "x"); /* "128x64" -> dims 128, 64 and an empty element */
            {
                tok dd = *d;
                dd.s = buf;
                dd.n = (int)strlen(buf);
                parse_dims_word(p, &dd, t->shape, &t->rank, en, sizeof en, 0);
            }
            if (en[0]) perr(p, d, "expected the view's tile shape, found '%s'", buf);
        }
        for (i = 0; i < t->rank; i++)
            if (t->shape[i] & (t->shape[i] - 1)) perr(p, d, "view tile dimension %lld is not a power of two", (long long)t->shape[i]);
        expect_p(p, ')', "after the view's tile shape");
        t->padding = IT_PAD_NONE;
        for (i = 0; i < t->rank; i++) {
            t->dim_map[i] = i;
            t->tstep[i] = t->shape[i];
        }
        while (accept_p(p, ',')) {
            tok *a = cur(p);
            char an[64];
            wordname(a, an, sizeof an);
            if (a->k != TK_WORD) perr(p, a, "expected an attribute of the %s", vname);
            p->i++;
            if (!strcmp(an, "padding_value")) {
                static const char *pn[] = {"zero", "neg_zero", "nan", "pos_inf", "neg_inf"};
                int k, found = 0;
                expect_p(p, '=', "after 'padding_value'");
                for (k = 0; k < 5; k++)
                    if (accept_w(p, pn[k])) { t->padding = k + 1; found = 1; break; }
                if (!found) perr(p, cur(p), "expected a padding value (zero, neg_zero, nan, pos_inf, neg_inf)");
            } else if (!strcmp(an, "tensor_view") && !have_tv) {
                memset(&tv, 0, sizeof tv);
                expect_p(p, '<', "after 'tensor_view'");
                parse_tv_body(p, &tv);
                expect_p(p, '>', "closing tensor_view<...>");
                t->et = tv.et;
                t->pet = tv.pet;
                memcpy(t->uname, tv.uname, sizeof t->uname);
                t->tv_rank = tv.rank;
                memcpy(t->tv_shape, tv.shape, sizeof tv.shape);
                memcpy(t->tv_strides, tv.strides, sizeof tv.strides);
                if (tv.rank != t->rank) perr(p, a, "the view's tile has rank %d but its tensor_view rank %d", t->rank, tv.rank);
                have_tv = 1;
            } else if (!strcmp(an, "dim_map") && t->vflav == IT_VIEW_PARTITION) {
                int64_t dm[IT_MAXRANK];
                int nd;
                expect_p(p, '=', "after 'dim_map'");
                parse_int_list(p, dm, &nd, IT_MAXRANK, 0, "dim_map");
                if (nd != t->rank) perr(p, a, "dim_map has %d entries for rank %d", nd, t->rank);
                for (i = 0; i < nd; i++) {
                    if (dm[i] < 0 || dm[i] >= nd || seen[dm[i]]) perr(p, a, "dim_map is not a permutation");
                    seen[dm[i]] = 1;
                    t->dim_map[i] = (int)dm[i];
                }
            } else if (!strcmp(an, "traversal_strides") && t->vflav == IT_VIEW_STRIDED) {
                int nd;
                expect_p(p, '=', "after 'traversal_strides'");
                parse_int_list(p, t->tstep, &nd, IT_MAXRANK, 0, "traversal_strides");
                if (nd != t->rank) perr(p, a, "traversal_strides has %d entries for rank %d", nd, t->rank);
                for (i = 0; i < nd; i++)
                    if (t->tstep[i] <= 0) perr(p, a, "traversal strides must be positive");
                have_steps = 1;
            } else if (!strcmp(an, "sparse_dim") && t->vflav == IT_VIEW_GATHER) {
                expect_p(p, '=', "after 'sparse_dim'");
                t->sparse = (int)expect_int(p, "the sparse dimension");
                if (t->sparse < 0 || t->sparse >= t->rank) perr(p, a, "sparse_dim %d is not a dimension of rank %d", t->sparse, t->rank);
                have_sparse = 1;
            } else {
                perr(p, a, "unexpected '%s' in the %s", an, vname);
            }
        }
        if (!have_tv) perr(p, vw, "the %s has no tensor_view<...>", vname);
        if (t->vflav == IT_VIEW_STRIDED && !have_steps) perr(p, vw, "the strided_view has no traversal_strides");
        if (t->vflav == IT_VIEW_GATHER && !have_sparse) perr(p, vw, "the gather_scatter_view has no sparse_dim");
        expect_p(p, '>', "closing the view's type");
        return;
    }
    perr(p, w, "expected a type (tile<...>, token, tensor_view<...>, partition_view<...>, strided_view<...>, gather_scatter_view<...>), found '%s'", nm);
}

static int type_eq(const it_type *a, const it_type *b)
{
    int i;
    if (a->kind != b->kind || a->et != b->et || a->pet != b->pet || a->rank != b->rank) return 0;
    for (i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    if (a->kind == IT_PV) {
        if (a->vflav != b->vflav || a->sparse != b->sparse) return 0;
        for (i = 0; i < a->rank; i++)
            if (a->tstep[i] != b->tstep[i]) return 0;
    }
    if (a->kind == IT_PV || a->kind == IT_TV) {
        if (a->kind == IT_TV)
            for (i = 0; i < a->rank; i++)
                if (a->strides[i] != b->strides[i]) return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- literals */

/* A literal of element type et at token position: into its pattern. */
static uint64_t parse_literal(P *p, int et)
{
    int neg = accept_p(p, '-');
    tok *t = cur(p);
    char buf[96];
    if (t->k != TK_WORD) perr(p, t, "expected a literal");
    tokstr(t, buf, sizeof buf);
    p->i++;
    if (it_is_int(et)) {
        int w = it_int_width(et);
        int64_t v;
        uint64_t u;
        if (et == IT_I1 && !neg && (!strcmp(buf, "true") || !strcmp(buf, "false"))) return !strcmp(buf, "true");
        if (!parse_int_word(t, neg, &v, &u)) perr(p, t, "expected an integer literal, found '%s'", buf);
        if (w < 64) {
            /* the union of the signed and the unsigned range, then truncated */
            if (neg ? v < -((int64_t)1 << (w - 1)) : u > ((UINT64_C(1) << w) - 1u))
                perr(p, t, "integer literal %s%s does not fit i%d", neg ? "-" : "", buf, w);
            if (w == 1 && neg && v == -1) return 1;
        }
        return (neg ? (uint64_t)v : u) & (w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u);
    }
    if (it_is_float(et)) {
        er_fmt d = er_fmt_get(et);
        int width = et == ER_FMT_TF32 ? 19 : d.width;
        if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
            char *e;
            unsigned long long u;
            if (neg) perr(p, t, "a hexadecimal float literal (a bit pattern) cannot be negated");
            errno = 0;
            u = strtoull(buf, &e, 16);
            if (*e || errno || (width < 64 && (u >> width) != 0)) perr(p, t, "hexadecimal literal %s does not fit %s's %d bits", buf, er_format_name(et), width);
            if (et == ER_FMT_TF32) u <<= 13; /* tf32's 19-bit pattern sits at the top of its 32-bit storage */
            return u;
        }
        if (!strchr(buf, '.') && !strchr(buf, 'e') && !strchr(buf, 'E') && strcmp(buf, "inf") && strcmp(buf, "nan"))
            perr(p, t, "a float literal needs a decimal point or an exponent (found '%s')", buf);
        {
            char *e;
            double x;
            uint64_t b;
            errno = 0;
            x = strtod(buf, &e);
            if (*e || !isdigit((unsigned char)buf[0])) perr(p, t, "expected a float literal, found '%s'", buf);
            if (neg) x = -x;
            memcpy(&b, &x, sizeof b);
            /* MLIR reads the literal as binary64, then converts it into the type to nearest even */
            return er_convert(ER_FMT_F64, et, b, ER_RND_NEAREST_EVEN, 0u).bits;
        }
    }
    perr(p, t, "literals of this element type are not supported");
    return 0;
}

/* Nested dense elements: fills data in row-major order, checking the shape. */
static void parse_dense(P *p, const it_type *ty, int dim, uint64_t *data, int64_t *pos)
{
    int64_t k = 0;
    expect_p(p, '[', "in a dense literal");
    if (dim >= ty->rank) perr(p, cur(p), "the literal has more nesting levels than the tile's rank %d", ty->rank);
    if (!is_p(cur(p), ']')) {
        do {
            if (k >= ty->shape[dim]) perr(p, cur(p), "more than %lld elements along dimension %d", (long long)ty->shape[dim], dim);
            if (is_p(cur(p), '[')) {
                parse_dense(p, ty, dim + 1, data, pos);
            } else {
                if (dim != ty->rank - 1) perr(p, cur(p), "expected '[' (dimension %d of %d)", dim + 1, ty->rank);
                data[(*pos)++] = parse_literal(p, ty->et);
            }
            k++;
        } while (accept_p(p, ','));
    }
    if (k != ty->shape[dim]) perr(p, cur(p), "dimension %d has %lld elements, the type says %lld", dim, (long long)k, (long long)ty->shape[dim]);
    expect_p(p, ']', "closing a dense literal");
}

/* <ET : value | [..]> : type  -> patterns of the type's shape; a splat (one value for the whole shape)
 * is kept as its one pattern, *splat set, so that memory follows the text, not the tile's size */
static void parse_const_attr(P *p, int *cet, uint64_t **data, int64_t *n, it_type *ty, tok **at, int *splat)
{
    it_type et;
    tok *t0;
    int lit_start;
    memset(&et, 0, sizeof et);
    expect_p(p, '<', "starting the constant's value");
    t0 = cur(p);
    *at = t0;
    {
        char nm[64];
        if (t0->k != TK_WORD) perr(p, t0, "expected the constant's element type");
        wordname(t0, nm, sizeof nm);
        p->i++;
        if (!it_et_from_name(nm, &et.et) || et.et == IT_UNMODELLED) perr(p, t0, "constant of unsupported element type '%s'", nm);
    }
    expect_p(p, ':', "after the constant's element type");
    lit_start = p->i;
    /* skip to the closing '>' to read the type first */
    {
        int depth = 0;
        while (!(depth == 0 && is_p(cur(p), '>'))) {
            if (cur(p)->k == TK_EOF) perr(p, cur(p), "unterminated constant");
            if (is_p(cur(p), '[')) depth++;
            if (is_p(cur(p), ']')) depth--;
            p->i++;
        }
        p->i++;
    }
    expect_p(p, ':', "before the constant's type");
    parse_type(p, ty);
    if (ty->kind != IT_TILE) perr(p, t0, "a constant's type must be a tile");
    if (ty->et != et.et) perr(p, t0, "the constant's element type %s is not its tile's %s", it_et_name(et.et, 0), it_et_name(ty->et, 0));
    *cet = et.et;
    *n = it_numel(ty);
    {
        int save = p->i;
        p->i = lit_start;
        if (is_p(cur(p), '[')) {
            int64_t pos = 0;
            if (ty->rank == 0) perr(p, cur(p), "a 0-d tile takes a single value, not a list");
            /* a dense literal writes at least one token per element: its size follows the text */
            *data = (uint64_t *)palloc(p, (size_t)*n * sizeof(uint64_t));
            *splat = 0;
            parse_dense(p, ty, 0, *data, &pos);
        } else {
            *data = (uint64_t *)palloc(p, sizeof(uint64_t));
            *splat = 1;
            (*data)[0] = parse_literal(p, ty->et);
        }
        expect_p(p, '>', "after the constant's value");
        p->i = save;
    }
}

/* ---------------------------------------------------------------- interned types */

static unsigned seq_hash(const it_type *t, int n)
{
    const unsigned char *b = (const unsigned char *)t;
    size_t i, len = (size_t)n * sizeof *t;
    unsigned h = 2166136261u ^ (unsigned)n;
    for (i = 0; i < len; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

/* The module's copy of the n types at t (one shared copy per distinct sequence; never written). */
static it_type *intern(P *p, const it_type *t, int n)
{
    unsigned h = seq_hash(t, n), k;
    struct tseq *e;
    if (2u * (p->ntpool + 1u) > p->captpool) {
        unsigned nc = p->captpool ? p->captpool * 2u : 256u, j;
        struct tseq *np = (struct tseq *)calloc(nc, sizeof *np);
        if (!np) poom(p);
        for (j = 0; j < p->captpool; j++)
            if (p->tpool[j].t) {
                for (k = p->tpool[j].hash & (nc - 1); np[k].t; k = (k + 1) & (nc - 1)) {}
                np[k] = p->tpool[j];
            }
        free(p->tpool);
        p->tpool = np;
        p->captpool = nc;
    }
    for (k = h & (p->captpool - 1); (e = &p->tpool[k])->t; k = (k + 1) & (p->captpool - 1))
        if (e->hash == h && e->n == n && !memcmp(e->t, t, (size_t)n * sizeof *t)) return e->t;
    e->t = (it_type *)palloc(p, (size_t)(n ? n : 1) * sizeof *t);
    if (n) memcpy(e->t, t, (size_t)n * sizeof *t);
    e->hash = h;
    e->n = n;
    p->ntpool++;
    return e->t;
}

/* ---------------------------------------------------------------- symbols */

static int new_value(P *p, const it_type *ty)
{
    it_entry *e = p->e;
    if (e->nvalues == p->capvty) {
        int nc = p->capvty ? p->capvty * 2 : 64;
        const it_type **n = (const it_type **)realloc((void *)e->vty, (size_t)nc * sizeof *n);
        if (!n) poom(p);
        e->vty = n;
        p->capvty = nc;
    }
    if (ty) e->vty[e->nvalues] = intern(p, ty, 1);
    else {
        it_type z;
        memset(&z, 0, sizeof z);
        e->vty[e->nvalues] = intern(p, &z, 1);
    }
    return e->nvalues++;
}

static unsigned name_hash(const char *s, size_t n)
{
    unsigned h = 2166136261u; /* FNV-1a */
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* The visible symbol of that name, or -1. */
static int find_sym(const P *p, const char *s, size_t n, unsigned h)
{
    int i;
    if (!p->nbucket) return -1;
    for (i = p->bucket[h & (p->nbucket - 1)]; i >= 0; i = p->syms[i].next)
        if (p->syms[i].hash == h && strlen(p->syms[i].name) == n && !memcmp(p->syms[i].name, s, n)) return i;
    return -1;
}

/* Rebuilds the chains for nb buckets (pushing in stack order keeps every chain newest first). */
static void rehash(P *p, unsigned nb)
{
    int *b = (int *)malloc((size_t)nb * sizeof *b);
    int i;
    if (!b) poom(p);
    for (i = 0; i < (int)nb; i++) b[i] = -1;
    for (i = 0; i < p->nsyms; i++) {
        unsigned k = p->syms[i].hash & (nb - 1);
        p->syms[i].next = b[k];
        b[k] = i;
    }
    free(p->bucket);
    p->bucket = b;
    p->nbucket = nb;
}

/* Ends a region's scope: its names, the newest on the stack, are popped. */
static void pop_syms(P *p, int mark)
{
    while (p->nsyms > mark) {
        const struct sym *s = &p->syms[--p->nsyms];
        p->bucket[s->hash & (p->nbucket - 1)] = s->next;
    }
}

/* Defines a name; one already visible is refused (MLIR's rule: no redefinition, no shadowing of an
 * enclosing region's name; a sibling region may reuse a name). */
static void def_name(P *p, const tok *t, int id, int count)
{
    struct sym *s;
    unsigned h;
    int prev;
    if (t->n >= 63) perr(p, t, "name too long");
    h = name_hash(t->s, (size_t)t->n);
    prev = find_sym(p, t->s, (size_t)t->n, h);
    if (prev >= 0)
        perr(p, t, "redefinition of %%%.*s (defined at %d:%d)", t->n, t->s, p->syms[prev].line, p->syms[prev].col);
    if (p->nsyms == p->capsyms) {
        int nc = p->capsyms ? p->capsyms * 2 : 64;
        struct sym *n = (struct sym *)realloc(p->syms, (size_t)nc * sizeof *n);
        if (!n) poom(p);
        p->syms = n;
        p->capsyms = nc;
    }
    if ((unsigned)p->nsyms + 1u > p->nbucket / 2u) rehash(p, p->nbucket ? p->nbucket * 2u : 256u);
    s = &p->syms[p->nsyms];
    tokstr(t, s->name, sizeof s->name);
    s->id = id;
    s->count = count;
    s->line = t->line;
    s->col = t->col;
    s->hash = h;
    s->next = p->bucket[h & (p->nbucket - 1)];
    p->bucket[h & (p->nbucket - 1)] = p->nsyms;
    p->nsyms++;
}

static int use_value(P *p, const tok *t)
{
    int i;
    if (t->k != TK_VAL) {
        char d[64];
        tokdesc(t, d, sizeof d);
        perr(p, t, "expected a value (%%name), found %s", d);
    }
    i = find_sym(p, t->s, (size_t)t->n, name_hash(t->s, (size_t)t->n));
    if (i >= 0) {
        int g = t->grp < 0 ? 0 : t->grp;
        const char *nm = p->syms[i].name;
        if (g >= p->syms[i].count) perr(p, t, "%%%s has %d results; #%d does not exist", nm, p->syms[i].count, g);
        if (t->grp < 0 && p->syms[i].count > 1) perr(p, t, "%%%s has %d results: use %%%s#N", nm, p->syms[i].count, nm);
        return p->syms[i].id + g;
    }
    perr(p, t, "use of undefined value %%%.*s", t->n > 63 ? 63 : t->n, t->s);
    return -1;
}

/* ---------------------------------------------------------------- operations */

static const struct { const char *name; int code; } op_names[] = {
    {"return", OP_RETURN}, {"constant", OP_CONSTANT}, {"get_global", OP_GET_GLOBAL},
    {"get_tile_block_id", OP_BLOCK_ID}, {"get_num_tile_blocks", OP_NUM_BLOCKS},
    {"make_tensor_view", OP_MAKE_TV}, {"make_partition_view", OP_MAKE_PV}, {"make_strided_view", OP_MAKE_PV},
    {"make_gather_scatter_view", OP_MAKE_PV},
    {"get_index_space_shape", OP_INDEX_SHAPE}, {"load_view_tko", OP_LOAD_VIEW}, {"store_view_tko", OP_STORE_VIEW},
    {"load_ptr_tko", OP_LOAD_PTR}, {"store_ptr_tko", OP_STORE_PTR}, {"offset", OP_OFFSET},
    {"ptr_to_int", OP_PTR_TO_INT}, {"int_to_ptr", OP_INT_TO_PTR}, {"make_token", OP_MAKE_TOKEN},
    {"join_tokens", OP_JOIN_TOKENS}, {"for", OP_FOR}, {"continue", OP_CONTINUE}, {"loop", OP_LOOP},
    {"break", OP_BREAK}, {"if", OP_IF}, {"yield", OP_YIELD}, {"broadcast", OP_BROADCAST},
    {"reshape", OP_RESHAPE}, {"permute", OP_PERMUTE}, {"extract", OP_EXTRACT}, {"cat", OP_CAT},
    {"select", OP_SELECT}, {"iota", OP_IOTA}, {"bitcast", OP_BITCAST}, {"addi", OP_ADDI}, {"subi", OP_SUBI},
    {"muli", OP_MULI}, {"negi", OP_NEGI}, {"divi", OP_DIVI}, {"remi", OP_REMI}, {"mini", OP_MINI},
    {"maxi", OP_MAXI}, {"mulhii", OP_MULHII}, {"absi", OP_ABSI}, {"shli", OP_SHLI}, {"shri", OP_SHRI},
    {"andi", OP_ANDI}, {"ori", OP_ORI}, {"xori", OP_XORI}, {"cmpi", OP_CMPI}, {"exti", OP_EXTI},
    {"trunci", OP_TRUNCI}, {"addf", OP_ADDF}, {"subf", OP_SUBF}, {"mulf", OP_MULF}, {"divf", OP_DIVF},
    {"fma", OP_FMA}, {"sqrt", OP_SQRT}, {"remf", OP_REMF}, {"floor", OP_FLOOR}, {"ceil", OP_CEIL},
    {"negf", OP_NEGF}, {"absf", OP_ABSF}, {"maxf", OP_MAXF}, {"minf", OP_MINF}, {"cmpf", OP_CMPF},
    {"ftof", OP_FTOF}, {"ftoi", OP_FTOI}, {"itof", OP_ITOF}, {"exp", OP_EXP}, {"exp2", OP_EXP2},
    {"log", OP_LOG}, {"log2", OP_LOG2}, {"rsqrt", OP_RSQRT}, {"tanh", OP_TANH}, {"sinh", OP_SINH},
    {"cosh", OP_COSH}, {"sin", OP_SIN}, {"cos", OP_COS}, {"tan", OP_TAN}, {"atan2", OP_ATAN2},
    {"pow", OP_POW}, {"reduce", OP_REDUCE}, {"scan", OP_SCAN}, {"assume", OP_ASSUME},
    {"print_tko", OP_PRINT}, {"mmaf", OP_MMAF}, {"mmai", OP_MMAI}, {"mmaf_scaled", OP_MMAF_SCALED},
    /* 13.3 / 13.4; tileirdisasm 13.5 prints the dialect's pow as fpowf */
    {"fpowf", OP_POW}, {"fpowi", OP_FPOWI}, {"atomic_rmw_tko", OP_ATOMIC_RMW}, {"atomic_cas_tko", OP_ATOMIC_CAS},
    {"gdc_wait_tko", OP_GDC}, {"gdc_launch_dependents_tko", OP_GDC}, {"pack", OP_PACK}, {"unpack", OP_UNPACK},
    {"atomic_red_view_tko", OP_ATOMIC_RED}, {"insert", OP_INSERT}, {"alloca", OP_ALLOCA},
    {"memory_fence_alias_tko", OP_GDC},
};

/* atomic_rmw_tko's mode words, in RMW_* order. */
static const char *const rmw_names[] = {"and", "or", "xor", "add", "addf", "max", "min", "umax", "umin", "xchg"};

static int op_code(const char *nm)
{
    size_t i;
    for (i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (!strcmp(op_names[i].name, nm)) return op_names[i].code;
    return OP_UNKNOWN;
}

static void parse_region_body(P *p, it_region *r, const tok *open);

/* The generic operand/attribute/type part of an op. */
typedef struct gen {
    int nopd;
    int opd[64];
    int nlt, nrt;
    it_type lt[16], rt[16];
} gen;

/* An op's scratch space, one per nesting level (an op's own regions use the next level's). */
struct scratch {
    gen g;
    it_type rt[64];   /* result types */
    it_type ity[32];  /* loop: iteration value types */
    it_type aty[128]; /* reduce / scan: region argument types */
    tok *names[128];  /* region argument names */
};

static struct scratch *scratch_of(P *p)
{
    struct scratch *sc = p->scr[p->depth];
    if (!sc) {
        sc = (struct scratch *)malloc(sizeof *sc);
        if (!sc) poom(p);
        p->scr[p->depth] = sc;
    }
    sc->g.nopd = sc->g.nlt = sc->g.nrt = 0;
    return sc;
}

static void add_opd(P *p, gen *g, it_op *op, int id, const tok *at)
{
    (void)op;
    if (g->nopd >= 64) perr(p, at, "too many operands");
    g->opd[g->nopd++] = id;
}

static void parse_angle_skip(P *p)
{
    int depth = 0;
    do {
        if (cur(p)->k == TK_EOF) perr(p, cur(p), "unterminated '<'");
        if (is_p(cur(p), '<') || is_p(cur(p), '(') || is_p(cur(p), '[') || is_p(cur(p), '{')) depth++;
        if (is_p(cur(p), '>') || is_p(cur(p), ')') || is_p(cur(p), ']') || is_p(cur(p), '}')) depth--;
        p->i++;
    } while (depth > 0);
}

static int rounding_of(P *p, const tok *t)
{
    static const char *rn[] = {"nearest_even", "nearest_away", "zero", "negative_inf", "positive_inf"};
    int k;
    for (k = 0; k < 5; k++)
        if (is_w(t, rn[k])) return k;
    if (is_w(t, "approx")) return IT_RND_APPROX;
    if (is_w(t, "full")) return IT_RND_FULL;
    if (is_w(t, "nearest_int_to_zero")) return IT_RND_NEAREST_INT_TO_ZERO;
    perr(p, t, "expected a rounding mode (nearest_even, zero, negative_inf, positive_inf, approx, full, nearest_int_to_zero)");
    return 0;
}

/* The op's lists (ilist, shape, strides), allocated on first need. */
static void need_lists(P *p, it_op *op)
{
    struct oplists { int64_t ilist[IT_MAXRANK * 2]; it_item shape[IT_MAXRANK], strides[IT_MAXRANK]; } *l;
    if (op->ilist) return;
    l = (struct oplists *)palloc(p, sizeof *l);
    op->ilist = l->ilist;
    op->shape = l->shape;
    op->strides = l->strides;
}

static void parse_assume_pred(P *p, it_op *op)
{
    char nm[64];
    tok *t = cur(p);
    need_lists(p, op);
    if (t->k == TK_ATTR) {
        tokstr(t, nm, sizeof nm);
        if (!strncmp(nm, "cuda_tile.", 10)) memmove(nm, nm + 10, strlen(nm + 10) + 1);
    } else {
        tokstr(t, nm, sizeof nm);
    }
    p->i++;
    if (!strcmp(nm, "div_by")) {
        op->pred = IT_ASSUME_DIV_BY;
        expect_p(p, '<', "after div_by");
        op->ilist[0] = expect_int(p, "the divisor");
        op->ilist[1] = 0; /* every */
        op->ilist[2] = -1; /* along */
        if (accept_p(p, ',')) {
            expect_w(p, "every");
            op->ilist[1] = expect_int(p, "every's count");
            expect_w(p, "along");
            op->ilist[2] = expect_int(p, "along's dimension");
        }
        expect_p(p, '>', "closing div_by<...>");
        if (op->ilist[0] <= 0 || (op->ilist[0] & (op->ilist[0] - 1))) perr(p, t, "div_by's divisor must be a positive power of two");
    } else if (!strcmp(nm, "bounded")) {
        op->pred = IT_ASSUME_BOUNDED;
        expect_p(p, '<', "after bounded");
        op->ilist[2] = op->ilist[3] = 0;
        if (accept_w(p, "?")) op->ilist[2] = 1; else op->ilist[0] = expect_int(p, "the lower bound");
        expect_p(p, ',', "between the bounds");
        if (accept_w(p, "?")) op->ilist[3] = 1; else op->ilist[1] = expect_int(p, "the upper bound");
        expect_p(p, '>', "closing bounded<...>");
    } else if (!strcmp(nm, "same_elements")) {
        int n;
        op->pred = IT_ASSUME_SAME_ELEMENTS;
        expect_p(p, '<', "after same_elements");
        parse_int_list(p, op->ilist, &n, IT_MAXRANK, 0, "same_elements");
        op->nilist = n;
        expect_p(p, '>', "closing same_elements<...>");
    } else {
        perr(p, t, "expected an assume predicate (div_by, bounded, same_elements), found '%s'", nm);
    }
    expect_p(p, ',', "after the assume predicate");
}

/* Mixed list [%v, 32, ...] of make_tensor_view. */
static void parse_items(P *p, it_item *it, int *n, gen *g, it_op *op)
{
    *n = 0;
    expect_p(p, '[', "starting a list");
    if (accept_p(p, ']')) return;
    do {
        if (*n >= IT_MAXRANK) perr(p, cur(p), "too many entries");
        if (cur(p)->k == TK_VAL) {
            it[*n].is_val = 1;
            it[*n].val = g->nopd;
            add_opd(p, g, op, use_value(p, cur(p)), cur(p));
            p->i++;
        } else {
            it[*n].is_val = 0;
            it[*n].lit = expect_int(p, "a shape or stride");
        }
        (*n)++;
    } while (accept_p(p, ','));
    expect_p(p, ']', "closing a list");
}

static int rmw_mode(const char *nm)
{
    int i;
    for (i = 0; i < (int)(sizeof rmw_names / sizeof rmw_names[0]); i++)
        if (!strcmp(nm, rmw_names[i])) return i;
    return -1;
}

static int is_type_start(const tok *t)
{
    char nm[64];
    if (t->k != TK_WORD) return 0;
    wordname(t, nm, sizeof nm);
    return !strcmp(nm, "tile") || !strcmp(nm, "token") || !strcmp(nm, "tensor_view") || !strcmp(nm, "partition_view") ||
           !strcmp(nm, "strided_view") || !strcmp(nm, "gather_scatter_view");
}

static void parse_generic(P *p, it_op *op, gen *g)
{
    int idx_open = 0;
    while (1) {
        tok *t = cur(p);
        if (t->k == TK_VAL) {
            add_opd(p, g, op, use_value(p, t), t);
            p->i++;
            if (is_p(cur(p), '[')) {
                /* view index list, or permute's integer list */
                p->i++;
                if (!is_p(cur(p), ']')) {
                    if (cur(p)->k == TK_VAL) {
                        do {
                            add_opd(p, g, op, use_value(p, cur(p)), cur(p));
                            op->nidx++;
                            p->i++;
                        } while (accept_p(p, ','));
                        idx_open = 1;
                    } else {
                        int n = 0;
                        need_lists(p, op);
                        do {
                            if (n >= IT_MAXRANK) perr(p, cur(p), "too many entries");
                            op->ilist[n++] = expect_int(p, "a permutation entry");
                        } while (accept_p(p, ','));
                        op->nilist = n;
                    }
                }
                expect_p(p, ']', "closing the index list");
            }
            (void)idx_open;
            continue;
        }
        if (is_p(t, ',')) { p->i++; continue; }
        if (op->code == OP_UNKNOWN && is_p(t, '{')) { parse_angle_skip(p); continue; } /* its attribute dict */
        if (is_p(t, ':') || t->k == TK_ARROW || t->k == TK_EOF || is_p(t, '{') || is_p(t, '}')) break;
        if (t->k == TK_STR) {
            char *s = (char *)palloc(p, (size_t)t->n + 1);
            memcpy(s, t->s, (size_t)t->n);
            op->str = s;
            p->i++;
            continue;
        }
        if (t->k == TK_ATTR) { parse_assume_pred(p, op); continue; }
        if (t->k == TK_WORD) {
            char nm[64];
            tokstr(t, nm, sizeof nm);
            if (op->code == OP_ASSUME && (!strcmp(nm, "div_by") || !strcmp(nm, "bounded") || !strcmp(nm, "same_elements"))) {
                parse_assume_pred(p, op);
                continue;
            }
            p->i++;
            if (!strcmp(nm, "rounding")) {
                expect_p(p, '<', "after 'rounding'");
                op->rnd = rounding_of(p, cur(p));
                p->i++;
                expect_p(p, '>', "closing rounding<...>");
            } else if (!strcmp(nm, "overflow")) {
                expect_p(p, '<', "after 'overflow'");
                if (accept_w(p, "none")) op->ovf = 0;
                else if (accept_w(p, "no_signed_wrap")) op->ovf = IT_NSW;
                else if (accept_w(p, "no_unsigned_wrap")) op->ovf = IT_NUW;
                else if (accept_w(p, "no_wrap")) op->ovf = IT_NSW | IT_NUW;
                else perr(p, cur(p), "expected an overflow mode (none, no_signed_wrap, no_unsigned_wrap, no_wrap)");
                expect_p(p, '>', "closing overflow<...>");
            } else if (!strcmp(nm, "saturating") && op->code == OP_FTOI) op->ovf |= IT_SAT;
            else if (!strcmp(nm, "flush_to_zero")) op->ftz = 1;
            else if (!strcmp(nm, "propagate_nan")) op->nan_prop = 1;
            else if (!strcmp(nm, "fast_acc")) op->fast_acc = 1;
            else if (!strcmp(nm, "signed") || !strcmp(nm, "unsigned")) {
                int u = nm[0] == 'u';
                if (op->code == OP_MMAI && op->nilist++ == 1) op->sgn2 = u;
                else op->is_unsigned = u;
            } else if (!strcmp(nm, "ordered")) op->ordered = 1;
            else if (!strcmp(nm, "unordered")) op->ordered = 0;
            else if (!strcmp(nm, "equal")) op->pred = PRED_EQ;
            else if (!strcmp(nm, "not_equal")) op->pred = PRED_NE;
            else if (!strcmp(nm, "less_than")) op->pred = PRED_LT;
            else if (!strcmp(nm, "less_than_or_equal")) op->pred = PRED_LE;
            else if (!strcmp(nm, "greater_than")) op->pred = PRED_GT;
            else if (!strcmp(nm, "greater_than_or_equal")) op->pred = PRED_GE;
            else if (!strcmp(nm, "weak") || !strcmp(nm, "relaxed") || !strcmp(nm, "acquire") || !strcmp(nm, "release") ||
                     !strcmp(nm, "acq_rel") || !strcmp(nm, "tl_blk") || !strcmp(nm, "device") || !strcmp(nm, "sys")) {
                /* memory ordering and scope: a program-order interpreter orders everything */
            } else if (!strcmp(nm, "dim")) {
                expect_p(p, '=', "after 'dim'");
                op->dim = (int)expect_int(p, "the dimension");
            } else if (!strcmp(nm, "reverse")) {
                expect_p(p, '=', "after 'reverse'");
                if (accept_w(p, "true")) op->reverse = 1;
                else if (accept_w(p, "false")) op->reverse = 0;
                else perr(p, cur(p), "expected true or false");
            } else if (!strcmp(nm, "identities")) {
                int n = 0, cap = 8;
                uint64_t *d = (uint64_t *)palloc(p, (size_t)cap * sizeof *d);
                int *ets = (int *)palloc(p, 64 * sizeof(int));
                int save;
                expect_p(p, '=', "after 'identities'");
                expect_p(p, '[', "starting the identities");
                do {
                    /* literal : type; the type comes after the literal */
                    int lit = p->i;
                    it_type et;
                    char en[64];
                    tok *tt;
                    if (n >= 64) perr(p, cur(p), "too many identities");
                    accept_p(p, '-');
                    p->i++;
                    expect_p(p, ':', "between an identity and its type");
                    tt = cur(p);
                    if (tt->k != TK_WORD) perr(p, tt, "expected the identity's element type");
                    wordname(tt, en, sizeof en);
                    memset(&et, 0, sizeof et);
                    if (!it_et_from_name(en, &et.et) || et.et == IT_UNMODELLED) perr(p, tt, "unsupported identity type '%s'", en);
                    p->i++;
                    save = p->i;
                    p->i = lit;
                    if (n == cap) {
                        uint64_t *nd2 = (uint64_t *)palloc(p, (size_t)cap * 2 * sizeof *nd2);
                        memcpy(nd2, d, (size_t)cap * sizeof *d);
                        d = nd2;
                        cap *= 2;
                    }
                    ets[n] = et.et;
                    d[n++] = parse_literal(p, et.et);
                    p->i = save;
                } while (accept_p(p, ','));
                expect_p(p, ']', "closing the identities");
                op->cdata = d;
                op->nid = n;
                op->cn = n;
                op->cet = ets[0];
                op->gindex = 0;
                (void)ets;
            } else if (!strcmp(nm, "token")) {
                expect_p(p, '=', "after 'token'");
                add_opd(p, g, op, use_value(p, cur(p)), cur(p));
                op->has_token = 1;
                p->i++;
            } else if (!strcmp(nm, "shape")) {
                expect_p(p, '=', "after 'shape'");
                need_lists(p, op);
                parse_items(p, op->shape, &op->nshape, g, op);
            } else if (!strcmp(nm, "strides")) {
                expect_p(p, '=', "after 'strides'");
                need_lists(p, op);
                parse_items(p, op->strides, &op->nstrides, g, op);
            } else if (!strcmp(nm, "inbounds") && (op->code == OP_LOAD_VIEW || op->code == OP_STORE_VIEW)) {
                expect_p(p, '=', "after 'inbounds'");
                expect_p(p, '[', "starting the inbounds list");
                op->ninb = 0;
                if (!is_p(cur(p), ']'))
                    do {
                        if (op->ninb >= IT_MAXRANK) perr(p, cur(p), "too many inbounds entries");
                        if (accept_w(p, "true")) op->inb[op->ninb++] = 1;
                        else if (accept_w(p, "false")) op->inb[op->ninb++] = 0;
                        else perr(p, cur(p), "expected true or false in inbounds");
                    } while (accept_p(p, ','));
                expect_p(p, ']', "closing the inbounds list");
            } else if (op->code == OP_ALLOCA && (!strcmp(nm, "num_elem") || !strcmp(nm, "alignment"))) {
                int64_t v;
                expect_p(p, '=', "after the alloca's attribute");
                v = expect_int(p, "a positive count");
                if (v <= 0 || v > (INT64_C(1) << 32)) perr(p, t, "%s must be 1 to 2^32", nm);
                if (nm[0] == 'n') op->cn = v;
                else op->dim = (int)v;
            } else if (op->code == OP_ALLOCA && !strcmp(nm, "global")) {
                op->reverse = 1;
            } else if ((op->code == OP_ATOMIC_RMW || op->code == OP_ATOMIC_RED) && rmw_mode(nm) >= 0) {
                op->pred = rmw_mode(nm);
            } else if (!strcmp(nm, "optimization_hints")) {
                expect_p(p, '=', "after 'optimization_hints'");
                parse_angle_skip(p);
            } else if (op->code == OP_UNKNOWN) {
                if (is_p(cur(p), '<')) parse_angle_skip(p);
                else if (accept_p(p, '=')) {
                    if (is_p(cur(p), '<') || is_p(cur(p), '[')) parse_angle_skip(p);
                    else if (cur(p)->k != TK_EOF) p->i++;
                }
            } else {
                perr(p, t, "unexpected '%s' in '%s'", nm, op->name);
            }
            continue;
        }
        if (is_p(t, '[') || is_p(t, '<')) {
            if (op->code == OP_UNKNOWN) { parse_angle_skip(p); continue; }
            if (op->code == OP_PERMUTE && is_p(t, '[')) {
                int n = 0;
                need_lists(p, op);
                p->i++;
                do {
                    if (n >= IT_MAXRANK) perr(p, cur(p), "too many entries");
                    op->ilist[n++] = expect_int(p, "a permutation entry");
                } while (accept_p(p, ','));
                op->nilist = n;
                expect_p(p, ']', "closing the permutation");
                continue;
            }
        }
        {
            char d[64];
            tokdesc(t, d, sizeof d);
            perr(p, t, "unexpected %s in '%s'", d, op->name);
        }
    }
    if (accept_p(p, ':')) {
        do {
            if (g->nlt >= 16) perr(p, cur(p), "too many types");
            parse_type(p, &g->lt[g->nlt++]);
        } while (accept_p(p, ','));
    }
    if (cur(p)->k == TK_ARROW) {
        p->i++;
        if (accept_p(p, '(')) {
            if (!is_p(cur(p), ')'))
                do {
                    if (g->nrt >= 16) perr(p, cur(p), "too many types");
                    parse_type(p, &g->rt[g->nrt++]);
                } while (accept_p(p, ','));
            expect_p(p, ')', "closing the result types");
        } else {
            do {
                if (g->nrt >= 16) perr(p, cur(p), "too many types");
                parse_type(p, &g->rt[g->nrt++]);
            } while (accept_p(p, ','));
        }
    }
}

static void set_results(P *p, it_op *op, const tok *at, int nwritten, const it_type *rt, int nrt)
{
    int i;
    if (nwritten != nrt)
        perr(p, at, "'%s' has %d result%s but %d %s written", op->name, nrt, nrt == 1 ? "" : "s", nwritten,
             nwritten == 1 ? "is" : "are");
    op->nres = nrt;
    op->rty = intern(p, rt, nrt);
    op->res = (int *)palloc(p, (size_t)(nrt ? nrt : 1) * sizeof(int));
    for (i = 0; i < nrt; i++) op->res[i] = new_value(p, &rt[i]);
}

static it_type tile_of(int et, int pet, int rank, const int64_t *shape)
{
    it_type t;
    memset(&t, 0, sizeof t);
    t.kind = IT_TILE;
    t.et = et;
    t.pet = pet;
    t.rank = rank;
    if (rank) memcpy(t.shape, shape, (size_t)rank * sizeof *shape);
    return t;
}

static void need(P *p, const tok *at, const it_op *op, int ok, const char *what)
{
    if (!ok) perr(p, at, "'%s': expected %s", op->name, what);
}

static void parse_op(P *p, it_region *r, int *capops, int *slot);

/* The op at the cursor (results already read). */
static void parse_op_after_results(P *p, it_op *op, tok *nt, tok **rtok, int nres_w, int *grp)
{
    struct scratch *sc = scratch_of(p);
    gen *g = &sc->g;
    it_type *rt = sc->rt;
    int nrt = 0, i;
    const tok *at = nt;
    (void)rtok;
    (void)grp;
    op->rnd = IT_RND_DEFAULT;
    op->ordered = 1;
    if (op->code == OP_PERMUTE || op->code == OP_ASSUME || op->code == OP_MAKE_TV) need_lists(p, op);
    switch (op->code) {
    case OP_CONSTANT: {
        it_type ty;
        tok *a;
        int splat;
        parse_const_attr(p, &op->cet, &op->cdata, &op->cn, &ty, &a, &splat);
        if (splat) op->cn = 1;
        rt[nrt++] = ty;
        break;
    }
    case OP_GET_GLOBAL: {
        tok *s = cur(p);
        char nm[128];
        int k;
        if (s->k != TK_SYM) perr(p, s, "expected @global after get_global");
        tokstr(s, nm, sizeof nm);
        p->i++;
        op->gindex = -1;
        for (k = 0; k < p->m->nglobals; k++)
            if (!strcmp(p->m->globals[k].name, nm)) op->gindex = k;
        if (op->gindex < 0) perr(p, s, "no global @%s (globals must come before their use)", nm);
        expect_p(p, ':', "before get_global's type");
        parse_type(p, &rt[0]);
        nrt = 1;
        need(p, at, op, rt[0].kind == IT_TILE && rt[0].et == IT_PTR && rt[0].rank == 0, "a 0-d pointer tile type");
        break;
    }
    case OP_FOR: {
        /* for [unsigned] %iv in (%lb to %ub, step %s) : T [iter_values(%a = %x, ...) -> (types)] { */
        tok *iv, *names[32];
        int nit = 0, inits[32];
        it_type ivt, *itys;
        it_region *body;
        int mark = p->nsyms;
        if (accept_w(p, "unsigned")) op->is_unsigned = 1;
        iv = cur(p);
        if (iv->k != TK_VAL) perr(p, iv, "expected the induction variable");
        p->i++;
        expect_w(p, "in");
        expect_p(p, '(', "before the loop bounds");
        for (i = 0; i < 3; i++) {
            if (i == 1) expect_w(p, "to");
            if (i == 2) { expect_p(p, ',', "before 'step'"); expect_w(p, "step"); }
            op->opd = op->opd;
            g->opd[g->nopd++] = use_value(p, cur(p));
            p->i++;
        }
        expect_p(p, ')', "after the loop bounds");
        expect_p(p, ':', "before the induction variable's type");
        parse_type(p, &ivt);
        need(p, at, op, ivt.kind == IT_TILE && ivt.rank == 0 && it_is_int(ivt.et), "a 0-d integer tile as the induction type");
        if (accept_w(p, "iter_values")) {
            expect_p(p, '(', "after iter_values");
            do {
                if (nit >= 32) perr(p, cur(p), "too many iter_values");
                names[nit] = cur(p);
                if (cur(p)->k != TK_VAL) perr(p, cur(p), "expected an iteration value name");
                p->i++;
                expect_p(p, '=', "after the iteration value's name");
                inits[nit] = use_value(p, cur(p));
                p->i++;
                g->opd[g->nopd++] = inits[nit];
                nit++;
            } while (accept_p(p, ','));
            expect_p(p, ')', "after the iteration values");
            if (cur(p)->k != TK_ARROW) perr(p, cur(p), "expected '->' and the result types");
            p->i++;
            expect_p(p, '(', "before the result types");
            do {
                parse_type(p, &rt[nrt++]);
            } while (nrt < 32 && accept_p(p, ','));
            expect_p(p, ')', "after the result types");
            if (nrt != nit) perr(p, at, "for has %d iteration values but %d result types", nit, nrt);
        }
        body = (it_region *)palloc(p, sizeof *body);
        op->region[0] = body;
        op->nregion = 1;
        body->nargs = 1 + nit;
        body->args = (int *)palloc(p, (size_t)(1 + nit) * sizeof(int));
        itys = sc->aty; /* free in a for: reduce's */
        itys[0] = ivt;
        for (i = 0; i < nit; i++) itys[i + 1] = rt[i];
        body->aty = intern(p, itys, 1 + nit);
        for (i = 0; i < 3; i++) {
            const it_type *vt = p->e->vty[g->opd[i]];
            if (!type_eq(vt, &ivt)) perr(p, at, "the loop bounds must have the induction variable's type");
        }
        for (i = 0; i < nit; i++)
            if (!type_eq(p->e->vty[inits[i]], &rt[i])) perr(p, names[i], "iteration value %d's initial value has another type", i);
        body->args[0] = new_value(p, &ivt);
        def_name(p, iv, body->args[0], 1);
        for (i = 0; i < nit; i++) {
            body->args[i + 1] = new_value(p, &rt[i]);
            def_name(p, names[i], body->args[i + 1], 1);
        }
        {
            tok *open = cur(p);
            expect_p(p, '{', "opening the loop body");
            parse_region_body(p, body, open);
        }
        pop_syms(p, mark);
        break;
    }
    case OP_LOOP: {
        tok *names[32];
        int nit = 0, inits[32];
        it_type *ity = sc->ity;
        it_region *body;
        int mark = p->nsyms;
        if (accept_w(p, "iter_values")) {
            expect_p(p, '(', "after iter_values");
            do {
                if (nit >= 32) perr(p, cur(p), "too many iter_values");
                names[nit] = cur(p);
                if (cur(p)->k != TK_VAL) perr(p, cur(p), "expected an iteration value name");
                p->i++;
                expect_p(p, '=', "after the iteration value's name");
                inits[nit] = use_value(p, cur(p));
                g->opd[g->nopd++] = inits[nit];
                p->i++;
                nit++;
            } while (accept_p(p, ','));
            expect_p(p, ')', "after the iteration values");
            expect_p(p, ':', "before the iteration values' types");
            for (i = 0; i < nit; i++) {
                if (i) expect_p(p, ',', "between types");
                parse_type(p, &ity[i]);
                if (!type_eq(p->e->vty[inits[i]], &ity[i])) perr(p, names[i], "iteration value %d's initial value has another type", i);
            }
            if (cur(p)->k == TK_ARROW) {
                p->i++;
                do parse_type(p, &rt[nrt++]); while (nrt < 32 && accept_p(p, ','));
            }
        } else if (accept_p(p, ':')) {
            do parse_type(p, &rt[nrt++]); while (nrt < 32 && accept_p(p, ','));
        }
        body = (it_region *)palloc(p, sizeof *body);
        op->region[0] = body;
        op->nregion = 1;
        body->nargs = nit;
        body->args = (int *)palloc(p, (size_t)(nit + 1) * sizeof(int));
        body->aty = intern(p, ity, nit);
        for (i = 0; i < nit; i++) {
            body->args[i] = new_value(p, &ity[i]);
            def_name(p, names[i], body->args[i], 1);
        }
        {
            tok *open = cur(p);
            expect_p(p, '{', "opening the loop body");
            parse_region_body(p, body, open);
        }
        pop_syms(p, mark);
        break;
    }
    case OP_IF: {
        int k;
        g->opd[g->nopd++] = use_value(p, cur(p));
        p->i++;
        {
            const it_type *ct = p->e->vty[g->opd[0]];
            need(p, at, op, ct->kind == IT_TILE && ct->rank == 0 && ct->et == IT_I1, "a tile<i1> condition");
        }
        if (cur(p)->k == TK_ARROW) {
            p->i++;
            expect_p(p, '(', "before the result types");
            if (!is_p(cur(p), ')'))
                do parse_type(p, &rt[nrt++]); while (nrt < 32 && accept_p(p, ','));
            expect_p(p, ')', "after the result types");
        }
        for (k = 0; k < 2; k++) {
            it_region *body;
            int mark = p->nsyms;
            tok *open;
            if (k == 1 && !accept_w(p, "else")) break;
            body = (it_region *)palloc(p, sizeof *body);
            op->region[k] = body;
            op->nregion = k + 1;
            open = cur(p);
            expect_p(p, '{', k ? "opening the else region" : "opening the then region");
            parse_region_body(p, body, open);
            pop_syms(p, mark);
        }
        break;
    }
    case OP_GDC:
        if (!strcmp(op->name, "memory_fence_alias_tko")) {
            /* one token operand and nothing after it (tileirdisasm prints no types): the generic form
             * would take the next op's result for a second operand */
            if (cur(p)->k != TK_VAL) perr(p, cur(p), "expected the fence's token operand");
            g->opd[g->nopd++] = use_value(p, cur(p));
            p->i++;
            break;
        }
        parse_generic(p, op, g);
        break;
    default:
        parse_generic(p, op, g);
        break;
    }
    if (op->code != OP_FOR && op->code != OP_LOOP && op->code != OP_IF && op->code != OP_CONSTANT && op->code != OP_GET_GLOBAL) {
        /* results from the generic types, per op */
        const it_type *lt = g->lt, *rr = g->rt;
        int nl = g->nlt, nr = g->nrt, no = g->nopd;
        switch (op->code) {
        case OP_RETURN: case OP_CONTINUE: case OP_BREAK: case OP_YIELD:
            need(p, at, op, nr == 0 && nl == no, "one type per operand");
            break;
        case OP_BLOCK_ID: case OP_NUM_BLOCKS:
            need(p, at, op, no == 0 && nl == 1 && nr == 0 && lt[0].kind == IT_TILE && lt[0].rank == 0 && lt[0].et == IT_I32, ": tile<i32>");
            rt[0] = rt[1] = rt[2] = lt[0];
            nrt = 3;
            break;
        case OP_MAKE_TOKEN:
            need(p, at, op, no == 0 && nl == 1 && lt[0].kind == IT_TOKEN, ": token");
            rt[nrt++] = lt[0];
            break;
        case OP_JOIN_TOKENS:
            need(p, at, op, no >= 1 && nl == 1 && lt[0].kind == IT_TOKEN, "tokens and ': token'");
            rt[nrt++] = lt[0];
            break;
        case OP_IOTA:
            need(p, at, op, no == 0 && nl == 1 && lt[0].kind == IT_TILE && lt[0].rank == 1 && it_is_int(lt[0].et), ": tile<NxiK>");
            rt[nrt++] = lt[0];
            break;
        case OP_MAKE_TV: {
            const it_type *tv = nr ? &rr[0] : &lt[0];
            need(p, at, op, no >= 1 && ((nr == 1 && nl == 1) || (nr == 0 && nl == 1)) && tv->kind == IT_TV, "a tensor_view result type");
            need(p, at, op, op->nshape == tv->rank && op->nstrides == tv->rank, "shape and strides of the view's rank");
            for (i = 0; i < tv->rank; i++) {
                need(p, at, op, (op->shape[i].is_val ? -1 : op->shape[i].lit) == tv->shape[i], "shape entries matching the type ('?' for a value)");
                need(p, at, op, (op->strides[i].is_val ? -1 : op->strides[i].lit) == tv->strides[i], "stride entries matching the type ('?' for a value)");
            }
            rt[nrt++] = *tv;
            break;
        }
        case OP_MAKE_PV:
            need(p, at, op, no == 1 && nl == 1 && nr == 0 && lt[0].kind == IT_PV, "a tensor_view and ': partition_view<...>'");
            rt[nrt++] = lt[0];
            break;
        case OP_INDEX_SHAPE:
            need(p, at, op, no == 1 && nl == 1 && nr == 1 && lt[0].kind == IT_PV && rr[0].kind == IT_TILE && rr[0].rank == 0 && it_is_int(rr[0].et), ": partition_view<...> -> tile<iN>");
            for (i = 0; i < lt[0].rank; i++) rt[nrt++] = rr[0];
            break;
        case OP_LOAD_VIEW:
            need(p, at, op, nl >= 1 && lt[0].kind == IT_PV && nr == 2 && rr[0].kind == IT_TILE && rr[1].kind == IT_TOKEN, ": partition_view<...>, index types -> tile<...>, token");
            rt[nrt++] = rr[0];
            rt[nrt++] = rr[1];
            break;
        case OP_STORE_VIEW:
            need(p, at, op, nl >= 2 && lt[1].kind == IT_PV && nr == 1 && rr[0].kind == IT_TOKEN, ": tile<...>, partition_view<...>, index types -> token");
            rt[nrt++] = rr[0];
            break;
        case OP_LOAD_PTR:
            need(p, at, op, nl >= 1 && nl <= 3 && nr == 2 && rr[1].kind == IT_TOKEN, ": pointers[, mask[, padding]] -> tile<...>, token");
            op->has_mask = nl >= 2;
            op->has_pad = nl >= 3;
            rt[nrt++] = rr[0];
            rt[nrt++] = rr[1];
            break;
        case OP_STORE_PTR:
            need(p, at, op, nl >= 2 && nl <= 3 && nr == 1 && rr[0].kind == IT_TOKEN, ": pointers, values[, mask] -> token");
            op->has_mask = nl == 3;
            rt[nrt++] = rr[0];
            break;
        case OP_PRINT:
            need(p, at, op, nr == 1 && rr[0].kind == IT_TOKEN && nl == no - op->has_token && op->str, "\"format\", values : types -> token");
            rt[nrt++] = rr[0];
            break;
        case OP_CMPI: case OP_CMPF: case OP_EXTI: case OP_TRUNCI: case OP_FTOF: case OP_FTOI: case OP_ITOF:
        case OP_BITCAST: case OP_PTR_TO_INT: case OP_INT_TO_PTR: case OP_BROADCAST: case OP_RESHAPE:
        case OP_PERMUTE: case OP_EXTRACT: case OP_CAT: case OP_OFFSET: case OP_PACK: case OP_UNPACK:
            need(p, at, op, nr == 1 && nl >= 1, "': source types -> result type'");
            rt[nrt++] = rr[0];
            break;
        case OP_SELECT:
            need(p, at, op, nl == 2 && nr == 0 && no == 3, "%cond, %a, %b : tile<..xi1>, tile<...>");
            rt[nrt++] = lt[1];
            break;
        case OP_FPOWI:
            need(p, at, op, nl == 2 && nr == 0 && no == 2, "%x, %n : tile<...xF>, tile<...xiN>");
            rt[nrt++] = lt[0];
            break;
        case OP_ATOMIC_RMW: case OP_ATOMIC_CAS: {
            int nv = op->code == OP_ATOMIC_CAS ? 2 : 1; /* values after the pointers: cmp and new, or the argument */
            need(p, at, op, (nl == 2 || nl == 3) && nr == 2 && rr[1].kind == IT_TOKEN && no - op->has_token == nl - 1 + nv,
                 "pointers, values[, mask] : pointer type, value type[, mask type] -> tile<...>, token");
            op->has_mask = nl == 3;
            rt[nrt++] = rr[0];
            rt[nrt++] = rr[1];
            break;
        }
        case OP_ATOMIC_RED:
            /* relaxed device %view[%i, ...], MODE, %tile [token = %t] : tile type, view type, index types -> token */
            need(p, at, op, nl >= 2 && lt[1].kind == IT_PV && nr == 1 && rr[0].kind == IT_TOKEN, ": tile<...>, partition_view<...>, index types -> token");
            rt[nrt++] = rr[0];
            break;
        case OP_INSERT:
            /* %value, %tile[%i, ...] : value type, tile type */
            need(p, at, op, nl == 2 && nr == 0, "': value type, tile type'");
            rt[nrt++] = lt[1];
            break;
        case OP_GDC:
            if (!strcmp(op->name, "memory_fence_alias_tko")) { /* memory_fence_alias_tko %t (tileirdisasm prints no types) */
                need(p, at, op, no == 1 && nl == 0 && nr == 0 && p->e->vty[g->opd[0]]->kind == IT_TOKEN, "a token operand");
                rt[nrt++] = *p->e->vty[g->opd[0]];
                break;
            }
            need(p, at, op, no - op->has_token == 0 && nl == 0 && nr == 1 && rr[0].kind == IT_TOKEN, "[token = %t] -> token");
            rt[nrt++] = rr[0];
            break;
        case OP_ALLOCA:
            /* alloca num_elem = N, alignment = A [global] : tile<ptr<E>> */
            need(p, at, op, no == 0 && nl == 1 && nr == 0 && lt[0].kind == IT_TILE && lt[0].rank == 0 && lt[0].et == IT_PTR && op->cn > 0,
                 "num_elem = N, alignment = A : tile<ptr<E>>");
            rt[nrt++] = lt[0];
            op->gindex = p->e->nalloca++;
            break;
        case OP_MMAF: case OP_MMAI:
            need(p, at, op, nl == 3 && nr == 0 && no == 3, "%a, %b, %acc : three types");
            rt[nrt++] = lt[2];
            break;
        case OP_MMAF_SCALED:
            need(p, at, op, nl == 5 && nr == 0 && no == 5, "%a, %b, %acc, %a_scale, %b_scale : five types");
            rt[nrt++] = lt[2];
            break;
        case OP_REDUCE: case OP_SCAN: {
            /* then the region: (%a: t, %b: t, ...) { ... } */
            it_region *body = (it_region *)palloc(p, sizeof *body);
            int mark = p->nsyms, na = 0;
            tok **names = sc->names;
            it_type *aty = sc->aty;
            need(p, at, op, nl >= 1 && nr == nl && no == nl && op->nid == nl, "operands, identities and types in equal numbers");
            for (i = 0; i < nr; i++) rt[nrt++] = rr[i];
            expect_p(p, '(', "opening the region's arguments");
            do {
                if (na >= 128) perr(p, cur(p), "too many region arguments");
                names[na] = cur(p);
                if (cur(p)->k != TK_VAL) perr(p, cur(p), "expected a region argument");
                p->i++;
                expect_p(p, ':', "after the region argument");
                parse_type(p, &aty[na]);
                na++;
            } while (accept_p(p, ','));
            expect_p(p, ')', "closing the region's arguments");
            need(p, at, op, na == 2 * nl, "two region arguments per operand");
            body->nargs = na;
            body->args = (int *)palloc(p, (size_t)na * sizeof(int));
            body->aty = intern(p, aty, na);
            for (i = 0; i < na; i++) {
                body->args[i] = new_value(p, &aty[i]);
                def_name(p, names[i], body->args[i], 1);
            }
            op->region[0] = body;
            op->nregion = 1;
            {
                tok *open = cur(p);
                expect_p(p, '{', "opening the region");
                parse_region_body(p, body, open);
            }
            pop_syms(p, mark);
            break;
        }
        case OP_UNKNOWN:
            if (nr) for (i = 0; i < nr; i++) rt[nrt++] = rr[i];
            else if (nres_w > 0 && nl > 0) for (i = 0; i < nres_w && i < 64; i++) rt[nrt++] = lt[nl - 1];
            break;
        default:
            /* elementwise: operands of one type (fma: three; shifts: the same type) */
            need(p, at, op, nl == 1 && nr == 0, "one type (': tile<...>')");
            rt[nrt++] = lt[0];
            break;
        }
    }
    op->nopd = g->nopd;
    op->opd = (int *)palloc(p, (size_t)(g->nopd ? g->nopd : 1) * sizeof(int));
    memcpy(op->opd, g->opd, (size_t)g->nopd * sizeof(int));
    op->oty = intern(p, g->lt, g->nlt);
    set_results(p, op, at, nres_w < 0 ? nrt : nres_w, rt, nrt);
}

/* One op: [results =] name ... */
static void parse_op(P *p, it_region *r, int *capops, int *slot)
{
    it_op *op;
    tok *rt[64];
    int rc[64], nr = 0, total = 0, i;
    tok *nt;
    char nm[64];
    if (r->nops == *capops) {
        /* the region's array grows in place (its slot in the module's allocations follows it) */
        int nc = *capops ? *capops * 2 : 16;
        it_op *no;
        if (*slot < 0) {
            no = (it_op *)palloc(p, (size_t)nc * sizeof *no);
            *slot = p->nallocs - 1;
        } else {
            no = (it_op *)realloc(p->allocs[*slot], (size_t)nc * sizeof *no);
            if (!no) poom(p);
            p->allocs[*slot] = no;
        }
        r->ops = no;
        *capops = nc;
    }
    op = &r->ops[r->nops];
    memset(op, 0, sizeof *op);
    if (cur(p)->k == TK_VAL) {
        do {
            if (nr >= 64) perr(p, cur(p), "too many results");
            if (cur(p)->k != TK_VAL || cur(p)->grp >= 0) perr(p, cur(p), "expected a result name");
            rt[nr] = cur(p);
            rc[nr] = 1;
            p->i++;
            if (is_p(cur(p), ':') && peekn(p, 1)->k == TK_WORD) {
                int64_t c;
                p->i++;
                c = expect_int(p, "the number of results");
                if (c < 1 || c > 64) perr(p, rt[nr], "bad result count");
                rc[nr] = (int)c;
            }
            total += rc[nr];
            nr++;
        } while (accept_p(p, ','));
        expect_p(p, '=', "after the results");
    }
    nt = cur(p);
    if (nt->k == TK_STR) perr(p, nt, "the generic operation form (\"cuda_tile.op\"(...)) is not supported; use the custom form");
    if (nt->k != TK_WORD) {
        char d[64];
        tokdesc(nt, d, sizeof d);
        perr(p, nt, "expected an operation name, found %s", d);
    }
    wordname(nt, nm, sizeof nm);
    p->i++;
    op->code = op_code(nm);
    snprintf(op->name, sizeof op->name, "%s", nm);
    op->line = nt->line;
    op->col = nt->col;
    if (!strcmp(nm, "entry") || !strcmp(nm, "module") || !strcmp(nm, "global")) perr(p, nt, "'%s' is not allowed inside a kernel", nm);
    r->nops++; /* reserve: nested regions append to their own arrays */
    parse_op_after_results(p, op, nt, rt, nr ? total : -1, NULL);
    op = &r->ops[r->nops - 1];
    /* bind names: result groups are consecutive ids */
    {
        int k = 0;
        for (i = 0; i < nr; i++) {
            def_name(p, rt[i], op->res[k], rc[i]);
            k += rc[i];
        }
    }
}

static int is_op_start(P *p)
{
    tok *t = cur(p);
    return t->k == TK_VAL || t->k == TK_WORD || t->k == TK_STR;
}

/* Ops until the closing '}' (consumed). */
static void parse_region_body(P *p, it_region *r, const tok *open)
{
    int cap = 0, slot = -1;
    if (p->depth > IT_MAX_DEPTH)
        perr(p, open, "regions nested more than %d deep (the interpreter's limit)", IT_MAX_DEPTH);
    p->depth++;
    while (!is_p(cur(p), '}')) {
        if (cur(p)->k == TK_EOF) perr(p, open, "unterminated region (no matching '}')");
        if (!is_op_start(p)) {
            char d[64];
            tokdesc(cur(p), d, sizeof d);
            perr(p, cur(p), "expected an operation, found %s", d);
        }
        parse_op(p, r, &cap, &slot);
    }
    p->i++;
    p->depth--;
    if (slot >= 0 && r->nops > 0 && r->nops < cap) { /* give back the growth's slack */
        it_op *q = (it_op *)realloc(r->ops, (size_t)r->nops * sizeof *q);
        if (q) p->allocs[slot] = r->ops = q;
    }
}

/* ---------------------------------------------------------------- module level */

static void skip_attr_dict(P *p)
{
    if (accept_w(p, "attributes")) {
        if (!is_p(cur(p), '{')) perr(p, cur(p), "expected '{' after 'attributes'");
        parse_angle_skip(p);
    }
}

static void parse_entry(P *p, const tok *kw)
{
    er_interp_module *m = p->m;
    it_entry *e;
    tok *s = cur(p);
    tok *names[256];
    it_type ptys[256];
    int np = 0, i;
    if (s->k != TK_SYM) perr(p, s, "expected @name after 'entry'");
    if (m->nentries % 8 == 0) {
        it_entry *ne = (it_entry *)palloc(p, (size_t)(m->nentries + 8) * sizeof *ne);
        if (m->nentries) memcpy(ne, m->entries, (size_t)m->nentries * sizeof *ne);
        m->entries = ne;
    }
    e = &m->entries[m->nentries];
    memset(e, 0, sizeof *e);
    tokstr(s, e->name, sizeof e->name);
    for (i = 0; i < m->nentries; i++)
        if (!strcmp(m->entries[i].name, e->name)) perr(p, s, "entry @%s is defined twice", e->name);
    e->line = kw->line;
    e->col = kw->col;
    p->i++;
    p->e = e;
    p->capvty = 0;
    pop_syms(p, 0);
    expect_p(p, '(', "before the parameters");
    if (!is_p(cur(p), ')')) {
        do {
            if (np >= 256) perr(p, cur(p), "too many parameters");
            names[np] = cur(p);
            if (cur(p)->k != TK_VAL) perr(p, cur(p), "expected a parameter name");
            p->i++;
            expect_p(p, ':', "after the parameter's name");
            parse_type(p, &ptys[np]);
            if (ptys[np].kind == IT_TILE && ptys[np].rank > 0) perr(p, names[np], "a kernel parameter must be a 0-d tile");
            /* skip argument attributes {..} */
            if (is_p(cur(p), '{')) parse_angle_skip(p);
            np++;
        } while (accept_p(p, ','));
    }
    expect_p(p, ')', "after the parameters");
    e->nparams = np;
    e->params = (int *)palloc(p, (size_t)(np + 1) * sizeof(int));
    e->pty = (it_type *)palloc(p, (size_t)(np + 1) * sizeof(it_type));
    e->pname = (char(*)[64])palloc(p, (size_t)(np + 1) * 64);
    for (i = 0; i < np; i++) {
        e->pty[i] = ptys[i];
        e->params[i] = new_value(p, &ptys[i]);
        def_name(p, names[i], e->params[i], 1);
        tokstr(names[i], e->pname[i], 64);
    }
    while (!is_p(cur(p), '{')) {
        if (accept_w(p, "optimization_hints")) {
            expect_p(p, '=', "after optimization_hints");
            if (!is_p(cur(p), '<')) perr(p, cur(p), "expected '<' after optimization_hints=");
            parse_angle_skip(p);
        } else if (is_w(cur(p), "attributes")) {
            skip_attr_dict(p);
        } else {
            char d[64];
            tokdesc(cur(p), d, sizeof d);
            perr(p, cur(p), "expected '{' opening the entry's body, found %s", d);
        }
    }
    {
        tok *open = cur(p);
        p->i++;
        m->nentries++;
        parse_region_body(p, &e->body, open);
    }
    /* keep the value type table in the module's allocations */
    {
        const it_type **v = (const it_type **)palloc(p, (size_t)(e->nvalues + 1) * sizeof *v);
        if (e->nvalues) memcpy((void *)v, (const void *)e->vty, (size_t)e->nvalues * sizeof *v); /* none: vty is NULL */
        free((void *)e->vty);
        e->vty = v;
    }
    p->e = NULL;
}

static void parse_global(P *p)
{
    er_interp_module *m = p->m;
    it_global *g;
    tok *s, *a;
    int i;
    accept_w(p, "constant");
    if (!accept_w(p, "public")) accept_w(p, "private");
    s = cur(p);
    if (s->k != TK_SYM) perr(p, s, "expected @name after 'global'");
    p->i++;
    if (m->nglobals % 8 == 0) {
        it_global *ng = (it_global *)palloc(p, (size_t)(m->nglobals + 8) * sizeof *ng);
        if (m->nglobals) memcpy(ng, m->globals, (size_t)m->nglobals * sizeof *ng);
        m->globals = ng;
    }
    g = &m->globals[m->nglobals];
    memset(g, 0, sizeof *g);
    tokstr(s, g->name, sizeof g->name);
    for (i = 0; i < m->nglobals; i++)
        if (!strcmp(m->globals[i].name, g->name)) perr(p, s, "global @%s is defined twice", g->name);
    g->align = 0;
    if (accept_w(p, "alignment")) {
        expect_p(p, '=', "after 'alignment'");
        g->align = expect_int(p, "the alignment");
    }
    {
        int cet;
        parse_const_attr(p, &cet, &g->data, &g->n, &g->ty, &a, &g->splat);
        if (g->ty.rank != 1) perr(p, a, "a global must be a 1-d tile");
    }
    m->nglobals++;
}

static void parse_module_items(P *p, int until_brace)
{
    while (1) {
        tok *t = cur(p);
        char nm[64];
        if (until_brace && is_p(t, '}')) { p->i++; return; }
        if (t->k == TK_EOF) {
            if (until_brace) perr(p, t, "unterminated module (no matching '}')");
            return;
        }
        if (t->k != TK_WORD) {
            char d[64];
            tokdesc(t, d, sizeof d);
            perr(p, t, "expected 'entry', 'global' or 'cuda_tile.module', found %s", d);
        }
        wordname(t, nm, sizeof nm);
        p->i++;
        if (!strcmp(nm, "entry")) parse_entry(p, t);
        else if (!strcmp(nm, "global")) parse_global(p);
        else if (!strcmp(nm, "module")) {
            /* cuda_tile.module @name or the builtin module [@name] [attributes {..}] { .. } */
            if (cur(p)->k == TK_SYM) p->i++;
            skip_attr_dict(p);
            expect_p(p, '{', "opening the module");
            parse_module_items(p, 1);
        } else {
            perr(p, t, "expected 'entry', 'global' or 'cuda_tile.module', found '%s'", nm);
        }
    }
}

void er_interp_free(er_interp_module *m)
{
    int i;
    void **allocs;
    int n;
    if (!m) return;
    allocs = m->allocs;
    n = m->nallocs;
    for (i = 0; i < n; i++) free(allocs[i]);
    free(allocs);
    free(m->filename);
    free(m);
}

er_status er_interp_parse(const char *text, size_t len, const char *filename, er_interp_module **out, char *msg,
                          size_t msg_size)
{
    P *p;
    er_interp_module *m;
    int i;
    if (msg && msg_size) msg[0] = 0;
    if (!out || (!text && len)) return ER_EINVAL;
    *out = NULL;
    if (len > ((size_t)1 << 30)) {
        if (msg) snprintf(msg, msg_size, "%s: the module is larger than 1 GiB", filename ? filename : "<input>");
        return ER_EINVAL;
    }
    p = (P *)calloc(1, sizeof *p);
    /* the module carries its allocation list just after itself */
    m = (er_interp_module *)calloc(1, sizeof *m);
    if (!p || !m) {
        free(p);
        free(m);
        if (msg) snprintf(msg, msg_size, "out of memory");
        return ER_ENOMEM;
    }
    p->text = text ? text : "";
    p->len = len;
    p->file = filename ? filename : "<input>";
    p->msg = msg;
    p->msz = msg_size;
    p->m = m;
    if (setjmp(p->jb)) {
        if (p->e) free((void *)p->e->vty);
        free(p->tpool);
        for (i = 0; i < p->nallocs; i++) free(p->allocs[i]);
        free(p->allocs);
        free(p->t);
        free(p->syms);
        free(p->bucket);
        for (i = 0; i < IT_MAX_DEPTH + 2; i++) free(p->scr[i]);
        free(m);
        i = p->oom;
        free(p);
        return i ? ER_ENOMEM : ER_EINVAL;
    }
    lex(p);
    m->filename = NULL;
    parse_module_items(p, 0);
    if (m->nentries == 0) perr(p, cur(p), "the module has no entry");
    {
        size_t fl = strlen(p->file);
        m->filename = (char *)malloc(fl + 1);
        if (!m->filename) poom(p);
        memcpy(m->filename, p->file, fl + 1);
    }
    m->allocs = p->allocs;
    m->nallocs = p->nallocs;
    free(p->t);
    free(p->syms);
    free(p->bucket);
    free(p->tpool);
    for (i = 0; i < IT_MAX_DEPTH + 2; i++) free(p->scr[i]);
    free(p);
    *out = m;
    return ER_OK;
}

const it_entry *it_find_entry(const er_interp_module *m, const char *name)
{
    int i;
    if (!m || !name) return NULL;
    if (name[0] == '@') name++;
    for (i = 0; i < m->nentries; i++)
        if (!strcmp(m->entries[i].name, name)) return &m->entries[i];
    return NULL;
}

int er_interp_kernel_count(const er_interp_module *m) { return m ? m->nentries : 0; }
const char *er_interp_kernel_name(const er_interp_module *m, int i)
{
    return m && i >= 0 && i < m->nentries ? m->entries[i].name : NULL;
}
