"""Declaring a fusion's outputs and finishing it: `add_output`, then the verified
module that `ir()` prints and `execute` compiles, the part of `FusionDefinition`
that turns the recorded block into `func.func @fusion`.

An output added with `alias_input=` is declared on the function result
(`fusion.alias_input`, the argument it is written into), a `stride_order` as the
result's `fusion.stride_order`. Finishing places every tensor put on a device
mesh on its `#fusion.sharding` type (with a `fusion.mesh` per mesh, and
reshardings where a tensor's placement changes), moves the hidden RNG seed to
the last argument and verifies the module; a module that does not verify raises
`allotment.ArgumentError` and fails the definition.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion
from allotment.dialects.fusion import ALIAS_ATTR as ALIAS_INPUT
from allotment.dialects.fusion import STRIDE_ORDER_ATTR as STRIDE_ORDER
from allotment.errors import ArgumentError
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.inputs import Input, TensorInput, VectorInput, check_stride_order
from allotment.frontend.multidevice import DeviceMesh
from allotment.frontend.recording import DefinitionRecorder
from allotment.passes.sharding_propagation import insert_explicit_reshardings


@dataclass
class Output:
    """An output of the fusion, as `add_output` declared it."""

    handle: Tensor | Scalar
    alias_input: int | None  # position of the aliased input
    stride_order: list[int] | None


class DefinitionOutputs(DefinitionRecorder):
    """The outputs of a `FusionDefinition` (`_outputs`, in order) and its finishing
    (`_finalize`, which sets `_module`, `_text` and `_plain_outputs`)."""

    _inputs: list[Input]
    _outputs: list[Output]
    _stride_orders: dict[SSAValue, list[int]]
    _text: str | None
    _plain_outputs: bool

    def add_output(
        self,
        output: Tensor | Scalar,
        alias_input: Tensor | Sequence[int] | None = None,
        stride_order: Sequence[int] | None = None,
    ) -> None:
        """Marks `output` as a fusion output.

        With `alias_input` (an input tensor of the same dtype and rank) the
        result is written into that input by `execute` and not returned: the IR
        declares it (`fusion.alias_input` on the function result) and the
        compiled program writes the input in place (`alloc-alias`).
        `stride_order` asks for the output's memory layout (as in define_tensor).
        """
        what = "add_output"
        self._check_open(what)
        if isinstance(alias_input, Sequence) and not isinstance(alias_input, (str, bytes)):
            alias_input, stride_order = None, alias_input
        if not isinstance(output, Tensor | Scalar):
            raise ArgumentError(
                f"{what}: argument 'output' must be a Tensor or Scalar, got {type(output).__name__}"
            )
        self._own(output, f"{what}: argument 'output'")
        alias_pos: int | None = None
        if alias_input is not None:
            alias_pos = self._check_alias(output, alias_input)
        order: list[int] | None = None
        if stride_order is None and isinstance(output, Tensor):  # fd.ops.stride_order's
            stride_order = self._stride_orders.get(output.value)
        if stride_order is not None and (not isinstance(stride_order, Sequence) or len(stride_order) > 0):
            if not isinstance(output, Tensor):
                raise ArgumentError(f"{what}: 'stride_order' needs a Tensor output")
            order = check_stride_order(stride_order, output.ndim, what)
            if order == list(range(output.ndim - 1, -1, -1)):
                order = None
        self._outputs.append(Output(output, alias_pos, order))

    def _check_alias(self, output: Tensor | Scalar, alias_input: object) -> int:
        what = "add_output"
        if not isinstance(alias_input, Tensor):
            raise ArgumentError(
                f"{what}: argument 'alias_input' must be an input Tensor, got "
                f"{type(alias_input).__name__}"
            )
        self._own(alias_input, f"{what}: argument 'alias_input'")
        pos = next(
            (i for i, s in enumerate(self._inputs) if s.handle is alias_input), None
        )
        if pos is None:
            raise ArgumentError(
                f"{what}: argument 'alias_input' must be a fusion input (from define_tensor or "
                f"from_pytorch), got {alias_input!r}"
            )
        if not isinstance(output, Tensor):
            raise ArgumentError(f"{what}: only a Tensor output can alias an input")
        if output.dtype() != alias_input.dtype() or output.ndim != alias_input.ndim:
            raise ArgumentError(
                f"{what}: the output ({output.dtype()!r}, rank {output.ndim}) cannot be written into "
                f"input #{pos} ({alias_input.dtype()!r}, rank {alias_input.ndim}): dtype and rank "
                "must match"
            )
        if any(o.alias_input == pos for o in self._outputs):
            raise ArgumentError(f"{what}: input #{pos} is already aliased by another output")
        return pos

    def _finalize(self) -> None:
        self._check_open("finalize")
        try:
            mesh_ops = self._apply_shardings()
        except Exception:
            self._failed = True
            raise
        values = [o.handle.value for o in self._outputs]
        if self._rng_seed is not None:  # the hidden seed becomes the last argument
            seed = self._add_argument(self._rng_seed.type)
            seed.name_hint = "rng_seed"
            self._rng_seed.replace_all_uses_with(seed)
            self._block.erase_arg(self._rng_seed)
            self._rng_seed = seed
        self._block.add_op(func.ReturnOp(*values))
        res_attrs = None
        if any(o.alias_input is not None or o.stride_order is not None for o in self._outputs):
            res_attrs = ArrayAttr([DictionaryAttr(self._result_attrs(o)) for o in self._outputs])
        ordered = self._ordered_arguments()
        arg_attrs = None
        if ordered:
            arg_attrs = ArrayAttr([
                DictionaryAttr({STRIDE_ORDER: DenseArrayBase.from_list(i64, ordered[i])} if i in ordered else {})
                for i in range(len(self._block.args))])
        fn = func.FuncOp(
            self.FUNCTION_NAME,
            ([a.type for a in self._block.args], [v.type for v in values]),
            Region(self._block),
            res_attrs=res_attrs,
            arg_attrs=arg_attrs,
        )
        module = ModuleOp([*mesh_ops, fn])
        if mesh_ops:  # multidevice: resharding where a tensor's mesh or split changes
            insert_explicit_reshardings(fn)
        try:
            module.verify()
        except VerifyException as e:
            self._failed = True
            raise ArgumentError(f"the fusion does not verify: {e}") from None
        self._module = module
        self._text = print_module(module)
        self._plain_outputs = all(
            isinstance(o.handle, Tensor) and o.alias_input is None and o.stride_order is None
            for o in self._outputs
        )

    def _result_attrs(self, o: Output) -> dict[str, Attribute]:
        """The function result's attributes: the aliased argument, the stride order (which
        fusion-allocate makes the output buffer's layout)."""
        attrs: dict[str, Attribute] = {}
        if o.alias_input is not None:
            attrs[ALIAS_INPUT] = IntegerAttr(self._argument_of(o.alias_input), 64)
        if o.stride_order is not None:
            attrs[STRIDE_ORDER] = DenseArrayBase.from_list(i64, o.stride_order)
        return attrs

    def _ordered_arguments(self) -> dict[int, list[int]]:
        """Function argument -> stride order, for each tensor input defined dense in a
        stride order other than row-major (`define_tensor(stride_order=..., contiguity=True)`,
        or sizes and strides that say so), unsharded and not expanded: execute has checked its
        strides against that order, so the program plans its views for the layout as it lies
        (`fusion.stride_order` on the argument) instead of copying it row-major."""
        ordered: dict[int, list[int]] = {}
        for position, spec in enumerate(self._inputs):
            if not isinstance(spec, TensorInput) or spec.stride_order is None or spec.expanded:
                continue
            if spec.handle._sharding.mesh is not None or spec.contiguity is None:
                continue
            if all(c is not False for c in spec.contiguity) and any(c for c in spec.contiguity):
                ordered[self._argument_of(position)] = list(spec.stride_order)
        return ordered

    def _argument_of(self, position: int) -> int:
        """The function argument of input `position` (a vector input has one per entry)."""
        return sum(len(s.items) if isinstance(s, VectorInput) else 1 for s in self._inputs[:position])

    def _apply_shardings(self) -> list[Operation]:
        """Gives every tensor placed on a mesh its `#fusion.sharding` type."""
        meshes: list[DeviceMesh] = []
        for t in self._tensors:
            mesh = t._sharding.mesh
            if mesh is None:
                continue
            if mesh not in meshes:
                meshes.append(mesh)
            name = f"mesh{meshes.index(mesh)}"
            try:
                axes = t._sharding.split_axes()
            except ArgumentError as e:
                raise ArgumentError(f"{t!r}: {e}") from None
            old = t.value.type
            assert isinstance(old, TensorType)
            new = TensorType(old.element_type, old.get_shape(), fusion.ShardingAttr(name, axes))
            t._value = Rewriter.replace_value_with_new_type(t.value, new)
        return [fusion.MeshOp(f"mesh{i}", m.shape, m.devices) for i, m in enumerate(meshes)]


def print_module(module: ModuleOp) -> str:
    """`module` printed as IR text (parseable by `allotment.ir.parse_module`)."""
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue() + "\n"
