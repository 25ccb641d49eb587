#!/usr/bin/env python3
"""exporter_bench.py - `clusterfit exporter` against the Debian prometheus-node-exporter, same run.

Usage: python3 bench/exporter_bench.py BUILD/clusterfit [--scrapes 1000] [--clients 200] [--compat dcgm]

Starts the exporter on loopback with 8 GPUs from the fake NVML library (tests/fakenvml, built next
to the binary as tests/libfakenvml.so, or $CFIT_FAKENVML) plus this machine's real /sys and
/proc, then measures: scrape latency over N sequential scrapes on one keep-alive connection
(p50/p99), C clients scraping at once (all must get 200), and resident memory (VmRSS and the
peak VmHWM) afterwards. The same is measured for prometheus-node-exporter (default collectors)
when it is installed. --compat dcgm runs the exporter with that flag (dcgm-exporter's names
beside the native ones: about twice the GPU series). Targets (issue 6): RSS <= 10 MB, p99 <= 5 ms, 200 concurrent clients served.
Exit status 0 when every target is met, 1 otherwise, 2 on bad usage.
"""
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import benchcli


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_up(port, proc, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise SystemExit("exporter exited early (status %s)" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("port %d never opened" % port)


def scrape_latencies(port, n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    lat, size = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        body = r.read()
        lat.append(time.perf_counter() - t0)
        if r.status != 200:
            raise SystemExit("scrape answered %d" % r.status)
        size = len(body)
    conn.close()
    lat.sort()
    return lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))], size


def concurrent(port, clients):
    ok = [0]
    lock = threading.Lock()
    barrier = threading.Barrier(clients)

    def one():
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            barrier.wait()
            conn.request("GET", "/metrics")
            r = conn.getresponse()
            r.read()
            if r.status == 200:
                with lock:
                    ok[0] += 1
            conn.close()
        except Exception:   # counted as not served
            pass

    threads = [threading.Thread(target=one) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ok[0], time.perf_counter() - t0


def write_fixture(tmp):
    """The fake NVML fixture: 8 H100s (tests/fakenvml/fakenvml.c); returns its path."""
    fixture = os.path.join(tmp, "nvml.txt")
    with open(fixture, "w") as f:
        f.write("driver 550.54.15\n")
        for i in range(8):
            f.write("gpu uuid=GPU-bench-%d name=NVIDIA_H100_80GB_HBM3 util=%d memutil=40 mem_total=85520809984 "
                    "mem_used=60000000000 power_mw=600000 energy_mj=%d temp=60 sm_mhz=1980 mem_mhz=2619 "
                    "ecc_corrected=0 ecc_uncorrected=0 nvlink_links=18 nvlink_tx_kib=1800000 nvlink_rx_kib=1800000 "
                    "throttle=0 xids=79 pci=00000000:%02X:00.0 ecc_agg_corrected=0 ecc_agg_uncorrected=0 enc=0 dec=0 "
                    "mem_reserved=566231040 mem_temp=58 pcie_replay=0 nvl_crc_flit=0 nvl_crc_data=0 nvl_replay=0 "
                    "nvl_recovery=0 remap_cor=0 remap_unc=0 remap_pending=0 remap_failure=0\n"
                    % (i, 80 + i, 10 ** 9 + i, 0x18 + 16 * i))
    return fixture


def memory_kib(pid):
    status = open("/proc/%d/status" % pid).read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
    hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))
    return rss, hwm


def measure(name, argv, port, env, scrapes, clients):
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_up(port, proc)
        scrape_latencies(port, 20)   # warm up
        p50, p99, size = scrape_latencies(port, scrapes)
        served, secs = concurrent(port, clients)
        rss, hwm = memory_kib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return {"name": name, "p50": p50, "p99": p99, "size": size, "served": served, "secs": secs, "rss": rss, "hwm": hwm}


def main(argv):
    prog = "exporter_bench"
    pos, opts = benchcli.parse(argv, prog, __doc__, values=("--scrapes", "--clients", "--compat"))
    binary = os.path.abspath(benchcli.binary(prog, pos))
    scrapes = benchcli.number(prog, opts, "--scrapes", 1000)
    clients = benchcli.number(prog, opts, "--clients", 200)
    compat = ["--compat", opts["--compat"]] if "--compat" in opts else []
    fake = os.environ.get("CFIT_FAKENVML") or os.path.join(os.path.dirname(binary), "tests", "libfakenvml.so")
    if not os.path.exists(fake):
        raise SystemExit("no fake NVML library at %s (build with tests, or set CFIT_FAKENVML)" % fake)
    tmp = tempfile.mkdtemp(prefix="cfit-bench.")
    fixture = write_fixture(tmp)
    env = dict(os.environ, FAKENVML_FIXTURE=fixture)
    port = free_port()
    results = [measure("clusterfit exporter (8 fake GPUs, real /sys, /proc)",
                       [binary, "exporter", "-q", "--web.listen-address", "127.0.0.1:%d" % port,
                        "--nvml-library", fake, "--job-socket", os.path.join(tmp, "job.sock")] + compat,
                       port, env, scrapes, clients)]
    ne = "/usr/bin/prometheus-node-exporter"
    if os.path.exists(ne):
        port = free_port()
        results.append(measure("prometheus-node-exporter (Debian, default collectors)",
                               [ne, "--web.listen-address=127.0.0.1:%d" % port], port, env, scrapes, clients))
    else:
        print("prometheus-node-exporter not installed: no side-by-side reference")
    print("%-56s %9s %9s %9s %12s %10s %10s" % ("exporter", "p50 ms", "p99 ms", "bytes", "concurrent", "RSS MB", "peak MB"))
    for r in results:
        print("%-56s %9.2f %9.2f %9d %8d/%-3d %10.1f %10.1f" % (
            r["name"], r["p50"] * 1e3, r["p99"] * 1e3, r["size"], r["served"], clients, r["rss"] / 1024,
            r["hwm"] / 1024))
    c = results[0]
    if len(results) > 1:
        n = results[1]
        print("ratios (node-exporter / clusterfit): p99 latency %.1fx, RSS %.1fx" % (n["p99"] / c["p99"], n["rss"] / c["rss"]))
    met = [("RSS <= 10 MB", c["hwm"] / 1024 <= 10), ("p99 scrape <= 5 ms", c["p99"] <= 0.005),
           ("%d concurrent clients served" % clients, c["served"] == clients)]
    for what, ok in met:
        print("target %-32s %s" % (what, "met" if ok else "MISSED"))
    subprocess.run(["rm", "-rf", tmp])
    return 0 if all(ok for _, ok in met) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
