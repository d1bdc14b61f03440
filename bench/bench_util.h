/* bench_util.h: the clock, the pseudo-random generators and the product's arguments that every benchmark program shares. */
#ifndef ER_BENCH_UTIL_H
#define ER_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

#include "exactref/exactref.h"

/* Seconds on the monotonic clock (only differences mean anything). */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* xorshift64 (shifts 13, 7, 17): the next state of *s, which is also the value returned. */
static inline uint64_t bench_xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* splitmix64: advances *s by the golden-ratio step and returns the mixed value. */
static inline uint64_t bench_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* er_mma_args for d = a b, the library's defaults for everything else. */
static inline void bench_mma_args(er_mma_args *x, const er_tensor *a, const er_tensor *b, er_tensor *d)
{
    er_mma_args_init(x);
    x->a = a;
    x->b = b;
    x->d = d;
}

/* er_mma(x) with its message into msg and its statistics into stats (NULL: none); the seconds it took into
 * *secs; its status returned */
static inline int bench_mma_timed(er_mma_args *x, er_mma_stats *stats, char *msg, size_t msg_size, double *secs)
{
    x->stats = stats;
    x->msg = msg;
    x->msg_size = msg_size;
    double t0 = bench_now();
    int rc = er_mma(x);
    *secs = bench_now() - t0;
    return rc;
}

#endif
