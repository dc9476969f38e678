"""Long pointwise chains through fusion-segment, fusion-allocate and code generation.

The code generators are iterative (explicit stacks, no recursion), so a chain
of any length generates code: 330 ops (which used to raise RecursionError in
the Triton emitter) and 10,000 ops generate; 1,000 ops also run through
Triton's interpreter on a 2x4 input and match the reference evaluator.

The time of the passes and of code generation is printed (`pytest -s`); the
tests bound it loosely (a quadratic blow-up fails them, a busy machine does not).
"""

from __future__ import annotations

import ast
import sys
import time
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402
from xdsl.context import Context  # noqa: E402

from allotment.backend.host_codegen import emit_program  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.passes.fusion_allocate import FusionAllocatePass  # noqa: E402
from allotment.passes.fusion_segment import FusionSegmentPass  # noqa: E402

T = "tensor<?x4xf32>"


def chain(n: int) -> str:
    """A pointwise chain of n ops over one dynamic input whose values stay bounded:
    v = -x, then in turn v + x, v * 0.5, v - x, tanh(v)."""
    lines = [f"func.func @chain(%x: {T}) -> {T} {{", "  %half = arith.constant 5.000000e-01 : f32",
             f"  %v0 = fusion.neg %x : {T}"]
    for i in range(1, n):
        prev = f"%v{i - 1}"
        step = i % 4
        if step == 0:
            lines.append(f"  %v{i} = fusion.tanh {prev} : {T}")
        elif step == 2:
            lines.append(f"  %v{i} = fusion.mul {prev}, %half : {T}, f32 -> {T}")
        else:
            lines.append(f"  %v{i} = fusion.{'add' if step == 1 else 'sub'} {prev}, %x : {T}")
    lines.append(f"  func.return %v{n - 1} : {T}\n}}\n")
    return "\n".join(lines)


def generate(n: int) -> tuple[str, float, float]:
    """(generated source, seconds in the two passes, seconds in code generation) for chain(n)."""
    module = parse_module(chain(n))
    start = time.perf_counter()
    FusionSegmentPass().apply(Context(), module)
    FusionAllocatePass().apply(Context(), module)
    passes = time.perf_counter() - start
    start = time.perf_counter()
    program = emit_program(find_function(module, "chain"), "cpu")
    codegen = time.perf_counter() - start
    assert len(program.kernels) == 1, "a pointwise chain is one kernel"
    return program.source, passes, codegen


@pytest.mark.parametrize("n", [330, 1000, 10_000])
def test_long_chain_generates(n: int) -> None:
    source, passes, codegen = generate(n)
    print(f"\n{n} ops: fusion-segment + fusion-allocate {passes:.2f} s, code generation {codegen:.2f} s")
    tree = ast.parse(source)
    kernel = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.endswith("_pointwise_"))
    assert len(kernel.body) > n, "every op of the chain is a statement of the kernel"
    assert passes + codegen < 30.0 * n / 1000, f"{n} ops took {passes + codegen:.1f} s"


def test_long_chain_generates_at_a_low_recursion_limit() -> None:
    """Code generation itself recurses nowhere: it works under a recursion limit of 200."""
    module = parse_module(chain(2000))
    FusionSegmentPass().apply(Context(), module)
    FusionAllocatePass().apply(Context(), module)
    f = find_function(module, "chain")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        source = emit_program(f, "cpu").source
    finally:
        sys.setrecursionlimit(old)
    assert source.count("_tanh(") >= 499


def test_codegen_scales_linearly() -> None:
    """10x the ops costs well under 100x the code-generation time (no quadratic step)."""
    _, _, small = generate(1000)
    _, _, large = generate(10_000)
    print(f"\ncode generation: 1,000 ops {small:.2f} s, 10,000 ops {large:.2f} s")
    assert large < 40 * max(small, 0.05)


def test_1000_op_chain_runs_and_matches_the_reference() -> None:
    x = torch.linspace(-2.0, 2.0, 8).reshape(2, 4)
    start = time.perf_counter()
    (out,) = check(chain(1000), x)
    print(f"\n1,000 ops: compile and run at 2x4 (interpreter) {time.perf_counter() - start:.2f} s")
    assert torch.isfinite(out).all()
