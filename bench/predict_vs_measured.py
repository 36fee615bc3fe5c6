#!/usr/bin/env python3
"""tokbench predict's validation set: predictions against measured multi-rank runs on this machine.

Each case is a model and a parallel configuration (DDP, ZeRO-2, ZeRO-3, hybrid; GA 1 or 2; 2 or
4 ranks). Per round, world size by world size: `tokbench comm` at that size, then per case of
that size the one-rank run of its model and GA where this round has none yet (its unit timings
and time account are the prediction's input), `tokbench predict --cluster measured` and the
measured run, one after the other, and `tokbench explain PREDICTED
MEASURED` for the error per time-account category. Writes a Markdown page (machine, CPU model,
date, git revision, load average, error per case and per category) and a JSON of every number.

Usage: predict_vs_measured.py TOKBENCH OUT_DIR [--set validation|holdout] [--quick] [--cases REGEX] [--rounds N] [--docs]
    [--max-mean-error PCT] [--max-bias PCT [--expected-bias PCT]] [--max-error PCT] [--list]
  --set: the validation set (15 cases, default) or the held-out set (6 cases: models and shapes
    the validation set does not contain, never fitted to; its page predict-holdout-cpu-DATE.md)
  --quick: the ctest subset (3 cases of pythia-31m on 2 ranks, 3 rounds, about 2 minutes quiet)
  --cases: only the cases whose name matches REGEX (re.search), e.g. 'w2-ddp|zero3'
  --rounds: repeat every measurement N times, interleaved; each case compares the median
    prediction with the median measurement; with 2 or more rounds the stability of the
    prediction (item 2 of issue 37) is measured too: each round's one-rank run predicted with
    the first round's comm documents and its prediction's probes (--probes-from), so only the
    one-rank input differs; and again with the probes measured anew, for comparison
  --docs: also write the page to docs/results/predict-validation-cpu-DATE.md
  --max-*: exit 1 when the mean absolute error, the mean signed error (bias) or any case's
    absolute error exceeds PCT (default: report only)
  --expected-bias: the model's lean measured on a quiet machine (default 0); --max-bias then
    bounds the distance of the mean signed error from it, so the check catches a drift of the
    model either way with the same margin instead of one side's margin eaten by today's lean

Every rank runs one intra-op thread (--num-threads 1) and so does the one-rank input, so the
prediction has to account for ranks sharing this machine's cores, not a thread count.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

from bench_common import ROOT, cpu_model, reference_probe_ms, spread, write_result

# A Gemma-3-shaped model small enough for seconds per run: GeGLU MLP, query/key norms, the
# post-attention and post-MLP norms, one key/value group, sliding-window layers, scaled
# embeddings (litgpt Config fields, as Gemma-3-1b-it's, narrowed and with a small vocabulary).
GEMMA3_TINY = {
    "name": "gemma3-tiny", "block_size": 512, "n_layer": 4, "n_embd": 384, "vocab_size": 16384,
    "padded_vocab_size": 16384, "norm_class_name": "RMSNorm", "norm_qk": True, "post_attention_norm": True,
    "post_mlp_norm": True, "parallel_residual": False, "n_head": 6, "head_size": 64, "n_query_groups": 1,
    "attention_scores_scalar": 64, "sliding_window_size": 64, "sliding_window_indices": [1, 0, 1, 0],
    "rope_base": 1000000, "rotary_percentage": 1.0, "intermediate_size": 1536, "bias": False,
    "mlp_class_name": "GemmaMLP", "gelu_approximate": "tanh", "scale_embeddings": True,
    "rope_local_base_freq": 10000, "rope_indices": [1, 0, 1, 0],
}

# The held-out set's two models of its own (below): Qwen2.5's shape (RMSNorm, SwiGLU, two key/value
# groups, biases on q, k and v only) and phi-2's (LayerNorm shared by the parallel attention and
# MLP, tanh GELU, 40% rotary, biases everywhere and on the head), narrowed as gemma3-tiny is.
QWEN_TINY = {
    "name": "qwen-tiny", "block_size": 512, "n_layer": 4, "n_embd": 512, "vocab_size": 16384,
    "padded_vocab_size": 16384, "norm_class_name": "RMSNorm", "norm_eps": 1e-06, "parallel_residual": False,
    "n_head": 8, "head_size": 64, "n_query_groups": 2, "attn_bias": True, "rope_base": 1000000,
    "rotary_percentage": 1.0, "intermediate_size": 1536, "bias": False, "mlp_class_name": "LLaMAMLP",
}
PHI_TINY = {
    "name": "phi-tiny", "block_size": 512, "n_layer": 3, "n_embd": 640, "vocab_size": 20000,
    "padded_vocab_size": 20480, "shared_attention_norm": True, "n_head": 8, "head_size": 80,
    "n_query_groups": 8, "rotary_percentage": 0.4, "intermediate_size": 2560, "gelu_approximate": "tanh",
    "lm_head_bias": True,
}
MODEL_CONFIGS = {"gemma3-tiny": GEMMA3_TINY, "qwen-tiny": QWEN_TINY, "phi-tiny": PHI_TINY}

# Three architectures the tests do not train: GPT-NeoX (LayerNorm, parallel residual, GELU MLP),
# LLaMA (RMSNorm, SwiGLU, grouped queries: SmolLM2's first two blocks, its 49k vocabulary) and
# Gemma 3 (above). Each keeps a one-rank iteration near 0.1-0.3 s on one core of this machine.
# The held-out set's models (pythia-70m cut to 4 blocks, qwen-tiny, phi-tiny) are in neither the
# validation set nor the tests.
MODELS = {
    "pythia-31m": ["--model-name", "pythia-31m"],
    "smollm2-2l": ["--model-name", "SmolLM2-135M", "--n-layers", "2"],
    "pythia-70m-4l": ["--model-name", "pythia-70m", "--n-layers", "4"],
    # the rest by --model-config, written into OUT_DIR from MODEL_CONFIGS
}
SEQ_LEN = 128

# (model, world, strategy, GA); hybrid shards over groups of 2 of the 4 ranks.
CASES = [
    ("pythia-31m", 2, "ddp", 1), ("pythia-31m", 2, "zero3", 1), ("pythia-31m", 2, "zero2", 2),
    ("pythia-31m", 4, "ddp", 2), ("pythia-31m", 4, "hybrid_zero2", 1),
    ("smollm2-2l", 2, "ddp", 2), ("smollm2-2l", 2, "zero2", 1), ("smollm2-2l", 2, "zero3", 2),
    ("smollm2-2l", 4, "zero3", 1), ("smollm2-2l", 4, "hybrid_zero3", 2),
    ("gemma3-tiny", 2, "ddp", 1), ("gemma3-tiny", 2, "zero3", 2), ("gemma3-tiny", 2, "zero2", 1),
    ("gemma3-tiny", 4, "ddp", 1), ("gemma3-tiny", 4, "hybrid_zero2", 2),
]
QUICK = ["pythia-31m-w2-ddp-ga1", "pythia-31m-w2-zero3-ga1", "pythia-31m-w2-zero2-ga2"]

# The held-out set (--set holdout, issue 37's goal: configurations and models the validation set
# does not contain): three models it does not hold, and shapes it has not: GA 3, ZeRO-2 and
# ZeRO-3 on 4 ranks apart from hybrid, hybrid ZeRO-3 at GA 1, and 3 ranks. Never fitted to.
HOLDOUT = [
    ("pythia-70m-4l", 2, "zero3", 3), ("pythia-70m-4l", 4, "zero2", 1),
    ("qwen-tiny", 2, "ddp", 3), ("qwen-tiny", 4, "hybrid_zero3", 1),
    ("phi-tiny", 3, "ddp", 1), ("phi-tiny", 4, "zero3", 2),
]
SETS = {"validation": CASES, "holdout": HOLDOUT}

# The one-rank input: 15 measured iterations (the median the prediction's interval and, from
# this revision, its compute level come from) and a unit-timing pass of 5. The measured runs:
# 10 measured iterations, averaged as `tokbench run` reports them.
ONE_RANK_ITERS = ["--max-iters", "20", "--warmup-iters", "5", "--unit-timing-iters", "5"]
MEASURED_ITERS = ["--max-iters", "14", "--warmup-iters", "4"]
COMM = ["--iters", "10", "--warmup-iters", "3"]
# `tokbench comm`'s largest size per model: its largest collective (ZeRO-3's root unit, the
# embedding and the head; fp32) rounded up; beyond it a prediction extrapolates linearly.
COMM_MAX_MB = {"pythia-31m": 128, "smollm2-2l": 256, "gemma3-tiny": 64, "pythia-70m-4l": 256, "qwen-tiny": 128,
               "phi-tiny": 128}

CATEGORIES = ["gemm", "attention", "normalization", "elementwise", "loss", "optimizer", "data_host",
              "exposed_comm", "device_idle", "other"]


def case_name(model, world, strategy, ga):
    return f"{model}-w{world}-{strategy}-ga{ga}"


def strategy_args(strategy):
    if strategy == "ddp":
        return ["--distributed-mode", "ddp"]
    args = ["--distributed-mode", "fsdp", "--shard-mode", strategy, "--bucketing-mode", "block"]
    if strategy.startswith("hybrid"):
        args += ["--sharding-size", "2"]
    return args


def run(cmd, log):
    with open(log, "w") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}; see {log}")


def load_average():
    one, five, fifteen = os.getloadavg()
    return {"1min": one, "5min": five, "15min": fifteen, "at": time.strftime("%H:%M:%S", time.gmtime())}


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measured_times(record):
    return [it["time_ms"] for it in record.get("iterations", []) if not it.get("warmup")]


def one_rank_summary(record):
    """What the prediction reads from a one-rank run, and how noisy each part was."""
    times = sorted(measured_times(record))
    q = statistics.quantiles(times, n=4, method="inclusive") if len(times) >= 2 else [None] * 3
    return {"window_median_ms": statistics.median(times) if times else None,
            "window_mean_ms": statistics.fmean(times) if times else None,
            "window_q1_ms": q[0], "window_q3_ms": q[2], "window_iterations": len(times),
            "unit_pass_iteration_ms": 1e3 * record["unit_timings"]["iteration_seconds"],
            "unit_pass_iterations": record["unit_timings"]["iterations"]}


def categories_ms(record):
    account = record.get("time_account") or {}
    cats = account.get("categories") or {}
    return {c: 1e3 * cats[c]["s"] for c in CATEGORIES if c in cats and cats[c].get("s") is not None}


def measure_case(a, tb, results, model_args, common, case, base, comm_docs, comm_first, rnd, probe_at_comm):
    """One case's predictions (this round's, and the stability figures) and its measured run."""
    model, w, strategy, ga = case
    tag = f"r{rnd}"
    name = case_name(*case)
    shape = ["--nproc-per-node", str(w), "--global-batch-size", str(w * ga)]

    def predict(docs, out, probes=None):
        # The case's own world size first, then every other document of the round so far (as
        # `sweep --predict` gives them): hybrid sharding's groups are timed from the 2-rank one,
        # and where the case's ranks time-slice the cores (3 and 4 one-thread ranks on 2) the
        # 2-rank one, a core per rank, holds Gloo's own busy fraction, which the contention model
        # prefers to the share a time-sliced collective got (docs/predict.md, "CPU ranks share cores").
        comm = ",".join([docs[w]] + [docs[size] for size in sorted(docs) if size != w])
        run([tb, "predict", "--from", base, "--cluster", "measured", "--comm", comm, *shape,
             *strategy_args(strategy), "--num-threads", "1", "--format", "json", "--output", out,
             *(["--probes-from", probes] if probes else [])],
            out.replace(".json", ".log"))
        return json.load(open(out))["runs"][0]

    pred_path = os.path.join(a.out, f"{name}-predicted-{tag}.json")
    p = predict(comm_docs, pred_path)
    # The stability figure: this round's one-rank run with the first round's comm documents
    # and the first round's probes (copy rate, AdamW costs: --probes-from), so only the
    # one-rank input differs; beside it the same with the probes measured again, as
    # every prediction made without --probes-from is.
    first_pred = os.path.join(a.out, f"{name}-predicted-r0.json")
    p_first_comm = p if rnd == 0 else predict(comm_first, pred_path.replace(".json", "-comm0.json"), first_pred)
    p_first_comm_probed = p if rnd == 0 else predict(comm_first, pred_path.replace(".json", "-comm0-probed.json"))
    with open(pred_path.replace(".json", "-run.json"), "w") as f:
        json.dump(p, f)  # explain takes one run's record
    meas_path = os.path.join(a.out, f"{name}-measured-{tag}.json")
    load_before = load_average()
    probe_before = reference_probe_ms(tb)[0] if probe_at_comm else None
    run([tb, "run", *model_args[model], *common, *MEASURED_ITERS, *shape, *strategy_args(strategy),
         "--json-path", meas_path], meas_path.replace(".json", ".log"))
    probe_after = reference_probe_ms(tb)[0] if probe_at_comm else None
    around = [x for x in (probe_before, probe_after) if x]
    # How much slower (+) or faster (-) the machine's GEMM ran around the measured run than right
    # after the comm document the prediction is of: what the host moved between the two moments.
    machine_moved = statistics.fmean(around) / probe_at_comm - 1 if probe_at_comm and around else None
    m = json.load(open(meas_path))
    explain = subprocess.run([tb, "explain", pred_path.replace(".json", "-run.json"), meas_path,
                              "--format", "json"], capture_output=True, text=True)
    interval = (p.get("prediction") or {}).get("interval_ms") or {}
    results[name]["rounds"].append({
        "predicted_ms": p["average_iter_time"], "measured_ms": m["average_iter_time"],
        "measured_median_ms": statistics.median(measured_times(m)),
        "predicted_with_first_comm_ms": p_first_comm["average_iter_time"],
        "predicted_with_first_comm_probed_ms": p_first_comm_probed["average_iter_time"],
        "interval_ms": [interval.get("low"), interval.get("high")],
        "predicted_categories_ms": categories_ms(p), "measured_categories_ms": categories_ms(m),
        "explain": json.loads(explain.stdout) if explain.returncode == 0 else
        {"failed": explain.returncode, "stderr": explain.stderr[-500:]},
        "load_before": load_before,
        "machine_probe_ms": {"after_comm": probe_at_comm, "before": probe_before, "after": probe_after},
        "machine_moved": machine_moved,
    })
    r = results[name]["rounds"][-1]
    moved = f", machine {100 * machine_moved:+.1f}% since the comm document" if machine_moved is not None else ""
    print(f"{name} round {rnd + 1}/{a.rounds}: predicted {r['predicted_ms']:.1f} ms, measured "
          f"{r['measured_ms']:.1f} ms (load {load_before['1min']:.1f}{moved})", file=sys.stderr, flush=True)


def measure(a, cases, tb):
    """Every round's runs; returns the per-case and per-one-rank-run figures."""
    model_args = dict(MODELS)
    for m, config in MODEL_CONFIGS.items():
        path = os.path.join(a.out, f"{m}.json")
        with open(path, "w") as f:
            json.dump(config, f)
        model_args[m] = ["--model-config", path]
    common = ["--seq-len", str(SEQ_LEN), "--num-threads", "1"]
    worlds = sorted({w for (_, w, _, _) in cases} | {2 for (_, _, s, _) in cases if s.startswith("hybrid")})
    inputs = sorted({(m, ga) for (m, _, _, ga) in cases})
    results = {case_name(*c): {"model": c[0], "W": c[1], "strategy": c[2], "GA": c[3], "rounds": []} for c in cases}
    one_rank = {f"{m}-ga{ga}": [] for (m, ga) in inputs}
    comm_first = {}
    revisions = set()  # the tokbench binary's, as its records say
    # The rounds interleave, so a stretch in which a neighbour slows this machine lands in one
    # round of every figure rather than in all of one figure. Within a round the cases go world
    # size by world size, each group right after its comm document, so the collective times a
    # prediction reads and the measured run it is compared with are minutes apart at most (and,
    # with --compute-level comm-document, the moment its compute is carried to). Taking every
    # document first left 8-10 minutes between the 2-rank document and the 2-rank runs, on a host
    # whose speed moved 10-20% in that time (held-out run of 2026-12-06: the 2-rank cases +18-24%,
    # the others within 9%). The predictions use tokbench predict's default compute level: the
    # one-rank run's own from 2026-12-07 (docs/predict.md, "The compute's level").
    comm_max = f"{max(COMM_MAX_MB[m] for (m, _, _, _) in cases)}M"
    for rnd in range(a.rounds):
        tag = f"r{rnd}"
        comm_docs = {}
        bases = {}  # (model, GA) -> this round's one-rank record, taken at its first use
        for w in worlds:
            path = os.path.join(a.out, f"comm-w{w}-{tag}.json")
            run([tb, "comm", "--nproc-per-node", str(w), "--num-threads", "1", *COMM, "--max-bytes", comm_max,
                 "--format", "json",
                 "--output", path], path.replace(".json", ".log"))
            comm_docs[w] = path
            probe_at_comm = reference_probe_ms(tb)[0] if a.machine_probes == "on" else None
            if rnd == 0:
                comm_first[w] = path
            for (model, cw, strategy, ga) in cases:
                if cw != w:
                    continue
                if (model, ga) not in bases:
                    base = os.path.join(a.out, f"{model}-w1-ga{ga}-{tag}.json")
                    run([tb, "run", *model_args[model], *common, *ONE_RANK_ITERS, "--global-batch-size", str(ga),
                         "--json-path", base], base.replace(".json", ".log"))
                    base_record = json.load(open(base))
                    one_rank[f"{model}-ga{ga}"].append(one_rank_summary(base_record))
                    revisions.add((base_record.get("environment") or {}).get("git_revision") or "unknown")
                    bases[(model, ga)] = base
                measure_case(a, tb, results, model_args, common, (model, w, strategy, ga), bases[(model, ga)],
                             comm_docs, comm_first, rnd, probe_at_comm)
    return results, one_rank, ", ".join(sorted(revisions))


def summarize(results, one_rank):
    for name, c in results.items():
        rounds = c["rounds"]
        c["predicted_ms"] = statistics.median(r["predicted_ms"] for r in rounds)
        c["measured_ms"] = statistics.median(r["measured_ms"] for r in rounds)
        c["error"] = (c["predicted_ms"] - c["measured_ms"]) / c["measured_ms"]
        # The prediction starts from the one-rank run's median iteration: against the measured
        # run's median too, which a neighbour's burst on the host (one or two iterations at twice
        # the time) does not move.
        c["measured_median_ms"] = statistics.median(r["measured_median_ms"] for r in rounds)
        c["error_vs_median"] = (c["predicted_ms"] - c["measured_median_ms"]) / c["measured_median_ms"]
        c["measured_round_spread"] = spread([r["measured_ms"] for r in rounds])
        c["prediction_round_spread"] = spread([r["predicted_ms"] for r in rounds])
        # Item 2: predictions from one-rank runs minutes apart, the comm documents held fixed.
        c["prediction_stability"] = spread([r["predicted_with_first_comm_ms"] for r in rounds])
        c["prediction_stability_probed"] = spread([r["predicted_with_first_comm_probed_ms"] for r in rounds])
        lows = [r["interval_ms"][0] for r in rounds if r["interval_ms"][0] is not None]
        highs = [r["interval_ms"][1] for r in rounds if r["interval_ms"][1] is not None]
        c["interval_ms"] = [statistics.median(lows), statistics.median(highs)] if lows and highs else None
        c["measured_in_interval"] = (c["interval_ms"][0] <= c["measured_ms"] <= c["interval_ms"][1]
                                     if c["interval_ms"] else None)
        cats = {}
        for cat in CATEGORIES:
            pairs = [(r["predicted_categories_ms"].get(cat), r["measured_categories_ms"].get(cat)) for r in rounds]
            pairs = [(p, m) for p, m in pairs if p is not None and m is not None]
            if pairs:
                p, m = statistics.median(x for x, _ in pairs), statistics.median(y for _, y in pairs)
                cats[cat] = {"predicted_ms": p, "measured_ms": m, "error_ms": p - m,
                             "error_of_iteration": (p - m) / c["measured_ms"]}
        c["categories"] = cats
        moved = [r.get("machine_moved") for r in rounds]
        c["machine_moved"] = statistics.median(moved) if moved and None not in moved else None
        # Diagnostic only: the error were every part of the iteration to move as the GEMM did
        # between the comm document's moment and the measured run's (CPU ranks compute and reduce
        # on the same cores); the prediction itself is of the document's moment.
        c["error_at_measured_moment"] = (statistics.median(
            (r["predicted_ms"] * (1 + r["machine_moved"]) - r["measured_ms"]) / r["measured_ms"] for r in rounds)
            if c["machine_moved"] is not None else None)
    errors = [c["error"] for c in results.values()]
    summary = {
        "cases": len(errors),
        "mean_abs_error": statistics.fmean(abs(e) for e in errors),
        "mean_error": statistics.fmean(errors),
        "max_abs_error": max(abs(e) for e in errors),
        "predicted_faster": sum(e < 0 for e in errors),
    }
    by_median = [c["error_vs_median"] for c in results.values()]
    summary["vs_median"] = {"mean_abs_error": statistics.fmean(abs(e) for e in by_median),
                            "mean_error": statistics.fmean(by_median), "max_abs_error": max(abs(e) for e in by_median),
                            "predicted_faster": sum(e < 0 for e in by_median)}
    for w in sorted({c["W"] for c in results.values()}):
        ew = [c["error"] for c in results.values() if c["W"] == w]
        summary[f"mean_abs_error_w{w}"] = statistics.fmean(abs(e) for e in ew)
    pairs = [((r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"], r["machine_moved"])
             for c in results.values() for r in c["rounds"] if r.get("machine_moved") is not None]
    if len(pairs) >= 3:
        levelled = [c["error_at_measured_moment"] for c in results.values() if c["error_at_measured_moment"] is not None]
        summary["machine_moved"] = {
            "case_rounds": len(pairs),
            "mean_abs_moved": statistics.fmean(abs(m) for _, m in pairs),
            "max_abs_moved": max(abs(m) for _, m in pairs),
            "correlation_with_error": statistics.correlation([e for e, _ in pairs], [m for _, m in pairs])
            if len({m for _, m in pairs}) > 1 and len({e for e, _ in pairs}) > 1 else None,
            "mean_abs_error_at_measured_moment": statistics.fmean(abs(e) for e in levelled) if levelled else None,
            "max_abs_error_at_measured_moment": max(abs(e) for e in levelled) if levelled else None,
        }
    stab = [c["prediction_stability"] for c in results.values() if c["prediction_stability"] is not None]
    summary["prediction_stability_max"] = max(stab) if stab else None
    summary["prediction_stability_mean"] = statistics.fmean(stab) if stab else None
    probed = [c["prediction_stability_probed"] for c in results.values() if c["prediction_stability_probed"] is not None]
    summary["prediction_stability_probed_mean"] = statistics.fmean(probed) if probed else None
    summary["prediction_stability_probed_max"] = max(probed) if probed else None
    inputs = {}
    for key, runs in one_rank.items():
        inputs[key] = {"rounds": runs,
                       "window_median_spread": spread([r["window_median_ms"] for r in runs]),
                       "window_mean_spread": spread([r["window_mean_ms"] for r in runs]),
                       "unit_pass_spread": spread([r["unit_pass_iteration_ms"] for r in runs])}
    summary["per_category"] = {
        cat: {"mean_error_of_iteration": statistics.fmean(v), "mean_abs_error_of_iteration": statistics.fmean(abs(x) for x in v)}
        for cat in CATEGORIES
        for v in [[c["categories"][cat]["error_of_iteration"] for c in results.values() if cat in c["categories"]]]
        if v
    }
    return summary, inputs


def pct(x, signed=True):
    return "n/a" if x is None else (f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%")


def markdown(a, results, summary, inputs, loads, started, minutes, binary_revision):
    lines = []
    start, end = loads["start"], loads["end"]
    quiet = start["1min"] < 0.5
    set_name = "quick subset" if a.quick else f"{a.set} set"
    lines += [f"# tokbench predict against measured runs: the {a.set} set ({started[:10]})", "",
              f"Machine: {cpu_model()}, {os.cpu_count()} logical CPUs; tokbench built at {binary_revision} (this script "
              f"at {git_revision()}); "
              f"{set_name}{', cases ' + a.cases if a.cases else ''}; "
              f"{a.rounds} interleaved round(s); {minutes:.1f} minutes; started {started} UTC.", "",
              f"Load average (1/5/15 min) at the start {start['1min']:.2f} / {start['5min']:.2f} / {start['15min']:.2f}, "
              f"at the end {end['1min']:.2f} / {end['5min']:.2f} / {end['15min']:.2f} (the end includes this "
              f"script's own ranks). " + ("Quiet at the start (1-minute load below 0.5)." if quiet else
                                          "**Not quiet**: other work shared the cores; these figures are not "
                                          "the model's error alone."), "",
              "```", f"python3 bench/predict_vs_measured.py {' '.join(sys.argv[1:])}", "```", "",
              f"T = {SEQ_LEN}, micro-batch 1, one intra-op thread per rank; one-rank input "
              f"`{' '.join(ONE_RANK_ITERS)}`, measured runs `{' '.join(MEASURED_ITERS)}`; each figure the median "
              "of the rounds. Error = (predicted − measured) / measured.", "",
              "| case | predicted (ms) | measured (ms) | error | measured median (ms) | error vs median | interval (ms) | "
              "measured inside | prediction moved (one-rank input only) | moved, probes measured again | measured moved | "
              "machine moved since the comm document |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, c in results.items():
        iv = f"{c['interval_ms'][0]:.1f}–{c['interval_ms'][1]:.1f}" if c["interval_ms"] else "n/a"
        inside = {True: "yes", False: "no", None: "n/a"}[c["measured_in_interval"]]
        lines.append(f"| {name} | {c['predicted_ms']:.1f} | {c['measured_ms']:.1f} | {pct(c['error'])} | "
                     f"{c['measured_median_ms']:.1f} | {pct(c['error_vs_median'])} | {iv} | "
                     f"{inside} | {pct(c['prediction_stability'], False)} | {pct(c['prediction_stability_probed'], False)} | "
                     f"{pct(c['measured_round_spread'], False)} | {pct(c.get('machine_moved'))} |")
    s = summary
    lines += ["", f"Mean absolute error **{pct(s['mean_abs_error'], False)}**, mean signed error (bias) "
              f"{pct(s['mean_error'])}, largest {pct(s['max_abs_error'], False)} over {s['cases']} cases; "
              f"{s['predicted_faster']} of {s['cases']} predicted faster than measured. "
              + "; ".join(f"W = {k[-1]}: mean absolute {pct(v, False)}" for k, v in s.items()
                          if k.startswith("mean_abs_error_w")) + ".",
              "", f"Against the measured runs' median iteration (the statistic the prediction starts from, which "
              f"a burst of a neighbour on the host moves less than the mean): mean absolute error "
              f"**{pct(s['vs_median']['mean_abs_error'], False)}**, bias {pct(s['vs_median']['mean_error'])}, largest "
              f"{pct(s['vs_median']['max_abs_error'], False)}; {s['vs_median']['predicted_faster']} of {s['cases']} "
              f"predicted faster."]
    mm = s.get("machine_moved")
    if mm:
        corr = "n/a" if mm["correlation_with_error"] is None else f"{mm['correlation_with_error']:+.2f}"
        lines += ["", f"The machine between the two moments (`--machine-probes`: the reference GEMM in a short one-rank "
                  f"run right after each comm document, and right before and after each measured run): it moved "
                  f"{pct(mm['mean_abs_moved'], False)} on average, at most {pct(mm['max_abs_moved'], False)}, over "
                  f"{mm['case_rounds']} case-rounds; correlation of the round's error with that move {corr}. Were "
                  f"every part of the iteration to move as the GEMM did, the errors would be "
                  f"{pct(mm['mean_abs_error_at_measured_moment'], False)} mean absolute, largest "
                  f"{pct(mm['max_abs_error_at_measured_moment'], False)} (a diagnostic, for predictions carried to the "
                  f"comm document's moment, tokbench predict --compute-level comm-document; the goal is judged on the "
                  f"errors above)."]
    if s["prediction_stability_max"] is not None:
        lines += ["", f"Stability (issue 37, item 2: predictions from one-rank runs made minutes apart, the comm "
                  f"documents and the first round's probes held fixed, `--probes-from`): the prediction moved "
                  f"{pct(s['prediction_stability_mean'], False)} on average, at most "
                  f"{pct(s['prediction_stability_max'], False)} (largest − smallest over the rounds, of their median; "
                  f"the bound is 2%); with the copy-rate and AdamW probes measured again for each prediction, "
                  f"{pct(s['prediction_stability_probed_mean'], False)} on average, at most "
                  f"{pct(s['prediction_stability_probed_max'], False)}."]
    lines += ["", "## Error by category", "",
              "Predicted − measured, ms per iteration (medians over the rounds), from the predicted time "
              "account and the measured run's (`tokbench explain PREDICTED MEASURED` says the same per case; "
              "its JSON is in the results file).", "",
              "| case | " + " | ".join(CATEGORIES) + " |", "|---|" + "---|" * len(CATEGORIES)]
    for name, c in results.items():
        cells = [f"{c['categories'][cat]['error_ms']:+.1f}" if cat in c["categories"] else "n/a" for cat in CATEGORIES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    pc = s["per_category"]
    lines.append("| **mean, % of the iteration** | " + " | ".join(
        pct(pc[cat]["mean_error_of_iteration"]) if cat in pc else "n/a" for cat in CATEGORIES) + " |")
    lines += ["", "## The one-rank input", "",
              "How much each statistic of the one-rank runs moved between rounds (largest − smallest, of "
              "the median): the measured window's median and mean, and the unit-timing pass's iteration (its median; its mean before 2026-12-06).", "",
              "| one-rank run | window median | window mean | unit-timing pass | window relative IQR (per round) |",
              "|---|---|---|---|---|"]
    for key, v in inputs.items():
        iqr = ", ".join(f"{100 * (r['window_q3_ms'] - r['window_q1_ms']) / r['window_median_ms']:.1f}%"
                        for r in v["rounds"] if r["window_q1_ms"] is not None)
        lines.append(f"| {key} | {pct(v['window_median_spread'], False)} | {pct(v['window_mean_spread'], False)} | "
                     f"{pct(v['unit_pass_spread'], False)} | {iqr} |")
    return "\n".join(lines) + "\n"


def add_bound_arguments(ap):
    """The --max-* bounds a summary is held to, here and in predict_replay.py."""
    ap.add_argument("--max-mean-error", type=float, default=None)
    ap.add_argument("--max-bias", type=float, default=None)
    ap.add_argument("--expected-bias", type=float, default=0.0,
                    help="the mean signed error a quiet run of today's model gives, percent; --max-bias is measured from it")
    ap.add_argument("--max-error", type=float, default=None)


def bad_bound(a):
    """One line naming a bound that cannot be met by any summary, or None."""
    if a.max_bias is not None and a.max_bias < 0:
        return f"--max-bias: {a.max_bias} is not valid; valid: a distance in percent points, 0 or more"
    return None


def bounds_crossed(a, summary):
    """Each --max-* bound the summary crosses, in words (an empty list when it meets them all)."""
    failed = []
    if a.max_mean_error is not None and 100 * summary["mean_abs_error"] > a.max_mean_error:
        failed.append(f"mean absolute error {pct(summary['mean_abs_error'], False)} above {a.max_mean_error}%")
    if a.max_bias is not None and abs(100 * summary["mean_error"] - a.expected_bias) > a.max_bias:
        failed.append(f"mean signed error {pct(summary['mean_error'])} more than {a.max_bias} points from the "
                      f"expected {a.expected_bias:+.1f}%")
    if a.max_error is not None and 100 * summary["max_abs_error"] > a.max_error:
        failed.append(f"largest error {pct(summary['max_abs_error'], False)} above {a.max_error}%")
    return failed


def report_bounds(a, summary, loads):
    """Exit status of the --max-* checks on a summary: 1 with one FAIL line naming each bound
    crossed and the load average, else 0."""
    failed = bounds_crossed(a, summary)
    if failed:
        print("FAIL: " + "; ".join(failed) + f" (load average at the start {loads['start']['1min']:.2f}, "
              f"at the end {loads['end']['1min']:.2f})", file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tokbench")
    ap.add_argument("out")
    ap.add_argument("--set", choices=sorted(SETS), default="validation",
                    help="validation (15 cases, the set the model is checked on) or holdout (6 cases of models and "
                         "configurations the validation set does not contain, issue 37's goal)")
    ap.add_argument("--quick", action="store_true", help="the ctest subset: " + ", ".join(QUICK))
    ap.add_argument("--cases", default=None, help="only the cases whose name matches this regular expression")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved repetitions (default 3 with --quick, else 2)")
    ap.add_argument("--machine-probes", choices=["on", "off"], default=None,
                    help="time the reference GEMM in a short run right after each comm document and right before "
                         "and after each measured run, and report how far the machine moved between the two moments "
                         "(default on, off with --quick: about 1.5 s a probe)")
    ap.add_argument("--docs", action="store_true", help="also write docs/results/predict-validation-cpu-DATE.md")
    ap.add_argument("--list", action="store_true", help="print the selected cases and exit")
    ap.add_argument("--recheck", metavar="JSON", default=None,
                    help="measure nothing: apply the --max-* bounds to a saved predict-validation.json")
    add_bound_arguments(ap)
    a = ap.parse_args()
    if bad_bound(a):
        print(bad_bound(a), file=sys.stderr)
        return 2
    if a.recheck:
        try:
            with open(a.recheck) as f:
                saved = json.load(f)
            summary, loads = saved["summary"], saved["load_average"]
        except (OSError, ValueError, KeyError) as e:
            print(f"--recheck: '{a.recheck}' is not a readable predict-validation.json ({e})", file=sys.stderr)
            return 2
        return report_bounds(a, summary, loads)
    if a.rounds is None:
        a.rounds = 3 if a.quick else 2
    if a.machine_probes is None:
        a.machine_probes = "off" if a.quick else "on"
    if a.rounds < 1:
        print(f"--rounds: {a.rounds} is not valid; valid: 1 or more", file=sys.stderr)
        return 2
    if a.quick and a.set != "validation":
        print(f"--quick: a subset of the validation set, not of --set {a.set}; valid: --quick alone or --set alone",
              file=sys.stderr)
        return 2
    cases = [c for c in SETS[a.set] if not a.quick or case_name(*c) in QUICK]
    if a.cases:
        try:
            pattern = re.compile(a.cases)
        except re.error as e:
            print(f"--cases: '{a.cases}' is not a valid regular expression ({e})", file=sys.stderr)
            return 2
        cases = [c for c in cases if pattern.search(case_name(*c))]
    if not cases:
        print(f"--cases: '{a.cases}' matches none of {', '.join(case_name(*c) for c in SETS[a.set])}", file=sys.stderr)
        return 2
    if a.list:
        print("\n".join(case_name(*c) for c in cases))
        return 0
    if not (os.path.isfile(a.tokbench) and os.access(a.tokbench, os.X_OK)):
        print(f"TOKBENCH: '{a.tokbench}' is not an executable file; valid: the tokbench binary "
              f"(e.g. build/bin/tokbench)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)

    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    loads = {"start": load_average()}
    t0 = time.monotonic()
    results, one_rank, binary_revision = measure(a, cases, a.tokbench)
    loads["end"] = load_average()
    minutes = (time.monotonic() - t0) / 60
    summary, inputs = summarize(results, one_rank)
    page = markdown(a, results, summary, inputs, loads, started, minutes, binary_revision)
    md_path = os.path.join(a.out, "predict-validation.md")
    with open(md_path, "w") as f:
        f.write(page)
    with open(os.path.join(a.out, "predict-validation.json"), "w") as f:
        json.dump({"set": a.set, "started": started, "minutes": minutes, "cpu": cpu_model(), "logical_cpus": os.cpu_count(),
                   "revision": git_revision(), "tokbench_revision": binary_revision, "load_average": loads, "rounds": a.rounds, "seq_len": SEQ_LEN,
                   "one_rank_iters": ONE_RANK_ITERS, "measured_iters": MEASURED_ITERS, "summary": summary,
                   "one_rank_inputs": inputs, "cases": results}, f, indent=1)
    print(page)
    print(f"wrote {md_path} and predict-validation.json", file=sys.stderr)
    if a.docs:
        write_result("predict-validation-cpu" if a.set == "validation" else f"predict-{a.set}-cpu", started[:10], page)

    return report_bounds(a, summary, loads)


if __name__ == "__main__":
    sys.exit(main())
