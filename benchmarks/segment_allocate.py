"""CPU benchmark: time of `fusion-segment` + `fusion-allocate` on generated fusions.

Uses the fusion generator of parse_verify.py (a realistic mix of elementwise
chains, casts, reductions with broadcast back, reshapes and permutes) and
times the two passes (parsing excluded), best of R runs, for each size:

    .venv/bin/python benchmarks/segment_allocate.py --ops 100 1000 10000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from parse_verify import allotment_context, generate_fusion, parse  # noqa: E402
from xdsl.context import Context  # noqa: E402

from allotment.passes.fusion_allocate import FusionAllocatePass  # noqa: E402
from allotment.passes.fusion_segment import FusionSegmentPass  # noqa: E402


def time_passes(text: str, repeat: int) -> tuple[float, float, int, int]:
    ctx = allotment_context()
    best_seg = best_alloc = float("inf")
    kernels = allocs = 0
    for _ in range(repeat):
        module = parse(ctx, text)
        t0 = time.perf_counter()
        FusionSegmentPass().apply(Context(), module)
        t1 = time.perf_counter()
        FusionAllocatePass().apply(Context(), module)
        t2 = time.perf_counter()
        best_seg, best_alloc = min(best_seg, t1 - t0), min(best_alloc, t2 - t1)
        kernels = sum(1 for op in module.walk() if op.name == "alloc.kernel")
        allocs = sum(1 for op in module.walk() if op.name == "alloc.alloc")
        module.verify()
    return best_seg, best_alloc, kernels, allocs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows = []
    for n in args.ops:
        text = generate_fusion(n, seed=0)
        seg, alloc, kernels, allocs = time_passes(text, args.repeat)
        rows.append((n, seg, alloc, kernels, allocs))
    print(f"{'ops':>7} {'segment s':>10} {'allocate s':>11} {'total s':>9} {'kernels':>8} {'allocs':>7}")
    for n, seg, alloc, kernels, allocs in rows:
        print(f"{n:>7} {seg:>10.3f} {alloc:>11.3f} {seg + alloc:>9.3f} {kernels:>8} {allocs:>7}")
    if len(rows) >= 2:
        by_n = {r[0]: r[1] + r[2] for r in rows}
        if 1000 in by_n and 10000 in by_n:
            print(f"time(10k) / time(1k) = {by_n[10000] / by_n[1000]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
