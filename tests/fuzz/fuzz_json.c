/* fuzz_json.c - fuzz target for the JSON reader and writers (src/base/json.c).
 *
 * Oracles beyond "no crash": a failed parse names a position and says why; every
 * string (value or key) written back with cfit_buf_json_string reads back unchanged;
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
static void write_value(cfit_buf *b, const cfit_json *v)
{
    switch (v->type) {
    case CFIT_JSON_NULL: cfit_buf_puts(b, "null"); break;
    case CFIT_JSON_BOOL: cfit_buf_puts(b, v->boolean ? "true" : "false"); break;
    case CFIT_JSON_NUMBER: cfit_buf_json_number(b, v->number); break;
    case CFIT_JSON_STRING: cfit_buf_json_string(b, v->string); break;
    case CFIT_JSON_ARRAY:
        cfit_buf_puts(b, "[");
        for (size_t i = 0; i < v->n; i++) {
            cfit_buf_puts(b, i ? "," : "");
            write_value(b, v->items[i]);
        }
        cfit_buf_puts(b, "]");
        break;
    case CFIT_JSON_OBJECT:
        cfit_buf_puts(b, "{");
        for (size_t i = 0; i < v->n; i++) {
            cfit_buf_puts(b, i ? "," : "");
            cfit_buf_json_string(b, v->members[i].key);
            cfit_buf_puts(b, ":");
            write_value(b, v->members[i].value);
        }
        cfit_buf_puts(b, "}");
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

static int same(const cfit_json *a, const cfit_json *b)
{
    if (a->type != b->type || a->n != b->n)
        return 0;
    switch (a->type) {
    case CFIT_JSON_BOOL: return a->boolean == b->boolean;
    case CFIT_JSON_NUMBER: return same_number(a->number, b->number);
    case CFIT_JSON_STRING: return strcmp(a->string, b->string) == 0;
    case CFIT_JSON_ARRAY:
        for (size_t i = 0; i < a->n; i++)
            if (!same(a->items[i], b->items[i]))
                return 0;
        return 1;
    case CFIT_JSON_OBJECT:
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
    cfit_buf b;
    int err;
    cfit_buf_init(&b);
    cfit_buf_json_string(&b, s);
    check(cfit_buf_ok(&b));
    cfit_json *v = cfit_json_parse(b.data, b.len, NULL, &err, NULL);
    check(v && v->type == CFIT_JSON_STRING && strcmp(v->string, s) == 0);
    cfit_json_free(v);
    cfit_buf_fini(&b);
}

/* Check positions and strings everywhere; returns 0 if a number is too near
 * DBL_MAX to survive 10-digit rounding (then the tree round trip is skipped). */
static int walk(const cfit_json *v)
{
    int exact = 1;
    check(v->line >= 1 && v->col >= 1);
    if (v->type == CFIT_JSON_NUMBER)
        exact = isfinite(v->number) && fabs(v->number) < 1e308;
    if (v->type == CFIT_JSON_STRING)
        check_string(v->string);
    for (size_t i = 0; v->type == CFIT_JSON_ARRAY && i < v->n; i++)
        exact &= walk(v->items[i]);
    for (size_t i = 0; v->type == CFIT_JSON_OBJECT && i < v->n; i++) {
        const cfit_json_member *m = &v->members[i];
        check(m->line >= 1 && m->col >= 1);
        check(cfit_json_member_get(v, m->key) == m);   /* keys are unique */
        check_string(m->key);
        exact &= walk(m->value);
    }
    return exact;
}

static void check_tree_round_trip(const cfit_json *v)
{
    cfit_buf b;
    int err;
    cfit_buf_init(&b);
    write_value(&b, v);
    check(cfit_buf_ok(&b));
    cfit_json *w = cfit_json_parse(b.data, b.len, NULL, &err, NULL);
    check(w && same(v, w));
    cfit_json_free(w);
    cfit_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfit_diag d;
    int err = 1;
    cfit_diag_clear(&d);
    cfit_json *v = cfit_json_parse((const char *)data, size, "fuzz.json", &err, &d);
    if (!v) {
        check(err == CFIT_EPARSE || err == CFIT_ENOMEM);
        check(d.msg[0] != '\0' && d.line >= 1 && d.col >= 1);
        check(strcmp(d.file, "fuzz.json") == 0);
        return 0;
    }
    check(err == CFIT_EOK);
    if (walk(v))
        check_tree_round_trip(v);
    cfit_json_free(v);
    return 0;
}
