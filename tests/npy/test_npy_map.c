/* test_npy_map.c: the memory-mapped reader (_er_npy_map_read, _er_npy_to_tensor_mapped) against the
 * reader that reads into memory (er_npy_read, er_npy_to_tensor): the same status, the same message and
 * the same array and tensor bits for every corpus file, random mutations of the valid ones and arrays
 * of every storage kind; tensors in place exactly where the file's bytes are the patterns; pages given
 * back and read again unchanged.  Files are written only under a temporary directory of its own. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/npy.h"
#include "npy_internal.h"

#ifndef ER_NPY_CORPUS_DIR
#error "ER_NPY_CORPUS_DIR must name tests/npy/corpus"
#endif

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/er_npy_map_XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[512];
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

static const int declared[] = {-1, ER_FMT_F64, ER_FMT_F32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_TF32, ER_FMT_F8E4M3FN,
                               ER_FMT_F8E5M2, ER_FMT_F4E2M1FN, ER_FMT_I8, ER_FMT_U8, ER_FMT_I16, ER_FMT_I32};
#define NDECL ((int)(sizeof declared / sizeof declared[0]))

/* Both readers on path: the same status, message and array; then every declared format through both
 * conversions: the same status, message and tensor.  Returns the number of tensors made in place. */
static int compare_readers(const char *path)
{
    er_npy a, b;
    _er_npy_map map;
    char m1[1024], m2[1024];
    int in_place = 0;
    er_status s1 = er_npy_read(path, &a, m1, sizeof m1);
    er_status s2 = _er_npy_map_read(path, &b, &map, m2, sizeof m2);
    ck_assert_msg(s1 == s2, "%s: read %d (%s), mapped %d (%s)", path, s1, m1, s2, m2);
    ck_assert_msg(!strcmp(m1, m2), "%s: messages differ: \"%s\" and \"%s\"", path, m1, m2);
    if (s1 != ER_OK) {
        ck_assert_ptr_null(b.data);
        ck_assert_ptr_null(map.base);
        return 0;
    }
    ck_assert_str_eq(a.descr, b.descr);
    ck_assert_int_eq(a.ndim, b.ndim);
    for (int d = 0; d < a.ndim; d++) ck_assert_int_eq(a.shape[d], b.shape[d]);
    ck_assert_uint_eq(a.nbytes, b.nbytes);
    ck_assert_ptr_nonnull(b.data);
    ck_assert(a.nbytes == 0 || memcmp(a.data, b.data, a.nbytes) == 0);
    /* an array with data is mapped (a regular file on a file system that maps) */
    ck_assert(a.nbytes == 0 ? map.base == NULL : _er_npy_map_holds(&map, b.data, b.nbytes));
    for (int k = 0; k < NDECL; k++) {
        er_tensor t1, t2;
        void *st1 = NULL, *st2 = NULL;
        s1 = er_npy_to_tensor(&a, path, declared[k], &t1, &st1, m1, sizeof m1);
        s2 = _er_npy_to_tensor_mapped(&b, &map, path, declared[k], &t2, &st2, m2, sizeof m2);
        ck_assert_msg(s1 == s2, "%s as %d: %d (%s) and %d (%s)", path, declared[k], s1, m1, s2, m2);
        ck_assert_msg(!strcmp(m1, m2), "%s as %d: messages differ: \"%s\" and \"%s\"", path, declared[k], m1, m2);
        if (s1 == ER_OK) {
            er_format_info fi;
            int64_t n = 1;
            ck_assert_int_eq(t1.format, t2.format);
            ck_assert_int_eq(t1.ndim, t2.ndim);
            for (int d = 0; d < t1.ndim; d++) {
                ck_assert_int_eq(t1.shape[d], t2.shape[d]);
                ck_assert_int_eq(t1.strides[d], t2.strides[d]);
                n *= t1.shape[d];
            }
            er_format_get_info(t1.format, &fi);
            ck_assert(n == 0 || memcmp(t1.data, t2.data, (size_t)n * (size_t)fi.storage_bytes) == 0);
            ck_assert_ptr_eq(t1.data, st1);
            if (st2) ck_assert_ptr_eq(t2.data, st2);
            else {
                /* in place: the file's own bytes, of a format whose every storage pattern is valid */
                ck_assert_ptr_eq(t2.data, b.data);
                ck_assert(fi.width == 8 * fi.storage_bytes && fi.padding_bits == 0);
                in_place++;
            }
        } else {
            ck_assert_ptr_null(st2);
        }
        free(st1);
        free(st2);
    }
    er_npy_free(&a);
    _er_npy_map_release(&b, &map);
    ck_assert_ptr_null(map.base);
    return in_place;
}

START_TEST(corpus_and_mutations_agree)
{
    uint64_t state = er_test_seed("corpus_and_mutations_agree");
    DIR *dir = opendir(ER_NPY_CORPUS_DIR);
    struct dirent *e;
    char path[1024], mpath[512];
    long files = 0, mutations = 0;
    ck_assert_ptr_nonnull(dir);
    make_tmpdir();
    while ((e = readdir(dir)) != NULL) {
        FILE *f;
        unsigned char buf[1 << 16];
        size_t len;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", ER_NPY_CORPUS_DIR, e->d_name);
        compare_readers(path);
        files++;
        if (strncmp(e->d_name, "ok_", 3) != 0) continue;
        f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        for (int r = 0; r < 300; r++) {
            unsigned char p[1 << 16];
            size_t plen = len;
            int nmut = 1 + (int)(er_test_rand(&state) % 3);
            memcpy(p, buf, len);
            for (int m = 0; m < nmut; m++) {
                uint64_t x = er_test_rand(&state);
                p[x % len] = (unsigned char)(x >> 32);
            }
            if (er_test_rand(&state) % 8 == 0) plen = (size_t)(er_test_rand(&state) % (len + 1)); /* cut */
            snprintf(mpath, sizeof mpath, "%s/m.npy", tmpdir);
            f = fopen(mpath, "wb");
            ck_assert_ptr_nonnull(f);
            ck_assert_uint_eq(fwrite(p, 1, plen, f), plen);
            ck_assert_int_eq(fclose(f), 0);
            compare_readers(mpath);
            mutations++;
        }
    }
    closedir(dir);
    remove_tmpdir();
    printf("corpus_and_mutations_agree: %ld corpus files, %ld mutated files\n", files, mutations);
    ck_assert_int_ge(files, 38);
}
END_TEST

/* Write an r x c array of dtype descr with data into the temporary directory; its path. */
static const char *write_array(const char *name, const char *descr, int64_t r, int64_t c, const void *data)
{
    static char path[512];
    char msg[512];
    int64_t shape[2] = {r, c};
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    ck_assert_msg(er_npy_write(path, descr, 2, shape, data, msg, sizeof msg) == ER_OK, "%s", msg);
    return path;
}

/* Whether the mapped conversion of path as fmt is in place (and agrees with the other reader). */
static int in_place(const char *path, int fmt)
{
    er_npy b;
    _er_npy_map map;
    er_tensor t;
    void *st = NULL;
    char msg[512];
    int r;
    compare_readers(path);
    ck_assert_int_eq(_er_npy_map_read(path, &b, &map, msg, sizeof msg), ER_OK);
    ck_assert_msg(_er_npy_to_tensor_mapped(&b, &map, path, fmt, &t, &st, msg, sizeof msg) == ER_OK, "%s", msg);
    r = st == NULL;
    free(st);
    _er_npy_map_release(&b, &map);
    return r;
}

START_TEST(in_place_exactly_where_the_bytes_are_the_patterns)
{
    uint64_t state = er_test_seed("in_place_exactly_where_the_bytes_are_the_patterns");
    enum { R = 37, C = 29 };
    static uint16_t u2[R * C];
    static uint8_t u1[R * C], small[R * C];
    static float f4[R * C], f4tf[R * C], f4bf[R * C];
    static int32_t i4[R * C];
    for (int e = 0; e < R * C; e++) {
        uint64_t x = er_test_rand(&state);
        uint32_t w = (uint32_t)x;
        u2[e] = (uint16_t)x;
        u1[e] = (uint8_t)(x >> 16);
        small[e] = (uint8_t)((x >> 24) & 0x0f);
        w = (w & 0x807fffffu) | (UINT32_C(120) << 23); /* finite */
        memcpy(&f4[e], &w, 4);
        w &= 0xffffe000u;
        memcpy(&f4tf[e], &w, 4);
        w &= 0xffff0000u;
        memcpy(&f4bf[e], &w, 4);
        i4[e] = (int32_t)(x >> 40) - (1 << 23);
    }
    make_tmpdir();
    ck_assert(in_place(write_array("u2.npy", "<u2", R, C, u2), ER_FMT_BF16));
    ck_assert(in_place(write_array("u2.npy", "<u2", R, C, u2), ER_FMT_F16));
    ck_assert(in_place(write_array("u1.npy", "|u1", R, C, u1), ER_FMT_F8E4M3FN));
    ck_assert(in_place(write_array("u1.npy", "|u1", R, C, u1), ER_FMT_U8));
    ck_assert(in_place(write_array("i1.npy", "|i1", R, C, u1), ER_FMT_I8));
    ck_assert(in_place(write_array("f4.npy", "<f4", R, C, f4), ER_FMT_F32));
    ck_assert(in_place(write_array("f4.npy", "<f4", R, C, f4), -1));
    ck_assert(in_place(write_array("i4.npy", "<i4", R, C, i4), ER_FMT_I32));
    /* a conversion, a format narrower than its storage, values to be changed: a decoded copy */
    ck_assert(!in_place(write_array("small.npy", "|u1", R, C, small), ER_FMT_F4E2M1FN));
    ck_assert(!in_place(write_array("f4tf.npy", "<f4", R, C, f4tf), ER_FMT_TF32));
    ck_assert(!in_place(write_array("f4bf.npy", "<f4", R, C, f4bf), ER_FMT_BF16));
    ck_assert(!in_place(write_array("i4.npy", "<i4", R, C, i4), ER_FMT_F32));
    ck_assert(!in_place(write_array("f4.npy", "<f4", R, C, f4), ER_FMT_F64));
    remove_tmpdir();
}
END_TEST

/* An array past the reader's give-back step (4 Mi elements): the pages given back while checking
 * are read again unchanged, and a bad last element gives the same message from both readers. */
START_TEST(large_array_pages_given_back)
{
    enum { R = 2100, C = 2100 };
    uint64_t state = er_test_seed("large_array_pages_given_back");
    uint8_t *p = malloc((size_t)R * C);
    er_npy b;
    _er_npy_map map;
    er_tensor t;
    void *st = NULL;
    char msg[512];
    const char *path;
    ck_assert_ptr_nonnull(p);
    for (size_t e = 0; e < (size_t)R * C; e++) p[e] = (uint8_t)(er_test_rand(&state) & 0x0f);
    make_tmpdir();
    path = write_array("big.npy", "|u1", R, C, p);
    ck_assert_int_eq(_er_npy_map_read(path, &b, &map, msg, sizeof msg), ER_OK);
    ck_assert_msg(_er_npy_to_tensor_mapped(&b, &map, path, ER_FMT_F8E4M3FN, &t, &st, msg, sizeof msg) == ER_OK, "%s",
                  msg);
    ck_assert_ptr_null(st);
    ck_assert(memcmp(t.data, p, (size_t)R * C) == 0);
    _er_npy_map_drop(&map, t.data, (size_t)R * C);
    ck_assert(memcmp(t.data, p, (size_t)R * C) == 0);
    /* a range outside the mapping is left alone (malloc'd memory is never given back) */
    _er_npy_map_drop(&map, p, (size_t)R * C);
    ck_assert_int_eq(p[(size_t)R * C - 1] & 0xf0, 0);
    ck_assert_int_eq(_er_npy_map_holds(&map, p, 1), 0);
    _er_npy_map_release(&b, &map);
    p[(size_t)R * C - 1] = 0x1f; /* bits above f4E2M1FN's 4-bit width */
    path = write_array("big.npy", "|u1", R, C, p);
    ck_assert_int_eq(_er_npy_map_read(path, &b, &map, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(_er_npy_to_tensor_mapped(&b, &map, path, ER_FMT_F4E2M1FN, &t, &st, msg, sizeof msg), ER_EPATTERN);
    ck_assert_msg(strstr(msg, "element [2099, 2099] = 0x1f") != NULL, "%s", msg);
    _er_npy_map_release(&b, &map);
    compare_readers(path);
    free(p);
    remove_tmpdir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("npy_map");
    TCase *tc = tcase_create("npy_map");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, corpus_and_mutations_agree);
    tcase_add_test(tc, in_place_exactly_where_the_bytes_are_the_patterns);
    tcase_add_test(tc, large_array_pages_given_back);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
