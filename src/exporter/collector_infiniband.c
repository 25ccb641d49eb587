/* collector_infiniband.c - InfiniBand/RoCE ports from SYSFS/class/infiniband/DEV/ports/N:
 * data, packet and error counters, link rate and port state.
 *
 * port_rcv_data and port_xmit_data count octets divided by 4 (per lane, kernel ABI
 * Documentation/ABI/stable/sysfs-class-infiniband), so they are multiplied by 4 here.
 * Counters that read "N/A (no PMA)" are skipped; a device without a counters directory
 * reports only its rate and state.  No /sys/class/infiniband at all is not an error. */
#include "collectors.h"

#include <stdlib.h>
#include <string.h>

typedef struct ib_state {
    char root[4096];    /* SYSFS/class/infiniband */
} ib_state;

static int ib_init(const cfit_exporter_config *cfg, void **state, cfit_diag *d)
{
    (void)d;
    ib_state *s = calloc(1, sizeof *s);
    if (!s)
        return CFIT_ENOMEM;
    snprintf(s->root, sizeof s->root, "%s/class/infiniband", cfg->sysfs ? cfg->sysfs : "/sys");
    *state = s;
    return 0;
}

static const struct counter {
    const char *file, *metric, *help;
    double scale;
} counters[] = {
    {"port_rcv_data", "clusterfit_infiniband_receive_bytes_total", "Data bytes received on the port.", 4},
    {"port_xmit_data", "clusterfit_infiniband_transmit_bytes_total", "Data bytes transmitted on the port.", 4},
    {"port_rcv_packets", "clusterfit_infiniband_receive_packets_total", "Packets received on the port.", 1},
    {"port_xmit_packets", "clusterfit_infiniband_transmit_packets_total", "Packets transmitted on the port.", 1},
    {"port_rcv_errors", "clusterfit_infiniband_receive_errors_total", "Received packets with errors.", 1},
    {"port_xmit_discards", "clusterfit_infiniband_transmit_discards_total",
     "Outbound packets discarded because the port was down or congested.", 1},
    {"symbol_error", "clusterfit_infiniband_symbol_errors_total", "Minor link errors detected on the port.", 1},
    {"link_downed", "clusterfit_infiniband_link_downed_total", "Times the link failed to recover and went down.", 1},
    {"port_xmit_wait", "clusterfit_infiniband_transmit_wait_total",
     "Ticks during which the port had data to send but no flow-control credits.", 1},
};

/* "100 Gb/sec (4X EDR)" -> bytes per second; -1 when unparsable. */
static double parse_rate(const char *text)
{
    char *end;
    double gbps = strtod(text, &end);
    if (end == text || strncmp(end, " Gb/sec", 7) != 0 || !(gbps > 0))
        return -1;
    return gbps * 125e6;
}

static int one_port(const ib_state *s, const char *dev, const char *port, cfit_expo *e)
{
    char path[4096 + 1024], text[128];
    const char *l[] = {"device", dev, "port", port, NULL};
    int rc = 0;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0] && !rc; i++) {
        uint64_t v;
        snprintf(path, sizeof path, "%s/%s/ports/%s/counters/%s", s->root, dev, port, counters[i].file);
        if (cfit__read_u64(path, &v) == 0)
            rc = cfit__emit(e, counters[i].metric, CFIT_METRIC_COUNTER, counters[i].help, l,
                            (double)v * counters[i].scale);
    }
    snprintf(path, sizeof path, "%s/%s/ports/%s/rate", s->root, dev, port);
    double rate;
    if (!rc && cfit__read_text(path, text, sizeof text) == 0 && (rate = parse_rate(text)) > 0)
        rc = cfit__emit(e, "clusterfit_infiniband_rate_bytes_per_second", CFIT_METRIC_GAUGE,
                        "Link rate of the port (sysfs rate, Gb/s x 125000000).", l, rate);
    /* state: "4: ACTIVE" */
    snprintf(path, sizeof path, "%s/%s/ports/%s/state", s->root, dev, port);
    if (!rc && cfit__read_text(path, text, sizeof text) == 0 && text[0] >= '0' && text[0] <= '9')
        rc = cfit__emit(e, "clusterfit_infiniband_state_id", CFIT_METRIC_GAUGE,
                        "Port state number (1 down, 2 init, 3 armed, 4 active, 5 active defer).", l,
                        strtod(text, NULL));
    return rc;
}

static int one_device(const ib_state *s, const char *dev, cfit_expo *e)
{
    char path[4096 + 512];
    snprintf(path, sizeof path, "%s/%s/ports", s->root, dev);
    char **ports;
    size_t n;
    if (cfit__list_dir(path, &ports, &n))
        return 0;   /* a device without ports: nothing to report */
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = one_port(s, dev, ports[i], e);
    cfit__free_names(ports, n);
    return rc;
}

static int ib_collect(void *state, cfit_expo *e, cfit_diag *d)
{
    (void)d;
    const ib_state *s = state;
    char **names;
    size_t n;
    if (cfit__list_dir(s->root, &names, &n))
        return 0;   /* no InfiniBand on this machine */
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = one_device(s, names[i], e);
    cfit__free_names(names, n);
    return rc;
}

static void ib_fini(void *state)
{
    free(state);
}

const cfit_collector_ops cfit__collector_infiniband = {
    .name = "infiniband",
    .help = "InfiniBand/RoCE port counters, rate and state from SYSFS/class/infiniband",
    .default_on = 1,
    .init = ib_init,
    .collect = ib_collect,
    .fini = ib_fini,
};
