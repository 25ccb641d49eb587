/* cmd_rules.c - `clusterfit rules`: Prometheus alerting rules for the exporter's metrics. */
#include "cli.h"

int cmd_rules(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_error("rules: not implemented yet");
}
