#!/usr/bin/env python3
"""tokbench's training step in Python: litgpt's GPT under PyTorch eager, torch.compile (inductor) or thunder.jit.

`tokbench run --executor python-eager|python-inductor|python-thunder` starts this script as a child with the
configuration it has already validated, as one JSON document (`--config`, see read_config), and reads its
stdout, one JSON object per line:

  {"event": "unavailable", "python": ..., "error": ...}   torch or litgpt cannot be imported (exit 2)
  {"event": "unavailable", "python": ..., "error": ..., "executor": true}   a requested thunder
                                                          executor is missing from this install (exit 2)
  {"event": "ready", "torch_version": ..., "litgpt_version": ..., "python_version": ..., "num_threads": N,
   "thunder_version": ..., "thunder_executors": "a, b, ..."}   (the thunder keys with compiler.executor python-thunder)
  {"event": "iteration", "index": i, "warmup": bool, "seconds": s, "loss": l, "end_time": t}
  {"event": "time_account", "clock_seconds": s, "names": [...], "shapes": [...], "events": [[...], ...]}
                                                          (on CUDA also "launches" and "device_events")
                                                          the time account's profiled pass (time_account_iters
                                                          > 0, after the window): record_time_account; or
  {"event": "time_account", "error": ...}                 why it has none
  {"event": "result", "status": "ok"|"oom"|"nan"|"interrupted"|"error", "message": ...,
   "measured_window_seconds": w, "allocated_peak_bytes": n|null, "reserved_peak_bytes": n|null,
   "peak_rss_bytes": n, "profile_message": "..."}   (profile_message only with a profile path)

The step is the reference's: litgpt's
GPT, torch.optim.AdamW(fused=True) — the same fused ATen kernel tokbench's AdamW calls, so a
comparison measures the executors, not two optimizers — random token ids 0..99 as the reference
draws them, loss divided by GA, backward per micro-batch, one optimizer step per iteration,
`loss.item()` (and torch.cuda.synchronize on CUDA) at the end of every iteration. The timing
protocol is tokbench's: the window runs from the end of the last warm-up iteration to the end of
the last one, so tokens/s = M·G·T / window. With the inductor executor the model is wrapped in
torch.compile (default mode, as the reference does); compilation happens in the first
iteration, which is why warm-up iterations exist. With the thunder executor the model goes through
thunder.jit (lightning-thunder's default executors, after compiler.thunder_executors; on many ranks
with thunder's own ddp or fsdp transform on the jitted module), or with thunder_front_end
dynamo through torch.compile with thunder as its backend (ThunderFX) inside PyTorch's own
DDP/FSDP wrapping; either compiles in the first iteration too.

Many ranks (dist.world_size > 1): tokbench's rank process has joined the job's store and passes
its address (step.store); torch.distributed meets the other ranks
there (Gloo on the CPU, NCCL on CUDA) and the model is wrapped the reference's way:
  ddp    DistributedDataParallel(bucket_cap_mb), no_sync on the first GA-1 micro-batches with
         dist.skip_sync_until_last_micro
  fsdp   FullyShardedDataParallel(use_orig_params=True), SHARD_GRAD_OP (zero2) / FULL_SHARD
         (zero3), _HYBRID_SHARD_ZERO2 / HYBRID_SHARD over a (replicate, shard) device mesh with
         dist.shard_group_size; units by dist.units: none (the whole model), block (one per
         litgpt Block), layer (each module owning parameters), size (PyTorch's
         size_based_auto_wrap_policy, min_num_params = dist.min_unit_params); no_sync as for ddp
  fsdp2  fully_shard per unit (same dist.units; never size, which tokbench turns into block
         for fsdp2 as the reference ignores it) and on the root, reshard_after_forward
         for zero3; set_requires_gradient_sync(False) on the first GA-1 micro-batches
Each rank draws its own token stream (the data seed mixed with the rank, as tokbench's steps do);
the reported loss is the mean over ranks. A stop request is agreed on by every rank at an
iteration start (an all-reduce posted one iteration earlier), never between micro-batches.

step.memory_probe, a path, loads tokbench's counting CPU allocator (libtokbench_memory_probe.so) and
installs it before the model is built, so on the CPU allocated_peak_bytes is the most bytes held
by tensors during the timed loop, counted by the same code as tokbench's own steps' (reserved =
allocated, as for tokbench without its caching allocator). Without it the CPU peaks are null.

profile.path writes a Chrome trace of profile.iters more iterations after the measured
window (torch.profiler with shapes and memory events, and forward/backward/optimizer ranges),
as tokbench's own --profile does, so the two traces can be compared op by op.

time_account_iters > 0 runs that many more iterations under torch.profiler (host events with
shapes, tokbench's named ranges) and sends their events for tokbench's time account, classified
by tokbench's own rules (docs/time-account.md, "The Python executors").

Only the JSON lines go to stdout: everything else printed by Python, litgpt or the inductor's
compiler (C++ compiler output included) is sent to stderr at the file-descriptor level, so the
parent's reader never sees a stray line.
Stop: the first SIGINT/SIGTERM stops the run after the current micro-batch (status
interrupted, what was measured is kept); the parent sends SIGKILL on a second one.
"""
import argparse
import contextlib
import importlib
import json
import math
import os
import re
import resource
import signal
import sys
import time


def open_result_stream():
    """Returns a text stream on the original stdout and points fd 1 (and sys.stdout) at stderr."""
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(result_fd, "w", buffering=1)


# The protocol's lines (the module docstring lists them): tokbench's C++ reader names each event and
# key once, in src/run/python_protocol_keys.hpp; a key added or renamed here is changed there too.
def emit(stream, event, **fields):
    stream.write(json.dumps({"event": event, **fields}, allow_nan=False) + "\n")
    stream.flush()


def read_config():
    """The run as tokbench resolved and validated it: `--config JSON`, the run plan
    (src/run/run_plan_json.cpp; its keys are src/train/run_plan_keys.hpp's): `options`, every option as
    given by its record key (the `config` block's keys, each row's default filled in), read here for
    every value the user chose (seed, AdamW's, zero_grad, num_threads, dynamic, the mode, the timeout,
    switches); and only what resolution decided beside it (model, train: batch shape, iterations and
    the resolved dtype; dist: this rank's place and the layout; compiler: the executor, aliases
    resolved; device, profile, paths, test hooks), plus this step's own inputs (step: the memory
    probe, the job's store). Nothing is parsed or defaulted again; the names below are the ones the
    rest of this script reads."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True, help="the resolved run, as tokbench writes it")
    c = json.loads(p.parse_args().config)
    train, dist, compiler, step, o = c["train"], c["dist"], c["compiler"], c["step"], c["options"]
    executor = compiler["executor"]
    store = step["store"] or {}
    return argparse.Namespace(
        model_name=c["model"]["name"], n_layers=c["model"]["n_layer"], model_fields=c["model"]["config"],
        seq_len=train["seq_len"], micro_batch_size=train["micro_batch"], grad_accum=train["grad_accum"],
        max_iters=train["max_iters"], warmup_iters=train["warmup_iters"], num_threads=o["num_threads"],
        seed=o["seed"], data_seed=o["data_seed"], dtype=train["dtype"], zero_grad=o["zero_grad"],
        lr=o["lr"], weight_decay=o["weight_decay"], beta1=o["beta1"], beta2=o["beta2"], eps=o["adam_eps"],
        device=c["device"]["string"], tf32=c["device"]["tf32"],
        compile={"python-inductor": "inductor", "python-thunder": "thunder"}.get(executor, "eager"),
        thunder_front_end=compiler["thunder_front_end"], thunder_executor=compiler["thunder_executors"],
        dynamic=o["dynamic"], use_sdpa=o["use_sdpa"], options=o, checkpoint_activations=c["checkpoint_activations"],
        memory_probe=step["memory_probe"] or None,
        profile=c["profile"]["path"] or None, memory_snapshot=c["memory_snapshot"] or None, profile_iters=c["profile"]["iters"],
        time_account_iters=c["time_account_iters"], test_host_delay_seconds=c["test_host_delay_seconds"],
        test_same_start=c["test_same_start"],
        rank=dist["rank"], world_size=dist["world_size"], local_rank=dist["local_rank"],
        store_host=store.get("host"), store_port=store.get("port"), store_prefix=store.get("prefixes", []),
        distributed_mode=o["distributed_mode"], shard_mode=dist["shard_mode"], sharding_size=dist["shard_group_size"],
        bucketing_mode=dist["units"], min_unit_params=dist["min_unit_params"],
        ddp_bucket_mb=dist["ddp_bucket_bytes"] / 1e6,
        skip_data_sync=dist["skip_sync_until_last_micro"], dist_timeout=o["dist_timeout_s"],
        backend=dist["backend"])


# Objects of a distributed run that must not be destroyed before the process ends. Destroying a
# DDP/FSDP module destroys its process group, whose Gloo threads may at that moment be retiring
# a finished collective whose tensors need the GIL to be released, while the destroying thread
# holds the GIL and waits for them: a deadlock seen with torch 2.11. A distributed child
# therefore ends with os._exit once its result is out, as nothing after it needs cleaning up.
KEEP_UNTIL_EXIT = []


def dynamic_length(seed, index, seq_len):
    """--dynamic: the length of sequence `index` of the run, in [10, T]; the same arithmetic as
    tokbench's batcher (src/train/sequence_lengths.hpp), so every executor and rank draws the
    same lengths."""
    mask = (1 << 64) - 1
    z = (seed + 0x9E3779B97F4A7C15 * (index + 1)) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return 10 + z % (seq_len - 9)


def rank_seed(seed, rank):
    """Each rank's token stream: the seed mixed with the rank, as tokbench's own steps mix it."""
    return seed if rank == 0 else (seed ^ (0x9E3779B97F4A7C15 * rank)) % (1 << 64)


def litgpt_config(a, Config, **overrides):
    """litgpt's Config for the run: by name from litgpt's own table, or, for a --model-config
    file, from the fields tokbench read from it (litgpt's names, finalized), less tokbench's two
    of its own: `hf` (its form of hf_config, a label) and `rope_n_elem` (derived; litgpt derives
    it too). Any other name litgpt lacks is an error, not dropped."""
    if a.model_fields is None:
        return Config.from_name(a.model_name, **overrides)
    fields = {k: v for k, v in a.model_fields.items() if k not in ("hf", "rope_n_elem")}
    return Config(**{**fields, **overrides})


# TOKBENCH_TEST_SAME_START, a test hook (src/run/resolve.hpp, docs/eager-parity.md): the step
# starts where tokbench's own steps start, so an MoE routes the same tokens to the same experts
# on both sides. The two functions below restate tokbench's own initialisation and synthetic
# token stream; the eager-parity test fails if they drift, as the experts' shapes then differ.

def tokbench_initial_weights(torch, model, seed):
    """tokbench's GPTImpl::reset_parameters (src/model/gpt.cpp): one CPU generator seeded with
    --seed, the parameters in named_parameters order (tokbench registers its modules in
    litgpt's order, so the names and the order are litgpt's), biases zero, 1-D weights (norms)
    one, every other weight normal(0, 0.02) drawn in fp32 in pieces of 2^24 elements."""
    generator = torch.Generator().manual_seed(seed)
    chunk = 1 << 24
    with torch.no_grad():
        for name, p in model.named_parameters():
            flat = p.view(-1)
            for start in range(0, flat.numel(), chunk):
                n = min(chunk, flat.numel() - start)
                if name.endswith("bias"):
                    values = torch.zeros(n)
                elif p.dim() == 1:
                    values = torch.ones(n)
                else:
                    values = torch.empty(n).normal_(0.0, 0.02, generator=generator)
                flat[start:start + n].copy_(values)


class TokbenchTokens:
    """tokbench's synthetic tokens (src/train/token_data.cpp): xoshiro256** seeded through
    splitmix64, each id uniform on 0..99 by Lemire's bounded draw, sequences of T+1 drawn one
    after another (x the first T, y the last T), as TokenBatcher::fill_synthetic draws them."""
    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.s = []
        state = seed
        for _ in range(4):
            state = (state + 0x9E3779B97F4A7C15) & self.MASK
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
            self.s.append(z ^ (z >> 31))

    def next64(self):
        s, M = self.s, self.MASK
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M
        result = (rotl((s[1] * 5) & M, 7) * 9) & M
        t = (s[1] << 17) & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def bounded(self, bound):
        m = (self.next64() >> 32) * bound
        low = m & 0xFFFFFFFF
        if low < bound:
            threshold = ((1 << 32) - bound) % bound
            while low < threshold:
                m = (self.next64() >> 32) * bound
                low = m & 0xFFFFFFFF
        return m >> 32

    def draw(self, count):
        return [self.bounded(100) for _ in range(count)]


def init_distributed(a, torch, device):
    """torch.distributed over the job's store (tokbench's rank process serves or joins it)."""
    import datetime
    import torch.distributed as dist
    timeout = datetime.timedelta(seconds=a.dist_timeout)
    store = dist.TCPStore(a.store_host, a.store_port, is_master=False, timeout=timeout, wait_for_workers=False)
    for prefix in a.store_prefix:
        store = dist.PrefixStore(prefix, store)
    backend = a.backend or ("nccl" if device.type == "cuda" else "gloo")
    if backend == "gloo" and (a.store_host == "localhost" or a.store_host.startswith("127.")):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # one node: loopback, as tokbench's own Gloo groups
    # Libraries that read the rank from the environment (thunder's fsdp reads LOCAL_RANK) see ours.
    os.environ.update(RANK=str(a.rank), WORLD_SIZE=str(a.world_size), LOCAL_RANK=str(a.local_rank))
    extra = {"device_id": device} if backend == "nccl" else {}
    dist.init_process_group(backend, store=store, rank=a.rank, world_size=a.world_size, timeout=timeout, **extra)
    return dist


# --thunder-executor names (tokbench's compiler_choice.hpp) -> (module, attribute) of thunder's
# executor object, as benchmark_litgpt.py imports them.
THUNDER_EXECUTORS = {
    "torch_compile": ("thunder.executors.torch_compile", "torch_compile_ex"),
    "torch_compile_cat": ("thunder.executors.torch_compile", "torch_compile_cat_ex"),
    "transformer_engine": ("thunder.executors.transformer_engineex", "transformer_engine_ex"),
    "cudnn": ("thunder.executors.cudnnex", "cudnn_ex"),
}


def thunder_executors(a):
    """thunder's default executors with the requested ones in front (highest priority first).
    Raises LookupError naming an executor this install cannot serve: thunder leaves the
    executor object None when its library (cuDNN's frontend, TransformerEngine) is missing."""
    import importlib
    import thunder
    executors = list(thunder.get_default_executors())
    for name in reversed(a.thunder_executor):
        module, attribute = THUNDER_EXECUTORS[name]
        executor = getattr(importlib.import_module(module), attribute, None)
        if executor is None:
            need = {"cudnn": "the cudnn-frontend package and a CUDA device",
                    "transformer_engine": "the transformer_engine package and a CUDA device"}.get(name, "")
            raise LookupError(f"thunder's {name} executor is not available in this install (it needs {need})")
        executors = [executor] + [e for e in executors if e is not executor]
    return executors


INDUCTOR_NOTE = "inductor's CPU horizontal fusion capped at 1: PyTorch bug, docs/inductor-bf16-cpu.md"


def is_inductor_duplicate_name(error):
    """The inductor bug of docs/inductor-bf16-cpu.md: generated C++ that declares one
    temporary twice, which the C++ compiler rejects."""
    text = f"{type(error).__name__}: {error}"
    return "CppCompileError" in text and ("conflicting declaration" in text or "redefinition of" in text)


def uses_thunder_jit(a):
    """thunder.jit takes the model whole and shards it with its own transforms; as torch.compile's
    backend (dynamo) it runs inside PyTorch's DDP/FSDP wrapping, as the reference orders it."""
    return a.compile == "thunder" and a.thunder_front_end == "jit"


def thunder_jit(a, model, device, distributed, executors):
    """thunder.jit over the model; on many ranks followed by thunder's own ddp / fsdp transform
    (which this thunder applies to the jitted module)."""
    import thunder
    model = thunder.jit(model, executors=executors)
    if distributed:
        from thunder.distributed import FSDPBucketingStrategy, FSDPType, ddp, fsdp
        if a.distributed_mode == "ddp":
            model = ddp(model, broadcast_from=0, bucket_size_in_mb=a.ddp_bucket_mb)
        else:  # fsdp (tokbench refuses fsdp2 and hybrid sharding with thunder)
            model = fsdp(model, device=device, broadcast_from=0,
                         sharding_strategy=FSDPType.ZERO3 if a.shard_mode == "zero3" else FSDPType.ZERO2,
                         bucketing_strategy={"none": FSDPBucketingStrategy.NONE, "block": FSDPBucketingStrategy.BLOCK,
                                             "layer": FSDPBucketingStrategy.LAYER}[a.bucketing_mode])
    return model


def sharding_units(a, model, Block):
    """The modules that become FSDP units under --bucketing-mode (the root is always one)."""
    if a.bucketing_mode == "block":
        return [m for m in model.modules() if isinstance(m, Block)]
    if a.bucketing_mode == "layer":
        return [m for m in model.modules() if m is not model and any(True for _ in m.parameters(recurse=False))]
    return []


def parallelize(a, torch, dist, model, device, Block):
    """The model wrapped for --distributed-mode, the reference's way."""
    if a.distributed_mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                       bucket_cap_mb=a.ddp_bucket_mb)
    mesh = None
    if a.sharding_size and a.sharding_size < a.world_size:
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh(device.type, (a.world_size // a.sharding_size, a.sharding_size),
                                mesh_dim_names=("replicate", "shard"))
    units = sharding_units(a, model, Block)
    if a.distributed_mode == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy
        strategy = {("zero2", False): ShardingStrategy.SHARD_GRAD_OP, ("zero3", False): ShardingStrategy.FULL_SHARD,
                    ("zero2", True): ShardingStrategy._HYBRID_SHARD_ZERO2,
                    ("zero3", True): ShardingStrategy.HYBRID_SHARD}[(a.shard_mode, mesh is not None)]
        unit_ids = {id(m) for m in units}
        policy = (lambda module, recurse, nonwrapped_numel: recurse or id(module) in unit_ids) if units else None
        if a.bucketing_mode == "size":
            # The reference's --bucketing_mode size: PyTorch's own policy at tokbench's threshold,
            # which parallel::layout_fsdp_units(by_size) reproduces for tokbench's step.
            import functools
            from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy
            policy = functools.partial(size_based_auto_wrap_policy, min_num_params=a.min_unit_params)
        return FullyShardedDataParallel(model, sharding_strategy=strategy, auto_wrap_policy=policy,
                                        device_id=device,
                                        use_orig_params=True, device_mesh=mesh)
    from torch.distributed.fsdp import fully_shard
    reshard = a.shard_mode == "zero3"
    for unit in units:
        fully_shard(unit, mesh=mesh, reshard_after_forward=reshard)
    fully_shard(model, mesh=mesh, reshard_after_forward=reshard)
    return model


class StopAgreement:
    """Every rank stops at the same iteration start: each call posts this rank's flag with a
    non-blocking MAX all-reduce and decides on the previous call's (finished by then), so the
    agreement costs no wait inside the timed iterations."""

    def __init__(self, torch, dist, device):
        self.torch, self.dist = torch, dist
        self.flag = torch.zeros(1, device=device)
        self.pending = None

    def __call__(self, local):
        stop = False
        if self.pending is not None:
            self.pending.wait()
            stop = self.flag.item() > 0
            self.pending = None
        if not stop:
            self.flag.fill_(1.0 if local else 0.0)
            self.pending = self.dist.all_reduce(self.flag, op=self.dist.ReduceOp.MAX, async_op=True)
        return stop


class StopRequest:
    """The first SIGINT/SIGTERM asks the loop to stop between micro-batches."""

    def __init__(self):
        self.requested = False
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, signum, frame):
        self.requested = True


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


class MemoryProbe:
    """tokbench's counting CPU allocator (src/train/memory_probe.cpp), loaded with ctypes."""

    def __init__(self, path):
        import ctypes
        self.lib = ctypes.CDLL(path)
        for name in ("current", "peak"):
            getattr(self.lib, f"tokbench_memory_probe_{name}").restype = ctypes.c_int64
        if self.lib.tokbench_memory_probe_install() != 0:
            raise RuntimeError(f"{path}: a counting CPU allocator is already installed")

    def reset_peak(self):
        import gc
        gc.collect()  # what the set-up left unreachable is not part of the run
        self.lib.tokbench_memory_probe_reset_peak()

    def peak(self):
        return int(self.lib.tokbench_memory_probe_peak())


def apply_fp8(a, torch, model):
    """The reference's fp8 recipes, applied to the model before its dtype cast, wrapping and
    compilation, as the reference applies them (tokbench has checked the GPU, the executor and the
    mode: src/run/resolve.cpp, resolve_low_precision). Returns the context each forward runs in.
    - torchao (--use-torchao-fp8-linear): every Linear but lm_head becomes a float8 linear with
      dynamic scaling; under fully_shard, optionally all-gathered in fp8.
    - TransformerEngine (--low-precision-mode): every Linear becomes TE's (and with
      fp8-default-te-wo_layernorm, as the reference spells it, every LayerNorm), and forwards run
      under TE's fp8 autocast with its default recipe; thunder's transformer_engine executor
      takes the same autocast."""
    o = a.options
    if o["use_torchao_fp8_linear"]:
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training

        fsdp2 = a.distributed_mode == "fsdp2"
        config = Float8LinearConfig(enable_fsdp_float8_all_gather=o["use_torchao_fp8_allgather"] and fsdp2,
                                    force_recompute_fp8_weight_in_bwd=fsdp2,
                                    emulate=a.device == "cpu")  # the tests' CPU check of the conversion
        convert_to_float8_training(model, module_filter_fn=lambda _, name: name != "lm_head", config=config)
        return contextlib.nullcontext
    if o["low_precision_mode"] == "none":
        return contextlib.nullcontext
    import transformer_engine.pytorch as te

    swap_norms = o["low_precision_mode"] == "fp8-default-te-wo_layernorm"

    def swap(module):
        for name, child in module.named_children():
            swap(child)
            if isinstance(child, torch.nn.Linear):
                setattr(module, name, te.Linear(child.in_features, child.out_features, bias=child.bias is not None,
                                                device=str(child.weight.device)))
            elif swap_norms and isinstance(child, torch.nn.LayerNorm):
                setattr(module, name, te.LayerNorm(child.normalized_shape[0], eps=child.eps,
                                                   device=str(child.weight.device)))

    swap(model)
    return lambda: te.fp8_autocast(enabled=True)


def precompute_fp8_scales(a, model):
    """torchao with the fp8 all-gather under fully_shard: one all-reduce of every weight's scale
    after the optimizer step (--use-torchao-fp8-precompute-scale-for-fsdp), as the reference."""
    o = a.options
    if (o["use_torchao_fp8_linear"] and o["use_torchao_fp8_allgather"] and a.distributed_mode == "fsdp2"
            and o["use_torchao_fp8_precompute_scale_for_fsdp"]):
        from torchao.float8 import precompute_float8_dynamic_scale_for_fsdp

        precompute_float8_dynamic_scale_for_fsdp(model)


def print_thunder_traces(jitted, backend):
    """--dump-thunder-traces: the last forward and backward trace of every thunder function, on
    stderr (stdout is the events' channel), headed as the reference heads them."""
    import thunder

    def show(title, trace):
        print(f"##########\n#{title}\n##########\n{trace}", file=sys.stderr)

    if jitted is not None:
        show("1-th ThunderModule", thunder.last_traces(jitted)[-1])
        show("1-th ThunderModule", thunder.last_backward_traces(jitted)[-1])
        return
    for graph, infos in enumerate(backend.subgraph_infos):
        for index, fn in enumerate(infos.thunder_compiled_fns):
            show(f"Graph{graph}-ThunderFn{index} last forward trace", thunder.last_traces(fn)[-1])
            show(f"Graph{graph}-ThunderFn{index} last backward trace", thunder.last_backward_traces(fn)[-1])


def attention_priority(a, torch):
    """--use-sdpa: the reference's sdpa_kernel([CUDNN, FLASH, EFFICIENT, MATH], set_priority=True)
    around training, for PyTorch eager and inductor; thunder picks its own attention executor,
    and the reference leaves the priority alone there too (with a warning, as here)."""
    if not a.use_sdpa:
        return contextlib.nullcontext()
    if a.compile not in ("eager", "inductor"):
        print("tokbench: --use-sdpa has no effect with thunder, which picks its own attention executor",
              file=sys.stderr)
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    order = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    return sdpa_kernel(order, set_priority=True)


def attention_kernel(a, torch, Config):
    """The SDPA kernel PyTorch's dispatcher picks for litgpt's attention calls in this run, asked
    with the arguments litgpt passes (B, n_head, T, head_size in the compute dtype; causal, or
    the float mask of a sliding-window layer), under the priority in force: what eager runs and
    what inductor's graph calls. Distinct names joined by ", ", as tokbench's step reports them.
    None for thunder, whose own executors take the attention."""
    if a.compile not in ("eager", "inductor"):
        return None
    config = litgpt_config(a, Config, block_size=a.seq_len)
    if config.attention_logit_softcapping is not None:
        return "explicit (soft-capping)"
    names = {0: "math", 1: "flash_attention", 2: "efficient_attention", 3: "cudnn_attention", 4: "overrideable"}
    dtype = torch.float32 if a.dtype == "fp32" else torch.bfloat16
    q = torch.zeros(a.micro_batch_size, config.n_head, a.seq_len, config.head_size, dtype=dtype, device=a.device)
    scale = 1.0 / math.sqrt(config.attention_scores_scalar or config.head_size)
    calls = [dict(attn_mask=None, is_causal=True)]
    if config.sliding_window_size is not None and any(config.sliding_window_indices or []):
        calls.append(dict(attn_mask=torch.zeros(1, 1, a.seq_len, a.seq_len, dtype=dtype, device=a.device),
                          is_causal=False))
    kernels = []
    for call in calls:
        name = names.get(int(torch._fused_sdp_choice(q, q, q, dropout_p=0.0, scale=scale, **call)), "none")
        if name not in kernels:
            kernels.append(name)
    return ", ".join(kernels)


def train(a, torch, GPT, Config, Block, out, stop, probe, executors):
    import torch.nn.functional as F

    if a.num_threads > 0:
        torch.set_num_threads(a.num_threads)
    device = torch.device(a.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = a.tf32
        torch.backends.cudnn.allow_tf32 = a.tf32
    overrides = {"block_size": a.seq_len}
    if a.n_layers:
        overrides["n_layer"] = a.n_layers
    config = litgpt_config(a, Config, **overrides)
    torch.manual_seed(a.seed)
    with device:
        model = GPT(config)
    if a.test_same_start:
        tokbench_initial_weights(torch, model, a.seed)
    fp8_context = apply_fp8(a, torch, model)
    if a.dtype == "bf16-true":
        model = model.to(torch.bfloat16)
    model.train()
    if a.checkpoint_activations:
        # The reference's --checkpoint_activations: each Block under checkpoint_wrapper with
        # CheckpointImpl.NO_REENTRANT (torch.utils.checkpoint, use_reentrant=False), applied
        # before the parallel wrapping, so FSDP's units are the wrapped blocks and a recomputed
        # forward gathers its unit again.
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            CheckpointImpl, apply_activation_checkpointing, checkpoint_wrapper)
        import functools
        apply_activation_checkpointing(
            model, checkpoint_wrapper_fn=functools.partial(checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT),
            check_fn=lambda m: isinstance(m, Block))
    dist = None
    if a.world_size > 1:
        dist = init_distributed(a, torch, device)
        if not uses_thunder_jit(a):
            model = parallelize(a, torch, dist, model, device, Block)
    if uses_thunder_jit(a):
        model = thunder_jit(a, model, device, dist is not None, executors)
    # After the wrapping (the reference's order): FSDP's parameters are the shards.
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay,
                                  betas=(a.beta1, a.beta2), eps=a.eps, fused=True)
    forward = model
    thunder_backend = None
    if a.compile == "inductor" and a.time_account_iters > 0 and device.type == "cpu":
        # Inductor's C++ kernels record themselves only when generated with this (a
        # RecordFunction per call, a thread-local check without a profiler): the time account
        # names them by what they fuse. Before compiling, as it changes the generated code.
        torch._inductor.config.cpp.enable_kernel_profile = True
    if a.compile == "inductor":
        forward = torch.compile(model, dynamic=a.dynamic or None)
    elif a.compile == "thunder" and a.thunder_front_end == "dynamo":
        from thunder.dynamo import ThunderCompiler
        thunder_backend = ThunderCompiler(executors=executors)
        forward = torch.compile(model, backend=thunder_backend)
    inductor_note = ""  # set when the retry in the loop capped inductor's horizontal fusion
    generator = torch.Generator().manual_seed(rank_seed(a.data_seed, a.rank))
    tokbench_tokens = TokbenchTokens(rank_seed(a.data_seed, a.rank)) if a.test_same_start else None
    agree_to_stop = StopAgreement(torch, dist, device) if dist is not None else None
    if dist is not None:  # not destroyed before main() ends the process, even after an error
        KEEP_UNTIL_EXIT.extend([model, optimizer, agree_to_stop])
    B, T, GA, V = a.micro_batch_size, a.seq_len, a.grad_accum, config.padded_vocab_size
    set_to_none = a.zero_grad == "none"

    def autocast():
        if a.dtype == "bf16-mixed":
            return torch.autocast(device.type, dtype=torch.bfloat16)
        import contextlib
        return contextlib.nullcontext()

    def ranged(name):
        # The profile's named ranges; outside a profile record_function costs next to nothing,
        # but the measured loop does without it, as the reference's does.
        import contextlib
        return torch.profiler.record_function(name) if profiling else contextlib.nullcontext()

    import contextlib

    def gradient_sync(micro):
        """No gradient communication before the last micro-batch under --skip-data-sync."""
        skip = dist is not None and a.skip_data_sync and micro < GA - 1
        if uses_thunder_jit(a):
            if not skip:
                return contextlib.nullcontext()
            from thunder.distributed import skip_data_parallel_grad_sync
            return skip_data_parallel_grad_sync()
        if a.distributed_mode == "fsdp2":
            model.set_requires_gradient_sync(not skip)
            return contextlib.nullcontext()
        return model.no_sync() if skip else contextlib.nullcontext()

    micro_batches_drawn = [0]  # iteration i's micro-batch m is i·GA + m, as in tokbench's batcher
    real_tokens = [0]          # this iteration's targets that are not padding

    def one_iteration():
        """Forward and backward of GA micro-batches and one optimizer step; the last micro-batch's
        loss (divided by GA), or None when a stop request came between micro-batches (one rank)."""
        loss = None
        for micro in range(GA):
            if stop.requested and dist is None:
                return None
            with ranged("tokbench::data"):
                if tokbench_tokens is None:
                    data = torch.randint(0, 100, (B, T + 1), generator=generator)
                else:  # TOKBENCH_TEST_SAME_START
                    data = torch.tensor(tokbench_tokens.draw(B * (T + 1)), dtype=torch.long).view(B, T + 1)
                x, y = data[:, :T], data[:, 1:].clone()
                if a.dynamic:  # each sequence's tail past its drawn length is padding, ignored by the loss
                    drawn = micro_batches_drawn[0]
                    for b in range(B):
                        t = dynamic_length(a.data_seed, (drawn * a.world_size + a.rank) * B + b, T)
                        x[b, t:] = 0
                        y[b, t:] = -1
                micro_batches_drawn[0] += 1
                real_tokens[0] += int((y != -1).sum())
                x, y = x.to(device), y.to(device)
            with gradient_sync(micro):
                with ranged("forward"), autocast(), fp8_context():
                    logits = forward(x)
                    with ranged("tokbench::loss"):
                        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-1) / GA
                with ranged("backward"):
                    loss.backward()
        with ranged("optimizer"):
            if a.options["grad_clip_norm"] is not None:  # --grad-clip-norm, as tokbench's AdamW clips
                torch.nn.utils.clip_grad_norm_(model.parameters(), a.options["grad_clip_norm"])
            optimizer.step()
            precompute_fp8_scales(a, model)
            optimizer.zero_grad(set_to_none=set_to_none)
        return loss

    profiling = False
    iterations = []
    status, message = "ok", ""
    if probe is not None:  # the timed loop's peak, from what the set-up left resident
        probe.reset_peak()
    if device.type == "cuda":
        # The same on CUDA, as tokbench's own loop does (its memory tracker): not the set-up's
        # fp32 model before the bf16 cast, nor the attention probe's tensors.
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    previous_end = 0.0
    for index in range(a.max_iters):
        micro_batches_drawn[0], real_tokens[0] = index * GA, 0  # a retried iteration draws its own again
        if a.memory_snapshot and index == a.warmup_iters:  # from the first measured iteration, as the reference
            torch.cuda.memory._record_memory_history(max_entries=1_000_000)
        if agree_to_stop is not None and agree_to_stop(stop.requested):
            status, message = "interrupted", f"stopped on request after {index} iterations"
            break
        if a.test_host_delay_seconds > 0:  # TOKBENCH_TEST_HOST_DELAY_MS, as tokbench's loop sleeps
            time.sleep(a.test_host_delay_seconds)
        try:
            loss = one_iteration()
        except Exception as e:
            # PyTorch's inductor writes invalid C++ for some bf16/fp16 CPU reductions (pythia's
            # twin bias gradients; docs/inductor-bf16-cpu.md). Its public workaround slows other
            # models' kernels, so it is applied only once the bug has struck, in the first
            # (warm-up) iteration of a one-process run, and the step compiles again.
            if not (index == 0 and a.compile == "inductor" and dist is None and not inductor_note
                    and is_inductor_duplicate_name(e)):
                raise
            inductor_note = INDUCTOR_NOTE
            print(f"# note: {INDUCTOR_NOTE}; compiling again", file=sys.stderr, flush=True)
            torch._inductor.config.cpp.max_horizontal_fusion_size = 1
            torch._dynamo.reset()
            optimizer.zero_grad(set_to_none=True)
            forward = torch.compile(model, dynamic=a.dynamic or None)
            loss = one_iteration()
        if loss is None:
            status, message = "interrupted", f"stopped by a signal in iteration {index}"
            break
        if dist is not None:  # the mean over ranks, as tokbench's steps report it
            loss = loss.detach().float().clone()
            dist.all_reduce(loss)
            loss /= a.world_size
        value = loss.item() * GA
        if device.type == "cuda":
            torch.cuda.synchronize()
        end = time.perf_counter() - start
        sample = {"index": index, "warmup": index < a.warmup_iters, "seconds": end - previous_end,
                  "loss": value if math.isfinite(value) else None, "end_time": end, "real_tokens": real_tokens[0]}
        previous_end = end
        iterations.append(sample)
        emit(out, "iteration", **sample)
        if not math.isfinite(value):
            status, message = "nan", f"non-finite loss {value} at iteration {index}"
            break
    window = 0.0
    if status == "ok":
        window = iterations[-1]["end_time"] - (iterations[a.warmup_iters - 1]["end_time"] if a.warmup_iters > 0 else 0.0)
    memory = {"allocated_peak_bytes": None, "reserved_peak_bytes": None}
    if device.type == "cuda":
        memory = {"allocated_peak_bytes": torch.cuda.max_memory_allocated(device),
                  "reserved_peak_bytes": torch.cuda.max_memory_reserved(device)}
    elif probe is not None:
        memory = {"allocated_peak_bytes": probe.peak(), "reserved_peak_bytes": probe.peak()}
    # The process's high-water mark now, before the profiled passes (--profile, the time
    # account), whose profiler and events are in no reported figure.
    memory["peak_rss_bytes"] = peak_rss_bytes()
    if a.memory_snapshot:
        try:
            torch.cuda.memory._dump_snapshot(a.memory_snapshot)
            memory["memory_snapshot_message"] = f"Dump memory snapshot at {a.memory_snapshot}"
            memory["memory_snapshot_written"] = True
        except Exception as e:
            memory["memory_snapshot_message"] = f"no memory snapshot written: {e}".splitlines()[0]
            memory["memory_snapshot_written"] = False
        # Recording (with its stacks) stops here: the profiled passes after the window are not
        # slowed by it.
        torch.cuda.memory._record_memory_history(enabled=None)
    if a.options["dump_thunder_traces"] and status == "ok":
        print_thunder_traces(model if uses_thunder_jit(a) else None, thunder_backend)
    profile_message = None
    if a.profile:
        # After the peaks are read: the profiled iterations are in no reported figure.
        if status != "ok":
            profile_message = f"no profile written: the run ended with status {status}"
        else:
            profiling = True
            profile_message = record_profile(a, torch, device, one_iteration)
    if a.time_account_iters > 0 and status == "ok":
        # After the profile: the account's iterations are in no reported figure either.
        profiling = True
        with model_ranges(torch, model, config, eager=a.compile == "eager"):
            emit(out, "time_account", **record_time_account(a, torch, device, one_iteration))
    if dist is not None:
        if agree_to_stop.pending is not None:  # every rank posted the same number of flags
            agree_to_stop.pending.wait()
    if status == "ok" and inductor_note:
        message = inductor_note
    return status, message, iterations, window, memory, profile_message


def record_profile(a, torch, device, one_iteration):
    """--profile: a.profile_iters more iterations under torch.profiler; what became of the trace."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    try:
        with torch.profiler.profile(activities=activities, record_shapes=True, profile_memory=True) as profiler:
            for _ in range(a.profile_iters):
                loss = one_iteration()
                if loss is None:
                    return "no profile written: stopped by a signal"
                loss.item()
                if device.type == "cuda":
                    torch.cuda.synchronize()
        profiler.export_chrome_trace(a.profile)
    except Exception as e:
        return f"no profile written: {type(e).__name__}: {e}".splitlines()[0][:300]
    return (f"profile: Chrome trace of {a.profile_iters} iterations after the measured window "
            f"(not in the metrics) written to {a.profile}")


# The ranges tokbench's own loop and model record (src/account/range_names.hpp), which the time
# account's rules read; the step's own ("tokbench::iteration", "tokbench::data", "forward",
# "backward", "optimizer", "tokbench::loss") are recorded by one_iteration and the pass.
NORM_RANGE, ATTENTION_RANGE, ITERATION_RANGE = "tokbench::norm", "tokbench::attention", "tokbench::iteration"


@contextlib.contextmanager
def model_ranges(torch, model, config, eager):
    """The model's ranges for the time account, on PyTorch eager only: "tokbench::norm" around
    every norm module's forward and "tokbench::attention" around litgpt's attention core
    (CausalSelfAttention.scaled_dot_product_attention: SDPA, or the explicit soft-capped path),
    as tokbench's model records them. Each wraps the instance's method and is removed after the
    pass. Compiled models get none: a wrapper would make torch.compile recompile (it guards on
    the module's attributes) and thunder retrace, and neither would keep a record_function of
    the traced code; their kernels are classified by name (docs/time-account.md)."""
    from litgpt.model import CausalSelfAttention

    # litgpt's Config.norm_class is a class (LayerNorm) or, for RMSNorm, a functools.partial
    # binding its arguments: isinstance needs the class itself.
    norm_class = getattr(config.norm_class, "func", config.norm_class)
    wrapped = []
    if eager:
        for module in model.modules():
            if isinstance(module, norm_class):
                wrapped.append((module, "forward", NORM_RANGE))
            elif isinstance(module, CausalSelfAttention):
                wrapped.append((module, "scaled_dot_product_attention", ATTENTION_RANGE))

    def in_range(method, name):
        def call(*args, **kwargs):
            with torch.profiler.record_function(name):
                return method(*args, **kwargs)
        return call

    for module, attribute, name in wrapped:
        setattr(module, attribute, in_range(getattr(module, attribute), name))
    try:
        yield
    finally:
        for module, attribute, _ in wrapped:
            delattr(module, attribute)  # the class's method again


def record_time_account(a, torch, device, one_iteration):
    """The time account's profiled pass (docs/time-account.md): a.time_account_iters more
    iterations under torch.profiler (host operators with their input shapes, no memory; on a
    CUDA device CUPTI's kernels, copies and fills and the runtime calls that launched them too),
    each in a "tokbench::iteration" range that ends after the device is synchronised, their
    events handed to tokbench, which classifies them with its own rules (src/account). Returns
    the "time_account" line's fields: clock_seconds (the iterations by the host clock, summed)
    and the events, or error."""
    clock = 0.0
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    try:
        with torch.profiler.profile(activities=activities, record_shapes=True) as profiler:
            for _ in range(a.time_account_iters):
                start = time.perf_counter()
                with torch.profiler.record_function(ITERATION_RANGE):
                    # TOKBENCH_TEST_HOST_DELAY_MS: host work in no operator, inside the range
                    # (data_host), as tokbench's own pass sleeps (src/train/time_account_pass.cpp).
                    if a.test_host_delay_seconds > 0:
                        time.sleep(a.test_host_delay_seconds)
                    loss = one_iteration()
                    if loss is None:
                        return {"error": "stopped by a signal"}
                    loss.item()
                    if device.type == "cuda":  # the iteration's device work, NCCL's streams too, inside its range
                        torch.cuda.synchronize(device)
                clock += time.perf_counter() - start
        events = profiled_events(torch, profiler, device)
        if device.type == "cuda" and not events["device_events"]:
            # CUPTI that cannot trace (some sandboxes) leaves only a warning in Kineto's log: an
            # account from no device activity would show an idle device, not the run.
            return {"error": "the profiler recorded no device activity in the profiled iterations (can CUPTI "
                             "trace in this runtime?)"}
        return {"clock_seconds": clock, **events}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}


# CUDA's runtime and driver calls (cudaLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync,
# cudaDeviceSynchronize, ...): host events, but no operator. Python's KinetoEvent has no activity
# type (LibTorch's has: src/train/time_account_pass.cpp), so they are known by their names.
CUDA_CALL = re.compile(r"^cu(da)?[A-Z]")
# CUPTI's records of the device waiting (Kineto's CUDA_SYNC activities, when a profiler enables
# them): time the device spent in no work of its own.
DEVICE_RECORDS_NOT_WORK = frozenset({"Event Sync", "Stream Sync", "Context Sync", "Stream Wait Event"})


def profiled_events(torch, profiler, device):
    """The profiler's host events, compactly: names and shape lists once each ("names",
    "shapes"), then per event [name, start_ns, end_ns, thread, sequence_nr, flags, shapes or -1].
    The flags (src/run/python_time_account.cpp) add up: 1 for a backward node, an autograd
    node's evaluation (the BACKWARD_FUNCTION scope, or the engine's wrapper of one, which records
    the forward thread, as tokbench's own pass reads them: src/train/time_account_pass.cpp); 2
    for a record_function range (USER_SCOPE), whose gaps are not work; 4 for an asynchronous
    event: on many ranks, the collectives Gloo runs on its own threads ("gloo:all_reduce", from
    start to completion), which say when the loop's gaps are waits for them.
    On a CUDA device also "launches", the runtime and driver calls as [correlation_id, start_ns,
    thread] (not host events), and "device_events", the run's device's kernels, copies and fills
    as [name, start_ns, end_ns, stream, correlation_id] (the names in "names"): tokbench reads
    the device's timeline from them (src/account/device_timeline.hpp)."""
    names, shapes, rows = {}, {}, []
    launches, device_rows = [], []
    on_cuda = device.type == "cuda"
    device_index = device.index if device.index is not None else torch.cuda.current_device() if on_cuda else -1
    backward_function_scope, user_scope = 1, 7  # torch's RecordScope
    for e in profiler.profiler.kineto_results.events():
        if e.device_type() == torch.autograd.DeviceType.CUDA:
            # Kineto projects every record_function range onto the device as a "GPU user
            # annotation" spanning the kernels launched inside it ("forward", "tokbench::norm",
            # "## Call CompiledFxGraph ... ##"): not device work, and with no launch of its own.
            # Taken as an activity, it shared the device's time with the kernels it spans and
            # left half of it under the range's name in other. Only kernels, copies and fills
            # are kept, as tokbench's own pass does (src/train/time_account_pass.cpp).
            if e.is_user_annotation() or e.name() in DEVICE_RECORDS_NOT_WORK:
                continue
            if on_cuda and e.device_index() == device_index:
                device_rows.append([names.setdefault(e.name(), len(names)), e.start_ns(), e.end_ns(),
                                    e.device_resource_id(), e.correlation_id()])
            continue
        if e.device_type() != torch.autograd.DeviceType.CPU:
            continue
        if on_cuda and CUDA_CALL.match(e.name()):
            launches.append([e.correlation_id(), e.start_ns(), e.start_thread_id()])
            continue
        name = names.setdefault(e.name(), len(names))
        shape = -1
        if e.shapes():
            shape = shapes.setdefault(json.dumps(e.shapes(), separators=(",", ":")), len(shapes))
        flags = ((1 if e.scope() == backward_function_scope or e.fwd_thread_id() > 0 else 0)
                 | (2 if e.scope() == user_scope else 0) | (4 if e.is_async() else 0))
        rows.append([name, e.start_ns(), e.end_ns(), e.start_thread_id(), e.sequence_nr(), flags, shape])
    out = {"names": list(names), "shapes": [json.loads(s) for s in shapes], "events": rows}
    if on_cuda:
        out.update(launches=launches, device_events=device_rows)
    return out


def die_with_parent():
    """tokbench started this step with posix_spawn, which cannot set a parent-death signal, and
    asks for one in TOKBENCH_PARENT_PID: if tokbench is killed, the step must not train on alone."""
    parent = os.environ.pop("TOKBENCH_PARENT_PID", "")
    if not parent.isdigit() or not sys.platform.startswith("linux"):
        return
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != int(parent):  # tokbench died before the line above
        os._exit(127)


def main():
    die_with_parent()
    a = read_config()
    if a.device == "cpu":
        # Kineto logs "gpuGetDeviceCount failed" on a machine without a GPU whenever a profiler
        # starts (the time account's, --profile's); tokbench silences it likewise unless the
        # user set the level (src/train/profile_trace.cpp). Before torch loads Kineto.
        os.environ.setdefault("KINETO_LOG_LEVEL", "5")
    out = open_result_stream()
    stop = StopRequest()
    try:
        import torch
        import litgpt
        from litgpt.config import Config
        from litgpt.model import GPT, Block
        if a.compile == "thunder":
            import warnings
            # Optional GPU back-ends it looks for at import; their absence is not news here.
            warnings.filterwarnings("ignore", message=".*module not found!")
            import thunder
    except Exception as e:  # ImportError, or a broken install failing inside its import
        error = f"{type(e).__name__}: {e}".splitlines()[0]
        emit(out, "unavailable", python=sys.executable, error=error)
        sys.exit(2)
    from importlib.metadata import version as package_version
    versions = {"torch_version": torch.__version__, "litgpt_version": package_version("litgpt"),
                "python_version": sys.version.split()[0]}
    executors = None
    if a.compile == "thunder":
        versions["thunder_version"] = package_version("lightning-thunder")
        try:
            executors = thunder_executors(a)
        except Exception as e:  # LookupError, ImportError, or a broken install failing in its import
            emit(out, "unavailable", python=sys.executable, error=str(e).splitlines()[0], executor=True)
            sys.exit(2)
        versions["thunder_executors"] = ", ".join(e.name for e in executors)
    fp8_library = ("torchao.float8" if a.options["use_torchao_fp8_linear"] else
                   "transformer_engine.pytorch" if a.options["low_precision_mode"] != "none" else None)
    if fp8_library:  # before any work, as a missing thunder executor
        try:
            importlib.import_module(fp8_library)
        except Exception as e:  # ImportError, or a mismatched extension failing in its import
            emit(out, "unavailable", python=sys.executable, executor=True,
                 error=f"the fp8 recipe needs {fp8_library}: " + (str(e).splitlines() or [""])[0])
            sys.exit(2)
    if a.num_threads > 0:
        torch.set_num_threads(a.num_threads)
    emit(out, "ready", num_threads=torch.get_num_threads(), **versions)

    status, message, iterations, window, memory, profile_message = "error", "", [], 0.0, {}, None
    kernel = None
    try:
        probe = MemoryProbe(a.memory_probe) if a.memory_probe and a.device == "cpu" else None
        with attention_priority(a, torch):
            kernel = attention_kernel(a, torch, Config)
            status, message, iterations, window, memory, profile_message = train(a, torch, GPT, Config, Block, out,
                                                                                 stop, probe, executors)
    except torch.OutOfMemoryError as e:
        status, message = "oom", str(e).splitlines()[0]
    except Exception as e:
        status, message = "error", (f"{type(e).__name__}: {e}".splitlines() or [""])[0]
        if is_inductor_duplicate_name(e):
            message += " (PyTorch inductor's bf16/fp16 CPU reduction bug: docs/inductor-bf16-cpu.md)"
    profile = {} if profile_message is None else {"profile_message": profile_message}
    rss = memory.pop("peak_rss_bytes", None) or peak_rss_bytes()  # a run that failed: now
    emit(out, "result", status=status, message=message, measured_window_seconds=window,
         peak_rss_bytes=rss, attention_kernel=kernel, **memory, **profile)
    if a.world_size > 1:
        out.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
