"""The suite's fusions through nvFuser's Python API: one build function, two frontends.

Each fusion of `suite_fusions.py` is written once, as `build(b)` over a builder. The
`Builder` there prints fusion-dialect text (what Allotment's column compiles); `FdBuilder`
here takes the same calls and makes them on a `FusionDefinition` of a frontend module
that follows nvFuser's direct Python API: `allotment` (its `FusionDefinition`) or
`nvfuser_direct` (real nvFuser). So nvFuser's column runs the same fusion, op for op,
written by the same function:

    fd = define(FUSIONS["rmsnorm_fwd"], nvfuser_direct, "bf16", dynamic=True, extents)
    outs = fd.execute(inputs)

Differences from the text, both forced by nvFuser's op set and the same for both
frontends: a mean is a sum divided by the element count (nvFuser has no mean op), and
`?` extents are `fd.ops.size` of the argument that has them (derived extents, such as
rotary's half head dim, are integer scalar arithmetic on those).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from suite_fusions import BuilderError, Shape, SuiteFusion

_DTYPE_NAMES = {"f32": "Float", "bf16": "BFloat16", "f16": "Half", "i64": "Int", "i1": "Bool"}
_INDEX_OPS = {"divui": "div", "muli": "mul", "addi": "add", "subi": "sub"}
_PY_INDEX = {"divui": lambda a, b: a // b, "muli": lambda a, b: a * b, "addi": lambda a, b: a + b,
             "subi": lambda a, b: a - b}


@dataclass(frozen=True)
class FdValue:
    """A value of the definition being built: the frontend's handle (or a Python number
    for a constant), its element type's suite name, and its shape (None: a scalar)."""

    handle: Any
    dtype: str
    shape: Shape | None


class FdBuilder:
    """`suite_fusions.Builder`'s interface over `fd`, a frontend's open `FusionDefinition`."""

    def __init__(self, name: str, frontend: ModuleType, fd: Any, dtype: str, extents: dict[str, int],
                 dynamic: bool) -> None:
        self.name = name
        self.dtype = dtype
        self.extents = dict(extents)
        self.dynamic = dynamic
        self._fe = frontend
        self._fd = fd
        self._where: dict[str, tuple[FdValue, int]] = {}
        self._derived: dict[str, tuple[str, str, str | int]] = {}
        self._scalars: dict[str, Any] = {}

    # -- extents ------------------------------------------------------------- #

    def _dt(self, name: str) -> Any:
        return getattr(self._fe.DataType, _DTYPE_NAMES[name])

    def extent(self, sym: str | int) -> int:
        if isinstance(sym, int):
            return sym
        if sym not in self.extents:
            raise BuilderError(f"{self.name}: extent {sym!r} has no size")
        return self.extents[sym]

    def _operand(self, sym: str | int) -> Any:
        """An extent as an op operand: a Python int (static, or a literal), else a scalar."""
        if isinstance(sym, int) or not self.dynamic:
            return self.extent(sym)
        if sym in self._scalars:
            return self._scalars[sym]
        if sym in self._derived:
            op, a, k = self._derived[sym]
            rhs = self._scalar(k) if isinstance(k, int) else self._operand(k)
            s = getattr(self._fd.ops, _INDEX_OPS[op])(self._operand(a), rhs)
        elif sym in self._where:
            arg, axis = self._where[sym]
            s = self._fd.ops.size(arg.handle, axis)
        else:
            raise BuilderError(f"{self.name}: extent {sym!r} is neither an argument's nor derived")
        self._scalars[sym] = s
        return s

    def derive(self, sym: str, op: str, a: str, k: str | int) -> str:
        self.extents[sym] = _PY_INDEX[op](self.extent(a), self.extent(k))
        self._derived[sym] = (op, a, k)
        return sym

    def index_const(self, k: int) -> int:
        return k

    # -- arguments, results --------------------------------------------------- #

    def arg(self, name: str, shape: str | Shape, dtype: str | None = None) -> FdValue:
        dims: Shape = tuple(int(s) if s == "1" else s for s in shape.split()) if isinstance(shape, str) else shape
        sizes = [1 if d == 1 else (-1 if self.dynamic else self.extent(d)) for d in dims]
        contiguity = [None if d == 1 else True for d in dims]
        h = self._fd.define_tensor(shape=sizes, contiguity=contiguity, dtype=self._dt(dtype or self.dtype))
        v = FdValue(h, dtype or self.dtype, dims)
        for axis, sym in enumerate(dims):
            if isinstance(sym, str):
                self.extent(sym)
                self._where.setdefault(sym, (v, axis))
        return v

    def ret(self, *values: FdValue) -> None:
        for v in values:
            self._fd.add_output(v.handle)

    # -- ops ----------------------------------------------------------------- #

    def _scalar(self, value: float | int) -> Any:
        """A Python number as a constant scalar of the definition (nvFuser's ops take `Val`s)."""
        if isinstance(value, int):
            return self._fd.define_scalar(value, self._fe.DataType.Int)
        return self._fd.define_scalar(float(value), self._fe.DataType.Double)

    def const(self, value: float, dtype: str = "f32") -> FdValue:
        return FdValue(self._scalar(float(value)), dtype, None)

    def cast(self, v: FdValue, dtype: str) -> FdValue:
        if v.dtype == dtype:
            return v
        return FdValue(self._fd.ops.cast(v.handle, self._dt(dtype)), dtype, v.shape)

    def up(self, v: FdValue) -> FdValue:
        return self.cast(v, "f32")

    def down(self, v: FdValue) -> FdValue:
        return self.cast(v, self.dtype)

    def unary(self, op: str, v: FdValue) -> FdValue:
        return FdValue(getattr(self._fd.ops, op)(v.handle), v.dtype, v.shape)

    def sigmoid(self, v: FdValue) -> FdValue:
        return self.unary("sigmoid", v)

    def _shape(self, values: Sequence[FdValue]) -> Shape:
        shapes = [v.shape for v in values if v.shape is not None]
        out: list[str | int] = []
        for dims in zip(*shapes):
            syms = {d for d in dims if d != 1}
            out.append(syms.pop() if syms else 1)
        return tuple(out)

    def _binary(self, op: str, a: FdValue, b: FdValue, dtype: str | None = None) -> FdValue:
        tensors = [v for v in (a, b) if v.shape is not None]
        h = getattr(self._fd.ops, op)(a.handle, b.handle)
        return FdValue(h, dtype or tensors[0].dtype, self._shape(tensors))

    def add(self, a: FdValue, b: FdValue) -> FdValue:
        return self._binary("add", a, b)

    def sub(self, a: FdValue, b: FdValue) -> FdValue:
        return self._binary("sub", a, b)

    def mul(self, a: FdValue, b: FdValue) -> FdValue:
        return self._binary("mul", a, b)

    def div(self, a: FdValue, b: FdValue) -> FdValue:
        return self._binary("div", a, b)

    def compare(self, op: str, a: FdValue, b: FdValue) -> FdValue:
        return self._binary(op, a, b, dtype="i1")

    def where(self, p: FdValue, a: FdValue, b: FdValue) -> FdValue:
        values = [v for v in (a, b) if v.shape is not None]
        shape = self._shape([p, *values])
        return FdValue(self._fd.ops.where(p.handle, a.handle, b.handle), values[0].dtype if values else a.dtype, shape)

    def _count(self, v: FdValue, dims: Sequence[int]) -> Any:
        """The number of elements `dims` of `v` reduce: an int (static) or a Float scalar."""
        assert v.shape is not None
        if not self.dynamic:
            return math.prod(self.extent(v.shape[d]) for d in dims)
        n = None
        for d in dims:
            e = self._operand(v.shape[d])
            n = e if n is None else self._fd.ops.mul(n, e)
        return self._fd.ops.cast(n, self._fe.DataType.Float)

    def reduce(self, op: str, v: FdValue, dims: Sequence[int], keepdim: bool = False, dtype: str | None = None) -> FdValue:
        assert v.shape is not None
        shape = tuple(1 if i in dims else s for i, s in enumerate(v.shape) if keepdim or i not in dims)
        if op == "mean":  # nvFuser has no mean: a sum over the element count
            s = self._fd.ops.sum(v.handle, list(dims), keepdim)
            n = self._count(v, dims)
            h = self._fd.ops.mul(s, self._scalar(1.0 / n)) if isinstance(n, int) else self._fd.ops.div(s, n)
        else:  # positional: nvFuser names the flag keep_dim, Allotment keepdim
            h = getattr(self._fd.ops, op)(v.handle, list(dims), keepdim)
        return FdValue(h, dtype or v.dtype, shape)

    def var_mean(self, v: FdValue, dims: Sequence[int], keepdim: bool = False) -> tuple[FdValue, FdValue]:
        assert v.shape is not None
        shape = tuple(1 if i in dims else s for i, s in enumerate(v.shape) if keepdim or i not in dims)
        var, mean = self._fd.ops.var_mean(v.handle, list(dims), 0, keepdim)
        return FdValue(var, v.dtype, shape), FdValue(mean, v.dtype, shape)

    def broadcast(self, v: FdValue, shape: str | Shape, dims: Sequence[int]) -> FdValue:
        out: Shape = tuple(int(s) if s == "1" else s for s in shape.split()) if isinstance(shape, str) else shape
        ext = [self._operand(s) for s in out]
        return FdValue(self._fd.ops.broadcast_in_dim(v.handle, ext, list(dims)), v.dtype, out)

    def row(self, v: FdValue, shape: Shape) -> FdValue:
        rank = len(shape)
        return self.broadcast(v, (*([1] * (rank - 1)), shape[-1]), [rank - 1])

    def permute(self, v: FdValue, perm: Sequence[int]) -> FdValue:
        assert v.shape is not None
        return FdValue(self._fd.ops.permute(v.handle, list(perm)), v.dtype, tuple(v.shape[p] for p in perm))

    def slice(self, v: FdValue, starts: Sequence[str | int], ends: Sequence[str | int], shape: Shape) -> FdValue:
        lo = [self._operand(s) for s in starts]
        hi = [self._operand(s) for s in ends]
        return FdValue(self._fd.ops.slice(v.handle, lo, hi, [1] * len(lo)), v.dtype, shape)

    def cat(self, values: Sequence[FdValue], dim: int, shape: Shape) -> FdValue:
        return FdValue(self._fd.ops.cat([v.handle for v in values], dim), values[0].dtype, shape)

    def iota(self, sym: str, dtype: str = "i64") -> FdValue:
        n = self._operand(sym)
        length = self._scalar(n) if isinstance(n, int) else n
        h = self._fd.ops.iota(length, self._scalar(0), self._scalar(1), self._dt(dtype))
        return FdValue(h, dtype, (sym,))


def define(fusion: SuiteFusion, frontend: ModuleType, dtype: str, dynamic: bool, extents: dict[str, int]) -> Any:
    """`fusion` as a `frontend.FusionDefinition` (complete, ready to `execute`): static
    extents are `extents`' sizes; `?` extents serve every size."""
    with frontend.FusionDefinition() as fd:
        fusion.build(FdBuilder(fusion.name, frontend, fd, dtype, extents, dynamic))  # type: ignore[arg-type]
    return fd
