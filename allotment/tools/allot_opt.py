"""`allot-opt`: xDSL's optimizer driver with Allotment's dialects and passes.

Every upstream xDSL dialect and pass is available, and the xdsl-opt flags work
(-p, --split-input-file, --parsing-diagnostics, --print-op-generic, ...).
`--verify-diagnostics` checks `expected-error` annotations as MLIR's does
(`allotment.tools.verify_diagnostics`). Parse, verifier and pass errors print
`file:line:col: error: ...` where the IR has a location, and exit with status 1,
never with a traceback (ALLOT_DEBUG=1 shows it). Everything runs on a deep stack
(`allotment.limits`), so deeply nested IR never exhausts Python's.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from io import BytesIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.exceptions import ParseError as XdslParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from allotment import __version__
from allotment.diagnostics import (
    Diagnostic,
    LocatedMLIRFrontend,
    op_diagnostic,
    op_failures,
    span_diagnostic,
    verify_located,
)
from allotment.errors import ArgumentError
from allotment.limits import call_with_deep_stack
from allotment.tools.errors import run_reporting_errors
from allotment.tools.verify_diagnostics import check, diagnostic_from_message, expected_diagnostics, has_annotations
from allotment.universe import ALL_DIALECTS, ALL_PASSES, ALL_TARGETS


def pass_help(name: str, factory: Callable[[], type[ModulePass]]) -> str:
    """`name{option=default ...}` and the first line of the pass's docstring."""
    try:
        cls = factory()
    except Exception as e:  # a pass module that does not import: say so, keep the help usable
        return f"  {name}\n      (cannot be loaded: {type(e).__name__}: {e})"
    options = " ".join(
        f"{f.name.replace('_', '-')}={_default(f)}" for f in dataclasses.fields(cls) if f.init
    )
    summary = "\n".join(textwrap.wrap(first_paragraph(cls.__doc__), 88, initial_indent=" " * 6,
                                       subsequent_indent=" " * 6))
    return f"  {name}{{{options}}}\n{summary}" if options else f"  {name}\n{summary}"


def first_paragraph(doc: str | None) -> str:
    """The docstring's first paragraph on one line (a summary may span lines)."""
    lines: list[str] = []
    for line in (doc or "").strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def _register(available: dict[str, Callable[[], object]], *tables: dict[str, Callable[[], object]]) -> None:
    """Adds each table's factories to `available`, by name, where the name is not taken yet
    (the first table's, then the next's)."""
    for table in tables:
        for name, factory in table.items():
            available.setdefault(name, factory)


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_pipeline(available: dict[str, Callable[[], type[ModulePass]]], spec: str) -> None:
    """An `ArgumentError` naming the first unknown pass or option of `spec`, spelled as
    the user typed it, with the closest known name."""
    for p in parse_pipeline(spec):
        if p.name not in available:
            raise ArgumentError(f"unknown pass {p.name!r}{_did_you_mean(p.name, sorted(available))} "
                                "(allot-opt --help lists them)")
        cls = available[p.name]()
        if not dataclasses.is_dataclass(cls):
            continue
        options = [f.name.replace("_", "-") for f in dataclasses.fields(cls) if f.init]
        for key in p.parameters:
            if key.replace("_", "-") not in options:
                known = ", ".join(options) if options else "none"
                raise ArgumentError(f"{p.name}: unknown option {key!r}"
                                    f"{_did_you_mean(key.replace('_', '-'), options)}; its options: {known}")


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
        if isinstance(value, bool):
            return str(value).lower()
        return f'"{value}"' if isinstance(value, str) else str(value)
    return "(required)"


def passes_help() -> str:
    """Allotment's passes, for `allot-opt --help`."""
    lines = ["Allotment's passes (-p NAME or -p 'NAME{option=value}'):"]
    lines += [pass_help(name, factory) for name, factory in sorted(ALL_PASSES.items())]
    lines.append("Every upstream xDSL pass is available too (the list after -p above).")
    return "\n".join(lines)


class AllotOptMain(xDSLOptMain):
    """xDSLOptMain that also registers Allotment's dialects and passes directly,
    so that it works even where the `xdsl.universe` entry point is not installed."""

    version_format = f"allot-opt: Allotment {__version__}, xDSL {{xdsl_version}}"

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        # Where xDSL is importable but not installed as a distribution (a source
        # tree on PYTHONPATH), its entry point is missing: register upstream directly.
        from xdsl.dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)
        for name, factory in ALL_DIALECTS.items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        self.available_frontends["mlir"] = lambda: LocatedMLIRFrontend

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        for action in arg_parser._actions:
            if "--verify-diagnostics" in action.option_strings:
                action.help = (
                    "check the `// expected-error {{...}}` annotations (@+N, @-N, @above, @below) "
                    "as MLIR does: exit 1 naming every missing or unexpected error. A file with no "
                    "annotation at all only prints its errors and exits 0 (xDSL's behaviour)"
                )
            if "--version" in action.option_strings:
                action.help = "print the versions of Allotment and xDSL"

        def formatter(prog: str) -> argparse.HelpFormatter:
            arg_parser.epilog = passes_help()  # loads the passes only when help is printed
            return argparse.RawDescriptionHelpFormatter(prog)

        arg_parser.formatter_class = formatter

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if (self.args.frontend or file_extension) == "mlir":
            frontend = LocatedMLIRFrontend(
                no_implicit_module=self.args.no_implicit_module, line_offset=start_offset
            )
            return frontend.parse(self.ctx, chunk, self.get_input_name())
        return super().parse_chunk(chunk, file_extension, start_offset)

    def setup_pipeline(self) -> None:
        self._pass_started = time.perf_counter()
        check_pipeline(self.available_passes, self.args.passes)
        try:
            self.pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, self._between_passes)
        except ValueError as e:  # an option's value of the wrong type
            raise ArgumentError(f"-p {self.args.passes}: {e}") from None

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file is None and sys.stdin.isatty():
            print("allot-opt: reading the IR from standard input (end it with Ctrl-D; allot-opt FILE.mlir "
                  "reads a file, allot-opt --help says more)", file=sys.stderr)
        return super().get_input_stream()

    def _between_passes(self, previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
        """xDSL's callback, except that the input is verified once (by `apply_passes`) and
        the IR after each pass is verified with located errors."""
        if self.args.time_passes and previous is not None:
            print(f"Pass {previous.name} took {time.perf_counter() - self._pass_started} seconds")
        if previous is not None and not self.args.disable_verify:
            try:
                verify_located(module)
            except DiagnosticException as e:
                raise type(e)(f"{e}\n(the IR after {previous.name} does not verify)") from None
        if previous is not None and next_pass is not None and self.args.print_between_passes:
            print(f"IR after {previous.name}:")
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")
        if self.args.time_passes and next_pass is not None:
            self._pass_started = time.perf_counter()

    def apply_passes(self, prog: ModuleOp) -> None:
        if not self.args.disable_verify:
            verify_located(prog)
        if self.pipeline.passes:
            self.pipeline.apply(self.ctx, prog)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from xdsl.transforms import get_all_passes

        _register(self.available_passes, get_all_passes(), ALL_PASSES)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        from xdsl.targets import get_all_targets

        _register(self.available_targets, get_all_targets(), ALL_TARGETS)

    # -- --verify-diagnostics ------------------------------------------------

    def run(self) -> None:
        if self.args.verify_diagnostics:
            self.exit_status = self._run_verifying_diagnostics()
        else:
            super().run()

    def _run_verifying_diagnostics(self) -> int:
        """Each chunk's errors against its annotations; 1 if any differs (reported on stderr)."""
        chunks, file_extension = self.prepare_input()
        texts: list[tuple[bytes, int]] = []
        for chunk, offset in chunks:
            texts.append((chunk.read(), offset))
            chunk.close()
        annotated = any(has_annotations(data.decode(errors="replace")) for data, _ in texts)
        output = self.prepare_output()
        failures: list[str] = []
        try:
            for i, (data, offset) in enumerate(texts):
                if i > 0:
                    output.write("// -----\n")
                catch_parse_errors = annotated or self.args.parsing_diagnostics
                produced, program = self._diagnostics(BytesIO(data), file_extension, offset, catch_parse_errors)
                if not annotated:  # xDSL's behaviour: print the errors, exit 0
                    for d in produced:
                        print(d)
                else:
                    expected = expected_diagnostics(data.decode(errors="replace"), offset)
                    failures += check(self.get_input_name(), expected, produced)
                if program is not None and not produced:
                    output.write(program)
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        for failure in failures:
            print(failure, file=sys.stderr)
        return 1 if failures else 0

    def _diagnostics(
        self, chunk: IO[bytes], file_extension: str, offset: int, catch_parse_errors: bool
    ) -> tuple[list[Diagnostic], str | None]:
        """The errors of one chunk (every op that fails to verify, or the parse or pass
        error), and the resulting program when there is none. A parse error is raised
        unless `catch_parse_errors` (xDSL's --verify-diagnostics without --parsing-diagnostics)."""
        try:
            module = self.parse_chunk(chunk, file_extension, offset)
        except XdslParseError as e:
            if not catch_parse_errors:
                e.span = dataclasses.replace(e.span, line_offset=offset)
                raise
            return [span_diagnostic(dataclasses.replace(e.span, line_offset=offset), e.msg)], None
        if module is None:
            return [], None
        if not self.args.disable_verify:
            failures = op_failures(module)
            if failures:
                return [op_diagnostic(op, str(e)) or diagnostic_from_message(f"{op.name}: {e}") for op, e in failures], None
            try:
                verify_located(module)  # what no op verifier checks: terminators, dominance
            except DiagnosticException as e:
                return [diagnostic_from_message(str(e))], None
        try:
            self.apply_passes(module)
        except DiagnosticException as e:
            return [diagnostic_from_message(str(e))], None
        return [], self.output_resulting_program(module)


def main(argv: Sequence[str] | None = None) -> int:
    def body() -> int:
        try:
            tool = AllotOptMain(description="Allotment's modular optimizer driver", args=argv)
            tool.run()
        except SystemExit as e:  # argparse errors and xdsl's own exits
            return int(e.code or 0) if not isinstance(e.code, str) else 1
        return getattr(tool, "exit_status", 0)

    return run_reporting_errors("allot-opt", lambda: call_with_deep_stack(body))


if __name__ == "__main__":
    sys.exit(main())
