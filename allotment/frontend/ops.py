"""`fd.ops`: nvFuser's operators under their nvFuser names, built as fusion-dialect ops.

Typing follows nvFuser, not the dialect's defaults, where the two differ:
- arithmetic (`add`, `sub`, `mul`, `div`, `pow`, `maximum`, `minimum`) on f16 or
  bf16 operands computes in f32 and gives f32 (nvFuser casts half types up);
- the float math functions (`exp`, `log`, `tanh`, ...) give f32 for f16, bf16,
  integer and bool inputs; `truediv` casts integer operands to f32 first;
- `div` on integers truncates toward zero (C division), as nvFuser's `div`;
  `mod` is `fmod` (C's `%`: the sign of the dividend), `remainder` Python's `%`
  (the sign of the divisor); `atan2` casts integer operands to f32 first;
- rounding (`ceil`, `floor`, `round`, `trunc`, `frac`), `sign` and `bitwise_not` keep
  the input type; `signbit` gives Bool; bitwise ops, shifts and `gcd` take integer
  (and, for and/or/xor/not, Bool) operands and refuse floats, as torch does;
- `where`, `neg`, `abs`, `relu`, `set`, reductions other than `var_mean` keep
  the input type; `var_mean` and `var` compute f16/bf16 inputs in f32.
Python numbers are wrapped scalars (f64, i64, i1 constants): they never widen a
tensor's type. Elementwise operands of lower rank are broadcast from the left
(nvFuser's `maybeBroadcast`). Ops on two scalars are built with `arith`.

Ops the dialect lacks raise `NotSupportedError("not supported: <name>")` (an
`allotment.UnsupportedError`; `UNSUPPORTED` lists nvFuser's); a few nvFuser ops
with no dialect op of their own are composed from dialect ops (`COMPOSITES`).
Argument errors raise `allotment.ArgumentError` (also a TypeError and a
ValueError) naming the argument, before anything is built; so does a call with
the wrong number of arguments (naming the op and what it takes), and a dialect
verifier error (naming the op).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import torch
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    UnitAttr,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError, Error
from allotment.extents import dims as dim_rules
from allotment.frontend.building import make_op as _make
from allotment.frontend.datatypes import DataType, check_dtype, from_element_type, to_element_type, to_torch
from allotment.frontend.errors import NotSupportedError
from allotment.frontend.handles import Definition, Scalar, Tensor, Vector
from allotment.frontend.inputs import check_extent, check_stride_order
from allotment.frontend.random_ops import RandomOperators
from allotment.frontend.scan_ops import ScanOperators

HALF = (f16, bf16)
DYNAMIC = DYNAMIC_INDEX

UNSUPPORTED: tuple[str, ...] = (
    # complex numbers: isreal (a comparison of complex values)
    "isreal",
    # normalization and attention primitives, grouped and scaled matmuls
    "batch_norm", "sdpfa_fwd", "sdpfa_bwd", "grouped_mm", "scaled_mm",
)
"""nvFuser frontend ops with no fusion-dialect counterpart (raise "not supported: <name>")."""

COMPOSITES: tuple[str, ...] = (
    "silu", "clamp", "threshold", "lerp", "addcmul", "add_alpha", "sub_alpha", "var",
    "isnan", "isinf", "isposinf", "isneginf", "isfinite", "select", "broadcast",
)
"""nvFuser ops built from other dialect ops (`squeeze` of a symbolic extent is a reshape)."""


def _kind(x: object) -> str:
    return f"{type(x).__name__} {x!r}" if isinstance(x, numbers.Number | str) else type(x).__name__


def _integer_constant(v: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    if isinstance(v.owner, arith.ConstantOp) and isinstance(v.owner.value, IntegerAttr):
        return v.owner.value.value.data
    return None


def _rank(v: SSAValue) -> int:
    assert isinstance(v.type, TensorType)
    return len(v.type.get_shape())


def _is_tensor(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType)


def _elem(v: SSAValue) -> Attribute:
    return rules.element_type_of(v.type)


class Operators(RandomOperators, ScanOperators):
    """The `fd.ops` namespace."""

    def __init__(self, fd: Definition):
        self._fd = fd
        self._dim_cache: dict[tuple[SSAValue, int], SSAValue] = {}
        self._cast_cache: dict[tuple[SSAValue, Attribute], SSAValue] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in UNSUPPORTED:
            raise NotSupportedError(f"not supported: {name}")
        raise NotSupportedError(
            f"not supported: {name} (neither an op of Allotment's fusion dialect nor a known "
            "nvFuser op)"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(UNSUPPORTED))

    # ------------------------------------------------------------------ #
    # Argument handling                                                  #
    # ------------------------------------------------------------------ #

    def _open(self, name: str) -> None:
        self._fd._check_open(f"ops.{name}")

    def _tensor(self, x: object, name: str, arg: str) -> Tensor:
        if not isinstance(x, Tensor):
            raise ArgumentError(f"{name}: argument '{arg}' must be a Tensor, got {_kind(x)}")
        self._fd._own(x, f"{name}: argument '{arg}'")
        return x

    def _operand(self, x: object, name: str, arg: str) -> SSAValue:
        """A Tensor, a Scalar or a Python number (as a wrapped constant)."""
        if isinstance(x, Tensor | Scalar):
            self._fd._own(x, f"{name}: argument '{arg}'")
            return x.value
        if isinstance(x, numbers.Real | complex):
            return self._fd._python_scalar(x)  # type: ignore[arg-type]
        raise ArgumentError(
            f"{name}: argument '{arg}' must be a Tensor, a Scalar or a Python number, got {_kind(x)}"
        )

    def _scalar_operand(self, x: object, name: str, arg: str) -> SSAValue:
        if isinstance(x, Tensor):
            raise ArgumentError(f"{name}: argument '{arg}' must be a Scalar or a Python number, got a Tensor")
        return self._operand(x, name, arg)

    def _bool(self, x: object, name: str, arg: str) -> bool:
        """A bool argument; the ints 0 and 1 are False and True, as nvFuser's bindings convert
        them (nvFuser's test_issue4888 passes `manual_normalization=0`)."""
        if isinstance(x, numbers.Integral) and not isinstance(x, bool) and x in (0, 1):
            return bool(x)
        if not isinstance(x, bool):
            raise ArgumentError(f"{name}: argument '{arg}' must be a bool (or 0 or 1), got {_kind(x)}")
        return x

    def _int(self, x: object, name: str, arg: str) -> int:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise ArgumentError(f"{name}: argument '{arg}' must be an int, got {_kind(x)}")
        if not -(1 << 63) <= x < 1 << 63:
            raise ArgumentError(f"{name}: argument '{arg}': {x} does not fit in 64 bits")
        return int(x)

    def _ints(self, x: object, name: str, arg: str, *, scalar_ok: bool = False) -> list[int]:
        if scalar_ok and isinstance(x, numbers.Integral) and not isinstance(x, bool):
            return [int(x)]
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence | torch.Size):
            raise ArgumentError(f"{name}: argument '{arg}' must be a list of ints, got {_kind(x)}")
        return [self._int(v, name, f"{arg}[{i}]") for i, v in enumerate(x)]

    def _dims(self, x: object, rank: int, name: str, arg: str = "dims") -> list[int]:
        """Dimension indices (negative count from the end), checked against `rank`."""
        try:
            return dim_rules.normalize_dims(self._ints(x, name, arg, scalar_ok=True), rank)
        except dim_rules.DimsError as e:
            fault = f"repeats dimension {e.entry}" if e.repeated else str(e)
            raise ArgumentError(f"{name}: argument '{arg}' {fault}") from None

    def _dtype(self, x: object, name: str, arg: str = "dtype", *, allow_null: bool = False) -> DataType:
        return check_dtype(x, f"{name}: argument '{arg}'", allow_null=allow_null)

    # ------------------------------------------------------------------ #
    # Emitting                                                           #
    # ------------------------------------------------------------------ #

    def _build(self, name: str, make: Callable[[], Operation]) -> Operation:
        """Builds and verifies an op, then appends it; verifier errors become ArgumentError."""
        op: Operation | None = None
        try:
            op = make()
            op.verify()
        except VerifyException as e:
            if op is not None:
                op.drop_all_references()
            raise ArgumentError(f"{name}: {e}") from None
        return self._fd._emit(op)

    def _tensor_op(self, name: str, make: Callable[[], Operation]) -> Tensor:
        return self._fd._tensor_result(self._build(name, make))

    def _scalar_op(self, op: Operation) -> Scalar:
        self._fd._emit(op)
        return self._fd._name_scalar(op.results[0])

    def _index(self, n: int) -> SSAValue:
        return self._fd._constant(n, IndexType())

    def _dim(self, v: SSAValue, d: int) -> SSAValue:
        """`tensor.dim` of `v` at `d` (an `index` value), built once per value and dimension."""
        key = (v, d)
        if key not in self._dim_cache:
            op = tensor.DimOp(v, self._index(d))
            self._dim_cache[key] = self._scalar_op(op).value
        return self._dim_cache[key]

    def _extent(self, v: SSAValue, d: int) -> int | SSAValue:
        """Extent `d` of tensor `v`: its static value, or a `tensor.dim` value."""
        assert isinstance(v.type, TensorType)
        e = v.type.get_shape()[d]
        return e if e != DYNAMIC else self._dim(v, d)

    def _to_index(self, v: SSAValue, name: str, arg: str) -> SSAValue:
        if isinstance(v.type, IndexType):
            return v
        if isinstance(v.type, IntegerType) and v.type != i1:
            return self._scalar_op(arith.IndexCastOp(v, IndexType())).value
        raise ArgumentError(f"{name}: argument '{arg}' must hold integers, got a {rules.type_name(v.type)} scalar")

    def _extent_entries(self, x: object, name: str, arg: str) -> list[int | SSAValue]:
        """A shape argument (list, tuple, torch.Size or Vector of ints and Scalars)."""
        if isinstance(x, Vector):
            self._fd._own(x, f"{name}: argument '{arg}'")
            items: Sequence[Any] = list(x)
        elif isinstance(x, (str, bytes)) or not isinstance(x, Sequence | torch.Size):
            raise ArgumentError(
                f"{name}: argument '{arg}' must be a list of ints and Scalars, got {_kind(x)}"
            )
        else:
            items = list(x)
        out: list[int | SSAValue] = []
        for i, e in enumerate(items):
            if isinstance(e, Scalar):
                self._fd._own(e, f"{name}: argument '{arg}'")
                c = e.constant
                if isinstance(c, numbers.Integral) and not isinstance(c, bool):
                    out.append(int(c))
                else:
                    out.append(self._to_index(e.value, name, f"{arg}[{i}]"))
            elif isinstance(e, numbers.Integral) and not isinstance(e, bool):
                out.append(check_extent(e, i, f"{name}: argument '{arg}'"))
            else:
                raise ArgumentError(
                    f"{name}: argument '{arg}' entries must be ints or Scalars, got {_kind(e)} "
                    f"at index {i}"
                )
        return out

    @staticmethod
    def _split(entries: Sequence[int | SSAValue]) -> tuple[list[int], list[SSAValue]]:
        static: list[int] = []
        dynamic: list[SSAValue] = []
        for e in entries:
            if isinstance(e, SSAValue):
                static.append(DYNAMIC)
                dynamic.append(e)
            else:
                static.append(e)
        return static, dynamic

    def _cast(self, v: SSAValue, et: Attribute) -> SSAValue:
        """Tensor `v` converted to element type `et` (unchanged if it has it)."""
        if _elem(v) == et:
            return v
        key = (v, et)
        if key not in self._cast_cache:  # promotions cast the same value once
            self._cast_cache[key] = self._tensor_op("cast", lambda: fusion.CastOp(v, et)).value
        return self._cast_cache[key]

    def _lift_rank(self, v: SSAValue, rank: int) -> SSAValue:
        """Tensor `v` with size-1 dimensions added on the left up to `rank`."""
        k = rank - _rank(v)
        entries = [1] * k + [self._extent(v, d) for d in range(_rank(v))]
        static, dynamic = self._split(entries)
        props = {
            "static_shape": fusion.int_list(static),
            "broadcast_dims": fusion.int_list(range(k, rank)),
        }
        return self._tensor_op(
            "broadcast_in_dim", lambda: _make(fusion.BroadcastInDimOp, [v, dynamic], props)
        ).value

    def _align(self, values: list[SSAValue]) -> list[SSAValue]:
        ranks = [_rank(v) for v in values if _is_tensor(v)]
        top = max(ranks)
        return [self._lift_rank(v, top) if _is_tensor(v) and _rank(v) < top else v for v in values]

    def _promote(self, name: str, values: list[SSAValue], to_float: bool) -> list[SSAValue]:
        """nvFuser's type promotion: half types compute in f32; `to_float` lifts integers too."""
        try:
            common = rules.promote([v.type for v in values])
        except VerifyException as e:
            raise ArgumentError(f"{name}: {e}") from None
        if to_float and not rules.is_float(common):
            lift = lambda t: not rules.is_float(t) or t in HALF  # noqa: E731
        elif common in HALF:
            lift = lambda t: t in HALF  # noqa: E731
        else:
            return values
        return [self._cast(v, f32) if _is_tensor(v) and lift(_elem(v)) else v for v in values]

    # ------------------------------------------------------------------ #
    # Scalars (arith)                                                    #
    # ------------------------------------------------------------------ #

    def _convert_scalar(self, v: SSAValue, t: Attribute) -> SSAValue:
        """Scalar `v` converted to type `t` with arith ops."""
        src = v.type
        if src == t:
            return v
        emit = lambda op: self._scalar_op(op).value  # noqa: E731
        if isinstance(t, IndexType) and isinstance(src, IntegerType) and src != i1:
            known = _integer_constant(v)
            if known is not None:  # a Python int beside an extent: an index constant
                return self._index(known)
        if isinstance(src, IndexType):
            v, src = emit(arith.IndexCastOp(v, i64)), i64
            if src == t:
                return v
        if isinstance(t, IndexType):
            return emit(arith.IndexCastOp(self._convert_scalar(v, i64), IndexType()))
        if rules.is_float(t):
            if rules.is_float(src):
                if src in HALF and t in HALF:  # f16 <-> bf16 goes through f32
                    v = emit(arith.ExtFOp(v, f32))
                    return emit(arith.TruncFOp(v, t))
                wider = t.bitwidth > src.bitwidth  # type: ignore[attr-defined]
                return emit(arith.ExtFOp(v, t) if wider else arith.TruncFOp(v, t))
            if src == i1:
                return emit(arith.UIToFPOp(v, t))
            return emit(arith.SIToFPOp(v, t))
        if t == i1:
            zero = self._fd._constant(0.0 if rules.is_float(src) else 0, src)
            if rules.is_float(src):
                return emit(arith.CmpfOp(v, zero, "une"))
            return emit(arith.CmpiOp(v, zero, "ne"))
        assert isinstance(t, IntegerType)
        if rules.is_float(src):
            return emit(arith.FPToSIOp(v, t))
        if src == i1:
            return emit(arith.ExtUIOp(v, t))
        assert isinstance(src, IntegerType)
        if t.width.data > src.width.data:
            return emit(arith.ExtSIOp(v, t))
        return emit(arith.TruncIOp(v, t))

    def _scalar_common(self, a: SSAValue, b: SSAValue, to_float: bool) -> Attribute:
        floats = [t for t in (a.type, b.type) if rules.is_float(t)]
        if floats:
            if any(t == f64 for t in floats):
                return f64
            return f32 if len(set(floats)) > 1 or floats[0] in HALF else floats[0]
        if to_float:
            return f64
        # Extent arithmetic (`size(t, 0) * 2`, `s0 * s1`): an index operand with an
        # integer one stays in `index`, so the value is a size (docs/dynamic-shapes.md).
        types = (a.type, b.type)
        if any(isinstance(t, IndexType) for t in types) and all(
            isinstance(t, IndexType) or (isinstance(t, IntegerType) and t != i1) for t in types
        ):
            return IndexType()
        return i64

    _SCALAR_INT: ClassVar[dict[str, Callable[..., Operation]]] = {
        "add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "div": arith.DivSIOp,
        "maximum": arith.MaxSIOp, "minimum": arith.MinSIOp,
    }
    _SCALAR_FLOAT: ClassVar[dict[str, Callable[..., Operation]]] = {
        "add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
        "truediv": arith.DivfOp, "maximum": arith.MaximumfOp, "minimum": arith.MinimumfOp,
    }
    _CMP_INT: ClassVar[dict[str, str]] = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
    _CMP_FLOAT: ClassVar[dict[str, str]] = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}

    _SCALAR_BITWISE: ClassVar[dict[str, Callable[..., Operation]]] = {
        "bitwise_and": arith.AndIOp, "bitwise_or": arith.OrIOp, "bitwise_xor": arith.XOrIOp,
    }

    def _scalar_binary(self, name: str, a: SSAValue, b: SSAValue) -> Scalar:
        if name in ("logical_and", "logical_or"):
            x, y = self._convert_scalar(a, i1), self._convert_scalar(b, i1)
            cls = arith.AndIOp if name == "logical_and" else arith.OrIOp
            return self._scalar_op(cls(x, y))
        if name in self._SCALAR_BITWISE:
            for v in (a, b):
                if rules.is_float(v.type):
                    raise ArgumentError(f"{name}: it takes integer or Bool operands, got a {rules.type_name(v.type)} scalar")
            t = i1 if a.type == i1 and b.type == i1 else self._scalar_common(a, b, False)
            x, y = self._convert_scalar(a, t), self._convert_scalar(b, t)
            return self._scalar_op(self._SCALAR_BITWISE[name](x, y))
        if name == "nextafter":
            return self._scalar_nextafter(a, b)
        if name == "fmod" and not rules.is_float(self._scalar_common(a, b, False)):
            # of integers, C's fmod is the remainder truncated toward zero (arith.remsi)
            t = self._scalar_common(a, b, False)
            return self._scalar_op(arith.RemSIOp(self._convert_scalar(a, t), self._convert_scalar(b, t)))
        known = set(self._SCALAR_FLOAT) | set(self._CMP_INT)
        if name not in known:
            raise NotSupportedError(f"not supported: {name} of two scalars")
        t = self._scalar_common(a, b, name == "truediv")
        x, y = self._convert_scalar(a, t), self._convert_scalar(b, t)
        is_float = rules.is_float(t)
        if name in self._CMP_INT:
            if is_float:
                return self._scalar_op(arith.CmpfOp(x, y, self._CMP_FLOAT[name]))
            return self._scalar_op(arith.CmpiOp(x, y, self._CMP_INT[name]))
        table = self._SCALAR_FLOAT if is_float else self._SCALAR_INT
        return self._scalar_op(table[name](x, y))

    def _scalar_unary(self, name: str, v: SSAValue) -> Scalar:
        if name == "neg":
            if rules.is_float(v.type):
                return self._scalar_op(arith.NegfOp(v))
            return self._scalar_op(arith.SubiOp(self._fd._constant(0, v.type), v))
        if name in ("set", "segment_set", "real"):
            return Scalar(self._fd, v, -1)
        if name == "logical_not":
            return self._scalar_op(arith.XOrIOp(self._convert_scalar(v, i1), self._fd._constant(True, i1)))
        if name == "bitwise_not":
            if rules.is_float(v.type):
                raise ArgumentError(f"{name}: it takes integer or Bool operands, got a {rules.type_name(v.type)} scalar")
            ones = self._fd._constant(True if v.type == i1 else -1, v.type)
            return self._scalar_op(arith.XOrIOp(v, ones))
        if name == "reciprocal":  # 1 / v in floating point (Double for Int and Bool scalars)
            t = v.type if rules.is_float(v.type) else f64
            x = self._convert_scalar(v, t)
            return self._scalar_op(arith.DivfOp(self._fd._constant(1.0, t), x))
        if name == "signbit":
            return self._scalar_signbit(v)
        raise NotSupportedError(f"not supported: {name} of a scalar")

    def _scalar_nextafter(self, a: SSAValue, b: SSAValue) -> Scalar:
        """The float after `a` towards `b` (C's nextafter; Double for integer scalars): one
        step of `a`'s bits away from or towards zero, the smallest subnormal from zero,
        `b` when they are equal, NaN when either is."""
        t = self._scalar_common(a, b, True)
        x, y = self._convert_scalar(a, t), self._convert_scalar(b, t)
        c = self._fd._constant
        emit = lambda op: self._scalar_op(op).value  # noqa: E731
        it = IntegerType(t.bitwidth)  # type: ignore[attr-defined]
        bits = emit(arith.BitcastOp(x, it))
        away = emit(arith.CmpiOp(emit(arith.CmpfOp(y, x, "ogt")), emit(arith.CmpfOp(x, c(0.0, t), "ogt")), "eq"))
        stepped = emit(arith.BitcastOp(emit(arith.SelectOp(
            away, emit(arith.AddiOp(bits, c(1, it))), emit(arith.SubiOp(bits, c(1, it))))), t))
        tiny = float(torch.finfo(to_torch(from_element_type(t))).smallest_normal) * float(
            torch.finfo(to_torch(from_element_type(t))).eps)
        from_zero = emit(arith.SelectOp(emit(arith.CmpfOp(y, c(0.0, t), "ogt")), c(tiny, t), c(-tiny, t)))
        r = emit(arith.SelectOp(emit(arith.CmpfOp(x, c(0.0, t), "oeq")), from_zero, stepped))
        r = emit(arith.SelectOp(emit(arith.CmpfOp(x, y, "oeq")), y, r))
        return self._scalar_op(arith.SelectOp(emit(arith.CmpfOp(x, y, "uno")), c(math.nan, t), r))

    def _scalar_signbit(self, v: SSAValue) -> Scalar:
        """Whether the sign bit of scalar `v` is set: `v < 0` for integers (False for Bool);
        for floats also -0.0 (`1 / v` is -inf) and a NaN whose bits say negative."""
        if v.type == i1:
            return self._constant_handle(False, i1)
        if not rules.is_float(v.type):
            x = self._convert_scalar(v, i64) if isinstance(v.type, IndexType) else v
            return self._scalar_op(arith.CmpiOp(x, self._fd._constant(0, x.type), "slt"))
        width = v.type.bitwidth  # type: ignore[attr-defined]
        bits = self._scalar_op(arith.BitcastOp(v, IntegerType(width))).value
        return self._scalar_op(arith.CmpiOp(bits, self._fd._constant(0, bits.type), "slt"))

    # ------------------------------------------------------------------ #
    # Elementwise                                                        #
    # ------------------------------------------------------------------ #

    def _unary(self, name: str, cls: type[fusion.UnaryOp], to_float: bool, arg: object) -> Tensor | Scalar:
        self._open(name)
        v = self._operand(arg, name, "arg")
        if not _is_tensor(v):
            return self._scalar_unary(name, v)
        if to_float and _elem(v) in HALF:
            v = self._cast(v, f32)
        return self._tensor_op(name, lambda: cls(v))

    def _binary(self, name: str, cls: type[fusion.BinaryOp], promote: str, arg1: object, arg2: object) -> Tensor | Scalar:
        self._open(name)
        a = self._operand(arg1, name, "arg1")
        b = self._operand(arg2, name, "arg2")
        if not _is_tensor(a) and not _is_tensor(b):
            return self._scalar_binary(name, a, b)
        if (cls is fusion.PowOp and type(arg2) is int and arg2 < 0 and _is_tensor(a)
                and not rules.is_float(_elem(a))):
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
        if _elem(c) != i1:
            raise ArgumentError(
                f"{name}: argument 'pred' must be a Bool tensor or scalar, got "
                f"{rules.type_name(c.type)}"
            )
        a = self._operand(arg1, name, "arg1")
        b = self._operand(arg2, name, "arg2")
        if not any(_is_tensor(v) for v in (c, a, b)):
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
        if not _is_tensor(v):
            return Scalar(self._fd, self._convert_scalar(v, et), -1)
        if _elem(v) == et:
            return self._tensor_op(name, lambda: fusion.SetOp(v))
        return self._tensor_op(name, lambda: fusion.CastOp(v, et))

    def set(self, arg: object) -> Tensor | Scalar:
        """A copy of `arg` (`fusion.set`)."""
        return self._unary("set", fusion.SetOp, False, arg)  # type: ignore[arg-type]

    def segment_set(self, arg: object) -> Tensor | Scalar:
        """nvFuser's segmentation hint; here a copy like `set`."""
        return self._unary("segment_set", fusion.SetOp, False, arg)  # type: ignore[arg-type]

    def stride_order(self, arg: object, stride_order: Sequence[int]) -> Tensor:
        """A copy of `arg` laid out in `stride_order` (as define_tensor's: entry d is dimension
        d's rank, the highest outermost). Where the copy is an output, the order is its
        result's `fusion.stride_order` in the IR (as `add_output(t, stride_order=...)` gives),
        which fusion-allocate makes the output buffer's layout; elsewhere a layout changes
        no value."""
        self._open("stride_order")
        t = self._tensor(arg, "stride_order", "arg")
        order = check_stride_order(stride_order, t.ndim, "stride_order")  # type: ignore[arg-type]
        out = self.set(t)
        self._fd._stride_orders[out.value] = order
        return out  # type: ignore[return-value]


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
    # Creation                                                           #
    # ------------------------------------------------------------------ #

    def full(self, shape: object, fill_value: object, dtype: DataType) -> Tensor:
        """A tensor of `shape` filled with `fill_value` converted to `dtype`."""
        name = "full"
        self._open(name)
        et = to_element_type(self._dtype(dtype, name))
        entries = self._extent_entries(shape, name, "shape")
        if any(e == -1 for e in entries if isinstance(e, int)):
            raise ArgumentError(f"{name}: argument 'shape' cannot have symbolic (-1) entries; give Scalars")
        value = self._scalar_operand(fill_value, name, "fill_value")
        static, dynamic = self._split(entries)
        props = {"static_sizes": fusion.int_list(static)}
        return self._tensor_op(
            name, lambda: _make(fusion.FullOp, [value, dynamic], props, [TensorType(et, [])])
        )

    def iota(
        self, length: object, start: object = None, step: object = None, dtype: DataType = DataType.Int
    ) -> Tensor:
        """`[start, start + step, ...]` of `length` entries (start 0 and step 1 by default)."""
        name = "iota"
        self._open(name)
        et = to_element_type(self._dtype(dtype, name))
        if et == i1:
            raise ArgumentError(f"{name}: argument 'dtype' cannot be DataType.Bool")
        (n,) = self._extent_entries([length], name, "length")
        if isinstance(n, int) and n < 0:
            raise ArgumentError(f"{name}: argument 'length' must be non-negative, got {n}")
        zero, one = (0.0, 1.0) if rules.is_float(et) else (0, 1)
        a = self._scalar_operand(zero if start is None else start, name, "start")
        s = self._scalar_operand(one if step is None else step, name, "step")
        static, dynamic = self._split([n])
        props = {"static_length": fusion.int_list(static)}
        return self._tensor_op(
            name, lambda: _make(fusion.IotaOp, [dynamic, a, s], props, [TensorType(et, [])])
        )

    # ------------------------------------------------------------------ #
    # Shapes                                                             #
    # ------------------------------------------------------------------ #

    def size(self, arg: object, dim: int) -> Scalar:
        """Extent `dim` of `arg` as an index scalar (a constant when static)."""
        name = "size"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        (d,) = self._dims(dim, t.ndim, name, "dim")
        e = self._extent(t.value, d)
        if isinstance(e, int):
            return self._fd._constant_handle(e, IndexType())
        return Scalar(self._fd, e, -1)

    def shape(self, arg: object) -> Vector:
        """Every extent of `arg` (`t.shape()`)."""
        t = self._tensor(arg, "shape", "arg")
        return Vector(self._fd, [self.size(t, d) for d in range(t.ndim)])

    def tensor_sizes(self, arg: object) -> list[Scalar]:
        return list(self.shape(arg))

    def at(self, arg: object, index: int) -> Scalar:
        if not isinstance(arg, Vector):
            raise ArgumentError(f"at: argument 'arg' must be a Vector, got {_kind(arg)}")
        i = self._int(index, "at", "index")
        if not -len(arg) <= i < len(arg):
            raise ArgumentError(f"at: argument 'index' {i} is out of range for a Vector of size {len(arg)}")
        return list(arg)[i]

    def broadcast_in_dim(self, arg: object, shape: object, broadcast_dims: object) -> Tensor:
        """Places `arg`'s dimensions at `broadcast_dims` of a tensor of `shape`.

        A -1 in `shape` at a mapped dimension keeps the input's extent; new
        dimensions get the given extent (size-1 broadcast, then expanded). With no new
        dimension (`broadcast_dims` every output dimension) it is `fusion.expand`, the op
        `expand` builds, as nvFuser builds no broadcast there.
        """
        name = "broadcast_in_dim"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        entries = self._extent_entries(shape, name, "shape")
        dims = self._ints(broadcast_dims, name, "broadcast_dims")
        if len(dims) != t.ndim:
            raise ArgumentError(
                f"{name}: argument 'broadcast_dims' has {len(dims)} entries, but the input has "
                f"rank {t.ndim}"
            )
        for d in dims:
            if not 0 <= d < len(entries):
                raise ArgumentError(
                    f"{name}: argument 'broadcast_dims' entry {d} is out of range for an output "
                    f"of rank {len(entries)}"
                )
        if any(b <= a for a, b in zip(dims, dims[1:])):
            raise ArgumentError(f"{name}: argument 'broadcast_dims' {dims} must be strictly increasing")
        resolved: list[int | SSAValue] = []
        for d, e in enumerate(entries):
            if isinstance(e, int) and e == -1:
                if d not in dims:
                    raise ArgumentError(
                        f"{name}: argument 'shape' entry {d} is -1, but output dimension {d} is a "
                        "new dimension; give its extent"
                    )
                e = self._extent(t.value, dims.index(d))
            resolved.append(e)
        static, dynamic = self._split(resolved)
        if dims == list(range(len(entries))):  # no new dimension: the same fusion as expand's
            props = {"static_shape": fusion.int_list(static)}
            return self._tensor_op(name, lambda: _make(fusion.ExpandOp, [t.value, dynamic], props))
        props = {"static_shape": fusion.int_list(static), "broadcast_dims": fusion.int_list(dims)}
        return self._tensor_op(name, lambda: _make(fusion.BroadcastInDimOp, [t.value, dynamic], props))

    def broadcast(self, arg: object, is_broadcast_dim: object) -> Tensor:
        """Inserts size-1 dimensions where `is_broadcast_dim` is True."""
        name = "broadcast"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        if isinstance(is_broadcast_dim, (str, bytes)) or not isinstance(is_broadcast_dim, Sequence):
            raise ArgumentError(f"{name}: argument 'is_broadcast_dim' must be a list of bools, got {_kind(is_broadcast_dim)}")
        flags = [self._bool(f, name, f"is_broadcast_dim[{i}]") for i, f in enumerate(is_broadcast_dim)]
        kept = [i for i, f in enumerate(flags) if not f]
        if len(kept) != t.ndim:
            raise ArgumentError(
                f"{name}: argument 'is_broadcast_dim' has {len(kept)} False entries, but the input "
                f"has rank {t.ndim} (one False entry per input dimension)"
            )
        shape = [1 if f else -1 for f in flags]
        return self.broadcast_in_dim(t, shape, kept)

    def expand(self, arg: object, shape: object) -> Tensor:
        """Expands size-1 dimensions to `shape` (-1 keeps an extent)."""
        name = "expand"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        entries = self._extent_entries(shape, name, "shape")
        if len(entries) != t.ndim:
            raise ArgumentError(
                f"{name}: argument 'shape' has {len(entries)} entries, but the input has rank {t.ndim}"
            )
        resolved = [self._extent(t.value, d) if isinstance(e, int) and e == -1 else e for d, e in enumerate(entries)]
        static, dynamic = self._split(resolved)
        props = {"static_shape": fusion.int_list(static)}
        return self._tensor_op(name, lambda: _make(fusion.ExpandOp, [t.value, dynamic], props))

    def reshape(self, arg: object, new_shape: object, *rest: object) -> Tensor:
        """`arg`'s elements viewed with `new_shape` (one -1 entry may be inferred).

        The older spelling `reshape(arg, original_shape, new_shape)` is accepted.
        """
        name = "reshape"
        self._open(name)
        if len(rest) > 1:
            raise ArgumentError(f"{name} takes (arg, new_shape) or (arg, original_shape, new_shape)")
        if rest:
            new_shape = rest[0]
        t = self._tensor(arg, name, "arg")
        entries = self._extent_entries(new_shape, name, "new_shape")
        if sum(1 for e in entries if isinstance(e, int) and e == -1) > 1:
            raise ArgumentError(f"{name}: argument 'new_shape' may have at most one -1 entry")
        static, dynamic = self._split(entries)
        props = {"static_shape": fusion.int_list(static)}
        return self._tensor_op(name, lambda: _make(fusion.ReshapeOp, [t.value, dynamic], props))

    def permute(self, arg: object, dims: object) -> Tensor:
        """Reorders dimensions: output dimension i is input dimension `dims[i]`."""
        name = "permute"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        raw = self._ints(dims, name, "dims")
        if len(raw) != t.ndim:
            raise ArgumentError(
                f"{name}: argument 'dims' has {len(raw)} entries, but the input has rank {t.ndim}"
            )
        perm = self._dims(raw, t.ndim, name)
        props = {"dims": fusion.int_list(perm)}
        return self._tensor_op(name, lambda: _make(fusion.PermuteOp, [t.value], props))

    def squeeze(self, arg: object, dims: object, *rest: object, squeeze_expanded: bool = False) -> Tensor:  # noqa: ARG002
        """Removes size-1 dimensions `dims` (older spelling `(arg, original_shape, dims)` too).

        A symbolic (-1) dimension must have extent 1 at run time; it is
        removed by a reshape.
        """
        name = "squeeze"
        self._open(name)
        # `squeeze_expanded` is nvFuser's; accepted and ignored: an expanded
        # dimension of extent 1 squeezes like any other size-1 dimension.
        if rest and not (isinstance(rest[0], bool) and len(rest) == 1):
            dims = rest[0]
        t = self._tensor(arg, name, "arg")
        ds = self._dims(dims, t.ndim, name)
        assert isinstance(t.value.type, TensorType)
        shape = t.value.type.get_shape()
        for d in ds:
            if shape[d] not in (1, DYNAMIC):
                raise ArgumentError(
                    f"{name}: argument 'dims': cannot squeeze dimension {d} of extent {shape[d]}; "
                    "only extent-1 dimensions squeeze"
                )
        if all(shape[d] == 1 for d in ds):
            props = {"dims": fusion.int_list(ds)}
            return self._tensor_op(name, lambda: _make(fusion.SqueezeOp, [t.value], props))
        kept = [self._extent(t.value, d) for d in range(t.ndim) if d not in ds]
        static, dynamic = self._split(kept)
        props = {"static_shape": fusion.int_list(static)}
        return self._tensor_op(name, lambda: _make(fusion.ReshapeOp, [t.value, dynamic], props))

    def _slice_bound(self, t: Tensor, d: int, e: int | SSAValue, normalize: bool) -> int | SSAValue:
        """A start or end index with Python's negative-index meaning (clamped at 0)."""
        if not isinstance(e, int) or e >= 0 or not normalize:
            return e
        extent = self._extent(t.value, d)
        if isinstance(extent, int):
            return max(extent + e, 0)
        shifted = self._scalar_op(arith.AddiOp(extent, self._index(e))).value
        return self._scalar_op(arith.MaxSIOp(shifted, self._index(0))).value

    def slice(
        self,
        arg: object,
        start_indices: object,
        end_indices: object,
        strides: object = None,
        manual_normalization: bool = False,
    ) -> Tensor:
        """`arg[start:end:stride, ...]`; negative indices count from the end."""
        name = "slice"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        manual = self._bool(manual_normalization, name, "manual_normalization")
        starts = self._extent_entries_signed(start_indices, name, "start_indices")
        ends = self._extent_entries_signed(end_indices, name, "end_indices")
        steps = [1] * t.ndim if strides is None else self._extent_entries_signed(strides, name, "strides")
        for what, lst in (("start_indices", starts), ("end_indices", ends), ("strides", steps)):
            if len(lst) != t.ndim:
                raise ArgumentError(
                    f"{name}: argument '{what}' has {len(lst)} entries, but the input has rank {t.ndim}"
                )
        for s in steps:
            if isinstance(s, int) and s < 1:
                raise ArgumentError(f"{name}: argument 'strides' entries must be positive, got {s}")
        starts = [self._slice_bound(t, d, e, not manual) for d, e in enumerate(starts)]
        ends = [self._slice_bound(t, d, e, not manual) for d, e in enumerate(ends)]
        for what, lst in (("start_indices", starts), ("end_indices", ends)):
            for e in lst:
                if isinstance(e, int) and e < 0:
                    raise ArgumentError(f"{name}: argument '{what}' entry {e} is negative")
        return self._slice(t, starts, ends, steps)

    def _slice(
        self,
        t: Tensor,
        starts: Sequence[int | SSAValue],
        ends: Sequence[int | SSAValue],
        steps: Sequence[int | SSAValue],
    ) -> Tensor:
        name = "slice"
        (s0, d0), (s1, d1), (s2, d2) = self._split(starts), self._split(ends), self._split(steps)
        props = {
            "static_start": fusion.int_list(s0),
            "static_stop": fusion.int_list(s1),
            "static_step": fusion.int_list(s2),
        }
        return self._tensor_op(name, lambda: _make(fusion.SliceOp, [t.value, d0, d1, d2], props))

    def _extent_entries_signed(self, x: object, name: str, arg: str) -> list[int | SSAValue]:
        """Like `_extent_entries`, but any int is allowed (indices may be negative)."""
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence | torch.Size | Vector):
            raise ArgumentError(f"{name}: argument '{arg}' must be a list of ints and Scalars, got {_kind(x)}")
        ints = [
            self._int(e, name, f"{arg}[{i}]")
            for i, e in enumerate(x)
            if isinstance(e, numbers.Integral) and not isinstance(e, bool)
        ]
        masked = [0 if isinstance(e, numbers.Integral) and not isinstance(e, bool) else e for e in x]
        out = self._extent_entries(masked, name, arg)
        it = iter(ints)
        return [next(it) if isinstance(m, numbers.Integral) and not isinstance(m, bool) else o for m, o in zip(masked, out)]

    def select(self, arg: object, index: object, dim: int) -> Tensor:
        """`arg` indexed at `index` along `dim` (that dimension removed)."""
        name = "select"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        (d,) = self._dims(dim, t.ndim, name, "dim")
        if isinstance(index, numbers.Integral) and not isinstance(index, bool):
            start: int | SSAValue = self._slice_bound(t, d, self._int(index, name, "index"), True)
            stop: int | SSAValue = start + 1 if isinstance(start, int) else self._scalar_op(
                arith.AddiOp(start, self._index(1))
            ).value
        elif isinstance(index, Scalar):
            self._fd._own(index, f"{name}: argument 'index'")
            start = self._to_index(index.value, name, "index")
            stop = self._scalar_op(arith.AddiOp(start, self._index(1))).value
        else:
            raise ArgumentError(f"{name}: argument 'index' must be an int or a Scalar, got {_kind(index)}")
        starts: list[int | SSAValue] = [0] * t.ndim
        stops: list[int | SSAValue] = [self._extent(t.value, e) for e in range(t.ndim)]
        starts[d], stops[d] = start, stop
        sliced = self._slice(t, starts, stops, [1] * t.ndim)
        return self.squeeze(sliced, [d])

    def pad(self, arg: object, pad_widths: object, value: object = None) -> Tensor:
        """Pads with `value` (default 0); widths as torch.nn.functional.pad, last dimension first."""
        name = "pad"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        # Widths are ints or Scalars (a Vector too); negative ones crop, as torch's pad.
        widths = self._extent_entries_signed(pad_widths, name, "pad_widths")
        if len(widths) % 2 or len(widths) > 2 * t.ndim:
            raise ArgumentError(
                f"{name}: argument 'pad_widths' has {len(widths)} entries; it needs an even number, "
                f"at most twice the input's rank {t.ndim}"
            )
        low: list[int | SSAValue] = [0] * t.ndim
        high: list[int | SSAValue] = [0] * t.ndim
        for k in range(len(widths) // 2):
            d = t.ndim - 1 - k
            low[d], high[d] = widths[2 * k], widths[2 * k + 1]
            lo, hi, e = low[d], high[d], t._extents()[d]
            if isinstance(lo, int) and isinstance(hi, int) and e >= 0 and lo + e + hi < 0:
                raise ArgumentError(
                    f"{name}: argument 'pad_widths' crops dimension {d} of extent {e} to "
                    f"{lo} + {e} + {hi} = {lo + e + hi} elements"
                )
        fill = self._scalar_operand(0 if value is None else value, name, "value")
        (s_low, d_low), (s_high, d_high) = self._split(low), self._split(high)
        props = {"low": fusion.int_list(s_low), "high": fusion.int_list(s_high)}
        return self._tensor_op(name, lambda: _make(fusion.PadOp, [t.value, fill, d_low, d_high], props))

    def cat(self, tensors: object, dim: int = 0, manual_padding: bool = False) -> Tensor:
        """Concatenates `tensors` along `dim`."""
        name = "cat"
        self._open(name)
        if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or not tensors:
            raise ArgumentError(f"{name}: argument 'tensors' must be a non-empty list of Tensors, got {_kind(tensors)}")
        ts = [self._tensor(x, name, f"tensors[{i}]") for i, x in enumerate(tensors)]
        self._bool(manual_padding, name, "manual_padding")
        (d,) = self._dims(dim, ts[0].ndim, name, "dim")
        for i, x in enumerate(ts[1:], 1):
            if x.ndim != ts[0].ndim:
                raise ArgumentError(
                    f"{name}: argument 'tensors[{i}]' has rank {x.ndim}, 'tensors[0]' has rank {ts[0].ndim}"
                )
        props = {"dim": IntegerAttr(d, i64)}
        values = [x.value for x in ts]
        return self._tensor_op(name, lambda: _make(fusion.CatOp, [values], props))

    # ------------------------------------------------------------------ #
    # Indexing                                                           #
    # ------------------------------------------------------------------ #

    def _indexing(self, name: str, cls: type[IRDLOperation], arg: object, index: object, dim: object,
                  src: object = None) -> Tensor:
        """index_select, gather, take_along_axis and scatter: `arg` indexed along `dim`."""
        self._open(name)
        t = self._tensor(arg, name, "arg")
        idx = self._tensor(index, name, "index")
        operands = [t.value, idx.value]
        if src is not None:
            operands.append(self._tensor(src, name, "src").value)
        if t.ndim == 0:
            raise ArgumentError(f"{name}: argument 'arg' must have rank >= 1, got a 0-d tensor")
        (d,) = self._dims(self._int(dim, name, "dim"), t.ndim, name, "dim")
        props = {"dim": IntegerAttr(d, i64)}
        return self._tensor_op(name, lambda: _make(cls, operands, props))

    def index_select(self, arg: object, index: object, dim: object) -> Tensor:
        """torch.index_select(arg, dim, index): index is 1-D (int32 or int64), or 0-d, which
        selects one entry and keeps `dim` with extent 1 (as torch does)."""
        if isinstance(index, Tensor) and index.ndim == 0:
            self._open("index_select")
            self._fd._own(index, "index_select: argument 'index'")
            index = self.broadcast_in_dim(index, [1], [])
        return self._indexing("index_select", fusion.IndexSelectOp, arg, index, dim)

    def gather(self, arg: object, index: object, dim: object) -> Tensor:
        """torch.gather(arg, dim, index): the result has the index's shape."""
        return self._indexing("gather", fusion.GatherOp, arg, index, dim)

    def take_along_axis(self, arg: object, index: object, dim: object) -> Tensor:
        """numpy.take_along_axis(arg, index, dim): gather with the index's other extents equal to arg's."""
        return self._indexing("take_along_axis", fusion.TakeAlongAxisOp, arg, index, dim)

    def scatter(self, arg: object, index: object, src: object, dim: object) -> Tensor:
        """torch.scatter(arg, dim, index, src) out of place (no reduce); src a Tensor of the
        index's shape, or a scalar (a Scalar or a number) written at every index, as
        torch.scatter's `value` form is."""
        if not isinstance(src, Tensor):
            name = "scatter"
            self._open(name)
            t = self._tensor(arg, name, "arg")
            idx = self._tensor(index, name, "index")
            value = self._scalar_operand(src, name, "src")
            src = self.full(idx.shape(), Scalar(self._fd, value, -1), t.dtype())
        return self._indexing("scatter", fusion.ScatterOp, arg, index, dim, src)

    def index_put_accumulate(self, acc: object, index: object, value: object) -> Tensor:
        """torch.index_put(acc, (index,), value, accumulate=True): index 1-D, value [len(index), *acc.shape[1:]]."""
        name = "index_put_accumulate"
        self._open(name)
        operands = [self._tensor(acc, name, "acc").value, self._tensor(index, name, "index").value,
                    self._tensor(value, name, "value").value]
        return self._tensor_op(name, lambda: _make(fusion.IndexPutAccumulateOp, operands))

    def embedding_fwd(self, input: object, weight: object, padding_idx: object = None, max_norm: object = None,
                      norm_type: object = None, scale_grad_by_freq: object = None, sparse: object = None) -> Tensor:
        """torch.nn.functional.embedding(input, weight, ...): padding_idx, scale_grad_by_freq and
        sparse only change the gradient. With `max_norm`, each looked-up row whose `norm_type`
        norm (2 by default) exceeds max_norm is scaled by max_norm / (norm + 1e-7), as torch
        renormalizes it; the output is what torch returns, and the weight is not modified
        (torch renormalizes the rows of its weight in place; nvFuser never writes an input)."""
        name = "embedding_fwd"
        self._open(name)
        idx = self._tensor(input, name, "input")
        w = self._tensor(weight, name, "weight")
        for arg, x in (("padding_idx", padding_idx), ("norm_type", norm_type),
                       ("scale_grad_by_freq", scale_grad_by_freq), ("sparse", sparse)):
            if x is not None:
                self._scalar_operand(x, name, arg)
        out = self._tensor_op(name, lambda: _make(fusion.EmbeddingOp, [idx.value, w.value]))
        if max_norm is None:
            return out
        if w.ndim != 2:
            raise ArgumentError(f"{name}: max_norm needs a 2-D weight, got rank {w.ndim}")
        self._scalar_operand(max_norm, name, "max_norm")
        return self._renorm_rows(out, max_norm, 2.0 if norm_type is None else norm_type)

    def _renorm_rows(self, rows: Tensor, max_norm: object, p: object) -> Tensor:
        """`rows` (the last dim a row) scaled by max_norm / (norm + 1e-7) where the row's
        p-norm exceeds max_norm, computed in f32 (f64 for f64) and cast back."""
        et = rows.dtype()
        ct = DataType.Double if et == DataType.Double else DataType.Float
        x = self.cast(rows, ct)
        if isinstance(p, numbers.Real) and float(p) == 2.0:
            norm = self.sqrt(self.sum(self.mul(x, x), [-1], True))
        elif isinstance(p, numbers.Real) and float(p) == 1.0:
            norm = self.sum(self.abs(x), [-1], True)
        else:
            norm = self.pow(self.sum(self.pow(self.abs(x), p), [-1], True), self.reciprocal(p))
        limit = self.cast(max_norm, ct)
        scale = self.where(self.gt(norm, limit), self.div(limit, self.add(norm, 1e-7)), 1.0)
        return self.cast(self.mul(x, scale), et)  # type: ignore[return-value]

    def aten(
        self,
        target: str,
        call: str,
        inputs: Sequence[Tensor],
        scalars: Sequence[Scalar],
        sizes: Sequence[int | Scalar],
        results: Sequence[tuple[Sequence[int], DataType]],
        out: tuple[str, Sequence[str]] | None = None,
    ) -> list[Tensor]:
        """An extension (not nvFuser's): one ATen call, `fusion.aten` (its docstring has the
        `call` JSON). `results` gives each result's shape (-1 where `?`) and dtype; `sizes`
        the extents of the `?` ones in order (ints or Scalars)."""
        name = "aten"
        self._open(name)
        ins = [self._tensor(t, name, f"inputs[{i}]").value for i, t in enumerate(inputs)]
        scs = [self._to_index(self._scalar_operand(s, name, f"scalars[{i}]"), name, f"scalars[{i}]")
               for i, s in enumerate(scalars)]
        entries = self._extent_entries(list(sizes), name, "sizes")
        dyn = [e if isinstance(e, SSAValue) else self._index(e) for e in entries]
        types = [TensorType(to_element_type(self._dtype(dt, name)), [DYNAMIC if e == -1 else e for e in shape])
                 for shape, dt in results]
        op = self._build(name, lambda: fusion.AtenOp(target, call, ins, scs, dyn, types, out))
        return [self._fd._name_tensor(r) for r in op.results]

    # ------------------------------------------------------------------ #
    # Reductions                                                         #
    # ------------------------------------------------------------------ #

    def _reduction(
        self,
        name: str,
        cls: type[fusion.ReductionOp],
        arg: object,
        dims: object,
        keepdim: object,
        dtype: object,
    ) -> Tensor:
        self._open(name)
        t = self._tensor(arg, name, "arg")
        if isinstance(dims, DataType):  # sum(arg, dtype)
            dims, dtype = None, dims
        ds = list(range(t.ndim)) if dims is None else self._dims(dims, t.ndim, name)
        keep = self._bool(keepdim, name, "keepdim")
        dt = self._dtype(dtype, name, allow_null=True)
        v = t.value
        declared: Attribute = i1
        if dt is not DataType.Null:
            et = to_element_type(dt)
            if cls in (fusion.SumOp, fusion.ProdOp):
                v = self._cast(v, et)
                declared = et
        if cls is fusion.MeanOp:
            # as torch.mean: the mean of integers needs a floating-point dtype= (nvFuser's
            # frontend has no mean; the result would otherwise be a float of an int input)
            wanted = _elem(v) if dt is DataType.Null else to_element_type(dt)
            if not rules.is_float(wanted):
                what = f"argument 'dtype' is {dt!r}" if dt is not DataType.Null else f"the input is {t.dtype()!r}"
                raise ArgumentError(
                    f"{name}: could not infer the output dtype: {what}; the mean needs a floating-point "
                    "dtype (pass dtype=DataType.Float to average integers, as torch.mean(x, dtype=...))")
            if not rules.is_float(_elem(v)):
                v = self._cast(v, f32)
        props: dict[str, Attribute] = {"dims": fusion.int_list(ds)}
        if keep:
            props["keepdim"] = UnitAttr()
        out = self._tensor_op(name, lambda: _make(cls, [v], props, [TensorType(declared, [])]))
        if dt is not DataType.Null and _elem(out.value) != to_element_type(dt):
            return self.cast(out, dt)  # type: ignore[return-value]
        return out

    def sum(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Sum over `dims` (all by default); Bool and integer inputs accumulate in Int."""
        return self._reduction("sum", fusion.SumOp, arg, dims, keepdim, dtype)

    def prod(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Product over `dims` (all by default)."""
        return self._reduction("prod", fusion.ProdOp, arg, dims, keepdim, dtype)

    def max(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Maximum over `dims` (all by default)."""
        return self._reduction("max", fusion.MaxOp, arg, dims, keepdim, dtype)

    def min(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Minimum over `dims` (all by default)."""
        return self._reduction("min", fusion.MinOp, arg, dims, keepdim, dtype)

    def mean(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Mean over `dims` (an Allotment extension: nvFuser spells it sum / count)."""
        return self._reduction("mean", fusion.MeanOp, arg, dims, keepdim, dtype)

    def var_mean(self, arg: object, dims: object, correction: object = 1, keepdim: object = False) -> tuple[Tensor, Tensor]:
        """(variance, mean) over `dims`; the variance divides by N - correction."""
        name = "var_mean"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        ds = self._dims(dims, t.ndim, name)
        corr = self._int(correction, name, "correction")
        if corr < 0:
            raise ArgumentError(f"{name}: argument 'correction' must be non-negative, got {corr}")
        keep = self._bool(keepdim, name, "keepdim")
        v = t.value
        if not rules.is_float(_elem(v)):
            raise ArgumentError(f"{name}: argument 'arg' must be a floating-point tensor, got {t.dtype()!r}")
        if _elem(v) in HALF:
            v = self._cast(v, f32)
        props: dict[str, Attribute] = {"dims": fusion.int_list(ds), "correction": IntegerAttr(corr, i64)}
        if keep:
            props["keepdim"] = UnitAttr()
        ph = TensorType(i1, [])
        op = self._build(name, lambda: _make(fusion.VarMeanOp, [v], props, [ph, ph]))
        return self._fd._tensor_result(op, 0), self._fd._tensor_result(op, 1)

    def var(self, arg: object, dims: object, correction: object = 1, keepdim: object = False) -> Tensor:
        """Variance over `dims` (the first result of `var_mean`)."""
        return self.var_mean(arg, dims, correction, keepdim)[0]

    # ------------------------------------------------------------------ #
    # Matrix products                                                    #
    # ------------------------------------------------------------------ #

    def matmul(self, arg1: object, arg2: object) -> Tensor:
        """`torch.matmul(arg1, arg2)`; both operands share one floating-point dtype."""
        name = "matmul"
        self._open(name)
        a = self._tensor(arg1, name, "arg1")
        b = self._tensor(arg2, name, "arg2")
        return self._tensor_op(name, lambda: fusion.MatmulOp(a.value, b.value))

    def linear(self, arg1: object, arg2: object, bias: object = None) -> Tensor:
        """`arg1 @ arg2^T + bias` (torch.nn.functional.linear)."""
        name = "linear"
        self._open(name)
        x = self._tensor(arg1, name, "arg1")
        w = self._tensor(arg2, name, "arg2")
        b = [] if bias is None else [self._tensor(bias, name, "bias").value]
        return self._tensor_op(name, lambda: _make(fusion.LinearOp, [x.value, w.value, b]))

    # ------------------------------------------------------------------ #
    # Composites (nvFuser ops with no dialect op of their own)           #
    # ------------------------------------------------------------------ #

    def _keep_dtype(self, out: Tensor, like: Tensor) -> Tensor:
        return out if out.dtype() == like.dtype() else self.cast(out, like.dtype())  # type: ignore[return-value]

    def silu(self, arg: object) -> Tensor:
        """`x * sigmoid(x)`, in the input's floating-point type."""
        t = self._tensor(arg, "silu", "arg")
        if not rules.is_float(_elem(t.value)):
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
        if isinstance(x, Tensor):
            raise ArgumentError(f"{name}: argument '{arg}' must be a Scalar or a Python number, got a Tensor")
        self._operand(x, name, arg)  # type check
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
        if not rules.is_float(_elem(t.value)):
            return self.ne(t, t)  # type: ignore[return-value]
        return self.eq(t, float("inf"))  # type: ignore[return-value]

    def isneginf(self, arg: object) -> Tensor:
        t = self._tensor(arg, "isneginf", "arg")
        if not rules.is_float(_elem(t.value)):
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
        if _is_tensor(v) and rules.is_complex(_elem(v)):
            return self._tensor_op("real", lambda: fusion.RealOp(v))
        return self.set(arg)

    def imag(self, arg: object) -> Tensor:
        """The imaginary part of a complex tensor, of its parts' type."""
        self._open("imag")
        t = self._tensor(arg, "imag", "arg")
        if not rules.is_complex(_elem(t.value)):
            raise ArgumentError(f"imag: argument 'arg' must be a complex tensor, got {t.dtype()!r}")
        return self._tensor_op("imag", lambda: fusion.ImagOp(t.value))


_UNARY: dict[str, tuple[type[fusion.UnaryOp], bool]] = {
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

_BINARY: dict[str, tuple[type[fusion.BinaryOp], str]] = {
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


def _define_unary(name: str, cls: type[fusion.UnaryOp], to_float: bool) -> None:
    def op(self: Operators, arg: object) -> Tensor | Scalar:
        return self._unary(name, cls, to_float, arg)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"`fusion.{name}`, elementwise" + (" (f16/bf16/integer inputs give f32)." if to_float else ".")
    setattr(Operators, name, op)


def _define_binary(name: str, cls: type[fusion.BinaryOp], promote: str) -> None:
    def op(self: Operators, arg1: object, arg2: object) -> Tensor | Scalar:
        return self._binary(name, cls, promote, arg1, arg2)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"`{cls.name}`, elementwise, with nvFuser's type promotion ({promote})."
    setattr(Operators, name, op)


for _name, (_cls, _float) in _UNARY.items():
    _define_unary(_name, _cls, _float)
for _name, (_cls, _promote) in _BINARY.items():
    _define_binary(_name, _cls, _promote)

SUPPORTED: tuple[str, ...] = tuple(
    sorted(
        set(_UNARY)
        | set(_BINARY)
        | {
            "where", "cast", "set", "segment_set", "stride_order", "triu", "tril", "full", "iota", "size", "shape", "tensor_sizes", "at",
            "broadcast_in_dim", "broadcast", "expand", "reshape", "permute", "squeeze", "slice",
            "select", "pad", "cat", "sum", "prod", "max", "min", "mean", "var_mean", "var",
            "matmul", "linear", "silu", "clamp", "threshold", "lerp", "addcmul", "add_alpha",
            "sub_alpha", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "real", "imag",
        }
        | {"rand", "randn", "uniform", "normal", "rand_like", "randn_like", "welford"}
        | {"index_select", "gather", "take_along_axis", "embedding_fwd", "scatter", "index_put_accumulate"}
        | {"cumsum", "cumprod", "cummax", "cummin", "argsort", "topk"}
    )
)
"""Every `fd.ops` name that builds IR."""


def _arity_message(name: str, sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any], why: str) -> str:
    """`ops.<name> takes 2 arguments (arg1, arg2), got 1: <why>`."""
    params = list(sig.parameters.values())[1:]  # without self
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in positional if p.default is p.empty)
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if varargs:
        arity = f"at least {required} argument{'s' if required != 1 else ''}"
    elif required == len(positional):
        arity = f"{required} argument{'s' if required != 1 else ''}"
    else:
        arity = f"{required} to {len(positional)} arguments"
    names = ", ".join(p.name for p in positional) + (", ..." if varargs else "")
    got = str(len(args))
    if kwargs:
        got += f" and keyword argument{'s' if len(kwargs) > 1 else ''} " + ", ".join(repr(k) for k in kwargs)
    return f"ops.{name} takes {arity} ({names}), got {got}: {why}"


def _checked(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (an `fd.ops` method) raising ArgumentError, naming the op and what it takes, when
    called with arguments that do not bind to its parameters (instead of Python's TypeError)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def op(self: Operators, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except TypeError as e:
            if isinstance(e, Error):
                raise
            try:
                sig.bind(self, *args, **kwargs)
            except TypeError as bad:
                raise ArgumentError(_arity_message(name, sig, args, kwargs, str(bad))) from None
            raise

    return op


# Every public `fd.ops` method, written out or generated above, checks its arity.
for _name, _fn in list(vars(Operators).items()):
    if not _name.startswith("_") and inspect.isfunction(_fn):
        setattr(Operators, _name, _checked(_name, _fn))
