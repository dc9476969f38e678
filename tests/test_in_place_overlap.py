"""In-place outputs (`fusion.alias_input`) over memory that overlaps: refused as torch refuses
`x.add_(y)` on an expanded `x` ("more than one element of the written-to tensor refers to a
single memory location"), and where the written input shares memory with another input; an
input passed twice only to be read stays fine. The check is `rt.check_in_place`, made by the
generated program at entry (and, for replayed calls, by the executor: `test_replay.py`)."""

from __future__ import annotations

import pytest
import torch

import allotment
from allotment import DataType, FusionDefinition
from allotment.backend import host_runtime as rt

STEP = """
func.func @step(%p: tensor<?x?xf32>, %g: tensor<?x?xf32>) -> (tensor<?x?xf32> {fusion.alias_input = 0 : i64}) {
  %p2 = fusion.add %p, %g : tensor<?x?xf32>
  func.return %p2 : tensor<?x?xf32>
}
"""

READ_ONLY = """
func.func @both(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = fusion.add %a, %b : tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}
"""


def _g() -> torch.Tensor:
    return torch.arange(12, dtype=torch.float32).view(3, 4)


@pytest.fixture(scope="module")
def step() -> allotment.Executable:
    return allotment.compile(STEP)


def test_an_expanded_in_place_input_is_refused(step: allotment.Executable) -> None:
    base = torch.zeros(1, 4)
    p = base.expand(3, 4)
    with pytest.raises(allotment.RunError, match=r"input p is written in place.*more than one element"):
        step(p, _g())
    assert torch.equal(base, torch.zeros(1, 4))  # not written


def test_an_interleaved_in_place_input_is_refused(step: allotment.Executable) -> None:
    base = torch.zeros(12)
    p = base.as_strided((3, 4), (1, 1))  # element (0, 1) and (1, 0) are one location
    with pytest.raises(allotment.RunError, match="single memory location"):
        step(p, _g())
    assert torch.equal(base, torch.zeros(12))


def test_an_in_place_input_sharing_memory_with_another_is_refused(step: allotment.Executable) -> None:
    base = torch.zeros(24)
    p, g = base[:12].view(3, 4), base[6:18].view(3, 4)
    with pytest.raises(allotment.RunError, match=r"input p is written in place.*input g occupies"):
        step(p, g)
    assert torch.equal(base, torch.zeros(24))
    x = torch.ones(3, 4)
    with pytest.raises(allotment.RunError, match="input g occupies"):
        step(x, x)  # the written input passed twice
    assert torch.equal(x, torch.ones(3, 4))


def test_disjoint_pieces_of_one_storage_and_odd_strides_run(step: allotment.Executable) -> None:
    base = torch.zeros(24)
    p, g = base[:12].view(3, 4), base[12:].view(3, 4)
    g.copy_(_g())
    (out,) = step(p, g)
    assert out is p and torch.equal(p, _g())
    q = torch.zeros(4, 3).t()  # transposed: strided, but no two elements at one location
    (out,) = step(q, _g())
    assert torch.equal(q, _g())


def test_an_input_passed_twice_to_be_read_runs() -> None:
    x = _g()
    (s,) = allotment.compile(READ_ONLY)(x, x)
    assert torch.equal(s, 2 * _g()) and torch.equal(x, _g())
    e = torch.arange(4.0).view(1, 4).expand(3, 4)  # an expanded input that is only read
    (s,) = allotment.compile(READ_ONLY)(e, e)
    assert torch.equal(s, 2 * e)


def test_fusion_definition_refuses_an_expanded_alias_input() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[None, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t0, t1), alias_input=t0)
    base = torch.zeros(1, 4)
    with pytest.raises(allotment.RunError, match="more than one element"):
        fd.execute([base.expand(3, 4), _g()])
    assert torch.equal(base, torch.zeros(1, 4))
    p = torch.zeros(1, 4)  # an extent of 1: nothing overlaps
    fd.execute([p, _g()[:1]])
    assert torch.equal(p, _g()[:1])


@pytest.mark.parametrize(("sizes", "strides", "overlap"), [
    ((3, 4), (4, 1), False), ((3, 4), (0, 1), True), ((3, 4), (1, 1), True), ((4, 3), (1, 4), False),
    ((3, 2), (2, 3), False), ((3, 3), (1, 2), True), ((2, 1, 5), (5, 0, 1), False), ((1,), (0,), False),
    ((0, 4), (0, 1), False), ((2, 2, 2), (4, 1, 2), False), ((2, 2, 2), (2, 1, 2), True),
])
def test_overlaps_itself_is_exact(sizes: tuple, strides: tuple, overlap: bool) -> None:
    x = torch.zeros(64).as_strided(sizes, strides)
    offsets = {sum(i * s for i, s in zip(idx, strides)) for idx in torch.cartesian_prod(
        *[torch.arange(n) for n in sizes]).reshape(-1, len(sizes)).tolist()} if x.numel() else set()
    assert (len(offsets) != x.numel()) == overlap  # the oracle: count distinct offsets
    assert rt.overlaps_itself(x) == overlap


def test_interleaved_disjoint_pieces_of_one_storage_run(step: allotment.Executable) -> None:
    """Rows of p and g alternate in one storage: their byte ranges intersect, their bytes do not."""
    base = torch.zeros(24)
    p, g = base.as_strided((3, 4), (8, 1), 0), base.as_strided((3, 4), (8, 1), 4)
    g.copy_(_g())
    (out,) = step(p, g)
    assert out is p and torch.equal(p, _g())
    with pytest.raises(allotment.RunError, match="input g occupies"):
        step(base.as_strided((3, 4), (8, 1), 0), base.as_strided((3, 4), (8, 1), 2))  # straddles p's rows


def test_cuda_graph_calls_refuse_an_overlapping_in_place_input() -> None:
    """`compile(cuda_graphs=True)`: the program runs on private copies of the inputs, so the
    graphed call checks the caller's tensors itself before capturing or replaying (the check
    comes first: no GPU is needed to see it)."""
    from allotment.backend.cuda_graphs import GraphedProgram

    ran: list = []
    graphed = GraphedProgram(lambda *a: ran.append(a), {0: 0}, names=("p", "g"))
    base = torch.zeros(1, 4)
    with pytest.raises(allotment.RunError, match="input p is written in place.*more than one element"):
        graphed(base.expand(3, 4), _g())
    x = torch.zeros(3, 4)
    with pytest.raises(allotment.RunError, match="input g occupies"):
        graphed(x, x)
    assert ran == [] and torch.equal(base, torch.zeros(1, 4))
