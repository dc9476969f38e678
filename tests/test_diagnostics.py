"""Located diagnostics of `allotment.parse_module` (allotment.diagnostics): malformed
input gives a `ParseError` or `VerifyError` at `name:line:col`, never an internal error
or a hang."""

from __future__ import annotations

import time

import pytest

import allotment

FN = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{\n{body}\n}}\n"


def error_of(text: str) -> allotment.Error:
    with pytest.raises(allotment.Error) as e:
        allotment.parse_module(text, "t.mlir")
    return e.value


def test_use_before_definition_is_located() -> None:
    e = error_of(FN.format(body="  %y = fusion.neg %z : tensor<4xf32>\n  %z = fusion.neg %x : tensor<4xf32>\n"
                                "  func.return %y : tensor<4xf32>"))
    assert isinstance(e, allotment.VerifyError)
    assert str(e).startswith("t.mlir:2:3: error: fusion.neg: operand #0 (%z) is used before it is defined")


def test_an_integer_out_of_range_is_a_located_parse_error() -> None:
    e = error_of(FN.format(body="  %y = fusion.full %x [18446744073709551616] : f32 -> tensor<4xf32>\n"
                                "  func.return %y : tensor<4xf32>").replace("%x: tensor<4xf32>", "%x: f32"))
    assert isinstance(e, allotment.ParseError)
    assert str(e).startswith("t.mlir:2:3: error: invalid operation: Integer value 18446744073709551616 is out of range")


def test_an_unterminated_string_fails_fast() -> None:
    start = time.perf_counter()
    e = error_of(FN.format(body='  %y = fusion.cast %x {note = "abc} : tensor<4xf32> to tensor<4xf32> ' + "x" * 60
                                + "\n  func.return %y : tensor<4xf32>"))
    assert time.perf_counter() - start < 10  # xDSL's own pattern backtracks for hours on this line
    assert isinstance(e, allotment.ParseError)
    assert str(e).startswith("t.mlir:2:31: error: End of file reached before closing string literal")


def test_a_missing_terminator_is_located_at_its_function() -> None:
    e = error_of(FN.format(body="  %y = fusion.neg %x : tensor<4xf32>"))
    assert isinstance(e, allotment.VerifyError)
    assert str(e).startswith("t.mlir:1:1: error: func.func: Operation fusion.neg terminates block")


def test_a_symbol_defined_twice_is_located_at_the_second_definition() -> None:
    e = error_of("fusion.mesh @m shape 2 devices [0, 1]\nfusion.mesh @m shape 2 devices [2, 3]\n")
    assert isinstance(e, allotment.VerifyError)
    assert str(e).startswith('t.mlir:2:1: error: fusion.mesh: Redefinition of symbol "m"')


def test_parse_module_needs_text() -> None:
    with pytest.raises(allotment.ArgumentError, match="text must be a str, not bytes"):
        allotment.parse_module(b"")  # type: ignore[arg-type]
