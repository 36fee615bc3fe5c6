#!/usr/bin/env python3
"""Golden fixture for tokbench's Throughput: replays random update sequences through the real
lightning.fabric.utilities.throughput.Throughput and records every output and error text.

Run: .venv/bin/python scripts/reference/throughput_differential.py \
         [--out tests/fixtures/throughput/lightning_differential.json] [--seed 20260801]
The C++ test (tests/throughput/differential_test.cpp) replays the inputs and requires the same
key order, bit-identical doubles (compared as IEEE-754 bit patterns) and identical error texts.

Choices that keep the comparison exact:
- times and flops are Python floats, counters are ints (C++ takes double time, int64 counters);
  some cases pass small int flops, which Python sums exactly and double sums exactly too.
- CPython <= 3.11 sums floats left to right; 3.12+ uses compensated summation, which can differ
  in the last bits. The interpreter version is recorded in the fixture.
- Sparse-model constructor arguments exist only on Lightning master (not in releases up to
  2.6.6), so constructor cases here use the released signature; master-only behaviour is covered
  by hand-written tests from the reference spec.
"""
import argparse
import json
import random
import struct
import sys
import warnings

import lightning
from lightning.fabric.utilities.throughput import Throughput


def bits(x: float) -> str:
    return struct.pack(">d", float(x)).hex()


def encode_value(v):
    # ints stay JSON ints (Python ints: batches, samples, lengths); floats travel as bit patterns.
    if isinstance(v, bool):
        raise TypeError(v)
    if isinstance(v, int):
        return v
    return bits(v)


def error_of(exc: BaseException):
    return {"type": type(exc).__name__, "message": str(exc)}


def gen_ctor(rng: random.Random):
    ctor = {
        "available_flops": rng.choice([None, None, 0.0, rng.uniform(1e12, 2e15), float(rng.randint(1, 100))]),
        "world_size": rng.choice([1, 1, 2, rng.randint(1, 64)]),
        "window_size": rng.choice([2, 3, rng.randint(2, 12), rng.randint(2, 30), rng.randint(2, 100)]),
        "separator": rng.choice(["/", "/", "|", ".", "::"]),
    }
    r = rng.random()
    if r < 0.02:
        ctor["world_size"] = rng.choice([0, -1])
    elif r < 0.04:
        ctor["window_size"] = rng.choice([1, 0, -3])
    return ctor


def gen_ops(rng: random.Random, window: int):
    """One update sequence; a few deliberately invalid steps, and compute() now and then."""
    ops = []
    n = rng.randint(1, max(3, min(window + rng.randint(0, 25), 130)))
    t = rng.choice([0.0, rng.uniform(0, 5), rng.uniform(1e3, 1e7)])
    b = s = l = 0
    use_lengths = rng.random() < 0.6
    flops_mode = rng.choice(["none", "float", "float", "int", "some"])
    tiny = rng.random() < 0.2  # tiny time steps stress the divisions
    if rng.random() < 0.1:
        ops.append({"op": "compute"})  # before any update: Python IndexError
    # At most one deliberate fault per sequence, so its after-effects (Lightning does not roll
    # back partial appends) are visible without drowning the clean cases.
    fault = rng.choice(["time", "samples", "lengths", "lengths_count", "batches"]) if rng.random() < 0.35 else None
    fault_at = rng.randint(0, n - 1)
    for i in range(n):
        t += rng.uniform(1e-9, 1e-6) if tiny else rng.uniform(1e-3, 3.0)
        nb = rng.randint(1, 4)
        bs = rng.randint(1, 64)
        b += nb
        s += nb * bs
        l += nb * bs * rng.randint(1, 4096)
        up = {"op": "update", "time": t, "batches": b, "samples": s}
        if use_lengths:
            up["lengths"] = l
        if flops_mode == "float":
            up["flops"] = rng.uniform(1e9, 5e17)
        elif flops_mode == "int":
            up["flops"] = rng.randint(1, 2**36)
        elif flops_mode == "some" and rng.random() < 0.7:
            up["flops"] = rng.uniform(1e3, 1e16)
        if i == fault_at:
            last_up = [o for o in ops if o["op"] == "update"]
            if fault == "time" and last_up:  # repeats the last time or goes back
                up["time"] = last_up[-1]["time"] - (0.0 if rng.random() < 0.5 else rng.uniform(0, 1))
            elif fault == "samples":
                up["samples"] = up["batches"] - rng.randint(1, 3)
            elif fault == "lengths" and "lengths" in up:
                up["lengths"] = up["samples"] - rng.randint(1, 3)
            elif fault == "lengths_count":  # lengths passed on some updates but not others
                if "lengths" in up:
                    del up["lengths"]
                else:
                    up["lengths"] = l
            elif fault == "batches":
                up["batches"] = max(0, b - nb - rng.randint(0, 2))  # non-increasing batches
        ops.append(up)
        if rng.random() < 0.12:
            ops.append({"op": "compute"})
        if rng.random() < 0.005:
            ops.append({"op": "reset"})
    ops.append({"op": "compute"})
    return ops


def run_case(ctor, ops):
    case = {"ctor": ctor, "ops": []}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tp = Throughput(**ctor)
    except Exception as exc:  # constructor checks
        case["ctor_error"] = error_of(exc)
        return case
    for op in ops:
        rec = dict(op)
        try:
            if op["op"] == "update":
                kwargs = {k: op[k] for k in ("time", "batches", "samples", "lengths", "flops") if k in op}
                tp.update(**kwargs)
            elif op["op"] == "compute":
                rec["result"] = [[k, encode_value(v)] for k, v in tp.compute().items()]
            else:
                tp.reset()
        except Exception as exc:
            rec["error"] = error_of(exc)
        case["ops"].append(rec)
    return case


def repr_cases(rng: random.Random):
    fixed = [0.0, -0.0, 1.0, 2.5, 0.1, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 0.00012345,
             123456789.123, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"),
             -2.0, 1e22, 1.5e-7, 100.0, 1234567890123456.7, 12345678901234567.0]
    vals = fixed + [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 20) for _ in range(150)]
    vals += [float(rng.randint(0, 10**17)) for _ in range(20)]
    return [[bits(v), repr(v)] for v in vals]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/fixtures/throughput/lightning_differential.json")
    ap.add_argument("--seed", type=int, default=20260801)
    ap.add_argument("--cases", type=int, default=300)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for _ in range(args.cases):
        ctor = gen_ctor(rng)
        window = ctor["window_size"] if ctor["window_size"] > 1 else 2
        cases.append(run_case(ctor, gen_ops(rng, window)))
    fixture = {
        "generator": "scripts/reference/throughput_differential.py",
        "lightning_version": lightning.__version__,
        "python_version": sys.version.split()[0],
        "seed": args.seed,
        "notes": "floats in results are IEEE-754 bit patterns (hex, big-endian); ints are Python ints",
        "repr_cases": repr_cases(rng),
        "cases": cases,
    }
    with open(args.out, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    n_ops = sum(len(c["ops"]) for c in cases)
    n_err = sum(1 for c in cases for o in c["ops"] if "error" in o) + sum("ctor_error" in c for c in cases)
    print(f"lightning {lightning.__version__}: {len(cases)} cases, {n_ops} ops, {n_err} errors -> {args.out}")


if __name__ == "__main__":
    main()
