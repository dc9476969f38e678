"""The training forward saves for the backward what Inductor's saves (`backend.partition`:
Inductor's joint-graph passes, then the min-cut partitioner), counted with autograd's
saved-tensor hooks on a tiny Llama in bf16 autocast on the CPU."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import torch
from models import llama

from allotment.frontend.torch_compile import backend


def _saved(compiler: Any) -> tuple[int, int]:
    """Bytes of the storages of the tensors (not parameters) the compiled forward saves for
    the backward, and how many tensors (views apart) it saves."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = llama()
    cm = torch.compile(m, backend=compiler)
    ids = torch.randint(0, 64, (2, 8))
    saved: dict[int, int] = {}
    tensors: set[tuple] = set()

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        tensors.add((t.untyped_storage().data_ptr(), t.data_ptr(), tuple(t.shape), t.stride(), t.dtype))
        return t

    for _ in range(2):  # the second step runs the compiled graphs only
        saved.clear()
        tensors.clear()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
            out = cm(input_ids=ids, labels=ids)
        out.loss.backward()
    params = {p.untyped_storage().data_ptr() for p in m.parameters()}
    return sum(n for ptr, n in saved.items() if ptr not in params), sum(1 for t in tensors if t[0] not in params)


def _min_cut_only(gm: torch.fx.GraphModule, joint_inputs: Any, **kwargs: Any) -> Any:
    from functorch.compile import min_cut_rematerialization_partition

    return min_cut_rematerialization_partition(gm, joint_inputs, **kwargs)


@pytest.mark.skipif(not any(shutil.which(c) for c in ("g++", "c++", "clang++")),
                    reason="Inductor on the CPU needs a C++ compiler (g++, c++ or clang++), none found")
def test_the_forward_saves_what_inductors_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    inductor_bytes, _ = _saved("inductor")
    ours_bytes, ours = _saved("allotment")
    assert ours_bytes == inductor_bytes
    monkeypatch.setattr(backend, "partition", _min_cut_only)
    plain_bytes, plain = _saved("allotment")
    # without Inductor's joint-graph passes it saves more tensors: a merged-heads view of
    # each layer's attention output (of the same storage: the call's result is kept in
    # the order it comes back, so the view needs no copy and costs no bytes) and the
    # loss's masks
    assert plain > ours and plain_bytes >= ours_bytes
