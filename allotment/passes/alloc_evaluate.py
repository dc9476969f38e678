"""`alloc-evaluate{shapes="x=8x4096,w=4096"}`: specializes sizes to concrete shapes.

Runs on allocated functions (after `fusion-allocate`). Given each argument's
buffer shape (the local shard's, for sharded arguments) and the value of each
`index` or integer scalar argument (in `shapes` as `n=5`, or in
`scalars="n=5,m=-2"`, which takes negative values too), it replaces every size computation (`memref.dim` of the
arguments and the `arith` on top of it) by `arith.constant`s, checks the
`alloc.check`s (a failing one is a compile-time error naming both values, a
passing one is erased), and leaves every `alloc.alloc` with constant sizes, so
that a concrete plan can be printed and FileChecked without running anything.
Size arithmetic means what `extents.size_arith` says (a zero divisor or an
`index` overflow is an error naming the op); a buffer with a negative extent,
or more bytes than a 64-bit index holds, is an error naming the alloc. Errors
are located (`file:line:col: error: ...`) where the op came from parsed text.
With `function=name`, only that function is evaluated; the others are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import PassFailedException

from allotment.analysis.size_eval import (
    SizeError,
    argument_values,
    buffer_sizes,
    evaluate_index_values,
    parse_scalar_spec,
    parse_shape_spec,
)
from allotment.diagnostics import SOURCE_SPANS, located_message
from allotment.dialects import alloc
from allotment.passes.alloc_stage import require_allocated


@dataclass(frozen=True)
class AllocEvaluatePass(ModulePass):
    """Folds every size of allocated functions to a constant for given shapes.

    Takes allocated functions only (`alloc_stage.require_allocated`): a function it would
    evaluate that is still in tensor form is refused with a located error."""

    name = "alloc-evaluate"

    shapes: str = ""
    function: str = ""
    scalars: str = ""
    """Values of `index` and integer scalar arguments, `n=5,m=-2` (negative ones
    too, which `shapes` refuses)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            shapes: dict[str, tuple[int, ...] | int] = dict(parse_shape_spec(self.shapes))
            scalars = parse_scalar_spec(self.scalars)
        except SizeError as e:
            raise PassFailedException(f"alloc-evaluate: {e}") from None
        both = sorted(set(shapes) & set(scalars))
        if both:
            raise PassFailedException(f"alloc-evaluate: {', '.join(both)} given in both shapes and scalars")
        shapes.update(scalars)
        named = [
            f for f in op.walk()
            if isinstance(f, func.FuncOp) and not f.is_declaration
            and (not self.function or f.sym_name.data == self.function)
        ]
        for f in named:
            require_allocated(f, self.name)
        funcs = [
            f for f in named
            if any(isinstance(t, MemRefType) for t in f.function_type.inputs.data + f.function_type.outputs.data)
        ]
        if not funcs and self.function:
            raise PassFailedException(f"alloc-evaluate: no allocated function named @{self.function}")
        if not funcs:
            raise PassFailedException("alloc-evaluate: no allocated function to evaluate (run fusion-allocate first)")
        for f in funcs:
            try:
                values = evaluate_index_values(f, argument_values(f, shapes))
                buffer_sizes(f, values)  # every buffer's extents are >= 0 and its bytes fit
            except SizeError as e:
                raise _fail(f, e) from None
            _fold(f, values)


def _fail(f: func.FuncOp, e: SizeError) -> PassFailedException:
    """`file:line:col: error: <op>: alloc-evaluate: @f: ...` where the op at fault
    came from parsed text, `alloc-evaluate: @f: ...` otherwise."""
    message = f"alloc-evaluate: @{f.sym_name.data}: {e}"
    if e.op is not None and e.op in SOURCE_SPANS:
        return PassFailedException(located_message(e.op, message))
    return PassFailedException(message)


def _fold(f: func.FuncOp, values: dict) -> None:
    block = f.body.block
    constants: dict[int, arith.ConstantOp] = {}
    first = block.first_op
    for v, n in values.items():
        # index arguments too: an alloc sized directly by one gets a constant
        if isinstance(v.owner, arith.ConstantOp) or not isinstance(v.type, IndexType):
            continue
        if n not in constants:
            c = arith.ConstantOp(IntegerAttr(n, IndexType()))
            c.result.name_hint = f"c{n}" if n >= 0 else f"cm{-n}"
            block.insert_op_before(c, first)
            constants[n] = c
        v.replace_all_uses_with(constants[n].result)
    for op in list(block.ops):
        if isinstance(op, alloc.CheckOp):
            block.erase_op(op)
    for op in reversed(list(block.ops)):
        if isinstance(op, arith.ConstantOp | memref.DimOp) or op.dialect_name() == "arith":
            if is_trivially_dead(op):
                block.erase_op(op)
