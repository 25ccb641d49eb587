/* test_jobreport.c - the job collector end to end: contrib/clusterfit_jobreport.h sends step
 * reports over the unix socket, a scrape shows the counters and the histogram, bad lines are
 * counted and dropped, and the socket is owner-only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../contrib/clusterfit_jobreport.h"
#include "clusterfit/exporter.h"

static char *scrape_until(cfit_exporter *x, const char *want)
{
    for (int i = 0; i < 200; i++) {   /* the receiving thread runs asynchronously: up to 2 s */
        char *out;
        size_t len;
        assert_int_equal(cfit_exporter_scrape(x, CFIT_EXPO_TEXT, &out, &len), 0);
        if (strstr(out, want))
            return out;
        free(out);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    fail_msg("no '%s' in the scrape", want);
    return NULL;
}

static void test_job_socket(void **st)
{
    (void)st;
    char dir[] = "/tmp/cfit-job.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/job.sock", dir);
    cfit_exporter_config cfg = {.job_socket = path};
    int enable[8] = {0};
    for (size_t i = 0; cfit_collectors[i]; i++)
        enable[i] = strcmp(cfit_collectors[i]->name, "job") == 0;
    cfit_exporter *x = cfit_exporter_new(&cfg, enable);
    assert_non_null(cfit_exporter_collector_state(x, "job"));
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0600);

    cfit_jobreport r;
    assert_int_equal(cfit_jobreport_open(&r, path, "llama", 3), 0);
    assert_int_equal(cfit_jobreport_step(&r, 0.75, 0.05, 0.125, 0.02), 0);
    assert_int_equal(cfit_jobreport_step(&r, 1.5, 0.05, 0.25, 0.02), 0);
    assert_int_equal(cfit_jobreport_step(&r, 3, 0.5, 0.25, 0.02), 0);
    const char bad[] = "job=llama rank=3 step=oops\njob=llama rank=3 step=1 data=0.25\n";
    assert_int_equal(sendto(r.fd, bad, sizeof bad - 1, 0, (struct sockaddr *)&r.addr, sizeof r.addr),
                     (ssize_t)(sizeof bad - 1));
    char *out = scrape_until(x, "clusterfit_job_reports_total 4\n");
    assert_non_null(strstr(out, "clusterfit_job_bad_lines_total 1\n"));
    assert_non_null(strstr(out, "clusterfit_job_steps_total{training_job=\"llama\",rank=\"3\"} 4\n"));
    assert_non_null(strstr(out, "clusterfit_job_step_seconds_total{training_job=\"llama\",rank=\"3\"} 6.25\n"));
    assert_non_null(strstr(out, "clusterfit_job_data_loading_seconds_total{training_job=\"llama\",rank=\"3\"} 0.85\n"));
    assert_non_null(strstr(out, "clusterfit_job_allreduce_seconds_total{training_job=\"llama\",rank=\"3\"} 0.625\n"));
    assert_non_null(strstr(out, "clusterfit_job_step_duration_seconds_bucket{training_job=\"llama\",rank=\"3\",le=\"1\"} 2\n"));
    assert_non_null(strstr(out, "clusterfit_job_step_duration_seconds_bucket{training_job=\"llama\",rank=\"3\",le=\"2\"} 3\n"));
    assert_non_null(strstr(out, "clusterfit_job_step_duration_seconds_bucket{training_job=\"llama\",rank=\"3\",le=\"+Inf\"} 4\n"));
    assert_non_null(strstr(out, "clusterfit_job_step_duration_seconds_count{training_job=\"llama\",rank=\"3\"} 4\n"));
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"job\"} 1\n"));
    free(out);
    cfit_jobreport_close(&r);
    cfit_exporter_free(x);
    assert_int_equal(stat(path, &sb), -1);   /* removed on shutdown */
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_job_socket)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
