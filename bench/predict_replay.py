"""Replay a saved validation run: re-predict every case from its saved inputs, measure nothing.

bench/predict_vs_measured.py keeps every input and output of a run in its OUT_DIR: the one-rank
runs, the comm documents, the measured multi-rank runs. This script makes each case's prediction
again with the given tokbench from those same inputs and compares it with the saved measurement,
so a change to the model can be judged on the same measurements before and after it. The probes
`predict` runs on each call (copy rate, AdamW cost) are taken from the saved prediction of the
same case (`--probes-from`), so the replay measures nothing and does not follow this machine's
load; `--fresh-probes` runs them here instead. Its last lines sum the GEMM time the predictions book
as contention beside collectives against what the measured GEMMs imply, and, where ranks time-slice
the cores, set the prediction beside its two ends (the lockstep schedule and the cores' budget).

Usage: predict_replay.py TOKBENCH SAVED_DIR [--round r0|all] [--comm-dir DIR] [--cases REGEX] [--json OUT.json]
    [--fresh-probes] [--without-reference-probe] [--own-document-only] [--compute-level run|comm-document]
    [--alone-from-probe] [--max-mean-error PCT] [--max-bias POINTS] [--expected-bias PCT] [--max-error PCT]
  --comm-dir: read comm-wN-ROUND.json from DIR instead (e.g. the saved documents with a field a
    newer `tokbench comm` records added), the rest from SAVED_DIR
  --round all: every round the directory holds, each case of each round a row of the summary
  --without-reference-probe: predict from copies of the one-rank records without their
    `reference_probe` (the compute at the run's own level, not the comm document's moment)
  --compute-level: passed to tokbench predict (run, its default since 2026-12-07, or comm-document:
    the compute carried to the comm document's moment, the default before); left out, not passed
  --alone-from-probe: each comm document's reference GEMM (compute_sharing.alone_ms) replaced by
    the one-rank probe the validation script ran right after it (its predict-validation.json,
    machine_probe_ms.after_comm): what --compute-level comm-document gives with a document whose
    level is read as a run's probe is
  --max-*: the bounds of predict_vs_measured.py, held by the replayed summary (exit 1 and a FAIL line
    naming each one crossed); the ctest predict_replay_validation holds a saved run to them
  --own-document-only: each case's comm document alone (and the 2-rank one for hybrid sharding), as
    predict_vs_measured.py gave them until 2026-12-06; by default the round's documents of fewer
    ranks follow it, as it gives them now
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from predict_vs_measured import CATEGORIES, add_bound_arguments, bad_bound, bounds_crossed, categories_ms, strategy_args

CASE = re.compile(r"^(?P<model>.+)-w(?P<w>\d+)-(?P<strategy>ddp|zero2|zero3|hybrid_zero2|hybrid_zero3)-ga(?P<ga>\d+)"
                  r"-measured-(?P<round>r\d+)\.json$")


def one_rank_input(path, work, without_probe):
    """The one-rank record to predict from: the saved one, or a copy without its reference probe."""
    if not without_probe:
        return path
    record = json.load(open(path))
    record.pop("reference_probe", None)
    copy = os.path.join(work, "noprobe-" + os.path.basename(path))
    with open(copy, "w") as f:
        json.dump(record, f)
    return copy


def documents_with_probe_level(saved, comm_dir, work):
    """Copies of the saved comm documents with alone_ms set to the validation's probe after each."""
    validation = json.load(open(os.path.join(saved, "predict-validation.json")))
    after = {}
    for case in validation["cases"].values():
        for i, r in enumerate(case["rounds"]):
            probe = (r.get("machine_probe_ms") or {}).get("after_comm")
            if probe:
                after[(case["W"], f"r{i}")] = probe
    out = os.path.join(work, "docs-probe-level")
    os.makedirs(out, exist_ok=True)
    for path in glob.glob(os.path.join(comm_dir or saved, "comm-w*-r*.json")):
        m = re.match(r"comm-w(\d+)-(r\d+)\.json$", os.path.basename(path))
        doc = json.load(open(path))
        if m and (int(m[1]), m[2]) in after and doc.get("compute_sharing"):
            doc["compute_sharing"]["alone_ms"] = after[(int(m[1]), m[2])]
        with open(os.path.join(out, os.path.basename(path)), "w") as f:
            json.dump(doc, f)
    return out


def replay(tb, saved, rnd, comm_dir, cases_re, work, fresh_probes, without_probe=False, own_document_only=False,
           compute_level=None):
    results = []
    for path in sorted(glob.glob(os.path.join(saved, f"*-measured-{rnd}.json"))):
        m = CASE.match(os.path.basename(path))
        if not m or (cases_re and not re.search(cases_re, os.path.basename(path))):
            continue
        model, w, strategy, ga = m["model"], int(m["w"]), m["strategy"], int(m["ga"])
        name = f"{model}-w{w}-{strategy}-ga{ga}"
        base = one_rank_input(os.path.join(saved, f"{model}-w1-ga{ga}-{rnd}.json"), work, without_probe)
        # As predict_vs_measured.py gives them: the case's world size, then the round's documents
        # measured before it (its world sizes go in ascending order); until commit 5700b32 only
        # hybrid cases had another, the 2-rank one (--own-document-only).
        def doc(size):
            return os.path.join(comm_dir or saved, f"comm-w{size}-{rnd}.json")
        smaller = sorted(size for size in range(2, w) if os.path.exists(doc(size)))
        if own_document_only:
            smaller = [2] if strategy.startswith("hybrid") else []
        docs = [doc(w)] + [doc(size) for size in smaller]
        out = os.path.join(work, f"{name}-replayed.json")
        cmd = [tb, "predict", "--from", base, "--cluster", "measured", "--comm", ",".join(docs),
               "--nproc-per-node", str(w), "--global-batch-size", str(w * ga), *strategy_args(strategy),
               "--num-threads", "1", "--format", "json", "--output", out]
        if compute_level:
            cmd += ["--compute-level", compute_level]
        saved_prediction = os.path.join(saved, f"{name}-predicted-{rnd}.json")
        if not fresh_probes and os.path.exists(saved_prediction):
            cmd += ["--probes-from", saved_prediction]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
        p = json.load(open(out))["runs"][0]
        measured = json.load(open(path))
        pc, mc = categories_ms(p), categories_ms(measured)
        results.append({
            "case": name, "round": rnd, "W": w, "predicted_ms": p["average_iter_time"], "measured_ms": measured["average_iter_time"],
            "error": (p["average_iter_time"] - measured["average_iter_time"]) / measured["average_iter_time"],
            "categories_error_ms": {c: pc[c] - mc[c] for c in CATEGORIES if c in pc and c in mc},
            "gemm_contention_ms": gemm_contention(p, pc, mc),
            "cpu_contention": (p.get("prediction") or {}).get("cpu_contention"),
            "time_ms": (p.get("prediction") or {}).get("time_ms"),
        })
    return results


def gemm_contention(prediction, predicted, measured):
    """The GEMMs' time lost beside collectives: the prediction's, and what the measurement implies.

    The predicted account books the contention model's cost in each category it slows
    (`time_account.contention_in`); the predicted GEMMs less their share are the prediction's GEMMs
    without contention, so the measured GEMMs less that are the contention the measured run had,
    as far as the rest of the GEMMs' prediction (the one-rank run, the cores' sharing) holds. GEMMs
    alone: elementwise also holds the step's own copies, predicted apart, with their own error.
    """
    booked = (((prediction.get("prediction") or {}).get("time_account") or {}).get("contention_in") or {}).get("gemm")
    if booked is None or "gemm" not in predicted or "gemm" not in measured:
        return None
    without = predicted["gemm"] - booked
    return {"predicted": booked, "measured": measured["gemm"] - without}


def _lost_and_implied(rows):
    """The GEMMs' contention, summed: what the predictions booked and what the measurements imply."""
    return sum(r["predicted"] for r in rows), sum(r["measured"] for r in rows)


def contention_line(results):
    """One line over every case: the GEMMs' contention predicted against what the measurements imply."""
    rows = [r["gemm_contention_ms"] for r in results if r.get("gemm_contention_ms")]
    if not rows:
        return None
    predicted, measured = _lost_and_implied(rows)
    by_w = []
    for w in sorted({r["W"] for r in results}):
        pw, mw = _lost_and_implied([r["gemm_contention_ms"] for r in results
                                    if r["W"] == w and r.get("gemm_contention_ms")])
        if pw > 0:
            by_w.append(f"W = {w}: {mw / pw:.2f}")
    ratio = f"{measured / predicted:.2f} of it" if predicted > 0 else "n/a"
    return (f"GEMMs' time lost beside collectives, summed over {len(rows)} cases: predicted {predicted:.0f} ms, "
            f"the measured runs {measured:.0f} ms ({ratio}; " + ", ".join(by_w) + ")")


def ends_line(results):
    """Where ranks time-slice the cores: the lockstep end, the cores' budget and the prediction
    between them, each against the measurement (mean absolute and signed error)."""
    rows = []
    for r in results:
        c = r.get("cpu_contention") or {}
        if isinstance(c.get("cores_budget"), dict) and isinstance(c.get("ranks_out_of_step"), dict):
            rows.append((c["ranks_out_of_step"]["lockstep_iteration_ms"], c["cores_budget"]["iteration_ms"],
                         r["predicted_ms"], r["measured_ms"]))
    if not rows:
        return None

    def errors(i):
        e = [row[i] / row[3] - 1 for row in rows]
        return f"{100 * statistics.fmean(abs(x) for x in e):.1f}% ({100 * statistics.fmean(e):+.1f}%)"

    between = sum(1 for lock, budget, _, m in rows if min(lock, budget) <= m <= max(lock, budget))
    return (f"{len(rows)} time-slicing cases, mean absolute (signed) error: lockstep {errors(0)}, cores' budget "
            f"{errors(1)}, the prediction {errors(2)}; measured between the two ends in {between}")


def summary(results):
    errors = [r["error"] for r in results]
    s = {"cases": len(errors), "mean_abs_error": statistics.fmean(abs(e) for e in errors),
         "mean_error": statistics.fmean(errors), "max_abs_error": max(abs(e) for e in errors)}
    for w in sorted({r["W"] for r in results}):
        ew = [r["error"] for r in results if r["W"] == w]
        s[f"w{w}"] = {"mean_abs_error": statistics.fmean(abs(e) for e in ew), "mean_error": statistics.fmean(ew),
                      "max_abs_error": max(abs(e) for e in ew)}
    return s


def refuse(message):
    """A bad input: one line naming it and the valid choices, exit 2, before any work."""
    print(message, file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tokbench")
    ap.add_argument("saved")
    ap.add_argument("--round", default="r0")
    ap.add_argument("--comm-dir", default=None)
    ap.add_argument("--cases", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--fresh-probes", action="store_true",
                    help="probe the copy rate and AdamW here (default: the saved prediction's, via --probes-from)")
    ap.add_argument("--without-reference-probe", action="store_true",
                    help="predict from copies of the one-rank records without their reference_probe")
    ap.add_argument("--compute-level", choices=["run", "comm-document"], default=None)
    ap.add_argument("--alone-from-probe", action="store_true",
                    help="comm documents' alone_ms set to the validation's probe right after each")
    ap.add_argument("--own-document-only", action="store_true",
                    help="each case's own comm document only (and the 2-rank one for hybrid), as before 2026-12-06")
    add_bound_arguments(ap)
    a = ap.parse_args()
    if bad_bound(a):
        refuse(bad_bound(a))
    if not os.path.isdir(a.saved):
        refuse(f"SAVED_DIR '{a.saved}' is not a directory; valid: an OUT_DIR of bench/predict_vs_measured.py")
    rounds = [a.round]
    if a.round == "all":
        rounds = sorted({m["round"] for m in (CASE.match(os.path.basename(p))
                                              for p in glob.glob(os.path.join(a.saved, "*-measured-r*.json"))) if m},
                        key=lambda r: int(r[1:]))
    if a.alone_from_probe and not os.path.exists(os.path.join(a.saved, "predict-validation.json")):
        refuse(f"--alone-from-probe: '{a.saved}' has no predict-validation.json; valid: an OUT_DIR the validation "
               "script finished, run with its machine probes")
    results = []
    with tempfile.TemporaryDirectory() as work:
        comm_dir = documents_with_probe_level(a.saved, a.comm_dir, work) if a.alone_from_probe else a.comm_dir
        for rnd in rounds:
            results += replay(os.path.abspath(a.tokbench), a.saved, rnd, comm_dir, a.cases, work, a.fresh_probes,
                              a.without_reference_probe, a.own_document_only, a.compute_level)
    if not results:
        refuse(f"--round {a.round}: no '*-measured-ROUND.json' cases in '{a.saved}' for it; valid: r0, r1, ... or all")
    print("| case | predicted (ms) | measured (ms) | error | " + " | ".join(CATEGORIES) + " |")
    print("|---" * (4 + len(CATEGORIES)) + "|")
    for r in results:
        cats = " | ".join(f"{r['categories_error_ms'][c]:+.1f}" if c in r["categories_error_ms"] else "n/a"
                          for c in CATEGORIES)
        label = f"{r['case']} ({r['round']})" if len(rounds) > 1 else r["case"]
        print(f"| {label} | {r['predicted_ms']:.1f} | {r['measured_ms']:.1f} | {100 * r['error']:+.1f}% | {cats} |")
    s = summary(results)
    print(f"\nmean absolute error {100 * s['mean_abs_error']:.1f}%, bias {100 * s['mean_error']:+.1f}%, largest "
          f"{100 * s['max_abs_error']:.1f}% over {s['cases']} cases; " +
          "; ".join(f"W = {k[1:]}: mean absolute {100 * v['mean_abs_error']:.1f}%, bias {100 * v['mean_error']:+.1f}%, "
                    f"largest {100 * v['max_abs_error']:.1f}%" for k, v in s.items() if k.startswith("w")))
    for line in (contention_line(results), ends_line(results)):
        if line:
            print(line)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"saved": a.saved, "round": a.round, "comm_dir": a.comm_dir,
                       "without_reference_probe": a.without_reference_probe, "compute_level": a.compute_level,
                       "alone_from_probe": a.alone_from_probe,
                       "own_document_only": a.own_document_only, "results": results, "summary": s}, f,
                      indent=1)
    failed = bounds_crossed(a, s)
    if failed:
        # The saved measurements do not move, so a crossed bound is the model's (or the binary's) change.
        print("FAIL: " + "; ".join(failed) + f" (replayed from '{a.saved}')", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
