/* test_host.c: the host helpers' thread fork/join (host/er_par.h) runs every index exactly once on at
 * most the threads asked for, whatever n and T; and the vector level (host/er_isa.h) obeys the
 * environment's switches with their one meaning (on: set, non-empty, not "0"), read at each call. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "host/er_isa.h"
#include "host/er_par.h"

typedef struct {
    int *count;          /* calls per index */
    pthread_t ids[ER_PAR_MAX + 8];
    int nids;            /* distinct threads seen */
    pthread_mutex_t lock;
} par_seen;

static void note_call(void *ctx, int i)
{
    par_seen *s = (par_seen *)ctx;
    pthread_t me = pthread_self();
    __atomic_fetch_add(&s->count[i], 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&s->lock);
    int k = 0;
    while (k < s->nids && !pthread_equal(s->ids[k], me)) k++;
    if (k == s->nids && s->nids < (int)(sizeof s->ids / sizeof s->ids[0])) s->ids[s->nids++] = me;
    pthread_mutex_unlock(&s->lock);
}

START_TEST(par_for_each_index_once)
{
    static const int ns[] = {0, 1, 2, 7, 64, 1000, 5000};
    static const int ts[] = {-3, 0, 1, 2, 3, 8, 300};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ts / sizeof ts[0]; b++) {
            int n = ns[a], T = ts[b];
            par_seen s;
            memset(&s, 0, sizeof s);
            pthread_mutex_init(&s.lock, NULL);
            s.count = calloc((size_t)(n > 0 ? n : 1), sizeof *s.count);
            ck_assert(s.count);
            er_par_for(n, T, note_call, &s);
            for (int i = 0; i < n; i++)
                ck_assert_msg(s.count[i] == 1, "n = %d, T = %d: index %d ran %d times", n, T, i, s.count[i]);
            int most = T < 1 ? 1 : T;
            if (most > n) most = n;
            if (most > ER_PAR_MAX) most = ER_PAR_MAX;
            ck_assert_msg(s.nids <= most, "n = %d, T = %d: %d threads ran, at most %d allowed", n, T, s.nids, most);
            ck_assert_msg(n == 0 || s.nids >= 1, "n = %d, T = %d: nothing ran", n, T);
            pthread_mutex_destroy(&s.lock);
            free(s.count);
        }
}
END_TEST

typedef struct {
    int index, calls;
    char pad[56]; /* jobs of an odd size: the helper steps by the size given */
} job;

static void *run_job(void *arg)
{
    job *j = (job *)arg;
    __atomic_fetch_add(&j->calls, 1, __ATOMIC_RELAXED);
    return NULL;
}

START_TEST(par_jobs_each_job_once)
{
    for (int n = 0; n <= 40; n += 5) {
        job jobs[41];
        memset(jobs, 0, sizeof jobs);
        for (int t = 0; t < 41; t++) jobs[t].index = t;
        er_par_jobs(run_job, jobs, sizeof jobs[0], n);
        for (int t = 0; t < 41; t++)
            ck_assert_msg(jobs[t].calls == (t < n), "n = %d: job %d ran %d times", n, t, jobs[t].calls);
    }
}
END_TEST

START_TEST(env_switch_meaning)
{
    const char *name = "EXACTREF_TEST_HOST_SWITCH";
    unsetenv(name);
    ck_assert_int_eq(er_env_on(name), 0);
    setenv(name, "", 1);
    ck_assert_int_eq(er_env_on(name), 0);
    setenv(name, "0", 1);
    ck_assert_int_eq(er_env_on(name), 0);
    setenv(name, "1", 1);
    ck_assert_int_eq(er_env_on(name), 1);
    setenv(name, "yes", 1);
    ck_assert_int_eq(er_env_on(name), 1);
    setenv(name, "00", 1);
    ck_assert_int_eq(er_env_on(name), 1);
    unsetenv(name);
}
END_TEST

START_TEST(isa_within_switches)
{
    int hw = er_isa_hw();
    ck_assert(hw == ER_ISA_NONE || hw == ER_ISA_AVX2 || hw == ER_ISA_AVX512);
    unsetenv("EXACTREF_NO_SIMD");
    unsetenv("EXACTREF_NO_AVX512");
    ck_assert_int_eq(er_isa(), hw);
    setenv("EXACTREF_NO_AVX512", "1", 1);
    ck_assert_int_eq(er_isa(), hw < ER_ISA_AVX2 ? hw : ER_ISA_AVX2);
    setenv("EXACTREF_NO_AVX512", "0", 1); /* "0" is off, as for every switch */
    ck_assert_int_eq(er_isa(), hw);
    setenv("EXACTREF_NO_SIMD", "1", 1);
    ck_assert_int_eq(er_isa(), ER_ISA_NONE);
    setenv("EXACTREF_NO_SIMD", "", 1);
    ck_assert_int_eq(er_isa(), hw);
    ck_assert_int_eq(er_isa_hw(), hw); /* the processor's level does not move with the switches */
    unsetenv("EXACTREF_NO_SIMD");
    unsetenv("EXACTREF_NO_AVX512");
}
END_TEST

int main(void)
{
    Suite *su = suite_create("host");
    TCase *tc = tcase_create("host");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, par_for_each_index_once);
    tcase_add_test(tc, par_jobs_each_job_once);
    tcase_add_test(tc, env_switch_meaning);
    tcase_add_test(tc, isa_within_switches);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
