"""FusionDefinition API: layouts, aliases, caching, definitions by subclass, IR, multidevice."""

from __future__ import annotations

import pytest
import torch
from frontend_helpers import DEVICE, backend_available, check, randn

from allotment import DataType, DeviceMesh, FusionDefinition
from allotment.frontend import ParallelType, compute_contiguity, tensor_descriptor
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate

# --------------------------------------------------------------------------- #
# Layouts                                                                     #
# --------------------------------------------------------------------------- #


def test_from_pytorch_transposed_input(run_fusion) -> None:
    x = randn(5, 3).t()  # column-major 3x5
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.mul(t0, 2.0))
    assert fd._inputs[0].stride_order == [0, 1]
    (out,) = run_fusion(fd, [x])
    check(out, x * 2.0)


@pytest.mark.parametrize("how", ["stride_order", "from_pytorch", "strided"])
def test_an_input_dense_in_a_stride_order_is_viewed_as_it_lies(how: str, run_fusion,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An input defined dense in a stride order (nvFuser's define_tensor(stride_order=...,
    contiguity=True), from_pytorch of a permuted tensor, or sizes and strides) is an argument
    with `fusion.stride_order`: the transpose back and the merge are views of it as it lies,
    with no row-major copy at entry. One with a non-contiguous dim gets no order."""
    from allotment.backend import host_runtime as rt

    copies: list[tuple[int, ...]] = []
    real = rt.row_major_copy
    monkeypatch.setattr(rt, "row_major_copy", lambda t: copies.append(tuple(t.shape)) or real(t))
    x = randn(2, 4, 3, 5).permute(0, 2, 1, 3)  # [2, 3, 4, 5] laid out [0, 2, 1, 3]
    with FusionDefinition() as fd:
        if how == "stride_order":
            t = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=True, stride_order=[3, 1, 2, 0])
        elif how == "from_pytorch":
            t = fd.from_pytorch(x)
        else:
            t = fd.define_tensor(list(x.shape), list(x.stride()))
        v = fd.ops.reshape(fd.ops.permute(t, [0, 2, 1, 3]), [2, 4, 15])
        fd.add_output(fd.ops.exp(v))
    assert "fusion.stride_order = array<i64: 3, 1, 2, 0>" in fd.ir()
    (out,) = run_fusion(fd, [x])
    check(out, x.permute(0, 2, 1, 3).reshape(2, 4, 15).exp())
    assert copies == []
    with FusionDefinition() as gapped:  # dim 1 not contiguous: not dense in the order
        t = gapped.define_tensor(shape=[-1, -1], contiguity=[True, False], stride_order=[0, 1])
        gapped.add_output(gapped.ops.exp(t))
    assert "fusion.stride_order" not in gapped.ir()


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1], [1, 2, 0]])
def test_stride_order_op_sets_the_output_layout(run_fusion, order: list[int]) -> None:
    # nvFuser's test_output_stride_order: fd.ops.stride_order(t, order) before add_output
    # gives the output that layout (entry d: dimension d's rank, the highest outermost)
    x = randn(2, 3, 4)
    with FusionDefinition() as fd:
        t = fd.ops.stride_order(fd.ops.add(fd.from_pytorch(x), 3.0), order)
        fd.add_output(t)
    assert "stride_order" in fd.ir()
    (out,) = run_fusion(fd, [x])
    check(out, x + 3.0)
    by_rank = sorted(range(3), key=lambda d: -order[d])  # outermost first
    assert [out.stride(d) for d in by_rank] == sorted(out.stride(), reverse=True)


def test_stride_order_op_of_a_broadcast(run_fusion) -> None:
    # nvFuser's test_broadcast_and_stride_order: dimension 0 innermost; the size-1 broadcast
    # dimension takes the stride of the dimension inside it
    x = randn(2, 3, 4)
    with FusionDefinition() as fd:
        b = fd.ops.broadcast(fd.from_pytorch(x), is_broadcast_dim=[False, True, False, False])
        fd.add_output(fd.ops.stride_order(b, stride_order=[0, 1, 2, 3]))
    (out,) = run_fusion(fd, [x])
    check(out, x.unsqueeze(1))
    assert out.stride() == (1, 2, 2, 6)


def test_stride_order_with_an_expanded_broadcast_outermost(run_fusion) -> None:
    # nvFuser's test_stride_order_with_explicit_broadcast: dimension 1 (extent 16, stride 0,
    # contiguity None) is outermost in the stride order; a stride-0 dimension sits anywhere
    x = torch.randn(6, device=DEVICE).as_strided((2, 16, 3), (3, 0, 1))
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, 16, 3], contiguity=[None, True, True], dtype=DataType.Float,
                             stride_order=[1, 2, 0])
        fd.add_output(fd.ops.mul(t, 3.0))
    (out,) = run_fusion(fd, [x])
    check(out, x * 3.0)


def test_stride_order_column_major(run_fusion) -> None:
    x = randn(4, 6).t()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], contiguity=True, dtype=DataType.Float, stride_order=[0, 1])
        fd.add_output(fd.ops.sum(t0, [0]))
    (out,) = run_fusion(fd, [x])
    check(out, x.sum(0))


def test_non_contiguous_input(run_fusion) -> None:
    base = randn(4, 10)
    x = base[:, ::2]
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], contiguity=[False, False])
        fd.add_output(fd.ops.exp(t0))
    (out,) = run_fusion(fd, [x])
    check(out, torch.exp(x))


def test_expanded_input(run_fusion) -> None:
    x = randn(4, 1).expand(4, 6)  # stride 0 in dimension 1
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.add(t0, 1.0))
    (out,) = run_fusion(fd, [x])
    check(out, x + 1.0)


def test_broadcast_dimension_input(run_fusion) -> None:
    x, y = randn(1, 5), randn(3, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([1, -1], contiguity=[None, True])
        t1 = fd.define_tensor([-1, -1], contiguity=True)
        fd.add_output(fd.ops.add(t0, t1))
    (out,) = run_fusion(fd, [x, y])
    check(out, x + y)


def test_output_stride_order(run_fusion) -> None:
    x = randn(3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.add(t0, 1.0), stride_order=[0, 1])
    (out,) = run_fusion(fd, [x])
    check(out, x + 1.0)
    assert out.stride() == (1, 3)


@pytest.mark.parametrize(("sizes", "strides", "contiguity", "order"), [
    # from nvFuser's test_compute_tensor_descriptor: a stride-0 dimension keeps its own
    # position among the others, sorted by stride
    ([2, 3, 1, 5, 4], [28, 4, 14, 0, 1], [False, None, True, None, True], [4, 2, 3, 1, 0]),
    ([2, 2, 1, 1, 2, 2, 2], [8, 4, 3, 9, 2, 0, 1], [None, True, True, None, True, None, True], [5, 4, 3, 6, 2, 1, 0]),
    ([2, 2, 1, 2, 4, 2], [2, 32, 1, 8, 0, 4], [False, True, True, False, None, None], [2, 5, 0, 4, 1, 3]),
    ([2, 2, 2, 2], [8, 4, 0, 2], [True, True, None, False], [3, 2, 1, 0]),
])
def test_tensor_descriptor_as_nvfuser(sizes, strides, contiguity, order, run_fusion) -> None:
    assert tensor_descriptor(sizes, strides) == (contiguity, order)
    x = torch.randn(sum((n - 1) * s for n, s in zip(sizes, strides)) + 1, device=DEVICE).as_strided(sizes, strides)
    with FusionDefinition() as fd:  # from_pytorch takes the same descriptor
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), 2.0))
    (out,) = run_fusion(fd, [x])
    check(out, x * 2.0)


def test_compute_contiguity_and_descriptor() -> None:
    assert compute_contiguity([2, 1, 4], [4, 4, 1]) == [True, None, True]
    assert compute_contiguity([2, 3], [6, 1]) == [False, True]
    contiguity, order = tensor_descriptor([3, 5], [1, 3])
    assert (contiguity, order) == ([True, True], [0, 1])


# --------------------------------------------------------------------------- #
# Outputs, aliases, definitions                                               #
# --------------------------------------------------------------------------- #


def test_alias_input_updates_in_place(run_fusion) -> None:
    running, x = randn(6), randn(4, 6)
    before = running.clone()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1])
        t1 = fd.define_tensor([-1, -1])
        mean = fd.ops.mean(t1, [0])
        updated = fd.ops.add(fd.ops.mul(t0, 0.9), fd.ops.mul(mean, 0.1))
        fd.add_output(updated, alias_input=t0)
        fd.add_output(mean)
    outs = run_fusion(fd, [running, x])
    assert len(outs) == 1  # the aliased output is written, not returned
    check(outs[0], x.mean(0))
    check(running, before * 0.9 + x.mean(0) * 0.1)


def test_multiple_outputs_and_input_as_output(run_fusion) -> None:
    x = randn(3, 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.ops.relu(t0)
        fd.add_output(t1)
        fd.add_output(t0)
        fd.add_output(fd.ops.neg(t1))
    a, b, c = run_fusion(fd, [x])
    check(a, torch.relu(x))
    check(b, x)
    check(c, -torch.relu(x))


def test_one_definition_many_shapes(run_fusion) -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.sum(fd.ops.mul(t0, t0), [1]))
    for shape in [(2, 3), (5, 7), (1, 1)]:
        x = randn(*shape)
        (out,) = run_fusion(fd, [x])
        check(out, (x * x).sum(1))


def test_execute_with_device(run_fusion) -> None:
    x = randn(2, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.add(t0, t0))
    (out,) = run_fusion(fd, [x], device=DEVICE)
    check(out, x + x)
    assert out.device.type == DEVICE.type


class _AddScale(FusionDefinition):
    def definition(self) -> None:
        t0 = self.define_tensor([-1, -1])
        t1 = self.define_tensor([-1, -1])
        s0 = self.define_scalar(dtype=DataType.Double)
        self.add_output(self.ops.mul(self.ops.add(t0, t1), s0))


def test_definition_subclass(run_fusion) -> None:
    fd = _AddScale()
    x, y = randn(2, 3), randn(2, 3)
    (out,) = run_fusion(fd, [x, y, 0.5])
    check(out, (x + y) * 0.5)


@pytest.mark.skipif(not backend_available(), reason="needs allotment.compile")
def test_execute_compiles_once_per_signature() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.exp(t0))
    for shape in [(2, 3), (4, 5), (3, 3)]:
        x = randn(*shape)
        (out,) = fd.execute([x])
        check(out, torch.exp(x))
    assert len(fd._executables) == 1
    exe, args = fd.executable_for([randn(2, 2)])
    assert exe.compilations == 1
    (direct,) = exe(*args)
    check(direct, torch.exp(args[0]))


def test_execute_without_backend_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    import allotment

    monkeypatch.delitem(allotment._LAZY, "compile", raising=False)
    monkeypatch.delattr(allotment, "compile", raising=False)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1])
        fd.add_output(fd.ops.neg(t0))
    with pytest.raises(RuntimeError, match="allotment.compile"):
        fd.execute([randn(3)])


# --------------------------------------------------------------------------- #
# IR                                                                          #
# --------------------------------------------------------------------------- #


def test_ir_text_round_trips() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 4], contiguity=True, dtype=DataType.BFloat16)
        s0 = fd.define_scalar(dtype=DataType.Double)
        t1 = fd.ops.mul(fd.ops.cast(t0, DataType.Float), s0)
        fd.add_output(fd.ops.sum(t1, [1], keepdim=True))
    text = fd.ir()
    assert "func.func @fusion(%T0: tensor<?x4xbf16>, %S0: f64) -> tensor<?x1xf32>" in text
    assert "fusion.cast %T0 : tensor<?x4xbf16> to tensor<?x4xf32>" in text
    assert "fusion.sum" in text and "keepdim" in text
    assert str(fd) == text == repr(fd) == fd.fusion_ir()
    module = parse_module(text)
    assert str(module) + "\n" == text


def test_python_numbers_are_wrapped_constants() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1], dtype=DataType.Half)
        t1 = fd.ops.where(fd.ops.gt(t0, 0), t0, 0.5)
        fd.add_output(fd.ops.mul(t1, True))
    text = fd.ir()
    assert "arith.constant 0 : i64" in text
    assert "arith.constant 5.000000e-01 : f64" in text
    assert "arith.constant true" in text
    # where keeps f16 (nvFuser does not lift half for where); mul lifts it to f32
    assert "-> tensor<?xf16>" in text and "tensor<?xf32>" in text


def test_incomplete_definition() -> None:
    fd = FusionDefinition()
    fd.define_tensor([-1])
    with pytest.raises(RuntimeError, match="not complete"):
        fd.ir()
    assert "incomplete" in repr(fd)


def test_inputs_and_outputs_handles() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 3])
        s0 = fd.define_scalar(dtype=DataType.Int)
        t1 = fd.ops.add(t0, s0)
        fd.add_output(t1)
        assert len(t0.shape()) == 2 and t0.shape()[1].constant == 3
    assert fd.inputs() == [t0, s0]
    assert fd.outputs() == [t1]
    assert t0.ndim == 2 and t0.dtype() == DataType.Float and s0.dtype() == DataType.Int
    assert repr(t1).startswith("Tensor(index=")


# --------------------------------------------------------------------------- #
# Multidevice                                                                 #
# --------------------------------------------------------------------------- #


def test_device_mesh() -> None:
    mesh = DeviceMesh(torch.arange(4).reshape(2, 2))
    assert mesh.shape == [2, 2] and mesh.size == 4 and mesh.devices == [0, 1, 2, 3]
    assert DeviceMesh([0, 1]) == DeviceMesh(torch.arange(2))
    shard = DeviceMesh([0, 1]).shard_tensor(torch.arange(8).reshape(4, 2), 0, 1)
    assert shard.tolist() == [[4, 5], [6, 7]]


def test_sharding_by_parallelized_axis() -> None:
    mesh = DeviceMesh([0, 1])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([2, -1], contiguity=True)
        t1 = fd.ops.relu(t0)
        t2 = fd.ops.add(t1, t1)
        fd.add_output(t2)
        for t in (t0, t1, t2):
            t.set_device_mesh(mesh)
        t0.axis(0).parallelize(ParallelType.mesh_x)
    text = fd.ir()
    assert "fusion.mesh @mesh0 shape 2 devices [0, 1]" in text
    assert "tensor<2x?xf32, #fusion.sharding<@mesh0, [[0], []]>>" in text
    assert "#fusion.sharding<@mesh0, [[], []]>" in text  # t1, t2 replicated on the mesh
    # The reference evaluator ignores shardings: global tensors in, global out.
    x = torch.randn(2, 5)
    (out,) = evaluate(find_function(parse_module(text)), [x])
    check(out, torch.relu(x) * 2)


def test_sharding_by_outer_split() -> None:
    mesh = DeviceMesh([0, 1, 2, 3])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor((8, 6), contiguity=True, dtype=DataType.Half)
        t1 = fd.define_tensor((6,), contiguity=True, dtype=DataType.Half)
        fd.add_output(fd.ops.mul(t0, t1))
        t0.set_device_mesh(mesh)
        t0.outer_split(0, 4)
        t0.axis(0).parallelize(ParallelType.mesh_x)
    assert "tensor<8x6xf16, #fusion.sharding<@mesh0, [[0], []]>>" in fd.ir()
    assert "tensor<6xf16>" in fd.ir()


def test_multidevice_schedule_method() -> None:
    class Sharded(FusionDefinition):
        def definition(self) -> None:
            self.x = self.define_tensor([-1, 4])
            self.add_output(self.ops.exp(self.x))

        def multidevice_schedule(self) -> None:
            self.x.set_device_mesh(DeviceMesh([0, 1]))
            self.x.outer_split(1, 2)
            self.x.axis(1).parallelize(ParallelType.mesh_x)

    fd = Sharded()
    assert "#fusion.sharding<@mesh0, [[], [0]]>" in fd.ir()


def test_unsupported_parallel_types() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([4, 4])
        fd.add_output(fd.ops.neg(t0))
        t0.set_device_mesh(DeviceMesh([0, 1]))
        with pytest.raises(NotImplementedError, match="not supported: parallelize with ParallelType.block_x"):
            t0.axis(0).parallelize(ParallelType.block_x)
        t0.outer_split(1, 2)
        with pytest.raises(NotImplementedError, match="not supported: parallelizing the inner part"):
            t0.axis(2).parallelize(ParallelType.mesh_x)
        with pytest.raises(NotImplementedError, match="not supported: inner"):
            t0.split(0, 2)
    with pytest.raises(RuntimeError, match="complete"):
        t0.set_device_mesh(DeviceMesh([0, 1]))


def test_uneven_sharding_is_an_error() -> None:
    fd = FusionDefinition()
    with pytest.raises(ValueError, match="does not divide evenly"):
        with fd:
            t0 = fd.define_tensor([5, 4])
            fd.add_output(fd.ops.neg(t0))
            t0.set_device_mesh(DeviceMesh([0, 1]))
            t0.axis(0).parallelize(ParallelType.mesh_x)


def test_handle_methods_as_nvfuser(run_fusion) -> None:
    # nvFuser's Val.is_tensor(), TensorView.ndim, .shape() and .dtype() (a method), as its
    # test_nextafter uses them: nextafter of every pair of tensors and scalars, adding the
    # tensors as outputs
    x32 = torch.tensor([0.0, 1.0, -2.0, 3.5])
    x64 = torch.tensor([1.0, 0.0, 5.0, -1.0], dtype=torch.float64)
    with FusionDefinition() as fd:
        t0, t1 = fd.from_pytorch(x32), fd.from_pytorch(x64)
        s0 = fd.define_scalar(1.0, dtype=DataType.Float)
        s1 = fd.define_scalar(-1.0, dtype=DataType.Double)
        assert t0.is_tensor() and not s0.is_tensor()
        assert t0.ndim == 1 and len(t0.shape()) == 1
        assert t0.dtype() == DataType.Float and t1.dtype() == DataType.Double and s1.dtype() == DataType.Double
        for a in (t0, t1, s0, s1):
            for b in (t0, t1, s0, s1):
                t = fd.ops.nextafter(a, b)
                if t.is_tensor():
                    fd.add_output(t)
    outs = run_fusion(fd, [x32, x64])
    values = [x32, x64, 1.0, -1.0]
    expected = [torch.nextafter(torch.as_tensor(a), torch.as_tensor(b))
                for a in values for b in values if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor)]
    assert len(outs) == len(expected)
    for out, e in zip(outs, expected, strict=True):
        check(out, e)


def test_validate_checks_outputs_against_the_reference() -> None:
    # nvFuser's FusionDefinition.validate (its test_dynamic_full: exec_nvfuser(...,
    # validate_results=True)): the outputs, checked against a reference evaluation
    from allotment.errors import RunError

    x = randn(5, 10)
    with FusionDefinition() as fd:
        c4, c5 = fd.define_scalar(None, dtype=DataType.Int), fd.define_scalar(None, dtype=DataType.Int)
        c6 = fd.define_scalar(None, dtype=DataType.Float)
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.add(fd.ops.full((c4, c5), c6, DataType.Float), t1))
    (out,) = fd.validate([5, 10, 2.5, x])
    check(out, x + 2.5)
    fd.validate([5, 10, 2.5, x], [x + 2.5])
    with pytest.raises(RunError, match="validate: output #0 differs"):
        fd.validate([5, 10, 2.5, x], [x + 2.0])
