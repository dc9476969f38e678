"""Inner splits (`analysis.split_reduction`): row reductions and reductions over non-adjacent
dims (BatchNorm statistics, var_mean over [0, 2] of [N, C, L]) with few kept rows, split
across CTAs along the reduced axis, against torch and the reference evaluator.

On a GPU a split needs chunks of at least 4096 reduced elements and fewer than 264 kept
rows; these tests lower those knobs (ALLOT_INNER_SPLIT_MIN_REDUCED, _MAX_KEPT, _ALIGN, part
of the program cache key) so that tiny shapes split on Triton's interpreter: chunks of 64
(or 1) reduced elements, some of them short or empty.
"""

from __future__ import annotations

import re
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, launches, planned  # noqa: E402

from allotment.analysis import split_reduction  # noqa: E402
from allotment.extents.symbolic import Const  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def randn(*shape: int, dtype: str = "f32", seed: int = 0) -> torch.Tensor:
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) + 2).to(DTYPES[dtype])


def partials(text: str) -> list[str]:
    """The planned partials buffers: `name shape` each."""
    return re.findall(r'name = "(\w+_partials_\w+)"\} : memref<([^>]*)>', planned(text))


@pytest.fixture
def small_splits(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Splits of at least 32 reduced elements, below 8 kept rows, chunks multiples of 64."""
    monkeypatch.setenv("ALLOT_INNER_SPLIT_MIN_REDUCED", "32")
    monkeypatch.setenv("ALLOT_INNER_SPLIT_MAX_KEPT", "8")
    monkeypatch.setenv("ALLOT_INNER_SPLIT_ALIGN", "64")
    return monkeypatch


SPLIT = ["k0_split_partial_", "k0_split_final_"]


def rows(name: str, ty: str, m: str, n: str) -> str:
    x, r = f"tensor<{m}x{n}x{ty}>", f"tensor<{m}x{ty}>"
    return f"""func.func @f(%x: {x}) -> {r} {{
  %s = fusion.{name} %x dims [1] : {x} -> {r}
  func.return %s : {r}
}}
"""


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("extents", [("3", "700"), ("?", "?")])
def test_row_reductions_of_few_long_rows(small_splits: pytest.MonkeyPatch, ty: str, name: str,
                                         extents: tuple[str, str]) -> None:
    text = rows(name, ty, *extents)
    x = randn(3, 700, dtype=ty)
    x[1, 650] = 40.0  # in the last, short chunk: max finds it
    x[2, 3] = -40.0  # in the first: min finds it
    # 700 // 32 = 21 splits: chunks of ceildiv(700, 21) = 34, rounded up to 64: 10 full ones,
    # one of 60 and ten empty
    assert launches(text, x, strip=False) == SPLIT
    (out,) = check(text, x)
    expected = getattr(torch, name)(x.float(), 1)
    expected = expected.values if name in ("max", "min") else expected
    tol = 2e-2 if ty == "bf16" else 1e-5
    torch.testing.assert_close(out.float(), expected.to(x.dtype).float(), rtol=tol, atol=tol)
    if extents[0] == "?":
        # 9 kept rows: one split, the row kernel; rows of 700 in 512 + 256 lanes (`row_tiles`)
        assert launches(text, randn(9, 700, dtype=ty), strip=False) == ["k0_two_tiles_"]
        assert launches(text, randn(3, 40, dtype=ty), strip=False) == ["k0_persistent_"]  # 40 < 2 * 32: one split
        for shape in ((9, 700), (3, 40), (1, 65), (2, 0), (0, 5)):
            if name in ("max", "min") and shape[1] == 0:
                continue
            check(text, randn(*shape, dtype=ty))


def var_mean(ty: str, shape: str, correction: int, keepdim: bool = False) -> str:
    dims = shape.split("x")
    kept = f"1x{dims[1]}x1" if keepdim else dims[1]
    x, xf, r = f"tensor<{shape}x{ty}>", f"tensor<{shape}xf32>", f"tensor<{kept}xf32>"
    return f"""func.func @f(%x: {x}) -> ({r}, {r}) {{
  %xf = fusion.cast %x : {x} to {xf}
  %v, %m = fusion.var_mean %xf dims [0, 2] correction {correction}{' keepdim' if keepdim else ''} : {xf} -> {r}, {r}
  func.return %v, %m : {r}, {r}
}}
"""


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("correction", [0, 1])
@pytest.mark.parametrize("align", ["1", "64"])
def test_var_mean_over_non_adjacent_dims(small_splits: pytest.MonkeyPatch, ty: str, correction: int,
                                         align: str) -> None:
    """var_mean over [0, 2] of [3, 4, 50]: 150 reduced elements a channel, 150 // 32 = 4
    splits: chunks of 38, 38, 38 and 36 (align 1), or of 64, 64, 22 and none (align 64)."""
    small_splits.setenv("ALLOT_INNER_SPLIT_ALIGN", align)
    text = var_mean(ty, "3x4x50", correction)
    x = randn(3, 4, 50, dtype=ty, seed=correction)
    x[:, 2] += 100.0  # a large mean: the M2 merge must not lose the variance
    assert launches(text, x, strip=False) == SPLIT
    var, mean = check(text, x, tol=1e-4)
    ev, em = torch.var_mean(x.float(), dim=(0, 2), correction=correction)
    torch.testing.assert_close(mean, em, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(var, ev, rtol=1e-4, atol=1e-4)


def test_var_mean_partials_are_sum_and_m2(small_splits: pytest.MonkeyPatch) -> None:
    """Two partials buffers [split, kept] per var_mean, named after its mean and its var."""
    assert partials(var_mean("bf16", "3x4x50", 1)) == [("k0_partials_m", "4x4xf32"), ("k0_partials_v", "4x4xf32")]


def test_batchnorm_statistics(small_splits: pytest.MonkeyPatch) -> None:
    """BatchNorm's saved statistics: mean and 1 / sqrt(var + eps), keepdim, dynamic extents;
    the epilogue runs in the second stage."""
    x, xf, r = "tensor<?x?x?xbf16>", "tensor<?x?x?xf32>", "tensor<1x?x1xf32>"
    text = f"""func.func @f(%x: {x}) -> ({r}, {r}) {{
  %eps = arith.constant 1.0e-05 : f32
  %xf = fusion.cast %x : {x} to {xf}
  %v, %m = fusion.var_mean %xf dims [0, 2] correction 0 keepdim : {xf} -> {r}, {r}
  %ve = fusion.add %v, %eps : {r}, f32 -> {r}
  %is = fusion.rsqrt %ve : {r}
  func.return %m, %is : {r}, {r}
}}
"""
    x = randn(5, 3, 37, dtype="bf16")
    assert launches(text, x, strip=False) == SPLIT
    mean, invstd = check(text, x)
    ev, em = torch.var_mean(x.float(), dim=(0, 2), correction=0, keepdim=True)
    torch.testing.assert_close(mean, em, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(invstd, torch.rsqrt(ev + 1e-5), rtol=1e-4, atol=1e-4)
    assert launches(text, randn(2, 9, 37, dtype="bf16"), strip=False) == ["k0_persistent_"]  # 9 channels: one split
    check(text, randn(2, 9, 37, dtype="bf16"))
    check(text, randn(1, 2, 1, dtype="bf16"))


def test_welford_rows(small_splits: pytest.MonkeyPatch) -> None:
    x, r = "tensor<2x300xf32>", "tensor<2xf32>"
    text = f"""func.func @f(%x: {x}) -> ({r}, {r}, tensor<2xi64>) {{
  %a, %q, %n = fusion.welford %x dims [1] : {x} -> {r}, {r}, tensor<2xi64>
  func.return %a, %q, %n : {r}, {r}, tensor<2xi64>
}}
"""
    x = randn(2, 300)
    assert partials(text) == [("k0_partials_a", "9x2xf32"), ("k0_partials_q", "9x2xf32")]
    assert launches(text, x, strip=False) == SPLIT
    avg, m2, n = check(text, x)
    torch.testing.assert_close(avg, x.mean(1))
    torch.testing.assert_close(m2, ((x - x.mean(1, keepdim=True)) ** 2).sum(1), rtol=1e-4, atol=1e-4)
    assert n.tolist() == [300, 300]


def test_split_count_is_one_with_many_rows() -> None:
    """The default knobs: splits only below 264 kept rows and from 8192 reduced elements."""
    count = split_reduction.inner_split_count
    assert count(Const(115069), Const(97)) == Const(11)  # BatchNorm statistics of 23x97x5003
    assert count(Const(70000), Const(3)) == Const(17)  # 4096 reduced elements a split at least
    assert count(Const(115069), Const(264)) == Const(1)
    assert count(Const(10**9), Const(100000)) == Const(1)
    assert count(Const(8191), Const(1)) == Const(1)
    assert count(Const(8192), Const(1)) == Const(2)


def test_static_extents_with_one_split_are_not_split() -> None:
    """With many rows (or short ones) the segment keeps the row kernel, and no partials."""
    assert partials(rows("sum", "bf16", "300", "70000")) == []
    assert partials(rows("sum", "bf16", "3", "8000")) == []
    assert "schedule(persistent)" in planned(rows("sum", "bf16", "3", "8000"))
    assert partials(rows("sum", "bf16", "3", "70000")) == [("k0_partials_s", "17x3xf32")]
    # a dynamic extent: the count is computed at entry; the row kernel keeps alloc-place's schedule
    # (a sum reads its row once when streamed: a row of 20000, longer than 8192, is streamed)
    ir = planned(rows("sum", "bf16", "?", "20000"))
    assert "k0_partials_s" in ir and "schedule(looped)" in ir
    ir = planned(rows("sum", "bf16", "?", "8000"))
    assert "schedule(persistent)" in ir


def test_bad_knob_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOT_INNER_SPLIT_ALIGN", "zero")
    with pytest.raises(ValueError, match="ALLOT_INNER_SPLIT_ALIGN"):
        split_reduction.inner_split_align()


def test_the_alignment_is_decided_when_the_kernel_is_built(small_splits: pytest.MonkeyPatch) -> None:
    """ALLOT_INNER_SPLIT_ALIGN reaches the IR (the kernel's `inner_split_align`, set by
    fusion-allocate) and the emitter reads it from there: code generated from that IR under
    another setting chunks as the IR says (the knob stays in the program key, which hashes
    the fusion's text before the pipeline decides)."""
    from xdsl.dialects import func

    from allotment.backend.host_codegen import emit_program
    from allotment.ir import parse_module

    small_splits.setenv("ALLOT_INNER_SPLIT_ALIGN", "8")
    ir = planned(rows("sum", "f32", "2", "?"))
    assert "inner_split_align = 8 : i64" in ir
    small_splits.setenv("ALLOT_INNER_SPLIT_ALIGN", "64")
    f = next(op for op in parse_module(ir).walk() if isinstance(op, func.FuncOp))
    source = emit_program(f, "cpu").source
    assert "+ 7) // 8 * 8" in source and "// 64 * 64" not in source
