#!/usr/bin/env python3
"""`tokbench run`'s time account (docs/time-account.md) through the CLI, eager and fused: the JSON
record's `time_account` has every category; shares add up to 1 and seconds to the measured
iteration; the MFU costs, the products beyond the model's and the MFU add up to 100% of the peak;
the matrix FLOPs counted equal the model's; the report prints the waterfall down to the run's
MFU. --time-account-iters 0 leaves it out; the test hook TOKBENCH_TEST_HOST_DELAY_MS lands in
data_host; a bad value is one usage line (exit 2).
Usage: cli_time_account.py /path/to/tokbench"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "64", "--micro-batch-size", "2",
         "--max-iters", "4", "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1", "--quiet",
         "--unit-timing-iters", "0", "--peak-tflops", "1"]
CATEGORIES = ["gemm", "attention", "normalization", "elementwise", "loss", "optimizer", "data_host",
              "exposed_comm", "device_idle", "other"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    sys.exit(1)


def run(args, delay_ms=None, ranks=None):
    env = dict(os.environ)
    env.pop("WORLD_SIZE", None)
    env.pop("TOKBENCH_TEST_HOST_DELAY_MS", None)
    if delay_ms is not None:
        env["TOKBENCH_TEST_HOST_DELAY_MS"] = str(delay_ms)
    if ranks is not None:  # this process as rank 0 of a job of `ranks`, as a launcher starts it
        env.update(WORLD_SIZE=str(ranks), RANK="0", LOCAL_RANK="0")
    return subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, timeout=600, env=env)


def close(a, b, tolerance=1e-9):
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


def record(args, out, delay_ms=None):
    proc = run(args + ["--json-path", out], delay_ms)
    if proc.returncode != 0:
        fail(f"{args}: exit {proc.returncode}", proc)
    with open(out) as f:
        return json.load(f), proc


with tempfile.TemporaryDirectory() as scratch:
    out = os.path.join(scratch, "result.json")
    for executor in ("eager", "fused"):
        j, proc = record(SMALL + ["--executor", executor], out)
        t = j["time_account"]
        if not isinstance(t, dict):
            fail(f"{executor}: no time_account in the record (the default is on)", proc)
        if j["config"]["time_account_iters"] is not None or t["profiled_iters"] != 2:
            fail(f"{executor}: want the default of 2 profiled iterations, got {t['profiled_iters']}")
        if j["measured_iters"] != 3 or len(j["iterations"]) != 4:
            fail(f"{executor}: the profiled iterations leaked into the metrics")
        if sorted(t["categories"]) != sorted(CATEGORIES):
            fail(f"{executor}: categories {sorted(t['categories'])}")
        cats = t["categories"].values()
        if not close(sum(c["share"] for c in cats), 1.0):
            fail(f"{executor}: shares add up to {sum(c['share'] for c in cats)}")
        if not close(sum(c["s"] for c in cats), j["average_iter_time"] / 1e3) or not close(t["iteration_s"], j["average_iter_time"] / 1e3):
            fail(f"{executor}: seconds add up to {sum(c['s'] for c in cats)}, the iteration is {j['average_iter_time']} ms")
        if not close(sum(c["mfu_cost"] for c in cats) + t["beyond_model_mfu_cost"] + t["mfu"], 1.0):
            fail(f"{executor}: costs + MFU = {sum(c['mfu_cost'] for c in cats) + t['beyond_model_mfu_cost'] + t['mfu']}")
        if not close(t["mfu"], j["mfu"]):
            fail(f"{executor}: the account ends at MFU {t['mfu']}, the run's is {j['mfu']}")
        if t["gemm_flops_per_iter"] + t["attention_flops_per_iter"] != j["model_flops_per_iter_per_device"] or t["uncounted_matmuls"]:
            fail(f"{executor}: counted {t['gemm_flops_per_iter']} + {t['attention_flops_per_iter']} matrix FLOPs, "
                 f"the model's are {j['model_flops_per_iter_per_device']}")
        for needle in ("Where the time goes", "GEMMs below the ceiling", "= MFU", f"{j['mfu'] * 100:.2f}%"):
            if needle not in proc.stdout:
                fail(f"{executor}: the report has no {needle!r}", proc)

    j, proc = record(SMALL + ["--time-account-iters", "0"], out)
    if j["time_account"] is not None or "Where the time goes" in proc.stdout:
        fail("--time-account-iters 0 still made an account", proc)

    # The test hook: 150 ms of host sleep per iteration lands in data/host, not elsewhere.
    j, proc = record(SMALL + ["--time-account-iters", "3"], out, delay_ms=150)
    data_host = j["time_account"]["categories"]["data_host"]["profiled_s"]
    if abs(data_host - 0.15) > 0.015:
        fail(f"a 150 ms host delay shows as {data_host * 1e3:.1f} ms of data/host", proc)

    for bad, needle, delay, ranks in [
            (["--time-account-iters", "101"], "--time-account-iters 101", None, None),
            (["--time-account-iters", "-1"], "--time-account-iters", None, None),
            (["--distributed-mode", "ddp"], "@RANK with RANK 0..1", "150@2", 2),
            ([], "TOKBENCH_TEST_HOST_DELAY_MS", "soon", None)]:
        proc = run(SMALL + bad, delay, ranks)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if proc.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
            fail(f"{bad} (delay {delay}): want exit 2 and one line with {needle!r}", proc)
print("ok")
