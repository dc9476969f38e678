"""The kernel kinds: which planner, variants and emitter each kind of `alloc.kernel` gets.

The shared planner (`kernel_plan`: pointwise, reduction and normalization kernels) and the
shared emitter (`triton_codegen._Emitter`) sit below the modules of the kinds with rules of
their own: scatters (`triton_indexing`), inner-outer kernels (`inner_outer`), scans and
sorts (`scan_codegen`). This module, above them all, dispatches on the kind, so that neither
shared module imports a kind's module.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from allotment.backend import inner_outer, triton_indexing, triton_math
from allotment.backend.inner_outer import InnerOuterEmitter, plan_inner_outer
from allotment.backend.kernel_plan import CodegenError, KernelPlan, plan_domain_kernel
from allotment.backend.scan_codegen import ScanEmitter, plan_scan_kernel, scan_helpers
from allotment.backend.triton_codegen import GeneratedKernel, KernelArg, _Emitter, flat_pointwise, round_bf16_casts
from allotment.dialects import alloc


def plan_kernel(kernel: alloc.KernelOp) -> KernelPlan:
    """The plan of `kernel`: by its kind's planner (`kernel_plan.plan_domain_kernel` for the
    kinds without one of their own)."""
    scatter = triton_indexing.scatter_op(kernel)
    if scatter is not None:  # a scatter kernel iterates over its index, not its output
        return triton_indexing.plan_scatter(kernel, scatter)
    if kernel.kind.data == "inner_outer":  # row and column reductions: `backend/inner_outer.py`
        return plan_inner_outer(kernel)
    if kernel.kind.data in ("scan", "sort"):  # rows along the scan or sort dim
        return plan_scan_kernel(kernel)
    return plan_domain_kernel(kernel)


def variants(plan: KernelPlan) -> list[str]:
    """The Triton functions a kernel gets: one pointwise, or the reduction variants its
    placement (`alloc-place`'s schedule on the kernel) names: persistent, looped, or
    both when the choice is made at run time. A reducing kernel that was never placed
    is an error: the backend follows the IR and decides nothing itself."""
    if plan.kind in ("scan", "sort"):  # one variant: `scan_codegen`
        return [plan.kind]
    if plan.kind == "inner_outer":  # rows, then the columns' partials (`backend/inner_outer.py`)
        return inner_outer.variants(plan)
    if not plan.reductions:
        return ["pointwise"]
    schedule = plan.kernel.schedule_name
    if schedule is None:
        raise CodegenError(f"kernel {plan.name!r} reduces but has no schedule: run alloc-place first")
    if plan.partials and plan.inner_split:  # the row kernel alloc-place chose when %split is 1
        row = ["persistent", "looped"] if schedule == "persistent_if" else [schedule]
        return [*row, "split_partial", "split_final"]
    if plan.partials:  # split across CTAs (`analysis.split_reduction`): one kernel when %split is 1
        return ["looped", "split_partial", "split_final"]
    return ["persistent", "looped"] if schedule == "persistent_if" else [schedule]


def generate_kernel(plan: KernelPlan, target: str, functions: dict[str, str]) -> GeneratedKernel:
    """Triton functions (one per variant, named `functions[variant]`: identifiers that the
    caller's `identifiers.Namespace` made) for a kernel plan, and their arguments.

    The kernel's own names (`in0_ptr`, `D0`, `t3`, ...) are generated names: no IR
    text reaches a Triton function but through those function names."""
    wanted = variants(plan)
    if sorted(functions) != sorted(wanted):
        raise CodegenError(f"kernel {plan.name!r}: names for {sorted(functions)}, variants {wanted}")
    bodies: dict[str, _Emitter] = {}
    derived: dict[str | SSAValue, str] = {}
    for variant in wanted:
        if variant in ("scan", "sort"):
            e = ScanEmitter(plan, variant, target, derived)
            e.emit()
            bodies[variant] = e
            continue
        if plan.kind == "inner_outer":
            io = InnerOuterEmitter(plan, variant, target, derived)
            io.emit()
            bodies[variant] = io
            continue
        e = _Emitter(plan, variant, target, derived, flat=variant == "pointwise" and flat_pointwise(plan))
        {"pointwise": e.emit_pointwise, "persistent": e.emit_persistent, "looped": e.emit_looped,
         "split_partial": e.emit_split_partial, "split_final": e.emit_split_final}[variant]()
        if e.flat and e.transposed:  # an operand read along the outer axis: square tiles instead
            e = _Emitter(plan, variant, target, derived)
            e.emit_pointwise()
        bodies[variant] = e
    kernel = plan.kernel
    block = kernel.body.block
    args: list[KernelArg] = []
    for i, a in enumerate(block.args[: len(kernel.ins)]):
        if isinstance(a.type, TensorType):
            args.append(KernelArg(f"in{i}_ptr", "in", i))
            rank = len(a.type.get_shape())
            args += [KernelArg(f"in{i}_s{j}", "in_stride", i, j) for j in range(rank)]
            args += [KernelArg(f"in{i}_n{j}", "in_size", i, j) for j in range(rank)]
        else:
            args.append(KernelArg(f"s{i}", "scalar", i))
    for k, v in enumerate(block.last_op.operands):
        args.append(KernelArg(f"out{k}_ptr", "out", k))
        args += [KernelArg(f"out{k}_s{j}", "out_stride", k, j) for j in range(len(v.type.get_shape()))]
    for d, src in enumerate(plan.extents):
        if src.static is None:
            args.append(KernelArg(f"D{d}", "extent", d))
    args += [KernelArg(name, "derived", expr=key) if isinstance(key, str) else KernelArg(name, "host_size", value=key)
             for key, name in derived.items()]
    args += [KernelArg("M", "M"), KernelArg("N", "N")]
    params = ", ".join(a.name for a in args)
    if any(e.scalar_args for e in bodies.values()):
        raise CodegenError(f"kernel {plan.name!r}: uses a scalar that is not a kernel input")
    helpers = triton_math.helpers_for("\n".join(line for e in bodies.values() for line in e.lines), target)
    if plan.kind == "scan":
        helpers += scan_helpers("\n".join(line for e in bodies.values() for line in e.lines))
    parts = []
    for variant, e in bodies.items():
        fname = functions[variant]
        parts.append(
            f"@triton.jit\ndef {fname}({params}, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, USE_I64: tl.constexpr):\n"
            + "\n".join(e.lines if target == "cuda" else map(round_bf16_casts, e.lines))
            + "\n"
        )
    transposed = plan.kind == "pointwise" and any(e.transposed for e in bodies.values() if isinstance(e, _Emitter))
    flat = any(e.flat for e in bodies.values() if isinstance(e, _Emitter))
    return GeneratedKernel(plan, functions, helpers + "\n\n".join(parts), args, transposed, flat)
