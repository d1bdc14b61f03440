/* er_par.h: the one thread fork/join of the library's parallel loops (internal, host/er_par.c). */
#ifndef ER_PAR_H
#define ER_PAR_H

#include <stddef.h>

/* The most threads one loop runs (the calling thread included); more are run by fewer threads. */
#define ER_PAR_MAX 256

/*
 * Run f(ctx, i) once for every i in 0 .. n-1, on at most `threads` threads (at most n and ER_PAR_MAX; the
 * calling thread is one of them), and return when every call has returned.  The threads take the next
 * index in turn, so the order and the thread of each call are not fixed: f(ctx, i) must depend only on
 * i (and on what it alone writes).  A thread that cannot be started is no error: the threads that run
 * (the calling one at least) take its indices.  Nothing is allocated; the threads start in IEEE's
 * default floating-point environment only if the caller runs in it (host/er_fpenv.h).
 */
void er_par_for(int n, int threads, void (*f)(void *ctx, int i), void *ctx);

/* The usual shape of it: fn(&job[t]) for each of the n jobs of `size` bytes at jobs, on n threads (the
 * calling thread one of them); fn's return value is not used. */
void er_par_jobs(void *(*fn)(void *), void *jobs, size_t size, int n);

#endif /* ER_PAR_H */
