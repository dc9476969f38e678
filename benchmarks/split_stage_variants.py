"""A/B of software pipelining in the first stage of split reductions, on the GPU.

    python3 benchmarks/split_stage_variants.py [--cases full_sum:large,bias_grad:large] [--dtype bf16]

Each case is a suite fusion at one size with static extents whose first kernel is a
split reduction's first stage (`k0_split_partial_`: each program streams its chunk of
the reduced axis). The script times that kernel as generated (a plain `range` loop:
one tile's loads in flight a program) and with its loop as `tl.range(...,
num_stages=S)` (Triton pipelines the next tiles' loads through shared memory) or
`loop_unroll_factor=2`, on the arguments the Allotment call launches it with, with
the partials checked against the generated kernel's. torch.compile and the whole
Allotment call are timed in the same process. Nothing here is a target figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import suite_fusions  # noqa: E402
from looped_kernel_variants import _header, _kernel_source, _load  # noqa: E402
from measure import kernel_ms  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402

LOOP = "for step in range(0, chunk, BLOCK_N):"
VARIANTS = {
    "generated": LOOP,
    "stages2": "for step in tl.range(0, chunk, BLOCK_N, num_stages=2):",
    "stages3": "for step in tl.range(0, chunk, BLOCK_N, num_stages=3):",
    "stages4": "for step in tl.range(0, chunk, BLOCK_N, num_stages=4):",
    "unroll2": "for step in tl.range(0, chunk, BLOCK_N, loop_unroll_factor=2):",
}


def _one_case(case: str, dtype: str, tmp: Path) -> None:
    fname, size = case.split(":")
    f = suite_fusions.FUSIONS[fname]
    exe = allotment.compile(f.text(dtype, False, size))
    program = exe.source("cuda")
    xs = f.make_inputs(size, dtype, "cuda")
    seen: list[tuple] = []
    with launch.intercepted(lambda k, g, a, c, w: seen.append((k, g, a, c, w))):
        exe(*xs)
    kernel0, grid, kargs, cx, warps = seen[0]
    name = kernel0.fn.__name__ if hasattr(kernel0, "fn") else kernel0.__name__
    if "split_partial" not in name:
        print(f"{case}: first kernel {name} is no split first stage; skipped")
        return
    src = _kernel_source(program, name)
    comp = torch.compile(lambda *t: f.torch_fn(*t))
    comp(*xs)
    print(f"{case} {dtype}: {name}, grid {grid}, blocks {cx} x {warps} warps; torch.compile "
          f"{kernel_ms(lambda: comp(*xs)) * 1e3:.1f} us, Allotment call {kernel_ms(lambda: exe(*xs)) * 1e3:.1f} us")
    partials = next(a for a in kargs[1:] if isinstance(a, torch.Tensor) and a.dtype == torch.float32)
    ref = None
    for tag, loop in VARIANTS.items():
        if LOOP not in src:
            print("  no split loop")
            return
        k = _load(_header(program), src.replace(LOOP, loop), name, tmp, tag)

        def run(k=k) -> None:  # noqa: ANN001
            k[grid](*kargs, **cx, num_warps=warps)

        run()
        torch.cuda.synchronize()
        if ref is None:
            ref = partials.clone()
        err = (partials - ref).abs().max().item()
        print(f"  {tag:10s} {kernel_ms(run, rep=100) * 1e3:8.1f} us  max diff vs generated {err:.1e}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="full_sum:large,bias_grad:large,reduction_epilogue:large,full_sum:odd")
    p.add_argument("--dtype", default="bf16")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp())
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for case in args.cases.split(","):
        _one_case(case, args.dtype, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
