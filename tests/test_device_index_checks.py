"""Indices checked on the device (`index_check = "device"`, `fusion-index-checks`): the
kernels assert every index in range before they load or store at it, and the host
program reads no index. On the CPU (Triton's interpreter) an out-of-range index is a
RunError naming the op and its operands, raised before anything is read or written out of
range; in range, results are the reference evaluator's."""

from __future__ import annotations

import pytest
import torch

import allotment
from allotment.errors import RunError
from allotment.ir import find_function, parse_module
from allotment.passes.index_checks import set_index_checks
from allotment.reference import evaluate

OPS = {
    "index_select": ("""
func.func @f(%x: tensor<?x3xf32>, %i: tensor<4xi64>) -> tensor<4x3xf32> {
  %y = fusion.index_select %x, %i dim 0 : tensor<?x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}""", lambda i: [torch.randn(5, 3), i], [4, 0, 2, 1], 5, "operand #1 (%i) holds an index outside [0, extent) of dimension 0 of operand #0 (%x)"),
    "gather": ("""
func.func @f(%x: tensor<3x5xf32>, %i: tensor<3x2xi32>) -> tensor<3x2xf32> {
  %y = fusion.gather %x, %i dim 1 : tensor<3x5xf32>, tensor<3x2xi32> -> tensor<3x2xf32>
  %z = fusion.exp %y : tensor<3x2xf32>
  func.return %z : tensor<3x2xf32>
}""", lambda i: [torch.randn(3, 5), i.to(torch.int32).view(3, 2)], [4, 0, 2, 1, 3, 3], 5,
        "operand #1 (%i) holds an index outside [0, extent) of dimension 1 of operand #0 (%x)"),
    "take_along_axis": ("""
func.func @f(%x: tensor<5x2xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %y = fusion.take_along_axis %x, %i dim 0 : tensor<5x2xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}""", lambda i: [torch.randn(5, 2), i.view(3, 2)], [4, 0, 2, 1, 3, 3], 5,
        "operand #1 (%i) holds an index outside [0, extent) of dimension 0 of operand #0 (%x)"),
    "embedding": ("""
func.func @f(%i: tensor<2x2xi64>, %w: tensor<5x3xf32>) -> tensor<2x3xf32> {
  %e = fusion.embedding %i, %w : tensor<2x2xi64>, tensor<5x3xf32> -> tensor<2x2x3xf32>
  %s = fusion.sum %e dims [1] : tensor<2x2x3xf32> -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}""", lambda i: [i.view(2, 2), torch.randn(5, 3)], [4, 0, 2, 1], 5,
        "operand #0 (%i) holds an index outside [0, extent) of dimension 0 of operand #1 (%w)"),
    "scatter": ("""
func.func @f(%x: tensor<2x5xf32>, %i: tensor<2x2xi64>, %s: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %y = fusion.scatter %x, %i, %s dim 1 : tensor<2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}""", lambda i: [torch.randn(2, 5), i.view(2, 2), torch.randn(2, 2)], [4, 0, 2, 1], 5,
        "operand #1 (%i) holds an index outside [0, extent) of dimension 1 of operand #0 (%x)"),
    "index_put_accumulate": ("""
func.func @f(%a: tensor<?x3xf32>, %i: tensor<4xi64>, %v: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %y = fusion.index_put_accumulate %a, %i, %v : tensor<?x3xf32>, tensor<4xi64>, tensor<4x3xf32> -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}""", lambda i: [torch.randn(5, 3), i, torch.randn(4, 3)], [4, 0, 4, 1], 5,
        "operand #1 (%i) holds an index outside [0, extent) of dimension 0 of operand #0 (%a)"),
}


def _device_checked(text: str):  # noqa: ANN202
    module = parse_module(text)
    assert set_index_checks(module, "device") == 1
    return module


@pytest.fixture(scope="module")
def programs() -> dict[str, allotment.Executable]:
    return {name: allotment.compile(_device_checked(spec[0])) for name, spec in OPS.items()}


@pytest.mark.parametrize("name", sorted(OPS))
def test_in_range_matches_the_reference(programs, name: str) -> None:  # noqa: ANN001
    text, make, good, _, _ = OPS[name]
    torch.manual_seed(0)
    args = make(torch.tensor(good))
    got = programs[name](*args)
    want = evaluate(find_function(parse_module(text)), args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want, strict=True):
        torch.testing.assert_close(g, w)
    assert "rt.check_indices" not in programs[name].source("cpu")
    assert "tl.device_assert(" in programs[name].source("cpu")


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("where", ["extent", "negative"])
def test_out_of_range_is_a_run_error(programs, name: str, where: str) -> None:  # noqa: ANN001
    text, make, good, extent, words = OPS[name]
    bad = list(good)
    bad[1] = extent if where == "extent" else -1
    args = make(torch.tensor(bad))
    before = [a.clone() for a in args]
    with pytest.raises(RunError, match=rf"^index out of range: fusion\.{name}: " + _escaped(words)):
        programs[name](*args)
    for a, b in zip(args, before):  # nothing the caller passed was written
        assert torch.equal(a, b)


def test_host_checks_stay_the_default() -> None:
    """Without the attribute (FusionDefinition, text IR) the host checks, naming the value."""
    text = OPS["index_select"][0]
    exe = allotment.compile(text)
    assert "rt.check_indices(" in exe.source("cpu") and "tl.device_assert(" not in exe.source("cpu")
    with pytest.raises(RunError, match=r"holds index 7, outside \[0, 5\) of dimension 0"):
        exe(torch.randn(5, 3), torch.tensor([0, 7, 1, 2]))


def _escaped(words: str) -> str:
    import re

    return re.escape(words)
