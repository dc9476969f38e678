"""The rows-by-residency rule (`backend/resident_rows.py`) and how the launcher applies it
(`launch._resident_rows`, `launch.launch_kernel(..., rows=M)`), with fake kernels: no GPU."""

from __future__ import annotations

import types
from typing import Any

import pytest

import allotment
from allotment.backend import launch, raw_launcher
from allotment.backend.register_cap import SMLimits
from allotment.backend.resident_rows import halve, keep_halved

H100 = SMLimits(count=132)


@pytest.fixture(autouse=True)
def _rule_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule as it is by default, whatever the environment of the test run says."""
    monkeypatch.delenv("ALLOT_RESIDENT_ROWS", raising=False)
    monkeypatch.delenv("ALLOT_PERSISTENT_BLOCKS", raising=False)


def test_halves_the_question_mark_attention_kernel() -> None:
    # rows of 999 as 4 x 1024 lanes on 8 warps: 59 registers, 4 programs (32 warps) an SM, 2997 programs
    assert halve(59, 8, 0, 4, 2997, H100, allowed=True)


@pytest.mark.parametrize("regs, warps, bm, programs, why", [
    (48, 8, 4, 2997, "its static twin: 5 programs, 40 warps an SM (62.5%)"),
    (59, 8, 1, 2997, "one row a program: nothing to halve"),
    (59, 8, 4, 4 * 132, "every program resident at once"),
    (40, 8, 8, 8192, "48 warps an SM (75%)"),
])
def test_leaves_alone(regs: int, warps: int, bm: int, programs: int, why: str) -> None:
    assert not halve(regs, warps, 0, bm, programs, H100, allowed=True), why


def test_shared_memory_counts() -> None:
    # 32 registers would hold 8 programs of 8 warps; 100 KB of shared memory holds 2 (16 warps)
    assert not halve(32, 8, 0, 4, 8192, H100, allowed=True)
    assert halve(32, 8, 100 * 1024, 4, 8192, H100, allowed=True)


def test_old_rule_and_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not halve(59, 8, 0, 4, 2997, H100, allowed=False)
    monkeypatch.setenv("ALLOT_RESIDENT_ROWS", "0")
    assert not halve(59, 8, 0, 4, 2997, H100)
    monkeypatch.delenv("ALLOT_RESIDENT_ROWS")
    assert halve(59, 8, 0, 4, 2997, H100)
    monkeypatch.setenv("ALLOT_PERSISTENT_BLOCKS", "4x0x8")  # blocks forced for a tuning run: as given
    assert not halve(59, 8, 0, 4, 2997, H100)


def test_keep_halved() -> None:
    assert keep_halved((59, 8, 0), (32, 8, 0), 0, H100)  # 32 warps an SM to 64
    assert not keep_halved((59, 8, 0), (32, 8, 0), 8, H100), "the halved build spills"
    assert not keep_halved((59, 8, 0), (57, 8, 0), 0, H100), "no more warps resident"


class _Build:
    def __init__(self, regs: int, spills: int = 0) -> None:
        self.n_regs, self.n_spills = regs, spills
        self.metadata = types.SimpleNamespace(shared=0)

    def _init_handles(self) -> None:
        """Nothing to load: no driver here."""


class _Kernel:
    """Compiles (`warmup`) to a build whose registers depend on BLOCK_M."""

    def __init__(self, regs: dict[int, int], spills: int = 0, fail: bool = False) -> None:
        self.regs, self.spills, self.fail = regs, spills, fail
        self.warmed: list[tuple[tuple[int, ...], int]] = []

    def warmup(self, *args: Any, grid: tuple[int, ...], BLOCK_M: int, num_warps: int, **rest: Any) -> _Build:
        if self.fail:
            raise RuntimeError("no compiler here")
        self.warmed.append((grid, BLOCK_M))
        return _Build(self.regs[BLOCK_M], self.spills if BLOCK_M != max(self.regs) else 0)


@pytest.fixture
def h100(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "_sm_limits", lambda device: H100)
    monkeypatch.setattr(launch.torch.cuda, "current_device", lambda: 0)


def test_launcher_halves_rows_and_grid(h100: None) -> None:
    k = _Kernel({4: 59, 2: 32})
    grid, consts = launch._resident_rows(k, (2997,), (), {"BLOCK_M": 4, "BLOCK_N": 1024}, 8, {}, 11988)
    assert (grid, consts) == ((5994,), {"BLOCK_M": 2, "BLOCK_N": 1024})
    assert k.warmed == [((2997,), 4), ((5994,), 2)]
    # rows that do not divide: the last program holds what is left
    grid, consts = launch._resident_rows(k, (2998,), (), {"BLOCK_M": 4, "BLOCK_N": 1024}, 8, {}, 11989)
    assert grid == (5995,)


@pytest.mark.parametrize("kernel, why", [
    (_Kernel({4: 48, 2: 32}), "resident enough already: nothing compiled at half"),
    (_Kernel({4: 59, 2: 32}, spills=16), "the halved build spills"),
    (_Kernel({4: 59, 2: 32}, fail=True), "a compile that fails here is the launch's to report"),
])
def test_launcher_keeps_its_rows(h100: None, kernel: _Kernel, why: str) -> None:
    consts = {"BLOCK_M": 4, "BLOCK_N": 1024}
    assert launch._resident_rows(kernel, (2997,), (), consts, 8, {}, 11988) == ((2997,), consts), why


def test_direct_launches_use_the_chosen_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first launch stores the BLOCK_M it compiled; every later direct launch of that
    specialization passes it, over the grid it gives."""
    calls: list[tuple[tuple[int, ...], list[Any]]] = []

    class Plan(raw_launcher.CallPlan):
        def call(self, grid: tuple[int, ...], stream: int, kernel_args: list[Any]) -> None:
            calls.append((grid, list(kernel_args)))

    def first(table: dict, key: tuple, kernel: Any, grid: tuple, args: tuple, consts: dict, warps: int,
              rows: int | None = None) -> None:
        assert rows == 10
        table[key] = Plan(None, None, (), (), True, (0, 1, 2, 3), block_m=2)

    kernel = object()
    monkeypatch.setattr(launch, "_first_launch", first)
    monkeypatch.setattr(launch, "_C", types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 7,
                                                           _cuda_getDevice=lambda: 0))
    monkeypatch.setattr(launch, "_direct_ok", True)
    monkeypatch.setattr(launch, "_interpreted", lambda k: False)
    launch.kernel_args((kernel,), (), (), 2)
    try:
        launch.launch_kernel(kernel, (3,), (10, 999), 4, 1024, False, 8, rows=10)
        assert calls == []  # the first launch went through `_first_launch`
        launch.launch_kernel(kernel, (3,), (10, 999), 4, 1024, False, 8, rows=10)
        assert calls == [((5,), [10, 999, 2, 1024, False])]
    finally:
        launch._KERNELS.pop(id(kernel), None)


def _source(text: str) -> str:
    return allotment.compile(text).source("cuda")


def test_row_kernels_launch_with_their_rows() -> None:
    rows = _source("""
func.func @rowsum(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %s = fusion.sum %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}
""")
    assert "rows=M)" in rows
    pointwise = _source("""
func.func @add(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %z = fusion.add %x, %y : tensor<?x?xf32>
  func.return %z : tensor<?x?xf32>
}
""")
    assert "rows=" not in pointwise
