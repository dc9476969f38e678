"""Reductions split across CTAs: which kernels, how many splits, and their partials buffers.

`fusion-allocate` asks `split_plan(segment)` for every reduction segment. A
segment qualifies when a row-at-a-time schedule would read memory badly or
leave the GPU idle, and two stages do better (Inductor's split reductions and
`ReductionHint.OUTER`, nvFuser's outer reduction scheduler):

- its reductions keep the innermost domain dim (an outer or middle-axis
  reduction: `sum(x, dim=0)` of an [M, N] tensor, a mean over the middle axis
  of [A, R, B]), or reduce every dim (a full reduction to a scalar), or reduce
  the innermost dim and keep another (an inner split, below);
- every reduction is a sum, mean, prod, max or min of floats (an inner split
  also takes var_mean and welford, all over the same dims), none reads
  another's result, and every output is computed from the reduced values (a
  `reduction` segment whose outputs are all on the reduced domain) or, but for
  an inner split, is a value of the reductions' whole input domain computed
  without them (dx beside its bias gradient `sum(dx, 0)`): the first stage
  stores those from the tiles it streams (with one split the looped kernel
  stores them in a second pass over the reduced axis);
- no tensor is sharded.

For such a kernel `fusion-allocate` declares, per reduction, a global
`alloc.alloc(%split, %kept)` of partial results in the accumulation type (f32
for 16-bit floats), passed as an extra `in` of the `alloc.kernel` and listed
in its `partials` attribute (in-indices, in the order of the body's
reductions); the kernel is `schedule(looped)` (it streams the reduced axis
and holds no row on chip). `%split` is computed at entry from the fusion's
own extents by `split_count`, so the memory planner sees the buffer and
`plan_sizes` reports it.

The backend (`backend/kernels/split_reduction.py`) then launches, when
`%split` > 1, a first kernel over (kept tiles x splits), each program
reducing its split's share of the reduced axis for a tile of kept indices that
are contiguous in memory (coalesced loads), writing one partial per kept index;
and a second kernel that combines the `%split` partials of each kept index in
order (deterministic: no atomics), finishes the reduction (a mean divides by
the full reduced extent) and computes the outputs. With `%split` = 1 one
kernel does both.

Inner splits. A segment whose reductions reduce the innermost dim but keep
some dim (a row reduction, or BatchNorm statistics `var_mean(x, dims [0, 2])`
of [N, C, L]) runs one program per kept row; with few kept rows and long ones
that leaves the GPU idle. Such a segment also qualifies (same conditions, and
var_mean and welford are splittable too), with its own count
(`inner_split_count`): 1 when there are at least `INNER_SPLIT_MAX_KEPT` kept
rows (enough programs already) or fewer than 2 * `INNER_SPLIT_MIN_REDUCED`
reduced elements, else enough splits for `SPLIT_TARGET_PROGRAMS` programs of
one kept row each (`host_runtime.inner_split_blocks`), each split at least
`INNER_SPLIT_MIN_REDUCED` elements. Where that count is the constant 1 (static
extents) the segment is not split at all. Unlike a column split, an inner
split keeps its row buffers and leaves the schedule to `alloc-place`: with
`%split` = 1 the launcher runs exactly the row kernel (persistent or looped)
an unsplit segment gets, and the partials are [1, 0] (`partials_kept`: unused,
they take no memory). A var_mean (or welford) gets two partials buffers, the
sum and the sum of squared deviations about the chunk's mean (M2) of each
(kept row, split), named after its mean (avg) and its var (var_sum) results;
the second stage merges them in split order with Chan's formula. Split s of an
inner split covers reduced indices [s * chunk, min((s + 1) * chunk, N)) with
chunk = ceildiv(ceildiv(N, split), `INNER_SPLIT_ALIGN`) * `INNER_SPLIT_ALIGN`
(both stages compute the same chunk, so the count of a chunk is never stored;
the last chunks may be short or empty). The knobs are functions
(`inner_split_min_reduced`, `inner_split_max_kept`, `inner_split_align`) that
read ALLOT_INNER_SPLIT_* at compile time. Measured on an H200 (untuned): the
BatchNorm statistics of 23x97x5003 bf16 in 33 us (64.5 unsplit, torch.compile
39), a sum and var_mean of 4 rows of 4 Mi bf16 in 25 us (1397 unsplit).
"""

from __future__ import annotations

import os

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, TensorType
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from allotment.analysis.capacity import env_int
from allotment.dialects import fusion
from allotment.extents import symbolic as sym
from allotment.extents.symbolic import Const, Extent

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


INNER_SPLIT_ENV = ("ALLOT_INNER_SPLIT_MIN_REDUCED", "ALLOT_INNER_SPLIT_MAX_KEPT", "ALLOT_INNER_SPLIT_ALIGN")
"""The environment knobs of inner splits (the program cache key includes them)."""


def inner_split_min_reduced() -> int:
    """`INNER_SPLIT_MIN_REDUCED`: at least this many reduced elements per split of an inner
    split (4096: a first-stage program of 1 x 2048..4096 blocks then loops at least once or
    twice; Inductor splits no row of 8192 or fewer). ALLOT_INNER_SPLIT_MIN_REDUCED overrides it."""
    return env_int("ALLOT_INNER_SPLIT_MIN_REDUCED", 4096, minimum=1)


def inner_split_max_kept() -> int:
    """`INNER_SPLIT_MAX_KEPT`: from this many kept rows on, an inner split has one split (264:
    two row programs per SM of an H200; Inductor's `inner_reduction_splits` stops splitting at
    2 * SMs outputs too). ALLOT_INNER_SPLIT_MAX_KEPT overrides it."""
    return env_int("ALLOT_INNER_SPLIT_MAX_KEPT", 264, minimum=1)


def inner_split_align() -> int:
    """`INNER_SPLIT_ALIGN`: an inner split's chunk of the reduced axis is a multiple of this
    many elements (64: every split but the first starts on a 128-byte line of bf16 where the
    row does). ALLOT_INNER_SPLIT_ALIGN overrides it (1: chunks of any length, for tests)."""
    return env_int("ALLOT_INNER_SPLIT_ALIGN", 64, minimum=1)


_SPLITTABLE = (fusion.SumOp, fusion.MeanOp, fusion.ProdOp, fusion.MaxOp, fusion.MinOp)
_INNER_SPLITTABLE = (*_SPLITTABLE, fusion.VarMeanOp, fusion.WelfordOp)
_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)


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
    if not reductions:
        return None
    rank = len(reductions[0].operands[0].type.get_shape())
    dims = reductions[0].reduced_dims()
    if rank == 0 or not dims:
        return None
    if is_inner(rank, dims):
        if not all(isinstance(r, _INNER_SPLITTABLE) and r.reduced_dims() == dims for r in reductions):
            return None
    elif not all(isinstance(r, _SPLITTABLE) for r in reductions):
        return None
    inner = is_inner(rank, dims)
    domain = reductions[0].operands[0].type
    reduced: set[SSAValue] = set()
    for op in block.ops:
        if isinstance(op, fusion.YieldOp):
            if not all(v in reduced or (not inner and _on_domain(v, domain)) for v in op.values):
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
        out.append((r, r.accumulation_type()))
    return out


def unreduced_outputs(block: Block) -> set[int]:
    """The positions, among the values a split kernel's body yields, of those computed
    without any reduction's result: the outputs of the whole domain that its first stage
    stores (`split_plan` admits no others beside the reduced ones)."""
    reduced: set[SSAValue] = set()
    for op in block.ops:
        if isinstance(op, fusion.ReductionOp | fusion.VarMeanOp | fusion.WelfordOp) or any(x in reduced for x in op.operands):
            reduced.update(op.results)
    return {k for k, v in enumerate(block.last_op.operands) if v not in reduced} if block.last_op else set()


def _on_domain(v: SSAValue, domain: Attribute) -> bool:
    """Whether `v` (not computed from a reduced value) is a tensor of the reductions' whole
    input domain: an output the first stage of a column, middle or full split writes as
    it streams its share of the reduced axis."""
    return isinstance(v, OpResult) and isinstance(v.type, TensorType) and isinstance(domain, TensorType) and \
        v.type.get_shape() == domain.get_shape()


def is_inner(rank: int, dims: list[int]) -> bool:
    """Whether reducing `dims` of a rank-`rank` tensor is an inner split's case: the
    innermost dim is reduced and some dim is kept (see the module docstring)."""
    return rank - 1 in dims and len(dims) != rank


def is_inner_reduction(r: Operation) -> bool:
    """`is_inner` for reduction `r` (of a segment that `split_plan` accepted)."""
    return is_inner(len(r.operands[0].type.get_shape()), r.reduced_dims())


def partials_results(r: Operation) -> list[SSAValue]:
    """The results whose names the partials buffers of reduction `r` take, one per buffer in
    order: a var_mean's sum and M2 partials are named after its mean and its var, a
    welford's after its avg and its var_sum; any other reduction has one, its result."""
    if isinstance(r, fusion.VarMeanOp):
        return [r.results[1], r.results[0]]
    if isinstance(r, fusion.WelfordOp):
        return [r.avg, r.var_sum]
    return [r.results[0]]


def count_for(r: Operation, reduced: Extent, kept: Extent) -> Extent:
    """The split count of a split segment whose reductions are like `r`: `inner_split_count`
    for an inner split, else `split_count`."""
    return inner_split_count(reduced, kept) if is_inner_reduction(r) else split_count(reduced, kept)


def partials_kept(r: Operation, count: Extent, kept: Extent) -> Extent:
    """The second extent of the partials buffers [count, _] of a split segment whose
    reductions are like `r`: `kept`, but 0 when the count is 1 at run time (one kernel runs
    alone and never touches them), so that unused partials take no memory (a sum over the
    16 rows of [16, 1024, 4096] planned 16 MiB of partials it never wrote)."""
    del r  # the same rule for column, full and inner splits
    return sym.mul(kept, sym.minimum(sym.sub(count, Const(1)), Const(1)))


def inner_split_count(reduced: Extent, kept: Extent) -> Extent:
    """How many splits an inner split's reduced axis gets: 1 with at least
    `inner_split_max_kept()` kept rows; otherwise enough for `SPLIT_TARGET_PROGRAMS`
    first-stage programs of one kept row each, at most one per `inner_split_min_reduced()`
    reduced elements (so 1 below twice that), and at least 1. The constant 1 where a
    static extent decides it (the segment is then not split at all)."""
    if isinstance(reduced, Const) and reduced.value < 2 * inner_split_min_reduced():
        return Const(1)
    if isinstance(kept, Const) and kept.value >= inner_split_max_kept():
        return Const(1)
    few = sym.minimum(Const(1), sym.maximum(Const(0), sym.sub(Const(inner_split_max_kept()), kept)))
    by_programs = sym.ceildiv(Const(SPLIT_TARGET_PROGRAMS), sym.maximum(kept, Const(1)))
    by_work = sym.floordiv(reduced, Const(inner_split_min_reduced()))
    return sym.maximum(sym.mul(few, sym.minimum(by_work, by_programs)), Const(1))


def split_count(reduced: Extent, kept: Extent) -> Extent:
    """How many splits the reduced axis gets: the programs closest to eight per SM
    (`SPLIT_TARGET_PROGRAMS` over the kept tiles, rounded to nearest), at least
    `SPLIT_MIN_REDUCED` reduced indices each, and at least 1. Rounded up, 1024 kept tiles
    (a mean over the middle axis of [16, 1024, 4096]) got two splits, 2048 programs and a
    second stage: 52.5 us on an H200, where one split (1024 programs, one kernel) takes 45."""
    kept_tiles = sym.maximum(sym.ceildiv(kept, Const(SPLIT_KEPT_TILE)), Const(1))
    by_programs = sym.floordiv(sym.add(Const(2 * SPLIT_TARGET_PROGRAMS), kept_tiles), sym.mul(Const(2), kept_tiles))
    by_work = sym.ceildiv(reduced, Const(SPLIT_MIN_REDUCED))
    return sym.maximum(sym.minimum(by_work, by_programs), Const(1))
