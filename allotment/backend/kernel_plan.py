"""What a generated kernel iterates over: the domain of an `alloc.kernel`.

A kernel computes its body over one iteration domain D (a shape). Its dims are
split into `outer` dims (one tile row per outer index) and `inner` dims (the
tile's columns): for reduction and normalization kernels the inner dims are the
reduced dims, for pointwise kernels the last dim. Every tensor value of the
body relates to D by an index map: for each of its dims, the domain dim that
indexes it (with a shift, for pad and cat) or None (a size-1 dim: index 0).

`plan_kernel` derives D, the split, each value's natural map and, for each
dynamic domain dim, which `index` values of the host program give its extent
(a dim of an in or out buffer, which the host program knows as an
`alloc.alloc` size or a `memref.dim`, or an `index` value it passes in): the
launcher is given extents, it never reads them from a tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.dialects import alloc, fusion
from allotment.errors import CompileError

Map = tuple[tuple[int, object] | None, ...]
"""Per value dim: (domain dim, shift) or None. A shift is an int or the name of a size."""

REDUCTIONS = (fusion.ReductionOp, fusion.VarMeanOp)


class CodegenError(CompileError):
    """A kernel the code generator cannot handle (a bug or a missing feature)."""


@dataclass(frozen=True)
class BufferDim:
    """Extent `dim` of the kernel's `index`-th in or out buffer."""

    kind: str  # "in" | "out"
    index: int
    dim: int


@dataclass
class ExtentSource:
    """A domain extent: static, or the sum of host-program sizes `terms` plus `offset`.

    A term is a dim of one of the kernel's buffers or an `index` value of the host
    function (an operand of the kernel, never one of its block arguments)."""

    static: int | None = None
    terms: tuple[BufferDim | SSAValue, ...] = ()
    offset: int = 0


@dataclass
class KernelPlan:
    kernel: alloc.KernelOp
    kind: str
    domain: tuple[int, ...]
    outer: list[int]
    inner: list[int]
    reductions: list[Operation]
    natural: dict[SSAValue, Map] = field(default_factory=dict)
    extents: list[ExtentSource] = field(default_factory=list)
    row_buffers: dict[Operation, alloc.AllocOp] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.kernel.sym_name.data


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _reduced_dims(op: Operation) -> list[int]:
    rank = len(_shape(op.operands[0]))
    return sorted({d + rank if d < 0 else d for d in op.dims.get_values()})


def identity_map(shape: Sequence[int], domain: Sequence[int]) -> Map:
    return tuple(None if e == 1 and domain[d] != 1 else (d, 0) for d, e in enumerate(shape))


def plan_kernel(kernel: alloc.KernelOp) -> KernelPlan:
    block = kernel.body.block
    ops = [op for op in block.ops if not isinstance(op, alloc.YieldOp)]
    reductions = [op for op in ops if isinstance(op, REDUCTIONS)]
    yielded = list(block.last_op.operands)
    if reductions:
        domain = _shape(reductions[0].operands[0])
        rdims = _reduced_dims(reductions[0])
        for r in reductions[1:]:
            if _shape(r.operands[0]) != domain or _reduced_dims(r) != rdims:
                raise CodegenError(f"kernel {kernel.sym_name.data}: reductions over different domains")
        outer = [d for d in range(len(domain)) if d not in rdims]
        inner = rdims
    else:
        shapes = [_shape(v) for v in yielded if isinstance(v.type, TensorType)]
        domain = max(shapes, key=len) if shapes else ()
        outer = list(range(len(domain) - 1))
        inner = [len(domain) - 1] if domain else []
    plan = KernelPlan(kernel, kernel.kind.data, tuple(domain), outer, inner, reductions)
    _natural_maps(plan, block.args, ops)
    for v in yielded:
        if v not in plan.natural:
            raise CodegenError(f"kernel {plan.name}: cannot place output {v.name_hint} in the iteration domain")
    for op in ops:
        if isinstance(op, alloc.AllocOp):
            nxt = op.next_op
            while nxt is not None and not isinstance(nxt, REDUCTIONS):
                nxt = nxt.next_op
            if nxt is not None:
                plan.row_buffers[nxt] = op
    plan.extents = _extent_sources(plan, kernel, block.args, yielded)
    return plan


def _natural_maps(plan: KernelPlan, args: Sequence[SSAValue], ops: Sequence[Operation]) -> None:
    """Forward: the map of each value that has one without knowing its use."""
    d = plan.domain
    outer_map: Map = tuple((o, 0) for o in plan.outer)

    def by_shape(shape: tuple[int, ...]) -> Map | None:
        if len(shape) == len(d) and all(e == x or e == 1 or DYNAMIC_INDEX in (e, x) for e, x in zip(shape, d)):
            return identity_map(shape, d)
        if plan.reductions and len(shape) == len(plan.outer):
            return outer_map
        return None

    for a in args:
        gathered_only = a.uses and all(isinstance(u.operation, fusion.PadOp | fusion.CatOp) for u in a.uses)
        if isinstance(a.type, TensorType) and not gathered_only:
            m = by_shape(_shape(a))
            if m is not None:
                plan.natural[a] = m
    for op in ops:
        for r in op.results:
            if not isinstance(r.type, TensorType):
                continue
            m: Map | None
            if isinstance(op, REDUCTIONS):
                keep = op.keepdim is not None
                rd = _reduced_dims(op)
                m = tuple(None if i in rd else (i, 0) for i in range(len(d))) if keep else outer_map
            elif isinstance(op, fusion.SqueezeOp) and op.input in plan.natural:
                src = plan.natural[op.input]
                rank = len(src)
                drop = {x + rank if x < 0 else x for x in op.dims.get_values()}
                m = tuple(e for i, e in enumerate(src) if i not in drop)
            else:
                m = by_shape(_shape(r))
            if m is not None:
                plan.natural[r] = m
    _squeezed_maps(plan, ops)


def _squeezed_maps(plan: KernelPlan, ops: Sequence[Operation]) -> None:
    """Backward: a value of higher rank than the domain, seen only through a squeeze of
    its size-1 dims (and the elementwise ops before it), takes the squeezed value's map."""
    for op in reversed(ops):
        if isinstance(op, fusion.SqueezeOp) and op.result in plan.natural and op.input not in plan.natural:
            rank = len(_shape(op.input))
            drop = {x + rank if x < 0 else x for x in op.dims.get_values()}
            it = iter(plan.natural[op.result])
            plan.natural[op.input] = tuple(None if i in drop else next(it) for i in range(rank))
        elif isinstance(op, fusion.ElementwiseOp | fusion.CastOp) and op.results[0] in plan.natural:
            m = plan.natural[op.results[0]]
            for x in op.operands:
                shape = _shape(x)
                if isinstance(x.type, TensorType) and x not in plan.natural and len(shape) == len(m):
                    plan.natural[x] = tuple(None if e == 1 else entry for e, entry in zip(shape, m))


def _extent_sources(plan: KernelPlan, kernel: alloc.KernelOp, args: Sequence[SSAValue], yielded: Sequence[SSAValue]) -> list[ExtentSource]:
    out: list[ExtentSource] = []
    for dim, e in enumerate(plan.domain):
        if e != DYNAMIC_INDEX:
            out.append(ExtentSource(static=e))
            continue
        src = _find_operand_dim(plan, "out", yielded, dim) or _find_operand_dim(plan, "in", args, dim)
        if src is not None:
            out.append(ExtentSource(terms=(src,)))
            continue
        gathered = _gather_extent(plan, args, dim)
        if gathered is not None:
            out.append(gathered)
            continue
        idx = _find_index_value(kernel, plan, dim)
        if idx is None:
            raise CodegenError(f"kernel {plan.name!r}: no operand gives the extent of domain dim {dim}")
        if idx in list(args):
            idx = kernel.ins[list(args).index(idx)]
        out.append(ExtentSource(terms=(idx,)))
    return out


def _find_operand_dim(plan: KernelPlan, kind: str, values: Sequence[SSAValue], dim: int) -> BufferDim | None:
    for i, v in enumerate(values):
        m = plan.natural.get(v)
        if m is None or not isinstance(v.type, TensorType):
            continue
        shape = _shape(v)
        for j, entry in enumerate(m):
            if entry is not None and entry[0] == dim and entry[1] == 0 and shape[j] != 1:
                return BufferDim(kind, i, j)
    return None


def _gather_extent(plan: KernelPlan, args: Sequence[SSAValue], dim: int) -> ExtentSource | None:
    """The extent of a domain dim spanned by a pad or cat of kernel inputs."""
    index = {a: i for i, a in enumerate(args)}
    for op in plan.kernel.body.block.ops:
        if not isinstance(op, fusion.PadOp | fusion.CatOp):
            continue
        m = plan.natural.get(op.results[0])
        if m is None:
            continue
        for j, entry in enumerate(m):
            if entry is None or entry[0] != dim:
                continue
            if isinstance(op, fusion.PadOp):
                if op.input not in index:
                    return None
                lo, hi = op.low.get_values()[j], op.high.get_values()[j]
                return ExtentSource(terms=(BufferDim("in", index[op.input], j),), offset=lo + hi)
            rank = len(_shape(op.results[0]))
            cat_dim = op.dim.value.data + (rank if op.dim.value.data < 0 else 0)
            if any(v not in index for v in op.inputs):
                return None
            if j == cat_dim:
                return ExtentSource(terms=tuple(BufferDim("in", index[v], j) for v in op.inputs))
            return ExtentSource(terms=(BufferDim("in", index[op.inputs[0]], j),))
    return None


def _find_index_value(kernel: alloc.KernelOp, plan: KernelPlan, dim: int) -> SSAValue | None:
    """A dynamic extent given to a `full`/`iota`/`broadcast_in_dim` inside the kernel."""
    for op in kernel.body.walk():
        if isinstance(op, fusion.FullOp | fusion.BroadcastInDimOp | fusion.ExpandOp):
            m = plan.natural.get(op.results[0])
            if m is None:
                continue
            static = list(op.properties[("static_sizes" if isinstance(op, fusion.FullOp) else "static_shape")].get_values())
            dyn = iter(op.operands[1:] if not isinstance(op, fusion.FullOp) else op.operands[1:])
            for j, s in enumerate(static):
                v = next(dyn) if s == DYNAMIC_INDEX else None
                if v is not None and m[j] is not None and m[j][0] == dim:
                    return v
        if isinstance(op, fusion.IotaOp) and plan.natural.get(op.result) and op.length:
            m = plan.natural[op.result]
            if m[0] is not None and m[0][0] == dim:
                return op.length[0]
    return None
