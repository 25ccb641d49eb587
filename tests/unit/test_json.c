/* test_json.c - the position-tracking JSON reader and the cfit_buf writers (src/base). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

/* Parse n bytes from a heap copy with no NUL after it, so ASan sees any over-read. */
static cfit_json *parse_n(const char *s, size_t n, int *err, cfit_diag *d)
{
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, s, n);
    cfit_diag_clear(d);
    cfit_json *v = cfit_json_parse(copy, n, "test.json", err, d);
    free(copy);   /* the tree must not point into the text */
    return v;
}

static cfit_json *parse_ok(const char *s)
{
    int err = 12345;
    cfit_diag d;
    cfit_json *v = parse_n(s, strlen(s), &err, &d);
    if (!v)
        fail_msg("'%s' rejected at %d:%d: %s", s, d.line, d.col, d.msg);
    assert_int_equal(err, CFIT_EOK);
    return v;
}

/* The parse fails at line:col with a message containing needle. */
static void parse_bad_n(const char *s, size_t n, int line, int col, const char *needle)
{
    int err = 0;
    cfit_diag d;
    cfit_json *v = parse_n(s, n, &err, &d);
    if (v)
        fail_msg("'%s' accepted", s);
    assert_int_equal(err, CFIT_EPARSE);
    assert_string_equal(d.file, "test.json");
    assert_true(d.msg[0] != '\0');
    if (d.line != line || d.col != col || !strstr(d.msg, needle))
        fail_msg("'%s': got %d:%d '%s', want %d:%d '%s'", s, d.line, d.col, d.msg, line, col,
                 needle);
}

static void parse_bad(const char *s, int line, int col, const char *needle)
{
    parse_bad_n(s, strlen(s), line, col, needle);
}

/* ---- values ------------------------------------------------------------ */

static void test_scalars(void **state)
{
    (void)state;
    static const struct { const char *text; double want; } nums[] = {
        {"0", 0.0}, {"-0", 0.0}, {"42", 42.0}, {"-7", -7.0}, {"1.5", 1.5}, {"80e9", 80e9},
        {"3.35E12", 3.35e12}, {"1e-3", 1e-3}, {"2.5e+2", 250.0}, {"-0.125", -0.125},
        {"123456789012345678901234567890", 1.2345678901234568e29}, {"1e-400", 0.0},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        cfit_json *v = parse_ok(nums[i].text);
        assert_int_equal(v->type, CFIT_JSON_NUMBER);
        assert_true(v->number == nums[i].want);
        cfit_json_free(v);
    }
    cfit_json *v = parse_ok(" true ");
    assert_int_equal(v->type, CFIT_JSON_BOOL);
    assert_int_equal(v->boolean, 1);
    assert_int_equal(v->col, 2);
    cfit_json_free(v);
    v = parse_ok("false");
    assert_int_equal(v->type, CFIT_JSON_BOOL);
    assert_int_equal(v->boolean, 0);
    cfit_json_free(v);
    v = parse_ok("\n\tnull\r\n");
    assert_int_equal(v->type, CFIT_JSON_NULL);
    assert_int_equal(v->line, 2);
    assert_int_equal(v->col, 2);
    cfit_json_free(v);
    v = parse_ok("\"hi\"");
    assert_int_equal(v->type, CFIT_JSON_STRING);
    assert_string_equal(v->string, "hi");
    cfit_json_free(v);
    v = parse_ok("\xef\xbb\xbf{}");   /* a byte order mark is skipped */
    assert_int_equal(v->type, CFIT_JSON_OBJECT);
    cfit_json_free(v);
}

static void test_object_order_and_positions(void **state)
{
    (void)state;
    const char *text =
        "{\n"
        "  \"gpus\": [\n"
        "    {\"name\": \"h100-sxm\", \"memory_bytes\": 80e9,\n"
        "     \"scaleup\": {\"domain\": 8}}\n"
        "  ],\n"
        "  \"zeta\": null, \"alpha\": true\n"
        "}\n";
    cfit_json *root = parse_ok(text);
    assert_int_equal(root->type, CFIT_JSON_OBJECT);
    assert_int_equal(root->line, 1);
    assert_int_equal(root->col, 1);
    assert_int_equal(root->n, 3);
    assert_string_equal(root->members[0].key, "gpus");   /* file order, not sorted */
    assert_string_equal(root->members[1].key, "zeta");
    assert_string_equal(root->members[2].key, "alpha");
    assert_int_equal(root->members[1].line, 6);
    assert_int_equal(root->members[1].col, 3);
    assert_int_equal(root->members[2].col, 17);

    const cfit_json *gpus = cfit_json_get(root, "gpus");
    assert_non_null(gpus);
    assert_int_equal(gpus->type, CFIT_JSON_ARRAY);
    assert_int_equal(gpus->line, 2);
    assert_int_equal(gpus->col, 11);
    assert_int_equal(gpus->n, 1);
    const cfit_json *gpu = gpus->items[0];
    assert_int_equal(gpu->line, 3);
    assert_int_equal(gpu->col, 5);
    const cfit_json_member *mem = cfit_json_member_get(gpu, "memory_bytes");
    assert_non_null(mem);
    assert_int_equal(mem->line, 3);
    assert_int_equal(mem->col, 26);
    assert_int_equal(mem->value->col, 42);
    assert_true(mem->value->number == 80e9);
    const cfit_json *domain = cfit_json_get(cfit_json_get(gpu, "scaleup"), "domain");
    assert_non_null(domain);
    assert_true(domain->number == 8.0);
    assert_int_equal(domain->line, 4);
    assert_int_equal(domain->col, 28);
    assert_string_equal(cfit_json_get(gpu, "name")->string, "h100-sxm");

    assert_null(cfit_json_get(root, "missing"));
    assert_null(cfit_json_get(gpus, "gpus"));   /* not an object */
    assert_null(cfit_json_get(NULL, "gpus"));
    assert_null(cfit_json_member_get(root, NULL));
    cfit_json_free(root);
    cfit_json_free(NULL);
}

static void test_nested_and_empty(void **state)
{
    (void)state;
    cfit_json *v = parse_ok("[[], {}, [[1, [2]], {\"a\": {\"b\": []}}], \"\"]");
    assert_int_equal(v->n, 4);
    assert_int_equal(v->items[0]->type, CFIT_JSON_ARRAY);
    assert_int_equal(v->items[0]->n, 0);
    assert_int_equal(v->items[1]->type, CFIT_JSON_OBJECT);
    assert_int_equal(v->items[1]->n, 0);
    assert_true(v->items[2]->items[0]->items[1]->items[0]->number == 2.0);
    const cfit_json *b = cfit_json_get(cfit_json_get(v->items[2]->items[1], "a"), "b");
    assert_non_null(b);
    assert_int_equal(b->type, CFIT_JSON_ARRAY);
    assert_string_equal(v->items[3]->string, "");
    cfit_json_free(v);
}

static void test_depth_limit(void **state)
{
    (void)state;
    char text[2 * (CFIT_JSON_MAX_DEPTH + 1) + 1];
    int depth = CFIT_JSON_MAX_DEPTH;
    memset(text, '[', (size_t)depth);
    memset(text + depth, ']', (size_t)depth);
    text[2 * depth] = '\0';
    cfit_json_free(parse_ok(text));

    depth = CFIT_JSON_MAX_DEPTH + 1;
    memset(text, '[', (size_t)depth);
    memset(text + depth, ']', (size_t)depth);
    text[2 * depth] = '\0';
    parse_bad(text, 1, CFIT_JSON_MAX_DEPTH + 1, "nesting deeper than 64 levels");

    char objs[16 * (CFIT_JSON_MAX_DEPTH + 1)] = "";
    for (int i = 0; i <= CFIT_JSON_MAX_DEPTH; i++)
        strcat(objs, "{\"k\":");
    parse_bad(objs, 1, 5 * CFIT_JSON_MAX_DEPTH + 1, "nesting");
}

static void test_big_containers(void **state)
{
    (void)state;
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "{");
    for (int i = 0; i < 2000; i++)
        cfit_buf_printf(&b, "%s\"k%d\": [%d]", i ? ", " : "", i, i);
    cfit_buf_puts(&b, "}");
    assert_true(cfit_buf_ok(&b));
    cfit_json *v = parse_ok(b.data);
    assert_int_equal(v->n, 2000);
    assert_string_equal(v->members[1999].key, "k1999");
    assert_true(cfit_json_get(v, "k1234")->items[0]->number == 1234.0);
    cfit_json_free(v);

    b.data[b.len - 1] = ',';   /* then repeat an early key at the end */
    cfit_buf_puts(&b, "\"k17\": 0}");
    parse_bad(b.data, 1, (int)(b.len - strlen("\"k17\": 0}") + 1), "duplicate key 'k17'");
    cfit_buf_fini(&b);
}

/* ---- strings ----------------------------------------------------------- */

static void test_string_escapes(void **state)
{
    (void)state;
    static const struct { const char *json, *want; } cases[] = {
        {"\"a\\\"b\"", "a\"b"},
        {"\"\\\\ \\/ \\b\\f\\n\\r\\t\"", "\\ / \b\f\n\r\t"},
        {"\"\\u0041\\u00e9\\u00E9\"", "A\xc3\xa9\xc3\xa9"},
        {"\"\\u20ac\"", "\xe2\x82\xac"},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80"},
        {"\"\\uD834\\uDD1E!\"", "\xf0\x9d\x84\x9e!"},
        {"\"\\u007f\\u0080\\u07ff\\u0800\\uffff\"", "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"},
        {"\"caf\xc3\xa9 \xe2\x82\xac\"", "caf\xc3\xa9 \xe2\x82\xac"},   /* raw UTF-8 */
        {"\"\x7f\"", "\x7f"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfit_json *v = parse_ok(cases[i].json);
        assert_int_equal(v->type, CFIT_JSON_STRING);
        assert_string_equal(v->string, cases[i].want);
        cfit_json_free(v);
    }
    cfit_json *v = parse_ok("{\"k\\u00e9y\\n\": 1}");
    assert_string_equal(v->members[0].key, "k\xc3\xa9y\n");
    cfit_json_free(v);
}

static void test_string_errors(void **state)
{
    (void)state;
    parse_bad("[\"abc", 1, 2, "unterminated string");
    parse_bad("{\"a\n\": 1}", 1, 2, "unterminated string");
    parse_bad("\"abc\\", 1, 1, "unterminated string");
    parse_bad("\"a\tb\"", 1, 3, "control character 0x09");
    parse_bad("  \"a\\xb\"", 1, 5, "invalid escape");
    parse_bad("\"\\u12\"", 1, 2, "4 hex digits");
    parse_bad("\"\\u12", 1, 2, "4 hex digits");
    parse_bad("\"\\u12g4\"", 1, 2, "4 hex digits");
    parse_bad("\"x\\u0000\"", 1, 3, "\\u0000 is not allowed");
    parse_bad("\"\\ud800\"", 1, 2, "unpaired surrogate");
    parse_bad("\"\\ud800", 1, 2, "unpaired surrogate");
    parse_bad("\"\\ud800\\u0041\"", 1, 2, "unpaired surrogate");
    parse_bad("\"\\ud800\\ud800\"", 1, 2, "unpaired surrogate");
    parse_bad("\"\\udc00\"", 1, 2, "unpaired surrogate");
    parse_bad("\"\\ud800\\n\"", 1, 2, "unpaired surrogate");
    parse_bad_n("\"a\0b\"", 5, 1, 3, "control character 0x00");
}

/* ---- syntax errors and positions --------------------------------------- */

static void test_error_positions(void **state)
{
    (void)state;
    parse_bad("{\n\"a\": 1,\n\"b\":@}", 3, 5, "unexpected '@'");
    parse_bad("{\n  \"a\": 1,\n    #", 3, 5, "expected a string key");
    parse_bad("{\"a\": 1 \"b\": 2}", 1, 9, "expected ',' or '}' after object member");
    parse_bad("[1 2]", 1, 4, "expected ',' or ']' after array element");
    parse_bad("{\"name\": 1,\n \"name\": 2}", 2, 2, "duplicate key 'name'");
    parse_bad("{\"a\": {\"x\": 1, \"x\": 2}}", 1, 16, "duplicate key 'x'");
    parse_bad("{\"a\" 1}", 1, 6, "expected ':' after object key");
    parse_bad("{\"a\": }", 1, 7, "expected a value");
    parse_bad("{1: 2}", 1, 2, "expected a string key or '}'");
    parse_bad("{\"a\": 1,}", 1, 9, "trailing comma before '}'");
    parse_bad("[1,\n ]", 2, 2, "trailing comma before ']'");
    parse_bad("[1,,2]", 1, 4, "unexpected ','");
    parse_bad("{} x", 1, 4, "after the JSON value");
    parse_bad("[1]]", 1, 4, "after the JSON value");
    parse_bad("1 2", 1, 3, "after the JSON value");
    parse_bad("\"a\"\"b\"", 1, 4, "after the JSON value");
    parse_bad("", 1, 1, "unexpected end of input");
    parse_bad("  \n  ", 2, 3, "unexpected end of input");
    parse_bad("[1,\n2", 2, 2, "unexpected end of input: unclosed array opened at 1:1 (expected ',' or ']')");
    parse_bad("{\"a\": 1", 1, 8, "unexpected end of input: unclosed object opened at 1:1 (expected ',' or '}')");
    parse_bad("{\"a\"", 1, 5, "unexpected end of input: unclosed object opened at 1:1 (expected ':')");
    parse_bad("[", 1, 2, "unexpected end of input: unclosed array opened at 1:1 (expected a value)");
    /* truncated files name the innermost unclosed container */
    parse_bad("{\n  \"a\": 1,\n", 3, 1, "unexpected end of input: unclosed object opened at 1:1 (expected a string key)");
    parse_bad("{\"a\": [1, {\"b\": ", 1, 17, "unclosed object opened at 1:11 (expected a value)");
    parse_bad("{\"a\": [1, {}", 1, 13, "unclosed array opened at 1:7 (expected ',' or ']')");
    parse_bad("{", 1, 2, "unclosed object opened at 1:1 (expected a string key or '}')");
    parse_bad("\x01", 1, 1, "byte 0x01");
    parse_bad("\xc3\xa9", 1, 1, "byte 0xc3");
    parse_bad("// comment\n{}", 1, 1, "unexpected '/'");
    parse_bad("{'a': 1}", 1, 2, "expected a string key");
    parse_bad_n("[1]\0", 4, 1, 4, "byte 0x00");
}

static void test_number_and_literal_errors(void **state)
{
    (void)state;
    parse_bad("01", 1, 1, "leading zeros");
    parse_bad("[-012]", 1, 3, "leading zeros");
    parse_bad("-", 1, 2, "expected a digit after '-'");
    parse_bad("- 1", 1, 2, "expected a digit after '-'");
    parse_bad("1.", 1, 3, "expected a digit after '.'");
    parse_bad("1.e5", 1, 3, "expected a digit after '.'");
    parse_bad("1e", 1, 3, "exponent");
    parse_bad("1e+", 1, 4, "exponent");
    parse_bad(".5", 1, 1, "unexpected '.'");
    parse_bad("+1", 1, 1, "unexpected '+'");
    parse_bad("[1e999]", 1, 2, "number out of range");
    parse_bad("-1e400", 1, 1, "number out of range");
    parse_bad("NaN", 1, 1, "unexpected 'N'");
    parse_bad("Infinity", 1, 1, "unexpected 'I'");
    parse_bad("-Infinity", 1, 2, "expected a digit");
    parse_bad("0x10", 1, 2, "after the JSON value");
    parse_bad("tru", 1, 1, "invalid literal");
    parse_bad("[nul]", 1, 2, "invalid literal");
    parse_bad("True", 1, 1, "unexpected 'T'");
    parse_bad("truex", 1, 5, "after the JSON value");
    parse_bad("[truefalse]", 1, 6, "expected ',' or ']'");
}

static void test_api_edges(void **state)
{
    (void)state;
    cfit_diag d;
    int err = 0;
    cfit_diag_clear(&d);
    assert_null(cfit_json_parse(NULL, 0, NULL, &err, &d));
    assert_int_equal(err, CFIT_EPARSE);
    assert_string_equal(d.file, "");
    assert_int_equal(d.line, 1);
    assert_null(cfit_json_parse("{", 1, NULL, NULL, NULL));   /* no err, no diag */
    cfit_json *v = cfit_json_parse("[1] trailing", 3, NULL, NULL, NULL);   /* len bounds */
    assert_non_null(v);
    cfit_json_free(v);

    assert_string_equal(cfit_json_type_name(CFIT_JSON_NULL), "null");
    assert_string_equal(cfit_json_type_name(CFIT_JSON_BOOL), "boolean");
    assert_string_equal(cfit_json_type_name(CFIT_JSON_NUMBER), "number");
    assert_string_equal(cfit_json_type_name(CFIT_JSON_STRING), "string");
    assert_string_equal(cfit_json_type_name(CFIT_JSON_ARRAY), "array");
    assert_string_equal(cfit_json_type_name(CFIT_JSON_OBJECT), "object");
    assert_string_equal(cfit_json_type_name((cfit_json_type)99), "unknown");
}

/* ---- writers ----------------------------------------------------------- */

static void test_buf(void **state)
{
    (void)state;
    cfit_buf b;
    cfit_buf_init(&b);
    assert_true(cfit_buf_ok(&b));
    assert_string_equal(b.data, "");
    cfit_buf_puts(&b, "abc");
    cfit_buf_printf(&b, "-%d-%s", 42, "x");
    assert_string_equal(b.data, "abc-42-x");
    assert_int_equal(b.len, 8);
    for (int i = 0; i < 10000; i++)
        cfit_buf_printf(&b, "%04d", i % 10000);
    assert_true(cfit_buf_ok(&b));
    assert_int_equal(b.len, 8 + 40000);
    assert_int_equal(strlen(b.data), b.len);
    assert_memory_equal(b.data + b.len - 4, "9999", 4);
    cfit_buf_fini(&b);
    assert_null(b.data);
    cfit_buf_fini(&b);   /* twice is harmless */
}

static char *json_string(const char *s)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_json_string(&b, s);
    assert_true(cfit_buf_ok(&b));
    return b.data;
}

static char *json_number(double v)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_json_number(&b, v);
    assert_true(cfit_buf_ok(&b));
    return b.data;
}

static void expect_string_out(const char *in, const char *want)
{
    char *got = json_string(in);
    assert_string_equal(got, want);
    free(got);
}

static void expect_number_out(double v, const char *want)
{
    char *got = json_number(v);
    assert_string_equal(got, want);
    free(got);
}

static void test_write_string(void **state)
{
    (void)state;
    expect_string_out("plain", "\"plain\"");
    expect_string_out("", "\"\"");
    expect_string_out("a\"b\\c", "\"a\\\"b\\\\c\"");
    expect_string_out("\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\"");
    expect_string_out("\x01\x1f", "\"\\u0001\\u001f\"");
    expect_string_out("caf\xc3\xa9/\x7f", "\"caf\xc3\xa9/\x7f\"");
    expect_string_out(NULL, "null");
}

/* Issue 17: strings must be UTF-8 (RFC 3629) on the way in, and are on the way out. */
static void test_utf8(void **state)
{
    (void)state;
    cfit_json_free(parse_ok("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""));
    parse_bad("\"a\xff\"", 1, 3, "invalid UTF-8 byte 0xff");
    parse_bad("{\n  \"k\": \"x\xc3\"}", 2, 10, "invalid UTF-8 byte 0xc3");   /* truncated */
    parse_bad("\"\xc0\xaf\"", 1, 2, "invalid UTF-8");          /* overlong '/' */
    parse_bad("\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8");      /* a surrogate */
    parse_bad("\"\xf4\x90\x80\x80\"", 1, 2, "invalid UTF-8"); /* past U+10FFFF */
    assert_int_equal(cfit__utf8_invalid_at("ok\xc3\xa9", 4), 4);
    assert_int_equal(cfit__utf8_invalid_at("ok\x80", 3), 2);
    int line, col;
    cfit__text_line_col("ab\ncd", 4, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 2);
    expect_string_out("a\xff" "b", "\"a\xef\xbf\xbd" "b\"");
    expect_string_out("\xc3", "\"\xef\xbf\xbd\"");
    expect_string_out("\xe2\x82\xac\xe2\x82", "\"\xe2\x82\xac\xef\xbf\xbd\xef\xbf\xbd\"");
}

static void test_write_number(void **state)
{
    (void)state;
    expect_number_out(0.0, "0");
    expect_number_out(-0.0, "0");
    expect_number_out(42.0, "42");
    expect_number_out(-7.0, "-7");
    expect_number_out(80e9, "80000000000");
    expect_number_out(9007199254740991.0, "9007199254740991");
    expect_number_out(9007199254740992.0, "9.007199255e+15");
    expect_number_out(1.5, "1.5");
    expect_number_out(0.1, "0.1");
    expect_number_out(1.0 / 3.0, "0.3333333333");
    expect_number_out(1e-7, "1e-07");
    expect_number_out(1e300, "1e+300");
    expect_number_out(NAN, "null");
    expect_number_out(INFINITY, "null");
    expect_number_out(-INFINITY, "null");
}

/* Every byte 1..255 written as a JSON string reads back unchanged; numbers too. */
static void test_round_trip(void **state)
{
    (void)state;
    char all[128];   /* every ASCII byte; bytes that are not UTF-8 go out as U+FFFD (test_utf8) */
    for (int i = 1; i < 128; i++)
        all[i - 1] = (char)i;
    all[127] = '\0';
    char *text = json_string(all);
    cfit_json *v = parse_ok(text);
    assert_int_equal(v->type, CFIT_JSON_STRING);
    assert_string_equal(v->string, all);
    cfit_json_free(v);
    free(text);

    static const double nums[] = {0.0, -1.0, 123456789.0, 0.5, -2.75, 1e-9, 6.02e23};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char *s = json_number(nums[i]);
        v = parse_ok(s);
        assert_true(fabs(v->number - nums[i]) <= 1e-9 * fabs(nums[i]));
        cfit_json_free(v);
        free(s);
    }

    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "{");
    cfit_buf_json_string(&b, "k\"\n");
    cfit_buf_puts(&b, ": [");
    cfit_buf_json_number(&b, 3.0);
    cfit_buf_puts(&b, ", ");
    cfit_buf_json_string(&b, "\t\xe2\x82\xac");
    cfit_buf_puts(&b, "]}");
    v = parse_ok(b.data);
    assert_string_equal(v->members[0].key, "k\"\n");
    assert_true(v->members[0].value->items[0]->number == 3.0);
    assert_string_equal(v->members[0].value->items[1]->string, "\t\xe2\x82\xac");
    cfit_json_free(v);
    cfit_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_object_order_and_positions),
        cmocka_unit_test(test_nested_and_empty),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_big_containers),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_string_errors),
        cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_number_and_literal_errors),
        cmocka_unit_test(test_api_edges),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_write_string),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_write_number),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
