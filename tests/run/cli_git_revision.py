#!/usr/bin/env python3
"""The revision a binary reports is the checkout's at build time: `tokbench version` and a run's
JSON `environment.git_revision` both equal `git rev-parse --short=12 HEAD` of the source tree,
with "-dirty" exactly when tracked files differ from it (the build regenerates it every time,
so a commit after the last configure cannot leave it stale).
Usage: cli_git_revision.py /path/to/tokbench SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH, SOURCE = sys.argv[1], sys.argv[2]


def git(*args):
    return subprocess.run(["git", *args], cwd=SOURCE, capture_output=True, text=True)


head = git("rev-parse", "--short=12", "HEAD")
if head.returncode != 0:
    print("FAIL: the source tree is not a git checkout; this test needs one")
    sys.exit(1)
want = head.stdout.strip() + ("-dirty" if git("status", "--porcelain", "--untracked-files=no").stdout else "")

version = subprocess.run([TOKBENCH, "version"], capture_output=True, text=True)
if f"(git {want}," not in version.stdout:
    print(f"FAIL: `tokbench version` says {version.stdout.strip()!r}; the checkout is {want}")
    sys.exit(1)
with tempfile.TemporaryDirectory() as scratch:
    out = os.path.join(scratch, "run.json")
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    proc = subprocess.run([TOKBENCH, "run", "--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "16",
                           "--max-iters", "2", "--warmup-iters", "1", "--device", "cpu", "--quiet",
                           "--json-path", out], capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        print(f"FAIL: run exit {proc.returncode}\n{proc.stderr}")
        sys.exit(1)
    with open(out) as f:
        recorded = json.load(f)["environment"]["git_revision"]
if recorded != want:
    print(f"FAIL: the run recorded git_revision {recorded!r}; the checkout is {want}")
    sys.exit(1)
print("ok")
