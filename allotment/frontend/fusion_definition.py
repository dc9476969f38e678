"""`FusionDefinition`: nvFuser's Python frontend, building a `func.func` in the fusion dialect.

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 4], contiguity=True, dtype=DataType.Float)
        s0 = fd.define_scalar(2.0)
        t1 = fd.ops.mul(t0, s0)
        fd.add_output(fd.ops.sum(t1, dims=[1]))
    (out,) = fd.execute([torch.randn(3, 4)])

Inputs become function arguments in the order they are defined; `-1` in a
shape is a symbolic extent (`?`), a static 1 a broadcast dimension. Python
numbers become `arith.constant`s (float -> f64, int -> i64, bool -> i1), which
the dialect treats as wrapped scalars: they never widen a tensor's type.
`fd.ops.<name>` builds the ops (see `allotment.frontend.ops`); ops nvFuser has
and the dialect lacks raise `NotSupportedError("not supported: <name>")`.

Errors follow `allotment.errors`: a bad argument at definition time (shape,
contiguity, dtype, stride order, an op's operands, a handle of another
definition) raises `allotment.ArgumentError` (also a TypeError and a
ValueError), an unsupported dtype or feature `allotment.UnsupportedError` (also
a NotImplementedError), and inputs to `execute` that do not match the
definition `allotment.errors.InputTypeError` (an ArgumentError and a
`allotment.RunError`), or a RunError for tensors without data (meta, sparse, nested).

`execute` checks the inputs against the definition, compiles the fusion with
`allotment.compile` once per input signature (dtypes, ranks, device type) and
runs it. An output added with `alias_input=` is copied into that input after
the run and not returned, as nvFuser does.
"""

from __future__ import annotations

import itertools
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue

from allotment.errors import UsageError
from allotment.frontend.definition_inputs import DefinitionInputs
from allotment.frontend.definition_outputs import DefinitionOutputs, Output
from allotment.frontend.errors import NotSupportedError
from allotment.frontend.execution import DefinitionExecution
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.inputs import Input
from allotment.frontend.ops import Operators

_TOKENS = itertools.count(1)


class FusionDefinition(DefinitionInputs, DefinitionOutputs, DefinitionExecution):
    """nvFuser's `FusionDefinition`, producing a fusion-dialect `func.func @fusion`.

    Its parts, one module each: recording the ops (`recording`), declaring inputs
    (`definition_inputs`), declaring outputs and finishing the module
    (`definition_outputs`), running it (`execution`); this class holds their state
    and the definition's lifecycle (open, finished, failed).
    """

    def __init__(
        self,
        id: int | None = None,
        max_length: int = 1024,
        use_multidevice_executor: bool = False,
        backend_type: object = None,
    ):
        self._id = id
        # recording (`recording`), inputs and outputs (`definition_inputs`, `definition_outputs`)
        self._block = Block()
        self._inputs: list[Input] = []
        self._outputs: list[Output] = []
        self._tensors: list[Tensor] = []
        self._stride_orders: dict[SSAValue, list[int]] = {}
        """The layout `fd.ops.stride_order` asked of a value (its output's, when one is)."""
        self._scalar_count = 0
        self._constants: dict[tuple[Any, ...], Scalar] = {}
        self._rng_seed: SSAValue | None = None  # the hidden seed argument of unseeded RNG ops
        self._rng_draws = 0
        # finishing (`definition_outputs`) and running (`execution`)
        self._module: ModuleOp | None = None
        self._text: str | None = None
        self._failed = False
        self._plain_outputs = False
        self._fast: tuple[Any, Any, int] | None = None
        """(the executor's `call`, the executable's table of recorded calls, `_token`): `execute`'s fast path."""
        self._token = next(_TOKENS)
        """Marks the recorded calls whose signatures this definition's own checks passed (`_accept`)."""
        self._executables: dict[str, Any] = {}
        self.ops = Operators(self)

    # ------------------------------------------------------------------ #
    # Context manager and lifecycle                                      #
    # ------------------------------------------------------------------ #

    def __enter__(self) -> FusionDefinition:
        self._check_open("with FusionDefinition()")
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self._failed = True
            return
        self._finalize()

    def definition(self) -> None:
        raise NotImplementedError("definition() should be implemented by child class!")

    def id(self) -> int | None:
        return self._id

    @property
    def completed(self) -> bool:
        return self._module is not None

    def _ensure_defined(self) -> None:
        if self._module is not None:
            return
        if self._failed:
            raise UsageError("the definition raised an error; it cannot be executed")
        if type(self).definition is FusionDefinition.definition:
            raise UsageError(
                "the definition is not complete: define it in a `with FusionDefinition() as fd:` "
                "block, or override definition()"
            )
        self.definition()
        schedule = getattr(self, "multidevice_schedule", None)
        if callable(schedule):
            schedule()
        self._finalize()

    # ------------------------------------------------------------------ #
    # Printing                                                           #
    # ------------------------------------------------------------------ #

    @property
    def module(self) -> ModuleOp:
        """The finalized module (a `fusion.mesh` per device mesh, then `func.func @fusion`)."""
        self._ensure_defined()
        assert self._module is not None
        return self._module

    def ir(self) -> str:
        """The fusion's IR text (parseable by `allotment.ir.parse_module`)."""
        self._ensure_defined()
        assert self._text is not None
        return self._text

    def fusion_ir(self) -> str:
        return self.ir()

    def __repr__(self) -> str:
        if self._text is None:
            return f"<FusionDefinition (incomplete): {len(self._inputs)} inputs, {len(self._outputs)} outputs>"
        return self._text

    __str__ = __repr__

    def inputs(self) -> list[Tensor | Scalar]:
        return [s.handle for s in self._inputs]

    def outputs(self) -> list[Tensor | Scalar]:
        return [o.handle for o in self._outputs]

    @property
    def sched(self) -> Any:
        raise NotSupportedError(
            "not supported: fd.sched (manual scheduling); Allotment schedules fusions itself"
        )

    def last_cuda_code(self, *args: Any, **kwargs: Any) -> str:
        raise NotSupportedError("not supported: last_cuda_code (kernels are Triton, see the backend)")


__all__ = ["FusionDefinition", "NotSupportedError"]
