/* catalog_fixture.h - what the unit tests that plan against the embedded catalog share: the catalog
 * loaded once per test group (cmocka group setup and teardown) and a relative-tolerance assert.
 * Each test program includes it once, after the cmocka headers. */
#ifndef CFIT_TEST_CATALOG_FIXTURE_H
#define CFIT_TEST_CATALOG_FIXTURE_H

#include <math.h>

#include "clusterfit/catalog.h"

static cfit_catalog *cat;

static int setup(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_diag_clear(&d);
    cat = cfit_catalog_new(&d);
    if (!cat)
        fail_msg("embedded catalog: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cfit_catalog_free(cat);
    return 0;
}

/* got within rel x |want| of want. */
static inline void assert_rel_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("got %.10g, want %.10g (within %g)\n", got, want, rel);
        fail();
    }
}

#endif
