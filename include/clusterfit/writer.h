/* writer.h - a growing NUL-terminated string for writing JSON and text.
 *
 * Every output of the CLI (text tables, JSON documents, YAML, HTML reports) is built in a
 * cfit_buf and written once.  On allocation failure the buffer sets oom and stops growing;
 * callers check cfit_buf_ok() once at the end instead of after every append.
 */
#ifndef CLUSTERFIT_WRITER_H
#define CLUSTERFIT_WRITER_H

#include <stdarg.h>
#include <stddef.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfit_buf {
    char *data;        /* NUL-terminated text; NULL when cfit_buf_init could not allocate */
    size_t len, cap;   /* bytes without the NUL; bytes allocated */
    int oom;           /* an append failed; the text stops there */
} cfit_buf;

/* init starts an empty string; fini frees it (the buffer can be initialised again). */
CFIT_API void cfit_buf_init(cfit_buf *b);
CFIT_API void cfit_buf_fini(cfit_buf *b);
/* 1 when no append has failed. */
CFIT_API int cfit_buf_ok(const cfit_buf *b);
CFIT_API void cfit_buf_puts(cfit_buf *b, const char *s);
CFIT_API void cfit_buf_printf(cfit_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
CFIT_API void cfit_buf_vprintf(cfit_buf *b, const char *fmt, va_list ap);
/* Append s as a JSON string literal with quotes and escapes; bytes that are not UTF-8 become
 * U+FFFD, so the document stays valid JSON whatever the input (a name from argv, a file). */
CFIT_API void cfit_buf_json_string(cfit_buf *b, const char *s);
/* Append a JSON number: integers exactly, others with 10 significant digits;
 * NaN and infinities are written as null. */
CFIT_API void cfit_buf_json_number(cfit_buf *b, double v);
/* Append an object member `"key": value`, preceded by ", " when comma is set. */
CFIT_API void cfit_buf_key_number(cfit_buf *b, const char *key, double v, int comma);
CFIT_API void cfit_buf_key_string(cfit_buf *b, const char *key, const char *v, int comma);
/* ", "key": v" when have is set, else ", "key": null". */
CFIT_API void cfit_buf_key_opt(cfit_buf *b, const char *key, int have, double v);

#ifdef __cplusplus
}
#endif
#endif
