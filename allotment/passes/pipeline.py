"""The compile pipeline: the one list of passes between a fusion and its host program.

`allotment.compile`, `plan_sizes`/`allocate_intermediates` and `memory_plan`
run these passes, in this order, so that the buffers a plan reports are the
ones the generated program allocates:

    fusion-propagate-sharding, fusion-insert-resharding, fusion-scatter-select,
    fusion-sink-gather, fusion-segment, fusion-allocate, alloc-place, alloc-alias, alloc-plan,
    kernel-index-ranges, alloc-verify

(the first two leave fusions without shardings alone: `docs/distributed.md`;
`fusion-scatter-select` and `fusion-sink-gather` leave sharded and dynamic ones alone).

`alloc-place` takes the capacity model of the program target (`cuda` is placed
for the H200, `cpu` for Triton's interpreter: `analysis/capacity.py`).

The same pipeline as a string, for `allot-opt -p`: `PIPELINE`.
"""

from __future__ import annotations

import os

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from allotment.analysis.capacity import PROGRAM_TARGETS
from allotment.diagnostics import clone_located, verify_located
from allotment.errors import CompileError, Error
from allotment.limits import call_with_deep_stack
from allotment.passes.alloc_alias import AllocAliasPass
from allotment.passes.alloc_place import AllocPlacePass
from allotment.passes.alloc_plan import AllocPlanPass
from allotment.passes.alloc_verify import AllocVerifyPass
from allotment.passes.fusion_allocate import FusionAllocatePass
from allotment.passes.fusion_scatter_select import FusionScatterSelectPass
from allotment.passes.fusion_segment import FusionSegmentPass
from allotment.passes.fusion_sink_gather import FusionSinkGatherPass
from allotment.passes.insert_resharding import InsertReshardingPass
from allotment.passes.kernel_index_ranges import KernelIndexRangesPass
from allotment.passes.sharding_propagation import PropagateShardingPass


def compile_passes(target: str = "cuda", planning: bool = True) -> list[ModulePass]:
    """Fresh instances of the compile pipeline's passes, in order, for a program
    target (`cuda` or `cpu`: it picks `alloc-place`'s capacity model). `planning=False`
    keeps program order, reuses no buffer and packs no arena (frees stay)."""
    place = AllocPlacePass(target=PROGRAM_TARGETS.get(target, target))
    sharding = [PropagateShardingPass(), InsertReshardingPass()]  # no-ops on fusions without shardings
    # ALLOT_INNER_OUTER=0: no inner-outer kernels (`analysis/inner_outer.py`), for comparisons
    segment = FusionSegmentPass(inner_outer=os.environ.get("ALLOT_INNER_OUTER", "1") != "0", target=place.target)
    plan = AllocPlanPass() if planning else AllocPlanPass(reorder=False, in_place=False, arena=False)
    return [*sharding, FusionScatterSelectPass(), FusionSinkGatherPass(), segment, FusionAllocatePass(), place, AllocAliasPass(), plan,
            KernelIndexRangesPass(), AllocVerifyPass()]


PIPELINE = ",".join(p.name for p in compile_passes())
"""`fusion-propagate-sharding,fusion-insert-resharding,fusion-scatter-select,fusion-sink-gather,...`."""


def run_pipeline(module: ModuleOp, passes: list[ModulePass] | None = None) -> ModuleOp:
    """The result of `passes` (default: the compile pipeline) on a clone of `module`
    (`module` itself is not modified), verified after every pass.

    An error a pass reports about its input (an `allotment.Error`, with its location)
    is raised as it is; IR that no longer verifies after a pass is a CompileError
    naming the pass. Runs on a deep stack (`allotment.limits`): xDSL's walks, clones and
    verifiers recurse once per nested region."""
    return call_with_deep_stack(lambda: _run(module, passes))


def _run(module: ModuleOp, passes: list[ModulePass] | None) -> ModuleOp:
    result = clone_located(module)
    for p in compile_passes() if passes is None else passes:
        applies_to = getattr(p, "applies_to", None)
        if applies_to is not None and not applies_to(result):
            continue  # a pass with nothing to do here (sharding passes on unsharded fusions)
        try:
            p.apply(Context(), result)
        except Error:
            raise
        except DiagnosticException as e:
            raise CompileError(f"pass {p.name}: {e}") from None
        try:
            verify_located(result)
        except Error as e:
            raise CompileError(f"pass {p.name} produced invalid IR: {e}") from None
    return result
