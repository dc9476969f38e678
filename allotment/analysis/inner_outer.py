"""Inner-outer kernels: row reductions and column reductions of one [rows..., N] domain in one pass.

nvFuser's inner-outer persistent scheduler (`normalization_inner_outer`), for
the backward of a normalization (RMSNorm, LayerNorm): dx needs row reductions
(over the last dim N, per row), dw and db column reductions (over every row
dim, per column) of the same inputs dy and x. Two kernels read dy and x twice;
an `inner_outer` kernel reads them once:

- `fusion-segment` merges a column-reduction group into a row-reduction group
  of the same domain (`column_group_ok`, `fits_on_chip`) and gives the segment
  the kind `inner_outer`;
- `fusion-allocate` declares, per column reduction, a `local` accumulator row
  `[N]` (what the kernel keeps on chip for it, next to the row buffers of its
  row reductions: `alloc-place` counts them all against the budget) and a
  global partials buffer `[%programs, N]` in the accumulation type (f32 for
  16-bit floats), listed by in-index in the kernel's `column_partials`
  attribute; `%programs` is computed at entry (`program_count`);
- the backend (`backend/kernels/inner_outer.py`) launches `%programs` programs that
  walk the row blocks grid-stride, compute each row's outputs as a
  normalization kernel does and add the row's column terms to registers,
  storing one partials row per program at the end; then a second kernel that
  sums the partials of each column over the programs in a fixed order
  (deterministic, no atomics), divides a mean by the row count and computes
  the column reductions' outputs (the cast of dw).

Only sums and means of floats are column reductions here (their partials add
up); anything else keeps today's separate kernels (`split_reduction.py`).
"""

from __future__ import annotations

import os

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, TensorType
from xdsl.ir import Attribute, Operation

from allotment.analysis.capacity import Capacity
from allotment.dialects import fusion
from allotment.extents import symbolic as sym
from allotment.extents.dims import dim_set
from allotment.extents.symbolic import Const, Extent

SMS = 132
"""Streaming multiprocessors of an H200."""

PROGRAMS_PER_SM = 2
"""Persistent row programs per SM for rows longer than SHORT_ROW (or of a `?` length). A
program holds its row tile (a row of 4096 f32 is 16 KiB: 32 registers per thread for each of
dy and x at 8 warps, more for the values computed from them) plus one [BLOCK_N] f32
accumulator per column reduction; two such CTAs fit an SM's 64K registers at up to 128
registers per thread, which the H200 runs at full bandwidth."""

SHORT_ROW = 2048
"""Rows of at most this many elements get SHORT_PROGRAMS_PER_SM programs an SM, each a tile
of at most SHORT_ROW lanes on 4 warps (`host_runtime.inner_outer_blocks`: 2 rows of 1024, 1
of 2048, or a row of 1111 held as 1024 + 128 lanes, `host_runtime.inner_outer_tiles`): at most 16
elements a thread of each row-sized value. Longer rows get one row a program on 16 warps and
PROGRAMS_PER_SM programs an SM. The bound was 1024 until rows of 1025 to 2048 were measured
on 4 warps (`benchmarks/inner_outer_sweep.py`, BENCHMARKS.md): at 12345x1111 the old 16-warp
program of one 2048-lane row held 2 rows in flight an SM."""

SHORT_PROGRAMS_PER_SM = 4
"""Programs an SM for short rows. Measured on an H200 (`benchmarks/inner_outer_sweep.py`,
`benchmarks/results/inner_outer_sweep_h200_2026-12-03_1800.txt`), bf16: LayerNorm backward
over 8192 x 1024 59.5 us with 264 programs of 4 rows on 8 warps (137 registers a thread, so
one program an SM: two waves), 24.8 with 512 of 2 rows on 4 warps, against torch.compile's
45.5; over 8192 x 768 58.2 and 22.1 (42.5); RMSNorm backward 36.9 and 20.1 (32.0), 35.4
and 17.1 (28.8). The same tile on 2 programs an SM was not measured, nor at a `?` length."""

INNER_OUTER_PROGRAMS = int(os.environ.get("ALLOT_INNER_OUTER_PROGRAMS", str(SMS * PROGRAMS_PER_SM)))
"""The most programs (partials rows) an inner-outer kernel over long rows launches.
`ALLOT_INNER_OUTER_PROGRAMS` overrides it, and SHORT_PROGRAMS too (for sweeps)."""

SHORT_PROGRAMS = int(os.environ.get("ALLOT_INNER_OUTER_PROGRAMS", str(SMS * SHORT_PROGRAMS_PER_SM)))
"""The most programs an inner-outer kernel over static rows of at most SHORT_ROW launches."""

ROWS_PER_PROGRAM_MIN = 16
"""At least this many rows per program: each program writes (and the second kernel reads) N
f32 partials per column reduction, which should stay small next to its rows' traffic."""

COLUMN_REDUCTIONS = (fusion.SumOp, fusion.MeanOp)
"""Column reductions an inner-outer kernel accumulates (their partial sums add up)."""

_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)


def most_programs(row: Extent | None = None) -> Extent:
    """The cap on `%programs` for rows of extent `row`: SHORT_PROGRAMS for a row of at most
    SHORT_ROW elements, else INNER_OUTER_PROGRAMS (None: a row of unknown length). A row of
    `?` length gets the same rule as an expression evaluated at entry:
    SHORT_PROGRAMS - (SHORT_PROGRAMS - INNER_OUTER_PROGRAMS) * min(1, row // (SHORT_ROW + 1))
    (rows are at least 1 long where the kernel runs; an empty row launches nothing)."""
    if row is None:
        return Const(INNER_OUTER_PROGRAMS)
    if isinstance(row, Const):
        return Const(SHORT_PROGRAMS if row.value <= SHORT_ROW else INNER_OUTER_PROGRAMS)
    longer = sym.minimum(sym.floordiv(row, Const(SHORT_ROW + 1)), Const(1))  # 1 past SHORT_ROW, else 0
    return sym.sub(Const(SHORT_PROGRAMS), sym.mul(Const(SHORT_PROGRAMS - INNER_OUTER_PROGRAMS), longer))


def program_count(rows: Extent, row: Extent | None = None) -> Extent:
    """`%programs`: max(1, min(ceildiv(rows, ROWS_PER_PROGRAM_MIN), most_programs(row)))."""
    by_rows = sym.ceildiv(rows, Const(ROWS_PER_PROGRAM_MIN))
    return sym.maximum(sym.minimum(by_rows, most_programs(row)), Const(1))


def accumulation_bytes(t: Attribute) -> int:
    """Bytes of one accumulated element: f64 stays f64, every other float accumulates in f32."""
    return 8 if isinstance(t, Float64Type) else 4


def is_column_reduction(op: Operation, rank: int) -> bool:
    """A sum or mean of floats over every dim but the last (keepdim or not)."""
    if not isinstance(op, COLUMN_REDUCTIONS):
        return False
    dims = dim_set(op.dims.get_values(), rank)
    src, res = op.operands[0].type, op.results[0].type
    return (
        rank >= 2
        and dims == list(range(rank - 1))
        and isinstance(src, TensorType)
        and isinstance(res, TensorType)
        and isinstance(src.element_type, _FLOATS)
        and isinstance(res.element_type, _FLOATS)
    )


def is_row_reduction(op: Operation, rank: int) -> bool:
    """A reduction over the last dim only."""
    dims = dim_set(op.dims.get_values(), rank)
    return rank >= 2 and dims == [rank - 1]


def fits_on_chip(row: int, element_bytes: list[int], cap: Capacity) -> bool:
    """Whether a static row of `row` elements fits on chip once per reduction of the kernel
    (its row reductions' rows and its column reductions' accumulators, `element_bytes` the
    accumulation bytes of each): the same budget `alloc-place` applies to the kernel's
    local buffers (`Capacity.row_elements`)."""
    return all(row <= cap.row_elements(b, len(element_bytes)) for b in element_bytes)
