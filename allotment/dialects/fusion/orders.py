"""Memory orders of fusion values: where a value lies densely in memory in an order of its
dims other than row-major, and which order (dims outermost first).

Two things say so in the IR:
- an argument's `fusion.stride_order` (nvFuser's stride order, `stride_order[d]` dim d's
  place counted from the innermost): the caller passes it dense in that order, and the
  program plans its views for that layout (`fusion-segment`, `fusion-allocate`); an
  argument that comes in another layout is copied into that order at entry;
- a `fusion.aten` call's `orders` (`AtenOp.order_of`): the call returns that result so.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DictionaryAttr, MemRefType, TensorType
from xdsl.ir import Block, BlockArgument, SSAValue

from allotment.dialects.fusion.aten import AtenOp
from allotment.dialects.fusion.base import STRIDE_ORDER_ATTR, stride_order_problem


def outermost_first(stride_order: Sequence[int]) -> list[int]:
    """The dims of a stride order (nvFuser's convention) from the outermost in."""
    return sorted(range(len(stride_order)), key=lambda d: -stride_order[d])


def stride_order_of(order: Sequence[int]) -> list[int]:
    """The stride order (nvFuser's convention: each dim's place counted from the innermost)
    of a memory order given outermost first; `outermost_first` inverts it."""
    return [len(order) - 1 - list(order).index(d) for d in range(len(order))]


def argument_order(arg: BlockArgument) -> list[int] | None:
    """The memory order (dims outermost first) in which a function argument (a tensor, or
    the memref fusion-allocate makes of it) comes, from its `fusion.stride_order`; None
    where it has none, where it is row-major, or where it is not a valid one (the
    function's verifier names that)."""
    if not isinstance(arg.type, TensorType | MemRefType) or not isinstance(arg.owner, Block):
        return None
    f = arg.owner.parent_op()
    attrs = getattr(f, "arg_attrs", None)
    if attrs is None or arg.index >= len(attrs.data):
        return None
    entry = attrs.data[arg.index]
    attr = entry.data.get(STRIDE_ORDER_ATTR) if isinstance(entry, DictionaryAttr) else None
    rank = len(arg.type.get_shape())
    if attr is None or stride_order_problem(attr, rank) is not None:
        return None
    order = outermost_first([int(v) for v in attr.get_values()])
    return None if order == list(range(rank)) else order


def memory_order(v: SSAValue) -> list[int] | None:
    """The memory order (dims outermost first) in which `v` lies where the IR says it is not
    row-major: an argument's `fusion.stride_order`, a library call's `orders`; else None."""
    if isinstance(v, BlockArgument):
        return argument_order(v)
    if isinstance(v.owner, AtenOp):
        return v.owner.order_of(v)
    return None
