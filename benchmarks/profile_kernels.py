"""Kernel profiles of one suite fusion (for Nsight Compute): Allotment's kernels and torch.compile's.

Compiles the fusion of `suite_fusions.py` named on the command line, in one dtype,
with static or `?` extents, at one of its sizes, with Allotment and with
torch.compile, warms both up outside the profiled range, then runs each `--calls`
times inside `torch.cuda.profiler` start/stop, so that

    ncu --profile-from-start off --set detailed -o OUT \
        python3 benchmarks/profile_kernels.py gelu_bwd bf16 static odd

profiles exactly those kernels (`benchmarks/profile_misses.sh OUT_DIR` runs it on
the misses of BENCHMARKS.md). Without ncu it prints each variant's kernel time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import suite_fusions  # noqa: E402
from measure import kernel_ms  # noqa: E402

import allotment  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite_fusions.add_case_arguments(p)
    p.add_argument("--calls", type=int, default=1)
    args = p.parse_args(argv)
    f = suite_fusions.FUSIONS[args.fusion]
    dynamic = args.extents == "dynamic"
    xs = f.make_inputs(args.size, args.dtype, "cuda")
    exe = allotment.compile(f.text(args.dtype, dynamic, args.size))
    compiled = torch.compile(f.torch_fn, dynamic=dynamic)
    variants = {"allotment": lambda: exe(*xs), "compile": lambda: compiled(*xs)}
    for fn in variants.values():  # compile and warm up outside the profiled range
        fn()
        fn()
    torch.cuda.synchronize()
    for label, fn in variants.items():
        print(f"{args.fusion} {args.dtype} {args.extents} {args.size} {label}: {kernel_ms(fn) * 1e3:.1f} us", flush=True)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for fn in variants.values():
        for _ in range(args.calls):
            fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
