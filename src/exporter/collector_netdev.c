/* collector_netdev.c - network interfaces from SYSFS/class/net/DEV: byte, packet, error and
 * drop counters (statistics/), link speed and operational state. */
#include "collectors.h"

#include <stdlib.h>
#include <string.h>

typedef struct netdev_state {
    char root[4096];    /* SYSFS/class/net */
} netdev_state;

static int netdev_init(const cfit_exporter_config *cfg, void **state, cfit_diag *d)
{
    (void)d;
    netdev_state *s = calloc(1, sizeof *s);
    if (!s)
        return CFIT_ENOMEM;
    snprintf(s->root, sizeof s->root, "%s/class/net", cfg->sysfs ? cfg->sysfs : "/sys");
    *state = s;
    return 0;
}

static const struct counter {
    const char *file, *metric, *help;
} counters[] = {
    {"rx_bytes", "clusterfit_network_receive_bytes_total", "Bytes received by the interface."},
    {"tx_bytes", "clusterfit_network_transmit_bytes_total", "Bytes transmitted by the interface."},
    {"rx_packets", "clusterfit_network_receive_packets_total", "Packets received by the interface."},
    {"tx_packets", "clusterfit_network_transmit_packets_total", "Packets transmitted by the interface."},
    {"rx_errors", "clusterfit_network_receive_errors_total", "Receive errors of the interface."},
    {"tx_errors", "clusterfit_network_transmit_errors_total", "Transmit errors of the interface."},
    {"rx_dropped", "clusterfit_network_receive_drop_total", "Received packets dropped by the interface."},
    {"tx_dropped", "clusterfit_network_transmit_drop_total", "Transmitted packets dropped by the interface."},
};

static int one_device(const netdev_state *s, const char *dev, cfit_expo *e)
{
    char path[4096 + 512], text[64];
    const char *l[] = {"device", dev, NULL};
    int rc = 0;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0] && !rc; i++) {
        uint64_t v;
        snprintf(path, sizeof path, "%s/%s/statistics/%s", s->root, dev, counters[i].file);
        if (cfit__read_u64(path, &v) == 0)
            rc = cfit__emit(e, counters[i].metric, CFIT_METRIC_COUNTER, counters[i].help, l, (double)v);
    }
    /* speed is in Mbit/s; "-1" or an error (interface down) means unknown: no sample. */
    uint64_t mbps;
    snprintf(path, sizeof path, "%s/%s/speed", s->root, dev);
    if (!rc && cfit__read_u64(path, &mbps) == 0 && mbps > 0)
        rc = cfit__emit(e, "clusterfit_network_speed_bytes_per_second", CFIT_METRIC_GAUGE,
                        "Link speed of the interface (sysfs speed, Mbit/s x 125000).", l, (double)mbps * 125000.0);
    snprintf(path, sizeof path, "%s/%s/operstate", s->root, dev);
    if (!rc && cfit__read_text(path, text, sizeof text) == 0)
        rc = cfit__emit(e, "clusterfit_network_up", CFIT_METRIC_GAUGE,
                        "1 when the interface's operational state is up.", l, strcmp(text, "up") == 0);
    return rc;
}

static int netdev_collect(void *state, cfit_expo *e, cfit_diag *d)
{
    const netdev_state *s = state;
    char **names;
    size_t n;
    if (cfit__list_dir(s->root, &names, &n))
        return cfit_diag_set(d, CFIT_EIO, NULL, 0, 0, "cannot read %s", s->root);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = one_device(s, names[i], e);
    cfit__free_names(names, n);
    return rc;
}

static void netdev_fini(void *state)
{
    free(state);
}

const cfit_collector_ops cfit__collector_netdev = {
    .name = "netdev",
    .help = "network interface counters and link speed from SYSFS/class/net",
    .default_on = 1,
    .init = netdev_init,
    .collect = netdev_collect,
    .fini = netdev_fini,
};
