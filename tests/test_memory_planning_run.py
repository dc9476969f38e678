"""Planned programs run correctly: concat without copies, in-place outputs, memory-aware
orders and frees, each compiled and checked against the reference evaluator, with
poison mode on (every freed buffer is filled with NaN, or a sentinel for integers,
before it is dropped), so a plan that reads freed memory gives wrong numbers.

The same checks run on the GPU through `tests/gpu/check_planning.py`.
"""

from __future__ import annotations

import pytest
import torch
from backend_check import compare, tolerance

import allotment
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate

CAT = """
func.func @cat(%x: tensor<?x4xf32>, %y: tensor<?x6xf32>) -> tensor<?x10xf32> {
  %a = fusion.exp %x : tensor<?x4xf32>
  %b = fusion.neg %y : tensor<?x6xf32>
  %c = fusion.cat %a, %b dim 1 : tensor<?x4xf32>, tensor<?x6xf32> -> tensor<?x10xf32>
  func.return %c : tensor<?x10xf32>
}
"""

CAT3D = """
func.func @cat3(%x: tensor<2x?x8xf32>, %y: tensor<2x?x8xf32>, %z: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %a = fusion.exp %x : tensor<2x?x8xf32>
  %b = fusion.sin %y : tensor<2x?x8xf32>
  %t = fusion.tanh %z : tensor<2x?x8xf32>
  %c = fusion.cat %a, %b, %t dim 1 : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  %d = fusion.mul %c, %c : tensor<2x?x8xf32>
  func.return %d : tensor<2x?x8xf32>
}
"""

STEP = """
func.func @step(%p: tensor<?xf32>, %g: tensor<?xf32>, %m: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}, tensor<?xf32> {fusion.alias_input = 2 : i64}) {
  %c = arith.constant 0.9 : f32
  %lr = arith.constant 0.01 : f32
  %m2 = fusion.mul %m, %c : tensor<?xf32>, f32 -> tensor<?xf32>
  %m3 = fusion.add %m2, %g : tensor<?xf32>
  %s = fusion.mul %m3, %lr : tensor<?xf32>, f32 -> tensor<?xf32>
  %p2 = fusion.sub %p, %s : tensor<?xf32>
  func.return %p2, %m3 : tensor<?xf32>, tensor<?xf32>
}
"""

HAZARD = """
func.func @hazard(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>) -> (tensor<?x4xf32> {fusion.alias_input = 0 : i64}, tensor<?x4xf32>) {
  %c = arith.constant 1.0 : f32
  %y = fusion.add %x, %c : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  %z = fusion.matmul %x, %w : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
  func.return %y, %z : tensor<?x4xf32>, tensor<?x4xf32>
}
"""

COPIED = """
func.func @copied(%x: tensor<8x4xf32>) -> (tensor<8x4xf32> {fusion.alias_input = 0 : i64}, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %y = fusion.add %x, %c : tensor<8x4xf32>, f32 -> tensor<8x4xf32>
  %s = fusion.sum %x dims [0] : tensor<8x4xf32> -> tensor<4xf32>
  func.return %y, %s : tensor<8x4xf32>, tensor<4xf32>
}
"""

BAD_ORDER = """
func.func @bad_order(%x: tensor<?x8xf32>, %wa: tensor<16x8xf32>, %wb: tensor<16x8xf32>, %wc: tensor<16x8xf32>) -> tensor<?xf32> {
  %a = fusion.linear %x, %wa : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
  %b = fusion.linear %x, %wb : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
  %c = fusion.linear %x, %wc : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
  %ra = fusion.sum %a dims [1] : tensor<?x16xf32> -> tensor<?xf32>
  %rb = fusion.sum %b dims [1] : tensor<?x16xf32> -> tensor<?xf32>
  %rc = fusion.sum %c dims [1] : tensor<?x16xf32> -> tensor<?xf32>
  %s = fusion.add %ra, %rb : tensor<?xf32>
  %y = fusion.add %s, %rc : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""


@pytest.fixture(autouse=True)
def poison(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOT_POISON", "1")


def inputs_for(text: str, shapes: list[tuple[int, ...]], seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g) for s in shapes]


def run_and_compare(text: str, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    f = find_function(parse_module(text))
    expected = evaluate(f, [x.clone() for x in inputs])
    actual = allotment.compile(text)(*inputs)
    compare(actual, expected, tolerance(text))
    return list(actual)


def planned_source(text: str) -> str:
    return allotment.compile(text).source("cpu")


@pytest.mark.parametrize("rows", [1, 3, 8])
def test_concat_writes_slices(rows: int) -> None:
    run_and_compare(CAT, inputs_for(CAT, [(rows, 4), (rows, 6)]))
    source = planned_source(CAT)
    run_body = source.split("def run", 1)[1]
    assert run_body.count("launch_") == 1  # the producers are index arithmetic in the cat's kernel
    assert source.count("torch.empty") == 1  # only the cat's buffer


@pytest.mark.parametrize("middle", [1, 5])
def test_concat_3d_dynamic_offsets(middle: int) -> None:
    run_and_compare(CAT3D, inputs_for(CAT3D, [(2, middle, 8), (2, middle + 1, 8), (2, 2, 8)]))


def test_in_place_step_writes_the_inputs() -> None:
    p, g, m = inputs_for(STEP, [(37,), (37,), (37,)])
    f = find_function(parse_module(STEP))
    expected = evaluate(f, [p.clone(), g.clone(), m.clone()])
    p_ptr, m_ptr = p.data_ptr(), m.data_ptr()
    out_p, out_m = allotment.compile(STEP)(p, g, m)
    assert out_p.data_ptr() == p_ptr and out_m.data_ptr() == m_ptr  # the inputs themselves
    compare([p, m], expected, 1e-5)
    assert "torch.empty" not in planned_source(STEP)


def test_in_place_hazard_is_resolved() -> None:
    x, w = inputs_for(HAZARD, [(5, 4), (4, 4)])
    x0 = x.clone()
    (y, z) = allotment.compile(HAZARD)(x, w)
    torch.testing.assert_close(z, x0 @ w)  # the matmul read x before it was overwritten
    torch.testing.assert_close(x, x0 + 1)
    assert y.data_ptr() == x.data_ptr()


def test_in_place_hazard_without_the_fix_is_wrong(tmp_path) -> None:  # noqa: ANN001
    """The hazard is real: writing in place with no reordering gives a wrong matmul."""
    from allotment.backend.host_codegen import emit_program
    from allotment.driver import runtime
    from allotment.passes.alloc_alias import AllocAliasPass
    from allotment.passes.fusion_allocate import FusionAllocatePass
    from allotment.passes.fusion_segment import FusionSegmentPass
    from allotment.passes.pipeline import run_pipeline

    unsafe = run_pipeline(
        parse_module(HAZARD), [FusionSegmentPass(), FusionAllocatePass(), AllocAliasPass(resolve_hazards=False)]
    )
    source = emit_program(find_function(unsafe), "cpu").source
    program = runtime.load_program(tmp_path / "unsafe.py", source, "unsafe", "cpu")
    x, w = inputs_for(HAZARD, [(5, 4), (4, 4)])
    x0 = x.clone()
    _, z = program(x, w)
    assert not torch.allclose(z, x0 @ w)
    torch.testing.assert_close(z, (x0 + 1) @ w)


def test_in_place_copy_fallback() -> None:
    x = inputs_for(COPIED, [(8, 4)])[0]
    x0 = x.clone()
    y, s = allotment.compile(COPIED)(x)
    torch.testing.assert_close(s, x0.sum(0))
    torch.testing.assert_close(x, x0 + 1)
    assert y.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("rows", [1, 6])
def test_bad_order_with_frees(rows: int) -> None:
    run_and_compare(BAD_ORDER, inputs_for(BAD_ORDER, [(rows, 8), (16, 8), (16, 8), (16, 8)]))
    source = planned_source(BAD_ORDER)
    run_body = source.split("def run", 1)[1]
    assert run_body.count("del ") >= 3  # the three projections are freed


def test_memory_plan_api_and_cli(tmp_path) -> None:  # noqa: ANN001
    """`allotment.memory_plan` and `allot-run --memory-report/--memory-plot` give the same plan."""
    import subprocess
    import sys
    from pathlib import Path

    plan = allotment.memory_plan(BAD_ORDER, {"x": (1000, 8)})
    assert plan.lower_bound <= plan.planned_peak <= plan.without_reuse
    assert {b.name for b in plan.buffers} >= {"y"}
    source = tmp_path / "bad_order.mlir"
    source.write_text(BAD_ORDER)
    tool = Path(sys.executable).with_name("allot-run")
    report = subprocess.run([str(tool), str(source), "--shapes", "x=1000x8", "--memory-report"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    lines = report.stdout.strip().splitlines()
    assert lines[-1] == plan.summary()
    assert sum(1 for line in lines if line.startswith("planned peak:")) == 1
    picture = tmp_path / "plan.png"
    drawn = subprocess.run([str(tool), str(source), "--shapes", "x=1000x8", "--memory-plot", str(picture)],
                           capture_output=True, text=True, timeout=300)
    assert drawn.returncode == 0, drawn.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mlp_example_reuses_and_frees_its_hidden_activation() -> None:
    """examples/mlp.mlir: the planned program matches the reference (with the interpreter
    rounding bf16 to nearest, as GPUs do); the GELU overwrites the hidden activation in place,
    which is freed after the second projection."""
    from pathlib import Path

    from backend_check import interpreter_rounding_to_nearest

    from allotment.reference import random_inputs

    text = (Path(__file__).resolve().parents[1] / "examples" / "mlp.mlir").read_text()
    f = find_function(parse_module(text))
    inputs = random_inputs(f, {"x": (2, 1024)}, seed=0)
    expected = evaluate(f, inputs)
    with interpreter_rounding_to_nearest():
        actual = allotment.compile(text)(*inputs)
    compare(actual, expected, tolerance(text))
    plan = allotment.memory_plan(text, {"x": (4096, 1024)})
    assert {b.name for b in plan.buffers if b.holds_memory} == {"h", "y"}
    gelu = next(b for b in plan.buffers if b.name == "gb")  # the GELU writes its result into h
    assert gelu.memory == "in place of h" and gelu.nbytes == 4096 * 4096 * 2
    assert [b.name for b in plan.buffers if b.freed is not None] == ["h", "gb"]
    assert plan.planned_peak == 4096 * 4096 * 2 + 4096 * 1024 * 2  # h and y, as torch.compile
    assert plan.without_reuse == plan.planned_peak + 4096 * 4096 * 2


OVERWRITE_FIRST = """
func.func @overwrite_first(%p: tensor<?xf32>, %g: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}, tensor<?xf32>) {
  %c = arith.constant 3.0 : f32
  %one = arith.constant 1.0 : f32
  %p2 = fusion.mul %g, %c : tensor<?xf32>, f32 -> tensor<?xf32>
  %pg = fusion.add %p, %g : tensor<?xf32>
  %r = fusion.add %pg, %one : tensor<?xf32>, f32 -> tensor<?xf32>
  func.return %p2, %r : tensor<?xf32>, tensor<?xf32>
}
"""


def test_an_output_overwriting_an_input_is_stored_after_every_load() -> None:
    """One kernel stores the in-place output (into %p) and another output that reads %p:
    the kernel loads %p before it stores anything, so the second output sees the old %p."""
    p, g = inputs_for(OVERWRITE_FIRST, [(300,), (300,)])
    p0 = p.clone()
    out_p, r = allotment.compile(OVERWRITE_FIRST)(p, g)
    assert out_p.data_ptr() == p.data_ptr()
    torch.testing.assert_close(p, g * 3)
    torch.testing.assert_close(r, p0 + g + 1)
    assert allotment.compile(OVERWRITE_FIRST).source("cpu").count("\ndef launch_k") == 1  # one kernel (its tiled and flat functions)


ROTARY = """
func.func @rotary(%x: tensor<3x6x8xf32>, %c: tensor<6x8xf32>, %s: tensor<6x8xf32>) -> tensor<3x6x8xf32> {
  %x1 = fusion.slice %x [0, 0, 0] to [3, 6, 4] step [1, 1, 1] : tensor<3x6x8xf32> -> tensor<3x6x4xf32>
  %x2 = fusion.slice %x [0, 0, 4] to [3, 6, 8] step [1, 1, 1] : tensor<3x6x8xf32> -> tensor<3x6x4xf32>
  %n = fusion.neg %x2 : tensor<3x6x4xf32>
  %rot = fusion.cat %n, %x1 dim 2 : tensor<3x6x4xf32>, tensor<3x6x4xf32> -> tensor<3x6x8xf32>
  %cb = fusion.broadcast_in_dim %c [3, 6, 8] dims [1, 2] : tensor<6x8xf32> -> tensor<3x6x8xf32>
  %sb = fusion.broadcast_in_dim %s [3, 6, 8] dims [1, 2] : tensor<6x8xf32> -> tensor<3x6x8xf32>
  %a = fusion.mul %x, %cb : tensor<3x6x8xf32>
  %b = fusion.mul %rot, %sb : tensor<3x6x8xf32>
  %y = fusion.add %a, %b : tensor<3x6x8xf32>
  func.return %y : tensor<3x6x8xf32>
}
"""


def test_rotary_cat_of_a_computed_half_and_an_argument_slice() -> None:
    run_and_compare(ROTARY, inputs_for(ROTARY, [(3, 6, 8), (6, 8), (6, 8)]))
    plan = allotment.memory_plan(ROTARY, {})
    # one kernel (the slices, neg and cat are index arithmetic in it): only the output is allocated
    assert plan.planned_peak == plan.without_reuse == 3 * 6 * 8 * 4
    assert allotment.compile(ROTARY).source("cpu").count("\ndef launch_k") == 1
