"""Index-typed integer arithmetic (`analysis/int_ranges.py`, the `kernel-index-ranges` pass,
`backend/kernels/narrow_emission.py`): which 64-bit ops the pass marks, and that every
fusion computes what torch computes whether its integer ops are marked or not, including
where a marked value reaches an op that needs its 64 bits (a product past int32, a shift,
a 64-bit sum, a store of i64) or meets a 64-bit input."""

from __future__ import annotations

from unittest import mock

import pytest
import torch
from backend_check import TEST_DEVICE

import allotment
from allotment.analysis.int_ranges import INDEX_LIMIT, INDEX_RANGE, narrow_ops, value_ranges
from allotment.backend.kernels import emitter
from allotment.ir import parse_module
from allotment.passes.pipeline import run_pipeline

HEAD = """  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %ri = fusion.iota [{n}] start %c0 step %c1 : i64, i64 -> tensor<{t}xi64>
  %ci = fusion.iota [{m}] start %c0 step %c1 : i64, i64 -> tensor<{u}xi64>
  %r = fusion.broadcast_in_dim %ri [{n}, {m}] dims [0] : tensor<{t}xi64> -> tensor<{t}x{u}xi64>
  %c = fusion.broadcast_in_dim %ci [{n}, {m}] dims [1] : tensor<{u}xi64> -> tensor<{t}x{u}xi64>
"""


def fusion(args: str, body: str, results: str, dynamic: bool) -> str:
    """`func.func @f(%n: index, %m: index, ARGS)` (dynamic) or over static 5x12, with the two
    broadcast iotas `%r` (rows) and `%c` (columns) of HEAD, then `body`, returning `results`."""
    n, m = ("%n", "%m") if dynamic else ("5", "12")
    t, u = ("?", "?") if dynamic else ("5", "12")
    shape = f"{t}x{u}"
    head = HEAD.format(n=n, m=m, t=t, u=u)
    params = ", ".join(p for p in (("%n: index, %m: index" if dynamic else ""), args.format(s=shape)) if p)
    ret_types = ", ".join(f"tensor<{shape}x{ty}>" for ty in results.split("|")[1].split(","))
    rets = results.split("|")[0]
    return (f"func.func @f({params}) -> ({ret_types}) {{\n{head}{body.format(s=shape)}"
            f"  func.return {rets} : {ret_types}\n}}")


CASES: dict[str, tuple[str, str, str]] = {
    # ALiBi: |c - r| to float, a causal mask from c > r
    "alibi": ("%x: tensor<{s}xf32>", """  %d = fusion.sub %c, %r : tensor<{s}xi64>
  %a = fusion.abs %d : tensor<{s}xi64>
  %f = fusion.cast %a : tensor<{s}xi64> to tensor<{s}xf32>
  %g = fusion.gt %c, %r : tensor<{s}xi64>, tensor<{s}xi64> -> tensor<{s}xi1>
  %y = fusion.sub %x, %f : tensor<{s}xf32>
  %ninf = arith.constant -1.0e30 : f32
  %z = fusion.where %g, %ninf, %y : tensor<{s}xi1>, f32, tensor<{s}xf32> -> tensor<{s}xf32>
""", "%z|f32"),
    # a marked difference read by a product past int32 and by a shift: both need 64 bits
    "wide_readers": ("", """  %d = fusion.sub %c, %r : tensor<{s}xi64>
  %big = arith.constant 4294967296 : i64
  %p = fusion.mul %d, %big : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
  %k = arith.constant 40 : i64
  %q = fusion.bitwise_left_shift %d, %k : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
""", "%d, %p, %q|i64,i64,i64"),
    # a 64-bit input: the comparison and the sum with it stay in 64 bits; the where of a
    # marked value and the input too
    "wide_input": ("%l: tensor<{s}xi64>", """  %e = fusion.eq %c, %l : tensor<{s}xi64>, tensor<{s}xi64> -> tensor<{s}xi1>
  %h = fusion.add %c, %l : tensor<{s}xi64>
  %w = fusion.where %e, %r, %l : tensor<{s}xi1>, tensor<{s}xi64>, tensor<{s}xi64> -> tensor<{s}xi64>
""", "%e, %h, %w|i1,i64,i64"),
    # an i32 input widened, min/max/neg, a constant fill, a cast down to i32 and to bool
    "mixed": ("%q: tensor<{s}xi32>", """  %w = fusion.cast %q : tensor<{s}xi32> to tensor<{s}xi64>
  %s1 = fusion.sub %w, %c : tensor<{s}xi64>
  %mx = fusion.maximum %s1, %r : tensor<{s}xi64>
  %mn = fusion.minimum %mx, %c : tensor<{s}xi64>
  %ng = fusion.neg %mn : tensor<{s}xi64>
  %seven = arith.constant 7 : i64
  %fill = fusion.full %seven [{dims}] : i64 -> tensor<{s}xi64>
  %t = fusion.mul %ng, %fill : tensor<{s}xi64>
  %d32 = fusion.cast %t : tensor<{s}xi64> to tensor<{s}xi32>
  %b = fusion.cast %t : tensor<{s}xi64> to tensor<{s}xi1>
""", "%s1, %t, %d32, %b|i64,i64,i32,i1"),
    # divisions by positive constants: a head index, a position, signed differences
    "divisions": ("", """  %d = fusion.sub %c, %r : tensor<{s}xi64>
  %three = arith.constant 3 : i64
  %five = arith.constant 5 : i64
  %q = fusion.floor_divide %d, %three : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
  %rm = fusion.remainder %d, %five : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
  %t = fusion.div %d, %three : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
  %f = fusion.fmod %d, %five : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
  %z = fusion.mul %q, %c : tensor<{s}xi64>
""", "%q, %rm, %t, %f, %z|i64,i64,i64,i64,i64"),
}


def torch_case(name: str, n: int, m: int, *xs: torch.Tensor) -> list[torch.Tensor]:
    r = torch.arange(n, device=TEST_DEVICE)[:, None].expand(n, m)
    c = torch.arange(m, device=TEST_DEVICE)[None, :].expand(n, m)
    if name == "alibi":
        (x,) = xs
        return [torch.where(c > r, torch.tensor(-1.0e30, device=TEST_DEVICE), x - (c - r).abs().float())]
    if name == "wide_readers":
        d = c - r
        return [d, d * 4294967296, d << 40]
    if name == "divisions":
        d = c - r
        q = torch.div(d, 3, rounding_mode="floor")
        return [q, torch.remainder(d, 5), torch.div(d, 3, rounding_mode="trunc"), torch.fmod(d, 5), q * c]
    if name == "wide_input":
        (lab,) = xs
        return [c == lab, c + lab, torch.where(c == lab, r, lab)]
    (q,) = xs
    s1 = q.long() - c
    t = -torch.minimum(torch.maximum(s1, r), c) * 7
    return [s1, t, t.int(), t != 0]


def inputs(name: str, n: int, m: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(n * 100 + m)
    if name == "alibi":
        return [torch.randn(n, m, generator=g).to(TEST_DEVICE)]
    if name == "wide_input":  # some equal to the column, some far past int32
        lab = torch.randint(0, m, (n, m), generator=g)
        lab[0, :3] = torch.tensor([2**40, -(2**35), 2**31])
        return [lab.to(TEST_DEVICE)]
    if name == "mixed":
        q = torch.randint(-(2**31), 2**31 - 1, (n, m), generator=g, dtype=torch.int32)
        q[0, :2] = torch.tensor([-(2**31), 2**31 - 1], dtype=torch.int32)
        return [q.to(TEST_DEVICE)]
    return []


def text(name: str, dynamic: bool) -> str:
    args, body, results = CASES[name]
    body = body.replace("{dims}", "%n, %m" if dynamic else "5, 12")
    return fusion(args, body, results, dynamic)


def marked(source: str) -> dict[str, tuple[int, int]]:
    module = run_pipeline(parse_module(source))
    return {op.results[0].name_hint or op.name: tuple(op.attributes[INDEX_RANGE].get_values())
            for op in module.walk() if INDEX_RANGE in op.attributes}


def test_the_pass_marks_what_fits_and_only_that() -> None:
    assert marked(text("alibi", False)) == {"ri": (0, 4), "ci": (0, 11), "d": (-4, 11), "a": (0, 11),
                                             "f": (0, 11), "g": (0, 11)}
    dyn = marked(text("alibi", True))
    assert dyn["ri"] == (0, INDEX_LIMIT) and dyn["d"] == (-INDEX_LIMIT, INDEX_LIMIT)
    readers = marked(text("wide_readers", False))
    assert set(readers) == {"ri", "ci", "d"}  # the product past int32 and the shift are not marked
    wide = marked(text("wide_input", False))
    assert set(wide) == {"ri", "ci"}  # nothing that reads the 64-bit input
    mixed = marked(text("mixed", False))
    # s1 reaches -2**31 - 11: not marked; its maximum with the row index is >= 0 and fits again
    assert set(mixed) == {"ri", "ci", "w", "fill", "mx", "mn", "ng", "t", "d32", "b"}
    assert mixed["t"] == (-77, 0)


def test_divisions_by_positive_constants_are_bounded() -> None:
    static = marked(text("divisions", False))
    assert static["q"] == (-2, 3) and static["rm"] == (0, 4) and static["t"] == (-1, 3) and static["f"] == (-4, 4)
    assert static["z"] == (-22, 33)
    dyn = marked(text("divisions", True))  # |d| < 2**31: a quotient by 3 fits, its product with c does not
    assert dyn["q"] == (-(INDEX_LIMIT // 3) - 1, INDEX_LIMIT // 3) and dyn["rm"] == (0, 4) and "z" not in dyn
    by_zero = fusion("", """  %zero = arith.constant 0 : i64
  %q = fusion.floor_divide %c, %zero : tensor<{s}xi64>, i64 -> tensor<{s}xi64>
""", "%q|i64", False)
    assert "q" not in marked(by_zero)  # a zero divisor is left to the 64-bit form


def test_a_dynamic_product_of_two_indices_is_not_marked() -> None:
    src = fusion("", "  %p = fusion.mul %c, %r : tensor<{s}xi64>\n", "%p|i64", True)
    assert "p" not in marked(src)
    static = fusion("", "  %p = fusion.mul %c, %r : tensor<{s}xi64>\n", "%p|i64", False)
    assert marked(static)["p"] == (0, 44)


def test_ranges_of_the_analysis_on_a_function_body() -> None:
    module = parse_module(text("mixed", False))
    f = next(op for op in module.walk() if op.name == "func.func")
    ranges = {v.name_hint: r for v, r in value_ranges(f.body.block).items()}
    assert ranges["w"] == (-(2**31), 2**31 - 1)
    assert ranges["s1"] == (-(2**31) - 11, 2**31 - 1)
    assert ranges["d32"] == (-77, 0)  # a cast down to i32 of what fits in it
    assert ranges["mx"] == (0, 2**31 - 1)
    assert "s1" not in {op.results[0].name_hint for op in narrow_ops(f.body.block)}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("narrow", [True, False], ids=["index-typed", "64-bit"])
def test_results_are_torchs_whether_or_not_ops_are_index_typed(name: str, dynamic: bool, narrow: bool) -> None:
    src = text(name, dynamic)
    xs = inputs(name, 5, 12)
    with mock.patch.object(emitter, "is_narrow", emitter.is_narrow if narrow else (lambda op: False)):
        exe = allotment.compile(src.replace("@f(", "@f_wide(", 1) if not narrow else src)
        source = exe.source("cuda")
        got = exe(*([5, 12] if dynamic else []), *xs)
    assert ("index-typed" in source) == narrow
    want = torch_case(name, 5, 12, *xs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_the_alibi_kernel_computes_its_iotas_in_the_index_type() -> None:
    source = allotment.compile(text("alibi", False)).source("cuda")
    assert "# fusion.sub, index-typed" in source and "# fusion.gt, index-typed" in source
    assert "tl.abs(n" in source  # abs of the narrow difference, not of its int64 conversion
