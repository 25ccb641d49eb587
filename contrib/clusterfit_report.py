#!/usr/bin/env python3
"""clusterfit_report.py - report training step timings to `clusterfit exporter --job-socket`.

In a training loop (docs/exporter.md "Job reports"):

    from clusterfit_report import StepReporter
    rep = StepReporter(job="llama-70b", rank=int(os.environ.get("RANK", 0)))
    for batch in loader:
        t0 = time.monotonic(); ...load...; t1 = time.monotonic()
        ...forward/backward (all-reduce timed inside)...; t2 = time.monotonic()
        ...optimizer.step()...; t3 = time.monotonic()
        rep.step(step=t3 - t0, data=t1 - t0, allreduce=ar_seconds, optimizer=t3 - t2)

Each step is one datagram "job=NAME rank=N step=S data=S allreduce=S optimizer=S" sent without
blocking; when the exporter is down or busy the report is dropped, never the training step.
From a shell: clusterfit_report.py --socket PATH --job NAME --rank N --step S [--data S] ...
"""
import argparse
import os
import socket
import sys

DEFAULT_SOCKET = os.environ.get("CLUSTERFIT_JOB_SOCKET", "/run/clusterfit/job.sock")


class StepReporter:
    """Sends one report line per training step; never raises on a missing exporter."""

    def __init__(self, job, rank, path=DEFAULT_SOCKET):
        self.job, self.rank, self.path = str(job), int(rank), path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.dropped = 0

    def line(self, step, data=0.0, allreduce=0.0, optimizer=0.0):
        return "job=%s rank=%d step=%.9g data=%.9g allreduce=%.9g optimizer=%.9g\n" % (
            self.job, self.rank, step, data, allreduce, optimizer)

    def send_raw(self, text):
        try:
            self.sock.sendto(text.encode(), self.path)
            return True
        except OSError:
            self.dropped += 1
            return False

    def step(self, step, data=0.0, allreduce=0.0, optimizer=0.0):
        return self.send_raw(self.line(step, data, allreduce, optimizer))

    def close(self):
        self.sock.close()


def main(argv):
    ap = argparse.ArgumentParser(description="send step reports to clusterfit exporter --job-socket")
    ap.add_argument("--socket", default=DEFAULT_SOCKET)
    ap.add_argument("--job", required=True)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--step", type=float, required=True, help="seconds of one step")
    ap.add_argument("--data", type=float, default=0.0)
    ap.add_argument("--allreduce", type=float, default=0.0)
    ap.add_argument("--optimizer", type=float, default=0.0)
    ap.add_argument("--count", type=int, default=1, help="send this many identical steps")
    ap.add_argument("--raw", action="append", default=[], help="also send this line as is (testing)")
    a = ap.parse_args(argv)
    rep = StepReporter(a.job, a.rank, a.socket)
    ok = all(rep.step(a.step, a.data, a.allreduce, a.optimizer) for _ in range(a.count))
    ok = all([rep.send_raw(r) for r in a.raw]) and ok
    rep.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
