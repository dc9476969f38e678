"""Concat without copies: the producers of a `cat` write straight into slices of its buffer.

A rewrite of `alloc-alias` (nvFuser issue 1502). After `fusion-allocate`, a
`cat` whose operands are computed by this fusion is a kernel that copies
buffers written by earlier kernels:

```mlir
%a = alloc.alloc ...   alloc.kernel "k0" ... outs(%a)     // producers
%b = alloc.alloc ...   alloc.kernel "k1" ... outs(%b)
%c = alloc.alloc ...   alloc.kernel "k2" ins(%a, %b) outs(%c) { fusion.cat ... }
```

Every operand of the cat that is a global buffer of this function, written by
exactly one kernel (directly, not through a view) and touched by nothing but
that kernel and the cat, is written straight into its slice: the rewrite
allocates the cat's buffer before the first such producer, gives the producer
a `memref.reinterpret_cast` of its slice (the cat buffer's row-major strides,
the slice's offset along the cat dimension, computed at run time where
extents are dynamic) as its output, and erases the operand's buffer. Any other
operand (a function argument, a view of one, a buffer used elsewhere too) is
copied into its slice by a pointwise kernel where the cat was; the cat kernel
is erased. A cat none of whose operands qualifies stays one copy kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, StridedLayoutAttr
from xdsl.ir import Operation, SSAValue

from allotment.dialects import alloc, fusion
from allotment.extents.dims import normalize_dim
from allotment.passes.kernels import copy_kernel as _copy_kernel

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


def _operand_extents(value: SSAValue, f: func.FuncOp, emit: _Arith) -> list[Extent] | None:
    """The extents of a cat operand as `index` values available before `emit`'s op: an
    alloc's or a view's size operands, or `memref.dim`s of an argument (None otherwise)."""
    owner = value.owner
    if isinstance(owner, alloc.AllocOp):
        return _extents(owner)
    if isinstance(owner, memref.ReinterpretCastOp):
        dynamic = iter(owner.sizes)
        return [next(dynamic) if e == DYNAMIC_INDEX else e for e in owner.static_sizes.get_values()]
    if value in f.body.block.args:
        out: list[Extent] = []
        for d, e in enumerate(value.type.get_shape()):
            if e != DYNAMIC_INDEX:
                out.append(e)
                continue
            dim = memref.DimOp(value, emit.value(d))
            emit.before.parent_block().insert_op_before(dim, emit.before)
            out.append(dim.result)
        return out
    return None


def _qualifies(value: SSAValue, f: func.FuncOp, kernel: alloc.KernelOp) -> alloc.KernelOp | None:
    """The kernel that alone writes `value`, a global buffer of `f` that nothing but that
    kernel and the cat `kernel` uses (it can then write its slice directly)."""
    b = value.owner
    if isinstance(b, alloc.AllocOp) and b.memory.data == alloc.MemorySpace.GLOBAL and b.parent_op() is f:
        return _sole_writer(b, kernel)
    return None


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
    writers = [_qualifies(v, f, kernel) for v in operands]
    if all(w is None for w in writers):
        return False  # nothing computed here: the cat stays one copy kernel
    ops = list(f.body.block.ops)
    position = {op: i for i, op in enumerate(ops)}
    first = min(position[op] for v, w in zip(operands, writers) if w is not None for op in (v.owner, w))
    if any(isinstance(v.owner, Operation) and position.get(v.owner, -1) >= first for v in target.sizes):
        return False  # the cat's sizes are computed after its first producer
    anchor = ops[first]
    emit = _Arith(anchor)
    extents = [_operand_extents(v, f, emit) for v in operands]
    if any(e is None for e in extents):
        return False
    target.detach()
    f.body.block.insert_op_before(target, anchor)
    rank = len(target.result.type.get_shape())
    dim = normalize_dim(cat.dim.value.data, rank)
    strides = _row_major_strides(_extents(target), emit)
    offset: Extent = 0
    element_type = target.result.type.element_type
    copies, replaced = [], []
    for k, (value, writer, ext) in enumerate(zip(operands, writers, extents)):
        view = _slice_view(target.result, ext, strides, emit.mul(offset, strides[dim]), element_type, emit)
        view.result.name_hint = value.name_hint
        if writer is not None:
            value.replace_all_uses_with(view.result)
            replaced.append(value.owner)  # erased below: one of them may be the anchor
        else:
            copies += _copy_kernel(f"{kernel.sym_name.data}_slice{k}", value, view.result)
        if k + 1 < len(operands):
            offset = emit.add(offset, ext[dim])
    for copy in copies:  # operands from outside the fusion are copied where the cat was
        f.body.block.insert_op_before(copy, kernel)
    kernel.detach()
    kernel.erase()
    for buffer in replaced:
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
