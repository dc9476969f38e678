"""Where host time goes: cProfile of many calls of a one-kernel fusion at 8x128 on the GPU.

    python3 benchmarks/host_profile.py [--fusion bias_gelu] [--calls 5000]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_suite import fusion_text, inputs_for  # noqa: E402

import allotment  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--fusion", default="bias_gelu")
    p.add_argument("--calls", type=int, default=5000)
    args = p.parse_args()
    xs = inputs_for(args.fusion, 8, 128)
    exe = allotment.compile(fusion_text(args.fusion, 128))
    for _ in range(100):
        exe(*xs)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.calls):
        exe(*xs)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    print(f"{args.fusion}: {(t1 - t0) / args.calls * 1e6:.1f} us/call")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        exe(*xs)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)
    empty = torch.empty
    t0 = time.perf_counter()
    for _ in range(args.calls):
        empty((8, 128), dtype=torch.bfloat16, device="cuda")
    print(f"torch.empty: {(time.perf_counter() - t0) / args.calls * 1e6:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
