/* test_npy.c: .npy round trips for every dtype and every format, strided tensors, value exactness with
 * the index and value in the message, and atomic writes that leave nothing behind when they fail. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/npy.h"
#include "npy_internal.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/er_npy_XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Remove the files of tmpdir and tmpdir itself. */
static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[512];
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        if (remove(p) != 0) rmdir(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void tpath(char *buf, size_t size, const char *file) { snprintf(buf, size, "%s/%s", tmpdir, file); }

static int storage_of(int fmt)
{
    er_format_info fi;
    ck_assert_int_eq(er_format_get_info(fmt, &fi), ER_OK);
    return fi.storage_bytes;
}

static uint64_t load(const void *p, int size)
{
    const unsigned char *b = p;
    uint64_t v = 0;
    for (int i = size - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static void store(void *p, int size, uint64_t v)
{
    unsigned char *b = p;
    for (int i = 0; i < size; i++, v >>= 8) b[i] = (unsigned char)v;
}

/* Element (b, i, j) of a tensor (2-D: b ignored), by its strides: the first ndim entries. */
static uint64_t tget(const er_tensor *t, int64_t b, int64_t i, int64_t j)
{
    int sb = storage_of(t->format);
    int64_t off = t->ndim == 3 ? b * t->strides[0] + i * t->strides[1] + j * t->strides[2]
                               : i * t->strides[0] + j * t->strides[1];
    return load((const unsigned char *)t->data + off * sb, sb);
}

/* A valid pattern of fmt: element k of an exhaustive sweep for narrow formats, random otherwise, with
 * the special patterns (zero, sign, largest, all ones) among the first. */
static uint64_t pattern(int fmt, uint64_t k, uint64_t *state)
{
    er_format_info fi;
    uint64_t mask, x;
    er_format_get_info(fmt, &fi);
    mask = fi.width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << fi.width) - 1u;
    if (fi.width <= 8)
        x = k & mask;
    else if (k == 0) x = 0;
    else if (k == 1) x = UINT64_C(1) << (fi.width - 1);
    else if (k == 2) x = fi.max_finite_bits;
    else if (k == 3) x = mask;
    else if (k == 4) x = mask >> 1;
    else if (k == 5) x = fi.min_subnormal_bits;
    else x = er_test_rand(state) & mask;
    if (fi.padding_bits) x &= ~((UINT64_C(1) << fi.padding_bits) - 1u);
    return x;
}

static const char *native_descr(int fmt)
{
    switch (fmt) {
    case ER_FMT_F64: return "<f8";
    case ER_FMT_F32: case ER_FMT_TF32: return "<f4";
    case ER_FMT_F16: return "<f2";
    case ER_FMT_I8: return "|i1";
    case ER_FMT_U8: return "|u1";
    case ER_FMT_I16: return "<i2";
    case ER_FMT_I32: return "<i4";
    case ER_FMT_I64: return "<i8";
    case ER_FMT_BF16: return "<u2";
    default: return "|u1";
    }
}

/* Every format, 2-D and 3-D: er_npy_write_tensor, er_npy_read, er_npy_to_tensor give the same bits. */
START_TEST(round_trip_every_format)
{
    uint64_t state = er_test_seed("round_trip_every_format");
    char path[512], msg[512];
    make_tmpdir();
    for (int fmt = 0; fmt < ER_FMT_COUNT; fmt++) {
        for (int nd = 2; nd <= 3; nd++) {
            er_format_info fi;
            int64_t shape[3];
            int sb = storage_of(fmt);
            er_format_get_info(fmt, &fi);
            if (nd == 2) shape[0] = 4, shape[1] = fi.width <= 8 ? 64 : 7, shape[2] = 1;
            else shape[0] = 2, shape[1] = fi.width <= 8 ? 16 : 3, shape[2] = fi.width <= 8 ? 8 : 5;
            int64_t n = shape[0] * shape[1] * shape[2];
            unsigned char *data = malloc((size_t)(n * sb));
            for (int64_t k = 0; k < n; k++) store(data + k * sb, sb, pattern(fmt, (uint64_t)k, &state));
            er_tensor t;
            memset(&t, 0, sizeof t);
            t.format = fmt;
            t.ndim = nd;
            t.data = data;
            for (int d = 0; d < nd; d++) t.shape[d] = shape[d];
            t.strides[nd - 1] = 1;
            for (int d = nd - 2; d >= 0; d--) t.strides[d] = t.strides[d + 1] * t.shape[d + 1];
            snprintf(path, sizeof path, "%s/%s_%dd.npy", tmpdir, fi.name, nd);
            ck_assert_msg(er_npy_write_tensor(path, &t, msg, sizeof msg) == ER_OK, "%s", msg);

            er_npy a;
            ck_assert_msg(er_npy_read(path, &a, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_str_eq(a.descr, native_descr(fmt));
            ck_assert_int_eq(a.ndim, nd);
            for (int d = 0; d < nd; d++) ck_assert_int_eq(a.shape[d], shape[d]);

            /* Declared as itself, and (native dtypes) undeclared: the same patterns. */
            for (int pass = 0; pass < 2; pass++) {
                int declared = pass == 0 ? fmt : -1;
                er_tensor u;
                void *storage;
                er_status st = er_npy_to_tensor(&a, path, declared, &u, &storage, msg, sizeof msg);
                if (pass == 1 && fmt == ER_FMT_BF16) {
                    ck_assert_int_eq(st, ER_EINVAL);
                    ck_assert_msg(strstr(msg, "uint16 arrays hold raw patterns: declare their format"), "%s", msg);
                    continue;
                }
                ck_assert_msg(st == ER_OK, "%s declared %d: %s", fi.name, declared, msg);
                int expect_fmt = declared != -1 ? fmt
                                 : fmt == ER_FMT_TF32 ? ER_FMT_F32
                                 : fi.width <= 8 && fi.kind == ER_KIND_FLOAT ? ER_FMT_U8 : fmt;
                ck_assert_int_eq(u.format, expect_fmt);
                ck_assert_int_eq(u.ndim, nd);
                ck_assert_ptr_eq(u.data, storage);
                for (int64_t k = 0; k < n; k++) {
                    int64_t b = nd == 3 ? k / (shape[1] * shape[2]) : 0;
                    int64_t i = nd == 3 ? k / shape[2] % shape[1] : k / shape[1];
                    int64_t j = nd == 3 ? k % shape[2] : k % shape[1];
                    uint64_t want = load(data + k * sb, sb), got = tget(&u, b, i, j);
                    ck_assert_msg(got == want, "%s %dd declared %d: element %lld is 0x%llx, wrote 0x%llx", fi.name,
                                  nd, declared, (long long)k, (unsigned long long)got, (unsigned long long)want);
                }
                free(storage);
            }
            er_npy_free(&a);
            free(data);
        }
    }
    remove_tmpdir();
}
END_TEST

/* er_npy_write and er_npy_read for every dtype and 0-D to 8-D shapes: same header fields, same bytes;
 * the header is a 64-byte-aligned version 1.0 header in numpy's spelling. */
START_TEST(round_trip_every_dtype)
{
    static const char *const descrs[] = {"<f8", "<f4", "<f2", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8"};
    static const int sizes[] = {8, 4, 2, 1, 1, 2, 2, 4, 4, 8};
    uint64_t state = er_test_seed("round_trip_every_dtype");
    char path[512], msg[512];
    make_tmpdir();
    for (size_t k = 0; k < sizeof descrs / sizeof descrs[0]; k++) {
        for (int nd = 0; nd <= 8; nd++) {
            int64_t shape[8];
            size_t n = 1;
            for (int d = 0; d < nd; d++) shape[d] = 1 + (int64_t)((d + k) % 3), n *= (size_t)shape[d];
            unsigned char *data = malloc(n * (size_t)sizes[k]);
            for (size_t b = 0; b < n * (size_t)sizes[k]; b++) data[b] = (unsigned char)er_test_rand(&state);
            snprintf(path, sizeof path, "%s/dt%zu_%d.npy", tmpdir, k, nd);
            ck_assert_msg(er_npy_write(path, descrs[k], nd, shape, data, msg, sizeof msg) == ER_OK, "%s", msg);
            er_npy a;
            ck_assert_msg(er_npy_read(path, &a, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_str_eq(a.descr, descrs[k]);
            ck_assert_int_eq(a.ndim, nd);
            ck_assert_uint_eq(a.itemsize, (size_t)sizes[k]);
            ck_assert_uint_eq(a.nbytes, n * (size_t)sizes[k]);
            for (int d = 0; d < nd; d++) ck_assert_int_eq(a.shape[d], shape[d]);
            ck_assert(memcmp(a.data, data, a.nbytes) == 0);
            er_npy_free(&a);
            free(data);
        }
    }
    /* The exact bytes of one header. */
    {
        double v[6] = {1, 2, 3, 4, 5, 6};
        int64_t shape[2] = {2, 3};
        static const char dict[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
        unsigned char buf[256];
        FILE *f;
        size_t len;
        tpath(path, sizeof path, "header.npy");
        /* '=' is accepted and normalised to '<' on a little-endian host. */
        ck_assert_int_eq(er_npy_write(path, "=f8", 2, shape, v, msg, sizeof msg), ER_OK);
        f = fopen(path, "rb");
        len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        ck_assert_uint_eq(len, 128 + 48);
        ck_assert(memcmp(buf, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
        ck_assert(memcmp(buf + 10, dict, sizeof dict - 1) == 0);
        for (size_t k = 10 + sizeof dict - 1; k < 127; k++) ck_assert_int_eq(buf[k], ' ');
        ck_assert_int_eq(buf[127], '\n');
        ck_assert(memcmp(buf + 128, v, 48) == 0);
        /* 1-D and 0-D shapes are spelled "(3,)" and "()". */
        ck_assert_int_eq(er_npy_write(path, "<f8", 1, shape + 1, v, msg, sizeof msg), ER_OK);
        f = fopen(path, "rb");
        len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        ck_assert(strstr((char *)buf + 10, "'shape': (3,), }") != NULL);
        ck_assert_int_eq(er_npy_write(path, "<f8", 0, NULL, v, msg, sizeof msg), ER_OK);
        f = fopen(path, "rb");
        len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        ck_assert_uint_eq(len, 128 + 8);
        ck_assert(strstr((char *)buf + 10, "'shape': (), }") != NULL);
    }
    /* Writing refuses what reading would refuse. */
    {
        int64_t shape[2] = {2, -1}, huge[2] = {INT64_C(1) << 40, 2};
        double v = 0;
        tpath(path, sizeof path, "refused.npy");
        ck_assert_int_eq(er_npy_write(path, ">f8", 1, shape, &v, msg, sizeof msg), ER_EINVAL);
        ck_assert(strstr(msg, "big-endian") != NULL);
        ck_assert_int_eq(er_npy_write(path, "<c8", 1, shape, &v, msg, sizeof msg), ER_EINVAL);
        ck_assert(strstr(msg, "unsupported dtype '<c8'") != NULL);
        ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, &v, msg, sizeof msg), ER_EINVAL);
        ck_assert(strstr(msg, "negative dimension -1") != NULL);
        ck_assert_int_eq(er_npy_write(path, "<f8", 2, huge, &v, msg, sizeof msg), ER_EINVAL);
        ck_assert(strstr(msg, "huge dimensions") != NULL);
        ck_assert_int_eq(er_npy_write(path, "<f8", 9, huge, &v, msg, sizeof msg), ER_EINVAL);
        ck_assert_int_eq(access(path, F_OK), -1);
    }
    remove_tmpdir();
}
END_TEST

/* Transposed and padded (strided) tensors are gathered: the file holds the logical C-order array. */
START_TEST(strided_tensors)
{
    static const int fmts[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F8E4M3FN, ER_FMT_F4E2M1FN, ER_FMT_I64, ER_FMT_TF32};
    uint64_t state = er_test_seed("strided_tensors");
    char path[512], msg[512];
    make_tmpdir();
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        int fmt = fmts[f], sb = storage_of(fmt);
        /* A 5 x 3 row-major matrix viewed transposed as 3 x 5. */
        unsigned char m[15 * 8];
        for (int k = 0; k < 15; k++) store(m + k * sb, sb, pattern(fmt, (uint64_t)k + 6, &state));
        er_tensor t;
        memset(&t, 0, sizeof t);
        t.format = fmt;
        t.ndim = 2;
        t.shape[0] = 3, t.shape[1] = 5;
        t.strides[0] = 1, t.strides[1] = 3;
        t.data = m;
        tpath(path, sizeof path, "transposed.npy");
        ck_assert_msg(er_npy_write_tensor(path, &t, msg, sizeof msg) == ER_OK, "%s", msg);
        er_npy a;
        ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(a.ndim, 2);
        ck_assert_int_eq(a.shape[0], 3);
        ck_assert_int_eq(a.shape[1], 5);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 5; j++)
                ck_assert_uint_eq(load((unsigned char *)a.data + (i * 5 + j) * sb, sb),
                                  load(m + (j * 3 + i) * sb, sb));
        er_npy_free(&a);

        /* A 3-D batch of 2 x (2 x 3) blocks inside a 2 x 4 x 5 buffer (row and batch padding), and a
         * zero batch stride (the same matrix broadcast twice). */
        unsigned char big[40 * 8];
        for (int k = 0; k < 40; k++) store(big + k * sb, sb, pattern(fmt, (uint64_t)k + 6, &state));
        for (int zero_batch = 0; zero_batch < 2; zero_batch++) {
            memset(&t, 0, sizeof t);
            t.format = fmt;
            t.ndim = 3;
            t.shape[0] = 2, t.shape[1] = 2, t.shape[2] = 3;
            t.strides[0] = zero_batch ? 0 : 20, t.strides[1] = 5, t.strides[2] = 1;
            t.data = big;
            tpath(path, sizeof path, "padded.npy");
            ck_assert_msg(er_npy_write_tensor(path, &t, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_OK);
            ck_assert_int_eq(a.ndim, 3);
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 3; j++)
                        ck_assert_uint_eq(load((unsigned char *)a.data + ((b * 2 + i) * 3 + j) * sb, sb),
                                          tget(&t, b, i, j));
            er_npy_free(&a);
        }
    }
    remove_tmpdir();
}
END_TEST

/* Write an f64 / f32 / integer array, read it back as a tensor of a declared format. */
static er_status to_tensor_of(const char *file, const char *descr, int ndim, const int64_t *shape,
                              const void *data, int declared, er_tensor *t, void **storage, char *msg,
                              size_t msg_size)
{
    char path[512];
    er_npy a;
    er_status st;
    tpath(path, sizeof path, file);
    ck_assert_msg(er_npy_write(path, descr, ndim, shape, data, msg, msg_size) == ER_OK, "%s", msg);
    ck_assert_msg(er_npy_read(path, &a, msg, msg_size) == ER_OK, "%s", msg);
    st = er_npy_to_tensor(&a, file, declared, t, storage, msg, msg_size);
    er_npy_free(&a);
    return st;
}

static void expect_error(er_status got, er_status want, const char *msg, const char *const *phrases)
{
    ck_assert_msg(got == want, "status %d, expected %d: %s", got, want, msg);
    for (; *phrases; phrases++)
        ck_assert_msg(strstr(msg, *phrases) != NULL, "message \"%s\" lacks \"%s\"", msg, *phrases);
}

#define PHRASES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* float32 arrays declared bf16 (the common way to save bf16 values): every binary32 pattern whose low
 * half is zero, and each with a low bit set, loaded as bf16 give er_convert_bits' pattern where the
 * conversion is exact and an error naming the element where it is not (the loader's shortcut for
 * finite values must agree with the conversion everywhere, NaN and infinities included). */
START_TEST(f32_declared_bf16_every_pattern)
{
    char msg[512];
    make_tmpdir();
    for (int low = 0; low < 3; low++) {
        uint32_t *v = malloc(sizeof(uint32_t) * 65536);
        for (uint32_t h = 0; h < 65536; h++) v[h] = h << 16 | (low == 0 ? 0u : low == 1 ? 1u : 0x8000u);
        int64_t shape[2] = {1, 65536};
        er_tensor t;
        void *storage = NULL;
        er_status st = to_tensor_of("f32bf16.npy", "<f4", 2, shape, v, ER_FMT_BF16, &t, &storage, msg, sizeof msg);
        /* the first pattern whose conversion is not exact: where the loader must stop */
        uint32_t first_bad = 65536;
        for (uint32_t h = 0; h < 65536 && first_bad == 65536; h++) {
            uint64_t out = 0;
            unsigned fl = 0;
            er_convert_bits(ER_FMT_F32, ER_FMT_BF16, v[h], ER_RND_NEAREST_EVEN, 0u, &out, &fl);
            if (fl & (ER_FLAG_INEXACT | ER_FLAG_INVALID | ER_FLAG_OVERFLOW)) first_bad = h;
        }
        if (first_bad == 65536) {
            ck_assert_msg(st == ER_OK, "low %d: %s", low, msg);
            for (uint32_t h = 0; h < 65536; h++) {
                uint64_t out = 0;
                unsigned fl = 0;
                er_convert_bits(ER_FMT_F32, ER_FMT_BF16, v[h], ER_RND_NEAREST_EVEN, 0u, &out, &fl);
                ck_assert_msg(tget(&t, 0, 0, h) == out, "0x%08x: 0x%04llx, want 0x%04llx", v[h],
                              (unsigned long long)tget(&t, 0, 0, h), (unsigned long long)out);
            }
            free(storage);
        } else {
            char at[64];
            snprintf(at, sizeof at, "element [0, %u]", first_bad);
            ck_assert_msg(st != ER_OK, "low %d: accepted, though 0x%08x is not a bf16 value", low, v[first_bad]);
            ck_assert_msg(strstr(msg, at) != NULL, "low %d: message \"%s\" lacks \"%s\"", low, msg, at);
            ck_assert_ptr_null(storage);
        }
        free(v);
    }
    /* every finite pattern with a zero low half accepted: all of them but the NaNs up to 0x7f80 */
    {
        uint32_t *v = malloc(sizeof(uint32_t) * 65536);
        int cnt = 0;
        for (uint32_t h = 0; h < 65536; h++)
            if ((h & 0x7f80u) != 0x7f80u) v[cnt++] = h << 16;
        int64_t shape[2] = {1, cnt};
        er_tensor t;
        void *storage = NULL;
        ck_assert_msg(to_tensor_of("f32bf16f.npy", "<f4", 2, shape, v, ER_FMT_BF16, &t, &storage, msg, sizeof msg) ==
                          ER_OK, "%s", msg);
        for (int e = 0; e < cnt; e++) ck_assert_uint_eq(tget(&t, 0, 0, e), v[e] >> 16);
        free(storage);
        free(v);
    }
    remove_tmpdir();
}
END_TEST

START_TEST(values_must_be_exact)
{
    char msg[512];
    er_tensor t;
    void *storage;
    int64_t s23[2] = {2, 3}, s223[3] = {2, 2, 3};
    make_tmpdir();

    /* 0.1 declared bf16 at [1, 2]: the index and the value, exactly (%a) and in decimal (%.17g). */
    {
        double v[6] = {1, -2, 0.5, 3, 0.375, 0.1};
        er_status st = to_tensor_of("tenth.npy", "<f8", 2, s23, v, ER_FMT_BF16, &t, &storage, msg, sizeof msg);
        expect_error(st, ER_EINEXACT, msg,
                     PHRASES("tenth.npy", "element [1, 2]", "0x1.999999999999ap-4", "0.10000000000000001",
                             "is not exactly representable in bf16"));
        ck_assert_ptr_null(storage);
        /* The same values but 0.1: exact, and the patterns are bf16's. */
        v[5] = -0.0;
        ck_assert_int_eq(to_tensor_of("exact.npy", "<f8", 2, s23, v, ER_FMT_BF16, &t, &storage, msg, sizeof msg),
                         ER_OK);
        ck_assert_int_eq(t.format, ER_FMT_BF16);
        ck_assert_uint_eq(tget(&t, 0, 0, 0), 0x3f80);
        ck_assert_uint_eq(tget(&t, 0, 0, 1), 0xc000);
        ck_assert_uint_eq(tget(&t, 0, 1, 1), 0x3ec0);
        ck_assert_uint_eq(tget(&t, 0, 1, 2), 0x8000);
        free(storage);
    }
    /* 3-D: [b, i, j]; float32 sources print through double. */
    {
        float v[12] = {0};
        v[1 * 6 + 0 * 3 + 2] = 1.0f / 3.0f;
        er_status st = to_tensor_of("third.npy", "<f4", 3, s223, v, ER_FMT_F16, &t, &storage, msg, sizeof msg);
        expect_error(st, ER_EINEXACT, msg, PHRASES("third.npy", "element [1, 0, 2]", "0x1.555556p-2", "f16"));
    }
    /* NaN and infinity only where the format has them. */
    {
        double v[6] = {0, 0, 0, 0, 0, 0};
        v[4] = NAN;
        expect_error(to_tensor_of("nan.npy", "<f8", 2, s23, v, ER_FMT_F6E2M3FN, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("nan.npy", "element [1, 1]", "nan", "f6E2M3FN has no NaN"));
        ck_assert_int_eq(to_tensor_of("nan8.npy", "<f8", 2, s23, v, ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg),
                         ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 1, 1) & 0x7f, 0x7f);
        free(storage);
        v[4] = -INFINITY;
        expect_error(to_tensor_of("inf.npy", "<f8", 2, s23, v, ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("inf.npy", "element [1, 1]", "-inf", "f8E4M3FN has no infinity"));
        expect_error(to_tensor_of("inf4.npy", "<f8", 2, s23, v, ER_FMT_F4E2M1FN, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("inf4.npy", "[1, 1]", "f4E2M1FN has no infinity"));
        ck_assert_int_eq(to_tensor_of("inf5.npy", "<f8", 2, s23, v, ER_FMT_F8E5M2, &t, &storage, msg, sizeof msg),
                         ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 1, 1), 0xfc);
        free(storage);
        /* Beyond the largest finite value, below the least subnormal, negative into unsigned e8m0. */
        v[4] = 480.0;
        expect_error(to_tensor_of("big.npy", "<f8", 2, s23, v, ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[1, 1]", "0x1.ep+8", "480"));
        v[4] = 0x1p-10;
        expect_error(to_tensor_of("tiny.npy", "<f8", 2, s23, v, ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[1, 1]", "0x1p-10", "0.0009765625"));
        for (int k = 0; k < 6; k++) v[k] = 1.0;
        v[2] = -2.0;
        expect_error(to_tensor_of("neg.npy", "<f8", 2, s23, v, ER_FMT_F8E8M0FNU, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[0, 2]", "-0x1p+1", "f8E8M0FNU"));
    }
    /* Float values declared as integers: integers in range. */
    {
        double v[6] = {1, 2, 3, 4, 5, 2.5};
        expect_error(to_tensor_of("frac.npy", "<f8", 2, s23, v, ER_FMT_I32, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("frac.npy", "[1, 2]", "0x1.4p+1", "not an integer in the range of i32"));
        v[5] = -129;
        expect_error(to_tensor_of("i8r.npy", "<f8", 2, s23, v, ER_FMT_I8, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[1, 2]", "-129", "i8"));
        v[5] = -128;
        ck_assert_int_eq(to_tensor_of("i8ok.npy", "<f8", 2, s23, v, ER_FMT_I8, &t, &storage, msg, sizeof msg), ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 1, 2), 0x80);
        free(storage);
    }
    /* Integer arrays: integers, exactly representable in the declared format. */
    {
        int32_t v[6] = {1, 2, 3, 4, 5, 257};
        expect_error(to_tensor_of("i32bf.npy", "<i4", 2, s23, v, ER_FMT_BF16, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("i32bf.npy", "element [1, 2] = 257", "not exactly representable in bf16"));
        v[5] = -256;
        ck_assert_int_eq(to_tensor_of("i32bf2.npy", "<i4", 2, s23, v, ER_FMT_BF16, &t, &storage, msg, sizeof msg),
                         ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 1, 2), 0xc380);
        free(storage);
        /* -256 wraps to 0 in u8 and -384 to -128 in i8: still out of range. */
        expect_error(to_tensor_of("u8r.npy", "<i4", 2, s23, v, ER_FMT_U8, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[1, 2] = -256", "outside the range of u8 [0, 255]"));
        v[5] = -384;
        expect_error(to_tensor_of("i8w.npy", "<i4", 2, s23, v, ER_FMT_I8, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[1, 2] = -384", "outside the range of i8 [-128, 127]"));
        int64_t w[6] = {INT64_MIN, INT64_MAX, 0, -1, 1, 2};
        ck_assert_int_eq(to_tensor_of("i64.npy", "<i8", 2, s23, w, ER_FMT_I64, &t, &storage, msg, sizeof msg), ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 0, 0), UINT64_C(0x8000000000000000));
        free(storage);
        expect_error(to_tensor_of("i64f.npy", "<i8", 2, s23, w, ER_FMT_F64, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[0, 1] = 9223372036854775807", "f64"));
        /* uint8 holds integers when declared as a wider format: 255 into i8 is out of range. */
        uint8_t u[6] = {0, 1, 2, 3, 4, 255};
        ck_assert_int_eq(to_tensor_of("u8f16.npy", "|u1", 2, s23, u, ER_FMT_F16, &t, &storage, msg, sizeof msg),
                         ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 1, 2), 0x5bf8);
        free(storage);
        expect_error(to_tensor_of("u8i8.npy", "|u1", 2, s23, u, ER_FMT_I8, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("[1, 2] = 255", "i8"));
    }
    /* Raw patterns: bits above the width, tf32 padding; uint16 must be declared and be 2-byte patterns. */
    {
        uint8_t u[6] = {0, 1, 0x3f, 0x40, 0, 0};
        expect_error(to_tensor_of("f6.npy", "|u1", 2, s23, u, ER_FMT_F6E2M3FN, &t, &storage, msg, sizeof msg),
                     ER_EPATTERN, msg, PHRASES("f6.npy", "element [1, 0] = 0x40", "bits above its 6-bit width"));
        u[3] = 0x0f;
        expect_error(to_tensor_of("f4.npy", "|u1", 2, s23, u, ER_FMT_F4E2M1FN, &t, &storage, msg, sizeof msg),
                     ER_EPATTERN, msg, PHRASES("f4.npy", "element [0, 2] = 0x3f", "4-bit width"));
        uint32_t w[6] = {0x3f800000, 0x3f802000, 0x3f800001, 0, 0, 0};
        expect_error(to_tensor_of("tf.npy", "<u4", 2, s23, w, ER_FMT_TF32, &t, &storage, msg, sizeof msg),
                     ER_EPATTERN, msg, PHRASES("tf.npy", "element [0, 2] = 0x3f800001", "13 low padding bits"));
        uint16_t h[6] = {0x3c00, 0x7e00, 0xfc00, 1, 2, 3};
        expect_error(to_tensor_of("u16.npy", "<u2", 2, s23, h, -1, &t, &storage, msg, sizeof msg), ER_EINVAL, msg,
                     PHRASES("u16.npy", "uint16 arrays hold raw patterns: declare their format"));
        expect_error(to_tensor_of("u16f8.npy", "<u2", 2, s23, h, ER_FMT_F8E5M2, &t, &storage, msg, sizeof msg),
                     ER_EINVAL, msg, PHRASES("u16f8.npy", "f8E5M2 patterns take 1 byte", "uint8"));
        ck_assert_int_eq(to_tensor_of("u16f16.npy", "<u2", 2, s23, h, ER_FMT_F16, &t, &storage, msg, sizeof msg),
                         ER_OK);
        ck_assert_uint_eq(tget(&t, 0, 0, 1), 0x7e00);
        free(storage);
        /* A float32 array declared tf32: values, which must have tf32's precision. */
        float g[6] = {1.0f, 1.5f, 1.0f + 0x1p-10f, 1.0f + 0x1p-11f, 0, 0};
        expect_error(to_tensor_of("f32tf.npy", "<f4", 2, s23, g, ER_FMT_TF32, &t, &storage, msg, sizeof msg),
                     ER_EINEXACT, msg, PHRASES("f32tf.npy", "[1, 0]", "0x1.002p+0", "tf32"));
    }
    /* Only 2-D and 3-D arrays are tensors; an unknown declared id is refused. */
    {
        double v[6] = {0};
        expect_error(to_tensor_of("one.npy", "<f8", 1, s23 + 1, v, -1, &t, &storage, msg, sizeof msg), ER_EINVAL, msg,
                     PHRASES("one.npy", "2-D or 3-D", "1-D with shape (3,)"));
        expect_error(to_tensor_of("fmt.npy", "<f8", 2, s23, v, 99, &t, &storage, msg, sizeof msg), ER_EINVAL, msg,
                     PHRASES("fmt.npy", "unknown format id 99"));
    }
    remove_tmpdir();
}
END_TEST

/* The output rules (npy.h): a FIFO is written in place and stays a FIFO; a read-only file is kept; a
 * replaced file keeps its mode; a symbolic link's target is replaced and the link stays; the signal mask
 * is restored; nothing is left behind. */
START_TEST(output_rules)
{
    char path[512], link[512], msg[512];
    double v[4] = {1, 2, 3, 4}, w[4] = {5, 6, 7, 8};
    int64_t shape[2] = {2, 2};
    struct stat st;
    er_npy a;
    make_tmpdir();
    /* A FIFO: the bytes arrive through it, the same bytes as a regular file gets. */
    {
        unsigned char want[512], got[512];
        FILE *f;
        size_t wn;
        ssize_t gn;
        tpath(path, sizeof path, "ref.npy");
        ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg), ER_OK);
        f = fopen(path, "rb");
        wn = fread(want, 1, sizeof want, f);
        fclose(f);
        ck_assert_int_eq(remove(path), 0);
        tpath(path, sizeof path, "fifo");
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        int rfd = open(path, O_RDONLY | O_NONBLOCK);
        ck_assert_int_ge(rfd, 0);
        ck_assert_msg(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg) == ER_OK, "%s", msg);
        gn = read(rfd, got, sizeof got);
        close(rfd);
        ck_assert_int_eq((int)gn, (int)wn);
        ck_assert(memcmp(got, want, wn) == 0);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert_msg(S_ISFIFO(st.st_mode), "the FIFO was replaced by a file of mode %o", (unsigned)st.st_mode);
        ck_assert_int_eq(remove(path), 0);
    }
    /* The classification alone (nothing opened or written): a character device such as /dev/null is
     * written in place, never replaced; a directory is refused; a new file is created. */
    {
        struct stat dn;
        if (stat("/dev/null", &dn) == 0 && S_ISCHR(dn.st_mode))
            ck_assert_int_eq(_er_npy_output_kind("/dev/null", msg, sizeof msg), 1);
        ck_assert_int_eq(_er_npy_output_kind(tmpdir, msg, sizeof msg), -1);
        ck_assert_msg(strstr(msg, "is a directory"), "%s", msg);
        tpath(path, sizeof path, "fresh.npy");
        ck_assert_int_eq(_er_npy_output_kind(path, msg, sizeof msg), 0);
        ck_assert_int_eq(access(path, F_OK), -1);
    }
    /* A read-only file is refused (even for root) and stays as it was. */
    tpath(path, sizeof path, "ro.npy");
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(chmod(path, 0444), 0);
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, w, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, path) && strstr(msg, "read-only"), "%s", msg);
    ck_assert_int_eq(er_npy_output_check(path, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_OK);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    er_npy_free(&a);
    ck_assert_int_eq(remove(path), 0);
    /* A replaced file keeps its mode. */
    tpath(path, sizeof path, "mode.npy");
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, w, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    /* A link: its target is replaced, the link stays a link. */
    tpath(link, sizeof link, "link.npy");
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_int_eq(er_npy_write(link, "<f8", 2, shape, v, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_OK);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    er_npy_free(&a);
    /* The check alone writes nothing; the signals are not left held. */
    tpath(path, sizeof path, "new.npy");
    ck_assert_int_eq(er_npy_output_check(path, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(access(path, F_OK), -1);
    {
        sigset_t cur;
        sigprocmask(SIG_BLOCK, NULL, &cur);
        ck_assert(!sigismember(&cur, SIGINT) && !sigismember(&cur, SIGTERM));
    }
    ck_assert_int_eq(er_npy_write_bytes(path, "abc", 3, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(count_entries(tmpdir), 3); /* mode.npy, link.npy, new.npy: no temporary files */
    remove_tmpdir();
}
END_TEST

/* What numpy users save: ml_dtypes' void arrays ('<V2', '|V1') and torch's .view(torch.int16) / int8
 * patterns, read as raw bit patterns of the declared format (not as integers). */
START_TEST(user_dtypes_as_patterns)
{
    char msg[512];
    er_tensor t;
    void *storage;
    int64_t s23[2] = {2, 3};
    make_tmpdir();
    {
        uint16_t h[6] = {0x3f80, 0xbf80, 0x4000, 0x0001, 0x7f80, 0xffc0};
        ck_assert_int_eq(to_tensor_of("v2.npy", "<V2", 2, s23, h, ER_FMT_BF16, &t, &storage, msg, sizeof msg), ER_OK);
        for (int e = 0; e < 6; e++) ck_assert_uint_eq(tget(&t, 0, e / 3, e % 3), h[e]);
        free(storage);
        expect_error(to_tensor_of("v2u.npy", "<V2", 2, s23, h, -1, &t, &storage, msg, sizeof msg), ER_EINVAL, msg,
                     PHRASES("v2u.npy", "void array", "bfloat16", "declare its format"));
        expect_error(to_tensor_of("v2e.npy", "<V2", 2, s23, h, ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg),
                     ER_EINVAL, msg, PHRASES("v2e.npy", "void array", "f8E4M3FN"));
        /* int16 as torch's view: 0xbf80 is -1.0 in bf16, not the integer -16512 */
        ck_assert_int_eq(to_tensor_of("i16.npy", "<i2", 2, s23, h, ER_FMT_BF16, &t, &storage, msg, sizeof msg), ER_OK);
        for (int e = 0; e < 6; e++) ck_assert_uint_eq(tget(&t, 0, e / 3, e % 3), h[e]);
        free(storage);
    }
    {
        uint8_t q[6] = {0x38, 0xb8, 0x7e, 0x01, 0x80, 0x7f};
        ck_assert_int_eq(to_tensor_of("v1.npy", "|V1", 2, s23, q, ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg), ER_OK);
        for (int e = 0; e < 6; e++) ck_assert_uint_eq(tget(&t, 0, e / 3, e % 3), q[e]);
        free(storage);
        ck_assert_int_eq(to_tensor_of("i8.npy", "|i1", 2, s23, q, ER_FMT_F8E5M2, &t, &storage, msg, sizeof msg), ER_OK);
        for (int e = 0; e < 6; e++) ck_assert_uint_eq(tget(&t, 0, e / 3, e % 3), q[e]);
        free(storage);
        /* fp4 patterns in int8 are checked like uint8's: 0x38 has bits above the width */
        expect_error(to_tensor_of("i8f4.npy", "|i1", 2, s23, q, ER_FMT_F4E2M1FN, &t, &storage, msg, sizeof msg),
                     ER_EPATTERN, msg, PHRASES("i8f4.npy", "[0, 0]", "0x38"));
    }
    remove_tmpdir();
}
END_TEST

/* A failed write leaves nothing; a successful one replaces the old file whole. */
START_TEST(failed_writes_leave_nothing)
{
    char path[512], msg[512];
    double v[4] = {1, 2, 3, 4};
    int64_t shape[2] = {2, 2};
    er_npy a;
    make_tmpdir();
    /* Into a directory that does not exist. */
    tpath(path, sizeof path, "missing/x.npy");
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, path) != NULL && strstr(msg, "does not exist") != NULL, "%s", msg);
    ck_assert_int_eq(count_entries(tmpdir), 0);
    /* Over a directory. */
    tpath(path, sizeof path, "adir");
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, path) != NULL && strstr(msg, "is a directory") != NULL, "%s", msg);
    ck_assert_int_eq(count_entries(tmpdir), 1);
    ck_assert_int_eq(count_entries(path), 0);
    ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_EINVAL);
    ck_assert(strstr(msg, "is a directory") != NULL);
    /* A tensor with a bad pattern: nothing is written, and an existing file stays as it was. */
    tpath(path, sizeof path, "keep.npy");
    ck_assert_int_eq(er_npy_write(path, "<f8", 2, shape, v, msg, sizeof msg), ER_OK);
    {
        uint8_t p[4] = {1, 2, 0x13, 4};
        er_tensor t;
        memset(&t, 0, sizeof t);
        t.format = ER_FMT_F4E2M1FN;
        t.ndim = 2;
        t.shape[0] = 2, t.shape[1] = 2;
        t.strides[0] = 2, t.strides[1] = 1;
        t.data = p;
        ck_assert_int_eq(er_npy_write_tensor(path, &t, msg, sizeof msg), ER_EPATTERN);
        ck_assert_msg(strstr(msg, path) && strstr(msg, "element [1, 0] = 0x13"), "%s", msg);
        ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_OK);
        ck_assert_str_eq(a.descr, "<f8");
        ck_assert(memcmp(a.data, v, sizeof v) == 0);
        er_npy_free(&a);
        /* A good tensor replaces it. */
        p[2] = 0x3;
        ck_assert_int_eq(er_npy_write_tensor(path, &t, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_OK);
        ck_assert_str_eq(a.descr, "|u1");
        ck_assert(memcmp(a.data, p, 4) == 0);
        er_npy_free(&a);
    }
    ck_assert_int_eq(count_entries(tmpdir), 2); /* adir and keep.npy: no temporary files */
    /* Reading what is not there. */
    tpath(path, sizeof path, "absent.npy");
    ck_assert_int_eq(er_npy_read(path, &a, msg, sizeof msg), ER_EINVAL);
    ck_assert(strstr(msg, path) && strstr(msg, "cannot open"));
    remove_tmpdir();
}
END_TEST


/* An empty array whose other dimensions are huge (found by the fuzzer: the strides overflowed). */
START_TEST(empty_with_huge_dims)
{
    static const char hdr[] = "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }";
    unsigned char buf[256];
    size_t len = sizeof hdr - 1, total = 10 + len + 1, pad = (64 - total % 64) % 64;
    er_npy a;
    er_tensor t;
    void *storage = NULL;
    char msg[512];
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((len + pad + 1) & 0xff);
    buf[9] = (unsigned char)((len + pad + 1) >> 8);
    memcpy(buf + 10, hdr, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + len + pad] = '\n';
    memset(&a, 0, sizeof a);
    ck_assert_int_eq(er_npy_parse(buf, 10 + len + pad + 1, "empty.npy", &a, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(a.ndim, 3);
    ck_assert_int_eq(er_npy_to_tensor(&a, "empty.npy", ER_FMT_F8E4M3FN, &t, &storage, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(t.shape[0], 0);
    free(storage);
    er_npy_free(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, empty_with_huge_dims);
    tcase_add_test(tc, round_trip_every_format);
    tcase_add_test(tc, round_trip_every_dtype);
    tcase_add_test(tc, f32_declared_bf16_every_pattern);
    tcase_add_test(tc, strided_tensors);
    tcase_add_test(tc, values_must_be_exact);
    tcase_add_test(tc, failed_writes_leave_nothing);
    tcase_add_test(tc, output_rules);
    tcase_add_test(tc, user_dtypes_as_patterns);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
