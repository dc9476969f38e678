"""Kernels that the planning passes add: copies between buffers."""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from allotment.dialects import alloc


def copy_kernel(name: str, source: SSAValue, target: SSAValue) -> list[Operation]:
    """`alloc.kernel name pointwise ins(source) outs(target) domain [...]` whose body yields its
    input: a copy of `source` into `target` (same shape; either may be a strided view), after
    the `memref.dim`s of its dynamic extents that no op of the buffer gives (`buffer_extent`)."""
    t = source.type
    block = Block(arg_types=[TensorType(t.element_type, t.get_shape())])
    block.add_op(alloc.YieldOp(block.args[0]))
    ops: list[Operation] = []
    shape = list(t.get_shape())
    extents = [buffer_extent(source, j, ops) for j, e in enumerate(shape) if e == DYNAMIC_INDEX]
    return [*ops, alloc.KernelOp(name, "pointwise", [source], [target], Region(block), domain=shape, extents=extents)]


def buffer_extent(buffer: SSAValue, j: int, ops: list[Operation]) -> SSAValue:
    """Dynamic extent j of a buffer: the size its `alloc.alloc` or `memref.reinterpret_cast`
    takes, else a `memref.dim` (appended to `ops`, with its constant)."""
    shape = buffer.type.get_shape()
    k = sum(1 for e in shape[:j] if e == DYNAMIC_INDEX)
    owner = buffer.owner
    if isinstance(owner, alloc.AllocOp):
        return owner.sizes[k]
    if isinstance(owner, memref.ReinterpretCastOp):
        return owner.sizes[k]
    index = arith.ConstantOp(IntegerAttr(j, IndexType()))
    dim = memref.DimOp(buffer, index.result)
    ops += [index, dim]
    return dim.result
