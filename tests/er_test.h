/* er_test.h: helpers shared by the test programs (seeded random numbers, pattern printing). */
#ifndef ER_TEST_H
#define ER_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The seed of a random test: EXACTREF_SEED from the environment, else a fixed default; printed. */
static inline uint64_t er_test_seed(const char *test)
{
    const char *s = getenv("EXACTREF_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 0) : UINT64_C(0x5eed2026);
    printf("%s: seed 0x%llx (set EXACTREF_SEED to change)\n", test, (unsigned long long)seed);
    fflush(stdout);
    return seed;
}

/* splitmix64: small, fast, good enough for test vectors. */
static inline uint64_t er_test_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

#endif
