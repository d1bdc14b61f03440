/* sha256.h: a small SHA-256 (FIPS 180-4), for the golden hashes of tests/opencl/test_golden.c. */
#ifndef ER_TEST_SHA256_H
#define ER_TEST_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct er_sha256 {
    uint32_t h[8];
    uint64_t len;           /* bytes hashed so far */
    unsigned char buf[64];  /* a partial block */
    size_t used;            /* bytes in buf */
} er_sha256;

void er_sha256_init(er_sha256 *s);
void er_sha256_update(er_sha256 *s, const void *data, size_t n);
/* The digest as 32 bytes, and as 64 lowercase hex digits and a NUL into hex (may be NULL). */
void er_sha256_final(er_sha256 *s, unsigned char digest[32], char hex[65]);

#endif
