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
     comm documents and `--probes-from` round 0's prediction, and how far those moved;
  5. where the one-rank records carry a reference probe (`tokbench run`'s `reference_probe`, a
     fixed GEMM beside the window): how far their medians moved with and without division by
     it, how the two correlate, and (with --repredict) how far the quick subset's predictions
     moved with the probe applied (the records as they are) and without it (a copy without the
     block, predict's fallback for older records), all made with round 0's comm document.

`--measure N TOKBENCH OUT_DIR` makes the inputs of 5 first: one 2-rank comm document, then N
rounds of the quick subset's two one-rank runs (pythia-31m GA 1 and GA 2, predict_vs_measured.py's
options) back to back, saved as that script saves them; then prints 1, 2 and 5. That timing is
made on whatever else the machine runs: say so beside its figures.

No timing is made here: every figure comes from the records (and, with --repredict, from
predictions, which time nothing when their probes are reused). docs/predict.md ("What moves a
prediction") gives the figures this printed.

Usage: predict_input_noise.py [--repredict TOKBENCH] OUT_DIR [OUT_DIR ...]
       predict_input_noise.py --measure N TOKBENCH OUT_DIR
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

from predict_vs_measured import COMM, MODELS, ONE_RANK_ITERS, QUICK, SEQ_LEN, strategy_args


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


def correlation(x, y):
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


def probe_ms(record):
    p = record.get("reference_probe") or {}
    return p.get("median_ms") if p.get("ran") else None


def predict_quick(tokbench, folder, ga, r, scratch, with_probe):
    """The quick subset's cases of GA `ga` predicted from round r's one-rank run, comm-w2-r0."""
    src = os.path.join(folder, f"pythia-31m-w1-ga{ga}-r{r}.json")
    if not with_probe:
        record = load(src)
        record.pop("reference_probe", None)
        src = os.path.join(scratch, f"bare-ga{ga}-r{r}.json")
        with open(src, "w") as f:
            json.dump(record, f)
    out = {}
    for case in QUICK:
        _, world, strategy, cga = re.fullmatch(r"(.+)-w(\d+)-(\w+)-ga(\d+)", case).groups()
        if int(cga) != ga:
            continue
        path = os.path.join(scratch, f"{case}-r{r}-{'probe' if with_probe else 'bare'}.json")
        first = os.path.join(scratch, f"{case}-probes.json")
        subprocess.run([tokbench, "predict", "--from", src, "--cluster", "measured", "--comm",
                        os.path.join(folder, "comm-w2-r0.json"), "--nproc-per-node", world,
                        "--global-batch-size", str(int(world) * ga), *strategy_args(strategy), "--num-threads", "1",
                        "--format", "json", "--output", path,
                        *(["--probes-from", first] if os.path.exists(first) else [])], check=True, capture_output=True)
        if not os.path.exists(first):
            shutil.copy(path, first)  # the machine's probes of the first prediction, reused by the rest
        out[case] = load(path)["runs"][0]
    return out


def probe_study(folders, tokbench, scratch):
    """Section 5: the one-rank medians with and without division by their reference probe."""
    rows = {"median": [], "median / reference probe": [], "reference probe": []}
    xs, ys = [], []
    preds = {"prediction, probe applied": [], "prediction, without the probe": []}
    scales = []
    for folder in folders:
        for ga in (1, 2):
            records = [load(p) for p in rounds_of(folder, f"pythia-31m-w1-ga{ga}")]
            records = [r for r in records if probe_ms(r)]
            if len(records) < 2:
                continue
            med = [statistics.median(measured(r)) for r in records]
            probe = [probe_ms(r) for r in records]
            rows["median"].append(spread(med))
            rows["median / reference probe"].append(spread([m / p for m, p in zip(med, probe)]))
            rows["reference probe"].append(spread(probe))
            xs += [m / statistics.fmean(med) for m in med]
            ys += [p / statistics.fmean(probe) for p in probe]
            if tokbench and os.path.exists(os.path.join(folder, "comm-w2-r0.json")):
                made = {True: [], False: []}
                for with_probe in (True, False):
                    for r in range(len(records)):
                        made[with_probe].append(predict_quick(tokbench, folder, ga, r, scratch, with_probe))
                for case in made[True][0]:
                    preds["prediction, probe applied"].append(spread([m[case]["average_iter_time"] for m in made[True]]))
                    preds["prediction, without the probe"].append(
                        spread([m[case]["average_iter_time"] for m in made[False]]))
                    scales += [m[case]["prediction"]["reference_level"].get("scale", 1) for m in made[True]]
    if not rows["median"]:
        return
    print("\nReference probe: the one-rank medians' movement between rounds with and without division by it\n")
    print("| figure | mean | largest | inputs |\n|---|---|---|---|")
    for name, values in {**rows, **preds}.items():
        if values:
            print(f"| {name} | {100 * statistics.fmean(values):.1f}% | {100 * max(values):.1f}% | {len(values)} |")
    print(f"\ncorrelation of each run's median with its probe (both over their input's mean): {correlation(xs, ys):.2f} "
          f"over {len(xs)} runs")
    if scales:
        print(f"scale applied (comm document's GEMM / the run's): {min(scales):.3f} to {max(scales):.3f}")


def measure(n, tokbench, out):
    """One comm document, then n rounds of the quick subset's one-rank runs, back to back."""
    os.makedirs(out, exist_ok=True)
    comm = os.path.join(out, "comm-w2-r0.json")
    subprocess.run([tokbench, "comm", "--nproc-per-node", "2", "--num-threads", "1", *COMM, "--max-bytes", "128M",
                    "--format", "json", "--output", comm], check=True, capture_output=True)
    loads = []
    for r in range(n):
        for ga in (1, 2):
            loads.append(os.getloadavg()[0])
            subprocess.run([tokbench, "run", *MODELS["pythia-31m"], "--seq-len", str(SEQ_LEN), "--num-threads", "1",
                            *ONE_RANK_ITERS, "--global-batch-size", str(ga),
                            "--json-path", os.path.join(out, f"pythia-31m-w1-ga{ga}-r{r}.json")],
                           check=True, capture_output=True)
    print(f"{n} rounds in {out}; load average (1 min) at each run's start: {min(loads):.1f} to {max(loads):.1f}")


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
    probe_study(folders, tokbench, scratch)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--measure"] and len(args) == 4:
        measure(int(args[1]), args[2], args[3])
        main([args[3]], args[2])
        sys.exit(0)
    tokbench = None
    if args[:1] == ["--repredict"] and len(args) >= 2:
        tokbench, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    main(args, tokbench)
