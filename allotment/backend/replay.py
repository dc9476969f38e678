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

A recording that fails for a reason of this call only is retried on the next call with
the signature: a kernel launched for the first time (through Triton's JIT) at every
call until its launcher is known, an input not aligned as Triton's JIT expects up to
`ATTEMPTS` times; a call whose inputs share storage (whose pointers a recording cannot tell
apart) is run without being recorded or counted, so that a signature first met with
aliased inputs is still recorded by a later call; a
reason of the signature (host work, an output that is a view of a new buffer) refuses
the signature at once: its calls run the program. At most `MAX_SIGNATURES` signatures
are kept per program (least recently matched first out), and at most `MAX_RECORDINGS`
recordings are tried per program (a scalar that changes at every call, such as an RNG
seed, makes every call a new signature).

Where the executor can, it launches a Triton kernel straight through the CUDA driver
(`driver_launch`: the recorded arguments packed once as the kernel's parameters, the
pointers patched each call), which saves Triton's launcher its argument parsing; the
layout is checked against the kernel binary first, and Triton's launcher is kept where it
does not match.

Scalar parameters that only feed kernels (the program's `replay_scalars()`: a seed, a
step count, a learning rate) can be passed through instead of matched by value, so that
a value that changes at every call is still replayed (ints matched by Triton's
specialization class: 1, divisibility by 16, 32-bit range; `launch.passing_scalars`:
`ALLOT_REPLAY_SCALARS=0` turns that off).

In-place outputs: the program's `WRITTEN_ARGUMENTS` go with each plan, and the executor
declines to replay a call where one of them shares memory with another input; the program
then runs and refuses it (`host_runtime.check_in_place`), as on its own path. Whether a
written input overlaps itself is a matter of its sizes and strides (the signature): a
recorded call passed that check, so every call with its signature does.

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

from allotment.backend import driver_launch, native
from allotment.backend import launch as _launch

MAX_SIGNATURES = 64
"""Signatures kept per program (replayable and refused)."""
ATTEMPTS = 3
"""Recordings tried per signature before its calls are left to the program."""
MAX_RECORDINGS = 4 * MAX_SIGNATURES
"""Recordings tried per program: past this, new signatures run the program without being
recorded (a scalar input that changes at every call, such as an RNG seed, makes every call
a new signature; recording each would cost more than it saves)."""
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
    scalars = getattr(module, "replay_scalars", None)
    passed = scalars() if callable(scalars) and _launch.passing_scalars() else ()
    return Replayer(module.run, executor, passed=passed, written=getattr(module, "WRITTEN_ARGUMENTS", ()))


class Replayer:
    """Runs `run(*inputs)`, replaying recorded calls (module docstring)."""

    def __init__(self, run: Callable[..., tuple[torch.Tensor, ...]], executor: Any,
                 get_device: Callable[[], int] | None = None, get_stream: Callable[[int], int] | None = None,
                 passed: Sequence[tuple[int, str, int]] = (), written: Sequence[int] = ()) -> None:
        self.run = run
        self.executor = executor
        self.written = tuple(written)
        """Tensor parameters that the program writes (its `WRITTEN_ARGUMENTS`: in-place
        outputs). A replay of a call where one of them shares memory with another input is
        declined (the program refuses it: `host_runtime.check_in_place`)."""
        self.passed = {i: (kind, bits) for i, kind, bits in passed}
        """Scalar parameters that only feed kernels (the program's `replay_scalars()`): by
        index, (kind, bits). A replay passes their values through rather than matching them."""
        self._call = executor.call
        self.table = executor.new_table(get_device or torch._C._cuda_getDevice,
                                        get_stream or torch._C._cuda_getCurrentRawStream, MAX_SIGNATURES, _launch._HOOK,
                                        get_device is None and get_stream is None)
        self.get_device = get_device or torch._C._cuda_getDevice
        self._attempts: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self.recorded = 0
        """Signatures recorded as replayable (a count, for tests and benchmarks)."""
        self.recordings = 0
        """Recordings tried (`MAX_RECORDINGS`)."""

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

    def driver_launches(self) -> int:
        """Recorded Triton launches that replays make through the CUDA driver (`driver_launch`)."""
        return self.executor.driver_launches(self.table)

    def _record(self, inputs: tuple[Any, ...]) -> tuple[torch.Tensor, ...]:
        if self.recordings >= MAX_RECORDINGS or any(type(x) not in _PLAIN_TYPES for x in inputs):
            return self.run(*inputs)
        if shares_storage(inputs):  # a fact of this call's pointers, not of its signature: not
            return self.run(*inputs)  # recorded nor counted, so that a later call records it
        self.recordings += 1
        rec = Recorder()
        with _launch.recording(rec):
            outputs = self.run(*inputs)
        plan = rec.plan(inputs, outputs, self.passed)
        device = self.get_device()
        with self._lock:
            if plan is not None:
                allocs, launches, outs, passed = plan
                try:
                    self.executor.add(self.table, inputs, device, allocs, launches, outs, passed, self.written)
                    self.recorded += 1
                except ValueError:  # an input the executor cannot match (an int beyond 64 bits)
                    pass  # this call succeeded; its signature is simply not kept
            elif rec.failure != _launch.FIRST_LAUNCH:  # (a first launch is not the signature's fault:
                # threads that call a new signature at once all meet it)
                key = _signature(inputs, device)
                tries = self._attempts.get(key, 0) + 1
                if rec.refusal is not None or tries >= ATTEMPTS:
                    try:
                        self.executor.refuse(self.table, inputs, device)
                    except ValueError:  # (as above) nothing to keep
                        pass
                    self._attempts.pop(key, None)
                else:
                    if len(self._attempts) >= 4 * MAX_SIGNATURES:
                        self._attempts.clear()
                    self._attempts[key] = tries
        return outputs


def shares_storage(inputs: Sequence[Any]) -> bool:
    """Whether two tensor inputs with bytes have one storage (a recording could not tell their
    pointers apart)."""
    seen: set[int] = set()
    for x in inputs:
        if isinstance(x, torch.Tensor):
            st = x.untyped_storage()
            if st.nbytes():
                if st.data_ptr() in seen:
                    return True
                seen.add(st.data_ptr())
    return False


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
        self.steps: list[tuple] = []
        """("triton", CallPlan, arguments, tensors) and ("torch", fn, args, kwargs), in call order."""
        self.failure: str | None = None
        """Why this call cannot be replayed (retried on the next call)."""
        self.refusal: str | None = None
        """Why no call with this signature can be replayed."""

    def launch(self, plan: Any, arguments: list[Any], tensors: list[tuple[int, torch.Tensor, int]],
               params: Sequence[tuple[int, Any, int]] = ()) -> None:
        self.steps.append(("triton", plan, arguments, tensors, params))

    def torch_call(self, fn: Any, args: tuple, kwargs: dict[str, Any]) -> None:
        self.steps.append(("torch", fn, args, kwargs))

    def fail(self, why: str) -> None:
        self.failure = self.failure or why

    def refuse(self, why: str) -> None:
        self.refusal = self.refusal or why

    def plan(self, inputs: Sequence[Any], outputs: Sequence[Any],
             passed: dict[int, tuple[str, int]] | None = None) -> tuple[list, list, list, list] | None:
        """(allocations, launches, outputs, passed scalars) for the executor, or None (with
        `failure` or `refusal` set) if this call cannot be replayed. `passed`: the scalar
        parameters that only feed kernels (`Replayer.passed`)."""
        if self.failure is not None or self.refusal is not None:
            return None
        try:
            return _Planner(inputs, outputs, passed or {}).plan(self.steps)
        except _NotReplayable as e:
            if e.transient:
                self.fail(str(e))
            else:
                self.refuse(str(e))
            return None


_ATEN_OUT_OPS = {torch.addmm: 1, torch.mm: 2, torch.matmul: 3}
"""Torch calls that the executor makes through ATen (`at::addmm_out`, `at::mm_out`,
`at::matmul_out`) when every argument is a tensor: the same op, without Python's parsing."""


class _NotReplayable(Exception):
    def __init__(self, why: str, transient: bool = False) -> None:
        super().__init__(why)
        self.transient = transient


class _Planner:
    """Names every tensor a recorded call touched by its source: an input (by storage), or a
    buffer the call allocated (an output's typed allocation, else bytes)."""

    def __init__(self, inputs: Sequence[Any], outputs: Sequence[Any], passed: dict[int, tuple[str, int]]) -> None:
        self.inputs, self.outputs = inputs, outputs
        # a scalar passed through keeps its Python type (an int stays an int: a float
        # parameter given an int is matched by value, as before)
        self.passed = {i: bits for i, (kind, bits) in passed.items()
                       if type(inputs[i]) is {"int": int, "float": float}[kind]}
        self.by_storage: dict[int, int] = {}  # storage data pointer -> tensor input
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor):
                st = x.untyped_storage()
                if st.nbytes() == 0:
                    continue
                if st.data_ptr() in self.by_storage:
                    raise _NotReplayable("two inputs share storage", transient=True)
                self.by_storage[st.data_ptr()] = i
        self.allocs: list[tuple] = []
        self.buffers: dict[int, int] = {}  # storage data pointer -> alloc index
        self.byte_sizes: dict[int, int] = {}  # storage data pointer -> bytes (-1: an output's typed allocation)

    def plan(self, steps: list[tuple]) -> tuple[list, list, list, list]:
        outs = self._outputs()
        launches: list[tuple] = []
        for step in steps:
            if step[0] == "triton":
                _, plan, arguments, tensors, params = step
                slots: list[tuple[int, int, int, int]] = []
                pointers: list[tuple[int, int, int]] = []  # (kernel argument, source, offset)
                for k, t, ptr in tensors:
                    found = self._source(t)
                    if found is None:
                        continue  # an empty buffer, never read nor written: its pointer stays as recorded
                    src, base = found
                    slots.append((*plan.slot(k), src, ptr - base))
                    pointers.append((k, src, ptr - base))
                values: list[tuple[int, int, int]] = []
                passed_at: list[tuple[int, int]] = []  # (kernel argument, input)
                for k, value, i in params:
                    if i in self.passed:
                        if value is not self.inputs[i]:  # the program converted it: matched by value
                            raise _NotReplayable(f"scalar parameter {i} reaches a kernel converted")
                        values.append((*plan.slot(k), i))
                        passed_at.append((k, i))
                template = tuple(tuple(a) if isinstance(a, tuple) else a for a in arguments)
                driver = _driver_entry(plan, arguments, pointers, passed_at) if plan.driver is not None else None
                launches.append((plan.fn, template, slots, plan.at[3], values, driver))
            else:
                _, fn, args, kwargs = step
                values = (*args, *kwargs.values())
                tensors_at: list[tuple] = []
                for pos, v in enumerate(values):
                    if isinstance(v, torch.Tensor):
                        tensors_at.append(self._view(pos, v))
                kwnames = tuple(kwargs) or None
                template = tuple(None if isinstance(v, torch.Tensor) else v for v in values)
                op = _ATEN_OUT_OPS.get(fn, 0) if len(tensors_at) == len(values) and kwnames == ("out",) else 0
                if op and len(args) != (3 if op == 1 else 2):
                    op = 0
                launches.append(("torch", fn, template, kwnames, tensors_at, op))
        # a passed scalar that reached no kernel in this call (an empty domain: no launch) is
        # still passed: its value changes nothing here
        passed = [(i, self.passed[i]) for i in sorted(self.passed)]
        return self.allocs, launches, outs, passed

    def _outputs(self) -> list[tuple]:
        outs: list[tuple] = []
        out_alloc: dict[int, int] = {}  # id(output) -> alloc index
        for o in self.outputs:
            if not isinstance(o, torch.Tensor):
                raise _NotReplayable(f"an output of type {type(o).__name__}")
            found = next((i for i, x in enumerate(self.inputs) if o is x), None)
            if found is not None:
                outs.append((0, found))
                continue
            if id(o) in out_alloc:
                outs.append((1, out_alloc[id(o)]))
                continue
            st = o.untyped_storage()
            src = self.by_storage.get(st.data_ptr()) if st.nbytes() else None
            if src is not None:
                x = self.inputs[src]
                if o.dtype != x.dtype:
                    raise _NotReplayable("an output views an input as another dtype")
                outs.append((2, src, tuple(o.shape), o.stride(), o.storage_offset() - x.storage_offset()))
                continue
            if o.storage_offset() != 0 or st.nbytes() != _dense_bytes(o):
                raise _NotReplayable("an output is a view of a buffer of the call")
            if st.nbytes() and st.data_ptr() in self.buffers:
                raise _NotReplayable("two outputs share a buffer")
            out_alloc[id(o)] = len(self.allocs)
            if st.nbytes():
                self.buffers[st.data_ptr()] = len(self.allocs)
                self.byte_sizes[st.data_ptr()] = -1
            self.allocs.append((tuple(o.shape), o.stride(), o.dtype, o.device))
            outs.append((1, out_alloc[id(o)]))
        return outs

    def _source(self, t: torch.Tensor) -> tuple[int, int] | None:
        """(source, its data pointer in this call) of a tensor argument: an input (>= 0) or an
        allocation (< 0: -index - 1); None for a tensor without bytes."""
        st = t.untyped_storage()
        if st.nbytes() == 0:
            return None
        base = st.data_ptr()
        src = self.by_storage.get(base)
        if src is not None:
            return src, self.inputs[src].data_ptr()
        j = self.buffers.get(base)
        if j is None:
            j = self.buffers[base] = len(self.allocs)
            self.byte_sizes[base] = st.nbytes()
            self.allocs.append(((_whole_words(st.nbytes()),), (1,), torch.uint8, t.device))
        elif self.byte_sizes[base] == -1:
            if st.nbytes() != _dense_bytes(next(o for o in self.outputs if o.untyped_storage().data_ptr() == base)):
                raise _NotReplayable("an output's buffer is also another buffer's")
        elif st.nbytes() > self.byte_sizes[base]:  # the allocator gave a freed buffer's address again
            self.byte_sizes[base] = st.nbytes()
            self.allocs[j] = ((_whole_words(st.nbytes()),), (1,), torch.uint8, t.device)
        return -j - 1, base

    def _view(self, pos: int, t: torch.Tensor) -> tuple:
        """A torch call's tensor argument as (pos, source, dtype, sizes, strides, element offset)."""
        found = self._source(t)
        if found is None:
            raise _NotReplayable("a torch call takes an empty tensor")
        src, base = found
        if src >= 0 and self.inputs[src].dtype != t.dtype:
            raise _NotReplayable("a torch call views an input as another dtype")
        if src < 0 and self.allocs[-src - 1][2] not in (torch.uint8, t.dtype):
            raise _NotReplayable("a torch call views an output as another dtype")
        shift = t.data_ptr() - base
        if shift % t.element_size():
            raise _NotReplayable("a torch call's tensor is not aligned to its dtype in its buffer")
        return (pos, src, t.dtype, tuple(t.shape), t.stride(), shift // t.element_size())


def _driver_entry(plan: Any, arguments: list[Any], pointers: list[tuple[int, int, int]],
                  passed_at: list[tuple[int, int]]) -> tuple | None:
    """A Triton launch's descriptor for a launch through the CUDA driver
    (`driver_launch`; `native/replay.cpp` checks it against the kernel binary), or None
    where a value does not fit its parameter: (function, grid, block, shared, parameter
    words, parameter sizes, pointer slots (parameter, source, offset), passed scalars
    (parameter, input, type code))."""
    layout = plan.driver
    kernel_args: list[Any] = []
    for k in range(len(layout.params)):
        pos, sub = plan.slot(k)
        if pos >= len(arguments):
            return None
        kernel_args.append(arguments[pos] if sub < 0 else arguments[pos][sub])
    packed = layout.pack(kernel_args)
    if packed is None:
        return None
    words, sizes, index = packed
    grid = tuple(arguments[i] for i in plan.at[:3])
    if not all(type(g) is int and 0 <= g < (1 << 32) for g in grid):
        return None
    ptr_slots = []
    for k, src, offset in pointers:
        if k not in index or layout.params[k] != driver_launch.CODES["ptr"]:
            return None
        ptr_slots.append((index[k], src, offset))
    value_slots = []
    for k, i in passed_at:
        if layout.params[k] is None:
            continue  # a constexpr in this compilation (an int 1: its class is matched)
        if k not in index or layout.params[k] == driver_launch.CODES["ptr"]:
            return None
        value_slots.append((index[k], i, layout.params[k]))
    return (layout.function, grid, layout.block, layout.shared, tuple(words), tuple(sizes),
            tuple(ptr_slots), tuple(value_slots), layout.owner)


def _whole_words(nbytes: int) -> int:
    """A byte buffer's size rounded up to 16 bytes, so that it can be viewed as any dtype."""
    return -(-nbytes // 16) * 16


def _dense_bytes(t: torch.Tensor) -> int:
    """The bytes `torch.empty_strided(t.shape, t.stride())` allocates."""
    if t.numel() == 0:
        return 0
    return (1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))) * t.element_size()


