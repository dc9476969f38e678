"""Deep nesting, long fusions and one-line files: results or located errors, never a
RecursionError or an internal error (allotment.limits, allotment.diagnostics)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import allotment
from allotment.diagnostics import walk_ops
from allotment.ir import find_function, function_names
from allotment.limits import MAX_ATTRIBUTE_DEPTH, MAX_REGION_DEPTH, call_with_deep_stack
from allotment.tools import allot_opt

ROOT = Path(__file__).resolve().parents[1]


def nested_regions(depth: int) -> str:
    """A fusion whose body holds `depth` nested scf.execute_region ops (one line each)."""
    opening = "scf.execute_region {\n" * depth
    closing = "scf.yield\n}\n" * depth
    return (
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        f"{opening}%a = fusion.exp %x : tensor<4xf32>\n{closing}"
        "func.return %x : tensor<4xf32>\n}\n"
    )


def nested_modules(depth: int) -> str:
    return "builtin.module {\n" * depth + "}\n" * depth


def chain(n: int, separator: str = "\n") -> str:
    """A pointwise chain of n fusion.exp ops."""
    ops = [f"%a{i} = fusion.exp {'%x' if i == 0 else f'%a{i - 1}'} : tensor<4xf32>" for i in range(n)]
    return separator.join(
        ["func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {", *ops, f"func.return %a{n - 1} : tensor<4xf32>", "}"]
    )


def opt(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "f.mlir"
    path.write_text(text)
    rc = allot_opt.main([str(path), *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.mark.parametrize("text", [nested_regions(1000), nested_modules(1000)], ids=["execute_region", "module"])
def test_parse_module_of_1000_nested_regions(text: str) -> None:
    limit = sys.getrecursionlimit()
    module = allotment.parse_module(text, "deep.mlir")
    assert sum(1 for _ in walk_ops(module)) >= 1000
    assert sys.getrecursionlimit() == limit  # raised only while parsing


def test_walks_of_deep_modules_need_no_deep_stack() -> None:
    module = allotment.parse_module(nested_regions(1000))
    assert function_names(module) == ["f"]
    assert find_function(module, "@f").sym_name.data == "f"


def test_regions_nested_beyond_the_limit_are_a_located_parse_error() -> None:
    with pytest.raises(allotment.ParseError) as e:
        allotment.parse_module(nested_modules(MAX_REGION_DEPTH + 1), "deep.mlir")
    assert str(e.value).startswith(f"deep.mlir:{MAX_REGION_DEPTH + 1}:16: error: regions nested deeper than")


@pytest.mark.parametrize("depth", [MAX_ATTRIBUTE_DEPTH + 1, 200_000])
def test_attributes_nested_too_deeply_are_a_located_parse_error(depth: int) -> None:
    text = "func.func @f() attributes {a = " + "[" * depth + "]" * depth + "} {\n  func.return\n}\n"
    with pytest.raises(allotment.ParseError) as e:
        allotment.parse_module(text, "attr.mlir")
    column = len("func.func @f() attributes {a = ") + MAX_ATTRIBUTE_DEPTH + 1
    assert str(e.value).startswith(f"attr.mlir:1:{column}: error: types or attributes nested too deeply")


def test_types_nested_too_deeply_are_a_located_parse_error() -> None:
    text = "func.func @f(%x: " + "tensor<" * 1000 + "f32" + ">" * 1000 + ") {\n  func.return\n}\n"
    with pytest.raises(allotment.ParseError, match=r"^t\.mlir:1:\d+: error: types or attributes nested too deeply"):
        allotment.parse_module(text, "t.mlir")


def test_attributes_nested_up_to_the_limit_parse_and_print() -> None:
    depth = MAX_ATTRIBUTE_DEPTH
    text = "func.func @f() attributes {a = " + "[" * depth + "]" * depth + "} {\n  func.return\n}\n"
    assert "[" * depth in str(allotment.parse_module(text))  # printed on this thread's ordinary stack


def test_allot_opt_prints_1000_nested_regions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, err = opt(capsys, tmp_path, nested_modules(1000))
    assert (rc, err) == (0, "")
    assert out.count("builtin.module") == 1000


def test_allot_opt_passes_over_1000_nested_regions_give_a_located_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc, out, err = opt(capsys, tmp_path, nested_regions(1000), "-p", "fusion-segment,fusion-allocate")
    assert rc == 1 and out == ""
    assert err.startswith(f"{tmp_path / 'f.mlir'}:2:1: error: scf.execute_region: fusion-segment: an op with regions")


def test_allot_opt_passes_over_1000_nested_modules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, err = opt(capsys, tmp_path, nested_modules(1000), "-p", "fusion-segment,fusion-allocate")
    assert (rc, err) == (0, "")
    assert out.count("builtin.module") == 1000


def test_allot_opt_subprocess_beyond_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "deep.mlir"
    path.write_text(nested_modules(MAX_REGION_DEPTH + 1))
    r = subprocess.run(
        [sys.executable, "-m", "allotment.tools.allot_opt", str(path)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"{path}:{MAX_REGION_DEPTH + 1}:16: error: regions nested deeper than")
    assert "Traceback" not in r.stderr


def test_a_10000_op_chain_goes_through_the_passes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, err = opt(capsys, tmp_path, chain(10_000), "-p", "fusion-segment,fusion-allocate")
    assert (rc, err) == (0, "")
    assert out.count("alloc.kernel") == 1  # one pointwise kernel
    assert out.count("fusion.exp") == 10_000


def test_one_line_fusion_errors_are_located(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = "%a1999 = fusion.cast %a1998 : tensor<4xf32> -> tensor<4xf32>"
    text = chain(2_000, " ").replace("%a1999 = fusion.exp %a1998 : tensor<4xf32>", bad)
    rc, out, err = opt(capsys, tmp_path, text)
    assert rc == 1 and out == ""
    column = text.index(bad) + bad.index("->") + 1
    assert err.startswith(f"{tmp_path / 'f.mlir'}:1:{column}: error: Expected 'to'")


def test_call_with_deep_stack_returns_raises_and_nests() -> None:
    assert call_with_deep_stack(lambda: call_with_deep_stack(lambda: 42)) == 42
    with pytest.raises(KeyError, match="x"):
        call_with_deep_stack(lambda: {}["x"])


def test_deep_python_recursion_fits_the_deep_stack() -> None:
    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert call_with_deep_stack(lambda: depth(100_000)) == 100_000


def test_compile_of_1000_nested_regions_gives_a_located_error() -> None:
    """`allotment.compile` walks the function before any pass (is it sharded?): that walk is
    iterative, so 1,000 nested regions (under the documented 4,096) give the located error of
    fusion-segment, not a RecursionError on the caller's thread."""
    with pytest.raises(allotment.CompileError, match=r"<string>:2:1: error: scf.execute_region: fusion-segment"):
        allotment.compile(nested_regions(1000))(torch.zeros(4))


def test_is_sharded_function_walks_any_depth_on_any_thread() -> None:
    from allotment.passes.sharding_propagation import is_sharded_function

    module = allotment.parse_module(nested_regions(3000))
    assert is_sharded_function(find_function(module, None)) is False  # on this thread's own stack
