"""Run-time support of generated host programs: input checks, block sizes, launches.

Everything a generated `run()` calls besides torch lives here, so that the
generated code stays short and the internal Triton APIs are wrapped in one place.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import torch

from allotment.errors import RunError


class AllotmentRuntimeError(RunError):
    """Inputs that do not satisfy the fusion (dtype, device, shape, extents)."""


_KIND = {"float": (float, int), "int": (int,), "bool": (bool, int)}


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def check_tensor(
    x: Any, name: str, dtype: torch.dtype, shape: Sequence[int | None], device: torch.device, contiguous: bool
) -> torch.Tensor:
    """Checks one input tensor against its argument type; returns it (or a contiguous copy)."""
    if (
        type(x) is not torch.Tensor and not isinstance(x, torch.Tensor)
        or x.dtype is not dtype
        or x.device != device
        or x.dim() != len(shape)
    ):
        _bad_tensor(x, name, dtype, shape, device)
    sizes = x.shape
    for d, want in enumerate(shape):
        if want is not None and sizes[d] != want:
            raise AllotmentRuntimeError(f"input {name}: dimension {d} has extent {sizes[d]}, the fusion says {want}")
    if contiguous and not x.is_contiguous():
        x = x.contiguous()  # views of this input are computed for row-major storage
    return x


def _bad_tensor(x: Any, name: str, dtype: torch.dtype, shape: Sequence[int | None], device: torch.device) -> None:
    if not isinstance(x, torch.Tensor):
        raise AllotmentRuntimeError(f"input {name}: expected a tensor, got {type(x).__name__}")
    if x.dtype != dtype:
        raise AllotmentRuntimeError(f"input {name}: dtype {x.dtype} does not match the fusion's {dtype}")
    if x.device != device:
        raise AllotmentRuntimeError(f"input {name} is on {x.device}, other inputs on {device}")
    raise AllotmentRuntimeError(f"input {name}: rank {x.dim()} does not match the fusion's {len(shape)}")


def check_scalar(x: Any, name: str, kind: str) -> Any:
    if isinstance(x, torch.Tensor) and x.dim() == 0:
        x = x.item()
    if isinstance(x, bool) and kind != "bool":
        x = int(x)
    if not isinstance(x, _KIND[kind]):
        raise AllotmentRuntimeError(f"input {name}: expected a {kind} scalar, got {type(x).__name__}")
    return x


def check(predicate: str, a: int, b: int, message: str) -> None:
    ok = {"eq": a == b, "ge": a >= b, "divisible": b != 0 and a % b == 0}[predicate]
    if not ok:
        raise AllotmentRuntimeError(f"{message} (got {a} and {b})")


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def trunc_rem(a: int, b: int) -> int:
    return a - b * trunc_div(a, b)


def float_div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        return math.copysign(math.inf, a) if a else math.nan


def round_float(x: float) -> float:
    return float(torch.tensor(x, dtype=torch.float32))


def huge_storage(*tensors: torch.Tensor) -> bool:
    """Whether a storage has 2^31 elements or more: kernels then index in 64 bits
    (a view of it can point anywhere in it)."""
    for t in tensors:
        if t.untyped_storage().nbytes() // t.element_size() >= 2**31:
            return True
    return False


def _pow2(n: int) -> int:
    return 1 << max(0, (max(1, n) - 1).bit_length())


PERSISTENT_MAX_ELEMENTS = int(os.environ.get("ALLOT_PERSISTENT_MAX", "32768"))
"""A reduced row of up to this many elements is kept in registers (one pass over
memory); a longer one is looped over (a pass per reduction level, plus one)."""

TILE = 4096
"""Elements per program tile (rows x columns)."""


def _env_blocks(name: str) -> tuple[int, int, int] | None:
    """ALLOT_<NAME>_BLOCKS=BMxBNxWARPS overrides a heuristic (for tuning runs)."""
    spec = os.environ.get(f"ALLOT_{name}_BLOCKS")
    if not spec:
        return None
    bm, bn, warps = (int(v) for v in spec.split("x"))
    return bm, bn, warps


_PW = _env_blocks("POINTWISE")


def pointwise_blocks(m: int, n: int) -> tuple[int, int, int]:
    if _PW is not None:
        bm, bn, warps = _PW
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    bn = min(_pow2(n), 1024)
    bm = min(_pow2(m), max(1, TILE // bn))
    return bm, bn, 4 if bm * bn <= 1024 else 8


def persistent_blocks(m: int, n: int) -> tuple[int, int, int]:
    bn = _pow2(n)
    bm = min(_pow2(m), max(1, TILE // bn))
    elems = bm * bn
    warps = 4 if elems <= 2048 else (8 if elems <= 8192 else (16 if elems <= 16384 else 32))
    return bm, bn, warps


def looped_blocks(m: int, n: int) -> tuple[int, int, int]:
    return 1, min(_pow2(n), TILE), 8


def launch(kernel: Any, grid: tuple[int, ...], args: tuple, bm: int, bn: int, use_i64: bool, warps: int) -> None:
    from allotment.backend.launch import launch as _launch

    _launch(kernel, grid, args, {"BLOCK_M": bm, "BLOCK_N": bn, "USE_I64": use_i64}, warps)


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    if a.dim() == 1 or b.dim() == 1:  # torch.matmul(out=) resizes a 1-D result (deprecated): copy it
        out.copy_(torch.matmul(a, b))
        return
    torch.matmul(a, b, out=out)


def linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor) -> None:
    if w.dim() == 2 and x.dim() >= 2 and out.is_contiguous():
        x2 = x.reshape(-1, x.shape[-1])
        o2 = out.view(-1, out.shape[-1])
        if bias is not None:
            torch.addmm(bias, x2, w.t(), out=o2)
        else:
            torch.mm(x2, w.t(), out=o2)
        return
    out.copy_(torch.nn.functional.linear(x, w, bias))
