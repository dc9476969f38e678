"""The memory profile of a planned function: each buffer's size expression, bytes,
placement and live range, and the three figures a plan is judged by.

- lower bound: the most bytes of global buffers live at one point of the
  function's schedule (outputs included), where a buffer is live from its
  `alloc.alloc` to its last use (`analysis/liveness.py`);
- planned peak: the most bytes the plan holds at once, where a buffer holds
  its memory from its `alloc.alloc` to its `alloc.dealloc` (or to the end);
- without reuse: every global buffer's bytes added up, as if nothing were freed
  and no buffer were written in place of another (the unplanned program's).

With every buffer freed right after its last use (what `alloc-plan` does),
the planned peak equals the lower bound; the two differ for a plan that frees
late. Byte sizes come from the caller (concrete shapes evaluated elsewhere),
so this module is a pure function of the IR and those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr
from xdsl.ir import Operation, SSAValue

from allotment.analysis import size_arith
from allotment.analysis.liveness import live_ranges
from allotment.dialects import alloc


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


@dataclass(frozen=True)
class MemoryProfile:
    """The buffers of a planned function and the figures of its plan, in bytes."""

    function: str
    steps: int
    buffers: tuple[BufferLife, ...]
    planned_peak: int
    lower_bound: int
    without_reuse: int

    def summary(self) -> str:
        return (f"planned peak: {self.planned_peak} bytes, lower bound: {self.lower_bound} bytes, "
                f"without reuse: {self.without_reuse} bytes")


def size_expressions(f: func.FuncOp) -> dict[SSAValue, str]:
    """A readable expression for every top-level `index` value of `f`, in terms of
    its arguments' extents (`x.shape[0]`) and index arguments."""
    names: dict[SSAValue, str] = {}
    for arg in f.body.block.args:
        names[arg] = arg.name_hint or f"arg{arg.index}"
    for op in f.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            names[op.result] = str(op.value.value.data)
        elif isinstance(op, memref.DimOp) and op.source in names and op.index in names:
            names[op.result] = f"{names[op.source]}.shape[{names[op.index]}]"
        elif (name := size_arith.arith_op_name(op.name)) and all(v in names for v in op.operands):
            a, b = (names[v] for v in op.operands)
            symbol = size_arith.SYMBOLS.get(name)
            names[op.results[0]] = f"({a} {symbol} {b})" if symbol else f"{name}({a}, {b})"
    return names


def _size_text(op: alloc.AllocOp, names: dict[SSAValue, str]) -> str:
    sizes = iter(op.sizes)
    factors = [names.get(next(sizes), "?") if e == DYNAMIC_INDEX else str(e) for e in op.result.type.get_shape()]
    from allotment.dtypes import element_nbytes

    factors.append(str(element_nbytes(op.result.type.element_type)))
    return " * ".join(f.removeprefix("(").removesuffix(")") if len(factors) == 1 else f for f in factors) + " B"


def memory_profile(f: func.FuncOp, nbytes: dict[Operation, int], without_reuse: int | None = None) -> MemoryProfile:
    """The profile of `f`'s plan, with `nbytes[alloc_op]` the bytes of each global buffer.

    `without_reuse`: the bytes of every buffer of the unplanned function (before
    in-place reuse removed some); default, the bytes of `f`'s own buffers."""
    ops = list(f.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    names = size_expressions(f)
    buffers: list[BufferLife] = []
    for r in live_ranges(f):
        op = r.buffer
        freed = next((index[u.operation] for u in op.result.uses if isinstance(u.operation, alloc.DeallocOp)), None)
        label = op.buffer_name.data if op.buffer_name is not None else (op.result.name_hint or f"buffer{len(buffers)}")
        buffers.append(BufferLife(label, _size_text(op, names), nbytes.get(op, 0), op.memory.data.value,
                                  r.start, r.end, freed, r.returned))
    steps = len(ops)
    live = _peak(steps, [(b.start, steps if b.returned else b.last_use, b.nbytes) for b in buffers])
    held = _peak(steps, [(b.start, b.freed if b.freed is not None else steps, b.nbytes) for b in buffers])
    total = sum(b.nbytes for b in buffers) if without_reuse is None else without_reuse
    return MemoryProfile(f.sym_name.data, steps, tuple(buffers), held, live, total)


def _peak(steps: int, intervals: list[tuple[int, int, int]]) -> int:
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
