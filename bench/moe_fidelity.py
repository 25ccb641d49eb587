#!/usr/bin/env python3
"""bench/moe_fidelity.py - how well `clusterfit plan` predicts published MoE training runs.

Every row of bench/data/moe-calibration.csv (a copy of the public MoE measurements with their
sources, issue 13) that states its layout is run through `clusterfit plan --json` with the row's
model (a catalog entry, or a Hugging Face config.json under bench/data/hf/), GPU, GPU count,
sequence, batch and published layout fixed (tp, pp, dp, ep, etp, cp, vp, micro-batch, precision,
recompute where it maps, Megatron's module lists as --recompute modules:LIST); unstated
dimensions are searched.  The framework entry follows the
row's dispatcher (NCCL all-to-all, DeepEP, HybridEP), and the row's notes say whether the
all-to-all overlapped compute (A2A_OVERLAP=1, "1f1b A2A overlap"), which CUDA graphs it ran
(--cuda-graphs, docs/model.md §5.3) and whether routing was forced balanced or natural
(docs/model.md §5.12).

The measured tokens/s per GPU is the row's own, or from its iteration time, or from its
published model TFLOP/s per GPU through the FLOP formula that source used: Megatron-Core's
num_floating_point_operations (routed top-k + shared experts, causal attention at half, MLA
terms, no router, fwd + bwd = 3x; megatron/training/training.py).

Prints per-row and median |error| of tokens/s per GPU, the share within 25% and how many runs fit
in memory.  Usage: bench/moe_fidelity.py [path/to/clusterfit] [--csv FILE] [-v] [--emit-table FILE]
--emit-table FILE writes the per-row results as catalog "fidelity" entries with "moe": true
(data/moe-fidelity.json: what `plan` quotes as its model check for an MoE model, docs/plan.md)
instead of the report.
Exit status: 0 (a report, met or not), 2 on bad usage.
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import fidelity_args

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {   # the csv's model column -> a catalog entry or a config.json under bench/data/hf
    "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
    "GPT-OSS-20B": "gpt-oss-20b",
    "DeepSeek-V3": "deepseek-v3",
    "Mixtral-8x7B": "mixtral-8x7b",
    "Moonlight-16B-A3B": os.path.join(HERE, "data", "hf", "moonlight-16b-a3b.json"),
    "Kimi-K2": "kimi-k2",
    "GPT-OSS-120B": "gpt-oss-120b",
    "Mixtral-8x22B": "mixtral-8x22b",
    "Llama4-Scout": "llama4-scout",
    "Llama4-Maverick": "llama4-maverick",
}

# Models with multi-token-prediction modules: how many their catalog entry trains (docs/model.md §3.9)
MTP_MODELS = {"DeepSeek-V3": 1}

GPU_MAP = [(r"GB300", "gb300"), (r"GB200", "gb200"), (r"B300", "b300"), (r"B200", "b200"),
           (r"H800", "h800"), (r"H200", "h200-sxm"), (r"H100", "h100-sxm")]

# Natural (unforced, dropless) routing: the busiest expert's tokens over the mean.  Measured by
# the same source on the same layout: Megatron-MoE-ModelZoo best_practice/qwen3 long-context
# table, 16K row, forced balance 295 vs dropless 237 TFLOP/s (MOEPUB-ZOOQ3-06/07): with the
# experts' compute and all-to-all a share s of the step, 295/237 = 1 + s (imb - 1).  The value
# is the planner's --moe-imbalance for rows the csv marks natural (docs/model.md §5.12).
NATURAL_IMBALANCE = 1.5


def num(text):
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


def mtp_of(r):
    """The MTP modules a row trained: none where the source says 'w/o MTP', where its published
    pipeline layout (Megatron-Core --pipeline-model-parallel-layout) has no 'm', on NeMo AutoModel
    (its DeepSeek-V3 model class, nemo_automodel/components/models/deepseek_v3, builds no MTP
    module) and on NeMo 2.0 (its DeepSeekV3Config, nemo/collections/llm/gpt/model/deepseek.py, sets
    no mtp_num_layers); else the model's own (DeepSeek-V3: 1, as its config.json and
    Megatron-Bridge's recipes, recipes/deepseek/)."""
    if r["model"] not in MTP_MODELS:
        return 0
    text = " ".join((r["source_locator"], r["notes"]))
    layout = pipeline_layout(r["notes"])
    if not layout and SAME_LAYOUT in r["notes"]:
        layout = SHARED_LAYOUTS.get(r["source"])
    fw = r["framework"].lower()
    if "w/o MTP" in text or (layout and "m" not in layout) or "automodel" in fw or fw.startswith("nemo 2.0"):
        return 0
    return MTP_MODELS[r["model"]]


def pipeline_layout(text):
    """A Megatron-Core pipeline layout string (E...L) in a row's notes, or None."""
    found = re.search(r"\bE[\w|*()]*L\b", text)
    return found.group(0) if found else None


SAME_LAYOUT = "Same parallel layout in all rows"
SHARED_LAYOUTS = {}   # a source's one layout, published on one of its rows that say SAME_LAYOUT


def megatron_flops_per_token(r, seq):
    """Megatron-Core num_floating_point_operations / (batch x seq): routed top-k + shared experts,
    dense layers, GQA or MLA attention with causal scores at half, logits; 3 x 2 per MAC.  Each MTP
    module counts as one more layer of the last layer's kind, its norms and 2h x h projection and
    its own logits (megatron/training/training.py)."""
    L, h, V = int(r["layers"]), int(r["hidden"]), int(num(r["vocab"]))
    moe_l = int(r["moe_layers"] or L)
    mtp = mtp_of(r)
    L, moe_l = L + mtp, moe_l + mtp   # every MTP model here ends in an MoE layer
    dense_l = L - moe_l
    heads, kvh = int(r["heads"]), int(r["kv_heads"] or r["heads"])
    d = int(r["head_dim"] or h // heads)
    f_moe, k = int(r["moe_ffn_hidden"]), int(r["top_k"])
    f_dense = int(r["dense_ffn_hidden"] or 0)
    shared = int(r["shared_experts"] or 0) * f_moe
    gm = 1.5   # every model here is gated (SwiGLU)
    mlp = 12 * h * gm * (f_dense * dense_l + (f_moe * k + shared) * moe_l)
    if r["attention"] == "mla":
        qk, rope, v = 128, 64, 128   # DeepSeek-V3 / Moonlight (csv notes)
        qr, kvr = int(r["q_lora_rank"] or 0), int(r["kv_lora_rank"])
        q = qr * (h + heads * (qk + rope) + 1) if qr else h * heads * (qk + rope)
        attn = 6 * L * (q + kvr * (h + heads * (qk + v) + 1) + h * rope + heads * v * h +
                        seq * heads * (qk + rope) / 2 + seq * heads * v / 2)
    else:
        qp, kvp = d * heads, d * kvh
        attn = 6 * L * (h * (qp + 2 * kvp) + qp * seq / 2 * 2 + qp * h)
    return mlp + attn + 6 * mtp * (3 * h + 2 * h * h) + 6 * h * V * (1 + mtp)


def measured(r):
    seq, gpus = int(r["seq_len"]), int(r["num_gpus"])
    if num(r["meas_tokens_per_s_per_gpu"]):
        return num(r["meas_tokens_per_s_per_gpu"]), "published tokens/s"
    if num(r["meas_iter_time_s"]) and intval(r["gbs"]):
        return int(r["gbs"]) * seq / (num(r["meas_iter_time_s"]) * gpus), "iteration time"
    if num(r["meas_tflops_per_gpu"]):
        return num(r["meas_tflops_per_gpu"]) * 1e12 / megatron_flops_per_token(r, seq), "TFLOP/s, Megatron"
    return None, None


def framework_of(r):
    if "automodel" in r["framework"].lower():
        return "nemo-automodel"
    d = r["dispatcher"].lower()
    if "hybridep" in d:
        return "megatron-core-hybridep"
    if "deepep" in d:
        return "megatron-core-deepep"
    return "megatron-core"


def recompute_of(r):
    """full / none map; a Megatron module list (selective: layernorm, moe_act, mla_up_proj, ...)
    maps to --recompute modules:LIST.  The planner does not have Megatron's MoE paged stash
    (activations paged out to host memory, set with full-iteration CUDA graphs): a recipe with one
    keeps fewer activations than the planner models, so its recomputation is searched.
    Optimizer-state offloading (--offload optimizer) and fine-grained activation offloading
    (--offload-modules) it has: offload_of, offload_modules_of.  A published list that does not fit
    the planner's memory counts against the memory target, and the row's speed is then judged at
    the least recomputation that fits (run_row)."""
    rec = r["recompute"].lower()
    if "paged stash" in rec:
        return None
    if rec.startswith("full"):
        return "full"
    if rec.startswith("none"):
        return "none"
    if rec.startswith("selective:"):
        mods = selective_modules(rec[len("selective:"):].split("+")[0])
        if mods:
            return "modules:" + ",".join(mods)
    return None


def offload_modules_of(r):
    """The module list of 'fine-grained activation offloading (a, b)' in the recompute cell, as
    --offload-modules takes it; None without one."""
    m = re.search(r"fine-grained activation offloading \(([^)]*)\)", r["recompute"].lower())
    return ",".join(w.strip() for w in m.group(1).split(",")) if m else None


def offload_of(r):
    """'optimizer' where the source offloads the optimizer states to host memory (Megatron's
    --optimizer-cpu-offload; the Megatron-Core MoE report's Table 18 on GB200), else None."""
    return "optimizer" if "optimizer-state offload" in r["recompute"].lower() else None


# The source's spelling of a Megatron --recompute-modules entry -> Megatron's name
MODULE_WORDS = (
    (r"\bmla[ _]up_?proj\b", "mla_up_proj"),
    (r"\bmoe_act\b|(?<![\w_])act\b", "moe_act"),
    (r"\b(?:layernorm|rmsnorm|norm)\b", "layernorm"),
    (r"\bshared_experts\b", "shared_experts"),
    (r"\bmoe\b(?!_)", "moe"),
    (r"\bmlp\b", "mlp"),
    (r"\bcore_attn\b", "core_attn"),
)


def selective_modules(text):
    """Megatron's module names in a 'selective: a, b (note)' cell, in Megatron's order; None when
    the cell names something else (the search then picks the recomputation)."""
    text = re.sub(r"\([^)]*\)", " ", text)     # drop parenthesised notes: "(recipe)", "(dense layers)"
    found = [name for pat, name in MODULE_WORDS if re.search(pat, text)]
    return found or None


def args_of(r):
    a = ["plan", "--json", "--top", "1", "--model", MODELS[r["model"]], "--gpu", gpu_name(r["gpu"]),
         "--gpus", r["num_gpus"], "--gbs", r["gbs"], "--seq", r["seq_len"], "--tokens", "1T",
         "--framework", framework_of(r)]
    tp = intval(r["tp"]) or 1
    for col, opt in (("tp", "--tp"), ("pp", "--pp"), ("dp", "--dp"), ("cp", "--cp"), ("vp", "--vp"),
                     ("mbs", "--mbs"), ("ep", "--ep")):
        v = intval(r[col])
        if v:
            a += [opt, str(v)]
    # ETP: the published value, else 1 (Megatron-MoE-ModelZoo's scripts set ETP=1 unless stated)
    a += ["--etp", str(intval(r["etp"]) or 1)]
    if tp > 1:
        a += ["--sp", "on"]   # Megatron: MoE with TP needs SP
    rec = recompute_of(r)
    if rec:
        a += ["--recompute", rec]
    if offload_of(r):
        a += ["--offload", offload_of(r)]
    if offload_modules_of(r):
        a += ["--offload-modules", offload_modules_of(r)]
    if "fp8" in r["precision"].lower():
        a += ["--precision", "fp8"]
    notes = (r["notes"] + " " + r["source_locator"]).lower()
    if framework_of(r) == "nemo-automodel":
        # FSDP2 fully_shard over every DP rank (the page's FSDP column): weights, gradients and
        # optimizer states sharded, ZeRO-3; its YAMLs run torch's Interleaved1F1B when pp > 1
        a += ["--zero", "3"]
        if (intval(r["pp"]) or 1) > 1 and "interleaved1f1b" in notes:
            a += ["--schedule", "interleaved"]
    if "a2a_overlap=1" in notes or "a2a overlap" in notes:
        a += ["--moe-overlap", "on"]
    graphs = cuda_graphs_of(r)
    if graphs != "not stated":
        a += ["--cuda-graphs", graphs]
    if r["model"] in MTP_MODELS and mtp_of(r) != MTP_MODELS[r["model"]]:
        a += ["--mtp", str(mtp_of(r))]
    if re.search(r"natural routing|natural \(not forced\) routing", notes):
        a += ["--moe-imbalance", str(NATURAL_IMBALANCE)]
    return a


def runnable(r):
    return intval(r["tp"]) is not None and intval(r["pp"]) is not None and intval(r["gbs"]) and r["seq_len"]


def run_row(binary, r):
    res = {"id": r["id"], "gpu": r["gpu"]}
    if not runnable(r):
        res["skip"] = "no published layout (tp/pp/batch/sequence)"
        return res
    meas, how = measured(r)
    args = args_of(r)
    res.update(measured=meas, how=how, args=args)
    p = subprocess.run([binary] + args, capture_output=True, text=True)
    fits = None
    if p.returncode == 2 and "nothing fits" in p.stderr and "--recompute" in args:
        # the published recomputation does not fit the model's memory: that row misses the
        # memory target, and its speed is judged at the least recomputation that fits
        i = args.index("--recompute")
        args = args[:i] + args[i + 2:]
        res.update(args=args, refit="published recompute does not fit; searched")
        fits = False
        p = subprocess.run([binary] + args, capture_output=True, text=True)
    if p.returncode != 0:
        res["error"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
        return res
    doc = json.loads(p.stdout)
    plan = doc["plans"][0]
    res.update(predicted=plan["tokens_per_s_per_gpu"], fits=plan["fits"] if fits is None else fits, plan=plan,
               params=doc["workload"]["params"], framework=framework_of(r))
    return res


def layout_of(p):
    rec = p["recompute"] + (":%d" % p["recompute_layers"] if p["recompute"] == "block" else
                            ":" + ",".join(p["recompute_modules"]) if p["recompute"] == "modules" else "")
    return "tp%d pp%d dp%d cp%d ep%d etp%d vp%d mbs%d z%d %s" % (
        p["tp"], p["pp"], p["dp"], p["cp"], p["ep"], p["etp"], p["vp"], p["micro_batch"], p["zero"], rec)


def planned(r):
    """Whether a row ran: it has a published layout, a measurement and a plan."""
    return "skip" not in r and r.get("measured") is not None and "error" not in r


def signed_error(r):
    """(predicted - measured) / measured of a planned row."""
    return (r["predicted"] - r["measured"]) / r["measured"]


def emit_table(path, rows, results):
    """One catalog "fidelity" entry (src/core/catalog.c) per row that planned."""
    out = []
    for row, r in zip(rows, results):
        if not planned(r):
            continue
        e = signed_error(r)
        out.append({"name": row["id"], "gpu": r["plan"]["gpu"], "gpus": r["plan"]["gpus"],
                    "params": float("%.4g" % r["params"]), "framework": r["framework"], "moe": True,
                    "error": round(e, 4),
                    "source": "%s %s via bench/moe_fidelity.py (bench/data/moe-calibration.csv)" % (
                        row["source"], row["source_locator"])})
    return fidelity_args.write_table(path, out)


def cuda_graphs_of(r):
    """The run's CUDA-graph capture as its notes first state it (Megatron-Bridge recipes, the
    Megatron-Core MoE report's appendix, Megatron-MoE-ModelZoo's scripts): full (full_iteration),
    scoped (Transformer Engine graphs of the attention module with the router and preprocessing:
    `plan --cuda-graphs scoped`), none, or not stated.  A Transformer Engine scope without "attn"
    (['moe_router','moe_preprocess']) graphs only the router and preprocessing, and counts as none."""
    notes = r["notes"]
    m = re.search(r"CUDA graphs?:?\s*(full_iteration|transformer_engine|none)([^.|]*)", notes, re.I)
    if not m:
        if re.search(r"TE CUDA graphs attn|attn, moe_router, moe_preprocess TE CUDA graphs", notes):
            return "scoped"
        return "not stated"
    kind = m.group(1).lower()
    if kind == "transformer_engine":
        return "scoped" if "attn" in m.group(2) else "none"
    return {"full_iteration": "full"}.get(kind, "none")


def print_groups(signed):
    """Signed median error and rows within 25% by model, GPU, framework entry and CUDA-graph capture, from the
    planned rows' (signed error, csv row) pairs."""
    print()
    print("by group (signed median error, rows within 25%):")
    for label, key in (("model", lambda row: row["model"]), ("gpu", lambda row: row["gpu"]),
                       ("framework", framework_of), ("cuda graphs", cuda_graphs_of)):
        groups = {}
        for e, row in signed:
            groups.setdefault(key(row), []).append(e)
        for name in sorted(groups):
            es = groups[name]
            print("  %-12s %-22s %3d rows  median %+6.1f%%  within 25%%: %d" %
                  (label, name, len(es), 100 * statistics.median(es), sum(1 for e in es if abs(e) <= 0.25)))


def main():
    binary, csv_path, verbose, table = fidelity_args.parse(sys.argv[1:], "moe-calibration.csv", "moe_fidelity", __doc__)
    rows = list(csv.DictReader(open(csv_path, newline="")))
    for r in rows:
        if SAME_LAYOUT in r["notes"] and pipeline_layout(r["notes"]):
            SHARED_LAYOUTS[r["source"]] = pipeline_layout(r["notes"])
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        results = list(ex.map(lambda r: run_row(binary, r), rows))
    if table:
        return emit_table(table, rows, results)
    print("# clusterfit MoE fidelity: tokens/s per GPU, predicted vs published (%s)" % os.path.relpath(csv_path))
    print("%-20s %-9s %9s %9s %8s %5s  %s" % ("id", "gpu", "measured", "predicted", "error", "fits", "layout / note"))
    errs, signed, fits, failed, skipped = [], [], 0, [], []
    for row, r in zip(rows, results):
        if "skip" in r:
            skipped.append(r)
            print("%-20s %-9s %9s %9s %8s %5s  skipped: %s" % (r["id"], r["gpu"], "-", "-", "-", "-", r["skip"]))
            continue
        if r.get("measured") is None or "error" in r:
            failed.append(r)
            print("%-20s %-9s %9.0f %9s %8s %5s  %s" % (r["id"], r["gpu"], r.get("measured") or 0, "-", "-", "-",
                                                     r.get("error", "no measurement")))
            continue
        e = signed_error(r)
        errs.append(abs(e))
        signed.append((e, row))
        fits += bool(r["fits"])
        print("%-20s %-9s %9.0f %9.0f %+7.1f%% %5s  %s (%s)" % (r["id"], r["plan"]["gpu"], r["measured"], r["predicted"],
                                                           100 * e, "yes" if r["fits"] else "NO",
                                                           layout_of(r["plan"]), r["how"]) +
              ("; %s" % r["refit"] if "refit" in r else ""))
        if verbose:
            print("    " + " ".join(r["args"]))
    n = len(errs)
    med = statistics.median(errs) if errs else float("nan")
    within = sum(1 for e in errs if e <= 0.25)
    print()
    print("rows: %d evaluated, %d failed to plan, %d skipped (no published layout)" % (n, len(failed), len(skipped)))
    print("median |error|: %.1f%%   (target <= 10%%: %s)" % (100 * med, "met" if med <= 0.10 else "MISSED"))
    share = within / n if n else 0.0
    print("rows within 25%%: %d of %d = %.0f%%   (target >= 90%%: %s)" %
          (within, n, 100 * share, "met" if share >= 0.9 and not failed else "MISSED"))
    print("fits in memory: %d of %d published runs (target all: %s)" %
          (fits, n + len(failed), "met" if fits == n + len(failed) else "MISSED"))
    print_groups(signed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
