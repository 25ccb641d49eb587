/* test_gpu_dcgm.c - the gpu collector's newer metrics and --compat dcgm against the fake NVML
 * ($CFIT_FAKENVML; $CFIT_FAKENVML_OLD is the same without the entry points older drivers lack):
 * ECC volatile/aggregate, retired pages, remapped rows, NVLink and PCIe error counters; DCGM's
 * names, units (%, MHz, MiB, mJ) and labels; OpenMetrics types; a driver without the newer calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clusterfit/exporter.h"

static const char FIX[] =
    "driver 550.54.15\n"
    "gpu uuid=GPU-a name=NVIDIA_H100_80GB_HBM3 pci=00000000:18:00.0 util=87 memutil=41 mem_total=85520809984 "
    "mem_used=61203283968 mem_reserved=566231040 power_mw=612345 energy_mj=123456789012 temp=64 mem_temp=58 "
    "sm_mhz=1980 mem_mhz=2619 ecc_corrected=3 ecc_uncorrected=0 ecc_agg_corrected=17 ecc_agg_uncorrected=1 enc=2 "
    "dec=5 pcie_replay=2 nvl_crc_flit=4 nvl_crc_data=1 nvl_replay=3 nvl_recovery=7 remap_cor=2 remap_unc=1 "
    "remap_pending=0 remap_failure=1 nvlink_links=2 nvlink_tx_kib=100 nvlink_rx_kib=300 xids=79,13\n"
    "gpu uuid=GPU-b name=Tesla_V100 util=5 memutil=1 retired_sbe=4 retired_dbe=1 retired_pending=1\n";

static char dir[64], fixture[96];

static cfit_exporter *start(const char *envlib, int compat, cfit_exporter_config *cfg)
{
    const char *lib = getenv(envlib);
    if (!lib)
        return NULL;
    snprintf(dir, sizeof dir, "/tmp/cfit-gpudcgm.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(fixture, sizeof fixture, "%s/nvml.txt", dir);
    FILE *f = fopen(fixture, "w");
    assert_non_null(f);
    fputs(FIX, f);
    fclose(f);
    setenv("FAKENVML_FIXTURE", fixture, 1);
    setenv("NODE_NAME", "node7", 1);
    *cfg = (cfit_exporter_config){.nvml_library = lib, .compat_dcgm = compat};
    int enable[8] = {0};
    for (size_t i = 0; cfit_collectors[i]; i++)
        enable[i] = strcmp(cfit_collectors[i]->name, "gpu") == 0;
    cfit_exporter *x = cfit_exporter_new(cfg, enable);
    assert_non_null(x);
    return x;
}

static void stop(cfit_exporter *x)
{
    cfit_exporter_free(x);
    unlink(fixture);
    rmdir(dir);
}

static char *scrape(cfit_exporter *x, cfit_expo_format f)
{
    char *out;
    size_t len;
    assert_int_equal(cfit_exporter_scrape(x, f, &out, &len), 0);
    assert_non_null(strstr(out, "clusterfit_scrape_collector_success{collector=\"gpu\"} 1\n"));
    return out;
}

static void expect(const char *out, const char *line)
{
    if (!strstr(out, line)) {
        fprintf(stderr, "%s", out);
        fail_msg("scrape lacks '%s' (scrape above)", line);
    }
}

#define A "{gpu=\"0\",uuid=\"GPU-a\""
#define B "{gpu=\"1\",uuid=\"GPU-b\""

static void test_native_error_counters(void **st)
{
    (void)st;
    cfit_exporter_config cfg;
    cfit_exporter *x = start("CFIT_FAKENVML", 0, &cfg);
    if (!x)
        skip();
    char *out = scrape(x, CFIT_EXPO_TEXT);
    expect(out, "clusterfit_gpu_ecc_errors_total" A ",type=\"corrected\"} 3\n");
    expect(out, "clusterfit_gpu_ecc_aggregate_errors_total" A ",type=\"corrected\"} 17\n");
    expect(out, "clusterfit_gpu_ecc_aggregate_errors_total" A ",type=\"uncorrected\"} 1\n");
    expect(out, "clusterfit_gpu_remapped_rows" A ",type=\"correctable\"} 2\n");
    expect(out, "clusterfit_gpu_remapped_rows" A ",type=\"uncorrectable\"} 1\n");
    expect(out, "clusterfit_gpu_row_remap_failure" A "} 1\n");
    expect(out, "clusterfit_gpu_retired_pages" B ",cause=\"single_bit_ecc\"} 4\n");
    expect(out, "clusterfit_gpu_retired_pages" B ",cause=\"double_bit_ecc\"} 1\n");
    expect(out, "clusterfit_gpu_retired_pages_pending" B "} 1\n");
    expect(out, "clusterfit_gpu_nvlink_errors_total" A ",type=\"crc_flit\"} 4\n");
    expect(out, "clusterfit_gpu_nvlink_errors_total" A ",type=\"recovery\"} 7\n");
    expect(out, "clusterfit_gpu_pcie_replays_total" A "} 2\n");
    expect(out, "clusterfit_gpu_memory_temperature_celsius" A "} 58\n");
    expect(out, "clusterfit_gpu_encoder_utilization_ratio" A "} 0.02\n");
    expect(out, "clusterfit_gpu_xid_errors_total" A ",xid=\"79\"} 1\n");   /* a counter per XID code */
    expect(out, "clusterfit_gpu_xid_errors_total" A ",xid=\"13\"} 1\n");
    /* what a GPU does not support is left out, never a sentinel */
    assert_null(strstr(out, "clusterfit_gpu_remapped_rows" B));
    assert_null(strstr(out, "clusterfit_gpu_retired_pages" A));
    assert_null(strstr(out, "DCGM_FI_"));   /* only with --compat dcgm */
    free(out);
    stop(x);
}

#define DL(i, u, pci, dev, model) \
    "{gpu=\"" i "\",UUID=\"" u "\",pci_bus_id=\"" pci "\",device=\"" dev "\",modelName=\"" model \
    "\",Hostname=\"node7\",DCGM_FI_DRIVER_VERSION=\"550.54.15\""
#define DA DL("0", "GPU-a", "00000000:18:00.0", "nvidia0", "NVIDIA H100 80GB HBM3")
#define DB DL("1", "GPU-b", "", "nvidia1", "Tesla V100")

static void test_compat_dcgm(void **st)
{
    (void)st;
    cfit_exporter_config cfg;
    cfit_exporter *x = start("CFIT_FAKENVML", 1, &cfg);
    if (!x)
        skip();
    char *out = scrape(x, CFIT_EXPO_TEXT);
    expect(out, "clusterfit_gpu_utilization_ratio" A "} 0.87\n");   /* the native names stay */
    expect(out, "DCGM_FI_DEV_GPU_UTIL" DA "} 87\n");                  /* percent, not 0-1 */
    expect(out, "DCGM_FI_DEV_MEM_COPY_UTIL" DA "} 41\n");
    expect(out, "DCGM_FI_DEV_SM_CLOCK" DA "} 1980\n");                /* MHz */
    expect(out, "DCGM_FI_DEV_POWER_USAGE" DA "} 612.345\n");          /* W */
    expect(out, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" DA "} 123456789012\n");   /* mJ */
    expect(out, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n");
    /* MiB, rounded down; v2's used leaves the reserved 540 MiB out */
    expect(out, "DCGM_FI_DEV_FB_USED" DA "} 57828\n");
    expect(out, "DCGM_FI_DEV_FB_RESERVED" DA "} 540\n");
    expect(out, "DCGM_FI_DEV_FB_FREE" DA "} 23191\n");
    expect(out, "DCGM_FI_DEV_ENC_UTIL" DA "} 2\n");
    expect(out, "DCGM_FI_DEV_DEC_UTIL" DA "} 5\n");
    expect(out, "DCGM_FI_DEV_MEMORY_TEMP" DA "} 58\n");
    expect(out, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" DA "} 2\n");
    expect(out, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL" DA "} 17\n");
    expect(out, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL" DA "} 3\n");
    expect(out, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL" DA "} 400\n");
    expect(out, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS" DA "} 2\n");
    expect(out, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" DA "} 1\n");
    expect(out, "DCGM_FI_DEV_ROW_REMAP_FAILURE" DA "} 1\n");
    expect(out, "DCGM_FI_DEV_RETIRED_SBE" DB "} 4\n");
    expect(out, "DCGM_FI_DEV_XID_ERRORS" DA ",err_code=\"13\"} 13\n");   /* the last XID */
    expect(out, "DCGM_FI_DEV_XID_ERRORS" DB ",err_code=\"0\"} 0\n");
    assert_null(strstr(out, "DCGM_FI_PROF_PCIE_TX_BYTES"));   /* only with --collector.gpu.pcie */
    free(out);
    out = scrape(x, CFIT_EXPO_OPENMETRICS);   /* OpenMetrics: counters without _total are "unknown" */
    expect(out, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown\n");
    expect(out, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
    free(out);
    stop(x);
}

static void test_old_driver(void **st)
{
    (void)st;
    cfit_exporter_config cfg;
    cfit_exporter *x = start("CFIT_FAKENVML_OLD", 1, &cfg);
    if (!x)
        skip();
    char *out = scrape(x, CFIT_EXPO_TEXT);
    /* no nvmlDeviceGetPciInfo_v3, _MemoryInfo_v2, encoder/decoder utilisation: those go, the rest stays */
    const char *dl = DL("0", "GPU-a", "", "nvidia0", "NVIDIA H100 80GB HBM3");
    char line[512];
    snprintf(line, sizeof line, "DCGM_FI_DEV_GPU_UTIL%s} 87\n", dl);
    expect(out, line);
    snprintf(line, sizeof line, "DCGM_FI_DEV_FB_USED%s} 58368\n", dl);   /* v1's used, reserved included */
    expect(out, line);
    expect(out, "clusterfit_gpu_pcie_replays_total" A "} 2\n");
    assert_null(strstr(out, "DCGM_FI_DEV_FB_RESERVED"));
    assert_null(strstr(out, "DCGM_FI_DEV_ENC_UTIL"));
    assert_null(strstr(out, "clusterfit_gpu_encoder_utilization_ratio"));
    free(out);
    stop(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native_error_counters),
        cmocka_unit_test(test_compat_dcgm),
        cmocka_unit_test(test_old_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
