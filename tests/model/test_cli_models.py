#!/usr/bin/env python3
"""`tokbench models` and `tokbench info` run as a user runs them: JSON shape and key figures,
and usage errors (unknown model, bad sizes) exiting 2 with one line. Stdlib only.

    test_cli_models.py PATH_TO_TOKBENCH
"""
import json
import subprocess
import sys

TOKBENCH = sys.argv[1]
failures = []


def run(*args):
    return subprocess.run([TOKBENCH, *args], capture_output=True, text=True, timeout=120)


def check(condition, message):
    if not condition:
        failures.append(message)


# models --json: all 210, litgpt's parameter counts.
out = run("models", "--json")
check(out.returncode == 0, f"models --json exited {out.returncode}: {out.stderr}")
models = json.loads(out.stdout)
check(len(models) == 210, f"models --json listed {len(models)} models, want 210")
by_name = {m["name"]: m for m in models}
for name, params in [("phi-2", 2_779_683_840), ("Llama-2-7b-hf", 6_738_415_616),
                     ("Mixtral-8x7B-v0.1", 46_702_792_704), ("pythia-14m", 14_067_712)]:
    check(by_name.get(name, {}).get("params") == params, f"{name} params {by_name.get(name)} != {params}")
check(by_name["phi-2"]["hf"] == "microsoft/phi-2", "phi-2 hf id")
check(by_name["Llama-2-70b-hf"]["n_query_groups"] == 8, "Llama-2-70b query groups")
for key in ("n_layer", "n_embd", "n_head", "mlp_class_name", "norm_class_name"):
    check(key in by_name["phi-2"], f"models --json lacks {key}")

# --filter, table form: '#' header lines, one row per match.
out = run("models", "--filter", "PYTHIA")
rows = [line for line in out.stdout.splitlines() if line and not line.startswith("#")]
check(out.returncode == 0 and len(rows) == sum("pythia" in n.lower() for n in by_name), f"filter rows: {rows}")
check(all(row.startswith("pythia") for row in rows), "filter rows are pythia models")

# info phi-2 --seq-len 2048 --json: 3·(2·T·W + 4·T²·L·H·Q) (docs/litgpt-architecture.md,
# "FLOPs per micro-batch").
out = run("info", "phi-2", "--seq-len", "2048", "--json")
check(out.returncode == 0, f"info exited {out.returncode}: {out.stderr}")
info = json.loads(out.stdout)
check(info["params"] == 2_779_683_840, f"info params {info['params']}")
check(info["seq_len"] == 2048 and info["micro_batch_size"] == 1, "info echoes sizes")
W, T = 2_647_654_400, 2048
forward = 2 * T * W + 4 * T * T * 32 * 32 * 80
matmul = info["flops"]["matmul"]
check(matmul == {"flops_forward": forward, "flops_backward": 2 * forward, "flops_total": 3 * forward,
                 "model_flops": 3 * forward, "flops_recompute": 0, "hardware_flops": 3 * forward},
      f"matmul flops {matmul}")
check(info["flops"]["causal"]["flops_total"] == 3 * (forward - 2 * T * T * 32 * 32 * 80), "causal flops")
check(set(info["flops"]) == {"matmul", "causal", "palm"}, "three conventions")
check(set(info["memory_bytes"]) == {"fp32", "bf16-true", "bf16-mixed"}, "three precisions")
check(info["memory_bytes"]["fp32"]["weights"] == 4 * 2_779_683_840, "fp32 weights")

# --checkpoint-activations: model FLOPs unchanged; hardware FLOPs add every block's forward but
# the head's GEMM (2·T·C·V) and each block's MLP output projection (2·T·L·I·C), which nothing
# reads in phi-2's blocks (docs/run.md, "Activation checkpointing"). Activations shrink.
out = run("info", "phi-2", "--seq-len", "2048", "--json", "--checkpoint-activations")
ac = json.loads(out.stdout)
recompute = forward - 2 * T * 2560 * 51200 - 2 * T * 32 * 10240 * 2560
check(ac["checkpoint_activations"] is True and ac["flops"]["matmul"]["model_flops"] == 3 * forward,
      f"checkpointing keeps the model FLOPs: {ac['flops']['matmul']}")
check(ac["flops"]["matmul"]["flops_recompute"] == recompute and
      ac["flops"]["matmul"]["hardware_flops"] == 3 * forward + recompute, f"hardware FLOPs {ac['flops']['matmul']}")
check(ac["memory_bytes"]["fp32"]["activations"] < info["memory_bytes"]["fp32"]["activations"] / 4,
      "checkpointing shrinks the activation estimate")

# --n-layers and --micro-batch-size change the figures as they should.
out = run("info", "microsoft/phi-2", "--seq-len", "2048", "--n-layers", "2", "--micro-batch-size", "3", "--json")
small = json.loads(out.stdout)
check(small["params"] == 262_200_320 + 2 * 78_671_360, f"2-layer phi-2 params {small['params']}")
check(small["n_layer"] == 2 and small["micro_batch_size"] == 3, "overrides echoed")

# Usage errors: exit 2, one line on stderr, before any output.
for args, expected in [(("info", "lama-2-7b"), "Llama-2-7b-hf"),
                       (("info", "phi-2", "--seq-len", "0"), "--seq-len"),
                       (("info", "phi-2", "--micro-batch-size", "-1"), "--micro-batch-size"),
                       (("info", "phi-2", "--n-layers", "0"), "--n-layers")]:
    out = run(*args)
    lines = out.stderr.strip().splitlines()
    check(out.returncode == 2, f"{args} exited {out.returncode}, want 2")
    check(len(lines) == 1 and expected in lines[0], f"{args} stderr: {out.stderr!r}")
    check(out.stdout == "", f"{args} printed to stdout: {out.stdout!r}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok: models and info")
