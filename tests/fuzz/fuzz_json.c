/* fuzz_json.c - fuzz target for the JSON reader and writers (src/base/json.c).
 *
 * Oracles beyond "no crash": a failed parse names a position and says why; every
 * string (value or key) written back with cfit__buf_json_string reads back unchanged;
 * the whole tree written back reads back as the same tree.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

/* Write v back as JSON text. */
static void write_value(cfit__buf *b, const cfit__json *v)
{
    switch (v->type) {
    case CFIT__JSON_NULL: cfit__buf_puts(b, "null"); break;
    case CFIT__JSON_BOOL: cfit__buf_puts(b, v->boolean ? "true" : "false"); break;
    case CFIT__JSON_NUMBER: cfit__buf_json_number(b, v->number); break;
    case CFIT__JSON_STRING: cfit__buf_json_string(b, v->string); break;
    case CFIT__JSON_ARRAY:
        cfit__buf_puts(b, "[");
        for (size_t i = 0; i < v->n; i++) {
            cfit__buf_puts(b, i ? "," : "");
            write_value(b, v->items[i]);
        }
        cfit__buf_puts(b, "]");
        break;
    case CFIT__JSON_OBJECT:
        cfit__buf_puts(b, "{");
        for (size_t i = 0; i < v->n; i++) {
            cfit__buf_puts(b, i ? "," : "");
            cfit__buf_json_string(b, v->members[i].key);
            cfit__buf_puts(b, ":");
            write_value(b, v->members[i].value);
        }
        cfit__buf_puts(b, "}");
        break;
    }
}

/* Numbers are written with 10 significant digits unless they are small integers. */
static int same_number(double a, double b)
{
    if (a == floor(a) && fabs(a) < 9007199254740992.0)
        return a == b;
    return fabs(a - b) <= 1e-9 * fabs(a);
}

static int same(const cfit__json *a, const cfit__json *b)
{
    if (a->type != b->type || a->n != b->n)
        return 0;
    switch (a->type) {
    case CFIT__JSON_BOOL: return a->boolean == b->boolean;
    case CFIT__JSON_NUMBER: return same_number(a->number, b->number);
    case CFIT__JSON_STRING: return strcmp(a->string, b->string) == 0;
    case CFIT__JSON_ARRAY:
        for (size_t i = 0; i < a->n; i++)
            if (!same(a->items[i], b->items[i]))
                return 0;
        return 1;
    case CFIT__JSON_OBJECT:
        for (size_t i = 0; i < a->n; i++)
            if (strcmp(a->members[i].key, b->members[i].key) ||
                !same(a->members[i].value, b->members[i].value))
                return 0;
        return 1;
    default: return 1;
    }
}

/* s written as a JSON string parses back to s. */
static void check_string(const char *s)
{
    cfit__buf b;
    int err;
    cfit__buf_init(&b);
    cfit__buf_json_string(&b, s);
    check(cfit__buf_ok(&b));
    cfit__json *v = cfit__json_parse(b.data, b.len, NULL, &err, NULL);
    check(v && v->type == CFIT__JSON_STRING && strcmp(v->string, s) == 0);
    cfit__json_free(v);
    cfit__buf_fini(&b);
}

/* Check positions and strings everywhere; returns 0 if a number is too near
 * DBL_MAX to survive 10-digit rounding (then the tree round trip is skipped). */
static int walk(const cfit__json *v)
{
    int exact = 1;
    check(v->line >= 1 && v->col >= 1);
    if (v->type == CFIT__JSON_NUMBER)
        exact = isfinite(v->number) && fabs(v->number) < 1e308;
    if (v->type == CFIT__JSON_STRING)
        check_string(v->string);
    for (size_t i = 0; v->type == CFIT__JSON_ARRAY && i < v->n; i++)
        exact &= walk(v->items[i]);
    for (size_t i = 0; v->type == CFIT__JSON_OBJECT && i < v->n; i++) {
        const cfit__json_member *m = &v->members[i];
        check(m->line >= 1 && m->col >= 1);
        check(cfit__json_member_get(v, m->key) == m);   /* keys are unique */
        check_string(m->key);
        exact &= walk(m->value);
    }
    return exact;
}

static void check_tree_round_trip(const cfit__json *v)
{
    cfit__buf b;
    int err;
    cfit__buf_init(&b);
    write_value(&b, v);
    check(cfit__buf_ok(&b));
    cfit__json *w = cfit__json_parse(b.data, b.len, NULL, &err, NULL);
    check(w && same(v, w));
    cfit__json_free(w);
    cfit__buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfit_diag d;
    int err = 1;
    cfit_diag_clear(&d);
    cfit__json *v = cfit__json_parse((const char *)data, size, "fuzz.json", &err, &d);
    if (!v) {
        check(err == CFIT_EPARSE || err == CFIT_ENOMEM);
        check(d.msg[0] != '\0' && d.line >= 1 && d.col >= 1);
        check(strcmp(d.file, "fuzz.json") == 0);
        return 0;
    }
    check(err == CFIT_EOK);
    if (walk(v))
        check_tree_round_trip(v);
    cfit__json_free(v);
    return 0;
}
