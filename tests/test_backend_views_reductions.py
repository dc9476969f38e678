"""Views inside kernels and reductions over any axis, against the reference evaluator.

- Views of computed values (slice, pad, cat, permute, unit reshape) are index
  arithmetic in the kernel that reads them: a rotary embedding is one kernel
  and allocates nothing but its output.
- Outer (column), middle-axis and full reductions of floats are split across
  CTAs (`analysis.split_reduction`): a partials buffer [split, kept] that
  fusion-allocate declares, a first kernel per (kept tile, split), a second
  that combines the partials in order. Extents are odd, static and `?`, large
  enough that the split has more than one part.

Each fusion is checked by `backend_check.check` (compiled through Triton's
interpreter on CPU tensors, against `allotment.reference.evaluate`) and, where
it says so, through the FusionDefinition frontend.
"""

from __future__ import annotations

import re
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, launches  # noqa: E402

import allotment  # noqa: E402
from allotment import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
FD_TYPES = {"f32": DataType.Float, "f16": DataType.Half, "bf16": DataType.BFloat16}


def randn(*shape: int, dtype: str = "f32", seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DTYPES[dtype])


def kernels(text: str) -> int:
    """How many generated kernels (launchers) the compiled program has."""
    return len(re.findall(r"^def launch_", allotment.compile(text).source("cpu"), re.M))


def allocations(text: str) -> list[str]:
    """The names of the global buffers the planned IR declares (in its order)."""
    from allotment.ir import parse_module  # noqa: PLC0415
    from allotment.passes.pipeline import compile_passes, run_pipeline  # noqa: PLC0415

    printed = str(run_pipeline(parse_module(text), compile_passes("cpu")))
    return re.findall(r'alloc\.alloc\([^)]*\) \{memory = #alloc\.memory<global>, name = "(\w+)"', printed)


# --------------------------------------------------------------------------- #
# Rotary embedding: one kernel                                                #
# --------------------------------------------------------------------------- #


def rotary(ty: str, head: str = "10", half: str = "5") -> str:
    """Rotary embedding of x [B, S, H, D] (x1, x2 the halves of D: x*cos + cat(-x2, x1)*sin),
    computed in f32 from a cast of x."""
    x = f"tensor<?x?x3x{head}x{ty}>"
    xf = f"tensor<?x?x3x{head}xf32>"
    h = f"tensor<?x?x3x{half}xf32>"
    end = "%d" if head == "?" else head
    mid = "%h" if head == "?" else half
    return f"""func.func @rotary(%x: {x}, %cos: tensor<?x{head}xf32>, %sin: tensor<?x{head}xf32>) -> {x} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %x, %c0 : {x}
  %s = tensor.dim %x, %c1 : {x}
  %d = tensor.dim %x, %c3 : {x}
  %h = arith.divui %d, %c2 : index
  %xf = fusion.cast %x : {x} to {xf}
  %x1 = fusion.slice %xf [0, 0, 0, 0] to [%b, %s, 3, {mid}] step [1, 1, 1, 1] : {xf} -> {h}
  %x2 = fusion.slice %xf [0, 0, 0, {mid}] to [%b, %s, 3, {end}] step [1, 1, 1, 1] : {xf} -> {h}
  %n = fusion.neg %x2 : {h}
  %rot = fusion.cat %n, %x1 dim 3 : {h}, {h} -> {xf}
  %cb = fusion.broadcast_in_dim %cos [%b, %s, 3, {end}] dims [1, 3] : tensor<?x{head}xf32> -> {xf}
  %sb = fusion.broadcast_in_dim %sin [%b, %s, 3, {end}] dims [1, 3] : tensor<?x{head}xf32> -> {xf}
  %a = fusion.mul %xf, %cb : {xf}
  %r = fusion.mul %rot, %sb : {xf}
  %yf = fusion.add %a, %r : {xf}
  %y = fusion.cast %yf : {xf} to {x}
  func.return %y : {x}
}}
"""


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("head", ["static", "dynamic"])
def test_rotary_is_one_kernel(ty: str, head: str) -> None:
    text = rotary(ty) if head == "static" else rotary(ty, "?", "?")
    assert kernels(text) == 1
    assert allocations(text) == ["y"]  # no buffer for the slices, the neg or the cat
    check(text, randn(2, 3, 3, 10, dtype=ty), randn(3, 10, seed=1), randn(3, 10, seed=2))
    if head == "dynamic":
        check(text, randn(1, 5, 3, 6, dtype=ty), randn(5, 6, seed=1), randn(5, 6, seed=2))
        check(text, randn(1, 2, 3, 7, dtype=ty), randn(2, 7, seed=1), randn(2, 7, seed=2))  # odd: halves 3 and 4


@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_rotary_through_the_frontend(ty: str) -> None:
    b, s, h, d = 2, 3, 2, 6
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1, -1, -1], dtype=FD_TYPES[ty])
        cos = fd.define_tensor([-1, -1], dtype=DataType.Float)
        sin = fd.define_tensor([-1, -1], dtype=DataType.Float)
        tf = fd.ops.cast(t, DataType.Float)
        x1 = fd.ops.slice(tf, [0, 0, 0, 0], [b, s, h, d // 2])
        x2 = fd.ops.slice(tf, [0, 0, 0, d // 2], [b, s, h, d])
        rot = fd.ops.cat([fd.ops.neg(x2), x1], dim=-1)
        cb = fd.ops.broadcast_in_dim(cos, [b, s, h, d], [1, 3])
        sb = fd.ops.broadcast_in_dim(sin, [b, s, h, d], [1, 3])
        y = fd.ops.add(fd.ops.mul(tf, cb), fd.ops.mul(rot, sb))
        fd.add_output(fd.ops.cast(y, FD_TYPES[ty]))
    x, c, sn = randn(b, s, h, d, dtype=ty), randn(s, d, seed=1), randn(s, d, seed=2)
    (out,) = fd.execute([x, c, sn])
    xf = x.float()
    ref = xf * c[None, :, None] + torch.cat([-xf[..., d // 2:], xf[..., : d // 2]], -1) * sn[None, :, None]
    torch.testing.assert_close(out, ref.to(DTYPES[ty]), rtol=1.6e-2, atol=1e-2)
    assert kernels(fd.ir()) == 1


# --------------------------------------------------------------------------- #
# Other views of computed values                                              #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_pad_and_cat_of_computed_values(ty: str) -> None:
    t = f"tensor<?x5x{ty}>"
    text = f"""func.func @f(%x: {t}, %y: {t}, %v: f32) -> tensor<?x9x{ty}> {{
  %e = fusion.exp %x : {t}
  %n = fusion.neg %y : {t}
  %p = fusion.pad %e low [0, 2] high [0, 2] value %v : {t}, f32 -> tensor<?x9x{ty}>
  %c = fusion.cat %n, %e dim 0 : {t}, {t} -> {t}
  %s = fusion.slice %c [1, 0] to [100, 5] step [2, 1] : {t} -> {t}
  %q = fusion.pad %s low [0, 1] high [0, 3] value %v : {t}, f32 -> tensor<?x9x{ty}>
  %z = fusion.add %p, %q : tensor<?x9x{ty}>
  func.return %z : tensor<?x9x{ty}>
}}
"""
    x, y = randn(5, 5, dtype=ty), randn(5, 5, dtype=ty, seed=1)
    check(text, x, y, 0.5)
    assert kernels(text) == 1


def test_steps_permutes_and_unit_reshapes_of_computed_values() -> None:
    text = """func.func @f(%x: tensor<?x7xf32>, %y: tensor<4x?xf32>) -> tensor<4x?x1xf32> {
  %e = fusion.exp %x : tensor<?x7xf32>
  %s = fusion.slice %e [1, 6] to [100, 0] step [1, 1] : tensor<?x7xf32> -> tensor<?x0xf32>
  %t = fusion.slice %e [0, 0] to [100, 7] step [1, 2] : tensor<?x7xf32> -> tensor<?x4xf32>
  %p = fusion.permute %t [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  %a = fusion.add %p, %y : tensor<4x?xf32>
  %r = fusion.reshape %a [4, -1, 1] : tensor<4x?xf32> -> tensor<4x?x1xf32>
  %z = fusion.sigmoid %r : tensor<4x?x1xf32>
  func.return %z : tensor<4x?x1xf32>
}
"""
    check(text, randn(5, 7), randn(4, 5, seed=1))
    assert kernels(text) == 1


def test_a_merging_reshape_of_a_computed_value_is_materialized() -> None:
    text = """func.func @f(%x: tensor<?x3x4xf16>) -> tensor<?x12xf16> {
  %e = fusion.exp %x : tensor<?x3x4xf16>
  %r = fusion.reshape %e [-1, 12] : tensor<?x3x4xf16> -> tensor<?x12xf16>
  %z = fusion.neg %r : tensor<?x12xf16>
  func.return %z : tensor<?x12xf16>
}
"""
    check(text, randn(3, 3, 4, dtype="f16"))
    assert kernels(text) == 2


def test_reduction_of_a_cat_of_computed_slices() -> None:
    """The reduced extent of the cat is computed by the launcher (no buffer has it)."""
    text = """func.func @f(%x: tensor<?x?xf32>, %k: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = fusion.exp %x : tensor<?x?xf32>
  %a = fusion.slice %e [0, %k] to [%n, 100] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %b = fusion.slice %e [0, 0] to [%n, %k] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %c = fusion.cat %a, %b, %a dim 1 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %s = fusion.sum %c dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}
"""
    for k in (2, 0, 9, -3):
        check(text, randn(4, 7), k)


@pytest.mark.parametrize("start", [0, 3, 5, 7])
def test_one_row_of_a_cat_read_at_a_constant_index(start: int) -> None:
    """A slice of extent 1 along a cat's dim reads the cat at a constant index (the
    kernel's domain has extent 1 there): the piece is picked by a condition on constants,
    in either piece, with `?` extents (found by the random fusions, seed 1405434)."""
    text = f"""func.func @f(%x: tensor<4x?xf32>, %y: tensor<4x?xf32>) -> tensor<1x?xf16> {{
  %e = fusion.exp %y : tensor<4x?xf32>
  %c = fusion.cat %x, %e dim 0 : tensor<4x?xf32>, tensor<4x?xf32> -> tensor<8x?xf32>
  %d = fusion.cat %c, %c dim 1 : tensor<8x?xf32>, tensor<8x?xf32> -> tensor<8x?xf32>
  %s = fusion.slice %d [{start}, 0] to [{start + 1}, 11] step [1, 1] : tensor<8x?xf32> -> tensor<1x?xf32>
  %h = fusion.cast %s : tensor<1x?xf32> to tensor<1x?xf16>
  func.return %h : tensor<1x?xf16>
}}
"""
    check(text, randn(4, 3), randn(4, 3, seed=1))


# --------------------------------------------------------------------------- #
# Reductions over any axis, split across CTAs                                 #
# --------------------------------------------------------------------------- #


def column_sum(ty: str, rows: str = "?", cols: str = "?", name: str = "sum") -> str:
    x = f"tensor<{rows}x{cols}x{ty}>"
    return f"""func.func @f(%x: {x}) -> tensor<{cols}x{ty}> {{
  %s = fusion.{name} %x dims [0] : {x} -> tensor<{cols}x{ty}>
  func.return %s : tensor<{cols}x{ty}>
}}
"""


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("extents", [("?", "?"), ("613", "5")])
def test_column_sum_is_split(ty: str, extents: tuple[str, str]) -> None:
    text = column_sum(ty, *extents)
    assert kernels(text) == 1
    assert sorted(allocations(text)) == ["k0_partials_s", "s"]
    x = randn(613, 5, dtype=ty)
    assert launches(text, x, strip=False) == ["k0_split_partial_", "k0_split_final_"]
    check(text, x)
    if extents[0] == "?":
        for shape in ((3, 5), (257, 1), (1, 1), (0, 3), (4, 0)):
            check(text, randn(*shape, dtype=ty))
        # one split: one kernel, unrolled over a short axis (`host_runtime.unrolled_outer_blocks`)
        assert launches(text, randn(3, 5, dtype=ty), strip=False) == ["k0_unrolled_"]
        assert launches(text, randn(20, 5, dtype=ty), strip=False) == ["k0_looped_"]


@pytest.mark.parametrize("name", ["mean", "max", "min", "prod"])
def test_column_reductions(name: str) -> None:
    text = column_sum("bf16", name=name)
    x = randn(531, 3, dtype="bf16")
    if name == "prod":
        x = (1 + 0.001 * x.float()).bfloat16()
    x[17, 1] = float("nan") if name in ("max", "min") else x[17, 1]
    check(text, x)


def test_bias_gradient_with_an_epilogue() -> None:
    """sum over rows, then scaled and cast: the epilogue runs in the second stage."""
    text = """func.func @f(%g: tensor<?x?xbf16>, %w: tensor<?xf32>) -> (tensor<?xbf16>, tensor<?xf32>) {
  %gf = fusion.cast %g : tensor<?x?xbf16> to tensor<?x?xf32>
  %sq = fusion.mul %gf, %gf : tensor<?x?xf32>
  %s = fusion.sum %gf dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %q = fusion.sum %sq dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %sw = fusion.mul %s, %w : tensor<?xf32>
  %b = fusion.cast %sw : tensor<?xf32> to tensor<?xbf16>
  func.return %b, %q : tensor<?xbf16>, tensor<?xf32>
}
"""
    assert kernels(text) == 1
    check(text, randn(700, 9, dtype="bf16"), randn(9, seed=1))


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("shape", ["?x?x?", "3x600x5"])
def test_middle_axis_mean(ty: str, shape: str) -> None:
    kept = "?x?" if shape.startswith("?") else "3x5"
    text = f"""func.func @f(%x: tensor<{shape}x{ty}>) -> (tensor<{kept}x{ty}>, tensor<{kept.replace('x', 'x1x')}x{ty}>) {{
  %m = fusion.mean %x dims [1] : tensor<{shape}x{ty}> -> tensor<{kept}x{ty}>
  %k = fusion.max %x dims [1] keepdim : tensor<{shape}x{ty}> -> tensor<{kept.replace('x', 'x1x')}x{ty}>
  func.return %m, %k : tensor<{kept}x{ty}>, tensor<{kept.replace('x', 'x1x')}x{ty}>
}}
"""
    x = randn(3, 600, 5, dtype=ty)
    assert launches(text, x, strip=False) == ["k0_split_partial_", "k0_split_final_"]
    check(text, x)
    if shape.startswith("?"):
        check(text, randn(2, 7, 3, dtype=ty))


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
def test_full_sum_to_a_scalar(ty: str) -> None:
    text = f"""func.func @f(%x: tensor<?x?x{ty}>) -> (tensor<{ty}>, tensor<f32>) {{
  %s = fusion.sum %x dims [0, 1] : tensor<?x?x{ty}> -> tensor<{ty}>
  %xf = fusion.cast %x : tensor<?x?x{ty}> to tensor<?x?xf32>
  %m = fusion.mean %xf dims [0, 1] : tensor<?x?xf32> -> tensor<f32>
  func.return %s, %m : tensor<{ty}>, tensor<f32>
}}
"""
    x = randn(33, 41, dtype=ty)
    assert launches(text, x, strip=False) == ["k0_split_partial_", "k0_split_final_"]
    check(text, x)
    check(text, randn(1, 3, dtype=ty))


def test_short_inner_and_column_var_mean_reductions_are_not_split() -> None:
    """A row reduction is an inner split (`tests/test_inner_split.py`) only where rows can be
    long: not with a static reduced extent under 8192; with a dynamic one its count is 1 for
    short rows and the row kernel runs alone. A column var_mean is not split."""
    inner = """func.func @f(%x: tensor<?x700xf32>) -> tensor<?xf32> {
  %s = fusion.sum %x dims [1] : tensor<?x700xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}
"""
    assert "partials" not in " ".join(allocations(inner))
    dynamic = column_sum("f32").replace("dims [0]", "dims [1]")
    assert "k0_partials_s" in allocations(dynamic)
    # the row kernel alone, its rows of 700 in 512 + 256 lanes (`host_runtime.row_tiles`)
    assert launches(dynamic, randn(3, 700), strip=False) == ["k0_two_tiles_"]
    text = """func.func @f(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %v, %m = fusion.var_mean %x dims [0] correction 1 : tensor<?x?xf32> -> tensor<?xf32>, tensor<?xf32>
  func.return %v, %m : tensor<?xf32>, tensor<?xf32>
}
"""
    assert sorted(allocations(text)) == ["m", "v"]
    check(text, randn(300, 3))


@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_column_and_full_reductions_through_the_frontend(ty: str) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=FD_TYPES[ty])
        fd.add_output(fd.ops.sum(t, [0]))
        fd.add_output(fd.ops.mean(fd.ops.cast(t, DataType.Float), [0, 1]))
    x = randn(517, 6, dtype=ty)
    col, full = fd.execute([x])
    tol = {"rtol": 1.6e-2, "atol": 1e-1} if ty == "bf16" else {}
    torch.testing.assert_close(col, x.float().sum(0).to(x.dtype), **tol)
    torch.testing.assert_close(full, x.float().mean(), **tol)


# --------------------------------------------------------------------------- #
# RMSNorm backward: row and column reductions in two kernels                  #
# --------------------------------------------------------------------------- #


def rmsnorm_backward(ty: str, hidden: str) -> str:
    t, f, w = f"tensor<?x{hidden}x{ty}>", f"tensor<?x{hidden}xf32>", f"tensor<{hidden}x{ty}>"
    wf = f"tensor<{hidden}xf32>"
    n = "%n" if hidden == "?" else hidden
    return f"""func.func @rmsnorm_backward(%dy: {t}, %x: {t}, %w: {w}, %rstd: tensor<?x1xf32>) -> ({t}, {w}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : {t}
  %n = tensor.dim %x, %c1 : {t}
  %dyf = fusion.cast %dy : {t} to {f}
  %xf = fusion.cast %x : {t} to {f}
  %wf = fusion.cast %w : {w} to {wf}
  %wb = fusion.broadcast_in_dim %wf [%m, {n}] dims [1] : {wf} -> {f}
  %g = fusion.mul %dyf, %wb : {f}
  %gx = fusion.mul %g, %xf : {f}
  %s = fusion.mean %gx dims [1] keepdim : {f} -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : {f}, tensor<?x1xf32> -> {f}
  %d = fusion.sub %g, %xk : {f}
  %dxf = fusion.mul %d, %rstd : {f}, tensor<?x1xf32> -> {f}
  %dx = fusion.cast %dxf : {f} to {t}
  %xn = fusion.mul %xf, %rstd : {f}, tensor<?x1xf32> -> {f}
  %dwp = fusion.mul %dyf, %xn : {f}
  %dwf = fusion.sum %dwp dims [0] : {f} -> {wf}
  %dw = fusion.cast %dwf : {wf} to {w}
  func.return %dx, %dw : {t}, {w}
}}
"""


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("hidden", ["?", "7"])
def test_rmsnorm_backward_is_one_inner_outer_kernel(ty: str, hidden: str) -> None:
    text = rmsnorm_backward(ty, hidden)
    # dx (row reductions) and dw's partials in one kernel (`analysis/inner_outer.py`), one read of
    # dy and x; the partials' sum and dw's cast in a second Triton function of the same launcher
    assert kernels(text) == 1
    assert sorted(allocations(text)) == ["dw", "dx", "k0_partials_dwf"]  # no f32 intermediate
    for rows in (600, 5):
        x, dy, w = randn(rows, 7, dtype=ty), randn(rows, 7, dtype=ty, seed=1), randn(7, dtype=ty, seed=2)
        rstd = torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-5)
        check(text, dy, x, w, rstd)
