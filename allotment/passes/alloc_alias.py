"""`alloc-alias`: buffers that share memory by design: concat without copies, and
in-place outputs that write straight into the input they overwrite.

First, every `cat` whose operands this fusion computes is rewritten so its
producers write slices of the cat's buffer (`concat_in_place.py`). Then the
in-place outputs:

A fusion declares an in-place output with a result attribute naming the
argument it overwrites (nvFuser's `add_output(out, alias_input=inp)`):

```mlir
func.func @step(%p: tensor<?xf32>, %g: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}) {
```

Runs on allocated functions (after `fusion-allocate`, before `alloc-plan`).
For each such result it makes the kernel that writes the result's buffer
write the argument instead, and erases the buffer, when that is safe:

- the result's type is the argument's type (element type and static
  extents); each `?` extent gets an `alloc.check eq` against the argument's;
- the result is a buffer of this function (not a view, not an argument)
  written by exactly one kernel;
- that kernel reads the argument only elementwise at the same index (a
  `pointwise` or `normalization` kernel whose entry argument for it has the
  output's shape and feeds only elementwise ops), so every element is read
  before the same program overwrites it;
- no kernel reads the argument after it is overwritten (nvFuser issue 2999).
  Where one would, the writer is moved after the last such reader when
  nothing in between needs the writer's results; otherwise the plan keeps the
  separate buffer and copies it into the argument with a final pointwise
  kernel, once every reader is done.

In every case the function returns the argument, so the caller sees the new
values in the tensor it passed. The kernel and copy decisions are in the IR
(FileCheck: `tests/filecheck/passes/alloc-alias/`); the pass records which it
took on the result (`alloc.alias = "in_place"`, `"copy"` or `"reordered"`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from allotment.analysis.liveness import view_root
from allotment.diagnostics import located_message
from allotment.dialects import alloc, fusion
from allotment.dialects.fusion import ALIAS_ATTR
from allotment.dialects.fusion_rules import type_name
from allotment.errors import VerifyError
from allotment.passes.alloc_stage import allocated_definitions
from allotment.passes.concat_in_place import write_cats_in_place
from allotment.passes.kernels import copy_kernel as _copy_kernel

DECISION_ATTR = "alloc.alias"


def aliased_results(f: func.FuncOp) -> dict[int, int]:
    """{result index: argument index} from the results' `fusion.alias_input` attributes.

    Raises a located VerifyError for an index out of range, a non-integer, an
    argument named twice, a result or argument that is no tensor (or buffer), or a
    result whose type is not the argument's."""
    out: dict[int, int] = {}
    if f.res_attrs is None:
        return out
    inputs, outputs = f.function_type.inputs.data, f.function_type.outputs.data
    for i, attrs in enumerate(f.res_attrs.data):
        attr = attrs.data.get(ALIAS_ATTR)
        if attr is None:
            continue
        if not isinstance(attr, IntegerAttr):
            raise VerifyError(located_message(f, f"result #{i}: {ALIAS_ATTR} must be an integer argument index"))
        k = attr.value.data
        if not 0 <= k < len(inputs):
            raise VerifyError(located_message(f, f"result #{i}: {ALIAS_ATTR} = {k} names no argument "
                                                 f"(the function takes {len(inputs)})"))
        if k in out.values():
            raise VerifyError(located_message(f, f"result #{i}: argument #{k} is overwritten by two results"))
        a, r = inputs[k], outputs[i]
        if _shape_and_element(a) is None or _shape_and_element(r) is None:
            raise VerifyError(located_message(f, f"result #{i} ({type_name(r)}) cannot overwrite argument #{k} "
                                                 f"({type_name(a)}): an in-place output is a tensor written into "
                                                 "a tensor argument"))
        if _shape_and_element(a) != _shape_and_element(r):
            raise VerifyError(located_message(f, f"result #{i} ({r}) cannot overwrite argument #{k} ({a}): "
                                                 "an in-place output has its input's element type and shape"))
        out[i] = k
    return out


def _shape_and_element(t: object) -> tuple | None:
    if isinstance(t, TensorType | MemRefType):
        return (tuple(t.get_shape()), t.element_type)
    return None


def _writers(root: SSAValue, ops: list[Operation]) -> list[alloc.KernelOp]:
    return [op for op in ops if isinstance(op, alloc.KernelOp) and any(view_root(v) is root for v in op.outs)]


def _readers(root: SSAValue, ops: list[Operation]) -> list[alloc.KernelOp]:
    return [op for op in ops if isinstance(op, alloc.KernelOp)
            and any(view_root(v) is root for v in op.ins if isinstance(v.type, MemRefType))]


def _reads_elementwise(kernel: alloc.KernelOp, arg: SSAValue, out: SSAValue) -> bool:
    """Whether `kernel` reads `arg` only elementwise at the index it writes `out` at."""
    if kernel.kind.data not in ("pointwise", "normalization"):
        return False
    out_shape = tuple(out.type.get_shape())
    for value, block_arg in zip(kernel.ins, kernel.body.block.args):
        if value is not arg:
            if view_root(value) is arg:
                return False  # a view of the argument: other indices
            continue
        if not isinstance(block_arg.type, TensorType) or tuple(block_arg.type.get_shape()) != out_shape:
            return False
        if not all(isinstance(u.operation, fusion.ElementwiseOp | fusion.CastOp) for u in block_arg.uses):
            return False
    return True


def _depends_on(op: Operation, kernel: alloc.KernelOp) -> bool:
    """Whether `op` reads a buffer that `kernel` writes."""
    written = {view_root(v) for v in kernel.outs}
    return any(view_root(v) in written for v in op.operands if isinstance(v.type, MemRefType))


def _try_reorder(f: func.FuncOp, writer: alloc.KernelOp, late_readers: list[alloc.KernelOp]) -> bool:
    """Moves `writer` after its last late reader if no op in between needs its results."""
    ops = list(f.body.block.ops)
    start, stop = ops.index(writer), max(ops.index(r) for r in late_readers)
    if any(_depends_on(op, writer) for op in ops[start + 1: stop + 1]):
        return False
    writer.detach()
    f.body.block.insert_op_after(writer, ops[stop])
    return True


def _dim_checks(f: func.FuncOp, sizes: list[SSAValue], arg: BlockArgument, before: Operation) -> None:
    """`alloc.check eq` between each `?` extent of the output (its `index` values, in
    order of its dynamic dims) and the same dim of the argument it overwrites."""
    t = arg.type
    assert isinstance(t, MemRefType)
    dynamic = [d for d, e in enumerate(t.get_shape()) if e == DYNAMIC_INDEX]
    name = arg.name_hint or f"arg{arg.index}"
    for d, size in zip(dynamic, sizes):
        dim = _argument_dim(f, arg, d, before)
        if dim is size:
            continue  # the output is sized by this very extent
        check = alloc.CheckOp("eq", size, dim, f"in-place output into %{name}: dimension {d} must equal the input's")
        f.body.block.insert_op_before(check, before)


def _argument_dim(f: func.FuncOp, arg: BlockArgument, d: int, before: Operation) -> SSAValue:
    """A top-level `memref.dim` of `arg` at dim `d`: an existing one, or a new one before `before`."""
    for op in f.body.block.ops:
        if (isinstance(op, memref.DimOp) and op.source is arg and isinstance(op.index.owner, arith.ConstantOp)
                and op.index.owner.value.value.data == d):
            return op.result
    c = arith.ConstantOp(IntegerAttr(d, IndexType()))
    dim = memref.DimOp(arg, c.result)
    f.body.block.insert_op_before(c, before)
    f.body.block.insert_op_before(dim, before)
    return dim.result


def _output_sizes(value: SSAValue, before: Operation, f: func.FuncOp) -> list[SSAValue]:
    """The `index` values of `value`'s dynamic extents: its alloc's sizes, or `memref.dim`s."""
    if isinstance(value.owner, alloc.AllocOp):
        return list(value.owner.sizes)
    out = []
    for d, e in enumerate(value.type.get_shape()):
        if e == DYNAMIC_INDEX:
            c = arith.ConstantOp(IntegerAttr(d, IndexType()))
            dim = memref.DimOp(value, c.result)
            f.body.block.insert_op_before(c, before)
            f.body.block.insert_op_before(dim, before)
            out.append(dim.result)
    return out


def _decide(f: func.FuncOp, result: int, arg_index: int, resolve_hazards: bool = True) -> str:
    ret = f.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    value = ret.arguments[result]
    arg = f.body.block.args[arg_index]
    if value is arg:
        return "in_place"  # the output is the input, unchanged
    ops = list(f.body.block.ops)
    buffer = value.owner
    writers = _writers(value, ops) if isinstance(buffer, alloc.AllocOp) else []
    if not isinstance(buffer, alloc.AllocOp) or len(writers) != 1 or buffer.memory.data != alloc.MemorySpace.GLOBAL:
        return _copy(f, value, arg, ret, result)
    writer = writers[0]
    if not _reads_elementwise(writer, arg, value):
        return _copy(f, value, arg, ret, result)
    late = [r for r in _readers(arg, ops) if r is not writer and ops.index(r) > ops.index(writer)]
    decision = "in_place"
    if late and resolve_hazards:
        if not _try_reorder(f, writer, late):
            return _copy(f, value, arg, ret, result)
        decision = "reordered"
    _dim_checks(f, list(buffer.sizes), arg, buffer)
    buffer.result.replace_all_uses_with(arg)
    buffer.detach()
    buffer.erase()
    return decision


def _copy(f: func.FuncOp, value: SSAValue, arg: BlockArgument, ret: func.ReturnOp, result: int) -> str:
    """Keeps `value`'s buffer and copies it into `arg` after every other kernel."""
    names = {op.sym_name.data for op in f.body.block.ops if isinstance(op, alloc.KernelOp)}
    k = len(names)
    while f"k{k}_inplace" in names:
        k += 1
    _dim_checks(f, _output_sizes(value, ret, f), arg, ret)
    f.body.block.insert_ops_before(_copy_kernel(f"k{k}_inplace", value, arg), ret)
    ret.operands[result] = arg
    return "copy"


@dataclass(frozen=True)
class AllocAliasPass(ModulePass):
    """Makes each in-place output (`fusion.alias_input`) write its input, hazards resolved.

    Takes allocated functions only (`alloc_stage.require_allocated`): a function still in
    tensor form is refused with a located error, before anything is rewritten."""

    name = "alloc-alias"

    resolve_hazards: bool = True
    """Reorder or copy where a kernel would read an input after it is overwritten.
    `false` writes in place regardless: WRONG results where such a reader exists;
    it exists only so a test can show the hazard the default resolves."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in allocated_definitions(op, self.name):
            write_cats_in_place(f)
            aliases = aliased_results(f)
            if not aliases:
                continue
            res_attrs = list(f.res_attrs.data)
            for result, arg_index in aliases.items():
                decision = _decide(f, result, arg_index, self.resolve_hazards)
                attrs = dict(res_attrs[result].data)
                attrs[DECISION_ATTR] = StringAttr(decision)
                res_attrs[result] = DictionaryAttr(attrs)
            f.res_attrs = ArrayAttr(res_attrs)
