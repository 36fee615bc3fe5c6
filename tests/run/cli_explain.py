#!/usr/bin/env python3
"""`tokbench explain BASE.json RUN.json` over real runs (docs/time-account.md, "explain"): eager
against fused on one configuration. The JSON's per-category differences are the two records'
category seconds subtracted and sum to the difference of their iteration times; the text names
both runs and ends in the sentence. Refused in one line (exit 2): two configurations (naming the
key and both values), a record without an account (naming --time-account-iters), a run that did
not finish, a bad --format.
Usage: cli_explain.py /path/to/tokbench"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "64", "--micro-batch-size", "2",
         "--max-iters", "4", "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1", "--quiet",
         "--unit-timing-iters", "0", "--peak-tflops", "1"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    sys.exit(1)


def tokbench(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "TOKBENCH_TEST_HOST_DELAY_MS")}
    return subprocess.run([TOKBENCH, *args], capture_output=True, text=True, timeout=600, env=env)


def record(path, *args):
    proc = tokbench("run", *SMALL, *args, "--json-path", path)
    if proc.returncode != 0:
        fail(f"run {args}: exit {proc.returncode}", proc)
    with open(path) as f:
        return json.load(f)


def refused(proc, needles, what):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 2 or len(lines) != 1 or not all(n in lines[0] for n in needles):
        fail(f"{what}: exit {proc.returncode}, stderr {lines}; want 2 and one line with {needles}", proc)


with tempfile.TemporaryDirectory() as scratch:
    eager_path, fused_path = os.path.join(scratch, "eager.json"), os.path.join(scratch, "fused.json")
    eager = record(eager_path, "--executor", "eager")
    fused = record(fused_path, "--executor", "fused")

    proc = tokbench("explain", eager_path, fused_path, "--format", "json")
    if proc.returncode != 0:
        fail(f"explain: exit {proc.returncode}", proc)
    e = json.loads(proc.stdout)
    if (e["base"], e["run"]) != ("eager", "fused"):
        fail(f"names: {e['base']} {e['run']}")
    total = 0.0
    for name, c in e["categories"].items():
        want = (fused["time_account"]["categories"][name]["s"] - eager["time_account"]["categories"][name]["s"]) * 1e3
        if abs(c["difference_ms"] - want) > 1e-9 * max(1.0, abs(want)):
            fail(f"{name}: difference {c['difference_ms']} ms, the records say {want}")
        total += c["difference_ms"]
    iteration = (fused["time_account"]["iteration_s"] - eager["time_account"]["iteration_s"]) * 1e3
    if abs(total - iteration) > 1e-6 * max(1.0, abs(iteration)) or abs(e["iteration_ms"]["difference"] - iteration) > 1e-9:
        fail(f"categories sum to {total} ms, the iterations differ by {iteration} ms")
    print(e["sentence"])

    proc = tokbench("explain", eager_path, fused_path)
    if proc.returncode != 0 or "fused against eager" not in proc.stdout or e["sentence"] not in proc.stdout:
        fail("the text explanation", proc)

    longer = record(os.path.join(scratch, "longer.json"), "--executor", "fused", "--seq-len", "32")
    refused(tokbench("explain", eager_path, os.path.join(scratch, "longer.json")),
            ["different configurations", "'Seq Len' is 64 and 32"], "two configurations")
    record(os.path.join(scratch, "none.json"), "--executor", "fused", "--time-account-iters", "0")
    refused(tokbench("explain", eager_path, os.path.join(scratch, "none.json")),
            ["none.json", "no time account", "--time-account-iters"], "no account")
    oom = dict(fused, status="oom", message="out of memory")
    with open(os.path.join(scratch, "oom.json"), "w") as f:
        json.dump(oom, f)
    refused(tokbench("explain", os.path.join(scratch, "oom.json"), fused_path), ["oom.json", "status 'oom'"],
            "a run that did not finish")
    refused(tokbench("explain", eager_path, fused_path, "--format", "xml"), ["--format", "xml", "text, json"],
            "a bad format")
print("PASS explain")
