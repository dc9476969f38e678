"""Scans and sorts through FusionDefinition: cumsum, cumprod, cummax, cummin, argsort, topk.

Every fusion runs through the backend and the reference evaluator (`run_fusion`) and is
compared with torch on the same inputs: scans with torch's own ops (cummax/cummin as
torch computes them on the CPU: ties give the last index, NaN sticks), argsort with
torch's stable sort, topk's values with torch.topk and its indices by the values they
point at (and, for ties, with the stable order Allotment guarantees).
"""

from __future__ import annotations

import pytest
import torch
from frontend_helpers import DEVICE, check, randint, randn

from allotment import DataType, Error, FusionDefinition
from allotment.errors import ArgumentError
from allotment.ir import find_function, parse_module
from allotment.passes.fusion_segment import segment_function


def _cpu(fn, *args, **kwargs):  # torch's CPU results (cummax/cummin ties, stable sorts)
    out = fn(*[a.cpu() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
    if isinstance(out, tuple):
        return tuple(o.to(DEVICE) for o in out)
    return out.to(DEVICE)


def _stable_sort(x: torch.Tensor, dim: int, descending: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _cpu(torch.sort, x, dim=dim, descending=descending, stable=True)


def _segments(fd: FusionDefinition) -> list[str]:
    """The kinds of the segments `fusion-segment` makes of the fusion."""
    f = find_function(parse_module(fd.ir()), "fusion")
    segment_function(f)
    return [op.kind.data for op in f.body.block.ops if op.name == "fusion.segment"]


# --------------------------------------------------------------------------- #
# cumsum, cumprod                                                             #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_2d(run_fusion, dim: int) -> None:
    x = randn(5, 7)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumsum(fd.from_pytorch(x), dim))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumsum(x, dim), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_cumsum_3d(run_fusion, dim: int) -> None:
    x = randn(3, 4, 5)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumsum(fd.from_pytorch(x), dim))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumsum(x, dim), rtol=1e-5, atol=1e-5)


def test_cumsum_bf16_accumulates_in_f32(run_fusion) -> None:
    x = randn(4, 40, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumsum(fd.from_pytorch(x), 1))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumsum(x.float(), 1).to(torch.bfloat16))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool])
def test_cumsum_integers_give_int64(run_fusion, dtype: torch.dtype) -> None:
    x = randint(-5, 6, 4, 9, dtype=torch.int64).to(dtype)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumsum(fd.from_pytorch(x), 1))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumsum(x, 1))
    assert out.dtype == torch.int64


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_f32(run_fusion, dim: int) -> None:
    x = 1.0 + 0.1 * randn(6, 5)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumprod(fd.from_pytorch(x), dim))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumprod(x, dim), rtol=1e-5, atol=1e-6)


def test_cumprod_int32_wraps_in_int64(run_fusion) -> None:
    x = randint(-3, 4, 3, 8, dtype=torch.int32)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumprod(fd.from_pytorch(x), 1))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumprod(x, 1))


# --------------------------------------------------------------------------- #
# cummax, cummin                                                              #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1])
def test_cummax_cummin_give_the_values_as_nvfuser(run_fusion, op: str, dim: int) -> None:
    # nvFuser's cummax/cummin(arg, dim) return one TensorView, the running extreme,
    # which a definition adds as an output (nvFuser's test_cummax / test_cummin)
    x = randn(4, 5)
    with FusionDefinition() as fd:
        t = getattr(fd.ops, op)(fd.from_pytorch(x), dim)
        assert t.is_tensor()
        fd.add_output(t)
    (out,) = run_fusion(fd, [x])
    check(out, getattr(torch, op)(x, dim).values)


@pytest.mark.parametrize("dim", [0, 1])
def test_cummax_ties_take_last_index(run_fusion, dim: int) -> None:
    x = randint(0, 3, 6, 7, dtype=torch.int32)  # many ties
    with FusionDefinition() as fd:
        v, i = fd.ops.cummax(fd.from_pytorch(x), dim, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, ei = _cpu(torch.cummax, x, dim)
    check(values, ev)
    check(indices, ei)


def test_cummin_3d_middle_dim(run_fusion) -> None:
    x = torch.round(randn(3, 6, 4) * 2) / 2  # ties
    with FusionDefinition() as fd:
        v, i = fd.ops.cummin(fd.from_pytorch(x), 1, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, ei = _cpu(torch.cummin, x, 1)
    check(values, ev)
    check(indices, ei)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_nan(run_fusion, op: str) -> None:
    x = randn(3, 9)
    x[0, 2] = float("nan")
    x[0, 6] = float("nan")
    x[1, 8] = float("nan")
    x[2, 0] = float("-inf")
    with FusionDefinition() as fd:
        v, i = getattr(fd.ops, op)(fd.from_pytorch(x), 1, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, ei = _cpu(getattr(torch, op), x, 1)
    check(values, ev)
    check(indices, ei)


def test_cummax_bool(run_fusion) -> None:
    x = randint(0, 2, 4, 6).bool()
    with FusionDefinition() as fd:
        v, i = fd.ops.cummax(fd.from_pytorch(x), 1, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, ei = _cpu(torch.cummax, x, 1)
    check(values, ev)
    check(indices, ei)


def test_cummin_bf16(run_fusion) -> None:
    x = randn(4, 10, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        v, i = fd.ops.cummin(fd.from_pytorch(x), 0, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, ei = _cpu(torch.cummin, x, 0)
    check(values, ev)
    check(indices, ei)


# --------------------------------------------------------------------------- #
# Scans fused with pointwise ops, long rows, layouts                          #
# --------------------------------------------------------------------------- #


def test_scan_fuses_pointwise_before_and_after(run_fusion) -> None:
    x, y = randn(4, 12), randn(4, 12)
    with FusionDefinition() as fd:
        tx, ty = fd.from_pytorch(x), fd.from_pytorch(y)
        e = fd.ops.mul(fd.ops.exp(tx), ty)
        c = fd.ops.cumsum(e, 1)
        fd.add_output(fd.ops.sub(fd.ops.mul(c, 2.0), ty))
    assert _segments(fd) == ["scan"]  # one kernel
    (out,) = run_fusion(fd, [x, y])
    check(out, torch.cumsum(torch.exp(x) * y, 1) * 2.0 - y, rtol=1e-5, atol=1e-5)


def test_scan_of_scan_in_one_kernel(run_fusion) -> None:
    x = randn(5, 8)
    with FusionDefinition() as fd:
        c = fd.ops.cumsum(fd.from_pytorch(x), 0)
        v, i = fd.ops.cummax(c, 0, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    assert _segments(fd) == ["scan"]
    values, indices = run_fusion(fd, [x])
    ev, ei = _cpu(torch.cummax, torch.cumsum(x, 0), 0)
    check(values, ev, rtol=1e-5, atol=1e-5)
    check(indices, ei)


def test_scans_along_two_dims_are_two_kernels(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        c = fd.ops.cumsum(fd.from_pytorch(x), 0)
        fd.add_output(fd.ops.cumsum(fd.ops.neg(c), 1))
    assert _segments(fd) == ["scan", "scan"]
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumsum(-torch.cumsum(x, 0), 1), rtol=1e-5, atol=1e-5)


def test_reduction_of_scan(run_fusion) -> None:
    x = randn(3, 7)
    with FusionDefinition() as fd:
        c = fd.ops.cumsum(fd.from_pytorch(x), 1)
        fd.add_output(fd.ops.sum(c, [1]))
        fd.add_output(c)
    total, c = run_fusion(fd, [x])
    check(c, torch.cumsum(x, 1), rtol=1e-5, atol=1e-5)
    check(total, torch.cumsum(x, 1).sum(1), rtol=1e-5, atol=1e-5)


def test_scan_of_transposed_input(run_fusion) -> None:
    x = randn(6, 4)
    with FusionDefinition() as fd:
        t = fd.ops.permute(fd.from_pytorch(x), [1, 0])
        fd.add_output(fd.ops.cumprod(fd.ops.add(t, 1.0), 1))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumprod(x.t() + 1.0, 1), rtol=1e-5, atol=1e-5)


def test_long_row_is_looped(run_fusion) -> None:
    x = randint(-4, 5, 2, 2500, dtype=torch.int32)  # > SCAN_CHUNK: three chunks a row
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.cumsum(t, 1))
        v, i = fd.ops.cummax(t, 1, return_indices=True)
        fd.add_output(v)
        fd.add_output(i)
    c, values, indices = run_fusion(fd, [x])
    check(c, torch.cumsum(x, 1))
    ev, ei = _cpu(torch.cummax, x, 1)
    check(values, ev)
    check(indices, ei)


def test_scan_of_empty_rows(run_fusion) -> None:
    x = randn(3, 0)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.cumsum(fd.from_pytorch(x), 1))
    (out,) = run_fusion(fd, [x])
    check(out, torch.cumsum(x, 1))


# --------------------------------------------------------------------------- #
# argsort                                                                     #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_2d(run_fusion, dim: int, descending: bool) -> None:
    x = randn(6, 9)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.argsort(fd.from_pytorch(x), dim, descending, True))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x, dim, descending)[1])


def test_argsort_3d_middle_dim(run_fusion) -> None:
    x = randn(2, 5, 3)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.argsort(fd.from_pytorch(x), 1))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x, 1, False)[1])


@pytest.mark.parametrize("descending", [False, True])
def test_argsort_ties_are_stable(run_fusion, descending: bool) -> None:
    x = randint(0, 3, 4, 11, dtype=torch.int32)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.argsort(fd.from_pytorch(x), 1, descending, False))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x, 1, descending)[1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_nan_inf_and_signed_zero(run_fusion, dtype: torch.dtype, descending: bool) -> None:
    x = torch.tensor([[1.0, float("nan"), -0.0, float("-inf"), 0.0, float("inf"), float("nan"), -2.0]],
                     dtype=dtype, device=DEVICE)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.argsort(fd.from_pytorch(x), -1, descending))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x, 1, descending)[1])


def test_argsort_bf16(run_fusion) -> None:
    x = randn(3, 16, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.argsort(fd.from_pytorch(x), 1))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x, 1, False)[1])


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool])
def test_argsort_int64_and_bool(run_fusion, dtype: torch.dtype) -> None:
    x = randint(-(2**40), 2**40, 3, 10).to(dtype)
    x[0, :4] = x[0, 5]  # ties
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.argsort(fd.from_pytorch(x), 1, True))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x, 1, True)[1])


def test_argsort_after_pointwise(run_fusion) -> None:
    x = randn(4, 6)
    with FusionDefinition() as fd:
        s = fd.ops.argsort(fd.ops.abs(fd.from_pytorch(x)), 1)
        fd.add_output(fd.ops.mul(s, 2))
    (out,) = run_fusion(fd, [x])
    check(out, _stable_sort(x.abs(), 1, False)[1] * 2)


# --------------------------------------------------------------------------- #
# topk                                                                        #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("k", [0, 1, 3, 8])
def test_topk_k(run_fusion, k: int) -> None:
    x = randn(4, 8)
    with FusionDefinition() as fd:
        v, i = fd.ops.topk(fd.from_pytorch(x), k, 1)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, _ = torch.topk(x, k, 1)
    check(values, ev)
    check(torch.gather(x, 1, indices), ev)


@pytest.mark.parametrize("dim", [0, -1])
def test_topk_smallest(run_fusion, dim: int) -> None:
    x = randn(7, 5)
    with FusionDefinition() as fd:
        v, i = fd.ops.topk(fd.from_pytorch(x), 3, dim, False, True)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, _ = torch.topk(x, 3, dim, largest=False)
    check(values, ev)
    check(torch.gather(x, dim, indices), ev)


def test_topk_ties_take_earlier_index(run_fusion) -> None:
    x = randint(0, 3, 5, 9, dtype=torch.int32)
    with FusionDefinition() as fd:
        v, i = fd.ops.topk(fd.from_pytorch(x), 4, 1)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    check(values, torch.topk(x, 4, 1).values)
    check(indices, _stable_sort(x, 1, True)[1][:, :4])


def test_topk_nan_is_largest(run_fusion) -> None:
    x = randn(2, 6)
    x[0, 3] = float("nan")
    with FusionDefinition() as fd:
        v, i = fd.ops.topk(fd.from_pytorch(x), 2, 1)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev, ei = torch.topk(x, 2, 1)
    check(values, ev)
    check(indices, ei)


@pytest.mark.parametrize("dtype", [torch.int64, torch.bfloat16])
def test_topk_int64_and_bf16(run_fusion, dtype: torch.dtype) -> None:
    x = randn(3, 12).mul(100).to(dtype)
    with FusionDefinition() as fd:
        v, i = fd.ops.topk(fd.from_pytorch(x), 5, 1)
        fd.add_output(v)
        fd.add_output(i)
    values, indices = run_fusion(fd, [x])
    ev = torch.topk(x.cpu(), 5, 1).values.to(DEVICE)
    check(values, ev)
    check(torch.gather(x, 1, indices), ev)


def test_topk_scalar_k_and_pointwise_after(run_fusion) -> None:
    x = randn(3, 7)
    with FusionDefinition() as fd:
        v, _ = fd.ops.topk(fd.from_pytorch(x), fd.define_scalar(2, dtype=DataType.Int), 1)
        fd.add_output(fd.ops.exp(v))
    (out,) = run_fusion(fd, [x])
    check(out, torch.exp(torch.topk(x, 2, 1).values))


# --------------------------------------------------------------------------- #
# Errors                                                                      #
# --------------------------------------------------------------------------- #


def test_dim_out_of_range_is_an_argument_error() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1])
        with pytest.raises(ArgumentError, match=r"cumsum: argument 'dim' entry 2 is out of range"):
            fd.ops.cumsum(t, 2)
        with pytest.raises(ArgumentError, match=r"cummax: argument 'arg' must be a Tensor"):
            fd.ops.cummax(1.0, 0)


def test_topk_k_errors() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([3, 5])
        with pytest.raises(ArgumentError, match=r"topk: k = 6 is larger than dimension 1 \(5\)"):
            fd.ops.topk(t, 6, 1)
        with pytest.raises(ArgumentError, match=r"topk: argument 'k' must be non-negative"):
            fd.ops.topk(t, -1, 1)
        with pytest.raises(ArgumentError, match=r"topk: argument 'k' must be an int"):
            fd.ops.topk(t, 1.5, 1)


def test_scan_of_a_0d_tensor_is_refused() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([])
        with pytest.raises(ArgumentError, match=r"argsort: argument 'arg' must have rank >= 1"):
            fd.ops.argsort(t, 0)


def test_sort_of_a_static_row_too_long_is_refused() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([2, 5000], dtype=DataType.Int)
        with pytest.raises(ArgumentError, match=r"argsort sorts rows of at most 4096 i64 elements"):
            fd.ops.argsort(t, 1)


def test_run_time_checks_of_sorts() -> None:
    with FusionDefinition() as fd:
        v, _ = fd.ops.topk(fd.define_tensor([-1, -1], dtype=DataType.Int), 3, 1)
        fd.add_output(v)
    with pytest.raises(Error, match=r"fusion.topk: k = 3 exceeds dimension 1"):
        fd.execute([randint(0, 9, 2, 2)])
    with pytest.raises(Error, match=r"fusion.topk: dimension 1 of .* is longer than the 4096 elements"):
        fd.execute([randint(0, 9, 1, 4100)])
