#!/usr/bin/env python3
"""tokbench's parallel steps beside PyTorch's and thunder's on this machine's CPU, in one script:
the reference's distributed rows with every executor's column.

Every side is `tokbench run --executor X --nproc-per-node W --distributed-mode M` with the same
configuration, so all sides share one launcher, one rank environment, one protocol and one JSON:
`eager` and `fused` (tokbench's DDP and FSDP steps), `python-eager` and `python-inductor`
(litgpt under PyTorch's DistributedDataParallel / FullyShardedDataParallel, eager or
torch.compile) and `python-thunder` (thunder.jit with thunder's ddp / fsdp transforms), all over
Gloo. Each row runs every side --repeats times, the order rotating, and reports medians of
tokens/s and of the per-rank peaks (the largest rank's): peak RSS for every side (what the
operating system charged each rank process: LibTorch's or Python's runtime included), and the
peak of tensor bytes, counted on every side by tokbench's counting CPU allocator (the Python
sides load it as libtokbench_memory_probe.so), so that column compares across all sides. Ratios are between medians measured minutes apart in one script; never compare a
figure from this table with one from another day or machine.

Writes docs/results/cpu-parallel-executors-<date>.md with the machine, versions and commands.

Usage: bench/parallel_executors_side_by_side.py [--repeats R] [--world W] [--threads N]
          [--executors eager,fused,python-eager,python-inductor,python-thunder] [--no-write]
"""
import argparse
import datetime
import os
import platform
import statistics
import sys

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, side_record, write_result

# The reference's rows, shrunk to this machine: phi-2's architecture with fewer layers and a
# shorter sequence (the reference's table was phi-2 on 4 GPUs at T=2048, all layers).
MODEL, LAYERS, SEQ_LEN, MICRO_BATCH, WARMUP, MEASURED = "phi-2", 2, 128, 1, 2, 4
MODES = [("ddp", ["--distributed-mode", "ddp"]),
         ("fsdp zero2", ["--distributed-mode", "fsdp", "--shard-mode", "zero2", "--bucketing-mode", "block"]),
         ("fsdp zero3", ["--distributed-mode", "fsdp", "--shard-mode", "zero3", "--bucketing-mode", "block"])]
EXECUTORS = ["eager", "fused", "python-eager", "python-inductor", "python-thunder"]


def run_side(a, executor, mode_args):
    args = ["--executor", executor, "--model-name", MODEL, "--n-layers", str(LAYERS), "--seq-len", str(SEQ_LEN),
            "--micro-batch-size", str(MICRO_BATCH), "--max-iters", str(WARMUP + MEASURED), "--warmup-iters",
            str(WARMUP), "--device", "cpu", "--num-threads", str(a.threads), "--nproc-per-node", str(a.world),
            "--dist-timeout", "900", "--quiet", *mode_args]
    return side_record(a.tokbench, args, executor)


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def largest_rank(record, key):
    if record is None:
        return None
    values = [r.get(key) for r in record.get("ranks", []) if r.get(key) is not None]
    return max(values) if values else None


def fmt(value, digits=1):
    return f"{value:.{digits}f}" if value is not None else "failed"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="per rank")
    p.add_argument("--executors", default=",".join(EXECUTORS))
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args()
    executors = [e for e in a.executors.split(",") if e]
    unknown = [e for e in executors if e not in EXECUTORS]
    if unknown:
        sys.exit(f"unknown executor {unknown[0]}; valid: {', '.join(EXECUTORS)}")

    results = {}  # (mode, executor) -> [records]
    for mode, mode_args in MODES:
        for r in range(a.repeats):
            for e in rotated(executors, r):
                print(f"# {mode}: {e}, repeat {r + 1}/{a.repeats}", flush=True)
                results.setdefault((mode, e), []).append(run_side(a, e, mode_args))

    today = datetime.date.today().isoformat()
    sample = next((r for runs in results.values() for r in runs if r), None)
    env = dict(sample["environment"]) if sample else {}
    python_run = next((r for (m, e), runs in results.items() if e.startswith("python") for r in runs if r), None)
    thunder_run = next((r for (m, e), runs in results.items() if e == "python-thunder" for r in runs if r), None)
    lines = [
        f"# Parallel executors side by side on the CPU (Gloo), {today}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}`; {a.world} ranks on this"
        f" one machine, {a.threads} thread(s) each",
        f"- tokbench {env.get('tokbench_version', '?')} ({env.get('git_revision', '?')}), LibTorch"
        f" {env.get('libtorch_version', '?')}; Python side: torch"
        f" {python_run['environment'].get('python_torch_version', '?') if python_run else '?'}, litgpt"
        f" {python_run['environment'].get('litgpt_version', '?') if python_run else '?'}, lightning-thunder"
        f" {thunder_run['environment'].get('thunder_version', '?') if thunder_run else '?'}",
        f"- Workload: {MODEL} with {LAYERS} layers, T={SEQ_LEN}, B={MICRO_BATCH} per rank, GA 1, fp32, AdamW, random"
        f" tokens; {WARMUP} warm-up and {MEASURED} measured iterations; tokens/s = M·G·T / the slowest rank's window",
        f"- Command: `bench/parallel_executors_side_by_side.py {' '.join(sys.argv[1:])}`; each side {a.repeats} run(s),"
        " order rotating; medians. Peak RSS and tensor peak: the largest rank's (GB, 10^9 bytes); the tensor peak is"
        " counted on every side by tokbench's counting CPU allocator (N/A where a side could not load it)",
        "",
        "| mode | executor | tokens/s | / python-eager | / python-inductor | peak RSS per rank (GB) |"
        " tensor peak per rank (GB) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for mode, _ in MODES:
        tps = {e: median_of([r["tokens_per_sec"] if r else None for r in results.get((mode, e), [])])
               for e in executors}
        for e in executors:
            runs = results.get((mode, e), [])
            rss = median_of([largest_rank(r, "peak_rss_GB") for r in runs])
            tensors = median_of([largest_rank(r, "memory_allocated_peak_GB") for r in runs])
            ratio_eager = f"{tps[e] / tps['python-eager']:.2f}" if tps[e] and tps.get("python-eager") else "N/A"
            ratio_inductor = (f"{tps[e] / tps['python-inductor']:.2f}" if tps[e] and tps.get("python-inductor")
                              else "N/A")
            lines.append(f"| {mode} | {e} | {fmt(tps[e])} | {ratio_eager} | {ratio_inductor} | {fmt(rss, 3)} |"
                         f" {fmt(tensors, 3) if tensors is not None else 'N/A'} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not a.no_write and results:
        write_result("cpu-parallel-executors", today, table)


if __name__ == "__main__":
    main()
