#!/usr/bin/env python3
"""tokbench --executor eager vs --executor fused, side by side on this machine.

For each configuration it runs `tokbench run` with each executor --repeats times, alternating
which goes first, and reports the median tokens/s of each, the fused/eager ratio, and the
peak memory counter of each. The fused executor measures its GEMM kernels once per machine
(cached in $XDG_CACHE_HOME/tokbench/gemm-choice.json) before its first timed run; that
calibration happens before the timed loop and is not in any measurement, but one untimed
fused run per row goes first so every timed fused run reads the cache. Writes a Markdown
table to docs/results/cpu-fused-<date>.md with the date, the CPU and the torch version.

Usage: bench/fused_vs_eager.py [--tokbench build/bin/tokbench] [--threads N] [--repeats R]
                               [--warmup W] [--measured M] [--only NAME] [--date YYYY-MM-DD]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, n_layers. The big-vocabulary rows (Llama-3.2-1B: V = 128k, Qwen3-0.6B: V = 152k) spend
# most of an iteration in lm_head + loss, which is what the chunked head changes.
CONFIGS = [
    ("pythia-160m", 4),
    ("tiny-llama-1.1b", 2),
    ("Llama-3.2-1B", 2),
    ("Qwen3-0.6B", 4),
]
SEQ_LEN, MICRO_BATCH = 512, 4
EXECUTORS = ("eager", "fused")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_tokbench(a, name, n_layers, executor, warmup, measured):
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "r.json")
        cmd = [a.tokbench, "run", "--model-name", name, "--n-layers", str(n_layers), "--seq-len", str(SEQ_LEN),
               "--micro-batch-size", str(MICRO_BATCH), "--max-iters", str(warmup + measured), "--warmup-iters",
               str(warmup), "--device", "cpu", "--dtype", "fp32", "--num-threads", str(a.threads),
               "--executor", executor, "--quiet", "--json-path", out]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"tokbench failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
        with open(out) as f:
            return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=os.path.join(ROOT, "build", "bin", "tokbench"))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each executor per row (median reported)")
    p.add_argument("--warmup", type=int, default=1, help="warm-up iterations per run")
    p.add_argument("--measured", type=int, default=3, help="measured iterations per run")
    p.add_argument("--only", help="run only this model name")
    p.add_argument("--date", default=datetime.date.today().isoformat(), help="date for the results file name")
    p.add_argument("--no-write", action="store_true", help="print only; write no Markdown file")
    a = p.parse_args()
    if a.repeats < 1 or a.warmup < 0 or a.measured < 1 or a.threads < 1:
        sys.exit("--repeats, --measured and --threads must be >= 1 and --warmup >= 0")

    rows = []
    for name, n_layers in CONFIGS:
        if a.only and name != a.only:
            continue
        label = f"{name} ({n_layers} layers)"
        print(f"# {label}: fused calibration run (untimed) ...", flush=True)
        calibration = run_tokbench(a, name, n_layers, "fused", 0, 1)
        runs = {e: [] for e in EXECUTORS}
        for r in range(a.repeats):
            order = EXECUTORS if r % 2 == 0 else EXECUTORS[::-1]  # the lead alternates
            for executor in order:
                print(f"# {label}: {executor} (repeat {r + 1}/{a.repeats}) ...", flush=True)
                runs[executor].append(run_tokbench(a, name, n_layers, executor, a.warmup, a.measured))
        tps = {e: [x["tokens_per_sec"] for x in runs[e]] for e in EXECUTORS}
        med = {e: statistics.median(tps[e]) for e in EXECUTORS}
        mem = {e: statistics.median([x["memory_used_GB"] for x in runs[e]]) for e in EXECUTORS}
        loss = {e: runs[e][0]["loss_first"] for e in EXECUTORS}
        rows.append((label, runs, tps, med, mem, loss, calibration.get("kernels")))
        print(f"{label:28s} eager {med['eager']:8.1f}  fused {med['fused']:8.1f} tok/s  ratio "
              f"{med['fused'] / med['eager']:.3f}   memory {mem['eager']:.2f} -> {mem['fused']:.2f} GB", flush=True)

    first = rows[0][1]["eager"][0] if rows else {}
    torch_version = first.get("environment", {}).get("libtorch_version", "?")
    lines = [
        f"# CPU: tokbench --executor fused vs eager, {a.date}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}` (a shared VM: other"
        " builds ran on it during the measurement, so expect noise; the ranges show it)",
        f"- Threads: {a.threads}; LibTorch {torch_version}",
        f"- Workload: seq len {SEQ_LEN}, micro batch {MICRO_BATCH}, GA 1, fp32, random token ids, AdamW; "
        f"{a.warmup} warm-up + {a.measured} measured iterations per run, {a.repeats} runs per executor per row,"
        " the lead alternating; medians and the range of all runs",
        "- tokens/s = M·G·T / window, the same definition for both; memory = the peak of tokbench's CPU tensor counter",
        "",
        "| model | eager tok/s | fused tok/s | fused / eager | eager range | fused range | eager memory GB |"
        " fused memory GB | first loss eager / fused | fused kernels |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, runs, tps, med, mem, loss, kernels in rows:
        spread = {e: f"{min(tps[e]):.1f}–{max(tps[e]):.1f}" for e in EXECUTORS}
        lines.append(f"| {label} | {med['eager']:.1f} | {med['fused']:.1f} | {med['fused'] / med['eager']:.3f} | "
                     f"{spread['eager']} | {spread['fused']} | {mem['eager']:.2f} | {mem['fused']:.2f} | "
                     f"{loss['eager']:.4f} / {loss['fused']:.4f} | {kernels} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not a.no_write and rows:
        path = os.path.join(ROOT, "docs", "results", f"cpu-fused-{a.date}.md")
        with open(path, "w") as f:
            f.write(table)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
