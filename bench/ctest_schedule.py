#!/usr/bin/env python3
"""How long `ctest -j2` takes for the order it starts tests in: a replay of one CI log's timings.

    python3 bench/ctest_schedule.py CI_LOG BUILD_DIR [--slots 2] [--threshold 20]

CI_LOG is the console output of a `make test` (ctest's "Start N: name" and "Test #N: name ...
Passed X sec" lines); BUILD_DIR the configured build, whose `ctest --show-only=json-v1` gives each
test's RUN_SERIAL, RESOURCE_LOCK and COST. The replay runs every test for the seconds the log says
it took, on `--slots` slots, as ctest schedules: the next test in its order that may start (a
RUN_SERIAL test only on an idle machine, and nothing beside it; one holder per resource lock),
ordered by descending COST and then by number. It prints the total for the order of the log's own
run (tests by number, as a clean build without timings of its own starts them: this replay of it
should match the log's "Total Test time"), for the build's COST properties, and the tests of at
least `--threshold` seconds without a COST, to add with `tokbench_test_costs` (tests/CMakeLists.txt).
Timings of one machine: a plan for the order, not a speed figure."""
import argparse
import json
import re
import subprocess


def parse_log(path):
    """{number: (name, seconds)} of every finished test in the log."""
    finished = {}
    for line in open(path, errors="replace"):
        m = re.search(r"Test\s+#(\d+): (.+?) \.{3,}.*?(\d+\.\d+) sec", line)
        if m:
            finished[int(m.group(1))] = (m.group(2).split()[0], float(m.group(3)))
    return finished


def properties(build_dir):
    """{name: {"serial": bool, "locks": set, "cost": float}} from ctest's own listing."""
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, capture_output=True, text=True,
                             check=True)
    out = {}
    for test in json.loads(listing.stdout)["tests"]:
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        out[test["name"].split()[0]] = {"serial": bool(props.get("RUN_SERIAL")),
                                        "locks": set(props.get("RESOURCE_LOCK", [])),
                                        "cost": float(props.get("COST", 0))}
    return out


def replay(finished, props, slots, cost_of):
    """The total seconds when tests start in descending cost_of(name), then by number."""
    none = {"serial": False, "locks": set(), "cost": 0.0}
    order = sorted(finished, key=lambda k: (-cost_of(finished[k][0]), k))
    clock, running, pending = 0.0, [], order
    while pending or running:
        while len(running) < slots:
            held = set().union(*(props.get(finished[k][0], none)["locks"] for _, k in running))
            serial_running = any(props.get(finished[k][0], none)["serial"] for _, k in running)
            startable = None
            for k in pending:
                p = props.get(finished[k][0], none)
                if serial_running or (p["serial"] and running) or (p["locks"] & held):
                    continue
                startable = k
                break
            if startable is None:
                break
            pending = [k for k in pending if k != startable]
            running.append((clock + finished[startable][1], startable))
        running.sort()
        clock, _ = running.pop(0)
    return clock


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("build_dir")
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--threshold", type=float, default=20.0)
    a = ap.parse_args()
    finished = parse_log(a.log)
    props = properties(a.build_dir)
    total_line = re.findall(r"Total Test time \(real\) =\s*([\d.]+) sec", open(a.log, errors="replace").read())
    print(f"{len(finished)} tests, {sum(s for _, s in finished.values()):.0f} s of test time"
          + (f"; the log's total {float(total_line[-1]):.0f} s" if total_line else ""))
    print(f"replayed, by number (a clean build's order without costs): {replay(finished, props, a.slots, lambda n: 0):.0f} s")
    by_cost = replay(finished, props, a.slots, lambda n: props.get(n, {"cost": 0})["cost"])
    print(f"replayed, by the build's COST properties: {by_cost:.0f} s")
    missing = sorted(((s, n) for n, s in finished.values() if s >= a.threshold and not props.get(n, {}).get("cost")),
                     reverse=True)
    for seconds, name in missing:
        print(f"  no COST: {name} {seconds:.0f}")


if __name__ == "__main__":
    main()
