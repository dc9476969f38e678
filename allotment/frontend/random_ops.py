"""`fd.ops` random numbers (`rand`, `randn`, `uniform`, `normal`, `rand_like`,
`randn_like`): a mixin of `allotment.frontend.ops.Operators`.

Random ops follow nvFuser's signatures. `rng_seed` and `rng_offset` (ints or
integer Scalars) are given together or not at all: given, the values are a
pure function of (seed, offset, the element's row-major index, dtype)
(`fusion.rand`); not given, the fusion gets a hidden seed argument that every
`execute` fills from torch's default CPU generator, and the k-th unseeded op
uses offset k (`FusionDefinition._rng_state`). `uniform` and `normal` are
`minval + (maxval - minval) * rand` and `mean + std * randn`, computed in f32
(f64 for f64) and rounded once to `dtype`, as nvFuser computes them.
"""

from __future__ import annotations

import numbers
from typing import Any

from xdsl.dialects.builtin import Float64Type, IntegerType, TensorType, f32, f64, i1, i64
from xdsl.ir import Attribute, SSAValue

from allotment.dialects import fusion
from allotment.dialects import fusion_rules as rules
from allotment.errors import ArgumentError
from allotment.frontend.building import make_op
from allotment.frontend.datatypes import DataType, from_element_type, to_element_type
from allotment.frontend.handles import Scalar, Tensor
from allotment.frontend.operands import OperatorBase


class RandomOperators(OperatorBase):
    """The random-number ops of `fd.ops` (`uniform` and `normal` call the elementwise ops
    of the composed `Operators`)."""

    def _rng_operands(self, name: str, rng_seed: object, rng_offset: object) -> tuple[SSAValue, SSAValue]:
        if (rng_seed is None) != (rng_offset is None):
            raise ArgumentError(f"{name}: rng_seed and rng_offset must be provided together")
        if rng_seed is None:
            return self._fd._rng_state()
        out = []
        for x, arg in ((rng_seed, "rng_seed"), (rng_offset, "rng_offset")):
            if isinstance(x, bool) or not isinstance(x, numbers.Integral | Scalar):
                raise ArgumentError(f"{name}: argument '{arg}' must be an int or an integer Scalar, got "
                                    f"{type(x).__name__} {x!r}")
            v = self._scalar_operand(x, name, arg)
            if not isinstance(v.type, IntegerType) or v.type == i1:
                raise ArgumentError(f"{name}: argument '{arg}' must be an integer Scalar, got a "
                                    f"{rules.type_name(v.type)} scalar")
            out.append(self._convert_scalar(v, i64))
        return out[0], out[1]

    def _float_dtype(self, dtype: object, name: str) -> Attribute:
        et = to_element_type(self._dtype(dtype, name))
        if not rules.is_float(et):
            raise ArgumentError(f"{name}: random distributions only create floating-point types, got {dtype!r}")
        return et

    def _random(self, name: str, cls: type[fusion.RandomOp], entries: list[int | SSAValue], et: Attribute,
                rng_seed: object, rng_offset: object) -> Tensor:
        seed, offset = self._rng_operands(name, rng_seed, rng_offset)
        static, dynamic = self._split(entries)
        props = {"static_sizes": fusion.int_list(static)}
        return self._tensor_op(name, lambda: make_op(cls, [seed, offset, dynamic], props, [TensorType(et, [])]))

    def _of_shape(self, name: str, cls: type[fusion.RandomOp], shape: object, dtype: object, rng_seed: object,
                  rng_offset: object) -> Tensor:
        """`rand` or `randn`: numbers of `shape` and floating-point `dtype`."""
        self._open(name)
        et = self._float_dtype(dtype, name)
        return self._random(name, cls, self._creation_shape(shape, name), et, rng_seed, rng_offset)

    def rand(self, shape: object, dtype: DataType = DataType.Float, rng_seed: object = None,
             rng_offset: object = None) -> Tensor:
        """Uniform [0, 1) numbers of `shape` (ints and Scalars) and `dtype` (`fusion.rand`)."""
        return self._of_shape("rand", fusion.RandOp, shape, dtype, rng_seed, rng_offset)

    def randn(self, shape: object, dtype: DataType = DataType.Float, rng_seed: object = None,
              rng_offset: object = None) -> Tensor:
        """Standard normal numbers of `shape` and `dtype` (`fusion.randn`)."""
        return self._of_shape("randn", fusion.RandnOp, shape, dtype, rng_seed, rng_offset)

    def _like(self, name: str, cls: type[fusion.RandomOp], arg: object, rng_seed: object,
              rng_offset: object) -> Tensor:
        self._open(name)
        t = self._tensor(arg, name, "arg")
        et = rules.element_type_of(t.value.type)
        if not rules.is_float(et):
            raise ArgumentError(f"{name}: argument 'arg' must be a floating-point tensor, got {t.dtype()!r}")
        entries = [self._extent(t.value, d) for d in range(t.ndim)]
        return self._random(name, cls, entries, et, rng_seed, rng_offset)

    def rand_like(self, arg: object, rng_seed: object = None, rng_offset: object = None) -> Tensor:
        """Uniform [0, 1) numbers of `arg`'s shape and dtype."""
        return self._like("rand_like", fusion.RandOp, arg, rng_seed, rng_offset)

    def randn_like(self, arg: object, rng_seed: object = None, rng_offset: object = None) -> Tensor:
        """Standard normal numbers of `arg`'s shape and dtype."""
        return self._like("randn_like", fusion.RandnOp, arg, rng_seed, rng_offset)

    def _affine(self, name: str, cls: type[fusion.RandomOp], a: object, b: object, arg_names: tuple[str, str],
                shape: object, rng_seed: object, rng_offset: object, dtype: object) -> Tensor:
        """`base + scale * draw` in f32 (f64 for f64), then `dtype`; `scale` is `b - a` for uniform."""
        self._open(name)
        et = self._float_dtype(dtype, name)
        for x, arg in zip((a, b), arg_names):
            if isinstance(x, Tensor) or not isinstance(x, numbers.Real | Scalar) or isinstance(x, bool):
                raise ArgumentError(f"{name}: argument '{arg}' must be a Python number or a Scalar, got "
                                    f"{type(x).__name__}")
        ct = f64 if isinstance(et, Float64Type) else f32
        draw = self._random(name, cls, self._creation_shape(shape, name), ct, rng_seed, rng_offset)
        if cls is fusion.RandOp:  # uniform: minval + (maxval - minval) * u
            base = a
            scale: Any = b - a if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) else self.sub(b, a)
        else:  # normal: mean + std * n
            base, scale = a, b
        out = self.add(self.mul(draw, scale), base)
        assert isinstance(out, Tensor)
        if et == ct:
            return out
        cast = self.cast(out, from_element_type(et))
        assert isinstance(cast, Tensor)
        return cast

    def uniform(self, minval: object, maxval: object, shape: object, rng_seed: object = None,
                rng_offset: object = None, dtype: DataType = DataType.Float) -> Tensor:
        """Uniform numbers in [minval, maxval): `minval + (maxval - minval) * rand`."""
        return self._affine("uniform", fusion.RandOp, minval, maxval, ("minval", "maxval"), shape,
                            rng_seed, rng_offset, dtype)

    def normal(self, mean: object, std: object, shape: object, rng_seed: object = None,
               rng_offset: object = None, dtype: DataType = DataType.Float) -> Tensor:
        """Normal numbers `mean + std * randn`."""
        return self._affine("normal", fusion.RandnOp, mean, std, ("mean", "std"), shape,
                            rng_seed, rng_offset, dtype)
