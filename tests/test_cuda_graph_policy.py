"""The CUDA-graph replay policy (`backend/cuda_graphs.py`) on the CPU.

A real capture needs a GPU; here `capture` is swapped for one that behaves like a graph
where it matters: it keeps the outputs of its capture call, and a replay recomputes, from
what lies at the captured addresses, into those same output tensors (a graph's buffers are
fixed).
So these tests see what a caller sees: which inputs are copied, which are read in place,
when outputs are overwritten, and when a call runs without its graph.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch

from allotment.backend import cuda_graphs
from allotment.backend.cuda_graphs import GraphedProgram


def fake_capture(run: Callable[..., Sequence[torch.Tensor]], args: Sequence[Any]
                 ) -> tuple[Callable[[Sequence[Any]], None], tuple[torch.Tensor, ...]]:
    outputs = tuple(run(*args))

    def replay(now: Sequence[Any]) -> None:  # what lies at the captured addresses now
        for o, new in zip(outputs, run(*now)):
            o.copy_(new)

    return replay, outputs


def affine(w: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x * w + 1,)


def graphed(run: Callable[..., Any] = affine, aliases: dict[int, int] | None = None) -> GraphedProgram:
    return GraphedProgram(run, aliases or {}, capture=fake_capture)


def test_a_weight_at_the_same_address_is_read_in_place_and_new_data_is_copied() -> None:
    g = graphed()
    w = torch.randn(8)
    results = []
    for seed in range(4):
        x = torch.randn(8, generator=torch.Generator().manual_seed(seed))
        (y,) = g(w, x)
        torch.testing.assert_close(y, x * w + 1)
        results.append(y.clone())
        del y
    assert g.replays == 3  # the first call of the signature is a plain run
    (slot,) = g._slots.values()
    assert slot.graph.addresses[0] == w.data_ptr()  # the weight: never copied
    assert slot.graph.addresses[1] is None  # the data moved between calls: a private copy, refilled
    w.mul_(2)  # the caller changes the weight in place: the next replay reads it
    x = torch.randn(8)
    (y,) = g(w, x)
    torch.testing.assert_close(y, x * w + 1)


def test_an_input_that_moves_becomes_a_copy_with_one_new_capture() -> None:
    g = graphed()
    w, x = torch.randn(8), torch.randn(8)
    g(w, x)
    g(w, x)  # both at the same address as before: captured in place
    assert g.captures == 1
    w2 = torch.randn(8)
    (y,) = g(w2, x)
    torch.testing.assert_close(y, x * w2 + 1)  # not the old weight
    assert g.captures == 2
    (slot,) = g._slots.values()
    assert 0 in slot.static
    del y
    w3 = torch.randn(8)
    (y,) = g(w3, x)  # a copy now: no third capture
    torch.testing.assert_close(y, x * w3 + 1)
    assert g.captures == 2


def test_a_held_output_keeps_its_value() -> None:
    """The next replay would overwrite a held output: that call runs without the graph."""
    g = graphed()
    w = torch.randn(8)
    kept = []
    xs = [torch.randn(8) for _ in range(5)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in xs:
            kept.append(g(w, x)[0])  # a loss kept in a list, say
    for x, y in zip(xs, kept):
        torch.testing.assert_close(y, x * w + 1)
    assert g.fallbacks >= 1
    assert sum("still referenced" in str(c.message) for c in caught) == 1  # one warning
    kept.clear()
    before = g.replays
    (y,) = g(w, xs[0])
    torch.testing.assert_close(y, xs[0] * w + 1)
    assert g.replays == before + 1  # released: the graph replays again


def test_a_view_of_an_output_counts_as_held() -> None:
    g = graphed()
    w = torch.randn(4, 4)
    g(w, torch.randn(4, 4))
    view = g(w, torch.randn(4, 4))[0][1:]
    first = view.clone()
    g(w, torch.randn(4, 4))
    torch.testing.assert_close(view, first)


def test_outputs_of_one_graph_are_read_in_place_by_another() -> None:
    """A forward graph's saved activations, read by the backward graph, are not copied."""
    fwd = graphed(lambda w, x: (torch.tanh(x * w),))
    bwd = graphed(lambda a, g: (g * (1 - a * a),))
    w, gy = torch.randn(16), torch.ones(16)
    for _ in range(4):
        x = torch.randn(16)
        (a,) = fwd(w, x)
        (gx,) = bwd(a, gy)
        torch.testing.assert_close(gx, 1 - torch.tanh(x * w) ** 2)
        del a, gx
    (slot,) = bwd._slots.values()
    assert slot.graph.addresses[0] is not None and 0 not in slot.static


def test_an_input_an_output_aliases_is_a_private_copy() -> None:
    """An output that is a view of an input would point into the caller's tensor."""
    g = graphed(lambda x: (x[1:], x * 2))
    x = torch.randn(6)
    g(x)
    y, z = g(x)
    (slot,) = g._slots.values()
    assert slot.graph.addresses[0] is None and y.data_ptr() != x[1:].data_ptr()
    torch.testing.assert_close(y, x[1:])
    torch.testing.assert_close(z, x * 2)


def test_an_in_place_output_is_written_back_and_other_inputs_stay_as_they_were() -> None:
    def step(p: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor]:
        p.sub_(0.5 * grad)
        return (p,)

    g = graphed(step, {0: 0})
    p, grad = torch.ones(8), torch.full((8,), 2.0)
    expected = torch.ones(8)
    for _ in range(4):
        (out,) = g(p, grad)
        expected -= 1.0
        assert out is p
        torch.testing.assert_close(p, expected)
        torch.testing.assert_close(grad, torch.full((8,), 2.0))
    (slot,) = g._slots.values()
    assert slot.graph.addresses[0] is None  # written in place: always a private copy


def test_a_dropped_capture_unregisters_its_buffers() -> None:
    g = GraphedProgram(affine, {}, max_graphs=1, capture=fake_capture)
    w = torch.randn(8)
    g(w, torch.randn(8))
    (y,) = g(w, torch.randn(8))
    address = y.untyped_storage().data_ptr()
    del y
    assert address in cuda_graphs._GRAPH_OWNED
    w9 = torch.randn(9)
    g(w9, torch.randn(9))  # a new signature pushes the old one out
    g(w9, torch.randn(9))
    # the new capture's outputs may have been given the freed storage: then it alone owns it
    (slot,) = g._slots.values()
    assert cuda_graphs._GRAPH_OWNED.get(address, 0) == (1 if address in slot.graph.owned else 0)


@pytest.mark.parametrize("held", [False, True])
def test_results_match_over_many_calls(held: bool) -> None:
    g = graphed(lambda a, b: (a @ b, (a * 2).sum(0)))
    a = torch.randn(3, 4)
    keep = []
    for seed in range(6):
        b = torch.randn(4, 5, generator=torch.Generator().manual_seed(seed))
        out = g(a, b)
        torch.testing.assert_close(out[0], a @ b)
        torch.testing.assert_close(out[1], (a * 2).sum(0))
        if held:
            keep.append((out, a @ b))
        del out
    for out, ref in keep:
        torch.testing.assert_close(out[0], ref)
