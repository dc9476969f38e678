"""The generated tiled matmul of small library kernels (`backend/kernels/tiled_matmul.py`,
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


def bmm_text(a_shape: tuple[int, ...], b_shape: tuple[int, ...], ty: str) -> str:
    batch = max(a_shape[0] if len(a_shape) == 3 else 1, b_shape[0] if len(b_shape) == 3 else 1)
    out = ([batch] if 3 in (len(a_shape), len(b_shape)) else []) + [a_shape[-2], b_shape[-1]]
    t = lambda s: f"tensor<{'x'.join(map(str, s))}x{ty}>"  # noqa: E731
    return (f"func.func @f(%a: {t(a_shape)}, %b: {t(b_shape)}) -> {t(out)} {{\n"
            f"  %y = fusion.matmul %a, %b : {t(a_shape)}, {t(b_shape)} -> {t(out)}\n  func.return %y : {t(out)}\n}}\n")


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 5, 20), (3, 20, 7)),   # batched
    ((3, 5, 20), (20, 7)),      # a shared rhs
    ((5, 20), (3, 20, 7)),      # a shared lhs
    ((1, 5, 20), (3, 20, 7)),   # a batch of 1 broadcast
    ((3, 5, 20), (1, 20, 7)),
])
def test_batched_matmul_tiled(ty: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    text = bmm_text(a_shape, b_shape, ty)
    a, b = randn(*a_shape, ty=ty, seed=11), randn(*b_shape, ty=ty, seed=12)
    assert launches(text, a, b) == ["k0_tiled"]
    check(text, a, b)


def test_linear_of_a_3d_input_tiled() -> None:
    x, w, b = "tensor<2x3x24xbf16>", "tensor<10x24xbf16>", "tensor<10xbf16>"
    text = (f"func.func @f(%x: {x}, %w: {w}, %b: {b}) -> tensor<2x3x10xbf16> {{\n"
            f"  %y = fusion.linear %x, %w, %b : {x}, {w}, {b} -> tensor<2x3x10xbf16>\n"
            "  func.return %y : tensor<2x3x10xbf16>\n}\n")
    args = [randn(2, 3, 24, ty="bf16", seed=13), randn(10, 24, ty="bf16", seed=14), randn(10, ty="bf16", seed=15)]
    assert launches(text, *args) == ["k0_tiled"]
    check(text, *args)
    strided = randn(3, 2, 24, ty="bf16", seed=16).transpose(0, 1)  # batch stride < row stride
    check(text, strided, *args[1:])


def test_dynamic_batch() -> None:
    text = bmm_text((2, 4, 8), (2, 8, 6), "f32").replace("tensor<2x", "tensor<?x")
    for batch in (1, 3):
        a, b = randn(batch, 4, 8, ty="f32", seed=batch), randn(batch, 8, 6, ty="f32", seed=batch + 9)
        assert launches(text, a, b) == ["k0_tiled"]
        check(text, a, b)


def test_one_input_as_both_operands() -> None:
    """x @ x and linear(x, x): the kernel's parameters are named by role, not by input."""
    sq = "tensor<6x6xf32>"
    text = (f"func.func @f(%x: {sq}) -> ({sq}, {sq}) {{\n  %y = fusion.matmul %x, %x : {sq}, {sq} -> {sq}\n"
            f"  %z = fusion.linear %x, %x : {sq}, {sq} -> {sq}\n  func.return %y, %z : {sq}, {sq}\n}}\n")
    x = randn(6, 6, ty="f32", seed=17)
    assert launches(text, x) == ["k0_tiled", "k1_tiled"]
    check(text, x)
