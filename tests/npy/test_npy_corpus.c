/* test_npy_corpus.c: every file of tests/npy/corpus gives the status and message it should, through
 * er_npy_read and er_npy_parse alike; every prefix and many mutations of valid files are refused or
 * read without going out of bounds (run under ASan by scripts/test.sh). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/npy.h"

#ifndef ER_NPY_CORPUS_DIR
#error "ER_NPY_CORPUS_DIR must name tests/npy/corpus"
#endif

/* What each corpus file must give: status, and a phrase of the message.  Valid files: dtype and shape. */
static const struct {
    const char *file;
    er_status status;
    const char *phrase; /* bad files: part of the message; ok files: the descr */
    int ndim;
    int64_t shape[3];
} cases[] = {
    {"ok_f8_2x3.npy", ER_OK, "<f8", 2, {2, 3}},
    {"ok_f4_v2.npy", ER_OK, "<f4", 2, {2, 2}},
    {"ok_u1_v3.npy", ER_OK, "|u1", 2, {3, 2}},
    {"ok_i4_scalar.npy", ER_OK, "<i4", 0, {0}},
    {"ok_f2_1d.npy", ER_OK, "<f2", 1, {3}},
    {"ok_i8_empty.npy", ER_OK, "<i8", 2, {0, 4}},
    {"ok_i2_native_order.npy", ER_OK, "<i2", 3, {1, 2, 2}},
    {"ok_u2_python2.npy", ER_OK, "<u2", 2, {2, 2}},
    {"ok_i1_double_quotes.npy", ER_OK, "|i1", 2, {2, 2}},
    {"bad_empty.npy", ER_EINVAL, "empty file", 0, {0}},
    {"bad_magic.npy", ER_EINVAL, "bad magic", 0, {0}},
    {"bad_magic_short.npy", ER_EINVAL, "bad magic", 0, {0}},
    {"bad_version.npy", ER_EINVAL, "unsupported .npy format version 4.0", 0, {0}},
    {"bad_truncated_preamble.npy", ER_EINVAL, "truncated: the file ends inside the header length", 0, {0}},
    {"bad_header_len.npy", ER_EINVAL, "header length 1000 goes beyond the end of the file", 0, {0}},
    {"bad_header_len_v2.npy", ER_EINVAL, "header length 4294967295 goes beyond the end of the file", 0, {0}},
    {"bad_truncated.npy", ER_EINVAL, "truncated: the shape (3, 4) of '<f8' needs 96 bytes", 0, {0}},
    {"bad_trailing.npy", ER_EINVAL, "trailing bytes: 4 bytes after the 8 bytes", 0, {0}},
    {"bad_lying_shape.npy", ER_EINVAL, "truncated: the shape (1000000, 1000000) of '<f8' needs 8000000000000", 0, {0}},
    {"bad_huge.npy", ER_EINVAL, "huge dimensions", 0, {0}},
    {"bad_huge_product.npy", ER_EINVAL, "huge dimensions", 0, {0}},
    {"bad_huge_digits.npy", ER_EINVAL, "huge dimensions", 0, {0}},
    {"bad_negative.npy", ER_EINVAL, "negative dimension -3", 0, {0}},
    {"bad_fortran.npy", ER_EINVAL, "Fortran-order arrays are not supported; use np.ascontiguousarray", 0, {0}},
    {"bad_bigendian.npy", ER_EINVAL, "big-endian dtype '>f8' is not supported", 0, {0}},
    {"bad_dtype.npy", ER_EINVAL, "unsupported dtype '<c16'", 0, {0}},
    {"bad_byteorder.npy", ER_EINVAL, "dtype '|f8' has a byte order that is not valid", 0, {0}},
    {"bad_structured.npy", ER_EINVAL, "structured dtypes", 0, {0}},
    {"bad_not_dict.npy", ER_EINVAL, "the header is not a dict literal", 0, {0}},
    {"bad_garbage_dict.npy", ER_EINVAL, "bad header syntax at byte 9 of the header: ':' after a key", 0, {0}},
    {"bad_missing_key.npy", ER_EINVAL, "missing the key 'shape'", 0, {0}},
    {"bad_extra_key.npy", ER_EINVAL, "unexpected key 'foo'", 0, {0}},
    {"bad_duplicate_key.npy", ER_EINVAL, "the key 'descr' appears twice", 0, {0}},
    {"bad_unterminated.npy", ER_EINVAL, "bad header syntax at byte 53 of the header: the closing quote of a string", 0, {0}},
    {"bad_shape_not_tuple.npy", ER_EINVAL, "'shape' is \"(3)\", an integer, not a tuple", 0, {0}},
    {"bad_too_many_dims.npy", ER_EINVAL, "more than 8 dimensions", 0, {0}},
    {"bad_after_dict.npy", ER_EINVAL, "only spaces and a newline after the header dict", 0, {0}},
    {"bad_nul_in_header.npy", ER_EINVAL, "bad header syntax at byte 54 of the header: ',' or '}' after a value, found \"??}", 0, {0}},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* The whole file (malloc'd, at least 1 byte) and its length. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(1 << 16);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(buf);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void path_of(char *buf, size_t size, const char *file)
{
    snprintf(buf, size, "%s/%s", ER_NPY_CORPUS_DIR, file);
}

START_TEST(every_corpus_file)
{
    char path[1024], msg[512], msg2[512];
    for (size_t c = 0; c < NCASES; c++) {
        er_npy a, b;
        size_t len;
        unsigned char *bytes;
        er_status st, st2;
        path_of(path, sizeof path, cases[c].file);
        st = er_npy_read(path, &a, msg, sizeof msg);
        ck_assert_msg(st == cases[c].status, "%s: status %d, expected %d (%s)", cases[c].file, st,
                      cases[c].status, msg);
        bytes = slurp(path, &len);
        st2 = er_npy_parse(bytes, len, cases[c].file, &b, msg2, sizeof msg2);
        ck_assert_msg(st2 == st, "%s: parse gave %d, read %d (%s)", cases[c].file, st2, st, msg2);
        if (st == ER_OK) {
            int64_t n = 1;
            ck_assert_str_eq(a.descr, cases[c].phrase);
            ck_assert_int_eq(a.ndim, cases[c].ndim);
            for (int d = 0; d < a.ndim; d++) {
                ck_assert_int_eq(a.shape[d], cases[c].shape[d]);
                n *= a.shape[d];
            }
            ck_assert_uint_eq(a.nbytes, (size_t)n * a.itemsize);
            ck_assert_ptr_nonnull(a.data);
            ck_assert_str_eq(b.descr, a.descr);
            ck_assert_uint_eq(b.nbytes, a.nbytes);
            ck_assert(a.nbytes == 0 || memcmp(a.data, b.data, a.nbytes) == 0);
            ck_assert(a.nbytes == 0 || memcmp(a.data, bytes + len - a.nbytes, a.nbytes) == 0);
            ck_assert_str_eq(msg, "");
        } else {
            ck_assert_msg(strstr(msg, path) != NULL, "%s: the message does not name the file: %s",
                          cases[c].file, msg);
            ck_assert_msg(strstr(msg, cases[c].phrase) != NULL, "%s: message \"%s\" lacks \"%s\"",
                          cases[c].file, msg, cases[c].phrase);
            ck_assert_msg(strstr(msg2, cases[c].file) != NULL && strstr(msg2, cases[c].phrase) != NULL,
                          "%s: parse message \"%s\"", cases[c].file, msg2);
            ck_assert_ptr_null(a.data);
            ck_assert_ptr_null(b.data);
        }
        er_npy_free(&a);
        er_npy_free(&b);
        free(bytes);
    }
}
END_TEST

/* Every file of the corpus directory has a row above (a new file needs its expectation). */
START_TEST(corpus_is_all_listed)
{
    DIR *dir = opendir(ER_NPY_CORPUS_DIR);
    struct dirent *e;
    size_t seen = 0;
    ck_assert_ptr_nonnull(dir);
    while ((e = readdir(dir)) != NULL) {
        size_t c;
        if (e->d_name[0] == '.') continue;
        for (c = 0; c < NCASES && strcmp(cases[c].file, e->d_name) != 0; c++) {}
        ck_assert_msg(c < NCASES, "corpus file %s has no expectation in test_npy_corpus.c", e->d_name);
        seen++;
    }
    closedir(dir);
    ck_assert_uint_eq(seen, NCASES);
}
END_TEST

/* Every proper prefix of every valid file is refused (never read out of bounds: ASan watches), and so is
 * the file with one byte more. */
START_TEST(prefixes_are_refused)
{
    char path[1024], msg[512];
    for (size_t c = 0; c < NCASES; c++) {
        size_t len;
        unsigned char *bytes;
        if (cases[c].status != ER_OK) continue;
        path_of(path, sizeof path, cases[c].file);
        bytes = slurp(path, &len);
        for (size_t k = 0; k < len; k++) {
            er_npy a;
            /* An exact-size copy, so that ASan sees any read past the end. */
            unsigned char *p = malloc(k ? k : 1);
            memcpy(p, bytes, k);
            ck_assert_msg(er_npy_parse(p, k, cases[c].file, &a, msg, sizeof msg) == ER_EINVAL,
                          "%s: prefix of %zu bytes accepted", cases[c].file, k);
            ck_assert(strstr(msg, cases[c].file) != NULL);
            free(p);
        }
        {
            er_npy a;
            unsigned char *p = malloc(len + 1);
            memcpy(p, bytes, len);
            p[len] = 0;
            ck_assert_int_eq(er_npy_parse(p, len + 1, cases[c].file, &a, msg, sizeof msg), ER_EINVAL);
            ck_assert(strstr(msg, "trailing bytes: 1 bytes") != NULL);
            free(p);
        }
        free(bytes);
    }
}
END_TEST

/* Random byte mutations of valid files: any status, but a consistent array when it is ER_OK, and a
 * conversion to a tensor that never fails for a reason other than the documented ones. */
START_TEST(mutations_are_safe)
{
    static const int declared[] = {-1, ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F4E2M1FN, ER_FMT_I32, ER_FMT_TF32};
    uint64_t state = er_test_seed("mutations_are_safe");
    char path[1024], msg[512];
    long accepted = 0, tensors = 0;
    for (size_t c = 0; c < NCASES; c++) {
        size_t len;
        unsigned char *bytes;
        if (cases[c].status != ER_OK) continue;
        path_of(path, sizeof path, cases[c].file);
        bytes = slurp(path, &len);
        for (int r = 0; r < 3000; r++) {
            er_npy a;
            unsigned char *p = malloc(len);
            int nmut = 1 + (int)(er_test_rand(&state) % 3);
            memcpy(p, bytes, len);
            for (int m = 0; m < nmut; m++) {
                uint64_t x = er_test_rand(&state);
                p[x % len] = (unsigned char)(x >> 32);
            }
            if (er_npy_parse(p, len, cases[c].file, &a, msg, sizeof msg) == ER_OK) {
                int64_t n = 1;
                accepted++;
                for (int d = 0; d < a.ndim; d++) n *= a.shape[d];
                ck_assert_uint_eq(a.nbytes, (size_t)n * a.itemsize);
                for (size_t k = 0; k < sizeof declared / sizeof declared[0]; k++) {
                    er_tensor t;
                    void *storage = NULL;
                    er_status st = er_npy_to_tensor(&a, cases[c].file, declared[k], &t, &storage, msg, sizeof msg);
                    ck_assert(st == ER_OK || st == ER_EINVAL || st == ER_EINEXACT || st == ER_EPATTERN);
                    if (st == ER_OK) {
                        tensors++;
                        ck_assert_ptr_eq(t.data, storage);
                    } else {
                        ck_assert(storage == NULL && strstr(msg, cases[c].file) != NULL);
                    }
                    free(storage);
                }
            } else {
                ck_assert(strstr(msg, cases[c].file) != NULL);
            }
            er_npy_free(&a);
            free(p);
        }
        free(bytes);
    }
    printf("mutations_are_safe: %ld mutated files accepted, %ld tensors\n", accepted, tensors);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("npy_corpus");
    TCase *tc = tcase_create("npy_corpus");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_corpus_file);
    tcase_add_test(tc, corpus_is_all_listed);
    tcase_add_test(tc, prefixes_are_refused);
    tcase_add_test(tc, mutations_are_safe);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
