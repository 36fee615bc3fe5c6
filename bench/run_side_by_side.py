#!/usr/bin/env python3
"""tokbench vs the same training step in Python, on this machine, in one go.

For each configuration it runs `tokbench run` (JSON result) and bench/python_step.py (litgpt's
GPT + torch AdamW, same torch build, same thread count, same timing definition), prints
tokens/s of both and their ratio, and writes a Markdown table to
docs/results/cpu-side-by-side-<date>.md with the date and the machine. The goal is a ratio
>= 1 on every row. Each pair runs --repeats times, alternating which side goes first, and the
table reports the median of each side (and the spread), so a burst of load on a shared machine
moves one sample, not the verdict; the whole script takes minutes on 2 cores.

Usage: bench/run_side_by_side.py [--tokbench build/bin/tokbench] [--python .venv/bin/python]
                                 [--threads N] [--repeats R] [--only NAME]
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

# name, n_layers, warm-up iterations, measured iterations (small: the big rows take ~20-40 s each)
CONFIGS = [
    ("pythia-14m", None, 3, 8),
    ("pythia-160m", 4, 1, 4),
    ("tiny-llama-1.1b", 2, 1, 3),
]
SEQ_LEN, MICRO_BATCH = 512, 4


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_tokbench(binary, name, n_layers, warmup, measured, threads):
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "r.json")
        cmd = [binary, "run", "--model-name", name, "--seq-len", str(SEQ_LEN), "--micro-batch-size",
               str(MICRO_BATCH), "--max-iters", str(warmup + measured), "--warmup-iters", str(warmup),
               "--device", "cpu", "--dtype", "fp32", "--num-threads", str(threads), "--quiet",
               "--json-path", out]
        if n_layers:
            cmd += ["--n-layers", str(n_layers)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"tokbench failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
        with open(out) as f:
            return json.load(f)


def run_python(python, name, n_layers, warmup, measured, threads):
    cmd = [python, os.path.join(ROOT, "bench", "python_step.py"), "--model-name", name, "--seq-len",
           str(SEQ_LEN), "--micro-batch-size", str(MICRO_BATCH), "--max-iters", str(warmup + measured),
           "--warmup-iters", str(warmup), "--num-threads", str(threads)]
    if n_layers:
        cmd += ["--n-layers", str(n_layers)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"python step failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=os.path.join(ROOT, "build", "bin", "tokbench"))
    p.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=3, help="runs of each side per row (median reported)")
    p.add_argument("--only", help="run only this model name")
    p.add_argument("--no-write", action="store_true", help="print only; write no Markdown file")
    a = p.parse_args()

    rows = []
    for name, n_layers, warmup, measured in CONFIGS:
        if a.only and name != a.only:
            continue
        label = name + (f" ({n_layers} layers)" if n_layers else "")
        ours, theirs = [], []
        for r in range(a.repeats):
            order = ("tokbench", "python") if r % 2 == 0 else ("python", "tokbench")
            for side in order:
                print(f"# {label}: {side} (repeat {r + 1}/{a.repeats}) ...", flush=True)
                if side == "tokbench":
                    ours.append(run_tokbench(a.tokbench, name, n_layers, warmup, measured, a.threads))
                else:
                    theirs.append(run_python(a.python, name, n_layers, warmup, measured, a.threads))
        ours_tps = [t["tokens_per_sec"] for t in ours]
        theirs_tps = [py["tokens_per_sec"] for py in theirs]
        # The run whose tokens/s is the median stands for its side in the table.
        t = sorted(ours, key=lambda x: x["tokens_per_sec"])[len(ours) // 2]
        py = sorted(theirs, key=lambda x: x["tokens_per_sec"])[len(theirs) // 2]
        ratio = statistics.median(ours_tps) / statistics.median(theirs_tps)
        rows.append((label, t, py, ratio, warmup, measured, ours_tps, theirs_tps))
        print(f"{label:32s} tokbench {statistics.median(ours_tps):10.1f} tok/s   python "
              f"{statistics.median(theirs_tps):10.1f} tok/s   ratio {ratio:.3f}", flush=True)

    today = datetime.date.today().isoformat()
    lines = [
        f"# CPU side by side: tokbench vs Python (litgpt + torch.optim.AdamW), {today}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}`",
        f"- Threads: {a.threads} for both; torch {rows[0][2]['torch_version'] if rows else '?'} (Python) and "
        f"LibTorch {rows[0][1]['environment']['libtorch_version'] if rows else '?'} (tokbench)",
        f"- Workload: seq len {SEQ_LEN}, micro batch {MICRO_BATCH}, GA 1, fp32, AdamW lr 5e-4 wd 0.1 betas (0.9, 0.95),"
        " random token ids 0..99",
        "- tokens/s = M·G·T / window (end of last warm-up iteration to end of last), the same definition for both",
        f"- Each side ran {a.repeats} times per row, alternating which went first; the table shows the median"
        " run of each side and the range of all runs. Both use fused AdamW (the same ATen kernel).",
        "",
        "| model | warm-up + measured | tokbench tok/s (median) | Python tok/s (median) | ratio | tokbench range | Python range | tokbench ms/iter | Python ms/iter |"
        " tokbench TFLOP/s | MFU (CPU estimate) | tokbench harness overhead |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, t, py, ratio, warmup, measured, ours_tps, theirs_tps in rows:
        mfu = f"{t['mfu'] * 100:.1f}%" if t.get("mfu") is not None else "N/A"
        overhead = t.get("harness_overhead_percent")
        lines.append(
            f"| {label} | {warmup} + {measured} | {t['tokens_per_sec']:.1f} | {py['tokens_per_sec']:.1f} | "
            f"{ratio:.3f} | {min(ours_tps):.1f}–{max(ours_tps):.1f} | {min(theirs_tps):.1f}–{max(theirs_tps):.1f} | "
            f"{t['average_iter_time']:.1f} | {py['average_iter_time']:.1f} | "
            f"{t['model_TFLOP_per_s_total']:.4f} | {mfu} | "
            f"{'N/A' if overhead is None else f'{overhead:.3f}%'} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not a.no_write and rows:
        path = os.path.join(ROOT, "docs", "results", f"cpu-side-by-side-{today}.md")
        with open(path, "w") as f:
            f.write(table)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
