"""The torch.compile backend's contract: the entry point, options, symbolic shapes, the
boxed calling convention (saved tensors freed inside the backward), eager fallback with
one warning, the fallback log, and the generated op table."""

from __future__ import annotations

import json
import warnings
import weakref
from pathlib import Path

import pytest
import torch
from models import MLP

import allotment
from allotment.driver import runtime
from allotment.frontend.torch_compile import aten_table, census, reset_census
from allotment.frontend.torch_compile.compiled import CompiledGraph

DOC = Path(__file__).resolve().parents[2] / "docs" / "torch-compile-ops.md"


def test_the_backend_is_registered_by_its_entry_point() -> None:
    from torch._dynamo.backends.registry import list_backends, lookup_backend

    assert "allotment" in list_backends(exclude_tags=())
    assert lookup_backend("allotment").__name__ == "allotment_backend"


def test_unknown_options_are_an_argument_error() -> None:
    torch._dynamo.reset()
    f = torch.compile(lambda x: x + 1, backend="allotment", options={"planing": False})
    with pytest.raises(Exception, match="unknown options"):
        f(torch.ones(2))


@pytest.mark.parametrize("planning", [True, False])
def test_planning_option(planning: bool, tmp_path: Path) -> None:
    torch._dynamo.reset()
    reset_census()
    log = tmp_path / "log.jsonl"
    m = MLP()
    c = torch.compile(m, backend="allotment", options={"planning": planning, "fallback_log": str(log)})
    x = torch.randn(3, 8)
    torch.testing.assert_close(c(x), m(x))
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["graph"] for e in entries] == ["forward"]  # no grad needed... the forward of a training graph
    assert entries[0]["aten"] == {} and entries[0]["fused"]["aten.addmm.default"] == 2


def test_three_sequence_lengths_one_compile() -> None:
    torch._dynamo.reset()
    reset_census()

    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        h = torch.softmax(x @ w, dim=-1)
        return (h * x.sum(dim=1, keepdim=True)).reshape(x.shape[0], -1).sum(-1)

    c = torch.compile(f, backend="allotment", dynamic=True)
    w = torch.randn(4, 4)
    for s in (3, 5, 7):
        x = torch.randn(2, s, 4)
        torch.testing.assert_close(c(x, w), f(x, w))
    assert len(census()) == 1
    assert all(c.eager is None and not c.aten for c in census())


def test_untranslatable_graph_runs_eagerly_with_one_warning() -> None:
    torch._dynamo.reset()
    reset_census()

    def f(z: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(z * 2).sum(-1)

    c = torch.compile(f, backend="allotment")
    z = torch.randn(3, dtype=torch.complex64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = c(z)
    ours = [w for w in caught if "allotment" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "runs eagerly" in str(ours[0].message) and "complex64" in str(ours[0].message)
    torch.testing.assert_close(out, f(z))
    assert census()[0].eager is not None


def test_an_op_without_a_translation_is_an_aten_kernel() -> None:
    torch._dynamo.reset()
    reset_census()

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sort(x * 2, dim=-1).values + 1

    c = torch.compile(f, backend="allotment")
    x = torch.randn(3, 5)
    torch.testing.assert_close(c(x), f(x))
    (entry,) = census()
    assert entry.aten == {"aten.sort.default": 1}
    assert entry.fused["aten.mul.Tensor"] == 1 and entry.fused["aten.add.Tensor"] == 1
    assert "no fusion translation" in entry.reasons["aten.sort.default"]
    (node,) = entry.aten_nodes
    assert node[1:] == ("aten.sort.default", "no fusion translation") and len(entry.fused_nodes) == 2


def test_donated_inputs_are_freed_after_their_last_use() -> None:
    """A backward-like program: `saved` is read by the first kernel only; under the boxed
    convention the program holds the only reference and drops it before the next kernel."""
    text = """
    func.func @f(%saved: tensor<64xf32> {alloc.donated}, %g: tensor<64xf32> {alloc.donated}) -> tensor<64xi64> {
      %a = fusion.mul %saved, %g : tensor<64xf32>
      %s = fusion.sum %a dims [0] keepdim : tensor<64xf32> -> tensor<1xf32>
      %b = fusion.mul %g, %s : tensor<64xf32>, tensor<1xf32> -> tensor<64xf32>
      %i = fusion.argsort %b dim 0 : tensor<64xf32> -> tensor<64xi64>
      func.return %i : tensor<64xi64>
    }
    """
    exe = allotment.compile(text)
    saved, g = torch.randn(64), torch.randn(64)
    expected = torch.argsort(g * (saved * g).sum(), stable=True)
    alive_at_launch: list[bool] = []
    ref = weakref.ref(saved)

    def hook(*args, **kwargs) -> None:  # noqa: ANN002, ANN003
        alive_at_launch.append(ref() is not None)

    prog = exe.program("cpu")
    assert "del saved" in prog.source
    args = [saved, g]
    del saved
    with runtime.intercept_launches(hook):
        exe.call_boxed(args)
    assert args == []
    assert alive_at_launch[0] and not alive_at_launch[-1], alive_at_launch
    saved = torch.randn(64)
    (out,) = exe.call_boxed([saved, g])  # runs for real
    torch.testing.assert_close(out, torch.argsort(g * (saved * g).sum(), stable=True))
    assert expected.shape == out.shape


def test_backward_frees_saved_tensors_inside_the_program() -> None:
    """Every argument of a compiled backward is donated, and its host program frees them."""
    torch._dynamo.reset()
    m = MLP()
    programs: list[CompiledGraph] = []
    original = CompiledGraph.__init__

    def spy(self, program, executable, gm=None) -> None:  # noqa: ANN001
        original(self, program, executable, gm)
        programs.append(self)

    CompiledGraph.__init__ = spy  # type: ignore[method-assign]
    try:
        c = torch.compile(m, backend="allotment")
        c(torch.randn(3, 8)).sum().backward()
    finally:
        CompiledGraph.__init__ = original  # type: ignore[method-assign]
    backward = programs[-1]
    source = backward.executable.program("cpu").source
    assert "def run_boxed(args):" in source and "args.clear()" in source
    assert source.count("del ") >= 2


def test_the_op_table_doc_is_generated_from_the_table() -> None:
    assert DOC.read_text() == aten_table.page(), (
        "regenerate it: python -m allotment.frontend.torch_compile.aten_table docs/torch-compile-ops.md")


def test_cuda_attention_graph_translates_with_opaque_rng_state() -> None:
    """The H200's attention returns its RNG state as uint64 tensors (and SymInt sizes): traced
    on the meta device, the graph still becomes one function, the state carried in i64 and
    viewed back before the backward's call, and the call that makes it writes no out=."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from allotment.frontend.torch_compile.translate import Translator

    def f(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple:
        o, lse, cq, ck, mq, mk, seed, off, _ = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)
        g = torch.ops.aten._scaled_dot_product_flash_attention_backward(
            o * 2, q, k, v, o, lse, cq, ck, mq, mk, 0.0, True, seed, off)
        return o, g[0], seed

    q = torch.randn(2, 4, 8, 16, device="meta", dtype=torch.bfloat16)
    gm = make_fx(f, tracing_mode="fake")(q, q.clone(), q.clone())
    program = Translator(gm, "forward").run()
    ir = program.fd.ir()
    assert ir.count("fusion.aten") == 2 and "out = " not in ir
    assert '\\22views\\22: [null, null, \\22uint64\\22, \\22uint64\\22, null]' in ir
    assert '{\\22t\\22: 6, \\22view\\22: \\22uint64\\22}' in ir
    assert program.outputs[2] == ("result", 2, torch.uint64)
    assert program.census.aten == {"aten._scaled_dot_product_flash_attention.default": 1,
                                   "aten._scaled_dot_product_flash_attention_backward.default": 1}


def test_index_put_accumulate_is_fused_and_cuda_graphs_passes_through() -> None:
    """torch 2.11's embedding backward is index_put(accumulate=True): one fused kernel."""
    torch._dynamo.reset()
    reset_census()

    def f(x: torch.Tensor, idx: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.index_put(x * 1, (idx,), v, accumulate=True) + 1

    c = torch.compile(f, backend="allotment", options={"cuda_graphs": True})
    x, idx, v = torch.zeros(6, 3), torch.tensor([0, 2, 2, 5]), torch.randn(4, 3)
    torch.testing.assert_close(c(x, idx, v), f(x, idx, v))
    (entry,) = census()
    assert entry.aten == {} and entry.fused["aten.index_put.default"] == 1


def test_a_failing_first_call_runs_the_graph_eagerly_with_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    from allotment.errors import CompileError

    torch._dynamo.reset()
    reset_census()

    def boom(self, args):  # noqa: ANN001
        raise CompileError("a kernel did not compile")

    monkeypatch.setattr(runtime.Executable, "call_boxed", boom)
    c = torch.compile(lambda x: x * 2 + 1, backend="allotment")
    x = torch.randn(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.testing.assert_close(c(x), x * 2 + 1)
        torch.testing.assert_close(c(x), x * 2 + 1)
    ours = [str(w.message) for w in caught if "allotment" in str(w.message)]
    assert len(ours) == 1 and "a kernel did not compile" in ours[0]
    assert "did not compile" in census()[0].eager


def test_an_in_place_op_makes_the_graph_untranslatable() -> None:
    """Only functionalized graphs are translated (AOTAutograd's always are)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from allotment.frontend.torch_compile.translate import Translator, Untranslatable

    def f(x: torch.Tensor) -> torch.Tensor:
        return x.add_(1)

    gm = make_fx(f)(torch.zeros(3))
    with pytest.raises(Untranslatable, match="mutates its arguments"):
        Translator(gm, "inference").run()


@pytest.mark.parametrize("dtype", [None, torch.float64], ids=["same", "cast"])
def test_cumsum_is_a_fused_scan(dtype: torch.dtype | None) -> None:
    """aten.cumsum is the dialect's scan (fusion.cumsum), not an ATen call."""
    torch._dynamo.reset()
    reset_census()

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * 2, dim=-1, dtype=dtype) + 1

    x = torch.randn(3, 7)
    torch.testing.assert_close(torch.compile(f, backend="allotment")(x), f(x))
    (entry,) = census()
    assert entry.aten == {} and entry.fused["aten.cumsum.default"] == 1


def test_a_bias_gradient_and_its_cast_are_one_kernel() -> None:
    """Under bf16 autocast a linear's bias gradient is a keepdim sum of the output gradient,
    a `view` dropping the unit dim, and a cast to the parameter's f32: `fusion-expose` turns
    the view into a squeeze, so the sum and the cast run in one kernel (two before), and
    the gradients still match eager's."""
    from allotment.frontend.torch_compile.backend import COMPILED

    torch._dynamo.reset()
    COMPILED.clear()
    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 8)
    ref = torch.nn.Linear(16, 8)
    ref.load_state_dict(lin.state_dict())
    x = torch.randn(4, 16)

    def step(m: torch.nn.Module) -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = m(x)
        y.float().square().sum().backward()

    step(torch.compile(lin, backend="allotment"))
    step(ref)
    torch.testing.assert_close(lin.bias.grad, ref.bias.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(lin.weight.grad, ref.weight.grad, rtol=2e-2, atol=2e-2)
    kernels = [line for c in COMPILED for line in c.executable.source("cpu").splitlines()
               if line.startswith("# alloc.kernel")]
    sums = [k for k in kernels if "fusion.sum" in k]
    assert len(sums) == 1 and "fusion.squeeze" in sums[0] and "fusion.cast" in sums[0], kernels
    assert not any("fusion.reshape, 1 fusion.cast" in k for k in kernels), kernels


def test_an_inference_graph_computes_a_repeated_value_once() -> None:
    """Two attention calls with one boolean mask: each call's decomposition turns the mask
    into an additive one; the inference graph's CSE (`prepare_inference`) keeps one. The
    same ops computed twice on purpose (two `sin`) are one node too."""
    torch._dynamo.reset()
    reset_census()

    def f(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        b = torch.nn.functional.scaled_dot_product_attention(a, k, v, attn_mask=mask)
        return b + q.sin() * q.sin()

    q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
    mask = torch.rand(8, 8) > 0.3
    mask.fill_diagonal_(True)
    with torch.no_grad():
        eager = f(q, k, v, mask)
        got = torch.compile(f, backend="allotment")(q, k, v, mask)
    torch.testing.assert_close(got, eager, atol=1e-5, rtol=1e-5)
    (entry,) = census()
    assert entry.eager is None
    assert entry.fused["aten.sin.default"] == 1, entry.fused
    assert entry.fused["aten.where.self"] + entry.fused["aten.where.ScalarSelf"] <= 1, entry.fused


def test_two_dropouts_of_one_tensor_stay_two_draws() -> None:
    """CSE keeps random ops: two dropouts of one input in an inference graph differ."""
    torch._dynamo.reset()
    reset_census()

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (torch.nn.functional.dropout(x, 0.5, training=True),
                torch.nn.functional.dropout(x, 0.5, training=True))

    with torch.no_grad():
        a, b = torch.compile(f, backend="allotment")(torch.ones(4, 64))
    assert census()[0].eager is None
    assert not torch.equal(a, b)
    for d in (a, b):  # each a dropout: zeros and 2s, about half each
        assert set(d.unique().tolist()) <= {0.0, 2.0} and 64 < int((d == 0).sum()) < 192


def test_dropout_trains_with_its_mask_saved_and_seeded_by_torch() -> None:
    """A training graph with dropout (Inductor's random-op pass: seeds drawn from torch's
    generator, the draw an ATen call in the program): the backward uses the forward's mask,
    and `torch.manual_seed` repeats a step."""
    torch._dynamo.reset()
    reset_census()

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.dropout(x * 3, 0.5, training=True)

    c = torch.compile(f, backend="allotment")
    runs = []
    for _ in range(2):
        torch.manual_seed(1)
        x = torch.randn(8, 32, requires_grad=True)
        y = c(x)
        y.sum().backward()
        runs.append((y.detach(), x.grad))
    assert all(e.eager is None for e in census()) and len(census()) == 2
    (y, g), (y2, g2) = runs
    kept = y != 0
    assert 64 < int(kept.sum()) < 192
    torch.testing.assert_close(g, kept.float() * 6)  # d(dropout(3x))/dx = 3 * mask / (1 - p)
    assert torch.equal(y, y2) and torch.equal(g, g2)
