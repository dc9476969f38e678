"""Extents from values in the FusionDefinition frontend (nvFuser-style).

Each execution test defines a fusion with `FusionDefinition`, runs it through
`run_fusion` (the compiled backend and the reference evaluator) and compares
with torch on the same inputs: pads with Scalar and negative widths, extent
queries (`size`, `shape`) and scalar arithmetic on them as extents, symbolic
vectors (`define_vector`), expanded broadcast inputs (`contiguity=None`),
output stride orders carried in the IR, fusions without tensor inputs, and
one compilation for many scalar shapes. Shapes are tiny (Triton's interpreter).
"""

from __future__ import annotations

import re
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from conftest import RunFusion  # noqa: E402
from frontend_helpers import DEVICE, check, randn  # noqa: E402

from allotment import DataType, FusionDefinition  # noqa: E402
from allotment.errors import ArgumentError, RunError  # noqa: E402

# --------------------------------------------------------------------------- #
# 1. pad with Scalar widths; negative widths crop                             #
# --------------------------------------------------------------------------- #


def _pad_by_scalars() -> FusionDefinition:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        a = fd.define_scalar(dtype=DataType.Int)
        b = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.pad(t, [a, b, 1, -1], 2.5))
    return fd


@pytest.mark.parametrize("widths", [(1, 2), (0, 0), (-1, 0), (-2, -1), (3, -4)])
def test_pad_with_scalar_widths(run_fusion: RunFusion, widths: tuple[int, int]) -> None:
    x = randn(3, 5)
    (out,) = run_fusion(_pad_by_scalars(), [x, *widths])
    check(out, F.pad(x, [*widths, 1, -1], value=2.5))


def test_pad_negative_static_widths_crop(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.pad(t, [-1, -2, 0, -1]))
    x = randn(4, 6)
    (out,) = run_fusion(fd, [x])
    check(out, F.pad(x, [-1, -2, 0, -1]))


def test_pad_of_a_computed_value_with_scalar_width_feeds_a_reduction(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        n = fd.define_scalar(dtype=DataType.Int)
        p = fd.ops.pad(fd.ops.exp(t), [n, -1])
        fd.add_output(fd.ops.sum(p, dims=[1]))
    x = randn(3, 4)
    for n in (2, -1):
        (out,) = run_fusion(fd, [x, n])
        check(out, F.pad(x.exp(), [n, -1]).sum(1))


def test_pad_widths_from_extent_arithmetic(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        n = fd.ops.size(t, 0)
        fd.add_output(fd.ops.pad(t, [n, n - 1]))  # doubles, then one more
    x = randn(3)
    (out,) = run_fusion(fd, [x])
    check(out, F.pad(x, [3, 2]))


def test_pad_widths_cast_from_float_constants(run_fusion: RunFusion) -> None:
    # nvFuser's test_pad_dynamic: widths cast(2.5 * 7, Int) = 17, computed from constants
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1, -1])
        w = fd.ops.cast(fd.ops.mul(fd.define_scalar(2.5, dtype=DataType.Float),
                                   fd.define_scalar(7, dtype=DataType.Int)), dtype=DataType.Int)
        fd.add_output(fd.ops.pad(t, [w, w, w, w]))
    x = randn(1, 2, 3)
    (out,) = run_fusion(fd, [x])
    check(out, F.pad(x, [17, 17, 17, 17]))


def test_pad_cropped_below_zero_is_a_run_time_error(run_fusion: RunFusion) -> None:
    with pytest.raises(RunError, match=r"fusion.pad: dimension 1: .*(must be >= 0|is negative)"):
        run_fusion(_pad_by_scalars(), [randn(3, 5), -4, -2])


def test_pad_static_crop_below_zero_is_a_definition_error() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([2, 3])
        with pytest.raises(ArgumentError, match=r"pad: argument 'pad_widths' crops dimension 1 of extent 3"):
            fd.ops.pad(t, [-2, -2])


def test_pad_widths_must_be_integers() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        f = fd.define_scalar(dtype=DataType.Double)
        with pytest.raises(ArgumentError, match=r"pad: argument 'pad_widths\[0\]' must hold integers"):
            fd.ops.pad(t, [f, 0])


# --------------------------------------------------------------------------- #
# 2. extent queries and scalar arithmetic as extents                          #
# --------------------------------------------------------------------------- #


def test_reshape_by_size_product(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1, -1])
        s0, s1 = fd.ops.size(t, 0), fd.ops.size(t, 1)
        fd.add_output(fd.ops.reshape(t, [s0 * s1, -1]))
    x = randn(2, 3, 4)
    (out,) = run_fusion(fd, [x])
    check(out, x.reshape(6, 4))


def test_reshape_by_ops_mul_of_shape_entries(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        shape = fd.ops.shape(t)
        fd.add_output(fd.ops.reshape(t, [fd.ops.mul(shape[0], shape[1])]))
    x = randn(3, 4)
    (out,) = run_fusion(fd, [x])
    check(out, x.reshape(12))


def test_size_arithmetic_with_python_ints_stays_index(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        n = fd.ops.size(t, 0)
        fd.add_output(fd.ops.reshape(t, [n * 2, fd.ops.div(fd.ops.size(t, 1), 2)]))
    assert re.search(r"arith.muli %\w+, %\w+ : index", fd.ir()), fd.ir()
    assert re.search(r"arith.divsi %\w+, %\w+ : index", fd.ir()), fd.ir()
    assert "index_cast" not in fd.ir()
    x = randn(4, 6)
    (out,) = run_fusion(fd, [x])
    check(out, x.reshape(8, 3))


def test_full_sized_by_add_and_sub_of_sizes(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        a, b = fd.ops.size(t, 0), fd.ops.size(t, 1)
        fd.add_output(fd.ops.full([a + b, b - a], 1.5, DataType.Float))
    (out,) = run_fusion(fd, [randn(2, 5)])
    check(out, torch.full((7, 3), 1.5, device=DEVICE))


def test_iota_sized_by_i64_scalar_product(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        m = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n * m, dtype=DataType.Int))
    (out,) = run_fusion(fd, [2, 3])
    check(out.cpu(), torch.arange(6))


def test_broadcast_in_dim_to_scalar_extent(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.broadcast_in_dim(t, [n + 1, fd.ops.size(t, 0)], [1]))
    x = randn(4)
    (out,) = run_fusion(fd, [x, 2])
    check(out, x.expand(3, 4))


def test_expand_to_size_of_another_tensor(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([1, -1])
        u = fd.define_tensor([-1, -1])
        e = fd.ops.expand(t, [fd.ops.size(u, 0), -1])
        fd.add_output(fd.ops.add(e, u))
    x, y = randn(1, 4), randn(3, 4)
    (out,) = run_fusion(fd, [x, y])
    check(out, x + y)


def test_slice_bounds_from_size_arithmetic(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        n = fd.ops.size(t, 0)
        fd.add_output(fd.ops.slice(t, [1], [n - 1]))
    x = randn(6)
    (out,) = run_fusion(fd, [x])
    check(out, x[1:5])


def test_reshape_element_count_mismatch_is_a_run_time_error(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.reshape(t, [n, 5]))
    with pytest.raises(RunError, match=r"fusion.reshape: .*elements"):
        run_fusion(fd, [randn(3, 4), 2])


def test_negative_extent_from_a_scalar_is_a_run_time_error(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.full([n - 5, 2], 0.0, DataType.Float))
    with pytest.raises(RunError, match=r"fusion.full: (extent .* must be >= 0|.*non-negative)"):
        run_fusion(fd, [3])


def test_slice_bounds_past_the_end_are_clamped_as_torch(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        a = fd.define_scalar(dtype=DataType.Int)
        b = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.slice(t, [a], [b]))
    x = randn(5)
    for a, b in ((1, 99), (-3, 4), (4, 2)):
        (out,) = run_fusion(fd, [x, a, b])
        check(out, x[a:b])


def test_slice_with_a_non_positive_step_value_is_refused(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        s = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.slice(t, [0], [4], [s]))
    with pytest.raises(RunError, match="step"):
        run_fusion(fd, [randn(5), 0])


# --------------------------------------------------------------------------- #
# 3. define_vector and define_scalar                                          #
# --------------------------------------------------------------------------- #


def _reshape_by_vector() -> FusionDefinition:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        v = fd.define_vector(2)
        fd.add_output(fd.ops.reshape(t, v))
    return fd


@pytest.mark.parametrize("shape", [[3, 4], (2, 6), "tensor"])
def test_reshape_by_a_symbolic_vector(run_fusion: RunFusion, shape: object) -> None:
    x = randn(12)
    given = torch.tensor([6, 2]) if shape == "tensor" else shape
    (out,) = run_fusion(_reshape_by_vector(), [x, given])
    check(out, x.reshape(*[int(e) for e in given]))


def test_vector_entries_given_one_input_each(run_fusion: RunFusion) -> None:
    # nvFuser's test_slice: the entries of each define_vector(3) are inputs of their own
    x = randn(2, 5, 10)
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1, -1])
        fd.add_output(fd.ops.slice(t, fd.define_vector(3), fd.define_vector(3)))
    (out,) = run_fusion(fd, [x, 0, 1, 2, *x.shape])
    check(out, x[:, 1:, 2:])
    (out,) = run_fusion(fd, [x, [0, 1, 2], list(x.shape)])  # or one list each
    check(out, x[:, 1:, 2:])


def test_vector_of_wrong_length_is_refused(run_fusion: RunFusion) -> None:
    with pytest.raises(ArgumentError, match=r"a vector of 2 Int scalars\): expects 2 entries, got 3"):
        run_fusion(_reshape_by_vector(), [randn(12), [1, 2, 6]])


def test_float_in_a_vector_is_refused(run_fusion: RunFusion) -> None:
    with pytest.raises(ArgumentError, match="entry 0 must be an int, got float 3.0"):
        run_fusion(_reshape_by_vector(), [randn(12), [3.0, 4]])


def test_float_for_an_int_scalar_is_refused(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n))
    with pytest.raises(ArgumentError, match="expects an int, got float 2.5"):
        run_fusion(fd, [2.5])


def test_full_and_iota_with_vector_shapes(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        v = fd.define_vector(2)
        k = fd.define_scalar(4)
        w = fd.define_vector([k, 2])
        fd.add_output(fd.ops.full(v, 3.0, DataType.Float))
        fd.add_output(fd.ops.full(w, 1.0, DataType.Float))
    a, b = run_fusion(fd, [[2, 3]])
    check(a, torch.full((2, 3), 3.0, device=a.device))
    check(b, torch.full((4, 2), 1.0, device=b.device))


def test_broadcast_in_dim_with_a_vector_of_scalars_and_sizes(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        n = fd.define_scalar(dtype=DataType.Int)
        shape = fd.define_vector([n, fd.ops.size(t, 0)])
        fd.add_output(fd.ops.broadcast_in_dim(t, shape, [1]))
    x = randn(3)
    (out,) = run_fusion(fd, [x, 2])
    check(out, x.expand(2, 3))


def test_define_scalar_with_and_without_value(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1])
        c = fd.define_scalar(2, dtype=DataType.Int)
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.pad(t, [c, n]))
    x = randn(3)
    (out,) = run_fusion(fd, [x, 1])
    check(out, F.pad(x, [2, 1]))


# --------------------------------------------------------------------------- #
# 4. contiguity None: expanded broadcast inputs                               #
# --------------------------------------------------------------------------- #


def _expanded_input() -> FusionDefinition:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], contiguity=[None, True])
        u = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.mul(t, u))
    return fd


def test_contiguity_none_takes_an_expanded_input(run_fusion: RunFusion) -> None:
    x = randn(1, 4).expand(3, 4)
    y = randn(3, 4)
    (out,) = run_fusion(_expanded_input(), [x, y])
    check(out, x * y)


def test_contiguity_none_refuses_a_dense_input(run_fusion: RunFusion) -> None:
    with pytest.raises(ArgumentError, match=r"dimension 0 is an expanded broadcast .* stride must be 0"):
        run_fusion(_expanded_input(), [randn(3, 4), randn(3, 4)])


def test_contiguity_none_accepts_extent_one(run_fusion: RunFusion) -> None:
    x, y = randn(1, 4), randn(1, 4)
    (out,) = run_fusion(_expanded_input(), [x, y])
    check(out, x * y)


# --------------------------------------------------------------------------- #
# 5. output stride order in the IR                                            #
# --------------------------------------------------------------------------- #


def _column_major_output() -> FusionDefinition:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1, -1])
        fd.add_output(fd.ops.exp(t), stride_order=[0, 2, 1])
    return fd


def test_output_stride_order_is_in_the_ir() -> None:
    assert "fusion.stride_order = array<i64: 0, 2, 1>" in _column_major_output().ir()


def test_output_stride_order_values_and_layout(run_fusion: RunFusion) -> None:
    x = randn(2, 3, 4)
    (out,) = run_fusion(_column_major_output(), [x])
    check(out, x.exp())
    assert out.stride() == (1, 8, 2)


def test_the_kernel_writes_the_requested_layout() -> None:
    fd = _column_major_output()
    exe, args = fd.executable_for([randn(2, 3, 4)])
    (raw,) = exe(*args)  # the compiled program's own buffer, no copy after it
    assert raw.stride() == (1, 8, 2)


# --------------------------------------------------------------------------- #
# 6. fusions without tensor inputs                                            #
# --------------------------------------------------------------------------- #


def _scalars_only() -> FusionDefinition:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, 1, 2, DataType.Int))
    return fd


def test_scalar_only_fusion_runs_on_the_default_device(run_fusion: RunFusion) -> None:
    (out,) = run_fusion(_scalars_only(), [4])
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert out.device.type == expected
    check(out.cpu(), torch.arange(4) * 2 + 1)


def test_scalar_only_fusion_on_the_cpu_when_asked(run_fusion: RunFusion) -> None:
    (out,) = run_fusion(_scalars_only(), [3], device="cpu")
    assert out.device.type == "cpu"
    check(out, torch.arange(3) * 2 + 1)


def test_zero_dim_cpu_tensor_input_only(run_fusion: RunFusion) -> None:
    with FusionDefinition() as fd:
        s = fd.define_tensor([], is_cpu=True)
        fd.add_output(fd.ops.add(fd.ops.iota(3, dtype=DataType.Float), s))
    (out,) = run_fusion(fd, [torch.tensor(2.5)], device="cpu")
    check(out, torch.arange(3.0) + 2.5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_scalar_only_fusion_on_the_gpu(run_fusion: RunFusion) -> None:
    (out,) = run_fusion(_scalars_only(), [5], device="cuda:0")
    assert out.is_cuda
    check(out.cpu(), torch.arange(5) * 2 + 1)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without a GPU")
def test_asking_for_cuda_without_a_gpu_is_an_argument_error() -> None:
    with pytest.raises(ArgumentError, match="CUDA is not available"):
        _scalars_only().execute([3], device="cuda")


# --------------------------------------------------------------------------- #
# 7. one compilation for many scalar shapes                                   #
# --------------------------------------------------------------------------- #


def test_five_scalar_shapes_compile_once() -> None:
    fd = _pad_by_scalars()
    x = randn(3, 5)
    for widths in ((1, 2), (0, 0), (-1, 3), (2, -2), (4, 1)):
        (out,) = fd.execute([x, *widths])
        check(out, F.pad(x, [*widths, 1, -1], value=2.5))
    (exe,) = fd._executables.values()
    assert exe.compilations == 1
