"""`fd.ops` elementwise ops: a mixin of `allotment.frontend.ops.Operators`.

The unary and binary ops of the dialect (`UNARY_OPS`, `BINARY_OPS`: one method
each, generated below with nvFuser's names), `where`, `cast`, `set`, `triu`/`tril`,
and the nvFuser ops composed of them (`silu`, `clamp`, `threshold`, `lerp`,
`addcmul`, `add_alpha`, `sub_alpha`, `isnan`, `isinf`, `isposinf`, `isneginf`,
`isfinite`, `real`, `imag`); and `fused_multiply_add` (`fusion.fma`, which nvFuser's
`fd.ops` lacks: a function of this module, not an `fd.ops` name). Typing is nvFuser's (see `allotment.frontend.ops`);
an op whose operands are all scalars is built with arith (`ScalarArithmetic`).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i1

from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError
from allotment.frontend.datatypes import DataType, to_element_type
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.operands import HALF, elem_of, is_tensor
from allotment.frontend.scalar_arith import ScalarArithmetic


class PointwiseOperators(ScalarArithmetic):
    """The elementwise ops of `fd.ops`; composites call the other families' ops through
    the composed `Operators`."""

    def _unary(self, name: str, cls: type[fusion.UnaryOp], to_float: bool, arg: object) -> Tensor | Scalar:
        self._open(name)
        v = self._operand(arg, name, "arg")
        if not is_tensor(v):
            return self._scalar_unary(name, v)
        if to_float and elem_of(v) in HALF:
            v = self._cast(v, f32)
        return self._tensor_op(name, lambda: cls(v))

    def _binary(self, name: str, cls: type[fusion.BinaryOp], promote: str, arg1: object, arg2: object) -> Tensor | Scalar:
        self._open(name)
        a = self._operand(arg1, name, "arg1")
        b = self._operand(arg2, name, "arg2")
        if not is_tensor(a) and not is_tensor(b):
            return self._scalar_binary(name, a, b)
        if (cls is fusion.PowOp and type(arg2) is int and arg2 < 0 and is_tensor(a)
                and not rules.is_float(elem_of(a))):
            # torch refuses a negative Python int exponent of an integer tensor (a tensor
            # exponent gives 0 or +-1, as the IR's fusion.pow does: tests/test_int_pow.py)
            raise ArgumentError(f"{name}: Integers to negative integer powers are not allowed "
                                f"(argument 'arg1' is {rules.type_name(a.type)}, argument 'arg2' is {arg2})")
        a, b = self._align([a, b])
        if promote != "none":
            a, b = self._promote(name, [a, b], promote == "float")
        return self._tensor_op(name, lambda: cls(a, b))

    def where(self, pred: object, arg1: object, arg2: object) -> Tensor | Scalar:
        """`pred ? arg1 : arg2`, elementwise; `pred` is a Bool tensor or scalar."""
        name = "where"
        self._open(name)
        c = self._operand(pred, name, "pred")
        if elem_of(c) != i1:
            raise ArgumentError(
                f"{name}: argument 'pred' must be a Bool tensor or scalar, got "
                f"{rules.type_name(c.type)}"
            )
        a = self._operand(arg1, name, "arg1")
        b = self._operand(arg2, name, "arg2")
        if not any(is_tensor(v) for v in (c, a, b)):
            t = a.type if a.type == b.type else self._scalar_common(a, b, False)
            x, y = self._convert_scalar(a, t), self._convert_scalar(b, t)
            return self._scalar_op(arith.SelectOp(c, x, y))
        c, a, b = self._align([c, a, b])
        return self._tensor_op(name, lambda: fusion.WhereOp(c, a, b))

    def cast(self, arg: object, dtype: DataType) -> Tensor | Scalar:
        """`arg` converted to `dtype` (float to int truncates; anything to Bool is `!= 0`)."""
        name = "cast"
        self._open(name)
        et = to_element_type(self._dtype(dtype, name))
        v = self._operand(arg, name, "arg")
        if not is_tensor(v):
            return Scalar(self._fd, self._convert_scalar(v, et), -1)
        if elem_of(v) == et:
            return self._tensor_op(name, lambda: fusion.SetOp(v))
        return self._tensor_op(name, lambda: fusion.CastOp(v, et))

    def set(self, arg: object) -> Tensor | Scalar:
        """A copy of `arg` (`fusion.set`)."""
        return self._unary("set", fusion.SetOp, False, arg)  # type: ignore[arg-type]

    def segment_set(self, arg: object) -> Tensor | Scalar:
        """nvFuser's segmentation hint; here a copy like `set`."""
        return self._unary("segment_set", fusion.SetOp, False, arg)  # type: ignore[arg-type]

    def triu(self, arg: object, diagonal: object = 0) -> Tensor:
        """The upper triangle of the last two dimensions (torch.triu): elements with
        `j - i < diagonal` become 0."""
        return self._triangular("triu", fusion.TriuOp, arg, diagonal)

    def tril(self, arg: object, diagonal: object = 0) -> Tensor:
        """The lower triangle of the last two dimensions (torch.tril): elements with
        `j - i > diagonal` become 0."""
        return self._triangular("tril", fusion.TrilOp, arg, diagonal)

    def _triangular(self, name: str, cls: type[fusion.TriangularOp], arg: object, diagonal: object) -> Tensor:
        self._open(name)
        t = self._tensor(arg, name, "arg")
        if isinstance(diagonal, Scalar) and isinstance(diagonal.constant, int) and not isinstance(diagonal.constant, bool):
            diagonal = diagonal.constant
        d = self._int(diagonal, name, "diagonal")
        return self._tensor_op(name, lambda: cls(t.value, d))

    # ------------------------------------------------------------------ #
    # Composites (nvFuser ops with no dialect op of their own)           #
    # ------------------------------------------------------------------ #

    def _keep_dtype(self, out: Tensor, like: Tensor) -> Tensor:
        return out if out.dtype() == like.dtype() else self.cast(out, like.dtype())  # type: ignore[return-value]

    def silu(self, arg: object) -> Tensor:
        """`x * sigmoid(x)`, in the input's floating-point type."""
        t = self._tensor(arg, "silu", "arg")
        if not rules.is_float(elem_of(t.value)):
            raise ArgumentError(f"silu: argument 'arg' must be a floating-point tensor, got {t.dtype()!r}")
        return self._keep_dtype(self.mul(t, self.sigmoid(t)), t)  # type: ignore[arg-type]

    def clamp(self, arg: object, min: object = None, max: object = None) -> Tensor:
        """`min(max(x, min), max)`, in the input's type (NaN propagates)."""
        t = self._tensor(arg, "clamp", "arg")
        out: Any = t
        if min is not None:
            out = self.maximum(out, self._scalar_value_arg(min, "clamp", "min"))
        if max is not None:
            out = self.minimum(out, self._scalar_value_arg(max, "clamp", "max"))
        return self._keep_dtype(out, t) if out is not t else self.set(t)  # type: ignore[return-value]

    def _scalar_value_arg(self, x: object, name: str, arg: str) -> object:
        """`x`, once checked to be a Scalar or a Python number."""
        self._scalar_operand(x, name, arg)
        return x

    def threshold(self, arg: object, threshold: object, value: object) -> Tensor:
        """`x if x > threshold else value` (torch.nn.functional.threshold)."""
        t = self._tensor(arg, "threshold", "arg")
        th = self._scalar_value_arg(threshold, "threshold", "threshold")
        val = self._scalar_value_arg(value, "threshold", "value")
        out = self.where(self.le(t, th), val, t)
        return self._keep_dtype(out, t)  # type: ignore[arg-type]

    def lerp(self, start: object, end: object, weight: object) -> Tensor:
        """`start + weight * (end - start)`."""
        return self.add(start, self.mul(weight, self.sub(end, start)))  # type: ignore[return-value]

    def addcmul(self, arg1: object, arg2: object, arg3: object, value: object) -> Tensor:
        """`arg1 + value * arg2 * arg3`."""
        return self.add(arg1, self.mul(arg2, self.mul(arg3, value)))  # type: ignore[return-value]

    def add_alpha(self, arg1: object, arg2: object, alpha: object) -> Tensor:
        """`arg1 + arg2 * alpha`."""
        return self.add(arg1, self.mul(arg2, alpha))  # type: ignore[return-value]

    def sub_alpha(self, arg1: object, arg2: object, alpha: object) -> Tensor:
        """`arg1 - arg2 * alpha`."""
        return self.sub(arg1, self.mul(arg2, alpha))  # type: ignore[return-value]

    def isnan(self, arg: object) -> Tensor:
        """`x != x` (False for integer and Bool tensors)."""
        t = self._tensor(arg, "isnan", "arg")
        return self.ne(t, t)  # type: ignore[return-value]

    def isposinf(self, arg: object) -> Tensor:
        t = self._tensor(arg, "isposinf", "arg")
        if not rules.is_float(elem_of(t.value)):
            return self.ne(t, t)  # type: ignore[return-value]
        return self.eq(t, float("inf"))  # type: ignore[return-value]

    def isneginf(self, arg: object) -> Tensor:
        t = self._tensor(arg, "isneginf", "arg")
        if not rules.is_float(elem_of(t.value)):
            return self.ne(t, t)  # type: ignore[return-value]
        return self.eq(t, float("-inf"))  # type: ignore[return-value]

    def isinf(self, arg: object) -> Tensor:
        t = self._tensor(arg, "isinf", "arg")
        return self.logical_or(self.isposinf(t), self.isneginf(t))  # type: ignore[return-value]

    def isfinite(self, arg: object) -> Tensor:
        t = self._tensor(arg, "isfinite", "arg")
        return self.logical_not(self.logical_or(self.isnan(t), self.isinf(t)))  # type: ignore[return-value]

    def real(self, arg: object) -> Tensor | Scalar:
        """The real part of a complex tensor (its parts' type); of a real one, a copy."""
        v = self._operand(arg, "real", "arg")
        if is_tensor(v) and rules.is_complex(elem_of(v)):
            return self._tensor_op("real", lambda: fusion.RealOp(v))
        return self.set(arg)

    def imag(self, arg: object) -> Tensor:
        """The imaginary part of a complex tensor, of its parts' type."""
        self._open("imag")
        t = self._tensor(arg, "imag", "arg")
        if not rules.is_complex(elem_of(t.value)):
            raise ArgumentError(f"imag: argument 'arg' must be a complex tensor, got {t.dtype()!r}")
        return self._tensor_op("imag", lambda: fusion.ImagOp(t.value))


def fused_multiply_add(ops: PointwiseOperators, arg1: object, arg2: object, arg3: object) -> Tensor:
    """`fusion.fma`: `arg1 * arg2 + arg3` rounded once, with `fd.ops`' elementwise typing
    (lower ranks broadcast from the left; f16/bf16 operands compute, and give, f32). The
    promoted type must be floating-point (an ArgumentError otherwise); at least one
    argument is a Tensor.

    Not an `fd.ops` name: nvFuser's frontend has no fma, and `fd.ops` keeps nvFuser's
    names. The torch.compile frontend builds `prims.fma` with it."""
    name = "fma"
    ops._open(name)
    values = [ops._operand(x, name, f"arg{i}") for i, x in enumerate((arg1, arg2, arg3), 1)]
    if not any(is_tensor(v) for v in values):
        raise ArgumentError(f"{name}: at least one argument must be a Tensor")
    a, b, c = ops._promote(name, ops._align(values), False)
    return ops._tensor_op(name, lambda: fusion.FmaOp(a, b, c))


UNARY_OPS: dict[str, tuple[type[fusion.UnaryOp], bool]] = {
    "abs": (fusion.AbsOp, False),
    "neg": (fusion.NegOp, False),
    "relu": (fusion.ReluOp, False),
    "logical_not": (fusion.LogicalNotOp, False),
    "exp": (fusion.ExpOp, True),
    "log": (fusion.LogOp, True),
    "sqrt": (fusion.SqrtOp, True),
    "rsqrt": (fusion.RsqrtOp, True),
    "reciprocal": (fusion.ReciprocalOp, True),
    "tanh": (fusion.TanhOp, True),
    "sigmoid": (fusion.SigmoidOp, True),
    "sin": (fusion.SinOp, True),
    "cos": (fusion.CosOp, True),
    "erf": (fusion.ErfOp, True),
    "acos": (fusion.AcosOp, True),
    "acosh": (fusion.AcoshOp, True),
    "asin": (fusion.AsinOp, True),
    "asinh": (fusion.AsinhOp, True),
    "atan": (fusion.AtanOp, True),
    "atanh": (fusion.AtanhOp, True),
    "cosh": (fusion.CoshOp, True),
    "sinh": (fusion.SinhOp, True),
    "tan": (fusion.TanOp, True),
    "exp2": (fusion.Exp2Op, True),
    "expm1": (fusion.Expm1Op, True),
    "log2": (fusion.Log2Op, True),
    "log10": (fusion.Log10Op, True),
    "log1p": (fusion.Log1pOp, True),
    "erfc": (fusion.ErfcOp, True),
    "erfinv": (fusion.ErfinvOp, True),
    "erfcinv": (fusion.ErfcinvOp, True),
    "lgamma": (fusion.LgammaOp, True),
    "ceil": (fusion.CeilOp, False),
    "floor": (fusion.FloorOp, False),
    "round": (fusion.RoundOp, False),
    "trunc": (fusion.TruncOp, False),
    "frac": (fusion.FracOp, False),
    "sign": (fusion.SignOp, False),
    "signbit": (fusion.SignbitOp, False),
    "bitwise_not": (fusion.BitwiseNotOp, False),
}
"""`fd.ops` unary names: (the dialect op, whether f16/bf16/integer inputs compute and give f32)."""

BINARY_OPS: dict[str, tuple[type[fusion.BinaryOp], str]] = {
    "add": (fusion.AddOp, "default"),
    "sub": (fusion.SubOp, "default"),
    "mul": (fusion.MulOp, "default"),
    "div": (fusion.DivOp, "default"),
    "truediv": (fusion.DivOp, "float"),
    "pow": (fusion.PowOp, "default"),
    "maximum": (fusion.MaximumOp, "default"),
    "minimum": (fusion.MinimumOp, "default"),
    "eq": (fusion.EqOp, "none"),
    "ne": (fusion.NeOp, "none"),
    "lt": (fusion.LtOp, "none"),
    "le": (fusion.LeOp, "none"),
    "gt": (fusion.GtOp, "none"),
    "ge": (fusion.GeOp, "none"),
    "logical_and": (fusion.LogicalAndOp, "none"),
    "logical_or": (fusion.LogicalOrOp, "none"),
    "atan2": (fusion.Atan2Op, "float"),
    "fmod": (fusion.FmodOp, "default"),
    "mod": (fusion.FmodOp, "default"),
    "remainder": (fusion.RemainderOp, "default"),
    "nextafter": (fusion.NextafterOp, "none"),
    "gcd": (fusion.GcdOp, "none"),
    "bitwise_and": (fusion.BitwiseAndOp, "none"),
    "bitwise_or": (fusion.BitwiseOrOp, "none"),
    "bitwise_xor": (fusion.BitwiseXorOp, "none"),
    "bitwise_left_shift": (fusion.BitwiseLeftShiftOp, "none"),
    "bitwise_right_shift": (fusion.BitwiseRightShiftOp, "none"),
    "logical_right_shift": (fusion.LogicalRightShiftOp, "none"),
}
"""`fd.ops` binary names: (the dialect op, the promotion: "default" lifts f16/bf16 to f32,
"float" integers too, "none" leaves the operands' types to the op)."""


def _define_unary(name: str, cls: type[fusion.UnaryOp], to_float: bool) -> None:
    def op(self: PointwiseOperators, arg: object) -> Tensor | Scalar:
        return self._unary(name, cls, to_float, arg)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"`fusion.{name}`, elementwise" + (" (f16/bf16/integer inputs give f32)." if to_float else ".")
    setattr(PointwiseOperators, name, op)


def _define_binary(name: str, cls: type[fusion.BinaryOp], promote: str) -> None:
    def op(self: PointwiseOperators, arg1: object, arg2: object) -> Tensor | Scalar:
        return self._binary(name, cls, promote, arg1, arg2)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"`{cls.name}`, elementwise, with nvFuser's type promotion ({promote})."
    setattr(PointwiseOperators, name, op)


for _name, (_cls, _float) in UNARY_OPS.items():
    _define_unary(_name, _cls, _float)
for _name, (_cls, _promote) in BINARY_OPS.items():
    _define_binary(_name, _cls, _promote)
