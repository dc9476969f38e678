"""`kernel-index-ranges`: which 64-bit integer ops of each generated kernel fit in 32 bits.

Runs on allocated functions (after `fusion-allocate`). In the body of every kernel the
backend generates (all kinds but library, aten, collective and view), each op that
`analysis.int_ranges.narrow_ops` finds gets

    {index_range = array<i64: LO, HI>}

its values' range (for a comparison, its operands'), under the kernel's 32-bit indexing:
the backend then computes it in the kernel's index type (int32 where every extent is
below 2**31, int64 past that), and converts back to the op's 64-bit type wherever another
op reads it as such. An op without the attribute is computed in its own type, as before:
the attribute is only ever an allowance, so a pipeline without this pass is correct, and
slower where a kernel's integer arithmetic is index arithmetic (an ALiBi bias, a causal
mask, a one-hot label over 64-bit `iota`s).

Guarantees: every op it marks has a 64-bit integer result whose range fits in int32, or is
a comparison of integer operands that all do; marks of an earlier run are replaced (the
pass is idempotent); nothing else in the IR changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.passes import ModulePass

from allotment.analysis.int_ranges import INDEX_RANGE, narrow_ops
from allotment.analysis.kernel_domain import has_domain
from allotment.dialects import alloc
from allotment.passes.alloc_stage import allocated_definitions


@dataclass(frozen=True)
class KernelIndexRangesPass(ModulePass):
    """Marks the integer ops each generated kernel may compute in its index type."""

    name = "kernel-index-ranges"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in allocated_definitions(op, self.name):
            for kernel in f.walk():
                if not isinstance(kernel, alloc.KernelOp) or not has_domain(kernel.kind.data):
                    continue
                for inner in kernel.body.walk():
                    inner.attributes.pop(INDEX_RANGE, None)
                for inner, (lo, hi) in narrow_ops(kernel.body.block).items():
                    inner.attributes[INDEX_RANGE] = DenseArrayBase.from_list(i64, [lo, hi])
