"""Index division by run-time extents (`kernels.emitter.magic_division`): a kernel that splits
a linear index by a `?` extent gets a FAST_DIV branch, a multiply-high by the launcher's
magic number (`host_runtime.divisor_magic`, `divisor_shift`; the prelude's `_fast_div`),
which the launcher takes where `host_runtime.divides_fast` holds (32-bit indices, no divisor
a multiple of 16), and `//` and `%` otherwise.

Checked here: the magic numbers divide exactly over the whole int32 range (Python, and the
prelude's `_fast_div` in Triton's interpreter at the range's ends), the launcher's choice,
and `?` programs of each branch against the reference evaluator.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_runtime as rt  # noqa: E402
from allotment.backend import launch  # noqa: E402
from allotment.backend.kernels.prelude import module_prelude  # noqa: E402

EDGE_DIVISORS = [1, 2, 3, 5, 7, 15, 17, 96, 999, 1111, 5003, 2**16 - 1, 2**16 + 1, 2**30, 2**30 + 1,
                 2**31 - 2, 2**31 - 1]


def magic_div(n: int, d: int) -> int:
    """n // d as `_fast_div` computes it, in 32-bit unsigned arithmetic."""
    m = rt.divisor_magic(d) & 0xFFFFFFFF
    t = (n * m) >> 32
    s = t + n
    assert s < 2**32, "the sum must stay within 32 bits"
    return s >> rt.divisor_shift(d)


def test_magic_numbers_divide_exactly() -> None:
    rng = random.Random(0)
    divisors = EDGE_DIVISORS + list(range(1, 2049)) + [rng.randrange(1, 2**31) for _ in range(500)]
    for d in divisors:
        assert -(2**31) <= rt.divisor_magic(d) < 2**31  # an int32 argument whatever the divisor
        ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2**31 - 1, 2**31 - 2, (2**31 - 1) // d * d,
              (2**31 - 1) // d * d - 1, *(rng.randrange(0, 2**31) for _ in range(40))}
        for n in ns:
            if 0 <= n < 2**31:
                assert magic_div(n, d) == n // d, (n, d)


def test_divisors_outside_the_range_give_zero() -> None:
    for d in (0, -3, 2**31, 2**40):
        assert rt.divisor_magic(d) == 0 and rt.divisor_shift(d) == 0


def test_the_launcher_divides_fast_unless_a_divisor_is_a_multiple_of_16() -> None:
    assert rt.divides_fast(1111)
    assert rt.divides_fast(5003, 7, 1)
    assert not rt.divides_fast(96)  # Triton keeps runs of 16 through // and %: vectors
    assert not rt.divides_fast(1111, 4096)
    assert not rt.divides_fast(0)
    assert not rt.divides_fast(2**31 + 1)


KERNEL = '''
@triton.jit
def divide(n_ptr, q_ptr, magic, shift, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    n = tl.load(n_ptr + i)
    tl.store(q_ptr + i, _fast_div(n, magic, shift))
'''


def test_the_prelude_helper_divides_at_the_ends_of_the_int32_range(tmp_path: Path) -> None:
    """`_fast_div` itself, in Triton's interpreter, on indices up to 2**31 - 1."""
    path = tmp_path / "fast_div_kernel.py"
    path.write_text(module_prelude("cpu", helpers={"_fast_div"}) + KERNEL)
    spec = importlib.util.spec_from_file_location("fast_div_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fast_div_kernel"] = module
    try:
        spec.loader.exec_module(module)
        launch.bind_kernels(vars(module), "cpu")
        n = torch.tensor([0, 1, 2, 3, 4095, 4096, 123456789, 2**30, 2**31 - 17, 2**31 - 2, 2**31 - 1,
                          1111 * 1111, 5003 * 999 + 5002, 7, 16, 17], dtype=torch.int32)
        for d in EDGE_DIVISORS:
            q = torch.empty_like(n)
            launch.launch(module.divide, (1,), (n, q, rt.divisor_magic(d), rt.divisor_shift(d)), {"BLOCK": 16}, 1)
            assert q.tolist() == [v // d for v in n.tolist()], d
    finally:
        sys.modules.pop("fast_div_kernel", None)


BN_STATS = """func.func @f(%x: tensor<?x?x?xf32>) -> tensor<?xf32> {
  %s = fusion.sum %x dims [0, 2] : tensor<?x?x?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}"""

FLAT_ROWS = """func.func @f(%x: tensor<3x?xf32>, %y: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %z = fusion.mul %x, %y : tensor<3x?xf32>
  func.return %z : tensor<3x?xf32>
}"""


def fast_div_flags(text: str, *inputs: torch.Tensor) -> list[object]:
    """The FAST_DIV constexpr of each launch of one run (None where a kernel takes none)."""
    seen: list[object] = []
    with launch.intercepted(lambda k, grid, a, cx, w: seen.append(cx.get("FAST_DIV"))):
        allotment.compile(text)(*inputs)
    return seen


@pytest.mark.parametrize(("shape", "fast"), [((3, 4, 5), True), ((2, 3, 1), True), ((3, 2, 2), True),
                                             ((2, 3, 32), False), ((4, 3, 17), True)])
def test_a_column_reduction_over_kept_channels_takes_the_branch_its_extent_allows(
        shape: tuple[int, int, int], fast: bool) -> None:
    """Sums over dims 0 and 2: each column index is split by the `?` extent of dim 2."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    flags = fast_div_flags(BN_STATS, x)
    assert flags and all(f is not None for f in flags)
    assert set(flags) == {fast}
    check(BN_STATS, x)
    (y,) = allotment.compile(BN_STATS)(x)
    torch.testing.assert_close(y, x.sum((0, 2)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("cols", "fast"), [(5, True), (3, True), (96, False)])
def test_a_flat_kernel_over_rows_of_run_time_length(cols: int, fast: bool) -> None:
    """Rows of `?` length that the launcher runs flat (`flat_at_run_time`): each lane's row
    and column come from its linear index divided by N."""
    x = torch.randn(3, cols, generator=torch.Generator().manual_seed(2))
    y = torch.randn(3, cols, generator=torch.Generator().manual_seed(3))
    assert fast_div_flags(FLAT_ROWS, x, y) == [fast]
    check(FLAT_ROWS, x, y)
    (z,) = allotment.compile(FLAT_ROWS)(x, y)
    torch.testing.assert_close(z, x * y)


def test_static_extents_get_no_branch() -> None:
    text = BN_STATS.replace("?x?x?", "3x4x5").replace("tensor<?xf32>", "tensor<4xf32>")
    source = allotment.compile(text).source("cpu")
    assert "FAST_DIV" not in source and "_fast_div" not in source
