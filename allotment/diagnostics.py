"""Source-located verifier diagnostics for text IR.

xDSL's parser does not record where an operation came from unless the text
says `loc(...)`. `LocatedParser` remembers the span of each parsed operation
(outside the IR, so printing is unchanged), and `verify_located` verifies a
module op by op, turning the first failure into a diagnostic that starts with
`file:line:col: error:` and quotes the offending line.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import IO
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.lexer import Span

from allotment.errors import VerifyError

SOURCE_SPANS: WeakKeyDictionary[Operation, Span] = WeakKeyDictionary()
"""Where each operation parsed by a `LocatedParser` starts in its source."""


class LocatedParser(Parser):
    """A Parser that records the source span of every operation it parses."""

    line_offset: int = 0

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        try:
            op = super().parse_operation()
        except VerifyException as e:
            # An operand or result that breaks the op's declared constraints is
            # found while the op is built: report it where the op starts.
            self.raise_error(f"invalid operation: {e}", span)
        if self.line_offset:
            span = dataclasses.replace(span, line_offset=self.line_offset)
        SOURCE_SPANS[op] = span
        return op


@dataclass(frozen=True)
class LocatedMLIRFrontend(MLIRFrontend):
    """The `mlir` frontend, parsing with a `LocatedParser`."""

    line_offset: int = 0

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "input") -> ModuleOp:
        parser = LocatedParser(ctx, input.read(), input_name)
        parser.line_offset = self.line_offset
        return parser.parse_module(not self.no_implicit_module)


def located_message(op: Operation, message: str) -> str:
    """`file:line:col: error: <op name>: <message>`, with the source line quoted."""
    span = SOURCE_SPANS.get(op)
    if span is None:
        return f"error: {op.name}: {message}"
    loc = span.get_location()
    content = span.input.content
    text = content.decode() if isinstance(content, bytes) else content
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.start)
    source_line = text[line_start : line_end if line_end >= 0 else len(text)]
    caret = " " * (span.start - line_start) + "^"
    return f"{loc}: error: {op.name}: {message}\n{source_line}\n{caret}"


def verify_located(module: Operation) -> None:
    """Verifies `module`; the first op that fails raises a located `allotment.VerifyError`."""
    try:
        module.verify()
        return
    except DiagnosticException:
        pass  # find the op at fault, in order, and locate it
    for op in module.walk():
        try:
            op.verify_()
        except VerifyException as e:
            raise VerifyError(located_message(op, str(e))) from None
    try:
        module.verify()
    except VerifyException as e:
        raise VerifyError(str(e)) from None
