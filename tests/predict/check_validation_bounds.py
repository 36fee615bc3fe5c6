#!/usr/bin/env python3
"""predict_vs_measured.py's bounds, without measuring: `--recheck` on a saved summary (a real
quick run, 2026-12-05: mean absolute 4.6%, mean signed -4.6%) passes the bounds it meets and
fails, with exit 1 and a FAIL line naming the bound, the ones it crosses; a bad bound or file
exits 2 with one line."""
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
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("8 bound checks as expected")
