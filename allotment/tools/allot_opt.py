"""`allot-opt`: xDSL's optimizer driver with Allotment's dialects and passes.

Every upstream xDSL dialect and pass is available, and every xdsl-opt flag
works (-p, --split-input-file, --verify-diagnostics, --print-op-generic, ...).
Malformed input exits with status 1 and a located diagnostic, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp

from xdsl.xdsl_opt_main import xDSLOptMain

from allotment.diagnostics import LocatedMLIRFrontend, verify_located
from allotment.tools.errors import run_reporting_errors
from allotment.universe import ALL_DIALECTS, ALL_PASSES, ALL_TARGETS


class AllotOptMain(xDSLOptMain):
    """xDSLOptMain that also registers Allotment's dialects and passes directly,
    so that it works even where the `xdsl.universe` entry point is not installed."""

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

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        if (self.args.frontend or file_extension) == "mlir":
            frontend = LocatedMLIRFrontend(
                no_implicit_module=self.args.no_implicit_module, line_offset=start_offset
            )
            return frontend.parse(self.ctx, chunk, self.get_input_name())
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp) -> None:
        if self.args.disable_verify:
            super().apply_passes(prog)
            return
        verify_located(prog)
        if not self.pipeline.passes:
            return  # xDSL's pipeline would only verify the module a second time
        super().apply_passes(prog)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from xdsl.transforms import get_all_passes

        for name, factory in get_all_passes().items():
            self.available_passes.setdefault(name, factory)
        for name, factory in ALL_PASSES.items():
            self.available_passes.setdefault(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        from xdsl.targets import get_all_targets

        for name, factory in get_all_targets().items():
            self.available_targets.setdefault(name, factory)
        for name, factory in ALL_TARGETS.items():
            self.available_targets.setdefault(name, factory)


def main(argv: Sequence[str] | None = None) -> int:
    def body() -> int:
        try:
            AllotOptMain(description="Allotment modular optimizer driver", args=argv).run()
        except SystemExit as e:  # argparse errors and xdsl's own exits
            return int(e.code or 0) if not isinstance(e.code, str) else 1
        return 0

    return run_reporting_errors("allot-opt", body)


if __name__ == "__main__":
    sys.exit(main())
