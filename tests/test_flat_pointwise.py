"""Flat pointwise kernels (`kernels.pointwise.flat_pointwise`, `host_runtime.flat_rows`): a
pointwise kernel over rows of a static length that power-of-two tiles would leave more than
15% idle (96, 3, 5, 6) indexes its domain flat, one linear index a lane.

Checked against the reference evaluator (Triton's interpreter on CPU tensors) and torch:
a rotary embedding with head dim 96 (slices, neg, cat), row and column broadcasts, a 3-D
domain, a domain that is not a multiple of the block; and where it does not apply: a
power-of-two row, rows that 128-wide tiles fill well, a transposed operand
(square tiles instead); and a `?` row length, whose kernel gets a flat function too and
launches it where the call's row length says so.
"""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_runtime, launch  # noqa: E402


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def flat(text: str) -> bool:
    """Whether the program's one pointwise kernel launches flat (one grid axis over M * N)."""
    return "rt.flat_blocks(M, N)" in allotment.compile(text).generate("cpu")


def grids(text: str, *inputs: torch.Tensor) -> list[tuple[tuple[int, ...], int, int]]:
    """(grid, BLOCK_M, BLOCK_N) of each launch of one run."""
    seen: list[tuple[tuple[int, ...], int, int]] = []
    with launch.intercepted(lambda k, grid, a, cx, w: seen.append((tuple(grid), cx["BLOCK_M"], cx["BLOCK_N"]))):
        allotment.compile(text)(*inputs)
    return seen


def test_the_rule() -> None:
    assert host_runtime.flat_rows(96) and host_runtime.flat_rows(3) and host_runtime.flat_rows(5)
    assert not host_runtime.flat_rows(128) and not host_runtime.flat_rows(1) and not host_runtime.flat_rows(1111)
    assert host_runtime.flat_blocks(7, 3) == (1, 32, 4) and host_runtime.flat_blocks(10**6, 96) == (1, 1024, 4)


def _rotary(b: int, s: int, d: int) -> str:
    h = d // 2
    x, t, half = f"tensor<{b}x{s}x{d}xf32>", f"tensor<{s}x{d}xf32>", f"tensor<{b}x{s}x{h}xf32>"
    return f"""func.func @rotary(%x: {x}, %cos: {t}, %sin: {t}) -> {x} {{
  %x1 = fusion.slice %x [0, 0, 0] to [{b}, {s}, {h}] step [1, 1, 1] : {x} -> {half}
  %x2 = fusion.slice %x [0, 0, {h}] to [{b}, {s}, {d}] step [1, 1, 1] : {x} -> {half}
  %n2 = fusion.neg %x2 : {half}
  %r = fusion.cat %n2, %x1 dim 2 : {half}, {half} -> {x}
  %cb = fusion.broadcast_in_dim %cos [{b}, {s}, {d}] dims [1, 2] : {t} -> {x}
  %sb = fusion.broadcast_in_dim %sin [{b}, {s}, {d}] dims [1, 2] : {t} -> {x}
  %a = fusion.mul %x, %cb : {x}
  %c = fusion.mul %r, %sb : {x}
  %y = fusion.add %a, %c : {x}
  func.return %y : {x}
}}
"""


@pytest.mark.parametrize(("b", "s", "d"), [(2, 5, 96), (3, 7, 6)])
def test_rotary(b: int, s: int, d: int) -> None:
    text = _rotary(b, s, d)
    assert flat(text)
    x, cos, sin = randn(b, s, d, seed=1), randn(s, d, seed=2), randn(s, d, seed=3)
    (y,) = check(text, x, cos, sin)
    rot = torch.cat([-x[..., d // 2:], x[..., : d // 2]], dim=-1)
    torch.testing.assert_close(y, x * cos + rot * sin)
    (grid, bm, bn), = grids(text, x, cos, sin)
    assert bm == 1 and grid == (-(-(b * s * d) // bn),)


BROADCASTS = """func.func @f(%x: tensor<37x3xf32>, %r: tensor<37x1xf32>, %c: tensor<3xf32>) -> (tensor<37x3xf32>, tensor<37x3xf32>) {
  %cb = fusion.broadcast_in_dim %c [37, 3] dims [1] : tensor<3xf32> -> tensor<37x3xf32>
  %a = fusion.mul %x, %r : tensor<37x3xf32>, tensor<37x1xf32> -> tensor<37x3xf32>
  %y = fusion.add %a, %cb : tensor<37x3xf32>
  %z = fusion.exp %x : tensor<37x3xf32>
  func.return %y, %z : tensor<37x3xf32>, tensor<37x3xf32>
}
"""


def test_row_and_column_broadcasts() -> None:
    """Rows of 3 (a 4-wide tile idles a quarter): a per-row and a per-column operand."""
    assert flat(BROADCASTS)
    x, r, c = randn(37, 3, seed=4), randn(37, 1, seed=5), randn(3, seed=6)
    y, z = check(BROADCASTS, x, r, c)
    torch.testing.assert_close(y, x * r + c)
    torch.testing.assert_close(z, x.exp())


@pytest.mark.parametrize(("shape", "is_flat"),
                         [("9x8", False), ("3x600", False), ("9x5", True), ("?x5", True)])
def test_where_it_applies(shape: str, is_flat: bool) -> None:
    """A power-of-two row and rows of 600 (five 128-wide tiles use 94% of their lanes) keep
    their tiles; rows of 5, static, go flat whatever the number of rows."""
    t = f"tensor<{shape}xf32>"
    text = f"func.func @f(%x: {t}, %y: {t}) -> {t} {{\n  %z = fusion.mul %x, %y : {t}\n  func.return %z : {t}\n}}\n"
    assert flat(text) == is_flat
    rows, cols = (int(e) if e != "?" else 4 for e in shape.split("x"))
    x, y = randn(rows, cols, seed=7), randn(rows, cols, seed=8)
    (z,) = check(text, x, y)
    torch.testing.assert_close(z, x * y)


@pytest.mark.parametrize(("cols", "is_flat"), [(5, True), (96, True), (4, False), (600, False)])
def test_a_row_of_unknown_length_is_flat_where_its_length_says_so(cols: int, is_flat: bool) -> None:
    """A `?` row: the kernel gets both functions (`flat_at_run_time`) and each call launches
    the one that the static rule would have chosen for its row length."""
    t = "tensor<3x?xf32>"
    text = f"func.func @f(%x: {t}, %y: {t}) -> {t} {{\n  %z = fusion.mul %x, %y : {t}\n  func.return %z : {t}\n}}\n"
    source = allotment.compile(text).generate("cpu")
    assert "rt.flat_rows(N)" in source and "rt.pointwise_blocks(M, N)" in source
    x, y = randn(3, cols, seed=7), randn(3, cols, seed=8)
    (z,) = check(text, x, y)
    torch.testing.assert_close(z, x * y)
    (grid, bm, bn), = grids(text, x, y)
    assert (bm == 1 and grid == (-(-(3 * cols) // bn),)) == is_flat


ROTARY_DYNAMIC = """func.func @rotary(%x: tensor<?x?x?xf32>, %cos: tensor<?x?xf32>, %sin: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %B = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %S = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %D = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %D2 = arith.divui %D, %c2 : index
  %x1 = fusion.slice %x [0, 0, 0] to [%B, %S, %D2] step [1, 1, 1] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %x2 = fusion.slice %x [0, 0, %D2] to [%B, %S, %D] step [1, 1, 1] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %n2 = fusion.neg %x2 : tensor<?x?x?xf32>
  %r = fusion.cat %n2, %x1 dim 2 : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %cb = fusion.broadcast_in_dim %cos [1, %S, %D] dims [1, 2] : tensor<?x?xf32> -> tensor<1x?x?xf32>
  %sb = fusion.broadcast_in_dim %sin [1, %S, %D] dims [1, 2] : tensor<?x?xf32> -> tensor<1x?x?xf32>
  %a = fusion.mul %x, %cb : tensor<?x?x?xf32>, tensor<1x?x?xf32> -> tensor<?x?x?xf32>
  %c = fusion.mul %r, %sb : tensor<?x?x?xf32>, tensor<1x?x?xf32> -> tensor<?x?x?xf32>
  %y = fusion.add %a, %c : tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}
"""


@pytest.mark.parametrize(("b", "s", "d"), [(2, 5, 6), (3, 2, 8)])
def test_rotary_of_unknown_sizes(b: int, s: int, d: int) -> None:
    """The rotary embedding with every extent `?` (slices, neg, cat at run-time offsets):
    flat for a head dim of 6, tiles for 8, both against torch."""
    text = ROTARY_DYNAMIC
    x, cos, sin = randn(b, s, d, seed=1), randn(s, d, seed=2), randn(s, d, seed=3)
    (y,) = check(text, x, cos, sin)
    rot = torch.cat([-x[..., d // 2:], x[..., : d // 2]], dim=-1)
    torch.testing.assert_close(y, x * cos + rot * sin)
    (grid, bm, bn), = grids(text, x, cos, sin)
    assert (bm == 1) == host_runtime.flat_rows(d)


TRANSPOSED = """func.func @f(%x: tensor<6x70xf32>, %y: tensor<70x6xf32>) -> tensor<70x6xf32> {
  %e = fusion.exp %x : tensor<6x70xf32>
  %t = fusion.permute %e [1, 0] : tensor<6x70xf32> -> tensor<70x6xf32>
  %z = fusion.add %t, %y : tensor<70x6xf32>
  func.return %z : tensor<70x6xf32>
}
"""


def test_a_transposed_operand_keeps_square_tiles() -> None:
    """Rows of 6, but one operand is read along the outer axis (the permute of a computed
    value is index arithmetic in the kernel): square tiles, not flat."""
    assert not flat(TRANSPOSED)
    assert "rt.transpose_blocks(M, N)" in allotment.compile(TRANSPOSED).generate("cpu")
    x, y = randn(6, 70, seed=9), randn(70, 6, seed=10)
    (z,) = check(TRANSPOSED, x, y)
    torch.testing.assert_close(z, x.exp().T + y)


@pytest.mark.parametrize("shape", ["?x?", "67x45"])
def test_a_permuted_input_is_read_in_square_tiles(shape: str) -> None:
    """x.T + z with x an input: the permute is a strided view on the host, and the kernel
    learns that its operand is contiguous along the outer axis from the view's layout in the
    IR (`strided<[1, ?]>`), not from index arithmetic: square tiles, as for a computed value's
    permute (f32 x.T + z at 8192x8192 ran at 82% of copy on an H200 in 4 x 1024 tiles)."""
    m, n = (int(e) if e != "?" else 0 for e in shape.split("x"))
    t, tt = f"tensor<{shape}xf32>", f"tensor<{'x'.join(reversed(shape.split('x')))}xf32>"
    text = f"""func.func @f(%x: {t}, %z: {tt}) -> {tt} {{
  %t = fusion.permute %x [1, 0] : {t} -> {tt}
  %y = fusion.add %t, %z : {tt}
  func.return %y : {tt}
}}
"""
    assert "rt.transpose_blocks(M, N)" in allotment.compile(text).generate("cpu")
    x, z = randn(m or 67, n or 45, seed=11), randn(n or 45, m or 67, seed=12)
    (y,) = check(text, x, z)
    torch.testing.assert_close(y, x.T + z)


def test_a_row_major_input_keeps_row_tiles() -> None:
    t = "tensor<?x?xf32>"
    text = f"func.func @f(%x: {t}, %z: {t}) -> {t} {{\n  %y = fusion.add %x, %z : {t}\n  func.return %y : {t}\n}}\n"
    assert "rt.pointwise_blocks(M, N)" in allotment.compile(text).generate("cpu")


@pytest.mark.parametrize(("m", "n", "blocks"), [
    (8192, 8192, (64, 64, 8)), (5003, 3001, (64, 64, 8)), (2, 4096, (2, 1024, 8)), (32, 4096, (32, 128, 8)),
    (3, 5, (4, 8, 4)), (100, 16, (64, 16, 4)),
])
def test_transpose_tiles_stay_full_when_the_outer_axis_is_short(m: int, n: int, blocks: tuple[int, int, int]) -> None:
    assert host_runtime.transpose_blocks(m, n) == blocks
