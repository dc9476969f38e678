"""`plan_sizes` and `allocate_intermediates`: sizes from input shapes alone."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch
from xdsl.printer import Printer

import allotment
from allotment.analysis.size_eval import SizeError
from allotment.driver import runtime
from allotment.ir import parse_module

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str) -> str:
    return (EXAMPLES / f"{name}.mlir").read_text()


def test_plan_of_rmsnorm_has_the_output_and_the_row_buffer() -> None:
    plan = allotment.plan_sizes(example("rmsnorm"), {"x": (8, 64)})
    assert set(plan) == {"y", "k0_row_ms"}
    y, row = plan["y"], plan["k0_row_ms"]
    assert (y.shape, y.dtype, y.memory, y.nbytes, y.kernel) == ((8, 64), "bfloat16", "global", 8 * 64 * 2, None)
    assert (row.shape, row.dtype, row.memory, row.nbytes, row.kernel) == ((64,), "float32", "local", 256, "k0")


def test_sizes_follow_the_symbolic_extent() -> None:
    for rows in (1, 7, 1000):
        plan = allotment.plan_sizes(example("add_rmsnorm"), {"x": (rows, 64), "r": (rows, 64)})
        assert plan["h"].shape == plan["y"].shape == (rows, 64)


def test_allocate_intermediates_compiles_and_launches_nothing() -> None:
    before = runtime.COMPILATIONS
    buffers = allotment.allocate_intermediates(example("layernorm"), {"x": (5, 64)}, device="cpu")
    assert runtime.COMPILATIONS == before
    assert {k: (tuple(v.shape), v.dtype, v.device.type) for k, v in buffers.items()} == {
        "y": ((5, 64), torch.bfloat16, "cpu")
    }


def test_eager_segmentation_allocates_every_intermediate() -> None:
    text = example("rmsnorm")
    module = parse_module(text)
    from xdsl.context import Context

    from allotment.passes.fusion_allocate import FusionAllocatePass
    from allotment.passes.fusion_segment import FusionSegmentPass

    FusionSegmentPass(one_op_per_kernel=True).apply(Context(), module)
    FusionAllocatePass().apply(Context(), module)
    from allotment.analysis.size_eval import evaluate_sizes

    f = next(op for op in module.walk() if op.name == "func.func")
    sizes = {b.name: b.shape for b in evaluate_sizes(f, [(3, 64), (64,)]) if b.memory == "global"}
    assert sizes["xf"] == sizes["sq"] == sizes["xn"] == sizes["yf"] == sizes["y"] == (3, 64)
    assert sizes["ms"] == sizes["mse"] == sizes["inv"] == (3, 1)
    assert sizes["wf"] == (64,)


def test_shards_get_local_sizes_and_off_mesh_devices_allocate_nothing() -> None:
    text = example("sharded_mlp")
    on = allotment.plan_sizes(text, {"x": (8, 64)}, function="column_parallel_mlp", device_id=1)
    assert {k: (v.shape, v.nbytes) for k, v in on.items()} == {
        "a": ((8, 128), 8 * 128 * 2),
        "h": ((8, 128), 8 * 128 * 2),  # computed in place into a (its last use): alloc-plan; a's bytes
    }
    assert on["h"].memory == "reused"
    off = allotment.plan_sizes(text, {"x": (8, 64)}, function="column_parallel_mlp", device_id=5)
    assert sum(v.nbytes for v in off.values()) == 0
    assert all(not v.on_device for v in off.values())
    assert allotment.allocate_intermediates(text, {"x": (8, 64)}, function="column_parallel_mlp", device_id=5) == {}


def test_uneven_shards_are_ceildiv() -> None:
    plan = allotment.plan_sizes(example("sharded_mlp"), {"x": (4, 64)}, function="vocab_parallel_logits", device_id=0)
    assert plan["l"].shape == (4, 25129)  # ceildiv(50257, 2)


def test_the_fusion_passed_in_is_not_modified() -> None:
    module = parse_module(example("softmax"))

    def text() -> str:
        stream = io.StringIO()
        Printer(stream=stream).print_op(module)
        return stream.getvalue()

    before = text()
    allotment.plan_sizes(module, {"x": (2, 128)})
    assert text() == before


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"x": (8, 63)}, "argument x: shape 8x63 does not fit"),
        ({"x": (8,)}, "argument x: shape 8 does not fit"),
        ({}, "missing a shape for argument x"),
    ],
)
def test_bad_shapes_name_the_argument(shapes: dict, message: str) -> None:
    with pytest.raises(SizeError, match=message):
        allotment.plan_sizes(example("rmsnorm"), shapes)


def test_mismatched_extents_fail_at_entry_with_both_values() -> None:
    with pytest.raises(SizeError, match=r"x.shape\[0\].*r.shape\[0\].*\(got 8 and 9\)"):
        allotment.plan_sizes(example("add_rmsnorm"), {"x": (8, 64), "r": (9, 64)})


def test_reshape_with_incompatible_numel_fails_at_entry() -> None:
    text = """
func.func @f(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %y = fusion.reshape %x [-1, 4] : tensor<?xf32> -> tensor<?x4xf32>
  %z = fusion.exp %y : tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}
"""
    assert allotment.plan_sizes(text, {"x": (12,)})["z"].shape == (3, 4)
    with pytest.raises(SizeError, match=r"divisible by 4.*\(got 10 and 4\)"):
        allotment.plan_sizes(text, {"x": (10,)})


REUSE = """func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %e = fusion.matmul %x, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %y = fusion.relu %e : tensor<?x8xf32>
  %g = fusion.matmul %y, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %h = fusion.exp %g : tensor<?x8xf32>
  func.return %y, %h : tensor<?x8xf32>, tensor<?x8xf32>
}
"""


def test_outputs_written_into_a_dead_buffer_are_listed_by_name() -> None:
    """alloc-plan writes output %y into the buffer of %e (dead once %y's kernel read it) and
    %h into %g's: plan_sizes and memory_plan still list %y and %h by name, as tensors whose
    bytes are the reused buffer's (counted once); allocate_intermediates makes that one buffer."""
    plans = allotment.plan_sizes(REUSE, {"x": (4, 8)})
    assert set(plans) == {"e", "y", "g", "h"}
    assert (plans["y"].memory, plans["y"].nbytes, plans["y"].shape) == ("reused", 128, (4, 8))
    assert plans["e"].memory == "global" and plans["h"].memory == "reused"
    profile = allotment.memory_plan(REUSE, {"x": (4, 8)})
    named = {b.name: b for b in profile.buffers}
    assert set(named) == {"e", "y", "g", "h"}
    assert named["y"].memory == "in place of e" and not named["y"].holds_memory
    assert named["y"].returned and named["h"].returned
    assert profile.planned_peak == 256  # e and g, each counted once
    buffers = allotment.allocate_intermediates(REUSE, {"x": (4, 8)}, device="cpu")
    assert set(buffers) == {"e", "g"}
