"""The unrolled form of a one-split outer reduction over a short axis
(`kernels/split_reduction.emit_unrolled`, launched where `host_runtime.unrolled_outer_blocks`
gives blocks): every reduction it admits, static and `?` extents, strided inputs and values
broadcast operands, checked against the reference evaluator through Triton's
interpreter, and which function the launcher picks at each reduced extent."""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_runtime as rt  # noqa: E402
from allotment.backend import launch  # noqa: E402


def _t(shape: tuple[int | None, ...], ty: str) -> str:
    return f"tensor<{'x'.join('?' if e is None else str(e) for e in shape)}x{ty}>"


def reduce_text(red: str, shape: tuple[int, ...], dims: list[int], ty: str = "f32", dynamic: bool = False) -> str:
    """@f(%x): `red` over `dims` of %x, computed in f32, the result cast back to `ty`."""
    s = tuple(None if dynamic else e for e in shape)
    kept = tuple(e for d, e in enumerate(s) if d not in dims)
    x, xf, r, rt_ = _t(s, ty), _t(s, "f32"), _t(kept, "f32"), _t(kept, ty)
    return (f"func.func @f(%x: {x}) -> {rt_} {{\n"
            f"  %a = fusion.cast %x : {x} to {xf}\n"
            f"  %s = fusion.{red} %a dims {dims} : {xf} -> {r}\n"
            f"  %y = fusion.cast %s : {r} to {rt_}\n"
            f"  func.return %y : {rt_}\n}}\n")


def launched(text: str, *xs: torch.Tensor) -> list[str]:
    """The names of the kernel functions one call of the compiled fusion launches."""
    names: list[str] = []
    exe = allotment.compile(text)
    with launch.intercepted(lambda kernel, *rest: names.append(getattr(kernel, "__name__", "") or kernel.fn.__name__)):
        exe(*xs)
    return names


@pytest.mark.parametrize("red", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("rows", [1, 3, 7, 16])
@pytest.mark.parametrize("dynamic", [False, True])
def test_a_short_outer_reduction_matches_the_reference(red: str, rows: int, dynamic: bool) -> None:
    x = torch.randn(rows, 5, 7) * (0.5 if red == "prod" else 1.0)
    check(reduce_text(red, (rows, 5, 7), [0], dynamic=dynamic), x)


@pytest.mark.parametrize("ty,dtype", [("bf16", torch.bfloat16), ("f16", torch.float16)])
def test_sixteen_bit_inputs(ty: str, dtype: torch.dtype) -> None:
    check(reduce_text("sum", (7, 3, 11), [0], ty), torch.randn(7, 3, 11).to(dtype))


def test_two_reduced_dims_and_a_strided_input() -> None:
    """Dims 0 and 1 reduced (6 indices, decomposed in the step), the input a transposed view."""
    base = torch.randn(2, 5, 7, 3)
    x = base.permute(0, 3, 1, 2)  # [2, 3, 5, 7], not contiguous
    check(reduce_text("sum", (2, 3, 5, 7), [0, 1]), x)
    check(reduce_text("max", (2, 3, 5, 7), [0, 1], dynamic=True), x)


def test_two_reductions_of_a_product_with_a_broadcast_operand() -> None:
    """A sum and a max of x * w, w broadcast along the reduced axis (a view of stride 0 there)."""
    text = """func.func @f(%x: tensor<5x4x9xf32>, %w: tensor<4x9xf32>) -> (tensor<4x9xf32>, tensor<4x9xf32>) {
  %b = fusion.broadcast_in_dim %w [5, 4, 9] dims [1, 2] : tensor<4x9xf32> -> tensor<5x4x9xf32>
  %v = fusion.mul %x, %b : tensor<5x4x9xf32>, tensor<5x4x9xf32> -> tensor<5x4x9xf32>
  %s = fusion.sum %v dims [0] : tensor<5x4x9xf32> -> tensor<4x9xf32>
  %m = fusion.max %v dims [0] : tensor<5x4x9xf32> -> tensor<4x9xf32>
  func.return %s, %m : tensor<4x9xf32>, tensor<4x9xf32>
}
"""
    x, w = torch.randn(5, 4, 9), torch.randn(4, 9)
    check(text, x, w)
    assert launched(text, x, w) == ["k0_unrolled_"]


def test_the_launcher_picks_the_unrolled_form_up_to_its_limit() -> None:
    """Up to UNROLL_REDUCED reduced indices (static or at run time) the one-split kernel is the
    unrolled one, past it the looped tile; with the old rule (`unroll=False`) always looped."""
    limit = rt.UNROLL_REDUCED
    for dynamic in (False, True):
        for rows, form in ((limit, "k0_unrolled_"), (limit + 1, "k0_looped_")):
            x = torch.randn(rows, 2, 8)
            assert launched(reduce_text("sum", (rows, 2, 8), [0], dynamic=dynamic), x) == [form]
    assert rt.unrolled_outer_blocks(4096, 7) == (256, 7, 4)
    assert rt.unrolled_outer_blocks(4096, 16) == (512, 16, 4)
    assert rt.unrolled_outer_blocks(100, 7)[0] == 128  # no wider than the kept indices' power of two
    assert rt.unrolled_outer_blocks(4096, 7, unroll=False) is None
    assert rt.unrolled_outer_blocks(4096, 0) is None


@pytest.mark.parametrize("text", [
    # a var_mean: one pass with Welford's state, not unrolled
    """func.func @f(%x: tensor<4x3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %v, %m = fusion.var_mean %x dims [0] correction 1 : tensor<4x3x8xf32> -> tensor<3x8xf32>, tensor<3x8xf32>
  func.return %v, %m : tensor<3x8xf32>, tensor<3x8xf32>
}
""",
    # a row reduction (the innermost dim reduced): the row kernels' business
    """func.func @f(%x: tensor<4x3x8xf32>) -> tensor<4x3xf32> {
  %s = fusion.sum %x dims [2] : tensor<4x3x8xf32> -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}
""",
])
def test_kernels_it_does_not_admit_have_no_unrolled_form(text: str) -> None:
    src = allotment.compile(text).program("cuda").source
    assert "_unrolled_" not in src
    check(text, torch.randn(4, 3, 8))


def test_lanes_past_the_kept_extent_do_not_reach_the_outputs() -> None:
    """The unrolled steps select no neutral element: a lane past M loads 0 (1 / 0 = inf there,
    log(0) = -inf) but accumulates only its own kept index, which is never stored."""
    text = """func.func @f(%x: tensor<6x5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7xf32>) {
  %r = fusion.reciprocal %x : tensor<6x5x7xf32> -> tensor<6x5x7xf32>
  %l = fusion.log %x : tensor<6x5x7xf32> -> tensor<6x5x7xf32>
  %s = fusion.sum %r dims [0] : tensor<6x5x7xf32> -> tensor<5x7xf32>
  %m = fusion.max %l dims [0] : tensor<6x5x7xf32> -> tensor<5x7xf32>
  func.return %s, %m : tensor<5x7xf32>, tensor<5x7xf32>
}
"""
    x = torch.rand(6, 5, 7) + 0.5
    assert launched(text, x) == ["k0_unrolled_"]
    check(text, x)
