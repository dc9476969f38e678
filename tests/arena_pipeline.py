"""The `always_pack` fixture the arena tests share: the compile pipeline with
`alloc-plan{arena-always=true}`, poison mode on, and fresh program caches (on disk and
in memory), so that every transient of a compiled fusion is an arena slot."""

from __future__ import annotations

from pathlib import Path

import pytest

import allotment.passes.pipeline as pipeline
from allotment.driver import runtime
from allotment.passes.alloc_plan import AllocPlanPass


@pytest.fixture
def always_pack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    original = pipeline.compile_passes

    def passes(target: str = "cuda") -> list:
        return [AllocPlanPass(arena_always=True) if p.name == "alloc-plan" else p for p in original(target)]

    monkeypatch.setattr(pipeline, "compile_passes", passes)
    monkeypatch.setenv("ALLOT_POISON", "1")
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
