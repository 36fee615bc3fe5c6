#!/usr/bin/env python3
"""The reference training step in Python, for bench/run_side_by_side.py: a thin wrapper.

The step itself is python/tokbench_python_step.py, which `tokbench run --executor python-eager`
also runs; without --json-lines it prints the one summary JSON this file always printed
(runner, torch_version, num_threads, average_iter_time, tokens_per_sec, loss_first, loss_last,
memory_used_GB).
"""
import os
import runpy
import sys

STEP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python",
                    "tokbench_python_step.py")

if __name__ == "__main__":
    sys.argv[0] = STEP
    runpy.run_path(STEP, run_name="__main__")
