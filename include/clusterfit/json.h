/* json.h - a small JSON reader that remembers where every value and key stands.
 *
 * The reader exists (instead of using jansson) because catalog and model files must
 * report FILE:LINE:COL for *semantic* errors too (an unknown key, a negative size),
 * and jansson keeps positions only for syntax errors.  It accepts RFC 8259 JSON:
 * no comments, no trailing commas, no NaN; duplicate keys are an error; nesting is
 * limited to CFIT_JSON_MAX_DEPTH.  Writing JSON is clusterfit/writer.h.
 */
#ifndef CLUSTERFIT_JSON_H
#define CLUSTERFIT_JSON_H

#include <stddef.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    cfit_json **items;             /* ARRAY */
    cfit_json_member *members;     /* OBJECT, in file order */
};

/* Parse len bytes of text.  file names the input for diagnostics (may be NULL).
 * On success returns the root (free with cfit_json_free) and *err = CFIT_EOK.
 * On failure returns NULL, *err = CFIT_EPARSE (or CFIT_ENOMEM) and fills d with
 * file, line, column and what was expected. */
CFIT_API cfit_json *cfit_json_parse(const char *text, size_t len, const char *file,
                                    int *err, cfit_diag *d);
/* Read path ("-": standard input, at most 64 MiB) and parse it as JSON; NULL with *err and d
 * set on failure (CFIT_EIO, CFIT_ERANGE, CFIT_EPARSE, CFIT_ENOMEM). */
CFIT_API cfit_json *cfit_json_load(const char *path, int *err, cfit_diag *d);
CFIT_API void cfit_json_free(cfit_json *v);   /* NULL is a no-op */

/* Member of an object by key, or NULL (also NULL when obj is not an object). */
CFIT_API const cfit_json_member *cfit_json_member_get(const cfit_json *obj, const char *key);
CFIT_API const cfit_json *cfit_json_get(const cfit_json *obj, const char *key);
CFIT_API const char *cfit_json_type_name(cfit_json_type t);   /* "object", "number", ... */

#ifdef __cplusplus
}
#endif
#endif
