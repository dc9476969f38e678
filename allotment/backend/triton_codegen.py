"""Triton source for one `alloc.kernel` (every segment kind but `view` and `library`).

Each kernel works on 2-D tiles of its iteration domain (see `kernel_plan`):
BLOCK_M outer indices (rows) by BLOCK_N inner indices (columns). A value of
the body is emitted lazily at the index map it is needed at, as a tile that
varies over rows, columns, both or neither; Triton's broadcasting does the
rest. Loads use each buffer's own strides (broadcasts and views cost nothing),
with masks; 16-bit floats are computed in f32 and every op's result is rounded
to its IR type, as torch does op by op.

- pointwise: one tile per program, rows x columns over the last dim.
- reduction / normalization, persistent: the whole reduced row fits in one
  tile (BLOCK_N >= row length): every reduction and every output is computed
  from registers in one pass over memory.
- reduction / normalization, looped: one loop over the row per reduction
  level (a reduction that needs another's result is a level higher), then one
  more loop that computes and stores the full-domain outputs. A softmax's
  max and sum of exp(x - max) (in f32) share one loop with online rescaling,
  so a long-row softmax reads its row twice, not three times.
- reduction split across CTAs (`analysis.split_reduction`: outer, middle-axis
  and full reductions; the kernel's `partials` attribute names one partials
  buffer [split, kept] per reduction): `split_partial`, one program per (tile of
  BLOCK_M kept indices, split), loops over its split's whole BLOCK_N tiles of
  the reduced axis and stores one partial per kept index, and the outputs of
  the whole domain that need no reduction (dx beside its bias gradient) from
  the tiles it reads; `split_final` combines the partials of BLOCK_M kept
  indices in split order (deterministic) and computes the reduced outputs.
  With one split the `looped` variant does it all.
  Kept indices are the tile's rows: where they are contiguous in memory,
  Triton's coalescing follows them. An inner split (few long rows: the
  reduced dims include the innermost) has its own first stage
  (`emit_inner_split_partial`: chunks of multiples of the kernel's
  `inner_split_align`, read
  BLOCK_N contiguous elements a step; a var_mean or welford stores each chunk's
  sum and M2, which `merge_m2` combines with Chan's formula) and, with one
  split, the row kernel (`persistent` or `looped`) alloc-place chose.

Values read at other indices than their own (the operands of slices, pads,
cats, permutes and unit reshapes of values computed in the kernel) are
emitted at moved index maps (`kernel_plan.sliced`, `shifted`, `permuted`):
the ops computing them run again at those indices, and a pad's input or a
cat's piece is computed under its in-range condition (`_Emitter.guarded`: its
loads masked by it). Extents of such values that no buffer has, and where a
slice starts, are the body's `alloc.extents` (`kernel_plan.body_extents`): host
sizes that the host program passes (kernel arguments `X0`, `X1`, ...).

Which of the two a kernel gets is `alloc-place`'s decision, in the IR (the
kernel's `schedule`); with `schedule(persistent if %fits else looped)` both are
generated and the launcher (`host_codegen._launcher`) launches the one `%fits`
names. The launcher picks the block sizes.

The emitter is iterative (an explicit stack in `_Emitter.value`, one forward
pass in `reduction_levels`): the length of a chain of ops is bounded by memory,
not by Python's recursion limit. The only identifiers made from IR text are the
kernel function names, which the caller passes in (`identifiers.Namespace`); IR
value names appear only in comments (`identifiers.comment`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.analysis.one_hot import OneHot, one_hot_pick
from allotment.analysis.row_passes import online_softmax_pairs, softmax_terms, streamed_levels
from allotment.analysis.split_reduction import unreduced_outputs
from allotment.backend import triton_indexing, triton_math, triton_random
from allotment.backend.host_runtime import flat_rows
from allotment.backend.identifiers import comment
from allotment.backend.kernel_plan import (
    REDUCTIONS,
    CodegenError,
    KernelPlan,
    Map,
    add_shift,
    body_extents,
    entry_dim,
    identity_map,
    index_expr,
    norm_dims,
    pad_width,
    permuted,
    shifted,
    sliced,
    unit_reshaped,
)
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import element_type_of, promote
from allotment.dtypes import triton_dtype


def float_literal(v: float) -> str:
    """Python source for a float, infinities and NaN included."""
    if v != v or v in (float("inf"), float("-inf")):
        return f'float("{v}")'
    return repr(v)


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def compute_dtype(t: Attribute) -> str:
    """The type arithmetic on elements of type t happens in (f32 for 16-bit floats)."""
    return "tl.float32" if isinstance(t, Float16Type | BFloat16Type) else triton_dtype(t)


PRELUDE_COMMON = '''
@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def _int_pow(a, b):
    # exact: squaring in a's integer type (products wrap, as torch's integer pow wraps);
    # a negative exponent gives torch's results: 1 for base 1, +-1 for base -1, else 0
    zero = a * 0 + b * 0
    base = a + zero
    e = tl.where(b < 0, 0, b + zero)
    r = zero + 1
    for step in range(64):
        r = tl.where((e & 1) != 0, r * base, r)
        base = base * base
        e = e >> 1
    neg = tl.where(a == 1, 1, tl.where(a == -1, 1 - 2 * (b & 1), 0))
    return tl.where(b < 0, neg.to(r.dtype), r)
'''

PRELUDE_INTERPRETER = '''
@triton.jit
def _to_bf16(x):
    # round to nearest even (the interpreter's own cast truncates); NaN stays NaN
    if x.dtype == tl.bfloat16:
        return x
    b = x.to(tl.float32).to(tl.uint32, bitcast=True)
    r = tl.where(x != x, b | 0x400000, b + (0x7FFF + ((b >> 16) & 1)))
    return (r >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def _pow(x, y):
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    odd = (tl.floor(y) == y) & (tl.floor(y * 0.5) * 2.0 != y)
    r = tl.where((x < 0) & odd, -r, r)
    r = tl.where((x < 0) & (tl.floor(y) != y), float("nan"), r)
    r = tl.where(y == 0, 1.0, r)
    return r
'''

PRELUDE_CUDA = '''
from triton.language.extra import libdevice


@triton.jit
def _tanh(x):
    return libdevice.tanh(x)


@triton.jit
def _pow(x, y):
    return libdevice.pow(x, y)
'''


TILE_SHAPES = {frozenset({"m", "n"}): "(BLOCK_M, BLOCK_N)", frozenset({"m"}): "(BLOCK_M, 1)",
               frozenset({"n"}): "(1, BLOCK_N)", frozenset(): "(1, 1)"}
"""The tile shape of a value that varies along the given axes (m: rows, n: columns)."""


@dataclass
class KernelArg:
    """One argument of the generated kernel, as the launcher must pass it."""

    name: str
    kind: str  # "in", "out", "in_stride", "out_stride", "in_size", "scalar", "extent", "derived", "host_size", "M", "N"
    index: int = 0
    dim: int = 0
    expr: str = ""  # "derived": a Python expression over the launcher's parameters (a pad width `in{i}`)
    value: SSAValue | None = None
    """"host_size": a size of the host program that it passes (an `alloc.extents` entry)."""


@dataclass
class GeneratedKernel:
    plan: KernelPlan
    functions: dict[str, str]  # variant ("pointwise", "persistent", "looped") -> Triton function name
    source: str
    args: list[KernelArg]
    transposed: bool = False
    """A pointwise kernel that reads some operand along its outer axis (`_Emitter.transposed`)."""
    flat: bool = False
    """A pointwise kernel with flat indexing (`flat_pointwise`): one program per BLOCK_N
    linear indices of the domain."""


class _Emitter:
    """Emits one Triton function for a kernel plan (one variant)."""

    def __init__(
        self, plan: KernelPlan, variant: str, target: str, derived: dict[str | SSAValue, str] | None = None, flat: bool = False
    ) -> None:
        self.plan = plan
        self.derived = {} if derived is None else derived  # launcher expression or host size -> kernel argument
        self.sizes = body_extents(plan.kernel)
        self.guards: list[tuple[str, frozenset[str]]] = []  # in-range conditions of pad/cat pieces
        self.variant = variant
        self.target = target
        self.lines: list[str] = []
        self.indent = 1
        self.scopes: list[dict[tuple[SSAValue, Map], tuple[str, frozenset[str]]]] = [{}]
        self.counter = 0
        self.block = plan.kernel.body.block
        self.arg_index = {a: i for i, a in enumerate(self.block.args)}
        self.reduced: dict[SSAValue, str] = {}
        self.scalar_args: dict[SSAValue, str] = {}
        self.transposed = False
        """Some load reads a 2-D tile whose operand's last (contiguous) dim runs along the
        outer axis m: the launcher then picks square tiles (`host_runtime.transpose_blocks`)."""
        self.exp_terms = softmax_terms(plan.reductions)
        """exp ops that only feed their online-softmax sum (`row_passes.softmax_terms`)."""
        self.flat = flat and variant == "pointwise"
        """Flat indexing (`emit_flat_indices`): `generate_kernel` asks for it where
        `flat_pointwise` says so."""

    # -- helpers ---------------------------------------------------------------

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def lookup(self, key: tuple[SSAValue, Map]) -> tuple[str, frozenset[str]] | None:
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    # -- indices ---------------------------------------------------------------

    def extent(self, d: int) -> str:
        src = self.plan.extents[d]
        return str(src.static) if src.static is not None else f"D{d}"

    def emit_outer_indices(self, pid_m: str) -> None:
        self.line(f"rm = {pid_m} * BLOCK_M + tl.arange(0, BLOCK_M)")
        self.line("if USE_I64:")
        self.line("    rm = rm.to(tl.int64)")
        # every launch's grid is exactly ceil(M / BLOCK_M) row tiles (M > 0), so a tile of one
        # row is always in range: a constant mask that Triton folds away (a select less per
        # element: cross-entropy 141 -> 129 us on an H200, `benchmarks/looped_kernel_variants.py`)
        self.line("if BLOCK_M == 1:")
        self.line("    mask_m = tl.full((1, 1), 1, tl.int1)")
        self.line("else:")
        self.line("    mask_m = (rm < M)[:, None]")
        self._decompose("rm", self.plan.outer, "[:, None]")

    def emit_inner_indices(self, start: str, full: bool = False) -> None:
        """The tile's reduced indices from `start`; `full`: a tile known to lie within N
        (`row_loop`), whose mask is a constant (Triton folds it away)."""
        self.line(f"rn = {start} + tl.arange(0, BLOCK_N)")
        self.line("if USE_I64:")
        self.line("    rn = rn.to(tl.int64)")
        self.line("mask_n = tl.full((1, BLOCK_N), 1, tl.int1)" if full else "mask_n = (rn < N)[None, :]")
        self._decompose("rn", self.plan.inner, "[None, :]")

    def _decompose(self, lin: str, dims: Sequence[int], expand: str) -> None:
        """Domain indices from a linear index; the outermost needs no modulo (a linear index
        past the tile's extent is masked), which keeps a lone dim's indices visibly contiguous."""
        after = "1"
        for d in reversed(dims):
            wrap = "" if d == dims[0] else f" % {self.extent(d)}"
            if after == "1":
                self.line(f"i{d} = ({lin}{wrap}){expand}")
            else:
                self.line(f"i{d} = (({lin} // ({after})){wrap}){expand}")
            after = self.extent(d) if after == "1" else f"{after} * {self.extent(d)}"

    def axes_of(self, m: Map) -> frozenset[str]:
        axes = set()
        for entry in m:
            d = entry_dim(entry)
            if d is not None:
                axes.add("m" if d in self.plan.outer else "n")
        return frozenset(axes)

    def mask_for(self, axes: frozenset[str]) -> str | None:
        parts = [f"mask_{a}" for a in ("m", "n") if a in axes]
        return " & ".join(parts) if parts else None

    # -- values ----------------------------------------------------------------

    def value(self, v: SSAValue, m: Map) -> tuple[str, frozenset[str]]:
        """A Triton expression variable of value v at index map m.

        Iterative (an explicit stack, no recursion): a chain of any length of
        ops emits in the order a depth-first walk of the operands would, each
        (value, map) pair once per scope."""
        found = self._known(v, m)
        if found is not None:
            return found
        stack: list[tuple[SSAValue, Map, bool]] = [(v, m, False)]
        while stack:
            x, xm, ready = stack.pop()
            if self._known(x, xm) is not None:
                continue
            if not ready:  # first visit: its operands first, then x again
                missing = [(d, dm) for d, dm in self.operand_maps(x, xm) if self._known(d, dm) is None]
                if missing:
                    stack.append((x, xm, True))
                    stack.extend((d, dm, False) for d, dm in reversed(missing))
                    continue
            self.scopes[-1][(x, xm)] = self.compute(x, xm)
        found = self._known(v, m)
        if found is None:
            raise CodegenError(f"kernel {self.plan.name!r}: {v.name_hint} was not emitted")
        return found

    def _known(self, v: SSAValue, m: Map) -> tuple[str, frozenset[str]] | None:
        """v at m if it needs no code or was already emitted in a visible scope (loads
        of block arguments and reduced values are emitted here, at first use)."""
        if not isinstance(v.type, TensorType):
            return self.scalar(v), frozenset()
        key = (v, m)
        found = self.lookup(key)
        if found is not None:
            return found
        if v in self.reduced:
            natural = self.plan.natural.get(v, m)
            if any(e is not None and n is not None and e != n for e, n in zip(m, natural)):  # another row's
                raise CodegenError(f"kernel {self.plan.name}: reduced value {v.name_hint} is used across rows")
            result = (self.reduced[v], frozenset({"m"}))  # a (BLOCK_M, 1) tile
        elif v in self.arg_index:
            result = self.load(v, m)
        else:
            return None
        self.scopes[-1][key] = result
        return result

    def operand_maps(self, v: SSAValue, m: Map) -> list[tuple[SSAValue, Map]]:
        """The (value, map) pairs that computing v at m reads (before `compute` runs)."""
        op = v.owner
        if not isinstance(op, Operation):
            return []
        if isinstance(op, fusion.BroadcastInDimOp):
            dims = list(op.broadcast_dims.get_values())
            src_shape = op.input.type.get_shape()
            return [(op.input, tuple(None if src_shape[i] == 1 else m[d] for i, d in enumerate(dims)))]
        if isinstance(op, fusion.ExpandOp):
            src_shape = op.input.type.get_shape()
            return [(op.input, tuple(None if e == 1 else entry for e, entry in zip(src_shape, m)))]
        if isinstance(op, fusion.SqueezeOp):
            rank = len(op.input.type.get_shape())
            drop = {x + rank if x < 0 else x for x in op.dims.get_values()}
            it = iter(m)
            return [(op.input, tuple(None if i in drop else next(it) for i in range(rank)))]
        if isinstance(op, fusion.SliceOp | fusion.PermuteOp | fusion.ReshapeOp):
            return [(op.input, self.view_source_map(op, m))]
        if isinstance(op, fusion.CastOp | fusion.SetOp | fusion.ElementwiseOp) and not isinstance(op, REDUCTIONS):
            return [(x, self.operand_map(x, m)) for x in op.operands if isinstance(x.type, TensorType)]
        if isinstance(op, fusion.INDEXING_GATHERS):  # the index; the gather loads its source itself
            return triton_indexing.gather_operand_maps(op, m)
        return []

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

    def scalar(self, v: SSAValue) -> str:
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, FloatAttr):
                return float_literal(float(attr.value.data))
            if isinstance(attr, IntegerAttr):
                if attr.type == IntegerType(1):
                    return "True" if attr.value.data else "False"
                return str(attr.value.data)
        if v in self.arg_index:
            return f"s{self.arg_index[v]}"
        return self.scalar_args.setdefault(v, f"x{len(self.scalar_args)}")

    def load(self, v: SSAValue, m: Map, bounds: Sequence[str] = ()) -> tuple[str, frozenset[str]]:
        """Loads block argument v at map m; `bounds` are extra in-range conditions."""
        i = self.arg_index[v]
        terms = [f"{index_expr(entry)} * in{i}_s{j}" for j, entry in enumerate(m) if entry is not None]
        axes = self.axes_of(m).union(*(a for _, a in self.guards))
        base = self.mask_for(axes)
        mask = " & ".join(([base] if base else []) + list(bounds) + [g for g, _ in self.guards]) or None
        offset = " + ".join(terms) or "0"
        if axes != self.axes_of(m) or not terms:  # a guard's mask is a tile: so is the pointer
            # (and a value loaded at one place, a 0-d input, is a (1, 1) tile as a Python
            # scalar made a tile is: Triton's CPU interpreter fails on a 0-d value in `&`)
            offset = f"{offset} + tl.zeros({TILE_SHAPES[axes]}, tl.int32)"
        name = self.fresh("ld")
        self.line(f"{name} = tl.load(in{i}_ptr + ({offset})" + (f", mask={mask}, other=0)" if mask else ")"))
        if m and m[-1] is not None and self.axes_of(m) == {"m", "n"} and self.axes_of((m[-1],)) == {"m"}:
            self.transposed = True
        return name, axes

    def kernel_extent(self, v: SSAValue, j: int) -> str:
        """Extent j of a value of the kernel body, as the kernel spells it: a literal, an input
        extent (`in{i}_n{j}`), or its `alloc.extents` entry (a kernel argument `X{k}`)."""
        e = v.type.get_shape()[j]
        if v in self.arg_index:
            return f"in{self.arg_index[v]}_n{j}" if e == DYNAMIC_INDEX else str(e)
        return str(e) if e != DYNAMIC_INDEX else self.size_entry(v, False, j)

    def size_entry(self, v: SSAValue, starts: bool, j: int) -> str:
        """Entry j of v's `alloc.extents` (with `starts`: where slice v starts in its input)."""
        entries = self.sizes.get((v, starts))
        if entries is None:
            what = "starts" if starts else "extents"
            raise CodegenError(f"kernel {self.plan.name}: no alloc.extents gives the {what} of {v.name_hint or 'a value'}")
        entry = entries[j]
        return str(entry) if isinstance(entry, int) else self.derived.setdefault(entry, f"X{len(self.derived)}")

    def launcher_value(self, expr: str) -> str:
        """A literal stays; any other launcher expression becomes a kernel argument `X{k}`."""
        if expr.lstrip("-").isdigit():
            return expr
        return self.derived.setdefault(expr, f"X{len(self.derived)}")

    def inside(self, entry: tuple | None, extent: str) -> str:
        """The condition that the index of `entry` lies in [0, extent)."""
        idx = index_expr(entry)
        return f"(({idx}) >= 0) & (({idx}) < {extent})"

    def guarded(self, v: SSAValue, m: Map, cond: str, axes: frozenset[str]) -> tuple[str, frozenset[str]]:
        """v at m where `cond` holds: its loads are masked by `cond` (outside it the indices of
        a pad's input or a cat's piece lie outside that tensor), in a scope of its own."""
        self.guards.append((cond, axes))
        self.scopes.append({})
        try:
            return self.value(v, m)
        finally:
            self.scopes.pop()
            self.guards.pop()

    def view_source_map(self, op: Operation, m: Map) -> Map:
        """The map of a slice's, permute's or reshape's input at the result's map m."""
        shape = op.input.type.get_shape()
        if isinstance(op, fusion.PermuteOp):
            return permuted(m, norm_dims(op.dims.get_values(), len(shape)))
        if isinstance(op, fusion.ReshapeOp):
            src = unit_reshaped(m, shape, op.result.type.get_shape())
            if src is None:
                raise CodegenError(f"kernel {self.plan.name}: a reshape that merges or splits dims inside a kernel")
            return src
        assert isinstance(op, fusion.SliceOp)
        steps = list(op.static_step.get_values())
        if any(s == DYNAMIC_INDEX for s in steps):
            raise CodegenError(f"kernel {self.plan.name}: a slice with a dynamic step inside a kernel")
        out = []
        for j, (entry, step) in enumerate(zip(m, steps)):
            first: object = self.size_entry(op.result, True, j)
            first = int(first) if isinstance(first, str) and first.lstrip("-").isdigit() else first
            out.append(sliced(entry, first, step))
        return tuple(out)

    def operand_map(self, operand: SSAValue, m: Map) -> Map:
        """The map of an elementwise operand (same rank; size-1 dims broadcast)."""
        shape = operand.type.get_shape()
        return tuple(None if e == 1 else entry for e, entry in zip(shape, m))

    def compute(self, v: SSAValue, m: Map) -> tuple[str, frozenset[str]]:
        """Emits v at m; the values of `operand_maps(v, m)` are already emitted."""
        op = v.owner
        if not isinstance(op, Operation):
            raise CodegenError(f"kernel {self.plan.name}: {v.name_hint} is not defined in the kernel")
        if isinstance(op, REDUCTIONS):
            raise CodegenError(f"kernel {self.plan.name}: reduction {v.name_hint} used before it is computed")
        if isinstance(op, fusion.BroadcastInDimOp | fusion.ExpandOp | fusion.SqueezeOp | fusion.SliceOp
                      | fusion.PermuteOp | fusion.ReshapeOp):
            ((src, src_map),) = self.operand_maps(v, m)
            return self.value(src, src_map)  # emitted already (operand_maps ran first): no recursion
        if isinstance(op, fusion.PadOp):
            return self.pad(op, m)
        if isinstance(op, fusion.CatOp):
            return self.cat(op, m)
        if isinstance(op, fusion.INDEXING_GATHERS):  # a load at a computed address
            return triton_indexing.gather(self, op, m)
        if isinstance(op, fusion.FullOp):
            name = self.fresh()
            rt = op.result.type.element_type
            self.line(f"{name} = tl.full([1, 1], {self.scalar(op.value)}, {triton_dtype(rt)})")
            return name, frozenset()
        if isinstance(op, fusion.RandomOp):  # fusion.rand, fusion.randn: backend/triton_random.py
            return triton_random.emit(self, op, m)
        if isinstance(op, fusion.IotaOp):
            idx = index_expr(m[0])
            rt = op.result.type.element_type
            ct = compute_dtype(rt)
            name = self.fresh()
            self.line(f"{name} = (({self.scalar(op.start)}) + ({idx}) * ({self.scalar(op.step)})).to({ct}).to({triton_dtype(rt)})")
            return name, self.axes_of(m)
        if isinstance(op, fusion.CastOp | fusion.SetOp):
            x, axes = self.value(op.operands[0], self.operand_map(op.operands[0], m))
            return self.cast(x, op.operands[0].type.element_type, op.results[0].type.element_type), axes
        if isinstance(op, fusion.ElementwiseOp):
            return self.elementwise(op, m)
        raise CodegenError(f"kernel {self.plan.name}: {op.name} is not supported inside a generated kernel")

    def cast(self, x: str, src: Attribute, dst: Attribute) -> str:
        if src == dst:
            return x
        name = self.fresh()
        if dst == IntegerType(1):
            # 16-bit floats compare as numbers (the interpreter compares bf16 bits: -0.0 != 0)
            self.line(f"{name} = {x}.to({compute_dtype(src)}) != 0" if is_float(src) else f"{name} = {x} != 0")
        elif isinstance(dst, BFloat16Type) and not isinstance(src, Float32Type):
            # through f32, as torch converts (and Triton's interpreter only converts f32 to bf16)
            self.line(f"{name} = {x}.to(tl.float32).to(tl.bfloat16)")
        else:
            self.line(f"{name} = {x}.to({triton_dtype(dst)})")
        return name

    def pad(self, op: fusion.PadOp, m: Map) -> tuple[str, frozenset[str]]:
        """The input where the index is inside it (its loads masked there), else the padding value."""
        args = list(self.block.args)
        lows: list[object] = []
        highs: list[object] = []
        for j in range(len(m)):  # widths from values are kernel arguments (negative ones crop)
            for which, out in (("low", lows), ("high", highs)):
                w = self.launcher_value(pad_width(op, which, j, args))
                out.append(int(w) if w.lstrip("-").isdigit() else w)
        src_map = tuple(shifted(entry, lo) for entry, lo in zip(m, lows))
        padded = [j for j, (lo, hi) in enumerate(zip(lows, highs)) if lo or hi]
        conds = [self.inside(src_map[j], self.kernel_extent(op.input, j)) for j in padded]
        cond = " & ".join(conds) or "True"
        guard_axes = self.axes_of(tuple(src_map[j] for j in padded))
        x, axes = self.guarded(op.input, src_map, cond, guard_axes) if conds else self.value(op.input, src_map)
        rt = op.result.type.element_type
        name = self.fresh()
        # the where is taken in the compute type (Triton 3.6's interpreter has no bf16 scalars)
        ct = compute_dtype(rt)
        self.line(f"{name} = tl.where({cond}, ({x}).to({ct}), ({self.scalar(op.value)})).to({triton_dtype(rt)})")
        return name, self.axes_of(m) | axes

    def cat(self, op: fusion.CatOp, m: Map) -> tuple[str, frozenset[str]]:
        """Each piece where the index along the cat dim falls in it (its loads masked there).
        A constant index along the cat dim (entry None: index 0, as where a slice of extent 1
        reads the cat) picks its piece by a condition on constants."""
        rank = len(op.result.type.get_shape())
        dim = op.dim.value.data
        dim = dim + rank if dim < 0 else dim
        entry = m[dim]
        axes = self.axes_of(m)
        pieces = []
        offset: object = 0
        for operand in op.inputs:
            src_map = tuple(shifted(e, offset) if k == dim else e for k, e in enumerate(m))
            extent = self.kernel_extent(operand, dim)
            cond = self.inside(src_map[dim], extent)
            x, a = self.guarded(operand, src_map, cond, self.axes_of((entry,)))
            axes |= a
            pieces.append((cond, x))
            offset = add_shift(offset, int(extent) if extent.isdigit() else extent)
        name = self.fresh()
        expr = pieces[-1][1]
        for cond, x in reversed(pieces[:-1]):
            expr = f"tl.where({cond}, {x}, {expr})"
        self.line(f"{name} = {expr}")
        return name, axes

    def elementwise(self, op: Operation, m: Map) -> tuple[str, frozenset[str]]:
        rt = op.results[0].type.element_type
        operands = []
        axes: set[str] = set()
        for x in op.operands:
            if isinstance(x.type, TensorType):
                name, a = self.value(x, self.operand_map(x, m))
                axes |= a
            else:
                name = self.scalar(x)
            operands.append(name)
        types = [x.type for x in op.operands]
        name = self.fresh()
        if isinstance(op, fusion.TriangularOp):  # elementwise with a condition on its last two indices
            row, col = m[-2], m[-1]
            axes |= self.axes_of((row, col))
            expr = triton_math.triangular_expr(op, operands[0], index_expr(row), index_expr(col), rt)
        else:
            expr = self.elementwise_expr(op, operands, types, rt)
        self.line(f"{name} = {expr}{_ir_note(op)}")
        return name, frozenset(axes)

    def elementwise_expr(self, op: Operation, xs: list[str], types: list[Attribute], rt: Attribute) -> str:
        out = triton_dtype(rt)
        if isinstance(op, fusion.WhereOp):
            ct = compute_dtype(rt)
            return f"tl.where({xs[0]}, ({xs[1]}), ({xs[2]})).to({ct}).to({out})"
        if isinstance(op, triton_math.OPS):  # math, rounding, integer and bitwise ops
            return triton_math.elementwise_expr(op, xs, types, rt, self.as_type, compute_dtype)
        if isinstance(op, fusion.LogicalNotOp | fusion.LogicalAndOp | fusion.LogicalOrOp):
            # 16-bit floats compare as numbers (the interpreter compares bf16 bits: -0.0 != 0)
            xs = [self.as_type(x, t, compute_dtype(element_type_of(t))) for x, t in zip(xs, types)]
        if isinstance(op, fusion.LogicalNotOp):
            return f"({xs[0]} == 0)"
        if isinstance(op, fusion.LogicalAndOp | fusion.LogicalOrOp):
            sym = "&" if isinstance(op, fusion.LogicalAndOp) else "|"
            return f"(({xs[0]} != 0) {sym} ({xs[1]} != 0))"
        if isinstance(op, fusion.PredicateOp):
            ct = compute_dtype(promote(types))
            a, b = (self.as_type(x, t, ct) for x, t in zip(xs, types))
            sym = {fusion.EqOp: "==", fusion.NeOp: "!=", fusion.LtOp: "<", fusion.LeOp: "<=",
                   fusion.GtOp: ">", fusion.GeOp: ">="}[type(op)]
            return f"({a} {sym} {b})"
        ct = compute_dtype(rt)
        args = [self.as_type(x, t, ct) for x, t in zip(xs, types)]
        if isinstance(op, fusion.BinaryOp):
            a, b = args
            if isinstance(op, fusion.AddOp):
                e = f"{a} + {b}" if rt != IntegerType(1) else f"({a} | {b})"
            elif isinstance(op, fusion.SubOp):
                e = f"{a} - {b}"
            elif isinstance(op, fusion.MulOp):
                e = f"{a} * {b}" if rt != IntegerType(1) else f"({a} & {b})"
            elif isinstance(op, fusion.DivOp):
                e = f"{a} / {b}" if is_float(rt) else f"_trunc_div({a}, {b})"
            elif isinstance(op, fusion.PowOp):
                # a scalar (a Python literal for a constant) becomes a 1x1 tile: _pow needs tensors
                a, b = (x if isinstance(t, TensorType) else f"tl.full([1, 1], {x}, {ct})" for x, t in zip(args, types))
                e = f"_pow({a}, {b})" if is_float(rt) else f"_int_pow({a}, {b})"
            elif isinstance(op, fusion.MaximumOp):
                e = f"_max_nan({a}, {b})" if is_float(rt) else f"tl.maximum({a}, {b})"
            elif isinstance(op, fusion.MinimumOp):
                e = f"_min_nan({a}, {b})" if is_float(rt) else f"tl.minimum({a}, {b})"
            else:
                raise CodegenError(f"{op.name} is not supported in generated kernels")
            return f"({e}).to({out})"
        (x,) = args
        unary = {
            fusion.NegOp: f"-{x}", fusion.AbsOp: f"tl.abs({x})",
            fusion.ExpOp: f"_exp_term({x})" if op in self.exp_terms else f"tl.exp({x})",
            fusion.LogOp: f"tl.log({x})", fusion.SqrtOp: f"tl.sqrt({x})", fusion.RsqrtOp: f"tl.rsqrt({x})",
            fusion.ReciprocalOp: f"1.0 / {x}", fusion.TanhOp: f"_tanh({x})", fusion.SigmoidOp: f"tl.sigmoid({x})",
            fusion.SinOp: f"tl.sin({x})", fusion.CosOp: f"tl.cos({x})", fusion.ErfOp: f"tl.erf({x})",
            fusion.ReluOp: f"tl.where({x} < 0, 0, {x})",
        }
        e = unary.get(type(op))
        if e is None:
            raise CodegenError(f"{op.name} is not supported in generated kernels")
        return f"({e}).to({out})"

    def as_type(self, x: str, t: Attribute, ct: str) -> str:
        """Operand x (of IR type t) converted to the compute type ct."""
        et = element_type_of(t)
        if not isinstance(t, TensorType):
            if ct.startswith("tl.float"):
                return f"({x})"
            return f"({x})"
        if triton_dtype(et) == ct:
            return x
        return f"{x}.to({ct})"

    # -- reductions --------------------------------------------------------------

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

    def reduce_spec(self, r: Operation) -> tuple[str, str, str]:
        """(neutral element, combine, accumulation dtype) of a reduction."""
        src = r.operands[0].type.element_type
        res = r.results[0].type.element_type
        if isinstance(r, fusion.SumOp | fusion.MeanOp | fusion.VarMeanOp | fusion.WelfordOp):
            acc = compute_dtype(res) if is_float(res) else "tl.int64"
            return "0", "sum", acc
        if isinstance(r, fusion.ProdOp):
            acc = compute_dtype(res) if is_float(res) else "tl.int64"
            return "1", "prod", acc
        acc = compute_dtype(src)
        if isinstance(r, fusion.MaxOp):
            return ('float("-inf")' if is_float(src) else _int_min(src)), "max", acc
        return ('float("inf")' if is_float(src) else _int_max(src)), "min", acc

    def reduce_tile(self, tile: str, how: str) -> str:
        if how == "sum":
            return f"tl.sum({tile}, 1)[:, None]"
        if how == "prod":
            return f"tl.reduce({tile}, 1, _mul_combine)[:, None]"
        if how == "max":
            return f"tl.reduce({tile}, 1, _max_nan)[:, None]"
        return f"tl.reduce({tile}, 1, _min_nan)[:, None]"

    def combine(self, acc: str, x: str, how: str) -> str:
        return {"sum": f"{acc} + {x}", "prod": f"{acc} * {x}", "max": f"_max_nan({acc}, {x})",
                "min": f"_min_nan({acc}, {x})"}[how]

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
        self.line(f"{name} = tl.where(mask_m & mask_n, tl.broadcast_to({expr}, (BLOCK_M, BLOCK_N)), {neutral})")
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
            self.line(f"{name} = ({total} / ({count})).to({triton_dtype(rt)})")
        else:
            self.line(f"{name} = {total}.to({triton_dtype(rt)})")
        self.reduced[res] = name

    # -- whole variants ------------------------------------------------------------

    def store_outputs(self, axes_filter: set[frozenset[str]], only: set[int] | None = None) -> None:
        """Stores the yielded values whose axes are in `axes_filter` (and whose out index is in
        `only`, if given). Every value is computed (every load emitted) before the first
        store, so an output that overwrites an input in place (`alloc-alias`, `alloc-plan`)
        never changes what another output reads."""
        yielded = list(self.block.last_op.operands)
        shapes = {frozenset({"m", "n"}): "(BLOCK_M, BLOCK_N)", frozenset({"m"}): "(BLOCK_M, 1)",
                  frozenset({"n"}): "(1, BLOCK_N)", frozenset(): "(1, 1)"}
        computed = []
        for k, v in enumerate(yielded):
            m = self.plan.natural[v]
            full_axes = self.axes_of(m)
            if full_axes in axes_filter and (only is None or k in only):
                computed.append((k, v, m, full_axes, self.value(v, m)))
        for k, v, m, full_axes, (x, axes) in computed:
            union = frozenset(axes | full_axes)
            terms = [f"i{e[0]} * out{k}_s{j}" for j, e in enumerate(m) if e is not None]
            offset = " + ".join(terms) or "0"
            if union != full_axes or not terms:
                offset = f"{offset} + tl.zeros({shapes[union]}, tl.int32)"
            if axes != union:
                x = f"tl.broadcast_to({x}, {shapes[union]})"
            mask = self.mask_for(union)
            ot = triton_dtype(v.type.element_type)
            self.line(f"tl.store(out{k}_ptr + ({offset}), ({x}).to({ot})" + (f", mask={mask})" if mask else ")"))

    def emit_pointwise(self) -> None:
        if triton_indexing.scatter_op(self.plan.kernel) is not None:  # stores at computed addresses
            triton_indexing.emit_scatter(self)
            return
        self.line("pid = tl.program_id(0)")
        if self.flat:
            self.emit_flat_indices()
        else:
            self.line("tiles_n = (N + BLOCK_N - 1) // BLOCK_N")
            self.emit_outer_indices("(pid // tiles_n)")
            self.emit_inner_indices("(pid % tiles_n) * BLOCK_N")
        self.store_outputs({frozenset({"m", "n"}), frozenset({"m"}), frozenset({"n"}), frozenset()})

    def emit_flat_indices(self) -> None:
        """A flat pointwise kernel's indices (`flat_pointwise`): lane k of program p holds the
        linear index p * BLOCK_N + k of the [M, N] domain; its row rm and column rn come by
        division by the static N, and every index and mask is a [1, BLOCK_N] tile (BLOCK_M
        is 1), so no lane idles but past the domain's end."""
        n = self.static_n()
        self.line("lin = pid * BLOCK_N + tl.arange(0, BLOCK_N)")
        self.line("if USE_I64:")
        self.line("    lin = lin.to(tl.int64)")
        self.line(f"rm = lin // {n}")
        self.line(f"rn = lin % {n}")
        self.line("mask_m = (rm < M)[None, :]")
        self.line("mask_n = mask_m")
        self._decompose("rm", self.plan.outer, "[None, :]")
        self._decompose("rn", self.plan.inner, "[None, :]")

    def static_n(self) -> int | None:
        """The product of the inner dims' extents where all are static, else None."""
        n = 1
        for d in self.plan.inner:
            src = self.plan.extents[d]
            if src.static is None:
                return None
            n *= src.static
        return n

    def var_mean_parts(self, r: fusion.VarMeanOp | fusion.WelfordOp, mean_name: str, total: str, acc: str) -> None:
        """Finishes var_mean (or welford: avg, var_sum, n) once the sum of squared deviations is known."""
        if isinstance(r, fusion.WelfordOp):
            for res, expr in ((r.avg, mean_name), (r.var_sum, total), (r.n, "(tl.zeros((BLOCK_M, 1), tl.int64) + N)")):
                name = self.fresh("wf")
                self.line(f"{name} = ({expr}).to({triton_dtype(res.type.element_type)})")
                self.reduced[res] = name
            return
        var, mean = r.results
        corr = r.correction.value.data
        n = self.fresh("var")
        self.line(f"{n} = ({total} / tl.maximum(N - {corr}, 0)).to({triton_dtype(var.type.element_type)})")
        self.reduced[var] = n
        mn = self.fresh("mean")
        self.line(f"{mn} = {mean_name}.to({triton_dtype(mean.type.element_type)})")
        self.reduced[mean] = mn

    # -- one-pass var_mean / welford (looped rows, inner-split chunks) ------------------

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

    def emit_persistent(self) -> None:
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        self.emit_inner_indices("0")
        self.persistent_reductions()
        self.store_outputs({frozenset({"m", "n"}), frozenset({"m"}), frozenset({"n"}), frozenset()})

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
        accs = []
        for r in self.plan.reductions:
            neutral, how, acc = self.reduce_spec(r)
            a = self.fresh("acc")
            self.line(f"{a} = tl.full((BLOCK_M, BLOCK_N), {neutral}, {acc})")
            accs.append((r, a, how))
        # steps through [lo, lo + chunk): the loads are masked by `rn < N`, so the last chunk
        # may run past N (no tl.minimum of scalars in the loop bounds)
        self.line("for step in range(0, chunk, BLOCK_N):")
        self.indent += 1
        self.line("start = lo + step")
        self.indent -= 1
        self.indent += 1
        self.scopes.append({})
        self.emit_inner_indices("start")
        for r, a, how in accs:
            tile, _, _ = self.reduction_input(r)
            self.line(f"{a} = {self.combine(a, tile, how)}")
        # outputs on the whole domain (dx beside its bias gradient), written as the split's
        # share of the reduced axis streams by, from the values the reductions computed
        self.store_outputs({frozenset({"m", "n"}), frozenset({"n"})}, only=unreduced_outputs(self.block))
        self.scopes.pop()
        self.indent -= 1
        for r, a, how in accs:
            i, _ = self.partials_arg(r)
            pt = triton_dtype(self.block.args[i].type.element_type)
            total = self.fresh("part")
            self.line(f"{total} = {self.reduce_tile(a, how)}")
            self.line(
                f"tl.store(in{i}_ptr + (split_id * in{i}_s0 + rm[:, None] * in{i}_s1), {total}.to({pt}), mask=mask_m)"
            )

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
            self.indent += 1
            self.scopes.append({})
            self.emit_inner_indices("lo + step", full)
            if not full:
                self.line("mask_n = mask_n & (rn < lo + chunk)[None, :]")
            body()
            self.scopes.pop()
            self.indent -= 1

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
        self.line(f"tl.store(in{i}_ptr + (split_id * in{i}_s0 + rm[:, None] * in{i}_s1), {total}.to({pt}), mask=mask_m)")

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
            self.line(f"for start in range(0, {split}, BLOCK_N):")
            self.indent += 1
            self.line("rs = start + tl.arange(0, BLOCK_N)")
            part = self.fresh("ld")
            self.line(
                f"{part} = tl.load(in{i}_ptr + (rs[None, :] * in{i}_s0 + rm[:, None] * in{i}_s1), "
                f"mask=mask_m & (rs < {split})[None, :], other={neutral})"
            )
            self.line(f"{a} = {self.combine(a, f'{part}.to({acc})', how)}")
            self.indent -= 1
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
        self.indent += 1
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
        self.indent -= 1
        m2 = self.fresh("tot")
        self.line(f"{m2} = tl.sum({q}, 1)[:, None]")
        self.var_mean_parts(r, mean, m2, acc)

    def row_loop(self, body: Callable[[], None]) -> None:
        """A loop over the row's tiles, emitted as two: the full tiles with no mask on the
        reduced index, then the last partial tile (if any) masked; `body` emits one tile's
        work (in its own scope, after the tile's indices). Full tiles load, reduce and store
        without a per-element mask (cross-entropy over 1234 rows of 50257, hand-written on an
        H200: 130 -> 76 us with 1024 x 4 blocks, `benchmarks/softmax_loop_variants.py`)."""
        self.line("n_full = N // BLOCK_N * BLOCK_N")
        for full in (True, False):
            self.line("for start in range(0, n_full, BLOCK_N):" if full else "for start in range(n_full, N, BLOCK_N):")
            self.indent += 1
            self.scopes.append({})
            self.emit_inner_indices("start", full)
            body()
            self.scopes.pop()
            self.indent -= 1

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
            self.line(f"{new} = _max_nan({a}, {self.reduce_tile(tile, 'max')})")
            # a row still all -inf subtracts 0 (its terms are exp(-inf) = 0, not NaN)
            self.line(f"{shift} = tl.where({new} == float(\"-inf\"), 0.0, {new})")
            # every term is exp of a value <= 0 beside the row's exp(0) = 1: `_exp_term`
            self.line(f"{s_acc} = {s_acc} * _exp_term({a} - {shift}) + _exp_term({tile} - {shift})")
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


def _ir_note(op: Operation) -> str:
    """`  # %name = fusion.add`: the IR value a line computes, as a comment-safe escape."""
    hint = op.results[0].name_hint if op.results else None
    return f"  # %{comment(hint)} = {comment(op.name)}" if hint else f"  # {comment(op.name)}"


def _int_min(t: Attribute) -> str:
    return str(-(2 ** (t.width.data - 1))) if isinstance(t, IntegerType) and t.width.data > 1 else "0"


def _int_max(t: Attribute) -> str:
    return str(2 ** (t.width.data - 1) - 1) if isinstance(t, IntegerType) and t.width.data > 1 else "1"


def flat_pointwise(plan: KernelPlan) -> bool:
    """Whether a pointwise kernel indexes its domain flat (`_Emitter.emit_flat_indices`):
    its inner extent N is static, `host_runtime.flat_rows(N)` (power-of-two tiles would
    idle more than 15% of a row's lanes), and it stores at its own indices (no scatter).
    A kernel that turns out to read an operand along its outer axis is emitted in tiles
    after all (a transpose needs square tiles)."""
    if plan.kind != "pointwise" or not plan.inner or triton_indexing.scatter_op(plan.kernel) is not None:
        return False
    n = 1
    for d in plan.inner:
        if plan.extents[d].static is None:
            return False
        n *= plan.extents[d].static
    return flat_rows(n)


_BF16_CAST = ".to(tl.bfloat16)"


def round_bf16_casts(line: str) -> str:
    """`line` with each `X.to(tl.bfloat16)` of its code (not its comment) spelled
    `_to_bf16(X)`: Triton's interpreter truncates floats to bf16 where torch and the GPU
    round to nearest even, so the CPU target rounds with integer operations itself."""
    code, sep, note = line.partition("  # ")
    while (at := code.find(_BF16_CAST)) >= 0:
        start = at
        while start > 0:
            c = code[start - 1]
            if c in ")]":
                depth, start = 0, start - 1
                while start >= 0:
                    depth += {")": 1, "]": 1, "(": -1, "[": -1}.get(code[start], 0)
                    if depth == 0:
                        break
                    start -= 1
            elif c.isalnum() or c in "_.":
                start -= 1
            else:
                break
        code = f"{code[:start]}_to_bf16({code[start:at]}){code[at + len(_BF16_CAST):]}"
    return code + sep + note


TANH_EXP = '''
@triton.jit
def _tanh(x):
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0, -t, t)
'''


def module_prelude(target: str, tanh: str = "exp", kernels: str | None = None) -> str:
    """Imports and helpers of a generated module. On CUDA, tanh is one exp and one
    division (tanh="exp", the default: bias+GELU at 32768x4096 bf16 ran at 3.31
    TB/s against 2.72 with libdevice's, on an H200), or libdevice's (ALLOT_TANH=libdevice)."""
    prelude = PRELUDE_CUDA if target == "cuda" else PRELUDE_INTERPRETER
    if target == "cuda" and tanh == "exp":
        prelude = prelude.replace("def _tanh(x):\n    return libdevice.tanh(x)", TANH_EXP.strip().split("\n", 1)[1])
    prelude = PRELUDE_COMMON + prelude
    if kernels is not None:
        prelude = _used_helpers(prelude, kernels)
    return "import triton\nimport triton.language as tl\n" + prelude


def _used_helpers(prelude: str, code: str) -> str:
    """`prelude` without the `@triton.jit` helpers that `code` never names (its imports stay,
    first)."""
    lines = prelude.split("\n")
    imports = [ln for ln in lines if ln.startswith(("from ", "import "))]
    chunks = "\n".join(ln for ln in lines if not ln.startswith(("from ", "import "))).split("\n@triton.jit\n")
    kept = ["\n".join(imports) + "\n" + chunks[0]]
    for chunk in chunks[1:]:
        name = chunk.split("(", 1)[0].removeprefix("def ").strip()
        if re.search(rf"\b{re.escape(name)}\b", code):
            kept.append(chunk)
    return "\n@triton.jit\n".join(kept)
