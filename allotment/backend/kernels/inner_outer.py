"""Plans, Triton code and launches of `inner_outer` kernels (`analysis/inner_outer.py`).

An inner-outer kernel's domain is [rows..., N]: its row reductions reduce the
last dim (the plan's `reductions`, the tile's columns as in a normalization
kernel), its column reductions reduce every row dim (`KernelPlan.columns`: each
one's partials buffer [programs, N], an in of the kernel). Three Triton
functions:

- `persistent` (the whole row in one tile, BLOCK_N >= N): program p walks the
  row blocks p, p + programs, ... (grid-stride); per block it computes the row
  reductions and the outputs from registers, as the persistent normalization
  kernel does, and adds the block's column terms (summed over its rows) to one
  [1, BLOCK_N] accumulator per column reduction; at the end it stores the
  accumulators in its row p of the partials. Every input a block reads is
  loaded before its first store (an output may overwrite an input in place);
  values read at the column only (a weight) are loaded once, before the loop,
  and the loop is software-pipelined by the launch blocks (`row_stage_choices`).
- `looped` (the row streamed in BLOCK_N tiles, for a `?` N over the budget at
  run time): the same walk over rows with the looped normalization's passes; the
  last pass over the row adds the column terms tile by tile to the program's
  own partials row in global memory (zeroed first), with a barrier between row
  blocks so that every thread of the program sees the previous block's sums.
- `column_final`: one program per BLOCK_N columns sums the partials over the
  programs in BLOCK_M chunks in a fixed order (deterministic: no atomics),
  divides a mean by the row count M and computes and stores the column
  reductions' outputs (the cast of dw).

The launcher runs the first (the variant the kernel's schedule names, or that
`fits` picks) on `programs` programs, then `column_final`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from xdsl.dialects.builtin import DenseArrayBase, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.analysis.capacity import env_int
from allotment.analysis.inner_outer import is_column_reduction, is_row_reduction
from allotment.backend.host_runtime import inner_outer_tiles
from allotment.backend.kernel_plan import (
    REDUCTIONS,
    CodegenError,
    KernelPlan,
    _natural_maps,
    _place_outputs_and_rows,
    _shape,
    identity_map,
)
from allotment.backend.kernels.emitter import ALL_AXES, GeneratedKernel, InSize
from allotment.backend.kernels.row_reduction import RowEmitter, choose_row_kernel, row_variants, split_row
from allotment.dialects import alloc, fusion
from allotment.dtypes import element_nbytes, triton_dtype


def plan_inner_outer(kernel: alloc.KernelOp) -> KernelPlan:
    """The plan of an inner-outer kernel: outer dims the row dims, inner the last dim,
    `reductions` its row reductions, `columns` its column reductions -> partials in-index."""
    name = kernel.sym_name.data
    block = kernel.body.block
    ops = [op for op in block.ops if not isinstance(op, alloc.YieldOp)]
    reductions = [op for op in ops if isinstance(op, REDUCTIONS)]
    if not reductions:
        raise CodegenError(f"kernel {name!r}: an inner_outer kernel reduces")
    domain = _shape(reductions[0].operands[0])
    rank = len(domain)
    rows = [r for r in reductions if is_row_reduction(r, rank)]
    cols = [r for r in reductions if r not in rows]
    if not cols or any(_shape(r.operands[0]) != domain for r in reductions) or any(
        not is_column_reduction(c, rank) for c in cols
    ):
        raise CodegenError(
            f"kernel {name!r}: an inner_outer kernel has row reductions over its last dim and float sums "
            "or means over its other dims, all of one domain"
        )
    plan = KernelPlan(kernel, "inner_outer", tuple(domain), list(range(rank - 1)), [rank - 1], rows + cols)
    attr = kernel.attributes.get("column_partials")
    indices = [int(i) for i in attr.get_values()] if isinstance(attr, DenseArrayBase) else []
    args = block.args
    if len(indices) != len(cols) or any(
        not 0 <= i < len(args) or len(_shape(args[i])) != 2 or args[i].uses for i in indices
    ):
        raise CodegenError(
            f"kernel {name!r}: `column_partials` must name one unused [programs, N] input per column reduction"
        )
    plan.columns = dict(zip(cols, indices))
    _natural_maps(plan, args, ops)  # with every reduction, so the column inputs are on the domain
    plan.reductions = rows
    for v in column_values(plan):  # on the kept (last) dim only
        shape = _shape(v)
        plan.natural[v] = tuple(None if j < len(shape) - 1 else (rank - 1, 0) for j in range(len(shape)))
    return _place_outputs_and_rows(plan, kernel, args, ops, list(block.last_op.operands))


def column_values(plan: KernelPlan) -> set[SSAValue]:
    """The column reductions' results and the values computed from them."""
    out: set[SSAValue] = set()
    for op in plan.kernel.body.block.ops:
        if op in plan.columns or any(x in out for x in op.operands):
            out.update(r for r in op.results if isinstance(r.type, TensorType))
    return out


def variants(plan: KernelPlan) -> list[str]:
    """The row variants (`row_reduction.row_variants`: the schedule's, and `two_tiles` for a
    `?` row), then the columns' final kernel."""
    return [*row_variants(plan), "column_final"]


class InnerOuterEmitter(RowEmitter):
    """Emits the three functions of an inner-outer kernel (module docstring)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.column_reduced: dict[SSAValue, str] = {}
        self.columns = column_values(self.plan)
        self.storing: Callable[[SSAValue], bool] = lambda v: True

    def emit(self) -> None:
        {"persistent": self.emit_rows_persistent, "two_tiles": self.emit_rows_two_tiles,
         "looped": self.emit_rows_looped, "column_final": self.emit_column_final}[self.variant]()

    def _known(self, v: SSAValue, m: tuple) -> tuple[str, frozenset[str]] | None:
        if v in self.column_reduced:  # a (1, BLOCK_N) tile of the final kernel
            return self.column_reduced[v], frozenset({"n"})
        return super()._known(v, m)

    def store_outputs(self, axes_filter: set[frozenset[str]], only: set[int] | None = None) -> None:
        """The base class's stores of the outputs that `self.storing` selects."""
        chosen = {k for k, v in enumerate(self.block.last_op.operands) if self.storing(v)}
        super().store_outputs(axes_filter, chosen if only is None else chosen & only)

    def _grid_stride(self) -> None:
        self.line("pid = tl.program_id(0)")
        self.line("programs = tl.num_programs(0)")
        self.line("tiles_m = (M + BLOCK_M - 1) // BLOCK_M")

    def _partials_ptr(self, c: Operation, row: str) -> str:
        i = self.plan.columns[c]
        return f"in{i}_ptr + ({row} * in{i}_s0 + rn[None, :] * in{i}_s1)"

    def _accumulate_in_registers(self) -> list[tuple[Operation, str, str]]:
        """One [1, width] accumulator per column reduction, the width of the tile being emitted."""
        accs = []
        for c in self.plan.columns:
            _, _, acc = self.reduce_spec(c)
            a = self.fresh("col")
            self.line(f"{a} = tl.zeros((1, {self.block_n}), {acc})")
            accs.append((c, a, acc))
        return accs

    def _in_tile(self, k: int | None) -> AbstractContextManager[None]:
        """Tile k of a row held as two (`row_part`), or the one tile (k None)."""
        return nullcontext() if k is None else self.row_part(k)

    def _first_tile_live(self) -> None:
        """Makes the first tile's indices the live ones (`row_part`): before the row loop and at
        the end of its body, so that `rn`, `mask_n` and the dims' indices have the same shape
        on every iteration (Triton requires it of a name reassigned in a loop)."""
        if self._live_part != 0:
            self._live_part = 0
            self.emit_inner_indices("0", full=True)

    def emit_rows_persistent(self) -> None:
        """The persistent row loop (module docstring); a static row that
        `host_runtime.inner_outer_tiles` splits is held as two tiles (`emit_rows_two_tiles`)."""
        self.row_split = split_row(self.plan, inner_outer_tiles)
        if self.row_split is not None:
            self.emit_rows_two_tiles(self.row_split[1])
            return
        self._rows_persistent((None,))

    def emit_rows_two_tiles(self, tail: int | None = None) -> None:
        """The persistent row loop over a row held as two tiles, columns [0, BLOCK_N) and
        [BLOCK_N, BLOCK_N + BLOCK_T) (`RowEmitter.emit_two_tiles`): each tile has its own
        column accumulators, hoisted weights and partials store. `tail`: a static row's
        BLOCK_T, defined here; None for the `two_tiles` variant of a `?` row, whose launcher
        passes it (`row_reduction.choose_row_kernel`)."""
        if tail is not None:
            self.line(f"BLOCK_T: tl.constexpr = {tail}")
        self.part_scopes = ({}, {})
        self._rows_persistent((0, 1))

    def _rows_persistent(self, parts: tuple[int | None, ...]) -> None:
        """The persistent row loop over the row's tiles `parts` ((None,): one tile)."""
        self.storing = lambda v: v not in self.columns
        stored = {k for k, v in enumerate(self.block.last_op.operands) if self.storing(v)}
        self._grid_stride()
        if parts == (None,):
            self.emit_inner_indices("0")
        accs: dict[int | None, list[tuple[Operation, str, str]]] = {}
        for k in parts:
            with self._in_tile(k):
                accs[k] = self._accumulate_in_registers()
                # a weight read by the column only is loaded once a program, not once a row
                # block (LayerNorm backward 16384x4096 bf16 147 -> 139 us on an H200, with 3
                # stages 110: `benchmarks/split_loop_variants.py`)
                self.hoist_row_invariants(
                    [(r.operands[0], identity_map(r.operands[0].type.get_shape(), self.plan.domain))
                     for r in self.plan.reductions]
                    + [(v, self.plan.natural[v]) for v in self.block.last_op.operands
                       if self.storing(v) and v in self.plan.natural],
                    axis="m",
                )
        two = parts != (None,)
        if two:
            self._first_tile_live()
            hoisted = self.part_scopes
        choices = self.row_stage_choices()
        branched = len(choices) > 1  # constexpr conditions: Triton compiles the branch taken
        before = dict(self.reduced)
        for b, (condition, stages) in enumerate(choices):
            if branched:
                self.line("else:" if b == len(choices) - 1 else f"{'if' if b == 0 else 'elif'} {condition}:")
            with self.indent() if branched else nullcontext():  # constexpr branches
                self.reduced = dict(before)  # each branch computes the row's reductions itself
                if two:  # and its own values of each tile, over the hoisted ones
                    self.part_scopes = (dict(hoisted[0]), dict(hoisted[1]))
                loop = (f"tl.range(pid, tiles_m, programs, num_stages={stages})" if stages > 1
                        else "range(pid, tiles_m, programs)")
                self.line(f"for tile in {loop}:")
                with self.indent():
                    self.scopes.append({})
                    self.emit_outer_indices("tile")
                    if two:
                        self.two_tile_reductions()
                    else:
                        self.persistent_reductions()
                    for k in parts:  # every load of the block before its first store
                        with self._in_tile(k):
                            for c, a, _ in accs[k]:
                                tile, _, _ = self.reduction_input(c)
                                self.line(f"{a} = {a} + tl.sum({tile}, 0)[None, :]")
                    if two:  # both tiles' values before the first store; the row's own once
                        values = []
                        for k, axes in ((0, {frozenset({"m", "n"}), frozenset({"n"})}), (1, ALL_AXES)):
                            with self.row_part(k):
                                values.append(self.output_values(axes, stored))
                        for k in (0, 1):
                            with self.row_part(k):
                                self.store_values(values[k])
                        self._first_tile_live()
                    else:
                        self.store_outputs(ALL_AXES)
                    self.scopes.pop()
        for k in parts:
            with self._in_tile(k):
                for c, a, _ in accs[k]:
                    i = self.plan.columns[c]
                    pt = triton_dtype(self.block.args[i].type.element_type)
                    self.line(f"tl.store({self._partials_ptr(c, 'pid')}, {self.to(a, pt)}, mask=mask_n)")

    def row_stage_choices(self) -> list[tuple[str, int]]:
        """Software-pipelining stages of the persistent row loop (`tl.range(...,
        num_stages=)`: the next row blocks' loads, through shared memory, overlap this
        block's work), as (constexpr condition on BLOCK_M and BLOCK_N, stages) in the
        order tried, the last one taken when no other holds: LONG_ROW_STAGES for rows
        (BLOCK_N) of LONG_ROW elements or more, ROW_STAGES for shorter ones, each only
        where its stages' tiles of the domain-shaped inputs fit ROW_STAGE_BYTES, else 1
        (a long row whose three stages do not fit is not pipelined: f32 LayerNorm
        backward 16384x4096 `?` took 241 us unpipelined, 308 with two stages). The blocks
        are chosen at launch (`rt.inner_outer_blocks`), so the choice is Triton's, at
        compile time of each specialization, for a static row as for a `?` one.
        ALLOT_ROW_STAGES fixes one count."""
        if os.environ.get("ALLOT_ROW_STAGES", ""):
            return [("", env_int("ALLOT_ROW_STAGES", ROW_STAGES, minimum=1))]
        partials = set(self.plan.columns.values())  # [programs, N]: not read per row block
        per_element = sum(element_nbytes(a.type.element_type) for i, a in enumerate(self.block.args)
                          if i not in partials and isinstance(a.type, TensorType)
                          and tuple(a.type.get_shape()) == tuple(self.plan.domain))

        def fits(stages: int) -> str:
            return f"BLOCK_M * BLOCK_N * {stages * per_element} <= {ROW_STAGE_BYTES}"

        return [(f"BLOCK_N >= {LONG_ROW} and {fits(LONG_ROW_STAGES)}", LONG_ROW_STAGES),
                (f"BLOCK_N < {LONG_ROW} and {fits(ROW_STAGES)}", ROW_STAGES),
                ("", 1)]

    def emit_rows_looped(self) -> None:
        self.storing = lambda v: v not in self.columns
        self._grid_stride()
        self.line("for start in range(0, N, BLOCK_N):")  # this program's partials row: zeros
        with self.indent():
            self.scopes.append({})
            self.emit_inner_indices("start")
            for c in self.plan.columns:
                i = self.plan.columns[c]
                pt = triton_dtype(self.block.args[i].type.element_type)
                self.line(f"tl.store({self._partials_ptr(c, 'pid')}, tl.zeros((1, BLOCK_N), {pt}), mask=mask_n)")
            self.scopes.pop()
        self.line("tl.debug_barrier()")
        self.line("for tile in range(pid, tiles_m, programs):")
        with self.indent():
            self.scopes.append({})
            self.emit_outer_indices("tile")
            self.looped_reductions()
            self.store_outputs({frozenset({"m"}), frozenset()})
            self.line("for start in range(0, N, BLOCK_N):")
            with self.indent():
                self.scopes.append({})
                self.emit_inner_indices("start")
                sums = []
                for c in self.plan.columns:
                    i = self.plan.columns[c]
                    tile, _, acc = self.reduction_input(c)
                    old = self.fresh("old")
                    self.line(f"{old} = tl.load({self._partials_ptr(c, 'pid')}, mask=mask_n, other=0)")
                    new = self.fresh("col")
                    pt = triton_dtype(self.block.args[i].type.element_type)
                    self.line(f"{new} = {self.to(f'({old}.to({acc}) + tl.sum({tile}, 0)[None, :])', pt)}")
                    sums.append((c, new))
                self.store_outputs({frozenset({"m", "n"}), frozenset({"n"})})
                for c, new in sums:
                    self.line(f"tl.store({self._partials_ptr(c, 'pid')}, {new}, mask=mask_n)")
                self.scopes.pop()
            self.line("tl.debug_barrier()")  # the next block reads what this one stored
            self.scopes.pop()

    def emit_column_final(self) -> None:
        self.storing = lambda v: v in self.columns
        self.line("pid = tl.program_id(0)")
        self.emit_inner_indices("pid * BLOCK_N")
        for c in self.plan.columns:
            _, _, acc = self.reduce_spec(c)
            i = self.plan.columns[c]
            programs = self.kernel_extent(self.block.args[i], 0)
            a = self.fresh("acc")
            self.line(f"{a} = tl.zeros((BLOCK_M, BLOCK_N), {acc})")
            self.combine_partials(a, i, programs, "sum", "0", acc, along="m")
            total = self.fresh("tot")
            self.line(f"{total} = tl.sum({a}, 0)[None, :]")
            res = c.results[0]
            name = self.fresh("red")
            rt = triton_dtype(res.type.element_type)
            if isinstance(c, fusion.MeanOp):
                self.line(f"{name} = {self.to(f'({total} / M)', rt)}")
            else:
                self.line(f"{name} = {self.to(total, rt)}")
            self.column_reduced[res] = name
        self.store_outputs({frozenset({"n"}), frozenset()})


ROW_STAGES = 2
"""Stages of the persistent row loop where they fit (`row_stages`). Measured on an H200
(`fusion_suite.py --no-compile`, ALLOT_ROW_STAGES, BENCHMARKS.md), bf16 static: RMSNorm
backward 12345x1111 83 -> 76 us, LayerNorm backward 16384x4096 173 -> 165, the others
within 1%; 3 stages took RMSNorm backward 16384x4096 from 139 to 112 but LayerNorm
backward 12345x1111 from 111 to 197."""

LONG_ROW_STAGES = 3
"""Stages of the persistent row loop over rows of LONG_ROW elements or more. Measured on
an H200 (`benchmarks/split_loop_variants.py`, 2026-12-01 05:26 UTC, one process), bf16
static, with the weight hoisted out of the loop: LayerNorm backward 16384x4096 139 -> 110
us with 3 stages against 2, RMSNorm backward 125 -> 105; LayerNorm backward 12345x1111
(rows of 2048 lanes) 100 -> 103, so shorter rows keep ROW_STAGES. In the suite
(`fusion_suite.py`, 05:36 UTC): LayerNorm backward bf16 16384x4096 `?` 171 -> 124 us
(57% -> 79% of copy), RMSNorm backward 138 -> 112; f32 LayerNorm backward `?` 241 -> 308
with two stages (three do not fit), so a long row is pipelined with three stages or not
at all (`row_stage_choices`)."""

LONG_ROW = 4096

ROW_STAGE_BYTES = 64 * 1024
"""Shared memory the stages' row tiles may take (an H200 SM has 228 KiB)."""


def launch_lines(gen: GeneratedKernel, args: str, in_size: InSize) -> list[str]:
    """The launcher's lines after M, N and use_i64: the row kernel on `programs` programs
    (the variant the schedule names, or that `fits` picks), then `column_final`."""
    plan = gen.plan
    programs = in_size(next(iter(plan.columns.values())), 0) if plan.columns else "1"
    return [
        "    if N == 0:",
        "        return",
        *choose_row_kernel(gen, "inner_outer_blocks", tiles="inner_outer_tiles"),
        f"    rt.launch(kernel, ({programs},), ({args}), {gen.launch_tail})",
        f"    bm, bn, warps = rt.inner_outer_final_blocks(N, {programs})",
        f"    rt.launch({gen.functions['column_final']}, (-(-N // bn),), ({args}), {gen.launch_tail})",
    ]
