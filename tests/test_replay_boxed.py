"""Recorded calls with the program's memory (`backend/replay.py`, `backend/native/replay.cpp`):
allocations at first use and frees after last use, tensors that a torch call returns as
sources of later steps, boxed calls (AOTAutograd's convention) whose donated inputs are
dropped after their last use. The executor on synthetic plans, then the recorder and the
replayer end to end on the CPU with fake compiled kernels (`test_replay`'s), measuring the
bytes held with glibc's `mallinfo2`."""

from __future__ import annotations

import ctypes
import gc
from typing import Any

import pytest
import torch
from test_replay import _at, _Kernel, executor, needs_executor  # noqa: F401 (gpu: a fixture)
from test_replay import gpu as gpu  # noqa: PLC0414 (the fixture, by its name)
from torch.multiprocessing.reductions import StorageWeakRef

import allotment
from allotment.backend import host_runtime as rt
from allotment.backend import launch as L
from allotment.backend import replay

CPU = torch.device("cpu")
MIB = 1 << 20


class _MallInfo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


def _libc() -> Any:
    try:
        lib = ctypes.CDLL("libc.so.6")
        lib.mallinfo2.restype = _MallInfo
        return lib
    except (OSError, AttributeError):
        return None


_LIBC = _libc()
needs_mallinfo = pytest.mark.skipif(_LIBC is None, reason="needs glibc's mallinfo2 (2.33 or later)")


def live_bytes() -> int:
    """The bytes malloc has handed out and not taken back (CPU tensors' memory among them)."""
    m = _LIBC.mallinfo2()
    return m.uordblks + m.hblkhd


def _table(size: int = 8) -> Any:
    return executor.new_table(lambda: 0, lambda d: 0, size)


def _mib(ms: list[int]) -> list[int]:
    """Byte counts rounded to whole MiB (the test buffers are 1 MiB; Python's own is noise)."""
    return [round(m / MIB) for m in ms]


# -- the executor on synthetic plans -------------------------------------------------------


@needs_executor
@needs_mallinfo
def test_executor_allocates_at_each_step_and_frees_after() -> None:
    """("alloc", j) makes allocation j there, ("free", -j - 1) drops it: two 1 MiB buffers
    used one after the other are never live together."""
    seen: list[tuple[int, int]] = []
    t = _table()
    x = torch.zeros(4)
    big = ((MIB,), (1,), torch.uint8, CPU)
    launch = (lambda g, s, args: seen.append((args[0], live_bytes())), (0, 0, (0,)), [(2, 0, -1, 0)], 1)
    launch2 = (lambda g, s, args: seen.append((args[0], live_bytes())), (0, 0, (0,)), [(2, 0, -2, 0)], 1)
    steps = [("alloc", 0), launch, ("free", -1), ("alloc", 1), launch2, ("free", -2)]
    executor.add(t, (x,), 0, [big, big], steps, [(0, 0)])
    base = live_bytes()
    (r,) = executor.call(t, (x,))
    assert r is x
    assert _mib([m - base for _, m in seen]) == [1, 1]  # one buffer at a time
    assert live_bytes() - base < MIB // 4  # both freed
    t2 = _table()  # the same plan without steps: both allocated before the first launch
    executor.add(t2, (x,), 0, [big, big], [launch, launch2], [(0, 0)])
    seen.clear()
    base = live_bytes()
    executor.call(t2, (x,))
    assert _mib([m - base for _, m in seen]) == [2, 2]
    inner = launch[1][2]
    assert inner == (0,) and launch[1] == (0, 0, (0,))  # a template is never written (its pointers go to copies)


@needs_executor
def test_executor_binds_a_torch_calls_result_and_checks_its_layout() -> None:
    """A torch call's returned tensor is a source of later steps (pointer slots, torch calls,
    outputs) and is dropped at its free step; a call that returns another layout than
    recorded is an error, and the plan is not replayed again."""
    made: list[StorageWeakRef] = []
    ptrs: list[int] = []
    seen: list[tuple] = []
    transposed = [False]

    def make(x: torch.Tensor) -> tuple[torch.Tensor, int]:
        r = (x * 2).reshape(2, 4)
        if transposed[0]:
            r = r.t().contiguous().t()
        made.append(StorageWeakRef(r.untyped_storage()))
        ptrs.append(r.data_ptr())
        return (7, r)

    t = _table()
    x = torch.arange(8.0)
    result = ("result", (2, 4), (4, 1), torch.float32, CPU, 0)
    steps = [
        ("torch", make, (None,), None, [(0, 0, torch.float32, (8,), (1,), 0)], 0, [(1, 0)]),
        (lambda g, s, args: seen.append(("kernel", args[0], made[-1].expired())), (0, 0, (0,)), [(2, 0, -1, 4)], 1),
        ("torch", lambda v: seen.append(("view", v.clone())), (None,), None,
         [(0, -1, torch.float32, (4,), (1,), 4)], 0),
        ("free", -1),
        (lambda g, s, args: seen.append(("after", made[-1].expired())), (0, 0, (0,)), [], 1),
    ]
    executor.add(t, (x,), 0, [result], steps, [(0, 0)])
    (r,) = executor.call(t, (x,))
    assert r is x
    (_, ptr, freed), (_, row), (_, later) = seen
    assert not freed and later  # held until its free step, dropped there
    assert ptr == ptrs[-1] + 4  # the returned tensor's pointer, plus the recorded offset
    torch.testing.assert_close(row, x[4:] * 2)

    t2 = _table()
    steps2 = [steps[0]]
    executor.add(t2, (x,), 0, [result], steps2, [(1, 0), (3, 0, (4,), (1,), 4, torch.int32)])
    out, view = executor.call(t2, (x,))
    torch.testing.assert_close(out, (x * 2).reshape(2, 4))
    assert view.data_ptr() == out.data_ptr() + 16 and view.dtype == torch.int32
    transposed[0] = True
    with pytest.raises(RuntimeError, match="another layout"):
        executor.call(t2, (x,))
    assert executor.call(t2, (x,)) is False  # the program runs from now on


@needs_executor
def test_executor_call_boxed_drops_donated_inputs_at_their_free_step() -> None:
    seen: list[tuple[str, bool]] = []
    refs: list[StorageWeakRef] = []
    fail = [False]

    def kernel(tag: str) -> Any:
        def run(g: Any, s: Any, args: tuple) -> None:
            seen.append((tag, refs[-1].expired()))
            if tag == "a" and fail[0]:
                raise RuntimeError("launch failed")
        return run

    t = _table()
    x, y = torch.randn(16), torch.randn(16)
    steps = [(kernel("a"), (0, 0, (0,)), [(2, 0, 0, 0)], 1), ("free", 0), (kernel("b"), (0, 0, (0,)), [], 1)]
    executor.add(t, (x, y), 0, [], steps, [(0, 1)])

    def args() -> list[Any]:
        x = torch.randn(16)
        refs.append(StorageWeakRef(x.untyped_storage()))
        return [x, y]

    boxed = args()
    (r,) = executor.call_boxed(t, boxed)
    assert boxed == [] and r is y
    assert seen == [("a", False), ("b", True)]  # x freed at its free step
    seen.clear()
    x2 = torch.randn(16)
    refs.append(StorageWeakRef(x2.untyped_storage()))
    executor.call(t, (x2, y))  # not boxed: the caller's references stay
    assert seen == [("a", False), ("b", False)] and not refs[-1].expired()
    seen.clear()
    fail[0] = True
    boxed = args()
    with pytest.raises(RuntimeError, match="launch failed"):
        executor.call_boxed(t, boxed)
    assert boxed == [] and refs[-1].expired()  # an exception before its free step leaks no donated input
    unknown = [torch.randn(3), y]
    assert executor.call_boxed(t, unknown) is None and len(unknown) == 2  # no signature: untouched
    executor.refuse(t, (torch.randn(5), y), 0)
    refused = [torch.randn(5), y]
    assert executor.call_boxed(t, refused) is False and len(refused) == 2


@needs_executor
def test_executor_rejects_plans_out_of_order() -> None:
    t = _table()
    x = torch.randn(4)
    buf = ((64,), (1,), torch.uint8, CPU)
    use = (print, (0, 0, (0,)), [(2, 0, -1, 0)], 1)
    bad = {
        "not live": ([buf], [("alloc", 0), ("free", -1), use], []),
        "alloc step": ([buf], [("alloc", 0), ("alloc", 0)], []),
        "frees a source": ([buf], [("free", 0), ("free", 0)], []),
        "an output's source": ([buf], [("alloc", 0), ("free", -1)], [(1, 0)]),
        "names no source": ([buf], [("free", 3)], []),
        "bound allocation": ([buf], [("torch", print, (), None, [], 0, [(-1, 0)])], []),
    }
    for match, (allocs, steps, outs) in bad.items():
        with pytest.raises(ValueError, match=match):
            executor.add(t, (x,), 0, allocs, steps, outs)
    spec = executor.specs((x, 3))
    executor.add(t, spec, 0, [], [], [(0, 0)])  # a signature taken before the call
    assert executor.call(t, (x, 3))[0] is x
    assert executor.size(t) == (1, 1)


# -- recorder and replayer, end to end on the CPU ------------------------------------------

N = MIB // 4  # f32 elements of a 1 MiB buffer
WATCH: list[Any] = []
"""(tag, live bytes, whether the current call's x is freed) at each fake kernel's entry."""
CURRENT: list[StorageWeakRef] = []


def _mark(tag: str) -> None:
    WATCH.append((tag, live_bytes() if _LIBC is not None else 0, CURRENT[-1].expired() if CURRENT else None))


def _mul(x: int, w: int, t: int, n: int) -> None:
    _mark("mul")
    _at(t, n, torch.float32).copy_(_at(x, n, torch.float32) * _at(w, n, torch.float32))


def _inc(y: int, out: int, n: int) -> None:
    _mark("inc")
    _at(out, n, torch.float32).copy_(_at(y, n, torch.float32) + 1)


MUL, INC = _Kernel(_mul), _Kernel(_inc)


def _boxed_program(args: list[Any]) -> tuple[torch.Tensor, ...]:
    """What a generated `run_boxed` does: takes the arguments (x donated), allocates each
    buffer before its kernel and frees it after its last use; an ATen call's result is a
    buffer (`rt.dense`)."""
    x, w, alpha = args
    args.clear()
    _boxed_program.calls += 1  # type: ignore[attr-defined]
    n = x.shape[0]
    t = torch.empty((n,), dtype=torch.float32, device=x.device)
    rt.launch(MUL, (1,), (x, w, t, n), 1, 32, False, 4)
    del x
    aten_result = rt.aten_call("aten.add.Tensor", (t, w), {"alpha": alpha})
    y = rt.dense(aten_result)
    del aten_result
    del t
    out = torch.empty((n,), dtype=torch.float32, device=w.device)
    rt.launch(INC, (1,), (y, out, n), 1, 32, False, 4)
    del y
    return (out,)


_boxed_program.calls = 0  # type: ignore[attr-defined]


def _expected(x: torch.Tensor, w: torch.Tensor, alpha: float) -> torch.Tensor:
    return x * w + alpha * w + 1


@pytest.fixture
def kernels(gpu: None) -> None:
    L.kernel_args((MUL,), tensors=(0, 1, 2), loose=(), count=4)
    L.kernel_args((INC,), tensors=(0, 1), loose=(), count=3)


def _boxed_replayer() -> replay.Replayer:
    return replay.Replayer(lambda *a: _boxed_program(list(a)), executor, get_device=lambda: 0,
                           get_stream=lambda d: 99, run_boxed=_boxed_program, donated=(0,))


def _call(r: replay.Replayer, w: torch.Tensor, alpha: float, n: int = N) -> tuple[torch.Tensor, torch.Tensor, list]:
    """One boxed call on a fresh x (held only by the list): (result, a copy of x, what the
    kernels saw, their live bytes relative to before the call)."""
    x = torch.randn(n)
    keep = x.clone()
    CURRENT.append(StorageWeakRef(x.untyped_storage()))
    args = [x, w, alpha]
    del x
    gc.collect()
    WATCH.clear()
    base = live_bytes() if _LIBC is not None else 0
    (out,) = r.call_boxed(args)
    assert args == []
    return out, keep, [(tag, live - base, freed) for tag, live, freed in WATCH]


@needs_executor
@needs_mallinfo
def test_a_boxed_program_with_an_aten_call_replays_with_its_memory(kernels: None) -> None:
    """(a) replayed results are the program's; (b) the donated input is freed at its last use
    in a replay, as in the program; (c) the bytes held at each kernel are the program's:
    buffers live from first to last use, never all at once."""
    r = _boxed_replayer()
    w = torch.randn(N)
    out, x, first = _call(r, w, 0.5)  # first launches: the JIT path, not recorded
    torch.testing.assert_close(out, _expected(x, w, 0.5))
    out, x, recorded = _call(r, w, 0.5)  # recorded, as the program runs
    assert r.recorded == 1 and r.signatures() == (1, 1)
    torch.testing.assert_close(out, _expected(x, w, 0.5))
    before = _boxed_program.calls
    for _ in range(3):
        out, x, replayed = _call(r, w, 0.5)
        torch.testing.assert_close(out, _expected(x, w, 0.5))  # (a)
    assert _boxed_program.calls == before  # no Python program ran
    assert MUL.log[-1] == "direct" and INC.log[-1] == "direct"
    # (b) x is alive at its last use (mul) and freed before the next kernel (inc)
    assert [(tag, freed) for tag, _, freed in replayed] == [("mul", False), ("inc", True)]
    assert [(tag, freed) for tag, _, freed in recorded] == [("mul", False), ("inc", True)]
    # (c) mul: x, t (x's bytes counted from before the call); inc: y and out, x and t freed
    program = _mib([b for _, b, _ in first])
    assert program == [1, 1]
    assert _mib([b for _, b, _ in recorded]) == program  # the recording holds no buffer
    assert _mib([b for _, b, _ in replayed]) == program


@needs_executor
def test_a_plan_allocates_at_first_use_and_frees_after_last_use(kernels: None) -> None:
    """The recorded order: t before mul; x (donated) after mul, its last use; the ATen call's
    result bound by the call; t after the call; out (an output) before inc and never freed;
    y after inc. A call whose x is not donated keeps x to the end."""
    w = torch.randn(64)
    _boxed_program([torch.randn(64), w, 1.0])  # first launches (Triton's JIT)
    for donated, x_freed in (((0,), [("free", 0)]), ((), [])):
        rec = replay.Recorder()
        args = [torch.randn(64), w, 1.0]
        rec.begin(args)
        with L.recording(rec):
            outputs = _boxed_program(args)
        allocs, steps, outs, _, _ = rec.plan(outputs, {}, donated)
        kinds = [s if s[0] in ("alloc", "free") else s[0] if isinstance(s[0], str) else "launch" for s in steps]
        assert kinds == [("alloc", 0), "launch", *x_freed, "torch", ("free", -1), ("alloc", 2), "launch", ("free", -2)]
        assert [a[0] if a[0] == "result" else a[2] for a in allocs] == [torch.uint8, "result", torch.float32]
        assert outs == [(1, 2)]


def _copying_program(args: list[Any]) -> tuple[torch.Tensor, ...]:
    """As `_boxed_program`, but its ATen call returns a transposed layout, which `rt.dense`
    copies row-major (a recorded `aten.clone`: replayable)."""
    x, w, alpha = args
    args.clear()
    n = x.shape[0]
    t = torch.empty((n,), dtype=torch.float32, device=x.device)
    rt.launch(MUL, (1,), (x, w, t, n), 1, 32, False, 4)
    del x
    aten_result = rt.aten_call("aten.clone.default", (t.view(2, n // 2).t(),), {})
    y = rt.dense(aten_result)
    del aten_result, t
    out = torch.empty((n,), dtype=torch.float32, device=w.device)
    rt.launch(INC, (1,), (y, out, n), 1, 32, False, 4)
    return (out,)


def _reading_program(args: list[Any]) -> tuple[torch.Tensor, ...]:
    """As `_copying_program`, but it also reads a scalar from a tensor (host work)."""
    rt.check_scalar(torch.tensor(float(args[2])), "alpha", "float")
    return _copying_program(args)


@needs_executor
def test_boxed_calls_keep_the_refusals(kernels: None) -> None:
    """Interception, a new signature and host work (a scalar read from a tensor) all run
    the program, with right results and x freed; inputs that share storage are a signature
    recorded and replayed with the sharing (the donated x freed, w named through it); an
    ATen result copied row-major replays."""
    r = _boxed_replayer()
    n = 64
    w = torch.randn(n)
    for _ in range(3):
        out, x, _ = _call(r, w, 2.0, n)
    assert r.recorded == 1
    seen: list = []
    calls = _boxed_program.calls
    with L.intercepted(lambda *a: seen.append(a[0])):
        out, x, _ = _call(r, w, 2.0, n)
    assert seen == [MUL, INC] and _boxed_program.calls == calls + 1
    for _ in range(3):  # w shares x's storage: the JIT path, recorded with the sharing, replayed
        base = torch.randn(2 * 32)
        want = _expected(base[:32], base[32:], 2.0)
        calls = _boxed_program.calls
        out = r.call_boxed([base[:32], base[32:], 2.0])
        torch.testing.assert_close(out[0], want)
    assert _boxed_program.calls == calls and r.signatures() == (2, 2)
    for _ in range(3):  # a new signature: recorded apart
        out, x, _ = _call(r, w, 3.0, n)
        torch.testing.assert_close(out, _expected(x, w, 3.0))
    assert r.signatures() == (3, 3)

    for program, signatures in ((_copying_program, (1, 1)), (_reading_program, (1, 0))):
        c = replay.Replayer(lambda *a, p=program: p(list(a)), executor, get_device=lambda: 0,
                            get_stream=lambda d: 99, run_boxed=program, donated=(0,))
        for _ in range(3):
            out, x, _ = _call(c, w, 1.0, n)
            assert CURRENT[-1].expired()
            (want,) = _copying_program([x, w, 1.0])
            torch.testing.assert_close(out, want)
        assert c.signatures() == signatures  # the copy replays; the scalar read is refused
    assert c.refusals == ["a scalar read from a tensor"]


@needs_executor
def test_an_exception_in_a_boxed_replay_frees_the_donated_input(kernels: None, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _boxed_replayer()
    n = 64
    w = torch.randn(n)
    for _ in range(3):
        _call(r, w, 2.0, n)
    assert r.recorded == 1
    calls = _boxed_program.calls

    def boom(*a: Any) -> None:
        raise RuntimeError("launch failed")

    monkeypatch.setattr(MUL.compiled, "body", boom)  # x's last use
    x = torch.randn(n)
    ref = StorageWeakRef(x.untyped_storage())
    args = [x, w, 2.0]
    del x
    with pytest.raises(RuntimeError, match="launch failed"):
        r.call_boxed(args)
    assert _boxed_program.calls == calls  # a replay's exception
    assert args == [] and ref.expired()


def test_generated_programs_name_their_donated_arguments_and_replay_aten_calls() -> None:
    """`DONATED_ARGUMENTS` lists the parameters `run_boxed` frees; a program whose ATen call
    returns its result (a functional call) is replayable."""
    src = allotment.compile(DONATED).source("cuda")
    assert "\nDONATED_ARGUMENTS = (0, 1, 2)" in src
    assert "\nREPLAYABLE = True" in src
    assert "rt.aten_call('aten.add.Tensor'" in src
    assert "DONATED_ARGUMENTS" not in allotment.compile(ADD).source("cuda")


DONATED = """
func.func @bwd(%seed: tensor<2xi64> {alloc.donated, alloc.unchecked}, %saved: tensor<64xf32> {alloc.donated}, %g: tensor<64xf32> {alloc.donated}) -> (tensor<64xf32>, tensor<64xf32>) {
  %a = fusion.mul %saved, %g : tensor<64xf32>
  %r = fusion.aten "aten.add.Tensor" (%a, %seed) {call = "{\\"args\\": [{\\"t\\": 0}, {\\"t\\": 1, \\"view\\": \\"uint64\\"}]}"} : (tensor<64xf32>, tensor<2xi64>) -> tensor<64xf32>
  func.return %a, %r : tensor<64xf32>, tensor<64xf32>
}
"""

ADD = """
func.func @add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = fusion.add %a, %b : tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}
"""


def test_executable_call_boxed_goes_through_the_replayer() -> None:
    """`Executable.call_boxed` hands the list to the program's replayer where it has one
    (which empties it), else to `run_boxed`."""
    from allotment.driver.runtime import Program

    exe = allotment.compile(DONATED)
    real = exe.program("cpu")
    seen: list[list] = []

    class Spy:
        def call_boxed(self, args: list[Any]) -> tuple:
            seen.append(list(args))
            args.clear()
            return ("replayed",)

    exe.programs["cpu"] = Program(real.module, real.source, "cpu", Spy())
    args = [torch.zeros(2, dtype=torch.int64), torch.randn(64), torch.randn(64)]
    assert exe.call_boxed(args) == ("replayed",) and args == [] and len(seen[0]) == 3
    exe.programs["cpu"] = real  # no replayer (a CPU program): run_boxed
    assert "DONATED_ARGUMENTS" in real.source and real.replayer is None
