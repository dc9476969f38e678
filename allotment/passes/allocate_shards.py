"""Meshes and shards in `fusion-allocate`: the local shard of a sharded tensor.

A sharded tensor's buffer holds its local shard: static extents divided over the
mesh axes of each dimension (`view_extents.local_extent`; one that does not divide
evenly is an error unless the sharding is `uneven`), symbolic ones likewise with an
`alloc.check divisible` at entry where the split must be even. A kernel touching
sharded tensors computes its local shard: its clones get local types, and the ops
that hold their result's shape get local static shapes. `ShardRules` is a part of
`fusion_allocate._Allocator`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from allotment.dialects import alloc, fusion, sharding_rules
from allotment.extents import view_extents
from allotment.extents.symbolic import Const, Extent
from allotment.passes.allocate_errors import _fail, value_name


def _sharding(t: Attribute) -> fusion.ShardingAttr | None:
    enc = t.encoding if isinstance(t, TensorType) else None
    return enc if isinstance(enc, fusion.ShardingAttr) else None


class ShardRules:
    """Meshes, shard counts and local shapes and types (mixed into _Allocator)."""

    def mesh(self, sharding: fusion.ShardingAttr) -> fusion.MeshOp:
        name = sharding.mesh.root_reference.data
        if name not in self.meshes:
            found = SymbolTable.lookup_symbol(self.f, sharding.mesh)
            assert isinstance(found, fusion.MeshOp)
            self.meshes[name] = found
        return self.meshes[name]

    def shard_counts(self, sharding: fusion.ShardingAttr) -> list[int]:
        mesh = self.mesh(sharding)
        return [alloc.shard_count(mesh, axes) for axes in sharding.axes]

    def local_static_shape(self, t: TensorType, op: Operation | None = None) -> list[int]:
        """The static extents of a tensor's local shard (`view_extents.local_extent`)."""
        shape = list(t.get_shape())
        sharding = _sharding(t)
        if sharding is None:
            return shape
        out = []
        for d, (e, k) in enumerate(zip(shape, self.shard_counts(sharding))):
            if e == DYNAMIC_INDEX:
                out.append(e)
            elif not view_extents.shard_divides(e, k, sharding.allows_uneven):
                raise _fail(
                    op or self.f,
                    f"dimension {d} of {t} has extent {e}, which does not divide "
                    f"evenly over {k} shards (mark the sharding `uneven` to allow it)",
                )
            else:
                out.append(view_extents.local_extent(e, k, sharding.allows_uneven))
        return out

    def local_extents(self, value: SSAValue) -> tuple[Extent, ...]:
        """The extents of the local shard of a tensor (global ones if unsharded)."""
        t = value.type
        extents = self.shapes.shape(value)
        sharding = _sharding(t)
        if sharding is None:
            return extents
        out = []
        for d, (e, k) in enumerate(zip(extents, self.shard_counts(sharding))):
            if k != 1 and not sharding.allows_uneven and not isinstance(e, Const):
                self.checks.append(
                    ("divisible", e, Const(k), f"{value_name(value)} dimension {d} ({e}) must divide "
                     f"evenly over {k} shards")
                )
            out.append(view_extents.local_extent_sym(e, k, sharding.allows_uneven))
        return tuple(out)

    def local_type(self, t: Attribute, op: Operation | None = None) -> Attribute:
        """A sharded tensor type as its local shard's: local static extents, no encoding."""
        if _sharding(t) is None:
            return t
        assert isinstance(t, TensorType)
        return TensorType(t.element_type, self.local_static_shape(t, op))

    def _localize(self, op: Operation, clone: Operation) -> None:
        """Gives a kernel op's clone its local result types, and local static shapes to the
        ops that hold their result's shape (broadcast_in_dim, expand, full)."""
        tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
        if any(_sharding(v.type) is None for v in tensors):
            raise _fail(op, "a kernel mixes sharded and unsharded tensors; run fusion-propagate-sharding "
                            "and fusion-insert-resharding first")
        if isinstance(op, fusion.SetOp) and not sharding_rules.equivalent(
            _sharding(op.input.type), _sharding(op.result.type)
        ):
            raise _fail(op, "fusion.set reshards its input; run fusion-insert-resharding first")
        for r in clone.results:
            if _sharding(r.type) is not None:
                Rewriter.replace_value_with_new_type(r, self.local_type(r.type, op))
        prop = {fusion.BroadcastInDimOp: "static_shape", fusion.ExpandOp: "static_shape", fusion.FullOp: "static_sizes"}
        name = next((p for cls, p in prop.items() if isinstance(op, cls)), None)
        sharding = _sharding(op.results[0].type) if op.results else None
        if name is None or sharding is None:
            return
        global_shape = list(op.results[0].type.get_shape())
        local_shape = self.local_static_shape(op.results[0].type, op)
        for d, (g, axes) in enumerate(zip(global_shape, sharding.axes)):
            if axes and g == DYNAMIC_INDEX:
                raise _fail(op, f"dimension {d} is split over the mesh but its extent is dynamic; give it a "
                                "static extent")
        clone.properties[name] = fusion.int_list(local_shape)
