/* collector_gpu.c - NVIDIA GPUs through NVML loaded with dlopen("libnvidia-ml.so.1").
 *
 * Lifecycle: the library is opened on the first scrape (a missing library means "no driver":
 * clusterfit_gpu_nvml_up 0 and no GPUs, and the scrape still succeeds).  Errors that mean
 * the driver went away or was reloaded (UNINITIALIZED, DRIVER_NOT_LOADED,
 * LIB_RM_VERSION_MISMATCH) mark the GPUs down for this scrape and make the next scrape shut
 * NVML down and initialise it again (counted in clusterfit_gpu_nvml_reinitializations_total).
 * A GPU that fell off the bus (GPU_IS_LOST, GPU_NOT_FOUND, RESET_REQUIRED) is reported down,
 * and NVML is initialised again at most every cfg->gpu_lost_retry_s (60 s) to find it after a reset.
 * NOT_SUPPORTED and other per-call errors only leave that metric out.  XID events are read
 * from an NVML event set without waiting at each scrape and kept as counters per GPU and XID
 * across re-initialisations.  Reading a GPU is gpu_read.c's, writing its families gpu_emit.c's
 * (native names, and dcgm-exporter's with cfg->compat_dcgm).
 */
#include "gpu_read.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GPUS 64
#define MAX_XIDS 32

typedef struct gpu_dev {
    nvmlDevice_t h;
    int have_handle;
    char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
    char name[NVML_DEVICE_NAME_BUFFER_SIZE];
    char pci_bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    unsigned last_xid;                    /* DCGM_FI_DEV_XID_ERRORS; 0 = none seen */
    unsigned xid[MAX_XIDS];               /* XID numbers seen, with their counts */
    unsigned long long xid_count[MAX_XIDS];
    unsigned nxid;
} gpu_dev;

typedef struct gpu_state {
    const cfit_exporter_config *cfg;
    pthread_mutex_t lock;                 /* scrapes and the watchdog's samples */
    void *lib;
    int tried_load, inited, need_reinit;
    nvml_api api;
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    char hostname[256];                   /* --compat dcgm's Hostname label */
    unsigned ngpus;
    gpu_dev gpus[MAX_GPUS];
    nvmlEventSet_t events;
    unsigned long long reinits;
    int last_init_rc;                     /* logged on change */
    double retry_lost_at;                 /* cfit__now() when to look for lost GPUs again; 0 = none lost */
} gpu_state;

static void gpu_log(const gpu_state *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void gpu_log(const gpu_state *s, const char *fmt, ...)
{
    if (!s->cfg->log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->cfg->log(s->cfg->log_ctx, "collector gpu: %s", msg);
}

static int gpu_init(const cfit_exporter_config *cfg, void **state, cfit_diag *d)
{
    (void)d;
    gpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return CFIT_ENOMEM;
    s->cfg = cfg;
    /* dcgm-exporter's Hostname: $NODE_NAME when set, else the host name (internal/pkg/hostname) */
    const char *node = getenv("NODE_NAME");
    if (node && *node)
        snprintf(s->hostname, sizeof s->hostname, "%s", node);
    else if (gethostname(s->hostname, sizeof s->hostname - 1) != 0)
        s->hostname[0] = '\0';
    pthread_mutex_init(&s->lock, NULL);
    *state = s;
    return 0;
}

static int load_library(gpu_state *s)
{
    const char *path = s->cfg->nvml_library ? s->cfg->nvml_library : "libnvidia-ml.so.1";
    s->tried_load = 1;
    s->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!s->lib) {
        const char *why = dlerror();
        gpu_log(s, "cannot load %s (%s): reporting no GPUs", path, why ? why : "unknown error");
        return -1;
    }
#define X(req, name, args)                                                                     \
    *(void **)(&s->api.name) = dlsym(s->lib, #name);                                           \
    if (req && !s->api.name) {                                                                 \
        gpu_log(s, "%s lacks %s: reporting no GPUs", path, #name);                             \
        dlclose(s->lib);                                                                       \
        s->lib = NULL;                                                                         \
        return -1;                                                                             \
    }
    NVML_FUNCS(X)
#undef X
    return 0;
}

static void shutdown_nvml(gpu_state *s)
{
    if (!s->inited)
        return;
    if (s->events && s->api.nvmlEventSetFree)
        s->api.nvmlEventSetFree(s->events);
    s->events = NULL;
    s->api.nvmlShutdown();
    s->inited = 0;
}

static void read_pci_bus_id(gpu_state *s, gpu_dev *g)
{
    nvmlPciInfo_t pci;
    g->pci_bus_id[0] = '\0';
    if (g->have_handle && s->api.nvmlDeviceGetPciInfo_v3 && s->api.nvmlDeviceGetPciInfo_v3(g->h, &pci) == NVML_SUCCESS) {
        pci.busId[sizeof pci.busId - 1] = '\0';
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", pci.busId);
    }
}

/* nvmlInit and enumerate; keeps XID counts of GPUs whose UUID is unchanged. */
static void init_nvml(gpu_state *s)
{
    nvmlReturn_t r = s->api.nvmlInit_v2();
    if (r != NVML_SUCCESS) {
        if (r != s->last_init_rc)
            gpu_log(s, "nvmlInit failed (%s, NVML error %d): reporting no GPUs",
                    r == NVML_ERROR_DRIVER_NOT_LOADED ? "driver not loaded" : "no usable driver", r);
        s->last_init_rc = r;
        s->ngpus = 0;
        return;
    }
    s->last_init_rc = 0;
    s->inited = 1;
    s->driver[0] = '\0';
    if (s->api.nvmlSystemGetDriverVersion &&
        s->api.nvmlSystemGetDriverVersion(s->driver, sizeof s->driver) != NVML_SUCCESS)
        s->driver[0] = '\0';
    unsigned n = 0;
    if (s->api.nvmlDeviceGetCount_v2(&n) != NVML_SUCCESS)
        n = 0;
    if (n > MAX_GPUS)
        n = MAX_GPUS;
    if (s->api.nvmlEventSetCreate && s->api.nvmlEventSetCreate(&s->events) != NVML_SUCCESS)
        s->events = NULL;
    for (unsigned i = 0; i < n; i++) {
        gpu_dev *g = &s->gpus[i];
        char uuid[sizeof g->uuid] = "";
        g->have_handle = s->api.nvmlDeviceGetHandleByIndex_v2(i, &g->h) == NVML_SUCCESS;
        if (g->have_handle && s->api.nvmlDeviceGetUUID &&
            s->api.nvmlDeviceGetUUID(g->h, uuid, sizeof uuid) != NVML_SUCCESS)
            uuid[0] = '\0';
        uuid[sizeof uuid - 1] = '\0';
        if (uuid[0] && strcmp(uuid, g->uuid) != 0) {   /* another GPU in this slot */
            g->nxid = 0;
            g->last_xid = 0;
            memcpy(g->uuid, uuid, sizeof uuid);
        }
        if (g->have_handle && s->api.nvmlDeviceGetName &&
            s->api.nvmlDeviceGetName(g->h, g->name, sizeof g->name) != NVML_SUCCESS)
            g->name[0] = '\0';
        g->name[sizeof g->name - 1] = '\0';
        read_pci_bus_id(s, g);
        if (g->have_handle && s->events && s->api.nvmlDeviceRegisterEvents)
            (void)s->api.nvmlDeviceRegisterEvents(g->h, NVML_EVENT_TYPE_XID_CRITICAL_ERROR, s->events);
    }
    s->ngpus = n;
}

/* Make sure NVML is usable: load, initialise, or re-initialise after a lifecycle error. */
static void ensure_nvml(gpu_state *s)
{
    if (!s->tried_load && load_library(s))
        return;
    if (!s->lib)
        return;
    if (s->need_reinit) {
        gpu_log(s, "re-initialising NVML (driver restarted, or looking for a lost GPU again)");
        shutdown_nvml(s);
        s->reinits++;
        s->need_reinit = 0;
    }
    if (!s->inited)
        init_nvml(s);
}

/* The driver went away or was reloaded: initialise again at the next scrape. */
static int driver_error(nvmlReturn_t r)
{
    return r == NVML_ERROR_UNINITIALIZED || r == NVML_ERROR_DRIVER_NOT_LOADED ||
           r == NVML_ERROR_LIB_RM_VERSION_MISMATCH;
}

/* A lost GPU is reported down; NVML is initialised again at most every gpu_lost_retry_s
 * seconds to find it if it was reset, so a dead GPU does not cost a re-initialisation per scrape. */
static void note_error(gpu_state *s, nvmlReturn_t r, int *up)
{
    if (!cfit__nvml_lifecycle_error(r))
        return;
    *up = 0;
    if (driver_error(r)) {
        s->need_reinit = 1;
        return;
    }
    double now = cfit__now();
    double retry = s->cfg->gpu_lost_retry_s > 0 ? s->cfg->gpu_lost_retry_s : 60.0;
    if (s->retry_lost_at == 0)
        s->retry_lost_at = now + retry;
    else if (now >= s->retry_lost_at)
        s->need_reinit = 1, s->retry_lost_at = 0;
}

static void add_xid(gpu_dev *g, unsigned xid)
{
    g->last_xid = xid;
    for (unsigned i = 0; i < g->nxid; i++)
        if (g->xid[i] == xid) {
            g->xid_count[i]++;
            return;
        }
    if (g->nxid < MAX_XIDS) {
        g->xid[g->nxid] = xid;
        g->xid_count[g->nxid++] = 1;
    }
}

static void drain_events(gpu_state *s)
{
    if (!s->events || !s->api.nvmlEventSetWait_v2)
        return;
    for (int k = 0; k < 1024; k++) {   /* bounded: a storm cannot hold the scrape */
        nvmlEventData_t ev;
        memset(&ev, 0, sizeof ev);
        if (s->api.nvmlEventSetWait_v2(s->events, &ev, 0) != NVML_SUCCESS)
            return;
        if (!(ev.eventType & NVML_EVENT_TYPE_XID_CRITICAL_ERROR))
            continue;
        for (unsigned i = 0; i < s->ngpus; i++)
            if (s->gpus[i].have_handle && s->gpus[i].h == ev.device)
                add_xid(&s->gpus[i], (unsigned)ev.eventData);
    }
}

/* The metrics of one GPU that answered; sets *up to 0 on a lifecycle error. */
static int one_gpu(gpu_state *s, gpu_dev *g, const char *const *l, const char *const *dl, cfit_expo *e, int *up)
{
    gpu_reading r;
    nvmlReturn_t rc = cfit__gpu_read(&s->api, g->h, s->cfg->gpu_pcie, &r);
    if (rc != NVML_SUCCESS) {
        note_error(s, rc, up);
        return 0;
    }
    int err = cfit__gpu_emit_native(e, l, &r);
    if (!err && dl)
        err = cfit__gpu_emit_dcgm(e, dl, &r);
    return err;
}

/* Everything of GPU i: identity and readings (rolled back when it is lost halfway), XID counts, gpu_up. */
static int gpu_series(gpu_state *s, unsigned i, cfit_expo *e)
{
    gpu_dev *g = &s->gpus[i];
    char idx[16], dev[24];
    snprintf(idx, sizeof idx, "%u", i);
    snprintf(dev, sizeof dev, "nvidia%u", i);
    const char *l[] = {"gpu", idx, "uuid", g->uuid, NULL};
    /* dcgm-exporter's labels, in its order (internal/pkg/rendermetrics/render_metrics.go) */
    const char *dl[] = {"gpu", idx, "UUID", g->uuid, "pci_bus_id", g->pci_bus_id, "device", dev,
                        "modelName", g->name, "Hostname", s->hostname, "DCGM_FI_DRIVER_VERSION", s->driver, NULL};
    int dcgm = s->cfg->compat_dcgm, rc = 0, up = g->have_handle;
    if (up) {
        /* A GPU lost halfway reports only gpu_up 0 (and its XID counts). */
        cfit_expo_mark m = cfit_expo_mark_get(e);
        const char *il[] = {"gpu", idx, "uuid", g->uuid, "name", g->name, "driver_version", s->driver, NULL};
        rc = cfit__emit(e, "clusterfit_gpu_info", CFIT_METRIC_INFO, "GPU identity and driver.", il, 1);
        if (!rc)
            rc = one_gpu(s, g, l, dcgm ? dl : NULL, e, &up);
        if (!rc && !up)
            cfit_expo_rollback(e, m);
    } else {
        note_error(s, NVML_ERROR_GPU_IS_LOST, &up);
    }
    for (unsigned k = 0; k < g->nxid && !rc; k++) {
        char xid[16];
        snprintf(xid, sizeof xid, "%u", g->xid[k]);
        const char *xl[] = {"gpu", idx, "uuid", g->uuid, "xid", xid, NULL};
        rc = cfit__emit(e, "clusterfit_gpu_xid_errors_total", CFIT_METRIC_COUNTER,
                        "XID critical error events seen since the exporter started.", xl, (double)g->xid_count[k]);
    }
    if (!rc && dcgm && up)
        rc = cfit__gpu_emit_dcgm_xid(e, dl, g->last_xid);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_gpu_up", CFIT_METRIC_GAUGE,
                        "1 when NVML answered for the GPU, 0 when it is lost or the driver went away.", l, up);
    return rc;
}

static int gpu_collect(void *state, cfit_expo *e, cfit_diag *d)
{
    (void)d;
    gpu_state *s = state;
    pthread_mutex_lock(&s->lock);
    ensure_nvml(s);
    int rc = cfit__emit(e, "clusterfit_gpu_nvml_up", CFIT_METRIC_GAUGE,
                        "1 when NVML is loaded and initialised, 0 when there is no driver or it failed.",
                        NULL, s->inited);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_gpu_nvml_reinitializations_total", CFIT_METRIC_COUNTER,
                        "Times NVML was shut down and initialised again after a lost GPU or a driver restart.",
                        NULL, (double)s->reinits);
    if (!rc)
        rc = cfit__emit(e, "clusterfit_gpu_devices", CFIT_METRIC_GAUGE, "GPUs NVML lists.", NULL,
                        s->inited ? s->ngpus : 0);
    if (s->inited)
        drain_events(s);
    for (unsigned i = 0; s->inited && i < s->ngpus && !rc; i++)
        rc = gpu_series(s, i, e);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

size_t cfit_gpu_sample_all(void *state, cfit_gpu_sample *out, size_t max)
{
    gpu_state *s = state;
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    ensure_nvml(s);
    size_t n = 0;
    for (unsigned i = 0; s->inited && i < s->ngpus && n < max; i++, n++) {
        gpu_dev *g = &s->gpus[i];
        cfit_gpu_sample *o = &out[n];
        memset(o, 0, sizeof *o);
        o->index = i;
        o->utilization_ratio = -1;
        nvmlUtilization_t u;
        nvmlReturn_t r = NVML_ERROR_NOT_SUPPORTED;
        if (g->have_handle && s->api.nvmlDeviceGetUtilizationRates)
            r = s->api.nvmlDeviceGetUtilizationRates(g->h, &u);
        o->up = g->have_handle && !cfit__nvml_lifecycle_error(r);
        if (r == NVML_SUCCESS)
            o->utilization_ratio = u.gpu / 100.0;
        unsigned minor = 0;
        o->minor = -1;
        if (o->up && s->api.nvmlDeviceGetMinorNumber && s->api.nvmlDeviceGetMinorNumber(g->h, &minor) == NVML_SUCCESS &&
            minor < 4096)
            o->minor = (int)minor;
        nvmlProcessInfo_t p[64];
        unsigned np = 64;
        if (o->up && s->api.nvmlDeviceGetComputeRunningProcesses_v3 &&
            s->api.nvmlDeviceGetComputeRunningProcesses_v3(g->h, &np, p) == NVML_SUCCESS)
            for (unsigned k = 0; k < np && k < 64; k++)
                o->pids[o->npids++] = p[k].pid;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void gpu_fini(void *state)
{
    gpu_state *s = state;
    if (!s)
        return;
    shutdown_nvml(s);
    if (s->lib)
        dlclose(s->lib);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

const cfit_collector_ops cfit__collector_gpu = {
    .name = "gpu",
    .help = "NVIDIA GPUs through NVML (dlopen; no driver: no GPUs)",
    .default_on = 1,
    .init = gpu_init,
    .collect = gpu_collect,
    .fini = gpu_fini,
};
