"""Index-typed emission, mixed into `emitter.Emitter`: the ops that `kernel-index-ranges`
marked `{index_range = ...}` (64-bit integer arithmetic whose values fit in 32 bits) are
computed in the kernel's index type, without the conversions to int64 that their IR type
would ask for: an iota is `start + index * step` over the kernel's own index tile (int32
under 32-bit indexing, int64 under USE_I64), and the adds, subtractions, products, abs,
min, max, wheres and comparisons of such values stay in it.

Each marked op with an integer result gets two names: the narrow one, which only other
marked ops read (`narrow_operand`: a conversion to a float reads it too, as it
rounds the same integer), and the same value converted to its IR type, which is
what `value` hands every other reader (a float cast, a reduction, a store, a gather, a cat,
a shift). So no op that was not marked ever sees a narrow value, and a conversion no one
reads costs nothing (Triton's compiler drops it). Uses the emitter's `value`, `scalar`,
`fresh`, `line`, `helper`, `cast`, `axes_of` and `operand_names`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType, i32
from xdsl.ir import Operation, SSAValue

from allotment.analysis.int_ranges import INDEX_RANGE, is_wide
from allotment.backend.kernel_plan import CodegenError, Map, index_expr
from allotment.backend.kernels.elementwise_emission import COMPARISONS
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import element_type_of
from allotment.dtypes import triton_dtype

BINARY: dict[type[Operation], str] = {
    fusion.AddOp: "{0} + {1}", fusion.SubOp: "{0} - {1}", fusion.MulOp: "{0} * {1}",
    fusion.MaximumOp: "tl.maximum({0}, {1})", fusion.MinimumOp: "tl.minimum({0}, {1})",
}
UNARY: dict[type[Operation], str] = {fusion.NegOp: "-{0}", fusion.AbsOp: "tl.abs({0})"}
DIVISIONS: dict[type[Operation], str] = {
    fusion.FloorDivideOp: "_int_floor_div", fusion.DivOp: "_trunc_div", fusion.RemainderOp: "_int_remainder",
    fusion.FmodOp: "_int_fmod",
}
"""The integer divisions by a constant, through the helpers their 64-bit forms call (`triton_math`)."""


def is_narrow(op: Operation) -> bool:
    """Whether the kernel computes `op` in its index type (`kernel-index-ranges` marked it)."""
    return INDEX_RANGE in op.attributes


class NarrowEmission:
    """The index-typed ops of `Emitter.compute`."""

    narrow_names: dict[str, str]
    """The wide name of each marked op's result -> its narrow name (`narrow`)."""

    def narrow_operand(self, v: SSAValue, name: str) -> str:
        """Operand v (emitted as `name`) as a marked op reads it: the narrow name of a marked
        op's result; a 32-bit (or narrower) integer widened to int32, so that no sum of two
        of them wraps in a narrower type; anything else as it is (a constant is a literal)."""
        if name in self.narrow_names:
            return self.narrow_names[name]
        if not isinstance(v.type, TensorType):
            return name
        et = element_type_of(v.type)
        if isinstance(et, IntegerType) and et.width.data < 32:
            return f"{name}.to(tl.int32)"
        return name

    def narrow(self, op: Operation, m: Map) -> tuple[str, frozenset[str]]:
        """A marked op at index map m: its narrow expression, and for an integer result
        its conversion to the IR type (the name `value` gives other readers)."""
        rt = op.results[0].type
        axes: frozenset[str] = frozenset()
        if isinstance(op, fusion.IotaOp):
            expr = f"(({self.scalar(op.start)}) + ({index_expr(m[0])}) * ({self.scalar(op.step)}))"
            axes = self.axes_of(m)
        elif isinstance(op, fusion.FullOp):
            expr = f"tl.full([1, 1], {self.scalar(op.value)}, tl.int32)"
        else:
            names, axes = self.operand_names(op, m)
            xs = [name if isinstance(op, fusion.WhereOp) and i == 0 else self.narrow_operand(x, name)
                  for i, (x, name) in enumerate(zip(op.operands, names, strict=True))]
            divide = DIVISIONS.get(type(op))
            expr = f"{self.helper(divide)}({xs[0]}, {xs[1]})" if divide else _expression(op, xs)
        if isinstance(op, fusion.CastOp) and not is_wide(rt):  # to a float, i1 or i32: as from 32 bits
            return self.cast(expr, i32, element_type_of(rt)), axes
        name = self.fresh()
        if not is_wide(rt):  # a comparison: its i1 result is what every reader takes
            self.line(f"{name} = {expr}  # {op.name}, index-typed")
            return name, axes
        narrow = self.fresh("n")
        self.line(f"{narrow} = {expr}  # {op.name}, index-typed")
        self.line(f"{name} = {narrow}.to({triton_dtype(element_type_of(rt))})")
        self.narrow_names[name] = narrow
        return name, axes


def _expression(op: Operation, xs: list[str]) -> str:
    if isinstance(op, fusion.CastOp | fusion.SetOp):
        return xs[0]
    if isinstance(op, fusion.WhereOp):
        return f"tl.where({xs[0]}, ({xs[1]}), ({xs[2]}))"
    for table in (COMPARISONS, BINARY, UNARY):
        form = table.get(type(op))
        if form is not None:
            if table is COMPARISONS:
                return f"({xs[0]} {form} {xs[1]})"
            return f"({form.format(*xs)})"
    raise CodegenError(f"{op.name} has no index-typed form")
