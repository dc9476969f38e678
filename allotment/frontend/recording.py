"""Recording a fusion: the part of `FusionDefinition` that `fd.ops` and the value
handles build with (the `allotment.frontend.handles.Definition` protocol).

A definition records into one block, the body of `func.func @fusion`: its
arguments are the inputs (and, last, the hidden seed of unseeded random ops),
its ops appended in the order they are built. Tensors are named `T<n>` and
scalars `S<n>` in the IR, in the order they are made; constants are deduplicated
by type and value (bit for bit: -0.0 is not 0.0). A definition is open until it is
finished (or fails); after that, adding to it raises `allotment.UsageError`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects import complex as cplx
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, ModuleOp, f64, i1, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from allotment.dialects.fusion_rules import c128
from allotment.errors import ArgumentError, UsageError
from allotment.frontend.handles import Number, Scalar, Tensor, Vector


class DefinitionRecorder:
    """The recording state and its building blocks (mixed into `FusionDefinition`, whose
    `__init__` sets the state: `_block`, `_tensors`, `_scalar_count`, `_constants`,
    `_rng_seed`, `_rng_draws`, `_module`, `_failed`)."""

    FUNCTION_NAME = "fusion"

    _block: Block
    _tensors: list[Tensor]
    _scalar_count: int
    _constants: dict[tuple[Any, ...], Scalar]
    _rng_seed: SSAValue | None
    _rng_draws: int
    _module: ModuleOp | None
    _failed: bool

    def _check_open(self, what: str) -> None:
        if self._module is not None:
            raise UsageError(f"{what}: attempting to add to a completed definition")
        if self._failed:
            raise UsageError(f"{what}: the definition failed earlier and cannot be extended")

    def _check_schedulable(self, what: str) -> None:
        if self._module is not None:
            raise UsageError(
                f"{what}: the definition is complete; set meshes and parallelize axes inside "
                "the `with FusionDefinition()` block or in multidevice_schedule()"
            )

    def _name_tensor(self, value: SSAValue) -> Tensor:
        handle = Tensor(self, value, len(self._tensors))
        value.name_hint = f"T{handle.index}"
        self._tensors.append(handle)
        return handle

    def _name_scalar(self, value: SSAValue, constant: Number | None = None) -> Scalar:
        handle = Scalar(self, value, self._scalar_count, constant)
        if value.name_hint is None:
            value.name_hint = f"S{handle.index}"
        self._scalar_count += 1
        return handle

    def _emit(self, op: Operation) -> Operation:
        """Appends a built op to the fusion body."""
        self._block.add_op(op)
        return op

    def _tensor_result(self, op: Operation, i: int = 0) -> Tensor:
        return self._name_tensor(op.results[i])

    def _constant(self, value: Number, t: Attribute) -> SSAValue:
        """An `arith.constant` of type `t` (deduplicated)."""
        if isinstance(t, IntegerType | IndexType):
            attr: Attribute = IntegerAttr(int(value), t)
            key: tuple[Any, ...] = (t, int(value))
        else:
            v = float(value)
            attr = FloatAttr(v, t)
            key = (t, "nan" if math.isnan(v) else (v, math.copysign(1.0, v)))
        found = self._constants.get(key)
        if found is not None:
            return found.value
        op = self._emit(arith.ConstantOp(attr))
        self._constants[key] = self._name_scalar(op.results[0], value)
        return op.results[0]

    def _complex_constant(self, value: complex, t: Attribute) -> SSAValue:
        """A `complex.constant` of complex type `t` (deduplicated)."""
        parts = t.element_type  # type: ignore[attr-defined]
        key = (t, repr(value.real), repr(value.imag))
        found = self._constants.get(key)
        if found is not None:
            return found.value
        op = self._emit(cplx.ConstantOp.from_floats((value.real, value.imag), parts))
        self._constants[key] = self._name_scalar(op.results[0], value)  # type: ignore[arg-type]
        return op.results[0]

    def _complex_constant_handle(self, value: complex, t: Attribute) -> Scalar:
        return Scalar(self, self._complex_constant(value, t), self._scalar_count, value)  # type: ignore[arg-type]

    def _constant_handle(self, value: Number, t: Attribute) -> Scalar:
        v = self._constant(value, t)
        return Scalar(self, v, self._scalar_count, value)

    def _python_scalar(self, x: Number) -> SSAValue:
        """A Python number as a wrapped scalar constant: bool i1, int i64, float f64."""
        if isinstance(x, complex):
            return self._complex_constant(x, c128)
        if isinstance(x, bool):
            return self._constant(x, i1)
        if isinstance(x, numbers.Integral):
            if not -(1 << 63) <= int(x) < 1 << 63:
                raise ArgumentError(f"the integer {x} does not fit in 64 bits")
            return self._constant(int(x), i64)
        return self._constant(float(x), f64)

    def _rng_state(self) -> tuple[SSAValue, SSAValue]:
        """(seed, offset) of a random op given no `rng_seed`/`rng_offset`: a hidden i64
        argument (the function's last), which `execute` fills with a fresh seed drawn from
        torch's default CPU generator on every call, and offset k for the fusion's k-th such
        op (so they differ; `torch.manual_seed` makes a run reproducible)."""
        if self._rng_seed is None:
            self._rng_seed = self._add_argument(i64)
            self._rng_seed.name_hint = "rng_seed"
        self._rng_draws += 1
        return self._rng_seed, self._constant(self._rng_draws - 1, i64)

    def _own(self, handle: Tensor | Scalar | Vector, what: str) -> None:
        if handle._fd is not self:
            raise ArgumentError(f"{what} belongs to another FusionDefinition")

    def _add_argument(self, t: Attribute) -> SSAValue:
        return self._block.insert_arg(t, len(self._block.args))
