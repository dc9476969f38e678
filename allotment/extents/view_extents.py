"""Output extents of slice, pad, cat, reshape and shards: the one home of each rule.

Each rule is written once, over symbolic `Extent`s (`extents.symbolic`), and
the concrete form is the same expression over constants (which fold through
`extents.size_arith`): the concrete and symbolic twins sit side by side and
cannot disagree. Users: the fusion verifier (`dialects.fusion`, static
extents), the shape analysis (`analysis.shapes`), `fusion-allocate` (buffer
sizes, view offsets, shard sizes), the alloc verifier, `plan_sizes` and the
reference evaluator.

Slice semantics are torch's (and nvFuser's `slice`): a negative start or stop
counts from the end (`i + extent`), then both are clamped to `[0, extent]`;
`step >= 1`; the result has `ceildiv(max(stop - start, 0), step)` elements,
the first at `start`.

This module is a leaf above `symbolic` and `size_arith`: it imports no dialect,
so the dialects' verifiers use it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from allotment.extents import size_arith
from allotment.extents import symbolic as sym
from allotment.extents.symbolic import Const, Extent


def _int(e: Extent, what: str) -> int:
    """The value of an extent built from constants (an error if it has none)."""
    if isinstance(e, Const):
        return e.value
    # Constants fold unless the arithmetic has no result: say which.
    assert isinstance(e, sym.BinOp), e
    size_arith.apply(e.op, _int(e.lhs, what), _int(e.rhs, what))
    raise size_arith.SizeArithmeticError(f"{what}: cannot compute {e}")  # unreachable: apply raised


# --------------------------------------------------------------------------- #
# Slice                                                                       #
# --------------------------------------------------------------------------- #


def slice_index_sym(index: Extent, extent: Extent) -> Extent:
    """Where a slice bound `index` lands in a dimension of `extent`: counted from
    the end if negative, then clamped to [0, extent]."""
    if isinstance(index, Const):
        if index.value >= 0:
            return sym.minimum(index, extent)
        return sym.maximum(sym.add(extent, index), Const(0))
    # Sign unknown until run time: a = min(index, extent); a < 0 adds `extent` once.
    a = sym.minimum(index, extent)
    negative = sym.sub(Const(0), sym.floordiv(sym.minimum(a, Const(0)), Const(size_arith.INDEX_MAX)))
    return sym.maximum(sym.add(a, sym.mul(extent, negative)), Const(0))


def slice_sym(extent: Extent, start: Extent, stop: Extent, step: Extent) -> tuple[Extent, Extent]:
    """`(first, count)` of `x[start:stop:step]` along a dimension of `extent`."""
    first = slice_index_sym(start, extent)
    last = slice_index_sym(stop, extent)
    count = sym.ceildiv(sym.maximum(sym.sub(last, first), Const(0)), step)
    return first, count


def slice_bounds(extent: int, start: int, stop: int, step: int) -> tuple[int, int]:
    """`(first, count)` of `x[start:stop:step]` for concrete values (`slice_sym`'s twin)."""
    first, count = slice_sym(Const(extent), Const(start), Const(stop), Const(step))
    return _int(first, "slice start"), _int(count, "slice extent")


def slice_extent(extent: int, start: int, stop: int, step: int) -> int:
    """The number of elements of `x[start:stop:step]` along a dimension of `extent`."""
    return slice_bounds(extent, start, stop, step)[1]


def slice_static_extent(extent: int | None, start: int, stop: int, step: int) -> int | None:
    """The result extent when it is known from static values alone (None: dynamic).

    `extent` None is a `?` dimension: the count is still 0 when both bounds count
    from the same end and stop <= start."""
    if extent is not None:
        return slice_extent(extent, start, stop, step)
    if (start >= 0) == (stop >= 0) and stop <= start:
        return 0
    return None


# --------------------------------------------------------------------------- #
# Pad, cat, reshape                                                           #
# --------------------------------------------------------------------------- #


def pad_extent_sym(extent: Extent, low: Extent | int, high: Extent | int) -> Extent:
    """A padded dimension: `low + extent + high`."""
    return sym.add(sym.add(extent, sym.lift(low)), sym.lift(high))


def pad_extent(extent: int, low: int, high: int) -> int:
    """`pad_extent_sym`'s concrete twin."""
    return _int(pad_extent_sym(Const(extent), low, high), "pad extent")


def cat_extent_sym(extents: Sequence[Extent]) -> Extent:
    """The concatenated dimension: the sum of the inputs' extents."""
    out: Extent = Const(0)
    for e in extents:
        out = sym.add(out, e)
    return out


def cat_extent(extents: Sequence[int]) -> int:
    """`cat_extent_sym`'s concrete twin."""
    return _int(cat_extent_sym([Const(e) for e in extents]), "cat extent")


def reshape_inferred_sym(numel: Extent, known: Extent) -> Extent:
    """The `-1` extent of a reshape: numel / product(other extents) (exact division
    is checked separately: `reshape_divides`)."""
    return sym.floordiv(numel, known)


def reshape_inferred(numel: int, known: int) -> int | None:
    """`reshape_inferred_sym`'s concrete twin; None where no extent fits (known is 0,
    or does not divide numel)."""
    if known == 0 or not size_arith.check_holds("divisible", numel, known):
        return None
    return _int(reshape_inferred_sym(Const(numel), Const(known)), "reshape extent")


# --------------------------------------------------------------------------- #
# Shards                                                                      #
# --------------------------------------------------------------------------- #


def local_extent_sym(global_extent: Extent, shards: int, uneven: bool) -> Extent:
    """A device's extent of a dimension split over `shards`: ceildiv(global, shards)
    with `uneven`, else global / shards (which must divide: `shard_divides`)."""
    if shards == 1:
        return global_extent
    if uneven:
        return sym.ceildiv(global_extent, Const(shards))
    return sym.floordiv(global_extent, Const(shards))


def shard_divides(global_extent: int, shards: int, uneven: bool) -> bool:
    """Whether a static extent may be split over `shards` (always with `uneven`)."""
    return uneven or size_arith.check_holds("divisible", global_extent, shards)


def local_extent(global_extent: int, shards: int, uneven: bool) -> int:
    """`local_extent_sym`'s concrete twin (the caller checks `shard_divides` first)."""
    return _int(local_extent_sym(Const(global_extent), shards, uneven), "shard extent")


def reshape_splits(in_dims: Sequence[int | None], out_dims: Sequence[int | None]) -> list[tuple[int, ...]] | None:
    """The output dims each input dim of a reshape becomes, when the reshape only splits
    dims (and drops or inserts dims of extent 1); None when it merges dims or that cannot
    be shown from the shapes (`None` or a negative extent, a type's `?`, is unknown).

    Such a reshape is a view of any strided source (input dim `i` of stride `s` becomes
    dims `j1..jk` of strides `s * e(j2) * ... * e(jk)`, ..., `s`), which torch's `view`
    allows too; a merge needs the merged dims contiguous with each other. An input dim of
    extent 1 may become no dim, an output dim of extent 1 may come from none (its stride is
    never used). A `?` input dim must become exactly one `?` output dim, and at most one
    dim may be `?`: with one, the static groups matching forces the `?` extents equal."""
    in_shape = [None if e is None or e < 0 else e for e in in_dims]
    out_shape = [None if e is None or e < 0 else e for e in out_dims]
    if sum(e is None for e in in_shape) > 1 or sum(e is None for e in out_shape) > 1:
        return None
    groups: list[tuple[int, ...]] = []
    j = 0
    for e in in_shape:
        while j < len(out_shape) and out_shape[j] == 1 and e != 1:
            j += 1  # an inserted unit dim
        if e == 1:
            if j < len(out_shape) and out_shape[j] == 1:
                groups.append((j,))
                j += 1
            else:
                groups.append(())
            continue
        if e is None:
            if j >= len(out_shape) or out_shape[j] is not None:
                return None
            groups.append((j,))
            j += 1
            continue
        group: list[int] = []
        acc = 1
        while acc < e and j < len(out_shape):
            o = out_shape[j]
            if o is None:
                return None
            acc *= o
            group.append(j)
            j += 1
        if acc != e:
            return None
        groups.append(tuple(group))
    if any(out_shape[k] != 1 for k in range(j, len(out_shape))):
        return None
    return groups
