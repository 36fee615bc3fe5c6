#!/usr/bin/env python3
"""tokbench vs the same training step in Python, on this machine, in one go.

For each configuration it runs `tokbench run` (JSON result) and bench/python_step.py (litgpt's
GPT + torch AdamW, same torch build, same thread count, same timing definition), prints
tokens/s of both and their ratio, and writes a Markdown table to
docs/results/cpu-side-by-side-<date>.md with the date and the machine. The goal is a ratio
>= 1 on every row. Runs are sequential, tokbench first then Python, so both see the same
machine state; iteration counts are small so the whole script takes minutes on 2 cores.

Usage: bench/run_side_by_side.py [--tokbench build/bin/tokbench] [--python .venv/bin/python]
                                 [--threads N] [--only NAME]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, n_layers, warm-up iterations, measured iterations (small: the big rows take ~20-40 s each)
CONFIGS = [
    ("pythia-14m", None, 3, 6),
    ("pythia-160m", 4, 1, 3),
    ("tiny-llama-1.1b", 2, 1, 2),
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
    p.add_argument("--only", help="run only this model name")
    p.add_argument("--no-write", action="store_true", help="print only; write no Markdown file")
    a = p.parse_args()

    rows = []
    for name, n_layers, warmup, measured in CONFIGS:
        if a.only and name != a.only:
            continue
        label = name + (f" ({n_layers} layers)" if n_layers else "")
        print(f"# {label}: tokbench ...", flush=True)
        t = run_tokbench(a.tokbench, name, n_layers, warmup, measured, a.threads)
        print(f"# {label}: python ...", flush=True)
        py = run_python(a.python, name, n_layers, warmup, measured, a.threads)
        ratio = t["tokens_per_sec"] / py["tokens_per_sec"]
        rows.append((label, t, py, ratio, warmup, measured))
        print(f"{label:32s} tokbench {t['tokens_per_sec']:10.1f} tok/s   python {py['tokens_per_sec']:10.1f} tok/s"
              f"   ratio {ratio:.3f}", flush=True)

    today = datetime.date.today().isoformat()
    lines = [
        f"# CPU side by side: tokbench vs Python (litgpt + torch.optim.AdamW), {today}",
        "",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, host `{platform.node()}`",
        f"- Threads: {a.threads} for both; torch {rows[0][2]['torch_version'] if rows else '?'} (Python) and "
        f"LibTorch {rows[0][1]['environment']['libtorch_version'] if rows else '?'} (tokbench)",
        f"- Workload: seq len {SEQ_LEN}, micro batch {MICRO_BATCH}, GA 1, fp32, AdamW lr 5e-4 wd 0.1 betas (0.9, 0.95),"
        " random token ids 0..99",
        "- tokens/s = M·G·T / window (end of last warm-up iteration to end of last), the same definition for both;"
        " tokbench first, then Python, sequentially",
        "- The machine is shared; few iterations are measured, so expect a few percent of noise.",
        "",
        "| model | warm-up + measured | tokbench tok/s | Python tok/s | ratio | tokbench ms/iter | Python ms/iter |"
        " tokbench TFLOP/s | MFU (CPU estimate) | tokbench harness overhead |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, t, py, ratio, warmup, measured in rows:
        mfu = f"{t['mfu'] * 100:.1f}%" if t.get("mfu") is not None else "N/A"
        overhead = t.get("harness_overhead_percent")
        lines.append(
            f"| {label} | {warmup} + {measured} | {t['tokens_per_sec']:.1f} | {py['tokens_per_sec']:.1f} | "
            f"{ratio:.3f} | {t['average_iter_time']:.1f} | {py['average_iter_time']:.1f} | "
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
