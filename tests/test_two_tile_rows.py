"""Persistent rows held as two tiles (`host_runtime.row_tiles`, `row_reduction.RowEmitter.
emit_two_tiles`): rows of 1111 (1024 + 128 lanes), 600 (512 + 128) and 2 x 555 inner dims
(1024 + 128), checked against the reference evaluator for every reduction a persistent row
computes (each tile's partial combined: a sum, a product, a max with a NaN or an infinity in
the second tile, a min, a mean, a var_mean whose second pass takes the mean of both tiles),
with outputs along the row and per row (stored once). Each program is checked to hold its
row as two tiles, so that a change of the rule cannot leave these tests checking one tile."""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_runtime  # noqa: E402


def _norm(n: int) -> str:
    """x + b, its var_mean over the row, the normalized row times w, and the row's mean and
    var (per-row outputs) and its max of |x| (a max of a full-row value)."""
    t, r, k = f"tensor<3x{n}xf32>", "tensor<3xf32>", "tensor<3x1xf32>"
    return f"""func.func @f(%x: {t}, %b: tensor<{n}xf32>, %w: tensor<{n}xf32>) -> ({t}, {r}, {r}, {r}) {{
  %bb = fusion.broadcast_in_dim %b [3, {n}] dims [1] : tensor<{n}xf32> -> {t}
  %h = fusion.add %x, %bb : {t}, {t} -> {t}
  %v, %m = fusion.var_mean %h dims [1] correction 1 : {t} -> {r}, {r}
  %vk = fusion.broadcast_in_dim %v [3, 1] dims [0] : {r} -> {k}
  %mk = fusion.broadcast_in_dim %m [3, 1] dims [0] : {r} -> {k}
  %eps = arith.constant 1.0e-05 : f32
  %ve = fusion.add %vk, %eps : {k}, f32 -> {k}
  %rs = fusion.rsqrt %ve : {k}
  %d = fusion.sub %h, %mk : {t}, {k} -> {t}
  %y0 = fusion.mul %d, %rs : {t}, {k} -> {t}
  %wb = fusion.broadcast_in_dim %w [3, {n}] dims [1] : tensor<{n}xf32> -> {t}
  %y = fusion.mul %y0, %wb : {t}, {t} -> {t}
  %a = fusion.abs %h : {t}
  %mx = fusion.max %a dims [1] : {t} -> {r}
  func.return %y, %m, %v, %mx : {t}, {r}, {r}, {r}
}}
"""


def _reduce(op: str, shape: tuple[int, ...], dims: list[int]) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    kept = f"tensor<{'x'.join(str(e) for d, e in enumerate(shape) if d not in dims)}xf32>"
    return f"""func.func @f(%x: {t}) -> {kept} {{
  %s = fusion.{op} %x dims {dims} : {t} -> {kept}
  func.return %s : {kept}
}}
"""


def _assert_two_tiles(text: str, main: int, tail: int) -> None:
    src = allotment.compile(text).source("cpu")
    assert f"BLOCK_T: tl.constexpr = {tail}" in src and f"rt.persistent_blocks(M, N, {main})" in src, src


@pytest.mark.parametrize("n", [600, 1111])
def test_a_normalization_held_as_two_tiles(n: int) -> None:
    main, tail = host_runtime.row_tiles(n)
    assert tail
    text = _norm(n)
    _assert_two_tiles(text, main, tail)
    g = torch.Generator().manual_seed(n)
    x = torch.randn(3, n, generator=g) * 3 + 100  # a large offset: the second pass needs both tiles' mean
    check(text, x, torch.randn(n, generator=g), torch.randn(n, generator=g))


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("shape,dims", [((3, 1111), [1]), ((3, 2, 555), [1, 2])])
def test_a_reduction_held_as_two_tiles(op: str, shape: tuple[int, ...], dims: list[int]) -> None:
    text = _reduce(op, shape, dims)
    _assert_two_tiles(text, 1024, 128)
    g = torch.Generator().manual_seed(len(shape))
    x = 1 + torch.randn(*shape, generator=g) * 1e-3 if op == "prod" else torch.randn(*shape, generator=g)
    check(text, x)


@pytest.mark.parametrize("special", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_special_value_in_the_second_tile_reaches_the_row(op: str, special: float) -> None:
    text = _reduce(op, (3, 1111), [1])
    x = torch.randn(3, 1111, generator=torch.Generator().manual_seed(1))
    x[1, 1100] = special  # column 1100: the second tile's
    x[2, 5] = special  # column 5: the first tile's
    out = allotment.compile(text)(x)[0]
    want = getattr(torch, f"a{op}")(x, dim=1)
    torch.testing.assert_close(out, want, equal_nan=True)
    check(text, x)
