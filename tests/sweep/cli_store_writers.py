#!/usr/bin/env python3
"""Two real `tokbench sweep` processes writing one result store at once, then `tokbench history`.

Scenario:
  two_sweeps  two sweeps with different --out folders and one shared --store, started at the
              same moment (tiny runs: pythia-14m, one layer, T 32, 3 iterations); then both
              started again at once, so that the two resumed sweeps (every configuration done
              earlier) save at the same moment. `tokbench history --store FILE` must list both
              sweeps with all their runs, each sweep's rows must be its own configurations
              (csv and json read back), the store must hold each run and its iterations once,
              and nothing may be left beside the store (no -journal, -wal or -shm).
Usage: cli_store_writers.py /path/to/tokbench [two_sweeps]"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SCENARIO = sys.argv[2] if len(sys.argv) > 2 else "two_sweeps"
TINY = ["--model-name", "pythia-14m", "--n-layers", "1", "--max-iters", "3", "--warmup-iters", "1",
        "--num-threads", "1", "--device", "cpu"]


def fail(message, *procs):
    print("FAIL:", message)
    for proc in procs:
        out, err = (proc.stdout, proc.stderr) if hasattr(proc, "stdout") else proc
        print("--- stdout ---\n" + (out or "") + "\n--- stderr ---\n" + (err or ""))
    sys.exit(1)


def env():
    e = dict(os.environ)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_PORT", "TOKBENCH_LAUNCHED", "BENCHMARK_OUT_FORMAT"]:
        e.pop(name, None)
    return e


def sweeps_at_once(argvs):
    """Starts every sweep before waiting for any; returns (returncode, stdout, stderr) each."""
    procs = [subprocess.Popen([TOKBENCH, "sweep", *a], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env()) for a in argvs]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        results.append((p.returncode, out, err))
    return results


def history(*args):
    return subprocess.run([TOKBENCH, "history", *args], capture_output=True, text=True, env=env(), timeout=120)


def scenario_two_sweeps(scratch):
    store = os.path.join(scratch, "shared", "results.sqlite")
    os.makedirs(os.path.dirname(store))
    sweeps = {"a": ["32", "48"], "b": ["32", "64"]}  # configurations that say which sweep a row is from
    outs = {name: os.path.join(scratch, f"sweep-{name}") for name in sweeps}
    argvs = [[*TINY, "--seq-len", ",".join(lengths), "--out", outs[name], "--store", store, "--format", "csv"]
             for name, lengths in sweeps.items()]
    for attempt in ("first", "resumed"):
        results = sweeps_at_once(argvs)
        for (code, out, err), name in zip(results, sweeps):
            if code != 0 or "stored as sweep" not in err:
                fail(f"{attempt} sweep {name}: exit {code}, or not stored", (out, err))
            if attempt == "resumed" and err.count("done earlier") != 2:
                fail(f"resumed sweep {name} ran something again", (out, err))

    listing = history("--store", store)
    if listing.returncode != 0:
        fail("history", listing)
    rows = [line.split() for line in listing.stdout.splitlines() if not line.startswith("#") and line.strip()]
    listed = {row[3]: (int(row[0]), int(row[2])) for row in rows}  # out_dir -> (id, runs)
    want = {os.path.realpath(outs[name]) for name in sweeps}
    if set(listed) != want or any(runs != 2 for _, runs in listed.values()):
        fail(f"history lists {listed}; want both sweeps {sorted(want)} with 2 runs each", listing)

    table = history("--store", store, "--format", "csv")
    runs = list(csv.DictReader(io.StringIO(table.stdout)))
    if table.returncode != 0 or len(runs) != 4 or any(r["status"] != "ok" for r in runs):
        fail(f"history --format csv: {len(runs)} rows, want 4 ok", table)
    for name, lengths in sweeps.items():
        sweep_id, _ = listed[os.path.realpath(outs[name])]
        one = history("--store", store, "--sweep", str(sweep_id), "--format", "json")
        if one.returncode != 0:
            fail(f"history --sweep {sweep_id}", one)
        doc = json.loads(one.stdout)
        got = sorted(str(r["Seq Len"]) for r in doc["runs"])
        ids = sorted(r["sweep_config_id"] for r in doc["runs"])
        files = sorted(f[:-5] for f in os.listdir(os.path.join(outs[name], "runs")) if f.endswith(".json"))
        if got != sorted(lengths) or ids != files:
            fail(f"sweep {name} (id {sweep_id}): sequence lengths {got}, config ids {ids}; want {lengths}, {files}")

    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    counts = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("sweeps", "runs", "iterations")]
    db.close()
    if counts != [2, 4, 4 * 3]:
        fail(f"store holds sweeps/runs/iterations {counts}, want [2, 4, 12]")
    beside = sorted(os.listdir(os.path.dirname(store)))
    if beside != ["results.sqlite"]:
        fail(f"files beside the store after the writers and readers: {beside}")
    print(f"two sweeps at once, twice: {counts[0]} sweeps, {counts[1]} runs, {counts[2]} iterations in the store")


with tempfile.TemporaryDirectory() as scratch:
    {"two_sweeps": scenario_two_sweeps}[SCENARIO](scratch)
print("PASS", SCENARIO)
