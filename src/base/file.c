/* file.c - the one whole-file reader of the library and the CLI ("-" = standard input). */
#include "file.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cfit_input_name(const char *path)
{
    return path && strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* Read f to its end into a buffer grown geometrically; *n bytes, or CFIT_ERANGE past max. */
static int slurp(FILE *f, size_t max_bytes, char **out, size_t *n)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = NULL;
    for (;;) {
        char *nb = realloc(buf, cap + 1);
        if (!nb)
            return free(buf), CFIT_ENOMEM;
        buf = nb;
        len += fread(buf + len, 1, cap - len, f);
        if (ferror(f))
            return free(buf), CFIT_EIO;
        if (len > max_bytes)
            return free(buf), CFIT_ERANGE;
        if (len < cap)
            break;
        cap *= 2;
    }
    buf[len] = '\0';
    *out = buf;
    *n = len;
    return CFIT_EOK;
}

int cfit__read_input(const char *path, size_t max_bytes, char **out, size_t *len, cfit_diag *d)
{
    const char *name = cfit_input_name(path);
    int is_stdin = name != path;
    *out = NULL;
    *len = 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return cfit_diag_set(d, CFIT_EIO, name, 0, 0, "cannot open '%s': %s", path, strerror(errno));
    int rc = slurp(f, max_bytes, out, len);
    int saved = errno;
    if (!is_stdin)
        fclose(f);
    if (rc == CFIT_ENOMEM)
        return cfit_diag_set(d, rc, name, 0, 0, "out of memory");
    if (rc == CFIT_EIO)
        return cfit_diag_set(d, rc, name, 0, 0, "cannot read '%s': %s", name, strerror(saved));
    if (rc == CFIT_ERANGE) {
        if (max_bytes >= (1u << 20))
            return cfit_diag_set(d, rc, name, 0, 0, "'%s' is larger than %zu MiB", name, max_bytes >> 20);
        return cfit_diag_set(d, rc, name, 0, 0, "'%s' is larger than %zu bytes", name, max_bytes);
    }
    return CFIT_EOK;
}

cfit_json *cfit_json_load(const char *path, int *err, cfit_diag *d)
{
    char *text;
    size_t len;
    *err = cfit__read_input(path, (size_t)64 << 20, &text, &len, d);
    if (*err)
        return NULL;
    cfit_json *root = cfit_json_parse(text, len, cfit_input_name(path), err, d);
    free(text);
    return root;
}
