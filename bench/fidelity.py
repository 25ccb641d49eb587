#!/usr/bin/env python3
"""bench/fidelity.py - how well `clusterfit plan` predicts published training runs.

Every row of bench/data/calibration.csv (a copy of the public measurements with their
sources) is run through `clusterfit plan --json` with the row's model, GPU, GPU count,
batch and every stated layout dimension fixed; unstated dimensions are searched.  The
measured tokens/s per GPU is read from the row (directly, from the iteration time, or
from the published TFLOP/s or MFU with the FLOP formula that publication used).

Prints per-row and summary |error| of tokens/s per GPU, and whether every published
run fits in memory.  Usage: bench/fidelity.py [path/to/clusterfit] [--csv FILE] [--emit-table FILE]
--emit-table FILE writes the per-row results as a catalog file (data/fidelity.json: the
"fidelity" entries `plan` quotes as its model check, docs/plan.md) instead of the report.
Exit status: 0 (a report, met or not), 2 on bad usage.
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import fidelity_args

HERE = os.path.dirname(os.path.abspath(__file__))

GPU_MAP = [
    (r"A100.*40", "a100-sxm-40g"),
    (r"A100", "a100-sxm-80g"),     # A100-SXM4-80GB, "A100 80GB", vTrain's "A100*" (80 GB: 175B rows need it)
    (r"H100", "h100-sxm"),
    (r"B200", "b200"),
]


def framework_of(row):
    """The catalog framework entry for the row's framework column (docs/performance.md)."""
    fw = row["framework"]
    if "ZeRO-3" in fw or "ZeRO-3" in row["dp_sharding"] and "DeepSpeed" in fw:
        return "deepspeed-zero3-2021"
    if row["source"] in ("NARA21", "VTRAIN"):        # Megatron-LM 2021, Megatron-DeepSpeed
        return "megatron-lm-2021"
    if "LLM Foundry" in fw:
        return "llm-foundry"
    return "megatron-core"                            # Megatron-Core r0.8, NeMo


def num(text):
    """First number in a cell ("~50257 (padded)" -> 50257), or None."""
    m = re.search(r"\d+(\.\d+)?", text or "")
    return float(m.group(0)) if m else None


def intval(text):
    t = (text or "").strip()
    return int(t) if re.fullmatch(r"\d+", t) else None


def gpu_name(text):
    for pat, name in GPU_MAP:
        if re.search(pat, text):
            return name
    raise ValueError("unmapped gpu " + text)


def model_of(row):
    name = row["model"]
    swiglu = "LLAMA" in name.upper()
    tied = not (swiglu or "Nemotron" in name or row["source"] == "MEGLM-H100")
    return {
        "name": "calib-" + row["id"].lower(),
        "layers": int(row["layers"]), "hidden_size": int(row["hidden"]),
        "ffn_hidden_size": int(row["ffn_hidden"]), "num_heads": int(row["heads"]),
        "num_kv_heads": int(row["kv_heads"]), "vocab_size": int(num(row["vocab"])),
        "seq_len": int(row["seq_len"]), "mlp": "swiglu" if swiglu else "gelu",
        "tied_embeddings": tied,
        "source": "%s %s" % (row["source"], row["source_locator"]),
    }


def megatron_flops_per_token(m, seq):
    """Megatron-LM num_floating_point_operations before 2025-03 (non-causal attention)."""
    L, h, f = m["layers"], m["hidden_size"], m["ffn_hidden_size"]
    g_a = m["num_kv_heads"] / m["num_heads"]
    gm = 1.5 if m["mlp"] == "swiglu" else 1.0
    return 12 * L * h * h * (1 + g_a + seq / h + f / h * gm + m["vocab_size"] / (2 * L * h))


def narayanan_flops_per_token(m, seq):
    """Narayanan et al. 2021 eq. (3) per token: 96 L h^2 (1 + s/6h + V/16Lh) (counts recompute)."""
    L, h, V = m["layers"], m["hidden_size"], m["vocab_size"]
    return 96 * L * h * h * (1 + seq / (6 * h) + V / (16 * L * h))


def measured(row, m):
    seq, gpus, gbs = int(row["seq_len"]), int(row["num_gpus"]), int(row["gbs"])
    if num(row["meas_tokens_per_s_per_gpu"]):
        return num(row["meas_tokens_per_s_per_gpu"]), "published tokens/s"
    if num(row["meas_iter_time_s"]):
        return gbs * seq / (num(row["meas_iter_time_s"]) * gpus), "iteration time"
    if num(row["meas_tflops_per_gpu"]) and row["source"] == "NARA21":
        return num(row["meas_tflops_per_gpu"]) * 1e12 / narayanan_flops_per_token(m, seq), "TFLOP/s, eq. 3"
    if num(row["meas_tflops_per_gpu"]):
        return num(row["meas_tflops_per_gpu"]) * 1e12 / megatron_flops_per_token(m, seq), "TFLOP/s, Megatron"
    if num(row["meas_mfu_pct"]):
        return num(row["meas_mfu_pct"]) / 100 * 989e12 / megatron_flops_per_token(m, seq), "MFU x 989"
    return None, None


def args_of(row, model_path):
    a = ["plan", "--json", "--top", "1", "--model", model_path, "--gpu", gpu_name(row["gpu"]),
         "--gpus", row["num_gpus"], "--gbs", row["gbs"], "--seq", row["seq_len"], "--tokens", "1T"]
    for col, opt in (("tp", "--tp"), ("pp", "--pp"), ("dp", "--dp"), ("cp", "--cp"), ("vp", "--vp"),
                     ("mbs", "--mbs")):
        v = intval(row[col])
        if v:
            a += [opt, str(v)]
    rec = row["recompute"].lower()
    if rec.startswith("full"):
        a += ["--recompute", "full"]
    elif rec.startswith("none"):
        a += ["--recompute", "none"]
    sp = row["seq_parallel"].lower().strip()
    if sp == "no":
        a += ["--sp", "off"]
    elif sp == "yes":
        a += ["--sp", "on"]
    shard = row["dp_sharding"].lower()
    if shard.startswith("none"):
        a += ["--zero", "0"]
    elif "zero-3" in shard or "full_shard" in shard:
        a += ["--zero", "3"]
    a += ["--framework", framework_of(row)]
    if "fp8" in row["precision"].lower():
        a += ["--precision", "fp8"]
    return a


def run_row(binary, row, tmpdir):
    m = model_of(row)
    path = os.path.join(tmpdir, m["name"] + ".json")
    with open(path, "w") as f:
        json.dump(m, f)
    meas, how = measured(row, m)
    args = args_of(row, path)
    p = subprocess.run([binary] + args, capture_output=True, text=True)
    res = {"id": row["id"], "measured": meas, "how": how, "args": args}
    if p.returncode != 0:
        res["error"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
        return res
    doc = json.loads(p.stdout)
    plan = doc["plans"][0]
    res.update(predicted=plan["tokens_per_s_per_gpu"], fits=plan["fits"], plan=plan,
               params=doc["workload"]["params"])
    return res


def table_entry(row, r):
    """One catalog "fidelity" entry (src/core/catalog.c) for a row that planned."""
    e = (r["predicted"] - r["measured"]) / r["measured"]
    return {"name": row["id"], "gpu": gpu_name(row["gpu"]), "gpus": int(row["num_gpus"]),
            "params": float("%.4g" % r["params"]), "framework": framework_of(row),
            "error": round(e, 4),
            "source": "%s %s via bench/fidelity.py (bench/data/calibration.csv)" % (row["source"],
                                                                                 row["source_locator"])}


def emit_table(path, rows, results):
    entries = [table_entry(row, r) for row, r in zip(rows, results)
               if r.get("measured") is not None and "error" not in r]
    return fidelity_args.write_table(path, entries)


def main():
    binary, csv_path, verbose, table = fidelity_args.parse(sys.argv[1:], "calibration.csv", "fidelity", __doc__)
    rows = list(csv.DictReader(open(csv_path, newline="")))
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        results = list(ex.map(lambda r: run_row(binary, r, tmp), rows))
    if table:
        return emit_table(table, rows, results)
    print("# clusterfit fidelity: tokens/s per GPU, predicted vs published (%s)" % os.path.relpath(csv_path))
    print("%-18s %-12s %11s %11s %8s %5s  %s" % ("id", "gpu", "measured", "predicted", "error", "fits", "layout / note"))
    errs, fits, failed = [], 0, []
    for r in results:
        if r.get("measured") is None or "error" in r:
            failed.append(r)
            print("%-18s %-12s %11s %11s %8s %5s  %s" % (r["id"], "", "%.0f" % (r["measured"] or 0), "-", "-", "-",
                                                       r.get("error", "no measurement")))
            continue
        e = (r["predicted"] - r["measured"]) / r["measured"]
        errs.append(abs(e))
        fits += bool(r["fits"])
        p = r["plan"]
        rec = p["recompute"] + (":%d" % p["recompute_layers"] if p["recompute"] == "block" else "")
        lay = "tp%d pp%d dp%d cp%d vp%d mbs%d z%d %s sp%d" % (p["tp"], p["pp"], p["dp"], p["cp"], p["vp"],
                                                         p["micro_batch"], p["zero"], rec,
                                                         p["sequence_parallel"])
        print("%-18s %-12s %11.0f %11.0f %+7.1f%% %5s  %s" % (r["id"], p["gpu"], r["measured"], r["predicted"],
                                                          100 * e, "yes" if r["fits"] else "NO", lay))
        if verbose:
            print("    " + " ".join(r["args"]))
    n = len(errs)
    med = statistics.median(errs) if errs else float("nan")
    worst = max(errs) if errs else float("nan")
    within = sum(1 for e in errs if e <= 0.25)
    print()
    print("rows: %d evaluated, %d failed to plan" % (n, len(failed)))
    print("median |error|: %.1f%%   (target <= 10%%: %s)" % (100 * med, "met" if med <= 0.10 else "MISSED"))
    print("max |error|:    %.1f%%   rows within 25%%: %d of %d (target all: %s)" %
          (100 * worst, within, n, "met" if within == n and not failed else "MISSED"))
    print("fits in memory: %d of %d published runs (target all: %s)" %
          (fits, len(rows), "met" if fits == len(rows) else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
