"""A faster MLIR lexer for Allotment's parser: one compiled regular expression per token.

xDSL's `MLIRLexer.lex` reads a character, branches on it in Python and then
runs one or two small regular expressions: about 3 us a token, a third of the
time of parsing a large module. `FastLexer` matches whitespace, comments and the
common token in one call of one master expression and builds the token
directly. Anything that expression does not take (a non-ASCII identifier, a
string with escapes, a lone `.`, a character no token starts with) is left to
xDSL's own `lex` from the same position, so the tokens, their spans and every
lexing error are exactly xDSL's (`tests/test_fast_lexer.py` compares the two
token by token on the corpus and on random text).

`LocatedParser` (`allotment.diagnostics`), the parser behind every Allotment
entry point, lexes with it.
"""

from __future__ import annotations

import re

from xdsl.utils.lexer import Input, Span, Token
from xdsl.utils.mlir_lexer import KIND_BY_PUNCTUATION_SPELLING, MLIRLexer, MLIRToken, MLIRTokenKind

_WHITESPACE = r"(?>(?:[ \t\n\r\f\v]+|//[^\n]*\n?)*)"
"""xDSL's `MLIRLexer._whitespace_regex` (`\\s` under `re.ASCII`), without capturing groups,
atomic: where no token follows, the match fails rather than backtrack into a comment
and find a token inside it."""

_TOKENS: tuple[tuple[str, str, MLIRTokenKind | None], ...] = (
    ("bare", r"[a-zA-Z_][a-zA-Z0-9_$.]*", MLIRTokenKind.BARE_IDENT),
    ("percent", r"%(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)", MLIRTokenKind.PERCENT_IDENT),
    ("metadata_end", r"\#-\}", MLIRTokenKind.FILE_METADATA_END),
    ("hash", r"\#(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)", MLIRTokenKind.HASH_IDENT),
    ("bang", r"!(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)", MLIRTokenKind.EXCLAMATION_IDENT),
    ("caret", r"\^(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)", MLIRTokenKind.CARET_IDENT),
    ("at", r'@(?:[a-zA-Z_][a-zA-Z0-9_$.]*|"[^"\\\n\v\f]*")', MLIRTokenKind.AT_IDENT),
    ("hex", r"0x[0-9a-fA-F]+", MLIRTokenKind.INTEGER_LIT),
    ("float", r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?", MLIRTokenKind.FLOAT_LIT),
    ("int", r"[0-9]+", MLIRTokenKind.INTEGER_LIT),
    ("string", r'"[^"\\\n\v\f]*"', MLIRTokenKind.STRING_LIT),
    ("punct", r"->|\.\.\.|\{-\#|[:,()}\[\]<>=+/*?|{-]", None),
)
"""(group, pattern, kind) of each token the master expression takes, in xDSL's order of
preference; kind None: the punctuation named by the token's text.

Each pattern takes exactly what `MLIRLexer` takes from the same first character:
identifiers and digits are ASCII here (xDSL's `isalpha`/`isnumeric` also admit other
letters and digits: those go to xDSL), and strings are those without a backslash
(xDSL decodes escapes to tell a string from bytes). The end of the input is xDSL's
too (its EOF token spans one position past the end)."""

MASTER = re.compile(_WHITESPACE + "(?:" + "|".join(f"(?P<{g}>{p})" for g, p, _ in _TOKENS) + ")")
"""Whitespace and comments, then one token (a named group per kind)."""

_KIND = {g: k for g, _, k in _TOKENS}


STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""xDSL's `MLIRLexer._unescaped_characters_regex`, with possessive quantifiers: xDSL's nests
`+` in `*` and, on a string not closed on its line, backtracks exponentially (a hang).
This one matches the same strings in linear time."""


class FastLexer(MLIRLexer):
    """`MLIRLexer` with the same tokens and errors, lexing the common ones with `MASTER`
    (and strings with escapes with `STRING_LITERAL`)."""

    _unescaped_characters_regex = STRING_LITERAL

    def lex(self) -> MLIRToken:
        m = MASTER.match(self.input.content, self.pos)
        if m is None:  # what xDSL lexes another way, or refuses: let it (same tokens, same errors)
            return super().lex()
        group = m.lastgroup
        start, end = m.span(group)
        self.pos = end
        kind = _KIND[group]
        if kind is None:
            kind = KIND_BY_PUNCTUATION_SPELLING[m.group(group)]
        return Token(kind, Span(start, end, self.input))


def fast_lexer(input: Input[str]) -> FastLexer:
    """A `FastLexer` over `input`, at its start."""
    return FastLexer(input)
