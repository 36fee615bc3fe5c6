#!/usr/bin/env python3
"""`tokbench run --profile PATH`: the Chrome trace parses as JSON, holds matmul operators and
the named forward/backward/optimizer ranges, and the profiled iterations stay out of the
metrics (measured_iters is still max_iters - warmup_iters). With two ranks each rank writes its
own trace, PATH with _rankN before the extension, each holding its own process's step and its
collectives' waits. A bad --profile is one usage line.
Usage: cli_profile.py /path/to/tokbench"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32", "--micro-batch-size", "2",
         "--max-iters", "4", "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1", "--quiet"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    sys.exit(1)


def run(args):
    env = dict(os.environ)
    env.pop("WORLD_SIZE", None)
    return subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, timeout=600, env=env)


with tempfile.TemporaryDirectory() as scratch:
    trace_path, out = os.path.join(scratch, "out.json"), os.path.join(scratch, "result.json")
    proc = run(SMALL + ["--profile", trace_path, "--profile-iters", "2", "--json-path", out])
    if proc.returncode != 0:
        fail(f"exit {proc.returncode}", proc)
    if "Chrome trace of 2 iterations after the measured window" not in proc.stdout:
        fail("the report does not say where the trace went", proc)
    with open(trace_path) as f:
        trace = json.load(f)
    names = {e.get("name") for e in trace["traceEvents"]}
    if not names & {"aten::mm", "aten::addmm", "aten::linear", "aten::matmul"}:
        fail(f"no matmul operator among {len(names)} event names: {sorted(n for n in names if n)[:40]}")
    for wanted in ("forward", "backward", "optimizer"):
        if wanted not in names:
            fail(f"no '{wanted}' range in the trace")
    with open(out) as f:
        j = json.load(f)
    if j["measured_iters"] != 3 or len(j["iterations"]) != 4:
        fail(f"profiled iterations leaked into the metrics: measured_iters {j['measured_iters']}, "
             f"{len(j['iterations'])} iterations recorded")

    # Two DDP ranks: one trace per rank, named as the report says, each a whole step of its own.
    ranks_path = os.path.join(scratch, "ranks.trace.json")
    proc = run(SMALL + ["--nproc-per-node", "2", "--distributed-mode", "ddp", "--global-batch-size", "4",
                        "--profile", ranks_path, "--profile-iters", "1"])
    if proc.returncode != 0:
        fail(f"two ranks: exit {proc.returncode}", proc)
    want = [os.path.join(scratch, f"ranks.trace_rank{r}.json") for r in range(2)]
    if f"written to {want[0]}" not in proc.stdout or "ranks.trace_rank1.json" not in proc.stdout:
        fail("two ranks: the report does not name rank 0's trace and the last rank's", proc)
    if os.path.exists(ranks_path):
        fail("two ranks: a trace was written under the unsuffixed name")
    pids = set()
    for path in want:
        if not os.path.exists(path):
            fail(f"two ranks: no trace at {path}; the folder holds {sorted(os.listdir(scratch))}", proc)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        names = {e.get("name") for e in events}
        for wanted in ("forward", "backward", "optimizer"):
            if wanted not in names:
                fail(f"two ranks: no '{wanted}' range in {path}")
        pids |= {e["pid"] for e in events if e.get("name") == "forward"}
    if len(pids) != 2:
        fail(f"two ranks: the traces' forward ranges come from {len(pids)} process(es), not 2: {sorted(pids)}")

    for bad, needle in [(["--profile", os.path.join(scratch, "no-such-dir", "t.json")], "does not exist"),
                        (["--profile-iters", "2"], "needs --profile"),
                        (["--profile", trace_path, "--profile-iters", "0"], "--profile-iters")]:
        proc = run(SMALL + bad)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if proc.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
            fail(f"{bad}: want exit 2 and one line with {needle!r}", proc)
print("ok")
