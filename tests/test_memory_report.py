"""`allot-run --memory-report` and `--memory-plot` agree: each buffer's bar covers the
kernels the report says it is held during (from its alloc to its dealloc), the x axis
is the kernels, and `without reuse` names the buffers it adds up."""

from __future__ import annotations

from pathlib import Path

import matplotlib.axes
import pytest

import allotment
from allotment.analysis.memory_plot import plot_profile
from allotment.tools import allot_run

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MLP = str(EXAMPLES / "mlp.mlir")
SHAPES = {"mlp.mlir": {"x": (4096, 1024)}, "add_rmsnorm.mlir": {"x": (64, 64), "r": (64, 64)},
          "bias_gelu.mlir": {"x": (64, 64)}, "layernorm.mlir": {"x": (64, 64)}, "rmsnorm.mlir": {"x": (64, 64)},
          "softmax.mlir": {"x": (64, 128)}}


def test_the_mlp_report_names_kernels_and_the_buffers_without_reuse(capsys: pytest.CaptureFixture[str]) -> None:
    assert allot_run.main([MLP, "--shapes", "x=4096x1024", "--memory-report"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "@mlp: 3 buffers, 3 kernel(s) (k0, k1, k2) over 9 steps"
    assert lines[1].endswith("held during k0..k2 (steps: alloc 2, live 2..6, freed at 7)")
    assert lines[2].endswith("in place of h, held during k0..k2 (steps: alloc 2, live 2..6, freed at 7)")
    assert lines[3].endswith("held during k2 (steps: alloc 5, live 5..end, returned)")
    assert lines[4] == ("without reuse: the unplanned program's 3 global buffer(s): h 33554432, gb 33554432, "
                        "y 8388608; the plan writes gb into h")
    assert lines[5].endswith("without reuse: 75497472 bytes")


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_figures_add_up(name: str) -> None:
    plan = allotment.memory_plan((EXAMPLES / name).read_text(), SHAPES[name])
    assert sum(n for _, n in plan.unplanned) == plan.without_reuse
    assert max(plan.held_per_kernel()) == plan.planned_peak
    for b in plan.buffers:
        first, stop = plan.kernel_span(b)
        if b.freed is not None:
            assert stop == plan.kernel_position(b.freed)  # the bar ends where the buffer is freed


def test_each_bar_covers_the_kernels_the_report_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bars: list[tuple[float, float]] = []
    ticks: list[list[str]] = []
    barh, set_xticks = matplotlib.axes.Axes.barh, matplotlib.axes.Axes.set_xticks

    def recording_barh(self, y, width, left=0, **kw):  # noqa: ANN001, ANN202
        bars.append((left, left + width))
        return barh(self, y, width, left=left, **kw)

    def recording_ticks(self, positions, labels=None, **kw):  # noqa: ANN001, ANN202
        ticks.append(list(labels or []))
        return set_xticks(self, positions, labels, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "barh", recording_barh)
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticks", recording_ticks)
    plan = allotment.memory_plan(Path(MLP).read_text(), {"x": (4096, 1024)})
    plot_profile(plan, tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:4] == b"\x89PNG"
    drawn = [b.name for b in plan.buffers if not b.memory.startswith("in place of ")]  # gb: in h's bar
    by_name = dict(zip(drawn, bars))
    assert by_name == {"h": (0, 3), "y": (2, 3)}  # h: k0..k2, freed at step 7 after k2 (it was drawn to step 8)
    assert ticks == [["k0", "k1", "k2"]]
