"""Gathers and scatters at computed indices."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_attr_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import FusionOp, _expect_tensor, _tensor
from allotment.dialects.fusion_rules import DYNAMIC, type_name

# --------------------------------------------------------------------------- #
# Indexing: gathers and scatters at computed indices                          #
# --------------------------------------------------------------------------- #


def _index_tensor(v: SSAValue, what: str) -> TensorType:
    """An index operand: a tensor of i32 or i64."""
    t = _expect_tensor(v, what)
    if not (isinstance(t.element_type, IntegerType) and t.element_type.width.data in (32, 64)):
        raise VerifyException(f"{what} must have element type i32 or i64, got {type_name(t)}")
    return t


def _static_le(a: int, b: int) -> bool:
    """a <= b where both are static (a dynamic extent is checked at run time)."""
    return a == DYNAMIC or b == DYNAMIC or a <= b


def _static_eq(a: int, b: int) -> bool:
    return a == DYNAMIC or b == DYNAMIC or a == b


INDEX_CHECK = "index_check"
"""The attribute of an indexing op that says where its indices are checked (`IndexingOp`)."""
INDEX_CHECKS = ("host", "device")
"""Its values: `host` (the default, also when absent) and `device`."""


class IndexingOp(FusionOp, ABC):
    """An op that reads or writes a tensor at indices held in another tensor.

    Every index must lie in `[0, extent)` of the dimension it indexes: negative
    indices are errors (as in torch.gather and torch.index_select), not counted
    from the end. `source_operand` is the tensor read or written at computed
    indices: `fusion-segment` keeps it (and the index) a buffer.

    Where the indices are checked is the op's `index_check` attribute:
    - `"host"` (the default, and what an op without the attribute means): the generated
      host program checks the index tensor before the kernel that uses it runs (one
      min/max per index tensor, read on the host: on a GPU a synchronization) and
      raises a RunError naming the op, its index operand, the bad index and the extent;
    - `"device"`: the kernel that reads or writes at the indices checks each index
      before its load or store (`tl.device_assert`, as torch's CUDA kernels and
      Inductor check indirect indexing): nothing is read on the host. An index out of
      range stops the kernel: on a GPU a device-side assert (a CUDA error at the next
      synchronization, after which the CUDA context is unusable, as in torch), in
      Triton's interpreter a RunError naming the op and its operands before any
      element is read or written out of range. `fusion-index-checks{where=device}`
      sets it; the torch.compile frontend does.
    The reference evaluator raises either way."""

    index_check = opt_attr_def(StringAttr, attr_name=INDEX_CHECK)

    def verify_(self) -> None:
        check = self.index_check
        if check is not None and check.data not in INDEX_CHECKS:
            raise VerifyException(f"index_check must be one of {', '.join(map(repr, INDEX_CHECKS))}, "
                                  f"got {check.data!r}")
        super().verify_()

    @property
    def checks_on_device(self) -> bool:
        """Whether the kernel checks the indices (`index_check = "device"`)."""
        return self.index_check is not None and self.index_check.data == "device"

    @property
    def index_operand(self) -> SSAValue:
        """The tensor of indices (every indexing op names it `index`)."""
        return self.index

    @property
    @abstractmethod
    def source_operand(self) -> SSAValue:
        """The tensor addressed through the indices."""

    def indexed_dim(self) -> int:
        """The dimension of `source_operand` the indices address."""
        rank = len(_expect_tensor(self.source_operand, "the source").get_shape())
        return rules.normalize_dims([self.dim.value.data], rank, "dim")[0]


class _InputIndexOp(IndexingOp, ABC):
    """An indexing op that reads `input` at the indices of `index` along `dim`: the fields
    of index_select, gather and take_along_axis."""

    input = operand_def(TensorType)
    index = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $index `dim` $dim attr-dict `:` type($input) `,` type($index) `->` type($result)"

    @property
    def source_operand(self) -> SSAValue:
        return self.input


@irdl_op_definition
class IndexSelectOp(_InputIndexOp):
    """torch.index_select: `result[..., i, ...] = input[..., index[i], ...]` along `dim`.

    `index` is 1-D (i32 or i64); the result is the input with extent `dim`
    replaced by the index's length."""

    name = "fusion.index_select"

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "the input")
        idx = _index_tensor(self.index, "the index")
        if len(idx.get_shape()) != 1:
            raise VerifyException(f"the index must be 1-D, got {type_name(idx)}")
        if not x.get_shape():
            raise VerifyException("the input must have rank >= 1")
        dim = self.indexed_dim()
        out = list(x.get_shape())
        out[dim] = idx.get_shape()[0]
        return [_tensor(x.element_type, out)]


class _AlongDimOp(_InputIndexOp, ABC):
    """gather and take_along_axis: `result[i..., j, k...] = input[i..., index[i..., j, k...], k...]`."""

    EXACT: ClassVar[bool] = False
    """Whether the extents other than `dim` must equal the input's (take_along_axis)."""

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "the input")
        idx = _index_tensor(self.index, "the index")
        xs, js = x.get_shape(), idx.get_shape()
        if len(xs) != len(js) or not xs:
            raise VerifyException(
                f"the index must have the input's rank (>= 1): {type_name(x)} and {type_name(idx)}"
            )
        dim = self.indexed_dim()
        for d, (a, b) in enumerate(zip(js, xs)):
            if d == dim:
                continue
            if self.EXACT and not _static_eq(a, b):
                raise VerifyException(f"dimension {d}: the index extent {a} must equal the input's {b}")
            if not _static_le(a, b):
                raise VerifyException(f"dimension {d}: the index extent {a} exceeds the input's {b}")
        return [_tensor(x.element_type, js)]


@irdl_op_definition
class GatherOp(_AlongDimOp):
    """torch.gather: the result has the index's shape; `index.size(d) <= input.size(d)`
    for every `d != dim` (checked at run time where dynamic)."""

    name = "fusion.gather"


@irdl_op_definition
class TakeAlongAxisOp(_AlongDimOp):
    """numpy.take_along_axis (nvFuser's takeAlongAxis): gather whose index extents equal
    the input's in every dimension but `dim` (checked at run time where dynamic)."""

    name = "fusion.take_along_axis"
    EXACT: ClassVar[bool] = True


@irdl_op_definition
class EmbeddingOp(IndexingOp):
    """torch.nn.functional.embedding's forward: `result[i..., :] = weight[index[i...], :]`.

    `weight` is 2-D [num_embeddings, embedding_dim]; the result has shape
    `index.shape + [embedding_dim]`. (padding_idx only changes the gradient;
    max_norm renormalization is not an op of this dialect.)"""

    name = "fusion.embedding"

    index = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$index `,` $weight attr-dict `:` type($index) `,` type($weight) `->` type($result)"

    @property
    def source_operand(self) -> SSAValue:
        return self.weight

    def indexed_dim(self) -> int:
        return 0

    def infer_result_types(self) -> list[Attribute]:
        idx = _index_tensor(self.index, "the index")
        w = _expect_tensor(self.weight, "the weight")
        if len(w.get_shape()) != 2:
            raise VerifyException(f"the weight must be 2-D [num_embeddings, embedding_dim], got {type_name(w)}")
        if not idx.get_shape():
            raise VerifyException("the index must have rank >= 1")
        return [_tensor(w.element_type, [*idx.get_shape(), w.get_shape()[1]])]


@irdl_op_definition
class ScatterOp(IndexingOp):
    """torch.scatter without reduce, out of place: the result is `input` with
    `result[i..., index[i..., j, k...], k...] = src[i..., j, k...]` along `dim`.

    `index` and `src` have equal shapes (a restriction of torch's `<=`), of the
    input's rank, with `index.size(d) <= input.size(d)` for `d != dim`. Where two
    positions of `index` name the same element, which `src` value lands there is
    unspecified (as in torch); the generated kernel's stores race."""

    name = "fusion.scatter"

    input = operand_def(TensorType)
    index = operand_def(TensorType)
    src = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $index `,` $src `dim` $dim attr-dict `:` type($input) `,` type($index) `,` type($src) "
        "`->` type($result)"
    )

    @property
    def source_operand(self) -> SSAValue:
        return self.input

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "the input")
        idx = _index_tensor(self.index, "the index")
        src = _expect_tensor(self.src, "the source")
        xs, js, ss = x.get_shape(), idx.get_shape(), src.get_shape()
        if not (len(xs) == len(js) == len(ss)) or not xs:
            raise VerifyException(
                f"input, index and source must have one rank (>= 1): {type_name(x)}, {type_name(idx)}, {type_name(src)}"
            )
        if src.element_type != x.element_type:
            raise VerifyException(f"the source's element type must be the input's: {type_name(src)} and {type_name(x)}")
        dim = self.indexed_dim()
        for d, (a, b, c) in enumerate(zip(js, xs, ss)):
            if not _static_eq(a, c):
                raise VerifyException(f"dimension {d}: the index extent {a} must equal the source's {c}")
            if d != dim and not _static_le(a, b):
                raise VerifyException(f"dimension {d}: the index extent {a} exceeds the input's {b}")
        return [_tensor(x.element_type, xs)]


@irdl_op_definition
class IndexPutAccumulateOp(IndexingOp):
    """torch.index_put_(acc, (index,), value, accumulate=True), out of place:
    `result = acc` then `result[index[i], k...] += value[i, k...]` for every i.

    `index` is 1-D; `value` has shape `[len(index)] + acc.shape[1:]`. Duplicate
    indices all add. The generated kernel adds with atomics, so float sums
    with duplicates depend on the order the adds land in (not deterministic, as
    torch's CUDA kernel). The accumulator is a float or integer tensor (not i1)."""

    name = "fusion.index_put_accumulate"

    acc = operand_def(TensorType)
    index = operand_def(TensorType)
    value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$acc `,` $index `,` $value attr-dict `:` type($acc) `,` type($index) `,` type($value) `->` type($result)"
    )

    @property
    def source_operand(self) -> SSAValue:
        return self.acc

    def indexed_dim(self) -> int:
        return 0

    def infer_result_types(self) -> list[Attribute]:
        acc = _expect_tensor(self.acc, "the accumulator")
        idx = _index_tensor(self.index, "the index")
        val = _expect_tensor(self.value, "the value")
        if acc.element_type == IntegerType(1):
            raise VerifyException("the accumulator must be a float or integer tensor, not i1")
        if val.element_type != acc.element_type:
            raise VerifyException(
                f"the value's element type must be the accumulator's: {type_name(val)} and {type_name(acc)}"
            )
        if len(idx.get_shape()) != 1:
            raise VerifyException(f"the index must be 1-D, got {type_name(idx)}")
        a, v = acc.get_shape(), val.get_shape()
        if not a or len(v) != len(a):
            raise VerifyException(
                f"the value must have the accumulator's rank (>= 1): {type_name(val)} and {type_name(acc)}"
            )
        if not _static_eq(v[0], idx.get_shape()[0]):
            raise VerifyException(f"dimension 0: the value extent {v[0]} must equal the index length {idx.get_shape()[0]}")
        for d in range(1, len(a)):
            if not _static_eq(v[d], a[d]):
                raise VerifyException(f"dimension {d}: the value extent {v[d]} must equal the accumulator's {a[d]}")
        return [_tensor(acc.element_type, a)]


INDEXING_GATHERS = (IndexSelectOp, GatherOp, TakeAlongAxisOp, EmbeddingOp)
"""Indexing ops that read at computed indices: gather loads in a pointwise kernel."""
INDEXING_SCATTERS = (ScatterOp, IndexPutAccumulateOp)
"""Indexing ops that write at computed indices: a kernel of their own."""
