"""Kernels of the indexing ops (`fusion.IndexingOp`): gather loads and scatter kernels.

Gathers (index_select, gather, take_along_axis, embedding) are loads at computed
addresses inside any pointwise, reduction or normalization kernel: the index is
emitted at the result's index map (it may be a kernel input or, through the
view ops, read at moved indices), and the gathered tensor, always a block
argument of the kernel (`fusion-segment` keeps it a buffer), is loaded with the
index in place of the domain index along the gathered dim.

Scatters (scatter, index_put_accumulate) are kernels of their own whose
iteration domain is the index's (scatter) or the value's (index_put_accumulate)
shape: each program loads a tile of the index and of the source and stores it
(scatter) or adds it with `tl.atomic_add` (index_put_accumulate) at the
computed addresses of the output buffer. The host program first copies the
input (accumulator) into the output buffer (`host_prologue`), so the kernel
only writes the addressed elements.

Every index is checked where the op's `index_check` says (`fusion.IndexingOp`): by
the host program before the kernel runs (`host_prologue`, `host_runtime.check_indices`:
one min/max per index tensor; an index outside `[0, extent)` raises a RunError naming
the op and operand), or with `index_check = "device"` by the kernel itself, before the
load or store at the index (`device_check`: a `tl.device_assert` whose message starts
with `INDEX_MESSAGE`; the kernel is compiled with Triton's `debug` on, which keeps the
assert, `generate_kernel`).
"""

from __future__ import annotations

from typing import Protocol

from xdsl.dialects.builtin import BFloat16Type, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.analysis import kernel_domain
from allotment.backend.identifiers import literal
from allotment.backend.kernel_plan import CodegenError, KernelPlan, Map, domain_extents, identity_map, index_expr
from allotment.dialects import alloc, fusion
from allotment.dtypes import triton_dtype


class _Emitter(Protocol):
    """What these helpers use of the kernel emitter (`kernels.emitter.Emitter`)."""

    plan: KernelPlan
    arg_index: dict[SSAValue, int]
    guards: list[tuple[str, frozenset[str]]]
    device_asserts: bool

    def value(self, v: SSAValue, m: Map) -> tuple[str, frozenset[str]]: ...
    def axes_of(self, m: Map) -> frozenset[str]: ...
    def mask_for(self, axes: frozenset[str]) -> str | None: ...
    def fresh(self, prefix: str = "t") -> str: ...
    def line(self, text: str) -> None: ...
    def emit_outer_indices(self, pid_m: str) -> None: ...
    def emit_inner_indices(self, start: str, full: bool = False) -> None: ...
    def to(self, x: str, dtype: str) -> str: ...


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


# -- gathers -----------------------------------------------------------------------


def gather_index_map(op: Operation, m: Map) -> Map:
    """The map the index operand of gather op `op` is read at, for the result at map m."""
    if isinstance(op, fusion.IndexSelectOp):
        return (m[op.indexed_dim()],)
    if isinstance(op, fusion.EmbeddingOp):
        m = m[:-1]
    shape = _shape(op.index_operand)
    return tuple(None if e == 1 else entry for e, entry in zip(shape, m))


def gather_operand_maps(op: Operation, m: Map) -> list[tuple[SSAValue, Map]]:
    """What computing a gather at m reads before `gather` runs: the index (the gathered
    tensor is loaded by `gather` itself)."""
    return [(op.index_operand, gather_index_map(op, m))]


def gather(e: _Emitter, op: fusion.IndexingOp, m: Map) -> tuple[str, frozenset[str]]:
    """The gathered tensor loaded at the index (a gather load: computed address)."""
    src = op.source_operand
    if src not in e.arg_index:
        raise CodegenError(f"kernel {e.plan.name}: {op.name} gathers from a value computed in the kernel; "
                           "fusion-segment keeps it a buffer")
    idx, idx_axes = e.value(op.index_operand, gather_index_map(op, m))
    i = e.arg_index[src]
    dim = op.indexed_dim()
    shape = _shape(src)
    if isinstance(op, fusion.EmbeddingOp):
        other: Map = (None, m[-1])
    else:
        other = m
    terms: list[str] = []
    for j, extent in enumerate(shape):
        if j == dim:
            terms.append(f"({idx}).to(tl.int64) * in{i}_s{j}")
        elif extent != 1 and other[j] is not None:
            terms.append(f"{index_expr(other[j])} * in{i}_s{j}")
    used = tuple(entry for j, entry in enumerate(other) if j != dim)
    axes = e.axes_of(used) | idx_axes
    axes = axes.union(*(a for _, a in e.guards))
    base = e.mask_for(axes)
    mask = " & ".join(([base] if base else []) + [g for g, _ in e.guards]) or None
    if op.checks_on_device:
        device_check(e, op, idx, _extent_arg(e, src, i, dim), mask)
    name = e.fresh("ld")
    e.line(f"{name} = tl.load(in{i}_ptr + ({' + '.join(terms)})" + (f", mask={mask}, other=0)" if mask else ")")
           + f"  # {op.name}")
    return name, axes


# -- scatters ----------------------------------------------------------------------


def scatter_op(kernel: alloc.KernelOp) -> Operation | None:
    """The scatter op of a scatter kernel (a segment of one scatter), else None."""
    return kernel_domain.scatter_op(list(kernel.body.block.ops))


def plan_scatter(kernel: alloc.KernelOp, op: Operation) -> KernelPlan:
    """The plan of a scatter kernel: its domain is `kernel_domain.scatter_domain`'s shape, the index and
    source are read on it, and its one output (the input's shape) is off it."""
    block = kernel.body.block
    yielded = list(block.last_op.operands)
    body = [o for o in block.ops if not isinstance(o, alloc.YieldOp)]
    if len(body) != 1 or yielded != [op.results[0]]:
        raise CodegenError(f"kernel {kernel.sym_name.data}: a scatter kernel holds its scatter only")
    for v in op.operands:
        if v not in block.args:
            raise CodegenError(f"kernel {kernel.sym_name.data}: the operands of {op.name} must be kernel inputs")
    domain = _shape(kernel_domain.scatter_domain(op))
    plan = KernelPlan(kernel, kernel.kind.data, domain, list(range(len(domain) - 1)),
                      [len(domain) - 1] if domain else [], [])
    if isinstance(op, fusion.ScatterOp):
        plan.natural[op.index] = identity_map(_shape(op.index), domain)
        plan.natural[op.src] = identity_map(_shape(op.src), domain)
    else:
        plan.natural[op.value] = identity_map(_shape(op.value), domain)
        plan.natural[op.index] = ((0, 0),) if _shape(op.index)[0] != 1 else (None,)
    plan.extents = domain_extents(plan)
    return plan


def emit_scatter(e: _Emitter) -> None:
    """The scatter kernel: one tile of the domain per program, stored (scatter) or added
    atomically (index_put_accumulate) at the computed addresses of output 0."""
    op = scatter_op(e.plan.kernel)
    assert op is not None
    e.line("pid = tl.program_id(0)")
    e.line("tiles_n = (N + BLOCK_N - 1) // BLOCK_N")
    e.emit_outer_indices("(pid // tiles_n)")
    e.emit_inner_indices("(pid % tiles_n) * BLOCK_N")
    src = op.src if isinstance(op, fusion.ScatterOp) else op.value
    idx, _ = e.value(op.index, e.plan.natural[op.index])
    val, _ = e.value(src, e.plan.natural[src])
    dim = op.indexed_dim()
    out_t = op.results[0].type
    terms = [f"({idx}).to(tl.int64) * out0_s{dim}"]
    for j, extent in enumerate(_shape(op.results[0])):
        if j != dim and extent != 1:
            terms.append(f"i{j} * out0_s{j}")
    tile = "(BLOCK_M, BLOCK_N)"
    if op.checks_on_device:
        source = op.source_operand
        device_check(e, op, idx, _extent_arg(e, source, e.arg_index[source], dim), "mask_m & mask_n")
    ptr = f"out0_ptr + ({' + '.join(terms)} + tl.zeros({tile}, tl.int64))"
    x = f"tl.broadcast_to({e.to(f'({val})', triton_dtype(out_t.element_type))}, {tile})"
    if isinstance(op, fusion.ScatterOp):
        e.line(f"tl.store({ptr}, {x}, mask=mask_m & mask_n)  # fusion.scatter")
    else:
        if isinstance(out_t.element_type, BFloat16Type):
            raise CodegenError(f"kernel {e.plan.name}: index_put_accumulate of bf16 has no atomic add in the "
                               "Triton backend (f16, f32, f64, i32 and i64 do)")
        e.line(f"tl.atomic_add({ptr}, {x}, mask=mask_m & mask_n)  # fusion.index_put_accumulate")


# -- device checks -----------------------------------------------------------------


INDEX_MESSAGE = "index out of range: "
"""How the message of every device index check starts (`launch` turns an interpreted
kernel's failed check into a RunError by it)."""


def _extent_arg(e: _Emitter, src: SSAValue, i: int, dim: int) -> str:
    """The extent of dim `dim` of kernel input #i (`src`): a literal where static, else the
    kernel's size argument `in{i}_n{dim}`."""
    extent = _shape(src)[dim]
    return str(extent) if extent >= 0 else f"in{i}_n{dim}"


def device_check(e: _Emitter, op: fusion.IndexingOp, idx: str, extent: str, mask: str | None) -> None:
    """The kernel's check of the indices `idx` (a tile) against `[0, extent)` in the lanes of
    `mask`, before they address anything: a `tl.device_assert`, whose message names the op
    and its operands (`check_message`)."""
    ok = f"((({idx}) >= 0) & (({idx}) < {extent}))"
    if mask:
        ok = f"({ok} | ~({mask}))"
    e.line(f"tl.device_assert({ok}, {literal(check_message(op))})  # index_check = device")
    e.device_asserts = True


def check_message(op: fusion.IndexingOp) -> str:
    """The message of a device index check: `INDEX_MESSAGE`, then the op, its index operand,
    and the dim of the operand it addresses (the host check's words, without the value)."""
    what, where = _check_words(op)
    return f"{INDEX_MESSAGE}{what} holds an index outside [0, extent) of {where}"


def _check_words(op: fusion.IndexingOp) -> tuple[str, str]:
    idx, src = op.index_operand, op.source_operand
    k, s = list(op.operands).index(idx), list(op.operands).index(src)
    what = f"{op.name}: operand #{k}{_named(idx)}"
    where = f"dimension {op.indexed_dim()} of operand #{s}{_named(src)}"
    return what, where


# -- host program ------------------------------------------------------------------


def host_prologue(kernel: alloc.KernelOp, ins: list[str], outs: list[str], dim_of: object) -> list[str]:
    """Host lines run before a kernel's launch: a bounds check of the index of every
    indexing op whose indices the host checks (`index_check` other than `device`:
    `host_runtime.check_indices`), and for a scatter kernel the copy of the input into
    the output buffer, unless the output is the input's buffer (alloc-plan's in-place
    reuse: the kernel then writes the addressed elements in place). `dim_of(buffer, j)`
    spells a host extent."""
    args = list(kernel.body.block.args)
    lines: list[str] = []
    for op in kernel.body.walk():
        if not isinstance(op, fusion.IndexingOp):
            continue
        idx, src = op.index_operand, op.source_operand
        if idx not in args or src not in args:
            raise CodegenError(f"kernel {kernel.sym_name.data}: the index and source of {op.name} must be kernel inputs")
        if op.checks_on_device:
            continue
        extent = dim_of(kernel.ins[args.index(src)], op.indexed_dim())
        what, where = _check_words(op)
        lines.append(f"rt.check_indices({ins[args.index(idx)]}, {extent}, {literal(what)}, {literal(where)})")
    op = scatter_op(kernel)
    if op is not None and kernel.outs[0] is not kernel.ins[args.index(op.source_operand)]:
        lines.append(f"{outs[0]}.copy_({ins[args.index(op.source_operand)]})")
    return lines


def _named(v: SSAValue) -> str:
    return f" (%{v.name_hint})" if v.name_hint else ""
