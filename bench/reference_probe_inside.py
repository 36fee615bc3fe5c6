#!/usr/bin/env python3
"""Does the reference probe read the window's moment better from inside the window than from its edges?

A one-rank CPU run times a fixed GEMM (`reference_probe`, docs/run.md) and `tokbench predict`
divides the run's compute by it to read the run at its comm document's moment (docs/predict.md,
"The reference probe"). What matters there is window median / probe median: if the probe moves
with the machine as the window does, that ratio stays put from one run to the next. The probe's
products ran before the warm-up and after the window; a revision times one more between the
window's measured iterations (`within_ms`), outside their clocks. This script runs the quick
subset's one-rank inputs several times and reports, over the runs, how much the ratio moved with
the level read from inside the window (`within_ms`) and from its edges (`before_ms` + `after_ms`),
both from the same records.

With --vs OLD (a tokbench without products inside the window), each run of the new binary is
paired with one of the old, order rotating, and the table gives new/old of the window median per
pair: whether the products between iterations change the iterations they sit between.

Usage: reference_probe_inside.py [TOKBENCH] [--vs OLD] [--runs N] [--docs]
Should run alone: its figures are the machine's moments.
"""
import argparse
import datetime
import statistics

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, side_record, spread, write_side_by_side_page

# The quick subset's one-rank inputs (bench/predict_vs_measured.py: pythia-31m, T=128, one thread,
# 15 measured iterations) and the validation set's larger vocabulary (SmolLM2's first two blocks).
MODELS = {
    "pythia-31m": ["--model-name", "pythia-31m"],
    "smollm2-2l": ["--model-name", "SmolLM2-135M", "--n-layers", "2"],
}
COMMON = ["--seq-len", "128", "--num-threads", "1", "--max-iters", "20", "--warmup-iters", "5"]


def window_median_ms(record):
    return statistics.median(it["time_ms"] for it in record["iterations"] if not it.get("warmup"))


def pct(x):
    return f"{100 * x:.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tokbench", nargs="?", default=DEFAULT_TOKBENCH)
    ap.add_argument("--vs", help="a tokbench whose probe has no products inside the window")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--docs", action="store_true", help="write docs/results/reference-probe-inside-cpu-DATE.md")
    a = ap.parse_args()

    sides = [("new", a.tokbench)] + ([("old", a.vs)] if a.vs else [])
    rows = {m: [] for m in MODELS}  # per model: one dict per repeat
    started = datetime.datetime.now(datetime.timezone.utc)
    for repeat in range(a.runs):
        for model, model_args in MODELS.items():
            got = {}
            for label, binary in rotated(sides, repeat):
                record = side_record(binary, [*model_args, *COMMON], f"{model} {label}")
                if record is not None:
                    got[label] = record
            new = got.get("new")
            probe = (new or {}).get("reference_probe") or {}
            if not probe.get("within_ms"):
                print(f"# {model} repeat {repeat + 1}: the new binary's record has no products inside the window")
                continue
            row = {"window_ms": window_median_ms(new),
                   "inside_ms": statistics.median(probe["within_ms"]),
                   "edges_ms": statistics.median(probe["before_ms"] + probe["after_ms"]),
                   "old_window_ms": window_median_ms(got["old"]) if "old" in got else None}
            rows[model].append(row)
            print(f"{model} {repeat + 1}/{a.runs}: window {row['window_ms']:.1f} ms, probe inside "
                  f"{row['inside_ms']:.2f}, edges {row['edges_ms']:.2f}"
                  + (f", old binary's window {row['old_window_ms']:.1f}" if row["old_window_ms"] else ""), flush=True)

    lines = ["| model | runs | window median moved | probe inside moved | probe edges moved | "
             "**window / inside moved** | window / edges moved | inside / edges (median) |"
             + (" new / old window (median of pairs, range) |" if a.vs else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---|" if a.vs else "")]
    for model, got in rows.items():
        if len(got) < 2:
            continue
        window = [r["window_ms"] for r in got]
        inside = [r["inside_ms"] for r in got]
        edges = [r["edges_ms"] for r in got]
        line = (f"| {model} | {len(got)} | {pct(spread(window))} | {pct(spread(inside))} | {pct(spread(edges))} | "
                f"**{pct(spread([w / i for w, i in zip(window, inside)]))}** | "
                f"{pct(spread([w / e for w, e in zip(window, edges)]))} | "
                f"{statistics.median(i / e for i, e in zip(inside, edges)):.3f} |")
        if a.vs:
            pairs = [r["window_ms"] / r["old_window_ms"] for r in got if r["old_window_ms"]]
            line += f" {statistics.median(pairs):.3f} ({min(pairs):.3f}-{max(pairs):.3f}) |" if pairs else " - |"
        lines.append(line)
    table = "\n".join(lines)
    print(table)
    if a.docs:
        write_side_by_side_page(
            "reference-probe-inside-cpu", "The reference probe inside the window against its edges", started,
            cpu_model(), f"bench/reference_probe_inside.py {a.tokbench}{' --vs ' + a.vs if a.vs else ''} "
            f"--runs {a.runs} --docs",
            f"Each run: `tokbench run MODEL {' '.join(COMMON)}` (the quick subset's one-rank input); "
            f"moved = (largest - smallest) / median over the runs", table)


if __name__ == "__main__":
    main()
