"""The rewritten function's signature in `fusion-allocate`: arguments and results.

Tensor arguments become `memref`s of their local shard (contiguous row-major, or dense in
the order of their `fusion.stride_order`: views of them take its strides); the
global extent of a sharded argument's dynamic dimension is its local extent times
its shard count (an uneven one cannot be recovered: an error); a result with
`fusion.stride_order` gets its buffer allocated in that order. `Signature` is a part
of `fusion_allocate._Allocator`.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, MemRefType, TensorType, i64
from xdsl.ir import Attribute, SSAValue

from allotment.dialects import alloc
from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion import STRIDE_ORDER_ATTR, argument_order, outermost_first, stride_order_problem
from allotment.passes.allocate_errors import _fail, value_name
from allotment.passes.allocate_layout import in_order, row_major
from allotment.passes.allocate_shards import _sharding


class Signature:
    """New arguments, global scales of sharded extents, result layouts (mixed into _Allocator)."""

    def _result_layouts(self, ret: func.ReturnOp) -> None:
        """A result with `fusion.stride_order` (nvFuser's `add_output(stride_order=)`) gets a
        buffer allocated in that layout: its `alloc.alloc` carries `order` (dims outermost
        first), so the kernel writes it strided and the planner sees it. A result that is
        not a kernel's own buffer (an argument, a view) keeps its layout."""
        if self.f.res_attrs is None:
            return
        for i, (attrs, v) in enumerate(zip(self.f.res_attrs.data, ret.arguments)):
            attr = attrs.data.get(STRIDE_ORDER_ATTR)
            if attr is None:
                continue
            rank = len(v.type.get_shape()) if isinstance(v.type, MemRefType) else -1
            problem = stride_order_problem(attr, rank)
            if problem is not None:
                raise _fail(self.f, f"result #{i}: {problem}")
            if isinstance(v.owner, alloc.AllocOp) and v.owner.sharding is None:
                order = outermost_first(list(attr.get_values()))
                if order != list(range(rank)):
                    v.owner.order = DenseArrayBase.from_list(i64, order)

    def _new_arguments(self) -> list[SSAValue]:
        new_args: list[SSAValue] = []
        for old in self.old_args:
            t = old.type
            if isinstance(t, TensorType):
                nt: Attribute = alloc.memref_type(t.element_type, tuple(self.local_static_shape(t)))
            elif t not in rules.SCALAR_TYPES:  # a scalar the host program could not take
                allowed = ", ".join(rules.type_name(e) for e in rules.SCALAR_TYPES)
                raise _fail(self.f, f"argument {value_name(old)} has type {rules.type_name(t)}; "
                                    f"a scalar argument must be one of {allowed}")
            else:
                nt = t
            arg = self.block.insert_arg(nt, len(self.block.args))
            arg.name_hint = old.name_hint
            new_args.append(arg)
            if isinstance(t, TensorType):
                self.buffers[old] = arg
                order = argument_order(old)  # the caller passes it dense in this order
                extents = self.local_extents(old)
                self.layouts[old] = row_major(extents) if order is None else in_order(extents, order)
            else:
                self.buffers[old] = arg
        return new_args

    def _global_scales(self) -> dict[tuple[int, int], int]:
        """Global extent of a sharded argument's dynamic dim = local extent * shards."""
        scales: dict[tuple[int, int], int] = {}
        for i, old in enumerate(self.old_args):
            sharding = _sharding(old.type)
            if sharding is None:
                continue
            for d, (e, k) in enumerate(zip(old.type.get_shape(), self.shard_counts(sharding))):
                if e != DYNAMIC_INDEX or k == 1:
                    continue
                if sharding.allows_uneven:
                    raise _fail(
                        self.f,
                        f"argument {value_name(old)} is sharded unevenly along its "
                        f"dynamic dimension {d}: its global extent cannot be recovered from the local "
                        "shard; give that dimension a static extent",
                    )
                scales[(i, d)] = k
        return scales
