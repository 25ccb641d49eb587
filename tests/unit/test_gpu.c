/* test_gpu.c - the gpu collector's NVML lifecycle against the fake NVML (tests/fakenvml, path in
 * $CFIT_FAKENVML): no driver, a lost GPU looked for again after gpu_lost_retry_s (not every
 * scrape), a driver restart recovered by re-initialisation, XID counts kept across it, and the
 * watchdog's samples (utilisation and processes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
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

/* A child in its own process group that sleeps; holding path open when path is not NULL. */
static pid_t child(const char *path)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int fd = path ? open(path, O_RDONLY) : -1;
        (void)fd;
        for (int i = 0; i < 600; i++)
            nanosleep(&(struct timespec){0, 100000000}, NULL);
        _exit(0);
    }
    setpgid(pid, pid);
    return pid;
}

static int alive(pid_t pid)
{
    return waitpid(pid, NULL, WNOHANG) == 0;
}

/* Issue 16: --watchdog.enforce signals only pids > 1 that exist, are not the exporter or its
 * process group, and hold the GPU's device open; pid 4294967295 never becomes kill(-1). */
static void test_watchdog_pids(void **st)
{
    (void)st;
    const char *lib = getenv("CFIT_FAKENVML");
    if (!lib)
        skip();
    char dir[] = "/tmp/cfit-wdp.XXXXXX", dev[64], prefix[64], fix[80], text[256];
    assert_non_null(mkdtemp(dir));
    snprintf(prefix, sizeof prefix, "%s/nvidia", dir);
    snprintf(dev, sizeof dev, "%s/nvidia3", dir);   /* GPU 0's minor number is 3 below */
    FILE *f = fopen(dev, "w");
    assert_non_null(f);
    fclose(f);
    pid_t holder = child(dev), foreign = child(NULL), dead = child(NULL);
    kill(dead, SIGKILL);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    nanosleep(&(struct timespec){0, 200000000}, NULL);   /* let the holder open the device */
    snprintf(fix, sizeof fix, "%s/nvml.txt", dir);
    snprintf(text, sizeof text, "driver 550.1\ngpu uuid=GPU-a util=0 minor=3 pids=0,1,4294967295,%ld,%ld,%ld,%ld\n",
             (long)dead, (long)foreign, (long)getpid(), (long)holder);
    f = fopen(fix, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    setenv("FAKENVML_FIXTURE", fix, 1);

    cfit_exporter_config cfg = {.nvml_library = lib};
    int enable[8] = {0};
    for (size_t i = 0; cfit_collectors[i]; i++)
        enable[i] = strcmp(cfit_collectors[i]->name, "gpu") == 0;
    cfit_exporter *x = cfit_exporter_new(&cfg, enable);
    void *gpu = cfit_exporter_collector_state(x, "gpu");
    free(scrape(x));
    cfit_gpu_sample smp[2];
    assert_int_equal(cfit_gpu_sample_all(gpu, smp, 2), 1);
    assert_int_equal(smp[0].minor, 3);
    assert_int_equal(smp[0].npids, 7);
    assert_int_equal(smp[0].pids[2], 4294967295u);

    cfit_watchdog_config c = {.signal = SIGTERM, .enforce = 1, .device_prefix = prefix};
    static const cfit_watchdog_pid_check want[] = {CFIT_WD_PID_RESERVED, CFIT_WD_PID_RESERVED, CFIT_WD_PID_RESERVED,
                                                   CFIT_WD_PID_DEAD, CFIT_WD_PID_NO_DEVICE, CFIT_WD_PID_SELF,
                                                   CFIT_WD_PID_OK};
    for (unsigned k = 0; k < 7; k++)
        if (cfit_watchdog_check_pid(&c, smp[0].pids[k], smp[0].minor) != want[k])
            fail_msg("pid %u: %s", smp[0].pids[k],
                     cfit_watchdog_pid_check_text(cfit_watchdog_check_pid(&c, smp[0].pids[k], smp[0].minor)));
    assert_int_equal(cfit_watchdog_check_pid(&c, (unsigned)holder, 4), CFIT_WD_PID_NO_DEVICE);   /* another GPU */
    assert_int_equal(cfit_watchdog_check_pid(&c, (unsigned)holder, -1), CFIT_WD_PID_NO_MINOR);
    assert_int_equal(cfit_watchdog_signal_gpus(&c, smp, 1), 1);
    assert_int_equal(waitpid(holder, NULL, 0), holder);   /* signalled */
    assert_true(alive(foreign));                         /* not signalled */
    kill(foreign, SIGKILL);
    waitpid(foreign, NULL, 0);
    cfit_exporter_free(x);
    unlink(fix);
    unlink(dev);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lifecycle), cmocka_unit_test(test_watchdog_pids)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
