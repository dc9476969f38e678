"""The `alloc.check`s at the entry of a function rewritten by `fusion-allocate`.

Every run-time requirement on extents (those shape reification recorded, and those
of shards) becomes one `alloc.check` before any allocation and kernel, once per
(predicate, lhs, rhs); a requirement on two constants is decided at compile time
(`size_arith.check_holds`), a false one being an error. `EntryChecks` is a part of
`fusion_allocate._Allocator`.
"""

from __future__ import annotations

from xdsl.ir import Operation

from allotment.diagnostics import SOURCE_SPANS
from allotment.dialects import alloc
from allotment.extents import size_arith
from allotment.extents.symbolic import Const, Extent
from allotment.passes.allocate_errors import _fail


class EntryChecks:
    """The entry's run-time checks on extents (mixed into _Allocator)."""

    def _emit_checks(self, entry: list[Operation]) -> None:
        seen: set[tuple[str, Extent, Extent]] = set()
        for c in self.shapes.checks:
            # Compared as recorded, not canonicalized: the two sides of an `eq`
            # were unified, so their canonical forms are one value (the check
            # would compare it with itself), and a check's message names the
            # extents as recorded.
            self._check(entry, seen, c.predicate, c.lhs, c.rhs, c.message, c.op)
        for pred, lhs, rhs, msg in self.checks:
            self._check(entry, seen, pred, self.shapes.canonical(lhs), self.shapes.canonical(rhs), msg, None)

    def _check(
        self, entry: list[Operation], seen: set, pred: str, lhs: Extent, rhs: Extent, msg: str,
        op: Operation | None,
    ) -> None:
        """An `alloc.check` at entry; a check of two constants is decided now
        (`size_arith.check_holds`): a false one is an error located at `op`."""
        if isinstance(lhs, Const) and isinstance(rhs, Const):
            if not size_arith.check_holds(pred, lhs.value, rhs.value):
                raise _fail(op or self.f, f"{msg} (always false: {lhs.value}, {rhs.value})")
            return
        key = (pred, lhs, rhs)
        if key in seen:
            return
        seen.add(key)
        check = alloc.CheckOp(pred, self.sizes.value(lhs), self.sizes.value(rhs), msg)
        if op is not None and op in SOURCE_SPANS:
            SOURCE_SPANS[check] = SOURCE_SPANS[op]  # a failing check is reported where its op is
        entry.append(check)
