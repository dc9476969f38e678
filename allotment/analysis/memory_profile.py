"""The memory profile of a planned function: each buffer's size expression, bytes,
placement and live range, and the three figures a plan is judged by.

- lower bound: the most bytes of global buffers live at one point of the
  function's schedule (outputs included), where a buffer is live from its
  `alloc.alloc` to its last use (`analysis/liveness.py`);
- planned peak: the most bytes the plan holds at once, where a buffer holds
  its memory from its `alloc.alloc` to its `alloc.dealloc` (or to the end);
- without reuse: every global buffer's bytes added up, as if nothing were freed
  and no buffer were written in place of another (the unplanned program's).

The schedule is the function's top-level ops, numbered from 0 (steps); the
kernels among them are what runs, so each buffer is also described by the
kernels that run while it holds its memory: from its alloc (inclusive) to its
dealloc (exclusive), or to the end (`MemoryProfile.kernel_span`). `without reuse`
names the buffers it adds up (`MemoryProfile.unplanned`).

With every buffer freed right after its last use (what `alloc-plan` does),
the planned peak equals the lower bound; the two differ for a plan that frees
late. Byte sizes come from the caller (concrete shapes evaluated elsewhere),
so this module is a pure function of the IR and those numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from allotment.analysis.liveness import live_ranges, top_level_users
from allotment.dialects import alloc
from allotment.dtypes import element_nbytes
from allotment.extents import size_arith


@dataclass(frozen=True)
class BufferLife:
    """One buffer of the plan: what it holds and when."""

    name: str
    size: str  # the size expression, e.g. "x.shape[0] * 256 * 4 B"
    nbytes: int
    memory: str
    start: int  # the schedule step (index of top-level op) of its alloc.alloc
    last_use: int
    freed: int | None  # the step of its alloc.dealloc, None if never freed
    returned: bool

    @property
    def holds_memory(self) -> bool:
        """Whether its bytes count in the planned peak on their own (not an arena slot,
        whose bytes its arena holds, nor a tensor written in place into a dead tensor's
        buffer, whose bytes that buffer holds, nor an on-chip buffer)."""
        return not self.memory.startswith(("arena slot", "local", "shared", "in place of"))


@dataclass(frozen=True)
class MemoryProfile:
    """The buffers of a planned function and the figures of its plan, in bytes."""

    function: str
    steps: int
    buffers: tuple[BufferLife, ...]
    planned_peak: int
    lower_bound: int
    without_reuse: int
    kernels: tuple[tuple[int, str], ...] = ()
    """(step, name) of each top-level kernel, in schedule order."""
    unplanned: tuple[tuple[str, int], ...] = ()
    """(name, bytes) of each global buffer of the unplanned program: `without_reuse` is their sum."""
    arguments: tuple[BufferLife, ...] = ()
    """The function's tensor arguments, in order (memory `argument`, or `argument (donated)`
    where `alloc.donated`): held from step 0 to their `alloc.dealloc` (a donated argument
    freed after its last use) or to the end. In no figure above: `peak_with_arguments`."""

    def kernel_position(self, step: int) -> int:
        """How many kernels run before `step`."""
        return sum(1 for s, _ in self.kernels if s < step)

    def kernel_span(self, b: BufferLife) -> tuple[int, int]:
        """The kernels (positions [first, stop)) that run while `b` holds its memory:
        from its alloc to its dealloc, or to the end."""
        stop = b.freed if b.freed is not None else self.steps
        return self.kernel_position(b.start), self.kernel_position(stop)

    def kernel_names(self, b: BufferLife) -> str:
        """`k0..k2`, `k1`, or `no kernel`: the kernels of `kernel_span(b)`."""
        first, stop = self.kernel_span(b)
        if stop <= first:
            return "no kernel"
        names = [name for _, name in self.kernels]
        return names[first] if stop == first + 1 else f"{names[first]}..{names[stop - 1]}"

    def held_per_kernel(self) -> list[int]:
        """Bytes held while each kernel runs (buffers that hold memory of their own, and
        arenas through their slots' span); its largest is the planned peak."""
        held = [0] * len(self.kernels)
        for b in self.buffers:
            if b.holds_memory:
                first, stop = self.kernel_span(b)
                for k in range(first, stop):
                    held[k] += b.nbytes
        return held

    def peak_with_arguments(self, held_elsewhere: frozenset[str] | set[str] = frozenset()) -> int:
        """The most bytes held while a kernel runs, the arguments counted: the planned
        buffers (`held_per_kernel`) plus every argument not yet freed. An argument named in
        `held_elsewhere` (a parameter the caller keeps) holds its bytes to the end even where
        the program frees it, as its memory is not returned then. Each argument is counted
        once, as the caller's tensors are; two arguments sharing memory count twice."""
        held = self.held_per_kernel() or [0]
        for a in self.arguments:
            first, stop = (0, len(self.kernels)) if a.name in held_elsewhere or a.freed is None else \
                self.kernel_span(a)
            for k in range(first, min(stop, len(held))):
                held[k] += a.nbytes
        if not self.kernels:
            held[0] += sum(a.nbytes for a in self.arguments)
        return max(held)

    def summary(self) -> str:
        return (f"planned peak: {self.planned_peak} bytes, lower bound: {self.lower_bound} bytes, "
                f"without reuse: {self.without_reuse} bytes")


def size_expressions(f: func.FuncOp) -> dict[SSAValue, str]:
    """A readable expression for every top-level `index` value of `f`, in terms of
    its arguments' extents (`x.shape[0]`) and scalar arguments."""
    names: dict[SSAValue, str] = {}
    for arg in f.body.block.args:
        names[arg] = arg.name_hint or f"arg{arg.index}"
    for op in f.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            names[op.result] = str(op.value.value.data)
        elif isinstance(op, arith.IndexCastOp) and op.input in names:
            names[op.result] = names[op.input]  # an integer scalar argument as a size
        elif isinstance(op, memref.DimOp) and op.source in names and op.index in names:
            names[op.result] = f"{names[op.source]}.shape[{names[op.index]}]"
        elif isinstance(op, alloc.PackOp):
            names[op.total] = "arena size"
            for k, offset in enumerate(op.offsets):
                names[offset] = f"offset #{k}"
        elif (name := size_arith.arith_op_name(op.name)) and all(v in names for v in op.operands):
            a, b = (names[v] for v in op.operands)
            symbol = size_arith.SYMBOLS.get(name)
            names[op.results[0]] = f"({a} {symbol} {b})" if symbol else f"{name}({a}, {b})"
    return names


def _size_text(op: alloc.AllocOp | memref.ViewOp, names: dict[SSAValue, str]) -> str:
    sizes = iter(op.sizes)
    factors = [names.get(next(sizes), "?") if e == DYNAMIC_INDEX else str(e) for e in op.result.type.get_shape()]

    factors.append(str(element_nbytes(op.result.type.element_type)))
    return " * ".join(f.removeprefix("(").removesuffix(")") if len(factors) == 1 else f for f in factors) + " B"


def memory_profile(f: func.FuncOp, nbytes: dict[Operation, int], without_reuse: int | None = None,
                   unplanned: Sequence[tuple[str, int]] = (), argument_bytes: Sequence[int] = ()) -> MemoryProfile:
    """The profile of `f`'s plan, with `nbytes[op]` the bytes of each buffer: every
    `alloc.alloc` (on-chip ones are listed with their kernel's placement but count in
    no figure) and every arena slot (`memref.view`).

    An arena counts its full size from its first to its last slot in the planned
    peak; in the lower bound, each slot counts on its own over its live range.
    `without_reuse`: the bytes of every buffer of the unplanned function (before
    in-place reuse and packing), `unplanned` their names and bytes; default, the bytes
    of `f`'s own buffers and slots. `argument_bytes`: the bytes of each argument of `f`
    (none given: no `arguments`; a scalar's are ignored)."""
    ops = list(f.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    names = size_expressions(f)
    buffers: list[BufferLife] = []
    arenas = {op.source.owner for op in ops if isinstance(op, memref.ViewOp)}
    live: list[tuple[int, int, int]] = []
    held: list[tuple[int, int, int]] = []
    steps = len(ops)
    for r in live_ranges(f):
        op = r.buffer
        freed = next((index[u.operation] for u in op.result.uses if isinstance(u.operation, alloc.DeallocOp)), None)
        arena = op in arenas
        buffers.append(BufferLife(_label(op, len(buffers)), _size_text(op, names), nbytes.get(op, 0),
                                  "global (arena)" if arena else op.memory.data.value, r.start, r.end, freed, r.returned))
        held.append((r.start, freed if freed is not None else steps, nbytes.get(op, 0)))
        if not arena:
            live.append((r.start, steps if r.returned else r.end, nbytes.get(op, 0)))
        buffers += _reused(buffers[-1], op)
    for i, op in enumerate(ops):
        if isinstance(op, memref.ViewOp) and op.source.owner in arenas:
            users = [index[u] for u, _ in top_level_users(op.result, index) if not isinstance(u, alloc.DeallocOp)]
            end = max([i, *users])
            freed = next((index[u.operation] for u in op.result.uses if isinstance(u.operation, alloc.DeallocOp)), None)
            offset = names.get(op.byte_shift, "?")
            buffers.append(BufferLife(op.result.name_hint or f"slot{i}", _size_text(op, names), nbytes.get(op, 0),
                                      f"arena slot @ {offset}", i, end, freed, False))
            buffers += _reused(buffers[-1], op)
            live.append((i, end, nbytes.get(op, 0)))
    for kernel in (op for op in ops if isinstance(op, alloc.KernelOp)):
        where = {"persistent": "on chip", "persistent_if": f"on chip if %{kernel.fits.name_hint if kernel.fits else '?'}"}
        for op in kernel.body.block.ops:
            if isinstance(op, alloc.AllocOp):
                placement = where.get(kernel.schedule_name or "", "on chip")
                buffers.append(BufferLife(_label(op, len(buffers)), _size_text(op, names), nbytes.get(op, 0),
                                          f"{op.memory.data.value} ({placement}, kernel {kernel.sym_name.data})",
                                          index[kernel], index[kernel], None, False))
    lower = peak_bytes(steps, live)
    planned = peak_bytes(steps, held)
    total = sum(n for _, _, n in live) if without_reuse is None else without_reuse
    kernels = tuple((i, op.sym_name.data) for i, op in enumerate(ops) if isinstance(op, alloc.KernelOp))
    arguments = tuple(_argument(f, i, n, index, names) for i, n in enumerate(argument_bytes)
                      if isinstance(f.body.block.args[i].type, MemRefType))
    return MemoryProfile(f.sym_name.data, steps, tuple(buffers), planned, lower, total, kernels, tuple(unplanned),
                         arguments)


def _argument(f: func.FuncOp, i: int, nbytes: int, index: dict[Operation, int], names: dict[SSAValue, str]) -> BufferLife:
    """Argument `i` of `f` as a buffer held from step 0 (`MemoryProfile.arguments`)."""
    arg = f.body.block.args[i]
    users = [index[u] for u, _ in top_level_users(arg, index) if not isinstance(u, alloc.DeallocOp)]
    freed = next((index[u.operation] for u in arg.uses if isinstance(u.operation, alloc.DeallocOp)), None)
    returned = any(isinstance(u.operation, func.ReturnOp) for u in arg.uses)
    attrs = f.arg_attrs.data[i].data if f.arg_attrs is not None else {}
    memory = "argument (donated)" if alloc.DONATED in attrs else "argument"
    shape = " * ".join([*(str(e) if e != DYNAMIC_INDEX else f"{names[arg]}.shape[{d}]"
                          for d, e in enumerate(arg.type.get_shape())), str(element_nbytes(arg.type.element_type))])
    return BufferLife(names[arg], shape + " B", nbytes, memory, 0, max(users, default=0), freed, returned)


def _reused(buffer: BufferLife, op: Operation) -> list[BufferLife]:
    """The tensors written in place into `buffer` (`alloc.reused_by`), each by its name, with
    the buffer's size and life and memory `in place of <buffer>` (its bytes counted once,
    in the buffer: `holds_memory` is false)."""
    return [BufferLife(name, buffer.size, buffer.nbytes, f"in place of {buffer.name}", buffer.start,
                       buffer.last_use, buffer.freed, buffer.returned) for name in alloc.reused_names(op)]


def _label(op: alloc.AllocOp, k: int) -> str:
    return op.buffer_name.data if op.buffer_name is not None else (op.result.name_hint or f"buffer{k}")


def peak_bytes(steps: int, intervals: list[tuple[int, int, int]]) -> int:
    """The largest total of `nbytes` over intervals [start, end] covering one step."""
    delta = [0] * (steps + 2)
    for start, end, nbytes in intervals:
        delta[start] += nbytes
        delta[end + 1] -= nbytes
    total = peak = 0
    for d in delta:
        total += d
        peak = max(peak, total)
    return peak
