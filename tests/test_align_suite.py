"""Every suite fusion under ALIGN > 1 (`Emitter.aligned`): at extents 6 and 24 (the last),
in f32 with `?` extents, the launcher passes ALIGN 2 or 8 to the row, looped, split,
inner-outer, pointwise and flat kernels alike, and each result is torch's (Triton's
interpreter runs every function's prologue as it is; ALLOT_TEST_DEVICE=cuda runs them on
the GPU, where a wrong hint would mean misaligned vector accesses)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "benchmarks")]

from backend_check import TEST_DEVICE  # noqa: E402
from suite_fusions import FUSIONS, check_outputs  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402


@pytest.mark.parametrize("name", list(FUSIONS))
def test_the_fusion_is_right_under_the_align_of_its_call(name: str) -> None:
    f = FUSIONS[name]
    dims = list(f.sizes["tiny"])
    extents = {k: 24 if k == dims[-1] else 6 for k in dims}
    exe = allotment.compile(f.text("f32", True, extents))
    xs = f.make_inputs(extents, "f32", TEST_DEVICE)
    seen: list[object] = []
    with launch.intercepted(lambda k, grid, a, cx, w: seen.append(cx.get("ALIGN"))):
        exe(*xs)
    aligns = {a for a in seen if a is not None}
    # a transposed read's rows start at multiples of 6: the launcher finds no common power of two
    assert (aligns == {1}) if name.startswith("transpose_add") else (max(aligns, default=1) > 1), seen
    assert check_outputs(list(exe(*xs)), list(f.torch_fn(*xs)), "f32") is None
