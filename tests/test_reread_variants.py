"""benchmarks/reread_order_variants.py's program edits, on the CPU: the GPU experiment
times them, so the edits themselves are checked here against the real generated program
of BatchNorm's forward (statistics kernel k0, normalization kernel k1)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import reread_order_variants as rv  # noqa: E402
from suite_fusions import FUSIONS  # noqa: E402

import allotment  # noqa: E402


def _source() -> str:
    f = FUSIONS["batchnorm_fwd"]
    return allotment.compile(f.text("bf16", False, f.sizes["odd"])).source("cuda")


def _kernels(source: str) -> dict[str, str]:
    """Each kernel's text by its name (up to the next kernel)."""
    defs = list(rv._KERNEL_DEF.finditer(source))
    return {m.group(1): source[m.start():(defs[i + 1].start() if i + 1 < len(defs) else len(source))]
            for i, m in enumerate(defs)}


def test_evicting_keeps_x_in_l2_for_the_second_read_and_streams_the_rest() -> None:
    src = _source()
    out = rv.evicting(src)
    ast.parse(out)  # still a program
    before, after = _kernels(src), _kernels(out)
    assert before.keys() == after.keys() and any(k.startswith("k1_") for k in after)
    for name, body in after.items():
        x_loads = [line for line in body.splitlines() if "tl.load(in0_ptr" in line]
        assert x_loads or name == "k0_split_final_", name  # the final stage reads the partials only
        policy = "evict_last" if name.startswith("k0_") else "evict_first"
        assert all(line.endswith(f", eviction_policy='{policy}')") for line in x_loads), name
        other_loads = [line for line in body.splitlines() if "tl.load(" in line and "in0_ptr" not in line]
        assert not any("eviction_policy" in line for line in other_loads), name
        stores = [line for line in body.splitlines() if "tl.store(out" in line]
        assert all(("cache_modifier='.cs'" in line) == (not name.startswith("k0_")) for line in stores), name
    # nothing but those lines changed
    changed = [(a, b) for a, b in zip(src.splitlines(), out.splitlines()) if a != b]
    assert len(src.splitlines()) == len(out.splitlines())
    assert all(b.startswith(a[:-1]) for a, b in changed) and changed


def test_reversed_grids_reverse_every_kernel_but_the_first() -> None:
    src = _source()
    out = rv.reversed_grids(src)
    ast.parse(out)
    for name, body in _kernels(out).items():
        reversed_ = "pid = tl.num_programs(0) - 1 - tl.program_id(0)" in body
        assert reversed_ == (not name.startswith("k0_")), name
    assert rv.evicting(out).count("tl.num_programs(0) - 1") == out.count("tl.num_programs(0) - 1")
