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


def nll_backward_text(rows: int = ROWS, vocab: int = VOCAB) -> str:
    t, r = f"tensor<{rows}x{vocab}xf32>", f"tensor<{rows}x1xf32>"
    return f"""
func.func @nll_bwd(%label: tensor<{rows}x1xi64>, %g: {r}, %p: {t}) -> {t} {{
  %z = arith.constant 0 : i64
  %zeros = fusion.full %z [{rows}, {vocab}] : i64 -> {t}
  %hot = fusion.scatter %zeros, %label, %g dim 1 : {t}, tensor<{rows}x1xi64>, {r} -> {t}
  %s = fusion.sum %hot dims [1] keepdim : {t} -> {r}
  %q = fusion.mul %p, %s : {t}, {r} -> {t}
  %out = fusion.sub %hot, %q : {t}
  func.return %out : {t}
}}
"""


def test_the_scatter_as_a_select_matches_the_reference() -> None:
    """fusion-scatter-select: nll_loss's gradient (a scatter into zeros) as a select of
    the label's column gives the scatter's values, with no scatter kernel."""
    _, label = _inputs()
    g = torch.Generator().manual_seed(1)
    grad, p = torch.randn(ROWS, 1, generator=g), torch.randn(ROWS, VOCAB, generator=g).softmax(-1)
    (out,) = check(nll_backward_text(), label, grad, p)
    hot = torch.zeros(ROWS, VOCAB).scatter(1, label, grad)
    assert torch.allclose(out, hot - p * hot.sum(1, keepdim=True), atol=1e-6)
    src = allotment.compile(nll_backward_text()).source("cuda")
    assert "scatter" not in src.split("def run")[0] and "_pointwise_" in src


def test_the_scatters_label_is_still_checked() -> None:
    _, label = _inputs()
    label[2, 0] = -1
    exe = allotment.compile(nll_backward_text())
    with pytest.raises(allotment.Error, match="label"):
        exe(label, torch.zeros(ROWS, 1), torch.zeros(ROWS, VOCAB))
