"""Reductions split across CTAs (`analysis.split_reduction`: outer, middle-axis and full
reductions; the kernel's `partials` attribute names one partials buffer [split, kept] per
reduction).

`split_partial`, one program per (tile of BLOCK_M kept indices, split), loops over its
split's whole BLOCK_N tiles of the reduced axis and stores one partial per kept index,
and the outputs of the whole domain that need no reduction (dx beside its bias gradient)
from the tiles it reads; `split_final` combines the partials of BLOCK_M kept indices in
split order (deterministic) and computes the reduced outputs. With one split the
`looped` variant does it all, or, over a short axis (`host_runtime.UNROLL_REDUCED` reduced
indices at most, at run time), the `unrolled` one where the kernel has it (`unrolls`): a
[BLOCK_M, 1] tile of kept indices and the reduced indices read one after another. Kept
indices are the tile's rows: where they are contiguous in memory, Triton's coalescing
follows them.

An inner split (few long rows: the reduced dims include the innermost) has its own
first stage (`emit_inner_split_partial`: chunks of `INNER_SPLIT_ALIGN` multiples, read
BLOCK_N contiguous elements a step; a var_mean or welford stores each chunk's sum and
M2, which `merge_m2` combines with Chan's formula) and, with one split, the row kernel
(`persistent` or `looped`) alloc-place chose.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from allotment.analysis.split_reduction import unreduced_outputs
from allotment.backend.kernel_plan import CodegenError, KernelPlan, identity_map
from allotment.backend.kernels.emitter import GeneratedKernel, InSize, keeps_innermost
from allotment.backend.kernels.row_reduction import RowEmitter, choose_row_kernel, row_launch, row_variants
from allotment.dialects import fusion
from allotment.dtypes import element_nbytes, triton_dtype


def variants(plan: KernelPlan) -> list[str]:
    """The row kernel alloc-place chose (an inner split, when %split is 1) or the looped one
    (an outer split: one kernel when %split is 1) and, where it `unrolls`, the unrolled one,
    then the two stages."""
    if plan.inner_split:
        return [*row_variants(plan), "split_partial", "split_final"]
    return ["looped", *(["unrolled"] if unrolls(plan) else []), "split_partial", "split_final"]


def unrolls(plan: KernelPlan) -> bool:
    """Whether an outer split kernel gets the unrolled variant for a short reduced axis: its
    kept dims include the innermost (a column reduction, whose kept indices run along
    memory), every reduction is a sum, mean, product, max or min (no var_mean or welford)
    of values that no other reduction's result feeds, and it stores no output of the whole
    domain (`unreduced_outputs`: those the first stage writes as it streams)."""
    block = plan.kernel.body.block
    if plan.inner_split or not keeps_innermost(plan) or unreduced_outputs(block):
        return False
    reduced: set[SSAValue] = set()
    for op in block.ops:
        if isinstance(op, fusion.VarMeanOp | fusion.WelfordOp):
            return False
        if isinstance(op, fusion.ReductionOp) and any(x in reduced for x in op.operands):
            return False
        if isinstance(op, fusion.ReductionOp) or any(x in reduced for x in op.operands):
            reduced.update(op.results)
    return True


def _widest_input_bytes(plan: KernelPlan) -> int:
    """Bytes of the widest element the first stage loads (`host_runtime.outer_blocks` sizes a
    full reduction's step by it): the kernel's inputs but its partials buffers, which only
    the second stage reads (f32: counting them made every bf16 sum take the f32 step);
    4 where it loads no tensor."""
    partials = {*plan.partials.values(), *plan.partials_m2.values()}
    sizes = [element_nbytes(v.type.element_type) for i, v in enumerate(plan.kernel.ins)
             if i not in partials and isinstance(v.type, MemRefType)]
    return max(sizes, default=4)


def launch_lines(gen: GeneratedKernel, args: str, in_size: InSize) -> list[str]:
    """The launcher's lines after M, N and use_i64: the two stages when %split > 1, else the
    one kernel (the looped one, or for an inner split the row kernel alloc-place chose)."""
    plan, fn = gen.plan, gen.functions
    split = in_size(next(iter(plan.partials.values())), 0)
    if plan.inner_split:
        return [
            "    if M == 0:",
            "        return",
            f"    if {split} > 1:",
            "        bm, bn, warps = rt.inner_split_blocks(M, N)",
            f"        rt.launch({fn['split_partial']}, (-(-M // bm) * {split},), ({args}), {gen.launch_tail})",
            f"        bm, bn, warps = rt.split_final_blocks(M, {split})",
            f"        rt.launch({fn['split_final']}, (-(-M // bm),), ({args}), {gen.launch_tail})",
            "        return",
            *choose_row_kernel(gen, "persistent_blocks"),
            row_launch(gen, args),
        ]
    unrolled = [
        f"    if {split} <= 1:",
        "        unrolled = rt.unrolled_outer_blocks(M, N)",
        "        if unrolled is not None:",
        "            bm, bn, warps = unrolled",
        f"            rt.launch({fn['unrolled']}, (-(-M // bm),), ({args}), {gen.launch_tail})",
        "            return",
    ] if "unrolled" in fn else []
    return [
        "    if M == 0:",
        "        return",
        *unrolled,
        f"    bm, bn, warps = rt.outer_blocks(M, N, {split}, {_widest_input_bytes(plan)})",
        f"    if {split} <= 1:",
        f"        rt.launch({fn['looped']}, (-(-M // bm),), ({args}), {gen.launch_tail})",
        "        return",
        f"    rt.launch({fn['split_partial']}, (-(-M // bm) * {split},), ({args}), {gen.launch_tail})",
        f"    bm, bn, warps = rt.split_final_blocks(M, {split})",
        f"    rt.launch({fn['split_final']}, (-(-M // bm),), ({args}), {gen.launch_tail})",
    ]


class SplitEmitter(RowEmitter):
    """Emits the two stages of a split reduction, and the row kernel of one split."""

    def emit(self) -> None:
        if self.variant == "split_partial":
            self.emit_split_partial()
        elif self.variant == "split_final":
            self.emit_split_final()
        elif self.variant == "unrolled":
            self.emit_unrolled()
        else:
            super().emit()

    def emit_unrolled(self) -> None:
        """One split of an outer reduction over a short axis (`unrolls`; launched where
        `host_runtime.unrolled_outer_blocks` gives blocks): a program owns BLOCK_M kept
        indices, a [BLOCK_M, 1] tile, and reads the BLOCK_N reduced indices (the launcher
        passes BLOCK_N = N) one after another, unrolled (`tl.static_range`), each step one
        load of the tile's kept indices, accumulated in registers: no mask on the reduced
        index, no select of the neutral element and no reduction across lanes. Values that do
        not vary along the reduced axis are computed once, before the steps."""
        self.block_n = "1"
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        accs = self.accumulators("(BLOCK_M, 1)")
        self.hoist_row_invariants([(r.operands[0], identity_map(r.operands[0].type.get_shape(), self.plan.domain))
                                   for r, *_ in accs])
        self.line("for start in tl.static_range(BLOCK_N):")
        with self.indent():
            self.scopes.append({})
            self.emit_inner_indices("start", full=True)
            for r, a, how, acc in accs:
                # no select of the neutral element: every reduced index is in range, and a
                # lane past M accumulates only its own kept index, which is never stored
                src = r.operands[0]
                x, _ = self.value(src, identity_map(src.type.get_shape(), self.plan.domain))
                self.line(f"{a} = {self.combine(a, f'{x}.to({acc})', how)}")
            self.scopes.pop()
        for r, a, how, acc in accs:
            self.finish_reduction(r, a, how, acc, "N")
        self.store_outputs({frozenset({"m"}), frozenset()})

    def partials_arg(self, r: Operation) -> tuple[int, str]:
        """The in-index of reduction r's partials buffer [split, kept] and its split count."""
        i = self.plan.partials[r]
        return i, self.kernel_extent(self.block.args[i], 0)

    def emit_split_partial(self) -> None:
        """First stage of a reduction split across CTAs: program (kept tile, split) reduces its
        split's share of the reduced axis (whole BLOCK_N tiles, so the splits never overlap)
        for BLOCK_M kept indices, and stores one partial per kept index and reduction."""
        _, split = self.partials_arg(self.plan.reductions[0])
        self.line("pid = tl.program_id(0)")
        self.line("tiles_m = (M + BLOCK_M - 1) // BLOCK_M")
        self.emit_outer_indices("(pid % tiles_m)")
        self.line("split_id = pid // tiles_m")
        self.line("if USE_I64:")
        self.line("    split_id = split_id.to(tl.int64)")
        if self.plan.inner_split:  # chunks of inner_split_align multiples, the same in both stages
            self.emit_inner_split_partial(split)
            return
        self.line(f"chunk = ((N + {split} - 1) // {split} + BLOCK_N - 1) // BLOCK_N * BLOCK_N")
        self.line("lo = split_id * chunk")
        accs = self.accumulators("(BLOCK_M, BLOCK_N)")
        # steps through [lo, lo + chunk): the loads are masked by `rn < N`, so the last chunk
        # may run past N (no tl.minimum of scalars in the loop bounds)
        self.line("for step in range(0, chunk, BLOCK_N):")
        with self.indent():
            self.line("start = lo + step")
            self.scopes.append({})
            self.emit_inner_indices("start")
            for r, a, how, _ in accs:
                tile, _, _ = self.reduction_input(r)
                self.line(f"{a} = {self.combine(a, tile, how)}")
            # outputs on the whole domain (dx beside its bias gradient), written as the split's
            # share of the reduced axis streams by, from the values the reductions computed
            self.store_outputs({frozenset({"m", "n"}), frozenset({"n"})}, only=unreduced_outputs(self.block))
            self.scopes.pop()
        for r, a, how, _ in accs:
            total = self.fresh("part")
            self.line(f"{total} = {self.reduce_tile(a, how)}")
            self.store_partial(self.plan.partials[r], total)

    def accumulators(self, shape: str) -> list[tuple[Operation, str, str, str]]:
        """(reduction, accumulator, combine, accumulation dtype) of each of the kernel's
        reductions, each accumulator a tile of `shape` holding its neutral element."""
        accs = []
        for r in self.plan.reductions:
            neutral, how, acc = self.reduce_spec(r)
            a = self.fresh("acc")
            self.line(f"{a} = tl.full({shape}, {neutral}, {acc})")
            accs.append((r, a, how, acc))
        return accs

    def inner_chunk(self, split: str) -> str:
        """The line computing `chunk`, the reduced indices of one split of an inner split (a
        multiple of the kernel's `inner_split_align`; both stages compute it alike)."""
        align = self.plan.kernel.inner_split_align
        if align is None:
            raise CodegenError(f"kernel {self.plan.name}: an inner split without inner_split_align")
        return f"chunk = ((N + {split} - 1) // {split} + {align - 1}) // {align} * {align}"

    def inner_split_loop(self, body: Callable[[], None], full_tiles: bool) -> None:
        """The loop over this program's chunk [lo, min(lo + chunk, N)) in BLOCK_N steps; `body`
        emits one tile's work (in its own scope, after the tile's indices).

        `full_tiles`: as two loops, as `row_loop` does, the tiles wholly inside the chunk with
        no mask on the reduced index, then the last partial tile masked. It pays where the
        step is a one-pass var_mean (two selects and a compare less per element): bn_stats
        over 64x256x4096 bf16 52.4 -> 48.1 us, 23x97x5003 20.3 -> 18.3 us on an H200. A plain
        sum's first stage got slower with it (full_sum over 16384x4096 bf16 42.3 -> 45.7
        us), so sums keep the one masked loop (`benchmarks/split_loop_variants.py`)."""
        loops = [("0", "chunk", False)]
        if full_tiles:
            self.line("clen = tl.maximum(tl.minimum(N - lo, chunk), 0)")
            self.line("n_full = clen // BLOCK_N * BLOCK_N")
            loops = [("0", "n_full", True), ("n_full", "clen", False)]
        for lo, hi, full in loops:
            self.line(f"for step in range({lo}, {hi}, BLOCK_N):")
            with self.indent():
                self.scopes.append({})
                self.emit_inner_indices("lo + step", full)
                if not full:
                    self.line("mask_n = mask_n & (rn < lo + chunk)[None, :]")
                body()
                self.scopes.pop()

    def emit_inner_split_partial(self, split: str) -> None:
        """First stage of an inner split: program (kept tile, split) reduces the chunk
        [lo, min(lo + chunk, N)) of its kept rows, BLOCK_N contiguous reduced indices a step,
        and stores one partial per kept row and reduction, reading the chunk once. A var_mean
        or welford reads the chunk's first element before the loop (the shift K:
        `welford_init`), keeps per-lane accumulators of the shifted values (`welford_step`) and
        stores the chunk's sum (K count + the lanes' sums) and its sum of squared deviations
        about the chunk's own mean (M2, Chan's merge of the lanes: `welford_finish`), the
        partials `emit_split_final` merges; an empty chunk stores 0 and 0."""
        self.line(self.inner_chunk(split))
        self.line("lo = split_id * chunk")
        accs: list[tuple[Operation, str | tuple[str, str, str], str]] = []
        for r in self.plan.reductions:
            neutral, how, acc = self.reduce_spec(r)
            if r in self.plan.partials_m2:
                accs.append((r, self.welford_init(r, acc, "lo"), how))
                continue
            a = self.fresh("acc")
            self.line(f"{a} = tl.full((BLOCK_M, BLOCK_N), {neutral}, {acc})")
            accs.append((r, a, how))

        def step() -> None:
            for r, a, how in accs:
                if isinstance(a, tuple):
                    self.welford_step(r, a, "step")
                    continue
                tile, _, _ = self.reduction_input(r)
                self.line(f"{a} = {self.combine(a, tile, how)}")

        self.inner_split_loop(step, full_tiles=any(isinstance(a, tuple) for _, a, _ in accs))
        for r, a, how in accs:
            if isinstance(a, tuple):
                total, m2 = self.welford_finish(a, "tl.minimum(N - lo, chunk)")
                self.store_partial(self.plan.partials[r], total)
                self.store_partial(self.plan.partials_m2[r], m2)
                continue
            total = self.fresh("part")
            self.line(f"{total} = {self.reduce_tile(a, how)}")
            self.store_partial(self.plan.partials[r], total)

    def store_partial(self, i: int, total: str) -> None:
        """Stores a (BLOCK_M, 1) tile of partials at [split_id, rm] of partials input i."""
        pt = triton_dtype(self.block.args[i].type.element_type)
        self.line(f"tl.store(in{i}_ptr + (split_id * in{i}_s0 + rm[:, None] * in{i}_s1), {self.to(total, pt)}, mask=mask_m)")

    def emit_split_final(self) -> None:
        """Second stage: each program combines the partials of BLOCK_M kept indices in split
        order (deterministic), finishes the reductions (a mean divides by the whole reduced
        extent N) and computes and stores the outputs on the reduced domain. A var_mean
        or welford (inner splits) merges its chunks' sums and M2s with Chan's formula."""
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        for r in self.plan.reductions:
            neutral, how, acc = self.reduce_spec(r)
            i, split = self.partials_arg(r)
            a = self.fresh("acc")
            self.line(f"{a} = tl.full((BLOCK_M, BLOCK_N), {neutral}, {acc})")
            self.combine_partials(a, i, split, how, neutral, acc, along="n")
            total = self.fresh("tot")
            self.line(f"{total} = {self.reduce_tile(a, how)}")
            if r in self.plan.partials_m2:
                self.merge_m2(r, total, acc, split)
            else:
                self.finish_reduction(r, total, how, acc, "N")
        self.store_outputs({frozenset({"m"}), frozenset()})

    def merge_m2(self, r: Operation, total: str, acc: str, split: str) -> None:
        """Chan's parallel formula over the splits of a var_mean or welford, in split order:
        mean = total / N; M2 = sum_i (M2_i + n_i * (mean_i - mean)^2), n_i the count of chunk
        i (`inner_chunk`: as the first stage computed it; 0 for an empty chunk) and mean_i
        = sum_i / n_i; then finished as the unsplit kernel finishes it (`var_mean_parts`)."""
        mean = self.fresh("mu")
        self.line(f"{mean} = {total} / N")
        s_in, m2_in = self.plan.partials[r], self.plan.partials_m2[r]
        self.line(self.inner_chunk(split))
        q = self.fresh("acc")
        self.line(f"{q} = tl.full((BLOCK_M, BLOCK_N), 0, {acc})")
        self.line(f"for start in range(0, {split}, BLOCK_N):")
        with self.indent():
            self.line("rs = start + tl.arange(0, BLOCK_N)")
            self.line("if USE_I64:")
            self.line("    rs = rs.to(tl.int64)")
            self.line(f"mask_s = mask_m & (rs < {split})[None, :]")
            names = []
            for i in (s_in, m2_in):
                x = self.fresh("ld")
                self.line(f"{x} = tl.load(in{i}_ptr + (rs[None, :] * in{i}_s0 + rm[:, None] * in{i}_s1), "
                          f"mask=mask_s, other=0).to({acc})")
                names.append(x)
            n_i = self.fresh("cnt")
            self.line(f"{n_i} = tl.minimum(tl.maximum(N - rs * chunk, 0), chunk).to({acc})[None, :]")
            d = self.fresh("dev")
            self.line(f"{d} = {names[0]} / tl.maximum({n_i}, 1) - {mean}")
            self.line(f"{q} = {q} + tl.where(mask_s, {names[1]} + {n_i} * {d} * {d}, 0)")
        m2 = self.fresh("tot")
        self.line(f"{m2} = tl.sum({q}, 1)[:, None]")
        self.var_mean_parts(r, mean, m2, acc)
