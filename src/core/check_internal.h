/* check_internal.h - shared by the DeepSpeed and Megatron checkers (internal to libclusterfit). */
#ifndef CFIT_CHECK_INTERNAL_H
#define CFIT_CHECK_INTERNAL_H

#include <stdarg.h>
#include "clusterfit/frameworks.h"

/* Append a finding (message printf-style); returns CFIT_EOK or CFIT_ENOMEM (res unchanged). */
int cfit__finding_vadd(cfit_check_result *res, cfit_severity s, const char *path, int line, int col,
                       const char *fix, const char *fmt, va_list ap);
/* Sort findings by line, column, severity, message. */
void cfit__findings_sort(cfit_check_result *res);

/* Evaluate a Megatron-LM layer pattern, the Python list expression --moe-layer-freq takes
 * ("([0]*3+[1]*58)", layer_pattern.c).  Returns NULL with *items (malloc'd, caller frees; may be
 * NULL when empty) and *n set, or a static message with *at the 0-based offset where it failed. */
#define CFIT__PATTERN_MAX 65536
const char *cfit__layer_pattern_eval(const char *s, int **items, size_t *n, size_t *at);

#endif
