/* collector_disk.c - block devices from PROCFS/diskstats: I/Os, bytes and time spent.
 *
 * Fields after "major minor name" (Documentation/admin-guide/iostats.rst): reads completed,
 * reads merged, sectors read, ms reading, writes completed, writes merged, sectors written,
 * ms writing, I/Os in progress, ms doing I/O, weighted ms.  Sectors are 512 bytes whatever
 * the device's block size.  Partitions (sda1, nvme0n1p1) and ram/loop/fd devices are
 * skipped, as node_exporter does by default. */
#include "collectors.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct disk_state {
    char path[4096];    /* PROCFS/diskstats */
} disk_state;

static int disk_init(const cfit_exporter_config *cfg, void **state, cfit_diag *d)
{
    (void)d;
    disk_state *s = calloc(1, sizeof *s);
    if (!s)
        return CFIT_ENOMEM;
    snprintf(s->path, sizeof s->path, "%s/diskstats", cfg->procfs ? cfg->procfs : "/proc");
    *state = s;
    return 0;
}

static int prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* ram0, loop3, fd0, sda1, vdb2, xvda1, hda1, nvme0n1p2, mmcblk0p1 */
static int skipped(const char *dev)
{
    size_t n = strlen(dev);
    if (prefix(dev, "ram") || prefix(dev, "zram") || prefix(dev, "loop") || prefix(dev, "fd"))
        return 1;
    if (n == 0 || !isdigit((unsigned char)dev[n - 1]))
        return 0;
    if ((prefix(dev, "sd") || prefix(dev, "vd") || prefix(dev, "hd") || prefix(dev, "xvd")))
        return 1;
    const char *p = strrchr(dev, 'p');
    return (prefix(dev, "nvme") || prefix(dev, "mmcblk")) && p && p > dev + 4 && isdigit((unsigned char)p[-1]);
}

static const struct field {
    int index;          /* 0-based after the name */
    const char *metric, *help;
    cfit_metric_type type;
    double scale;
} fields[] = {
    {0, "clusterfit_disk_reads_completed_total", "Reads completed.", CFIT_METRIC_COUNTER, 1},
    {2, "clusterfit_disk_read_bytes_total", "Bytes read (512-byte sectors).", CFIT_METRIC_COUNTER, 512},
    {3, "clusterfit_disk_read_time_seconds_total", "Time spent reading.", CFIT_METRIC_COUNTER, 1e-3},
    {4, "clusterfit_disk_writes_completed_total", "Writes completed.", CFIT_METRIC_COUNTER, 1},
    {6, "clusterfit_disk_written_bytes_total", "Bytes written (512-byte sectors).", CFIT_METRIC_COUNTER, 512},
    {7, "clusterfit_disk_write_time_seconds_total", "Time spent writing.", CFIT_METRIC_COUNTER, 1e-3},
    {8, "clusterfit_disk_io_now", "I/Os in progress.", CFIT_METRIC_GAUGE, 1},
    {9, "clusterfit_disk_io_time_seconds_total", "Time the device had I/O in progress.", CFIT_METRIC_COUNTER, 1e-3},
    {10, "clusterfit_disk_io_time_weighted_seconds_total", "I/O time weighted by the I/Os in progress.",
     CFIT_METRIC_COUNTER, 1e-3},
};

static int disk_collect(void *state, cfit_expo *e, cfit_diag *d)
{
    const disk_state *s = state;
    FILE *f = fopen(s->path, "r");
    if (!f)
        return cfit_diag_set(d, CFIT_EIO, s->path, 0, 0, "cannot open");
    char line[1024];
    int rc = 0, lineno = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        unsigned major, minor;
        char dev[64];
        int off = 0;
        if (sscanf(line, "%u %u %63s%n", &major, &minor, dev, &off) != 3) {
            rc = cfit_diag_set(d, CFIT_EPARSE, s->path, lineno, 1, "expected 'major minor device fields...'");
            break;
        }
        unsigned long long v[11];
        char *p = line + off;
        int nv = 0;
        for (; nv < 11; nv++) {
            char *end;
            v[nv] = strtoull(p, &end, 10);
            if (end == p)
                break;
            p = end;
        }
        if (nv < 11) {
            rc = cfit_diag_set(d, CFIT_EPARSE, s->path, lineno, 1, "%s: expected at least 11 numbers", dev);
            break;
        }
        if (skipped(dev))
            continue;
        const char *l[] = {"device", dev, NULL};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0] && !rc; i++)
            rc = cfit__emit(e, fields[i].metric, fields[i].type, fields[i].help, l,
                            (double)v[fields[i].index] * fields[i].scale);
    }
    fclose(f);
    return rc;
}

static void disk_fini(void *state)
{
    free(state);
}

const cfit_collector_ops cfit__collector_disk = {
    .name = "disk",
    .help = "block device I/O counters from PROCFS/diskstats",
    .default_on = 1,
    .init = disk_init,
    .collect = disk_collect,
    .fini = disk_fini,
};
