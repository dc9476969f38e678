"""Ops of `fd.ops` on scalars only, built with `arith`: a mixin of
`allotment.frontend.ops.Operators`.

A Scalar operand (a `define_scalar`, an extent, a Python number) is converted
with arith casts; two scalars are combined in a common type: f64 if either is,
f32 for mixed or half floats, `index` for extent arithmetic (an index with an
integer stays a size: docs/dynamic-shapes.md), else i64. Integer division
truncates and `fmod` of integers is `arith.remsi`, as C's. A scalar op with no
arith spelling raises `NotSupportedError("not supported: <name> of ...")`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, f32, f64, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError
from allotment.frontend.datatypes import from_element_type, to_torch
from allotment.frontend.errors import NotSupportedError
from allotment.frontend.handles import Scalar
from allotment.frontend.operands import HALF, OperatorBase, integer_constant


class ScalarArithmetic(OperatorBase):
    """The `arith` side of `fd.ops`: scalar conversions, and the elementwise ops whose
    operands are all scalars (`PointwiseOperators` hands them here)."""

    def _convert_scalar(self, v: SSAValue, t: Attribute) -> SSAValue:
        """Scalar `v` converted to type `t` with arith ops."""
        src = v.type
        if src == t:
            return v
        emit = lambda op: self._scalar_op(op).value  # noqa: E731
        if isinstance(t, IndexType) and isinstance(src, IntegerType) and src != i1:
            known = integer_constant(v)
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
            return self._fd._constant_handle(False, i1)
        if not rules.is_float(v.type):
            x = self._convert_scalar(v, i64) if isinstance(v.type, IndexType) else v
            return self._scalar_op(arith.CmpiOp(x, self._fd._constant(0, x.type), "slt"))
        width = v.type.bitwidth  # type: ignore[attr-defined]
        bits = self._scalar_op(arith.BitcastOp(v, IntegerType(width))).value
        return self._scalar_op(arith.CmpiOp(bits, self._fd._constant(0, bits.type), "slt"))
