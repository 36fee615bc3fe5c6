#!/usr/bin/env python3
"""tokbench's executors against PyTorch's on this machine, in one script: the goal table of
docs/PERFORMANCE.md ("Executors").

Every side is `tokbench run --executor X` with the same configuration, so all sides share one
protocol and one JSON: `eager` and `fused` (LibTorch, this repository), `python-eager` (litgpt's
GPT and torch's fused AdamW in Python, the reference's step) and `python-inductor` (the same
under torch.compile). Each row runs every side --repeats times, the order rotating so no side
always runs first on a warming or busy machine, and reports medians. Ratios are taken between
medians measured minutes apart in one script; never compare a figure from this table with one
from another day or machine.

Writes docs/results/cpu-executors-<dtype>-<date>.md with the machine, versions and commands.

`--executors eager,fused` compares tokbench's two executors alone (what bench/fused_vs_eager.py
did); `--warmup` and `--measured` override every row's iteration counts.

Usage: bench/executors_side_by_side.py [--dtype fp32|bf16-true] [--repeats R] [--only NAME]
                                       [--executors eager,fused,python-eager,python-inductor]
                                       [--threads N] [--warmup W] [--measured M] [--no-write]
"""
import argparse
import datetime
import os
import platform
import statistics
import sys

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, side_record, write_result

# The rows: name, layers (a slice of the model keeps a row to about a minute per side on
# 2 cores), warm-up and measured iterations. torch.compile compiles during the first warm-up
# iteration, so every side gets the same two warm-up iterations.
ROWS = [
    ("pythia-160m", 4, 2, 4),
    ("tiny-llama-1.1b", 2, 2, 4),
    ("Llama-3.2-1B", 2, 2, 4),
    ("Qwen3-0.6B", 4, 2, 4),
]
SEQ_LEN, MICRO_BATCH = 512, 4
EXECUTORS = ["eager", "fused", "python-eager", "python-inductor"]
LLAMA_FAMILY = {"tiny-llama-1.1b", "Llama-3.2-1B"}


def run_side(a, executor, name, layers, warmup, measured):
    args = ["--executor", executor, "--model-name", name, "--n-layers", str(layers), "--seq-len", str(SEQ_LEN),
            "--micro-batch-size", str(MICRO_BATCH), "--max-iters", str(warmup + measured), "--warmup-iters",
            str(warmup), "--device", "cpu", "--dtype", a.dtype, "--num-threads", str(a.threads), "--quiet"]
    return side_record(a.tokbench, args, executor)


def median_of(runs, key):
    values = [r[key] for r in runs if r and r.get(key) is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "N/A"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16-true"])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=1, help="runs of each side per row (median reported)")
    p.add_argument("--only", help="run only this model name")
    p.add_argument("--executors", default=",".join(EXECUTORS))
    p.add_argument("--warmup", type=int, help="warm-up iterations of every row (default: the row's)")
    p.add_argument("--measured", type=int, help="measured iterations of every row (default: the row's)")
    p.add_argument("--no-write", action="store_true", help="print only; write no Markdown file")
    a = p.parse_args()
    executors = [e for e in a.executors.split(",") if e]
    unknown = [e for e in executors if e not in EXECUTORS]
    if unknown:
        sys.exit(f"unknown executor {unknown[0]}; valid: {', '.join(EXECUTORS)}")

    rows = []
    for name, layers, warmup, measured in ROWS:
        if a.only and name != a.only:
            continue
        warmup, measured = a.warmup or warmup, a.measured or measured
        runs = {e: [] for e in executors}
        for r in range(a.repeats):
            for e in rotated(executors, r):
                print(f"# {name} ({layers} layers): {e}, repeat {r + 1}/{a.repeats}", flush=True)
                runs[e].append(run_side(a, e, name, layers, warmup, measured))
        tps = {e: median_of(runs[e], "tokens_per_sec") for e in executors}
        mem = {e: median_of(runs[e], "memory_used_GB") for e in executors}
        rows.append((name, layers, warmup, measured, runs, tps, mem))
        print(f"{name}: " + "  ".join(f"{e} {tps[e] or 0:.1f}" for e in executors) + " tok/s", flush=True)

    today = datetime.date.today().isoformat()
    sample = next((r for row in rows for e in executors for r in row[4][e] if r), None)
    env = dict(sample["environment"]) if sample else {}
    # The Python executors' runs carry the interpreter's torch version.
    python_run = next((r for row in rows for e in executors if e.startswith("python") for r in row[4][e] if r), None)
    if python_run:
        env["python_torch_version"] = python_run["environment"].get("python_torch_version", "?")
    lines = [
        f"# Executors side by side on the CPU, {a.dtype}, {today}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}`; {a.threads} threads on"
        " every side",
        f"- tokbench {env.get('tokbench_version', '?')} ({env.get('git_revision', '?')}), LibTorch"
        f" {env.get('libtorch_version', '?')}; Python side: torch {env.get('python_torch_version', 'see python runs')},"
        " litgpt 0.5.13",
        f"- Workload: T={SEQ_LEN}, B={MICRO_BATCH}, GA 1, {a.dtype}, AdamW, random tokens; tokens/s = M·G·T / window",
        f"- Command: `bench/executors_side_by_side.py {' '.join(sys.argv[1:])}`; each side"
        f" {a.repeats} run(s) per row, order rotating; medians",
        "",
        "| model | layers | " + " | ".join(f"{e} tok/s" for e in executors) +
        " | fused / python-eager | fused / python-inductor | eager / python-eager | fused % of peak |"
        " memory fused / eager (GB) |",
        "|---|---:|" + "---:|" * (len(executors) + 5),
    ]
    for name, layers, warmup, measured, runs, tps, mem in rows:
        fused = next((r for r in runs.get("fused", []) if r), None)
        peak = ""
        if fused and fused.get("mfu") is not None:
            peak = f"{fused['mfu'] * 100:.1f}%" + (" (estimated peak)" if fused.get("mfu_peak_is_estimate") else "")
        memory = f"{mem.get('fused') or 0:.3f} / {mem.get('eager') or 0:.3f}" if "fused" in mem and "eager" in mem else ""
        lines.append(f"| {name} | {layers} | " + " | ".join(f"{tps[e]:.1f}" if tps[e] else "failed" for e in executors) +
                     f" | {ratio(tps.get('fused'), tps.get('python-eager'))}"
                     f" | {ratio(tps.get('fused'), tps.get('python-inductor'))}"
                     f" | {ratio(tps.get('eager'), tps.get('python-eager'))} | {peak} | {memory} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not a.no_write and rows:
        write_result(f"cpu-executors-{a.dtype}", today, table)


if __name__ == "__main__":
    main()
