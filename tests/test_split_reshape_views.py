"""A reshape that only splits dims is a view of a strided source (`view_extents.reshape_splits`,
`fusion-segment` inserts no copy, `fusion-allocate` computes the strides): GPT-2's q, k and
v, slices of one projection split into heads, reach attention, a matmul and the outputs
as views of the projection's buffer. Checked against the reference evaluator and torch."""

from __future__ import annotations

import pytest
import torch
from backend_check import check, launches

from allotment.extents.view_extents import reshape_splits

QKV = """
func.func @qkv(%x: tensor<{b}x8x96xf32>, %w: tensor<4x16xf32>) -> (tensor<{b}x2x8x16xf32>, tensor<{b}x2x8x16xf32>, tensor<{b}x2x8x4xf32>) {{
  {dim}
  %q = fusion.slice %x [0, 0, 0] to [{stop}, 8, 32] step [1, 1, 1] : tensor<{b}x8x96xf32> -> tensor<{b}x8x32xf32>
  %k = fusion.slice %x [0, 0, 32] to [{stop}, 8, 64] step [1, 1, 1] : tensor<{b}x8x96xf32> -> tensor<{b}x8x32xf32>
  %qh = fusion.reshape %q [{bs}, 8, 2, 16] : tensor<{b}x8x32xf32> -> tensor<{b}x8x2x16xf32>
  %kh = fusion.reshape %k [{bs}, 8, 2, 16] : tensor<{b}x8x32xf32> -> tensor<{b}x8x2x16xf32>
  %qp = fusion.permute %qh [0, 2, 1, 3] : tensor<{b}x8x2x16xf32> -> tensor<{b}x2x8x16xf32>
  %kp = fusion.permute %kh [0, 2, 1, 3] : tensor<{b}x8x2x16xf32> -> tensor<{b}x2x8x16xf32>
  %s = fusion.mul %qp, %kp : tensor<{b}x2x8x16xf32>
  %wt = fusion.permute %w [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  %m = fusion.matmul %qp, %wt : tensor<{b}x2x8x16xf32>, tensor<16x4xf32> -> tensor<{b}x2x8x4xf32>
  func.return %s, %kp, %m : tensor<{b}x2x8x16xf32>, tensor<{b}x2x8x16xf32>, tensor<{b}x2x8x4xf32>
}}
"""


def qkv(dynamic: bool) -> str:
    if dynamic:
        return QKV.format(b="?", stop=9223372036854775807, bs="%n",
                          dim="%c0 = arith.constant 0 : index\n  %n = tensor.dim %x, %c0 : tensor<?x8x96xf32>")
    return QKV.format(b="3", stop=3, bs="3", dim="")


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_heads_of_a_fused_projection_are_views(dynamic: bool) -> None:
    x = torch.randn(3, 8, 96, generator=torch.Generator().manual_seed(0))
    w = torch.randn(4, 16, generator=torch.Generator().manual_seed(1))
    s, kp, m = check(qkv(dynamic), x, w, tol=1e-4)
    heads = lambda t: t.reshape(3, 8, 2, 16).permute(0, 2, 1, 3)  # noqa: E731
    q, k = heads(x[..., :32]), heads(x[..., 32:64])
    torch.testing.assert_close(s, q * k)
    torch.testing.assert_close(kp, k)
    torch.testing.assert_close(m, q @ w.T, atol=1e-4, rtol=1e-4)
    # the only generated kernel is the product (the matmul is a library call): no copy
    # of q or k before their reshapes
    assert launches(qkv(dynamic), x, w) == ["k0_pointwise"]


def test_reshape_splits() -> None:
    assert reshape_splits([2, 8, 256], [2, 8, 4, 64]) == [(0,), (1,), (2, 3)]
    assert reshape_splits([-1, 256], [-1, 4, 64]) == [(0,), (1, 2)]
    assert reshape_splits([2, 1, 8], [2, 8]) == [(0,), (), (1,)]
    assert reshape_splits([2, 8], [2, 1, 8, 1]) == [(0,), (2,)]
    assert reshape_splits([2, 8, 4, 64], [2, 8, 256]) is None  # a merge
    assert reshape_splits([-1, 8], [-1, 4]) is None  # [?, 8] -> [2?, 4] merges
    assert reshape_splits([-1, -1], [-1, -1]) is None  # two `?`: not provable
    assert reshape_splits([4], [2, -1]) is None


PARTLY_RETURNED = """
func.func @heads(%x: tensor<2x8x64xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %y = fusion.exp %x : tensor<2x8x64xf32>
  %q = fusion.slice %y [0, 0, 0] to [2, 8, 32] step [1, 1, 1] : tensor<2x8x64xf32> -> tensor<2x8x32xf32>
  %k = fusion.slice %y [0, 0, 32] to [2, 8, 64] step [1, 1, 1] : tensor<2x8x64xf32> -> tensor<2x8x32xf32>
  %qh = fusion.reshape %q [2, 8, 2, 16] : tensor<2x8x32xf32> -> tensor<2x8x2x16xf32>
  %kh = fusion.reshape %k [2, 8, 2, 16] : tensor<2x8x32xf32> -> tensor<2x8x2x16xf32>
  %qp = fusion.permute %qh [0, 2, 1, 3] : tensor<2x8x2x16xf32> -> tensor<2x2x8x16xf32>
  %kp = fusion.permute %kh [0, 2, 1, 3] : tensor<2x8x2x16xf32> -> tensor<2x2x8x16xf32>
  %s = fusion.mul %qp, %qp : tensor<2x2x8x16xf32>
  func.return %s, %kp : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}
"""


def test_a_returned_head_of_a_partly_returned_buffer_is_a_copy() -> None:
    """k is returned and q is not: k as a view would keep all of exp(x) alive after the
    call, so it is copied (its own storage, no larger than itself); q stays a view."""
    x = torch.randn(2, 8, 64, generator=torch.Generator().manual_seed(2))
    s, kp = check(PARTLY_RETURNED, x, tol=1e-5)
    y = x.exp()
    heads = lambda t: t.reshape(2, 8, 2, 16).permute(0, 2, 1, 3)  # noqa: E731
    torch.testing.assert_close(kp, heads(y[..., 32:]))
    torch.testing.assert_close(s, heads(y[..., :32]) ** 2)
    assert kp.untyped_storage().nbytes() == kp.numel() * 4
    assert launches(PARTLY_RETURNED, x) == ["k0_pointwise", "k1_pointwise", "k2_pointwise"]
