"""Scalar arithmetic for `alloc-to-mlir`: one element of each elementwise fusion op
as upstream `arith` and `math` ops.

Every element of a tensor of element type T is an SSA scalar of type T. An op
computes in its compute type (`compute_type`: f32 for f16 and bf16, as torch's
CPU kernels and the Triton kernels do; the type itself otherwise) and rounds
its result once to the result's element type. `emit` is the builder the
kernel lowering passes in: it places each new op where its operands live.

`UNARY` and `BINARY` map fusion op classes to the scalar function they
compute; an op in neither (nor handled by the kernel lowering itself) is
refused with a located error naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as mmath
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    f32,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def

from allotment.dialects import fusion


@irdl_op_definition
class RemFOp(IRDLOperation):
    """Upstream `arith.remf` (C's fmod), which xDSL 0.75 lacks: built here and printed in
    the generic form, which mlir-opt parses."""

    name = "arith.remf"
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


Emit = Callable[[Operation], Operation]
"""Inserts an op where its operands are defined (the kernel lowering's builder)."""


def is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def compute_type(t: Attribute) -> Attribute:
    """f32 for the 16-bit floats, else `t`."""
    return f32 if isinstance(t, (Float16Type, BFloat16Type)) else t


def width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    return {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}[type(t)]


def constant(emit: Emit, value: float | int | bool, t: Attribute) -> SSAValue:
    """An `arith.constant` of type `t` (inf and NaN included)."""
    if is_float(t):
        return emit(arith.ConstantOp(FloatAttr(float(value), t))).results[0]
    if isinstance(t, IndexType):
        return emit(arith.ConstantOp(IntegerAttr(int(value), t))).results[0]
    assert isinstance(t, IntegerType)
    v = int(value)
    if t.width.data == 1:
        v = -1 if v else 0  # i1 true prints as -1 in xDSL's signless form; `true` in MLIR
        return emit(arith.ConstantOp(IntegerAttr(v, t))).results[0]
    return emit(arith.ConstantOp(IntegerAttr(v, t))).results[0]


def convert(emit: Emit, v: SSAValue, to: Attribute) -> SSAValue:
    """`v` converted to `to` as `fusion.cast` defines it (float to int truncates toward
    zero, anything to i1 is `x != 0`, i1 to a number is 0 or 1)."""
    src = v.type
    if src == to:
        return v
    if to == i1:
        zero = constant(emit, 0, src)
        if is_float(src):
            return emit(arith.CmpfOp(v, zero, "une")).results[0]
        return emit(arith.CmpiOp(v, zero, "ne")).results[0]
    if is_float(src) and is_float(to):
        if {type(src), type(to)} == {Float16Type, BFloat16Type}:
            return convert(emit, convert(emit, v, f32), to)
        cls = arith.ExtFOp if width(to) > width(src) else arith.TruncFOp
        return emit(cls(v, to)).results[0]
    if is_float(src):
        return emit(arith.FPToSIOp(v, to)).results[0]
    if is_float(to):
        cls = arith.UIToFPOp if src == i1 else arith.SIToFPOp
        return emit(cls(v, to)).results[0]
    if isinstance(src, IndexType) or isinstance(to, IndexType):
        return emit(arith.IndexCastOp(v, to)).results[0]
    if width(to) > width(src):
        cls = arith.ExtUIOp if src == i1 else arith.ExtSIOp
        return emit(cls(v, to)).results[0]
    return emit(arith.TruncIOp(v, to)).results[0]


# --------------------------------------------------------------------------- #
# Unary functions, in the compute type                                        #
# --------------------------------------------------------------------------- #


def _f(cls: type[Operation]) -> Callable[[Emit, SSAValue], SSAValue]:
    return lambda emit, x: emit(cls(x)).results[0]


def _neg(emit: Emit, x: SSAValue) -> SSAValue:
    if is_float(x.type):
        return emit(arith.NegfOp(x)).results[0]
    return emit(arith.SubiOp(constant(emit, 0, x.type), x)).results[0]


def _abs(emit: Emit, x: SSAValue) -> SSAValue:
    if is_float(x.type):
        return emit(mmath.AbsFOp(x)).results[0]
    if x.type == i1:
        return x
    return emit(mmath.AbsIOp(x)).results[0]


def _relu(emit: Emit, x: SSAValue) -> SSAValue:
    zero = constant(emit, 0, x.type)
    if is_float(x.type):  # torch.relu keeps NaN
        keep = emit(arith.CmpfOp(x, zero, "ugt")).results[0]
        return emit(arith.SelectOp(keep, x, zero)).results[0]
    if x.type == i1:
        return x
    return emit(arith.MaxSIOp(x, zero)).results[0]


def _reciprocal(emit: Emit, x: SSAValue) -> SSAValue:
    return emit(arith.DivfOp(constant(emit, 1.0, x.type), x)).results[0]


def _sigmoid(emit: Emit, x: SSAValue) -> SSAValue:
    one = constant(emit, 1.0, x.type)
    e = emit(mmath.ExpOp(_neg(emit, x))).results[0]
    return emit(arith.DivfOp(one, emit(arith.AddfOp(one, e)).results[0])).results[0]


def _logical_not(emit: Emit, x: SSAValue) -> SSAValue:
    b = convert(emit, x, i1)
    return emit(arith.XOrIOp(b, constant(emit, 1, i1))).results[0]


def _frac(emit: Emit, x: SSAValue) -> SSAValue:
    return emit(arith.SubfOp(x, emit(mmath.TruncOp(x)).results[0])).results[0]


def _sign(emit: Emit, x: SSAValue) -> SSAValue:
    zero = constant(emit, 0, x.type)
    if is_float(x.type):
        one, minus = constant(emit, 1.0, x.type), constant(emit, -1.0, x.type)
        pos = emit(arith.CmpfOp(x, zero, "ogt")).results[0]
        neg = emit(arith.CmpfOp(x, zero, "olt")).results[0]
        v = emit(arith.SelectOp(neg, minus, x)).results[0]  # 0, -0 and NaN stay
        return emit(arith.SelectOp(pos, one, v)).results[0]
    if x.type == i1:
        return x
    one, minus = constant(emit, 1, x.type), constant(emit, -1, x.type)
    pos = emit(arith.CmpiOp(x, zero, "sgt")).results[0]
    neg = emit(arith.CmpiOp(x, zero, "slt")).results[0]
    return emit(arith.SelectOp(pos, one, emit(arith.SelectOp(neg, minus, zero)).results[0])).results[0]


def _signbit(emit: Emit, x: SSAValue) -> SSAValue:
    if is_float(x.type):
        bits = IntegerType(width(x.type))
        b = emit(arith.BitcastOp(x, bits)).results[0]
        return emit(arith.CmpiOp(b, constant(emit, 0, bits), "slt")).results[0]
    if x.type == i1:
        return constant(emit, 0, i1)
    return emit(arith.CmpiOp(x, constant(emit, 0, x.type), "slt")).results[0]


def _bitwise_not(emit: Emit, x: SSAValue) -> SSAValue:
    return emit(arith.XOrIOp(x, constant(emit, -1 if x.type != i1 else 1, x.type))).results[0]


def _round_int_passthrough(cls: type[Operation]) -> Callable[[Emit, SSAValue], SSAValue]:
    def f(emit: Emit, x: SSAValue) -> SSAValue:
        return emit(cls(x)).results[0] if is_float(x.type) else x

    return f


UNARY: dict[type[Operation], Callable[[Emit, SSAValue], SSAValue]] = {
    fusion.NegOp: _neg,
    fusion.AbsOp: _abs,
    fusion.ReluOp: _relu,
    fusion.ExpOp: _f(mmath.ExpOp),
    fusion.LogOp: _f(mmath.LogOp),
    fusion.SqrtOp: _f(mmath.SqrtOp),
    fusion.RsqrtOp: _f(mmath.RsqrtOp),
    fusion.ReciprocalOp: _reciprocal,
    fusion.TanhOp: _f(mmath.TanhOp),
    fusion.SigmoidOp: _sigmoid,
    fusion.SinOp: _f(mmath.SinOp),
    fusion.CosOp: _f(mmath.CosOp),
    fusion.ErfOp: _f(mmath.ErfOp),
    fusion.LogicalNotOp: _logical_not,
    fusion.AcosOp: _f(mmath.AcosOp),
    fusion.AcoshOp: _f(mmath.AcoshOp),
    fusion.AsinOp: _f(mmath.AsinOp),
    fusion.AsinhOp: _f(mmath.AsinhOp),
    fusion.AtanOp: _f(mmath.AtanOp),
    fusion.AtanhOp: _f(mmath.AtanhOp),
    fusion.CoshOp: _f(mmath.CoshOp),
    fusion.SinhOp: _f(mmath.SinhOp),
    fusion.TanOp: _f(mmath.TanOp),
    fusion.Exp2Op: _f(mmath.Exp2Op),
    fusion.Expm1Op: _f(mmath.ExpM1Op),
    fusion.Log2Op: _f(mmath.Log2Op),
    fusion.Log10Op: _f(mmath.Log10Op),
    fusion.Log1pOp: _f(mmath.Log1pOp),
    fusion.ErfcOp: lambda emit, x: emit(arith.SubfOp(constant(emit, 1.0, x.type), emit(mmath.ErfOp(x)).results[0])).results[0],
    fusion.CeilOp: _round_int_passthrough(mmath.CeilOp),
    fusion.FloorOp: _round_int_passthrough(mmath.FloorOp),
    fusion.RoundOp: _round_int_passthrough(mmath.RoundEvenOp),
    fusion.TruncOp: _round_int_passthrough(mmath.TruncOp),
    fusion.FracOp: _frac,
    fusion.SignOp: _sign,
    fusion.SignbitOp: _signbit,
    fusion.BitwiseNotOp: _bitwise_not,
}
"""Unary elementwise ops: the operand arrives in the op's compute type."""


# --------------------------------------------------------------------------- #
# Binary functions                                                            #
# --------------------------------------------------------------------------- #


def _arith(float_cls: type[Operation] | None, int_cls: type[Operation] | None) -> Callable[[Emit, SSAValue, SSAValue], SSAValue]:
    def f(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
        cls = float_cls if is_float(a.type) else int_cls
        assert cls is not None
        return emit(cls(a, b)).results[0]

    return f


def _div(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    """True division on floats; on integers toward zero, a zero divisor giving 0 (the
    generated kernels' rule)."""
    if is_float(a.type):
        return emit(arith.DivfOp(a, b)).results[0]
    zero, one = constant(emit, 0, b.type), constant(emit, 1, b.type)
    by_zero = emit(arith.CmpiOp(b, zero, "eq")).results[0]
    safe = emit(arith.SelectOp(by_zero, one, b)).results[0]
    q = emit(arith.DivSIOp(a, safe)).results[0]
    return emit(arith.SelectOp(by_zero, zero, q)).results[0]


def _pow(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a.type):
        return emit(mmath.PowFOp(a, b)).results[0]
    return emit(mmath.IPowIOp(a, b)).results[0]


def _remainder(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    """Python's modulo: the sign of the divisor."""
    if is_float(a.type):
        r = emit(RemFOp(a, b)).results[0]
        zero = constant(emit, 0.0, a.type)
        nonzero = emit(arith.CmpfOp(r, zero, "une")).results[0]
        rneg = emit(arith.CmpfOp(r, zero, "olt")).results[0]
        bneg = emit(arith.CmpfOp(b, zero, "olt")).results[0]
        differ = emit(arith.XOrIOp(rneg, bneg)).results[0]
        fix = emit(arith.AndIOp(nonzero, differ)).results[0]
        return emit(arith.SelectOp(fix, emit(arith.AddfOp(r, b)).results[0], r)).results[0]
    r = emit(arith.RemSIOp(a, b)).results[0]
    zero = constant(emit, 0, a.type)
    nonzero = emit(arith.CmpiOp(r, zero, "ne")).results[0]
    differ = emit(arith.XOrIOp(emit(arith.CmpiOp(r, zero, "slt")).results[0],
                               emit(arith.CmpiOp(b, zero, "slt")).results[0])).results[0]
    fix = emit(arith.AndIOp(nonzero, differ)).results[0]
    return emit(arith.SelectOp(fix, emit(arith.AddiOp(r, b)).results[0], r)).results[0]


def _floor_divide(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a.type):
        return emit(mmath.FloorOp(emit(arith.DivfOp(a, b)).results[0])).results[0]
    return emit(arith.FloorDivSIOp(a, b)).results[0]


def _cmp(fpred: str, ipred: str) -> Callable[[Emit, SSAValue, SSAValue], SSAValue]:
    def f(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
        if is_float(a.type):
            return emit(arith.CmpfOp(a, b, fpred)).results[0]
        pred = ipred.replace("s", "u") if a.type == i1 and ipred not in ("eq", "ne") else ipred
        return emit(arith.CmpiOp(a, b, pred)).results[0]

    return f


def _logical(cls: type[Operation]) -> Callable[[Emit, SSAValue, SSAValue], SSAValue]:
    return lambda emit, a, b: emit(cls(convert(emit, a, i1), convert(emit, b, i1))).results[0]


def _maximum(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a.type):
        return emit(arith.MaximumfOp(a, b)).results[0]  # NaN propagates, as torch.maximum
    return emit((arith.MaxUIOp if a.type == i1 else arith.MaxSIOp)(a, b)).results[0]


def _minimum(emit: Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a.type):
        return emit(arith.MinimumfOp(a, b)).results[0]
    return emit((arith.MinUIOp if a.type == i1 else arith.MinSIOp)(a, b)).results[0]


BINARY: dict[type[Operation], Callable[[Emit, SSAValue, SSAValue], SSAValue]] = {
    fusion.AddOp: _arith(arith.AddfOp, arith.AddiOp),
    fusion.SubOp: _arith(arith.SubfOp, arith.SubiOp),
    fusion.MulOp: _arith(arith.MulfOp, arith.MuliOp),
    fusion.DivOp: _div,
    fusion.PowOp: _pow,
    fusion.MaximumOp: _maximum,
    fusion.MinimumOp: _minimum,
    fusion.Atan2Op: lambda emit, a, b: emit(mmath.Atan2Op(a, b)).results[0],
    fusion.FmodOp: _arith(RemFOp, arith.RemSIOp),
    fusion.RemainderOp: _remainder,
    fusion.FloorDivideOp: _floor_divide,
    fusion.BitwiseAndOp: _arith(None, arith.AndIOp),
    fusion.BitwiseOrOp: _arith(None, arith.OrIOp),
    fusion.BitwiseXorOp: _arith(None, arith.XOrIOp),
    fusion.BitwiseLeftShiftOp: _arith(None, arith.ShLIOp),
    fusion.BitwiseRightShiftOp: _arith(None, arith.ShRSIOp),
    fusion.LogicalRightShiftOp: _arith(None, arith.ShRUIOp),
    fusion.EqOp: _cmp("oeq", "eq"),
    fusion.NeOp: _cmp("une", "ne"),
    fusion.LtOp: _cmp("olt", "slt"),
    fusion.LeOp: _cmp("ole", "sle"),
    fusion.GtOp: _cmp("ogt", "sgt"),
    fusion.GeOp: _cmp("oge", "sge"),
    fusion.LogicalAndOp: _logical(arith.AndIOp),
    fusion.LogicalOrOp: _logical(arith.OrIOp),
}
"""Binary elementwise ops: both operands arrive in one compute type (`binary_operand_type`)."""


def binary_operand_type(op: Operation, result_type: Attribute, operand_types: list[Attribute]) -> Attribute:
    """The type both operands of a binary op are converted to before it applies:
    the compute type of the promoted type (the result's, except for predicates and
    true division, which take the operands' promoted type)."""
    if isinstance(op, fusion.PredicateOp):
        from allotment.dialects import fusion_rules

        return compute_type(fusion_rules.promote(operand_types))
    return compute_type(result_type)


NEG_INF = -math.inf
POS_INF = math.inf


def lowest(emit: Emit, t: Attribute) -> SSAValue:
    """The identity of max over `t`: -inf, or the smallest integer."""
    if is_float(t):
        return constant(emit, NEG_INF, t)
    return constant(emit, 0 if t == i1 else -(1 << (width(t) - 1)), t)


def highest(emit: Emit, t: Attribute) -> SSAValue:
    """The identity of min over `t`: +inf, or the largest integer."""
    if is_float(t):
        return constant(emit, POS_INF, t)
    return constant(emit, 1 if t == i1 else (1 << (width(t) - 1)) - 1, t)
