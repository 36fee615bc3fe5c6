#!/usr/bin/env python3
"""Do two tokbench binaries give the same outputs on the same inputs, apart from timings?

For a change that should not alter behaviour (a restructuring): runs a fixed set of commands
with each binary — one-rank runs of both tokbench executors, a Python executor, 2-rank DDP and
FSDP runs, a sweep written in every format, `info` and `models` — and compares what they
write. JSON records are compared leaf by leaf, except values that depend on timing or on the
moment (times, rates, FLOP/s, MFU, process RSS, the environment block); their presence and
type are still compared. Sweep tables are compared with every number masked, so their shape,
headers, index columns and statuses must match. Then both binaries read the same records (the
old binary's): `explain`, `compare` and `predict` over them must print the same bytes and exit
the same way, timings included, since a reader only computes from what it is given. Prints each
difference and exits 1 if any.

With --intended REGEX, record keys matching it (a key the change adds on purpose) are left out.

Usage: scripts/same_outputs.py OLD_TOKBENCH NEW_TOKBENCH [--keep DIR] [--intended REGEX]"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SMALL = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "64", "--max-iters", "4",
         "--warmup-iters", "2", "--device", "cpu", "--num-threads", "1"]
RUNS = {
    "eager": SMALL,
    "fused_ga2": SMALL + ["--executor", "fused", "--global-batch-size", "2"],
    "bf16": SMALL + ["--dtype", "bf16-true"],
    "checkpointing": SMALL + ["--checkpoint-activations"],
    "python_eager": SMALL + ["--executor", "python-eager"],
    "ddp_2": SMALL + ["--nproc-per-node", "2", "--distributed-mode", "ddp", "--global-batch-size", "4"],
    "fsdp_zero3_block_2": SMALL + ["--nproc-per-node", "2", "--distributed-mode", "fsdp", "--shard-mode", "zero3",
                                   "--bucketing-mode", "block"],
}
SWEEP = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "64", "--max-iters", "3", "--warmup-iters", "1",
         "--num-threads", "1", "--executor", "eager,fused", "--micro-batch-size", "1,2"]
FORMATS = ["print", "csv", "markdown", "json", "html"]
# Also measured on each run: the fused executor's GEMM choice (`kernels`, timed at start-up
# per side's cache) and the caching allocator's reserve (memory_allocator_reserve_GB, reserved_*:
# what jemalloc keeps is timing-dependent), and the reference probe's relative_iqr (its products'
# spread).
VOLATILE = re.compile(r"kernels|reserve|time|per_sec|per_s\b|_per_s_|TFLOP|flop_per_sec|mfu|hfu|window|overhead|rss|seconds|_ms\b|_ms_|iqr|"
                      r"environment|date|revision|host|measured_at|elapsed|duration|started|finished|sweep_id|path|dir",
                      re.IGNORECASE)


def leaves(value, prefix=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{prefix}[{i}]")
    else:
        yield prefix, value


def compare_json(name, old, new, problems, intended=None):
    a, b = dict(leaves(old)), dict(leaves(new))
    for key in sorted(set(a) | set(b)):
        if intended is not None and intended.search(key):
            continue  # a key the change means to add, remove or alter (--intended)
        if key not in a or key not in b:
            problems.append(f"{name}: {key} only in {'new' if key in b else 'old'}")
            continue
        if VOLATILE.search(key):
            if type(a[key]) is not type(b[key]) and not (isinstance(a[key], (int, float)) and isinstance(b[key], (int, float))):
                problems.append(f"{name}: {key} changed type {type(a[key]).__name__} -> {type(b[key]).__name__}")
            continue
        if a[key] != b[key]:
            problems.append(f"{name}: {key}: {a[key]!r} -> {b[key]!r}")


def mask_numbers(text, root):
    """A table with what differs between any two sweeps masked: the sides' folders, git
    revisions (and ids derived from hashes: at least one letter, so a long fraction is a number),
    then every number (thousands separators included), then the padding and rules whose widths
    follow the numbers."""
    text = text.replace(root, "ROOT")
    # numbers with a point first (a fraction's digits and exponent, 1.23456789e-05, read as hex)
    text = re.sub(r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?|[-+]?\d+\.\d+([eE][-+]?\d+)?", "#", text)
    text = re.sub(r"\b(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(-dirty)?\b", "HEX", text)
    text = re.sub(r"[-+]?\d+([eE][-+]?\d+)?", "#", text)
    # lists ordered by their timings (the account's largest unclassified ranges)
    text = re.sub(r'("+other_top"+:\s*)\[[^\]]*\]', r"\1[...]", text)
    # charts, whose axes' ticks follow the timings they plot
    text = re.sub(r"<svg\b.*?</svg>", "<svg/>", text, flags=re.DOTALL)
    text = re.sub(r"[-─═=]{2,}", "-", text)
    return re.sub(r"[ \t]+", " ", text)


def produce(binary, out):
    os.makedirs(out, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "TOKBENCH_LAUNCHED")}
    # Each side measures its own kernel choices and peaks, so neither reads the other's cache.
    env["TOKBENCH_CACHE_DIR"] = os.path.join(out, "cache")
    for name, args in RUNS.items():
        proc = subprocess.run([binary, "run", *args, "--json-path", os.path.join(out, name + ".json"), "--quiet"],
                              capture_output=True, text=True, timeout=900, env=env)
        if proc.returncode != 0:
            sys.exit(f"{binary} run {name} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    sweep = os.path.join(out, "sweep")
    proc = subprocess.run([binary, "sweep", *SWEEP, "--out", sweep, "--format", "json"], capture_output=True,
                          text=True, timeout=1800, env=env)
    if proc.returncode != 0:
        sys.exit(f"{binary} sweep exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    for fmt in FORMATS:
        table = os.path.join(out, f"sweep.{fmt}.txt")
        extra = ["--output", table] if fmt == "html" else []  # html goes to a file only
        proc = subprocess.run([binary, "sweep", *SWEEP, "--out", sweep, "--format", fmt, *extra],
                              capture_output=True, text=True, timeout=600, env=env)  # resumes: every row is there
        if not extra:
            with open(table, "w") as f:
                f.write(proc.stdout)
    for name, args in {"info": ["info", "Llama-3.2-1B"], "models": ["models"]}.items():
        proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, env=env)
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write(proc.stdout)


CPU_CLUSTER = ('device = "cpu"\ndevices_per_node = 4\ncores_per_node = 2\n'
               '[intra_node]\nbandwidth_GBps = 5\nlatency_us = 20\n')


def reader_commands(records):
    """The readers' command lines over one set of records (the old binary's)."""
    r = lambda name: os.path.join(records, name + ".json")
    cluster = os.path.join(records, "cpu-cluster.toml")
    with open(cluster, "w") as f:
        f.write(CPU_CLUSTER)
    predict = ["predict", "--cluster", cluster]
    return {
        "explain_text": ["explain", r("python_eager"), r("eager")],
        "explain_json": ["explain", r("eager"), r("fused_ga2"), "--format", "json"],  # two configurations: refused
        "explain_same": ["explain", r("eager"), r("python_eager"), "--format", "json"],
        "compare_runs": ["compare", r("eager"), r("python_eager")],
        "compare_other": ["compare", r("eager"), r("bf16")],
        "compare_sweeps": ["compare", os.path.join(records, "sweep"), os.path.join(records, "sweep"), "--threshold", "1%"],
        "predict_one": predict + ["--from", r("eager"), "--format", "json"],
        "predict_ddp4": predict + ["--from", r("eager"), "--nproc-per-node", "4", "--distributed-mode", "ddp",
                                   "--format", "json"],
        "predict_fsdp": predict + ["--from", r("checkpointing"), "--nproc-per-node", "4", "--distributed-mode", "fsdp",
                                   "--shard-mode", "zero3", "--format", "csv"],
        "predict_from_ddp": predict + ["--from", r("ddp_2"), "--nproc-per-node", "2", "--format", "json"],
        "predict_from_fsdp": predict + ["--from", r("fsdp_zero3_block_2"), "--nproc-per-node", "4", "--format", "print"],
        "predict_sweep": predict + ["--from", os.path.join(records, "sweep.json.txt"), "--nproc-per-node", "2",
                                    "--distributed-mode", "ddp", "--format", "json"],
        "predict_store": predict + ["--from", os.path.join(records, "sweep", "tokbench-results.sqlite") + ":1",
                                    "--nproc-per-node", "2", "--format", "csv"],
        "compare_store": ["compare", "1", "1", "--store", os.path.join(records, "sweep", "tokbench-results.sqlite")],
    }


def read_records(binary, records, out):
    """Runs each reader over `records` with `binary`; its exit code, stdout and stderr to `out`."""
    os.makedirs(out, exist_ok=True)
    for name, args in reader_commands(records).items():
        proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write(f"exit {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--keep", help="write both sets of outputs under this folder")
    p.add_argument("--intended", help="a regular expression of JSON key paths the change is meant to alter "
                   "(e.g. 'config\\.data_seed'): left out of the comparison of records and of the sweep's json table")
    a = p.parse_args()
    intended = re.compile(a.intended) if a.intended else None
    root = a.keep or tempfile.mkdtemp(prefix="same-outputs-")
    produce(os.path.abspath(a.old), os.path.join(root, "old"))
    produce(os.path.abspath(a.new), os.path.join(root, "new"))
    records = os.path.join(root, "old")
    read_records(os.path.abspath(a.old), records, os.path.join(root, "old-read"))
    read_records(os.path.abspath(a.new), records, os.path.join(root, "new-read"))
    problems = []
    for name in reader_commands(records):
        with open(os.path.join(root, "old-read", name + ".txt")) as f:
            old = f.read()
        with open(os.path.join(root, "new-read", name + ".txt")) as f:
            new = f.read()
        if old != new:
            problems.append(f"{name}: the readers' outputs differ (old-read/{name}.txt, new-read/{name}.txt)")
    for name in RUNS:
        with open(os.path.join(root, "old", name + ".json")) as f:
            old = json.load(f)
        with open(os.path.join(root, "new", name + ".json")) as f:
            new = json.load(f)
        compare_json(name, old, new, problems, intended)
    for fmt in FORMATS:
        for name in [f"sweep.{fmt}"]:
            if fmt == "json" and intended is not None:  # leaf by leaf, so the intended keys can be left out
                with open(os.path.join(root, "old", name + ".txt")) as f:
                    old = json.load(f)
                with open(os.path.join(root, "new", name + ".txt")) as f:
                    new = json.load(f)
                compare_json(name, old, new, problems, intended)
                continue
            with open(os.path.join(root, "old", name + ".txt")) as f:
                old = mask_numbers(f.read(), os.path.join(root, "old"))
            with open(os.path.join(root, "new", name + ".txt")) as f:
                new = mask_numbers(f.read(), os.path.join(root, "new"))
            if old != new:
                problems.append(f"{name}: the tables differ beyond their numbers")
    for name in ["info", "models"]:
        with open(os.path.join(root, "old", name + ".txt")) as f:
            old = f.read()
        with open(os.path.join(root, "new", name + ".txt")) as f:
            new = f.read()
        if old != new:
            problems.append(f"{name}: output differs")
    for line in problems:
        print(line)
    print(f"{len(problems)} difference(s); outputs under {root}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
