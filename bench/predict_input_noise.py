#!/usr/bin/env python3
"""Where a prediction's round-to-round movement comes from, read from predict_vs_measured.py's saved files.

Reads the output folders of one or more `bench/predict_vs_measured.py` runs of 2 or more rounds
(their one-rank records, predictions made with the first round's comm documents, and measured
runs) and prints, side by side over the same records:

  1. how far each candidate statistic of the one-rank window moved between the rounds (largest −
     smallest, of their median): median, mean, 20% trimmed mean, lower quartile, minimum, the
     unit-timing pass's mean, and the median with the first measured iterations dropped;
  2. each measured iteration's time over its run's median, averaged by position (whether the
     warm-up left slow iterations in the window);
  3. how far each prediction moved between rounds, and how far it would have moved with the parts
     the predict-time probes set (the step's copies and the optimizer) held at their median, or
     with the one-rank input's part held instead; beside how far the measured runs moved;
  4. with --repredict TOKBENCH, each later round's one-rank run predicted again with round 0's
     comm documents and `--probes-from` round 0's prediction, and how far those moved.

No timing is made here: every figure comes from the records (and, with --repredict, from
predictions, which time nothing when their probes are reused). docs/predict.md ("What moves a
prediction") gives the figures this printed.

Usage: predict_input_noise.py [--repredict TOKBENCH] OUT_DIR [OUT_DIR ...]
"""
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from predict_vs_measured import strategy_args


def spread(values):
    return (max(values) - min(values)) / statistics.median(values)


def quantile(values, q):
    s = sorted(values)
    x = q * (len(s) - 1)
    i = int(x)
    j = min(i + 1, len(s) - 1)
    return s[i] + (x - i) * (s[j] - s[i])


def trimmed_mean(values, cut=0.2):
    s = sorted(values)
    k = int(len(s) * cut)
    return statistics.fmean(s[k:len(s) - k])


STATISTICS = {
    "median": statistics.median, "mean": statistics.fmean, "trimmed mean (20%)": trimmed_mean,
    "lower quartile": lambda v: quantile(v, 0.25), "minimum": min,
    "median, first 4 dropped": lambda v: statistics.median(v[4:]),
}


def load(path):
    with open(path) as f:
        return json.load(f)


def measured(record):
    return [it["time_ms"] for it in record["iterations"] if not it.get("warmup")]


def rounds_of(folder, stem):
    """The round files of one stem (NAME-rN.json), in round order."""
    paths = glob.glob(os.path.join(folder, f"{stem}-r[0-9]*.json"))
    paths = [p for p in paths if re.fullmatch(rf"{re.escape(stem)}-r\d+\.json", os.path.basename(p))]
    return sorted(paths, key=lambda p: int(re.search(r"-r(\d+)\.json$", p).group(1)))


def repredicted(tokbench, folder, case, rounds, scratch):
    """Each round's one-rank run of `case` predicted with round 0's comm documents and probes."""
    model, world, strategy, ga = re.fullmatch(r"(.+)-w(\d+)-(\w+)-ga(\d+)", case).groups()
    comm = os.path.join(folder, f"comm-w{world}-r0.json")
    if strategy.startswith("hybrid"):
        comm += "," + os.path.join(folder, "comm-w2-r0.json")
    times = []
    for r in range(rounds):
        out = os.path.join(scratch, f"{case}-r{r}.json")
        subprocess.run([tokbench, "predict", "--from", os.path.join(folder, f"{model}-w1-ga{ga}-r{r}.json"),
                        "--cluster", "measured", "--comm", comm, "--nproc-per-node", world,
                        "--global-batch-size", str(int(world) * int(ga)), *strategy_args(strategy),
                        "--num-threads", "1", "--format", "json", "--output", out,
                        "--probes-from", os.path.join(folder, f"{case}-predicted-r0.json")],
                       check=True, capture_output=True)
        times.append(load(out)["runs"][0]["average_iter_time"])
    return times


def main(folders, tokbench=None):
    moved = {name: [] for name in list(STATISTICS) + ["unit-timing pass"]}
    by_position = []
    parts = {"prediction": [], "probe parts held": [], "input parts held": [], "measured": []}
    if tokbench:
        parts["made again, round 0's probes (--probes-from)"] = []
    scratch = tempfile.mkdtemp(prefix="predict-input-noise-")
    for folder in folders:
        inputs = sorted({re.sub(r"-r\d+\.json$", "", os.path.basename(p))
                         for p in glob.glob(os.path.join(folder, "*-w1-ga*-r*.json"))})
        for stem in inputs:
            records = [load(p) for p in rounds_of(folder, stem)]
            if len(records) < 2:
                continue
            times = [measured(r) for r in records]
            for name, f in STATISTICS.items():
                moved[name].append(spread([f(t) for t in times]))
            moved["unit-timing pass"].append(spread([r["unit_timings"]["iteration_seconds"] for r in records]))
            by_position += [[x / statistics.median(t) for x in t] for t in times]
        cases = sorted({re.sub(r"-predicted-r\d+\.json$", "", os.path.basename(p))
                        for p in glob.glob(os.path.join(folder, "*-predicted-r*.json"))})
        for case in cases:
            n = len(rounds_of(folder, f"{case}-measured"))
            if n < 2:
                continue
            # Round 0's prediction, then each later round's made with round 0's comm documents.
            preds = [load(os.path.join(folder, f"{case}-predicted-r{r}{'-comm0' if r else ''}.json"))["runs"][0]
                     ["prediction"]["time_ms"] for r in range(n)]
            it = [p["iteration"] for p in preds]
            probe = [(p.get("step_copies") or 0) + (p.get("optimizer") or 0) for p in preds]
            rest = [i - x for i, x in zip(it, probe)]
            parts["prediction"].append(spread(it))
            parts["probe parts held"].append(spread([r + statistics.median(probe) for r in rest]))
            parts["input parts held"].append(spread([x + statistics.median(rest) for x in probe]))
            if tokbench:
                parts["made again, round 0's probes (--probes-from)"].append(
                    spread(repredicted(tokbench, folder, case, n, scratch)))
            parts["measured"].append(spread([load(os.path.join(folder, f"{case}-measured-r{r}.json"))["average_iter_time"]
                                             for r in range(n)]))

    def row(name, values):
        return f"| {name} | {100 * statistics.fmean(values):.1f}% | {100 * max(values):.1f}% | {len(values)} |"

    print("One-rank inputs: how far each statistic moved between rounds (largest − smallest, of the median)\n")
    print("| statistic | mean | largest | inputs |\n|---|---|---|---|")
    for name, values in moved.items():
        if values:
            print(row(name, values))
    if by_position:
        n = min(len(t) for t in by_position)
        print("\nMeasured iteration / its run's median, by position in the window (mean over the runs):",
              " ".join(f"{statistics.fmean(t[i] for t in by_position):.3f}" for i in range(n)))
    print("\nPredictions (round 0's comm documents): how far each moved between rounds\n")
    print("| figure | mean | largest | cases |\n|---|---|---|---|")
    for name, values in parts.items():
        if values:
            print(row(name, values))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    tokbench = None
    if args[:1] == ["--repredict"] and len(args) >= 2:
        tokbench, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    main(args, tokbench)
