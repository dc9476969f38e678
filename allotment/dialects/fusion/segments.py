"""Segments: kernel regions at the tensor level (`fusion.segment`, `fusion.yield`)."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator
from xdsl.utils.exceptions import VerifyException

from allotment.dialects.fusion_rules import type_name

# --------------------------------------------------------------------------- #
# Segments (kernel regions at the tensor level)                               #
# --------------------------------------------------------------------------- #


SEGMENT_KINDS = ("pointwise", "reduction", "normalization", "scan", "sort", "view", "library", "collective",
                 "inner_outer", "aten")


def _types(types: Sequence[Attribute]) -> str:
    """`f32, tensor<4xf32>`: types as messages spell them."""
    return ", ".join(map(type_name, types))


class YieldValues(IRDLOperation, ABC):
    """A terminator whose operands are the values its region gives back: the one
    definition of `fusion.yield` and `alloc.yield`, which stay two ops because each
    belongs in its own parent (a segment's results, a kernel's outs) and its own dialect."""

    values = var_operand_def()
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class YieldOp(YieldValues):
    """Ends a `fusion.segment` body: its operands are the segment's results."""

    name = "fusion.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(SegmentOp)))


@irdl_op_definition
class SegmentOp(IRDLOperation):
    """A group of fusion ops that one generated kernel (or one library call) executes.

    `fusion-segment` produces these. The body is isolated from above: every value
    it uses comes in through the operands (tensors and scalars), which the entry
    block's arguments stand for; constants are cloned inside. The body yields the
    segment's results: the values used after the segment or returned.

    Kinds and what each body may contain:
    - `pointwise`: elementwise ops, cast, set, full, iota, pad, cat and the
      broadcast-like views (broadcast_in_dim, expand, squeeze) of values computed
      inside; one iteration domain (the shape of its largest result). Values
      inside may also be off that domain: slices (static steps), permutes,
      reshapes that only insert or remove size-1 dims, pads and cats of values
      computed inside are index arithmetic on the domain's indices, and the ops
      they read are recomputed at those indices; no buffer holds them.
    - `reduction`: one or more reductions over the same dims of one domain, with
      pointwise ops before them (on that domain) and after them (on the reduced
      domain).
    - `normalization`: a reduction kind whose reduced values are broadcast back
      and consumed by pointwise ops on the full domain (RMSNorm, LayerNorm,
      softmax); its reduced dims are the trailing dims of the domain.
    - `inner_outer`: a normalization (or reduction) over the last dim of a
      [rows..., N] domain (row reductions, keeping the rows) together with column
      reductions of values on the same domain (sums or means of floats over every
      row dim, keeping the last dim: RMSNorm and LayerNorm backward's dw, db),
      made only where the row fits on chip (`analysis/inner_outer.py`). The kernel
      reads each row once: it computes the row reductions' outputs and adds the
      row's column terms to partial sums it keeps on chip, one [programs, N]
      partials row per program; a second small kernel reduces the partials in a
      fixed order and computes the column reductions' outputs.
    - `scan`: cumsum, cumprod, cummax, cummin along one dim of one domain, with
      pointwise ops before them (recomputed at the scan's indices) and after them
      (on the same domain); the kernel streams each row once in chunks, carrying
      the running value from chunk to chunk.
    - `sort`: one argsort or topk; the kernel sorts each whole row in registers.
    - `view`: one view op (reshape, permute, slice, broadcast_in_dim, expand,
      squeeze) of a value computed elsewhere; no kernel, no allocation. A view
      is a segment (its source materialized in a buffer) only where a consumer
      needs that buffer: a view of a function argument (a free strided view);
      a view that is returned or used by more than one segment or by a library
      call; a view of a value that is itself needed in memory (returned, or
      used by several segments); a reshape that merges or splits dims, or a
      slice with a dynamic step (these need div/mod or run-time strides in
      index arithmetic). A reduction's result read by another segment is in
      a buffer (a kernel holds its own rows' reduced values only); views of it
      in the reading kernel are index arithmetic on that buffer.
    - `library`: one matmul or linear, executed by a library call.
    - `aten`: one `fusion.aten`, a call of that ATen operator (out= into its buffers,
      or buffers the call makes: `alloc.AllocOp`'s `by_call`).
    - `collective`: one `comm` op (a resharding between devices), executed by
      torch.distributed (`dialects/comm.py`).

    Syntax: `%r0, %r1 = fusion.segment "k0" kind (%a, %b) : (Ta, Tb) -> (Tr0, Tr1)
    attributes {...}? { ^bb0(%a_1: Ta, %b_1: Tb): ... fusion.yield %v0, %v1 : Tr0, Tr1 }`
    (one result type may go without parentheses).
    """

    name = "fusion.segment"

    inputs = var_operand_def()
    outputs = var_result_def()
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove())

    def __init__(
        self,
        name: str,
        kind: str,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={"sym_name": StringAttr(name), "kind": StringAttr(kind)},
            regions=[body],
        )

    def verify_(self) -> None:
        if self.kind.data not in SEGMENT_KINDS:
            raise VerifyException(
                f"segment kind '{self.kind.data}' is not one of {', '.join(SEGMENT_KINDS)}"
            )
        block = self.body.block
        arg_types = [a.type for a in block.args]
        in_types = [v.type for v in self.inputs]
        if arg_types != in_types:
            raise VerifyException(f"the body's arguments ({_types(arg_types)}) must match the inputs ({_types(in_types)})")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("the body must end with fusion.yield")
        yielded = [v.type for v in last.values]
        out_types = [r.type for r in self.outputs]
        if yielded != out_types:
            raise VerifyException(f"fusion.yield gives ({_types(yielded)}) but the segment returns ({_types(out_types)})")

    @classmethod
    def parse(cls, parser: Parser) -> SegmentOp:
        name = parser.parse_str_literal()
        kind = parser.parse_identifier()
        pos = parser.pos
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        in_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        if parser.parse_optional_punctuation("("):
            out_types: list[Attribute] = []
            if not parser.parse_optional_punctuation(")"):
                out_types = parser.parse_comma_separated_list(
                    parser.Delimiter.NONE, parser.parse_type
                )
                parser.parse_punctuation(")")
        else:
            out_types = [parser.parse_type()]
        inputs = parser.resolve_operands(operands, in_types, pos)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(name, kind, inputs, out_types, body)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f' "{self.sym_name.data}" {self.kind.data} (')
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(") : (")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(") -> ")
        out_types = [r.type for r in self.outputs]
        if len(out_types) == 1:
            printer.print_attribute(out_types[0])
        else:
            printer.print_string("(")
            printer.print_list(out_types, printer.print_attribute)
            printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)
