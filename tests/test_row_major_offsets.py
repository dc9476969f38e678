"""Offsets from a linear index (`kernels.emitter.Emitter.offset`): an operand indexed by the
dims that one linear index was decomposed into (a row reduction's kept rows, a flat kernel's
whole domain) is addressed from that index when its strides are row-major over them, and
from its strides dim by dim otherwise; the launcher picks by the ROW_MAJOR constexpr.

Both forms are checked against the reference evaluator (Triton's interpreter on CPU
tensors): contiguous inputs take the linear form, sliced and permuted inputs (the same
values, other strides) the strided one, and a `?` shape's condition reads its extents.
"""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402

SUM_LAST = """func.func @f(%x: tensor<{s}xf32>) -> tensor<{k}xf32> {{
  %y = fusion.sum %x dims [2] : tensor<{s}xf32> -> tensor<{k}xf32>
  func.return %y : tensor<{k}xf32>
}}"""

SUM_DIM0 = """func.func @f(%x: tensor<{s}xf32>) -> tensor<{k}xf32> {{
  %y = fusion.sum %x dims [0] : tensor<{s}xf32> -> tensor<{k}xf32>
  func.return %y : tensor<{k}xf32>
}}"""

SCALE = """func.func @f(%x: tensor<{s}xf32>) -> tensor<{s}xf32> {{
  %y = fusion.mul %x, %x : tensor<{s}xf32>, tensor<{s}xf32> -> tensor<{s}xf32>
  func.return %y : tensor<{s}xf32>
}}"""


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def row_major_flags(text: str, *inputs: torch.Tensor) -> list[object]:
    """The ROW_MAJOR constexpr of each launch of one run (None where a kernel takes none)."""
    seen: list[object] = []
    with launch.intercepted(lambda k, grid, a, cx, w: seen.append(cx.get("ROW_MAJOR"))):
        allotment.compile(text)(*inputs)
    return seen


def test_a_row_sum_over_kept_rows() -> None:
    text = SUM_LAST.format(s="3x5x7", k="3x5")
    x = randn(3, 5, 7)
    assert row_major_flags(text, x) == [True]
    check(text, x)
    (y,) = allotment.compile(text)(x)
    torch.testing.assert_close(y, x.sum(2))


def test_strides_that_are_not_row_major_take_the_strided_form() -> None:
    text = SUM_LAST.format(s="3x5x7", k="3x5")
    inner_slice = randn(3, 5, 9, seed=1)[:, :, 1:8]  # strides (45, 9, 1): row-major over dims 0, 1
    assert row_major_flags(text, inner_slice) == [True]
    check(text, inner_slice)
    torch.testing.assert_close(allotment.compile(text)(inner_slice)[0], inner_slice.sum(2))
    rows_sliced = randn(3, 6, 7, seed=7)[:, :5, :]  # strides (42, 7, 1): not
    permuted = randn(5, 3, 7, seed=2).transpose(0, 1)  # strides (7, 21, 1): not
    for x in (rows_sliced, permuted):
        assert row_major_flags(text, x) == [False]
        check(text, x)
        (y,) = allotment.compile(text)(x)
        torch.testing.assert_close(y, x.sum(2))


def test_a_column_sum_keeps_the_strided_form() -> None:
    """A column reduction's kept rows run along memory; the linear form read them slower on
    an H200 (sum_3d_dim0, `benchmarks/schedule_ab.py --rules row_major`), so it is not used."""
    text = SUM_DIM0.format(s="3x5x7", k="5x7")
    source = allotment.compile(text).generate("cpu")
    assert "ROW_MAJOR" not in source
    x = randn(3, 5, 7)
    assert row_major_flags(text, x) == [None]
    check(text, x)


def test_a_flat_kernel_addresses_its_whole_domain_by_the_lane_index() -> None:
    text = SCALE.format(s="2x3x5")  # rows of 5: a flat pointwise kernel
    program = allotment.compile(text)
    assert "lin[None, :] * in0_s2" in program.generate("cpu")
    x = randn(2, 3, 5, seed=3)
    assert row_major_flags(text, x) == [True]
    check(text, x)
    y = randn(2, 3, 6, seed=4)[:, :, :5]
    assert row_major_flags(text, y) == [False]
    check(text, y)
    torch.testing.assert_close(program(y)[0], y * y)


def test_a_dynamic_shape_reads_its_extents_in_the_condition() -> None:
    text = SUM_LAST.format(s="?x?x?", k="?x?")
    source = allotment.compile(text).generate("cpu")
    assert "row_major = in0_s[0] == D1 * in0_s[1]" in source
    for shape in ((2, 3, 5), (4, 1, 3), (3, 6, 1)):
        x = randn(*shape, seed=sum(shape))
        assert row_major_flags(text, x) == [True]
        check(text, x)
    strided = randn(2, 3, 8, seed=5)[:, :, ::2]  # strides (24, 8, 2): row-major over dims 0, 1
    assert row_major_flags(text, strided) == [True]
    check(text, strided)
    sliced = randn(2, 4, 4, seed=6)[:, :3, :]  # strides (16, 4, 1): not
    assert row_major_flags(text, sliced) == [False]
    check(text, sliced)


def test_a_kernel_without_such_dims_takes_no_flag() -> None:
    text = SCALE.format(s="4x128")  # rows of 128: tiled, one dim a side
    source = allotment.compile(text).generate("cpu")
    assert "ROW_MAJOR" not in source and "row_major" not in source
    assert row_major_flags(text, randn(4, 128)) == [None]
