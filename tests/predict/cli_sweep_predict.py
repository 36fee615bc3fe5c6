#!/usr/bin/env python3
"""`tokbench sweep --predict`: predicted columns beside the measured ones, from real runs.

  - every bad combination is refused before anything runs (exit 2, one line, no --out folder):
    --comm or --predict-only without --predict, an unknown cluster, `measured` without --comm,
    two comm documents of one world size, a GPU cluster for rows that run on the CPU;
  - a sweep of 2-rank DDP and ZeRO-3 rows with `--predict measured`: the sweep adds and runs the
    one-rank row they predict from, every multi-rank row gets an "eager predicted" record with
    the measured row's index values, its error against the measured row, and its source's id;
    each run records the collectives its step sent (unit_timings.communication), the same plan
    its prediction timed;
    the store keeps measured and predicted records apart; every text format shows the column;
    a second run of the same command reruns nothing and predicts the same;
  - `--predict FILE.toml --predict-only` over 2 nodes x 4 ranks: only the one-rank rows run,
    the others are status predicted; a row whose one-rank run fails is `not_predicted`, saying why.
Usage: cli_sweep_predict.py /path/to/tokbench"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]
SMALL = ["--model-name", "pythia-14m", "--seq-len", "64", "--max-iters", "3", "--warmup-iters", "1",
         "--num-threads", "1", "--unit-timing-iters", "1"]
INDEX = ["model_name", "Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA", "Distributed Mode", "Sharding Size"]


def sweep(args, timeout=600):
    return subprocess.run([TOKBENCH, "sweep", *args], capture_output=True, text=True, timeout=timeout)


def check(condition, what):
    if not condition:
        print("FAIL:", what)
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        comm2 = os.path.join(tmp, "comm-w2.json")
        r = subprocess.run([TOKBENCH, "comm", "--nproc-per-node", "2", "--num-threads", "1", "--max-bytes", "32M",
                            "--iters", "3", "--warmup-iters", "1", "--format", "json", "--output", comm2],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, f"tokbench comm: {r.returncode} {r.stderr}")
        cpu_toml = os.path.join(tmp, "cpu.toml")
        with open(cpu_toml, "w") as f:
            f.write('device = "cpu"\ndevices_per_node = 4\ncores_per_node = 8\n'
                    '[intra_node]\nbandwidth_GBps = 5\nlatency_us = 20\n[inter_node]\nbandwidth_GBps = 2\nlatency_us = 50\n')

        # Refusals: one line, exit 2, before the sweep's folder exists.
        refused_out = os.path.join(tmp, "refused")
        two_ranks = ["--nproc-per-node", "2", "--distributed-mode", "ddp"]
        refusals = [
            (["--comm", comm2], "--comm applies with --predict CLUSTER only"),
            (["--predict-only"], "--predict-only applies with --predict CLUSTER only"),
            (["--predict", "nope", *two_ranks], "--predict 'nope' is not valid; valid: a100-sxm-8"),
            (["--predict", "measured", *two_ranks], "--predict measured reads collective times from --comm"),
            (["--predict", "measured", "--comm", f"{comm2},{comm2}", *two_ranks], "were both measured over 2 ranks"),
            (["--predict", "h100-sxm-8", "--device", "cpu", *two_ranks],
             "--predict h100-sxm-8: its ranks compute on cuda"),
        ]
        for args, expected in refusals:
            r = sweep(["--out", refused_out, *SMALL, *args])
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2, f"{args}: exit {r.returncode}, want 2 ({r.stderr.strip()})")
            check(len(lines) == 1 and expected in lines[0], f"{args}: want one line with '{expected}', got {lines}")
            check(not os.path.exists(refused_out), f"{args}: created {refused_out} though refused")

        # Measured and predicted side by side. The matrix holds no one-rank row: the sweep adds it.
        out = os.path.join(tmp, "sweep")
        args = ["--out", out, *SMALL, "--nproc-per-node", "2", "--distributed-mode", "ddp,fsdp", "--shard-mode", "zero3",
                "--bucketing-mode", "block", "--predict", "measured", "--comm", comm2, "--format", "json"]
        r = sweep(args)
        check(r.returncode == 0, f"sweep --predict measured: {r.returncode} {r.stderr}")
        check("mean absolute error" in r.stderr, f"the error summary on stderr: {r.stderr}")
        doc = json.loads(r.stdout)
        check(doc["context"]["predict"]["cluster"] == "measured", "the context names the cluster")
        runs = doc["runs"]
        measured = [x for x in runs if x["compiler"] == "eager"]
        predicted = [x for x in runs if x["compiler"] == "eager predicted"]
        check(len(measured) == 3 and all(x["status"] == "ok" for x in measured),
              f"the added one-rank row and the two 2-rank rows ran: {[(x['Num GPUS'], x['status']) for x in measured]}")
        source = measured[0]
        check(source["Num GPUS"] == 1 and source["Distributed Mode"] == "none", "the one-rank source comes first")
        check(len(predicted) == 2 and all(x["status"] == "predicted" for x in predicted),
              f"two predictions: {[(x.get('status'), x.get('message')) for x in predicted]}")
        for m, p in zip(measured[1:], predicted):
            check([m[k] for k in INDEX] == [p[k] for k in INDEX],
                  f"prediction beside its row: {[m[k] for k in INDEX]} vs {[p[k] for k in INDEX]}")
            check(p["sweep_config_id"] == m["sweep_config_id"] + "-predicted", "the prediction's id is its row's, marked")
            pr = p["prediction"]
            check(pr["source"]["sweep_config_id"] == source["sweep_config_id"], "predicted from the one-rank row")
            check(pr["measured_average_iter_time"] == m["average_iter_time"], "the measured time beside it")
            want = (p["average_iter_time"] - m["average_iter_time"]) / m["average_iter_time"]
            check(abs(pr["error"] - want) < 1e-12, f"error {pr['error']} = (predicted - measured) / measured = {want}")
            # The run records what its step sent; the prediction times the same plan.
            sent = m["unit_timings"]["communication"]
            timed = [{k: v for k, v in c.items() if k != "ms_each"} for c in pr["communication"]["collectives"]]
            check(sent["collectives"] == timed and sent["bytes_per_iteration"] == pr["communication"]["bytes_per_iteration"],
                  f"the run's communication plan is the one predicted: {sent} vs {pr['communication']}")
        parameters = sum(u["parameters"] for u in source["unit_timings"]["units"])
        check(measured[1]["unit_timings"]["communication"]["bytes_per_iteration"] == 4 * parameters,
              "DDP, fp32: every gradient all-reduced once")
        check(source["unit_timings"]["communication"] == {"bytes_per_iteration": 0, "collectives": []},
              "one rank sends nothing")
        check(predicted[1]["sharding_mode"] == "zero3" and predicted[1]["memory_parameters_GB"] <
              source["memory_parameters_GB"] * 0.6, "ZeRO-3's prediction holds half the parameters")

        store = sqlite3.connect(os.path.join(out, "tokbench-results.sqlite"))
        statuses = sorted(store.execute("SELECT status, compiler FROM runs").fetchall())
        store.close()
        check(statuses == [("ok", "eager")] * 3 + [("predicted", "eager predicted")] * 2,
              f"the store keeps both: {statuses}")

        # Again: nothing reruns, the predictions are the same; the text formats show the column.
        r = sweep(args)
        check(r.returncode == 0 and json.loads(r.stdout)["context"]["executed"] == 0, "resumed: nothing ran again")
        again = [x for x in json.loads(r.stdout)["runs"] if x["compiler"] == "eager predicted"]
        check([x["average_iter_time"] for x in again] == [x["average_iter_time"] for x in predicted],
              "the same predictions from the same runs")
        for fmt in ("print", "csv", "markdown"):
            r = sweep([*args[:-2], "--format", fmt])
            check(r.returncode == 0 and "eager predicted" in r.stdout, f"--format {fmt} shows the predicted column")
            if fmt == "csv":
                rows = list(csv.DictReader(io.StringIO(r.stdout)))
                check(sum(1 for row in rows if row["status"] == "predicted") == 2, "csv: two predicted rows")

        # Predictions only, for rows this machine does not run: 2 nodes x 4 ranks on a CPU cluster
        # file; a row whose one-rank run is refused (micro-batch 0) is not predicted, saying why.
        out = os.path.join(tmp, "predict-only")
        args = ["--out", out, *SMALL, "--nproc-per-node", "4", "--nnodes", "2", "--distributed-mode", "fsdp",
                "--global-batch-size", "8,16", "--predict", cpu_toml, "--predict-only"]
        r = sweep([*args, "--dry-run"])
        check(r.returncode == 0, f"dry run: {r.stderr}")
        listed = [line.split()[2] for line in r.stdout.splitlines() if not line.startswith("#")]
        check(listed == ["runnable", "predict"] * 2, f"dry run lists each source, then its prediction: {listed}")
        r = sweep([*args, "--format", "json"])
        check(r.returncode == 0, f"--predict-only: {r.stderr}")
        runs = json.loads(r.stdout)["runs"]
        check([(x["Num GPUS"], x["status"]) for x in runs] == [(1, "ok"), (8, "predicted")] * 2,
              f"one-rank rows ran, 8-rank rows predicted: {[(x['Num GPUS'], x['status']) for x in runs]}")
        check([x["GA"] for x in runs] == [1, 1, 2, 2], "GA kept from each source")
        # Beside a source that runs: a sweep none of whose configurations can run is refused (exit 2).
        r = sweep(["--out", os.path.join(tmp, "failed"), *SMALL, "--micro-batch-size", "0,1", "--nproc-per-node", "2",
                   "--distributed-mode", "ddp", "--predict", cpu_toml, "--predict-only", "--format", "json"])
        check(r.returncode == 0, f"a failed source: {r.stderr}")
        runs = json.loads(r.stdout)["runs"]
        check([x["status"] for x in runs] == ["invalid", "not_predicted", "ok", "predicted"],
              f"statuses: {[x['status'] for x in runs]}")
        check("its one-rank run" in runs[1]["message"] and "ended 'invalid'" in runs[1]["message"],
              f"says why: {runs[1]['message']}")
    print("ok")


if __name__ == "__main__":
    main()
