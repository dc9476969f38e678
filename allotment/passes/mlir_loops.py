"""Where `alloc-to-mlir` puts each op of a lowered kernel: loop nests built as they are needed.

`LoopNest` keeps the path of blocks the lowering is inside (the function block, then
each open `scf.for` or `scf.if` branch) and, for each SSA value, the depth of the
block it lives in. `emit` inserts an op at the depth of its deepest operand: an op
that does not depend on a loop's index is placed before that loop, so a row's
statistics are computed once per row, before the loop over the row writes anything.
Inside a guard (`scf.if`) the floor is the guard's branch: what a branch reads stays
in it. Index arithmetic folds constants.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.dialects import fusion

INDEX = IndexType()


def ints(attr: Attribute) -> list[int]:
    """The values of a dense integer array property."""
    return [int(x) for x in attr.get_values()]


@dataclass
class Scope:
    """A block the emitter inserts into: at its end, or before `anchor` (the op of the
    open child scope, or the kernel being replaced)."""

    block: Block
    anchor: Operation | None


class LoopNest:
    """The blocks being filled and the depth of every value (see the module docstring)."""

    def __init__(self, block: Block, anchor: Operation):
        self.scopes: list[Scope] = [Scope(block, anchor)]
        self.floor = 0
        self.depth: dict[SSAValue, int] = {}
        self.consts: dict[int, SSAValue] = {}

    def _depth(self, v: SSAValue) -> int:
        return self.depth.get(v, 0)

    def emit(self, op: Operation) -> Operation:
        """Inserts `op` at the depth of its deepest operand (at least the guard floor)."""
        d = max([self._depth(v) for v in op.operands], default=0)
        d = max(d, self.floor)
        if isinstance(op, arith.ConstantOp):
            d = 0
        self._insert(d, op)
        for r in op.results:
            self.depth[r] = d
        return op

    def _insert(self, d: int, op: Operation) -> None:
        scope = self.scopes[d]
        if scope.anchor is not None:
            Rewriter.insert_op(op, InsertPoint.before(scope.anchor))
        else:
            scope.block.add_op(op)

    def index(self, n: int) -> SSAValue:
        if n not in self.consts:
            op = arith.ConstantOp(IntegerAttr(n, INDEX))
            self._insert(0, op)
            self.depth[op.result] = 0
            self.consts[n] = op.result
        return self.consts[n]

    @staticmethod
    def known(v: SSAValue) -> int | None:
        c = fusion.constant_index(v)
        return c

    def ix(self, name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """Index arithmetic, folded where both sides are constants."""
        ka, kb = self.known(a), self.known(b)
        if ka is not None and kb is not None:
            folded = {
                "add": ka + kb, "sub": ka - kb, "mul": ka * kb,
                "max": max(ka, kb), "min": min(ka, kb),
                "floordiv": ka // kb if kb else None, "rem": (ka - kb * int(ka / kb)) if kb else None,
                "ceildiv": -(-ka // kb) if kb else None,
            }[name]
            if folded is not None:
                return self.index(folded)
        if name == "add" and kb == 0 or name == "sub" and kb == 0 or name == "mul" and kb == 1:
            return a
        if name == "add" and ka == 0 or name == "mul" and ka == 1:
            return b
        if name == "mul" and (ka == 0 or kb == 0):
            return self.index(0)
        cls = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "max": arith.MaxSIOp,
               "min": arith.MinSIOp, "floordiv": arith.FloorDivSIOp, "rem": arith.RemSIOp,
               "ceildiv": arith.CeilDivSIOp}[name]
        return self.emit(cls(a, b)).results[0]

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.CmpiOp(a, b, pred)).results[0]

    def _enter(self, d: int, op: Operation, block: Block, floor: int | None = None) -> tuple:
        """Makes `block` (of `op`, inserted at depth d) the innermost scope."""
        saved = (self.scopes, self.scopes[d].anchor, self.floor, d)
        self.scopes = self.scopes[: d + 1]
        self.scopes[d].anchor = op
        self.scopes.append(Scope(block, None))
        for a in block.args:
            self.depth[a] = d + 1
        if floor is not None:
            self.floor = floor
        return saved

    def _leave(self, saved: tuple) -> None:
        scopes, anchor, floor, d = saved
        self.scopes = scopes
        self.scopes[d].anchor = anchor
        self.floor = floor

    def loop(
        self, upper: SSAValue, inits: Sequence[SSAValue], body: Callable[[SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
        uses: Sequence[SSAValue] = (),
    ) -> Sequence[SSAValue]:
        """`scf.for %i = 0 to upper` carrying `inits`; `body(i, carried)` gives the next values.
        The loop is placed where `upper`, `inits` and `uses` (the indices its body reads at) live."""
        d = max([self._depth(upper), *[self._depth(v) for v in (*inits, *uses)], self.floor])
        block = Block(arg_types=[INDEX, *[v.type for v in inits]])
        op = scf.ForOp(self.index(0), upper, self.index(1), list(inits), Region(block))
        self._insert(d, op)
        saved = self._enter(d, op, block)
        out = body(block.args[0], block.args[1:])
        block.add_op(scf.YieldOp(*out))
        self._leave(saved)
        for r in op.results:
            self.depth[r] = d
        return op.results

    def guarded(self, cond: SSAValue, t: Attribute, then: Callable[[], SSAValue], other: Callable[[], SSAValue],
                uses: Sequence[SSAValue] = ()) -> SSAValue:
        """`scf.if cond -> t`: what each branch computes stays inside it. The `scf.if` is
        placed where `cond` and `uses` (the indices the branches read at) live."""
        known = None
        owner = cond.owner
        if isinstance(owner, arith.ConstantOp):
            known = owner.value.value.data != 0
        if known is not None:
            return then() if known else other()
        d = max([self._depth(cond), *[self._depth(v) for v in uses], self.floor])
        blocks = [Block(), Block()]
        op = scf.IfOp(cond, [t], Region(blocks[0]), Region(blocks[1]))
        self._insert(d, op)
        for block, fn in zip(blocks, (then, other)):
            saved = self._enter(d, op, block, floor=d + 1)
            block.add_op(scf.YieldOp(fn()))
            self._leave(saved)
        self.depth[op.results[0]] = d
        return op.results[0]

    def true(self) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(-1, i1))).results[0]

    def both(self, a: SSAValue | None, b: SSAValue) -> SSAValue:
        return b if a is None else self.emit(arith.AndIOp(a, b)).results[0]
