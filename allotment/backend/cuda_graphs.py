"""CUDA graphs for repeated calls: one capture per input signature, then a replay.

`allotment.compile(fusion, cuda_graphs=True)` gives an executable whose CUDA
calls go through `GraphedProgram`: the first call with a new signature (each
tensor input's shape, strides, dtype and device, and each scalar's value)
runs the program once to compile its kernels, then captures one call into a
`torch.cuda.CUDAGraph` over private copies of the inputs ("static" inputs).
Every later call with that signature copies the inputs into the static ones
(skipped for an input that already is its static copy) and replays the graph:
one launch of the whole fusion, whatever its number of kernels.

What a caller must know (the same contract as torch.compile's
`mode="reduce-overhead"`):

- The outputs of a replay are the graph's own buffers: the next call with the
  same signature overwrites them. Clone an output to keep it across calls.
- In-place outputs (`fusion.alias_input`) are written back to the caller's
  input after the replay, and that input is what the call returns.
- Scalars are part of the signature: a new scalar value is a new capture.
- Each capture keeps its buffers (inputs, intermediates, outputs) in a private
  memory pool for the life of the executable; `max_graphs` (default 8) bounds
  how many signatures are kept (least recently used first out).
- CPU calls are not graphed: they run the program as usual.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


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


@dataclass
class _Capture:
    graph: torch.cuda.CUDAGraph
    static: tuple[Any, ...]
    outputs: tuple[torch.Tensor, ...]


class GraphedProgram:
    """Replays one CUDA graph per input signature of `run` (module docstring)."""

    def __init__(self, run: Callable[..., tuple[torch.Tensor, ...]], aliases: dict[int, int], max_graphs: int = 8,
                 names: Sequence[str] | None = None) -> None:
        self._run = run
        self._aliases = aliases  # {result index: argument index}
        self._names = tuple(names) if names is not None else None
        """The arguments' names, for errors (default: #index)."""
        self._max = max(1, max_graphs)
        self._captures: OrderedDict[tuple, _Capture] = OrderedDict()
        self._lock = threading.Lock()
        self.captures = 0
        """Graphs captured so far (a test counts them)."""

    def __call__(self, *inputs: Any) -> tuple[torch.Tensor, ...]:
        if self._aliases:
            self._check_in_place(inputs)
        key = signature(inputs)
        with self._lock:
            capture = self._captures.get(key)
            if capture is None:
                capture = self._capture(inputs)
                self._captures[key] = capture
                if len(self._captures) > self._max:
                    self._captures.popitem(last=False)
            else:
                self._captures.move_to_end(key)
            for x, s in zip(inputs, capture.static):
                if isinstance(x, torch.Tensor) and x.data_ptr() != s.data_ptr():
                    s.copy_(x)
            capture.graph.replay()
            outputs = list(capture.outputs)
            for r, k in self._aliases.items():
                user = inputs[k]
                if user.data_ptr() != capture.static[k].data_ptr():
                    user.copy_(capture.static[k])
                outputs[r] = user
            return tuple(outputs)

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

    def _capture(self, inputs: Sequence[Any]) -> _Capture:
        static = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # compiles every kernel outside the capture
            self._run(*static)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = self._run(*static)
        self.captures += 1
        return _Capture(graph, static, tuple(outputs))
