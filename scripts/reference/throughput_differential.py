#!/usr/bin/env python3
"""Golden fixture for tokbench's Throughput: replays random update sequences through the real
lightning.fabric.utilities.throughput.Throughput and records every output and error text.

Run: .venv/bin/python scripts/reference/throughput_differential.py \
         [--out tests/fixtures/throughput/lightning_differential.json] [--seed 20260801]
(with the packages pinned in scripts/reference/requirements.txt).
The C++ test (tests/throughput/differential_test.cpp) replays the inputs and requires the same
key order, bit-identical doubles (compared as IEEE-754 bit patterns) and identical error texts.

Two families of cases, each from its own random stream (adding the second left the first
unchanged):
- general: random constructors (world size <= 64), faults, float flops and small int flops.
- exact: int flops beyond 2^53 (Python multiplies by the world size and sums them exactly),
  windows mixing int and float flops (the sum turns float at the first float), world sizes up
  to 1024 and a few int64-sized ones, plus hand-written cases at the int64 extremes.

Choices that keep the comparison exact:
- times are Python floats, counters are ints (C++ takes double time, int64 counters); flops are
  floats or ints, written to JSON as such, so the replay can pick the matching C++ overload.
  Int flops stay within int64 (the C++ integer overload's type).
- CPython <= 3.11 sums floats left to right; 3.12+ uses compensated summation, which can differ
  in the last bits. The interpreter version is recorded in the fixture.
- Sparse-model constructor arguments exist only on Lightning master (not in releases up to
  2.6.6), so constructor cases here use the released signature; master-only behaviour is covered
  by hand-written tests of Lightning's own cases (docs/throughput.md, "Tests and reference").
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


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def gen_exact_ctor(rng: random.Random):
    ctor = {
        "available_flops": rng.choice([None, 0.0, rng.uniform(1e12, 2e15), float(rng.randint(1, 100))]),
        "world_size": rng.choice([1, 2, 8, 64, 512, 1000, 1024, rng.randint(2, 1024), rng.randint(2, 1024)]),
        "window_size": rng.choice([2, 3, rng.randint(2, 12), rng.randint(2, 30), rng.randint(2, 100), 100]),
        "separator": rng.choice(["/", "/", "|"]),
    }
    if rng.random() < 0.05:  # int64-sized world sizes push int products and sums past 2^127
        ctor["world_size"] = rng.choice([2**40 + 1, 2**62, INT64_MAX])
    return ctor


def big_int(rng: random.Random):
    """An int flops count, mostly beyond 2^53 (where a double sum starts rounding)."""
    return rng.choice([
        rng.randint(2**53 - 4, 2**53 + 4),
        rng.randint(10**13, 10**15),  # e.g. 1e14 FLOPs a step
        rng.randint(10**15, 10**18),
        rng.randint(2**53, 2**62),
        rng.randint(2**62, INT64_MAX),
        rng.randint(1, 2**20),  # small ints between big ones
    ])


def gen_exact_ops(rng: random.Random, window: int):
    """An update sequence with int flops, often beyond 2^53, or int and float flops mixed."""
    ops = []
    n = rng.randint(window, window + rng.randint(1, 30))  # fill the window, then slide it
    t = rng.choice([0.0, rng.uniform(0, 5), rng.uniform(1e3, 1e7)])
    b = s = l = 0
    use_lengths = rng.random() < 0.5
    mode = rng.choice(["int", "int", "int_const", "int_const", "int_some", "mixed", "mixed",
                       "int_then_float", "float_then_int", "signed"])
    const = rng.choice([10**14, 3 * 10**14 + 7, big_int(rng), 2**53 + 1])
    switch_at = rng.randint(0, n - 1)
    fault = rng.choice(["time", "samples"]) if rng.random() < 0.1 else None
    fault_at = rng.randint(0, n - 1)
    for i in range(n):
        last_t = t
        t += rng.uniform(1e-3, 3.0)
        nb = rng.randint(1, 4)
        bs = rng.randint(1, 64)
        b += nb
        s += nb * bs
        l += nb * bs * rng.randint(1, 4096)
        up = {"op": "update", "time": t, "batches": b, "samples": s}
        if use_lengths:
            up["lengths"] = l
        if mode == "int":
            up["flops"] = big_int(rng)
        elif mode == "int_const":
            up["flops"] = const
        elif mode == "int_some" and rng.random() < 0.7:
            up["flops"] = big_int(rng)
        elif mode == "mixed":  # floats: arbitrary, or whole numbers past 2^53
            up["flops"] = rng.choice([big_int(rng), big_int(rng), float(big_int(rng)), rng.uniform(1e9, 5e17)])
        elif mode == "int_then_float":
            up["flops"] = big_int(rng) if i < switch_at else rng.uniform(1e9, 5e17)
        elif mode == "float_then_int":
            up["flops"] = float(big_int(rng)) if i < switch_at else big_int(rng)
        elif mode == "signed":  # Lightning does not check the sign; the whole int64 range
            up["flops"] = rng.choice([INT64_MIN, INT64_MAX, rng.randint(INT64_MIN, INT64_MAX), big_int(rng)])
        if i == fault_at and fault == "time" and i > 0:  # repeats the last time or goes back
            up["time"] = last_t - (0.0 if rng.random() < 0.5 else rng.uniform(0, 1))
        elif i == fault_at and fault == "samples":
            up["samples"] = up["batches"] - 1
        ops.append(up)
        if (i >= window - 1 and rng.random() < 0.6) or rng.random() < 0.05:
            ops.append({"op": "compute"})
        if rng.random() < 0.003:
            ops.append({"op": "reset"})
    if ops[-1]["op"] != "compute":
        ops.append({"op": "compute"})
    return ops


def exact_fixed_cases():
    """Hand-written int cases: the issue's example and the int64 extremes."""
    cases = []
    # 100-step window of 1e14 FLOPs on 8 ranks: the sum passes 2^53 at the 12th update.
    ops, t = [], 0.0
    for i in range(1, 131):
        t += 0.25 + (i % 7) * 0.01
        ops += [{"op": "update", "time": t, "batches": i, "samples": 4 * i, "flops": 10**14},
                {"op": "compute"}]
    cases.append(({"available_flops": 989.5e12, "world_size": 8, "window_size": 100, "separator": "/"}, ops))
    # Products near 2^126 whose sums cross 2^127 upwards and downwards.
    for flops in ([INT64_MAX] * 6, [INT64_MIN] * 6, [INT64_MAX, INT64_MIN, INT64_MAX, INT64_MAX, INT64_MIN, 1],
                  [INT64_MAX, INT64_MAX, 0.5, INT64_MAX, INT64_MIN, INT64_MAX],
                  [2**53, 1, 1, 2**53, 1, 1], [2**53, 1, 0.0, 1, 2**53 + 1, 0.0]):
        for ws in (1, 3, 1024, INT64_MAX):
            ops = []
            for i, f in enumerate(flops, start=1):
                ops += [{"op": "update", "time": float(i), "batches": i, "samples": i, "flops": f},
                        {"op": "compute"}]
            cases.append(({"available_flops": None, "world_size": ws, "window_size": 3, "separator": "/"}, ops))
    # Sums of 66+ bits whose leading 64 bits end on an exact tie: only the bits below those 64
    # (here 2^65 + 4097 rounds up, not to even) decide the rounding of float(int).
    for flops in ([1, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, 4101],
                  [-1, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, -4097]):
        for ws in (1, 1024):
            ops = [{"op": "update", "time": 0.5 * i, "batches": i, "samples": i, "flops": f}
                   for i, f in enumerate(flops, start=1)]
            cases.append(({"available_flops": None, "world_size": ws, "window_size": 6, "separator": "/"},
                          ops + [{"op": "compute"}]))
    return cases


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
    ap.add_argument("--exact-cases", type=int, default=160)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for _ in range(args.cases):
        ctor = gen_ctor(rng)
        window = ctor["window_size"] if ctor["window_size"] > 1 else 2
        cases.append(run_case(ctor, gen_ops(rng, window)))
    exact_rng = random.Random(f"{args.seed}/exact")
    for _ in range(args.exact_cases):
        ctor = gen_exact_ctor(exact_rng)
        cases.append(run_case(ctor, gen_exact_ops(exact_rng, ctor["window_size"])))
    cases += [run_case(ctor, ops) for ctor, ops in exact_fixed_cases()]
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
    ups = [o for c in cases for o in c["ops"] if o["op"] == "update"]
    n_big = sum(1 for o in ups if type(o.get("flops")) is int and abs(o["flops"]) > 2**53)
    n_mixed = sum(1 for c in cases if {type(o.get("flops")) for o in c["ops"]} >= {int, float})
    print(f"lightning {lightning.__version__}: {len(cases)} cases, {n_ops} ops, {n_err} errors, "
          f"{n_big} int flops beyond 2^53, {n_mixed} cases mixing int and float flops -> {args.out}")


if __name__ == "__main__":
    main()
