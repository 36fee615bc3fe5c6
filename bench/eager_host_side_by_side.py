#!/usr/bin/env python3
"""The host's cost per iteration: tokbench's eager step against the reference's (python-eager:
litgpt and torch's fused AdamW in Python), side by side on tiny models at T=16, B=1, where the
arithmetic is a few microseconds per operator and the time is what the host spends issuing the
operators (dispatch, autograd, allocation, the loop's own work). Both steps issue the same ATen
operators (docs/eager-parity.md, checked by tests/run/cli_eager_parity.py), so the ratio is the
two hosts' cost for the same work: C++ against Python around the same dispatcher. Every
catalog model has a large vocabulary, whose embedding, head and their AdamW update are the same
work on both sides; the difference in ms per iteration is the hosts' difference, the ratio is
diluted by that shared work.

Both sides allocate through LibTorch's system allocator (`--cpu-allocator system`, the Python
step's own), so tokbench's caching arena, which spares the large vocabulary tensors their page
faults, is not part of the difference. The sides run alternately, the order rotating, --repeats times each; each run's figure is the
median of its measured iterations' times, and the table reports the median over runs. On a
machine shared with other jobs the figures move with the load: the ratio is indicative.

Writes docs/results/cpu-eager-host-<date>.md with the machine and commands.

Usage: bench/eager_host_side_by_side.py [--repeats R] [--warmup W] [--measured M] [--no-write]
"""
import argparse
import datetime
import os
import platform
import statistics

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, side_record, write_result

# name, layers: pythia-14m whole (LayerNorm, GELU, parallel residual) and a Llama-like slice
# (RMSNorm, SwiGLU, grouped-query attention), both small enough that no GEMM dominates at T=16.
ROWS = [("pythia-14m", 6), ("SmolLM2-135M", 2)]
SEQ_LEN, MICRO_BATCH = 16, 1
SIDES = ["eager", "python-eager"]


def run_side(a, executor, name, layers):
    args = ["--executor", executor, "--model-name", name, "--n-layers", str(layers), "--seq-len", str(SEQ_LEN),
            "--micro-batch-size", str(MICRO_BATCH), "--max-iters", str(a.warmup + a.measured),
            "--warmup-iters", str(a.warmup), "--device", "cpu", "--dtype", "fp32", "--num-threads", "1",
            "--time-account-iters", "0", "--cpu-allocator", "system", "--quiet"]
    if executor == "eager":
        args += ["--unit-timing-iters", "0"]
    return side_record(a.tokbench, args, executor)


def iteration_ms(record):
    """The median measured iteration of one run, in ms."""
    times = [i["time_ms"] for i in record["iterations"] if not i["warmup"]]
    return statistics.median(times) if times else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--measured", type=int, default=100)
    p.add_argument("--no-write", action="store_true", help="print only; write no Markdown file")
    a = p.parse_args()

    rows = []
    versions = {}
    for name, layers in ROWS:
        runs = {s: [] for s in SIDES}
        for r in range(a.repeats):
            for side in rotated(SIDES, r):
                record = run_side(a, side, name, layers)
                ms = iteration_ms(record) if record else None
                runs[side].append(ms)
                if record:
                    versions[side] = record.get("environment", {})
                print(f"# {name} ({layers} layers) {side}, repeat {r + 1}/{a.repeats}: "
                      f"{'failed' if ms is None else f'{ms:.3f} ms/iter'}", flush=True)
        medians = {s: statistics.median([m for m in runs[s] if m is not None] or [float("nan")]) for s in SIDES}
        rows.append((name, layers, runs, medians))

    today = datetime.date.today().isoformat()
    env = versions.get("eager", {})
    python_env = versions.get("python-eager", {})
    lines = [
        f"# The host's cost: eager against python-eager on the CPU at T={SEQ_LEN}, B={MICRO_BATCH}, {today}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}`, shared with other"
        " jobs while this ran: the ratio is indicative, the absolute figures move with the load",
        f"- tokbench {env.get('tokbench_version', '?')} ({env.get('git_revision', '?')}), LibTorch"
        f" {env.get('libtorch_version', '?')}; Python side: torch {python_env.get('python_torch_version', '?')}",
        f"- Workload: fp32, one thread, T={SEQ_LEN}, B={MICRO_BATCH}, GA 1, AdamW (fused), random tokens,"
        " --cpu-allocator system on both sides;"
        f" {a.warmup} warm-up and {a.measured} measured iterations per run",
        f"- Command: `bench/eager_host_side_by_side.py {' '.join(os.sys.argv[1:])}`; {a.repeats} runs per side,"
        " alternating, order rotating; each run's median iteration, then the median over runs",
        "",
        "| model | layers | eager ms/iter | python-eager ms/iter | eager / python-eager | eager − python-eager ms |"
        " runs eager | runs python-eager |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, layers, runs, medians in rows:
        def fmt(values):
            return ", ".join("failed" if v is None else f"{v:.2f}" for v in values)
        lines.append(f"| {name} | {layers} | {medians['eager']:.2f} | {medians['python-eager']:.2f} | "
                     f"{medians['eager'] / medians['python-eager']:.2f} | {medians['eager'] - medians['python-eager']:+.2f} | "
                     f"{fmt(runs['eager'])} | "
                     f"{fmt(runs['python-eager'])} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not a.no_write and rows:
        print("written to", write_result("cpu-eager-host", today, table))


if __name__ == "__main__":
    main()
