"""alloc-plan and alloc-verify: memory-aware orders keep every dependence, frees are
placed after the last use, and the memory profile's figures.

Property tests run random fusions (tests/random_fusion.py) through
fusion-segment, fusion-allocate and alloc-plan, then check the planned program
with an independent simulation: every kernel reads only buffers already
written (or arguments), no buffer is touched after its dealloc, the ops are
the same ones, and the estimated peak never exceeds program order's.
"""

from __future__ import annotations

import os
import random

import pytest
from random_fusion import random_fusion
from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp

from allotment.analysis import packing
from allotment.analysis.liveness import view_root
from allotment.analysis.memory_profile import memory_profile
from allotment.analysis.schedule import buffer_bytes, hint_index_values
from allotment.dialects import alloc
from allotment.errors import VerifyError
from allotment.ir import parse_module
from allotment.passes.alloc_alias import AllocAliasPass
from allotment.passes.alloc_place import AllocPlacePass
from allotment.passes.alloc_plan import AllocPlanPass
from allotment.passes.alloc_verify import AllocVerifyPass, plan_violations
from allotment.passes.fusion_allocate import FusionAllocatePass
from allotment.passes.fusion_segment import FusionSegmentPass

BAD_ORDER = """
func.func @bad_order(%x: tensor<?x?xbf16>, %wa: tensor<?x?xbf16>, %wb: tensor<?x?xbf16>, %wc: tensor<?x?xbf16>) -> tensor<?xf32> {
  %a = fusion.linear %x, %wa : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %b = fusion.linear %x, %wb : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %c = fusion.linear %x, %wc : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %af = fusion.cast %a : tensor<?x?xbf16> to tensor<?x?xf32>
  %bf = fusion.cast %b : tensor<?x?xbf16> to tensor<?x?xf32>
  %cf = fusion.cast %c : tensor<?x?xbf16> to tensor<?x?xf32>
  %ra = fusion.sum %af dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %rb = fusion.sum %bf dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %rc = fusion.sum %cf dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %s = fusion.add %ra, %rb : tensor<?xf32>
  %y = fusion.add %s, %rc : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""


def allocated(text: str, *, plan: bool, reorder: bool = True, arena_always: bool = False) -> ModuleOp:
    """The fusion after fusion-segment, fusion-allocate, alloc-place and alloc-alias (concat
    in place), then alloc-plan if `plan`."""
    module = parse_module(text)
    passes = [FusionSegmentPass(), FusionAllocatePass(), AllocPlacePass(), AllocAliasPass()]
    if plan:
        passes.append(AllocPlanPass(reorder=reorder, arena_always=arena_always))
    for p in passes:
        p.apply(Context(), module)
    module.verify()
    return module


def the_function(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def op_signature(f: func.FuncOp) -> list[str]:
    """The top-level kernels, checks and views as comparable strings: what a plan may
    reorder but never add or drop (buffers may merge through in-place reuse, and frees are added)."""
    return sorted(
        f"{op.name}:{op.sym_name.data if isinstance(op, alloc.KernelOp) else ''}"
        for op in f.body.block.ops
        if isinstance(op, alloc.KernelOp | alloc.CheckOp | memref.ReinterpretCastOp)
    )


def simulate(f: func.FuncOp) -> None:
    """Runs the plan abstractly: kernels read only written buffers; nothing is used once freed."""
    written = {a for a in f.body.block.args}
    freed = set()
    for op in f.body.block.ops:
        roots = [view_root(v) for v in op.operands]
        assert not (set(roots) & freed), f"{op.name} touches a freed buffer"
        if isinstance(op, alloc.KernelOp):
            # a reduction split across CTAs (or an inner-outer kernel's column reductions) writes
            # its partials buffer before reading it
            scratch = {op.ins[i] for key in ("partials", "column_partials") if key in op.attributes
                       for i in op.attributes[key].get_values()}
            for v in op.ins:
                root = view_root(v)
                if v in scratch:
                    continue
                if root.type.__class__.__name__ == "MemRefType":
                    assert root in written, f"kernel {op.sym_name.data} reads %{root.name_hint} before it is written"
            written |= {view_root(v) for v in op.outs}
        if isinstance(op, alloc.DeallocOp):
            freed.add(op.buffer)
        if isinstance(op, func.ReturnOp):
            for v in op.arguments:
                assert view_root(v) in written, "returns a buffer no kernel wrote"


def peak_at_hint(f: func.FuncOp, hint: int = 4096) -> int:
    values = hint_index_values(f, hint)
    nbytes = {op: buffer_bytes(op, values, hint) for op in f.body.block.ops if isinstance(op, alloc.AllocOp | memref.ViewOp)}
    return memory_profile(f, nbytes).lower_bound


EXAMPLES = int(os.environ.get("ALLOT_PLAN_EXAMPLES", "300"))


@pytest.mark.parametrize("seed", range(EXAMPLES))
def test_random_plans_keep_dependences(seed: int) -> None:
    text, _, _ = random_fusion(random.Random(seed), max_ops=16)
    before = the_function(allocated(text, plan=False))
    after = the_function(allocated(text, plan=True))
    assert op_signature(after) == op_signature(before)
    simulate(after)
    assert plan_violations(after) == []
    assert peak_at_hint(after) <= peak_at_hint(before)


@pytest.mark.parametrize("seed", range(EXAMPLES // 3))
def test_random_arena_plans_are_proven(seed: int) -> None:
    """Every transient packed into an arena: the plan keeps every dependence, the verifier
    proves it, the lower bound is unchanged, and the arena at the hint never overlaps
    two live slots."""
    text, _, _ = random_fusion(random.Random(seed), max_ops=16)
    before = the_function(allocated(text, plan=True))
    after = the_function(allocated(text, plan=True, arena_always=True))
    assert op_signature(after) == op_signature(before)
    simulate(after)
    assert plan_violations(after) == []
    assert peak_at_hint(after) == peak_at_hint(before)
    values = hint_index_values(after, 64)
    for pack in (op for op in after.body.block.ops if isinstance(op, alloc.PackOp)):
        sizes = [values[v] for v in pack.sizes]
        offsets = [values[v] for v in pack.offsets]
        assert not packing.overlapping_slots(sizes, offsets, pack.lifetime_pairs())


def test_bad_order_is_reordered_to_a_third_of_the_peak() -> None:
    program = the_function(allocated(BAD_ORDER, plan=True, reorder=False))
    planned = the_function(allocated(BAD_ORDER, plan=True))
    assert planned.attributes["alloc.schedule"].data != "program"
    kernels = [op.sym_name.data for op in planned.body.block.ops if isinstance(op, alloc.KernelOp)]
    # each projection is reduced before the next one is made
    assert kernels.index("k3") == kernels.index("k0") + 1
    assert kernels.index("k4") == kernels.index("k2") + 1
    projection = 4096 * 4096 * 2
    assert peak_at_hint(program) >= 3 * projection
    assert projection <= peak_at_hint(planned) < 2 * projection


def test_memory_profile_figures() -> None:
    f = the_function(allocated(BAD_ORDER, plan=True))
    values = hint_index_values(f, 64)
    nbytes = {op: buffer_bytes(op, values, 64) for op in f.body.block.ops if isinstance(op, alloc.AllocOp)}
    profile = memory_profile(f, nbytes)
    by_name = {b.name: b for b in profile.buffers}
    assert by_name["a"].nbytes == 64 * 64 * 2 and by_name["a"].size == "x.shape[0] * wa.shape[0] * 2 B"
    assert by_name["y"].returned and by_name["y"].freed is None
    assert all(b.freed is not None for b in profile.buffers if not b.returned and b.holds_memory)
    # one projection and three row vectors at most, all six buffers without freeing
    assert profile.lower_bound == profile.planned_peak == 64 * 64 * 2 + 3 * 64 * 4
    assert profile.without_reuse == 3 * 64 * 64 * 2 + 3 * 64 * 4
    assert profile.summary() == (
        f"planned peak: {profile.planned_peak} bytes, lower bound: {profile.lower_bound} bytes, "
        f"without reuse: {profile.without_reuse} bytes"
    )


def test_verify_catches_a_broken_plan() -> None:
    module = allocated(BAD_ORDER, plan=True)
    f = the_function(module)
    AllocVerifyPass().apply(Context(), module)  # the plan as made is valid
    dealloc = next(op for op in f.body.block.ops if isinstance(op, alloc.DeallocOp))
    first_kernel = next(op for op in f.body.block.ops if isinstance(op, alloc.KernelOp))
    dealloc.detach()
    f.body.block.insert_op_before(dealloc, first_kernel)  # free before its writer runs
    with pytest.raises(VerifyError, match="after it was freed"):
        AllocVerifyPass().apply(Context(), module)


def test_plan_is_idempotent() -> None:
    module = allocated(BAD_ORDER, plan=True)
    once = str(module)
    AllocPlanPass().apply(Context(), module)
    assert str(module) == once


ONE_WRITER_CAT = """
func.func @cat(%x: tensor<?x?x3xf16>) -> tensor<?x?xf16> {
  %a = fusion.sum %x dims [2] : tensor<?x?x3xf16> -> tensor<?x?xf16>
  %b = fusion.max %x dims [2] : tensor<?x?x3xf16> -> tensor<?x?xf16>
  %c = fusion.cat %a, %b dim 0 : tensor<?x?xf16>, tensor<?x?xf16> -> tensor<?x?xf16>
  func.return %c : tensor<?x?xf16>
}
"""
"""(Reductions: pointwise operands would be recomputed inside the cat's own kernel.)"""


def test_one_kernel_writing_two_slices_of_one_buffer() -> None:
    """A kernel that writes two views of the cat buffer depends on no one, itself included."""
    f = the_function(allocated(ONE_WRITER_CAT, plan=True))
    kernels = [op for op in f.body.block.ops if isinstance(op, alloc.KernelOp)]
    assert len(kernels) == 1 and len(kernels[0].outs) == 2
    simulate(f)
