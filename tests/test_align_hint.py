"""ALIGN, the divisibility hint of a kernel's row extent and row strides
(`Emitter.aligned`, `host_runtime.alignment_hint`): the launcher's choice for each call,
the kernels' results under every choice (Triton's interpreter runs the functions' prologue
as it is; on the GPU with ALLOT_TEST_DEVICE=cuda), and the vector loads it buys on sm_90 (offline, where Triton's compiler is)."""

from __future__ import annotations

import pytest
import torch
from backend_check import TEST_DEVICE

import allotment
from allotment.backend import host_runtime as rt
from allotment.backend import launch

SOFTMAX = """func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = fusion.sub %x, %m : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %e = fusion.exp %d : tensor<?x?xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = fusion.div %e, %s : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}"""

ADD = """func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = fusion.add %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}"""


@pytest.mark.parametrize(("values", "align"), [
    ((1000, 1000, 1000), 8), ((1000, 1004), 4), ((24, 8), 8), ((6, 1000), 2), ((1111, 1000), 1),
    ((4096, 1024), 1), ((0, 0), 1), ((0, 40), 8), ((-24, 40), 8), ((1,), 1),
])
def test_the_launcher_passes_the_power_of_two_that_divides_them_all(values: tuple[int, ...], align: int) -> None:
    """Up to 8; 1 where all are multiples of 16 (Triton specializes those itself) or 0."""
    assert rt.alignment_hint(*values) == align
    assert rt.alignment_hint(*values, allowed=False) == 1


def aligns(text: str, *inputs: torch.Tensor) -> list[object]:
    """The ALIGN constexpr of each launch of one run (None where a kernel takes none)."""
    seen: list[object] = []
    with launch.intercepted(lambda k, grid, a, cx, w: seen.append(cx.get("ALIGN"))):
        allotment.compile(text)(*inputs)
    return seen


@pytest.mark.parametrize(("rows", "cols", "stride", "align"), [
    (5, 24, 24, 8), (5, 20, 20, 4), (4, 6, 6, 2), (3, 7, 7, 1), (3, 32, 32, 1), (4, 24, 28, 4), (4, 8, 9, 1),
])
def test_a_softmax_over_rows_is_right_under_the_align_of_its_call(rows: int, cols: int, stride: int,
                                                                    align: int) -> None:
    """Rows of `cols` elements `stride` apart (a view of a wider buffer where stride > cols):
    ALIGN follows the call's extent and strides, and the result is torch's."""
    base = torch.randn(rows, stride, generator=torch.Generator().manual_seed(rows * cols)).to(TEST_DEVICE)
    x = base[:, :cols]
    assert aligns(SOFTMAX, x) == [align]
    (y,) = allotment.compile(SOFTMAX)(x)
    torch.testing.assert_close(y, torch.softmax(x, 1), rtol=1e-5, atol=1e-6)


def test_a_pointwise_kernel_under_a_hint_from_a_misaligned_operand() -> None:
    """One operand's rows 12 apart, the other's 8: ALIGN is their common 4, and each tile's
    row starts and masks stay right."""
    a = torch.randn(6, 12, generator=torch.Generator().manual_seed(1)).to(TEST_DEVICE)[:, :8]
    b = torch.randn(6, 8, generator=torch.Generator().manual_seed(2)).to(TEST_DEVICE)
    assert set(aligns(ADD, a, b)) == {4}
    (c,) = allotment.compile(ADD)(a, b)
    torch.testing.assert_close(c, a + b)


def test_rows_that_are_multiples_of_16_keep_align_1() -> None:
    x = torch.randn(3, 48, generator=torch.Generator().manual_seed(3))
    assert aligns(SOFTMAX, x) == [1]
