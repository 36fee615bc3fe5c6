#!/usr/bin/env python3
"""`tokbench` (the torch-free front end) and `tokbench-engine` (docs/architecture.md, "Two programs").
  - tokbench's dynamic section needs no LibTorch, c10 or CUDA library, so a refused command
    line never loads them;
  - both programs answer the same command lines alike: --help of every subcommand, usage errors
    of every kind (CLI11's, an empty --name=, one option out of its bounds, a check that needs the
    machine), `version`: the same exit code, stdout and stderr, byte for byte;
  - a command or an option that does not exist is refused in one line naming it and the valid
    commands, or the option meant when one is a likely typo;
  - tokbench alone in a folder (no engine beside it) still answers --help and refuses a bad line
    (exit 2: an option of run, sweep, comm, history or predict wrong on its own) without the engine, and says in one line that it cannot start the engine for a good
    one (exit 9, the runtime could not start), naming it.
Usage: front_end.py /path/to/tokbench /path/to/tokbench-engine"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FRONT, ENGINE = (os.path.abspath(p) for p in sys.argv[1:3])
ENGINE_NAME = os.path.basename(ENGINE)
failures = []


def run(program, args, cwd=None):
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "TOKBENCH_LAUNCHED")}
    # argv[0] as the user typed it: both programs print it in help, so give them the same one.
    proc = subprocess.run(["tokbench", *args], executable=program, capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


# 1. No LibTorch in the front end's dynamic section.
dynamic = subprocess.run(["readelf", "-d", FRONT], capture_output=True, text=True, check=True).stdout
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
heavy = [n for n in needed if re.match(r"lib(torch|c10|cuda|cudart|nvrtc|cublas|nccl|gomp|mkl)", n)]
if not needed or heavy:
    failures.append(f"tokbench needs {heavy or 'nothing (readelf read no NEEDED)'}; want no LibTorch/CUDA library "
                    f"(all: {needed})")

# 2. The same answers from both programs.
help_out = run(FRONT, ["--help"])[1]
subcommands = re.findall(r"^\s{2}(\w+)\s{2,}", help_out.split("SUBCOMMANDS:")[-1], re.M)
if len(subcommands) < 8:
    failures.append(f"`tokbench --help` lists {subcommands}; want the subcommands (format changed?)")
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32", "--max-iters", "2", "--warmup-iters", "1"]
lines = [["--help"], ["--version"], ["version"], ["no-such-command"], []]
lines += [[sub, "--help"] for sub in subcommands]
lines += [
    ["run", *SMALL, "--no-such-option"],             # CLI11
    ["run", *SMALL, "--json_path=", "--quiet"],       # an empty --name=
    ["run", *SMALL, "--micro-batch-size", "four"],    # a value's type
    ["run", *SMALL, "--beta1", "-1"],                 # one option out of its bounds (check_fields)
    ["run", *SMALL, "--warmup-iters", "2"],           # two options together
    ["run", "--model-name", "pythia-14q"],            # the catalog (the engine's)
    ["run", *SMALL, "--device", "cuda:99999999999"],  # the machine (the engine's)
    ["info", "pythia-14m", "--n-layers", "0"],
    ["sweep", "--format", "nope"],
    ["compare", "only-one"],
    ["comm", "--sizes", ""],
    ["comm", "--iters", "0"],                          # comm's options alone (check_comm_options)
    ["comm", "--device", "cuda", "--iters", "0"],      # ... named before the machine's fault
    ["history", "--format", "pdf", "--store", "none.sqlite"],  # before the store is opened
    ["sweep", "--matrix", "none.toml", "--timeout", "0"],      # before the matrix is read
    ["predict", "--from", "none.json", "--cluster", "h100-sxm-8", "--nnodes", "0"],  # before --from is read
]
for args in lines:
    front, engine = run(FRONT, args), run(ENGINE, args)
    if front != engine:
        failures.append(f"{args}: tokbench and {ENGINE_NAME} answer differently:\n  tokbench: {front}\n"
                        f"  {ENGINE_NAME}: {engine}")
    elif front[0] not in (0, 2):
        failures.append(f"{args}: exit {front[0]}, want 0 (help) or 2 (usage): {front[2]!r}")
print(f"{len(lines)} command lines answered alike by tokbench and {ENGINE_NAME}")

# 3. A word tokbench does not know: one line naming it and what is valid (src/cli/unknown_words.cpp).
UNKNOWN = [
    (["rnu"], ["'rnu' is not a command", "valid: ", "compare, ", "run, ", "sweep"]),
    ([], ["a command is required", "valid: ", "run, "]),
    (["run", "--model-nme", "x"], ["`tokbench run` has no option --model-nme", "did you mean --model-name?"]),
    (["run", "--micro_bach_size=2"], ["has no option --micro_bach_size", "did you mean --micro-batch-size?"]),
    (["run", "--seed", "-1", "--no-such-option"], ["has no option --no-such-option", "tokbench run --help"]),
    (["info", "pythia-14m", "--seqlen", "4"], ["`tokbench info` has no option --seqlen", "did you mean --seq-len?"]),
]
for args, needles in UNKNOWN:
    code, out, err = run(FRONT, args)
    err_lines = [l for l in err.splitlines() if l.strip()]
    missing = [n for n in needles if not err_lines or n not in err_lines[0]]
    if code != 2 or len(err_lines) != 1 or missing or out:
        failures.append(f"{args}: exit {code}, stderr {err!r}; want exit 2 and one line with {missing}")
    if "did you mean" not in " ".join(needles) and "did you mean" in err:
        failures.append(f"{args}: suggests an option where none is near: {err!r}")

# 4. tokbench without its engine.
with tempfile.TemporaryDirectory() as folder:
    alone = os.path.join(folder, "tokbench")
    shutil.copy2(FRONT, alone)
    code, out, err = run(alone, ["run", "--help"])
    if code != 0 or "--model-name" not in out:
        failures.append(f"run --help without the engine: exit {code}, {err!r}")
    code, out, err = run(alone, ["run", *SMALL, "--beta1", "-1"])
    if code != 2 or "--beta1" not in err:
        failures.append(f"a bad --beta1 without the engine: exit {code}, want 2: {err!r}")
    # Each command's options alone are the front's: refused without the engine.
    for args, option in ((["comm", "--iters", "0"], "--iters"),
                         (["history", "--sweep", "-1"], "--sweep"),
                         (["sweep", "--model-name", "pythia-14m", "--format", "xlsx"], "--output"),
                         (["predict", "--from", "none.json", "--cluster", "h100-sxm-8", "--shard-mode", "zero9"],
                          "--shard-mode")):
        code, out, err = run(alone, args)
        if code != 2 or option not in err or ENGINE_NAME in err:
            failures.append(f"{args} without the engine: exit {code}, want 2 naming {option}: {err!r}")
    code, out, err = run(alone, ["version"])
    err_lines = [l for l in err.splitlines() if l.strip()]
    if code != 9 or len(err_lines) != 1 or ENGINE_NAME not in err_lines[0] or out:
        failures.append(f"version without the engine: exit {code}, stderr {err!r}; want exit 9 and one line naming "
                        f"{ENGINE_NAME}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
