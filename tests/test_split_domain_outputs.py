"""Reductions split across CTAs that also write outputs of their whole domain
(`analysis/split_reduction.py`): a bias gradient beside dx, a column max beside its input's
transform, a middle-axis sum beside a 3-D output, a full sum beside its input doubled.

The first stage (`split_partial`) stores the domain outputs as it streams its share of the
reduced axis; with one split the `looped` kernel does both (two passes over the rows).
Checked against the reference evaluator (`backend_check.check`: Triton's interpreter on
CPU tensors) and against torch, with static and `?` extents, f32 and bf16, extents that
leave partial tiles, and counts of splits of 1 and more.
"""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, launches, planned  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def randn(*shape: int, dtype: str = "f32", seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DTYPES[dtype])


def _bias_gradient(rows: str, hidden: str, ty: str) -> str:
    t, f = f"tensor<{rows}x{hidden}x{ty}>", f"tensor<{rows}x{hidden}xf32>"
    v, vf = f"tensor<{hidden}x{ty}>", f"tensor<{hidden}xf32>"
    return f"""func.func @f(%dy: {t}, %x: {t}) -> ({t}, {v}) {{
  %dyf = fusion.cast %dy : {t} to {f}
  %xf = fusion.cast %x : {t} to {f}
  %th = fusion.tanh %xf : {f}
  %dxf = fusion.mul %dyf, %th : {f}
  %dx = fusion.cast %dxf : {f} to {t}
  %dbf = fusion.sum %dxf dims [0] : {f} -> {vf}
  %db = fusion.cast %dbf : {vf} to {v}
  func.return %dx, %db : {t}, {v}
}}
"""


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize(("rows", "hidden", "kernels"), [
    (11, 7, ["k0_looped"]),  # 11 rows: one split (under 256 rows a split)
    (600, 7, ["k0_split_partial", "k0_split_final"]),  # ceildiv(600, 256) = 3 splits
    (777, 70, ["k0_split_partial", "k0_split_final"]),  # 2 kept tiles of 64, a partial one
])
def test_bias_gradient_beside_dx(ty: str, static: bool, rows: int, hidden: int, kernels: list[str]) -> None:
    """A column sum beside dx (no row reduction): one reduction segment split across CTAs
    whose first stage stores dx; no inner_outer kernel."""
    text = _bias_gradient(str(rows) if static else "?", str(hidden) if static else "?", ty)
    ir = planned(text)
    assert 'alloc.kernel "k0" reduction' in ir and "inner_outer" not in ir and "partials" in ir
    dy, x = randn(rows, hidden, dtype=ty, seed=1), randn(rows, hidden, dtype=ty, seed=2)
    dx, db = check(text, dy, x)
    dxf = dy.float() * x.float().tanh()
    tol = {"rtol": 2e-2, "atol": 2e-2} if ty == "bf16" else {"rtol": 1e-4, "atol": 1e-4}
    torch.testing.assert_close(dx.float(), dxf.to(DTYPES[ty]).float(), **tol)
    torch.testing.assert_close(db.float(), dxf.sum(0).to(DTYPES[ty]).float(), **tol)
    assert launches(text, dy, x) == kernels


COLUMN_MAX = """func.func @f(%dy: tensor<?x?xf32>, %x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %dx = fusion.mul %dy, %x : tensor<?x?xf32>
  %m = fusion.max %dx dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %dx, %m : tensor<?x?xf32>, tensor<?xf32>
}
"""


def test_column_max_beside_its_input() -> None:
    """A column max (not a sum: its partials are maxima) beside the product it reduces."""
    dy, x = randn(530, 9, seed=3), randn(530, 9, seed=4)
    dx, m = check(COLUMN_MAX, dy, x)
    torch.testing.assert_close(dx, dy * x)
    torch.testing.assert_close(m, (dy * x).amax(0))
    assert launches(COLUMN_MAX, dy, x) == ["k0_split_partial", "k0_split_final"]


MIDDLE = """func.func @f(%x: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %e = fusion.exp %x : tensor<?x?x?xf32>
  %s = fusion.sum %e dims [1] : tensor<?x?x?xf32> -> tensor<?x?xf32>
  func.return %e, %s : tensor<?x?x?xf32>, tensor<?x?xf32>
}
"""


@pytest.mark.parametrize(("shape", "kernels"), [((3, 520, 5), ["k0_split_partial", "k0_split_final"]),
                                               ((2, 9, 3), ["k0_looped"])])
def test_middle_axis_sum_beside_its_input(shape: tuple[int, int, int], kernels: list[str]) -> None:
    """A sum over the middle axis of [A, R, B] beside exp(x) on the whole [A, R, B]: the
    output's two kept dims and its reduced one are stored from the split's tiles."""
    x = randn(*shape, seed=5)
    e, s = check(MIDDLE, x)
    torch.testing.assert_close(e, x.exp())
    torch.testing.assert_close(s, x.exp().sum(1), rtol=1e-5, atol=1e-5)
    assert launches(MIDDLE, x) == kernels


FULL = """func.func @f(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<f32>) {
  %c = arith.constant 2.0 : f32
  %y = fusion.mul %x, %c : tensor<?x?xf32>, f32 -> tensor<?x?xf32>
  %s = fusion.sum %y dims [0, 1] : tensor<?x?xf32> -> tensor<f32>
  func.return %y, %s : tensor<?x?xf32>, tensor<f32>
}
"""


@pytest.mark.parametrize(("shape", "kernels"), [((40, 33), ["k0_split_partial", "k0_split_final"]),
                                               ((3, 7), ["k0_looped"])])
def test_full_sum_beside_its_input(shape: tuple[int, int], kernels: list[str]) -> None:
    """A full reduction to a scalar beside 2x on the whole domain (a loss beside its
    gradient): split over the flattened domain, every element of y stored once."""
    x = randn(*shape, seed=6)
    y, s = check(FULL, x)
    torch.testing.assert_close(y, 2 * x)
    torch.testing.assert_close(s, (2 * x).sum(), rtol=1e-5, atol=1e-4)
    assert launches(FULL, x) == kernels


KEEPDIM = """func.func @f(%x: tensor<1x600xf32>) -> tensor<1x1xf32> {
  %c = arith.constant 1.5 : f32
  %m = fusion.max %x dims [0, 1] keepdim : tensor<1x600xf32> -> tensor<1x1xf32>
  %y = fusion.mul %m, %c : tensor<1x1xf32>, f32 -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}
"""


def test_a_kept_size_one_dim_is_no_domain_output() -> None:
    """A full max with keepdim over [1, 600], times 1.5: its [1, 1] result matches the
    domain's size-1 dim, yet it is computed from the max (`kernel_plan._natural_maps` gives
    it no domain index there): the second stage stores it and the first never does. Before,
    the result was taken for a value along the reduced axis: no stage stored it (a wrong
    result, garbage from an uninitialized buffer), and with outputs of the domain stored by
    the first stage, it read the max before computing it (the random-fusion test, seed
    1634054)."""
    x = randn(1, 600, seed=7)
    (y,) = check(KEEPDIM, x)
    torch.testing.assert_close(y, x.amax().reshape(1, 1) * 1.5)
    assert launches(KEEPDIM, x) == ["k0_split_partial", "k0_split_final"]
