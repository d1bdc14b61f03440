/* cut_preload.c: a test shim (LD_PRELOAD) that cuts one file while the process has it mapped, to
 * test what `exactref check` does then (test_check_cut.sh).  ER_TEST_CUT names the file (an absolute
 * path); ER_TEST_CUT_WHEN says when: "mmap" right after the file is mapped (the reader's second look
 * at the size must refuse it), "madvise" at the first give-back of its pages, after it was checked
 * (the later access past the new end raises SIGBUS, which the command must report).  The file is cut
 * to 64 bytes, inside its header's first page. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

static uintptr_t lo, hi;
static int cut;

static int is_target(int fd, char *target, size_t size)
{
    char link[64], name[PATH_MAX];
    const char *want = getenv("ER_TEST_CUT");
    ssize_t n;
    if (!want || fd < 0 || !realpath(want, target)) return 0;
    (void)size;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, name, sizeof name - 1);
    if (n <= 0) return 0;
    name[n] = '\0';
    return strcmp(name, target) == 0;
}

static void cut_now(const char *when)
{
    const char *w = getenv("ER_TEST_CUT_WHEN");
    if (cut || !w || strcmp(w, when) != 0) return;
    cut = 1;
    if (truncate(getenv("ER_TEST_CUT"), 64) != 0) {
        perror("cut_preload: truncate");
        _exit(99);
    }
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static void *(*real)(void *, size_t, int, int, int, off_t);
    char target[PATH_MAX];
    void *p;
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "mmap");
    p = real(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && !lo && is_target(fd, target, sizeof target)) {
        lo = (uintptr_t)p;
        hi = lo + len;
        cut_now("mmap");
    }
    return p;
}

int madvise(void *addr, size_t len, int advice)
{
    static int (*real)(void *, size_t, int);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "madvise");
    if (lo && (uintptr_t)addr >= lo && (uintptr_t)addr < hi) cut_now("madvise");
    return real(addr, len, advice);
}
