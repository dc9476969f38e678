"""Building fusion ops for `fd.ops`: the generic builder, then the inferred result types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation

from allotment.dialects import fusion


def make_op(
    cls: type[IRDLOperation],
    operands: Sequence[Any],
    properties: dict[str, Attribute] | None = None,
    result_types: Sequence[Attribute] | None = None,
) -> IRDLOperation:
    """Builds a fusion op with the generic builder, then gives it its inferred result types."""
    op = cls.__new__(cls)
    placeholder = TensorType(i1, [])
    IRDLOperation.__init__(
        op,
        operands=list(operands),
        result_types=list(result_types or [placeholder]),
        properties=properties or {},
    )
    fusion.retype_results(op)  # type: ignore[arg-type]
    return op
