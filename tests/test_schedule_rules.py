"""The launch-shape rules of the scheduler checked against the figures of the GPU they are
for (an H200: 132 SMs, 64K 32-bit registers and 2048 threads an SM): a rule that follows
from the hardware is tested as that argument, not as a number copied from the code."""

from __future__ import annotations

import pytest

from allotment.analysis import split_reduction
from allotment.backend import host_runtime as rt
from allotment.extents.symbolic import Const

SMS = 132
REGISTERS_PER_SM = 65536
THREADS_PER_SM = 2048


@pytest.mark.parametrize("n", [16384 * 4096, 12345 * 1111, 5000])
def test_a_full_f32_reductions_first_stage_is_one_wave(n: int) -> None:
    """A full reduction (m = 1) of f32 launches SPLIT_TARGET_PROGRAMS first-stage programs,
    eight an SM; all of them are resident at once (one wave) for any kernel of up to 64
    registers a thread. The old tile (4096 elements, 8 warps) ran 40 registers a thread on an
    H200, six CTAs an SM: 1.33 waves."""
    splits = split_reduction.split_count(Const(n), Const(1))
    assert isinstance(splits, Const)
    bm, bn, warps = rt.outer_blocks(1, n, splits.value, 4)
    assert bm == 1 and bn <= rt.full_tile(4)
    programs = min(splits.value, split_reduction.SPLIT_TARGET_PROGRAMS)
    per_sm = -(-programs // SMS)
    threads = warps * 32
    assert per_sm * threads <= THREADS_PER_SM
    assert REGISTERS_PER_SM // (per_sm * threads) >= 64
    assert bn // threads <= 16  # at most 16 accumulated elements a thread
    if n >= 2 * rt.full_tile(4):
        assert bn == rt.full_tile(4) and bn // threads >= 8  # at least one 16-byte load a thread a step


@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8])
def test_a_full_reductions_step_reads_the_same_bytes_for_every_element_size(element_bytes: int) -> None:
    """Every element size reads FULL_TILE_BYTES a step (bf16 at 2048 elements a step and 4
    warps ran 20% slower than at 4096 and 8 on an H200) with 4 to 8 warps: 16 elements a
    thread from 2 to 4 bytes an element."""
    bm, bn, warps = rt.outer_blocks(1, 1 << 26, 1056, element_bytes)
    assert bm == 1 and 4 <= warps <= 8
    assert bn * element_bytes == rt.FULL_TILE_BYTES
    assert rt.outer_blocks(1, 1 << 26, 1056, 2)[1:] == (4096, 8)
    assert rt.outer_blocks(1, 1 << 26, 1056, 4)[1:] == (2048, 4)


@pytest.mark.parametrize("n", [600, 1025, 1111, 1536, 3000, 5003, 12000, 20000])
def test_a_row_held_as_two_tiles_uses_fewer_lanes_and_covers_it(n: int) -> None:
    """`row_tiles`: a row that its one power-of-two tile would leave more than 15% idle is
    held as a main tile (a power of two, within the row: no mask needed) and a tail tile
    that covers the rest, using at least 15% fewer lanes than the one tile."""
    main, tail = rt.row_tiles(n)
    whole = 1 << (n - 1).bit_length()
    assert tail > 0
    assert main & (main - 1) == 0 and tail & (tail - 1) == 0
    assert main < n <= main + tail
    assert main + tail <= rt.ROW_TILE_USE * whole
    assert main >= rt.ROW_SPLIT_MIN and tail >= rt.ROW_TAIL_MIN
    assert rt.row_tiles(n, split=False) == (whole, 0)  # the old rule, for A/B runs
    bm, bn, warps = rt.persistent_blocks(12345, n, main)
    one_bm, _, one_warps = rt.persistent_blocks(12345, n)
    assert bm == one_bm and bn == main  # the rows a program are the one tile's
    # the warps are the one tile's, fewer where a thread would hold under 16 of the two tiles' lanes
    lanes = bm * (main + tail)
    assert 4 <= warps <= one_warps
    assert warps == 4 or lanes >= rt.ROW_ELEMENTS_A_THREAD * 32 * warps
    assert warps == one_warps or lanes < rt.ROW_ELEMENTS_A_THREAD * 32 * (2 * warps)
    assert rt.persistent_blocks(12345, n, main, lanes_warps=False) == (one_bm, main, one_warps)  # the old rule


def test_rows_of_1111_take_4_warps_and_one_tile_rows_keep_theirs() -> None:
    """The A/B of 2026-12-07 (H100): 2 x (1024 + 128) lanes over 4 warps (18 a thread) read
    5 to 18% faster than over the 2 x 2048 tile's 8 warps (9 a thread) in all 18 bf16
    cases. Rows that one tile holds keep the one tile's warps (16 a thread)."""
    assert rt.persistent_blocks(12345, 1111, 1024) == (2, 1024, 4)
    assert rt.persistent_blocks(12345, 999) == (4, 1024, 8)
    assert rt.persistent_blocks(16384, 4096) == (1, 4096, 8)
    assert rt.persistent_blocks(16384, 5000, 4096) == (1, 4096, 8)  # 5120 lanes: 20 a thread over 8 warps


@pytest.mark.parametrize("n", [1, 3, 96, 500, 1000, 1024, 1999, 2048, 4096, 32000])
def test_a_row_that_one_tile_fills_or_a_narrow_row_stays_one_tile(n: int) -> None:
    """Rows whose power-of-two tile is at least 85% used (1999 of 2048; 32000 of 32768), or
    whose split would save too little (1999: 1024 + 1024), or narrower than two ROW_SPLIT_MIN
    tiles (96, 500) stay one tile."""
    main, tail = rt.row_tiles(n)
    assert tail == 0 and main == 1 << max(0, (n - 1).bit_length())


@pytest.mark.parametrize(("dtype", "nbytes"), [("bf16", 2), ("f16", 2), ("f32", 4)])
def test_a_full_reductions_step_is_sized_by_its_input_not_its_partials(dtype: str, nbytes: int) -> None:
    """The first stage of a full sum is sized by the element it reads: its f32 partials
    buffer, read only by the second stage, does not count (it made every bf16 sum take the
    f32 step: 2048 elements and 4 warps, 20% slower on an H200)."""
    import allotment

    text = f"""func.func @full_sum(%x: tensor<?x?x{dtype}>) -> tensor<f32> {{
  %t1 = fusion.cast %x : tensor<?x?x{dtype}> to tensor<?x?xf32>
  %t2 = fusion.sum %t1 dims [0, 1] : tensor<?x?xf32> -> tensor<f32>
  func.return %t2 : tensor<f32>
}}"""
    src = allotment.compile(text).source("cuda")
    calls = [line.strip() for line in src.splitlines() if "rt.outer_blocks(" in line]
    assert calls and all(c.endswith(f", {nbytes})") for c in calls)
    assert rt.outer_blocks(1, 1 << 26, 1056, nbytes)[1] * nbytes == rt.FULL_TILE_BYTES


@pytest.mark.parametrize("n", [768, 1024, 256, 1536, 2048])
def test_short_inner_outer_rows_fill_an_sm_with_four_programs(n: int) -> None:
    """An inner-outer kernel over rows of at most 2048 launches up to four programs an SM; its
    tile of 2048 elements on 4 warps leaves each thread 16 elements of each row-sized value,
    so that four such programs fit an SM's registers at up to 128 registers a thread (the
    old 4 x 1024 tile on 8 warps ran 137 registers on an H200: one program an SM)."""
    from allotment.analysis import inner_outer

    bm, bn, warps = rt.inner_outer_blocks(8192, n)
    assert bn == 1 << (n - 1).bit_length() and bm * bn == rt.SHORT_ROW_TILE and warps == 4
    per_sm = inner_outer.SHORT_PROGRAMS // SMS
    assert per_sm == 4 and per_sm * warps * 32 <= THREADS_PER_SM
    assert per_sm * warps * 32 * 128 <= REGISTERS_PER_SM
    assert rt.SHORT_ROW_TILE // (warps * 32) == 16
    assert rt.inner_outer_blocks(8192, 2049) == (1, 4096, 16)  # long rows: one a program, 16 warps
