/* bench_nccl_compat.h - nccl-tests' command-line habits for `bench COLLECTIVE` (issue 17 part 4). */
#ifndef CFIT_BENCH_NCCL_COMPAT_H
#define CFIT_BENCH_NCCL_COMPAT_H

#include "clusterfit/comm.h"

/* The nccl-tests release whose output format `bench` writes (its header lines, columns and
 * footer: nccl-tests src/common.cu, NCCL_TESTS_VERSION of 2.17.1, the version the logs in
 * tests/fixtures/nccl/ come from). */
#define BENCH_NCCL_TESTS_FORMAT "2.17.1"

/* nccl-tests' -g (GPUs per thread) and -t (threads per process) for a run whose ranks are
 * processes on host memory: ranks per launched process = ngpus x nthreads.  With --np P the
 * job gets P x that many local ranks; with neither --np nor a launcher's environment, that many
 * local ranks (-g 8 = --np 8); under mpirun/srun/torchrun every process is one rank, so a
 * product above 1 is refused naming what to launch instead.  0, or 2 after the error. */
int bench_nccl_ranks(cfit_launch *l, long ngpus, long nthreads);

#endif
