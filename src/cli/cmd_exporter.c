/* cmd_exporter.c - `clusterfit exporter`: serve this node's GPU, network, disk and job metrics
 * to Prometheus (docs/exporter.md), with an opt-in idle-GPU watchdog. */
#include "cli.h"
#include "clusterfit/exporter.h"

#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    O_LISTEN = 1, O_WEBCFG, O_MAXCONN, O_PERIP, O_TIMEOUT, O_NVML, O_SYSFS, O_PROCFS, O_JOBSOCK, O_PCIE,
    O_ONCE, O_OPENMETRICS, O_QUIET, O_WD_IDLE, O_WD_FOR, O_WD_ACTION, O_WD_SIGNAL, O_WD_INTERVAL, O_WD_ENFORCE,
    O_JOB_STALE, O_JOB_MAX, O_HDR_TIMEOUT, O_MAXREQ, O_COMPAT,
    O_COLL_ON = 100, O_COLL_OFF = 200
};

#define MAX_COLLECTORS 16   /* exp_cli's enable[] and set[] */

/* The options before the collector flags, and after them (cli_opt's table is both with the
 * collector flags between, exporter_opts). */
static const cli_opt opts_web[] = {
    {"web.listen-address", 0, "HOST:PORT", "address to serve on (default 127.0.0.1:9400; :PORT = every address)", O_LISTEN},
    {"web.config.file", 0, "FILE", "exporter-toolkit web config: TLS, client certs, headers, basic auth (docs/exporter.md)", O_WEBCFG},
    {"web.max-connections", 0, "N", "connections at once; past it the oldest still sending headers goes (default 512)", O_MAXCONN},
    {"web.max-connections-per-ip", 0, "N", "connections from one client address (default 256)", O_PERIP},
    {"web.timeout", 0, "TIME", "close a connection idle this long (default 10s)", O_TIMEOUT},
    {"web.read-header-timeout", 0, "TIME", "drop a connection whose request headers take longer (default 5s)", O_HDR_TIMEOUT},
    {"web.max-requests", 0, "N", "scrapes at once; more get 503 at once (default 40, 0 = no limit)", O_MAXREQ},
    {NULL, 0, NULL, NULL, 0},
};

static const cli_opt opts_rest[] = {
    {"collector.gpu.pcie", 0, NULL, "also sample PCIe throughput (NVML waits 20 ms per direction and GPU)", O_PCIE},
    {"compat", 0, "NAME", "also serve another exporter's GPU names: dcgm (dcgm-exporter's DCGM_FI_* names, units, labels)", O_COMPAT},
    {"nvml-library", 0, "PATH", "NVML library to dlopen (default libnvidia-ml.so.1)", O_NVML},
    {"path.sysfs", 0, "DIR", "sysfs mount point (default /sys)", O_SYSFS},
    {"path.procfs", 0, "DIR", "procfs mount point (default /proc)", O_PROCFS},
    {"job-socket", 0, "PATH", "unix datagram socket training processes report steps to (mode 0600)", O_JOBSOCK},
    {"job-socket.stale-after", 0, "TIME", "drop a (job, rank) not heard from this long (default 10m)", O_JOB_STALE},
    {"job-socket.max-series", 0, "N", "(job, rank) pairs kept; past it the oldest is dropped (default 1024)", O_JOB_MAX},
    {"watchdog.idle-below", 0, "RATIO", "watch for GPUs idle below this utilisation (0..1; enables the watchdog)", O_WD_IDLE},
    {"watchdog.for", 0, "TIME", "act after every GPU has been idle this long (default 10m)", O_WD_FOR},
    {"watchdog.action", 0, "CMD", "shell command to run when acting", O_WD_ACTION},
    {"watchdog.signal", 0, "SIG", "signal (TERM, INT, KILL or a number) for the idle GPUs' processes", O_WD_SIGNAL},
    {"watchdog.interval", 0, "TIME", "sampling period of the watchdog (default 30s)", O_WD_INTERVAL},
    {"watchdog.enforce", 0, NULL, "really act (without it the watchdog only logs what it would do)", O_WD_ENFORCE},
    {"once", 0, NULL, "print one scrape on stdout and exit (no HTTP server)", O_ONCE},
    {"openmetrics", 0, NULL, "with --once: OpenMetrics instead of the text format 0.0.4", O_OPENMETRICS},
    {"quiet", 'q', NULL, "log nothing but errors", O_QUIET},
    {NULL, 0, NULL, NULL, 0},
};

#define NOPTS(t) (sizeof t / sizeof t[0] - 1)

/* Text of one collector's two flags (names and help lines the option table points into). */
typedef struct coll_flag_text {
    char on[48], off[48], on_help[96], off_help[64];
} coll_flag_text;

/* The pair --collector.NAME (O_COLL_ON + i) / --no-collector.NAME (O_COLL_OFF + i) of collector i. */
static void collector_flags(size_t i, coll_flag_text *t, cli_opt *out)
{
    const cfit_collector_ops *k = cfit_collectors[i];
    char when[48];
    if (k->default_on || !k->enabled_by)
        snprintf(when, sizeof when, "%s", k->default_on ? "on by default" : "off by default");
    else
        snprintf(when, sizeof when, "on with --%s", k->enabled_by);
    snprintf(t->on, sizeof t->on, "collector.%s", k->name);
    snprintf(t->off, sizeof t->off, "no-collector.%s", k->name);
    snprintf(t->on_help, sizeof t->on_help, "enable the %s collector (%s)", k->name, when);
    snprintf(t->off_help, sizeof t->off_help, "disable the %s collector", k->name);
    out[0] = (cli_opt){t->on, 0, NULL, t->on_help, O_COLL_ON + (int)i};
    out[1] = (cli_opt){t->off, 0, NULL, t->off_help, O_COLL_OFF + (int)i};
}

/* The exporter's option table: opts_web, a flag pair per entry of cfit_collectors[], opts_rest. */
static const cli_opt *exporter_opts(void)
{
    static coll_flag_text text[MAX_COLLECTORS];
    static cli_opt all[NOPTS(opts_web) + 2 * MAX_COLLECTORS + NOPTS(opts_rest) + 1];
    size_t n = 0;
    for (size_t i = 0; i < NOPTS(opts_web); i++)
        all[n++] = opts_web[i];
    for (size_t i = 0; cfit_collectors[i] && i < MAX_COLLECTORS; i++, n += 2)
        collector_flags(i, &text[i], &all[n]);
    for (size_t i = 0; i <= NOPTS(opts_rest); i++)   /* with its NULL end */
        all[n++] = opts_rest[i];
    return all;
}

typedef struct exp_cli {
    cfit_exporter_config cfg;
    cfit_http_config http;
    cfit_watchdog_config wd;
    const char *webcfg;
    int enable[MAX_COLLECTORS], set[MAX_COLLECTORS];
    int once, openmetrics, quiet, watchdog;
} exp_cli;

static void log_line(void *ctx, const char *fmt, ...)
{
    const exp_cli *c = ctx;
    if (c->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("clusterfit exporter: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int opt_time(const char *name, const char *value, double min, double *out)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_parse_time(value, out, &d))
        return cli_error("--%s: %s", name, d.msg);
    if (*out < min)
        return cli_error("--%s: %s is too short (at least %g s)", name, value, min);
    return 0;
}

static int opt_signal(const char *name, const char *value, int *out)
{
    static const struct { const char *n; int s; } sigs[] = {
        {"TERM", SIGTERM}, {"INT", SIGINT}, {"KILL", SIGKILL}, {"HUP", SIGHUP}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
    };
    const char *v = strncmp(value, "SIG", 3) == 0 ? value + 3 : value;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (strcmp(v, sigs[i].n) == 0)
            return *out = sigs[i].s, 0;
    long n;
    if (cli_int(name, value, 1, 64, &n))
        return EXIT_USAGE;
    *out = (int)n;
    return 0;
}

/* The options whose values are stored as given (cli_bind), and the mark of --watchdog.idle-below
 * (it enables the watchdog); on_opt has the collector flags, the times, --web.max-requests (0 = no
 * limit), --compat and --watchdog.signal.  The unsigned and size_t fields take an int and a long. */
static const cli_bind binds[] = {
    CLI_STRING(O_LISTEN, exp_cli, http.listen_address),
    CLI_STRING(O_WEBCFG, exp_cli, webcfg),
    CLI_INT(O_MAXCONN, exp_cli, http.max_connections, 1, 65536),
    CLI_INT(O_PERIP, exp_cli, http.max_per_ip, 1, 65536),
    CLI_STRING(O_NVML, exp_cli, cfg.nvml_library),
    CLI_STRING(O_SYSFS, exp_cli, cfg.sysfs),
    CLI_STRING(O_PROCFS, exp_cli, cfg.procfs),
    CLI_STRING(O_JOBSOCK, exp_cli, cfg.job_socket),
    CLI_FLAG(O_PCIE, exp_cli, cfg.gpu_pcie),
    CLI_INT(O_JOB_MAX, exp_cli, cfg.job_max_series, 1, 100000),
    CLI_FLAG(O_ONCE, exp_cli, once),
    CLI_FLAG(O_OPENMETRICS, exp_cli, openmetrics),
    CLI_FLAG(O_QUIET, exp_cli, quiet),
    CLI_REAL(O_WD_IDLE, exp_cli, wd.idle_below, 0.001, 1),
    CLI_GIVEN(O_WD_IDLE, exp_cli, watchdog),
    CLI_STRING(O_WD_ACTION, exp_cli, wd.action),
    CLI_FLAG(O_WD_ENFORCE, exp_cli, wd.enforce),
    {.id = 0},
};

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    exp_cli *c = vc;
    long n;
    int rc;
    if (id >= O_COLL_ON) {   /* collector i's flag pair (collector_flags) */
        size_t i = (size_t)(id >= O_COLL_OFF ? id - O_COLL_OFF : id - O_COLL_ON);
        c->enable[i] = id < O_COLL_OFF;
        c->set[i] = 1;
        return 0;
    }
    switch (id) {
    case -1: return cli_error("exporter: unexpected argument '%s' (see --help)", value);
    case O_TIMEOUT: {
        double t;
        rc = opt_time(name, value, 1, &t);
        c->http.timeout_s = (unsigned)(t > 86400 ? 86400 : t);
        return rc;
    }
    case O_HDR_TIMEOUT: return opt_time(name, value, 0.1, &c->http.header_timeout_s);
    case O_MAXREQ: rc = cli_int(name, value, 0, 65536, &n); c->http.max_requests = n ? (int)n : -1; return rc;
    case O_COMPAT:
        if (strcmp(value, "dcgm") != 0)
            return cli_error("--compat: unknown exporter '%s' (known: dcgm)", value);
        c->cfg.compat_dcgm = 1;
        return 0;
    case O_JOB_STALE: return opt_time(name, value, 1, &c->cfg.job_stale_s);
    case O_WD_FOR: return opt_time(name, value, 1, &c->wd.for_s);
    case O_WD_SIGNAL: return opt_signal(name, value, &c->wd.signal);
    case O_WD_INTERVAL: return opt_time(name, value, 0.1, &c->wd.interval_s);
    }
    return 0;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static int serve(exp_cli *c, cfit_exporter *x, const cfit_web_config *web)
{
#ifdef M_ARENA_MAX
    mallopt(M_ARENA_MAX, 2);   /* glibc: one arena per thread would cost resident memory for nothing */
#endif
    c->http.web = web;
    cfit_http *h;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_http_start(x, &c->http, &h, &d);
    if (rc == CFIT_EPARSE)
        return cli_error("--web.listen-address: %s", d.msg);
    if (rc) {
        int ex = cli_error_diag(&d, rc);
        return rc == CFIT_ESYS ? EXIT_RUNTIME : ex;
    }
    const char *addr = c->http.listen_address ? c->http.listen_address : "127.0.0.1:9400";
    log_line(c, "listening on %s (port %u, %s%s)", addr, cfit_http_port(h), web && web->cert_file ? "https" : "http",
             web && web->nusers ? ", basic auth" : "");
    cfit_watchdog *w = NULL;
    if (c->watchdog) {
        void *gpu = cfit_exporter_collector_state(x, "gpu");
        if (!gpu)
            log_line(c, "watchdog: the gpu collector is disabled: the watchdog has nothing to watch");
        else
            w = cfit_watchdog_start(gpu, &c->wd);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (!stop_signal)
        nanosleep(&(struct timespec){0, 100000000}, NULL);   /* pause() could miss an early signal */
    log_line(c, "signal %d: stopping", (int)stop_signal);
    cfit_watchdog_stop(w);
    cfit_http_stop(h);
    return EXIT_OK;
}

int cmd_exporter(int argc, char **argv)
{
    exp_cli c;
    memset(&c, 0, sizeof c);
    c.wd.for_s = 600;
    c.wd.interval_s = 30;
    int rc = cli_parse_bound(argc, argv, exporter_opts(), binds, on_opt, &c, "clusterfit exporter [options]",
                             "Serve this node's GPU (NVML), network, InfiniBand, disk and training-job metrics to\n"
                             "Prometheus on /metrics; docs/metrics.md lists them, docs/exporter.md explains the\n"
                             "options, the job report protocol and the watchdog.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (c.openmetrics && !c.once)
        return cli_error("--openmetrics goes with --once (a server negotiates the format with the scraper)");
    if (!c.watchdog && (c.wd.action || c.wd.signal || c.wd.enforce))
        return cli_error("--watchdog.action/--watchdog.signal/--watchdog.enforce need --watchdog.idle-below RATIO");
    if (c.watchdog && !c.wd.action && !c.wd.signal)
        return cli_error("--watchdog.idle-below needs --watchdog.action CMD or --watchdog.signal SIG");
    c.cfg.log = log_line;
    c.cfg.log_ctx = &c;
    c.wd.log = log_line;
    c.wd.log_ctx = &c;
    c.wd.device_prefix = getenv("CFIT_WATCHDOG_DEVICE_PREFIX");   /* tests only (docs/exporter.md) */
    int enable[MAX_COLLECTORS];
    for (size_t i = 0; cfit_collectors[i]; i++) {
        enable[i] = c.set[i] ? c.enable[i] : cfit_collectors[i]->default_on;
        if (strcmp(cfit_collectors[i]->name, "job") == 0 && !c.set[i])
            enable[i] = c.cfg.job_socket != NULL;
    }
    for (size_t i = 0; cfit_collectors[i]; i++)
        if (enable[i] && strcmp(cfit_collectors[i]->name, "job") == 0 && !c.cfg.job_socket)
            return cli_error("--collector.job needs --job-socket PATH");
    cfit_web_config web;
    memset(&web, 0, sizeof web);
    cfit_diag d;
    cfit_diag_clear(&d);
    if (c.webcfg && (rc = cfit_web_config_load(c.webcfg, &web, &d)))
        return cli_error_diag(&d, rc);
    cfit_exporter *x = cfit_exporter_new(&c.cfg, enable);
    if (!x) {
        cfit_web_config_fini(&web);
        return cli_error("out of memory");
    }
    if (c.cfg.job_socket && !cfit_exporter_collector_state(x, "job")) {
        const char *why = cfit_exporter_collector_error(x, "job");
        fprintf(stderr, "clusterfit: error: --job-socket: %s\n", why ? why : "the job collector could not start");
        cfit_exporter_free(x);
        cfit_web_config_fini(&web);
        return EXIT_RUNTIME;
    }
    if (c.once) {
        char *out;
        size_t len;
        rc = cfit_exporter_scrape(x, c.openmetrics ? CFIT_EXPO_OPENMETRICS : CFIT_EXPO_TEXT, &out, &len);
        if (!rc) {
            fwrite(out, 1, len, stdout);
            free(out);
        }
        rc = rc ? cli_error("out of memory") : EXIT_OK;
    } else {
        rc = serve(&c, x, &web);
    }
    cfit_exporter_free(x);
    cfit_web_config_fini(&web);
    return rc;
}
