"""Row reductions and normalizations: the reduced dims are the tile's columns, BLOCK_M rows
a program.

- persistent: the whole reduced row fits in one tile (BLOCK_N >= row length): every
  reduction and every output is computed from registers in one pass over memory. A
  static row that its power-of-two tile would leave more than 15% idle is held as two
  tiles instead (`host_runtime.row_tiles`, `emit_two_tiles`: rows of 1111 in 1024 + 128
  lanes), still one pass. A row of `?` length also gets that form as its `two_tiles`
  variant (`row_variants`), which the launcher picks by the same rule at run time.
- looped: one loop over the row per reduction level (a reduction that needs another's
  result is a level higher), then one more loop that computes and stores the
  full-domain outputs. A softmax's max and sum of exp(x - max) (in f32) share one loop
  with online rescaling, so a long-row softmax reads its row twice, not three times.

Which of the two a kernel gets is `alloc-place`'s decision, in the IR (the kernel's
`schedule`); with `schedule(persistent if %fits else looped)` both are generated and the
launcher launches the one `%fits` names: `schedule_variants` and `choose_row_kernel` are
that expansion's one home, for every kind with row variants (this one, split reductions'
inner splits, inner-outer kernels). The launcher picks the block sizes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from allotment.analysis.one_hot import OneHot, one_hot_pick
from allotment.analysis.row_passes import online_softmax_pairs, streamed_levels
from allotment.backend.host_runtime import row_tiles
from allotment.backend.kernel_plan import REDUCTIONS, CodegenError, KernelPlan, Map, identity_map
from allotment.backend.kernels.emitter import ALL_AXES, Emitter, GeneratedKernel, InSize
from allotment.dialects import fusion
from allotment.dtypes import triton_dtype

ALL = frozenset({"m", "n"})


def schedule_variants(plan: KernelPlan) -> list[str]:
    """The row variants the kernel's schedule names: persistent, looped, or both when the
    choice is made at run time (`persistent_if`). A reducing kernel that was never placed
    is an error: the backend follows the IR and decides nothing itself."""
    schedule = plan.kernel.schedule_name
    if schedule is None:
        raise CodegenError(f"kernel {plan.name!r} reduces but has no schedule: run alloc-place first")
    return ["persistent", "looped"] if schedule == "persistent_if" else [schedule]


def row_variants(plan: KernelPlan) -> list[str]:
    """`schedule_variants`, and after a persistent variant whose row has a `?` length
    (`tiles_at_run_time`) the `two_tiles` one: the same row held as two tiles whose second
    width is the BLOCK_T constexpr, launched where `host_runtime.row_tiles` splits the
    call's row (rows of 1111 in 1024 + 128 lanes, as a static row of 1111 is generated)."""
    names = schedule_variants(plan)
    if "persistent" in names and tiles_at_run_time(plan):
        names.insert(names.index("persistent") + 1, "two_tiles")
    return names


def tiles_at_run_time(plan: KernelPlan) -> bool:
    """Whether a row kernel's row length is only known when it is launched (some reduced dim
    has a `?` extent): its two-tile choice (`host_runtime.row_tiles`) is then the launcher's."""
    return any(plan.extents[d].static is None for d in plan.inner)


def choose_row_kernel(gen: GeneratedKernel, persistent_blocks: str, indent: str = "    ",
                      tiles: str = "row_tiles") -> list[str]:
    """The launcher's lines that set `kernel, (bm, bn, warps)` to the row variant the schedule
    names, or (`persistent_if`) to the one that the host program's `fits` picks;
    `persistent_blocks` is the host runtime's block choice of the persistent variant. With
    a `two_tiles` variant they also set `tail` (0 before them: `host_codegen`) to the
    second tile's width where `host_runtime.row_tiles` (or the kind's own rule, `tiles`)
    splits the call's row."""
    fn = gen.functions
    main = f", {gen.row_split[0]}" if gen.row_split is not None else ""  # a row held as two tiles
    persistent = f"{fn['persistent']}, rt.{persistent_blocks}(M, N{main})" if "persistent" in fn else ""
    looped = f"{fn['looped']}, rt.looped_blocks(M, N)" if "looped" in fn else ""
    chosen = [f"kernel, (bm, bn, warps) = {persistent}"]
    if "two_tiles" in fn:  # a `?` row: two tiles where `row_tiles` splits this call's row
        chosen = [f"main, tail = rt.{tiles}(N)", "if tail:",
                  f"    kernel, (bm, bn, warps) = {fn['two_tiles']}, rt.{persistent_blocks}(M, N, main)",
                  "else:", f"    {chosen[0]}"]
    if gen.plan.kernel.schedule_name == "persistent_if":  # alloc-place's run-time condition
        return [f"{indent}if fits:", *(f"{indent}    {c}" for c in chosen), f"{indent}else:",
                f"{indent}    kernel, (bm, bn, warps) = {looped}"]
    if not persistent:
        return [f"{indent}kernel, (bm, bn, warps) = {looped}"]
    return [f"{indent}{c}" for c in chosen]


def row_launch(gen: GeneratedKernel, args: str) -> str:
    """The launch of the row variant `choose_row_kernel` chose: BLOCK_M rows a program over
    cdiv(M, BLOCK_M) programs. `rows=M` lets the launcher halve the rows a program at the
    specialization's first launch (`resident_rows`), which only such a grid allows."""
    return f"    rt.launch(kernel, (-(-M // bm),), ({args}), {gen.launch_tail}, rows=M)"


def launch_lines(gen: GeneratedKernel, args: str, in_size: InSize) -> list[str]:
    """The launcher's lines after M, N and use_i64: the chosen row variant (`row_launch`)."""
    return ["    if M == 0:", "        return", *choose_row_kernel(gen, "persistent_blocks"), row_launch(gen, args)]


def split_row(plan: KernelPlan, tiles: Callable[[int], tuple[int, int]] | None = None) -> tuple[int, int] | None:
    """(main, tail) where a row kernel's persistent variant holds its row as two tiles
    (`host_runtime.row_tiles`, the rule, or the kind's own, `tiles`): only rows of a static
    length; None otherwise."""
    n = 1
    for d in plan.inner:
        extent = plan.extents[d].static
        if extent is None:
            return None
        n *= extent
    main, tail = (tiles or row_tiles)(n)
    return (main, tail) if tail else None


class RowEmitter(Emitter):
    """Emits the persistent or the looped function of a row-reducing kernel; the kinds that
    reduce rows too (`split_reduction.SplitEmitter`, `inner_outer.InnerOuterEmitter`) build
    on it."""

    def emit(self) -> None:
        {"persistent": self.emit_persistent, "two_tiles": self.emit_persistent_two_tiles,
         "looped": self.emit_looped}[self.variant]()

    # -- the reductions' building blocks (row, split and inner-outer kernels) -------------

    def hoist_row_invariants(self, roots: Sequence[tuple[SSAValue, Map]], axis: str = "n") -> None:
        """Emits, in the current scope (before a loop over the row's tiles), every value that
        the roots read at a map without `axis`: with "n", a per-row value (a label, a row's
        scale) is loaded and computed once a row, not once a tile; with "m" (before a loop
        over row blocks whose tile holds the whole row), a per-column value (a weight) once
        a program, not once a row block. The loop body finds it in this scope. One
        iterative walk over the operands, each (value, map) pair once."""
        if self.guards:
            return
        seen: set[tuple[SSAValue, Map]] = set()
        stack = list(roots)
        invariant: list[tuple[SSAValue, Map]] = []
        while stack:
            x, xm = stack.pop()
            if (x, xm) in seen or not isinstance(x.type, TensorType):
                continue
            seen.add((x, xm))
            if axis not in self.axes_of(xm):
                invariant.append((x, xm))
                continue
            stack.extend(self.operand_maps(x, xm))
        for x, xm in invariant:
            self.value(x, xm)

    def reduce_tile(self, tile: str, how: str) -> str:
        if how == "sum":
            return f"tl.sum({tile}, 1)[:, None]"
        combine = {"prod": "_mul_combine", "max": "_max_nan", "min": "_min_nan"}[how]
        return f"tl.reduce({tile}, 1, {self.helper(combine)})[:, None]"

    def combine(self, acc: str, x: str, how: str) -> str:
        if how in ("max", "min"):
            return f"{self.helper(f'_{how}_nan')}({acc}, {x})"
        return f"{acc} + {x}" if how == "sum" else f"{acc} * {x}"

    def combine_partials(self, a: str, i: int, count: str, how: str, neutral: str, acc: str, along: str) -> None:
        """The partials loop: combines into the [BLOCK_M, BLOCK_N] accumulator `a` the `count`
        partials [count, kept] of input i in their order (deterministic: no atomics), a tile
        of them a step. Along "n" (a split reduction's `split_final`): the partials run along
        the tile's columns, its rows are the kept indices; along "m" (an inner-outer kernel's
        `column_final`): along its rows, its columns the kept indices."""
        block = "BLOCK_N" if along == "n" else "BLOCK_M"
        if along == "n":
            ptr, mask = f"rs[None, :] * in{i}_s0 + rm[:, None] * in{i}_s1", f"mask_m & (rs < {count})[None, :]"
        else:
            ptr, mask = f"rs[:, None] * in{i}_s0 + rn[None, :] * in{i}_s1", f"(rs < {count})[:, None] & mask_n"
        self.line(f"for start in range(0, {count}, {block}):")
        with self.indent():
            self.line(f"rs = start + tl.arange(0, {block})")
            part = self.fresh("ld")
            self.line(f"{part} = tl.load(in{i}_ptr + ({ptr}), mask={mask}, other={neutral})")
            self.line(f"{a} = {self.combine(a, f'{part}.to({acc})', how)}")

    def reduction_input(self, r: Operation, mean_of: str | None = None) -> tuple[str, str, str]:
        """Emits r's input tile (masked with the neutral element) in the current scope."""
        neutral, how, acc = self.reduce_spec(r)
        src = r.operands[0]
        x, _ = self.value(src, identity_map(src.type.get_shape(), self.plan.domain))
        name = self.fresh("red_in")
        expr = f"{x}.to({acc})"
        if mean_of is not None:
            expr = f"({expr} - {mean_of})"
            expr = f"{expr} * {expr}"
        elif isinstance(r, fusion.SumOp | fusion.MeanOp) and self.zero_where_masked(src):
            self.line(f"{name} = {expr}")  # its masked lanes already hold the neutral 0
            return name, how, acc
        self.line(f"{name} = tl.where(mask_m & mask_n, tl.broadcast_to({expr}, {self.tile_shape(ALL)}), {neutral})")
        return name, how, acc

    def zero_where_masked(self, v: SSAValue) -> bool:
        """Whether v, at its identity map, is 0 in every lane that `mask_m & mask_n` masks,
        so that a sum needs no `tl.where` over its input (one select a lane a step less: a
        sum over the 7 rows of a bf16 [7, 1999, 1111] took 18.4 to 19.0 us instead of 20.3
        to 20.8 on the H200, `benchmarks/short_outer_variants.py`). True where v is built
        from loads of kernel inputs at maps over both axes (masked with `other=0`, so 0
        there) by casts, negations, absolute values, additions, subtractions and products
        of such values only (0 * x is not 0 for an infinite x, so both factors must be 0).
        Anything else (a constant, a broadcast along an axis, a view at moved indices, exp,
        a division) may be nonzero in masked lanes and keeps the select. Iterative: the
        chains it walks are as long as the kernel's."""
        stack = [(v, identity_map(v.type.get_shape(), self.plan.domain))]
        seen: set[tuple[SSAValue, Map]] = set()
        while stack:
            x, m = stack.pop()
            if (x, m) in seen:
                continue
            seen.add((x, m))
            if not isinstance(x.type, TensorType):
                return False
            op = x.owner
            if not isinstance(op, Operation):
                if x not in self.arg_index or self.axes_of(m) != {"m", "n"}:
                    return False
                continue
            if isinstance(op, REDUCTIONS) or not isinstance(
                op, fusion.CastOp | fusion.NegOp | fusion.AbsOp | fusion.AddOp | fusion.SubOp | fusion.MulOp
            ):
                return False
            pairs = self.operand_maps(x, m)
            if len(pairs) != len(op.operands):  # a scalar operand
                return False
            stack.extend(pairs)
        return True

    def finish_reduction(self, r: Operation, total: str, how: str, acc: str, count: str) -> None:
        res = r.results[0]
        rt = res.type.element_type
        name = self.fresh("red")
        if isinstance(r, fusion.MeanOp):
            self.line(f"{name} = {self.to(f'({total} / ({count}))', triton_dtype(rt))}")
        else:
            self.line(f"{name} = {self.to(total, triton_dtype(rt))}")
        self.reduced[res] = name

    # -- row variants ----------------------------------------------------------------

    def reduction_levels(self) -> list[list[Operation]]:
        """The reductions grouped by level: a reduction whose input depends on another's
        result is a level higher (var_mean two). One forward pass over the block, no recursion."""
        depth: dict[SSAValue, int] = {}
        level: dict[Operation, int] = {}
        for op in self.block.ops:
            d = max((depth.get(x, 0) for x in op.operands), default=0)
            if isinstance(op, REDUCTIONS):
                level[op] = d + (2 if isinstance(op, fusion.VarMeanOp | fusion.WelfordOp) else 1)
                d = level[op]
            for r in op.results:
                depth[r] = d
        out: dict[int, list[Operation]] = {}
        for r in self.plan.reductions:
            out.setdefault(level[r], []).append(r)
        return [out[k] for k in sorted(out)]

    def streamed_groups(self) -> list[list[Operation]]:
        """The reductions grouped by the loop over the row that a streamed kernel computes
        them in (`analysis/row_passes.streamed_levels`, the rule `alloc-place` counts by)."""
        level = streamed_levels(self.block, self.plan.reductions)
        out: dict[int, list[Operation]] = {}
        for r in self.plan.reductions:
            out.setdefault(level[r], []).append(r)
        return [out[k] for k in sorted(out)]

    def emit_persistent(self) -> None:
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        self.row_split = split_row(self.plan)
        if self.row_split is not None:
            self.emit_two_tiles(self.row_split[1])
            return
        self.emit_inner_indices("0")
        self.persistent_reductions()
        self.store_outputs(ALL_AXES)

    def emit_persistent_two_tiles(self) -> None:
        """The `two_tiles` variant of a `?` row (`row_variants`): `emit_two_tiles` with the
        tail width BLOCK_T a constexpr parameter that the launcher passes."""
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        self.emit_two_tiles(None)

    # -- a row held as two tiles (`host_runtime.row_tiles`) ---------------------------

    def emit_two_tiles(self, tail: int | None) -> None:
        """The persistent variant of a row held as two tiles: columns [0, BLOCK_N) (BLOCK_N =
        the main width, at most N: no mask on the column) and [BLOCK_N, BLOCK_N + BLOCK_T)
        (masked at N), each with the scope of values it computed (`row_part`). A reduction
        reduces each tile and combines the two partials; a var_mean's second pass takes the
        mean of both. Every output's values of both tiles are computed before the first
        store (as `store_outputs` does for one tile); the row's own outputs (mean, rstd) are
        stored once, with the second tile (whose indices are live by then). `tail`: the
        static row's BLOCK_T, defined here; None where it is the kernel's parameter (a `?`
        row, whose launcher makes sure that BLOCK_N < N)."""
        if tail is not None:
            self.line(f"BLOCK_T: tl.constexpr = {tail}")
        self.part_scopes: tuple[dict, dict] = ({}, {})
        self.two_tile_reductions()
        values = []
        for k, axes in ((0, {frozenset({"m", "n"}), frozenset({"n"})}), (1, ALL_AXES)):
            with self.row_part(k):
                values.append(self.output_values(axes))
        for k in (0, 1):
            with self.row_part(k):
                self.store_values(values[k])

    _pending_part: int | None = None
    """The tile (`row_part`) whose indices the next line needs, if they are not the live ones."""
    _live_part: int | None = None
    """The tile whose indices the names `rn`, `mask_n`, `i<d>` hold at this point of the body."""

    @contextmanager
    def row_part(self, k: int) -> Iterator[None]:
        """Emits, within this context, in tile k (0 or 1) of a row held as two: with its scope
        of computed values, and its indices (the names `rn`, `mask_n`, `i<d>` are the tile's),
        emitted before the first line the context emits unless they are the live ones."""
        self.scopes.append(self.part_scopes[k])
        self.block_n = ("BLOCK_N", "BLOCK_T")[k]
        self._pending_part = k
        try:
            yield
        finally:
            self._pending_part = None
            self.block_n = "BLOCK_N"
            self.scopes.pop()

    def line(self, text: str) -> None:
        k = self._pending_part
        if k is not None:  # the first line in tile k (`row_part`): its indices first
            self._pending_part = None
            if self._live_part != k:
                self._live_part = k
                self.emit_inner_indices(("0", "BLOCK_N")[k], full=k == 0)
        super().line(text)

    def two_tile_reductions(self) -> None:
        """`persistent_reductions` over a row held as two tiles: each reduction's partial of
        each tile, combined (a one-hot pick reads its one element, from the first tile's scope)."""
        for group in self.reduction_levels():
            for r in group:
                if (pick := self.picks_one_hot(r)) is not None:
                    with self.row_part(0):
                        self.pick_one_hot(r, pick)
                    continue
                sums: list[str] = []
                for k in (0, 1):
                    with self.row_part(k):
                        tile, how, acc = self.reduction_input(r)
                        part = self.fresh("part")
                        self.line(f"{part} = {self.reduce_tile(tile, how)}")
                        sums.append(part)
                total = self.fresh("acc")
                self.line(f"{total} = {self.combine(sums[0], sums[1], how)}")
                if not isinstance(r, fusion.VarMeanOp | fusion.WelfordOp):
                    self.finish_reduction(r, total, how, acc, "N")
                    continue
                mean = self.fresh("mu")
                self.line(f"{mean} = {total} / N")
                squares: list[str] = []
                for k in (0, 1):
                    with self.row_part(k):
                        tile2, _, _ = self.reduction_input(r, mean_of=mean)
                        part = self.fresh("part")
                        self.line(f"{part} = {self.reduce_tile(tile2, how)}")
                        squares.append(part)
                sq = self.fresh("sq")
                self.line(f"{sq} = {squares[0]} + {squares[1]}")
                self.var_mean_parts(r, mean, sq, acc)

    def picks_one_hot(self, r: Operation) -> OneHot | None:
        """Reduction r's parts if it is a one-hot sum over this kernel's row
        (`analysis.one_hot`): `pick_one_hot` then reads its one element instead of
        reducing the row."""
        pick = one_hot_pick(r)
        return pick if pick is not None and tuple(self.plan.inner) == (pick.dim,) else None

    def pick_one_hot(self, r: Operation, pick: OneHot) -> None:
        """A one-hot sum's value (`analysis.one_hot`): the row's element at the label, read
        once per row (no compare and add per element: cross-entropy over 4096x32000 bf16
        123.6 -> 86.7 us on an H200 beside the other looped-kernel changes,
        `benchmarks/looped_kernel_variants.py`), plus 0 (a picked -0.0 sums to +0.0), or 0
        where the label is out of [0, N) (an ignored label such as -100)."""
        d = pick.dim
        label, _ = self.value(pick.label, identity_map(pick.label.type.get_shape(), self.plan.domain))
        n = self.extent(d)
        ok, col = self.fresh("ok"), self.fresh("col")
        self.line(f"{ok} = ({label} >= 0) & ({label} < {n})")
        self.line(f"{col} = tl.minimum(tl.maximum({label}, 0), {n} - 1).to(tl.int64)")
        m = list(identity_map(pick.value.type.get_shape(), self.plan.domain))
        if m[d] is not None:  # read at the label's column (a constant index of the row)
            m[d] = (None, f"-{col}")
        x, _ = self.value(pick.value, tuple(m))
        _, _, acc = self.reduce_spec(r)
        total = self.fresh("pick")
        self.line(f"{total} = tl.where({ok}, {x}.to({acc}) + 0, 0).to({acc})")
        self.finish_reduction(r, total, "sum", acc, "N")

    def persistent_reductions(self) -> None:
        """Every reduction of the tile's rows, from registers (the row is one tile)."""
        for group in self.reduction_levels():
            for r in group:
                if (pick := self.picks_one_hot(r)) is not None:
                    self.pick_one_hot(r, pick)
                    continue
                if isinstance(r, fusion.VarMeanOp | fusion.WelfordOp):
                    tile, how, acc = self.reduction_input(r)
                    mean = self.fresh("mu")
                    self.line(f"{mean} = {self.reduce_tile(tile, how)} / N")
                    tile2, _, _ = self.reduction_input(r, mean_of=mean)
                    total = self.fresh("sq")
                    self.line(f"{total} = {self.reduce_tile(tile2, how)}")
                    self.var_mean_parts(r, mean, total, acc)
                    continue
                tile, how, acc = self.reduction_input(r)
                total = self.fresh("acc")
                self.line(f"{total} = {self.reduce_tile(tile, how)}")
                self.finish_reduction(r, total, how, acc, "N")

    def row_loop(self, body: Callable[[], None]) -> None:
        """A loop over the row's tiles, emitted as two: the full tiles with no mask on the
        reduced index, then the last partial tile (if any) masked; `body` emits one tile's
        work (in its own scope, after the tile's indices). Full tiles load, reduce and store
        without a per-element mask (cross-entropy over 1234 rows of 50257, hand-written on an
        H200: 130 -> 76 us with 1024 x 4 blocks, `benchmarks/softmax_loop_variants.py`)."""
        self.line("n_full = N // BLOCK_N * BLOCK_N")
        for full in (True, False):
            self.line("for start in range(0, n_full, BLOCK_N):" if full else "for start in range(n_full, N, BLOCK_N):")
            with self.indent():
                self.scopes.append({})
                self.emit_inner_indices("start", full)
                body()
                self.scopes.pop()

    def emit_looped(self) -> None:
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        self.looped_reductions()
        self.store_outputs({frozenset({"m"}), frozenset()})
        yielded = list(self.block.last_op.operands)
        if any("n" in self.axes_of(self.plan.natural[v]) for v in yielded):
            self.hoist_row_invariants([(v, self.plan.natural[v]) for v in yielded])
            self.row_loop(lambda: self.store_outputs({frozenset({"m", "n"}), frozenset({"n"})}))

    def _looped_step(self, accs: list, pairs: list) -> None:
        """One tile's update of a level's accumulators (`looped_reductions`)."""
        for r, a, how, _acc in accs:
            if isinstance(a, tuple):
                self.welford_step(r, a, "start")
                continue
            tile, _, _ = self.reduction_input(r)
            pair = next((p for p in pairs if p[0] is r), None)
            if pair is None:
                self.line(f"{a} = {self.combine(a, tile, how)}")
                continue
            s_acc = pair[3]
            new, shift = self.fresh("mx"), self.fresh("sh")
            self.line(f"{new} = {self.helper('_max_nan')}({a}, {self.reduce_tile(tile, 'max')})")
            # a row still all -inf subtracts 0 (its terms are exp(-inf) = 0, not NaN)
            self.line(f"{shift} = tl.where({new} == float(\"-inf\"), 0.0, {new})")
            # every term is exp of a value <= 0 beside the row's exp(0) = 1: `_exp_term`
            term = self.helper("_exp_term")
            self.line(f"{s_acc} = {s_acc} * {term}({a} - {shift}) + {term}({tile} - {shift})")
            self.line(f"{a} = {new}")

    def looped_reductions(self) -> None:
        """Every reduction of the tile's rows, one loop over the row per level. A max and the
        sum of exp(x - max) share the loop (online softmax); a var_mean or welford is one pass
        too, after reading the row's first element (the shift K: `welford_init`): per-lane
        accumulators of the shifted values (`welford_step`), Chan's merge of the lanes after
        the loop (`welford_finish`), and the mean the row's sum (K N + the lanes' sums) / N,
        before `var_mean_parts` finishes the outputs as for the persistent kernel.

        Online softmax keeps the row's running max m (one value a row: the tile's max
        merged each step) and per-lane sums s of exp(x - m), rescaled by exp(m_old - m_new)
        each step: one exp per element (a per-lane max needs two), as measured on an H200
        (`benchmarks/softmax_loop_variants.py`, BENCHMARKS.md): cross-entropy over
        4096x32000 bf16 118 us against 158 with per-lane maxima."""
        online = online_softmax_pairs(self.plan.reductions)
        paired = set(online.values())  # each sum of exp(x - max) is accumulated with its max
        for group in self.streamed_groups():
            accs: list[tuple[Operation, str | tuple[str, str, str], str, str]] = []
            pairs = []
            picked = {r: p for r in group if r not in paired and (p := self.picks_one_hot(r)) is not None}
            for r in group:
                if r in paired or r in picked:  # a one-hot sum reads one element, after the loop
                    continue
                neutral, how, acc = self.reduce_spec(r)
                if isinstance(r, fusion.VarMeanOp | fusion.WelfordOp):
                    accs.append((r, self.welford_init(r, acc, "0"), how, acc))
                    continue
                a = self.fresh("acc")
                if r in online:  # the row's running max; the sum's terms per lane
                    self.line(f"{a} = tl.full((BLOCK_M, 1), {neutral}, {acc})")
                    s_acc = self.fresh("acc")
                    self.line(f"{s_acc} = tl.full((BLOCK_M, BLOCK_N), 0, tl.float32)")
                    pairs.append((r, a, online[r], s_acc))
                else:
                    self.line(f"{a} = tl.full((BLOCK_M, BLOCK_N), {neutral}, {acc})")
                accs.append((r, a, how, acc))
            if not accs:
                for r, p in picked.items():
                    self.pick_one_hot(r, p)
                continue
            self.hoist_row_invariants([(r.operands[0], identity_map(r.operands[0].type.get_shape(), self.plan.domain))
                                       for r, *_ in accs])
            self.row_loop(lambda accs=accs, pairs=pairs: self._looped_step(accs, pairs))
            for r1, a, r2, s_acc in pairs:
                total = self.fresh("tot")
                self.line(f"{total} = tl.sum({s_acc}, 1)[:, None]")
                self.finish_reduction(r1, a, "max", "tl.float32", "N")
                self.finish_reduction(r2, total, "sum", "tl.float32", "N")
            accs = [x for x in accs if x[0] not in online]
            for r, a, how, acc in accs:
                if isinstance(a, tuple):
                    total, m2 = self.welford_finish(a, "N")
                    mean = self.fresh("mu")
                    self.line(f"{mean} = {total} / N")
                    self.var_mean_parts(r, mean, m2, acc)
                    continue
                total = self.fresh("tot")
                self.line(f"{total} = {self.reduce_tile(a, how)}")
                self.finish_reduction(r, total, how, acc, "N")
            for r, p in picked.items():
                self.pick_one_hot(r, p)

    def var_mean_parts(self, r: fusion.VarMeanOp | fusion.WelfordOp, mean_name: str, total: str, acc: str) -> None:
        """Finishes var_mean (or welford: avg, var_sum, n) once the sum of squared deviations is known."""
        if isinstance(r, fusion.WelfordOp):
            for res, expr in ((r.avg, mean_name), (r.var_sum, total), (r.n, "(tl.zeros((BLOCK_M, 1), tl.int64) + N)")):
                name = self.fresh("wf")
                self.line(f"{name} = {self.to(f'({expr})', triton_dtype(res.type.element_type))}")
                self.reduced[res] = name
            return
        var, mean = r.results
        corr = r.correction.value.data
        n = self.fresh("var")
        self.line(f"{n} = {self.to(f'({total} / tl.maximum(N - {corr}, 0))', triton_dtype(var.type.element_type))}")
        self.reduced[var] = n
        mn = self.fresh("mean")
        self.line(f"{mn} = {self.to(mean_name, triton_dtype(mean.type.element_type))}")
        self.reduced[mean] = mn

    def welford_init(self, r: fusion.VarMeanOp | fusion.WelfordOp, acc: str, first: str) -> tuple[str, str, str]:
        """Emits the state of a one-pass var_mean or welford before the loop over its rows:
        (K, S, M2). K ([BLOCK_M, 1]) is each row's shift, the value at reduced index `first`
        (the loop's first index) when it is finite, else 0: the tile at `first` with every
        lane but that one masked, so one element a row is read. S and M2 are per-lane zeros
        ([BLOCK_M, BLOCK_N] of the accumulation dtype; a lane is a column of the tile, one
        row's reduced indices BLOCK_N apart): the sum of the lane's values minus K and its
        M2. `welford_step` updates them, `welford_finish` combines the lanes."""
        self.scopes.append({})
        self.emit_inner_indices(first)
        self.line(f"mask_n = mask_n & (rn == {first})[None, :]")
        tile, _, _ = self.reduction_input(r)
        self.scopes.pop()
        shift, s, q = self.fresh("wk"), self.fresh("wsy"), self.fresh("wm2")
        self.line(f"{shift} = tl.sum({tile}, 1)[:, None]")
        self.line(f'{shift} = tl.where(tl.abs({shift}) < float("inf"), {shift}, 0)')
        for name in (s, q):
            self.line(f"{name} = tl.full((BLOCK_M, BLOCK_N), 0, {acc})")
        return shift, s, q

    def welford_step(self, r: fusion.VarMeanOp | fusion.WelfordOp, state: tuple[str, str, str], offset: str) -> None:
        """Emits one loop step's update of the per-lane accumulators (in the loop's scope).

        `offset` is the step's distance from the loop's first index (a multiple of BLOCK_N):
        this is step k = offset // BLOCK_N. The masks only bound the reduced index from above
        (`rn < N`, `rn < lo + chunk`) and a lane's index grows each step, so a lane's valid
        steps are a prefix of the loop: a valid lane of step k has seen exactly k values,
        and its count is a scalar. The update is Youngs and Cramer's form of Welford's on the
        shifted values y = x - K: with the lane's sum S of its k earlier values,
        M2 += (y - S / k)^2 * k / (k + 1), then S += y; one reciprocal per step, no division
        per element (Inductor's `welford_reduce` divides by a per-lane weight). The shift
        keeps the running means near 0 where the values share a large offset (1e4 + 0.01
        randn in f32: y is exact and S / k rounds at the scale of the deviations, not of
        1e4). Masked lanes change nothing."""
        shift, s, q = state
        tile, _, acc = self.reduction_input(r)  # masked lanes read 0
        k, rk, fk = self.fresh("wn"), self.fresh("wr"), self.fresh("wf")
        self.line(f"{k} = tl.cast({offset} // BLOCK_N, {acc})")
        self.line(f"{rk} = 1.0 / tl.maximum({k}, 1.0)")
        self.line(f"{fk} = {k} / ({k} + 1.0)")
        y, d = self.fresh("wy"), self.fresh("dev")
        self.line(f"{y} = tl.where(mask_m & mask_n, {tile} - {shift}, 0)")
        self.line(f"{d} = {y} - {s} * {rk}")
        self.line(f"{q} = {q} + tl.where(mask_m & mask_n, {d} * {d} * {fk}, 0)")
        self.line(f"{s} = {s} + {y}")

    def welford_finish(self, state: tuple[str, str, str], extent: str) -> tuple[str, str]:
        """Emits the deterministic cross-lane merge after the loop: (sum, M2), [BLOCK_M, 1]
        each, of the `extent` values (reduced indices from the loop's first) the lanes saw.

        Lane j saw n_j = ceil((extent - j) / BLOCK_N) values (its valid steps are a prefix:
        `welford_step`); with S_j the sum of its values minus K, the row's mean relative to K
        is mu = sum_j S_j / extent, and Chan's formula gives M2 = sum_j (M2_j + n_j (S_j / n_j
        - mu)^2), two `tl.sum`s over the lanes (fixed trees: the same on every run, as the
        second stage of an inner split merges its chunks: `merge_m2`). An error in mu changes
        M2 only in second order (sum_j n_j (S_j / n_j - mu) is 0), where a sequential merge
        (`tl.reduce` with a Welford combine; Triton's interpreter reduces in order) rounds
        each step: 6e-6 against 8e-8 over 2048 lanes of 1e4 + 0.01 randn in f32. The sum is
        sum_j S_j + K extent. Where it is not finite (an infinite or NaN value, or an
        overflow) M2 is NaN, as the sum of squared deviations about an infinite or NaN mean
        is, and as torch gives for an infinite value."""
        shift, s, q = state
        n = f"tl.maximum({extent}, 0)"
        rel, total, cnt, dev, m2 = (self.fresh(p) for p in ("wsum", "tot", "wc", "wd", "wq"))
        self.line(f"{rel} = tl.sum({s}, 1)[:, None]")
        self.line(f"{total} = {rel} + {shift} * {n}")
        # n - j + BLOCK_N - 1 >= 0 for every lane j < BLOCK_N: no negative division
        self.line(f"{cnt} = (({n} - tl.arange(0, BLOCK_N) + BLOCK_N - 1) // BLOCK_N).to({s}.dtype)[None, :]")
        self.line(f"{dev} = {s} / tl.maximum({cnt}, 1) - {rel} / tl.maximum({extent}, 1)")
        self.line(f"{m2} = tl.sum({q} + {cnt} * {dev} * {dev}, 1)[:, None]")
        self.line(f'{m2} = tl.where(tl.abs({total}) < float("inf"), {m2}, float("nan"))')
        return total, m2
