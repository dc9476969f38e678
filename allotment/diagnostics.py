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
It also refuses, where they are written, what xDSL would accept and then fail on
internally: attribute values of an element type xDSL cannot store or print
(`stored_element_problem`), and an operand that names a value defined only inside
the operation's own regions.

The verifier adds to xDSL's what xDSL does not check: MLIR's dominance rule
(`first_undominated_use`) and the rules Allotment's dialects add to upstream ops
(`register_op_check`: a `func.func` argument of a sharded tensor type).
"""

from __future__ import annotations

import dataclasses
import gc
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ComplexType,
    DenseArrayBase,
    Float80Type,
    Float128Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue, TypeAttribute
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
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


def stored_element_problem(t: Attribute) -> str | None:
    """Why xDSL cannot hold values of element type `t` in an attribute, or None.

    xDSL packs the values of a dense array (`array<i32: 1, 2>`) or dense elements
    (`dense<...> : tensor<...>`) with `struct`, which has no format for integers of 0 or
    more than 64 bits, nor for f80 and f128; it prints a float attribute the same way, so
    an f80 or f128 `FloatAttr` cannot be printed (even in an error message)."""
    if isinstance(t, ComplexType):
        return stored_element_problem(t.element_type)
    if isinstance(t, IntegerType) and not 1 <= t.bitwidth <= 64:
        return f"{t} values are not supported in attributes (integers of 1 to 64 bits are)"
    if isinstance(t, Float80Type | Float128Type):
        return f"{t} values are not supported in attributes (floats of at most 64 bits are)"
    return None


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

    Attribute values of an element type xDSL cannot store (`stored_element_problem`) and
    an operand whose value is defined only inside the op's own regions (xDSL would leave it
    an unresolved placeholder) are located `ParseError`s.
    """

    line_offset: int = 0
    region_depth: int = 0
    attribute_depth: int = 0

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        self._forward_uses: dict[ForwardDeclaredValue, UnresolvedOperand] = {}
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
        self._check_forward_uses(op)
        if self.line_offset:
            span = dataclasses.replace(span, line_offset=self.line_offset)
        SOURCE_SPANS[op] = span
        return op

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_uses[value] = operand
        return value

    def _check_forward_uses(self, op: Operation) -> None:
        """Refuses an operand of `op` that is still a forward reference whose name has been
        defined since: a value defined inside `op`'s own regions (xDSL resolved the reference
        before `op` existed, so `op` would keep a placeholder with no definition)."""
        for i, v in enumerate(op.operands):
            if not isinstance(v, ForwardDeclaredValue):
                continue
            use = self._forward_uses.get(v)
            if use is None or self.forward_ssa_references.get(use.operand_name, {}).get(use.index) is v:
                continue  # still waiting for a definition later in the text
            self.raise_error(
                f"operand #{i} of {op.name} ({use.span.text}) is defined only inside the op's own "
                "regions, where it does not dominate its use", use.span)

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

    # Attribute values xDSL cannot store: refused at their element type, before xDSL
    # packs (or, for a float attribute, prints) them.

    def parse_optional_builtin_int_or_float_attr(self) -> IntegerAttr | FloatAttr | None:
        start = self._current_token.span.start
        attr = super().parse_optional_builtin_int_or_float_attr()
        if isinstance(attr, FloatAttr):
            self._refuse_stored_element(attr.type, start)
        return attr

    def _parse_builtin_densearray_attr(self) -> DenseArrayBase | None:
        start = self.pos  # at `<`: the element type is read first, then the whole array
        self.parse_punctuation("<", " in dense array")
        type_start = self.pos
        self._refuse_stored_element(self.parse_attribute(), type_start)
        self._resume_from(start)
        return super()._parse_builtin_densearray_attr()

    def _parse_dense_literal_type(self) -> TypeAttribute:
        start = self.pos
        t = super()._parse_dense_literal_type()
        self._refuse_stored_element(t.element_type, start)
        return t

    def _refuse_stored_element(self, element_type: Attribute, start: int) -> None:
        """A located `ParseError` (from `start` to here) if xDSL cannot store values of
        `element_type` (`stored_element_problem`)."""
        problem = stored_element_problem(element_type)
        if problem is not None:
            end = self._current_token.span.start
            self.raise_error(problem, start, max(end, start + 1))

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


OpCheck = Callable[[Operation], None]
"""A rule that a dialect of Allotment adds to an op it does not define; raises `VerifyException`."""

OP_CHECKS: dict[type[Operation], list[OpCheck]] = {}
"""The rules added to upstream ops, by op class (`register_op_check`): xDSL's `func.func`
knows nothing of a sharded tensor type, so the fusion dialect checks its arguments'
shardings here. `verify_located` and `op_failures` run them after the op's own verifier."""


def register_op_check(op_type: type[Operation], check: OpCheck) -> None:
    """Adds `check` to what verifies every op of class `op_type` (`OP_CHECKS`), once."""
    checks = OP_CHECKS.setdefault(op_type, [])
    if check not in checks:
        checks.append(check)


def verify_op(op: Operation) -> None:
    """`op`'s own verifier (not its regions'), then the checks added to its class (`OP_CHECKS`)."""
    op.verify_()
    for check in OP_CHECKS.get(type(op), ()):
        check(op)


def op_failures(module: Operation) -> list[tuple[Operation, VerifyException]]:
    """Every op under `module` (itself included) whose own verifier (`verify_op`) fails, in program order."""
    failures: list[tuple[Operation, VerifyException]] = []
    for op in walk_ops(module):
        try:
            verify_op(op)
        except VerifyException as e:
            failures.append((op, e))
    return failures


def verify_located(module: Operation) -> None:
    """Verifies `module`; the first op that fails raises a located `allotment.VerifyError`.

    Guarantees, beyond xDSL's verifier: the checks of `OP_CHECKS` hold, and every operand's
    definition dominates its use (`first_undominated_use`).
    Runs on a deep stack (`allotment.limits`): xDSL's verifier recurses per nested region."""
    call_with_deep_stack(lambda: _verify_located(module))


def first_undominated_use(module: Operation) -> tuple[Operation, str] | None:
    """The first op under `module` with an operand whose definition does not dominate the
    use, and what is wrong (naming the operand), or None: MLIR's dominance rule, which
    xDSL's parser accepts and its verifier does not check.

    A value may be used by an op in the block that defines it (after its defining op; a
    block argument anywhere in its block), by ops nested in the ops of that block after
    the definition, and in the blocks of the same region that the defining block dominates
    (and ops nested in them). A value defined in a region that does not enclose the use
    (inside another function, inside the using op's own regions) dominates nothing there."""
    position: dict[Operation, int] = {}
    for op in walk_ops(module):
        for region in op.regions:
            for block in region.blocks:
                position.update((o, i) for i, o in enumerate(block.ops))
    dominance: dict[Region, dict[Block, set[Block]]] = {}
    for op in walk_ops(module):
        for i, v in enumerate(op.operands):
            problem = _dominance_problem(v, op, position, dominance)
            if problem is not None:
                name = v.name_hint
                return op, f"operand #{i}" + (f" (%{name})" if name else "") + f" {problem}"
    return None


def _dominance_problem(
    v: SSAValue, user: Operation, position: dict[Operation, int], dominance: dict[Region, dict[Block, set[Block]]]
) -> str | None:
    """Why the definition of `v` does not dominate its use by `user`, or None (`first_undominated_use`)."""
    if isinstance(v, OpResult):
        defining: Operation | None = v.op
        block = v.op.parent_block()
    elif isinstance(v, BlockArgument):
        defining, block = None, v.block
    else:
        return None
    if block is None:
        return None  # a value of a detached op: xDSL's verifier reports an erased value
    use: Operation | None = user  # the op of `block`'s region that holds the use
    while use is not None:
        use_block = use.parent_block()
        if use_block is block:
            break
        if use_block is not None and use_block.parent is block.parent:  # another block of the region
            return None if _dominates(block, use_block, dominance) else (
                "is defined in a block that does not dominate this use")
        use = use.parent_op()
    if use is None:
        return "is defined in a region that does not enclose this use (its definition does not dominate it)"
    if defining is None or position.get(defining, -1) < position.get(use, -1):
        return None
    if use is defining and use is not user:
        return "is a result of an op that encloses this use (its definition does not dominate it)"
    return "is used before it is defined"


def _dominates(a: Block, b: Block, dominance: dict[Region, dict[Block, set[Block]]]) -> bool:
    """Whether block `a` dominates block `b` of the same region (the region's dominators cached)."""
    region = a.parent
    assert region is not None
    dominators = dominance.get(region)
    if dominators is None:
        dominators = dominance[region] = _dominators(region)
    return b not in dominators or a in dominators[b]


def _dominators(region: Region) -> dict[Block, set[Block]]:
    """The dominators of each block of `region` reachable from its entry block (MLIR's rule:
    a block that cannot be reached is dominated by every block, and is left out here).

    xDSL's `DominanceInfo` counts unreachable predecessors, which makes a reachable block
    dominated by too few blocks."""
    entry = region.first_block
    if entry is None:
        return {}
    successors = {b: list(b.last_op.successors) if b.last_op is not None else [] for b in region.blocks}
    reachable, stack = {entry}, [entry]
    while stack:
        for s in successors[stack.pop()]:
            if s not in reachable:
                reachable.add(s)
                stack.append(s)
    blocks = [b for b in region.blocks if b in reachable]
    preds: dict[Block, list[Block]] = {b: [] for b in blocks}
    for b in blocks:
        for s in successors[b]:
            preds[s].append(b)
    dominators = {b: {entry} if b is entry else set(blocks) for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in blocks[1:]:
            new = {b} | set.intersection(*(dominators[p] for p in preds[b]))
            if new != dominators[b]:
                dominators[b], changed = new, True
    return dominators


def _verify_located(module: Operation) -> None:
    try:
        module.verify()
    except VerifyError:
        raise
    except DiagnosticException as e:
        _locate_failure(module)
        raise VerifyError(str(e)) from None  # no op to blame: unlocated
    if OP_CHECKS:
        for op in walk_ops(module):
            for check in OP_CHECKS.get(type(op), ()):
                try:
                    check(op)
                except VerifyException as e:
                    raise VerifyError(located_message(op, str(e))) from None
    undominated = first_undominated_use(module)
    if undominated is not None:
        op, message = undominated
        raise VerifyError(located_message(op, message))


def _locate_failure(module: Operation) -> None:
    """Raises the located `VerifyError` of the op at fault in `module`, which failed to verify."""
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
