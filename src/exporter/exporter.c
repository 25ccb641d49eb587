/* exporter.c - the table of collectors and one scrape: run each enabled collector into a fresh
 * registry, time it, roll back what a failing one wrote, render. */
#include "collectors.h"
#include "base/grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const cfit_collector_ops *const cfit_collectors[] = {
    &cfit__collector_gpu,
    &cfit__collector_netdev,
    &cfit__collector_infiniband,
    &cfit__collector_disk,
    &cfit__collector_job,
    NULL,
};

#define NCOLL (sizeof cfit_collectors / sizeof cfit_collectors[0] - 1)

const cfit_collector_ops *cfit_collector_find(const char *name)
{
    for (size_t i = 0; cfit_collectors[i]; i++)
        if (strcmp(cfit_collectors[i]->name, name) == 0)
            return cfit_collectors[i];
    return NULL;
}

struct cfit_exporter {
    const cfit_exporter_config *cfg;
    pthread_mutex_t lock;        /* one scrape at a time: collectors keep state */
    int enabled[NCOLL];
    int init_rc[NCOLL];          /* 0, or why init failed (scraped as success 0) */
    char init_msg[NCOLL][sizeof(((cfit_diag *)0)->msg)];   /* and the message */
    int failing[NCOLL];          /* last scrape failed: log only on change */
    void *state[NCOLL];
};

cfit_exporter *cfit_exporter_new(const cfit_exporter_config *cfg, const int *enable)
{
    cfit_exporter *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->cfg = cfg;
    pthread_mutex_init(&x->lock, NULL);
    for (size_t i = 0; i < NCOLL; i++) {
        const cfit_collector_ops *ops = cfit_collectors[i];
        x->enabled[i] = enable ? enable[i] != 0 : ops->default_on;
        if (!x->enabled[i])
            continue;
        cfit_diag d;
        cfit_diag_clear(&d);
        x->init_rc[i] = ops->init(cfg, &x->state[i], &d);
        if (x->init_rc[i]) {
            x->state[i] = NULL;
            snprintf(x->init_msg[i], sizeof x->init_msg[i], "%s", d.msg[0] ? d.msg : cfit_strerror(x->init_rc[i]));
            if (cfg->log)
                cfg->log(cfg->log_ctx, "collector %s: %s", ops->name, d.msg[0] ? d.msg : cfit_strerror(x->init_rc[i]));
        }
    }
    return x;
}

void cfit_exporter_free(cfit_exporter *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < NCOLL; i++)
        if (x->state[i])
            cfit_collectors[i]->fini(x->state[i]);
    pthread_mutex_destroy(&x->lock);
    free(x);
}

void *cfit_exporter_collector_state(cfit_exporter *x, const char *name)
{
    for (size_t i = 0; i < NCOLL; i++)
        if (x->enabled[i] && strcmp(cfit_collectors[i]->name, name) == 0)
            return x->state[i];
    return NULL;
}

const char *cfit_exporter_collector_error(const cfit_exporter *x, const char *name)
{
    for (size_t i = 0; i < NCOLL; i++)
        if (x->enabled[i] && x->init_rc[i] && strcmp(cfit_collectors[i]->name, name) == 0)
            return x->init_msg[i];
    return NULL;
}

static const char H_DURATION[] = "clusterfit_scrape_collector_duration_seconds";
static const char H_SUCCESS[] = "clusterfit_scrape_collector_success";

static int scrape_locked(cfit_exporter *x, cfit_expo *e)
{
    int rc = cfit_expo_family(e, H_DURATION, CFIT_METRIC_GAUGE, "Time a collector took in this scrape.");
    if (!rc)
        rc = cfit_expo_family(e, H_SUCCESS, CFIT_METRIC_GAUGE,
                              "1 when the collector succeeded in this scrape, 0 when it failed.");
    if (!rc) {
        const char *bl[] = {"version", CFIT_VERSION, NULL};
        rc = cfit__emit(e, "clusterfit_exporter_build_info", CFIT_METRIC_INFO,
                        "The clusterfit exporter's version.", bl, 1);
    }
    for (size_t i = 0; i < NCOLL && !rc; i++) {
        if (!x->enabled[i])
            continue;
        const cfit_collector_ops *ops = cfit_collectors[i];
        cfit_expo_mark m = cfit_expo_mark_get(e);
        cfit_diag d;
        cfit_diag_clear(&d);
        double t0 = cfit__now();
        int crc = x->init_rc[i] ? x->init_rc[i] : ops->collect(x->state[i], e, &d);
        double dt = cfit__now() - t0;
        if (crc == CFIT_ENOMEM)
            return crc;
        if (crc) {
            cfit_expo_rollback(e, m);
            if (!x->failing[i] && !x->init_rc[i] && x->cfg->log) {
                char where[300] = "";
                if (d.file[0] && d.line > 0)
                    snprintf(where, sizeof where, "%s:%d: ", d.file, d.line);
                else if (d.file[0])
                    snprintf(where, sizeof where, "%s: ", d.file);
                x->cfg->log(x->cfg->log_ctx, "collector %s failed: %s%s (logged once until it recovers)", ops->name,
                            where, d.msg[0] ? d.msg : cfit_strerror(crc));
            }
        } else if (x->failing[i] && x->cfg->log) {
            x->cfg->log(x->cfg->log_ctx, "collector %s recovered", ops->name);
        }
        x->failing[i] = crc != 0;
        const char *l[] = {"collector", ops->name, NULL};
        rc = cfit_expo_sample(e, H_DURATION, l, dt);
        if (!rc)
            rc = cfit_expo_sample(e, H_SUCCESS, l, crc ? 0 : 1);
    }
    return rc;
}

int cfit_exporter_scrape(cfit_exporter *x, cfit_expo_format f, char **out, size_t *len)
{
    cfit_expo *e = cfit_expo_new();
    if (!e)
        return CFIT_ENOMEM;
    pthread_mutex_lock(&x->lock);
    int rc = scrape_locked(x, e);
    pthread_mutex_unlock(&x->lock);
    if (!rc)
        rc = cfit_expo_render(e, f, out, len);
    cfit_expo_free(e);
    return rc;
}

/* ---- helpers shared by the collectors ---------------------------------------------------- */

/* open/read/close rather than stdio: a sysfs or procfs attribute is one short read, and fopen's
 * buffer set-up costs an fstat and a malloc per file (a fifth of a scrape's CPU, perf). */
int cfit__read_text(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < n - 1) {
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' ' || buf[got - 1] == '\t'))
        buf[--got] = '\0';
    return 0;
}

int cfit__read_u64(const char *path, uint64_t *out)
{
    char buf[64];
    if (cfit__read_text(path, buf, sizeof buf) || buf[0] < '0' || buf[0] > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int cfit__emit(cfit_expo *e, const char *name, cfit_metric_type type, const char *help,
               const char *const *labels, double value)
{
    int rc = cfit_expo_family(e, name, type, help);
    return rc ? rc : cfit_expo_sample(e, name, labels, value);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cfit__list_dir(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        if (ent->d_name[0] == '.')
            continue;
        if (cfit__grow(names, &cap, *n + 1, sizeof **names))
            break;
        size_t len = strlen(ent->d_name) + 1;
        char *s = malloc(len);
        if (!s)
            break;
        memcpy(s, ent->d_name, len);
        (*names)[(*n)++] = s;
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_names);
    return 0;
}

void cfit__free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
