"""The shared Triton emitter of the generated kernels (every segment kind but `view`,
`library` and `aten`).

Each kernel works on 2-D tiles of its iteration domain (see `kernel_plan`):
BLOCK_M outer indices (rows) by BLOCK_N inner indices (columns). A value of
the body is emitted lazily at the index map it is needed at, as a tile that
varies over rows, columns, both or neither; Triton's broadcasting does the
rest. Loads use each buffer's own strides (broadcasts and views cost nothing),
with masks; 16-bit floats are computed in f32 and every op's result is rounded
to its IR type, as torch does op by op.

Each kind's functions come from its own module (`pointwise`, `row_reduction`,
`split_reduction`, `inner_outer`, `scan_sort`: one subclass of `Emitter` each, found
through `backend/kernel_kinds.KINDS`); this module holds what they share: values at
index maps, loads, stores and the reductions' building blocks (neutral elements,
combines), with elementwise ops and casts from `elementwise_emission` and pads and cats
from `pad_cat_emission` (mixins of `Emitter`).

Values read at other indices than their own (the operands of slices, pads,
cats, permutes and unit reshapes of values computed in the kernel) are
emitted at moved index maps (`kernel_plan.sliced`, `shifted`, `permuted`):
the ops computing them run again at those indices, and a pad's input or a
cat's piece is computed under its in-range condition (`Emitter.guarded`: its
loads masked by it). Extents of such values that no buffer has, and where a
slice starts, are the body's `alloc.extents` (`kernel_plan.body_extents`): host
sizes that the host program passes (kernel arguments `X0`, `X1`, ...).

The emitter is iterative (an explicit stack in `Emitter.value`, one forward
pass in `row_reduction.reduction_levels`): the length of a chain of ops is bounded by memory,
not by Python's recursion limit. The only identifiers made from IR text are the
kernel function names, which the caller passes in (`identifiers.Namespace`); IR
value names appear only in comments (`identifiers.comment`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StridedLayoutAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.analysis.row_passes import softmax_terms
from allotment.backend import triton_random
from allotment.backend.code_writer import CodeWriter
from allotment.backend.kernel_plan import (
    REDUCTIONS,
    CodegenError,
    KernelPlan,
    Map,
    body_extents,
    entry_dim,
    index_expr,
    norm_dims,
    permuted,
    sliced,
    unit_reshaped,
)
from allotment.backend.kernels import gather_scatter
from allotment.backend.kernels.elementwise_emission import ElementwiseEmission, compute_dtype
from allotment.backend.kernels.narrow_emission import NarrowEmission, is_narrow
from allotment.backend.kernels.pad_cat_emission import PadCatEmission
from allotment.backend.kernels.prelude import to_dtype
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import is_float
from allotment.dtypes import triton_dtype
from allotment.extents.dims import dim_set


def keeps_innermost(plan: KernelPlan) -> bool:
    """A reduction kernel whose rows (kept dims) include the domain's innermost dim: a
    column reduction, whose row tile runs along memory."""
    return bool(plan.reductions) and len(plan.domain) - 1 in plan.outer


def magic_division(allowed: bool = True) -> bool:
    """Whether a kernel that splits a linear index into domain indices by run-time extents
    (`?` dims) also gets a FAST_DIV branch, which divides by a multiply-high with a magic
    number and a shift that the launcher computes once per extent (`host_runtime.divisor_magic`,
    `divisor_shift`: the `_fast_div` helper). The launcher takes that branch where
    `host_runtime.divides_fast` holds: indices are 32-bit and no such extent is a multiple
    of 16. Integer division by a value that only the run knows is a long instruction
    sequence per element (a static extent's is a multiply-high that the compiler derives
    itself), paid by every element a `?` kernel addresses (a statistics kernel over
    [N, C, H*W] divides each column index by H*W). Where every extent is a multiple of 16,
    Triton knows that `//` and `%` keep runs of 16 contiguous indices and loads them as
    vectors (the division is then paid once a vector), which the multiply-high would hide
    from it. `allowed=False` is the old rule (`//` and `%` only), for
    `benchmarks/schedule_ab.py`."""
    return allowed


def align_prologue(aligned: Sequence[str]) -> list[str]:
    """The opening lines of every function of a kernel that takes ALIGN (`Emitter.aligned`):
    each of those int arguments written as a multiple of ALIGN, `x // ALIGN * ALIGN`, which
    is x itself, since the launcher passes an ALIGN that divides every one of them
    (`host_runtime.alignment_hint`). Triton's analysis then knows their divisibility: a row
    that starts at a multiple of 8 elements, masked by `rn < N` with N a multiple of 8, loads
    as 16-byte vectors of bf16. With ALIGN 1 (the launcher's answer where Triton's own
    specialization already knows, or nothing divides) the lines fold away."""
    if not aligned:
        return []
    return ["    if ALIGN > 1:"] + [f"        {name} = {name} // ALIGN * ALIGN" for name in aligned]


def float_literal(v: float) -> str:
    """Python source for a float, infinities and NaN included."""
    if v != v or v in (float("inf"), float("-inf")):
        return f'float("{v}")'
    return repr(v)


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


def contiguous_dim(t: Attribute, rank: int) -> int | None:
    """The dim of a kernel operand of type t (a memref of `rank` dims) along which its
    elements are adjacent: the last one of a row-major buffer, else the one whose stride the
    IR's strided layout gives as 1 (a permuted view: x.T of a row-major x is contiguous along
    dim 0); None where no dim is known to be (a dynamic stride, a scalar)."""
    if rank == 0 or not isinstance(t, MemRefType):
        return None
    layout = t.layout
    if not isinstance(layout, StridedLayoutAttr):
        return rank - 1
    strides = layout.get_strides()
    ones = [j for j, s in enumerate(strides) if s == 1]
    return ones[-1] if ones else None


@dataclass(frozen=True)
class RowMajorRun:
    """Consecutive dims of a kernel operand that some offset addresses from one linear index
    (`Emitter.offset`): valid where the operand is row-major over them, which the launcher
    checks (`host_codegen._row_major_condition`)."""

    tensor: str
    """The operand: `in0`, `out1`, ..."""
    dims: tuple[int, ...]
    """Its dims j..k."""
    domain: tuple[int, ...]
    """The domain dims indexing them (the extent of operand dim j + t is domain dim
    `domain[t]`'s)."""


@dataclass
class GeneratedKernel:
    plan: KernelPlan
    functions: dict[str, str]  # variant ("pointwise", "persistent", "looped") -> Triton function name
    source: str
    args: list[KernelArg]
    transposed: bool = False
    """A pointwise kernel that reads some operand along its outer axis (`Emitter.transposed`)."""
    flat: bool = False
    """A pointwise kernel with flat indexing (`flat_pointwise`): one program per BLOCK_N
    linear indices of the domain."""
    helpers: set[str] = field(default_factory=set)
    """The module prelude's helpers its functions call (`Emitter.helper`)."""
    row_split: tuple[int, int] | None = None
    """(main, tail) where the persistent variant holds its row as two tiles
    (`host_runtime.row_tiles`): the launcher passes BLOCK_N = main."""
    row_major: tuple[RowMajorRun, ...] = ()
    """The operand runs its functions address from a linear index under ROW_MAJOR
    (`Emitter.offset`): then the kernel takes that constexpr and the launcher passes it."""
    divisors: tuple[str, ...] = ()
    """The run-time extents its FAST_DIV branches divide by (`Emitter.fast_divide`): then
    the kernel takes that constexpr and the launcher passes it."""
    aligned: tuple[str, ...] = ()
    """The int arguments whose divisibility decides whether its tiles' rows load as vectors
    (`Emitter.aligned`): then the kernel takes ALIGN and the launcher passes it."""

    @property
    def launch_tail(self) -> str:
        """The arguments of `rt.launch` after the grid and the arguments tuple: the block
        sizes, use_i64, the warps, `row_major` where the kernel takes ROW_MAJOR, `tail`
        where it takes BLOCK_T (a `?` row with the `two_tiles` variant: `choose_row_kernel`),
        `fast_div` where it takes FAST_DIV (`magic_division`) and `align` where it takes
        ALIGN (`aligned`)."""
        return ("bm, bn, use_i64, warps" + (", row_major" if self.row_major else "")
                + (", tail=tail" if "two_tiles" in self.functions else "")
                + (", fast_div=fast_div" if self.divisors else "")
                + (", align=align" if self.aligned else ""))


ALL_AXES = {frozenset({"m", "n"}), frozenset({"m"}), frozenset({"n"}), frozenset()}
"""Every axes set a value can vary along: `store_outputs` of every output."""

InSize = Callable[[int, int], str]
"""A launcher's spelling of extent j of kernel input i (`launch_lines` of each kind)."""


class Emitter(ElementwiseEmission, PadCatEmission, NarrowEmission):
    """Emits one Triton function for a kernel plan (one variant); each kind's subclass
    emits its variants (`emit`)."""

    def __init__(
        self, plan: KernelPlan, variant: str, target: str, derived: dict[str | SSAValue, str] | None = None, flat: bool = False
    ) -> None:
        self.plan = plan
        self.derived = {} if derived is None else derived  # launcher expression or host size -> kernel argument
        self.sizes = body_extents(plan.kernel)
        self.guards: list[tuple[str, frozenset[str]]] = []  # in-range conditions of pad/cat pieces
        self.variant = variant
        self.target = target
        self.out = CodeWriter(depth=1)  # the function's body
        self.helpers: dict[str, None] = {}  # the helpers the body calls, in order (`helper`)
        self.device_asserts = False  # the body checks indices with tl.device_assert (`gather_scatter.device_check`)
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
        self.flat = flat and variant in ("pointwise", "flat")
        """Flat indexing (`pointwise.PointwiseEmitter.emit_flat_indices`): asked for where
        `pointwise.flat_pointwise` says so."""
        self.block_n = "BLOCK_N"
        """The constexpr that is the width of the tile being emitted: BLOCK_N, or BLOCK_T in
        the second tile of a row held as two (`row_reduction.RowEmitter.row_part`)."""
        self.row_split: tuple[int, int] | None = None
        """(main, tail) where the persistent variant holds its row as two tiles
        (`host_runtime.row_tiles`): the launcher then passes BLOCK_N = main."""
        self.linear: list[tuple[tuple[int, ...], str]] = []
        """(domain dims, the linear index they were decomposed from, as a tile): every
        `_decompose` of two or more dims (the flat pointwise kernel adds its whole domain
        first), for `offset` to merge."""
        self.divisors: dict[str, None] = {}
        """The run-time extents that its FAST_DIV branches divide by (`fast_divide`): the
        kernel then takes FAST_DIV, which the launcher sets where `host_runtime.divides_fast`
        holds for them."""
        self.row_major: dict[RowMajorRun, None] = {}
        """The operand runs that some offset merged (`offset`), in first-use order: the
        kernel then takes ROW_MAJOR, which the launcher sets where all of them are row-major."""
        self.narrow_names: dict[str, str] = {}
        """Wide name -> narrow name of each index-typed op's result (`NarrowEmission.narrow`)."""
        self.aligned: dict[str, None] = {}
        """The int arguments whose divisibility decides whether a tile's row loads and stores
        as vectors: the column extent N of a masked tile (`emit_inner_indices`: the mask
        `rn < N` is constant over runs of N's divisor) and every stride that multiplies an
        index other than an operand's last (`offset`: a row's start is a multiple of them).
        Triton knows only that an int argument is 1 or a multiple of 16, so rows of 1000
        bf16 elements load one element at a time. The kernel then takes ALIGN, a power of
        two that the launcher finds dividing all of them (`host_runtime.alignment_hint`),
        and each function opens by writing them as multiples of it (`align_prologue`)."""

    @classmethod
    def build(cls, plan: KernelPlan, variant: str, target: str, derived: dict[str, str]) -> Emitter:
        """The emitter of `variant`, emitted."""
        e = cls(plan, variant, target, derived)
        e.emit()
        return e

    def emit(self) -> None:
        """Emits the function of `self.variant` (each kind's subclass)."""
        raise CodegenError(f"kernel {self.plan.name!r}: no emitter for variant {self.variant!r}")

    # -- helpers ---------------------------------------------------------------

    def line(self, text: str) -> None:
        self.out.line(text)

    def indent(self) -> AbstractContextManager[None]:
        """`with self.indent():` emits a block one level deeper (a loop's or a branch's body)."""
        return self.out.indent()

    @property
    def lines(self) -> list[str]:
        """The function body's lines."""
        return self.out.lines

    def helper(self, name: str) -> str:
        """`name`, a helper that the code being emitted calls, requested: the module prelude
        (`prelude.module_prelude`) and the kernel's helpers (`triton_math.helpers_for`,
        `scan_sort.scan_helpers`) define the helpers their kernels request, in the order
        first requested."""
        self.helpers.setdefault(name, None)
        return name

    def to(self, x: str, dtype: str) -> str:
        """The expression x converted to the Triton type `dtype` (`prelude.to_dtype`: a
        conversion to bf16 rounds to nearest even on the CPU target too)."""
        return to_dtype(x, dtype, self.target, self.helper)

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def tile_shape(self, axes: frozenset[str]) -> str:
        """The shape of a tile that varies along `axes`, in the tile being emitted."""
        return TILE_SHAPES[axes].replace("BLOCK_N", self.block_n)

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
        # a column reduction's kept rows (the innermost dim kept) stay in the strided form:
        # over them the linear form read sum_3d_dim0 8 to 18% slower on an H200 with the same
        # vector widths (`benchmarks/schedule_ab.py --rules row_major`, 2026-12-04)
        # a tile's rows are divided once a program, not once an element: no FAST_DIV branch
        self._decompose("rm", self.plan.outer, "[:, None]", linear=not self.keeps_innermost(), fast=False)

    def keeps_innermost(self) -> bool:
        """`keeps_innermost` of this kernel's plan."""
        return keeps_innermost(self.plan)

    def emit_inner_indices(self, start: str, full: bool = False) -> None:
        """The tile's reduced indices from `start`; `full`: a tile known to lie within N
        (`row_loop`), whose mask is a constant (Triton folds it away)."""
        self.line(f"rn = {start} + tl.arange(0, {self.block_n})")
        self.line("if USE_I64:")
        self.line("    rn = rn.to(tl.int64)")
        if full:
            self.line(f"mask_n = tl.full((1, {self.block_n}), 1, tl.int1)")
        else:
            self.aligned.setdefault("N")
            self.line("mask_n = (rn < N)[None, :]")
        self._decompose("rn", self.plan.inner, "[None, :]")

    def _decompose(self, lin: str, dims: Sequence[int], expand: str, linear: bool = True, fast: bool = True) -> None:
        """Domain indices from a linear index; the outermost needs no modulo (a linear index
        past the tile's extent is masked), which keeps a lone dim's indices visibly contiguous.
        Several dims are recorded (`self.linear`, unless `linear` is False): an operand that
        is row-major over them is addressed from the linear index itself (`offset`). With
        `fast` (an index of every element, not of a tile's rows) and a run-time extent to
        divide by, the indices come two ways under FAST_DIV (`magic_division`)."""
        if linear and len(dims) > 1:
            self.add_linear(tuple(dims), f"{lin}{expand}")
        if fast and any(self.plan.extents[d].static is None for d in dims[1:]) and magic_division():
            # a run-time divisor: under FAST_DIV one multiply-high a dim, each quotient
            # divided on; else the division below
            self.line("if FAST_DIV:")
            with self.indent():
                cur = lin
                for d in reversed(dims[1:]):
                    q = self.fresh("q")
                    self.line(f"{q} = {self.fast_divide(cur, self.extent(d), self.plan.extents[d].static is not None)}")
                    self.line(f"i{d} = ({cur} - {q} * {self.extent(d)}){expand}")
                    cur = q
                self.line(f"i{dims[0]} = ({cur}){expand}")
            self.line("else:")
            with self.indent():
                self._divide_down(lin, dims, expand)
            return
        self._divide_down(lin, dims, expand)

    def _divide_down(self, lin: str, dims: Sequence[int], expand: str) -> None:
        """`_decompose`'s indices by `//` and `%` of `lin` by the extents inside each dim."""
        after = "1"
        for d in reversed(dims):
            wrap = "" if d == dims[0] else f" % {self.extent(d)}"
            if after == "1":
                self.line(f"i{d} = ({lin}{wrap}){expand}")
            else:
                self.line(f"i{d} = (({lin} // ({after})){wrap}){expand}")
            after = self.extent(d) if after == "1" else f"{after} * {self.extent(d)}"

    def fast_divide(self, index: str, divisor: str, static: bool) -> str:
        """`index // divisor` for a non-negative index tile as the FAST_DIV branch of a kernel
        computes it: a static divisor's as it is (the compiler's own multiply-high), a
        run-time one's by `_fast_div` with the launcher's multiplier and shift of it as
        kernel arguments. `divisor` is spelled alike in the kernel and its launcher (an
        extent `D0`, `N`); it is recorded (`divisors`) for the launcher's FAST_DIV."""
        if static:
            return f"({index} // {divisor})"
        self.divisors.setdefault(divisor)
        magic = self.launcher_value(f"rt.divisor_magic({divisor})")
        shift = self.launcher_value(f"rt.divisor_shift({divisor})")
        return f"{self.helper('_fast_div')}({index}, {magic}, {shift})"

    def add_linear(self, dims: tuple[int, ...], lin: str) -> None:
        """Records that domain dims `dims` (outermost first) were decomposed from the linear
        index tile `lin`: the sum of i_d times the extents inside d is `lin` exactly."""
        if all(known != dims for known, _ in self.linear):
            self.linear.append((dims, lin))

    def offset(self, tensor: str, m: Map) -> str:
        """The element offset of operand `tensor` (`in0`, `out1`) at map m, from its strides.

        Where consecutive operand dims j..k are indexed by domain dims that one linear index
        was decomposed into (`linear`: rm over the rows' dims, rn over the columns', a flat
        kernel's lane index), `i_j * s_j + ... + i_k * s_k` is `lin * s_k` when the operand
        is row-major over j..k (each stride the next one's times its extent). Only the
        linear form lets Triton see the offsets' contiguity across the decomposition's
        modulo (rows of 1111 elements read with 16-byte vectors, not element by element), so
        the kernel takes both forms under its ROW_MAJOR constexpr, which the launcher sets
        where the strides of every merged run (`row_major`) are row-major."""
        terms = [f"{index_expr(entry)} * {tensor}_s{j}" for j, entry in enumerate(m) if entry is not None]
        present = [j for j, entry in enumerate(m) if entry is not None]
        for j in present[:-1]:  # the strides of a row's start (`aligned`)
            self.aligned.setdefault(f"{tensor}_s{j}")
        merged: list[str] = []
        covered: set[int] = set()
        for dims, lin in self.linear:
            n = len(dims)
            for j in range(len(m) - n + 1):
                if covered.isdisjoint(range(j, j + n)) and all(
                        m[j + t] is not None and entry_dim(m[j + t]) == d and index_expr(m[j + t]) == f"i{d}"
                        for t, d in enumerate(dims)):
                    merged.append(f"{lin} * {tensor}_s{j + n - 1}")
                    covered.update(range(j, j + n))
                    self.row_major.setdefault(RowMajorRun(tensor, tuple(range(j, j + n)), dims))
                    break
        if not merged:
            return " + ".join(terms) or "0"
        merged += [f"{index_expr(entry)} * {tensor}_s{j}" for j, entry in enumerate(m)
                   if entry is not None and j not in covered]
        return f"(({' + '.join(merged)}) if ROW_MAJOR else ({' + '.join(terms)}))"

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
            drop = set(dim_set(op.dims.get_values(), rank))
            it = iter(m)
            return [(op.input, tuple(None if i in drop else next(it) for i in range(rank)))]
        if isinstance(op, fusion.SliceOp | fusion.PermuteOp | fusion.ReshapeOp):
            return [(op.input, self.view_source_map(op, m))]
        if isinstance(op, fusion.CastOp | fusion.SetOp | fusion.ElementwiseOp) and not isinstance(op, REDUCTIONS):
            return [(x, self.operand_map(x, m)) for x in op.operands if isinstance(x.type, TensorType)]
        if isinstance(op, fusion.INDEXING_GATHERS):  # the index; the gather loads its source itself
            return gather_scatter.gather_operand_maps(op, m)
        return []

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
        axes = self.axes_of(m).union(*(a for _, a in self.guards))
        base = self.mask_for(axes)
        mask = " & ".join(([base] if base else []) + list(bounds) + [g for g, _ in self.guards]) or None
        offset = self.offset(f"in{i}", m)
        if axes != self.axes_of(m) or offset == "0":  # a guard's mask is a tile: so is the pointer
            # (and a value loaded at one place, a 0-d input, is a (1, 1) tile as a Python
            # scalar made a tile is: Triton's CPU interpreter fails on a 0-d value in `&`)
            offset = f"{offset} + tl.zeros({self.tile_shape(axes)}, tl.int32)"
        name = self.fresh("ld")
        self.line(f"{name} = tl.load(in{i}_ptr + ({offset})" + (f", mask={mask}, other=0)" if mask else ")"))
        inner = contiguous_dim(self.plan.kernel.ins[i].type, len(m))
        if (inner is not None and m[inner] is not None and self.axes_of(m) == {"m", "n"}
                and self.axes_of((m[inner],)) == {"m"}):
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
            return gather_scatter.gather(self, op, m)
        if is_narrow(op):  # 64-bit integer arithmetic that fits in the index type (kernel-index-ranges)
            return self.narrow(op, m)
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
            iota = f"(({self.scalar(op.start)}) + ({idx}) * ({self.scalar(op.step)})).to({ct})"
            self.line(f"{name} = {self.to(iota, triton_dtype(rt))}")
            return name, self.axes_of(m)
        if isinstance(op, fusion.CastOp | fusion.SetOp):
            x, axes = self.value(op.operands[0], self.operand_map(op.operands[0], m))
            return self.cast(x, op.operands[0].type.element_type, op.results[0].type.element_type), axes
        if isinstance(op, fusion.ElementwiseOp):
            return self.elementwise(op, m)
        raise CodegenError(f"kernel {self.plan.name}: {op.name} is not supported inside a generated kernel")

    # -- reductions --------------------------------------------------------------

    def reduce_spec(self, r: Operation) -> tuple[str, str, str]:
        """(neutral element, combine, accumulation dtype) of a reduction."""
        src = r.operands[0].type.element_type
        acc = triton_dtype(r.accumulation_type())
        if isinstance(r, fusion.SumOp | fusion.MeanOp | fusion.VarMeanOp | fusion.WelfordOp):
            return "0", "sum", acc
        if isinstance(r, fusion.ProdOp):
            return "1", "prod", acc
        if isinstance(r, fusion.MaxOp):
            return ('float("-inf")' if is_float(src) else _int_min(src)), "max", acc
        return ('float("inf")' if is_float(src) else _int_max(src)), "min", acc

    # -- stores ------------------------------------------------------------------

    def store_outputs(self, axes_filter: set[frozenset[str]], only: set[int] | None = None) -> None:
        """Stores the yielded values whose axes are in `axes_filter` (and whose out index is in
        `only`, if given). Every value is computed (every load emitted) before the first
        store, so an output that overwrites an input in place (`alloc-alias`, `alloc-plan`)
        never changes what another output reads."""
        self.store_values(self.output_values(axes_filter, only))

    def output_values(self, axes_filter: set[frozenset[str]], only: set[int] | None = None) -> list[tuple]:
        """Emits the yielded values that `store_outputs` stores, and returns them for
        `store_values` (a row held as two tiles computes both tiles' before it stores)."""
        computed = []
        for k, v in enumerate(self.block.last_op.operands):
            m = self.plan.natural[v]
            full_axes = self.axes_of(m)
            if full_axes in axes_filter and (only is None or k in only):
                computed.append((k, v, m, full_axes, self.value(v, m)))
        return computed

    def store_values(self, computed: list[tuple]) -> None:
        """The stores of values that `output_values` emitted, in the tile being emitted."""
        for k, v, m, full_axes, (x, axes) in computed:
            union = frozenset(axes | full_axes)
            offset = self.offset(f"out{k}", m)
            if union != full_axes or offset == "0":
                offset = f"{offset} + tl.zeros({self.tile_shape(union)}, tl.int32)"
            if axes != union:
                x = f"tl.broadcast_to({x}, {self.tile_shape(union)})"
            mask = self.mask_for(union)
            ot = triton_dtype(v.type.element_type)
            self.line(f"tl.store(out{k}_ptr + ({offset}), {self.to(f'({x})', ot)}" + (f", mask={mask})" if mask else ")"))


def _int_min(t: Attribute) -> str:
    return str(-(2 ** (t.width.data - 1))) if isinstance(t, IntegerType) and t.width.data > 1 else "0"


def _int_max(t: Attribute) -> str:
    return str(2 ** (t.width.data - 1) - 1) if isinstance(t, IntegerType) and t.width.data > 1 else "1"
