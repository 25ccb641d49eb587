/* bench_launch.c - the launch options shared by the bench commands and bench_run(). */
#include "bench_launch.h"
#include "cli.h"
#include "clusterfit/comm.h"

#include <stdio.h>
#include <string.h>

void bench_launch_init(cfit_launch *l)
{
    memset(l, 0, sizeof *l);
    l->transport = CFIT_TRANSPORT_AUTO;
    l->timeout_s = 60.0;
}

int bench_launch_opt(cfit_launch *l, int id, const char *name, const char *value)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    switch (id) {   /* --np: BENCH_LAUNCH_BINDS */
    case BENCH_OPT_TRANSPORT:
        if (strcmp(value, "auto") == 0)
            l->transport = CFIT_TRANSPORT_AUTO;
        else if (strcmp(value, "shm") == 0)
            l->transport = CFIT_TRANSPORT_SHM;
        else if (strcmp(value, "tcp") == 0)
            l->transport = CFIT_TRANSPORT_TCP;
        else
            return cli_error("--%s: '%s' is not shm, tcp or auto", name, value);
        return 0;
    case BENCH_OPT_TIMEOUT: {
        double t;
        if (cfit_parse_time(value, &t, &d))
            return cli_error("--%s: %s", name, d.msg);
        if (t < 0.1 || t > 86400 * 7)
            return cli_error("--%s: %s is out of range (100ms to 7d)", name, value);
        l->timeout_s = t;
        return 0;
    }
    case BENCH_OPT_RENDEZVOUS:
        if (cfit_launch_rendezvous_check(value, &d))
            return cli_error("--%s: %s", name, d.msg);
        l->rendezvous = value;
        return 0;
    }
    return cli_error("internal: unknown launch option id %d", id);
}

void bench_launch_digest(cfit_launch *l, int argc, char **argv)
{
    static char buf[2048];
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used + 2 < sizeof buf; i++) {
        if (strcmp(argv[i], "--rendezvous") == 0) {
            i++;
            continue;
        }
        if (strncmp(argv[i], "--rendezvous=", 13) == 0)
            continue;
        int n = snprintf(buf + used, sizeof buf - used, "%s%s", used ? " " : "", argv[i]);
        if (n < 0)
            break;
        used += (size_t)n < sizeof buf - used ? (size_t)n : sizeof buf - used - 1;
    }
    l->args_digest = buf;
}

int bench_comm_error(const cfit_comm *c, int err)
{
    fprintf(stderr, "clusterfit: error: rank %d: %s\n", cfit_comm_rank(c),
            cfit_comm_error(c)[0] && strcmp(cfit_comm_error(c), "no error") ? cfit_comm_error(c)
                                                                           : cfit_strerror(err));
    return EXIT_RUNTIME;
}

/* cfit_launch_wait's report: one error line per lost or killed rank. */
static void report_rank(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "clusterfit: error: %s\n", msg);
    fflush(stderr);
}

int bench_run(const cfit_launch *l, int (*body)(cfit_comm *c, void *ctx), void *ctx)
{
    cfit_comm *c = NULL;
    int is_parent = 0;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_launch_start(l, &c, &is_parent, &d);
    if (rc) {
        fprintf(stderr, "clusterfit: error: %s\n", d.msg[0] ? d.msg : cfit_strerror(rc));
        fflush(stderr);
        return rc == CFIT_EINVALID || rc == CFIT_EPARSE || rc == CFIT_ERANGE ? EXIT_USAGE : EXIT_RUNTIME;
    }
    if (is_parent)
        return cfit_launch_wait(report_rank, NULL);
    int code = body(c, ctx);
    cfit_comm_close(c);
    fflush(NULL);
    return code;
}
