"""Elementwise rules of `alloc-to-mlir`'s kernel lowering that need more than one op.

An elementwise operand is read at the result's index (its static size-1 dims
broadcast); fma is `math.fma` in the compute type; nextafter steps the bits of the
result type as the Triton kernels do; gcd is Euclid's loop on absolute values; triu
and tril keep an element by its position. The one-op rules are `mlir_scalar`'s tables. `ElementwiseRules` is a
part of `mlir_kernel.KernelEmitter`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mmath
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue

from allotment.dialects import fusion
from allotment.passes import mlir_scalar as sc


class ElementwiseRules:
    """Operands of elementwise ops, fma, nextafter, gcd and triangular masks (mixed into KernelEmitter)."""

    def _nextafter(self, op: fusion.NextafterOp, idx: list[SSAValue], v: SSAValue, et: Attribute) -> SSAValue:
        """The next value of the result type after a toward b (the Triton kernels' rule)."""
        a = sc.convert(self.emit, self._operand(op.lhs, idx, v), et)
        b = sc.convert(self.emit, self._operand(op.rhs, idx, v), et)
        ct = sc.compute_type(et)
        af, bf = sc.convert(self.emit, a, ct), sc.convert(self.emit, b, ct)
        bits = IntegerType(sc.width(et))
        ia = self.emit(arith.BitcastOp(a, bits)).results[0]
        zero = sc.constant(self.emit, 0.0, ct)
        away = self.emit(arith.XOrIOp(self.emit(arith.CmpfOp(bf, af, "ogt")).results[0],
                                      self.emit(arith.CmpfOp(af, zero, "ogt")).results[0])).results[0]
        away = self.emit(arith.XOrIOp(away, self.true())).results[0]  # (b > a) == (a > 0)
        one = sc.constant(self.emit, 1, bits)
        stepped = self.emit(arith.SelectOp(away, self.emit(arith.AddiOp(ia, one)).results[0],
                                           self.emit(arith.SubiOp(ia, one)).results[0])).results[0]
        # values chosen in the result type itself (its subnormals survive no conversion)
        r = self.emit(arith.BitcastOp(stepped, et)).results[0]
        tiny = self.emit(arith.BitcastOp(one, et)).results[0]
        sign = sc.constant(self.emit, 1 - (1 << (sc.width(et) - 1)), bits)  # the sign bit and 1
        neg_tiny = self.emit(arith.BitcastOp(sign, et)).results[0]
        toward = self.emit(arith.SelectOp(self.emit(arith.CmpfOp(bf, zero, "ogt")).results[0], tiny, neg_tiny)).results[0]
        r = self.emit(arith.SelectOp(self.emit(arith.CmpfOp(af, zero, "oeq")).results[0], toward, r)).results[0]
        r = self.emit(arith.SelectOp(self.emit(arith.CmpfOp(af, bf, "oeq")).results[0], b, r)).results[0]
        nan = self.emit(arith.CmpfOp(af, bf, "uno")).results[0]
        return self.emit(arith.SelectOp(nan, sc.convert(self.emit, self.emit(arith.AddfOp(af, bf)).results[0], et), r)).results[0]

    def _fma(self, op: fusion.FmaOp, idx: list[SSAValue], v: SSAValue, et: Attribute) -> SSAValue:
        """`math.fma` in the compute type (one rounding there; 16-bit floats then round once
        more, to the result type, as the Triton kernels do)."""
        ct = sc.compute_type(et)
        a, b, c = (sc.convert(self.emit, self._operand(x, idx, v), ct) for x in (op.lhs, op.rhs, op.addend))
        return sc.convert(self.emit, self.emit(mmath.FmaOp(a, b, c)).results[0], et)

    def _gcd(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Euclid on absolute values, 94 steps (enough for 64 bits), as torch and the kernels."""
        t = a.type
        zero, one, minus = (sc.constant(self.emit, k, t) for k in (0, 1, -1))

        def absolute(x: SSAValue) -> SSAValue:
            neg = self.emit(arith.CmpiOp(x, zero, "slt")).results[0]
            return self.emit(arith.SelectOp(neg, self.emit(arith.SubiOp(zero, x)).results[0], x)).results[0]

        def step(_k: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            x, y = c
            nz = self.emit(arith.CmpiOp(x, zero, "ne")).results[0]
            ok = self.emit(arith.AndIOp(nz, self.emit(arith.CmpiOp(x, minus, "ne")).results[0])).results[0]
            r = self.emit(arith.RemSIOp(y, self.emit(arith.SelectOp(ok, x, one)).results[0])).results[0]
            return [self.emit(arith.SelectOp(nz, r, x)).results[0], self.emit(arith.SelectOp(nz, x, y)).results[0]]

        _, g = self.loop(self.index(94), [absolute(a), absolute(b)], step, uses=[a, b])
        return g

    def _operand(self, x: SSAValue, idx: list[SSAValue], result: SSAValue) -> SSAValue:
        """The element of elementwise operand `x` for result index `idx` (static size-1
        dims broadcast)."""
        if not isinstance(x.type, TensorType):
            return self.scalar(x)
        shape = x.type.get_shape()
        return self.elem(x, [self.index(0) if e == 1 else i for e, i in zip(shape, idx)])

    def _triangular(self, op: fusion.TriangularOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        x = self.elem(op.input, idx)
        rank = len(idx)
        diff = self.ix("sub", idx[rank - 1], idx[rank - 2])
        k = self.index(op.diagonal_value)
        keep = self.cmp("sge" if isinstance(op, fusion.TriuOp) else "sle", diff, k)
        return self.emit(arith.SelectOp(keep, x, sc.constant(self.emit, 0, et))).results[0]
