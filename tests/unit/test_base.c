/* test_base.c - the shared plumbing of src/base: array growth (grow.h) and the clocks (clock.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <time.h>

#include "clusterfit/base.h"
#include "base/clock.h"
#include "base/grow.h"

static void test_grow_cap_doubles(void **state)
{
    (void)state;
    assert_int_equal(cfit__grow_cap(0, 1, 4), 8);
    assert_int_equal(cfit__grow_cap(0, 9, 4), 16);
    assert_int_equal(cfit__grow_cap(8, 8, 4), 8);     /* already holds it */
    assert_int_equal(cfit__grow_cap(8, 9, 4), 16);
    assert_int_equal(cfit__grow_cap(3, 100, 1), 192);
}

static void test_grow_cap_overflow(void **state)
{
    (void)state;
    assert_int_equal(cfit__grow_cap(0, SIZE_MAX / 8 + 1, 8), 0);
    assert_int_equal(cfit__grow_cap(0, 1, 0), 0);
    /* doubling past the limit stops at need rather than wrapping */
    size_t cap = SIZE_MAX / 16 + 1, need = cap + 1;
    assert_int_equal(cfit__grow_cap(cap, need, 8), need);
}

static void test_grow_keeps_contents(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(cfit__grow(&v, &cap, (size_t)i + 1, sizeof *v), CFIT_EOK);
        assert_true(cap >= (size_t)i + 1);
        v[i] = i;
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i);
    assert_int_equal(cap, 1024);
    free(v);
}

static void test_grow_failure_leaves_array(void **state)
{
    (void)state;
    double *v = NULL;
    size_t cap = 0;
    assert_int_equal(cfit__grow(&v, &cap, 4, sizeof *v), CFIT_EOK);
    double *before = v;
    assert_int_equal(cfit__grow(&v, &cap, SIZE_MAX / 4, sizeof *v), CFIT_ENOMEM);
    assert_ptr_equal(v, before);
    assert_int_equal(cap, 8);
    free(v);
}

static void test_clocks(void **state)
{
    (void)state;
    double a = cfit__now(), b = cfit_now_s();
    assert_true(b >= a);
    assert_true(cfit__unix_s() > 1.5e9);   /* after 2017 */
    struct timespec ts;
    cfit__monotonic_after_ms(&ts, 1999);
    double at = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    assert_true(at - b > 1.9 && at - b < 60.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_cap_doubles),
        cmocka_unit_test(test_grow_cap_overflow),
        cmocka_unit_test(test_grow_keeps_contents),
        cmocka_unit_test(test_grow_failure_leaves_array),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
