/* cli_progress.h: what a long command is doing, on stderr, only when stderr is a terminal. */
#ifndef ER_CLI_PROGRESS_H
#define ER_CLI_PROGRESS_H

typedef struct er_cli_progress er_cli_progress;

/* Start showing "exactref CMD: WHAT... N s" (updated a few times a second by a thread) when enabled
 * and stderr is a terminal; NULL otherwise (every call below accepts NULL). */
er_cli_progress *er_cli_progress_start(const char *cmd, const char *what, int enabled);
/* Change the text; fraction in [0, 1] adds a percentage and the time left (negative: none). */
void er_cli_progress_set(er_cli_progress *p, const char *what, double fraction);
/* Stop and erase the line. */
void er_cli_progress_stop(er_cli_progress *p);

#endif
