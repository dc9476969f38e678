"""Triton code for `scan` kernels (cumsum, cumprod, cummax, cummin) and `sort` kernels
(argsort, topk).

A scan kernel's rows run along the scan dim: its domain is the scans' input shape, its
inner dim the scan dim and its outer dims the others (any dim: loads and stores use each
buffer's strides, so a scan along a middle dim reads strided rows, no transpose). Each
program takes BLOCK_M rows and streams them once, in chunks of BLOCK_N columns: in a
chunk every scan runs `tl.associative_scan` along the columns, combines the value
carried from the previous chunks and carries its last column on; the pointwise ops
before the scans (recomputed at the chunk's indices) and after them (on the chunk's
scanned values) run in the same chunk, and every output is stored there. A row that
fits one chunk is one iteration; a longer one is looped: a scan needs no row buffer,
so `alloc-place` gives scan kernels no schedule, and the launcher picks
BLOCK_N = min(next power of 2 of the row, SCAN_CHUNK).

Combines (`_scan_*`): sums and products accumulate in f32 for 16-bit floats and in
i64 for bool and integers; cummax/cummin scan (value, index) pairs with torch's CPU
rule: the later element wins when it is NaN, or when it is >= (<=) the earlier one and
that one is not NaN (ties give the last index; NaN sticks, with the latest NaN's index).
The rule is associative, so a scan tree gives what a sequential loop gives.

A sort kernel holds one argsort or topk; each program sorts BLOCK_M whole rows (padded
to BLOCK_N, a power of 2, at most `fusion.SORT_MAX_EXTENT`) with `tl.sort` (bitonic,
no payload) on one 64-bit key per element: the high 32 bits an order-preserving
integer image of the value (floats: their bits, negative ones with the magnitude bits
flipped; -0.0 taken as 0.0 and every NaN as one positive NaN, larger than +inf;
descending: the image's bitwise not), the low 32 bits the element's index. Sorting the
keys sorts by value, then by index: stable, in descending order too. Indices and values
come back out of the sorted keys (a value is its image decoded). 64-bit elements (i64,
f64) leave no room for the index: their rows are ranked instead, element i going to
position #{j: x_j before x_i in the order}, counted in BLOCK_N x RANK_CHUNK tiles
(quadratic in the row, so their rows are capped at `fusion.SORT_MAX_EXTENT_64`).
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.backend.kernel_plan import (
    CodegenError,
    KernelPlan,
    _natural_maps,
    domain_extents,
    identity_map,
)
from allotment.backend.kernels.elementwise_emission import compute_dtype
from allotment.backend.kernels.emitter import ALL_AXES, Emitter, GeneratedKernel, InSize
from allotment.dialects import alloc, fusion
from allotment.dialects.fusion_rules import is_float
from allotment.dtypes import triton_dtype

SCAN_CHUNK = 1024
"""The most columns of a row a scan program holds at once; longer rows are looped."""

RANK_CHUNK = 8
"""Columns compared per step when a row of 64-bit elements is ranked."""

SCAN_HELPERS = {
    "_scan_add": '''
@triton.jit
def _scan_add(a, b):
    return a + b
''',
    "_scan_mul": '''
@triton.jit
def _scan_mul(a, b):
    return a * b
''',
    "_scan_max_index": '''
@triton.jit
def _scan_max_index(av, ai, bv, bi):
    # b is the later element: it wins when NaN, or >= a while a is not NaN (torch, CPU)
    take = (bv != bv) | ((av == av) & (bv >= av))
    return tl.where(take, bv, av), tl.where(take, bi, ai)
''',
    "_scan_min_index": '''
@triton.jit
def _scan_min_index(av, ai, bv, bi):
    # b is the later element: it wins when NaN, or <= a while a is not NaN (torch, CPU)
    take = (bv != bv) | ((av == av) & (bv <= av))
    return tl.where(take, bv, av), tl.where(take, bi, ai)
''',
}


def scan_helpers(names: Iterable[str]) -> str:
    """The combine functions named in `names` (requested: `Emitter.helper`)."""
    wanted = set(names)
    return "".join(src for name, src in SCAN_HELPERS.items() if name in wanted)


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _row_dim(op: Operation) -> int:
    return op.scan_dim() if isinstance(op, fusion.ScanOp) else op.sort_dim()


def plan_scan_kernel(kernel: alloc.KernelOp) -> KernelPlan:
    """The plan of a `scan` or `sort` kernel: the domain is its scans' (or its sort's)
    input shape, the inner dim the scan or sort dim. A topk's results (k along the dim)
    are stored at the domain's indices below k."""
    kind = kernel.kind.data
    block = kernel.body.block
    ops = [op for op in block.ops if not isinstance(op, alloc.YieldOp)]
    rows = [op for op in ops if isinstance(op, fusion.ScanOp | fusion.SortOp)]
    if not rows:
        raise CodegenError(f"kernel {kernel.sym_name.data!r}: a {kind} kernel without a {kind}")
    if kind == "sort" and (len(rows) != 1 or len(ops) != 1):
        raise CodegenError(f"kernel {kernel.sym_name.data!r}: a sort kernel holds one argsort or topk only")
    if kind == "scan" and any(isinstance(op, fusion.SortOp) for op in rows):
        raise CodegenError(f"kernel {kernel.sym_name.data!r}: a scan kernel cannot sort")
    domain = _shape(rows[0].operands[0])
    dim = _row_dim(rows[0])
    for op in rows[1:]:
        if _shape(op.operands[0]) != domain or _row_dim(op) != dim:
            raise CodegenError(f"kernel {kernel.sym_name.data!r}: scans over different rows")
    outer = [d for d in range(len(domain)) if d != dim]
    plan = KernelPlan(kernel, kind, tuple(domain), outer, [dim], [])
    _natural_maps(plan, block.args, ops)
    yielded = list(block.last_op.operands)
    topk = [r for op in rows if isinstance(op, fusion.TopkOp) for r in op.results]
    plan.extents = domain_extents(plan)
    for r in topk:
        plan.natural[r] = tuple((d, 0) for d in range(len(domain)))
    for v in yielded:
        if v not in plan.natural:
            raise CodegenError(f"kernel {plan.name}: cannot place output {v.name_hint} in the iteration domain")
    return plan


def _acc_type(op: fusion.ScanOp) -> str:
    """The type a scan combines in: f32 for 16-bit floats, i64 for sums and products of
    bool and integers, i8 for bool extrema, else the input's type."""
    src = op.input.type.element_type
    if isinstance(op, fusion.AccumulatingScanOp):
        return compute_dtype(src) if is_float(src) else "tl.int64"
    if src == IntegerType(1):
        return "tl.int8"
    return compute_dtype(src)


def _lowest(t: str, largest: bool) -> str:
    if t.startswith("tl.float"):
        return 'float("-inf")' if largest else 'float("inf")'
    bits = int(t.removeprefix("tl.int"))
    return str(-(2 ** (bits - 1))) if largest else str(2 ** (bits - 1) - 1)


class ScanEmitter(Emitter):
    """Emits the `scan` or `sort` variant of a kernel (see the module docstring)."""

    def emit(self) -> None:
        if self.variant == "scan":
            self.emit_scan()
        else:
            self.emit_sort()

    # -- scans -------------------------------------------------------------------

    def emit_scan(self) -> None:
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        scans = [op for op in self.block.ops if isinstance(op, fusion.ScanOp)]
        carries: dict[Operation, tuple[str, ...]] = {}
        for op in scans:
            acc = _acc_type(op)
            c = self.fresh("carry")
            if isinstance(op, fusion.SelectingScanOp):
                ci = self.fresh("carry_i")
                neutral = _lowest(acc, isinstance(op, fusion.CummaxOp))
                self.line(f"{c} = tl.full((BLOCK_M, 1), {neutral}, {acc})")
                self.line(f"{ci} = tl.full((BLOCK_M, 1), -1, tl.int64)")
                carries[op] = (c, ci)
            else:
                neutral = "0" if isinstance(op, fusion.CumsumOp) else "1"
                self.line(f"{c} = tl.full((BLOCK_M, 1), {neutral}, {acc})")
                carries[op] = (c,)
        self.line("for start in range(0, N, BLOCK_N):")
        with self.indent():
            self.scopes.append({})
            self.emit_inner_indices("start")
            # the chunk's last column in the row: the carry for the next chunk
            self.line("last = (((rn == N - 1) | (tl.arange(0, BLOCK_N) == BLOCK_N - 1)) & (rn < N))[None, :]")
            for op in scans:
                self.scan_chunk(op, carries[op])
            self.store_outputs(ALL_AXES)
            self.scopes.pop()

    def scan_chunk(self, op: fusion.ScanOp, carry: tuple[str, ...]) -> None:
        """One chunk of scan `op`: its input tile, the scan, the carried value combined in,
        the new carry; its results go into the chunk's scope at the domain's indices."""
        m = identity_map(_shape(op.input), self.plan.domain)
        x, _ = self.value(op.input, m)
        acc = _acc_type(op)
        xs = self.fresh("scan_in")
        self.line(f"{xs} = tl.broadcast_to(({x}).to({acc}), (BLOCK_M, BLOCK_N))")
        s = self.fresh("scan")
        if isinstance(op, fusion.SelectingScanOp):
            combine = self.helper("_scan_max_index" if isinstance(op, fusion.CummaxOp) else "_scan_min_index")
            dim = self.plan.inner[0]
            xi = self.fresh("scan_i")
            si = self.fresh("scan_i")
            self.line(f"{xi} = tl.broadcast_to(i{dim}.to(tl.int64), (BLOCK_M, BLOCK_N))")
            self.line(f"{s}, {si} = tl.associative_scan(({xs}, {xi}), 1, {combine})")
            c, ci = carry
            self.line(f"{s}, {si} = {combine}({c}, {ci}, {s}, {si})")
            # tl.sum widens narrow integers: the carry keeps its type across iterations
            self.line(f"{c} = tl.sum(tl.where(last, {s}, 0), 1)[:, None].to({acc})")
            self.line(f"{ci} = tl.sum(tl.where(last, {si}, 0), 1)[:, None]")
            values, indices = op.results
            self.scopes[-1][(values, m)] = (self.cast_to(s, acc, values.type.element_type), frozenset({"m", "n"}))
            self.scopes[-1][(indices, m)] = (si, frozenset({"m", "n"}))
            return
        combine = self.helper("_scan_add" if isinstance(op, fusion.CumsumOp) else "_scan_mul")
        sym = "+" if isinstance(op, fusion.CumsumOp) else "*"
        (c,) = carry
        self.line(f"{s} = tl.associative_scan({xs}, 1, {combine}) {sym} {c}")
        self.line(f"{c} = tl.sum(tl.where(last, {s}, 0), 1)[:, None].to({acc})")
        result = op.results[0]
        self.scopes[-1][(result, m)] = (self.cast_to(s, acc, result.type.element_type), frozenset({"m", "n"}))

    def cast_to(self, x: str, acc: str, t: Attribute) -> str:
        """x (of Triton type acc) as IR element type t."""
        out = triton_dtype(t)
        if out == acc:
            return x
        name = self.fresh()
        self.line(f"{name} = {x} != 0" if t == IntegerType(1) else f"{name} = {self.to(x, out)}")
        return name

    def compute(self, v: SSAValue, m: tuple) -> tuple[str, frozenset[str]]:
        op = v.owner
        if isinstance(op, fusion.ScanOp | fusion.SortOp):
            raise CodegenError(
                f"kernel {self.plan.name}: {op.name} result {v.name_hint} is read at other indices than its own"
            )
        return super().compute(v, m)

    # -- sorts -------------------------------------------------------------------

    def emit_sort(self) -> None:
        (op,) = [o for o in self.block.ops if isinstance(o, fusion.SortOp)]
        et = op.input.type.element_type
        self.line("pid = tl.program_id(0)")
        self.emit_outer_indices("pid")
        self.emit_inner_indices("0")  # BLOCK_N >= N: the whole row
        m = identity_map(_shape(op.input), self.plan.domain)
        x, _ = self.value(op.input, m)
        descending = op.descending is not None if isinstance(op, fusion.ArgsortOp) else op.largest is not None
        dim = self.plan.inner[0]
        if isinstance(et, Float64Type) or (isinstance(et, IntegerType) and et.width.data > 32):
            values, indices, position = self.rank_sort(op, x, descending)
        else:
            values, indices = self.key_sort(et, x, descending, dim)
            position = f"i{dim}"
        keep = "mask_m & mask_n"
        if isinstance(op, fusion.TopkOp):
            keep += f" & ({position} < {op.k.value.data})"
        results = {op.results[-1]: indices}
        if isinstance(op, fusion.TopkOp):
            results[op.results[0]] = values
        for k, v in enumerate(self.block.last_op.operands):
            if v not in results:
                raise CodegenError(f"kernel {self.plan.name}: a sort kernel yields only its op's results")
            terms = [f"{position if d == dim else f'i{d}'} * out{k}_s{d}" for d in range(len(self.plan.domain))]
            self.line(f"tl.store(out{k}_ptr + ({' + '.join(terms)}), "
                      f"{self.to(f'tl.broadcast_to({results[v]}, (BLOCK_M, BLOCK_N))', triton_dtype(v.type.element_type))}, "
                      f"mask={keep})")

    def key_sort(self, et: Attribute, x: str, descending: bool, dim: int) -> tuple[str, str]:
        """(values, indices) of the row sorted on packed (value image, index) keys."""
        k32 = self.fresh("img")
        if is_float(et):
            f = self.fresh("f")
            self.line(f"{f} = tl.broadcast_to(({x}).to(tl.float32), (BLOCK_M, BLOCK_N))")
            self.line(f"{f} = tl.where({f} == 0, 0.0, {f})")  # -0.0 sorts as 0.0
            b = self.fresh("bits")
            self.line(f"{b} = {f}.to(tl.int32, bitcast=True)")
            self.line(f"{b} = tl.where({f} != {f}, 0x7FC00000, {b})")  # one NaN, above +inf
            self.line(f"{k32} = tl.where({b} < 0, {b} ^ 0x7FFFFFFF, {b})")
        else:
            self.line(f"{k32} = tl.broadcast_to(({x}).to(tl.int32), (BLOCK_M, BLOCK_N))")
        if descending:
            self.line(f"{k32} = {k32} ^ -1")
        key = self.fresh("key")
        self.line(f"{key} = ({k32}.to(tl.int64) << 32) | i{dim}.to(tl.int64)")
        self.line(f"{key} = tl.where(mask_n, {key}, 0x7FFFFFFFFFFFFFFF)")  # padding sorts last
        srt = self.fresh("sorted")
        self.line(f"{srt} = tl.sort({key}, 1)")
        idx = self.fresh("idx")
        self.line(f"{idx} = {srt}.to(tl.int32).to(tl.int64)")  # the low 32 bits: the index
        img = self.fresh("img")
        self.line(f"{img} = ({srt} >> 32).to(tl.int32)")
        if descending:
            self.line(f"{img} = {img} ^ -1")
        val = self.fresh("val")
        if is_float(et):
            self.line(f"{val} = tl.where({img} < 0, {img} ^ 0x7FFFFFFF, {img}).to(tl.float32, bitcast=True)")
            if not isinstance(et, Float32Type):
                assert isinstance(et, Float16Type | BFloat16Type)
        else:
            self.line(f"{val} = {img}")
        return val, idx

    def rank_sort(self, op: Operation, x: str, descending: bool) -> tuple[str, str, str]:
        """(values, indices, positions) of a row of 64-bit elements by ranking: element i
        goes to position #{j: x_j comes before x_i} (NaN largest, -0.0 equal to 0.0, ties
        by index), counted against the row loaded again from the input buffer, RANK_CHUNK
        elements at a time; the stores then scatter the row within itself."""
        arg = op.operands[0]
        if arg not in self.arg_index:
            raise CodegenError(f"kernel {self.plan.name}: {op.name} of 64-bit elements needs its input in a buffer")
        i = self.arg_index[arg]
        dim = self.plan.inner[0]
        et = arg.type.element_type
        ct = triton_dtype(et)
        a = self.fresh("a")
        self.line(f"{a} = tl.broadcast_to(({x}).to({ct}), (BLOCK_M, BLOCK_N))")
        row = " + ".join(f"i{d} * in{i}_s{d}" for d in range(len(self.plan.domain)) if d != dim)
        row = f"({row})[:, :, None]" if row else "0"
        rank = self.fresh("rank")
        self.line(f"{rank} = tl.zeros((BLOCK_M, BLOCK_N), tl.int64)")
        self.line(f"for jstart in range(0, N, {RANK_CHUNK}):")
        with self.indent():
            self.line(f"rj = (jstart + tl.arange(0, {RANK_CHUNK}))[None, None, :]")
            b = self.fresh("b")
            self.line(f"{b} = tl.load(in{i}_ptr + ({row} + rj * in{i}_s{dim}), mask=mask_m[:, :, None] & (rj < N), other=0)")
            ai = self.fresh("ai")
            self.line(f"{ai} = {a}[:, :, None]")
            cmp = ">" if descending else "<"
            if is_float(et):
                nan_first = f"(({b} != {b}) & ({ai} == {ai}))" if descending else f"(({b} == {b}) & ({ai} != {ai}))"
                lt = f"({nan_first} | ({b} {cmp} {ai}))"
                eq = f"((({b} != {b}) & ({ai} != {ai})) | ({b} == {ai}))"
            else:
                lt, eq = f"({b} {cmp} {ai})", f"({b} == {ai})"
            self.line(f"cnt = tl.where((rj < N) & ({lt} | ({eq} & (rj < i{dim}[:, :, None]))), 1, 0)")
            self.line(f"{rank} += tl.sum(cnt, 2).to(tl.int64)")
        return a, f"i{dim}.to(tl.int64)", rank


def variants(plan: KernelPlan) -> list[str]:
    """One function: `scan` or `sort`."""
    return [plan.kind]


def launch_lines(gen: GeneratedKernel, args: str, in_size: InSize) -> list[str]:
    """The launcher's lines for a scan or sort kernel (after M and N are known)."""
    plan = gen.plan
    fn = gen.functions[plan.kind]
    lines = ["    if M * N == 0:", "        return"]
    if plan.kind == "scan":
        lines.append(f"    bm, bn, warps = rt.persistent_blocks(M, min(N, {SCAN_CHUNK}))")
    else:
        lines.append("    bm, bn, warps = rt.persistent_blocks(M, N)")
    lines.append(f"    rt.launch({fn}, (-(-M // bm),), ({args}), {gen.launch_tail})")
    return lines
