"""The math, rounding, integer and bitwise ops of the fusion dialect, against torch.

Each test compiles a fusion (generated Triton kernels, run by Triton's
interpreter on CPU tensors) and checks it against the reference evaluator
(`backend_check.check`: same dtypes and shapes, floats within the tolerance of
the least precise float type, integers and bools exactly), whose ops are torch's.
Where the dialect defines what torch does not (a shift amount past the bit
width, an integer zero divisor in a kernel, `logical_right_shift`, `erfcinv`)
the expected values are written out or computed independently of the reference.
The f32 accuracy test measures the interpreter's own implementations of the
transcendental functions in units of f32 spacing against torch in f64.
"""

from __future__ import annotations

import math
import os
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, fn1  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import EvaluationError, evaluate  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

NAN, INF = float("nan"), float("inf")
DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i1": torch.bool,
}
FLOATS = ["f32", "bf16", "f16", "f64"]
INTS = ["i32", "i64"]


def unary(name: str, ty: str, result: str | None = None) -> str:
    result = result or ty
    tt, rt = f"tensor<?x{ty}>", f"tensor<?x{result}>"
    types = tt if tt == rt else f"{tt} -> {rt}"
    return fn1(f"%x: {tt}", f"fusion.{name} %x : {types}", rt)


def binary(name: str, lhs: str, rhs: str, result: str) -> str:
    a, b, r = f"tensor<?x{lhs}>", f"tensor<?x{rhs}>", f"tensor<?x{result}>"
    return fn1(f"%x: {a}, %y: {b}", f"fusion.{name} %x, %y : {a}, {b} -> {r}", r)


def run(text: str, *inputs: torch.Tensor) -> list[torch.Tensor]:
    """The compiled fusion's outputs (no reference run)."""
    return list(allotment.compile(text)(*inputs))


def reference(text: str, *inputs: torch.Tensor) -> list[torch.Tensor]:
    return evaluate(find_function(parse_module(text), None), list(inputs))


# --------------------------------------------------------------------------- #
# Floating-point math                                                         #
# --------------------------------------------------------------------------- #

# per op: values inside and at the edges of its domain, and outside it
DOMAIN_VALUES = {
    "acos": [-1.0, -0.999, -0.5, 0.0, 1e-8, 0.3, 0.999, 1.0, 1.5, -2.0],
    "asin": [-1.0, -0.999, -0.5, -0.0, 1e-8, 0.3, 0.999, 1.0, 1.5, -2.0],
    "acosh": [1.0, 1.0001, 1.5, 2.0, 10.0, 1e5, 3e8, 0.5, -1.0, 0.0],
    "atanh": [-1.0, -0.999, -0.5, -1e-6, 0.0, 0.25, 0.999, 1.0, 1.5, -3.0],
    "log1p": [-1.0, -0.999, -0.5, -1e-7, 0.0, 1e-7, 0.5, 10.0, 1e30, -2.0],
    "erfinv": [-1.0, -0.9999, -0.7, -0.5, -0.1, 0.0, 1e-7, 0.4999, 0.999, 1.0, 1.2, -1.5],
    "erfcinv": [0.0, 1e-30, 1e-10, 1e-5, 0.2, 0.7, 1.0, 1.3, 1.9999, 2.0, -0.5, 2.5],
    "lgamma": [-100.5, -3.5, -2.0, -1.5, -1e-5, 0.0, 1e-30, 0.5, 1.0, 2.0, 2.5, 7.0, 50.0, 1e20],
    "log2": [0.0, 1e-30, 0.25, 1.0, 3.0, 1024.0, 1e30, -1.0],
    "log10": [0.0, 1e-30, 0.1, 1.0, 3.0, 1000.0, 1e30, -1.0],
}
COMMON_VALUES = [-30.0, -5.5, -2.0, -1.0, -0.3, -1e-6, -0.0, 0.0, 1e-6, 0.3, 0.5, 1.0, 2.5, 9.0, 80.0]
SPECIAL_VALUES = [INF, -INF, NAN]

FLOAT_MATH = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "exp2", "expm1",
    "log2", "log10", "log1p", "erfc", "erfinv", "erfcinv", "lgamma",
]


def math_input(name: str, ty: str) -> torch.Tensor:
    values = DOMAIN_VALUES.get(name, COMMON_VALUES) + SPECIAL_VALUES
    return torch.tensor(values, dtype=torch.float64).to(DTYPES[ty])


@pytest.mark.parametrize("name", FLOAT_MATH)
@pytest.mark.parametrize("ty", FLOATS)
def test_float_math(name: str, ty: str) -> None:
    check(unary(name, ty), math_input(name, ty))


@pytest.mark.parametrize("name", ["acos", "atan", "cosh", "expm1", "log1p", "erfc", "erfinv", "lgamma", "exp2"])
@pytest.mark.parametrize("ty", ["i32", "i64", "i1"])
def test_math_of_integers_and_bools_is_f32(name: str, ty: str) -> None:
    x = torch.tensor([-3, -1, 0, 1, 2, 5], dtype=torch.int64).to(DTYPES[ty])
    (out,) = check(unary(name, ty, "f32"), x)
    torch.testing.assert_close(out, getattr(torch, name)(x), equal_nan=True)


def test_erfcinv_inverts_erfc() -> None:
    """erfcinv has no torch op: erfc of its result gives back the input, and near 1 it
    agrees with erfinv(1 - y)."""
    y = torch.tensor([1e-30, 1e-12, 1e-6, 0.01, 0.3, 0.9, 1.0, 1.2, 1.7, 1.99], dtype=torch.float64)
    (r,) = run(unary("erfcinv", "f64"), y)
    back = torch.erfc(r)
    torch.testing.assert_close(back, y, rtol=1e-6, atol=0)
    middle = (y > 0.1) & (y < 1.9)
    torch.testing.assert_close(r[middle], torch.erfinv(1 - y[middle]), rtol=1e-6, atol=1e-9)


# maximum error per op: in f32 spacings of the exact (f64) value, plus an absolute part
# where the function crosses zero (its result is a difference of larger terms there)
ACCURACY = {
    "acos": (4, 0), "acosh": (4, 0), "asin": (4, 0), "asinh": (4, 0), "atan": (4, 0),
    "atanh": (4, 0), "cosh": (4, 0), "sinh": (4, 0), "tan": (4, 0), "exp2": (4, 0),
    "expm1": (4, 0), "log2": (4, 0), "log10": (4, 0), "log1p": (4, 0), "erfinv": (4, 0),
    "erfc": (64, 0), "erfcinv": (8, 3e-7), "lgamma": (8, 3e-7),
}


def _exact(name: str, x: torch.Tensor) -> torch.Tensor:
    if name == "erfcinv":
        return -torch.special.ndtri(x / 2) / math.sqrt(2.0)
    return getattr(torch, name)(x)


@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_f32_accuracy(name: str) -> None:
    """Over a sweep of each op's domain, the f32 result is within a few f32 spacings of
    torch's f64 value (overflowing values excepted)."""
    sweep = torch.cat([
        torch.linspace(-12, 12, 97), torch.logspace(-8, 2, 41), -torch.logspace(-8, 2, 41),
        torch.linspace(-1, 1, 81), torch.linspace(0, 2, 81),
    ]).float()
    (got,) = run(unary(name, "f32"), sweep)
    exact = _exact(name, sweep.double())
    finite = torch.isfinite(exact) & (exact.abs() < torch.finfo(torch.float32).max)
    assert torch.equal(torch.isnan(got), torch.isnan(exact.float())), "NaN where torch has none, or none where it has"
    ulps, atol = ACCURACY[name]
    spacing = torch.finfo(torch.float32).eps * exact.abs().clamp_min(torch.finfo(torch.float32).tiny)
    err = (got.double() - exact).abs()
    bad = finite & (err > ulps * spacing + atol)
    assert not bad.any(), f"{name}: x={sweep[bad].tolist()} got {got[bad].tolist()} exact {exact[bad].tolist()}"


# --------------------------------------------------------------------------- #
# Rounding, sign                                                              #
# --------------------------------------------------------------------------- #

ROUNDING_VALUES = [
    -2.5, -1.5, -0.5, -0.49999997, -0.3, -0.0, 0.0, 0.3, 0.49999997, 0.5, 1.5, 2.5, 3.5, 2.4999998,
    -7.7, 7.7, 1e-30, -1e-30, 8388607.5, 4503599627370495.5, 1e30, INF, -INF, NAN,
]


@pytest.mark.parametrize("name", ["ceil", "floor", "round", "trunc", "frac", "sign"])
@pytest.mark.parametrize("ty", FLOATS)
def test_rounding_and_sign_of_floats(name: str, ty: str) -> None:
    x = torch.tensor(ROUNDING_VALUES, dtype=torch.float64).to(DTYPES[ty])
    (out,) = check(unary(name, ty), x)
    expected = getattr(torch, name)(x)
    torch.testing.assert_close(out, expected, equal_nan=True, rtol=0, atol=0)
    numbers = ~torch.isnan(expected)  # (the sign of a NaN carries no meaning)
    assert torch.equal(torch.signbit(out[numbers]), torch.signbit(expected[numbers])), "the sign of a zero differs"


def test_round_is_half_to_even() -> None:
    x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5], dtype=torch.float32)
    (out,) = check(unary("round", "f32"), x)
    assert out.tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0, 4.0]


@pytest.mark.parametrize("name", ["ceil", "floor", "round", "trunc", "sign"])
@pytest.mark.parametrize("ty", INTS)
def test_rounding_and_sign_of_integers_keep_them(name: str, ty: str) -> None:
    info = torch.iinfo(DTYPES[ty])
    x = torch.tensor([info.min, -7, -1, 0, 1, 8, info.max], dtype=DTYPES[ty])
    (out,) = check(unary(name, ty), x)
    assert torch.equal(out, getattr(torch, name)(x))


def test_sign_of_bool_is_itself() -> None:
    x = torch.tensor([True, False, True])
    (out,) = check(unary("sign", "i1"), x)
    assert torch.equal(out, torch.sign(x))


@pytest.mark.parametrize("ty", FLOATS + INTS + ["i1"])
def test_signbit(ty: str) -> None:
    if ty in FLOATS:
        x = torch.tensor([-1.0, -0.0, 0.0, 2.0, -INF, INF, NAN, -NAN, -1e-30], dtype=torch.float64).to(DTYPES[ty])
    elif ty == "i1":
        x = torch.tensor([True, False])
    else:
        info = torch.iinfo(DTYPES[ty])
        x = torch.tensor([info.min, -1, 0, 1, info.max], dtype=DTYPES[ty])
    (out,) = check(unary("signbit", ty, "i1"), x)
    assert torch.equal(out, torch.signbit(x))


# --------------------------------------------------------------------------- #
# Binary floating-point math                                                  #
# --------------------------------------------------------------------------- #

LHS = [-7.5, -7.5, 7.5, 7.5, 5.0, -5.0, 0.0, -0.0, 0.0, -0.0, 3.0, INF, -INF, INF, NAN, 1.0, 1e-30, 6.0, -1.0, 1.0]
RHS = [2.0, -2.0, 2.0, -2.0, 5.0, 2.5, 3.0, 3.0, -0.0, -3.0, INF, 2.0, INF, -INF, 1.0, NAN, 0.5, 0.0, 0.0, -INF]


@pytest.mark.parametrize("name", ["atan2", "fmod", "remainder", "floor_divide", "nextafter"])
@pytest.mark.parametrize("ty", FLOATS)
def test_binary_float_math(name: str, ty: str) -> None:
    x = torch.tensor(LHS, dtype=torch.float64).to(DTYPES[ty])
    y = torch.tensor(RHS, dtype=torch.float64).to(DTYPES[ty])
    (out,) = check(binary(name, ty, ty, ty), x, y)
    expected = {"floor_divide": lambda a, b: torch.div(a, b, rounding_mode="floor")}.get(name, getattr(torch, name))(x, y)
    torch.testing.assert_close(out, expected, equal_nan=True)


@pytest.mark.parametrize("ty", FLOATS)
def test_nextafter_steps_by_one_spacing_of_its_type(ty: str) -> None:
    dt = DTYPES[ty]
    info = torch.finfo(dt)
    x = torch.tensor([1.0, 1.0, 0.0, -0.0, info.max, -info.max, info.tiny, -2.0, 3.0], dtype=dt)
    y = torch.tensor([2.0, 0.0, 1.0, -1.0, INF, -INF, 0.0, -2.0, 3.0], dtype=dt)
    (out,) = check(binary("nextafter", ty, ty, ty), x, y)
    expected = torch.nextafter(x, y)
    exact = torch.ones_like(x, dtype=torch.bool)
    if ty == "bf16" and not torch.cuda.is_available():
        # Triton's interpreter converts bf16 subnormals to and from f32 wrongly (a plain
        # fusion.cast of one shows it too): those results are checked on the GPU only
        exact = (expected == 0) | (expected.abs() >= info.tiny)
    assert torch.equal(out[exact], expected[exact])
    assert out[0] == 1.0 + info.eps and out[4] == INF


def test_atan2_of_integers_is_f32_as_torch() -> None:
    x = torch.tensor([-3, 0, 5, 0, -1], dtype=torch.int32)
    y = torch.tensor([2, 0, -5, -4, 0], dtype=torch.int64)
    (out,) = check(binary("atan2", "i32", "i64", "f32"), x, y)
    torch.testing.assert_close(out, torch.atan2(x, y))


def test_floor_divide_and_remainder_agree() -> None:
    """x == floor_divide(x, y) * y + remainder(x, y), exactly, for floats of small integers."""
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-50, 50, (64,), generator=g).double()
    y = torch.randint(1, 9, (64,), generator=g).double() * torch.where(torch.arange(64) % 2 == 0, 1.0, -1.0)
    text = """func.func @f(%x: tensor<?xf64>, %y: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %q = fusion.floor_divide %x, %y : tensor<?xf64>
  %r = fusion.remainder %x, %y : tensor<?xf64>
  func.return %q, %r : tensor<?xf64>, tensor<?xf64>
}
"""
    q, r = check(text, x, y)
    assert torch.equal(q * y + r, x)
    assert torch.equal(torch.sign(r[r != 0]), torch.sign(y[r != 0]))


# --------------------------------------------------------------------------- #
# Integer division and remainder                                              #
# --------------------------------------------------------------------------- #


def int_pairs(ty: str) -> tuple[torch.Tensor, torch.Tensor]:
    info = torch.iinfo(DTYPES[ty])
    x = [7, -7, 7, -7, 0, 5, -1, 100, info.min, info.min, info.max, info.max, 3, -3, info.min, 1]
    y = [2, 2, -2, -2, 3, 5, 4, -9, -1, 1, -1, info.min, info.max, 7, 2, info.min]
    return torch.tensor(x, dtype=DTYPES[ty]), torch.tensor(y, dtype=DTYPES[ty])


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide", "div"])
@pytest.mark.parametrize("ty", INTS)
def test_integer_division_and_remainder_as_torch(name: str, ty: str) -> None:
    x, y = int_pairs(ty)
    (out,) = check(binary(name, ty, ty, ty), x, y)
    fns = {
        "fmod": torch.fmod, "remainder": torch.remainder,
        "floor_divide": lambda a, b: torch.div(a, b, rounding_mode="floor"),
        "div": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    }
    if name == "div":  # torch's trunc division of the minimum by -1 traps (SIGFPE) on x86
        wraps = (x == torch.iinfo(x.dtype).min) & (y == -1)
        assert torch.equal(out[wraps], x[wraps])  # -min wraps to min, as floor division gives
        assert torch.equal(out[~wraps], fns[name](x[~wraps], y[~wraps]))
    else:
        assert torch.equal(out, fns[name](x, y))


@pytest.mark.parametrize("ty", INTS)
def test_integer_zero_divisor(ty: str) -> None:
    """Kernels: quotient 0 and remainder the dividend (so x == q * y + r still holds); the
    reference evaluator, like torch, refuses."""
    x = torch.tensor([7, -7, 0, 5], dtype=DTYPES[ty])
    y = torch.tensor([0, 0, 0, 2], dtype=DTYPES[ty])
    cases = [("floor_divide", [0, 0, 0, 2]), ("div", [0, 0, 0, 2]), ("fmod", [7, -7, 0, 1]), ("remainder", [7, -7, 0, 1])]
    torch_ops = {"floor_divide": torch.floor_divide, "div": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                 "fmod": torch.fmod, "remainder": torch.remainder}
    for name, expected in cases:
        text = binary(name, ty, ty, ty)
        (out,) = run(text, x, y)
        assert out.tolist() == expected, name
        with pytest.raises(EvaluationError, match=rf"fusion.{name}: integer division by zero \(operand #1"):
            reference(text, x, y)
        with pytest.raises(RuntimeError):  # torch raises ZeroDivisionError on CPU
            torch_ops[name](x, y)


def test_integer_remainder_with_a_scalar() -> None:
    text = """func.func @f(%x: tensor<?xi32>) -> (tensor<?xi32>, tensor<?xi32>) {
  %c = arith.constant -3 : i64
  %r = fusion.remainder %x, %c : tensor<?xi32>, i64 -> tensor<?xi32>
  %q = fusion.floor_divide %c, %x : i64, tensor<?xi32> -> tensor<?xi32>
  func.return %r, %q : tensor<?xi32>, tensor<?xi32>
}
"""
    x = torch.tensor([-7, -1, 1, 2, 7, 100], dtype=torch.int32)
    r, q = check(text, x)
    assert torch.equal(r, torch.remainder(x, -3))
    assert torch.equal(q, torch.div(torch.full_like(x, -3), x, rounding_mode="floor"))


# --------------------------------------------------------------------------- #
# Bitwise ops, shifts, gcd                                                    #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("ty", INTS + ["i1"])
def test_bitwise(name: str, ty: str) -> None:
    if ty == "i1":
        x = torch.tensor([True, True, False, False])
        y = torch.tensor([True, False, True, False])
    else:
        x, y = int_pairs(ty)
    (out,) = check(binary(name, ty, ty, ty), x, y)
    assert torch.equal(out, getattr(torch, name)(x, y))


def test_bitwise_promotes_as_torch() -> None:
    x = torch.tensor([-1, 6, 2**31 - 1], dtype=torch.int32)
    y = torch.tensor([2**40 + 3, 3, -(2**40)], dtype=torch.int64)
    (out,) = check(binary("bitwise_xor", "i32", "i64", "i64"), x, y)
    assert torch.equal(out, torch.bitwise_xor(x, y))
    b = torch.tensor([True, False, True])
    (out,) = check(binary("bitwise_or", "i1", "i32", "i32"), b, x)
    assert torch.equal(out, torch.bitwise_or(b, x))


@pytest.mark.parametrize("ty", INTS + ["i1"])
def test_bitwise_not(ty: str) -> None:
    x = torch.tensor([True, False]) if ty == "i1" else int_pairs(ty)[0]
    (out,) = check(unary("bitwise_not", ty), x)
    assert torch.equal(out, torch.bitwise_not(x))


def shift_cases(ty: str) -> tuple[torch.Tensor, torch.Tensor]:
    info = torch.iinfo(DTYPES[ty])
    w = info.bits
    x = [1, -1, 5, -8, 3, 7, -7, 100, info.min, info.max, info.min, info.max, 1, -5, 12, -12]
    s = [w - 1, w, -1, 1, w + 8, -5, w + 1, 2, 1, 1, w - 1, w - 1, 0, 0, 3, 3]
    return torch.tensor(x, dtype=DTYPES[ty]), torch.tensor(s, dtype=DTYPES[ty])


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("ty", INTS)
def test_shifts_as_torch(name: str, ty: str) -> None:
    """Amounts past the bit width or negative included: << gives 0, >> the sign fill."""
    x, s = shift_cases(ty)
    (out,) = check(binary(name, ty, ty, ty), x, s)
    assert torch.equal(out, getattr(torch, name)(x, s))


@pytest.mark.parametrize("ty", INTS)
def test_logical_right_shift(ty: str) -> None:
    """Zeros shifted in: the unsigned reading of the bits, shifted (computed here in Python)."""
    x, s = shift_cases(ty)
    w = torch.iinfo(x.dtype).bits
    (out,) = check(binary("logical_right_shift", ty, ty, ty), x, s)
    expected = []
    for a, b in zip(x.tolist(), s.tolist()):
        v = ((a % (1 << w)) >> b) if 0 <= b < w else 0
        expected.append(v - (1 << w) if v >= 1 << (w - 1) else v)
    assert out.tolist() == expected


def test_shift_by_a_scalar_keeps_the_tensor_type() -> None:
    text = """func.func @f(%x: tensor<?xi32>, %s: i64) -> (tensor<?xi32>, tensor<?xi32>) {
  %l = fusion.bitwise_left_shift %x, %s : tensor<?xi32>, i64 -> tensor<?xi32>
  %r = fusion.bitwise_right_shift %x, %s : tensor<?xi32>, i64 -> tensor<?xi32>
  func.return %l, %r : tensor<?xi32>, tensor<?xi32>
}
"""
    x = torch.tensor([1, -1, 3, -(2**31)], dtype=torch.int32)
    for amount in (3, 31, 40):
        left, right = check(text, x, amount)
        assert torch.equal(left, torch.bitwise_left_shift(x, amount)), amount
        assert torch.equal(right, torch.bitwise_right_shift(x, amount)), amount


@pytest.mark.parametrize("ty", INTS)
def test_gcd_as_torch(ty: str) -> None:
    info = torch.iinfo(DTYPES[ty])
    fib = [1, 1]
    while fib[-1] + fib[-2] <= info.max:
        fib.append(fib[-1] + fib[-2])
    x = [12, -12, 0, 0, 7, 17, info.max, info.min, info.min, 6, fib[-1], -fib[-1], 36, 1]
    y = [18, 18, 0, -5, 0, 5, info.max - 1, 0, 6, info.min, fib[-2], fib[-2], -48, info.min]
    x, y = torch.tensor(x, dtype=DTYPES[ty]), torch.tensor(y, dtype=DTYPES[ty])
    (out,) = check(binary("gcd", ty, ty, ty), x, y)
    assert torch.equal(out, torch.gcd(x, y))


# --------------------------------------------------------------------------- #
# In larger kernels, and the generated code                                   #
# --------------------------------------------------------------------------- #

CHAIN = """func.func @f(%x: tensor<?x8xf32>, %i: tensor<?x8xi32>) -> (tensor<?x1xf32>, tensor<?x8xi32>) {
  %a = fusion.lgamma %x : tensor<?x8xf32>
  %b = fusion.atan2 %a, %x : tensor<?x8xf32>
  %c = fusion.round %b : tensor<?x8xf32>
  %s = fusion.sum %c dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %j = fusion.gcd %i, %i : tensor<?x8xi32>
  %k = fusion.bitwise_xor %j, %i : tensor<?x8xi32>
  func.return %s, %k : tensor<?x1xf32>, tensor<?x8xi32>
}
"""


def test_new_ops_in_a_reduction_kernel() -> None:
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0)) * 4
    i = torch.randint(-50, 50, (5, 8), generator=torch.Generator().manual_seed(1), dtype=torch.int32)
    check(CHAIN, x, i)


def test_only_the_helpers_used_are_emitted() -> None:
    exe = allotment.compile(CHAIN)
    cpu = exe.source("cpu")
    for helper in ("_lgamma", "_lgamma_pos", "_atan2", "_atan", "_signbit", "_round", "_gcd"):
        assert cpu.count(f"def {helper}(") >= 1, helper
    for unused in ("_erfinv", "_acos", "_nextafter", "_fmod", "_int_floor_div", "_trunc_div"):
        assert f"def {unused}(" not in cpu, unused
    cuda = exe.source("cuda")
    assert "libdevice.lgamma(" in cuda and "libdevice.atan2(" in cuda and "libdevice.rint(" in cuda
    assert "def _lgamma_pos(" not in cuda and "def _atan(" not in cuda


def test_cuda_source_uses_libdevice_for_every_transcendental() -> None:
    lines = [f"  %r{k} = fusion.{n} %x : tensor<?xf32>" for k, n in enumerate(FLOAT_MATH)]
    results = ", ".join(f"%r{k}" for k in range(len(FLOAT_MATH)))
    types = ", ".join(["tensor<?xf32>"] * len(FLOAT_MATH))
    text = (f"func.func @f(%x: tensor<?xf32>) -> ({types}) {{\n" + "\n".join(lines)
            + f"\n  func.return {results} : {types}\n}}\n")
    cuda = allotment.compile(text).source("cuda")
    for name in FLOAT_MATH:
        if name not in ("exp2", "log2"):  # tl.exp2, tl.log2
            assert f"libdevice.{name}(" in cuda, name


# --------------------------------------------------------------------------- #
# triu, tril                                                                  #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", ["triu", "tril"])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -7, 2**40])
def test_triangular(name: str, diagonal: int) -> None:
    x = torch.randn(2, 4, 5, generator=torch.Generator().manual_seed(diagonal % 97))
    attr = f" {{diagonal = {diagonal} : i64}}" if diagonal else ""
    text = fn1("%x: tensor<?x4x?xf32>", f"fusion.{name} %x{attr} : tensor<?x4x?xf32>", "tensor<?x4x?xf32>")
    (out,) = check(text, x)
    assert torch.equal(out, getattr(torch, name)(x, diagonal))


@pytest.mark.parametrize("ty", ["i1", "i64", "bf16"])
def test_triangular_keeps_the_type_and_fuses(ty: str) -> None:
    """In one kernel with a broadcast operand (its row dimension of extent 1) and a reduction."""
    x = torch.randint(0, 3, (6, 6), generator=torch.Generator().manual_seed(0)).to(DTYPES[ty])
    y = torch.randint(0, 3, (1, 6), generator=torch.Generator().manual_seed(1)).to(DTYPES[ty])
    acc = "f32" if ty == "bf16" else "i64"
    text = f"""func.func @f(%x: tensor<?x6x{ty}>, %y: tensor<1x6x{ty}>) -> (tensor<?x6x{ty}>, tensor<?x1x{acc}>) {{
  %u = fusion.triu %x {{diagonal = 1 : i64}} : tensor<?x6x{ty}>
  %l = fusion.tril %y {{diagonal = 2 : i64}} : tensor<1x6x{ty}>
  %m = fusion.maximum %u, %l : tensor<?x6x{ty}>, tensor<1x6x{ty}> -> tensor<?x6x{ty}>
  %s = fusion.sum %m dims [1] keepdim : tensor<?x6x{ty}> -> tensor<?x1x{acc}>
  func.return %m, %s : tensor<?x6x{ty}>, tensor<?x1x{acc}>
}}
"""
    m, _ = check(text, x, y)
    assert torch.equal(m, torch.maximum(torch.triu(x, 1), torch.tril(y, 2)))


# --------------------------------------------------------------------------- #
# The CUDA flavour, compiled for an H100/H200 without a GPU                   #
# --------------------------------------------------------------------------- #

PTR_TYPES = {"f32": "*fp32", "f64": "*fp64", "f16": "*fp16", "bf16": "*bf16", "i32": "*i32", "i64": "*i64"}


def _uniform_fusion(ty: str, lines: list[str]) -> str:
    """A fusion of x, y (tensors of ty) returning every `%rK = ...` line's result (all of type ty)."""
    tt = f"tensor<?x?x{ty}>"
    body = "\n".join(f"  %r{k} = {line.format(tt=tt)}" for k, line in enumerate(lines))
    results = ", ".join(f"%r{k}" for k in range(len(lines)))
    types = ", ".join([tt] * len(lines))
    return f"func.func @f(%x: {tt}, %y: {tt}) -> ({types}) {{\n{body}\n  func.return {results} : {types}\n}}\n"


def _compile_for_sm90(text: str, ty: str, folder: object) -> int:
    """Compiles every kernel of the fusion's CUDA program to a cubin (Triton's own pipeline and
    ptxas, target sm_90): libdevice calls and typing are checked as on the GPU."""
    import importlib.util
    import sys
    from pathlib import Path

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    path = Path(str(folder)) / f"cuda_{ty}.py"
    path.write_text(allotment.compile(text).source("cuda"))
    spec = importlib.util.spec_from_file_location(f"allot_cuda_check_{ty}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    launch.bind_kernels(vars(module), "cuda")  # JIT functions, whatever TRITON_INTERPRET says
    kernels = [f for n, f in vars(module).items() if isinstance(f, triton.runtime.jit.JITFunction) and not n.startswith("_")]
    for fn in kernels:
        names = [p.name for p in fn.params]
        constexprs = {"BLOCK_M": 16, "BLOCK_N": 16, "USE_I64": False}
        signature = {n: "constexpr" if n in constexprs else PTR_TYPES[ty] if n.endswith("_ptr") else "i32" for n in names}
        source = ASTSource(fn, signature, constexprs={(names.index(n),): v for n, v in constexprs.items()})
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32))
        assert compiled.asm["cubin"]
    return len(kernels)


CUDA_LINES = {
    "float": [f"fusion.{n} %x : {{tt}}" for n in FLOAT_MATH + ["ceil", "floor", "round", "trunc", "frac", "sign"]]
    + [f"fusion.{n} %x, %y : {{tt}}" for n in ["atan2", "nextafter", "fmod", "remainder", "floor_divide"]]
    + ["fusion.triu %x {{diagonal = 1 : i64}} : {tt}"],
    "int": [f"fusion.{n} %x, %y : {{tt}}" for n in [
        "fmod", "remainder", "floor_divide", "div", "bitwise_and", "bitwise_or", "bitwise_xor",
        "bitwise_left_shift", "bitwise_right_shift", "logical_right_shift", "gcd"]]
    + [f"fusion.{n} %x : {{tt}}" for n in ["bitwise_not", "sign", "round"]]
    + ["fusion.tril %x {{diagonal = -2 : i64}} : {tt}"],
}


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU the kernels run: ALLOT_TEST_DEVICE=cuda pytest tests/test_math_ops.py")
@pytest.mark.parametrize("ty", ["f32", "f64", "bf16", "f16", "i32", "i64"])
def test_cuda_kernels_compile_for_sm90(ty: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    if shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"):
        pytest.skip("no ptxas to compile CUDA kernels with")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # Triton's compile cache: not the user's
    lines = CUDA_LINES["int" if ty.startswith("i") else "float"]
    assert _compile_for_sm90(_uniform_fusion(ty, lines), ty, tmp_path) >= 1
