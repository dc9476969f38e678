"""Inner-outer kernels (`analysis/inner_outer.py`, `backend/kernels/inner_outer.py`): a normalization's
row reductions and the column reductions of the same [rows, N] domain in one kernel.

RMSNorm backward (dx, dw) and LayerNorm backward (dx, dw, db) with `?` rows and static or
`?` hidden sizes, rows that are not a multiple of the row block, one row and zero rows,
bf16 and f32, are checked against the reference evaluator (`backend_check.check`: compiled
through Triton's interpreter on CPU tensors) and against torch. Where the row does not
fit on chip (`ALLOT_ON_CHIP_ROW_BYTES`), a static hidden size keeps two kernels and a `?`
one runs the looped variant (picked at run time).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, launches, planned  # noqa: E402

import allotment  # noqa: E402
from allotment import DataType, FusionDefinition  # noqa: E402
from allotment.analysis import inner_outer  # noqa: E402
from allotment.backend import host_runtime  # noqa: E402
from allotment.backend.kernels import inner_outer as inner_outer_backend  # noqa: E402
from allotment.driver import runtime  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.passes.pipeline import compile_passes, run_pipeline  # noqa: E402
from allotment.reference import evaluate  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
FD_TYPES = {"f32": DataType.Float, "bf16": DataType.BFloat16}


def randn(*shape: int, dtype: str = "f32", seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DTYPES[dtype])


@pytest.fixture
def fresh_programs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A cache of its own: the test changes what the compiler generates."""
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    yield


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch, fresh_programs: None) -> None:
    """A row budget of 32 bytes (8 f32): rows of 7 f32 fit one at a time, not two."""
    monkeypatch.setenv("ALLOT_ON_CHIP_ROW_BYTES", "32")


@pytest.fixture
def many_tiles(monkeypatch: pytest.MonkeyPatch, fresh_programs: None) -> list[tuple[int, int]]:
    """Row blocks of 2 rows and at most 3 programs, so each program walks several blocks
    (grid-stride); returns the (M, N) of each row-kernel launch."""
    monkeypatch.setenv("ALLOT_INNER_OUTER_PROGRAMS", "3")
    monkeypatch.setattr(inner_outer, "INNER_OUTER_PROGRAMS", 3)
    monkeypatch.setattr(inner_outer, "SHORT_PROGRAMS", 3)
    calls: list[tuple[int, int]] = []

    def blocks(m: int, n: int, main: int = 0) -> tuple[int, int, int]:
        calls.append((m, n))
        return 2, main or max(1, 1 << (n - 1).bit_length()), 4

    monkeypatch.setattr(host_runtime, "inner_outer_blocks", blocks)
    return calls


# --------------------------------------------------------------------------- #
# The fusions                                                                 #
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


def layernorm_backward(ty: str, hidden: str) -> str:
    """dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w, xhat = (x - mean) * rstd;
    dw = sum(dy * xhat, 0); db = mean(dy, 0) * rows (a mean column reduction, scaled back)."""
    t, f, w = f"tensor<?x{hidden}x{ty}>", f"tensor<?x{hidden}xf32>", f"tensor<{hidden}x{ty}>"
    wf, r = f"tensor<{hidden}xf32>", "tensor<?x1xf32>"
    n = "%n" if hidden == "?" else hidden
    return f"""func.func @layernorm_backward(%dy: {t}, %x: {t}, %w: {w}, %mean: {r}, %rstd: {r}) -> ({t}, {w}, {w}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : {t}
  %n = tensor.dim %x, %c1 : {t}
  %mi = arith.index_cast %m : index to i64
  %mf = arith.sitofp %mi : i64 to f32
  %dyf = fusion.cast %dy : {t} to {f}
  %xf = fusion.cast %x : {t} to {f}
  %wf = fusion.cast %w : {w} to {wf}
  %wb = fusion.broadcast_in_dim %wf [%m, {n}] dims [1] : {wf} -> {f}
  %xc = fusion.sub %xf, %mean : {f}, {r} -> {f}
  %xhat = fusion.mul %xc, %rstd : {f}, {r} -> {f}
  %g = fusion.mul %dyf, %wb : {f}
  %a = fusion.mean %g dims [1] keepdim : {f} -> {r}
  %gx = fusion.mul %g, %xhat : {f}
  %b = fusion.mean %gx dims [1] keepdim : {f} -> {r}
  %xb = fusion.mul %xhat, %b : {f}, {r} -> {f}
  %d1 = fusion.sub %g, %a : {f}, {r} -> {f}
  %d2 = fusion.sub %d1, %xb : {f}
  %dxf = fusion.mul %d2, %rstd : {f}, {r} -> {f}
  %dx = fusion.cast %dxf : {f} to {t}
  %dwp = fusion.mul %dyf, %xhat : {f}
  %dwf = fusion.sum %dwp dims [0] : {f} -> {wf}
  %dw = fusion.cast %dwf : {wf} to {w}
  %dbm = fusion.mean %dyf dims [0] : {f} -> {wf}
  %dbf = fusion.mul %dbm, %mf : {wf}, f32 -> {wf}
  %db = fusion.cast %dbf : {wf} to {w}
  func.return %dx, %dw, %db : {t}, {w}, {w}
}}
"""


def rmsnorm_inputs(rows: int, hidden: int, ty: str) -> tuple[torch.Tensor, ...]:
    x, dy, w = randn(rows, hidden, dtype=ty), randn(rows, hidden, dtype=ty, seed=1), randn(hidden, dtype=ty, seed=2)
    rstd = torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-5)
    return dy, x, w, rstd


def rmsnorm_torch(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, rstd: torch.Tensor) -> list[torch.Tensor]:
    dyf, xf = dy.float(), x.float()
    g = dyf * w.float()
    dx = (g - xf * (rstd * rstd * (g * xf).mean(1, keepdim=True))) * rstd
    return [dx.to(dy.dtype), (dyf * xf * rstd).sum(0).to(dy.dtype)]


def layernorm_inputs(rows: int, hidden: int, ty: str) -> tuple[torch.Tensor, ...]:
    x, dy, w = randn(rows, hidden, dtype=ty), randn(rows, hidden, dtype=ty, seed=1), randn(hidden, dtype=ty, seed=2)
    mean = x.float().mean(1, keepdim=True)
    rstd = torch.rsqrt(x.float().var(1, unbiased=False, keepdim=True) + 1e-5)
    return dy, x, w, mean, rstd


def layernorm_torch(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, mean: torch.Tensor,
                    rstd: torch.Tensor) -> list[torch.Tensor]:
    """What autograd computes for layer_norm(x, weight=w) at these statistics."""
    xf = x.float().requires_grad_(True)
    wf = w.float().requires_grad_(True)
    bf = torch.zeros_like(wf, requires_grad=True)
    y = (xf - mean) * rstd * wf + bf  # mean, rstd constants: dx by the closed form below
    y.backward(dy.float())
    xhat = (x.float() - mean) * rstd
    g = dy.float() * w.float()
    dx = rstd * (g - g.mean(1, keepdim=True) - xhat * (g * xhat).mean(1, keepdim=True))
    assert wf.grad is not None and bf.grad is not None
    return [dx.to(dy.dtype), wf.grad.to(dy.dtype), bf.grad.to(dy.dtype)]


def compare_torch(actual: list[torch.Tensor], expected: list[torch.Tensor], ty: str) -> None:
    tol = {"rtol": 5e-2, "atol": 5e-2} if ty == "bf16" else {"rtol": 1e-4, "atol": 1e-4}
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, **tol)


# --------------------------------------------------------------------------- #
# Segmentation and allocation                                                 #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("hidden", ["7", "?"])
def test_rmsnorm_backward_is_one_inner_outer_kernel(hidden: str) -> None:
    ir = planned(rmsnorm_backward("bf16", hidden))
    assert len(re.findall(r"alloc\.kernel ", ir)) == 1
    assert 'alloc.kernel "k0" inner_outer' in ir
    assert re.search(r"column_partials = array<i64: \d+>", ir)
    # the partials [programs, N] f32, programs = max(1, min(ceildiv(rows, 16), cap)): 528 for a
    # static row of at most 1024, 264 for a `?` one
    assert re.search(r'name = "k0_partials_dwf"\} : memref<\?x' + ("7" if hidden == "7" else r"\?") + "xf32>", ir)
    cap = inner_outer.SHORT_PROGRAMS if hidden == "7" else inner_outer.INNER_OUTER_PROGRAMS
    assert "arith.ceildivsi" in ir and f"arith.constant {cap} : index" in ir
    assert ("schedule(persistent)" if hidden == "7" else "schedule(persistent if") in ir


def test_layernorm_backward_is_one_inner_outer_kernel() -> None:
    ir = planned(layernorm_backward("f32", "5"))
    assert len(re.findall(r"alloc\.kernel ", ir)) == 1
    assert "column_partials = array<i64: 7, 8>" in ir  # dw's and db's partials
    assert sorted(re.findall(r'name = "(k0_\w+)"', ir)) == [
        "k0_acc_dbm", "k0_acc_dwf", "k0_partials_dbm", "k0_partials_dwf", "k0_row_a", "k0_row_b",
    ]


def test_inner_outer_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOT_INNER_OUTER", "0")
    ir = planned(rmsnorm_backward("bf16", "7"))
    assert "inner_outer" not in ir and len(re.findall(r"alloc\.kernel ", ir)) == 2


@pytest.mark.parametrize(("ty", "hidden"), [("bf16", "7"), ("bf16", "4096"), ("f32", "?")])
def test_row_loops_pipeline_by_their_blocks(ty: str, hidden: str) -> None:
    """The persistent row loop is software-pipelined (`tl.range(..., num_stages=)`) by the
    blocks chosen at launch, static row or `?`: LONG_ROW_STAGES for rows of LONG_ROW or
    more, ROW_STAGES for shorter ones, each where its stages' tiles of dy and x fit
    ROW_STAGE_BYTES (the [programs, N] partials are not counted), else none: constexpr
    branches."""
    source = allotment.compile(rmsnorm_backward(ty, hidden)).source("cpu")
    start = source.index("def k0_persistent")
    kernel = source[start:source.index("\ndef ", start)]  # up to the next function
    b = inner_outer_backend
    per_element = 2 * (2 if ty == "bf16" else 4)  # dy and x
    assert re.findall(r"\n    (if .*|elif .*|else):\n        for tile in (.*):", kernel) == [
        (f"if BLOCK_N >= {b.LONG_ROW} and BLOCK_M * BLOCK_N * {b.LONG_ROW_STAGES * per_element} <= {b.ROW_STAGE_BYTES}",
         f"tl.range(pid, tiles_m, programs, num_stages={b.LONG_ROW_STAGES})"),
        (f"elif BLOCK_N < {b.LONG_ROW} and BLOCK_M * BLOCK_N * {b.ROW_STAGES * per_element} <= {b.ROW_STAGE_BYTES}",
         f"tl.range(pid, tiles_m, programs, num_stages={b.ROW_STAGES})"),
        ("else", "range(pid, tiles_m, programs)"),
    ]


def test_row_stages_can_be_fixed(monkeypatch: pytest.MonkeyPatch, fresh_programs: None) -> None:
    monkeypatch.setenv("ALLOT_ROW_STAGES", "1")
    source = allotment.compile(rmsnorm_backward("bf16", "7")).source("cpu")
    kernel = source[source.index("def k0_persistent"):source.index("def k0_column_final")]
    assert re.findall(r"for tile in (.*):", kernel) == ["range(pid, tiles_m, programs)"]


@pytest.mark.parametrize(("ty", "hidden", "rows"), [("bf16", 4096, 3), ("f32", 4096, 2), ("f32", 8192, 2)])
def test_every_stage_branch_computes_the_same(ty: str, hidden: int, rows: int) -> None:
    """The three-stage branch (bf16 rows of 4096) and the unpipelined one (f32 rows of 4096
    and 8192: three stages would take 96 and 192 KiB) against the reference, `?` rows and a
    `?` row; the two-stage branch (short rows) is `test_rmsnorm_backward`'s."""
    for text, inputs in ((rmsnorm_backward(ty, "?"), rmsnorm_inputs(rows, hidden, ty)),
                         (layernorm_backward(ty, "?"), layernorm_inputs(rows, hidden, ty))):
        check(text, *inputs, tol=2e-2 if ty == "bf16" else 1e-4)


@pytest.mark.parametrize("hidden", ["7", "?"])
def test_the_weight_is_loaded_once_a_program(hidden: str) -> None:
    """w, read at the column only, is loaded (and cast) before the loop over row blocks, once
    a tile where a `?` row is held as two (`two_tiles`); the loop loads dy, x and the row's
    statistics (results: `test_layernorm_backward`, `test_a_row_of_two_tiles`)."""
    source = allotment.compile(layernorm_backward("bf16", hidden)).source("cpu")
    for name, tiles in (("persistent", 1), ("two_tiles", 2)) if hidden == "?" else (("persistent", 1),):
        start = source.index(f"def k0_{name}")
        kernel = source[start:source.index("\ndef ", start)]  # up to the next function
        head, loop = kernel.split("for tile in", 1)
        loads = re.findall(r"ld\d+ = tl\.load\(in2_ptr \+ \(i1 \* in2_s0\), mask=mask_n, other=0\)", head)
        assert len(loads) == tiles, name
        assert "in2_ptr" not in loop
        assert len(set(re.findall(r"tl\.load\((in\d)_ptr", loop))) == 4  # dy, x, mean, rstd


def test_program_count() -> None:
    from allotment.extents import symbolic as sym
    from allotment.extents.symbolic import Const

    def count(rows: int) -> int:
        e = inner_outer.program_count(Const(rows))
        assert isinstance(e, Const), e
        return e.value

    assert [count(r) for r in (0, 1, 16, 17, 160)] == [1, 1, 1, 2, 10]
    assert count(10**7) == inner_outer.INNER_OUTER_PROGRAMS
    rows = sym.ArgDim(0, 0, "x")  # symbolic: evaluated at run time, same rule
    e = inner_outer.program_count(rows)
    assert not isinstance(e, Const)
    assert [sym.evaluate(e, [[r, 7]]) for r in (0, 1, 17, 10**7)] == [1, 1, 2, inner_outer.INNER_OUTER_PROGRAMS]


def test_program_cap_follows_the_row_length() -> None:
    """Rows of at most SHORT_ROW (2048) get SHORT_PROGRAMS programs at most (four an SM), longer
    ones or rows of unknown length INNER_OUTER_PROGRAMS (two an SM); a `?` row gets the same
    rule evaluated at entry."""
    from allotment.extents import symbolic as sym
    from allotment.extents.symbolic import Const

    assert inner_outer.SHORT_PROGRAMS > inner_outer.INNER_OUTER_PROGRAMS
    many = Const(10**7)
    rows = (768, 1024, 1111, 2048, 2049, 4096)
    capped = {row: inner_outer.program_count(many, Const(row)) for row in rows}
    short, long = Const(inner_outer.SHORT_PROGRAMS), Const(inner_outer.INNER_OUTER_PROGRAMS)
    assert capped == {768: short, 1024: short, 1111: short, 2048: short, 2049: long, 4096: long}
    assert inner_outer.program_count(many, None) == long
    e = inner_outer.program_count(sym.ArgDim(0, 0, "x"), sym.ArgDim(0, 1, "x"))
    assert not isinstance(e, Const)
    for row in (*rows, 1, 20000):
        assert sym.evaluate(e, [[10**7, row]]) == (short if row <= 2048 else long).value, row
    assert sym.evaluate(e, [[40, 1111]]) == 3  # few rows: ceildiv(rows, 16)


def test_rows_held_as_two_tiles() -> None:
    """`host_runtime.inner_outer_tiles`: only rows of one 2048-lane tile a step whose two tiles
    use at most two thirds of its lanes (1025 to 1280 here); every other row one tile."""
    tiles = {n: host_runtime.inner_outer_tiles(n) for n in (768, 1024, 1025, 1111, 1280, 1281, 1536, 2048, 4096)}
    assert tiles == {768: (1024, 0), 1024: (1024, 0), 1025: (1024, 32), 1111: (1024, 128), 1280: (1024, 256),
                     1281: (2048, 0), 1536: (2048, 0), 2048: (2048, 0), 4096: (4096, 0)}
    assert host_runtime.inner_outer_blocks(12345, 1111, 1024) == (1, 1024, 4)
    assert host_runtime.inner_outer_blocks(12345, 2048) == (1, 2048, 4)
    assert host_runtime.inner_outer_blocks(12345, 2049) == (1, 4096, 16)
    assert host_runtime.inner_outer_blocks(8192, 768) == (2, 1024, 4)


# --------------------------------------------------------------------------- #
# Results                                                                     #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("hidden", ["7", "?"])
@pytest.mark.parametrize("rows", [37, 1, 0])
def test_rmsnorm_backward(ty: str, hidden: str, rows: int) -> None:
    text = rmsnorm_backward(ty, hidden)
    inputs = rmsnorm_inputs(rows, 7, ty)
    actual = check(text, *inputs)
    compare_torch(actual, rmsnorm_torch(*inputs), ty)
    assert launches(text, *inputs) == ["k0_persistent", "k0_column_final"]


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("hidden", ["5", "?"])
@pytest.mark.parametrize("rows", [23, 1])
def test_layernorm_backward(ty: str, hidden: str, rows: int) -> None:
    text = layernorm_backward(ty, hidden)
    inputs = layernorm_inputs(rows, 5, ty)
    actual = check(text, *inputs)
    compare_torch(actual, layernorm_torch(*inputs), ty)


COLUMN_OF_A_ROW_RESULT = """func.func @f(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = fusion.sub %x, %s : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %c = fusion.sum %y dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %e = fusion.exp %x : tensor<?x?xf32>
  %q = fusion.mean %e dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %y, %c, %q : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>
}
"""


def test_column_sums_of_the_normalized_rows() -> None:
    """A column sum of the normalization's own output (read from registers) and a column
    mean of another value of the same domain, in one kernel."""
    assert 'alloc.kernel "k0" inner_outer' in planned(COLUMN_OF_A_ROW_RESULT)
    x = randn(13, 6)
    y, c, q = check(COLUMN_OF_A_ROW_RESULT, x)
    expected = x - x.sum(1, keepdim=True)
    torch.testing.assert_close(y, expected)
    torch.testing.assert_close(c, expected.sum(0), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(q, x.exp().mean(0))


@pytest.mark.parametrize("hidden", ["7", "?"])
def test_programs_walk_several_row_blocks(hidden: str, many_tiles: list[tuple[int, int]]) -> None:
    """37 rows in blocks of 2 (19 blocks) on 3 programs: each program sums ~6 blocks' columns
    in registers; the partials of 3 programs are summed in order by the second kernel."""
    text = rmsnorm_backward("f32", hidden)
    ir = planned(text)
    assert "arith.constant 3 : index" in ir
    inputs = rmsnorm_inputs(37, 7, "f32")
    actual = check(text, *inputs)
    compare_torch(actual, rmsnorm_torch(*inputs), "f32")
    assert many_tiles and all(c == (37, 7) for c in many_tiles)


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("hidden", ["1111", "?"])
def test_a_row_of_two_tiles(ty: str, hidden: str, many_tiles: list[tuple[int, int]]) -> None:
    """Rows of 1111 held as 1024 + 128 lanes: each tile's column sums in registers of its
    own, stored to its columns of the partials, over 3 programs walking 37 rows (a static
    row split when generated, a `?` one by the launcher's `two_tiles` variant); dx, dw and
    db against torch. 1500 (a `?` row the rule leaves whole) runs the one-tile variant."""
    text = layernorm_backward(ty, hidden)
    source = allotment.compile(text).source("cpu")
    if hidden == "?":
        assert "def k0_two_tiles_" in source and "rt.inner_outer_tiles(N)" in source
    else:
        assert "BLOCK_T: tl.constexpr = 128" in source and "def k0_two_tiles_" not in source
    inputs = layernorm_inputs(37, 1111, ty)
    assert launches(text, *inputs) == ["k0_two_tiles" if hidden == "?" else "k0_persistent", "k0_column_final"]
    compare_torch(allotment.compile(text)(*inputs), layernorm_torch(*inputs), ty)
    if hidden == "?":
        inputs = layernorm_inputs(5, 1500, ty)
        assert launches(text, *inputs) == ["k0_persistent", "k0_column_final"]
        compare_torch(allotment.compile(text)(*inputs), layernorm_torch(*inputs), ty)


def test_the_result_is_deterministic(many_tiles: list[tuple[int, int]]) -> None:
    text = layernorm_backward("f32", "?")
    inputs = layernorm_inputs(41, 6, "f32")
    exe = allotment.compile(text)
    first = exe(*inputs)
    for _ in range(2):
        for a, b in zip(first, exe(*inputs)):
            assert torch.equal(a, b)


def test_a_row_over_the_budget_keeps_two_kernels(small_budget: None) -> None:
    """7 f32 fit the 32-byte budget once, not twice (row and column accumulator): a static
    hidden size is segmented as before, a normalization and a split column sum."""
    text = rmsnorm_backward("f32", "7")
    ir = planned(text)
    assert "inner_outer" not in ir and len(re.findall(r"alloc\.kernel ", ir)) == 2
    inputs = rmsnorm_inputs(300, 7, "f32")
    check(text, *inputs)
    names = launches(text, *inputs)
    assert sorted(names) == ["k0_persistent", "k1_split_final", "k1_split_partial"]


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("rows", [37, 1])
def test_a_dynamic_row_over_the_budget_runs_looped(ty: str, rows: int, small_budget: None) -> None:
    """A `?` hidden size is decided at run time: 7 > 32 / 4 / 2 elements, the looped variant
    (the row streamed in tiles, the column sums added to the program's partials row)."""
    text = rmsnorm_backward(ty, "?")
    inputs = rmsnorm_inputs(rows, 7, ty)
    actual = check(text, *inputs)
    compare_torch(actual, rmsnorm_torch(*inputs), ty)
    assert launches(text, *inputs) == ["k0_looped", "k0_column_final"]
    small = rmsnorm_inputs(rows, 3, ty)  # 3 <= 4 elements: persistent
    check(text, *small)
    assert launches(text, *small) == ["k0_persistent", "k0_column_final"]


def test_looped_layernorm_backward(small_budget: None, many_tiles: list[tuple[int, int]]) -> None:
    text = layernorm_backward("f32", "?")
    inputs = layernorm_inputs(29, 9, "f32")
    actual = check(text, *inputs)
    compare_torch(actual, layernorm_torch(*inputs), "f32")
    assert launches(text, *inputs) == ["k0_looped", "k0_column_final"]


# --------------------------------------------------------------------------- #
# Through the FusionDefinition frontend (nvFuser's API)                       #
# --------------------------------------------------------------------------- #


def define_rmsnorm_backward(ty: str) -> FusionDefinition:
    with FusionDefinition() as fd:
        dy = fd.define_tensor([-1, -1], dtype=FD_TYPES[ty])
        x = fd.define_tensor([-1, -1], dtype=FD_TYPES[ty])
        w = fd.define_tensor([-1], dtype=FD_TYPES[ty])
        rstd = fd.define_tensor([-1, 1], dtype=DataType.Float)
        dyf, xf = fd.ops.cast(dy, DataType.Float), fd.ops.cast(x, DataType.Float)
        wb = fd.ops.broadcast_in_dim(fd.ops.cast(w, DataType.Float), dy.shape(), [1])
        g = fd.ops.mul(dyf, wb)
        s = fd.ops.mean(fd.ops.mul(g, xf), [1], keepdim=True)
        k = fd.ops.mul(fd.ops.mul(rstd, rstd), s)
        dx = fd.ops.mul(fd.ops.sub(g, fd.ops.mul(xf, k)), rstd)
        dw = fd.ops.sum(fd.ops.mul(dyf, fd.ops.mul(xf, rstd)), [0])
        fd.add_output(fd.ops.cast(dx, FD_TYPES[ty]))
        fd.add_output(fd.ops.cast(dw, FD_TYPES[ty]))
    return fd


def define_layernorm_backward(ty: str) -> FusionDefinition:
    with FusionDefinition() as fd:
        dy = fd.define_tensor([-1, -1], dtype=FD_TYPES[ty])
        x = fd.define_tensor([-1, -1], dtype=FD_TYPES[ty])
        w = fd.define_tensor([-1], dtype=FD_TYPES[ty])
        mean = fd.define_tensor([-1, 1], dtype=DataType.Float)
        rstd = fd.define_tensor([-1, 1], dtype=DataType.Float)
        dyf, xf = fd.ops.cast(dy, DataType.Float), fd.ops.cast(x, DataType.Float)
        xhat = fd.ops.mul(fd.ops.sub(xf, mean), rstd)
        g = fd.ops.mul(dyf, fd.ops.broadcast_in_dim(fd.ops.cast(w, DataType.Float), dy.shape(), [1]))
        a = fd.ops.mean(g, [1], keepdim=True)
        b = fd.ops.mean(fd.ops.mul(g, xhat), [1], keepdim=True)
        dx = fd.ops.mul(fd.ops.sub(fd.ops.sub(g, a), fd.ops.mul(xhat, b)), rstd)
        fd.add_output(fd.ops.cast(dx, FD_TYPES[ty]))
        fd.add_output(fd.ops.cast(fd.ops.sum(fd.ops.mul(dyf, xhat), [0]), FD_TYPES[ty]))
        fd.add_output(fd.ops.cast(fd.ops.sum(dyf, [0]), FD_TYPES[ty]))
    return fd


def reference(fd: FusionDefinition, inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    return evaluate(find_function(parse_module(fd.ir()), "fusion"), list(inputs))


@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_rmsnorm_backward_through_the_frontend(ty: str) -> None:
    fd = define_rmsnorm_backward(ty)
    assert "inner_outer" in str(run_pipeline(parse_module(fd.ir()), compile_passes("cpu")))
    inputs = rmsnorm_inputs(19, 6, ty)
    expected = rmsnorm_torch(*inputs)
    compare_torch(fd.execute(list(inputs)), expected, ty)
    compare_torch(reference(fd, inputs), expected, ty)


@pytest.mark.parametrize("ty", ["f32", "bf16"])
def test_layernorm_backward_through_the_frontend(ty: str) -> None:
    fd = define_layernorm_backward(ty)
    assert "inner_outer" in str(run_pipeline(parse_module(fd.ir()), compile_passes("cpu")))
    inputs = layernorm_inputs(21, 5, ty)
    expected = layernorm_torch(*inputs)
    compare_torch(fd.execute(list(inputs)), expected, ty)
    compare_torch(reference(fd, inputs), expected, ty)


@pytest.mark.parametrize("value, words", [("abc", "is not an integer"), ("0", "must be positive")])
def test_bad_row_stages_are_reported(monkeypatch: pytest.MonkeyPatch, value: str, words: str) -> None:
    monkeypatch.setenv("ALLOT_ROW_STAGES", value)
    with pytest.raises(ValueError, match=f"ALLOT_ROW_STAGES='{value}' {words}"):
        allotment.compile(rmsnorm_backward("bf16", "7")).source("cpu")


# --------------------------------------------------------------------------- #
# Norm backwards as a model's autograd writes them                            #
# --------------------------------------------------------------------------- #


def _model_norm_backward(n: str, residual: bool) -> str:
    """RMSNorm's backward as AOTAutograd gives it for a Hugging Face Llama: `dy * w` (the
    walk groups it with dw's sum, which does not need it, and dx reads it) and, with
    `residual`, dx plus the residual branch's gradient, kept in f32 and cast to bf16 (two row
    outputs that depend on the row sum)."""
    dim = "" if n != "?" else "  %c1 = arith.constant 1 : index\n  %nn = tensor.dim %x, %c1 : tensor<?x?xf32>\n"
    width = n if n != "?" else "%nn"
    extra_arg = f", %res: tensor<?x{n}xf32>" if residual else ""
    tail = (f"  %tot = fusion.add %dx, %res : tensor<?x{n}xf32>\n"
            f"  %out = fusion.cast %tot : tensor<?x{n}xf32> to tensor<?x{n}xbf16>\n"
            f"  func.return %dw, %tot, %out : tensor<{n}xf32>, tensor<?x{n}xf32>, tensor<?x{n}xbf16>\n"
            if residual else
            f"  %out = fusion.cast %dx : tensor<?x{n}xf32> to tensor<?x{n}xbf16>\n"
            f"  func.return %dw, %out : tensor<{n}xf32>, tensor<?x{n}xbf16>\n")
    results = (f"(tensor<{n}xf32>, tensor<?x{n}xf32>, tensor<?x{n}xbf16>)" if residual
               else f"(tensor<{n}xf32>, tensor<?x{n}xbf16>)")
    return (
        f"func.func @norm_bwd(%dy: tensor<?x{n}xbf16>, %x: tensor<?x{n}xf32>, %r: tensor<?x1xf32>, "
        f"%w: tensor<{n}xf32>{extra_arg}) -> {results} {{\n{dim}"
        f"  %g = fusion.cast %dy : tensor<?x{n}xbf16> to tensor<?x{n}xf32>\n"
        f"  %wb = fusion.broadcast_in_dim %w [1, {width}] dims [1] : tensor<{n}xf32> -> tensor<1x{n}xf32>\n"
        f"  %gw = fusion.mul %g, %wb : tensor<?x{n}xf32>, tensor<1x{n}xf32> -> tensor<?x{n}xf32>\n"
        f"  %xh = fusion.mul %x, %r : tensor<?x{n}xf32>, tensor<?x1xf32> -> tensor<?x{n}xf32>\n"
        f"  %p = fusion.mul %g, %xh : tensor<?x{n}xf32>\n"
        f"  %dw = fusion.sum %p dims [0] : tensor<?x{n}xf32> -> tensor<{n}xf32>\n"
        f"  %a = fusion.mul %gw, %r : tensor<?x{n}xf32>, tensor<?x1xf32> -> tensor<?x{n}xf32>\n"
        f"  %gx = fusion.mul %gw, %x : tensor<?x{n}xf32>\n"
        f"  %s = fusion.sum %gx dims [1] keepdim : tensor<?x{n}xf32> -> tensor<?x1xf32>\n"
        f"  %k = fusion.mul %s, %r : tensor<?x1xf32>\n"
        f"  %b = fusion.mul %x, %k : tensor<?x{n}xf32>, tensor<?x1xf32> -> tensor<?x{n}xf32>\n"
        f"  %dx = fusion.sub %a, %b : tensor<?x{n}xf32>\n"
        f"{tail}}}\n"
    )


def _model_norm_inputs(rows: int, n: int, residual: bool) -> list[torch.Tensor]:
    xs = [randn(rows, n, dtype="bf16", seed=1), randn(rows, n, seed=2), randn(rows, 1, seed=3).abs() + 0.5,
          randn(n, seed=4)]
    return xs + [randn(rows, n, seed=5)] if residual else xs


@pytest.mark.parametrize("residual", [False, True], ids=["dx", "dx_plus_residual"])
@pytest.mark.parametrize("hidden", ["7", "?"])
def test_a_models_norm_backward_is_one_inner_outer_kernel(hidden: str, residual: bool, fresh_programs: None) -> None:
    """The column group holds a value computed before its sum that the row group reads
    (`dy * w`), or exports row outputs of its own (`dx + residual`): either way the two
    groups make one inner-outer kernel (two kernels before: a column reduction that wrote
    `dy * w` out in f32, and a normalization that read it back), and the outputs match the
    reference."""
    text = _model_norm_backward(hidden, residual)
    ir = planned(text)
    assert len(re.findall(r"alloc\.kernel ", ir)) == 1 and 'alloc.kernel "k0" inner_outer' in ir, ir
    check(text, *_model_norm_inputs(37, 7, residual), tol=2e-2)


@pytest.mark.parametrize("residual", [False, True], ids=["dx", "dx_plus_residual"])
def test_a_models_norm_backward_looped(residual: bool, small_budget: None) -> None:
    """The same kernel with rows too long to hold (a `?` row of 7 f32 over a budget of 8, with
    two reductions): the looped schedule, the same values."""
    text = _model_norm_backward("?", residual)
    check(text, *_model_norm_inputs(19, 7, residual), tol=2e-2)
    assert 'alloc.kernel "k0" inner_outer' in planned(text)


def test_a_column_sum_read_by_the_rows_after_it_stays_apart() -> None:
    """A value computed from the column sums cannot be read per row tile: the two groups stay
    separate kernels (dw is complete only once every row has been read)."""
    text = (
        "func.func @late(%x: tensor<?x7xf32>) -> tensor<?x7xf32> {\n"
        "  %c = fusion.sum %x dims [0] keepdim : tensor<?x7xf32> -> tensor<1x7xf32>\n"
        "  %y = fusion.mul %x, %c : tensor<?x7xf32>, tensor<1x7xf32> -> tensor<?x7xf32>\n"
        "  %m = fusion.max %y dims [1] keepdim : tensor<?x7xf32> -> tensor<?x1xf32>\n"
        "  %z = fusion.sub %y, %m : tensor<?x7xf32>, tensor<?x1xf32> -> tensor<?x7xf32>\n"
        "  func.return %z : tensor<?x7xf32>\n"
        "}\n"
    )
    ir = planned(text)
    assert "inner_outer" not in ir and len(re.findall(r"alloc\.kernel ", ir)) == 2, ir
    check(text, randn(11, 7))
