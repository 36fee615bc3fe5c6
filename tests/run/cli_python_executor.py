#!/usr/bin/env python3
"""`tokbench run --executor python-eager | python-inductor` end to end, on the CPU.

Scenarios:
  eager     a short run exits 0 with the same JSON shape as --executor eager (compiler and executor
            "python-eager", measured_iters 2, tokens_per_sec = M·G·T / window recomputed from the JSON's
            own iterations, the Python torch version in `environment`, its CPU tensor peak counted by
            tokbench's own counter (--memory-probe) and equal to tokbench's for the same model and
            batch within 1%, no breakdown or overhead it cannot know), and its first measured loss is near ln(vocab) and near tokbench's for the same
            seed (the initialisations and data streams differ, so not equal); both runs take --profile,
            and both traces hold the forward/backward/optimizer ranges, a matmul and [memory] events
            (what bench/allocations_by_op.py compares); the options echo the allocator each used
  inductor  the same through torch.compile (the compile happens inside the warm-up)
  inductor_bf16  pythia in bf16-true through torch.compile: PyTorch's CPU code generator fails on
            it (docs/inductor-bf16-cpu.md); the step retries with the public workaround, trains,
            and names the workaround in the record's message and on stderr
  refusals  an interpreter that does not exist, one without litgpt, and the options the Python step
            does not implement: exit 2 with one line each, no JSON written
  interrupt SIGINT during a long run: exit 5, status interrupted, the measured iterations kept
  sweep     `tokbench sweep --executor eager,python-eager` puts both executors in its table
  thunder   --executor python-thunder (thunder.jit, the reference benchmark's own compiler): one
            rank with the same JSON checks as eager, lightning-thunder's version in `environment`;
            two ranks with thunder's ddp transform under tokbench's launcher train like
            python-eager's DDP (the same losses, 1e-5); fsdp2 and hybrid sharding are refused
  sweep_ranks  the reference's table from one command: `tokbench sweep` over one distributed row
            (FSDP ZeRO-2 on two ranks) with all five executors; read back in CSV, five rows, one per
            executor, each ok with its figures filled (the memory breakdown for tokbench's two); the printed tables carry the five columns
  ranks     two ranks, the reference's way (torch.distributed over Gloo): python-eager FSDP (zero2)
            under tokbench's launcher and under `torchrun --no-python`, python-inductor DDP,
            fully_shard (fsdp2, zero3) and FSDP with the reference's size bucketing
            (size_based_auto_wrap_policy) under tokbench's launcher; each result follows the contract across ranks (both ranks
            listed, the slowest rank's time, the largest peak RSS, tokens/s × time = G·T), and the
            five train alike: the same seed and token streams give the same losses (1e-5)
  memory    per-rank peak memory, counted the same way on both sides, of tokbench's DDP, FSDP ZeRO-2
            and ZeRO-3 (per block) against PyTorch's own (python-eager) on two ranks, hybrid ZeRO-2
            on four (shards in pairs), and one process
            of each: tokbench's is at most PyTorch's + 5% in every mode, and below one process's
            for the sharded modes
  attention_kernel  --use-sdpa and the record's attention_kernel (tokbench's and PyTorch's eager; thunder)
  dynamic   --dynamic: the same lengths on every executor, real tokens and their FLOPs counted
  memory_snapshot  --dump-memory-snapshot on the CPU, read and rendered by torch.cuda._memory_viz
  grad_clip  --grad-clip-norm on tokbench's step and the Python step: recorded, a norm above the
            gradients' changes no loss, a tiny one changes every loss after iteration 0
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
    if not (j["memory_used_GB"] or 0) > 0 or j["memory_allocated_peak_GB"] != j["memory_used_GB"]:
        fail(f"{executor}: memory_used_GB {j['memory_used_GB']}: tokbench's counter (--memory-probe) counts it")
    unknown = [k for k in ("harness_overhead_percent", "memory_parameters_GB", "memory_activations_GB")
               if j[k] is not None]
    if unknown:
        fail(f"{executor}: {unknown} not null: the Python step cannot know them")
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
    # One counter, one model, one batch: the same tensor peak (the two differ only in which
    # small temporaries each framework keeps).
    if abs(native["memory_used_GB"] / python["memory_used_GB"] - 1) > 0.01:
        fail(f"memory_used_GB: tokbench {native['memory_used_GB']}, python {python['memory_used_GB']}")


def scenario_refusals(scratch):
    out = os.path.join(scratch, "refused.json")
    cases = [
        (["--executor", "python-eager"], {"TOKBENCH_PYTHON": "/nonexistent/python"},
         ["needs Python with torch and litgpt", "/nonexistent/python", "No such file"]),
        (["--executor", "python-inductor"], {"TOKBENCH_PYTHON_STEP": "/nonexistent/step.py"},
         ["TOKBENCH_PYTHON_STEP"]),
        (["--executor", "python-eager", "--nproc-per-node", "2", "--distributed-mode", "ddp", "--no-ddp-overlap"],
         {}, ["--no-ddp-overlap"]),
        (["--executor", "python-eager", "--data", __file__], {}, ["--data"]),
        (["--executor", "python-eager", "--cpu-memory-cap-mb", "100"], {}, ["--cpu-memory-cap-mb"]),
        (["--executor", "python-eager", "--cpu-allocator", "caching"], {}, ["--cpu-allocator system"]),
        (["--executor", "python-lazy"], {}, ["python-eager", "python-inductor"]),
        # A thunder executor this install lacks: refused by the Python step before any training
        # (thunder's cudnn executor needs CUDA; the C++ side refuses it on the CPU first).
        (["--executor", "thunder_cudnn"], {}, ["thunder_cudnn", "CUDA only"]),
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


def check_ranks_run(label, proc, path, mode_label):
    if proc.returncode != 0:
        fail(f"{label}: exit {proc.returncode}", proc)
    j = load(path, proc)
    if j["status"] != "ok" or j["world_size"] != 2 or j["Num GPUS"] != 2 or len(j["ranks"]) != 2:
        fail(f"{label}: status {j['status']} ({j['message']}), world {j['world_size']}, ranks {len(j['ranks'])}",
             proc)
    if j["Distributed Mode"] != mode_label:
        fail(f"{label}: Distributed Mode {j['Distributed Mode']}, want {mode_label}")
    if sorted(r["rank"] for r in j["ranks"]) != [0, 1] or any(r["status"] != "ok" for r in j["ranks"]):
        fail(f"{label}: per-rank records {j['ranks']}")
    slowest = max(r["average_iter_time"] for r in j["ranks"])
    if abs(j["average_iter_time"] - slowest) > 1e-6 * slowest:
        fail(f"{label}: average_iter_time {j['average_iter_time']}, the slowest rank's is {slowest}")
    largest = max(r["peak_rss_GB"] for r in j["ranks"])
    if not largest > 0 or abs(j["peak_rss_GB"] - largest) > 1e-9:
        fail(f"{label}: peak_rss_GB {j['peak_rss_GB']}, the largest rank's is {largest}")
    identity = j["tokens_per_sec"] * j["average_iter_time"] / 1000
    if abs(identity - j["Global BS"] * j["Seq Len"]) > 1e-6 * identity:
        fail(f"{label}: tokens/s x average iteration time = {identity}, want G·T = {j['Global BS'] * j['Seq Len']}")
    return j


def scenario_thunder(scratch):
    j, _ = check_python_run("python-thunder", scratch)
    if not j["environment"].get("thunder_version"):
        fail(f"python-thunder: no thunder_version in environment: {j['environment']}")
    base = SMALL + ["--nproc-per-node", "2", "--distributed-mode", "ddp", "--dist-timeout", "300"]
    losses = {}
    for executor in ("python-thunder", "python-eager"):
        out = os.path.join(scratch, executor + "-ddp.json")
        proc = run(base + ["--executor", executor, "--json-path", out], timeout=900)
        j = check_ranks_run(executor + " ddp", proc, out, "ddp")
        losses[executor] = [it["loss"] for it in j["iterations"]]
    a, b = losses["python-thunder"], losses["python-eager"]
    if len(a) != len(b) or any(abs(x - y) > 1e-5 * abs(y) for x, y in zip(a, b)):
        fail(f"thunder's DDP losses {a} differ from PyTorch DDP's {b}")
    for extra, words in [(["--nproc-per-node", "2", "--distributed-mode", "fsdp2"], ["python-thunder", "fsdp2"]),
                         (["--nproc-per-node", "4", "--distributed-mode", "fsdp", "--sharding-size", "2"],
                          ["python-thunder", "hybrid"])]:
        proc = run(SMALL + ["--executor", "python-thunder", *extra], timeout=120)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if proc.returncode != 2 or len(lines) != 1 or any(w not in lines[0] for w in words):
            fail(f"{extra}: want exit 2 and one line naming {words}; got {proc.returncode}", proc)


def scenario_attention_kernel(scratch):
    """--use-sdpa sets the reference's priority, and every record names the attention kernel
    that ran: PyTorch's flash kernel on this CPU (the CPU has no cuDNN or efficient kernel),
    whatever the executor; thunder takes attention itself, so there it is null and the switch
    warns, as the reference does."""
    for executor in ("eager", "python-eager"):
        for use_sdpa in (False, True):
            out = os.path.join(scratch, f"{executor}-{use_sdpa}.json")
            proc = run(SMALL + ["--executor", executor, "--json-path", out] + (["--use-sdpa"] if use_sdpa else []))
            if proc.returncode != 0:
                fail(f"{executor} use_sdpa={use_sdpa}: exit {proc.returncode}", proc)
            j = load(out, proc)
            if j["config"]["use_sdpa"] is not use_sdpa or j["attention_kernel"] != "flash_attention":
                fail(f"{executor}: config.use_sdpa {j['config']['use_sdpa']}, attention_kernel {j['attention_kernel']}")
    out = os.path.join(scratch, "thunder.json")
    proc = run(SMALL + ["--executor", "python-thunder", "--use_sdpa=True", "--json-path", out])
    j = load(out, proc)
    if proc.returncode != 0 or j["attention_kernel"] is not None or "--use-sdpa has no effect" not in proc.stderr:
        fail(f"python-thunder --use_sdpa: exit {proc.returncode}, attention_kernel {j['attention_kernel']}", proc)


def scenario_dynamic(scratch):
    """--dynamic: per-sequence lengths drawn in [10, T] and padded. Every executor trains on the
    same lengths (its own count of real tokens per iteration agrees), the lengths vary, tokens/s
    counts the real tokens (below the padded positions/s; their sum over the window), and the
    model FLOPs are the real lengths' (below the fixed-length run's). T < 10 is refused."""
    base = SMALL + ["--micro-batch-size", "2", "--global-batch-size", "4", "--max-iters", "6"]
    counts = {}
    for executor in ("eager", "fused", "python-eager"):
        out = os.path.join(scratch, f"dynamic-{executor}.json")
        proc = run(base + ["--executor", executor, "--dynamic=True", "--json-path", out])
        j = load(out, proc)
        if proc.returncode != 0 or j["status"] != "ok":
            fail(f"{executor} --dynamic: exit {proc.returncode}, status {j['status']}", proc)
        counts[executor] = [it["real_tokens"] for it in j["iterations"]]
        real = sum(it["real_tokens"] for it in j["iterations"] if not it["warmup"])
        if not j["tokens_per_sec"] < j["positions_per_sec"]:
            fail(f"{executor}: tokens_per_sec {j['tokens_per_sec']} not below positions_per_sec {j['positions_per_sec']}")
        if abs(j["tokens_per_sec"] * j["measured_window_s"] / real - 1) > 1e-9:
            fail(f"{executor}: tokens_per_sec x window {j['tokens_per_sec'] * j['measured_window_s']} != {real} real tokens")
        positions = j["measured_iters"] * j["Global BS"] * j["Seq Len"]
        if abs(j["positions_per_sec"] * j["measured_window_s"] / positions - 1) > 1e-9:
            fail(f"{executor}: positions_per_sec x window != {positions} positions")
        fixed_out = os.path.join(scratch, f"fixed-{executor}.json")
        if executor == "eager":
            proc = run(base + ["--executor", executor, "--json-path", fixed_out])
            fixed = load(fixed_out, proc)
            if not j["model_flops"] < fixed["model_flops"]:
                fail(f"model_flops {j['model_flops']} under --dynamic, {fixed['model_flops']} at fixed T")
            if "positions_per_sec" in fixed and fixed["positions_per_sec"] is not None:
                fail(f"positions_per_sec {fixed['positions_per_sec']} without --dynamic")
    lengths = counts["eager"]
    if len(set(lengths)) < 3 or any(not (2 * 2 * 10 <= n < 2 * 2 * 64) for n in lengths):
        fail(f"real tokens per iteration {lengths}: want varying values in [40, 256)")
    if counts["fused"] != lengths or counts["python-eager"] != lengths:
        fail(f"executors trained on different lengths: {counts}")
    proc = run(SMALL + ["--dynamic", "--seq-len", "8"])
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode != 2 or len(lines) != 1 or "--dynamic" not in lines[0] or "--seq-len 10" not in lines[0]:
        fail(f"--dynamic --seq-len 8: want exit 2 and one line; got {proc.returncode}", proc)


VIZ_CHECK = """
import pickle, sys
from torch.cuda import _memory_viz as viz
s = pickle.load(open(sys.argv[1], "rb"))
trace = s["device_traces"][0]
live, allocs, frees = {}, 0, 0
for e in trace:  # replayed in order: each free ends a block of its size (or one from before the history)
    if e["action"] == "alloc":
        assert e["addr"] not in live, "an address allocated twice"
        live[e["addr"]], allocs = e["size"], allocs + 1
    elif e["action"] == "free_completed":
        assert live.pop(e["addr"], e["size"]) == e["size"], "a free of another size"
        frees += 1
assert allocs and frees, (allocs, frees)
held = {seg["address"] for seg in s["segments"]}
assert set(live) <= held, "a block allocated in the history and never freed is not among the segments"
assert "segments: " in viz.segsum(s) and "entries" in viz.trace(s)
for html in (viz.trace_plot(s), viz.segment_plot(s)):
    assert html.lstrip().startswith("<!DOCTYPE html>") or "<html" in html[:2000], html[:200]
print(len(trace), "events,", len(s["segments"]), "segments")
"""


def scenario_memory_snapshot(scratch):
    """--dump-memory-snapshot on the CPU: tokbench's counting allocator's history in PyTorch's
    snapshot format, at the reference's file name in the working directory, which PyTorch's own
    memory-viz tools (torch.cuda._memory_viz: segsum, trace, trace_plot, segment_plot) read and
    render; every rank writes its own; the Python executors on the CPU are refused."""
    python = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".venv", "bin", "python")
    cases = [(["--executor", "eager"], ["pythia-14m_eager_none.pickle"]),
             (["--executor", "fused", "--nproc-per-node", "2", "--distributed-mode", "fsdp", "--shard-mode", "zero3",
               "--bucketing-mode", "block"],
              ["pythia-14m_fused_fsdp_zero3_block_rank0.pickle", "pythia-14m_fused_fsdp_zero3_block_rank1.pickle"])]
    for extra, files in cases:
        folder = tempfile.mkdtemp(dir=scratch)
        proc = subprocess.run([TOKBENCH, "run", *SMALL, *extra, "--dump_memory_snapshot=True"], cwd=folder,
                              capture_output=True, text=True, timeout=600, env=environ())
        if proc.returncode != 0 or f"Dump memory snapshot at {files[0]}" not in proc.stdout:
            fail(f"{extra}: exit {proc.returncode}, or no line naming {files[0]}", proc)
        if sorted(os.listdir(folder)) != sorted(files):
            fail(f"{extra}: files {sorted(os.listdir(folder))}, want {files}")
        for name in files:
            check = subprocess.run([python, "-c", VIZ_CHECK, os.path.join(folder, name)], capture_output=True,
                                   text=True, timeout=300)
            if check.returncode != 0:
                fail(f"{name}: PyTorch's memory viz could not read it", check)
    proc = run(SMALL + ["--executor", "python-eager", "--dump-memory-snapshot"])
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode != 2 or len(lines) != 1 or "--dump-memory-snapshot" not in lines[0]:
        fail(f"python-eager --dump-memory-snapshot on the CPU: want exit 2 and one line, got {proc.returncode}", proc)


ALL_EXECUTORS = ["eager", "fused", "python-eager", "python-inductor", "python-thunder"]


def scenario_sweep_ranks(scratch):
    import csv
    import io
    out = os.path.join(scratch, "sweep-ranks")
    args = SMALL + ["--executor", ",".join(ALL_EXECUTORS), "--nproc-per-node", "2", "--distributed-mode", "fsdp",
                    "--shard-mode", "zero2", "--dist-timeout", "300", "--out", out]
    proc = subprocess.run([TOKBENCH, "sweep", *args, "--format", "csv"], capture_output=True, text=True,
                          timeout=1800, env=environ())
    if proc.returncode != 0:
        fail(f"sweep exit {proc.returncode}", proc)
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    if sorted(r["compiler"] for r in rows) != sorted(ALL_EXECUTORS):
        fail(f"CSV rows: {[r.get('compiler') for r in rows]}", proc)
    for r in rows:
        # Every side's tensor peak is counted; the breakdown only where tokbench runs the step.
        filled = ["tokens_per_sec", "average_iter_time", "peak_rss_GB", "model_flop_per_sec", "memory_used_GB"]
        if not r["compiler"].startswith("python-"):
            filled += ["memory_parameters_GB", "memory_gradients_GB", "memory_optimizer_state_GB",
                       "memory_activations_GB", "memory_comm_buffers_GB"]
        empty = [k for k in filled if not r.get(k)]
        if r["status"] != "ok" or empty or r["Distributed Mode"] != "fsdp_zero2_none_bucketing" \
                or r["Num GPUS"] != "2":
            fail(f"{r['compiler']}: status {r['status']}, empty {empty}, mode {r['Distributed Mode']}, "
                 f"GPUs {r['Num GPUS']}", proc)
    printed = subprocess.run([TOKBENCH, "sweep", *args, "--format", "print"], capture_output=True, text=True,
                             timeout=300, env=environ())
    missing = [e for e in ALL_EXECUTORS if e not in printed.stdout]
    if printed.returncode != 0 or missing:
        fail(f"the printed tables lack {missing}", printed)
    print(printed.stdout)


def torchrun_command(args):
    """`torchrun --no-python tokbench run ARGS` on two ranks: its agent serves the store, and every
    tokbench rank and its Python child are the agent store's clients."""
    python = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", ".venv", "bin", "python")
    python = python if os.path.exists(python) else "python3"
    import socket
    with socket.socket() as s:  # torchrun's agent binds the port it is given
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return [python, "-m", "torch.distributed.run", "--nproc_per_node=2", "--nnodes=1", "--no-python",
            "--master_addr", "127.0.0.1", "--master_port", str(port), TOKBENCH, "run", *args]


def scenario_ranks(scratch):
    base = SMALL + ["--global-batch-size", "4", "--dist-timeout", "300"]  # GA 2 on two ranks
    losses = {}
    runs = [
        ("python-eager fsdp zero2", "python-eager", ["--distributed-mode", "fsdp", "--shard-mode", "zero2"],
         "fsdp_zero2_none_bucketing"),
        ("python-inductor ddp", "python-inductor", ["--distributed-mode", "ddp"], "ddp"),
        ("python-eager fsdp2 zero3", "python-eager", ["--distributed-mode", "fsdp2", "--shard-mode", "zero3",
                                                      "--bucketing-mode", "block"], "fsdp2_zero3_block_bucketing"),
        # The reference's size bucketing: PyTorch's size_based_auto_wrap_policy at the threshold.
        ("python-eager fsdp size", "python-eager", ["--distributed-mode", "fsdp", "--bucketing_mode", "size",
                                                    "--fsdp_bucket_params", "1e5"], "fsdp_zero2_size_bucketing"),
    ]
    for label, executor, extra, mode_label in runs:
        # torchrun once: the store its agent serves reaches a rank's Python child the same way
        # whatever that child compiles, so inductor under torchrun would repeat the eager run's
        # launcher path and the tokbench-launched inductor run's compile (and compile twice more).
        launchers = ["tokbench", "torchrun"] if label == "python-eager fsdp zero2" else ["tokbench"]
        for launcher in launchers:
            out = os.path.join(scratch, f"{label}-{launcher}.json".replace(" ", "-"))
            args = base + ["--executor", executor, *extra, "--json-path", out]
            if launcher == "tokbench":
                proc = run(args + ["--nproc-per-node", "2"], timeout=900)
            else:
                proc = subprocess.run(torchrun_command(args), capture_output=True, text=True, timeout=900,
                                      env=environ())
            j = check_ranks_run(f"{label} ({launcher})", proc, out, mode_label)
            want_launcher = "tokbench" if launcher == "tokbench" else "torchrun"
            if j["config"]["dist_launcher"] != want_launcher:
                fail(f"{label}: launcher {j['config']['dist_launcher']}, want {want_launcher}")
            losses[f"{label} ({launcher})"] = [it["loss"] for it in j["iterations"]]
    first = next(iter(losses.values()))
    for label, got in losses.items():
        if len(got) != len(first) or any(abs(a - b) > 1e-5 * abs(b) for a, b in zip(got, first)):
            fail(f"losses differ: {label} {got} vs {first}")
    print(f"losses per iteration (all {len(losses)} runs):", first)


def scenario_memory(scratch):
    # Parameters dominate (pythia-70m's embedding and head, 2 blocks; T = 64, one sequence).
    base = ["--model-name", "pythia-70m", "--n-layers", "2", "--seq-len", "64", "--max-iters", "3",
            "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1", "--cpu-allocator", "system",
            "--dist-timeout", "300"]
    modes = [("none", []), ("ddp", ["--nproc-per-node", "2", "--distributed-mode", "ddp"])]
    for shard_mode in ("zero2", "zero3"):
        modes.append((shard_mode, ["--nproc-per-node", "2", "--distributed-mode", "fsdp", "--shard-mode", shard_mode,
                                   "--bucketing-mode", "block"]))
    # Hybrid: shards within pairs of ranks, replicas across the pairs (PyTorch's _HYBRID_SHARD_ZERO2).
    modes.append(("hybrid_zero2", ["--nproc-per-node", "4", "--distributed-mode", "fsdp", "--shard-mode",
                                   "hybrid_zero2", "--sharding-size", "2", "--bucketing-mode", "block"]))
    peaks = {}
    for label, extra in modes:
        for executor in ("eager", "python-eager"):
            out = os.path.join(scratch, f"memory-{label}-{executor}.json")
            proc = run(base + extra + ["--executor", executor, "--json-path", out], timeout=900)
            if proc.returncode != 0:
                fail(f"{label} {executor}: exit {proc.returncode}", proc)
            j = load(out, proc)
            if j["status"] != "ok":
                fail(f"{label} {executor}: {j['status']} {j['message']}", proc)
            per_rank = [r["memory_allocated_peak_GB"] for r in j["ranks"]] or [j["memory_allocated_peak_GB"]]
            if j["memory_allocated_peak_GB"] != max(per_rank):
                fail(f"{label} {executor}: memory {j['memory_allocated_peak_GB']}, the largest rank's is {max(per_rank)}")
            peaks[label, executor] = j["memory_allocated_peak_GB"]
        ours, theirs = peaks[label, "eager"], peaks[label, "python-eager"]
        print(f"{label:5}: tokbench {ours:.4f} GB, PyTorch {theirs:.4f} GB ({ours / theirs - 1:+.1%})")
        if ours > 1.05 * theirs:
            fail(f"{label}: tokbench's peak {ours:.4f} GB is above PyTorch's {theirs:.4f} GB + 5%")
    for label in ("zero2", "zero3", "hybrid_zero2"):
        if not peaks[label, "eager"] < peaks["none", "eager"]:
            fail(f"{label}: {peaks[label, 'eager']:.4f} GB per rank, not below one process's {peaks['none', 'eager']:.4f}")


def scenario_grad_clip(scratch):
    """--grad-clip-norm acts in tokbench's AdamW and in the Python step (torch's clip_grad_norm_;
    tokbench's clip is held to LibTorch's in test_train_parts). On each executor: the record's
    config carries it (null when off); on eager, a norm far above the gradients' scales them by
    exactly 1, so every loss is the run's without it; on both, a tiny one leaves iteration 0's loss (the clip acts
    after its backward) and changes every later one (the updates shrink to weight decay)."""
    for executor in ("eager", "python-eager"):
        losses = {}
        cases = [("off", [], None), ("huge", ["--grad-clip-norm", "1e9"], 1e9), ("tiny", ["--grad_clip_norm=1e-9"], 1e-9)]
        if executor == "python-eager":  # each Python run starts torch and litgpt: the scale-1 case is eager's alone
            cases = [cases[0], cases[2]]
        for label, extra, want in cases:
            out = os.path.join(scratch, f"{executor}-{label}.json")
            proc = run(SMALL + ["--executor", executor, "--json-path", out, *extra])
            if proc.returncode != 0:
                fail(f"{executor} {label}: exit {proc.returncode}", proc)
            j = load(out, proc)
            if j["config"]["grad_clip_norm"] != want:
                fail(f"{executor} {label}: config.grad_clip_norm {j['config']['grad_clip_norm']}, want {want}")
            losses[label] = [it["loss"] for it in j["iterations"]]
        off, huge, tiny = losses["off"], losses.get("huge"), losses["tiny"]
        if huge is not None and huge != off:
            fail(f"{executor}: --grad-clip-norm 1e9 changed the losses: {huge} against {off}")
        if tiny[0] != off[0] or any(a == b for a, b in zip(tiny[1:], off[1:])):
            fail(f"{executor}: --grad-clip-norm 1e-9: losses {tiny} against {off}: want iteration 0's alone equal")


def scenario_inductor_bf16(scratch):
    """pythia in bf16-true under inductor on the CPU: PyTorch's code generator declares one C++
    temporary twice for its twin bias gradients (docs/inductor-bf16-cpu.md); the step caps
    horizontal fusion after the first failure and trains, saying so in the record."""
    out = os.path.join(scratch, "inductor-bf16.json")
    proc = run(SMALL + ["--compile", "inductor", "--dtype", "bf16-true", "--json-path", out])
    if proc.returncode != 0:
        fail(f"inductor bf16-true: exit {proc.returncode}", proc)
    j = load(out, proc)
    if j["status"] != "ok" or j["measured_iters"] != 2:
        fail(f"inductor bf16-true: status {j['status']}, measured_iters {j['measured_iters']}", proc)
    if "docs/inductor-bf16-cpu.md" not in j["message"] or "docs/inductor-bf16-cpu.md" not in proc.stderr:
        fail(f"inductor bf16-true: the workaround is not named: message {j['message']!r}", proc)
    if not all(math.isfinite(it["loss"]) for it in j["iterations"]):
        fail(f"inductor bf16-true: losses {[it['loss'] for it in j['iterations']]}")


with tempfile.TemporaryDirectory() as scratch:
    if SCENARIO == "eager":
        scenario_eager(scratch)
    elif SCENARIO == "inductor":
        check_python_run("python-inductor", scratch)
    elif SCENARIO == "inductor_bf16":
        scenario_inductor_bf16(scratch)
    elif SCENARIO == "refusals":
        scenario_refusals(scratch)
    elif SCENARIO == "interrupt":
        scenario_interrupt(scratch)
    elif SCENARIO == "sweep":
        scenario_sweep(scratch)
    elif SCENARIO == "sweep_ranks":
        scenario_sweep_ranks(scratch)
    elif SCENARIO == "thunder":
        scenario_thunder(scratch)
    elif SCENARIO == "ranks":
        scenario_ranks(scratch)
    elif SCENARIO == "memory":
        scenario_memory(scratch)
    elif SCENARIO == "memory_snapshot":
        scenario_memory_snapshot(scratch)
    elif SCENARIO == "dynamic":
        scenario_dynamic(scratch)
    elif SCENARIO == "grad_clip":
        scenario_grad_clip(scratch)
    elif SCENARIO == "attention_kernel":
        scenario_attention_kernel(scratch)
    else:
        fail(f"unknown scenario {SCENARIO}")
print("ok")
