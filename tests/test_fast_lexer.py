"""`allotment.lexer.FastLexer` gives exactly xDSL's tokens and lexing errors.

Compared token by token (kind, start, end) with xDSL's `MLIRLexer` on every
FileCheck test and example, on a large generated module, and on random text
made of the characters where lexing branches (errors: same message, same span).
Parsing with `LocatedParser` (which lexes with it) gives the same printed IR, or
the same parse error at the same place, as `LocatedParser` lexing with xDSL's lexer,
on those files and on the hostile corpus's malformed IR.
"""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from allotment.diagnostics import LocatedParser
from allotment.ir import make_context
from allotment.lexer import STRING_LITERAL, FastLexer

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted([*ROOT.glob("tests/filecheck/**/*.mlir"), *ROOT.glob("examples/**/*.mlir")])
HOSTILE = sorted(ROOT.glob("tests/hostile/*.mlir"))
"""Malformed IR (`tests/test_hostile_corpus.py`): most of it fails to parse."""

sys.path.insert(0, str(ROOT / "benchmarks"))
from large_ir import generate  # noqa: E402


class XdslLexer(MLIRLexer):
    """xDSL's lexer, the reference, with the string pattern that does not backtrack
    exponentially (`allotment.lexer.STRING_LITERAL`, the same strings): random text
    hangs xDSL's own on an unclosed string."""

    _unescaped_characters_regex = STRING_LITERAL


def tokens(lexer_class: type[MLIRLexer], text: str) -> list[tuple]:
    """Every token of `text` as (kind, start, end), ending with EOF or with the error."""
    lexer = lexer_class(Input(text, "t.mlir"))
    out: list[tuple] = []
    while True:
        try:
            tok = lexer.lex()
        except ParseError as e:
            out.append(("error", e.msg, e.span.start, e.span.end))
            return out
        out.append((tok.kind, tok.span.start, tok.span.end))
        if tok.kind is MLIRTokenKind.EOF:
            return out


def test_corpus_is_found() -> None:
    assert len(CORPUS) > 50


@pytest.mark.parametrize("path", [*CORPUS, *HOSTILE], ids=lambda p: str(p.relative_to(ROOT)))
def test_same_tokens_on_the_corpus(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert tokens(FastLexer, text) == tokens(XdslLexer, text)


def test_same_tokens_on_a_generated_module() -> None:
    text = generate(300, "one") + generate(100, "many")
    fast = tokens(FastLexer, text)
    assert fast == tokens(XdslLexer, text)
    assert len(fast) > 3000


ALPHABET = [*"abzAZ_09x.$-%#!^@\"\\{}()[]<>:,=+*/?|~&;`'é٣²\t\n\r\v\f ", "//", "->", "...", "{-#", "#-}",
            "0x", "1.5e+3", "\\n", "\\0A", "\"\\\"", "tensor<?x4xf32>", "\u00a0", "\x1c"]
"""Characters and pieces where lexing branches: every token's first character, both
kinds of ASCII-or-not letters and digits, escapes, and whitespace xDSL does not skip."""


@pytest.mark.parametrize("seed", range(40))
def test_same_tokens_and_errors_on_random_text(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
        assert tokens(FastLexer, text) == tokens(XdslLexer, text), repr(text)


def test_the_parser_lexes_with_it() -> None:
    parser = LocatedParser(make_context(), "func.func @f() { func.return }", "t.mlir")
    assert type(parser.lexer) is FastLexer


class XdslLexedParser(LocatedParser):
    """`LocatedParser` lexing with xDSL's lexer (`XdslLexer`): the reference for parsing."""

    def __init__(self, ctx: Context, input: str, name: str = "<unknown>") -> None:
        super().__init__(ctx, input, name)
        self._parser_state = ParserState(XdslLexer(Input(input, name)))


def parsed(parser_class: type[LocatedParser], text: str) -> tuple:
    """The printed module, or the parse error (message, span), or the class of what else was raised."""
    try:
        module = parser_class(make_context(), text, "t.mlir").parse_module()
        out = io.StringIO()
        Printer(out, print_generic_format=True).print_op(module)  # (invalid IR prints generically)
    except ParseError as e:
        return ("error", e.msg, e.span.start, e.span.end)
    except Exception as e:  # noqa: BLE001  (compared by class: the same on both sides)
        return ("raised", type(e).__name__)
    return ("module", out.getvalue())


@pytest.mark.parametrize("path", [*CORPUS, *HOSTILE], ids=lambda p: str(p.relative_to(ROOT)))
def test_same_ir_and_errors_as_with_xdsl_lexer(path: Path) -> None:
    """The same module, or the same parse error at the same place, as with xDSL's lexer."""
    text = path.read_text(encoding="utf-8")
    assert parsed(LocatedParser, text) == parsed(XdslLexedParser, text)


def test_hostile_files_give_errors() -> None:
    outcomes = [parsed(LocatedParser, p.read_text(encoding="utf-8"))[0] for p in HOSTILE]
    assert len(HOSTILE) > 100 and outcomes.count("error") > 30
