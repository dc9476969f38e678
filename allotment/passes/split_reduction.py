"""Reductions split across CTAs: which kernels, how many splits, and their partials buffers.

`fusion-allocate` asks `split_plan(segment)` for every reduction segment. A
segment qualifies when a row-at-a-time schedule would read memory badly or
leave the GPU idle, and two stages do better (Inductor's split reductions and
`ReductionHint.OUTER`, nvFuser's outer reduction scheduler):

- its reductions keep the innermost domain dim (an outer or middle-axis
  reduction: `sum(x, dim=0)` of an [M, N] tensor, a mean over the middle axis
  of [A, R, B]), or reduce every dim (a full reduction to a scalar);
- every reduction is a sum, mean, prod, max or min of floats, none reads
  another's result, and every output is computed from the reduced values (a
  `reduction` segment whose outputs are all on the reduced domain);
- no tensor is sharded.

For such a kernel `fusion-allocate` declares, per reduction, a global
`alloc.alloc(%split, %kept)` of partial results in the accumulation type (f32
for 16-bit floats), passed as an extra `in` of the `alloc.kernel` and listed
in its `partials` attribute (in-indices, in the order of the body's
reductions); the kernel is `schedule(looped)` (it streams the reduced axis
and holds no row on chip). `%split` is computed at entry from the fusion's
own extents by `split_count`, so the memory planner sees the buffer and
`plan_sizes` reports it.

The backend (`triton_codegen`, `host_codegen._launcher`) then launches, when
`%split` > 1, a first kernel over (kept tiles x splits), each program
reducing its split's share of the reduced axis for a tile of kept indices that
are contiguous in memory (coalesced loads), writing one partial per kept index;
and a second kernel that combines the `%split` partials of each kept index in
order (deterministic: no atomics), finishes the reduction (a mean divides by
the full reduced extent) and computes the outputs. With `%split` = 1 one
kernel does both.
"""

from __future__ import annotations

import os

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.analysis import symbolic as sym
from allotment.analysis.symbolic import Const, Extent
from allotment.dialects import fusion

SPLIT_TARGET_PROGRAMS = int(os.environ.get("ALLOT_SPLIT_PROGRAMS", "1056"))
"""Programs the first stage aims for: eight per SM of an H200 (132 SMs). Measured
(`benchmarks/split_sweep.sh`): a full sum of 16384x4096 bf16 at 3.4 TB/s with 1056
programs, 2.0 with 264; column sums gain 10 to 25%."""
SPLIT_KEPT_TILE = 64
"""Kept indices per program of the first stage at large kept extents: the BLOCK_M of
`host_runtime.outer_blocks`, so that `SPLIT_TARGET_PROGRAMS` counts the programs launched.
(It was 128 against 64-wide blocks, which launched twice the target: a 32768x4096 column sum
ran 2112 programs of 55 registers, 1.8 waves at 49% occupancy by Nsight Compute, where
torch.compile's one wave moved 89% of DRAM bandwidth.)"""
SPLIT_MIN_REDUCED = 256
"""At least this many reduced indices per split: fewer would spend more on partials than they save."""

_SPLITTABLE = (fusion.SumOp, fusion.MeanOp, fusion.ProdOp, fusion.MaxOp, fusion.MinOp)
_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)


def _acc(t: Attribute) -> Attribute:
    return f32 if isinstance(t, Float16Type | BFloat16Type) else t


def reduced_dims(op: Operation) -> list[int]:
    rank = len(op.operands[0].type.get_shape())
    return sorted({d + rank if d < 0 else d for d in op.dims.get_values()})


def split_plan(seg: fusion.SegmentOp) -> list[tuple[Operation, Attribute]] | None:
    """The reductions of a segment to split across CTAs, with each one's partials element
    type (the accumulation type of the kernel's generated code), or None (see the module
    docstring for when)."""
    if seg.kind.data != "reduction":
        return None
    block = seg.body.block
    values = [*block.args, *(r for op in block.ops for r in op.results)]
    if any(isinstance(v.type, TensorType) and isinstance(v.type.encoding, fusion.ShardingAttr) for v in values):
        return None
    reductions = [op for op in block.ops if isinstance(op, fusion.ReductionOp | fusion.VarMeanOp | fusion.WelfordOp)]
    if not reductions or not all(isinstance(r, _SPLITTABLE) for r in reductions):
        return None
    rank = len(reductions[0].operands[0].type.get_shape())
    dims = reduced_dims(reductions[0])
    if rank == 0 or not dims or (rank - 1 in dims and len(dims) != rank):
        return None
    reduced: set[SSAValue] = set()
    for op in block.ops:
        if isinstance(op, fusion.YieldOp):
            if not all(v in reduced for v in op.values):
                return None
        elif op in reductions:
            if any(x in reduced for x in op.operands):
                return None  # reads another reduction's result: two levels
            reduced.update(op.results)
        elif any(x in reduced for x in op.operands):
            reduced.update(op.results)
    out = []
    for r in reductions:
        src = r.operands[0].type.element_type
        res = r.results[0].type.element_type
        if not isinstance(src, _FLOATS) or not isinstance(res, _FLOATS):
            return None
        out.append((r, _acc(src if isinstance(r, fusion.MaxOp | fusion.MinOp) else res)))
    return out


def split_count(reduced: Extent, kept: Extent) -> Extent:
    """How many splits the reduced axis gets: enough programs for eight per SM
    (`SPLIT_TARGET_PROGRAMS` over the kept tiles), at least `SPLIT_MIN_REDUCED`
    reduced indices each, and at least 1."""
    kept_tiles = sym.maximum(sym.ceildiv(kept, Const(SPLIT_KEPT_TILE)), Const(1))
    by_programs = sym.ceildiv(Const(SPLIT_TARGET_PROGRAMS), kept_tiles)
    by_work = sym.ceildiv(reduced, Const(SPLIT_MIN_REDUCED))
    return sym.maximum(sym.minimum(by_work, by_programs), Const(1))
