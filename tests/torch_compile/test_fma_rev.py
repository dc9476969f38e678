"""`prims.fma` through `torch.compile(backend="allotment")` on the CPU: translated into
fusion ops (no ATen call), and the results are checked bit for bit.

`prims.fma` becomes one `fusion.fma`: one rounding, as the prim documents. Its eager CPU
kernel multiplies, then adds (two roundings), so the expected values are computed in exact
rationals and rounded once (`test_fma.exact_fma`), and the inputs are ones where eager's
two roundings give other bits.
"""

from __future__ import annotations

import torch
import torch._inductor.inductor_prims  # noqa: F401 (registers torch.ops.prims.fma)
from test_fma import assert_same_bits, cancelling, exact_fma

from allotment.frontend.torch_compile import census, compiled_graphs, reset_census


def _compile(fn: object, **kwargs: object) -> object:
    torch._dynamo.reset()
    reset_census()
    return torch.compile(fn, backend="allotment", **kwargs)


def _fused_only(op: str) -> None:
    """Every graph compiled since `_compile` translated `op` into fusion ops, and ran no
    ATen call."""
    graphs = census()
    assert graphs and all(g.eager is None for g in graphs), [g.eager for g in graphs]
    assert any(g.fused[op] for g in graphs), [dict(g.fused) for g in graphs]
    assert all(not g.aten for g in graphs), [dict(g.aten) for g in graphs]


def _ir() -> str:
    return "\n".join(c.program.fd.ir() for c in compiled_graphs())


# -- prims.fma -----------------------------------------------------------------------


def fma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return torch.ops.prims.fma(a, b, c)


def test_prims_fma_rounds_once() -> None:
    a, b, c = cancelling(48, torch.float32, seed=11)
    want = exact_fma(a, b, c, torch.float32)
    eager = fma(a, b, c)
    assert torch.equal(eager, a * b + c) and (eager != want).sum() > 5  # eager CPU: two roundings
    got = _compile(fma)(a, b, c)
    assert_same_bits(got, want)
    _fused_only("prims.fma.default")
    assert "fusion.fma" in _ir() and "fusion.mul" not in _ir()


def test_prims_fma_dynamic_and_broadcast() -> None:
    """A `?` extent (one compile for two lengths) and a row broadcast over it."""
    f = _compile(lambda x, row, c: fma(x, row, c), dynamic=True)
    for n, seed in ((3, 12), (5, 13)):
        g = torch.Generator().manual_seed(seed)
        x, row = torch.randn(n, 4, generator=g), torch.randn(1, 4, generator=g)
        c = -(x * row) * (1 + 1e-6 * torch.randn(n, 4, generator=g))  # cancels most of the product
        want = exact_fma(x, row, c, torch.float32)
        assert (x * row + c != want).sum() > 0
        assert_same_bits(f(x, row, c), want)
    assert len(compiled_graphs()) == 1
    _fused_only("prims.fma.default")


def test_prims_fma_of_bf16_is_one_f32_fma_then_bf16() -> None:
    a, b, c = (t.bfloat16() for t in cancelling(16, torch.float32, seed=14))
    got = _compile(fma)(a, b, c)
    assert got.dtype == torch.bfloat16
    assert_same_bits(got, exact_fma(a.float(), b.float(), c.float(), torch.float32).bfloat16())
    _fused_only("prims.fma.default")


def test_prims_fma_of_integers_is_a_mul_and_an_add() -> None:
    a = torch.tensor([3, -4, 2**20], dtype=torch.int32)
    got = _compile(fma)(a, a, a)
    assert torch.equal(got, a * a + a)
    _fused_only("prims.fma.default")
    assert "fusion.fma" not in _ir()


def test_softmax_backward_uses_the_fma() -> None:
    """Inductor's decomposition of the softmax backward is `prims.fma(-y, sum(g * y), g * y)`:
    fused, and the gradient is eager's (within f32 rounding)."""
    x = torch.randn(3, 8, requires_grad=True)
    g = torch.randn(3, 8)
    f = _compile(lambda t: torch.softmax(t, dim=-1))
    f(x).backward(g)
    got = x.grad.clone()
    x.grad = None
    torch.softmax(x, dim=-1).backward(g)
    torch.testing.assert_close(got, x.grad)
    _fused_only("prims.fma.default")
