"""Packing buffers with known lifetimes into one arena: sizes and lifetimes in,
offsets out (the contract of IREE's `stream.resource.pack`).

`alloc.pack` declares the slots of an arena: for each, a lifetime interval
(the first and last step it is used at) and a byte size, an `index` value that
may be known only at run time. `pack(sizes, lifetimes, alignment)` computes the
offsets when the sizes are known: the host program calls it on every run (it is
cached per tuple of sizes), `plan_sizes`/`memory_plan` and `alloc-verify` call
the same function for concrete shapes, so what is verified is what runs.

The heuristic is greedy by size (the one TFLite's and Inductor's memory
planners start from): slots in decreasing size (ties by lifetime start, then
index), each placed at the lowest aligned offset where it overlaps no already
placed slot whose lifetime intersects its own. By construction no two slots
with intersecting lifetimes overlap in memory, whatever the sizes; the arena's
size is the highest end. On chains and trees of kernels it reaches the lower
bound (the most bytes live at one step); in general it is within a small
factor, and `memory_profile` reports both figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from allotment.errors import ArgumentError


def align_up(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def conflicts(lifetimes: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    """For each slot, the slots whose closed lifetime intervals intersect its own
    (a sweep over the starts: linear in the slots plus the conflicts)."""
    order = sorted(range(len(lifetimes)), key=lambda i: lifetimes[i][0])
    out: list[list[int]] = [[] for _ in lifetimes]
    active: list[int] = []
    for i in order:
        start = lifetimes[i][0]
        active = [j for j in active if lifetimes[j][1] >= start]
        for j in active:
            out[i].append(j)
            out[j].append(i)
        active.append(i)
    return tuple(tuple(sorted(c)) for c in out)


def pack(sizes: Sequence[int], lifetimes: Sequence[tuple[int, int]], alignment: int) -> tuple[int, tuple[int, ...]]:
    """(arena bytes, offset of each slot): see the module docstring.

    Raises `allotment.ArgumentError` (also a ValueError) for sizes that no arena can hold
    (a negative slot size: `alloc.pack`'s verifier refuses a negative constant, but a size
    computed at run time reaches here), a size count that is not the lifetime count, or an
    alignment that is not a positive power of two."""
    return _pack(tuple(sizes), tuple(lifetimes), alignment)


@lru_cache(maxsize=256)
def _pack(sizes: tuple[int, ...], lifetimes: tuple[tuple[int, int], ...], alignment: int) -> tuple[int, tuple[int, ...]]:
    if len(sizes) != len(lifetimes):
        raise ArgumentError(f"alloc.pack: {len(sizes)} slot sizes for {len(lifetimes)} lifetimes")
    if alignment <= 0 or alignment & (alignment - 1):
        raise ArgumentError(f"alloc.pack: alignment {alignment} is not a positive power of two")
    for k, s in enumerate(sizes):
        if s < 0:
            raise ArgumentError(f"alloc.pack: slot #{k} has the size {s}: a slot cannot have a negative size")
    neighbours = _conflicts(lifetimes)
    offsets = [-1] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], lifetimes[i][0], i)):
        taken = sorted((offsets[j], offsets[j] + sizes[j]) for j in neighbours[i] if offsets[j] >= 0)
        offset = 0
        for lo, hi in taken:
            if offset + sizes[i] <= lo:
                break
            offset = max(offset, align_up(hi, alignment))
        offsets[i] = offset
    total = max((o + s for o, s in zip(offsets, sizes)), default=0)
    return align_up(total, alignment), tuple(offsets)


@lru_cache(maxsize=64)
def _conflicts(lifetimes: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], ...]:
    return conflicts(lifetimes)


def overlapping_slots(
    sizes: Sequence[int], offsets: Sequence[int], lifetimes: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Pairs of slots (i < j) whose lifetimes intersect and whose bytes overlap: empty
    for a sound packing. Zero-byte slots overlap nothing."""
    bad = []
    for i, others in enumerate(conflicts(lifetimes)):
        for j in others:
            if j > i and sizes[i] and sizes[j]:
                if offsets[i] < offsets[j] + sizes[j] and offsets[j] < offsets[i] + sizes[i]:
                    bad.append((i, j))
    return bad
