"""Value handles of a `FusionDefinition`: `Tensor`, `Scalar` and `Vector`.

A handle stands for one SSA value of the fusion being defined. Python's
arithmetic operators on handles build ops as nvFuser's do (`a + b` is
`fd.ops.add(a, b)`; `/` is `fd.ops.div`, which truncates integers as C does).
`==` and `!=` keep Python's identity meaning, so handles stay usable as dict
keys; use `fd.ops.eq` / `fd.ops.ne` for elementwise comparison.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.errors import ArgumentError, UnsupportedError
from allotment.frontend.datatypes import DataType, from_element_type
from allotment.frontend.multidevice import DeviceMesh, IterDomain, TensorSharding

Number = bool | int | float


class Definition(Protocol):
    """What handles and `fd.ops` use of the `FusionDefinition` they belong to (its recording
    part, `frontend/recording.py`, and the class itself sit above them and build them)."""

    ops: Any

    def _check_open(self, what: str) -> None: ...
    def _check_schedulable(self, what: str) -> None: ...
    def _name_scalar(self, value: SSAValue, constant: Number | None = None) -> Scalar: ...
    def _emit(self, op: Operation) -> Operation: ...
    def _tensor_result(self, op: Operation, i: int = 0) -> Tensor: ...
    def _constant(self, value: Number, t: Attribute) -> SSAValue: ...
    def _constant_handle(self, value: Number, t: Attribute) -> Scalar: ...
    def _python_scalar(self, x: Number) -> SSAValue: ...
    def _rng_state(self) -> tuple[SSAValue, SSAValue]: ...
    def _own(self, handle: Tensor | Scalar | Vector, what: str) -> None: ...


class _Handle:
    def __init__(self, fd: Definition, value: SSAValue, index: int):
        self._fd = fd
        self._value = value
        self.index = index

    @property
    def value(self) -> SSAValue:
        """The SSA value this handle stands for (replaced when a sharding retypes it)."""
        return self._value

    def _get_fusion_definition(self) -> Definition:
        return self._fd

    def is_tensor(self) -> bool:
        """Whether this value is a tensor (nvFuser's `Val.is_tensor`)."""
        return isinstance(self, Tensor)

    # Arithmetic, as nvFuser binds it on Tensor and Scalar.
    def _op(self, name: str, *args: Any) -> Any:
        return getattr(self._fd.ops, name)(*args)

    def __add__(self, other: Any) -> Any:
        return self._op("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return self._op("add", other, self)

    def __sub__(self, other: Any) -> Any:
        return self._op("sub", self, other)

    def __rsub__(self, other: Any) -> Any:
        return self._op("sub", other, self)

    def __mul__(self, other: Any) -> Any:
        return self._op("mul", self, other)

    def __rmul__(self, other: Any) -> Any:
        return self._op("mul", other, self)

    def __truediv__(self, other: Any) -> Any:
        return self._op("div", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._op("div", other, self)

    def __pow__(self, other: Any) -> Any:
        return self._op("pow", self, other)

    def __rpow__(self, other: Any) -> Any:
        return self._op("pow", other, self)

    def __neg__(self) -> Any:
        return self._op("neg", self)

    def __abs__(self) -> Any:
        return self._op("abs", self)

    def __lt__(self, other: Any) -> Any:
        return self._op("lt", self, other)

    def __le__(self, other: Any) -> Any:
        return self._op("le", self, other)

    def __gt__(self, other: Any) -> Any:
        return self._op("gt", self, other)

    def __ge__(self, other: Any) -> Any:
        return self._op("ge", self, other)

    def __and__(self, other: Any) -> Any:
        return self._op("bitwise_and", self, other)

    def __or__(self, other: Any) -> Any:
        return self._op("bitwise_or", self, other)

    def __invert__(self) -> Any:
        return self._op("bitwise_not", self)

    def __mod__(self, other: Any) -> Any:
        return self._op("mod", self, other)

    def __bool__(self) -> bool:
        raise ArgumentError(
            f"{type(self).__name__} handles have no truth value at definition time; "
            "use fd.ops.where to select"
        )

    __hash__ = object.__hash__


class Tensor(_Handle):
    """A tensor of the fusion (`nvfuser.Tensor`)."""

    def __init__(self, fd: Definition, value: SSAValue, index: int):
        super().__init__(fd, value, index)
        assert isinstance(value.type, TensorType)
        self._sharding = TensorSharding(len(value.type.get_shape()))

    @property
    def ndim(self) -> int:
        """The rank of the tensor."""
        assert isinstance(self._value.type, TensorType)
        return len(self._value.type.get_shape())

    def dtype(self) -> DataType:
        """The element type (a method, as nvFuser's `TensorView.dtype()`)."""
        assert isinstance(self._value.type, TensorType)
        return from_element_type(self._value.type.element_type)

    def _extents(self) -> list[int]:
        """Static extents, with `-1` for symbolic ones (the define_tensor spelling)."""
        assert isinstance(self._value.type, TensorType)
        return [e if e >= 0 else -1 for e in self._value.type.get_shape()]

    def shape(self) -> Vector:
        """The extents as a `Vector` of scalars (`fd.ops.shape(t)`)."""
        return self._fd.ops.shape(self)

    def size(self, dim: int) -> Scalar:
        """One extent as a scalar (`fd.ops.size(t, dim)`)."""
        return self._fd.ops.size(self, dim)

    # -- multidevice --------------------------------------------------------

    def set_device_mesh(self, mesh: DeviceMesh) -> None:
        """Places this tensor on `mesh` (replicated until an axis is parallelized)."""
        self._fd._check_schedulable("set_device_mesh")
        if not isinstance(mesh, DeviceMesh):
            raise ArgumentError(f"set_device_mesh: mesh must be a DeviceMesh, got {mesh!r}")
        self._sharding.mesh = mesh

    def axis(self, index: int) -> IterDomain:
        """Loop axis `index` (after any splits), to parallelize over a mesh axis."""
        loop = self._sharding.loop(index, "axis")
        return IterDomain(self._sharding, loop, self._fd._check_schedulable)

    def outer_split(self, axis: int, factor: int) -> None:
        """Splits loop axis `axis` so that its outer part has `factor` entries."""
        self._fd._check_schedulable("outer_split")
        self._sharding.outer_split(axis, factor)

    def split(self, axis: int, factor: int, inner_split: bool = True) -> None:
        if inner_split:
            raise UnsupportedError(
                "not supported: inner split (only outer_split maps onto a sharding)"
            )
        self.outer_split(axis, factor)

    def inner_split(self, axis: int, factor: int) -> None:
        raise UnsupportedError("not supported: inner_split (only outer_split maps onto a sharding)")

    def __repr__(self) -> str:
        return f"Tensor(index={self.index}, ndim={self.ndim}, dtype={self.dtype()!r})"


class Scalar(_Handle):
    """A scalar of the fusion (`nvfuser.Scalar`): an input, a constant or a computed value.

    `constant` is the Python value of a scalar known at definition time (a
    `define_scalar(value)` or a static extent), else None.
    """

    def __init__(
        self, fd: Definition, value: SSAValue, index: int, constant: int | float | bool | None = None
    ):
        super().__init__(fd, value, index)
        self.constant = constant

    def dtype(self) -> DataType:
        """The scalar's type (a method, as on tensors)."""
        return from_element_type(self._value.type)

    @property
    def is_index(self) -> bool:
        return isinstance(self._value.type, IndexType)

    def __repr__(self) -> str:
        const = "" if self.constant is None else f", value={self.constant!r}"
        return f"Scalar(index={self.index}, dtype={self.dtype()!r}{const})"


class Vector:
    """A list of scalar extents (`nvfuser.Vector`), as `t.shape()` returns."""

    def __init__(self, fd: Definition, items: list[Scalar]):
        self._fd = fd
        self._items = items

    @property
    def size(self) -> int:
        return len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Scalar]:
        return iter(self._items)

    def __getitem__(self, index: int) -> Scalar:
        return self._fd.ops.at(self, index)

    def at(self, index: int) -> Scalar:
        return self._fd.ops.at(self, index)

    def __repr__(self) -> str:
        return f"Vector(size={len(self._items)})"
