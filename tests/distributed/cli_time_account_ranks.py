#!/usr/bin/env python3
"""The time account on two Gloo ranks (docs/time-account.md, "Many ranks"), through the real
`tokbench run` under the built-in launcher:
  ddp    DDP with --no-ddp-overlap, eager: every all-reduce is waited for, so exposed
         communication is large. On each rank the account's exposed_comm is the step's own measure
         of its waits over the profiled iterations, the same number (exposed_comm_step_s, which the
         account carries beside it as it arrived); the profiler saw those waits (their ranges
         enclose the measure, so the seconds moved to exposed_comm came from where the waits
         were); the categories sum to the pass's iteration ranges exactly and to its own clock
         within 5%; the matrix FLOPs counted equal the model's per device; the record's
         top-level account is the slowest rank's, named in the report's waterfall.
  fsdp   FSDP ZeRO-3, fused: the same checks.
  python_ddp, python_fsdp
         python-eager (litgpt in a Python child per rank) under PyTorch's DDP and FSDP (ZeRO-3):
         the Python steps have no timer around their waits, so exposed communication is the
         profiler's (exposed_comm_source "profiler": the collectives' operators and the loop's gaps
         while Gloo runs one) and must be positive; the other checks are the same.
  python_thunder_fsdp
         python-thunder (thunder.jit with thunder's own fsdp transform, ZeRO-3): the same checks.
  usage  fsdp2 (PyTorch's fully_shard, Python executors only) with --time-account-iters 2 runs
         and has an account on every rank, as python_fsdp; a malformed straggler hook
         (TOKBENCH_TEST_HOST_DELAY_MS=150@2 on two ranks) is one usage line, exit 2.
  straggler_python, straggler_eager
         a controlled experiment: rank 1 sleeps 150 ms at each iteration's start
         (TOKBENCH_TEST_HOST_DELAY_MS=150@1), python-eager DDP and tokbench's eager DDP. Rank 1's
         data_host holds the delay within 10%, and rank 0, which waits for rank 1 in its
         all-reduces, has at least 90% of it in exposed_comm: a straggler's time is the faster
         ranks' exposed communication.
Usage: cli_time_account_ranks.py /path/to/tokbench SCENARIO"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH, SCENARIO = sys.argv[1], sys.argv[2]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "64", "--micro-batch-size", "1",
         "--max-iters", "4", "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1",
         "--unit-timing-iters", "0", "--peak-tflops", "1", "--nproc-per-node", "2", "--dist-timeout", "120"]
PROFILED = 3


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    sys.exit(1)


def clean_env():
    env = dict(os.environ)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "TOKBENCH_LAUNCHED", "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
                 "TOKBENCH_TEST_HOST_DELAY_MS"]:
        env.pop(name, None)
    return env


def close(a, b, tolerance=1e-9):
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


def run(args, delay=None):
    env = clean_env()
    if delay is not None:
        env["TOKBENCH_TEST_HOST_DELAY_MS"] = delay
    return subprocess.run([TOKBENCH, "run", *SMALL, *args], capture_output=True, text=True, timeout=600, env=env)


def check_rank_account(j, r, proc, what):
    check_sums(j, r, proc, what)
    return check_exposed_comm(r, proc, what)


def check_sums(j, r, proc, what):
    t = r["time_account"]
    what = f"{what} rank {r['rank']}"
    if not isinstance(t, dict):
        fail(f"{what}: no time account", proc)
    cats = t["categories"]
    profiled = sum(c["profiled_s"] for c in cats.values())
    if not close(profiled, t["profiled_range_s"]):
        fail(f"{what}: the categories sum to {profiled} s, the iteration ranges to {t['profiled_range_s']} s")
    if abs(profiled - t["profiled_iteration_s"]) > 0.05 * t["profiled_iteration_s"]:
        fail(f"{what}: the categories sum to {profiled * 1e3:.3f} ms, the profiled iteration took "
             f"{t['profiled_iteration_s'] * 1e3:.3f} ms")
    if any(c["profiled_s"] < 0 for c in cats.values()):
        fail(f"{what}: a negative category: {cats}")
    if not close(sum(c["s"] for c in cats.values()), r["average_iter_time"] / 1e3, 1e-6):
        fail(f"{what}: seconds sum to {sum(c['s'] for c in cats.values())}, the rank's iteration is "
             f"{r['average_iter_time']} ms")
    if t["gemm_flops_per_iter"] + t["attention_flops_per_iter"] != j["model_flops_per_iter_per_device"] or \
            t["uncounted_matmuls"]:
        fail(f"{what}: counted {t['gemm_flops_per_iter']} + {t['attention_flops_per_iter']} matrix FLOPs, "
             f"the model's per device are {j['model_flops_per_iter_per_device']}")


def check_exposed_comm(r, proc, what):
    t = r["time_account"]
    what = f"{what} rank {r['rank']}"
    if not isinstance(t, dict):
        fail(f"{what}: no time account", proc)
    if t["rank"] != r["rank"] or t["profiled_iters"] != PROFILED:
        fail(f"{what}: account of rank {t['rank']} over {t['profiled_iters']} iterations", proc)
    cats = t["categories"]
    comm = cats["exposed_comm"]["profiled_s"]
    seen = t["exposed_comm_seen_s"]
    if t["source"] == "torch_profiler_cpu":
        # The Python steps: no timer of their own; the profiler's attribution is the figure, and
        # the collectives in flight (Gloo's events) bound the gaps it moved.
        if t["exposed_comm_source"] != "profiler" or t["exposed_comm_step_s"] is not None:
            fail(f"{what}: exposed communication from {t['exposed_comm_source']}, step measure "
                 f"{t['exposed_comm_step_s']}; want the profiler's, none", proc)
        if not comm > 0 or seen != comm:
            fail(f"{what}: exposed_comm {comm} s per profiled iteration, seen {seen} s", proc)
        if not 0 <= t["exposed_comm_gaps_s"] <= min(comm, t["comm_in_flight_s"]) + 1e-12:
            fail(f"{what}: {t['exposed_comm_gaps_s']} s of gaps moved, {comm} s exposed, "
                 f"{t['comm_in_flight_s']} s in flight", proc)
        return comm, seen
    if t["exposed_comm_source"] != "step":
        fail(f"{what}: exposed communication from {t['exposed_comm_source']}, not the step's timer", proc)
    # The step's measure, exactly: the account holds it, it is not re-measured.
    if comm != t["exposed_comm_step_s"] or not comm > 0:
        fail(f"{what}: exposed_comm {comm} s per profiled iteration, the step measured {t['exposed_comm_step_s']} s")
    # The profiler saw every wait: its ranges enclose the step's timer (clocks agree to a microsecond),
    # and hold little beyond it (recording a range costs microseconds).
    if seen < comm - 1e-6 or seen - comm > 2e-3 + 0.05 * comm:
        fail(f"{what}: the profiler saw {seen * 1e3:.3f} ms of waits, the step measured {comm * 1e3:.3f} ms")
    return comm, seen


def check_run(args, what, delay=None):
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "result.json")
        proc = run(args + ["--time-account-iters", str(PROFILED), "--json-path", out], delay)
        if proc.returncode != 0:
            fail(f"{what}: exit {proc.returncode}", proc)
        with open(out) as f:
            j = json.load(f)
    if j["status"] != "ok" or len(j["ranks"]) != 2:
        fail(f"{what}: status {j['status']}, {len(j['ranks'])} ranks", proc)
    for r in j["ranks"]:
        comm, seen = check_rank_account(j, r, proc, what)
        print(f"{what} rank {r['rank']}: exposed_comm {comm * 1e3:.3f} ms per profiled iteration "
              f"(the profiler's waits {seen * 1e3:.3f} ms) of {r['time_account']['profiled_iteration_s'] * 1e3:.3f} ms")
    # The record's account is the slowest rank's: it adds up to the run's iteration, ends at its MFU.
    top = j["time_account"]
    slowest = max(j["ranks"], key=lambda r: (r["average_iter_time"], -r["rank"]))
    if not isinstance(top, dict) or top["rank"] != slowest["rank"]:
        fail(f"{what}: the record's account is rank {top and top['rank']}'s, the slowest is rank {slowest['rank']}", proc)
    if top["categories"] != slowest["time_account"]["categories"] and not all(
            close(top["categories"][k]["s"], slowest["time_account"]["categories"][k]["s"], 1e-9) for k in top["categories"]):
        fail(f"{what}: the record's account is not the slowest rank's", proc)
    if not close(top["mfu"], j["mfu"]) or not close(top["iteration_s"], j["average_iter_time"] / 1e3):
        fail(f"{what}: the account ends at MFU {top['mfu']}, the run's is {j['mfu']}")
    if f"rank {slowest['rank']}'s (the slowest)" not in proc.stdout or "exposed communication" not in proc.stdout:
        fail(f"{what}: the report's waterfall does not name rank {slowest['rank']} or show exposed communication", proc)
    return j


if SCENARIO == "ddp":
    check_run(["--distributed-mode", "ddp", "--no-ddp-overlap", "--executor", "eager"], "ddp")
elif SCENARIO == "fsdp":
    check_run(["--distributed-mode", "fsdp", "--shard-mode", "zero3", "--executor", "fused"], "fsdp zero3")
elif SCENARIO == "python_ddp":
    check_run(["--distributed-mode", "ddp", "--executor", "python-eager"], "python-eager ddp")
elif SCENARIO == "python_fsdp":
    check_run(["--distributed-mode", "fsdp", "--shard-mode", "zero3", "--executor", "python-eager"],
              "python-eager fsdp zero3")
elif SCENARIO == "python_thunder_fsdp":
    check_run(["--distributed-mode", "fsdp", "--shard-mode", "zero3", "--executor", "python-thunder"],
              "python-thunder fsdp zero3")
elif SCENARIO == "usage":
    proc = run(["--distributed-mode", "ddp", "--executor", "python-eager"], delay="150@2")
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode != 2 or len(lines) != 1 or "TOKBENCH_TEST_HOST_DELAY_MS" not in lines[0] or "@RANK" not in lines[0]:
        fail("TOKBENCH_TEST_HOST_DELAY_MS=150@2 on two ranks: want exit 2 and one line naming the hook", proc)
    check_run(["--distributed-mode", "fsdp2", "--compile", "python-eager"], "python-eager fsdp2")
elif SCENARIO in ("straggler_python", "straggler_eager"):
    DELAY = 0.150
    executor = "python-eager" if SCENARIO == "straggler_python" else "eager"
    j = check_run(["--distributed-mode", "ddp", "--executor", executor], f"{executor} ddp, rank 1 delayed",
                  delay=f"{round(DELAY * 1e3)}@1")
    ranks = {r["rank"]: r["time_account"] for r in j["ranks"]}
    held = ranks[1]["categories"]["data_host"]["profiled_s"]
    waited = ranks[0]["categories"]["exposed_comm"]["profiled_s"]
    print(f"{executor}: rank 1's data_host {held * 1e3:.1f} ms, rank 0's exposed_comm {waited * 1e3:.1f} ms "
          f"(rank 1's {ranks[1]['categories']['exposed_comm']['profiled_s'] * 1e3:.1f} ms) for a "
          f"{DELAY * 1e3:.0f} ms delay")
    if abs(held - DELAY) > 0.1 * DELAY:
        fail(f"{executor}: rank 1's data_host is {held * 1e3:.1f} ms per profiled iteration, its delay "
             f"{DELAY * 1e3:.0f} ms")
    if waited < 0.9 * DELAY:
        fail(f"{executor}: rank 0 waited {waited * 1e3:.1f} ms per profiled iteration in exposed_comm, rank 1 "
             f"was {DELAY * 1e3:.0f} ms late")
else:
    fail(f"unknown scenario {SCENARIO}")
print("ok")
