/* er_par.c: the one thread fork/join of the library's parallel loops (host/er_par.h). */
#include <pthread.h>

#include "er_par.h"

typedef struct {
    void (*f)(void *ctx, int i);
    void *ctx;
    int n, next; /* next: the next index to take (atomic) */
} er_par_state;

static void *er_par_worker(void *arg)
{
    er_par_state *s = (er_par_state *)arg;
    for (;;) {
        int i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
        if (i >= s->n) break;
        s->f(s->ctx, i);
    }
    return NULL;
}

void er_par_for(int n, int threads, void (*f)(void *ctx, int i), void *ctx)
{
    pthread_t th[ER_PAR_MAX];
    int started[ER_PAR_MAX];
    er_par_state s;
    int T = threads < 1 ? 1 : threads;
    if (n <= 0) return;
    if (T > n) T = n;
    if (T > ER_PAR_MAX) T = ER_PAR_MAX;
    s.f = f;
    s.ctx = ctx;
    s.n = n;
    s.next = 0;
    for (int t = 1; t < T; t++) started[t] = pthread_create(&th[t], NULL, er_par_worker, &s) == 0;
    er_par_worker(&s);
    for (int t = 1; t < T; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

typedef struct {
    void *(*fn)(void *);
    char *jobs;
    size_t size;
} er_par_jobs_ctx;

static void er_par_job(void *ctx, int i)
{
    er_par_jobs_ctx *c = (er_par_jobs_ctx *)ctx;
    (void)c->fn(c->jobs + (size_t)i * c->size);
}

void er_par_jobs(void *(*fn)(void *), void *jobs, size_t size, int n)
{
    er_par_jobs_ctx c;
    c.fn = fn;
    c.jobs = (char *)jobs;
    c.size = size;
    er_par_for(n, n, er_par_job, &c);
}
