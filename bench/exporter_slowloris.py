#!/usr/bin/env python3
"""exporter_slowloris.py - `clusterfit exporter` under slow half-open connections (issue 16).

Usage: python3 bench/exporter_slowloris.py BUILD/clusterfit [--slow 1000] [--addresses 200]
                                           [--scrapes 100] [--big 10000] [--hold 3]

Starts the exporter on loopback with 8 GPUs from the fake NVML library (as exporter_bench.py),
then attacks it slowloris-style: --slow connections from --addresses loopback source addresses
(127.0.0.2 and up) each send a request line and one header, then one more header line a second,
never finishing; a connection the exporter drops is opened again at once, so the attack holds its
count. With the attack running for --hold seconds it measures one fresh scrape (time) and
--scrapes concurrent scrapes (how many get 200). Then the same with --big slow connections:
the exporter must stay up and its peak resident memory (VmHWM) stay under 64 MB.
Targets: >= 90% of the concurrent scrapes served, a fresh scrape in < 1 s, peak RSS <= 64 MB.
The client needs about --big open files: the soft RLIMIT_NOFILE is raised to the hard one.
Exit status 0 when every target is met, 1 otherwise, 2 on bad usage.
"""
import errno
import http.client
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchcli  # noqa: E402
from exporter_bench import free_port, memory_kib, wait_up, write_fixture  # noqa: E402


class Attack:
    """count slow connections from `addresses` source addresses, kept open by one thread."""

    def __init__(self, port, count, addresses):
        self.port, self.count, self.addresses = port, count, addresses
        self.sel = selectors.DefaultSelector()
        self.stop = False
        self.opened = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self, i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind(("127.0.0.%d" % (2 + i % self.addresses), 0))
            s.connect_ex(("127.0.0.1", self.port))
        except OSError:
            s.close()
            return
        self.opened += 1
        self.sel.register(s, selectors.EVENT_WRITE, [i, 0])

    def run(self):
        for i in range(self.count):
            self.open_one(i)
        last_trickle = time.time()
        while not self.stop:
            for key, ev in self.sel.select(timeout=0.2):
                s, data = key.fileobj, key.data
                try:
                    if ev & selectors.EVENT_WRITE and data[1] == 0:
                        s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                        data[1] = 1
                        self.sel.modify(s, selectors.EVENT_READ, data)
                        continue
                    if s.recv(4096):
                        continue
                except OSError:
                    pass
                self.sel.unregister(s)   # dropped by the exporter (or connect failed): again
                s.close()
                self.open_one(data[0])
            if time.time() - last_trickle >= 1:
                last_trickle = time.time()
                for key in list(self.sel.get_map().values()):
                    if key.data[1]:
                        try:
                            key.fileobj.send(b"X-Slow: 1\r\n")
                        except OSError:
                            pass
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()

    def live(self):
        return len(self.sel.get_map())


def one_scrape(port, timeout):
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        r.read()
        conn.close()
        return r.status, time.perf_counter() - t0
    except (OSError, http.client.HTTPException):
        return 0, time.perf_counter() - t0


def concurrent(port, n, timeout=5.0):
    codes = []
    lock = threading.Lock()

    def one():
        code, _ = one_scrape(port, timeout)
        with lock:
            codes.append(code)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(1 for c in codes if c == 200), sum(1 for c in codes if c == 503)


def under_attack(port, proc, slow, addresses, scrapes, hold):
    a = Attack(port, slow, addresses)
    a.thread.start()
    time.sleep(hold)
    code, fresh = one_scrape(port, 10)
    served, busy = concurrent(port, scrapes)
    live = a.live()
    a.stop = True
    a.thread.join(10)
    alive = proc.poll() is None
    return {"slow": slow, "live": live, "fresh_code": code, "fresh_s": fresh, "served": served, "busy": busy,
            "alive": alive, "hwm_kib": memory_kib(proc.pid)[1] if alive else 0}


def main(argv):
    prog = "exporter_slowloris"
    pos, opts = benchcli.parse(argv, prog, __doc__, values=("--slow", "--addresses", "--scrapes", "--big", "--hold"))
    binary = os.path.abspath(benchcli.binary(prog, pos))

    def opt(name, default):
        return benchcli.number(prog, opts, name, default, type(default))

    slow, addresses, scrapes, big, hold = (opt("--slow", 1000), opt("--addresses", 200), opt("--scrapes", 100),
                                           opt("--big", 10000), opt("--hold", 3.0))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(slow, big) + scrapes + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
        if hard < want:
            print("RLIMIT_NOFILE hard limit %d: --big scaled to %d" % (hard, hard - scrapes - 256))
            big = hard - scrapes - 256
    fake = os.environ.get("CFIT_FAKENVML") or os.path.join(os.path.dirname(binary), "tests", "libfakenvml.so")
    if not os.path.exists(fake):
        raise SystemExit("no fake NVML library at %s (build with tests, or set CFIT_FAKENVML)" % fake)
    tmp = tempfile.mkdtemp(prefix="cfit-slow.")
    env = dict(os.environ, FAKENVML_FIXTURE=write_fixture(tmp))
    port = free_port()
    proc = subprocess.Popen([binary, "exporter", "-q", "--web.listen-address", "127.0.0.1:%d" % port,
                             "--nvml-library", fake, "--no-collector.disk", "--no-collector.netdev",
                             "--no-collector.infiniband"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_up(port, proc)
        results = [under_attack(port, proc, slow, addresses, scrapes, hold)]
        if big:
            results.append(under_attack(port, proc, big, addresses, scrapes, hold))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        subprocess.run(["rm", "-rf", tmp])
    print("%8s %8s %12s %14s %9s %9s %9s" % ("slow", "held", "fresh scrape", "concurrent 200", "503", "up", "peak MB"))
    for r in results:
        print("%8d %8d %9.3f s %3s %8d/%-4d %9d %9s %9.1f" % (
            r["slow"], r["live"], r["fresh_s"], r["fresh_code"], r["served"], scrapes, r["busy"],
            "yes" if r["alive"] else "NO", r["hwm_kib"] / 1024))
    first = results[0]
    met = [("%d slow: >= 90%% of %d scrapes served" % (slow, scrapes), first["served"] >= 0.9 * scrapes),
           ("%d slow: fresh scrape < 1 s" % slow, first["fresh_code"] == 200 and first["fresh_s"] < 1)]
    for r in results:
        met.append(("%d slow: up, peak RSS <= 64 MB" % r["slow"], r["alive"] and r["hwm_kib"] <= 64 * 1024))
    for what, ok in met:
        print("target %-44s %s" % (what, "met" if ok else "MISSED"))
    return 0 if all(ok for _, ok in met) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
