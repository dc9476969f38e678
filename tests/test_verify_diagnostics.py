"""`allot-opt --verify-diagnostics`: annotations, their target lines, and the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.diagnostics import Diagnostic
from allotment.tools import allot_opt
from allotment.tools.verify_diagnostics import check, diagnostic_from_message, expected_diagnostics

TEXT = """\
%a = op   // expected-error {{same line}}
// expected-error@below {{below}}
// expected-error@+2 {{two below}}
%b = op
%c = op
// expected-error@above {{above}}
// expected-error@-3 {{three above}}
"""


def test_annotation_targets() -> None:
    found = [(e.text, e.line, e.annotation_line) for e in expected_diagnostics(TEXT)]
    assert found == [
        ("same line", 1, 1),
        ("below", 4, 2),
        ("two below", 5, 3),
        ("above", 5, 6),
        ("three above", 4, 7),
    ]


def test_line_offset_of_a_split_chunk() -> None:
    (e,) = expected_diagnostics("// expected-error@below {{x}}\n%a = op\n", line_offset=10)
    assert (e.line, e.annotation_line) == (12, 11)


@pytest.mark.parametrize("text", ["// expected-error@above {{x}}\n", "%a = op\n// expected-error@below {{x}}\n",
                                  "// expected-error@-5 {{x}}\n"])
def test_an_annotation_that_designates_no_line(text: str) -> None:
    with pytest.raises(ValueError, match="designates no line"):
        expected_diagnostics(text)


def test_check_matches_by_line_and_substring_once_each() -> None:
    expected = expected_diagnostics("%a = op // expected-error {{bad}}\n%b = op // expected-error {{bad}}\n")
    produced = [Diagnostic("f", 1, 1, "op: bad thing"), Diagnostic("f", 1, 1, "op: bad again")]
    assert check("f", expected, produced) == [
        "f:1:1: error: unexpected error: op: bad again",
        'f:2: error: expected error "bad" was not produced (at line 2)',
    ]


def test_warnings_and_notes_are_never_produced() -> None:
    expected = expected_diagnostics("%a = op // expected-warning {{w}}\n")
    assert check("f", expected, []) == ['f:1: error: expected warning "w" was not produced (at line 1)']


def test_messages_with_and_without_location() -> None:
    assert diagnostic_from_message("x.mlir:3:4: error: op: bad\n  %a = op\n  ^") == Diagnostic("x.mlir", 3, 4, "op: bad")
    assert diagnostic_from_message("pass: bad") == Diagnostic("", 0, 0, "pass: bad")
    assert str(Diagnostic("", 0, 0, "pass: bad")) == "error: pass: bad"


def test_a_designator_with_no_target_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "f.mlir"
    path.write_text("// expected-error@above {{x}}\n")
    assert allot_opt.main([str(path), "--verify-diagnostics"]) == 1
    assert "allot-opt: error: line 1: expected-error@above designates no line" in capsys.readouterr().err


def test_files_without_annotations_keep_xdsl_behaviour(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "f.mlir"
    path.write_text("func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) {\n"
                    "  %a = fusion.add %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>\n  func.return\n}\n")
    assert allot_opt.main([str(path), "--verify-diagnostics"]) == 0
    assert f"{path}:2:3: error: fusion.add: extents of dimension 0 do not broadcast" in capsys.readouterr().out
