"""Models through torch.compile(backend="allotment") on the CPU (Triton's interpreter):
outputs, loss and every parameter's gradient after one backward against a float64 copy,
and the census (graphs, graph breaks, nodes left to ATen)."""

from __future__ import annotations

import pytest
import torch
from models import MLP, Block, ConvBlock, assert_close_as_eager, compare, gpt2, llama


def _plain(m: torch.nn.Module, x: dict) -> tuple[torch.Tensor, torch.Tensor]:
    out = m(x["x"])
    return out, (out ** 2).mean()


def _lm(m: torch.nn.Module, x: dict) -> tuple[torch.Tensor, torch.Tensor]:
    out = m(input_ids=x["ids"], labels=x["ids"])
    return out.logits, out.loss


def _aten_ops(result) -> dict[str, int]:  # noqa: ANN001
    total: dict[str, int] = {}
    for c in result.census:
        for op, n in c.aten.items():
            total[op] = total.get(op, 0) + n
    return total


def test_mlp() -> None:
    torch.manual_seed(1)
    r = compare(MLP, _plain, {"x": torch.randn(3, 8)})
    assert_close_as_eager(r)
    assert (r.graphs, r.graph_breaks) == (1, 0)
    assert [c.graph for c in r.census] == ["forward", "backward"]
    assert _aten_ops(r) == {}
    assert all(c.eager is None for c in r.census)


def test_transformer_block() -> None:
    torch.manual_seed(2)
    r = compare(Block, _plain, {"x": torch.randn(2, 5, 16)})
    assert_close_as_eager(r)
    assert (r.graphs, r.graph_breaks) == (1, 0)
    assert _aten_ops(r) == {"aten._scaled_dot_product_flash_attention_for_cpu.default": 1,
                            "aten._scaled_dot_product_flash_attention_for_cpu_backward.default": 1}


def test_conv_block() -> None:
    torch.manual_seed(3)
    r = compare(ConvBlock, _plain, {"x": torch.randn(2, 3, 5, 5)})
    assert_close_as_eager(r)
    assert (r.graphs, r.graph_breaks) == (1, 0)
    assert _aten_ops(r) == {"aten.convolution.default": 1, "aten.convolution_backward.default": 1}


@pytest.mark.slow
@pytest.mark.parametrize("make", [gpt2, llama], ids=["gpt2", "llama"])
def test_hugging_face(make) -> None:  # noqa: ANN001
    pytest.importorskip("transformers")
    from allotment.frontend.torch_compile.backend import COMPILED

    torch.manual_seed(4)
    r = compare(make, _lm, {"ids": torch.randint(0, 64, (2, 8))})  # resets COMPILED first
    assert_close_as_eager(r)
    # every norm's backward (two a layer and the final one) is one inner-outer kernel: dx
    # and the weight's gradient from one read of dy and x
    kinds = [line.split()[3].rstrip(":") for c in COMPILED for line in c.executable.source("cpu").splitlines()
             if line.startswith("# alloc.kernel")]
    assert kinds.count("inner_outer") == 5, kinds
    # GPT-2's loss breaks the graph once (transformers logs a warning in its loss function)
    assert (r.graphs, r.graph_breaks) == ((2, 1) if make is gpt2 else (1, 0))
    assert all(c.eager is None for c in r.census)
    aten = _aten_ops(r)
    library = {k for k in aten if "scaled_dot_product" in k}
    assert set(aten) - library == set(), aten  # the embedding backward is fused too (index_put_accumulate)
    for c in r.census:
        assert c.fused_share() == 1.0, (c.graph, c.fused_share(), c.aten)


@pytest.mark.parametrize("make", [MLP, Block], ids=["mlp", "block"])
def test_bf16(make) -> None:  # noqa: ANN001
    """bf16 parameters and inputs: each op rounds where torch's does, so the errors are eager's."""
    torch.manual_seed(5)
    shape = (3, 8) if make is MLP else (2, 5, 16)
    r = compare(lambda: make().to(torch.bfloat16), _plain, {"x": torch.randn(*shape, dtype=torch.bfloat16)})
    assert_close_as_eager(r, floor=1e-4)
    assert all(c.eager is None for c in r.census)


@pytest.mark.slow
def test_llama_three_sequence_lengths_one_compile() -> None:
    """dynamic=True: one forward and one backward program serve sequence lengths 5, 8 and 11."""
    pytest.importorskip("transformers")
    from allotment.frontend.torch_compile import census, reset_census

    torch.manual_seed(6)
    torch._dynamo.reset()
    reset_census()
    model = llama()
    c = torch.compile(model, backend="allotment", dynamic=True)
    for s in (5, 8, 11):
        ids = torch.randint(0, 64, (2, s))
        out = c(input_ids=ids, labels=ids)
        out.loss.backward()
        ref = model(input_ids=ids, labels=ids)
        torch.testing.assert_close(out.logits, ref.logits, rtol=1e-5, atol=1e-5)
    assert [e.graph for e in census()] == ["forward", "backward"]
    for e in census():
        assert e.eager is None and all("scaled_dot_product" in op for op in e.aten), e.aten


def test_saved_attention_output_is_read_as_it_lies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forward keeps attention's output in the call's [batch, seq, heads, dim] order and
    saves it so; the backward's argument says that order (`fusion.stride_order`), so its
    transpose back to [batch, seq, heads * dim] (for the projection's weight gradient) is a
    view: no copy of it at the backward's entry, nor anywhere in the step."""
    from allotment.backend import host_runtime as rt
    from allotment.dialects.fusion import STRIDE_ORDER_ATTR
    from allotment.frontend.torch_compile.backend import COMPILED

    copies: list[tuple[int, ...]] = []
    real = rt.row_major_copy
    monkeypatch.setattr(rt, "row_major_copy", lambda t: copies.append(tuple(t.shape)) or real(t))
    torch.manual_seed(2)
    r = compare(Block, _plain, {"x": torch.randn(2, 5, 16)})
    assert_close_as_eager(r)
    assert copies == []
    backward = [c for c, k in zip(COMPILED, r.census) if k.graph == "backward"]
    f = next(iter(backward[0].executable._module.ops))
    ordered = [a for a in f.arg_attrs.data if STRIDE_ORDER_ATTR in a.data]
    assert [3, 1, 2, 0] in [list(a.data[STRIDE_ORDER_ATTR].get_values()) for a in ordered]  # [B, S, H, D]
