#!/usr/bin/env python3
"""`tokbench explain BASE.json RUN.json` over real runs (docs/time-account.md, "explain"): eager
against fused on one configuration. The JSON's per-category differences are the two records'
category seconds subtracted and sum to the difference of their iteration times; the text names
both runs and ends in the sentence. Refused in one line (exit 2): two configurations (naming the
key and both values), a record without an account (naming --time-account-iters), a run that did
not finish, a bad --format; and hostile records (issue 38): a negative category or iteration, an
iteration of 1e308 s, categories that do not sum to the iteration, a negative iteration time, a
directory, a file far larger than any record (refused before it is read), junk of 50 MB (read
in one buffer: the child's peak memory grows by less than twice the file), an empty --format=.
Usage: cli_explain.py /path/to/tokbench"""
import copy
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "64", "--micro-batch-size", "2",
         "--max-iters", "4", "--warmup-iters", "1", "--device", "cpu", "--num-threads", "1", "--quiet",
         "--unit-timing-iters", "0", "--peak-tflops", "1"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    sys.exit(1)


def tokbench(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "TOKBENCH_TEST_HOST_DELAY_MS")}
    return subprocess.run([TOKBENCH, *args], capture_output=True, text=True, timeout=600, env=env)


def record(path, *args):
    proc = tokbench("run", *SMALL, *args, "--json-path", path)
    if proc.returncode != 0:
        fail(f"run {args}: exit {proc.returncode}", proc)
    with open(path) as f:
        return json.load(f)


def refused(proc, needles, what):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 2 or len(lines) != 1 or not all(n in lines[0] for n in needles):
        fail(f"{what}: exit {proc.returncode}, stderr {lines}; want 2 and one line with {needles}", proc)


with tempfile.TemporaryDirectory() as scratch:
    eager_path, fused_path = os.path.join(scratch, "eager.json"), os.path.join(scratch, "fused.json")
    eager = record(eager_path, "--executor", "eager")
    fused = record(fused_path, "--executor", "fused")

    proc = tokbench("explain", eager_path, fused_path, "--format", "json")
    if proc.returncode != 0:
        fail(f"explain: exit {proc.returncode}", proc)
    e = json.loads(proc.stdout)
    if (e["base"], e["run"]) != ("eager", "fused"):
        fail(f"names: {e['base']} {e['run']}")
    total = 0.0
    for name, c in e["categories"].items():
        want = (fused["time_account"]["categories"][name]["s"] - eager["time_account"]["categories"][name]["s"]) * 1e3
        if abs(c["difference_ms"] - want) > 1e-9 * max(1.0, abs(want)):
            fail(f"{name}: difference {c['difference_ms']} ms, the records say {want}")
        total += c["difference_ms"]
    iteration = (fused["time_account"]["iteration_s"] - eager["time_account"]["iteration_s"]) * 1e3
    if abs(total - iteration) > 1e-6 * max(1.0, abs(iteration)) or abs(e["iteration_ms"]["difference"] - iteration) > 1e-9:
        fail(f"categories sum to {total} ms, the iterations differ by {iteration} ms")
    print(e["sentence"])

    proc = tokbench("explain", eager_path, fused_path)
    if proc.returncode != 0 or "fused against eager" not in proc.stdout or e["sentence"] not in proc.stdout:
        fail("the text explanation", proc)

    longer = record(os.path.join(scratch, "longer.json"), "--executor", "fused", "--seq-len", "32")
    refused(tokbench("explain", eager_path, os.path.join(scratch, "longer.json")),
            ["different configurations", "'Seq Len' is 64 and 32"], "two configurations")
    record(os.path.join(scratch, "none.json"), "--executor", "fused", "--time-account-iters", "0")
    refused(tokbench("explain", eager_path, os.path.join(scratch, "none.json")),
            ["none.json", "no time account", "--time-account-iters"], "no account")
    oom = dict(fused, status="oom", message="out of memory")
    with open(os.path.join(scratch, "oom.json"), "w") as f:
        json.dump(oom, f)
    refused(tokbench("explain", os.path.join(scratch, "oom.json"), fused_path), ["oom.json", "status 'oom'"],
            "a run that did not finish")
    refused(tokbench("explain", eager_path, fused_path, "--format", "xml"), ["--format", "xml", "text, json"],
            "a bad format")

    # Hostile records: every value the account's reader refuses, named in one line.
    def edited(name, change):
        doc = copy.deepcopy(fused)
        change(doc)
        path = os.path.join(scratch, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def set_account(key, value):
        return lambda d: d["time_account"].__setitem__(key, value)

    def set_category(name, key, value):
        return lambda d: d["time_account"]["categories"][name].__setitem__(key, value)

    hostile = [
        (edited("neg_gemm.json", set_category("gemm", "s", -5.0)), ["neg_gemm.json", "categories.gemm.s", "-5"]),
        (edited("neg_iter.json", set_account("iteration_s", -0.1)), ["neg_iter.json", "'iteration_s'", "-0.1"]),
        (edited("huge_iter.json", set_account("iteration_s", 1e308)), ["huge_iter.json", "'iteration_s'", "1e+308"]),
        (edited("sum.json", set_account("iteration_s", fused["time_account"]["iteration_s"] * 2)),
         ["sum.json", "categories sum to", "within 0.1%"]),
        (edited("neg_time.json", lambda d: d["iterations"][0].__setitem__("time_ms", -3.0)),
         ["neg_time.json", "iterations[0].time_ms", "-3.0"]),
        (edited("neg_rank.json", lambda d: d.__setitem__("ranks", [{"time_account": dict(
            d["time_account"], iteration_s=-1.0)}])), ["neg_rank.json", "ranks[0].time_account", "'iteration_s'"]),
        (scratch, ["is a directory"]),
    ]
    for path, needles in hostile:
        proc = tokbench("explain", eager_path, path)
        refused(proc, needles, f"hostile {os.path.basename(path)}")
        if proc.stdout:
            fail(f"hostile {os.path.basename(path)}: printed on stdout after the refusal", proc)

    # Far larger than any record: refused from its size (a sparse file: nothing is read or stored).
    huge = os.path.join(scratch, "huge.json")
    with open(huge, "wb") as f:
        f.truncate(600 * 1024 * 1024)
    refused(tokbench("explain", eager_path, huge), ["huge.json", "far larger than any record"], "a 600 MB file")

    # 50 MB of junk: refused after one read, in a buffer of the file's size (was ~480 MB).
    def peak_rss_kb(*args):
        child = subprocess.Popen([TOKBENCH, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        return usage.ru_maxrss, child.returncode, err.decode()

    # Two shapes: a bare array of numbers, and an object holding one (its tree took 1.3 GB).
    for opening, closing in ((b"[", b"]"), (b'{"a": [', b"]}")):
        small_junk, big_junk = os.path.join(scratch, "small.junk"), os.path.join(scratch, "big.junk")
        for path, size in ((small_junk, 1000), (big_junk, 50_000_000)):
            with open(path, "wb") as f:
                f.write(opening + b"0," * (size // 2 - 1) + b"0" + closing)
        small_kb, small_rc, _ = peak_rss_kb("explain", eager_path, small_junk)
        big_kb, big_rc, big_err = peak_rss_kb("explain", eager_path, big_junk)
        grown_mb = (big_kb - small_kb) / 1024
        print(f"explain on 50 MB of junk ({opening.decode()}...): peak RSS {big_kb / 1024:.0f} MB, {grown_mb:.0f} MB "
              f"over a 1 kB file")
        if big_rc != 2 or small_rc != 2 or "big.junk" not in big_err or grown_mb > 100:
            fail(f"50 MB of junk: exit {big_rc} ({big_err.strip()}), peak RSS +{grown_mb:.0f} MB (want 2, < 100 MB)")

    # An empty --format= is refused naming it, and does not take the next word as its value.
    refused(tokbench("explain", "--format=", eager_path, fused_path), ["--format", "empty value"], "--format=")
print("PASS explain")
