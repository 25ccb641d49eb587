/* test_gpu.c - the gpu collector's NVML lifecycle against the fake NVML (tests/fakenvml, path in
 * $CFIT_FAKENVML): no driver, a lost GPU looked for again after gpu_lost_retry_s (not every
 * scrape), a driver restart recovered by re-initialisation, XID counts kept across it, and the
 * watchdog's samples (utilisation and processes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clusterfit/exporter.h"

static char fixture[64], tmpfix[80];

/* Replace the fixture atomically (a new inode: the fake reads that as a driver reload). */
static void put_fixture(const char *text)
{
    FILE *f = fopen(tmpfix, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmpfix, fixture), 0);
}

static char *scrape(cfit_exporter *x)
{
    char *out;
    size_t len;
    assert_int_equal(cfit_exporter_scrape(x, CFIT_EXPO_TEXT, &out, &len), 0);
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"gpu\"} 1\n"));
    return out;
}

static void expect(const char *out, const char *line)
{
    if (!strstr(out, line)) {
        fprintf(stderr, "%s", out);
        fail_msg("scrape lacks '%s' (scrape above)", line);
    }
}

static const char TWO[] = "driver 550.1\n"
                          "gpu uuid=GPU-a util=90 memutil=10 mem_total=100 mem_used=50 xids=79 pids=11,12\n"
                          "gpu uuid=GPU-b lost=1\n";

static void test_lifecycle(void **st)
{
    (void)st;
    const char *lib = getenv("CFIT_FAKENVML");
    if (!lib)
        skip();
    char dir[] = "/tmp/cfit-gpu.XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(fixture, sizeof fixture, "%s/nvml.txt", dir);
    snprintf(tmpfix, sizeof tmpfix, "%s/nvml.new", dir);
    setenv("FAKENVML_FIXTURE", fixture, 1);
    put_fixture("init_error 9\n");

    cfit_exporter_config cfg = {.nvml_library = lib, .gpu_lost_retry_s = 0.2};
    int enable[8] = {0};
    for (size_t i = 0; cfit_collectors[i]; i++)
        enable[i] = strcmp(cfit_collectors[i]->name, "gpu") == 0;
    cfit_exporter *x = cfit_exporter_new(&cfg, enable);
    void *gpu = cfit_exporter_collector_state(x, "gpu");
    assert_non_null(gpu);

    char *out = scrape(x);   /* driver not loaded: no GPUs, no failure */
    expect(out, "clusterfit_gpu_nvml_up 0\n");
    expect(out, "clusterfit_gpu_devices 0\n");
    free(out);

    put_fixture(TWO);   /* the driver appears: the next scrape initialises NVML */
    out = scrape(x);
    expect(out, "clusterfit_gpu_nvml_up 1\n");
    expect(out, "clusterfit_gpu_up{gpu=\"0\",uuid=\"GPU-a\"} 1\n");
    expect(out, "clusterfit_gpu_up{gpu=\"1\",uuid=\"\"} 0\n");
    expect(out, "clusterfit_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-a\",xid=\"79\"} 1\n");
    assert_null(strstr(out, "gpu=\"1\",uuid=\"\"} 0.")); /* nothing but gpu_up for the lost GPU */
    free(out);
    out = scrape(x);   /* within the retry interval: no re-initialisation for the lost GPU */
    expect(out, "clusterfit_gpu_nvml_reinitializations_total 0\n");
    free(out);
    nanosleep(&(struct timespec){0, 300000000}, NULL);
    free(scrape(x));   /* past it: asks for one */
    out = scrape(x);
    expect(out, "clusterfit_gpu_nvml_reinitializations_total 1\n");
    expect(out, "clusterfit_gpu_up{gpu=\"1\",uuid=\"\"} 0\n");
    free(out);

    /* watchdog samples: utilisation and processes of the GPUs that answer */
    cfit_gpu_sample smp[4];
    size_t n = cfit_gpu_sample_all(gpu, smp, 4);
    assert_int_equal(n, 2);
    assert_true(smp[0].up && smp[0].utilization_ratio == 0.9 && smp[0].npids == 2 && smp[0].pids[1] == 12);
    assert_false(smp[1].up);

    /* driver restart: every call says UNINITIALIZED; GPUs down, then back after re-initialising */
    put_fixture("driver 551.2\ngpu uuid=GPU-a util=40 memutil=1 xids=13\ngpu uuid=GPU-b util=5 memutil=1\n");
    out = scrape(x);
    expect(out, "clusterfit_gpu_up{gpu=\"0\",uuid=\"GPU-a\"} 0\n");
    free(out);
    out = scrape(x);
    expect(out, "clusterfit_gpu_up{gpu=\"0\",uuid=\"GPU-a\"} 1\n");
    expect(out, "clusterfit_gpu_up{gpu=\"1\",uuid=\"GPU-b\"} 1\n");
    expect(out, "clusterfit_gpu_info{gpu=\"1\",uuid=\"GPU-b\",name=\"\",driver_version=\"551.2\"} 1\n");
    expect(out, "clusterfit_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-a\",xid=\"79\"} 1\n");   /* kept */
    expect(out, "clusterfit_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-a\",xid=\"13\"} 1\n");
    expect(out, "clusterfit_gpu_utilization_ratio{gpu=\"1\",uuid=\"GPU-b\"} 0.05\n");
    free(out);

    cfit_exporter_free(x);
    unlink(fixture);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lifecycle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
