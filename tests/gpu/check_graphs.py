"""GPU check of the CUDA-graph path (not collected by pytest).

For RMSNorm (one kernel), a three-kernel MLP-like chain, the dynamic-row
softmax (run-time placement) and an in-place Adam-like step: graphed results
match the reference evaluator over several calls with new data, a new
signature captures a new graph, in-place outputs reach the caller's tensors;
then the host time per call, graphed and not, at a small size (median of
CUDA-event-free wall time over 2000 calls after warmup, synchronized once).
Prints one line per check, the timing table, and PASS or FAIL.

    python3 tests/gpu/check_graphs.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from backend_check import compare, tolerance  # noqa: E402
from test_arena import CHAIN  # noqa: E402
from test_backend_ops import DYNAMIC_SOFTMAX  # noqa: E402
from test_memory_planning_run import STEP  # noqa: E402

import allotment  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import evaluate  # noqa: E402

RMSNORM = (ROOT / "examples" / "rmsnorm.mlir").read_text()
failures: list[str] = []


def inputs_for(text: str, rows: int, seed: int) -> list[torch.Tensor]:
    f = find_function(parse_module(text))
    g = torch.Generator().manual_seed(seed)
    out = []
    for a in f.args:
        shape = [rows if e < 0 else e for e in a.type.get_shape()]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(str(a.type.element_type), torch.float32)
        out.append((torch.randn(shape, generator=g) / 4).to(dtype).cuda())
    return out


def check(name: str, text: str, rows: int) -> None:
    exe = allotment.compile(text, cuda_graphs=True)
    try:
        for seed in range(3):
            xs = inputs_for(text, rows, seed)
            expected = evaluate(find_function(parse_module(text)), [x.clone() for x in xs])
            got = exe(*xs)
            compare([g.clone() for g in got], expected, tolerance(text))
        xs = inputs_for(text, rows + 3, 7)  # a new signature: a second capture
        expected = evaluate(find_function(parse_module(text)), [x.clone() for x in xs])
        compare([g.clone() for g in exe(*xs)], expected, tolerance(text))
        assert exe._graphed.captures == 2, exe._graphed.captures
        print(f"{name}: graphed results match over 4 calls, 2 captures")
    except Exception as e:  # noqa: BLE001 (a check script reports every failure)
        failures.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {e}")


def check_in_place() -> None:
    exe = allotment.compile(STEP, cuda_graphs=True)
    try:
        for seed in range(3):
            xs = inputs_for(STEP, 64, seed)
            before = [x.clone() for x in xs]
            expected = evaluate(find_function(parse_module(STEP)), [x.clone() for x in before])
            got = exe(*xs)
            compare([g.clone() for g in got], expected, tolerance(STEP))
            assert got[0].data_ptr() == xs[0].data_ptr(), "the in-place output is the caller's tensor"
            compare([xs[0]], [expected[0]], tolerance(STEP))
        print("in-place step: written back to the caller's tensor over 3 calls")
    except Exception as e:  # noqa: BLE001
        failures.append("in-place")
        print(f"FAIL in-place: {type(e).__name__}: {e}")


def host_us(fn, xs: list[torch.Tensor], calls: int = 2000) -> float:  # noqa: ANN001
    for _ in range(50):
        fn(*xs)
    torch.cuda.synchronize()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls // 5):
            fn(*xs)
        samples.append((time.perf_counter() - start) / (calls // 5) * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def timing() -> None:
    print("host us per call (8 rows): fusion, kernels, plain, graphed")
    for name, text in (("rmsnorm", RMSNORM), ("chain", CHAIN), ("softmax?", DYNAMIC_SOFTMAX)):
        xs = inputs_for(text, 8, 0)
        plain = allotment.compile(text)
        graphed = allotment.compile(text, cuda_graphs=True)
        kernels = plain.source("cuda").count("rt.launch(") + plain.source("cuda").count("rt.matmul(")
        print(f"  {name}: {kernels} launch sites, plain {host_us(plain, xs):.1f} us, graphed {host_us(graphed, xs):.1f} us")


if __name__ == "__main__":
    check("rmsnorm", RMSNORM, 64)
    check("chain", CHAIN, 16)
    check("dynamic softmax", DYNAMIC_SOFTMAX, 33)
    check_in_place()
    timing()
    print("PASS" if not failures else f"FAIL: {', '.join(failures)}")
