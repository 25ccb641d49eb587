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

#endif
