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


def in_order(sizes: Sequence[Extent], order: Sequence[int]) -> Layout:
    """A new buffer laid out densely in `order` (its dims outermost first): each dim's stride
    the product of the sizes of the dims inner to it in that order."""
    strides: list[Extent] = [Const(1)] * len(sizes)
    acc: Extent = Const(1)
    for d in reversed(order):
        strides[d] = acc
        acc = sym.mul(acc, sizes[d])
    return Layout(tuple(sizes), tuple(strides), Const(0), list(order) == list(range(len(sizes))))


def is_row_major(sizes: Sequence[Extent], strides: Sequence[Extent]) -> bool:
    """Whether `strides` are the row-major strides of `sizes` (dims of size 1 take any)."""
    expected = row_major(sizes).strides
    return all(s == e or size == Const(1) for size, s, e in zip(sizes, strides, expected))
