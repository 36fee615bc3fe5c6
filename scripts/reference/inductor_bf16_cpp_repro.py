"""Minimal reproduction: torch.compile (inductor, CPU) emits invalid C++ for a bf16 column sum
that is stored to two outputs.

What it shows
    The function below sums the same bf16 matrix over dim 0 twice. Inductor fuses the two sums
    into one vectorized CPU kernel, computes the reduction once (the kernel's reduction cache),
    and then writes it to each output through a temporary called
    ``at_BFloat16_tmp_acc0_vec``. The name comes only from the accumulator, so the second store
    declares it again in the same C++ scope and g++ fails with
    ``error: conflicting declaration 'auto at_BFloat16_tmp_acc0_vec'`` (clang: "redefinition").
    The bug is in PyTorch's C++ code generator
    (``CppVecKernel.store_reduction`` in torch/_inductor/codegen/cpp.py), not in g++. It affects
    any reduction over a non-innermost dimension whose output is bf16 or fp16. With fp32 nothing
    is converted, so there is no temporary and no error.

    tokbench hits it when training pythia models in bf16-true with --compile inductor on the
    CPU. Pythia uses a parallel residual (x + attn(ln1(x)) + mlp(ln2(x))), so the bias gradients
    of attn.proj and mlp.proj are the same column sum of the same upstream gradient. The
    backward graph therefore contains two identical bf16 ``sum(dim=0)`` nodes, just like
    ``f`` below. Llama and Qwen blocks have no such pair of biases and compile fine.

How to run (from the repository root)
    .venv/bin/python scripts/reference/inductor_bf16_cpp_repro.py                # show the bug
    .venv/bin/python scripts/reference/inductor_bf16_cpp_repro.py --workaround   # fusion capped
    .venv/bin/python scripts/reference/inductor_bf16_cpp_repro.py --dtype fp32   # control: no bug

    Each run uses a fresh inductor cache in a temporary directory, so an earlier run's kernels
    cannot hide the bug.

Output and exit status
    On failure it prints the g++ diagnostic lines and the generated line they point at, then
    "REPRODUCED: ..." and exits with status 1. The temporary cache is kept, so the generated
    .cpp file named in the diagnostic can be read.
    On success it prints "OK: compiled and matches eager ..." and exits with status 0. For
    example, --dtype fp32 succeeds, and so does the workaround.
    Any other error exits with status 2.

Workaround (--workaround)
    torch._inductor.config.cpp.max_horizontal_fusion_size = 1 (or the environment variable
    TORCHINDUCTOR_CPP_MAX_HORIZONTAL_FUSION_SIZE=1). This turns off horizontal fusion in the CPU
    backend, so the two sums go into separate loops that each read the input. It needs no
    private code, but it changes and slows down other kernels too, which is why tokbench's
    Python step applies it only after the bug has struck (python/tokbench_python_step.py).

Found with torch 2.11.0, g++ 12.2 (Debian 12) and clang++ 14 (both reject the code), on a KVM
"Intel(R) Xeon(R) Processor" with AVX-512 on 2026-12-03. It also fails with
cpp.simdlen = 256 (AVX2 kernels). See docs/inductor-bf16-cpu.md.
"""
import argparse
import os
import shutil
import sys
import tempfile

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workaround", action="store_true",
                        help="cap inductor's CPU horizontal fusion at 1 (torch's public config)")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    args = parser.parse_args()

    cache = tempfile.mkdtemp(prefix="inductor_bf16_repro_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # before torch is imported
    import torch

    print(f"torch {torch.__version__}, dtype {args.dtype}, workaround {'max_horizontal_fusion_size=1' if args.workaround else 'none'}, "
          f"cache {cache}")
    if args.workaround:
        torch._inductor.config.cpp.max_horizontal_fusion_size = 1
        print("workaround: torch._inductor.config.cpp.max_horizontal_fusion_size = 1")

    def f(x):
        return x.sum(0), x.sum(0)

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    x = torch.randn(64, 64).to(dtype)
    try:
        a, b = torch.compile(f)(x)
    except Exception as e:  # InductorError wrapping CppCompileError
        text = str(e)
        if "CppCompileError" not in type(e).__name__ + text:
            print(f"unexpected error: {type(e).__name__}: {text[:2000]}")
            return 2
        lines = text.splitlines()
        shown = 0
        for i, line in enumerate(lines):
            if ": error:" in line or ": note: previous declaration" in line:
                print(line)
                if i + 1 < len(lines):
                    print(lines[i + 1])
                shown += 1
                if shown == 4:
                    break
        print("REPRODUCED: inductor generated C++ that the compiler rejects (CppCompileError)")
        return 1
    expected = x.sum(0)
    try:  # compiled and eager sum in different orders: compare with dtype-aware tolerances
        torch.testing.assert_close(a, expected)
        torch.testing.assert_close(b, expected)
    except AssertionError as e:
        print(f"compiled, but the results differ from eager: {e}")
        return 2
    shutil.rmtree(cache, ignore_errors=True)  # kept on failure, to look at the generated .cpp
    print("OK: compiled and matches eager (bug not reproduced)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
