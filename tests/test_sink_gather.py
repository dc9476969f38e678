"""fusion-sink-gather on the CPU: the nll of a cross-entropy computed from the gathered
logit and the row's statistics matches the reference evaluator of the original fusion
(which materializes the log-softmax), allocates no [rows, vocabulary] buffer, and an
out-of-range label is still the error the gather raised."""

from __future__ import annotations

import pytest
import torch
from backend_check import check

import allotment

ROWS, VOCAB = 6, 40


def nll_text(rows: int = ROWS, vocab: int = VOCAB, ty: str = "bf16") -> str:
    return f"""
func.func @nll(%logits: tensor<1x{rows}x{vocab}x{ty}>, %label: tensor<{rows}x1xi64>) -> (tensor<{rows}x1xf32>, tensor<{rows}x1xf32>, tensor<{rows}x1xf32>) {{
  %x = fusion.cast %logits : tensor<1x{rows}x{vocab}x{ty}> to tensor<1x{rows}x{vocab}xf32>
  %x2 = fusion.reshape %x [{rows}, {vocab}] : tensor<1x{rows}x{vocab}xf32> -> tensor<{rows}x{vocab}xf32>
  %m = fusion.max %x2 dims [1] keepdim : tensor<{rows}x{vocab}xf32> -> tensor<{rows}x1xf32>
  %s = fusion.sub %x2, %m : tensor<{rows}x{vocab}xf32>, tensor<{rows}x1xf32> -> tensor<{rows}x{vocab}xf32>
  %e = fusion.exp %s : tensor<{rows}x{vocab}xf32>
  %l = fusion.sum %e dims [1] keepdim : tensor<{rows}x{vocab}xf32> -> tensor<{rows}x1xf32>
  %lg = fusion.log %l : tensor<{rows}x1xf32>
  %ls = fusion.sub %s, %lg : tensor<{rows}x{vocab}xf32>, tensor<{rows}x1xf32> -> tensor<{rows}x{vocab}xf32>
  %g = fusion.gather %ls, %label dim 1 : tensor<{rows}x{vocab}xf32>, tensor<{rows}x1xi64> -> tensor<{rows}x1xf32>
  func.return %g, %m, %lg : tensor<{rows}x1xf32>, tensor<{rows}x1xf32>, tensor<{rows}x1xf32>
}}
"""


def _inputs(label_max: int = VOCAB) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    logits = (torch.randn(1, ROWS, VOCAB, generator=g) * 3).to(torch.bfloat16)
    label = torch.randint(0, label_max, (ROWS, 1), generator=g)
    label[0, 0], label[1, 0] = 0, VOCAB - 1  # both ends of the row
    return logits, label


def test_the_picked_log_softmax_matches_the_reference() -> None:
    logits, label = _inputs()
    g, _, _ = check(nll_text(), logits, label)
    want = torch.log_softmax(logits.float(), dim=-1)[0].gather(1, label)
    assert torch.allclose(g, want, atol=1e-5, rtol=1e-5)


def test_no_row_of_the_log_softmax_is_allocated() -> None:
    src = allotment.compile(nll_text()).source("cuda")
    assert f"torch.empty(({ROWS}, {VOCAB}), dtype=torch.float32" not in src
    assert src.count("check_indices") == 1  # the label is still checked against the vocabulary


def test_an_out_of_range_label_is_still_an_error() -> None:
    logits, label = _inputs()
    label[3, 0] = VOCAB
    exe = allotment.compile(nll_text())
    with pytest.raises(allotment.Error, match="gather"):
        exe(logits, label)
