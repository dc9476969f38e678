"""The kernel kinds: the one table (`KINDS`) of which planner, variants, emitter and launcher
lines each kind of `alloc.kernel` gets, and the dispatch over it.

Each kind lives in its own module under `backend/kernels/` (its planner hook, its
`Emitter` subclass, its launcher lines); the shared planner (`kernel_plan.plan_domain_kernel`)
and the shared emitter (`kernels.emitter.Emitter`) sit below them all. This module, above
them, is the only one that names every kind, so that no shared module imports a kind's.
A kind whose call is host code (a library matmul, an ATen call) has a `host` entry instead
of a planner and an emitter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from allotment.backend import triton_math
from allotment.backend.kernel_plan import REDUCTIONS, CodegenError, KernelPlan, plan_domain_kernel
from allotment.backend.kernels import (
    aten_call,
    gather_scatter,
    inner_outer,
    library,
    pointwise,
    row_reduction,
    scan_sort,
    split_reduction,
)
from allotment.backend.kernels.emitter import Emitter, GeneratedKernel, InSize, KernelArg, align_prologue
from allotment.dialects import alloc

HostCall = Callable[[library.Host, alloc.KernelOp, list[str], list[str]], None]
"""Writes a host-side kernel's call into the host program (the host emitter, the kernel, its
ins' and outs' host names)."""


@dataclass(frozen=True)
class KernelKind:
    """One kind of kernel: which kernels it takes, and its module's entries."""

    name: str
    takes: Callable[[alloc.KernelOp], bool]
    plan: Callable[[alloc.KernelOp], KernelPlan] = plan_domain_kernel
    variants: Callable[[KernelPlan], list[str]] | None = None
    """The Triton functions a kernel of the kind gets."""
    emitter: type[Emitter] = Emitter
    launch: Callable[[GeneratedKernel, str, InSize], list[str]] | None = None
    """The launcher's lines after M, N and use_i64 (its arguments tuple's name, the spelling
    of an input's extent)."""
    host: HostCall | None = None


def _reduces(kernel: alloc.KernelOp) -> bool:
    return any(isinstance(op, REDUCTIONS) for op in kernel.body.block.ops)


def _aten(host: library.Host, op: alloc.KernelOp, ins: list[str], outs: list[str]) -> None:
    # a recorded torch call (`rt.aten_call`); a result copied row-major is a recorded copy
    for text in aten_call.emit(op, ins, outs, host.v):
        host.line(text)


KINDS: tuple[KernelKind, ...] = (
    KernelKind("library", lambda k: k.kind.data == "library", host=library.emit),
    KernelKind("aten", lambda k: k.kind.data == "aten", host=_aten),
    # a scatter kernel iterates over its index, not its output
    KernelKind("scatter", lambda k: gather_scatter.scatter_op(k) is not None,
               lambda k: gather_scatter.plan_scatter(k, gather_scatter.scatter_op(k)),
               pointwise.variants, pointwise.PointwiseEmitter, pointwise.launch_lines),
    KernelKind("inner_outer", lambda k: k.kind.data == "inner_outer", inner_outer.plan_inner_outer,
               inner_outer.variants, inner_outer.InnerOuterEmitter, inner_outer.launch_lines),
    KernelKind("scan_sort", lambda k: k.kind.data in ("scan", "sort"), scan_sort.plan_scan_kernel,
               scan_sort.variants, scan_sort.ScanEmitter, scan_sort.launch_lines),
    KernelKind("split_reduction", lambda k: _reduces(k) and "partials" in k.attributes, plan_domain_kernel,
               split_reduction.variants, split_reduction.SplitEmitter, split_reduction.launch_lines),
    KernelKind("row_reduction", _reduces, plan_domain_kernel,
               row_reduction.row_variants, row_reduction.RowEmitter, row_reduction.launch_lines),
    KernelKind("pointwise", lambda k: True, plan_domain_kernel,
               pointwise.variants, pointwise.PointwiseEmitter, pointwise.launch_lines),
)
"""Every kind, in the order they are asked: the first that takes a kernel is its kind."""


def kind_of(kernel: alloc.KernelOp) -> KernelKind:
    """The kind of `kernel` (`KINDS`)."""
    return next(kind for kind in KINDS if kind.takes(kernel))


def plan_kernel(kernel: alloc.KernelOp) -> KernelPlan:
    """The plan of `kernel`, by its kind's planner."""
    return kind_of(kernel).plan(kernel)


def variants(plan: KernelPlan) -> list[str]:
    """The Triton functions a kernel gets (its kind's `variants`: one pointwise, the row
    variants its placement names, a split's stages, ...)."""
    kind = kind_of(plan.kernel)
    if kind.variants is None:
        raise CodegenError(f"kernel {plan.name!r}: a {kind.name} kernel has no Triton functions")
    return kind.variants(plan)


def launch_lines(gen: GeneratedKernel, args: str, in_size: InSize) -> list[str]:
    """The launcher's lines after M, N and use_i64, by the kernel's kind."""
    launch = kind_of(gen.plan.kernel).launch
    assert launch is not None  # every kind with variants launches
    return launch(gen, args, in_size)


def generate_kernel(plan: KernelPlan, target: str, functions: dict[str, str]) -> GeneratedKernel:
    """Triton functions (one per variant, named `functions[variant]`: identifiers that the
    caller's `identifiers.Namespace` made) for a kernel plan, and their arguments.

    The kernel's own names (`in0_ptr`, `D0`, `t3`, ...) are generated names: no IR
    text reaches a Triton function but through those function names."""
    wanted = variants(plan)
    if sorted(functions) != sorted(wanted):
        raise CodegenError(f"kernel {plan.name!r}: names for {sorted(functions)}, variants {wanted}")
    emitter = kind_of(plan.kernel).emitter
    derived: dict[str | SSAValue, str] = {}
    bodies = {variant: emitter.build(plan, variant, target, derived) for variant in wanted}
    if "flat" in bodies and bodies["pointwise"].transposed:  # square tiles, never flat
        del bodies["flat"]
        functions = {v: name for v, name in functions.items() if v in bodies}
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
    requested = list(dict.fromkeys(name for e in bodies.values() for name in e.helpers))  # first-use order
    helpers = triton_math.helpers_for(requested, target)
    if plan.kind == "scan":
        helpers += scan_sort.scan_helpers(requested)
    row_major = tuple(dict.fromkeys(run for e in bodies.values() for run in e.row_major))
    constexprs = "BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, USE_I64: tl.constexpr"
    if row_major:  # every variant takes it (one argument list), where any merged an offset
        constexprs += ", ROW_MAJOR: tl.constexpr"
    if "two_tiles" in bodies:  # a `?` row's second tile width (`row_reduction.row_variants`)
        constexprs += ", BLOCK_T: tl.constexpr"
    divisors = tuple(dict.fromkeys(d for e in bodies.values() for d in e.divisors))
    if divisors:  # some index divided by a run-time extent (`emitter.magic_division`)
        constexprs += ", FAST_DIV: tl.constexpr"
    aligned = tuple(dict.fromkeys(name for e in bodies.values() for name in e.aligned))
    if aligned:  # ints whose divisibility decides vector loads (`Emitter.aligned`)
        constexprs += ", ALIGN: tl.constexpr"
    prologue = align_prologue(aligned)
    parts = []
    for variant, e in bodies.items():
        fname = functions[variant]
        parts.append(
            f"{_decorator(e)}\ndef {fname}({params}, {constexprs}):\n"
            + "\n".join(prologue + e.lines)
            + "\n"
        )
    transposed = plan.kind == "pointwise" and any(e.transposed for e in bodies.values())
    flat = any(e.flat for v, e in bodies.items() if v != "flat")  # flat whatever the row (a static one)
    row_split = next((e.row_split for e in bodies.values() if e.row_split is not None), None)
    return GeneratedKernel(plan, functions, helpers + "\n\n".join(parts), args, transposed, flat, set(requested),
                           row_split, row_major, divisors, aligned)


def _decorator(e: Emitter) -> str:
    """`@triton.jit`, with Triton's `debug` on for a function that checks indices on the
    device (`gather_scatter.device_check` sets `device_asserts`): without it Triton drops
    `tl.device_assert`. `launch` compiles such functions without Triton's integer-overflow
    checks (which `debug` would also turn on), as Inductor does."""
    return "@triton.jit(debug=True)" if e.device_asserts else "@triton.jit"
