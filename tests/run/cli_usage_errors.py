#!/usr/bin/env python3
"""Every usage error of `tokbench run` ends before any work with exit code 2 and exactly one
line on stderr naming the option (no stack trace, no abort), and creates no file.
Usage: cli_usage_errors.py /path/to/tokbench"""
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32", "--max-iters", "4",
         "--warmup-iters", "1"]
has_gpu = os.path.exists("/dev/nvidia0")

CASES = [
    # (arguments, environment additions, substrings the one line must contain)
    (["--model-name", "pythia-14q"], {}, ["--model-name", "pythia-14q", "pythia-14m"]),
    (["--model_name=Llama-9-1b"], {}, ["--model-name", "Llama-9-1b"]),
    (SMALL + ["--micro-batch-size", "2", "--global-batch-size", "3"], {}, ["--global-batch-size", "3"]),
    (SMALL + ["--warmup-iters", "4"], {}, ["--warmup-iters", "4", "--max-iters"]),
    (SMALL + ["--micro_batch_size=0"], {}, ["--micro-batch-size", "0"]),
    (SMALL + ["--seq-len", "-5"], {}, ["--seq-len", "-5"]),
    (SMALL + ["--micro-batch-size", "four"], {}, ["--micro-batch-size", "four"]),
    (SMALL + ["--max_iters=lots"], {}, ["iters", "lots"]),
    (SMALL + ["--dtype", "fp16"], {}, ["--dtype", "fp16", "bf16-true"]),
    (SMALL + ["--compile=torchscript"], {}, ["--compile", "torchscript", "eager", "inductor", "thunder_inductor"]),
    (SMALL + ["--executor", "thunder_inducter"], {}, ["--compile", "thunder_inducter", "'inducter'", "valid:"]),
    (SMALL + ["--compile=thunder_cudnn"], {}, ["--compile", "thunder_cudnn", "CUDA only", "valid here:"]),
    (SMALL + ["--executor", "fused", "--dtype", "bf16-mixed"], {}, ["--executor fused", "bf16-mixed", "bf16-true"]),
    (SMALL + ["--distributed_mode=ddp"], {}, ["--distributed-mode", "ddp", "more than one rank"]),
    (SMALL, {"WORLD_SIZE": "4"}, ["--distributed-mode", "none", "4 ranks"]),
    (SMALL + ["--distributed_mode=ddp"], {"WORLD_SIZE": "2", "RANK": "2"}, ["RANK", "2", "0..1"]),
    (SMALL + ["--distributed_mode=ddp", "--nproc-per-node", "0"], {}, ["--nproc-per-node", "0"]),
    (SMALL + ["--shard-mode", "zero9"], {}, ["--shard-mode", "zero9", "zero2"]),
    (SMALL + ["--device", "tpu"], {}, ["--device", "tpu", "cuda:N"]),
    (SMALL + ["--json-path", "/nonexistent-tokbench/out.json"], {}, ["--json-path", "/nonexistent-tokbench"]),
    (SMALL + ["--data", "/nonexistent-tokbench/tokens.bin"], {}, ["--data", "tokens.bin"]),
    (SMALL + ["--flops-convention", "exact"], {}, ["--flops-convention", "exact", "palm"]),
    (SMALL + ["--peak-tflops", "-1"], {}, ["--peak-tflops", "-1"]),
    (["--model-name", "Llama-2-70b-hf", "--seq-len", "4096"], {}, ["Llama-2-70b-hf", "GB"]),
    (SMALL + ["--no-such-option"], {}, ["--no-such-option"]),
    # Absurd magnitudes: refused in one line, never a crash, a hang or the OOM killer.
    (SMALL + ["--max-iters", "1" + "0" * 30], {}, ["--max-iters", "1" + "0" * 30, "1..1000000"]),
    (SMALL + ["--max-iters", "9223372036854775807"], {}, ["--max-iters", "9223372036854775807", "1..1000000"]),
    (SMALL + ["--global-batch-size", "9223372036854775807"], {}, ["--global-batch-size", "GA at most"]),
    (SMALL + ["--n-layers", "2147483648"], {}, ["--n-layers", "2147483648", "1..100000"]),
    (SMALL + ["--seed", "-1"], {}, ["--seed", "'-1'"]),
    (SMALL + ["--lr", "nan"], {}, ["--lr", "'nan'", "finite"]),
    (SMALL + ["--num-threads", "2147483647"], {}, ["--num-threads", "0..1024"]),
    (SMALL + ["--cpu-memory-cap-mb", "9223372036854775807"], {}, ["--cpu-memory-cap-mb", "9223372036854"]),
    (SMALL + ["--device", "cuda:99999999999"], {}, ["--device", "cuda:99999999999"]),
]
if not has_gpu:
    CASES.append((SMALL + ["--device", "cuda"], {}, ["--device", "cuda", "CUDA"]))
    CASES.append((SMALL + ["--device=cuda:1"], {}, ["--device", "cuda:1"]))

failures = []
with tempfile.TemporaryDirectory() as scratch:
    for args, env_add, needles in CASES:
        env = dict(os.environ, **env_add)
        env.pop("WORLD_SIZE", None) if "WORLD_SIZE" not in env_add else None
        proc = subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, env=env, cwd=scratch,
                              timeout=120)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        problems = []
        if proc.returncode != 2:
            problems.append(f"exit {proc.returncode}, want 2")
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines, want 1")
        text = " ".join(lines)
        problems += [f"missing {n!r}" for n in needles if n not in text]
        if "terminate" in proc.stderr or "Traceback" in proc.stderr or "Exception raised from" in proc.stderr:
            problems.append("stack trace or abort")
        if os.listdir(scratch):
            problems.append(f"created {os.listdir(scratch)}")
        if problems:
            failures.append(f"{args} {env_add}: {'; '.join(problems)}\n  stderr: {proc.stderr!r}")
        else:
            print(f"ok: {' '.join(args[-2:])} -> {lines[0]}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{len(CASES)} usage errors checked")
