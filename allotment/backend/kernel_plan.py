"""What a generated kernel iterates over: the domain of an `alloc.kernel`.

A kernel computes its body over one iteration domain D (a shape). Its dims are
split into `outer` dims (one tile row per outer index) and `inner` dims (the
tile's columns): for reduction and normalization kernels the inner dims are the
reduced dims, for pointwise kernels the last dim. Every tensor value of the
body relates to D by an index map: for each of its dims, the domain dim that
indexes it (with a shift and a scale, for pad, cat and slice), a constant, or
None (a size-1 dim: index 0). Values read only through slices, pads, cats,
permutes and reshapes are off the domain (`_on_domain`): they have no natural
map. A reduction split across CTAs has a partials input (`KernelPlan.partials`).

`plan_domain_kernel` (which `kernel_kinds.plan_kernel` calls for the kinds without a
planner of their own) derives D, the split and each value's natural map. D's extents are the
kernel's own (`alloc.kernel ... domain [...]`, `analysis.kernel_domain`): the
planner checks that its D is that domain, and the host program passes the
kernel's `index` operands for its dynamic extents; the extents of values inside
the body are their `alloc.extents` (`body_extents`). Nothing here works an extent
out from the body: the launcher is given extents, it never reads them from a tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.analysis import row_passes
from allotment.dialects import alloc, fusion
from allotment.errors import CompileError
from allotment.extents.dims import dim_set, normalize_dim

Map = tuple[tuple | None, ...]
"""Per value dim: None (index 0), `(d, shift)` (index `i_d - shift`) or `(d, shift, scale)`
(index `scale * i_d - shift`); d is a domain dim, or None for a constant index `-shift`.
A shift is an int or an expression (a string) over the kernel's scalar arguments; a scale
is an int. Slices, pads, cats and permutes of values computed in a kernel move their
operands' maps (`kernels.emitter.Emitter.operand_maps`): index arithmetic, no buffer."""

INDEX_VIEWS = (fusion.SliceOp, fusion.PermuteOp, fusion.ReshapeOp, fusion.PadOp, fusion.CatOp,
               *fusion.INDEXING_GATHERS)
"""Ops whose operands are read at other indices than their result (off the kernel's domain)."""

REDUCTIONS = row_passes.REDUCTIONS


class CodegenError(CompileError):
    """A kernel the code generator cannot handle (a bug or a missing feature)."""


@dataclass
class ExtentSource:
    """A domain extent: static, or the kernel's `index` operand `value` (a size of the host
    program, `alloc.kernel ... domain [...]`)."""

    static: int | None = None
    value: SSAValue | None = None


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
    partials: dict[Operation, int] = field(default_factory=dict)
    """A reduction split across CTAs -> the in holding its partials [split, kept]
    (`analysis.split_reduction`; the kernel's `partials` attribute); a var_mean's or
    welford's: its sum partials."""
    partials_m2: dict[Operation, int] = field(default_factory=dict)
    """A var_mean or welford split across CTAs -> the in holding its partial sums of squared
    deviations about each chunk's mean (M2) [split, kept]."""

    @property
    def inner_split(self) -> bool:
        """A reduction split across CTAs that reduces the innermost domain dim and keeps
        another (`analysis.split_reduction`'s inner split: rows of few kept indices)."""
        return bool(self.partials) and bool(self.outer) and len(self.domain) - 1 in self.inner
    columns: dict[Operation, int] = field(default_factory=dict)
    """An inner-outer kernel's column reductions -> the in holding each one's partials
    [programs, N] (`backend/kernels/inner_outer.py`; the kernel's `column_partials` attribute)."""

    @property
    def name(self) -> str:
        return self.kernel.sym_name.data


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _reduced_dims(op: Operation) -> list[int]:
    return op.reduced_dims()


def identity_map(shape: Sequence[int], domain: Sequence[int]) -> Map:
    return tuple(None if e == 1 and domain[d] != 1 else (d, 0) for d, e in enumerate(shape))


def plan_domain_kernel(kernel: alloc.KernelOp) -> KernelPlan:
    """The plan of a pointwise, reduction or normalization kernel (the kinds without a planner
    of their own: `kernel_kinds.plan_kernel` dispatches)."""
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
    _split_partials(plan)
    _natural_maps(plan, block.args, ops)
    return _place_outputs_and_rows(plan, kernel, block.args, ops, yielded)


def _place_outputs_and_rows(
    plan: KernelPlan, kernel: alloc.KernelOp, args: Sequence[SSAValue], ops: list[Operation], yielded: list[SSAValue]
) -> KernelPlan:
    """The end of every plan: each output placed in the iteration domain (else a
    CodegenError), each row buffer tied to the reduction after it, the extents' sources."""
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
    plan.extents = domain_extents(plan)
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

    on = _on_domain(plan, ops)
    derived: set[SSAValue] = set()
    """Values computed from a reduction's result: their size-1 extents at reduced dims are
    the kept dims of a keepdim reduction, never an index of the domain (a full max with
    keepdim over [1, 600], times 1.5: its [1, 1] result is stored with the reduction's)."""
    for a in args:
        if isinstance(a.type, TensorType) and a in on:
            m = by_shape(_shape(a))
            if m is not None:
                plan.natural[a] = m
    for op in ops:
        for r in op.results:
            if not isinstance(r.type, TensorType) or r not in on:
                continue
            m: Map | None
            if isinstance(op, REDUCTIONS):
                keep = op.keepdim is not None
                rd = _reduced_dims(op)
                m = tuple(None if i in rd else (i, 0) for i in range(len(d))) if keep else outer_map
            elif isinstance(op, fusion.SqueezeOp) and op.input in plan.natural:
                src = plan.natural[op.input]
                rank = len(src)
                drop = set(dim_set(op.dims.get_values(), rank))
                m = tuple(e for i, e in enumerate(src) if i not in drop)
            else:
                m = by_shape(_shape(r))
                shape = _shape(r)
                if m is not None and len(shape) == len(d) and any(x in derived for x in op.operands):
                    m = tuple(None if i in plan.inner and shape[i] == 1 else e for i, e in enumerate(m))
            if m is not None:
                plan.natural[r] = m
        if isinstance(op, REDUCTIONS) or any(x in derived for x in op.operands):
            derived.update(op.results)
    _squeezed_maps(plan, ops)


def _split_partials(plan: KernelPlan) -> None:
    """Reads the kernel's `partials` attribute: in body order, one in-index per reduction, two
    (its sum's, then its M2's) per var_mean or welford, which only an inner split has."""
    attr = plan.kernel.attributes.get("partials")
    if attr is None:
        return
    if not isinstance(attr, DenseArrayBase):
        raise CodegenError(f"kernel {plan.name!r}: `partials` must be an array of in-indices")
    indices = [int(i) for i in attr.get_values()]
    args = plan.kernel.body.block.args
    two = [isinstance(r, fusion.VarMeanOp | fusion.WelfordOp) for r in plan.reductions]
    if len(indices) != len(plan.reductions) + sum(two) or any(
        not 0 <= i < len(args) or not isinstance(args[i].type, TensorType) or len(_shape(args[i])) != 2 or args[i].uses
        for i in indices
    ):
        raise CodegenError(
            f"kernel {plan.name!r}: `partials` must name one unused [split, kept] input per reduction "
            "(two per var_mean or welford)"
        )
    at = iter(indices)
    for r, pair in zip(plan.reductions, two):
        plan.partials[r] = next(at)
        if pair:
            plan.partials_m2[r] = next(at)
    if plan.partials_m2 and not plan.inner_split:
        raise CodegenError(f"kernel {plan.name!r}: var_mean and welford are split across CTAs only along rows")


def _on_domain(plan: KernelPlan, ops: Sequence[Operation]) -> set[SSAValue]:
    """The values read at the domain's own indices: the outputs, the reductions' inputs
    and results and, backward, the operands of the other ops that use such values. The
    operands of slices, pads, cats, permutes and reshapes (`INDEX_VIEWS`) are read at other
    indices (off the domain): they have no natural map and give no domain extent."""
    on: set[SSAValue] = set(plan.kernel.body.block.last_op.operands)
    for r in plan.reductions:
        on.add(r.operands[0])
        on.update(r.results)
    for op in reversed(ops):
        if isinstance(op, INDEX_VIEWS) or not any(r in on for r in op.results):
            continue
        on.update(x for x in op.operands if isinstance(x.type, TensorType))
    return on


def _squeezed_maps(plan: KernelPlan, ops: Sequence[Operation]) -> None:
    """Backward: a value of higher rank than the domain, seen only through a squeeze of
    its size-1 dims (and the elementwise ops before it), takes the squeezed value's map."""
    for op in reversed(ops):
        if isinstance(op, fusion.SqueezeOp) and op.result in plan.natural and op.input not in plan.natural:
            rank = len(_shape(op.input))
            drop = set(dim_set(op.dims.get_values(), rank))
            it = iter(plan.natural[op.result])
            plan.natural[op.input] = tuple(None if i in drop else next(it) for i in range(rank))
        elif isinstance(op, fusion.ElementwiseOp | fusion.CastOp) and op.results[0] in plan.natural:
            m = plan.natural[op.results[0]]
            for x in op.operands:
                shape = _shape(x)
                if isinstance(x.type, TensorType) and x not in plan.natural and len(shape) == len(m):
                    plan.natural[x] = tuple(None if e == 1 else entry for e, entry in zip(shape, m))


def domain_extents(plan: KernelPlan) -> list[ExtentSource]:
    """The extents of the plan's domain: the kernel's `domain` (static extents, and its
    `index` operands for the dynamic ones), which must be the domain the planner derived."""
    kernel = plan.kernel
    domain = kernel.static_domain
    if domain is None:
        raise CodegenError(f"kernel {plan.name!r} has no domain: run fusion-allocate first")
    if domain != plan.domain:
        raise CodegenError(f"kernel {plan.name!r}: its domain {list(domain)} is not its body's, {list(plan.domain)}")
    dynamic = iter(kernel.extents)
    return [ExtentSource(value=next(dynamic)) if e == DYNAMIC_INDEX else ExtentSource(static=e) for e in domain]


def body_extents(kernel: alloc.KernelOp) -> dict[tuple[SSAValue, bool], list[int | SSAValue]]:
    """(value, starts?) -> its `alloc.extents` entries: extents (or, with starts, where a
    slice starts in its input) of values inside the kernel, as host sizes or integers."""
    return {
        (op.value, op.starts is not None): op.entries()
        for op in kernel.body.block.ops if isinstance(op, alloc.ExtentsOp)
    }


# -- index maps ------------------------------------------------------------------


def _unpack(entry: tuple) -> tuple[int | None, object, int]:
    return (entry[0], entry[1], 1) if len(entry) == 2 else (entry[0], entry[1], entry[2])


def _entry(d: int | None, shift: object, scale: int) -> tuple | None:
    if d is None and shift in (0, "0"):
        return None
    return (d, shift) if scale == 1 else (d, shift, scale)


def add_shift(a: object, b: object) -> object:
    """a + b for shifts (ints, or expressions as strings)."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a in (0, "0"):
        return b
    if b in (0, "0"):
        return a
    return f"{a} + {b}"


def _neg(a: object) -> object:
    return -a if isinstance(a, int) else f"-({a})"


def _scaled(a: object, k: int) -> object:
    if isinstance(a, int):
        return a * k
    return a if k == 1 else f"({a}) * {k}"


def index_expr(entry: tuple | None) -> str:
    """The Triton index expression of a map entry (None: index 0)."""
    if entry is None:
        return "0"
    d, shift, scale = _unpack(entry)
    if d is None:
        return f"({_neg(shift)})"
    base = f"i{d}" if scale == 1 else f"i{d} * {scale}"
    return base if shift in (0, "0") else f"({base} - ({shift}))"


def entry_dim(entry: tuple | None) -> int | None:
    """The domain dim an entry varies with (None: a constant index)."""
    return None if entry is None else entry[0]


def shifted(entry: tuple | None, delta: object) -> tuple | None:
    """The entry of index `index(entry) - delta` (a pad's low padding, a cat piece's offset)."""
    if entry is None:
        return _entry(None, delta, 1)
    d, shift, scale = _unpack(entry)
    return _entry(d, add_shift(shift, delta), scale)


def sliced(entry: tuple | None, first: object, step: int) -> tuple | None:
    """The source entry of a slice's entry: `first + step * index(entry)`."""
    if entry is None:
        return _entry(None, _neg(first), 1)
    d, shift, scale = _unpack(entry)
    return _entry(d, add_shift(_scaled(shift, step), _neg(first)), scale * step)


def permuted(m: Map, perm: Sequence[int]) -> Map:
    """The input map of a permute (`result dim j = input dim perm[j]`) at result map m."""
    out: list[tuple | None] = [None] * len(perm)
    for j, p in enumerate(perm):
        out[p] = m[j]
    return tuple(out)


def unit_reshaped(m: Map, in_shape: Sequence[int], out_shape: Sequence[int]) -> Map | None:
    """The input map of a reshape that only inserts or removes static size-1 dims (None
    for any other reshape: it would need div/mod index arithmetic)."""
    ins = [j for j, e in enumerate(in_shape) if e != 1]
    outs = [j for j, e in enumerate(out_shape) if e != 1]
    if len(ins) != len(outs) or any(
        in_shape[a] != out_shape[b] and DYNAMIC_INDEX not in (in_shape[a], out_shape[b]) for a, b in zip(ins, outs)
    ):
        return None
    out: list[tuple | None] = [None] * len(in_shape)
    for a, b in zip(ins, outs):
        out[a] = m[b]
    return tuple(out)


def norm_dims(values: Sequence[int], rank: int) -> list[int]:
    return [normalize_dim(d, rank) for d in values]


# -- a pad's widths, for the launcher ---------------------------------------------


def launcher_scalar(v: SSAValue, args: Sequence[SSAValue]) -> str:
    """An `index` value of a kernel body as the launcher spells it: `in{i}` for an input,
    a literal for a constant."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr

    if v in args:
        return f"in{list(args).index(v)}"
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return str(owner.value.value.data)
    raise CodegenError(f"index value {v.name_hint} is neither a kernel input nor a constant")


def pad_width(op: fusion.PadOp, which: str, j: int, args: Sequence[SSAValue]) -> str:
    """A pad's low or high width of dim j for the launcher: a literal or `in{i}`."""
    w = op.widths()[0 if which == "low" else 1][j]
    return str(w) if isinstance(w, int) else launcher_scalar(w, args)
