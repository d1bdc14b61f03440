/* interp_bounds_exec.h: bounds mode's executor hooks: part of interp_exec.c's translation unit (included at its
 * end, after the runtime values it reads), carrying enclosures beside the interpreter's own run. */
#ifndef ER_INTERP_BOUNDS_EXEC_H
#define ER_INTERP_BOUNDS_EXEC_H

#define UNDECIDED(x, op, ...) refuse((x), ER_INTERP_UNDECIDED, (op), __VA_ARGS__)

/* r gets shadow arrays for its n lanes (has_s set; contents: the lanes' exact values when fill). */
static void sh_need(X *x, const it_op *op, rv *r, int fill)
{
    int64_t i;
    if (r->n > r->scap) {
        double *nl = (double *)realloc(r->slo, (size_t)r->n * sizeof *nl), *nh;
        uint8_t *nf;
        if (nl) r->slo = nl;
        nh = nl ? (double *)realloc(r->shi, (size_t)r->n * sizeof *nh) : NULL;
        if (nh) r->shi = nh;
        nf = nh ? (uint8_t *)realloc(r->sfl, (size_t)r->n) : NULL;
        if (nf) r->sfl = nf;
        if (!nf) INTERNAL(x, op, "out of memory for the enclosures of %lld elements", (long long)r->n);
        r->scap = r->n;
    }
    if (fill && !r->has_s)
        for (i = 0; i < r->n; i++) it_bnd_point(r->et, r->b[i], &r->slo[i], &r->shi[i], &r->sfl[i]);
    r->has_s = 1;
}

static it_sv sv_of(const rv *r)
{
    it_sv s;
    s.lo = r->has_s ? r->slo : NULL;
    s.hi = r->has_s ? r->shi : NULL;
    s.fl = r->has_s ? r->sfl : NULL;
    s.pt = r->b;
    s.n = r->n;
    s.fmt = r->et;
    return s;
}

/* Lane j of r takes lane i of s (an enclosure, or s's exact value). */
static void sh_put(rv *r, int64_t j, const rv *s, int64_t i)
{
    if (s->has_s) {
        r->slo[j] = s->slo[i];
        r->shi[j] = s->shi[i];
        r->sfl[j] = s->sfl[i];
    } else {
        it_bnd_point(s->et, s->b[i], &r->slo[j], &r->shi[j], &r->sfl[j]);
    }
}

static void sh_top(rv *r, int64_t j)
{
    r->slo[j] = -1.0 / 0.0;
    r->shi[j] = 1.0 / 0.0;
    r->sfl[j] = IT_BF_NAN;
}

/* A tile whose every lane's enclosure is its own value drops the enclosures (exact, and cheaper after). */
static void sh_settle(rv *r)
{
    int64_t i;
    if (!r->has_s || !it_is_float(r->et)) return;
    for (i = 0; i < r->n; i++) {
        double l, h;
        uint8_t f;
        if (r->sfl[i] || r->slo[i] != r->shi[i]) return;
        it_bnd_point(r->et, r->b[i], &l, &h, &f);
        if (f || l != r->slo[i]) return;
    }
    r->has_s = 0;
}

/* ---------------------------------------------------------------- critical sections (docs/interp.md, "Locks")
 *
 * A compare-and-swap that finds its expected value and writes another acquires a lock at that address; a write
 * that puts the expected value back (an exchange, a store, a compare-and-swap) releases it.  While this block
 * holds a lock, a float loaded from memory is tainted with its element (kind 1, the old value); addf / subf /
 * fma of an old value and an untainted term, rounded to nearest even, is old + term (kind 2); a store of
 * old + term into the same element, with no write between, is an add of the term in any order of the blocks
 * (as a float atomic add: sh_atomic_add).  Any other use of a tainted lane marks its element as read (CS_READ);
 * an element both read that way and summed into (CS_ADDED) is refused, and so is any other store under a lock. */

#define CS_READ 1u
#define CS_ADDED 2u
#define CS_LOCKADD 4u /* summed into under a lock */
#define CS_ATOMADD 8u /* summed into by an atomic add */
#define CS_STORED 0x80u

static void sh_atomic_add(X *x, const it_op *op, mreg *m, int64_t e, int et, int ftz, double vl, double vh, uint8_t vf, int locked);

static void bnd_block_start(X *x)
{
    int i;
    x->nlock = 0; /* a lock this block did not release: its section ended with the block */
    if (x->ntk)
        for (i = 0; i < x->nv; i++) tk_clear(x, i);
}

static it_taint *tk_get(X *x, int id) { return x->tk && x->tk[id].kind ? &x->tk[id] : NULL; }

static it_taint *tk_set(X *x, const it_op *op, int id, int kind, int64_t n)
{
    it_taint *t = &x->tk[id];
    if (n > t->cap) {
        int64_t *el = (int64_t *)realloc(t->el, (size_t)n * sizeof *el);
        uint32_t *sq;
        double *tl, *th;
        uint8_t *tf;
        if (el) t->el = el;
        sq = el ? (uint32_t *)realloc(t->seq, (size_t)n * sizeof *sq) : NULL;
        if (sq) t->seq = sq;
        tl = sq ? (double *)realloc(t->tl, (size_t)n * sizeof *tl) : NULL;
        if (tl) t->tl = tl;
        th = tl ? (double *)realloc(t->th, (size_t)n * sizeof *th) : NULL;
        if (th) t->th = th;
        tf = th ? (uint8_t *)realloc(t->tf, (size_t)n) : NULL;
        if (tf) t->tf = tf;
        if (!tf) INTERNAL(x, op, "out of memory for the lanes of %lld elements read under a lock", (long long)n);
        t->cap = n;
    }
    if (!t->kind) x->ntk++;
    t->kind = kind;
    t->op = op;
    t->sec = x->csid;
    return t;
}

static int64_t cs_key(const X *x, const mreg *m, int64_t e) { return ((int64_t)(m - x->mem) << IT_ADDR_SHIFT) | e; }

/* The marks of region m, by elements of eb bytes (made on first need). */
static void cs_marks(X *x, const it_op *op, mreg *m, int eb)
{
    int64_t n;
    if (m->csm) {
        if (m->cseb != eb)
            refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: memory %d is read or summed under a lock in elements of %d and of %d bytes",
                   (int)(m - x->mem), m->cseb, eb);
        return;
    }
    n = (int64_t)(m->n / (size_t)eb);
    m->csm = (uint8_t *)calloc((size_t)(n ? n : 1), 1);
    m->cseq = (uint32_t *)calloc((size_t)(n ? n : 1), sizeof *m->cseq);
    if (!m->csm || !m->cseq) INTERNAL(x, op, "out of memory for the marks of %lld elements", (long long)n);
    m->cseb = eb;
}

static void cs_conflict(X *x, const it_op *op, const mreg *m, int64_t e)
{
    refuse(x, ER_INTERP_UNSUPPORTED, op,
           "bounds mode: element %lld of memory %d is read under a lock and used other than as the old value of old + v "
           "(line %d) and is also summed into (line %d): what the read sees depends on the order the blocks take the lock, "
           "which this model does not carry", (long long)e, (int)(m - x->mem), m->csrop ? m->csrop->line : op->line,
           m->csaop ? m->csaop->line : op->line);
}

static void cs_mark(X *x, const it_op *op, mreg *m, int64_t e, unsigned what)
{
    if (what == CS_ADDED && (m->csm[e] & CS_READ)) cs_conflict(x, op, m, e);
    if (what == CS_READ && (m->csm[e] & CS_ADDED)) cs_conflict(x, op, m, e);
    if (what == CS_READ && !m->csrop) m->csrop = op;
    if (what == CS_ADDED && !m->csaop) m->csaop = op;
    m->csm[e] |= (uint8_t)what;
}

/* A use of slot id's lanes other than the additive chain: every element they were read from is marked. */
static void bnd_taint_use(X *x, const it_op *op, int id)
{
    it_taint *t = tk_get(x, id);
    int64_t i, n;
    if (!t) return;
    n = x->v[id].n;
    for (i = 0; i < n && i < t->cap; i++)
        if (t->el[i] >= 0) cs_mark(x, op, &x->mem[t->el[i] >> IT_ADDR_SHIFT], t->el[i] & ((INT64_C(1) << IT_ADDR_SHIFT) - 1), CS_READ);
}

/* addf / subf / fma of an old value (kind 1) and untainted terms under a lock: the result is old + term (kind 2). */
static int bnd_taint_sum(X *x, const it_op *op)
{
    int oi = -1;
    it_taint *t, *nt;
    const rv *o;
    rv *r;
    int64_t i;
    if (!x->nlock) return 0;
    if (op->code == OP_ADDF && op->nopd == 2) {
        if (tk_get(x, op->opd[0]) && !tk_get(x, op->opd[1])) oi = 0;
        else if (tk_get(x, op->opd[1]) && !tk_get(x, op->opd[0])) oi = 1;
    } else if (op->code == OP_SUBF && op->nopd == 2) {
        if (tk_get(x, op->opd[0]) && !tk_get(x, op->opd[1])) oi = 0;
    } else if (op->code == OP_FMA && op->nopd == 3) {
        if (tk_get(x, op->opd[2]) && !tk_get(x, op->opd[0]) && !tk_get(x, op->opd[1])) oi = 2;
    }
    if (oi < 0) return 0;
    t = tk_get(x, op->opd[oi]);
    o = &x->v[op->opd[oi]];
    r = &x->v[op->res[0]];
    if (t->kind != 1 || (op->rnd != IT_RND_DEFAULT && op->rnd != ER_RND_NEAREST_EVEN) || op->ftz || o->n != r->n || !it_is_float(r->et))
        return 0; /* a directed rounding or flush_to_zero: not the sum this model carries */
    nt = tk_set(x, op, op->res[0], 2, r->n);
    nt->op = t->op;
    nt->sec = t->sec;
    for (i = 0; i < r->n; i++) {
        double l, h, bl, bh;
        uint8_t f, bf;
        nt->el[i] = t->el[i];
        nt->seq[i] = t->seq[i];
        if (op->code == OP_FMA) { /* the exact product of the two factors' enclosures */
            it_sv sa = sv_of(&x->v[op->opd[0]]), sb = sv_of(&x->v[op->opd[1]]);
            it_bnd_lane(&sa, i, &l, &h, &f);
            it_bnd_lane(&sb, i, &bl, &bh, &bf);
            it_bnd_prod(l, h, f, bl, bh, bf, &l, &h, &f);
        } else {
            it_sv sv = sv_of(&x->v[op->opd[oi == 0 ? 1 : 0]]);
            it_bnd_lane(&sv, i, &l, &h, &f);
            if (op->code == OP_SUBF) {
                double q = l;
                l = -h;
                h = -q;
            }
        }
        nt->tl[i] = l;
        nt->th[i] = h;
        nt->tf[i] = (uint8_t)(f & IT_BF_NAN);
    }
    return 1;
}

static int cs_is_lock(const X *x, uint64_t addr)
{
    int k;
    for (k = 0; k < x->nlock; k++)
        if (x->lock[k].addr == addr) return 1;
    return 0;
}

/* A float load's lane i from element e of m under a lock: the old value. */
static void cs_load_lane(X *x, const it_op *op, it_taint *t, int64_t i, mreg *m, int64_t e)
{
    cs_marks(x, op, m, m->seb);
    t->el[i] = cs_key(x, m, e);
    t->seq[i] = m->cseq[e];
}

/* A store's lane i into element e of m (m: a region that keeps enclosures, or NULL; addr its address) while this
 * block holds a lock: only old + term into the element the old value was read from (an add in any order), or a
 * write to a lock itself (its release). */
static int cs_store_lane(X *x, const it_op *op, int vid, int64_t i, mreg *m, int64_t e, uint64_t addr)
{
    it_taint *t = tk_get(x, vid);
    const it_op *lk = x->lock[0].op;
    if (cs_is_lock(x, addr)) return 0;
    if (!t || t->kind != 2 || !m || t->el[i] != cs_key(x, m, e))
        refuse(x, ER_INTERP_UNSUPPORTED, op,
               "bounds mode: lane %lld stores, under the lock taken at line %d, a value that is not the old value of the element it "
               "stores plus a term (addf, subf or fma, rounded to nearest even without flush_to_zero, of the value loaded from that element under the "
               "lock): a device whose blocks take the lock in another order may store a value this model does not enclose",
               (long long)i, lk->line);
    if (t->sec != x->csid)
        refuse(x, ER_INTERP_UNSUPPORTED, op,
               "bounds mode: lane %lld stores old + v under a lock, but old was read (line %d) in an earlier critical section: "
               "other blocks may have added to the element in between", (long long)i, t->op ? t->op->line : op->line);
    if (t->tf[i] & CS_STORED)
        refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: lane %lld stores the same old + v under a lock a second time", (long long)i);
    if (m->cseq[e] != t->seq[i])
        refuse(x, ER_INTERP_UNSUPPORTED, op,
               "bounds mode: lane %lld: element %lld was written between its load under the lock (line %d) and this store of old + v",
               (long long)i, (long long)e, t->op ? t->op->line : op->line);
    t->tf[i] |= CS_STORED;
    return 1;
}

/* After a write to memory: a lock whose word holds its releasing value again is released. */
static void cs_release(X *x)
{
    int k = 0;
    while (k < x->nlock) {
        uint64_t a = x->lock[k].addr, idx = a >> IT_ADDR_SHIFT, off = a & ((UINT64_C(1) << IT_ADDR_SHIFT) - 1u);
        int eb = it_elem_bytes(x->lock[k].et);
        mreg *m = idx >= 1 && idx <= (uint64_t)x->nmem ? &x->mem[idx - 1] : NULL;
        if (m && m->data && off + (uint64_t)eb <= m->n && mem_read(m->data + off, eb, x->lock[k].et) == x->lock[k].rel) {
            x->lock[k] = x->lock[--x->nlock];
            continue;
        }
        k++;
    }
}

/* atomic_cas_tko: a lane that found its expected value and wrote another acquires a lock at its address. */
static void cs_acquire(X *x, const it_op *op)
{
    const rv *ptr = &x->v[op->opd[0]], *ex = &x->v[op->opd[1]], *nw = &x->v[op->opd[2]];
    const rv *mask = op->has_mask ? &x->v[op->opd[3]] : NULL;
    const rv *r = &x->v[op->res[0]];
    int64_t i;
    for (i = 0; i < ptr->n; i++) {
        uint64_t e, n;
        if (mask && !(mask->b[mask->n == 1 ? 0 : i] & 1u)) continue;
        if (lane_undef(r, i)) continue;
        e = ex->b[ex->n == 1 ? 0 : i];
        n = nw->b[nw->n == 1 ? 0 : i];
        if (r->b[i] != e || n == e || cs_is_lock(x, ptr->b[i])) continue;
        if (x->nlock == IT_MAX_LOCKS)
            refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: a block holds more than %d locks", IT_MAX_LOCKS);
        if (!x->nlock) x->csid++; /* a new critical section */
        x->lock[x->nlock].addr = ptr->b[i];
        x->lock[x->nlock].rel = e;
        x->lock[x->nlock].et = ptr->pet;
        x->lock[x->nlock].op = op;
        x->nlock++;
    }
}

/* ---------------------------------------------------------------- memory */

/* The launch's buffer k, or extra buffer k - nbuffers (a list's array). */
static int bnd_buf_format(const X *x, size_t k)
{
    return k < x->l->nbuffers ? x->l->buffers[k].format : x->l->extra[k - x->l->nbuffers].format;
}

static int bnd_mem_setup(X *x)
{
    size_t k;
    for (k = 0; k < x->l->nbuffers + x->l->nextra; k++) {
        mreg *m = &x->mem[k];
        int f = bnd_buf_format(x, k), eb;
        int64_t n, e;
        if (f == ER_INTERP_FMT_I1 || er_fmt_get(f).kind != ER_KIND_FLOAT) continue;
        eb = it_elem_bytes(f);
        if (eb <= 0) continue;
        n = (int64_t)(m->n / (size_t)eb);
        m->slo = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->shi = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->sfl = (uint8_t *)malloc((size_t)(n ? n : 1));
        if (!m->slo || !m->shi || !m->sfl) return -1;
        m->seb = eb;
        m->sfmt = f;
        for (e = 0; e < n; e++) it_bnd_point(f, mem_read(m->data + e * eb, eb, f), &m->slo[e], &m->shi[e], &m->sfl[e]);
    }
    return 0;
}

static void bnd_mem_free(X *x)
{
    int k;
    for (k = 0; k < x->nmem; k++) {
        free(x->mem[k].slo);
        free(x->mem[k].shi);
        free(x->mem[k].sfl);
        x->mem[k].slo = x->mem[k].shi = NULL;
        x->mem[k].sfl = NULL;
        free(x->mem[k].acn);
        free(x->mem[k].acl);
        free(x->mem[k].ach);
        free(x->mem[k].aca);
        free(x->mem[k].acf);
        x->mem[k].acn = NULL;
        x->mem[k].acl = x->mem[k].ach = x->mem[k].aca = NULL;
        x->mem[k].acf = NULL;
        free(x->mem[k].csm);
        free(x->mem[k].cseq);
        x->mem[k].csm = NULL;
        x->mem[k].cseq = NULL;
    }
}

static int bnd_mem_out(X *x, er_interp_bounds *out)
{
    size_t k;
    out->nbuf = x->l->nbuffers + x->l->nextra;
    out->buf = (it_bbuf *)calloc(out->nbuf ? out->nbuf : 1, sizeof *out->buf);
    if (!out->buf) return -1;
    for (k = 0; k < out->nbuf; k++) {
        mreg *m = &x->mem[k];
        it_bbuf *c = &out->buf[k];
        int f = bnd_buf_format(x, k);
        c->format = f;
        c->nbytes = m->n;
        c->is_float = m->slo != NULL;
        c->eb = c->is_float ? m->seb : (f == ER_INTERP_FMT_I1 ? 1 : er_fmt_storage_bytes(er_fmt_get(f)));
        c->count = (int64_t)(m->n / (size_t)c->eb);
        c->point = (uint8_t *)malloc(m->n ? m->n : 1);
        if (!c->point) return -1;
        if (m->n) memcpy(c->point, m->data, m->n);
        if (c->is_float) {
            c->lo = m->slo;
            c->hi = m->shi;
            c->fl = m->sfl;
            m->slo = m->shi = NULL;
            m->sfl = NULL;
        }
    }
    return 0;
}

/* The shadow of memory at a byte address (NULL: a buffer without one: its bytes are exact); *e its element.
 * make: memory other than the launch's buffers and a list's arrays (globals, allocas) gets enclosures on first
 * need, its elements' own values (exact) to begin with. */
static mreg *sh_mem(X *x, const it_op *op, uint64_t addr, int et, int make, int64_t *e)
{
    uint64_t idx = addr >> IT_ADDR_SHIFT, off = addr & ((UINT64_C(1) << IT_ADDR_SHIFT) - 1u);
    int eb = it_elem_bytes(et);
    mreg *m;
    if (idx == 0 || idx > (uint64_t)x->nmem) return NULL;
    m = &x->mem[idx - 1];
    if (!m->slo && make && idx - 1 >= (uint64_t)(x->l->nbuffers + x->l->nextra) && m->data && eb > 0) {
        int64_t n = (int64_t)(m->n / (size_t)eb), k;
        m->slo = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->shi = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->sfl = (uint8_t *)malloc((size_t)(n ? n : 1));
        if (!m->slo || !m->shi || !m->sfl) INTERNAL(x, op, "out of memory for the enclosures of %lld elements", (long long)n);
        m->seb = eb;
        m->sfmt = et;
        for (k = 0; k < n; k++) it_bnd_point(et, mem_read(m->data + k * eb, eb, et), &m->slo[k], &m->shi[k], &m->sfl[k]);
    }
    if (!m->slo) return NULL;
    if (m->seb != eb || m->sfmt != et || off % (uint64_t)eb)
        refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: memory %llu keeps enclosures of %s and is accessed as %s", (unsigned long long)(idx - 1),
               it_et_name(m->sfmt, 0), it_et_name(et, 0));
    *e = (int64_t)(off / (uint64_t)eb);
    return m;
}

/* A plain store of an enclosure (or an exact value) into element e: any atomic sum there starts again. */
static void sh_store(mreg *m, int64_t e, const rv *val, int64_t i, int et)
{
    if (val->has_s) {
        m->slo[e] = val->slo[i];
        m->shi[e] = val->shi[i];
        m->sfl[e] = val->sfl[i];
    } else {
        it_bnd_point(et, val->b[i], &m->slo[e], &m->shi[e], &m->sfl[e]);
    }
    if (m->acn) m->acn[e] = 0;
    if (m->cseq) m->cseq[e]++;
}

/* A store into memory that keeps no enclosures (a global, an alloca, a list's array) must store an exact value. */
static void sh_unkept(X *x, const it_op *op, const rv *val, int64_t i)
{
    double l, h;
    uint8_t f;
    if (!val->has_s) return;
    it_bnd_point(val->et, val->b[i], &l, &h, &f);
    if (val->sfl[i] || val->slo[i] != l || val->shi[i] != h)
        refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: element %lld's enclosure would be stored where bounds mode keeps none (only the launch's buffers keep them)", (long long)i);
}

/* one lane i of a float load (r) or store (val) at addr, element type et: through the lock's record, into or
 * out of the kept enclosures (the pointer and the tensor-view accesses alike) */
static void sh_lane(X *x, const it_op *op, int store, int vid, int64_t i, uint64_t addr, int et, const rv *val,
                    rv *r, it_taint *t)
{
    int64_t e;
    mreg *m = sh_mem(x, op, addr, et, (store && (val->has_s || x->nlock)) || (!store && x->nlock), &e);
    if (store) {
        if (x->nlock && cs_store_lane(x, op, vid, i, m, e, addr)) {
            it_taint *s2 = tk_get(x, vid);
            sh_atomic_add(x, op, m, e, et, 0, s2->tl[i], s2->th[i], s2->tf[i], 1);
            return;
        }
        if (!m) {
            sh_unkept(x, op, val, i);
            return;
        }
        sh_store(m, e, val, i, et);
    } else if (m) {
        r->slo[i] = m->slo[e];
        r->shi[i] = m->shi[e];
        r->sfl[i] = m->sfl[e];
        if (t) cs_load_lane(x, op, t, i, m, e);
    } else {
        it_bnd_point(et, r->b[i], &r->slo[i], &r->shi[i], &r->sfl[i]);
    }
}

static void bnd_ptr_access(X *x, const it_op *op, int store)
{
    const rv *ptr = &x->v[op->opd[0]];
    const rv *val = store ? &x->v[op->opd[1]] : NULL;
    const rv *mask = op->has_mask ? &x->v[op->opd[store ? 2 : 1]] : NULL;
    const rv *pad = op->has_pad ? &x->v[op->opd[2]] : NULL;
    int et = ptr->pet, eb = it_elem_bytes(et), isf = it_is_float(et) && eb > 0, vid = store ? op->opd[1] : -1;
    rv *r = store ? NULL : &x->v[op->res[0]];
    it_taint *t = NULL;
    int64_t i;
    if (!isf && !(store && x->nlock)) return;
    if (store && !x->nlock && tk_get(x, vid))
        refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: a value read under a lock is stored after the lock's release (its value depends on the order the blocks take the lock)");
    if (r) sh_need(x, op, r, 0);
    if (r && x->nlock) {
        t = tk_set(x, op, op->res[0], 1, r->n);
        for (i = 0; i < r->n; i++) t->el[i] = -1;
    }
    for (i = 0; i < ptr->n; i++) {
        int on = mask ? (mask->b[mask->n == 1 ? 0 : i] & 1u) != 0 : 1;
        if (!on) {
            if (r) {
                if (pad) sh_put(r, i, pad, pad->n == 1 ? 0 : i);
                else sh_top(r, i);
            }
            continue;
        }
        if (!isf) { /* an integer store under a lock: only the lock's own word */
            cs_store_lane(x, op, vid, i, NULL, 0, ptr->b[i]);
            continue;
        }
        sh_lane(x, op, store, vid, i, ptr->b[i], et, val, r, t);
    }
    if (r) sh_settle(r);
}

/* load_view_tko / store_view_tko: the enclosures of the elements the run read or wrote (every view kind:
 * a partition view's tiles, a strided view's and a gather/scatter view's coordinates as exec_view_access13
 * computes them). */
static void bnd_view_access(X *x, const it_op *op, int store)
{
    const rv *pv = &x->v[op->opd[store ? 1 : 0]];
    const rv *val = store ? &x->v[op->opd[0]] : NULL;
    const rv *sp = NULL;
    int rank = pv->vrank, d, eb = it_elem_bytes(pv->et), first = store ? 2 : 1, part = pv->vflav == IT_VIEW_PARTITION;
    int isf = it_is_float(pv->et) && eb > 0, vid = store ? op->opd[0] : -1;
    int64_t idx[IT_MAXRANK], tst[IT_MAXRANK], i, n = 1;
    rv *r = store ? NULL : &x->v[op->res[0]];
    it_taint *t = NULL;
    if (!isf && !(store && x->nlock && eb > 0)) return;
    if (store && !x->nlock && tk_get(x, vid))
        refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: a value read under a lock is stored after the lock's release (its value depends on the order the blocks take the lock)");
    for (d = 0; d < rank; d++) {
        const rv *iv = &x->v[op->opd[first + d]];
        if (!part && pv->vflav == IT_VIEW_GATHER && d == pv->sparse) {
            sp = iv;
            idx[d] = 0;
        } else {
            idx[d] = sext(iv->b[0], it_int_width(iv->et));
            if (!part && pv->vflav == IT_VIEW_STRIDED) idx[d] *= pv->tstep[d];
        }
        n *= pv->tile[d];
    }
    rm_strides(rank, pv->tile, tst);
    if (r) sh_need(x, op, r, 0);
    if (r && x->nlock) {
        t = tk_set(x, op, op->res[0], 1, r->n);
        for (i = 0; i < r->n; i++) t->el[i] = -1;
    }
    for (i = 0; i < n; i++) {
        int64_t rem = i, off = 0;
        int inb = 1;
        uint64_t addr;
        for (d = 0; d < rank; d++) {
            int64_t td = rem / tst[d], c;
            int td2 = part ? pv->dim_map[d] : d;
            rem %= tst[d];
            if (part) c = idx[d] * pv->tile[d] + td;
            else if (sp && d == pv->sparse) c = sext(sp->b[td], it_int_width(sp->et));
            else c = idx[d] + td;
            if (c < 0 || c >= pv->vshape[td2]) inb = 0;
            else off += c * pv->vstr[td2];
        }
        if (!inb) {
            if (r) {
                if (pv->padding != IT_PAD_NONE) it_bnd_point(pv->et, r->b[i], &r->slo[i], &r->shi[i], &r->sfl[i]);
                else sh_top(r, i);
            }
            continue;
        }
        addr = pv->base + (uint64_t)(off * eb);
        if (!isf) { /* an integer store under a lock: only the lock's own word */
            cs_store_lane(x, op, vid, i, NULL, 0, addr);
            continue;
        }
        sh_lane(x, op, store, vid, i, addr, pv->et, val, r, t);
    }
    if (r) sh_settle(r);
}

/* ---------------------------------------------------------------- atomics */

/* A float atomic add of [vl, vh] into element e: the element is the sum, in any order, of its value before
 * the first such add and every term since (f32: the device's atom.add may flush subnormals). */
static void sh_atomic_add(X *x, const it_op *op, mreg *m, int64_t e, int et, int ftz, double vl, double vh, uint8_t vf, int locked)
{
    double a = fabs(vl) > fabs(vh) ? fabs(vl) : fabs(vh);
    int64_t n = (int64_t)(m->n / (size_t)m->seb);
    if (!m->acn) {
        m->acn = (int *)calloc((size_t)(n ? n : 1), sizeof(int));
        m->acl = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->ach = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->aca = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        m->acf = (uint8_t *)malloc((size_t)(n ? n : 1));
        if (!m->acn || !m->acl || !m->ach || !m->aca || !m->acf) INTERNAL(x, op, "out of memory for the atomic sums of %lld elements", (long long)n);
    }
    if (!m->acn[e]) {
        double l = m->slo[e], h = m->shi[e];
        m->acl[e] = l;
        m->ach[e] = h;
        m->aca[e] = fabs(l) > fabs(h) ? fabs(l) : fabs(h);
        m->acf[e] = (uint8_t)((m->sfl[e] & IT_BF_NAN) | (isinf(l) || isinf(h) ? 1 : 0));
    }
    it_bnd_acc(&m->acl[e], &m->ach[e], &m->aca[e], vl, vh, a);
    m->acf[e] |= (uint8_t)((vf & IT_BF_NAN) | (isinf(vl) || isinf(vh) ? 1 : 0));
    m->acn[e]++;
    cs_marks(x, op, m, m->seb);
    cs_mark(x, op, m, e, CS_ADDED);
    m->csm[e] |= (uint8_t)(locked ? CS_LOCKADD : CS_ATOMADD);
    if ((m->csm[e] & CS_LOCKADD) && (m->csm[e] & CS_ATOMADD))
        refuse(x, ER_INTERP_UNSUPPORTED, op,
               "bounds mode: element %lld of memory %d is summed into both under a lock and by an atomic add (the first add: line "
               "%d): an atomic add landing between a critical section's load and store is lost, which this model does not carry",
               (long long)e, (int)(m - x->mem), m->csaop ? m->csaop->line : op->line);
    m->cseq[e]++;
    it_bnd_anysum(et, ftz, m->acn[e], m->acl[e], m->ach[e], m->aca[e], m->acf[e] & 1, (uint8_t)(m->acf[e] & IT_BF_NAN),
                  &m->slo[e], &m->shi[e], &m->sfl[e]);
}

/* One lane of a float atomic other than an add (exchange, max, min, compare-and-swap): decided only where
 * the memory element and the operands are exact; the element then holds the run's (exact) value. */
static void sh_atomic_exact(X *x, const it_op *op, mreg *m, int64_t e, int et, const rv *v1, const rv *v2, int64_t i)
{
    int k;
    const rv *vs[2];
    vs[0] = v1;
    vs[1] = v2;
    if (m && (m->sfl[e] || m->slo[e] != m->shi[e]))
        UNDECIDED(x, op, "lane %lld: the memory element holds [%.9g, %.9g]%s, not one value, and this atomic's outcome depends on it",
                  (long long)i, m->slo[e], m->shi[e], m->sfl[e] ? " or NaN" : "");
    for (k = 0; k < 2; k++) {
        const rv *v = vs[k];
        int64_t j;
        if (!v || !v->has_s) continue;
        j = v->n == 1 ? 0 : i;
        if (v->sfl[j] || v->slo[j] != v->shi[j])
            UNDECIDED(x, op, "lane %lld: operand %d lies in [%.9g, %.9g]%s, not one value, and this atomic's outcome depends on it", (long long)i, k + 1,
                      v->slo[j], v->shi[j], v->sfl[j] ? " or NaN" : "");
    }
    if (m) {
        uint64_t now = mem_read(m->data + e * m->seb, m->seb, et);
        it_bnd_point(et, now, &m->slo[e], &m->shi[e], &m->sfl[e]);
        if (m->acn) m->acn[e] = 0;
        if (m->cseq) m->cseq[e]++;
    }
}

/* atomic_rmw_tko / atomic_cas_tko on floats (integer atomics are exact: the run's). A float add's old value
 * depends on the order of the adds: its lanes are anything (a use that must be decided is refused). */
static void bnd_atomic(X *x, const it_op *op)
{
    int cas = op->code == OP_ATOMIC_CAS;
    const rv *ptr = &x->v[op->opd[0]], *v1 = &x->v[op->opd[1]], *v2 = cas ? &x->v[op->opd[2]] : NULL;
    const rv *mask = op->has_mask ? &x->v[op->opd[cas ? 3 : 2]] : NULL;
    int et = ptr->pet, add = !cas && op->pred == RMW_ADDF;
    rv *r = &x->v[op->res[0]];
    int64_t i, e;
    if (!it_is_float(et)) return;
    if (add) sh_need(x, op, r, 1);
    for (i = 0; i < ptr->n; i++) {
        mreg *m;
        if (mask && !(mask->b[mask->n == 1 ? 0 : i] & 1u)) continue;
        m = sh_mem(x, op, ptr->b[i], et, 1, &e);
        if (add) {
            double l, h;
            uint8_t f;
            if (!m) refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: a float atomic add into memory that keeps no enclosures (lane %lld)", (long long)i);
            it_sv sv = sv_of(v1);
            it_bnd_lane(&sv, i, &l, &h, &f);
            sh_atomic_add(x, op, m, e, et, et == ER_FMT_F32, l, h, f, 0);
            sh_top(r, i);
        } else {
            sh_atomic_exact(x, op, m, e, et, v1, v2, i);
        }
    }
}

/* atomic_red_view_tko on floats: each in-bounds element an atomic add (or an exact exchange / max / min). */
static void bnd_atomic_red(X *x, const it_op *op)
{
    const rv *pv = &x->v[op->opd[0]], *val = &x->v[op->opd[1 + op->nidx]];
    int rank = op->nidx, d, eb = it_elem_bytes(pv->et);
    int64_t idx[IT_MAXRANK], tst[IT_MAXRANK], i, n = 1, e;
    if (!it_is_float(pv->et) || eb <= 0) return;
    for (d = 0; d < rank; d++) {
        const rv *iv = &x->v[op->opd[1 + d]];
        idx[d] = sext(iv->b[0], it_int_width(iv->et));
        n *= pv->tile[d];
    }
    rm_strides(rank, pv->tile, tst);
    for (i = 0; i < n; i++) {
        int64_t off;
        mreg *m;
        if (!view_elem_off(pv, rank, idx, tst, i, &off)) continue;
        m = sh_mem(x, op, pv->base + (uint64_t)(off * eb), pv->et, 1, &e);
        if (op->pred == RMW_ADDF) {
            double l, h;
            uint8_t f;
            if (!m) refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: a float atomic add into memory that keeps no enclosures (element %lld)", (long long)i);
            if (val->has_s) {
                l = val->slo[i];
                h = val->shi[i];
                f = val->sfl[i];
            } else {
                it_bnd_point(val->et, val->b[i], &l, &h, &f);
            }
            sh_atomic_add(x, op, m, e, pv->et, pv->et == ER_FMT_F32, l, h, f, 0);
        } else {
            sh_atomic_exact(x, op, m, e, pv->et, val, NULL, i);
        }
    }
}

/* ---------------------------------------------------------------- data movement */

static void bnd_shape(X *x, const it_op *op)
{
    const rv *a = &x->v[op->opd[0]];
    const rv *b = op->code == OP_CAT ? &x->v[op->opd[1]] : NULL;
    rv *r = &x->v[op->res[0]];
    const it_type *rt = &op->rty[0];
    int64_t i, sst[IT_MAXRANK], rst[IT_MAXRANK], base[IT_MAXRANK] = {0};
    int d, rank = rt->rank;
    if (!it_is_float(r->et) || (!a->has_s && !(b && b->has_s))) return;
    sh_need(x, op, r, 0);
    rm_strides(a->rank, a->shape, sst);
    rm_strides(rank, rt->shape, rst);
    if (op->code == OP_EXTRACT)
        for (d = 0; d < rank; d++) base[d] = (int64_t)x->v[op->opd[1 + d]].b[0] * rt->shape[d];
    for (i = 0; i < r->n; i++) {
        int64_t rem = i, src = 0;
        const rv *s = a;
        if (op->code == OP_RESHAPE) {
            src = i;
        } else if (op->code == OP_CAT) {
            int64_t coords[IT_MAXRANK], bst[IT_MAXRANK];
            for (d = 0; d < rank; d++) {
                coords[d] = rem / rst[d];
                rem %= rst[d];
            }
            if (coords[op->dim] >= a->shape[op->dim]) {
                s = b;
                coords[op->dim] -= a->shape[op->dim];
            }
            rm_strides(s->rank, s->shape, bst);
            for (d = 0; d < rank; d++) src += coords[d] * bst[d];
        } else {
            for (d = 0; d < rank; d++) {
                int64_t c = rem / rst[d];
                rem %= rst[d];
                if (op->code == OP_BROADCAST) src += (a->shape[d] == 1 ? 0 : c) * sst[d];
                else if (op->code == OP_PERMUTE) src += c * sst[op->ilist[d]];
                else src += (base[d] + c) * sst[d];
            }
        }
        sh_put(r, i, s, src);
    }
}

/* ---------------------------------------------------------------- reduce and scan */

/* A region that is one addf, maxf or minf of its two arguments: folded in any order (interp_bounds.c). */
static const it_op *fold_op(const it_op *op)
{
    const it_region *body = op->region[0];
    const it_op *f;
    if (op->nopd != 1 || !body || body->nops != 2 || body->nargs != 2) return NULL;
    f = &body->ops[0];
    if (f->code != OP_ADDF && f->code != OP_MAXF && f->code != OP_MINF) return NULL;
    if (body->ops[1].code != OP_YIELD || body->ops[1].nopd != 1 || body->ops[1].opd[0] != f->res[0]) return NULL;
    if (f->nopd != 2 || !((f->opd[0] == body->args[0] && f->opd[1] == body->args[1]) || (f->opd[0] == body->args[1] && f->opd[1] == body->args[0])))
        return NULL;
    if (f->rnd != IT_RND_DEFAULT && f->rnd != ER_RND_NEAREST_EVEN) return NULL;
    return f;
}

static void bnd_reduce_lanes(X *x, const it_op *op, rv *arg, const rv *in, int64_t n, int64_t kk, int64_t inner)
{
    int64_t i;
    if (!in->has_s || fold_op(op)) return; /* a one-op fold gets its any-order bound after the region (bnd_reduce) */
    sh_need(x, op, arg, 0);
    for (i = 0; i < arg->n; i++) {
        int64_t o = i / inner, q = i % inner, src = (o * n + kk) * inner + q;
        sh_put(arg, i, in, src);
    }
}

static void bnd_scan_store(X *x, const it_op *op, rv *res, const rv *acc, int64_t n, int64_t kk, int64_t inner)
{
    int64_t i;
    if (!acc->has_s && !res->has_s) return;
    sh_need(x, op, res, 1);
    for (i = 0; i < acc->n; i++) {
        int64_t o = i / inner, q = i % inner, dst = (o * n + kk) * inner + q;
        sh_put(res, dst, acc, i);
    }
}

static void bnd_reduce(X *x, const it_op *op)
{
    const it_op *f = fold_op(op);
    const rv *in = &x->v[op->opd[0]];
    rv *res = &x->v[op->res[0]];
    int dim = op->dim, k, scan = op->code == OP_SCAN;
    int64_t n = in->shape[dim], outer = 1, inner = 1, i;
    it_sv s;
    if (!f || !it_is_float(in->et)) return; /* other regions: their ops carried the enclosures */
    if (!in->has_s && f->code != OP_ADDF && !f->ftz) return; /* max / min of exact values: exact */
    for (k = 0; k < in->rank; k++) {
        if (k < dim) outer *= in->shape[k];
        if (k > dim) inner *= in->shape[k];
    }
    s = sv_of(in);
    sh_need(x, op, res, 0);
    for (i = 0; i < outer * inner; i++) {
        int64_t o = i / inner, q = i % inner, off = o * n * inner + q;
        if (scan)
            it_bnd_fold(f->code, in->et, f->ftz && in->et == ER_FMT_F32, f->nan_prop, op->cdata[0], &s, off, inner, n, 1, op->reverse,
                        res->slo + off, res->shi + off, res->sfl + off, inner);
        else
            it_bnd_fold(f->code, in->et, f->ftz && in->et == ER_FMT_F32, f->nan_prop, op->cdata[0], &s, off, inner, n, 0, 0,
                        res->slo + i, res->shi + i, res->sfl + i, 1);
    }
}

/* ---------------------------------------------------------------- mma */

/* Called by exec_mma in place of er_mma: the result (the same rounded answer into args->d) and its bounds
 * for the standard, kept in x until bnd_mma_attach gives them to the result's slot. */
static er_status bnd_mma_exec(X *x, const it_op *op, er_mma_args *args)
{
    const rv *a = &x->v[op->opd[0]], *b = &x->v[op->opd[1]], *c = &x->v[op->opd[2]];
    const rv *opr[3];
    double *slack[3] = {NULL, NULL, NULL};
    int64_t n = c->n;
    int q;
    er_status st;
    opr[0] = a;
    opr[1] = b;
    opr[2] = c;
    if (op->code == OP_MMAI) return er_mma(args);
    if (op->code == OP_MMAF_SCALED && (x->v[op->opd[3]].has_s || x->v[op->opd[4]].has_s))
        refuse(x, ER_INTERP_UNSUPPORTED, op, "bounds mode: the block scales of mmaf_scaled must be exact (loaded, not computed)");
    for (q = 0; q < 3; q++) {
        const rv *o = opr[q];
        int64_t i, nz = 0;
        it_sv s;
        if (!o->has_s) continue;
        s = sv_of(o);
        slack[q] = (double *)malloc((size_t)o->n * sizeof(double));
        if (!slack[q]) {
            free(slack[0]); free(slack[1]);
            return ER_ENOMEM;
        }
        for (i = 0; i < o->n; i++)
            if ((slack[q][i] = it_bnd_slack(&s, i)) != 0) nz++;
        if (!nz) {
            free(slack[q]);
            slack[q] = NULL;
        }
    }
    free(x->mlo);
    free(x->mhi);
    free(x->mfl);
    x->mlo = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    x->mhi = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    x->mfl = (uint8_t *)malloc((size_t)(n ? n : 1));
    if (!x->mlo || !x->mhi || !x->mfl) {
        for (q = 0; q < 3; q++) free(slack[q]);
        return ER_ENOMEM;
    }
    st = it_bnd_mma(x->bo, op->fast_acc, args, slack, x->mlo, x->mhi, x->mfl, args->msg, args->msg_size); /* frees slack */
    if (st == ER_EUNSUPPORTED) refuse(x, ER_INTERP_UNSUPPORTED, op, "%s", args->msg);
    return st;
}

static void bnd_mma_attach(X *x, const it_op *op, rv *r)
{
    if (op->code == OP_MMAI || !x->mlo) return;
    sh_need(x, op, r, 0);
    memcpy(r->slo, x->mlo, (size_t)r->n * sizeof(double));
    memcpy(r->shi, x->mhi, (size_t)r->n * sizeof(double));
    memcpy(r->sfl, x->mfl, (size_t)r->n);
}

/* ---------------------------------------------------------------- the hook */

static int bnd_approx(const it_op *op)
{
    return op->code == OP_EXP2 || op->rnd == IT_RND_APPROX || op->rnd == IT_RND_FULL || op->ftz;
}

static void bnd_after(X *x, const it_op *op)
{
    if (x->ntk && op->code != OP_STORE_VIEW && op->code != OP_STORE_PTR && !bnd_taint_sum(x, op)) {
        int k; /* a value read under a lock used other than in old + v: its elements are marked */
        for (k = 0; k < op->nopd; k++) bnd_taint_use(x, op, op->opd[k]);
    }
    switch (op->code) {
    case OP_LOAD_VIEW: bnd_view_access(x, op, 0); return;
    case OP_STORE_VIEW:
        bnd_view_access(x, op, 1);
        if (x->nlock) cs_release(x);
        return;
    case OP_LOAD_PTR: bnd_ptr_access(x, op, 0); return;
    case OP_STORE_PTR:
        bnd_ptr_access(x, op, 1);
        if (x->nlock) cs_release(x);
        return;
    case OP_BROADCAST: case OP_RESHAPE: case OP_PERMUTE: case OP_EXTRACT: case OP_CAT:
        bnd_shape(x, op);
        return;
    case OP_SELECT: {
        const rv *c = &x->v[op->opd[0]], *a = &x->v[op->opd[1]], *b = &x->v[op->opd[2]];
        rv *r = &x->v[op->res[0]];
        int64_t i;
        if (!it_is_float(r->et) || (!a->has_s && !b->has_s)) return;
        sh_need(x, op, r, 0);
        for (i = 0; i < r->n; i++) {
            int s = (c->b[c->n == 1 ? 0 : i] & 1u) != 0;
            const rv *src = s ? a : b;
            sh_put(r, i, src, src->n == 1 ? 0 : i);
        }
        return;
    }
    case OP_ADDF: case OP_SUBF: case OP_MULF: case OP_DIVF: case OP_MAXF: case OP_MINF: case OP_REMF: case OP_ATAN2:
    case OP_POW: case OP_FMA: case OP_SQRT: case OP_FLOOR: case OP_CEIL: case OP_NEGF: case OP_ABSF: case OP_EXP:
    case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_RSQRT: case OP_TANH: case OP_SINH: case OP_COSH: case OP_SIN:
    case OP_COS: case OP_TAN: case OP_FTOF: {
        const rv *a = &x->v[op->opd[0]];
        const rv *b = op->nopd > 1 ? &x->v[op->opd[1]] : NULL;
        const rv *c = op->nopd > 2 ? &x->v[op->opd[2]] : NULL;
        rv *r = &x->v[op->res[0]];
        it_sv sa, sb, sc;
        if (!a->has_s && !(b && b->has_s) && !(c && c->has_s) && !bnd_approx(op)) return; /* one rounding of exact values */
        sa = sv_of(a);
        if (b) sb = sv_of(b);
        if (c) sc = sv_of(c);
        sh_need(x, op, r, 0);
        it_bnd_ew(x->bo, op, r->et, r->n, &sa, b ? &sb : NULL, c ? &sc : NULL, r->slo, r->shi, r->sfl);
        return;
    }
    case OP_CMPF: {
        const rv *a = &x->v[op->opd[0]], *b = &x->v[op->opd[1]];
        const rv *r = &x->v[op->res[0]];
        it_sv sa, sb;
        int64_t i;
        if (!a->has_s && !b->has_s) return;
        sa = sv_of(a);
        sb = sv_of(b);
        for (i = 0; i < r->n; i++) {
            int d;
            if (lane_undef(r, i)) continue;
            d = it_bnd_cmpf(op, &sa, &sb, i);
            if (d < 0) {
                double al, ah, bl, bh;
                uint8_t af, bf;
                it_bnd_lane(&sa, i, &al, &ah, &af);
                it_bnd_lane(&sb, i, &bl, &bh, &bf);
                UNDECIDED(x, op, "the comparison of element %lld is not decided: [%.9g, %.9g]%s against [%.9g, %.9g]%s "
                                 "(a correct device may answer either way)", (long long)i, al, ah, (af & IT_BF_NAN) ? " or NaN" : "",
                          bl, bh, (bf & IT_BF_NAN) ? " or NaN" : "");
            }
            if ((uint64_t)d != (r->b[i] & 1u)) INTERNAL(x, op, "bounds mode: the run's comparison lies outside its enclosure (element %lld)", (long long)i);
        }
        return;
    }
    case OP_FTOI: case OP_BITCAST: case OP_PACK: {
        const rv *a = &x->v[op->opd[0]];
        int64_t i;
        if (!a->has_s || !it_is_float(a->et)) return;
        for (i = 0; i < a->n; i++) {
            double l = a->slo[i], h = a->shi[i];
            int ok = !(a->sfl[i] & IT_BF_NAN);
            if (lane_undef(a, i)) continue;
            if (op->code == OP_FTOI) ok = ok && l > -1.0 / 0.0 && h < 1.0 / 0.0 && trunc(l) == trunc(h);
            else ok = ok && l == h && l != 0; /* a bit pattern: one value (a zero's sign is not known) */
            if (!ok)
                UNDECIDED(x, op, "element %lld is not decided: the value lies in [%.9g, %.9g]%s, which %s", (long long)i, l, h,
                          (a->sfl[i] & IT_BF_NAN) ? " or is NaN" : "",
                          op->code == OP_FTOI ? "truncates to more than one integer" : "holds more than one bit pattern");
        }
        return;
    }
    case OP_REDUCE: case OP_SCAN:
        bnd_reduce(x, op);
        return;
    case OP_FPOWI: {
        const rv *a = &x->v[op->opd[0]], *ev = &x->v[op->opd[1]];
        rv *r = &x->v[op->res[0]];
        int64_t i;
        if (!a->has_s) return; /* one rounding of an exact value: the run's */
        sh_need(x, op, r, 0);
        for (i = 0; i < r->n; i++) {
            int64_t k = a->n == 1 ? 0 : i;
            it_bnd_fpowi(r->et, a->slo[k], a->shi[k], a->sfl[k], sext(ev->b[ev->n == 1 ? 0 : i], it_int_width(ev->et)), &r->slo[i], &r->shi[i], &r->sfl[i]);
        }
        return;
    }
    case OP_INSERT: {
        const rv *v = &x->v[op->opd[0]], *t = &x->v[op->opd[1]];
        rv *r = &x->v[op->res[0]];
        int64_t base[IT_MAXRANK], vst[IT_MAXRANK], tst[IT_MAXRANK], i;
        int d, rank = t->rank;
        if (!it_is_float(r->et) || (!v->has_s && !t->has_s)) return;
        sh_need(x, op, r, 0);
        for (i = 0; i < t->n; i++) sh_put(r, i, t, i);
        for (d = 0; d < rank; d++) base[d] = (int64_t)x->v[op->opd[2 + d]].b[0] * v->shape[d];
        rm_strides(rank, v->shape, vst);
        rm_strides(rank, t->shape, tst);
        for (i = 0; i < v->n; i++) {
            int64_t rem = i, dst = 0;
            for (d = 0; d < rank; d++) {
                dst += (base[d] + rem / vst[d]) * tst[d];
                rem %= vst[d];
            }
            sh_put(r, dst, v, i);
        }
        sh_settle(r);
        return;
    }
    case OP_ALLOCA: {
        /* zeroed again (not `global`): its enclosures, if any, are gone with the values */
        mreg *m = &x->mem[(x->v[op->res[0]].b[0] >> IT_ADDR_SHIFT) - 1];
        if (!op->reverse && m->slo) {
            int64_t k, n = (int64_t)(m->n / (size_t)m->seb);
            for (k = 0; k < n; k++) it_bnd_point(m->sfmt, 0, &m->slo[k], &m->shi[k], &m->sfl[k]);
            if (m->acn) memset(m->acn, 0, (size_t)n * sizeof *m->acn);
        }
        return;
    }
    case OP_ATOMIC_RMW: case OP_ATOMIC_CAS:
        bnd_atomic(x, op);
        if (op->code == OP_ATOMIC_CAS) cs_acquire(x, op);
        if (x->nlock) cs_release(x);
        return;
    case OP_ATOMIC_RED:
        bnd_atomic_red(x, op);
        if (x->nlock) cs_release(x);
        return;
    default:
        return;
    }
}

#endif /* ER_INTERP_BOUNDS_EXEC_H */
