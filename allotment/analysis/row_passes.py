"""How many times a streamed row kernel reads its row: one rule, for `alloc-place` and
the code generator.

A looped (streamed) reduction kernel walks its row in tiles, one loop per
*level*: a reduction whose input depends on another reduction of the same row
waits for it, so it starts a new loop over the row. Two exceptions keep a level
one pass:

- *online softmax*: a max(a) and the sum of exp(a - max) (both in f32) share one
  loop; the running sum is rescaled by exp(old max - new max) whenever the row's
  running max grows (`online_softmax_pairs`);
- a var_mean or welford is one pass (shifted Welford per lane, merged after the
  loop), not the two levels of a mean and then a sum of squares.

Every value the kernel yields on the whole row (not a per-row result) costs one
more loop, after the last level. `streamed_passes` counts the loops; a kernel
whose count is 1 reads its row once when streamed, as a persistent kernel does
(`alloc-place` streams such rows once they are long: `analysis/capacity.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.ir import Block, Operation, SSAValue

from allotment.dialects import fusion
from allotment.extents.dims import dim_set

REDUCTIONS = (fusion.ReductionOp, fusion.VarMeanOp, fusion.WelfordOp)
"""The ops that reduce a row (`backend/kernel_plan.REDUCTIONS` is this tuple)."""


def online_softmax_pairs(reductions: Sequence[Operation]) -> dict[Operation, Operation]:
    """max(a) -> sum(exp(a - max)) pairs among `reductions`, every value in f32: the sum
    can be accumulated in the max's loop with online rescaling (one pass, not two). The max
    may reach the subtraction through broadcasts and expands (a keepdim max or not)."""
    pairs: dict[Operation, Operation] = {}
    members = set(reductions)
    for r2 in reductions:
        if not isinstance(r2, fusion.SumOp):
            continue
        e = r2.operands[0].owner
        if not isinstance(e, fusion.ExpOp) or not isinstance(e.input.owner, fusion.SubOp):
            continue
        sub = e.input.owner
        m = sub.rhs
        while isinstance(m.owner, fusion.BroadcastInDimOp | fusion.ExpandOp):
            m = m.owner.operands[0]
        r1 = m.owner
        if not isinstance(r1, fusion.MaxOp) or r1 not in members or sub.lhs is not r1.input or r1 in pairs:
            continue
        values = (r1.input, sub.result, e.result, r2.result)
        if all(isinstance(v.type, TensorType) and v.type.element_type == Float32Type() for v in values):
            pairs[r1] = r2
    return pairs


def softmax_terms(reductions: Sequence[Operation]) -> set[Operation]:
    """The `fusion.exp` ops of `online_softmax_pairs` whose only use is their sum: each term
    exp(a - max(a)) is at most 1 and one of them is exp(0) = 1, so a term below 2^-126 is
    below half an ulp of the sum and may be flushed to 0 (`triton_math._exp_term`). An exp
    that is also stored or used otherwise (softmax's output) is not one."""
    terms: set[Operation] = set()
    for r2 in online_softmax_pairs(reductions).values():
        e = r2.operands[0].owner
        if all(use.operation is r2 for use in e.result.uses):
            terms.add(e)
    return terms


def streamed_levels(block: Block, reductions: Sequence[Operation]) -> dict[Operation, int]:
    """Each reduction's loop (1-based) in a streamed kernel: one more than the deepest
    reduction its input depends on, the sum of an online-softmax pair in its max's loop.
    One forward walk over the block (no recursion: a chain of any length is fine)."""
    members = set(reductions)
    merged = {r2: r1 for r1, r2 in online_softmax_pairs(reductions).items()}
    depth: dict[SSAValue, int] = {}
    level: dict[Operation, int] = {}
    for op in block.ops:
        d = max((depth.get(x, 0) for x in op.operands), default=0)
        if op in members:
            level[op] = level[merged[op]] if op in merged else d + 1
            d = level[op]
        for r in op.results:
            depth[r] = d
    return level


def yields_rows(block: Block, reductions: Sequence[Operation]) -> bool:
    """Whether the block yields a value that is not a per-row result (the domain with the
    reduced dims kept at 1 or dropped, or a scalar): a normalized row, or anything else
    that streaming would store in a loop of its own."""
    if not reductions:
        return False
    domain = tuple(reductions[0].operands[0].type.get_shape())
    reduced: set[int] = set()
    for r in reductions:
        reduced.update(dim_set(r.dims.get_values(), len(domain)))
    kept = tuple(1 if d in reduced else e for d, e in enumerate(domain))
    dropped = tuple(e for d, e in enumerate(domain) if d not in reduced)
    for v in block.last_op.operands if block.last_op is not None else ():
        shape = tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()
        if shape not in (kept, dropped, ()):
            return True
    return False


def streamed_passes(block: Block, reductions: Sequence[Operation]) -> int:
    """How many loops over its row a streamed kernel with these reductions makes."""
    levels = streamed_levels(block, reductions)
    return max(levels.values(), default=0) + (1 if yields_rows(block, reductions) else 0)


def row_reading_loops(block: Block, reductions: Sequence[Operation]) -> int:
    """How many of a streamed kernel's loops load a row-long kernel input from memory.

    A loop computes its reductions' inputs (and the last one the row-shaped values the
    block yields) from the block's arguments, the kernel's inputs; a loop whose values
    come only from per-row inputs, constants, iotas and the results of earlier loops reads
    nothing row-long. The gradient of a cross-entropy's nll is one: its first loop sums the
    one-hot `where(iota == label, -grad / N, 0)` of each row, which reads a scalar per row;
    only the second reads the logits. A block argument is row-long when it varies along a
    reduced dim (of the domain's rank), or, of another rank, has at least a row's elements
    (or a `?` extent); a gather reads its source at one element per result element, so only
    as much as its result varies."""
    if not reductions:
        return 0
    domain = list(reductions[0].operands[0].type.get_shape())
    reduced: set[int] = set()
    for r in reductions:
        reduced.update(d + len(domain) if d < 0 else d for d in r.dims.get_values())
    row = 1
    for d in reduced:
        row = -1 if domain[d] < 0 or row < 0 else row * domain[d]

    def varies(t: object) -> bool:
        if not isinstance(t, TensorType):
            return False
        shape = t.get_shape()
        if len(shape) == len(domain):
            return any(shape[d] != 1 for d in reduced)
        return row < 0 or any(e < 0 for e in shape) or prod_of(shape) >= row

    members = set(reductions)
    reading: dict[SSAValue, bool] = {a: varies(a.type) for a in block.args}

    def reads(v: SSAValue) -> bool:
        return reading.get(v, False)

    for op in block.ops:  # one forward walk (no recursion: a body of any length is fine)
        if op in members:
            value = False  # a per-row result, kept in registers by later loops
        elif isinstance(op, fusion.INDEXING_GATHERS):
            value = reads(op.index_operand) or (bool(op.results) and varies(op.results[0].type)
                                                and reads(op.source_operand))
        else:
            value = any(reads(x) for x in op.operands)
        for r in op.results:
            reading[r] = value

    levels = streamed_levels(block, reductions)
    loops = sum(1 for level in set(levels.values())
                if any(reads(x) for r, lv in levels.items() if lv == level for x in r.operands))
    if yields_rows(block, reductions) and block.last_op is not None:
        loops += 1 if any(reads(v) for v in block.last_op.operands) else 0
    return loops


def prod_of(shape: Sequence[int]) -> int:
    n = 1
    for e in shape:
        n *= e
    return n
