#!/usr/bin/env python3
"""How long `make run`'s build takes, side by side: several revisions or build options, each
built from an empty build folder with ccache off, one after the other in this one script.

Each configuration is REV or REV:CMAKE_FLAGS (flags separated by spaces), e.g.
    0d4e3d5  HEAD:-DTOKBENCH_UNITY_BUILD=OFF  HEAD
A revision is checked out into its own git worktree; every configuration builds only what
`make run` builds (tokbench and the memory probe), with Ninja at its default parallelism. The
table gives the wall-clock and CPU seconds (user + system of the compilers) of each, and their
ratio to the first configuration. Wall time is what a new user waits for; CPU seconds are the
steadier figure on a machine whose neighbours come and go.

Usage: build_time.py [--rounds N] [--keep] CONFIG...
  --rounds: build every configuration N times, interleaved (round 1 of each, then round 2...),
    and report medians
LibTorch comes from the checkout's bootstrap (build/.torch-prefix; run `make configure` first).
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import cpu_model

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["tokbench", "tokbench_memory_probe"]


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def parse_config(text):
    rev, _, flags = text.partition(":")
    return rev, flags.split()


def checkout(rev, scratch):
    """A worktree of `rev` (one per revision, shared by its configurations)."""
    sha = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", rev + "^{commit}"], capture_output=True,
                         text=True)
    if sha.returncode != 0:
        sys.exit(f"build_time.py: '{rev}' is not a revision of {REPO}")
    path = os.path.join(scratch, "src-" + sha.stdout.strip()[:12])
    if not os.path.isdir(path):
        subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", "-q", path, sha.stdout.strip()], check=True)
    return path


def build_once(source, flags, build_dir, torch_prefix, log):
    shutil.rmtree(build_dir, ignore_errors=True)
    env = dict(os.environ, CCACHE_DISABLE="1")
    subprocess.run(["cmake", "-S", source, "-B", build_dir, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={torch_prefix}",
                    *flags], check=True, env=env, stdout=log, stderr=subprocess.STDOUT)
    cpu_before = children_cpu_seconds()
    start = time.monotonic()
    subprocess.run(["cmake", "--build", build_dir, "--target", *TARGETS], check=True, env=env, stdout=log,
                   stderr=subprocess.STDOUT)
    return time.monotonic() - start, children_cpu_seconds() - cpu_before


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", metavar="CONFIG")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the worktrees and build folders")
    args = parser.parse_args()
    prefix_file = os.path.join(REPO, "build", ".torch-prefix")
    if not os.path.exists(prefix_file):
        sys.exit("build_time.py: build/.torch-prefix is missing; run `make configure` first")
    torch_prefix = open(prefix_file).read().strip()
    if args.rounds < 1:
        sys.exit("build_time.py: --rounds must be 1 or more")

    scratch = tempfile.mkdtemp(prefix="tokbench-build-time-")
    configs = [(text, *parse_config(text)) for text in args.configs]
    sources = {text: checkout(rev, scratch) for text, rev, _ in configs}
    results = {text: [] for text, _, _ in configs}
    log_path = os.path.join(scratch, "build.log")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; log: {log_path}", file=sys.stderr)
    try:
        with open(log_path, "w") as log:
            for round_index in range(args.rounds):
                for i, (text, _, flags) in enumerate(configs):
                    wall, cpu = build_once(sources[text], flags, os.path.join(scratch, f"build-{i}"), torch_prefix,
                                           log)
                    results[text].append((wall, cpu))
                    print(f"round {round_index + 1}: {text}: {wall:.0f} s wall, {cpu:.0f} CPU s", file=sys.stderr)
    finally:
        if not args.keep:
            for path in set(sources.values()):
                subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", path], check=False)
            shutil.rmtree(scratch, ignore_errors=True)

    first = configs[0][0]
    base_wall = statistics.median(w for w, _ in results[first])
    base_cpu = statistics.median(c for _, c in results[first])
    print(f"`make run`'s build from an empty folder, ccache off; {cpu_model()}, {os.cpu_count()} logical CPUs; "
          f"median of {args.rounds} round(s)\n")
    print("| configuration | wall s | CPU s | wall vs first | CPU vs first |")
    print("|---|---:|---:|---:|---:|")
    for text, _, _ in configs:
        wall = statistics.median(w for w, _ in results[text])
        cpu = statistics.median(c for _, c in results[text])
        print(f"| `{text}` | {wall:.0f} | {cpu:.0f} | {wall / base_wall:.2f} | {cpu / base_cpu:.2f} |")


if __name__ == "__main__":
    main()
