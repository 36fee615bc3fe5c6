#!/usr/bin/env python3
"""The time account of the Python executors (docs/time-account.md, "The Python executors"), through
the CLI on pythia-14m cut to one layer, T=64, one thread: the step profiles its own iterations
under torch.profiler and tokbench classifies the events with the same rules as its own steps'.

Scenarios (one executor each, as their costs differ):
  eager     python-eager: the record's time_account is there by default (2 iterations, source
            torch_profiler_cpu), outside every measured figure; the matrix FLOPs counted from the
            profiled shapes equal the model's exactly, and with --checkpoint-activations the hardware
            FLOPs plus the projection PyTorch's early stop enters and aborts (which never ran,
            and which hardware_flops rightly leave out); the categories sum to the pass's own
            clock within 5%; every kind of work the step does lands in its category (the model's
            norm and attention ranges, the loss range, the optimizer) and "other" stays under
            OTHER_BOUND; --time-account-iters 0 leaves it out and the report line on Kineto's
            missing GPU is silenced
  inductor  python-inductor: the same, its generated kernels classified by what they fuse (the norm
            and loss kernels, as no range survives compilation); the profiled iterations take no
            longer than twice the measured ones (a recompilation, which the ranges must not cause,
            takes seconds)
  thunder   python-thunder (thunder.jit): the same FLOPs and sums; on the CPU thunder runs its trace as
            torch operators with no range of the model's, its norms decomposed (var_mean, rsqrt,
            ...) and its attention as bmm + softmax, so those land in elementwise and gemm, and
            only the kinds of work its operators name are required
  host_delay
            python-eager with the test hook TOKBENCH_TEST_HOST_DELAY_MS=400 (the step sleeps at each
            iteration's start, inside the profiled iteration's range, as tokbench's loop does): the
            delay is in data_host within 10%, and the other categories together move by less than
            10% of it against runs without the hook (two of each, interleaved; the least of each
            kind compared, as load only adds time)
Usage: cli_python_time_account.py /path/to/tokbench SCENARIO"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH, SCENARIO = sys.argv[1], sys.argv[2]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "64", "--micro-batch-size", "2",
         "--max-iters", "3", "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1", "--peak-tflops", "1"]
CATEGORIES = ["gemm", "attention", "normalization", "elementwise", "loss", "optimizer", "data_host",
              "exposed_comm", "device_idle", "other"]
# "other" holds the host time between operators that no operator covers: Python's own around
# them (litgpt's forward, the autograd engine, torch.compile's and thunder's wrappers and guards)
# and the profiler's. On this model (one layer, T=64, ~110-140 ms iterations on a 2-core Xeon)
# it was 1.3-1.6% for python-eager, 2.4-2.8% for python-inductor and 3.9% for python-thunder;
# 10% leaves room for a loaded machine and catches a rule that stops naming a kind of operator.
OTHER_BOUND = 0.10


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "") + "\n--- stderr ---\n" + (proc.stderr or ""))
    sys.exit(1)


def run(args, delay_ms=None):
    env = dict(os.environ)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "TOKBENCH_LAUNCHED", "KINETO_LOG_LEVEL",
                 "TOKBENCH_TEST_HOST_DELAY_MS"]:
        env.pop(name, None)
    if delay_ms is not None:
        env["TOKBENCH_TEST_HOST_DELAY_MS"] = str(delay_ms)
    return subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, timeout=1500, env=env)


def record(args, out, delay_ms=None):
    proc = run(args + ["--json-path", out], delay_ms)
    if proc.returncode != 0:
        fail(f"{args}: exit {proc.returncode}", proc)
    with open(out) as f:
        return json.load(f), proc


def check_account(executor, j, proc, flops, required):
    """The account's invariants on one record; returns it."""
    t = j["time_account"]
    if not isinstance(t, dict):
        fail(f"{executor}: no time_account in the record (the default is on)", proc)
    if t["source"] != "torch_profiler_cpu" or t["profiled_iters"] != 2:
        fail(f"{executor}: source {t['source']}, {t['profiled_iters']} profiled iterations", proc)
    if j["measured_iters"] != 2 or len(j["iterations"]) != 3:
        fail(f"{executor}: the profiled iterations leaked into the metrics")
    if sorted(t["categories"]) != sorted(CATEGORIES):
        fail(f"{executor}: categories {sorted(t['categories'])}")
    cats = t["categories"]
    counted = t["gemm_flops_per_iter"] + t["attention_flops_per_iter"]
    if counted != flops or t["uncounted_matmuls"] != 0:
        fail(f"{executor}: counted {t['gemm_flops_per_iter']} + {t['attention_flops_per_iter']} = {counted} matrix "
             f"FLOPs ({t['uncounted_matmuls']} products without shapes), want {flops}", proc)
    # Against the pass's own clock: the profiler slows its iterations, and only the clock of the
    # same iterations tells whether time fell outside every category.
    summed = sum(c["profiled_s"] for c in cats.values())
    if abs(summed - t["profiled_iteration_s"]) > 0.05 * t["profiled_iteration_s"]:
        fail(f"{executor}: categories sum to {summed * 1e3:.3f} ms, the pass's clock {t['profiled_iteration_s'] * 1e3:.3f} ms")
    if abs(sum(c["s"] for c in cats.values()) - j["average_iter_time"] / 1e3) > 1e-9 * j["average_iter_time"]:
        fail(f"{executor}: seconds do not add up to the measured iteration")
    if cats["other"]["share"] > OTHER_BOUND:
        fail(f"{executor}: other is {cats['other']['share']:.1%} of the iteration (bound {OTHER_BOUND:.0%}); "
             f"its largest: {t['other_top']}", proc)
    for name in required:
        if not cats[name]["profiled_s"] > 0:
            fail(f"{executor}: nothing in {name}: {json.dumps(cats)}; other's largest: {t['other_top']}", proc)
    for needle in ["Where the time goes", "= MFU"]:
        if needle not in proc.stdout:
            fail(f"{executor}: the report has no {needle!r}", proc)
    if "gpuGetDeviceCount" in proc.stderr:
        fail(f"{executor}: Kineto's missing-GPU line was not silenced", proc)
    print(f"{executor}: " + ", ".join(f"{k} {v['share']:.1%}" for k, v in cats.items() if v["share"] > 0) +
          f"; profiled {t['profiled_iteration_s'] * 1e3:.2f} ms vs measured {t['iteration_s'] * 1e3:.2f} ms")
    return t


if SCENARIO == "host_delay":
    # 400 ms, not 150: on the shared 2-core VM the first operators after a sleep ran up to 27 ms
    # slower (57.0 -> 84.2 ms for the other categories, CI of 1e8fdc7), past 10% of a 150 ms
    # delay; that slowdown does not grow with the delay, while a leak of the delay does.
    DELAY_MS = 400
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "result.json")
        # T=16, B=1: a ~55 ms step, whose run-to-run noise on the shared 2-core machine (±15%,
        # both ways) stays well under the 15 ms the other categories may move; at T=64, B=2 the
        # ~125 ms step alone moved by up to 22 ms between two runs without the hook.
        args = SMALL + ["--executor", "python-eager", "--time-account-iters", "3", "--seq-len", "16",
                        "--micro-batch-size", "1"]
        # Two runs of each kind, interleaved, and the least of each kind: a load spike on the
        # shared machine only adds time, and would otherwise be read as the delay leaking.
        runs = {None: [], DELAY_MS: []}
        for delay in [None, DELAY_MS, None, DELAY_MS]:
            j, proc = record(args, out, delay_ms=delay)
            runs[delay].append(j["time_account"]["categories"])

    def least(kind, pick):
        return min(pick(cats) for cats in runs[kind])

    def rest_of(cats):
        return sum(c["profiled_s"] for k, c in cats.items() if k != "data_host")

    data_host = (least(DELAY_MS, lambda c: c["data_host"]["profiled_s"]) -
                 least(None, lambda c: c["data_host"]["profiled_s"]))
    rest, base_rest = least(DELAY_MS, rest_of), least(None, rest_of)
    print(f"host delay {DELAY_MS} ms: data_host +{data_host * 1e3:.1f} ms, the other categories "
          f"{base_rest * 1e3:.1f} -> {rest * 1e3:.1f} ms per profiled iteration")
    if abs(data_host - DELAY_MS / 1e3) > 0.1 * DELAY_MS / 1e3:
        fail(f"a {DELAY_MS} ms host delay shows as {data_host * 1e3:.1f} ms more data/host", proc)
    if abs(rest - base_rest) > 0.1 * DELAY_MS / 1e3:
        fail(f"a {DELAY_MS} ms host delay moved the other categories from {base_rest * 1e3:.1f} to "
             f"{rest * 1e3:.1f} ms", proc)
    print("ok")
    sys.exit(0)

executor = {"eager": "python-eager", "inductor": "python-inductor", "thunder": "python-thunder"}[SCENARIO]
with tempfile.TemporaryDirectory() as scratch:
    out = os.path.join(scratch, "result.json")
    j, proc = record(SMALL + ["--executor", executor], out)
    required = ["gemm", "elementwise", "loss", "optimizer"]
    if SCENARIO != "thunder":
        required += ["attention", "normalization"]
    t = check_account(executor, j, proc, j["model_flops_per_iter_per_device"], required)
    if SCENARIO == "inductor" and t["profiled_iteration_s"] > 2 * t["iteration_s"]:
        fail(f"inductor: the profiled iterations took {t['profiled_iteration_s'] * 1e3:.1f} ms against the measured "
             f"{t['iteration_s'] * 1e3:.1f} ms: a recompilation?", proc)
    if SCENARIO == "eager":
        # Checkpointed blocks recompute their forward in the backward: the hardware FLOPs, whose
        # recomputation stops before each block's MLP projection (model/counting.cpp). PyTorch's
        # non-reentrant checkpoint stops there too, but by an exception raised when the
        # projection's input is saved, on entering its addmm: the product never runs, yet the
        # profiler recorded the operator with its shapes (docs/time-account.md, "Checkpointing").
        # So the counted FLOPs are one 2·B·T·(4·C)·C per layer above (pythia's MLP is 4·C wide).
        j, proc = record(SMALL + ["--executor", executor, "--checkpoint-activations"], out)
        if j["hardware_flops"] <= j["model_flops_per_iter_per_device"]:
            fail(f"checkpointing: hardware FLOPs {j['hardware_flops']} not above the model's", proc)
        C, B, T, layers = 128, 2, 64, 1  # pythia-14m's n_embd, SMALL's batch
        check_account(executor + " checkpointed", j, proc, j["hardware_flops"] + 2 * B * T * layers * 4 * C * C, required)
        j, proc = record(SMALL + ["--executor", executor, "--time-account-iters", "0"], out)
        if j["time_account"] is not None or "Where the time goes" in proc.stdout:
            fail("--time-account-iters 0 still made an account", proc)
        # A Llama: RMSNorm, whose litgpt norm_class is a functools.partial, not a class (the norm
        # range's wrapper once failed on it with a TypeError after the measured window).
        llama = [*SMALL, "--executor", executor]
        llama[llama.index("pythia-14m")] = "tiny-llama-1.1b"
        j, proc = record(llama, out)
        check_account(executor + " tiny-llama", j, proc, j["model_flops_per_iter_per_device"], required)
print("ok")
