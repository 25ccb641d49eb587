/* json.h - a small JSON reader that remembers where every value and key stands,
 * and a string builder for writing JSON and text (internal to libclusterfit).
 *
 * The reader exists (instead of using jansson) because catalog and model files must
 * report FILE:LINE:COL for *semantic* errors too (an unknown key, a negative size),
 * and jansson keeps positions only for syntax errors.  It accepts RFC 8259 JSON:
 * no comments, no trailing commas, no NaN; duplicate keys are an error; nesting is
 * limited to CFIT_JSON_MAX_DEPTH.
 */
#ifndef CFIT_JSON_H
#define CFIT_JSON_H

#include <stdarg.h>
#include <stddef.h>
#include "clusterfit/base.h"

#define CFIT_JSON_MAX_DEPTH 64

typedef enum cfit_json_type {
    CFIT_JSON_NULL,
    CFIT_JSON_BOOL,
    CFIT_JSON_NUMBER,
    CFIT_JSON_STRING,
    CFIT_JSON_ARRAY,
    CFIT_JSON_OBJECT
} cfit_json_type;

typedef struct cfit_json cfit_json;

typedef struct cfit_json_member {
    char *key;          /* NUL-terminated, unescaped */
    int line, col;      /* position of the key's opening quote */
    cfit_json *value;
} cfit_json_member;

struct cfit_json {
    cfit_json_type type;
    int line, col;                 /* position of the value's first character */
    int boolean;                   /* BOOL */
    double number;                 /* NUMBER (finite) */
    char *string;                  /* STRING: NUL-terminated, unescaped (embedded NUL rejected) */
    size_t n;                      /* ARRAY: items; OBJECT: members */
    cfit_json **items;            /* ARRAY */
    cfit_json_member *members;    /* OBJECT, in file order */
};

/* Parse len bytes of text.  file names the input for diagnostics (may be NULL).
 * On success returns the root (free with cfit_json_free) and *err = CFIT_EOK.
 * On failure returns NULL, *err = CFIT_EPARSE (or CFIT_ENOMEM) and fills d with
 * file, line, column and what was expected. */
cfit_json *cfit_json_parse(const char *text, size_t len, const char *file,
                             int *err, cfit_diag *d);
void cfit_json_free(cfit_json *v);   /* NULL is a no-op */

/* Member of an object by key, or NULL (also NULL when obj is not an object). */
const cfit_json_member *cfit_json_member_get(const cfit_json *obj, const char *key);
const cfit_json *cfit_json_get(const cfit_json *obj, const char *key);
const char *cfit_json_type_name(cfit_json_type t);   /* "object", "number", ... */

/* Length of the well-formed UTF-8 sequence at s (at most n bytes; RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF), or 0 if the bytes there are not one. */
size_t cfit__utf8_len(const char *s, size_t n);
/* Byte offset of the first byte of text[0..len) that does not start a well-formed UTF-8
 * sequence (NUL counts as valid), or len if all of it is UTF-8. */
size_t cfit__utf8_invalid_at(const char *text, size_t len);
/* 1-based line and byte column of offset off in text. */
void cfit__text_line_col(const char *text, size_t off, int *line, int *col);

/* A growing NUL-terminated string.  On allocation failure it sets oom and stops
 * growing; callers check cfit_buf_ok() once at the end. */
typedef struct cfit_buf {
    char *data;
    size_t len, cap;
    int oom;
} cfit_buf;

void cfit_buf_init(cfit_buf *b);
void cfit_buf_fini(cfit_buf *b);
int cfit_buf_ok(const cfit_buf *b);
void cfit_buf_puts(cfit_buf *b, const char *s);
void cfit_buf_printf(cfit_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cfit_buf_vprintf(cfit_buf *b, const char *fmt, va_list ap);
/* Append s as a JSON string literal with quotes and escapes; bytes that are not UTF-8 become
 * U+FFFD, so the document stays valid JSON whatever the input (a name from argv, a file). */
void cfit_buf_json_string(cfit_buf *b, const char *s);
/* Append a JSON number: integers exactly, others with 10 significant digits;
 * NaN and infinities are written as null. */
void cfit_buf_json_number(cfit_buf *b, double v);
/* Append an object member `"key": value`, preceded by ", " when comma is set. */
void cfit_buf_key_number(cfit_buf *b, const char *key, double v, int comma);
void cfit_buf_key_string(cfit_buf *b, const char *key, const char *v, int comma);
/* ", "key": v" when have is set, else ", "key": null". */
void cfit_buf_key_opt(cfit_buf *b, const char *key, int have, double v);

#endif
