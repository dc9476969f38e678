"""Indices divided by run-time extents with multiplies (`backend/fast_division.py`).

The helpers are run through Triton's interpreter on CPU tensors (compiled, on the GPU,
with ALLOT_TEST_DEVICE=cuda) against Python's own division, over divisors from 1 to 2^31 - 1 and quotients at their edges; kernels whose
`?` domains decompose a linear index (reductions over several dims, a transpose, a
middle-axis mean) are checked against the reference evaluator at extents of 1, primes
and powers of two.
"""

from __future__ import annotations

import functools
import importlib.util
import random
import re
import tempfile
import warnings
from pathlib import Path
from types import ModuleType

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import TEST_DEVICE, check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import fast_division  # noqa: E402

KERNEL = '''
@triton.jit
def divide(n_ptr, q_ptr, r_ptr, d, BLOCK: tl.constexpr):
    m, s = _div_magic(d)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    q, r = _divmod_index(tl.load(n_ptr + i), d, m, s)
    tl.store(q_ptr + i, q)
    tl.store(r_ptr + i, r)
'''


@functools.cache
def _module() -> ModuleType:
    """The helpers and a kernel calling them, from a file (`@triton.jit` reads its source):
    interpreted functions, or compiled ones with ALLOT_TEST_DEVICE=cuda."""
    from triton.runtime.interpreter import InterpretedFunction

    path = Path(tempfile.mkdtemp()) / "fast_division_check.py"
    path.write_text("import triton\nimport triton.language as tl\n" + fast_division.SOURCE + KERNEL)
    spec = importlib.util.spec_from_file_location("fast_division_check", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if TEST_DEVICE != "cpu":
        return mod
    for name in ("_div_magic", "_divmod_index", "divide"):
        setattr(mod, name, InterpretedFunction(getattr(mod, name).fn))
    return mod


DIVISORS = [1, 2, 3, 5, 7, 97, 1111, 4096, 5003, 12345, 65535, 65536, 2**20 + 1, 2**30 - 1, 2**30, 2**30 + 1,
            2**31 - 2, 2**31 - 1]


@pytest.mark.parametrize("d", DIVISORS + [random.Random(k).randrange(2, 2**31) for k in range(6)])
def test_quotients_and_remainders_are_pythons(d: int) -> None:
    rng = random.Random(d)
    edges = [k * d + o for k in (1, 2, 3, (2**31 - 1) // d - 1, (2**31 - 1) // d) for o in (-1, 0, 1)]
    values = [0, 1, 2, 2**31 - 2, 2**31 - 1] + [v for v in edges if 0 <= v < 2**31]
    values += [rng.randrange(0, 2**31) for _ in range(256 - len(values))]
    n = torch.tensor(values, dtype=torch.int32, device=TEST_DEVICE)
    q, r = torch.empty_like(n), torch.empty_like(n)
    _module().divide[(1,)](n, q, r, d, BLOCK=256)
    assert q.tolist() == [v // d for v in values]
    assert r.tolist() == [v % d for v in values]


def test_an_empty_extent_does_not_divide_by_zero() -> None:
    """An extent of 0 (whose tiles are all masked) gets the magic numbers of 1: no division
    by zero, the quotient n and the remainder n - n * 0."""
    n = torch.arange(8, dtype=torch.int32, device=TEST_DEVICE)
    q, r = torch.empty_like(n), torch.empty_like(n)
    _module().divide[(1,)](n, q, r, 0, BLOCK=8)
    assert q.tolist() == list(range(8)) and r.tolist() == list(range(8))


def _sum_02(ty: str) -> str:
    t = f"tensor<?x?x?x{ty}>"
    return f"""func.func @f(%x: {t}) -> (tensor<?x{ty}>, tensor<?x{ty}>) {{
  %s = fusion.sum %x dims [0, 2] : {t} -> tensor<?x{ty}>
  %v, %m = fusion.var_mean %x dims [0, 2] correction 0 : {t} -> tensor<?x{ty}>, tensor<?x{ty}>
  func.return %s, %v : tensor<?x{ty}>, tensor<?x{ty}>
}}
"""


def test_a_dynamic_decomposition_divides_by_multiplying() -> None:
    """The magic numbers once, at the top of each function; the per-element division only
    in the 64-bit branch."""
    source = allotment.compile(_sum_02("f32")).source("cpu")
    functions = [fn for fn in re.split(r"@triton\.jit\n", source) if fn.startswith("def k0_")]
    dividing = [fn for fn in functions if "_divmod_index(" in fn]
    assert len(dividing) == 3  # persistent, looped, split_partial; split_final has no such index
    for fn in functions:
        body = fn.split("\n")
        if fn not in dividing:
            assert "_div_magic" not in fn
            continue
        assert body[1] == "    dm_D2, ds_D2 = _div_magic(D2)"
        assert "_divmod_index(rn, D2, dm_D2, ds_D2)" in fn
        for i, line in enumerate(body):
            if "% D2" in line or "// (D2)" in line:
                branch = next(b for b in reversed(body[:i]) if b.strip().startswith(("if USE_I64:", "else:")))
                assert branch.strip() == "if USE_I64:"


@pytest.mark.parametrize("shape", [(3, 4, 5003), (1, 2, 1), (7, 3, 97), (2, 5, 4096), (5, 1, 3)])
def test_reductions_over_two_dims(shape: tuple[int, ...]) -> None:
    x = torch.randint(-8, 8, shape, generator=torch.Generator().manual_seed(sum(shape))).float()
    check(_sum_02("f32"), x)


@pytest.mark.parametrize("shape", [(3, 5, 7), (1, 1, 9), (4, 97, 2), (2, 3, 1)])
def test_a_transpose_and_a_middle_mean(shape: tuple[int, ...]) -> None:
    text = """func.func @f(%x: tensor<?x?x?xf32>, %y: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %p = fusion.permute %x [2, 0, 1] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %s = fusion.add %p, %y : tensor<?x?x?xf32>
  %m = fusion.mean %x dims [1] : tensor<?x?x?xf32> -> tensor<?x?xf32>
  func.return %s, %m : tensor<?x?x?xf32>, tensor<?x?xf32>
}
"""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(*shape, generator=g)
    y = torch.randn(shape[2], shape[0], shape[1], generator=g)
    check(text, x, y)


def test_the_division_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOT_FAST_DIVISION", "0")
    source = allotment.compile(_sum_02("f32")).source("cpu")
    assert "_div_magic" not in source and "_divmod_index" not in source
    assert "i2 = (rn % D2)[None, :]" in source
