"""`fd.ops` shapes, views and creation: a mixin of `allotment.frontend.ops.Operators`.

Creation (`full`, `iota`), extents (`size`, `shape`, `tensor_sizes`, `at`),
broadcasts and views (`broadcast_in_dim`, `broadcast`, `expand`, `reshape`,
`permute`, `squeeze`, `slice`, `select`, `pad`, `cat`) and layout
(`stride_order`). A shape entry is an int or a Scalar; `-1` keeps or infers an
extent where the op says so, and an extent known only at run time is a
`tensor.dim` value. Negative indices count from the end, as in Python.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i1, i64
from xdsl.ir import SSAValue

from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError
from allotment.frontend.building import make_op
from allotment.frontend.datatypes import DataType, to_element_type
from allotment.frontend.handles import Scalar, Tensor, Vector
from allotment.frontend.inputs import check_stride_order
from allotment.frontend.operands import DYNAMIC, OperatorBase, kind_of


class ShapeOperators(OperatorBase):
    """The shape, view and creation ops of `fd.ops`."""

    def stride_order(self, arg: object, stride_order: Sequence[int]) -> Tensor:
        """A copy of `arg` laid out in `stride_order` (as define_tensor's: entry d is dimension
        d's rank, the highest outermost). Where the copy is an output, the order is its
        result's `fusion.stride_order` in the IR (as `add_output(t, stride_order=...)` gives),
        which fusion-allocate makes the output buffer's layout; elsewhere a layout changes
        no value."""
        self._open("stride_order")
        t = self._tensor(arg, "stride_order", "arg")
        order = check_stride_order(stride_order, t.ndim, "stride_order")  # type: ignore[arg-type]
        out = self.set(t)
        self._fd._stride_orders[out.value] = order
        return out  # type: ignore[return-value]

    def full(self, shape: object, fill_value: object, dtype: DataType) -> Tensor:
        """A tensor of `shape` filled with `fill_value` converted to `dtype`."""
        name = "full"
        self._open(name)
        et = to_element_type(self._dtype(dtype, name))
        entries = self._creation_shape(shape, name)
        value = self._scalar_operand(fill_value, name, "fill_value")
        static, dynamic = self._split(entries)
        props = {"static_sizes": fusion.int_list(static)}
        return self._tensor_op(
            name, lambda: make_op(fusion.FullOp, [value, dynamic], props, [TensorType(et, [])])
        )

    def iota(
        self, length: object, start: object = None, step: object = None, dtype: DataType = DataType.Int
    ) -> Tensor:
        """`[start, start + step, ...]` of `length` entries (start 0 and step 1 by default)."""
        name = "iota"
        self._open(name)
        et = to_element_type(self._dtype(dtype, name))
        if et == i1:
            raise ArgumentError(f"{name}: argument 'dtype' cannot be DataType.Bool")
        (n,) = self._extent_entries([length], name, "length")
        if isinstance(n, int) and n < 0:
            raise ArgumentError(f"{name}: argument 'length' must be non-negative, got {n}")
        zero, one = (0.0, 1.0) if rules.is_float(et) else (0, 1)
        a = self._scalar_operand(zero if start is None else start, name, "start")
        s = self._scalar_operand(one if step is None else step, name, "step")
        static, dynamic = self._split([n])
        props = {"static_length": fusion.int_list(static)}
        return self._tensor_op(
            name, lambda: make_op(fusion.IotaOp, [dynamic, a, s], props, [TensorType(et, [])])
        )

    def size(self, arg: object, dim: int) -> Scalar:
        """Extent `dim` of `arg` as an index scalar (a constant when static)."""
        name = "size"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        (d,) = self._dims(dim, t.ndim, name, "dim")
        e = self._extent(t.value, d)
        if isinstance(e, int):
            return self._fd._constant_handle(e, IndexType())
        return Scalar(self._fd, e, -1)

    def shape(self, arg: object) -> Vector:
        """Every extent of `arg` (`t.shape()`)."""
        t = self._tensor(arg, "shape", "arg")
        return Vector(self._fd, [self.size(t, d) for d in range(t.ndim)])

    def tensor_sizes(self, arg: object) -> list[Scalar]:
        return list(self.shape(arg))

    def at(self, arg: object, index: int) -> Scalar:
        if not isinstance(arg, Vector):
            raise ArgumentError(f"at: argument 'arg' must be a Vector, got {kind_of(arg)}")
        i = self._int(index, "at", "index")
        if not -len(arg) <= i < len(arg):
            raise ArgumentError(f"at: argument 'index' {i} is out of range for a Vector of size {len(arg)}")
        return list(arg)[i]

    def broadcast_in_dim(self, arg: object, shape: object, broadcast_dims: object) -> Tensor:
        """Places `arg`'s dimensions at `broadcast_dims` of a tensor of `shape`.

        A -1 in `shape` at a mapped dimension keeps the input's extent; new
        dimensions get the given extent (size-1 broadcast, then expanded). With no new
        dimension (`broadcast_dims` every output dimension) it is `fusion.expand`, the op
        `expand` builds, as nvFuser builds no broadcast there.
        """
        name = "broadcast_in_dim"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        entries = self._extent_entries(shape, name, "shape")
        dims = self._ints(broadcast_dims, name, "broadcast_dims")
        if len(dims) != t.ndim:
            raise ArgumentError(
                f"{name}: argument 'broadcast_dims' has {len(dims)} entries, but the input has "
                f"rank {t.ndim}"
            )
        for d in dims:
            if not 0 <= d < len(entries):
                raise ArgumentError(
                    f"{name}: argument 'broadcast_dims' entry {d} is out of range for an output "
                    f"of rank {len(entries)}"
                )
        if any(b <= a for a, b in zip(dims, dims[1:])):
            raise ArgumentError(f"{name}: argument 'broadcast_dims' {dims} must be strictly increasing")
        resolved: list[int | SSAValue] = []
        for d, e in enumerate(entries):
            if isinstance(e, int) and e == -1:
                if d not in dims:
                    raise ArgumentError(
                        f"{name}: argument 'shape' entry {d} is -1, but output dimension {d} is a "
                        "new dimension; give its extent"
                    )
                e = self._extent(t.value, dims.index(d))
            resolved.append(e)
        if dims == list(range(len(entries))):  # no new dimension: the same fusion as expand's
            return self._shaped(name, fusion.ExpandOp, t.value, resolved)
        return self._shaped(name, fusion.BroadcastInDimOp, t.value, resolved, broadcast_dims=fusion.int_list(dims))

    def broadcast(self, arg: object, is_broadcast_dim: object) -> Tensor:
        """Inserts size-1 dimensions where `is_broadcast_dim` is True."""
        name = "broadcast"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        if isinstance(is_broadcast_dim, (str, bytes)) or not isinstance(is_broadcast_dim, Sequence):
            raise ArgumentError(f"{name}: argument 'is_broadcast_dim' must be a list of bools, got {kind_of(is_broadcast_dim)}")
        flags = [self._bool(f, name, f"is_broadcast_dim[{i}]") for i, f in enumerate(is_broadcast_dim)]
        kept = [i for i, f in enumerate(flags) if not f]
        if len(kept) != t.ndim:
            raise ArgumentError(
                f"{name}: argument 'is_broadcast_dim' has {len(kept)} False entries, but the input "
                f"has rank {t.ndim} (one False entry per input dimension)"
            )
        shape = [1 if f else -1 for f in flags]
        return self.broadcast_in_dim(t, shape, kept)

    def expand(self, arg: object, shape: object) -> Tensor:
        """Expands size-1 dimensions to `shape` (-1 keeps an extent)."""
        name = "expand"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        entries = self._extent_entries(shape, name, "shape")
        self._check_entries(name, "shape", len(entries), t)
        resolved = [self._extent(t.value, d) if isinstance(e, int) and e == -1 else e for d, e in enumerate(entries)]
        return self._shaped(name, fusion.ExpandOp, t.value, resolved)

    def reshape(self, arg: object, new_shape: object, *rest: object) -> Tensor:
        """`arg`'s elements viewed with `new_shape` (one -1 entry may be inferred).

        The older spelling `reshape(arg, original_shape, new_shape)` is accepted.
        """
        name = "reshape"
        self._open(name)
        if len(rest) > 1:
            raise ArgumentError(f"{name} takes (arg, new_shape) or (arg, original_shape, new_shape)")
        if rest:
            new_shape = rest[0]
        t = self._tensor(arg, name, "arg")
        entries = self._extent_entries(new_shape, name, "new_shape")
        if sum(1 for e in entries if isinstance(e, int) and e == -1) > 1:
            raise ArgumentError(f"{name}: argument 'new_shape' may have at most one -1 entry")
        return self._shaped(name, fusion.ReshapeOp, t.value, entries)

    def permute(self, arg: object, dims: object) -> Tensor:
        """Reorders dimensions: output dimension i is input dimension `dims[i]`."""
        name = "permute"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        raw = self._ints(dims, name, "dims")
        self._check_entries(name, "dims", len(raw), t)
        perm = self._dims(raw, t.ndim, name)
        props = {"dims": fusion.int_list(perm)}
        return self._tensor_op(name, lambda: make_op(fusion.PermuteOp, [t.value], props))

    def squeeze(self, arg: object, dims: object, *rest: object, squeeze_expanded: bool = False) -> Tensor:  # noqa: ARG002
        """Removes size-1 dimensions `dims` (older spelling `(arg, original_shape, dims)` too).

        A symbolic (-1) dimension must have extent 1 at run time; it is
        removed by a reshape.
        """
        name = "squeeze"
        self._open(name)
        # `squeeze_expanded` is nvFuser's; accepted and ignored: an expanded
        # dimension of extent 1 squeezes like any other size-1 dimension.
        if rest and not (isinstance(rest[0], bool) and len(rest) == 1):
            dims = rest[0]
        t = self._tensor(arg, name, "arg")
        ds = self._dims(dims, t.ndim, name)
        assert isinstance(t.value.type, TensorType)
        shape = t.value.type.get_shape()
        for d in ds:
            if shape[d] not in (1, DYNAMIC):
                raise ArgumentError(
                    f"{name}: argument 'dims': cannot squeeze dimension {d} of extent {shape[d]}; "
                    "only extent-1 dimensions squeeze"
                )
        if all(shape[d] == 1 for d in ds):
            props = {"dims": fusion.int_list(ds)}
            return self._tensor_op(name, lambda: make_op(fusion.SqueezeOp, [t.value], props))
        kept = [self._extent(t.value, d) for d in range(t.ndim) if d not in ds]
        return self._shaped(name, fusion.ReshapeOp, t.value, kept)

    def _slice_bound(self, t: Tensor, d: int, e: int | SSAValue, normalize: bool) -> int | SSAValue:
        """A start or end index with Python's negative-index meaning (clamped at 0)."""
        if not isinstance(e, int) or e >= 0 or not normalize:
            return e
        extent = self._extent(t.value, d)
        if isinstance(extent, int):
            return max(extent + e, 0)
        shifted = self._scalar_op(arith.AddiOp(extent, self._index(e))).value
        return self._scalar_op(arith.MaxSIOp(shifted, self._index(0))).value

    def slice(
        self,
        arg: object,
        start_indices: object,
        end_indices: object,
        strides: object = None,
        manual_normalization: bool = False,
    ) -> Tensor:
        """`arg[start:end:stride, ...]`; negative indices count from the end."""
        name = "slice"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        manual = self._bool(manual_normalization, name, "manual_normalization")
        starts = self._extent_entries_signed(start_indices, name, "start_indices")
        ends = self._extent_entries_signed(end_indices, name, "end_indices")
        steps = [1] * t.ndim if strides is None else self._extent_entries_signed(strides, name, "strides")
        for what, lst in (("start_indices", starts), ("end_indices", ends), ("strides", steps)):
            self._check_entries(name, what, len(lst), t)
        for s in steps:
            if isinstance(s, int) and s < 1:
                raise ArgumentError(f"{name}: argument 'strides' entries must be positive, got {s}")
        starts = [self._slice_bound(t, d, e, not manual) for d, e in enumerate(starts)]
        ends = [self._slice_bound(t, d, e, not manual) for d, e in enumerate(ends)]
        for what, lst in (("start_indices", starts), ("end_indices", ends)):
            for e in lst:
                if isinstance(e, int) and e < 0:
                    raise ArgumentError(f"{name}: argument '{what}' entry {e} is negative")
        return self._slice(t, starts, ends, steps)

    def _slice(
        self,
        t: Tensor,
        starts: Sequence[int | SSAValue],
        ends: Sequence[int | SSAValue],
        steps: Sequence[int | SSAValue],
    ) -> Tensor:
        name = "slice"
        (s0, d0), (s1, d1), (s2, d2) = self._split(starts), self._split(ends), self._split(steps)
        props = {
            "static_start": fusion.int_list(s0),
            "static_stop": fusion.int_list(s1),
            "static_step": fusion.int_list(s2),
        }
        return self._tensor_op(name, lambda: make_op(fusion.SliceOp, [t.value, d0, d1, d2], props))

    def select(self, arg: object, index: object, dim: int) -> Tensor:
        """`arg` indexed at `index` along `dim` (that dimension removed)."""
        name = "select"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        (d,) = self._dims(dim, t.ndim, name, "dim")
        if isinstance(index, numbers.Integral) and not isinstance(index, bool):
            start: int | SSAValue = self._slice_bound(t, d, self._int(index, name, "index"), True)
            stop: int | SSAValue = start + 1 if isinstance(start, int) else self._scalar_op(
                arith.AddiOp(start, self._index(1))
            ).value
        elif isinstance(index, Scalar):
            self._fd._own(index, f"{name}: argument 'index'")
            start = self._to_index(index.value, name, "index")
            stop = self._scalar_op(arith.AddiOp(start, self._index(1))).value
        else:
            raise ArgumentError(f"{name}: argument 'index' must be an int or a Scalar, got {kind_of(index)}")
        starts: list[int | SSAValue] = [0] * t.ndim
        stops: list[int | SSAValue] = [self._extent(t.value, e) for e in range(t.ndim)]
        starts[d], stops[d] = start, stop
        sliced = self._slice(t, starts, stops, [1] * t.ndim)
        return self.squeeze(sliced, [d])

    def pad(self, arg: object, pad_widths: object, value: object = None) -> Tensor:
        """Pads with `value` (default 0); widths as torch.nn.functional.pad, last dimension first."""
        name = "pad"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        # Widths are ints or Scalars (a Vector too); negative ones crop, as torch's pad.
        widths = self._extent_entries_signed(pad_widths, name, "pad_widths")
        if len(widths) % 2 or len(widths) > 2 * t.ndim:
            raise ArgumentError(
                f"{name}: argument 'pad_widths' has {len(widths)} entries; it needs an even number, "
                f"at most twice the input's rank {t.ndim}"
            )
        low: list[int | SSAValue] = [0] * t.ndim
        high: list[int | SSAValue] = [0] * t.ndim
        for k in range(len(widths) // 2):
            d = t.ndim - 1 - k
            low[d], high[d] = widths[2 * k], widths[2 * k + 1]
            lo, hi, e = low[d], high[d], t._extents()[d]
            if isinstance(lo, int) and isinstance(hi, int) and e >= 0 and lo + e + hi < 0:
                raise ArgumentError(
                    f"{name}: argument 'pad_widths' crops dimension {d} of extent {e} to "
                    f"{lo} + {e} + {hi} = {lo + e + hi} elements"
                )
        fill = self._scalar_operand(0 if value is None else value, name, "value")
        (s_low, d_low), (s_high, d_high) = self._split(low), self._split(high)
        props = {"low": fusion.int_list(s_low), "high": fusion.int_list(s_high)}
        return self._tensor_op(name, lambda: make_op(fusion.PadOp, [t.value, fill, d_low, d_high], props))

    def cat(self, tensors: object, dim: int = 0, manual_padding: bool = False) -> Tensor:
        """Concatenates `tensors` along `dim`."""
        name = "cat"
        self._open(name)
        if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or not tensors:
            raise ArgumentError(f"{name}: argument 'tensors' must be a non-empty list of Tensors, got {kind_of(tensors)}")
        ts = [self._tensor(x, name, f"tensors[{i}]") for i, x in enumerate(tensors)]
        self._bool(manual_padding, name, "manual_padding")
        (d,) = self._dims(dim, ts[0].ndim, name, "dim")
        for i, x in enumerate(ts[1:], 1):
            if x.ndim != ts[0].ndim:
                raise ArgumentError(
                    f"{name}: argument 'tensors[{i}]' has rank {x.ndim}, 'tensors[0]' has rank {ts[0].ndim}"
                )
        props = {"dim": IntegerAttr(d, i64)}
        values = [x.value for x in ts]
        return self._tensor_op(name, lambda: make_op(fusion.CatOp, [values], props))
