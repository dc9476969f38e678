"""What a kernel iterates over, and which extents inside it its generated code needs.

One rule for both sides: `fusion-allocate` gives each `alloc.kernel` its iteration domain
(`domain [...]`, with an `index` operand per dynamic extent) and an `alloc.extents` op for
each value whose extents the code needs, and the backend's planners check that the domain
they derive is this one. The domain is the shape of `domain_value`:

- a scatter kernel: the scatter's index (`fusion.scatter`) or its added values
  (`index_put_accumulate`), `scatter_domain`;
- a scan or sort kernel: its first scan's or sort's input;
- a kernel that reduces: its first reduction's input;
- any other: its widest (highest-rank, first of those) tensor output, none for a kernel
  without one.

Library, aten and collective kernels have no domain (`HAS_DOMAIN`): they are calls, not
generated loops.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from allotment.analysis.row_passes import REDUCTIONS
from allotment.dialects import fusion

NO_DOMAIN = ("library", "aten", "collective", "view")
"""Kernel kinds the backend does not generate a loop nest for: no domain."""


def has_domain(kind: str) -> bool:
    """Whether a kernel of this kind gets a `domain` (`NO_DOMAIN`)."""
    return kind not in NO_DOMAIN


def scatter_op(ops: Sequence[Operation]) -> Operation | None:
    """The scatter of a scatter kernel's body (a segment of one scatter), else None."""
    return next((op for op in ops if isinstance(op, fusion.INDEXING_SCATTERS)), None)


def scatter_domain(op: Operation) -> SSAValue:
    """The value whose shape a scatter kernel iterates over: the index (scatter) or the
    values added (index_put_accumulate)."""
    return op.index if isinstance(op, fusion.ScatterOp) else op.value


def domain_value(kind: str, ops: Sequence[Operation], yielded: Sequence[SSAValue]) -> SSAValue | None:
    """The value of a kernel body whose shape is its iteration domain (the module's rule),
    or None where the domain is `()` (no tensor output)."""
    scatter = scatter_op(ops)
    if scatter is not None:
        return scatter_domain(scatter)
    if kind in ("scan", "sort"):
        rows = [op for op in ops if isinstance(op, fusion.ScanOp | fusion.SortOp)]
        return rows[0].operands[0] if rows else None
    reductions = [op for op in ops if isinstance(op, REDUCTIONS)]
    if reductions:
        return reductions[0].operands[0]
    tensors = [v for v in yielded if isinstance(v.type, TensorType)]
    return max(tensors, key=lambda v: len(v.type.get_shape())) if tensors else None


def sized_operands(op: Operation, args: Sequence[SSAValue]) -> Iterator[SSAValue]:
    """The operands of `op` whose extents the generated code reads (an `alloc.extents` each,
    where one is dynamic): a cat's pieces and a pad's input (the masks of each piece). A
    random tensor's result is the other such value (its linear index). Block arguments
    (`args`) are not listed: the kernel is given their buffers' extents."""
    values: Sequence[SSAValue] = []
    if isinstance(op, fusion.PadOp):
        values = [op.input]
    elif isinstance(op, fusion.CatOp):
        values = list(op.inputs)
    for v in values:
        if v not in args and isinstance(v.type, TensorType):
            yield v
