"""`alloc-verify`: proves that a memory plan never touches freed memory.

Runs on allocated (and planned) functions. It checks, for every top-level
`alloc.dealloc`:

- it frees a buffer made by a top-level global `alloc.alloc` of the same
  function (never a function argument, a view, or an on-chip buffer);
- the buffer is freed once;
- no op after the dealloc touches the buffer or any view of it;
- the buffer is not returned (directly or through a view).

A plan that breaks one of these fails with a located error naming the buffer
and the op at fault. (Once buffers share memory through reuse or an arena,
this pass is also where their non-overlap is proven.)
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from allotment.analysis.liveness import top_level_users, view_root
from allotment.diagnostics import located_message
from allotment.dialects import alloc
from allotment.errors import VerifyError


def _name(op: alloc.AllocOp) -> str:
    return f"%{op.result.name_hint}" if op.result.name_hint else "a buffer"


def plan_violations(f: func.FuncOp) -> list[tuple[Operation, str]]:
    """(op at fault, message) for every way the deallocs of `f` break the plan's rules."""
    ops = list(f.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    found: list[tuple[Operation, str]] = []
    freed: set[alloc.AllocOp] = set()
    for i, op in enumerate(ops):
        if not isinstance(op, alloc.DeallocOp):
            continue
        buffer = op.buffer
        owner = buffer.owner
        if view_root(buffer) is not buffer:
            found.append((op, "frees a view; only a buffer made by alloc.alloc can be freed"))
            continue
        if not isinstance(owner, alloc.AllocOp) or owner.parent_op() is not f:
            found.append((op, "frees a value that no top-level alloc.alloc of this function made"))
            continue
        if owner.memory.data != alloc.MemorySpace.GLOBAL:
            found.append((op, f"frees {_name(owner)}, which is not in global memory"))
            continue
        if owner in freed:
            found.append((op, f"frees {_name(owner)} a second time"))
            continue
        freed.add(owner)
        for user, _ in top_level_users(owner.result, index):
            if isinstance(user, alloc.DeallocOp):
                continue  # a second dealloc is reported as such
            j = index.get(user)
            if isinstance(user, func.ReturnOp):
                found.append((op, f"frees {_name(owner)}, which the function returns"))
            elif j is not None and j > i:
                found.append((user, f"uses {_name(owner)} after it was freed"))
    return found


@dataclass(frozen=True)
class AllocVerifyPass(ModulePass):
    """Fails on a plan that frees memory still in use (see the module docstring)."""

    name = "alloc-verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                problems = plan_violations(f)
                if problems:
                    at, message = problems[0]
                    raise VerifyError(located_message(at, message))
