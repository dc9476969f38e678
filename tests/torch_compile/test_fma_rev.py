"""`prims.fma` and `prims.rev` (torch.flip) through `torch.compile(backend="allotment")` on the
CPU: both are translated into fusion ops (no ATen call), and the results are checked bit for
bit.

`prims.fma` becomes one `fusion.fma`: one rounding, as the prim documents. Its eager CPU
kernel multiplies, then adds (two roundings), so the expected values are computed in exact
rationals and rounded once (`test_fma.exact_fma`), and the inputs are ones where eager's
two roundings give other bits. `prims.rev`, which `aten.flip` decomposes to, is a gather
along each reversed dim and must equal eager torch.flip, with static and dynamic extents.
"""

from __future__ import annotations

import pytest
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


# -- prims.rev (torch.flip) -------------------------------------------------------------


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_flip_1d(dynamic: bool) -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, [0]) * 2 - x

    c = _compile(f)
    for n in (5, 7) if dynamic else (5,):
        x = torch.randn(n)
        if dynamic:
            torch._dynamo.mark_dynamic(x, 0)
        assert torch.equal(c(x), f(x))
    assert len(compiled_graphs()) == 1
    _fused_only("prims.rev.default")
    ir = _ir()
    assert "fusion.index_select" in ir and ("tensor<?xf32>" in ir) == dynamic


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_flip_3d_two_dims(dynamic: bool) -> None:
    """Dims 0 and -1 of a 3-D tensor reversed (dim 0 the dynamic one), added to the input."""
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, [0, -1]) + x

    c = _compile(f)
    for n in (2, 3) if dynamic else (2,):
        x = torch.randn(n, 3, 4)
        if dynamic:
            torch._dynamo.mark_dynamic(x, 0)
        assert torch.equal(c(x), f(x))
    assert len(compiled_graphs()) == 1
    _fused_only("prims.rev.default")
    assert _ir().count("fusion.index_select") == 2


def test_flip_of_size_one_dims_and_integers() -> None:
    """A dim of extent 1 reverses to itself (no gather); int64 elements are moved exactly."""
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, [1, 2])

    x = torch.arange(2 * 1 * 5, dtype=torch.int64).reshape(2, 1, 5) * (2**40 + 1)
    assert torch.equal(_compile(f)(x), f(x))
    _fused_only("prims.rev.default")
    assert _ir().count("fusion.index_select") == 1
