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

`ALLOT_ON_CHIP_ROW_BYTES` overrides the default of every target (for tuning
and for tests that force looped kernels on tiny rows).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Capacity:
    """A target's on-chip budget for one reduced row, in bytes."""

    target: str
    row_bytes: int

    def row_elements(self, element_bytes: int, rows: int = 1) -> int:
        """The longest row of `element_bytes` elements that fits, when `rows` such rows are
        on chip at once (an inner-outer kernel's row buffers and column accumulators)."""
        return self.row_bytes // max(1, element_bytes) // max(1, rows)


CAPACITIES = {"h200": Capacity("h200", 128 * 1024), "cpu": Capacity("cpu", 128 * 1024)}
"""The built-in targets of `alloc-place`."""

PROGRAM_TARGETS = {"cuda": "h200", "cpu": "cpu"}
"""The capacity model each program target (`allotment.compile`) is placed with."""


def capacity(target: str, row_bytes: int = 0) -> Capacity:
    """The capacity of `target` ("h200", "cpu"), `row_bytes` > 0 overriding it, else
    `ALLOT_ON_CHIP_ROW_BYTES` if set. Raises ValueError for an unknown target or a
    budget that is not a positive integer."""
    if target not in CAPACITIES:
        raise ValueError(f"unknown placement target {target!r}: the targets are {', '.join(CAPACITIES)}")
    if row_bytes < 0:
        raise ValueError(f"on-chip-row-bytes must be positive, not {row_bytes}")
    if row_bytes == 0:
        env = os.environ.get("ALLOT_ON_CHIP_ROW_BYTES", "")
        if env:
            try:
                row_bytes = int(env)
            except ValueError:
                raise ValueError(f"ALLOT_ON_CHIP_ROW_BYTES={env!r} is not an integer") from None
            if row_bytes <= 0:
                raise ValueError(f"ALLOT_ON_CHIP_ROW_BYTES={env!r} must be positive")
    return Capacity(target, row_bytes) if row_bytes else CAPACITIES[target]
