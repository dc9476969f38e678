"""Fusions over tensors of many `?` dimensions (nvFuser's `test_tensor_ndim` goes to 8): at
the size hint their estimated peak passes 2^63 bytes, which alloc-plan records saturated
(`tests/filecheck/passes/alloc-plan/many_dims.mlir`); every entry point plans and runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import allotment
from allotment import DataType, FusionDefinition


def _text(rank: int) -> str:
    t = f"tensor<{'x'.join(['?'] * rank)}xf32>"
    return (f"func.func @f(%x: {t}) -> {t} {{\n  %y = fusion.exp %x : {t}\n"
            f"  %z = fusion.add %y, %x : {t}\n  func.return %z : {t}\n}}\n")


def _shape(rank: int) -> tuple[int, ...]:
    return tuple(2 if d % 2 else 1 for d in range(rank))


@pytest.mark.parametrize("rank", [6, 8])
def test_compile_plan_sizes_and_memory_plan(rank: int) -> None:
    text, shape = _text(rank), _shape(rank)
    x = torch.randn(shape)
    (z,) = allotment.compile(text)(x)
    torch.testing.assert_close(z, x.exp() + x)
    plans = allotment.plan_sizes(text, {"x": shape})
    assert any(p.shape == shape for p in plans.values())
    profile = allotment.memory_plan(text, {"x": shape})
    assert profile.buffers


def test_fusion_definition_execute_rank_7() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1] * 7, contiguity=[True] * 7, dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t))
    x = torch.randn(_shape(7))
    (y,) = fd.execute([x])
    torch.testing.assert_close(y, x.exp())


def test_allot_opt_plans_rank_6(tmp_path: Path) -> None:
    path = tmp_path / "six.mlir"
    path.write_text(_text(6))
    opt = Path(sys.executable).with_name("allot-opt")
    done = subprocess.run([str(opt), str(path), "-p", "fusion-segment,fusion-allocate,alloc-place,alloc-alias,"
                           "alloc-plan,alloc-verify"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "alloc.estimated_peak = 9223372036854775807 : i64" in done.stdout
