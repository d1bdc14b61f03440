/* er_progress.h: the progress hook's counting, shared by the host-side backends (internal, inline). */
#ifndef ER_PROGRESS_H
#define ER_PROGRESS_H

#include <stdint.h>

/*
 * One computation's progress: `total` units (elements of the output), of which `base` were done
 * before this part started (a batch of the bounds).  Worker threads call er_progress_add as rows
 * complete; the hook fn(ctx, fraction) is then called:
 *   - never from two threads at once (a thread that finds another reporting skips its report),
 *   - with fractions that strictly increase, the part's end always reported (exactly 1 at the end of
 *     the last part) by the thread that completes its last unit, after any report in flight returns,
 *   - at most once per 1/128 of the work (reports cost nothing next to the work).
 * The counter is an atomic; the hook sees only the count, never the data: the results' bits cannot
 * depend on it.  A NULL er_progress, or one with no fn, does nothing.
 */
typedef struct er_progress {
    void (*fn)(void *ctx, double fraction);
    void *ctx;
    int64_t base, units, total;
    int64_t done;   /* atomic: units done in this part */
    int64_t next;   /* atomic: the count at which the next report is due */
    int busy;       /* atomic: a report is being made */
    double last;    /* the last fraction reported (under busy) */
} er_progress;

/* Start a part of `units` units after `base` of `total` (whole computation: base 0, units = total). */
static inline void er_progress_init(er_progress *p, void (*fn)(void *, double), void *ctx, int64_t base,
                                    int64_t units, int64_t total)
{
    p->fn = total > 0 && units > 0 ? fn : (void (*)(void *, double))0;
    p->ctx = ctx;
    p->base = base;
    p->units = units;
    p->total = total;
    p->done = 0;
    p->next = total / 128 > 0 ? total / 128 : 1;
    p->busy = 0;
    p->last = (double)base / (double)(total > 0 ? total : 1);
}

/* `units` more units done (any thread). */
static inline void er_progress_add(er_progress *p, int64_t units)
{
#if defined(__GNUC__) || defined(__clang__)
    if (!p || !p->fn || units <= 0) return;
    int64_t step = p->total / 128 > 0 ? p->total / 128 : 1;
    int64_t d = __atomic_add_fetch(&p->done, units, __ATOMIC_ACQ_REL);
    int final = d >= p->units && d - units < p->units;
    if (!final && d < __atomic_load_n(&p->next, __ATOMIC_RELAXED)) return;
    if (final) { /* the last report: wait for one in flight, then report 1 */
        while (__atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE)) {
        }
    } else if (__atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE)) {
        return;
    }
    d = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
    if (d > p->units) d = p->units;
    double f = p->base + d >= p->total ? 1.0 : (double)(p->base + d) / (double)p->total;
    if (f > p->last) {
        p->last = f;
        p->fn(p->ctx, f);
    }
    __atomic_store_n(&p->next, d + step, __ATOMIC_RELAXED);
    __atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
#else
    (void)p;
    (void)units;
#endif
}

/* A device's report after a part (a batch, a chunk): units [0, end) of total are done. */
static inline void er_progress_part_done(void (*fn)(void *, double), void *ctx, int64_t end, int64_t total)
{
    if (fn && total > 0 && end > 0) fn(ctx, end >= total ? 1.0 : (double)end / (double)total);
}

#endif /* ER_PROGRESS_H */
