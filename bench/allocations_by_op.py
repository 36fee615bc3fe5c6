#!/usr/bin/env python3
"""Where a training step allocates its memory, operator by operator: tokbench's eager step
against litgpt's in Python, for one configuration, from the [memory] events of each side's
`tokbench run --profile` trace.

Both sides run through `tokbench run` with --cpu-allocator system, so both allocate through
c10's default CPU allocator and report the same sizes (the requested bytes). Each allocation
is charged to the innermost operator around it on its thread (its exclusive allocation), and
the sums are divided by the profiled iterations. The table lists the operators whose bytes per
iteration differ most, and a total of the large allocations: blocks of at least --large-mib
MiB, which glibc serves with a fresh mmap every time (its mmap threshold tops out at 32 MiB),
so their pages are zeroed by the kernel on first touch in every iteration.

Usage: bench/allocations_by_op.py [--model-name tiny-llama-1.1b] [--n-layers 2] [--seq-len 256]
                                  [--micro-batch-size 2] [--profile-iters 2] [--top 25]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

from bench_common import DEFAULT_TOKBENCH, cpu_model

MIB = 1 << 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--model-name", default="tiny-llama-1.1b")
    p.add_argument("--n-layers", type=int, default=2)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--micro-batch-size", type=int, default=2)
    p.add_argument("--dtype", default="fp32")
    p.add_argument("--profile-iters", type=int, default=2)
    p.add_argument("--large-mib", type=float, default=32.0)
    p.add_argument("--top", type=int, default=25)
    return p.parse_args()


def record_trace(a, executor, path):
    command = [a.tokbench, "run", "--model-name", a.model_name, "--n-layers", str(a.n_layers),
               "--seq-len", str(a.seq_len), "--micro-batch-size", str(a.micro_batch_size),
               "--dtype", a.dtype, "--max-iters", "3", "--warmup-iters", "2", "--device", "cpu",
               "--executor", executor, "--cpu-allocator", "system", "--quiet",
               "--profile", path, "--profile-iters", str(a.profile_iters)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.exists(path):
        sys.exit(f"{executor}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return command


def allocations_by_op(path, iterations, large_bytes):
    """{op: [bytes, count, large bytes]} per iteration, each allocation charged to the innermost
    CPU operator that encloses it on its thread."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    ops = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            ops[e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    for spans in ops.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
    totals = collections.defaultdict(lambda: [0, 0, 0])
    for e in events:
        if e.get("name") != "[memory]":
            continue
        size = e.get("args", {}).get("Bytes", 0)
        if size <= 0:
            continue
        owner = "(outside any operator)"
        for start, end, name in ops.get(e["tid"], []):
            if start > e["ts"]:
                break
            if end >= e["ts"]:
                owner = name  # later-starting enclosing spans are nested deeper
        t = totals[owner]
        t[0] += size / iterations
        t[1] += 1 / iterations
        if size >= large_bytes:
            t[2] += size / iterations
    return totals


def main():
    a = parse_args()
    large = int(a.large_mib * MIB)
    with tempfile.TemporaryDirectory() as scratch:
        sides = {}
        for executor in ("eager", "python-eager"):
            path = os.path.join(scratch, executor + ".json")
            command = record_trace(a, executor, path)
            sides[executor] = allocations_by_op(path, a.profile_iters, large)
            print("# " + " ".join(command[1:]))
    native, python = sides["eager"], sides["python-eager"]
    total = lambda side, i: sum(v[i] for v in side.values())
    print(f"\n{cpu_model()}. {a.model_name}, {a.n_layers} layers, T={a.seq_len}, B={a.micro_batch_size}, {a.dtype}: "
          f"MiB allocated per iteration (blocks >= {a.large_mib:g} MiB: fresh pages under glibc)\n")
    print("| | tokbench eager | litgpt eager | difference |")
    print("|---|---:|---:|---:|")
    print(f"| all allocations | {total(native, 0) / MIB:.1f} | {total(python, 0) / MIB:.1f} | "
          f"{(total(native, 0) - total(python, 0)) / MIB:+.1f} |")
    print(f"| large blocks | {total(native, 2) / MIB:.1f} | {total(python, 2) / MIB:.1f} | "
          f"{(total(native, 2) - total(python, 2)) / MIB:+.1f} |")
    print(f"\nOperators by difference in bytes allocated per iteration (count per iteration):\n")
    print("| operator | tokbench MiB | (n) | litgpt MiB | (n) | difference MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    zero = [0, 0, 0]
    names = sorted(set(native) | set(python),
                   key=lambda n: -abs(native.get(n, zero)[0] - python.get(n, zero)[0]))
    for name in names[:a.top]:
        n, p = native.get(name, zero), python.get(name, zero)
        print(f"| {name} | {n[0] / MIB:.1f} | {n[1]:.0f} | {p[0] / MIB:.1f} | {p[1]:.0f} | {(n[0] - p[0]) / MIB:+.1f} |")


if __name__ == "__main__":
    main()
