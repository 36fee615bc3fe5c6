#!/usr/bin/env python3
"""`tokbench run --profile PATH`: the Chrome trace parses as JSON, holds matmul operators and
the named forward/backward/optimizer ranges, and the profiled iterations stay out of the
metrics (measured_iters is still max_iters - warmup_iters). With two ranks each rank writes its
own trace, PATH with _rankN before the extension, each holding its own process's step and its
collectives' waits, and bench/op_times.py reads a one-rank trace against a rank's: self time per
operator and iteration (exact on a hand-made trace), the rank's collectives where the one-rank
run has none. A bad --profile is one usage line.
Usage: cli_profile.py /path/to/tokbench"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
OP_TIMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "op_times.py")
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

    # bench/op_times.py: the one-rank trace (2 iterations) against rank 1's (1 iteration).
    table = os.path.join(scratch, "op_times.json")
    proc = subprocess.run([sys.executable, OP_TIMES, trace_path, want[1], "--json", table],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        fail(f"op_times.py: exit {proc.returncode}", proc)
    with open(table) as f:
        t = json.load(f)
    rows = {r["operator"]: r for r in t["rows"]}
    if (t["iterations_a"], t["iterations_b"]) != (2, 1):
        fail(f"op_times.py counted {t['iterations_a']} and {t['iterations_b']} iterations, not 2 and 1")
    comm = [r for name, r in rows.items() if name.startswith("gloo:") or name == "tokbench::comm_wait"]
    if not comm or any(r["a_ms"] != 0 or r["b_ms"] <= 0 for r in comm):
        fail(f"op_times.py: the rank's collectives not apart from the one-rank run: {comm}")
    if not any(r["a_ms"] > 0 and r["b_ms"] > 0 for name, r in rows.items() if name in ("aten::mm", "aten::addmm")):
        fail("op_times.py: no matmul timed on both sides")
    # A hand-made trace: an operator of 10 ms holding one of 4 ms holding one of 1 ms, on one thread,
    # two iterations; the other trace the 4 ms one alone, one iteration.
    def trace(events):
        path = os.path.join(scratch, f"hand{len(events)}.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": [dict(ph="X", cat="cpu_op", pid=1, tid=1, **e) for e in events]}, f)
        return path
    nested = trace([dict(name="outer", ts=0, dur=10000), dict(name="middle", ts=1000, dur=4000),
                    dict(name="inner", ts=2000, dur=1000), dict(name="optimizer", ts=20000, dur=10),
                    dict(name="optimizer", ts=30000, dur=10)])
    alone = trace([dict(name="middle", ts=0, dur=4000), dict(name="optimizer", ts=5000, dur=10)])
    proc = subprocess.run([sys.executable, OP_TIMES, nested, alone, "--json", table], capture_output=True, text=True,
                          timeout=60)
    with open(table) as f:
        rows = {r["operator"]: (r["a_ms"], r["b_ms"]) for r in json.load(f)["rows"]}
    want_rows = {"outer": (3.0, 0.0), "middle": (1.5, 4.0), "inner": (0.5, 0.0), "optimizer": (0.01, 0.01)}
    if proc.returncode != 0 or any(abs(rows[k][i] - v[i]) > 1e-9 for k, v in want_rows.items() for i in (0, 1)):
        fail(f"op_times.py on hand-made traces: {rows}, want {want_rows}", proc)
    proc = subprocess.run([sys.executable, OP_TIMES, trace([dict(name="x", ts=0, dur=5)]), alone],
                          capture_output=True, text=True, timeout=60)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode == 0 or len(lines) != 1 or "optimizer" not in lines[0]:
        fail("op_times.py on a trace without iterations: want one line naming the missing 'optimizer' range", proc)

    for bad, needle in [(["--profile", os.path.join(scratch, "no-such-dir", "t.json")], "does not exist"),
                        (["--profile-iters", "2"], "needs --profile"),
                        (["--profile", trace_path, "--profile-iters", "0"], "--profile-iters")]:
        proc = run(SMALL + bad)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if proc.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
            fail(f"{bad}: want exit 2 and one line with {needle!r}", proc)
print("ok")
