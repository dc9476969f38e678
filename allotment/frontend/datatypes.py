"""nvFuser's `DataType` and its mapping onto fusion element types and torch dtypes.

`DataType` has every member nvFuser's Python frontend has, so that programs
naming one import and parse; the ones the fusion dialect has no element type
for (fp8, fp4, unsigned) raise `allotment.UnsupportedError("not supported:
DataType.<name>")` (a NotImplementedError) when a definition uses them.
"""

from __future__ import annotations

import enum

import torch
from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute

from allotment.errors import ArgumentError, UnsupportedError


class DataType(enum.Enum):
    """Element types of nvFuser's frontend (`nvfuser.DataType`)."""

    Double = "Double"
    Float = "Float"
    Half = "Half"
    Int = "Int"
    Int32 = "Int32"
    UInt64 = "UInt64"
    Bool = "Bool"
    BFloat16 = "BFloat16"
    Float8_e4m3fn = "Float8_e4m3fn"
    Float8_e5m2 = "Float8_e5m2"
    Float8_e8m0fnu = "Float8_e8m0fnu"
    Float4_e2m1fn = "Float4_e2m1fn"
    ComplexFloat = "ComplexFloat"
    ComplexDouble = "ComplexDouble"
    Null = "Null"

    def __repr__(self) -> str:
        return f"DataType.{self.name}"

    __str__ = __repr__


_XDSL: dict[DataType, Attribute] = {
    DataType.Double: f64,
    DataType.Float: f32,
    DataType.Half: f16,
    DataType.BFloat16: bf16,
    DataType.Int: i64,
    DataType.Int32: i32,
    DataType.Bool: i1,
    DataType.ComplexFloat: ComplexType(f32),
    DataType.ComplexDouble: ComplexType(f64),
}

_TORCH: dict[DataType, torch.dtype] = {
    DataType.Double: torch.float64,
    DataType.Float: torch.float32,
    DataType.Half: torch.float16,
    DataType.BFloat16: torch.bfloat16,
    DataType.Int: torch.int64,
    DataType.Int32: torch.int32,
    DataType.Bool: torch.bool,
    DataType.ComplexFloat: torch.complex64,
    DataType.ComplexDouble: torch.complex128,
}

_FROM_TORCH: dict[torch.dtype, DataType] = {v: k for k, v in _TORCH.items()}
_FROM_TORCH_UNSUPPORTED: dict[torch.dtype, DataType] = {
    torch.float8_e4m3fn: DataType.Float8_e4m3fn,
    torch.float8_e5m2: DataType.Float8_e5m2,
}

SUPPORTED = tuple(_XDSL)
"""The members that have a fusion element type."""


def check_dtype(dtype: object, what: str, *, allow_null: bool = False) -> DataType:
    """`dtype` as a supported `DataType`, or ArgumentError / UnsupportedError naming `what`."""
    if not isinstance(dtype, DataType):
        raise ArgumentError(f"{what} must be a DataType, got {type(dtype).__name__} {dtype!r}")
    if dtype is DataType.Null:
        if allow_null:
            return dtype
        raise ArgumentError(f"{what} must not be DataType.Null")
    if dtype not in _XDSL:
        raise UnsupportedError(f"not supported: {dtype!r}")
    return dtype


def to_element_type(dtype: DataType) -> Attribute:
    """The fusion element type of a supported `DataType`."""
    return _XDSL[dtype]


def to_torch(dtype: DataType) -> torch.dtype:
    return _TORCH[dtype]


def from_element_type(t: Attribute) -> DataType:
    """The `DataType` of a fusion element type or scalar type (`index` is Int)."""
    for dt, et in _XDSL.items():
        if et == t:
            return dt
    if isinstance(t, IntegerType | Float16Type | BFloat16Type | Float32Type | Float64Type):
        raise UnsupportedError(f"not supported: element type {t}")
    return DataType.Int  # index


def from_torch(dtype: torch.dtype) -> DataType:
    """The `DataType` of a torch dtype (UnsupportedError for complex, fp8...)."""
    if dtype in _FROM_TORCH:
        return _FROM_TORCH[dtype]
    if dtype in _FROM_TORCH_UNSUPPORTED:
        raise UnsupportedError(f"not supported: {_FROM_TORCH_UNSUPPORTED[dtype]!r} ({dtype})")
    raise UnsupportedError(f"not supported: torch dtype {dtype}")
