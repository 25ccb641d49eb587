/* test_units.c - error table, diagnostics, unit parsing and did-you-mean (src/base). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clusterfit/base.h"

typedef int (*parse_u64_fn)(const char *, uint64_t *, cfit_diag *);
typedef int (*parse_dbl_fn)(const char *, double *, cfit_diag *);

static void expect_u64(parse_u64_fn fn, const char *text, uint64_t want)
{
    cfit_diag d;
    uint64_t v = 0;
    cfit_diag_clear(&d);
    int rc = fn(text, &v, &d);
    if (rc != CFIT_EOK)
        fail_msg("'%s' rejected: %s", text, d.msg);
    if (v != want)
        fail_msg("'%s' gave %llu, want %llu", text, (unsigned long long)v,
                 (unsigned long long)want);
}

static void expect_dbl(parse_dbl_fn fn, const char *text, double want)
{
    cfit_diag d;
    double v = -1.0;
    cfit_diag_clear(&d);
    int rc = fn(text, &v, &d);
    if (rc != CFIT_EOK)
        fail_msg("'%s' rejected: %s", text, d.msg);
    if (!(fabs(v - want) <= 1e-12 * fabs(want)))
        fail_msg("'%s' gave %.17g, want %.17g", text, v, want);
}

/* The call fails with err, leaves the output alone, and says something containing needle. */
static void check_failure(int rc, int err, const cfit_diag *d, const char *text,
                          const char *needle)
{
    if (rc != err)
        fail_msg("'%s': got %s, want %s (%s)", text, cfit_err_name(rc), cfit_err_name(err),
                 d->msg);
    assert_true(d->msg[0] != '\0');
    assert_string_equal(d->file, "");
    assert_int_equal(d->line, 0);
    assert_int_equal(d->col, 0);
    if (needle && !strstr(d->msg, needle))
        fail_msg("'%s': message '%s' lacks '%s'", text, d->msg, needle);
    assert_true(d->msg[strlen(d->msg) - 1] != '.');
}

static void reject_u64(parse_u64_fn fn, const char *text, int err, const char *needle)
{
    cfit_diag d;
    uint64_t v = 12345;
    cfit_diag_clear(&d);
    check_failure(fn(text, &v, &d), err, &d, text, needle);
    assert_true(v == 12345);
}

static void reject_dbl(parse_dbl_fn fn, const char *text, int err, const char *needle)
{
    cfit_diag d;
    double v = 12345.0;
    cfit_diag_clear(&d);
    check_failure(fn(text, &v, &d), err, &d, text, needle);
    assert_true(v == 12345.0);
}

/* ---- errors and diagnostics -------------------------------------------- */

static void test_error_table(void **state)
{
    (void)state;
    assert_string_equal(cfit_strerror(CFIT_EOK), "success");
    assert_string_equal(cfit_strerror(CFIT_ENOMEM), "out of memory");
    assert_string_equal(cfit_strerror(CFIT_ENOFIT), "no layout fits");
    assert_string_equal(cfit_err_name(CFIT_EOK), "CFIT_EOK");
    assert_string_equal(cfit_err_name(CFIT_EPARSE), "CFIT_EPARSE");
    assert_string_equal(cfit_err_name(CFIT_ENOFIT), "CFIT_ENOFIT");
    assert_string_equal(cfit_err_name(-999), "CFIT_E?");
    assert_string_equal(cfit_err_name(7), "CFIT_E?");
    assert_non_null(cfit_strerror(-999));
    assert_true(cfit_strerror(-999)[0] != '\0');
    for (int e = CFIT_ENOFIT; e <= CFIT_EOK; e++) {
        assert_true(strncmp(cfit_err_name(e), "CFIT_E", 6) == 0);
        assert_string_not_equal(cfit_err_name(e), "CFIT_E?");
    }
}

static void test_diag(void **state)
{
    (void)state;
    cfit_diag d;
    char longname[400];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';

    assert_int_equal(cfit_diag_set(NULL, CFIT_EIO, "f", 1, 2, "x"), CFIT_EIO);
    cfit_diag_clear(NULL);

    assert_int_equal(cfit_diag_set(&d, CFIT_EPARSE, "gpus.json", 3, 7, "bad '%s' %d", "x", 5),
                     CFIT_EPARSE);
    assert_string_equal(d.file, "gpus.json");
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 7);
    assert_string_equal(d.msg, "bad 'x' 5");

    cfit_diag_set(&d, CFIT_EPARSE, NULL, 0, 0, "%s", "m");
    assert_string_equal(d.file, "");

    cfit_diag_set(&d, CFIT_EPARSE, longname, 1, 1, "%s%s", longname, longname);
    assert_int_equal(strlen(d.file), sizeof d.file - 1);
    assert_int_equal(strlen(d.msg), sizeof d.msg - 1);

    cfit_diag_set(&d, CFIT_EPARSE, "same.json", 1, 1, "first");
    cfit_diag_set(&d, CFIT_EPARSE, d.file, 2, 2, "again: %s", d.msg);   /* aliasing */
    assert_string_equal(d.file, "same.json");
    assert_string_equal(d.msg, "again: first");

    cfit_diag_clear(&d);
    assert_string_equal(d.file, "");
    assert_string_equal(d.msg, "");
    assert_int_equal(d.line, 0);
}

/* ---- counts ------------------------------------------------------------ */

static void test_count_good(void **state)
{
    (void)state;
    expect_u64(cfit_parse_count, "1", 1);
    expect_u64(cfit_parse_count, "42", 42);
    expect_u64(cfit_parse_count, "007", 7);
    expect_u64(cfit_parse_count, "15T", 15000000000000ULL);
    expect_u64(cfit_parse_count, "1.5K", 1500);
    expect_u64(cfit_parse_count, "1k", 1000);
    expect_u64(cfit_parse_count, "3M", 3000000);
    expect_u64(cfit_parse_count, "2B", 2000000000ULL);
    expect_u64(cfit_parse_count, "2.25B", 2250000000ULL);
    expect_u64(cfit_parse_count, "0.001K", 1);
    expect_u64(cfit_parse_count, "1.000", 1);
    expect_u64(cfit_parse_count, "1e6", 1000000);
    expect_u64(cfit_parse_count, "2.5e3", 2500);
    expect_u64(cfit_parse_count, "150e-1", 15);
    expect_u64(cfit_parse_count, "9223372036854775807", 9223372036854775807ULL);
    expect_u64(cfit_parse_count, "9223372.036854775807T", 9223372036854775807ULL);
    expect_u64(cfit_parse_count, "9223372036854775807000e-3", 9223372036854775807ULL);
}

static void test_count_bad(void **state)
{
    (void)state;
    parse_u64_fn f = cfit_parse_count;
    reject_u64(f, "", CFIT_EPARSE, "empty");
    reject_u64(f, NULL, CFIT_EPARSE, "empty");
    reject_u64(f, " 5", CFIT_EPARSE, "space");
    reject_u64(f, "5 ", CFIT_EPARSE, "space");
    reject_u64(f, "5\t", CFIT_EPARSE, "space");
    reject_u64(f, "+5", CFIT_EPARSE, "'+'");
    reject_u64(f, "-1", CFIT_ERANGE, "negative");
    reject_u64(f, "1e999", CFIT_ERANGE, "out of range");
    reject_u64(f, "nan", CFIT_EPARSE, "expected a number");
    reject_u64(f, "inf", CFIT_EPARSE, "expected a number");
    reject_u64(f, "0x10", CFIT_EPARSE, "unknown suffix 'x10'");
    reject_u64(f, "64Mx", CFIT_EPARSE, "unknown suffix 'Mx'");
    reject_u64(f, "5X", CFIT_EPARSE, "invalid count '5X': unknown suffix 'X' (use K M B T)");
    reject_u64(f, "5G", CFIT_EPARSE, "use K M B T");
    reject_u64(f, "1.5", CFIT_EPARSE, "not a whole number");
    reject_u64(f, "1.0001K", CFIT_EPARSE, "not a whole number");
    reject_u64(f, "15e-1", CFIT_EPARSE, "not a whole number");
    reject_u64(f, "0", CFIT_ERANGE, "at least 1");
    reject_u64(f, "0.0K", CFIT_ERANGE, "at least 1");
    reject_u64(f, "9223372036854775808", CFIT_ERANGE, "out of range");
    reject_u64(f, "18446744073709551616", CFIT_ERANGE, "out of range");
    reject_u64(f, "10000000T", CFIT_ERANGE, "out of range");
    reject_u64(f, "99999999999999999999999999", CFIT_ERANGE, "out of range");
    reject_u64(f, "1.000000000000000000000001", CFIT_ERANGE, "significant digits");
    reject_u64(f, "1.", CFIT_EPARSE, "digit after '.'");
    reject_u64(f, ".5", CFIT_EPARSE, "expected a number");
    reject_u64(f, "1..2", CFIT_EPARSE, "digit after '.'");
    reject_u64(f, "1e", CFIT_EPARSE, "unknown suffix 'e'");
    reject_u64(f, "K", CFIT_EPARSE, "expected a number");
    reject_u64(f, "1KK", CFIT_EPARSE, "unknown suffix 'KK'");
}

static void test_message_quotes_text(void **state)
{
    (void)state;
    cfit_diag d;
    char big[300];
    memset(big, '7', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    big[150] = 'Q';
    cfit_diag_clear(&d);
    assert_int_equal(cfit_parse_count(big, &(uint64_t){0}, &d), CFIT_EPARSE);
    assert_non_null(strstr(d.msg, "...'"));       /* the echo is cut short */
    assert_true(strlen(d.msg) < 300);

    cfit_diag_clear(&d);
    assert_int_equal(cfit_parse_size("5\x01", &(uint64_t){0}, &d), CFIT_EPARSE);
    assert_null(strchr(d.msg, '\x01'));           /* control bytes are not echoed */
}

/* ---- sizes ------------------------------------------------------------- */

static void test_size_good(void **state)
{
    (void)state;
    parse_u64_fn f = cfit_parse_size;
    expect_u64(f, "512", 512);
    expect_u64(f, "0", 0);
    expect_u64(f, "512B", 512);
    expect_u64(f, "1K", 1024);
    expect_u64(f, "1k", 1024);
    expect_u64(f, "64M", 64ULL << 20);
    expect_u64(f, "64MB", 64ULL << 20);
    expect_u64(f, "64MiB", 64ULL << 20);
    expect_u64(f, "64m", 64ULL << 20);
    expect_u64(f, "8G", 8ULL << 30);
    expect_u64(f, "8GiB", 8ULL << 30);
    expect_u64(f, "2T", 2ULL << 40);
    expect_u64(f, "1P", 1ULL << 50);
    expect_u64(f, "1.5K", 1536);
    expect_u64(f, "0.5K", 512);
    expect_u64(f, "0.0009765625K", 1);
    expect_u64(f, "1e3", 1000);
    expect_u64(f, "8191P", 8191ULL << 50);
    expect_u64(f, "9223372036854775807", 9223372036854775807ULL);
}

static void test_size_bad(void **state)
{
    (void)state;
    parse_u64_fn f = cfit_parse_size;
    reject_u64(f, "64Q", CFIT_EPARSE, "invalid size '64Q': unknown suffix 'Q' (use K M G T P)");
    reject_u64(f, "64Mx", CFIT_EPARSE, "unknown suffix 'Mx'");
    reject_u64(f, "64iB", CFIT_EPARSE, "unknown suffix 'iB'");
    reject_u64(f, "64Mib", CFIT_EPARSE, "unknown suffix");
    reject_u64(f, "64b", CFIT_EPARSE, "unknown suffix 'b'");
    reject_u64(f, "64MBs", CFIT_EPARSE, "unknown suffix");
    reject_u64(f, "1E", CFIT_EPARSE, "unknown suffix 'E'");
    reject_u64(f, "0x10", CFIT_EPARSE, "unknown suffix");
    reject_u64(f, "", CFIT_EPARSE, "empty");
    reject_u64(f, " 64M", CFIT_EPARSE, "space");
    reject_u64(f, "64M ", CFIT_EPARSE, "space");
    reject_u64(f, "64 M", CFIT_EPARSE, "space");
    reject_u64(f, "+64M", CFIT_EPARSE, "'+'");
    reject_u64(f, "-1", CFIT_ERANGE, "negative");
    reject_u64(f, "nan", CFIT_EPARSE, "expected a number");
    reject_u64(f, "inf", CFIT_EPARSE, "expected a number");
    reject_u64(f, "1e999", CFIT_ERANGE, "out of range");
    reject_u64(f, "8192P", CFIT_ERANGE, "out of range");
    reject_u64(f, "9223372036854775808", CFIT_ERANGE, "out of range");
    reject_u64(f, "18446744073709551615K", CFIT_ERANGE, "out of range");
    reject_u64(f, "1.5", CFIT_EPARSE, "not a whole number of bytes");
    reject_u64(f, "0.1K", CFIT_EPARSE, "not a whole number of bytes");
    reject_u64(f, "1e-1", CFIT_EPARSE, "not a whole number of bytes");
    reject_u64(f, "1.0000000000000000000000001K", CFIT_ERANGE, "significant digits");
}

/* ---- rates ------------------------------------------------------------- */

static void test_rate_good(void **state)
{
    (void)state;
    parse_dbl_fn f = cfit_parse_rate;
    expect_dbl(f, "400G", 50e9);
    expect_dbl(f, "400Gbps", 50e9);
    expect_dbl(f, "400Gb/s", 50e9);
    expect_dbl(f, "400gbps", 50e9);
    expect_dbl(f, "400Gbit/s", 50e9);
    expect_dbl(f, "50GB/s", 50e9);
    expect_dbl(f, "50GBps", 50e9);
    expect_dbl(f, "100M", 12.5e6);
    expect_dbl(f, "1T", 125e9);
    expect_dbl(f, "1K", 125.0);
    expect_dbl(f, "8bps", 1.0);
    expect_dbl(f, "3B/s", 3.0);
    expect_dbl(f, "12.5GB/s", 12.5e9);
    expect_dbl(f, "1e2G", 12.5e9);
}

static void test_rate_bad(void **state)
{
    (void)state;
    parse_dbl_fn f = cfit_parse_rate;
    reject_dbl(f, "400", CFIT_EPARSE, "missing unit");
    reject_dbl(f, "0G", CFIT_ERANGE, "greater than zero");
    reject_dbl(f, "0GB/s", CFIT_ERANGE, "greater than zero");
    reject_dbl(f, "400Q", CFIT_EPARSE, "unknown unit 'Q'");
    reject_dbl(f, "400GiB/s", CFIT_EPARSE, "unknown unit");
    reject_dbl(f, "400Gbpsx", CFIT_EPARSE, "unknown unit");
    reject_dbl(f, "400GBPS", CFIT_EPARSE, "unknown unit");
    reject_dbl(f, "400P", CFIT_EPARSE, "unknown unit");
    reject_dbl(f, "-400G", CFIT_ERANGE, "negative");
    reject_dbl(f, "+400G", CFIT_EPARSE, "'+'");
    reject_dbl(f, "1e999G", CFIT_ERANGE, "out of range");
    reject_dbl(f, "1e306T", CFIT_ERANGE, "out of range");
    reject_dbl(f, "400 G", CFIT_EPARSE, "space");
    reject_dbl(f, "G", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "infG", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "nanG", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "0x10G", CFIT_EPARSE, "unknown unit");
    reject_dbl(f, "", CFIT_EPARSE, "empty");
}

/* ---- times ------------------------------------------------------------- */

static void test_time_good(void **state)
{
    (void)state;
    parse_dbl_fn f = cfit_parse_time;
    expect_dbl(f, "0", 0.0);
    expect_dbl(f, "0.0", 0.0);
    expect_dbl(f, "0s", 0.0);
    expect_dbl(f, "100ns", 100e-9);
    expect_dbl(f, "1us", 1e-6);
    expect_dbl(f, "5ms", 5e-3);
    expect_dbl(f, "1.5s", 1.5);
    expect_dbl(f, "10m", 600.0);
    expect_dbl(f, "2h", 7200.0);
    expect_dbl(f, "30d", 30 * 86400.0);
    expect_dbl(f, "1e3ms", 1.0);

    double v;
    assert_int_equal(cfit_parse_time("5ms", &v, NULL), CFIT_EOK);
    assert_true(v == 0.005);   /* exactly the nearest double */
}

static void test_time_bad(void **state)
{
    (void)state;
    parse_dbl_fn f = cfit_parse_time;
    reject_dbl(f, "5", CFIT_EPARSE, "invalid time '5': missing unit (e.g. 5ms)");
    reject_dbl(f, "0.5", CFIT_EPARSE, "missing unit");
    reject_dbl(f, "5x", CFIT_EPARSE, "unknown unit 'x' (use ns us ms s m h d)");
    reject_dbl(f, "5S", CFIT_EPARSE, "unknown unit 'S'");
    reject_dbl(f, "5msx", CFIT_EPARSE, "unknown unit 'msx'");
    reject_dbl(f, "5 ms", CFIT_EPARSE, "space");
    reject_dbl(f, "-5ms", CFIT_ERANGE, "negative");
    reject_dbl(f, "+5ms", CFIT_EPARSE, "'+'");
    reject_dbl(f, "1e999s", CFIT_ERANGE, "out of range");
    reject_dbl(f, "1e308d", CFIT_ERANGE, "out of range");
    reject_dbl(f, "infs", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "ms", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "", CFIT_EPARSE, "empty");
}

/* ---- reals ------------------------------------------------------------- */

static void test_real(void **state)
{
    (void)state;
    parse_dbl_fn f = cfit_parse_real;
    expect_dbl(f, "1", 1.0);
    expect_dbl(f, "0", 0.0);
    expect_dbl(f, "-2.5", -2.5);
    expect_dbl(f, "1e-3", 1e-3);
    expect_dbl(f, "3.25E2", 325.0);
    reject_dbl(f, "1x", CFIT_EPARSE, "unexpected 'x' after the number");
    reject_dbl(f, "1K", CFIT_EPARSE, "unexpected 'K'");
    reject_dbl(f, "", CFIT_EPARSE, "empty");
    reject_dbl(f, " 1", CFIT_EPARSE, "space");
    reject_dbl(f, "nan", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "-inf", CFIT_EPARSE, "expected a number");
    reject_dbl(f, "+1", CFIT_EPARSE, "'+'");
    reject_dbl(f, "--1", CFIT_ERANGE, "negative");
    reject_dbl(f, "1e999", CFIT_ERANGE, "out of range");
    reject_dbl(f, "0x10", CFIT_EPARSE, "unexpected 'x10'");
    reject_dbl(f, "-", CFIT_EPARSE, "expected a number");
}

static void test_null_diag(void **state)
{
    (void)state;
    uint64_t u;
    double v;
    assert_int_equal(cfit_parse_count("x", &u, NULL), CFIT_EPARSE);
    assert_int_equal(cfit_parse_size("1Q", &u, NULL), CFIT_EPARSE);
    assert_int_equal(cfit_parse_rate("1", &v, NULL), CFIT_EPARSE);
    assert_int_equal(cfit_parse_time("1", &v, NULL), CFIT_EPARSE);
    assert_int_equal(cfit_parse_real("x", &v, NULL), CFIT_EPARSE);
    assert_int_equal(cfit_parse_count("7", &u, NULL), CFIT_EOK);
    assert_true(u == 7);
}

/* ---- did you mean ------------------------------------------------------ */

static void test_closest(void **state)
{
    (void)state;
    static const char *const gpus[] = {"h100-sxm", "h200-sxm", "b200", "mi300x", "mi350x"};
    const size_t n = sizeof gpus / sizeof gpus[0];
    assert_string_equal(cfit_closest("h100sxm", gpus, n), "h100-sxm");
    assert_string_equal(cfit_closest("h100-sxm", gpus, n), "h100-sxm");
    assert_string_equal(cfit_closest("h200-smx", gpus, n), "h200-sxm");
    assert_string_equal(cfit_closest("b20", gpus, n), "b200");
    assert_string_equal(cfit_closest("mi300", gpus, n), "mi300x");
    assert_string_equal(cfit_closest("mi3", gpus, n) ? "found" : "none", "none");
    assert_null(cfit_closest("zzzz", gpus, n));
    assert_null(cfit_closest("a100-pcie-80gb", gpus, n));
    assert_null(cfit_closest("x", gpus, 0));
    assert_null(cfit_closest(NULL, gpus, n));
    assert_null(cfit_closest("b200", NULL, 3));

    /* suggest: a prefix wins over edit distance ("h100" is 2 edits from "b200") */
    assert_string_equal(cfit_suggest("h100", gpus, n), "h100-sxm");
    assert_string_equal(cfit_suggest("h10", gpus, n), "h100-sxm");
    assert_string_equal(cfit_suggest("mi3", gpus, n), "mi300x");
    assert_string_equal(cfit_suggest("h200-smx", gpus, n), "h200-sxm");
    assert_null(cfit_suggest("h", gpus, n));
    assert_null(cfit_suggest("zzzz", gpus, n));
    assert_null(cfit_suggest(NULL, gpus, n));
    assert_null(cfit_suggest("b200", NULL, 3));

    /* ties go to the first candidate; NULL entries are skipped */
    static const char *const tie[] = {NULL, "abcx", "abcy"};
    assert_string_equal(cfit_closest("abcz", tie, 3), "abcx");
    assert_string_equal(cfit_suggest("abc", tie, 3), "abcx");

    /* the threshold grows with the name: distance 4 is fine for 12+ characters */
    static const char *const longs[] = {"fattree-oversub"};
    assert_string_equal(cfit_closest("fattree-ovrsb-x", longs, 1), "fattree-oversub");
    assert_null(cfit_closest("fat", longs, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_table),
        cmocka_unit_test(test_diag),
        cmocka_unit_test(test_count_good),
        cmocka_unit_test(test_count_bad),
        cmocka_unit_test(test_message_quotes_text),
        cmocka_unit_test(test_size_good),
        cmocka_unit_test(test_size_bad),
        cmocka_unit_test(test_rate_good),
        cmocka_unit_test(test_rate_bad),
        cmocka_unit_test(test_time_good),
        cmocka_unit_test(test_time_bad),
        cmocka_unit_test(test_real),
        cmocka_unit_test(test_null_diag),
        cmocka_unit_test(test_closest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
