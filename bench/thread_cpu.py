#!/usr/bin/env python3
"""CPU time per iteration of every thread of a `tokbench run`, by process and thread name (Linux).

The CPU contention model of `tokbench predict` (docs/predict.md, "CPU ranks share cores") books
the cores a multi-rank CPU run uses: each rank's compute on its main thread, Gloo's work on its
own threads. This script measures that budget: it runs the command twice, with `--max-iters A`
and `--max-iters B` appended (the same warm-up), samples /proc/PID/task/TID/stat of the command
and every process under it (five times a second) until they exit, and divides the difference of
the two runs' CPU times by B - A, so start-up, warm-up and the ranks' set-up cancel. Pass
`--time-account-iters 0 --unit-timing-iters 0` in the command: those passes run after the window
and would not cancel if their lengths differed (they do not, but they add noise).

Threads are grouped per process by role: `main` (the rank's own thread: the model's compute, the
step's copies, waits), `pt_gloo_runloop` (Gloo's transport loop), and every other thread by its
name (Gloo's ProcessGroup workers carry the process's name). The last sample of a thread is
taken up to 0.2 s before it exits; with B - A iterations of a second or more that is noise of a
few percent at most.

Usage: bench/thread_cpu.py [--iters A,B] [--json OUT.json] -- TOKBENCH run ARGS...
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid):
    """Every process under pid (children's children too), from /proc's children lists."""
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            for child in open(f"/proc/{pid}/task/{tid}/children").read().split():
                found.append(int(child))
                found += descendants(int(child))
    except OSError:
        pass  # exited between the listing and the read
    return found


def thread_times(pid):
    """{tid: (name, CPU seconds)} of one process's threads now."""
    out = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / TICK)  # utime + stime
    except OSError:
        pass
    return out


def run_sampled(cmd):
    """Run cmd; returns (wall seconds, {(rank index, role): CPU seconds}) of its last samples."""
    last = {}
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        for pid in [proc.pid] + descendants(proc.pid):
            for tid, (name, cpu) in thread_times(pid).items():
                last[(pid, tid)] = (name, cpu)
        time.sleep(0.2)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.read()[-2000:]}")
    # Ranks are the processes that did work, in pid order (a launcher that only waits is left out
    # unless it is the only process: a one-rank run).
    by_process = collections.defaultdict(dict)
    for (pid, tid), (name, cpu) in last.items():
        role = "main" if tid == pid else name
        by_process[pid][role] = by_process[pid].get(role, 0.0) + cpu
    busy = [pid for pid in sorted(by_process) if sum(by_process[pid].values()) > 0.5]
    if len(busy) > 1 and proc.pid in busy and by_process[proc.pid].get("main", 0) < 0.5 * min(
            by_process[p].get("main", 0) for p in busy if p != proc.pid):
        busy.remove(proc.pid)
    return wall, {(i, role): cpu for i, pid in enumerate(busy) for role, cpu in by_process[pid].items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", default="6,14", help="A,B: the two runs' --max-iters (default 6,14)")
    ap.add_argument("--json", default=None)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    try:
        low, high = (int(x) for x in a.iters.split(","))
    except ValueError:
        low = high = 0
    if not (0 < low < high):
        print(f"--iters '{a.iters}': not two increasing counts; valid: A,B with 0 < A < B, e.g. 6,14",
              file=sys.stderr)
        sys.exit(2)
    if len(cmd) < 2 or cmd[1] != "run":
        print("the command: not a `tokbench run`; valid: -- TOKBENCH run ARGS...", file=sys.stderr)
        sys.exit(2)
    if "--max-iters" in cmd or "--max_iters" in cmd:
        print("the command sets --max-iters; valid: leave it out (this script sets it, from --iters)", file=sys.stderr)
        sys.exit(2)
    wall_low, cpu_low = run_sampled(cmd + ["--max-iters", str(low)])
    wall_high, cpu_high = run_sampled(cmd + ["--max-iters", str(high)])
    n = high - low
    per_iter = {key: (cpu_high[key] - cpu_low.get(key, 0.0)) / n for key in cpu_high}
    wall = (wall_high - wall_low) / n
    ranks = sorted({rank for rank, _ in per_iter})
    roles = sorted({role for _, role in per_iter}, key=lambda r: (r != "main", r))
    print(f"wall {wall:.3f} s per iteration (({wall_high:.1f} - {wall_low:.1f}) s over {n} iterations); "
          f"CPU cores on this machine: {os.cpu_count()}")
    print("| rank | " + " | ".join(roles) + " | all threads | of the wall |")
    print("|---" * (len(roles) + 3) + "|")
    for rank in ranks:
        row = [per_iter.get((rank, role), 0.0) for role in roles]
        total = sum(row)
        print(f"| {rank} | " + " | ".join(f"{x:.3f}" for x in row) + f" | {total:.3f} | {total / wall:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"command": cmd, "iters": [low, high], "wall_s_per_iter": wall,
                       "cpu_s_per_iter": {f"{rank}/{role}": v for (rank, role), v in per_iter.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
