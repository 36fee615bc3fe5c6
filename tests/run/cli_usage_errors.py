#!/usr/bin/env python3
"""Every usage error of `tokbench run` ends before any work with exit code 2 and exactly one
line on stderr naming the option (no stack trace, no abort), and creates no file.
Then every option of every subcommand, taken from its --help, given an empty value as
`--name=` followed by a word: exit 2, one line naming the option and the empty value; the word
is never taken as the value.
Usage: cli_usage_errors.py /path/to/tokbench"""
import concurrent.futures
import os
import re
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
    # An empty `--name=` (issue 38): refused naming the option; never the next word taken as its
    # value (the record written into a file named --quiet, pythia-14m blamed for --compile).
    (SMALL + ["--json_path=", "--quiet"], {}, ["--json-path", "empty value"]),
    (["--compile=", "--model-name", "pythia-14m"], {}, ["--compile", "empty value"]),
    (SMALL + ["--json-path", ""], {}, ["--json-path", "empty value"]),
    (SMALL + ["--seed=", "7"], {}, ["--seed", "''"]),
    (SMALL + ["--dynamic="], {}, ["--dynamic", "empty value", "True or False"]),
    # Flags' words: one line saying which are valid.
    (SMALL + ["--dynamic=maybe"], {}, ["--dynamic", "'maybe'", "valid: True or False"]),
    (SMALL + ["--use_sdpa=perhaps"], {}, ["--use-sdpa", "'perhaps'", "valid: True or False"]),
    (SMALL + ["--no-tf32=sometimes"], {}, ["--tf32", "'sometimes'", "valid: True or False"]),
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

# Every option of every subcommand: `--name=` then a word.
SUBCOMMANDS = ["run", "info", "models", "env", "version", "comm", "sweep", "history", "compare", "explain", "predict"]
OPTION = re.compile(r"^\s+((?:-\w,)?--[\w-]+(?:,!?-{1,2}[\w-]+)*)")


def long_options(subcommand):
    out = subprocess.run([TOKBENCH, subcommand, "--help"], capture_output=True, text=True, timeout=60)
    names = []
    for line in out.stdout.splitlines():
        m = OPTION.match(line)
        if m:
            spellings = [n.lstrip("!") for n in m.group(1).split(",") if n.lstrip("!").startswith("--")]
            if spellings and spellings[0] not in ("--help", "--help-all"):
                names.append(spellings)
    return names


def empty_value_case(subcommand, spellings):
    word = "WORD-NOT-A-VALUE"
    # The last spelling (a snake_case one where there is one, as the reference writes them).
    proc = subprocess.run([TOKBENCH, subcommand, spellings[-1] + "=", word], capture_output=True, text=True,
                          timeout=120, env={k: v for k, v in os.environ.items() if k != "WORLD_SIZE"})
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    # The option's own check may say it first ("--seed: '' is not valid; valid: a whole number").
    named = len(lines) == 1 and any(n in lines[0] for n in spellings) and ("empty value" in lines[0] or "''" in lines[0])
    if proc.returncode != 2 or not named or word in proc.stderr or proc.stdout:
        return f"{subcommand} {spellings[-1]}= {word}: exit {proc.returncode}, stderr {proc.stderr!r}"
    return None


cases = [(sub, spellings) for sub in SUBCOMMANDS for spellings in long_options(sub)]
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    empty_failures = [f for f in pool.map(lambda c: empty_value_case(*c), cases) if f]
if len(cases) < 100:
    failures.append(f"only {len(cases)} options found in the subcommands' --help (the format changed?)")
failures += empty_failures

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{len(CASES)} usage errors checked; {len(cases)} options refuse an empty --name=")
