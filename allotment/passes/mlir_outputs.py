"""The kernel's outputs in `alloc-to-mlir`'s kernel lowering: stores, allocas, library matmul.

Each group of outputs is written by one loop nest over the first output's extents
(static extents 1 take no loop), storing every output's element at each index; the
in-place outputs of a group are `cf.assert`ed to have the same extents. A kernel's
on-chip buffers become `memref.alloca`s; a library kernel that is one f32 2-D
matmul of two ins becomes `linalg.fill` + `linalg.matmul`. `OutputLoops` is a part
of `mlir_kernel.KernelEmitter`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import cf, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, StringAttr, f32
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, BlockArgument, SSAValue

from allotment.dialects import alloc, fusion
from allotment.passes import mlir_scalar as sc
from allotment.passes.ssa_names import ssa_name


class OutputLoops:
    """The loops that store a kernel's outputs, and its buffers (mixed into KernelEmitter)."""

    def _out_extents(self, i: int) -> list[SSAValue]:
        out = self.kernel.outs[i]
        ext = []
        for d, e in enumerate(out.type.get_shape()):
            if e != DYNAMIC_INDEX:
                ext.append(self.index(e))
            else:
                key = (out, d)
                if key not in self.extents:
                    self.extents[key] = self.emit(memref.DimOp(out, self.index(d))).results[0]
                ext.append(self.extents[key])
        return ext

    def _same_extents(self, group: list[int]) -> None:
        """`cf.assert`s that the outputs of a group have the first one's extents."""
        first = self._out_extents(group[0])
        for i in group[1:]:
            for d, (a, b) in enumerate(zip(first, self._out_extents(i))):
                if a is not b:
                    same = self.cmp("eq", a, b)
                    self.emit(cf.AssertOp(same, f"kernel {self.kernel.sym_name.data}: in-place outputs "
                                                f"#{group[0]} and #{i} differ in dimension {d}"))

    def _store_group(self, group: list[int], yielded: list[SSAValue]) -> None:
        extents = self._out_extents(group[0])

        def nest(k: int, idx: list[SSAValue]) -> Sequence[SSAValue]:
            if k == len(extents):
                values = [self.elem(yielded[i], idx) for i in group]
                for i, v in zip(group, values):
                    self.emit(memref.StoreOp.get(v, self.kernel.outs[i], list(idx)))
                return []
            if self.known(extents[k]) == 1:
                return nest(k + 1, [*idx, self.index(0)])
            return self.loop(extents[k], [], lambda i, _c: (nest(k + 1, [*idx, i]), [])[1], uses=idx)

        nest(0, [])

    def _alloca(self, op: alloc.AllocOp) -> None:
        t = op.result.type
        new = memref.AllocaOp.create(operands=list(op.sizes), result_types=[t],
                                     properties={"operandSegmentSizes": _segments(len(op.sizes), 0)})
        if op.buffer_name is not None:
            new.memref.name_hint = ssa_name(op.buffer_name.data)  # a buffer's name is data
        new.attributes["alloc.memory"] = StringAttr(op.memory_space.value)
        self._insert(0, new)

    def _library_matmul(self) -> bool:
        """A library kernel that is one f32 2-D matmul of two ins into a plain out:
        `linalg.fill` 0 + `linalg.matmul` on the buffers."""
        if self.kernel.kind.data != "library":
            return False
        ops = [o for o in self.body.ops if not isinstance(o, alloc.YieldOp)]
        if len(ops) != 1 or not isinstance(ops[0], fusion.MatmulOp) or len(self.kernel.outs) != 1:
            return False
        op = ops[0]
        a, b, out = op.lhs, op.rhs, self.kernel.outs[0]
        if not all(isinstance(x, BlockArgument) and x in self.args for x in (a, b)):
            return False
        bufs = [self.args[a], self.args[b], out]
        if any(len(x.type.get_shape()) != 2 or x.type.element_type != f32 for x in bufs):
            return False
        zero = sc.constant(self.emit, 0.0, f32)
        self._insert(0, linalg.FillOp((zero,), (out,), ()))
        self._insert(0, linalg.MatmulOp((bufs[0], bufs[1]), (out,)))
        return True


def _segments(*sizes: int) -> Attribute:
    from xdsl.dialects.builtin import DenseArrayBase, i32

    return DenseArrayBase.from_list(i32, list(sizes))
