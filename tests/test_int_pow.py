"""Integer `fusion.pow` in generated kernels is exact and wraps as torch's does.

The kernels square in the integer type itself (`_int_pow` in the module
prelude): no trip through f64, whose 53-bit mantissa cannot hold 10**18 or
3**39. Each case runs through Triton's interpreter and is compared with
`torch.pow` on the same tensors and with the reference evaluator
(`allotment.reference`, whose rule for negative exponents is torch's tensor
rule: 1 for base 1, +-1 for base -1, 0 otherwise).
"""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

DTYPES = {"i64": torch.int64, "i32": torch.int32}

# (base, exponent) pairs: values an f64 round trip gets wrong, wrapping products,
# negative bases, negative exponents (of 1, -1, 0 and others), zero exponents.
PAIRS = [
    (10, 15), (10, 18), (3, 39), (5, 27), (7, 22), (-3, 39), (-7, 21), (2, 62), (-2, 63),
    (2, 63), (3, 41), (10, 19), (-10, 19), (12345, 5), (2, 64), (3, 100), (-1, 2**31 - 1),
    (1, -5), (-1, -3), (-1, -4), (2, -1), (-2, -2), (0, -1), (0, 0), (0, 3), (5, 0), (-5, 0), (0, 1),
    (1, 2**31 - 1), (46341, 2), (-46341, 3), (10, 9), (10, 10),
]


def run_pow(ty: str, bases: list[int], exps: list[int]) -> torch.Tensor:
    dtype = DTYPES[ty]
    n = len(bases)
    tt = f"tensor<?xi{ty[1:]}>"
    text = (
        f"func.func @f(%a: {tt}, %b: {tt}) -> {tt} {{\n"
        f"  %r = fusion.pow %a, %b : {tt}\n"
        f"  func.return %r : {tt}\n}}\n"
    )
    a = torch.tensor(bases, dtype=torch.int64).to(dtype)  # wraps out-of-range bases, as torch would
    b = torch.tensor(exps, dtype=torch.int64).to(dtype)
    (out,) = check(text, a, b)
    assert out.shape == (n,)
    expected = torch.pow(a, b)
    assert torch.equal(out, expected), f"\n{out}\ntorch:\n{expected}"
    return out


@pytest.mark.parametrize("ty", ["i64", "i32"])
def test_int_pow_is_exact_and_wraps_as_torch(ty: str) -> None:
    bases = [a for a, _ in PAIRS]
    exps = [b for _, b in PAIRS]
    out = run_pow(ty, bases, exps)
    if ty == "i64":
        got = dict(zip(PAIRS, out.tolist()))
        assert got[(10, 15)] == 10**15 and got[(10, 18)] == 10**18
        assert got[(3, 39)] == 3**39 and got[(5, 27)] == 5**27 and got[(-3, 39)] == -(3**39)


def test_int_pow_of_random_values() -> None:
    g = torch.Generator().manual_seed(1)
    bases = torch.randint(-40, 40, (64,), generator=g).tolist()
    exps = torch.randint(-3, 70, (64,), generator=g).tolist()
    run_pow("i64", bases, exps)
    run_pow("i32", bases, exps)


def test_int_pow_with_scalar_operands() -> None:
    """A constant exponent or base (a Python literal in the kernel) is exact too."""
    tt = "tensor<?xi64>"
    text = (
        f"func.func @f(%x: {tt}) -> ({tt}, {tt}) {{\n"
        "  %e = arith.constant 39 : i64\n"
        "  %ten = arith.constant 10 : i64\n"
        f"  %a = fusion.pow %x, %e : {tt}, i64 -> {tt}\n"
        f"  %b = fusion.pow %ten, %x : i64, {tt} -> {tt}\n"
        f"  func.return %a, %b : {tt}, {tt}\n}}\n"
    )
    x = torch.tensor([3, -3, 2, 1, 0, 18, -1], dtype=torch.int64)
    a, b = check(text, x)
    assert torch.equal(a, torch.pow(x, 39)) and a[0].item() == 3**39
    assert torch.equal(b, torch.pow(torch.full_like(x, 10), x)) and b[5].item() == 10**18


def test_a_negative_python_int_exponent_of_an_integer_tensor_is_refused() -> None:
    """As torch: `t.pow(-1)` of an integer tensor raises "Integers to negative integer powers are
    not allowed" (a tensor exponent gives 0 or +-1, as above); a float exponent or a float base
    is fine."""
    from allotment import ArgumentError, DataType, FusionDefinition

    for build in (lambda fd, t: fd.ops.pow(t, -1), lambda fd, t: t ** -2):
        with pytest.raises(ArgumentError, match="Integers to negative integer powers are not allowed"):  # noqa: PT012
            with FusionDefinition() as fd:
                build(fd, fd.define_tensor(shape=[-1], dtype=DataType.Int32))
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        torch.tensor([2]).pow(-1)
    with FusionDefinition() as fd:
        i = fd.define_tensor(shape=[-1], dtype=DataType.Int)
        f = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(fd.ops.pow(i, -1.0))
        fd.add_output(fd.ops.pow(f, -1))
        fd.add_output(fd.ops.pow(i, 2))
    a, b = torch.tensor([1, 2, -4]), torch.tensor([0.5, 2.0, 4.0])
    got = fd.execute([a, b])
    for g, want in zip(got, (a.pow(-1.0), b.pow(-1), a.pow(2))):
        torch.testing.assert_close(g, want)
