#!/usr/bin/env python3
"""`tokbench run --executor python-eager | python-inductor` end to end, on the CPU.

Scenarios:
  eager     a short run exits 0 with the same JSON shape as --executor eager (compiler and executor
            "python-eager", measured_iters 2, tokens_per_sec = M·G·T / window recomputed from the JSON's
            own iterations, the Python torch version in `environment`, no memory figure it cannot
            know), and its first measured loss is near ln(vocab) and near tokbench's for the same
            seed (the initialisations and data streams differ, so not equal); both runs take --profile,
            and both traces hold the forward/backward/optimizer ranges, a matmul and [memory] events
            (what bench/allocations_by_op.py compares); the options echo the allocator each used
  inductor  the same through torch.compile (the compile happens inside the warm-up)
  refusals  an interpreter that does not exist, one without litgpt, and the options the Python step
            does not implement: exit 2 with one line each, no JSON written
  interrupt SIGINT during a long run: exit 5, status interrupted, the measured iterations kept
  sweep     `tokbench sweep --executor eager,python-eager` puts both executors in its table
Usage: cli_python_executor.py /path/to/tokbench SCENARIO"""
import json
import math
import os
import signal
import subprocess
import sys
import tempfile

TOKBENCH, SCENARIO = sys.argv[1], sys.argv[2]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "64", "--max-iters", "4",
         "--warmup-iters", "2", "--device", "cpu", "--num-threads", "1"]
PADDED_VOCAB = 50304  # pythia-14m


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "") + "\n--- stderr ---\n" + (proc.stderr or ""))
    sys.exit(1)


def environ(**extra):
    env = dict(os.environ)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "TOKBENCH_LAUNCHED"]:
        env.pop(name, None)
    env.update(extra)
    return env


def run(args, timeout=600, **extra):
    return subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, timeout=timeout,
                          env=environ(**extra))


def load(path, proc):
    if not os.path.exists(path):
        fail(f"no JSON at {path}", proc)
    with open(path) as f:
        return json.load(f)


def check_python_run(executor, scratch, extra=()):
    out = os.path.join(scratch, executor + ".json")
    proc = run(SMALL + ["--executor", executor, "--json-path", out, *extra])
    if proc.returncode != 0:
        fail(f"{executor}: exit {proc.returncode}", proc)
    j = load(out, proc)
    if j["status"] != "ok" or j["compiler"] != executor or j["executor"] != executor:
        fail(f"{executor}: status {j['status']}, compiler {j['compiler']}, executor {j['executor']}", proc)
    if j["measured_iters"] != 2 or len(j["iterations"]) != 4:
        fail(f"{executor}: measured_iters {j['measured_iters']}, {len(j['iterations'])} iterations")
    if [it["warmup"] for it in j["iterations"]] != [True, True, False, False]:
        fail(f"{executor}: warm-up flags {[it['warmup'] for it in j['iterations']]}")
    # The window recomputed from the per-iteration times: the measured iterations' sum.
    window = sum(it["time_ms"] for it in j["iterations"] if not it["warmup"]) / 1000
    want = 2 * j["Global BS"] * j["Seq Len"] / window
    if abs(j["tokens_per_sec"] - want) / want > 1e-6:
        fail(f"{executor}: tokens_per_sec {j['tokens_per_sec']}, M·G·T/window from the iterations = {want}")
    if abs(j["measured_window_s"] - window) / window > 1e-6:
        fail(f"{executor}: measured_window_s {j['measured_window_s']} != {window}")
    if j["memory_used_GB"] is not None or j["harness_overhead_percent"] is not None:
        fail(f"{executor}: memory_used_GB {j['memory_used_GB']} / overhead {j['harness_overhead_percent']}: "
             "the Python step on the CPU cannot know them, they must be null")
    if not j["peak_rss_GB"] > 0:
        fail(f"{executor}: peak_rss_GB {j['peak_rss_GB']}")
    env = j["environment"]
    if not env.get("python_torch_version") or not env.get("litgpt_version") or not env.get("libtorch_version"):
        fail(f"{executor}: environment lacks the versions: {env}")
    loss = j["loss_first"]
    if not (math.isfinite(loss) and abs(loss - math.log(PADDED_VOCAB)) < 1.0):
        fail(f"{executor}: loss_first {loss}, want about ln({PADDED_VOCAB}) = {math.log(PADDED_VOCAB):.2f}")
    if "Compiler:" not in proc.stdout or executor not in proc.stdout:
        fail(f"{executor}: the report does not name the executor", proc)
    if j["config"]["cpu_allocator"] != "system":
        fail(f"{executor}: config.cpu_allocator {j['config']['cpu_allocator']}: Python's torch uses its own")
    return j, proc


def check_trace(label, path, proc):
    if "Chrome trace of 2 iterations after the measured window" not in proc.stdout:
        fail(f"{label}: the report does not say where the trace went", proc)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e.get("name") for e in events}
    for wanted in ("forward", "backward", "optimizer", "[memory]"):
        if wanted not in names:
            fail(f"{label}: no '{wanted}' event in the trace")
    if not names & {"aten::mm", "aten::addmm", "aten::linear", "aten::matmul"}:
        fail(f"{label}: no matmul operator in the trace")


def scenario_eager(scratch):
    traces = {name: os.path.join(scratch, name + "-trace.json") for name in ("python", "native")}
    python, proc = check_python_run("python-eager", scratch,
                                    ["--profile", traces["python"], "--profile-iters", "2"])
    check_trace("python-eager", traces["python"], proc)
    out = os.path.join(scratch, "eager.json")
    proc = run(SMALL + ["--executor", "eager", "--json-path", out, "--profile", traces["native"],
                        "--profile-iters", "2"])
    if proc.returncode != 0:
        fail(f"eager: exit {proc.returncode}", proc)
    check_trace("eager", traces["native"], proc)
    native = load(out, proc)
    if native["config"]["cpu_allocator"] != "caching":
        fail(f"eager: config.cpu_allocator {native['config']['cpu_allocator']}, want the default caching")
    if set(native) != set(python):
        fail(f"keys differ: {sorted(set(native) ^ set(python))}")
    if abs(native["loss_first"] - python["loss_first"]) > 0.5:
        fail(f"loss_first: tokbench {native['loss_first']}, python {python['loss_first']}")


def scenario_refusals(scratch):
    out = os.path.join(scratch, "refused.json")
    cases = [
        (["--executor", "python-eager"], {"TOKBENCH_PYTHON": "/nonexistent/python"},
         ["needs Python with torch and litgpt", "/nonexistent/python", "No such file"]),
        (["--executor", "python-inductor"], {"TOKBENCH_PYTHON_STEP": "/nonexistent/step.py"},
         ["TOKBENCH_PYTHON_STEP"]),
        (["--executor", "python-eager", "--nproc-per-node", "2", "--distributed-mode", "ddp"], {},
         ["more than one rank"]),
        (["--executor", "python-eager", "--data", __file__], {}, ["--data"]),
        (["--executor", "python-eager", "--cpu-memory-cap-mb", "100"], {}, ["--cpu-memory-cap-mb"]),
        (["--executor", "python-eager", "--cpu-allocator", "caching"], {}, ["--cpu-allocator system"]),
        (["--executor", "python-lazy"], {}, ["python-eager", "python-inductor"]),
    ]
    # An interpreter without litgpt (the system's, unless it has it): a virtual environment without packages.
    bare = os.path.join(scratch, "bare")
    if subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], capture_output=True).returncode == 0:
        cases.append((["--executor", "python-eager"], {"TOKBENCH_PYTHON": os.path.join(bare, "bin", "python")},
                      ["needs Python with torch and litgpt", "ModuleNotFoundError"]))
    for args, env, words in cases:
        proc = run(SMALL + args + ["--json-path", out], timeout=120, **env)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if proc.returncode != 2 or len(lines) != 1 or any(w not in lines[0] for w in words):
            fail(f"{args} {env}: want exit 2 and one line naming {words}; got {proc.returncode}", proc)
        if os.path.exists(out):
            fail(f"{args} {env}: a refused run wrote a JSON")


def scenario_interrupt(scratch):
    out = os.path.join(scratch, "stopped.json")
    args = SMALL[:]
    args[args.index("--max-iters") + 1] = "100000"
    proc = subprocess.Popen([TOKBENCH, "run", *args, "--executor", "python-eager", "--json-path", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ())
    seen = 0
    for line in proc.stdout:
        if line.startswith("iter "):
            seen += 1
            if seen == 4:
                proc.send_signal(signal.SIGINT)
                break
    stdout, stderr = proc.communicate(timeout=300)
    proc.stdout, proc.stderr = stdout, stderr
    if proc.returncode != 5:
        fail(f"exit {proc.returncode}, want 5", proc)
    j = load(out, proc)
    if j["status"] != "interrupted" or j["measured_iters"] < 2 or j["tokens_per_sec"] is None:
        fail(f"status {j['status']}, measured {j['measured_iters']}, tokens/s {j['tokens_per_sec']}", proc)


def scenario_sweep(scratch):
    out = os.path.join(scratch, "sweep")
    args = [a for a in SMALL] + ["--executor", "eager,python-eager", "--out", out]
    proc = subprocess.run([TOKBENCH, "sweep", *args, "--format", "json"], capture_output=True, text=True,
                          timeout=900, env=environ())
    if proc.returncode != 0:
        fail(f"sweep exit {proc.returncode}", proc)
    runs = json.loads(proc.stdout)["runs"]
    if sorted((r["compiler"], r["status"]) for r in runs) != [("eager", "ok"), ("python-eager", "ok")]:
        fail(f"runs: {[(r['compiler'], r['status']) for r in runs]}", proc)
    printed = subprocess.run([TOKBENCH, "sweep", *args, "--format", "print"], capture_output=True, text=True,
                             timeout=300, env=environ())
    if printed.returncode != 0 or "python-eager" not in printed.stdout or "eager" not in printed.stdout:
        fail("the printed table lacks an executor column", printed)


with tempfile.TemporaryDirectory() as scratch:
    if SCENARIO == "eager":
        scenario_eager(scratch)
    elif SCENARIO == "inductor":
        check_python_run("python-inductor", scratch)
    elif SCENARIO == "refusals":
        scenario_refusals(scratch)
    elif SCENARIO == "interrupt":
        scenario_interrupt(scratch)
    elif SCENARIO == "sweep":
        scenario_sweep(scratch)
    else:
        fail(f"unknown scenario {SCENARIO}")
print("ok")
