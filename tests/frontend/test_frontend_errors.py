"""FusionDefinition errors: unsupported ops, argument errors at definition, input errors at execute."""

from __future__ import annotations

import re

import pytest
import torch
from frontend_helpers import DEVICE, randn

from allotment import DataType, FusionDefinition
from allotment.frontend.ops import SUPPORTED, UNSUPPORTED


def _fd_with(rank: int = 2, dtype: DataType = DataType.Float) -> tuple[FusionDefinition, object]:
    fd = FusionDefinition()
    fd.__enter__()
    return fd, fd.define_tensor([-1] * rank, dtype=dtype)


# --------------------------------------------------------------------------- #
# Not supported                                                               #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", ["isreal", "grouped_mm", "batch_norm", "scaled_mm", "sdpfa_bwd", "sdpfa_fwd"])
def test_unsupported_ops_raise_not_supported(name: str) -> None:
    fd, t0 = _fd_with()
    with pytest.raises(NotImplementedError, match=f"^not supported: {name}$"):
        getattr(fd.ops, name)(t0)
    assert not hasattr(fd.ops, name)


def test_unknown_op_name() -> None:
    fd, _ = _fd_with()
    with pytest.raises(NotImplementedError, match="not supported: frobnicate"):
        fd.ops.frobnicate  # noqa: B018


def test_supported_and_unsupported_lists_are_disjoint() -> None:
    assert not set(SUPPORTED) & set(UNSUPPORTED)
    fd, _ = _fd_with()
    for name in SUPPORTED:
        assert callable(getattr(fd.ops, name)), name


def test_unsupported_dtypes_and_features() -> None:
    fd, t0 = _fd_with()
    with pytest.raises(NotImplementedError, match=r"not supported: DataType\.Float8_e4m3fn"):
        fd.ops.cast(t0, DataType.Float8_e4m3fn)
    with pytest.raises(NotImplementedError, match="not supported: fd.sched"):
        fd.sched  # noqa: B018
    with pytest.raises(NotImplementedError, match="not supported: gcd of two scalars"):
        fd.ops.gcd(fd.define_scalar(4), 6)
    with pytest.raises(NotImplementedError, match="not supported: pow of two scalars"):
        fd.ops.pow(fd.define_scalar(2.0), 3.0)


# --------------------------------------------------------------------------- #
# Argument errors at definition                                               #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda fd, t: fd.ops.add(t, "x"), TypeError, "add: argument 'arg2' must be a Tensor, a Scalar or a Python number"),
        (lambda fd, t: fd.ops.exp([1.0]), TypeError, "exp: argument 'arg'"),
        (lambda fd, t: fd.ops.sum(t, dims="a"), TypeError, "sum: argument 'dims' must be a list of ints"),
        (lambda fd, t: fd.ops.sum(t, [2]), ValueError, "sum: argument 'dims' entry 2 is out of range for a tensor of rank 2"),
        (lambda fd, t: fd.ops.sum(t, [0, -2]), ValueError, "sum: argument 'dims' repeats dimension -2"),
        (lambda fd, t: fd.ops.sum(t, [0], keepdim=2), TypeError, "sum: argument 'keepdim' must be a bool"),
        (lambda fd, t: fd.ops.cast(t, torch.float32), TypeError, "cast: argument 'dtype' must be a DataType"),
        (lambda fd, t: fd.ops.broadcast_in_dim(t, [2, 3, 4], [0]), ValueError, "broadcast_in_dim: argument 'broadcast_dims' has 1 entries, but the input has rank 2"),
        (lambda fd, t: fd.ops.broadcast_in_dim(t, [2, 3, 4], [2, 1]), ValueError, "must be strictly increasing"),
        (lambda fd, t: fd.ops.broadcast_in_dim(t, [2, -1, 4], [0, 2]), ValueError, "entry 1 is -1, but output dimension 1 is a new dimension"),
        (lambda fd, t: fd.ops.broadcast(t, [True, False]), ValueError, "broadcast: argument 'is_broadcast_dim' has 1 False entries"),
        (lambda fd, t: fd.ops.permute(t, [0]), ValueError, "permute: argument 'dims' has 1 entries"),
        (lambda fd, t: fd.ops.permute(t, [0, 0]), ValueError, "permute: argument 'dims' repeats dimension 0"),
        (lambda fd, t: fd.ops.expand(t, [3]), ValueError, "expand: argument 'shape' has 1 entries"),
        (lambda fd, t: fd.ops.reshape(t, [-1, -1]), ValueError, "reshape: argument 'new_shape' may have at most one -1"),
        (lambda fd, t: fd.ops.reshape(t, [2, 3.0]), TypeError, "reshape: argument 'new_shape' entries must be ints or Scalars"),
        (lambda fd, t: fd.ops.slice(t, [0], [1, 1]), ValueError, "slice: argument 'start_indices' has 1 entries"),
        (lambda fd, t: fd.ops.slice(t, [0, 0], [1, 1], [1, 0]), ValueError, "slice: argument 'strides' entries must be positive"),
        (lambda fd, t: fd.ops.pad(t, [1, 1, 1]), ValueError, "pad: argument 'pad_widths' has 3 entries"),
        (lambda fd, t: fd.ops.cat(t), TypeError, "cat: argument 'tensors' must be a non-empty list of Tensors"),
        (lambda fd, t: fd.ops.where(t, t, t), TypeError, "where: argument 'pred' must be a Bool tensor or scalar"),
        (lambda fd, t: fd.ops.var_mean(t, [1], correction=-1), ValueError, "var_mean: argument 'correction' must be non-negative"),
        (lambda fd, t: fd.ops.full([-1], 0.0, DataType.Float), ValueError, "full: argument 'shape' cannot have symbolic"),
        (lambda fd, t: fd.ops.full([2], t, DataType.Float), TypeError, "full: argument 'fill_value' must be a Scalar or a Python number"),
        (lambda fd, t: fd.ops.iota(4, dtype=DataType.Bool), ValueError, "iota: argument 'dtype' cannot be DataType.Bool"),
        (lambda fd, t: fd.ops.size(t, 3), ValueError, "size: argument 'dim' entry 3 is out of range"),
        (lambda fd, t: fd.define_tensor(shape="ab"), TypeError, "define_tensor: argument 'shape' must be a list of ints"),
        (lambda fd, t: fd.define_tensor(shape=[-2]), ValueError, "define_tensor: argument 'shape': the value -2 at index 0"),
        (lambda fd, t: fd.define_tensor([-1, -1], contiguity=[True]), ValueError, "define_tensor: argument 'contiguity' has 1 entries"),
        (lambda fd, t: fd.define_tensor([-1, -1], contiguity=True, stride_order=[0, 0]), ValueError, "stride_order \\[0, 0\\] must be a permutation"),
        (lambda fd, t: fd.define_tensor([-1], dtype="float"), TypeError, "define_tensor: argument 'dtype' must be a DataType"),
        (lambda fd, t: fd.define_scalar("1.0"), TypeError, "define_scalar: argument 'value' must be a bool, int or float"),
        (lambda fd, t: fd.define_scalar(1.5, dtype=DataType.Int), ValueError, "1.5 is not an integer"),
        (lambda fd, t: fd.add_output([t]), TypeError, "add_output: argument 'output' must be a Tensor or Scalar"),
        (lambda fd, t: fd.add_output(t, alias_input=fd.ops.neg(t)), ValueError, "argument 'alias_input' must be a fusion input"),
        (lambda fd, t: fd.add_output(fd.ops.sum(t, [0]), alias_input=t), ValueError, "dtype and rank must match"),
    ],
)
def test_argument_errors(build, error: type[Exception], message: str) -> None:
    fd, t0 = _fd_with()
    with pytest.raises(error, match=message):
        build(fd, t0)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda fd: fd.ops.add(fd.define_tensor([4]), fd.define_tensor([5])), "add: extents of dimension 0 do not broadcast"),
        (lambda fd: fd.ops.matmul(fd.define_tensor([2, 3]), fd.define_tensor([3, 2], dtype=DataType.Half)), "matmul: matmul operands must share one element type"),
        (lambda fd: fd.ops.matmul(fd.define_tensor([2, 3]), fd.define_tensor([4, 2])), "matmul: matmul: contracted extents 3 and 4 differ"),
        (lambda fd: fd.ops.reshape(fd.define_tensor([2, 3]), [4, 2]), "reshape: reshape of 2x3 \\(6 elements\\) to 4x2"),
        (lambda fd: fd.ops.squeeze(fd.define_tensor([2, 3]), [1]), "squeeze: argument 'dims': cannot squeeze dimension 1 of extent 3"),
        (lambda fd: fd.ops.neg(fd.define_tensor([2], dtype=DataType.Bool)), "neg: fusion.neg does not accept i1"),
        (lambda fd: fd.ops.cat([fd.define_tensor([2, 3]), fd.define_tensor([2, 4])], 0), "cat: operand #1 has extent 4 in dimension 1"),
        (lambda fd: fd.ops.linear(fd.define_tensor([2, 3]), fd.define_tensor([4, 5])), "linear: linear: contracted extents 3 and 5 differ"),
    ],
)
def test_dialect_errors_become_value_errors(build, message: str) -> None:
    fd = FusionDefinition()
    with pytest.raises(ValueError, match=message), fd:
        build(fd)


def test_var_mean_of_integers_is_a_type_error() -> None:
    fd, t0 = _fd_with(dtype=DataType.Int)
    with pytest.raises(TypeError, match="var_mean: argument 'arg' must be a floating-point tensor"):
        fd.ops.var_mean(t0, [0])


def test_mean_of_integers_needs_a_floating_point_dtype() -> None:
    """As torch.mean: the mean of an integer tensor raises unless dtype= asks for a float."""
    fd, t0 = _fd_with(dtype=DataType.Int32)
    with pytest.raises(TypeError, match="mean: could not infer the output dtype: the input is DataType.Int32"):
        fd.ops.mean(t0, [0])
    with pytest.raises(TypeError, match="argument 'dtype' is DataType.Int"):
        fd.ops.mean(t0, [0], dtype=DataType.Int)
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        torch.arange(4, dtype=torch.int32).mean()
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], dtype=DataType.Int32)
        fd.add_output(fd.ops.mean(t, [0], dtype=DataType.Float))
    x = torch.arange(4, dtype=torch.int32)
    (m,) = fd.execute([x])
    torch.testing.assert_close(m, x.mean(dtype=torch.float32))


def test_completed_definition_cannot_grow() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1])
        fd.add_output(fd.ops.neg(t0))
    with pytest.raises(RuntimeError, match="completed definition"):
        fd.ops.exp(t0)
    with pytest.raises(RuntimeError, match="completed definition"):
        fd.define_tensor([-1])
    with pytest.raises(RuntimeError, match="completed definition"):
        fd.add_output(t0)


def test_misuse_of_a_definition_is_a_usage_error_and_a_runtime_error() -> None:
    """Adding to a completed definition, re-entering it, growing or executing one that raised,
    executing one never defined: `allotment.UsageError`, also the RuntimeError nvFuser raises."""
    import allotment

    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1])
        fd.add_output(fd.ops.neg(t0))

    def reenter() -> None:
        with fd:
            pass

    failed = FusionDefinition()
    with pytest.raises(ValueError), failed:
        failed.define_tensor([-2])
    for call, message in [(lambda: fd.ops.exp(t0), "completed definition"), (reenter, "completed definition"),
                          (lambda: fd.define_scalar(1.0), "completed definition"),
                          (lambda: failed.define_tensor([4]), "failed earlier"),
                          (lambda: failed.execute([randn(4)]), "raised an error"),
                          (lambda: FusionDefinition().execute([randn(4)]), "not complete")]:
        with pytest.raises(allotment.UsageError, match=message) as info:
            call()
        assert isinstance(info.value, allotment.Error) and isinstance(info.value, RuntimeError)


def test_handles_of_another_definition() -> None:
    fd1, t1 = _fd_with()
    fd2, _ = _fd_with()
    with pytest.raises(ValueError, match="add: argument 'arg1' belongs to another FusionDefinition"):
        fd2.ops.add(t1, 1.0)


def test_failed_definition_cannot_execute() -> None:
    fd = FusionDefinition()
    with pytest.raises(ValueError), fd:
        fd.ops.add(fd.define_tensor([4]), fd.define_tensor([5]))
    with pytest.raises(RuntimeError, match="raised an error"):
        fd.execute([randn(4), randn(5)])


def test_handles_have_no_truth_value() -> None:
    fd, t0 = _fd_with()
    with pytest.raises(TypeError, match="no truth value"):
        bool(t0 > 0)


# --------------------------------------------------------------------------- #
# Input errors at execute                                                     #
# --------------------------------------------------------------------------- #


def _two_inputs() -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 4], contiguity=True)
        t1 = fd.define_tensor([1, -1], contiguity=True)
        s0 = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.add(t0, t1), s0))
    return fd


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        (lambda: [randn(3, 4), randn(1, 4)], ValueError, "the fusion takes 3 inputs, got 2"),
        (lambda: [randn(3, 4, dtype=torch.float16), randn(1, 4), 1], TypeError, "input #0 .*: the tensor has dtype torch.float16, the definition says torch.float32"),
        (lambda: [randn(3, 4, 1), randn(1, 4), 1], ValueError, "input #0 .*: the tensor has rank 3"),
        (lambda: [randn(3, 5), randn(1, 5), 1], ValueError, "input #0 .*: dimension 1 is of static extent 4 in the definition, but the tensor has extent 5"),
        (lambda: [randn(3, 4), randn(2, 4), 1], ValueError, "input #1 .*: dimension 0 is a broadcast dimension \\(extent 1\\)"),
        (lambda: [randn(4, 3).t(), randn(1, 4), 1], ValueError, "input #0 .*: dimension 1 is contiguous in the definition, so its stride must be 1, but it is 3"),
        (lambda: [randn(3, 8)[:, ::2], randn(1, 4), 1], ValueError, "input #0 .*: dimension 1 is contiguous"),
        (lambda: [randn(3, 4), randn(1, 4), 1.5], TypeError, "input #2 \\(%S0: i64\\) expects an int, got float 1.5"),
        (lambda: [randn(3, 4), randn(1, 4), randn(2)], ValueError, "input #2 .* is a scalar, but the input is a tensor of shape \\[2\\]"),
        (lambda: [[1.0] * 4, randn(1, 4), 1], TypeError, "input #0 .* is a tensor, got list"),
        (lambda: randn(3, 4), TypeError, "argument 'inputs' must be a list"),
    ],
)
def test_execute_input_errors(inputs, error: type[Exception], message: str) -> None:
    fd = _two_inputs()
    with pytest.raises(error, match=message):
        fd.execute(inputs())


def test_stride_order_mismatch() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], contiguity=True, stride_order=[0, 1])
        fd.add_output(fd.ops.neg(t0))
    with pytest.raises(ValueError, match=re.escape("stride_order says dimension 1 is outside dimension 0")):
        fd.execute([randn(3, 4)])


def test_device_mismatch() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1])
        fd.add_output(fd.ops.neg(t0))
    other = "cpu" if DEVICE.type == "cuda" else "cuda"
    with pytest.raises(ValueError, match=f"the input tensors are on {DEVICE.type}.*, not on {other}"):
        fd.execute([randn(3)], device=other)
