#!/usr/bin/env python3
"""Make the replay fixture (tests/predict/fixtures/validation-replay) from a run of
bench/predict_vs_measured.py: what bench/predict_replay.py needs to predict every case of a
round (or of every round) again and compare it with the measurement, and nothing more.

Kept whole, because `tokbench predict` reads them: the one-rank records
(MODEL-w1-gaGA-ROUND.json) and the comm documents (comm-wN-ROUND.json). Cut down, because the
replay reads only a few of their keys: each measured run to its iteration time and time
account's categories (what predict_replay.py compares), each saved prediction to the probes
`predict --probes-from` takes from it (prediction.step_copies.memory_rate and
prediction.optimizer's costs). SOURCE.md says which run it was: machine, date, revisions, load.

Usage: make_replay_fixture.py SAVED_DIR OUT_DIR [--round r0|all]
"""
import argparse
import glob
import json
import os
import shutil
import sys

# The measured runs' file names as the replay reads them (its CASE pattern).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from predict_replay import CASE as MEASURED  # noqa: E402


def measured_essentials(record):
    """A measured run as the replay reads it: its iteration and its account's categories."""
    account = record.get("time_account") or {}
    return {"average_iter_time": record["average_iter_time"],
            "time_account": {"categories": account.get("categories") or {}}}


def probes_only(document):
    """A saved prediction as --probes-from reads it: the copy rate and the optimizer's costs."""
    run = document["runs"][0] if isinstance(document, dict) and "runs" in document else document
    prediction = run["prediction"]
    kept = {"step_copies": {"memory_rate": prediction["step_copies"]["memory_rate"]}}
    if isinstance(prediction.get("optimizer"), dict):
        kept["optimizer"] = {k: v for k, v in prediction["optimizer"].items()
                             if k in ("per_tensor_us", "per_element_ns", "costs_from")}
    return {"runs": [{"prediction": kept}]}


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.write("\n")


def source_page(saved, rounds, cases):
    """Where the fixture came from, from the run's own summary."""
    summary = json.load(open(os.path.join(saved, "predict-validation.json")))
    load = summary.get("load_average") or {}
    lines = [
        "# The replay fixture's source",
        "",
        f"Round(s) {', '.join(rounds)} of a `bench/predict_vs_measured.py` run of the {summary.get('set', '?')} set, made by "
        "`tests/predict/make_replay_fixture.py` (it keeps the one-rank records and comm documents whole, "
        "each measured run's iteration and time account, each prediction's probes).",
        "",
        f"- started {summary.get('started', '?')} UTC, {summary.get('minutes', 0):.1f} minutes, "
        f"{summary.get('rounds', '?')} round(s)",
        f"- machine: {summary.get('cpu', '?')}, {summary.get('logical_cpus', '?')} logical CPUs",
        f"- tokbench built at {summary.get('tokbench_revision', '?')}, the script at {summary.get('revision', '?')}",
        f"- load average (1 min) at the start {load.get('start', {}).get('1min', float('nan')):.2f}, "
        f"at the end {load.get('end', {}).get('1min', float('nan')):.2f}",
        f"- {len(cases)} cases: " + ", ".join(sorted(cases)),
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("saved")
    ap.add_argument("out")
    ap.add_argument("--round", default="r0")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.saved, "predict-validation.json")):
        sys.exit(f"SAVED_DIR '{a.saved}' has no predict-validation.json; valid: an OUT_DIR that "
                 "bench/predict_vs_measured.py finished")
    rounds = [a.round]
    if a.round == "all":
        rounds = sorted({m["round"] for m in (MEASURED.match(os.path.basename(p))
                                              for p in glob.glob(os.path.join(a.saved, "*-measured-r*.json"))) if m},
                        key=lambda r: int(r[1:]))
    cases = {}
    for rnd in rounds:
        for path in sorted(glob.glob(os.path.join(a.saved, f"*-measured-{rnd}.json"))):
            m = MEASURED.match(os.path.basename(path))
            if m:
                cases[(f"{m['model']}-w{m['w']}-{m['strategy']}-ga{m['ga']}", rnd)] = m
    if not cases:
        sys.exit(f"--round {a.round}: no measured runs of that round in '{a.saved}'; valid: r0, r1, ... or all")
    os.makedirs(a.out, exist_ok=True)
    for (case, rnd), m in cases.items():
        write_json(os.path.join(a.out, f"{case}-measured-{rnd}.json"),
                   measured_essentials(json.load(open(os.path.join(a.saved, f"{case}-measured-{rnd}.json")))))
        write_json(os.path.join(a.out, f"{case}-predicted-{rnd}.json"),
                   probes_only(json.load(open(os.path.join(a.saved, f"{case}-predicted-{rnd}.json")))))
        one_rank = f"{m['model']}-w1-ga{m['ga']}-{rnd}.json"
        shutil.copyfile(os.path.join(a.saved, one_rank), os.path.join(a.out, one_rank))
    for rnd in rounds:
        for path in glob.glob(os.path.join(a.saved, f"comm-w*-{rnd}.json")):
            shutil.copyfile(path, os.path.join(a.out, os.path.basename(path)))
    with open(os.path.join(a.out, "SOURCE.md"), "w") as f:
        f.write(source_page(a.saved, rounds, {case for case, _ in cases}))
    print(f"wrote {len(cases)} case-rounds ({', '.join(rounds)}) to {a.out}")


if __name__ == "__main__":
    main()
