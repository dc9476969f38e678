"""Sums whose input is already 0 in masked lanes skip the select over that input
(`row_reduction.RowEmitter.zero_where_masked`); every other reduction input keeps it.
Each case is checked for the select in the generated source and, on shapes whose tiles
have masked lanes along both axes, against the reference evaluator."""

from __future__ import annotations

import re
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402


def fusion_text(body: str, red: str, shape: tuple[int, ...], dims: list[int], ty: str = "f32") -> str:
    """@f(%x, %y) with `body` computing %v from them, then `red` of %v over `dims`."""
    t = f"tensor<{'x'.join(map(str, shape))}x{ty}>"
    kept = [e for d, e in enumerate(shape) if d not in dims]
    r = f"tensor<{'x'.join(map(str, kept))}xf32>"
    body = body.replace("T", t).replace("F", f"tensor<{'x'.join(map(str, shape))}xf32>")
    return (f"func.func @f(%x: {t}, %y: {t}) -> {r} {{\n{body}\n"
            f"  %s = fusion.{red} %v dims {dims} : {t.replace(ty, 'f32') if ty != 'f32' else t} -> {r}\n"
            f"  func.return %s : {r}\n}}\n").replace("dims [", "dims [")


CAST = "  %v = fusion.cast %x : T to F"
BODIES = {  # name: (body, the select is kept)
    "load": ("  %v = fusion.add %x, %y : T, T -> F", False),
    "cast": (CAST, False),
    "neg_abs_mul_sub": ("  %a = fusion.abs %x : T -> T\n  %b = fusion.mul %a, %y : T, T -> T\n"
                        "  %c = fusion.neg %b : T -> T\n  %v = fusion.sub %c, %x : T, T -> F", False),
    "exp": ("  %v = fusion.exp %x : T -> F", True),
    "plus_one": ("  %one = arith.constant 1.0 : f32\n  %v = fusion.add %x, %one : T, f32 -> F", True),
    "div": ("  %v = fusion.div %x, %y : T, T -> F", True),
}


def red_in_lines(text: str) -> list[str]:
    src = allotment.compile(text).program("cuda").source
    return [line.strip() for line in src.splitlines() if re.match(r"\s*red_in\d+ = ", line)]


@pytest.mark.parametrize("shape,dims", [((5, 37), [1]), ((37, 5), [0]), ((3, 5, 7), [0]), ((3, 5, 7), [1])])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_select_only_where_needed(name: str, shape: tuple[int, ...], dims: list[int]) -> None:
    body, kept = BODIES[name]
    text = fusion_text(body, "sum", shape, dims)
    lines = red_in_lines(text)
    assert lines, text
    assert all(("tl.where(mask_m & mask_n" in line) == kept for line in lines), lines
    g = torch.Generator().manual_seed(len(name))
    x = torch.randn(*shape, generator=g)
    y = torch.randn(*shape, generator=g) + 3  # away from 0: the division stays finite
    check(text, x, y)


@pytest.mark.parametrize("red", ["max", "min", "prod"])
def test_other_reductions_keep_the_select(red: str) -> None:
    """Their neutral element is not 0: a masked lane must be replaced, whatever it holds."""
    text = fusion_text(CAST, red, (5, 37), [1])
    assert all("tl.where(mask_m & mask_n" in line for line in red_in_lines(text))
    x = -torch.rand(5, 37, generator=torch.Generator().manual_seed(1)) - 0.5  # all negative: a 0 would win max
    check(text, x, x.clone())


def test_bf16_input_mean_skips_the_select() -> None:
    text = fusion_text(CAST, "mean", (3, 5, 7), [0], ty="bf16")
    assert not any("tl.where(mask_m & mask_n" in line for line in red_in_lines(text))
    x = torch.randn(3, 5, 7, generator=torch.Generator().manual_seed(2)).to(torch.bfloat16)
    check(text, x, x.clone())
