/* file.h - reading a whole input file, "-" meaning standard input (internal). */
#ifndef CFIT_BASE_FILE_H
#define CFIT_BASE_FILE_H

#include <stddef.h>
#include "clusterfit/base.h"

/* The name diagnostics give an input: "<stdin>" for "-", else path. */
const char *cfit_input_name(const char *path);

/* Read all of path ("-": standard input) into a NUL-terminated malloc'd buffer (*out, caller
 * frees; *len bytes without the NUL).  CFIT_EIO "cannot open/read", CFIT_ERANGE when the input
 * holds more than max_bytes (*out is then NULL), CFIT_ENOMEM; d names the input. */
int cfit__read_input(const char *path, size_t max_bytes, char **out, size_t *len, cfit_diag *d);

/* Read path ("-": standard input, at most 64 MiB) and parse it as JSON (json.h); NULL with *err
 * and d set on failure. */
struct cfit_json;
struct cfit_json *cfit_json_load(const char *path, int *err, cfit_diag *d);

#endif
