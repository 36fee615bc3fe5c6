#!/usr/bin/env python3
"""tokbench's eager step against the reference's (litgpt under PyTorch eager with
torch.optim.AdamW(fused=True), the python-eager executor), operator for operator
(docs/eager-parity.md): both run through `tokbench run --profile` on the same small
configuration, and the ATen operators of their forward, backward and optimizer ranges are
compared in order, each by name, input shapes and input dtypes. Every difference is listed by
operator name and count per phase, then as the first differing stretch of each sequence; the
test fails on any difference that ALLOWED does not name.

Architectures (one layer, T=16, B=1, fp32 on the CPU unless the case says otherwise):
  neox    pythia-14m: LayerNorm, GELU MLP, parallel residual, partial rotary, biases
  llama   SmolLM2-135M: RMSNorm, SwiGLU, grouped-query attention
  mixed   pythia-14m in bf16-mixed: autocast around the forward and the loss
  gemma   Gemma-3-1b-it in bf16-true: RMSNorm with the unit offset, GeGLU, post norms, q/k
          norms, two rope bases, sliding-window layers, scaled embeddings
  gemma2  Gemma-2-2b in bf16-true: soft-capped attention and logits
          (both Gemma cases with the vocabulary cut to SMALL_VOCAB and the MLP's width to
          SMALL_INTERMEDIATE, through --model-config: every other field is the catalog's, as
          `tokbench info NAME --json` prints it; their 256k vocabularies took 7-13 GB and a
          minute and a half a case for the same operators, whose shapes differ only in V)
  moe     a tiny Qwen3-MoE (TINY_MOE, through --model-config), T=64: the LLaMAMoE router, 8
          experts, 2 per token, q/k norms. Both sides start from tokbench's weights and tokens
          (the test hook TOKBENCH_TEST_SAME_START), so they route the same tokens to the same
          experts and every expert's operators have the same shapes (docs/eager-parity.md)
A case whose sides need more memory than MemAvailable holds is skipped (exit 77, which ctest
reports as skipped, never as passed); none of today's does.

Usage: cli_eager_parity.py /path/to/tokbench CASE [--device cpu|cuda] [--keep DIR] [--without-same-start]
(--keep writes both traces and the two operator lists there, to read a difference by hand;
--without-same-start runs a SAME_START case without the hook, each side from its own values:
the MoE case must then fail, which shows that it can)."""
import argparse
import collections
import difflib
import json
import os
import subprocess
import sys
import tempfile

CASES = {
    "neox": ["--model-name", "pythia-14m"],
    "llama": ["--model-name", "SmolLM2-135M"],
    "mixed": ["--model-name", "pythia-14m", "--dtype", "bf16-mixed"],
    "gemma": ["--model-config", "{SMALL_VOCAB:Gemma-3-1b-it}", "--dtype", "bf16-true"],
    "gemma2": ["--model-config", "{SMALL_VOCAB:Gemma-2-2b}", "--dtype", "bf16-true"],
    "moe": ["--model-config", "{TINY_MOE}", "--seq-len", "64"],
}
# Qwen3-30B-A3B's fields (litgpt's config) at a size that runs in seconds: one layer, 8 experts
# of width 32, 2 per token, a vocabulary just above the synthetic tokens' 100 ids.
TINY_MOE = {"name": "tiny-qwen3-moe", "block_size": 64, "head_size": 16, "vocab_size": 100,
            "padded_vocab_size": 128, "n_layer": 1, "n_head": 4, "n_embd": 64, "n_query_groups": 2,
            "rotary_percentage": 1.0, "parallel_residual": False, "bias": False,
            "norm_class_name": "RMSNorm", "mlp_class_name": "LLaMAMoE", "intermediate_size": 192,
            "moe_intermediate_size": 32, "norm_eps": 1e-06, "rope_base": 1000000, "norm_qk": True,
            "n_expert": 8, "n_expert_per_token": 2}
# Cases whose operators' shapes follow the data: an MoE's per-expert operators take the tokens
# routed to that expert, so both sides must start from the same weights and draw the same
# tokens (TOKBENCH_TEST_SAME_START: the Python step takes tokbench's). The other cases'
# operators do not depend on the values, and run without the hook.
SAME_START = {"moe"}
# The vocabulary of the {SMALL_VOCAB:NAME} cases: the catalog model NAME with V cut to this. No
# operator of either step chooses by V: the embedding, the head and the loss take it as a
# dimension only (the row-chunked head is the fused executor's, not eager's). One choice inside
# ATen does: zero_ on the loss's [T, V] gradient is a memset below 32768 elements and a fill_ from
# there on; at T = 16 and V = 4096 it is the fill_, as at 256k, so the operator counts are the full
# vocabulary's (checked on 2026-12-05: Gemma-2-2b's 1150/1848/196 with V = 256000; V = 512 lost
# the two fill_ calls on both sides). The name keeps "Gemma": both sides give RMSNorm its unit
# offset by the name, as litgpt does.
SMALL_VOCAB = 4096
# The MLP's width of those cases, cut from the catalog's (Gemma-3-1b 6912, Gemma-2-2b 9216) for the
# same reason: it is a dimension of three weights and their GEMMs only, and no operator chooses by
# it (the operator counts stay the full width's, checked on 2026-12-07). In bf16 on a CPU without
# bf16 matmul kernels (the 2-core AMD EPYC VM: about 1 GFLOP/s) the full width took 9.6 s an
# iteration of Gemma-2-2b, 93 s for the case (35 s cut).
SMALL_INTERMEDIATE = 1024
# Bytes of MemAvailable a case needs on the CPU (the two sides run one after the other); the
# Gemma cases needed 7 and 13 GB with their full vocabularies.
MEMORY_NEEDED = {}
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for this test

# The phases compared, by the ranges both steps record (account/range_names.hpp and the Python
# step's own): the data a step draws is not the reference's model and is not compared
# (docs/eager-parity.md, "What is not compared").
PHASES = ["forward", "backward", "optimizer"]

# Differences that must stay, by phase and operator name, each explained in docs/eager-parity.md.
# None today: a new entry needs its paragraph there.
ALLOWED = {}


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "")[-4000:] + "\n--- stderr ---\n" + (proc.stderr or "")[-4000:])
    sys.exit(1)


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def small_vocab_config(tokbench, name, path):
    """NAME's config from tokbench's catalog with the vocabulary cut to SMALL_VOCAB and the MLP's width
    to SMALL_INTERMEDIATE, written to PATH."""
    proc = subprocess.run([tokbench, "info", name, "--json"], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        fail(f"info {name}: exit {proc.returncode}", proc)
    config = json.loads(proc.stdout)["config"]
    for derived in ("hf", "rope_n_elem"):  # info prints them; a config file gives neither
        config.pop(derived, None)
    config.update(name=f"{name}-vocab{SMALL_VOCAB}", vocab_size=SMALL_VOCAB, padded_vocab_size=SMALL_VOCAB,
                  intermediate_size=SMALL_INTERMEDIATE)
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def case_arguments(tokbench, case, folder):
    """The case's options, its {...} placeholders replaced by files written into FOLDER."""
    out = []
    for arg in CASES[case]:
        if arg == "{TINY_MOE}":
            arg = os.path.join(folder, "tiny-moe.json")
            with open(arg, "w") as f:
                json.dump(TINY_MOE, f)
        elif arg.startswith("{SMALL_VOCAB:"):
            name = arg[len("{SMALL_VOCAB:"):-1]
            arg = small_vocab_config(tokbench, name, os.path.join(folder, f"{name}-vocab{SMALL_VOCAB}.json"))
        out.append(arg)
    return out


def record_trace(tokbench, case, executor, device, path, same_start):
    args = [tokbench, "run", *case_arguments(tokbench, case, os.path.dirname(path)),
            "--executor", executor, "--device", device,
            "--n-layers", "1", "--micro-batch-size", "1", "--max-iters", "2", "--warmup-iters", "1",
            "--profile", path, "--profile-iters", "2", "--time-account-iters", "0", "--quiet"]
    if "--seq-len" not in CASES[case]:
        args += ["--seq-len", "16"]
    if executor == "eager":
        args += ["--unit-timing-iters", "0"]
    if device == "cpu":
        args += ["--num-threads", "1"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "TOKBENCH_LAUNCHED", "TOKBENCH_TEST_SAME_START")}
    if same_start:
        env["TOKBENCH_TEST_SAME_START"] = "1"
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1500, env=env)
    if proc.returncode != 0 or not os.path.exists(path):
        fail(f"{executor}: exit {proc.returncode}: {' '.join(args)}", proc)
    return path


def operators(path):
    """{phase: [(name, input shapes, input dtypes), ...]} over the trace's iterations, in the
    order the host issued them. An operator belongs to the phase whose range (on the loop's
    thread) was open when it started, on any thread: on CUDA the autograd engine runs backward on
    a thread of its own while the loop's thread waits inside "backward"."""
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    ranges = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                    if e.get("cat") == "user_annotation" and e["name"] in PHASES)
    ops = sorted((e for e in events if e.get("cat") == "cpu_op"), key=lambda e: (e["ts"], -e["dur"]))
    out = {phase: [] for phase in PHASES}
    for e in ops:
        phase = None
        for start, end, name in ranges:  # a few per iteration: a scan is enough
            if start <= e["ts"] <= end:
                phase = name  # "tokbench::loss" is not a phase: the loss belongs to forward
        if phase is None:
            continue
        args = e.get("args", {})
        out[phase].append((e["name"], json.dumps(args.get("Input Dims")), json.dumps(args.get("Input type"))))
    return out


def compare(ours, reference):
    """The differences as lines, and whether any is not allowed."""
    lines, failing = [], False
    for phase in PHASES:
        a, b = ours[phase], reference[phase]
        count_a = collections.Counter(op[0] for op in a)
        count_b = collections.Counter(op[0] for op in b)
        for name in sorted(set(count_a) | set(count_b)):
            if count_a[name] != count_b[name]:
                allowed = name in ALLOWED.get(phase, {})
                failing |= not allowed
                lines.append(f"{phase}: {name} {count_a[name]} (eager) vs {count_b[name]} (python-eager)"
                             + (" [allowed]" if allowed else ""))
        if a == b:
            continue
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        shown = 0
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            names = {op[0] for op in a[i1:i2]} | {op[0] for op in b[j1:j2]}
            allowed = names <= set(ALLOWED.get(phase, {}))
            failing |= not allowed
            if shown < 12:
                lines.append(f"{phase} @ eager[{i1}:{i2}] / python-eager[{j1}:{j2}] {tag}"
                             + (" [allowed]" if allowed else ""))
                lines += [f"  - {op[0]} {op[1]} {op[2]}" for op in a[i1:i2][:8]]
                lines += [f"  + {op[0]} {op[1]} {op[2]}" for op in b[j1:j2][:8]]
            shown += 1
        if shown > 12:
            lines.append(f"{phase}: {shown - 12} more differing stretches")
    return lines, failing


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tokbench")
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--device", default="cpu")
    p.add_argument("--keep", help="a folder for the traces and operator lists")
    p.add_argument("--without-same-start", action="store_true",
                   help="run without TOKBENCH_TEST_SAME_START even where the case needs it")
    a = p.parse_args()
    needed = MEMORY_NEEDED.get(a.case, 0)
    if a.device == "cpu" and mem_available() < needed:
        print(f"SKIP: {a.case} needs {needed >> 30} GB of MemAvailable, this machine has {mem_available() >> 30}")
        sys.exit(SKIPPED)
    with tempfile.TemporaryDirectory() as scratch:
        folder = a.keep or scratch
        os.makedirs(folder, exist_ok=True)
        same_start = a.case in SAME_START and not a.without_same_start
        ours = operators(record_trace(a.tokbench, a.case, "eager", a.device, os.path.join(folder, "eager.json"),
                                      same_start))
        reference = operators(record_trace(a.tokbench, a.case, "python-eager", a.device,
                                           os.path.join(folder, "python-eager.json"), same_start))
    if a.keep:
        for label, ops in (("eager", ours), ("python-eager", reference)):
            with open(os.path.join(a.keep, f"{label}.ops.txt"), "w") as f:
                for phase in PHASES:
                    f.writelines(f"{phase}\t{name}\t{dims}\t{types}\n" for name, dims, types in ops[phase])
    for phase in PHASES:
        if not reference[phase] or not ours[phase]:
            fail(f"no operators in the {phase} range (eager {len(ours[phase])}, python-eager {len(reference[phase])})")
    lines, failing = compare(ours, reference)
    sizes = ", ".join(f"{phase} {len(ours[phase])}/{len(reference[phase])}" for phase in PHASES)
    print(f"{a.case} on {a.device}: operators (eager/python-eager) {sizes}")
    print("\n".join(lines) if lines else "no difference")
    if failing:
        fail(f"{a.case}: tokbench's eager step differs from the reference's (lines above)")
    print("ok")


if __name__ == "__main__":
    main()
