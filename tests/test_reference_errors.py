"""The reference evaluator's input checks and run-time precondition checks.

Every error is an `EvaluationError` (a `UserError`) whose message names the op
or argument at fault and the values involved.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402

from allotment import reference  # noqa: E402
from allotment.dialects import fusion  # noqa: E402
from allotment.errors import Error as UserError  # noqa: E402
from allotment.ir import find_function, load_module, parse_module  # noqa: E402
from allotment.reference import EvaluationError, ReferenceBug, evaluate, random_inputs  # noqa: E402


def fn_of(src: str, name: str = "<string>"):
    return find_function(parse_module(src, name))


def op1(args: str, line: str, result: str):
    return fn_of(f"func.func @f({args}) -> {result} {{\n  %res = {line}\n  func.return %res : {result}\n}}")


def fails(fn, inputs, *fragments: str) -> str:
    """Evaluating raises an EvaluationError whose message contains every fragment."""
    with pytest.raises(EvaluationError) as info:
        evaluate(fn, list(inputs))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


ADD = op1("%a: tensor<?x4xf32>, %b: tensor<?x4xf32>", "fusion.add %a, %b : tensor<?x4xf32>", "tensor<?x4xf32>")


def test_evaluation_errors_are_user_errors() -> None:
    assert issubclass(EvaluationError, UserError)


# --------------------------------------------------------------------------- #
# Inputs                                                                      #
# --------------------------------------------------------------------------- #


def test_wrong_number_of_inputs() -> None:
    fails(ADD, [torch.zeros(2, 4)], "@f takes 2 inputs, got 1", "%a: tensor<?x4xf32>", "%b")


def test_scalar_given_for_a_tensor() -> None:
    fails(ADD, [torch.zeros(2, 4), 1.0], "argument #1 (%b: tensor<?x4xf32>) is a tensor", "float 1.0")


def test_tensor_given_for_a_scalar() -> None:
    fn = op1("%x: tensor<2xf32>, %s: f32", "fusion.mul %x, %s : tensor<2xf32>, f32 -> tensor<2xf32>", "tensor<2xf32>")
    fails(fn, [torch.zeros(2), torch.tensor(1.0)], "argument #1 (%s: f32) is a scalar, but the input is a tensor")


def test_wrong_dtype() -> None:
    fails(ADD, [torch.zeros(2, 4), torch.zeros(2, 4, dtype=torch.bfloat16)], "argument #1 (%b", "torch.bfloat16", "expected torch.float32")


def test_wrong_rank() -> None:
    fails(ADD, [torch.zeros(2, 4, 1), torch.zeros(2, 4)], "argument #0 (%a", "rank 3", "expected rank 2")


def test_wrong_static_extent() -> None:
    fails(ADD, [torch.zeros(2, 4), torch.zeros(2, 5)], "argument #1 (%b", "extent 5 in dimension 1", "expected 4")


@pytest.mark.parametrize(
    "ty, value, fragment",
    [
        ("index", 2.0, "expects an int, got float"),
        ("i64", True, "expects an int, got bool"),
        ("i32", 2**31, "does not fit in i32"),
        ("i1", 1, "expects a bool, got int"),
        ("f32", "x", "expects a float, got str"),
    ],
)
def test_wrong_scalar_inputs(ty: str, value: object, fragment: str) -> None:
    fn = fn_of(f"func.func @f(%s: {ty}) -> {ty} {{\n func.return %s : {ty}\n}}")
    fails(fn, [value], f"argument #0 (%s: {ty})", fragment)


def test_inputs_on_different_devices() -> None:
    fails(ADD, [torch.zeros(2, 4), torch.zeros(2, 4, device="meta")], "different devices", "meta")


def test_inputs_not_on_the_requested_device() -> None:
    with pytest.raises(EvaluationError, match="the input tensors are on cpu, not on meta"):
        evaluate(ADD, [torch.zeros(2, 4), torch.zeros(2, 4)], device="meta")
    (out,) = evaluate(ADD, [torch.zeros(2, 4), torch.zeros(2, 4)], device="cpu")
    assert out.device.type == "cpu"


def test_declarations_cannot_be_evaluated() -> None:
    fails(fn_of("func.func private @g(%x: tensor<2xf32>)"), [torch.zeros(2)], "@g is a declaration")


# --------------------------------------------------------------------------- #
# Elementwise broadcasting                                                    #
# --------------------------------------------------------------------------- #


def test_dynamic_extents_that_differ() -> None:
    message = fails(
        ADD, [torch.zeros(8, 4), torch.zeros(5, 4)],
        "fusion.add: dimension 0 extents differ at run time: operand #0 (%a) has 8, operand #1 (%b) has 5",
    )
    assert "size-1" not in message


def test_a_run_time_one_does_not_broadcast() -> None:
    fails(
        ADD, [torch.zeros(1, 4), torch.zeros(5, 4)],
        "fusion.add: dimension 0", "operand #0 (%a) has 1", "operand #1 (%b) has 5",
        "only static size-1 dimensions broadcast",
    )


def test_dynamic_extent_against_a_static_one() -> None:
    fn = op1(
        "%a: tensor<?x4xf32>, %b: tensor<8x4xf32>", "fusion.sub %a, %b : tensor<?x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>",
        "tensor<8x4xf32>",
    )
    fails(fn, [torch.zeros(3, 4), torch.zeros(8, 4)], "fusion.sub: dimension 0", "operand #0 (%a) has 3", "operand #1 (%b) has 8")


def test_static_one_operands_are_not_compared() -> None:
    fn = op1(
        "%a: tensor<?x4xf32>, %r: tensor<1x4xf32>", "fusion.mul %a, %r : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>",
        "tensor<?x4xf32>",
    )
    (out,) = evaluate(fn, [torch.ones(3, 4), torch.ones(1, 4)])
    assert out.shape == (3, 4)


def test_where_names_all_three_operands() -> None:
    fn = op1(
        "%p: tensor<?xi1>, %x: tensor<?xf32>, %y: tensor<?xf32>",
        "fusion.where %p, %x, %y : tensor<?xi1>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>", "tensor<?xf32>",
    )
    fails(
        fn, [torch.zeros(3, dtype=torch.bool), torch.zeros(3), torch.zeros(4)],
        "fusion.where: dimension 0", "operand #0 (%p) has 3", "operand #1 (%x) has 3", "operand #2 (%y) has 4",
    )


def test_comparison_and_logical_ops_check_extents() -> None:
    for name in ["lt", "logical_and"]:
        fn = op1("%a: tensor<?xf32>, %b: tensor<?xf32>", f"fusion.{name} %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xi1>", "tensor<?xi1>")
        fails(fn, [torch.zeros(2), torch.zeros(3)], f"fusion.{name}: dimension 0")


def test_unnamed_operands_are_numbered() -> None:
    fn = fn_of("""func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
      %0 = fusion.exp %a : tensor<?xf32>
      %1 = fusion.maximum %0, %b : tensor<?xf32>
      func.return %1 : tensor<?xf32>
    }""")
    message = fails(fn, [torch.zeros(2), torch.zeros(3)], "fusion.maximum: dimension 0")
    assert re.search(r"operand #0 has 2, operand #1 \(%b\) has 3", message)


def test_integer_division_by_zero() -> None:
    fn = op1("%a: tensor<3xi32>, %b: tensor<3xi32>", "fusion.div %a, %b : tensor<3xi32>", "tensor<3xi32>")
    fails(fn, [torch.ones(3, dtype=torch.int32), torch.tensor([1, 0, 2], dtype=torch.int32)], "fusion.div: integer division by zero", "%b")


def test_float_division_by_zero_is_fine() -> None:
    fn = op1("%a: tensor<2xf32>, %b: tensor<2xf32>", "fusion.div %a, %b : tensor<2xf32>", "tensor<2xf32>")
    (out,) = evaluate(fn, [torch.ones(2), torch.zeros(2)])
    assert torch.isinf(out).all()


# --------------------------------------------------------------------------- #
# Creation and shape ops                                                      #
# --------------------------------------------------------------------------- #


def test_full_with_a_negative_extent() -> None:
    fn = op1("%n: index, %v: f32", "fusion.full %v [4, %n] : f32 -> tensor<4x?xf32>", "tensor<4x?xf32>")
    fails(fn, [-3, 1.0], "fusion.full: sizes entry #1 (%n) is -3 at run time; it must be non-negative")


def test_iota_with_a_negative_length() -> None:
    fn = op1("%n: index, %v: f32", "fusion.iota [%n] start %v step %v : f32, f32 -> tensor<?xf32>", "tensor<?xf32>")
    fails(fn, [-1, 1.0], "fusion.iota: length entry #0 (%n) is -1")


def test_full_of_nan_into_integers() -> None:
    fn = op1("%v: f32", "fusion.full %v [2] : f32 -> tensor<2xi32>", "tensor<2xi32>")
    fails(fn, [float("nan")], "fusion.full: the fill value nan has no i32 value")


def test_broadcast_in_dim_extent_mismatch() -> None:
    fn = op1("%v: tensor<?xf32>", "fusion.broadcast_in_dim %v [2, 4] dims [1] : tensor<?xf32> -> tensor<2x4xf32>", "tensor<2x4xf32>")
    fails(fn, [torch.zeros(3)], "fusion.broadcast_in_dim: input dimension 0 has extent 3 at run time, but result dimension 1 has extent 4")
    fails(fn, [torch.zeros(1)], "input dimension 0 has extent 1", "only static size-1 dimensions broadcast")


def test_broadcast_in_dim_dynamic_result_extent() -> None:
    fn = op1(
        "%v: tensor<4xf32>, %n: index", "fusion.broadcast_in_dim %v [%n, 4] dims [1] : tensor<4xf32> -> tensor<?x4xf32>",
        "tensor<?x4xf32>",
    )
    fails(fn, [torch.zeros(4), -2], "fusion.broadcast_in_dim: shape entry #0 (%n) is -2")
    fn = op1(
        "%v: tensor<4xf32>, %n: index", "fusion.broadcast_in_dim %v [4, %n] dims [1] : tensor<4xf32> -> tensor<4x?xf32>",
        "tensor<4x?xf32>",
    )
    fails(fn, [torch.zeros(4), 5], "input dimension 0 has extent 4 at run time, but result dimension 1 has extent 5")


def test_expand_mismatch() -> None:
    fn = op1("%y: tensor<?x1xf32>", "fusion.expand %y [7, 6] : tensor<?x1xf32> -> tensor<7x6xf32>", "tensor<7x6xf32>")
    fails(fn, [torch.zeros(3, 1)], "fusion.expand: dimension 0 has extent 3 at run time, but the shape asks for 7")
    fails(fn, [torch.zeros(1, 1)], "only static size-1 dimensions expand")
    fn = op1("%y: tensor<1x?xf32>, %n: index", "fusion.expand %y [%n, 6] : tensor<1x?xf32> -> tensor<?x6xf32>", "tensor<?x6xf32>")
    fails(fn, [torch.zeros(1, 6), -1], "fusion.expand: shape entry #0 (%n) is -1")


def test_reshape_element_count_mismatch() -> None:
    fn = op1("%x: tensor<?x4xf32>", "fusion.reshape %x [5, 4] : tensor<?x4xf32> -> tensor<5x4xf32>", "tensor<5x4xf32>")
    fails(fn, [torch.zeros(3, 4)], "fusion.reshape: cannot reshape 3x4 (12 elements) to 5x4 (20 elements)")


def test_reshape_inferred_extent_does_not_divide() -> None:
    fn = op1("%x: tensor<?x4xf32>", "fusion.reshape %x [-1, 8] : tensor<?x4xf32> -> tensor<?x8xf32>", "tensor<?x8xf32>")
    fails(fn, [torch.zeros(3, 4)], "fusion.reshape: cannot infer the -1 extent", "12 elements", "not divisible by 8")


def test_reshape_inferred_extent_with_zero_other_extents() -> None:
    fn = op1("%x: tensor<?x4xf32>, %n: index", "fusion.reshape %x [%n, -1] : tensor<?x4xf32> -> tensor<?x?xf32>", "tensor<?x?xf32>")
    fails(fn, [torch.zeros(0, 4), 0], "cannot infer the -1 extent", "multiply to 0")


def test_reshape_negative_dynamic_extent() -> None:
    fn = op1("%x: tensor<?x4xf32>, %n: index", "fusion.reshape %x [%n, 4] : tensor<?x4xf32> -> tensor<?x4xf32>", "tensor<?x4xf32>")
    fails(fn, [torch.zeros(2, 4), -2], "fusion.reshape: shape entry #0 (%n) is -2")


@pytest.mark.parametrize(
    "bounds, value, fragment",
    [
        ("[0] to [4] step [%n]", 0, "step entry #0 (%n) is 0 at run time; it must be at least 1"),
        ("[0] to [4] step [%n]", -2, "step entry #0 (%n) is -2 at run time; it must be at least 1"),
    ],
)
def test_slice_bounds(bounds: str, value: int, fragment: str) -> None:
    """Negative starts and stops count from the end (test_semantics.py); a step must be >= 1."""
    fn = op1("%x: tensor<4xf32>, %n: index", f"fusion.slice %x {bounds} : tensor<4xf32> -> tensor<?xf32>", "tensor<?xf32>")
    fails(fn, [torch.zeros(4), value], f"fusion.slice: {fragment}")


def test_cat_extent_mismatch() -> None:
    fn = op1(
        "%a: tensor<2x?xf32>, %b: tensor<?x?xf32>", "fusion.cat %a, %b dim 0 : tensor<2x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>",
        "tensor<?x?xf32>",
    )
    fails(
        fn, [torch.zeros(2, 4), torch.zeros(3, 5)],
        "fusion.cat: dimension 1 extents differ at run time: operand #0 (%a) has 4, operand #1 (%b) has 5; only dimension 0 may differ",
    )


# --------------------------------------------------------------------------- #
# Reductions and matrix products                                              #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_an_empty_dimension(name: str) -> None:
    fn = op1("%x: tensor<?x3xf32>", f"fusion.{name} %x dims [0] : tensor<?x3xf32> -> tensor<3xf32>", "tensor<3xf32>")
    fails(fn, [torch.zeros(0, 3)], f"fusion.{name}: cannot reduce dimension 0 of extent 0", f"{name} has no identity")


def test_matmul_contraction_mismatch() -> None:
    fn = op1("%a: tensor<?x?xf32>, %b: tensor<?x5xf32>", "fusion.matmul %a, %b : tensor<?x?xf32>, tensor<?x5xf32> -> tensor<?x5xf32>", "tensor<?x5xf32>")
    fails(fn, [torch.zeros(2, 3), torch.zeros(4, 5)], "fusion.matmul: contracted extents differ at run time: lhs has 3, rhs has 4")


def test_matmul_batch_mismatch() -> None:
    fn = op1(
        "%a: tensor<?x2x3xf32>, %b: tensor<?x3x4xf32>",
        "fusion.matmul %a, %b : tensor<?x2x3xf32>, tensor<?x3x4xf32> -> tensor<?x2x4xf32>", "tensor<?x2x4xf32>",
    )
    fails(fn, [torch.zeros(1, 2, 3), torch.zeros(5, 3, 4)], "fusion.matmul: batch dimension 0", "lhs has 1, rhs has 5", "size-1")


def test_linear_mismatches() -> None:
    fn = op1(
        "%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %b: tensor<?xf32>",
        "fusion.linear %x, %w, %b : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>", "tensor<?x?xf32>",
    )
    fails(fn, [torch.zeros(2, 3), torch.zeros(4, 5), torch.zeros(4)], "fusion.linear: contracted extents differ at run time: input has 3, weight has 5")
    fails(fn, [torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(6)], "fusion.linear: bias has 6 elements at run time, but the weight has 4 out features")


# --------------------------------------------------------------------------- #
# Scalars and unsupported ops                                                 #
# --------------------------------------------------------------------------- #


def test_unsupported_op_is_named() -> None:
    fn = fn_of("""func.func @f(%s: f32) -> f32 {
      %r = math.exp %s : f32
      func.return %r : f32
    }""")
    fails(fn, [1.0], "not supported by the reference evaluator: math.exp")


def test_unsupported_region_op_is_named() -> None:
    fn = fn_of("""func.func @f(%n: index) -> index {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (index) {
        %b = arith.addi %a, %i : index
        scf.yield %b : index
      }
      func.return %r : index
    }""")
    fails(fn, [3], "not supported by the reference evaluator: scf.for")


def test_arith_on_tensors_is_unsupported() -> None:
    fn = fn_of("""func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = arith.addf %x, %x : tensor<2xf32>
      func.return %r : tensor<2xf32>
    }""")
    fails(fn, [torch.zeros(2)], "arith.addf", "tensor<2xf32>", "use fusion ops")


def test_arith_integer_division_by_zero() -> None:
    fn = fn_of("""func.func @f(%a: index, %b: index) -> index {
      %r = arith.divsi %a, %b : index
      func.return %r : index
    }""")
    fails(fn, [4, 0], "arith.divsi: division by zero", "%b")


def test_fptosi_of_nan() -> None:
    fn = fn_of("""func.func @f(%a: f32) -> i32 {
      %r = arith.fptosi %a : f32 to i32
      func.return %r : i32
    }""")
    fails(fn, [float("nan")], "arith.fptosi: nan does not fit in i32")


def test_tensor_dim_out_of_range() -> None:
    fn = fn_of("""func.func @f(%x: tensor<?x4xf32>, %d: index) -> index {
      %r = tensor.dim %x, %d : tensor<?x4xf32>
      func.return %r : index
    }""")
    fails(fn, [torch.zeros(2, 4), 2], "tensor.dim: index 2 is out of range for a tensor of rank 2")


def test_errors_carry_the_source_location() -> None:
    src = "func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {\n  %c = fusion.add %a, %b : tensor<?xf32>\n  func.return %c : tensor<?xf32>\n}"
    fn = fn_of(src, "model.mlir")
    fails(fn, [torch.zeros(2), torch.zeros(3)], "fusion.add: dimension 0", "(at model.mlir:2:3)")


def test_a_result_that_contradicts_the_ir_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(reference._HANDLERS, fusion.NegOp, lambda run, op: [torch.zeros(2, dtype=torch.float64)])
    fn = op1("%x: tensor<2xf32>", "fusion.neg %x : tensor<2xf32>", "tensor<2xf32>")
    with pytest.raises(ReferenceBug, match="fusion.neg: result #0 is a tensor of dtype torch.float64"):
        evaluate(fn, [torch.zeros(2)])
    assert not issubclass(ReferenceBug, UserError)


# --------------------------------------------------------------------------- #
# random_inputs and find_function                                             #
# --------------------------------------------------------------------------- #

RMS = find_function(load_module(Path(__file__).resolve().parents[1] / "examples" / "rmsnorm.mlir"))


def test_random_inputs_need_a_shape_for_dynamic_extents() -> None:
    with pytest.raises(EvaluationError, match=r"no shape given for argument #0 \(%x: tensor<\?x64xbf16>\): dimension 0 is dynamic"):
        random_inputs(RMS, {}, None, 0)


def test_random_inputs_shape_contradicting_the_type() -> None:
    with pytest.raises(EvaluationError, match=r"shape 8x32 given for argument #0 \(%x.*extent 32 in dimension 1, but the type says 64"):
        random_inputs(RMS, {"x": (8, 32)}, None, 0)
    with pytest.raises(EvaluationError, match=r"shape 8x64 given for argument #1 \(%w: tensor<64xbf16>\) has rank 2, expected 1"):
        random_inputs(RMS, {"x": (8, 64), "w": (8, 64)}, None, 0)


def test_random_inputs_extent_past_64_bits() -> None:
    """torch would refuse it with a C++ stack trace in its message (`allot-run --shapes`)."""
    with pytest.raises(EvaluationError, match=r"extent 9223372036854775808 in dimension 0, which does not fit in a 64-bit index"):
        random_inputs(RMS, {"x": (2**63, 64)}, None, 0)


def test_random_inputs_unknown_names() -> None:
    with pytest.raises(EvaluationError, match=r"@rmsnorm has no tensor argument named y \(tensor arguments: x, w\)"):
        random_inputs(RMS, {"x": (2, 64), "y": (3,)}, None, 0)
    with pytest.raises(EvaluationError, match=r"no scalar argument named eps \(scalar arguments: none\)"):
        random_inputs(RMS, {"x": (2, 64)}, {"eps": 1e-5}, 0)


def test_random_inputs_bad_scalar_value() -> None:
    fn = op1("%x: tensor<4xf32>, %n: index", "fusion.full %n [4] : index -> tensor<4xf32>", "tensor<4xf32>")
    with pytest.raises(EvaluationError, match=r"argument #1 \(%n: index\) is an integer, got 2.5"):
        random_inputs(fn, {}, {"n": 2.5}, 0)


def test_find_function_lists_the_available_names() -> None:
    module = parse_module("func.func private @a()\nfunc.func private @b()")
    assert find_function(module, "@b").sym_name.data == "b"
    with pytest.raises(UserError, match="no function named @c; available: @a, @b"):
        find_function(module, "c")
    with pytest.raises(UserError, match="no func.func"):
        find_function(parse_module("fusion.mesh @tp shape 2 devices [0, 1]"))


# --------------------------------------------------------------------------- fusion.aten (found by fuzzing)

_MM_CALL = '"{\\"args\\": [{\\"t\\": 0}, {\\"t\\": 1}]}"'


def test_an_aten_call_torch_refuses_names_the_call() -> None:
    f = op1("%x: tensor<4x4xf32>", 'fusion.aten "aten.mm.default" (%x) {call = "{\\"args\\": [-1]}"} '
            ": (tensor<4x4xf32>) -> tensor<4x4xf32>", "tensor<4x4xf32>")
    fails(f, [torch.randn(4, 4)], "fusion.aten: the call failed", "aten::mm")


@pytest.mark.parametrize("result, got", [("tensor<5x4xf32>", "shape 4x4"), ("tensor<4x4xf64>", "dtype torch.float32")])
def test_an_aten_result_of_another_type_than_declared(result: str, got: str) -> None:
    f = op1("%x: tensor<4x4xf32>, %w: tensor<4x4xf32>", f'fusion.aten "aten.mm.default" (%x, %w) {{call = {_MM_CALL}}} '
            f": (tensor<4x4xf32>, tensor<4x4xf32>) -> {result}", result)
    fails(f, [torch.randn(4, 4), torch.randn(4, 4)], "result #0 is a tensor of", got, f"declares {result}")


def test_an_aten_result_position_the_call_does_not_return() -> None:
    call = '"{\\"args\\": [{\\"t\\": 0}, {\\"t\\": 1}], \\"results\\": [2]}"'
    f = op1("%x: tensor<4x4xf32>, %w: tensor<4x4xf32>", f'fusion.aten "aten.mm.default" (%x, %w) {{call = {call}}} '
            ": (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>", "tensor<4x4xf32>")
    fails(f, [torch.randn(4, 4), torch.randn(4, 4)], "results [2] are not among what the call returned")


def test_a_scalar_argument_of_a_type_no_scalar_has() -> None:
    f = fn_of("func.func @f(%s: i0) {\n  func.return\n}")
    fails(f, [0], "%s: i0", "no scalar argument may have")


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_random_inputs_refuses_a_seed_a_generator_cannot_take(seed: object) -> None:
    f = fn_of("func.func @f(%x: tensor<4xf32>) {\n  func.return\n}")
    with pytest.raises(UserError, match="seed must be an int from 0 to 2\\*\\*64 - 1"):
        random_inputs(f, {}, seed=seed)  # type: ignore[arg-type]
