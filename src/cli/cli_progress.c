/* cli_progress.c: what a long command is doing, on stderr, only when stderr is a terminal. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_progress.h"

struct er_cli_progress {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop, shown, percent; /* shown: a line is on the terminal; percent: the one it shows */
    char cmd[32], what[160];
    double fraction, t0, t_set, after;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Draw the line (under the lock), once the command has run `after` seconds: a short one shows nothing. */
static void draw(er_cli_progress *p)
{
    double t = now() - p->t0;
    if (t < p->after) return;
    char line[256];
    if (p->fraction > 0 && p->fraction <= 1) {
        double left = (now() - p->t_set) * (1 - p->fraction) / p->fraction;
        snprintf(line, sizeof line, "exactref %s: %s %3.0f%% (%.0f s, about %.0f s left)", p->cmd, p->what,
                 100 * p->fraction, t, left);
    } else {
        snprintf(line, sizeof line, "exactref %s: %s (%.0f s)", p->cmd, p->what, t);
    }
    fprintf(stderr, "\r%-79.79s", line);
    fflush(stderr);
    p->shown = 1;
}

static void *run(void *arg)
{
    er_cli_progress *p = (er_cli_progress *)arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&p->cond, &p->lock, &until);
        if (p->stop) break;
        draw(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

er_cli_progress *er_cli_progress_start(const char *cmd, const char *what, int enabled)
{
    er_cli_progress *p;
    if (!enabled || !isatty(2) || !(p = calloc(1, sizeof *p))) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    snprintf(p->cmd, sizeof p->cmd, "%s", cmd);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->fraction = -1;
    p->percent = -1;
    p->t0 = p->t_set = now();
    /* EXACTREF_PROGRESS_AFTER: the seconds before the line appears (default 1) */
    const char *e = getenv("EXACTREF_PROGRESS_AFTER");
    char *end;
    p->after = e && *e ? strtod(e, &end) : 1.0;
    if (!e || !*e || *end || !(p->after >= 0)) p->after = 1.0;
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->cond);
        free(p);
        return NULL;
    }
    return p;
}

void er_cli_progress_set(er_cli_progress *p, const char *what, double fraction)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    int phase = strcmp(p->what, what) != 0;
    if (phase) p->t_set = now(); /* a new phase: its own time left */
    snprintf(p->what, sizeof p->what, "%s", what);
    p->fraction = fraction;
    /* a new phase or a new percentage is drawn at once (at most about 100 times a phase) */
    int percent = fraction > 0 && fraction <= 1 ? (int)(100 * fraction) : -1;
    if (phase || percent != p->percent) {
        p->percent = percent;
        draw(p);
    }
    pthread_mutex_unlock(&p->lock);
}

void er_cli_progress_stop(er_cli_progress *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    if (p->shown) fprintf(stderr, "\r%79s\r", "");
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p);
}
