"""A compiled training step reads nothing back from the device in steady state: the
indexing ops of torch.compile graphs check their indices in their kernels
(`index_check = "device"`), not by a min/max read on the host (which on a GPU waits for
every kernel queued before it). Counted on the CPU through the profiler's ATen events of
every host read of tensor data (`.item()`, `int(t)`, `bool(t)`: `_local_scalar_dense`),
the old check's `aminmax`, and `Tensor.tolist` (patched); on the GPU `tests/gpu/check_syncs.py`
runs a step under `torch.cuda.set_sync_debug_mode("error")`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from models import gpt2, llama
from torch import nn

from allotment.dialects import fusion
from allotment.errors import RunError
from allotment.frontend.torch_compile import compiled_graphs, reset_census

READS = ("aten::_local_scalar_dense", "aten::item", "aten::aminmax")
"""ATen events of a host read of tensor data (and of the host index check's min/max)."""


def host_reads(step: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The host reads of tensor data that one call of `step` makes, by event."""
    from torch.profiler import ProfilerActivity, profile

    lists = []
    tolist = torch.Tensor.tolist

    def counted(self: torch.Tensor) -> Any:
        lists.append(tuple(self.shape))
        return tolist(self)

    with monkeypatch.context() as m:
        m.setattr(torch.Tensor, "tolist", counted)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            step()
    found = {e.key: e.count for e in prof.key_averages() if e.key in READS}
    if lists:
        found["Tensor.tolist"] = len(lists)
    return found


class TinyLM(nn.Module):
    """An embedding, a linear head and cross-entropy: a gather (the embedding), a gather and a
    scatter (nll_loss and its backward), an index_put_accumulate (the embedding backward)."""

    def __init__(self, vocab: int = 16, d: int = 8) -> None:
        super().__init__()
        self.emb, self.head = nn.Embedding(vocab, d), nn.Linear(d, vocab)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.head(torch.tanh(self.emb(ids)))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


def _tiny_step() -> tuple[nn.Module, Callable[[torch.Tensor], torch.Tensor]]:
    torch._dynamo.reset()
    reset_census()
    torch.manual_seed(0)
    model = TinyLM()
    compiled = torch.compile(model, backend="allotment")

    def step(ids: torch.Tensor) -> torch.Tensor:
        loss = compiled(ids, ids.roll(1, -1))
        loss.backward()
        return loss

    return model, step


def test_a_training_step_reads_nothing_from_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    model, step = _tiny_step()
    ids = torch.randint(0, 16, (2, 5))
    step(ids)
    step(ids)  # steady state: compiled, every kernel specialized
    assert host_reads(lambda: step(torch.randint(0, 16, (2, 5))), monkeypatch) == {}
    indexing = [op for g in compiled_graphs() for op in g.executable._module.walk()
                if isinstance(op, fusion.IndexingOp)]
    assert len(indexing) >= 3 and all(op.checks_on_device for op in indexing)
    for g in compiled_graphs():
        source = g.executable.source("cpu")
        assert "rt.check_indices" not in source and "aminmax" not in source
    eager = TinyLM()
    eager.load_state_dict(model.state_dict())
    torch.testing.assert_close(step(ids), eager(ids, ids.roll(1, -1)))


def test_an_out_of_range_token_is_a_run_error() -> None:
    _, step = _tiny_step()
    step(torch.randint(0, 16, (2, 5)))
    with pytest.raises(RunError, match=r"^index out of range: fusion\.embedding: operand #0 .* of dimension 0"):
        step(torch.tensor([[1, 2, 16, 3, 4], [0, 0, 0, 0, 0]]))
    with pytest.raises(RunError, match=r"^index out of range: fusion\.embedding"):
        step(torch.tensor([[1, 2, -1, 3, 4], [0, 0, 0, 0, 0]]))


@pytest.mark.slow
@pytest.mark.parametrize("make", [gpt2, llama], ids=["gpt2", "llama"])
def test_hugging_face_training_step_reads_nothing_from_the_device(make, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    pytest.importorskip("transformers")
    torch._dynamo.reset()
    reset_census()
    torch.manual_seed(0)
    compiled = torch.compile(make(), backend="allotment")

    def step() -> None:
        ids = torch.randint(0, 64, (2, 8))
        compiled(input_ids=ids, labels=ids).loss.backward()

    step()
    step()
    assert host_reads(step, monkeypatch) == {}
