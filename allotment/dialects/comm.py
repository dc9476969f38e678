"""The `comm` dialect: the communication that reshards a tensor between devices.

Every op takes one tensor and returns the same tensor (same global shape and
element type) with another sharding; the types say what moves. The ops are
produced by `fusion-insert-resharding`, placed each in a `collective` segment
by `fusion-segment`, given local buffers by `fusion-allocate` like any other
kernel output, and executed through torch.distributed by the distributed host
program (`backend/distributed_codegen.py`).

- `comm.all_gather`: dims split over mesh axes become whole (replicated) on
  the same mesh;
- `comm.reduce_scatter {kind} over [axes]`: the input is a partial result
  (each device holds its contribution, whole along `axes`); the result is
  the reduction, one dim split over `axes`;
- `comm.all_reduce {kind} over [axes]`: the same reduction, replicated;
- `comm.shard`: a whole (replicated or unsharded) tensor becomes split: each
  device keeps its own slice, nothing is sent;
- `comm.transfer`: a tensor whole on one mesh (or everywhere) becomes whole on
  another mesh (or everywhere): point-to-point sends and receives, a broadcast
  when the target has more devices.

Why not xDSL's dialects: `shard` (the port of MLIR's) names `shard.grid`s,
which carry no device ids, has no all_gather or reduce_scatter, and works on
values without our tensor encodings; `mpi` is a memref-and-pointer interface
to MPI's C calls (ranks, datatypes, requests) with no notion of sharding or of
a mesh, so neither could state a resharding between two `#fusion.sharding`s.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment.dialects.fusion import IntList, ShardingAttr, int_list
from allotment.dialects.fusion_rules import type_name

REDUCTION_KINDS = ("sum", "prod", "max", "min", "mean")
"""Reductions a partial result can be completed with (`mean`: a sum divided by the devices)."""


def _sharding(t: Attribute) -> ShardingAttr | None:
    enc = t.encoding if isinstance(t, TensorType) else None
    return enc if isinstance(enc, ShardingAttr) else None


def _mesh(s: ShardingAttr | None) -> str | None:
    return None if s is None else s.mesh.root_reference.data


class CommOp(IRDLOperation, ABC):
    """One tensor in, the same tensor resharded out: same global shape and element type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @property
    def source(self) -> ShardingAttr | None:
        """The input's sharding (None: whole on every rank)."""
        return _sharding(self.input.type)

    @property
    def target(self) -> ShardingAttr | None:
        """The result's sharding (None: whole on every rank)."""
        return _sharding(self.result.type)

    def verify_(self) -> None:
        a, b = self.input.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        if a.element_type != b.element_type or tuple(a.get_shape()) != tuple(b.get_shape()):
            raise VerifyException(
                f"{self.name} keeps the global tensor: {type_name(a)} and {type_name(b)} differ "
                "in shape or element type"
            )
        self.verify_shardings(self.source, self.target)

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        """The op's rule for its two shardings."""


def _same_mesh(op: str, src: ShardingAttr | None, dst: ShardingAttr | None) -> tuple[ShardingAttr, ShardingAttr]:
    if src is None or dst is None or _mesh(src) != _mesh(dst):
        raise VerifyException(f"{op} works within one mesh: input and result must be sharded on the same mesh")
    return src, dst


def _changed_dims(src: ShardingAttr, dst: ShardingAttr) -> list[int]:
    """The dims whose mesh axes differ between the two shardings, in order."""
    return [d for d, (a, b) in enumerate(zip(src.axes, dst.axes)) if a != b]


class _ReducingOp(CommOp, ABC):
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase)
    custom_directives = (IntList,)
    assembly_format = "$input $kind `over` custom<IntList>($axes) attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute, kind: str, axes: Sequence[int]) -> None:
        super().__init__(
            operands=[input], result_types=[result_type],
            properties={"kind": StringAttr(kind), "axes": int_list(axes)},
        )

    @property
    def axis_list(self) -> list[int]:
        return [int(a) for a in self.axes.get_values()]

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        if self.kind.data not in REDUCTION_KINDS:
            raise VerifyException(f"reduction kind '{self.kind.data}' is not one of {', '.join(REDUCTION_KINDS)}")
        if not self.axis_list:
            raise VerifyException(f"{self.name} reduces over at least one mesh axis")
        src, dst = _same_mesh(self.name, src, dst)
        used = {a for dim in src.axes for a in dim}
        if used & set(self.axis_list):
            raise VerifyException(
                f"the partial input must be whole along the reduced mesh axes {self.axis_list}"
            )


@irdl_op_definition
class AllReduceOp(_ReducingOp):
    """Completes a partial result on every device: `kind` over the mesh `axes`."""

    name = "comm.all_reduce"

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        super().verify_shardings(src, dst)
        if src != dst:
            raise VerifyException("comm.all_reduce keeps the sharding: input and result types must be equal")


@irdl_op_definition
class ReduceScatterOp(_ReducingOp):
    """Completes a partial result and splits one dim over the reduced mesh `axes`."""

    name = "comm.reduce_scatter"

    @property
    def scatter_dim(self) -> int:
        src, dst = self.source, self.target
        assert src is not None and dst is not None
        return _changed_dims(src, dst)[0]

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        super().verify_shardings(src, dst)
        assert src is not None and dst is not None
        changed = _changed_dims(src, dst)
        if len(changed) != 1 or dst.axes[changed[0]] != self.axis_list or src.axes[changed[0]]:
            raise VerifyException(
                f"comm.reduce_scatter splits exactly one whole dim over the reduced axes {self.axis_list}"
            )


class _MovingOp(CommOp, ABC):
    """A comm op whose only operand is its input and whose only change is the sharding
    (all_gather, shard, transfer): `comm.shard %x : tensor<...> -> tensor<...>`."""

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[input], result_types=[result_type])


@irdl_op_definition
class AllGatherOp(_MovingOp):
    """Makes every split dim whose result is whole ([]) whole on every device of the mesh."""

    name = "comm.all_gather"

    @property
    def gathered_dims(self) -> list[int]:
        src, dst = self.source, self.target
        assert src is not None and dst is not None
        return _changed_dims(src, dst)

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        src, dst = _same_mesh(self.name, src, dst)
        changed = _changed_dims(src, dst)
        if not changed or any(dst.axes[d] for d in changed):
            raise VerifyException("comm.all_gather makes split dims whole: each changed dim's result axes must be []")


@irdl_op_definition
class ShardOp(_MovingOp):
    """Each device keeps its own slice of a whole tensor; nothing is sent."""

    name = "comm.shard"

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        if dst is None:
            raise VerifyException("comm.shard needs a sharded result")
        if src is not None:
            if _mesh(src) != _mesh(dst):
                raise VerifyException("comm.shard works within one mesh (comm.transfer moves between meshes)")
            if any(a and a != b for a, b in zip(src.axes, dst.axes)):
                raise VerifyException("comm.shard only splits whole dims; a split dim must stay as it is")


@irdl_op_definition
class TransferOp(_MovingOp):
    """A whole tensor moves from the devices of one mesh to those of another
    (None: every rank): point-to-point sends, a broadcast to a larger mesh."""

    name = "comm.transfer"

    def verify_shardings(self, src: ShardingAttr | None, dst: ShardingAttr | None) -> None:
        if _mesh(src) == _mesh(dst):
            raise VerifyException("comm.transfer moves a tensor between two different meshes")
        for s in (src, dst):
            if s is not None and any(s.axes):
                raise VerifyException("comm.transfer moves whole tensors: input and result must not be split")


COMM_OPS = (AllGatherOp, ReduceScatterOp, AllReduceOp, ShardOp, TransferOp)

Comm = Dialect("comm", list(COMM_OPS), [])
