"""Models and the float64 comparison the torch.compile backend tests share."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from allotment.frontend.torch_compile import census, reset_census


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """A pre-norm transformer block: attention through scaled_dot_product_attention, a GELU MLP."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class ConvBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn(self.conv(x)))
        return self.fc(y.mean(dim=(2, 3)))


def gpt2() -> nn.Module:
    import transformers

    cfg = transformers.GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=64, n_positions=32, resid_pdrop=0.0,
                                  embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(cfg)


def llama() -> nn.Module:
    import transformers

    cfg = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                   num_key_value_heads=1, vocab_size=64, max_position_embeddings=32, bos_token_id=0,
                                   eos_token_id=0)
    return transformers.LlamaForCausalLM(cfg)


@dataclass
class Result:
    errors: dict[str, tuple[float, float]]
    """Per output, loss and gradient: (Allotment's error, eager's error) against float64."""
    graphs: int
    graph_breaks: int
    census: list[Any]


def _double(x: Any) -> Any:
    return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


def compare(make: Callable[[], nn.Module], run: Callable[[nn.Module, Any], tuple[torch.Tensor, torch.Tensor]],
            inputs: Any, options: dict[str, Any] | None = None) -> Result:
    """Runs `run(model, inputs) -> (output, loss)` and one backward in eager (f32), under
    Allotment (f32) and in float64, and measures both f32 runs' errors."""
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model = make()
    eager, ref = copy.deepcopy(model), copy.deepcopy(model).double()
    torch._dynamo.reset()
    counters.clear()
    reset_census()
    compiled = torch.compile(model, backend="allotment", options=options)
    results = {}
    for name, m, x in (("allotment", compiled, inputs), ("eager", eager, inputs),
                       ("ref", ref, {k: _double(v) for k, v in inputs.items()})):
        out, loss = run(m, x)
        loss.backward()
        results[name] = (out.detach(), loss.detach())
    params = {"allotment": dict(model.named_parameters()), "eager": dict(eager.named_parameters()),
              "ref": dict(ref.named_parameters())}
    errors = {}

    def err(a: torch.Tensor, r: torch.Tensor) -> float:
        return (a.double() - r).abs().max().item() if a.numel() else 0.0

    for k, what in ((0, "output"), (1, "loss")):
        errors[what] = (err(results["allotment"][k], results["ref"][k]), err(results["eager"][k], results["ref"][k]))
    for n, p in params["ref"].items():
        if p.grad is not None:
            errors[f"grad {n}"] = (err(params["allotment"][n].grad, p.grad), err(params["eager"][n].grad, p.grad))
    graphs = counters["stats"]["unique_graphs"]
    breaks = len(counters["graph_break"])  # distinct breaks (dynamo counts a break once per restart)
    return Result(errors, graphs, breaks, census())


def assert_close_as_eager(result: Result, floor: float = 1e-6) -> None:
    """Allotment's error is at most 3x eager's, plus a floor."""
    bad = {k: v for k, v in result.errors.items() if v[0] > 3 * v[1] + floor}
    assert not bad, f"errors (allotment, eager) past 3x eager + {floor}: {bad}"
