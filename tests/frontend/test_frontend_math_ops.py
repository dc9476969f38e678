"""nvFuser's math, rounding, integer and bitwise ops through FusionDefinition, against torch.

In the style of nvFuser's test_python_frontend.py: define, execute (on the
backend and on the reference evaluator, see conftest.py), compare with the same
computation in torch. Typing is nvFuser's: math functions of f16/bf16/integer
inputs give f32, `atan2` lifts integers to f32, rounding and bitwise ops keep the
input type, `mod` is `fmod`.
"""

from __future__ import annotations

import pytest
import torch
from frontend_helpers import DEVICE, check, randn

from allotment import DataType, FusionDefinition
from allotment.errors import ArgumentError
from allotment.frontend.ops import SUPPORTED, UNSUPPORTED

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

NAN, INF = float("nan"), float("inf")

UNARY_FLOAT = {
    "acos": torch.acos, "acosh": torch.acosh, "asin": torch.asin, "asinh": torch.asinh,
    "atan": torch.atan, "atanh": torch.atanh, "cosh": torch.cosh, "sinh": torch.sinh,
    "tan": torch.tan, "exp2": torch.exp2, "expm1": torch.expm1, "log2": torch.log2,
    "log10": torch.log10, "log1p": torch.log1p, "erfc": torch.erfc, "erfinv": torch.erfinv,
    "lgamma": torch.lgamma,
    "erfcinv": lambda x: -torch.special.ndtri(x.double() / 2).to(x.dtype) / 2**0.5,
}


def values(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    v = [[-2.5, -1.0, -0.5, -0.0, 0.0, 0.3], [0.5, 1.0, 1.5, 2.5, 7.0, 30.0], [INF, -INF, NAN, 0.999, 1e-6, -3.75]]
    return torch.tensor(v, dtype=dtype, device=DEVICE)


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float_math(run_fusion, name: str) -> None:
    x = values()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(getattr(fd.ops, name)(t0))
    (out,) = run_fusion(fd, [x])
    check(out, UNARY_FLOAT[name](x))


@pytest.mark.parametrize("name", ["acos", "lgamma", "erfinv", "exp2"])
def test_unary_float_math_of_bf16_and_ints_is_float(run_fusion, name: str) -> None:
    h = values(torch.bfloat16)
    i = torch.tensor([[-3, -1, 0, 1, 2, 9]], dtype=torch.int32, device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(h)
        t1 = fd.from_pytorch(i)
        fd.add_output(getattr(fd.ops, name)(t0))
        fd.add_output(getattr(fd.ops, name)(t1))
    out_h, out_i = run_fusion(fd, [h, i])
    check(out_h, UNARY_FLOAT[name](h.float()))
    check(out_i, UNARY_FLOAT[name](i.float()))


@pytest.mark.parametrize("name", ["ceil", "floor", "round", "trunc", "frac", "sign"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rounding_keeps_the_type(run_fusion, name: str, dtype: torch.dtype) -> None:
    x = values(dtype)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(getattr(fd.ops, name)(t0))
    (out,) = run_fusion(fd, [x])
    check(out, getattr(torch, name)(x))


def test_rounding_of_integers_and_signbit(run_fusion) -> None:
    i = torch.tensor([[-(2**31), -7, 0, 5, 2**31 - 1]], dtype=torch.int32, device=DEVICE)
    x = values()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(i)
        t1 = fd.from_pytorch(x)
        fd.add_output(fd.ops.round(t0))
        fd.add_output(fd.ops.sign(t0))
        fd.add_output(fd.ops.signbit(t0))
        fd.add_output(fd.ops.signbit(t1))
    r, s, b0, b1 = run_fusion(fd, [i, x])
    check(r, i)
    check(s, torch.sign(i))
    check(b0, torch.signbit(i))
    check(b1, torch.signbit(x))


def test_signbit_of_scalars(run_fusion) -> None:
    """signbit of Bool, Int and Double scalars (a Bool's sign bit is never set; -0.0's is)."""
    with FusionDefinition() as fd:
        b = fd.define_scalar(dtype=DataType.Bool)
        n = fd.define_scalar(dtype=DataType.Int)
        x = fd.define_scalar(dtype=DataType.Double)
        t = fd.define_tensor([-1], dtype=DataType.Bool)
        for s in (b, n, x):
            fd.add_output(fd.ops.logical_or(t, fd.ops.signbit(s)))
    t = torch.zeros(2, dtype=torch.bool, device=DEVICE)
    rb, rn, rx = run_fusion(fd, [True, -3, -0.0, t])
    check(rb, torch.zeros(2, dtype=torch.bool))
    check(rn, torch.ones(2, dtype=torch.bool))
    check(rx, torch.ones(2, dtype=torch.bool))


@pytest.mark.parametrize("name", ["atan2", "fmod", "remainder", "nextafter"])
def test_binary_float_math(run_fusion, name: str) -> None:
    x = values()
    y = torch.tensor([[2.0, -2.0, 3.0, 1.0, -0.0, -0.5], [INF, 0.5, -1.5, 2.5, 7.0, 4.0], [1.0, 2.0, 3.0, NAN, -1.0, 1.25]],
                     device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.from_pytorch(y)
        fd.add_output(getattr(fd.ops, name)(t0, t1))
    (out,) = run_fusion(fd, [x, y])
    check(out, getattr(torch, name)(x, y))


def test_mod_is_fmod_and_remainder_is_pythons(run_fusion) -> None:
    a = torch.tensor([7, -7, 7, -7, 0], dtype=torch.int64, device=DEVICE)
    b = torch.tensor([3, 3, -3, -3, 5], dtype=torch.int64, device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(a)
        t1 = fd.from_pytorch(b)
        fd.add_output(fd.ops.mod(t0, t1))
        fd.add_output(fd.ops.remainder(t0, t1))
        fd.add_output(t0 % t1)
        fd.add_output(fd.ops.div(t0, t1))
    mod, rem, op_mod, div = run_fusion(fd, [a, b])
    check(mod, torch.fmod(a, b))
    check(rem, torch.remainder(a, b))
    check(op_mod, torch.fmod(a, b))
    check(div, torch.div(a, b, rounding_mode="trunc"))


def test_atan2_and_half_fmod_types(run_fusion) -> None:
    i = torch.tensor([[-3, 0, 4]], dtype=torch.int32, device=DEVICE)
    h = torch.tensor([[-3.5, 0.5, 4.25]], dtype=torch.float16, device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(i)
        t1 = fd.from_pytorch(h)
        fd.add_output(fd.ops.atan2(t0, 2))
        fd.add_output(fd.ops.fmod(t1, 2.0))
    a, f = run_fusion(fd, [i, h])
    check(a, torch.atan2(i.float(), torch.tensor(2.0)))
    check(f, torch.fmod(h.float(), 2.0))  # nvFuser computes half arithmetic in f32


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_bitwise_and_shifts(run_fusion, dtype: torch.dtype) -> None:
    info = torch.iinfo(dtype)
    a = torch.tensor([info.min, -8, -1, 0, 5, 12, info.max], dtype=dtype, device=DEVICE)
    s = torch.tensor([1, 2, info.bits, 3, -1, 4, info.bits - 1], dtype=dtype, device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(a)
        t1 = fd.from_pytorch(s)
        fd.add_output(fd.ops.bitwise_and(t0, t1))
        fd.add_output(fd.ops.bitwise_or(t0, 6))
        fd.add_output(fd.ops.bitwise_xor(t0, t1))
        fd.add_output(fd.ops.bitwise_not(t0))
        fd.add_output(fd.ops.bitwise_left_shift(t0, t1))
        fd.add_output(fd.ops.bitwise_right_shift(t0, t1))
        fd.add_output(fd.ops.logical_right_shift(t0, 1))
        fd.add_output(fd.ops.gcd(t0, t1))
    outs = run_fusion(fd, [a, s])
    unsigned = (a.tolist(), 1 << info.bits)
    lshr = [((v % unsigned[1]) >> 1) for v in unsigned[0]]
    expected = [
        a & s, a | 6, a ^ s, ~a, torch.bitwise_left_shift(a, s), torch.bitwise_right_shift(a, s),
        torch.tensor(lshr, dtype=dtype, device=DEVICE), torch.gcd(a, s),
    ]
    for k, (out, exp) in enumerate(zip(outs, expected)):
        assert torch.equal(out.cpu(), exp.cpu()), (k, out, exp)


def test_bool_bitwise_ops_and_operators(run_fusion) -> None:
    a = torch.tensor([True, True, False, False], device=DEVICE)
    b = torch.tensor([True, False, True, False], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(a)
        t1 = fd.from_pytorch(b)
        fd.add_output(t0 & t1)
        fd.add_output(t0 | t1)
        fd.add_output(~t0)
        fd.add_output(fd.ops.bitwise_xor(t0, t1))
    outs = run_fusion(fd, [a, b])
    for out, exp in zip(outs, [a & b, a | b, ~a, a ^ b]):
        check(out, exp)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda fd, f, i: fd.ops.bitwise_and(f, i), "bitwise_and: it takes integer or i1 operands, got the promoted type f32"),
        (lambda fd, f, i: fd.ops.bitwise_not(f), "bitwise_not: it takes integer or i1 tensors, got f32"),
        (lambda fd, f, i: fd.ops.bitwise_left_shift(i, 1.5), "bitwise_left_shift: it takes integer operands"),
        (lambda fd, f, i: fd.ops.gcd(f, i), "gcd: it takes integer operands, got the promoted type f32"),
        (lambda fd, f, i: fd.ops.nextafter(i, i), "nextafter: it takes floating-point operands, got the promoted type i64"),
        (lambda fd, f, i: fd.ops.frac(i), "frac: it takes floating-point tensors, got i64"),
        (lambda fd, f, i: fd.ops.round(fd.ops.gt(f, 0.0)), "round: fusion.round does not accept i1 (bool) tensors"),
    ],
)
def test_dtype_errors_name_the_op(build, message: str) -> None:
    with FusionDefinition() as fd:
        f = fd.define_tensor([-1], dtype=DataType.Float)
        i = fd.define_tensor([-1], dtype=DataType.Int)
        with pytest.raises(ArgumentError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            build(fd, f, i)


def test_the_ops_are_supported() -> None:
    names = [*UNARY_FLOAT, "ceil", "floor", "round", "trunc", "frac", "sign", "signbit", "atan2", "fmod",
             "mod", "remainder", "nextafter", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor",
             "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "logical_right_shift", "triu", "tril"]
    for name in names:
        assert name in SUPPORTED and name not in UNSUPPORTED, name


@pytest.mark.parametrize("diagonal", [0, 2, -1])
def test_triu_and_tril(run_fusion, diagonal: int) -> None:
    x = torch.randn(3, 4, 5, device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.triu(t0, diagonal))
        fd.add_output(fd.ops.tril(t0, diagonal=fd.define_scalar(diagonal)))
    up, low = run_fusion(fd, [x])
    check(up, torch.triu(x, diagonal))
    check(low, torch.tril(x, diagonal))


def test_triu_of_a_vector_is_an_error() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1], dtype=DataType.Float)
        with pytest.raises(ArgumentError, match=r"^triu: it takes a tensor of rank 2 or more"):
            fd.ops.triu(t0)
        with pytest.raises(ArgumentError, match="^tril: argument 'diagonal' must be an int, got float 1.5"):
            fd.ops.tril(t0, 1.5)


def test_bitwise_ops_of_scalars(run_fusion) -> None:
    """Of two scalars they are `arith` ops (andi, ori, xori), as logical_and is."""
    x = torch.tensor([1, 2, 3], device=DEVICE)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        s = fd.define_scalar(DataType.Int)
        b = fd.define_scalar(DataType.Bool)
        fd.add_output(fd.ops.add(t, fd.ops.bitwise_xor(s, 6)))
        fd.add_output(fd.ops.add(t, fd.ops.bitwise_not(s)))
        fd.add_output(fd.ops.add(t, fd.ops.bitwise_or(s, 8)))
        fd.add_output(fd.ops.where(fd.ops.bitwise_and(b, fd.ops.bitwise_not(b)), t, 0))
        with pytest.raises(ArgumentError, match="^bitwise_and: it takes integer or Bool operands, got a f64 scalar"):
            fd.ops.bitwise_and(s, 1.5)
    outs = run_fusion(fd, [x, 3, True])
    for out, exp in zip(outs, [x + (3 ^ 6), x + ~3, x + (3 | 8), torch.zeros_like(x)]):
        check(out, exp)


def test_pow_of_a_constant_by_a_0d_step() -> None:
    """`fd.ops.pow(0.9, step)` with `step` a 0-d f32 input (Adam's bias correction) runs on the
    CPU too: the loaded 0-d value is a tile, as the constant is."""
    with FusionDefinition() as fd:
        step = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        fd.add_output(fd.ops.pow(0.9, step))
    (y,) = fd.execute([torch.tensor(3.0)])
    torch.testing.assert_close(y, torch.pow(0.9, torch.tensor(3.0)))


# --------------------------------------------------------------------------- #
# Math ops of scalars alone (nvFuser computes them on its scalars)            #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("s", [2.0, -0.0, -3.5, 0.0])
def test_scalar_reciprocal_signbit_nextafter(run_fusion, s: float) -> None:
    # nvFuser's test_replaced_sizes_pr2714 (reciprocal of a Double scalar) and
    # test_nextafter (nextafter of two scalars): the scalar results scale a tensor
    x = randn(5)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        s0 = fd.define_scalar(None, dtype=DataType.Double)
        r = fd.ops.reciprocal(s0)
        sb = fd.ops.signbit(s0)
        n = fd.ops.nextafter(s0, fd.define_scalar(1.0, dtype=DataType.Double))
        assert not r.is_tensor() and r.dtype() == DataType.Double and sb.dtype() == DataType.Bool
        fd.add_output(fd.ops.mul(t, r))
        fd.add_output(fd.ops.where(sb, t, fd.ops.neg(t)))
        fd.add_output(fd.ops.add(fd.ops.cast(t, DataType.Double), n))
    a, b, c = run_fusion(fd, [x, s])
    st = torch.tensor(s, dtype=torch.float64)
    check(a, (x * torch.reciprocal(st)).to(torch.float32))
    check(b, torch.where(torch.signbit(st), x, -x))
    check(c, x.double() + torch.nextafter(st, torch.tensor(1.0, dtype=torch.float64)))


def test_scalar_int_reciprocal_is_double_and_signbit(run_fusion) -> None:
    # nvFuser's test_reshape_dynamic: signbit and reciprocal of an Int scalar, fmod of Ints
    x = randn(4)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        s0 = fd.define_scalar(None, dtype=DataType.Int)
        r = fd.ops.reciprocal(s0)
        assert r.dtype() == DataType.Double
        neg = fd.ops.cast(fd.ops.signbit(s0), DataType.Int)
        rem = fd.ops.fmod(fd.define_scalar(-7, dtype=DataType.Int), s0)
        fd.add_output(fd.ops.mul(fd.ops.cast(t, DataType.Double), r))
        fd.add_output(fd.ops.add(t, fd.ops.add(neg, rem)))
    for s in (4, -3):
        a, b = run_fusion(fd, [x, s])
        check(a, x.double() / s)
        check(b, x + (int(s < 0) + int(torch.fmod(torch.tensor(-7), s))))
