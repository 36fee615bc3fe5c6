"""The Python step's fp8 recipes on the CPU, where the CLI refuses them (no fp8 tensor cores):
torchao's conversion (in its emulation mode, which the step selects on the CPU) turns every
Linear of a litgpt model but lm_head into a float8 linear, and a training step runs through it
with finite loss and gradients. What the GPU adds (fp8 GEMMs) is scripts/gpu-acceptance's."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402
from litgpt import Config  # noqa: E402
from litgpt.model import GPT  # noqa: E402
from torchao.float8.float8_linear import Float8Linear  # noqa: E402

import tokbench_python_step as step  # noqa: E402

options = {"use_torchao_fp8_linear": True, "use_torchao_fp8_allgather": False,
           "use_torchao_fp8_precompute_scale_for_fsdp": False, "low_precision_mode": "none"}
a = argparse.Namespace(options=options, distributed_mode="none", device="cpu")
torch.manual_seed(0)
model = GPT(Config.from_name("pythia-14m", n_layer=2, block_size=64))
linears = {name for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
context = step.apply_fp8(a, torch, model)
converted = {name for name, m in model.named_modules() if isinstance(m, Float8Linear)}
if converted != linears - {"lm_head"} or not converted:
    sys.exit(f"FAIL: float8 linears {sorted(converted)}, want every Linear but lm_head: {sorted(linears)}")
x = torch.randint(0, 100, (2, 64))
with context():
    loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), x.flatten())
loss.backward()
grads = [p.grad for p in model.parameters()]
if not torch.isfinite(loss) or any(g is None or not torch.isfinite(g).all() for g in grads):
    sys.exit(f"FAIL: loss {loss}, or a missing or non-finite gradient")
print("ok")
