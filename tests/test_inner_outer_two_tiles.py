"""Inner-outer kernels whose row is held as two tiles (`host_runtime.row_tiles`, the rule;
`inner_outer.InnerOuterEmitter.emit_rows_persistent`): RMSNorm and LayerNorm backward over
rows of 600 (512 + 128 lanes, the narrowest rows the rule splits: `ROW_SPLIT_MIN`), 37 rows
in blocks of 4 on 3 programs, so that each program walks 3 or 4 row blocks (the last one
partial) and adds both tiles' column terms across them before storing its partials row.
Checked against the reference evaluator, against torch, and against the one-tile build (the
old rule: `row_tiles(n, split=False)`); each program is checked to hold its row as two
tiles, with BLOCK_N = 512 at launch and the weight loaded once a program per tile, so that a
change of the rule cannot leave these tests checking one tile. A row the rule keeps whole
(7, 1000, `?`) gets the one-tile program text, whatever the rule says."""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402
from test_inner_outer import (  # noqa: E402
    compare_torch,
    layernorm_backward,
    layernorm_inputs,
    layernorm_torch,
    rmsnorm_backward,
    rmsnorm_inputs,
    rmsnorm_torch,
)

import allotment  # noqa: E402
from allotment.backend import host_runtime, launch  # noqa: E402
from allotment.backend.kernels import row_reduction  # noqa: E402
from allotment.driver import runtime  # noqa: E402

ROWS, N = 37, 600
CASES: dict[str, tuple[Callable[[str, str], str], Callable[..., tuple], Callable[..., list]]] = {
    "rmsnorm_bwd": (rmsnorm_backward, rmsnorm_inputs, rmsnorm_torch),
    "layernorm_bwd": (layernorm_backward, layernorm_inputs, layernorm_torch),
}


@pytest.fixture(autouse=True)
def fresh_programs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A cache of its own: the one-tile builds are generated under a patched rule."""
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    yield


def one_tile(text: str) -> allotment.Executable:
    """`text` compiled and generated with the old rule (one power-of-two tile a row), under
    another function name so that the program cache keys it apart."""
    name = re.search(r"func\.func @(\w+)\(", text).group(1)  # type: ignore[union-attr]
    exe = allotment.compile(text.replace(f"@{name}(", f"@{name}_one_tile(", 1))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(row_reduction, "row_tiles", functools.partial(host_runtime.row_tiles, split=False))
        exe.program("cpu")
    return exe


def persistent_source(source: str) -> str:
    return source[source.index("def k0_persistent"):source.index("def k0_column_final")]


@pytest.mark.parametrize("ty", ["f32", "bf16"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_backward_held_as_two_tiles(case: str, ty: str) -> None:
    fusion, make_inputs, torch_fn = CASES[case]
    main, tail = host_runtime.row_tiles(N)
    assert (main, tail) == (512, 128)
    text = fusion(ty, str(N))
    exe = allotment.compile(text)
    source = exe.source("cpu")
    assert f"BLOCK_T: tl.constexpr = {tail}" in source and f"rt.inner_outer_blocks(M, N, {main})" in source
    head, loop = persistent_source(source).split("for tile in", 1)
    # the weight (in2), read at the column only: loaded once a program in each tile, not in the loop
    assert len(re.findall(r"tl\.load\(in2_ptr", head)) == 2 and "in2_ptr" not in loop
    inputs = make_inputs(ROWS, N, ty)
    seen: list[tuple[str, tuple, dict]] = []
    with launch.intercepted(lambda k, g, a, c, w: seen.append((k.fn.__name__, tuple(g), dict(c)))):
        exe(*inputs)
    persistent = [(g, c) for name, g, c in seen if "persistent" in name]
    assert persistent == [((3,), {"BLOCK_M": 4, "BLOCK_N": main, "USE_I64": False})], seen  # 10 blocks, 3 programs
    actual = check(text, *inputs, tol=2e-2 if ty == "bf16" else 1e-4)
    compare_torch(actual, torch_fn(*inputs), ty)
    old = one_tile(text)
    assert "BLOCK_T" not in old.source("cpu")
    tol = {"rtol": 2e-2, "atol": 2e-2} if ty == "bf16" else {"rtol": 1e-5, "atol": 1e-5}
    for a, b in zip(actual, old(*inputs)):
        torch.testing.assert_close(a, b, **tol)


@pytest.mark.parametrize("hidden", ["7", "1000", "?"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_row_the_rule_keeps_whole_has_the_one_tile_program(case: str, hidden: str) -> None:
    """1000 would use 98% of a 1024-lane tile; 7 is below ROW_SPLIT_MIN; `?` has no static length."""
    text = CASES[case][0]("bf16", hidden)
    new = allotment.compile(text).source("cpu")
    old = one_tile(text).source("cpu")
    assert "BLOCK_T" not in new and "rt.inner_outer_blocks(M, N)" in new
    assert new == old.replace("_one_tile", "")
