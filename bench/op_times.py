#!/usr/bin/env python3
"""Where two training steps spend their time, operator by operator, from two Chrome traces.

Takes two traces written by `tokbench run --profile` (one rank's, or one file per rank of a
multi-rank run: PATH_rankN.json) and sums each operator's self time: its duration less that of
the operators and ranges nested inside it on the same thread, so a wrapper (aten::linear,
AccumulateGrad) does not count its children's time again. Sums are per profiled iteration (the
trace's `optimizer` ranges count the iterations) and the table lists the operators whose time
differs most between the two traces: a one-rank run against a rank of a parallel run shows what
the parallel step adds (its buffers zeroed, its gradients accumulated, its collectives waited
for); two executors' traces show where one is slower.

Self time is wall time on the operator's thread: an operator preempted by another process (more
ranks than cores) counts the time it waited. It is a trace's reading, not the measured window's:
the profiled iterations run after the window, under the profiler.

Usage: bench/op_times.py TRACE_A TRACE_B [--by-shape] [--top 25] [--json OUT.json]
  --by-shape: one row per operator and input shapes (what the trace records), not per operator
"""
import argparse
import collections
import json
import sys

# Event categories that are work on a thread: operators and tokbench's named ranges.
WORK = ("cpu_op", "user_annotation")


def load_events(path):
    """The trace's complete events ('X') of work categories."""
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"op_times.py: {path}: {e}; valid: a Chrome trace written by `tokbench run --profile`")
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") in WORK]
    if not events:
        sys.exit(f"op_times.py: {path} holds no operator events; valid: a Chrome trace written by `tokbench run --profile`")
    return events


def key_of(event, by_shape):
    if not by_shape:
        return event["name"]
    dims = (event.get("args") or {}).get("Input Dims")
    return f"{event['name']} {json.dumps(dims, separators=(',', ':'))}" if dims else event["name"]


def self_times_ms(events, by_shape):
    """Each key's summed self time (ms), over the whole trace."""
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[(e.get("pid"), e.get("tid"))].append(e)
    out = collections.Counter()
    for thread_events in by_thread.values():
        # Parents before their children: by start, the longer first.
        thread_events.sort(key=lambda e: (e["ts"], -e["dur"]))
        children_us = [0.0] * len(thread_events)
        open_stack = []  # indices of events still open at the current start
        for i, e in enumerate(thread_events):
            while open_stack and thread_events[open_stack[-1]]["ts"] + thread_events[open_stack[-1]]["dur"] <= e["ts"]:
                open_stack.pop()
            if open_stack:
                children_us[open_stack[-1]] += e["dur"]
            open_stack.append(i)
        for e, nested in zip(thread_events, children_us):
            out[key_of(e, by_shape)] += max(0.0, e["dur"] - nested) / 1e3
    return out


def profiled_iterations(events, path):
    n = sum(1 for e in events if e["name"] == "optimizer")
    if n < 1:
        sys.exit(f"op_times.py: {path} has no 'optimizer' range to count its iterations by; valid: a trace of "
                 "`tokbench run --profile` (tokbench's eager or fused step, or a Python executor's)")
    return n


def compare(path_a, path_b, by_shape):
    rows = []
    sides = []
    for path in (path_a, path_b):
        events = load_events(path)
        iters = profiled_iterations(events, path)
        sides.append(({k: v / iters for k, v in self_times_ms(events, by_shape).items()}, iters))
    (a, iters_a), (b, iters_b) = sides
    for key in set(a) | set(b):
        rows.append({"operator": key, "a_ms": a.get(key, 0.0), "b_ms": b.get(key, 0.0),
                     "difference_ms": b.get(key, 0.0) - a.get(key, 0.0)})
    rows.sort(key=lambda r: -abs(r["difference_ms"]))
    return {"a": path_a, "b": path_b, "iterations_a": iters_a, "iterations_b": iters_b,
            "total_a_ms": sum(a.values()), "total_b_ms": sum(b.values()), "rows": rows}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace_a")
    p.add_argument("trace_b")
    p.add_argument("--by-shape", action="store_true")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--json")
    a = p.parse_args()
    if a.top < 1:
        sys.exit(f"op_times.py: --top {a.top} is not valid; valid: 1 or more")
    result = compare(a.trace_a, a.trace_b, a.by_shape)
    print(f"self time per iteration (ms): A = {a.trace_a} ({result['iterations_a']} iterations), "
          f"B = {a.trace_b} ({result['iterations_b']})")
    width = min(90, max(len(r["operator"]) for r in result["rows"][:a.top]))
    print(f"{'operator':{width}s} {'A':>9s} {'B':>9s} {'B - A':>9s}")
    for r in result["rows"][:a.top]:
        print(f"{r['operator'][:width]:{width}s} {r['a_ms']:9.2f} {r['b_ms']:9.2f} {r['difference_ms']:+9.2f}")
    print(f"{'all operators and ranges, every thread':{width}s} {result['total_a_ms']:9.2f} {result['total_b_ms']:9.2f} "
          f"{result['total_b_ms'] - result['total_a_ms']:+9.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
