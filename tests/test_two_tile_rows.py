"""Persistent rows held as two tiles (`host_runtime.row_tiles`, `row_reduction.RowEmitter.
emit_two_tiles`): rows of 1111 (1024 + 128 lanes), 600 (512 + 128) and 2 x 555 inner dims
(1024 + 128), checked against the reference evaluator for every reduction a persistent row
computes (each tile's partial combined: a sum, a product, a max with a NaN or an infinity in
the second tile, a min, a mean, a var_mean whose second pass takes the mean of both tiles),
with outputs along the row and per row (stored once). Each program is checked to hold its
row as two tiles, so that a change of the rule cannot leave these tests checking one tile."""

from __future__ import annotations

import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_runtime  # noqa: E402


def _norm(n: int) -> str:
    """x + b, its var_mean over the row, the normalized row times w, and the row's mean and
    var (per-row outputs) and its max of |x| (a max of a full-row value)."""
    t, r, k = f"tensor<3x{n}xf32>", "tensor<3xf32>", "tensor<3x1xf32>"
    return f"""func.func @f(%x: {t}, %b: tensor<{n}xf32>, %w: tensor<{n}xf32>) -> ({t}, {r}, {r}, {r}) {{
  %bb = fusion.broadcast_in_dim %b [3, {n}] dims [1] : tensor<{n}xf32> -> {t}
  %h = fusion.add %x, %bb : {t}, {t} -> {t}
  %v, %m = fusion.var_mean %h dims [1] correction 1 : {t} -> {r}, {r}
  %vk = fusion.broadcast_in_dim %v [3, 1] dims [0] : {r} -> {k}
  %mk = fusion.broadcast_in_dim %m [3, 1] dims [0] : {r} -> {k}
  %eps = arith.constant 1.0e-05 : f32
  %ve = fusion.add %vk, %eps : {k}, f32 -> {k}
  %rs = fusion.rsqrt %ve : {k}
  %d = fusion.sub %h, %mk : {t}, {k} -> {t}
  %y0 = fusion.mul %d, %rs : {t}, {k} -> {t}
  %wb = fusion.broadcast_in_dim %w [3, {n}] dims [1] : tensor<{n}xf32> -> {t}
  %y = fusion.mul %y0, %wb : {t}, {t} -> {t}
  %a = fusion.abs %h : {t}
  %mx = fusion.max %a dims [1] : {t} -> {r}
  func.return %y, %m, %v, %mx : {t}, {r}, {r}, {r}
}}
"""


def _reduce(op: str, shape: tuple[int, ...], dims: list[int]) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    kept = f"tensor<{'x'.join(str(e) for d, e in enumerate(shape) if d not in dims)}xf32>"
    return f"""func.func @f(%x: {t}) -> {kept} {{
  %s = fusion.{op} %x dims {dims} : {t} -> {kept}
  func.return %s : {kept}
}}
"""


def _assert_two_tiles(text: str, main: int, tail: int) -> None:
    src = allotment.compile(text).source("cpu")
    assert f"BLOCK_T: tl.constexpr = {tail}" in src and f"rt.persistent_blocks(M, N, {main})" in src, src


@pytest.mark.parametrize("n", [600, 1111])
def test_a_normalization_held_as_two_tiles(n: int) -> None:
    main, tail = host_runtime.row_tiles(n)
    assert tail
    text = _norm(n)
    _assert_two_tiles(text, main, tail)
    g = torch.Generator().manual_seed(n)
    x = torch.randn(3, n, generator=g) * 3 + 100  # a large offset: the second pass needs both tiles' mean
    check(text, x, torch.randn(n, generator=g), torch.randn(n, generator=g))


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("shape,dims", [((3, 1111), [1]), ((3, 2, 555), [1, 2])])
def test_a_reduction_held_as_two_tiles(op: str, shape: tuple[int, ...], dims: list[int]) -> None:
    text = _reduce(op, shape, dims)
    _assert_two_tiles(text, 1024, 128)
    g = torch.Generator().manual_seed(len(shape))
    x = 1 + torch.randn(*shape, generator=g) * 1e-3 if op == "prod" else torch.randn(*shape, generator=g)
    check(text, x)


@pytest.mark.parametrize("special", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_special_value_in_the_second_tile_reaches_the_row(op: str, special: float) -> None:
    text = _reduce(op, (3, 1111), [1])
    x = torch.randn(3, 1111, generator=torch.Generator().manual_seed(1))
    x[1, 1100] = special  # column 1100: the second tile's
    x[2, 5] = special  # column 5: the first tile's
    out = allotment.compile(text)(x)[0]
    want = getattr(torch, f"a{op}")(x, dim=1)
    torch.testing.assert_close(out, want, equal_nan=True)
    check(text, x)


# -- rows of `?` length: the `two_tiles` variant, chosen at run time -------------------------


def _launched(text: str, *inputs: torch.Tensor) -> list[tuple[str, dict]]:
    """(function, constexprs) of each launch of one run (intercepted: nothing runs)."""
    from allotment.backend import launch

    seen: list[tuple[str, dict]] = []
    with launch.intercepted(lambda kernel, grid, args, constexprs, warps: seen.append((kernel.fn.__name__, constexprs))):
        allotment.compile(text)(*inputs)
    return seen


def _assert_row_kernel(text: str, n: int, *inputs: torch.Tensor) -> None:
    """The run launches the `two_tiles` function with BLOCK_N = main and BLOCK_T = tail where
    `row_tiles(n)` splits the row, else the one-tile persistent function (BLOCK_T 0)."""
    main, tail = host_runtime.row_tiles(n)
    [(name, cx)] = _launched(text, *inputs)
    if tail:
        assert (name, cx["BLOCK_N"], cx["BLOCK_T"]) == ("k0_two_tiles_", main, tail), (name, cx)
    else:
        assert (name, cx["BLOCK_N"], cx["BLOCK_T"]) == ("k0_persistent_", main, 0), (name, cx)


def _dynamic_norm() -> str:
    """`_norm` over rows of `?` length."""
    t, r, k = "tensor<3x?xf32>", "tensor<3xf32>", "tensor<3x1xf32>"
    return f"""func.func @f(%x: {t}, %b: tensor<?xf32>, %w: tensor<?xf32>) -> ({t}, {r}, {r}, {r}) {{
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : {t}
  %bb = fusion.broadcast_in_dim %b [3, %n] dims [1] : tensor<?xf32> -> {t}
  %h = fusion.add %x, %bb : {t}, {t} -> {t}
  %v, %m = fusion.var_mean %h dims [1] correction 1 : {t} -> {r}, {r}
  %vk = fusion.broadcast_in_dim %v [3, 1] dims [0] : {r} -> {k}
  %mk = fusion.broadcast_in_dim %m [3, 1] dims [0] : {r} -> {k}
  %eps = arith.constant 1.0e-05 : f32
  %ve = fusion.add %vk, %eps : {k}, f32 -> {k}
  %rs = fusion.rsqrt %ve : {k}
  %d = fusion.sub %h, %mk : {t}, {k} -> {t}
  %y0 = fusion.mul %d, %rs : {t}, {k} -> {t}
  %wb = fusion.broadcast_in_dim %w [3, %n] dims [1] : tensor<?xf32> -> {t}
  %y = fusion.mul %y0, %wb : {t}, {t} -> {t}
  %a = fusion.abs %h : {t}
  %mx = fusion.max %a dims [1] : {t} -> {r}
  func.return %y, %m, %v, %mx : {t}, {r}, {r}, {r}
}}
"""


def test_a_dynamic_row_has_both_functions_and_takes_block_t() -> None:
    src = allotment.compile(_dynamic_norm()).source("cpu")
    assert "def k0_two_tiles_(" in src and "def k0_persistent_(" in src, src
    assert "BLOCK_T: tl.constexpr, ALIGN: tl.constexpr)" in src and "BLOCK_T: tl.constexpr =" not in src
    assert "main, tail = rt.row_tiles(N)" in src and "tail=tail, align=align, rows=M)" in src


@pytest.mark.parametrize("n", [600, 700, 1111, 1000, 1024, 300, 3000])
def test_a_dynamic_normalization_picks_its_tiles_at_run_time(n: int) -> None:
    """Rows of 600, 700, 1111 and 3000 split (512 + 128, 512 + 256, 1024 + 128, 2048 + 1024);
    1000, 1024 and 300 do not (one tile of 1024, 1024, 512); each against the reference."""
    text = _dynamic_norm()
    g = torch.Generator().manual_seed(n)
    x = torch.randn(3, n, generator=g) * 3 + 100  # a large offset: the second pass needs both tiles' mean
    b, w = torch.randn(n, generator=g), torch.randn(n, generator=g)
    _assert_row_kernel(text, n, x, b, w)
    check(text, x, b, w)


def test_one_dynamic_program_runs_split_and_whole_rows_in_turn() -> None:
    """One compiled program, calls at rows of 1111 (two tiles), 1000 (one) and 1111 again."""
    text = _dynamic_norm()
    for n in (1111, 1000, 1111, 40):
        g = torch.Generator().manual_seed(n)
        check(text, torch.randn(3, n, generator=g), torch.randn(n, generator=g), torch.randn(n, generator=g))


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("shape,dims", [((3, 1111), [1]), ((3, 2, 555), [1, 2]), ((2, 3, 600), [2])])
def test_a_dynamic_reduction_held_as_two_tiles(op: str, shape: tuple[int, ...], dims: list[int]) -> None:
    t = "tensor<" + "x".join("?" for _ in shape) + "xf32>"
    kept = "tensor<" + "x".join("?" for d in range(len(shape)) if d not in dims) + "xf32>"
    text = f"""func.func @f(%x: {t}) -> {kept} {{
  %s = fusion.{op} %x dims {dims} : {t} -> {kept}
  func.return %s : {kept}
}}
"""
    g = torch.Generator().manual_seed(len(shape))
    x = 1 + torch.randn(*shape, generator=g) * 1e-3 if op == "prod" else torch.randn(*shape, generator=g)
    n = 1
    for d in dims:
        n *= shape[d]
    _assert_row_kernel(text, n, x)
    check(text, x)


@pytest.mark.parametrize("special", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_special_value_in_a_dynamic_rows_second_tile_reaches_the_row(op: str, special: float) -> None:
    text = _reduce(op, (3, 1111), [1]).replace("tensor<3x1111xf32>", "tensor<3x?xf32>")
    x = torch.randn(3, 1111, generator=torch.Generator().manual_seed(1))
    x[1, 1100] = special
    x[2, 5] = special
    _assert_row_kernel(text, 1111, x)
    out = allotment.compile(text)(x)[0]
    torch.testing.assert_close(out, getattr(torch, f"a{op}")(x, dim=1), equal_nan=True)


def test_a_label_picked_from_either_tile_of_a_dynamic_row() -> None:
    """A one-hot sum (`analysis.one_hot`: the label's element read once) over rows of `?`
    length held as two tiles: labels in the first tile, the second, past N and negative."""
    text = """func.func @f(%x: tensor<?x?xf32>, %labels: tensor<?x1xi64>) -> tensor<?x1xf32> {
  %c0i = arith.constant 0 : index
  %c1i = arith.constant 1 : index
  %m = tensor.dim %x, %c0i : tensor<?x?xf32>
  %n = tensor.dim %x, %c1i : tensor<?x?xf32>
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %i = fusion.iota [%n] start %c0 step %c1 : i64, i64 -> tensor<?xi64>
  %cols = fusion.broadcast_in_dim %i [%m, %n] dims [1] : tensor<?xi64> -> tensor<?x?xi64>
  %hit = fusion.eq %cols, %labels : tensor<?x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %zero = arith.constant 0.0 : f32
  %v = fusion.mul %x, %x : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %w = fusion.where %hit, %v, %zero : tensor<?x?xi1>, tensor<?x?xf32>, f32 -> tensor<?x?xf32>
  %p = fusion.sum %w dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  func.return %p : tensor<?x1xf32>
}
"""
    x = torch.randn(5, 1111, generator=torch.Generator().manual_seed(2))
    labels = torch.tensor([[3], [1100], [1111], [-100], [1023]])
    _assert_row_kernel(text, 1111, x, labels)
    check(text, x, labels)
