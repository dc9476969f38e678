"""Arena packing (`alloc.pack`, `analysis/packing.py`, alloc-plan's arena): the packer
never overlaps live slots, the verifier proves plans and catches broken ones, and
packed programs compute what torch computes with freed bytes poisoned."""

from __future__ import annotations

import random

import pytest
import torch
from arena_pipeline import always_pack  # noqa: F401 (the fixture the tests use by name)
from backend_check import check

import allotment
from allotment.analysis import packing

CHAIN = """
func.func @chain(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %a = fusion.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %b = fusion.tanh %a : tensor<?x64xf32>
  %c = fusion.matmul %b, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %d = fusion.exp %c : tensor<?x64xf32>
  %s = fusion.sum %d dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %n = fusion.div %d, %s : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %e = fusion.matmul %n, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %e : tensor<?x64xf32>
}
"""


def test_packing_never_overlaps_live_slots() -> None:
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 24)
        lifetimes = []
        for _ in range(n):
            a = rng.randint(0, 30)
            lifetimes.append((a, a + rng.randint(0, 8)))
        sizes = [rng.choice([0, 1, 7, 256, 1000, 4096, rng.randint(1, 10**6)]) for _ in range(n)]
        total, offsets = packing.pack(sizes, lifetimes, 256)
        assert not packing.overlapping_slots(sizes, offsets, lifetimes)
        assert all(o % 256 == 0 for o in offsets)
        assert all(o + s <= total for o, s in zip(offsets, sizes))
        # never below the most bytes live at one step
        live = max(sum(s for s, (a, b) in zip(sizes, lifetimes) if a <= t <= b) for t in range(40))
        assert total >= live


def test_packing_a_chain_reaches_the_lower_bound() -> None:
    sizes = [4096, 8192, 4096, 8192, 4096]
    lifetimes = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    total, _ = packing.pack(sizes, lifetimes, 256)
    assert total == 8192 + 4096


def test_overlap_detection_finds_a_broken_packing() -> None:
    assert packing.overlapping_slots([256, 256], [0, 128], [(0, 1), (1, 2)]) == [(0, 1)]
    assert packing.overlapping_slots([256, 256], [0, 128], [(0, 1), (2, 3)]) == []


@pytest.mark.usefixtures("always_pack")
@pytest.mark.parametrize("rows", [1, 5])
def test_an_arena_program_matches_torch_with_poison(rows: int) -> None:
    exe = allotment.compile(CHAIN)
    source = exe.source("cpu")
    assert "rt.pack(" in source and "rt.slot(arena_" in source and "rt.poison(" in source
    torch.manual_seed(rows)
    check(CHAIN, torch.randn(rows, 64), torch.randn(64, 64) / 8)


@pytest.mark.usefixtures("always_pack")
def test_memory_plan_checks_and_reports_the_arena() -> None:
    plan = allotment.memory_plan(CHAIN, {"x": (8, 64)})
    kinds = {b.name: b.memory for b in plan.buffers}
    assert kinds["arena"] == "global (arena)"
    assert kinds["a"].startswith("arena slot @ offset #")
    assert plan.lower_bound <= plan.planned_peak


def test_memory_plan_in_allocator_blocks() -> None:
    exact = allotment.memory_plan(CHAIN, {"x": (3, 64)})
    blocks = allotment.memory_plan(CHAIN, {"x": (3, 64)}, block_bytes=512)
    assert blocks.planned_peak % 512 == 0 and blocks.lower_bound % 512 == 0
    assert exact.planned_peak <= blocks.planned_peak < exact.planned_peak + 512 * len(blocks.buffers)
    with pytest.raises(allotment.ArgumentError, match="block_bytes"):
        allotment.memory_plan(CHAIN, {"x": (3, 64)}, block_bytes=0)
