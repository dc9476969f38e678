"""GPU run of the memory-planning checks (not collected by pytest).

The differential checks of tests/test_memory_planning_run.py (concat without
copies, in-place outputs with their hazard resolved or copied, a memory-aware
order with frees) on CUDA tensors, with poison mode on, each against the
reference evaluator; then, for the bad-order graph at a large size, the peak
memory that torch measures for one call against the plan's own figure.
Prints one line per check and PASS or FAIL.

    python3 tests/gpu/check_planning.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["ALLOT_POISON"] = "1"

import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

import peak_memory  # noqa: E402 (benchmarks/peak_memory.py)
from backend_check import compare, tolerance  # noqa: E402
from test_memory_planning_run import BAD_ORDER, CAT, CAT3D, COPIED, HAZARD, STEP  # noqa: E402

import allotment  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import evaluate  # noqa: E402


def differential(name: str, text: str, shapes: list[tuple[int, ...]]) -> None:
    g = torch.Generator().manual_seed(0)
    inputs = [torch.randn(s, generator=g).cuda() for s in shapes]
    expected = evaluate(find_function(parse_module(text)), [x.clone() for x in inputs])
    actual = allotment.compile(text)(*inputs)
    compare(actual, expected, tolerance(text))
    print(f"ok  {name} {shapes}", flush=True)


def in_place(name: str, text: str, shapes: list[tuple[int, ...]], written: list[int]) -> None:
    g = torch.Generator().manual_seed(1)
    inputs = [torch.randn(s, generator=g).cuda() for s in shapes]
    expected = evaluate(find_function(parse_module(text)), [x.clone() for x in inputs])
    ptrs = [inputs[i].data_ptr() for i in written]
    outs = allotment.compile(text)(*inputs)
    compare(outs, expected, tolerance(text))
    returned = {o.data_ptr() for o in outs}
    for i, ptr in zip(written, ptrs):
        assert inputs[i].data_ptr() == ptr and ptr in returned, f"input {i} was not written in place"
    print(f"ok  {name} in place {shapes}", flush=True)


def measured_peak(text: str, inputs: list[torch.Tensor]) -> int:
    exe = allotment.compile(text)
    exe(*inputs)  # compile and warm up
    return peak_memory.measured_peak(lambda: exe(*inputs))[0]


def main() -> int:
    failures = 0
    checks = [
        lambda: differential("cat", CAT, [(4096, 4), (4096, 6)]),
        lambda: differential("cat3d", CAT3D, [(2, 300, 8), (2, 301, 8), (2, 7, 8)]),
        lambda: differential("bad_order", BAD_ORDER, [(5000, 8), (16, 8), (16, 8), (16, 8)]),
        lambda: in_place("step", STEP, [(100_003,), (100_003,), (100_003,)], [0, 2]),
        lambda: in_place("hazard", HAZARD, [(777, 4), (4, 4)], [0]),
        lambda: in_place("copied", COPIED, [(8, 4)], [0]),
    ]
    for check in checks:
        try:
            check()
        except Exception as e:  # noqa: BLE001 (report every check)
            failures += 1
            print(f"FAIL {type(e).__name__}: {e}", flush=True)
    rows = 1 << 20
    g = torch.Generator().manual_seed(2)
    inputs = [torch.randn(rows, 8, generator=g).cuda()] + [torch.randn(16, 8, generator=g).cuda() for _ in range(3)]
    plan = allotment.memory_plan(BAD_ORDER, {"x": (rows, 8)})
    peak = measured_peak(BAD_ORDER, inputs)
    ratio = peak / plan.planned_peak
    print(f"bad_order x={rows}x8: measured peak {peak} bytes, {plan.summary()}, measured/planned {ratio:.3f}")
    if not 0.95 <= ratio <= 1.05:
        failures += 1
        print("FAIL measured peak differs from the planned peak by more than 5%")
    print("PASS" if failures == 0 else f"FAIL: {failures} checks failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
