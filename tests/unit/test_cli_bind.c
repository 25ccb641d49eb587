/* test_cli_bind.c - the option binding tables of the command line (cli_bind, src/cli/cli_bind.c):
 * every kind stores its field, a bad value is refused with the message the hand parsers printed,
 * and CLI_GIVEN rows mark an option given whether its value is bound or goes to the handler. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { O_FLAG = 1, O_STR, O_INT, O_LONG, O_COUNT, O_UCOUNT, O_REAL, O_ENUM, O_NAMED, O_HANDLED, O_UNSIGNED };

static const cli_opt opts[] = {
    {"flag", 'q', NULL, "a flag", O_FLAG},
    {"str", 0, "TEXT", "a string", O_STR},
    {"int", 'n', "N", "an int", O_INT},
    {"long", 0, "N", "a long", O_LONG},
    {"count", 0, "N", "a count (double)", O_COUNT},
    {"ucount", 0, "N", "a count (uint64_t)", O_UCOUNT},
    {"real", 0, "X", "a real", O_REAL},
    {"enum", 0, "a|b", "an enum", O_ENUM},
    {"named", 0, "NAME", "a named index", O_NAMED},
    {"handled", 0, "X", "parsed by the handler", O_HANDLED},
    {"unsigned", 0, "N", "an unsigned", O_UNSIGNED},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct ctx {
    int flag, i, e, named, given_real, given_handled, given_flag, handler_calls, positional;
    unsigned u;
    long l;
    double count, real;
    uint64_t ucount;
    const char *str, *handled;
} ctx;

static const cli_name ab[] = {{"a", 10}, {"b", 20}, {NULL, 0}};

static const char *colour(int i)
{
    static const char *const names[] = {"red", "green", "blue"};
    return names[i];
}

static const cli_bind binds[] = {
    CLI_FLAG(O_FLAG, ctx, flag),
    CLI_GIVEN(O_FLAG, ctx, given_flag),
    CLI_STRING(O_STR, ctx, str),
    CLI_INT(O_INT, ctx, i, 1, 100),
    CLI_INT(O_LONG, ctx, l, 0, 4294967295L),
    CLI_INT(O_UNSIGNED, ctx, u, 1, 65536),
    CLI_COUNT(O_COUNT, ctx, count),
    CLI_UCOUNT(O_UCOUNT, ctx, ucount),
    CLI_GIVEN(O_REAL, ctx, given_real),   /* before the value row: the order does not matter */
    CLI_REAL(O_REAL, ctx, real, 0.5, 2),
    CLI_ENUM(O_ENUM, ctx, e, ab),
    CLI_NAMED(O_NAMED, ctx, named, colour, 3),
    CLI_GIVEN(O_HANDLED, ctx, given_handled),
    {.id = 0},
};

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    ctx *c = vc;
    (void)name;
    if (id == -1) {
        c->positional++;
        return 0;
    }
    c->handler_calls++;
    assert_int_equal(id, O_HANDLED);
    assert_int_equal(c->given_handled, 1);   /* marked before the handler runs */
    c->handled = value;
    return 0;
}

/* Parse the NULL-terminated words after "cmd" into c; what the parser wrote to stderr goes to err. */
static int parse(ctx *c, char *err, size_t n, ...)
{
    char *argv[32] = {"cmd"};
    int argc = 1;
    va_list ap;
    va_start(ap, n);
    for (char *w; (w = va_arg(ap, char *)) && argc < 31;)
        argv[argc++] = w;
    va_end(ap);
    memset(c, 0, sizeof *c);
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    dup2(fileno(tmp), 2);
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, c, "cmd [options]", "A test.");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t got = fread(err, 1, n - 1, tmp);
    err[got] = '\0';
    fclose(tmp);
    return rc;
}

static void test_every_kind_stores(void **state)
{
    (void)state;
    ctx c;
    char err[512];
    int rc = parse(&c, err, sizeof err, "--flag", "--str", "hello", "-n", "42", "--long=4000000000", "--unsigned",
                   "65536", "--count", "1.5M", "--ucount", "2K", "--real", "1.25", "--enum", "b", "--named", "blue",
                   "file", (char *)NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
    assert_int_equal(c.flag, 1);
    assert_int_equal(c.given_flag, 1);
    assert_string_equal(c.str, "hello");
    assert_int_equal(c.i, 42);
    assert_true(c.l == 4000000000L);
    assert_true(c.u == 65536u);
    assert_true(c.count == 1.5e6);
    assert_true(c.ucount == 2000);
    assert_true(c.real == 1.25);
    assert_int_equal(c.e, 20);
    assert_int_equal(c.named, 2);
    assert_int_equal(c.positional, 1);
    assert_int_equal(c.handler_calls, 0);   /* every option but --handled is bound */
    assert_int_equal(c.given_real, 1);
    assert_int_equal(c.given_handled, 0);
}

static void test_bundled_short_options(void **state)
{
    (void)state;
    ctx c;
    char err[512];
    assert_int_equal(parse(&c, err, sizeof err, "-qn7", (char *)NULL), 0);
    assert_int_equal(c.flag, 1);
    assert_int_equal(c.i, 7);
}

static void test_given_marks(void **state)
{
    (void)state;
    ctx c;
    char err[512];
    assert_int_equal(parse(&c, err, sizeof err, "--handled", "x", (char *)NULL), 0);
    assert_int_equal(c.given_handled, 1);
    assert_int_equal(c.handler_calls, 1);
    assert_string_equal(c.handled, "x");
    assert_int_equal(c.given_real, 0);
    assert_int_equal(c.given_flag, 0);
    assert_int_equal(parse(&c, err, sizeof err, "--real", "2", (char *)NULL), 0);
    assert_int_equal(c.given_real, 1);
    assert_true(c.real == 2.0);
    assert_int_equal(c.handler_calls, 0);
    assert_null(cli_bind_find(binds, O_HANDLED));   /* a CLI_GIVEN row binds no value */
    assert_int_equal(cli_bind_find(binds, O_REAL)->kind, CLI_BIND_REAL);
}

/* A refused value: exit code 2, the field untouched, the message as cli_int and friends print it. */
static void expect_refused(const char *opt, const char *value, const char *want)
{
    ctx c;
    char err[512];
    int rc = parse(&c, err, sizeof err, (char *)opt, (char *)value, (char *)NULL);
    assert_int_equal(rc, EXIT_USAGE);
    assert_string_equal(err, want);
    assert_int_equal(c.i, 0);
    assert_true(c.real == 0.0);
    assert_int_equal(c.e, 0);
    assert_true(c.ucount == 0);
}

static void test_refused_values(void **state)
{
    (void)state;
    char want[256];
    long v;
    /* the binder prints what the hand parsers did: cli_int's own message */
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    assert_int_equal(cli_int("int", "0", 1, 100, &v), EXIT_USAGE);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    want[fread(want, 1, sizeof want - 1, tmp)] = '\0';
    fclose(tmp);
    expect_refused("--int", "0", want);
    expect_refused("--enum", "c", "clusterfit: error: --enum: expected a or b, got 'c'\n");
    expect_refused("--named", "pink", "clusterfit: error: --named: expected red, green or blue, got 'pink'\n");
    ctx c;
    char err[512];
    assert_int_equal(parse(&c, err, sizeof err, "--real", "3", (char *)NULL), EXIT_USAGE);
    assert_non_null(strstr(err, "clusterfit: error: --real: "));
    assert_int_equal(c.given_real, 1);   /* marked as it appeared, as `x_given = 1; return cli_real()` */
    assert_int_equal(parse(&c, err, sizeof err, "--ucount", "lots", (char *)NULL), EXIT_USAGE);
    assert_non_null(strstr(err, "clusterfit: error: --ucount: "));
    assert_true(c.ucount == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_stores),
        cmocka_unit_test(test_bundled_short_options),
        cmocka_unit_test(test_given_marks),
        cmocka_unit_test(test_refused_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
