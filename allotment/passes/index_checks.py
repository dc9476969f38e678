"""fusion-index-checks: where the indices of indexing ops are checked.

Every indexing op (`fusion.IndexingOp`: gathers, index_select, embedding, scatter,
index_put_accumulate) requires its indices in range. By default the generated host
program checks them before the kernel runs (`index_check = "host"`, or no attribute): a
min/max of the index tensor read on the host, which on a GPU waits for the device. This
pass writes the decision on every indexing op of the module as its `index_check`
attribute, so the backend follows it and FileCheck sees it:

```mlir
%e = fusion.embedding %ids, %w {index_check = "device"} : tensor<2x8xi64>, tensor<64x32xf32> -> ...
```

`where=device` makes the kernel check each index before its load or store
(`tl.device_assert`): no host read, so a program with indexing neither waits for the GPU
nor stops being replayable; the torch.compile frontend runs it, as torch's CUDA kernels
and Inductor check indirect indexing on the device. `where=host` puts the default back.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from allotment.dialects import fusion


def set_index_checks(module: ModuleOp, where: str) -> int:
    """Sets `index_check = where` on every indexing op of `module`; returns how many."""
    if where not in fusion.INDEX_CHECKS:
        raise PassFailedException(
            f"fusion-index-checks: where must be one of {', '.join(fusion.INDEX_CHECKS)}, got {where!r}")
    count = 0
    for op in module.walk():
        if isinstance(op, fusion.IndexingOp):
            op.attributes[fusion.INDEX_CHECK] = StringAttr(where)
            count += 1
    return count


@dataclass(frozen=True)
class IndexChecksPass(ModulePass):
    """Sets where every indexing op's indices are checked (module docstring)."""

    name = "fusion-index-checks"

    where: str = "device"
    """`device` (in the kernel) or `host` (by the host program, the default without this pass)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        set_index_checks(op, self.where)
