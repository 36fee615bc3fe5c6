#!/usr/bin/env python3
"""Each single-option check of `tokbench run` (config::check_fields: a word option's choices, a
number's bounds, a section's check of its options together) refuses with exit 2 and exactly the
line recorded in single_fault_lines.json.
The lines were recorded from the binary before these checks moved out of run/resolve.cpp into
the option tables, so a check that moves or is rewritten keeps its user-facing text byte for byte.
Usage: cli_single_fault_lines.py /path/to/tokbench            (check)
       cli_single_fault_lines.py --record /path/to/tokbench   (print the JSON from a binary)"""
import json
import os
import subprocess
import sys
import tempfile

SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "32", "--max-iters", "4",
         "--warmup-iters", "1", "--device", "cpu"]

# One fault each, one per check that check_fields does.
CASES = [
    ["--dist-backend", "mpi"],
    ["--low-precision-mode", "fp8"],
    ["--distributed-mode", "zero"],
    ["--shard-mode", "zero9"],
    ["--bucketing-mode", "module"],
    ["--zero-grad", "always"],
    ["--cuda-graphs", "always"],
    ["--cpu-allocator", "jemalloc"],
    ["--data-dtype", "int8"],
    ["--flops-convention", "exact"],
    ["--n-layers", "0"],
    ["--n-layers", "100001"],
    ["--seq-len", "-5"],
    ["--micro-batch-size", "0"],
    ["--global-batch-size", "-2"],
    ["--max-iters", "0"],
    ["--max-iters", "1000001"],
    ["--warmup-iters", "-1"],
    ["--nproc-per-node", "0"],
    ["--nproc-per-node", "4097"],
    ["--nnodes", "0"],
    ["--master-port", "65536"],
    ["--sharding-size", "0"],
    ["--fsdp-bucket-params", "0.5"],
    ["--fsdp-bucket-params", "1e17"],
    ["--ddp-bucket-size", "0"],
    ["--dist-timeout", "0.5"],
    ["--lr", "0"],
    ["--weight-decay", "-0.1"],
    ["--beta1", "1"],
    ["--beta2", "-0.5"],
    ["--num-threads", "1025"],
    ["--log-every", "-1"],
    ["--peak-tflops", "0"],
    ["--peak-tflops", "1e7"],
    ["--cpu-memory-cap-mb", "0"],
    ["--cpu-memory-cap-mb", "9223372036855"],
    ["--unit-timing-iters", "101"],
    # Each section's checks of its options together (check_batch, check_device, check_parallelism,
    # check_compatibility, check_diagnostics), recorded from the binary before they moved out of
    # run/resolve.cpp.
    ["--warmup-iters", "4"],
    ["--use-torchao-fp8-allgather"],
    ["--low-precision-mode", "fp8-default-te", "--use-torchao-fp8-linear"],
    ["--shard-mode", "hybrid_zero2"],
    ["--sharding-size", "2"],
    ["--use-hf"],
    ["--nsys-enabled"],
    ["--profile-iters", "2"],
    ["--profile", "trace.json", "--profile-iters", "0"],
    ["--time-account-iters", "101"],
]


def run(tokbench, case):
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items()
               if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
        p = subprocess.run([tokbench, "run", *SMALL, *case], cwd=folder, env=env, capture_output=True, text=True,
                           timeout=120)
        return p.returncode, p.stderr


def main():
    record = sys.argv[1] == "--record"
    tokbench = os.path.abspath(sys.argv[-1])
    if record:
        lines = {" ".join(case): run(tokbench, case)[1] for case in CASES}
        print(json.dumps(lines, indent=1))
        return 0
    expected = json.load(open(os.path.join(os.path.dirname(__file__), "single_fault_lines.json")))
    failures = 0
    for case in CASES:
        key = " ".join(case)
        code, stderr = run(tokbench, case)
        if code != 2 or stderr != expected[key] or stderr.count("\n") != 1:
            failures += 1
            print(f"FAIL {key}: exit {code}, stderr {stderr!r}; expected exit 2, {expected[key]!r}")
    print(f"{len(CASES) - failures}/{len(CASES)} single-fault lines as recorded")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
