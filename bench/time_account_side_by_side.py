#!/usr/bin/env python3
"""Where the time goes, executor by executor, in one script: the time account
(docs/time-account.md) of eager, fused, python-eager, python-inductor and python-thunder on two
models, in fp32 and bf16-true, side by side, with each column explained against python-eager.

Every side is `tokbench run --compile X --time-account-iters N` on one configuration; the runs
of a (model, dtype) pair run one after another, the executors' order rotating between the pairs,
so no side always runs first on a warming machine. A side that fails, or that has no account, is
a gap in its table ("N/A"), not the end of the script.

Writes docs/results/cpu-time-account-<date>.md with the machine, versions and commands: per
(model, dtype) one table of milliseconds per iteration by category (rows) and executor (columns),
the iteration, the MFU and the peak it is of, and `tokbench explain`'s sentence of every column
against python-eager.

Usage: bench/time_account_side_by_side.py [--threads N] [--account-iters N] [--only MODEL]
                                          [--executors eager,fused,...] [--no-write]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

from bench_common import DEFAULT_TOKBENCH, cpu_model, run_record, write_result

# Two models of different shape: a small GPT-NeoX (LayerNorm, GELU, a large vocabulary for its
# width: the loss weighs) and a Llama (RMSNorm, SwiGLU, GQA). Layers cut so a side takes about a
# minute on 2 cores.
MODELS = [("pythia-70m", 4), ("tiny-llama-1.1b", 2)]
DTYPES = ["fp32", "bf16-true"]
EXECUTORS = ["eager", "fused", "python-eager", "python-inductor", "python-thunder"]
BASE_COLUMN = "python-eager"
SEQ_LEN, MICRO_BATCH, WARMUP, MEASURED = 256, 2, 2, 4
CATEGORIES = [("gemm", "GEMMs"), ("attention", "attention"), ("normalization", "normalization"),
              ("elementwise", "elementwise and activations"), ("loss", "loss (cross-entropy)"),
              ("optimizer", "optimizer"), ("data_host", "data and host work"),
              ("exposed_comm", "exposed communication"), ("device_idle", "device idle"), ("other", "other")]


def run_side(a, executor, model, layers, dtype):
    args = ["--compile", executor, "--model-name", model, "--n-layers", str(layers), "--seq-len", str(SEQ_LEN),
            "--micro-batch-size", str(MICRO_BATCH), "--max-iters", str(WARMUP + MEASURED), "--warmup-iters",
            str(WARMUP), "--device", "cpu", "--dtype", dtype, "--num-threads", str(a.threads), "--quiet",
            "--time-account-iters", str(a.account_iters)]
    record, proc = run_record(a.tokbench, args)
    if proc.returncode != 0 or record is None:
        print(f"# {executor} {model} {dtype} failed ({proc.returncode}): {proc.stderr.strip()[-600:]}", flush=True)
    return record, ["tokbench", "run", *args]


def explain(a, base, run):
    """`tokbench explain`'s sentence for two records, or why there is none."""
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for name, record in (("base", base), ("run", run)):
            paths.append(os.path.join(scratch, name + ".json"))
            with open(paths[-1], "w") as f:
                json.dump(record, f)
        proc = subprocess.run([a.tokbench, "explain", *paths, "--format", "json"], capture_output=True, text=True)
    if proc.returncode != 0:
        return "not explained: " + proc.stderr.strip().removeprefix("tokbench: ")
    return json.loads(proc.stdout)["sentence"]


def cell(record, category):
    account = (record or {}).get("time_account") if (record or {}).get("status") == "ok" else None
    if not account:
        return "N/A"
    return f"{account['categories'][category]['s'] * 1e3:.1f}"


def table(a, model, layers, dtype, records):
    lines = [f"### {model} ({layers} layers), {dtype}", ""]
    lines.append("| ms per iteration | " + " | ".join(a.executors) + " |")
    lines.append("|---|" + "---:|" * len(a.executors))
    for key, label in CATEGORIES:
        lines.append(f"| {label} | " + " | ".join(cell(records[e], key) for e in a.executors) + " |")
    def figure(e, what):
        r = records[e]
        if not r or r.get("status") != "ok":
            return (r or {}).get("status", "failed")
        if what == "iteration":
            return f"**{r['average_iter_time']:.1f}**"
        return "N/A" if r.get("mfu") is None else f"{100 * r['mfu']:.2f}%"
    lines.append("| **iteration** | " + " | ".join(figure(e, "iteration") for e in a.executors) + " |")
    lines.append("| MFU | " + " | ".join(figure(e, "mfu") for e in a.executors) + " |")
    lines.append("")
    base = records.get(BASE_COLUMN)
    for e in a.executors:
        if e == BASE_COLUMN or not records[e] or not base:
            continue
        lines.append(f"- {explain(a, base, records[e])}")
    lines.append("")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--account-iters", type=int, default=2)
    p.add_argument("--only", help="one model name")
    p.add_argument("--executors", default=",".join(EXECUTORS))
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args()
    a.executors = a.executors.split(",")
    if not os.path.exists(a.tokbench):
        sys.exit(f"no tokbench at {a.tokbench}: build it first (make build)")
    today = datetime.date.today().isoformat()
    out = [f"# The time account of each executor, side by side, on the CPU, {today}", "",
           f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs; {a.threads} threads on every side",
           f"- Workload: T={SEQ_LEN}, B={MICRO_BATCH}, GA 1, AdamW, random tokens; {WARMUP} warm-up and {MEASURED} "
           f"measured iterations, then {a.account_iters} profiled ones for the account",
           f"- Command: `bench/time_account_side_by_side.py --threads {a.threads} --account-iters {a.account_iters}`",
           f"- Each category's milliseconds are its share of the profiled iterations applied to the measured "
           f"iteration (docs/time-account.md); the sentences are `tokbench explain` against {BASE_COLUMN}", ""]
    commands = []
    order = 0
    for model, layers in MODELS:
        if a.only and model != a.only:
            continue
        for dtype in DTYPES:
            records = {}
            sides = a.executors[order % len(a.executors):] + a.executors[:order % len(a.executors)]
            order += 1
            for executor in sides:
                records[executor], command = run_side(a, executor, model, layers, dtype)
                commands.append(" ".join(command))
                r = records[executor] or {}
                print(f"{model} {dtype} {executor}: {r.get('status', 'failed')} "
                      f"{r.get('average_iter_time', float('nan')):.1f} ms", flush=True)
            out += table(a, model, layers, dtype, records)
            environment = next((r["environment"] for r in records.values() if r and r.get("environment")), None)
            if environment and not any(line.startswith("- Versions:") for line in out):
                versions = {k: environment[k] for k in sorted(environment) if "version" in k or k == "git_revision"}
                out.insert(3, f"- Versions: {json.dumps(versions)}")
    out += ["## Commands", "", *[f"- `{c}`" for c in commands], ""]
    text = "\n".join(out)
    print(text)
    if not a.no_write:
        write_result("cpu-time-account", today, text)


if __name__ == "__main__":
    main()
