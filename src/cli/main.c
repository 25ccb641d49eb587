/* main.c - the clusterfit command: a table of git-style subcommands. */
#include "cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static const command commands[] = {
    {"plan", cmd_plan, "plan the cluster and parallel layout for a training job"},
    {"check", cmd_check, "check a DeepSpeed config or Megatron-LM arguments: schema, batch, world size, memory"},
    {"sim", cmd_sim, "simulate a collective on a fat-tree, rail-optimised, dragonfly or torus fabric"},
    {"bench", cmd_bench, "benchmark the fabric (collectives, host pairs), storage and memory from host memory"},
    {"exporter", cmd_exporter, "serve GPU, network, disk and training-job metrics to Prometheus"},
    {"rules", cmd_rules, "print Prometheus alerting rules for the exporter's metrics, optionally from a plan"},
    {"catalog", cmd_catalog, "list and show the GPUs, models, fabrics, nodes and frameworks planned with"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: clusterfit [--version] [--help] <command> [<args>]\n\n"
                 "Plan GPU clusters for training transformer models.\n\ncommands:\n");
    for (const command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->help);
    fprintf(out, "\n'clusterfit <command> --help' describes a command; 'man clusterfit' the whole tool.\n");
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("clusterfit %s\n", CFIT_VERSION);
        return EXIT_OK;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    for (const command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->fn(argc - 1, argv + 1);
    const char *names[16];
    size_t n = 0;
    for (const command *c = commands; c->name; c++)
        names[n++] = c->name;
    const char *near = cfit_closest(name, names, n);
    if (near)
        return cli_error("'%s' is not a clusterfit command (did you mean '%s'?)", name, near);
    return cli_error("'%s' is not a clusterfit command (see 'clusterfit --help')", name);
}

int main(int argc, char **argv)
{
    return cli_finish(run(argc, argv));
}
