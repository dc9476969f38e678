"""Dimension indices: the one home of "a negative index counts from the end".

`normalize_dim(d, rank)` is torch's rule for a dimension index given to an op
(`-1` is the last dimension), unchecked; `normalize_dims` checks a list of them
(each in range, none repeated) and raises `DimsError`, which the dialects turn
into a `VerifyException` and the frontend into an `ArgumentError`, each in its
own words. Everything that reads a `dims` or `dim` property of a fusion op goes
through these two functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class DimsError(ValueError):
    """A dimension index out of range for its tensor, or given twice.

    `entry` is the index as given (before normalizing), `rank` the tensor's rank,
    `repeated` whether the fault is a repeat (else the index is out of range)."""

    def __init__(self, entry: int, rank: int, repeated: bool) -> None:
        what = "is repeated" if repeated else f"is out of range for a tensor of rank {rank}"
        super().__init__(f"entry {entry} {what}")
        self.entry = entry
        self.rank = rank
        self.repeated = repeated


def normalize_dim(d: int, rank: int) -> int:
    """`d` counted from the front: a negative index counts from the end (`d + rank`).
    Not range-checked (`normalize_dims` checks)."""
    return d + rank if d < 0 else d


def normalize_dims(dims: Iterable[int], rank: int) -> list[int]:
    """Every index of `dims` counted from the front, in the order given; a `DimsError` for
    the first one out of range (`0 <= d + rank < rank` for a negative one) or repeated."""
    out: list[int] = []
    for d in dims:
        nd = normalize_dim(d, rank)
        if not 0 <= nd < rank:
            raise DimsError(d, rank, repeated=False)
        if nd in out:
            raise DimsError(d, rank, repeated=True)
        out.append(nd)
    return out


def dim_set(dims: Sequence[int], rank: int) -> list[int]:
    """The distinct indices of `dims` counted from the front, in increasing order (for the
    dims of a verified op: not range-checked)."""
    return sorted({normalize_dim(d, rank) for d in dims})


def dense_in_order(shape: Sequence[int], strides: Sequence[int], order: Sequence[int]) -> bool:
    """Whether a tensor of `shape` and `strides` (elements) lies densely in memory order
    `order` (its dims outermost first): each dim's stride the product of the extents of the
    dims inner to it in that order (a dim of extent 1 may have any stride)."""
    inner = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != inner:
            return False
        inner *= shape[d]
    return True
