"""The planned memory of a language-model head's training graphs: what a fused plan needs.

A linear LM head and cross-entropy over `logits.float()` (what Hugging Face's loss does),
under bf16 autocast: Inductor's kernels read the bf16 logits inside the log-softmax
reductions and write one bf16 gradient of them. Allotment's plans must hold no f32 buffer
of the logits' size (`fusion-expose`: the cast, the log-softmax row and the one-hot of
nll_loss_backward are not buffers), and their peaks must be what those buffers need.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from models import assert_close_as_eager, compare
from torch import nn

from allotment.frontend.torch_compile import compiled_graphs, reset_census

TOKENS, VOCAB, HIDDEN = 32, 256, 16
BLOCK = 512
"""The plans are rounded to torch's CUDA allocator's 512-byte blocks (`memory_plan`)."""


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.lin(x)
        return logits, F.cross_entropy(logits.float().view(-1, VOCAB), y.view(-1))


def _inputs() -> dict[str, torch.Tensor]:
    torch.manual_seed(1)
    return {"x": torch.randn(4, TOKENS // 4, HIDDEN), "y": torch.randint(0, VOCAB, (4, TOKENS // 4))}


def _run(m: nn.Module, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    return m(inputs["x"], inputs["y"])


def test_lm_head_plans_hold_no_f32_logits() -> None:
    torch.manual_seed(0)
    model = Head()
    eager = copy.deepcopy(model)
    torch._dynamo.reset()
    reset_census()
    compiled = torch.compile(model, backend="allotment")
    inputs = _inputs()
    outs = {}
    for name, m in (("allotment", compiled), ("eager", eager)):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, loss = _run(m, inputs)
        loss.backward()
        outs[name] = (logits.detach(), loss.detach(), m.lin.weight.grad)
    for a, e in zip(outs["allotment"], outs["eager"]):
        torch.testing.assert_close(a.float(), e.float(), atol=2e-2, rtol=2e-2)

    plans = {g.program.census.graph: g.memory_plan(g.example) for g in compiled_graphs()}
    assert set(plans) == {"forward", "backward"}
    f32_logits = TOKENS * VOCAB * 4
    bf16_logits = TOKENS * VOCAB * 2
    for kind, plan in plans.items():
        big = [(b.name, b.nbytes) for b in plan.buffers if b.holds_memory and b.nbytes >= f32_logits]
        assert not big, f"the {kind} plan holds f32 buffers of the logits' size: {big}"
    # forward: the bf16 logits (returned, and saved), the bf16 weight and input, and rows
    fused_forward = bf16_logits + VOCAB * HIDDEN * 2 + TOKENS * HIDDEN * 2 + 8 * BLOCK
    assert plans["forward"].planned_peak <= fused_forward, plans["forward"].summary()
    # backward: the bf16 gradient of the logits, then the weight's gradient (bf16, then f32)
    fused_backward = bf16_logits + VOCAB * HIDDEN * 2 + TOKENS * HIDDEN * 4 + 8 * BLOCK
    assert plans["backward"].planned_peak <= fused_backward, plans["backward"].summary()


def test_lm_head_numerics_f32() -> None:
    """The rewrites keep every value: loss and gradients in f32 against float64."""
    r = compare(Head, _run, _inputs())
    assert_close_as_eager(r)
    assert r.graphs == 1 and r.graph_breaks == 0


def test_plan_counts_arguments_until_freed() -> None:
    """`memory_plan(...).arguments`: each argument's bytes and the step that frees it (a
    donated saved activation, after its last use); `peak_with_arguments` adds them to the
    planned buffers, holding to the end those the caller keeps (parameters)."""
    torch._dynamo.reset()
    reset_census()
    compiled = torch.compile(Head(), backend="allotment")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        _, loss = _run(compiled, _inputs())
    loss.backward()
    graphs = {g.program.census.graph: g for g in compiled_graphs()}
    plan = graphs["backward"].memory_plan(graphs["backward"].example)
    shapes = [tuple(x.shape) for x in graphs["backward"].example if isinstance(x, torch.Tensor)]
    assert [a.nbytes for a in plan.arguments] == [
        max(BLOCK, -(-x.numel() * x.element_size() // BLOCK) * BLOCK)
        for x in graphs["backward"].example if isinstance(x, torch.Tensor)], shapes
    assert all(a.memory == "argument (donated)" and a.freed is not None for a in plan.arguments)
    everything = plan.planned_peak + sum(a.nbytes for a in plan.arguments)
    assert plan.planned_peak < plan.peak_with_arguments() <= everything
    # the saved bf16 logits are freed right after the kernel that computes their gradient
    # (their last reader), before the kernels of the weight's gradient run
    logits = next(a for a in plan.arguments if a.nbytes == TOKENS * VOCAB * 2)
    last_reader = plan.kernel_position(logits.last_use)
    assert plan.kernel_span(logits) == (0, last_reader + 1)
    assert last_reader + 1 < len(plan.kernels)
