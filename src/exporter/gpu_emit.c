/* gpu_emit.c - one GPU's readings as exposition families: the native clusterfit_gpu_* names in
 * SI units, and dcgm-exporter's DCGM_FI_* names in DCGM's units (--compat dcgm).  Each table row
 * is {reading, metric, type, scale, extra label}; value = reading * mul / div (0 = 1), so that
 * integer readings divide exactly (87 / 100 = 0.87, not 87 * 0.01).  docs/metrics.md lists both. */
#include "gpu_read.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct gpu_row {
    gpu_rd rd;
    const char *name;
    cfit_metric_type type;
    const char *help;           /* the first row of a family gives it */
    double mul, div;
    const char *lkey, *lval;    /* one extra label, or NULL */
} gpu_row;

#define G CFIT_METRIC_GAUGE
#define C CFIT_METRIC_COUNTER
#define MIB 1048576.0

static const gpu_row native_rows[] = {
    {RD_UTIL_PCT, "clusterfit_gpu_utilization_ratio", G,
     "Fraction of the last sample period in which a kernel was running (NVML).", 0, 100, NULL, NULL},
    {RD_MEMUTIL_PCT, "clusterfit_gpu_memory_utilization_ratio", G,
     "Fraction of the last sample period in which device memory was read or written (NVML).", 0, 100, NULL, NULL},
    {RD_MEM_USED_BYTES, "clusterfit_gpu_memory_used_bytes", G, "Device memory in use.", 0, 0, NULL, NULL},
    {RD_MEM_TOTAL_BYTES, "clusterfit_gpu_memory_total_bytes", G, "Device memory installed.", 0, 0, NULL, NULL},
    {RD_POWER_MW, "clusterfit_gpu_power_watts", G, "Power draw of the board.", 0, 1000, NULL, NULL},
    {RD_ENERGY_MJ, "clusterfit_gpu_energy_joules_total", C,
     "Energy used since the driver was loaded (resets when it reloads).", 0, 1000, NULL, NULL},
    {RD_TEMP_C, "clusterfit_gpu_temperature_celsius", G, "GPU die temperature.", 0, 0, NULL, NULL},
    {RD_SM_MHZ, "clusterfit_gpu_sm_clock_hertz", G, "Current SM clock.", 1e6, 0, NULL, NULL},
    {RD_MEM_MHZ, "clusterfit_gpu_memory_clock_hertz", G, "Current memory clock.", 1e6, 0, NULL, NULL},
    {RD_ECC_VOL_SBE, "clusterfit_gpu_ecc_errors_total", C, "Memory ECC errors since the driver was loaded.", 0, 0,
     "type", "corrected"},
    {RD_ECC_VOL_DBE, "clusterfit_gpu_ecc_errors_total", C, NULL, 0, 0, "type", "uncorrected"},
    {RD_PCIE_TX_KBS, "clusterfit_gpu_pcie_transmit_bytes_per_second", G,
     "PCIe transmit throughput over NVML's 20 ms window (NVML KB/s x 1024).", 1024, 0, NULL, NULL},
    {RD_PCIE_RX_KBS, "clusterfit_gpu_pcie_receive_bytes_per_second", G,
     "PCIe receive throughput over NVML's 20 ms window (NVML KB/s x 1024).", 1024, 0, NULL, NULL},
    {RD_NVL_TX_KIB, "clusterfit_gpu_nvlink_transmit_bytes_total", C, "NVLink data bytes transmitted, all links.",
     1024, 0, NULL, NULL},
    {RD_NVL_RX_KIB, "clusterfit_gpu_nvlink_receive_bytes_total", C, "NVLink data bytes received, all links.",
     1024, 0, NULL, NULL},
    {RD_ECC_AGG_SBE, "clusterfit_gpu_ecc_aggregate_errors_total", C,
     "Memory ECC errors over the GPU's life (NVML aggregate counter, kept in the inforom).", 0, 0, "type",
     "corrected"},
    {RD_ECC_AGG_DBE, "clusterfit_gpu_ecc_aggregate_errors_total", C, NULL, 0, 0, "type", "uncorrected"},
    {RD_RETIRED_SBE, "clusterfit_gpu_retired_pages", G, "Device memory pages retired (pre-Ampere page retirement).",
     0, 0, "cause", "single_bit_ecc"},
    {RD_RETIRED_DBE, "clusterfit_gpu_retired_pages", G, NULL, 0, 0, "cause", "double_bit_ecc"},
    {RD_RETIRED_PENDING, "clusterfit_gpu_retired_pages_pending", G,
     "1 when a page waits to be retired at the next GPU reset.", 0, 0, NULL, NULL},
    {RD_REMAP_COR, "clusterfit_gpu_remapped_rows", G, "Device memory rows remapped (Ampere and later row remapper).",
     0, 0, "type", "correctable"},
    {RD_REMAP_UNC, "clusterfit_gpu_remapped_rows", G, NULL, 0, 0, "type", "uncorrectable"},
    {RD_REMAP_PENDING, "clusterfit_gpu_row_remap_pending", G, "1 when a row remap waits for the next GPU reset.",
     0, 0, NULL, NULL},
    {RD_REMAP_FAILURE, "clusterfit_gpu_row_remap_failure", G, "1 when a row could not be remapped (replace the GPU).",
     0, 0, NULL, NULL},
    {RD_NVL_CRC_FLIT, "clusterfit_gpu_nvlink_errors_total", C, "NVLink errors, all links, by kind.", 0, 0, "type",
     "crc_flit"},
    {RD_NVL_CRC_DATA, "clusterfit_gpu_nvlink_errors_total", C, NULL, 0, 0, "type", "crc_data"},
    {RD_NVL_REPLAY, "clusterfit_gpu_nvlink_errors_total", C, NULL, 0, 0, "type", "replay"},
    {RD_NVL_RECOVERY, "clusterfit_gpu_nvlink_errors_total", C, NULL, 0, 0, "type", "recovery"},
    {RD_PCIE_REPLAYS, "clusterfit_gpu_pcie_replays_total", C, "PCIe link-level retries (replays) of the GPU.", 0, 0,
     NULL, NULL},
    {RD_MEM_TEMP_C, "clusterfit_gpu_memory_temperature_celsius", G, "Device memory (HBM) temperature.", 0, 0, NULL,
     NULL},
    {RD_ENC_PCT, "clusterfit_gpu_encoder_utilization_ratio", G, "Fraction of time the video encoder was busy (NVML).",
     0, 100, NULL, NULL},
    {RD_DEC_PCT, "clusterfit_gpu_decoder_utilization_ratio", G, "Fraction of time the video decoder was busy (NVML).",
     0, 100, NULL, NULL},
};

/* dcgm-exporter's etc/default-counters.csv (help text as it writes it), then the ECC, retired-page
 * and NVLink-error counters that file lists commented out.  Counters keep DCGM's names without
 * _total (CFIT_METRIC_COUNTER_UNSUFFIXED).  Units are DCGM's: MHz, C, W, mJ, %, MiB. */
#define U CFIT_METRIC_COUNTER_UNSUFFIXED
static const gpu_row dcgm_rows[] = {
    {RD_SM_MHZ, "DCGM_FI_DEV_SM_CLOCK", G, "SM clock frequency (in MHz).", 0, 0, NULL, NULL},
    {RD_MEM_MHZ, "DCGM_FI_DEV_MEM_CLOCK", G, "Memory clock frequency (in MHz).", 0, 0, NULL, NULL},
    {RD_MEM_TEMP_C, "DCGM_FI_DEV_MEMORY_TEMP", G, "Memory temperature (in C).", 0, 0, NULL, NULL},
    {RD_TEMP_C, "DCGM_FI_DEV_GPU_TEMP", G, "GPU temperature (in C).", 0, 0, NULL, NULL},
    {RD_POWER_MW, "DCGM_FI_DEV_POWER_USAGE", G, "Power draw (in W).", 0, 1000, NULL, NULL},
    {RD_ENERGY_MJ, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", U, "Total energy consumption since boot (in mJ).", 0, 0,
     NULL, NULL},
    {RD_PCIE_REPLAYS, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", U, "Total number of PCIe retries.", 0, 0, NULL, NULL},
    {RD_UTIL_PCT, "DCGM_FI_DEV_GPU_UTIL", G, "GPU utilization (in %).", 0, 0, NULL, NULL},
    {RD_MEMUTIL_PCT, "DCGM_FI_DEV_MEM_COPY_UTIL", G, "Memory utilization (in %).", 0, 0, NULL, NULL},
    {RD_ENC_PCT, "DCGM_FI_DEV_ENC_UTIL", G, "Encoder utilization (in %).", 0, 0, NULL, NULL},
    {RD_DEC_PCT, "DCGM_FI_DEV_DEC_UTIL", G, "Decoder utilization (in %).", 0, 0, NULL, NULL},
    {RD_MEM_FREE_BYTES, "DCGM_FI_DEV_FB_FREE", G, "Framebuffer memory free (in MiB).", 0, MIB, NULL, NULL},
    {RD_FB_USED_BYTES, "DCGM_FI_DEV_FB_USED", G, "Framebuffer memory used (in MiB).", 0, MIB, NULL, NULL},
    {RD_MEM_RESERVED_BYTES, "DCGM_FI_DEV_FB_RESERVED", G, "Framebuffer memory reserved (in MiB).", 0, MIB, NULL, NULL},
    {RD_ECC_VOL_SBE, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", U, "Total number of single-bit volatile ECC errors.", 0, 0,
     NULL, NULL},
    {RD_ECC_VOL_DBE, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", U, "Total number of double-bit volatile ECC errors.", 0, 0,
     NULL, NULL},
    {RD_ECC_AGG_SBE, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", U, "Total number of single-bit persistent ECC errors.", 0, 0,
     NULL, NULL},
    {RD_ECC_AGG_DBE, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", U, "Total number of double-bit persistent ECC errors.", 0, 0,
     NULL, NULL},
    {RD_RETIRED_SBE, "DCGM_FI_DEV_RETIRED_SBE", U, "Total number of retired pages due to single-bit errors.", 0, 0,
     NULL, NULL},
    {RD_RETIRED_DBE, "DCGM_FI_DEV_RETIRED_DBE", U, "Total number of retired pages due to double-bit errors.", 0, 0,
     NULL, NULL},
    {RD_RETIRED_PENDING, "DCGM_FI_DEV_RETIRED_PENDING", U, "Total number of pages pending retirement.", 0, 0, NULL,
     NULL},
    {RD_NVL_CRC_FLIT, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", U,
     "Total number of NVLink flow-control CRC errors.", 0, 0, NULL, NULL},
    {RD_NVL_CRC_DATA, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", U, "Total number of NVLink data CRC errors.",
     0, 0, NULL, NULL},
    {RD_NVL_REPLAY, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", U, "Total number of NVLink retries.", 0, 0, NULL,
     NULL},
    {RD_NVL_RECOVERY, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", U, "Total number of NVLink recovery errors.",
     0, 0, NULL, NULL},
    {RD_NVL_TOTAL_KIB, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", U,
     "Total number of NVLink bandwidth counters for all lanes.", 0, 0, NULL, NULL},
    {RD_REMAP_UNC, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", U, "Number of remapped rows for uncorrectable errors",
     0, 0, NULL, NULL},
    {RD_REMAP_COR, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", U, "Number of remapped rows for correctable errors", 0, 0,
     NULL, NULL},
    {RD_REMAP_FAILURE, "DCGM_FI_DEV_ROW_REMAP_FAILURE", G, "Whether remapping of rows has failed", 0, 0, NULL, NULL},
    {RD_REMAP_PENDING, "DCGM_FI_DEV_ROW_REMAP_PENDING", G, "Whether remapping of rows is pending", 0, 0, NULL, NULL},
    {RD_PCIE_TX_KBS, "DCGM_FI_PROF_PCIE_TX_BYTES", G,
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes "
     "per second.", 1024, 0, NULL, NULL},
    {RD_PCIE_RX_KBS, "DCGM_FI_PROF_PCIE_RX_BYTES", G,
     "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per "
     "second.", 1024, 0, NULL, NULL},
};

static double row_value(const gpu_row *w, double v)
{
    if (w->mul)
        v *= w->mul;
    if (w->div)
        v /= w->div;
    return w->div == MIB ? floor(v) : v;   /* DCGM's FB fields are whole MiB */
}

/* Labels l (NULL-terminated, at most 16 entries) plus an optional pair. */
static int emit_rows(cfit_expo *e, const char *const *l, const gpu_reading *r, const gpu_row *rows, size_t n)
{
    const char *lb[20];
    size_t nl = 0;
    while (l[nl] && nl < 16)
        lb[nl] = l[nl], nl++;
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        const gpu_row *w = &rows[k];
        if (!gpu_has(r, w->rd))
            continue;
        const gpu_row *h = w;
        while (!h->help && h > rows)   /* a family's later rows leave its help to the first */
            h--;
        lb[nl] = w->lkey, lb[nl + 1] = w->lval, lb[nl + 2] = NULL;
        rc = cfit__emit(e, w->name, w->type, h->help, lb, row_value(w, r->v[w->rd]));
    }
    return rc;
}

static const struct reason {
    unsigned long long bit;
    const char *name;
} reasons[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

int cfit__gpu_emit_native(cfit_expo *e, const char *const *l, const gpu_reading *r)
{
    int rc = emit_rows(e, l, r, native_rows, sizeof native_rows / sizeof native_rows[0]);
    for (size_t k = 0; r->have_throttle && !rc && k < sizeof reasons / sizeof reasons[0]; k++) {
        const char *rl[] = {l[0], l[1], l[2], l[3], "reason", reasons[k].name, NULL};
        rc = cfit__emit(e, "clusterfit_gpu_throttle_reason", CFIT_METRIC_GAUGE,
                        "1 when this reason is holding the clocks down (NVML clock event reasons).", rl,
                        (r->throttle & reasons[k].bit) != 0);
    }
    return rc;
}

int cfit__gpu_emit_dcgm(cfit_expo *e, const char *const *l, const gpu_reading *r)
{
    return emit_rows(e, l, r, dcgm_rows, sizeof dcgm_rows / sizeof dcgm_rows[0]);
}

int cfit__gpu_emit_dcgm_xid(cfit_expo *e, const char *const *l, unsigned last_xid)
{
    char code[16];
    snprintf(code, sizeof code, "%u", last_xid);
    gpu_reading r = {.have = 1ULL << RD_UTIL_PCT};
    r.v[RD_UTIL_PCT] = last_xid;
    const gpu_row xid = {RD_UTIL_PCT, "DCGM_FI_DEV_XID_ERRORS", G, "Value of the last XID error encountered.", 0, 0,
                         "err_code", code};
    return emit_rows(e, l, &r, &xid, 1);
}
