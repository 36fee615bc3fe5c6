#!/usr/bin/env python3
"""Does `tokbench comm`'s reference GEMM read the machine's moment as a one-rank run's probe does?

predict scales a one-rank run's compute by (comm document's compute_sharing.alone_ms / the run's
reference_probe median) to read it at the comm document's moment (docs/predict.md, "The
reference probe"). That holds if, at one moment, the two read the same. They are taken in
different settings: the probe in a lone process, 4 GEMMs before the warm-up and 4 after the
window; the document's on rank 0 while the other ranks wait in an all-reduce, each alone GEMM
right after a GEMM on every rank at once. This script alternates the two, back to back, several
times (a one-rank run, a comm document, a one-rank run, ...), and reports for each document its
alone_ms over the mean of the probes just before and just after it: 1.0 when the two agree.

Usage: reference_level_offset.py [TOKBENCH] [--pairs N] [--world W] [--docs]
  --pairs: comm documents measured, each between two one-rank runs (default 6)
  --world: the comm document's ranks (default 2)
  --docs: also write docs/results/reference-level-offset-cpu-DATE.md
Should run alone: the figure is a ratio of two moments a few seconds apart.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import DEFAULT_TOKBENCH, cpu_model, reference_probe_ms, write_result

# A comm document with one tiny collective: its figure is compute_sharing.alone_ms.
COMM = ["--collectives", "all_reduce", "--max-bytes", "4K", "--iters", "3", "--warmup-iters", "1",
        "--num-threads", "1", "--format", "json"]


def probe_ms(tokbench):
    median, proc = reference_probe_ms(tokbench)
    if not median:
        sys.exit(f"the one-rank run gave no probe ({proc.returncode}): {proc.stderr[-1000:]}")
    return median


def comm_alone_ms(tokbench, world):
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "comm.json")
        proc = subprocess.run([tokbench, "comm", "--nproc-per-node", str(world), *COMM, "--output", out],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            sys.exit(f"tokbench comm failed ({proc.returncode}): {proc.stderr[-1000:]}")
        with open(out) as f:
            return json.load(f)["compute_sharing"]["alone_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tokbench", nargs="?", default=DEFAULT_TOKBENCH)
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--docs", action="store_true")
    a = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    load = os.getloadavg()
    before = probe_ms(a.tokbench)
    rows = []
    for i in range(a.pairs):
        comm = comm_alone_ms(a.tokbench, a.world)
        after = probe_ms(a.tokbench)
        ratio = comm / ((before + after) / 2)
        rows.append((before, comm, after, ratio))
        print(f"pair {i + 1}/{a.pairs}: probe {before:.2f} ms, comm alone {comm:.2f} ms, probe {after:.2f} ms: "
              f"ratio {ratio:.3f}", flush=True)
        before = after
    ratios = [r[3] for r in rows]
    lines = [f"# The comm document's reference GEMM against the one-rank probe ({started:%Y-%m-%d})", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} logical CPUs; {a.pairs} comm documents at W = {a.world}, "
             f"each between two one-rank runs; started {started:%Y-%m-%d %H:%M} UTC, load average at the start "
             f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.", "",
             "```", f"python3 bench/reference_level_offset.py {a.tokbench} --pairs {a.pairs} --world {a.world}", "```",
             "", "| pair | probe before (ms) | comm alone_ms | probe after (ms) | alone / mean of the probes |",
             "|---|---|---|---|---|"]
    lines += [f"| {i + 1} | {b:.2f} | {c:.2f} | {af:.2f} | {r:.3f} |" for i, (b, c, af, r) in enumerate(rows)]
    lines += ["", f"Median ratio **{statistics.median(ratios):.3f}**, mean {statistics.mean(ratios):.3f}, "
              f"{sum(r > 1 for r in ratios)} of {len(ratios)} above 1 (the document's GEMM slower than the probe's "
              f"at the same moment)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.docs:
        write_result("reference-level-offset-cpu", f"{started:%Y-%m-%d}", text)


if __name__ == "__main__":
    main()
