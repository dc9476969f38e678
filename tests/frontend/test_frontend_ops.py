"""FusionDefinition ops against torch, in the style of nvFuser's test_python_frontend.py.

Each test defines a fusion, runs it through `run_fusion` (backend and reference
evaluator) on small inputs and compares with the same computation in torch.
"""

from __future__ import annotations

import math

import pytest
import torch
from frontend_helpers import DEVICE, check, randint, randn

from allotment import DataType, FusionDefinition

# --------------------------------------------------------------------------- #
# Elementwise arithmetic                                                      #
# --------------------------------------------------------------------------- #


def test_basic(run_fusion) -> None:
    inputs = [torch.ones(2, 4, 8, device=DEVICE), torch.ones(2, 4, 8, device=DEVICE)]
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True, dtype=DataType.Float)
        c0 = fd.define_scalar(3.0)
        t2 = fd.ops.add(t0, t1)
        t3 = fd.ops.mul(t2, c0)
        t4 = fd.ops.sum(t3, [-1], False, DataType.Float)
        fd.add_output(t4)
    (out,) = run_fusion(fd, inputs)
    check(out, torch.sum((inputs[0] + inputs[1]) * 3.0, dim=-1))


def test_basic_fp16(run_fusion) -> None:
    inputs = [randn(2, 4, 8, dtype=torch.float16), randn(2, 4, 8, dtype=torch.float16)]
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1], contiguity=True, dtype=DataType.Half)
        t1 = fd.define_tensor([-1, -1, -1], contiguity=True, dtype=DataType.Half)
        c0 = fd.define_scalar(3.0)
        t2 = fd.ops.add(t0, t1)  # nvFuser computes half arithmetic in float
        t3 = fd.ops.mul(t2, c0)
        t4 = fd.ops.sum(t3, [-1], False, DataType.Float)
        t5 = fd.ops.cast(t4, DataType.Half)
        fd.add_output(t5)
    (out,) = run_fusion(fd, inputs)
    expected = torch.sum((inputs[0].float() + inputs[1].float()) * 3.0, dim=-1).half()
    check(out, expected)


def test_half_arithmetic_is_float(run_fusion) -> None:
    a, b = randn(3, 5, dtype=torch.bfloat16), randn(3, 5, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(a)
        t1 = fd.from_pytorch(b)
        fd.add_output(fd.ops.mul(t0, t1))
        fd.add_output(fd.ops.sub(t0, 1.5))
    out0, out1 = run_fusion(fd, [a, b])
    check(out0, a.float() * b.float())
    check(out1, a.float() - 1.5)


def test_python_scalars(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.ops.add(t0, 2.5)
        t2 = fd.ops.sub(1.0, t1)
        t3 = fd.ops.mul(t2, 3)
        fd.add_output(t3)
    (out,) = run_fusion(fd, [x])
    check(out, (1.0 - (x + 2.5)) * 3)


def test_implicit_broadcast_of_lower_rank(run_fusion) -> None:
    x, b = randn(3, 4, 5), randn(5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.define_tensor([-1])
        fd.add_output(fd.ops.add(t0, t1))
    (out,) = run_fusion(fd, [x, b])
    check(out, x + b)


def test_static_broadcast_dims(run_fusion) -> None:
    x, y = randn(4, 1, 6), randn(1, 5, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 1, -1])
        t1 = fd.define_tensor([1, -1, -1])
        fd.add_output(fd.ops.mul(t0, t1))
    (out,) = run_fusion(fd, [x, y])
    check(out, x * y)


def test_div_float(run_fusion) -> None:
    x, y = randn(4, 8), randn(4, 8).abs() + 0.5
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.div(t0, t1))
    (out,) = run_fusion(fd, [x, y])
    check(out, x / y)


def test_div_integer_truncates(run_fusion) -> None:
    x = randint(-20, 20, 4, 8)
    y = randint(1, 6, 4, 8) * (randint(0, 2, 4, 8) * 2 - 1)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        fd.add_output(fd.ops.div(t0, t1))
    (out,) = run_fusion(fd, [x, y])
    check(out, torch.div(x, y, rounding_mode="trunc"))


def test_truediv_of_integers_is_float(run_fusion) -> None:
    x, y = randint(-20, 20, 4, 8, dtype=torch.int32), randint(1, 6, 4, 8, dtype=torch.int32)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Int32)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int32)
        fd.add_output(fd.ops.truediv(t0, t1))
    (out,) = run_fusion(fd, [x, y])
    check(out, torch.true_divide(x, y))


def test_pow(run_fusion) -> None:
    x = randn(4, 8).abs() + 0.1
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.pow(t0, 2.5))
        fd.add_output(fd.ops.pow(t0, t0))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x**2.5)
    check(out1, x**x)


def test_maximum_minimum(run_fusion) -> None:
    x, y = randn(5, 7), randn(5, 7)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.maximum(t0, t1))
        fd.add_output(fd.ops.minimum(t0, 0.0))
    out0, out1 = run_fusion(fd, [x, y])
    check(out0, torch.maximum(x, y))
    check(out1, torch.clamp(x, max=0.0))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons(run_fusion, name: str) -> None:
    x = randint(-3, 3, 4, 6).float()
    y = randint(-3, 3, 4, 6).float()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(getattr(fd.ops, name)(t0, t1))
        fd.add_output(getattr(fd.ops, name)(t0, 1.0))
    out0, out1 = run_fusion(fd, [x, y])
    check(out0, getattr(torch, name)(x, y))
    check(out1, getattr(torch, name)(x, 1.0))


def test_logical_ops(run_fusion) -> None:
    a, b = randint(0, 2, 6, 5).bool(), randint(0, 2, 6, 5).bool()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Bool)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Bool)
        fd.add_output(fd.ops.logical_and(t0, t1))
        fd.add_output(fd.ops.logical_or(t0, t1))
        fd.add_output(fd.ops.logical_not(t0))
        fd.add_output(t0 & t1)
    o_and, o_or, o_not, o_amp = run_fusion(fd, [a, b])
    check(o_and, a & b)
    check(o_or, a | b)
    check(o_not, ~a)
    check(o_amp, a & b)


def test_where(run_fusion) -> None:
    c, x, y = randint(0, 2, 4, 6).bool(), randn(4, 6), randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Bool)
        t1 = fd.define_tensor([-1, -1])
        t2 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.where(t0, t1, t2))
    (out,) = run_fusion(fd, [c, x, y])
    check(out, torch.where(c, x, y))


def test_where_with_python_scalars(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        pred = fd.ops.gt(t0, 0.0)
        fd.add_output(fd.ops.where(pred, t0, 0.0))
    (out,) = run_fusion(fd, [x])
    check(out, torch.where(x > 0, x, 0.0))


UNARY = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "sin": torch.sin, "cos": torch.cos, "erf": torch.erf,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math(run_fusion, name: str) -> None:
    x = randn(4, 8).abs() + 0.25
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(getattr(fd.ops, name)(t0))
    (out,) = run_fusion(fd, [x])
    check(out, UNARY[name](x))


def test_unary_math_of_half_and_int_is_float(run_fusion) -> None:
    h, i = randn(3, 4, dtype=torch.float16), randint(0, 5, 3, 4, dtype=torch.int32)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Half)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int32)
        fd.add_output(fd.ops.tanh(t0))
        fd.add_output(fd.ops.sqrt(t1))
    out0, out1 = run_fusion(fd, [h, i])
    check(out0, torch.tanh(h.float()))
    check(out1, torch.sqrt(i.float()))


def test_neg_abs_relu_keep_dtype(run_fusion) -> None:
    x, i = randn(4, 5, dtype=torch.bfloat16), randint(-5, 5, 4, 5, dtype=torch.int32)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int32)
        fd.add_output(fd.ops.neg(t0))
        fd.add_output(fd.ops.abs(t1))
        fd.add_output(fd.ops.relu(t0))
    out0, out1, out2 = run_fusion(fd, [x, i])
    check(out0, -x)
    check(out1, i.abs())
    check(out2, torch.relu(x))


def test_python_operators(run_fusion) -> None:
    x, y = randn(3, 4), randn(3, 4).abs() + 1.0
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1])
        t2 = (t0 + t1) * 2.0 - t1 / 2.0
        t3 = -abs(t2) ** 2
        fd.add_output(t3)
        fd.add_output(t0 < t1)
    out0, out1 = run_fusion(fd, [x, y])
    check(out0, -((x + y) * 2.0 - y / 2.0).abs() ** 2)
    check(out1, x < y)


# --------------------------------------------------------------------------- #
# Casts, copies and scalars                                                   #
# --------------------------------------------------------------------------- #


def test_cast(run_fusion) -> None:
    x = randn(4, 6) * 10
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.cast(t0, DataType.Half))
        fd.add_output(fd.ops.cast(t0, DataType.Int))
        fd.add_output(fd.ops.cast(t0, DataType.Bool))
        fd.add_output(fd.ops.cast(t0, DataType.Double))
    half, ints, bools, double = run_fusion(fd, [x])
    check(half, x.half())
    check(ints, x.to(torch.int64))
    check(bools, x != 0)
    check(double, x.double())


def test_cast_to_same_dtype_and_set(run_fusion) -> None:
    x = randn(3, 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.ops.cast(t0, DataType.Float)
        t2 = fd.ops.set(t1)
        fd.add_output(t2)
        fd.add_output(fd.ops.segment_set(t0))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x)
    check(out1, x)
    assert out0.data_ptr() != x.data_ptr()


def test_scalar_input_double(run_fusion) -> None:
    x = randn(4, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        s0 = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(t0, s0))
    (out,) = run_fusion(fd, [x, 0.25])
    check(out, x * 0.25)


def test_scalar_input_int_and_0d_tensor(run_fusion) -> None:
    x = randint(-9, 9, 3, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        s0 = fd.define_scalar(DataType.Int)
        s1 = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.mul(t0, s0), s1))
    (out,) = run_fusion(fd, [x, 3, torch.tensor(-2)])
    check(out, x * 3 - 2)


def test_zero_dim_tensor_input(run_fusion) -> None:
    x, s = randn(4, 3), torch.tensor(1.5, device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([])
        fd.add_output(fd.ops.sub(t0, t1))
    (out,) = run_fusion(fd, [x, s])
    check(out, x - s)


def test_zero_dim_cpu_tensor_from_pytorch(run_fusion) -> None:
    x, s = randn(2, 3), torch.tensor(2.0)  # a CPU scalar tensor beside device tensors
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.from_pytorch(s)
        fd.add_output(fd.ops.mul(t0, t1))
    (out,) = run_fusion(fd, [x, s])
    check(out, x * 2.0)


def test_scalar_arithmetic(run_fusion) -> None:
    x = randn(3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        s0 = fd.define_scalar(dtype=DataType.Double)
        s1 = fd.define_scalar(dtype=DataType.Int)
        s2 = fd.ops.add(fd.ops.mul(s0, s1), 0.5)  # scalar ops
        fd.add_output(fd.ops.mul(t0, s2))
    (out,) = run_fusion(fd, [x, 1.5, 4])
    check(out, x * (1.5 * 4 + 0.5))


def test_scalar_cast(run_fusion) -> None:
    x = randn(3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        s0 = fd.define_scalar(dtype=DataType.Int)
        s1 = fd.ops.cast(s0, DataType.Double)
        fd.add_output(fd.ops.truediv(t0, s1))
    (out,) = run_fusion(fd, [x, 3])
    check(out, x / 3.0)


def test_define_scalar_with_dtype(run_fusion) -> None:
    x = randn(2, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        c0 = fd.define_scalar(2, dtype=DataType.Double)
        c1 = fd.define_scalar(0.5, dtype=DataType.Float)
        fd.add_output(fd.ops.add(fd.ops.mul(t0, c0), c1))
    (out,) = run_fusion(fd, [x])
    check(out, x * 2.0 + 0.5)


# --------------------------------------------------------------------------- #
# Creation                                                                    #
# --------------------------------------------------------------------------- #


def test_full(run_fusion) -> None:
    x = randn(2, 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.ops.full([2, 3], 1.5, DataType.Float)
        fd.add_output(fd.ops.add(t0, t1))
        fd.add_output(fd.ops.full([4], 7, DataType.Int))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x + 1.5)
    check(out1, torch.full([4], 7, device=DEVICE))


def test_full_with_symbolic_shape(run_fusion) -> None:
    x = randn(3, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.ops.full(t0.shape(), 0.5, DataType.Float)
        fd.add_output(fd.ops.mul(t0, t1))
    (out,) = run_fusion(fd, [x])
    check(out, x * 0.5)


def test_iota(run_fusion) -> None:
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.iota(6))
        fd.add_output(fd.ops.iota(5, 1.0, 0.5, DataType.Float))
    out0, out1 = run_fusion(fd, [], device=DEVICE)
    check(out0, torch.arange(6, device=DEVICE))
    check(out1, torch.arange(5, device=DEVICE, dtype=torch.float32) * 0.5 + 1.0)


def test_iota_with_symbolic_length(run_fusion) -> None:
    x = randn(7)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1])
        t1 = fd.ops.iota(fd.ops.size(t0, 0), 0, 1, DataType.Int)
        fd.add_output(fd.ops.add(t0, t1))
    (out,) = run_fusion(fd, [x])
    check(out, x + torch.arange(7, device=DEVICE))


# --------------------------------------------------------------------------- #
# Shape ops                                                                   #
# --------------------------------------------------------------------------- #


def test_broadcast_in_dim(run_fusion) -> None:
    x, b = randn(3, 4), randn(4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1])
        t2 = fd.ops.broadcast_in_dim(t1, [3, 4], [1])
        fd.add_output(fd.ops.add(t0, t2))
    (out,) = run_fusion(fd, [x, b])
    check(out, x + b)


def test_broadcast_in_dim_with_symbolic_shape(run_fusion) -> None:
    x, b = randn(5, 4), randn(5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1])
        t2 = fd.ops.broadcast_in_dim(t1, t0.shape(), [0])
        fd.add_output(fd.ops.mul(t0, t2))
    (out,) = run_fusion(fd, [x, b])
    check(out, x * b[:, None])


def test_broadcast(run_fusion) -> None:
    x, b = randn(3, 4), randn(3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1])
        t2 = fd.ops.broadcast(t1, [False, True])
        fd.add_output(fd.ops.sub(t0, t2))
    (out,) = run_fusion(fd, [x, b])
    check(out, x - b[:, None])


def test_expand(run_fusion) -> None:
    x = randn(3, 1)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 1])
        t1 = fd.ops.expand(t0, [-1, 5])
        fd.add_output(fd.ops.mul(t1, 2.0))
    (out,) = run_fusion(fd, [x])
    check(out, x.expand(3, 5) * 2.0)


def test_reshape(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([4, 6])
        t1 = fd.ops.reshape(t0, [2, 12])
        t2 = fd.ops.reshape(t0, [3, -1])
        fd.add_output(fd.ops.exp(t1))
        fd.add_output(t2)
    out0, out1 = run_fusion(fd, [x])
    check(out0, torch.exp(x.reshape(2, 12)))
    check(out1, x.reshape(3, 8))


def test_reshape_with_symbolic_extents(run_fusion) -> None:
    x = randn(2, 3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        s0, s1, s2 = t0.shape()
        t1 = fd.ops.reshape(t0, [s0, fd.ops.mul(s1, s2)])
        fd.add_output(fd.ops.sum(t1, [1]))
    (out,) = run_fusion(fd, [x])
    check(out, x.reshape(2, 12).sum(1))


def test_old_reshape_spelling(run_fusion) -> None:
    x = randn(2, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([2, 6])
        fd.add_output(fd.ops.reshape(t0, [2, 6], [12]))
    (out,) = run_fusion(fd, [x])
    check(out, x.reshape(12))


def test_permute(run_fusion) -> None:
    x = randn(2, 3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.ops.permute(t0, [2, 0, 1])
        fd.add_output(fd.ops.add(t1, 1.0))
    (out,) = run_fusion(fd, [x])
    check(out, x.permute(2, 0, 1) + 1.0)


def test_squeeze(run_fusion) -> None:
    x = randn(3, 1, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 1, -1])
        fd.add_output(fd.ops.squeeze(t0, [1]))
        fd.add_output(fd.ops.squeeze(t0, [-2]))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x.squeeze(1))
    check(out1, x.squeeze(1))


def test_squeeze_symbolic_dim(run_fusion) -> None:
    x = randn(1, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.squeeze(t0, [0]))
    (out,) = run_fusion(fd, [x])
    check(out, x.squeeze(0))


def test_slice(run_fusion) -> None:
    x = randn(6, 8)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.slice(t0, [1, 2], [5, 8]))
        fd.add_output(fd.ops.slice(t0, [0, 1], [6, 8], [2, 3]))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x[1:5, 2:8])
    check(out1, x[0:6:2, 1:8:3])


def test_bool_arguments_take_0_and_1(run_fusion) -> None:
    # nvFuser's bindings convert ints to their bool parameters (its test_issue4888 passes
    # slice(..., manual_normalization=0)); keepdim=1 keeps the reduced dimension
    x = randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.slice(t0, [0, 1], [4, 5], [1, 1], manual_normalization=0))
        fd.add_output(fd.ops.sum(t0, [1], keepdim=1))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x[0:4, 1:5])
    check(out1, x.sum(1, keepdim=True))


def test_slice_negative_indices(run_fusion) -> None:
    x = randn(6, 8)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 8])
        fd.add_output(fd.ops.slice(t0, [-4, -3], [-1, 100]))
    (out,) = run_fusion(fd, [x])
    check(out, x[-4:-1, -3:100])


def test_select(run_fusion) -> None:
    x = randn(4, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.select(t0, 2, 0))
        fd.add_output(fd.ops.select(t0, -1, 1))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x[2])
    check(out1, x[:, -1])


def test_pad(run_fusion) -> None:
    x = randn(3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.pad(t0, [1, 2]))
        fd.add_output(fd.ops.pad(t0, [0, 1, 2, 0], 3.5))
    out0, out1 = run_fusion(fd, [x])
    check(out0, torch.nn.functional.pad(x, [1, 2]))
    check(out1, torch.nn.functional.pad(x, [0, 1, 2, 0], value=3.5))


def test_cat(run_fusion) -> None:
    a, b, c = randn(2, 3), randn(4, 3), randn(2, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 3])
        t1 = fd.define_tensor([-1, 3])
        t2 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.cat([t0, t1], 0))
        fd.add_output(fd.ops.cat([t0, t2], dim=-1))
    out0, out1 = run_fusion(fd, [a, b, c])
    check(out0, torch.cat([a, b], 0))
    check(out1, torch.cat([a, c], -1))


# --------------------------------------------------------------------------- #
# Reductions                                                                  #
# --------------------------------------------------------------------------- #


def test_sum_dims_keepdim(run_fusion) -> None:
    x = randn(3, 4, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        fd.add_output(fd.ops.sum(t0, [0, 2], keepdim=True))
        fd.add_output(fd.ops.sum(t0, 1))
        fd.add_output(fd.ops.sum(t0))
    out0, out1, out2 = run_fusion(fd, [x])
    check(out0, x.sum([0, 2], keepdim=True), rtol=1e-5, atol=1e-5)
    check(out1, x.sum(1))
    check(out2, x.sum(), rtol=1e-5, atol=1e-4)


def test_sum_of_integers_and_bools_is_int(run_fusion) -> None:
    i, b = randint(-5, 5, 4, 6, dtype=torch.int32), randint(0, 2, 4, 6).bool()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Int32)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Bool)
        fd.add_output(fd.ops.sum(t0, [1]))
        fd.add_output(fd.ops.sum(t1, [0]))
    out0, out1 = run_fusion(fd, [i, b])
    check(out0, i.sum(1))
    check(out1, b.sum(0))


def test_sum_with_dtype(run_fusion) -> None:
    x = randn(4, 6, dtype=torch.float16)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Half)
        fd.add_output(fd.ops.sum(t0, [1], False, DataType.Float))
        fd.add_output(fd.ops.sum(t0, [1], dtype=DataType.Double))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x.float().sum(1))
    check(out1, x.double().sum(1))


def test_prod(run_fusion) -> None:
    x = randn(3, 4) * 0.5 + 1.0
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.prod(t0, [1]))
    (out,) = run_fusion(fd, [x])
    check(out, x.prod(1))


def test_max_min(run_fusion) -> None:
    x = randn(4, 7)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.max(t0, [1]))
        fd.add_output(fd.ops.min(t0, [0], keepdim=True))
    out0, out1 = run_fusion(fd, [x])
    check(out0, x.amax(1))
    check(out1, x.amin(0, keepdim=True))


def test_mean(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.mean(t0, [-1], keepdim=True))
    (out,) = run_fusion(fd, [x])
    check(out, x.mean(-1, keepdim=True))


def test_var_mean(run_fusion) -> None:
    x = randn(4, 16)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        var, mean = fd.ops.var_mean(t0, [-1], correction=0, keepdim=False)
        fd.add_output(var)
        fd.add_output(mean)
    var, mean = run_fusion(fd, [x])
    ev, em = torch.var_mean(x, -1, correction=0)
    check(var, ev)
    check(mean, em)


def test_var(run_fusion) -> None:
    x = randn(5, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.var(t0, [0], 1, True))
    (out,) = run_fusion(fd, [x])
    check(out, torch.var(x, 0, correction=1, keepdim=True))


def test_var_mean_of_half_is_float(run_fusion) -> None:
    x = randn(3, 8, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        var, mean = fd.ops.var_mean(t0, [1])
        fd.add_output(var)
        fd.add_output(mean)
    var, mean = run_fusion(fd, [x])
    ev, em = torch.var_mean(x.float(), 1)
    check(var, ev)
    check(mean, em)


# --------------------------------------------------------------------------- #
# Normalizations and activations composed of ops                              #
# --------------------------------------------------------------------------- #


def test_softmax(run_fusion) -> None:
    x = randn(4, 32, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 32], contiguity=True, dtype=DataType.BFloat16)
        t1 = fd.ops.cast(t0, DataType.Float)
        m = fd.ops.max(t1, [1], keepdim=True)
        e = fd.ops.exp(fd.ops.sub(t1, m))
        s = fd.ops.sum(e, [1], keepdim=True)
        fd.add_output(fd.ops.cast(fd.ops.div(e, s), DataType.BFloat16))
    (out,) = run_fusion(fd, [x])
    check(out, torch.softmax(x.float(), -1).bfloat16())


def test_rmsnorm(run_fusion) -> None:
    x, w = randn(4, 32, dtype=torch.bfloat16), randn(32, dtype=torch.bfloat16)
    eps = 1e-6
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 32], contiguity=True, dtype=DataType.BFloat16)
        t1 = fd.define_tensor([32], contiguity=True, dtype=DataType.BFloat16)
        xf = fd.ops.cast(t0, DataType.Float)
        ms = fd.ops.sum(fd.ops.mul(xf, xf), [1], keepdim=True)
        ms = fd.ops.div(ms, 32.0)
        inv = fd.ops.rsqrt(fd.ops.add(ms, eps))
        wb = fd.ops.broadcast_in_dim(t1, [1, 32], [1])
        y = fd.ops.mul(fd.ops.mul(xf, inv), wb)
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    (out,) = run_fusion(fd, [x, w])
    xf = x.float()
    expected = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).bfloat16()
    check(out, expected)


def test_layernorm(run_fusion) -> None:
    x, w, b = randn(3, 16), randn(16), randn(16)
    eps = 1e-5
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], contiguity=True)
        t1 = fd.define_tensor([-1], contiguity=True)
        t2 = fd.define_tensor([-1], contiguity=True)
        var, mean = fd.ops.var_mean(t0, [1], correction=0, keepdim=True)
        xc = fd.ops.sub(t0, mean)
        y = fd.ops.mul(xc, fd.ops.rsqrt(fd.ops.add(var, eps)))
        y = fd.ops.add(fd.ops.mul(y, t1), t2)
        fd.add_output(y)
    (out,) = run_fusion(fd, [x, w, b])
    check(out, torch.nn.functional.layer_norm(x, [16], w, b, eps), rtol=1e-4, atol=1e-4)


def test_gelu_tanh(run_fusion) -> None:
    x, b = randn(4, 16), randn(16)
    k0, k1 = math.sqrt(2 / math.pi), 0.044715
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1])
        h = fd.ops.add(t0, t1)
        inner = fd.ops.mul(fd.ops.add(h, fd.ops.mul(fd.ops.mul(fd.ops.mul(h, h), h), k1)), k0)
        y = fd.ops.mul(fd.ops.mul(h, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))
        fd.add_output(y)
    (out,) = run_fusion(fd, [x, b])
    check(out, torch.nn.functional.gelu(x + b, approximate="tanh"))


def test_silu(run_fusion) -> None:
    x = randn(3, 8, dtype=torch.float16)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.Half)
        fd.add_output(fd.ops.silu(t0))
    (out,) = run_fusion(fd, [x])
    check(out, torch.nn.functional.silu(x.float()).half())


def test_clamp_and_threshold(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.clamp(t0, -0.5, 0.5))
        fd.add_output(fd.ops.threshold(t0, 0.1, 20.0))
    out0, out1 = run_fusion(fd, [x])
    check(out0, torch.clamp(x, -0.5, 0.5))
    check(out1, torch.nn.functional.threshold(x, 0.1, 20.0))


def test_lerp_addcmul_alpha(run_fusion) -> None:
    a, b, c = randn(3, 4), randn(3, 4), randn(3, 4)
    with FusionDefinition() as fd:
        t0, t1, t2 = (fd.define_tensor([-1, -1]) for _ in range(3))
        fd.add_output(fd.ops.lerp(t0, t1, 0.25))
        fd.add_output(fd.ops.addcmul(t0, t1, t2, 0.5))
        fd.add_output(fd.ops.add_alpha(t0, t1, 2.0))
        fd.add_output(fd.ops.sub_alpha(t0, t1, 2.0))
    lerp, addcmul, add_alpha, sub_alpha = run_fusion(fd, [a, b, c])
    check(lerp, a + 0.25 * (b - a))
    check(addcmul, torch.addcmul(a, b, c, value=0.5))
    check(add_alpha, torch.add(a, b, alpha=2.0))
    check(sub_alpha, torch.sub(a, b, alpha=2.0))


def test_isnan_isinf_isfinite(run_fusion) -> None:
    x = torch.tensor(
        [[1.0, float("nan"), float("inf")], [-float("inf"), 0.0, -2.0]], device=DEVICE
    )
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.isnan(t0))
        fd.add_output(fd.ops.isinf(t0))
        fd.add_output(fd.ops.isfinite(t0))
        fd.add_output(fd.ops.isneginf(t0))
    nan, inf, finite, neginf = run_fusion(fd, [x])
    check(nan, torch.isnan(x))
    check(inf, torch.isinf(x))
    check(finite, torch.isfinite(x))
    check(neginf, torch.isneginf(x))


# --------------------------------------------------------------------------- #
# Matrix products                                                             #
# --------------------------------------------------------------------------- #


def test_matmul(run_fusion) -> None:
    a, b = randn(4, 8), randn(8, 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.matmul(t0, t1))
    (out,) = run_fusion(fd, [a, b])
    check(out, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_batched_and_vector(run_fusion) -> None:
    a, b, v = randn(2, 3, 4), randn(2, 4, 5), randn(4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.define_tensor([-1, -1, -1])
        t2 = fd.define_tensor([-1])
        fd.add_output(fd.ops.matmul(t0, t1))
        fd.add_output(fd.ops.matmul(t0, t2))
    out0, out1 = run_fusion(fd, [a, b, v])
    check(out0, torch.matmul(a, b), rtol=1e-4, atol=1e-4)
    check(out1, torch.matmul(a, v), rtol=1e-4, atol=1e-4)


def test_linear(run_fusion) -> None:
    x, w, b = randn(2, 3, 8), randn(5, 8), randn(5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.define_tensor([-1, -1])
        t2 = fd.define_tensor([-1])
        fd.add_output(fd.ops.linear(t0, t1, t2))
        fd.add_output(fd.ops.linear(t0, t1))
    out0, out1 = run_fusion(fd, [x, w, b])
    check(out0, torch.nn.functional.linear(x, w, b), rtol=1e-4, atol=1e-4)
    check(out1, torch.nn.functional.linear(x, w), rtol=1e-4, atol=1e-4)


def test_linear_gelu_bf16(run_fusion) -> None:
    x, w = randn(4, 16, dtype=torch.bfloat16), randn(8, 16, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.from_pytorch(w)
        h = fd.ops.cast(fd.ops.linear(t0, t1), DataType.Float)
        y = fd.ops.mul(fd.ops.mul(h, 0.5), fd.ops.add(fd.ops.erf(fd.ops.mul(h, 1 / math.sqrt(2))), 1.0))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    (out,) = run_fusion(fd, [x, w])
    h = torch.nn.functional.linear(x, w).float()
    check(out, torch.nn.functional.gelu(h).bfloat16())


def test_broadcast_in_dim_without_new_dims_is_expand(run_fusion) -> None:
    # nvFuser's test_broadcast_in_dim_no_redundant_set: broadcast_in_dim whose broadcast_dims
    # are every output dimension builds the fusion expand builds (the same printed IR)
    def define(use_expand: bool) -> FusionDefinition:
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[1, -1], contiguity=[None, True])
            t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
            t2 = fd.ops.expand(t0, t1.shape()) if use_expand else fd.ops.broadcast_in_dim(t0, t1.shape(), [0, 1])
            fd.add_output(fd.ops.add(t2, t1))
        return fd

    fd = define(False)
    assert str(fd) == str(define(True))
    x, y = randn(1, 5), randn(3, 5)
    (out,) = run_fusion(fd, [x, y])
    check(out, x.expand(3, 5) + y)
