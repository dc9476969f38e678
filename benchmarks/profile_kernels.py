"""Kernel profiles of one fusion (for Nsight Compute): Allotment's kernels and torch.compile's.

Compiles the fusion of `gpu_suite.py` named on the command line with Allotment
and with torch.compile, warms both up outside the profiled range, then runs
each `--calls` times inside `torch.cuda.profiler` start/stop, so that

    ncu --profile-from-start off --set detailed -o OUT python3 benchmarks/profile_kernels.py middle_mean 32768x4096

profiles exactly those kernels (use `benchmarks/profile_misses.sh OUT_DIR` for
the misses of BENCHMARKS.md). Without ncu it prints each variant's kernel time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import gpu_suite  # noqa: E402

import allotment  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("fusion", choices=sorted(gpu_suite.FUSIONS))
    p.add_argument("size", help="ROWSxHIDDEN, e.g. 32768x4096")
    p.add_argument("--calls", type=int, default=1)
    args = p.parse_args(argv)
    rows, hidden = (int(v) for v in args.size.split("x"))
    xs = gpu_suite.inputs_for(args.fusion, rows, hidden)
    ref = gpu_suite.FUSIONS[args.fusion]
    exe = allotment.compile(gpu_suite.fusion_text(args.fusion, hidden))
    compiled = torch.compile(ref)
    variants = {"allotment": lambda: exe(*xs), "compile": lambda: compiled(*xs)}
    for fn in variants.values():  # compile and warm up outside the profiled range
        fn()
        fn()
    torch.cuda.synchronize()
    for label, fn in variants.items():
        print(f"{args.fusion} {args.size} {label}: {gpu_suite.kernel_ms(fn) * 1e3:.1f} us", flush=True)
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
