"""CPU benchmark: Allotment's parser against itself with xDSL's lexer, in one process.

Parses the same generated module (`large_ir.generate`) alternately with

  before   `LocatedParser` lexing with xDSL's `MLIRLexer` (the linear string pattern),
           xDSL's own per-token steps, the garbage collector running
  after    `LocatedParser` as it is (`allotment.lexer.FastLexer`, its own token steps,
           the collector paused)

and prints the best CPU seconds of each. Interleaved in one process, so that the load
of a shared machine weighs on both alike.

    .venv/bin/python benchmarks/parse_ab.py --ops 20000 --layout one
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from large_ir import generate  # noqa: E402
from xdsl.context import Context  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.parser import Parser  # noqa: E402
from xdsl.parser.generic_parser import ParserState  # noqa: E402
from xdsl.utils.lexer import Input  # noqa: E402
from xdsl.utils.mlir_lexer import MLIRLexer  # noqa: E402

from allotment.diagnostics import LocatedParser  # noqa: E402
from allotment.ir import make_context  # noqa: E402
from allotment.lexer import STRING_LITERAL  # noqa: E402


class XdslLexer(MLIRLexer):
    """xDSL's lexer with the string pattern that does not backtrack exponentially."""

    _unescaped_characters_regex = STRING_LITERAL


class BeforeParser(LocatedParser):
    """`LocatedParser` with xDSL's lexer and token steps, and the collector running."""

    _consume_token = Parser._consume_token
    _parse_optional_token = Parser._parse_optional_token
    parse_optional_punctuation = Parser.parse_optional_punctuation
    parse_punctuation = Parser.parse_punctuation
    parse_optional_characters = Parser.parse_optional_characters

    def __init__(self, ctx: Context, input: str, name: str = "<unknown>") -> None:
        super().__init__(ctx, input, name)
        self._parser_state = ParserState(XdslLexer(Input(input, name)))

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        gc.enable()
        return Parser.parse_module(self, allow_implicit_module)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=20_000)
    ap.add_argument("--layout", choices=["one", "many"], default="one")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    text = generate(args.ops, args.layout)
    ctx = make_context()
    LocatedParser(ctx, "func.func @warm() { func.return }").parse_module()
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, parser in (("before", BeforeParser), ("after", LocatedParser)):
            gc.collect()
            start = time.process_time()
            parser(ctx, text, "large.mlir").parse_module()
            best[name] = min(best.get(name, float("inf")), time.process_time() - start)
    print(f"{args.layout}, {args.ops} ops: parse before {best['before']:.2f} s, after {best['after']:.2f} s "
          f"({best['before'] / best['after']:.2f}x), load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
