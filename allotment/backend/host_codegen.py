"""The host program: allocated IR to readable Python, in the spirit of Inductor's wrapper.

`emit_program(func, target)` returns the source of one Python module holding
the generated Triton kernels, one launcher per kernel (block sizes, warps, and
the persistent or looped variant that `alloc-place` chose in the IR) and `run(*args)`, which
does, in the IR's order: entry checks of the inputs (dtype, device, rank,
static extents), size arithmetic, the `alloc.check`s, `torch.empty` for each
global `alloc.alloc` on the inputs' device, `torch.as_strided` for views,
kernel launches, torch calls for library kernels, `del` at `alloc.dealloc`,
and returns the results.

IR text is data: every identifier made from IR text comes from
`identifiers.Namespace` (it ends with `_`; generated names never do), and every
IR string (function, kernel and buffer names, check messages) is written as
`identifiers.literal` (an ASCII `repr`) or `identifiers.comment`.

Launchers work out nothing from their tensors' shapes: every dynamic extent a
kernel needs (of its iteration domain, and of its inputs) is an argument, an
`index` value of the host program (an `alloc.alloc` size, a `memref.dim` of an
argument, or a sum of those for pads and cats).
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.analysis.liveness import view_root
from allotment.backend.identifiers import Namespace, comment, generated, literal
from allotment.backend.kernel_kinds import generate_kernel, kind_of, launch_lines, variants
from allotment.backend.kernel_plan import CodegenError
from allotment.backend.kernels import gather_scatter, tiled_matmul
from allotment.backend.kernels.emitter import GeneratedKernel, float_literal
from allotment.backend.kernels.prelude import module_prelude
from allotment.dialects import alloc
from allotment.dialects.alloc import donated_arguments, unchecked_arguments
from allotment.dialects.fusion import argument_order
from allotment.dtypes import buffer_torch_dtype_name, ir_name, torch_dtype_source
from allotment.extents import size_arith


@dataclass
class HostProgram:
    source: str
    kernels: list[GeneratedKernel]
    function: str


def _tuple(xs: list[str]) -> str:
    return "(" + ", ".join(xs) + ("," if len(xs) == 1 else "") + ")"


class _HostEmitter:
    """Emits `run` (and collects the kernels and launchers) for one allocated function."""

    defer_views = True
    """A view with static strides at the root's own offset is made (`torch.as_strided`) only
    where something other than a generated Triton kernel reads it: a kernel is passed the
    root tensor (the same pointer) and the view's strides as literals (`view`)."""

    def __init__(self, f: func.FuncOp, target: str, poison: bool = False) -> None:
        self.f = f
        self.target = target
        self.poison = poison
        self.views: dict[SSAValue, list[str]] = {}  # buffer -> names of its views emitted so far
        self.deferred: dict[SSAValue, tuple[SSAValue, str, tuple[int, ...]]] = {}
        """Views not emitted yet (`view`): view -> (its root, its line, its strides)."""
        self.user_tensors: dict[SSAValue, str] = {}  # written argument -> the caller's tensor
        self.ns = Namespace()
        self.names: dict[SSAValue, str] = {}
        self.dims: dict[tuple[SSAValue, int], str] = {}  # (memref value, dim) -> host index value
        self.shapes: dict[SSAValue, str] = {}  # memref value -> the name holding its `.shape`
        self.huge_counts: set[str] = set()  # element counts already compared with 2**31
        self.lines: list[str] = []
        self.kernels: list[GeneratedKernel] = []
        self.tiled: list[tiled_matmul.TiledMatmulKernel] = []  # library kernels scheduled tiled
        self.launchers: list[str] = []
        self.layouts: list[str] = []  # one `(functions, tensors, loose, count)` per kernel (`_argument_layout`)
        self.host_work: list[str] = []  # what `run` does besides checks, allocations, views and launches

    def line(self, text: str) -> None:
        self.lines.append("    " + text)

    def v(self, value: SSAValue, hint: str = "v") -> str:
        """The identifier of a host value (made once, from its IR name)."""
        name = self.names.get(value)
        if name is None:
            name = self.ns.name(value.name_hint or hint)
            self.names[value] = name
        return name

    def emit(self) -> str:
        args = list(self.f.body.block.args)
        params = [self.v(a, f"arg{i}") for i, a in enumerate(args)]
        self.lines.append(f"def {generated('run')}({', '.join(params)}):")
        self.line(literal(f"@{self.f.sym_name.data}: generated by Allotment; returns a tuple of tensors."))
        unchecked = unchecked_arguments(self.f)
        tensor_args = [(a, p) for i, (a, p) in enumerate(zip(args, params))
                       if isinstance(a.type, MemRefType) and i not in unchecked]
        if tensor_args:
            first, first_name = tensor_args[0]
            self.line(f"device = rt.device_of({first_name}, {literal(first.name_hint or 'arg0')})")
            device_line = len(self.lines) - 1
        else:
            self.line(f"device = rt.default_device({self.target!r})")
        self.entry_checks(args, params)
        roots = self._view_roots()
        tensors = [p for i, (a, p) in enumerate(zip(args, params))
                   if isinstance(a.type, MemRefType) and not (i not in unchecked and _small_by_type(a, roots))]
        self.line(f"huge = rt.offsets_need_i64({', '.join(tensors)})" if tensors else "huge = False")
        for op in self.f.body.block.ops:
            self.op(op)
        if tensor_args and self.launchers and self.target == "cuda":
            # Triton kernels get raw pointers (`launch.launch_kernel`): the first tensor must be
            # a CUDA one (the entry checks put every other tensor on its device)
            first, first_name = tensor_args[0]
            self.lines[device_line] = f"    device = rt.device_of({first_name}, {literal(first.name_hint or 'arg0')}, True)"
        if not self.launchers:  # no kernel reads `huge`: no per-call storage scan
            self.lines = [ln for ln in self.lines if not ln.lstrip().startswith("huge = ")]
        if donated_arguments(self.f):
            self._boxed(params)
        return "\n".join(self.lines)

    def _boxed(self, params: list[str]) -> None:
        """A function with donated arguments (`alloc.donated`) frees them where the IR says
        (`alloc.dealloc`): the body becomes `run_boxed(args)`, which takes the arguments
        out of the caller's list and empties it, so its own names hold the only references;
        `run(*params)` calls it."""
        self.lines[0] = f"def {generated('run_boxed')}(args):"
        self.lines[2:2] = [f"    {', '.join(params)}{',' if len(params) == 1 else ''} = args", "    args.clear()"]
        self.lines.append("")
        self.lines.append(f"def {generated('run')}({', '.join(params)}):")
        self.lines.append(f"    return {generated('run_boxed')}([{', '.join(params)}])")

    def entry_checks(self, args: list[SSAValue], params: list[str]) -> None:
        """One check per argument; errors name it by its IR name. A tensor gets one inline
        condition (`_fast_tensor_check`) that holds exactly when `rt.check_tensor` would
        accept it unchanged, and `rt.check_tensor` (the exact error, or a contiguous copy)
        only when it fails; a scalar gets `rt.check_scalar`."""
        view_roots = self._view_roots()
        unchecked = unchecked_arguments(self.f)
        first_tensor = next((a for i, a in enumerate(args) if isinstance(a.type, MemRefType) and i not in unchecked),
                            None)
        for i, (a, p) in enumerate(zip(args, params)):
            t = a.type
            if i in unchecked:
                self.line(f"# {comment(a.name_hint or f'arg{i}')}: alloc.unchecked (only ATen calls read it)")
                continue
            shown = literal(a.name_hint or f"arg{i}")
            if isinstance(t, MemRefType):
                shape = tuple(None if e == DYNAMIC_INDEX else e for e in t.get_shape())
                contig = a in view_roots
                order = argument_order(a) if contig else None  # views planned for this order
                if contig and a in self._written_arguments():
                    # check_tensor may return a contiguous copy: keep the caller's tensor to write back
                    self.user_tensors[a] = self.ns.name(f"{a.name_hint or f'arg{i}'}.caller")
                    self.line(f"{self.user_tensors[a]} = {p}")
                self.line(f"if not ({_fast_tensor_check(p, t, contig, a is first_tensor, order)}):")
                ordered = "" if order is None else f", {tuple(order)!r}"
                self.line(
                    f"    {p} = rt.check_tensor({p}, {shown}, {torch_dtype_source(t.element_type)}, {shape!r}, "
                    f"device, {contig}{ordered})"
                )
            else:
                kind, bits = _scalar_kind(t)
                self.line(f"{p} = rt.check_scalar({p}, {shown}, {kind!r}{f', {bits}' if kind == 'int' else ''})")
        self.in_place_checks(args, params)

    def in_place_checks(self, args: list[SSAValue], params: list[str]) -> None:
        """Per argument that a kernel writes, `rt.check_in_place` on the caller's tensor: not
        overlapping itself, not sharing memory with another tensor argument (as torch's in-place
        ops refuse). After the entry checks: every tensor argument is a tensor on `device`."""
        written = self._written_arguments()
        tensors = [(i, a, p) for i, (a, p) in enumerate(zip(args, params)) if isinstance(a.type, MemRefType)]
        for i, a, p in tensors:
            if a not in written:
                continue
            others = [(q, literal(b.name_hint or f"arg{j}")) for j, b, q in tensors if b is not a]
            self.line(
                f"rt.check_in_place({self.user_tensors.get(a, p)}, {literal(a.name_hint or f'arg{i}')}, "
                f"{_tuple([q for q, _ in others])}, {_tuple([n for _, n in others])})"
            )

    def passed_scalars(self) -> list[tuple[int, str, int]]:
        """(index, kind, bits) of each int or float scalar parameter whose only uses are
        operands of Triton kernels: its value changes nothing but those kernels' arguments
        (and, for an int, which compiled kernel runs: Triton specializes on 1, on
        divisibility by 16 and on the 32-bit range, which a replay matches)."""
        out = []
        for i, a in enumerate(self.f.body.block.args):
            if isinstance(a.type, MemRefType) or not a.uses:
                continue
            kind, bits = _scalar_kind(a.type)
            if kind == "bool":
                continue
            if all(isinstance(u.operation, alloc.KernelOp) and u.operation.kind.data not in ("library", "collective", "aten")
                   for u in a.uses):
                out.append((i, kind, bits))
        return out

    def _written_arguments(self) -> set[SSAValue]:
        """Arguments that a kernel writes (in-place outputs, `alloc-alias`)."""
        args = set(self.f.body.block.args)
        return {
            view_root(v) for op in self.f.body.block.ops if isinstance(op, alloc.KernelOp)
            for v in op.outs if view_root(v) in args
        }

    def _view_roots(self) -> set[SSAValue]:
        roots = set()
        for op in self.f.body.block.ops:
            if isinstance(op, memref.ReinterpretCastOp):
                roots.add(view_root(op.source))
        return roots

    def op(self, op: Operation) -> None:
        if self.deferred and not isinstance(op, memref.ReinterpretCastOp | alloc.KernelOp | alloc.DeallocOp):
            for x in op.operands:  # anything but a kernel or a view of it reads the view's tensor
                self.materialize(x)
        if isinstance(op, arith.ConstantOp):
            attr = op.value
            if isinstance(attr, IntegerAttr):
                val = bool(attr.value.data) if attr.type == IntegerType(1) else attr.value.data
            elif isinstance(attr, FloatAttr):
                val = float(attr.value.data)
            else:
                raise CodegenError(f"unsupported constant {attr}")
            self.line(f"{self.v(op.result)} = {float_literal(val) if isinstance(val, float) else repr(val)}")
        elif isinstance(op, memref.DimOp):
            index = op.index.owner
            if isinstance(index, arith.ConstantOp) and isinstance(index.value, IntegerAttr):
                d = index.value.value.data
                self.line(f"{self.v(op.result)} = {self.shape(op.source)}[{d}]")
                self.dims.setdefault((op.source, d), self.v(op.result))
            else:
                self.line(f"{self.v(op.result)} = {self.v(op.source)}.shape[{self.v(op.index)}]")
        elif op.dialect_name() == "arith":
            self.line(f"{self.v(op.results[0])} = {_arith_expr(op, [self.v(x) for x in op.operands])}")
            guard = _overflow_guard(op, self.v(op.results[0]), [self.v(x) for x in op.operands])
            if guard is not None:
                self.line(guard[0])
                self.line(guard[1])
        elif isinstance(op, alloc.CheckOp):
            a, b = self.v(op.lhs), self.v(op.rhs)
            call = f"rt.check({literal(op.predicate.data)}, {a}, {b}, {literal(op.message.data)})"
            fails = {"eq": f"{a} != {b}", "ge": f"{a} < {b}"}.get(op.predicate.data)
            if fails is None:
                self.line(call)
            else:  # the common case costs one comparison; rt.check raises the error
                self.line(f"if {fails}:")
                self.line(f"    {call}")
        elif isinstance(op, alloc.AllocOp) and op.by_call is not None:
            self.v(op.result)  # made by the aten call that writes it (`aten_call`)
            self.line(f"# alloc.alloc {comment(_buffer_name(op))}: by the call that writes it")
        elif isinstance(op, alloc.AllocOp):
            t = op.result.type
            dyn = iter(op.sizes)
            shape = [self.v(next(dyn)) if e == DYNAMIC_INDEX else str(e) for e in t.get_shape()]
            self.line(f"# alloc.alloc {comment(_buffer_name(op))}")
            dtype = f"torch.{buffer_torch_dtype_name(t.element_type)}"  # i8: an arena's bytes
            if op.order is not None and list(op.order.get_values()) != list(range(len(shape))):
                # dims outermost first in memory: allocated in that order, viewed back
                order = [int(d) for d in op.order.get_values()]
                inverse = [order.index(d) for d in range(len(order))]
                self.line(
                    f"{self.v(op.result)} = torch.empty({_tuple([shape[d] for d in order])}, dtype={dtype}, "
                    f"device=device).permute({_tuple([str(d) for d in inverse])})"
                )
            elif any(e == DYNAMIC_INDEX for e in t.get_shape()) and op.result not in self.escaping:
                # may be empty at run time (a split's partials when it has one split): then the
                # cached empty tensor of its shape (`rt.no_elements`), no allocation
                self.line(
                    f"{self.v(op.result)} = torch.empty({_tuple(shape)}, dtype={dtype}, device=device) "
                    f"if {' * '.join(shape)} else rt.no_elements({_tuple(shape)}, {dtype}, device)"
                )
            else:
                self.line(f"{self.v(op.result)} = torch.empty({_tuple(shape)}, dtype={dtype}, device=device)")
            count = " * ".join(shape)  # its element count, without asking the tensor
            if any(e == DYNAMIC_INDEX for e in t.get_shape()) and count not in self.huge_counts:
                self.huge_counts.add(count)  # once per count (buffers of one shape)
                self.line(f"huge = huge or {count} >= 2**31")
        elif isinstance(op, memref.ReinterpretCastOp):
            self.view(op)
        elif isinstance(op, alloc.PackOp):
            sizes = _tuple([self.v(v) for v in op.sizes])
            results = ", ".join(self.v(r) for r in op.results)
            lifetimes = _tuple([f"({a}, {b})" for a, b in op.lifetime_pairs()])
            self.line(f"# alloc.pack: {len(op.sizes)} slots in one arena")
            self.line(f"if {' or '.join(self.v(v) for v in op.sizes) or 'False'}:")
            self.line(f"    {results}, = rt.pack({sizes}, {lifetimes}, {op.alignment.value.data})")
            self.line("else:  # every slot empty: what rt.pack gives, no bytes and every offset 0")
            self.line(f"    {results}, = {_tuple(['0'] * len(op.results))}")
        elif isinstance(op, memref.ViewOp):
            self.slot(op)
        elif isinstance(op, alloc.KernelOp):
            self.kernel(op)
        elif isinstance(op, alloc.DeallocOp):
            self.free(op.buffer)
        elif isinstance(op, func.ReturnOp):
            results = []
            for x in op.arguments:
                user = self.user_tensors.get(x)
                if user is not None:  # an in-place output: the caller's tensor gets the values
                    self.line(f"rt.write_back({user}, {self.v(x)})")
                results.append(user or self.v(x))
            self.line("return " + _tuple(results))
        else:
            raise CodegenError(f"the host program cannot execute {op.name}")

    @functools.cached_property
    def escaping(self) -> set[SSAValue]:
        """Buffers whose tensor reaches code other than this program's Triton kernels: the
        results (and every buffer and arena they view), and the operands of library and
        collective kernels (torch calls that may resize an `out=`). Only the others may be
        the shared empty tensors of `rt.no_elements`."""
        out: set[SSAValue] = set()
        for op in self.f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                values = list(op.arguments)
            elif isinstance(op, alloc.KernelOp) and op.kind.data in ("library", "collective", "aten"):
                values = [*op.ins, *op.outs]
            else:
                continue
            for v in values:
                while True:
                    out.add(v)
                    owner = v.owner
                    if not isinstance(owner, memref.ReinterpretCastOp | memref.SubviewOp | memref.CastOp | memref.ViewOp):
                        break
                    v = owner.operands[0]
        return out

    def shape(self, buffer: SSAValue) -> str:
        """The name of `buffer.shape`, read once per tensor (a `torch.Size` is built on every
        `.shape`): at its first use, in the straight-line body of `run`, after the entry checks
        (the last assignment of an argument's name)."""
        name = self.shapes.get(buffer)
        if name is None:
            name = self.shapes[buffer] = self.ns.name(f"{buffer.name_hint or 'arg'}_shape")
            self.line(f"{name} = {self.v(buffer)}.shape")
        return name

    def _mixed(self, static, dynamic) -> list[str]:  # noqa: ANN001 (xDSL's dense array and operand range)
        it = iter(dynamic)
        return [self.v(next(it)) if s == DYNAMIC_INDEX else str(s) for s in static.get_values()]

    def free(self, buffer: SSAValue) -> None:
        """`alloc.dealloc`: drops the buffer and every view of it, so its memory goes back to
        torch's allocator (an arena slot's bytes go back to its arena); in poison mode it is
        first filled with NaN (or a sentinel)."""
        if self.poison:
            self.materialize(buffer)
            self.host_work.append("poison mode fills freed buffers")
            self.line(f"rt.poison({self.v(buffer)})")
        for view in [v for v, (root, _, _) in self.deferred.items() if root is buffer or v is buffer]:
            del self.deferred[view]  # never made: nothing to drop
        if buffer.owner is not None and isinstance(buffer.owner, memref.ReinterpretCastOp) \
                and self.v(buffer) not in self.views.get(_storage(buffer.owner.source), []):
            return  # a view never made (`view`)
        if isinstance(buffer.owner, memref.ViewOp):
            self.views.get(_storage(buffer.owner.source), []).remove(self.v(buffer))
        self.line("del " + ", ".join([self.v(buffer), *self.views.pop(buffer, [])]))

    def slot(self, op: memref.ViewOp) -> None:
        """A `memref.view` of an arena: a typed tensor over bytes [offset, offset + size)."""
        t = op.result.type
        dyn = iter(op.sizes)
        shape = [self.v(next(dyn)) if e == DYNAMIC_INDEX else str(e) for e in t.get_shape()]
        self.views.setdefault(_storage(op.source), []).append(self.v(op.result))
        call = (f"rt.slot({self.v(op.source)}, {self.v(op.byte_shift)}, "
                f"{torch_dtype_source(t.element_type)}, {_tuple(shape)})")
        if any(e == DYNAMIC_INDEX for e in t.get_shape()) and op.result not in self.escaping:
            # an empty slot (a split's partials when it has one split): the cached empty tensor
            call += f" if {' * '.join(shape)} else rt.no_elements({_tuple(shape)}, {torch_dtype_source(t.element_type)}, device)"
        self.line(f"{self.v(op.result)} = {call}")

    def view(self, op: memref.ReinterpretCastOp) -> None:
        root = _storage(op.source)
        sizes = self._mixed(op.static_sizes, op.sizes)
        strides = self._mixed(op.static_strides, op.strides)
        (offset,) = self._mixed(op.static_offsets, op.offsets)
        # no storage offset given: torch's as_strided keeps the root's own (a call cheaper by
        # a third than one passing `root.storage_offset() + 0`)
        shift = "" if offset == "0" else f", {self.v(root)}.storage_offset() + {offset}"
        line = f"{self.v(op.result)} = torch.as_strided({self.v(root)}, {_tuple(sizes)}, {_tuple(strides)}{shift})"
        if self.defer_views and offset == "0" and DYNAMIC_INDEX not in op.static_strides.get_values():
            self.deferred[op.result] = (root, line, tuple(op.static_strides.get_values()))
            return
        self.views.setdefault(root, []).append(self.v(op.result))
        self.line(line)

    def materialize(self, value: SSAValue) -> None:
        """Emits the deferred view `value` (`view`) here, if it is one not made yet."""
        deferred = self.deferred.pop(value, None)
        if deferred is not None:
            root, line, _ = deferred
            self.views.setdefault(root, []).append(self.v(value))
            self.line(line)

    # -- sizes ---------------------------------------------------------------------

    def dim(self, buffer: SSAValue, j: int) -> str:
        """The host index value (or literal) of extent j of a host buffer: a static extent,
        the size operand of its `alloc.alloc` or view, or a `memref.dim` of an argument
        (the IR's own when there is one, else one emitted here, once)."""
        t = buffer.type
        if not isinstance(t, MemRefType):
            raise CodegenError(f"{buffer.name_hint}: not a buffer")
        shape = t.get_shape()
        if shape[j] != DYNAMIC_INDEX:
            return str(shape[j])
        found = self.dims.get((buffer, j))
        if found is not None:
            return found
        owner = buffer.owner
        if isinstance(owner, alloc.AllocOp):
            name = self.v(owner.sizes[sum(1 for e in shape[:j] if e == DYNAMIC_INDEX)])
        elif isinstance(owner, memref.ReinterpretCastOp):
            name = self._mixed(owner.static_sizes, owner.sizes)[j]
        elif isinstance(owner, memref.ViewOp):
            name = self.v(owner.sizes[sum(1 for e in shape[:j] if e == DYNAMIC_INDEX)])
        else:
            name = self.ns.name(f"{buffer.name_hint or 'arg'}_d{j}")
            self.line(f"{name} = {self.shape(buffer)}[{j}]")
        self.dims[(buffer, j)] = name
        return name

    def host_index(self, op: alloc.KernelOp, value: SSAValue) -> str:
        """A host index value used inside a kernel region (a block argument is its `ins` operand)."""
        args = list(op.body.block.args)
        if value in args:
            value = op.ins[args.index(value)]
        return self.v(value)

    # -- kernels -------------------------------------------------------------------

    def kernel(self, op: alloc.KernelOp) -> None:
        ins = [self.v(x) for x in op.ins]
        outs = [self.v(x) for x in op.outs]
        kname = op.sym_name.data
        kind = kind_of(op)
        prologue = [] if kind.host is not None else gather_scatter.host_prologue(op, ins, outs, self.dim)
        if kind.host is not None or prologue:  # host code reads the tensors: every view made
            for x in (*op.ins, *op.outs):
                self.materialize(x)
        self.line(f"# alloc.kernel {comment(kname)} {comment(op.kind.data)}")
        if kind.host is not None:  # a library or ATen call on the host
            kind.host(self, op, ins, outs)
            return
        plan = kind.plan(op)
        for text in prologue:  # index checks, scatter copies
            self.host_work.append(f"kernel {kname!r} checks its indices or copies on the host")
            self.line(text)
        strides: dict[str, tuple[int, ...]] = {}  # in0, out1, ...: a deferred view's, passed as literals
        for prefix, values, names in (("in", op.ins, ins), ("out", op.outs, outs)):
            for i, x in enumerate(values):
                deferred = self.deferred.get(x)
                if deferred is not None:
                    names[i] = self.v(deferred[0])
                    strides[f"{prefix}{i}"] = deferred[2]
                elif self.defer_views and (known := _allocated_strides(x)) is not None:
                    strides[f"{prefix}{i}"] = known
        functions = {variant: self.ns.name(f"{kname}_{variant}") for variant in variants(plan)}
        gen = generate_kernel(plan, self.target, functions)
        self.kernels.append(gen)
        extents = [self.v(src.value) for src in plan.extents if src.value is not None]
        extents += [self.v(a.value) for a in gen.args if a.kind == "host_size"]
        sizes = [self.dim(op.ins[i], j) for i, j in _dynamic_input_dims(op)]
        fits = [self.v(op.fits)] if op.fits is not None and (plan.reductions or plan.columns) else []
        call_args = ins + outs + extents + sizes + fits + ["huge"]
        launch = self.ns.name(f"launch_{kname}")
        self.line(f"{launch}({', '.join(call_args)})")
        self.launchers.append(_launcher(gen, launch, len(ins), len(outs), strides))
        params = list(self.f.body.block.args)
        from_params = [(k, params.index(op.ins[a.index])) for k, a in enumerate(gen.args)
                       if a.kind == "scalar" and op.ins[a.index] in params]
        self.layouts.append(_argument_layout(gen, from_params))


def _scalar_kind(t: Attribute) -> tuple[str, int]:
    """The `rt.check_scalar` kind ("float", "bool" or "int") and bits of a scalar parameter's type."""
    name = ir_name(t) or ""
    kind = "float" if name.startswith(("f", "bf")) else ("bool" if name == "i1" else "int")
    return kind, 32 if name == "i32" else 64


def _allocated_strides(value: SSAValue) -> tuple[int, ...] | None:
    """The strides of a buffer that the host program allocates with `torch.empty` of a
    static shape in row-major order (`alloc.alloc`): torch's contiguous strides, each the
    element count inside it (an extent 0 counting as 1, as torch does); else None."""
    owner = value.owner
    if not isinstance(owner, alloc.AllocOp) or owner.by_call is not None or owner.sizes:
        return None
    shape = value.type.get_shape()
    if owner.order is not None and list(owner.order.get_values()) != list(range(len(shape))):
        return None
    strides, inner = [], 1
    for e in reversed(shape):
        strides.append(inner)
        inner *= max(e, 1)
    return tuple(reversed(strides))


def _small_by_type(a: SSAValue, view_roots: set[SSAValue]) -> bool:
    """Whether checked tensor argument `a` never needs 64-bit indices whatever the call
    (`rt.offsets_need_i64` then skips it): after the entry checks it is contiguous (the
    program views it: a view root, which `_fast_tensor_check` requires contiguous) with
    static extents whose element count, its span, is below 2^31."""
    shape = a.type.get_shape()
    return a in view_roots and DYNAMIC_INDEX not in shape and math.prod(shape) < 2**31


def _fast_tensor_check(p: str, t: MemRefType, contiguous: bool, first: bool, order: list[int] | None = None) -> str:
    """A Python condition that holds exactly when `rt.check_tensor` accepts tensor `p` as
    it is (type, dtype, device, dense layout, rank, static extents, and, when the program
    views it, contiguity or, for an argument with a `fusion.stride_order`, a dense layout
    in that order). The first tensor argument has passed `rt.device_of` (a dense
    tensor, whose device is `device`): its device and layout are not compared again."""
    shape = t.get_shape()
    parts = [f"isinstance({p}, torch.Tensor)", f"{p}.dtype is {torch_dtype_source(t.element_type)}"]
    if not first:
        parts += [f"{p}.device == device", f"{p}.layout is torch.strided"]
    static = [(d, e) for d, e in enumerate(shape) if e != DYNAMIC_INDEX]
    if len(static) == len(shape):
        parts.append(f"{p}.shape == {tuple(shape)!r}")  # rank and every extent
    else:
        parts.append(f"{p}.dim() == {len(shape)}")
        parts += [f"{p}.shape[{d}] == {e}" for d, e in static]
    if contiguous and order is not None:
        parts.append(f"rt.dense_in_order({p}.shape, {p}.stride(), {tuple(order)!r})")
    elif contiguous:
        parts.append(f"{p}.is_contiguous()")
    return " and ".join(parts)


def _storage(value: SSAValue) -> SSAValue:
    """The tensor a view is taken over in the host program: its root buffer, or the arena
    slot (`memref.view`) it views, whose elements have the view's type."""
    while isinstance(value.owner, memref.ReinterpretCastOp | memref.SubviewOp | memref.CastOp):
        value = value.owner.operands[0]
    return value


def _buffer_name(op: alloc.AllocOp) -> str:
    """The buffer's `name` property (IR text: for comments only), or ""."""
    return op.buffer_name.data if op.buffer_name is not None else ""


def _dynamic_input_dims(op: alloc.KernelOp) -> list[tuple[int, int]]:
    """(input, dim) of every dynamic extent of the kernel's tensor inputs, in argument order."""
    out = []
    for i, a in enumerate(op.body.block.args):
        if isinstance(a.type, TensorType):
            out += [(i, j) for j, e in enumerate(a.type.get_shape()) if e == DYNAMIC_INDEX]
    return out


_CMPF = {
    1: "{0} == {1}", 2: "{0} > {1}", 3: "{0} >= {1}", 4: "{0} < {1}", 5: "{0} <= {1}",
    6: "{0} < {1} or {0} > {1}", 7: "{0} == {0} and {1} == {1}", 8: "not ({0} < {1} or {0} > {1})",
    9: "not {0} <= {1}", 10: "not {0} < {1}", 11: "not {0} >= {1}", 12: "not {0} > {1}",
    13: "{0} != {1}", 14: "{0} != {0} or {1} != {1}",
}
"""arith.cmpf predicates (oeq ... une, uno) on Python floats, whose comparisons are
false when an operand is NaN (the ordered ones); the unordered ones negate an ordered one."""

_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
"""arith.cmpi predicates (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge) on index
values, which the host program holds as non-negative Python ints."""


def _positive_constant(v: SSAValue) -> bool:
    """Whether v is an `arith.constant` integer above 0."""
    c = v.owner
    return (isinstance(c, arith.ConstantOp) and isinstance(c.value, IntegerAttr)
            and c.value.value.data > 0)


def _known_positive(v: SSAValue) -> bool:
    """Whether the `index` value v is above 0 whatever the inputs: a positive constant, or
    the `arith.maxsi` of something and a known positive value (`max(n, 1)`, the guard that
    size builders put on divisors)."""
    if _positive_constant(v):
        return True
    m = v.owner
    return isinstance(m, arith.MaxSIOp) and (_known_positive(m.lhs) or _known_positive(m.rhs))


_INLINE_INDEX_OPS = {"addi": "+", "subi": "-", "muli": "*"}
"""`index` ops the host program computes as plain Python, with `_overflow_guard` after them."""


def _overflow_guard(op: Operation, result: str, xs: list[str]) -> tuple[str, str] | None:
    """For an `index` add, sub or mul computed as plain Python (`_arith_expr`): the two lines
    that call `rt.size_arith.<op>` (which raises its overflow error) when the exact result
    does not fit 64 signed bits; None for every other op."""
    name = op.name.split(".", 1)[1]
    if name not in _INLINE_INDEX_OPS or not isinstance(op.results[0].type, IndexType):
        return None
    return f"if not -2**63 <= {result} < 2**63:", f"    rt.size_arith.{name}({xs[0]}, {xs[1]})"


def _arith_expr(op: Operation, xs: list[str]) -> str:
    """Python for one host-level `arith` op. Integer ops call `extents.size_arith`
    (as `rt.size_arith`): `index` ops as `rt.size_arith.divsi(a, b)` (an error on a
    zero divisor or overflow), `iN` ops wrapping at N bits; except the `index` ops that
    plain Python computes exactly: min and max, floor and ceiling division by a value known
    positive (no zero divisor, no overflow), and add, sub and mul (exact Python ints, which
    `_overflow_guard`'s check after them sends to `rt.size_arith` when they overflow)."""
    name = op.name.split(".", 1)[1]
    if isinstance(op, arith.CmpiOp):
        # index comparisons (alloc-place's `%fits`): Python ints compare exactly; signed
        # comparisons of integer scalars (which the host holds as signed Python ints)
        pred = op.predicate.value.data
        symbol = _CMPI.get(pred)
        if symbol is None or not (isinstance(op.lhs.type, IndexType) or pred < 6):
            raise CodegenError(f"the host program cannot compute {op.name} on {op.lhs.type}")
        return f"({xs[0]} {symbol} {xs[1]})"
    if isinstance(op, arith.CmpfOp):
        form = _CMPF.get(op.predicate.value.data)
        if form is None:
            raise CodegenError(f"the host program cannot compute {op.name} {op.predicate.value.data}")
        return "(" + form.format(*xs) + ")"
    if isinstance(op, arith.BitcastOp):
        src, dst = op.operands[0].type, op.results[0].type
        if isinstance(src, Float32Type | Float64Type) and isinstance(dst, IntegerType):
            return f"rt.float_bits({xs[0]}, {str(src)!r})"
        if isinstance(dst, Float32Type | Float64Type) and isinstance(src, IntegerType):
            return f"rt.bits_float({xs[0]}, {str(dst)!r})"
        raise CodegenError(f"the host program cannot compute {op.name} from {src} to {dst}")
    if name in ("andi", "ori") and op.results[0].type == IntegerType(1):
        return f"({xs[0]} {name[:-1]} {xs[1]})"
    if size_arith.arith_op_name(op.name) is not None:
        t = op.results[0].type
        if isinstance(t, IntegerType):
            return f"rt.size_arith.wrapping({name!r}, {xs[0]}, {xs[1]}, {t.width.data})"
        # `index` ops that can neither overflow nor divide by zero are plain Python (no call):
        # min and max of in-range values, floor and ceiling division by a positive constant
        if name in ("minsi", "maxsi"):
            return f"{name[:3]}({xs[0]}, {xs[1]})"
        if name in ("floordivsi", "ceildivsi") and _known_positive(op.operands[1]):
            return f"({xs[0]} // {xs[1]})" if name == "floordivsi" else f"(-(-{xs[0]} // {xs[1]}))"
        if name in _INLINE_INDEX_OPS:  # exact in Python; `_overflow_guard` raises past 64 bits
            return f"{xs[0]} {_INLINE_INDEX_OPS[name]} {xs[1]}"
        return f"rt.size_arith.{name}({xs[0]}, {xs[1]})"
    binary = {
        "addf": "{0} + {1}", "subf": "{0} - {1}", "mulf": "{0} * {1}", "divf": "rt.float_div({0}, {1})",
        "maximumf": "max({0}, {1})", "minimumf": "min({0}, {1})",
    }
    if name in binary:
        return binary[name].format(*xs)
    unary = {"index_cast": "int({0})", "sitofp": "float({0})", "fptosi": "int({0})", "extf": "{0}",
             "truncf": "rt.round_float({0})", "negf": "-{0}", "extsi": "{0}", "trunci": "int({0})"}
    if name in unary:
        return unary[name].format(*xs)
    if name in ("extui", "uitofp") and op.operands[0].type == IntegerType(1):  # a Bool as 0 or 1
        return f"int({xs[0]})" if name == "extui" else f"float({xs[0]})"
    if name == "select":
        return f"({xs[1]} if {xs[0]} else {xs[2]})"
    raise CodegenError(f"the host program cannot compute {op.name}")


def _launcher(gen: GeneratedKernel, launch: str, n_in: int, n_out: int,
              strides: dict[str, tuple[int, ...]] | None = None) -> str:
    """The launcher of one kernel: block sizes, the persistent/looped variant that the
    kernel's schedule names (or that its `fits` argument picks) and the launch.

    Its parameters are the kernel's buffers, then one per dynamic domain extent (`D{d}`:
    the kernel's extents), one per host size that the kernel reads (`X{k}`: an
    `alloc.extents` entry) and one per dynamic input extent (`n{i}_{j}`), computed by the
    host program: the launcher reads no extent from a tensor and computes none. `strides`:
    the strides of the tensors (`in0`, `out1`, ...) that the host program passes as the
    root of a view it did not make (`_HostEmitter.view`), written as literals."""
    strides = strides or {}
    plan = gen.plan
    dynamic = [d for d, src in enumerate(plan.extents) if src.value is not None]
    in_dims = _dynamic_input_dims(plan.kernel)
    params = [f"in{i}" for i in range(n_in)] + [f"out{k}" for k in range(n_out)]
    params += [f"D{d}" for d in dynamic] + [a.name for a in gen.args if a.kind == "host_size"]
    params += [f"n{i}_{j}" for i, j in in_dims]
    schedule = plan.kernel.schedule_name if plan.reductions or plan.columns else None
    if schedule == "persistent_if":
        params.append("fits")
    params.append("huge")
    lines = [f"def {launch}({', '.join(generated(p) for p in params)}):"]
    ext = lambda d: str(plan.extents[d].static) if plan.extents[d].static is not None else f"D{d}"
    lines.append(f"    M = {' * '.join(ext(d) for d in plan.outer) or '1'}")
    lines.append(f"    N = {' * '.join(ext(d) for d in plan.inner) or '1'}")
    # 64-bit indices where a linear index of the domain, or one that masked lanes reach past
    # its end, may not fit in an int32: a tile reaches at most its width past it, a split
    # reduction's chunks at most splits x BLOCK_N (1056 x 4096 < 2**23 at the default split)
    lines.append("    use_i64 = huge or M * N >= 2**31 - 2**24")
    block_args = list(plan.kernel.body.block.args)

    def in_size(i: int, d: int) -> str:
        e = block_args[i].type.get_shape()[d]
        return f"n{i}_{d}" if e == DYNAMIC_INDEX else str(e)

    spelling = {
        "in": "in{i}", "scalar": "in{i}", "in_stride": "in{i}_s[{d}]",
        "out": "out{i}", "out_stride": "out{i}_s[{d}]", "extent": "D{i}", "host_size": "{name}",
    }
    strided = dict.fromkeys(  # in0, out1, ...: each tensor whose strides the kernel takes
        f"{a.kind.split('_')[0]}{a.index}" for a in gen.args if a.kind in ("in_stride", "out_stride")
        and f"{a.kind.split('_')[0]}{a.index}" not in strides
    )
    if strided:  # one `stride()` per tensor (half the cost of one `stride(d)` per dim)
        lines.append(f"    {', '.join(f'{t}_s' for t in strided)} = {', '.join(f'{t}.stride()' for t in strided)}")
    spelled = {
        a.name: in_size(a.index, a.dim) if a.kind == "in_size"
        else f"({a.expr})" if a.kind == "derived"
        else str(strides[f"{a.kind.split('_')[0]}{a.index}"][a.dim])
        if a.kind in ("in_stride", "out_stride") and f"{a.kind.split('_')[0]}{a.index}" in strides
        else spelling.get(a.kind, a.kind).format(i=a.index, d=a.dim, name=a.name)
        for a in gen.args
    }
    lines.append("    args = " + _tuple(list(spelled.values())))
    if gen.row_major:  # the kernel addresses some operand runs from a linear index (`Emitter.offset`)
        lines.append(f"    row_major = {_row_major_condition(gen, strides)}")
    if "two_tiles" in gen.functions:  # BLOCK_T of every variant; `choose_row_kernel` may set it
        lines.append("    tail = 0")
    if gen.divisors:  # indices divided by run-time extents (`emitter.magic_division`)
        lines.append(f"    fast_div = not use_i64 and rt.divides_fast({', '.join(gen.divisors)})")
    if gen.aligned:  # ints whose divisibility decides vector loads (`Emitter.aligned`)
        lines.append(f"    align = rt.alignment_hint({', '.join(spelled[name] for name in gen.aligned)})")
    args = "args"  # the launches below pass the one tuple
    lines += launch_lines(gen, args, in_size)  # by the kernel's kind (`kernel_kinds.KINDS`)
    return "\n".join(lines)


def _row_major_condition(gen: GeneratedKernel, strides: dict[str, tuple[int, ...]]) -> str:
    """The launcher's condition for a kernel's ROW_MAJOR (`Emitter.offset`): every merged run
    of operand dims j..k is row-major, each stride its inner neighbour's times that
    neighbour's extent (the extent of the domain dim that indexes it). Strides the launcher
    writes as literals (`strides`) with static extents are compared here: such a comparison
    that holds drops out, and one that fails makes the condition False."""
    plan = gen.plan
    parts: list[str] = []
    for run in gen.row_major:
        known = strides.get(run.tensor)
        for t in range(len(run.dims) - 1):
            j, inner, d = run.dims[t], run.dims[t + 1], run.domain[t + 1]
            extent = plan.extents[d].static
            if known is not None and extent is not None:
                if known[j] != extent * known[inner]:
                    return "False"
                continue
            outer_s = str(known[j]) if known is not None else f"{run.tensor}_s[{j}]"
            inner_s = str(known[inner]) if known is not None else f"{run.tensor}_s[{inner}]"
            parts.append(f"{outer_s} == {extent if extent is not None else f'D{d}'} * {inner_s}")
    return " and ".join(dict.fromkeys(parts)) or "True"


def _argument_layout(gen: GeneratedKernel, from_params: list[tuple[int, int]]) -> str:
    """`((functions...), tensors, loose, count, params)`, an entry of the module's
    `kernel_layouts()`: which of the kernel's arguments are tensors and which scalars may
    hold a non-int (float and bool scalars), for every variant of the kernel (they share
    one argument list); every other argument is an int (strides, sizes, extents, integer
    scalars); `params`: (argument, index of the program's parameter) for each scalar
    argument that is a parameter of `run` passed as it is. The direct GPU launch
    (`launch.launch_kernel`) builds its cache key and alignment check from it, and a
    recording (`backend/replay.py`) finds the parameters that a replay passes through."""
    block_args = gen.plan.kernel.body.block.args
    tensors = [k for k, a in enumerate(gen.args) if a.kind in ("in", "out")]
    loose = [
        k for k, a in enumerate(gen.args) if a.kind == "scalar"
        and not isinstance(block_args[a.index].type, IndexType)
        and not (isinstance(block_args[a.index].type, IntegerType) and block_args[a.index].type.width.data > 1)
    ]
    functions = _tuple(list(gen.functions.values()))
    params = _tuple([f"({k}, {i})" for k, i in from_params])
    return (f"({functions}, {_tuple([str(k) for k in tensors])}, {_tuple([str(k) for k in loose])}, "
            f"{len(gen.args)}, {params})")


def _kernel_comment(gen: GeneratedKernel) -> str:
    """`# alloc.kernel 'k0' pointwise: 2 fusion.add, ...`: which ops a kernel came from."""
    counts = Counter(o.name for o in gen.plan.kernel.body.block.ops if not isinstance(o, alloc.YieldOp | alloc.ExtentsOp))
    ops = ", ".join(f"{n} {name}" for name, n in counts.items())
    return f"# alloc.kernel {comment(gen.plan.name)} {comment(gen.plan.kind)}: {comment(ops)}"


def _layouts_function(layouts: list[str]) -> str:
    return "\n".join([
        f"def {generated('kernel_layouts')}():",
        "    'Per kernel: (its functions, positions of tensor arguments, of float/bool scalars, argument count, "
        "(argument, parameter of run) of scalars passed as they are).'",
        "    return " + _tuple(layouts),
    ])


def _replay_scalars_function(passed: list[tuple[int, str, int]]) -> str:
    return "\n".join([
        f"def {generated('replay_scalars')}():",
        "    'Scalar parameters of run that only feed kernels, as (index, kind, bits): a replay passes them through.'",
        "    return " + _tuple([f"({i}, {kind!r}, {bits})" for i, kind, bits in passed]),
    ])


def replayable_line(target: str, host_work: list[str]) -> str:
    """`REPLAYABLE = ...`: whether every call of `run` is a function of its inputs' signature
    that only checks, allocates, views and launches (`backend/replay.py` may then replay
    it); a CUDA program only, and the first reason why not as a comment."""
    if target != "cuda":
        return "REPLAYABLE = False  # " + comment(f"{target} programs launch through Triton's interpreter")
    if host_work:
        return "REPLAYABLE = False  # " + comment(host_work[0])
    return "REPLAYABLE = True  # calls depend on the input signature only: replayed by backend/replay.py"


def poison_enabled() -> bool:
    """ALLOT_POISON=1: generated programs fill every buffer they free with NaN (integers
    with a sentinel) before dropping it, so a plan that reads freed memory shows."""
    return os.environ.get("ALLOT_POISON", "0") not in ("", "0")


def emit_program(
    f: func.FuncOp, target: str, poison: bool | None = None,
    make_emitter: Callable[[func.FuncOp, str, bool], _HostEmitter] | None = None,
) -> HostProgram:
    """The whole generated module for an allocated function. No IR text in it can run:
    identifiers come from `identifiers.Namespace`, strings through `identifiers.literal`.
    `poison` (default: `poison_enabled()`) fills freed buffers before they are dropped.
    `make_emitter` (the distributed backend's hook: `distributed_codegen`) builds the emitter."""
    h = (make_emitter or _HostEmitter)(f, target, poison_enabled() if poison is None else poison)
    run = h.emit()
    parts = [
        literal(f"Generated by Allotment from @{f.sym_name.data} for {target}. Do not edit."),
        "import torch",
        module_prelude(target, os.environ.get("ALLOT_TANH", "exp"),
                       set().union(*(k.helpers for k in h.kernels), *(t.helpers for t in h.tiled))),
        "from allotment.backend import host_runtime as rt",
        "",
    ]
    parts += [_kernel_comment(k) + "\n" + k.source for k in h.kernels]
    parts += [t.comment + "\n" + t.source for t in h.tiled]
    parts += [""] + h.launchers + ["", run, ""]
    if h.layouts:  # read by `launch.bind_kernels` when the module is loaded
        parts[-1:] = [_layouts_function(h.layouts), ""]
    args = list(f.body.block.args)
    written = sorted(args.index(a) for a in h._written_arguments())
    if written:  # read by `replay.replayer_for`: in-place outputs
        parts[-1:] = ["WRITTEN_ARGUMENTS = " + _tuple([str(i) for i in written])
                      + "  # parameters of run that a kernel writes (in-place outputs)", ""]
    donated = donated_arguments(f)
    if donated:  # read by `replay.replayer_for`: a boxed replay drops them after their last use
        parts[-1:] = ["DONATED_ARGUMENTS = " + _tuple([str(i) for i in donated])
                      + "  # parameters of run_boxed that it frees (alloc.donated)", ""]
    passed = h.passed_scalars()
    if passed:  # read by `replay.replayer_for`
        parts[-1:] = [_replay_scalars_function(passed), ""]
    parts[-1:] = [replayable_line(target, h.host_work), ""]
    return HostProgram("\n\n".join(parts), h.kernels, f.sym_name.data)
