"""Materializes symbolic extents as `arith` IR over a function's arguments.

`SizeBuilder.value(extent)` returns an `index` SSA value computing the extent
from `memref.dim` (or `tensor.dim`) of the function's own arguments and from its
scalar arguments (an integer one through `arith.index_cast`), emitting
each distinct subexpression once. The emitted ops accumulate in `ops`, to be
inserted at the function's entry.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from allotment.extents import size_arith
from allotment.extents.symbolic import ArgDim, ArgScalar, BinOp, Const, Extent

_ARITH: dict[str, type[Operation]] = {
    name: cls
    for cls in arith.Arith.operations
    if (name := size_arith.arith_op_name(cls.name)) is not None
}
"""`arith` op class of each `BinOp.op`: the op is named after what it computes."""


class SizeBuilder:
    """Emits `index` computations of extents, CSE'd by expression."""

    def __init__(
        self,
        args: Sequence[SSAValue],
        use_tensor_dim: bool = False,
        global_scales: dict[tuple[int, int], int] | None = None,
    ) -> None:
        """`global_scales[(arg, dim)] = k`: that argument holds a shard of 1/k of the
        global extent along dim, so the global extent is `dim * k`."""
        self.args = list(args)
        self.global_scales = global_scales or {}
        self.ops: list[Operation] = []
        self._cache: dict[Extent, SSAValue] = {}
        self._dim_op = tensor.DimOp if use_tensor_dim else memref.DimOp

    def const(self, value: int) -> SSAValue:
        return self.value(Const(value))

    def value(self, e: Extent) -> SSAValue:
        cached = self._cache.get(e)
        if cached is not None:
            return cached
        if isinstance(e, Const):
            op = arith.ConstantOp(IntegerAttr(e.value, IndexType()))
            op.result.name_hint = f"c{e.value}" if e.value >= 0 else f"cm{-e.value}"
        elif isinstance(e, ArgDim):
            index = self.const(e.dim)
            op = self._dim_op(self.args[e.arg], index)
            op.result.name_hint = f"{e.name or f'arg{e.arg}'}_d{e.dim}"
            scale = self.global_scales.get((e.arg, e.dim))
            if scale is not None:
                self.ops.append(op)
                op.result.name_hint += "_local"
                op = arith.MuliOp(op.result, self.const(scale))
                op.result.name_hint = f"{e.name or f'arg{e.arg}'}_d{e.dim}"
        elif isinstance(e, ArgScalar):
            arg = self.args[e.arg]
            if isinstance(arg.type, IndexType):
                self._cache[e] = arg
                return arg
            op = arith.IndexCastOp(arg, IndexType())  # an integer scalar argument
            op.result.name_hint = f"{e.name or f'arg{e.arg}'}_index"
        else:
            assert isinstance(e, BinOp)
            lhs, rhs = self.value(e.lhs), self.value(e.rhs)
            op = _ARITH[e.op](lhs, rhs)  # type: ignore[call-arg]
        self.ops.append(op)
        self._cache[e] = op.results[0]
        return op.results[0]
