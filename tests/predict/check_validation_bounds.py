#!/usr/bin/env python3
"""predict_vs_measured.py's bounds, without measuring: `--recheck` on a saved summary (a real
quick run, 2026-12-05: mean absolute 4.6%, mean signed -4.6%) passes the bounds it meets and
fails, with exit 1 and a FAIL line naming the bound, the ones it crosses; a bad bound or file
exits 2 with one line. Also the sets: `--set holdout --list` names six cases none of which the
validation set holds, `--quick` with it is refused; and the summary's error against the measured
median is its own (a case whose mean a burst moved is right by its median). predict_replay.py
refuses a bad bound or folder the same way, before replaying."""
import importlib.util
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent.parent / "bench" / "predict_vs_measured.py"
SAVED = HERE / "fixtures" / "validation-quick-2026-12-05.json"


def recheck(*args, saved=SAVED):
    proc = subprocess.run([sys.executable, str(SCRIPT), "unused", "unused", "--recheck", str(saved), *args],
                          capture_output=True, text=True)
    return proc.returncode, proc.stderr


failures = []


def expect(args, rc, words=(), saved=SAVED):
    got, err = recheck(*args, saved=saved)
    if got != rc or any(w not in err for w in words):
        failures.append(f"{' '.join(args)}: exit {got}, stderr {err.strip()!r}; wanted exit {rc} with {list(words)}")


expect(["--max-bias", "6", "--max-mean-error", "8"], 0)
# the same -4.6% lean, judged from an expected -2%: 2.6 points away
expect(["--max-bias", "3", "--expected-bias", "-2"], 0)
expect(["--max-bias", "2", "--expected-bias", "-2"], 1, ["mean signed error -4.6%", "expected -2.0%"])
# a model that leaned 10% slower than expected is caught
expect(["--max-bias", "5", "--expected-bias", "5.4"], 1, ["mean signed error"])
expect(["--max-mean-error", "4"], 1, ["mean absolute error 4.6% above 4.0%"])
expect(["--max-error", "6"], 1, ["largest error 6.9% above 6.0%"])
expect(["--max-bias", "-1"], 2, ["--max-bias: -1.0 is not valid"])
expect(["--max-bias", "3"], 2, ["--recheck:", "not a readable"], saved=HERE / "no-such-file.json")


def listed(*args):
    proc = subprocess.run([sys.executable, str(SCRIPT), "unused", "unused", "--list", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout.split(), proc.stderr


rc, validation, _ = listed()
rc_h, holdout, _ = listed("--set", "holdout")
if rc != 0 or rc_h != 0 or len(validation) != 15 or len(holdout) != 6 or set(validation) & set(holdout):
    failures.append(f"--list: validation {rc} {validation}, holdout {rc_h} {holdout}: wanted 15 and 6 cases, none shared")
models = lambda names: {n.rsplit("-w", 1)[0] for n in names}
if models(validation) & models(holdout):
    failures.append(f"the held-out set shares models with the validation set: {models(validation) & models(holdout)}")
rc, _, err = listed("--set", "holdout", "--quick")
if rc != 2 or "--quick" not in err:
    failures.append(f"--set holdout --quick: exit {rc}, {err.strip()!r}; wanted exit 2 naming --quick")

spec = importlib.util.spec_from_file_location("predict_vs_measured", SCRIPT)
pvm = importlib.util.module_from_spec(spec)
sys.path.insert(0, str(SCRIPT.parent))
spec.loader.exec_module(pvm)
rounds = [{"predicted_ms": 100.0, "measured_ms": 120.0, "measured_median_ms": 101.0,
           "predicted_with_first_comm_ms": 100.0, "predicted_with_first_comm_probed_ms": 100.0,
           "interval_ms": [95.0, 105.0], "predicted_categories_ms": {}, "measured_categories_ms": {}}]
summary, _ = pvm.summarize({"a-w2-ddp-ga1": {"W": 2, "rounds": rounds}}, {})
if abs(summary["mean_abs_error"] - 20.0 / 120.0) > 1e-12 or abs(summary["vs_median"]["mean_error"] + 1.0 / 101.0) > 1e-12:
    failures.append(f"summary against the mean and the median: {summary['mean_abs_error']}, {summary['vs_median']}")

# predict_replay.py takes the same bounds, and refuses before replaying anything.
REPLAY = HERE.parent.parent / "bench" / "predict_replay.py"
for args, words in ((["--max-bias", "-1"], ["--max-bias: -1.0 is not valid"]),
                    (["--max-bias", "3"], ["SAVED_DIR", "not a directory"])):
    saved = str(HERE / "fixtures") if args[1] == "-1" else str(HERE / "no-such-folder")
    proc = subprocess.run([sys.executable, str(REPLAY), "unused", saved, *args], capture_output=True, text=True)
    if proc.returncode != 2 or any(w not in proc.stderr for w in words):
        failures.append(f"predict_replay.py {' '.join(args)}: exit {proc.returncode}, {proc.stderr.strip()!r}; "
                        f"wanted exit 2 with {words}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("8 bound checks, the replay's refusals, the sets and the median's error as expected")
