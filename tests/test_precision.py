"""Precision tests that a low-precision accumulator cannot pass, on any backend: a bf16 (or
f16) reduction must accumulate in f32. Each row holds +-1024 in equal numbers and many small
values (multiples of 1/8): the large ones cancel exactly in f32, and the sum is the small
values' sum; any bf16 partial that holds a 1024 has an ulp of 8 and drops every small value
it meets, whatever the order of the additions (sequential, a tree over halves or over
neighbours, blocks of a looped kernel: `test_the_inputs_defeat_a_bf16_accumulator`). Rows
are long (4,096 and 10,000 elements: one tile, and a looped or split kernel), and the
reduction runs along rows, along columns and over the whole tensor. (Before, a bf16 sum
accumulated in bf16 was caught by one test of 124, and only because Triton's CPU interpreter
returned garbage: with correct bf16 arithmetic that test's inputs sum exactly.)"""

from __future__ import annotations

import pytest
import torch

import allotment

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"))]


def cancelling(rows: int, n: int, dtype: torch.dtype = torch.bfloat16, seed: int = 0) -> torch.Tensor:
    """[rows, n]: per row n/4 of +1024, n/4 of -1024 and n/2 values in {1/8, ..., 1}, shuffled."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(rows):
        big = torch.full((n // 4,), 1024.0)
        small = torch.randint(1, 9, (n - 2 * (n // 4),), generator=g).double() / 8
        v = torch.cat([big.double(), -big.double(), small])
        out.append(v[torch.randperm(n, generator=g)])
    return torch.stack(out).to(dtype)


def _bf16_sequential(x: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros(x.shape[0], dtype=x.dtype)
    for j in range(x.shape[1]):
        acc = acc + x[:, j]
    return acc


def _bf16_tree(x: torch.Tensor, halves: bool) -> torch.Tensor:
    while x.shape[1] > 1:
        if x.shape[1] % 2:
            x = torch.cat([x, torch.zeros_like(x[:, :1])], 1)
        x = x[:, : x.shape[1] // 2] + x[:, x.shape[1] // 2 :] if halves else x[:, 0::2] + x[:, 1::2]
    return x[:, 0]


def _bf16_blocks(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    acc = torch.zeros(x.shape[0], dtype=x.dtype)
    for s in range(0, x.shape[1], block):
        acc = acc + _bf16_tree(x[:, s : s + block], True)
    return acc


@pytest.mark.parametrize("n", [4096, 10000])
def test_the_inputs_defeat_a_bf16_accumulator(n: int) -> None:
    """The test data is what the module says: every bf16 summation order is off by more than
    half the true sum, which f32 accumulation gets to bf16 rounding."""
    x = cancelling(3, n)
    true = x.double().sum(1)
    assert (true > 0.2 * n).all()
    for wrong in (_bf16_sequential(x), _bf16_tree(x, True), _bf16_tree(x, False), _bf16_blocks(x)):
        assert ((wrong.double() - true).abs() > 0.5 * true).all(), (wrong, true)
    torch.testing.assert_close(x.float().sum(1).double(), true, rtol=0, atol=0)  # f32: exact


def _close(got: torch.Tensor, true: torch.Tensor) -> None:
    torch.testing.assert_close(got.double().cpu(), true, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("n", "ty", "dtype"), [(4096, "bf16", torch.bfloat16), (10000, "bf16", torch.bfloat16),
                                                (4096, "f16", torch.float16)])
def test_row_sum_and_mean_accumulate_in_f32(device: str, n: int, ty: str, dtype: torch.dtype) -> None:
    text = f"""func.func @f(%x: tensor<?x?x{ty}>) -> (tensor<?x{ty}>, tensor<?xf32>) {{
  %s = fusion.sum %x dims [1] : tensor<?x?x{ty}> -> tensor<?x{ty}>
  %xf = fusion.cast %x : tensor<?x?x{ty}> to tensor<?x?xf32>
  %m = fusion.mean %xf dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %s, %m : tensor<?x{ty}>, tensor<?xf32>
}}
"""
    x = cancelling(3, n, dtype)
    true = x.double().sum(1)
    s, m = allotment.compile(text)(x.to(device))
    _close(s, true)
    _close(m * n, true)


@pytest.mark.parametrize("device", DEVICES)
def test_column_sum_accumulates_in_f32(device: str) -> None:
    text = """func.func @f(%x: tensor<?x?xbf16>) -> tensor<?xbf16> {
  %s = fusion.sum %x dims [0] : tensor<?x?xbf16> -> tensor<?xbf16>
  func.return %s : tensor<?xbf16>
}
"""
    x = cancelling(3, 4096).t().contiguous()  # [4096, 3]: each column cancels
    (s,) = allotment.compile(text)(x.to(device))
    _close(s, x.double().sum(0))


@pytest.mark.parametrize("device", DEVICES)
def test_full_sum_accumulates_in_f32(device: str) -> None:
    text = """func.func @f(%x: tensor<?x?xbf16>) -> tensor<bf16> {
  %s = fusion.sum %x dims [0, 1] : tensor<?x?xbf16> -> tensor<bf16>
  func.return %s : tensor<bf16>
}
"""
    x = cancelling(1, 16384).view(128, 128)
    (s,) = allotment.compile(text)(x.to(device))
    _close(s, x.double().sum())


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_denominator_accumulates_in_f32(device: str) -> None:
    """A normalization kernel's row statistics (the mean subtracted before exp): a bf16 row
    mean of the cancelling rows would be off by more than the values' spread."""
    text = """func.func @f(%x: tensor<?x?xbf16>) -> tensor<?x?xf32> {
  %xf = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %s = fusion.sum %x dims [1] keepdim : tensor<?x?xbf16> -> tensor<?x1xbf16>
  %sf = fusion.cast %s : tensor<?x1xbf16> to tensor<?x1xf32>
  %y = fusion.sub %xf, %sf : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""
    x = cancelling(2, 4096)
    (y,) = allotment.compile(text)(x.to(device))
    want = x.double() - x.double().sum(1, keepdim=True).bfloat16().double()
    torch.testing.assert_close(y.double().cpu(), want, rtol=1e-2, atol=16.0)  # one bf16 ulp of the sum
