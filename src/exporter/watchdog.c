/* watchdog.c - the opt-in idle-GPU watchdog: when every GPU has stayed below a utilisation
 * threshold for a given time, run a command and/or signal the processes NVML lists on them.
 * Dry run unless enforce is set; every decision is logged. */
#include "clusterfit/exporter.h"
#include "base/clock.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

#define LOG(w, ...) ((w)->c->log ? (w)->c->log((w)->c->log_ctx, __VA_ARGS__) : (void)0)
#define CLOG(c, ...) ((c)->log ? (c)->log((c)->log_ctx, __VA_ARGS__) : (void)0)

const char *cfit_watchdog_pid_check_text(cfit_watchdog_pid_check k)
{
    switch (k) {
    case CFIT_WD_PID_OK: return "ok";
    case CFIT_WD_PID_RESERVED: return "not a process id that may be signalled (0, 1 or out of range)";
    case CFIT_WD_PID_SELF: return "the exporter itself or its process group";
    case CFIT_WD_PID_DEAD: return "no such process";
    case CFIT_WD_PID_NO_DEVICE: return "does not hold the GPU's device open";
    case CFIT_WD_PID_NO_MINOR: return "the GPU's minor number is unknown";
    }
    return "?";
}

/* 1 when one of /proc/PID/fd links to exactly dev. */
static int holds_device(pid_t pid, const char *dev)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *ent;
    while (!found && (ent = readdir(d))) {
        char link[320], target[PATH_MAX];
        if (ent->d_name[0] == '.')
            continue;
        snprintf(link, sizeof link, "%s/%s", dir, ent->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        found = strcmp(target, dev) == 0;
    }
    closedir(d);
    return found;
}

cfit_watchdog_pid_check cfit_watchdog_check_pid(const cfit_watchdog_config *c, unsigned pid, int minor)
{
    if (pid <= 1 || pid > (unsigned)INT_MAX)   /* 4294967295 must never become kill(-1) */
        return CFIT_WD_PID_RESERVED;
    pid_t p = (pid_t)pid;
    if (p == getpid())
        return CFIT_WD_PID_SELF;
    pid_t group = getpgid(p);
    if (group < 0 && errno == ESRCH)
        return CFIT_WD_PID_DEAD;
    if (group == getpgrp())
        return CFIT_WD_PID_SELF;
    if (minor < 0)
        return CFIT_WD_PID_NO_MINOR;
    char dev[PATH_MAX];
    snprintf(dev, sizeof dev, "%s%d", c->device_prefix ? c->device_prefix : "/dev/nvidia", minor);
    return holds_device(p, dev) ? CFIT_WD_PID_OK : CFIT_WD_PID_NO_DEVICE;
}

size_t cfit_watchdog_signal_gpus(const cfit_watchdog_config *c, const cfit_gpu_sample *s, size_t n)
{
    const char *mode = c->enforce ? "" : "dry run: would ";
    size_t ok = 0;
    for (size_t i = 0; c->signal && i < n; i++)
        for (unsigned k = 0; k < s[i].npids && k < 64; k++) {
            unsigned pid = s[i].pids[k];
            cfit_watchdog_pid_check why = cfit_watchdog_check_pid(c, pid, s[i].minor);
            if (why != CFIT_WD_PID_OK) {
                CLOG(c, "watchdog: skipping pid %u on gpu %u: %s", pid, s[i].index, cfit_watchdog_pid_check_text(why));
                continue;
            }
            ok++;
            CLOG(c, "watchdog: %ssend signal %d to pid %u on gpu %u", mode, c->signal, pid, s[i].index);
            if (c->enforce && kill((pid_t)pid, c->signal) != 0)
                CLOG(c, "watchdog: signal to pid %u failed", pid);
        }
    return ok;
}

static void act(cfit_watchdog *w, const cfit_gpu_sample *s, size_t n)
{
    const cfit_watchdog_config *c = w->c;
    const char *mode = c->enforce ? "" : "dry run: would ";
    cfit_watchdog_signal_gpus(c, s, n);
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
        double mx, now = cfit__now();
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
