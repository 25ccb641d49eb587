/* file.h - reading a whole input file, "-" meaning standard input (internal).
 * cfit_input_name (clusterfit/base.h) and cfit_json_load (clusterfit/json.h) are the public
 * side of this file. */
#ifndef CFIT_BASE_FILE_H
#define CFIT_BASE_FILE_H

#include <stddef.h>
#include "clusterfit/base.h"
#include "clusterfit/json.h"

/* Read all of path ("-": standard input) into a NUL-terminated malloc'd buffer (*out, caller
 * frees; *len bytes without the NUL).  CFIT_EIO "cannot open/read", CFIT_ERANGE when the input
 * holds more than max_bytes (*out is then NULL), CFIT_ENOMEM; d names the input. */
int cfit__read_input(const char *path, size_t max_bytes, char **out, size_t *len, cfit_diag *d);

#endif
