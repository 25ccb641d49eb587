/* gpu_read.c - one GPU's NVML readings (gpu_read.h): each entry point the driver lacks, or that
 * answers NOT_SUPPORTED, only leaves its readings out; a lifecycle error stops the reading. */
#include "gpu_read.h"

#include <string.h>

static void put(gpu_reading *r, gpu_rd k, double v)
{
    r->v[k] = v;
    r->have |= 1ULL << k;
}

/* Utilisation and memory: their errors decide whether the GPU is up. */
static nvmlReturn_t read_util_memory(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    nvmlReturn_t rc;
    nvmlUtilization_t u;
    if (a->nvmlDeviceGetUtilizationRates) {
        if ((rc = a->nvmlDeviceGetUtilizationRates(h, &u)) == NVML_SUCCESS) {
            put(r, RD_UTIL_PCT, u.gpu);
            put(r, RD_MEMUTIL_PCT, u.memory);
        } else if (cfit__nvml_lifecycle_error(rc))
            return rc;
    }
    nvmlMemory_t m;
    if (a->nvmlDeviceGetMemoryInfo) {
        if ((rc = a->nvmlDeviceGetMemoryInfo(h, &m)) == NVML_SUCCESS) {
            put(r, RD_MEM_USED_BYTES, (double)m.used);
            put(r, RD_MEM_TOTAL_BYTES, (double)m.total);
            put(r, RD_MEM_FREE_BYTES, (double)m.free);
            put(r, RD_FB_USED_BYTES, (double)m.used);
        } else if (cfit__nvml_lifecycle_error(rc))
            return rc;
    }
    /* v2 splits the driver's reserved memory out of "used" (R510 and later), as DCGM and nvidia-smi count */
    nvmlMemory_v2_t m2 = {.version = NVML_MEMORY_V2_VERSION};
    if (a->nvmlDeviceGetMemoryInfo_v2 && a->nvmlDeviceGetMemoryInfo_v2(h, &m2) == NVML_SUCCESS) {
        put(r, RD_FB_USED_BYTES, (double)m2.used);
        put(r, RD_MEM_FREE_BYTES, (double)m2.free);
        put(r, RD_MEM_RESERVED_BYTES, (double)m2.reserved);
    }
    return NVML_SUCCESS;
}

static void read_engines(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    unsigned v, period_us;
    if (a->nvmlDeviceGetEncoderUtilization && a->nvmlDeviceGetEncoderUtilization(h, &v, &period_us) == NVML_SUCCESS)
        put(r, RD_ENC_PCT, v);
    if (a->nvmlDeviceGetDecoderUtilization && a->nvmlDeviceGetDecoderUtilization(h, &v, &period_us) == NVML_SUCCESS)
        put(r, RD_DEC_PCT, v);
}

static void read_power_clocks(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    unsigned v;
    unsigned long long ull;
    if (a->nvmlDeviceGetPowerUsage && a->nvmlDeviceGetPowerUsage(h, &v) == NVML_SUCCESS)
        put(r, RD_POWER_MW, v);
    if (a->nvmlDeviceGetTotalEnergyConsumption && a->nvmlDeviceGetTotalEnergyConsumption(h, &ull) == NVML_SUCCESS)
        put(r, RD_ENERGY_MJ, (double)ull);
    if (a->nvmlDeviceGetTemperature && a->nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        put(r, RD_TEMP_C, v);
    if (a->nvmlDeviceGetClockInfo && a->nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        put(r, RD_SM_MHZ, v);
    if (a->nvmlDeviceGetClockInfo && a->nvmlDeviceGetClockInfo(h, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        put(r, RD_MEM_MHZ, v);
}

/* nvmlDeviceGetTotalEccErrors: corrected = single-bit, uncorrected = double-bit (NVML's
 * nvmlMemoryErrorType_t), volatile = since the driver loaded, aggregate = the GPU's life. */
static void read_ecc(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    static const struct { int type, counter; gpu_rd rd; } ecc[] = {
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, RD_ECC_VOL_SBE},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, RD_ECC_VOL_DBE},
        {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, RD_ECC_AGG_SBE},
        {NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, RD_ECC_AGG_DBE},
    };
    unsigned long long n;
    for (size_t k = 0; a->nvmlDeviceGetTotalEccErrors && k < sizeof ecc / sizeof ecc[0]; k++)
        if (a->nvmlDeviceGetTotalEccErrors(h, ecc[k].type, ecc[k].counter, &n) == NVML_SUCCESS)
            put(r, ecc[k].rd, (double)n);
}

static void read_pcie(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    unsigned v;
    if (!a->nvmlDeviceGetPcieThroughput)
        return;
    if (a->nvmlDeviceGetPcieThroughput(h, NVML_PCIE_UTIL_TX_BYTES, &v) == NVML_SUCCESS)
        put(r, RD_PCIE_TX_KBS, v);
    if (a->nvmlDeviceGetPcieThroughput(h, NVML_PCIE_UTIL_RX_BYTES, &v) == NVML_SUCCESS)
        put(r, RD_PCIE_RX_KBS, v);
}

static double field_value(const nvmlFieldValue_t *f)
{
    switch (f->valueType) {
    case NVML_VALUE_TYPE_DOUBLE: return f->value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return f->value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return (double)f->value.ulVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return (double)f->value.sllVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: break;
    }
    return (double)f->value.ullVal;
}

/* The error counters and row-remapper state NVML gives only as field values, in one call. */
static const struct { unsigned id; gpu_rd rd; } fields[] = {
    {NVML_FI_DEV_MEMORY_TEMP, RD_MEM_TEMP_C},
    {NVML_FI_DEV_PCIE_REPLAY_COUNTER, RD_PCIE_REPLAYS},
    {NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, RD_NVL_CRC_FLIT},
    {NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, RD_NVL_CRC_DATA},
    {NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, RD_NVL_REPLAY},
    {NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, RD_NVL_RECOVERY},
    {NVML_FI_DEV_RETIRED_SBE, RD_RETIRED_SBE},
    {NVML_FI_DEV_RETIRED_DBE, RD_RETIRED_DBE},
    {NVML_FI_DEV_RETIRED_PENDING, RD_RETIRED_PENDING},
    {NVML_FI_DEV_REMAPPED_COR, RD_REMAP_COR},
    {NVML_FI_DEV_REMAPPED_UNC, RD_REMAP_UNC},
    {NVML_FI_DEV_REMAPPED_PENDING, RD_REMAP_PENDING},
    {NVML_FI_DEV_REMAPPED_FAILURE, RD_REMAP_FAILURE},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static void read_fields(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    nvmlFieldValue_t f[NFIELDS];
    memset(f, 0, sizeof f);
    for (size_t k = 0; k < NFIELDS; k++)
        f[k].fieldId = fields[k].id;
    if (a->nvmlDeviceGetFieldValues(h, (int)NFIELDS, f) != NVML_SUCCESS)
        return;
    for (size_t k = 0; k < NFIELDS; k++)
        if (f[k].nvmlReturn == NVML_SUCCESS)
            put(r, fields[k].rd, field_value(&f[k]));
}

/* NVLink data bytes, summed over the links (per-link fields, KiB). */
static void read_nvlink_bytes(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    nvmlFieldValue_t fv = {.fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT};
    if (a->nvmlDeviceGetFieldValues(h, 1, &fv) != NVML_SUCCESS || fv.nvmlReturn != NVML_SUCCESS ||
        fv.value.uiVal == 0 || fv.value.uiVal > 32)
        return;
    nvmlFieldValue_t f[64];
    unsigned links = fv.value.uiVal;
    memset(f, 0, sizeof f);
    for (unsigned k = 0; k < links; k++) {
        f[2 * k] = (nvmlFieldValue_t){.fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, .scopeId = k};
        f[2 * k + 1] = (nvmlFieldValue_t){.fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, .scopeId = k};
    }
    if (a->nvmlDeviceGetFieldValues(h, (int)(2 * links), f) != NVML_SUCCESS)
        return;
    double tx_kib = 0, rx_kib = 0;
    for (unsigned k = 0; k < 2 * links; k++) {
        if (f[k].nvmlReturn != NVML_SUCCESS)
            return;
        *(k % 2 ? &rx_kib : &tx_kib) += (double)f[k].value.ullVal;
    }
    put(r, RD_NVL_TX_KIB, tx_kib);
    put(r, RD_NVL_RX_KIB, rx_kib);
    put(r, RD_NVL_TOTAL_KIB, tx_kib + rx_kib);
}

static void read_throttle(const nvml_api *a, nvmlDevice_t h, gpu_reading *r)
{
    nvmlReturn_t (*fn)(nvmlDevice_t, unsigned long long *) =
        a->nvmlDeviceGetCurrentClocksEventReasons ? a->nvmlDeviceGetCurrentClocksEventReasons
                                                  : a->nvmlDeviceGetCurrentClocksThrottleReasons;
    r->have_throttle = fn && fn(h, &r->throttle) == NVML_SUCCESS;
}

nvmlReturn_t cfit__gpu_read(const nvml_api *a, nvmlDevice_t h, int pcie, gpu_reading *out)
{
    memset(out, 0, sizeof *out);
    nvmlReturn_t rc = read_util_memory(a, h, out);
    if (rc != NVML_SUCCESS)
        return rc;
    read_engines(a, h, out);
    read_power_clocks(a, h, out);
    read_ecc(a, h, out);
    if (pcie)
        read_pcie(a, h, out);
    if (a->nvmlDeviceGetFieldValues) {
        read_fields(a, h, out);
        read_nvlink_bytes(a, h, out);
    }
    read_throttle(a, h, out);
    return NVML_SUCCESS;
}
