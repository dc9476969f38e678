"""The reference evaluator: runs a fusion-level function op by op with torch.

This is the oracle every differential test compares against, so it favours
clarity over speed: each `fusion` op is implemented exactly as its docstring
in `allotment.dialects.fusion` says, with eager torch on global tensors
(sharding encodings are ignored), and every run-time precondition that the IR
cannot check statically is checked here and reported as an `EvaluationError`
naming the op, the operands and the extents at fault.

Values: a tensor SSA value is a `torch.Tensor`; a scalar SSA value is a Python
number of its type's kind (`float` for f16/bf16/f32/f64, rounded to that type;
`int` for i32/i64/index, wrapped to its width; `bool` for i1). Scalars enter
elementwise arithmetic as Python numbers, so torch's wrapped-number rules
apply (a scalar never widens a tensor's type inside its category, and it is
used at the op's computation precision: `bf16 * f32-scalar` computes in f32
and rounds once). Comparisons convert both operands to the promoted type
first (as `fusion.eq` &c. say); `maximum`, `minimum` and `where` convert them
to the result type (the same values: they select, they do not compute).
`arith` integer ops wrap to their width; `index` is 64 bits. A
`fusion.segment` runs its body on its inputs, so segmented functions (after
`fusion-segment`) evaluate to the same results as the originals.

Choices where the dialect leaves room (each is torch's behaviour unless said):
- integer `fusion.div` truncates toward zero; a zero divisor is an error here,
  and so it is for integer `fusion.fmod`, `fusion.remainder` and
  `fusion.floor_divide` (torch raises too; generated kernels cannot, and give
  the values the dialect documents).
- `fusion.atan2`, `fmod`, `remainder`, `floor_divide` compute 16-bit floats in
  f32 and round once (scalars enter at f32, as in generated kernels);
  `fusion.nextafter` steps in the result type itself.
- shifts by an amount outside [0, bit width) follow torch: `<<` gives 0, `>>`
  the sign fill; `fusion.logical_right_shift` (no torch op) gives 0.
- `fusion.erfcinv` (no torch op) is `-ndtri(x / 2) / sqrt(2)`, computed in f64.
- integer `fusion.pow` with a negative exponent follows torch's tensor rule
  (1 for base 1, +-1 for base -1, 0 otherwise), scalar exponents included.
- `fusion.fma` rounds once: in f32 through a sum in f64 rounded to odd, in f64 in exact
  rationals (torch's own `prims.fma` on the CPU multiplies, then adds: two roundings).
- `fusion.iota` computes `start + i * step` exactly (float64 or int64) and
  converts once to the element type.
- `fusion.max`/`fusion.min` over a zero-extent dimension is an error (there
  is no identity), even when the result is empty, as in torch.
- `fusion.slice` bounds follow torch (`extents.view_extents`): negative ones
  count from the end, then clamp to [0, extent].
- `fusion.var_mean` divides by max(N - correction, 0) (inf or NaN at and
  beyond N), as torch does.
- Outputs never share memory with inputs or with each other; a scalar result
  is returned as a 0-d tensor.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from math import prod
from typing import TypeAlias

import torch
from xdsl.dialects import arith, func, tensor
from xdsl.dialects import complex as cplx
from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from allotment import dtypes, philox
from allotment.diagnostics import SOURCE_SPANS
from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.dialects.comm import COMM_OPS
from allotment.dialects.fusion_rules import DYNAMIC, type_name
from allotment.errors import ArgumentError, Error, RunError, UnsupportedError, first_line, is_allocation_failure
from allotment.extents import size_arith, view_extents

Scalar: TypeAlias = int | float | bool
Value: TypeAlias = torch.Tensor | Scalar

__all__ = [
    "EvaluationError",
    "ReferenceBug",
    "evaluate",
    "random_inputs",
    "torch_dtype",
    "DEFAULT_SCALARS",
]


class EvaluationError(RunError):
    """The function cannot be evaluated on these inputs (or at all): a user error."""


class ReferenceBug(AssertionError):
    """The evaluator produced a value that contradicts the IR: a bug, not a user error."""


# --------------------------------------------------------------------------- #
# Types and scalars                                                           #
# --------------------------------------------------------------------------- #

def torch_dtype(t: Attribute) -> torch.dtype:
    """The torch dtype of a fusion element type or scalar type (`index` is int64;
    the table is `allotment.dtypes`)."""
    try:
        return dtypes.torch_dtype(t)
    except UnsupportedError:
        raise EvaluationError(f"type {type_name(t)} is not supported by the reference evaluator") from None


def _is_int(t: Attribute) -> bool:
    return isinstance(t, IndexType) or (isinstance(t, IntegerType) and t != i1)


def _width(t: Attribute) -> int:
    return 64 if isinstance(t, IndexType) else t.width.data  # type: ignore[attr-defined]


def _signed(v: Scalar, t: Attribute) -> int:
    """The signed integer meaning of an integer-typed scalar (i1 true is -1)."""
    if t == i1:
        return -1 if v else 0
    return int(v)


def _unsigned(v: Scalar, t: Attribute) -> int:
    return _signed(v, t) & ((1 << _width(t)) - 1)


def _wrap(v: int, t: Attribute) -> int | bool:
    """`v` modulo 2^width of the integer type `t`, as a signed value (bool for i1)."""
    if t == i1:
        return bool(v & 1)
    w = _width(t)
    v &= (1 << w) - 1
    return v - (1 << w) if v >= 1 << (w - 1) else v


def _round_float(v: float, t: Attribute) -> float:
    """`v` rounded to the floating-point type `t` (to nearest even; overflow gives inf)."""
    if isinstance(t, Float64Type):
        return float(v)
    return torch.tensor(float(v), dtype=torch.float64).to(torch_dtype(t)).item()


def _scalar_tensor(v: Scalar, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A 0-d tensor of `dtype` holding `v`, converted as torch converts (ints wrap)."""
    if isinstance(v, bool):
        src = torch.bool
    elif isinstance(v, int):
        src = torch.int64
    elif isinstance(v, complex):
        src = torch.complex128
    else:
        src = torch.float64
    return torch.tensor(v, dtype=src, device=device).to(dtype)


# --------------------------------------------------------------------------- #
# The run                                                                     #
# --------------------------------------------------------------------------- #


def _value_name(v: SSAValue) -> str | None:
    return f"%{v.name_hint}" if v.name_hint else None


def _location(op: Operation) -> str | None:
    span = SOURCE_SPANS.get(op)
    return span.get_location() if span is not None else None


def _mismatch(x: Value, t: Attribute) -> str | None:
    """What `x` is, where it is not a value of IR type `t` (a tensor of its dtype, rank and
    static extents; a scalar of its Python kind), else None."""
    if isinstance(t, TensorType):
        if not isinstance(x, torch.Tensor):
            return repr(x)
        if (x.dtype == torch_dtype(t.element_type) and x.dim() == len(t.get_shape())
                and all(e == DYNAMIC or e == a for e, a in zip(t.get_shape(), x.shape))):
            return None
        return f"a tensor of dtype {x.dtype} and shape {_fmt(x.shape)}"
    kind = bool if t == i1 else int if _is_int(t) else complex if rules.is_complex(t) else float
    return None if type(x) is kind else repr(x)  # noqa: E721 - bool must not pass as int


def _fmt(shape: Sequence[int]) -> str:
    return "x".join(str(e) for e in shape) if len(shape) else "scalar"


Handler: TypeAlias = Callable[["_Run", Operation], list[Value]]
_HANDLERS: dict[type[Operation], Handler] = {}


def _handles(*ops: type[Operation]) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for op in ops:
            _HANDLERS[op] = handler
        return handler

    return register


class _Run:
    """The state of one evaluation: SSA values and the device."""

    def __init__(self, device: torch.device):
        self.device = device
        self.env: dict[SSAValue, Value] = {}

    # -- errors -------------------------------------------------------------

    def fail(self, op: Operation, message: str) -> EvaluationError:
        loc = _location(op)
        where = f" (at {loc})" if loc else ""
        return EvaluationError(f"{op.name}: {message}{where}")

    @staticmethod
    def operand(op: Operation, i: int) -> str:
        name = _value_name(op.operands[i])
        return f"operand #{i} ({name})" if name else f"operand #{i}"

    # -- values -------------------------------------------------------------

    def value(self, v: SSAValue) -> Value:
        return self.env[v]

    def tensor(self, v: SSAValue) -> torch.Tensor:
        x = self.env[v]
        if not isinstance(x, torch.Tensor):
            raise ReferenceBug(f"expected a tensor for {v}, got {x!r}")
        return x

    def scalar(self, v: SSAValue) -> Scalar:
        x = self.env[v]
        if isinstance(x, torch.Tensor):
            raise ReferenceBug(f"expected a scalar for {v}, got a tensor")
        return x

    def as_tensor(self, v: SSAValue, t: Attribute) -> torch.Tensor:
        """Operand `v` as a tensor of element type `t` (a scalar becomes 0-d)."""
        x = self.env[v]
        if isinstance(x, torch.Tensor):
            return x.to(torch_dtype(t))
        return _scalar_tensor(x, torch_dtype(t), self.device)

    def extents(
        self,
        op: Operation,
        static: DenseArrayBase,
        dynamic: Sequence[SSAValue],
        what: str,
        minimum: int | None = 0,
    ) -> list[int]:
        """A `DynamicIndexList`'s entries, with `?` entries read from `dynamic`
        (each at least `minimum`, unless it is None)."""
        values: Iterator[SSAValue] = iter(dynamic)
        out: list[int] = []
        for k, s in enumerate(int(e) for e in static.get_values()):
            if s != DYNAMIC:
                out.append(s)
                continue
            v = next(values)
            n = int(self.scalar(v))
            if minimum is not None and n < minimum:
                name = f" ({_value_name(v)})" if _value_name(v) else ""
                bound = "non-negative" if minimum == 0 else f"at least {minimum}"
                raise self.fail(op, f"{what} entry #{k}{name} is {n} at run time; it must be {bound}")
            out.append(n)
        return out

    # -- checks -------------------------------------------------------------

    def check_result(self, op: Operation, i: int, x: Value) -> None:
        t = op.results[i].type
        got = _mismatch(x, t)
        if got is not None:
            raise ReferenceBug(
                f"{op.name}: result #{i} is {got}, but its IR type is {type_name(t)}; "
                "this is a bug in the reference evaluator or in the dialect's typing rules"
            )

    def check_broadcast(self, op: Operation) -> None:
        """Elementwise operands: per dimension, every extent not statically 1 agrees."""
        tensors = [
            (i, v.type.get_shape(), self.tensor(v))
            for i, v in enumerate(op.operands)
            if isinstance(v.type, TensorType)
        ]
        rank = len(tensors[0][1])
        for d in range(rank):
            fixed = [(i, x.shape[d]) for i, shape, x in tensors if shape[d] != 1]
            if len({e for _, e in fixed}) > 1:
                listed = ", ".join(f"{self.operand(op, i)} has {e}" for i, e in fixed)
                hint = (
                    "; only static size-1 dimensions broadcast"
                    if any(e == 1 for _, e in fixed)
                    else ""
                )
                raise self.fail(op, f"dimension {d} extents differ at run time: {listed}{hint}")


# --------------------------------------------------------------------------- #
# Elementwise ops                                                             #
# --------------------------------------------------------------------------- #

_UNARY: dict[type[Operation], Callable[[torch.Tensor], torch.Tensor]] = {
    fusion.NegOp: torch.neg,
    fusion.AbsOp: torch.abs,
    fusion.ReluOp: torch.relu,
    fusion.ExpOp: torch.exp,
    fusion.LogOp: torch.log,
    fusion.SqrtOp: torch.sqrt,
    fusion.RsqrtOp: torch.rsqrt,
    fusion.ReciprocalOp: torch.reciprocal,
    fusion.TanhOp: torch.tanh,
    fusion.SigmoidOp: torch.sigmoid,
    fusion.SinOp: torch.sin,
    fusion.CosOp: torch.cos,
    fusion.ErfOp: torch.erf,
    fusion.LogicalNotOp: lambda x: x == 0,
    fusion.AcosOp: torch.acos,
    fusion.AcoshOp: torch.acosh,
    fusion.AsinOp: torch.asin,
    fusion.AsinhOp: torch.asinh,
    fusion.AtanOp: torch.atan,
    fusion.AtanhOp: torch.atanh,
    fusion.CoshOp: torch.cosh,
    fusion.SinhOp: torch.sinh,
    fusion.TanOp: torch.tan,
    fusion.Exp2Op: torch.exp2,
    fusion.Expm1Op: torch.expm1,
    fusion.Log2Op: torch.log2,
    fusion.Log10Op: torch.log10,
    fusion.Log1pOp: torch.log1p,
    fusion.ErfcOp: torch.erfc,
    fusion.ErfinvOp: torch.erfinv,
    fusion.ErfcinvOp: lambda x: _erfcinv(x),
    fusion.LgammaOp: torch.lgamma,
    fusion.CeilOp: torch.ceil,
    fusion.FloorOp: torch.floor,
    fusion.RoundOp: torch.round,  # halves to even
    fusion.TruncOp: torch.trunc,
    fusion.FracOp: torch.frac,
    fusion.SignOp: torch.sign,
    fusion.SignbitOp: torch.signbit,
    fusion.BitwiseNotOp: torch.bitwise_not,
    fusion.RealOp: lambda x: (x.real if x.is_complex() else x).clone(),
    fusion.ImagOp: lambda x: x.imag.clone(),
}


def _erfcinv(x: torch.Tensor) -> torch.Tensor:
    """The inverse of erfc (torch has none): `-ndtri(x / 2) / sqrt(2)`, in f64, which
    keeps its accuracy for x near 0, where `erfinv(1 - x)` would lose it."""
    return (-torch.special.ndtri(x.double() / 2) / math.sqrt(2.0)).to(x.dtype)


@_handles(*_UNARY)
def _unary(run: _Run, op: Operation) -> list[Value]:
    x = run.tensor(op.operands[0])
    if isinstance(op, fusion.FloatUnaryOp) and not x.is_floating_point():
        x = x.to(torch_dtype(op.results[0].type.element_type))
    return [_UNARY[type(op)](x)]


_ARITH: dict[type[Operation], Callable[[Value, Value], Value]] = {
    fusion.AddOp: operator.add,
    fusion.SubOp: operator.sub,
    fusion.MulOp: operator.mul,
    fusion.PowOp: operator.pow,
    fusion.DivOp: operator.truediv,
}


@_handles(*_ARITH)
def _arith(run: _Run, op: Operation) -> list[Value]:
    run.check_broadcast(op)
    lhs, rhs = op.operands
    rt = op.results[0].type.element_type
    if _is_int(rt) and isinstance(op, fusion.DivOp | fusion.PowOp):
        a, b = run.as_tensor(lhs, rt), run.as_tensor(rhs, rt)
        if isinstance(op, fusion.PowOp):
            return [torch.pow(a, b)]
        if bool((b == 0).any()):
            raise run.fail(op, f"integer division by zero ({run.operand(op, 1)} has a zero)")
        return [_by_minus_one_safely(lambda a, b: torch.div(a, b, rounding_mode="trunc"), a, b, negate=True)]
    return [_ARITH[type(op)](run.value(lhs), run.value(rhs))]


_SAME_TYPE: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    fusion.MaximumOp: torch.maximum,
    fusion.MinimumOp: torch.minimum,
}


@_handles(*_SAME_TYPE)
def _maximum_minimum(run: _Run, op: Operation) -> list[Value]:
    run.check_broadcast(op)
    rt = op.results[0].type.element_type
    a, b = (run.as_tensor(v, rt) for v in op.operands)
    return [_SAME_TYPE[type(op)](a, b)]


def _compute_dtype(t: Attribute) -> torch.dtype:
    """The dtype arithmetic on elements of type t is done in: f32 for 16-bit floats (as
    torch does op by op, and as generated kernels do), else t's own."""
    return torch_dtype(rules.compute_type(t))


def _by_minus_one_safely(
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], a: torch.Tensor, b: torch.Tensor, negate: bool
) -> torch.Tensor:
    """`fn(a, b)` for an integer division or remainder, with -1 divisors not given to torch
    (the integer minimum divided by -1 traps on x86 and kills the process): the quotient
    is then -a (wrapping, as torch's floor division gives), the remainder 0."""
    minus_one = b == -1
    r = fn(a, torch.where(minus_one, torch.ones_like(b), b))
    return torch.where(minus_one, -a, r) if negate else r


def _floor_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="floor")


_FLOAT_MATH: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    fusion.Atan2Op: torch.atan2,
    fusion.NextafterOp: torch.nextafter,
    fusion.FmodOp: torch.fmod,
    fusion.RemainderOp: torch.remainder,
    fusion.FloorDivideOp: _floor_divide,
}


@_handles(*_FLOAT_MATH)
def _float_math(run: _Run, op: Operation) -> list[Value]:
    """Binary math in the compute type (f32 for 16-bit floats), rounded once to the
    result type; integer division by zero (fmod, remainder, floor_divide) is an error."""
    run.check_broadcast(op)
    rt = op.results[0].type.element_type
    fn = _FLOAT_MATH[type(op)]
    if isinstance(op, fusion.NextafterOp):  # steps by the result type's own spacing
        a, b = (run.as_tensor(v, rt) for v in op.operands)
        return [fn(a, b)]
    ct = _compute_dtype(rt)
    a, b = (run.as_tensor(v, rt).to(ct) for v in op.operands)
    if ct.is_floating_point:
        return [fn(a, b).to(torch_dtype(rt))]
    if bool((b == 0).any()):
        raise run.fail(op, f"integer division by zero ({run.operand(op, 1)} has a zero)")
    return [_by_minus_one_safely(fn, a, b, negate=isinstance(op, fusion.FloorDivideOp))]


@_handles(fusion.TriuOp, fusion.TrilOp)
def _triangular(run: _Run, op: Operation) -> list[Value]:
    """torch.triu / torch.tril with the op's diagonal offset."""
    assert isinstance(op, fusion.TriangularOp)
    fn = torch.triu if isinstance(op, fusion.TriuOp) else torch.tril
    return [fn(run.tensor(op.operands[0]), op.diagonal_value)]


def _shift_amount_in_range(b: torch.Tensor, width: int) -> torch.Tensor:
    return (b >= 0) & (b < width)


def _left_shift(a: torch.Tensor, b: torch.Tensor, width: int) -> torch.Tensor:
    ok = _shift_amount_in_range(b, width)
    return torch.where(ok, a << torch.where(ok, b, 0), 0)


def _right_shift(a: torch.Tensor, b: torch.Tensor, width: int) -> torch.Tensor:
    ok = _shift_amount_in_range(b, width)
    return a >> torch.where(ok, b, width - 1)


def _logical_right_shift(a: torch.Tensor, b: torch.Tensor, width: int) -> torch.Tensor:
    """a's bits read as unsigned, shifted right: the arithmetic shift with the copies
    of the sign bit masked off (the mask is computed in int64, where `1 << 63` wraps
    to the right bit pattern)."""
    ok = _shift_amount_in_range(b, width) & (b > 0)
    s = torch.where(ok, b, 1).to(torch.int64)
    mask = (torch.ones_like(s) << (width - s)) - 1
    shifted = ((a >> s.to(a.dtype)).to(torch.int64) & mask).to(a.dtype)
    return torch.where(b == 0, a, torch.where(ok, shifted, 0))


_INTEGER_OPS: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]] = {
    fusion.BitwiseAndOp: lambda a, b, w: torch.bitwise_and(a, b),
    fusion.BitwiseOrOp: lambda a, b, w: torch.bitwise_or(a, b),
    fusion.BitwiseXorOp: lambda a, b, w: torch.bitwise_xor(a, b),
    fusion.BitwiseLeftShiftOp: _left_shift,
    fusion.BitwiseRightShiftOp: _right_shift,
    fusion.LogicalRightShiftOp: _logical_right_shift,
    fusion.GcdOp: lambda a, b, w: torch.gcd(a, b),
}


@_handles(*_INTEGER_OPS)
def _integer_op(run: _Run, op: Operation) -> list[Value]:
    """Bitwise ops, shifts and gcd, in the promoted integer (or i1) type."""
    run.check_broadcast(op)
    rt = op.results[0].type.element_type
    a, b = (run.as_tensor(v, rt) for v in op.operands)
    width = 1 if rt == i1 else _width(rt)
    return [_INTEGER_OPS[type(op)](a, b, width)]


_COMPARE: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    fusion.EqOp: torch.eq,
    fusion.NeOp: torch.ne,
    fusion.LtOp: torch.lt,
    fusion.LeOp: torch.le,
    fusion.GtOp: torch.gt,
    fusion.GeOp: torch.ge,
}


@_handles(*_COMPARE)
def _compare(run: _Run, op: Operation) -> list[Value]:
    run.check_broadcast(op)
    common = rules.promote([v.type for v in op.operands])
    a, b = (run.as_tensor(v, common) for v in op.operands)
    return [_COMPARE[type(op)](a, b)]


@_handles(fusion.LogicalAndOp, fusion.LogicalOrOp)
def _logical(run: _Run, op: Operation) -> list[Value]:
    run.check_broadcast(op)
    a, b = (run.as_tensor(v, i1) for v in op.operands)  # x != 0, for every type
    fn = torch.logical_and if isinstance(op, fusion.LogicalAndOp) else torch.logical_or
    return [fn(a, b)]


@_handles(fusion.FmaOp)
def _fma(run: _Run, op: Operation) -> list[Value]:
    """`lhs * rhs + addend` rounded once in the compute type (f32 for 16-bit floats, then
    rounded to the result type, as generated kernels do); the operands are converted to the
    compute type first, as kernels convert them."""
    run.check_broadcast(op)
    rt = op.results[0].type.element_type
    ct = rules.compute_type(rt)
    a, b, c = (run.as_tensor(v, ct) for v in op.operands)
    r = _fma_f32(a, b, c) if a.dtype == torch.float32 else _fma_f64(a, b, c)
    return [r.to(torch_dtype(rt))]


def _fma_f32(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """The f32 fma: the product of two f32 values is exact in f64; the sum is rounded to
    f64 *to odd* (Boldo and Melquiond: the f64 sum, moved one step toward the exact value
    where that sum was inexact and its last bit even; the exact error comes from Knuth's
    TwoSum), and a value rounded to odd with 53 >= 24 + 2 bits rounds to the nearest f32
    as the exact value would: one rounding in all."""
    p = a.double() * b.double()
    cd = c.double()
    s = p + cd
    z = s - p
    err = (p - (s - z)) + (cd - z)
    even = (s.view(torch.int64) & 1) == 0
    step = (err != 0) & even & torch.isfinite(s)
    toward = torch.where(err > 0, math.inf, -math.inf)
    return torch.where(step, torch.nextafter(s, toward), s).float()


def _fma_f64(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """The f64 fma, element by element in exact rationals, rounded once to f64 (Python's
    int division is correctly rounded). Where an operand is not finite, or the exact
    result is 0 (whose sign IEEE gives as the sum of the signed zeros, exactly what the
    unfused `a * b + c` computes there, its product being exact), the unfused result."""
    a, b, c = torch.broadcast_tensors(a, b, c)
    unfused = a * b + c
    out = []
    for x, y, w, u in zip(a.flatten().tolist(), b.flatten().tolist(), c.flatten().tolist(),
                          unfused.flatten().tolist()):
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(w)):
            out.append(u)
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(w)
        if exact == 0:
            out.append(u)
            continue
        try:
            out.append(exact.numerator / exact.denominator)
        except OverflowError:
            out.append(math.copysign(math.inf, exact))
    return torch.tensor(out, dtype=torch.float64, device=a.device).reshape(a.shape)


@_handles(fusion.WhereOp)
def _where(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.WhereOp)
    run.check_broadcast(op)
    rt = op.result.type.element_type
    pred = run.as_tensor(op.pred, i1)
    return [torch.where(pred, run.as_tensor(op.on_true, rt), run.as_tensor(op.on_false, rt))]


@_handles(fusion.SetOp, *COMM_OPS)  # comm ops reshard: on global tensors they copy
def _set(run: _Run, op: Operation) -> list[Value]:
    return [run.tensor(op.operands[0]).clone()]


@_handles(fusion.CastOp)
def _cast(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.CastOp)
    x = run.tensor(op.input)
    et = op.result.type.element_type
    if et == i1:
        return [x != 0]
    return [x.to(torch_dtype(et))]  # float -> int truncates toward zero


# --------------------------------------------------------------------------- #
# Creation                                                                    #
# --------------------------------------------------------------------------- #


def _convert(run: _Run, op: Operation, v: Scalar, t: Attribute, what: str) -> Scalar:
    """A scalar converted to element type `t` as `fusion.cast` converts elements."""
    if t == i1:
        return v != 0
    if _is_int(t):
        if isinstance(v, float):
            if not math.isfinite(v):
                raise run.fail(op, f"{what} {v} has no {type_name(t)} value")
            v = math.trunc(v)
        return _wrap(int(v), t)
    return _round_float(float(v), t)


@_handles(fusion.FullOp)
def _full(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.FullOp)
    shape = run.extents(op, op.static_sizes, op.sizes, "sizes")
    et = op.result.type.element_type
    value = _convert(run, op, run.scalar(op.value), et, "the fill value")
    return [torch.full(shape, value, dtype=torch_dtype(et), device=run.device)]


@_handles(fusion.IotaOp)
def _iota(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.IotaOp)
    (n,) = run.extents(op, op.static_length, op.length, "length")
    et = op.result.type.element_type
    start = _convert(run, op, run.scalar(op.start), et, "start")
    step = _convert(run, op, run.scalar(op.step), et, "step")
    exact = torch.float64 if rules.is_float(et) else torch.int64
    index = torch.arange(n, dtype=exact, device=run.device)
    return [(index * step + start).to(torch_dtype(et))]


@_handles(fusion.RandOp, fusion.RandnOp)
def _random(run: _Run, op: Operation) -> list[Value]:
    """Philox bits computed with numpy (`allotment.philox`), independently of the kernels."""
    assert isinstance(op, fusion.RandomOp)
    shape = run.extents(op, op.static_sizes, op.sizes, "sizes")
    seed, offset = int(run.scalar(op.seed)), int(run.scalar(op.offset))
    dtype = torch_dtype(op.result.type.element_type)
    draw = philox.normal if isinstance(op, fusion.RandnOp) else philox.uniform
    return [draw(seed, offset, prod(shape), dtype).reshape(shape).to(run.device)]


# --------------------------------------------------------------------------- #
# Shape ops                                                                   #
# --------------------------------------------------------------------------- #


def _ints(attr: DenseArrayBase) -> list[int]:
    return [int(v) for v in attr.get_values()]


@_handles(fusion.BroadcastInDimOp)
def _broadcast_in_dim(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.BroadcastInDimOp)
    x = run.tensor(op.input)
    out = run.extents(op, op.static_shape, op.shape, "shape")
    in_ir = op.input.type.get_shape()
    view = [1] * len(out)
    for src, d in enumerate(_ints(op.broadcast_dims)):
        if in_ir[src] == 1:
            continue
        if x.shape[src] != out[d]:
            hint = "; only static size-1 dimensions broadcast" if x.shape[src] == 1 else ""
            raise run.fail(
                op,
                f"input dimension {src} has extent {x.shape[src]} at run time, but result "
                f"dimension {d} has extent {out[d]}{hint}",
            )
        view[d] = x.shape[src]
    return [x.reshape(view).expand(out)]


@_handles(fusion.ExpandOp)
def _expand(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.ExpandOp)
    x = run.tensor(op.input)
    out = run.extents(op, op.static_shape, op.shape, "shape")
    for d, (e_ir, e, o) in enumerate(zip(op.input.type.get_shape(), x.shape, out)):
        if e_ir != 1 and e != o:
            hint = "; only static size-1 dimensions expand" if e == 1 else ""
            raise run.fail(
                op,
                f"dimension {d} has extent {e} at run time, but the shape asks for {o}{hint}",
            )
    return [x.expand(out)]


@_handles(fusion.ReshapeOp)
def _reshape(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.ReshapeOp)
    x = run.tensor(op.input)
    shape = run.extents(op, op.static_shape, op.shape, "shape")
    numel = x.numel()
    if -1 in shape:
        k = shape.index(-1)
        rest = prod(e for i, e in enumerate(shape) if i != k)
        inferred = view_extents.reshape_inferred(numel, rest)
        if inferred is None:
            why = "the other extents multiply to 0" if rest == 0 else f"not divisible by {rest}"
            raise run.fail(
                op,
                f"cannot infer the -1 extent of the shape {_fmt(shape)}: the input "
                f"{_fmt(x.shape)} has {numel} elements, {why}",
            )
        shape[k] = inferred
    elif prod(shape) != numel:
        raise run.fail(
            op,
            f"cannot reshape {_fmt(x.shape)} ({numel} elements) to {_fmt(shape)} "
            f"({prod(shape)} elements)",
        )
    return [x.reshape(shape)]


@_handles(fusion.PermuteOp)
def _permute(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.PermuteOp)
    x = run.tensor(op.input)
    return [x.permute(rules.normalize_dims(_ints(op.dims), x.dim()))]


@_handles(fusion.SqueezeOp)
def _squeeze(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.SqueezeOp)
    x = run.tensor(op.input)
    dims = rules.normalize_dims(_ints(op.dims), x.dim())
    return [x.reshape([e for d, e in enumerate(x.shape) if d not in dims])]


@_handles(fusion.SliceOp)
def _slice(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.SliceOp)
    x = run.tensor(op.input)
    start = run.extents(op, op.static_start, op.start, "start", minimum=None)
    stop = run.extents(op, op.static_stop, op.stop, "stop", minimum=None)
    step = run.extents(op, op.static_step, op.step, "step", minimum=1)
    # Where each dimension's slice starts and how long it is: torch's rule, from
    # `view_extents` (the one definition; tests compare it with torch's slicing).
    bounds = [view_extents.slice_bounds(e, a, b, s) for e, a, b, s in zip(x.shape, start, stop, step)]
    return [x[tuple(slice(first, first + count * s, s) for (first, count), s in zip(bounds, step))]]


@_handles(fusion.PadOp)
def _pad(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.PadOp)
    x = run.tensor(op.input)
    low = run.extents(op, op.low, op.dynamic_low, "low", minimum=None)
    high = run.extents(op, op.high, op.dynamic_high, "high", minimum=None)
    et = op.result.type.element_type
    value = _convert(run, op, run.scalar(op.value), et, "the padding value")
    shape = [view_extents.pad_extent(e, lo, hi) for e, lo, hi in zip(x.shape, low, high)]
    for d, (e, lo, hi, n) in enumerate(zip(x.shape, low, high, shape)):
        if n < 0:
            raise run.fail(op, f"dimension {d}: padded extent {lo} + {e} + {hi} = {n} is negative")
    out = torch.full(shape, value, dtype=x.dtype, device=x.device)
    # A negative width crops (torch.nn.functional.pad): copy the overlap only.
    src = tuple(slice(max(-lo, 0), max(-lo, 0) + max(min(e, n - lo) - max(-lo, 0), 0))
                for e, lo, n in zip(x.shape, low, shape))
    dst = tuple(slice(s.start + lo, s.stop + lo) for s, lo in zip(src, low))
    out[dst] = x[src]
    return [out]


@_handles(fusion.CatOp)
def _cat(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.CatOp)
    xs = [run.tensor(v) for v in op.inputs]
    (dim,) = rules.normalize_dims([op.dim.value.data], xs[0].dim(), "dim")
    for d in range(xs[0].dim()):
        if d == dim:
            continue
        extents = [x.shape[d] for x in xs]
        if len(set(extents)) > 1:
            listed = ", ".join(f"{run.operand(op, i)} has {e}" for i, e in enumerate(extents))
            raise run.fail(
                op,
                f"dimension {d} extents differ at run time: {listed}; "
                f"only dimension {dim} may differ",
            )
    return [torch.cat(xs, dim)]


# --------------------------------------------------------------------------- #
# Indexing                                                                    #
# --------------------------------------------------------------------------- #


def _checked_index(run: _Run, op: fusion.IndexingOp, extent: int) -> torch.Tensor:
    """The index operand as i64, every entry in [0, extent) (negative ones are errors, as
    in torch.gather and torch.index_select), else an error naming the operand."""
    idx = run.tensor(op.index_operand)
    k = list(op.operands).index(op.index_operand)
    s = list(op.operands).index(op.source_operand)
    if idx.numel() and (bool((idx < 0).any()) or bool((idx >= extent).any())):
        bad = idx[(idx < 0) | (idx >= extent)].flatten()[0].item()
        raise run.fail(op, f"{run.operand(op, k)} holds index {bad}, outside [0, {extent}) of dimension "
                           f"{op.indexed_dim()} of {run.operand(op, s)}")
    return idx.to(torch.int64)


def _require_extents(run: _Run, op: fusion.IndexingOp, a: torch.Tensor, b: torch.Tensor, what: str,
                     skip: int | None, exact: bool) -> None:
    """a's extents equal (exact) or at most (not exact) b's, in every dim but `skip`."""
    for d, (x, y) in enumerate(zip(a.shape, b.shape)):
        if d != skip and (x != y if exact else x > y):
            raise run.fail(op, f"dimension {d}: {what} extent {x} {'must equal' if exact else 'exceeds'} {y}")


@_handles(fusion.IndexSelectOp, fusion.GatherOp, fusion.TakeAlongAxisOp, fusion.EmbeddingOp)
def _gather(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.IndexingOp)
    x = run.tensor(op.source_operand)
    dim = op.indexed_dim()
    idx = _checked_index(run, op, x.shape[dim])
    if isinstance(op, fusion.IndexSelectOp):
        return [torch.index_select(x, dim, idx)]
    if isinstance(op, fusion.EmbeddingOp):
        return [torch.nn.functional.embedding(idx, x)]
    _require_extents(run, op, idx, x, "the index", dim, isinstance(op, fusion.TakeAlongAxisOp))
    return [torch.gather(x, dim, idx)]


@_handles(fusion.ScatterOp)
def _scatter(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.ScatterOp)
    x, src = run.tensor(op.input), run.tensor(op.src)
    dim = op.indexed_dim()
    idx = _checked_index(run, op, x.shape[dim])
    _require_extents(run, op, idx, src, "the index", None, True)
    _require_extents(run, op, idx, x, "the index", dim, False)
    return [torch.scatter(x, dim, idx, src)]


@_handles(fusion.IndexPutAccumulateOp)
def _index_put_accumulate(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.IndexPutAccumulateOp)
    acc, value = run.tensor(op.acc), run.tensor(op.value)
    idx = _checked_index(run, op, acc.shape[0])
    if value.shape[0] != idx.shape[0]:
        raise run.fail(op, f"dimension 0: the value extent {value.shape[0]} must equal the index length {idx.shape[0]}")
    _require_extents(run, op, value, acc, "the value", 0, True)
    return [acc.index_put((idx,), value, accumulate=True)]


# --------------------------------------------------------------------------- #
# Reductions                                                                  #
# --------------------------------------------------------------------------- #


def _reduced(x: torch.Tensor, dims: Sequence[int], keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if d in dims else e for d, e in enumerate(x.shape)]
    return [e for d, e in enumerate(x.shape) if d not in dims]


def _prod(x: torch.Tensor, dims: list[int], keepdim: bool, dtype: torch.dtype) -> torch.Tensor:
    """Product over several dimensions in one pass (torch.prod takes one dim)."""
    kept = [d for d in range(x.dim()) if d not in dims]
    n = prod(x.shape[d] for d in dims)
    flat = x.permute(kept + dims).reshape([x.shape[d] for d in kept] + [n])
    return torch.prod(flat, -1, dtype=dtype).reshape(_reduced(x, dims, keepdim))


@_handles(fusion.SumOp, fusion.ProdOp, fusion.MaxOp, fusion.MinOp, fusion.MeanOp)
def _reduction(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.ReductionOp)
    x = run.tensor(op.input)
    dims = op.reduced_dims()
    keepdim = op.keepdim is not None
    dtype = torch_dtype(op.result.type.element_type)
    if not dims:  # reduces nothing (torch would reduce everything)
        return [x.to(dtype, copy=True)]
    if isinstance(op, fusion.SumOp):
        return [torch.sum(x, dims, keepdim=keepdim, dtype=dtype)]
    if isinstance(op, fusion.ProdOp):  # multiplied in the op's order of dims, as written
        return [_prod(x, rules.normalize_dims(list(op.dims.get_values()), x.dim()), keepdim, dtype)]
    if isinstance(op, fusion.MeanOp):
        return [torch.mean(x, dims, keepdim=keepdim)]
    empty = [d for d in dims if x.shape[d] == 0]
    if empty:  # even when the result is empty: torch raises too
        raise run.fail(
            op,
            f"cannot reduce dimension {empty[0]} of extent 0 (input {_fmt(x.shape)}): "
            f"{op.name.removeprefix('fusion.')} has no identity",
        )
    fn = torch.amax if isinstance(op, fusion.MaxOp) else torch.amin
    return [fn(x, dims, keepdim=keepdim)]


@_handles(fusion.WelfordOp)
def _welford(run: _Run, op: Operation) -> list[Value]:
    """avg, var_sum = sum((x - avg)^2) and n, computed in the result type (f32 for 16-bit inputs)."""
    assert isinstance(op, fusion.WelfordOp)
    x = run.tensor(op.input)
    xc = x.to(torch_dtype(op.avg.type.element_type))
    dims = rules.normalize_dims(_ints(op.dims), x.dim())
    keep = op.keepdim is not None
    n = prod(x.shape[d] for d in dims)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mean of no elements is NaN
        avg = xc.mean(dims, keepdim=True) if dims else xc.clone()
    var_sum = ((xc - avg) ** 2).sum(dims, keepdim=keep) if dims else torch.zeros_like(xc)
    if not keep and dims:
        avg = avg.squeeze(dims)
    count = torch.full(var_sum.shape, n, dtype=torch.int64, device=run.device)
    return [avg, var_sum, count]


@_handles(fusion.VarMeanOp)
def _var_mean(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.VarMeanOp)
    x = run.tensor(op.input)
    dims = rules.normalize_dims(_ints(op.dims), x.dim())
    correction = op.correction.value.data
    if not dims:  # one element per result: var = 0 / max(1 - correction, 0)
        return [torch.zeros_like(x) / max(1 - correction, 0), x.clone()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "degrees of freedom is <= 0"
        var, mean = torch.var_mean(x, dims, correction=correction, keepdim=op.keepdim is not None)
    return [var, mean]


# --------------------------------------------------------------------------- #
# Scans and sorts                                                             #
# --------------------------------------------------------------------------- #


@_handles(fusion.CumsumOp, fusion.CumprodOp)
def _accumulating_scan(run: _Run, op: Operation) -> list[Value]:
    """torch.cumsum / torch.cumprod; f16 and bf16 accumulate in f32 (rounded once), bool
    and integers in i64."""
    assert isinstance(op, fusion.AccumulatingScanOp)
    x = run.tensor(op.input)
    dtype = torch_dtype(op.result.type.element_type)
    fn = torch.cumsum if isinstance(op, fusion.CumsumOp) else torch.cumprod
    return [fn(x.to(_compute_dtype(op.result.type.element_type)), op.scan_dim()).to(dtype)]


@_handles(fusion.CummaxOp, fusion.CumminOp)
def _selecting_scan(run: _Run, op: Operation) -> list[Value]:
    """torch.cummax / torch.cummin (on the CPU: ties give the last index, NaN sticks)."""
    assert isinstance(op, fusion.SelectingScanOp)
    x = run.tensor(op.input)
    fn = torch.cummax if isinstance(op, fusion.CummaxOp) else torch.cummin
    values, indices = fn(x.cpu(), op.scan_dim())
    return [values.to(x.device), indices.to(x.device)]


def _stable_sort(x: torch.Tensor, dim: int, descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """A stable sort on the CPU (NaN largest, -0.0 equal to 0.0, equal elements in row order)."""
    values, indices = torch.sort(x.cpu(), dim=dim, descending=descending, stable=True)
    return values.to(x.device), indices.to(x.device)


@_handles(fusion.ArgsortOp)
def _argsort(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.ArgsortOp)
    x = run.tensor(op.input)
    return [_stable_sort(x, op.sort_dim(), op.descending is not None)[1]]


@_handles(fusion.TopkOp)
def _topk(run: _Run, op: Operation) -> list[Value]:
    """The first k of a stable sort: among equal elements the earlier index comes first."""
    assert isinstance(op, fusion.TopkOp)
    x = run.tensor(op.input)
    dim, k = op.sort_dim(), op.k.value.data
    if k > x.shape[dim]:
        raise run.fail(op, f"k = {k} exceeds dimension {dim} of the input ({_fmt(x.shape)})")
    values, indices = _stable_sort(x, dim, op.largest is not None)
    return [values.narrow(dim, 0, k), indices.narrow(dim, 0, k)]


# --------------------------------------------------------------------------- #
# Matrix products                                                             #
# --------------------------------------------------------------------------- #


@_handles(fusion.MatmulOp)
def _matmul(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.MatmulOp)
    a, b = run.tensor(op.lhs), run.tensor(op.rhs)
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.dim() == 1 else b.shape[-2]
    if k_a != k_b:
        raise run.fail(op, f"contracted extents differ at run time: lhs has {k_a}, rhs has {k_b}")
    if a.dim() >= 2 and b.dim() >= 2:
        ir_a, ir_b = list(op.lhs.type.get_shape()[:-2]), list(op.rhs.type.get_shape()[:-2])
        rt_a, rt_b = list(a.shape[:-2]), list(b.shape[:-2])
        n = max(len(ir_a), len(ir_b))
        pad = lambda s: [1] * (n - len(s)) + s  # noqa: E731
        ir_a, ir_b, rt_a, rt_b = pad(ir_a), pad(ir_b), pad(rt_a), pad(rt_b)
        for d in range(n):
            fixed = [(side, e) for side, ir, e in (("lhs", ir_a[d], rt_a[d]), ("rhs", ir_b[d], rt_b[d])) if ir != 1]
            if len({e for _, e in fixed}) > 1:
                raise run.fail(
                    op,
                    f"batch dimension {d} extents differ at run time: lhs has {rt_a[d]}, "
                    f"rhs has {rt_b[d]}; only static size-1 dimensions broadcast",
                )
    return [torch.matmul(a, b)]


@_handles(fusion.AtenOp)
def _aten(run: _Run, op: Operation) -> list[Value]:
    """The ATen call itself, with the op's arguments (`backend/kernels/aten_call.py` builds the same call)."""
    assert isinstance(op, fusion.AtenOp)
    from allotment.aten import aten_operator

    def decode(x: object) -> object:
        if isinstance(x, list):
            return [decode(e) for e in x]
        if not isinstance(x, dict):
            return x
        if "t" in x:
            t = run.tensor(op.inputs[x["t"]])
            return t.view(getattr(torch, x["view"])) if "view" in x else t
        if "s" in x:
            return run.scalar(op.scalars[x["s"]])
        if "device" in x:
            return run.device
        if "float" in x:
            return float(x["float"])
        for tag in ("dtype", "layout", "memory_format"):
            if tag in x:
                return getattr(torch, x[tag])
        raise run.fail(op, f"unknown argument {sorted(x)}")

    call = op.decoded_call
    args, kwargs = decode(call.get("args", [])), {k: decode(v) for k, v in call.get("kwargs", {}).items()}
    try:
        result = aten_operator(op.target.data)(*args, **kwargs)
    except Exception as e:  # the IR's arguments: torch's refusal names the call at fault
        if isinstance(e, Error) or is_allocation_failure(e):
            raise
        raise run.fail(op, f"the call failed: {first_line(e)}") from None
    positions = call.get("results")
    if positions is not None and (not isinstance(result, tuple | list)
                                  or not all(0 <= i < len(result) for i in positions)):
        raise run.fail(op, f"results {positions} are not among what the call returned ({type(result).__name__})")
    results = [result] if positions is None else [result[i] for i in positions]
    carriers = {"uint64": torch.int64, "uint32": torch.int32, "uint8": torch.bool, "int8": torch.bool}
    views = call.get("views") or [None] * len(results)
    out = [r.view(carriers[v]) if v and isinstance(r, torch.Tensor) else r for r, v in zip(results, views)]
    for i, (r, v) in enumerate(zip(out, op.results)):  # what the operator returned is the IR's to declare
        got = _mismatch(r, v.type)
        if got is not None:
            raise run.fail(op, f"result #{i} is {got}, but the IR declares {type_name(v.type)}")
    return out


@_handles(fusion.LinearOp)
def _linear(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, fusion.LinearOp)
    x, w = run.tensor(op.input), run.tensor(op.weight)
    bias = run.tensor(op.bias) if op.bias is not None else None
    if x.shape[-1] != w.shape[-1]:
        raise run.fail(
            op,
            f"contracted extents differ at run time: input has {x.shape[-1]}, "
            f"weight has {w.shape[-1]}",
        )
    if w.dim() == 1:
        y = torch.matmul(x, w)
        return [y + bias if bias is not None else y]
    if bias is not None and bias.shape[0] != w.shape[0]:
        raise run.fail(
            op,
            f"bias has {bias.shape[0]} elements at run time, but the weight has "
            f"{w.shape[0]} out features",
        )
    return [torch.nn.functional.linear(x, w, bias)]


@_handles(fusion.MeshOp)
def _mesh(run: _Run, op: Operation) -> list[Value]:
    return []


# --------------------------------------------------------------------------- #
# Scalars: arith and tensor.dim                                               #
# --------------------------------------------------------------------------- #


@_handles(arith.ConstantOp)
def _constant(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, arith.ConstantOp)
    t, attr = op.result.type, op.value
    if isinstance(attr, IntegerAttr) and (_is_int(t) or t == i1):
        return [_wrap(attr.value.data, t)]
    if isinstance(attr, FloatAttr) and rules.is_float(t):
        return [_round_float(attr.value.data, t)]
    raise run.fail(
        op,
        f"a constant of type {type_name(t)} is not supported by the reference evaluator "
        "(only scalar constants; use fusion.full for tensors)",
    )


@_handles(cplx.ConstantOp)
def _complex_constant(run: _Run, op: Operation) -> list[Value]:
    """A complex scalar constant (its parts rounded to the parts' type)."""
    assert isinstance(op, cplx.ConstantOp)
    parts = op.complex.type.element_type  # type: ignore[attr-defined]
    re, im = (_round_float(float(a.value.data), parts) for a in op.value.data)  # type: ignore[attr-defined]
    return [complex(re, im)]


@_handles(tensor.DimOp)
def _dim(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, tensor.DimOp)
    x = run.tensor(op.source)
    d = int(run.scalar(op.index))
    if not 0 <= d < x.dim():
        raise run.fail(op, f"index {d} is out of range for a tensor of rank {x.dim()}")
    return [x.shape[d]]


_INT_BINARY: tuple[type[Operation], ...] = tuple(
    cls for cls in arith.Arith.operations if size_arith.arith_op_name(cls.name) is not None
)
"""Integer `arith` ops: their meaning is `extents.size_arith`'s, the one definition."""


def _scalar_operands(run: _Run, op: Operation) -> list[Scalar]:
    for v in list(op.operands) + list(op.results):
        if not (rules.is_float(v.type) or _is_int(v.type) or v.type == i1):
            raise run.fail(
                op,
                f"operands of type {type_name(v.type)} are not supported by the reference "
                "evaluator (arith is for scalars here; use fusion ops on tensors)",
            )
    return [run.scalar(v) for v in op.operands]


@_handles(*_INT_BINARY)
def _int_binary(run: _Run, op: Operation) -> list[Value]:
    """`size_arith.apply`: `index` overflow is an error, `iN` wraps; a zero divisor is an error."""
    a, b = _scalar_operands(run, op)
    t = op.results[0].type
    name = size_arith.arith_op_name(op.name)
    assert name is not None
    try:
        value = size_arith.apply(
            name, _signed(a, t), _signed(b, t), _width(t), wrap=not isinstance(t, IndexType)
        )
    except size_arith.SizeArithmeticError as e:
        why = str(e).removeprefix(f"{op.name}: ")
        raise run.fail(op, f"{why} ({run.operand(op, 0)}, {run.operand(op, 1)})") from None
    return [_wrap(value, t)]


_FLOAT_BINARY: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    arith.AddfOp: torch.add,
    arith.SubfOp: torch.sub,
    arith.MulfOp: torch.mul,
    arith.DivfOp: torch.div,
    arith.MaximumfOp: torch.maximum,
    arith.MinimumfOp: torch.minimum,
    arith.MaxnumfOp: torch.fmax,
    arith.MinnumfOp: torch.fmin,
}


@_handles(*_FLOAT_BINARY)
def _float_binary(run: _Run, op: Operation) -> list[Value]:
    a, b = _scalar_operands(run, op)
    dtype = torch_dtype(op.results[0].type)
    ta, tb = torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype)
    return [float(_FLOAT_BINARY[type(op)](ta, tb).item())]


@_handles(arith.BitcastOp)
def _bitcast(run: _Run, op: Operation) -> list[Value]:
    """A float scalar's bits as a signed integer of its width (or back)."""
    (a,) = _scalar_operands(run, op)
    src, dst = op.operands[0].type, op.results[0].type
    x = torch.tensor(a, dtype=torch_dtype(src))
    if isinstance(dst, IntegerType):
        return [_signed(int(x.view(_INT_OF_WIDTH[_width(dst)]).item()), dst)]
    y = torch.tensor(_signed(a, src), dtype=_INT_OF_WIDTH[_width(src)]).view(torch_dtype(dst))
    return [float(y.item())]


_INT_OF_WIDTH = {16: torch.int16, 32: torch.int32, 64: torch.int64}


@_handles(arith.NegfOp)
def _negf(run: _Run, op: Operation) -> list[Value]:
    (a,) = _scalar_operands(run, op)
    return [-float(a)]


_CMPI: dict[int, Callable[[int, int], bool]] = {
    0: operator.eq, 1: operator.ne,
    2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge,  # signed
    6: operator.lt, 7: operator.le, 8: operator.gt, 9: operator.ge,  # unsigned
}


@_handles(arith.CmpiOp)
def _cmpi(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, arith.CmpiOp)
    a, b = _scalar_operands(run, op)
    t, pred = op.lhs.type, op.predicate.value.data
    conv = _unsigned if pred >= 6 else _signed
    return [_CMPI[pred](conv(a, t), conv(b, t))]


def _cmpf_ordered(fn: Callable[[float, float], bool]) -> Callable[[float, float], bool]:
    return lambda a, b: not (math.isnan(a) or math.isnan(b)) and fn(a, b)


def _cmpf_unordered(fn: Callable[[float, float], bool]) -> Callable[[float, float], bool]:
    return lambda a, b: math.isnan(a) or math.isnan(b) or fn(a, b)


_CMPF: dict[int, Callable[[float, float], bool]] = {
    0: lambda a, b: False,
    1: _cmpf_ordered(operator.eq), 2: _cmpf_ordered(operator.gt), 3: _cmpf_ordered(operator.ge),
    4: _cmpf_ordered(operator.lt), 5: _cmpf_ordered(operator.le), 6: _cmpf_ordered(operator.ne),
    7: _cmpf_ordered(lambda a, b: True),
    8: _cmpf_unordered(operator.eq), 9: _cmpf_unordered(operator.gt),
    10: _cmpf_unordered(operator.ge), 11: _cmpf_unordered(operator.lt),
    12: _cmpf_unordered(operator.le), 13: _cmpf_unordered(operator.ne),
    14: lambda a, b: math.isnan(a) or math.isnan(b),
    15: lambda a, b: True,
}


@_handles(arith.CmpfOp)
def _cmpf(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, arith.CmpfOp)
    a, b = _scalar_operands(run, op)
    return [bool(_CMPF[op.predicate.value.data](float(a), float(b)))]


@_handles(arith.SelectOp)
def _select(run: _Run, op: Operation) -> list[Value]:
    assert isinstance(op, arith.SelectOp)
    cond = run.value(op.cond)
    if isinstance(cond, torch.Tensor):
        raise run.fail(op, "a tensor condition is not supported by the reference evaluator (use fusion.where)")
    chosen = run.value(op.lhs if cond else op.rhs)
    return [chosen.clone() if isinstance(chosen, torch.Tensor) else chosen]


@_handles(arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp)
def _int_to_int(run: _Run, op: Operation) -> list[Value]:
    (a,) = _scalar_operands(run, op)
    return [_wrap(_signed(a, op.operands[0].type), op.results[0].type)]


@_handles(arith.ExtUIOp)
def _uint_to_int(run: _Run, op: Operation) -> list[Value]:
    (a,) = _scalar_operands(run, op)
    return [_wrap(_unsigned(a, op.operands[0].type), op.results[0].type)]


@_handles(arith.SIToFPOp, arith.UIToFPOp)
def _int_to_float(run: _Run, op: Operation) -> list[Value]:
    (a,) = _scalar_operands(run, op)
    conv = _unsigned if isinstance(op, arith.UIToFPOp) else _signed
    return [_round_float(float(conv(a, op.operands[0].type)), op.results[0].type)]


@_handles(arith.FPToSIOp, arith.FPToUIOp)
def _float_to_int(run: _Run, op: Operation) -> list[Value]:
    (a,) = _scalar_operands(run, op)
    t = op.results[0].type
    w = _width(t)
    lo, hi = (0, 1 << w) if isinstance(op, arith.FPToUIOp) else (-(1 << (w - 1)), 1 << (w - 1))
    if not math.isfinite(a) or not lo <= math.trunc(a) < hi:
        raise run.fail(op, f"{a} does not fit in {type_name(t)} (the result would be poison)")
    return [_wrap(math.trunc(a), t)]


@_handles(arith.ExtFOp, arith.TruncFOp)
def _float_to_float(run: _Run, op: Operation) -> list[Value]:
    (a,) = _scalar_operands(run, op)
    return [_round_float(float(a), op.results[0].type)]


# --------------------------------------------------------------------------- #
# Entry point                                                                 #
# --------------------------------------------------------------------------- #


def _arg_types(fn: func.FuncOp) -> list[Attribute]:
    return list(fn.function_type.inputs.data)


def _arg_hint(fn: func.FuncOp, i: int) -> str | None:
    return None if fn.is_declaration else fn.args[i].name_hint


def _argument(fn: func.FuncOp, i: int) -> str:
    hint = _arg_hint(fn, i)
    name = f"%{hint}: " if hint else ""
    return f"argument #{i} ({name}{type_name(_arg_types(fn)[i])})"


def _bind_scalar(fn: func.FuncOp, i: int, x: object) -> Scalar:
    t = _arg_types(fn)[i]
    what = _argument(fn, i)
    if isinstance(x, torch.Tensor):
        raise EvaluationError(f"{what} is a scalar, but the input is a tensor")
    if t not in rules.SCALAR_TYPES:
        raise EvaluationError(f"{what} has type {type_name(t)}, which no scalar argument may have")
    if t == i1:
        if not isinstance(x, bool):
            raise EvaluationError(f"{what} expects a bool, got {type(x).__name__} {x!r}")
        return x
    if _is_int(t):
        if isinstance(x, bool) or not isinstance(x, int):
            raise EvaluationError(f"{what} expects an int, got {type(x).__name__} {x!r}")
        w = _width(t)
        if not -(1 << (w - 1)) <= x < 1 << (w - 1):
            raise EvaluationError(f"{what}: {x} does not fit in {type_name(t)}")
        return x
    if rules.is_float(t):
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise EvaluationError(f"{what} expects a float, got {type(x).__name__} {x!r}")
        return _round_float(float(x), t)
    if rules.is_complex(t):
        if isinstance(x, bool) or not isinstance(x, int | float | complex):
            raise EvaluationError(f"{what} expects a complex number, got {type(x).__name__} {x!r}")
        parts = rules.component_type(t)
        return complex(_round_float(complex(x).real, parts), _round_float(complex(x).imag, parts))
    raise EvaluationError(f"{what}: arguments of this type are not supported by the reference evaluator")


def _bind_tensor(fn: func.FuncOp, i: int, x: object) -> torch.Tensor:
    t = _arg_types(fn)[i]
    assert isinstance(t, TensorType)
    what = _argument(fn, i)
    if not isinstance(x, torch.Tensor):
        raise EvaluationError(f"{what} is a tensor, but the input is {type(x).__name__} {x!r}")
    dtype = torch_dtype(t.element_type)
    if x.dtype != dtype:
        raise EvaluationError(f"{what}: the input has dtype {x.dtype}, expected {dtype}")
    shape = t.get_shape()
    if x.dim() != len(shape):
        raise EvaluationError(
            f"{what}: the input has rank {x.dim()} (shape {_fmt(x.shape)}), expected rank {len(shape)}"
        )
    for d, (e, a) in enumerate(zip(shape, x.shape)):
        if e != DYNAMIC and e != a:
            raise EvaluationError(
                f"{what}: the input has extent {a} in dimension {d} (shape {_fmt(x.shape)}), "
                f"expected {e}"
            )
    return x


def _device_of(fn: func.FuncOp, inputs: Sequence[object], device: torch.device | str | None) -> torch.device:
    devices = {x.device for x in inputs if isinstance(x, torch.Tensor)}
    if len(devices) > 1:
        listed = ", ".join(
            f"{_argument(fn, i)} on {x.device}" for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)
        )
        raise EvaluationError(f"the input tensors are on different devices: {listed}")
    if device is not None:
        device = torch.device(device)
        if not devices:
            return device
        actual = next(iter(devices))
        if actual.type != device.type or device.index not in (None, actual.index):
            raise EvaluationError(f"the input tensors are on {actual}, not on {device}")
    return devices.pop() if devices else torch.device("cpu")


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.numel() == 0 or b.numel() == 0:
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _outputs(run: _Run, values: Sequence[Value], fn: func.FuncOp, inputs: Sequence[object]) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for v, t in zip(values, fn.function_type.outputs.data):
        if not isinstance(v, torch.Tensor):
            v = _scalar_tensor(v, torch_dtype(t), run.device)
        v = v.contiguous()
        others = [x for x in inputs if isinstance(x, torch.Tensor)] + out
        if any(_shares_memory(v, x) for x in others):
            v = v.clone()
        out.append(v)
    return out


def evaluate(
    fn: func.FuncOp,
    inputs: Sequence[torch.Tensor | int | float | bool],
    *,
    device: torch.device | str | None = None,
) -> list[torch.Tensor]:
    """Runs the fusion-level function `fn` on `inputs`, one per argument, in order.

    Tensors must match their argument's element type, rank and static extents
    and share one device, where the results are made (`device`, default the
    inputs' device or the CPU, matters only when no input is a tensor). Scalar
    arguments take Python numbers: bool for i1, int for i32/i64/index, int or
    float for float types. `fn` must have been verified. Inputs are never
    modified. Raises `EvaluationError` for invalid inputs, unsupported ops and
    run-time precondition failures.
    """
    if fn.is_declaration:
        raise EvaluationError(f"@{fn.sym_name.data} is a declaration: it has no body to evaluate")
    args = fn.args
    if len(inputs) != len(args):
        expected = ", ".join(_argument(fn, i) for i in range(len(args))) or "none"
        raise EvaluationError(
            f"@{fn.sym_name.data} takes {len(args)} inputs, got {len(inputs)} (arguments: {expected})"
        )
    run = _Run(_device_of(fn, inputs, device))
    for i, (arg, x) in enumerate(zip(args, inputs)):
        if isinstance(arg.type, TensorType):
            run.env[arg] = _bind_tensor(fn, i, x)
        else:
            run.env[arg] = _bind_scalar(fn, i, x)
    if len(fn.body.blocks) != 1:
        raise EvaluationError(f"@{fn.sym_name.data} has several blocks; the reference evaluator runs one")
    with torch.no_grad():
        values = _run_block(run, fn.body.block)
    return _outputs(run, values, fn, inputs)


_TERMINATORS = (func.ReturnOp, fusion.YieldOp)


def _run_block(run: _Run, block: Block) -> list[Value]:
    """Runs `block`'s ops in order; the values its terminator returns or yields."""
    for op in block.ops:
        if isinstance(op, _TERMINATORS):
            return [run.value(v) for v in op.operands]
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise _unsupported(op)
        results = handler(run, op)
        if len(results) != len(op.results):
            raise ReferenceBug(f"{op.name}: {len(results)} values for {len(op.results)} results")
        for i, (res, x) in enumerate(zip(op.results, results)):
            run.check_result(op, i, x)
            run.env[res] = x
    raise EvaluationError("a block does not end with func.return or fusion.yield")


@_handles(fusion.SegmentOp)
def _segment(run: _Run, op: Operation) -> list[Value]:
    """The body, its arguments bound to the inputs; the segment's results are what it yields."""
    assert isinstance(op, fusion.SegmentOp)
    block = op.body.block
    for arg, v in zip(block.args, op.inputs):
        run.env[arg] = run.value(v)
    return _run_block(run, block)


def _unsupported(op: Operation) -> EvaluationError:
    loc = _location(op)
    where = f" (at {loc})" if loc else ""
    return EvaluationError(f"not supported by the reference evaluator: {op.name}{where}")


# --------------------------------------------------------------------------- #
# Random inputs                                                               #
# --------------------------------------------------------------------------- #

DEFAULT_SCALARS: Mapping[str, Scalar] = {"float": 1.0, "int": 1, "bool": True}
"""Values of scalar arguments not given to `random_inputs`, by kind: 1.0 for
f16/bf16/f32/f64, 1 for i32/i64/index, true for i1 (one is safe as an extent,
a step, a divisor and a multiplier)."""


def _arg_names(fn: func.FuncOp) -> list[str]:
    return [_arg_hint(fn, i) or f"arg{i}" for i in range(len(_arg_types(fn)))]


def _shape_for(fn: func.FuncOp, i: int, name: str, given: Sequence[int] | None) -> list[int]:
    t = _arg_types(fn)[i]
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    what = _argument(fn, i)
    if given is None:
        if DYNAMIC in shape:
            d = shape.index(DYNAMIC)
            raise EvaluationError(
                f"no shape given for {what}: dimension {d} is dynamic; "
                f"give its shape, e.g. {name}={'x'.join('8' if e == DYNAMIC else str(e) for e in shape)}"
            )
        return shape
    given = [int(e) for e in given]
    if len(given) != len(shape):
        raise EvaluationError(
            f"the shape {_fmt(given)} given for {what} has rank {len(given)}, expected {len(shape)}"
        )
    for d, (e, g) in enumerate(zip(shape, given)):
        if g < 0:
            raise EvaluationError(f"the shape {_fmt(given)} given for {what} has a negative extent")
        if g >= 2**63:
            raise EvaluationError(f"the shape {_fmt(given)} given for {what} has extent {g} in dimension {d}, "
                                  "which does not fit in a 64-bit index")
        if e != DYNAMIC and e != g:
            raise EvaluationError(
                f"the shape {_fmt(given)} given for {what} has extent {g} in dimension {d}, "
                f"but the type says {e}"
            )
    return given


def _random_tensor(shape: list[int], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point:
        src = torch.float64 if dtype == torch.float64 else torch.float32
        return torch.randn(shape, generator=gen, dtype=src).to(dtype)
    return torch.randint(-8, 8, shape, generator=gen, dtype=torch.int64).to(dtype)


def _scalar_for(fn: func.FuncOp, i: int, given: Scalar | None) -> Scalar:
    t = _arg_types(fn)[i]
    kind = "bool" if t == i1 else "int" if _is_int(t) else "float"
    if given is None:
        return DEFAULT_SCALARS[kind]
    if kind == "int" and isinstance(given, float):
        if not given.is_integer():
            raise EvaluationError(f"{_argument(fn, i)} is an integer, got {given!r}")
        given = int(given)
    if kind == "bool" and not isinstance(given, bool) and given in (0, 1):
        given = bool(given)
    if kind == "float" and isinstance(given, int) and not isinstance(given, bool):
        given = float(given)
    return _bind_scalar(fn, i, given)


def random_inputs(
    fn: func.FuncOp,
    shapes: Mapping[str, Sequence[int]] | None = None,
    scalars: Mapping[str, Scalar] | None = None,
    seed: int = 0,
    device: torch.device | str = "cpu",
) -> list[torch.Tensor | Scalar]:
    """Random inputs for `fn`, one per argument, in order.

    Arguments are named by their SSA name (`%x` is "x"; unnamed ones "arg0",
    "arg1", ... by position). `shapes` gives a tensor argument's full shape and
    is required when it has `?` extents; `scalars` gives scalar arguments'
    values (`DEFAULT_SCALARS` otherwise). Floating-point tensors are standard
    normal, integer tensors uniform in [-8, 8), bool tensors fair coins; the
    values depend only on `seed` (drawn on the CPU, then moved to `device`).
    """
    shapes, scalars = dict(shapes or {}), dict(scalars or {})
    names = _arg_names(fn)
    types = _arg_types(fn)
    tensor_names = [n for n, a in zip(names, types) if isinstance(a, TensorType)]
    scalar_names = [n for n, a in zip(names, types) if not isinstance(a, TensorType)]
    for given, valid, kind in ((shapes, tensor_names, "tensor"), (scalars, scalar_names, "scalar")):
        unknown = [n for n in given if n not in valid]
        if unknown:
            raise EvaluationError(
                f"@{fn.sym_name.data} has no {kind} argument named {', '.join(unknown)} "
                f"({kind} arguments: {', '.join(valid) or 'none'})"
            )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ArgumentError(f"seed must be an int from 0 to 2**64 - 1, not {seed!r}")
    gen = torch.Generator().manual_seed(seed)
    out: list[torch.Tensor | Scalar] = []
    for i, (name, ty) in enumerate(zip(names, types)):
        if isinstance(ty, TensorType):
            shape = _shape_for(fn, i, name, shapes.get(name))
            dtype = torch_dtype(ty.element_type)
            try:
                out.append(_random_tensor(shape, dtype, gen).to(device))
            except (RuntimeError, MemoryError) as e:  # torch: too large for memory or for its size type
                shown = "x".join(str(n) for n in shape) or "a 0-d tensor"
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise EvaluationError(
                    f"@{fn.sym_name.data}: cannot make input {name} of shape {shown} "
                    f"({math.prod(shape)} elements of {dtype}): {first}"
                ) from None
        else:
            out.append(_scalar_for(fn, i, scalars.get(name)))
    return out
