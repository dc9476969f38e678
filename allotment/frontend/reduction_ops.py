"""`fd.ops` reductions: a mixin of `allotment.frontend.ops.Operators`.

`sum`, `prod`, `max`, `min`, `mean` (an Allotment extension) over `dims` (all by
default), `var_mean` and `var` (f16/bf16 inputs computed in f32, the variance
divided by N - correction), and `welford` (mean, M2 and count at once). `dtype=`
sums and multiplies in that type; the mean of integers needs a floating-point
`dtype=`, as torch.mean does.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr, f32, i1, i64
from xdsl.ir import Attribute

from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError
from allotment.frontend.building import make_op
from allotment.frontend.datatypes import DataType, to_element_type
from allotment.frontend.handles import Tensor
from allotment.frontend.operands import HALF, OperatorBase, elem_of


class ReductionOperators(OperatorBase):
    """The reductions of `fd.ops`."""

    def _reduction(
        self,
        name: str,
        cls: type[fusion.ReductionOp],
        arg: object,
        dims: object,
        keepdim: object,
        dtype: object,
    ) -> Tensor:
        self._open(name)
        t = self._tensor(arg, name, "arg")
        if isinstance(dims, DataType):  # sum(arg, dtype)
            dims, dtype = None, dims
        ds = list(range(t.ndim)) if dims is None else self._dims(dims, t.ndim, name)
        keep = self._bool(keepdim, name, "keepdim")
        dt = self._dtype(dtype, name, allow_null=True)
        v = t.value
        declared: Attribute = i1
        if dt is not DataType.Null:
            et = to_element_type(dt)
            if cls in (fusion.SumOp, fusion.ProdOp):
                v = self._cast(v, et)
                declared = et
        if cls is fusion.MeanOp:
            # as torch.mean: the mean of integers needs a floating-point dtype= (nvFuser's
            # frontend has no mean; the result would otherwise be a float of an int input)
            wanted = elem_of(v) if dt is DataType.Null else to_element_type(dt)
            if not rules.is_float(wanted):
                what = f"argument 'dtype' is {dt!r}" if dt is not DataType.Null else f"the input is {t.dtype()!r}"
                raise ArgumentError(
                    f"{name}: could not infer the output dtype: {what}; the mean needs a floating-point "
                    "dtype (pass dtype=DataType.Float to average integers, as torch.mean(x, dtype=...))")
            if not rules.is_float(elem_of(v)):
                v = self._cast(v, f32)
        props: dict[str, Attribute] = {"dims": fusion.int_list(ds)}
        if keep:
            props["keepdim"] = UnitAttr()
        out = self._tensor_op(name, lambda: make_op(cls, [v], props, [TensorType(declared, [])]))
        if dt is not DataType.Null and elem_of(out.value) != to_element_type(dt):
            return self.cast(out, dt)  # type: ignore[return-value]
        return out

    def sum(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Sum over `dims` (all by default); Bool and integer inputs accumulate in Int."""
        return self._reduction("sum", fusion.SumOp, arg, dims, keepdim, dtype)

    def prod(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Product over `dims` (all by default)."""
        return self._reduction("prod", fusion.ProdOp, arg, dims, keepdim, dtype)

    def max(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Maximum over `dims` (all by default)."""
        return self._reduction("max", fusion.MaxOp, arg, dims, keepdim, dtype)

    def min(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Minimum over `dims` (all by default)."""
        return self._reduction("min", fusion.MinOp, arg, dims, keepdim, dtype)

    def mean(self, arg: object, dims: object = None, keepdim: object = False, dtype: object = DataType.Null) -> Tensor:
        """Mean over `dims` (an Allotment extension: nvFuser spells it sum / count)."""
        return self._reduction("mean", fusion.MeanOp, arg, dims, keepdim, dtype)

    def var_mean(self, arg: object, dims: object, correction: object = 1, keepdim: object = False) -> tuple[Tensor, Tensor]:
        """(variance, mean) over `dims`; the variance divides by N - correction."""
        name = "var_mean"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        ds = self._dims(dims, t.ndim, name)
        corr = self._int(correction, name, "correction")
        if corr < 0:
            raise ArgumentError(f"{name}: argument 'correction' must be non-negative, got {corr}")
        keep = self._bool(keepdim, name, "keepdim")
        v = t.value
        if not rules.is_float(elem_of(v)):
            raise ArgumentError(f"{name}: argument 'arg' must be a floating-point tensor, got {t.dtype()!r}")
        if elem_of(v) in HALF:
            v = self._cast(v, f32)
        props: dict[str, Attribute] = {"dims": fusion.int_list(ds), "correction": IntegerAttr(corr, i64)}
        if keep:
            props["keepdim"] = UnitAttr()
        ph = TensorType(i1, [])
        op = self._build(name, lambda: make_op(fusion.VarMeanOp, [v], props, [ph, ph]))
        return self._fd._tensor_result(op, 0), self._fd._tensor_result(op, 1)

    def var(self, arg: object, dims: object, correction: object = 1, keepdim: object = False) -> Tensor:
        """Variance over `dims` (the first result of `var_mean`)."""
        return self.var_mean(arg, dims, correction, keepdim)[0]

    def welford(self, arg: object, dims: object) -> tuple[Tensor, Tensor, Tensor]:
        """(avg, var_sum, n) over `dims` (`fusion.welford`): the mean, the sum of squared
        deviations (M2) and the count (Int) of reduced elements; f32 for 16-bit inputs."""
        name = "welford"
        self._open(name)
        t = self._tensor(arg, name, "arg")
        ds = self._dims(dims, t.ndim, name)
        if not rules.is_float(rules.element_type_of(t.value.type)):
            raise ArgumentError(f"{name}: argument 'arg' must be a floating-point tensor, got {t.dtype()!r}")
        ph = TensorType(i1, [])
        v = t.value
        op = self._build(name, lambda: make_op(fusion.WelfordOp, [v], {"dims": fusion.int_list(ds)}, [ph, ph, ph]))
        return self._fd._tensor_result(op, 0), self._fd._tensor_result(op, 1), self._fd._tensor_result(op, 2)
