"""`view` segments in `fusion-allocate`: `memref.reinterpret_cast`s, no allocation.

A view's layout is derived from its source's (a permute permutes the strides, a
slice shifts the offset and scales the strides, a broadcast or expand gives stride 0
to its new or size-1 dims, a squeeze drops strides, a reshape needs a contiguous
source and is row-major), and the view is a `memref.reinterpret_cast` of the source's
buffer with that offset, sizes and strides. A view of a shard is the view of the
local buffer. `ViewRewrites` is a part of `fusion_allocate._Allocator`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, StridedLayoutAttr, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.dialects import alloc, fusion
from allotment.extents import symbolic as sym
from allotment.extents import view_extents
from allotment.extents.dims import dim_set, normalize_dim
from allotment.extents.symbolic import Const, Extent
from allotment.passes.allocate_errors import _fail
from allotment.passes.allocate_layout import Layout, is_row_major, row_major


class ViewRewrites:
    """View segments as reinterpret casts of their source's buffer (mixed into _Allocator)."""

    def _view_segment(self, seg: fusion.SegmentOp) -> None:
        ops = [o for o in seg.body.block.ops if not isinstance(o, fusion.YieldOp | arith.ConstantOp)]
        if len(ops) != 1 or not isinstance(ops[0], fusion.FusionOp):
            raise _fail(seg, f"view segment {seg.sym_name.data} must hold one view op")
        view = ops[0]
        inner_src = view.operands[0]
        index = list(seg.body.block.args).index(inner_src)
        src = seg.inputs[index]
        layout = self.layouts[src]
        result = seg.outputs[0]
        new = self._view_layout(view, layout, result)
        self.layouts[result] = new
        self.buffers[result] = self._reinterpret(self.buffers[src], result, new)

    def _view_layout(self, view: Operation, src: Layout, result: SSAValue) -> Layout:
        sizes = self.local_extents(result)  # a view of a shard is the view of the local buffer
        in_shape = view.operands[0].type.get_shape()
        zero = Const(0)
        if isinstance(view, fusion.PermuteOp):
            rank = len(src.sizes)
            perm = [normalize_dim(d, rank) for d in view.dims.get_values()]
            strides = tuple(src.strides[p] for p in perm)
            # contiguous where it keeps a contiguous source's order, or puts a buffer laid out
            # in another order (a library call's result: `in_order`) back in row-major order
            contiguous = (perm == sorted(perm) and src.contiguous) or is_row_major(sizes, strides)
            return Layout(sizes, strides, src.offset, contiguous)
        if isinstance(view, fusion.SliceOp):
            starts = self._mixed(view.static_start.get_values(), view.start)
            stops = self._mixed(view.static_stop.get_values(), view.stop)
            steps = self._mixed(view.static_step.get_values(), view.step)
            offset = src.offset
            for start, stop, step, size, stride in zip(starts, stops, steps, src.sizes, src.strides):
                first, _ = view_extents.slice_sym(size, start, stop, step)
                offset = sym.add(offset, sym.mul(first, stride))
            strides = tuple(sym.mul(s, st) for s, st in zip(src.strides, steps))
            return Layout(sizes, strides, offset, False)
        if isinstance(view, fusion.BroadcastInDimOp):
            dims = list(view.broadcast_dims.get_values())
            strides = []
            for d in range(len(sizes)):
                if d in dims:
                    s = dims.index(d)
                    strides.append(zero if in_shape[s] == 1 else src.strides[s])
                else:
                    strides.append(zero)
            return Layout(sizes, tuple(strides), src.offset, False)
        if isinstance(view, fusion.ExpandOp):
            strides = tuple(zero if e == 1 else s for e, s in zip(in_shape, src.strides))
            return Layout(sizes, strides, src.offset, False)
        if isinstance(view, fusion.SqueezeOp):
            rank = len(src.sizes)
            dropped = set(dim_set(view.dims.get_values(), rank))
            strides = tuple(s for d, s in enumerate(src.strides) if d not in dropped)
            return Layout(sizes, strides, src.offset, src.contiguous)
        if isinstance(view, fusion.ReshapeOp):
            if src.contiguous:
                layout = row_major(sizes)
                return Layout(layout.sizes, layout.strides, src.offset, True)
            groups = view_extents.reshape_splits(in_shape, result.type.get_shape())
            if groups is None:
                raise _fail(view, "reshape that merges dims of a non-contiguous view (fusion-segment inserts a copy)")
            return Layout(sizes, _split_strides(groups, src.strides, sizes), src.offset, False)
        raise _fail(view, f"{view.name} is not a view op")

    def _mixed(self, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Extent]:
        it = iter(dynamic)
        return [
            self.shapes.scalar(next(it)) if s == DYNAMIC_INDEX else Const(s) for s in static
        ]

    def _reinterpret(self, source: SSAValue, result: SSAValue, layout: Layout) -> SSAValue:
        t = result.type
        assert isinstance(t, TensorType)
        shape = self.local_static_shape(t)
        strides = [self.shapes.canonical(s) for s in layout.strides]
        offset = self.shapes.canonical(layout.offset)
        mixed_sizes = [e if e != DYNAMIC_INDEX else self.sizes.value(x) for e, x in zip(shape, layout.sizes)]
        mixed_strides = [s.value if isinstance(s, Const) else self.sizes.value(s) for s in strides]
        mixed_offset = [offset.value if isinstance(offset, Const) else self.sizes.value(offset)]
        layout_attr = StridedLayoutAttr(
            [s.value if isinstance(s, Const) else None for s in strides],
            offset.value if isinstance(offset, Const) else None,
        )
        result_type = alloc.memref_type(t.element_type, tuple(shape), layout_attr)
        op = memref.ReinterpretCastOp.from_dynamic(source, mixed_offset, mixed_sizes, mixed_strides, result_type)
        op.result.name_hint = result.name_hint
        self.body_ops.append(op)
        return op.result


def _split_strides(groups: Sequence[tuple[int, ...]], strides: Sequence[Extent],
                   sizes: Sequence[Extent]) -> tuple[Extent, ...]:
    """The strides of a reshape that splits each source dim `i` (stride `strides[i]`) into
    the result dims `groups[i]` (of `sizes`): the last of a group keeps the source's stride,
    each one before it that times the extents after it. A result dim of extent 1 in no
    group gets torch's stride for it (the next dim's stride times its extent, 1 last)."""
    out: list[Extent | None] = [None] * len(sizes)
    for group, stride in zip(groups, strides, strict=True):
        acc = stride
        for j in reversed(group):
            out[j] = acc
            acc = sym.mul(acc, sizes[j])
    for j in reversed(range(len(sizes))):
        if out[j] is None:
            out[j] = sym.mul(out[j + 1], sizes[j + 1]) if j + 1 < len(sizes) else Const(1)
    return tuple(e for e in out if e is not None)
