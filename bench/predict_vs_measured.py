#!/usr/bin/env python3
"""tokbench predict against measured multi-rank runs, side by side on this machine.

For each model: one one-rank run (its per-unit timings are the prediction's input), `tokbench
comm` at each world size, then for each configuration the prediction (`tokbench predict
--cluster measured`) and the real run (`tokbench run --nproc-per-node W`), one after the other
in this one script, so both see the same machine. Prints a Markdown table of predicted and
measured iteration times and the error of each, with the mean absolute and the largest error.

Usage: predict_vs_measured.py TOKBENCH OUT_DIR [--quick] [--models a,b] [--max-error PCT] [--rounds N]
  --quick: pythia-14m-sized work, DDP and ZeRO-3 at W=2 only, 3 rounds (the ctest check)
  --rounds: repeat every measurement N times, interleaved, and compare medians (this VM's
    neighbours move a single 10-iteration run by 10-25%: CI once saw +27% from one round)
  --max-error: exit 1 if any configuration's absolute error exceeds PCT (default: report only)

Every rank runs one intra-op thread (--num-threads 1) and the one-rank input does too, so the
prediction has to account for ranks sharing this machine's cores, as the issue asks, not the
thread count.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_common import cpu_model


def run(cmd, log):
    with open(log, "w") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}; see {log}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokbench")
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default=None)
    ap.add_argument("--seq-len", type=int, default=None)
    ap.add_argument("--max-error", type=float, default=None)
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved repetitions of every measurement; medians are compared (default 3 with --quick, else 1)")
    ap.add_argument("--strategies", default=None,
                    help="only these of ddp, zero2, zero3, hybrid_zero2 (comma-separated; default: all of the mode's)")
    ap.add_argument("--unit-timing-iters", type=int, default=5,
                    help="the one-rank runs' per-unit timing pass, which the predictions read")
    a = ap.parse_args()
    if a.rounds is None:
        a.rounds = 3 if a.quick else 1
    if a.rounds < 1 or a.unit_timing_iters < 1:
        sys.exit("--rounds and --unit-timing-iters must be 1 or more")
    os.makedirs(a.out, exist_ok=True)
    tb = a.tokbench

    if a.quick:
        models = (a.models or "pythia-14m").split(",")
        seq = a.seq_len or 256
        iters, warmup = 10, 3
        configs = [(2, "ddp", None, 1), (2, "fsdp", "zero3", 1)]
        comm_max = "16M"
    else:
        models = (a.models or "pythia-14m,pythia-70m").split(",")
        seq = a.seq_len or 256
        iters, warmup = 12, 4
        configs = [(w, mode, shard, ga)
                   for w in (2, 4)
                   for (mode, shard) in (("ddp", None), ("fsdp", "zero2"), ("fsdp", "zero3"), ("fsdp", "hybrid_zero2"))
                   for ga in (1, 2)
                   if not (shard == "hybrid_zero2" and w != 4)]  # hybrid 2x2: shard groups of 2, 2 replicas
        comm_max = "256M"

    if a.strategies:
        wanted = set(a.strategies.split(","))
        unknown = wanted - {"ddp", "zero2", "zero3", "hybrid_zero2"}
        if unknown:
            sys.exit(f"--strategies: {', '.join(sorted(unknown))} not valid; valid: ddp, zero2, zero3, hybrid_zero2")
        configs = [c for c in configs if (c[2] or c[1]) in wanted]

    common = ["--seq-len", str(seq), "--num-threads", "1", "--max-iters", str(iters),
              "--warmup-iters", str(warmup)]
    # Every figure is measured once per round and the rounds interleave, so a stretch of seconds
    # in which a neighbour on the host slows this VM lands in one round of every figure rather
    # than in all of one figure; each configuration compares the median prediction with the
    # median measurement (a prediction is made from its own round's one-rank run and comm).
    predicted, measured = {}, {}
    for rnd in range(a.rounds):
        tag = f"r{rnd}"
        comm_docs = {}
        for w in sorted({c[0] for c in configs} | {2 for c in configs if c[2] and c[2].startswith("hybrid")}):
            path = os.path.join(a.out, f"comm-w{w}-{tag}.json")
            run([tb, "comm", "--nproc-per-node", str(w), "--num-threads", "1", "--max-bytes", comm_max, "--iters", "10",
                 "--warmup-iters", "3", "--format", "json", "--output", path],
                os.path.join(a.out, f"comm-w{w}-{tag}.log"))
            comm_docs[w] = path
        for model in models:
            for ga in sorted({c[3] for c in configs}):
                base = os.path.join(a.out, f"{model}-w1-ga{ga}-{tag}.json")
                run([tb, "run", "--model-name", model, *common, "--global-batch-size", str(ga),
                     "--unit-timing-iters", str(a.unit_timing_iters), "--json-path", base],
                    base.replace(".json", ".log"))
                for (w, mode, shard, cga) in configs:
                    if cga != ga:
                        continue
                    key = (model, w, mode, shard, ga)
                    name = f"{model}-w{w}-{mode}{'-' + shard if shard else ''}-ga{ga}"
                    strategy = ["--distributed-mode", mode]
                    comm = comm_docs[w]
                    if shard:
                        strategy += ["--shard-mode", shard, "--bucketing-mode", "block"]
                    if shard and shard.startswith("hybrid"):
                        # Groups of 2 inside the 4 ranks: the 2-rank document times them.
                        strategy += ["--sharding-size", "2"]
                        comm = f"{comm_docs[w]},{comm_docs[2]}"
                    shape = ["--nproc-per-node", str(w), "--global-batch-size", str(w * ga)]
                    pred = os.path.join(a.out, f"{name}-predicted-{tag}.json")
                    run([tb, "predict", "--from", base, "--cluster", "measured", "--comm", comm,
                         *shape, *strategy, "--num-threads", "1", "--format", "json", "--output", pred],
                        pred.replace(".json", ".log"))
                    meas = os.path.join(a.out, f"{name}-measured-{tag}.json")
                    run([tb, "run", "--model-name", model, *common, *shape, *strategy, "--json-path", meas],
                        meas.replace(".json", ".log"))
                    p = json.load(open(pred))["runs"][0]
                    m = json.load(open(meas))
                    predicted.setdefault(key, []).append(p)
                    measured.setdefault(key, []).append(m)
                    print(f"{name} round {rnd + 1}/{a.rounds}: predicted {p['average_iter_time']:.1f} ms, "
                          f"measured {m['average_iter_time']:.1f} ms", file=sys.stderr, flush=True)

    rows = []
    for key, preds in predicted.items():
        model, w, mode, shard, ga = key
        meas = measured[key]
        pt = statistics.median(p["average_iter_time"] for p in preds)
        mt = statistics.median(m["average_iter_time"] for m in meas)
        pe = [p.get("prediction", {}).get("exposed_comm_ms_per_iter") for p in preds]
        me = [m["ranks"][0].get("exposed_comm_ms_per_iter") for m in meas]
        rows.append({
            "model": model, "W": w, "mode": mode + (f" {shard}" if shard else ""), "GA": ga,
            "rounds": len(preds), "predicted_ms": pt, "measured_ms": mt, "error": (pt - mt) / mt,
            "predicted_round_ms": [p["average_iter_time"] for p in preds],
            "measured_round_ms": [m["average_iter_time"] for m in meas],
            "predicted_exposed_ms": statistics.median(pe) if None not in pe else None,
            "measured_exposed_ms": statistics.median(me) if None not in me else None,
            "predicted_memory_GB": preds[0].get("memory_allocated_peak_GB"),
            "measured_memory_GB": max(r["memory_allocated_peak_GB"] for r in meas[0]["ranks"]),
        })
        print(f"{model} W={w} {rows[-1]['mode']} GA={ga}: predicted {pt:.1f} ms, measured {mt:.1f} ms "
              f"(medians of {len(preds)}), error {100 * rows[-1]['error']:+.1f}%", file=sys.stderr, flush=True)

    errors = [abs(r["error"]) for r in rows]
    mean_abs = sum(errors) / len(errors)
    worst = max(errors)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; "
          f"{time.strftime('%Y-%m-%d')}; T={seq}, one intra-op thread per rank\n")
    print(f"Each figure the median of {a.rounds} interleaved round(s); the one-rank runs' unit-timing pass "
          f"{a.unit_timing_iters} iterations.\n")
    print("| model | W | strategy | GA | predicted (ms) | measured (ms) | error | exposed comm predicted / measured (ms) "
          "| peak memory predicted / measured (GB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        pe, me = r["predicted_exposed_ms"], r["measured_exposed_ms"]
        exposed = f"{pe:.1f} / {me:.1f}" if pe is not None and me is not None else "n/a"
        pm, mm = r["predicted_memory_GB"], r["measured_memory_GB"]
        memory = f"{pm:.3f} / {mm:.3f}" if pm is not None and mm is not None else "n/a"
        print(f"| {r['model']} | {r['W']} | {r['mode']} | {r['GA']} | {r['predicted_ms']:.1f} | "
              f"{r['measured_ms']:.1f} | {100 * r['error']:+.1f}% | {exposed} | {memory} |")
    print(f"\nMean absolute error {100 * mean_abs:.1f}%, largest {100 * worst:.1f}% "
          f"over {len(rows)} configurations.")
    json.dump(rows, open(os.path.join(a.out, "errors.json"), "w"), indent=1)
    if a.max_error is not None and worst * 100 > a.max_error:
        print(f"FAIL: an error above {a.max_error}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
