/* check.c - the findings framework every config checker reports through, and the file entry
 * points: a finding list (add, sort, free), reading the file and telling a DeepSpeed JSON config
 * from a Megatron-LM launch script.  The checkers themselves are check_deepspeed.c and
 * check_megatron.c; docs/check.md lists each check's source.
 */
#include "clusterfit/frameworks.h"
#include "base/file.h"
#include "base/grow.h"
#include "core/check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cfit_severity_name(cfit_severity s)
{
    static const char *const names[] = {"error", "warning", "info"};
    return (unsigned)s <= CFIT_SEV_INFO ? names[s] : "?";
}

void cfit_check_request_init(cfit_check_request *r)
{
    memset(r, 0, sizeof *r);
}

void cfit_check_result_fini(cfit_check_result *res)
{
    if (!res)
        return;
    free(res->findings);
    memset(res, 0, sizeof *res);
}

int cfit__finding_vadd(cfit_check_result *res, cfit_severity s, const char *path, int line, int col,
                       const char *fix, const char *fmt, va_list ap)
{
    if (cfit__grow(&res->findings, &res->cap, res->n + 1, sizeof *res->findings))
        return CFIT_ENOMEM;
    cfit_finding *f = &res->findings[res->n++];
    memset(f, 0, sizeof *f);
    f->severity = s;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->line = line;
    f->col = col;
    snprintf(f->fix, sizeof f->fix, "%s", fix ? fix : "");
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    res->errors += s == CFIT_SEV_ERROR;
    res->warnings += s == CFIT_SEV_WARNING;
    res->infos += s == CFIT_SEV_INFO;
    return CFIT_EOK;
}

static int by_position(const void *a, const void *b);

void cfit__findings_sort(cfit_check_result *res)
{
    if (res->n > 1)
        qsort(res->findings, res->n, sizeof *res->findings, by_position);
}

static int by_position(const void *a, const void *b)
{
    const cfit_finding *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    if (x->severity != y->severity)
        return (int)x->severity - (int)y->severity;
    return strcmp(x->message, y->message);
}

/* Read path ("-": standard input) into *buf (caller frees), at most CFIT_CHECK_MAX_BYTES. */
static int read_all(const char *path, char **buf, size_t *len, cfit_diag *d)
{
    int rc = cfit__read_input(path, (size_t)CFIT_CHECK_MAX_BYTES, buf, len, d);
    if (rc == CFIT_ERANGE)
        return cfit_diag_set(d, rc, cfit_input_name(path), 0, 0, "file is larger than %u MiB",
                             CFIT_CHECK_MAX_BYTES >> 20);
    if (rc == CFIT_EIO && d)   /* "cannot open 'FILE': ..." names the file itself */
        d->file[0] = '\0';
    return rc;
}

/* A DeepSpeed config: a name ending in ".json", an empty file, or one whose first non-blank
 * character starts a JSON value other than a bare word ('{', '[', '"', a digit or '-' + digit). */
static int looks_like_json(const char *path, const char *text, size_t len)
{
    size_t n = strlen(path), i = 0;
    if (n >= 5 && strcmp(path + n - 5, ".json") == 0)
        return 1;
    while (i < len && text[i] && strchr(" \t\r\n", text[i]))
        i++;
    if (i == len)
        return 1;
    char ch = text[i], next = i + 1 < len ? text[i + 1] : '\0';
    return strchr("{[\"", ch) || (ch >= '0' && ch <= '9') || (ch == '-' && next >= '0' && next <= '9');
}

int cfit_check_file(const char *path, const cfit_check_request *r, cfit_check_result *out,
                    const char **kind_out, cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t n;
    int rc = read_all(path, &buf, &n, d);
    if (rc)
        return rc;
    const char *name = cfit_input_name(path);
    int json = looks_like_json(path, buf, n);
    if (kind_out)
        *kind_out = json ? "deepspeed" : "megatron";
    rc = json ? cfit_check_deepspeed(buf, n, name, r, out, d) : cfit_check_megatron(buf, n, name, r, out, d);
    free(buf);
    return rc;
}

int cfit_check_deepspeed_file(const char *path, const cfit_check_request *r, cfit_check_result *out,
                              cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    char *buf;
    size_t n;
    int rc = read_all(path, &buf, &n, d);
    if (rc)
        return rc;
    rc = cfit_check_deepspeed(buf, n, cfit_input_name(path), r, out, d);
    free(buf);
    return rc;
}
