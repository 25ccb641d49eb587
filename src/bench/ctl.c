/* ctl.c - the control connections after set-up: notes that tell every rank which rank
 * was lost (or stalled) first, so the whole job stops with one story (comm_internal.h). */
#define _GNU_SOURCE
#include "bench/comm_internal.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NOTE_BYTES 9

typedef struct note {
    char type;
    int a, b;
} note;

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* One note from fd without blocking: 1 read, 0 nothing (complete) yet, -1 closed or broken. */
static int note_read(int fd, note *n)
{
    unsigned char m[NOTE_BYTES];
    ssize_t k = recv(fd, m, sizeof m, MSG_DONTWAIT | MSG_PEEK);
    if (k == 0)
        return -1;
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (k < (ssize_t)sizeof m)
        return 0;   /* the rest is on its way */
    if (recv(fd, m, sizeof m, MSG_DONTWAIT) != (ssize_t)sizeof m)
        return -1;
    n->type = (char)m[0];
    n->a = (int)get_u32(m + 1);
    n->b = (int)get_u32(m + 5);
    return 1;
}

static void note_send(int fd, const note *n)
{
    unsigned char m[NOTE_BYTES] = {(unsigned char)n->type};
    put_u32(m + 1, (uint32_t)n->a);
    put_u32(m + 5, (uint32_t)n->b);
    cfit__sock_io(fd, m, sizeof m, 1, cfit__now() + 1.0);
}

static int valid(const cfit_comm *c, int r)
{
    return r >= 0 && r < c->size;
}

/* Fail the comm (or, with force, rewrite its failure) with what note n says. */
static int take_note(cfit_comm *c, const note *n, int from, int force)
{
    if (c->failed && !force)
        return c->failed;
    if (!valid(c, n->a) || !valid(c, n->b) || (n->type != 'L' && n->type != 'T' && n->type != 'F')) {
        c->failed = 0;
        cfit__comm_lost(c, from, "rank %d lost: bad control note", from);
        return c->failed;
    }
    c->failed = 0;
    if (n->type == 'L' && n->a == c->rank)
        cfit__comm_fail(c, CFIT_EPEER, "rank %d reports this rank lost", n->b);
    else if (n->type == 'L')
        cfit__comm_fail(c, CFIT_EPEER, "rank %d lost (reported by rank %d)", n->a, n->b);
    else if (n->type == 'T' && n->a == c->rank)
        cfit__comm_fail(c, CFIT_ETIMEOUT, "rank %d timed out waiting for this rank", n->b);
    else if (n->type == 'T')
        cfit__comm_fail(c, CFIT_ETIMEOUT, "rank %d timed out waiting for rank %d (no progress for %g s)", n->b,
                        n->a, c->timeout_s);
    else
        cfit__comm_fail(c, CFIT_EPEER, "rank %d failed (its own error says why)", n->a);
    c->note = n->type, c->lost = n->a, c->reporter = n->b;
    return c->failed;
}

int cfit__ctl_check(cfit_comm *c)
{
    note n;
    int rc;
    if (c->failed)
        return c->failed;
    if (c->rank != 0) {
        if (c->ctl_fd < 0)
            return 0;
        rc = note_read(c->ctl_fd, &n);
        if (rc == 1 && n.type == 'B') {   /* rank 0 finished normally */
            close(c->ctl_fd);
            c->ctl_fd = -1;
            return 0;
        }
        if (rc == 1)
            return take_note(c, &n, 0, 0);
        return rc < 0 ? cfit__comm_lost(c, 0, "rank 0 lost: its process died or closed its connection") : 0;
    }
    /* rank 0: one poll() per 256 connections, then read only the ones with something */
    for (int base = 1; c->ctl_fds && base < c->size; base += 256) {
        struct pollfd pf[256];
        int idx[256], k = 0;
        for (int r = base; r < c->size && r < base + 256; r++)
            if (c->ctl_fds[r] >= 0) {
                pf[k] = (struct pollfd){c->ctl_fds[r], POLLIN, 0};
                idx[k++] = r;
            }
        if (k == 0 || poll(pf, (nfds_t)k, 0) <= 0)
            continue;
        for (int i = 0; i < k; i++) {
            int r = idx[i];
            if (!pf[i].revents)
                continue;
            rc = note_read(c->ctl_fds[r], &n);
            if (rc == 1 && n.type == 'B') {
                close(c->ctl_fds[r]);
                c->ctl_fds[r] = -1;
            } else if (rc == 1) {
                return take_note(c, &n, r, 0);
            } else if (rc < 0) {
                return cfit__comm_lost(c, r, "rank %d lost: its process died or closed its connection", r);
            }
        }
    }
    return 0;
}

int cfit__ctl_refine(cfit_comm *c, double s)
{
    int fd = c->rank != 0 ? c->ctl_fd : valid(c, c->lost) && c->ctl_fds ? c->ctl_fds[c->lost] : -1;
    int from = c->rank != 0 ? 0 : c->lost;
    if (!c->failed || fd < 0 || from == c->rank)
        return c->failed;
    double deadline = cfit__now() + s;
    note n;
    for (;;) {
        int rc = note_read(fd, &n);
        if (rc < 0 || (rc == 1 && n.type == 'B'))
            return c->failed;   /* gone without a story: what we saw stands */
        if (rc == 1) {
            /* the peer we lost was itself reacting to an earlier loss: tell that one */
            if (!(n.type == 'F' && n.a == from))
                take_note(c, &n, from, 1);
            return c->failed;
        }
        double left = deadline - cfit__now();
        if (left <= 0)
            return c->failed;
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, (int)(left * 1000) + 1);
    }
}

void cfit__ctl_close(cfit_comm *c)
{
    note n = {'B', c->rank, c->rank};
    if (c->failed) {
        n.type = c->note ? c->note : 'F';
        n.a = valid(c, c->lost) ? c->lost : c->rank;
        n.b = valid(c, c->reporter) ? c->reporter : c->rank;
    }
    if (c->rank != 0 && c->ctl_fd >= 0)
        note_send(c->ctl_fd, &n);
    for (int r = 1; c->rank == 0 && c->ctl_fds && r < c->size; r++)
        if (c->ctl_fds[r] >= 0)
            note_send(c->ctl_fds[r], &n);
}
