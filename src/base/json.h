/* json.h - the JSON reader (clusterfit/json.h) and the text/JSON writer (clusterfit/writer.h),
 * plus the UTF-8 and position helpers they share (internal to libclusterfit).
 */
#ifndef CFIT_JSON_H
#define CFIT_JSON_H

#include <stddef.h>
#include "clusterfit/base.h"
#include "clusterfit/json.h"
#include "clusterfit/writer.h"

/* Length of the well-formed UTF-8 sequence at s (at most n bytes; RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF), or 0 if the bytes there are not one. */
size_t cfit__utf8_len(const char *s, size_t n);
/* Byte offset of the first byte of text[0..len) that does not start a well-formed UTF-8
 * sequence (NUL counts as valid), or len if all of it is UTF-8. */
size_t cfit__utf8_invalid_at(const char *text, size_t len);
/* 1-based line and byte column of offset off in text. */
void cfit__text_line_col(const char *text, size_t off, int *line, int *col);

#endif
