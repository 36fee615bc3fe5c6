#!/usr/bin/env python3
"""How many products the compute-sharing probe's together half needs: its slowdown against the cores' share.

`tokbench comm` on a CPU times how much the node's ranks slow each other's compute
(`compute_sharing`, docs/comm.md): one GEMM alone on rank 0, then the GEMM on every rank at once,
the slowest rank's time. With more one-thread ranks than cores the OS time-slices them, and one
product (about 11 ms on the CI VM) is only a few of its slices: which rank it leaves for last
decides the figure. A revision runs the together half as several products back to back on every
rank (`together_gemms`, per product). This script runs `tokbench comm` for each rank count, new
and old binary alternating (order rotating), and reports the slowdown each read against the
share the cores give (ranks / cores where the ranks outnumber them, else 1), with the spread of
its pairs.

Usage: compute_sharing_products.py [TOKBENCH] [--vs OLD] [--ranks 2,3,4] [--runs N] [--docs]
Should run alone: its figures are the machine's moments.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, write_side_by_side_page

# The collectives are not the point: the smallest document that still measures the sharing.
COMM = ["--num-threads", "1", "--collectives", "all_reduce", "--max-bytes", "4K", "--iters", "3",
        "--warmup-iters", "1", "--format", "json"]


def sharing(tokbench, ranks, label):
    """The document's compute_sharing, or None after printing why."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "comm.json")
        proc = subprocess.run([tokbench, "comm", "--nproc-per-node", str(ranks), *COMM, "--output", out],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            print(f"# {label} failed ({proc.returncode}):\n{proc.stderr[-2000:]}", flush=True)
            return None
        with open(out) as f:
            doc = json.load(f)
        sharing = doc.get("compute_sharing")
        if sharing is not None:  # which build read it, for the page
            sharing["git_revision"] = (doc.get("environment") or {}).get("git_revision", "?")
        return sharing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tokbench", nargs="?", default=DEFAULT_TOKBENCH)
    ap.add_argument("--vs", help="another tokbench (e.g. one whose together half is one product)")
    ap.add_argument("--ranks", default="2,3,4", help="ranks per node, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--docs", action="store_true", help="write docs/results/compute-sharing-products-cpu-DATE.md")
    a = ap.parse_args()
    try:
        ranks = [int(r) for r in a.ranks.split(",")]
    except ValueError:
        ap.error(f"--ranks {a.ranks}: not a comma-separated list of whole numbers (e.g. 2,3,4)")
    if any(r < 2 for r in ranks):
        ap.error(f"--ranks {a.ranks}: each count must be 2 or more (the sharing of one rank is nothing)")
    for binary in [a.tokbench] + ([a.vs] if a.vs else []):
        if not os.access(binary, os.X_OK):
            ap.error(f"{binary}: not an executable tokbench (build it with `make build`)")
    cores = os.cpu_count() or 1

    sides = [("new", a.tokbench)] + ([("old", a.vs)] if a.vs else [])
    got = {(w, label): [] for w in ranks for label, _ in sides}
    started = datetime.datetime.now(datetime.timezone.utc)
    for repeat in range(a.runs):
        for w in ranks:
            for label, binary in rotated(sides, repeat):
                s = sharing(binary, w, f"{label} W={w}")
                if s is None:
                    continue
                got[(w, label)].append(s)
                print(f"W={w} {label} {repeat + 1}/{a.runs}: slowdown {s['slowdown']:.3f} "
                      f"(pairs' quartiles {s['slowdown_q1']:.3f}-{s['slowdown_q3']:.3f}), "
                      f"{s.get('together_gemms', 1)} product(s) together", flush=True)

    lines = ["| ranks | cores' share | binary (revision) | products together | runs | slowdown (median of runs) | "
             "range over runs | pairs' IQR (median of runs) |",
             "|---:|---:|---|---:|---:|---:|---:|---:|"]
    for w in ranks:
        share = max(1.0, w / cores)
        for label, _ in sides:
            docs = got[(w, label)]
            if not docs:
                continue
            slow = [d["slowdown"] for d in docs]
            iqr = [d["slowdown_q3"] - d["slowdown_q1"] for d in docs]
            lines.append(f"| {w} | {share:.2f} | {label} ({docs[0]['git_revision']}) | "
                         f"{docs[0].get('together_gemms', 1)} | {len(docs)} | "
                         f"{statistics.median(slow):.3f} | {min(slow):.3f}-{max(slow):.3f} | "
                         f"{statistics.median(iqr):.3f} |")
    table = "\n".join(lines)
    print(table)
    if a.docs:
        write_side_by_side_page(
            "compute-sharing-products-cpu", "The compute-sharing probe: one product together against several back to "
            "back", started, f"{cpu_model()}, {cores} logical CPUs",
            f"bench/compute_sharing_products.py {a.tokbench}{' --vs ' + a.vs if a.vs else ''} --ranks {a.ranks} "
            f"--runs {a.runs} --docs",
            f"Each run: `tokbench comm --nproc-per-node W {' '.join(COMM)}`; the cores' share is W / cores where the "
            f"ranks outnumber the cores, else 1", table)


if __name__ == "__main__":
    main()
