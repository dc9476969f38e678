"""One semantics for sizes and checks, each rule in one home, checked against torch.

- Integer size arithmetic (`extents/size_arith.py`) is MLIR's `arith`: divsi and
  remsi truncate, floordivsi floors, ceildivsi rounds up, the unsigned ops read
  the bits as unsigned; a zero divisor and `index` overflow are errors naming
  the op. The symbolic folder, the size evaluator, the generated host program
  and the reference all use it: differential tests below.
- `max`/`min` over an empty reduced dimension raise, as torch does: in the
  reference, and in the compiled program before any kernel runs.
- Slice bounds follow torch: negative ones count from the end, then clamp.
- Pad, cat and shard extents: the concrete and symbolic twins agree.
- `plan_sizes`/`allocate_intermediates` check their arguments' types first.

Compiled programs run on the CPU through Triton's interpreter: tiny shapes.
"""

from __future__ import annotations

import io
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from xdsl.dialects.builtin import BFloat16Type, Float32Type, IndexType, IntegerType  # noqa: E402
from xdsl.printer import Printer  # noqa: E402

import allotment  # noqa: E402
from allotment import dtypes  # noqa: E402
from allotment.backend import host_runtime  # noqa: E402
from allotment.dialects import alloc, fusion  # noqa: E402
from allotment.errors import (  # noqa: E402
    ArgumentError,
    CompileError,
    Error,
    ParseError,
    RunError,
    ShapeError,
    VerifyError,
)
from allotment.extents import size_arith, view_extents  # noqa: E402
from allotment.extents import symbolic as sym  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import EvaluationError, evaluate  # noqa: E402
from allotment.reference import torch_dtype as reference_dtype  # noqa: E402

I64 = st.integers(-(2**63), 2**63 - 1)
SMALL = st.integers(-50, 50)


def reference(text: str, *inputs: object) -> list[torch.Tensor]:
    return evaluate(find_function(parse_module(text)), list(inputs))


# --------------------------------------------------------------------------- #
# size_arith: MLIR's arith on Python ints                                     #
# --------------------------------------------------------------------------- #


def _torch_op(op: str, a: int, b: int) -> int:
    """The op computed by torch on int64 (an independent oracle for the signed ops)."""
    ta, tb = torch.tensor(a, dtype=torch.int64), torch.tensor(b, dtype=torch.int64)
    if op == "divsi":
        return int(torch.div(ta, tb, rounding_mode="trunc"))
    if op == "remsi":
        return int(torch.fmod(ta, tb))
    if op == "floordivsi":
        return int(torch.div(ta, tb, rounding_mode="floor"))
    if op == "ceildivsi":
        return -int(torch.div(-ta, tb, rounding_mode="floor"))
    raise AssertionError(op)


@settings(max_examples=200, deadline=None)
@given(a=st.integers(-(2**62), 2**62), b=st.integers(-(2**62), 2**62).filter(bool))
@pytest.mark.parametrize("op", ["divsi", "remsi", "floordivsi", "ceildivsi"])
def test_signed_division_is_torchs(op: str, a: int, b: int) -> None:
    assert size_arith.apply(op, a, b) == _torch_op(op, a, b)


@pytest.mark.parametrize(
    "op, a, b, expected",
    [
        ("remsi", -7, 2, -1), ("remsi", 7, -2, 1), ("divsi", -7, 2, -3), ("floordivsi", -7, 2, -4),
        ("ceildivsi", -7, 2, -3), ("ceildivsi", 7, 2, 4),
        ("divui", -1, 2, 2**63 - 1), ("remui", -1, 10, 5), ("ceildivui", -1, 2**62, 4),
        ("minui", -1, 3, 3), ("maxui", -1, 3, -1), ("minsi", -1, 3, -1),
    ],
)
def test_mlir_arith_values(op: str, a: int, b: int, expected: int) -> None:
    assert size_arith.apply(op, a, b) == expected


@pytest.mark.parametrize("op", sorted(size_arith.DIVISIONS))
def test_a_zero_divisor_is_an_error_naming_the_op(op: str) -> None:
    with pytest.raises(size_arith.SizeArithmeticError, match=f"arith.{op}: division by zero") as info:
        size_arith.apply(op, 7, 0)
    assert isinstance(info.value, ShapeError) and isinstance(info.value, RunError)
    assert not isinstance(info.value, ZeroDivisionError)


@settings(max_examples=100, deadline=None)
@given(a=I64, b=I64)
def test_index_overflow_is_an_error_and_iN_wraps(a: int, b: int) -> None:
    exact = a * b
    if -(2**63) <= exact < 2**63:
        assert size_arith.muli(a, b) == exact
    else:
        with pytest.raises(size_arith.SizeArithmeticError, match="arith.muli.*overflows 64-bit index"):
            size_arith.muli(a, b)
    wrapped = int(torch.tensor(a, dtype=torch.int64) * torch.tensor(b, dtype=torch.int64))
    assert size_arith.wrapping("muli", a, b, 64) == wrapped


@pytest.mark.parametrize(
    "predicate, a, b, holds",
    [("eq", 3, 3, True), ("eq", 3, 4, False), ("ge", 4, 3, True), ("ge", 2, 3, False),
     ("divisible", -6, 3, True), ("divisible", 7, 3, False), ("divisible", 0, 0, False), ("divisible", 6, 0, False)],
)
def test_check_predicates_have_one_definition(predicate: str, a: int, b: int, holds: bool) -> None:
    assert size_arith.check_holds(predicate, a, b) is holds
    if holds:
        host_runtime.check(predicate, a, b, "message")
    else:
        with pytest.raises(RunError, match=r"message \(got"):
            host_runtime.check(predicate, a, b, "message")
    assert alloc.CHECK_PREDICATES == tuple(size_arith.CHECK_PREDICATES)


def test_the_host_runtime_arithmetic_is_size_arith() -> None:
    assert host_runtime.size_arith is size_arith
    assert host_runtime.trunc_div is size_arith.divsi and host_runtime.trunc_rem is size_arith.remsi


@settings(max_examples=200, deadline=None)
@given(a=SMALL, b=SMALL, op=st.sampled_from(size_arith.OPS))
def test_symbolic_folding_and_evaluation_mean_the_same(op: str, a: int, b: int) -> None:
    folded = sym.binop(op, sym.Const(a), sym.Const(b))
    symbolic = sym.binop(op, sym.ArgScalar(0), sym.ArgScalar(1))
    try:
        expected = size_arith.apply(op, a, b)
    except size_arith.SizeArithmeticError:
        assert not isinstance(folded, sym.Const)  # left for run time to report
        with pytest.raises(size_arith.SizeArithmeticError):
            sym.evaluate(symbolic, [a, b])
        return
    assert folded == sym.Const(expected)
    assert sym.evaluate(symbolic, [a, b]) == expected


# --------------------------------------------------------------------------- #
# Sizes in compiled programs and in the reference                              #
# --------------------------------------------------------------------------- #

SIZED = """func.func @f(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {{
  %c0 = arith.constant 0 : index
  %k = arith.constant {k} : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %r = arith.{op} %k, %n : index
  %m = arith.addi %r, %n : index
  %o = fusion.full %s [%m] : f32 -> tensor<?xf32>
  func.return %o : tensor<?xf32>
}}"""


@pytest.mark.parametrize("op", ["remsi", "divsi", "floordivsi", "ceildivsi"])
@pytest.mark.parametrize("k", [-7, 7])
def test_compiled_sizes_agree_with_the_reference_and_torch(op: str, k: int) -> None:
    x = torch.randn(4)
    (out,) = check(SIZED.format(op=op, k=k), x, 1.5)
    assert out.shape == (_torch_op(op, k, 4) + 4,)
    assert torch.all(out == 1.5)


def test_a_zero_divisor_in_sizes_is_an_error_naming_the_op() -> None:
    text = SIZED.format(op="divsi", k=8)
    x = torch.empty(0)
    with pytest.raises(EvaluationError, match="arith.divsi: division by zero"):
        reference(text, x, 1.0)
    with pytest.raises(Error, match="arith.divsi: division by zero") as info:
        allotment.compile(text)(x, 1.0)
    assert isinstance(info.value, RunError | ShapeError)
    with pytest.raises(ShapeError, match="arith.divsi: division by zero"):
        allotment.plan_sizes(text, {"x": (0,)})


def test_the_host_program_calls_size_arith() -> None:
    source = allotment.compile(SIZED.format(op="remsi", k=-7)).source()
    assert "rt.size_arith.remsi(" in source and "rt.size_arith.addi(" in source
    assert "//" not in source.split("def run(", 1)[1].split("launch_", 1)[0]


# --------------------------------------------------------------------------- #
# max / min over an empty dimension                                            #
# --------------------------------------------------------------------------- #

MAX_ROWS = """func.func @f(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %e = fusion.exp %x : tensor<?x?xf32>
  %m = fusion.max %e dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %m : tensor<?xf32>
}"""


@pytest.mark.parametrize("shape", [(3, 0), (0, 0)])
def test_max_over_an_empty_dimension_raises_like_torch(shape: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.empty(shape)
    with pytest.raises((RuntimeError, IndexError), match="Expected reduction dim 1 to have non-zero size"):
        torch.amax(x, 1)
    with pytest.raises(EvaluationError, match="cannot reduce dimension 1 of extent 0"):
        reference(MAX_ROWS, x)
    launched: list[object] = []
    monkeypatch.setattr(host_runtime, "launch", lambda *a, **k: launched.append(a))
    with pytest.raises(RunError, match=r"fusion.max: dimension 1 of %e \(x.shape\[1\]\) must not be empty"):
        allotment.compile(MAX_ROWS)(x)
    assert launched == []  # the check runs before any kernel


def test_max_over_non_empty_rows_of_an_empty_batch_is_empty() -> None:
    (out,) = check(MAX_ROWS, torch.empty(0, 3))
    assert out.shape == (0,)
    assert torch.amax(torch.empty(0, 3), 1).shape == (0,)


def test_min_over_rows_matches_torch() -> None:
    text = MAX_ROWS.replace("fusion.max", "fusion.min")
    x = torch.randn(3, 5)
    (out,) = check(text, x)
    torch.testing.assert_close(out, torch.amin(torch.exp(x), 1))


# --------------------------------------------------------------------------- #
# Slices: torch's bounds                                                        #
# --------------------------------------------------------------------------- #


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 12), start=st.integers(-15, 15), stop=st.integers(-15, 15), step=st.integers(1, 4))
def test_slice_extents_are_torchs(n: int, start: int, stop: int, step: int) -> None:
    expected = torch.arange(n)[start:stop:step]
    first, count = view_extents.slice_bounds(n, start, stop, step)
    assert count == expected.numel()
    if count:
        assert first == int(expected[0])
    symbolic = view_extents.slice_sym(sym.ArgDim(0, 0), sym.ArgScalar(1), sym.ArgScalar(2), sym.ArgScalar(3))
    assert [sym.evaluate(e, [(n,), start, stop, step]) for e in symbolic] == [first, count]
    if n:
        assert fusion.slice_extent(n, start, stop, step) == count


DYNAMIC_SLICE = """func.func @f(%x: tensor<?x3xf32>, %a: index, %b: index) -> tensor<?x3xf32> {
  %y = fusion.slice %x [%a, 0] to [%b, 3] step [2, 1] : tensor<?x3xf32> -> tensor<?x3xf32>
  %z = fusion.neg %y : tensor<?x3xf32>
  func.return %z : tensor<?x3xf32>
}"""


@pytest.mark.parametrize("a, b", [(-1, 10), (-3, -1), (-30, 5), (2, -2), (12, 3), (1, 100)])
def test_dynamic_negative_slice_bounds_compile_to_torchs_slice(a: int, b: int) -> None:
    x = torch.randn(10, 3)
    (out,) = check(DYNAMIC_SLICE, x, a, b)
    torch.testing.assert_close(out, -x[a:b:2])


def test_a_constant_negative_start_plans_one_row_and_runs() -> None:
    text = """func.func @f(%x: tensor<10x4xf32>) -> tensor<?x4xf32> {
  %c = arith.constant -1 : index
  %y = fusion.slice %x [%c, 0] to [10, 4] step [1, 1] : tensor<10x4xf32> -> tensor<?x4xf32>
  %z = fusion.neg %y : tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}"""
    assert allotment.plan_sizes(text, {})["z"].shape == (1, 4)
    x = torch.randn(10, 4)
    (out,) = check(text, x)
    torch.testing.assert_close(out, -x[-1:])


@pytest.mark.parametrize("start, stop, rows", [(-3, 10, 3), (-30, -5, 5), (-2, -4, 0)])
def test_static_negative_slice_bounds(start: int, stop: int, rows: int) -> None:
    text = f"""func.func @f(%x: tensor<10x2xf32>) -> tensor<{rows}x2xf32> {{
  %y = fusion.slice %x [{start}, 0] to [{stop}, 2] step [1, 1] : tensor<10x2xf32> -> tensor<{rows}x2xf32>
  %z = fusion.neg %y : tensor<{rows}x2xf32>
  func.return %z : tensor<{rows}x2xf32>
}}"""
    x = torch.randn(10, 2)
    (out,) = check(text, x)
    torch.testing.assert_close(out, -x[start:stop])


# --------------------------------------------------------------------------- #
# Pad, cat, shards: concrete and symbolic twins                                #
# --------------------------------------------------------------------------- #


@settings(max_examples=100, deadline=None)
@given(e=st.integers(0, 20), lo=st.integers(0, 5), hi=st.integers(0, 5))
def test_pad_extent_is_torchs(e: int, lo: int, hi: int) -> None:
    expected = torch.nn.functional.pad(torch.zeros(e), (lo, hi)).shape[0]
    assert view_extents.pad_extent(e, lo, hi) == expected
    assert sym.evaluate(view_extents.pad_extent_sym(sym.ArgDim(0, 0), lo, hi), [(e,)]) == expected


def test_cat_extent_is_torchs() -> None:
    sizes = [3, 0, 5]
    assert view_extents.cat_extent(sizes) == torch.cat([torch.zeros(s) for s in sizes]).shape[0]


@pytest.mark.parametrize("uneven", [False, True])
def test_local_shard_extents_have_one_rule(uneven: bool) -> None:
    for g in range(0, 17):
        for k in range(1, 5):
            if not view_extents.shard_divides(g, k, uneven):
                assert not uneven and g % k
                continue
            local = view_extents.local_extent(g, k, uneven)
            assert local == (-(-g // k) if uneven else g // k)
            assert sym.evaluate(view_extents.local_extent_sym(sym.ArgDim(0, 0), k, uneven), [(g,)]) == local


def test_element_types_have_one_table() -> None:
    for t in (Float32Type(), BFloat16Type(), IndexType(), IntegerType(1), IntegerType(32)):
        assert reference_dtype(t) == dtypes.torch_dtype(t)
    text = """func.func @f(%x: tensor<?xbf16>) -> tensor<?xi1> {
  %y = fusion.cast %x : tensor<?xbf16> to tensor<?xi1>
  func.return %y : tensor<?xi1>
}"""
    assert allotment.plan_sizes(text, {"x": (4,)})["y"].dtype == "bool"
    assert allotment.allocate_intermediates(text, {"x": (4,)})["y"].dtype == torch.bool


# --------------------------------------------------------------------------- #
# plan_sizes / allocate_intermediates: arguments                               #
# --------------------------------------------------------------------------- #

RMS = """func.func @f(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fusion.exp %x : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}"""


SCALED = """func.func @f(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %y = fusion.mul %x, %s : tensor<?xf32>, f32 -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}"""


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: allotment.plan_sizes(RMS, {"x": "8x8"}), r"input_shapes\['x'\] must be a shape .* not str"),
        (lambda: allotment.plan_sizes(RMS, [(8, 8)]), "input_shapes must be a mapping .* not list"),
        (lambda: allotment.plan_sizes(RMS, {"x": (8, 8.0)}), r"input_shapes\['x'\]\[1\] must be an int, not float"),
        (lambda: allotment.plan_sizes(RMS, {"x": (True, 8)}), r"input_shapes\['x'\]\[0\] must be an int, not bool"),
        (lambda: allotment.plan_sizes(RMS, {"x": (-1, 8)}), r"input_shapes\['x'\]: extents must be non-negative"),
        (lambda: allotment.plan_sizes(RMS, {1: (8, 8)}), "keys must be argument names"),
        (lambda: allotment.plan_sizes(RMS, {"x": (8, 8), "q": (1,)}), "input_shapes: no argument named q"),
        (lambda: allotment.plan_sizes(RMS, {"x": 8}), r"argument x is a tensor .*give its shape as a sequence"),
        (lambda: allotment.plan_sizes(SCALED, {"x": (4,), "s": (1,)}), r"argument s is a scalar .*one int, not"),
        (lambda: allotment.plan_sizes(SCALED, {"x": 4}), r"argument x is a tensor \(tensor<\?xf32>\)"),
        (lambda: allotment.plan_sizes(RMS, {"x": (2**63, 8)}), r"input_shapes\['x'\]\[0\] = 9223372036854775808 does"),
        (lambda: allotment.plan_sizes(42, {"x": (8, 8)}), "fusion_ir must be IR text .* not int"),
        (lambda: allotment.plan_sizes(RMS, {"x": (8, 8)}, function=3), "function must be a function name"),
        (lambda: allotment.plan_sizes(RMS, {"x": (8, 8)}, function="g"), "function: no function @g"),
        (lambda: allotment.plan_sizes(RMS, {"x": (8, 8)}, device_id="0"), "device_id must be an int"),
        (lambda: allotment.plan_sizes(RMS, {"x": (8, 8)}, device_id=-1), "device_id must be non-negative"),
        (lambda: allotment.allocate_intermediates(RMS, {"x": (8, 8)}, device=3), "device must be a str or a torch.dev"),
        (lambda: allotment.allocate_intermediates(RMS, {"x": (8, 8)}, device="gpu7"), "device 'gpu7' is not a torch"),
    ],
)
def test_bad_arguments_raise_argument_error_naming_them(call, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ArgumentError, match=message):
        call()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_a_missing_device_is_an_argument_error_naming_it() -> None:
    with pytest.raises(ArgumentError, match="device 'cuda' is not available"):
        allotment.allocate_intermediates(RMS, {"x": (8, 8)}, device="cuda")


def test_a_buffer_too_large_for_memory_is_a_run_error() -> None:
    with pytest.raises(RunError, match="cannot allocate buffer y"):
        allotment.allocate_intermediates(RMS, {"x": (2**44, 8)}, device="cpu")  # 2^49 bytes


def test_types_past_a_64_bit_index_are_parse_errors() -> None:
    """An extent past a 64-bit index is refused where the type is written (a ParseError at
    its column); a type whose extents fit but whose bytes do not is a verifier's error."""
    text = "func.func @f(%x: tensor<9223372036854775808xf32>) -> tensor<9223372036854775808xf32> {\n" \
        "  func.return %x : tensor<9223372036854775808xf32>\n}\n"
    with pytest.raises(ParseError, match=r"<string>:1:18: error: tensor: extent 9223372036854775808 does not fit"):
        allotment.plan_sizes(text, {})
    text = "func.func @f(%x: tensor<4611686018427387904xi64>) -> tensor<4611686018427387904xi64> {\n" \
        "  func.return %x : tensor<4611686018427387904xi64>\n}\n"
    with pytest.raises(VerifyError, match=r"<string>:1:1: error: func.func: @f argument #0 .* do not fit"):
        allotment.plan_sizes(text, {})


def test_ops_the_passes_cannot_allocate_are_compile_errors() -> None:
    text = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = fusion.add %x, %e : tensor<4xf32>
  func.return %y : tensor<4xf32>
}"""
    with pytest.raises(CompileError, match="tensor.empty: cannot reify the shape of its result"):
        allotment.plan_sizes(text, {})


def test_shape_mismatches_are_shape_errors() -> None:
    with pytest.raises(ShapeError, match="argument x: shape 8x9 does not fit"):
        allotment.plan_sizes(RMS, {"x": (8, 9)})


def test_a_func_op_passed_in_is_not_modified() -> None:
    module = parse_module(RMS)
    f = find_function(module)

    def text() -> str:
        stream = io.StringIO()
        Printer(stream=stream).print_op(module)
        return stream.getvalue()

    before = text()
    assert allotment.plan_sizes(f, {"x": (2, 8)})["y"].shape == (2, 8)
    assert allotment.allocate_intermediates(f, {"x": (2, 8)})["y"].shape == (2, 8)
    assert text() == before
