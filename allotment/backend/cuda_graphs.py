"""CUDA graphs for repeated calls: one capture per input signature, then a replay.

`allotment.compile(fusion, cuda_graphs=True)` gives an executable whose CUDA
calls go through `GraphedProgram`. Per input signature (each tensor input's
shape, strides, dtype and device, and each scalar's value):

1. The first call runs the program as usual (it compiles the kernels) and notes
   where each tensor input lives.
2. The next call captures one call into a `torch.cuda.CUDAGraph`. An input
   found at the same address as in the call before, or in a buffer that a
   graph of this process returned (a forward graph's saved activations, read
   by the backward graph), is read where it lies: the graph is captured on the
   caller's tensor and copies nothing ("in place"). Every other input gets a
   private copy ("static") that each call refills.
3. Every later call checks that each in-place input is at its captured address
   and replays the graph: one launch of the whole fusion. An in-place input
   found elsewhere becomes a static one for good, and the graph is captured
   again (at most once per input).

What a caller must know (torch.compile's `mode="reduce-overhead"` makes the
same bargain, and this module keeps the part of it that can go wrong silently
out of reach):

- The outputs of a replay live in the graph's own buffers, which the next
  replay overwrites. So a call first checks that no output of the last replay
  is still referenced. If one is (a loss kept in a list, a forward's saved
  activations whose backward has not run, a gradient still held by `.grad`),
  the call runs the program without its graph, into fresh buffers, and the
  held output keeps its value; `fallbacks` counts those calls, and the first
  one warns. Release the outputs (or clone what you keep) and the graph
  replays again.
- In-place outputs (`fusion.alias_input`) are written back to the caller's
  input after the replay, and that input is what the call returns.
- Inputs are only ever read; a program that writes an input in place runs on a
  static copy and copies the result back, so nothing else the caller passed is
  modified.
- Scalars are part of the signature: a new scalar value is a new capture.
- Each capture keeps its buffers (static inputs, intermediates, outputs) in a
  private memory pool for the life of the executable; `max_graphs` (default 8)
  bounds how many signatures are kept (least recently used first out).
- CPU calls are not graphed: they run the program as usual.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

Run = Callable[..., Sequence[torch.Tensor]]
Replay = Callable[[Sequence[Any]], None]
"""Replays a graph for these arguments (a CUDA graph reads them at the addresses it was
captured on, which the caller has checked, so it ignores them)."""
Capture = Callable[[Run, Sequence[Any]], tuple[Replay, tuple[torch.Tensor, ...]]]
"""How a graph is captured: (the program, its arguments) -> (replay, the graph's outputs)."""

_OWNED_LOCK = threading.Lock()
_GRAPH_OWNED: dict[int, int] = {}
"""Storage address -> how many live captures of this process return a buffer there."""


def signature(inputs: Sequence[Any]) -> tuple:
    """What a capture depends on: per tensor its shape, strides, dtype and device; per
    scalar its type and value."""
    key: list[Any] = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            key.append((tuple(x.shape), x.stride(), x.dtype, x.device))
        else:
            key.append((type(x), x))
    return tuple(key)


def capture_cuda_graph(run: Run, args: Sequence[Any]) -> tuple[Replay, tuple[torch.Tensor, ...]]:
    """One call of `run` on `args` captured into a CUDA graph, after a call on a side stream
    (lazy initialization, such as a library handle's workspace, stays out of the capture)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run(*args)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = tuple(run(*args))
    return lambda _args: graph.replay(), outputs


def _storage_address(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _uses(t: torch.Tensor) -> int:
    return torch._C._storage_Use_Count(t.untyped_storage()._cdata)


@dataclass
class _Graph:
    replay: Replay
    args: tuple[Any, ...]
    """Per argument, its static copy (or the scalar); None for an in-place input, which the
    graph does not keep alive."""
    addresses: tuple[int | None, ...]
    """Per argument, the address an in-place input must have at a replay (None: static)."""
    outputs: tuple[torch.Tensor, ...]
    uses: tuple[int, ...]
    """Each output storage's use count with no output of a replay held outside."""
    owned: tuple[int, ...]
    """The outputs' storage addresses (registered in `_GRAPH_OWNED` while the graph lives)."""

    def release(self) -> None:
        with _OWNED_LOCK:
            for a in self.owned:
                n = _GRAPH_OWNED.get(a, 0) - 1
                if n > 0:
                    _GRAPH_OWNED[a] = n
                else:
                    _GRAPH_OWNED.pop(a, None)

    def outputs_held(self) -> bool:
        return any(_uses(o) > n for o, n in zip(self.outputs, self.uses))


@dataclass
class _Slot:
    """One signature: where its inputs were last seen, which must be copied, its graph."""

    last: tuple[int | None, ...]
    static: set[int] = field(default_factory=set)
    graph: _Graph | None = None


class GraphedProgram:
    """Replays one CUDA graph per input signature of `run` (module docstring)."""

    def __init__(self, run: Run, aliases: dict[int, int], max_graphs: int = 8,
                 names: Sequence[str] | None = None, capture: Capture = capture_cuda_graph) -> None:
        self._run = run
        self._aliases = aliases  # {result index: argument index}
        self._names = tuple(names) if names is not None else None
        """The arguments' names, for errors (default: #index)."""
        self._max = max(1, max_graphs)
        self._capture_fn = capture
        self._slots: OrderedDict[tuple, _Slot] = OrderedDict()
        self._lock = threading.Lock()
        self.captures = 0
        """Graphs captured so far (a test counts them)."""
        self.replays = 0
        """Calls answered by a replay."""
        self.fallbacks = 0
        """Calls run without their graph because an output of its last replay was still held."""

    def __call__(self, *inputs: Any) -> tuple[torch.Tensor, ...]:
        if self._aliases:
            self._check_in_place(inputs)
        key = signature(inputs)
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:  # first call of this signature: a plain run, and where the inputs are
                self._slots[key] = _Slot(self._addresses(inputs))
                if len(self._slots) > self._max:
                    _, old = self._slots.popitem(last=False)
                    if old.graph is not None:
                        old.graph.release()
                return tuple(self._run(*inputs))
            self._slots.move_to_end(key)
            graph = slot.graph
            if graph is not None and graph.outputs_held():
                return self._fallback(inputs)
            if graph is not None:
                moved = [i for i, a in enumerate(graph.addresses)
                         if a is not None and inputs[i].data_ptr() != a]
                if moved:
                    slot.static.update(moved)
                    graph.release()
                    graph = slot.graph = None
            if graph is None:
                graph = slot.graph = self._capture(slot, inputs)
            for i, (x, s) in enumerate(zip(inputs, graph.args)):
                if graph.addresses[i] is None and isinstance(x, torch.Tensor) and x.data_ptr() != s.data_ptr():
                    s.copy_(x)
            graph.replay(tuple(x if a is not None else s for x, s, a in zip(inputs, graph.args, graph.addresses)))
            self.replays += 1
            outputs = [o.detach() for o in graph.outputs]  # the caller's references are counted
            for r, k in self._aliases.items():
                user = inputs[k]
                if user.data_ptr() != graph.args[k].data_ptr():
                    user.copy_(graph.args[k])
                outputs[r] = user
            return tuple(outputs)

    def _addresses(self, inputs: Sequence[Any]) -> tuple[int | None, ...]:
        return tuple(x.data_ptr() if isinstance(x, torch.Tensor) else None for x in inputs)

    def _fallback(self, inputs: Sequence[Any]) -> tuple[torch.Tensor, ...]:
        self.fallbacks += 1
        if self.fallbacks == 1:
            warnings.warn("allotment: cuda_graphs: an output of the last replay is still referenced, so this "
                          "call runs without its graph (fresh buffers) and that output keeps its value; "
                          "release the outputs of a call (or clone what you keep) before the next one to "
                          "replay again", stacklevel=3)
        return tuple(self._run(*inputs))

    def _check_in_place(self, inputs: Sequence[Any]) -> None:
        """An input written back in place must not overlap itself (`host_runtime.check_in_place`:
        the program itself runs on private copies, so it cannot see the caller's tensors)."""
        from allotment.backend.host_runtime import check_in_place

        def name(i: int) -> str:
            return self._names[i] if self._names is not None and i < len(self._names) else f"#{i}"

        for k in self._aliases.values():
            x = inputs[k]
            if isinstance(x, torch.Tensor):
                others = [(y, name(j)) for j, y in enumerate(inputs) if j != k and isinstance(y, torch.Tensor)]
                check_in_place(x, name(k), [y for y, _ in others], [n for _, n in others])

    def _in_place_inputs(self, slot: _Slot, inputs: Sequence[Any]) -> set[int]:
        """The inputs read where they lie: seen at the same address as in the call before, or
        in a buffer a graph returned; never one the program writes in place."""
        with _OWNED_LOCK:
            owned = set(_GRAPH_OWNED)
        written = set(self._aliases.values())
        keep = set()
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor) or i in written or i in slot.static:
                continue
            if x.data_ptr() == slot.last[i] or _storage_address(x) in owned:
                keep.add(i)
        return keep

    def _capture(self, slot: _Slot, inputs: Sequence[Any]) -> _Graph:
        keep = self._in_place_inputs(slot, inputs)
        slot.last = self._addresses(inputs)
        while True:
            args = tuple(x if i in keep or not isinstance(x, torch.Tensor) else x.clone()
                         for i, x in enumerate(inputs))
            replay, outputs = self._capture_fn(self._run, args)
            aliased = {i for i in keep if any(_storage_address(o) == _storage_address(args[i]) for o in outputs)}
            if not aliased:
                break
            # an output is a view of a caller's tensor: that input must be a private copy
            slot.static.update(aliased)
            keep -= aliased
            del replay, outputs, args
        owned = tuple({_storage_address(o) for o in outputs})  # none is a caller's tensor (the loop)
        with _OWNED_LOCK:
            for a in owned:
                _GRAPH_OWNED[a] = _GRAPH_OWNED.get(a, 0) + 1
        self.captures += 1
        addresses = tuple(x.data_ptr() if i in keep else None for i, x in enumerate(inputs))
        kept = tuple(None if i in keep else x for i, x in enumerate(args))
        del args
        graph = _Graph(replay, kept, addresses, outputs, (), owned)
        graph.uses = tuple(_uses(o) for o in outputs)
        return graph
