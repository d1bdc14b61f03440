/* er_msg.h: the message helper every layer of the library shares (internal, not installed): a
 * sentence into a caller's buffer, truncated to its size, and a status returned. */
#ifndef ER_MSG_H
#define ER_MSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__) || defined(__clang__)
#define ER_MSG_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define ER_MSG_PRINTF_(f, a)
#endif

/* The sentence into msg (may be NULL, or msg_size 0: nothing written); returns st. */
static inline int er_vmsgf(char *msg, size_t msg_size, int st, const char *fmt, va_list ap)
{
    if (msg && msg_size) vsnprintf(msg, msg_size, fmt, ap);
    return st;
}

static inline int er_msgf(char *msg, size_t msg_size, int st, const char *fmt, ...) ER_MSG_PRINTF_(4, 5);
static inline int er_msgf(char *msg, size_t msg_size, int st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = er_vmsgf(msg, msg_size, st, fmt, ap);
    va_end(ap);
    return st;
}

#endif /* ER_MSG_H */
