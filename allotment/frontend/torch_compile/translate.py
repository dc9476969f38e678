"""One AOTAutograd graph (functionalized ATen, fake-tensor meta on every node) -> one
`func.func` in the fusion dialect, built through `FusionDefinition`.

`translate(gm, kind)` walks the graph once, in order:

- placeholders become arguments: a tensor of a fusion element type with `?` for each
  symbolic extent; a tensor of another dtype (uint64 RNG state, uint8 masks) that only
  ATen calls touch rides in a *carrier* of the same width (i64, i32, i1: `CARRIERS`),
  viewed back before each call; a SymInt an `i64` scalar;
- symbolic sizes (`torch.SymInt`) become `index` values: a symbol is the extent of the
  first argument that has it (or a SymInt argument), and `+`, `*`, floor division of
  them are built as scalar arithmetic in the IR (`Translator.extent`);
- a node whose ATen op is in `aten_table.TABLE` is built from fusion ops; the result is
  cast to the node's dtype where fusion typing (f32 arithmetic for 16-bit floats) gives
  another, so each op rounds where torch's does;
- any other node, and a node whose translation is refused, becomes one `fusion.aten` call
  (an `aten` kernel): its result shapes and dtypes come from the node's fake tensors,
  `?` extents from the same `index` values; where ATen has an `out=` overload the call
  writes the planned buffers;
- outputs: tensors are results of the function; SymInts and ints are evaluated on the
  host by the caller (`GraphProgram.symbol_inputs`); None stays None.

A graph whose inputs or outputs cannot be typed at all raises `Untranslatable`, naming the
node and why; the backend then runs that graph eagerly.
"""

from __future__ import annotations

import json
import math
import numbers
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch.fx

from allotment.errors import Error
from allotment.extents.dims import dense_in_order
from allotment.frontend.datatypes import DataType, from_torch
from allotment.frontend.fusion_definition import FusionDefinition
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.torch_compile import aten_table
from allotment.frontend.torch_compile.building import Refused

CARRIERS: dict[torch.dtype, torch.dtype] = {
    torch.uint64: torch.int64,
    torch.uint32: torch.int32,
    torch.uint8: torch.bool,
    torch.int8: torch.bool,
}
"""Dtypes the fusion dialect has no element type for, by the dtype of the same width that
carries them through the function (only ATen calls and the caller see their values)."""

LIBRARY_OPS = ("mm", "bmm", "addmm", "matmul", "baddbmm", "convolution", "convolution_backward",
               "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward",
               "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention_for_cpu_backward",
               "_scaled_dot_product_efficient_attention", "_scaled_dot_product_efficient_attention_backward",
               "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_cudnn_attention_backward",
               "_grouped_mm", "_scaled_mm")
"""ATen ops (packet names) that are library work by nature: matmuls, convolutions,
attention. The census counts them apart from the rest."""


class Untranslatable(Exception):
    """A graph that cannot become a fusion function (the backend runs it eagerly)."""


@dataclass(frozen=True)
class Carried:
    """An opaque tensor: only ATen calls and the caller see its values. Its dtype has no
    fusion element type (it is held in a carrier, `CARRIERS`), or its fake tensor is on
    the meta device in a graph that is not (the RNG state attention returns, whose real
    device and shape the fake does not know). Its argument is not checked at entry
    (`alloc.unchecked`)."""

    tensor: Tensor
    dtype: torch.dtype


def opaque(t: torch.Tensor, device: torch.device | None) -> bool:
    """Whether a node's fake tensor is opaque in a graph on `device` (`Carried`): a carrier
    dtype, or another device (the meta RNG state of attention, a CPU scalar tensor in a
    CUDA graph)."""
    return t.dtype in CARRIERS or (device is not None and t.device != device)


def memory_order(t: torch.Tensor) -> list[int] | None:
    """A library call's result's or a placeholder's memory order from its fake tensor
    (`fusion.aten`'s `orders`, an argument's `fusion.stride_order`): its dims outermost
    first, where its static strides are a dense permutation of row-major other than
    row-major itself (attention's output in [batch, seq, heads,
    dim] order); None where it is row-major, not dense, or its strides are symbolic."""
    shape, strides = list(t.shape), list(t.stride())
    if not all(type(x) is int for x in (*shape, *strides)) or t.numel() == 0:
        return None
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    if not dense_in_order(shape, strides, order) or t.is_contiguous():  # not dense (a slice), or row-major
        return None
    return order


def graph_device(gm: torch.fx.GraphModule) -> torch.device | None:
    """Where the graph computes: the first CUDA device among its tensors, else the first
    device that is not meta."""
    devices = [n.meta["val"].device for n in gm.graph.nodes if isinstance(n.meta.get("val"), torch.Tensor)]
    real = [d for d in devices if d.type != "meta"]
    return next((d for d in real if d.type == "cuda"), real[0] if real else None)


@dataclass
class Census:
    """What became of each node of one graph."""

    graph: str
    nodes: int = 0
    """call_function nodes (getitem and symbolic-size nodes not counted)."""
    fused: Counter = field(default_factory=Counter)
    """ATen ops translated into fusion ops (generated kernels, views, library matmuls)."""
    aten: Counter = field(default_factory=Counter)
    """ATen ops run as `aten` kernels (ATen calls inside the function)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Why an op was left to ATen (the first reason seen per op)."""
    eager: str | None = None
    """Set when the whole graph ran eagerly: why."""
    fused_nodes: list[str] = field(default_factory=list)
    """The FX nodes translated into fusion ops, by name."""
    aten_nodes: list[tuple[str, str, str]] = field(default_factory=list)
    """The FX nodes run as ATen calls: (node, op, reason)."""

    def library_nodes(self) -> int:
        return sum(n for op, n in (self.fused + self.aten).items() if _packet(op) in LIBRARY_OPS)

    def fused_share(self) -> float:
        """Nodes fused, of those that are not matmul, convolution or attention."""
        other_fused = sum(n for op, n in self.fused.items() if _packet(op) not in LIBRARY_OPS)
        other_aten = sum(n for op, n in self.aten.items() if _packet(op) not in LIBRARY_OPS)
        total = other_fused + other_aten
        return other_fused / total if total else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {"graph": self.graph, "nodes": self.nodes, "fused": dict(self.fused), "aten": dict(self.aten),
                "library_nodes": self.library_nodes(), "fused_share": self.fused_share(),
                "reasons": self.reasons, "eager": self.eager, "fused_nodes": self.fused_nodes,
                "aten_nodes": [{"node": n, "op": op, "reason": why} for n, op, why in self.aten_nodes]}


def _packet(op: str) -> str:
    parts = op.split(".")
    return parts[1] if len(parts) >= 2 else op


def op_name(target: Any) -> str:
    """`aten.add.Tensor` for an OpOverload, else the target's name."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._opname}.{target._overloadname}"
    return getattr(target, "__name__", str(target))


@dataclass
class GraphProgram:
    """A translated graph: the fusion definition and how to call it."""

    fd: FusionDefinition
    arguments: list[tuple]
    """Per function argument, where its value comes from: ("input", i) a placeholder's
    tensor, ("view", i, dtype) a placeholder viewed as its carrier dtype, ("int", i) a
    SymInt placeholder, ("expr", sympy expr) an extent the caller computes."""
    outputs: list[tuple]
    """Per graph output: ("result", k, dtype or None) the k-th function result (viewed
    back from its carrier), ("input", i) a placeholder itself, ("expr", e), ("const", v)."""
    symbols: dict[sympy.Symbol, tuple]
    """Where each free symbol's value is found: ("size", i, d) or ("int", i)."""
    census: Census
    unchecked: list[int] = field(default_factory=list)
    """Function arguments not checked at entry (opaque tensors: `Carried`)."""
    orders: dict[int, list[int]] = field(default_factory=dict)
    """Function arguments whose example lies densely in another order than row-major (a saved
    attention output in [batch, seq, heads, dim] order): that order, dims outermost first
    (`memory_order`), given to the function as the argument's `fusion.stride_order`."""


class Translator:
    """Builds the fusion definition of one graph (module docstring)."""

    def __init__(self, gm: torch.fx.GraphModule, kind: str) -> None:
        self.gm = gm
        self.fd = FusionDefinition()
        self.env: dict[torch.fx.Node, Any] = {}
        self.arguments: list[tuple] = []
        self.symbols: dict[sympy.Symbol, tuple] = {}
        self.symbol_values: dict[sympy.Symbol, Any] = {}  # symbol -> index Scalar in the IR
        self.extents: dict[sympy.Expr, Any] = {}
        self.census = Census(kind)
        self.placeholders: list[torch.fx.Node] = []
        self.device = graph_device(gm)
        self.unchecked: list[int] = []
        """Function arguments that are opaque (`Carried`): not checked at entry."""
        self.orders: dict[int, list[int]] = {}
        """Function arguments passed in another memory order (`GraphProgram.orders`)."""

    # -- values ------------------------------------------------------------

    def extent(self, x: Any) -> int | Scalar:
        """A size (int or SymInt) as an int or an `index` Scalar of the IR."""
        if isinstance(x, bool):
            raise Refused("a bool where a size is expected")
        if isinstance(x, int):
            return x
        if isinstance(x, torch.SymInt):
            return self._expr(sympy.sympify(x.node.expr))
        if isinstance(x, Scalar):
            return x
        raise Refused(f"a size of type {type(x).__name__}")

    def _expr(self, e: sympy.Expr) -> int | Scalar:
        if e.is_Integer:
            return int(e)
        found = self.extents.get(e)
        if found is not None:
            return found
        ops = self.fd.ops
        if isinstance(e, sympy.Symbol):
            if e not in self.symbol_values:
                raise Refused(f"the size {e} has no source among the inputs")
            value = self.symbol_values[e]
        elif isinstance(e, sympy.Add):
            terms = [self._expr(a) for a in e.args]
            value = terms[0]
            for t in terms[1:]:
                value = ops.add(value, t)
        elif isinstance(e, sympy.Mul):
            terms = [self._expr(a) for a in e.args]
            value = terms[0]
            for t in terms[1:]:
                value = ops.mul(value, t)
        elif type(e).__name__ == "FloorDiv" and len(e.args) == 2:
            a, b = (self._expr(x) for x in e.args)
            value = ops.div(a, b)  # sizes are non-negative: truncation is the floor
        else:  # anything else: the caller computes it from the symbols' values
            value = self.fd.define_scalar(dtype=DataType.Int)
            self.arguments.append(("expr", e))
        self.extents[e] = value
        return value

    def shape(self, t: torch.Tensor) -> list[int | Scalar]:
        return [self.extent(s) for s in t.shape]

    def tensor(self, x: Any, what: str = "operand") -> Tensor:
        """A translated tensor operand (a carried one is refused: its dtype has no fusion type)."""
        if isinstance(x, Carried):
            raise Refused(f"{what} is {x.dtype}, which the fusion dialect has no type for")
        if not isinstance(x, Tensor):
            raise Refused(f"{what} is not a tensor ({type(x).__name__})")
        return x

    # -- the graph ---------------------------------------------------------

    def run(self) -> GraphProgram:
        outputs: list[tuple] = []
        with self.fd:
            for node in self.gm.graph.nodes:
                if node.op == "placeholder":
                    self.placeholder(node)
                elif node.op == "call_function":
                    self.call(node, aten_table)
                elif node.op == "output":
                    outputs = self.output(node)
                elif node.op == "get_attr":
                    raise Untranslatable(f"node {node.name}: get_attr of {node.target} (a constant of the graph)")
                else:
                    raise Untranslatable(f"node {node.name}: {node.op} nodes are not translated")
        return GraphProgram(self.fd, self.arguments, outputs, self.symbols, self.census, self.unchecked, self.orders)

    def placeholder(self, node: torch.fx.Node) -> None:
        i = len(self.placeholders)
        self.placeholders.append(node)
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            dtype = CARRIERS.get(val.dtype, val.dtype)
            if dtype.is_complex:  # compile() runs no complex IR (FusionDefinition.execute splits it)
                raise Untranslatable(f"input {node.name} is {val.dtype}: complex graphs run eagerly")
            try:
                dt = from_torch(dtype)
            except Error:
                raise Untranslatable(f"input {node.name} is {val.dtype}, which no fusion type holds") from None
            shape = [s if isinstance(s, int) else -1 for s in val.shape]
            t = self.fd.define_tensor(shape=shape, contiguity=True, dtype=dt)
            self.arguments.append(("input", i) if dtype == val.dtype else ("view", i, dtype))
            if opaque(val, self.device):
                self.unchecked.append(len(self.arguments) - 1)
                self.env[node] = Carried(t, val.dtype)
            else:
                self.env[node] = t
                order = memory_order(val)
                if order is not None:
                    self.orders[len(self.arguments) - 1] = order
            for d, s in enumerate(val.shape):
                if isinstance(s, torch.SymInt) and not isinstance(self.env[node], Carried):
                    e = sympy.sympify(s.node.expr)
                    if isinstance(e, sympy.Symbol) and e not in self.symbol_values:
                        self.symbol_values[e] = self.fd.ops.size(t, d)
                        self.symbols[e] = ("size", i, d)
        elif isinstance(val, torch.SymInt):
            e = sympy.sympify(val.node.expr)
            s = self.fd.define_scalar(dtype=DataType.Int)
            self.arguments.append(("int", i))
            self.env[node] = val
            if isinstance(e, sympy.Symbol):
                self.symbol_values.setdefault(e, s)
                self.symbols.setdefault(e, ("int", i))
        elif isinstance(val, int | float | bool) or val is None:
            self.env[node] = val  # a constant the graph was specialized on
            self.arguments.append(("skip", i))
        else:
            raise Untranslatable(f"input {node.name} is a {type(val).__name__}")

    def call(self, node: torch.fx.Node, aten_table: Any) -> None:
        import operator

        val = node.meta.get("val")
        if node.target is operator.getitem:
            src, index = node.args
            self.env[node] = self.env[src][index]
            return
        if isinstance(val, torch.SymInt | int | float | bool) and not isinstance(val, torch.Tensor):
            self.env[node] = val  # symbolic-size arithmetic: known from its expression
            return
        name = op_name(node.target)
        if isinstance(node.target, torch._ops.OpOverload) and node.target._schema.is_mutable:
            raise Untranslatable(f"node {node.name}: {name} mutates its arguments (graphs must be functionalized)")
        self.census.nodes += 1
        entry = aten_table.TABLE.get(name)
        if entry is not None:
            args = [self._arg(a) for a in node.args]
            kwargs = {k: self._arg(v) for k, v in node.kwargs.items()}
            try:
                result = entry.build(self, node, *args, **kwargs)
                self.env[node] = self.fit(result, val)
                self.census.fused[name] += 1
                self.census.fused_nodes.append(node.name)
                return
            except (Refused, Error, TypeError, ValueError) as e:
                reason = f"{type(e).__name__}: {e}"
        else:
            reason = "no fusion translation"
        self.census.reasons.setdefault(name, reason)
        self.env[node] = self.aten_call(node, name, val)
        self.census.aten[name] += 1
        self.census.aten_nodes.append((node.name, name, reason))

    def _arg(self, a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, list | tuple):
            return type(a)(self._arg(x) for x in a)
        return a

    def fit(self, result: Any, val: Any) -> Any:
        """A translation's result with the node's dtype (a cast where fusion typing differs)."""
        if isinstance(val, torch.Tensor):
            t = self.tensor(result, "the translation's result")
            if t.ndim != val.dim():
                raise Refused(f"the translation gives rank {t.ndim}, the node has rank {val.dim()}")
            want = from_torch(val.dtype)
            if t.dtype() != want:
                t = self.fd.ops.cast(t, want)
            return t
        if isinstance(val, list | tuple):
            return [self.fit(r, v) for r, v in zip(result, val)]
        return result

    def output(self, node: torch.fx.Node) -> list[tuple]:
        (values,) = node.args
        outputs: list[tuple] = []
        results = 0
        for v in values if isinstance(values, list | tuple) else [values]:
            if v is None:
                outputs.append(("const", None))
                continue
            if not isinstance(v, torch.fx.Node):
                outputs.append(("const", v))
                continue
            if v.op == "placeholder" and isinstance(v.meta.get("val"), torch.Tensor):
                outputs.append(("input", self.placeholders.index(v)))
                continue
            x = self.env[v]
            if isinstance(x, torch.SymInt):
                outputs.append(("expr", sympy.sympify(x.node.expr)))
            elif isinstance(x, int | float | bool):
                outputs.append(("const", x))
            elif isinstance(x, Carried):
                self.fd.add_output(x.tensor)
                outputs.append(("result", results, x.dtype if x.dtype in CARRIERS else None))
                results += 1
            elif isinstance(x, Tensor):
                if x.value in self.fd._block.args:  # an input under another name (clone, alias): a copy
                    x = self.fd.ops.set(x)
                self.fd.add_output(x)
                outputs.append(("result", results, None))
                results += 1
            else:
                raise Untranslatable(f"output {v.name} is a {type(x).__name__}")
        return outputs

    # -- ATen calls --------------------------------------------------------

    def aten_call(self, node: torch.fx.Node, name: str, val: Any) -> Any:
        """The node as one `fusion.aten` call (module docstring)."""
        if not isinstance(node.target, torch._ops.OpOverload):
            raise Untranslatable(f"node {node.name}: {name} is not an ATen operator")
        inputs: list[Any] = []
        scalars: list[Any] = []

        def encode(a: Any) -> Any:
            if isinstance(a, torch.fx.Node):
                return encode(self.env[a])
            if isinstance(a, list | tuple):
                return [encode(x) for x in a]
            if isinstance(a, Carried):
                inputs.append(a.tensor)
                if a.dtype not in CARRIERS:
                    return {"t": len(inputs) - 1}
                return {"t": len(inputs) - 1, "view": str(a.dtype).removeprefix("torch.")}
            if isinstance(a, Tensor):
                inputs.append(a)
                return {"t": len(inputs) - 1}
            if isinstance(a, torch.SymInt):
                e = self.extent(a)
                if isinstance(e, int):
                    return e
                scalars.append(e)
                return {"s": len(scalars) - 1}
            if isinstance(a, Scalar):
                scalars.append(a)
                return {"s": len(scalars) - 1}
            if isinstance(a, bool) or a is None or isinstance(a, int | str):
                return a
            if isinstance(a, float):
                return a if math.isfinite(a) else {"float": str(a)}
            if isinstance(a, torch.dtype):
                return {"dtype": str(a).removeprefix("torch.")}
            if isinstance(a, torch.device):
                return {"device": None}
            if isinstance(a, torch.layout):
                return {"layout": str(a).removeprefix("torch.")}
            if isinstance(a, torch.memory_format):
                return {"memory_format": str(a).removeprefix("torch.")}
            if isinstance(a, numbers.Number):
                raise Untranslatable(f"node {node.name}: an argument of type {type(a).__name__}")
            raise Untranslatable(f"node {node.name}: an argument of type {type(a).__name__}")

        try:
            args = encode(list(node.args))
            kwargs = {k: encode(v) for k, v in node.kwargs.items()}
            results, positions, types = self._call_results(node, val)
        except Refused as e:
            raise Untranslatable(f"node {node.name} ({name}): {e}") from None
        call = {"args": args, "kwargs": kwargs, "results": positions}
        views = [str(t.dtype).removeprefix("torch.") if t.dtype in CARRIERS else None for t in results]
        if any(views):
            call["views"] = views
        sizes = [self.extent(s) for t in results for s in t.shape if not isinstance(s, int)]
        hidden = [opaque(t, self.device) for t in results]
        out = None if any(hidden) else out_variant(node.target, len(results), positions)
        if out is None:
            orders = [memory_order(t) for t in results]
            if any(o is not None for o in orders):
                call["orders"] = orders
        handles = self.fd.ops.aten(name, json.dumps(call), inputs, scalars, sizes, types, out)
        wrapped = [Carried(h, t.dtype) if o else h for h, t, o in zip(handles, results, hidden)]
        if positions is None:
            return wrapped[0]
        # the node's value: a tuple with None (or a constant) where no tensor came back
        full: list[Any] = []
        it = iter(wrapped)
        for i, v in enumerate(val):
            full.append(next(it) if i in positions else v)
        return full

    def _call_results(self, node: torch.fx.Node, val: Any) -> tuple[list[torch.Tensor], list[int] | None, list]:
        def typed(t: torch.Tensor) -> tuple[list[int], DataType]:
            dtype = CARRIERS.get(t.dtype, t.dtype)
            try:
                dt = from_torch(dtype)
            except Error:
                raise Refused(f"a result is {t.dtype}") from None
            return [s if isinstance(s, int) else -1 for s in t.shape], dt

        if isinstance(val, torch.Tensor):
            return [val], None, [typed(val)]
        if isinstance(val, list | tuple):
            positions = [i for i, v in enumerate(val) if isinstance(v, torch.Tensor)]
            if not all(isinstance(v, torch.Tensor | torch.SymInt | int | float | bool) or v is None for v in val):
                raise Refused("a result that is neither a tensor nor a number")
            results = [val[i] for i in positions]
            return results, positions, [typed(t) for t in results]
        raise Refused(f"the node's value is a {type(val).__name__}")


def out_variant(target: torch._ops.OpOverload, n_results: int, positions: list[int] | None) -> tuple[str, list[str]] | None:
    """The overload of `target`'s op that writes its results into `out=` arguments: its name
    and the out arguments' names, when it takes the same arguments plus one out per result."""
    if positions is not None and positions != list(range(n_results)):
        return None  # some results are None or numbers: the out overload would want them all
    schema = target._schema
    if schema.is_mutable:
        return None
    names = [a.name for a in schema.arguments]
    packet = getattr(torch.ops, target.namespace)
    packet = getattr(packet, target._opname)
    for overload in packet.overloads():
        if overload == target._overloadname:
            continue
        s = getattr(packet, overload)._schema
        outs = [a for a in s.arguments if a.is_out]
        ins = [a.name for a in s.arguments if not a.is_out]
        if ins == names and len(outs) == n_results and len(s.returns) == n_results:
            return overload, [a.name for a in outs]
    return None
