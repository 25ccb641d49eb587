/* gpu_read.h - the gpu collector's NVML entry points and one GPU's readings (internal).
 *
 * collector_gpu.c owns NVML's lifecycle; gpu_read.c reads one GPU into a gpu_reading; gpu_emit.c
 * writes a reading twice over: the native clusterfit_gpu_* families and, with --compat dcgm,
 * dcgm-exporter's DCGM_FI_* names, units and labels (docs/metrics.md has the mapping). */
#ifndef CFIT_GPU_READ_H
#define CFIT_GPU_READ_H

#include "collectors.h"
#include "nvml_abi.h"

/* The NVML entry points: required ones make the library unusable when missing; every other one
 * is looked up with dlsym and its metrics left out when an older driver lacks it. */
#define NVML_FUNCS(X)                                                                          \
    X(1, nvmlInit_v2, (void))                                                                  \
    X(1, nvmlShutdown, (void))                                                                 \
    X(1, nvmlDeviceGetCount_v2, (unsigned int *))                                              \
    X(1, nvmlDeviceGetHandleByIndex_v2, (unsigned int, nvmlDevice_t *))                        \
    X(0, nvmlSystemGetDriverVersion, (char *, unsigned int))                                   \
    X(0, nvmlDeviceGetUUID, (nvmlDevice_t, char *, unsigned int))                              \
    X(0, nvmlDeviceGetName, (nvmlDevice_t, char *, unsigned int))                              \
    X(0, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t, nvmlPciInfo_t *))                             \
    X(0, nvmlDeviceGetUtilizationRates, (nvmlDevice_t, nvmlUtilization_t *))                   \
    X(0, nvmlDeviceGetEncoderUtilization, (nvmlDevice_t, unsigned int *, unsigned int *))      \
    X(0, nvmlDeviceGetDecoderUtilization, (nvmlDevice_t, unsigned int *, unsigned int *))      \
    X(0, nvmlDeviceGetMemoryInfo, (nvmlDevice_t, nvmlMemory_t *))                              \
    X(0, nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t, nvmlMemory_v2_t *))                        \
    X(0, nvmlDeviceGetPowerUsage, (nvmlDevice_t, unsigned int *))                              \
    X(0, nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t, unsigned long long *))            \
    X(0, nvmlDeviceGetTemperature, (nvmlDevice_t, int, unsigned int *))                        \
    X(0, nvmlDeviceGetClockInfo, (nvmlDevice_t, int, unsigned int *))                          \
    X(0, nvmlDeviceGetTotalEccErrors, (nvmlDevice_t, int, int, unsigned long long *))          \
    X(0, nvmlDeviceGetPcieThroughput, (nvmlDevice_t, int, unsigned int *))                     \
    X(0, nvmlDeviceGetFieldValues, (nvmlDevice_t, int, nvmlFieldValue_t *))                    \
    X(0, nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t, unsigned long long *))         \
    X(0, nvmlDeviceGetCurrentClocksThrottleReasons, (nvmlDevice_t, unsigned long long *))      \
    X(0, nvmlDeviceGetMinorNumber, (nvmlDevice_t, unsigned int *))                             \
    X(0, nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *)) \
    X(0, nvmlEventSetCreate, (nvmlEventSet_t *))                                               \
    X(0, nvmlDeviceRegisterEvents, (nvmlDevice_t, unsigned long long, nvmlEventSet_t))         \
    X(0, nvmlEventSetWait_v2, (nvmlEventSet_t, nvmlEventData_t *, unsigned int))               \
    X(0, nvmlEventSetFree, (nvmlEventSet_t))

typedef struct nvml_api {
#define X(req, name, args) nvmlReturn_t(*name) args;
    NVML_FUNCS(X)
#undef X
} nvml_api;

/* One reading per value NVML gives, in NVML's own unit (the name says which). */
typedef enum gpu_rd {
    RD_UTIL_PCT, RD_MEMUTIL_PCT, RD_ENC_PCT, RD_DEC_PCT,
    RD_MEM_USED_BYTES, RD_MEM_TOTAL_BYTES, RD_MEM_FREE_BYTES, RD_MEM_RESERVED_BYTES,
    RD_FB_USED_BYTES,               /* used less reserved where NVML splits it (DCGM's FB_USED) */
    RD_POWER_MW, RD_ENERGY_MJ, RD_TEMP_C, RD_MEM_TEMP_C, RD_SM_MHZ, RD_MEM_MHZ,
    RD_ECC_VOL_SBE, RD_ECC_VOL_DBE, RD_ECC_AGG_SBE, RD_ECC_AGG_DBE,
    RD_PCIE_TX_KBS, RD_PCIE_RX_KBS, RD_PCIE_REPLAYS,
    RD_NVL_TX_KIB, RD_NVL_RX_KIB, RD_NVL_TOTAL_KIB,
    RD_NVL_CRC_FLIT, RD_NVL_CRC_DATA, RD_NVL_REPLAY, RD_NVL_RECOVERY,
    RD_RETIRED_SBE, RD_RETIRED_DBE, RD_RETIRED_PENDING,
    RD_REMAP_COR, RD_REMAP_UNC, RD_REMAP_PENDING, RD_REMAP_FAILURE,
    RD_COUNT
} gpu_rd;

typedef struct gpu_reading {
    double v[RD_COUNT];
    unsigned long long have;        /* bit r: v[r] was read */
    unsigned long long throttle;    /* clock event reason bits, when have_throttle */
    int have_throttle;
} gpu_reading;

static inline int gpu_has(const gpu_reading *r, gpu_rd k)
{
    return (int)((r->have >> k) & 1u);
}

/* Errors that mean the driver went away or the GPU fell off the bus. */
static inline int cfit__nvml_lifecycle_error(nvmlReturn_t r)
{
    return r == NVML_ERROR_UNINITIALIZED || r == NVML_ERROR_DRIVER_NOT_LOADED ||
           r == NVML_ERROR_LIB_RM_VERSION_MISMATCH || r == NVML_ERROR_GPU_IS_LOST ||
           r == NVML_ERROR_GPU_NOT_FOUND || r == NVML_ERROR_RESET_REQUIRED;
}

/* Read one GPU (pcie: also the 20 ms PCIe throughput samples).  NVML_SUCCESS, or the lifecycle
 * error that stopped the reading (the caller then reports the GPU down). */
nvmlReturn_t cfit__gpu_read(const nvml_api *a, nvmlDevice_t h, int pcie, gpu_reading *out);

/* Native families of one reading; l = {"gpu", IDX, "uuid", UUID, NULL}.  0 or a cfit_err. */
int cfit__gpu_emit_native(cfit_expo *e, const char *const *l, const gpu_reading *r);

/* dcgm-exporter's families of one reading; l = its label pairs (gpu, UUID, pci_bus_id, device,
 * modelName, Hostname, DCGM_FI_DRIVER_VERSION), NULL-terminated, at most 16 entries. */
int cfit__gpu_emit_dcgm(cfit_expo *e, const char *const *l, const gpu_reading *r);
/* DCGM_FI_DEV_XID_ERRORS: the last XID seen (0: none), labelled err_code as dcgm-exporter does. */
int cfit__gpu_emit_dcgm_xid(cfit_expo *e, const char *const *l, unsigned last_xid);

#endif
