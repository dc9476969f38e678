"""Recorded calls: repeated calls of a CUDA program with one input signature, run in C++.

A generated host program (`host_codegen`) is a function of its inputs' signature for
everything but the data: per tensor input its Python type, dtype, device, sizes,
strides and the 16-byte alignment of its data pointer, per scalar its type and value
(and the current CUDA device). Given those, the checks pass or fail the same way, the
extents, block sizes and grids are the same, the same buffers are allocated and the
same compiled kernels are launched with the same arguments, except the device pointers
(each an input's or a new buffer's, plus a fixed offset) and the stream. The program
says when that is not so: `REPLAYABLE = False` in its module (`host_codegen`: a torch
call, an index check that reads data, poison mode, collectives), or, at run time, a
runtime function that did device work or read data (`launch.note_host_work`: a
contiguous copy of an input, a scalar read from a tensor, a write-back).

`Replayer(run)` wraps a loaded CUDA program. A call whose signature is new runs `run`
while a `Recorder` watches its launches (`launch.recording`): it sees each direct
launch's Triton launcher and full argument list, and which tensor argument is which.
From that call it derives a plan, and gives it to the native executor
(`native/replay.cpp`): the allocations (each output with its own sizes, strides and
dtype; each other buffer or arena as bytes), the launches (the argument list with its
pointer slots named by source and offset), and the outputs (an allocation, an input
itself, or a view of an input). Later calls with that signature go to the executor,
which checks the signature, allocates, launches and returns without running Python:
about a microsecond of host time plus Triton's launch instead of the program's checks,
arithmetic and launch layer.

A recording that fails for a reason of this call only (a kernel launched for the first
time goes through Triton's JIT; inputs that share storage, whose pointers cannot be
told apart) is retried on the next call with the signature, up to `ATTEMPTS` times; a
reason of the signature (host work, an output that is a view of a new buffer) refuses
the signature at once: its calls run the program. At most `MAX_SIGNATURES` signatures
are kept per program (least recently matched first out).

Not replayed: calls while launches are intercepted (`launch.intercepted`: the
executor checks that context variable itself), and calls
with any input that is not a `torch.Tensor` (or `torch.nn.Parameter`), an int, a
float or a bool. `ALLOT_REPLAY=0` turns replay off; so does a missing native
executor (`native.unavailable()`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch

from allotment.backend import launch as _launch
from allotment.backend import native

MAX_SIGNATURES = 64
"""Signatures kept per program (replayable and refused)."""
ATTEMPTS = 3
"""Recordings tried per signature before its calls are left to the program."""
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter, int, float, bool)


def enabled() -> bool:
    return os.environ.get("ALLOT_REPLAY", "1") not in ("0", "")


def replayer_for(module: Any) -> Replayer | None:
    """The `Replayer` of a loaded CUDA program module, or None where its calls are never
    replayed (its `REPLAYABLE` is false, replay is off, or the executor is unavailable)."""
    if not getattr(module, "REPLAYABLE", False) or not enabled() or not hasattr(torch._C, "_cuda_getDevice"):
        return None  # (a torch without CUDA has no current device nor stream)
    executor = native.replay_module()
    if executor is None:
        return None
    return Replayer(module.run, executor)


class Replayer:
    """Runs `run(*inputs)`, replaying recorded calls (module docstring)."""

    def __init__(self, run: Callable[..., tuple[torch.Tensor, ...]], executor: Any,
                 get_device: Callable[[], int] | None = None, get_stream: Callable[[int], int] | None = None) -> None:
        self.run = run
        self.executor = executor
        self._call = executor.call
        self.table = executor.new_table(get_device or torch._C._cuda_getDevice,
                                        get_stream or torch._C._cuda_getCurrentRawStream, MAX_SIGNATURES, _launch._HOOK)
        self.get_device = get_device or torch._C._cuda_getDevice
        self._attempts: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self.recorded = 0
        """Signatures recorded as replayable (a count, for tests and benchmarks)."""

    def __call__(self, inputs: tuple[Any, ...]) -> tuple[torch.Tensor, ...]:
        out = self._call(self.table, inputs)  # False while launches are intercepted
        if type(out) is tuple:
            return out
        return self.missed(inputs, out)

    def missed(self, inputs: tuple[Any, ...], answer: Any) -> tuple[torch.Tensor, ...]:
        """The call after the executor's `answer` to `inputs` was not a replay: None (no
        signature: record this call) or False (run the program)."""
        if answer is None and _launch._HOOK.get() is None:
            return self._record(inputs)
        return self.run(*inputs)

    def signatures(self) -> tuple[int, int]:
        """(signatures kept, of which replayable)."""
        return self.executor.size(self.table)

    def _record(self, inputs: tuple[Any, ...]) -> tuple[torch.Tensor, ...]:
        if any(type(x) not in _PLAIN_TYPES for x in inputs):
            return self.run(*inputs)
        rec = Recorder()
        with _launch.recording(rec):
            outputs = self.run(*inputs)
        plan = rec.plan(inputs, outputs)
        device = self.get_device()
        with self._lock:
            if plan is not None:
                allocs, launches, outs = plan
                self.executor.add(self.table, inputs, device, allocs, launches, outs)
                self.recorded += 1
            else:
                key = _signature(inputs, device)
                tries = self._attempts.get(key, 0) + 1
                if rec.refusal is not None or tries >= ATTEMPTS:
                    self.executor.refuse(self.table, inputs, device)
                    self._attempts.pop(key, None)
                else:
                    if len(self._attempts) >= 4 * MAX_SIGNATURES:
                        self._attempts.clear()
                    self._attempts[key] = tries
        return outputs


def _signature(inputs: Sequence[Any], device: int) -> tuple:
    key: list[Any] = [device]
    for x in inputs:
        if isinstance(x, torch.Tensor):
            key.append((type(x), tuple(x.shape), x.stride(), x.dtype, x.device, x.data_ptr() % 16 == 0))
        else:
            key.append((type(x), x))
    return tuple(key)


class Recorder:
    """Watches one call of a program (`launch.recording`) and derives its plan."""

    def __init__(self) -> None:
        self.launches: list[tuple[Any, list[Any], list[tuple[int, torch.Tensor, int]]]] = []
        self.failure: str | None = None
        """Why this call cannot be replayed (retried on the next call)."""
        self.refusal: str | None = None
        """Why no call with this signature can be replayed."""

    def launch(self, plan: Any, arguments: list[Any], tensors: list[tuple[int, torch.Tensor, int]]) -> None:
        self.launches.append((plan, arguments, tensors))

    def fail(self, why: str) -> None:
        self.failure = self.failure or why

    def refuse(self, why: str) -> None:
        self.refusal = self.refusal or why

    def plan(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> tuple[list, list, list] | None:
        """(allocations, launches, outputs) for the executor, or None (with `failure` or
        `refusal` set) if this call cannot be replayed."""
        if self.failure is not None or self.refusal is not None:
            return None
        by_storage: dict[int, int] = {}  # storage data pointer -> tensor input
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor):
                st = x.untyped_storage()
                if st.nbytes() == 0:
                    continue
                if st.data_ptr() in by_storage:
                    self.fail("two inputs share storage")
                    return None
                by_storage[st.data_ptr()] = i
        allocs: list[tuple] = []
        new_buffers: dict[int, int] = {}  # storage data pointer -> alloc index (byte buffers)
        byte_sizes: dict[int, int] = {}
        outs: list[tuple] = []
        for o in outputs:
            if not isinstance(o, torch.Tensor):
                self.refuse(f"an output of type {type(o).__name__}")
                return None
        out_alloc: dict[int, int] = {}  # id(output) -> alloc index
        for o in outputs:
            found = next((i for i, x in enumerate(inputs) if o is x), None)
            if found is not None:
                outs.append((0, found))
                continue
            if id(o) in out_alloc:
                outs.append((1, out_alloc[id(o)]))
                continue
            st = o.untyped_storage()
            src = by_storage.get(st.data_ptr()) if st.nbytes() else None
            if src is not None:
                x = inputs[src]
                if o.dtype != x.dtype:
                    self.refuse("an output views an input as another dtype")
                    return None
                outs.append((2, src, tuple(o.shape), o.stride(), o.storage_offset() - x.storage_offset()))
                continue
            if o.storage_offset() != 0 or st.nbytes() != _dense_bytes(o):
                self.refuse("an output is a view of a buffer of the call")
                return None
            if st.nbytes() and st.data_ptr() in new_buffers:
                self.refuse("two outputs share a buffer")
                return None
            out_alloc[id(o)] = len(allocs)
            if st.nbytes():
                new_buffers[st.data_ptr()] = len(allocs)
                byte_sizes[st.data_ptr()] = -1  # typed: its size is the output's
            allocs.append((tuple(o.shape), o.stride(), o.dtype, o.device))
            outs.append((1, out_alloc[id(o)]))
        launches: list[tuple] = []
        for plan, arguments, tensors in self.launches:
            slots: list[tuple[int, int, int, int]] = []
            for k, t, ptr in tensors:
                st = t.untyped_storage()
                if st.nbytes() == 0:
                    continue  # never read nor written: its pointer stays as recorded
                pos, sub = plan.slot(k)
                src = by_storage.get(st.data_ptr())
                if src is not None:
                    slots.append((pos, sub, src, ptr - inputs[src].data_ptr()))
                    continue
                base = st.data_ptr()
                j = new_buffers.get(base)
                if j is None:
                    j = new_buffers[base] = len(allocs)
                    byte_sizes[base] = st.nbytes()
                    allocs.append(((st.nbytes(),), (1,), torch.uint8, t.device))
                elif byte_sizes[base] == -1:
                    pass  # an output's buffer
                elif st.nbytes() > byte_sizes[base]:  # the allocator gave a freed buffer's address again
                    byte_sizes[base] = st.nbytes()
                    allocs[j] = ((st.nbytes(),), (1,), torch.uint8, t.device)
                if byte_sizes[base] == -1 and st.nbytes() != _dense_bytes(_output_at(outputs, base)):
                    self.refuse("an output's buffer is also another buffer's")
                    return None
                slots.append((pos, sub, -j - 1, ptr - base))
            template = tuple(tuple(a) if isinstance(a, tuple) else a for a in arguments)
            launches.append((plan.fn, template, slots, plan.at[3]))
        return allocs, launches, outs


def _dense_bytes(t: torch.Tensor) -> int:
    """The bytes `torch.empty_strided(t.shape, t.stride())` allocates."""
    if t.numel() == 0:
        return 0
    return (1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))) * t.element_size()


def _output_at(outputs: Sequence[torch.Tensor], base: int) -> torch.Tensor:
    return next(o for o in outputs if o.untyped_storage().data_ptr() == base)
