"""Pauses Python's cyclic garbage collector while a pass rewrites a large module.

A pass over a 10,000-op fusion creates hundreds of thousands of objects, and
every one of them makes the collector re-scan the whole (long-lived) IR graph:
with the collector running, the time of fusion-segment + fusion-allocate grew
16x from 1,000 to 10,000 ops; paused, 11x (benchmarks/segment_allocate.py).
Collection resumes, and catches up, when the pass ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
