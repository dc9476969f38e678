"""Kernel orders for low peak memory: the dependences of an allocated function and
candidate schedules, each with its estimated peak.

An allocated function is straight-line host code. Its *prologue* (constants,
`memref.dim` of arguments, size arithmetic, `alloc.check`) touches no buffer:
it moves to the front, in its order, so every check runs before any kernel. The rest (`alloc.alloc`, views, `alloc.kernel`) may be
reordered as long as every dependence is kept:

- SSA: an op after the ops that define its operands;
- memory: for each buffer (an `alloc.alloc` or a function argument, with all
  the views of it), a kernel that reads it after the kernel that last wrote
  it, and a kernel that writes it after every earlier kernel that read or
  wrote it (program order decides between accesses).

Sizes may be symbolic, and which order is best can depend on them. Candidate
orders are compared by their peak for *hint* extents (every `?` extent of an
argument, and every `index` argument, takes the hint value), as Inductor
compares its memory-aware orders with size hints; the chosen order is correct
for every size, only its optimality is judged at the hint. The candidates:
program order, least-peak-first list scheduling (at each step the ready
kernel that adds the fewest bytes net of the buffers it lets go), and
depth-first from the outputs in operand order and in reverse operand order.
Ties keep the earlier candidate, program order first.

Everything here is a pure function of the IR; `alloc-plan` applies the result.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from allotment.analysis import packing
from allotment.analysis.liveness import VIEW_OPS, view_root
from allotment.dialects import alloc
from allotment.dtypes import element_nbytes
from allotment.extents import size_arith

T = TypeVar("T")

MOVABLE = (alloc.AllocOp, alloc.KernelOp, *VIEW_OPS)
"""Top-level ops a schedule may move; all others form the prologue (or end it)."""


@dataclass
class Dependences:
    """The ops of one function split into prologue, movable ops and the rest, with the
    dependences between movable ops (`after[op]`: the movable ops that must precede it)."""

    prologue: list[Operation]
    movable: list[Operation]
    epilogue: list[Operation]
    after: dict[Operation, list[Operation]] = field(default_factory=dict)
    kernel_deps: dict[alloc.KernelOp, set[alloc.KernelOp]] | None = field(default=None, compare=False)
    """`_kernel_deps`, found once and shared by the candidate schedules (None: not yet)."""


def dependences(f: func.FuncOp) -> Dependences | None:
    """The dependences of `f`, or None where the function cannot be reordered
    (it already frees buffers, or a movable op uses a value defined after it)."""
    ops = list(f.body.block.ops)
    if any(isinstance(op, alloc.DeallocOp) for op in ops):
        return None
    movable = [op for op in ops if isinstance(op, MOVABLE)]
    moving = set(movable)
    prologue = [op for op in ops if op not in moving and not isinstance(op, func.ReturnOp)]
    if any(v.owner in moving for op in prologue for v in op.operands):
        return None  # a size computed from a buffer: keep the program as it is
    epilogue = [op for op in ops if isinstance(op, func.ReturnOp)]
    deps = Dependences(prologue, movable, epilogue)
    for op in movable:
        deps.after[op] = [v.owner for v in op.operands if isinstance(v.owner, Operation) and v.owner in moving]
    _memory_dependences(deps)
    return deps


def _memory_dependences(deps: Dependences) -> None:
    last_write: dict[SSAValue, Operation] = {}
    reads: dict[SSAValue, list[Operation]] = {}
    for op in deps.movable:
        if not isinstance(op, alloc.KernelOp):
            continue
        for v in op.ins:
            if isinstance(v.type, MemRefType):
                root = view_root(v)
                if root in last_write:
                    deps.after[op].append(last_write[root])
                reads.setdefault(root, []).append(op)
        for v in op.outs:
            root = view_root(v)
            if root in last_write and last_write[root] is not op:  # a kernel may write several views of one buffer
                deps.after[op].append(last_write[root])
            deps.after[op].extend(r for r in reads.pop(root, []) if r is not op)
            last_write[root] = op


def hint_index_values(f: func.FuncOp, hint: int) -> dict[SSAValue, int]:
    """Index values of the prologue with every `?` argument extent (and `index`
    argument) set to `hint`; values that cannot be computed are left out."""
    values: dict[SSAValue, int] = {}
    for arg in f.body.block.args:
        if isinstance(arg.type, IndexType):
            values[arg] = hint
    for op in f.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            values[op.result] = op.value.value.data
        elif isinstance(op, memref.DimOp) and isinstance(op.source.type, MemRefType) and op.index in values:
            shape = op.source.type.get_shape()
            d = values[op.index]
            if 0 <= d < len(shape):
                values[op.result] = hint if shape[d] == DYNAMIC_INDEX else shape[d]
        elif (name := size_arith.arith_op_name(op.name)) and len(op.operands) == 2:
            a, b = (values.get(v) for v in op.operands)
            if a is not None and b is not None:
                try:
                    values[op.results[0]] = size_arith.apply(name, a, b)
                except size_arith.SizeArithmeticError:
                    pass
        elif isinstance(op, alloc.PackOp) and all(v in values for v in op.sizes):
            total, offsets = packing.pack([values[v] for v in op.sizes], op.lifetime_pairs(), op.alignment.value.data)
            for r, v in zip(op.results, (total, *offsets)):
                values[r] = v
    return values


def buffer_bytes(op: alloc.AllocOp | memref.ViewOp, values: dict[SSAValue, int], hint: int) -> int:
    """Bytes of a global buffer or an arena slot for the given index values (`hint` for
    unknown extents)."""
    if isinstance(op, alloc.AllocOp) and op.memory.data != alloc.MemorySpace.GLOBAL:
        return 0
    sizes = iter(op.sizes)
    n = 1
    for e in op.result.type.get_shape():
        n *= max(0, values.get(next(sizes), hint)) if e == DYNAMIC_INDEX else e
    return n * element_nbytes(op.result.type.element_type)


def materialize(deps: Dependences, kernel_order: Sequence[alloc.KernelOp]) -> list[Operation]:
    """The full movable order for a kernel order: each kernel preceded by the
    allocs and views it needs that are not placed yet; leftovers at the end."""
    placed: set[Operation] = set()
    out: list[Operation] = []

    def place(root: Operation) -> None:
        _post_order(root, lambda op: deps.after[op], placed, out)

    for k in kernel_order:
        place(k)
    for op in deps.movable:
        place(op)
    return out


def estimated_peak(order: Sequence[Operation], epilogue: Sequence[Operation], nbytes: dict[Operation, int]) -> int:
    """Peak bytes of global buffers in `order` when each transient buffer is freed
    right after its last use (returned buffers live to the end)."""
    position = {op: i for i, op in enumerate(order)}
    end = len(order)
    last: dict[Operation, int] = {}
    for op in order:
        if not isinstance(op, alloc.AllocOp):
            continue
        stop = position[op]
        pending = [op.result]
        while pending:
            v = pending.pop()
            for use in v.uses:
                user = use.operation
                while user.parent_op() is not None and user not in position and user not in epilogue:
                    user = user.parent_op()
                stop = max(stop, end if user in epilogue else position.get(user, end))
                if isinstance(use.operation, VIEW_OPS):
                    pending.extend(use.operation.results)
        last[op] = stop
    frees: dict[int, int] = {}
    for op, stop in last.items():
        frees[stop] = frees.get(stop, 0) + nbytes.get(op, 0)
    live = peak = 0
    for i, op in enumerate(order):
        live += nbytes.get(op, 0) if isinstance(op, alloc.AllocOp) else 0
        peak = max(peak, live)
        live -= frees.get(i, 0)
    return peak


def _kernels(deps: Dependences) -> list[alloc.KernelOp]:
    return [op for op in deps.movable if isinstance(op, alloc.KernelOp)]


def _kernel_deps(deps: Dependences) -> dict[alloc.KernelOp, set[alloc.KernelOp]]:
    """For each kernel, the kernels that must precede it (through allocs and views too);
    found on the first call and kept on `deps` (its dependences are not changed after)."""
    if deps.kernel_deps is not None:
        return deps.kernel_deps
    out: dict[alloc.KernelOp, set[alloc.KernelOp]] = {}
    for k in _kernels(deps):
        found: set[alloc.KernelOp] = set()
        seen: set[Operation] = set()
        pending = list(deps.after[k])
        while pending:
            op = pending.pop()
            if op in seen:
                continue
            seen.add(op)
            if isinstance(op, alloc.KernelOp):
                found.add(op)
            else:
                pending.extend(deps.after[op])
        out[k] = found
    deps.kernel_deps = out
    return out


def least_peak_first(deps: Dependences, nbytes: dict[Operation, int]) -> list[alloc.KernelOp]:
    """List scheduling: repeatedly the ready kernel with the smallest net growth
    (bytes of the buffers it needs allocated, minus those it is the last user of);
    ties go to the kernel first in program order.

    Linear in the kernels and their operands, times the number ready at once: each
    kernel counts its unfinished predecessors, and each buffer its unfinished users."""
    kernels = _kernels(deps)
    need = _kernel_deps(deps)
    position = {k: i for i, k in enumerate(kernels)}
    successors: dict[alloc.KernelOp, list[alloc.KernelOp]] = {k: [] for k in kernels}
    waiting: dict[alloc.KernelOp, int] = {}
    for k in kernels:
        waiting[k] = len(need[k])
        for d in need[k]:
            successors[d].append(k)
    roots_of: dict[alloc.KernelOp, set[Operation]] = {k: {view_root(v).owner for v in k.operands} for k in kernels}
    users_left: dict[Operation, int] = {}
    for k in kernels:
        for root in roots_of[k]:
            if isinstance(root, alloc.AllocOp):
                users_left[root] = users_left.get(root, 0) + 1
    returned = {view_root(v).owner for op in deps.epilogue for v in op.operands}
    ready = [position[k] for k in kernels if waiting[k] == 0]  # sorted: program order
    done: list[alloc.KernelOp] = []
    allocated: set[Operation] = set()
    while ready:
        best, best_growth = kernels[ready[0]], None
        for i in ready:
            k = kernels[i]
            roots = roots_of[k]
            grow = sum(nbytes.get(r, 0) for r in roots if r not in allocated and isinstance(r, alloc.AllocOp))
            freed = sum(nbytes.get(r, 0) for r in roots if users_left.get(r) == 1 and r not in returned)
            if best_growth is None or grow - freed < best_growth:
                best, best_growth = k, grow - freed
        done.append(best)
        ready.remove(position[best])
        allocated |= roots_of[best]
        for root in roots_of[best]:
            if root in users_left:
                users_left[root] -= 1
        for k in successors[best]:
            waiting[k] -= 1
            if waiting[k] == 0:
                bisect.insort(ready, position[k])
    if len(done) != len(kernels):
        raise ValueError("least_peak_first: the kernels' dependences have a cycle")
    return done


def depth_first(deps: Dependences, reverse: bool) -> list[alloc.KernelOp]:
    """Kernels in depth-first post-order from the returned buffers' writers, visiting
    each kernel's predecessors in operand order (or reversed); then the rest."""
    need = _kernel_deps(deps)
    writers: dict[SSAValue, alloc.KernelOp] = {}
    for k in _kernels(deps):
        for v in k.outs:
            writers[view_root(v)] = k
    ordered_need: dict[alloc.KernelOp, list[alloc.KernelOp]] = {}
    for k in _kernels(deps):
        seq = [writers[view_root(v)] for v in k.operands if view_root(v) in writers]
        seq = [w for w in dict.fromkeys(seq) if w is not k and w in need[k]]
        seq += [w for w in need[k] if w not in seq]
        ordered_need[k] = list(reversed(seq)) if reverse else seq
    roots = [writers[view_root(v)] for op in deps.epilogue for v in op.operands if view_root(v) in writers]
    if reverse:
        roots.reverse()
    order: list[alloc.KernelOp] = []
    placed: set[alloc.KernelOp] = set()
    for root in [*roots, *_kernels(deps)]:
        _post_order(root, lambda k: ordered_need[k], placed, order)
    return order


def _post_order(root: T, predecessors: Callable[[T], Sequence[T]], placed: set[T], out: list[T]) -> None:
    """Appends to `out` the nodes reachable from `root` through `predecessors` that are not
    `placed` yet, each after its predecessors (visited in order), without recursion."""
    stack: list[tuple[T, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node in placed:
            continue
        if expanded:
            placed.add(node)
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((d, False) for d in reversed(predecessors(node)) if d not in placed)


@dataclass(frozen=True)
class Choice:
    """The schedule `alloc-plan` takes: its name, its movable ops in order, and the
    estimated peaks (at the hint) of it and of program order."""

    strategy: str
    order: list[Operation]
    peak: int
    program_peak: int


def choose_schedule(f: func.FuncOp, hint: int = 4096) -> Choice | None:
    """The candidate order with the lowest estimated peak (None: keep the function as is)."""
    deps = dependences(f)
    if deps is None or not deps.movable:
        return None
    values = hint_index_values(f, hint)
    nbytes = {op: buffer_bytes(op, values, hint) for op in deps.movable if isinstance(op, alloc.AllocOp)}
    candidates = [
        ("program", list(deps.movable)),
        ("least-peak-first", materialize(deps, least_peak_first(deps, nbytes))),
        ("depth-first", materialize(deps, depth_first(deps, reverse=False))),
        ("depth-first-reversed", materialize(deps, depth_first(deps, reverse=True))),
    ]
    peaks = [estimated_peak(order, deps.epilogue, nbytes) for _, order in candidates]
    best = min(range(len(candidates)), key=lambda i: (peaks[i], i))
    return Choice(candidates[best][0], candidates[best][1], peaks[best], peaks[0])
