#!/usr/bin/env python3
"""What a command line costs before any work, side by side: `tokbench` (reads and checks it
without LibTorch, then starts the engine) against `tokbench-engine` started directly (LibTorch's
static initialisers and the CUDA libraries' loading first, as every command paid before the
split; docs/build.md, "Two programs"). Each command line runs through both programs in turn,
A B A B, --repeats times; the table gives each one's median wall time and the ratio of the
medians. Both answer alike (tests/cli/front_end.py), so only the time differs.

Usage: bench/front_end_start.py [--tokbench build/bin/tokbench] [--repeats 15]"""
import argparse
import os
import statistics
import subprocess
import sys
import time

from bench_common import DEFAULT_TOKBENCH, cpu_model

SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32"]
LINES = [
    ("run --help", ["run", "--help"]),
    ("an unknown option", ["run", *SMALL, "--no-such-option"]),
    ("an empty --name=", ["run", *SMALL, "--json_path=", "--quiet"]),
    ("a value out of range", ["run", *SMALL, "--beta1", "-1"]),
    ("a model name (engine's check)", ["run", "--model-name", "pythia-14q"]),
    ("version (engine's work)", ["version"]),
]


def wall_seconds(program, args):
    start = time.perf_counter()
    subprocess.run(["tokbench", *args], executable=program, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    front = os.path.abspath(args.tokbench)
    engine = os.path.join(os.path.dirname(front), "tokbench-engine")
    if not os.path.exists(engine):
        sys.exit(f"no tokbench-engine beside {front}; valid: a build folder's bin/tokbench")
    print(f"# {cpu_model()}, {os.cpu_count()} CPUs; {args.repeats} runs of each, A B A B")
    print("| command line | tokbench ms | tokbench-engine ms | ratio |")
    print("|---|---:|---:|---:|")
    for label, line in LINES:
        wall_seconds(front, line), wall_seconds(engine, line)  # warm the page cache
        a, b = [], []
        for _ in range(args.repeats):
            a.append(wall_seconds(front, line))
            b.append(wall_seconds(engine, line))
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"| {label} | {ma * 1e3:.1f} | {mb * 1e3:.1f} | {ma / mb:.3f} |")


main()
