"""The alloc-* passes on inputs they cannot take: a clear error and exit 1, never a traceback.

Each case is a fuzzer's reproducer, run through a real `allot-opt` subprocess: a function
still in tensor form given to `alloc-alias` (and to every other alloc-* pass), a scalar
declared an in-place output, an on-chip
buffer that is not a row given to `alloc-place`, an `alloc.pack` slot of negative size
(given as a constant, or computed), and an alloc whose `name` is no valid SSA name given to
`alloc-to-mlir` (that one succeeds, and its output parses again).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ALLOT_OPT = Path(sys.executable).parent / "allot-opt"

TENSOR_FORM = """func.func @step(%p: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}) {
  %p2 = fusion.neg %p : tensor<?xf32>
  func.return %p2 : tensor<?xf32>
}
"""

STRIDED_ROW = """func.func @kernel(%x: memref<?x64xbf16>) -> memref<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xbf16>
  %y = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x64xbf16>
  alloc.kernel "k0" pointwise ins(%x : memref<?x64xbf16>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%xi: tensor<?x64xbf16>):
    %tile = alloc.alloc() {memory = #alloc.memory<shared>} : memref<64x64xf32>
    alloc.yield %xi : tensor<?x64xbf16>
  }
  func.return %y : memref<?x64xbf16>
}
"""

SCALAR_ALIAS = """func.func @scalar(%s: f32, %t: f32) -> (f32 {fusion.alias_input = 0 : i64}) {
  func.return %t : f32
}
"""

NEGATIVE_SLOT = """func.func @f(%x: memref<16xf32>) {
  %n = arith.constant -1 : index
  %total, %oa = alloc.pack align 256 ([0, 0] = %n)
  func.return
}
"""

NEGATIVE_SLOT_COMPUTED = """func.func @f(%x: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.subi %c0, %c64 : index
  %total, %oa = alloc.pack align 256 ([0, 0] = %n)
  func.return
}
"""

BAD_NAMES = ["s t", "0abc", "", "%x", "a\\nb", "größe", "日本", "_1", "a-b.c$d", '\\"q\\"']
"""Buffer names as MLIR string literals (escapes as the parser reads them)."""


def _bad_name_module() -> str:
    allocs = "\n".join(
        f'  %b{i} = alloc.alloc() {{memory = #alloc.memory<global>, name = "{n}"}} : memref<4xf32>'
        for i, n in enumerate(BAD_NAMES)
    )
    values = ", ".join(f"%b{i}" for i in range(len(BAD_NAMES)))
    types = ", ".join("memref<4xf32>" for _ in BAD_NAMES)
    return f"func.func @f() -> ({types}) {{\n{allocs}\n  func.return {values} : {types}\n}}\n"


def _allot_opt(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "input.mlir"
    source.write_text(text, encoding="utf-8")
    return subprocess.run([str(ALLOT_OPT), str(source), *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=300)


def _assert_refused(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.mark.parametrize("pass_name", ["alloc-alias", "alloc-plan", "alloc-verify", "alloc-place",
                                       'alloc-evaluate{shapes="p=4"}', "alloc-to-mlir"])
def test_tensor_form_is_refused_by_every_alloc_pass(tmp_path: Path, pass_name: str) -> None:
    result = _allot_opt(tmp_path, TENSOR_FORM, "-p", pass_name)
    short = pass_name.split("{")[0]
    _assert_refused(result, "input.mlir:1:1: error:", f"{short}: @step must be allocated first",
                    "argument #0 %p is a tensor<?xf32>", "run fusion-segment and fusion-allocate first")


def test_tensor_form_allocated_first_goes_through(tmp_path: Path) -> None:
    result = _allot_opt(tmp_path, TENSOR_FORM, "-p", "fusion-segment,fusion-allocate,alloc-alias")
    assert result.returncode == 0, result.stderr
    assert 'alloc.alias = "in_place"' in result.stdout


@pytest.mark.parametrize("text, pipeline, expected", [
    pytest.param(SCALAR_ALIAS, "fusion-segment,fusion-allocate,alloc-alias",
                 ("input.mlir:1:1: error: func.func: result #0 (f32) cannot overwrite argument #0 (f32)",
                  "an in-place output is a tensor written into a tensor argument"), id="alias-a-scalar"),
    pytest.param(STRIDED_ROW, "alloc-place",
                 ("input.mlir:7:5: error: alloc.alloc: alloc-place:", "%tile (memref<64x64xf32>)",
                  "is not a row buffer", "rank-2"), id="place-a-buffer-that-is-no-row"),
    pytest.param(NEGATIVE_SLOT, "alloc-verify",
                 ("input.mlir:3:3: error: alloc.pack: slot #0: size operand is the constant -1",
                  "a slot cannot have a negative size"), id="negative-slot-constant"),
    pytest.param(NEGATIVE_SLOT_COMPUTED, "alloc-verify",
                 ("input.mlir:5:3: error: alloc.pack: slot #0 is given the size -64",), id="negative-slot-computed"),
])
def test_a_pass_refuses_what_it_cannot_take(tmp_path: Path, text: str, pipeline: str, expected: tuple[str, ...]) -> None:
    _assert_refused(_allot_opt(tmp_path, text, "-p", pipeline), *expected)


def test_negative_slot_at_run_time_is_an_allotment_error() -> None:
    from allotment.analysis import packing
    from allotment.errors import ArgumentError, Error

    with pytest.raises(Error, match="slot #1 has the size -8: a slot cannot have a negative size") as e:
        packing.pack([16, -8], [(0, 1), (1, 2)], 256)
    assert isinstance(e.value, ArgumentError)


def test_alloc_to_mlir_sanitizes_buffer_names(tmp_path: Path) -> None:
    result = _allot_opt(tmp_path, _bad_name_module(), "-p", "alloc-to-mlir")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lowered = result.stdout
    for fragment in ("%s_t = memref.alloc()", "%v0abc = ", "%_x = ", "%a_b = ", "%gr_u00f6_u00dfe = ",
                     "%_u65e5_u672c = ", "%v = ", "%a-b.c$d = ", "%_q_ = ", 'alloc.name = "s t"'):
        assert fragment in lowered, lowered
    again = _allot_opt(tmp_path, lowered)
    assert again.returncode == 0, again.stderr
    assert again.stdout == lowered  # the names printed are the names parsed
