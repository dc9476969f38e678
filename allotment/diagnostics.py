"""Source-located diagnostics for text IR.

xDSL's parser does not record where an operation came from unless the text
says `loc(...)`. `LocatedParser` remembers the span of each parsed operation
(outside the IR, so printing is unchanged), and `verify_located` verifies a
module op by op, turning the first failure into a diagnostic that starts with
`file:line:col: error:` and quotes the offending line. `Diagnostic` is one such
error as data (what `allot-opt --verify-diagnostics` compares with the
`expected-error` annotations).

The parser refuses regions nested deeper than `allotment.limits.MAX_REGION_DEPTH`
with a located `ParseError`, before xDSL's recursive descent could exhaust the stack.
"""

from __future__ import annotations

import dataclasses
import gc
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp, TensorType
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Attribute, Operation, Region, SSAValue, TypeAttribute
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.exceptions import ParseError as XdslParseError
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import KIND_BY_PUNCTUATION_SPELLING, MLIRToken, MLIRTokenKind, PunctuationSpelling

from allotment.errors import VerifyError
from allotment.extents.size_arith import INDEX_MAX
from allotment.lexer import FastLexer
from allotment.limits import MAX_ATTRIBUTE_DEPTH, MAX_REGION_DEPTH, call_with_deep_stack

_SHAPED = r"(?:tensor|memref)<(?:(?:\?|[0-9]+)x)*(?:[fiu][0-9]+|bf16|tf32|index)>"
SIMPLE_SHAPED_TYPE = {str: re.compile(_SHAPED), bytes: re.compile(_SHAPED.encode())}
"""The text of a tensor or memref type of extents and a scalar element type, nothing
else (no encoding, layout or memory space): `LocatedParser` parses each such text
once and reuses the type (xDSL's lexer spends about 250 us on one)."""

SOURCE_SPANS: WeakKeyDictionary[Operation, Span] = WeakKeyDictionary()
"""Where each operation parsed by a `LocatedParser` starts in its source."""


@dataclass(frozen=True)
class Diagnostic:
    """One error at a place in a source: `file:line:col: error: message` (line 0: no location)."""

    file: str
    line: int
    column: int
    message: str
    source_line: str = ""
    caret: str = ""

    def __str__(self) -> str:
        if not self.line:  # no location known
            return f"error: {self.message}"
        head = f"{self.file}:{self.line}:{self.column}: error: {self.message}"
        return f"{head}\n{self.source_line}\n{self.caret}" if self.caret else head


def span_diagnostic(span: Span, message: str) -> Diagnostic:
    """The diagnostic `message` at `span` (its line quoted, carets under the span).

    Costs one scan of the source up to the span (the line number), done once per error.
    """
    loc = span.get_location()
    line_start = span.input.get_start_of_line(span.start)
    line_end = span.input.get_end_of_line(span.start)
    line = span.input.content[line_start:line_end]
    start = span.start - line_start
    end = min(span.end - line_start, len(line))
    if isinstance(line, bytes):  # positions in bytes: count characters for the display
        start, end = len(line[:start].decode(errors="replace")), len(line[:end].decode(errors="replace"))
        line = line.decode(errors="replace")
    source_line = line.removesuffix("\r")
    caret = " " * start + "^" * max(1, min(end, len(source_line)) - start)
    return Diagnostic(loc.file, loc.line, loc.col, message, source_line, caret)


def parse_error_diagnostic(e: XdslParseError) -> Diagnostic:
    """xDSL's parse error as a `Diagnostic` (same location and message)."""
    return span_diagnostic(e.span, e.msg)


def op_diagnostic(op: Operation, message: str, name_op: bool = True) -> Diagnostic | None:
    """`<op name>: <message>` (`<message>` if not `name_op`) where `op` was parsed,
    or None for an op with no recorded span."""
    span = SOURCE_SPANS.get(op)
    if span is None:
        return None
    d = span_diagnostic(span, f"{op.name}: {message}" if name_op else message)
    return dataclasses.replace(d, caret=d.caret[: d.caret.index("^") + 1])


def located_message(op: Operation, message: str) -> str:
    """`file:line:col: error: <op name>: <message>`, with the source line quoted."""
    d = op_diagnostic(op, message)
    return str(d) if d is not None else f"error: {op.name}: {message}"


def message_at(op: Operation | None, message: str) -> str:
    """`file:line:col: error: <message>` with the source line quoted, where `op` was
    parsed; `message` alone otherwise (for a message that names the op itself)."""
    d = op_diagnostic(op, message, name_op=False) if op is not None else None
    return str(d) if d is not None else message


class LocatedParser(Parser):
    """A Parser that records the source span of every operation it parses.

    It also counts how deep regions nest and refuses more than `MAX_REGION_DEPTH`
    (a located `ParseError` at the region's `{`), and how deep types and
    attributes nest, refusing more than `MAX_ATTRIBUTE_DEPTH`.

    A type whose text matches `SIMPLE_SHAPED_TYPE` is parsed by xDSL the first time
    and looked up by its text after that (types are immutable values).
    """

    line_offset: int = 0
    region_depth: int = 0
    attribute_depth: int = 0

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        # Allotment's lexer (xDSL's tokens and errors; faster; no exponential strings),
        # from the first token on: xDSL's Parser builds its own lexer over the input.
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        self._parser_state = ParserState(FastLexer(Input(text, name)))
        self._shaped_types: dict[str | bytes, TypeAttribute] = {}
        self._shaped_type_text = SIMPLE_SHAPED_TYPE[type(self.lexer.input.content)]

    # The token-level steps below are xDSL's, written without its layers of properties
    # and helper calls: they run for every token (same results, same errors).

    def _consume_token(self, expected_kind: MLIRTokenKind | None = None) -> MLIRToken:
        state = self._parser_state
        consumed = state.current_token
        assert expected_kind is None or consumed.kind == expected_kind, (
            f"Unexpected token {consumed}, expected {expected_kind}"
        )
        state.current_token = state.lexer.lex()
        return consumed

    def _parse_optional_token(self, expected_kind: MLIRTokenKind) -> MLIRToken | None:
        state = self._parser_state
        token = state.current_token
        if token.kind == expected_kind:
            state.current_token = state.lexer.lex()
            return token
        return None

    def parse_optional_punctuation(self, punctuation: PunctuationSpelling) -> PunctuationSpelling | None:
        kind = KIND_BY_PUNCTUATION_SPELLING.get(punctuation)
        assert kind is not None, "'parse_optional_punctuation' must be called with a valid punctuation"
        state = self._parser_state
        if state.current_token.kind == kind:
            state.current_token = state.lexer.lex()
            return punctuation
        return None

    def parse_punctuation(self, punctuation: PunctuationSpelling, context_msg: str = "") -> PunctuationSpelling:
        kind = KIND_BY_PUNCTUATION_SPELLING.get(punctuation)
        assert kind is not None, "'parse_punctuation' must be called with a valid punctuation"
        state = self._parser_state
        if state.current_token.kind != kind:
            self.raise_error(f"Expected '{punctuation}'" + context_msg, state.current_token.span)
        state.current_token = state.lexer.lex()
        return punctuation

    def parse_optional_characters(self, text: str) -> str | None:
        state = self._parser_state
        span = state.current_token.span
        if span.input.content[span.start : span.end] == text:  # the input is text (decoded above)
            state.current_token = state.lexer.lex()
            return text
        return None

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        try:
            op = super().parse_operation()
        except (VerifyException, ValueError, UnicodeError) as e:
            # An operand, result or attribute that breaks the op's declared
            # constraints (or an integer out of its type's range, a string that is
            # no valid UTF-8) is found while the op is built: report it where the
            # op starts. (xDSL's ParseError is not a ValueError.)
            self.raise_error(f"invalid operation: {e}", span)
        if self.line_offset:
            span = dataclasses.replace(span, line_offset=self.line_offset)
        SOURCE_SPANS[op] = span
        return op

    def parse_optional_region(self, arguments: Sequence[Parser.Argument] | None = None) -> Region | None:
        if self.region_depth >= MAX_REGION_DEPTH and self._current_token.text == "{":
            self.raise_error(f"regions nested deeper than {MAX_REGION_DEPTH} levels")
        self.region_depth += 1
        try:
            return super().parse_optional_region(arguments)
        finally:
            self.region_depth -= 1

    def parse_optional_type(self) -> TypeAttribute | None:
        span = self._current_token.span
        m = None
        if span.end - span.start == 6 and span.text in ("tensor", "memref"):
            m = self._shaped_type_text.match(span.input.content, span.start)
            if m is not None:
                known = self._shaped_types.get(m.group())
                if known is not None:
                    self._resume_from(m.end())
                    return known
        self._enter_attribute()
        try:
            t = super().parse_optional_type()
        finally:
            self.attribute_depth -= 1
        if isinstance(t, TensorType | MemRefType):  # each extent must fit an index (the bytes: verifiers)
            for e in t.get_shape():
                if e != DYNAMIC_INDEX and e > INDEX_MAX:
                    self.raise_error(f"{t.name}: extent {e} does not fit in a 64-bit index (at most {INDEX_MAX})", span)
        if m is not None and t is not None and self._current_token.span.start >= m.end():
            self._shaped_types[m.group()] = t
        return t

    def parse_optional_attribute(self) -> Attribute | None:
        self._enter_attribute()
        try:
            return super().parse_optional_attribute()
        finally:
            self.attribute_depth -= 1

    def _enter_attribute(self) -> None:
        if self.attribute_depth >= MAX_ATTRIBUTE_DEPTH:
            self.raise_error(f"types or attributes nested too deeply (more than {MAX_ATTRIBUTE_DEPTH} levels)")
        self.attribute_depth += 1

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """The module; input nested too deeply for the stack is a parse error.

        Python's cyclic garbage collector is paused meanwhile: parsing makes no garbage
        cycles, and the collector re-scanning the growing IR cost a fifth of the time."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:
            self.raise_error("input nested too deeply to parse")
        finally:
            if collecting:
                gc.enable()
        _cloneable_names(module)
        return module


def _cloneable_names(module: Operation) -> None:
    """Value names that xDSL accepts when parsing but not when copying (`%_0`: its
    `_<digits>` suffix is stripped, leaving nothing) get a `v` in front, so that
    every parsed module can be cloned."""
    for op in walk_ops(module):
        values = [*op.results, *(a for region in op.regions for block in region.blocks for a in block.args)]
        for v in values:
            name = v.name_hint
            if name is None:
                continue
            try:
                valid = SSAValue.extract_valid_name(name)
            except ValueError:
                valid = None
            if not valid:
                v.name_hint = f"v{name}"


@dataclass(frozen=True)
class LocatedMLIRFrontend(MLIRFrontend):
    """The `mlir` frontend, parsing with a `LocatedParser`."""

    line_offset: int = 0

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "input") -> ModuleOp:
        parser = LocatedParser(ctx, input.read(), input_name)
        parser.line_offset = self.line_offset
        return parser.parse_module(not self.no_implicit_module)


def walk_ops(root: Operation) -> Iterator[Operation]:
    """`root` and every op nested in it, in program order (pre-order), without recursion:
    `Operation.walk` nests one generator per region level."""
    stack: list[Iterator[Operation]] = [iter((root,))]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            continue
        yield op
        if op.regions:
            stack.append(o for region in op.regions for block in region.blocks for o in block.ops)


def op_failures(module: Operation) -> list[tuple[Operation, VerifyException]]:
    """Every op under `module` (itself included) whose own verifier fails, in program order."""
    failures: list[tuple[Operation, VerifyException]] = []
    for op in walk_ops(module):
        try:
            op.verify_()
        except VerifyException as e:
            failures.append((op, e))
    return failures


def verify_located(module: Operation) -> None:
    """Verifies `module`; the first op that fails raises a located `allotment.VerifyError`.

    Runs on a deep stack (`allotment.limits`): xDSL's verifier recurses per nested region."""
    call_with_deep_stack(lambda: _verify_located(module))


def first_use_before_definition(module: Operation) -> tuple[Operation, int] | None:
    """The first op (and operand index) that uses a value defined later in its own block,
    which xDSL's parser accepts and its verifier does not check (MLIR's dominance rule)."""
    position: dict[Operation, int] = {}
    for op in walk_ops(module):
        for region in op.regions:
            for block in region.blocks:
                position.update((o, i) for i, o in enumerate(block.ops))
    for op in walk_ops(module):
        for i, v in enumerate(op.operands):
            owner = v.owner
            if isinstance(owner, Operation) and owner.parent is op.parent and position[owner] >= position[op]:
                return op, i
    return None


def _verify_located(module: Operation) -> None:
    try:
        module.verify()
        early_use = first_use_before_definition(module)
        if early_use is not None:
            op, i = early_use
            name = op.operands[i].name_hint
            value = f"operand #{i}" + (f" (%{name})" if name else "")
            raise VerifyError(located_message(op, f"{value} is used before it is defined"))
        return
    except VerifyError:
        raise
    except DiagnosticException:
        pass  # find the op at fault, in order, and locate it
    for op, e in op_failures(module):
        raise VerifyError(located_message(_redefinition(op, str(e)) or op, str(e))) from None
    # A rule of a region (a missing terminator, a symbol defined twice): report it
    # at the innermost op whose regions break it (children come after their
    # parent in `walk_ops`, so the reversed walk meets them first).
    for op in reversed([o for o in walk_ops(module) if o.regions]):
        try:
            op.verify()
        except DiagnosticException as e:
            raise VerifyError(located_message(_redefinition(op, str(e)) or op, str(e))) from None


def _redefinition(scope: Operation, message: str) -> Operation | None:
    """For xDSL's `Redefinition of symbol "name"` in `scope`, the second op that defines it."""
    m = re.search(r'Redefinition of symbol "(.+?)"', message)
    if m is None:
        return None
    defining = [
        op
        for region in scope.regions
        for block in region.blocks
        for op in block.ops
        if getattr(op.properties.get("sym_name") or op.attributes.get("sym_name"), "data", None) == m.group(1)
    ]
    return defining[1] if len(defining) > 1 else None


OpT = TypeVar("OpT", bound=Operation)


def clone_located(op: OpT) -> OpT:
    """A deep copy of `op` whose operations keep the source locations of the originals
    (on a deep stack: xDSL clones nested regions recursively)."""
    copy = call_with_deep_stack(op.clone)
    for original, cloned in zip(walk_ops(op), walk_ops(copy), strict=True):
        span = SOURCE_SPANS.get(original)
        if span is not None:
            SOURCE_SPANS[cloned] = span
    return copy
