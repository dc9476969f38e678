"""The generated tiled matmul of small library kernels (`backend/tiled_matmul.py`,
`analysis/library_matmul.py`), against the reference evaluator on Triton's interpreter
(or the GPU with ALLOT_TEST_DEVICE=cuda): dtypes, bias or none, odd extents, strided
operands, an empty reduction, and `?` extents taking either side of the run-time rule."""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, launches  # noqa: E402

import allotment  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def linear_text(m: int | str, n: int, k: int, ty: str, bias: bool) -> str:
    x, w, b, y = f"tensor<{m}x{k}x{ty}>", f"tensor<{n}x{k}x{ty}>", f"tensor<{n}x{ty}>", f"tensor<{m}x{n}x{ty}>"
    params = f"%x: {x}, %w: {w}" + (f", %b: {b}" if bias else "")
    operands = "%x, %w" + (", %b" if bias else "")
    types = f"{x}, {w}" + (f", {b}" if bias else "")
    return (f"func.func @f({params}) -> {y} {{\n"
            f"  %y = fusion.linear {operands} : {types} -> {y}\n  func.return %y : {y}\n}}\n")


def matmul_text(m: int, n: int, k: int, ty: str) -> str:
    a, b, y = f"tensor<{m}x{k}x{ty}>", f"tensor<{k}x{n}x{ty}>", f"tensor<{m}x{n}x{ty}>"
    return (f"func.func @f(%a: {a}, %b: {b}) -> {y} {{\n"
            f"  %y = fusion.matmul %a, %b : {a}, {b} -> {y}\n  func.return %y : {y}\n}}\n")


def randn(*shape: int, ty: str, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DTYPES[ty])


@pytest.mark.parametrize("ty", sorted(DTYPES))
@pytest.mark.parametrize("m,n,k", [(5, 64, 32), (1, 17, 70), (33, 40, 1), (64, 96, 48)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_tiled(ty: str, m: int, n: int, k: int, bias: bool) -> None:
    text = linear_text(m, n, k, ty, bias)
    args = [randn(m, k, ty=ty, seed=1), randn(n, k, ty=ty, seed=2)] + ([randn(n, ty=ty, seed=3)] if bias else [])
    assert launches(text, *args) == ["k0_tiled"]
    check(text, *args)


@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_matmul_tiled_strided_operands(ty: str) -> None:
    """A transposed lhs and a sliced rhs are read through their strides, not copied."""
    text = matmul_text(9, 20, 24, ty)
    a = randn(24, 9, ty=ty, seed=4).t()
    b = randn(24, 40, ty=ty, seed=5)[:, ::2]
    assert launches(text, a, b) == ["k0_tiled"]
    check(text, a, b)


def test_empty_reduction_gives_the_bias() -> None:
    text = linear_text(3, 5, 0, "f32", True)
    x, w, b = torch.empty(3, 0), torch.empty(5, 0), randn(5, ty="f32", seed=6)
    (y,) = check(text, x, w, b)
    assert torch.equal(y, b.expand(3, 5))


def test_dynamic_rows_take_the_rule_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """`?` rows: at most 64 outputs (the limit lowered) run tiled, more go to torch."""
    monkeypatch.setenv("ALLOT_TILED_MATMUL_OUTPUTS", "64")
    text = linear_text("?", 8, 16, "f32", True)
    w, b = randn(8, 16, ty="f32", seed=7), randn(8, ty="f32", seed=8)
    for rows, expected in ((8, ["k0_tiled"]), (9, [])):
        x = randn(rows, 16, ty="f32", seed=rows)
        assert launches(text, x, w, b) == expected
        check(text, x, w, b)


def test_program_names_its_choice() -> None:
    """The generated program launches the tiled kernel under the IR's condition and keeps
    the torch call for the other side."""
    src = allotment.compile(linear_text("?", 8, 16, "f32", False)).program("cpu").source
    assert "if k0_fits_:" in src and "launch_k0_(" in src and "rt.linear(" in src
    assert "# alloc.kernel k0 library: 1 fusion.linear, tiled" in src
