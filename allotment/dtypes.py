"""Element types: the one table that maps fusion element types to torch and Triton.

Every layer that needs a dtype (the reference evaluator, the size planner, the
host and Triton code generators, the frontend) asks this module, so that the
spellings cannot disagree. `index` is a 64-bit signed integer everywhere.

torch is imported only by the functions that return torch dtypes, so that the
dialects and passes can use the names without importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute

from allotment.errors import UnsupportedError

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class ElementType:
    """How one element type is spelled in each layer."""

    ir: str  # the IR spelling: f32, bf16, i1, index ...
    torch: str  # the torch.dtype attribute name: float32, bfloat16, bool ...
    triton: str  # the Triton type: tl.float32 ...
    nbytes: int


_TABLE: tuple[ElementType, ...] = (
    ElementType("f64", "float64", "tl.float64", 8),
    ElementType("f32", "float32", "tl.float32", 4),
    ElementType("f16", "float16", "tl.float16", 2),
    ElementType("bf16", "bfloat16", "tl.bfloat16", 2),
    ElementType("i64", "int64", "tl.int64", 8),
    ElementType("i32", "int32", "tl.int32", 4),
    ElementType("i1", "bool", "tl.int1", 1),
    ElementType("index", "int64", "tl.int64", 8),
    # complex: the reference evaluator's; kernels hold each as two real values (the
    # frontend's complex lowering), so they have no Triton type of their own
    ElementType("complex<f32>", "complex64", "", 8),
    ElementType("complex<f64>", "complex128", "", 16),
)
BY_IR: dict[str, ElementType] = {e.ir: e for e in _TABLE}
BY_TORCH: dict[str, ElementType] = {}
for _e in _TABLE:
    BY_TORCH.setdefault(_e.torch, _e)  # int64 -> i64 (not index)


def ir_name(t: Attribute) -> str | None:
    """`f32`, `bf16`, `i1`, `index`, ... for a supported element type, else None."""
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, BFloat16Type):
        return "bf16"
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, ComplexType) and isinstance(t.element_type, Float32Type | Float64Type):
        return f"complex<{ir_name(t.element_type)}>"
    if isinstance(t, IntegerType) and t.width.data in (1, 32, 64):
        return f"i{t.width.data}"
    return None


def element(t: Attribute) -> ElementType:
    """The table row of element type `t` (UnsupportedError for any other type)."""
    name = ir_name(t)
    if name is None:
        raise UnsupportedError(f"element type {t} is not supported (f64, f32, f16, bf16, i64, i32, i1, index)")
    return BY_IR[name]


def torch_dtype(t: Attribute) -> torch.dtype:
    """The torch dtype of element type `t`."""
    import torch

    return getattr(torch, element(t).torch)


def torch_dtype_source(t: Attribute) -> str:
    """Python source that names the torch dtype of `t` (`torch.float32`)."""
    return f"torch.{element(t).torch}"


def torch_dtype_name(t: Attribute) -> str:
    """The torch name of `t`'s dtype (`float32`, `bfloat16`, `bool`)."""
    return element(t).torch


def triton_dtype(t: Attribute) -> str:
    """The Triton type of `t` (`tl.float32`)."""
    return element(t).triton


def is_byte(t: Attribute) -> bool:
    """`i8`: the element type of arenas (raw bytes, `torch.uint8`), not a tensor element type."""
    return isinstance(t, IntegerType) and t.width.data == 8


def element_nbytes(t: Attribute) -> int:
    """Bytes per element of `t` (i1 takes a byte, as torch.bool does; an arena's i8 one)."""
    return 1 if is_byte(t) else element(t).nbytes


def buffer_torch_dtype_name(t: Attribute) -> str:
    """The torch dtype name a buffer of element type `t` is allocated with (`uint8` for an arena)."""
    return "uint8" if is_byte(t) else element(t).torch
