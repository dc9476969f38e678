"""complex-parts: a fusion function of complex values rewritten on pairs of real ones.

The fusion dialect has complex element types (`complex<f32>`, `complex<f64>`) for the
ops whose `COMPLEX` is set; the kernels have none. This rewrite gives every complex
value two real values of its parts' type, its real and imaginary parts, and every op on
complex values the real ops that compute those parts:

- a complex tensor argument becomes two arguments (the parts, which a caller passes as
  `x.real` and `x.imag`, views of the complex tensor), a complex scalar argument two
  float scalars; a complex result two results;
- `complex.constant` becomes two `arith.constant`s;
- add, sub, neg, set, where, sum and the views act on each part; mul and div as complex
  multiplication and division (`(a + bi)(c + di) = (ac - bd) + (ad + bc)i`, division by
  `c^2 + d^2`); exp as `e^a (cos b + i sin b)`; abs as `sqrt(a^2 + b^2)`; sqrt by the
  half-angle formulas (the imaginary part with the sign of `b`, so the principal root,
  as torch's); rsqrt as `conj(sqrt z) / |z|`; real and imag give a part; cast converts
  each part (to a real type: the real part, as torch's cast; to Bool: either part
  nonzero).

A real operand of an op with a complex one has imaginary part 0. `split_complex`
returns the new function and, per original argument and result, whether it was
complex, which is what a caller needs to pass the parts and put results together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects import complex as cplx
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from allotment.diagnostics import walk_ops
from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import UnsupportedError


@dataclass
class ComplexSplit:
    """The rewritten function, and which original arguments and results were complex."""

    function: func.FuncOp
    complex_args: list[bool]
    complex_results: list[bool]


def has_complex(fn: func.FuncOp) -> bool:
    """Whether any value of `fn` has a complex type (then `split_complex` is needed). Walks
    without recursion (`walk_ops`): compile calls it on the caller's stack, however deep."""
    if any(_is_complex(t) for t in fn.function_type.inputs.data):
        return True
    return any(_is_complex(r.type) for op in walk_ops(fn) for r in op.results)


def _is_complex(t: Attribute) -> bool:
    return rules.is_complex(rules.element_type_of(t))


def _part_type(t: Attribute) -> Attribute:
    """The type of one part of a value of complex type `t`."""
    if isinstance(t, TensorType):
        return TensorType(rules.component_type(t.element_type), t.get_shape())
    return rules.component_type(t)


Part = SSAValue | None
"""One part of a value; None is an imaginary part known to be 0."""

_VIEWS = (fusion.BroadcastInDimOp, fusion.ExpandOp, fusion.ReshapeOp, fusion.PermuteOp,
          fusion.SqueezeOp, fusion.SliceOp, fusion.CatOp, fusion.SumOp, fusion.SetOp)
"""Ops that act on each part alone (their other operands are real)."""


class _Rewrite:
    def __init__(self, block: Block):
        self.block = block
        self.real: dict[SSAValue, SSAValue] = {}
        self.parts: dict[SSAValue, tuple[SSAValue, SSAValue]] = {}

    # -- building ------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float | bool, t: Attribute) -> SSAValue:
        attr = IntegerAttr(int(value), t) if t == i1 else FloatAttr(float(value), t)
        return self.emit(arith.ConstantOp(attr))

    def of(self, v: SSAValue) -> tuple[SSAValue, Part]:
        """(real part, imaginary part or None) of an operand of the original function."""
        if v in self.parts:
            return self.parts[v]
        return self.real[v], None

    def fit(self, v: SSAValue, like: SSAValue, t: Attribute) -> SSAValue:
        """`v` (a tensor or scalar) as a tensor of `like`'s shape and element type `t`."""
        assert isinstance(like.type, TensorType)
        if not (isinstance(v.type, TensorType) and v.type.get_shape() == like.type.get_shape()):
            v = self.emit(fusion.WhereOp(self.const(True, i1), v, like))
        assert isinstance(v.type, TensorType)
        if v.type.element_type != t:
            v = self.emit(fusion.CastOp(v, t))
        return v

    def zero_like(self, like: SSAValue, t: Attribute) -> SSAValue:
        return self.fit(self.const(0.0, t), like, t)

    def b(self, cls: type[fusion.BinaryOp], a: SSAValue, b: SSAValue | float) -> SSAValue:
        """`cls(a, b)`; a Python float `b` is a constant of `a`'s element type."""
        if isinstance(b, float):
            b = self.const(b, rules.element_type_of(a.type))
        return self.emit(cls(a, b))

    def u(self, cls: type[fusion.UnaryOp], a: SSAValue) -> SSAValue:
        return self.emit(cls(a))

    def abs2(self, re: SSAValue, im: SSAValue) -> SSAValue:
        return self.b(fusion.AddOp, self.b(fusion.MulOp, re, re), self.b(fusion.MulOp, im, im))

    def sqrt(self, re: SSAValue, im: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The principal square root (half-angle formulas, the imaginary part with b's sign)."""
        r = self.u(fusion.SqrtOp, self.abs2(re, im))
        half = lambda x: self.b(fusion.MaximumOp, self.b(fusion.MulOp, x, 0.5), 0.0)  # noqa: E731
        s_re = self.u(fusion.SqrtOp, half(self.b(fusion.AddOp, r, re)))
        mag = self.u(fusion.SqrtOp, half(self.b(fusion.SubOp, r, re)))
        s_im = self.emit(fusion.WhereOp(self.u(fusion.SignbitOp, im), self.u(fusion.NegOp, mag), mag))
        return s_re, s_im

    # -- one op --------------------------------------------------------------

    def op(self, op: Operation) -> None:
        involved = any(_is_complex(v.type) for v in (*op.operands, *op.results))
        if not involved:
            new = op.clone(value_mapper=dict(self.real))
            self.block.add_op(new)
            for old, r in zip(op.results, new.results, strict=True):
                self.real[old] = r
            return
        if isinstance(op, cplx.ConstantOp):
            t = rules.component_type(op.complex.type)
            re, im = (float(a.value.data) for a in op.value.data)  # type: ignore[attr-defined]
            self.parts[op.complex] = (self.const(re, t), self.const(im, t))
            return
        rule = _RULES.get(type(op))
        if rule is None and isinstance(op, _VIEWS):
            rule = _each_part
        if rule is None:
            raise UnsupportedError(f"{op.name} of complex values is not supported by the backend")
        out = rule(self, op)
        result = op.results[0]
        if _is_complex(result.type):
            re, im = out  # type: ignore[misc]
            t = rules.component_type(rules.element_type_of(result.type))
            re = self.fit(re, re, t) if isinstance(re.type, TensorType) else re
            self.parts[result] = (re, self.fit(im, re, t))  # type: ignore[arg-type]
        else:
            self.real[result] = out  # type: ignore[assignment]


def _each_part(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    """The op applied to the real parts, then to the imaginary parts (0 where real)."""
    out = []
    for k in (0, 1):
        mapper: dict[SSAValue, SSAValue] = dict(rw.real)
        for v in op.operands:
            if v in rw.parts:
                mapper[v] = rw.parts[v][k]
        new = op.clone(value_mapper=mapper)
        for r in list(new.results):
            Rewriter.replace_value_with_new_type(r, _part_type(r.type))
        rw.block.add_op(new)
        fusion.retype_results(new)
        out.append(new.results[0])
    return out[0], out[1]


def _add_sub(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    (ra, ia), (rb, ib) = rw.of(op.operands[0]), rw.of(op.operands[1])
    cls = type(op)
    re = rw.b(cls, ra, rb)  # type: ignore[arg-type]
    if ia is not None and ib is not None:
        im = rw.b(cls, ia, ib)  # type: ignore[arg-type]
    elif ia is not None:
        im = ia
    else:
        assert ib is not None
        im = ib if cls is fusion.AddOp else rw.u(fusion.NegOp, ib)
    return re, im


def _mul(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    (ra, ia), (rb, ib) = rw.of(op.operands[0]), rw.of(op.operands[1])
    m, add, sub = fusion.MulOp, fusion.AddOp, fusion.SubOp
    if ib is None:
        assert ia is not None
        return rw.b(m, ra, rb), rw.b(m, ia, rb)
    if ia is None:
        return rw.b(m, ra, rb), rw.b(m, ra, ib)
    return (rw.b(sub, rw.b(m, ra, rb), rw.b(m, ia, ib)),
            rw.b(add, rw.b(m, ra, ib), rw.b(m, ia, rb)))


def _div(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    (ra, ia), (rb, ib) = rw.of(op.operands[0]), rw.of(op.operands[1])
    m, d_, add, sub = fusion.MulOp, fusion.DivOp, fusion.AddOp, fusion.SubOp
    if ib is None:
        assert ia is not None
        return rw.b(d_, ra, rb), rw.b(d_, ia, rb)
    den = rw.abs2(rb, ib)
    if ia is None:
        return rw.b(d_, rw.b(m, ra, rb), den), rw.u(fusion.NegOp, rw.b(d_, rw.b(m, ra, ib), den))
    return (rw.b(d_, rw.b(add, rw.b(m, ra, rb), rw.b(m, ia, ib)), den),
            rw.b(d_, rw.b(sub, rw.b(m, ia, rb), rw.b(m, ra, ib)), den))


def _complex_operand(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    re, im = rw.of(op.operands[0])
    return re, (rw.zero_like(re, rules.element_type_of(re.type)) if im is None else im)


def _neg(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    re, im = _complex_operand(rw, op)
    return rw.u(fusion.NegOp, re), rw.u(fusion.NegOp, im)


def _exp(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    re, im = _complex_operand(rw, op)
    e = rw.u(fusion.ExpOp, re)
    return rw.b(fusion.MulOp, e, rw.u(fusion.CosOp, im)), rw.b(fusion.MulOp, e, rw.u(fusion.SinOp, im))


def _abs(rw: _Rewrite, op: Operation) -> SSAValue:
    re, im = _complex_operand(rw, op)
    return rw.u(fusion.SqrtOp, rw.abs2(re, im))


def _sqrt(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    return rw.sqrt(*_complex_operand(rw, op))


def _rsqrt(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    re, im = _complex_operand(rw, op)
    s_re, s_im = rw.sqrt(re, im)
    r = rw.u(fusion.SqrtOp, rw.abs2(re, im))
    return rw.b(fusion.DivOp, s_re, r), rw.u(fusion.NegOp, rw.b(fusion.DivOp, s_im, r))


def _part(k: int) -> Callable[[_Rewrite, Operation], SSAValue]:
    def rule(rw: _Rewrite, op: Operation) -> SSAValue:
        re, im = _complex_operand(rw, op)
        return rw.emit(fusion.SetOp(re if k == 0 else im))
    return rule


def _where(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue]:
    pred = rw.real[op.operands[0]]
    (ra, ia), (rb, ib) = rw.of(op.operands[1]), rw.of(op.operands[2])
    t = rules.component_type(rules.element_type_of(op.results[0].type))
    zero = lambda p: rw.const(0.0, t) if p is None else p  # noqa: E731
    return rw.emit(fusion.WhereOp(pred, ra, rb)), rw.emit(fusion.WhereOp(pred, zero(ia), zero(ib)))


def _cast(rw: _Rewrite, op: Operation) -> tuple[SSAValue, SSAValue] | SSAValue:
    assert isinstance(op, fusion.CastOp)
    target = op.result.type.element_type
    re, im = rw.of(op.input)
    if rules.is_complex(target):
        t = rules.component_type(target)
        re_c = rw.emit(fusion.CastOp(re, t))
        return re_c, rw.zero_like(re_c, t) if im is None else rw.emit(fusion.CastOp(im, t))
    assert im is not None
    if target == i1:
        return rw.emit(fusion.LogicalOrOp(rw.b(fusion.NeOp, re, 0.0), rw.b(fusion.NeOp, im, 0.0)))
    return rw.emit(fusion.CastOp(re, target))


_RULES: dict[type[Operation], Callable[[_Rewrite, Operation], object]] = {
    fusion.AddOp: _add_sub, fusion.SubOp: _add_sub, fusion.MulOp: _mul, fusion.DivOp: _div,
    fusion.NegOp: _neg, fusion.ExpOp: _exp, fusion.AbsOp: _abs, fusion.SqrtOp: _sqrt,
    fusion.RsqrtOp: _rsqrt, fusion.RealOp: _part(0), fusion.ImagOp: _part(1),
    fusion.WhereOp: _where, fusion.CastOp: _cast,
}


def split_complex(fn: func.FuncOp) -> ComplexSplit:
    """`fn` rewritten on the real and imaginary parts of its complex values."""
    block = Block()
    rw = _Rewrite(block)
    old = fn.body.block
    complex_args = []
    for a in old.args:
        if _is_complex(a.type):
            t = _part_type(a.type)
            rw.parts[a] = (block.insert_arg(t, len(block.args)), block.insert_arg(t, len(block.args)))
            complex_args.append(True)
        else:
            rw.real[a] = block.insert_arg(a.type, len(block.args))
            complex_args.append(False)
    results: list[SSAValue] = []
    complex_results = []
    for op in old.ops:
        if isinstance(op, func.ReturnOp):
            for v in op.operands:
                complex_results.append(v in rw.parts)
                results.extend(rw.parts[v] if v in rw.parts else (rw.real[v],))
            break
        rw.op(op)
    block.add_op(func.ReturnOp(*results))
    new = func.FuncOp(fn.sym_name.data, ([a.type for a in block.args], [v.type for v in results]), Region(block))
    return ComplexSplit(new, complex_args, complex_results)


def join_results(outs: Sequence[object], complex_results: Sequence[bool]) -> list[object]:
    """The results of a split function put back together (complex ones from their parts)."""
    import torch

    joined: list[object] = []
    it = iter(outs)
    for is_c in complex_results:
        if is_c:
            re, im = next(it), next(it)
            joined.append(torch.complex(re, im))  # type: ignore[arg-type]
        else:
            joined.append(next(it))
    return joined
