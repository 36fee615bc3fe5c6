#!/usr/bin/env python3
"""Many ranks on one machine, side by side: scaling efficiency and what DDP's overlap buys.

Every configuration trains the same global batch (G sequences of T tokens per iteration):
  one rank    W=1, micro-batch G,   1 thread   (the baseline)
  ddp         W=2, micro-batch G/2, 1 thread per rank, buckets all-reduced during backward
  ddp-no-overlap  the same, all buckets all-reduced after backward
  fsdp zero2 / zero3 (per block)
Runs alternate in order for --repeats rounds; medians of tokens/s are compared. Scaling
efficiency = tokens/s(W=2) / tokens/s(W=1) (ideal 2.0 on two idle cores). The machine, the
date and the exact commands are printed with the table (Markdown), for docs/results/.

Usage: bench/dist_scaling.py [--tokbench build/bin/tokbench] [--model pythia-160m --n-layers 4
       --seq-len 256 --global-batch 4 --repeats 3]"""
import argparse
import datetime
import os
import statistics
import sys

from bench_common import DEFAULT_TOKBENCH, cpu_model, run_record


def run(tokbench, common, extra, name):
    args = [*common, *extra, "--quiet"]
    record, proc = run_record(tokbench, args)
    if proc.returncode != 0 or record is None:
        sys.exit(f"{name} failed (exit {proc.returncode}):\n{proc.stderr}")
    return record, [tokbench, "run", *args]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--model", default="pythia-160m")
    p.add_argument("--n-layers", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--global-batch", type=int, default=4)
    p.add_argument("--max-iters", type=int, default=10)
    p.add_argument("--warmup-iters", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    common = ["--model-name", a.model, "--n-layers", str(a.n_layers), "--seq-len", str(a.seq_len),
              "--max-iters", str(a.max_iters), "--warmup-iters", str(a.warmup_iters), "--num-threads", "1",
              "--global-batch-size", str(a.global_batch), "--device", "cpu", "--dtype", "fp32"]
    half = str(a.global_batch // 2)
    configs = {
        "one rank (W=1)": ["--micro-batch-size", str(a.global_batch)],
        "ddp (W=2)": ["--micro-batch-size", half, "--distributed-mode", "ddp", "--nproc-per-node", "2"],
        "ddp, no overlap (W=2)": ["--micro-batch-size", half, "--distributed-mode", "ddp", "--nproc-per-node", "2",
                                  "--no-ddp-overlap"],
        "fsdp zero2 block (W=2)": ["--micro-batch-size", half, "--distributed-mode", "fsdp", "--shard-mode", "zero2",
                                   "--bucketing-mode", "block", "--nproc-per-node", "2"],
        "fsdp zero3 block (W=2)": ["--micro-batch-size", half, "--distributed-mode", "fsdp", "--shard-mode", "zero3",
                                   "--bucketing-mode", "block", "--nproc-per-node", "2"],
    }
    samples = {name: [] for name in configs}
    comm = {name: [] for name in configs}
    memory = {}
    commands = {}
    for round_index in range(a.repeats):
        order = list(configs) if round_index % 2 == 0 else list(reversed(configs))
        for name in order:
            j, command = run(a.tokbench, common, configs[name], name)
            samples[name].append(j["tokens_per_sec"])
            comm[name].append(max((r["exposed_comm_ms_per_iter"] or 0) for r in j["ranks"]) if j["ranks"] else 0)
            memory[name] = j["memory_used_GB"]
            commands[name] = " ".join(command[1:])
            print(f"round {round_index + 1}: {name}: {j['tokens_per_sec']:.1f} tok/s", file=sys.stderr)
    base = statistics.median(samples["one rank (W=1)"])
    ddp = statistics.median(samples["ddp (W=2)"])
    no_overlap = statistics.median(samples["ddp, no overlap (W=2)"])
    print(f"# Many ranks on one CPU: {a.model} ({a.n_layers} layers), T={a.seq_len}, G={a.global_batch}, fp32\n")
    print(f"- date: {datetime.date.today().isoformat()}; machine: {cpu_model()}, {os.cpu_count()} cores; "
          f"each rank 1 thread; Gloo over loopback")
    print(f"- {a.repeats} rounds in alternating order; medians (min-max) of tokens/s\n")
    print("| configuration | tokens/s | vs one rank | exposed comm ms/iter (slowest rank) | memory GB (max rank) |")
    print("|---|---:|---:|---:|---:|")
    for name in configs:
        s = samples[name]
        print(f"| {name} | {statistics.median(s):.1f} ({min(s):.1f}-{max(s):.1f}) | "
              f"{statistics.median(s) / base:.3f} | {statistics.median(comm[name]):.1f} | {memory[name]:.3f} |")
    print(f"\nScaling efficiency W=2 / W=1 (ideal 2.0): **{ddp / base:.2f}**; "
          f"DDP overlap / no overlap: **{ddp / no_overlap:.3f}**\n")
    print("Commands (each also writes its record with --json-path):\n")
    for name, command in commands.items():
        print(f"- {name}: `tokbench {command}`")


if __name__ == "__main__":
    main()
