"""Allotment's dialects and passes, published to xDSL through the `xdsl.universe`
entry point: the stock `xdsl-opt` and our `allot-opt` both load them from here."""

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe

from allotment.dialects import ALL_DIALECTS


def _fusion_segment() -> type[ModulePass]:
    from allotment.passes.fusion_segment import FusionSegmentPass

    return FusionSegmentPass


def _fusion_expose() -> type[ModulePass]:
    from allotment.passes.fusion_expose import FusionExposePass

    return FusionExposePass


def _fusion_sink_gather() -> type[ModulePass]:
    from allotment.passes.fusion_sink_gather import FusionSinkGatherPass

    return FusionSinkGatherPass


def _fusion_scatter_select() -> type[ModulePass]:
    from allotment.passes.fusion_scatter_select import FusionScatterSelectPass

    return FusionScatterSelectPass


def _fusion_allocate() -> type[ModulePass]:
    from allotment.passes.fusion_allocate import FusionAllocatePass

    return FusionAllocatePass


def _propagate_sharding() -> type[ModulePass]:
    from allotment.passes.sharding_propagation import PropagateShardingPass

    return PropagateShardingPass


def _insert_resharding() -> type[ModulePass]:
    from allotment.passes.insert_resharding import InsertReshardingPass

    return InsertReshardingPass


def _alloc_evaluate() -> type[ModulePass]:
    from allotment.passes.alloc_evaluate import AllocEvaluatePass

    return AllocEvaluatePass


def _alloc_alias() -> type[ModulePass]:
    from allotment.passes.alloc_alias import AllocAliasPass

    return AllocAliasPass


def _alloc_plan() -> type[ModulePass]:
    from allotment.passes.alloc_plan import AllocPlanPass

    return AllocPlanPass


def _alloc_place() -> type[ModulePass]:
    from allotment.passes.alloc_place import AllocPlacePass

    return AllocPlacePass


def _alloc_verify() -> type[ModulePass]:
    from allotment.passes.alloc_verify import AllocVerifyPass

    return AllocVerifyPass


def _kernel_index_ranges() -> type[ModulePass]:
    from allotment.passes.kernel_index_ranges import KernelIndexRangesPass

    return KernelIndexRangesPass


def _index_checks() -> type[ModulePass]:
    from allotment.passes.index_checks import IndexChecksPass

    return IndexChecksPass


def _alloc_to_mlir() -> type[ModulePass]:
    from allotment.passes.alloc_to_mlir import AllocToMLIRPass

    return AllocToMLIRPass


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "alloc-to-mlir": _alloc_to_mlir,
    "alloc-alias": _alloc_alias,
    "alloc-evaluate": _alloc_evaluate,
    "alloc-place": _alloc_place,
    "alloc-plan": _alloc_plan,
    "alloc-verify": _alloc_verify,
    "fusion-segment": _fusion_segment,
    "fusion-expose": _fusion_expose,
    "fusion-sink-gather": _fusion_sink_gather,
    "fusion-scatter-select": _fusion_scatter_select,
    "fusion-allocate": _fusion_allocate,
    "fusion-index-checks": _index_checks,
    "kernel-index-ranges": _kernel_index_ranges,
    "fusion-propagate-sharding": _propagate_sharding,
    "fusion-insert-resharding": _insert_resharding,
}
"""Our passes by pipeline name, loaded lazily."""

def _python_target() -> type:
    from allotment.backend.python_target import PythonTarget

    return PythonTarget


ALL_TARGETS: dict[str, Callable[[], type]] = {"python": _python_target}
"""Our output targets (`allot-opt -t NAME`)."""

ALLOTMENT_UNIVERSE = Universe(all_dialects=ALL_DIALECTS, all_passes=ALL_PASSES, all_targets=ALL_TARGETS)
