/* transport_tcp.c - ranks over TCP: several connections per peer, large messages
 * striped across them, non-blocking sockets driven by one edge-triggered epoll set.
 *
 * Each message is cut the same way on both sides: into one contiguous part per
 * connection but no part below TCP_PART_MIN (so a message under 2 MiB goes whole), the
 * first part on connection (message number % connections), which spreads a stream of
 * smaller messages over all connections too.  Every connection keeps a FIFO of parts to
 * send and one of parts to receive, so the byte order on each connection is the same on
 * both ends without any header.  A
 * progress call first moves bytes on every connection with queued parts until the
 * kernel says EAGAIN, then (when nothing moved) sleeps in epoll_wait.  A connection
 * closed or reset by the peer fails the comm with CFIT_EPEER naming the rank.
 *
 * Set-up: the higher rank of every pair connects (CLUSTERFIT_TCP_CONNS connections,
 * default 4) to the lower rank's data listener and says who it is; the lower accepts.
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_CONNS_DEFAULT 4
#define TCP_CONNS_MAX 64
#define TCP_PART_MIN ((size_t)1 << 20)   /* a striped message's parts are at least this */
#define TCP_ALIGN ((size_t)64 << 10)
#define TCP_HELLO_MAGIC 0x43464954u
#define TCP_SPIN 50                      /* non-blocking rounds before epoll_wait */

typedef struct part {
    cfit_req *req;
    size_t off, len, done;
} part;

typedef struct partq {
    part *v;
    size_t head, n, cap;   /* circular */
} partq;

typedef struct conn {
    int fd, peer, idx;
    partq sq, rq;
} conn;

typedef struct tcp_t {
    cfit_comm *c;
    int nconn, ep;
    conn *conns;           /* [size * nconn]; fd -1 for peers not over tcp */
    size_t queued;         /* parts queued on every connection */
    uint64_t *sseq, *rseq; /* [size] messages posted to / from each peer (picks connections) */
} tcp_t;

static int q_push(partq *q, part p)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        part *v = malloc(cap * sizeof *v);
        if (!v)
            return CFIT_ENOMEM;
        for (size_t i = 0; i < q->n; i++)
            v[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = v;
        q->cap = cap;
        q->head = 0;
    }
    q->v[(q->head + q->n) % q->cap] = p;
    q->n++;
    return 0;
}

static void q_pop(partq *q)
{
    q->head = (q->head + 1) % q->cap;
    q->n--;
}

/* Parts a message is cut into: one per connection, each at least TCP_PART_MIN. */
static int parts_for(const tcp_t *t, size_t len)
{
    size_t k = len / TCP_PART_MIN;
    return k < 1 ? 1 : k > (size_t)t->nconn ? t->nconn : (int)k;
}

/* Both ends cut a message alike and start on connection (message number % nconn): the
 * sender counts its sends to the peer, the receiver its receives from it. */
static int tcp_post(void *self, cfit_req *req)
{
    tcp_t *t = self;
    int k = parts_for(t, req->len);
    uint64_t *seq = req->is_send ? &t->sseq[req->peer] : &t->rseq[req->peer];
    int first = (int)(*seq % (uint64_t)t->nconn);
    (*seq)++;
    size_t per = (req->len + (size_t)k - 1) / (size_t)k;
    per = (per + TCP_ALIGN - 1) / TCP_ALIGN * TCP_ALIGN;
    for (int i = 0; i < k; i++) {
        size_t off = (size_t)i * per;
        if (off >= req->len)
            break;
        part p = {req, off, req->len - off < per ? req->len - off : per, 0};
        conn *cn = &t->conns[req->peer * t->nconn + (first + i) % t->nconn];
        if (q_push(req->is_send ? &cn->sq : &cn->rq, p))
            return CFIT_ENOMEM;
        t->queued++;
    }
    return 0;
}

static void part_done(tcp_t *t, partq *q, size_t k)
{
    part *p = &q->v[q->head];
    p->done += k;
    p->req->done += k;
    if (p->done == p->len) {
        if (p->req->done == p->req->len)
            p->req->complete = 1;
        q_pop(q);
        t->queued--;
    }
}

static int lost(tcp_t *t, const conn *cn, const char *why)
{
    return cfit__comm_lost(t->c, cn->peer, "rank %d lost: %s (tcp connection %d)", cn->peer, why, cn->idx);
}

/* Move bytes on one connection until EAGAIN or nothing is queued. */
static int conn_io(tcp_t *t, conn *cn, size_t *moved)
{
    while (cn->sq.n) {
        part *p = &cn->sq.v[cn->sq.head];
        ssize_t k = send(cn->fd, p->req->buf + p->off + p->done, p->len - p->done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            *moved += (size_t)k;
            part_done(t, &cn->sq, (size_t)k);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else if (errno != EINTR) {
            return lost(t, cn, errno == EPIPE || errno == ECONNRESET ? "connection closed" : strerror(errno));
        }
    }
    while (cn->rq.n) {
        part *p = &cn->rq.v[cn->rq.head];
        ssize_t k = recv(cn->fd, p->req->buf + p->off + p->done, p->len - p->done, MSG_DONTWAIT);
        if (k > 0) {
            *moved += (size_t)k;
            part_done(t, &cn->rq, (size_t)k);
        } else if (k == 0) {
            return lost(t, cn, "connection closed");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else if (errno != EINTR) {
            return lost(t, cn, errno == ECONNRESET ? "connection reset" : strerror(errno));
        }
    }
    return 0;
}

/* Try every connection with queued parts until EAGAIN; bytes moved in *moved. */
static int try_all(tcp_t *t, size_t *moved)
{
    int total = t->c->size * t->nconn;
    for (int i = 0; i < total; i++) {
        conn *cn = &t->conns[i];
        if (cn->fd >= 0 && (cn->sq.n || cn->rq.n)) {
            int rc = conn_io(t, cn, moved);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int tcp_progress(void *self, int timeout_ms)
{
    tcp_t *t = self;
    if (!t->queued)
        return 0;
    size_t moved = 0;
    /* a few non-blocking rounds first: a reply that is microseconds away costs no sleep */
    for (int spin = 0; spin < TCP_SPIN && !moved && t->queued; spin++) {
        int rc = try_all(t, &moved);
        if (rc)
            return rc;
    }
    if (moved || !t->queued || timeout_ms <= 0)
        return 0;
    struct epoll_event ev[64];
    int n = epoll_wait(t->ep, ev, 64, timeout_ms);
    for (int i = 0; i < n; i++) {
        conn *cn = ev[i].data.ptr;
        if (cn->sq.n || cn->rq.n) {
            int rc = conn_io(t, cn, &moved);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static void tcp_close(void *self)
{
    tcp_t *t = self;
    if (!t)
        return;
    for (int i = 0; t->conns && i < t->c->size * t->nconn; i++) {
        if (t->conns[i].fd >= 0)
            close(t->conns[i].fd);
        free(t->conns[i].sq.v);
        free(t->conns[i].rq.v);
    }
    if (t->ep >= 0)
        close(t->ep);
    free(t->conns);
    free(t->sseq);
    free(t->rseq);
    free(t);
}

static uint32_t job_hash(const char *jobid)
{
    uint32_t h = 2166136261u;
    for (const char *p = jobid; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* CLUSTERFIT_TCP_CONNS (1..64, the same on every rank), else 4. */
static int conns_setting(void)
{
    const char *e = getenv("CLUSTERFIT_TCP_CONNS");
    long v;
    cfit_diag d;
    if (e && cfit__parse_envint(e, 1, TCP_CONNS_MAX, &v, &d) == 0)
        return (int)v;
    return TCP_CONNS_DEFAULT;
}

/* Connect to every lower tcp peer, then accept the higher ones. */
static int mesh(tcp_t *t, const int *use)
{
    cfit_comm *c = t->c;
    double deadline = cfit__now() + c->timeout_s;
    uint32_t jh = job_hash(c->jobid);
    int expect = 0;
    for (int p = 0; p < c->size; p++) {
        if (!use[p])
            continue;
        if (p > c->rank) {
            expect += t->nconn;
            continue;
        }
        for (int k = 0; k < t->nconn; k++) {
            char why[128];
            int fd = cfit__sock_connect(c->peers[p].addr, c->peers[p].port, deadline, why, sizeof why);
            if (fd < 0)
                return cfit__comm_fail(c, CFIT_EPEER, "cannot connect to rank %d at %s:%d: %s", p,
                                       c->peers[p].addr, c->peers[p].port, why);
            unsigned char h[16];
            put_u32(h, TCP_HELLO_MAGIC), put_u32(h + 4, jh), put_u32(h + 8, (uint32_t)c->rank);
            put_u32(h + 12, (uint32_t)(k | t->nconn << 16));
            t->conns[p * t->nconn + k].fd = fd;
            if (cfit__sock_io(fd, h, sizeof h, 1, deadline))
                return cfit__comm_fail(c, CFIT_EPEER, "rank %d lost while connecting", p);
        }
    }
    while (expect > 0) {
        double left = deadline - cfit__now();
        if (left <= 0)
            return cfit__comm_fail(c, CFIT_ETIMEOUT, "%d tcp connections from higher ranks missing after %g s",
                                   expect, c->timeout_s);
        struct pollfd pfd = {c->data_listen_fd, POLLIN, 0};
        if (poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1) <= 0)
            continue;
        int fd = accept4(c->data_listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        unsigned char h[16];
        int p, k, n;
        if (cfit__sock_io(fd, h, sizeof h, 0, cfit__now() + 5 < deadline ? cfit__now() + 5 : deadline) ||
            get_u32(h) != TCP_HELLO_MAGIC || get_u32(h + 4) != jh) {
            close(fd);
            continue;
        }
        p = (int)get_u32(h + 8), k = (int)(get_u32(h + 12) & 0xffff), n = (int)(get_u32(h + 12) >> 16);
        if (n != t->nconn) {
            close(fd);
            return cfit__comm_fail(c, CFIT_EINVALID, "rank %d uses %d tcp connections per peer, rank %d uses %d "
                                   "(set CLUSTERFIT_TCP_CONNS alike everywhere)", p, n, c->rank, t->nconn);
        }
        if (p <= c->rank || p >= c->size || !use[p] || k >= t->nconn || t->conns[p * t->nconn + k].fd >= 0) {
            close(fd);
            continue;
        }
        t->conns[p * t->nconn + k].fd = fd;
        expect--;
    }
    return 0;
}

int cfit__tcp_open(cfit_comm *c, const int *use, void **out)
{
    *out = NULL;
    int nuse = 0;
    for (int p = 0; p < c->size; p++)
        nuse += use[p] != 0;
    if (!nuse)
        return 0;
    tcp_t *t = calloc(1, sizeof *t);
    if (!t)
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    t->c = c;
    t->ep = -1;
    t->nconn = conns_setting();
    t->conns = calloc((size_t)c->size * (size_t)t->nconn, sizeof *t->conns);
    t->sseq = calloc((size_t)c->size, sizeof *t->sseq);
    t->rseq = calloc((size_t)c->size, sizeof *t->rseq);
    if (!t->conns || !t->sseq || !t->rseq) {
        free(t->conns);
        free(t->sseq);
        free(t->rseq);
        free(t);
        return cfit__comm_fail(c, CFIT_ENOMEM, "out of memory");
    }
    for (int i = 0; i < c->size * t->nconn; i++) {
        t->conns[i].fd = -1;
        t->conns[i].peer = i / t->nconn;
        t->conns[i].idx = i % t->nconn;
    }
    int rc = mesh(t, use);
    if (!rc) {
        t->ep = epoll_create1(EPOLL_CLOEXEC);
        if (t->ep < 0)
            rc = cfit__comm_fail(c, CFIT_ESYS, "epoll_create1: %s", strerror(errno));
    }
    for (int i = 0; !rc && i < c->size * t->nconn; i++) {
        conn *cn = &t->conns[i];
        if (cn->fd < 0)
            continue;
        cfit__sock_tune(cn->fd);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = cn};
        if (epoll_ctl(t->ep, EPOLL_CTL_ADD, cn->fd, &ev) != 0)
            rc = cfit__comm_fail(c, CFIT_ESYS, "epoll_ctl: %s", strerror(errno));
    }
    if (rc) {
        tcp_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

const cfit_transport_ops cfit_transport_tcp = {
    .name = "tcp",
    .post = tcp_post,
    .progress = tcp_progress,
    .window = NULL,
    .close = tcp_close,
};
