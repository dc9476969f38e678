"""`fusion.fma`: `a * b + c` rounded once, in the reference evaluator, in generated Triton
kernels (Triton's interpreter on CPU tensors), through `fused_multiply_add` of the frontend,
and through the MLIR lowering where its tools are installed.

The expected values are computed independently of all of them: in exact rationals
(`fractions.Fraction`), rounded once to f32 or f64 by choosing the nearest of the
neighbouring floats (ties to even). Each check compares bits, and each uses inputs where
the unfused `a * b + c` (two roundings) gives other bits, so a mul and an add would fail it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from backend_check import interpreter_rounding_to_nearest

import allotment
from allotment.driver import mlir_runner
from allotment.frontend.pointwise_ops import fused_multiply_add
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate

FLOAT_TYPES = {torch.float32: np.float32, torch.float64: np.float64}


def _round_once(exact: Fraction, dtype: torch.dtype) -> float:
    """The float of `dtype` nearest to `exact` (ties to the even significand)."""
    np_type = FLOAT_TYPES[dtype]
    guess = np_type(float(exact))  # within a step of the answer
    cands = [guess, np.nextafter(guess, np_type(math.inf)), np.nextafter(guess, np_type(-math.inf))]
    bits = np.int32 if np_type is np.float32 else np.int64
    return float(min(cands, key=lambda f: (abs(Fraction(float(f)) - exact), int(np.array(f).view(bits)) & 1)))


def exact_fma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """`a * b + c` (finite values of `dtype`, broadcast) rounded once to `dtype`."""
    a, b, c = torch.broadcast_tensors(a, b, c)
    out = [_round_once(Fraction(x) * Fraction(y) + Fraction(z), dtype)
           for x, y, z in zip(a.flatten().tolist(), b.flatten().tolist(), c.flatten().tolist())]
    return torch.tensor(out, dtype=dtype).reshape(a.shape)


def cancelling(n: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs where `c` cancels most of `a * b` (where one rounding matters), over many
    exponents, the first element the textbook case: (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24,
    but the rounded square is 1 + 2^-11, so mul-then-add gives 0."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(n, generator=g, dtype=dtype) * torch.exp2(torch.randint(-30, 30, (n,), generator=g)).to(dtype)
    b = torch.randn(n, generator=g, dtype=dtype) * torch.exp2(torch.randint(-30, 30, (n,), generator=g)).to(dtype)
    c = -(a * b) + torch.randn(n, generator=g, dtype=dtype) * (a * b).abs() * 1e-9
    c[n // 2:] = torch.randn(n - n // 2, generator=g, dtype=dtype)  # and ordinary sums
    a[0], b[0], c[0] = 1 + 2**-12, 1 + 2**-12, -(1 + 2**-11)
    return a, b, c


def assert_same_bits(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = (got != want).nonzero().flatten().tolist()
    assert not bad, f"{len(bad)} elements differ, first at {bad[0]}: {got.flatten()[bad[0]]!r} != {want.flatten()[bad[0]]!r}"


def fma_text(t: str, n: str = "?") -> str:
    ty = f"tensor<{n}x{t}>"
    return (f"func.func @f(%a: {ty}, %b: {ty}, %c: {ty}) -> {ty} {{\n"
            f"  %r = fusion.fma %a, %b, %c : {ty}\n  func.return %r : {ty}\n}}\n")


def reference(text: str, *inputs: torch.Tensor) -> list[torch.Tensor]:
    return evaluate(find_function(parse_module(text), None), list(inputs))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_reference_rounds_once(dtype: torch.dtype) -> None:
    a, b, c = cancelling(400, dtype, seed=1)
    want = exact_fma(a, b, c, dtype)
    assert (a * b + c != want).sum() > 100  # two roundings are seen here
    t = "f32" if dtype == torch.float32 else "f64"
    (got,) = reference(fma_text(t), a, b, c)
    assert_same_bits(got, want)


def test_reference_special_values() -> None:
    """Infinities and NaN as in IEEE (the unfused result there); signed zeros: an exact 0
    is +0 unless both the product and the addend are -0; a product past the f32 range
    that the addend brings back is not inf, as the unfused product is."""
    inf, nan, big = math.inf, math.nan, 2.0**100
    a = torch.tensor([inf, 1.0, nan, -0.0, 2.0, 1.0, big, -big], dtype=torch.float32)
    b = torch.tensor([0.0, inf, 1.0, 1.0, 3.0, -0.0, big, big], dtype=torch.float32)
    c = torch.tensor([1.0, -inf, 1.0, -0.0, -6.0, -0.0, -3.4e38, 3.4e38], dtype=torch.float32)
    (got,) = reference(fma_text("f32"), a, b, c)
    assert got[:3].isnan().all()
    assert got[3] == 0 and math.copysign(1, got[3]) == -1  # -0 * 1 + -0
    assert got[4] == 0 and math.copysign(1, got[4]) == 1  # 6 - 6
    assert got[5] == 0 and math.copysign(1, got[5]) == -1  # 1 * -0 + -0
    assert got[6] == math.inf and got[7] == -math.inf  # 2^200 - 3.4e38 is still past the range
    (d,) = reference(fma_text("f64"), a.double(), b.double(), c.double())
    assert d[:3].isnan().all() and math.copysign(1, d[3]) == -1 and math.copysign(1, d[4]) == 1
    assert d[6] == 2.0**200 - 3.4e38  # exact in f64


def test_reference_bf16_rounds_the_f32_fma() -> None:
    """16-bit floats compute in f32: the f32 fma, then one rounding to bf16."""
    a, b, c = (x.bfloat16() for x in cancelling(64, torch.float32, seed=2))
    want = exact_fma(a.float(), b.float(), c.float(), torch.float32).bfloat16()
    (got,) = reference(fma_text("bf16"), a, b, c)
    assert_same_bits(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_generated_kernel_rounds_once(dtype: torch.dtype) -> None:
    a, b, c = cancelling(64, dtype, seed=3)
    t = "f32" if dtype == torch.float32 else "f64"
    (got,) = allotment.compile(fma_text(t))(a, b, c)
    want = exact_fma(a, b, c, dtype)
    assert (a * b + c != want).sum() > 10
    assert_same_bits(got, want)


def test_generated_kernel_broadcasts_scalars_and_bf16() -> None:
    """A static size-1 row, a scalar addend, bf16 operands: computed in f32, rounded once
    more to bf16 (with the interpreter rounding f32 to bf16 to nearest, as GPUs do)."""
    text = """func.func @f(%x: tensor<?x4xbf16>, %row: tensor<1x4xbf16>, %s: f32) -> tensor<?x4xbf16> {
  %r = fusion.fma %x, %row, %s : tensor<?x4xbf16>, tensor<1x4xbf16>, f32 -> tensor<?x4xbf16>
  func.return %r : tensor<?x4xbf16>
}"""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 4, generator=g).bfloat16()
    row = torch.randn(1, 4, generator=g).bfloat16()
    s = -0.75
    with interpreter_rounding_to_nearest():
        (got,) = allotment.compile(text)(x, row, s)
    want = exact_fma(x.float(), row.float(), torch.tensor(s), torch.float32).bfloat16()
    assert_same_bits(got, want)
    assert_same_bits(reference(text, x, row, s)[0], want)


def test_frontend_builds_fusion_fma_but_fd_ops_has_none() -> None:
    """`fused_multiply_add` builds one `fusion.fma` (half types lifted to f32, as `fd.ops`
    arithmetic does); `fd.ops.fma` stays "not supported" (nvFuser has no fma)."""
    a, b, c = cancelling(16, torch.float32, seed=5)
    h = a.bfloat16()
    fd = allotment.FusionDefinition()
    with fd:
        ta, tb, tc, th = (fd.from_pytorch(x) for x in (a, b, c, h))
        fd.add_output(fused_multiply_add(fd.ops, ta, tb, tc))
        fd.add_output(fused_multiply_add(fd.ops, th, th, -0.5))
    ir = fd.ir()
    assert ir.count("fusion.fma") == 2 and "fusion.mul" not in ir
    assert "fusion.cast %T3 : tensor<?xbf16> to tensor<?xf32>" in ir  # bf16 alone computes, and gives, f32
    got, half = fd.execute([a, b, c, h])
    assert_same_bits(got, exact_fma(a, b, c, torch.float32))
    assert_same_bits(half, exact_fma(h.float(), h.float(), torch.tensor(-0.5), torch.float32))
    with pytest.raises(allotment.UnsupportedError, match="not supported: fma"):
        fd2 = allotment.FusionDefinition()
        with fd2:
            t = fd2.from_pytorch(a)
            fd2.ops.fma(t, t, t)


def test_frontend_refuses_integers_and_scalars_alone() -> None:
    fd = allotment.FusionDefinition()
    with fd:
        i = fd.from_pytorch(torch.arange(4, dtype=torch.int32))
        with pytest.raises(allotment.ArgumentError, match="fma: it takes floating-point operands, got the promoted type i32"):
            fused_multiply_add(fd.ops, i, i, i)
        with pytest.raises(allotment.ArgumentError, match="fma: at least one argument must be a Tensor"):
            fused_multiply_add(fd.ops, 1.0, 2.0, 3.0)
        with pytest.raises(allotment.ArgumentError, match="fma: argument 'arg2' must be a Tensor, a Scalar or a Python number"):
            fused_multiply_add(fd.ops, i, "x", i)


@pytest.mark.skipif(mlir_runner.available() is not None, reason=mlir_runner.available() or "")
def test_mlir_lowering_rounds_once() -> None:
    a, b, c = cancelling(32, torch.float32, seed=6)
    result = mlir_runner.run_many([(fma_text("f32", "32"), [a, b, c])])[0]
    if isinstance(result, Exception):
        raise result
    (got,) = result
    assert_same_bits(got, exact_fma(a, b, c, torch.float32))
