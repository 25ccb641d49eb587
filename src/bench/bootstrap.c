/* bootstrap.c - find the peers: the TCP rendezvous at rank 0, the rank table, the
 * argument check, the control connections and the choice of transport per peer.
 *
 * Protocol (all integers big-endian u32, strings fixed-size NUL-padded):
 *   rank 0 -> r        greeting on accept: magic, version (a joining rank that gets no
 *                      greeting drops the connection and tries again until the timeout)
 *   rank r -> rank 0   HELLO: magic, version, rank, size, pid, data port, host[256],
 *                      hostkey[192], job token[128], digest length, digest bytes
 *                      (cfit__parse_hello, bootstrap_parse.c)
 *   rank 0 -> every r  status (0 or -cfit_err), message length, message; when 0: the
 *                      job id[48] and per rank: host, hostkey, addr[64], port, pid
 * Rank 0 fills each rank's address with the peer address it saw the HELLO come from;
 * ranks fill rank 0's with the address they reached the rendezvous at.  The connection
 * stays open as the control channel (set-up barriers) until the comm is closed.
 *
 * Rank 0 reads every accepted connection at once (one poll over all of them), each with its
 * own HELLO_WAIT_S deadline, so idle or slow connections cannot keep real ranks out; a
 * stranger (no hello in time, not a clusterfit hello, another job's token, another world
 * size, a rank already joined) is dropped with a warning on stderr and rank 0 keeps waiting
 * for the real ranks until --timeout.  The job token (launch.c) is random per --np job and
 * derived from the launcher's job id otherwise.
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"
#include "base/grow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HELLO_MAGIC CFIT__HELLO_MAGIC
#define HELLO_VERSION CFIT__HELLO_VERSION
#define HELLO_FIXED CFIT__HELLO_FIXED
#define DIGEST_MAX CFIT__DIGEST_MAX
#define HELLO_WAIT_S 5.0     /* a connection that sends no whole hello in this long is dropped */
#define PENDING_MAX 256      /* connections read at once; more wait in the listen backlog */
#define r_u32 cfit__get_be32
#define r_str cfit__get_str

/* ---- sockets ---------------------------------------------------------------------- */

int cfit__sock_io(int fd, void *buf, size_t n, int is_write, double deadline)
{
    unsigned char *p = buf;
    size_t done = 0;
    while (done < n) {
        double left = deadline - cfit__now();
        if (left <= 0)
            return CFIT_ETIMEOUT;
        struct pollfd pfd = {fd, (short)(is_write ? POLLOUT : POLLIN), 0};
        int pr = poll(&pfd, 1, left > 1.0 ? 1000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR)
            return CFIT_ESYS;
        if (pr <= 0)
            continue;
        ssize_t k = is_write ? send(fd, p + done, n - done, MSG_NOSIGNAL) : recv(fd, p + done, n - done, 0);
        if (k > 0)
            done += (size_t)k;
        else if (k == 0)
            return CFIT_EPEER;
        else if (errno == ECONNRESET || errno == EPIPE)
            return CFIT_EPEER;
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return CFIT_ESYS;
    }
    return 0;
}

/* CLUSTERFIT_TCP_BUF=SIZE: fixed SO_SNDBUF/SO_RCVBUF before connect/listen.  Unset (the
 * default), the kernel autotunes each connection's buffers up to net.ipv4.tcp_rmem/tcp_wmem's
 * maximum, which is larger than a fixed size can be (capped at net.core.rmem_max) on links
 * with a large bandwidth-delay product; measured equal on loopback (docs/bench-launch.md). */
int cfit__tcp_buf_setting(int *bytes, cfit_diag *d)
{
    const char *e = getenv("CLUSTERFIT_TCP_BUF");
    uint64_t v = 0;
    *bytes = 0;
    if (!e)
        return 0;
    int rc = cfit_parse_size(e, &v, d);
    if (rc)
        return cfit_diag_set(d, rc, NULL, 0, 0, "CLUSTERFIT_TCP_BUF: %s", d->msg);
    if (v < 4096 || v > (1u << 30))
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "CLUSTERFIT_TCP_BUF: '%.64s' is out of range (4K to 1G)", e);
    *bytes = (int)v;
    return 0;
}

static void sock_buffers(int fd)
{
    static int bytes = -1;
    if (bytes < 0) {
        cfit_diag d;
        if (cfit__tcp_buf_setting(&bytes, &d))
            bytes = 0;   /* refused by cfit__tcp_env_check() before any socket is made */
    }
    if (bytes > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    }
}

void cfit__sock_tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int set_nonblock(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* One non-blocking connect attempt bounded by ms; returns fd or -1 with errno. */
static int try_connect(const struct addrinfo *ai, int ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    sock_buffers(fd);
    set_nonblock(fd, 1);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        struct pollfd pfd = {fd, POLLOUT, 0};
        int pr = poll(&pfd, 1, ms);
        int err = 0;
        socklen_t len = sizeof err;
        if (pr <= 0)
            err = pr == 0 ? ETIMEDOUT : errno;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            close(fd);
            errno = err;
            return -1;
        }
    }
    set_nonblock(fd, 0);
    return fd;
}

int cfit__sock_connect(const char *host, int port, double deadline, char *why, size_t why_n)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    snprintf(why, why_n, "no attempt made");
    for (;;) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        int gai = getaddrinfo(host, service, &hints, &res);
        if (gai != 0) {
            snprintf(why, why_n, "%s", gai_strerror(gai));
        } else {
            for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                double left = deadline - cfit__now();
                int fd = try_connect(ai, left > 1.0 ? 1000 : left > 0 ? (int)(left * 1000) + 1 : 1);
                if (fd >= 0) {
                    freeaddrinfo(res);
                    return fd;
                }
                snprintf(why, why_n, "%s", strerror(errno));
            }
            freeaddrinfo(res);
        }
        if (cfit__now() + 0.1 >= deadline)
            return CFIT_ETIMEOUT;
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
}

/* ---- wire encoding ---------------------------------------------------------------- */

typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
    int oom;
} wbuf;

static void w_bytes(wbuf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n < b->len || cfit__grow(&b->p, &b->cap, b->len + n, 1)) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void w_u32(wbuf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    w_bytes(b, x, 4);
}

static void w_str(wbuf *b, const char *s, size_t field)
{
    char tmp[CFIT__HOST_MAX];
    memset(tmp, 0, sizeof tmp);
    snprintf(tmp, field, "%s", s);
    w_bytes(b, tmp, field);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

#define ENTRY_BYTES (CFIT__HOST_MAX + CFIT__HOSTKEY_MAX + CFIT__ADDR_MAX + 8)

/* ---- host identity ---------------------------------------------------------------- */

static void ns_inode(const char *ns, char *out, size_t n)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/ns/%s", ns);
    if (stat(path, &st) == 0)
        snprintf(out, n, "%llu", (unsigned long long)st.st_ino);
    else
        snprintf(out, n, "?");
}

/* hostname|boot_id|net|pid|mnt: equal on two ranks only when they share a machine, its
 * network, process ids and /dev/shm (ranks in different network namespaces share a
 * hostname but must use tcp between them). */
static void host_identity(cfit__peer_info *me)
{
    if (gethostname(me->host, sizeof me->host) != 0)
        snprintf(me->host, sizeof me->host, "localhost");
    me->host[sizeof me->host - 1] = '\0';
    char boot[64] = "?", net[24], pid[24], mnt[24];
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            snprintf(boot, sizeof boot, "?");
        boot[strcspn(boot, "\n")] = '\0';
        fclose(f);
    }
    ns_inode("net", net, sizeof net);
    ns_inode("pid", pid, sizeof pid);
    ns_inode("mnt", mnt, sizeof mnt);
    snprintf(me->hostkey, sizeof me->hostkey, "%.64s|%.40s|%s|%s|%s", me->host, boot, net, pid, mnt);
}

static void numeric_addr(const struct sockaddr_storage *ss, char *out, size_t n)
{
    if (getnameinfo((const struct sockaddr *)ss, sizeof *ss, out, (socklen_t)n, NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(out, n, "127.0.0.1");
}

/* A listener on every address of family, or on loopback only (port 0 = any free port).
 * fd or -1 (errno). */
static int listen_on(int family, int port, int loopback)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sock_buffers(fd);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_addr = loopback ? in6addr_loopback : in6addr_any;
        s6->sin6_port = htons((uint16_t)port);
        len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK : INADDR_ANY);
        s4->sin_port = htons((uint16_t)port);
        len = sizeof *s4;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4096) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int sock_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                    : ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* ---- rank 0 ----------------------------------------------------------------------- */

typedef struct joined {
    int fd;
    char *digest;
} joined;

static int send_status(int fd, int status, const char *msg, const wbuf *table, double deadline)
{
    wbuf b = {0};
    w_u32(&b, (uint32_t)(-status));
    w_u32(&b, (uint32_t)strlen(msg));
    w_bytes(&b, msg, strlen(msg));
    if (table)
        w_bytes(&b, table->p, table->len);
    int rc = b.oom ? CFIT_ENOMEM : cfit__sock_io(fd, b.p, b.len, 1, deadline);
    free(b.p);
    return rc;
}

/* A connection rank 0 accepted and reads a hello from. */
typedef struct pending {
    int fd;
    double deadline;
    size_t have, want;              /* bytes read; HELLO_FIXED, then HELLO_FIXED + digest */
    unsigned char buf[HELLO_FIXED + DIGEST_MAX];
    cfit__hello h;
    char addr[CFIT__ADDR_MAX];
} pending;

typedef struct gather {
    cfit_comm *c;
    const char *rdv;
    joined *j;
    pending *p;                     /* [PENDING_MAX] */
    int np, arrived, dropped;
} gather;

static void drop_log(gather *g, const char *addr, const char *why)
{
    g->dropped++;
    fprintf(stderr, "clusterfit: warning: rendezvous at %s: dropped a connection from %s: %s\n", g->rdv,
            addr[0] ? addr : "?", why);
    fflush(stderr);
}

/* Drop pending k (tell it why when it spoke our protocol, so a misdirected rank learns it). */
static void drop_pending(gather *g, int k, int err, const char *why)
{
    pending *q = &g->p[k];
    if (err)
        send_status(q->fd, err, why, NULL, cfit__now() + 0.2);
    drop_log(g, q->addr, why);
    close(q->fd);
    g->p[k] = g->p[--g->np];
}

static void accept_one(gather *g, int lfd, double deadline)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    pending *q = &g->p[g->np];
    memset(q, 0, offsetof(pending, buf));
    numeric_addr(&ss, q->addr, sizeof q->addr);
    unsigned char greet[8];
    put_be32(greet, HELLO_MAGIC), put_be32(greet + 4, HELLO_VERSION);
    if (send(fd, greet, sizeof greet, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof greet) {
        close(fd);
        return;
    }
    q->fd = fd;
    q->want = HELLO_FIXED;
    q->deadline = cfit__now() + HELLO_WAIT_S < deadline ? cfit__now() + HELLO_WAIT_S : deadline;
    g->np++;
}

/* The whole hello of pending k is in: a rank of this job joins, a duplicate is dropped. */
static int hello_done(gather *g, int k)
{
    pending *q = &g->p[k];
    int r = q->h.rank;
    if (g->j[r].fd >= 0) {
        char why[160];
        snprintf(why, sizeof why, "rank %d has joined already (ranks of different jobs share the rendezvous?)", r);
        drop_pending(g, k, CFIT_EINVALID, why);
        return 0;
    }
    char *dg = calloc(1, q->h.digest_len + 1);
    if (!dg)
        return CFIT_ENOMEM;
    memcpy(dg, q->buf + HELLO_FIXED, q->h.digest_len);
    set_nonblock(q->fd, 0);
    cfit__peer_info *pi = &g->c->peers[r];
    memset(pi, 0, sizeof *pi);
    pi->pid = q->h.pid, pi->port = q->h.port;
    snprintf(pi->host, sizeof pi->host, "%s", q->h.host);
    snprintf(pi->hostkey, sizeof pi->hostkey, "%s", q->h.hostkey);
    snprintf(pi->addr, sizeof pi->addr, "%s", q->addr);
    g->j[r].fd = q->fd;
    g->j[r].digest = dg;
    g->arrived++;
    g->p[k] = g->p[--g->np];
    return 0;
}

/* Read what pending k has; 0, or CFIT_ENOMEM.  Completes or drops it when it can. */
static int read_pending(gather *g, int k)
{
    pending *q = &g->p[k];
    ssize_t n = recv(q->fd, q->buf + q->have, q->want - q->have, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        drop_pending(g, k, 0, "closed before it sent a whole hello");
        return 0;
    }
    if (n < 0)
        return 0;
    q->have += (size_t)n;
    if (q->have < q->want)
        return 0;
    if (q->want == HELLO_FIXED) {
        cfit_diag why;
        cfit_diag_clear(&why);
        int rc = cfit__parse_hello(q->buf, q->have, g->c->size, g->c->token, &q->h, &why);
        if (rc) {
            drop_pending(g, k, rc == CFIT_EINVALID ? CFIT_EINVALID : 0, why.msg);
            return 0;
        }
        q->want += q->h.digest_len;
        if (q->have < q->want)
            return 0;
    }
    return hello_done(g, k);
}

/* One round: poll the listener and every pending connection, read what came, expire. */
static int gather_round(gather *g, int lfd, double deadline)
{
    struct pollfd pf[PENDING_MAX + 1];
    double now = cfit__now(), wake = now + 1.0 < deadline ? now + 1.0 : deadline;
    pf[0].fd = g->np < PENDING_MAX ? lfd : -1, pf[0].events = POLLIN, pf[0].revents = 0;
    for (int k = 0; k < g->np; k++) {
        pf[k + 1].fd = g->p[k].fd, pf[k + 1].events = POLLIN, pf[k + 1].revents = 0;
        wake = g->p[k].deadline < wake ? g->p[k].deadline : wake;
    }
    int n = g->np, rc = 0;
    if (poll(pf, (nfds_t)n + 1, wake > now ? (int)((wake - now) * 1000) + 1 : 0) < 0 && errno != EINTR)
        return 0;
    for (int k = n - 1; k >= 0 && !rc; k--)   /* backwards: a drop moves the last one into k */
        if (pf[k + 1].revents)
            rc = read_pending(g, k);
    now = cfit__now();
    for (int k = g->np - 1; k >= 0; k--)
        if (g->p[k].deadline <= now)
            drop_pending(g, k, 0, "no whole hello within 5 s");
    if (pf[0].revents & POLLIN)
        for (int i = 0; i < 64 && g->np < PENDING_MAX; i++) {
            int before = g->np;
            accept_one(g, lfd, deadline);
            if (g->np == before)
                break;
        }
    return rc;
}

static void missing_ranks(const joined *j, int size, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int r = 1; r < size && used + 16 < n; r++)
        if (j[r].fd < 0)
            used += (size_t)snprintf(out + used, n - used, "%s%d", used ? ", " : "", r);
}

/* Accept and read hellos until every rank joined or --timeout passed. */
static int gather_hellos(gather *g, int lfd, cfit_diag *d)
{
    cfit_comm *c = g->c;
    double deadline = cfit__now() + c->timeout_s;
    int rc = 0;
    set_nonblock(lfd, 1);   /* accept_one takes what the backlog holds, never waits */
    while (g->arrived < c->size - 1 && !rc) {
        if (cfit__now() >= deadline) {
            char miss[256], extra[96] = "";
            missing_ranks(g->j, c->size, miss, sizeof miss);
            if (g->dropped)
                snprintf(extra, sizeof extra, "; dropped %d connection%s that were not ranks of this job",
                         g->dropped, g->dropped == 1 ? "" : "s");
            return cfit_diag_set(d, CFIT_ETIMEOUT, NULL, 0, 0,
                                 "rendezvous at %s: %d of %d ranks arrived within %g s (missing rank %s)%s", g->rdv,
                                 g->arrived + 1, c->size, c->timeout_s, miss, extra);
        }
        rc = gather_round(g, lfd, deadline);
    }
    return rc ? cfit_diag_set(d, rc, NULL, 0, 0, "out of memory") : 0;
}

/* Every rank is in: check the digests, send each its status and (when 0) the table. */
static int send_tables(cfit_comm *c, joined *j, const char *digest, int rc, cfit_diag *d)
{
    int size = c->size;
    double deadline = cfit__now() + c->timeout_s;
    for (int r = 1; r < size && !rc; r++)
        if (strcmp(j[r].digest, digest) != 0)
            rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                               "rank %d was given different arguments: '%.200s' (rank 0: '%.200s')", r,
                               j[r].digest, digest);
    wbuf table = {0};
    if (!rc) {
        w_bytes(&table, c->jobid, CFIT__JOBID_MAX);
        for (int r = 0; r < size; r++) {
            const cfit__peer_info *pi = &c->peers[r];
            w_str(&table, pi->host, CFIT__HOST_MAX);
            w_str(&table, pi->hostkey, CFIT__HOSTKEY_MAX);
            w_str(&table, pi->addr, CFIT__ADDR_MAX);
            w_u32(&table, (uint32_t)pi->port);
            w_u32(&table, (uint32_t)pi->pid);
        }
        if (table.oom)
            rc = cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    for (int r = 1; r < size; r++) {
        if (j[r].fd >= 0) {
            int sr = send_status(j[r].fd, rc, rc ? d->msg : "", rc ? NULL : &table, deadline);
            if (sr && !rc)
                rc = cfit_diag_set(d, CFIT_EPEER, NULL, 0, 0, "rank %d lost during set-up", r);
        }
        c->ctl_fds[r] = j[r].fd;
        free(j[r].digest);
    }
    free(table.p);
    return rc;
}

static int rank0_gather(cfit_comm *c, int lfd, const char *digest, const char *rdv, cfit_diag *d)
{
    joined *j = calloc((size_t)c->size, sizeof *j);
    pending *p = malloc(PENDING_MAX * sizeof *p);
    if (!j || !p) {
        free(j), free(p);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    for (int r = 0; r < c->size; r++)
        j[r].fd = -1;
    gather g = {c, rdv, j, p, 0, 0, 0};
    int rc = gather_hellos(&g, lfd, d);
    for (int k = 0; k < g.np; k++)
        close(p[k].fd);
    free(p);
    rc = send_tables(c, j, digest, rc, d);
    free(j);
    return rc;
}

/* ---- other ranks ------------------------------------------------------------------ */

/* Connect to rank 0 and read its greeting; a listener that does not greet like rank 0
 * within 2 s (another program, another job's data port) is dropped and tried again. */
static int connect_rank0(const char *host, int port, double deadline, char *why, size_t why_n)
{
    for (;;) {
        int fd = cfit__sock_connect(host, port, deadline, why, why_n);
        if (fd < 0)
            return fd;
        unsigned char greet[8];
        double dl = cfit__now() + 2.0 < deadline ? cfit__now() + 2.0 : deadline;
        int rc = cfit__sock_io(fd, greet, sizeof greet, 0, dl);
        if (!rc && r_u32(greet) == HELLO_MAGIC && r_u32(greet + 4) == HELLO_VERSION)
            return fd;
        close(fd);
        snprintf(why, why_n, "%s", rc == CFIT_EPEER ? "the connection was closed at once"
                                   : rc ? "something listens there but is not a clusterfit rank 0"
                                        : "rank 0 there runs a different clusterfit version");
        if (cfit__now() + 0.1 >= deadline)
            return CFIT_ETIMEOUT;
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
}

static int rank_join(cfit_comm *c, const char *host, int port, const char *digest, cfit_diag *d)
{
    double deadline = cfit__now() + c->timeout_s;
    char why[128];
    int fd = connect_rank0(host, port, deadline, why, sizeof why);
    if (fd < 0)
        return cfit_diag_set(d, CFIT_ETIMEOUT, NULL, 0, 0,
                             "cannot reach the rendezvous at %s:%d within %g s (%s); is rank 0 running?",
                             host, port, c->timeout_s, why);
    c->ctl_fd = fd;
    const cfit__peer_info *me = &c->peers[c->rank];
    wbuf b = {0};
    w_u32(&b, HELLO_MAGIC);
    w_u32(&b, HELLO_VERSION);
    w_u32(&b, (uint32_t)c->rank);
    w_u32(&b, (uint32_t)c->size);
    w_u32(&b, (uint32_t)me->pid);
    w_u32(&b, (uint32_t)me->port);
    w_str(&b, me->host, CFIT__HOST_MAX);
    w_str(&b, me->hostkey, CFIT__HOSTKEY_MAX);
    w_str(&b, c->token, CFIT__TOKEN_MAX);
    size_t dlen = strlen(digest) > DIGEST_MAX ? DIGEST_MAX : strlen(digest);
    w_u32(&b, (uint32_t)dlen);
    w_bytes(&b, digest, dlen);
    int rc = b.oom ? CFIT_ENOMEM : cfit__sock_io(fd, b.p, b.len, 1, deadline);
    free(b.p);
    unsigned char hdr[8];
    if (!rc)
        rc = cfit__sock_io(fd, hdr, 8, 0, deadline);
    if (rc)
        return cfit_diag_set(d, rc, NULL, 0, 0, "rendezvous at %s:%d: %s", host, port,
                             rc == CFIT_ETIMEOUT ? "no answer from rank 0 (are all ranks started?)"
                                                 : "rank 0 closed the connection");
    int status = -(int)r_u32(hdr);
    uint32_t mlen = r_u32(hdr + 4);
    char msg[1024] = "";
    if (mlen >= sizeof msg || cfit__sock_io(fd, msg, mlen, 0, deadline))
        return cfit_diag_set(d, CFIT_EPEER, NULL, 0, 0, "rendezvous at %s:%d: bad answer", host, port);
    msg[mlen] = '\0';
    if (status)
        return cfit_diag_set(d, status, NULL, 0, 0, "%s", msg);
    size_t tlen = CFIT__JOBID_MAX + (size_t)c->size * ENTRY_BYTES;
    unsigned char *t = malloc(tlen);
    if (!t)
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    rc = cfit__sock_io(fd, t, tlen, 0, deadline);
    if (!rc) {
        r_str(c->jobid, t, CFIT__JOBID_MAX);
        for (int r = 0; r < c->size; r++) {
            const unsigned char *e = t + CFIT__JOBID_MAX + (size_t)r * ENTRY_BYTES;
            cfit__peer_info *p = &c->peers[r];
            r_str(p->host, e, CFIT__HOST_MAX);
            r_str(p->hostkey, e + CFIT__HOST_MAX, CFIT__HOSTKEY_MAX);
            r_str(p->addr, e + CFIT__HOST_MAX + CFIT__HOSTKEY_MAX, CFIT__ADDR_MAX);
            p->port = (int)r_u32(e + CFIT__HOST_MAX + CFIT__HOSTKEY_MAX + CFIT__ADDR_MAX);
            p->pid = (int)r_u32(e + CFIT__HOST_MAX + CFIT__HOSTKEY_MAX + CFIT__ADDR_MAX + 4);
        }
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0)
            numeric_addr(&ss, c->peers[0].addr, sizeof c->peers[0].addr);
    }
    free(t);
    return rc ? cfit_diag_set(d, CFIT_EPEER, NULL, 0, 0, "rendezvous at %s:%d: rank 0 closed the connection",
                              host, port) : 0;
}

/* ---- entry points ----------------------------------------------------------------- */

int cfit__bootstrap(cfit_comm *c, int rank, int size, const char *host, int port, int listen_fd,
                    const char *digest, cfit_diag *d)
{
    c->rank = rank;
    c->size = size;
    c->peers = calloc((size_t)size, sizeof *c->peers);
    c->ops = calloc((size_t)size, sizeof *c->ops);
    c->tself = calloc((size_t)size, sizeof *c->tself);
    if (!c->peers || !c->ops || !c->tself)
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    cfit__peer_info *me = &c->peers[rank];
    host_identity(me);
    me->pid = (int)getpid();
    snprintf(me->addr, sizeof me->addr, "%s", strchr(host, ':') ? "::1" : "127.0.0.1");
    if (size == 1) {
        snprintf(c->jobid, sizeof c->jobid, "%d-%lx", c->owner_pid ? c->owner_pid : (int)getpid(),
                 (unsigned long)time(NULL));
        return 0;
    }
    int family = strchr(host, ':') ? AF_INET6 : AF_INET;
    c->data_listen_fd = listen_on(family, 0, c->local_only);
    if (c->data_listen_fd < 0)
        return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0, "cannot open a TCP listener: %s", strerror(errno));
    me->port = sock_port(c->data_listen_fd);
    if (rank != 0)
        return rank_join(c, host, port, digest ? digest : "", d);

    char rdv[CFIT__HOST_MAX + 16];
    snprintf(rdv, sizeof rdv, "%s:%d", host, port);
    int lfd = listen_fd;
    if (lfd < 0) {
        lfd = listen_on(family, port, c->local_only);
        if (lfd < 0)
            return cfit_diag_set(d, CFIT_ESYS, NULL, 0, 0,
                                 errno == EADDRINUSE
                                     ? "rendezvous port %d is in use (another job or program listens on it); "
                                       "choose another with --rendezvous HOST:PORT or MASTER_PORT"
                                     : "cannot listen on the rendezvous port %d: %s",
                                 port, strerror(errno));
    }
    c->ctl_fds = malloc((size_t)size * sizeof *c->ctl_fds);
    if (!c->ctl_fds) {
        if (lfd != listen_fd)
            close(lfd);
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    }
    for (int r = 0; r < size; r++)
        c->ctl_fds[r] = -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(c->jobid, sizeof c->jobid, "%d-%lx%05lx", c->owner_pid ? c->owner_pid : (int)getpid(),
             (unsigned long)ts.tv_sec,
             (unsigned long)(ts.tv_nsec / 10000) & 0xfffffUL);
    int rc = rank0_gather(c, lfd, digest ? digest : "", rdv, d);
    close(lfd);
    return rc;
}

int cfit__ctl_barrier(cfit_comm *c)
{
    if (c->size == 1)
        return 0;
    double deadline = cfit__now() + c->timeout_s;
    unsigned char b = 1;
    if (c->rank != 0) {
        int rc = cfit__sock_io(c->ctl_fd, &b, 1, 1, deadline);
        if (!rc)
            rc = cfit__sock_io(c->ctl_fd, &b, 1, 0, deadline);
        return rc ? cfit__comm_fail(c, rc == CFIT_ETIMEOUT ? CFIT_ETIMEOUT : CFIT_EPEER,
                                    "rank 0 lost during set-up") : 0;
    }
    for (int r = 1; r < c->size; r++)
        if (cfit__sock_io(c->ctl_fds[r], &b, 1, 0, deadline))
            return cfit__comm_fail(c, CFIT_EPEER, "rank %d lost during set-up", r);
    for (int r = 1; r < c->size; r++)
        if (cfit__sock_io(c->ctl_fds[r], &b, 1, 1, deadline))
            return cfit__comm_fail(c, CFIT_EPEER, "rank %d lost during set-up", r);
    return 0;
}

int cfit__comm_connect(cfit_comm *c, cfit_transport_kind kind, cfit_diag *d)
{
    int *use_shm = calloc((size_t)c->size, sizeof *use_shm);
    int *use_tcp = calloc((size_t)c->size, sizeof *use_tcp);
    int rc = 0;
    if (!use_shm || !use_tcp) {
        rc = cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (int p = 0; p < c->size; p++) {
        if (p == c->rank)
            continue;
        int same = strcmp(c->peers[p].hostkey, c->peers[c->rank].hostkey) == 0;
        if (kind == CFIT_TRANSPORT_SHM && !same) {
            rc = cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                               "--transport shm needs every rank on one host, but rank %d runs on %s "
                               "(or in another namespace) and rank %d on %s",
                               p, c->peers[p].host, c->rank, c->peers[c->rank].host);
            goto out;
        }
        if (kind == CFIT_TRANSPORT_TCP || !same)
            use_tcp[p] = 1;
        else
            use_shm[p] = 1;
    }
    /* every rank calls both constructors: each runs the same set-up barriers */
    void *self = NULL;
    rc = cfit__shm_open(c, use_shm, &self);
    if (!rc && self) {
        c->tr_ops[c->ntr] = &cfit_transport_shm;
        c->tr_self[c->ntr++] = self;
        for (int p = 0; p < c->size; p++)
            if (use_shm[p])
                c->ops[p] = &cfit_transport_shm, c->tself[p] = self;
    }
    self = NULL;
    if (!rc)
        rc = cfit__tcp_open(c, use_tcp, &self);
    if (!rc && self) {
        c->tr_ops[c->ntr] = &cfit_transport_tcp;
        c->tr_self[c->ntr++] = self;
        for (int p = 0; p < c->size; p++)
            if (use_tcp[p])
                c->ops[p] = &cfit_transport_tcp, c->tself[p] = self;
    }
    if (rc)
        cfit_diag_set(d, rc, NULL, 0, 0, "%s", c->err[0] ? c->err : cfit_strerror(rc));
out:
    free(use_shm);
    free(use_tcp);
    if (c->data_listen_fd >= 0) {
        close(c->data_listen_fd);
        c->data_listen_fd = -1;
    }
    return rc;
}
