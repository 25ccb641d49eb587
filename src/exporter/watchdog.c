/* watchdog.c - the opt-in idle-GPU watchdog: when every GPU has stayed below a utilisation
 * threshold for a given time, run a command and/or signal the processes NVML lists on them.
 * Dry run unless enforce is set; every decision is logged. */
#include "clusterfit/exporter.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXG 64

struct cfit_watchdog {
    const cfit_watchdog_config *c;
    void *gpu;
    pthread_t thread;
    _Atomic int stop;
    double idle_since;
};

cfit_watchdog_verdict cfit_watchdog_decide(const cfit_watchdog_config *c, const cfit_gpu_sample *s, size_t n,
                                           double now, double *idle_since, double *max_util)
{
    size_t seen = 0;
    double mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].up || s[i].utilization_ratio < 0)
            continue;
        seen++;
        if (s[i].utilization_ratio > mx)
            mx = s[i].utilization_ratio;
    }
    *max_util = mx;
    if (!seen) {
        *idle_since = -1;
        return CFIT_WD_NO_GPUS;
    }
    if (mx >= c->idle_below) {
        *idle_since = -1;
        return CFIT_WD_BUSY;
    }
    if (*idle_since < 0)
        *idle_since = now;
    if (now - *idle_since >= c->for_s) {
        *idle_since = now;
        return CFIT_WD_ACT;
    }
    return CFIT_WD_IDLE;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define LOG(w, ...) ((w)->c->log ? (w)->c->log((w)->c->log_ctx, __VA_ARGS__) : (void)0)

static void act(cfit_watchdog *w, const cfit_gpu_sample *s, size_t n)
{
    const cfit_watchdog_config *c = w->c;
    const char *mode = c->enforce ? "" : "dry run: would ";
    if (c->signal)
        for (size_t i = 0; i < n; i++)
            for (unsigned k = 0; k < s[i].npids; k++) {
                LOG(w, "watchdog: %ssend signal %d to pid %u on gpu %u", mode, c->signal, s[i].pids[k], s[i].index);
                if (c->enforce && kill((pid_t)s[i].pids[k], c->signal) != 0)
                    LOG(w, "watchdog: signal to pid %u failed", s[i].pids[k]);
            }
    if (c->action) {
        LOG(w, "watchdog: %srun: %s", mode, c->action);
        if (c->enforce) {
            pid_t pid = fork();
            if (pid == 0) {
                execl("/bin/sh", "sh", "-c", c->action, (char *)NULL);
                _exit(127);
            }
            int st = 0;
            if (pid < 0 || waitpid(pid, &st, 0) < 0)
                LOG(w, "watchdog: cannot run the action");
            else
                LOG(w, "watchdog: action exited with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        }
    }
}

static void *run(void *arg)
{
    cfit_watchdog *w = arg;
    const cfit_watchdog_config *c = w->c;
    cfit_gpu_sample *s = calloc(MAXG, sizeof *s);
    if (!s)
        return NULL;
    LOG(w, "watchdog: started (%s): act when every GPU is below %.2f utilisation for %.0f s",
        c->enforce ? "enforcing" : "dry run", c->idle_below, c->for_s);
    while (!w->stop) {
        size_t n = cfit_gpu_sample_all(w->gpu, s, MAXG);
        double mx, now = wall();
        cfit_watchdog_verdict v = cfit_watchdog_decide(c, s, n, now, &w->idle_since, &mx);
        switch (v) {
        case CFIT_WD_NO_GPUS: LOG(w, "watchdog: no GPUs answer: nothing to do"); break;
        case CFIT_WD_BUSY: LOG(w, "watchdog: busy (highest GPU utilisation %.2f): nothing to do", mx); break;
        case CFIT_WD_IDLE:
            LOG(w, "watchdog: idle (highest GPU utilisation %.2f) for %.0f s of %.0f s", mx, now - w->idle_since,
                c->for_s);
            break;
        case CFIT_WD_ACT:
            LOG(w, "watchdog: idle (highest GPU utilisation %.2f) for %.0f s: acting", mx, c->for_s);
            act(w, s, n);
            break;
        }
        for (double t = 0; t < c->interval_s && !w->stop; t += 0.05)
            nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    free(s);
    return NULL;
}

cfit_watchdog *cfit_watchdog_start(void *gpu_state, const cfit_watchdog_config *c)
{
    cfit_watchdog *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->c = c;
    w->gpu = gpu_state;
    w->idle_since = -1;
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

void cfit_watchdog_stop(cfit_watchdog *w)
{
    if (!w)
        return;
    w->stop = 1;
    pthread_join(w->thread, NULL);
    free(w);
}
