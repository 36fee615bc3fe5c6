#!/usr/bin/env python3
"""A drop-in for lightning-thunder's thunder/benchmarks/benchmark_litgpt.py: `tokbench run` with
this script's arguments.

The reference's matrix runner starts its benchmark as `python FILE --key=value ...` for one
process and `torchrun --nproc_per_node=N --nnodes=1 FILE ...` for distributed rows, with FILE
taken from $BENCHMARK_FILE. Pointing BENCHMARK_FILE at this script runs those same command lines
through tokbench: torchrun's rank environment passes through the exec, tokbench takes the
reference's option spellings, and its JSON carries the reference's keys (docs/reference-benchmark.md).

The binary: $TOKBENCH_BIN, else build/bin/tokbench of the checkout this script belongs to, else
`tokbench` on PATH. Exit 2 with one line when none is found.
"""
import os
import shutil
import sys


def tokbench_binary():
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.environ.get("TOKBENCH_BIN", ""), os.path.join(checkout, "build", "bin", "tokbench"),
                      shutil.which("tokbench") or ""):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def main():
    binary = tokbench_binary()
    if binary is None:
        sys.stderr.write("benchmark_litgpt.py (tokbench): no tokbench binary found; valid: set TOKBENCH_BIN, "
                         "build this checkout (make build), or put tokbench on PATH\n")
        sys.exit(2)
    sys.stdout.flush()
    os.execv(binary, [binary, "run", *sys.argv[1:]])


if __name__ == "__main__":
    main()
