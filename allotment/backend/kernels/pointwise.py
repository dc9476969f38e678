"""Pointwise kernels: one tile per program, rows x columns over the last dim, or flat
indexing (`flat_pointwise`: one program per BLOCK_N linear indices of the domain); a
kernel whose row length is `?` gets both functions and its launcher picks one by the
row length of the call (`flat_at_run_time`); a scatter kernel stores at computed
addresses (`gather_scatter.emit_scatter`).
"""

from __future__ import annotations

from allotment.backend.host_runtime import flat_rows
from allotment.backend.kernel_plan import KernelPlan
from allotment.backend.kernels import emitter, gather_scatter
from allotment.backend.kernels.emitter import ALL_AXES, Emitter, GeneratedKernel, InSize


class PointwiseEmitter(Emitter):
    """Emits the one Triton function of a pointwise (or scatter) kernel."""

    @classmethod
    def build(cls, plan: KernelPlan, variant: str, target: str, derived: dict[str, str]) -> Emitter:
        """Flat indexing where `flat_pointwise` says so; a kernel that turns out to read an
        operand along its outer axis is emitted in square tiles after all."""
        e = cls(plan, variant, target, derived, flat=variant == "flat" or flat_pointwise(plan))
        e.emit()
        if variant == "flat":  # `flat_at_run_time`'s second function (dropped if transposed)
            return e
        if e.flat and e.transposed:
            e = cls(plan, variant, target, derived)
            e.emit()
        return e

    def emit(self) -> None:
        if gather_scatter.scatter_op(self.plan.kernel) is not None:  # stores at computed addresses
            gather_scatter.emit_scatter(self)
            return
        self.line("pid = tl.program_id(0)")
        if self.flat:
            self.emit_flat_indices()
        else:
            self.line("tiles_n = (N + BLOCK_N - 1) // BLOCK_N")
            self.emit_outer_indices("(pid // tiles_n)")
            self.emit_inner_indices("(pid % tiles_n) * BLOCK_N")
        self.store_outputs(ALL_AXES)

    def emit_flat_indices(self) -> None:
        """A flat pointwise kernel's indices (`flat_pointwise`): lane k of program p holds the
        linear index p * BLOCK_N + k of the [M, N] domain; its row rm and column rn come by
        division by N (static, or the launcher's N for `flat_at_run_time`'s function), and
        every index and mask is a [1, BLOCK_N] tile (BLOCK_M is 1), so no lane idles but
        past the domain's end."""
        static = static_inner(self.plan)
        n = "N" if static is None else static
        self.line("lin = pid * BLOCK_N + tl.arange(0, BLOCK_N)")
        self.line("if USE_I64:")
        self.line("    lin = lin.to(tl.int64)")
        if static is None and emitter.magic_division():  # a run-time row length (`Emitter._decompose`)
            self.line("if FAST_DIV:")
            self.line(f"    rm = {self.fast_divide('lin', 'N', False)}")
            self.line("    rn = lin - rm * N")
            self.line("else:")
            self.line("    rm = lin // N")
            self.line("    rn = lin % N")
        else:
            self.line(f"rm = lin // {n}")
            self.line(f"rn = lin % {n}")
        self.line("mask_m = (rm < M)[None, :]")
        self.line("mask_n = mask_m")
        whole = (*self.plan.outer, *self.plan.inner)
        if len(whole) > 1:  # lin itself, where an operand is row-major over the whole domain
            self.add_linear(whole, "lin[None, :]")
        self._decompose("rm", self.plan.outer, "[None, :]")
        self._decompose("rn", self.plan.inner, "[None, :]")


def static_inner(plan: KernelPlan) -> int | None:
    """The product of the inner dims' extents where all are static, else None."""
    n = 1
    for d in plan.inner:
        src = plan.extents[d]
        if src.static is None:
            return None
        n *= src.static
    return n


def flat_pointwise(plan: KernelPlan) -> bool:
    """Whether a pointwise kernel indexes its domain flat (`PointwiseEmitter.emit_flat_indices`):
    its inner extent N is static, `host_runtime.flat_rows(N)` (power-of-two tiles would
    idle more than 15% of a row's lanes), and it stores at its own indices (no scatter).
    A kernel that turns out to read an operand along its outer axis is emitted in tiles
    after all (a transpose needs square tiles)."""
    if plan.kind != "pointwise" or not plan.inner or gather_scatter.scatter_op(plan.kernel) is not None:
        return False
    n = static_inner(plan)
    return n is not None and flat_rows(n)


def flat_at_run_time(plan: KernelPlan, allowed: bool = True) -> bool:
    """Whether a pointwise kernel gets a flat function besides its tiled one, which its
    launcher runs where `host_runtime.flat_rows(N)` holds for the call's row length N:
    `flat_pointwise`'s rule, decided at run time, for a kernel whose inner extent is `?`
    (rows of 96 under a `?` head dim run flat as they do when it is static). The flat
    function is dropped where the tiled one reads an operand along the outer axis (square
    tiles then, as for a static row). `allowed=False` is the rule before it
    (`benchmarks/schedule_ab.py`: tiles only)."""
    if not allowed or plan.kind != "pointwise" or not plan.inner:
        return False
    return gather_scatter.scatter_op(plan.kernel) is None and static_inner(plan) is None


def launch_lines(gen: GeneratedKernel, args: str, in_size: InSize) -> list[str]:
    """The launcher's lines after M, N and use_i64: one launch over the domain's tiles, or
    over its BLOCK_N linear indices when flat (decided here for a static row, by
    `rt.flat_rows(N)` for a `?` one with `flat_at_run_time`'s function)."""
    fn = gen.functions["pointwise"]
    lines = ["    if M * N == 0:", "        return"]
    if gen.flat:  # one program per BLOCK_N linear indices (`flat_pointwise`)
        lines.append("    bm, bn, warps = rt.flat_blocks(M, N)")
        lines.append(f"    rt.launch({fn}, (-(-(M * N) // bn),), ({args}), {gen.launch_tail})")
        return lines
    if "flat" in gen.functions:  # `flat_at_run_time`
        lines.append("    if rt.flat_rows(N):")
        lines.append("        bm, bn, warps = rt.flat_blocks(M, N)")
        lines.append(f"        rt.launch({gen.functions['flat']}, (-(-(M * N) // bn),), ({args}), {gen.launch_tail})")
        lines.append("        return")
    lines.append(f"    bm, bn, warps = rt.{'transpose' if gen.transposed else 'pointwise'}_blocks(M, N)")
    lines.append(f"    rt.launch({fn}, (-(-M // bm) * -(-N // bn),), ({args}), {gen.launch_tail})")
    return lines


def variants(plan: KernelPlan) -> list[str]:
    """`pointwise`, and `flat` where `flat_at_run_time` says so."""
    return ["pointwise", "flat"] if flat_at_run_time(plan) else ["pointwise"]
