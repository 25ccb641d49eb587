#!/usr/bin/env python3
"""sim_fidelity.py - how well `clusterfit sim` predicts published nccl-tests results.

Usage: python3 bench/sim_fidelity.py [path/to/clusterfit] [-v] [--csv FILE]
(default binary build/release/clusterfit; -v prints each row's command; exit 0 with a report, met or
not, 2 on bad usage)

For every row of bench/data/collectives.csv (one published nccl-tests measurement, with its source
and URL) the hardware it ran on is named to the NCCL engine - `sim --gpu G --nodes N
--gpus-per-node g --fabric F --nics K --collective C --size S --json`, plus `--algo`/`--proto` when
the run forced NCCL_ALGO/NCCL_PROTO, `--p2p no` when P2P was off and `--gpus-per-process N` when one
process drove N GPUs (nccl-tests -g N) - and the predicted busbw is
compared with the measured one.  Prints each row's |error|, then the median |error| and the share
of rows within 25% for every row and by group: single-node NVLink-class (NVLink, NVSwitch, xGMI),
multi-node (any scale-out fabric), PCIe-only nodes, and messages under 1 MiB (any hardware).
Targets (issue 12): median <= 10%, >= 90% of rows within 25%, every row expressible.
The figures are deterministic: the machine running the script does not change them.
"""
import csv
import json
import statistics
import subprocess
import sys

import benchcli

PCIE_GPUS = {"rtx2080ti", "rtx3090", "rtx4090", "rtx5090", "t4", "l4", "l40s", "a6000", "h100-pcie", "a100-pcie",
             "v100-pcie"}
SMALL = 1 << 20


def group(row):
    if int(row["nodes"]) > 1:
        return "multi-node"
    return "pcie" if row["gpu"] in PCIE_GPUS else "nvlink"


def args_for(row):
    a = ["sim", "--gpu", row["gpu"], "--nodes", row["nodes"], "--gpus-per-node", row["gpus_per_node"],
         "--collective", row["collective"], "--size", row["size_bytes"], "--json"]
    if int(row["nodes"]) > 1:
        a += ["--fabric", row["fabric"], "--nics", row["nics_per_node"]]
    p2p_coll = row["collective"] in ("alltoall", "sendrecv")
    if row["algo"] and not p2p_coll:     # NCCL_ALGO does not steer NCCL's point-to-point path
        a += ["--algo", row["algo"].lower()]
    elif "NCCL_NVLS_ENABLE=0" in row["note"] or "NVLS disabled" in row["note"]:
        a += ["--algo", "^nvls,nvlstree"]   # the run turned NVLink SHARP off
    if row["proto"]:
        a += ["--proto", row["proto"].lower()]
    if row["p2p"]:
        a += ["--p2p", row["p2p"]]
    if row.get("gpus_per_process") and int(row["gpus_per_process"]) > 1:
        a += ["--gpus-per-process", row["gpus_per_process"]]   # the run's nccl-tests -g
    return a


def bus_factor(coll, n):
    return 2.0 * (n - 1) / n if coll == "allreduce" else 1.0 if coll == "sendrecv" else (n - 1) / n


def measured_busbw(row):
    """busbw from the printed time where the source gives it (busbw's two decimals lose small
    sizes), else the printed busbw; None when neither carries a value."""
    t = row.get("time_us", "")
    if t:
        n = int(row["nodes"]) * int(row["gpus_per_node"])
        return int(row["size_bytes"]) / (float(t) * 1e-6) * bus_factor(row["collective"], n) / 1e9
    b = float(row["busbw_gbs"])
    return b if b > 0 else None


def predict(binary, row):
    p = subprocess.run([binary] + args_for(row), capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
    r = json.loads(p.stdout)["results"][0]
    return r, None


def summary(name, errs, total):
    if not errs:
        return f"{name:<26} {0:>4} of {total:<4} rows expressible"
    within = sum(e <= 25 for e in errs)
    return (f"{name:<26} {len(errs):>4} rows  median |error| {statistics.median(errs):5.1f}%  "
            f"within 25%: {within}/{len(errs)} ({100.0 * within / len(errs):.0f}%)  max {max(errs):.1f}%")


def main(argv):
    pos, opts = benchcli.parse(argv, "sim_fidelity", __doc__, values=("--csv",), flags=("-v",))
    binary = benchcli.binary("sim_fidelity", pos, benchcli.RELEASE_BINARY)
    verbose = "-v" in opts
    path = benchcli.data_csv("sim_fidelity", opts, "collectives.csv")
    rows = list(csv.DictReader(open(path, newline="")))
    groups = {"all": [], "nvlink": [], "multi-node": [], "pcie": [], "small (< 1 MiB)": []}
    counts = {k: 0 for k in groups}
    failed = []
    unscored = 0
    print(f"# sim_fidelity: {len(rows)} published nccl-tests rows from {path}")
    print(f"# {'id':<16} {'coll':<13} {'gpu':<12} {'nodes':>5} {'size':>12} {'measured':>9} {'predicted':>9} "
          f"{'error':>7}  algo/proto")
    for row in rows:
        g = group(row)
        keys = ["all", g] + (["small (< 1 MiB)"] if int(row["size_bytes"]) < SMALL else [])
        scored = not (row.get("scored") or "").startswith("no")   # the csv's "no: why" keeps a row out
        if scored:
            for k in keys:
                counts[k] += 1
        r, err = predict(binary, row)
        if r is None:
            failed.append((row["id"], err))
            print(f"  {row['id']:<16} not expressible: {err}")
            continue
        measured = measured_busbw(row)
        if measured is None:
            failed.append((row["id"], "no measured busbw (0.00 printed and no time_us)"))
            print(f"  {row['id']:<16} no measured value: busbw printed as {row['busbw_gbs']} and no time_us")
            continue
        pred = r["busbw_gbs"]
        e = 100.0 * abs(pred - measured) / measured
        if scored:
            for k in keys:
                groups[k].append(e)
        else:
            unscored += 1
        mark = ("" if e <= 25 else "  <-- over 25%") if scored else "  (not scored: " + row["scored"][3:].strip() + ")"
        print(f"  {row['id']:<16} {row['collective']:<13} {row['gpu']:<12} {row['nodes']:>5} {row['size_bytes']:>12} "
              f"{measured:9.2f} {pred:9.2f} {(pred - measured) / measured * 100:+6.1f}%  {r['algo']}/{r['proto']}{mark}")
        if verbose:
            print("      clusterfit " + " ".join(args_for(row)))
    print("#")
    if unscored:
        print(f"# {unscored} rows printed but not scored (their source reports the run as faulty; column 'scored')")
    for k, errs in groups.items():
        print("# " + summary(k, errs, counts[k]))
    errs = groups["all"]
    if errs:
        med = statistics.median(errs)
        within = sum(e <= 25 for e in errs) / len(errs)
        print(f"# targets: median <= 10% ({'met' if med <= 10 else 'missed'}: {med:.1f}%), >= 90% within 25% "
              f"({'met' if within >= 0.9 else 'missed'}: {100 * within:.0f}%), every row expressible "
              f"({'met' if not failed else 'missed'}: {len(rows) - len(failed)} of {len(rows)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
