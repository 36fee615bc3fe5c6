#!/usr/bin/env python3
"""`tokbench predict` from the command line, on a fabricated measured record (a pythia-14m-like
run with unit_timings, one CPU rank, 2 threads on 2 cores):

  - every bad option is refused before anything is written: exit 2, one line naming the option
    and the valid values (micro-batch other than the measured one, a world size the comm
    document was not measured at, a device kind other than the measured one, a record without
    unit timings, a failed run, ...);
  - a prediction is a run record with tokbench run's keys, status "predicted", its `prediction`
    object, and the figures consistent with one another (tokens/s = global batch x seq len /
    iteration time); every format writes it; a sweep's JSON and a store row reference are read;
  - with two ranks on the same 2-core machine the CPU contention model doubles compute;
  - a record with a time account and per-iteration times gives a prediction with an account (which
    `tokbench explain` reads against a measured record) and an interval, both printed; one without
    says so.
Usage: cli_predict.py /path/to/tokbench"""
import copy
import json
import os
import subprocess
import sys
import tempfile

TOKBENCH = sys.argv[1]


def measured_record(ranks=1):
    blocks = [{"name": f"block.{i}", "kind": "block", "parameters": 198_912,
               "forward_seconds": 0.004, "backward_seconds": 0.008, "optimizer_seconds": 0.0002} for i in range(6)]
    units = ([{"name": "embedding", "kind": "embedding", "parameters": 6_438_912,
               "forward_seconds": 0.0005, "backward_seconds": 0.002, "optimizer_seconds": 0.006}]
             + blocks
             + [{"name": "head", "kind": "head", "parameters": 6_439_168,
                 "forward_seconds": 0.02, "backward_seconds": 0.04, "optimizer_seconds": 0.006}])
    return {
        "average_iter_time": 150.0, "model_flops": 2.0e11, "model_flop_per_sec": 1.3e12, "tokens_per_sec": 3400.0,
        "memory_used_GB": 0.9, "model_name": "pythia-14m", "Num GPUS": ranks, "Seq Len": 512, "Micro BS": 1,
        "Global BS": ranks, "GA": 1, "Distributed Mode": "none" if ranks == 1 else "ddp", "Sharding Size": None,
        "compiler": "eager", "schema_version": 3, "status": "ok", "message": "", "executor": "eager",
        "mfu_precision": "fp32", "flops_convention": "matmul", "parameters": 14_067_712, "n_layer": 6,
        "memory_allocated_peak_GB": 0.9, "memory_reserved_peak_GB": 1.0,
        "memory_parameters_GB": 0.0563, "memory_gradients_GB": 0.0563, "memory_optimizer_state_GB": 0.1125,
        "memory_activations_GB": 0.5, "memory_comm_buffers_GB": 0.0, "memory_allocator_reserve_GB": 0.1,
        "world_size": ranks, "ranks": [], "device": "cpu", "device_name": "cpu", "dtype": "fp32",
        "config": {"distributed_mode": "none" if ranks == 1 else "ddp", "shard_mode": "zero2", "bucketing_mode": "none",
                   "sharding_size": None, "ddp_bucket_size_mb": 25, "ddp_overlap": True, "skip_data_sync": True,
                   "num_threads": 2, "dtype": "fp32", "device": "cpu"},
        "environment": {"host": "test", "cpu_cores": 2},
        "unit_timings": {"iterations": 2, "clock": "host", "micro_batches_per_iteration": 1,
                         "iteration_seconds": 0.15, "exposed_comm_seconds": 0.0, "optimizer_seconds": 0.0135,
                         "units": units},
    }


def time_account(iteration_s):
    """A measured account whose categories sum to `iteration_s` (the shape tokbench run writes)."""
    seconds = {"gemm": 0.080, "attention": 0.005, "normalization": 0.002, "elementwise": 0.030, "loss": 0.012,
               "optimizer": 0.0135, "data_host": 0.0005, "exposed_comm": 0.0, "device_idle": 0.0, "other": 0.007}
    total = sum(seconds.values())
    categories = {name: {"s": s * iteration_s / total, "profiled_s": s * iteration_s / total,
                         "share": s / total, "mfu_cost": None} for name, s in seconds.items()}
    return {"source": "kineto_cpu", "rank": None, "profiled_iters": 2, "iteration_s": iteration_s,
            "profiled_iteration_s": iteration_s, "profiled_range_s": iteration_s, "categories": categories,
            "gemm_flops_per_iter": 150_000_000_000, "attention_flops_per_iter": 10_000_000_000, "uncounted_matmuls": 0,
            "model_flops_per_iter": 200_000_000_000, "peak_TFLOP_per_s": None, "peak_source": "",
            "matmul_s_at_ceiling": None, "beyond_model_mfu_cost": None, "mfu": None, "exposed_comm_source": "step",
            "exposed_comm_step_s": 0.0, "exposed_comm_seen_s": 0.0, "other_top": [{"name": "backward", "profiled_s": 0.001}]}


def iterations(times_ms):
    """Two warm-up iterations, then the measured ones."""
    return ([{"index": i, "warmup": True, "time_ms": 400.0, "loss": 11.0} for i in range(2)]
            + [{"index": i + 2, "warmup": False, "time_ms": t, "loss": 10.0} for i, t in enumerate(times_ms)])


def comm_document(world=2):
    results = []
    for size in (1024, 1 << 20, 1 << 26):
        for name in ("all_reduce", "all_gather", "reduce_scatter"):
            results.append({"collective": name, "size_bytes": size, "count": size // 4,
                            "time_us": 50 + size / 1e3, "correct": True})
    return {"schema": "tokbench-comm", "schema_version": 1, "backend": "gloo", "device": "cpu", "world_size": world,
            "nnodes": 1, "nproc_per_node": world, "threads_per_rank": 1, "dtype": "float32", "iters": 20,
            "warmup_iters": 5, "environment": {"cpu_cores": 2}, "results": results}


def run(args):
    return subprocess.run([TOKBENCH, "predict", *args], capture_output=True, text=True, timeout=120)


def check(condition, what):
    if not condition:
        print("FAIL:", what)
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, doc):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(doc if isinstance(doc, str) else json.dumps(doc))
            return path

        record = write("run.json", measured_record())
        comm = write("comm.json", comm_document())
        cpu_toml = write("cpu.toml", 'device = "cpu"\ndevices_per_node = 4\ncores_per_node = 2\n'
                                     '[intra_node]\nbandwidth_GBps = 5\nlatency_us = 20\n')
        no_timings = copy.deepcopy(measured_record())
        del no_timings["unit_timings"]
        failed = dict(measured_record(), status="oom")
        out = os.path.join(tmp, "out.json")

        refusals = [
            (["--from", record, "--cluster", "measured", "--comm", comm, "--nproc-per-node", "2",
              "--micro-batch-size", "4"], "--micro-batch-size 4 differs from the measured run's 1"),
            (["--from", record, "--cluster", "measured", "--comm", comm, "--nproc-per-node", "4"],
             "was measured over 2 ranks, not 4"),
            (["--from", record, "--cluster", "measured"], "--cluster measured reads collective times from --comm"),
            (["--from", record, "--cluster", "h100-sxm-8", "--nproc-per-node", "8"],
             "was measured on cpu and cluster 'h100-sxm-8' computes on cuda"),
            (["--from", record, "--cluster", "nowhere-9"], "--cluster 'nowhere-9' is not valid; valid: a100-sxm-8"),
            (["--from", record, "--cluster", "measured", "--comm", comm, "--nproc-per-node", "2",
              "--compute-level", "document"], "--compute-level 'document': not a level; valid: run, comm-document"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp2"],
             "--distributed-mode 'fsdp2' is not valid"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp",
              "--shard-mode", "zero4"], "--shard-mode 'zero4' is not valid; valid: zero2, zero3"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp",
              "--bucketing-mode", "layer"], "--bucketing-mode 'layer' is not valid"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "4", "--distributed-mode", "fsdp",
              "--sharding-size", "3"], "--sharding-size 3 does not divide the world size 4"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "4", "--distributed-mode", "fsdp",
              "--shard-mode", "hybrid_zero2"], "needs --sharding-size"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--global-batch-size", "3"],
             "--global-batch-size 3 does not split into micro-batches of 1 over 2 ranks"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "8"],
             "--nproc-per-node 8 exceeds cluster 'cpu''s 4 devices per node"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--nnodes", "2"],
             "has no [inter_node]"),
            (["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--ddp-bucket-size", "0"],
             "--ddp-bucket-size 0 is not valid"),
            (["--from", record, "--cluster", cpu_toml, "--format", "yaml"], "yaml"),
            # The sections' options a prediction does not model: refused by name before --from is read.
            (["--from", os.path.join(tmp, "missing.json"), "--cluster", cpu_toml, "--max-iters", "5"],
             "--max-iters is the measured run's: the prediction does not model it; valid: --nproc-per-node"),
            (["--from", record, "--cluster", cpu_toml, "--no-ddp-overlap"],
             "--ddp-overlap is the measured run's: the prediction does not model it"),
            (["--from", record, "--cluster", cpu_toml, "--nproc_per_node", "abc"],
             "--nproc-per-node: 'abc' is not valid; valid: a whole number 1..4096"),
            (["--from", write("none.json", no_timings), "--cluster", cpu_toml],
             "has no unit_timings; rerun it with a tokbench that records unit timings"),
            (["--from", write("oom.json", failed), "--cluster", cpu_toml], "did not finish (status 'oom')"),
            (["--from", write("bad.json", "{"), "--cluster", cpu_toml], "ends early (truncated?)"),
            (["--from", write("junk.json", "\x01garbage"), "--cluster", cpu_toml], "not JSON"),
            # A bare array of numbers is no sweep's JSON: one line, not one "skipping" per element.
            (["--from", write("numbers.json", json.dumps(list(range(100_000)))), "--cluster", cpu_toml],
             "at [0], it is 0, where a result is an object"),
            (["--from", tmp, "--cluster", cpu_toml], "it is a directory; valid: a run's JSON"),
            # An object no run wrote is named as such, not read as a run that did not finish.
            (["--from", write("other.json", {"a": 1}), "--cluster", cpu_toml],
             "is not a tokbench run result: it is JSON without a result's schema_version, status and model_name"),
            (["--from", write("other_runs.json", {"runs": [{"a": 1}]}), "--cluster", cpu_toml],
             "at runs[0], it is JSON without a result's schema_version"),
            (["--from", write("negative.json", dict(measured_record(), average_iter_time=-5.0)), "--cluster", cpu_toml],
             "'average_iter_time' is -5.0"),
            (["--from", "", "--cluster", cpu_toml], "--from: an empty value"),
            (["--from", os.path.join(tmp, "missing.json"), "--cluster", cpu_toml], "--from"),
            (["--from", record, "--cluster", write("bad.toml", 'device = "gpu"\n')],
             "'device' = \"gpu\" is not valid; valid: cuda, cpu"),
        ]
        for args, expected in refusals:
            r = run(args + ["--output", out])
            check(r.returncode == 2, f"{args}: exit {r.returncode}, want 2 ({r.stderr.strip()})")
            lines = r.stderr.strip().splitlines()
            check(len(lines) == 1 and expected in lines[0], f"{args}: want one line with '{expected}', got {lines}")
            check(lines[0].count("; valid:") <= 1, f"{args}: one list of what is valid, got {lines}")
            check(not os.path.exists(out), f"{args}: wrote {out} though refused")

        # --output into a folder that does not exist: refused before the prediction is computed
        # (exit 2, one line), as every other bad option.
        missing = os.path.join(tmp, "no-such-folder", "p.json")
        r = run(["--from", record, "--cluster", cpu_toml, "--format", "json", "--output", missing])
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and "--output" in lines[0] and "does not exist" in lines[0]
              and r.stdout == "", f"--output into a missing folder: exit {r.returncode}, {lines}, stdout {r.stdout!r}")
        r = run(["--from", record, "--cluster", cpu_toml, "--format", "json", "--output=", "--num-threads", "2"])
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and "--output" in lines[0] and "empty value" in lines[0]
              and not os.path.exists(os.path.join(os.getcwd(), "--num-threads")),
              f"--output= : exit {r.returncode}, {lines}")

        # Two ranks on the measured 2-core machine, DDP, collective times from the comm document.
        r = run(["--from", record, "--cluster", "measured", "--comm", comm, "--nproc-per-node", "2",
                 "--distributed-mode", "ddp", "--num-threads", "2", "--format", "json", "--output", out])
        check(r.returncode == 0, f"measured prediction: exit {r.returncode}: {r.stderr}")
        with open(out) as f:
            doc = json.load(f)
        check(len(doc["runs"]) == 1, "one prediction")
        p = doc["runs"][0]
        check(p["status"] == "predicted" and p["Num GPUS"] == 2 and p["Distributed Mode"] == "ddp", "the record's keys")
        check(abs(p["tokens_per_sec"] - p["Global BS"] * p["Seq Len"] / (p["average_iter_time"] / 1e3)) < 1e-6 * p["tokens_per_sec"],
              "tokens/s = global batch x seq len / iteration time")
        check(abs(p["tokens_per_sec_per_device"] * 2 - p["tokens_per_sec"]) < 1e-6 * p["tokens_per_sec"], "per device")
        pred = p["prediction"]
        check(pred["cpu_contention"]["compute_time_factor"] == 2.0, "2 ranks x 2 threads on 2 cores: compute x 2")
        fb = sum(u["forward_seconds"] + u["backward_seconds"] for u in measured_record()["unit_timings"]["units"])
        check(abs(pred["time_ms"]["forward_backward"] - 2 * fb * 1e3) < 1e-6, "compute doubled")
        check(pred["time_ms"]["iteration"] >= pred["time_ms"]["compute"], "iteration >= compute")
        unit_parameters = sum(u["parameters"] for u in measured_record()["unit_timings"]["units"])
        check(pred["communication"]["bytes_per_iteration"] == unit_parameters * 4, "DDP all-reduces every gradient once")
        check(any("CPU ranks share cores" in a for a in pred["assumptions"]), "the contention assumption is stated")
        check(p["memory_comm_buffers_GB"] > 0.05, "DDP's buckets in the memory")
        # The two-rank predictions below that are not about the probes reuse this one's (1.4 s each).
        probes = ["--probes-from", out]

        # --probes-from: the earlier prediction's copy rate and AdamW costs, not a new probe, so the
        # same inputs give the same prediction (the probe's own noise left out); another placement
        # and a document without a copy rate are refused in one line, nothing written.
        again, again2 = os.path.join(tmp, "again.json"), os.path.join(tmp, "again2.json")
        same = ["--from", record, "--cluster", "measured", "--comm", comm, "--nproc-per-node", "2",
                "--distributed-mode", "ddp", "--num-threads", "2", "--format", "json", "--probes-from", out]
        for path in (again, again2):
            r = run(same + ["--output", path])
            check(r.returncode == 0, f"--probes-from: exit {r.returncode}: {r.stderr}")
        with open(again) as f, open(again2) as g:
            a, b = json.load(f)["runs"][0], json.load(g)["runs"][0]
        rate = pred["step_copies"]["memory_rate"]
        reused = a["prediction"]["step_copies"]["memory_rate"]
        def same_figure(x, y):  # GB/s and ns are written from bytes/s and seconds: equal to rounding
            return abs(x - y) <= 1e-12 * abs(y)
        check(same_figure(reused["together_GBps"], rate["together_GBps"])
              and same_figure(reused["alone_GBps"], rate["alone_GBps"]) and out in reused["source"],
              f"the copy rate reused as written: {reused} vs {rate}")
        opt, opt_first = a["prediction"]["optimizer"], pred["optimizer"]
        check(same_figure(opt["per_element_ns"], opt_first["per_element_ns"])
              and same_figure(opt["per_tensor_us"], opt_first["per_tensor_us"]) and "reused from" in opt["costs_from"],
              f"the AdamW costs reused: {opt} vs {opt_first}")
        check(a["average_iter_time"] == b["average_iter_time"], "the same inputs and probes: the same prediction")
        for args, expected in [
                (["--nproc-per-node", "1", "--distributed-mode", "none"], "measured with 2 rank(s) per node, the prediction puts 1"),
                (["--probes-from", record], "holds no prediction"),
                (["--probes-from", os.path.join(tmp, "absent.json")], "--probes-from")]:
            target = os.path.join(tmp, "refused.json")
            r = run(["--from", record, "--cluster", cpu_toml if args[0] == "--nproc-per-node" else "measured"]
                    + ([] if args[0] == "--nproc-per-node" else ["--comm", comm, "--nproc-per-node", "2",
                                                                "--distributed-mode", "ddp"])
                    + ["--format", "json", "--output", target]
                    + (args if args[0] != "--nproc-per-node" else args + ["--probes-from", out]))
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and expected in lines[0] and not os.path.exists(target),
                  f"{args}: want exit 2 and one line with '{expected}', got {r.returncode} {lines}")

        # comm's measured compute sharing replaces the core-count factor for its own placement (one
        # thread per rank, measured one rank alone): x1.3 as measured; a figure below 1 counts as 1.
        one_thread = measured_record()
        one_thread["config"]["num_threads"] = 1
        one_thread_path = write("run-1t.json", one_thread)
        for slowdown, factor in ((1.3, 1.3), (0.9, 1.0)):
            shared = write(f"comm-shared-{slowdown}.json", dict(comm_document(), compute_sharing={
                "ranks_per_node": 2, "threads_per_rank": 1, "alone_ms": 20.0, "together_ms": 20.0 * slowdown,
                "slowdown": slowdown}))
            r = run(["--from", one_thread_path, "--cluster", "measured", "--comm", shared, "--nproc-per-node", "2",
                     "--distributed-mode", "ddp", "--num-threads", "1", "--format", "json", *probes])
            check(r.returncode == 0, f"compute sharing {slowdown}: exit {r.returncode}: {r.stderr}")
            pred = json.loads(r.stdout)["runs"][0]["prediction"]
            check(abs(pred["cpu_contention"]["compute_time_factor"] - factor) < 1e-12,
                  f"sharing {slowdown}: compute x {factor}, got {pred['cpu_contention']['compute_time_factor']}")
            check(abs(pred["time_ms"]["forward_backward"] - factor * fb * 1e3) < 1e-6, f"sharing {slowdown}: compute scaled")

        # Threads the cores do not divide (2 ranks of 3 on 4 cores) get a straggler the schedule does
        # not model: the prediction says so; 2 of 2 (room for each) and 2 of 4 (two per core) do not.
        for threads, uneven in ((3, True), (2, False), (4, False)):
            r = run(["--from", record, "--cluster", cpu_toml, "--cores-per-node", "4", "--nproc-per-node", "2",
                     "--num-threads", str(threads), "--format", "json", *probes])
            check(r.returncode == 0, f"2 ranks of {threads} threads on 4 cores: exit {r.returncode}: {r.stderr}")
            pred = json.loads(r.stdout)["runs"][0]["prediction"]
            said = any(a.startswith("not modelled:") and "do not divide evenly" in a for a in pred["assumptions"])
            check(pred["cpu_contention"]["uneven_time_slicing"] is uneven and said == uneven,
                  f"2 ranks of {threads} threads on 4 cores: uneven_time_slicing "
                  f"{pred['cpu_contention']['uneven_time_slicing']}, said in the assumptions: {said}")

        # Hybrid 2x2 from comm documents: the 4-rank one leads (the world, its compute sharing),
        # the 2-rank one times the groups of 2; without it, or without naming the ranks, refused.
        comm4 = write("comm4.json", comm_document(4))
        hybrid = ["--from", record, "--cluster", "measured", "--nproc-per-node", "4", "--distributed-mode", "fsdp",
                  "--shard-mode", "hybrid_zero2", "--sharding-size", "2", "--format", "json"]
        r = run([*hybrid, "--comm", f"{comm4},{comm}"])
        check(r.returncode == 0, f"hybrid from two documents: {r.returncode} {r.stderr}")
        pred = json.loads(r.stdout)["runs"][0]["prediction"]
        groups = {c["group_size"] for c in pred["communication"]["collectives"]}
        check(groups == {2}, f"hybrid 2x2: every collective over a group of 2, got {groups}")
        check(any("hybrid groups on one machine" in a for a in pred["assumptions"]), "the group timing is stated")
        check(comm in pred["cluster"]["collective_times"], "the 2-rank document is named as the groups' source")
        # Both groups of 2 communicate at once on the 4-rank node that comm measured 2 ranks on: x2
        # against the same reduction in ZeRO-2 over the 2 ranks alone.
        r = run(["--from", record, "--cluster", "measured", "--comm", comm, "--nproc-per-node", "2",
                 "--distributed-mode", "fsdp", "--shard-mode", "zero2", "--format", "json", *probes])
        check(r.returncode == 0, f"ZeRO-2 on 2 ranks: {r.stderr}")
        alone = json.loads(r.stdout)["runs"][0]["prediction"]["communication"]["collectives"]
        def reduce_ms(collectives):
            return [c["ms_each"] for c in collectives if c["purpose"] == "reduce_gradients"]
        check(len(reduce_ms(alone)) > 0 and
              all(abs(h - 2 * a) < 1e-9 * a for h, a in zip(reduce_ms(pred["communication"]["collectives"]), reduce_ms(alone))),
              f"hybrid's shard reductions twice the 2-rank ones: {reduce_ms(pred['communication']['collectives'])} vs "
              f"{reduce_ms(alone)}")
        for args, expected in (([*hybrid, "--comm", comm4], "measure that group size too"),
                               ([*hybrid[:4], *hybrid[6:], "--comm", f"{comm4},{comm}"],
                                "with several --comm documents, name the ranks with --nproc-per-node"),
                               ([*hybrid, "--comm", f"{comm},{comm}"], "no document was measured over 4 ranks")):
            r = run(args)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and expected in lines[0],
                  f"{args}: want exit 2 and one line with '{expected}', got {r.returncode} {lines}")

        # A size-bucketed FSDP record (--bucketing-mode size): predict lays out the run's units from
        # its parameter names and its threshold, and times the same units. At 100'000 parameters each
        # block's mlp.fc (132'864) is a unit, its attention (66'048) stays in the root with ln_f, and
        # lm_head and wte are units: 9 units. Under ZeRO-3 every one of them is gathered for forward and
        # again for backward, as tokbench's step gathers each block's units.
        sized = measured_record()
        shapes = [{"name": "lm_head.weight", "unit": "head", "elements": 6_438_912},
                  {"name": "transformer.wte.weight", "unit": "embedding", "elements": 6_438_912}]
        for i in range(6):
            shapes += [{"name": f"transformer.h.{i}.attn.qkv.weight", "unit": f"block.{i}", "elements": 66_048},
                       {"name": f"transformer.h.{i}.mlp.fc.weight", "unit": f"block.{i}", "elements": 132_864}]
        shapes.append({"name": "transformer.ln_f.weight", "unit": "head", "elements": 256})
        sized["unit_timings"]["parameter_shapes"] = shapes
        # device "auto" as given: the prediction's config names the device it resolves to on the cluster.
        sized["config"].update(bucketing_mode="size", fsdp_bucket_params=1e5, fsdp_min_unit_params=100_000,
                               device="auto")
        sized_path = write("sized.json", sized)
        r = run(["--from", sized_path, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp",
                 "--format", "json", *probes])
        check(r.returncode == 0, f"size-bucketed record: {r.stderr}")
        p = json.loads(r.stdout)["runs"][0]
        units = sorted({c["unit"] for c in p["prediction"]["communication"]["collectives"]})
        want = sorted(["root", "lm_head", "transformer.wte"] + [f"transformer.h.{i}.mlp.fc" for i in range(6)])
        check(units == want, f"size units predicted: {units}, want {want}")
        check(p["Distributed Mode"] == "fsdp_zero2_size_bucketing" and p["bucketing"] == "size"
              and p["config"]["fsdp_min_unit_params"] == 100_000, "the size-bucketed prediction's label and threshold")
        # The target's config block names the device it runs on (the cluster's), not the measured "auto".
        check(p["config"]["device"] == "cpu" and p["device"] == "cpu",
              f"the prediction's config.device and device: {p['config'].get('device')}, {p.get('device')}")
        r = run(["--from", sized_path, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp",
                 "--fsdp-bucket-params", "1e9", "--format", "json", *probes])
        units = sorted({c["unit"] for c in json.loads(r.stdout)["runs"][0]["prediction"]["communication"]["collectives"]})
        check(r.returncode == 0 and units == ["root"], f"--fsdp-bucket-params 1e9: one unit, got {units}")
        r = run(["--from", sized_path, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp",
                 "--shard-mode", "zero3", "--format", "json", *probes])
        check(r.returncode == 0, f"size-bucketed ZeRO-3: {r.stderr}")
        p = json.loads(r.stdout)["runs"][0]
        gathers = sorted((c["unit"], c["purpose"]) for c in p["prediction"]["communication"]["collectives"]
                         if c["purpose"].startswith("gather_for"))
        check(gathers == sorted((u, g) for u in want for g in ("gather_for_forward", "gather_for_backward")),
              f"size units under ZeRO-3: each gathered for forward and backward, got {gathers}")
        check(p["Distributed Mode"] == "fsdp_zero3_size_bucketing", f"ZeRO-3 size label: {p['Distributed Mode']}")
        for args, expected in [
                (["--fsdp-bucket-params", "0"], "--fsdp-bucket-params 0 is not valid"),
                (["--bucketing-mode", "block", "--fsdp-bucket-params", "5"], "applies to --bucketing-mode size only")]:
            r = run(["--from", sized_path, "--cluster", cpu_toml, "--nproc-per-node", "2", "--distributed-mode", "fsdp",
                     *args])
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and expected in lines[0],
                  f"{args}: want exit 2 and one line with '{expected}', got {r.returncode} {lines}")

        # Every text format; html needs a file; a sweep's JSON is read back (each run predicted).
        for fmt in ("print", "csv", "markdown", "json"):
            r = run(["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--format", fmt, *probes])
            check(r.returncode == 0 and "pythia-14m" in r.stdout, f"--format {fmt}: {r.returncode} {r.stderr}")
            if fmt != "json":
                check("predicted" in r.stdout, f"--format {fmt}: the status column says predicted")
        sweep_doc = write("sweep.json", {"context": {}, "runs": [measured_record(), dict(measured_record(), status="oom")]})
        r = run(["--from", sweep_doc, "--cluster", cpu_toml, "--nproc-per-node", "4", "--distributed-mode", "fsdp",
                 "--shard-mode", "zero3", "--bucketing-mode", "block", "--format", "json"])
        check(r.returncode == 0, f"sweep JSON: {r.stderr}")
        check("skipping" in r.stderr and "status 'oom'" in r.stderr, "the failed run is skipped, said on stderr")
        runs = json.loads(r.stdout)["runs"]
        check(len(runs) == 1 and runs[0]["sharding_mode"] == "zero3" and runs[0]["bucketing"] == "block", "ZeRO-3 record")
        check(runs[0]["memory_parameters_GB"] < 0.0563 / 3, "ZeRO-3 holds a quarter of the parameters")
        r = run(["--from", record, "--cluster", cpu_toml, "--format", "html", "--output", os.path.join(tmp, "p.html")])
        check(r.returncode == 0 and os.path.getsize(os.path.join(tmp, "p.html")) > 0, f"html: {r.stderr}")
        # A GPU measured record on a preset, 2 nodes: the network shows up in exposed time.
        gpu = measured_record()
        gpu.update(device="cuda:0", device_name="NVIDIA H100 80GB HBM3", dtype="bf16-true", mfu_precision="bf16")
        gpu_path = write("gpu.json", gpu)
        r = run(["--from", gpu_path, "--cluster", "h100-sxm-8", "--nproc-per-node", "8", "--nnodes", "2",
                 "--distributed-mode", "fsdp", "--shard-mode", "hybrid_zero2", "--sharding-size", "8",
                 "--format", "json"])
        check(r.returncode == 0, f"h100 hybrid: {r.stderr}")
        h = json.loads(r.stdout)["runs"][0]
        check(h["Num GPUS"] == 16 and h["Sharding Size"] == 8 and h["sharding_mode"] == "hybrid_zero2", "hybrid keys")
        check(h["mfu"] is not None and h["mfu_peak_TFLOP_per_s"] == 989.5, "MFU against the cluster's bf16 peak")
        groups = {c["group"] for c in h["prediction"]["communication"]["collectives"]}
        check(groups == {"shard", "replica"}, f"hybrid collectives: {groups}")

        # The predicted time account and interval (docs/predict.md): a record with an account and
        # per-iteration times gives a prediction with both, which `tokbench explain` reads against
        # a measured record; print says them; without an account the prediction says it has none.
        accounted = write("accounted.json", dict(measured_record(), time_account=time_account(0.150),
                                                 iterations=iterations([150, 152, 149, 151]),
                                                 checkpoint_activations=False))
        pred_path = os.path.join(tmp, "pred.json")
        r = run(["--from", accounted, "--cluster", cpu_toml, "--nproc-per-node", "1", "--distributed-mode", "none",
                 "--format", "json", "--output", pred_path])
        check(r.returncode == 0, f"prediction with an account: {r.stderr}")
        with open(pred_path) as f:
            p = json.load(f)["runs"][0]
        total = sum(c["s"] for c in p["time_account"]["categories"].values())
        check(abs(total - p["average_iter_time"] / 1e3) < 1e-9, f"the account sums to the iteration: {total}")
        interval = p["prediction"]["interval_ms"]
        check(interval["low"] <= p["average_iter_time"] <= interval["high"], f"the interval holds it: {interval}")
        # explain reads predict's JSON of one run as that run, and the record alone as well.
        write("pred-record.json", p)
        for predicted_file in (pred_path, os.path.join(tmp, "pred-record.json")):
            r = subprocess.run([TOKBENCH, "explain", accounted, predicted_file], capture_output=True, text=True,
                               timeout=120)
            check(r.returncode == 0 and "eager predicted" in r.stdout and "GEMMs" in r.stdout
                  and "exposed communication" in r.stdout, f"explain {predicted_file}: {r.returncode} {r.stdout} {r.stderr}")
        r = run(["--from", accounted, "--cluster", cpu_toml, "--nproc-per-node", "2", "--format", "print", *probes])
        check(r.returncode == 0 and "by the measured run's spread (4 iterations" in r.stdout
              and "Its time account (ms per iteration): GEMMs" in r.stdout, f"print's interval and account: {r.stdout}")
        r = run(["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "2", "--format", "print", *probes])
        check(r.returncode == 0 and "No time account: the measured record has no time_account" in r.stdout
              and "no interval:" in r.stdout, f"print without an account or iterations: {r.stdout}")
        bare = os.path.join(tmp, "bare-pred.json")
        r = run(["--from", record, "--cluster", cpu_toml, "--nproc-per-node", "1", "--distributed-mode", "none",
                 "--format", "json", "--output", bare])
        r = subprocess.run([TOKBENCH, "explain", accounted, bare], capture_output=True, text=True, timeout=120)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and "the prediction has no time account" in lines[0],
              f"explain a prediction without an account: {r.returncode} {lines}")
    print("ok")


if __name__ == "__main__":
    main()
