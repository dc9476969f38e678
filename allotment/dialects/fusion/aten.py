"""A call of an ATen op the compiler does not fuse (`fusion.aten`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IndexType, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules

ATEN_NAME = re.compile(r"(aten|prims)\.[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*")
"""What an `fusion.aten` target looks like: `namespace.op.overload` (`aten.convolution.default`)."""


@irdl_op_definition
class AtenOp(IRDLOperation):
    """One call of an ATen (or prims) operator whose result the fusion dialect does not
    express: a convolution, an attention, any op a frontend could not translate.

    `target` names the operator overload (`aten.convolution.default`). `call` is a JSON
    object: `args` and `kwargs` (the call's arguments: `{"t": i}` is tensor operand i,
    `{"s": i}` scalar operand i, `{"dtype": "float32"}`, `{"device": null}` the program's
    device, `{"float": "inf"}` a non-finite float, lists and JSON scalars as they are) and
    `results` (null: the call returns the one result; else the positions of the results in
    the tuple it returns). Operands: the tensors it reads, the scalars its arguments use,
    and one `index` value per `?` extent of the results, in order (`sizes`): a frontend
    knows every result's shape and dtype when it builds the op (from fake tensors), so the
    allocation pass sizes its buffers as any other's. `out` names the overload with `out=`
    arguments (`out_args`, one per result) that writes into those buffers; without it the
    call allocates its results itself, and `orders` (optional, one entry per result) may
    say in which memory order it does: a list of the result's dims from outermost to
    innermost stride (dense, a permutation of row-major: attention's output comes back in
    [batch, seq, heads, dim] order for [batch, heads, seq, dim]), or null for row-major.
    The buffer is then planned in that order (`alloc.alloc`'s `order`), its views take the
    strides of that order, and the host program copies a result that comes back otherwise.
    The op is a kernel of its own kind (`aten`): it never fuses with its neighbours.
    """

    name = "fusion.aten"

    inputs = var_operand_def(TensorType)
    scalars = var_operand_def()
    sizes = var_operand_def(IndexType)
    target = prop_def(StringAttr)
    call = prop_def(StringAttr)
    out = opt_prop_def(StringAttr)
    out_args = opt_prop_def(ArrayAttr[StringAttr])
    res = var_result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$target `(` $inputs `)` (`scalars` `(` $scalars^ `:` type($scalars) `)`)? "
        "(`sizes` `(` $sizes^ `)`)? attr-dict `:` functional-type($inputs, $res)"
    )

    def __init__(
        self,
        target: str,
        call: str,
        inputs: Sequence[SSAValue],
        scalars: Sequence[SSAValue],
        sizes: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        out: tuple[str, Sequence[str]] | None = None,
    ):
        props: dict[str, Attribute] = {"target": StringAttr(target), "call": StringAttr(call)}
        if out is not None:
            props["out"] = StringAttr(out[0])
            props["out_args"] = ArrayAttr([StringAttr(a) for a in out[1]])
        super().__init__(
            operands=[list(inputs), list(scalars), list(sizes)],
            result_types=[list(result_types)],
            properties=props,
        )

    @property
    def decoded_call(self) -> dict:
        """The `call` property as Python data (verified to be a JSON object)."""
        return json.loads(self.call.data)

    def order_of(self, result: SSAValue) -> list[int] | None:
        """The memory order (dims outermost first) in which the call returns `result`, one of
        its results, where `orders` gives one that is not row-major, else None."""
        orders = self.decoded_call.get("orders")
        i = list(self.res).index(result)
        order = orders[i] if isinstance(orders, list) and i < len(orders) else None
        if order is None or order == list(range(len(order))):
            return None
        return [int(d) for d in order]

    def verify_(self) -> None:
        if not ATEN_NAME.fullmatch(self.target.data):
            raise VerifyException(f"target '{self.target.data}' is not namespace.op.overload of aten or prims")
        try:
            call = self.decoded_call
        except ValueError as e:
            raise VerifyException(f"call is not JSON: {e}") from None
        if not isinstance(call, dict) or not isinstance(call.get("args", []), list) or not isinstance(
            call.get("kwargs", {}), dict
        ):
            raise VerifyException("call must be a JSON object with a list 'args' and an object 'kwargs'")
        results = call.get("results")
        if results is None and len(self.res) != 1:
            raise VerifyException(f"a call with results null returns one tensor, not {len(self.res)}")
        if results is not None and (
            not isinstance(results, list) or len(results) != len(self.res)
            or not all(isinstance(i, int) and i >= 0 for i in results)
        ):
            raise VerifyException(f"results must list one position per result ({len(self.res)})")
        _verify_call_refs(call, len(self.inputs), len(self.scalars))
        dynamic = sum(1 for r in self.res for e in r.type.get_shape() if e == DYNAMIC_INDEX)
        if dynamic != len(self.sizes):
            raise VerifyException(f"the results have {dynamic} dynamic extents but {len(self.sizes)} sizes")
        for i, r in enumerate(self.res):
            rules.verify_element_type(r.type.element_type, f"result #{i}")
        orders = call.get("orders")
        if orders is not None:
            if not isinstance(orders, list) or len(orders) != len(self.res):
                raise VerifyException(f"orders must list one entry per result ({len(self.res)})")
            for i, (order, r) in enumerate(zip(orders, self.res)):
                rank = len(r.type.get_shape())
                if order is not None and (not isinstance(order, list) or sorted(order) != list(range(rank))
                                          or not all(type(d) is int for d in order)):
                    raise VerifyException(f"orders[{i}] must be null or a permutation of 0..{rank - 1}, got {order}")
            if self.out is not None and any(o is not None for o in orders):
                raise VerifyException("orders is for results the call allocates (no out= overload)")
        if (self.out is None) != (self.out_args is None):
            raise VerifyException("out and out_args come together")
        if self.out_args is not None and len(self.out_args) != len(self.res):
            raise VerifyException(f"out_args names {len(self.out_args)} arguments for {len(self.res)} results")
        for s in self.scalars:
            if isinstance(s.type, TensorType):
                raise VerifyException("scalars must not be tensors")


def _verify_call_refs(value: object, n_inputs: int, n_scalars: int) -> None:
    """Every `{"t": i}` and `{"s": i}` of a call names an operand that exists."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            if "t" in v and (not isinstance(v["t"], int) or not 0 <= v["t"] < n_inputs):
                raise VerifyException(f"call refers to tensor operand {v['t']!r} of {n_inputs}")
            if "s" in v and (not isinstance(v["s"], int) or not 0 <= v["s"] < n_scalars):
                raise VerifyException(f"call refers to scalar operand {v['s']!r} of {n_scalars}")
            stack.extend(v.values())
