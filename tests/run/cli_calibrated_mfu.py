#!/usr/bin/env python3
"""`tokbench env --calibrate` then `tokbench run`: the run's JSON names the measured peak and
its MFU is the achieved FLOP/s over that peak (recomputed here from the JSON's FLOPs and
time); a run at another thread count ignores the calibration and uses the estimate. Every kept
peak was timed on a full shape (never the small probe that only screens out kernels this CPU
runs too slowly), and a bf16 run takes the measured bf16 peak, at an MFU of at most 100%,
only where one was kept (on a CPU without bf16 kernels none is, and the calibration says why).
Usage: cli_calibrated_mfu.py /path/to/tokbench"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32", "--micro-batch-size", "2",
         "--max-iters", "4", "--warmup-iters", "1", "--device", "cpu", "--dtype", "fp32", "--quiet"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    sys.exit(1)


with tempfile.TemporaryDirectory() as scratch:
    env = dict(os.environ, TOKBENCH_CACHE_DIR=os.path.join(scratch, "cache"))
    env.pop("WORLD_SIZE", None)
    run = lambda args: subprocess.run([TOKBENCH, *args], capture_output=True, text=True, timeout=600, env=env)

    proc = calibration = run(["env", "--calibrate", "--num-threads", "1"])
    if proc.returncode != 0:
        fail(f"env --calibrate exit {proc.returncode}", proc)
    with open(os.path.join(scratch, "cache", "calibration.json")) as f:
        cache = json.load(f)
    entry = cache["entries"][0]
    if entry["threads"] != 1:
        fail(f"calibrated at {entry['threads']} threads, asked for 1")
    fp32 = [p for p in entry["peaks"] if p["dtype"] == "fp32"]
    if not fp32:
        fail(f"no fp32 peak kept: {entry['peaks']}", proc)
    fp32 = fp32[0]
    probed = [p for p in entry["peaks"] if p["shape"] == "256x256x256"]
    if probed:
        fail(f"peaks kept from the probe's shape: {probed}", proc)
    if "# fp32 peak" not in proc.stdout:
        fail("the calibration does not print the fp32 peak it kept", proc)
    shown = run(["env", "--num-threads", "1"])
    if "measured peak at 1 threads" not in shown.stdout:
        fail("`tokbench env` does not show the cached calibration", shown)

    out = os.path.join(scratch, "result.json")
    proc = run(["run", *SMALL, "--num-threads", "1", "--json-path", out])
    if proc.returncode != 0:
        fail(f"run exit {proc.returncode}", proc)
    with open(out) as f:
        j = json.load(f)
    if not j["mfu_peak_source"].startswith("measured by `tokbench env --calibrate` on " + entry["measured_at"][:10]):
        fail(f"mfu_peak_source {j['mfu_peak_source']!r} does not name the measurement")
    if fp32["kernel"] not in j["mfu_peak_source"] or j["mfu_peak_is_estimate"] is not False:
        fail(f"peak source/estimate flag wrong: {j['mfu_peak_source']!r} {j['mfu_peak_is_estimate']}")
    peak = j["mfu_peak_TFLOP_per_s"] * 1e12
    if abs(peak - fp32["flops_per_s"]) > 1e-9 * fp32["flops_per_s"]:
        fail(f"peak {peak} is not the cached {fp32['flops_per_s']}")
    achieved = j["model_flops_per_iter_per_device"] * j["measured_iters"] / j["measured_window_s"]
    want = achieved / fp32["flops_per_s"]
    if abs(j["mfu"] - want) > 1e-9 * want:
        fail(f"mfu {j['mfu']}, want achieved/peak = {achieved}/{fp32['flops_per_s']} = {want}")

    proc = run(["run", *SMALL, "--num-threads", "2", "--json-path", out])
    if proc.returncode != 0:
        fail(f"run (2 threads) exit {proc.returncode}", proc)
    with open(out) as f:
        j = json.load(f)
    if j["mfu_peak_source"] is not None and (j["mfu_peak_is_estimate"] is not True or
                                             "tokbench env --calibrate --num-threads 2" not in j["mfu_peak_source"]):
        fail(f"a run at 2 threads used {j['mfu_peak_source']!r} (estimate {j['mfu_peak_is_estimate']})")
    bf16_peaks = [p for p in entry["peaks"] if p["dtype"] == "bf16"]
    bf16 = [a if a != "fp32" else "bf16-true" for a in SMALL]
    proc = run(["run", *bf16, "--num-threads", "1", "--json-path", out])
    if proc.returncode != 0:
        fail(f"run (bf16) exit {proc.returncode}", proc)
    with open(out) as f:
        j = json.load(f)
    measured = (j["mfu_peak_source"] or "").startswith("measured by")
    if bool(bf16_peaks) != measured:
        fail(f"bf16 peak kept: {bf16_peaks}; the bf16 run's source {j['mfu_peak_source']!r}")
    if measured and not j["mfu"] <= 1.0:
        fail(f"a bf16 run at MFU {j['mfu']} of the measured bf16 peak: that peak is not achievable")
    if not bf16_peaks and "bf16: no kernel runs it at a usable rate" not in calibration.stdout:
        fail("no bf16 peak kept, and the calibration does not say why", calibration)
print("ok")
