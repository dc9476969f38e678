"""The buffers of reductions in `fusion-allocate`: on-chip rows and global partials.

A reduction in a row kernel gets a local buffer of its reduced row (accumulation
type); a column reduction of an inner-outer kernel a local accumulator [N] and a
global partials buffer [%programs, N]; a reduction split across CTAs global partials
buffers [%split, kept] (two for var_mean and welford). Global ones are allocated
before the kernel, which gets a body argument for each. `ReductionBuffers` is a part
of `fusion_allocate._Allocator`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from allotment.analysis import inner_outer, split_reduction
from allotment.dialects import alloc, fusion
from allotment.dialects.fusion_rules import compute_type
from allotment.extents import symbolic as sym
from allotment.extents.dims import dim_set
from allotment.extents.symbolic import Const, Extent
from allotment.passes.ssa_names import ssa_name


class ReductionBuffers:
    """Row buffers, column accumulators and partials buffers (mixed into _Allocator)."""

    def _partials(self, seg: fusion.SegmentOp, split: list[tuple[Operation, Attribute]], block: Block) -> list[SSAValue]:
        """One global buffer of partial results [%split, kept] per reduction of a kernel split
        across CTAs (`split_reduction`), two for a var_mean or welford (its sum and M2
        partials, `split_reduction.partials_results`), allocated before it; the kernel's body
        gets an argument for each."""
        src = split[0][0].operands[0]
        extents = self.shapes.shape(src)
        dims = split[0][0].reduced_dims()
        kept = sym.product([e for d, e in enumerate(extents) if d not in dims])
        count = self._split_count(split)
        sizes = [self.shapes.canonical(count), self.shapes.canonical(split_reduction.partials_kept(split[0][0], count, kept))]
        return [
            self._partials_buffer(seg, r, acc, sizes, block, named=res)
            for r, acc in split
            for res in split_reduction.partials_results(r)
        ]

    def _split_count(self, split: list[tuple[Operation, Attribute]]) -> Extent:
        """The split count of a split segment in the fusion's extents (`split_reduction.count_for`)."""
        r = split[0][0]
        extents = self.shapes.shape(r.operands[0])
        dims = r.reduced_dims()
        kept = sym.product([e for d, e in enumerate(extents) if d not in dims])
        return split_reduction.count_for(r, sym.product([extents[d] for d in dims]), kept)

    def _partials_buffer(
        self, seg: fusion.SegmentOp, r: Operation, acc: Attribute, sizes: list[Extent], block: Block,
        named: SSAValue | None = None,
    ) -> SSAValue:
        """One global buffer of partial results of reduction `r` (`sizes` in the fusion's
        extents, elements `acc`), allocated before the kernel, and the kernel body's
        argument for it (appended): a split reduction's or an inner-outer kernel's. It is
        named after `named` (a result of `r`; its first by default)."""
        static = [e.value if isinstance(e, Const) else DYNAMIC_INDEX for e in sizes]
        result = named or r.results[0]
        k = list(r.results).index(result)
        name = f"{seg.sym_name.data}_partials_{result.name_hint or ('red' if k == 0 else f'red{k}')}"
        a = alloc.AllocOp(
            alloc.memref_type(acc, tuple(static)),
            [self.sizes.value(e) for e, s in zip(sizes, static) if s == DYNAMIC_INDEX],
            alloc.MemorySpace.GLOBAL,
            name=name,
        )
        a.result.name_hint = ssa_name(name)  # a segment's name is data
        self.body_ops.append(a)
        arg = block.insert_arg(TensorType(acc, static), len(block.args))
        arg.name_hint = ssa_name(name)
        return a.result

    def _column_partials(self, seg: fusion.SegmentOp, block: Block, first: int) -> list[SSAValue]:
        """An inner-outer kernel's partials (`analysis/inner_outer.py`): one global buffer
        [%programs, N] in the accumulation type per column reduction, in body order, allocated
        before the kernel; `%programs` from the row count and length (`inner_outer.program_count`)."""
        out = []
        for op in seg.body.block.ops:
            if not isinstance(op, fusion.ReductionOp):
                continue
            extents = self.shapes.shape(op.operands[0])
            if not inner_outer.is_column_reduction(op, len(extents)):
                continue
            programs = inner_outer.program_count(sym.product(list(extents[:-1])), extents[-1])
            sizes = [self.shapes.canonical(programs), self.shapes.canonical(extents[-1])]
            acc = op.accumulation_type()
            out.append(self._partials_buffer(seg, op, acc, sizes, block))
        return out

    def _column_accumulator(self, op: Operation, seg: fusion.SegmentOp) -> alloc.AllocOp:
        """The on-chip accumulator [N] of a column reduction in an inner-outer kernel."""
        src = op.operands[0]
        n = self.local_extents(src)[-1]
        static = self.local_static_shape(src.type)[-1]
        sizes = [self.sizes.value(n)] if static == DYNAMIC_INDEX else []
        name = f"{seg.sym_name.data}_acc_{op.results[0].name_hint or 'red'}"
        a = alloc.AllocOp(
            alloc.memref_type(op.accumulation_type(), (static,)), sizes,
            alloc.MemorySpace.LOCAL, name=name,
        )
        a.result.name_hint = ssa_name(name)  # a segment's name is data
        return a

    def _row_buffer(self, op: Operation, inner: Block, seg: fusion.SegmentOp) -> alloc.AllocOp:
        """The on-chip buffer holding one reduced row of a reduction's input."""
        src = op.operands[0]
        extents = self.local_extents(src)  # a device reduces its own shard's rows
        rank = len(extents)
        dims = dim_set(op.dims.get_values(), rank)
        static = self.local_static_shape(src.type)
        row = sym.product([extents[d] for d in dims])
        static_row = DYNAMIC_INDEX if any(static[d] == DYNAMIC_INDEX for d in dims) else _prod(static[d] for d in dims)
        sizes = [self.sizes.value(row)] if static_row == DYNAMIC_INDEX else []
        name = f"{seg.sym_name.data}_row_{op.results[0].name_hint or 'red'}"
        a = alloc.AllocOp(
            alloc.memref_type(compute_type(src.type.element_type), (static_row,)), sizes, alloc.MemorySpace.LOCAL, name=name
        )
        a.result.name_hint = ssa_name(name)  # a segment's name is data
        return a


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out
