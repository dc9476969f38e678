"""A library call's result in another memory order (`fusion.aten`'s `orders`): the torch.compile
frontend reads the order off the node's fake tensor (`translate.memory_order`), fusion-allocate
plans the buffer in it so that the transpose back is a view, and the host program keeps the
result as it comes (`host_runtime.in_order`), copying only one that comes back otherwise.
Checked against torch on the CPU, with CPU flash attention (whose output is laid out
[batch, seq, heads, dim]) and with a call that returns row-major."""

from __future__ import annotations

import pytest
import torch
from backend_check import launches

import allotment
from allotment.backend import host_runtime as rt
from allotment.frontend.torch_compile.translate import memory_order

ATTENTION = """
func.func @attn(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %h = fusion.reshape %x [2, 8, 4, 16] : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %q = fusion.permute %h [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %o, %lse = fusion.aten "aten._scaled_dot_product_flash_attention_for_cpu.default" (%q, %q, %q) {call = "{\\"args\\": [{\\"t\\": 0}, {\\"t\\": 1}, {\\"t\\": 2}, 0.0, false], \\"results\\": [0, 1], \\"orders\\": [ORDER, null]}"} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [2, 8, 64] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %y = fusion.exp %m : tensor<2x8x64xf32>
  func.return %y : tensor<2x8x64xf32>
}
"""

ERFCX = """
func.func @erfcx(%q: tensor<2x4x8x16xf32>) -> tensor<2x8x64xf32> {
  %o = fusion.aten "aten.special_erfcx.default" (%q) {call = "{\\"args\\": [{\\"t\\": 0}], \\"orders\\": [[0, 2, 1, 3]]}"} : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [2, 8, 64] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %y = fusion.tanh %m : tensor<2x8x64xf32>
  func.return %y : tensor<2x8x64xf32>
}
"""


def _expected(x: torch.Tensor) -> torch.Tensor:
    q = x.reshape(2, 8, 4, 16).transpose(1, 2)
    o = torch.nn.functional.scaled_dot_product_attention(q, q, q)
    return o.transpose(1, 2).reshape(2, 8, 64).exp()


@pytest.mark.parametrize("returned", [False, True], ids=["used", "also-returned"])
@pytest.mark.parametrize("order", ["[0, 2, 1, 3]", "null"], ids=["call-order", "row-major"])
def test_attention_output_in_its_call_order(order: str, returned: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """CPU flash attention on a transposed q returns its output laid out [batch, seq, heads,
    dim]. With that order the output is used as it comes and the merged heads are a view:
    one kernel, no copy. Without it (the plan before orders) a kernel transposes it; and
    where the output is also returned (saved for a backward), it is first copied row-major."""
    copies: list[tuple[int, ...]] = []
    real = rt.row_major_copy
    monkeypatch.setattr(rt, "row_major_copy", lambda t: copies.append(tuple(t.shape)) or real(t))
    text = ATTENTION.replace("ORDER", order)
    if returned:
        text = text.replace("-> tensor<2x8x64xf32> {", "-> (tensor<2x8x64xf32>, tensor<2x4x8x16xf32>) {").replace(
            "func.return %y : tensor<2x8x64xf32>", "func.return %y, %o : tensor<2x8x64xf32>, tensor<2x4x8x16xf32>")
    x = torch.randn(2, 8, 64, generator=torch.Generator().manual_seed(0))
    y, *o = allotment.compile(text)(x)
    torch.testing.assert_close(y, _expected(x), atol=1e-5, rtol=1e-5)
    if returned:
        q = x.reshape(2, 8, 4, 16).transpose(1, 2)
        torch.testing.assert_close(o[0], torch.nn.functional.scaled_dot_product_attention(q, q, q), atol=1e-5, rtol=1e-5)
    assert copies == ([(2, 4, 8, 16)] if order == "null" and returned else [])
    # the exp kernel alone, or the transpose's copy before it
    assert launches(text, x) == (["k1_pointwise"] if order != "null" else ["k1_pointwise", "k2_pointwise"])


def test_a_result_that_comes_back_in_another_order_is_copied_into_the_planned_one() -> None:
    """`erfcx` returns row-major; the plan says [0, 2, 1, 3]: the host copies it into that
    order, and the view after it reads the right elements."""
    q = torch.randn(2, 4, 8, 16, generator=torch.Generator().manual_seed(1))
    (y,) = allotment.compile(ERFCX)(q)
    torch.testing.assert_close(y, torch.special.erfcx(q).transpose(1, 2).reshape(2, 8, 64).tanh())


def test_in_order() -> None:
    laid = torch.randn(2, 8, 4, 16).permute(0, 2, 1, 3)  # [2, 4, 8, 16] in [0, 2, 1, 3] order
    assert rt.in_order(laid, (0, 2, 1, 3)) is laid
    plain = torch.randn(2, 4, 8, 16)
    got = rt.in_order(plain, (0, 2, 1, 3))
    assert got.permute(0, 2, 1, 3).is_contiguous() and torch.equal(got, plain)


def test_memory_order() -> None:
    assert memory_order(torch.empty(2, 8, 4, 16).permute(0, 2, 1, 3)) == [0, 2, 1, 3]
    assert memory_order(torch.empty(2, 4, 8, 16)) is None  # row-major
    assert memory_order(torch.empty(2, 4, 8, 32)[..., :16]) is None  # not dense
    odd = torch.empty(4, 1, 8).transpose(0, 2)  # a dim of size 1 may stand anywhere
    order = memory_order(odd)
    assert order is not None and rt.in_order(odd, tuple(order)) is odd
    assert memory_order(torch.empty(0, 3).t()) is None


SAVED = """
func.func @saved(%o: tensor<2x4x8x16xf32> {fusion.stride_order = array<i64: 3, 1, 2, 0>}, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [16, 64] : tensor<2x8x4x16xf32> -> tensor<16x64xf32>
  %e = fusion.exp %m : tensor<16x64xf32>
  %y = fusion.matmul %e, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  func.return %y : tensor<16x64xf32>
}
"""


def _saved_expected(o: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return o.transpose(1, 2).reshape(16, 64).exp() @ w


@pytest.mark.parametrize("laid", ["in-order", "row-major", "other"])
def test_an_argument_passed_in_its_stride_order_is_viewed_as_it_lies(laid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An argument with `fusion.stride_order` (the backward's saved attention output, laid out
    [batch, seq, heads, dim]): passed so, the merged heads are a view of it (no copy at entry,
    no transpose kernel); passed in any other layout, the entry copies it into that order
    (never row-major), and every result is right."""
    copies: list[str] = []
    real_copy, real_order = rt.row_major_copy, rt.in_order
    monkeypatch.setattr(rt, "row_major_copy", lambda t: copies.append("row-major") or real_copy(t))
    monkeypatch.setattr(rt, "in_order", lambda t, order: copies.append(f"in {order}") or real_order(t, order))
    g = torch.Generator().manual_seed(2)
    base = torch.randn(2, 8, 4, 16, generator=g)
    o = {"in-order": base.permute(0, 2, 1, 3), "row-major": base.permute(0, 2, 1, 3).contiguous(),
         "other": base.permute(0, 2, 1, 3).contiguous().transpose(2, 3).contiguous().transpose(2, 3)}[laid]
    w = torch.randn(64, 64, generator=g)
    before = o.clone()
    (y,) = allotment.compile(SAVED)(o, w)
    torch.testing.assert_close(y, _saved_expected(o, w), atol=1e-4, rtol=1e-4)
    assert torch.equal(o, before)  # the caller's tensor is not changed
    # one copy, made by `in_order` (through the recorded clone of its permuted view)
    assert copies == ([] if laid == "in-order" else ["in (0, 2, 1, 3)", "row-major"])
    assert launches(SAVED, o, w)[0] == "k0_pointwise"  # the exp reads the view: no transpose kernel first


def test_the_translator_gives_arguments_their_stride_order() -> None:
    """`translate.memory_order` of a placeholder's fake tensor becomes the argument's
    `fusion.stride_order` in nvFuser's convention (each dim's place from the innermost)."""
    from allotment.dialects.fusion import STRIDE_ORDER_ATTR, argument_order
    from allotment.frontend.torch_compile.backend import _donate

    module = allotment.parse_module(SAVED.replace(" {fusion.stride_order = array<i64: 3, 1, 2, 0>}", ""))
    _donate(module, [], {0: [0, 2, 1, 3]})
    f = next(iter(module.ops))
    assert list(f.arg_attrs.data[0].data[STRIDE_ORDER_ATTR].get_values()) == [3, 1, 2, 0]
    assert STRIDE_ORDER_ATTR not in f.arg_attrs.data[1].data
    assert argument_order(f.body.block.args[0]) == [0, 2, 1, 3] and argument_order(f.body.block.args[1]) is None
