"""The project's own code calls no deprecated xDSL API: the compile pipeline on the
examples and on the in-place and concat cases of alloc-alias, and the parser of every
alloc op, run with DeprecationWarning raised as an error."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from allotment.diagnostics import LocatedParser
from allotment.ir import make_context
from allotment.passes.pipeline import compile_passes, run_pipeline

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    *sorted((ROOT / "examples").glob("*.mlir")),
    ROOT / "tests/filecheck/passes/alloc-alias/concat.mlir",
    ROOT / "tests/filecheck/passes/alloc-alias/decisions.mlir",
]


INLINE = {
    # an in-place output into a `?` argument, sized by another argument's extent: a
    # memref.dim of the argument for the check that the two agree (alloc-alias)
    "in_place_dynamic": """
func.func @f(%p: tensor<?xf32>, %g: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}) {
  %y = fusion.add %g, %g : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
""",
    # a cat with a `?` argument among its operands: memref.dims of the argument (concat in place)
    "cat_of_a_dynamic_argument": """
func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x6x3xf32>) -> tensor<?x10xf32> {
  %b = fusion.max %y dims [2] : tensor<?x6x3xf32> -> tensor<?x6xf32>
  %c = fusion.cat %x, %b dim 1 : tensor<?x4xf32>, tensor<?x6xf32> -> tensor<?x10xf32>
  func.return %c : tensor<?x10xf32>
}
""",
}


@pytest.mark.parametrize("name", INLINE)
def test_the_pipeline_on_dynamic_arguments_calls_no_deprecated_api(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        module = LocatedParser(make_context(), INLINE[name], f"{name}.mlir").parse_module()
        run_pipeline(module, compile_passes("cpu"))


def chunks(path: Path) -> list[str]:
    return [c for c in path.read_text().split("// -----") if "func.func" in c]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_the_pipeline_calls_no_deprecated_api(path: Path) -> None:
    for text in chunks(path):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            module = LocatedParser(make_context(), text, path.name).parse_module()
            run_pipeline(module, compile_passes("cpu"))


def test_alloc_check_parses_without_a_deprecated_call() -> None:
    text = ("func.func @f(%a: index, %b: index) {\n  alloc.check ge %a, %b, \"a >= b\"\n"
            "  func.return\n}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        module = LocatedParser(make_context(), text, "t.mlir").parse_module()
    assert 'alloc.check ge %a, %b, "a >= b"' in str(module)
