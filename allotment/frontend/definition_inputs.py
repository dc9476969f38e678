"""Declaring a fusion's inputs: `define_tensor`, `from_pytorch`, `define_scalar`,
`define_constant` and `define_vector`, the part of `FusionDefinition` that records
what `execute` will be given (`allotment.frontend.inputs` has the records and checks).

Inputs become function arguments in the order they are defined: a tensor one
argument (`-1` in its shape a symbolic extent, a static 1 a broadcast dimension),
a scalar input one argument, `define_vector(n)` one argument per entry. A
`define_scalar` given a value is a constant, not an input. Bad arguments raise
`allotment.ArgumentError` naming the argument.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from allotment.errors import ArgumentError
from allotment.frontend.datatypes import DataType, check_dtype, from_torch, to_element_type
from allotment.frontend.handles import Number, Scalar, Tensor, Vector
from allotment.frontend.inputs import (
    Input,
    ScalarInput,
    TensorInput,
    VectorInput,
    allocation_order,
    check_extent,
    check_stride_order,
    tensor_descriptor,
)
from allotment.frontend.recording import DefinitionRecorder

_MAX_RANK = 64  # more dimensions than any tensor has (torch allows 64)


class DefinitionInputs(DefinitionRecorder):
    """The input declarations of a `FusionDefinition`, recorded in `_inputs` in order."""

    _inputs: list[Input]

    def define_tensor(
        self,
        shape: Sequence[int] | int | None = None,
        contiguity: Sequence[bool | None] | bool | None = None,
        dtype: DataType = DataType.Float,
        is_cpu: bool = False,
        stride_order: Sequence[int] | None = None,
        *,
        symbolic_sizes: Sequence[int] | None = None,
        sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        static_sizes: bool = False,
    ) -> Tensor:
        """A tensor input: `shape` entries are -1 (symbolic), 0, 1 (broadcast) or static.

        `contiguity` is a bool for every non-broadcast dimension or a list in
        allocation order (see `allotment.frontend.inputs`); `stride_order`
        gives the allocation order (default row-major). The integration form
        `define_tensor(sizes=..., strides=...)` derives both from strides.
        """
        what = "define_tensor"
        self._check_open(what)
        if symbolic_sizes is not None:
            if shape is not None:
                raise ArgumentError(f"{what}: give either 'shape' or 'symbolic_sizes', not both")
            shape = symbolic_sizes
        if (
            sizes is None
            and isinstance(contiguity, Sequence)
            and contiguity
            and all(isinstance(c, int) and not isinstance(c, bool) for c in contiguity)
        ):
            sizes, strides, contiguity = shape, contiguity, None  # define_tensor(sizes, strides)
            shape = None
        dtype = check_dtype(dtype, f"{what}: argument 'dtype'")
        if not isinstance(is_cpu, bool):
            raise ArgumentError(f"{what}: argument 'is_cpu' must be a bool, got {is_cpu!r}")
        if sizes is not None:
            return self._define_strided(sizes, strides, dtype, static_sizes, is_cpu)
        if shape is None:
            raise ArgumentError(f"{what}: missing argument 'shape'")
        extents = self._check_shape(shape, what)
        rank = len(extents)
        order_given = None
        if stride_order is not None and (not isinstance(stride_order, Sequence) or len(stride_order) > 0):
            order_given = check_stride_order(stride_order, rank, what)
            if order_given == list(range(rank - 1, -1, -1)):
                order_given = None
        contig = self._check_contiguity(contiguity, extents, order_given, what)
        order = allocation_order(order_given, rank)
        expanded = tuple(sorted(d for pos, d in enumerate(order) if contig[pos] is None and extents[d] != 1))
        return self._tensor_input(extents, dtype, contig, order_given, is_cpu, expanded)

    def _check_shape(self, shape: Sequence[int] | int, what: str) -> list[int]:
        if isinstance(shape, bool):
            raise ArgumentError(f"{what}: argument 'shape' must be a list of ints, got {shape!r}")
        if isinstance(shape, int):
            if shape < 0:
                raise ArgumentError(f"{what}: a rank must be non-negative, got {shape}")
            if shape > _MAX_RANK:
                raise ArgumentError(f"{what}: a rank must be at most {_MAX_RANK}, got {shape}")
            return [-1] * shape
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence | torch.Size):
            raise ArgumentError(f"{what}: argument 'shape' must be a list of ints, got {shape!r}")
        extents = list(shape)
        for i, e in enumerate(extents):
            if isinstance(e, bool) or not isinstance(e, numbers.Integral):
                raise ArgumentError(
                    f"{what}: argument 'shape' must be a list of ints, got {e!r} at index {i}"
                )
            check_extent(e, i, f"{what}: argument 'shape'")
        return [int(e) for e in extents]

    def _check_contiguity(
        self,
        contiguity: Sequence[bool | None] | bool | None,
        extents: list[int],
        stride_order: list[int] | None,
        what: str,
    ) -> list[bool | None]:
        rank = len(extents)
        order = allocation_order(stride_order, rank)
        if contiguity is None or isinstance(contiguity, bool):
            flag = bool(contiguity)
            return [None if extents[d] == 1 else flag for d in order]
        if isinstance(contiguity, (str, bytes)) or not isinstance(contiguity, Sequence):
            raise ArgumentError(
                f"{what}: argument 'contiguity' must be a bool or a list of bool/None, "
                f"got {contiguity!r}"
            )
        values = list(contiguity)
        if len(values) != rank:
            raise ArgumentError(
                f"{what}: argument 'contiguity' has {len(values)} entries for a tensor of rank {rank}"
            )
        out: list[bool | None] = []
        for c, d in zip(values, order):
            if c is not None and not isinstance(c, bool):
                raise ArgumentError(
                    f"{what}: argument 'contiguity' entries must be bool or None, got {c!r}"
                )
            if extents[d] == 1:
                out.append(None)  # a broadcast dimension has no contiguity
            elif c is None:
                # nvFuser: None marks a broadcast dimension; of an extent other than 1 it is
                # an expanded one (stride 0), which `execute` checks.
                out.append(None)
            else:
                out.append(c)
        return out

    def _define_strided(
        self,
        sizes: Sequence[int],
        strides: Sequence[int] | None,
        dtype: DataType,
        static_sizes: bool,
        is_cpu: bool,
    ) -> Tensor:
        what = "define_tensor"
        sizes_l = self._check_shape(sizes, what)
        if any(s < 0 for s in sizes_l):
            raise ArgumentError(f"{what}: argument 'sizes' must be non-negative, got {sizes_l}")
        if strides is None:
            raise ArgumentError(f"{what}: argument 'strides' is required with 'sizes'")
        if isinstance(strides, (str, bytes)) or not isinstance(strides, Sequence | torch.Size):
            raise ArgumentError(f"{what}: argument 'strides' must be {len(sizes_l)} ints, got {strides!r}")
        strides_l = list(strides)
        if len(strides_l) != len(sizes_l) or any(
            isinstance(s, bool) or not isinstance(s, numbers.Integral) for s in strides_l
        ):
            raise ArgumentError(
                f"{what}: argument 'strides' must be {len(sizes_l)} ints, got {strides_l}"
            )
        contiguity, order = tensor_descriptor(sizes_l, [int(s) for s in strides_l])
        if order == list(range(len(sizes_l) - 1, -1, -1)):
            order_given = None
        else:
            order_given = order
        extents = [s if static_sizes or s == 1 else -1 for s in sizes_l]
        order_dims = allocation_order(order_given, len(extents))
        # A stride-0 (expanded) dimension of extent > 1 is an ordinary, non-contiguous one here.
        contiguity = [
            None if extents[d] == 1 else (False if c is None else c)
            for d, c in zip(order_dims, contiguity)
        ]
        return self._tensor_input(extents, dtype, contiguity, order_given, is_cpu)

    def _tensor_input(
        self,
        extents: list[int],
        dtype: DataType,
        contiguity: list[bool | None],
        stride_order: list[int] | None,
        is_cpu: bool,
        expanded: tuple[int, ...] = (),
    ) -> Tensor:
        shape = [DYNAMIC_INDEX if e < 0 else e for e in extents]
        arg = self._add_argument(TensorType(to_element_type(dtype), shape))
        handle = self._name_tensor(arg)
        self._inputs.append(TensorInput(handle, extents, dtype, contiguity, stride_order, is_cpu, expanded))
        return handle

    def from_pytorch(self, tensor: torch.Tensor, static_sizes: bool = False) -> Tensor:
        """A tensor input shaped like `tensor` (symbolic extents unless `static_sizes`)."""
        if not isinstance(tensor, torch.Tensor):
            raise ArgumentError(
                f"from_pytorch: argument 'tensor' must be a torch.Tensor, got {type(tensor).__name__}"
            )
        if tensor.layout != torch.strided:
            raise ArgumentError(
                f"from_pytorch: argument 'tensor' is a {tensor.layout} tensor; only a strided tensor "
                "describes a fusion input"
            )
        return self.define_tensor(
            sizes=list(tensor.size()),
            strides=list(tensor.stride()),
            dtype=from_torch(tensor.dtype),
            static_sizes=static_sizes,
            is_cpu=tensor.device.type == "cpu" and tensor.dim() == 0,
        )

    def define_scalar(self, value: Number | DataType | None = None, dtype: DataType | None = None) -> Scalar:
        """A constant (`value` given) or a scalar input (no value; dtype default Double)."""
        what = "define_scalar"
        self._check_open(what)
        if isinstance(value, DataType) and dtype is None:
            value, dtype = None, value
        if value is None:
            dt = check_dtype(DataType.Double if dtype is None else dtype, f"{what}: argument 'dtype'")
            arg = self._add_argument(to_element_type(dt))
            handle = self._name_scalar(arg)
            self._inputs.append(ScalarInput(handle, dt))
            return handle
        if isinstance(value, complex):
            dt = check_dtype(DataType.ComplexDouble if dtype is None else dtype, f"{what}: argument 'dtype'")
            if dt not in (DataType.ComplexFloat, DataType.ComplexDouble):
                raise ArgumentError(f"{what}: the complex value {value!r} needs a complex dtype, got {dt!r}")
            return self._complex_constant_handle(value, to_element_type(dt))
        if not isinstance(value, numbers.Real):
            raise ArgumentError(
                f"{what}: argument 'value' must be a bool, int or float, got "
                f"{type(value).__name__} {value!r}"
            )
        if dtype is None:
            dt = (
                DataType.Bool
                if isinstance(value, bool)
                else DataType.Int
                if isinstance(value, numbers.Integral)
                else DataType.Double
            )
        else:
            dt = check_dtype(dtype, f"{what}: argument 'dtype'")
        if dt in (DataType.ComplexFloat, DataType.ComplexDouble):  # define_scalar(3.0, ComplexFloat)
            return self._complex_constant_handle(complex(value), to_element_type(dt))
        converted = _convert_number(value, dt, f"{what}: argument 'value'")
        return self._constant_handle(converted, to_element_type(dt))

    def define_constant(self, value: Number, dtype: DataType | None = None) -> Scalar:
        """Deprecated nvFuser spelling of `define_scalar(value, dtype)`."""
        return self.define_scalar(value, dtype)

    def define_vector(self, values: Sequence[int | Scalar] | int, dtype: DataType = DataType.Int) -> Vector:
        """A vector of Int scalars: inputs (`define_vector(n)`) or the given values."""
        self._check_open("define_vector")
        if isinstance(values, bool):
            raise ArgumentError(f"define_vector: argument 'values' must be a list or a size, got {values!r}")
        if isinstance(values, int):
            if not 0 <= values <= _MAX_RANK:
                raise ArgumentError(f"define_vector: a size must be in 0..{_MAX_RANK}, got {values}")
            # One input of `execute` (a list of ints), one i64 argument per entry.
            first = len(self._inputs)
            items = [self.define_scalar(dtype=DataType.Int) for _ in range(values)]
            specs = self._inputs[first:]
            del self._inputs[first:]
            vector = Vector(self, items)
            self._inputs.append(VectorInput(vector, specs))  # type: ignore[arg-type]
            return vector
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | torch.Size):
            raise ArgumentError(f"define_vector: argument 'values' must be a list or a size, got {values!r}")
        items: list[Scalar] = []
        for i, v in enumerate(values):
            if isinstance(v, Scalar):
                self._own(v, "define_vector: an entry")
                items.append(v)
            elif isinstance(v, numbers.Integral) and not isinstance(v, bool):
                if v < -1:
                    raise ArgumentError(
                        f"define_vector: the value {v} at index {i} was neither symbolic(-1), "
                        "zero_element(0), broadcast(1), or static(>1)"
                    )
                items.append(self.define_scalar(int(v), DataType.Int))
            else:
                raise ArgumentError(f"define_vector: entry {i} must be an int or a Scalar, got {v!r}")
        return Vector(self, items)


def _convert_number(value: numbers.Real, dt: DataType, what: str) -> Number:
    """`value` converted to a Python number of `dt`'s kind (ValueError when it does not fit)."""
    if dt is DataType.Bool:
        return bool(value)
    if dt in (DataType.Int, DataType.Int32):
        if isinstance(value, float) and not value.is_integer():
            raise ArgumentError(f"{what}: {value} is not an integer, but the dtype is {dt!r}")
        v = int(value)
        bits = 64 if dt is DataType.Int else 32
        if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
            raise ArgumentError(f"{what}: {v} does not fit in {dt!r}")
        return v
    return float(value)
