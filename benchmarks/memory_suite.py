"""Peak memory of multi-kernel fusions: Allotment against torch eager and torch.compile.

Twelve fusions from real models, each written once with nvFuser's Python API
(`allotment.FusionDefinition`) and once as a torch function. For each, in one
process and on the same inputs, it checks Allotment's outputs against the
torch function's, then measures the peak memory of one call above the memory
held before it (inputs, weights), over the bytes of the call's outputs:
`torch.cuda.max_memory_allocated` after `reset_peak_memory_stats`. Eager is
the torch function, torch.compile is the same function compiled (default
mode). Lower is better; 1.0 means nothing but the outputs was allocated.

Lower bounds, checked in the same run against every measured peak (each side's peak
plus the inputs, which the caller holds through the call):

- `bound`: inputs + outputs. Any schedule holds the inputs through the call and all the
  outputs at its end; each of these fusions also has a schedule that holds nothing else
  of size (a fused attention or MLP kernel keeps its intermediates in tiles on chip), so
  nothing more is true of every schedule. A measured peak below it is a bug of the
  measurement: flagged, and the exit status is 2.
- `bound_library`: the same, or more where a matmul runs as a library kernel (every
  matmul reads materialized operands and writes its whole result): at each matmul's
  launch its operands and result that are not inputs are live, so inputs + the largest of
  (outputs, any matmul's non-input operands and result). The matmuls and their operands
  are read off the torch function's own aten calls (`mm`, `addmm`, `bmm`, `baddbmm`).
  It bounds the schedules that keep matmuls as library calls (eager, torch.compile's
  default, Allotment's library matmuls); a peak under it is reported, not flagged.

Peak over inputs + outputs is reported for every side. The plan's own figures for the
same shapes (`allotment.memory_plan`) stay as a self-check: planned peak over the most
bytes live at one point of the plan's own schedule (`plan/most-live`, 1.000 by
construction when the plan packs perfectly; it is not a lower bound), Allotment's measured
peak over its planned peak, and the planned and without-reuse bytes. On the GPU the plan
counts every buffer in torch's 512-byte allocator blocks (`block_bytes=512`), the unit
`max_memory_allocated` measures in.

    python benchmarks/memory_suite.py [--scale 1.0] [--only mlp,rotary] [--out FILE.json]
    python benchmarks/memory_suite.py --device cpu --scale 0.002   # correctness only (interpreter)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import peak_memory  # noqa: E402 (benchmarks/peak_memory.py)

from allotment import DataType, FusionDefinition  # noqa: E402

BF16 = torch.bfloat16


@dataclass
class Case:
    """One fusion: its definition, its torch twin and its inputs at a given scale."""

    name: str
    define: Callable[[FusionDefinition, Sequence[torch.Tensor]], None]
    torch_fn: Callable[..., tuple[torch.Tensor, ...]]
    inputs: Callable[[float, str], list[torch.Tensor]]
    tol: float = 5e-2


def _t(fd: FusionDefinition, rank: int, dtype: DataType = DataType.BFloat16):  # noqa: ANN202
    return fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=dtype)


def _n(base: int, scale: float, multiple: int = 8) -> int:
    return max(multiple, int(base * scale) // multiple * multiple)


def _randn(*shape: int, device: str, dtype: torch.dtype = BF16, std: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, device=device, dtype=torch.float32) * std).to(dtype)


# -- 1. transformer MLP: linear, tanh-GELU, linear ---------------------------------


def _gelu(fd: FusionDefinition, h):  # noqa: ANN001, ANN202
    inner = fd.ops.mul(fd.ops.add(h, fd.ops.mul(fd.ops.mul(fd.ops.mul(h, h), h), 0.044715)), 0.7978845608028654)
    return fd.ops.mul(fd.ops.mul(h, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))


def mlp_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, w1, b1, w2, b2 = _t(fd, 2), _t(fd, 2), _t(fd, 1), _t(fd, 2), _t(fd, 1)
    h = fd.ops.linear(x, w1, b1)
    g = fd.ops.cast(_gelu(fd, h), DataType.BFloat16)
    fd.add_output(fd.ops.linear(g, w2, b2))


def mlp_torch(x, w1, b1, w2, b2):  # noqa: ANN001, ANN201
    return (F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2),)


def mlp_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h = _n(8192, scale), _n(4096, scale)
    return [_randn(t, h, device=device), _randn(4 * h, h, device=device, std=h**-0.5), _randn(4 * h, device=device),
            _randn(h, 4 * h, device=device, std=(4 * h) ** -0.5), _randn(h, device=device)]


# -- 2. SwiGLU MLP ---------------------------------------------------------------


def swiglu_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, w1, w3, w2 = _t(fd, 2), _t(fd, 2), _t(fd, 2), _t(fd, 2)
    a = fd.ops.linear(x, w1)
    b = fd.ops.linear(x, w3)
    s = fd.ops.cast(fd.ops.mul(fd.ops.mul(a, fd.ops.sigmoid(a)), b), DataType.BFloat16)
    fd.add_output(fd.ops.linear(s, w2))


def swiglu_torch(x, w1, w3, w2):  # noqa: ANN001, ANN201
    return (F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2),)


def swiglu_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h, f = _n(8192, scale), _n(4096, scale), _n(11008, scale)
    return [_randn(t, h, device=device), _randn(f, h, device=device, std=h**-0.5),
            _randn(f, h, device=device, std=h**-0.5), _randn(h, f, device=device, std=f**-0.5)]


# -- 3. attention scores, softmax, weighted sum ------------------------------------


def attention_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    q, kt, v = _t(fd, 3), _t(fd, 3), _t(fd, 3)
    s = fd.ops.mul(fd.ops.matmul(q, kt), 0.125)
    m = fd.ops.max(s, dims=[2], keepdim=True)
    e = fd.ops.exp(fd.ops.sub(s, m))
    p = fd.ops.div(e, fd.ops.sum(e, dims=[2], keepdim=True))
    fd.add_output(fd.ops.matmul(fd.ops.cast(p, DataType.BFloat16), v))


def attention_torch(q, kt, v):  # noqa: ANN001, ANN201
    return (torch.matmul(torch.softmax((q @ kt).float() * 0.125, dim=-1).to(q.dtype), v),)


def attention_inputs(scale: float, device: str) -> list[torch.Tensor]:
    b, s, d = _n(32, scale, 1), _n(4096, scale), 64
    return [_randn(b, s, d, device=device), _randn(b, d, s, device=device), _randn(b, s, d, device=device)]


# -- 4. RMSNorm backward: dx (row reductions) and dw (a column reduction) ----------


def rmsnorm_bwd_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, w, dy = _t(fd, 2), _t(fd, 1), _t(fd, 2)
    rstd = fd.define_tensor(shape=[-1, 1], contiguity=[True, True], dtype=DataType.Float)
    xf, dyf, wf = fd.ops.cast(x, DataType.Float), fd.ops.cast(dy, DataType.Float), fd.ops.cast(w, DataType.Float)
    xhat = fd.ops.mul(xf, rstd)
    dw = fd.ops.sum(fd.ops.mul(dyf, xhat), dims=[0])
    g = fd.ops.mul(dyf, wf)
    c = fd.ops.mean(fd.ops.mul(g, xhat), dims=[1], keepdim=True)
    dx = fd.ops.mul(fd.ops.sub(g, fd.ops.mul(xhat, c)), rstd)
    fd.add_output(fd.ops.cast(dx, DataType.BFloat16))
    fd.add_output(fd.ops.cast(dw, DataType.BFloat16))


def rmsnorm_bwd_torch(x, w, dy, rstd):  # noqa: ANN001, ANN201
    xhat = x.float() * rstd
    g = dy.float() * w.float()
    dx = (g - xhat * (g * xhat).mean(-1, keepdim=True)) * rstd
    return dx.to(x.dtype), (dy.float() * xhat).sum(0).to(x.dtype)


def rmsnorm_bwd_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h = _n(16384, scale), _n(4096, scale)
    x = _randn(t, h, device=device)
    rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5)
    return [x, _randn(h, device=device), _randn(t, h, device=device), rstd]


# -- 5. rotary embedding: two slices, a negation, a cat, multiply-adds -------------


def rotary_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    b, s, d = inputs[0].shape  # static extents: slices of `?` extents need run-time values (not yet)
    half = d // 2
    x = fd.define_tensor(shape=[b, s, d], contiguity=[True] * 3, dtype=DataType.BFloat16)
    cos = fd.define_tensor(shape=[s, d], contiguity=[True] * 2, dtype=DataType.BFloat16)
    sin = fd.define_tensor(shape=[s, d], contiguity=[True] * 2, dtype=DataType.BFloat16)
    x1 = fd.ops.slice(x, [0, 0, 0], [b, s, half])
    x2 = fd.ops.slice(x, [0, 0, half], [b, s, d])
    rot = fd.ops.cat([fd.ops.neg(x2), x1], dim=2)
    cb = fd.ops.broadcast_in_dim(cos, [b, s, d], [1, 2])
    sb = fd.ops.broadcast_in_dim(sin, [b, s, d], [1, 2])
    fd.add_output(fd.ops.cast(fd.ops.add(fd.ops.mul(x, cb), fd.ops.mul(rot, sb)), DataType.BFloat16))


def rotary_torch(x, cos, sin):  # noqa: ANN001, ANN201
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return ((x.float() * cos.float() + rot.float() * sin.float()).to(x.dtype),)


def rotary_inputs(scale: float, device: str) -> list[torch.Tensor]:
    b, s, d = _n(64, scale, 1), _n(4096, scale), 128
    return [_randn(b, s, d, device=device), _randn(s, d, device=device), _randn(s, d, device=device)]


# -- 6. concat-heavy: three producers written into one cat -------------------------


def concat_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, y, z = _t(fd, 2), _t(fd, 2), _t(fd, 2)
    a = fd.ops.cast(fd.ops.exp(x), DataType.BFloat16)
    b = fd.ops.neg(y)
    c = fd.ops.cast(fd.ops.tanh(z), DataType.BFloat16)
    fd.add_output(fd.ops.cat([a, b, c], dim=1))


def concat_torch(x, y, z):  # noqa: ANN001, ANN201
    return (torch.cat([torch.exp(x), -y, torch.tanh(z)], dim=1),)


def concat_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h = _n(16384, scale), _n(2048, scale)
    return [_randn(t, h, device=device), _randn(t, 2 * h, device=device), _randn(t, h, device=device)]


# -- 7. a graph whose program order is bad for peak memory --------------------------


def bad_order_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, wa, wb, wc = _t(fd, 2), _t(fd, 2), _t(fd, 2), _t(fd, 2)
    a, b, c = fd.ops.linear(x, wa), fd.ops.linear(x, wb), fd.ops.linear(x, wc)
    ra = fd.ops.sum(fd.ops.mul(a, a), dims=[1])
    rb = fd.ops.sum(fd.ops.mul(b, b), dims=[1])
    rc = fd.ops.sum(fd.ops.mul(c, c), dims=[1])
    fd.add_output(fd.ops.add(fd.ops.add(ra, rb), rc))


def bad_order_torch(x, wa, wb, wc):  # noqa: ANN001, ANN201
    a, b, c = F.linear(x, wa), F.linear(x, wb), F.linear(x, wc)
    return (a.float().pow(2).sum(1) + b.float().pow(2).sum(1) + c.float().pow(2).sum(1),)


def bad_order_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h, f = _n(8192, scale), _n(1024, scale), _n(8192, scale)
    return [_randn(t, h, device=device)] + [_randn(f, h, device=device, std=h**-0.5) for _ in range(3)]


# -- 8. Adam step (outputs: new parameter and moments) ------------------------------


def adam_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    p, g, m, v = (_t(fd, 1, DataType.Float) for _ in range(4))
    lr, b1, b2, eps, c1, c2 = 1e-3, 0.9, 0.999, 1e-8, 1 / (1 - 0.9**10), 1 / (1 - 0.999**10)
    m2 = fd.ops.add(fd.ops.mul(m, b1), fd.ops.mul(g, 1 - b1))
    v2 = fd.ops.add(fd.ops.mul(v, b2), fd.ops.mul(fd.ops.mul(g, g), 1 - b2))
    step = fd.ops.div(fd.ops.mul(m2, c1 * lr), fd.ops.add(fd.ops.sqrt(fd.ops.mul(v2, c2)), eps))
    fd.add_output(fd.ops.sub(p, step))
    fd.add_output(m2)
    fd.add_output(v2)


def adam_torch(p, g, m, v):  # noqa: ANN001, ANN201
    lr, b1, b2, eps, c1, c2 = 1e-3, 0.9, 0.999, 1e-8, 1 / (1 - 0.9**10), 1 / (1 - 0.999**10)
    m2 = m * b1 + g * (1 - b1)
    v2 = v * b2 + g * g * (1 - b2)
    return p - m2 * (c1 * lr) / (torch.sqrt(v2 * c2) + eps), m2, v2


def adam_inputs(scale: float, device: str) -> list[torch.Tensor]:
    n = _n(64 * 2**20, scale)
    return [_randn(n, device=device, dtype=torch.float32) for _ in range(3)] + [
        torch.rand(n, device=device, dtype=torch.float32)]


# -- 9. residual + LayerNorm (two outputs: the normalized and the residual sum) ----


def residual_ln_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, r, w, b = _t(fd, 2), _t(fd, 2), _t(fd, 1), _t(fd, 1)
    s = fd.ops.add(x, r)
    var, mean = fd.ops.var_mean(s, dims=[1], correction=0, keepdim=True)
    y = fd.ops.mul(fd.ops.sub(s, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
    y = fd.ops.add(fd.ops.mul(y, w), b)
    fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    fd.add_output(fd.ops.cast(s, DataType.BFloat16))


def residual_ln_torch(x, r, w, b):  # noqa: ANN001, ANN201
    s = x.float() + r.float()
    return F.layer_norm(s, (s.shape[-1],), w.float(), b.float(), 1e-5).to(x.dtype), s.to(x.dtype)


def residual_ln_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h = _n(16384, scale), _n(4096, scale)
    return [_randn(t, h, device=device), _randn(t, h, device=device), _randn(h, device=device), _randn(h, device=device)]


# -- 10. RMSNorm then a linear projection -------------------------------------------


def rmsnorm_linear_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, w, wp = _t(fd, 2), _t(fd, 1), _t(fd, 2)
    xf = fd.ops.cast(x, DataType.Float)
    inv = fd.ops.rsqrt(fd.ops.add(fd.ops.mean(fd.ops.mul(xf, xf), dims=[1], keepdim=True), 1e-5))
    n = fd.ops.cast(fd.ops.mul(fd.ops.mul(xf, inv), fd.ops.cast(w, DataType.Float)), DataType.BFloat16)
    fd.add_output(fd.ops.linear(n, wp))


def rmsnorm_linear_torch(x, w, wp):  # noqa: ANN001, ANN201
    xf = x.float()
    n = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()).to(x.dtype)
    return (F.linear(n, wp),)


def rmsnorm_linear_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h = _n(16384, scale), _n(4096, scale)
    return [_randn(t, h, device=device), _randn(h, device=device), _randn(h, h, device=device, std=h**-0.5)]


# -- 11. softmax backward ------------------------------------------------------------


def softmax_bwd_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    y, dy = _t(fd, 2), _t(fd, 2)
    yf, dyf = fd.ops.cast(y, DataType.Float), fd.ops.cast(dy, DataType.Float)
    s = fd.ops.sum(fd.ops.mul(yf, dyf), dims=[1], keepdim=True)
    fd.add_output(fd.ops.cast(fd.ops.mul(yf, fd.ops.sub(dyf, s)), DataType.BFloat16))


def softmax_bwd_torch(y, dy):  # noqa: ANN001, ANN201
    yf, dyf = y.float(), dy.float()
    return ((yf * (dyf - (yf * dyf).sum(-1, keepdim=True))).to(y.dtype),)


def softmax_bwd_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, h = _n(16384, scale), _n(8192, scale)
    return [torch.softmax(_randn(t, h, device=device).float(), -1).to(BF16), _randn(t, h, device=device)]


# -- 12. cross-entropy-like: log-softmax, then the mean loss over rows --------------


def cross_entropy_define(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> None:
    x, onehot = _t(fd, 2), _t(fd, 2)
    xf = fd.ops.cast(x, DataType.Float)
    m = fd.ops.max(xf, dims=[1], keepdim=True)
    lse = fd.ops.add(fd.ops.log(fd.ops.sum(fd.ops.exp(fd.ops.sub(xf, m)), dims=[1], keepdim=True)), m)
    picked = fd.ops.sum(fd.ops.mul(xf, fd.ops.cast(onehot, DataType.Float)), dims=[1], keepdim=True)
    fd.add_output(fd.ops.mean(fd.ops.sub(lse, picked), dims=[0, 1]))


def cross_entropy_torch(x, onehot):  # noqa: ANN001, ANN201
    return (F.cross_entropy(x.float(), onehot.float().argmax(1)),)


def cross_entropy_inputs(scale: float, device: str) -> list[torch.Tensor]:
    t, v = _n(4096, scale), _n(32000, scale)
    labels = torch.randint(0, v, (t,), device=device)
    return [_randn(t, v, device=device), F.one_hot(labels, v).to(BF16)]


CASES = [
    Case("mlp", mlp_define, mlp_torch, mlp_inputs),
    Case("swiglu", swiglu_define, swiglu_torch, swiglu_inputs),
    Case("attention", attention_define, attention_torch, attention_inputs),
    Case("rmsnorm_bwd", rmsnorm_bwd_define, rmsnorm_bwd_torch, rmsnorm_bwd_inputs),
    Case("rotary", rotary_define, rotary_torch, rotary_inputs),
    Case("concat", concat_define, concat_torch, concat_inputs),
    Case("bad_order", bad_order_define, bad_order_torch, bad_order_inputs),
    Case("adam", adam_define, adam_torch, adam_inputs, tol=1e-4),
    Case("residual_ln", residual_ln_define, residual_ln_torch, residual_ln_inputs),
    Case("rmsnorm_linear", rmsnorm_linear_define, rmsnorm_linear_torch, rmsnorm_linear_inputs),
    Case("softmax_bwd", softmax_bwd_define, softmax_bwd_torch, softmax_bwd_inputs),
    Case("cross_entropy", cross_entropy_define, cross_entropy_torch, cross_entropy_inputs),
]


def measured_peak(fn: Callable[[], Sequence[torch.Tensor]], device: str) -> tuple[float, int]:
    """(peak bytes allocated by one call above what was held before it, its output bytes)."""
    if device != "cuda":
        return math.nan, 1
    return peak_memory.measured_peak(fn)


def planned(fd: FusionDefinition, inputs: Sequence[torch.Tensor]) -> dict:
    """The plan's own figures for these inputs (`allotment.memory_plan`), in bytes."""
    from allotment import memory_plan
    from allotment.ir import find_function, parse_module

    text = fd.ir()
    names = [a.name_hint for a in find_function(parse_module(text)).body.block.args]
    block = 512 if inputs[0].is_cuda else 1  # torch's CUDA caching allocator rounds each block to 512 B
    plan = memory_plan(text, {n: tuple(x.shape) for n, x in zip(names, inputs)}, block_bytes=block)
    return {"planned_peak": plan.planned_peak, "plan_most_live": plan.lower_bound, "without_reuse": plan.without_reuse}


MATMULS = ("mm", "addmm", "bmm", "baddbmm")
"""The aten matmuls whose operands `library_operand_bytes` counts."""


def library_operand_bytes(fn: Callable[..., Sequence[torch.Tensor]], inputs: Sequence[torch.Tensor]) -> int:
    """The most bytes of one matmul's operands and result that are not inputs, over the
    matmuls `fn(*inputs)` calls (aten level, read with a dispatch mode; 0 without matmuls)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    held = {x.untyped_storage().data_ptr() for x in inputs}
    most = [0]

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            out = func(*args, **(kwargs or {}))
            if func.overloadpacket.__name__ in MATMULS:
                seen: dict[int, int] = {}
                for t in [a for a in args if isinstance(a, torch.Tensor)] + [out]:
                    ptr = t.untyped_storage().data_ptr()
                    if ptr not in held:
                        seen[ptr] = t.untyped_storage().nbytes()
                most[0] = max(most[0], sum(seen.values()))
            return out

    with Watch():
        fn(*inputs)
    return most[0]


def bounds(case: Case, inputs: Sequence[torch.Tensor], out_bytes: int) -> dict[str, int]:
    """`bound` and `bound_library` (module docstring) in bytes."""
    in_bytes = sum(x.numel() * x.element_size() for x in inputs)
    lib = library_operand_bytes(case.torch_fn, inputs)
    return {"input_bytes": in_bytes, "bound": in_bytes + out_bytes, "bound_library": in_bytes + max(out_bytes, lib)}


def close(a: torch.Tensor, b: torch.Tensor, tol: float) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), rtol=tol, atol=tol)


def run_case(case: Case, scale: float, device: str, compiled: bool) -> dict:
    torch.manual_seed(0)
    inputs = case.inputs(scale, device)
    with FusionDefinition() as fd:
        case.define(fd, inputs)
    ours = fd.execute(inputs)
    ref = case.torch_fn(*inputs)
    ok = len(ours) == len(ref) and all(close(a, b, case.tol) for a, b in zip(ours, ref))
    del ours, ref
    row = {"fusion": case.name, "shapes": [list(x.shape) for x in inputs], "correct": ok, **planned(fd, inputs)}
    peak, out_bytes = measured_peak(lambda: fd.execute(inputs), device)
    row.update(output_bytes=out_bytes, allotment_peak=peak, allotment=peak / out_bytes)
    row.update(bounds(case, inputs, out_bytes))
    peaks = {"allotment": peak, "eager": measured_peak(lambda: case.torch_fn(*inputs), device)[0]}
    row["eager"] = peaks["eager"] / out_bytes
    if compiled:
        cfn = torch.compile(case.torch_fn)
        cfn(*inputs)
        peaks["compile"] = measured_peak(lambda: cfn(*inputs), device)[0]
        row["compile"] = peaks["compile"] / out_bytes
    check_bounds(row, peaks)
    return row


def check_bounds(row: dict, peaks: dict[str, float]) -> None:
    """Each side's peak with the inputs, over inputs + outputs, and the bounds above any of
    them: `violations` (the bound: a bug) and `under_library_bound` (a schedule that keeps
    some matmul operand on chip)."""
    row["violations"], row["under_library_bound"] = [], []
    for side, p in peaks.items():
        if not math.isfinite(p):
            continue
        total = row["input_bytes"] + p
        row[f"{side}_peak_total"] = total
        row[f"{side}_over_in_out"] = total / row["bound"]
        if total < row["bound"]:
            row["violations"].append(side)
        if total < row["bound_library"]:
            row["under_library_bound"].append(side)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every extent (default 1.0)")
    p.add_argument("--only", default="", help="comma-separated fusion names")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--out", help="write the rows as JSON")
    args = p.parse_args(argv)
    only = {n for n in args.only.split(",") if n}
    rows = []
    print(f"{'fusion':16} {'correct':8} {'allotment':>10} {'eager':>10} {'compile':>10} {'a/(in+out)':>10} "
          f"{'e/(in+out)':>10} {'c/(in+out)':>10} {'lib/(in+out)':>12} {'plan/most-live':>14} "
          f"{'measured/plan':>13} {'planned MiB':>11} {'no-reuse MiB':>12} bound above a peak   "
          "(peak / output bytes; peak with inputs / (inputs + outputs))")
    for case in CASES:
        if only and case.name not in only:
            continue
        row = run_case(case, args.scale, args.device, not args.no_compile and args.device == "cuda")
        rows.append(row)
        print(f"{row['fusion']:16} {str(row['correct']):8} {row['allotment']:10.2f} {row['eager']:10.2f} "
              f"{row.get('compile', math.nan):10.2f} {row.get('allotment_over_in_out', math.nan):10.3f} "
              f"{row.get('eager_over_in_out', math.nan):10.3f} {row.get('compile_over_in_out', math.nan):10.3f} "
              f"{row['bound_library'] / row['bound']:12.3f} {row['planned_peak'] / row['plan_most_live']:14.3f} "
              f"{row['allotment_peak'] / row['planned_peak']:13.3f} {row['planned_peak'] / 2**20:11.1f} "
              f"{row['without_reuse'] / 2**20:12.1f} {','.join(row['violations']) or 'none'}"
              + (f" (under the library bound: {','.join(row['under_library_bound'])})" if row["under_library_bound"] else ""),
              flush=True)
    violations = [f"{r['fusion']}: {s}" for r in rows for s in r["violations"]]
    print(f"bound above a measured peak: {len(violations)}" + (f" ({', '.join(violations)}): a measurement bug"
                                                                if violations else ""))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    if not all(r["correct"] for r in rows):
        return 1
    return 2 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
