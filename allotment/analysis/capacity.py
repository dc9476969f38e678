"""What a target can keep on chip: the capacity model `alloc-place` decides by.

One figure matters to the kernels Allotment generates today: how many bytes
of one reduced row (in the accumulation type: f32 for 16-bit floats) a
reduction or normalization kernel may keep on chip, in registers, for one
pass over memory (a *persistent* kernel). A longer row is streamed in tiles
(a *looped* kernel: one pass per reduction level, plus one).

- `h200`: 128 KiB, a row of 32,768 f32. An H200 SM has 256 KiB of registers
  (64K 32-bit) and up to 228 KiB of shared memory; a persistent CTA of 32
  warps keeps a 32,768-element row in 32 registers per thread for the row
  itself, leaving the rest for the values computed from it. Past that, Triton
  spills and the looped kernel (which reads the row twice or three times but
  keeps a few KiB on chip) is faster.
- `cpu`: the same 128 KiB. Triton's interpreter has no registers (a tile is a
  NumPy array), so the figure only bounds the tile the interpreter builds; it
  is kept equal to the H200's so that both targets run the same schedule and
  the CPU tests exercise the GPU's kernels.

A second figure, `stream_elements`: a row of at least this many elements is
streamed even when it fits, if the streamed kernel reads it once as well
(`analysis/row_passes.py`: its reductions in one loop, online softmax included,
and nothing row-shaped to store: cross-entropy, a log-sum-exp, a row sum).
Holding such a row takes a CTA of 16 or 32 warps, one or two an SM, that loads,
reduces and waits on one row at a time; a streamed kernel keeps many small
programs in flight. H200: 8,193, rows longer than 8,192
(`benchmarks/stream_threshold.py`, cross-entropy over 4096 rows of bf16,
`benchmarks/results/stream_threshold_h200_2026-12-01_0150.txt`: held against
streamed, 47 against 51 us at 8,192 columns, 120 against 70 at 12,288, 122
against 87 at 16,384, 190 against 154 at 32,000). The CPU target mirrors it.

`ALLOT_ON_CHIP_ROW_BYTES` overrides the default of every target (for tuning
and for tests that force looped kernels on tiny rows), `ALLOT_STREAM_ELEMENTS`
the stream threshold (0: never stream a row that fits).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Capacity:
    """A target's on-chip budget for one reduced row, in bytes."""

    target: str
    row_bytes: int
    stream_elements: int = 0
    """Rows of at least this many elements that a streamed kernel reads once are streamed
    even when they fit (0: never)."""

    def row_elements(self, element_bytes: int, rows: int = 1) -> int:
        """The longest row of `element_bytes` elements that fits, when `rows` such rows are
        on chip at once (an inner-outer kernel's row buffers and column accumulators)."""
        return self.row_bytes // max(1, element_bytes) // max(1, rows)


STREAM_ELEMENTS = 8193
"""`stream_elements` of the built-in targets (module docstring)."""

CAPACITIES = {"h200": Capacity("h200", 128 * 1024, STREAM_ELEMENTS), "cpu": Capacity("cpu", 128 * 1024, STREAM_ELEMENTS)}
"""The built-in targets of `alloc-place`."""

PROGRAM_TARGETS = {"cuda": "h200", "cpu": "cpu"}
"""The capacity model each program target (`allotment.compile`) is placed with."""


def capacity(target: str, row_bytes: int = 0) -> Capacity:
    """The capacity of `target` ("h200", "cpu"), `row_bytes` > 0 overriding it, else
    `ALLOT_ON_CHIP_ROW_BYTES` if set; `ALLOT_STREAM_ELEMENTS` overrides the stream
    threshold. Raises ValueError for an unknown target or a value that is not an integer
    in range."""
    if target not in CAPACITIES:
        raise ValueError(f"unknown placement target {target!r}: the targets are {', '.join(CAPACITIES)}")
    if row_bytes < 0:
        raise ValueError(f"on-chip-row-bytes must be positive, not {row_bytes}")
    if row_bytes == 0:
        row_bytes = env_int("ALLOT_ON_CHIP_ROW_BYTES", CAPACITIES[target].row_bytes, minimum=1)
    stream = env_int("ALLOT_STREAM_ELEMENTS", CAPACITIES[target].stream_elements, minimum=0)
    return Capacity(target, row_bytes, stream)


def env_int(name: str, default: int, minimum: int) -> int:
    """The integer in environment variable `name` (`default` when unset or empty); a
    ValueError that names the variable for text that is not an integer of at least
    `minimum`."""
    env = os.environ.get(name, "")
    if not env:
        return default
    try:
        value = int(env)
    except ValueError:
        raise ValueError(f"{name}={env!r} is not an integer") from None
    if value < minimum:
        raise ValueError(f"{name}={env!r} must be {'positive' if minimum == 1 else f'at least {minimum}'}")
    return value
