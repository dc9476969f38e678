"""`fd.ops` matrix products and ATen calls: a mixin of `allotment.frontend.ops.Operators`.

`matmul` and `linear` (torch's meanings; the backend runs them as library
kernels), and `aten`, an Allotment extension that puts one ATen call in the
fusion (`fusion.aten`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from allotment.dialects import fusion
from allotment.frontend.building import make_op
from allotment.frontend.datatypes import DataType, to_element_type
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.operands import DYNAMIC, OperatorBase


class LibraryOperators(OperatorBase):
    """The matrix products and the ATen call of `fd.ops`."""

    def matmul(self, arg1: object, arg2: object) -> Tensor:
        """`torch.matmul(arg1, arg2)`; both operands share one floating-point dtype."""
        name = "matmul"
        self._open(name)
        a = self._tensor(arg1, name, "arg1")
        b = self._tensor(arg2, name, "arg2")
        return self._tensor_op(name, lambda: fusion.MatmulOp(a.value, b.value))

    def linear(self, arg1: object, arg2: object, bias: object = None) -> Tensor:
        """`arg1 @ arg2^T + bias` (torch.nn.functional.linear)."""
        name = "linear"
        self._open(name)
        x = self._tensor(arg1, name, "arg1")
        w = self._tensor(arg2, name, "arg2")
        b = [] if bias is None else [self._tensor(bias, name, "bias").value]
        return self._tensor_op(name, lambda: make_op(fusion.LinearOp, [x.value, w.value, b]))

    def aten(
        self,
        target: str,
        call: str,
        inputs: Sequence[Tensor],
        scalars: Sequence[Scalar],
        sizes: Sequence[int | Scalar],
        results: Sequence[tuple[Sequence[int], DataType]],
        out: tuple[str, Sequence[str]] | None = None,
    ) -> list[Tensor]:
        """An extension (not nvFuser's): one ATen call, `fusion.aten` (its docstring has the
        `call` JSON). `results` gives each result's shape (-1 where `?`) and dtype; `sizes`
        the extents of the `?` ones in order (ints or Scalars)."""
        name = "aten"
        self._open(name)
        ins = [self._tensor(t, name, f"inputs[{i}]").value for i, t in enumerate(inputs)]
        scs = [self._to_index(self._scalar_operand(s, name, f"scalars[{i}]"), name, f"scalars[{i}]")
               for i, s in enumerate(scalars)]
        entries = self._extent_entries(list(sizes), name, "sizes")
        dyn = [e if isinstance(e, SSAValue) else self._index(e) for e in entries]
        types = [TensorType(to_element_type(self._dtype(dt, name)), [DYNAMIC if e == -1 else e for e in shape])
                 for shape, dt in results]
        op = self._build(name, lambda: fusion.AtenOp(target, call, ins, scs, dyn, types, out))
        return [self._fd._name_tensor(r) for r in op.results]
