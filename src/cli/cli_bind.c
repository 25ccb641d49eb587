/* cli_bind.c - options whose value the option parser stores itself (cli_bind in cli.h): check
 * the value as cli_int/cli_count/cli_real do, or match it against names, and store it in the
 * field of the handler's context; and CLI_GIVEN rows, which mark that an option appeared. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

const cli_bind *cli_bind_find(const cli_bind *binds, int id)
{
    for (const cli_bind *b = binds; b && b->id; b++)
        if (b->id == id && b->kind != CLI_BIND_GIVEN)
            return b;
    return NULL;
}

/* An int-sized or long-sized field. */
static void store_integer(const cli_bind *b, void *ctx, long v)
{
    char *at = (char *)ctx + b->offset;
    if (b->size == sizeof(int)) {
        int x = (int)v;
        memcpy(at, &x, sizeof x);
    } else if (b->size == sizeof(long)) {
        memcpy(at, &v, sizeof v);
    } else {
        abort();   /* a binding table names a field of another type: a programming error */
    }
}

static void store_double(const cli_bind *b, void *ctx, double v)
{
    if (b->size != sizeof v)
        abort();
    memcpy((char *)ctx + b->offset, &v, sizeof v);
}

void cli_bind_mark(const cli_bind *binds, int id, void *ctx)
{
    for (const cli_bind *b = binds; b && b->id; b++)
        if (b->id == id && b->kind == CLI_BIND_GIVEN) {
            if (b->size != sizeof(int))
                abort();
            store_integer(b, ctx, 1);
        }
}

/* The i-th accepted name of an enum binding, or NULL past the last. */
static const char *choice(const cli_bind *b, int i)
{
    if (b->kind == CLI_BIND_NAMED)
        return i < b->count ? b->name_of(i) : NULL;
    return b->names[i].name;
}

/* "--NAME: expected a, b or c, got 'value'" */
static int bad_choice(const cli_bind *b, const char *name, const char *value)
{
    char list[256] = "";
    size_t n = 0;
    for (int i = 0; choice(b, i); i++) {
        const char *sep = i == 0 ? "" : choice(b, i + 1) ? ", " : " or ";
        n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s", sep, choice(b, i));
        if (n >= sizeof list)
            break;
    }
    return cli_error("--%s: expected %s, got '%s'", name, list, value);
}

static int store_choice(const cli_bind *b, void *ctx, const char *name, const char *value)
{
    for (int i = 0; choice(b, i); i++)
        if (strcmp(value, choice(b, i)) == 0) {
            store_integer(b, ctx, b->kind == CLI_BIND_NAMED ? i : b->names[i].value);
            return 0;
        }
    return bad_choice(b, name, value);
}

int cli_bind_store(const cli_bind *b, void *ctx, const char *name, const char *value)
{
    long v;
    uint64_t n;
    double x;
    int rc;
    switch (b->kind) {
    case CLI_BIND_FLAG: store_integer(b, ctx, 1); return 0;
    case CLI_BIND_STRING:
        if (b->size != sizeof value)
            abort();
        memcpy((char *)ctx + b->offset, &value, sizeof value);
        return 0;
    case CLI_BIND_INT:
        if (!(rc = cli_int(name, value, b->min, b->max, &v)))
            store_integer(b, ctx, v);
        return rc;
    case CLI_BIND_COUNT:
        if (!(rc = cli_count(name, value, &n)))
            store_double(b, ctx, (double)n);
        return rc;
    case CLI_BIND_UCOUNT:
        if (b->size != sizeof n)
            abort();
        if (!(rc = cli_count(name, value, &n)))
            memcpy((char *)ctx + b->offset, &n, sizeof n);
        return rc;
    case CLI_BIND_REAL:
        if (!(rc = cli_real(name, value, b->lo, b->hi, &x)))
            store_double(b, ctx, x);
        return rc;
    case CLI_BIND_ENUM:
    case CLI_BIND_NAMED: return store_choice(b, ctx, name, value);
    case CLI_BIND_GIVEN: store_integer(b, ctx, 1); return 0;   /* cli_bind_mark's rows: not a value */
    }
    return 0;
}
