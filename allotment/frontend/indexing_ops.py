"""`fd.ops` indexing: a mixin of `allotment.frontend.ops.Operators`.

`index_select`, `gather`, `take_along_axis`, `scatter` (an index tensor along one
dimension), `index_put_accumulate` and `embedding_fwd` (rows of a weight looked
up by index, renormalized with `max_norm` as torch's embedding returns them), with
torch's meanings of their arguments.
"""

from __future__ import annotations

import numbers

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.irdl import IRDLOperation

from allotment.dialects import fusion
from allotment.errors import ArgumentError
from allotment.frontend.building import make_op
from allotment.frontend.datatypes import DataType
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.operands import OperatorBase


class IndexingOperators(OperatorBase):
    """The indexing ops of `fd.ops` (`embedding_fwd`'s renormalization calls the
    elementwise and reduction ops of the composed `Operators`)."""

    def _indexing(self, name: str, cls: type[IRDLOperation], arg: object, index: object, dim: object,
                  src: object = None) -> Tensor:
        """index_select, gather, take_along_axis and scatter: `arg` indexed along `dim`."""
        self._open(name)
        t = self._tensor(arg, name, "arg")
        idx = self._tensor(index, name, "index")
        operands = [t.value, idx.value]
        if src is not None:
            operands.append(self._tensor(src, name, "src").value)
        if t.ndim == 0:
            raise ArgumentError(f"{name}: argument 'arg' must have rank >= 1, got a 0-d tensor")
        (d,) = self._dims(self._int(dim, name, "dim"), t.ndim, name, "dim")
        props = {"dim": IntegerAttr(d, i64)}
        return self._tensor_op(name, lambda: make_op(cls, operands, props))

    def index_select(self, arg: object, index: object, dim: object) -> Tensor:
        """torch.index_select(arg, dim, index): index is 1-D (int32 or int64), or 0-d, which
        selects one entry and keeps `dim` with extent 1 (as torch does)."""
        if isinstance(index, Tensor) and index.ndim == 0:
            self._open("index_select")
            self._fd._own(index, "index_select: argument 'index'")
            index = self.broadcast_in_dim(index, [1], [])
        return self._indexing("index_select", fusion.IndexSelectOp, arg, index, dim)

    def gather(self, arg: object, index: object, dim: object) -> Tensor:
        """torch.gather(arg, dim, index): the result has the index's shape."""
        return self._indexing("gather", fusion.GatherOp, arg, index, dim)

    def take_along_axis(self, arg: object, index: object, dim: object) -> Tensor:
        """numpy.take_along_axis(arg, index, dim): gather with the index's other extents equal to arg's."""
        return self._indexing("take_along_axis", fusion.TakeAlongAxisOp, arg, index, dim)

    def scatter(self, arg: object, index: object, src: object, dim: object) -> Tensor:
        """torch.scatter(arg, dim, index, src) out of place (no reduce); src a Tensor of the
        index's shape, or a scalar (a Scalar or a number) written at every index, as
        torch.scatter's `value` form is."""
        if not isinstance(src, Tensor):
            name = "scatter"
            self._open(name)
            t = self._tensor(arg, name, "arg")
            idx = self._tensor(index, name, "index")
            value = self._scalar_operand(src, name, "src")
            src = self.full(idx.shape(), Scalar(self._fd, value, -1), t.dtype())
        return self._indexing("scatter", fusion.ScatterOp, arg, index, dim, src)

    def index_put_accumulate(self, acc: object, index: object, value: object) -> Tensor:
        """torch.index_put(acc, (index,), value, accumulate=True): index 1-D, value [len(index), *acc.shape[1:]]."""
        name = "index_put_accumulate"
        self._open(name)
        operands = [self._tensor(acc, name, "acc").value, self._tensor(index, name, "index").value,
                    self._tensor(value, name, "value").value]
        return self._tensor_op(name, lambda: make_op(fusion.IndexPutAccumulateOp, operands))

    def embedding_fwd(self, input: object, weight: object, padding_idx: object = None, max_norm: object = None,
                      norm_type: object = None, scale_grad_by_freq: object = None, sparse: object = None) -> Tensor:
        """torch.nn.functional.embedding(input, weight, ...): padding_idx, scale_grad_by_freq and
        sparse only change the gradient. With `max_norm`, each looked-up row whose `norm_type`
        norm (2 by default) exceeds max_norm is scaled by max_norm / (norm + 1e-7), as torch
        renormalizes it; the output is what torch returns, and the weight is not modified
        (torch renormalizes the rows of its weight in place; nvFuser never writes an input)."""
        name = "embedding_fwd"
        self._open(name)
        idx = self._tensor(input, name, "input")
        w = self._tensor(weight, name, "weight")
        for arg, x in (("padding_idx", padding_idx), ("norm_type", norm_type),
                       ("scale_grad_by_freq", scale_grad_by_freq), ("sparse", sparse)):
            if x is not None:
                self._scalar_operand(x, name, arg)
        out = self._tensor_op(name, lambda: make_op(fusion.EmbeddingOp, [idx.value, w.value]))
        if max_norm is None:
            return out
        if w.ndim != 2:
            raise ArgumentError(f"{name}: max_norm needs a 2-D weight, got rank {w.ndim}")
        self._scalar_operand(max_norm, name, "max_norm")
        return self._renorm_rows(out, max_norm, 2.0 if norm_type is None else norm_type)

    def _renorm_rows(self, rows: Tensor, max_norm: object, p: object) -> Tensor:
        """`rows` (the last dim a row) scaled by max_norm / (norm + 1e-7) where the row's
        p-norm exceeds max_norm, computed in f32 (f64 for f64) and cast back."""
        et = rows.dtype()
        ct = DataType.Double if et == DataType.Double else DataType.Float
        x = self.cast(rows, ct)
        if isinstance(p, numbers.Real) and float(p) == 2.0:
            norm = self.sqrt(self.sum(self.mul(x, x), [-1], True))
        elif isinstance(p, numbers.Real) and float(p) == 1.0:
            norm = self.sum(self.abs(x), [-1], True)
        else:
            norm = self.pow(self.sum(self.pow(self.abs(x), p), [-1], True), self.reciprocal(p))
        limit = self.cast(max_norm, ct)
        scale = self.where(self.gt(norm, limit), self.div(limit, self.add(norm, 1e-7)), 1.0)
        return self.cast(self.mul(x, scale), et)  # type: ignore[return-value]
