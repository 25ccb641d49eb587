/* clusterfit_jobreport.h - report training step timings to `clusterfit exporter --job-socket`
 * from C or C++ (header only, no library; docs/exporter.md "Job reports").
 *
 *     cfit_jobreport r;
 *     cfit_jobreport_open(&r, "/run/clusterfit/job.sock", "llama-70b", rank);
 *     for (;;) {                         // each training step
 *         ... t_step, t_data, t_allreduce, t_optimizer in seconds ...
 *         cfit_jobreport_step(&r, t_step, t_data, t_allreduce, t_optimizer);
 *     }
 *     cfit_jobreport_close(&r);
 *
 * Each step is one datagram "job=NAME rank=N step=S data=S allreduce=S optimizer=S\n" sent
 * without blocking: when the exporter is not running or its queue is full the report is
 * dropped and the training loop never waits.  Returns 0 on success, -1 on failure (errno).
 */
#ifndef CLUSTERFIT_JOBREPORT_H
#define CLUSTERFIT_JOBREPORT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct cfit_jobreport {
    int fd;
    struct sockaddr_un addr;
    char job[65];
    long rank;
} cfit_jobreport;

static inline int cfit_jobreport_open(cfit_jobreport *r, const char *socket_path, const char *job, long rank)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    if (strlen(socket_path) >= sizeof r->addr.sun_path || strlen(job) >= sizeof r->job) {
        errno = ENAMETOOLONG;
        return -1;
    }
    r->addr.sun_family = AF_UNIX;
    memcpy(r->addr.sun_path, socket_path, strlen(socket_path) + 1);
    memcpy(r->job, job, strlen(job) + 1);
    r->rank = rank;
    r->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return r->fd < 0 ? -1 : 0;
}

static inline int cfit_jobreport_step(cfit_jobreport *r, double step_s, double data_s, double allreduce_s,
                                      double optimizer_s)
{
    char line[256];
    int n = snprintf(line, sizeof line, "job=%s rank=%ld step=%.9g data=%.9g allreduce=%.9g optimizer=%.9g\n",
                     r->job, r->rank, step_s, data_s, allreduce_s, optimizer_s);
    if (r->fd < 0 || n <= 0 || (size_t)n >= sizeof line)
        return -1;
    return sendto(r->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&r->addr,
                  sizeof r->addr) == n ? 0 : -1;
}

static inline void cfit_jobreport_close(cfit_jobreport *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

#endif
