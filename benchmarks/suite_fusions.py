"""The fusions of the broad GPU benchmark suite (`benchmarks/fusion_suite.py`).

Each `SuiteFusion` is written once:

- `build(b)`: the fusion, written through a small `Builder` that emits fusion-dialect
  text. The builder is parametrized by the element type (bf16, f16, f32: 16-bit inputs
  are computed in f32 and rounded once at the end, as torch does) and by whether the
  extents are static (`tensor<16384x4096xbf16>`: one program per size) or symbolic
  (`tensor<?x?xbf16>`: every extent `?`, explicit extents taken with `tensor.dim` of the
  arguments, so one program serves every size);
- `torch_fn`: the same math in torch, what a user writes (eager, and torch.compile);
- `inputs(sizes, dtype, device, generator)`: the arguments;
- `sizes`: the extents of each named size (`tiny` for the CPU tests, `small`, `large`,
  `odd`: non-power-of-two, mostly odd extents);
- `source`: where the pattern comes from (a model, an nvFuser benchmark of
  NVIDIA/Fuser's `benchmarks/python/`, an Inductor / TorchBench pattern);
- `memory_bound`: whether the copy bandwidth is the fusion's ceiling.

Only ops of `docs/ops.md` are used. Extents are named by symbols (`M`, `N`, ...);
`Builder.derive` adds an extent computed from others with an `arith` op on `index`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
"""The suite's element types: the IR spelling and the torch dtype."""

Shape = tuple[str | int, ...]
"""A value's shape: extent symbols, or the literal 1 (a static size-1 dimension, e.g. keepdim)."""


@dataclass(frozen=True)
class Value:
    """An SSA value of the fusion being written: a tensor (a shape) or a scalar (`shape` None)."""

    name: str
    dtype: str
    shape: Shape | None


class BuilderError(ValueError):
    """A fusion written wrongly in this file (a bug of the suite, not of Allotment)."""


_INDEX_OPS = {"divui": lambda a, b: a // b, "muli": lambda a, b: a * b, "addi": lambda a, b: a + b,
              "subi": lambda a, b: a - b}


class Builder:
    """Writes one fusion function as fusion-dialect text.

    `extents` gives each extent symbol its size; `dynamic` prints them `?` (explicit
    extents become `tensor.dim` of the first argument that has the symbol, or the `arith`
    op of a derived symbol), otherwise as numbers."""

    def __init__(self, name: str, dtype: str, extents: dict[str, int], dynamic: bool) -> None:
        if dtype not in DTYPES:
            raise BuilderError(f"unknown dtype {dtype!r}")
        self.name = name
        self.dtype = dtype
        self.extents = dict(extents)
        self.dynamic = dynamic
        self._args: list[Value] = []
        self._body: list[str] = []
        self._results: list[Value] = []
        self._counter = 0
        self._ssa: dict[str, str] = {}
        """Extent symbol -> the SSA value holding it (dynamic mode)."""
        self._where: dict[str, tuple[Value, int]] = {}
        """Extent symbol -> (argument, axis) it is read from."""
        self._derived: dict[str, tuple[str, str, str | int]] = {}
        self._consts: dict[tuple[str, str], str] = {}

    # -- names, types ------------------------------------------------------- #

    def _fresh(self, hint: str) -> str:
        self._counter += 1
        return f"%{hint}{self._counter}"

    def extent(self, sym: str | int) -> int:
        """The size of an extent symbol (or a literal)."""
        if isinstance(sym, int):
            return sym
        if sym not in self.extents:
            raise BuilderError(f"{self.name}: extent {sym!r} has no size (sizes: {sorted(self.extents)})")
        return self.extents[sym]

    def _dim_text(self, sym: str | int) -> str:
        if isinstance(sym, int):
            return str(sym)
        return "?" if self.dynamic else str(self.extent(sym))

    def type_of(self, v: Value) -> str:
        if v.shape is None:
            return v.dtype
        return f"tensor<{''.join(self._dim_text(s) + 'x' for s in v.shape)}{v.dtype}>"

    def _operand(self, sym: str | int) -> str:
        """An explicit extent operand (broadcast shapes, slice bounds, iota length)."""
        if isinstance(sym, int) or not self.dynamic:
            return str(self.extent(sym))
        ssa = self._ssa.get(sym)
        if ssa is not None:
            return ssa
        if sym in self._derived:
            op, a, k = self._derived[sym]
            lhs = self._operand(a)
            rhs = self.index_const(k) if isinstance(k, int) else self._operand(k)
            ssa = f"%{sym}"
            self._body.append(f"  {ssa} = arith.{op} {lhs}, {rhs} : index")
        elif sym in self._where:
            arg, axis = self._where[sym]
            ssa = f"%{sym}"
            self._body.append(f"  {ssa} = tensor.dim {arg.name}, {self.index_const(axis)} : {self.type_of(arg)}")
        else:
            raise BuilderError(f"{self.name}: extent {sym!r} is neither an argument's nor derived")
        self._ssa[sym] = ssa
        return ssa

    def index_const(self, k: int) -> str:
        return self._const(k, "index")

    def _const(self, value: float | int, typ: str) -> str:
        key = (repr(value), typ)
        name = self._consts.get(key)
        if name is None:
            name = self._fresh("c")
            if typ in ("index", "i64", "i32", "i1"):
                lit = str(int(value))
            else:
                lit = f"{float(value):.9e}"
            self._body.append(f"  {name} = arith.constant {lit} : {typ}")
            self._consts[key] = name
        return name

    # -- arguments, results, extents ---------------------------------------- #

    def arg(self, name: str, shape: str | Shape, dtype: str | None = None) -> Value:
        """A tensor argument; `shape` is a space-separated list of extent symbols (or a tuple)."""
        dims: Shape = tuple(int(s) if s == "1" else s for s in shape.split()) if isinstance(shape, str) else shape
        v = Value(f"%{name}", dtype or self.dtype, dims)
        self._args.append(v)
        for axis, sym in enumerate(dims):
            if isinstance(sym, str):
                self.extent(sym)
                self._where.setdefault(sym, (v, axis))
        return v

    def derive(self, sym: str, op: str, a: str, k: str | int) -> str:
        """A new extent `sym = arith.<op> a, k` (k a symbol or a constant)."""
        value = _INDEX_OPS[op](self.extent(a), self.extent(k))
        self.extents[sym] = value
        self._derived[sym] = (op, a, k)
        return sym

    def ret(self, *values: Value) -> None:
        self._results.extend(values)

    def text(self) -> str:
        args = ", ".join(f"{a.name}: {self.type_of(a)}" for a in self._args)
        res = ", ".join(self.type_of(r) for r in self._results)
        res_t = res if len(self._results) == 1 else f"({res})"
        ret = f"  func.return {', '.join(r.name for r in self._results)} : {res}"
        return "\n".join([f"func.func @{self.name}({args}) -> {res_t} {{", *self._body, ret, "}", ""])

    # -- ops ---------------------------------------------------------------- #

    def const(self, value: float, dtype: str = "f32") -> Value:
        return Value(self._const(value, dtype), dtype, None)

    def cast(self, v: Value, dtype: str) -> Value:
        if v.dtype == dtype:
            return v
        r = Value(self._fresh("t"), dtype, v.shape)
        self._body.append(f"  {r.name} = fusion.cast {v.name} : {self.type_of(v)} to {self.type_of(r)}")
        return r

    def up(self, v: Value) -> Value:
        """To f32 (the compute type), as torch's `.float()`."""
        return self.cast(v, "f32")

    def down(self, v: Value) -> Value:
        """To the fusion's element type."""
        return self.cast(v, self.dtype)

    def unary(self, op: str, v: Value) -> Value:
        r = Value(self._fresh("t"), v.dtype, v.shape)
        self._body.append(f"  {r.name} = fusion.{op} {v.name} : {self.type_of(v)}")
        return r

    def _broadcast_shape(self, op: str, shapes: Sequence[Shape]) -> Shape:
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise BuilderError(f"{self.name}: {op} of ranks {[len(s) for s in shapes]}")
        out: list[str | int] = []
        for dims in zip(*shapes):
            syms = {d for d in dims if d != 1}
            if len(syms) > 1:
                raise BuilderError(f"{self.name}: {op} of extents {sorted(map(str, syms))}")
            out.append(syms.pop() if syms else 1)
        return tuple(out)

    def _elementwise(self, op: str, operands: Sequence[Value], dtype: str | None = None) -> Value:
        tensors = [v for v in operands if v.shape is not None]
        if not tensors:
            raise BuilderError(f"{self.name}: {op} of scalars only")
        if dtype is None:
            kinds = {v.dtype for v in tensors}
            if len(kinds) > 1:
                raise BuilderError(f"{self.name}: {op} of {sorted(kinds)}: cast first")
            dtype = tensors[0].dtype
        shape = self._broadcast_shape(op, [v.shape for v in tensors if v.shape is not None])
        r = Value(self._fresh("t"), dtype, shape)
        names = ", ".join(v.name for v in operands)
        types = ", ".join(self.type_of(v) for v in operands)
        self._body.append(f"  {r.name} = fusion.{op} {names} : {types} -> {self.type_of(r)}")
        return r

    def add(self, a: Value, b: Value) -> Value:
        return self._elementwise("add", [a, b])

    def sub(self, a: Value, b: Value) -> Value:
        return self._elementwise("sub", [a, b])

    def mul(self, a: Value, b: Value) -> Value:
        return self._elementwise("mul", [a, b])

    def div(self, a: Value, b: Value) -> Value:
        return self._elementwise("div", [a, b])

    def compare(self, op: str, a: Value, b: Value) -> Value:
        return self._elementwise(op, [a, b], dtype="i1")

    def where(self, p: Value, a: Value, b: Value) -> Value:
        values = [v for v in (a, b) if v.shape is not None]
        return self._elementwise("where", [p, a, b], dtype=values[0].dtype if values else a.dtype)

    def reduce(self, op: str, v: Value, dims: Sequence[int], keepdim: bool = False, dtype: str | None = None) -> Value:
        """`fusion.<op>` (sum, mean, max, min) over `dims` (non-negative)."""
        assert v.shape is not None
        shape = tuple(1 if i in dims else s for i, s in enumerate(v.shape) if keepdim or i not in dims)
        r = Value(self._fresh("t"), dtype or v.dtype, shape)
        kd = " keepdim" if keepdim else ""
        self._body.append(f"  {r.name} = fusion.{op} {v.name} dims {list(dims)}{kd} : {self.type_of(v)} -> {self.type_of(r)}")
        return r

    def var_mean(self, v: Value, dims: Sequence[int], keepdim: bool = False) -> tuple[Value, Value]:
        """(population variance, mean) over `dims`."""
        assert v.shape is not None
        shape = tuple(1 if i in dims else s for i, s in enumerate(v.shape) if keepdim or i not in dims)
        var, mean = Value(self._fresh("var"), v.dtype, shape), Value(self._fresh("mean"), v.dtype, shape)
        kd = " keepdim" if keepdim else ""
        t = self.type_of(var)
        self._body.append(
            f"  {var.name}, {mean.name} = fusion.var_mean {v.name} dims {list(dims)} correction 0{kd} : "
            f"{self.type_of(v)} -> {t}, {t}"
        )
        return var, mean

    def broadcast(self, v: Value, shape: str | Shape, dims: Sequence[int]) -> Value:
        """`fusion.broadcast_in_dim`: `v`'s axes go to `dims` of `shape`."""
        out: Shape = tuple(int(s) if s == "1" else s for s in shape.split()) if isinstance(shape, str) else shape
        r = Value(self._fresh("t"), v.dtype, out)
        ext = ", ".join(self._operand(s) for s in out)
        self._body.append(
            f"  {r.name} = fusion.broadcast_in_dim {v.name} [{ext}] dims {list(dims)} : {self.type_of(v)} -> {self.type_of(r)}"
        )
        return r

    def permute(self, v: Value, perm: Sequence[int]) -> Value:
        assert v.shape is not None
        r = Value(self._fresh("t"), v.dtype, tuple(v.shape[p] for p in perm))
        self._body.append(f"  {r.name} = fusion.permute {v.name} {list(perm)} : {self.type_of(v)} -> {self.type_of(r)}")
        return r

    def slice(self, v: Value, starts: Sequence[str | int], ends: Sequence[str | int], shape: Shape) -> Value:
        """`v[starts:ends]` (step 1); `shape` names the result's extents."""
        r = Value(self._fresh("t"), v.dtype, shape)
        lo = ", ".join(self._operand(s) for s in starts)
        hi = ", ".join(self._operand(s) for s in ends)
        step = ", ".join("1" for _ in starts)
        self._body.append(
            f"  {r.name} = fusion.slice {v.name} [{lo}] to [{hi}] step [{step}] : {self.type_of(v)} -> {self.type_of(r)}"
        )
        return r

    def cat(self, values: Sequence[Value], dim: int, shape: Shape) -> Value:
        r = Value(self._fresh("t"), values[0].dtype, shape)
        names = ", ".join(v.name for v in values)
        types = ", ".join(self.type_of(v) for v in values)
        self._body.append(f"  {r.name} = fusion.cat {names} dim {dim} : {types} -> {self.type_of(r)}")
        return r

    def iota(self, sym: str, dtype: str = "i64") -> Value:
        """0, 1, ..., extent - 1."""
        r = Value(self._fresh("t"), dtype, (sym,))
        zero, one = self._const(0, "i64"), self._const(1, "i64")
        self._body.append(f"  {r.name} = fusion.iota [{self._operand(sym)}] start {zero} step {one} : i64, i64 -> {self.type_of(r)}")
        return r

    # -- composites --------------------------------------------------------- #

    def row(self, v: Value, shape: Shape) -> Value:
        """A vector over the last axis broadcast to `[1, ..., 1, N]` (a static-1 broadcast)."""
        assert v.shape is not None
        rank = len(shape)
        return self.broadcast(v, (*([1] * (rank - 1)), shape[-1]), [rank - 1])

    def sigmoid(self, v: Value) -> Value:
        return self.unary("sigmoid", v)


# --------------------------------------------------------------------------- #
# The suite                                                                   #
# --------------------------------------------------------------------------- #

Sizes = dict[str, int]
Inputs = Callable[[Sizes, torch.dtype, "torch.device | str", torch.Generator], list[torch.Tensor]]


@dataclass(frozen=True)
class SuiteFusion:
    """One fusion of the suite: the fusion text, its torch twin, inputs, sizes, provenance."""

    name: str
    build: Callable[[Builder], None]
    torch_fn: Callable[..., tuple[torch.Tensor, ...]]
    inputs: Inputs
    sizes: dict[str, Sizes]
    source: str
    memory_bound: bool = True
    note: str = ""
    tags: tuple[str, ...] = field(default=())

    def text(self, dtype: str, dynamic: bool, size: str | Sizes) -> str:
        """The fusion's IR for an element type, static or `?` extents, and a size (static
        extents are that size's; `?` extents print the same text whatever the size)."""
        extents = self.sizes[size] if isinstance(size, str) else size
        b = Builder(self.name, dtype, extents, dynamic)
        self.build(b)
        return b.text()

    def make_inputs(self, size: str | Sizes, dtype: str, device: torch.device | str, seed: int = 0) -> list[torch.Tensor]:
        extents = self.sizes[size] if isinstance(size, str) else size
        g = torch.Generator(device=device).manual_seed(seed)
        return self.inputs(extents, DTYPES[dtype], device, g)


def _randn(g: torch.Generator, device: torch.device | str, dtype: torch.dtype, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g, device=device, dtype=torch.float32).to(dtype)


def _rand(g: torch.Generator, device: torch.device | str, *shape: int, lo: float = 0.5, hi: float = 1.5) -> torch.Tensor:
    return torch.rand(*shape, generator=g, device=device, dtype=torch.float32) * (hi - lo) + lo


def _mats(count: int, vecs: int = 0) -> Inputs:
    """`count` [M, N] tensors then `vecs` [N] vectors."""

    def make(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
        return [_randn(g, dev, dt, s["M"], s["N"]) for _ in range(count)] + [_randn(g, dev, dt, s["N"]) for _ in range(vecs)]

    return make


def _cube(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["B"], s["S"], s["H"])]


ROWS: dict[str, Sizes] = {
    "tiny": {"M": 4, "N": 8},
    "small": {"M": 8, "N": 128},
    "large": {"M": 16384, "N": 4096},
    "odd": {"M": 12345, "N": 1111},
}
"""2-D [rows, hidden]: large 64 Mi elements (128 MiB per bf16 tensor), odd 13.7 Mi."""

CUBE: dict[str, Sizes] = {
    "tiny": {"B": 2, "S": 3, "H": 8},
    "small": {"B": 2, "S": 4, "H": 128},
    "large": {"B": 16, "S": 1024, "H": 4096},
    "odd": {"B": 7, "S": 1999, "H": 1111},
}
"""3-D [batch, sequence, hidden]: large 64 Mi elements, odd 15.5 Mi."""

EPS = 1e-5


def _f(x: torch.Tensor) -> torch.Tensor:
    return x.float()


# -- norms -------------------------------------------------------------------- #


def _layernorm_fwd(b: Builder) -> None:
    x, w, bias = b.arg("x", "M N"), b.arg("w", "N"), b.arg("b", "N")
    xf = b.up(x)
    var, mean = b.var_mean(xf, [1], keepdim=True)
    inv = b.unary("rsqrt", b.add(var, b.const(EPS)))
    xn = b.mul(b.sub(xf, mean), inv)
    y = b.add(b.mul(xn, b.row(b.up(w), ("M", "N"))), b.row(b.up(bias), ("M", "N")))
    b.ret(b.down(y))


def layernorm_fwd_torch(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor]:
    return (F.layer_norm(x, (x.shape[-1],), w, b, EPS),)


def _layernorm_bwd(b: Builder) -> None:
    dy, x = b.arg("dy", "M N"), b.arg("x", "M N")
    mean, rstd = b.arg("mean", "M 1", "f32"), b.arg("rstd", "M 1", "f32")
    w = b.arg("w", "N")
    dyf, xf = b.up(dy), b.up(x)
    xhat = b.mul(b.sub(xf, mean), rstd)
    g = b.mul(dyf, b.row(b.up(w), ("M", "N")))
    a = b.reduce("mean", g, [1], keepdim=True)
    c = b.reduce("mean", b.mul(g, xhat), [1], keepdim=True)
    dx = b.mul(b.sub(b.sub(g, a), b.mul(xhat, c)), rstd)
    dw = b.reduce("sum", b.mul(dyf, xhat), [0])
    db = b.reduce("sum", dyf, [0])
    b.ret(b.down(dx), b.down(dw), b.down(db))


def layernorm_bwd_torch(
    dy: torch.Tensor, x: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dyf = dy.float()
    xhat = (x.float() - mean) * rstd
    g = dyf * w.float()
    dx = (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True)) * rstd
    return dx.to(x.dtype), (dyf * xhat).sum(0).to(x.dtype), dyf.sum(0).to(x.dtype)


def _layernorm_bwd_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    dy, x = _randn(g, dev, dt, s["M"], s["N"]), _randn(g, dev, dt, s["M"], s["N"])
    xf = x.float()
    var, mean = torch.var_mean(xf, -1, correction=0, keepdim=True)
    return [dy, x, mean, torch.rsqrt(var + EPS), _randn(g, dev, dt, s["N"])]


def _rmsnorm(b: Builder, xf: Value, w: Value, eps: float) -> Value:
    ms = b.reduce("mean", b.mul(xf, xf), [1], keepdim=True)
    inv = b.unary("rsqrt", b.add(ms, b.const(eps)))
    return b.mul(b.mul(xf, inv), b.row(b.up(w), ("M", "N")))


def _rmsnorm_fwd(b: Builder) -> None:
    x, w = b.arg("x", "M N"), b.arg("w", "N")
    b.ret(b.down(_rmsnorm(b, b.up(x), w, EPS)))


def rmsnorm_fwd_torch(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor]:
    xf = x.float()
    return ((xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype),)


def _rmsnorm_bwd(b: Builder) -> None:
    dy, x = b.arg("dy", "M N"), b.arg("x", "M N")
    rstd, w = b.arg("rstd", "M 1", "f32"), b.arg("w", "N")
    dyf, xf = b.up(dy), b.up(x)
    g = b.mul(dyf, b.row(b.up(w), ("M", "N")))
    s = b.reduce("mean", b.mul(g, xf), [1], keepdim=True)
    k = b.mul(b.mul(rstd, rstd), s)
    dx = b.mul(b.sub(g, b.mul(xf, k)), rstd)
    dw = b.reduce("sum", b.mul(dyf, b.mul(xf, rstd)), [0])
    b.ret(b.down(dx), b.down(dw))


def rmsnorm_bwd_torch(dy: torch.Tensor, x: torch.Tensor, rstd: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dyf, xf = dy.float(), x.float()
    g = dyf * w.float()
    dx = (g - xf * (rstd * rstd * (g * xf).mean(-1, keepdim=True))) * rstd
    return dx.to(x.dtype), (dyf * xf * rstd).sum(0).to(x.dtype)


def _rmsnorm_bwd_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    dy, x = _randn(g, dev, dt, s["M"], s["N"]), _randn(g, dev, dt, s["M"], s["N"])
    rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + EPS)
    return [dy, x, rstd, _randn(g, dev, dt, s["N"])]


def _add_rmsnorm(b: Builder) -> None:
    x, r, w = b.arg("x", "M N"), b.arg("r", "M N"), b.arg("w", "N")
    h = b.add(b.up(x), b.up(r))
    b.ret(b.down(h), b.down(_rmsnorm(b, h, w, 1e-6)))


def add_rmsnorm_torch(x: torch.Tensor, r: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.float() + r.float()
    y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    return h.to(x.dtype), y.to(x.dtype)


def _residual_layernorm(b: Builder) -> None:
    x, bias, r = b.arg("x", "M N"), b.arg("bias", "N"), b.arg("r", "M N")
    w, beta = b.arg("w", "N"), b.arg("beta", "N")
    h = b.add(b.add(b.up(x), b.row(b.up(bias), ("M", "N"))), b.up(r))
    var, mean = b.var_mean(h, [1], keepdim=True)
    xn = b.mul(b.sub(h, mean), b.unary("rsqrt", b.add(var, b.const(EPS))))
    y = b.add(b.mul(xn, b.row(b.up(w), ("M", "N"))), b.row(b.up(beta), ("M", "N")))
    b.ret(b.down(h), b.down(y))


def residual_layernorm_torch(
    x: torch.Tensor, bias: torch.Tensor, r: torch.Tensor, w: torch.Tensor, beta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.float() + bias.float() + r.float()
    y = F.layer_norm(h, (h.shape[-1],), w.float(), beta.float(), EPS)
    return h.to(x.dtype), y.to(x.dtype)


def _residual_layernorm_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    x, bias, r = _randn(g, dev, dt, s["M"], s["N"]), _randn(g, dev, dt, s["N"]), _randn(g, dev, dt, s["M"], s["N"])
    return [x, bias, r, _randn(g, dev, dt, s["N"]), _randn(g, dev, dt, s["N"])]


def _batchnorm_fwd(b: Builder) -> None:
    x, w, bias = b.arg("x", "B S H"), b.arg("w", "S"), b.arg("b", "S")
    xf = b.up(x)
    var, mean = b.var_mean(xf, [0, 2], keepdim=True)
    xn = b.mul(b.sub(xf, mean), b.unary("rsqrt", b.add(var, b.const(EPS))))
    wb = b.broadcast(b.up(w), (1, "S", 1), [1])
    bb = b.broadcast(b.up(bias), (1, "S", 1), [1])
    b.ret(b.down(b.add(b.mul(xn, wb), bb)))


def batchnorm_fwd_torch(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor]:
    return (F.batch_norm(x.float(), None, None, w.float(), b.float(), training=True, eps=EPS).to(x.dtype),)


def _channels_inputs(with_affine: bool) -> Inputs:
    def make(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
        x = _randn(g, dev, dt, s["B"], s["S"], s["H"])
        return [x, _randn(g, dev, dt, s["S"]), _randn(g, dev, dt, s["S"])] if with_affine else [x]

    return make


CHANNELS: dict[str, Sizes] = {
    "tiny": {"B": 2, "S": 3, "H": 5},
    "small": {"B": 4, "S": 8, "H": 32},
    "large": {"B": 64, "S": 256, "H": 4096},
    "odd": {"B": 23, "S": 97, "H": 5003},
}
"""[N, C, L] (channels first): large 64 Mi elements, odd 11.2 Mi."""


# -- softmax, cross-entropy, attention --------------------------------------- #


def _softmax_rows(b: Builder, xf: Value, axis: int) -> Value:
    m = b.reduce("max", xf, [axis], keepdim=True)
    e = b.unary("exp", b.sub(xf, m))
    return b.div(e, b.reduce("sum", e, [axis], keepdim=True))


def _softmax_fwd(b: Builder) -> None:
    x = b.arg("x", "M N")
    b.ret(b.down(_softmax_rows(b, b.up(x), 1)))


def softmax_fwd_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (torch.softmax(x.float(), dim=-1).to(x.dtype),)


def _softmax_bwd(b: Builder) -> None:
    dy, y = b.arg("dy", "M N"), b.arg("y", "M N")
    dyf, yf = b.up(dy), b.up(y)
    s = b.reduce("sum", b.mul(dyf, yf), [1], keepdim=True)
    b.ret(b.down(b.mul(yf, b.sub(dyf, s))))


def softmax_bwd_torch(dy: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor]:
    dyf, yf = dy.float(), y.float()
    return ((yf * (dyf - (dyf * yf).sum(-1, keepdim=True))).to(y.dtype),)


def _softmax_bwd_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    dy = _randn(g, dev, dt, s["M"], s["N"])
    return [dy, torch.softmax(_randn(g, dev, torch.float32, s["M"], s["N"]), -1).to(dt)]


def _log_softmax(b: Builder) -> None:
    x = b.arg("x", "M N")
    xf = b.up(x)
    z = b.sub(xf, b.reduce("max", xf, [1], keepdim=True))
    lse = b.unary("log", b.reduce("sum", b.unary("exp", z), [1], keepdim=True))
    b.ret(b.down(b.sub(z, lse)))


def log_softmax_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (torch.log_softmax(x.float(), dim=-1).to(x.dtype),)


def _cross_entropy(b: Builder) -> None:
    x, labels = b.arg("logits", "M N"), b.arg("labels", "M", "i64")
    xf = b.up(x)
    m = b.reduce("max", xf, [1], keepdim=True)
    lse = b.add(b.unary("log", b.reduce("sum", b.unary("exp", b.sub(xf, m)), [1], keepdim=True)), m)
    cols = b.broadcast(b.iota("N"), ("M", "N"), [1])
    hit = b.compare("eq", cols, b.broadcast(labels, ("M", 1), [0]))
    picked = b.reduce("sum", b.where(hit, xf, b.const(0.0)), [1], keepdim=True)
    b.ret(b.reduce("mean", b.sub(lse, picked), [0, 1]))


def cross_entropy_torch(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor]:
    return (F.cross_entropy(logits.float(), labels),)


def _cross_entropy_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    x = _randn(g, dev, dt, s["M"], s["N"])
    return [x, torch.randint(0, s["N"], (s["M"],), generator=g, device=dev, dtype=torch.int64)]


VOCAB: dict[str, Sizes] = {
    "tiny": {"M": 4, "N": 8},
    "small": {"M": 8, "N": 128},
    "large": {"M": 4096, "N": 32000},
    "odd": {"M": 1234, "N": 50257},
}
"""[tokens, vocabulary]: LLaMA's 32000 (a row fits on chip) and GPT-2's 50257 (a looped row)."""

ATTN_SCALE = 0.125
NEG = -1.0e30
"""The causal mask's fill: exp underflows to 0 as for -inf, and a row is never all masked."""


def _attention_epilogue(b: Builder) -> None:
    s = b.arg("scores", "B S S")
    sf = b.mul(b.up(s), b.const(ATTN_SCALE))
    rows = b.broadcast(b.iota("S"), ("B", "S", "S"), [1])
    cols = b.broadcast(b.iota("S"), ("B", "S", "S"), [2])
    masked = b.where(b.compare("gt", cols, rows), b.const(NEG), sf)
    b.ret(b.down(_softmax_rows(b, masked, 2)))


def attention_epilogue_torch(scores: torch.Tensor) -> tuple[torch.Tensor]:
    n = scores.shape[-1]
    i = torch.arange(n, device=scores.device)
    mask = i[None, :] > i[:, None]
    s = (scores.float() * ATTN_SCALE).masked_fill(mask, float("-inf"))
    return (torch.softmax(s, dim=-1).to(scores.dtype),)


def _attention_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["B"], s["S"], s["S"]) * 4]


ATTN: dict[str, Sizes] = {
    "tiny": {"B": 2, "S": 4},
    "small": {"B": 4, "S": 32},
    "large": {"B": 16, "S": 2048},
    "odd": {"B": 12, "S": 999},
}
"""[batch x heads, queries, keys] (square, causal): large 64 Mi elements, odd 12 Mi."""


# -- pointwise epilogues ------------------------------------------------------ #


def _swiglu(b: Builder) -> None:
    gate, up = b.arg("gate", "M N"), b.arg("up", "M N")
    gf = b.up(gate)
    b.ret(b.down(b.mul(b.mul(gf, b.sigmoid(gf)), b.up(up))))


def swiglu_torch(gate: torch.Tensor, up: torch.Tensor) -> tuple[torch.Tensor]:
    return ((F.silu(gate.float()) * up.float()).to(gate.dtype),)


GELU_K0, GELU_K1 = 0.7978845608028654, 0.044715


def _gelu_tanh(b: Builder, h: Value) -> Value:
    inner = b.add(h, b.mul(b.mul(b.mul(h, h), h), b.const(GELU_K1)))
    t = b.unary("tanh", b.mul(inner, b.const(GELU_K0)))
    return b.mul(b.mul(h, b.const(0.5)), b.add(t, b.const(1.0)))


def _bias_gelu(b: Builder) -> None:
    x, bias = b.arg("x", "M N"), b.arg("b", "N")
    h = b.add(b.up(x), b.row(b.up(bias), ("M", "N")))
    b.ret(b.down(_gelu_tanh(b, h)))


def bias_gelu_torch(x: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor]:
    return (F.gelu(x.float() + b.float(), approximate="tanh").to(x.dtype),)


def _gelu_bwd(b: Builder) -> None:
    dy, x, bias = b.arg("dy", "M N"), b.arg("x", "M N"), b.arg("b", "N")
    h = b.add(b.up(x), b.row(b.up(bias), ("M", "N")))
    h2 = b.mul(h, h)
    u = b.mul(b.add(h, b.mul(b.mul(h2, h), b.const(GELU_K1))), b.const(GELU_K0))
    t = b.unary("tanh", u)
    one = b.const(1.0)
    du = b.mul(b.add(b.mul(h2, b.const(3 * GELU_K1)), one), b.const(GELU_K0))
    sech2 = b.sub(one, b.mul(t, t))
    d = b.add(b.mul(b.add(t, one), b.const(0.5)), b.mul(b.mul(b.mul(h, b.const(0.5)), sech2), du))
    dx = b.mul(b.up(dy), d)
    b.ret(b.down(dx), b.down(b.reduce("sum", dx, [0])))


def gelu_bwd_torch(dy: torch.Tensor, x: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.float() + b.float()
    t = torch.tanh(GELU_K0 * (h + GELU_K1 * h * h * h))
    d = 0.5 * (1 + t) + 0.5 * h * (1 - t * t) * GELU_K0 * (1 + 3 * GELU_K1 * h * h)
    dx = dy.float() * d
    return dx.to(x.dtype), dx.sum(0).to(x.dtype)


def _bias_residual(b: Builder) -> None:
    x, bias, r = b.arg("x", "M N"), b.arg("b", "N"), b.arg("r", "M N")
    b.ret(b.down(b.add(b.add(b.up(x), b.row(b.up(bias), ("M", "N"))), b.up(r))))


def bias_residual_torch(x: torch.Tensor, b: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor]:
    return ((x.float() + b.float() + r.float()).to(x.dtype),)


def _bias_residual_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["M"], s["N"]), _randn(g, dev, dt, s["N"]), _randn(g, dev, dt, s["M"], s["N"])]


def _rotary(b: Builder) -> None:
    x, cos, sin = b.arg("x", "B S D"), b.arg("cos", "S D"), b.arg("sin", "S D")
    b.derive("D2", "divui", "D", 2)
    xf = b.up(x)
    x1 = b.slice(xf, [0, 0, 0], ["B", "S", "D2"], ("B", "S", "D2"))
    x2 = b.slice(xf, [0, 0, "D2"], ["B", "S", "D"], ("B", "S", "D2"))
    rot = b.cat([b.unary("neg", x2), x1], 2, ("B", "S", "D"))
    cb = b.broadcast(b.up(cos), (1, "S", "D"), [1, 2])
    sb = b.broadcast(b.up(sin), (1, "S", "D"), [1, 2])
    b.ret(b.down(b.add(b.mul(xf, cb), b.mul(rot, sb))))


def rotary_torch(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor]:
    xf, h = x.float(), x.shape[-1] // 2
    rot = torch.cat([-xf[..., h:], xf[..., :h]], dim=-1)
    return ((xf * cos.float() + rot * sin.float()).to(x.dtype),)


def _rotary_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    x = _randn(g, dev, dt, s["B"], s["S"], s["D"])
    pos = torch.arange(s["S"], device=dev, dtype=torch.float32)[:, None]
    freq = 10000.0 ** (-torch.arange(0, s["D"], 2, device=dev, dtype=torch.float32) / s["D"])
    ang = torch.cat([pos * freq, pos * freq], dim=-1)
    return [x, ang.cos().to(dt), ang.sin().to(dt)]


ROPE: dict[str, Sizes] = {
    "tiny": {"B": 2, "S": 3, "D": 8},
    "small": {"B": 2, "S": 8, "D": 64},
    "large": {"B": 128, "S": 4096, "D": 128},
    "odd": {"B": 61, "S": 1999, "D": 96},
}
"""[batch x heads, sequence, head dim] with cos/sin [sequence, head dim]: large 64 Mi elements."""


# -- views: transposes, broadcasts, slices, cat ------------------------------- #


def _transpose_add_2d(b: Builder) -> None:
    x, z = b.arg("x", "M N"), b.arg("z", "N M")
    b.ret(b.down(b.add(b.permute(b.up(x), [1, 0]), b.up(z))))


def transpose_add_2d_torch(x: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor]:
    return ((x.float().t() + z.float()).to(x.dtype),)


def _transpose_2d_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["M"], s["N"]), _randn(g, dev, dt, s["N"], s["M"])]


SQUARE: dict[str, Sizes] = {
    "tiny": {"M": 4, "N": 6},
    "small": {"M": 8, "N": 128},
    "large": {"M": 8192, "N": 8192},
    "odd": {"M": 5003, "N": 3001},
}


def _transpose_add_3d(b: Builder) -> None:
    x, z = b.arg("x", "B S H"), b.arg("z", "B H S")
    b.ret(b.down(b.add(b.permute(b.up(x), [0, 2, 1]), b.up(z))))


def transpose_add_3d_torch(x: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor]:
    return ((x.float().transpose(1, 2) + z.float()).to(x.dtype),)


def _transpose_3d_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["B"], s["S"], s["H"]), _randn(g, dev, dt, s["B"], s["H"], s["S"])]


CUBE_T: dict[str, Sizes] = {
    "tiny": {"B": 2, "S": 3, "H": 5},
    "small": {"B": 2, "S": 8, "H": 64},
    "large": {"B": 16, "S": 2048, "H": 2048},
    "odd": {"B": 7, "S": 1999, "H": 1111},
}


def _broadcast_add_outer(b: Builder) -> None:
    x, v = b.arg("x", "M N"), b.arg("v", "M")
    b.ret(b.down(b.add(b.up(x), b.broadcast(b.up(v), ("M", 1), [0]))))


def broadcast_add_outer_torch(x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor]:
    return ((x.float() + v.float()[:, None]).to(x.dtype),)


def _outer_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["M"], s["N"]), _randn(g, dev, dt, s["M"])]


def _qkv_split_bias(b: Builder) -> None:
    x, bias = b.arg("x", "M K"), b.arg("b", "K")
    b.derive("N", "divui", "K", 3)
    b.derive("N2", "muli", "N", 2)
    h = b.add(b.up(x), b.row(b.up(bias), ("M", "K")))
    parts = [b.slice(h, [0, lo], ["M", hi], ("M", "N")) for lo, hi in ((0, "N"), ("N", "N2"), ("N2", "K"))]
    b.ret(*(b.down(p) for p in parts))


def qkv_split_bias_torch(x: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    h = (x.float() + b.float()).to(x.dtype)
    q, k, v = h.chunk(3, dim=-1)
    return q.contiguous(), k.contiguous(), v.contiguous()


def _qkv_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["M"], s["K"]), _randn(g, dev, dt, s["K"])]


QKV: dict[str, Sizes] = {
    "tiny": {"M": 4, "K": 12},
    "small": {"M": 8, "K": 384},
    "large": {"M": 16384, "K": 3072},
    "odd": {"M": 12345, "K": 1113},
}
"""[tokens, 3 x hidden] (a fused QKV projection's output): large 48 Mi elements."""


def _kv_cat(b: Builder) -> None:
    past, new = b.arg("past", "B S D"), b.arg("new", "B T D")
    b.derive("ST", "addi", "S", "T")
    b.ret(b.cat([past, new], 1, ("B", "ST", "D")))


def kv_cat_torch(past: torch.Tensor, new: torch.Tensor) -> tuple[torch.Tensor]:
    return (torch.cat([past, new], dim=1),)


def _kv_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [_randn(g, dev, dt, s["B"], s["S"], s["D"]), _randn(g, dev, dt, s["B"], s["T"], s["D"])]


KV: dict[str, Sizes] = {
    "tiny": {"B": 2, "S": 3, "T": 2, "D": 4},
    "small": {"B": 2, "S": 8, "T": 2, "D": 64},
    "large": {"B": 64, "S": 4096, "T": 256, "D": 128},
    "odd": {"B": 13, "S": 1999, "T": 37, "D": 96},
}
"""KV cache [batch x heads, cached, head dim] and the new tokens [.., new, ..]: large 34 Mi elements."""


# -- reductions over each axis ------------------------------------------------ #


def _bias_grad(b: Builder) -> None:
    dy = b.arg("dy", "M N")
    b.ret(b.down(b.reduce("sum", b.up(dy), [0])))


def bias_grad_torch(dy: torch.Tensor) -> tuple[torch.Tensor]:
    return (dy.float().sum(0).to(dy.dtype),)


def _row_sum(b: Builder) -> None:
    x = b.arg("x", "M N")
    b.ret(b.down(b.reduce("sum", b.up(x), [1])))


def row_sum_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().sum(1).to(x.dtype),)


def _full_sum(b: Builder) -> None:
    x = b.arg("x", "M N")
    b.ret(b.reduce("sum", b.up(x), [0, 1]))


def full_sum_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().sum(),)


def _sum_3d_dim0(b: Builder) -> None:
    x = b.arg("x", "B S H")
    b.ret(b.down(b.reduce("sum", b.up(x), [0])))


def sum_3d_dim0_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().sum(0).to(x.dtype),)


def _mean_3d_dim1(b: Builder) -> None:
    x = b.arg("x", "B S H")
    b.ret(b.down(b.reduce("mean", b.up(x), [1])))


def mean_3d_dim1_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().mean(1).to(x.dtype),)


def _amax_3d_dim2(b: Builder) -> None:
    x = b.arg("x", "B S H")
    b.ret(b.reduce("max", b.unary("abs", x), [2]))


def amax_3d_dim2_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.abs().amax(2),)


def _bn_stats(b: Builder) -> None:
    x = b.arg("x", "B S H")
    var, mean = b.var_mean(b.up(x), [0, 2])
    b.ret(var, mean)


def bn_stats_torch(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    var, mean = torch.var_mean(x.float(), dim=(0, 2), correction=0)
    return var, mean


def _reduction_epilogue(b: Builder) -> None:
    x, v = b.arg("x", "M N"), b.arg("v", "N")
    b.ret(b.down(b.add(b.reduce("sum", b.up(x), [0]), b.up(v))))


def reduction_epilogue_torch(x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor]:
    return ((x.float().sum(0) + v.float()).to(x.dtype),)


# --------------------------------------------------------------------------- #

FUSIONS: dict[str, SuiteFusion] = {
    f.name: f
    for f in [
        SuiteFusion("layernorm_fwd", _layernorm_fwd, layernorm_fwd_torch, _mats(1, 2), ROWS,
                    "nvFuser test_layernorm_fwd; every BERT/GPT-2 block (F.layer_norm)", tags=("norm",)),
        SuiteFusion("layernorm_bwd", _layernorm_bwd, layernorm_bwd_torch, _layernorm_bwd_inputs, ROWS,
                    "nvFuser test_layernorm_bwd (dx, dw, db from saved mean and rstd)", tags=("norm", "bwd")),
        SuiteFusion("rmsnorm_fwd", _rmsnorm_fwd, rmsnorm_fwd_torch, _mats(1, 1), ROWS,
                    "nvFuser test_rmsnorm_fwd; LLaMA's RMSNorm", tags=("norm",)),
        SuiteFusion("rmsnorm_bwd", _rmsnorm_bwd, rmsnorm_bwd_torch, _rmsnorm_bwd_inputs, ROWS,
                    "nvFuser test_rmsnorm_bwd (dx, dw from saved rstd)", tags=("norm", "bwd")),
        SuiteFusion("add_rmsnorm", _add_rmsnorm, add_rmsnorm_torch, _mats(2, 1), ROWS,
                    "nvFuser test_rmsnorm_add_fwd; vLLM fused_add_rms_norm (residual out + norm out)", tags=("norm",)),
        SuiteFusion("residual_layernorm", _residual_layernorm, residual_layernorm_torch, _residual_layernorm_inputs, ROWS,
                    "nvFuser test_dropout_layernorm_fwd with p=0; HF BertSelfOutput (bias + residual + LayerNorm)",
                    tags=("norm", "residual")),
        SuiteFusion("batchnorm_fwd", _batchnorm_fwd, batchnorm_fwd_torch, _channels_inputs(True), CHANNELS,
                    "nvFuser test_batchnorm_fwd (training statistics, channels first [N, C, L])", tags=("norm",)),
        SuiteFusion("softmax_fwd", _softmax_fwd, softmax_fwd_torch, _mats(1), ROWS,
                    "nvFuser test_softmax_fwd; Inductor softmax", tags=("softmax",)),
        SuiteFusion("softmax_bwd", _softmax_bwd, softmax_bwd_torch, _softmax_bwd_inputs, ROWS,
                    "nvFuser test_softmax_bwd (_softmax_backward_data)", tags=("softmax", "bwd")),
        SuiteFusion("log_softmax", _log_softmax, log_softmax_torch, _mats(1), VOCAB,
                    "Inductor / HF LM heads: log_softmax over the vocabulary", tags=("softmax",)),
        SuiteFusion("cross_entropy", _cross_entropy, cross_entropy_torch, _cross_entropy_inputs, VOCAB,
                    "nvFuser test_cross_entropy_loss: log-softmax, the label's logit (iota == label, "
                    "no gather) and the mean over tokens", tags=("softmax", "reduction")),
        SuiteFusion("attention_epilogue", _attention_epilogue, attention_epilogue_torch, _attention_inputs, ATTN,
                    "nvFuser test_nanogpt_attn_fwd with dropout 0: scale, causal mask (iota), softmax",
                    tags=("softmax", "attention")),
        SuiteFusion("swiglu", _swiglu, swiglu_torch, _mats(2), ROWS,
                    "nvFuser test_silu_mul_fwd; LLaMA MLP silu(gate) * up", tags=("pointwise",)),
        SuiteFusion("bias_gelu", _bias_gelu, bias_gelu_torch, _mats(1, 1), ROWS,
                    "nvFuser test_gelu_fwd; GPT-2 MLP bias + tanh-GELU", memory_bound=False,
                    note="f32 tanh per element: bound by arithmetic on an H200 (BENCHMARKS.md)", tags=("pointwise",)),
        SuiteFusion("gelu_bwd", _gelu_bwd, gelu_bwd_torch, _mats(2, 1), ROWS,
                    "nvFuser test_gelu_bwd_reduction (dx and the bias gradient)", memory_bound=False,
                    note="tanh-GELU derivative in f32", tags=("pointwise", "bwd", "reduction")),
        SuiteFusion("bias_residual", _bias_residual, bias_residual_torch, _bias_residual_inputs, ROWS,
                    "Megatron bias_dropout_add with p=0: x + bias + residual", tags=("pointwise", "residual")),
        SuiteFusion("rotary", _rotary, rotary_torch, _rotary_inputs, ROPE,
                    "nvFuser test_rope; LLaMA rotate_half RoPE (slices, neg, cat, cos/sin broadcast over heads)",
                    tags=("view",)),
        SuiteFusion("transpose_add_2d", _transpose_add_2d, transpose_add_2d_torch, _transpose_2d_inputs, SQUARE,
                    "nvFuser test_transpose (2-D): x.T + z", tags=("view",)),
        SuiteFusion("transpose_add_3d", _transpose_add_3d, transpose_add_3d_torch, _transpose_3d_inputs, CUBE_T,
                    "nvFuser test_transpose (last two axes of 3-D): x.transpose(1, 2) + z", tags=("view",)),
        SuiteFusion("broadcast_add_outer", _broadcast_add_outer, broadcast_add_outer_torch, _outer_inputs, ROWS,
                    "nvFuser test_broadcast_add_fwd (a per-row vector broadcast over columns)", tags=("view",)),
        SuiteFusion("qkv_split_bias", _qkv_split_bias, qkv_split_bias_torch, _qkv_inputs, QKV,
                    "GPT-2 c_attn: bias add on the fused QKV projection, split into q, k, v (3 slices)",
                    tags=("view",)),
        SuiteFusion("kv_cat", _kv_cat, kv_cat_torch, _kv_inputs, KV,
                    "nvFuser test_cat; HF generation's KV-cache append (cat along the sequence axis)", tags=("view",)),
        SuiteFusion("bias_grad", _bias_grad, bias_grad_torch, _mats(1), ROWS,
                    "nvFuser test_reduction (axis 0); every linear layer's bias gradient", tags=("reduction",)),
        SuiteFusion("reduction_epilogue", _reduction_epilogue, reduction_epilogue_torch, _mats(1, 1), ROWS,
                    "nvFuser test_reduction_epilogue: column sum + a vector", tags=("reduction",)),
        SuiteFusion("row_sum", _row_sum, row_sum_torch, _mats(1), ROWS,
                    "nvFuser test_reduction (axis 1)", tags=("reduction",)),
        SuiteFusion("full_sum", _full_sum, full_sum_torch, _mats(1), ROWS,
                    "nvFuser test_reduction (all axes); loss sums", tags=("reduction",)),
        SuiteFusion("sum_3d_dim0", _sum_3d_dim0, sum_3d_dim0_torch, _cube, CUBE,
                    "gradient accumulation over micro-batches: sum over axis 0 of 3-D", tags=("reduction",)),
        SuiteFusion("mean_3d_dim1", _mean_3d_dim1, mean_3d_dim1_torch, _cube, CUBE,
                    "BERT / sentence-transformers mean pooling over the sequence (axis 1 of 3-D)", tags=("reduction",)),
        SuiteFusion("amax_3d_dim2", _amax_3d_dim2, amax_3d_dim2_torch, _cube, CUBE,
                    "per-token absmax for fp8/int8 quantization (axis 2 of 3-D)", tags=("reduction",)),
        SuiteFusion("bn_stats", _bn_stats, bn_stats_torch, _channels_inputs(False), CHANNELS,
                    "nvFuser test_batchnorm_fwd's statistics: var_mean over axes 0 and 2 of [N, C, L]",
                    tags=("reduction", "norm")),
    ]
}
"""The suite, in the order the tables list it."""


def add_case_arguments(parser: Any) -> None:
    """The positional arguments that name one case of the suite on a command line:
    FUSION DTYPE {static,dynamic} SIZE (`profile_kernels.py`, `inductor_code.py`)."""
    parser.add_argument("fusion", choices=sorted(FUSIONS))
    parser.add_argument("dtype", choices=sorted(DTYPES))
    parser.add_argument("extents", choices=("static", "dynamic"))
    parser.add_argument("size", help="a size name of the fusion (small, large, odd)")


def tolerance(dtype: str) -> float:
    """rtol, and atol relative to the largest reference magnitude (at least 1), by element type."""
    return {"bf16": 2e-2, "f16": 4e-3, "f32": 1e-4}[dtype]


def check_outputs(actual: Sequence[torch.Tensor], expected: Sequence[torch.Tensor], dtype: str) -> str | None:
    """None if `actual` matches `expected` (dtypes, shapes, values within `tolerance`), else why not."""
    if len(actual) != len(expected):
        return f"{len(actual)} outputs, torch has {len(expected)}"
    tol = tolerance(dtype)
    for k, (a, e) in enumerate(zip(actual, expected)):
        if a.dtype != e.dtype or tuple(a.shape) != tuple(e.shape):
            return f"output {k}: {a.dtype} {tuple(a.shape)}, torch {e.dtype} {tuple(e.shape)}"
        af, ef = a.detach().double(), e.detach().double()
        scale = max(1.0, float(ef.abs().max())) if ef.numel() else 1.0
        err = (af - ef).abs() - tol * ef.abs()
        worst = float(err.max()) if err.numel() else 0.0
        if not math.isfinite(worst) or worst > tol * scale:
            return f"output {k}: error {worst:.3g} above {tol:g} x {scale:.3g} (rtol and atol {tol:g})"
    return None
