"""Complex tensors and scalars (DataType.ComplexFloat / ComplexDouble) through FusionDefinition.

As nvFuser's test_python_frontend.py uses them (test_complex_constants, test_complex_rsqrt,
test_real_imag, test_reduction_complex_number, test_where_dtypes): complex64 and
complex128 tensors and complex scalars through the pointwise ops nvFuser has on them,
checked against torch on the same inputs, on the backend (the kernels hold each complex
value as its two real parts) and on the reference evaluator (torch's complex tensors).
"""

from __future__ import annotations

import pytest
import torch
from frontend_helpers import DEVICE

from allotment import DataType, FusionDefinition
from allotment.errors import Error

CDTYPES = [torch.complex64, torch.complex128]


def crandn(*shape: int, dtype: torch.dtype = torch.complex64) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, device=DEVICE)


def close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    tol = 1e-5 if expected.dtype in (torch.complex64, torch.float32) else 1e-12
    torch.testing.assert_close(actual.cpu(), expected.cpu(), rtol=tol, atol=tol, equal_nan=True)


def test_complex_constant_times_tensor(run_fusion) -> None:
    x = torch.arange(3, device=DEVICE).type(torch.complex64)
    with FusionDefinition() as fd:
        c0 = fd.define_scalar(complex(3.0, 0.5))
        assert c0.dtype() == DataType.ComplexDouble
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), c0))
    (out,) = run_fusion(fd, [x])
    close(out, x * (3.0 + 0.5j))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_pointwise(run_fusion, dtype: torch.dtype) -> None:
    x, y = crandn(6, dtype=dtype), crandn(6, dtype=dtype)
    r = torch.randn(6, device=DEVICE)
    with FusionDefinition() as fd:
        t0, t1, t2 = fd.from_pytorch(x), fd.from_pytorch(y), fd.from_pytorch(r)
        for out in (fd.ops.add(t0, t1), fd.ops.sub(t0, t2), fd.ops.mul(t0, t1), fd.ops.div(t0, t1),
                    fd.ops.div(t2, t0), fd.ops.neg(t0), fd.ops.exp(t0), fd.ops.abs(t0), fd.ops.sqrt(t0),
                    fd.ops.rsqrt(t0), fd.ops.real(t0), fd.ops.imag(t0), fd.ops.mul(t2, 2.0 - 1.0j)):
            fd.add_output(out)
    outs = run_fusion(fd, [x, y, r])
    expected = [x + y, x - r, x * y, x / y, r / x, -x, x.exp(), x.abs(), x.sqrt(), x.rsqrt(), x.real, x.imag,
                r * (2.0 - 1.0j)]
    for out, e in zip(outs, expected, strict=True):
        close(out, e)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_sum_and_casts(run_fusion, dtype: torch.dtype) -> None:
    # nvFuser's test_reduction_complex_number: sum(t, [-1], False, ComplexFloat/ComplexDouble)
    x = crandn(2, 8, dtype=dtype)
    r = torch.randn(2, 8, device=DEVICE)
    cd = DataType.ComplexFloat if dtype == torch.complex64 else DataType.ComplexDouble
    with FusionDefinition() as fd:
        t0, t1 = fd.from_pytorch(x), fd.from_pytorch(r)
        fd.add_output(fd.ops.sum(t0, [-1], False, cd))
        fd.add_output(fd.ops.cast(t1, cd))
        fd.add_output(fd.ops.cast(t0, DataType.ComplexDouble))
        fd.add_output(fd.ops.cast(t0, DataType.Bool))
    outs = run_fusion(fd, [x, r])
    close(outs[0], x.sum(-1))
    close(outs[1], r.to(dtype))
    close(outs[2], x.to(torch.complex128))
    assert torch.equal(outs[3].cpu(), (x != 0).cpu())


def test_complex_where_and_scalar_input(run_fusion) -> None:
    # nvFuser's test_where_dtypes: where of complex scalars is complex (ComplexDouble for
    # Python complex numbers, ComplexFloat where the scalars say so)
    p = torch.tensor([True, False, True], device=DEVICE)
    x = crandn(3)
    with FusionDefinition() as fd:
        t0, t1 = fd.from_pytorch(p), fd.from_pytorch(x)
        s = fd.define_scalar(None, dtype=DataType.ComplexFloat)
        fd.add_output(fd.ops.where(t0, fd.define_scalar(complex(3.0)), fd.define_scalar(complex(5.0))))
        fd.add_output(fd.ops.where(t0, fd.define_scalar(3.0 + 0j, DataType.ComplexFloat),
                                   fd.define_scalar(5.0 + 0j, DataType.ComplexFloat)))
        fd.add_output(fd.ops.where(t0, t1, s))
    a, b, c = run_fusion(fd, [p, x, 1.0 - 2.0j])
    close(a, torch.where(p, 3.0 + 0j, 5.0 + 0j).to(torch.complex128))
    close(b, torch.where(p, 3.0 + 0j, 5.0 + 0j).to(torch.complex64))
    close(c, torch.where(p, x, torch.tensor(1.0 - 2.0j, dtype=torch.complex64, device=DEVICE)))


def test_complex_input_is_not_modified_and_views_work(run_fusion) -> None:
    x = crandn(3, 4)
    kept = x.clone()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.permute(fd.ops.mul(t0, t0), [1, 0]))
    (out,) = run_fusion(fd, [x])
    assert torch.equal(x, kept)
    close(out, (x * x).permute(1, 0))


def test_complex_ops_without_complex_semantics_are_refused() -> None:
    x = crandn(3)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        with pytest.raises(Error, match="does not take complex values"):
            fd.ops.lt(t0, t0)
        fd.add_output(t0)


COMPLEX_IR = """func.func @fusion(%a: tensor<?xcomplex<f32>>, %s: complex<f64>) -> (tensor<?xcomplex<f32>>, tensor<?xf32>) {
  %b = fusion.mul %a, %s : tensor<?xcomplex<f32>>, complex<f64> -> tensor<?xcomplex<f32>>
  %c = fusion.abs %b : tensor<?xcomplex<f32>> -> tensor<?xf32>
  func.return %b, %c : tensor<?xcomplex<f32>>, tensor<?xf32>
}"""


def test_split_complex_leaves_no_complex_value() -> None:
    from allotment.ir import find_function, parse_module
    from allotment.passes.complex_parts import has_complex, split_complex

    fn = find_function(parse_module(COMPLEX_IR), "fusion")
    split = split_complex(fn)
    assert split.complex_args == [True, True] and split.complex_results == [True, False]
    assert not has_complex(split.function)
    assert [str(t) for t in split.function.function_type.inputs.data] == [
        "tensor<?xf32>", "tensor<?xf32>", "f64", "f64"]
    split.function.verify()


def test_compile_refuses_complex_values_with_a_clear_error() -> None:
    import allotment

    with pytest.raises(allotment.CompileError, match="has complex values"):
        allotment.compile(COMPLEX_IR)
