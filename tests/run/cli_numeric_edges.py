#!/usr/bin/env python3
"""Property test: every numeric option of `tokbench run` and `tokbench info`, taken from their
--help (INT, UINT and FLOAT options, so a new option is covered without editing this file),
through edge values: 0, -1, 2^31, 2^63-1, 10^30, "1e3", "nan", "" and text, each on a small
valid base command. Every invocation must
  - exit 0 (accepted; the base's --max-iters 2 keeps the run short) or 2 (refused before any
    work); exit 4 (NaN loss, with its JSON) only for --lr and --weight-decay, whose large
    finite values are legitimate and make training diverge;
  - never exit 1, 137 or by a signal, never print "std::bad_alloc", "stoi", "vector::reserve"
    or "terminate called";
  - when refused, print at most 3 lines on stderr, naming the option;
  - finish within PER_CALL_TIMEOUT seconds (a value that would be accepted and run forever,
    such as --global-batch-size 2^63-1, must be refused instead).
Each child runs under an address-space limit (RLIMIT_AS, 8 GB, set on this script and
inherited), so an allocation of an option's own size fails at once instead of thrashing the
machine.
Usage: cli_numeric_edges.py /path/to/tokbench"""
import concurrent.futures
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

TOKBENCH = os.path.abspath(sys.argv[1])
PER_CALL_TIMEOUT = 120
ADDRESS_SPACE_LIMIT = 8 * 1024**3
EDGE_VALUES = ["0", "-1", str(2**31), str(2**63 - 1), "1" + "0" * 30, "1e3", "nan", "", "text"]
FORBIDDEN = ["std::bad_alloc", "stoi", "vector::reserve", "terminate called"]
NAN_IS_AN_OUTCOME = {"--lr", "--weight-decay"}

# (subcommand, base arguments as [option, value] pairs after any positional arguments)
BASES = {
    "run": ([], [("--model-name", "pythia-14m"), ("--n-layers", "1"), ("--seq-len", "32"), ("--max-iters", "2"),
                 ("--warmup-iters", "1"), ("--num-threads", "1"), ("--device", "cpu")]),
    "info": (["pythia-14m"], [("--n-layers", "1"), ("--seq-len", "32")]),
}
# Options --help must list: guards the parsing below against a change of help format (the
# options tested are those parsed, so new ones are covered; these must be among them).
KNOWN = {
    "run": {"--n-layers", "--seq-len", "--micro-batch-size", "--global-batch-size", "--max-iters", "--warmup-iters",
            "--num-threads", "--sharding-size", "--ddp-bucket-size", "--dist-timeout", "--nproc-per-node",
            "--nnodes", "--node-rank", "--master-port", "--seed", "--lr", "--weight-decay", "--beta1", "--beta2",
            "--peak-tflops", "--log-every", "--cpu-memory-cap-mb", "--cpu-memory-cap-rank"},
    "info": {"--seq-len", "--micro-batch-size", "--n-layers"},
}
HELP_LINE = re.compile(r"^\s+((?:-\w,)?--[\w-]+(?:,!?-{1,2}[\w-]+)*)\s+(INT|UINT|FLOAT)\b")


def child_env():
    env = dict(os.environ)
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                 "TOKBENCH_LAUNCHED"):
        env.pop(name, None)
    env["CUDA_VISIBLE_DEVICES"] = ""  # --device cpu throughout; no driver mapping under RLIMIT_AS
    return env


def numeric_options(subcommand):
    out = subprocess.run([TOKBENCH, subcommand, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"FAIL: {subcommand} --help exited {out.returncode}: {out.stderr}")
    options = []
    for line in out.stdout.splitlines():
        m = HELP_LINE.match(line)
        if m:
            names = [n.lstrip("!") for n in m.group(1).split(",")]
            options.append(next(n for n in names if n.startswith("--")))
    return options


def command(subcommand, option, value):
    positional, pairs = BASES[subcommand]
    pairs = [(o, v) for o, v in pairs if o != option] + [(option, value)]
    return [TOKBENCH, subcommand, *positional, *[x for pair in pairs for x in pair]]


def check(subcommand, option, value, cwd):
    argv = command(subcommand, option, value)
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=PER_CALL_TIMEOUT, env=child_env(),
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        return (subcommand, option, value, None, time.monotonic() - start,
                [f"still running after {PER_CALL_TIMEOUT} s (killed)"], [""])
    seconds = time.monotonic() - start
    problems = []
    rc = proc.returncode
    allowed = {0, 2} | ({4} if subcommand == "run" and option in NAN_IS_AN_OUTCOME else set())
    if rc not in allowed:
        problems.append(f"exit {rc} ({'signal ' + str(-rc) if rc < 0 else 'code'}), want one of {sorted(allowed)}")
    text = proc.stdout + proc.stderr
    problems += [f"printed {word!r}" for word in FORBIDDEN if word in text]
    if rc == 2:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if len(lines) > 3:
            problems.append(f"{len(lines)} stderr lines, want at most 3")
        if option not in proc.stderr and option.replace("-", "_").replace("__", "--", 1) not in proc.stderr:
            problems.append(f"the refusal does not name {option}")
    return (subcommand, option, value, rc, seconds, problems, proc.stderr.strip().splitlines()[-1:] or [""])


def main():
    # The address-space limit is set here, once, and inherited by every child: a preexec_fn
    # would run between fork and exec in a process with threads (the pool below), which
    # Python documents as unsafe.
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > ADDRESS_SPACE_LIMIT:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, hard))
    cases = []
    for subcommand in BASES:
        options = numeric_options(subcommand)
        missing = KNOWN[subcommand] - set(options)
        if missing:
            sys.exit(f"FAIL: `{subcommand} --help` no longer lists {sorted(missing)} as numeric options "
                     f"(parsed: {options})")
        new = set(options) - KNOWN[subcommand]
        if new:
            print(f"# {subcommand}: also covering options added since this test was written: {sorted(new)}")
        cases += [(subcommand, option, value) for option in options for value in EDGE_VALUES]

    failures = []
    by_code = {}
    started = time.monotonic()
    workers = max(1, min(2, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as scratch, concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for subcommand, option, value, rc, seconds, problems, last in pool.map(lambda c: check(*c, scratch), cases):
            by_code[rc] = by_code.get(rc, 0) + 1
            shown = f"{subcommand} {option} {value!r}"
            if problems:
                failures.append(f"{shown}: {'; '.join(problems)}\n  last stderr line: {last[0] if last else ''}")
            print(f"{'FAIL' if problems else 'ok  '} exit {rc} {seconds:5.1f}s  {shown}  {last[0][:160] if last else ''}")
        leftovers = os.listdir(scratch)
        if leftovers:
            failures.append(f"files left in the working directory: {leftovers}")
    elapsed = time.monotonic() - started
    summary = ", ".join(f"exit {k}: {v}" for k, v in sorted(by_code.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))
    print(f"{len(cases)} invocations in {elapsed:.0f} s ({summary})")
    if failures:
        print(f"{len(failures)} FAILED:\n" + "\n".join(failures))
        sys.exit(1)


main()
