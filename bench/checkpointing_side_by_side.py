#!/usr/bin/env python3
"""Activation checkpointing side by side on this machine, in one script: tokbench's eager and
fused executors with and without --checkpoint-activations against litgpt in Python
(python-eager) with and without torch.utils.checkpoint per block (the reference's
checkpoint_wrapper, non-reentrant), on long-sequence rows where activations dominate.

Every side is `tokbench run` with the same configuration, so all share one protocol and one JSON:
tokens/s, peak memory (the same counting allocator on every side, the Python one through
tokbench's memory probe), MFU and HFU. Each row runs every side --repeats times, the order
rotating; medians. Ratios are between figures measured minutes apart in one script; never
compare a figure here with one from another day or machine.

Writes docs/results/cpu-checkpointing-<date>.md with the machine, versions and the command.

Usage: bench/checkpointing_side_by_side.py [--repeats R] [--threads N] [--only NAME] [--no-write]
"""
import argparse
import datetime
import os
import platform
import statistics
import sys

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, side_record, write_result

# name, layers, T, B, warm-up, measured: long sequences, a few layers so a side takes about a
# minute on 2 cores.
ROWS = [
    ("pythia-160m", 4, 2048, 1, 1, 3),
    ("Llama-3.2-1B", 2, 2048, 1, 1, 3),
]
SIDES = [("eager", False), ("eager", True), ("fused", False), ("fused", True), ("python-eager", False),
         ("python-eager", True)]


def label(side):
    executor, checkpoint = side
    return executor + (" +AC" if checkpoint else "")


def run_side(a, side, name, layers, seq_len, batch, warmup, measured):
    executor, checkpoint = side
    args = ["--executor", executor, "--model-name", name, "--n-layers", str(layers), "--seq-len", str(seq_len),
            "--micro-batch-size", str(batch), "--max-iters", str(warmup + measured), "--warmup-iters", str(warmup),
            "--device", "cpu", "--num-threads", str(a.threads), "--quiet"]
    if checkpoint:
        args.append("--checkpoint-activations")
    return side_record(a.tokbench, args, label(side))


def median_of(runs, key):
    values = [r[key] for r in runs if r and r.get(key) is not None]
    return statistics.median(values) if values else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--only", help="run only this model name")
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args()

    rows = []
    for name, layers, seq_len, batch, warmup, measured in ROWS:
        if a.only and name != a.only:
            continue
        runs = {s: [] for s in SIDES}
        for r in range(a.repeats):
            for s in rotated(SIDES, r):
                print(f"# {name} ({layers} layers, T={seq_len}): {label(s)}, repeat {r + 1}/{a.repeats}", flush=True)
                runs[s].append(run_side(a, s, name, layers, seq_len, batch, warmup, measured))
        rows.append((name, layers, seq_len, batch, runs))

    today = datetime.date.today().isoformat()
    sample = next((r for row in rows for s in SIDES for r in row[4][s] if r), None)
    env = dict(sample["environment"]) if sample else {}
    lines = [
        f"# Activation checkpointing side by side on the CPU, fp32, {today}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}`; {a.threads} threads on"
        " every side",
        f"- tokbench {env.get('tokbench_version', '?')} ({env.get('git_revision', '?')}), LibTorch"
        f" {env.get('libtorch_version', '?')}; Python side: litgpt 0.5.13 with torch.utils.checkpoint per Block"
        " (checkpoint_wrapper, NO_REENTRANT)",
        "- +AC: `--checkpoint-activations`. Memory: peak allocated by the counting CPU allocator (the Python side"
        " through tokbench's memory probe), GB. MFU divides model FLOPs, HFU the FLOPs executed (recomputation"
        " included), both by the same peak.",
        f"- Command: `bench/checkpointing_side_by_side.py {' '.join(sys.argv[1:])}`; {a.repeats} run(s) per side,"
        " order rotating; medians",
        "",
        "| model | layers | T | side | tok/s | vs same side without AC | memory GB | memory vs without AC |"
        " MFU | HFU | vs python-eager +AC |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, layers, seq_len, batch, runs in rows:
        tps = {s: median_of(runs[s], "tokens_per_sec") for s in SIDES}
        mem = {s: median_of(runs[s], "memory_used_GB") for s in SIDES}
        mfu = {s: median_of(runs[s], "mfu") for s in SIDES}
        hfu = {s: median_of(runs[s], "hfu") for s in SIDES}
        reference = tps.get(("python-eager", True))
        for s in SIDES:
            plain = (s[0], False)
            speed = f"{tps[s] / tps[plain]:.2f}" if s[1] and tps[s] and tps[plain] else ""
            memory = f"{mem[s] / mem[plain]:.2f}" if s[1] and mem[s] and mem[plain] else ""
            vs_ref = f"{tps[s] / reference:.2f}" if s[1] and tps[s] and reference else ""
            pct = lambda v: f"{v * 100:.1f}%" if v is not None else "N/A"
            lines.append(f"| {name} | {layers} | {seq_len} | {label(s)} | "
                         f"{tps[s]:.1f} | {speed} | {mem[s]:.3f} | {memory} | {pct(mfu[s])} | {pct(hfu[s])} | {vs_ref} |"
                         if tps[s] else f"| {name} | {layers} | {seq_len} | {label(s)} | failed | | | | | | |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not a.no_write and rows:
        write_result("cpu-checkpointing", today, table)


if __name__ == "__main__":
    main()
