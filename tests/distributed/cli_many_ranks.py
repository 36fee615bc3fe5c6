#!/usr/bin/env python3
"""Runs the real `tokbench run` with several ranks on this CPU (Gloo) and checks the job's
ending, its exit code and rank 0's JSON.

Scenarios:
  launcher  the reference's seed command (phi-2, FSDP ZeRO-2) under the built-in launcher
  torchrun  the same command under `torchrun --no-python`
  usage     bad options exit 2 at once: in the launcher, and in a rank before any rendezvous
  kill      a rank killed with SIGKILL mid-run: status rank_failed naming it, exit 7
  stop      a rank stopped with SIGSTOP mid-run: status timeout, exit 6
  oom       an out-of-memory on rank 1 only: every rank ends, status oom naming rank 1, exit 3
  fused     --executor fused on two ranks (DDP, then FSDP ZeRO-3): both ranks report rank 0's
            kernel choice, measured once into a fresh cache, then read from it
  memory    FSDP ZeRO-2 and ZeRO-3 at W = 1, 2, 4 on a model of 16 equal blocks: each rank's
            counted parts are the sharding's (parameters, gradients, AdamW state per rank), and its
            measured peak follows the closed form parts + activations within 10%, falling with W
  ports     six two-rank jobs started at once on this node, each with --master-port 0: every one
            ends ok (the launcher hands rank 0 its store's socket, so no two jobs take one port)
The kill and stop scenarios must end within --dist-timeout + 10 s of the signal.
Usage: cli_many_ranks.py /path/to/tokbench SCENARIO /path/to/source"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

TOKBENCH, SCENARIO, SOURCE = sys.argv[1], sys.argv[2], sys.argv[3]
DIST_TIMEOUT = 10
# The reference's headline command line, with what this 2-core machine can run in seconds.
SEED = ["--return_metrics_as_json=True", "--distributed_mode=fsdp", "--shard_mode=zero2", "--model_name=phi-2",
        "--micro_batch_size=1", "--compile=eager", "--nsys_enabled=False", "--dynamic=False",
        "--n_layers=1", "--seq_len=64", "--max_iters=3", "--warmup_iters=1", "--num_threads=1"]
# A long run to interrupt: small, many iterations.
LONG = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "128", "--micro-batch-size", "1",
        "--max-iters", "100000", "--warmup-iters", "1", "--num-threads", "1", "--distributed-mode", "ddp",
        "--dist-timeout", str(DIST_TIMEOUT), "--log-every", "1"]


def fail(message, out="", err=""):
    print("FAIL:", message)
    print("--- stdout ---\n" + (out or "") + "\n--- stderr ---\n" + (err or ""))
    sys.exit(1)


def clean_env():
    env = dict(os.environ)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "TOKBENCH_LAUNCHED", "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"]:
        env.pop(name, None)
    return env


def load(path, out="", err=""):
    if not os.path.exists(path):
        fail(f"no JSON at {path}", out, err)
    with open(path) as f:
        return json.load(f)


def whole_model_params(model, n_layers):
    proc = subprocess.run([TOKBENCH, "info", model, "--n-layers", str(n_layers), "--json"], capture_output=True,
                          text=True, env=clean_env(), timeout=120)
    info = json.loads(proc.stdout)
    return info["params"]


def check_seed_result(j, out, err):
    if j["status"] != "ok":
        fail(f"status {j['status']}: {j['message']}", out, err)
    if j["Num GPUS"] != 2 or j["world_size"] != 2 or len(j["ranks"]) != 2:
        fail(f"world: {j['Num GPUS']} {j['world_size']} {len(j['ranks'])}", out, err)
    if j["Distributed Mode"] != "fsdp_zero2_none_bucketing" or j["Sharding Size"] is not None:
        fail(f"labels {j['Distributed Mode']} {j['Sharding Size']}", out, err)
    if j["Global BS"] != 2 or j["GA"] != 1:
        fail(f"batch {j['Global BS']} {j['GA']}", out, err)
    want = whole_model_params("phi-2", 1)
    if j["parameters"] != want:
        fail(f"parameters {j['parameters']}, the whole model has {want} (not a shard's)", out, err)
    identity = j["tokens_per_sec"] * j["average_iter_time"] / 1000
    if abs(identity - j["Global BS"] * j["Seq Len"]) > 1e-9 * identity:
        fail(f"tokens/s x avg iter time = {identity}", out, err)
    slowest = max(r["average_iter_time"] for r in j["ranks"])
    if abs(j["average_iter_time"] - slowest) > 1e-6 * slowest:
        fail(f"average_iter_time {j['average_iter_time']} is not the slowest rank's {slowest}", out, err)
    if j["memory_used_GB"] != max(r["memory_allocated_peak_GB"] for r in j["ranks"]):
        fail("memory_used_GB is not the maximum over ranks", out, err)
    if any(r["exposed_comm_ms_per_iter"] is None or r["exposed_comm_ms_per_iter"] < 0 for r in j["ranks"]):
        fail("exposed communication missing", out, err)
    if "Sharding Mode: zero2" not in out or "Bucketing: none" not in out or "Rank: rank 1, status ok," not in out:
        fail("report lines missing", out, err)


def rank_pids(launcher_pid):
    """Rank pid by RANK, among the launcher's children."""
    pids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != launcher_pid:
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            pids[int(env[b"RANK"])] = int(entry)
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return pids


def interrupt_rank(sig, want_status, want_code, scratch, victim=1):
    out_path = os.path.join(scratch, "long.json")
    proc = subprocess.Popen([TOKBENCH, "run", *LONG, "--nproc-per-node", "2", "--json-path", out_path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    lines = []
    # Wait for a few measured iterations so the signal lands mid-run.
    while sum("iter " in l for l in lines) < 3:
        line = proc.stdout.readline()
        if not line:
            fail("the run ended before the signal", "".join(lines), proc.stderr.read())
        lines.append(line)
    pids = rank_pids(proc.pid)
    if victim not in pids:
        proc.kill()
        fail(f"rank {victim} not found among the launcher's children: {pids}")
    os.kill(pids[victim], sig)
    sent = time.monotonic()
    try:
        out, err = proc.communicate(timeout=DIST_TIMEOUT + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        os.kill(pids[victim], signal.SIGKILL)
        fail("the job did not end")
    took = time.monotonic() - sent
    out = "".join(lines) + out
    if took > DIST_TIMEOUT + 10:
        fail(f"the job took {took:.1f} s to end after the signal (limit {DIST_TIMEOUT + 10})", out, err)
    if proc.returncode != want_code:
        fail(f"exit {proc.returncode}, want {want_code}", out, err)
    j = load(out_path, out, err)
    if j["status"] != want_status or f"rank {victim}" not in j["message"]:
        fail(f"status {j['status']} message {j['message']!r}", out, err)
    if os.path.exists(f"/proc/{pids[victim]}") and open(f"/proc/{pids[victim]}/stat").read().split()[2] != "Z":
        fail("the signalled rank is still alive", out, err)
    print(f"ended {took:.1f} s after the signal: {j['status']}: {j['message'][:200]}")
    print("ranks:", [(r["rank"], r["status"], r["message"]) for r in j["ranks"]])
    return j


# A model whose parameters dominate and split evenly: 16 equal blocks, a 512-token vocabulary.
BLOCKY = {"name": "blocky", "block_size": 64, "vocab_size": 512, "padded_vocab_size": 512, "n_layer": 16,
          "n_head": 8, "n_embd": 512}


def scenario_memory(scratch):
    config = os.path.join(scratch, "blocky.json")
    with open(config, "w") as f:
        json.dump(BLOCKY, f)
    base = ["--model-config", config, "--seq-len", "64", "--micro-batch-size", "1", "--max-iters", "3",
            "--warmup-iters", "1", "--num-threads", "1", "--cpu-allocator", "system", "--dist-timeout", "300"]

    def measure(world, shard_mode):
        out = os.path.join(scratch, f"memory-{world}-{shard_mode}.json")
        extra = ["--distributed-mode", "none"] if world == 1 else [
            "--nproc-per-node", str(world), "--distributed-mode", "fsdp", "--shard-mode", shard_mode,
            "--bucketing-mode", "block"]
        proc = subprocess.run([TOKBENCH, "run", *base, *extra, "--json-path", out], capture_output=True, text=True,
                              env=clean_env(), timeout=600)
        if proc.returncode != 0:
            fail(f"W={world} {shard_mode}: exit {proc.returncode}", proc.stdout, proc.stderr)
        j = load(out, proc.stdout, proc.stderr)
        if j["status"] != "ok":
            fail(f"W={world} {shard_mode}: {j['status']} {j['message']}", proc.stdout, proc.stderr)
        return j

    one = measure(1, "none")
    P = one["parameters"] * 4e-9  # fp32, GB
    activations = one["memory_activations_GB"]  # per rank at every W: the micro-batch is per rank
    if not 0 < activations < 0.2 * P:
        fail(f"activations {activations} GB: the model must be dominated by its {P:.3f} GB of parameters")
    rows = [("none", 1, one, P, P, 2 * P)]
    for shard_mode in ("zero2", "zero3"):
        for world in (2, 4):
            j = measure(world, shard_mode)
            params = P if shard_mode == "zero2" else P / world  # ZeRO-2's shard is a slice of its whole model
            rows.append((shard_mode, world, j, params, P / world, 2 * P / world))
    previous = {}
    for shard_mode, world, j, params, grads, optimizer in rows:
        for r in j["ranks"] or [j]:
            # The counted parts: each the closed form's, up to the flat buffers' padding (< W
            # elements per unit) and AdamW's step counts.
            for key, want in (("memory_parameters_GB", params), ("memory_gradients_GB", grads),
                              ("memory_optimizer_state_GB", optimizer)):
                if abs(r[key] - want) > 1e-3 * want + 1e-5:
                    fail(f"{shard_mode} W={world} rank {r.get('rank', 0)}: {key} {r[key]:.6f}, the sharding says "
                         f"{want:.6f}")
        closed = params + grads + optimizer + activations
        peak = j["memory_allocated_peak_GB"]
        print(f"{shard_mode:5} W={world}: peak {peak:.4f} GB, closed form {closed:.4f} GB "
              f"({peak / closed - 1:+.1%}); parts {params:.4f} + {grads:.4f} + {optimizer:.4f} + {activations:.4f}; "
              f"communication buffers {j['memory_comm_buffers_GB']:.4f}")
        if abs(peak / closed - 1) > 0.10:
            fail(f"{shard_mode} W={world}: peak {peak:.4f} GB is not within 10% of the closed form {closed:.4f} GB")
        if shard_mode in previous and not peak < previous[shard_mode]:
            fail(f"{shard_mode}: the peak did not fall from W={world // 2} ({previous[shard_mode]:.4f}) "
                 f"to W={world} ({peak:.4f})")
        previous[shard_mode] = peak
        if world > 1 and not peak < one["memory_allocated_peak_GB"]:
            fail(f"{shard_mode} W={world}: peak {peak:.4f} GB not below one process's "
                 f"{one['memory_allocated_peak_GB']:.4f}")


with tempfile.TemporaryDirectory() as scratch:
    out_path = os.path.join(scratch, "result.json")
    if SCENARIO == "launcher":
        proc = subprocess.run([TOKBENCH, "run", *SEED, "--json_path=" + out_path, "--nproc-per-node", "2"],
                              capture_output=True, text=True, env=clean_env(), timeout=500)
        if proc.returncode != 0:
            fail(f"exit {proc.returncode}", proc.stdout, proc.stderr)
        check_seed_result(load(out_path, proc.stdout, proc.stderr), proc.stdout, proc.stderr)
    elif SCENARIO == "torchrun":
        python = os.path.join(SOURCE, ".venv", "bin", "python")
        if not os.path.exists(python):
            python = "python3"  # the bootstrap found an importable torch there instead
        import socket
        with socket.socket() as s:  # torchrun passes MASTER_PORT through; rank 0's store binds it
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        command = [python, "-m", "torch.distributed.run", "--nproc_per_node=2", "--nnodes=1", "--no-python",
                   "--master_addr", "127.0.0.1", "--master_port", str(port), TOKBENCH, "run", *SEED, "--json_path=" + out_path]
        proc = subprocess.run(command, capture_output=True, text=True, env=clean_env(), timeout=500)
        if proc.returncode != 0:
            fail(f"exit {proc.returncode}", proc.stdout, proc.stderr)
        j = load(out_path, proc.stdout, proc.stderr)
        if j["config"]["dist_launcher"] != "torchrun":
            fail(f"launcher {j['config']['dist_launcher']}")
        check_seed_result(j, proc.stdout, proc.stderr)
    elif SCENARIO == "usage":
        cases = [
            ([*LONG, "--nproc-per-node", "2", "--shard-mode", "zero9"], {}, ["--shard-mode", "zero9"]),
            ([*LONG, "--nproc-per-node", "2", "--distributed-mode", "none"], {}, ["--distributed-mode", "none"]),
            # A rank under another launcher rejects a bad option before waiting for its peers.
            ([*LONG, "--micro-batch-size", "0"], {"RANK": "1", "WORLD_SIZE": "2", "MASTER_PORT": "1"},
             ["--micro-batch-size", "0"]),
            ([*LONG], {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "2"},
             ["LOCAL_RANK", "3"]),
            # The fused executor runs on many ranks, but never under autocast.
            ([*LONG, "--nproc-per-node", "2", "--executor", "fused", "--dtype", "bf16-mixed"], {},
             ["--executor fused", "bf16-mixed", "bf16-true"]),
            # The reference's --bucketing_mode size: thunder refuses it (the reference asserts it), the
            # threshold must be a positive whole count.
            ([*LONG, "--nproc-per-node", "2", "--distributed_mode=fsdp", "--bucketing_mode=size", "--compile=thunder"],
             {}, ["--bucketing-mode size", "'thunder'"]),
            ([*LONG, "--nproc-per-node", "2", "--distributed_mode=fsdp", "--bucketing_mode=size",
              "--fsdp_bucket_params=-1e6"], {}, ["--fsdp-bucket-params", "positive whole number"]),
            ([*LONG, "--nproc-per-node", "2", "--distributed_mode=fsdp", "--bucketing_mode=size",
              "--fsdp_bucket_params=2.5"], {}, ["--fsdp-bucket-params 2.5", "positive whole number"]),
        ]
        for args, env_add, needles in cases:
            start = time.monotonic()
            proc = subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True,
                                  env=dict(clean_env(), **env_add), timeout=60)
            lines = [l for l in proc.stderr.splitlines() if l.strip()]
            if proc.returncode != 2 or len(lines) != 1 or any(n not in lines[0] for n in needles):
                fail(f"{args} {env_add}: exit {proc.returncode}, want 2 and one line with {needles}",
                     proc.stdout, proc.stderr)
            if time.monotonic() - start > 20:
                fail(f"{args}: the usage error took {time.monotonic() - start:.1f} s")
        # Where the reference only warns, the run goes on: one warning line (rank 0's), kept in
        # the record, and the threshold without size changes nothing (DDP's label).
        args = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "16", "--max-iters", "2",
                "--warmup-iters", "1", "--num-threads", "1", "--distributed-mode", "ddp", "--nproc-per-node", "2",
                "--fsdp_bucket_params=1e6", "--quiet", "--json-path", out_path]
        proc = subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, env=clean_env(), timeout=300)
        warnings = [l for l in proc.stderr.splitlines() if "warning:" in l]
        j = load(out_path, proc.stdout, proc.stderr)
        if (proc.returncode != 0 or len(warnings) != 1 or "--fsdp-bucket-params 1000000 is ignored" not in warnings[0]
                or j["config"]["warnings"] != [warnings[0].split("warning: ", 1)[1]] or j["Distributed Mode"] != "ddp"):
            fail(f"ignored --fsdp_bucket_params: exit {proc.returncode}, warnings {warnings}, "
                 f"recorded {j['config'].get('warnings')}", proc.stdout, proc.stderr)
        # The reference's size units under ZeRO-3 run on tokbench's step: at 1e5 each block's mlp
        # (131'712) is a unit, the attention and norms stay in the root, lm_head and wte are units,
        # and every unit is gathered for forward and again for backward.
        args = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "16", "--max-iters", "2",
                "--warmup-iters", "1", "--num-threads", "1", "--nproc-per-node", "2", "--distributed_mode=fsdp",
                "--shard_mode=zero3", "--bucketing_mode=size", "--fsdp_bucket_params=1e5", "--quiet",
                "--json-path", out_path]
        proc = subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, env=clean_env(), timeout=300)
        j = load(out_path, proc.stdout, proc.stderr)
        units = ["lm_head", "root", "transformer.h.0.mlp", "transformer.h.1.mlp", "transformer.wte"]
        gathers = sorted((c["unit"], c["purpose"]) for c in j["unit_timings"]["communication"]["collectives"]
                         if c["purpose"].startswith("gather_for"))
        if (proc.returncode != 0 or j["status"] != "ok" or j["Distributed Mode"] != "fsdp_zero3_size_bucketing"
                or gathers != [(u, p) for u in units for p in ("gather_for_backward", "gather_for_forward")]):
            fail(f"ZeRO-3 size units: exit {proc.returncode} status {j['status']} mode {j['Distributed Mode']} "
                 f"gathers {gathers}", proc.stdout, proc.stderr)
    elif SCENARIO == "ports":
        jobs = []
        for i in range(6):
            path = os.path.join(scratch, f"job{i}.json")
            args = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "16", "--max-iters", "2",
                    "--warmup-iters", "1", "--num-threads", "1", "--distributed-mode", "ddp", "--nproc-per-node",
                    "2", "--master-port", "0", "--dist-timeout", "120", "--json-path", path]
            jobs.append((path, subprocess.Popen([TOKBENCH, "run", *args], stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, text=True, env=clean_env())))
        for path, proc in jobs:
            out, err = proc.communicate(timeout=500)
            j = load(path, out, err)
            if proc.returncode != 0 or j["status"] != "ok" or len(j["ranks"]) != 2:
                fail(f"{path}: exit {proc.returncode} status {j['status']}: {j['message']}", out, err)
    elif SCENARIO == "kill":
        interrupt_rank(signal.SIGKILL, "rank_failed", 7, scratch)
        # Rank 0 killed: the launcher writes the record, and it still lists every rank, rank 0
        # with its signal and no memory figures (null: they never arrived, they were not 0).
        j = interrupt_rank(signal.SIGKILL, "rank_failed", 7, scratch, victim=0)
        ranks = {r["rank"]: r for r in j["ranks"]}
        if (sorted(ranks) != [0, 1] or ranks[0]["status"] != "rank_failed"
                or "signal 9" not in ranks[0]["message"] or ranks[0]["peak_rss_GB"] is not None
                or ranks[1]["status"] == "ok"):
            fail(f"the launcher's per-rank lines: {j['ranks']}")
    elif SCENARIO == "stop":
        interrupt_rank(signal.SIGSTOP, "timeout", 6, scratch)
    elif SCENARIO == "oom":
        # With the usual grace rank 0 learns of the OOM and reports it; with a 1 s grace the
        # launcher's SIGTERM usually reaches rank 0 first, mid-iteration, and rank 0 still
        # gathers rank 1's record and reports `oom`: that record stands either way.
        for grace in (DIST_TIMEOUT, 1):
            args = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "512", "--micro-batch-size", "4",
                    "--max-iters", "4", "--warmup-iters", "1", "--num-threads", "1", "--distributed-mode", "ddp",
                    "--dist-timeout", str(grace), "--cpu-memory-cap-mb", "200", "--cpu-memory-cap-rank", "1",
                    "--nproc-per-node", "2", "--json-path", out_path]
            proc = subprocess.run([TOKBENCH, "run", *args], capture_output=True, text=True, env=clean_env(),
                                  timeout=300)
            j = load(out_path, proc.stdout, proc.stderr)
            if proc.returncode != 3 or j["status"] != "oom" or "rank 1" not in j["message"]:
                fail(f"grace {grace} s: exit {proc.returncode} status {j['status']} message {j['message']!r}",
                     proc.stdout, proc.stderr)
            statuses = {r["rank"]: r["status"] for r in j["ranks"]}
            if statuses.get(1) != "oom" or statuses.get(0) == "ok":
                fail(f"grace {grace} s: per-rank statuses {statuses}", proc.stdout, proc.stderr)
            os.remove(out_path)
    elif SCENARIO == "fused":
        cache = os.path.join(scratch, "cache")
        env = dict(clean_env(), TOKBENCH_CACHE_DIR=cache)
        base = ["--model-name", "pythia-14m", "--n-layers", "2", "--seq-len", "64", "--micro-batch-size", "1",
                "--max-iters", "3", "--warmup-iters", "1", "--num-threads", "1", "--executor", "fused",
                "--nproc-per-node", "2", "--dist-timeout", "120", "--json-path", out_path]
        for mode, source in [(["--distributed-mode", "ddp"], "measured"),
                             (["--distributed-mode", "fsdp", "--shard-mode", "zero3"], "cached")]:
            proc = subprocess.run([TOKBENCH, "run", *base, *mode], capture_output=True, text=True, env=env,
                                  timeout=300)
            if proc.returncode != 0:
                fail(f"{mode}: exit {proc.returncode}", proc.stdout, proc.stderr)
            j = load(out_path, proc.stdout, proc.stderr)
            if j["status"] != "ok" or j["executor"] != "fused" or j["world_size"] != 2 or len(j["ranks"]) != 2:
                fail(f"{mode}: status {j['status']} executor {j['executor']} world {j['world_size']}",
                     proc.stdout, proc.stderr)
            kernels = [r["kernels"] for r in j["ranks"]]
            # The GEMM classes' summary ends in [measured] or [cached]; no oneDNN: "GEMMs: aten".
            if not kernels[0] or not kernels[0].startswith("GEMMs: ") or kernels[1] != kernels[0] \
                    or j["kernels"] != kernels[0]:
                fail(f"{mode}: kernel choices differ or are missing: {kernels}, report {j['kernels']!r}",
                     proc.stdout, proc.stderr)
            if "[" in kernels[0] and f"[{source}]" not in kernels[0]:
                fail(f"{mode}: want the choice {source}: {kernels[0]}", proc.stdout, proc.stderr)
            written = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
            if "[" in kernels[0] and written != ["gemm-choice.json"]:
                fail(f"{mode}: the cache folder holds {written}, want gemm-choice.json alone", proc.stdout,
                     proc.stderr)
            print(f"{' '.join(mode)}: both ranks: {kernels[0]}")
    elif SCENARIO == "memory":
        scenario_memory(scratch)
    else:
        fail(f"unknown scenario {SCENARIO}")
print("PASS", SCENARIO)
