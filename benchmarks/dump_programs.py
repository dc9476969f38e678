"""Writes the generated host program (with its Triton kernels) of every fusion of examples/,
tests/filecheck/target-python/ and the benchmark suite into one folder, one file per fusion
and target, for a before-and-after `diff -r` of a change that should not change kernels.

    .venv/bin/python benchmarks/dump_programs.py /tmp/before      # on the old commit
    .venv/bin/python benchmarks/dump_programs.py /tmp/after       # on the new one
    diff -r /tmp/before /tmp/after

Only sources are generated (`Executable.source`): no GPU, no kernel compiled or run. The
suite's fusions are dumped bf16 with `?` extents (cuda and cpu targets), bf16 static at the
odd size and f32 static at the small size (cuda). A fusion that does not compile is written
as one `ERROR ...` line, so that a change in what compiles shows in the diff too.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import allotment  # noqa: E402
from allotment.ir import function_names, parse_module  # noqa: E402

SUITE_VARIANTS = (("bf16", True, "large", ("cuda", "cpu")), ("bf16", False, "odd", ("cuda",)),
                  ("f32", False, "small", ("cuda",)))
"""(dtype, `?` extents, size, targets) of each suite fusion dumped."""


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:150] + ".py"


def cases() -> Iterator[tuple[str, str, str | None, str]]:
    """(file name, IR text, function, target) of every program to dump."""
    files = [*sorted((ROOT / "examples").glob("*.mlir")), *sorted((ROOT / "tests/filecheck/target-python").glob("*.mlir"))]
    for path in files:
        text = path.read_text()
        try:
            names = function_names(parse_module(text, str(path)))
        except allotment.Error:
            continue  # an invalid-IR test input
        for fn in names:
            for target in ("cpu", "cuda"):
                yield _file_name(f"{path.relative_to(ROOT)}.{fn}.{target}"), text, fn, target
    import suite_fusions

    for name, fusion in suite_fusions.FUSIONS.items():
        for dtype, dynamic, size, targets in SUITE_VARIANTS:
            text = fusion.text(dtype, dynamic, size)
            for target in targets:
                kind = "dyn" if dynamic else "static"
                yield _file_name(f"suite.{name}.{dtype}.{kind}.{size}.{target}"), text, None, target


def source(text: str, function: str | None, target: str) -> str:
    """The generated program, its cache key masked (it hashes the code generator's own files)."""
    try:
        src = allotment.compile(text, function=function).source(target)
    except allotment.Error as e:
        return f"ERROR {type(e).__name__}: {e}\n"
    return re.sub(r"allotment_program_[0-9a-f]+", "KEY", src)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write (created)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    n = 0
    for name, text, function, target in cases():
        (args.out / name).write_text(source(text, function, target))
        n += 1
    print(f"{n} programs in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
