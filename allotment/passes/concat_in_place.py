"""Concat without copies: the producers of a `cat` write straight into slices of its buffer.

A rewrite of `alloc-alias` (nvFuser issue 1502). After `fusion-allocate`, a
`cat` whose operands are computed by this fusion is a kernel that copies
buffers written by earlier kernels:

```mlir
%a = alloc.alloc ...   alloc.kernel "k0" ... outs(%a)     // producers
%b = alloc.alloc ...   alloc.kernel "k1" ... outs(%b)
%c = alloc.alloc ...   alloc.kernel "k2" ins(%a, %b) outs(%c) { fusion.cat ... }
```

When every operand of the cat is a global buffer of this function that
exactly one kernel writes (directly, not through a view) and nothing but that
kernel and the cat touches, the rewrite allocates the cat's buffer before the
first producer, gives each producer a `memref.reinterpret_cast` of its slice
(the cat buffer's row-major strides, the slice's offset along the cat
dimension) as its output, and erases the operand buffers and the cat kernel.
Other cats are left as they are; a cat of function arguments stays a copy
(its inputs exist before the fusion runs).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, StridedLayoutAttr
from xdsl.ir import Operation, SSAValue

from allotment.dialects import alloc, fusion

Extent = int | SSAValue
"""A static extent, or the `index` value of a dynamic one."""


def _cat_of_arguments(kernel: alloc.KernelOp) -> fusion.CatOp | None:
    """The kernel's cat if its body is exactly `yield cat(entry arguments...)`."""
    ops = [op for op in kernel.body.block.ops if not isinstance(op, arith.ConstantOp)]
    if kernel.kind.data != "pointwise" or len(ops) != 2 or len(kernel.outs) != 1:
        return None
    cat, yielded = ops
    if not isinstance(cat, fusion.CatOp) or not isinstance(yielded, alloc.YieldOp):
        return None
    if tuple(yielded.operands) != (cat.result,):
        return None
    args = list(kernel.body.block.args)
    if not all(v in args for v in cat.inputs) or len(set(cat.inputs)) != len(cat.inputs):
        return None
    return cat


def _extents(buffer: alloc.AllocOp) -> list[Extent]:
    sizes = iter(buffer.sizes)
    return [next(sizes) if e == DYNAMIC_INDEX else e for e in buffer.result.type.get_shape()]


def _sole_writer(buffer: alloc.AllocOp, cat_kernel: alloc.KernelOp) -> alloc.KernelOp | None:
    """The one kernel that writes `buffer` if only it and the cat kernel use it."""
    writers = []
    for use in buffer.result.uses:
        user = use.operation
        if user is cat_kernel and use.index < len(cat_kernel.ins):
            continue
        if isinstance(user, alloc.KernelOp) and use.index >= len(user.ins) and user is not cat_kernel:
            writers.append(user)
            continue
        return None
    return writers[0] if len(writers) == 1 else None


class _Arith:
    """Emits `index` arithmetic before one op, folding static operands."""

    def __init__(self, before: Operation) -> None:
        self.before = before

    def _emit(self, op: Operation) -> SSAValue:
        self.before.parent_block().insert_op_before(op, self.before)
        return op.results[0]

    def value(self, x: Extent) -> SSAValue:
        return x if isinstance(x, SSAValue) else self._emit(arith.ConstantOp(IntegerAttr(x, IndexType())))

    def mul(self, a: Extent, b: Extent) -> Extent:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 1 or b == 0:
            return b
        if b == 1 or a == 0:
            return a
        return self._emit(arith.MuliOp(self.value(a), self.value(b)))

    def add(self, a: Extent, b: Extent) -> Extent:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if a == 0:
            return b
        if b == 0:
            return a
        return self._emit(arith.AddiOp(self.value(a), self.value(b)))


def _row_major_strides(extents: Sequence[Extent], emit: _Arith) -> list[Extent]:
    strides: list[Extent] = [1] * len(extents)
    for d in range(len(extents) - 2, -1, -1):
        strides[d] = emit.mul(strides[d + 1], extents[d + 1])
    return strides


def _slice_view(target: SSAValue, extents: Sequence[Extent], strides: Sequence[Extent], offset: Extent,
                element_type: object, emit: _Arith) -> memref.ReinterpretCastOp:
    layout = StridedLayoutAttr([s if isinstance(s, int) else None for s in strides],
                               offset if isinstance(offset, int) else None)
    shape = tuple(e if isinstance(e, int) else DYNAMIC_INDEX for e in extents)
    result_type = alloc.memref_type(element_type, shape, layout)
    view = memref.ReinterpretCastOp.from_dynamic(target, [offset], list(extents), list(strides), result_type)
    emit.before.parent_block().insert_op_before(view, emit.before)
    return view


def write_cat_in_place(f: func.FuncOp, kernel: alloc.KernelOp) -> bool:
    """Rewrites one cat kernel as described in the module docstring; False if it does not apply."""
    cat = _cat_of_arguments(kernel)
    if cat is None:
        return False
    target = kernel.outs[0].owner
    if not isinstance(target, alloc.AllocOp) or target.memory.data != alloc.MemorySpace.GLOBAL:
        return False
    args = list(kernel.body.block.args)
    operands = [kernel.ins[args.index(v)] for v in cat.inputs]
    buffers = [v.owner for v in operands]
    if not all(isinstance(b, alloc.AllocOp) and b.memory.data == alloc.MemorySpace.GLOBAL and b.parent_op() is f
               for b in buffers):
        return False
    writers = [_sole_writer(b, kernel) for b in buffers]
    if any(w is None for w in writers):
        return False
    ops = list(f.body.block.ops)
    position = {op: i for i, op in enumerate(ops)}
    first = min(position[op] for op in [*buffers, *writers])
    if any(isinstance(v.owner, Operation) and position.get(v.owner, -1) >= first for v in target.sizes):
        return False  # the cat's sizes are computed after its first producer
    anchor = ops[first]
    target.detach()
    f.body.block.insert_op_before(target, anchor)
    emit = _Arith(anchor)
    rank = len(target.result.type.get_shape())
    dim = cat.dim.value.data % rank if rank else 0
    strides = _row_major_strides(_extents(target), emit)
    offset: Extent = 0
    element_type = target.result.type.element_type
    for k, buffer in enumerate(buffers):
        extents = _extents(buffer)
        view = _slice_view(target.result, extents, strides, emit.mul(offset, strides[dim]), element_type, emit)
        view.result.name_hint = buffer.result.name_hint
        buffer.result.replace_all_uses_with(view.result)
        if k + 1 < len(buffers):
            offset = emit.add(offset, extents[dim])
    kernel.detach()
    kernel.erase()
    for buffer in buffers:
        buffer.detach()
        buffer.erase()
    return True


def write_cats_in_place(f: func.FuncOp) -> int:
    """Rewrites every cat kernel of `f` that qualifies; returns how many."""
    done = 0
    for op in list(f.body.block.ops):
        if isinstance(op, alloc.KernelOp) and write_cat_in_place(f, op):
            done += 1
    return done
