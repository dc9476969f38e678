"""Passes plus code generation for long pointwise chains (issue: 1 s per 1,000 ops).

For a chain of N pointwise ops over one `?x4` input (`tests/test_long_fusions.py`'s
`chain`), times the whole compile pipeline (`passes.pipeline.run_pipeline`: every
pass, each followed by verification) and the host program's generation
(`emit_program`, Triton's JIT excluded), best of `--repeat` runs, and prints
seconds per 1,000 ops.

    .venv/bin/python benchmarks/compile_time.py --ops 1000 10000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_long_fusions import chain  # noqa: E402

from allotment.backend.host_codegen import emit_program  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.passes.pipeline import run_pipeline  # noqa: E402


def measure(n: int) -> tuple[float, float, int]:
    module = parse_module(chain(n))
    start = time.perf_counter()
    planned = run_pipeline(module)
    middle = time.perf_counter()
    program = emit_program(find_function(planned, "chain"), "cpu")
    return middle - start, time.perf_counter() - middle, len(program.kernels)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{'ops':>7} {'passes s':>9} {'codegen s':>10} {'total s':>8} {'s / 1000 ops':>13} {'kernels':>8}")
    for n in args.ops:
        runs = [measure(n) for _ in range(args.repeat)]
        passes, codegen, kernels = min(runs, key=lambda r: r[0] + r[1])
        total = passes + codegen
        print(f"{n:>7} {passes:9.2f} {codegen:10.2f} {total:8.2f} {1000 * total / n:13.2f} {kernels:>8}")


if __name__ == "__main__":
    main()
