/* test_bench_io.c - the storage benchmark on a temporary directory (pread and io_uring engines,
 * keep/reuse, cleanup, bad options) and the STREAM memory benchmark (accounting, validation,
 * last-level cache from a fake sysfs tree). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clusterfit/memory.h"
#include "clusterfit/storage.h"

static char tmpdir[256];
static char datafile[512];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/cfit-bench-io-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(datafile, sizeof datafile, "%s/clusterfit-bench-storage.dat", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(datafile);
    return rmdir(tmpdir);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void small_opts(cfit_storage_opts *o)
{
    cfit_storage_opts_init(o);
    o->dir = tmpdir;
    o->size_bytes = 2 << 20;
    o->block_bytes = 64 << 10;
    o->threads = 2;
    o->queue_depth = 4;
}

static void check_pass(const cfit_storage_test *t, double ops, double block)
{
    assert_int_equal(t->measured, 1);
    assert_true(t->ops == ops);
    assert_true(t->bytes == ops * block);
    assert_true(t->seconds > 0 && t->bytes_per_s > 0 && t->iops > 0);
    assert_true(fabs(t->iops * block - t->bytes_per_s) <= 1e-6 * t->bytes_per_s);
}

static void test_storage_pread(void **state)
{
    (void)state;
    cfit_storage_opts o;
    small_opts(&o);
    o.engine = CFIT_IO_PREAD;
    o.threads = 3;   /* 32 blocks over 3 threads: uneven slices */
    o.random_ops = 50;
    cfit_storage_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_storage_run(&o, &r, &d);
    if (rc)
        fail_msg("%s", d.msg);
    assert_string_equal(r.engine, "pread");
    check_pass(&r.seq_write, 32, 65536);
    check_pass(&r.seq_read, 32, 65536);
    check_pass(&r.rand_read, 50, 65536);
    assert_int_equal(r.reused, 0);
    assert_int_equal(r.kept, 0);
    assert_false(exists(datafile));
    /* buffered: the page-cache caveat is among the notes */
    int noted = 0;
    for (int i = 0; i < r.nnotes; i++)
        noted |= strstr(r.notes[i], "page cache") != NULL;
    assert_true(noted);
}

static void test_storage_auto_direct(void **state)
{
    (void)state;
    cfit_storage_opts o;
    small_opts(&o);
    o.direct = 1;
    cfit_storage_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_storage_run(&o, &r, &d);
    if (rc)
        fail_msg("%s", d.msg);
    /* io_uring when built with it and the kernel allows it; either way a note says why not */
    assert_true(strcmp(r.engine, "io_uring") == 0 || (strcmp(r.engine, "pread") == 0 && r.nnotes > 0));
    if (!cfit_storage_have_uring())
        assert_string_equal(r.engine, "pread");
    /* O_DIRECT either used or refused with a note */
    assert_true(r.direct || r.nnotes > 0);
    check_pass(&r.seq_write, 32, 65536);
    check_pass(&r.seq_read, 32, 65536);
    check_pass(&r.rand_read, 32, 65536);
    assert_false(exists(datafile));
}

static void test_storage_keep_reuse(void **state)
{
    (void)state;
    cfit_storage_opts o;
    small_opts(&o);
    o.engine = CFIT_IO_PREAD;
    o.keep = 1;
    cfit_storage_result r;
    cfit_diag d;
    assert_int_equal(cfit_storage_run(&o, &r, &d), CFIT_EOK);
    assert_int_equal(r.kept, 1);
    assert_true(exists(datafile));
    assert_int_equal(cfit_storage_run(&o, &r, &d), CFIT_EOK);   /* found with the right size: reused */
    assert_int_equal(r.reused, 1);
    assert_int_equal(r.seq_write.measured, 0);
    check_pass(&r.seq_read, 32, 65536);
    o.fresh = 1;                                                   /* a write need: written again */
    assert_int_equal(cfit_storage_run(&o, &r, &d), CFIT_EOK);
    assert_int_equal(r.reused, 0);
    check_pass(&r.seq_write, 32, 65536);
    o.fresh = 0;
    o.size_bytes = 1 << 20;                                        /* another size: not reused */
    assert_int_equal(cfit_storage_run(&o, &r, &d), CFIT_EOK);
    assert_int_equal(r.reused, 0);
    o.keep = 0;                                                    /* without --keep: removed */
    assert_int_equal(cfit_storage_run(&o, &r, &d), CFIT_EOK);
    assert_false(exists(datafile));
}

static void test_storage_interrupted(void **state)
{
    (void)state;
    cfit_storage_opts o;
    small_opts(&o);
    volatile sig_atomic_t stop = 1;
    o.stop = &stop;
    cfit_storage_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_storage_run(&o, &r, &d), CFIT_ESYS);
    assert_non_null(strstr(d.msg, "interrupted"));
    assert_false(exists(datafile));
    char partial[600];
    snprintf(partial, sizeof partial, "%s.partial", datafile);
    assert_false(exists(partial));
}

static void bad_storage(cfit_storage_opts *o, const char *needle)
{
    cfit_storage_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_storage_run(o, &r, &d);
    if (rc != CFIT_EINVALID || !strstr(d.msg, needle))
        fail_msg("got %d '%s', want EINVALID with '%s'", rc, d.msg, needle);
    assert_false(exists(datafile));
}

static void test_storage_bad_options(void **state)
{
    (void)state;
    cfit_storage_opts o;
    small_opts(&o);
    o.block_bytes = 1000;
    bad_storage(&o, "multiple of 4K");
    small_opts(&o);
    o.size_bytes = (2 << 20) + 4096;
    bad_storage(&o, "not a multiple of --block");
    small_opts(&o);
    o.threads = 64;
    bad_storage(&o, "fewer than the 64 threads");
    small_opts(&o);
    o.dir = datafile;   /* does not exist */
    bad_storage(&o, "No such file");
    small_opts(&o);
    o.dir = "/dev/null";
    bad_storage(&o, "not a directory");
    small_opts(&o);
    o.size_bytes = (uint64_t)1 << 60;
    o.block_bytes = 1 << 20;
    bad_storage(&o, "GB free");
}

/* ---- memory ---- */

static void test_memory_run(void **state)
{
    (void)state;
    cfit_memory_opts o = {64 << 10, 2, 3};
    cfit_memory_result r;
    cfit_diag d;
    cfit_diag_clear(&d);
    assert_int_equal(cfit_memory_run(&o, &r, &d), CFIT_EOK);
    assert_int_equal(r.elements, 8192);
    assert_int_equal(r.threads, 2);
    assert_int_equal(r.wrong, 0);
    static const char *const names[] = {"Copy", "Scale", "Add", "Triad"};
    static const double words[] = {2, 2, 3, 3};
    for (int i = 0; i < CFIT_STREAM_KERNELS; i++) {
        const cfit_memory_kernel *k = &r.k[i];
        assert_string_equal(k->name, names[i]);
        assert_true(k->bytes == words[i] * 8 * 8192);
        assert_true(k->min_s > 0 && k->min_s <= k->avg_s && k->avg_s <= k->max_s);
        assert_true(fabs(k->best_bytes_per_s - k->bytes / k->min_s) <= 1e-9 * k->best_bytes_per_s);
    }
    cfit_memory_opts bad = {64 << 10, 2, 1};
    assert_int_equal(cfit_memory_run(&bad, &r, &d), CFIT_EINVALID);
    cfit_memory_opts tiny = {16, 4, 3};   /* 2 elements, 4 threads */
    assert_int_equal(cfit_memory_run(&tiny, &r, &d), CFIT_EINVALID);
}

static void test_memory_validate(void **state)
{
    (void)state;
    enum { N = 100, K = 4 };
    double a[N], b[N], c[N];
    double aj = 2.0, bj = 0, cj = 0;   /* the recurrence by hand, from a = 2 */
    for (int k = 0; k < K; k++) {
        cj = aj;
        bj = 3.0 * cj;
        cj = aj + bj;
        aj = bj + 3.0 * cj;
    }
    for (int j = 0; j < N; j++)
        a[j] = aj, b[j] = bj, c[j] = cj;
    double err[3];
    assert_int_equal(cfit_memory_validate(a, b, c, N, K, err), 0);
    assert_true(err[0] == 0 && err[1] == 0 && err[2] == 0);
    assert_int_equal(cfit_memory_validate(a, b, c, N, K + 1, NULL), 3 * N);   /* another iteration count */
    a[7] *= 1.0 + 1e-12;
    b[0] = NAN;
    c[99] = 0;
    assert_int_equal(cfit_memory_validate(a, b, c, N, K, err), 3);
    assert_true(err[0] > 0 && err[2] > 0);
    a[7] = aj * (1.0 + 1e-15);   /* within STREAM's 1e-13 */
    assert_int_equal(cfit_memory_validate(a, b, c, N, K, NULL), 2);
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[1024], dir[1100];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "mkdir -p '%s'", path);
    *strrchr(dir, '/') = '\0';
    strcat(dir, "'");
    assert_int_equal(system(dir), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", text);
    fclose(f);
}

static void test_llc(void **state)
{
    (void)state;
    char root[300], cmd[400];
    snprintf(root, sizeof root, "%s/sys", tmpdir);
    /* two sockets, two CPUs each: L3 of 32M shared per socket; L2 private; an L1i */
    static const char *const share[4] = {"0-1", "0-1", "2-3", "2-3"};
    for (int cpu = 0; cpu < 4; cpu++) {
        char rel[200], own[8];
        snprintf(own, sizeof own, "%d", cpu);
        struct { int idx, level; const char *type, *size, *shared; } e[] = {
            {0, 1, "Instruction", "32K", own}, {1, 2, "Unified", "1024K", own}, {2, 3, "Unified", "32768K", share[cpu]}};
        for (int i = 0; i < 3; i++) {
            char lv[8];
            snprintf(lv, sizeof lv, "%d", e[i].level);
            snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cache/index%d/level", cpu, e[i].idx);
            put(root, rel, lv);
            snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cache/index%d/type", cpu, e[i].idx);
            put(root, rel, e[i].type);
            snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cache/index%d/size", cpu, e[i].idx);
            put(root, rel, e[i].size);
            snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, e[i].idx);
            put(root, rel, e[i].shared);
        }
    }
    assert_int_equal(cfit_memory_llc_bytes(root), (uint64_t)64 << 20);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(cfit_memory_llc_bytes(root), 0);   /* nothing there: unknown */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storage_pread),
        cmocka_unit_test(test_storage_auto_direct),
        cmocka_unit_test(test_storage_keep_reuse),
        cmocka_unit_test(test_storage_interrupted),
        cmocka_unit_test(test_storage_bad_options),
        cmocka_unit_test(test_memory_run),
        cmocka_unit_test(test_memory_validate),
        cmocka_unit_test(test_llc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
