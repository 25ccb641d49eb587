/* bench_nccl_compat.c - nccl-tests' -g/-t for `bench COLLECTIVE` (bench_nccl_compat.h). */
#include "bench_nccl_compat.h"
#include "cli.h"

int bench_nccl_ranks(cfit_launch *l, long ngpus, long nthreads)
{
    ngpus = ngpus > 0 ? ngpus : 1;   /* 0: not given */
    nthreads = nthreads > 0 ? nthreads : 1;
    long per = ngpus * nthreads;
    if (per <= 1)
        return 0;
    int env = cfit_launch_env_size();
    if (l->np == 0 && env > 0)
        return cli_error("-g %ld -t %ld: under mpirun/srun/torchrun each clusterfit process is one rank (host memory "
                         "stands for one GPU); launch %ld processes per host instead of passing -g/-t",
                         ngpus, nthreads, per);
    long np = (l->np ? l->np : 1) * per;
    if (np > 1024)
        return cli_error("-g %ld -t %ld with --np %d: %ld local ranks, more than 1024", ngpus, nthreads,
                         l->np ? l->np : 1, np);
    l->np = (int)np;
    return 0;
}
