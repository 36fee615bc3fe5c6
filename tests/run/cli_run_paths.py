#!/usr/bin/env python3
"""Runs the real `tokbench run` through one exit path and checks the exit code and the JSON.
Scenarios: real_run (contract identities), oom (tiny CPU memory cap -> 3), nan (huge lr -> 4),
interrupt (SIGINT mid-run -> 5), interrupt_micro (SIGINT inside an iteration of 64 micro-batches:
it stops after the current micro-batch, not at the iteration's end), second_signal (a second
SIGINT during a long micro-batch ends the run at once, the JSON still written), stdout_json
(--return_metrics_as_json without a path), snapshot_unwritten (--dump_memory_snapshot=True whose
file cannot be written: refused before work when its path is a folder already, exit 2; when it
becomes one during the run, exit 8 and the record says status error and why, never exit 0/ok).
Usage: cli_run_paths.py /path/to/tokbench SCENARIO"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

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


def start(args):
    env = dict(os.environ)
    env.pop("WORLD_SIZE", None)
    return subprocess.Popen([TOKBENCH, "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def finish(proc, timeout=300):
    stdout, stderr = proc.communicate(timeout=timeout)
    proc.stdout, proc.stderr = stdout, stderr
    return proc


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
        # The per-unit timing pass (on by default, 2 iterations after the window): the embedding,
        # the one block and the head, in order, with the record's keys; none with 0 iterations.
        units = j["unit_timings"]
        if units is None:
            fail("unit_timings missing from an ok run", proc)
        if units["iterations"] != 2 or units["clock"] != "host" or units["micro_batches_per_iteration"] != 2:
            fail(f"unit_timings header {units}")
        if [u["name"] for u in units["units"]] != ["embedding", "block.0", "head"]:
            fail(f"unit_timings units {[u['name'] for u in units['units']]}, want embedding, block.0, head")
        if sum(u["parameters"] for u in units["units"]) != j["parameters"]:
            fail(f"unit parameters add up to {sum(u['parameters'] for u in units['units'])}, not {j['parameters']}")
        for u in units["units"]:
            if not all(u[k] > 0 for k in ("forward_seconds", "backward_seconds", "optimizer_seconds")):
                fail(f"unit {u['name']} has a non-positive time: {u}")
        if "Unit timings" in proc.stdout:
            fail("unit_timings is context, not a report line", proc)
        off = os.path.join(scratch, "no_units.json")
        proc = run(SMALL + ["--json-path", off, "--unit-timing-iters", "0"])
        if proc.returncode != 0 or load(off, proc)["unit_timings"] is not None:
            fail("--unit-timing-iters 0 must leave unit_timings null", proc)
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
    elif SCENARIO == "interrupt_micro":
        # GA = 64: an iteration of 64 micro-batches (several seconds here). A stop request must
        # be honoured after the current micro-batch, not at the iteration's end.
        ga = 64
        args = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "64", "--micro-batch-size", "2",
                "--global-batch-size", str(2 * ga), "--max-iters", "1000", "--warmup-iters", "1", "--device", "cpu",
                "--num-threads", "1", "--json-path", out]
        proc = start(args)
        iteration_ms = None
        for line in proc.stdout:
            m = re.match(r"iter 0: .*iter time: ([0-9.]+)ms", line)
            if m:
                iteration_ms = float(m.group(1))
                break
        if iteration_ms is None:
            fail("no first iteration line", finish(proc))
        # Some micro-batches into the second iteration, well before its end.
        time.sleep(min(0.5, iteration_ms / 1000 / 8))
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        finish(proc)
        stop_seconds = time.monotonic() - sent
        if proc.returncode != 5:
            fail(f"exit {proc.returncode}, want 5", proc)
        j = load(out, proc)
        if j["status"] != "interrupted":
            fail(f"status {j['status']}, want interrupted", proc)
        m = re.search(r"after (\d+) iterations, (\d+) of (\d+) micro-batches into the next", j["message"])
        if not m or int(m.group(3)) != ga or not 1 <= int(m.group(2)) < ga:
            fail(f"message {j['message']!r} does not say it stopped inside an iteration of {ga} micro-batches", proc)
        if len(j["iterations"]) != int(m.group(1)):
            fail(f"{len(j['iterations'])} iterations in the JSON, the message says {m.group(1)}", proc)
        # One micro-batch is 1/64 of an iteration; the report and JSON take little more.
        if stop_seconds > 0.5 * iteration_ms / 1000:
            fail(f"stopped {stop_seconds:.2f} s after SIGINT; an iteration takes {iteration_ms / 1000:.2f} s", proc)
        print(f"stopped {stop_seconds:.2f} s after SIGINT (iteration: {iteration_ms / 1000:.2f} s): {j['message']}")
    elif SCENARIO == "second_signal":
        # One micro-batch of a wide, small-vocabulary model takes seconds: the first SIGINT asks
        # for a stop after it, the second must end the run at once and still leave the JSON.
        config = os.path.join(scratch, "wide.json")
        with open(config, "w") as f:
            json.dump({"name": "wide-test", "block_size": 256, "vocab_size": 256, "padded_vocab_size": 256,
                       "n_layer": 2, "n_head": 8, "n_embd": 1024}, f)
        args = ["--model-config", config, "--micro-batch-size", "16", "--max-iters", "3", "--warmup-iters", "1",
                "--device", "cpu", "--num-threads", "1", "--json-path", out]
        proc = start(args)
        for line in proc.stdout:
            if line.startswith("# threads:"):  # printed once the signal handler is installed
                break
        else:
            fail("no '# threads:' line", finish(proc))
        time.sleep(1.0)  # the model is built; the first micro-batch is running
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        finish(proc, timeout=60)
        stop_seconds = time.monotonic() - sent
        if proc.returncode != 5:
            fail(f"exit {proc.returncode}, want 5", proc)
        j = load(out, proc)
        if j["status"] != "interrupted" or j["message"] != "stopped by a second signal":
            fail(f"status {j['status']!r}, message {j['message']!r}; want interrupted, 'stopped by a second signal' "
                 "(if the message says 'stopped on request', the first micro-batch ended before the second signal: "
                 "make it larger)", proc)
        if j["model_name"] != "wide-test" or j["Global BS"] != 16 or j["tokens_per_sec"] is not None:
            fail("the minimal result names the run and reports no rate", proc)
        if "stopped by a second signal" not in proc.stderr:
            fail("no closing line on stderr", proc)
        if stop_seconds > 2.0:
            fail(f"ended {stop_seconds:.2f} s after the second signal, want at once", proc)
        leftovers = sorted(set(os.listdir(scratch)) - {"wide.json", "result.json"})
        if leftovers:
            fail(f"temporary files left beside the JSON: {leftovers}", proc)
        print(f"ended {stop_seconds:.2f} s after the second signal")
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
    elif SCENARIO == "snapshot_unwritten":
        folder = os.path.join(scratch, "cwd")
        os.mkdir(folder)
        record_path = os.path.join(scratch, "snapshot.json")
        # The run writes the snapshot at the reference's name in its working directory: learn it.
        proc = run(SMALL + ["--dump_memory_snapshot=True", "--quiet", "--time-account-iters", "0",
                            "--unit-timing-iters", "0"], cwd=folder)
        names = os.listdir(folder)
        if proc.returncode != 0 or len(names) != 1 or not names[0].endswith(".pickle"):
            fail(f"a written snapshot: exit {proc.returncode}, files {names}", proc)
        snapshot = os.path.join(folder, names[0])
        os.remove(snapshot)
        # A folder at its path before the run: refused before any work.
        os.mkdir(snapshot)
        proc = run(SMALL + ["--dump_memory_snapshot=True", "--json-path", record_path], cwd=folder)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if proc.returncode != 2 or len(lines) != 1 or "--dump-memory-snapshot" not in lines[0] \
                or os.path.exists(record_path):
            fail(f"a snapshot path that is a folder: exit {proc.returncode}, want 2 and one line", proc)
        os.rmdir(snapshot)
        # A folder appearing at its path during the run (the write's rename then fails): exit 8,
        # the record written with status error naming the option; never exit 0 and status ok.
        child = subprocess.Popen([TOKBENCH, "run", *SMALL, "--max-iters", "20", "--warmup-iters", "1",
                                  "--log-every", "1", "--dump_memory_snapshot=True", "--json-path", record_path,
                                  "--time-account-iters", "0", "--unit-timing-iters", "0"],
                                 cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={k: v for k, v in os.environ.items() if k != "WORLD_SIZE"})
        for line in child.stdout:  # the progress lines go with the report, on stdout
            if line.startswith("iter"):
                os.mkdir(snapshot)
                break
        proc = finish(child)
        j = load(record_path, proc)
        if proc.returncode != 8 or j["status"] != "error" or "--dump-memory-snapshot" not in (j.get("message") or ""):
            fail(f"a snapshot that could not be written: exit {proc.returncode}, status {j['status']}, "
                 f"message {j.get('message')!r}; want 8, error, naming --dump-memory-snapshot", proc)
        print(f"unwritten snapshot: exit 8, message {j['message']!r}")
    else:
        fail(f"unknown scenario {SCENARIO}")
print(f"{SCENARIO}: ok")
