"""The kernel kinds' table (`backend/kernel_kinds.KINDS`), one module per kind under
`backend/kernels/`, and the structured emission they share: the indented writer
(`backend/code_writer`), prelude helpers requested by name, bf16 rounding spelled by the
conversion itself on the CPU target. Only sources are generated: nothing is compiled or run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import allotment
from allotment.backend import kernel_kinds
from allotment.backend.code_writer import CodeWriter
from allotment.backend.kernels.emitter import Emitter
from allotment.backend.kernels.prelude import module_prelude
from allotment.dialects import alloc
from allotment.driver.runtime import find_function, run_pipeline
from allotment.ir import parse_module

ROOT = Path(__file__).resolve().parents[1]

CASES = {  # (file, function) -> the kinds of its kernels
    ("examples/scale.mlir", "scale"): {"pointwise"},
    ("examples/softmax.mlir", "softmax"): {"row_reduction"},
    ("examples/mlp.mlir", "mlp"): {"library", "pointwise"},
    ("tests/filecheck/target-python/aten_calls.mlir", "f"): {"aten"},
    ("tests/filecheck/target-python/inner_outer_rows.mlir", "rmsnorm_backward"): {"inner_outer"},
    ("tests/filecheck/target-python/inner_split_sizes.mlir", "bn_stats"): {"split_reduction"},
    ("tests/filecheck/target-python/donated_arguments.mlir", "bwd"): {"aten", "row_reduction", "scan_sort"},
}


def _kernels(path: str, function: str) -> list[alloc.KernelOp]:
    module = parse_module((ROOT / path).read_text(), path)
    f = find_function(run_pipeline(module, "cuda", True), function)
    return [op for op in f.walk() if isinstance(op, alloc.KernelOp) and op.kind.data not in ("view", "collective")]


def test_the_table_has_one_entry_per_kind_with_its_modules_hooks() -> None:
    names = [k.name for k in kernel_kinds.KINDS]
    assert len(names) == len(set(names))
    assert set(names) == {"library", "aten", "scatter", "inner_outer", "scan_sort", "split_reduction",
                          "row_reduction", "pointwise"}
    for kind in kernel_kinds.KINDS:
        if kind.host is not None:  # a call on the host: no Triton function
            assert kind.variants is None and kind.launch is None
            continue
        assert kind.variants is not None and kind.launch is not None
        assert issubclass(kind.emitter, Emitter) and kind.emitter is not Emitter
        assert kind.emitter.__module__.startswith("allotment.backend.kernels.")


@pytest.mark.parametrize(("case", "kinds"), list(CASES.items()), ids=[f for _, f in CASES])
def test_each_kernel_gets_its_kind(case: tuple[str, str], kinds: set[str]) -> None:
    assert {kernel_kinds.kind_of(k).name for k in _kernels(*case)} == kinds


def test_a_persistent_if_schedule_gets_both_row_variants() -> None:
    plans = [kernel_kinds.plan_kernel(k) for k in _kernels("examples/softmax.mlir", "softmax")]
    schedules = {p.kernel.schedule_name: kernel_kinds.variants(p) for p in plans}
    assert schedules.get("persistent_if", ["persistent", "looped"]) == ["persistent", "looped"]
    assert all(v in (["persistent"], ["looped"], ["persistent", "looped"]) for v in schedules.values())


BF16_ROWS = """
func.func @f(%x: tensor<?x128xbf16>, %w: tensor<1x128xbf16>) -> tensor<?x128xbf16> {
  %xf = fusion.cast %x : tensor<?x128xbf16> to tensor<?x128xf32>
  %m = fusion.max %xf dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %d = fusion.sub %xf, %m : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %t = fusion.tanh %d : tensor<?x128xf32>
  %y = fusion.cast %t : tensor<?x128xf32> to tensor<?x128xbf16>
  %z = fusion.mul %y, %w : tensor<?x128xbf16>, tensor<1x128xbf16> -> tensor<?x128xbf16>
  func.return %z : tensor<?x128xbf16>
}
"""


def _helpers_defined(source: str) -> set[str]:
    prelude = source.split("from allotment.backend import host_runtime as rt", 1)[0]
    return set(re.findall(r"^def (_\w+)\(", prelude, re.M))


def _calls(source: str) -> set[str]:
    code = "\n".join(line.split("  # ", 1)[0] for line in source.split("\n"))
    return set(re.findall(r"\b(_\w+)\b", code))


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_bf16_rounds_in_the_conversion_and_the_prelude_has_what_kernels_request(target: str) -> None:
    source = allotment.compile(BF16_ROWS).source(target)
    code = "\n".join(line.split("  # ", 1)[0] for line in source.split("\n"))
    defined = _helpers_defined(source)
    if target == "cpu":  # every conversion to bf16 rounds to nearest even (`prelude.to_dtype`)
        assert ".to(tl.bfloat16)" not in code
        assert "_to_bf16(" in code and "_to_bf16" in defined
    else:
        assert ".to(tl.bfloat16)" in code and "_to_bf16" not in defined
    assert {"_max_nan", "_tanh"} <= defined
    everything = _helpers_defined(module_prelude(target) + "\nfrom allotment.backend import host_runtime as rt")
    body = source.split("from allotment.backend import host_runtime as rt", 1)[1]
    assert defined == everything & _calls(body)  # requested by name: none missing, none unused


def test_the_writer_indents_blocks_and_restores_the_depth() -> None:
    w = CodeWriter(depth=1)
    w.line("for i in range(3):")
    with w.indent():
        w.line("x = i")
        with pytest.raises(ValueError), w.indent():
            w.line("y = x")
            raise ValueError
        w.line("z = x")
    w.line("done = True")
    assert w.lines == ["    for i in range(3):", "        x = i", "            y = x", "        z = x", "    done = True"]
