#!/usr/bin/env python3
"""The reference's matrix runner over tokbench, unchanged in what it passes and how it tables.

lightning-thunder's thunder/benchmarks/test_benchmark_litgpt.py (docs/reference-benchmark.md,
"The matrix runner") starts its benchmark once per combination of its matrix:
  one process   [python, FILE, --return_metrics_as_json=True, --json_path=F, --key=value ...]
  distributed   [torchrun, --nproc_per_node=N, --nnodes=1, FILE, the same flags]
deletes F before each run and reads it after, then pivots the rows with pandas:
  df["Sharding Size"] = df["Sharding Size"].fillna("none")
  df.pivot_table(index=[model_name, Num GPUS, Seq Len, Micro BS, Global BS, GA, Distributed Mode,
                        Sharding Size], columns="compiler", values=V, aggfunc="first")
for V in average_iter_time, tokens_per_sec, tokens_per_sec_per_gpu (tokens_per_sec / "Num GPUS")
and memory_used_GB. This script re-creates that behaviour with FILE = python/benchmark_litgpt.py
(tokbench's drop-in, the only substitution) over a one-rank row and an FSDP ZeRO-2 row on two
ranks under torchrun, for the compilers eager, inductor and thunder (thunder where
lightning-thunder is installed), and checks that every cell of every table is filled: one column per
--compile name, as the reference's tables have, and that `executor` says what ran each.
Usage: cli_reference_runner.py /path/to/tokbench"""
import json
import math
import os
import socket
import subprocess
import sys
import tempfile

TOKBENCH = os.path.abspath(sys.argv[1])
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARK_FILE = os.path.join(CHECKOUT, "python", "benchmark_litgpt.py")
PYTHON = os.path.join(CHECKOUT, ".venv", "bin", "python")
INDEX = ["model_name", "Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA", "Distributed Mode", "Sharding Size"]
VALUES = ["average_iter_time", "tokens_per_sec", "tokens_per_sec_per_gpu", "memory_used_GB"]
EXECUTOR = {"eager": "eager", "inductor": "python-inductor", "thunder": "python-thunder"}


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "")[-4000:] + "\n--- stderr ---\n" + (proc.stderr or "")[-4000:])
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def runner_command(kwargs, json_path, nproc):
    """The runner's argv: --key=value for each option, in insertion order, after its two JSON flags."""
    args = [f"--{k}={v}" for k, v in kwargs.items()]
    flags = ["--return_metrics_as_json=True", f"--json_path={json_path}"]
    if kwargs["distributed_mode"] != "none":
        # The runner's torchrun line; the rendezvous address is pinned so parallel tests do not meet.
        return [PYTHON, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}", "--nnodes=1",
                "--master_addr=127.0.0.1", f"--master_port={free_port()}", BENCHMARK_FILE, *flags, *args]
    return [PYTHON, BENCHMARK_FILE, *flags, *args]


def main():
    if not os.path.exists(PYTHON):
        fail(f"no {PYTHON}: scripts/bootstrap installs torch, litgpt and pandas there")
    try:
        import pandas  # noqa: F401  (the runner's own table code, below, needs it)
    except ImportError:
        # This script's own interpreter is ctest's Python; the runner's tables are the .venv's pandas.
        if os.environ.get("TOKBENCH_RUNNER_REEXEC") != "1":
            os.environ["TOKBENCH_RUNNER_REEXEC"] = "1"
            os.execv(PYTHON, [PYTHON, os.path.abspath(__file__), *sys.argv[1:]])
        fail("pandas is not importable from the .venv (scripts/reference/requirements.txt pins it)")
    import pandas as pd

    compilers = ["eager", "inductor"]
    # Whether the .venv has lightning-thunder, asked without importing it (an import is ~9 s of
    # CPU for torch and thunder); one that is there but does not import fails its runs below.
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('thunder') is None)"
    if subprocess.run([PYTHON, "-c", probe], capture_output=True).returncode == 0:
        compilers.append("thunder")
    else:
        print("note: lightning-thunder is not installed here; the thunder column is left out")
    rows = [("none", 1), ("fsdp", 2)]
    env = dict(os.environ, TOKBENCH_BIN=TOKBENCH)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "TOKBENCH_LAUNCHED", "TOKBENCH_RUNNER_REEXEC"]:
        env.pop(name, None)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        json_path = os.path.join(scratch, "benchmark_litgpt_data.json")
        for mode, nproc in rows:
            for compiler in compilers:
                kwargs = {"distributed_mode": mode, "shard_mode": "zero2", "model_name": "pythia-14m",
                          "micro_batch_size": 1, "compile": compiler, "n_layers": 2, "block_size": 64,
                          "max_iters": 4, "warmup_iters": 2, "nsys_enabled": False, "dynamic": False}
                if os.path.exists(json_path):
                    os.remove(json_path)
                command = runner_command(kwargs, json_path, nproc)
                print("Running", " ".join(command), flush=True)
                proc = subprocess.run(command, capture_output=True, text=True, timeout=1500, env=env, cwd=scratch)
                if proc.returncode != 0:
                    fail(f"{mode}/{compiler} exited {proc.returncode}", proc)
                if not os.path.exists(json_path):
                    fail(f"{mode}/{compiler} wrote no JSON", proc)
                with open(json_path) as f:
                    metrics = json.load(f)
                if metrics.get("compiler") != compiler or metrics.get("executor") != EXECUTOR[compiler]:
                    fail(f"{mode}/{compiler}: compiler {metrics.get('compiler')!r}, executor "
                         f"{metrics.get('executor')!r}; want {compiler!r}, {EXECUTOR[compiler]!r}")
                if "tokens_per_sec_per_gpu" not in metrics:  # the runner's add_to_dataframe
                    metrics["tokens_per_sec_per_gpu"] = metrics["tokens_per_sec"] / metrics["Num GPUS"]
                results.append(metrics)

    df = pd.DataFrame(results)
    df["Sharding Size"] = df["Sharding Size"].fillna("none")
    for value in VALUES:
        table = df.pivot_table(index=INDEX, columns="compiler", values=value, aggfunc="first").reset_index()
        print(f"\n{value}\n{table.to_string()}")
        if list(table.columns[len(INDEX):]) != sorted(compilers):
            fail(f"{value}: columns {list(table.columns)}, want {INDEX} + {sorted(compilers)}")
        if len(table) != len(rows):
            fail(f"{value}: {len(table)} rows, want one per matrix row ({len(rows)})")
        for compiler in compilers:
            cells = table[compiler].tolist()
            if not all(isinstance(c, (int, float)) and math.isfinite(c) and c > 0 for c in cells):
                fail(f"{value}: the {compiler} column is not filled: {cells}")
        modes = table["Distributed Mode"].tolist()
        if sorted(modes) != ["fsdp_zero2_none_bucketing", "none"]:
            fail(f"{value}: rows {modes}")
    print("\nok: the runner's tables have a filled column per compiler on both rows")


if __name__ == "__main__":
    main()
