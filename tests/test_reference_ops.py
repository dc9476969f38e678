"""The reference evaluator's semantics of every fusion op, against hand-written torch."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from xdsl.dialects.builtin import TensorType  # noqa: E402

from allotment.dialects import fusion_rules as rules  # noqa: E402
from allotment.dialects.fusion import slice_extent  # noqa: E402
from allotment.ir import find_function, load_module, parse_module  # noqa: E402
from allotment.reference import DEFAULT_SCALARS, EvaluationError, evaluate, random_inputs, torch_dtype  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

NAN = float("nan")


def run(src: str, *inputs: object, func: str | None = None) -> list[torch.Tensor]:
    return evaluate(find_function(parse_module(src), func), list(inputs))


def op1(args: str, line: str, result: str, *inputs: object) -> torch.Tensor:
    """Evaluates `%res = <line>` in a function of `args` returning `%res : result`."""
    src = f"func.func @f({args}) -> {result} {{\n  %res = {line}\n  func.return %res : {result}\n}}"
    (out,) = run(src, *inputs)
    return out


def same(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Equal dtype, shape and values (NaN equal to NaN)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)


def t(values: object, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype)


# --------------------------------------------------------------------------- #
# Unary                                                                       #
# --------------------------------------------------------------------------- #

FLOAT_UNARY = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "sin": torch.sin, "cos": torch.cos, "erf": torch.erf,
    "neg": torch.neg, "abs": torch.abs, "relu": torch.relu,
}
FLOAT_TYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@pytest.mark.parametrize("ty", ["f32", "bf16", "f16"])
def test_float_unary(name: str, ty: str) -> None:
    x = t([[-2.0, -0.5, 0.0, 0.25], [1.0, 3.0, NAN, float("inf")]], FLOAT_TYPES[ty])
    tt = f"tensor<?x4x{ty}>"
    out = op1(f"%x: {tt}", f"fusion.{name} %x : {tt}", tt, x)
    same(out, FLOAT_UNARY[name](x))


@pytest.mark.parametrize("name", ["exp", "sqrt", "reciprocal", "sigmoid", "erf"])
def test_math_of_integers_and_bools_is_f32(name: str) -> None:
    i = t([-3, 0, 4], torch.int32)
    out = op1("%i: tensor<3xi32>", f"fusion.{name} %i : tensor<3xi32> -> tensor<3xf32>", "tensor<3xf32>", i)
    same(out, FLOAT_UNARY[name](i.float()))
    b = t([True, False, True], torch.bool)
    out = op1("%b: tensor<3xi1>", f"fusion.{name} %b : tensor<3xi1> -> tensor<3xf32>", "tensor<3xf32>", b)
    same(out, FLOAT_UNARY[name](b.float()))


@pytest.mark.parametrize("name", ["neg", "abs", "relu"])
def test_integer_unary_keeps_type(name: str) -> None:
    i = t([-3, 0, 4, -(2**31)], torch.int32)
    out = op1("%i: tensor<4xi32>", f"fusion.{name} %i : tensor<4xi32>", "tensor<4xi32>", i)
    same(out, FLOAT_UNARY[name](i))


def test_logical_not_of_every_type() -> None:
    x = t([0.0, -0.0, NAN, 2.0])
    out = op1("%x: tensor<4xf32>", "fusion.logical_not %x : tensor<4xf32> -> tensor<4xi1>", "tensor<4xi1>", x)
    same(out, t([True, True, False, False], torch.bool))
    i = t([0, 5, -1], torch.int64)
    out = op1("%i: tensor<3xi64>", "fusion.logical_not %i : tensor<3xi64> -> tensor<3xi1>", "tensor<3xi1>", i)
    same(out, t([True, False, False], torch.bool))
    b = t([True, False], torch.bool)
    out = op1("%b: tensor<2xi1>", "fusion.logical_not %b : tensor<2xi1>", "tensor<2xi1>", b)
    same(out, t([False, True], torch.bool))


# --------------------------------------------------------------------------- #
# Binary arithmetic and promotion                                             #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "name, fn",
    [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div), ("pow", torch.pow),
     ("maximum", torch.maximum), ("minimum", torch.minimum)],
)
@pytest.mark.parametrize("ty", ["f32", "bf16", "f16", "f64"])
def test_float_binary(name: str, fn, ty: str) -> None:
    dt = FLOAT_TYPES[ty]
    x = t([[1.5, -2.0, 0.0], [3.0, NAN, 0.5]], dt)
    y = t([[0.5, 4.0, -1.0], [-0.0, 1.0, 2.0]], dt)
    tt = f"tensor<?x3x{ty}>"
    out = op1(f"%x: {tt}, %y: {tt}", f"fusion.{name} %x, %y : {tt}", tt, x, y)
    same(out, fn(x, y))


def test_bf16_tensor_with_f32_scalar_uses_the_wrapped_number_rule() -> None:
    x = torch.randn(64, generator=torch.Generator().manual_seed(1)).bfloat16()
    out = op1(
        "%x: tensor<64xbf16>, %s: f32", "fusion.mul %x, %s : tensor<64xbf16>, f32 -> tensor<64xbf16>",
        "tensor<64xbf16>", x, 0.1234567,
    )
    s = torch.tensor(0.1234567, dtype=torch.float32).item()  # the f32 scalar's value
    same(out, x * s)  # computed in f32, rounded once: not x * bf16(s)
    same(out, (x.float() * s).bfloat16())


@pytest.mark.parametrize(
    "lhs, rhs, result, expected_dtype",
    [
        ("tensor<4xbf16>", "tensor<4xf16>", "tensor<4xf32>", torch.float32),
        ("tensor<4xi32>", "tensor<4xi64>", "tensor<4xi64>", torch.int64),
        ("tensor<4xi64>", "tensor<4xf16>", "tensor<4xf16>", torch.float16),
        ("tensor<4xi1>", "tensor<4xi32>", "tensor<4xi32>", torch.int32),
        ("tensor<4xf16>", "tensor<4xf64>", "tensor<4xf64>", torch.float64),
        ("tensor<4xi32>", "f32", "tensor<4xf32>", torch.float32),
        ("tensor<4xi32>", "f64", "tensor<4xf32>", torch.float32),
        ("tensor<4xi32>", "i64", "tensor<4xi32>", torch.int32),
        ("tensor<4xi1>", "i32", "tensor<4xi64>", torch.int64),
        ("tensor<4xf16>", "f64", "tensor<4xf16>", torch.float16),
        ("index", "tensor<4xi1>", "tensor<4xi64>", torch.int64),
    ],
)
def test_add_promotion(lhs: str, rhs: str, result: str, expected_dtype: torch.dtype) -> None:
    def value(ty: str) -> object:
        if not ty.startswith("tensor"):
            return {"f32": 2.5, "f64": 2.5, "i64": 3, "i32": 3, "index": 3}[ty]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64,
                 "i64": torch.int64, "i32": torch.int32, "i1": torch.bool}[ty[len("tensor<4x"):-1]]
        return t([1, 0, 1, 1], torch.int64).to(dtype)

    a, b = value(lhs), value(rhs)
    out = op1(f"%a: {lhs}, %b: {rhs}", f"fusion.add %a, %b : {lhs}, {rhs} -> {result}", result, a, b)
    assert out.dtype == expected_dtype
    same(out, torch.add(a, b))


def test_bool_add_is_or_and_mul_is_and() -> None:
    a, b = t([True, True, False, False], torch.bool), t([True, False, True, False], torch.bool)
    tt = "tensor<4xi1>"
    same(op1(f"%a: {tt}, %b: {tt}", f"fusion.add %a, %b : {tt}", tt, a, b), a | b)
    same(op1(f"%a: {tt}, %b: {tt}", f"fusion.mul %a, %b : {tt}", tt, a, b), a & b)


def test_integer_div_truncates_toward_zero() -> None:
    a = t([-7, 7, -7, 7, -8, 5, 0, -1], torch.int32)
    b = t([2, 2, -2, -2, 3, -3, 4, 3], torch.int32)
    tt = "tensor<8xi32>"
    out = op1(f"%a: {tt}, %b: {tt}", f"fusion.div %a, %b : {tt}", tt, a, b)
    same(out, t([-3, 3, 3, -3, -2, -1, 0, 0], torch.int32))


def test_integer_div_by_scalar_and_of_scalar() -> None:
    a = t([-9, 9, 4], torch.int64)
    out = op1("%a: tensor<3xi64>, %s: i64", "fusion.div %a, %s : tensor<3xi64>, i64 -> tensor<3xi64>", "tensor<3xi64>", a, -2)
    same(out, t([4, -4, -2], torch.int64))
    out = op1("%a: tensor<3xi64>, %s: i64", "fusion.div %s, %a : i64, tensor<3xi64> -> tensor<3xi64>", "tensor<3xi64>", a, -20)
    same(out, t([2, -2, -5], torch.int64))


def test_integer_tensor_divided_by_float_scalar_is_true_division() -> None:
    a = t([-7, 7], torch.int32)
    out = op1("%a: tensor<2xi32>, %s: f32", "fusion.div %a, %s : tensor<2xi32>, f32 -> tensor<2xf32>", "tensor<2xf32>", a, 2.0)
    same(out, t([-3.5, 3.5]))


def test_integer_pow_including_negative_exponents() -> None:
    a = t([2, -3, 1, -1, 2, 0], torch.int64)
    b = t([3, 3, -4, -3, -1, 0], torch.int64)
    tt = "tensor<6xi64>"
    same(op1(f"%a: {tt}, %b: {tt}", f"fusion.pow %a, %b : {tt}", tt, a, b), t([8, -27, 1, -1, 0, 1], torch.int64))
    # a negative scalar exponent follows the same rule (torch itself refuses it)
    out = op1(f"%a: {tt}, %s: i64", f"fusion.pow %a, %s : {tt}, i64 -> {tt}", tt, a, -1)
    same(out, t([0, 0, 1, -1, 0, 0], torch.int64))


def test_scalar_on_the_left() -> None:
    x = t([1.0, 2.0, 4.0])
    tt = "tensor<3xf32>"
    same(op1(f"%x: {tt}, %s: f32", f"fusion.sub %s, %x : f32, {tt} -> {tt}", tt, x, 10.0), 10.0 - x)
    same(op1(f"%x: {tt}, %s: f32", f"fusion.div %s, %x : f32, {tt} -> {tt}", tt, x, 1.0), 1.0 / x)
    same(op1(f"%x: {tt}, %s: f32", f"fusion.pow %s, %x : f32, {tt} -> {tt}", tt, x, 2.0), 2.0**x)


def test_maximum_minimum_propagate_nan_and_accept_scalars() -> None:
    x = t([1.0, NAN, -3.0])
    tt = "tensor<3xf32>"
    same(op1(f"%x: {tt}, %s: f32", f"fusion.maximum %x, %s : {tt}, f32 -> {tt}", tt, x, 0.0), t([1.0, NAN, 0.0]))
    same(op1(f"%x: {tt}, %s: f32", f"fusion.minimum %s, %x : f32, {tt} -> {tt}", tt, x, 0.0), t([0.0, NAN, -3.0]))
    same(op1(f"%x: {tt}, %s: f32", f"fusion.maximum %x, %s : {tt}, f32 -> {tt}", tt, x, NAN), t([NAN, NAN, NAN]))
    b = t([True, False], torch.bool)
    same(op1("%b: tensor<2xi1>", "fusion.maximum %b, %b : tensor<2xi1>", "tensor<2xi1>", b), b)


def test_static_size_one_dimensions_broadcast() -> None:
    x = torch.arange(12.0).reshape(3, 4)
    row, col = t([[1.0, 2.0, 3.0, 4.0]]), t([[10.0], [20.0], [30.0]])
    out = op1(
        "%x: tensor<?x4xf32>, %r: tensor<1x4xf32>", "fusion.add %x, %r : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>",
        "tensor<?x4xf32>", x, row,
    )
    same(out, x + row)
    out = op1(
        "%r: tensor<1x4xf32>, %c: tensor<?x1xf32>", "fusion.mul %r, %c : tensor<1x4xf32>, tensor<?x1xf32> -> tensor<?x4xf32>",
        "tensor<?x4xf32>", row, col,
    )
    same(out, row * col)


def test_zero_dimensional_tensors() -> None:
    a, b = t(2.0), t(3.5)
    same(op1("%a: tensor<f32>, %b: tensor<f32>", "fusion.mul %a, %b : tensor<f32>", "tensor<f32>", a, b), t(7.0))
    same(op1("%a: tensor<f32>, %s: f32", "fusion.add %a, %s : tensor<f32>, f32 -> tensor<f32>", "tensor<f32>", a, 1.0), t(3.0))


def test_empty_tensors() -> None:
    x = torch.zeros(0, 4)
    out = op1("%x: tensor<?x4xf32>", "fusion.exp %x : tensor<?x4xf32>", "tensor<?x4xf32>", x)
    same(out, torch.ones(0, 4))


# --------------------------------------------------------------------------- #
# Predicates and where                                                        #
# --------------------------------------------------------------------------- #

COMPARE = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(name: str) -> None:
    x, y = t([1.0, NAN, 2.0, -1.0]), t([1.0, 1.0, 3.0, -2.0])
    tt = "tensor<4xf32>"
    same(op1(f"%x: {tt}, %y: {tt}", f"fusion.{name} %x, %y : {tt}, {tt} -> tensor<4xi1>", "tensor<4xi1>", x, y), COMPARE[name](x, y))


def test_integer_compared_with_float_scalar_in_float() -> None:
    i = t([1, 2], torch.int32)
    out = op1("%i: tensor<2xi32>, %s: f32", "fusion.lt %i, %s : tensor<2xi32>, f32 -> tensor<2xi1>", "tensor<2xi1>", i, 1.5)
    same(out, t([True, False], torch.bool))


def test_comparison_converts_the_scalar_to_the_promoted_type() -> None:
    h = t([0.1], torch.float16)  # 0.0999755859375
    out = op1("%h: tensor<1xf16>, %s: f32", "fusion.eq %h, %s : tensor<1xf16>, f32 -> tensor<1xi1>", "tensor<1xi1>", h, 0.1)
    same(out, t([True], torch.bool))


def test_logical_and_or_on_mixed_types() -> None:
    b = t([True, True, False, False], torch.bool)
    x = t([0.0, 2.0, NAN, 0.0])
    tt = "tensor<4xi1>, tensor<4xf32> -> tensor<4xi1>"
    same(op1("%b: tensor<4xi1>, %x: tensor<4xf32>", f"fusion.logical_and %b, %x : {tt}", "tensor<4xi1>", b, x), t([False, True, False, False], torch.bool))
    same(op1("%b: tensor<4xi1>, %x: tensor<4xf32>", f"fusion.logical_or %b, %x : {tt}", "tensor<4xi1>", b, x), t([True, True, True, False], torch.bool))


def test_where_tensors_and_scalars() -> None:
    p = t([[True, False, True, False]], torch.bool).expand(2, 4).contiguous()
    x = torch.arange(8.0).reshape(2, 4)
    y = t([[-1.0, -2.0, -3.0, -4.0]], torch.float16)
    out = op1(
        "%p: tensor<?x4xi1>, %x: tensor<?x4xf32>, %y: tensor<1x4xf16>",
        "fusion.where %p, %x, %y : tensor<?x4xi1>, tensor<?x4xf32>, tensor<1x4xf16> -> tensor<?x4xf32>",
        "tensor<?x4xf32>", p, x, y,
    )
    same(out, torch.where(p, x, y.float()))
    i = t([[1, 2, 3, 4], [5, 6, 7, 8]], torch.int32)
    out = op1(
        "%p: tensor<?x4xi1>, %i: tensor<?x4xi32>, %s: f32",
        "fusion.where %p, %i, %s : tensor<?x4xi1>, tensor<?x4xi32>, f32 -> tensor<?x4xf32>", "tensor<?x4xf32>", p, i, 0.5,
    )
    same(out, torch.where(p, i.float(), 0.5))


def test_where_with_two_scalars_gives_their_promoted_type() -> None:
    # as nvFuser's where of two scalars (its test_where_dtypes): Double with Int is Double,
    # two Int32 scalars Int32
    p = t([True, False], torch.bool)
    out = op1("%p: tensor<2xi1>, %a: f64, %b: i64", "fusion.where %p, %a, %b : tensor<2xi1>, f64, i64 -> tensor<2xf64>", "tensor<2xf64>", p, 1.5, 7)
    same(out, t([1.5, 7.0], torch.float64))
    out = op1("%p: tensor<2xi1>, %a: i32, %b: i32", "fusion.where %p, %a, %b : tensor<2xi1>, i32, i32 -> tensor<2xi32>", "tensor<2xi32>", p, 3, -3)
    same(out, t([3, -3], torch.int32))


def test_where_with_a_scalar_predicate() -> None:
    x, y = t([[1.0, 2.0]]), t([[3.0, 4.0], [5.0, 6.0]])
    sig = "%p: i1, %x: tensor<1x2xf32>, %y: tensor<?x2xf32>"
    line = "fusion.where %p, %x, %y : i1, tensor<1x2xf32>, tensor<?x2xf32> -> tensor<?x2xf32>"
    same(op1(sig, line, "tensor<?x2xf32>", True, x, y), x.expand(2, 2))
    same(op1(sig, line, "tensor<?x2xf32>", False, x, y), y)


# --------------------------------------------------------------------------- #
# Cast and set                                                                #
# --------------------------------------------------------------------------- #


def test_cast_float_to_int_truncates() -> None:
    x = t([-2.7, -0.5, 0.5, 2.7, 100.0])
    out = op1("%x: tensor<5xf32>", "fusion.cast %x : tensor<5xf32> to tensor<5xi32>", "tensor<5xi32>", x)
    same(out, t([-2, 0, 0, 2, 100], torch.int32))


def test_cast_to_bool_is_nonzero() -> None:
    x = t([0.0, -0.0, NAN, 0.1, -3.0])
    out = op1("%x: tensor<5xf32>", "fusion.cast %x : tensor<5xf32> to tensor<5xi1>", "tensor<5xi1>", x)
    same(out, t([False, False, True, True, True], torch.bool))
    i = t([0, 2, -1], torch.int64)
    same(op1("%i: tensor<3xi64>", "fusion.cast %i : tensor<3xi64> to tensor<3xi1>", "tensor<3xi1>", i), t([False, True, True], torch.bool))


def test_cast_between_other_types() -> None:
    b = t([True, False], torch.bool)
    same(op1("%b: tensor<2xi1>", "fusion.cast %b : tensor<2xi1> to tensor<2xf32>", "tensor<2xf32>", b), t([1.0, 0.0]))
    i = t([2**31 + 5, -1], torch.int64)
    same(op1("%i: tensor<2xi64>", "fusion.cast %i : tensor<2xi64> to tensor<2xi32>", "tensor<2xi32>", i), t([-(2**31) + 5, -1], torch.int32))
    x = t([1.0 + 2**-10, 3.0])
    same(op1("%x: tensor<2xf32>", "fusion.cast %x : tensor<2xf32> to tensor<2xbf16>", "tensor<2xbf16>", x), x.bfloat16())


def test_set_is_a_copy_with_a_sharding() -> None:
    src = """
    fusion.mesh @tp shape 2 devices [0, 1]
    func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32, #fusion.sharding<@tp, [[0], []]>> {
      %s = fusion.set %x : tensor<?x4xf32> -> tensor<?x4xf32, #fusion.sharding<@tp, [[0], []]>>
      func.return %s : tensor<?x4xf32, #fusion.sharding<@tp, [[0], []]>>
    }"""
    x = torch.randn(4, 4)
    (out,) = run(src, x)
    same(out, x)
    assert out.data_ptr() != x.data_ptr()


# --------------------------------------------------------------------------- #
# Creation                                                                    #
# --------------------------------------------------------------------------- #


def test_full_static_and_dynamic_sizes() -> None:
    src = """
    func.func @f(%v: f32, %n: index) -> (tensor<2x3xf32>, tensor<?x4xbf16>, tensor<?xi32>, tensor<2xi1>, tensor<f64>) {
      %a = fusion.full %v [2, 3] : f32 -> tensor<2x3xf32>
      %b = fusion.full %v [%n, 4] : f32 -> tensor<?x4xbf16>
      %c = fusion.full %v [%n] : f32 -> tensor<?xi32>
      %d = fusion.full %v [2] : f32 -> tensor<2xi1>
      %e = fusion.full %v [] : f32 -> tensor<f64>
      func.return %a, %b, %c, %d, %e : tensor<2x3xf32>, tensor<?x4xbf16>, tensor<?xi32>, tensor<2xi1>, tensor<f64>
    }"""
    a, b, c, d, e = run(src, -2.7, 3)
    same(a, torch.full((2, 3), -2.7))
    same(b, torch.full((3, 4), -2.7, dtype=torch.bfloat16))
    same(c, torch.full((3,), -2, dtype=torch.int32))  # truncated toward zero
    same(d, torch.full((2,), True))
    same(e, torch.tensor(torch.tensor(-2.7).item(), dtype=torch.float64))  # the f32 value, widened
    (z,) = run("func.func @f(%v: i1) -> tensor<0xi1> {\n %z = fusion.full %v [0] : i1 -> tensor<0xi1>\n func.return %z : tensor<0xi1>\n}", False)
    same(z, torch.zeros(0, dtype=torch.bool))


def test_iota() -> None:
    src = """
    func.func @f(%n: index, %start: f32, %step: f32, %i: i64) -> (tensor<?xf32>, tensor<5xi64>, tensor<?xbf16>, tensor<0xi32>) {
      %a = fusion.iota [%n] start %start step %step : f32, f32 -> tensor<?xf32>
      %b = fusion.iota [5] start %i step %i : i64, i64 -> tensor<5xi64>
      %c = fusion.iota [%n] start %i step %step : i64, f32 -> tensor<?xbf16>
      %d = fusion.iota [0] start %start step %i : f32, i64 -> tensor<0xi32>
      func.return %a, %b, %c, %d : tensor<?xf32>, tensor<5xi64>, tensor<?xbf16>, tensor<0xi32>
    }"""
    a, b, c, d = run(src, 4, 1.5, -0.5, -3)
    same(a, t([1.5, 1.0, 0.5, 0.0]))
    same(b, t([-3, -6, -9, -12, -15], torch.int64))
    same(c, t([-3.0, -3.5, -4.0, -4.5], torch.bfloat16))
    same(d, torch.zeros(0, dtype=torch.int32))


def test_iota_with_float_start_to_integer_truncates() -> None:
    out = op1("%s: f32", "fusion.iota [3] start %s step %s : f32, f32 -> tensor<3xi64>", "tensor<3xi64>", -1.9)
    same(out, t([-1, -2, -3], torch.int64))


# --------------------------------------------------------------------------- #
# Shape ops                                                                   #
# --------------------------------------------------------------------------- #


def test_broadcast_in_dim() -> None:
    v = t([1.0, 2.0, 3.0, 4.0])
    same(op1("%v: tensor<4xf32>", "fusion.broadcast_in_dim %v [2, 4] dims [1] : tensor<4xf32> -> tensor<2x4xf32>", "tensor<2x4xf32>", v), v.expand(2, 4))
    out = op1(
        "%v: tensor<4xf32>, %n: index", "fusion.broadcast_in_dim %v [4, %n] dims [0] : tensor<4xf32> -> tensor<4x?xf32>",
        "tensor<4x?xf32>", v, 3,
    )
    same(out, v[:, None].expand(4, 3))
    c = t([[1], [2]], torch.int32)
    out = op1(
        "%c: tensor<?x1xi32>", "fusion.broadcast_in_dim %c [2, 3, 5] dims [0, 2] : tensor<?x1xi32> -> tensor<2x3x5xi32>",
        "tensor<2x3x5xi32>", c,
    )
    same(out, c[:, None, :].expand(2, 3, 5))
    z = t(7.0)
    same(op1("%z: tensor<f32>", "fusion.broadcast_in_dim %z [3, 2] dims [] : tensor<f32> -> tensor<3x2xf32>", "tensor<3x2xf32>", z), torch.full((3, 2), 7.0))


def test_expand() -> None:
    x = t([[1.0, 2.0]])
    same(op1("%x: tensor<1x2xf32>, %n: index", "fusion.expand %x [%n, 2] : tensor<1x2xf32> -> tensor<?x2xf32>", "tensor<?x2xf32>", x, 3), x.expand(3, 2))
    y = t([[1.0], [2.0]], torch.bfloat16)
    same(op1("%y: tensor<?x1xbf16>", "fusion.expand %y [2, 5] : tensor<?x1xbf16> -> tensor<2x5xbf16>", "tensor<2x5xbf16>", y), y.expand(2, 5))


def test_reshape() -> None:
    x = torch.arange(24.0).reshape(2, 3, 4)
    same(op1("%x: tensor<2x3x4xf32>", "fusion.reshape %x [-1, 8] : tensor<2x3x4xf32> -> tensor<3x8xf32>", "tensor<3x8xf32>", x), x.reshape(3, 8))
    d = torch.arange(12, dtype=torch.int64).reshape(3, 4)
    same(op1("%d: tensor<?x4xi64>", "fusion.reshape %d [-1, 2] : tensor<?x4xi64> -> tensor<?x2xi64>", "tensor<?x2xi64>", d), d.reshape(6, 2))
    out = op1(
        "%d: tensor<?x4xi64>, %n: index, %m: index", "fusion.reshape %d [%n, %m, 4] : tensor<?x4xi64> -> tensor<?x?x4xi64>",
        "tensor<?x?x4xi64>", d, 1, 3,
    )
    same(out, d.reshape(1, 3, 4))
    s = t([[5.0]])
    same(op1("%s: tensor<1x1xf32>", "fusion.reshape %s [] : tensor<1x1xf32> -> tensor<f32>", "tensor<f32>", s), t(5.0))
    e = torch.zeros(0, 4)
    same(op1("%e: tensor<?x4xf32>", "fusion.reshape %e [-1, 2] : tensor<?x4xf32> -> tensor<?x2xf32>", "tensor<?x2xf32>", e), torch.zeros(0, 2))


def test_permute_and_squeeze() -> None:
    x = torch.arange(24.0).reshape(2, 3, 4)
    same(op1("%x: tensor<?x3x4xf32>", "fusion.permute %x [2, 0, 1] : tensor<?x3x4xf32> -> tensor<4x?x3xf32>", "tensor<4x?x3xf32>", x), x.permute(2, 0, 1))
    same(op1("%x: tensor<?x3x4xf32>", "fusion.permute %x [0, -1, -2] : tensor<?x3x4xf32> -> tensor<?x4x3xf32>", "tensor<?x4x3xf32>", x), x.permute(0, 2, 1))
    b = torch.rand(1, 3, 1, 4) > 0.5
    same(op1("%b: tensor<1x?x1x4xi1>", "fusion.squeeze %b dims [0, 2] : tensor<1x?x1x4xi1> -> tensor<?x4xi1>", "tensor<?x4xi1>", b), b.reshape(3, 4))
    same(op1("%b: tensor<1x?x1x4xi1>", "fusion.squeeze %b dims [-2] : tensor<1x?x1x4xi1> -> tensor<1x?x4xi1>", "tensor<1x?x4xi1>", b), b.reshape(1, 3, 4))


def test_slice_static_with_clamping_and_steps() -> None:
    x = torch.arange(80.0).reshape(10, 8)
    tt = "tensor<10x8xf32>"
    same(op1(f"%x: {tt}", f"fusion.slice %x [2, 1] to [9, 8] step [3, 2] : {tt} -> tensor<3x4xf32>", "tensor<3x4xf32>", x), x[2:9:3, 1:8:2])
    same(op1(f"%x: {tt}", f"fusion.slice %x [8, 5] to [100, 3] step [1, 1] : {tt} -> tensor<2x0xf32>", "tensor<2x0xf32>", x), x[8:, 5:3])
    same(op1(f"%x: {tt}", f"fusion.slice %x [20, 0] to [30, 8] step [1, 4] : {tt} -> tensor<0x2xf32>", "tensor<0x2xf32>", x), x[20:30, ::4])


def test_slice_dynamic_bounds_and_input() -> None:
    x = torch.arange(80.0).reshape(10, 8)
    out = op1(
        "%x: tensor<10x8xf32>, %n: index", "fusion.slice %x [%n, 0] to [10, %n] step [1, 1] : tensor<10x8xf32> -> tensor<?x?xf32>",
        "tensor<?x?xf32>", x, 7,
    )
    same(out, x[7:10, 0:7])
    d = torch.arange(48.0).reshape(6, 8).bfloat16()
    out = op1("%d: tensor<?x8xbf16>", "fusion.slice %d [1, 0] to [5, 8] step [2, 1] : tensor<?x8xbf16> -> tensor<?x8xbf16>", "tensor<?x8xbf16>", d)
    same(out, d[1:5:2])
    d2 = d[:3]
    out = op1("%d: tensor<?x8xbf16>", "fusion.slice %d [4, 0] to [4, 8] step [1, 1] : tensor<?x8xbf16> -> tensor<0x8xbf16>", "tensor<0x8xbf16>", d2)
    same(out, d2[4:4])


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(0, 12), start=st.integers(0, 15), stop=st.integers(0, 15), step=st.integers(1, 5),
)
def test_slice_matches_python_slicing(size: int, start: int, stop: int, step: int) -> None:
    x = torch.arange(float(size))
    out = op1(
        "%x: tensor<?xf32>, %a: index, %b: index, %s: index",
        "fusion.slice %x [%a] to [%b] step [%s] : tensor<?xf32> -> tensor<?xf32>", "tensor<?xf32>",
        x, start, stop, step,
    )
    same(out, x[start:stop:step])
    assert out.shape[0] == slice_extent(size, start, stop, step)


def test_pad() -> None:
    x = torch.arange(8.0).reshape(2, 4)
    out = op1(
        "%x: tensor<?x4xf32>, %v: f32", "fusion.pad %x low [0, 1] high [1, 2] value %v : tensor<?x4xf32>, f32 -> tensor<?x7xf32>",
        "tensor<?x7xf32>", x, -1.0,
    )
    same(out, torch.nn.functional.pad(x, (1, 2, 0, 1), value=-1.0))
    i = t([1, 2, 3], torch.int32)
    out = op1("%i: tensor<3xi32>, %v: f32", "fusion.pad %i low [3] high [0] value %v : tensor<3xi32>, f32 -> tensor<6xi32>", "tensor<6xi32>", i, 9.8)
    same(out, t([9, 9, 9, 1, 2, 3], torch.int32))
    b = t([True], torch.bool)
    out = op1("%b: tensor<1xi1>, %v: f32", "fusion.pad %b low [1] high [1] value %v : tensor<1xi1>, f32 -> tensor<3xi1>", "tensor<3xi1>", b, 0.0)
    same(out, t([False, True, False], torch.bool))


def test_cat() -> None:
    a, b = torch.randn(2, 4), torch.randn(3, 4)
    out = op1("%a: tensor<2x4xf32>, %b: tensor<?x4xf32>", "fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>", "tensor<?x4xf32>", a, b)
    same(out, torch.cat([a, b]))
    out = op1(
        "%a: tensor<2x4xf32>", "fusion.cat %a, %a, %a dim -1 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x12xf32>",
        "tensor<2x12xf32>", a,
    )
    same(out, torch.cat([a, a, a], -1))
    e = torch.zeros(0, 4)
    out = op1("%a: tensor<2x4xf32>, %e: tensor<?x4xf32>", "fusion.cat %e, %a dim 0 : tensor<?x4xf32>, tensor<2x4xf32> -> tensor<?x4xf32>", "tensor<?x4xf32>", a, e)
    same(out, a)


# --------------------------------------------------------------------------- #
# Reductions                                                                  #
# --------------------------------------------------------------------------- #


def test_sum_dims_keepdim_and_negative_dims() -> None:
    x = torch.randn(3, 4, 5)
    tt = "tensor<?x4x5xf32>"
    same(op1(f"%x: {tt}", f"fusion.sum %x dims [1] : {tt} -> tensor<?x5xf32>", "tensor<?x5xf32>", x), x.sum(1))
    same(op1(f"%x: {tt}", f"fusion.sum %x dims [0, -1] keepdim : {tt} -> tensor<1x4x1xf32>", "tensor<1x4x1xf32>", x), x.sum((0, 2), keepdim=True))
    same(op1(f"%x: {tt}", f"fusion.sum %x dims [0, 1, 2] : {tt} -> tensor<f32>", "tensor<f32>", x), x.sum())


def test_sum_of_integers_and_bools_accumulates_in_i64() -> None:
    i = t([[2**31 - 1, 1], [5, -3]], torch.int32)
    same(op1("%i: tensor<2x2xi32>", "fusion.sum %i dims [1] : tensor<2x2xi32> -> tensor<2xi64>", "tensor<2xi64>", i), t([2**31, 2], torch.int64))
    b = t([[True, True, False], [True, False, False]], torch.bool)
    same(op1("%b: tensor<2x3xi1>", "fusion.sum %b dims [0, 1] : tensor<2x3xi1> -> tensor<i64>", "tensor<i64>", b), t(3, torch.int64))


def test_sum_to_a_float_type_converts_first() -> None:
    h = torch.randn(3, 5).bfloat16()
    same(op1("%h: tensor<3x5xbf16>", "fusion.sum %h dims [1] : tensor<3x5xbf16> -> tensor<3xf32>", "tensor<3xf32>", h), h.float().sum(1))
    same(op1("%h: tensor<3x5xbf16>", "fusion.sum %h dims [1] : tensor<3x5xbf16> -> tensor<3xbf16>", "tensor<3xbf16>", h), h.sum(1))
    i = t([[1, 2], [3, 4]], torch.int32)
    same(op1("%i: tensor<2x2xi32>", "fusion.prod %i dims [1] : tensor<2x2xi32> -> tensor<2xf64>", "tensor<2xf64>", i), t([2.0, 12.0], torch.float64))


def test_prod() -> None:
    x = torch.randn(2, 3, 4)
    same(
        op1("%x: tensor<2x3x4xf32>", "fusion.prod %x dims [2, 0] keepdim : tensor<2x3x4xf32> -> tensor<1x3x1xf32>", "tensor<1x3x1xf32>", x),
        x.permute(1, 2, 0).reshape(3, 8).prod(1).reshape(1, 3, 1),
    )
    i = t([[1, -2, 3], [4, 5, -6]], torch.int32)
    same(op1("%i: tensor<2x3xi32>", "fusion.prod %i dims [0] keepdim : tensor<2x3xi32> -> tensor<1x3xi64>", "tensor<1x3xi64>", i), t([[4, -10, -18]], torch.int64))
    b = t([[True, True], [True, False]], torch.bool)
    same(op1("%b: tensor<2x2xi1>", "fusion.prod %b dims [1] : tensor<2x2xi1> -> tensor<2xi64>", "tensor<2xi64>", b), t([1, 0], torch.int64))


def test_max_min_propagate_nan_and_keep_the_type() -> None:
    x = t([[1.0, NAN, 3.0], [-1.0, -5.0, 2.0]])
    same(op1("%x: tensor<2x3xf32>", "fusion.max %x dims [1] : tensor<2x3xf32> -> tensor<2xf32>", "tensor<2xf32>", x), t([NAN, 2.0]))
    same(op1("%x: tensor<2x3xf32>", "fusion.min %x dims [0] : tensor<2x3xf32> -> tensor<3xf32>", "tensor<3xf32>", x), t([-1.0, NAN, 2.0]))
    i = t([[3, -7], [2, 9]], torch.int32)
    same(op1("%i: tensor<2x2xi32>", "fusion.max %i dims [1] : tensor<2x2xi32> -> tensor<2xi32>", "tensor<2xi32>", i), t([3, 9], torch.int32))
    b = t([[True, False], [False, False]], torch.bool)
    same(op1("%b: tensor<2x2xi1>", "fusion.min %b dims [0] : tensor<2x2xi1> -> tensor<2xi1>", "tensor<2xi1>", b), t([False, False], torch.bool))
    same(op1("%b: tensor<2x2xi1>", "fusion.max %b dims [1] : tensor<2x2xi1> -> tensor<2xi1>", "tensor<2xi1>", b), t([True, False], torch.bool))


def test_mean() -> None:
    h = torch.randn(3, 5).bfloat16()
    same(op1("%h: tensor<3x5xbf16>", "fusion.mean %h dims [1] : tensor<3x5xbf16> -> tensor<3xbf16>", "tensor<3xbf16>", h), h.mean(1))
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    same(op1("%x: tensor<?x3x4xf64>", "fusion.mean %x dims [0, 2] keepdim : tensor<?x3x4xf64> -> tensor<1x3x1xf64>", "tensor<1x3x1xf64>", x), x.mean((0, 2), keepdim=True))


def test_empty_dims_reduce_nothing() -> None:
    x = torch.randn(2, 3)
    tt = "tensor<?x3xf32>"
    for name in ["sum", "prod", "max", "min", "mean"]:
        same(op1(f"%x: {tt}", f"fusion.{name} %x dims [] : {tt} -> {tt}", tt, x), x)
    i = t([[1, 2]], torch.int32)
    same(op1("%i: tensor<1x2xi32>", "fusion.sum %i dims [] : tensor<1x2xi32> -> tensor<1x2xi64>", "tensor<1x2xi64>", i), i.long())


def test_reductions_over_an_empty_dimension() -> None:
    e = torch.zeros(0, 3)
    tt = "tensor<?x3xf32>"
    same(op1(f"%e: {tt}", f"fusion.sum %e dims [0] : {tt} -> tensor<3xf32>", "tensor<3xf32>", e), torch.zeros(3))
    same(op1(f"%e: {tt}", f"fusion.prod %e dims [0] : {tt} -> tensor<3xf32>", "tensor<3xf32>", e), torch.ones(3))
    same(op1(f"%e: {tt}", f"fusion.mean %e dims [0] : {tt} -> tensor<3xf32>", "tensor<3xf32>", e), torch.full((3,), NAN))
    # max over a non-empty dimension of an empty tensor is an empty tensor
    same(op1(f"%e: {tt}", f"fusion.max %e dims [1] : {tt} -> tensor<?xf32>", "tensor<?xf32>", e), torch.zeros(0))


@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_mean(correction: int) -> None:
    x = torch.randn(3, 5, dtype=torch.float64)
    var, mean = run(
        f"""func.func @f(%x: tensor<3x5xf64>) -> (tensor<3x1xf64>, tensor<3x1xf64>) {{
          %v, %m = fusion.var_mean %x dims [1] correction {correction} keepdim : tensor<3x5xf64> -> tensor<3x1xf64>, tensor<3x1xf64>
          func.return %v, %m : tensor<3x1xf64>, tensor<3x1xf64>
        }}""",
        x,
    )
    expected_var, expected_mean = torch.var_mean(x, 1, correction=correction, keepdim=True)
    same(var, expected_var)
    same(mean, expected_mean)
    mu = x.mean(1, keepdim=True)
    torch.testing.assert_close(mean, mu)
    torch.testing.assert_close(var, ((x - mu) ** 2).sum(1, keepdim=True) / (5 - correction))


def test_var_mean_with_correction_at_least_n() -> None:
    src = """func.func @f(%x: tensor<2x2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %v, %m = fusion.var_mean %x dims [1] correction 3 : tensor<2x2xf32> -> tensor<2xf32>, tensor<2xf32>
      func.return %v, %m : tensor<2xf32>, tensor<2xf32>
    }"""
    var, mean = run(src, t([[1.0, 2.0], [4.0, 4.0]]))
    same(var, t([float("inf"), NAN]))
    same(mean, t([1.5, 4.0]))


def test_var_mean_over_no_dims() -> None:
    src = """func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
      %v0, %m = fusion.var_mean %x dims [] correction 0 : tensor<3xf32> -> tensor<3xf32>, tensor<3xf32>
      %v1, %m1 = fusion.var_mean %x dims [] correction 1 : tensor<3xf32> -> tensor<3xf32>, tensor<3xf32>
      func.return %v0, %v1, %m : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    }"""
    x = t([1.0, 2.0, 3.0])
    v0, v1, m = run(src, x)
    same(v0, torch.zeros(3))
    same(v1, torch.full((3,), NAN))
    same(m, x)


# --------------------------------------------------------------------------- #
# Matrix products                                                             #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "a_shape, b_shape, a_ty, b_ty, r_ty",
    [
        ((3, 4), (4, 5), "tensor<?x4xf32>", "tensor<4x5xf32>", "tensor<?x5xf32>"),
        ((4,), (4,), "tensor<4xf32>", "tensor<4xf32>", "tensor<f32>"),
        ((3, 4), (4,), "tensor<?x4xf32>", "tensor<4xf32>", "tensor<?xf32>"),
        ((4,), (4, 5), "tensor<4xf32>", "tensor<4x5xf32>", "tensor<5xf32>"),
        ((2, 1, 3, 4), (5, 4, 6), "tensor<2x1x3x4xf32>", "tensor<5x4x6xf32>", "tensor<2x5x3x6xf32>"),
        ((5, 3, 4), (5, 4, 6), "tensor<?x?x4xf32>", "tensor<5x4x6xf32>", "tensor<5x?x6xf32>"),
    ],
)
def test_matmul(a_shape, b_shape, a_ty, b_ty, r_ty) -> None:
    a, b = torch.randn(a_shape), torch.randn(b_shape)
    out = op1(f"%a: {a_ty}, %b: {b_ty}", f"fusion.matmul %a, %b : {a_ty}, {b_ty} -> {r_ty}", r_ty, a, b)
    same(out, torch.matmul(a, b))


def test_matmul_bf16() -> None:
    a, b = torch.randn(3, 8).bfloat16(), torch.randn(8, 2).bfloat16()
    out = op1("%a: tensor<3x8xbf16>, %b: tensor<8x2xbf16>", "fusion.matmul %a, %b : tensor<3x8xbf16>, tensor<8x2xbf16> -> tensor<3x2xbf16>", "tensor<3x2xbf16>", a, b)
    same(out, a @ b)


def test_linear() -> None:
    x, w, b = torch.randn(2, 3, 4), torch.randn(5, 4), torch.randn(5)
    out = op1(
        "%x: tensor<?x3x4xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>",
        "fusion.linear %x, %w, %b : tensor<?x3x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<?x3x5xf32>",
        "tensor<?x3x5xf32>", x, w, b,
    )
    same(out, torch.nn.functional.linear(x, w, b))
    out = op1("%x: tensor<?x3x4xf32>, %w: tensor<5x4xf32>", "fusion.linear %x, %w : tensor<?x3x4xf32>, tensor<5x4xf32> -> tensor<?x3x5xf32>", "tensor<?x3x5xf32>", x, w)
    same(out, x @ w.T)
    v = torch.randn(4)
    out = op1("%v: tensor<4xf32>, %w: tensor<5x4xf32>", "fusion.linear %v, %w : tensor<4xf32>, tensor<5x4xf32> -> tensor<5xf32>", "tensor<5xf32>", v, w)
    same(out, torch.nn.functional.linear(v, w))


def test_linear_with_a_1d_weight_and_0d_bias() -> None:
    x, w1, b0 = torch.randn(2, 3, 4), torch.randn(4), torch.tensor(0.5)
    out = op1(
        "%x: tensor<?x3x4xf32>, %w: tensor<4xf32>, %b: tensor<f32>",
        "fusion.linear %x, %w, %b : tensor<?x3x4xf32>, tensor<4xf32>, tensor<f32> -> tensor<?x3xf32>",
        "tensor<?x3xf32>", x, w1, b0,
    )
    same(out, x @ w1 + 0.5)


# --------------------------------------------------------------------------- #
# Scalars: arith and tensor.dim                                               #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "op, a, b, expected",
    [
        ("addi", 7, -9, -2), ("subi", 3, 5, -2), ("muli", -4, 6, -24),
        ("divsi", -7, 2, -3), ("divsi", 7, -2, -3), ("remsi", -7, 2, -1), ("remsi", 7, -2, 1),
        ("floordivsi", -7, 2, -4), ("ceildivsi", -7, 2, -3), ("ceildivsi", 7, 2, 4),
        ("divui", -2, 2, 2**63 - 1), ("minsi", -3, 2, -3), ("maxsi", -3, 2, 2),
        ("remui", -1, 10, (2**64 - 1) % 10), ("ceildivui", 7, 2, 4), ("minui", -1, 3, 3), ("maxui", -1, 3, -1),
    ],
)
def test_arith_integer_ops(op: str, a: int, b: int, expected: int) -> None:
    src = f"""func.func @f(%a: index, %b: index) -> index {{
      %r = arith.{op} %a, %b : index
      func.return %r : index
    }}"""
    (out,) = run(src, a, b)
    same(out, torch.tensor(expected, dtype=torch.int64))


@pytest.mark.parametrize("op, a, b", [("addi", 2**63 - 1, 1), ("muli", 2**62, 2), ("divsi", -(2**63), -1)])
def test_index_overflow_is_an_error(op: str, a: int, b: int) -> None:
    """`index` is a size: overflow is an error naming the op (size_arith's choice), not a wrap."""
    src = f"""func.func @f(%a: index, %b: index) -> index {{
      %r = arith.{op} %a, %b : index
      func.return %r : index
    }}"""
    with pytest.raises(EvaluationError, match=f"arith.{op}.*overflows 64-bit index"):
        run(src, a, b)


@pytest.mark.parametrize("op, a, b, expected", [("addi", 2**63 - 1, 1, -(2**63)), ("muli", 2**62, 4, 0)])
def test_i64_overflow_wraps(op: str, a: int, b: int, expected: int) -> None:
    src = f"""func.func @f(%a: i64, %b: i64) -> i64 {{
      %r = arith.{op} %a, %b : i64
      func.return %r : i64
    }}"""
    (out,) = run(src, a, b)
    same(out, torch.tensor(expected, dtype=torch.int64))


@pytest.mark.parametrize("op", ["divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "ceildivui"])
def test_index_division_by_zero_names_the_op(op: str) -> None:
    src = f"""func.func @f(%a: index, %b: index) -> index {{
      %r = arith.{op} %a, %b : index
      func.return %r : index
    }}"""
    with pytest.raises(EvaluationError, match=f"arith.{op}: division by zero"):
        run(src, 5, 0)


@pytest.mark.parametrize(
    "op, a, b, expected",
    [("addf", 0.1, 0.2, 0.1 + 0.2), ("subf", 1.0, 3.0, -2.0), ("mulf", 1.5, -2.0, -3.0), ("divf", 1.0, 0.0, math.inf)],
)
def test_arith_float_ops(op: str, a: float, b: float, expected: float) -> None:
    src = f"""func.func @f(%a: f64, %b: f64) -> f64 {{
      %r = arith.{op} %a, %b : f64
      func.return %r : f64
    }}"""
    (out,) = run(src, a, b)
    same(out, torch.tensor(expected, dtype=torch.float64))


def test_arith_casts_and_selects_feed_fusion_ops() -> None:
    src = """func.func @f(%x: tensor<?x4xf32>, %s: f64) -> (tensor<?x?xf32>, index, i1) {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : i32
      %n = tensor.dim %x, %c0 : tensor<?x4xf32>
      %k = arith.index_cast %c2 : i32 to index
      %m = arith.muli %n, %k : index
      %mi = arith.index_cast %m : index to i64
      %mf = arith.sitofp %mi : i64 to f32
      %sf = arith.truncf %s : f64 to f32
      %v = arith.addf %mf, %sf : f32
      %big = arith.cmpi sgt, %m, %n : index
      %w = arith.select %big, %m, %n : index
      %ve = arith.extf %v : f32 to f64
      %vi = arith.fptosi %ve : f64 to i32
      %full = fusion.full %v [%n, %w] : f32 -> tensor<?x?xf32>
      %neg = arith.cmpf olt, %s, %ve : f64
      func.return %full, %w, %neg : tensor<?x?xf32>, index, i1
    }"""
    full, w, neg = run(src, torch.zeros(3, 4), 0.25)
    same(full, torch.full((3, 6), 6.25))
    same(w, torch.tensor(6))
    same(neg, torch.tensor(True))


def test_constants_of_every_scalar_type() -> None:
    src = """func.func @f() -> (tensor<4xbf16>, tensor<2xi1>, tensor<3xi32>) {
      %h = arith.constant 1.000000e-01 : bf16
      %t = arith.constant true
      %i = arith.constant -5 : i32
      %a = fusion.full %h [4] : bf16 -> tensor<4xbf16>
      %b = fusion.full %t [2] : i1 -> tensor<2xi1>
      %c = fusion.full %i [3] : i32 -> tensor<3xi32>
      func.return %a, %b, %c : tensor<4xbf16>, tensor<2xi1>, tensor<3xi32>
    }"""
    a, b, c = run(src)
    same(a, torch.full((4,), 0.1, dtype=torch.bfloat16))
    same(b, torch.ones(2, dtype=torch.bool))
    same(c, torch.full((3,), -5, dtype=torch.int32))


# --------------------------------------------------------------------------- #
# Whole functions, inputs and outputs                                         #
# --------------------------------------------------------------------------- #


def test_rmsnorm_example_matches_hand_written_torch() -> None:
    fn = find_function(load_module(EXAMPLES / "rmsnorm.mlir"))
    x, w = torch.randn(8, 64).bfloat16(), torch.randn(64).bfloat16()
    x0, w0 = x.clone(), w.clone()
    (y,) = evaluate(fn, [x, w])
    xf = x.float()
    eps = torch.tensor(1e-5, dtype=torch.float32).item()
    expected = (xf * torch.rsqrt((xf * xf).mean(1, keepdim=True) + eps) * w.float()).bfloat16()
    same(y, expected)
    same(x, x0)  # inputs untouched
    same(w, w0)


def test_every_fusion_op_has_a_reference_semantics() -> None:
    from allotment.dialects.fusion import Fusion
    from allotment.reference import _HANDLERS

    missing = [op.name for op in Fusion.operations if op not in _HANDLERS and op.name != "fusion.yield"]
    assert missing == []


def test_segments_evaluate_their_bodies() -> None:
    segmented = """func.func @rmsnorm(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> tensor<?x64xbf16> {
      %wb = fusion.segment "v0" view (%w) : (tensor<64xbf16>) -> tensor<1x64xbf16> {
      ^bb0(%w_1: tensor<64xbf16>):
        %b = fusion.broadcast_in_dim %w_1 [1, 64] dims [1] : tensor<64xbf16> -> tensor<1x64xbf16>
        fusion.yield %b : tensor<1x64xbf16>
      }
      %y = fusion.segment "k0" normalization (%x, %wb) : (tensor<?x64xbf16>, tensor<1x64xbf16>) -> tensor<?x64xbf16> {
      ^bb0(%x_1: tensor<?x64xbf16>, %w_2: tensor<1x64xbf16>):
        %eps = arith.constant 1.000000e-05 : f32
        %xf = fusion.cast %x_1 : tensor<?x64xbf16> to tensor<?x64xf32>
        %sq = fusion.mul %xf, %xf : tensor<?x64xf32>
        %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
        %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
        %inv = fusion.rsqrt %mse : tensor<?x1xf32>
        %xn = fusion.mul %xf, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
        %wf = fusion.cast %w_2 : tensor<1x64xbf16> to tensor<1x64xf32>
        %yf = fusion.mul %xn, %wf : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
        %y_1 = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
        fusion.yield %y_1 : tensor<?x64xbf16>
      }
      func.return %y : tensor<?x64xbf16>
    }"""
    plain = find_function(load_module(EXAMPLES / "rmsnorm.mlir"))
    inputs = random_inputs(plain, {"x": (4, 64)}, None, seed=3)
    same(run(segmented, *inputs)[0], evaluate(plain, inputs)[0])


def test_outputs_never_alias_inputs_or_each_other() -> None:
    src = """func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<2x3xf32>) {
      %p = fusion.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
      %r = fusion.reshape %x [6] : tensor<2x3xf32> -> tensor<6xf32>
      func.return %x, %p, %r, %x : tensor<2x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<2x3xf32>
    }"""
    x = torch.randn(2, 3)
    outs = run(src, x)
    ptrs = {o.untyped_storage().data_ptr() for o in outs} | {x.untyped_storage().data_ptr()}
    assert len(ptrs) == 5
    for o in outs:
        o.zero_()
    assert x.abs().sum() > 0


def test_scalar_results_become_0d_tensors() -> None:
    src = """func.func @f(%x: tensor<?x4xbf16>) -> (index, f32) {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?x4xbf16>
      %h = arith.constant 0.5 : f32
      func.return %n, %h : index, f32
    }"""
    n, h = run(src, torch.zeros(7, 4, dtype=torch.bfloat16))
    same(n, torch.tensor(7))
    same(h, torch.tensor(0.5))


def test_sharded_types_compute_on_global_tensors() -> None:
    src = """
    #rows = #fusion.sharding<@tp, [[0], []]>
    #cols = #fusion.sharding<@tp, [[], [0]]>
    #vec = #fusion.sharding<@tp, [[0]]>
    fusion.mesh @tp shape 2 devices [0, 1]
    func.func @f(%x: tensor<?x4xf32>, %w: tensor<6x4xf32, #rows>, %b: tensor<6xf32, #vec>, %s: f32) -> tensor<?x6xf32, #cols> {
      %h = fusion.linear %x, %w, %b : tensor<?x4xf32>, tensor<6x4xf32, #rows>, tensor<6xf32, #vec> -> tensor<?x6xf32, #cols>
      %y = fusion.mul %h, %s : tensor<?x6xf32, #cols>, f32 -> tensor<?x6xf32, #cols>
      func.return %y : tensor<?x6xf32, #cols>
    }"""
    x, w, b = torch.randn(3, 4), torch.randn(6, 4), torch.randn(6)
    (y,) = run(src, x, w, b, 0.5)
    same(y, torch.nn.functional.linear(x, w, b) * 0.5)


def test_random_inputs() -> None:
    fn = find_function(parse_module(
        "func.func @f(%x: tensor<?x4xbf16>, %i: tensor<3xi32>, %b: tensor<2xi1>, %d: tensor<2xf64>, %s: f32, %n: index, %p: i1, %5: f32) {\n func.return\n}"
    ))
    first = random_inputs(fn, {"x": (2, 4)}, {"s": 0.5, "n": 3.0, "p": False}, seed=1)
    again = random_inputs(fn, {"x": (2, 4)}, {"s": 0.5, "n": 3.0, "p": False}, seed=1)
    other = random_inputs(fn, {"x": (2, 4)}, {"s": 0.5, "n": 3.0, "p": False}, seed=2)
    x, i, b, d, s, n, p, unnamed = first
    assert x.shape == (2, 4) and x.dtype == torch.bfloat16
    assert i.dtype == torch.int32 and -8 <= i.min() and i.max() < 8
    assert b.dtype == torch.bool and d.dtype == torch.float64
    assert (s, n, p) == (0.5, 3, False) and type(n) is int
    assert unnamed == DEFAULT_SCALARS["float"]
    same(x, again[0])
    assert not torch.equal(x, other[0])


def test_random_inputs_name_unnamed_arguments_by_position() -> None:
    fn = find_function(parse_module("func.func private @f(tensor<?xf32>, index)"))
    x, n = random_inputs(fn, {"arg0": (5,)}, {"arg1": 2})
    assert x.shape == (5,) and n == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_results_are_on_the_inputs_device() -> None:
    x = torch.randn(3, 4, device="cuda")
    out = op1("%x: tensor<?x4xf32>, %n: index", "fusion.full %n [%n, 4] : index -> tensor<?x4xf32>", "tensor<?x4xf32>", x, 3)
    assert out.device.type == "cuda"
    fn = find_function(load_module(EXAMPLES / "rmsnorm.mlir"))
    inputs = random_inputs(fn, {"x": (8, 64)}, None, seed=0, device="cuda")
    (y,) = evaluate(fn, inputs, device="cuda")
    (y_cpu,) = evaluate(fn, [x.cpu() for x in inputs])
    assert y.device.type == "cuda"
    torch.testing.assert_close(y.cpu(), y_cpu)


# --------------------------------------------------------------------------- #
# Promotion: the dialect's rule against torch.result_type                     #
# --------------------------------------------------------------------------- #

TYPES = list(rules.ELEMENT_TYPES)
PY_SCALAR = {rules.Category.BOOL: True, rules.Category.INTEGER: 3, rules.Category.FLOAT: 2.5, rules.Category.COMPLEX: 1.5 - 2j}


@settings(max_examples=60, deadline=None)
@given(a=st.sampled_from(TYPES), b=st.sampled_from(TYPES), s=st.sampled_from(list(rules.SCALAR_TYPES)))
def test_promotion_rule_matches_torch_result_type(a, b, s) -> None:
    ta = torch.empty(2, dtype=torch_dtype(a))
    tb = torch.empty(2, dtype=torch_dtype(b))
    tensors = [TensorType(a, [2]), TensorType(b, [2])]
    assert torch_dtype(rules.promote(tensors)) == torch.result_type(ta, tb)
    scalar = PY_SCALAR[rules.category(s)]
    expected = torch.result_type(ta, scalar)
    if expected == torch.complex32:  # f16 with a complex scalar: no complex32 here (as nvFuser), complex64
        expected = torch.complex64
    assert torch_dtype(rules.promote([tensors[0], s])) == expected


@settings(max_examples=25, deadline=None)
@given(a=st.sampled_from(TYPES), b=st.sampled_from(TYPES))
def test_mul_of_any_two_types_matches_torch(a, b) -> None:
    r = rules.promote([TensorType(a, [3]), TensorType(b, [3])])
    ta, tb = (rules.type_name(x) for x in (a, b))
    tr = rules.type_name(r)
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(3, generator=gen) * 4).to(torch_dtype(a))
    y = (torch.randn(3, generator=gen) * 4).to(torch_dtype(b))
    out = op1(
        f"%x: tensor<3x{ta}>, %y: tensor<3x{tb}>", f"fusion.mul %x, %y : tensor<3x{ta}>, tensor<3x{tb}> -> tensor<3x{tr}>",
        f"tensor<3x{tr}>", x, y,
    )
    same(out, x * y)
