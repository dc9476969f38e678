"""`fd.ops`: nvFuser's operators under their nvFuser names, built as fusion-dialect ops.

Typing follows nvFuser, not the dialect's defaults, where the two differ:
- arithmetic (`add`, `sub`, `mul`, `div`, `pow`, `maximum`, `minimum`) on f16 or
  bf16 operands computes in f32 and gives f32 (nvFuser casts half types up);
- the float math functions (`exp`, `log`, `tanh`, ...) give f32 for f16, bf16,
  integer and bool inputs; `truediv` casts integer operands to f32 first;
- `div` on integers truncates toward zero (C division), as nvFuser's `div`;
  `mod` is `fmod` (C's `%`: the sign of the dividend), `remainder` Python's `%`
  (the sign of the divisor); `atan2` casts integer operands to f32 first;
- rounding (`ceil`, `floor`, `round`, `trunc`, `frac`), `sign` and `bitwise_not` keep
  the input type; `signbit` gives Bool; bitwise ops, shifts and `gcd` take integer
  (and, for and/or/xor/not, Bool) operands and refuse floats, as torch does;
- `where`, `neg`, `abs`, `relu`, `set`, reductions other than `var_mean` keep
  the input type; `var_mean` and `var` compute f16/bf16 inputs in f32.
Python numbers are wrapped scalars (f64, i64, i1 constants): they never widen a
tensor's type. Elementwise operands of lower rank are broadcast from the left
(nvFuser's `maybeBroadcast`). Ops on two scalars are built with `arith`.

Ops the dialect lacks raise `NotSupportedError("not supported: <name>")` (an
`allotment.UnsupportedError`; `UNSUPPORTED` lists nvFuser's); a few nvFuser ops
with no dialect op of their own are composed from dialect ops (`COMPOSITES`).
Argument errors raise `allotment.ArgumentError` (also a TypeError and a
ValueError) naming the argument, before anything is built; so does a call with
the wrong number of arguments (naming the op and what it takes), and a dialect
verifier error (naming the op).

`Operators` puts the families together, one module each over the shared argument
checks and builders of `allotment.frontend.operands`: elementwise ops and their
composites (`pointwise_ops`, with scalar-only ops in `scalar_arith`), shapes,
views and creation (`shape_ops`), indexing (`indexing_ops`), reductions
(`reduction_ops`), matrix products and ATen calls (`library_ops`), random numbers
(`random_ops`), scans and sorts (`scan_ops`). This module keeps the registries
(`SUPPORTED`, `COMPOSITES`, `UNSUPPORTED`), what an unknown name raises, and the
arity check every public op gets.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from allotment.errors import ArgumentError, Error
from allotment.frontend.errors import NotSupportedError
from allotment.frontend.indexing_ops import IndexingOperators
from allotment.frontend.library_ops import LibraryOperators
from allotment.frontend.pointwise_ops import BINARY_OPS, UNARY_OPS, PointwiseOperators
from allotment.frontend.random_ops import RandomOperators
from allotment.frontend.reduction_ops import ReductionOperators
from allotment.frontend.scan_ops import ScanOperators
from allotment.frontend.shape_ops import ShapeOperators

UNSUPPORTED: tuple[str, ...] = (
    # complex numbers: isreal (a comparison of complex values)
    "isreal",
    # normalization and attention primitives, grouped and scaled matmuls
    "batch_norm", "sdpfa_fwd", "sdpfa_bwd", "grouped_mm", "scaled_mm",
)
"""nvFuser frontend ops with no fusion-dialect counterpart (raise "not supported: <name>")."""

COMPOSITES: tuple[str, ...] = (
    "silu", "clamp", "threshold", "lerp", "addcmul", "add_alpha", "sub_alpha", "var",
    "isnan", "isinf", "isposinf", "isneginf", "isfinite", "select", "broadcast",
)
"""nvFuser ops built from other dialect ops (`squeeze` of a symbolic extent is a reshape)."""


class Operators(
    PointwiseOperators,
    ShapeOperators,
    IndexingOperators,
    ReductionOperators,
    LibraryOperators,
    RandomOperators,
    ScanOperators,
):
    """The `fd.ops` namespace: the op families together, over `OperatorBase`'s shared
    argument checks and builders (`Operators(fd)` for a `FusionDefinition` `fd`)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in UNSUPPORTED:
            raise NotSupportedError(f"not supported: {name}")
        raise NotSupportedError(
            f"not supported: {name} (neither an op of Allotment's fusion dialect nor a known "
            "nvFuser op)"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(UNSUPPORTED))


SUPPORTED: tuple[str, ...] = tuple(
    sorted(
        set(UNARY_OPS)
        | set(BINARY_OPS)
        | {
            "where", "cast", "set", "segment_set", "stride_order", "triu", "tril", "full", "iota", "size", "shape", "tensor_sizes", "at",
            "broadcast_in_dim", "broadcast", "expand", "reshape", "permute", "squeeze", "slice",
            "select", "pad", "cat", "sum", "prod", "max", "min", "mean", "var_mean", "var",
            "matmul", "linear", "silu", "clamp", "threshold", "lerp", "addcmul", "add_alpha",
            "sub_alpha", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "real", "imag",
        }
        | {"rand", "randn", "uniform", "normal", "rand_like", "randn_like", "welford"}
        | {"index_select", "gather", "take_along_axis", "embedding_fwd", "scatter", "index_put_accumulate"}
        | {"cumsum", "cumprod", "cummax", "cummin", "argsort", "topk"}
    )
)
"""Every `fd.ops` name that builds IR."""


def _arity_message(name: str, sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any], why: str) -> str:
    """`ops.<name> takes 2 arguments (arg1, arg2), got 1: <why>`."""
    params = list(sig.parameters.values())[1:]  # without self
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in positional if p.default is p.empty)
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if varargs:
        arity = f"at least {required} argument{'s' if required != 1 else ''}"
    elif required == len(positional):
        arity = f"{required} argument{'s' if required != 1 else ''}"
    else:
        arity = f"{required} to {len(positional)} arguments"
    names = ", ".join(p.name for p in positional) + (", ..." if varargs else "")
    got = str(len(args))
    if kwargs:
        got += f" and keyword argument{'s' if len(kwargs) > 1 else ''} " + ", ".join(repr(k) for k in kwargs)
    return f"ops.{name} takes {arity} ({names}), got {got}: {why}"


def _checked(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (an `fd.ops` method) raising ArgumentError, naming the op and what it takes, when
    called with arguments that do not bind to its parameters (instead of Python's TypeError)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def op(self: Operators, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except TypeError as e:
            if isinstance(e, Error):
                raise
            try:
                sig.bind(self, *args, **kwargs)
            except TypeError as bad:
                raise ArgumentError(_arity_message(name, sig, args, kwargs, str(bad))) from None
            raise

    return op


# Every public `fd.ops` method, of every family (written out or generated), checks its arity.
for _name in dir(Operators):
    _fn = inspect.getattr_static(Operators, _name)
    if not _name.startswith("_") and inspect.isfunction(_fn):
        setattr(Operators, _name, _checked(_name, _fn))
