"""Indexing ops through FusionDefinition against torch, in the style of nvFuser's
test_python_frontend.py: index_select, gather, take_along_axis, embedding_fwd, scatter,
index_put_accumulate. Each test runs on the backend and on the reference evaluator
(`run_fusion`); out-of-range and negative indices are RunErrors naming the index operand.
"""

from __future__ import annotations

import pytest
import torch
from frontend_helpers import DEVICE, check, randint, randn

from allotment import DataType, FusionDefinition
from allotment.errors import ArgumentError, Error, RunError

INDEX_TYPES = [(torch.int64, DataType.Int), (torch.int32, DataType.Int32)]
DATA_TYPES = [(torch.float32, DataType.Float), (torch.bfloat16, DataType.BFloat16), (torch.int64, DataType.Int)]


def _data(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return randn(*shape, dtype=dtype)
    return randint(-50, 50, *shape, dtype=dtype)


def _unique_along(shape: tuple[int, ...], dim: int, extent: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    """An index of `shape` whose entries along `dim` are distinct values in [0, extent)."""
    moved = list(shape)
    n = moved.pop(dim)
    rows = [torch.randperm(extent)[:n] for _ in range(max(1, int(torch.tensor(moved).prod().item())))]
    out = torch.stack(rows, -1).reshape(n, *moved)
    return out.movedim(0, dim).contiguous().to(dtype).to(DEVICE)


# --------------------------------------------------------------------------- #
# index_select                                                                #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("idx_dtype", INDEX_TYPES, ids=["i64", "i32"])
def test_index_select_2d(run_fusion, dim: int, idx_dtype) -> None:
    x = randn(5, 6)
    index = randint(0, x.shape[dim], 7, dtype=idx_dtype[0])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1], dtype=idx_dtype[1])
        fd.add_output(fd.ops.index_select(t0, t1, dim))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.index_select(x, dim, index))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select_3d(run_fusion, dim: int) -> None:
    x = randn(3, 4, 5)
    index = randint(0, x.shape[dim], 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.define_tensor([-1], dtype=DataType.Int)
        fd.add_output(fd.ops.index_select(t0, t1, dim))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.index_select(x, dim, index))


@pytest.mark.parametrize("dtype", DATA_TYPES, ids=["f32", "bf16", "i64"])
def test_index_select_dtypes(run_fusion, dtype) -> None:
    x = _data((6, 4), dtype[0])
    index = torch.tensor([5, 0, 0, 3], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=dtype[1])
        t1 = fd.define_tensor([-1], dtype=DataType.Int)
        fd.add_output(fd.ops.index_select(t0, t1, 0))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.index_select(x, 0, index))


def test_index_select_fused_pointwise(run_fusion) -> None:
    """A pointwise producer of the source (its own kernel), a computed index and a
    pointwise consumer fused with the gather load."""
    x = randn(5, 4)
    y = randn(3, 4)
    index = torch.tensor([4, 1, 2], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1])
        src = fd.ops.exp(t0)
        idx = fd.ops.sub(fd.ops.mul(t1, 2), t1)  # computed in the fusion: index * 2 - index
        g = fd.ops.index_select(src, idx, 0)
        fd.add_output(fd.ops.add(fd.ops.relu(g), t2))
    (out,) = run_fusion(fd, [x, index, y])
    check(out, torch.index_select(x.exp(), 0, index).relu() + y)


def test_index_select_reduced(run_fusion) -> None:
    """A gather feeding a row sum: the gather load inside a reduction kernel."""
    x = randn(6, 8)
    index = torch.tensor([5, 5, 0, 2], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1], dtype=DataType.Int)
        fd.add_output(fd.ops.sum(fd.ops.index_select(t0, t1, 0), [1]))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.index_select(x, 0, index).sum(1))


# --------------------------------------------------------------------------- #
# gather, take_along_axis                                                     #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("idx_dtype", INDEX_TYPES, ids=["i64", "i32"])
def test_gather_2d(run_fusion, dim: int, idx_dtype) -> None:
    x = randn(5, 6)
    index = randint(0, x.shape[dim], 3, 4, dtype=idx_dtype[0])  # smaller than x in the other dim
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=idx_dtype[1])
        fd.add_output(fd.ops.gather(t0, t1, dim))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.gather(x, dim, index))


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_3d(run_fusion, dim: int) -> None:
    x = randn(3, 4, 5)
    index = randint(0, x.shape[dim], 2, 3, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.define_tensor([-1, -1, -1], dtype=DataType.Int)
        fd.add_output(fd.ops.gather(t0, t1, dim))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.gather(x, dim, index))


@pytest.mark.parametrize("dtype", DATA_TYPES, ids=["f32", "bf16", "i64"])
def test_gather_dtypes_and_cast(run_fusion, dtype) -> None:
    x = _data((4, 5), dtype[0])
    index = randint(0, 5, 4, 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=dtype[1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        g = fd.ops.gather(t0, t1, 1)
        fd.add_output(g)
        fd.add_output(fd.ops.cast(g, DataType.Float))
    out, cast = run_fusion(fd, [x, index])
    check(out, torch.gather(x, 1, index))
    check(cast, torch.gather(x, 1, index).float())


@pytest.mark.parametrize("dim", [0, 1])
def test_take_along_axis(run_fusion, dim: int) -> None:
    x = randn(4, 5)
    shape = [4, 5]
    shape[dim] = 3
    index = randint(0, x.shape[dim], *shape)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        fd.add_output(fd.ops.take_along_axis(t0, t1, dim))
    (out,) = run_fusion(fd, [x, index])
    check(out, torch.take_along_dim(x, index, dim))


def test_take_along_axis_argmax_pattern(run_fusion) -> None:
    """take_along_axis of a computed index then a pointwise op: the log-probability of a label."""
    logits = randn(4, 6)
    labels = randint(0, 6, 4, 1)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, 1], dtype=DataType.Int)
        logp = fd.ops.log(fd.ops.sigmoid(t0))
        fd.add_output(fd.ops.neg(fd.ops.take_along_axis(logp, t1, 1)))
    (out,) = run_fusion(fd, [logits, labels])
    check(out, -torch.take_along_dim(logits.sigmoid().log(), labels, 1))


# --------------------------------------------------------------------------- #
# embedding_fwd                                                               #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [(torch.float32, DataType.Float), (torch.bfloat16, DataType.BFloat16)],
                         ids=["f32", "bf16"])
@pytest.mark.parametrize("idx_dtype", INDEX_TYPES, ids=["i64", "i32"])
def test_embedding(run_fusion, dtype, idx_dtype) -> None:
    weight = randn(10, 8, dtype=dtype[0])
    ids = randint(0, 10, 2, 3, dtype=idx_dtype[0])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=idx_dtype[1])
        t1 = fd.define_tensor([-1, -1], dtype=dtype[1])
        fd.add_output(fd.ops.embedding_fwd(t0, t1, padding_idx=0))
    (out,) = run_fusion(fd, [ids, weight])
    check(out, torch.nn.functional.embedding(ids, weight, padding_idx=0))


def test_embedding_scaled(run_fusion) -> None:
    """Embedding then a scale (as in Gemma's `embed * sqrt(hidden)`), one kernel."""
    weight = randn(12, 4)
    ids = torch.tensor([3, 11, 0, 3, 7], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1], dtype=DataType.Int)
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.mul(fd.ops.embedding_fwd(t0, t1), 2.0))
    (out,) = run_fusion(fd, [ids, weight])
    check(out, torch.nn.functional.embedding(ids, weight) * 2.0)


@pytest.mark.parametrize("norm_type", [None, 1.0, 3.0])
@pytest.mark.parametrize("max_norm", [1e-5, 1.5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_embedding_max_norm(run_fusion, norm_type: float | None, max_norm: float, dtype: torch.dtype) -> None:
    # nvFuser's test_embedding: max_norm and norm_type are Float scalar inputs; the output is
    # torch.nn.functional.embedding's, and the weight is left as it was (torch's renormalizes
    # the looked-up rows of its weight in place)
    ids = torch.tensor([3, 0, 3, 7], device=DEVICE)
    weight = randn(10, 3, dtype=dtype)
    kept = weight.clone()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1], dtype=DataType.Int)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.BFloat16 if dtype == torch.bfloat16 else DataType.Float)
        mn = fd.define_scalar(None, dtype=DataType.Float)
        nt = None if norm_type is None else fd.define_scalar(None, dtype=DataType.Float)
        fd.add_output(fd.ops.embedding_fwd(t0, t1, None, mn, nt))
    inputs = [ids, weight, max_norm] + ([] if norm_type is None else [norm_type])
    (out,) = run_fusion(fd, inputs)
    assert torch.equal(weight, kept)
    # the expected rows come from torch on the CPU, which renormalizes by the p-norm: on the
    # H200 (torch 2.11) torch's CUDA embedding renorm left rows unscaled for norm_type 3
    # (norm types 1 and 2 agree on both), and our kernels and reference agree with the CPU
    expected = torch.nn.functional.embedding(ids.cpu(), kept.cpu(), None, max_norm,
                                             2.0 if norm_type is None else norm_type)
    check(out.cpu(), expected)


# --------------------------------------------------------------------------- #
# scatter, index_put_accumulate                                               #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("idx_dtype", INDEX_TYPES, ids=["i64", "i32"])
def test_scatter_unique_2d(run_fusion, dim: int, idx_dtype) -> None:
    x = randn(5, 6)
    shape = [3, 4]
    index = _unique_along(tuple(shape), dim, x.shape[dim], idx_dtype[0])
    src = randn(*shape)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=idx_dtype[1])
        t2 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.scatter(t0, t1, t2, dim))
    (out,) = run_fusion(fd, [x, index, src])
    check(out, torch.scatter(x, dim, index, src))
    assert not torch.equal(out, x)  # something was written


@pytest.mark.parametrize("dim", [0, 2])
def test_scatter_unique_3d(run_fusion, dim: int) -> None:
    x = randn(3, 4, 5)
    shape = (2, 3, 4)
    index = _unique_along(shape, dim, x.shape[dim])
    src = randn(*shape)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1])
        t1 = fd.define_tensor([-1, -1, -1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1, -1])
        fd.add_output(fd.ops.scatter(t0, t1, t2, dim))
    (out,) = run_fusion(fd, [x, index, src])
    check(out, torch.scatter(x, dim, index, src))


@pytest.mark.parametrize("src", [1.5, "scalar input"])
def test_scatter_scalar_src(run_fusion, src: object) -> None:
    # nvFuser's test_scatter_scalar_src: a Double scalar src is written at every index
    # (torch.scatter's value form)
    x = randn(6, 5)
    index = torch.topk(x, k=3, dim=0).indices
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        s = fd.define_scalar(None, dtype=DataType.Double) if src == "scalar input" else src
        fd.add_output(fd.ops.scatter(t0, t1, s, 0))
    (out,) = run_fusion(fd, [x, index] + ([2.25] if src == "scalar input" else []))
    check(out, torch.scatter(x, 0, index, 2.25 if src == "scalar input" else src))


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_0d_index(run_fusion, dim: int) -> None:
    # nvFuser's test_index_select_scalar_indices: a 0-d index keeps `dim` with extent 1
    x = randn(4, 5)
    i = torch.tensor(2, device=DEVICE)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.index_select(fd.from_pytorch(x), fd.from_pytorch(i), dim))
    (out,) = run_fusion(fd, [x, i])
    check(out, torch.index_select(x, dim, i))


def test_scatter_fused_around(run_fusion) -> None:
    """Computed input and source (own kernels), then a pointwise consumer of the result;
    the input stays unchanged."""
    x = randn(4, 3)
    src = randn(2, 3)
    index = _unique_along((2, 3), 0, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1])
        base = fd.ops.mul(t0, 3.0)
        s = fd.ops.scatter(base, t1, fd.ops.exp(t2), 0)
        fd.add_output(fd.ops.add(s, base))
    x_before = x.clone()
    (out,) = run_fusion(fd, [x, index, src])
    check(out, torch.scatter(x * 3.0, 0, index, src.exp()) + x * 3.0)
    assert torch.equal(x, x_before)


def test_scatter_bf16(run_fusion) -> None:
    x = randn(6, 2, dtype=torch.bfloat16)
    src = randn(3, 2, dtype=torch.bfloat16)
    index = _unique_along((3, 2), 0, 6)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.scatter(t0, t1, t2, 0))
    (out,) = run_fusion(fd, [x, index, src])
    check(out, torch.scatter(x, 0, index, src))


@pytest.mark.parametrize("idx_dtype", INDEX_TYPES, ids=["i64", "i32"])
def test_index_put_accumulate_duplicates(run_fusion, idx_dtype) -> None:
    acc = randn(6, 4)
    index = torch.tensor([1, 4, 1, 1, 0], dtype=idx_dtype[0], device=DEVICE)
    value = randn(5, 4)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1], dtype=idx_dtype[1])
        t2 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.index_put_accumulate(t0, t1, t2))
    (out,) = run_fusion(fd, [acc, index, value])
    # float atomics: the order of the three adds to row 1 is not fixed
    check(out, acc.index_put((index,), value, accumulate=True), rtol=1e-5, atol=1e-5)


def test_index_put_accumulate_int64_3d(run_fusion) -> None:
    acc = randint(-9, 9, 5, 2, 3)
    index = torch.tensor([4, 4, 0, 4], device=DEVICE)
    value = randint(-9, 9, 4, 2, 3)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1, -1], dtype=DataType.Int)
        t1 = fd.define_tensor([-1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1, -1], dtype=DataType.Int)
        fd.add_output(fd.ops.index_put_accumulate(t0, t1, t2))
    (out,) = run_fusion(fd, [acc, index, value])
    check(out, acc.index_put((index,), value, accumulate=True))


def test_index_put_accumulate_embedding_backward(run_fusion) -> None:
    """The embedding backward pattern: zeros + computed gradient rows, then a scale."""
    grad = randn(5, 3)
    ids = torch.tensor([2, 0, 2, 7, 2], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1], dtype=DataType.Int)
        t1 = fd.define_tensor([-1, -1])
        zeros = fd.ops.full([8, 3], 0.0, DataType.Float)
        acc = fd.ops.index_put_accumulate(zeros, t0, fd.ops.mul(t1, 0.5))
        fd.add_output(fd.ops.add(acc, 1.0))
    (out,) = run_fusion(fd, [ids, grad])
    expected = torch.zeros(8, 3, device=DEVICE).index_put((ids,), grad * 0.5, accumulate=True) + 1.0
    check(out, expected, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- #
# Errors                                                                      #
# --------------------------------------------------------------------------- #


def _index_select_fd() -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1], dtype=DataType.Int)
        fd.add_output(fd.ops.index_select(t0, t1, 0))
    return fd


@pytest.mark.parametrize("bad", [5, 17, -1], ids=["extent", "far", "negative"])
def test_index_select_out_of_range(run_fusion, bad: int) -> None:
    x = randn(5, 4)
    index = torch.tensor([0, bad, 1], device=DEVICE)
    with pytest.raises(RunError, match=rf"index_select: operand #1 .* holds index {bad}, outside \[0, 5\)"):
        run_fusion(_index_select_fd(), [x, index])


def test_gather_negative_index(run_fusion) -> None:
    x = randn(3, 4)
    index = torch.tensor([[0, -2], [1, 1]], device=DEVICE)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        fd.add_output(fd.ops.gather(t0, t1, 1))
    with pytest.raises(RunError, match=r"gather: operand #1 .* holds index -2, outside \[0, 4\) of dimension 1"):
        run_fusion(fd, [x, index])


def test_scatter_out_of_range(run_fusion) -> None:
    x = randn(3, 2)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.scatter(t0, t1, t2, 0))
    with pytest.raises(RunError, match=r"scatter: operand #1 .* holds index 3, outside \[0, 3\)"):
        run_fusion(fd, [x, torch.tensor([[0, 3]], device=DEVICE), randn(1, 2)])


def test_embedding_out_of_range(run_fusion) -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1], dtype=DataType.Int)
        t1 = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.embedding_fwd(t0, t1))
    with pytest.raises(RunError, match=r"embedding: operand #0 .* holds index 4, outside \[0, 4\)"):
        run_fusion(fd, [torch.tensor([4, 0], device=DEVICE), randn(4, 2)])


def test_gather_index_too_large_extent(run_fusion) -> None:
    """index.size(d) <= input.size(d) for d != dim, checked at run time for `?` extents."""
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        fd.add_output(fd.ops.gather(t0, t1, 0))
    with pytest.raises(RunError, match="gather"):
        run_fusion(fd, [randn(3, 2), torch.zeros(2, 3, dtype=torch.int64, device=DEVICE)])


def test_index_select_float_index_is_argument_error() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1])
        with pytest.raises(ArgumentError, match="index_select: the index must have element type i32 or i64"):
            fd.ops.index_select(t0, t1, 0)
        fd.add_output(t0)


def test_shape_errors_are_argument_errors() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1], dtype=DataType.Int)
        with pytest.raises(ArgumentError, match="dim.*out of range"):
            fd.ops.index_select(t0, t2, 2)
        with pytest.raises(ArgumentError, match="the index must be 1-D"):
            fd.ops.index_select(t0, t1, 0)
        with pytest.raises(ArgumentError, match="gather: the index must have the input's rank"):
            fd.ops.gather(t0, t2, 0)
        with pytest.raises(ArgumentError, match="index_put_accumulate: the value's element type"):
            fd.ops.index_put_accumulate(t0, t2, t1)
        with pytest.raises(ArgumentError, match="argument 'index' must be a Tensor"):
            fd.ops.take_along_axis(t0, 1, 0)
        fd.add_output(t0)


def test_dtype_mismatch_scatter() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, -1])
        t1 = fd.define_tensor([-1, -1], dtype=DataType.Int)
        t2 = fd.define_tensor([-1, -1], dtype=DataType.Half)
        with pytest.raises(Error, match="scatter: the source's element type must be the input's"):
            fd.ops.scatter(t0, t1, t2, 0)
        fd.add_output(t0)
