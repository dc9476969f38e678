"""Reading Allotment IR: a context with every dialect, located parsing, function lookup.

`parse_module` is what tools and tests use to turn text into a verified
`ModuleOp`; its errors (parse errors, verifier errors) carry a
`file:line:col: error:` location, as `allot-opt`'s do.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError as XdslParseError

from allotment.diagnostics import LocatedParser, parse_error_diagnostic, verify_located, walk_ops
from allotment.dialects import ALL_DIALECTS
from allotment.errors import ArgumentError, ParseError
from allotment.limits import call_with_deep_stack

OpT = TypeVar("OpT", bound=Operation)


@cache
def _multiverse() -> Universe:
    return Universe.get_multiverse()


def make_context() -> Context:
    """A context with every upstream xDSL dialect and Allotment's, all loaded lazily.

    The dialects (upstream ones and any plugin's) come from xDSL's multiverse,
    which finds ours through the `xdsl.universe` entry point; upstream's and
    ours are also registered directly, so that this works where the entry
    points are not installed (a source tree on PYTHONPATH).
    """
    ctx = Context()
    sources = (_multiverse().all_dialects, get_all_dialects(), ALL_DIALECTS)
    for dialects in sources:
        for name, factory in dialects.items():
            if name not in ctx.registered_dialect_names:
                ctx.register_dialect(name, factory)
    return ctx


def parse_module(text: str, name: str = "<string>") -> ModuleOp:
    """Parses and verifies `text`; `name` is the file name used in diagnostics.

    Raises `allotment.ParseError` or a located `allotment.VerifyError` on malformed
    input (both `file:line:col: error: ...`), never a RecursionError: this runs on a
    deep stack (`allotment.limits`), and regions nested deeper than
    `allotment.limits.MAX_REGION_DEPTH` are a parse error.
    """
    if not isinstance(text, str):
        raise ArgumentError(f"parse_module: text must be a str, not {type(text).__name__}")
    if not isinstance(name, str):
        raise ArgumentError(f"parse_module: name must be a str (the file name in messages), not {type(name).__name__}")
    return call_with_deep_stack(lambda: _parse_and_verify(text, name))


def _parse_and_verify(text: str, name: str) -> ModuleOp:
    try:
        module = LocatedParser(make_context(), text, name).parse_module()
    except XdslParseError as e:
        raise ParseError(e.span, e.msg, str(parse_error_diagnostic(e))) from None
    verify_located(module)
    return module


def load_module(path: str | Path) -> ModuleOp:
    """Reads, parses and verifies the file at `path` (OSError if it cannot be read)."""
    return parse_module(Path(path).read_text(), str(path))


def function_names(module: ModuleOp) -> list[str]:
    """The names of the module's `func.func`s, in program order."""
    return [op.sym_name.data for op in walk_ops(module) if isinstance(op, FuncOp)]


def ops_in_flat_functions(module: ModuleOp, kind: type[OpT]) -> list[OpT]:
    """The ops of class `kind` in the module's top-level functions of one block, in program
    order; a declaration, or a function of several blocks (which fusion-segment reports),
    contributes none."""
    return [op for f in module.body.block.ops if isinstance(f, FuncOp) and len(f.body.blocks) == 1
            for op in f.body.block.ops if isinstance(op, kind)]


def find_function(module: ModuleOp, name: str | None = None) -> FuncOp:
    """The `func.func` named `name` (with or without `@`), or the first one if None."""
    funcs = [op for op in walk_ops(module) if isinstance(op, FuncOp)]
    if not funcs:
        raise ArgumentError("the module contains no func.func")
    if name is None:
        return funcs[0]
    if not isinstance(name, str):
        raise ArgumentError(f"function must be a str (a function name), not {type(name).__name__}")
    for wanted in (name, name.removeprefix("@")):  # the exact name first: `@"@at"` is named "@at"
        for f in funcs:
            if f.sym_name.data == wanted:
                return f
    wanted = name.removeprefix("@")
    available = ", ".join(f"@{f.sym_name.data}" for f in funcs)
    raise ArgumentError(f"no function named @{wanted}; available: {available}")
