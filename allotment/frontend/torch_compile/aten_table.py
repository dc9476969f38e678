"""The one table from ATen ops to fusion ops (`TABLE`), used by `translate.Translator`.

Each entry builds a node's value from fusion ops through `FusionDefinition.ops`, given the
node's translated arguments (positional and keyword, as the ATen schema names them). The
translator casts the result to the node's dtype where fusion typing gives another
(arithmetic on 16-bit floats is built in f32), so each op rounds once, where torch's does.
An entry raises `Refused` for a case it does not take; the node then becomes an ATen call.
`docs/torch-compile-ops.md` is generated from this table (`markdown_table`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from allotment.extents.dims import normalize_dim
from allotment.frontend.datatypes import from_torch
from allotment.frontend.handles import Tensor
from allotment.frontend.pointwise_ops import fused_multiply_add
from allotment.frontend.torch_compile.building import Builder as Translator
from allotment.frontend.torch_compile.building import Refused

Build = Callable[..., Any]


@dataclass(frozen=True)
class Entry:
    fusion: str
    """The fusion ops the entry builds (for the generated table)."""
    build: Build
    note: str = ""


TABLE: dict[str, Entry] = {}


def _entry(names: str, fusion: str, note: str = "") -> Callable[[Build], Build]:
    def register(fn: Build) -> Build:
        for name in names.split():
            TABLE[name] = Entry(fusion, fn, note)
        return fn

    return register


def _val(node: Any) -> Any:
    return node.meta.get("val")


def _operand(tx: Translator, x: Any) -> Any:
    """A tensor, or a number (a SymInt as an index value), for an elementwise op."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, bool | int | float):
        return x
    if isinstance(x, torch.SymInt):
        return tx.extent(x)
    return tx.tensor(x)


def _dims(x: Any, rank: int) -> list[int]:
    if x is None:
        return list(range(rank))
    ds = [x] if isinstance(x, int) else list(x)
    if not ds:
        return list(range(rank))
    return [normalize_dim(d, rank) for d in ds]


# -- elementwise -----------------------------------------------------------------

_UNARY = {
    "neg": "neg", "abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
    "reciprocal": "reciprocal", "tanh": "tanh", "sigmoid": "sigmoid", "sin": "sin", "cos": "cos",
    "erf": "erf", "relu": "relu", "logical_not": "logical_not", "bitwise_not": "bitwise_not",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "round", "sign": "sign",
    "exp2": "exp2", "expm1": "expm1", "log1p": "log1p", "log2": "log2", "log10": "log10",
    "erfinv": "erfinv", "erfc": "erfc", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
    "sinh": "sinh", "cosh": "cosh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "lgamma": "lgamma", "isnan": "isnan", "isinf": "isinf", "signbit": "signbit", "frac": "frac",
}

for _aten, _op in _UNARY.items():
    def _unary(tx: Translator, node: Any, x: Any, _op: str = _op) -> Any:
        return getattr(tx.fd.ops, _op)(tx.tensor(x))

    _entry(f"aten.{_aten}.default", f"fusion.{_op}")(_unary)

_BINARY = {
    "mul": "mul", "div": "div", "maximum": "maximum", "minimum": "minimum", "pow": "pow",
    "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "remainder": "remainder", "fmod": "fmod", "atan2": "atan2",
}

for _aten, _op in _BINARY.items():
    def _binary(tx: Translator, node: Any, a: Any, b: Any, _op: str = _op) -> Any:
        if _op == "pow" and isinstance(b, int | float) and b == 2 and isinstance(a, Tensor):
            return tx.fd.ops.mul(a, a)  # x ** 2 as torch computes it: one product
        return getattr(tx.fd.ops, _op)(_operand(tx, a), _operand(tx, b))

    _ovl = " ".join(f"aten.{_aten}.{o}" for o in ("Tensor", "Scalar", "default", "Tensor_Scalar",
                                                   "Tensor_Tensor", "Scalar_Tensor"))
    _entry(_ovl, f"fusion.{_op}")(_binary)


@_entry("aten.add.Tensor aten.add.Scalar", "fusion.add (fusion.mul for alpha)")
def _add(tx: Translator, node: Any, a: Any, b: Any, alpha: Any = 1) -> Any:
    b = _operand(tx, b)
    if alpha != 1:
        b = tx.fd.ops.mul(b, alpha)
    return tx.fd.ops.add(_operand(tx, a), b)


@_entry("aten.sub.Tensor aten.sub.Scalar aten.rsub.Scalar aten.rsub.Tensor", "fusion.sub (fusion.mul for alpha)")
def _sub(tx: Translator, node: Any, a: Any, b: Any, alpha: Any = 1) -> Any:
    if "rsub" in str(node.target):
        a, b = b, a
        if alpha != 1:
            a = tx.fd.ops.mul(_operand(tx, a), alpha)
    elif alpha != 1:
        b = tx.fd.ops.mul(_operand(tx, b), alpha)
    return tx.fd.ops.sub(_operand(tx, a), _operand(tx, b))


@_entry("aten.div.Tensor_mode aten.div.Scalar_mode", "fusion.div, fusion.trunc or fusion.floor")
def _div_mode(tx: Translator, node: Any, a: Any, b: Any, rounding_mode: Any = None) -> Any:
    val = _val(node)
    q = tx.fd.ops.div(_operand(tx, a), _operand(tx, b))
    if rounding_mode is None:
        return q
    if not val.dtype.is_floating_point:
        if rounding_mode == "trunc":
            return q
        raise Refused("integer floor division")
    return tx.fd.ops.trunc(q) if rounding_mode == "trunc" else tx.fd.ops.floor(q)


@_entry("aten.where.self aten.where.ScalarSelf aten.where.ScalarOther aten.where.Scalar", "fusion.where")
def _where(tx: Translator, node: Any, cond: Any, a: Any, b: Any) -> Any:
    return tx.fd.ops.where(tx.tensor(cond), _operand(tx, a), _operand(tx, b))


@_entry("aten.clamp.default aten.clamp_min.default aten.clamp_max.default", "fusion.maximum, fusion.minimum")
def _clamp(tx: Translator, node: Any, x: Any, lo: Any = None, hi: Any = None) -> Any:
    if "clamp_max" in str(node.target):
        lo, hi = None, lo
    t = tx.tensor(x)
    if lo is not None:
        t = tx.fd.ops.maximum(t, _operand(tx, lo))
    if hi is not None:
        t = tx.fd.ops.minimum(t, _operand(tx, hi))
    return t


@_entry("prims.fma.default", "fusion.fma (fusion.mul, fusion.add for integers)",
        "one rounding, as prims.fma documents (its eager CPU kernel multiplies, then adds)")
def _fma(tx: Translator, node: Any, a: Any, b: Any, c: Any) -> Any:
    """`a * b + c` rounded once (16-bit floats in f32, then rounded to the node's dtype); an
    integer or bool fma is exact, so a mul and an add."""
    x, y, z = (_operand(tx, v) for v in (a, b, c))
    if not _val(node).dtype.is_floating_point:
        return tx.fd.ops.add(tx.fd.ops.mul(x, y), z)
    return fused_multiply_add(tx.fd.ops, x, y, z)


@_entry("aten.silu.default", "fusion.sigmoid, fusion.mul")
def _silu(tx: Translator, node: Any, x: Any) -> Any:
    return tx.fd.ops.silu(tx.tensor(x))


@_entry("aten.gelu.default", "fusion.erf or fusion.tanh, fusion.mul, fusion.add")
def _gelu(tx: Translator, node: Any, x: Any, approximate: str = "none") -> Any:
    o, t = tx.fd.ops, tx.tensor(x)
    if approximate == "tanh":
        inner = o.mul(o.add(t, o.mul(o.mul(o.mul(t, t), t), 0.044715)), math.sqrt(2 / math.pi))
        return o.mul(o.mul(t, 0.5), o.add(o.tanh(inner), 1.0))
    return o.mul(o.mul(t, 0.5), o.add(o.erf(o.mul(t, 1 / math.sqrt(2))), 1.0))


# -- casts and identities -------------------------------------------------------------


@_entry("prims.convert_element_type.default", "fusion.cast")
def _convert(tx: Translator, node: Any, x: Any, dtype: torch.dtype) -> Any:
    return tx.fd.ops.cast(tx.tensor(x), from_torch(dtype))


@_entry("aten._to_copy.default", "fusion.cast (or nothing)")
def _to_copy(tx: Translator, node: Any, x: Any, **kwargs: Any) -> Any:
    t = tx.tensor(x)
    val = _val(node)
    if val.device != node.args[0].meta["val"].device:
        raise Refused("a copy to another device")
    return tx.fd.ops.cast(t, from_torch(val.dtype))


@_entry("aten.alias.default aten.clone.default aten.lift_fresh_copy.default aten.detach.default "
        "aten.contiguous.default", "(none: the same value)")
def _identity(tx: Translator, node: Any, x: Any, **kwargs: Any) -> Any:
    return tx.tensor(x)


# -- views ----------------------------------------------------------------------------


@_entry("aten.view.default aten._unsafe_view.default aten.reshape.default", "fusion.reshape")
def _view(tx: Translator, node: Any, x: Any, shape: Any) -> Any:
    t = tx.tensor(x)
    target = tx.shape(_val(node))
    if list(node.args[0].meta["val"].shape) == list(_val(node).shape):
        return t
    return tx.fd.ops.reshape(t, target)


@_entry("aten.permute.default", "fusion.permute")
def _permute(tx: Translator, node: Any, x: Any, dims: Any) -> Any:
    t = tx.tensor(x)
    return tx.fd.ops.permute(t, _dims(dims, t.ndim))


@_entry("aten.t.default aten.transpose.int", "fusion.permute")
def _transpose(tx: Translator, node: Any, x: Any, d0: int = 0, d1: int = 1) -> Any:
    t = tx.tensor(x)
    if t.ndim < 2:
        return t
    perm = list(range(t.ndim))
    a, b = _dims([d0, d1], t.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return tx.fd.ops.permute(t, perm)


@_entry("aten.unsqueeze.default", "fusion.broadcast_in_dim")
def _unsqueeze(tx: Translator, node: Any, x: Any, dim: int) -> Any:
    t = tx.tensor(x)
    rank = t.ndim + 1
    d = normalize_dim(dim, rank)
    return tx.fd.ops.broadcast_in_dim(t, tx.shape(_val(node)), [k for k in range(rank) if k != d])


@_entry("aten.squeeze.dim aten.squeeze.dims aten.squeeze.default", "fusion.squeeze")
def _squeeze(tx: Translator, node: Any, x: Any, dims: Any = None) -> Any:
    t = tx.tensor(x)
    shape = node.args[0].meta["val"].shape
    ds = [d for d in _dims(dims, t.ndim) if isinstance(shape[d], int) and shape[d] == 1]
    return tx.fd.ops.squeeze(t, ds) if ds else t


@_entry("aten.expand.default", "fusion.broadcast_in_dim")
def _expand(tx: Translator, node: Any, x: Any, size: Any, implicit: bool = False) -> Any:
    t = tx.tensor(x)
    out = _val(node)
    k = out.dim() - t.ndim
    return tx.fd.ops.broadcast_in_dim(t, tx.shape(out), list(range(k, out.dim())))


_END = (1 << 63) - 1


def _end(tx: Translator, extent: Any, end: Any) -> Any:
    if end is None or (isinstance(end, int) and end >= _END):
        return tx.extent(extent)
    if isinstance(end, int) and isinstance(extent, int):
        return min(end, extent)
    return tx.extent(end)


@_entry("aten.slice.Tensor", "fusion.slice")
def _slice(tx: Translator, node: Any, x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    t = tx.tensor(x)
    src = node.args[0].meta["val"].shape
    d = normalize_dim(dim, t.ndim)
    starts = [0] * t.ndim
    ends = [tx.extent(s) for s in src]
    steps = [1] * t.ndim
    starts[d] = 0 if start is None else tx.extent(start)
    ends[d] = _end(tx, src[d], end)
    steps[d] = step
    if isinstance(starts[d], int) and isinstance(ends[d], int) and isinstance(src[d], int) and (
            starts[d] < 0 or ends[d] < 0 or starts[d] > src[d]):
        raise Refused("slice bounds out of range")
    return tx.fd.ops.slice(t, starts, ends, steps)


@_entry("aten.select.int", "fusion.slice, fusion.squeeze")
def _select(tx: Translator, node: Any, x: Any, dim: int, index: Any) -> Any:
    t = tx.tensor(x)
    return tx.fd.ops.select(t, tx.extent(index), normalize_dim(dim, t.ndim))


@_entry("aten.split.Tensor aten.split_with_sizes.default", "fusion.slice (one per piece)")
def _split(tx: Translator, node: Any, x: Any, sizes: Any, dim: int = 0) -> Any:
    t = tx.tensor(x)
    d = normalize_dim(dim, t.ndim)
    src = node.args[0].meta["val"].shape
    pieces = []
    start: Any = 0
    for piece in _val(node):
        starts = [0] * t.ndim
        ends = [tx.extent(s) for s in src]
        length = tx.extent(piece.shape[d])
        starts[d] = start
        stop = start + length if isinstance(start, int) and isinstance(length, int) else tx.fd.ops.add(start, length)
        ends[d] = stop
        pieces.append(tx.fd.ops.slice(t, starts, ends))
        start = stop
    return pieces


@_entry("aten.unbind.int", "fusion.slice, fusion.squeeze (one per piece)")
def _unbind(tx: Translator, node: Any, x: Any, dim: int = 0) -> Any:
    t = tx.tensor(x)
    d = normalize_dim(dim, t.ndim)
    return [tx.fd.ops.select(t, i, d) for i in range(len(_val(node)))]


@_entry("aten.cat.default", "fusion.cat")
def _cat(tx: Translator, node: Any, tensors: Any, dim: int = 0) -> Any:
    ts = [tx.tensor(t) for t in tensors]
    vals = [a.meta["val"] for a in node.args[0]]
    ts = [t for t, v in zip(ts, vals) if not (v.dim() == 1 and v.shape[0] == 0)]  # torch skips empty 1-D
    if len(ts) == 1:
        return ts[0]
    rank = ts[0].ndim
    return tx.fd.ops.cat(ts, normalize_dim(dim, rank))


@_entry("aten.constant_pad_nd.default", "fusion.pad")
def _pad(tx: Translator, node: Any, x: Any, pad: Any, value: Any = 0) -> Any:
    return tx.fd.ops.pad(tx.tensor(x), [tx.extent(p) for p in pad], value)


@_entry("aten.slice_scatter.default", "fusion.pad, fusion.iota, fusion.where")
def _slice_scatter(tx: Translator, node: Any, x: Any, src: Any, dim: int = 0, start: Any = None,
                   end: Any = None, step: int = 1) -> Any:
    """`x` with `src` written over `x[start:end]` along `dim`: src padded to x's extent and
    selected where the index along dim is in [start, end)."""
    o = tx.fd.ops
    t, s = tx.tensor(x), tx.tensor(src)
    if step != 1:
        raise Refused("a slice_scatter with a step")
    shape = node.args[0].meta["val"].shape
    d = normalize_dim(dim, t.ndim)
    lo = 0 if start is None else tx.extent(start)
    hi = _end(tx, shape[d], end)
    if any(isinstance(v, int) and v < 0 for v in (lo, hi)):
        raise Refused("slice_scatter bounds counted from the end")
    n = tx.extent(shape[d])
    widths: list[Any] = [0] * (2 * t.ndim)
    k = 2 * (t.ndim - 1 - d)  # torch.nn.functional.pad order: last dim first
    widths[k] = lo
    widths[k + 1] = n - hi if isinstance(n, int) and isinstance(hi, int) else o.sub(n, hi)
    padded = o.pad(s, widths, 0)
    idx = o.iota(n, 0, 1)
    # bounds that are index values compare as i64 (the iota's type)
    lo_v = lo if isinstance(lo, int) else o.cast(lo, from_torch(torch.int64))
    hi_v = hi if isinstance(hi, int) else o.cast(hi, from_torch(torch.int64))
    inside = o.logical_and(o.ge(idx, lo_v), o.lt(idx, hi_v))
    mask = o.broadcast_in_dim(inside, tx.shape(node.args[0].meta["val"]), [d])
    return o.where(mask, padded, t)


@_entry("prims.rev.default", "fusion.iota, fusion.index_select (one per reversed dim)",
        "aten.flip decomposes to it")
def _rev(tx: Translator, node: Any, x: Any, dims: Any) -> Any:
    """`x` reversed along `dims` (torch.flip; `prims.rev` is what its decomposition gives):
    per reversed dim d of extent n, `fusion.index_select` of the indices n - 1, ..., 1, 0
    along d (a `fusion.iota` of length n from n - 1 by -1; a `?` extent is its `index`
    value). A dim of static extent 0 or 1 is left as it is.

    Composed, not a dialect op of its own: a reversal is a copy (a torch tensor has no
    negative strides, so it is no view of its input), and a gather along d is that copy,
    fused into the kernel that reads it. The cost of composing: an index_select's source
    and index are buffers (`fusion-segment`), so each reversed dim adds a kernel writing
    its n indices, and reversing k dims gathers k times (k - 1 intermediate copies). Flips
    are rare in graphs; a view-like op with its own index map in every backend would save
    those, at the price of a new op in each lowering."""
    t = tx.tensor(x)
    o = tx.fd.ops
    shape = node.args[0].meta["val"].shape
    for d in sorted({normalize_dim(d, t.ndim) for d in dims}):
        n = tx.extent(shape[d])
        if isinstance(n, int) and n <= 1:
            continue
        last = n - 1 if isinstance(n, int) else o.sub(n, 1)
        t = o.index_select(t, o.iota(n, last, -1, from_torch(torch.int64)), d)
    return t


# -- reductions -----------------------------------------------------------------------


def _reduce(op: str) -> Build:
    def build(tx: Translator, node: Any, x: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
        t = tx.tensor(x)
        if isinstance(dim, bool):  # sum(x, keepdim) has no such overload; dim=bool is a misuse
            raise Refused("a bool dim")
        if t.ndim == 0:
            return t if dtype is None else tx.fd.ops.cast(t, from_torch(dtype))
        ds = _dims(dim, t.ndim)
        if dtype is not None:
            t = tx.fd.ops.cast(t, from_torch(dtype))
        return getattr(tx.fd.ops, op)(t, ds, keepdim)

    return build


for _names, _op in (("aten.sum.dim_IntList aten.sum.default", "sum"), ("aten.mean.dim aten.mean.default", "mean"),
                    ("aten.amax.default aten.max.default", "max"), ("aten.amin.default aten.min.default", "min"),
                    ("aten.prod.dim_int aten.prod.default", "prod")):
    _entry(_names, f"fusion.{_op}")(_reduce(_op))


@_entry("aten.any.dim aten.any.dims aten.any.default", "fusion.ne, fusion.sum, fusion.gt")
def _any(tx: Translator, node: Any, x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    t = tx.tensor(x)
    if t.ndim == 0:
        return tx.fd.ops.ne(t, 0)
    return tx.fd.ops.gt(tx.fd.ops.sum(tx.fd.ops.ne(t, 0), _dims(dim, t.ndim), keepdim), 0)


@_entry("aten.var_mean.correction", "fusion.var_mean")
def _var_mean(tx: Translator, node: Any, x: Any, dim: Any = None, *, correction: Any = None,
              keepdim: bool = False) -> Any:
    t = tx.tensor(x)
    var, mean = tx.fd.ops.var_mean(t, _dims(dim, t.ndim), 1 if correction is None else correction, keepdim)
    return [var, mean]


@_entry("aten.var.correction", "fusion.var_mean")
def _var(tx: Translator, node: Any, x: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Any:
    t = tx.tensor(x)
    return tx.fd.ops.var(t, _dims(dim, t.ndim), 1 if correction is None else correction, keepdim)


# -- creation ----------------------------------------------------------------------


@_entry("aten.full.default aten.new_full.default aten.zeros.default aten.ones.default aten.new_zeros.default "
        "aten.new_ones.default aten.empty.memory_format aten.new_empty.default aten.empty_strided.default "
        "aten.full_like.default aten.zeros_like.default aten.ones_like.default aten.empty_like.default "
        "aten.scalar_tensor.default", "fusion.full", "empty tensors are filled with 0")
def _full(tx: Translator, node: Any, *args: Any, **kwargs: Any) -> Any:
    val = _val(node)
    name = str(node.target)
    fill: Any
    if "full" in name:
        fill = args[-1] if "like" not in name else args[1]
        if "new_full" in name:
            fill = args[2]
    elif "ones" in name:
        fill = 1
    elif "scalar_tensor" in name:
        fill = args[0]
    else:
        fill = 0
    if isinstance(fill, torch.SymInt | torch.SymFloat):
        raise Refused("a symbolic fill value")
    if not isinstance(fill, bool | int | float):
        raise Refused(f"a fill value of type {type(fill).__name__}")
    return tx.fd.ops.full(tx.shape(val), fill, from_torch(val.dtype))


@_entry("prims.iota.default", "fusion.iota")
def _iota(tx: Translator, node: Any, length: Any, *, start: Any, step: Any, dtype: Any, **kwargs: Any) -> Any:
    return tx.fd.ops.iota(tx.extent(length), start, step, from_torch(dtype))


@_entry("aten.arange.start_step aten.arange.default aten.arange.start", "fusion.iota")
def _arange(tx: Translator, node: Any, *args: Any, **kwargs: Any) -> Any:
    val = _val(node)
    nums = [a for a in args if isinstance(a, int | float)]
    start, step = (0, 1) if len(nums) < 2 else (nums[0], nums[2] if len(nums) > 2 else 1)
    return tx.fd.ops.iota(tx.extent(val.shape[0]), start, step, from_torch(val.dtype))


# -- indexing -------------------------------------------------------------------------


@_entry("aten.cumsum.default", "fusion.cumsum (fusion.cast for a dtype)",
        "16-bit floats accumulate in f32 and round once, as torch's CUDA scan")
def _cumsum(tx: Translator, node: Any, x: Any, dim: int, dtype: Any = None) -> Any:
    t = tx.tensor(x)
    if dtype is not None:  # torch casts the input, then scans
        t = tx.fd.ops.cast(t, from_torch(dtype))
    return tx.fd.ops.cumsum(t, dim + t.ndim if dim < 0 else dim)


@_entry("aten.embedding.default", "fusion.embedding")
def _embedding(tx: Translator, node: Any, weight: Any, indices: Any, padding_idx: int = -1,
               scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    return tx.fd.ops.embedding_fwd(tx.tensor(indices), tx.tensor(weight))


@_entry("aten.gather.default", "fusion.gather")
def _gather(tx: Translator, node: Any, x: Any, dim: int, index: Any, sparse_grad: bool = False) -> Any:
    t = tx.tensor(x)
    return tx.fd.ops.gather(t, tx.tensor(index), normalize_dim(dim, t.ndim))


@_entry("aten.index_select.default", "fusion.index_select")
def _index_select(tx: Translator, node: Any, x: Any, dim: int, index: Any) -> Any:
    t = tx.tensor(x)
    return tx.fd.ops.index_select(t, tx.tensor(index), normalize_dim(dim, t.ndim))


@_entry("aten.index.Tensor", "fusion.index_select", "one 1-D index tensor on the first dim only")
def _index(tx: Translator, node: Any, x: Any, indices: Any) -> Any:
    t = tx.tensor(x)
    if len(indices) != 1 or indices[0] is None or tx.tensor(indices[0]).ndim != 1:
        raise Refused("indices other than one 1-D tensor on dim 0")
    return tx.fd.ops.index_select(t, tx.tensor(indices[0]), 0)


@_entry("aten.scatter.src aten.scatter.value", "fusion.scatter (fusion.full for a value)")
def _scatter(tx: Translator, node: Any, x: Any, dim: int, index: Any, src: Any) -> Any:
    t, idx = tx.tensor(x), tx.tensor(index)
    if not isinstance(src, Tensor):
        if not isinstance(src, bool | int | float):
            raise Refused("a symbolic scatter value")
        src = tx.fd.ops.full(tx.shape(node.args[2].meta["val"]), src, t.dtype())
    return tx.fd.ops.scatter(t, idx, tx.tensor(src), normalize_dim(dim, t.ndim))


def _accumulate_rows(tx: Translator, node: Any, acc: Any, index: Any, values: Any, mask: Any = None) -> Any:
    """`acc.index_put_([index], values, accumulate=True)` over acc's first dim (the embedding
    backward): index flattened to 1-D, values to [len(index), *acc.shape[1:]]; a masked
    position adds 0 at row 0 (its index may be out of range)."""
    o = tx.fd.ops
    a, idx, vals = tx.tensor(acc), tx.tensor(index), tx.tensor(values)
    acc_val = node.args[0].meta["val"]
    if acc_val.dtype not in (torch.float32, torch.float64):
        raise Refused(f"an accumulation in {acc_val.dtype} (atomic adds of f32 and f64 only)")
    idx_val = (node.args[2] if mask is not None else node.args[1])[0].meta["val"]
    vals_val = node.args[3 if mask is not None else 2].meta["val"]
    rows = tx.extent(idx_val.numel())
    if list(vals_val.shape) != list(idx_val.shape) + list(acc_val.shape[1:]):
        raise Refused("values that are not index.shape + acc.shape[1:]")
    if mask is not None:
        m = tx.tensor(mask)
        mask_val = node.args[1].meta["val"]
        vals = o.where(m, vals, 0.0)
        if list(mask_val.shape[:idx_val.dim()]) != list(idx_val.shape) or any(
                not (isinstance(e, int) and e == 1) for e in mask_val.shape[idx_val.dim():]):
            raise Refused("a mask that is not index.shape + [1, ...]")
        idx = o.where(o.reshape(m, tx.shape(idx_val)), idx, 0)
    idx = o.reshape(idx, [rows])
    vals = o.reshape(vals, [rows, *tx.shape(acc_val)[1:]])
    return o.index_put_accumulate(a, idx, vals)


@_entry("aten._unsafe_masked_index_put_accumulate.default", "fusion.where, fusion.reshape, fusion.index_put_accumulate",
        "f32 and f64 only (atomic adds)")
def _masked_index_put(tx: Translator, node: Any, x: Any, mask: Any, indices: Any, values: Any) -> Any:
    if len(indices) != 1 or indices[0] is None:
        raise Refused("indices other than one tensor on dim 0")
    return _accumulate_rows(tx, node, x, indices[0], values, mask)


@_entry("aten.index_put.default", "fusion.reshape, fusion.index_put_accumulate",
        "accumulate=True, one index tensor on dim 0, f32 and f64 only")
def _index_put(tx: Translator, node: Any, x: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    if not accumulate or len(indices) != 1 or indices[0] is None:
        raise Refused("index_put without accumulate, or with indices other than one tensor on dim 0")
    return _accumulate_rows(tx, node, x, indices[0], values)


# -- matmuls (library kernels of the fusion dialect) --------------------------------------


@_entry("aten.mm.default aten.bmm.default aten.matmul.default", "fusion.matmul (a library kernel)")
def _mm(tx: Translator, node: Any, a: Any, b: Any) -> Any:
    return tx.fd.ops.matmul(tx.tensor(a), tx.tensor(b))


@_entry("aten.addmm.default", "fusion.linear (a library kernel: input @ weight^T + bias)")
def _addmm(tx: Translator, node: Any, bias: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    if beta != 1 or alpha != 1:
        raise Refused("addmm with beta or alpha")
    bias_t, a_t, b_t = tx.tensor(bias), tx.tensor(a), tx.tensor(b)
    if bias_t.ndim != 1:
        raise Refused("a bias that is not 1-D")
    return tx.fd.ops.linear(a_t, tx.fd.ops.permute(b_t, [1, 0]), bias_t)


def markdown_table() -> str:
    """The rows of docs/torch-compile-ops.md (ATen op, fusion ops, note), sorted."""
    rows = ["| ATen op | fusion ops | note |", "| --- | --- | --- |"]
    for name in sorted(TABLE):
        e = TABLE[name]
        rows.append(f"| `{name}` | {e.fusion} | {e.note} |")
    return "\n".join(rows) + "\n"


PAGE_HEAD = """# ATen ops the torch.compile backend translates

Generated from `allotment/frontend/torch_compile/aten_table.py` (`TABLE`) by
`python -m allotment.frontend.torch_compile.aten_table docs/torch-compile-ops.md`;
`tests/torch_compile/test_backend.py` checks that this page is the table. Every ATen op
not listed here, and every node an entry refuses, runs as an ATen call inside the fusion
function (`fusion.aten`: docs/torch-compile.md). The translator casts each result to the
node's dtype, so 16-bit floats round once per op, as in torch.

"""


def page() -> str:
    """docs/torch-compile-ops.md."""
    return PAGE_HEAD + markdown_table()


if __name__ == "__main__":
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as f:
        f.write(page())
