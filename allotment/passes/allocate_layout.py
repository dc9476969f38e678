"""Where a tensor's elements are in its buffer (`fusion-allocate`): sizes, strides and
offset in elements, in the fusion's symbolic extents, and whether the elements are
contiguous row-major. A new buffer is row-major; a view's layout is derived from its
source's (`allocate_views`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from allotment.extents import symbolic as sym
from allotment.extents.symbolic import Const, Extent


@dataclass(frozen=True)
class Layout:
    """Where a tensor's elements are in its buffer, in elements."""

    sizes: tuple[Extent, ...]
    strides: tuple[Extent, ...]
    offset: Extent
    contiguous: bool


def row_major(sizes: Sequence[Extent]) -> Layout:
    strides: list[Extent] = []
    acc: Extent = Const(1)
    for e in reversed(sizes):
        strides.append(acc)
        acc = sym.mul(acc, e)
    return Layout(tuple(sizes), tuple(reversed(strides)), Const(0), True)
