"""The backend against the reference evaluator: every fusion op and every segment kind.

Each test compiles a fusion (`allotment.compile(text)`: fusion-segment,
fusion-allocate, a generated host program and Triton kernels) and runs it on
CPU tensors through Triton's interpreter, then checks the outputs against
`allotment.reference.evaluate` on the same inputs (backend_check.check: same
dtypes and shapes, values within the tolerance of the least precise float
type in the fusion, integers exactly, inputs unmodified). The interpreter is
about a thousand times slower than a GPU: shapes stay tiny.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, fn1, interpreter_rounding_to_nearest  # noqa: E402
from xdsl.dialects.builtin import DYNAMIC_INDEX  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_runtime  # noqa: E402
from allotment.driver import runtime  # noqa: E402
from allotment.errors import AllotmentRuntimeError  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import random_inputs  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAN, INF = float("nan"), float("inf")

DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i1": torch.bool,
}
FLOATS = ["f32", "bf16", "f16", "f64"]


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, dtype: str = "f32", seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=gen(seed)).to(DTYPES[dtype])


def randint(*shape: int, dtype: str = "i32", low: int = -8, high: int = 8, seed: int = 0) -> torch.Tensor:
    return torch.randint(low, high, shape, generator=gen(seed)).to(DTYPES[dtype])


def specials(dtype: str) -> torch.Tensor:
    """A 3x4 tensor with zeros, signs, NaN and infinities."""
    values = [[-2.0, -0.5, 0.0, 0.25], [1.0, 3.0, NAN, INF], [-INF, -0.0, 0.75, -7.5]]
    return torch.tensor(values, dtype=DTYPES[dtype])


def sample(dtype: str, *shape: int, seed: int = 0) -> torch.Tensor:
    if dtype == "i1":
        return randint(*shape, low=0, high=2, seed=seed).bool()
    if dtype in ("i32", "i64"):
        return randint(*shape, dtype=dtype, seed=seed)
    return randn(*shape, dtype=dtype, seed=seed)


def load(name: str) -> str:
    return (EXAMPLES / name).read_text()


# --------------------------------------------------------------------------- #
# Unary                                                                       #
# --------------------------------------------------------------------------- #

FLOAT_UNARY = ["exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "sin", "cos", "erf", "neg", "abs", "relu"]


@pytest.mark.parametrize("name", FLOAT_UNARY)
@pytest.mark.parametrize("ty", FLOATS)
def test_float_unary(name: str, ty: str) -> None:
    tt = f"tensor<?x4x{ty}>"
    x = torch.cat([specials(ty), randn(2, 4, dtype=ty)])
    check(fn1(f"%x: {tt}", f"fusion.{name} %x : {tt}", tt), x)


@pytest.mark.parametrize("name", ["exp", "sqrt", "reciprocal", "sigmoid", "erf", "tanh"])
@pytest.mark.parametrize("ty", ["i32", "i64", "i1"])
def test_math_of_integers_and_bools_is_f32(name: str, ty: str) -> None:
    line = f"fusion.{name} %i : tensor<5x{ty}> -> tensor<5xf32>"
    check(fn1(f"%i: tensor<5x{ty}>", line, "tensor<5xf32>"), sample(ty, 5))


@pytest.mark.parametrize("name", ["neg", "abs", "relu"])
@pytest.mark.parametrize("ty", ["i32", "i64"])
def test_integer_unary_keeps_type(name: str, ty: str) -> None:
    tt = f"tensor<?x{ty}>"
    x = torch.tensor([-3, 0, 4, -(2**31) + 1, 7], dtype=DTYPES[ty])
    check(fn1(f"%x: {tt}", f"fusion.{name} %x : {tt}", tt), x)


@pytest.mark.parametrize("ty", ["f32", "bf16", "i32", "i64", "i1"])
def test_logical_not(ty: str) -> None:
    x = torch.tensor([0.0, -0.0, NAN, 2.0, -INF, 0.5, 0.0, -1.0], dtype=DTYPES[ty]) if ty in FLOATS else sample(ty, 8)
    line = f"fusion.logical_not %x : tensor<8x{ty}> -> tensor<8xi1>"
    check(fn1(f"%x: tensor<8x{ty}>", line, "tensor<8xi1>"), x)


# --------------------------------------------------------------------------- #
# Binary                                                                      #
# --------------------------------------------------------------------------- #

ARITH = ["add", "sub", "mul", "div", "pow", "maximum", "minimum"]


@pytest.mark.parametrize("name", ARITH)
@pytest.mark.parametrize("ty", FLOATS)
def test_float_binary(name: str, ty: str) -> None:
    tt = f"tensor<?x4x{ty}>"
    x = torch.cat([specials(ty), randn(2, 4, dtype=ty, seed=1)])
    y = torch.cat([specials(ty).flip(0), randn(2, 4, dtype=ty, seed=2)])
    if name == "pow":  # integer exponents of negative bases, fractional ones, 0 ** 0
        y[0] = torch.tensor([2.0, 3.0, 0.0, 0.5])
    check(fn1(f"%x: {tt}, %y: {tt}", f"fusion.{name} %x, %y : {tt}", tt), x, y)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum"])
@pytest.mark.parametrize("ty", ["i32", "i64"])
def test_integer_binary(name: str, ty: str) -> None:
    tt = f"tensor<?x{ty}>"
    x = torch.tensor([7, -7, 7, -7, 0, 5, -1, 100], dtype=DTYPES[ty])
    y = torch.tensor([2, 2, -2, -2, 3, 5, 4, -9], dtype=DTYPES[ty])  # div truncates toward zero
    check(fn1(f"%x: {tt}, %y: {tt}", f"fusion.{name} %x, %y : {tt}", tt), x, y)


@pytest.mark.parametrize("ty", ["i32", "i64"])
def test_integer_pow(ty: str) -> None:
    tt = f"tensor<?x{ty}>"
    x = torch.tensor([2, -3, 5, 0, 1, -1, 7, -2, 3], dtype=DTYPES[ty])
    y = torch.tensor([3, 3, 0, 4, 9, 5, 10, 7, 1], dtype=DTYPES[ty])
    check(fn1(f"%x: {tt}, %y: {tt}", f"fusion.pow %x, %y : {tt}", tt), x, y)


def test_integer_pow_negative_exponent() -> None:
    tt = "tensor<?xi64>"
    x = torch.tensor([2, -1, -1, 1, 3, -2], dtype=torch.int64)
    y = torch.tensor([-1, -1, -2, -3, -2, -1], dtype=torch.int64)  # torch: 0, -1, 1, 1, 0, 0
    check(fn1(f"%x: {tt}, %y: {tt}", f"fusion.pow %x, %y : {tt}", tt), x, y)


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "minimum"])
def test_bool_binary(name: str) -> None:
    tt = "tensor<4xi1>"
    x = torch.tensor([True, True, False, False])
    y = torch.tensor([True, False, True, False])
    check(fn1(f"%x: {tt}, %y: {tt}", f"fusion.{name} %x, %y : {tt}", tt), x, y)


@pytest.mark.parametrize(
    "lhs, rhs, result",
    [
        ("bf16", "f16", "f32"), ("i32", "i64", "i64"), ("i64", "f16", "f16"), ("i1", "i32", "i32"),
        ("f16", "f64", "f64"), ("bf16", "f32", "f32"), ("i32", "bf16", "bf16"),
    ],
)
@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum"])
def test_promotion(lhs: str, rhs: str, result: str, name: str) -> None:
    if name == "div" and result in ("i32", "i64"):
        y = randint(6, dtype=rhs, low=1, high=5) * (1 - 2 * (torch.arange(6) % 2)).to(DTYPES[rhs])
    else:
        y = sample(rhs, 6, seed=2)
    x = sample(lhs, 6, seed=1)
    line = f"fusion.{name} %x, %y : tensor<6x{lhs}>, tensor<6x{rhs}> -> tensor<6x{result}>"
    check(fn1(f"%x: tensor<6x{lhs}>, %y: tensor<6x{rhs}>", line, f"tensor<6x{result}>"), x, y)


_TENSOR_SCALAR = [
    ("bf16", "f32", "bf16", 0.1234567), ("f16", "f64", "f16", -1.75), ("i32", "f32", "f32", 0.5),
    ("i32", "i64", "i32", 3), ("f32", "i64", "f32", 2), ("i64", "i1", "i64", True), ("i1", "f32", "f32", 1.5),
]


@pytest.mark.parametrize(
    "tensor_ty, scalar_ty, result, value, name",
    [
        (*case, name)
        for case in _TENSOR_SCALAR
        for name in ("add", "sub", "mul", "div", "maximum")
        if not (name in ("sub", "div") and "i1" in case[:2])  # not defined on bool
    ],
)
@pytest.mark.parametrize("scalar_first", [False, True])
def test_tensor_and_scalar(tensor_ty: str, scalar_ty: str, result: str, value: object, name: str, scalar_first: bool) -> None:
    if name == "div" and result == "i32" and not scalar_first:
        x = randint(2, 3, dtype=tensor_ty)
    elif name == "div" and result in ("i32", "i64"):
        x = torch.tensor([[1, -2, 3], [-4, 5, 7]], dtype=DTYPES[tensor_ty])
    else:
        x = sample(tensor_ty, 2, 3)
    tt = f"tensor<?x3x{tensor_ty}>"
    ops, types = ("%s, %x", f"{scalar_ty}, {tt}") if scalar_first else ("%x, %s", f"{tt}, {scalar_ty}")
    line = f"fusion.{name} {ops} : {types} -> tensor<?x3x{result}>"
    check(fn1(f"%x: {tt}, %s: {scalar_ty}", line, f"tensor<?x3x{result}>"), x, value)


def test_constant_scalar_operand() -> None:
    text = """func.func @f(%x: tensor<?x3xbf16>) -> tensor<?x3xbf16> {
  %c = arith.constant 0.3 : f32
  %i = arith.constant 2 : i64
  %a = fusion.mul %x, %c : tensor<?x3xbf16>, f32 -> tensor<?x3xbf16>
  %b = fusion.add %a, %i : tensor<?x3xbf16>, i64 -> tensor<?x3xbf16>
  func.return %b : tensor<?x3xbf16>
}
"""
    check(text, randn(4, 3, dtype="bf16"))


def test_broadcast_of_static_one_dims() -> None:
    text = """func.func @f(%x: tensor<?x1x4xf32>, %y: tensor<1x3x1xf32>, %z: tensor<1x1x1xf32>) -> tensor<?x3x4xf32> {
  %a = fusion.add %x, %y : tensor<?x1x4xf32>, tensor<1x3x1xf32> -> tensor<?x3x4xf32>
  %b = fusion.mul %a, %z : tensor<?x3x4xf32>, tensor<1x1x1xf32> -> tensor<?x3x4xf32>
  func.return %b : tensor<?x3x4xf32>
}
"""
    check(text, randn(2, 1, 4), randn(1, 3, 1, seed=1), randn(1, 1, 1, seed=2))


# --------------------------------------------------------------------------- #
# Comparisons, logical ops, where                                             #
# --------------------------------------------------------------------------- #

COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", COMPARE)
@pytest.mark.parametrize("ty", ["f32", "bf16", "i32", "i1"])
def test_comparison(name: str, ty: str) -> None:
    if ty in FLOATS:
        x = specials(ty)
        y = torch.tensor([[-2.0, 0.0, -0.0, 1.0], [1.0, NAN, NAN, INF], [INF, 0.0, 0.5, -7.5]], dtype=DTYPES[ty])
    else:
        x, y = sample(ty, 3, 4, seed=1), sample(ty, 3, 4, seed=2)
    tt = f"tensor<?x4x{ty}>"
    line = f"fusion.{name} %x, %y : {tt}, {tt} -> tensor<?x4xi1>"
    check(fn1(f"%x: {tt}, %y: {tt}", line, "tensor<?x4xi1>"), x, y)


@pytest.mark.parametrize("name", COMPARE)
def test_comparison_mixed_types(name: str) -> None:
    i = torch.tensor([-2, 0, 1, 3], dtype=torch.int32)
    f = torch.tensor([-1.5, 0.0, 1.0, 3.5])
    line = f"fusion.{name} %i, %f : tensor<4xi32>, tensor<4xf32> -> tensor<4xi1>"
    check(fn1("%i: tensor<4xi32>, %f: tensor<4xf32>", line, "tensor<4xi1>"), i, f)
    line = f"fusion.{name} %i, %s : tensor<4xi32>, f32 -> tensor<4xi1>"
    check(fn1("%i: tensor<4xi32>, %s: f32", line, "tensor<4xi1>"), i, 0.5)


@pytest.mark.parametrize("name", ["logical_and", "logical_or"])
@pytest.mark.parametrize("types", [("i1", "i1"), ("f32", "f32"), ("i32", "f32"), ("i64", "i1"), ("bf16", "f16")])
def test_logical(name: str, types: tuple[str, str]) -> None:
    a, b = types
    x = torch.tensor([0, 1, 0, 2, NAN, -0.0]).to(DTYPES[a]) if a != "i1" else torch.tensor([0, 1, 0, 1, 1, 0]).bool()
    y = torch.tensor([0, 0, 3, -1, 0, 1]).to(DTYPES[b]) if b != "i1" else torch.tensor([0, 0, 1, 1, 0, 1]).bool()
    line = f"fusion.{name} %x, %y : tensor<6x{a}>, tensor<6x{b}> -> tensor<6xi1>"
    check(fn1(f"%x: tensor<6x{a}>, %y: tensor<6x{b}>", line, "tensor<6xi1>"), x, y)


def test_where_tensors() -> None:
    p = torch.tensor([[True, False, True, False]] * 3)
    x, y = randn(3, 4, seed=1), randn(1, 4, dtype="f16", seed=2)
    line = "fusion.where %p, %x, %y : tensor<?x4xi1>, tensor<?x4xf32>, tensor<1x4xf16> -> tensor<?x4xf32>"
    check(fn1("%p: tensor<?x4xi1>, %x: tensor<?x4xf32>, %y: tensor<1x4xf16>", line, "tensor<?x4xf32>"), p, x, y)


def test_where_tensor_and_scalar() -> None:
    p = randint(3, 4, low=0, high=2).bool()
    i = randint(3, 4)
    line = "fusion.where %p, %i, %s : tensor<?x4xi1>, tensor<?x4xi32>, f32 -> tensor<?x4xf32>"
    check(fn1("%p: tensor<?x4xi1>, %i: tensor<?x4xi32>, %s: f32", line, "tensor<?x4xf32>"), p, i, 0.5)


def test_where_scalars() -> None:
    p = torch.tensor([True, False, False, True])
    # two scalars give their promoted type, as nvFuser's where does (test_where_dtypes)
    line = "fusion.where %p, %a, %b : tensor<4xi1>, f64, i64 -> tensor<4xf64>"
    check(fn1("%p: tensor<4xi1>, %a: f64, %b: i64", line, "tensor<4xf64>"), p, 1.5, 7)
    line = "fusion.where %p, %a, %b : tensor<4xi1>, i32, i32 -> tensor<4xi32>"
    check(fn1("%p: tensor<4xi1>, %a: i32, %b: i32", line, "tensor<4xi32>"), p, 3, -3)


def test_where_scalar_predicate() -> None:
    line = "fusion.where %p, %x, %y : i1, tensor<1x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>"
    for p in (True, False):
        check(fn1("%p: i1, %x: tensor<1x2xf32>, %y: tensor<?x2xf32>", line, "tensor<?x2xf32>"), p, randn(1, 2), randn(3, 2, seed=1))


def test_where_of_computed_predicate_bf16() -> None:
    text = """func.func @f(%x: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %z = arith.constant 0.0 : f32
  %p = fusion.gt %x, %z : tensor<?x8xbf16>, f32 -> tensor<?x8xi1>
  %n = fusion.neg %x : tensor<?x8xbf16>
  %y = fusion.where %p, %x, %n : tensor<?x8xi1>, tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  func.return %y : tensor<?x8xbf16>
}
"""
    check(text, randn(3, 8, dtype="bf16"))


# --------------------------------------------------------------------------- #
# Cast and set                                                                #
# --------------------------------------------------------------------------- #

ALL_TYPES = ["f64", "f32", "f16", "bf16", "i64", "i32", "i1"]


def cast_input(src: str) -> torch.Tensor:
    if src in FLOATS:  # in range of every target type; fractions truncate toward zero
        return torch.tensor([-3.75, -1.0, -0.5, 0.0, 0.5, 2.5, 100.25, -0.0]).to(DTYPES[src])
    if src == "i1":
        return torch.tensor([True, False, True, True, False, False, True, False])
    return torch.tensor([-3, -1, 0, 1, 2, 100, 255, -128]).to(DTYPES[src])


@pytest.mark.parametrize("dst", ALL_TYPES)
@pytest.mark.parametrize("src", ALL_TYPES)
def test_cast(src: str, dst: str) -> None:
    line = f"fusion.cast %x : tensor<?x{src}> to tensor<?x{dst}>"
    check(fn1(f"%x: tensor<?x{src}>", line, f"tensor<?x{dst}>"), cast_input(src))


def test_cast_i64_to_i32_wraps() -> None:
    x = torch.tensor([2**31 + 5, -(2**31) - 1, 2**40 + 7], dtype=torch.int64)
    check(fn1("%x: tensor<3xi64>", "fusion.cast %x : tensor<3xi64> to tensor<3xi32>", "tensor<3xi32>"), x)


def test_cast_to_bf16_within_one_ulp() -> None:
    """Round to nearest even on a GPU; Triton's interpreter truncates (one bf16 ulp, 2^-7 relative)."""
    x = torch.tensor([1.0 + 2**-9, 1.0 + 3 * 2**-9, -(1.0 + 2**-8 + 2**-10), 3.0e38, 1e-40, 0.1])
    check(fn1("%x: tensor<6xf32>", "fusion.cast %x : tensor<6xf32> to tensor<6xbf16>", "tensor<6xbf16>"), x, tol=2**-7)


@pytest.mark.skipif(not runtime.interpreting(), reason="about Triton's interpreter")
def test_interpreter_rounding_to_nearest_is_exact() -> None:
    """The helper that tells the interpreter's bf16 truncation from real mismatches (backend_check)."""
    x = torch.cat([torch.tensor([1.0 + 2**-9, 1.0 + 3 * 2**-9, 3.0e38, 3.4e38, 1e-40, NAN, -INF]), randn(64)])
    text = fn1("%x: tensor<71xf32>", "fusion.cast %x : tensor<71xf32> to tensor<71xbf16>", "tensor<71xbf16>")
    with interpreter_rounding_to_nearest():
        check(text, x, tol=0)


def test_pow_of_constant_exponents() -> None:
    text = """func.func @f(%x: tensor<?xf32>, %i: tensor<?xi64>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64>) {
  %two = arith.constant 2.0 : f32
  %k = arith.constant 3 : i64
  %a = fusion.pow %x, %two : tensor<?xf32>, f32 -> tensor<?xf32>
  %b = fusion.pow %two, %x : f32, tensor<?xf32> -> tensor<?xf32>
  %c = fusion.pow %i, %k : tensor<?xi64>, i64 -> tensor<?xi64>
  %d = fusion.pow %k, %i : i64, tensor<?xi64> -> tensor<?xi64>
  func.return %a, %b, %c, %d : tensor<?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<?xi64>
}
"""
    check(text, torch.tensor([1.0, -2.0, 0.5, NAN, -INF]), torch.tensor([2, -3, 0, 5, -1]))


@pytest.mark.parametrize("exponent", ["1.0", "2.0", "3.0", "-2.0", "0.5", "-0.5", "-1.0", "3", "1.5"])
@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_pow_by_a_constant_follows_torch(exponent: str, ty: str) -> None:
    """torch computes x ** 2, 3, -2, 0.5, -0.5 and -1 as products, sqrt, rsqrt and a
    reciprocal, and x ** 1 is x; the generated kernel does the same (no general pow), and
    other exponents keep the general pow. Compared with torch on the same inputs, signed zeros, infinities
    and NaN included."""
    tt = f"tensor<?x{ty}>"
    scalar = "i64" if "." not in exponent else "f64"
    text = f"""func.func @f(%x: {tt}) -> {tt} {{
  %e = arith.constant {exponent} : {scalar}
  %y = fusion.pow %x, %e : {tt}, {scalar} -> {tt}
  func.return %y : {tt}
}}
"""
    dtype = torch.float32 if ty == "f32" else torch.bfloat16
    x = torch.cat([torch.tensor([0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 1e-3, INF, -INF, NAN]), randn(53) * 4]).to(dtype)
    source = allotment.compile(text).source("cuda")
    assert ("_pow(" in source) == (exponent == "1.5"), source
    got = allotment.compile(text)(x)[0]
    want = torch.pow(x, float(exponent) if scalar == "f64" else int(exponent))
    torch.testing.assert_close(got, want, rtol=1e-5 if ty == "f32" else 1e-2, atol=0, equal_nan=True)


@pytest.mark.parametrize("ty", ["f32", "bf16", "i64", "i1"])
def test_set(ty: str) -> None:
    tt = f"tensor<?x3x{ty}>"
    check(fn1(f"%x: {tt}", f"fusion.set %x : {tt} -> {tt}", tt), sample(ty, 2, 3))


# --------------------------------------------------------------------------- #
# Creation                                                                    #
# --------------------------------------------------------------------------- #


def test_full_static_and_dynamic() -> None:
    text = """func.func @f(%v: f32, %n: index) -> (tensor<2x3xf32>, tensor<?x4xbf16>, tensor<?xi32>, tensor<2xi1>, tensor<f64>) {
  %a = fusion.full %v [2, 3] : f32 -> tensor<2x3xf32>
  %b = fusion.full %v [%n, 4] : f32 -> tensor<?x4xbf16>
  %c = fusion.full %v [%n] : f32 -> tensor<?xi32>
  %d = fusion.full %v [2] : f32 -> tensor<2xi1>
  %e = fusion.full %v [] : f32 -> tensor<f64>
  func.return %a, %b, %c, %d, %e : tensor<2x3xf32>, tensor<?x4xbf16>, tensor<?xi32>, tensor<2xi1>, tensor<f64>
}
"""
    for v, n in ((2.75, 3), (-1.5, 1), (0.0, 0)):
        check(text, v, n)


def test_full_used_with_a_tensor() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.5 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %f = fusion.full %v [%n, 4] : f32 -> tensor<?x4xf32>
  %y = fusion.add %x, %f : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
"""
    check(text, randn(3, 4))


def test_full_of_other_scalar_types() -> None:
    text = """func.func @f(%h: bf16, %t: i1, %i: i32) -> (tensor<4xbf16>, tensor<2xi1>, tensor<3xi32>, tensor<3xf32>) {
  %a = fusion.full %h [4] : bf16 -> tensor<4xbf16>
  %b = fusion.full %t [2] : i1 -> tensor<2xi1>
  %c = fusion.full %i [3] : i32 -> tensor<3xi32>
  %d = fusion.full %i [3] : i32 -> tensor<3xf32>
  func.return %a, %b, %c, %d : tensor<4xbf16>, tensor<2xi1>, tensor<3xi32>, tensor<3xf32>
}
"""
    check(text, 1.5, True, -7)


def test_iota() -> None:
    text = """func.func @f(%n: index, %start: f32, %step: f32, %i: i64) -> (tensor<?xf32>, tensor<5xi64>, tensor<?xbf16>, tensor<0xi32>) {
  %a = fusion.iota [%n] start %start step %step : f32, f32 -> tensor<?xf32>
  %b = fusion.iota [5] start %i step %i : i64, i64 -> tensor<5xi64>
  %c = fusion.iota [%n] start %i step %step : i64, f32 -> tensor<?xbf16>
  %d = fusion.iota [0] start %start step %i : f32, i64 -> tensor<0xi32>
  func.return %a, %b, %c, %d : tensor<?xf32>, tensor<5xi64>, tensor<?xbf16>, tensor<0xi32>
}
"""
    check(text, 6, -1.25, 0.5, 3)
    check(text, 0, 0.0, 1.0, -2)


def test_iota_in_a_fusion() -> None:
    text = """func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i64
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %i = fusion.iota [%n] start %one step %one : i64, i64 -> tensor<?xi64>
  %y = fusion.mul %x, %i : tensor<?xf32>, tensor<?xi64> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""
    check(text, randn(7))


# --------------------------------------------------------------------------- #
# Shape ops                                                                   #
# --------------------------------------------------------------------------- #


def test_broadcast_in_dim() -> None:
    v = randn(4)
    line = "fusion.broadcast_in_dim %v [2, 4] dims [1] : tensor<4xf32> -> tensor<2x4xf32>"
    check(fn1("%v: tensor<4xf32>", line, "tensor<2x4xf32>"), v)
    line = "fusion.broadcast_in_dim %v [4, %n] dims [0] : tensor<4xf32> -> tensor<4x?xf32>"
    check(fn1("%v: tensor<4xf32>, %n: index", line, "tensor<4x?xf32>"), v, 3)
    line = "fusion.broadcast_in_dim %c [2, 3, 5] dims [0, 2] : tensor<?x1xi32> -> tensor<2x3x5xi32>"
    check(fn1("%c: tensor<?x1xi32>", line, "tensor<2x3x5xi32>"), randint(2, 1))
    line = "fusion.broadcast_in_dim %z [3, 2] dims [] : tensor<f32> -> tensor<3x2xf32>"
    check(fn1("%z: tensor<f32>", line, "tensor<3x2xf32>"), torch.tensor(7.0))


def test_broadcast_in_dim_of_a_bias_into_a_middle_dim() -> None:
    text = """func.func @f(%x: tensor<?x3x4xbf16>, %b: tensor<3xbf16>) -> tensor<?x3x4xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x4xbf16>
  %bb = fusion.broadcast_in_dim %b [%n, 3, 4] dims [1] : tensor<3xbf16> -> tensor<?x3x4xbf16>
  %y = fusion.add %x, %bb : tensor<?x3x4xbf16>
  func.return %y : tensor<?x3x4xbf16>
}
"""
    check(text, randn(2, 3, 4, dtype="bf16"), randn(3, dtype="bf16", seed=1))


def test_expand() -> None:
    line = "fusion.expand %x [%n, 2] : tensor<1x2xf32> -> tensor<?x2xf32>"
    check(fn1("%x: tensor<1x2xf32>, %n: index", line, "tensor<?x2xf32>"), randn(1, 2), 3)
    line = "fusion.expand %y [2, 5] : tensor<?x1xbf16> -> tensor<2x5xbf16>"
    check(fn1("%y: tensor<?x1xbf16>", line, "tensor<2x5xbf16>"), randn(2, 1, dtype="bf16"))


def test_expand_then_add() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>, %r: tensor<?x1xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = fusion.expand %r [%n, 4] : tensor<?x1xf32> -> tensor<?x4xf32>
  %y = fusion.sub %x, %e : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
"""
    check(text, randn(3, 4), randn(3, 1, seed=1))


def test_reshape() -> None:
    x = randn(2, 3, 4)
    check(fn1("%x: tensor<2x3x4xf32>", "fusion.reshape %x [-1, 8] : tensor<2x3x4xf32> -> tensor<3x8xf32>", "tensor<3x8xf32>"), x)
    d = randint(3, 4, dtype="i64")
    check(fn1("%d: tensor<?x4xi64>", "fusion.reshape %d [-1, 2] : tensor<?x4xi64> -> tensor<?x2xi64>", "tensor<?x2xi64>"), d)
    line = "fusion.reshape %d [%n, %m, 4] : tensor<?x4xi64> -> tensor<?x?x4xi64>"
    check(fn1("%d: tensor<?x4xi64>, %n: index, %m: index", line, "tensor<?x?x4xi64>"), randint(6, 4, dtype="i64"), 2, 3)
    check(fn1("%s: tensor<1x1xf32>", "fusion.reshape %s [] : tensor<1x1xf32> -> tensor<f32>", "tensor<f32>"), randn(1, 1))
    check(fn1("%e: tensor<?x4xf32>", "fusion.reshape %e [-1, 2] : tensor<?x4xf32> -> tensor<?x2xf32>", "tensor<?x2xf32>"), torch.zeros(0, 4))


def test_reshape_of_a_permuted_value_copies() -> None:
    text = """func.func @f(%x: tensor<?x3x4xf32>) -> (tensor<?x12xf32>, tensor<4x?xf32>) {
  %p = fusion.permute %x [0, 2, 1] : tensor<?x3x4xf32> -> tensor<?x4x3xf32>
  %r = fusion.reshape %p [-1, 12] : tensor<?x4x3xf32> -> tensor<?x12xf32>
  %q = fusion.permute %x [2, 0, 1] : tensor<?x3x4xf32> -> tensor<4x?x3xf32>
  %s = fusion.reshape %q [4, -1] : tensor<4x?x3xf32> -> tensor<4x?xf32>
  func.return %r, %s : tensor<?x12xf32>, tensor<4x?xf32>
}
"""
    check(text, randn(2, 3, 4))


def test_reshape_inside_pointwise_math() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x2x2xf32>) -> tensor<?x2x2xf32> {
  %e = fusion.exp %x : tensor<?x4xf32>
  %r = fusion.reshape %e [-1, 2, 2] : tensor<?x4xf32> -> tensor<?x2x2xf32>
  %z = fusion.add %r, %y : tensor<?x2x2xf32>
  func.return %z : tensor<?x2x2xf32>
}
"""
    check(text, randn(3, 4), randn(3, 2, 2, seed=1))


def test_permute() -> None:
    x = randn(2, 3, 4)
    check(fn1("%x: tensor<?x3x4xf32>", "fusion.permute %x [2, 0, 1] : tensor<?x3x4xf32> -> tensor<4x?x3xf32>", "tensor<4x?x3xf32>"), x)
    check(fn1("%x: tensor<?x3x4xf32>", "fusion.permute %x [0, -1, -2] : tensor<?x3x4xf32> -> tensor<?x4x3xf32>", "tensor<?x4x3xf32>"), x)


def test_permute_then_math() -> None:
    text = """func.func @f(%x: tensor<?x3xf32>, %y: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %t = fusion.permute %x [1, 0] : tensor<?x3xf32> -> tensor<3x?xf32>
  %z = fusion.mul %t, %y : tensor<3x?xf32>
  func.return %z : tensor<3x?xf32>
}
"""
    check(text, randn(5, 3), randn(3, 5, seed=1))


def test_squeeze() -> None:
    b = randint(1, 3, 1, 4, low=0, high=2).bool()
    line = "fusion.squeeze %b dims [0, 2] : tensor<1x?x1x4xi1> -> tensor<?x4xi1>"
    check(fn1("%b: tensor<1x?x1x4xi1>", line, "tensor<?x4xi1>"), b)
    line = "fusion.squeeze %b dims [-2] : tensor<1x?x1x4xi1> -> tensor<1x?x4xi1>"
    check(fn1("%b: tensor<1x?x1x4xi1>", line, "tensor<1x?x4xi1>"), b)


def test_squeeze_of_a_reduction() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x4xf32> -> tensor<?x1xf32>
  %q = fusion.squeeze %s dims [1] : tensor<?x1xf32> -> tensor<?xf32>
  %e = fusion.exp %q : tensor<?xf32>
  func.return %e : tensor<?xf32>
}
"""
    check(text, randn(3, 4))


def test_squeeze_of_a_higher_rank_value_in_a_reduction() -> None:
    """The kernel's domain (3x?) is only reached through a squeeze (random seed 1172606085)."""
    text = """func.func @f(%a: tensor<1x3x?xf32>) -> (tensor<1x1xf32>, tensor<1x3x?xf32>) {
  %e = fusion.exp %a : tensor<1x3x?xf32>
  %s = fusion.squeeze %e dims [0] : tensor<1x3x?xf32> -> tensor<3x?xf32>
  %m = fusion.max %s dims [0, 1] keepdim : tensor<3x?xf32> -> tensor<1x1xf32>
  func.return %m, %e : tensor<1x1xf32>, tensor<1x3x?xf32>
}
"""
    check(text, randn(1, 3, 2))
    check(text.replace("func.return %m, %e : tensor<1x1xf32>, tensor<1x3x?xf32>", "func.return %m, %m : tensor<1x1xf32>, tensor<1x1xf32>")
          .replace("-> (tensor<1x1xf32>, tensor<1x3x?xf32>)", "-> (tensor<1x1xf32>, tensor<1x1xf32>)"), randn(1, 3, 5))


def test_slice_with_steps_and_clamping() -> None:
    x = randn(10, 8)
    tt = "tensor<10x8xf32>"
    check(fn1(f"%x: {tt}", f"fusion.slice %x [2, 1] to [9, 8] step [3, 2] : {tt} -> tensor<3x4xf32>", "tensor<3x4xf32>"), x)
    check(fn1(f"%x: {tt}", f"fusion.slice %x [8, 5] to [100, 3] step [1, 1] : {tt} -> tensor<2x0xf32>", "tensor<2x0xf32>"), x)
    check(fn1(f"%x: {tt}", f"fusion.slice %x [20, 0] to [30, 8] step [1, 4] : {tt} -> tensor<0x2xf32>", "tensor<0x2xf32>"), x)
    check(fn1(f"%x: {tt}", f"fusion.slice %x [0, 3] to [10, 100] step [4, 3] : {tt} -> tensor<3x2xf32>", "tensor<3x2xf32>"), x)


def test_dynamic_slice() -> None:
    line = "fusion.slice %x [%n, 0] to [10, %n] step [1, 1] : tensor<10x8xf32> -> tensor<?x?xf32>"
    for n in (3, 0, 9):
        check(fn1("%x: tensor<10x8xf32>, %n: index", line, "tensor<?x?xf32>"), randn(10, 8), n)
    line = "fusion.slice %d [1, 0] to [5, 8] step [2, 1] : tensor<?x8xbf16> -> tensor<?x8xbf16>"
    check(fn1("%d: tensor<?x8xbf16>", line, "tensor<?x8xbf16>"), randn(6, 8, dtype="bf16"))
    line = "fusion.slice %x [%a] to [%b] step [%s] : tensor<?xf32> -> tensor<?xf32>"
    for a, b, s in ((1, 9, 3), (5, 100, 2), (7, 3, 1)):
        check(fn1("%x: tensor<?xf32>, %a: index, %b: index, %s: index", line, "tensor<?xf32>"), randn(10), a, b, s)


def test_slice_then_math() -> None:
    text = """func.func @f(%x: tensor<?x8xf32>) -> tensor<?x3xf32> {
  %s = fusion.slice %x [0, 1] to [100, 7] step [1, 2] : tensor<?x8xf32> -> tensor<?x3xf32>
  %e = fusion.exp %s : tensor<?x3xf32>
  func.return %e : tensor<?x3xf32>
}
"""
    check(text, randn(4, 8))


def test_pad() -> None:
    line = "fusion.pad %x low [0, 1] high [1, 2] value %v : tensor<?x4xf32>, f32 -> tensor<?x7xf32>"
    check(fn1("%x: tensor<?x4xf32>, %v: f32", line, "tensor<?x7xf32>"), randn(3, 4), -1.5)
    line = "fusion.pad %i low [3] high [0] value %v : tensor<3xi32>, f32 -> tensor<6xi32>"
    check(fn1("%i: tensor<3xi32>, %v: f32", line, "tensor<6xi32>"), randint(3), 9.8)
    line = "fusion.pad %b low [1] high [1] value %v : tensor<1xi1>, f32 -> tensor<3xi1>"
    check(fn1("%b: tensor<1xi1>, %v: f32", line, "tensor<3xi1>"), torch.tensor([True]), 0.0)
    line = "fusion.pad %x low [2, 0] high [0, 0] value %v : tensor<?x4xbf16>, f32 -> tensor<?x4xbf16>"
    check(fn1("%x: tensor<?x4xbf16>, %v: f32", line, "tensor<?x4xbf16>"), randn(0, 4, dtype="bf16"), 2.0)


def test_pad_then_math() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> tensor<?x6xf32> {
  %z = arith.constant 0.0 : f32
  %p = fusion.pad %x low [1, 1] high [0, 1] value %z : tensor<?x4xf32>, f32 -> tensor<?x6xf32>
  %e = fusion.exp %p : tensor<?x6xf32>
  func.return %e : tensor<?x6xf32>
}
"""
    check(text, randn(3, 4))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_along_each_dim(dim: int) -> None:
    shapes = {0: ("2x3x4", "?x3x4", "?x3x4"), 1: ("2x3x4", "2x?x4", "2x?x4"), 2: ("2x3x4", "2x3x?", "2x3x?")}[dim % 3]
    a_t, b_t, r_t = (f"tensor<{s}xf32>" for s in shapes)
    b_shape = [2, 3, 4]
    b_shape[dim % 3] = 5
    line = f"fusion.cat %a, %b, %a dim {dim} : {a_t}, {b_t}, {a_t} -> {r_t}"
    check(fn1(f"%a: {a_t}, %b: {b_t}", line, r_t), randn(2, 3, 4), randn(*b_shape, seed=1))


def test_cat_of_ints_with_an_empty_input() -> None:
    line = "fusion.cat %e, %a dim 0 : tensor<?x4xi32>, tensor<2x4xi32> -> tensor<?x4xi32>"
    check(fn1("%a: tensor<2x4xi32>, %e: tensor<?x4xi32>", line, "tensor<?x4xi32>"), randint(2, 4), randint(0, 4))


def test_cat_then_math() -> None:
    text = """func.func @f(%a: tensor<?x4xbf16>, %b: tensor<?x4xbf16>) -> tensor<?x8xf32> {
  %c = fusion.cat %a, %b dim 1 : tensor<?x4xbf16>, tensor<?x4xbf16> -> tensor<?x8xbf16>
  %f = fusion.cast %c : tensor<?x8xbf16> to tensor<?x8xf32>
  %s = fusion.sigmoid %f : tensor<?x8xf32>
  func.return %s : tensor<?x8xf32>
}
"""
    check(text, randn(3, 4, dtype="bf16"), randn(3, 4, dtype="bf16", seed=1))


def test_gathers_of_broadcast_computed_values() -> None:
    """The gathered operand is computed in another kernel (random seed 2971: it was merged into the cat's)."""
    text = """func.func @f(%a0: tensor<?xf16>, %a1: tensor<?x4xbf16>) -> (tensor<?xbf16>, tensor<?x6xbf16>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.5 : f32
  %v0 = fusion.cast %a0 : tensor<?xf16> to tensor<?xbf16>
  %n = tensor.dim %a1, %c0 : tensor<?x4xbf16>
  %v1 = fusion.broadcast_in_dim %v0 [%n, 4] dims [0] : tensor<?xbf16> -> tensor<?x4xbf16>
  %v2 = fusion.cat %a1, %v1 dim 1 : tensor<?x4xbf16>, tensor<?x4xbf16> -> tensor<?x8xbf16>
  %v3, %v4 = fusion.var_mean %v2 dims [1] correction 0 : tensor<?x8xbf16> -> tensor<?xbf16>, tensor<?xbf16>
  %v5 = fusion.pad %v1 low [0, 1] high [0, 1] value %z : tensor<?x4xbf16>, f32 -> tensor<?x6xbf16>
  func.return %v3, %v5 : tensor<?xbf16>, tensor<?x6xbf16>
}
"""
    check(text, randn(3, dtype="f16"), randn(3, 4, dtype="bf16", seed=1))


# --------------------------------------------------------------------------- #
# Reductions                                                                  #
# --------------------------------------------------------------------------- #

DIMS = {"inner": [2], "outer": [0], "middle": [1], "all": [0, 1, 2], "inner2": [1, 2], "outer_inner": [0, 2]}


def reduced_type(shape: list[int], dims: list[int], keepdim: bool, ty: str) -> str:
    out = [1 if d in dims else e for d, e in enumerate(shape)] if keepdim else [e for d, e in enumerate(shape) if d not in dims]
    return "tensor<" + "".join(f"{e}x" for e in out) + f"{ty}>"


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("where", sorted(DIMS))
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_reduction(name: str, where: str, keepdim: bool) -> None:
    dims = DIMS[where]
    shape = [3, 4, 5]
    res = reduced_type(shape, dims, keepdim, "f32")
    kd = " keepdim" if keepdim else ""
    line = f"fusion.{name} %x dims {dims}{kd} : tensor<3x4x5xf32> -> {res}"
    x = randn(*shape) if name != "prod" else 1 + 0.1 * randn(*shape)
    check(fn1("%x: tensor<3x4x5xf32>", line, res), x)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("where", ["inner", "outer", "middle", "all"])
@pytest.mark.parametrize("correction", [0, 1])
def test_var_mean(where: str, keepdim: bool, correction: int) -> None:
    dims = DIMS[where]
    res = reduced_type([3, 4, 5], dims, keepdim, "f32")
    kd = " keepdim" if keepdim else ""
    line = f"fusion.var_mean %x dims {dims} correction {correction}{kd} : tensor<3x4x5xf32> -> {res}, {res}"
    text = f"func.func @f(%x: tensor<3x4x5xf32>) -> ({res}, {res}) {{\n  %v, %m = {line}\n  func.return %v, %m : {res}, {res}\n}}\n"
    check(text, 3 + randn(3, 4, 5))


def test_reductions_of_dynamic_extents() -> None:
    text = """func.func @f(%x: tensor<?x?xbf16>) -> (tensor<?xbf16>, tensor<?x1xbf16>, tensor<bf16>) {
  %a = fusion.sum %x dims [0] : tensor<?x?xbf16> -> tensor<?xbf16>
  %b = fusion.max %x dims [1] keepdim : tensor<?x?xbf16> -> tensor<?x1xbf16>
  %c = fusion.mean %x dims [0, 1] : tensor<?x?xbf16> -> tensor<bf16>
  func.return %a, %b, %c : tensor<?xbf16>, tensor<?x1xbf16>, tensor<bf16>
}
"""
    for shape in ((3, 7), (1, 1), (6, 2)):
        check(text, randn(*shape, dtype="bf16"))


@pytest.mark.parametrize("ty", ["i32", "i64", "i1"])
def test_integer_and_bool_reductions(ty: str) -> None:
    text = f"""func.func @f(%x: tensor<3x4x{ty}>) -> (tensor<3xi64>, tensor<1x4xi64>, tensor<3x{ty}>, tensor<4x{ty}>, tensor<3xf32>, tensor<i64>) {{
  %s = fusion.sum %x dims [1] : tensor<3x4x{ty}> -> tensor<3xi64>
  %p = fusion.prod %x dims [0] keepdim : tensor<3x4x{ty}> -> tensor<1x4xi64>
  %mx = fusion.max %x dims [1] : tensor<3x4x{ty}> -> tensor<3x{ty}>
  %mn = fusion.min %x dims [0] : tensor<3x4x{ty}> -> tensor<4x{ty}>
  %f = fusion.sum %x dims [1] : tensor<3x4x{ty}> -> tensor<3xf32>
  %t = fusion.sum %x dims [0, 1] : tensor<3x4x{ty}> -> tensor<i64>
  func.return %s, %p, %mx, %mn, %f, %t : tensor<3xi64>, tensor<1x4xi64>, tensor<3x{ty}>, tensor<4x{ty}>, tensor<3xf32>, tensor<i64>
}}
"""
    check(text, sample(ty, 3, 4))


def test_sum_of_bf16_accumulates_in_f32() -> None:
    x = torch.full((2, 300), 1.0, dtype=torch.bfloat16)  # 300 is not representable in bf16 sums of ones done in bf16
    check(fn1("%x: tensor<?x300xbf16>", "fusion.sum %x dims [1] : tensor<?x300xbf16> -> tensor<?xbf16>", "tensor<?xbf16>"), x)
    line = "fusion.sum %x dims [1] : tensor<?x300xbf16> -> tensor<?xf32>"
    check(fn1("%x: tensor<?x300xbf16>", line, "tensor<?xf32>"), randn(2, 300, dtype="bf16"))


def test_reduction_over_no_dims() -> None:
    text = """func.func @f(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %s = fusion.sum %x dims [] : tensor<3x4xf32> -> tensor<3x4xf32>
  %v, %m = fusion.var_mean %x dims [] correction 0 : tensor<3x4xf32> -> tensor<3x4xf32>, tensor<3x4xf32>
  func.return %s, %v, %m : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
"""
    check(text, randn(3, 4))


def test_var_mean_with_correction_at_least_n() -> None:
    text = """func.func @f(%x: tensor<?x2xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %v, %m = fusion.var_mean %x dims [1] correction 3 : tensor<?x2xf32> -> tensor<?xf32>, tensor<?xf32>
  func.return %v, %m : tensor<?xf32>, tensor<?xf32>
}
"""
    check(text, torch.tensor([[1.0, 1.0], [1.0, 2.0]]))


def test_reductions_over_an_empty_dim() -> None:
    text = """func.func @f(%x: tensor<3x?xf32>) -> (tensor<3xf32>, tensor<3x1xf32>, tensor<3xf32>) {
  %s = fusion.sum %x dims [1] : tensor<3x?xf32> -> tensor<3xf32>
  %p = fusion.prod %x dims [1] keepdim : tensor<3x?xf32> -> tensor<3x1xf32>
  %m = fusion.mean %x dims [1] : tensor<3x?xf32> -> tensor<3xf32>
  func.return %s, %p, %m : tensor<3xf32>, tensor<3x1xf32>, tensor<3xf32>
}
"""
    check(text, torch.zeros(3, 0))


def test_reduction_with_no_rows() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> (tensor<?xf32>, tensor<?x4xf32>) {
  %s = fusion.max %x dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  %m = fusion.sum %x dims [1] keepdim : tensor<?x4xf32> -> tensor<?x1xf32>
  %y = fusion.sub %x, %m : tensor<?x4xf32>, tensor<?x1xf32> -> tensor<?x4xf32>
  func.return %s, %y : tensor<?xf32>, tensor<?x4xf32>
}
"""
    check(text, torch.zeros(0, 4))


# --------------------------------------------------------------------------- #
# Matmul and linear (library kernels)                                         #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "a_ty, b_ty, r_ty, a_shape, b_shape",
    [
        ("tensor<4xf32>", "tensor<4xf32>", "tensor<f32>", (4,), (4,)),
        ("tensor<4xf32>", "tensor<4x3xf32>", "tensor<3xf32>", (4,), (4, 3)),
        ("tensor<?x4xf32>", "tensor<4xf32>", "tensor<?xf32>", (2, 4), (4,)),
        ("tensor<?x4xf32>", "tensor<4x?xf32>", "tensor<?x?xf32>", (2, 4), (4, 5)),
        ("tensor<?x2x4xf32>", "tensor<?x4x3xf32>", "tensor<?x2x3xf32>", (3, 2, 4), (3, 4, 3)),
        ("tensor<?x2x4xf32>", "tensor<4x3xf32>", "tensor<?x2x3xf32>", (3, 2, 4), (4, 3)),
        ("tensor<3x8xbf16>", "tensor<8x2xbf16>", "tensor<3x2xbf16>", (3, 8), (8, 2)),
    ],
)
def test_matmul(a_ty: str, b_ty: str, r_ty: str, a_shape: tuple, b_shape: tuple) -> None:
    dt = "bf16" if "bf16" in a_ty else "f32"
    line = f"fusion.matmul %a, %b : {a_ty}, {b_ty} -> {r_ty}"
    check(fn1(f"%a: {a_ty}, %b: {b_ty}", line, r_ty), randn(*a_shape, dtype=dt), randn(*b_shape, dtype=dt, seed=1))


def test_linear() -> None:
    x, w, b = randn(2, 3, 4), randn(5, 4, seed=1), randn(5, seed=2)
    line = "fusion.linear %x, %w, %b : tensor<?x3x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<?x3x5xf32>"
    check(fn1("%x: tensor<?x3x4xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>", line, "tensor<?x3x5xf32>"), x, w, b)
    line = "fusion.linear %x, %w : tensor<?x3x4xf32>, tensor<5x4xf32> -> tensor<?x3x5xf32>"
    check(fn1("%x: tensor<?x3x4xf32>, %w: tensor<5x4xf32>", line, "tensor<?x3x5xf32>"), x, w)
    line = "fusion.linear %v, %w : tensor<4xf32>, tensor<5x4xf32> -> tensor<5xf32>"
    check(fn1("%v: tensor<4xf32>, %w: tensor<5x4xf32>", line, "tensor<5xf32>"), randn(4), w)
    line = "fusion.linear %x, %w, %b : tensor<?x3x4xf32>, tensor<4xf32>, tensor<f32> -> tensor<?x3xf32>"
    check(fn1("%x: tensor<?x3x4xf32>, %w: tensor<4xf32>, %b: tensor<f32>", line, "tensor<?x3xf32>"), x, randn(4), torch.tensor(0.5))


def test_linear_bf16_with_bias() -> None:
    x, w, b = randn(6, 8, dtype="bf16"), randn(4, 8, dtype="bf16", seed=1), randn(4, dtype="bf16", seed=2)
    line = "fusion.linear %x, %w, %b : tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16> -> tensor<?x4xbf16>"
    check(fn1("%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %b: tensor<4xbf16>", line, "tensor<?x4xbf16>"), x, w, b)


# --------------------------------------------------------------------------- #
# 0-d and empty tensors                                                       #
# --------------------------------------------------------------------------- #


def test_zero_dim_tensors() -> None:
    text = """func.func @f(%x: tensor<f32>, %y: tensor<bf16>, %s: f32) -> (tensor<f32>, tensor<bf16>, tensor<i1>) {
  %e = fusion.exp %x : tensor<f32>
  %a = fusion.add %e, %y : tensor<f32>, tensor<bf16> -> tensor<f32>
  %m = fusion.mul %y, %s : tensor<bf16>, f32 -> tensor<bf16>
  %c = fusion.lt %x, %a : tensor<f32>, tensor<f32> -> tensor<i1>
  func.return %a, %m, %c : tensor<f32>, tensor<bf16>, tensor<i1>
}
"""
    check(text, torch.tensor(0.5), torch.tensor(-1.25, dtype=torch.bfloat16), 3.0)


def test_zero_dim_inputs_in_pow_and_logic() -> None:
    """A 0-d input is loaded as a (1, 1) tile, as a Python scalar is made one: `pow` of a
    constant by a loaded 0-d step (an optimizer's bias correction, 0.9 ** step) and bitwise
    logic of loaded 0-d values run in Triton's CPU interpreter too (it failed with "ufunc
    'bitwise_and' not supported" on a 0-d value)."""
    text = """func.func @f(%step: tensor<f32>, %x: tensor<f32>, %b: tensor<i1>) -> (tensor<f32>, tensor<f32>, tensor<i1>) {
  %c = arith.constant 0.9 : f32
  %p = fusion.pow %c, %step : f32, tensor<f32> -> tensor<f32>
  %q = fusion.pow %x, %step : tensor<f32>
  %lt = fusion.lt %x, %step : tensor<f32>, tensor<f32> -> tensor<i1>
  %and = fusion.bitwise_and %lt, %b : tensor<i1>
  func.return %p, %q, %and : tensor<f32>, tensor<f32>, tensor<i1>
}
"""
    check(text, torch.tensor(3.0), torch.tensor(-2.0), torch.tensor(True))
    check(text, torch.tensor(0.5), torch.tensor(4.0), torch.tensor(False))


def test_zero_dim_reduction_and_broadcast() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> (tensor<f32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %t = fusion.sum %x dims [0, 1] : tensor<?x4xf32> -> tensor<f32>
  %b = fusion.broadcast_in_dim %t [%n, 4] dims [] : tensor<f32> -> tensor<?x4xf32>
  %y = fusion.div %x, %b : tensor<?x4xf32>
  func.return %t, %y : tensor<f32>, tensor<?x4xf32>
}
"""
    check(text, randn(3, 4) + 1)


def test_empty_tensors() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<?xf32>) {
  %a = fusion.add %x, %y : tensor<?x4xf32>
  %s = fusion.sum %a dims [0] : tensor<?x4xf32> -> tensor<4xf32>
  %m = fusion.sum %a dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  func.return %a, %s, %m : tensor<?x4xf32>, tensor<4xf32>, tensor<?xf32>
}
"""
    check(text, torch.zeros(0, 4), torch.zeros(0, 4))
    check(text, randn(2, 4), randn(2, 4, seed=1))


# --------------------------------------------------------------------------- #
# Segment kinds                                                               #
# --------------------------------------------------------------------------- #

NORMALIZATIONS = ["rmsnorm.mlir", "layernorm.mlir", "softmax.mlir", "add_rmsnorm.mlir"]
EXAMPLE_FILES = NORMALIZATIONS + ["bias_gelu.mlir"]


def example_inputs(text: str, rows: int, seed: int = 0) -> list:
    f = find_function(parse_module(text))
    shapes = {a.name_hint: [rows if e == DYNAMIC_INDEX else e for e in a.type.get_shape()] for a in f.args}
    return random_inputs(f, shapes, seed=seed)


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_examples(name: str) -> None:
    text = load(name)
    exe_before = runtime.COMPILATIONS
    for rows in (8, 1, 5):
        check(text, *example_inputs(text, rows, seed=rows))
    assert runtime.COMPILATIONS - exe_before <= 1


def test_pointwise_with_a_bias_broadcast() -> None:
    text = """func.func @f(%x: tensor<?x?x8xbf16>, %b: tensor<8xbf16>, %g: tensor<?x1x1xf32>) -> tensor<?x?x8xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x8xbf16>
  %m = tensor.dim %x, %c1 : tensor<?x?x8xbf16>
  %bb = fusion.broadcast_in_dim %b [%n, %m, 8] dims [2] : tensor<8xbf16> -> tensor<?x?x8xbf16>
  %h = fusion.add %x, %bb : tensor<?x?x8xbf16>
  %hf = fusion.cast %h : tensor<?x?x8xbf16> to tensor<?x?x8xf32>
  %s = fusion.mul %hf, %g : tensor<?x?x8xf32>, tensor<?x1x1xf32> -> tensor<?x?x8xf32>
  %t = fusion.tanh %s : tensor<?x?x8xf32>
  %y = fusion.cast %t : tensor<?x?x8xf32> to tensor<?x?x8xbf16>
  func.return %y : tensor<?x?x8xbf16>
}
"""
    check(text, randn(2, 3, 8, dtype="bf16"), randn(8, dtype="bf16", seed=1), randn(2, 1, 1, seed=2))


def transposed(rows: int, cols: int, dtype: str = "f32", seed: int = 0) -> torch.Tensor:
    """A (rows, cols) view with strides (1, rows): not contiguous."""
    t = randn(cols, rows, dtype=dtype, seed=seed).t()
    assert not t.is_contiguous()
    return t


def test_strided_inputs_pointwise() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = fusion.mul %x, %y : tensor<?x4xf32>
  %b = fusion.exp %a : tensor<?x4xf32>
  func.return %b : tensor<?x4xf32>
}
"""
    check(text, transposed(5, 4), randn(5, 4, seed=1))
    check(text, randn(10, 8, seed=2)[1::2, ::2], transposed(5, 4, seed=3))  # offset and steps
    check(text, randn(1, 4).expand(5, 4), randn(5, 4, seed=1))  # stride 0


def test_strided_inputs_reduction_and_normalization() -> None:
    check(fn1("%x: tensor<?x6xf32>", "fusion.sum %x dims [1] : tensor<?x6xf32> -> tensor<?xf32>", "tensor<?xf32>"), transposed(4, 6))
    check(fn1("%x: tensor<?x6xf32>", "fusion.max %x dims [0] : tensor<?x6xf32> -> tensor<6xf32>", "tensor<6xf32>"), transposed(4, 6))
    text = load("rmsnorm.mlir")
    check(text, transposed(6, 64, "bf16"), randn(128, dtype="bf16", seed=1)[::2])
    text = load("softmax.mlir")
    check(text, randn(3, 256, dtype="bf16")[:, 1::2])


def test_strided_input_of_a_view_segment() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> tensor<4x?xf32> {
  %t = fusion.permute %x [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  %r = fusion.reshape %t [4, -1] : tensor<4x?xf32> -> tensor<4x?xf32>
  func.return %r : tensor<4x?xf32>
}
"""
    check(text, transposed(3, 4))


@pytest.mark.parametrize("where", ["inner", "outer", "middle"])
def test_reduction_segment(where: str) -> None:
    dims = DIMS[where]
    res = reduced_type([3, 4, 5], dims, True, "f32")
    text = f"""func.func @f(%x: tensor<3x4x5xbf16>) -> {res} {{
  %xf = fusion.cast %x : tensor<3x4x5xbf16> to tensor<3x4x5xf32>
  %e = fusion.exp %xf : tensor<3x4x5xf32>
  %s = fusion.sum %e dims {dims} keepdim : tensor<3x4x5xf32> -> {res}
  %l = fusion.log %s : {res}
  func.return %l : {res}
}}
"""
    check(text, randn(3, 4, 5, dtype="bf16"))


def test_normalization_over_outer_dim() -> None:
    text = """func.func @f(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %m = fusion.max %x dims [0] keepdim : tensor<?x6xf32> -> tensor<1x6xf32>
  %z = fusion.sub %x, %m : tensor<?x6xf32>, tensor<1x6xf32> -> tensor<?x6xf32>
  %e = fusion.exp %z : tensor<?x6xf32>
  %s = fusion.sum %e dims [0] keepdim : tensor<?x6xf32> -> tensor<1x6xf32>
  %y = fusion.div %e, %s : tensor<?x6xf32>, tensor<1x6xf32> -> tensor<?x6xf32>
  func.return %y : tensor<?x6xf32>
}
"""
    check(text, randn(5, 6))


LOOPED = [
    ("rmsnorm.mlir", 64), ("layernorm.mlir", 64), ("softmax.mlir", 128), ("add_rmsnorm.mlir", 64),
]


@pytest.fixture
def looped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """Rows longer than 8 f32 (32 B: alloc-place's budget, through its environment
    override) take the looped path, in blocks of 16: returns a call counter."""
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ALLOT_ON_CHIP_ROW_BYTES", "32")
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    monkeypatch.setattr(host_runtime, "TILE", 16)
    calls: list[int] = []
    looped_blocks = host_runtime.looped_blocks

    def counting(m: int, n: int) -> tuple[int, int, int]:
        calls.append(n)
        return looped_blocks(m, n)

    monkeypatch.setattr(host_runtime, "looped_blocks", counting)
    return calls


@pytest.mark.parametrize("name, row", LOOPED)
def test_looped_normalization(name: str, row: int, looped: list[int]) -> None:
    text = load(name)
    check(text, *example_inputs(text, 3))
    assert looped and all(n == row for n in looped), looped


def test_looped_softmax_is_two_passes_with_online_rescaling(looped: list[int]) -> None:
    text = load("softmax.mlir")
    source = allotment.compile(text).source("cpu")
    assert "def k0_persistent" not in source  # alloc-place chose looped for the 128-wide row
    looped_kernel = source[source.index("def k0_looped"):source.index("def launch_k0")]
    assert looped_kernel.count("for start in range(0, n_full, BLOCK_N):") == 2  # max+sum, then the outputs
    x = randn(4, 128, dtype="bf16")
    x[1, :] = -float("inf")  # a row of -inf: NaN, as in torch
    x[2, 7] = 80.0  # a large maximum found after the first block
    check(text, x)
    assert looped


def test_looped_online_softmax_keeps_the_rows_running_max(looped: list[int]) -> None:
    """Cross-entropy rows streamed with the row's running max (one exp per element): rows
    of -inf, with +inf or NaN, with the max in the last (partial) tile or the first, the
    label's logit read once after the loop (a one-hot sum: `analysis.one_hot`), against
    the reference."""
    text = """func.func @f(%x: tensor<?x?xbf16>, %labels: tensor<?xi64>) -> tensor<?x1xf32> {
  %f = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %m = fusion.max %f dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = fusion.sub %f, %m : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %e = fusion.exp %d : tensor<?x?xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %l = fusion.log %s : tensor<?x1xf32>
  %lse = fusion.add %l, %m : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x1xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %n = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %i = fusion.iota [%n] start %z step %one : i64, i64 -> tensor<?xi64>
  %cols = fusion.broadcast_in_dim %i [%rows, %n] dims [1] : tensor<?xi64> -> tensor<?x?xi64>
  %lb = fusion.broadcast_in_dim %labels [%rows, 1] dims [0] : tensor<?xi64> -> tensor<?x1xi64>
  %hit = fusion.eq %cols, %lb : tensor<?x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %zero = arith.constant 0.0 : f32
  %w = fusion.where %hit, %f, %zero : tensor<?x?xi1>, tensor<?x?xf32>, f32 -> tensor<?x?xf32>
  %p = fusion.sum %w dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %r = fusion.sub %lse, %p : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x1xf32>
  func.return %r : tensor<?x1xf32>
}
"""
    source = allotment.compile(text).source("cpu")
    kernel = source[source.index("def k0_looped"):source.index("def launch_k0")]
    loop = kernel.index("n_full = N // BLOCK_N * BLOCK_N")
    assert kernel.count("for start in range(0, n_full, BLOCK_N):") == 1  # one pass over the row
    assert kernel.count("_exp_term(") == 4  # exp(x - max) a lane, exp(old - new max) a row; in both loops
    label = re.search(r"(ld\d+) = tl.load\((in\d+)_ptr \+ \(i0 \* in\d+_s0\), mask=mask_m, other=0\)", kernel)
    epilogue = kernel.index("tot")  # after the loops
    assert label and label.start() > epilogue and kernel.count(f"{label.group(2)}_ptr") == 2  # signature; one load
    assert " == " not in kernel[loop:epilogue].replace('== float("-inf")', "")  # no compare per element
    x = randn(7, 37, dtype="bf16")
    x[1, :] = -INF  # all -inf: NaN, as in torch
    x[2, 3] = INF  # +inf: NaN
    x[3, 5] = NAN
    x[4, 36] = 90.0  # the max in the last, partial tile
    x[5, 0] = 90.0  # in the first tile
    x[6, 20:] = -INF  # a tail of -inf after finite values
    labels = torch.tensor([0, 36, 3, 5, -100, 0, 21], dtype=torch.int64)  # -100: no logit picked
    check(text, x, labels)
    assert looped


def test_looped_reductions_with_a_partial_last_block(looped: list[int]) -> None:
    text = """func.func @f(%x: tensor<?x50xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x50xf32>) {
  %s = fusion.sum %x dims [1] : tensor<?x50xf32> -> tensor<?xf32>
  %mx = fusion.max %x dims [1] : tensor<?x50xf32> -> tensor<?xf32>
  %mn = fusion.min %x dims [1] : tensor<?x50xf32> -> tensor<?xf32>
  %v, %m = fusion.var_mean %x dims [1] correction 1 keepdim : tensor<?x50xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
  %d = fusion.sub %x, %m : tensor<?x50xf32>, tensor<?x1xf32> -> tensor<?x50xf32>
  func.return %s, %mx, %mn, %v, %m, %d : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x50xf32>
}
"""
    x = randn(3, 50)
    x[1, 37] = NAN
    check(text, x)
    assert looped


def test_looped_product_and_outer_reduction(looped: list[int]) -> None:
    text = """func.func @f(%x: tensor<?x3xf32>) -> (tensor<3xf32>, tensor<1x3xf32>) {
  %p = fusion.prod %x dims [0] : tensor<?x3xf32> -> tensor<3xf32>
  %m = fusion.mean %x dims [0] keepdim : tensor<?x3xf32> -> tensor<1x3xf32>
  func.return %p, %m : tensor<3xf32>, tensor<1x3xf32>
}
"""
    check(text, 1 + 0.01 * randn(40, 3))  # one split: the looped variant
    check(text, 1 + 0.001 * randn(600, 3))  # three splits, combined by a second kernel
    # an outer reduction streams its rows in coalesced tiles, split across CTAs (analysis.split_reduction)
    assert "k0_split_partial" in allotment.compile(text).source("cpu")


def test_reduced_value_broadcast_onto_a_reduced_dim() -> None:
    """v2[j] + x[i, j, k] with v2 a per-row statistic: row i needs row j's result, so the
    broadcast cannot stay in the reduction's kernel (random seed 1000009869: it did, silently wrong)."""
    text = """func.func @f(%x: tensor<?x?x2xf16>) -> tensor<?x?x2xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x2xf16>
  %m = tensor.dim %x, %c1 : tensor<?x?x2xf16>
  %v, %mu = fusion.var_mean %x dims [1, 2] correction 0 : tensor<?x?x2xf16> -> tensor<?xf16>, tensor<?xf16>
  %s = fusion.mul %mu, %v : tensor<?xf16>
  %b = fusion.broadcast_in_dim %s [%n, %m, 2] dims [1] : tensor<?xf16> -> tensor<?x?x2xf16>
  %y = fusion.add %b, %x : tensor<?x?x2xf16>
  func.return %y : tensor<?x?x2xf16>
}
"""
    check(text, randn(4, 4, 2, dtype="f16"))


def test_returned_broadcast_views_of_a_reduction() -> None:
    """A chain of broadcast views of a reduced value, returned (random seed 1000006813)."""
    text = """func.func @f(%a: tensor<3xf16>, %x: tensor<?x?xbf16>) -> tensor<?x?xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %m = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %r = fusion.mean %a dims [0] keepdim : tensor<3xf16> -> tensor<1xf16>
  %b = fusion.broadcast_in_dim %r [%n, %m, 1] dims [1] : tensor<1xf16> -> tensor<?x?x1xf16>
  %q = fusion.squeeze %b dims [2] : tensor<?x?x1xf16> -> tensor<?x?xf16>
  func.return %q : tensor<?x?xf16>
}
"""
    check(text, randn(3, dtype="f16"), randn(3, 2, dtype="bf16"))


def test_view_segments_return_views() -> None:
    text = """func.func @f(%x: tensor<?x4x6xf32>) -> (tensor<6x?x4xf32>, tensor<?x2x3xf32>, tensor<?x24xf32>, tensor<?x4x6xf32>) {
  %p = fusion.permute %x [2, 0, 1] : tensor<?x4x6xf32> -> tensor<6x?x4xf32>
  %s = fusion.slice %x [0, 1, 0] to [100, 4, 6] step [1, 2, 2] : tensor<?x4x6xf32> -> tensor<?x2x3xf32>
  %r = fusion.reshape %x [-1, 24] : tensor<?x4x6xf32> -> tensor<?x24xf32>
  %e = fusion.exp %x : tensor<?x4x6xf32>
  func.return %p, %s, %r, %e : tensor<6x?x4xf32>, tensor<?x2x3xf32>, tensor<?x24xf32>, tensor<?x4x6xf32>
}
"""
    check(text, randn(2, 4, 6))


def test_views_of_intermediates() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>) -> (tensor<4x?xf32>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x1x4xf32>) {
  %e = fusion.exp %x : tensor<?x4xf32>
  %t = fusion.permute %e [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  %r = fusion.reshape %e [-1] : tensor<?x4xf32> -> tensor<?xf32>
  %s = fusion.slice %e [1, 0] to [100, 4] step [1, 2] : tensor<?x4xf32> -> tensor<?x2xf32>
  %b = fusion.reshape %e [-1, 1, 4] : tensor<?x4xf32> -> tensor<?x1x4xf32>
  func.return %t, %r, %s, %b : tensor<4x?xf32>, tensor<?xf32>, tensor<?x2xf32>, tensor<?x1x4xf32>
}
"""
    check(text, randn(3, 4))


def test_library_kernels_between_pointwise_kernels() -> None:
    text = """func.func @mlp(%x: tensor<?x8xbf16>, %w1: tensor<16x8xbf16>, %b1: tensor<16xbf16>, %w2: tensor<8x16xbf16>) -> tensor<?x8xbf16> {
  %h = fusion.linear %x, %w1, %b1 : tensor<?x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16> -> tensor<?x16xbf16>
  %hf = fusion.cast %h : tensor<?x16xbf16> to tensor<?x16xf32>
  %g = fusion.tanh %hf : tensor<?x16xf32>
  %gb = fusion.cast %g : tensor<?x16xf32> to tensor<?x16xbf16>
  %y = fusion.linear %gb, %w2 : tensor<?x16xbf16>, tensor<8x16xbf16> -> tensor<?x8xbf16>
  func.return %y : tensor<?x8xbf16>
}
"""
    check(text, randn(4, 8, dtype="bf16"), randn(16, 8, dtype="bf16", seed=1), randn(16, dtype="bf16", seed=2),
          randn(8, 16, dtype="bf16", seed=3))


def test_matmul_of_computed_operands() -> None:
    text = """func.func @f(%a: tensor<?x4xf32>, %b: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %e = fusion.exp %a : tensor<?x4xf32>
  %t = fusion.permute %b [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %u = fusion.permute %t [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  %m = fusion.matmul %e, %u : tensor<?x4xf32>, tensor<4x3xf32> -> tensor<?x3xf32>
  %r = fusion.relu %m : tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
"""
    check(text, randn(2, 4), randn(4, 3, seed=1))


def test_multiple_outputs_of_one_kernel() -> None:
    text = """func.func @f(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x8xf32>) {
  %e = fusion.exp %x : tensor<?x8xf32>
  %s = fusion.sum %e dims [1] : tensor<?x8xf32> -> tensor<?xf32>
  %k = fusion.sum %e dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %y = fusion.div %e, %k : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
  func.return %e, %s, %k, %y : tensor<?x8xf32>, tensor<?xf32>, tensor<?x1xf32>, tensor<?x8xf32>
}
"""
    check(text, randn(3, 8))


def test_the_same_value_returned_twice() -> None:
    text = """func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = fusion.exp %x : tensor<?xf32>
  func.return %e, %e : tensor<?xf32>, tensor<?xf32>
}
"""
    check(text, randn(5))


def test_returning_an_input_unchanged() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = fusion.add %x, %y : tensor<?x4xf32>
  func.return %x, %a : tensor<?x4xf32>, tensor<?x4xf32>
}
"""
    check(text, randn(3, 4), randn(3, 4, seed=1))
    check(fn1("%x: tensor<?x4xf32>", "fusion.set %x : tensor<?x4xf32> -> tensor<?x4xf32>", "tensor<?x4xf32>"), transposed(3, 4))
    only = "func.func @f(%x: tensor<?x4xbf16>) -> tensor<?x4xbf16> {\n  func.return %x : tensor<?x4xbf16>\n}\n"
    check(only, randn(3, 4, dtype="bf16"))


def test_nan_propagation() -> None:
    text = """func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) {
  %mx = fusion.max %x dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  %mn = fusion.min %x dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  %s = fusion.sum %x dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  %a = fusion.maximum %x, %y : tensor<?x4xf32>
  %b = fusion.minimum %x, %y : tensor<?x4xf32>
  %c = fusion.max %x dims [0] : tensor<?x4xf32> -> tensor<4xf32>
  func.return %mx, %mn, %s, %a, %b, %c : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>
}
"""
    x = torch.tensor([[1.0, NAN, 3.0, -1.0], [NAN, NAN, NAN, NAN], [-INF, 2.0, INF, 0.0]])
    y = torch.tensor([[NAN, 0.0, 5.0, -2.0], [1.0, 2.0, 3.0, 4.0], [0.0, NAN, 0.0, NAN]])
    check(text, x, y)
    soft = load("softmax.mlir")
    x = randn(3, 128, dtype="bf16")
    x[1, 5] = NAN
    check(soft, x)


# --------------------------------------------------------------------------- #
# Compilation, caching, run-time errors                                       #
# --------------------------------------------------------------------------- #


def test_dynamic_extents_compile_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    text = load("layernorm.mlir")
    exe = allotment.compile(text)
    before = runtime.COMPILATIONS
    for rows in (2, 7, 4):
        inputs = example_inputs(text, rows, seed=rows)
        (y,) = exe(*inputs)
        assert y.shape == (rows, 64)
    assert exe.compilations == 1
    assert runtime.COMPILATIONS - before <= 1


def test_a_second_compile_loads_from_the_caches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    text = load("rmsnorm.mlir")
    inputs = example_inputs(text, 4)
    before = runtime.COMPILATIONS
    (first,) = allotment.compile(text)(*inputs)
    assert runtime.COMPILATIONS == before + 1
    assert list(tmp_path.glob("program_*.py"))
    (again,) = allotment.compile(text)(*inputs)  # in memory
    assert runtime.COMPILATIONS == before + 1
    monkeypatch.setattr(runtime, "_PROGRAMS", {})  # as a new process would: from disk
    (disk,) = allotment.compile(text)(*inputs)
    assert runtime.COMPILATIONS == before + 1
    assert torch.equal(first, again) and torch.equal(first, disk)


def test_source_holds_host_program_and_kernels() -> None:
    src = allotment.compile(load("rmsnorm.mlir")).source("cpu")
    assert "def run(" in src and "@triton.jit" in src and "torch.empty" in src
    compile(src, "<generated>", "exec")


ADD = """func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %s: f32) -> tensor<?x4xf32> {
  %c = fusion.add %a, %b : tensor<?x4xf32>
  %d = fusion.mul %c, %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  func.return %d : tensor<?x4xf32>
}
"""


@pytest.mark.parametrize(
    "inputs, names",
    [
        ((randn(3, 4).double(), randn(3, 4), 1.0), ["input a:", "torch.float64", "torch.float32"]),
        ((randn(3, 4), randn(3, 4, 1), 1.0), ["input b:", "rank 3", "2"]),
        ((randn(3, 4), randn(3, 5), 1.0), ["input b:", "dimension 1 has extent 5", "says 4"]),
        ((randn(3, 4), randn(2, 4), 1.0), ["(%a)", "(%b)", "(got 3 and 2)"]),
        ((randn(3, 4), randn(3, 4), randn(3, 4)), ["input s:", "float scalar", "Tensor"]),
        ((randn(3, 4), 2.0, 1.0), ["input b:", "expected a tensor", "float"]),
    ],
    ids=["dtype", "rank", "static-extent", "dynamic-extents", "tensor-for-scalar", "scalar-for-tensor"],
)
def test_bad_inputs(inputs: tuple, names: list[str]) -> None:
    exe = allotment.compile(ADD)
    with pytest.raises(AllotmentRuntimeError) as info:
        exe(*inputs)
    message = str(info.value)
    for n in names:
        assert n in message, message


def test_sharded_fusion_needs_a_process_group() -> None:
    """A sharded fusion compiles to one program per rank; outside torch.distributed a
    call is a RunError that says so (tests/test_distributed.py runs it on ranks)."""
    exe = allotment.compile(load("sharded_mlp.mlir"), function="column_parallel_mlp")
    x, w, b = randn(8, 64, dtype="bf16"), randn(256, 64, dtype="bf16"), randn(256, dtype="bf16")
    with pytest.raises(allotment.RunError):
        exe(x, w, b)


DYNAMIC_SOFTMAX = """
func.func @softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = fusion.sub %x, %m : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %e = fusion.exp %d : tensor<?x?xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = fusion.div %e, %s : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


def test_run_time_placement_follows_the_fits_condition(looped: list[int]) -> None:
    """A `?` row: alloc-place's `%k0_fits` (row <= 8 f32 here) picks the variant at run
    time; one compiled program serves both sides."""
    exe = allotment.compile(DYNAMIC_SOFTMAX)
    source = exe.source("cpu")
    assert "def k0_persistent" in source and "def k0_looped" in source and "if fits:" in source
    check(DYNAMIC_SOFTMAX, randn(3, 8))
    assert not looped  # 8 f32 = 32 B: on chip
    check(DYNAMIC_SOFTMAX, randn(3, 9))
    assert looped == [9]


ONE_HOT = """func.func @f(%x: tensor<{shape}x{dt}>, %labels: tensor<{lshape}x{lt}>) -> tensor<{rshape}x{rt}> {{
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant {step} : i64
  %i = fusion.iota [{n}] start %c0 step %c1 : i64, i64 -> tensor<{n}xi64>
  %cols = fusion.broadcast_in_dim %i [{dims}] dims [{d}] : tensor<{n}xi64> -> tensor<{shape}xi64>
  %hit = fusion.{cmp} {operands} : {optypes} -> tensor<{shape}xi1>
  %zero = arith.constant {zero} : {dt}
  %v = fusion.mul %x, %x : tensor<{shape}x{dt}>, tensor<{shape}x{dt}> -> tensor<{shape}x{dt}>
  %w = fusion.where %hit, {arms} : tensor<{shape}xi1>, {armtypes} -> tensor<{shape}x{dt}>
  %p = fusion.sum %w dims [{d}] keepdim : tensor<{shape}x{dt}> -> tensor<{rshape}x{rt}>
  func.return %p : tensor<{rshape}x{rt}>
}}
"""


def _one_hot(shape: tuple[int, ...], d: int, cmp: str = "eq", step: int = 1, dt: str = "f32",
             lt: str = "i64", swap: bool = False) -> str:
    s = "x".join(map(str, shape))
    lshape = "x".join(str(1 if k == d else e) for k, e in enumerate(shape))
    ft = f"tensor<{s}x{dt}>"
    arms = ("%v, %zero", f"{ft}, {dt}") if cmp == "eq" else ("%zero, %v", f"{dt}, {ft}")
    ops = ("%cols, %labels", f"tensor<{s}xi64>, tensor<{lshape}x{lt}>")
    if swap:
        ops = ("%labels, %cols", f"tensor<{lshape}x{lt}>, tensor<{s}xi64>")
    return ONE_HOT.format(shape=s, dt=dt, lshape=lshape, lt=lt, rshape=lshape, rt=dt if dt != "bf16" else "bf16",
                          step=step, n=shape[d], dims=", ".join(map(str, shape)), d=d, cmp=cmp,
                          operands=ops[0], optypes=ops[1], zero="0.0" if dt != "i32" else "0",
                          arms=arms[0], armtypes=arms[1])


@pytest.mark.parametrize("rows", ["persistent", "looped"])
@pytest.mark.parametrize("case", ["rows", "ne", "swapped", "rank3", "i32 labels", "bf16"])
def test_a_one_hot_sum_reads_the_labels_element(case: str, rows: str, request: pytest.FixtureRequest) -> None:
    """`sum(where(iota == label, v, 0))` over the row reads v at the label once per row
    (`analysis.one_hot`, `RowEmitter.pick_one_hot`) in held and streamed rows: labels in
    range, negative (-100), at N and far past it; NaN, inf and -0.0 picked; against the
    reference."""
    if rows == "looped":
        request.getfixturevalue("looped")
    shape, d = ((3, 4, 37), 2) if case == "rank3" else ((6, 37), 1)
    text = _one_hot(shape, d, cmp="ne" if case == "ne" else "eq", swap=case == "swapped",
                    lt="i32" if case == "i32 labels" else "i64", dt="bf16" if case == "bf16" else "f32")
    source = allotment.compile(text).source("cpu")
    kernel = source[source.index("def k0_"):source.index("def launch_k0")]
    assert "col" in kernel and " == " not in kernel.replace("BLOCK_M == 1", "")
    x = randn(*shape, dtype="bf16" if case == "bf16" else "f32")
    flat = x.reshape(-1, shape[-1])
    flat[0, 5], flat[1, 36], flat[2, 0] = float("nan"), float("inf"), -0.0
    picks = [5, 36, 0, -100, 37, 2**40 if case != "i32 labels" else 2**30]
    labels = torch.tensor((picks * 2)[: flat.shape[0]], dtype=torch.int32 if case == "i32 labels" else torch.int64)
    check(text, x, labels.reshape(*shape[:-1], 1))


@pytest.mark.parametrize("step", [2])
def test_an_iota_that_is_not_the_column_index_is_summed(step: int) -> None:
    """iota with step 2 is not j at column j: the sum compares every column (no pick)."""
    text = _one_hot((6, 37), 1, step=step)
    source = allotment.compile(text).source("cpu")
    assert "col" not in source.split("def launch_k0")[0]
    x = randn(6, 37)
    check(text, x, torch.tensor([0, 2, 36, 72, -4, 1], dtype=torch.int64).reshape(6, 1))


LOG_SOFTMAX = """func.func @f(%x: tensor<5x300xf32>) -> tensor<5x300xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<5x300xf32> -> tensor<5x1xf32>
  %d = fusion.sub %x, %m : tensor<5x300xf32>, tensor<5x1xf32> -> tensor<5x300xf32>
  %e = fusion.exp %d : tensor<5x300xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<5x300xf32> -> tensor<5x1xf32>
  %l = fusion.log %s : tensor<5x1xf32>
  %r = fusion.sub %d, %l : tensor<5x300xf32>, tensor<5x1xf32> -> tensor<5x300xf32>
  func.return %r : tensor<5x300xf32>
}
"""


def test_softmax_terms_only_feeding_their_sum_use_the_term_exp() -> None:
    """exp(x - max) summed and used nowhere else (log-softmax) is `_exp_term` (on CUDA,
    ex2.approx.ftz: `row_passes.softmax_terms`); softmax stores its exps, which keep
    `tl.exp` (a denormal output stays a denormal). Both against the reference."""
    source = allotment.compile(LOG_SOFTMAX).source("cuda")
    kernels = source[source.index("def k0_"):]
    assert "_exp_term(t" in kernels and "tl.exp(" not in kernels and "ex2.approx.ftz.f32" in source
    x = randn(5, 300)
    x[1, 7] = -200.0  # its term underflows to 0 beside the row's 1
    check(LOG_SOFTMAX, x)
    softmax = load("softmax.mlir")
    kernels = allotment.compile(softmax).source("cuda")
    assert "tl.exp(" in kernels and "_exp_term(t" not in kernels
