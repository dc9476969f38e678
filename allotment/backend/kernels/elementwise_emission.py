"""Elementwise emission, mixed into `emitter.Emitter`: an elementwise op, a cast or a set
at an index map, as one Triton line computed in the op's compute type (f32 for 16-bit
floats) and rounded to its IR type, as torch does op by op. Math, rounding, integer and
bitwise ops come from `triton_math`; arithmetic, comparisons, logical ops and the
activations are spelled here. Uses the host emitter's `value`, `scalar`, `fresh`,
`line`, `to`, `helper`, `axes_of` and `exp_terms`."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float32Type, FloatAttr, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Operation

from allotment.backend import triton_math
from allotment.backend.identifiers import comment
from allotment.backend.kernel_plan import CodegenError, Map, index_expr
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import compute_type, element_type_of, is_float, promote
from allotment.dtypes import triton_dtype


def compute_dtype(t: Attribute) -> str:
    """The type arithmetic on elements of type t happens in (f32 for 16-bit floats)."""
    return triton_dtype(compute_type(t))


POW_FORMS: dict[float, str] = {
    1.0: "{x}", 2.0: "{x} * {x}", 3.0: "{x} * {x} * {x}", -2.0: "1.0 / ({x} * {x})",
    0.5: "tl.sqrt({x})", -0.5: "tl.rsqrt({x})", -1.0: "1.0 / {x}",
}
"""A float `fusion.pow` by one of these constant exponents, as torch's pow kernels compute it
(ATen's `pow_tensor_scalar` on the CPU and on CUDA: products, sqrt, rsqrt, reciprocal) and as
Inductor lowers it, not through the general `pow` (libdevice's, tens of instructions: GPT-2's
`x ** 3` in its GELU made that kernel three times slower than Inductor's on an H200). `x ** 1`
is x itself (C's pow, NaN included): the RMSNorm backward's `pow_backward` takes it."""


def pow_by_constant(op: fusion.PowOp, x: str) -> str | None:
    """The expression of `op` over its base `x` (in the compute type) where its exponent is an
    `arith.constant` of `POW_FORMS`, else None."""
    owner = op.operands[1].owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, FloatAttr | IntegerAttr):
        return None
    form = POW_FORMS.get(float(owner.value.value.data))
    if form is None:
        return None
    return form.format(x=x if x.isidentifier() else f"({x})")


COMPARISONS: dict[type[Operation], str] = {
    fusion.EqOp: "==", fusion.NeOp: "!=", fusion.LtOp: "<", fusion.LeOp: "<=", fusion.GtOp: ">", fusion.GeOp: ">=",
}
"""The Python operator of each comparison."""


class ElementwiseEmission:
    """The elementwise ops, casts and sets of `Emitter.compute`."""

    def operand_names(self, op: Operation, m: Map) -> tuple[list[str], frozenset[str]]:
        """The expressions of op's operands at index map m (tensors emitted first, scalars as
        literals or arguments), and the tile axes they span together."""
        names: list[str] = []
        axes: set[str] = set()
        for x in op.operands:
            if isinstance(x.type, TensorType):
                name, a = self.value(x, self.operand_map(x, m))
                axes |= a
            else:
                name = self.scalar(x)
            names.append(name)
        return names, frozenset(axes)

    def cast(self, x: str, src: Attribute, dst: Attribute) -> str:
        if src == dst:
            return x
        name = self.fresh()
        if dst == IntegerType(1):
            # 16-bit floats compare as numbers (the interpreter compares bf16 bits: -0.0 != 0)
            self.line(f"{name} = {x}.to({compute_dtype(src)}) != 0" if is_float(src) else f"{name} = {x} != 0")
        elif isinstance(dst, BFloat16Type) and not isinstance(src, Float32Type):
            # through f32, as torch converts (and Triton's interpreter only converts f32 to bf16)
            self.line(f"{name} = {self.to(f'{x}.to(tl.float32)', 'tl.bfloat16')}")
        else:
            self.line(f"{name} = {self.to(x, triton_dtype(dst))}")
        return name

    def elementwise(self, op: Operation, m: Map) -> tuple[str, frozenset[str]]:
        rt = op.results[0].type.element_type
        operands, found = self.operand_names(op, m)
        axes = set(found)
        types = [x.type for x in op.operands]
        name = self.fresh()
        if isinstance(op, fusion.TriangularOp):  # elementwise with a condition on its last two indices
            row, col = m[-2], m[-1]
            axes |= self.axes_of((row, col))
            expr = triton_math.triangular_expr(op, operands[0], index_expr(row), index_expr(col), rt, self.to)
        else:
            expr = self.elementwise_expr(op, operands, types, rt)
        self.line(f"{name} = {expr}{_ir_note(op)}")
        return name, frozenset(axes)

    def elementwise_expr(self, op: Operation, xs: list[str], types: list[Attribute], rt: Attribute) -> str:
        out = triton_dtype(rt)
        if isinstance(op, fusion.WhereOp):
            ct = compute_dtype(rt)
            return self.to(f"tl.where({xs[0]}, ({xs[1]}), ({xs[2]})).to({ct})", out)
        if isinstance(op, triton_math.OPS):  # math, rounding, integer and bitwise ops
            return triton_math.elementwise_expr(op, xs, types, rt, self.as_type, compute_dtype, self.to, self.helper)
        if isinstance(op, fusion.LogicalNotOp | fusion.LogicalAndOp | fusion.LogicalOrOp):
            # 16-bit floats compare as numbers (the interpreter compares bf16 bits: -0.0 != 0)
            xs = [self.as_type(x, t, compute_dtype(element_type_of(t))) for x, t in zip(xs, types)]
        if isinstance(op, fusion.LogicalNotOp):
            return f"({xs[0]} == 0)"
        if isinstance(op, fusion.LogicalAndOp | fusion.LogicalOrOp):
            sym = "&" if isinstance(op, fusion.LogicalAndOp) else "|"
            return f"(({xs[0]} != 0) {sym} ({xs[1]} != 0))"
        if isinstance(op, fusion.PredicateOp):
            ct = compute_dtype(promote(types))
            a, b = (self.as_type(x, t, ct) for x, t in zip(xs, types))
            return f"({a} {COMPARISONS[type(op)]} {b})"
        ct = compute_dtype(rt)
        args = [self.as_type(x, t, ct) for x, t in zip(xs, types)]
        if isinstance(op, fusion.BinaryOp):
            a, b = args
            if isinstance(op, fusion.AddOp):
                e = f"{a} + {b}" if rt != IntegerType(1) else f"({a} | {b})"
            elif isinstance(op, fusion.SubOp):
                e = f"{a} - {b}"
            elif isinstance(op, fusion.MulOp):
                e = f"{a} * {b}" if rt != IntegerType(1) else f"({a} & {b})"
            elif isinstance(op, fusion.DivOp):
                e = f"{a} / {b}" if is_float(rt) else f"{self.helper('_trunc_div')}({a}, {b})"
            elif isinstance(op, fusion.PowOp):
                special = pow_by_constant(op, a) if is_float(rt) and isinstance(types[0], TensorType) else None
                if special is not None:
                    e = special
                else:
                    # a scalar (a Python literal for a constant) becomes a 1x1 tile: _pow needs tensors
                    a, b = (x if isinstance(t, TensorType) else f"tl.full([1, 1], {x}, {ct})"
                            for x, t in zip(args, types))
                    e = f"{self.helper('_pow' if is_float(rt) else '_int_pow')}({a}, {b})"
            elif isinstance(op, fusion.MaximumOp):
                e = f"{self.helper('_max_nan')}({a}, {b})" if is_float(rt) else f"tl.maximum({a}, {b})"
            elif isinstance(op, fusion.MinimumOp):
                e = f"{self.helper('_min_nan')}({a}, {b})" if is_float(rt) else f"tl.minimum({a}, {b})"
            else:
                raise CodegenError(f"{op.name} is not supported in generated kernels")
            return self.to(f"({e})", out)
        (x,) = args
        unary = {
            fusion.NegOp: f"-{x}", fusion.AbsOp: f"tl.abs({x})",
            fusion.ExpOp: f"_exp_term({x})" if op in self.exp_terms else f"tl.exp({x})",
            fusion.LogOp: f"tl.log({x})", fusion.SqrtOp: f"tl.sqrt({x})", fusion.RsqrtOp: f"tl.rsqrt({x})",
            fusion.ReciprocalOp: f"1.0 / {x}", fusion.TanhOp: f"_tanh({x})", fusion.SigmoidOp: f"tl.sigmoid({x})",
            fusion.SinOp: f"tl.sin({x})", fusion.CosOp: f"tl.cos({x})", fusion.ErfOp: f"tl.erf({x})",
            fusion.ReluOp: f"tl.where({x} < 0, 0, {x})",
        }
        e = unary.get(type(op))
        if isinstance(op, fusion.TanhOp):
            self.helper("_tanh")
        elif isinstance(op, fusion.ExpOp) and op in self.exp_terms:
            self.helper("_exp_term")
        if e is None:
            raise CodegenError(f"{op.name} is not supported in generated kernels")
        return self.to(f"({e})", out)

    def as_type(self, x: str, t: Attribute, ct: str) -> str:
        """Operand x (of IR type t) converted to the compute type ct."""
        et = element_type_of(t)
        if not isinstance(t, TensorType):
            if ct.startswith("tl.float"):
                return f"({x})"
            return f"({x})"
        if triton_dtype(et) == ct:
            return x
        return f"{x}.to({ct})"


def _ir_note(op: Operation) -> str:
    """`  # %name = fusion.add`: the IR value a line computes, as a comment-safe escape."""
    hint = op.results[0].name_hint if op.results else None
    return f"  # %{comment(hint)} = {comment(op.name)}" if hint else f"  # {comment(op.name)}"
