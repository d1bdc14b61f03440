/* export.h: ER_API, the mark of every function the shared library exports (the library is built with
 * hidden visibility: what is not marked stays inside it). */
#ifndef EXACTREF_EXPORT_H
#define EXACTREF_EXPORT_H

#if defined(_WIN32) || defined(__CYGWIN__)
#define ER_API
#elif defined(__GNUC__) || defined(__clang__)
#define ER_API __attribute__((visibility("default")))
#else
#define ER_API
#endif

#endif /* EXACTREF_EXPORT_H */
