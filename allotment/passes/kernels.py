"""Kernels that the planning passes add: copies between buffers."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Region, SSAValue

from allotment.dialects import alloc


def copy_kernel(name: str, source: SSAValue, target: SSAValue) -> alloc.KernelOp:
    """`alloc.kernel name pointwise ins(source) outs(target)` whose body yields its input:
    a copy of `source` into `target` (same shape; either may be a strided view)."""
    t = source.type
    block = Block(arg_types=[TensorType(t.element_type, t.get_shape())])
    block.add_op(alloc.YieldOp(block.args[0]))
    return alloc.KernelOp(name, "pointwise", [source], [target], Region(block))
