/* fakenvml.c - a stand-in libnvidia-ml for the tests: the NVML subset the gpu collector
 * loads (src/exporter/nvml_abi.h), answering from the fixture file named by $FAKENVML_FIXTURE.
 *
 * Fixture lines (# comments):
 *   driver VERSION
 *   init_error N              nvmlInit_v2 returns N (9 = driver not loaded)
 *   gpu KEY=VALUE ...         one GPU, in index order; keys: uuid name (_ reads as a space)
 *       util memutil mem_total mem_used power_mw energy_mj temp sm_mhz mem_mhz ecc_corrected
 *       ecc_uncorrected pcie_tx_kbs pcie_rx_kbs nvlink_links nvlink_tx_kib nvlink_rx_kib
 *       throttle (hex or decimal) xids (comma list, delivered as events) pids (comma list)
 *       minor (nvmlDeviceGetMinorNumber; the GPU's index when left out, as on a plain install)
 *       pci (bus id) ecc_agg_corrected ecc_agg_uncorrected enc dec (percent) mem_reserved (bytes, part of
 *       mem_used as v1 counts it) and the field values mem_temp pcie_replay nvl_crc_flit nvl_crc_data
 *       nvl_replay nvl_recovery retired_sbe retired_dbe retired_pending remap_cor remap_unc
 *       remap_pending remap_failure
 *   Built with -DFAKENVML_OLD (fakenvml_old) it lacks nvmlDeviceGetMemoryInfo_v2, the encoder and
 *   decoder utilisation and nvmlDeviceGetPciInfo_v3, as an older driver does.
 *       lost=1 (every call for it returns GPU_IS_LOST)
 *   A value "ns" makes that call return NOT_SUPPORTED; a key left out does the same.
 * The fixture is read by nvmlInit_v2; its XIDs are delivered once per fixture (not again after
 * an nvmlShutdown + nvmlInit_v2 of the same file).  When the file changes afterwards (another inode,
 * size or mtime), every call returns UNINITIALIZED until nvmlShutdown + nvmlInit_v2: that is
 * how the tests play a driver restart.
 */
#include "exporter/nvml_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define API __attribute__((visibility("default")))
#define MAXG 16
#define NS (-1LL)   /* not supported */

enum {
    K_UTIL, K_MEMUTIL, K_MEM_TOTAL, K_MEM_USED, K_POWER, K_ENERGY, K_TEMP, K_SM, K_MEMCLK, K_ECC_C, K_ECC_U,
    K_PCIE_TX, K_PCIE_RX, K_NVL, K_NVL_TX, K_NVL_RX, K_THROTTLE, K_MINOR, K_ECC_AGG_C, K_ECC_AGG_U, K_ENC, K_DEC,
    K_MEM_RESERVED, K_MEM_TEMP, K_PCIE_REPLAY, K_NVL_CRC_FLIT, K_NVL_CRC_DATA, K_NVL_REPLAY, K_NVL_RECOVERY,
    K_RETIRED_SBE, K_RETIRED_DBE, K_RETIRED_PENDING, K_REMAP_COR, K_REMAP_UNC, K_REMAP_PENDING, K_REMAP_FAILURE, NKEYS
};
static const char *const keynames[NKEYS] = {
    "util", "memutil", "mem_total", "mem_used", "power_mw", "energy_mj", "temp", "sm_mhz", "mem_mhz",
    "ecc_corrected", "ecc_uncorrected", "pcie_tx_kbs", "pcie_rx_kbs", "nvlink_links", "nvlink_tx_kib",
    "nvlink_rx_kib", "throttle", "minor", "ecc_agg_corrected", "ecc_agg_uncorrected", "enc", "dec", "mem_reserved",
    "mem_temp", "pcie_replay", "nvl_crc_flit", "nvl_crc_data", "nvl_replay", "nvl_recovery", "retired_sbe",
    "retired_dbe", "retired_pending", "remap_cor", "remap_unc", "remap_pending", "remap_failure",
};
/* field id -> key, for nvmlDeviceGetFieldValues */
static const struct { unsigned id; int key; } field_keys[] = {
    {NVML_FI_DEV_MEMORY_TEMP, K_MEM_TEMP},
    {NVML_FI_DEV_PCIE_REPLAY_COUNTER, K_PCIE_REPLAY},
    {NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, K_NVL_CRC_FLIT},
    {NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, K_NVL_CRC_DATA},
    {NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, K_NVL_REPLAY},
    {NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, K_NVL_RECOVERY},
    {NVML_FI_DEV_RETIRED_SBE, K_RETIRED_SBE},
    {NVML_FI_DEV_RETIRED_DBE, K_RETIRED_DBE},
    {NVML_FI_DEV_RETIRED_PENDING, K_RETIRED_PENDING},
    {NVML_FI_DEV_REMAPPED_COR, K_REMAP_COR},
    {NVML_FI_DEV_REMAPPED_UNC, K_REMAP_UNC},
    {NVML_FI_DEV_REMAPPED_PENDING, K_REMAP_PENDING},
    {NVML_FI_DEV_REMAPPED_FAILURE, K_REMAP_FAILURE},
};

typedef struct fgpu {
    char uuid[96], name[96], pci[32];
    long long v[NKEYS];
    int lost;
    unsigned xids[16], nxids;
    unsigned pids[16], npids;
} fgpu;

/* A device handle is a pointer into this array (opaque to the caller). */
static fgpu gpus[MAXG];
static unsigned ngpus;
static char driver[80];
static int inited, init_error;
static struct stat loaded;
static struct { int registered[MAXG]; unsigned next[MAXG]; } evset;

static void list(const char *s, unsigned *out, unsigned *n)
{
    *n = 0;
    while (*s && *n < 16) {
        out[(*n)++] = (unsigned)strtoul(s, (char **)&s, 0);
        if (*s == ',')
            s++;
        else
            break;
    }
}

static void load(void)
{
    const char *path = getenv("FAKENVML_FIXTURE");
    FILE *f = path ? fopen(path, "r") : NULL;
    ngpus = 0;
    init_error = 0;
    snprintf(driver, sizeof driver, "%s", "");
    if (!f) {
        init_error = NVML_ERROR_DRIVER_NOT_LOADED;
        return;
    }
    /* XIDs are events: each fixture's are delivered once, not again after a re-initialisation */
    struct stat sb;
    fstat(fileno(f), &sb);
    if (sb.st_ino != loaded.st_ino || sb.st_mtim.tv_sec != loaded.st_mtim.tv_sec ||
        sb.st_mtim.tv_nsec != loaded.st_mtim.tv_nsec || sb.st_size != loaded.st_size)
        memset(&evset, 0, sizeof evset);
    loaded = sb;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        char *save, *tok = strtok_r(line, " \t\n", &save);
        if (!tok || tok[0] == '#')
            continue;
        if (strcmp(tok, "driver") == 0) {
            snprintf(driver, sizeof driver, "%s", strtok_r(NULL, " \t\n", &save));
        } else if (strcmp(tok, "init_error") == 0) {
            init_error = atoi(strtok_r(NULL, " \t\n", &save));
        } else if (strcmp(tok, "gpu") == 0 && ngpus < MAXG) {
            fgpu *g = &gpus[ngpus++];
            memset(g, 0, sizeof *g);
            for (int k = 0; k < NKEYS; k++)
                g->v[k] = NS;
            g->v[K_MINOR] = (long long)(ngpus - 1);
            while ((tok = strtok_r(NULL, " \t\n", &save))) {
                char *eq = strchr(tok, '=');
                if (!eq)
                    continue;
                *eq++ = '\0';
                if (strcmp(tok, "uuid") == 0)
                    snprintf(g->uuid, sizeof g->uuid, "%s", eq);
                else if (strcmp(tok, "name") == 0) {
                    snprintf(g->name, sizeof g->name, "%s", eq);
                    for (char *p = g->name; *p; p++)
                        if (*p == '_')
                            *p = ' ';
                } else if (strcmp(tok, "pci") == 0)
                    snprintf(g->pci, sizeof g->pci, "%s", eq);
                else if (strcmp(tok, "lost") == 0)
                    g->lost = atoi(eq);
                else if (strcmp(tok, "xids") == 0)
                    list(eq, g->xids, &g->nxids);
                else if (strcmp(tok, "pids") == 0)
                    list(eq, g->pids, &g->npids);
                else
                    for (int k = 0; k < NKEYS; k++)
                        if (strcmp(tok, keynames[k]) == 0)
                            g->v[k] = strcmp(eq, "ns") == 0 ? NS : strtoll(eq, NULL, 0);
            }
        }
    }
    fclose(f);
}

/* UNINITIALIZED before init or after the fixture changed (a "driver restart"). */
static int stale(void)
{
    if (!inited)
        return 1;
    const char *path = getenv("FAKENVML_FIXTURE");
    struct stat sb;
    if (!path || stat(path, &sb) != 0)
        return 1;
    return sb.st_ino != loaded.st_ino || sb.st_size != loaded.st_size ||
           sb.st_mtim.tv_sec != loaded.st_mtim.tv_sec || sb.st_mtim.tv_nsec != loaded.st_mtim.tv_nsec;
}

static int dev(nvmlDevice_t d, fgpu **g)
{
    if (stale())
        return NVML_ERROR_UNINITIALIZED;
    fgpu *p = (fgpu *)(void *)d;
    if (p < gpus || p >= gpus + ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (p->lost)
        return NVML_ERROR_GPU_IS_LOST;
    *g = p;
    return NVML_SUCCESS;
}

#define VALUE(d, key, out)                                                                     \
    do {                                                                                       \
        fgpu *g_;                                                                              \
        int r_ = dev(d, &g_);                                                                  \
        if (r_)                                                                                \
            return r_;                                                                         \
        if (g_->v[key] == NS)                                                                  \
            return NVML_ERROR_NOT_SUPPORTED;                                                   \
        *(out) = g_->v[key];                                                                   \
    } while (0)

/* Prototypes keep -Wmissing-prototypes quiet: these are the library's exported API. */
#define PROTO(ret, name, args) API ret name args; API ret name args
PROTO(nvmlReturn_t, nvmlInit_v2, (void))
{
    load();
    if (init_error)
        return init_error;
    inited = 1;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlShutdown, (void))
{
    if (!inited)
        return NVML_ERROR_UNINITIALIZED;
    inited = 0;
    return NVML_SUCCESS;
}

PROTO(const char *, nvmlErrorString, (nvmlReturn_t r))
{
    return r == 0 ? "Success" : "fake error";
}

PROTO(nvmlReturn_t, nvmlSystemGetDriverVersion, (char *buf, unsigned int n))
{
    if (stale())
        return NVML_ERROR_UNINITIALIZED;
    snprintf(buf, n, "%s", driver);
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned int *n))
{
    if (stale())
        return NVML_ERROR_UNINITIALIZED;
    *n = ngpus;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, (unsigned int i, nvmlDevice_t *d))
{
    if (stale())
        return NVML_ERROR_UNINITIALIZED;
    if (i >= ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    *d = (nvmlDevice_t)(void *)&gpus[i];
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetUUID, (nvmlDevice_t d, char *buf, unsigned int n))
{
    fgpu *g;
    int r = dev(d, &g);
    if (!r)
        snprintf(buf, n, "%s", g->uuid);
    return r;
}

PROTO(nvmlReturn_t, nvmlDeviceGetName, (nvmlDevice_t d, char *buf, unsigned int n))
{
    fgpu *g;
    int r = dev(d, &g);
    if (!r)
        snprintf(buf, n, "%s", g->name);
    return r;
}

PROTO(nvmlReturn_t, nvmlDeviceGetUtilizationRates, (nvmlDevice_t d, nvmlUtilization_t *u))
{
    long long a, b;
    VALUE(d, K_UTIL, &a);
    VALUE(d, K_MEMUTIL, &b);
    u->gpu = (unsigned)a;
    u->memory = (unsigned)b;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_t *m))
{
    long long t, u;
    VALUE(d, K_MEM_TOTAL, &t);
    VALUE(d, K_MEM_USED, &u);
    m->total = (unsigned long long)t;
    m->used = (unsigned long long)u;
    m->free = m->total - m->used;
    return NVML_SUCCESS;
}

#ifndef FAKENVML_OLD   /* entry points an older driver lacks: the collector must do without them */
PROTO(nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t d, nvmlMemory_v2_t *m))
{
    long long t, u, r;
    if (m->version != NVML_MEMORY_V2_VERSION)
        return NVML_ERROR_INVALID_ARGUMENT;   /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH in the driver */
    VALUE(d, K_MEM_TOTAL, &t);
    VALUE(d, K_MEM_USED, &u);
    VALUE(d, K_MEM_RESERVED, &r);
    m->total = (unsigned long long)t;
    m->reserved = (unsigned long long)r;
    m->used = (unsigned long long)(u - r);   /* v1's used counts the reserved memory, v2's does not */
    m->free = m->total - (unsigned long long)u;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetEncoderUtilization, (nvmlDevice_t d, unsigned int *pct, unsigned int *period_us))
{
    long long v;
    VALUE(d, K_ENC, &v);
    *pct = (unsigned)v;
    *period_us = 167000;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetDecoderUtilization, (nvmlDevice_t d, unsigned int *pct, unsigned int *period_us))
{
    long long v;
    VALUE(d, K_DEC, &v);
    *pct = (unsigned)v;
    *period_us = 167000;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t d, nvmlPciInfo_t *p))
{
    fgpu *g;
    int r = dev(d, &g);
    if (r)
        return r;
    if (!g->pci[0])
        return NVML_ERROR_NOT_SUPPORTED;
    memset(p, 0, sizeof *p);
    snprintf(p->busId, sizeof p->busId, "%s", g->pci);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%s", g->pci + (strlen(g->pci) > 12 ? 4 : 0));
    return NVML_SUCCESS;
}
#endif

PROTO(nvmlReturn_t, nvmlDeviceGetPowerUsage, (nvmlDevice_t d, unsigned int *mw))
{
    long long v;
    VALUE(d, K_POWER, &v);
    *mw = (unsigned)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t d, unsigned long long *mj))
{
    long long v;
    VALUE(d, K_ENERGY, &v);
    *mj = (unsigned long long)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetTemperature, (nvmlDevice_t d, int sensor, unsigned int *c))
{
    long long v;
    if (sensor != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    VALUE(d, K_TEMP, &v);
    *c = (unsigned)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetClockInfo, (nvmlDevice_t d, int type, unsigned int *mhz))
{
    long long v;
    if (type == NVML_CLOCK_SM)
        VALUE(d, K_SM, &v);
    else if (type == NVML_CLOCK_MEM)
        VALUE(d, K_MEMCLK, &v);
    else
        return NVML_ERROR_NOT_SUPPORTED;
    *mhz = (unsigned)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetTotalEccErrors, (nvmlDevice_t d, int type, int counter, unsigned long long *n))
{
    long long v;
    int c = type == NVML_MEMORY_ERROR_TYPE_CORRECTED;
    if (counter == NVML_VOLATILE_ECC)
        VALUE(d, c ? K_ECC_C : K_ECC_U, &v);
    else if (counter == NVML_AGGREGATE_ECC)
        VALUE(d, c ? K_ECC_AGG_C : K_ECC_AGG_U, &v);
    else
        return NVML_ERROR_INVALID_ARGUMENT;
    *n = (unsigned long long)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetPcieThroughput, (nvmlDevice_t d, int counter, unsigned int *kbs))
{
    long long v;
    VALUE(d, counter == NVML_PCIE_UTIL_TX_BYTES ? K_PCIE_TX : K_PCIE_RX, &v);
    *kbs = (unsigned)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetFieldValues, (nvmlDevice_t d, int n, nvmlFieldValue_t *f))
{
    fgpu *g;
    int r = dev(d, &g);
    if (r)
        return r;
    for (int i = 0; i < n; i++) {
        long long v = NS;
        if (f[i].fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT)
            v = g->v[K_NVL];
        else if (f[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX && g->v[K_NVL_TX] != NS)
            v = g->v[K_NVL_TX] / (g->v[K_NVL] > 0 ? g->v[K_NVL] : 1);   /* split over the links */
        else if (f[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX && g->v[K_NVL_RX] != NS)
            v = g->v[K_NVL_RX] / (g->v[K_NVL] > 0 ? g->v[K_NVL] : 1);
        for (size_t k = 0; k < sizeof field_keys / sizeof field_keys[0]; k++)
            if (f[i].fieldId == field_keys[k].id)
                v = g->v[field_keys[k].key];
        f[i].nvmlReturn = v == NS ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
        f[i].valueType = f[i].fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT ? NVML_VALUE_TYPE_UNSIGNED_INT
                                                                       : NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
        if (f[i].fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT)
            f[i].value.uiVal = (unsigned)(v == NS ? 0 : v);
        else
            f[i].value.ullVal = (unsigned long long)(v == NS ? 0 : v);
    }
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t d, unsigned long long *bits))
{
    long long v;
    VALUE(d, K_THROTTLE, &v);
    *bits = (unsigned long long)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetMinorNumber, (nvmlDevice_t d, unsigned int *minor))
{
    long long v;
    VALUE(d, K_MINOR, &v);
    *minor = (unsigned)v;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p))
{
    fgpu *g;
    int r = dev(d, &g);
    if (r)
        return r;
    if (*n < g->npids) {
        *n = g->npids;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < g->npids; i++)
        p[i] = (nvmlProcessInfo_t){.pid = g->pids[i], .usedGpuMemory = 1ULL << 30};
    *n = g->npids;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlEventSetCreate, (nvmlEventSet_t *set))
{
    if (stale())
        return NVML_ERROR_UNINITIALIZED;
    memset(evset.registered, 0, sizeof evset.registered);
    *set = (nvmlEventSet_t)(void *)&evset;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlDeviceRegisterEvents, (nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set))
{
    fgpu *g;
    int r = dev(d, &g);
    if (r)
        return r;
    if (set != (nvmlEventSet_t)(void *)&evset || !(types & NVML_EVENT_TYPE_XID_CRITICAL_ERROR))
        return NVML_ERROR_INVALID_ARGUMENT;
    evset.registered[g - gpus] = 1;
    return NVML_SUCCESS;
}

PROTO(nvmlReturn_t, nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t *ev, unsigned int ms))
{
    (void)ms;
    if (stale())
        return NVML_ERROR_UNINITIALIZED;
    if (set != (nvmlEventSet_t)(void *)&evset)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < ngpus; i++)
        if (evset.registered[i] && evset.next[i] < gpus[i].nxids) {
            ev->device = (nvmlDevice_t)(void *)&gpus[i];
            ev->eventType = NVML_EVENT_TYPE_XID_CRITICAL_ERROR;
            ev->eventData = gpus[i].xids[evset.next[i]++];
            ev->gpuInstanceId = ev->computeInstanceId = 0xFFFFFFFFu;
            return NVML_SUCCESS;
        }
    return NVML_ERROR_TIMEOUT;
}

PROTO(nvmlReturn_t, nvmlEventSetFree, (nvmlEventSet_t set))
{
    (void)set;
    return NVML_SUCCESS;
}
