"""`fd.ops` scans and sorts (`cumsum`, `cumprod`, `cummax`, `cummin`, `argsort`, `topk`):
a mixin of `allotment.frontend.ops.Operators`.

nvFuser's frontend has `cumsum(arg, dim)`, `argsort(arg, dim, descending, stable)` and
`topk(arg, k, dim, largest, sorted)`, `cumprod(arg, dim)`, `cummax(arg, dim)` and
`cummin(arg, dim)`. Results follow torch: cumsum and cumprod of bool and integers are
Int (i64); cummax and cummin return the values, as nvFuser's do, or (values, Int
indices) as torch's with `return_indices=True` (an Allotment extension); argsort
Int indices, topk (values, Int indices). The sorts are always stable and topk always
sorted (see `fusion.SortOp`). `k` is an int or a constant integer Scalar.
"""

from __future__ import annotations

import numbers
from typing import Any

from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr, i1, i64
from xdsl.ir import Attribute

from allotment.dialects import fusion
from allotment.errors import ArgumentError
from allotment.frontend.building import make_op
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.operands import OperatorBase, integer_constant


class ScanOperators(OperatorBase):
    """The scans and sorts of `fd.ops`."""

    def _row_op(
        self, name: str, cls: type, arg: object, dim: object, props: dict[str, Attribute], results: int
    ) -> tuple[Tensor, ...]:
        self._open(name)
        t = self._tensor(arg, name, "arg")
        if t.ndim == 0:
            raise ArgumentError(f"{name}: argument 'arg' must have rank >= 1, got a 0-d tensor")
        (d,) = self._dims(dim, t.ndim, name, "dim")
        props = {"dim": IntegerAttr(d, i64), **props}
        ph = TensorType(i1, [])
        op = self._build(name, lambda: make_op(cls, [t.value], props, [ph] * results))
        return tuple(self._fd._tensor_result(op, i) for i in range(results))

    def cumsum(self, arg: object, dim: object) -> Tensor:
        """Inclusive running sum along `dim` (torch.cumsum; bool and integers give Int)."""
        return self._row_op("cumsum", fusion.CumsumOp, arg, dim, {}, 1)[0]

    def cumprod(self, arg: object, dim: object) -> Tensor:
        """Inclusive running product along `dim` (an Allotment extension; torch.cumprod)."""
        return self._row_op("cumprod", fusion.CumprodOp, arg, dim, {}, 1)[0]

    def cummax(self, arg: object, dim: object, return_indices: object = False) -> Tensor | tuple[Tensor, Tensor]:
        """Running maximum along `dim` (nvFuser's cummax; NaN propagates). With
        `return_indices=True` (an Allotment extension), (values, Int indices) as torch.cummax
        gives them (ties give the last index)."""
        return self._cum_extreme("cummax", fusion.CummaxOp, arg, dim, return_indices)

    def cummin(self, arg: object, dim: object, return_indices: object = False) -> Tensor | tuple[Tensor, Tensor]:
        """Running minimum along `dim` (nvFuser's cummin); `return_indices` as for cummax."""
        return self._cum_extreme("cummin", fusion.CumminOp, arg, dim, return_indices)

    def _cum_extreme(
        self, name: str, cls: type, arg: object, dim: object, return_indices: object
    ) -> Tensor | tuple[Tensor, Tensor]:
        with_indices = self._bool(return_indices, name, "return_indices")
        values, indices = self._row_op(name, cls, arg, dim, {}, 2)
        return (values, indices) if with_indices else values

    def argsort(self, arg: object, dim: object = -1, descending: object = False, stable: object = False) -> Tensor:
        """Int indices that sort `arg` along `dim` (stable whatever `stable` says)."""
        props: dict[str, Attribute] = {}
        if self._bool(descending, "argsort", "descending"):
            props["descending"] = UnitAttr()
        if self._bool(stable, "argsort", "stable"):
            props["stable"] = UnitAttr()
        return self._row_op("argsort", fusion.ArgsortOp, arg, dim, props, 1)[0]

    def topk(
        self, arg: object, k: object, dim: object = -1, largest: object = True, sorted: object = False
    ) -> tuple[Tensor, Tensor]:
        """(the k largest or smallest values along `dim`, their Int indices), best first."""
        name = "topk"
        props: dict[str, Attribute] = {"k": IntegerAttr(self._static_k(k), i64)}
        if self._bool(largest, name, "largest"):
            props["largest"] = UnitAttr()
        if self._bool(sorted, name, "sorted"):
            props["sorted"] = UnitAttr()
        values, indices = self._row_op(name, fusion.TopkOp, arg, dim, props, 2)
        return values, indices

    def _static_k(self, k: Any) -> int:
        """topk's k: an int, or an integer Scalar defined by a constant."""
        if isinstance(k, Scalar):
            self._fd._own(k, "topk: argument 'k'")
            known = integer_constant(k.value)
            if known is None:
                raise ArgumentError("topk: argument 'k' must be an int or a constant Scalar (k is static here)")
            k = known
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise ArgumentError(f"topk: argument 'k' must be an int, got {type(k).__name__} {k!r}")
        if k < 0:
            raise ArgumentError(f"topk: argument 'k' must be non-negative, got {k}")
        return self._int(k, "topk", "k")
