"""Fusion inputs: what `define_tensor` / `define_scalar` record, and the checks `execute` makes.

Contiguity and stride order follow nvFuser's conventions:
- `stride_order[d]` is dimension d's place in the allocation order counted from
  the innermost dimension: `[rank-1, ..., 1, 0]` is row-major (the default);
  `[0, 1]` is a transposed (column-major) matrix.
- `contiguity` is listed in allocation order (outermost first), one entry per
  dimension: True (its stride is the next inner non-broadcast dimension's
  stride times that dimension's extent, or 1 for the innermost), False (any
  stride) or None (a broadcast dimension: of extent 1, or expanded, i.e. of
  stride 0, when its extent is another, as nvFuser's expanded broadcasts).

`execute` checks the tensors it is given against these, and against the
dtype, rank and static extents of the definition, and says which input and
which dimension do not hold. A definition-time error (a bad stride order)
raises `allotment.ArgumentError`; an input that does not match the definition
raises `allotment.errors.InputTypeError` (an `ArgumentError` and a `RunError`, so
also a TypeError and a ValueError); a meta-device, sparse or nested input, which has no
data to run on, raises `allotment.RunError`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from allotment.dialects.fusion.orders import outermost_first
from allotment.dialects.fusion_rules import type_name
from allotment.errors import ArgumentError, InputTypeError, RunError
from allotment.frontend.datatypes import DataType, to_torch

if TYPE_CHECKING:
    from allotment.frontend.handles import Scalar, Tensor


def allocation_order(stride_order: Sequence[int] | None, rank: int) -> list[int]:
    """Logical dimensions from the outermost to the innermost in memory."""
    if not stride_order:
        return list(range(rank))
    return outermost_first(stride_order)


def check_extent(e: int, i: int, what: str) -> int:
    """`e`, entry `i` of a shape given to the frontend, as an int: -1 (symbolic), 0, 1 or a
    static extent that fits in 64 bits; an ArgumentError naming `what` (the argument) otherwise."""
    if e < -1:
        raise ArgumentError(
            f"{what}: the value {e} at index {i} was neither "
            "symbolic(-1), zero_element(0), broadcast(1), or static(>1)"
        )
    if e >= 1 << 63:
        raise ArgumentError(f"{what}: the value {e} at index {i} does not fit in 64 bits")
    return int(e)


def check_stride_order(stride_order: Sequence[int], rank: int, what: str) -> list[int]:
    if isinstance(stride_order, (str, bytes)) or not isinstance(stride_order, Sequence):
        raise ArgumentError(f"{what}: stride_order must be a list of ints, got {stride_order!r}")
    order = list(stride_order)
    if any(isinstance(v, bool) or not isinstance(v, int) for v in order):
        raise ArgumentError(f"{what}: stride_order must be a list of ints, got {order}")
    if len(order) != rank or sorted(order) != list(range(rank)):
        raise ArgumentError(
            f"{what}: stride_order {order} must be a permutation of 0..{rank - 1} "
            f"(one entry per dimension of the rank-{rank} tensor)"
        )
    return order


def tensor_descriptor(
    sizes: Sequence[int], strides: Sequence[int]
) -> tuple[list[bool | None], list[int]]:
    """nvFuser's `compute_tensor_descriptor`: (contiguity in allocation order, stride order).

    As nvFuser computes it: the dimensions of nonzero stride sorted by decreasing stride
    (stably), each stride-0 dimension put back at its own position in that list; then,
    outermost first, a dimension's contiguity is None where it is a broadcast (stride 0
    or extent 1), else whether its stride is the stride times the extent of the next
    non-broadcast dimension inside it (1 for the innermost)."""
    rank = len(sizes)
    if len(strides) != rank:
        raise ArgumentError("compute_tensor_descriptor: sizes and strides must have the same number of dimensions")
    for d, st in enumerate(strides):
        if st < 0:
            raise ArgumentError(f"negative stride on tensor is not supported: strides[{d}]={st}")
    order = sorted((d for d in range(rank) if strides[d] != 0), key=lambda d: -strides[d])
    for d in range(rank):
        if strides[d] == 0:
            order.insert(d, d)
    broadcast = [strides[d] == 0 or sizes[d] == 1 for d in order]
    contiguity: list[bool | None] = [None] * rank
    for pos, d in enumerate(order):
        if broadcast[pos]:
            continue
        expected = 1
        for q in range(pos + 1, rank):
            if not broadcast[q]:
                expected = strides[order[q]] * sizes[order[q]]
                break
        contiguity[pos] = strides[d] == expected
    stride_order = [0] * rank
    for pos, d in enumerate(order):
        stride_order[d] = rank - 1 - pos
    return contiguity, stride_order


def compute_contiguity(sizes: Sequence[int], strides: Sequence[int]) -> list[bool | None]:
    """nvFuser's `compute_contiguity` over dimensions listed outermost first."""
    rank = len(sizes)
    contiguity: list[bool | None] = [None] * rank

    def not_broadcast(i: int) -> bool:
        return strides[i] != 0 and sizes[i] != 1

    inner: int | None = None
    for i in reversed(range(rank)):
        if not not_broadcast(i):
            continue
        contiguity[i] = strides[i] == 1 if inner is None else strides[i] == strides[inner] * sizes[inner]
        inner = i
    return contiguity


@dataclass
class TensorInput:
    """A tensor input as defined: extents (-1 symbolic), dtype, layout."""

    handle: Tensor
    shape: list[int]
    dtype: DataType
    contiguity: list[bool | None] | None
    stride_order: list[int] | None
    is_cpu: bool = False
    expanded: tuple[int, ...] = ()
    """Dimensions whose contiguity is None at an extent other than 1: expanded
    broadcasts (nvFuser's), every element equal along them: stride 0 (or extent <= 1)."""
    _plan: tuple[Any, ...] | None = None

    def plan(self) -> tuple[torch.dtype, int, list[tuple[int, int]], str]:
        """What execute checks, computed once the definition (and its sharding) is final:
        (dtype, rank, [(dim, local static extent)], layout check: "none", "contiguous", "full")."""
        if self._plan is None:
            sharding = self.handle._sharding
            static = [
                (d, e // sharding.shards(d) if sharding.mesh is not None else e)
                for d, e in enumerate(self.shape)
                if e >= 0
            ]
            if self.expanded:
                layout = "full"
            elif self.stride_order is None and not any(self.contiguity or []):
                layout = "none"
            elif self.stride_order is None and all(c is not False for c in self.contiguity or []):
                layout = "contiguous"
            else:
                layout = "full"
            self._plan = (to_torch(self.dtype), len(self.shape), static, layout)
        return self._plan


@dataclass
class ScalarInput:
    """A scalar input as defined."""

    handle: Scalar
    dtype: DataType


@dataclass
class VectorInput:
    """A vector of Int scalar inputs (`define_vector(size)`): one position of `execute`'s
    inputs (a list or tuple of ints, or a 1-D CPU integer tensor), one function argument
    per entry."""

    handle: Any  # the `Vector`
    items: list[ScalarInput]


Input = TensorInput | ScalarInput | VectorInput


def vector_values(position: int, spec: VectorInput, x: object) -> list[int]:
    """The entries of a vector input, checked: their number and that each is an int."""
    what = f"input #{position} (a vector of {len(spec.items)} Int scalars)"
    if isinstance(x, torch.Tensor):
        check_dense(lambda: what, x)
        if x.dim() != 1 or x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool:
            raise InputTypeError(
                f"{what}: a tensor given for it must be 1-D of an integer dtype, got shape "
                f"{list(x.shape)} and dtype {x.dtype}"
            )
        values: list[object] = [int(v) for v in x.tolist()]
    elif isinstance(x, list | tuple | torch.Size):
        values = list(x)
    else:
        raise InputTypeError(f"{what}: expects a list or tuple of ints, got {type(x).__name__} {x!r}")
    if len(values) != len(spec.items):
        raise InputTypeError(f"{what}: expects {len(spec.items)} entries, got {len(values)} ({values!r})")
    out = []
    for k, (item, v) in enumerate(zip(spec.items, values)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputTypeError(f"{what}: entry {k} must be an int, got {type(v).__name__} {v!r}")
        out.append(int(scalar_value(position, item, v)))
    return out


def describe(position: int, spec: Input) -> str:
    if isinstance(spec, VectorInput):
        return f"input #{position} (a vector of {len(spec.items)} Int scalars)"
    v = spec.handle.value
    name = f"%{v.name_hint}: " if v.name_hint else ""
    return f"input #{position} ({name}{type_name(v.type)})"


def check_dense(what: Callable[[], str], x: torch.Tensor) -> None:
    """Raises RunError unless `x` has data in dense (strided) memory: not a meta, sparse or
    nested tensor."""
    if x.is_meta:
        raise RunError(f"{what()}: the tensor is on the meta device, which holds no data to run on")
    if x.layout != torch.strided:
        raise RunError(f"{what()}: a {x.layout} tensor has no dense memory to run on")
    if x.is_nested:
        raise RunError(f"{what()}: a nested tensor has no dense memory to run on")


def check_tensor(position: int, spec: TensorInput, x: torch.Tensor) -> None:
    """Raises InputTypeError (or RunError for a meta or sparse tensor) when `x` does not
    match the defined tensor input."""
    dtype, rank, static, layout = spec.plan()
    if (  # the common case, accepted without building a message: what the checks below accept
        x.dtype is dtype and x.dim() == rank and x.layout is torch.strided and not x.is_meta
        and not x.is_nested and (layout == "none" or layout == "contiguous" and x.is_contiguous())
        and (not static or all(x.shape[d] == local for d, local in static))
    ):
        return
    what = lambda: describe(position, spec)  # noqa: E731 - messages only on failure
    check_dense(what, x)
    if x.dtype != dtype:
        raise InputTypeError(f"{what()}: the tensor has dtype {x.dtype}, the definition says {dtype}")
    shape = x.shape
    if len(shape) != rank:
        raise InputTypeError(
            f"{what()}: the tensor has rank {len(shape)} (shape {list(shape)}), "
            f"the definition says rank {rank}"
        )
    for d, local in static:
        if shape[d] != local:
            kind = "a broadcast dimension (extent 1)" if spec.shape[d] == 1 else f"of static extent {local}"
            raise InputTypeError(
                f"{what()}: dimension {d} is {kind} in the definition, but the tensor has "
                f"extent {shape[d]} (shape {list(shape)})"
            )
    if layout == "none" or (layout == "contiguous" and x.is_contiguous()):
        return
    check_layout(what, spec, list(shape), list(x.stride()))


def check_layout(what: Callable[[], str], spec: TensorInput, sizes: list[int], strides: list[int]) -> None:
    """Stride order (when given) and contiguity (when given) against actual strides."""
    rank = len(sizes)
    if rank == 0 or 0 in sizes:
        return
    for d in spec.expanded:
        if sizes[d] > 1 and strides[d] != 0:
            raise InputTypeError(
                f"{what()}: dimension {d} is an expanded broadcast in the definition (contiguity "
                f"None), so its stride must be 0, but it is {strides[d]} (sizes {sizes}, strides "
                f"{strides}); pass the tensor expanded, e.g. t.expand(...)"
            )
    order = allocation_order(spec.stride_order, rank)

    def layout() -> str:
        text = f"(sizes {sizes}, strides {strides}"
        if spec.stride_order is not None:
            text += f", stride_order {spec.stride_order}"
        if spec.contiguity is not None:
            text += f", contiguity {spec.contiguity}"
        return text + ")"

    if spec.stride_order is not None:
        # a stride-0 dimension (an expanded broadcast, or one from_pytorch took as
        # non-contiguous) sits anywhere in the order
        real = [d for d in order if sizes[d] > 1 and strides[d] != 0]
        for outer, inner in zip(real, real[1:]):
            if strides[outer] < strides[inner]:
                raise InputTypeError(
                    f"{what()}: stride_order says dimension {outer} is outside dimension {inner} "
                    f"in memory, but its stride {strides[outer]} is smaller than "
                    f"{strides[inner]} {layout()}"
                )
    if spec.contiguity is None:
        return
    expected = 1
    for pos in reversed(range(rank)):
        d = order[pos]
        contiguous = spec.contiguity[pos]
        if sizes[d] == 1 or contiguous is None or (strides[d] == 0 and not contiguous):
            continue  # broadcast and expanded (stride-0) dimensions do not count
        if contiguous and strides[d] != expected:
            raise InputTypeError(
                f"{what()}: dimension {d} is contiguous in the definition, so its stride must be "
                f"{expected}, but it is {strides[d]} {layout()}"
            )
        expected = strides[d] * sizes[d]


def scalar_value(position: int, spec: ScalarInput, x: object) -> int | float | bool | complex:
    """The Python value of a scalar input (a number or a 0-d tensor), checked against its dtype."""
    what = lambda: describe(position, spec)  # noqa: E731 - messages only on failure
    if isinstance(x, torch.Tensor):
        check_dense(what, x)
        if x.dim() != 0:
            raise InputTypeError(f"{what()} is a scalar, but the input is a tensor of shape {list(x.shape)}")
        x = x.item()
    dt = spec.dtype
    if dt is DataType.Bool:
        if not isinstance(x, bool):
            raise InputTypeError(f"{what()} expects a bool, got {type(x).__name__} {x!r}")
        return x
    if dt in (DataType.Int, DataType.Int32):
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise InputTypeError(f"{what()} expects an int, got {type(x).__name__} {x!r}")
        bits = 64 if dt is DataType.Int else 32
        if not -(1 << (bits - 1)) <= int(x) < 1 << (bits - 1):
            raise InputTypeError(f"{what()}: {x} does not fit in {dt!r}")
        return int(x)
    if dt in (DataType.ComplexFloat, DataType.ComplexDouble):
        if isinstance(x, bool) or not isinstance(x, numbers.Complex):
            raise InputTypeError(f"{what()} expects a complex number, got {type(x).__name__} {x!r}")
        return complex(x)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputTypeError(f"{what()} expects a float, got {type(x).__name__} {x!r}")
    return float(x)
