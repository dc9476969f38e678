"""What every `fd.ops` family shares: the `OperatorBase` the family mixins of
`allotment.frontend.ops.Operators` derive from.

It checks arguments (a Tensor, Scalar or Python number of this definition, ints,
bools, dims, dtypes, shapes) and turns them into SSA operands, raising
`allotment.ArgumentError` that names the op and the argument before anything is
built; it builds and verifies ops (a verifier error is an ArgumentError naming the
op), reads extents (`tensor.dim`, built once per value and dimension), and casts
and aligns elementwise operands as nvFuser does (lower ranks broadcast from the
left; f16/bf16 arithmetic in f32).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    bf16,
    f16,
    f32,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError
from allotment.extents import dims as dim_rules
from allotment.frontend.building import make_op
from allotment.frontend.datatypes import DataType, check_dtype
from allotment.frontend.handles import Definition, Scalar, Tensor, Vector
from allotment.frontend.inputs import check_extent

HALF = (f16, bf16)
DYNAMIC = DYNAMIC_INDEX


def kind_of(x: object) -> str:
    """How an error message names a bad argument: its type, and its value for numbers and strings."""
    return f"{type(x).__name__} {x!r}" if isinstance(x, numbers.Number | str) else type(x).__name__


def integer_constant(v: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    if isinstance(v.owner, arith.ConstantOp) and isinstance(v.owner.value, IntegerAttr):
        return v.owner.value.value.data
    return None


def rank_of(v: SSAValue) -> int:
    """The rank of tensor value `v`."""
    assert isinstance(v.type, TensorType)
    return len(v.type.get_shape())


def is_tensor(v: SSAValue) -> bool:
    """Whether `v` is a tensor (else a scalar)."""
    return isinstance(v.type, TensorType)


def elem_of(v: SSAValue) -> Attribute:
    """The element type of `v` (its type, for a scalar)."""
    return rules.element_type_of(v.type)


class OperatorBase:
    """The state and helpers of `fd.ops` (one per `FusionDefinition`): the definition it
    builds into, and the `tensor.dim` values and casts built so far (each built once)."""

    def __init__(self, fd: Definition):
        self._fd = fd
        self._dim_cache: dict[tuple[SSAValue, int], SSAValue] = {}
        self._cast_cache: dict[tuple[SSAValue, Attribute], SSAValue] = {}

    # ------------------------------------------------------------------ #
    # Argument handling                                                  #
    # ------------------------------------------------------------------ #

    def _open(self, name: str) -> None:
        self._fd._check_open(f"ops.{name}")

    def _tensor(self, x: object, name: str, arg: str) -> Tensor:
        if not isinstance(x, Tensor):
            raise ArgumentError(f"{name}: argument '{arg}' must be a Tensor, got {kind_of(x)}")
        self._fd._own(x, f"{name}: argument '{arg}'")
        return x

    def _operand(self, x: object, name: str, arg: str) -> SSAValue:
        """A Tensor, a Scalar or a Python number (as a wrapped constant)."""
        if isinstance(x, Tensor | Scalar):
            self._fd._own(x, f"{name}: argument '{arg}'")
            return x.value
        if isinstance(x, numbers.Real | complex):
            return self._fd._python_scalar(x)  # type: ignore[arg-type]
        raise ArgumentError(
            f"{name}: argument '{arg}' must be a Tensor, a Scalar or a Python number, got {kind_of(x)}"
        )

    def _scalar_operand(self, x: object, name: str, arg: str) -> SSAValue:
        if isinstance(x, Tensor):
            raise ArgumentError(f"{name}: argument '{arg}' must be a Scalar or a Python number, got a Tensor")
        return self._operand(x, name, arg)

    def _bool(self, x: object, name: str, arg: str) -> bool:
        """A bool argument; the ints 0 and 1 are False and True, as nvFuser's bindings convert
        them (nvFuser's test_issue4888 passes `manual_normalization=0`)."""
        if isinstance(x, numbers.Integral) and not isinstance(x, bool) and x in (0, 1):
            return bool(x)
        if not isinstance(x, bool):
            raise ArgumentError(f"{name}: argument '{arg}' must be a bool (or 0 or 1), got {kind_of(x)}")
        return x

    def _int(self, x: object, name: str, arg: str) -> int:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise ArgumentError(f"{name}: argument '{arg}' must be an int, got {kind_of(x)}")
        if not -(1 << 63) <= x < 1 << 63:
            raise ArgumentError(f"{name}: argument '{arg}': {x} does not fit in 64 bits")
        return int(x)

    def _ints(self, x: object, name: str, arg: str, *, scalar_ok: bool = False) -> list[int]:
        if scalar_ok and isinstance(x, numbers.Integral) and not isinstance(x, bool):
            return [int(x)]
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence | torch.Size):
            raise ArgumentError(f"{name}: argument '{arg}' must be a list of ints, got {kind_of(x)}")
        return [self._int(v, name, f"{arg}[{i}]") for i, v in enumerate(x)]

    def _dims(self, x: object, rank: int, name: str, arg: str = "dims") -> list[int]:
        """Dimension indices (negative count from the end), checked against `rank`."""
        try:
            return dim_rules.normalize_dims(self._ints(x, name, arg, scalar_ok=True), rank)
        except dim_rules.DimsError as e:
            fault = f"repeats dimension {e.entry}" if e.repeated else str(e)
            raise ArgumentError(f"{name}: argument '{arg}' {fault}") from None

    def _dtype(self, x: object, name: str, arg: str = "dtype", *, allow_null: bool = False) -> DataType:
        return check_dtype(x, f"{name}: argument '{arg}'", allow_null=allow_null)

    # ------------------------------------------------------------------ #
    # Emitting                                                           #
    # ------------------------------------------------------------------ #

    def _build(self, name: str, make: Callable[[], Operation]) -> Operation:
        """Builds and verifies an op, then appends it; verifier errors become ArgumentError."""
        op: Operation | None = None
        try:
            op = make()
            op.verify()
        except VerifyException as e:
            if op is not None:
                op.drop_all_references()
            raise ArgumentError(f"{name}: {e}") from None
        return self._fd._emit(op)

    def _tensor_op(self, name: str, make: Callable[[], Operation]) -> Tensor:
        return self._fd._tensor_result(self._build(name, make))

    def _scalar_op(self, op: Operation) -> Scalar:
        self._fd._emit(op)
        return self._fd._name_scalar(op.results[0])

    def _index(self, n: int) -> SSAValue:
        return self._fd._constant(n, IndexType())

    def _dim(self, v: SSAValue, d: int) -> SSAValue:
        """`tensor.dim` of `v` at `d` (an `index` value), built once per value and dimension."""
        key = (v, d)
        if key not in self._dim_cache:
            op = tensor.DimOp(v, self._index(d))
            self._dim_cache[key] = self._scalar_op(op).value
        return self._dim_cache[key]

    def _extent(self, v: SSAValue, d: int) -> int | SSAValue:
        """Extent `d` of tensor `v`: its static value, or a `tensor.dim` value."""
        assert isinstance(v.type, TensorType)
        e = v.type.get_shape()[d]
        return e if e != DYNAMIC else self._dim(v, d)

    def _to_index(self, v: SSAValue, name: str, arg: str) -> SSAValue:
        if isinstance(v.type, IndexType):
            return v
        if isinstance(v.type, IntegerType) and v.type != i1:
            return self._scalar_op(arith.IndexCastOp(v, IndexType())).value
        raise ArgumentError(f"{name}: argument '{arg}' must hold integers, got a {rules.type_name(v.type)} scalar")

    def _extent_entries(self, x: object, name: str, arg: str) -> list[int | SSAValue]:
        """A shape argument (list, tuple, torch.Size or Vector of ints and Scalars)."""
        if isinstance(x, Vector):
            self._fd._own(x, f"{name}: argument '{arg}'")
            items: Sequence[Any] = list(x)
        elif isinstance(x, (str, bytes)) or not isinstance(x, Sequence | torch.Size):
            raise ArgumentError(
                f"{name}: argument '{arg}' must be a list of ints and Scalars, got {kind_of(x)}"
            )
        else:
            items = list(x)
        out: list[int | SSAValue] = []
        for i, e in enumerate(items):
            if isinstance(e, Scalar):
                self._fd._own(e, f"{name}: argument '{arg}'")
                c = e.constant
                if isinstance(c, numbers.Integral) and not isinstance(c, bool):
                    out.append(int(c))
                else:
                    out.append(self._to_index(e.value, name, f"{arg}[{i}]"))
            elif isinstance(e, numbers.Integral) and not isinstance(e, bool):
                out.append(check_extent(e, i, f"{name}: argument '{arg}'"))
            else:
                raise ArgumentError(
                    f"{name}: argument '{arg}' entries must be ints or Scalars, got {kind_of(e)} "
                    f"at index {i}"
                )
        return out

    @staticmethod
    def _split(entries: Sequence[int | SSAValue]) -> tuple[list[int], list[SSAValue]]:
        static: list[int] = []
        dynamic: list[SSAValue] = []
        for e in entries:
            if isinstance(e, SSAValue):
                static.append(DYNAMIC)
                dynamic.append(e)
            else:
                static.append(e)
        return static, dynamic

    def _cast(self, v: SSAValue, et: Attribute) -> SSAValue:
        """Tensor `v` converted to element type `et` (unchanged if it has it)."""
        if elem_of(v) == et:
            return v
        key = (v, et)
        if key not in self._cast_cache:  # promotions cast the same value once
            self._cast_cache[key] = self._tensor_op("cast", lambda: fusion.CastOp(v, et)).value
        return self._cast_cache[key]

    def _lift_rank(self, v: SSAValue, rank: int) -> SSAValue:
        """Tensor `v` with size-1 dimensions added on the left up to `rank`."""
        k = rank - rank_of(v)
        entries = [1] * k + [self._extent(v, d) for d in range(rank_of(v))]
        dims = fusion.int_list(range(k, rank))
        return self._shaped("broadcast_in_dim", fusion.BroadcastInDimOp, v, entries, broadcast_dims=dims).value

    def _shaped(
        self, name: str, cls: type[IRDLOperation], v: SSAValue, entries: Sequence[int | SSAValue], **props: Attribute
    ) -> Tensor:
        """`cls` (expand, reshape, broadcast_in_dim) of `v` with the result shape `entries`:
        its `static_shape` (`?` for an extent value, which is an operand), and `props`."""
        static, dynamic = self._split(entries)
        shaped = {"static_shape": fusion.int_list(static), **props}
        return self._tensor_op(name, lambda: make_op(cls, [v, dynamic], shaped))

    def _align(self, values: list[SSAValue]) -> list[SSAValue]:
        ranks = [rank_of(v) for v in values if is_tensor(v)]
        top = max(ranks)
        return [self._lift_rank(v, top) if is_tensor(v) and rank_of(v) < top else v for v in values]

    def _promote(self, name: str, values: list[SSAValue], to_float: bool) -> list[SSAValue]:
        """nvFuser's type promotion: half types compute in f32; `to_float` lifts integers too."""
        try:
            common = rules.promote([v.type for v in values])
        except VerifyException as e:
            raise ArgumentError(f"{name}: {e}") from None
        if to_float and not rules.is_float(common):
            lift = lambda t: not rules.is_float(t) or t in HALF  # noqa: E731
        elif common in HALF:
            lift = lambda t: t in HALF  # noqa: E731
        else:
            return values
        return [self._cast(v, f32) if is_tensor(v) and lift(elem_of(v)) else v for v in values]

    def _extent_entries_signed(self, x: object, name: str, arg: str) -> list[int | SSAValue]:
        """Like `_extent_entries`, but any int is allowed (indices may be negative)."""
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence | torch.Size | Vector):
            raise ArgumentError(f"{name}: argument '{arg}' must be a list of ints and Scalars, got {kind_of(x)}")
        ints = [
            self._int(e, name, f"{arg}[{i}]")
            for i, e in enumerate(x)
            if isinstance(e, numbers.Integral) and not isinstance(e, bool)
        ]
        masked = [0 if isinstance(e, numbers.Integral) and not isinstance(e, bool) else e for e in x]
        out = self._extent_entries(masked, name, arg)
        it = iter(ints)
        return [next(it) if isinstance(m, numbers.Integral) and not isinstance(m, bool) else o for m, o in zip(masked, out)]

    def _check_entries(self, name: str, arg: str, count: int, t: Tensor) -> None:
        """Raises unless an argument with one entry per input dimension has `t.ndim` entries."""
        if count != t.ndim:
            raise ArgumentError(
                f"{name}: argument '{arg}' has {count} entries, but the input has rank {t.ndim}"
            )

    def _creation_shape(self, shape: object, name: str) -> list[int | SSAValue]:
        """The shape of a tensor an op creates (`full`, `rand`, ...): ints and Scalars, no -1."""
        entries = self._extent_entries(shape, name, "shape")
        if any(e == -1 for e in entries if isinstance(e, int)):
            raise ArgumentError(f"{name}: argument 'shape' cannot have symbolic (-1) entries; give Scalars")
        return entries
