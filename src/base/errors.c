/* errors.c - error codes (from the CFIT_ERRORS table) and diagnostics. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clusterfit/base.h"

typedef struct err_entry {
    int code;
    const char *name;   /* "CFIT_ENOMEM" */
    const char *msg;    /* "out of memory" */
} err_entry;

static const err_entry err_table[] = {
#define CFIT__ERR_ROW(name, value, msg) {value, "CFIT_E" #name, msg},
    CFIT_ERRORS(CFIT__ERR_ROW)
#undef CFIT__ERR_ROW
    {0, NULL, NULL}
};

static const err_entry *err_find(int err)
{
    for (const err_entry *e = err_table; e->name; e++)
        if (e->code == err)
            return e;
    return NULL;
}

const char *cfit_strerror(int err)
{
    const err_entry *e = err_find(err);
    return e ? e->msg : "unknown error";
}

const char *cfit_err_name(int err)
{
    const err_entry *e = err_find(err);
    return e ? e->name : "CFIT_E?";
}

void cfit_diag_clear(cfit_diag *d)
{
    if (d)
        memset(d, 0, sizeof *d);
}

/* Copy src into the fixed array dst, truncating; src may overlap dst. */
static void copy_truncated(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memmove(dst, src, n);
    dst[n] = '\0';
}

int cfit_diag_set(cfit_diag *d, int err, const char *file, int line, int col,
                  const char *fmt, ...)
{
    if (!d)
        return err;
    copy_truncated(d->file, sizeof d->file, file ? file : "");
    d->line = line;
    d->col = col;
    char msg[sizeof d->msg];   /* fmt's arguments may point into d->msg */
    msg[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
            msg[0] = '\0';
        va_end(ap);
    }
    memcpy(d->msg, msg, sizeof msg);
    return err;
}
