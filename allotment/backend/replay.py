"""Recorded calls: repeated calls of a CUDA program with one input signature, run in C++.

A generated host program (`host_codegen`) is a function of its inputs' signature for
everything but the data: per tensor input its Python type, dtype, device, sizes,
strides and its data pointer's remainder modulo 16, per scalar its type and value
(and the current CUDA device). Given those, the checks pass or fail the same way, the
extents, block sizes and grids are the same, the same buffers are allocated and the
same compiled kernels are launched with the same arguments, except the device pointers
(each an input's or a new buffer's, plus a fixed offset) and the stream. (The remainder,
not only whether it is 0: a view at a fixed offset into an input then has the same
16-byte alignment at every call with the signature, and the specialization Triton
compiled for each kernel pointer's alignment holds.) The program
says when that is not so: `REPLAYABLE = False` in its module (`host_codegen`: an index
check that reads data, poison mode, collectives), or, at run time, a runtime function
that did device work or read data (`launch.note_host_work`: a scalar read from a tensor,
a write-back). Row-major copies (`host_runtime.row_major_copy`: of an input, or of an
ATen call's result by `rt.dense` or `rt.call_layout`) are recorded `aten.clone` calls,
replayed as such.

`Replayer(run)` wraps a loaded CUDA program. A call whose signature is new runs `run`
while a `Recorder` watches its launches (`launch.recording`): it sees each direct
launch's Triton launcher and full argument list, and which tensor argument is which.
From that call it derives a plan, and gives it to the native executor
(`native/replay.cpp`): the allocations (each output with its own sizes, strides and
dtype; each other buffer or arena as bytes; each tensor a torch call returned, bound when
the call returns), the steps (launches, with their argument lists' pointer slots named by
source and offset; torch calls, their tensor arguments views of sources; allocations and
frees), and the outputs (an allocation, an input itself, a view of an input, or a view of
a returned tensor). Later calls with that signature go to the executor, which checks the
signature, allocates, launches and returns without running Python: about a microsecond
of host time plus Triton's launch instead of the program's checks, arithmetic and launch
layer.

Tensor inputs that share one storage (views of one buffer passed apart: the q, k and v
that a training forward saves for its backward) are named through one of them, the
lowest in memory: the plan records each other one's distance from it, and the executor
replays a call only where each such input has that storage at that distance again.

A plan holds the program's memory, not more: the recorder keeps descriptions of the
tensors it sees (a storage is told apart by its identity, held by a weak reference, so a
buffer the allocator gives a freed one's address is another buffer), never the tensors,
so the recorded call frees as the program does; and the plan makes each allocation at its
first use and drops each buffer after its last use in the recorded step order (outputs
live on), so that no more is live at any step of a replay than at the same step of the
program (whose alloc-plan deallocs free each buffer after its last use). A torch call's
returned tensors (an `aten` kernel's functional call, `rt.aten_call`) are sources of the
later steps from that call on; the executor checks that each comes back with the dtype,
sizes, strides and storage offset recorded (a functional op's layout is a function of
its inputs' signature; ops tagged `dynamic_output_shape` or `data_dependent_output` are
refused), and a call where one does not is an error and the signature is not replayed
again. A torch call that takes tensors inside a list is refused.

Boxed calls (`Replayer.call_boxed`, AOTAutograd's calling convention, the program's
`run_boxed(args)`): the executor's `call_boxed` matches the signature on the list's
items, and on a replay takes the references out of the list, empties it, and drops each
donated input (the program's `DONATED_ARGUMENTS`, `alloc.donated`) after its last use, so
that its storage is freed where the program frees it; inputs that are not donated are
held to the end. On a new signature the list is given to `run_boxed` under the recorder
(which holds no reference to the inputs: `executor.specs(inputs)` takes the signature
first); on a refused signature, an interception or an in-place overlap, `run_boxed` runs.
An exception during a replay drops the references the executor took (no donated input
is leaked); the list is already empty, as after the program's own exception.

A recording that fails for a reason of this call only is retried on the next call with
the signature: a kernel launched for the first time (through Triton's JIT) at every
call until its launcher is known (a pointer not 16-byte aligned has a launcher of its
own: the first such launch too), up to `ATTEMPTS` times for other reasons; a
reason of the signature (host work, an output that views an input as another dtype)
refuses the signature at once: its calls run the program. An output that is a view of a
buffer the call allocated (a slice of a planned buffer: the q, k and v of one projection
saved for the backward) is the same view of the replay's own allocation, which the outputs
then keep, as the program's views keep its buffer. At most `MAX_SIGNATURES` signatures
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
import weakref
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

import torch
from torch.multiprocessing.reductions import StorageWeakRef

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
    return Replayer(module.run, executor, passed=passed, written=getattr(module, "WRITTEN_ARGUMENTS", ()),
                    run_boxed=getattr(module, "run_boxed", None), donated=getattr(module, "DONATED_ARGUMENTS", ()))


class Replayer:
    """Runs `run(*inputs)` (or `run_boxed(args)`), replaying recorded calls (module docstring)."""

    def __init__(self, run: Callable[..., tuple[torch.Tensor, ...]], executor: Any,
                 get_device: Callable[[], int] | None = None, get_stream: Callable[[int], int] | None = None,
                 passed: Sequence[tuple[int, str, int]] = (), written: Sequence[int] = (),
                 run_boxed: Callable[[list[Any]], tuple[torch.Tensor, ...]] | None = None,
                 donated: Sequence[int] = ()) -> None:
        self.run = run
        self.run_boxed = run_boxed
        """The program's boxed entry (`run_boxed(args)`: it empties `args` and frees each donated
        input after its last use), or None: `call_boxed` then runs `run(*args)`."""
        self.executor = executor
        self.written = tuple(written)
        """Tensor parameters that the program writes (its `WRITTEN_ARGUMENTS`: in-place
        outputs). A replay of a call where one of them shares memory with another input is
        declined (the program refuses it: `host_runtime.check_in_place`)."""
        self.donated = frozenset(donated)
        """Tensor parameters that the program frees after their last use (its
        `DONATED_ARGUMENTS`): a boxed replay drops its reference to each at the same point."""
        self.passed = {i: (kind, bits) for i, kind, bits in passed}
        """Scalar parameters that only feed kernels (the program's `replay_scalars()`): by
        index, (kind, bits). A replay passes their values through rather than matching them."""
        self._call = executor.call
        self._call_boxed = executor.call_boxed
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
        self.refusals: list[str] = []
        """Why each refused signature was refused (for diagnostics; at most one per recording)."""

    def __call__(self, inputs: tuple[Any, ...]) -> tuple[torch.Tensor, ...]:
        out = self._call(self.table, inputs)  # False while launches are intercepted
        if type(out) is tuple:
            return out
        return self.missed(inputs, out)

    def call_boxed(self, args: list[Any]) -> tuple[torch.Tensor, ...]:
        """The call on the inputs in `args`, which it empties (AOTAutograd's boxed calling
        convention): a replay holds the only references the list had and drops each donated
        input after its last use, as `run_boxed` does; else `run_boxed(args)` runs (recorded
        where its signature is new)."""
        run_boxed = self.run_boxed
        if run_boxed is None:
            inputs = tuple(args)
            args.clear()
            return self(inputs)
        out = self._call_boxed(self.table, args)  # on a tuple (or an exception) `args` is empty
        if type(out) is tuple:
            return out
        if out is None and _launch._HOOK.get() is None:
            return self._record(args, lambda: run_boxed(args))
        return run_boxed(args)

    def missed(self, inputs: tuple[Any, ...], answer: Any) -> tuple[torch.Tensor, ...]:
        """The call after the executor's `answer` to `inputs` was not a replay: None (no
        signature: record this call) or False (run the program)."""
        if answer is None and _launch._HOOK.get() is None:
            return self._record(inputs, lambda: self.run(*inputs))
        return self.run(*inputs)

    def signatures(self) -> tuple[int, int]:
        """(signatures kept, of which replayable)."""
        return self.executor.size(self.table)

    def driver_launches(self) -> int:
        """Recorded Triton launches that replays make through the CUDA driver (`driver_launch`)."""
        return self.executor.driver_launches(self.table)

    def _record(self, inputs: Sequence[Any], run: Callable[[], tuple[torch.Tensor, ...]]) -> tuple[torch.Tensor, ...]:
        """`run()` on `inputs`, recorded where it may be. Holds no reference to a tensor input
        while `run` runs (a boxed program frees its donated inputs): the recorder and the
        executor's `specs` take what they need of them first."""
        if self.recordings >= MAX_RECORDINGS or any(type(x) not in _PLAIN_TYPES for x in inputs):
            return run()
        self.recordings += 1
        device = self.get_device()
        key = _signature(inputs, device)
        try:
            specs = self.executor.specs(tuple(inputs))
        except ValueError:  # an input the executor cannot match (an int beyond 64 bits)
            specs = None  # the call runs; its signature is simply not kept
        rec = Recorder()
        rec.begin(inputs)
        with _launch.recording(rec):
            outputs = run()
        plan = rec.plan(outputs, self.passed, self.donated)
        if specs is None:
            return outputs
        with self._lock:
            if plan is not None:
                allocs, launches, outs, passed, aliases = plan
                try:
                    self.executor.add(self.table, specs, device, allocs, launches, outs, passed, self.written,
                                      aliases)
                    self.recorded += 1
                except ValueError as e:  # a plan the executor rejects (a bug): this call succeeded;
                    self.refusals.append(f"the executor rejects the plan: {e}")  # its signature runs the
                    self.executor.refuse(self.table, specs, device)  # program
            elif rec.failure != _launch.FIRST_LAUNCH:  # (a first launch is not the signature's fault:
                # threads that call a new signature at once all meet it)
                tries = self._attempts.get(key, 0) + 1
                if rec.refusal is not None or tries >= ATTEMPTS:
                    self.executor.refuse(self.table, specs, device)
                    self.refusals.append(rec.refusal or rec.failure or "")
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
            key.append((type(x), tuple(x.shape), x.stride(), x.dtype, x.device, x.data_ptr() % 16))
        else:
            key.append((type(x), x))
    return tuple(key)


class _Desc(NamedTuple):
    """What a recording keeps of a tensor that a step touched (no reference to it)."""

    storage: int
    """Its storage's identity (the StorageImpl's address: not reused while the recorder holds a
    weak reference to it, so a buffer the allocator gives a freed one's address is another)."""
    nbytes: int
    """Its storage's bytes."""
    base: int
    """Its storage's data pointer."""
    ptr: int
    """Its data pointer."""
    dtype: torch.dtype
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    """Its storage offset (elements)."""
    device: torch.device


_NO_REPLAY_TAGS = tuple(getattr(torch.Tag, t) for t in ("dynamic_output_shape", "data_dependent_output")
                        if hasattr(torch.Tag, t))
"""ATen ops whose results depend on data (a shape, a value read on the host): never replayed."""


class Recorder:
    """Watches one call of a program (`launch.recording`) and derives its plan. It keeps
    descriptions of the tensors it sees, never the tensors: the recorded call frees its
    buffers (and donated inputs) where the program does."""

    def __init__(self) -> None:
        self.steps: list[tuple] = []
        """("triton", CallPlan, arguments, [(position, _Desc, pointer)], params) and ("torch", fn,
        values (tensors as None), kwnames, [(position, _Desc)], [(item, _Desc)] of its result), in
        call order."""
        self.failure: str | None = None
        """Why this call cannot be replayed (retried on the next call)."""
        self.refusal: str | None = None
        """Why no call with this signature can be replayed."""
        self.inputs: list[Any] = []
        """Per input: its `_Desc` and a weak reference to it (a tensor), or the value itself."""
        self._weak: dict[int, Any] = {}  # storage identity -> a weak reference that keeps it unique

    def begin(self, inputs: Sequence[Any]) -> None:
        """Takes what the plan needs of the call's inputs, before the program runs."""
        self.inputs = [(self.describe(x), weakref.ref(x)) if isinstance(x, torch.Tensor) else x for x in inputs]

    def describe(self, t: torch.Tensor) -> _Desc:
        st = t.untyped_storage()
        key = st._cdata
        if key not in self._weak:
            self._weak[key] = StorageWeakRef(st)
        return _Desc(key, st.nbytes(), st.data_ptr(), t.data_ptr(), t.dtype, tuple(t.shape), t.stride(),
                     t.storage_offset(), t.device)

    def launch(self, plan: Any, arguments: list[Any], tensors: list[tuple[int, torch.Tensor, int]],
               params: Sequence[tuple[int, Any, int]] = ()) -> None:
        self.steps.append(("triton", plan, arguments, [(k, self.describe(t), ptr) for k, t, ptr in tensors],
                           list(params)))

    def torch_call(self, fn: Any, args: tuple, kwargs: dict[str, Any]) -> None:
        values = (*args, *kwargs.values())
        tensors = [(pos, self.describe(v)) for pos, v in enumerate(values) if isinstance(v, torch.Tensor)]
        if any(not isinstance(v, torch.Tensor) and _holds_tensor(v) for v in values):
            self.refuse("a torch call takes tensors in a list")
        if any(tag in _NO_REPLAY_TAGS for tag in getattr(fn, "tags", ())):
            self.refuse(f"{fn} returns what depends on data")
        template = tuple(None if isinstance(v, torch.Tensor) or _holds_tensor(v) else v for v in values)
        self.steps.append(("torch", fn, template, tuple(kwargs) or None, tensors, []))

    def torch_result(self, result: Any) -> None:
        """What the torch call just noted returned: its tensors become sources of later steps."""
        if not self.steps or self.steps[-1][0] != "torch":
            self.refuse("a torch call's result without its call")
            return
        found = self.steps[-1][5]
        if isinstance(result, torch.Tensor):
            found.append((-1, self.describe(result)))
        elif isinstance(result, tuple | list):
            found.extend((k, self.describe(r)) for k, r in enumerate(result) if isinstance(r, torch.Tensor))

    def fail(self, why: str) -> None:
        self.failure = self.failure or why

    def refuse(self, why: str) -> None:
        if self.refusal is None and self.steps and self.steps[-1][0] == "torch":
            why = f"{why}, after {self.steps[-1][1]}"  # the torch call it follows names the place
        self.refusal = self.refusal or why

    def plan(self, outputs: Sequence[Any], passed: dict[int, tuple[str, int]] | None = None,
             donated: Collection[int] = ()) -> tuple[list, list, list, list, list] | None:
        """(allocations, steps, outputs, passed scalars, aliased inputs) for the executor, or None (with
        `failure` or `refusal` set) if this call cannot be replayed. `passed`: the scalar
        parameters that only feed kernels (`Replayer.passed`); `donated`: the inputs that the
        program frees after their last use (`Replayer.donated`)."""
        if self.failure is not None or self.refusal is not None:
            return None
        try:
            return _Planner(self.inputs, outputs, passed or {}, donated).plan(self.steps)
        except _NotReplayable as e:
            if e.transient:
                self.fail(str(e))
            else:
                self.refuse(str(e))
            return None


def _holds_tensor(v: Any) -> bool:
    return isinstance(v, torch.Tensor) or (isinstance(v, tuple | list) and any(_holds_tensor(x) for x in v))


_ATEN_OUT_OPS = {torch.addmm: 1, torch.mm: 2, torch.matmul: 3}
"""Torch calls that the executor makes through ATen (`at::addmm_out`, `at::mm_out`,
`at::matmul_out`) when every argument is a tensor: the same op, without Python's parsing."""


class _NotReplayable(Exception):
    def __init__(self, why: str, transient: bool = False) -> None:
        super().__init__(why)
        self.transient = transient


class _Planner:
    """Names every tensor a recorded call touched by its source: an input (by storage), a
    buffer the call allocated (an output's typed allocation, else bytes), or a tensor a torch
    call returned; and places each allocation at its first use and each free after its last
    use, as the program does."""

    def __init__(self, inputs: Sequence[Any], outputs: Sequence[Any], passed: dict[int, tuple[str, int]],
                 donated: Collection[int]) -> None:
        self.inputs, self.outputs = inputs, outputs
        self.donated = donated
        # a scalar passed through keeps its Python type (an int stays an int: a float
        # parameter given an int is matched by value, as before)
        self.passed = {i: bits for i, (kind, bits) in passed.items()
                       if type(inputs[i]) is {"int": int, "float": float}[kind]}
        self.sources: dict[int, tuple[int, int]] = {}  # storage identity -> (source, its base pointer)
        self.aliases: list[tuple[int, int, int]] = []
        """(input, base, bytes from base's data pointer to its own) of each tensor input that
        shares its storage with an earlier-in-memory one (views of one buffer passed apart:
        the q, k and v a forward saves for its backward): its memory is named through the
        base's pointer, and the executor replays only calls where the same holds."""
        shared: dict[int, list[int]] = {}
        for i, x in enumerate(inputs):
            if isinstance(x, tuple) and x[0].nbytes:
                shared.setdefault(x[0].storage, []).append(i)
        for storage, group in shared.items():
            base = min(group, key=lambda i: (inputs[i][0].ptr, i))
            self.sources[storage] = (base, inputs[base][0].ptr)
            self.aliases += [(i, base, inputs[i][0].ptr - inputs[base][0].ptr) for i in group if i != base]
        self.allocs: list[tuple] = []
        self.kinds: list[str] = []  # per allocation: "bytes", "output" (typed) or "result" (bound)
        self.out_storage: dict[int, torch.Tensor] = {}  # storage identity -> an output that is all of it
        for o in outputs:
            if isinstance(o, torch.Tensor) and _whole_storage(o) and \
                    not any(isinstance(x, tuple) and x[1]() is o for x in inputs):
                self.out_storage.setdefault(o.untyped_storage()._cdata, o)
        self.uses: list[set[int]] = []  # per step: the sources it takes
        self.bound_at: dict[int, int] = {}  # allocation -> the step whose torch call returns it

    def plan(self, steps: list[tuple]) -> tuple[list, list, list, list, list]:
        launches: list[tuple] = []
        for step in steps:
            self.uses.append(set())
            if step[0] == "triton":
                launches.append(self._launch(*step[1:]))
            else:
                launches.append(self._torch(*step[1:]))
        outs, kept = self._outputs()
        ordered = self._order(launches, kept)
        # a passed scalar that reached no kernel in this call (an empty domain: no launch) is
        # still passed: its value changes nothing here
        passed = [(i, self.passed[i]) for i in sorted(self.passed)]
        return self.allocs, ordered, outs, passed, self.aliases

    def _launch(self, plan: Any, arguments: list[Any], tensors: list[tuple[int, _Desc, int]],
                params: list[tuple[int, Any, int]]) -> tuple:
        slots: list[tuple[int, int, int, int]] = []
        pointers: list[tuple[int, int, int]] = []  # (kernel argument, source, offset)
        for k, d, ptr in tensors:
            found = self._source(d)
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
        return (plan.fn, template, slots, plan.at[3], values, driver)

    def _torch(self, fn: Any, template: tuple, kwnames: tuple[str, ...] | None, tensors: list[tuple[int, _Desc]],
               results: list[tuple[int, _Desc]]) -> tuple:
        tensors_at = [self._view(pos, d) for pos, d in tensors]
        op = _ATEN_OUT_OPS.get(fn, 0) if len(tensors_at) == len(template) and kwnames == ("out",) else 0
        if op and len(template) != (4 if op == 1 else 3):
            op = 0
        bound: list[tuple[int, int]] = []
        for item, d in results:
            if d.nbytes == 0 or d.storage in self.sources:
                continue  # no bytes, or a view of a source it already has
            j = len(self.allocs)
            self.allocs.append(("result", d.shape, d.stride, d.dtype, d.device, d.offset))
            self.kinds.append("result")
            self.sources[d.storage] = (-j - 1, d.ptr)
            self.bound_at[j] = len(self.uses) - 1
            bound.append((item, j))
        if bound and op:
            raise _NotReplayable("an ATen out= call returns new tensors")
        return ("torch", fn, template, kwnames, tensors_at, op, bound or None)

    def _outputs(self) -> tuple[list[tuple], set[int]]:
        """The outputs for the executor, and the sources they keep (never freed)."""
        outs: list[tuple] = []
        kept: set[int] = set()
        out_alloc: dict[int, int] = {}  # id(output) -> alloc index
        for o in self.outputs:
            if not isinstance(o, torch.Tensor):
                raise _NotReplayable(f"an output of type {type(o).__name__}")
            found = next((i for i, x in enumerate(self.inputs) if isinstance(x, tuple) and x[1]() is o), None)
            if found is not None:
                outs.append((0, found))
                kept.add(found)
                continue
            if id(o) in out_alloc:
                outs.append((1, out_alloc[id(o)]))
                continue
            st = o.untyped_storage()
            known = self.sources.get(st._cdata) if st.nbytes() else None
            if known is None:  # no step touched it (or it has no bytes): a typed allocation of its own
                j = self._alloc_output(o)
                if st.nbytes():
                    self.sources[st._cdata] = (-j - 1, st.data_ptr())
                out_alloc[id(o)] = j
                outs.append((1, j))
                kept.add(-j - 1)
                continue
            src, base = known
            kept.add(src)
            if src >= 0:
                x = self.inputs[src][0]
                if o.dtype != x.dtype:
                    raise _NotReplayable("an output views an input as another dtype")
                outs.append((2, src, tuple(o.shape), o.stride(), o.storage_offset() - x.offset))
                continue
            j = -src - 1
            if self.kinds[j] == "output" and self.out_storage.get(st._cdata) is o:
                out_alloc[id(o)] = j
                outs.append((1, j))
                continue
            if self.kinds[j] != "result":
                # a view of a buffer of the call (a typed output's, or bytes: a slice of a
                # planned buffer, such as the q, k and v of one projection): the same view of
                # this call's allocation, which the outputs keep (never freed), as the
                # program's own view keeps its buffer
                outs.append(self._view_output(o, j, base))
                continue
            _, shape, stride, dtype, _, offset = self.allocs[j]
            if (o.dtype, tuple(o.shape), o.stride(), o.storage_offset()) == (dtype, shape, stride, offset):
                outs.append((1, j))
            else:
                shift = o.data_ptr() - base
                if o.dtype.itemsize != dtype.itemsize or shift % o.dtype.itemsize:
                    raise _NotReplayable("an output views a returned tensor as another dtype")
                outs.append((3, j, tuple(o.shape), o.stride(), shift // o.dtype.itemsize, o.dtype))
        return outs, kept

    def _view_output(self, o: torch.Tensor, j: int, base: int) -> tuple:
        """Output kind 3: `o` as a view of allocation `j` (whose data pointer was `base`)."""
        shift = o.data_ptr() - base
        if shift % o.dtype.itemsize:
            raise _NotReplayable("an output is not aligned to its dtype in its buffer")
        if self.kinds[j] == "output" and self.allocs[j][2].itemsize != o.dtype.itemsize:
            raise _NotReplayable("an output views another output as a dtype of another size")
        return (3, j, tuple(o.shape), o.stride(), shift // o.dtype.itemsize, o.dtype)

    def _alloc_output(self, o: torch.Tensor) -> int:
        if not _whole_storage(o):
            raise _NotReplayable("an output is a view of a buffer of the call")
        self.allocs.append((tuple(o.shape), o.stride(), o.dtype, o.device))
        self.kinds.append("output")
        return len(self.allocs) - 1

    def _source(self, d: _Desc) -> tuple[int, int] | None:
        """(source, its base pointer) of a tensor a step takes: an input (>= 0: its base the
        input's data pointer) or an allocation (< 0: -index - 1; its base the storage's data
        pointer, or a returned tensor's own); None for a tensor without bytes. Notes the use."""
        if d.nbytes == 0:
            return None
        found = self.sources.get(d.storage)
        if found is None:
            o = self.out_storage.get(d.storage)
            if o is not None:
                j = self._alloc_output(o)
            else:
                j = len(self.allocs)
                self.allocs.append(((_whole_words(d.nbytes),), (1,), torch.uint8, d.device))
                self.kinds.append("bytes")
            found = self.sources[d.storage] = (-j - 1, d.base)
        if self.uses:
            self.uses[-1].add(found[0])
        return found

    def _view(self, pos: int, d: _Desc) -> tuple:
        """A torch call's tensor argument as (pos, source, dtype, sizes, strides, element offset)."""
        found = self._source(d)
        if found is None:
            raise _NotReplayable("a torch call takes an empty tensor")
        src, base = found
        if src >= 0:
            dtype = self.inputs[src][0].dtype
        else:
            j = -src - 1
            dtype = d.dtype if self.kinds[j] == "bytes" else self.allocs[j][3 if self.kinds[j] == "result" else 2]
        if dtype.itemsize != d.dtype.itemsize:  # (a view of the same width: `view(dtype)` keeps the layout)
            raise _NotReplayable("a torch call views a tensor as a dtype of another size")
        shift = d.ptr - base
        if shift % d.dtype.itemsize:
            raise _NotReplayable("a torch call's tensor is not aligned to its dtype in its buffer")
        return (pos, src, d.dtype, d.shape, d.stride, shift // d.dtype.itemsize)

    def _order(self, launches: list[tuple], kept: set[int]) -> list[tuple]:
        """The steps with each allocation made before its first use and each source freed
        after its last (a donated input among them; an output's never)."""
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for s, used in enumerate(self.uses):
            for src in used:
                first.setdefault(src, s)
                last[src] = s
        for j, s in self.bound_at.items():
            last.setdefault(-j - 1, s)  # a returned tensor no later step takes: freed at once
        end = len(launches)
        alloc_at: dict[int, list[int]] = {}
        free_at: dict[int, list[int]] = {}
        for j, kind in enumerate(self.kinds):
            if kind != "result":
                alloc_at.setdefault(first.get(-j - 1, end), []).append(j)
            if -j - 1 not in kept:
                free_at.setdefault(last.get(-j - 1, end), []).append(-j - 1)
        for i in sorted(self.donated):
            if i < len(self.inputs) and isinstance(self.inputs[i], tuple) and i not in kept:
                free_at.setdefault(last.get(i, -1), []).append(i)
        ordered: list[tuple] = [("free", i) for i in free_at.get(-1, [])]
        for s in range(end + 1):
            ordered += [("alloc", j) for j in alloc_at.get(s, [])]
            if s < end:
                ordered.append(launches[s])
                ordered += [("free", src) for src in free_at.get(s, [])]
        return ordered


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


def _whole_storage(t: torch.Tensor) -> bool:
    """Whether `t` is all of its storage: at offset 0, spanning exactly the storage's bytes."""
    return t.storage_offset() == 0 and t.untyped_storage().nbytes() == _dense_bytes(t)


def _dense_bytes(t: torch.Tensor) -> int:
    """The bytes `torch.empty_strided(t.shape, t.stride())` allocates."""
    if t.numel() == 0:
        return 0
    return (1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))) * t.element_size()


