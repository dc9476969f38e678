"""Arena slots never overlap at run time: the generated programs of packed fusions run (poison
mode, `alloc-plan{arena-always=true}`) at sizes other than the hint they were planned at, and a
watch on the host runtime (`rt.slot`, `rt.poison`, and every kernel launch and torch call)
records each slot's bytes when the program makes it, its life from the first kernel that
touches it to its poisoning, and checks at every launch that no two live slots share a byte
and every slot lies in its arena. Results match torch. A packer that overlaps two live slots
(planted here) is caught by the watch (before, a one-byte overlap passed every end-to-end
arena test: only a unit test of the packer saw it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from arena_pipeline import always_pack  # noqa: F401 (the fixture the tests use by name)
from backend_check import check

import allotment
from allotment.analysis import packing
from allotment.backend import host_runtime as rt

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

MIXED = """
func.func @mixed(%x: tensor<?x?xbf16>, %w: tensor<?x?xbf16>) -> (tensor<?x?xbf16>, tensor<?xf32>) {
  %h = fusion.matmul %x, %w : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %hf = fusion.cast %h : tensor<?x?xbf16> to tensor<?x?xf32>
  %t = fusion.tanh %hf : tensor<?x?xf32>
  %m = fusion.mean %t dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %g = fusion.cast %t : tensor<?x?xf32> to tensor<?x?xbf16>
  %y = fusion.matmul %g, %w : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  func.return %y, %m : tensor<?x?xbf16>, tensor<?xf32>
}
"""


class Overlap(AssertionError):
    pass


class SlotWatch:
    """The slots of one program call and their lives, checked at every kernel launch."""

    def __init__(self) -> None:
        self.slots: list[tuple[int, int, int, int]] = []  # (arena data_ptr, arena end, lo, hi) bytes
        self.live: set[int] = set()
        self.dead: set[int] = set()
        self.checks = 0

    def slot(self, arena: torch.Tensor, t: torch.Tensor) -> None:
        lo = t.data_ptr()
        base = arena.data_ptr()
        self.slots.append((base, base + arena.numel() * arena.element_size(), lo, lo + t.numel() * t.element_size()))

    def _touched(self, t: torch.Tensor) -> list[int]:
        if t.numel() == 0:
            return []
        lo = t.data_ptr()
        hi = lo + rt.element_span(t) * t.element_size()
        return [k for k, (_, _, a, b) in enumerate(self.slots) if a < hi and lo < b]

    def use(self, tensors: list[torch.Tensor]) -> None:
        for t in tensors:
            for k in self._touched(t):
                if k in self.dead:
                    raise Overlap(f"slot #{k} used after it was poisoned")
                self.live.add(k)
        live = sorted(self.live)
        for i in live:
            base, end, a, b = self.slots[i]
            if not (base <= a <= b <= end):
                raise Overlap(f"slot #{i} [{a - base}, {b - base}) lies outside its arena of {end - base} bytes")
            for j in live:
                _, _, c, d = self.slots[j]
                if i < j and a < b and c < d and a < d and c < b:
                    raise Overlap(f"live slots #{i} [{a - base}, {b - base}) and #{j} [{c - base}, {d - base}) overlap")
        self.checks += 1

    def poison(self, t: torch.Tensor) -> None:
        for k in self._touched(t):
            if t.data_ptr() == self.slots[k][2]:
                self.live.discard(k)
                self.dead.add(k)


@contextmanager
def watching(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SlotWatch]]:
    """Wraps the host runtime's slot, poison, launch and torch-call entries; each call of a
    program gets a fresh `SlotWatch` (a new one starts at the first slot after a return)."""
    watches: list[SlotWatch] = []
    real_slot, real_poison, real_launch = rt.slot, rt.poison, rt.launch
    real_matmul, real_linear = rt.matmul, rt.linear

    def current() -> SlotWatch:
        if not watches:
            watches.append(SlotWatch())
        return watches[-1]

    def tensors(values: Any) -> list[torch.Tensor]:
        out = []
        for v in values:
            if isinstance(v, torch.Tensor):
                out.append(v)
            elif isinstance(v, tuple | list):
                out += tensors(v)
        return out

    def slot(arena: torch.Tensor, *args: Any) -> torch.Tensor:
        t = real_slot(arena, *args)
        current().slot(arena, t)
        return t

    def poison(t: torch.Tensor) -> None:
        current().poison(t)
        real_poison(t)

    def launch(*args: Any, **kwargs: Any) -> Any:
        current().use(tensors(args))
        return real_launch(*args, **kwargs)

    def matmul(*args: Any) -> None:
        current().use(tensors(args))
        real_matmul(*args)

    def linear(*args: Any) -> None:
        current().use(tensors(args))
        real_linear(*args)

    for name, fn in (("slot", slot), ("poison", poison), ("launch", launch), ("matmul", matmul), ("linear", linear)):
        monkeypatch.setattr(rt, name, fn)
    yield watches


@pytest.mark.usefixtures("always_pack")
@pytest.mark.parametrize("rows", [1, 3, 37, 130])
def test_chain_slots_never_overlap_at_run_time(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    assert "rt.slot(" in allotment.compile(CHAIN).source("cpu")
    torch.manual_seed(rows)
    with watching(monkeypatch) as watches:
        check(CHAIN, torch.randn(rows, 64), torch.randn(64, 64) / 8)
    (watch,) = watches
    assert len(watch.slots) >= 2 and watch.checks >= 4 and watch.dead


@pytest.mark.usefixtures("always_pack")
@pytest.mark.parametrize(("rows", "k"), [(2, 8), (9, 24), (33, 16)])
def test_mixed_dtype_slots_never_overlap_at_run_time(monkeypatch: pytest.MonkeyPatch,
                                                     rows: int, k: int) -> None:
    torch.manual_seed(rows)
    with watching(monkeypatch) as watches:
        check(MIXED, torch.randn(rows, k).bfloat16(), (torch.randn(k, k) / 4).bfloat16())
    assert watches and len(watches[0].slots) >= 2


@pytest.mark.usefixtures("always_pack")
def test_a_packer_that_overlaps_live_slots_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch is not vacuous: a packer that moves a slot one alignment unit down, into its
    live neighbour, fails the run."""
    real = packing._pack

    def overlapping(sizes: tuple, lifetimes: tuple, alignment: int) -> tuple[int, tuple[int, ...]]:
        total, offsets = real.__wrapped__(sizes, lifetimes, alignment)
        k = max(range(len(offsets)), key=lambda i: offsets[i])
        moved = list(offsets)
        moved[k] = max(0, moved[k] - alignment)
        return total, tuple(moved)

    monkeypatch.setattr(packing, "_pack", overlapping)
    exe = allotment.compile(CHAIN)
    with watching(monkeypatch), pytest.raises(Overlap, match="overlap"):
        exe(torch.randn(3, 64), torch.randn(64, 64) / 8)
