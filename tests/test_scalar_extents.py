"""Extents from scalar inputs: tensors sized by `index` and integer arguments.

Each fusion here sizes a tensor from a scalar argument (an `index` one
directly, an `i64`/`i32` one through `arith.index_cast`). The tests compile it
once (`allotment.compile`: the kernels run in Triton's interpreter on CPU
tensors, so shapes stay tiny), run it for several scalar values and compare
each output with torch and with the reference evaluator; a negative extent is
a run-time error naming the scalar; `plan_sizes` takes the scalar's value;
the FusionDefinition frontend sizes `full` and `iota` from `define_scalar`s.
"""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment import DataType, FusionDefinition  # noqa: E402
from allotment.analysis.size_eval import SizeError  # noqa: E402
from allotment.errors import ArgumentError, RunError  # noqa: E402

FULL_I64 = """
func.func @f(%n: i64) -> tensor<?x3xf32> {
  %c = arith.constant 1.5 : f32
  %ni = arith.index_cast %n : i64 to index
  %y = fusion.full %c [%ni, 3] : f32 -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
"""

IOTA_I32 = """
func.func @f(%m: i32) -> tensor<?xi32> {
  %mi = arith.index_cast %m : i32 to index
  %two = arith.constant 2 : i32
  %i = fusion.iota [%mi] start %m step %two : i32, i32 -> tensor<?xi32>
  func.return %i : tensor<?xi32>
}
"""

BROADCAST = """
func.func @f(%x: tensor<?x?xf32>, %n: i64) -> tensor<?x?x?xf32> {
  %ni = arith.index_cast %n : i64 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %b = fusion.broadcast_in_dim %x [%ni, %d0, %d1] dims [1, 2] : tensor<?x?xf32> -> tensor<?x?x?xf32>
  %y = fusion.mul %b, %b : tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}
"""

INDEX_ADD = """
func.func @f(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c = arith.constant 0.5 : f32
  %y = fusion.full %c [%n, 4] : f32 -> tensor<?x4xf32>
  %z = fusion.add %x, %y : tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}
"""


def test_full_sized_by_an_i64_scalar() -> None:
    for n in (0, 1, 4):
        (y,) = check(FULL_I64, n)
        torch.testing.assert_close(y, torch.full((n, 3), 1.5))


def test_iota_sized_by_an_i32_scalar() -> None:
    for m in (0, 3, 5):
        (i,) = check(IOTA_I32, m)
        torch.testing.assert_close(i, torch.arange(m, dtype=torch.int32) * 2 + m)


def test_broadcast_to_a_scalar_extent() -> None:
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    for n in (1, 3):
        (y,) = check(BROADCAST, x, n)
        torch.testing.assert_close(y, (x * x).expand(n, 2, 3))


def test_index_argument_next_to_a_tensor_extent() -> None:
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    (z,) = check(INDEX_ADD, x, 3)
    torch.testing.assert_close(z, x + 0.5)
    exe = allotment.compile(INDEX_ADD)
    with pytest.raises(RunError, match=r"x.shape\[0\] must equal .* = n"):
        exe(x, 2)


def test_negative_extent_is_a_run_time_error_naming_the_scalar() -> None:
    exe = allotment.compile(FULL_I64)
    with pytest.raises(RunError, match=r"fusion.full: extent n must be >= 0 \(got -2 and 0\)"):
        exe(-2)
    exe_i32 = allotment.compile(IOTA_I32)
    with pytest.raises(RunError, match=r"fusion.iota: extent m must be >= 0"):
        exe_i32(-1)


def test_scalar_out_of_its_type_range_is_refused() -> None:
    exe = allotment.compile(IOTA_I32)
    with pytest.raises(RunError, match="input m: 4294967296 does not fit a 32-bit signed integer"):
        exe(1 << 32)


def test_new_scalar_values_do_not_recompile() -> None:
    exe = allotment.compile(FULL_I64)
    for n in (1, 2, 3, 5, 8):
        (y,) = exe(n)
        assert y.shape == (n, 3)
    assert exe.compilations == 1


def test_plan_sizes_takes_the_scalar_value() -> None:
    plan = allotment.plan_sizes(BROADCAST, {"x": (4, 8), "n": 5})
    assert plan["y"].shape == (5, 4, 8)
    assert plan["y"].nbytes == 5 * 4 * 8 * 4
    plan = allotment.plan_sizes(INDEX_ADD, {"x": (4, 4), "n": 4})
    assert plan["z"].shape == (4, 4)


def test_plan_sizes_errors_name_the_scalar() -> None:
    with pytest.raises(SizeError, match="extent n must be >= 0"):
        allotment.plan_sizes(FULL_I64, {"n": -1})
    with pytest.raises(SizeError, match="scalar argument %n gives a size"):
        allotment.plan_sizes(FULL_I64, {})
    with pytest.raises(SizeError, match="%m = 4294967296 does not fit in i32"):
        allotment.plan_sizes(IOTA_I32, {"m": 1 << 32})
    with pytest.raises(ArgumentError, match="argument n is a scalar"):
        allotment.plan_sizes(FULL_I64, {"n": (2, 3)})


def test_allocate_intermediates_with_a_scalar() -> None:
    buffers = allotment.allocate_intermediates(BROADCAST, {"x": (2, 3), "n": 4}, device="cpu")
    assert buffers["y"].shape == (4, 2, 3)


def _scalar_sized_definition() -> FusionDefinition:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        t = fd.define_tensor([-1])
        full = fd.ops.full([n, 2], 3.0, DataType.Float)
        iota = fd.ops.iota(n, dtype=DataType.Int)
        fd.add_output(full)
        fd.add_output(iota)
        fd.add_output(fd.ops.mul(t, 2.0))
    return fd


def test_frontend_full_and_iota_sized_by_define_scalar() -> None:
    fd = _scalar_sized_definition()
    x = torch.arange(3, dtype=torch.float32)
    for n in (0, 2, 5):
        full, iota, doubled = fd.execute([n, x])
        torch.testing.assert_close(full, torch.full((n, 2), 3.0))
        torch.testing.assert_close(iota, torch.arange(n, dtype=torch.int64))
        torch.testing.assert_close(doubled, x * 2)
    assert len(fd._executables) == 1
    exe, _ = fd.executable_for([1, x])
    assert exe.compilations == 1


def test_frontend_negative_scalar_extent() -> None:
    fd = _scalar_sized_definition()
    with pytest.raises(RunError, match=r"extent S0 must be >= 0 \(got -3 and 0\)"):
        fd.execute([-3, torch.zeros(2)])


def test_memory_plan_names_the_scalar_in_sizes() -> None:
    plan = allotment.memory_plan(BROADCAST, {"x": (2, 3), "n": 4})
    (y,) = [b for b in plan.buffers if b.name == "y"]
    assert y.size == "n * x.shape[0] * x.shape[1] * 4 B"
    assert y.nbytes == 4 * 2 * 3 * 4
