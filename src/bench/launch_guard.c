/* launch_guard.c - what the --np launcher checks on the host: room for the job's shared
 * memory and buffers before it forks, the segments it owns after it reaped the ranks, and
 * why the kernel may have killed a rank (OOM killer, full /dev/shm).
 *
 * Sources: statvfs(3) on the tmpfs behind /dev/shm (its f_bavail is what posix_fallocate can
 * still reserve); MemAvailable in /proc/meminfo (Documentation/filesystems/proc.rst: "an
 * estimate of how much memory is available for starting new applications, without
 * swapping"); cgroup v2's memory.events oom_kill counter (Documentation/admin-guide/
 * cgroup-v2.rst); the OOM killer's "Killed process PID" / "oom-kill:...,pid=PID," lines in
 * the kernel log (mm/oom_kill.c), read from /dev/kmsg where it is readable.
 */
#define _GNU_SOURCE
#include "bench/comm_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"
#define KMSG_RECORDS_MAX 100000   /* records of the kernel log read at most */

uint64_t cfit__shm_free_bytes(void)
{
    struct statvfs fs;
    if (statvfs(SHM_DIR, &fs) != 0)
        return 0;
    return (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize;
}

uint64_t cfit__mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    if (f)
        fclose(f);
    if (found)
        return (uint64_t)kib * 1024;
    struct sysinfo si;   /* kernels before 3.14 have no MemAvailable */
    if (sysinfo(&si) != 0)
        return 0;
    return ((uint64_t)si.freeram + si.bufferram) * si.mem_unit;
}

/* The ring segments and windows of np ranks on this host, then their private buffers. */
static void job_need_bytes(const cfit_launch *opt, double *shm_bytes, double *mem_bytes)
{
    int np = opt->np;
    double rings = opt->transport == CFIT_TRANSPORT_TCP && np > 1 ? 0 : (double)cfit__shm_segment_bytes(np);
    *shm_bytes = (double)np * (rings + (double)opt->shm_bytes_per_rank);
    *mem_bytes = *shm_bytes + (double)np * (double)opt->mem_bytes_per_rank;
}

int cfit__launch_fits(const cfit_launch *opt, cfit_diag *d)
{
    double shm_need, mem_need;
    job_need_bytes(opt, &shm_need, &mem_need);
    double shm_free = (double)cfit__shm_free_bytes(), mem_avail = (double)cfit__mem_available_bytes();
    if (shm_need <= shm_free && (mem_avail <= 0 || mem_need <= mem_avail))
        return 0;
    return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0,
                         "%d ranks need %.2f GB of shared memory and %.2f GB of memory in all, but %s has "
                         "%.2f GB free and the host %.2f GB available (MemAvailable); nothing was started "
                         "(use a smaller -e or --np)",
                         opt->np, shm_need / 1e9, mem_need / 1e9, SHM_DIR, shm_free / 1e9, mem_avail / 1e9);
}

void cfit__shm_remove_prefix(const char *prefix)
{
    DIR *dir = opendir(SHM_DIR);
    if (!dir)
        return;
    size_t k = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, prefix, k) == 0) {
            char name[300];
            snprintf(name, sizeof name, "/%s", e->d_name);
            shm_unlink(name);
        }
    }
    closedir(dir);
}

long cfit__cgroup_oom_kills(void)
{
    char line[512], path[700];
    long kills = -1;
    FILE *f = fopen("/proc/self/cgroup", "r");
    path[0] = '\0';
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.events", line + 3);
        }
    if (f)
        fclose(f);
    f = path[0] ? fopen(path, "r") : NULL;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "oom_kill %ld", &kills) == 1)
            break;
    if (f)
        fclose(f);
    return kills;
}

/* Does the readable part of the kernel log say the OOM killer killed pid? */
static int kmsg_oom_killed(int pid)
{
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char rec[8192], a[40], b[40];
    snprintf(a, sizeof a, "Killed process %d ", pid);
    snprintf(b, sizeof b, ",pid=%d,", pid);
    int hit = 0;
    for (int i = 0; i < KMSG_RECORDS_MAX && !hit; i++) {
        ssize_t n = read(fd, rec, sizeof rec - 1);
        if (n < 0 && errno == EPIPE)
            continue;   /* a record was overwritten while we read: go on with the next */
        if (n <= 0)
            break;
        rec[n] = '\0';
        hit = strstr(rec, a) != NULL || (strstr(rec, "oom-kill") && strstr(rec, b));
    }
    close(fd);
    return hit;
}

void cfit__sigkill_hint(int pid, long oom_kills_before, char *out, size_t n)
{
    long now = cfit__cgroup_oom_kills();
    out[0] = '\0';
    if (kmsg_oom_killed(pid))
        snprintf(out, n, "; the kernel log says the OOM killer killed it: the job needs more memory than "
                         "the host has (use a smaller -e or --np)");
    else if (oom_kills_before >= 0 && now > oom_kills_before)
        snprintf(out, n, "; the cgroup's memory.events counts %ld OOM kill%s since the start: the job needs "
                         "more memory than its cgroup allows (use a smaller -e or --np)",
                 now - oom_kills_before, now - oom_kills_before == 1 ? "" : "s");
    else if (cfit__shm_free_bytes() < ((uint64_t)1 << 20))
        snprintf(out, n, "; %s is full (under 1 MiB free)", SHM_DIR);
}
