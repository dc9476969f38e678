"""benchmarks/l2_order_probe.py on the CPU: the reversed program computes what the generated
one does (both checked against torch), and the rewrite reverses every function of the last
kernel and refuses a last kernel that is not pointwise."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

import l2_order_probe as probe  # noqa: E402
from suite_fusions import FUSIONS  # noqa: E402

import allotment  # noqa: E402

REVERSED = "pid = tl.num_programs(0) - 1 - tl.program_id(0)"


def test_both_functions_of_a_question_mark_pointwise_kernel_are_reversed() -> None:
    src = allotment.compile(FUSIONS["batchnorm_fwd"].text("bf16", True, "tiny")).source("cpu")
    out = probe.reversed_last_kernel(src)
    assert out.count(REVERSED) == 2 and "def k1_flat_(" in out and "def k1_pointwise_(" in out
    assert out.replace(REVERSED, probe.PID) == src


def test_a_last_kernel_that_reduces_is_refused() -> None:
    src = allotment.compile(FUSIONS["row_sum"].text("bf16", False, "tiny")).source("cpu")
    with pytest.raises(ValueError, match="not pointwise"):
        probe.reversed_last_kernel(src)


@pytest.mark.parametrize("case", ["batchnorm_fwd:bf16:small", "batchnorm_fwd:bf16:small:?"])
def test_the_cpu_path_checks_and_times_both_orders(case: str) -> None:
    line = probe.probe(case, 2, cpu=True)
    assert "WRONG" not in line and "not timed" not in line and "reversed/forward" in line, line
