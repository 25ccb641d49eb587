/* cmd_bench.c - `clusterfit bench`: a table of benchmark subcommands (collectives over
 * shm/tcp, pairs, storage, memory), each in its own file. */
#include "cli.h"
#include "clusterfit/collective.h"

#include <string.h>

typedef struct bench_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} bench_command;

/* One line per subcommand besides the collectives (one per modelled collective of the registry,
 * clusterfit/collective.h, all run by cmd_bench_collective); the file that implements each
 * declares its function in cli.h. */
static const bench_command bench_commands[] = {
    {"storage", cmd_bench_storage, "sequential write, sequential and random read of a filesystem: GB/s, IOPS"},
    {"memory", cmd_bench_memory, "STREAM copy/scale/add/triad host memory bandwidth"},
    {"pairs", cmd_bench_pairs, "bandwidth and latency of every pair of hosts; names slow links and hosts"},
    {NULL, NULL, NULL},
};

static void bench_usage(FILE *out)
{
    fprintf(out, "usage: clusterfit bench <benchmark> [<args>]\n\n"
                 "Measure the fabric, storage and memory of the machines a job will run on.\n\n"
                 "benchmarks:\n");
    for (const bench_command *c = bench_commands; c->name; c++) {
        fprintf(out, "  %-14s %s\n", c->name, c->help);
        for (int i = 0; c == bench_commands + 1 && i < CFIT_COLL_COUNT; i++)   /* after storage and memory */
            if (cfit_coll_info_of(i)->benched)
                fprintf(out, "  %-14s %s over shm/tcp, nccl-tests columns (docs/bench.md)\n", cfit_collective_name(i),
                    cfit_coll_info_of(i)->title);
    }
    fprintf(out, "\n'clusterfit bench <benchmark> --help' describes one; docs/bench.md all of them.\n");
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2) {
        bench_usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        bench_usage(stdout);
        return EXIT_OK;
    }
    const char *names[32] = {NULL};
    size_t n = 0;
    for (int i = 0; i < CFIT_COLL_COUNT; i++) {
        if (!cfit_coll_info_of(i)->benched)
            continue;
        if (strcmp(cfit_collective_name(i), name) == 0)
            return cmd_bench_collective(name, argc - 1, argv + 1);
        names[n++] = cfit_collective_name(i);
    }
    for (const bench_command *c = bench_commands; c->name; c++) {
        if (strcmp(c->name, name) == 0)
            return c->fn(argc - 1, argv + 1);
        names[n++] = c->name;
    }
    const char *near = cfit_closest(name, names, n);
    if (near)
        return cli_error("'%s' is not a bench benchmark (did you mean '%s'?)", name, near);
    return cli_error("'%s' is not a bench benchmark (see 'clusterfit bench --help')", name);
}
