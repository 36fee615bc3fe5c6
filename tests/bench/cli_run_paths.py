#!/usr/bin/env python3
"""Runs the real `tokbench run` through one exit path and checks the exit code and the JSON.
Scenarios: real_run (contract identities), oom (tiny CPU memory cap -> 3), nan (huge lr -> 4),
interrupt (SIGINT mid-run -> 5), stdout_json (--return_metrics_as_json without a path).
Usage: cli_run_paths.py /path/to/tokbench SCENARIO"""
import json
import math
import os
import signal
import subprocess
import sys
import tempfile

TOKBENCH, SCENARIO = sys.argv[1], sys.argv[2]
# The short real run of the issue: GA = 4 / 2 = 2, four measured iterations.
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32", "--micro-batch-size", "2",
         "--global-batch-size", "4", "--max-iters", "6", "--warmup-iters", "2", "--device", "cpu",
         "--num-threads", "1"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "") + "\n--- stderr ---\n" + (proc.stderr or ""))
    sys.exit(1)


def rel(a, b):
    return abs(a - b) / abs(b)


def run(args, **kw):
    env = dict(os.environ)
    env.pop("WORLD_SIZE", None)
    return subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, timeout=500, env=env, **kw)


def load(path, proc):
    if not os.path.exists(path):
        fail(f"no JSON at {path}", proc)
    with open(path) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as scratch:
    out = os.path.join(scratch, "result.json")
    if SCENARIO == "real_run":
        proc = run(SMALL + ["--json_path=" + out, "--return_metrics_as_json=True"])
        if proc.returncode != 0:
            fail(f"exit {proc.returncode}", proc)
        j = load(out, proc)
        if j["status"] != "ok" or j["GA"] != 2 or j["Global BS"] != 4 or j["Seq Len"] != 32:
            fail(f"bad header fields {j['status']} {j['GA']} {j['Global BS']} {j['Seq Len']}", proc)
        if j["measured_iters"] != 4:
            fail(f"measured_iters {j['measured_iters']}")
        identity = j["tokens_per_sec"] * j["average_iter_time"] / 1000
        if rel(identity, j["Global BS"] * j["Seq Len"]) > 1e-9:
            fail(f"tokens/s x avg iter time = {identity}, want {j['Global BS'] * j['Seq Len']}")
        flops_identity = j["model_flop_per_sec"] * j["average_iter_time"] / 1000
        want_flops = j["model_flops"] * j["GA"] * j["Num GPUS"]
        if rel(flops_identity, want_flops) > 1e-9:
            fail(f"model_flop_per_sec x avg = {flops_identity}, want model_flops x GA x W = {want_flops}")
        if rel(j["tokens_per_sec_per_device"] * j["Num GPUS"], j["tokens_per_sec"]) > 1e-12:
            fail("tokens_per_sec_per_device x W != tokens_per_sec")
        stats = j["iter_time_ms"]
        if not (stats["min"] <= stats["p10"] <= stats["median"] <= stats["p90"] <= stats["max"]):
            fail(f"iteration-time statistics out of order: {stats}")
        if not (math.isfinite(j["loss_first"]) and math.isfinite(j["loss_last"])):
            fail("losses not finite")
        if not j["memory_used_GB"] > 0 or j["parameters"] <= 0:
            fail("memory or parameter count missing")
        if j["mfu"] is not None and not (0 < j["mfu"] < 1):
            fail(f"mfu {j['mfu']} out of (0, 1)")
        for key in ("tokbench_version", "git_revision", "libtorch_version", "host", "time"):
            if not j["environment"].get(key):
                fail(f"environment.{key} missing")
        order = ["Model name:", "Seq Length:", "Micro BS:", "Global BS:", "Number of Layers:",
                 "Number of parameters:", "Distributed Mode:", "Compiler:", "Average iter time:",
                 "Memory used:", "Tokens/s:", "Tokens/s/GPU:", "TFLOP/s:"]
        positions = [proc.stdout.find("\n" + line) for line in order]
        if -1 in positions or positions != sorted(positions):
            fail(f"reference report lines missing or out of order: {positions}", proc)
        if proc.stdout.count("iter ") < 6:
            fail("expected one plain progress line per iteration when not on a terminal", proc)
    elif SCENARIO == "oom":
        proc = run(SMALL + ["--cpu-memory-cap-mb", "1", "--json-path", out])
        if proc.returncode != 3:
            fail(f"exit {proc.returncode}, want 3", proc)
        j = load(out, proc)
        if j["status"] != "oom":
            fail(f"status {j['status']}, want oom", proc)
        if j["tokens_per_sec"] is not None:
            fail("an OOM run must not report a rate")
    elif SCENARIO == "nan":
        proc = run(SMALL + ["--lr", "1e30", "--json-path", out])
        if proc.returncode != 4:
            fail(f"exit {proc.returncode}, want 4", proc)
        if load(out, proc)["status"] != "nan":
            fail("status is not nan", proc)
    elif SCENARIO == "interrupt":
        args = SMALL[:]
        args[args.index("--max-iters") + 1] = "100000"
        env = dict(os.environ)
        env.pop("WORLD_SIZE", None)
        proc = subprocess.Popen([TOKBENCH, "run", *args, "--json-path", out], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        seen = 0
        for line in proc.stdout:
            if line.startswith("iter "):
                seen += 1
                if seen == 4:  # two warm-up and two measured iterations done
                    proc.send_signal(signal.SIGINT)
                    break
        stdout, stderr = proc.communicate(timeout=300)
        proc.stdout, proc.stderr = stdout, stderr
        if proc.returncode != 5:
            fail(f"exit {proc.returncode}, want 5", proc)
        j = load(out, proc)
        if j["status"] != "interrupted":
            fail(f"status {j['status']}, want interrupted", proc)
        if j["measured_iters"] < 2 or j["tokens_per_sec"] is None:
            fail("an interrupted run reports what it measured", proc)
    elif SCENARIO == "stdout_json":
        proc = run(SMALL + ["--return_metrics_as_json=True", "--quiet"])
        if proc.returncode != 0:
            fail(f"exit {proc.returncode}", proc)
        try:
            j = json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            fail(f"stdout is not JSON: {e}", proc)
        if j["status"] != "ok" or "Tokens/s:" not in proc.stderr:
            fail("JSON on stdout, report on stderr expected", proc)
    else:
        fail(f"unknown scenario {SCENARIO}")
print(f"{SCENARIO}: ok")
