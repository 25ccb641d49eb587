/* exporter.h - the node exporter: a metric registry with the Prometheus text and OpenMetrics
 * writers, collectors behind a vtable, the job-report line protocol and the web config file.
 *
 * One scrape: cfit_exporter_scrape() makes a fresh cfit_expo, runs every enabled collector
 * into it (timing each and recording clusterfit_scrape_collector_{duration_seconds,success}),
 * and renders it.  A collector that fails has what it wrote rolled back, so one broken
 * collector never breaks the scrape.  The HTTP side (libmicrohttpd) is in the CLI-facing
 * cfit_exporter_serve(); see docs/exporter.md.
 */
#ifndef CLUSTERFIT_EXPORTER_H
#define CLUSTERFIT_EXPORTER_H

#include <stddef.h>
#include <stdint.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exposition registry ------------------------------------------------------------- */

typedef enum cfit_metric_type {
    CFIT_METRIC_GAUGE,
    CFIT_METRIC_COUNTER,    /* name must end in _total */
    CFIT_METRIC_INFO,       /* name must end in _info; value 1 */
    CFIT_METRIC_HISTOGRAM,  /* samples written with cfit_expo_histogram() */
    /* a counter named without _total, as another exporter names it (--compat dcgm): TYPE counter
     * in the text format, unknown in OpenMetrics (which requires the suffix) */
    CFIT_METRIC_COUNTER_UNSUFFIXED
} cfit_metric_type;

typedef enum cfit_expo_format {
    CFIT_EXPO_TEXT,         /* text/plain; version=0.0.4 */
    CFIT_EXPO_OPENMETRICS   /* application/openmetrics-text; version=1.0.0, ends with # EOF */
} cfit_expo_format;

/* Content-Type header value for a format; never NULL. */
CFIT_API const char *cfit_expo_content_type(cfit_expo_format f);
/* The format a scraper asks for with this Accept header (NULL = text 0.0.4). */
CFIT_API cfit_expo_format cfit_expo_negotiate(const char *accept);

typedef struct cfit_expo cfit_expo;

/* A new empty registry, or NULL when out of memory.  Free with cfit_expo_free (NULL ok). */
CFIT_API cfit_expo *cfit_expo_new(void);
CFIT_API void cfit_expo_free(cfit_expo *e);

/* Declare a family (name as sampled: counters with _total, info with _info).  Declaring
 * the same name again with the same type is a no-op.  Errors: CFIT_EINVALID for a bad name,
 * a counter without _total, an info without _info, or a redeclaration with another type;
 * CFIT_ENOMEM. */
CFIT_API int cfit_expo_family(cfit_expo *e, const char *name, cfit_metric_type type, const char *help);

/* Add a sample to a declared family.  labels is NULL or a NULL-terminated list of
 * name, value pairs ({"device", "eth0", NULL}); values are escaped when rendered.
 * Errors: CFIT_EUNKNOWN (family not declared), CFIT_EINVALID (bad label name, histogram
 * family), CFIT_ENOMEM. */
CFIT_API int cfit_expo_sample(cfit_expo *e, const char *name, const char *const *labels, double value);

/* Add one histogram series: nb upper bounds (increasing, +Inf implied after them), the
 * cumulative count for each bound, the sum and the total count (the +Inf bucket). */
CFIT_API int cfit_expo_histogram(cfit_expo *e, const char *name, const char *const *labels,
                        const double *bounds, const uint64_t *cumulative, size_t nb,
                        double sum, uint64_t count);

/* A position in the registry; cfit_expo_rollback() drops everything added after it. */
typedef struct cfit_expo_mark { size_t families, samples; } cfit_expo_mark;
CFIT_API cfit_expo_mark cfit_expo_mark_get(const cfit_expo *e);
CFIT_API void cfit_expo_rollback(cfit_expo *e, cfit_expo_mark m);

/* Render every family in declaration order (families without samples are skipped).
 * *out is malloc'ed (caller frees), NUL-terminated, *len its length.  CFIT_ENOMEM. */
CFIT_API int cfit_expo_render(const cfit_expo *e, cfit_expo_format f, char **out, size_t *len);

/* Number formatting used by the writer: shortest round-trip decimal, NaN, +Inf, -Inf. */
CFIT_API void cfit_expo_format_value(char *buf, size_t n, double v);

/* ---- collectors ---------------------------------------------------------------------- */

/* Settings shared by every collector (the CLI fills them from flags). */
typedef struct cfit_exporter_config {
    const char *sysfs;          /* default "/sys" */
    const char *procfs;         /* default "/proc" */
    const char *nvml_library;   /* default "libnvidia-ml.so.1" */
    const char *job_socket;     /* NULL: the job collector listens nowhere */
    double job_stale_s;         /* drop a (job, rank) pair not heard from this long; 0 = 600 s */
    size_t job_max_series;      /* (job, rank) pairs kept; past it the oldest is dropped; 0 = 1024 */
    int gpu_pcie;               /* 1: also sample PCIe throughput (costs ~40 ms per GPU) */
    int compat_dcgm;            /* 1: the gpu collector also writes dcgm-exporter's DCGM_FI_* families */
    double gpu_lost_retry_s;    /* re-initialise NVML to look for a lost GPU at most this often; 0 = 60 s */
    /* log sink for collectors' one-time warnings (NULL: silent) */
    void (*log)(void *ctx, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    void *log_ctx;
} cfit_exporter_config;

/* Adding a new collector: write src/exporter/collector_NAME.c filling a
 * cfit_collector_ops, declare it in src/exporter/collectors.h and list it in the
 * table in src/exporter/exporter.c; the CLI makes its --collector.NAME and
 * --no-collector.NAME flags from that table. */
typedef struct cfit_collector_ops {
    const char *name;           /* "gpu": flag --collector.gpu */
    const char *help;           /* one line for --help */
    int default_on;
    const char *enabled_by;     /* off by default: the option that turns it on ("job-socket"), or NULL */
    /* Make the collector's state; 0 or a cfit_err with d filled (the collector is then
     * disabled).  Must not fail for a missing device (report nothing instead). */
    int (*init)(const cfit_exporter_config *cfg, void **state, cfit_diag *d);
    /* Add this scrape's samples; 0, or a cfit_err with d filled (samples rolled back). */
    int (*collect)(void *state, cfit_expo *e, cfit_diag *d);
    void (*fini)(void *state);  /* NULL state ok */
} cfit_collector_ops;

/* The table of collectors, terminated by a NULL name. */
CFIT_API extern const cfit_collector_ops *const cfit_collectors[];
CFIT_API const cfit_collector_ops *cfit_collector_find(const char *name);

typedef struct cfit_exporter cfit_exporter;

/* Create the exporter with the collectors whose enable[i] is nonzero (enable indexes
 * cfit_collectors[]; NULL = each collector's default).  A collector whose init fails is
 * reported through cfg->log and scraped as failed.  Returns NULL only when out of memory.
 * cfg (and the strings in it) must outlive the exporter. */
CFIT_API cfit_exporter *cfit_exporter_new(const cfit_exporter_config *cfg, const int *enable);
CFIT_API void cfit_exporter_free(cfit_exporter *x);

/* One scrape, rendered in format f; *out malloc'ed (caller frees).  Thread-safe (scrapes are
 * serialised).  Only CFIT_ENOMEM fails. */
CFIT_API int cfit_exporter_scrape(cfit_exporter *x, cfit_expo_format f, char **out, size_t *len);

/* Why the named collector's init failed, or NULL (not enabled, or it started). */
CFIT_API const char *cfit_exporter_collector_error(const cfit_exporter *x, const char *name);

/* The state of a named collector (for the watchdog), or NULL when it is not enabled. */
CFIT_API void *cfit_exporter_collector_state(cfit_exporter *x, const char *name);

/* ---- gpu collector helpers (watchdog) ------------------------------------------------- */

typedef struct cfit_gpu_sample {
    unsigned index;
    int up;                     /* 1 when NVML answered for this GPU */
    double utilization_ratio;   /* 0..1, negative when not supported */
    int minor;                  /* NVML minor number (/dev/nvidiaMINOR), -1 when unknown */
    unsigned pids[64];          /* compute processes on it (NVML's unsigned pids, unchecked) */
    unsigned npids;
} cfit_gpu_sample;

/* Sample at most max GPUs of a gpu collector state; returns the count (0 with no driver). */
CFIT_API size_t cfit_gpu_sample_all(void *gpu_state, cfit_gpu_sample *out, size_t max);

/* ---- job report protocol (docs/exporter.md "Job reports") ---------------------------- */

#define CFIT_JOB_NAME_MAX 64

typedef struct cfit_job_report {
    char job[CFIT_JOB_NAME_MAX + 1];
    long rank;
    double step_s, data_s, allreduce_s, optimizer_s;
} cfit_job_report;

/* Parse one line "job=NAME rank=N step=S [data=S] [allreduce=S] [optimizer=S]" (len bytes,
 * no NUL needed; a trailing newline is allowed).  0, or CFIT_EPARSE with d->msg and d->col. */
CFIT_API int cfit_job_parse_line(const char *line, size_t len, cfit_job_report *r, cfit_diag *d);

/* ---- web config file (exporter-toolkit's format, parsed with libyaml) ----------------- */

#define CFIT_WEB_MAX_USERS 64
#define CFIT_WEB_MAX_SUITES 17    /* the cipher suites Go's tls.CipherSuites() names */
#define CFIT_WEB_MAX_HEADERS 5    /* the headers exporter-toolkit lets http_server_config set */

/* tls_server_config.client_auth_type (Go's tls.ClientAuthType). */
typedef enum cfit_web_client_auth {
    CFIT_WEB_NO_CLIENT_CERT,               /* "NoClientCert" (the default) */
    CFIT_WEB_REQUEST_CLIENT_CERT,          /* asked for, not required, not verified */
    CFIT_WEB_REQUIRE_ANY_CLIENT_CERT,      /* required, not verified ("RequireClientCert" too) */
    CFIT_WEB_VERIFY_CLIENT_CERT_IF_GIVEN,  /* verified against client_ca_file when sent */
    CFIT_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT
} cfit_web_client_auth;

typedef struct cfit_web_config {
    char *cert_file, *key_file;                /* both or neither; NULL: plain HTTP */
    char *client_ca_file;                      /* PEM CAs for client certificates, or NULL */
    cfit_web_client_auth client_auth;
    int min_version, max_version;              /* TLS minor versions as 10..13: TLS12..TLS13 default */
    int prefer_server_cipher_suites;           /* default 1, as exporter-toolkit */
    size_t nsuites;                            /* 0: the TLS library's defaults */
    int suites[CFIT_WEB_MAX_SUITES];           /* indices for cfit_tls_suite_name, in file order */
    size_t nheaders;
    char *header_names[CFIT_WEB_MAX_HEADERS];  /* http_server_config.headers */
    char *header_values[CFIT_WEB_MAX_HEADERS];
    size_t nusers;
    char *users[CFIT_WEB_MAX_USERS];           /* basic_auth_users names */
    char *hashes[CFIT_WEB_MAX_USERS];          /* their bcrypt ($2b$/$2a$/$2y$) hashes */
} cfit_web_config;

/* Parse an exporter-toolkit web config (YAML, through libyaml: block or flow style, quoted,
 * folded or literal scalars, comments, --- and ...):
 *   tls_server_config: cert_file, key_file, client_ca_file, client_auth_type, min_version,
 *                      max_version, cipher_suites, prefer_server_cipher_suites
 *   http_server_config: headers (the five exporter-toolkit allows, with its value checks)
 *   basic_auth_users: name: bcrypt hash
 * Keys the toolkit knows but clusterfit does not implement are errors, as are unknown keys
 * (with a did-you-mean) and duplicate keys.  Relative file paths are taken relative to the
 * file's directory.  0, or CFIT_EPARSE/CFIT_EIO/CFIT_ENOMEM with d giving file:line:col.
 * Free with cfit_web_config_fini. */
CFIT_API int cfit_web_config_parse(const char *text, size_t len, const char *file, cfit_web_config *wc,
                          cfit_diag *d);
CFIT_API int cfit_web_config_load(const char *path, cfit_web_config *wc, cfit_diag *d);
CFIT_API void cfit_web_config_fini(cfit_web_config *wc);

/* The Go (IANA) name of cipher suite index i (0 <= i < CFIT_WEB_MAX_SUITES), and the index of
 * a name, or -1 (src/exporter/tls.c holds the table). */
CFIT_API const char *cfit_tls_suite_name(int i);
CFIT_API int cfit_tls_suite_index(const char *name);
/* The GnuTLS priority string the web config's TLS settings give (versions, the key exchanges,
 * ciphers and MACs of the named suites, %SERVER_PRECEDENCE) into buf.  0, or -1 when it does
 * not fit. */
CFIT_API int cfit_tls_priorities(const cfit_web_config *wc, char *buf, size_t n);

/* 1 when password matches user's bcrypt hash (through crypt(3)), else 0.  Takes the same time
 * whatever the username: an unknown user is checked against a dummy bcrypt setting with the
 * highest cost of the configured hashes, and every comparison is constant-time. */
CFIT_API int cfit_web_check_password(const cfit_web_config *wc, const char *user, const char *password);
/* The index of user in wc->users (every name compared, in constant time), or -1. */
CFIT_API int cfit_web_user_index(const cfit_web_config *wc, const char *user);
/* Decode an "Authorization: Basic BASE64" header into user and pass (NUL-terminated).  0, or -1
 * when it is missing, not Basic, not base64, has no ':', does not fit, or holds a NUL byte. */
CFIT_API int cfit_web_parse_basic(const char *header, char *user, size_t user_n, char *pass, size_t pass_n);
/* How many crypt(3) checks cfit_web_check_password has run in this process (for tests). */
CFIT_API unsigned long cfit_web_hash_runs(void);

/* ---- idle-GPU watchdog (opt-in; dry run unless enforce is set) ------------------------- */

typedef struct cfit_watchdog_config {
    double idle_below;          /* a GPU is idle below this utilisation ratio (0..1] */
    double for_s;               /* act when every GPU has been idle this long */
    double interval_s;          /* sampling period */
    const char *action;         /* shell command run when acting (sh -c), or NULL */
    int signal;                 /* signal sent to the idle GPUs' processes, or 0 */
    int enforce;                /* 0: log what would be done and do nothing */
    /* Device node prefix a process must hold open (/proc/PID/fd) to be signalled: NULL means
     * "/dev/nvidia" (the node is PREFIX + the GPU's minor number).  For tests only: the CLI takes
     * it from $CFIT_WATCHDOG_DEVICE_PREFIX so a test child can open a fake device file. */
    const char *device_prefix;
    void (*log)(void *ctx, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    void *log_ctx;
} cfit_watchdog_config;

typedef enum cfit_watchdog_verdict {
    CFIT_WD_NO_GPUS,            /* nothing to watch (no driver, or every GPU lost) */
    CFIT_WD_BUSY,               /* some GPU at or above the threshold: timer reset */
    CFIT_WD_IDLE,               /* all GPUs idle, for less than for_s so far */
    CFIT_WD_ACT                 /* idle for for_s: act now (the timer restarts) */
} cfit_watchdog_verdict;

/* The decision alone (for tests): idle_since is the watchdog's timer, -1 when not idle. */
CFIT_API cfit_watchdog_verdict cfit_watchdog_decide(const cfit_watchdog_config *c, const cfit_gpu_sample *s, size_t n,
                                           double now, double *idle_since, double *max_util);

/* Why a pid NVML listed may (CFIT_WD_PID_OK) or may not be signalled. */
typedef enum cfit_watchdog_pid_check {
    CFIT_WD_PID_OK,
    CFIT_WD_PID_RESERVED,       /* 0, 1, or above INT_MAX (never kill(0), kill(1), kill(-N)) */
    CFIT_WD_PID_SELF,           /* the exporter itself or a member of its process group */
    CFIT_WD_PID_DEAD,           /* no such process */
    CFIT_WD_PID_NO_DEVICE,      /* does not hold /dev/nvidiaMINOR open (or its fds cannot be read) */
    CFIT_WD_PID_NO_MINOR        /* the GPU's minor number is unknown: nothing to check against */
} cfit_watchdog_pid_check;

/* Check one pid NVML listed on a GPU with minor number minor (-1 unknown). */
CFIT_API cfit_watchdog_pid_check cfit_watchdog_check_pid(const cfit_watchdog_config *c, unsigned pid, int minor);
CFIT_API const char *cfit_watchdog_pid_check_text(cfit_watchdog_pid_check k);
/* Send c->signal (when enforce is set; else only log) to every checked pid of the n samples;
 * the others are logged and skipped.  Returns how many pids passed the checks. */
CFIT_API size_t cfit_watchdog_signal_gpus(const cfit_watchdog_config *c, const cfit_gpu_sample *s, size_t n);

typedef struct cfit_watchdog cfit_watchdog;
/* Start a thread sampling the gpu collector's state every interval_s and logging every
 * decision.  c must outlive it.  NULL when out of memory or the thread cannot start. */
CFIT_API cfit_watchdog *cfit_watchdog_start(void *gpu_state, const cfit_watchdog_config *c);
CFIT_API void cfit_watchdog_stop(cfit_watchdog *w);   /* NULL ok */

/* ---- HTTP server (libmicrohttpd) --------------------------------------------------------- */

typedef struct cfit_http_config {
    const char *listen_address;    /* HOST:PORT, [V6ADDR]:PORT or :PORT (every address); port 0 = any */
    const cfit_web_config *web;    /* TLS and basic auth; NULL = neither */
    unsigned max_connections;      /* 0 = 512; past it the oldest connection still sending its
                                      request headers is dropped */
    unsigned max_per_ip;           /* 0 = 256 */
    unsigned timeout_s;            /* idle cut-off; 0 = 10 */
    double header_timeout_s;       /* request headers must be in this long after the connection
                                      (or the previous response); 0 = 5 */
    int max_requests;              /* scrapes at once, more get 503; 0 = 40, negative = no limit */
} cfit_http_config;

/* 1 when an Accept-Encoding header value accepts gzip (not with q=0); NULL = 0. */
CFIT_API int cfit_http_accepts_gzip(const char *accept_encoding);
/* gzip of in (n bytes) into *out (malloc'ed, *out_n bytes).  0 or CFIT_ENOMEM. */
CFIT_API int cfit_http_gzip(const char *in, size_t n, char **out, size_t *out_n);

typedef struct cfit_http cfit_http;

/* Serve /metrics, / and /-/healthy for x from internal threads.  0, or CFIT_EPARSE (bad
 * address), CFIT_EIO (cannot read the TLS files), CFIT_ESYS (cannot listen) with d set. */
CFIT_API int cfit_http_start(cfit_exporter *x, const cfit_http_config *hc, cfit_http **out, cfit_diag *d);
CFIT_API unsigned cfit_http_port(const cfit_http *h);   /* the bound port */
CFIT_API void cfit_http_stop(cfit_http *h);             /* NULL ok */

#ifdef __cplusplus
}
#endif
#endif
