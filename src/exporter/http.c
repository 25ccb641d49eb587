/* http.c - the exporter's HTTP(S) server on libmicrohttpd: /metrics (content negotiated),
 * the / landing page and /-/healthy; basic auth, TLS (the policy in tls.c) and extra response
 * headers from the web config.
 *
 * Robustness (docs/exporter.md "HTTP"): a small thread pool polls the sockets; the
 * connections per client address and the idle time of a connection are limited, and MHD's
 * per-connection memory limit (16 KiB) cuts off oversized requests.  Against slow clients
 * (slowloris) the server keeps its own list of the connections still waiting for their request
 * headers, oldest first: a connection past --web.max-connections drops the oldest of them, and a
 * connection that has not sent its headers within --web.read-header-timeout is dropped (a
 * shutdown(2) of its socket, which MHD then closes).  At most --web.max-requests scrapes run at
 * once; more are answered 503 at once.  /metrics is gzip-compressed when the client asks.
 * Only GET and HEAD are answered. */
#define _DEFAULT_SOURCE   /* explicit_bzero */
#include "clusterfit/exporter.h"

#include <crypt.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "base/clock.h"
#include "exporter/tls.h"

#if MHD_VERSION >= 0x00097002
typedef enum MHD_Result mhd_result;
#else
typedef int mhd_result;
#endif

/* A connection, on the waiting list while its request headers are incomplete. */
typedef struct conn_slot {
    struct conn_slot *prev, *next;
    int fd;
    int waiting;        /* on the list */
    int dropped;        /* shut down by us; MHD closes it */
    double since_s;     /* when it started waiting for headers (monotonic) */
} conn_slot;

struct cfit_http {
    struct MHD_Daemon *daemon;
    pthread_mutex_t conn_lock;
    conn_slot *oldest, *newest;   /* the waiting list, oldest first */
    unsigned live;                /* connections not dropped by us */
    unsigned max_live;
    double header_timeout_s;
    pthread_t sweeper;
    int sweeping;
    _Atomic int stop;
    _Atomic unsigned scrapes;     /* scrapes in progress (until their response is sent) */
    unsigned max_scrapes;         /* 0 = no limit */
    int counted;                  /* address used as the request context of a counted scrape */
    cfit_exporter *x;
    const cfit_web_config *web;
    char *cert, *key, *ca;   /* PEM text for MHD (it wants memory, not file names) */
    char priorities[1024];   /* GnuTLS priority string from the web config (tls.c) */
    unsigned port;
    /* Per user, a SHA-512-crypt digest (random salt, 1000 rounds) of the last password that
     * passed bcrypt, so a scraper's repeated requests cost ~0.3 ms instead of a bcrypt each
     * (as exporter-toolkit caches).  Wrong passwords still pay the full bcrypt. */
    pthread_mutex_t auth_lock;
    char *auth_cache[CFIT_WEB_MAX_USERS];
    char auth_dummy[CRYPT_GENSALT_OUTPUT_SIZE];   /* what unknown users are checked against */
};

static const char landing[] =
    "<!DOCTYPE html>\n<html><head><title>clusterfit exporter</title></head><body>\n"
    "<h1>clusterfit exporter</h1>\n<p><a href=\"/metrics\">Metrics</a></p>\n"
    "<p>Metric reference: docs/metrics.md; alert rules: <code>clusterfit rules</code>.</p>\n"
    "</body></html>\n";

/* The web config's http_server_config.headers (before ours, so X-Content-Type-Options is sent once). */
static void add_headers(const struct cfit_http *h, struct MHD_Response *r)
{
    int nosniff = 0;
    for (size_t i = 0; h->web && i < h->web->nheaders; i++) {
        MHD_add_response_header(r, h->web->header_names[i], h->web->header_values[i]);
        nosniff |= !strcmp(h->web->header_names[i], "X-Content-Type-Options");
    }
    if (!nosniff)
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
}

/* Queue a response; encoding non-NULL marks a negotiated body (Vary: Accept-Encoding), and
 * adds Content-Encoding unless it is "identity". */
static mhd_result respond(const struct cfit_http *h, struct MHD_Connection *c, unsigned status, const char *type,
                          char *body, size_t len,
                          enum MHD_ResponseMemoryMode mode, const char *encoding)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    add_headers(h, r);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (encoding)
        MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
    if (encoding && strcmp(encoding, "identity") != 0)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
    mhd_result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static mhd_result respond_text(const struct cfit_http *h, struct MHD_Connection *c, unsigned status,
                               const char *text)
{
    return respond(h, c, status, "text/plain; charset=utf-8", (char *)text, strlen(text), MHD_RESPMEM_PERSISTENT, NULL);
}

/* 1 when password matches the cached digest of user idx's last good password.  Always one
 * SHA-512 crypt: against the dummy digest when idx is -1 (unknown user) or has no cache yet, so
 * this step takes the same time whatever the username. */
static int cache_hit(struct cfit_http *h, int idx, const char *password)
{
    pthread_mutex_lock(&h->auth_lock);
    const char *cached = idx >= 0 ? h->auth_cache[idx] : NULL;
    char *digest = strdup(cached ? cached : h->auth_dummy);
    pthread_mutex_unlock(&h->auth_lock);
    struct crypt_data *cd = digest ? calloc(1, sizeof *cd) : NULL;
    const char *got = cd ? crypt_r(password, digest, cd) : NULL;
    int ok = cached && got && strcmp(got, digest) == 0;
    free(cd);
    free(digest);
    return ok;
}

/* A fresh SHA-512-crypt setting (random salt, 1000 rounds) into buf, or NULL. */
static const char *sha_setting(char *buf, size_t n)
{
    return crypt_gensalt_rn("$6$", 1000, NULL, 0, buf, (int)n);
}

static void cache_store(struct cfit_http *h, int idx, const char *password)
{
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *cd = calloc(1, sizeof *cd);
    const char *digest = NULL;
    if (cd && sha_setting(setting, sizeof setting))
        digest = crypt_r(password, setting, cd);
    char *copy = digest && digest[0] == '$' ? strdup(digest) : NULL;
    free(cd);
    if (!copy || idx < 0) {
        free(copy);
        return;
    }
    pthread_mutex_lock(&h->auth_lock);
    free(h->auth_cache[idx]);
    h->auth_cache[idx] = copy;
    pthread_mutex_unlock(&h->auth_lock);
}

/* 1 when the request carries a user and password the web config accepts (auth.c decodes the
 * header: NUL bytes refused; the same work whatever the username). */
static int authorised(struct cfit_http *h, struct MHD_Connection *c)
{
    char user[256], pass[768];
    const char *hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (cfit_web_parse_basic(hdr, user, sizeof user, pass, sizeof pass))
        return 0;
    int idx = cfit_web_user_index(h->web, user);
    int ok = cache_hit(h, idx, pass);
    if (!ok && cfit_web_check_password(h->web, user, pass)) {
        ok = 1;
        cache_store(h, idx, pass);
    }
    explicit_bzero(pass, sizeof pass);
    return ok;
}

/* ---- slow clients: the waiting list ------------------------------------------------- */

static void wait_push(struct cfit_http *h, conn_slot *s, double now_s)
{
    s->since_s = now_s;
    s->waiting = 1;
    s->next = NULL;
    s->prev = h->newest;
    if (h->newest)
        h->newest->next = s;
    else
        h->oldest = s;
    h->newest = s;
}

static void wait_remove(struct cfit_http *h, conn_slot *s)
{
    if (!s->waiting)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        h->oldest = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        h->newest = s->prev;
    s->prev = s->next = NULL;
    s->waiting = 0;
}

/* Drop a waiting connection: MHD sees end of file and closes it.  The fd is still MHD's (it
 * closes it only after the CLOSED notification, which takes conn_lock). */
static void drop_locked(struct cfit_http *h, conn_slot *s)
{
    wait_remove(h, s);
    s->dropped = 1;
    h->live--;
    shutdown(s->fd, SHUT_RDWR);
}

/* A TLS connection's session gets the web config's client-certificate and suite rules before
 * its handshake (libmicrohttpd has made the session, and runs the handshake after this). */
static void tls_setup(const struct cfit_http *h, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ti = h->cert ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION) : NULL;
    if (ti && ti->tls_session)
        cfit__tls_session_setup(ti->tls_session, h->web);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct cfit_http *h = cls;
    conn_slot *s = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        s = ci ? calloc(1, sizeof *s) : NULL;
        *socket_context = s;
        if (!s)
            return;
        s->fd = ci->connect_fd;
        tls_setup(h, c);
        pthread_mutex_lock(&h->conn_lock);
        h->live++;
        wait_push(h, s, cfit__now());
        if (h->live > h->max_live)   /* the oldest connection still sending its headers goes */
            drop_locked(h, h->oldest);
        pthread_mutex_unlock(&h->conn_lock);
        return;
    }
    if (!s)
        return;
    pthread_mutex_lock(&h->conn_lock);
    wait_remove(h, s);
    if (!s->dropped)
        h->live--;
    pthread_mutex_unlock(&h->conn_lock);
    free(s);
    *socket_context = NULL;
}

static conn_slot *slot_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The request's headers are in: off the waiting list (the idle timeout applies from now). */
static void headers_done(struct cfit_http *h, struct MHD_Connection *c)
{
    conn_slot *s = slot_of(c);
    if (!s)
        return;
    pthread_mutex_lock(&h->conn_lock);
    wait_remove(h, s);
    pthread_mutex_unlock(&h->conn_lock);
}

/* A request finished: a counted scrape ends, and a kept-alive connection waits for its next
 * request's headers again. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    struct cfit_http *h = cls;
    if (*req_cls == &h->counted)
        h->scrapes--;
    *req_cls = NULL;
    conn_slot *s = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? slot_of(c) : NULL;
    if (!s)
        return;
    pthread_mutex_lock(&h->conn_lock);
    if (!s->dropped && !s->waiting)
        wait_push(h, s, cfit__now());
    pthread_mutex_unlock(&h->conn_lock);
}

/* Drop the connections that have waited longer than the header timeout, every 1/4 of it. */
static void *sweep(void *arg)
{
    struct cfit_http *h = arg;
    double period_s = h->header_timeout_s / 4 < 0.05 ? 0.05 : h->header_timeout_s / 4;
    struct timespec ts = {(time_t)period_s, (long)((period_s - (double)(time_t)period_s) * 1e9)};
    while (!h->stop) {
        nanosleep(&ts, NULL);
        double now_s = cfit__now();
        pthread_mutex_lock(&h->conn_lock);
        while (h->oldest && now_s - h->oldest->since_s > h->header_timeout_s)
            drop_locked(h, h->oldest);
        pthread_mutex_unlock(&h->conn_lock);
    }
    return NULL;
}

/* Compress body (len bytes, freed) when the client accepts gzip; 1 when it did. */
static int maybe_gzip(struct MHD_Connection *c, char **body, size_t *len)
{
    const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    char *z;
    size_t zn;
    if (!cfit_http_accepts_gzip(ae) || cfit_http_gzip(*body, *len, &z, &zn))
        return 0;
    free(*body);
    *body = z;
    *len = zn;
    return 1;
}

/* /metrics: at most max_scrapes at once (503 beyond, as node_exporter's --web.max-requests). */
static mhd_result serve_metrics(struct cfit_http *h, struct MHD_Connection *c, void **req_cls)
{
    if (h->max_scrapes && ++h->scrapes > h->max_scrapes) {
        h->scrapes--;
        return respond_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE,
                            "too many scrapes at once (--web.max-requests): try again later\n");
    }
    if (h->max_scrapes)
        *req_cls = &h->counted;   /* on_completed gives the slot back */
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    cfit_expo_format f = cfit_expo_negotiate(accept);
    char *body;
    size_t len;
    if (cfit_exporter_scrape(h->x, f, &body, &len))
        return respond_text(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    int gz = maybe_gzip(c, &body, &len);
    return respond(h, c, MHD_HTTP_OK, cfit_expo_content_type(f), body, len, MHD_RESPMEM_MUST_FREE,
                   gz ? "gzip" : "identity");
}

static mhd_result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                             const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)version;
    (void)upload;
    struct cfit_http *h = cls;
    static int first;
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0, head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (*req_cls == NULL) {   /* headers only so far: refuse bodies and other methods at once */
        *req_cls = &first;
        headers_done(h, c);
        if (!get && !head)
            return respond_text(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served\n");
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;   /* a body on a GET: ignored */
        return MHD_YES;
    }
    if (h->web && h->web->nusers && !authorised(h, c)) {
        struct MHD_Response *r =
            MHD_create_response_from_buffer(strlen("unauthorised\n"), (void *)"unauthorised\n", MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        add_headers(h, r);
        mhd_result rc = MHD_queue_basic_auth_fail_response(c, "clusterfit exporter", r);
        MHD_destroy_response(r);
        return rc;
    }
    if (strcmp(url, "/metrics") == 0)
        return serve_metrics(h, c, req_cls);
    if (strcmp(url, "/") == 0)
        return respond(h, c, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)landing, sizeof landing - 1,
                       MHD_RESPMEM_PERSISTENT, NULL);
    if (strcmp(url, "/-/healthy") == 0)
        return respond_text(h, c, MHD_HTTP_OK, "OK\n");
    return respond_text(h, c, MHD_HTTP_NOT_FOUND, "not found: see /metrics\n");
}

static int read_file(const char *path, char **out, cfit_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cfit_diag_set(d, CFIT_EIO, path, 0, 0, "cannot open");
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf)
        return CFIT_ENOMEM;
    buf[n] = '\0';
    *out = buf;
    return n ? 0 : cfit_diag_set(d, CFIT_EIO, path, 0, 0, "empty or unreadable");
}

/* The web config's certificate, key and client CAs as PEM text, and its priority string. */
static int tls_load(struct cfit_http *h, cfit_diag *d)
{
    const cfit_web_config *wc = h->web;
    int rc = read_file(wc->cert_file, &h->cert, d);
    if (!rc)
        rc = read_file(wc->key_file, &h->key, d);
    if (!rc && wc->client_ca_file)
        rc = read_file(wc->client_ca_file, &h->ca, d);
    if (!rc && cfit_tls_priorities(wc, h->priorities, sizeof h->priorities))
        rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "the TLS settings do not fit a priority string");
    return rc;
}

/* "HOST:PORT", "[V6]:PORT", ":PORT" -> a socket address. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sl, int *v6, cfit_diag *d)
{
    char host[256], port[16];
    const char *colon;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%s': expected [ADDRESS]:PORT", spec);
        memcpy(host, spec + 1, (size_t)(close - spec - 1));
        host[close - spec - 1] = '\0';
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%s': expected HOST:PORT (e.g. 127.0.0.1:9400)", spec);
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
    }
    size_t pl = strlen(colon + 1);
    if (pl == 0 || pl >= sizeof port || strspn(colon + 1, "0123456789") != pl || atol(colon + 1) > 65535)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%s': the port must be a number from 0 to 65535", spec);
    memcpy(port, colon + 1, pl + 1);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *res = NULL;
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (rc || !res)
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 0, 0, "'%s': cannot resolve '%s': %s", spec, host, gai_strerror(rc));
    /* ":PORT" listens on every address: prefer the IPv6 wildcard (dual stack). */
    struct addrinfo *pick = res;
    for (struct addrinfo *a = res; !host[0] && a; a = a->ai_next)
        if (a->ai_family == AF_INET6)
            pick = a;
    memcpy(ss, pick->ai_addr, pick->ai_addrlen);
    *sl = pick->ai_addrlen;
    *v6 = pick->ai_family == AF_INET6;
    freeaddrinfo(res);
    return 0;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap;   /* MHD's own messages (client resets, timeouts) are noise for users */
}

/* MHD's own limit: room above ours for the dropped connections it has not closed yet (it splits
 * the limit between its 4 threads). */
static unsigned mhd_limit(const struct cfit_http *h)
{
    return 2 * h->max_live + 64;
}

/* Raise the soft limit on open files towards the hard one so that MHD's connection limit
 * can be reached (systemd's default soft limit is 1024). */
static void raise_nofile(unsigned want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
}

static int guard_start(struct cfit_http *h, const cfit_http_config *hc, cfit_diag *d)
{
    pthread_mutex_init(&h->conn_lock, NULL);
    h->max_live = hc->max_connections ? hc->max_connections : 512u;
    h->header_timeout_s = hc->header_timeout_s > 0 ? hc->header_timeout_s : 5;
    h->max_scrapes = hc->max_requests < 0 ? 0 : hc->max_requests ? (unsigned)hc->max_requests : 40u;
    raise_nofile(mhd_limit(h) + 64);
    if (pthread_create(&h->sweeper, NULL, sweep, h) != 0)
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot start the connection sweeper thread");
    h->sweeping = 1;
    return 0;
}

int cfit_http_start(cfit_exporter *x, const cfit_http_config *hc, cfit_http **out, cfit_diag *d)
{
    *out = NULL;
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    int v6 = 0;
    int rc = parse_listen(hc->listen_address ? hc->listen_address : "127.0.0.1:9400", &ss, &sl, &v6, d);
    if (rc)
        return rc;
    struct cfit_http *h = calloc(1, sizeof *h);
    if (!h)
        return CFIT_ENOMEM;
    h->x = x;
    h->web = hc->web;
    pthread_mutex_init(&h->auth_lock, NULL);
    if (!sha_setting(h->auth_dummy, sizeof h->auth_dummy))
        snprintf(h->auth_dummy, sizeof h->auth_dummy, "$6$rounds=1000$clusterfitdummy");
    int tls = hc->web && hc->web->cert_file;
    if (tls && (rc = tls_load(h, d))) {
        cfit_http_stop(h);
        return rc;
    }
    if ((rc = guard_start(h, hc, d))) {
        cfit_http_stop(h);
        return rc;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
        flags |= MHD_USE_EPOLL;
    else if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
        flags |= MHD_USE_POLL;
    if (v6)
        flags |= MHD_USE_IPv6 | MHD_USE_DUAL_STACK;
    if (tls)
        flags |= MHD_USE_TLS;
    unsigned port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    struct MHD_OptionItem tlsopts[] = {
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->cert},
        {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, h->key},
        {tls ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END, 0, h->priorities},
        {h->ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, h->ca},
        {MHD_OPTION_END, 0, NULL},
    };
    h->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, on_request, h,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, 4u,
        MHD_OPTION_CONNECTION_LIMIT, mhd_limit(h),
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, hc->max_per_ip ? hc->max_per_ip : 256u,
        MHD_OPTION_CONNECTION_TIMEOUT, hc->timeout_s ? hc->timeout_s : 10u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
        MHD_OPTION_ARRAY, tlsopts,
        MHD_OPTION_END);
    if (!h->daemon) {
        cfit_http_stop(h);
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot listen on %s%s",
                             hc->listen_address ? hc->listen_address : "127.0.0.1:9400",
                             tls ? " (address in use, the TLS certificate/key or client CAs are not valid PEM, or"
                                   " this GnuTLS lacks a configured TLS version)"
                                 : " (address in use or not local?)");
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : port;
    *out = h;
    return 0;
}

unsigned cfit_http_port(const cfit_http *h)
{
    return h->port;
}

void cfit_http_stop(cfit_http *h)
{
    if (!h)
        return;
    if (h->sweeping) {
        h->stop = 1;
        pthread_join(h->sweeper, NULL);
    }
    if (h->daemon)
        MHD_stop_daemon(h->daemon);
    if (h->max_live)
        pthread_mutex_destroy(&h->conn_lock);
    free(h->cert);
    free(h->key);
    free(h->ca);
    for (size_t i = 0; i < CFIT_WEB_MAX_USERS; i++)
        free(h->auth_cache[i]);
    pthread_mutex_destroy(&h->auth_lock);
    free(h);
}
