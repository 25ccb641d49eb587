/* test_collective.c - the collective registry (collective.h): names and aliases round-trip,
 * the refusals, and nccl-tests' bus factors, sizes and ring steps (src/<name>.cu GetBw and
 * GetCollByteCount; doc/PERFORMANCE.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clusterfit/calibration.h"
#include "clusterfit/collective.h"

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-12)
        fail_msg("got %.15g, want %.15g", got, want);
}

static cfit_collective parse_ok(const char *name)
{
    cfit_collective c = CFIT_COLL_COUNT;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_collective_parse(name, &c, &d))
        fail_msg("'%s': %s", name, d.msg);
    return c;
}

/* Every modelled entry sits at its cfit_collective; its names come back to it. */
static void names_round_trip(void **state)
{
    (void)state;
    assert_int_equal(cfit_coll_entries() > CFIT_COLL_COUNT, 1);
    for (int i = 0; i < cfit_coll_entries(); i++) {
        const cfit_coll_info *e = cfit_coll_entry(i);
        assert_non_null(e);
        assert_int_equal(e->id, i < CFIT_COLL_COUNT ? i : CFIT_COLL_COUNT);
        assert_ptr_equal(cfit_coll_find(e->name), e);
        char bin[64];
        snprintf(bin, sizeof bin, "%s_perf", e->nccl_name);
        assert_ptr_equal(cfit_coll_find(bin), e);
        assert_ptr_equal(cfit_coll_find(e->nccl_name), e);
        if (i < CFIT_COLL_COUNT) {
            assert_ptr_equal(cfit_coll_info_of((cfit_collective)i), e);
            assert_string_equal(cfit_collective_name((cfit_collective)i), e->name);
            assert_int_equal(parse_ok(e->name), i);
            assert_int_equal(parse_ok(bin), i);
            assert_non_null(e->ring_steps);
        } else {
            assert_null(e->ring_steps);   /* unmodelled: no schedule, no calibration */
        }
    }
    assert_null(cfit_coll_entry(-1));
    assert_null(cfit_coll_entry(cfit_coll_entries()));
    assert_null(cfit_coll_info_of(CFIT_COLL_COUNT));
    assert_string_equal(cfit_collective_name(CFIT_COLL_COUNT), "?");
}

/* nccl-tests' binary names are aliases of the CLI's spellings. */
static void aliases(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("all_reduce_perf"), CFIT_COLL_ALLREDUCE);
    assert_int_equal(parse_ok("all_reduce"), CFIT_COLL_ALLREDUCE);
    assert_int_equal(parse_ok("all_gather_perf"), CFIT_COLL_ALLGATHER);
    assert_int_equal(parse_ok("reduce_scatter_perf"), CFIT_COLL_REDUCESCATTER);
    assert_int_equal(parse_ok("alltoall_perf"), CFIT_COLL_ALLTOALL);
    assert_int_equal(parse_ok("sendrecv_perf"), CFIT_COLL_SENDRECV);
    assert_string_equal(cfit_coll_find("reduce_perf")->name, "reduce");          /* not reduce_scatter */
    assert_string_equal(cfit_coll_find("alltoallv_perf")->name, "alltoallv");    /* not alltoall */
    assert_int_equal(parse_ok("alltoallv_perf"), CFIT_COLL_ALLTOALLV);   /* modelled by the simulators */
    assert_false(cfit_coll_info_of(CFIT_COLL_ALLTOALLV)->benched);      /* not by the bench */
    assert_true(cfit_coll_info_of(CFIT_COLL_ALLTOALL)->benched);
    assert_null(cfit_coll_find("all_reduce_perfx"));
    assert_null(cfit_coll_find("allreduce_perf"));   /* no such binary */
    assert_null(cfit_coll_find(""));
    assert_null(cfit_coll_find(NULL));
}

static void refusals(void **state)
{
    (void)state;
    cfit_collective c;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_collective_parse("alreduce", &c, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "unknown collective 'alreduce' (did you mean 'allreduce'?)"));
    assert_int_equal(cfit_collective_parse("xyzzy", &c, &d), CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "(expected allreduce, allgather, reducescatter, alltoall, sendrecv or alltoallv)"));
    assert_int_equal(cfit_collective_parse("broadcast_perf", &c, &d), CFIT_EINVALID);
    assert_non_null(strstr(d.msg, "collective 'broadcast_perf' is not modelled (use allreduce, allgather"));
    char list[160];
    assert_string_equal(cfit_coll_list(list, sizeof list, 1, NULL),
                        "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf or "
                        "alltoallv_perf");
    assert_string_equal(cfit_coll_list(list, sizeof list, 0, "pairs"),
                        "allreduce, allgather, reducescatter, alltoall, sendrecv, alltoallv or pairs");
    assert_string_equal(cfit_coll_list(list, 12, 0, NULL), "allreduce, ");   /* truncated, terminated */
}

static double bus(const char *name, int n) { return cfit_coll_find(name)->bus_factor(n); }

/* nccl-tests: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (and gather, scatter,
 * alltoallv) (n-1)/n; send-recv, broadcast, reduce 1. */
static void bus_factors(void **state)
{
    (void)state;
    static const int ns[] = {1, 2, 8};
    for (int i = 0; i < 3; i++) {
        double n = ns[i];
        near(bus("allreduce", ns[i]), 2 * (n - 1) / n);
        near(cfit_coll_bus_factor(CFIT_COLL_ALLREDUCE, ns[i]), 2 * (n - 1) / n);
        const char *ring[] = {"allgather", "reducescatter", "alltoall", "gather", "scatter", "alltoallv"};
        for (int k = 0; k < 6; k++)
            near(bus(ring[k], ns[i]), (n - 1) / n);
        near(bus("sendrecv", ns[i]), 1);
        near(bus("broadcast", ns[i]), 1);
        near(bus("reduce", ns[i]), 1);
    }
    near(cfit_coll_bus_factor(CFIT_COLL_ALLREDUCE, 8), 1.75);
    near(cfit_coll_bus_factor(CFIT_COLL_ALLGATHER, 2), 0.5);
    near(cfit_coll_bus_factor(CFIT_COLL_ALLREDUCE, 0), 0);
    near(cfit_coll_bus_factor(CFIT_COLL_COUNT, 8), 0);
}

/* What nccl-tests' size counts (size / (count x element size)), whether it reduces, and the
 * ring steps the calibration divides the smallest size's time by. */
static void sizes_reduces_steps(void **state)
{
    (void)state;
    near(cfit_coll_find("allreduce")->size_per_count(8), 1);
    near(cfit_coll_find("sendrecv")->size_per_count(8), 1);
    near(cfit_coll_find("allgather")->size_per_count(8), 8);
    near(cfit_coll_find("reducescatter")->size_per_count(8), 8);
    near(cfit_coll_find("alltoall")->size_per_count(8), 8);
    near(cfit_coll_find("hypercube")->size_per_count(8), 7);
    assert_int_equal(cfit_coll_info_of(CFIT_COLL_ALLREDUCE)->reduces, 1);
    assert_int_equal(cfit_coll_info_of(CFIT_COLL_REDUCESCATTER)->reduces, 1);
    assert_int_equal(cfit_coll_find("reduce")->reduces, 1);
    assert_int_equal(cfit_coll_info_of(CFIT_COLL_ALLGATHER)->reduces, 0);
    assert_int_equal(cfit_coll_info_of(CFIT_COLL_ALLTOALL)->reduces, 0);
    assert_int_equal(cfit_coll_info_of(CFIT_COLL_SENDRECV)->reduces, 0);
    assert_int_equal(cfit_calibration_steps("allreduce", 8), 14);
    assert_int_equal(cfit_calibration_steps("allgather", 8), 7);
    assert_int_equal(cfit_calibration_steps("reducescatter", 8), 7);
    assert_int_equal(cfit_calibration_steps("alltoall", 8), 7);
    assert_int_equal(cfit_calibration_steps("sendrecv", 8), 1);
    assert_int_equal(cfit_calibration_steps("allreduce", 1), 0);
    assert_int_equal(cfit_calibration_steps("all_reduce", 8), 0);   /* `bench --json` spells it allreduce */
    assert_int_equal(cfit_calibration_steps("broadcast", 8), 0);
    assert_int_equal(cfit_calibration_steps(NULL, 8), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_round_trip),
        cmocka_unit_test(aliases),
        cmocka_unit_test(refusals),
        cmocka_unit_test(bus_factors),
        cmocka_unit_test(sizes_reduces_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
